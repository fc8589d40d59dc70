/work/main/tests/host/target/debug/deps/rrxe_host_tests-a86f42882b8ce5b4.d: src/lib.rs src/../../../ucma/cmd.rs src/../../../ucma/abi.rs

/work/main/tests/host/target/debug/deps/librrxe_host_tests-a86f42882b8ce5b4.rlib: src/lib.rs src/../../../ucma/cmd.rs src/../../../ucma/abi.rs

/work/main/tests/host/target/debug/deps/librrxe_host_tests-a86f42882b8ce5b4.rmeta: src/lib.rs src/../../../ucma/cmd.rs src/../../../ucma/abi.rs

src/lib.rs:
src/../../../ucma/cmd.rs:
src/../../../ucma/abi.rs:
