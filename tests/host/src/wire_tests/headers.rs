// SPDX-License-Identifier: GPL-2.0

//! Each header's layout against hand-made bytes (IBTA bit positions), and
//! encode/decode round trips.

use crate::rxe_wire::{
    bth::*,
    ext::*, //
};

#[test]
fn bth_fields_at_their_bits() {
    let bytes = [
        0x0a, // RC RDMA WRITE ONLY
        0xb0, // SE, pad 3, tver 0
        0x12, 0x34, // P_Key
        0x80, 0xab, 0xcd, 0xef, // FECN, QPN
        0x80, 0x01, 0x02, 0x03, // AckReq, PSN
    ];
    let bth = Bth::decode(&bytes);
    assert_eq!(
        bth,
        Bth {
            opcode: 0x0a,
            se: true,
            mig: false,
            pad: 3,
            tver: 0,
            pkey: 0x1234,
            fecn: true,
            becn: false,
            qpn: 0xab_cdef,
            ack_req: true,
            psn: 0x01_0203,
        }
    );
    let mut out = [0u8; BTH_LEN];
    bth.encode(&mut out);
    assert_eq!(out, bytes);
}

#[test]
fn bth_each_flag_alone() {
    let one = |f: fn(&mut Bth)| {
        let mut bth = Bth::default();
        f(&mut bth);
        let mut out = [0u8; BTH_LEN];
        bth.encode(&mut out);
        assert_eq!(Bth::decode(&out), bth);
        out
    };
    assert_eq!(one(|b| b.se = true)[1], 0x80);
    assert_eq!(one(|b| b.mig = true)[1], 0x40);
    assert_eq!(one(|b| b.pad = 1)[1], 0x10);
    assert_eq!(one(|b| b.pad = 2)[1], 0x20);
    assert_eq!(one(|b| b.tver = 0xf)[1], 0x0f);
    assert_eq!(one(|b| b.fecn = true)[4], 0x80);
    assert_eq!(one(|b| b.becn = true)[4], 0x40);
    assert_eq!(one(|b| b.ack_req = true)[8], 0x80);
    assert_eq!(&one(|b| b.qpn = 1)[4..8], &[0, 0, 0, 1]);
    assert_eq!(&one(|b| b.psn = 1)[8..12], &[0, 0, 0, 1]);
}

#[test]
fn bth_ignores_reserved_bits_and_truncates_wide_fields() {
    // resv6a (byte 4, bits 5-0) and resv7 (byte 8, bits 6-0) all ones.
    let bytes = [0x04, 0, 0xff, 0xff, 0x3f, 0, 0, 7, 0x7f, 0, 0, 9];
    let bth = Bth::decode(&bytes);
    assert!(!bth.fecn && !bth.becn && !bth.ack_req);
    assert_eq!((bth.qpn, bth.psn), (7, 9));
    let mut out = [0u8; BTH_LEN];
    bth.encode(&mut out);
    assert_eq!(out, [0x04, 0, 0xff, 0xff, 0, 0, 0, 7, 0, 0, 0, 9]);

    let wide = Bth {
        pad: 0xff,
        tver: 0xff,
        qpn: u32::MAX,
        psn: u32::MAX,
        ..Bth::default()
    };
    wide.encode(&mut out);
    assert_eq!(out, [0, 0x3f, 0, 0, 0, 0xff, 0xff, 0xff, 0, 0xff, 0xff, 0xff]);
}

#[test]
fn bth_new_is_what_c_bth_init_sends() {
    let bth = Bth::new(0x04, 0x2345_6789, 0xff00_0001);
    assert_eq!((bth.pkey, bth.tver), (BTH_DEF_PKEY, BTH_TVER));
    assert_eq!((bth.qpn, bth.psn), (0x45_6789, 1));
}

#[test]
fn bth_read_write_need_twelve_bytes() {
    assert_eq!(Bth::read(&[0; 11]), None);
    assert!(Bth::read(&[0; 12]).is_some());
    assert_eq!(Bth::default().write(&mut [0; 11]), None);
    assert_eq!(Bth::default().write(&mut [0; 13]), Some(()));
}

/// Decodes `bytes`, checks the value, and encodes it back to `bytes`.
fn check<H: ExtHeader + PartialEq + core::fmt::Debug>(bytes: &[u8], expected: H) {
    assert_eq!(bytes.len(), H::LEN);
    assert_eq!(H::read(bytes), Some(expected));
    assert_eq!(H::read(&bytes[..H::LEN - 1]), None);
    let mut out = vec![0xa5; H::LEN + 3];
    assert_eq!(expected.write(&mut out), Some(()));
    assert_eq!(&out[..H::LEN], bytes);
    assert_eq!(&out[H::LEN..], &[0xa5; 3], "wrote past the header");
    assert_eq!(expected.write(&mut out[..H::LEN - 1]), None);
}

#[test]
fn reth() {
    check(
        &[1, 2, 3, 4, 5, 6, 7, 8, 0xa, 0xb, 0xc, 0xd, 0, 0, 0x10, 0],
        Reth {
            va: 0x0102_0304_0506_0708,
            rkey: 0x0a0b_0c0d,
            len: 4096,
        },
    );
}

#[test]
fn aeth() {
    check(
        &[0x1f, 0x12, 0x34, 0x56],
        Aeth {
            syn: syndrome::ACK_UNLIMITED,
            msn: 0x12_3456,
        },
    );
    let aeth = Aeth {
        syn: syndrome::NAK_REM_ACC_ERR,
        msn: 0xff_ff_ffff,
    };
    let mut out = [0; AETH_LEN];
    aeth.encode(&mut out);
    assert_eq!(out, [0x62, 0xff, 0xff, 0xff]);
    assert_eq!(aeth.syn_type(), syndrome::NAK);
    assert_eq!(Aeth::decode(&[0x25, 0, 0, 0]).syn_type(), syndrome::RNR_NAK);
    assert_eq!(Aeth::decode(&[0x25, 0, 0, 0]).syn & syndrome::VALUE_MASK, 5);
}

#[test]
fn atmeth() {
    check(
        &[
            0, 0, 0, 0, 0, 0, 0x10, 0, // va
            0xde, 0xad, 0xbe, 0xef, // rkey
            0, 0, 0, 0, 0, 0, 0, 1, // swap/add
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, // compare
        ],
        Atmeth {
            va: 0x1000,
            rkey: 0xdead_beef,
            swap_add: 1,
            comp: u64::MAX - 1,
        },
    );
}

#[test]
fn atmack() {
    check(
        &[0x80, 0, 0, 0, 0, 0, 0, 0x2a],
        Atmack {
            orig: 0x8000_0000_0000_002a,
        },
    );
}

#[test]
fn immdt_is_network_order() {
    check(&[0x11, 0x22, 0x33, 0x44], Immdt { imm: 0x1122_3344 });
    // A work request's __be32 imm_data goes on the wire byte for byte.
    let wr_imm_data = u32::from_ne_bytes([0x11, 0x22, 0x33, 0x44]);
    assert_eq!(u32::from_be(wr_imm_data), 0x1122_3344);
}

#[test]
fn ieth() {
    check(&[0, 0, 0x12, 0x34], Ieth { rkey: 0x1234 });
}

#[test]
fn deth() {
    check(
        &[0x80, 0x01, 0, 0, 0, 0, 0, 1],
        Deth {
            qkey: GSI_QKEY,
            sqp: 1,
        },
    );
    // The byte before the source QP is reserved.
    assert_eq!(Deth::decode(&[0, 0, 0, 0, 0xff, 0, 0, 2]).sqp, 2);
    let mut out = [0; DETH_LEN];
    Deth { qkey: 0, sqp: u32::MAX }.encode(&mut out);
    assert_eq!(out, [0, 0, 0, 0, 0, 0xff, 0xff, 0xff]);
}

#[test]
fn rdeth() {
    check(&[0, 0xab, 0xcd, 0xef], Rdeth { een: 0xab_cdef });
    assert_eq!(Rdeth::decode(&[0xff, 0, 0, 1]).een, 1);
}

#[test]
fn feth() {
    // C feth_init(type, level): level in bits 5-4, type in bits 3-0.
    check(&[0, 0, 0, 0x21], Feth { plt: 1, sel: 2 });
    assert_eq!(Feth::decode(&[0xff, 0xff, 0xff, 0xff]), Feth { plt: 0xf, sel: 3 });
    let mut out = [0; FETH_LEN];
    Feth { plt: 0xff, sel: 0xff }.encode(&mut out);
    assert_eq!(out, [0, 0, 0, 0x3f]);
}
