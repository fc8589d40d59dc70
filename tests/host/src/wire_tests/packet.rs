// SPDX-License-Identifier: GPL-2.0

//! Whole packets: build → parse round trips for every opcode of the table,
//! and each refusal of the parser and of the builder.

use super::{
    crc::crc32_le,
    rng::Rng, //
};
use crate::rxe_wire::{
    bth::Bth,
    ext::*,
    icrc::IpHdr,
    opcode::{
        code,
        lookup,
        HdrType,
        Mask,
        OPCODES, //
    },
    packet::*,
};

/// Random values for every extension header.
pub struct Headers {
    pub rdeth: Rdeth,
    pub deth: Deth,
    pub reth: Reth,
    pub feth: Feth,
    pub atmeth: Atmeth,
    pub aeth: Aeth,
    pub atmack: Atmack,
    pub immdt: Immdt,
    pub ieth: Ieth,
}

impl Headers {
    pub fn random(rng: &mut Rng) -> Self {
        Self {
            rdeth: Rdeth { een: rng.u32() & 0xff_ffff },
            deth: Deth {
                qkey: rng.u32(),
                sqp: rng.u32() & 0xff_ffff,
            },
            reth: Reth {
                va: rng.u64(),
                rkey: rng.u32(),
                len: rng.u32(),
            },
            feth: Feth {
                plt: rng.u8() & 0xf,
                sel: rng.u8() & 3,
            },
            atmeth: Atmeth {
                va: rng.u64(),
                rkey: rng.u32(),
                swap_add: rng.u64(),
                comp: rng.u64(),
            },
            aeth: Aeth {
                syn: rng.u8(),
                msn: rng.u32() & 0xff_ffff,
            },
            atmack: Atmack { orig: rng.u64() },
            immdt: Immdt { imm: rng.u32() },
            ieth: Ieth { rkey: rng.u32() },
        }
    }
}

pub fn random_bth(rng: &mut Rng) -> Bth {
    Bth {
        se: rng.bool(),
        mig: rng.bool(),
        pkey: rng.u32() as u16,
        fecn: rng.bool(),
        becn: rng.bool(),
        ack_req: rng.bool(),
        ..Bth::new(0, 1 + rng.u32() % 0xff_fffe, rng.u32())
    }
}

/// Builds an `opcode` packet with every header it carries set from `h` and
/// a payload of `payload`, ICRC included (IPv4, fixed addresses).
pub fn build(opcode: u8, bth: &Bth, h: &Headers, payload: &[u8]) -> Vec<u8> {
    let layout = Layout::new(opcode, payload.len()).unwrap();
    let mut buf = vec![0xee; layout.len() + 7];
    let mut pkt = PacketMut::new(&mut buf, layout, bth).unwrap();
    let mask = layout.info().mask();
    let set = |r: Result<(), BuildError>, m: Mask| assert_eq!(r.is_ok(), mask.intersects(m));
    set(pkt.set(&h.rdeth), Mask::RDETH);
    set(pkt.set(&h.deth), Mask::DETH);
    set(pkt.set(&h.reth), Mask::RETH);
    set(pkt.set(&h.feth), Mask::FETH);
    set(pkt.set(&h.atmeth), Mask::ATMETH);
    set(pkt.set(&h.aeth), Mask::AETH);
    set(pkt.set(&h.atmack), Mask::ATMACK);
    set(pkt.set(&h.immdt), Mask::IMMDT);
    set(pkt.set(&h.ieth), Mask::IETH);
    pkt.payload_mut().copy_from_slice(payload);
    let (ip, udp) = super::icrc::ipv4_udp(layout.len());
    pkt.write_icrc(crc32_le, IpHdr::V4(&ip), &udp);
    assert!(buf[layout.len()..].iter().all(|&b| b == 0xee), "wrote past the packet");
    buf.truncate(layout.len());
    buf
}

fn payload_lens(info_mask: Mask) -> &'static [usize] {
    if info_mask.intersects(Mask::PAYLOAD) {
        &[0, 1, 2, 3, 4, 5, 7, 255, 1024, 4096]
    } else {
        &[0]
    }
}

#[test]
fn round_trip_every_opcode() {
    let mut rng = Rng::seeded("round_trip_every_opcode", 0x5eed_0001);
    for info in &OPCODES {
        for &payload_len in payload_lens(info.mask()) {
            let bth = Bth {
                opcode: info.opcode(),
                ..random_bth(&mut rng)
            };
            let h = Headers::random(&mut rng);
            let payload = rng.bytes(payload_len);
            let bytes = build(info.opcode(), &bth, &h, &payload);

            let pad = (4 - payload_len % 4) % 4;
            assert_eq!(bytes.len(), info.header_len() + payload_len + pad + ICRC_LEN);
            let pkt = Packet::parse(&bytes).unwrap();
            let name = info.name();
            assert_eq!(pkt.info(), info);
            assert_eq!(
                *pkt.bth(),
                Bth {
                    pad: pad as u8,
                    ..bth
                },
                "{name}"
            );
            assert_eq!(pkt.payload(), &payload[..], "{name}");
            let mask = info.mask();
            let want = |m: Mask| mask.intersects(m);
            assert_eq!(pkt.rdeth(), want(Mask::RDETH).then_some(h.rdeth), "{name}");
            assert_eq!(pkt.deth(), want(Mask::DETH).then_some(h.deth), "{name}");
            assert_eq!(pkt.reth(), want(Mask::RETH).then_some(h.reth), "{name}");
            assert_eq!(pkt.feth(), want(Mask::FETH).then_some(h.feth), "{name}");
            assert_eq!(pkt.atmeth(), want(Mask::ATMETH).then_some(h.atmeth), "{name}");
            assert_eq!(pkt.aeth(), want(Mask::AETH).then_some(h.aeth), "{name}");
            assert_eq!(pkt.atmack(), want(Mask::ATMACK).then_some(h.atmack), "{name}");
            assert_eq!(pkt.immdt(), want(Mask::IMMDT).then_some(h.immdt), "{name}");
            assert_eq!(pkt.ieth(), want(Mask::IETH).then_some(h.ieth), "{name}");
            // Pad bytes are zero, as the C driver sends them.
            let pad_at = bytes.len() - ICRC_LEN - pad;
            assert!(bytes[pad_at..bytes.len() - ICRC_LEN].iter().all(|&b| b == 0));
            let (ip, udp) = super::icrc::ipv4_udp(bytes.len());
            assert!(pkt.icrc_ok(crc32_le, IpHdr::V4(&ip), &udp), "{name}");
        }
    }
}

#[test]
fn builder_ignores_the_callers_opcode_and_pad() {
    let layout = Layout::new(code::RC_SEND_ONLY, 5).unwrap();
    assert_eq!((layout.pad(), layout.len()), (3, 12 + 5 + 3 + 4));
    let mut buf = [0xff; 64];
    let bth = Bth {
        pad: 0,
        ..Bth::new(code::RC_ACKNOWLEDGE, 17, 0)
    };
    let pkt = PacketMut::new(&mut buf, layout, &bth).unwrap();
    let pkt = pkt.finish().unwrap();
    assert_eq!((pkt.opcode(), pkt.bth().pad), (code::RC_SEND_ONLY, 3));
    // The payload was left as it was; the pad and the ICRC were zeroed.
    assert_eq!(pkt.payload(), &[0xff; 5]);
    assert_eq!(&pkt.bytes()[17..], &[0; 7]);
}

#[test]
fn builder_refusals() {
    assert_eq!(Layout::new(0x15, 0), Err(BuildError::UnknownOpcode(0x15)));
    assert_eq!(
        Layout::new(code::RC_ACKNOWLEDGE, 1),
        Err(BuildError::UnexpectedPayload {
            opcode: code::RC_ACKNOWLEDGE
        })
    );
    assert!(Layout::new(code::RC_ACKNOWLEDGE, 0).is_ok());
    // The largest packet fits a UDP datagram; one byte more, padded, does
    // not.
    let max = (MAX_PKT_LEN - 12 - ICRC_LEN) & !3;
    assert_eq!(Layout::new(code::RC_SEND_ONLY, max).unwrap().len(), MAX_PKT_LEN - 3);
    for len in [max + 1, usize::MAX - 3, usize::MAX] {
        assert_eq!(
            Layout::new(code::RC_SEND_ONLY, len),
            Err(BuildError::TooLong { payload_len: len })
        );
    }
    let layout = Layout::new(code::RC_RDMA_WRITE_FIRST, 8).unwrap();
    let mut short = [0u8; 12 + 16 + 8 + 3];
    assert_eq!(
        PacketMut::new(&mut short, layout, &Bth::default()).err(),
        Some(BuildError::BufferTooSmall { need: 40, len: 39 })
    );
    let mut buf = [0u8; 40];
    let mut pkt = PacketMut::new(&mut buf, layout, &Bth::default()).unwrap();
    assert_eq!(
        pkt.set(&Aeth::default()),
        Err(BuildError::NoSuchHeader {
            opcode: code::RC_RDMA_WRITE_FIRST,
            hdr: HdrType::Aeth
        })
    );
    // QPN 0 is built but refused by the receiver's checks.
    assert_eq!(pkt.finish().err(), Some(ParseError::ZeroQpn));
}

/// A valid RC SEND ONLY of `payload_len` bytes, QPN 17, ICRC left zero.
fn send_only(payload_len: usize) -> Vec<u8> {
    let layout = Layout::new(code::RC_SEND_ONLY, payload_len).unwrap();
    let mut buf = vec![0; layout.len()];
    PacketMut::new(&mut buf, layout, &Bth::new(code::RC_SEND_ONLY, 17, 0)).unwrap();
    buf
}

#[test]
fn parser_refusals_in_c_order() {
    assert_eq!(Packet::parse(&[]).err(), Some(ParseError::NoBth { len: 0 }));
    assert_eq!(Packet::parse(&[0; 11]).err(), Some(ParseError::NoBth { len: 11 }));

    let mut bytes = send_only(0);
    bytes[0] = 0x15; // reserved RC opcode
    assert_eq!(Packet::parse(&bytes).err(), Some(ParseError::UnknownOpcode(0x15)));
    bytes[0] = 0x81; // CNP: not rxe's
    assert_eq!(Packet::parse(&bytes).err(), Some(ParseError::UnknownOpcode(0x81)));

    // A BTH alone is 4 bytes short of the ICRC.
    let bytes = send_only(0);
    assert_eq!(
        Packet::parse(&bytes[..12]).err(),
        Some(ParseError::Truncated {
            opcode: code::RC_SEND_ONLY,
            need: 16,
            len: 12
        })
    );
    // The pad count must fit too.
    let mut bytes = send_only(0);
    bytes[1] |= 0x30;
    assert_eq!(
        Packet::parse(&bytes).err(),
        Some(ParseError::Truncated {
            opcode: code::RC_SEND_ONLY,
            need: 19,
            len: 16
        })
    );
    // Headers first: an RDMA WRITE FIRST needs its RETH.
    let mut bytes = send_only(16);
    bytes[0] = code::RC_RDMA_WRITE_FIRST;
    assert!(Packet::parse(&bytes).is_ok());
    assert!(matches!(
        Packet::parse(&bytes[..31]),
        Err(ParseError::Truncated { need: 32, .. })
    ));

    let mut bytes = send_only(0);
    bytes[1] = 0x01;
    assert_eq!(Packet::parse(&bytes).err(), Some(ParseError::BadTver(1)));
    // Length is checked before the version, as in the C driver.
    assert!(matches!(
        Packet::parse(&bytes[..15]),
        Err(ParseError::Truncated { .. })
    ));

    let mut bytes = send_only(0);
    bytes[7] = 0;
    assert_eq!(Packet::parse(&bytes).err(), Some(ParseError::ZeroQpn));

    let mut bytes = send_only((MAX_PKT_LEN - 16) & !3);
    bytes.resize(MAX_PKT_LEN, 0);
    assert!(Packet::parse(&bytes).is_ok());
    bytes.push(0);
    assert_eq!(
        Packet::parse(&bytes).err(),
        Some(ParseError::TooLong {
            len: MAX_PKT_LEN + 1
        })
    );
}

#[test]
fn parser_takes_extra_bytes_as_payload_as_c_does() {
    // An ACK with trailing bytes: C's payload_size() counts them and the
    // ICRC covers them; the opcode's mask says no payload is expected.
    let mut bytes = send_only(4);
    bytes[0] = code::RC_ACKNOWLEDGE;
    let pkt = Packet::parse(&bytes).unwrap();
    assert!(!pkt.mask().intersects(Mask::PAYLOAD));
    assert_eq!(pkt.payload().len(), 0);
    let mut bytes = send_only(8);
    bytes[0] = code::RC_ACKNOWLEDGE;
    assert_eq!(Packet::parse(&bytes).unwrap().payload().len(), 4);
}

#[test]
fn exact_acceptance_set() {
    // Over every opcode, pad count and length up to the largest header set
    // plus slack, the parser accepts exactly the known opcodes whose packet
    // holds the headers, the pad and the ICRC.
    for opcode in 0..=255u8 {
        for pad in 0..4u8 {
            for len in 0..80usize {
                let mut bytes = vec![0u8; len];
                if len >= 12 {
                    Bth {
                        pad,
                        ..Bth::new(opcode, 1, 0)
                    }
                    .write(&mut bytes)
                    .unwrap();
                }
                let accepted = Packet::parse(&bytes).is_ok();
                let expected = len >= 12
                    && lookup(opcode)
                        .is_some_and(|i| len >= i.header_len() + usize::from(pad) + ICRC_LEN);
                assert_eq!(accepted, expected, "opcode {opcode:#x} pad {pad} len {len}");
            }
        }
    }
}
