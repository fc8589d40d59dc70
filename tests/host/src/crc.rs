// SPDX-License-Identifier: GPL-2.0

//! A software `crc32_le` with the kernel's semantics, for the ICRC tests
//! and the cargo-fuzz entry points (`fuzz_entry.rs`).

/// The kernel's `crc32_le(crc, p, len)`: reflected polynomial 0xedb88320,
/// no inversion on entry or exit. Bit by bit: the definition.
#[cfg(test)]
pub fn crc32_le_bitwise(mut crc: u32, data: &[u8]) -> u32 {
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    crc
}

/// The CRC of each byte value, for the table-driven version.
static TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// [`crc32_le_bitwise`], a byte at a time (the tests run unoptimised).
pub fn crc32_le(mut crc: u32, data: &[u8]) -> u32 {
    for &byte in data {
        crc = (crc >> 8) ^ TABLE[usize::from((crc as u8) ^ byte)];
    }
    crc
}

#[test]
fn table_driven_matches_bitwise() {
    let data: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
    for seed in [0, !0, 0xdebb_20e3, 0x1234_5678] {
        for len in [0, 1, 7, 8, 100, data.len()] {
            assert_eq!(crc32_le(seed, &data[..len]), crc32_le_bitwise(seed, &data[..len]));
        }
    }
}

#[test]
fn standard_check_value() {
    // CRC-32/ISO-HDLC of "123456789" (inverted on entry and exit) is the
    // catalogued check value 0xcbf43926.
    assert_eq!(!crc32_le_bitwise(!0, b"123456789"), 0xcbf4_3926);
    assert_eq!(!crc32_le(!0, b"123456789"), 0xcbf4_3926);
}

#[test]
fn icrc_seed_is_the_crc_of_a_masked_lrh() {
    // rxe_icrc.c: "the result of computing a CRC with a seed of 0xfffffff
    // and 8 bytes of 0xff representing a masked LRH".
    assert_eq!(crc32_le(!0, &[0xff; 8]), crate::rxe_wire::icrc::ICRC_SEED);
}
