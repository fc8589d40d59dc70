// SPDX-License-Identifier: GPL-2.0

//! The extended transport headers that follow the BTH (IBTA vol. 1, 9.3 and
//! the FLUSH / ATOMIC WRITE annex), each a plain value decoded from and
//! encoded into a byte array of its size.
//!
//! Which of them a packet carries, and in which order, is a property of its
//! opcode: see [`super::opcode`].

use super::{
    field::Fields,
    opcode::HdrType, //
};

/// An extended transport header.
pub(crate) trait ExtHeader: Sized + Copy {
    /// Which header this is, for the opcode table's offsets.
    const KIND: HdrType;
    /// Its size in bytes.
    const LEN: usize;

    /// Decodes the header at the start of `bytes`, if they hold one.
    fn read(bytes: &[u8]) -> Option<Self>;

    /// Encodes the header at the start of `bytes`; `None` if they are too
    /// short.
    fn write(&self, bytes: &mut [u8]) -> Option<()>;
}

/// Implements [`ExtHeader`] for a header type with `decode`/`encode` over a
/// byte array of `$len` bytes.
macro_rules! ext_header {
    ($ty:ident, $kind:ident, $len:ident) => {
        impl ExtHeader for $ty {
            const KIND: HdrType = HdrType::$kind;
            const LEN: usize = $len;

            fn read(bytes: &[u8]) -> Option<Self> {
                bytes.first_chunk::<$len>().map(Self::decode)
            }

            fn write(&self, bytes: &mut [u8]) -> Option<()> {
                self.encode(bytes.first_chunk_mut::<$len>()?);
                Some(())
            }
        }
    };
}

/// Bytes in a RDETH.
pub(crate) const RDETH_LEN: usize = 4;
/// Bytes in a DETH.
pub(crate) const DETH_LEN: usize = 8;
/// Bytes in a RETH.
pub(crate) const RETH_LEN: usize = 16;
/// Bytes in a FETH.
pub(crate) const FETH_LEN: usize = 4;
/// Bytes in an AtomicETH.
pub(crate) const ATMETH_LEN: usize = 28;
/// Bytes in an AETH.
pub(crate) const AETH_LEN: usize = 4;
/// Bytes in an AtomicAckETH.
pub(crate) const ATMACK_LEN: usize = 8;
/// Bytes in an ImmDt.
pub(crate) const IMMDT_LEN: usize = 4;
/// Bytes in an IETH.
pub(crate) const IETH_LEN: usize = 4;

const MASK24: u32 = 0x00ff_ffff;

/// Reliable Datagram ETH: the end-to-end context. Only in RD packets, which
/// rxe parses (for the offsets) but never accepts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rdeth {
    /// End-to-end context number, 24 bits.
    pub(crate) een: u32,
}

impl Rdeth {
    /// Decodes a RDETH.
    pub(crate) fn decode(b: &[u8; RDETH_LEN]) -> Self {
        Self {
            een: b.be32_at::<0>() & MASK24,
        }
    }

    /// Encodes a RDETH (the top byte is reserved, zero).
    pub(crate) fn encode(&self, b: &mut [u8; RDETH_LEN]) {
        b.set_be32_at::<0>(self.een & MASK24);
    }
}
ext_header!(Rdeth, Rdeth, RDETH_LEN);

/// The Q_Key of the general services QP (QP1).
pub(crate) const GSI_QKEY: u32 = 0x8001_0000;

/// Datagram ETH: the UD queue key and the source QP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Deth {
    /// Queue key.
    pub(crate) qkey: u32,
    /// Source queue pair number, 24 bits.
    pub(crate) sqp: u32,
}

impl Deth {
    /// Decodes a DETH.
    pub(crate) fn decode(b: &[u8; DETH_LEN]) -> Self {
        Self {
            qkey: b.be32_at::<0>(),
            sqp: b.be32_at::<4>() & MASK24,
        }
    }

    /// Encodes a DETH (the byte before the source QP is reserved, zero).
    pub(crate) fn encode(&self, b: &mut [u8; DETH_LEN]) {
        b.set_be32_at::<0>(self.qkey);
        b.set_be32_at::<4>(self.sqp & MASK24);
    }
}
ext_header!(Deth, Deth, DETH_LEN);

/// RDMA ETH: the remote buffer of an RDMA write, read or flush.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Reth {
    /// Remote virtual address.
    pub(crate) va: u64,
    /// Remote key.
    pub(crate) rkey: u32,
    /// DMA length of the whole message.
    pub(crate) len: u32,
}

impl Reth {
    /// Decodes a RETH.
    pub(crate) fn decode(b: &[u8; RETH_LEN]) -> Self {
        Self {
            va: b.be64_at::<0>(),
            rkey: b.be32_at::<8>(),
            len: b.be32_at::<12>(),
        }
    }

    /// Encodes a RETH.
    pub(crate) fn encode(&self, b: &mut [u8; RETH_LEN]) {
        b.set_be64_at::<0>(self.va);
        b.set_be32_at::<8>(self.rkey);
        b.set_be32_at::<12>(self.len);
    }
}
ext_header!(Reth, Reth, RETH_LEN);

/// FLUSH ETH: what a FLUSH makes persistent or visible.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Feth {
    /// Placement type (bits 3-0): global visibility, persistence.
    pub(crate) plt: u8,
    /// Selectivity level (bits 5-4): memory region or range.
    pub(crate) sel: u8,
}

const FETH_PLT_MASK: u32 = 0x0f;
const FETH_SEL_MASK: u32 = 0x30;
const FETH_SEL_SHIFT: u32 = 4;

impl Feth {
    /// Decodes a FETH.
    pub(crate) fn decode(b: &[u8; FETH_LEN]) -> Self {
        let bits = b.be32_at::<0>();
        Self {
            // Both masks keep the values below 0x10: the casts are exact.
            plt: (bits & FETH_PLT_MASK) as u8,
            sel: ((bits & FETH_SEL_MASK) >> FETH_SEL_SHIFT) as u8,
        }
    }

    /// Encodes a FETH (every other bit is reserved, zero).
    pub(crate) fn encode(&self, b: &mut [u8; FETH_LEN]) {
        let bits = ((u32::from(self.sel) << FETH_SEL_SHIFT) & FETH_SEL_MASK)
            | (u32::from(self.plt) & FETH_PLT_MASK);
        b.set_be32_at::<0>(bits);
    }
}
ext_header!(Feth, Feth, FETH_LEN);

/// Atomic ETH: the operands of a compare-and-swap or fetch-and-add.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Atmeth {
    /// Remote virtual address (8-byte aligned).
    pub(crate) va: u64,
    /// Remote key.
    pub(crate) rkey: u32,
    /// Swap value (compare-and-swap) or addend (fetch-and-add).
    pub(crate) swap_add: u64,
    /// Compare value (compare-and-swap only).
    pub(crate) comp: u64,
}

impl Atmeth {
    /// Decodes an AtomicETH.
    pub(crate) fn decode(b: &[u8; ATMETH_LEN]) -> Self {
        Self {
            va: b.be64_at::<0>(),
            rkey: b.be32_at::<8>(),
            swap_add: b.be64_at::<12>(),
            comp: b.be64_at::<20>(),
        }
    }

    /// Encodes an AtomicETH.
    pub(crate) fn encode(&self, b: &mut [u8; ATMETH_LEN]) {
        b.set_be64_at::<0>(self.va);
        b.set_be32_at::<8>(self.rkey);
        b.set_be64_at::<12>(self.swap_add);
        b.set_be64_at::<20>(self.comp);
    }
}
ext_header!(Atmeth, Atmeth, ATMETH_LEN);

/// The AETH syndrome byte: a type in bits 6-5, a value in bits 4-0.
pub(crate) mod syndrome {
    /// The bits that say which kind of acknowledgement this is.
    pub(crate) const TYPE_MASK: u8 = 0xe0;
    /// Positive acknowledgement; the value is the credit count.
    pub(crate) const ACK: u8 = 0x00;
    /// Receiver not ready; the value is the RNR timer.
    pub(crate) const RNR_NAK: u8 = 0x20;
    /// Reserved type.
    pub(crate) const RSVD: u8 = 0x40;
    /// Negative acknowledgement; the value is the NAK code.
    pub(crate) const NAK: u8 = 0x60;
    /// ACK with no end-to-end credit limit.
    pub(crate) const ACK_UNLIMITED: u8 = 0x1f;
    /// NAK: PSN sequence error.
    pub(crate) const NAK_PSN_SEQ_ERROR: u8 = 0x60;
    /// NAK: invalid request.
    pub(crate) const NAK_INVALID_REQ: u8 = 0x61;
    /// NAK: remote access error.
    pub(crate) const NAK_REM_ACC_ERR: u8 = 0x62;
    /// NAK: remote operational error.
    pub(crate) const NAK_REM_OP_ERR: u8 = 0x63;
    /// The value bits (credits, RNR timer or NAK code).
    pub(crate) const VALUE_MASK: u8 = 0x1f;
}

/// ACK ETH: the responder's verdict on a request, in every acknowledgement
/// and in the first and last RDMA read response.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Aeth {
    /// Syndrome: see [`syndrome`].
    pub(crate) syn: u8,
    /// Message sequence number, 24 bits.
    pub(crate) msn: u32,
}

impl Aeth {
    /// Decodes an AETH.
    pub(crate) fn decode(b: &[u8; AETH_LEN]) -> Self {
        let smsn = b.be32_at::<0>();
        Self {
            syn: b.u8_at::<0>(),
            msn: smsn & MASK24,
        }
    }

    /// Encodes an AETH.
    pub(crate) fn encode(&self, b: &mut [u8; AETH_LEN]) {
        b.set_be32_at::<0>((u32::from(self.syn) << 24) | (self.msn & MASK24));
    }

    /// The syndrome's type: [`syndrome::ACK`], [`syndrome::RNR_NAK`],
    /// [`syndrome::RSVD`] or [`syndrome::NAK`] (bit 7 is reserved and
    /// counts, as in the C driver's `AETH_TYPE_MASK`).
    pub(crate) fn syn_type(&self) -> u8 {
        self.syn & syndrome::TYPE_MASK
    }
}
ext_header!(Aeth, Aeth, AETH_LEN);

/// Atomic ACK ETH: the original value at the target of an atomic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Atmack {
    /// The value before the atomic operation.
    pub(crate) orig: u64,
}

impl Atmack {
    /// Decodes an AtomicAckETH.
    pub(crate) fn decode(b: &[u8; ATMACK_LEN]) -> Self {
        Self {
            orig: b.be64_at::<0>(),
        }
    }

    /// Encodes an AtomicAckETH.
    pub(crate) fn encode(&self, b: &mut [u8; ATMACK_LEN]) {
        b.set_be64_at::<0>(self.orig);
    }
}
ext_header!(Atmack, Atmack, ATMACK_LEN);

/// Immediate data.
///
/// The value is the big-endian number on the wire. The verbs carry
/// immediate data in network order (`__be32 imm_data` of `ib_wc` and
/// `ib_send_wr`), so a completion stores `imm.to_be()`, and a work request's
/// `imm_data` becomes `u32::from_be(imm_data)` here: the bytes then travel
/// unchanged, as they do in the C driver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Immdt {
    /// The immediate data.
    pub(crate) imm: u32,
}

impl Immdt {
    /// Decodes an ImmDt.
    pub(crate) fn decode(b: &[u8; IMMDT_LEN]) -> Self {
        Self {
            imm: b.be32_at::<0>(),
        }
    }

    /// Encodes an ImmDt.
    pub(crate) fn encode(&self, b: &mut [u8; IMMDT_LEN]) {
        b.set_be32_at::<0>(self.imm);
    }
}
ext_header!(Immdt, Immdt, IMMDT_LEN);

/// Invalidate ETH: the remote key a SEND WITH INVALIDATE invalidates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Ieth {
    /// The key to invalidate.
    pub(crate) rkey: u32,
}

impl Ieth {
    /// Decodes an IETH.
    pub(crate) fn decode(b: &[u8; IETH_LEN]) -> Self {
        Self {
            rkey: b.be32_at::<0>(),
        }
    }

    /// Encodes an IETH.
    pub(crate) fn encode(&self, b: &mut [u8; IETH_LEN]) {
        b.set_be32_at::<0>(self.rkey);
    }
}
ext_header!(Ieth, Ieth, IETH_LEN);
