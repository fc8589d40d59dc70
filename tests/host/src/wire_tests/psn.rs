// SPDX-License-Identifier: GPL-2.0

//! PSN arithmetic on the 24-bit circle, against the C driver's formula.

use super::rng::Rng;
use crate::rxe_wire::psn::*;
use core::cmp::Ordering;

/// The C driver's `psn_compare()`.
fn c_psn_compare(a: u32, b: u32) -> i32 {
    (a.wrapping_sub(b) << 8) as i32
}

#[test]
fn wraps_at_24_bits() {
    assert_eq!(psn_next(0xff_fffe), 0xff_ffff);
    assert_eq!(psn_next(0xff_ffff), 0);
    assert_eq!(psn_add(0xff_fff0, 0x20), 0x10);
    assert_eq!(psn_add(5, u32::MAX), 4);
    assert_eq!(psn_sub(0x10, 0x20), 0xff_fff0);
    assert_eq!(psn_sub(0, 1), PSN_MASK);
}

#[test]
fn distance_across_the_wrap() {
    assert_eq!(psn_diff(0, 0xff_ffff), 1);
    assert_eq!(psn_diff(0xff_ffff, 0), -1);
    assert_eq!(psn_diff(5, 5), 0);
    assert_eq!(psn_diff(0x7f_ffff, 0), 0x7f_ffff);
    // Half way round is "before": the sign bit of the 24-bit difference.
    assert_eq!(psn_diff(0x80_0000, 0), -0x80_0000);
    assert_eq!(psn_cmp(1, 0xff_ff00), Ordering::Greater);
    assert_eq!(psn_cmp(0xff_ff00, 1), Ordering::Less);
    assert_eq!(psn_cmp(7, 7), Ordering::Equal);
    // Bits above the 24 are ignored, as in C.
    assert_eq!(psn_diff(0xff00_0001, 0), 1);
}

#[test]
fn same_sign_as_c_psn_compare() {
    let mut rng = Rng::seeded("same_sign_as_c_psn_compare", 0x5eed_0005);
    for _ in 0..100_000 {
        let (a, b) = (rng.u32(), rng.u32());
        assert_eq!(psn_cmp(a, b), c_psn_compare(a, b).cmp(&0), "{a:#x} {b:#x}");
        assert_eq!(psn_diff(a, b) << 8, c_psn_compare(a, b));
        let (a, b) = (a & PSN_MASK, b & PSN_MASK);
        assert_eq!(psn_add(b, psn_diff(a, b) as u32), a);
    }
}

#[test]
fn windows() {
    // A window of 128 PSNs after 0xff_fff0, across the wrap (C's requester window).
    assert!(psn_in_window(0xff_fff0, 0xff_fff0, 128));
    assert!(psn_in_window(0x6f, 0xff_fff0, 128));
    assert!(!psn_in_window(0x70, 0xff_fff0, 128));
    assert!(!psn_in_window(0xff_ffef, 0xff_fff0, 128));
    assert!(!psn_in_window(3, 3, 0));
    assert!(psn_in_window(2, 3, 1 << 24));

    assert!(psn_in_range(0, 0xff_fffe, 2));
    assert!(psn_in_range(0xff_fffe, 0xff_fffe, 2));
    assert!(psn_in_range(2, 0xff_fffe, 2));
    assert!(!psn_in_range(3, 0xff_fffe, 2));
    assert!(!psn_in_range(0xff_fffd, 0xff_fffe, 2));
    assert!(psn_in_range(9, 9, 9));
    assert!(!psn_in_range(10, 9, 9));
}

#[test]
fn range_agrees_with_diff_for_short_ranges() {
    let mut rng = Rng::seeded("range_agrees_with_diff_for_short_ranges", 0x5eed_0006);
    for _ in 0..100_000 {
        let first = rng.u32() & PSN_MASK;
        let last = psn_add(first, rng.u32() % (1 << 22));
        let psn = psn_add(first, rng.u32() % (1 << 23)).wrapping_sub(1 << 21) & PSN_MASK;
        let by_diff = psn_diff(psn, first) >= 0 && psn_diff(last, psn) >= 0;
        assert_eq!(psn_in_range(psn, first, last), by_diff, "{psn:#x} {first:#x}..{last:#x}");
    }
}
