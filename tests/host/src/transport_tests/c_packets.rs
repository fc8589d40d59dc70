// SPDX-License-Identifier: GPL-2.0

//! The transport's packet builders and readers against packets the C rxe
//! driver sent (the captures of `wire_tests/c_capture.rs`): from the
//! fields a capture carries, the requester's plan and `write_request`, and
//! the responder's `acknowledge`/`read_response` and `write_ack`, rebuild
//! its bytes exactly (the ICRC aside, which `wire_tests` checks); and
//! `ReqPkt::from_packet`/`Resp::from_packet` read them.

use crate::qp_attr::QpType::Rc;
use crate::rxe_comp_check::Resp;
use crate::rxe_req_plan::*;
use crate::rxe_resp_check::*;
use crate::rxe_wire::ext::syndrome::ACK_UNLIMITED;
use crate::rxe_wire::opcode::code::*;
use crate::rxe_wire::packet::{Layout, Packet, PacketMut};
use crate::rxe_wqe::{opcode as wr, wr_opcode_mask};

const C_RC_SEND_ONLY: &str = "450000949798400040111ebdc0000202c0000201c12112b7008000000430ffff00\
00001180e99efa7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b\
7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b\
7b7b7b7b7b7b7b7b0000008abc2d21";
const C_RC_RDMA_WRITE_ONLY: &str = "4500007c51be4000401164afc0000202c0000201c16912b7006800000a30ffff\
0000001380f8ebba000055c89b41b0000000044d0000003dc0f81c7372dd5203e45aaf1cee6d421b30a381d94d6e1b0041f6\
8f183a004bfaf8686d6b45bf6e2a191d46078a8922bb2ca4947912b07953a6086be008000000f5935621";
const C_RC_ACKNOWLEDGE: &str =
    "45000030fe1340004011b8a5c0000201c0000202c16912b7001c00001100ffff00000\
01300f8ebba1f00000129854144";
const C_RC_RDMA_READ_REQUEST: &str =
    "4500003c5227400040116486c0000202c0000201c19012b7002800000c00ffff\
000000148006a59b000055e0e012d000000005c50000003db03ab7c5";
const C_RC_RDMA_READ_RESPONSE_ONLY: &str = "45000070ff9a40004011b6dec0000201c0000202c19012b7005c000010\
30ffff000000140006a59b1f000001fd14f8b8df827af2df7e14289b1557df31a20c57004a77868c9d0f93e35097e0648f98\
44121236f1904a192b5f700a901216e713605f99ecfca87fdff9000000a9e4ecb9";
const C_RC_FETCH_ADD: &str =
    "45000048546440004011623dc0000202c0000201c1b912b7003400001400ffff000000\
15804ab86100005567d81280000000062200000000000000010000000000000000df3c94b8";
const C_RC_ATOMIC_ACKNOWLEDGE: &str =
    "45000038001640004011b69bc0000201c0000202c1b912b7002400001200ff\
ff00000015004ab8611f000001cd94cb7130a2425d0041ed99";

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// The RoCE packet of a captured IPv4 frame.
fn roce(hex: &str) -> Vec<u8> {
    let frame = unhex(hex);
    let udp_len = usize::from(u16::from_be_bytes([frame[24], frame[25]]));
    frame[28..20 + udp_len].to_vec()
}

/// Plans the only packet of a `wr_op` WQE of `len` bytes at the captured
/// PSN and builds it with `f`; compares with the capture.
fn rebuild_request(hex: &str, wr_op: u32, len: u32, f: impl Fn(&Packet<'_>) -> ReqFields) {
    let bytes = roce(hex);
    let c = Packet::parse(&bytes).unwrap();
    let view = SendView {
        wr_op,
        send_flags: SEND_SIGNALED,
        wr_mask: wr_opcode_mask(wr_op, Rc),
        resid: len,
        first_psn: 0,
        num_sge: 1,
        cur_sge: 0,
        has_rd_atomic: false,
    };
    let q = ReqView {
        t: Rc,
        mtu: 1024,
        max_sge: 1,
        at_head: true,
        rd_atomic_free: 1,
        max_rd_atomic: 1,
        psn: c.psn(),
        comp_psn: c.psn(),
        prev_opcode: None,
        skb_out_high: false,
    };
    let mut flags = ReqFlags::default();
    let ReqStep::Packet(p) = plan(&view, &q, &mut flags, || true) else {
        panic!("no packet");
    };
    assert_eq!(p.opcode, c.opcode());
    let layout = Layout::new(p.opcode, p.payload as usize).unwrap();
    let mut buf = vec![0u8; layout.len()];
    let mut out = PacketMut::new(&mut buf, layout, c.bth()).unwrap();
    write_request(&mut out, &p, &f(&c)).unwrap();
    out.payload_mut().copy_from_slice(c.payload());
    let n = bytes.len() - 4;
    assert_eq!(&out.bytes()[..n], &bytes[..n], "{}", c.info().name());

    // The responder reads back what the requester meant.
    let r = ReqPkt::from_packet(&c);
    assert_eq!(
        (r.psn, r.opcode, r.payload, r.ack_req),
        (p.psn, p.opcode, p.payload, true)
    );
}

#[test]
fn requests_as_the_c_driver_sends_them() {
    rebuild_request(C_RC_SEND_ONLY, wr::SEND, 101, |c| ReqFields {
        dest_qpn: c.qpn(),
        ..ReqFields::default()
    });
    let remote = |c: &Packet<'_>| {
        let reth = c.reth().unwrap();
        ReqFields {
            dest_qpn: c.qpn(),
            rkey: reth.rkey,
            iova: reth.va,
            resid: 61,
            ..ReqFields::default()
        }
    };
    rebuild_request(C_RC_RDMA_WRITE_ONLY, wr::RDMA_WRITE, 61, remote);
    rebuild_request(C_RC_RDMA_READ_REQUEST, wr::RDMA_READ, 61, remote);
    rebuild_request(C_RC_FETCH_ADD, wr::ATOMIC_FETCH_AND_ADD, 8, |c| {
        let a = c.atmeth().unwrap();
        ReqFields {
            dest_qpn: c.qpn(),
            rkey: a.rkey,
            iova: a.va,
            compare_add: a.swap_add,
            swap: 0xdead,
            ..ReqFields::default()
        }
    });
}

/// Builds an acknowledgement-like packet as the responder does and
/// compares it with the capture.
fn rebuild_ack(hex: &str, ack: &Ack, msn: u32, orig: u64, payload: &[u8]) -> Resp {
    let bytes = roce(hex);
    let c = Packet::parse(&bytes).unwrap();
    let layout = Layout::new(ack.opcode, payload.len()).unwrap();
    let mut buf = vec![0u8; layout.len()];
    let mut out = PacketMut::new(&mut buf, layout, c.bth()).unwrap();
    write_ack(&mut out, c.qpn(), ack, msn, orig).unwrap();
    out.payload_mut().copy_from_slice(payload);
    let n = bytes.len() - 4;
    assert_eq!(&out.bytes()[..n], &bytes[..n], "{}", c.info().name());
    Resp::from_packet(&c)
}

#[test]
fn responses_as_the_c_driver_sends_them() {
    // The ACK of the write: requested, so answered at its PSN with MSN 1.
    let w = roce(C_RC_RDMA_WRITE_ONLY);
    let write = ReqPkt::from_packet(&Packet::parse(&w).unwrap());
    let ack = acknowledge(Rc, &write, ACK_UNLIMITED).unwrap();
    let r = rebuild_ack(C_RC_ACKNOWLEDGE, &ack, 1, 0, &[]);
    assert_eq!(
        (r.opcode, r.psn, r.syn),
        (RC_ACKNOWLEDGE, write.psn, ACK_UNLIMITED)
    );

    // The read's only response.
    let rq = roce(C_RC_RDMA_READ_REQUEST);
    let read = ReqPkt::from_packet(&Packet::parse(&rq).unwrap());
    let reth = read.reth.unwrap();
    let res = ReplayRes::read(read.psn, reth.va, reth.rkey, reth.len, 1024);
    let rr = read_response(&res, 1024);
    assert_eq!((rr.opcode, rr.payload), (RC_RDMA_READ_RESPONSE_ONLY, 61));
    let bytes = roce(C_RC_RDMA_READ_RESPONSE_ONLY);
    let c = Packet::parse(&bytes).unwrap();
    let layout = Layout::new(rr.opcode, 61).unwrap();
    let mut buf = vec![0u8; layout.len()];
    let mut out = PacketMut::new(&mut buf, layout, c.bth()).unwrap();
    write_read_response(&mut out, c.qpn(), &rr, 1).unwrap();
    out.payload_mut().copy_from_slice(c.payload());
    let n = bytes.len() - 4;
    assert_eq!(&out.bytes()[..n], &bytes[..n]);

    // The fetch-and-add's ATOMIC ACKNOWLEDGE with the value found.
    let fa = roce(C_RC_FETCH_ADD);
    let add = ReqPkt::from_packet(&Packet::parse(&fa).unwrap());
    assert!(add.atmeth.is_some());
    let ack = acknowledge(Rc, &add, ACK_UNLIMITED).unwrap();
    let bytes = roce(C_RC_ATOMIC_ACKNOWLEDGE);
    let orig = Packet::parse(&bytes).unwrap().atmack().unwrap().orig;
    let r = rebuild_ack(C_RC_ATOMIC_ACKNOWLEDGE, &ack, 1, orig, &[]);
    assert_eq!((r.opcode, r.psn), (RC_ATOMIC_ACKNOWLEDGE, add.psn));
}

/// Builds `p` with `f` and parses it back.
fn roundtrip(p: &PacketPlan, f: &ReqFields) -> ReqPkt {
    let layout = Layout::new(p.opcode, p.payload as usize).unwrap();
    let mut buf = vec![0u8; layout.len()];
    let bth = crate::rxe_wire::bth::Bth::new(p.opcode, 1, 0);
    let mut out = PacketMut::new(&mut buf, layout, &bth).unwrap();
    write_request(&mut out, p, f).unwrap();
    let pkt = out.finish().unwrap();
    assert_eq!(pkt.qpn(), f.dest_qpn);
    assert_eq!(pkt.bth().se, p.solicited);
    ReqPkt::from_packet(&pkt)
}

fn plan_of(opcode: u8, payload: u32) -> PacketPlan {
    PacketPlan {
        opcode,
        mask: crate::rxe_wire::opcode::lookup(opcode).unwrap().mask(),
        psn: 0xab_cdef,
        payload,
        ack_req: true,
        solicited: true,
        took_rd_atomic: false,
    }
}

#[test]
fn every_request_header_round_trips() {
    let f = ReqFields {
        dest_qpn: 0x12_3456,
        rkey: 0x1111,
        iova: 0x7f00_0000_1000,
        resid: 4000,
        imm: 0xdead_beef,
        inv_rkey: 0x2222,
        compare_add: 5,
        swap: 6,
        flush_type: 2,
        flush_level: 1,
    };
    let r = roundtrip(&plan_of(RC_SEND_ONLY_WITH_IMMEDIATE, 3), &f);
    assert_eq!((r.psn, r.payload, r.pad), (0xab_cdef, 3, 1));
    let r = roundtrip(&plan_of(RC_SEND_LAST_WITH_INVALIDATE, 4), &f);
    assert_eq!(r.inv_rkey, Some(0x2222));
    let r = roundtrip(&plan_of(RC_RDMA_WRITE_FIRST, 1024), &f);
    let reth = r.reth.unwrap();
    assert_eq!((reth.va, reth.rkey, reth.len), (f.iova, 0x1111, 4000));
    let r = roundtrip(&plan_of(RC_COMPARE_SWAP, 0), &f);
    let a = r.atmeth.unwrap();
    assert_eq!((a.va, a.rkey, a.comp, a.swap_add), (f.iova, 0x1111, 5, 6));
    let r = roundtrip(&plan_of(RC_FETCH_ADD, 0), &f);
    let a = r.atmeth.unwrap();
    assert_eq!((a.comp, a.swap_add), (0, 5));
    let r = roundtrip(&plan_of(RC_FLUSH, 0), &f);
    assert_eq!((r.flush_type, r.flush_level), (2, 1));
    assert!(r.reth.is_some());
    let r = roundtrip(&plan_of(UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 8), &f);
    assert_eq!(r.reth.unwrap().len, 4000);
}
