// SPDX-License-Identifier: GPL-2.0

//! A received RoCE v2 packet (BTH to ICRC) through the driver's parser.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    rrxe_host_tests::fuzz_entry::packet(data);
});
