// SPDX-License-Identifier: GPL-2.0

//! Big-endian fields of fixed-size headers.
//!
//! A header is a byte array of its exact size, and a field is read or written
//! at a constant offset inside it: the offset is a const generic checked when
//! the module is built, so a field can never be out of bounds, and the code
//! has no panic path either (the kernel treats a panic as a `BUG`).

/// Fixed-offset big-endian access to a header's bytes.
pub(super) trait Fields {
    /// The byte at `OFF`.
    fn u8_at<const OFF: usize>(&self) -> u8;
    /// The big-endian `u16` at `OFF`.
    fn be16_at<const OFF: usize>(&self) -> u16;
    /// The big-endian `u32` at `OFF`.
    fn be32_at<const OFF: usize>(&self) -> u32;
    /// The big-endian `u64` at `OFF`.
    fn be64_at<const OFF: usize>(&self) -> u64;
    /// Writes the byte at `OFF`.
    fn set_u8_at<const OFF: usize>(&mut self, v: u8);
    /// Writes `v` big-endian at `OFF`.
    fn set_be16_at<const OFF: usize>(&mut self, v: u16);
    /// Writes `v` big-endian at `OFF`.
    fn set_be32_at<const OFF: usize>(&mut self, v: u32);
    /// Writes `v` big-endian at `OFF`.
    fn set_be64_at<const OFF: usize>(&mut self, v: u64);
}

/// The `M` bytes at `off` of `b`, if they are inside it.
fn chunk<const M: usize>(b: &[u8], off: usize) -> Option<&[u8; M]> {
    b.get(off..)?.first_chunk::<M>()
}

/// The `M` bytes at `off` of `b`, writable, if they are inside it.
fn chunk_mut<const M: usize>(b: &mut [u8], off: usize) -> Option<&mut [u8; M]> {
    b.get_mut(off..)?.first_chunk_mut::<M>()
}

// Each accessor asserts at build time that the field lies inside the header,
// so the `Option`s below are always `Some`; their `None` arms are dead code
// kept only so that no indexing (and so no panic) is compiled in.
impl<const N: usize> Fields for [u8; N] {
    fn u8_at<const OFF: usize>(&self) -> u8 {
        const { assert!(OFF < N) };
        chunk(self, OFF).map_or(0, |c| u8::from_be_bytes(*c))
    }

    fn be16_at<const OFF: usize>(&self) -> u16 {
        const { assert!(OFF + 2 <= N) };
        chunk(self, OFF).map_or(0, |c| u16::from_be_bytes(*c))
    }

    fn be32_at<const OFF: usize>(&self) -> u32 {
        const { assert!(OFF + 4 <= N) };
        chunk(self, OFF).map_or(0, |c| u32::from_be_bytes(*c))
    }

    fn be64_at<const OFF: usize>(&self) -> u64 {
        const { assert!(OFF + 8 <= N) };
        chunk(self, OFF).map_or(0, |c| u64::from_be_bytes(*c))
    }

    fn set_u8_at<const OFF: usize>(&mut self, v: u8) {
        const { assert!(OFF < N) };
        if let Some(c) = chunk_mut(self, OFF) {
            *c = [v];
        }
    }

    fn set_be16_at<const OFF: usize>(&mut self, v: u16) {
        const { assert!(OFF + 2 <= N) };
        if let Some(c) = chunk_mut(self, OFF) {
            *c = v.to_be_bytes();
        }
    }

    fn set_be32_at<const OFF: usize>(&mut self, v: u32) {
        const { assert!(OFF + 4 <= N) };
        if let Some(c) = chunk_mut(self, OFF) {
            *c = v.to_be_bytes();
        }
    }

    fn set_be64_at<const OFF: usize>(&mut self, v: u64) {
        const { assert!(OFF + 8 <= N) };
        if let Some(c) = chunk_mut(self, OFF) {
            *c = v.to_be_bytes();
        }
    }
}
