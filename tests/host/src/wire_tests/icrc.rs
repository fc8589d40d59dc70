// SPDX-License-Identifier: GPL-2.0

//! The ICRC against a packet captured from hardware, a packet whose ICRC
//! another implementation (scapy) computed, a one-shot reference computed
//! straight from the spec's description, and the masking rules bit by bit.

use super::{
    crc::crc32_le,
    packet::{
        build,
        random_bth,
        Headers, //
    },
    rng::Rng,
};
use crate::rxe_wire::{
    bth::Bth,
    icrc::*,
    opcode::{
        code,
        lookup,
        Mask,
        OPCODES, //
    },
    packet::{
        Packet,
        ICRC_LEN, //
    },
};

/// An IPv4 and UDP header for a RoCEv2 packet of `pkt_len` bytes.
pub fn ipv4_udp(pkt_len: usize) -> ([u8; IPV4_HDR_LEN], [u8; UDP_HDR_LEN]) {
    let tot = (IPV4_HDR_LEN + UDP_HDR_LEN + pkt_len) as u16;
    let udp_len = (UDP_HDR_LEN + pkt_len) as u16;
    let mut ip = [
        0x45, 0x02, 0, 0, 0x12, 0x34, 0x40, 0x00, 64, 17, 0xab, 0xcd, 192, 168, 1, 1, 192, 168, 1,
        2,
    ];
    ip[2..4].copy_from_slice(&tot.to_be_bytes());
    let mut udp = [0xc0, 0x01, 0x12, 0xb7, 0, 0, 0x5a, 0x5a];
    udp[4..6].copy_from_slice(&udp_len.to_be_bytes());
    (ip, udp)
}

/// An IPv6 and UDP header for a RoCEv2 packet of `pkt_len` bytes.
fn ipv6_udp(pkt_len: usize) -> ([u8; IPV6_HDR_LEN], [u8; UDP_HDR_LEN]) {
    let udp_len = (UDP_HDR_LEN + pkt_len) as u16;
    let mut ip = [0u8; IPV6_HDR_LEN];
    ip[..8].copy_from_slice(&[0x6a, 0xbc, 0xde, 0xf1, 0, 0, 17, 64]);
    ip[4..6].copy_from_slice(&udp_len.to_be_bytes());
    ip[8..24].copy_from_slice(&[0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
    ip[24..40].copy_from_slice(&[0xfe, 0x80, 0, 0, 0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1]);
    let mut udp = [0xc0, 0x02, 0x12, 0xb7, 0, 0, 0x77, 0x77];
    udp[4..6].copy_from_slice(&udp_len.to_be_bytes());
    (ip, udp)
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A RoCEv2 CNP captured on a ConnectX-4 Lx (scapy's test/contrib/roce.uts,
/// "RoCE CNP captured on ConnectX-4 Lx"): the ICRC of real hardware.
#[test]
fn hardware_captured_cnp() {
    let frame = hex(
        "e41d 2dab 2bc2 7cfe 9064 3b32 0800 45c2
         003c 718c 4000 4011 9161 0a00 1101 0a00
         1201 0000 12b7 0028 0000 8100 ffff 4000
         0118 0000 0000 0000 0000 0000 0000 0000
         0000 0000 0000 82fd 002a",
    );
    let ip = IpHdr::parse(&frame[14..]).unwrap();
    assert!(matches!(ip, IpHdr::V4(_)));
    let udp: &[u8; 8] = frame[34..42].try_into().unwrap();
    let pkt = &frame[42..];
    assert_eq!(pkt.len(), 32);
    // Not an opcode of rxe's table: the parser refuses it...
    assert!(Packet::parse(pkt).is_err());
    // ...but the ICRC is opcode-independent for it.
    let icrc = icrc_contiguous(crc32_le, ip, udp, pkt).unwrap();
    assert_eq!(icrc.to_le_bytes(), [0x82, 0xfd, 0x00, 0x2a]);
    assert_eq!(stored(pkt), Some(icrc));
}

/// scapy's RoCE example (test/contrib/roce.uts, "RoCE layer"): a UC SEND
/// ONLY with MigReq, pad 2, QPN 211, PSN 13571856, whose ICRC scapy's own
/// implementation computes as 0x78f353f3 (its field reads the ICRC bytes
/// big-endian, so these are the wire bytes).
#[test]
fn scapy_uc_send_only() {
    let ip = hex("4501 0040 0478 4000 4011 b4d5 c0a8 0007 c0a8 0007");
    let udp = hex("c000 12b7 002c aca2");
    let mut pkt = vec![0u8; 12];
    Bth {
        mig: true,
        pad: 2,
        ..Bth::new(code::UC_SEND_ONLY, 211, 13_571_856)
    }
    .write(&mut pkt)
    .unwrap();
    pkt.extend_from_slice(b"F0\x81\x8b\xe2\x895\xd9\x0e\x9a\x95PT\x01\xbe\x88^P\x00\x00");
    pkt.extend_from_slice(&[0x78, 0xf3, 0x53, 0xf3]);

    let parsed = Packet::parse(&pkt).unwrap();
    assert_eq!(parsed.payload().len(), 18);
    let ip = IpHdr::parse(&ip).unwrap();
    let udp: &[u8; 8] = udp[..].try_into().unwrap();
    assert!(parsed.icrc_ok(crc32_le, ip, udp));
    assert_eq!(parsed.compute_icrc(crc32_le, ip, udp), parsed.icrc());
}

/// The ICRC straight from the spec, one shot: CRC-32 (inverted in and out)
/// of 8 bytes of ones, then the IP, UDP and BTH with the variant fields set
/// to ones, then the rest of the packet up to the ICRC.
fn reference(ip: &[u8], udp: &[u8], pkt: &[u8]) -> u32 {
    let mut all = vec![0xff; 8];
    let mut ip = ip.to_vec();
    if ip[0] >> 4 == 4 {
        ip[1] = 0xff; // type of service
        ip[8] = 0xff; // time to live
        ip[10..12].fill(0xff); // header checksum
    } else {
        // Traffic class (bits 4-11) and flow label (bits 12-31).
        let w = u32::from_be_bytes(ip[..4].try_into().unwrap()) | 0x0fff_ffff;
        ip[..4].copy_from_slice(&w.to_be_bytes());
        ip[7] = 0xff; // hop limit
    }
    all.extend_from_slice(&ip);
    all.extend_from_slice(&udp[..6]);
    all.extend_from_slice(&[0xff, 0xff]); // UDP checksum
    all.extend_from_slice(&pkt[..4]);
    all.push(0xff); // FECN, BECN, resv6a
    all.extend_from_slice(&pkt[5..pkt.len() - ICRC_LEN]);
    !crc32_le(!0, &all)
}

#[test]
fn matches_the_spec_reference_for_every_opcode() {
    let mut rng = Rng::seeded("matches_the_spec_reference_for_every_opcode", 0x5eed_0002);
    for info in &OPCODES {
        let payload_len = if info.mask().intersects(Mask::PAYLOAD) { rng.below(300) } else { 0 };
        let bth = Bth {
            opcode: info.opcode(),
            ..random_bth(&mut rng)
        };
        let h = Headers::random(&mut rng);
        let pkt = build(info.opcode(), &bth, &h, &rng.bytes(payload_len));
        let (ip4, udp4) = ipv4_udp(pkt.len());
        let (ip6, udp6) = ipv6_udp(pkt.len());
        for (ip, udp) in [(IpHdr::V4(&ip4), &udp4), (IpHdr::V6(&ip6), &udp6)] {
            let ip_bytes: &[u8] = match ip {
                IpHdr::V4(b) => b,
                IpHdr::V6(b) => b,
            };
            let spec = reference(ip_bytes, udp, &pkt);
            assert_eq!(icrc_contiguous(crc32_le, ip, udp, &pkt), Some(spec));
            let ours = icrc(crc32_le, ip, udp, &pkt, info).unwrap();
            if info.icrc_payload_offset() == info.header_len() {
                assert_eq!(ours, spec, "{}", info.name());
            } else {
                assert_ne!(ours, spec, "{}", info.name());
            }
        }
    }
}

/// The C driver's ICRC of RC FLUSH: its table entry has no payload offset,
/// so after the headers the CRC runs over the packet from the BTH on again
/// (`payload_addr()` is the BTH, `payload_size()` the whole packet less
/// pad and ICRC). Peers running the C driver compute it so.
#[test]
fn flush_covers_its_headers_twice_as_c_does() {
    let mut rng = Rng::seeded("flush_covers_its_headers_twice_as_c_does", 0x5eed_0003);
    let bth = Bth {
        opcode: code::RC_FLUSH,
        ..random_bth(&mut rng)
    };
    let pkt = build(code::RC_FLUSH, &bth, &Headers::random(&mut rng), &[]);
    assert_eq!(pkt.len(), 12 + 4 + 16 + ICRC_LEN);
    let (ip, udp) = ipv4_udp(pkt.len());
    // The spec's CRC of everything before the ICRC, not yet inverted...
    let once = !reference(&ip, &udp, &pkt);
    // ...continued over BTH, FETH and RETH again, unmasked.
    let twice = !crc32_le(once, &pkt[..pkt.len() - ICRC_LEN]);
    let info = lookup(code::RC_FLUSH).unwrap();
    assert_eq!(icrc(crc32_le, IpHdr::V4(&ip), &udp, &pkt, info), Some(twice));
    assert_eq!(stored(&pkt), Some(twice));
}

/// Flipping a bit the ICRC masks leaves it unchanged; flipping any other bit
/// of the IP, UDP or RoCE packet changes it (a CRC catches every single-bit
/// error).
#[test]
fn masks_exactly_the_variant_fields() {
    let mut rng = Rng::seeded("masks_exactly_the_variant_fields", 0x5eed_0004);
    let bth = Bth {
        opcode: code::RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
        ..random_bth(&mut rng)
    };
    let pkt = build(bth.opcode, &bth, &Headers::random(&mut rng), &rng.bytes(13));
    let info = lookup(bth.opcode).unwrap();
    let end = pkt.len() - ICRC_LEN;

    let (ip4, udp4) = ipv4_udp(pkt.len());
    let (ip6, udp6) = ipv6_udp(pkt.len());
    let v4_masked = |byte: usize, _bit: u8| matches!(byte, 1 | 8 | 10 | 11);
    let v6_masked = |byte: usize, bit: u8| (byte == 0 && bit < 4) || matches!(byte, 1..=3 | 7);
    check_masking(&ip4, &udp4, &pkt, end, info, |ip| IpHdr::V4(ip.try_into().unwrap()), v4_masked);
    check_masking(&ip6, &udp6, &pkt, end, info, |ip| IpHdr::V6(ip.try_into().unwrap()), v6_masked);
}

fn check_masking(
    ip: &[u8],
    udp: &[u8; 8],
    pkt: &[u8],
    end: usize,
    info: &crate::rxe_wire::opcode::OpcodeInfo,
    as_ip: impl Fn(&[u8]) -> IpHdr<'_>,
    ip_masked: impl Fn(usize, u8) -> bool,
) {
    let base = icrc(crc32_le, as_ip(ip), udp, pkt, info).unwrap();
    for byte in 0..ip.len() {
        for bit in 0..8 {
            let mut ip = ip.to_vec();
            ip[byte] ^= 1 << bit;
            let crc = icrc(crc32_le, as_ip(&ip), udp, pkt, info).unwrap();
            assert_eq!(crc == base, ip_masked(byte, bit), "IP byte {byte} bit {bit}");
        }
    }
    for byte in 0..UDP_HDR_LEN {
        for bit in 0..8 {
            let mut udp = *udp;
            udp[byte] ^= 1 << bit;
            let crc = icrc(crc32_le, as_ip(ip), &udp, pkt, info).unwrap();
            assert_eq!(crc == base, byte >= 6, "UDP byte {byte} bit {bit}");
        }
    }
    for byte in 0..end {
        for bit in 0..8 {
            let mut pkt = pkt.to_vec();
            pkt[byte] ^= 1 << bit;
            let crc = icrc(crc32_le, as_ip(ip), udp, &pkt, info).unwrap();
            assert_eq!(crc == base, byte == 4, "packet byte {byte} bit {bit}");
        }
    }
}

#[test]
fn ip_header_by_version() {
    assert_eq!(IpHdr::parse(&[]), None);
    assert_eq!(IpHdr::parse(&[0x45; 19]), None);
    assert!(matches!(IpHdr::parse(&[0x45; 20]), Some(IpHdr::V4(_))));
    assert_eq!(IpHdr::parse(&[0x60; 39]), None);
    assert!(matches!(IpHdr::parse(&[0x60; 40]), Some(IpHdr::V6(_))));
    assert_eq!(IpHdr::parse(&[0x50; 40]), None);
}

#[test]
fn short_packets_have_no_icrc() {
    let (ip, udp) = ipv4_udp(0);
    let info = lookup(code::RC_RDMA_WRITE_FIRST).unwrap();
    for len in 0..32 {
        let pkt = vec![0u8; len];
        assert_eq!(icrc(crc32_le, IpHdr::V4(&ip), &udp, &pkt, info), None, "{len}");
        assert_eq!(icrc_contiguous(crc32_le, IpHdr::V4(&ip), &udp, &pkt).is_some(), len >= 16);
    }
    assert!(icrc(crc32_le, IpHdr::V4(&ip), &udp, &[0; 32], info).is_some());
    assert_eq!(stored(&[1, 2, 3]), None);
    let mut tiny = [0u8; 3];
    store(&mut tiny, 0xffff_ffff);
    assert_eq!(tiny, [0; 3]);
}
