// SPDX-License-Identifier: GPL-2.0

//! Random-input tests, run in every `cargo test` (the coverage-guided fuzzer
//! of the parser is `tests/fuzz`'s `rxe_packet`). Each test runs a fixed
//! number of cases from a fixed seed, which it prints (`-- --nocapture`);
//! `RRXE_WIRE_SEED=<n>` replays or varies it. The tests check that the
//! parser, the builder and the ICRC never panic (the host build has overflow
//! checks on, as the kernel's has), and bound what the parser accepts.

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
    icrc::{
        icrc,
        icrc_contiguous,
        IpHdr, //
    },
    opcode::{
        lookup,
        HdrType,
        Mask,
        OPCODES, //
    },
    packet::*,
};

/// What every accepted packet satisfies.
fn check_accepted(bytes: &[u8], pkt: &Packet<'_>) {
    let len = bytes.len();
    assert!((12..=MAX_PKT_LEN).contains(&len));
    let info = lookup(bytes[0]).expect("accepted an unknown opcode");
    assert_eq!(pkt.info(), info);
    let bth = Bth::read(bytes).unwrap();
    assert_eq!(*pkt.bth(), bth);
    assert_eq!(bth.tver, 0);
    assert_ne!(bth.qpn, 0);
    let pad = usize::from(bth.pad);
    assert!(len >= info.header_len() + pad + ICRC_LEN);
    let payload = pkt.payload();
    assert_eq!(payload.len(), len - info.header_len() - pad - ICRC_LEN);
    assert_eq!(payload, &bytes[info.header_len()..info.header_len() + payload.len()]);
    let mask = info.mask();
    for (present, m) in [
        (pkt.rdeth().is_some(), Mask::RDETH),
        (pkt.deth().is_some(), Mask::DETH),
        (pkt.reth().is_some(), Mask::RETH),
        (pkt.feth().is_some(), Mask::FETH),
        (pkt.atmeth().is_some(), Mask::ATMETH),
        (pkt.aeth().is_some(), Mask::AETH),
        (pkt.atmack().is_some(), Mask::ATMACK),
        (pkt.immdt().is_some(), Mask::IMMDT),
        (pkt.ieth().is_some(), Mask::IETH),
    ] {
        assert_eq!(present, mask.intersects(m), "{}", info.name());
    }
    assert_eq!(pkt.icrc().to_le_bytes(), bytes[len - 4..]);
}

/// Random bytes, biased towards a plausible BTH so that many are accepted.
fn random_packet(rng: &mut Rng) -> Vec<u8> {
    let len = match rng.below(8) {
        0 => rng.below(12),
        1 => rng.below(2000),
        _ => rng.below(80),
    };
    let mut bytes = rng.bytes(len);
    if len >= 12 && rng.below(4) != 0 {
        bytes[0] = OPCODES[rng.below(OPCODES.len())].opcode();
        bytes[1] &= 0xf0;
        if bytes[5..8] == [0, 0, 0] {
            bytes[7] = 1;
        }
    }
    bytes
}

#[test]
fn parser_never_panics_on_random_bytes() {
    let mut rng = Rng::seeded("parser_never_panics_on_random_bytes", 0x5eed_f001);
    let mut accepted = 0;
    for _ in 0..100_000 {
        let bytes = random_packet(&mut rng);
        if let Ok(pkt) = Packet::parse(&bytes) {
            check_accepted(&bytes, &pkt);
            accepted += 1;
        }
    }
    println!("accepted {accepted} of 100000");
    assert!(accepted > 5_000, "the bias should yield packets to check");
}

/// One random change to a packet.
fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>) {
    match rng.below(6) {
        0 if !bytes.is_empty() => {
            let i = rng.below(bytes.len());
            bytes[i] ^= 1 << rng.below(8);
        }
        1 if !bytes.is_empty() => {
            let i = rng.below(bytes.len());
            bytes[i] = rng.u8();
        }
        2 => bytes.truncate(rng.below(bytes.len() + 1)),
        3 => {
            let n = rng.below(8);
            bytes.extend(rng.bytes(n));
        }
        4 if !bytes.is_empty() => {
            bytes.remove(rng.below(bytes.len()));
        }
        _ => bytes.insert(rng.below(bytes.len() + 1), rng.u8()),
    }
}

fn valid_packet(rng: &mut Rng) -> Vec<u8> {
    let info = &OPCODES[rng.below(OPCODES.len())];
    let payload_len = if info.mask().intersects(Mask::PAYLOAD) { rng.below(70) } else { 0 };
    let bth = Bth {
        opcode: info.opcode(),
        ..random_bth(rng)
    };
    build(info.opcode(), &bth, &Headers::random(rng), &rng.bytes(payload_len))
}

#[test]
fn parser_and_icrc_never_panic_on_mutated_packets() {
    let mut rng = Rng::seeded("parser_and_icrc_never_panic_on_mutated_packets", 0x5eed_f002);
    for _ in 0..20_000 {
        let mut bytes = valid_packet(&mut rng);
        for _ in 0..=rng.below(4) {
            mutate(&mut rng, &mut bytes);
        }
        // Random IP headers too, of either version.
        let mut ip = rng.bytes(40);
        ip[0] = if rng.bool() { 0x45 } else { 0x60 };
        let ip = IpHdr::parse(&ip).unwrap();
        let udp: [u8; 8] = rng.bytes(8).try_into().unwrap();
        let _ = icrc_contiguous(crc32_le, ip, &udp, &bytes);
        let info = &OPCODES[rng.below(OPCODES.len())];
        let _ = icrc(crc32_le, ip, &udp, &bytes, info);
        if let Ok(pkt) = Packet::parse(&bytes) {
            check_accepted(&bytes, &pkt);
            let _ = pkt.icrc_ok(crc32_le, ip, &udp);
        }
    }
}

#[test]
fn icrc_catches_every_single_bit_flip() {
    let mut rng = Rng::seeded("icrc_catches_every_single_bit_flip", 0x5eed_f003);
    for _ in 0..3_000 {
        let mut bytes = valid_packet(&mut rng);
        let (ip, udp) = super::icrc::ipv4_udp(bytes.len());
        let ip = IpHdr::V4(&ip);
        // Any bit but FECN/BECN/resv6a (masked) and the ICRC itself.
        let byte = loop {
            let b = rng.below(bytes.len() - ICRC_LEN);
            if b != 4 {
                break b;
            }
        };
        bytes[byte] ^= 1 << rng.below(8);
        if let Ok(pkt) = Packet::parse(&bytes) {
            assert!(!pkt.icrc_ok(crc32_le, ip, &udp), "flip in byte {byte} not caught");
        }
    }
}

#[test]
fn builder_never_panics() {
    let mut rng = Rng::seeded("builder_never_panics", 0x5eed_f004);
    let mut buf = vec![0u8; MAX_PKT_LEN + 8];
    for _ in 0..20_000 {
        let opcode = rng.u8();
        let payload_len = match rng.below(4) {
            0 => rng.u64() as usize,
            1 => MAX_PKT_LEN - rng.below(64),
            _ => rng.below(300),
        };
        let Ok(layout) = Layout::new(opcode, payload_len) else {
            continue;
        };
        assert!(layout.len() <= MAX_PKT_LEN);
        let buf_len = layout.len() + rng.below(8) - 4;
        let bth = random_bth(&mut rng);
        match PacketMut::new(&mut buf[..buf_len], layout, &bth) {
            Err(e) => assert_eq!(
                e,
                BuildError::BufferTooSmall {
                    need: layout.len(),
                    len: buf_len
                }
            ),
            Ok(mut pkt) => {
                assert_eq!(pkt.bytes().len(), layout.len());
                assert_eq!(pkt.payload_mut().len(), payload_len);
                let _ = pkt.set(&crate::rxe_wire::ext::Reth::default());
                let _ = pkt.set(&crate::rxe_wire::ext::Aeth::default());
                let (ip, udp) = super::icrc::ipv4_udp(layout.len());
                // The ICRC of the largest packets only now and then: the
                // tests run unoptimised.
                let with_icrc = layout.len() < 4096 || rng.below(64) == 0;
                if with_icrc {
                    pkt.write_icrc(crc32_le, IpHdr::V4(&ip), &udp);
                }
                let pkt = pkt.finish().expect("a built packet parses");
                check_accepted(pkt.bytes(), &pkt);
                assert_eq!(pkt.info().offset(HdrType::Payload), Some(pkt.info().header_len()));
                assert!(!with_icrc || pkt.icrc_ok(crc32_le, IpHdr::V4(&ip), &udp));
            }
        }
    }
}
