// SPDX-License-Identifier: GPL-2.0

//! The invariant CRC (IBTA vol. 1, 7.8.1 and the RoCEv2 annex A17.3.3), as
//! the C driver's `rxe_icrc.c` computes it.
//!
//! The CRC-32 of the packet with every field a router may change replaced by
//! ones: it starts with 8 bytes of ones for the LRH RoCEv2 lacks, then the IP
//! header (IPv4: TOS, TTL and checksum masked; IPv6: traffic class, flow
//! label and hop limit masked), the UDP header (checksum masked), the BTH
//! (its `resv8a` byte, FECN/BECN and the reserved bits, masked), the other
//! headers and the payload with its pad. The ICRC is the complement of that
//! CRC, sent least significant byte first.
//!
//! The CRC function is a parameter, with the semantics of the kernel's
//! `crc32_le(crc, p, len)`: the reflected CRC-32 polynomial 0xedb88320, no
//! inversion on entry or exit. The kernel passes its crc32 library; the host
//! tests pass a software one.

use super::{
    bth::BTH_LEN,
    opcode::OpcodeInfo,
    packet::ICRC_LEN, //
};

/// Bytes in a UDP header.
pub(crate) const UDP_HDR_LEN: usize = 8;
/// Bytes in an IPv4 header without options.
pub(crate) const IPV4_HDR_LEN: usize = 20;
/// Bytes in an IPv6 header.
pub(crate) const IPV6_HDR_LEN: usize = 40;

/// The CRC of 8 bytes of ones (the masked LRH) from the initial value
/// 0xffffffff: where every ICRC starts.
pub(crate) const ICRC_SEED: u32 = 0xdebb_20e3;

/// The IP header a packet travels with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IpHdr<'a> {
    /// An IPv4 header; only its first 20 bytes count, as in the C driver.
    V4(&'a [u8; IPV4_HDR_LEN]),
    /// An IPv6 header.
    V6(&'a [u8; IPV6_HDR_LEN]),
}

impl<'a> IpHdr<'a> {
    /// The IP header at the start of `bytes`, by its version field.
    pub(crate) fn parse(bytes: &'a [u8]) -> Option<Self> {
        match bytes.first()? >> 4 {
            4 => bytes.first_chunk().map(Self::V4),
            6 => bytes.first_chunk().map(Self::V6),
            _ => None,
        }
    }
}

/// Runs `crc32_le` over the pseudo header: the masked IP, UDP and BTH.
fn pseudo_header<F>(
    crc32_le: &mut F,
    ip: IpHdr<'_>,
    udp: &[u8; UDP_HDR_LEN],
    bth: &[u8; BTH_LEN],
) -> u32
where
    F: FnMut(u32, &[u8]) -> u32,
{
    // One buffer, one CRC call, as the C driver's `pshdr`.
    match ip {
        IpHdr::V4(hdr) => {
            let mut b =
                masked::<IPV4_HDR_LEN, { IPV4_HDR_LEN + UDP_HDR_LEN + BTH_LEN }>(hdr, udp, bth);
            b[1] = 0xff; // TOS
            b[8] = 0xff; // TTL
            b[10] = 0xff; // header checksum
            b[11] = 0xff;
            crc32_le(ICRC_SEED, &b)
        }
        IpHdr::V6(hdr) => {
            let mut b =
                masked::<IPV6_HDR_LEN, { IPV6_HDR_LEN + UDP_HDR_LEN + BTH_LEN }>(hdr, udp, bth);
            b[0] |= 0x0f; // traffic class, high nibble
            b[1] = 0xff; // traffic class, low nibble; flow label
            b[2] = 0xff;
            b[3] = 0xff;
            b[7] = 0xff; // hop limit
            crc32_le(ICRC_SEED, &b)
        }
    }
}

/// The IP header `ip` (`IP` bytes), the UDP header and the BTH one after
/// the other (`ALL` bytes, their sum), with the UDP checksum and the BTH's
/// FECN, BECN and reserved bits masked; the caller masks the IP fields.
/// Copied as arrays: `copy_from_slice` is an out-of-line call in the
/// kernel's `core`, two a packet here.
fn masked<const IP: usize, const ALL: usize>(
    ip: &[u8; IP],
    udp: &[u8; UDP_HDR_LEN],
    bth: &[u8; BTH_LEN],
) -> [u8; ALL] {
    const { assert!(ALL == IP + UDP_HDR_LEN + BTH_LEN) };
    let mut b = [0u8; ALL];
    if let Some((i, rest)) = b.split_first_chunk_mut::<IP>() {
        *i = *ip;
        if let Some((u, rest)) = rest.split_first_chunk_mut::<UDP_HDR_LEN>() {
            *u = *udp;
            u[6] = 0xff; // checksum
            u[7] = 0xff;
            if let Some(t) = rest.first_chunk_mut::<BTH_LEN>() {
                *t = *bth;
                t[4] = 0xff; // FECN, BECN, resv6a
            }
        }
    }
    b
}

/// The ICRC of `pkt` (BTH to ICRC, the UDP payload) sent with `ip` and
/// `udp`, for the opcode entry `info`; `None` if `pkt` is too short for it.
///
/// As the C driver: the headers after the BTH, then the bytes from the
/// table's payload offset up to the ICRC (for RC FLUSH, whose entry has
/// none, that is the whole packet again, see
/// [`OpcodeInfo::icrc_payload_offset`]).
pub(crate) fn icrc<F>(
    mut crc32_le: F,
    ip: IpHdr<'_>,
    udp: &[u8; UDP_HDR_LEN],
    pkt: &[u8],
    info: &OpcodeInfo,
) -> Option<u32>
where
    F: FnMut(u32, &[u8]) -> u32,
{
    let end = pkt.len().checked_sub(ICRC_LEN)?;
    let headers = pkt.get(BTH_LEN..info.header_len())?;
    let rest = pkt.get(info.icrc_payload_offset()..end)?;
    let crc = pseudo_header(&mut crc32_le, ip, udp, pkt.first_chunk()?);
    let crc = crc32_le(crc, headers);
    Some(!crc32_le(crc, rest))
}

/// The ICRC of `pkt` whatever its opcode, rxe's or not (a CNP, say): the
/// spec's computation over the contiguous packet. The same as [`icrc`] for
/// every opcode but those [`OpcodeInfo::icrc_payload_offset`] names.
pub(crate) fn icrc_contiguous<F>(
    mut crc32_le: F,
    ip: IpHdr<'_>,
    udp: &[u8; UDP_HDR_LEN],
    pkt: &[u8],
) -> Option<u32>
where
    F: FnMut(u32, &[u8]) -> u32,
{
    let end = pkt.len().checked_sub(ICRC_LEN)?;
    let rest = pkt.get(BTH_LEN..end)?;
    let crc = pseudo_header(&mut crc32_le, ip, udp, pkt.first_chunk()?);
    Some(!crc32_le(crc, rest))
}

/// The ICRC stored in the last 4 bytes of `pkt`.
pub(crate) fn stored(pkt: &[u8]) -> Option<u32> {
    pkt.last_chunk().map(|b| u32::from_le_bytes(*b))
}

/// Stores `icrc` in the last 4 bytes of `pkt` (nothing if it is shorter).
pub(crate) fn store(pkt: &mut [u8], icrc: u32) {
    if let Some(b) = pkt.last_chunk_mut() {
        *b = icrc.to_le_bytes();
    }
}
