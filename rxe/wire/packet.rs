// SPDX-License-Identifier: GPL-2.0

//! Whole packets: the parser of a received RoCEv2 UDP payload and the
//! builder of one to send.
//!
//! A packet here is the UDP payload: the BTH, the extension headers of its
//! opcode, the payload, 0 to 3 pad bytes and the 4-byte ICRC (the C driver's
//! `pkt->hdr` .. `pkt->hdr + pkt->paylen`).

use super::{
    bth::{
        Bth,
        BTH_LEN,
        BTH_TVER, //
    },
    ext::{
        Aeth,
        Atmack,
        Atmeth,
        Deth,
        ExtHeader,
        Feth,
        Ieth,
        Immdt,
        Rdeth,
        Reth, //
    },
    icrc::{
        self,
        IpHdr,
        UDP_HDR_LEN, //
    },
    opcode::{
        self,
        HdrType,
        Mask,
        OpcodeInfo, //
    },
};

/// Bytes of the invariant CRC at the end of every packet.
pub(crate) const ICRC_LEN: usize = 4;
/// The largest packet: a UDP datagram's length is 16 bits and counts the
/// 8-byte UDP header (the C driver's `paylen` is a `u16` for that reason).
pub(crate) const MAX_PKT_LEN: usize = u16::MAX as usize - UDP_HDR_LEN;

/// Why a received packet was refused. The C driver drops such a packet
/// (`rxe_rcv()`, `hdr_check()`) without counting it anywhere: only the
/// packets it accepts are counted (`rcvd_pkts`), so these only tell a debug
/// message which check failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParseError {
    /// Longer than a UDP datagram can carry.
    TooLong {
        /// The packet's length.
        len: usize,
    },
    /// Shorter than a BTH (C: `skb->len < RXE_BTH_BYTES`).
    NoBth {
        /// The packet's length.
        len: usize,
    },
    /// An opcode rxe has no table entry for (C: zero `mask`/`length`).
    UnknownOpcode(u8),
    /// Shorter than the opcode's headers, the BTH pad count and the ICRC
    /// (C: `paylen < header_size(pkt) + bth_pad(pkt) + RXE_ICRC_SIZE`).
    Truncated {
        /// The packet's opcode.
        opcode: u8,
        /// The least length the opcode and pad count need.
        need: usize,
        /// The packet's length.
        len: usize,
    },
    /// Transport header version other than 0 (C: `hdr_check()`).
    BadTver(u8),
    /// Destination QPN 0, which no packet may have (C: `hdr_check()`).
    ZeroQpn,
}

/// A received packet whose structure has been checked: its opcode is known
/// and it is long enough for its headers, pad and ICRC. Nothing else is
/// checked (P_Key, QP, PSN and ICRC are the transport's to check).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Packet<'a> {
    bytes: &'a [u8],
    info: &'static OpcodeInfo,
    bth: Bth,
}

impl<'a> Packet<'a> {
    /// Parses the UDP payload `bytes`, in the C driver's order of checks.
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<Self, ParseError> {
        let len = bytes.len();
        if len > MAX_PKT_LEN {
            return Err(ParseError::TooLong { len });
        }
        let bth = Bth::read(bytes).ok_or(ParseError::NoBth { len })?;
        let info = opcode::lookup(bth.opcode).ok_or(ParseError::UnknownOpcode(bth.opcode))?;
        // At most 52 + 3 + 4: cannot overflow.
        let need = info.header_len() + usize::from(bth.pad) + ICRC_LEN;
        if len < need {
            return Err(ParseError::Truncated {
                opcode: bth.opcode,
                need,
                len,
            });
        }
        if bth.tver != BTH_TVER {
            return Err(ParseError::BadTver(bth.tver));
        }
        if bth.qpn == 0 {
            return Err(ParseError::ZeroQpn);
        }
        Ok(Self { bytes, info, bth })
    }

    /// A packet [`Packet::parse`] accepted before, again: its BTH and
    /// opcode entry, without the checks (a received packet is looked at
    /// several times while it is worked on; its bytes do not change). The
    /// accessors are bounds-checked all the same: bytes that were not
    /// checked give wrong fields, not a fault.
    #[inline]
    pub(crate) fn reparse(bytes: &'a [u8]) -> Option<Self> {
        let bth = Bth::read(bytes)?;
        let info = opcode::lookup(bth.opcode)?;
        Some(Self { bytes, info, bth })
    }

    /// The whole packet, BTH to ICRC.
    pub(crate) fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The opcode's table entry.
    pub(crate) fn info(&self) -> &'static OpcodeInfo {
        self.info
    }

    /// The opcode.
    pub(crate) fn opcode(&self) -> u8 {
        self.bth.opcode
    }

    /// The opcode's mask (headers and kind of packet).
    pub(crate) fn mask(&self) -> Mask {
        self.info.mask()
    }

    /// The BTH.
    pub(crate) fn bth(&self) -> &Bth {
        &self.bth
    }

    /// The packet sequence number.
    pub(crate) fn psn(&self) -> u32 {
        self.bth.psn
    }

    /// The destination QP number.
    pub(crate) fn qpn(&self) -> u32 {
        self.bth.qpn
    }

    /// The extension header `H`, if the opcode carries one.
    pub(crate) fn header<H: ExtHeader>(&self) -> Option<H> {
        let at = self.info.offset(H::KIND)?;
        H::read(self.bytes.get(at..)?)
    }

    /// The RDETH, if any.
    pub(crate) fn rdeth(&self) -> Option<Rdeth> {
        self.header()
    }

    /// The DETH, if any.
    pub(crate) fn deth(&self) -> Option<Deth> {
        self.header()
    }

    /// The RETH, if any.
    pub(crate) fn reth(&self) -> Option<Reth> {
        self.header()
    }

    /// The FETH, if any.
    pub(crate) fn feth(&self) -> Option<Feth> {
        self.header()
    }

    /// The AtomicETH, if any.
    pub(crate) fn atmeth(&self) -> Option<Atmeth> {
        self.header()
    }

    /// The AETH, if any.
    pub(crate) fn aeth(&self) -> Option<Aeth> {
        self.header()
    }

    /// The AtomicAckETH, if any.
    pub(crate) fn atmack(&self) -> Option<Atmack> {
        self.header()
    }

    /// The immediate data, if any.
    pub(crate) fn immdt(&self) -> Option<Immdt> {
        self.header()
    }

    /// The IETH, if any.
    pub(crate) fn ieth(&self) -> Option<Ieth> {
        self.header()
    }

    /// The payload: the bytes after the headers, pad and ICRC excluded (the
    /// C driver's `payload_addr()` and `payload_size()`). Opcodes without
    /// [`Mask::PAYLOAD`] normally have none, but, as in the C driver, the
    /// parser does not refuse one that does; its bytes are then here.
    pub(crate) fn payload(&self) -> &'a [u8] {
        let end = self
            .bytes
            .len()
            .saturating_sub(ICRC_LEN + usize::from(self.bth.pad));
        self.bytes
            .get(self.info.header_len()..end)
            .unwrap_or_default()
    }

    /// The ICRC the packet carries.
    pub(crate) fn icrc(&self) -> u32 {
        icrc::stored(self.bytes).unwrap_or(0)
    }

    /// The ICRC this packet should carry, given the IP and UDP headers it
    /// came with and the crc32 function (see [`icrc::icrc`]).
    pub(crate) fn compute_icrc<F>(&self, crc32_le: F, ip: IpHdr<'_>, udp: &[u8; UDP_HDR_LEN]) -> u32
    where
        F: FnMut(u32, &[u8]) -> u32,
    {
        icrc::icrc(crc32_le, ip, udp, self.bytes, self.info).unwrap_or(0)
    }

    /// Whether the packet's ICRC is right (C: `rxe_icrc_check()`).
    pub(crate) fn icrc_ok<F>(&self, crc32_le: F, ip: IpHdr<'_>, udp: &[u8; UDP_HDR_LEN]) -> bool
    where
        F: FnMut(u32, &[u8]) -> u32,
    {
        icrc::icrc(crc32_le, ip, udp, self.bytes, self.info) == Some(self.icrc())
    }
}

/// Why a packet could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BuildError {
    /// An opcode rxe has no table entry for.
    UnknownOpcode(u8),
    /// Payload for an opcode that carries none.
    UnexpectedPayload {
        /// The opcode.
        opcode: u8,
    },
    /// The packet would not fit a UDP datagram.
    TooLong {
        /// The payload length asked for.
        payload_len: usize,
    },
    /// The buffer is shorter than the packet.
    BufferTooSmall {
        /// The packet's length.
        need: usize,
        /// The buffer's length.
        len: usize,
    },
    /// The opcode carries no header of this type.
    NoSuchHeader {
        /// The opcode.
        opcode: u8,
        /// The header asked for.
        hdr: HdrType,
    },
}

/// The shape of a packet to send: opcode, payload length and the pad that
/// rounds the payload to 4 bytes (C: `pad = (-payload) & 3`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    info: &'static OpcodeInfo,
    payload_len: usize,
    pad: u8,
    len: usize,
}

impl Layout {
    /// The layout of an `opcode` packet with `payload_len` payload bytes.
    pub(crate) fn new(opcode: u8, payload_len: usize) -> Result<Self, BuildError> {
        let info = opcode::lookup(opcode).ok_or(BuildError::UnknownOpcode(opcode))?;
        if payload_len != 0 && !info.mask().intersects(Mask::PAYLOAD) {
            return Err(BuildError::UnexpectedPayload { opcode });
        }
        let pad = 0usize.wrapping_sub(payload_len) & 3;
        let len = payload_len
            .checked_add(info.header_len() + pad + ICRC_LEN)
            .filter(|len| *len <= MAX_PKT_LEN)
            .ok_or(BuildError::TooLong { payload_len })?;
        Ok(Self {
            info,
            payload_len,
            // Below 4.
            pad: pad as u8,
            len,
        })
    }

    /// The opcode's table entry.
    pub(crate) fn info(&self) -> &'static OpcodeInfo {
        self.info
    }

    /// Payload bytes.
    pub(crate) fn payload_len(&self) -> usize {
        self.payload_len
    }

    /// Pad bytes after the payload.
    pub(crate) fn pad(&self) -> u8 {
        self.pad
    }

    /// The packet's length, BTH to ICRC (the UDP payload; the C driver's
    /// `paylen`).
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

/// A packet being built in a buffer.
#[derive(Debug)]
pub(crate) struct PacketMut<'a> {
    bytes: &'a mut [u8],
    layout: Layout,
}

impl<'a> PacketMut<'a> {
    /// Lays a `layout` packet out at the start of `buf`: writes `bth` with
    /// the layout's opcode and pad count, and zeroes the extension headers,
    /// the pad and the ICRC. The payload bytes are left as they are.
    pub(crate) fn new(buf: &'a mut [u8], layout: Layout, bth: &Bth) -> Result<Self, BuildError> {
        let buf_len = buf.len();
        let bytes = buf
            .get_mut(..layout.len)
            .ok_or(BuildError::BufferTooSmall {
                need: layout.len,
                len: buf_len,
            })?;
        let mut pkt = Self { bytes, layout };
        pkt.set_bth(bth);
        let headers_end = layout.info.header_len();
        pkt.zero(BTH_LEN..headers_end);
        pkt.zero(headers_end + layout.payload_len..layout.len);
        Ok(pkt)
    }

    fn zero(&mut self, range: core::ops::Range<usize>) {
        if let Some(bytes) = self.bytes.get_mut(range) {
            // A loop the compiler turns into `memset`: `fill`, and even a
            // `for` over the slice (`into_iter`), are out-of-line calls in
            // the kernel's `core`, two a packet.
            let mut i = 0;
            while i < bytes.len() {
                bytes[i] = 0;
                i += 1;
            }
        }
    }

    /// The layout.
    pub(crate) fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Writes `bth`, with the layout's opcode and pad count.
    #[inline]
    pub(crate) fn set_bth(&mut self, bth: &Bth) {
        let bth = Bth {
            opcode: self.layout.info.opcode(),
            pad: self.layout.pad,
            ..*bth
        };
        // The layout's length includes the BTH: this always writes.
        let _ = bth.write(self.bytes);
    }

    /// Writes the extension header `h`.
    pub(crate) fn set<H: ExtHeader>(&mut self, h: &H) -> Result<(), BuildError> {
        let info = self.layout.info;
        let no_such_header = BuildError::NoSuchHeader {
            opcode: info.opcode(),
            hdr: H::KIND,
        };
        let at = info.offset(H::KIND).ok_or(no_such_header)?;
        h.write(self.bytes.get_mut(at..).unwrap_or_default())
            .ok_or(no_such_header)
    }

    /// The payload, to fill.
    pub(crate) fn payload_mut(&mut self) -> &mut [u8] {
        let start = self.layout.info.header_len();
        self.bytes
            .get_mut(start..start + self.layout.payload_len)
            .unwrap_or_default()
    }

    /// The packet as built so far.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.bytes
    }

    /// Computes and writes the ICRC (C: `rxe_icrc_generate()`); the IP and
    /// UDP headers must be those the packet will be sent with.
    pub(crate) fn write_icrc<F>(&mut self, crc32_le: F, ip: IpHdr<'_>, udp: &[u8; UDP_HDR_LEN])
    where
        F: FnMut(u32, &[u8]) -> u32,
    {
        if let Some(crc) = icrc::icrc(crc32_le, ip, udp, self.bytes, self.layout.info) {
            icrc::store(self.bytes, crc);
        }
    }

    /// The finished packet, parsed (which also checks what the receiver
    /// will: a zero QPN or a transport version other than 0 are refused).
    pub(crate) fn finish(self) -> Result<Packet<'a>, ParseError> {
        Packet::parse(self.bytes)
    }
}
