// SPDX-License-Identifier: GPL-2.0

//! Packets of the kernel's C rxe driver, captured on the guests' link (Linux
//! 7.3.4, `c` module set on both guests: `ibv_ud_pingpong -s 101`,
//! `ibv_rc_pingpong -s 101`, `ib_write_bw -s 61`, `ib_read_bw -s 61` and `ib_atomic_bw`, with a Python
//! `AF_PACKET` socket on guest a's eth0 keeping UDP port 4791 frames, as the
//! host has no tcpdump). Kept: the IPv4 header, UDP header and RoCE packet.
//! Each must parse, carry the ICRC computed here, and be rebuilt byte for
//! byte by the builder from its decoded fields: what the Rust driver sends
//! is what the C driver sends.

use super::crc::crc32_le;
use crate::rxe_wire::{
    icrc::IpHdr,
    opcode::{
        code,
        Mask, //
    },
    packet::{
        Layout,
        Packet,
        PacketMut, //
    },
};

const UD_SEND_ONLY: &str = "4500009c4e14400040116839c0000202c0000201f80612b7008800006430ffff0000\
001200e3570c11111111000000127b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b\
7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b\
7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b000000dfed9e38";
const RC_SEND_ONLY: &str = "450000949798400040111ebdc0000202c0000201c12112b7008000000430ffff00\
00001180e99efa7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b\
7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b\
7b7b7b7b7b7b7b7b0000008abc2d21";
const RC_RDMA_WRITE_ONLY: &str = "4500007c51be4000401164afc0000202c0000201c16912b7006800000a30ffff\
0000001380f8ebba000055c89b41b0000000044d0000003dc0f81c7372dd5203e45aaf1cee6d421b30a381d94d6e1b0041f6\
8f183a004bfaf8686d6b45bf6e2a191d46078a8922bb2ca4947912b07953a6086be008000000f5935621";
const RC_ACKNOWLEDGE: &str = "45000030fe1340004011b8a5c0000201c0000202c16912b7001c00001100ffff00000\
01300f8ebba1f00000129854144";
const RC_RDMA_READ_REQUEST: &str = "4500003c5227400040116486c0000202c0000201c19012b7002800000c00ffff\
000000148006a59b000055e0e012d000000005c50000003db03ab7c5";
const RC_RDMA_READ_RESPONSE_ONLY: &str = "45000070ff9a40004011b6dec0000201c0000202c19012b7005c000010\
30ffff000000140006a59b1f000001fd14f8b8df827af2df7e14289b1557df31a20c57004a77868c9d0f93e35097e0648f98\
44121236f1904a192b5f700a901216e713605f99ecfca87fdff9000000a9e4ecb9";
const RC_FETCH_ADD: &str = "45000048546440004011623dc0000202c0000201c1b912b7003400001400ffff000000\
15804ab86100005567d81280000000062200000000000000010000000000000000df3c94b8";
const RC_ATOMIC_ACKNOWLEDGE: &str = "45000038001640004011b69bc0000201c0000202c1b912b7002400001200ff\
ff00000015004ab8611f000001cd94cb7130a2425d0041ed99";

const CAPTURES: [(u8, &str); 8] = [
    (code::UD_SEND_ONLY, UD_SEND_ONLY),
    (code::RC_SEND_ONLY, RC_SEND_ONLY),
    (code::RC_RDMA_WRITE_ONLY, RC_RDMA_WRITE_ONLY),
    (code::RC_ACKNOWLEDGE, RC_ACKNOWLEDGE),
    (code::RC_RDMA_READ_REQUEST, RC_RDMA_READ_REQUEST),
    (code::RC_RDMA_READ_RESPONSE_ONLY, RC_RDMA_READ_RESPONSE_ONLY),
    (code::RC_FETCH_ADD, RC_FETCH_ADD),
    (code::RC_ATOMIC_ACKNOWLEDGE, RC_ATOMIC_ACKNOWLEDGE),
];

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// The IP header, the UDP header and the RoCE packet of a capture.
fn split(frame: &[u8]) -> (IpHdr<'_>, &[u8; 8], &[u8]) {
    let ip = IpHdr::parse(frame).unwrap();
    let udp: &[u8; 8] = frame[20..28].try_into().unwrap();
    assert_eq!(&udp[2..4], &[0x12, 0xb7], "not RoCEv2");
    let udp_len = usize::from(u16::from_be_bytes([udp[4], udp[5]]));
    (ip, udp, &frame[28..20 + udp_len])
}

#[test]
fn c_packets_parse_and_their_icrc_checks() {
    for (opcode, hex) in CAPTURES {
        let frame = unhex(hex);
        let (ip, udp, bytes) = split(&frame);
        let pkt = Packet::parse(bytes).unwrap();
        assert_eq!(pkt.opcode(), opcode);
        assert!(pkt.icrc_ok(crc32_le, ip, udp), "{}", pkt.info().name());
    }
}

#[test]
fn c_packets_decode_as_the_tools_sent_them() {
    let frame = unhex(UD_SEND_ONLY);
    let pkt = Packet::parse(split(&frame).2).unwrap();
    // ibv_ud_pingpong: Q_Key 0x11111111, a 101-byte message of 0x7b, pad 3.
    let deth = pkt.deth().unwrap();
    assert_eq!((deth.qkey, deth.sqp), (0x1111_1111, 0x12));
    assert_eq!(pkt.payload().len(), 101);
    assert!(pkt.payload().iter().all(|&b| b == 0x7b));
    assert_eq!(pkt.bth().pad, 3);
    let frame = unhex(RC_SEND_ONLY);
    let pkt = Packet::parse(split(&frame).2).unwrap();
    assert_eq!((pkt.payload().len(), pkt.bth().pad), (101, 3));
    assert!(pkt.bth().ack_req);

    for hex in [RC_RDMA_WRITE_ONLY, RC_RDMA_READ_REQUEST] {
        let frame = unhex(hex);
        let pkt = Packet::parse(split(&frame).2).unwrap();
        assert_eq!(pkt.reth().unwrap().len, 61, "{}", pkt.info().name());
        assert!(pkt.bth().ack_req);
    }
    let frame = unhex(RC_RDMA_READ_RESPONSE_ONLY);
    let pkt = Packet::parse(split(&frame).2).unwrap();
    assert_eq!((pkt.payload().len(), pkt.bth().pad), (61, 3));
    assert_eq!(pkt.aeth().unwrap().syn, 0x1f);

    let frame = unhex(RC_FETCH_ADD);
    let pkt = Packet::parse(split(&frame).2).unwrap();
    assert!(pkt.mask().intersects(Mask::ATOMIC));
    let atmeth = pkt.atmeth().unwrap();
    assert_eq!(atmeth.va % 8, 0);
    assert_eq!(atmeth.comp, 0);
}

#[test]
fn builder_reproduces_c_packets_byte_for_byte() {
    for (_, hex) in CAPTURES {
        let frame = unhex(hex);
        let (ip, udp, bytes) = split(&frame);
        let pkt = Packet::parse(bytes).unwrap();
        let layout = Layout::new(pkt.opcode(), pkt.payload().len()).unwrap();
        let mut buf = vec![0u8; layout.len()];
        let mut out = PacketMut::new(&mut buf, layout, pkt.bth()).unwrap();
        let mask = pkt.mask();
        let ok = |r: Result<(), _>| r.unwrap();
        if let Some(h) = pkt.deth() {
            ok(out.set(&h));
        }
        if let Some(h) = pkt.reth() {
            ok(out.set(&h));
        }
        if let Some(h) = pkt.aeth() {
            ok(out.set(&h));
        }
        if let Some(h) = pkt.atmeth() {
            ok(out.set(&h));
        }
        if let Some(h) = pkt.atmack() {
            ok(out.set(&h));
        }
        assert!(!mask.intersects(Mask::IMMDT | Mask::IETH | Mask::RDETH | Mask::FETH));
        out.payload_mut().copy_from_slice(pkt.payload());
        out.write_icrc(crc32_le, ip, udp);
        assert_eq!(out.bytes(), bytes, "{}", pkt.info().name());
    }
}
