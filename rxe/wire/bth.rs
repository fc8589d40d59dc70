// SPDX-License-Identifier: GPL-2.0

//! The Base Transport Header (IBTA vol. 1, 9.2), first header of every
//! RoCEv2 packet, right after the UDP header.
//!
//! ```text
//!  byte 0     1                   2-3      4          5-7        8          9-11
//!  opcode  SE|M|pad(2)|tver(4)    P_Key    F|B|resv6  dest QPN   A|resv7    PSN
//! ```

use super::field::Fields;

/// Bytes in a BTH.
pub(crate) const BTH_LEN: usize = 12;
/// The only transport header version.
pub(crate) const BTH_TVER: u8 = 0;
/// The default (full membership) partition key, the one rxe uses.
pub(crate) const BTH_DEF_PKEY: u16 = 0xffff;
/// QPNs are 24 bits.
pub(crate) const BTH_QPN_MASK: u32 = 0x00ff_ffff;
/// PSNs are 24 bits.
pub(crate) const BTH_PSN_MASK: u32 = 0x00ff_ffff;
/// Destination QPN of multicast packets.
pub(crate) const MULTICAST_QPN: u32 = 0x00ff_ffff;

const SE: u8 = 0x80;
const MIG: u8 = 0x40;
const PAD_SHIFT: u32 = 4;
const PAD_MASK: u8 = 0x30;
const TVER_MASK: u8 = 0x0f;
const FECN: u32 = 0x8000_0000;
const BECN: u32 = 0x4000_0000;
const ACK_REQ: u32 = 0x8000_0000;

/// A decoded BTH.
///
/// The reserved bits (`resv6a`, `resv7`) are not kept: they are ignored on
/// receive and sent as zeros, as the C driver's `bth_init()` does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Bth {
    /// The packet's opcode (transport in the top three bits).
    pub(crate) opcode: u8,
    /// Solicited event.
    pub(crate) se: bool,
    /// Migration state.
    pub(crate) mig: bool,
    /// Pad bytes after the payload, 0 to 3.
    pub(crate) pad: u8,
    /// Transport header version, 4 bits.
    pub(crate) tver: u8,
    /// Partition key.
    pub(crate) pkey: u16,
    /// Forward explicit congestion notification.
    pub(crate) fecn: bool,
    /// Backward explicit congestion notification.
    pub(crate) becn: bool,
    /// Destination queue pair number, 24 bits.
    pub(crate) qpn: u32,
    /// Acknowledge request.
    pub(crate) ack_req: bool,
    /// Packet sequence number, 24 bits.
    pub(crate) psn: u32,
}

impl Bth {
    /// A BTH as the C driver's senders make them: default P_Key, version 0,
    /// no pad, no flags.
    pub(crate) const fn new(opcode: u8, qpn: u32, psn: u32) -> Self {
        Self {
            opcode,
            se: false,
            mig: false,
            pad: 0,
            tver: BTH_TVER,
            pkey: BTH_DEF_PKEY,
            fecn: false,
            becn: false,
            qpn: qpn & BTH_QPN_MASK,
            ack_req: false,
            psn: psn & BTH_PSN_MASK,
        }
    }

    /// Decodes a BTH.
    #[inline]
    pub(crate) fn decode(b: &[u8; BTH_LEN]) -> Self {
        let flags = b.u8_at::<1>();
        let fqpn = b.be32_at::<4>();
        let apsn = b.be32_at::<8>();
        Self {
            opcode: b.u8_at::<0>(),
            se: flags & SE != 0,
            mig: flags & MIG != 0,
            pad: (flags & PAD_MASK) >> PAD_SHIFT,
            tver: flags & TVER_MASK,
            pkey: b.be16_at::<2>(),
            fecn: fqpn & FECN != 0,
            becn: fqpn & BECN != 0,
            qpn: fqpn & BTH_QPN_MASK,
            ack_req: apsn & ACK_REQ != 0,
            psn: apsn & BTH_PSN_MASK,
        }
    }

    /// Decodes the BTH at the start of `bytes`, if they hold one.
    #[inline]
    pub(crate) fn read(bytes: &[u8]) -> Option<Self> {
        bytes.first_chunk().map(Self::decode)
    }

    /// Encodes the BTH; fields wider than their bits are truncated to them
    /// and the reserved bits are zero.
    pub(crate) fn encode(&self, b: &mut [u8; BTH_LEN]) {
        let mut flags = ((self.pad << PAD_SHIFT) & PAD_MASK) | (self.tver & TVER_MASK);
        if self.se {
            flags |= SE;
        }
        if self.mig {
            flags |= MIG;
        }
        let mut fqpn = self.qpn & BTH_QPN_MASK;
        if self.fecn {
            fqpn |= FECN;
        }
        if self.becn {
            fqpn |= BECN;
        }
        let mut apsn = self.psn & BTH_PSN_MASK;
        if self.ack_req {
            apsn |= ACK_REQ;
        }
        b.set_u8_at::<0>(self.opcode);
        b.set_u8_at::<1>(flags);
        b.set_be16_at::<2>(self.pkey);
        b.set_be32_at::<4>(fqpn);
        b.set_be32_at::<8>(apsn);
    }

    /// Encodes the BTH at the start of `bytes`; `None` if they are too short.
    pub(crate) fn write(&self, bytes: &mut [u8]) -> Option<()> {
        self.encode(bytes.first_chunk_mut()?);
        Some(())
    }
}
