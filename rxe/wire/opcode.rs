// SPDX-License-Identifier: GPL-2.0

//! The packet opcodes and, for each one rxe knows, which headers follow the
//! BTH, where, and what kind of packet it is: the C driver's `rxe_opcode[]`
//! table (`rxe_opcode.c`), built here from the list of headers so that the
//! offsets cannot disagree with the lengths.

use super::{
    bth::BTH_LEN,
    ext::{
        AETH_LEN,
        ATMACK_LEN,
        ATMETH_LEN,
        DETH_LEN,
        FETH_LEN,
        IETH_LEN,
        IMMDT_LEN,
        RDETH_LEN,
        RETH_LEN, //
    },
};
use core::ops::BitOr;

/// The top three opcode bits: the transport.
pub(crate) const TRANSPORT_MASK: u8 = 0xe0;
/// Reliable connected.
pub(crate) const RC: u8 = 0x00;
/// Unreliable connected.
pub(crate) const UC: u8 = 0x20;
/// Reliable datagram.
pub(crate) const RD: u8 = 0x40;
/// Unreliable datagram.
pub(crate) const UD: u8 = 0x60;
/// Congestion notification packets (RoCEv2 annex).
pub(crate) const CNP: u8 = 0x80;
/// Manufacturer-specific opcodes.
pub(crate) const MSP: u8 = 0xe0;

/// The low five opcode bits: the operation, within a transport.
pub(crate) mod op {
    /// First packet of a multi-packet send.
    pub(crate) const SEND_FIRST: u8 = 0x00;
    /// Middle packet of a send.
    pub(crate) const SEND_MIDDLE: u8 = 0x01;
    /// Last packet of a send.
    pub(crate) const SEND_LAST: u8 = 0x02;
    /// Last packet of a send with immediate data.
    pub(crate) const SEND_LAST_WITH_IMMEDIATE: u8 = 0x03;
    /// Single-packet send.
    pub(crate) const SEND_ONLY: u8 = 0x04;
    /// Single-packet send with immediate data.
    pub(crate) const SEND_ONLY_WITH_IMMEDIATE: u8 = 0x05;
    /// First packet of a multi-packet RDMA write.
    pub(crate) const RDMA_WRITE_FIRST: u8 = 0x06;
    /// Middle packet of an RDMA write.
    pub(crate) const RDMA_WRITE_MIDDLE: u8 = 0x07;
    /// Last packet of an RDMA write.
    pub(crate) const RDMA_WRITE_LAST: u8 = 0x08;
    /// Last packet of an RDMA write with immediate data.
    pub(crate) const RDMA_WRITE_LAST_WITH_IMMEDIATE: u8 = 0x09;
    /// Single-packet RDMA write.
    pub(crate) const RDMA_WRITE_ONLY: u8 = 0x0a;
    /// Single-packet RDMA write with immediate data.
    pub(crate) const RDMA_WRITE_ONLY_WITH_IMMEDIATE: u8 = 0x0b;
    /// RDMA read request.
    pub(crate) const RDMA_READ_REQUEST: u8 = 0x0c;
    /// First packet of a multi-packet read response.
    pub(crate) const RDMA_READ_RESPONSE_FIRST: u8 = 0x0d;
    /// Middle packet of a read response.
    pub(crate) const RDMA_READ_RESPONSE_MIDDLE: u8 = 0x0e;
    /// Last packet of a read response.
    pub(crate) const RDMA_READ_RESPONSE_LAST: u8 = 0x0f;
    /// Single-packet read response.
    pub(crate) const RDMA_READ_RESPONSE_ONLY: u8 = 0x10;
    /// Acknowledgement.
    pub(crate) const ACKNOWLEDGE: u8 = 0x11;
    /// Acknowledgement of an atomic, with the original value.
    pub(crate) const ATOMIC_ACKNOWLEDGE: u8 = 0x12;
    /// Atomic compare-and-swap.
    pub(crate) const COMPARE_SWAP: u8 = 0x13;
    /// Atomic fetch-and-add.
    pub(crate) const FETCH_ADD: u8 = 0x14;
    /// Last packet of a send that invalidates a remote key.
    pub(crate) const SEND_LAST_WITH_INVALIDATE: u8 = 0x16;
    /// Single-packet send that invalidates a remote key.
    pub(crate) const SEND_ONLY_WITH_INVALIDATE: u8 = 0x17;
    /// Flush.
    pub(crate) const FLUSH: u8 = 0x1c;
    /// Atomic write.
    pub(crate) const ATOMIC_WRITE: u8 = 0x1d;
}

/// The opcodes of `include/rdma/ib_pack.h` that rxe has table entries for.
pub(crate) mod code {
    use super::{
        op,
        RC,
        RD,
        UC,
        UD, //
    };

    /// RC SEND FIRST.
    pub(crate) const RC_SEND_FIRST: u8 = RC | op::SEND_FIRST;
    /// RC SEND MIDDLE.
    pub(crate) const RC_SEND_MIDDLE: u8 = RC | op::SEND_MIDDLE;
    /// RC SEND LAST.
    pub(crate) const RC_SEND_LAST: u8 = RC | op::SEND_LAST;
    /// RC SEND LAST with immediate.
    pub(crate) const RC_SEND_LAST_WITH_IMMEDIATE: u8 = RC | op::SEND_LAST_WITH_IMMEDIATE;
    /// RC SEND ONLY.
    pub(crate) const RC_SEND_ONLY: u8 = RC | op::SEND_ONLY;
    /// RC SEND ONLY with immediate.
    pub(crate) const RC_SEND_ONLY_WITH_IMMEDIATE: u8 = RC | op::SEND_ONLY_WITH_IMMEDIATE;
    /// RC RDMA WRITE FIRST.
    pub(crate) const RC_RDMA_WRITE_FIRST: u8 = RC | op::RDMA_WRITE_FIRST;
    /// RC RDMA WRITE MIDDLE.
    pub(crate) const RC_RDMA_WRITE_MIDDLE: u8 = RC | op::RDMA_WRITE_MIDDLE;
    /// RC RDMA WRITE LAST.
    pub(crate) const RC_RDMA_WRITE_LAST: u8 = RC | op::RDMA_WRITE_LAST;
    /// RC RDMA WRITE LAST with immediate.
    pub(crate) const RC_RDMA_WRITE_LAST_WITH_IMMEDIATE: u8 =
        RC | op::RDMA_WRITE_LAST_WITH_IMMEDIATE;
    /// RC RDMA WRITE ONLY.
    pub(crate) const RC_RDMA_WRITE_ONLY: u8 = RC | op::RDMA_WRITE_ONLY;
    /// RC RDMA WRITE ONLY with immediate.
    pub(crate) const RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE: u8 =
        RC | op::RDMA_WRITE_ONLY_WITH_IMMEDIATE;
    /// RC RDMA READ request.
    pub(crate) const RC_RDMA_READ_REQUEST: u8 = RC | op::RDMA_READ_REQUEST;
    /// RC RDMA READ response FIRST.
    pub(crate) const RC_RDMA_READ_RESPONSE_FIRST: u8 = RC | op::RDMA_READ_RESPONSE_FIRST;
    /// RC RDMA READ response MIDDLE.
    pub(crate) const RC_RDMA_READ_RESPONSE_MIDDLE: u8 = RC | op::RDMA_READ_RESPONSE_MIDDLE;
    /// RC RDMA READ response LAST.
    pub(crate) const RC_RDMA_READ_RESPONSE_LAST: u8 = RC | op::RDMA_READ_RESPONSE_LAST;
    /// RC RDMA READ response ONLY.
    pub(crate) const RC_RDMA_READ_RESPONSE_ONLY: u8 = RC | op::RDMA_READ_RESPONSE_ONLY;
    /// RC ACKNOWLEDGE.
    pub(crate) const RC_ACKNOWLEDGE: u8 = RC | op::ACKNOWLEDGE;
    /// RC ATOMIC ACKNOWLEDGE.
    pub(crate) const RC_ATOMIC_ACKNOWLEDGE: u8 = RC | op::ATOMIC_ACKNOWLEDGE;
    /// RC CmpSwap.
    pub(crate) const RC_COMPARE_SWAP: u8 = RC | op::COMPARE_SWAP;
    /// RC FetchAdd.
    pub(crate) const RC_FETCH_ADD: u8 = RC | op::FETCH_ADD;
    /// RC SEND LAST with invalidate.
    pub(crate) const RC_SEND_LAST_WITH_INVALIDATE: u8 = RC | op::SEND_LAST_WITH_INVALIDATE;
    /// RC SEND ONLY with invalidate.
    pub(crate) const RC_SEND_ONLY_WITH_INVALIDATE: u8 = RC | op::SEND_ONLY_WITH_INVALIDATE;
    /// RC FLUSH.
    pub(crate) const RC_FLUSH: u8 = RC | op::FLUSH;
    /// RC ATOMIC WRITE.
    pub(crate) const RC_ATOMIC_WRITE: u8 = RC | op::ATOMIC_WRITE;

    /// UC SEND FIRST.
    pub(crate) const UC_SEND_FIRST: u8 = UC | op::SEND_FIRST;
    /// UC SEND MIDDLE.
    pub(crate) const UC_SEND_MIDDLE: u8 = UC | op::SEND_MIDDLE;
    /// UC SEND LAST.
    pub(crate) const UC_SEND_LAST: u8 = UC | op::SEND_LAST;
    /// UC SEND LAST with immediate.
    pub(crate) const UC_SEND_LAST_WITH_IMMEDIATE: u8 = UC | op::SEND_LAST_WITH_IMMEDIATE;
    /// UC SEND ONLY.
    pub(crate) const UC_SEND_ONLY: u8 = UC | op::SEND_ONLY;
    /// UC SEND ONLY with immediate.
    pub(crate) const UC_SEND_ONLY_WITH_IMMEDIATE: u8 = UC | op::SEND_ONLY_WITH_IMMEDIATE;
    /// UC RDMA WRITE FIRST.
    pub(crate) const UC_RDMA_WRITE_FIRST: u8 = UC | op::RDMA_WRITE_FIRST;
    /// UC RDMA WRITE MIDDLE.
    pub(crate) const UC_RDMA_WRITE_MIDDLE: u8 = UC | op::RDMA_WRITE_MIDDLE;
    /// UC RDMA WRITE LAST.
    pub(crate) const UC_RDMA_WRITE_LAST: u8 = UC | op::RDMA_WRITE_LAST;
    /// UC RDMA WRITE LAST with immediate.
    pub(crate) const UC_RDMA_WRITE_LAST_WITH_IMMEDIATE: u8 =
        UC | op::RDMA_WRITE_LAST_WITH_IMMEDIATE;
    /// UC RDMA WRITE ONLY.
    pub(crate) const UC_RDMA_WRITE_ONLY: u8 = UC | op::RDMA_WRITE_ONLY;
    /// UC RDMA WRITE ONLY with immediate.
    pub(crate) const UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE: u8 =
        UC | op::RDMA_WRITE_ONLY_WITH_IMMEDIATE;

    /// RD SEND FIRST.
    pub(crate) const RD_SEND_FIRST: u8 = RD | op::SEND_FIRST;
    /// RD SEND MIDDLE.
    pub(crate) const RD_SEND_MIDDLE: u8 = RD | op::SEND_MIDDLE;
    /// RD SEND LAST.
    pub(crate) const RD_SEND_LAST: u8 = RD | op::SEND_LAST;
    /// RD SEND LAST with immediate.
    pub(crate) const RD_SEND_LAST_WITH_IMMEDIATE: u8 = RD | op::SEND_LAST_WITH_IMMEDIATE;
    /// RD SEND ONLY.
    pub(crate) const RD_SEND_ONLY: u8 = RD | op::SEND_ONLY;
    /// RD SEND ONLY with immediate.
    pub(crate) const RD_SEND_ONLY_WITH_IMMEDIATE: u8 = RD | op::SEND_ONLY_WITH_IMMEDIATE;
    /// RD RDMA WRITE FIRST.
    pub(crate) const RD_RDMA_WRITE_FIRST: u8 = RD | op::RDMA_WRITE_FIRST;
    /// RD RDMA WRITE MIDDLE.
    pub(crate) const RD_RDMA_WRITE_MIDDLE: u8 = RD | op::RDMA_WRITE_MIDDLE;
    /// RD RDMA WRITE LAST.
    pub(crate) const RD_RDMA_WRITE_LAST: u8 = RD | op::RDMA_WRITE_LAST;
    /// RD RDMA WRITE LAST with immediate.
    pub(crate) const RD_RDMA_WRITE_LAST_WITH_IMMEDIATE: u8 =
        RD | op::RDMA_WRITE_LAST_WITH_IMMEDIATE;
    /// RD RDMA WRITE ONLY.
    pub(crate) const RD_RDMA_WRITE_ONLY: u8 = RD | op::RDMA_WRITE_ONLY;
    /// RD RDMA WRITE ONLY with immediate.
    pub(crate) const RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE: u8 =
        RD | op::RDMA_WRITE_ONLY_WITH_IMMEDIATE;
    /// RD RDMA READ request.
    pub(crate) const RD_RDMA_READ_REQUEST: u8 = RD | op::RDMA_READ_REQUEST;
    /// RD RDMA READ response FIRST.
    pub(crate) const RD_RDMA_READ_RESPONSE_FIRST: u8 = RD | op::RDMA_READ_RESPONSE_FIRST;
    /// RD RDMA READ response MIDDLE.
    pub(crate) const RD_RDMA_READ_RESPONSE_MIDDLE: u8 = RD | op::RDMA_READ_RESPONSE_MIDDLE;
    /// RD RDMA READ response LAST.
    pub(crate) const RD_RDMA_READ_RESPONSE_LAST: u8 = RD | op::RDMA_READ_RESPONSE_LAST;
    /// RD RDMA READ response ONLY.
    pub(crate) const RD_RDMA_READ_RESPONSE_ONLY: u8 = RD | op::RDMA_READ_RESPONSE_ONLY;
    /// RD ACKNOWLEDGE.
    pub(crate) const RD_ACKNOWLEDGE: u8 = RD | op::ACKNOWLEDGE;
    /// RD ATOMIC ACKNOWLEDGE.
    pub(crate) const RD_ATOMIC_ACKNOWLEDGE: u8 = RD | op::ATOMIC_ACKNOWLEDGE;
    /// RD CmpSwap.
    pub(crate) const RD_COMPARE_SWAP: u8 = RD | op::COMPARE_SWAP;
    /// RD FetchAdd.
    pub(crate) const RD_FETCH_ADD: u8 = RD | op::FETCH_ADD;

    /// UD SEND ONLY.
    pub(crate) const UD_SEND_ONLY: u8 = UD | op::SEND_ONLY;
    /// UD SEND ONLY with immediate.
    pub(crate) const UD_SEND_ONLY_WITH_IMMEDIATE: u8 = UD | op::SEND_ONLY_WITH_IMMEDIATE;
}

/// The headers a packet may carry, in the C driver's `enum rxe_hdr_type`
/// order (a header's [`Mask`] bit is its number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum HdrType {
    /// Local route header (InfiniBand only; never in RoCEv2).
    Lrh = 0,
    /// Global route header (the IP header, for RoCEv2).
    Grh,
    /// Base transport header.
    Bth,
    /// RDMA ETH.
    Reth,
    /// ACK ETH.
    Aeth,
    /// Atomic ETH.
    Atmeth,
    /// Atomic ACK ETH.
    Atmack,
    /// Invalidate ETH.
    Ieth,
    /// Reliable datagram ETH.
    Rdeth,
    /// Datagram ETH.
    Deth,
    /// Immediate data.
    Immdt,
    /// FLUSH ETH.
    Feth,
    /// The payload.
    Payload,
}

/// Number of [`HdrType`]s.
pub(crate) const NUM_HDR_TYPES: usize = HdrType::Payload as usize + 1;

impl HdrType {
    /// Bytes in a header of this type (0 for the payload, and for LRH/GRH,
    /// which are not part of the RoCEv2 packet this module handles).
    pub(crate) const fn len(self) -> usize {
        match self {
            Self::Lrh | Self::Grh | Self::Payload => 0,
            Self::Bth => BTH_LEN,
            Self::Reth => RETH_LEN,
            Self::Aeth => AETH_LEN,
            Self::Atmeth => ATMETH_LEN,
            Self::Atmack => ATMACK_LEN,
            Self::Ieth => IETH_LEN,
            Self::Rdeth => RDETH_LEN,
            Self::Deth => DETH_LEN,
            Self::Immdt => IMMDT_LEN,
            Self::Feth => FETH_LEN,
        }
    }

    /// This header's bit in a [`Mask`].
    pub(crate) const fn mask(self) -> Mask {
        Mask(1 << self as u32)
    }
}

/// What a packet carries and what kind of packet it is: the C driver's
/// `enum rxe_hdr_mask`, bit for bit (the transport adds the GRH and
/// loopback bits to a received packet's mask).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Mask(u32);

const NUM_HDR_BITS: u32 = NUM_HDR_TYPES as u32;

impl Mask {
    /// No bit.
    pub(crate) const NONE: Mask = Mask(0);
    /// LRH present.
    pub(crate) const LRH: Mask = HdrType::Lrh.mask();
    /// GRH (IP header) present.
    pub(crate) const GRH: Mask = HdrType::Grh.mask();
    /// BTH present (not set in the table: every packet has one).
    pub(crate) const BTH: Mask = HdrType::Bth.mask();
    /// Immediate data present.
    pub(crate) const IMMDT: Mask = HdrType::Immdt.mask();
    /// RETH present.
    pub(crate) const RETH: Mask = HdrType::Reth.mask();
    /// AETH present.
    pub(crate) const AETH: Mask = HdrType::Aeth.mask();
    /// AtomicETH present.
    pub(crate) const ATMETH: Mask = HdrType::Atmeth.mask();
    /// AtomicAckETH present.
    pub(crate) const ATMACK: Mask = HdrType::Atmack.mask();
    /// IETH present.
    pub(crate) const IETH: Mask = HdrType::Ieth.mask();
    /// RDETH present.
    pub(crate) const RDETH: Mask = HdrType::Rdeth.mask();
    /// DETH present.
    pub(crate) const DETH: Mask = HdrType::Deth.mask();
    /// FETH present.
    pub(crate) const FETH: Mask = HdrType::Feth.mask();
    /// The packet may carry a payload.
    pub(crate) const PAYLOAD: Mask = HdrType::Payload.mask();

    /// A request (goes to the responder).
    pub(crate) const REQ: Mask = Mask(1 << NUM_HDR_BITS);
    /// A response (goes to the completer).
    pub(crate) const ACK: Mask = Mask(1 << (NUM_HDR_BITS + 1));
    /// Part of a send.
    pub(crate) const SEND: Mask = Mask(1 << (NUM_HDR_BITS + 2));
    /// Part of an RDMA write.
    pub(crate) const WRITE: Mask = Mask(1 << (NUM_HDR_BITS + 3));
    /// An RDMA read request or response.
    pub(crate) const READ: Mask = Mask(1 << (NUM_HDR_BITS + 4));
    /// An atomic request or acknowledgement.
    pub(crate) const ATOMIC: Mask = Mask(1 << (NUM_HDR_BITS + 5));
    /// A flush.
    pub(crate) const FLUSH: Mask = Mask(1 << (NUM_HDR_BITS + 6));
    /// Consumes a receive work request.
    pub(crate) const RWR: Mask = Mask(1 << (NUM_HDR_BITS + 7));
    /// Completes a receive (a completion is due at the responder).
    pub(crate) const COMP: Mask = Mask(1 << (NUM_HDR_BITS + 8));
    /// First packet of a message.
    pub(crate) const START: Mask = Mask(1 << (NUM_HDR_BITS + 9));
    /// Middle packet of a message.
    pub(crate) const MIDDLE: Mask = Mask(1 << (NUM_HDR_BITS + 10));
    /// Last packet of a message.
    pub(crate) const END: Mask = Mask(1 << (NUM_HDR_BITS + 11));
    /// Looped back by the sending device (set on receive, never in the table).
    pub(crate) const LOOPBACK: Mask = Mask(1 << (NUM_HDR_BITS + 12));
    /// An atomic write.
    pub(crate) const ATOMIC_WRITE: Mask = Mask(1 << (NUM_HDR_BITS + 14));

    /// A read or an atomic.
    pub(crate) const READ_OR_ATOMIC: Mask = Self::READ.or(Self::ATOMIC);
    /// A write or a send.
    pub(crate) const WRITE_OR_SEND: Mask = Self::WRITE.or(Self::SEND);
    /// A read or a write.
    pub(crate) const READ_OR_WRITE: Mask = Self::READ.or(Self::WRITE);
    /// Any RDMA operation.
    pub(crate) const RDMA_OP: Mask = Self::READ
        .or(Self::WRITE)
        .or(Self::ATOMIC_WRITE)
        .or(Self::FLUSH)
        .or(Self::ATOMIC);

    /// The bits, as the C driver's `pkt->mask`.
    pub(crate) const fn bits(self) -> u32 {
        self.0
    }

    /// Both masks' bits.
    pub(crate) const fn or(self, other: Mask) -> Mask {
        Mask(self.0 | other.0)
    }

    /// Whether every bit of `other` is set.
    pub(crate) const fn contains(self, other: Mask) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether any bit of `other` is set (the C driver's `pkt->mask & X`).
    pub(crate) const fn intersects(self, other: Mask) -> bool {
        self.0 & other.0 != 0
    }
}

impl BitOr for Mask {
    type Output = Mask;

    fn bitor(self, rhs: Mask) -> Mask {
        self.or(rhs)
    }
}

/// What rxe knows of one opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OpcodeInfo {
    opcode: u8,
    name: &'static str,
    mask: Mask,
    length: u8,
    offset: [u8; NUM_HDR_TYPES],
}

impl OpcodeInfo {
    /// The entry of `opcode`: `hdrs` are the headers after the BTH in wire
    /// order, `kind` the mask bits other than those headers.
    const fn new(opcode: u8, name: &'static str, kind: Mask, hdrs: &[HdrType]) -> Self {
        let mut offset = [0u8; NUM_HDR_TYPES];
        let mut mask = kind;
        let mut at = BTH_LEN;
        let mut i = 0;
        while i < hdrs.len() {
            let hdr = hdrs[i];
            offset[hdr as usize] = at as u8;
            mask = mask.or(hdr.mask());
            at += hdr.len();
            i += 1;
        }
        // The largest header set (RD atomics: BTH, RDETH, DETH, AtomicETH)
        // is 52 bytes: the `as u8` casts above and below are exact.
        offset[HdrType::Payload as usize] = at as u8;
        Self {
            opcode,
            name,
            mask,
            length: at as u8,
            offset,
        }
    }

    /// The same entry with payload offset 0: the C table gives none for
    /// RC FLUSH, RD ACKNOWLEDGE and RD ATOMIC ACKNOWLEDGE, and its ICRC then
    /// covers the packet from the BTH on a second time (see
    /// [`Self::icrc_payload_offset`]).
    const fn without_payload_offset(mut self) -> Self {
        self.offset[HdrType::Payload as usize] = 0;
        self
    }

    /// The opcode.
    pub(crate) const fn opcode(&self) -> u8 {
        self.opcode
    }

    /// The opcode's name, for messages.
    pub(crate) const fn name(&self) -> &'static str {
        self.name
    }

    /// Which headers the packet carries and what kind of packet it is.
    pub(crate) const fn mask(&self) -> Mask {
        self.mask
    }

    /// Bytes from the start of the BTH to the end of the last header (the C
    /// driver's `header_size()`).
    pub(crate) const fn header_len(&self) -> usize {
        self.length as usize
    }

    /// Offset of `hdr` from the start of the BTH, if the packet carries it.
    /// The payload's offset is the end of the headers, for every opcode.
    pub(crate) fn offset(&self, hdr: HdrType) -> Option<usize> {
        match hdr {
            HdrType::Bth => Some(0),
            HdrType::Payload => Some(self.header_len()),
            _ if self.mask.contains(hdr.mask()) => self.stored_offset(hdr),
            _ => None,
        }
    }

    /// The table's offset of `hdr` (0 when absent, as in C).
    fn stored_offset(&self, hdr: HdrType) -> Option<usize> {
        self.offset
            .get(usize::from(hdr as u8))
            .map(|at| usize::from(*at))
    }

    /// Where the C driver's ICRC starts its second run, over "the payload"
    /// (`payload_addr()`): the end of the headers, except for the opcodes
    /// whose table entry has no payload offset, where it is the BTH, so the
    /// headers are covered twice. A peer running the C driver computes the
    /// ICRC of a FLUSH that way, so this driver must too.
    pub(crate) fn icrc_payload_offset(&self) -> usize {
        self.stored_offset(HdrType::Payload).unwrap_or(0)
    }
}

/// Shorthand for the table below.
use HdrType::{
    Aeth as AETH,
    Atmack as ATMACK,
    Atmeth as ATMETH,
    Deth as DETH,
    Feth as FETH,
    Ieth as IETH,
    Immdt as IMMDT,
    Rdeth as RDETH,
    Reth as RETH, //
};

const fn m(bits: &[Mask]) -> Mask {
    let mut mask = Mask::NONE;
    let mut i = 0;
    while i < bits.len() {
        mask = mask.or(bits[i]);
        i += 1;
    }
    mask
}

const PAYLOAD: Mask = Mask::PAYLOAD;
const REQ: Mask = Mask::REQ;
const ACK: Mask = Mask::ACK;
const SEND: Mask = Mask::SEND;
const WRITE: Mask = Mask::WRITE;
const READ: Mask = Mask::READ;
const ATOMIC: Mask = Mask::ATOMIC;
const FLUSH: Mask = Mask::FLUSH;
const RWR: Mask = Mask::RWR;
const COMP: Mask = Mask::COMP;
const START: Mask = Mask::START;
const MIDDLE: Mask = Mask::MIDDLE;
const END: Mask = Mask::END;
const ATOMIC_WRITE: Mask = Mask::ATOMIC_WRITE;

use code::*;

/// Every opcode rxe knows, in opcode order.
pub(crate) static OPCODES: [OpcodeInfo; TABLE.len()] = TABLE;

const TABLE: [OpcodeInfo; 60] = [
    // RC
    OpcodeInfo::new(
        RC_SEND_FIRST,
        "RC_SEND_FIRST",
        m(&[PAYLOAD, REQ, RWR, SEND, START]),
        &[],
    ),
    OpcodeInfo::new(
        RC_SEND_MIDDLE,
        "RC_SEND_MIDDLE",
        m(&[PAYLOAD, REQ, SEND, MIDDLE]),
        &[],
    ),
    OpcodeInfo::new(
        RC_SEND_LAST,
        "RC_SEND_LAST",
        m(&[PAYLOAD, REQ, COMP, SEND, END]),
        &[],
    ),
    OpcodeInfo::new(
        RC_SEND_LAST_WITH_IMMEDIATE,
        "RC_SEND_LAST_WITH_IMMEDIATE",
        m(&[PAYLOAD, REQ, COMP, SEND, END]),
        &[IMMDT],
    ),
    OpcodeInfo::new(
        RC_SEND_ONLY,
        "RC_SEND_ONLY",
        m(&[PAYLOAD, REQ, COMP, RWR, SEND, START, END]),
        &[],
    ),
    OpcodeInfo::new(
        RC_SEND_ONLY_WITH_IMMEDIATE,
        "RC_SEND_ONLY_WITH_IMMEDIATE",
        m(&[PAYLOAD, REQ, COMP, RWR, SEND, START, END]),
        &[IMMDT],
    ),
    OpcodeInfo::new(
        RC_RDMA_WRITE_FIRST,
        "RC_RDMA_WRITE_FIRST",
        m(&[PAYLOAD, REQ, WRITE, START]),
        &[RETH],
    ),
    OpcodeInfo::new(
        RC_RDMA_WRITE_MIDDLE,
        "RC_RDMA_WRITE_MIDDLE",
        m(&[PAYLOAD, REQ, WRITE, MIDDLE]),
        &[],
    ),
    OpcodeInfo::new(
        RC_RDMA_WRITE_LAST,
        "RC_RDMA_WRITE_LAST",
        m(&[PAYLOAD, REQ, WRITE, END]),
        &[],
    ),
    OpcodeInfo::new(
        RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
        "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
        m(&[PAYLOAD, REQ, WRITE, COMP, RWR, END]),
        &[IMMDT],
    ),
    OpcodeInfo::new(
        RC_RDMA_WRITE_ONLY,
        "RC_RDMA_WRITE_ONLY",
        m(&[PAYLOAD, REQ, WRITE, START, END]),
        &[RETH],
    ),
    OpcodeInfo::new(
        RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
        "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
        m(&[PAYLOAD, REQ, WRITE, COMP, RWR, START, END]),
        &[RETH, IMMDT],
    ),
    OpcodeInfo::new(
        RC_RDMA_READ_REQUEST,
        "RC_RDMA_READ_REQUEST",
        m(&[REQ, READ, START, END]),
        &[RETH],
    ),
    OpcodeInfo::new(
        RC_RDMA_READ_RESPONSE_FIRST,
        "RC_RDMA_READ_RESPONSE_FIRST",
        m(&[PAYLOAD, ACK, START]),
        &[AETH],
    ),
    OpcodeInfo::new(
        RC_RDMA_READ_RESPONSE_MIDDLE,
        "RC_RDMA_READ_RESPONSE_MIDDLE",
        m(&[PAYLOAD, ACK, MIDDLE]),
        &[],
    ),
    OpcodeInfo::new(
        RC_RDMA_READ_RESPONSE_LAST,
        "RC_RDMA_READ_RESPONSE_LAST",
        m(&[PAYLOAD, ACK, END]),
        &[AETH],
    ),
    OpcodeInfo::new(
        RC_RDMA_READ_RESPONSE_ONLY,
        "RC_RDMA_READ_RESPONSE_ONLY",
        m(&[PAYLOAD, ACK, START, END]),
        &[AETH],
    ),
    OpcodeInfo::new(
        RC_ACKNOWLEDGE,
        "RC_ACKNOWLEDGE",
        m(&[ACK, START, END]),
        &[AETH],
    ),
    OpcodeInfo::new(
        RC_ATOMIC_ACKNOWLEDGE,
        "RC_ATOMIC_ACKNOWLEDGE",
        m(&[ACK, START, END]),
        &[AETH, ATMACK],
    ),
    OpcodeInfo::new(
        RC_COMPARE_SWAP,
        "RC_COMPARE_SWAP",
        m(&[REQ, ATOMIC, START, END]),
        &[ATMETH],
    ),
    OpcodeInfo::new(
        RC_FETCH_ADD,
        "RC_FETCH_ADD",
        m(&[REQ, ATOMIC, START, END]),
        &[ATMETH],
    ),
    OpcodeInfo::new(
        RC_SEND_LAST_WITH_INVALIDATE,
        "RC_SEND_LAST_WITH_INVALIDATE",
        m(&[PAYLOAD, REQ, COMP, SEND, END]),
        &[IETH],
    ),
    OpcodeInfo::new(
        RC_SEND_ONLY_WITH_INVALIDATE,
        "RC_SEND_ONLY_WITH_INVALIDATE",
        m(&[PAYLOAD, REQ, COMP, RWR, SEND, START, END]),
        &[IETH],
    ),
    OpcodeInfo::new(
        RC_FLUSH,
        "RC_FLUSH",
        m(&[FLUSH, START, END, REQ]),
        &[FETH, RETH],
    )
    .without_payload_offset(),
    OpcodeInfo::new(
        RC_ATOMIC_WRITE,
        "RC_ATOMIC_WRITE",
        m(&[PAYLOAD, REQ, ATOMIC_WRITE, START, END]),
        &[RETH],
    ),
    // UC
    OpcodeInfo::new(
        UC_SEND_FIRST,
        "UC_SEND_FIRST",
        m(&[PAYLOAD, REQ, RWR, SEND, START]),
        &[],
    ),
    OpcodeInfo::new(
        UC_SEND_MIDDLE,
        "UC_SEND_MIDDLE",
        m(&[PAYLOAD, REQ, SEND, MIDDLE]),
        &[],
    ),
    OpcodeInfo::new(
        UC_SEND_LAST,
        "UC_SEND_LAST",
        m(&[PAYLOAD, REQ, COMP, SEND, END]),
        &[],
    ),
    OpcodeInfo::new(
        UC_SEND_LAST_WITH_IMMEDIATE,
        "UC_SEND_LAST_WITH_IMMEDIATE",
        m(&[PAYLOAD, REQ, COMP, SEND, END]),
        &[IMMDT],
    ),
    OpcodeInfo::new(
        UC_SEND_ONLY,
        "UC_SEND_ONLY",
        m(&[PAYLOAD, REQ, COMP, RWR, SEND, START, END]),
        &[],
    ),
    OpcodeInfo::new(
        UC_SEND_ONLY_WITH_IMMEDIATE,
        "UC_SEND_ONLY_WITH_IMMEDIATE",
        m(&[PAYLOAD, REQ, COMP, RWR, SEND, START, END]),
        &[IMMDT],
    ),
    OpcodeInfo::new(
        UC_RDMA_WRITE_FIRST,
        "UC_RDMA_WRITE_FIRST",
        m(&[PAYLOAD, REQ, WRITE, START]),
        &[RETH],
    ),
    OpcodeInfo::new(
        UC_RDMA_WRITE_MIDDLE,
        "UC_RDMA_WRITE_MIDDLE",
        m(&[PAYLOAD, REQ, WRITE, MIDDLE]),
        &[],
    ),
    OpcodeInfo::new(
        UC_RDMA_WRITE_LAST,
        "UC_RDMA_WRITE_LAST",
        m(&[PAYLOAD, REQ, WRITE, END]),
        &[],
    ),
    OpcodeInfo::new(
        UC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
        "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
        m(&[PAYLOAD, REQ, WRITE, COMP, RWR, END]),
        &[IMMDT],
    ),
    OpcodeInfo::new(
        UC_RDMA_WRITE_ONLY,
        "UC_RDMA_WRITE_ONLY",
        m(&[PAYLOAD, REQ, WRITE, START, END]),
        &[RETH],
    ),
    OpcodeInfo::new(
        UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
        "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
        m(&[PAYLOAD, REQ, WRITE, COMP, RWR, START, END]),
        &[RETH, IMMDT],
    ),
    // RD: parsed for the offsets only; no RD QP exists, so none is accepted.
    OpcodeInfo::new(
        RD_SEND_FIRST,
        "RD_SEND_FIRST",
        m(&[PAYLOAD, REQ, RWR, SEND, START]),
        &[RDETH, DETH],
    ),
    OpcodeInfo::new(
        RD_SEND_MIDDLE,
        "RD_SEND_MIDDLE",
        m(&[PAYLOAD, REQ, SEND, MIDDLE]),
        &[RDETH, DETH],
    ),
    OpcodeInfo::new(
        RD_SEND_LAST,
        "RD_SEND_LAST",
        m(&[PAYLOAD, REQ, COMP, SEND, END]),
        &[RDETH, DETH],
    ),
    OpcodeInfo::new(
        RD_SEND_LAST_WITH_IMMEDIATE,
        "RD_SEND_LAST_WITH_IMMEDIATE",
        m(&[PAYLOAD, REQ, COMP, SEND, END]),
        &[RDETH, DETH, IMMDT],
    ),
    OpcodeInfo::new(
        RD_SEND_ONLY,
        "RD_SEND_ONLY",
        m(&[PAYLOAD, REQ, COMP, RWR, SEND, START, END]),
        &[RDETH, DETH],
    ),
    OpcodeInfo::new(
        RD_SEND_ONLY_WITH_IMMEDIATE,
        "RD_SEND_ONLY_WITH_IMMEDIATE",
        m(&[PAYLOAD, REQ, COMP, RWR, SEND, START, END]),
        &[RDETH, DETH, IMMDT],
    ),
    OpcodeInfo::new(
        RD_RDMA_WRITE_FIRST,
        "RD_RDMA_WRITE_FIRST",
        m(&[PAYLOAD, REQ, WRITE, START]),
        &[RDETH, DETH, RETH],
    ),
    OpcodeInfo::new(
        RD_RDMA_WRITE_MIDDLE,
        "RD_RDMA_WRITE_MIDDLE",
        m(&[PAYLOAD, REQ, WRITE, MIDDLE]),
        &[RDETH, DETH],
    ),
    OpcodeInfo::new(
        RD_RDMA_WRITE_LAST,
        "RD_RDMA_WRITE_LAST",
        m(&[PAYLOAD, REQ, WRITE, END]),
        &[RDETH, DETH],
    ),
    OpcodeInfo::new(
        RD_RDMA_WRITE_LAST_WITH_IMMEDIATE,
        "RD_RDMA_WRITE_LAST_WITH_IMMEDIATE",
        m(&[PAYLOAD, REQ, WRITE, COMP, RWR, END]),
        &[RDETH, DETH, IMMDT],
    ),
    OpcodeInfo::new(
        RD_RDMA_WRITE_ONLY,
        "RD_RDMA_WRITE_ONLY",
        m(&[PAYLOAD, REQ, WRITE, START, END]),
        &[RDETH, DETH, RETH],
    ),
    OpcodeInfo::new(
        RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
        "RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
        m(&[PAYLOAD, REQ, WRITE, COMP, RWR, START, END]),
        &[RDETH, DETH, RETH, IMMDT],
    ),
    OpcodeInfo::new(
        RD_RDMA_READ_REQUEST,
        "RD_RDMA_READ_REQUEST",
        m(&[REQ, READ, START, END]),
        &[RDETH, DETH, RETH],
    ),
    OpcodeInfo::new(
        RD_RDMA_READ_RESPONSE_FIRST,
        "RD_RDMA_READ_RESPONSE_FIRST",
        m(&[PAYLOAD, ACK, START]),
        &[RDETH, AETH],
    ),
    OpcodeInfo::new(
        RD_RDMA_READ_RESPONSE_MIDDLE,
        "RD_RDMA_READ_RESPONSE_MIDDLE",
        m(&[PAYLOAD, ACK, MIDDLE]),
        &[RDETH],
    ),
    OpcodeInfo::new(
        RD_RDMA_READ_RESPONSE_LAST,
        "RD_RDMA_READ_RESPONSE_LAST",
        m(&[PAYLOAD, ACK, END]),
        &[RDETH, AETH],
    ),
    OpcodeInfo::new(
        RD_RDMA_READ_RESPONSE_ONLY,
        "RD_RDMA_READ_RESPONSE_ONLY",
        m(&[PAYLOAD, ACK, START, END]),
        &[RDETH, AETH],
    ),
    OpcodeInfo::new(
        RD_ACKNOWLEDGE,
        "RD_ACKNOWLEDGE",
        m(&[ACK, START, END]),
        &[RDETH, AETH],
    )
    .without_payload_offset(),
    OpcodeInfo::new(
        RD_ATOMIC_ACKNOWLEDGE,
        "RD_ATOMIC_ACKNOWLEDGE",
        m(&[ACK, START, END]),
        &[RDETH, AETH, ATMACK],
    )
    .without_payload_offset(),
    OpcodeInfo::new(
        RD_COMPARE_SWAP,
        "RD_COMPARE_SWAP",
        m(&[REQ, ATOMIC, START, END]),
        &[RDETH, DETH, ATMETH],
    ),
    OpcodeInfo::new(
        RD_FETCH_ADD,
        "RD_FETCH_ADD",
        m(&[REQ, ATOMIC, START, END]),
        &[RDETH, DETH, ATMETH],
    ),
    // UD
    OpcodeInfo::new(
        UD_SEND_ONLY,
        "UD_SEND_ONLY",
        m(&[PAYLOAD, REQ, COMP, RWR, SEND, START, END]),
        &[DETH],
    ),
    OpcodeInfo::new(
        UD_SEND_ONLY_WITH_IMMEDIATE,
        "UD_SEND_ONLY_WITH_IMMEDIATE",
        m(&[PAYLOAD, REQ, COMP, RWR, SEND, START, END]),
        &[DETH, IMMDT],
    ),
];

/// Marks an opcode without entry in [`BY_OPCODE`].
const NO_ENTRY: u8 = u8::MAX;

/// Index in [`OPCODES`] of each opcode's entry, or [`NO_ENTRY`].
static BY_OPCODE: [u8; 256] = {
    let mut index = [NO_ENTRY; 256];
    let mut i = 0;
    while i < TABLE.len() {
        let opcode = TABLE[i].opcode as usize;
        // Two entries for one opcode would be a table bug: fail the build.
        assert!(index[opcode] == NO_ENTRY);
        index[opcode] = i as u8;
        i += 1;
    }
    index
};

/// The entry of `opcode`, if rxe knows it (the C driver drops packets whose
/// opcode has none).
pub(crate) fn lookup(opcode: u8) -> Option<&'static OpcodeInfo> {
    let index = BY_OPCODE.get(usize::from(opcode))?;
    OPCODES.get(usize::from(*index))
}
