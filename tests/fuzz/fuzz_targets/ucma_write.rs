// SPDX-License-Identifier: GPL-2.0

//! A write to /dev/infiniband/rdma_cm through the module's decoders.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    rrxe_host_tests::fuzz_entry::ucma_write(data);
});
