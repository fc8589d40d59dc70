// SPDX-License-Identifier: GPL-2.0

//! The RoCEv2 wire format: the transport headers rxe sends and receives
//! inside UDP (destination port 4791), their opcode table, the invariant CRC
//! and PSN arithmetic.
//!
//! Pure code over byte slices, with no kernel dependency (`core` only): the
//! host test crate (`tests/host`) builds these very files. Every field is
//! read and written through accessors that cannot go out of bounds, and
//! nothing here can panic on any input: the parser answers an error for
//! every malformed packet. See `Documentation/wire-format.rst`.
//!
//! - [`bth`]: the Base Transport Header;
//! - [`ext`]: the extension headers (RETH, AETH, AtomicETH, AtomicAckETH,
//!   ImmDt, IETH, DETH, RDETH, FETH);
//! - [`opcode`]: the opcodes and the table of what each carries;
//! - [`packet`]: the whole-packet parser and builder;
//! - [`icrc`]: the invariant CRC;
//! - [`psn`]: packet sequence numbers.

pub(crate) mod bth;
pub(crate) mod ext;
mod field;
pub(crate) mod icrc;
pub(crate) mod opcode;
pub(crate) mod packet;
pub(crate) mod psn;

/// The UDP destination port of RoCEv2.
pub(crate) const ROCE_V2_UDP_DPORT: u16 = 4791;
/// The first UDP source port the C driver uses (it derives the rest of the
/// source port from the QP, for ECMP entropy).
pub(crate) const ROCE_V2_SPORT: u16 = 0xc000;
