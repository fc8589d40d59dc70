/work/main/tests/host/target/debug/deps/rrxe_host_tests-39843266d185b0c4.d: src/lib.rs src/../../../ucma/cmd.rs src/../../../ucma/abi.rs

/work/main/tests/host/target/debug/deps/rrxe_host_tests-39843266d185b0c4: src/lib.rs src/../../../ucma/cmd.rs src/../../../ucma/abi.rs

src/lib.rs:
src/../../../ucma/cmd.rs:
src/../../../ucma/abi.rs:
