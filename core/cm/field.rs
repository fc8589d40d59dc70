// SPDX-License-Identifier: GPL-2.0

//! Where the fields of a communication management MAD are, and how they are
//! read and written.
//!
//! Pure logic with no kernel dependency: built into the module and into the
//! host unit tests (`tests/host`). The IBTA describes every CM message as a
//! table of `Byte[Bit]` positions (volume 1, chapter 12); the kernel turns
//! those tables into `IBA_FIELD*_LOC` descriptors (`include/rdma/iba.h`)
//! naming a big-endian word of 8, 16, 32 or 64 bits and a mask inside it.
//! A [`Field`] is the same descriptor, built by constructors that take the
//! very arguments of the kernel's `CM_FIELD*_LOC` macros, so each message
//! definition can be checked line by line against `ibta_vol1_c12.h`.

/// Size of every CM MAD (`sizeof(struct ib_mad)`).
pub(crate) const MAD_SIZE: usize = 256;
/// Size of the common MAD header (`sizeof(struct ib_mad_hdr)`); the offsets
/// of the IBTA tables count from its end.
pub(crate) const MAD_HDR_SIZE: usize = 24;

/// A whole MAD as the MAD layer hands it over.
pub(crate) type Mad = [u8; MAD_SIZE];

/// A scalar field: `bits` bits, `shift` bits above the least significant bit
/// of the big-endian word of `width` bytes at `offset` from the start of the
/// MAD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Field {
    /// Byte offset of the word from the start of the MAD.
    pub(crate) offset: usize,
    /// Size of the word in bytes: 1, 2, 4 or 8.
    pub(crate) width: usize,
    /// Position of the field's least significant bit in the word.
    pub(crate) shift: u32,
    /// Number of bits of the field.
    pub(crate) bits: u32,
}

impl Field {
    const fn checked(offset: usize, width: usize, shift: u32, bits: u32) -> Field {
        // Evaluated at compile time for every field constant: a descriptor
        // outside the MAD or outside its word does not build.
        assert!(offset + width <= MAD_SIZE);
        assert!(offset & (width - 1) == 0 || width == 8);
        assert!(bits > 0 && shift + bits <= 8 * width as u32);
        Field {
            offset,
            width,
            shift,
            bits,
        }
    }

    /// A whole word of the common MAD header at `offset` from its start.
    pub(crate) const fn hdr(offset: usize, width: usize) -> Field {
        Self::checked(offset, width, 0, 8 * width as u32)
    }

    /// `CM_FIELD_BLOC(byte, bit, bits)`: `bits` bits of the byte at `byte`,
    /// the first `bit` bits below the byte's most significant bit.
    pub(crate) const fn bloc(byte: usize, bit: u32, bits: u32) -> Field {
        Self::checked(MAD_HDR_SIZE + byte, 1, 8 - bit - bits, bits)
    }

    /// `CM_FIELD8_LOC(byte, bits)`: the top `bits` bits of the byte at `byte`.
    pub(crate) const fn f8(byte: usize, bits: u32) -> Field {
        Self::bloc(byte, 0, bits)
    }

    /// `CM_FIELD16_LOC(byte, bits)`: `bits` bits starting at the most
    /// significant bit of the byte at `byte`, inside its aligned 16-bit word.
    pub(crate) const fn f16(byte: usize, bits: u32) -> Field {
        let at = MAD_HDR_SIZE + byte;
        Self::checked(at & !1, 2, 16 - (at % 2) as u32 * 8 - bits, bits)
    }

    /// `CM_FIELD32_LOC(byte, bits)`: `bits` bits starting at the most
    /// significant bit of the byte at `byte`, inside its aligned 32-bit word.
    pub(crate) const fn f32(byte: usize, bits: u32) -> Field {
        let at = MAD_HDR_SIZE + byte;
        Self::checked(at & !3, 4, 32 - (at % 4) as u32 * 8 - bits, bits)
    }

    /// `CM_FIELD64_LOC(byte)`: the 64-bit word at `byte`, which the IBTA only
    /// aligns to 4 bytes.
    pub(crate) const fn f64(byte: usize) -> Field {
        Self::checked(MAD_HDR_SIZE + byte, 8, 0, 64)
    }

    /// The field's bits in its word.
    pub(crate) const fn mask(self) -> u64 {
        let ones = if self.bits == 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        };
        ones << self.shift
    }

    fn word(self, mad: &Mad) -> u64 {
        let mut be = [0u8; 8];
        for (dst, src) in be[8 - self.width..]
            .iter_mut()
            .zip(mad.iter().skip(self.offset))
        {
            *dst = *src;
        }
        u64::from_be_bytes(be)
    }

    /// The field's value (`IBA_GET`).
    pub(crate) fn get(self, mad: &Mad) -> u64 {
        (self.word(mad) & self.mask()) >> self.shift
    }

    /// Stores `value`, truncated to the field's width as `FIELD_PREP` does,
    /// leaving the other bits of the word alone (`IBA_SET`).
    pub(crate) fn set(self, mad: &mut Mad, value: u64) {
        let word = (self.word(mad) & !self.mask()) | ((value << self.shift) & self.mask());
        let be = word.to_be_bytes();
        for (dst, src) in mad
            .iter_mut()
            .skip(self.offset)
            .zip(be[8 - self.width..].iter())
        {
            *dst = *src;
        }
    }
}

/// A byte-array field (`CM_FIELD_MLOC`): GIDs, private data, additional
/// rejection or response information.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bytes {
    /// Byte offset from the start of the MAD.
    pub(crate) offset: usize,
    /// Size in bytes.
    pub(crate) len: usize,
}

/// Data longer than the field it is stored into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TooLong;

impl Bytes {
    /// `CM_FIELD_MLOC(byte, bits, type)`: `bits / 8` bytes at `byte`.
    pub(crate) const fn mloc(byte: usize, bits: usize) -> Bytes {
        assert!(bits & 7 == 0);
        assert!(MAD_HDR_SIZE + byte + bits / 8 <= MAD_SIZE);
        Bytes {
            offset: MAD_HDR_SIZE + byte,
            len: bits / 8,
        }
    }

    /// The field's bytes.
    pub(crate) fn get(self, mad: &Mad) -> &[u8] {
        mad.get(self.offset..self.offset + self.len).unwrap_or(&[])
    }

    /// The field's first `len` bytes, or all of them if `len` is larger (a
    /// peer's length field can claim more than the field holds).
    pub(crate) fn prefix(self, mad: &Mad, len: usize) -> &[u8] {
        let all = self.get(mad);
        all.get(..len).unwrap_or(all)
    }

    /// Copies `data` to the start of the field and zeroes the rest of it.
    pub(crate) fn set(self, mad: &mut Mad, data: &[u8]) -> Result<(), TooLong> {
        if data.len() > self.len {
            return Err(TooLong);
        }
        let dst = mad
            .get_mut(self.offset..self.offset + self.len)
            .ok_or(TooLong)?;
        let (head, tail) = dst.split_at_mut(data.len());
        head.copy_from_slice(data);
        tail.fill(0);
        Ok(())
    }
}

/// The integer types scalar fields are read as; a field's value always fits
/// its accessor's type (checked by the host tests), so the narrowing below
/// never drops a set bit.
pub(crate) trait FieldValue: Copy {
    /// Narrows a field value.
    fn from_field(v: u64) -> Self;
    /// Widens a value to store.
    fn to_field(self) -> u64;
}

macro_rules! field_value {
    ($($t:ty),*) => {$(
        impl FieldValue for $t {
            #[allow(clippy::cast_possible_truncation)]
            fn from_field(v: u64) -> Self {
                v as $t
            }
            fn to_field(self) -> u64 {
                u64::from(self)
            }
        }
    )*};
}
field_value!(u8, u16, u32);

impl FieldValue for u64 {
    fn from_field(v: u64) -> Self {
        v
    }
    fn to_field(self) -> u64 {
        self
    }
}
