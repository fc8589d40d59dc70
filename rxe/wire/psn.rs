// SPDX-License-Identifier: GPL-2.0

//! Packet sequence numbers: 24-bit counters that wrap, compared on a circle
//! where the 2^23 PSNs after one are "after" it and the 2^23 before are
//! "before" (the C driver's `psn_compare()`).

use core::cmp::Ordering;

/// PSNs are 24 bits.
pub(crate) const PSN_MASK: u32 = 0x00ff_ffff;

/// `psn + n`, wrapped to 24 bits.
pub(crate) const fn psn_add(psn: u32, n: u32) -> u32 {
    psn.wrapping_add(n) & PSN_MASK
}

/// `psn - n`, wrapped to 24 bits.
pub(crate) const fn psn_sub(psn: u32, n: u32) -> u32 {
    psn.wrapping_sub(n) & PSN_MASK
}

/// The PSN after `psn`.
pub(crate) const fn psn_next(psn: u32) -> u32 {
    psn_add(psn, 1)
}

/// The signed distance from `b` to `a`, in `-2^23..2^23`: positive when `a`
/// is after `b`. Bits above the 24 are ignored, as in the C driver.
pub(crate) const fn psn_diff(a: u32, b: u32) -> i32 {
    // Shift the 24-bit difference to the top of an i32 and back, so the
    // arithmetic shift carries its sign bit (bit 23).
    ((a.wrapping_sub(b) << 8) as i32) >> 8
}

/// Compares `a` with `b` on the PSN circle (the sign of the C driver's
/// `psn_compare(a, b)`). Not a total order: do not sort with it.
pub(crate) fn psn_cmp(a: u32, b: u32) -> Ordering {
    psn_diff(a, b).cmp(&0)
}

/// Whether `psn` is one of the `count` PSNs from `first` on (`count` at most
/// 2^24).
pub(crate) const fn psn_in_window(psn: u32, first: u32, count: u32) -> bool {
    psn_sub(psn, first) < count
}

/// Whether `psn` lies from `first` to `last`, both included, walking
/// forwards on the circle.
pub(crate) const fn psn_in_range(psn: u32, first: u32, last: u32) -> bool {
    psn_sub(psn, first) <= psn_sub(last, first)
}
