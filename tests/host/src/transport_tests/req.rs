// SPDX-License-Identifier: GPL-2.0

//! The requester's plan: opcodes, payloads, PSNs, ACK requests, waits and
//! retransmission rewinds.

use crate::qp_attr::QpType::{self, *};
use crate::rxe_req_plan::*;
use crate::rxe_wire::opcode::{code::*, lookup, Mask};
use crate::rxe_wire::psn::psn_add;
use crate::rxe_wqe::{opcode as wr, wr_mask, wr_opcode_mask};

/// One packet of a segmented message.
#[derive(Debug, PartialEq, Eq)]
struct Pkt {
    opcode: u8,
    payload: u32,
    psn: u32,
    ack: bool,
}

/// Sends a whole WQE as the requester does, packet by packet; returns the
/// packets, the WQE's PSNs and the requester's next PSN.
fn segment(t: QpType, wr_op: u32, len: u32, mtu: u32, psn: u32) -> (Vec<Pkt>, (u32, u32), u32) {
    let mut flags = ReqFlags::default();
    let mut prev = None;
    let mut resid = len;
    let mut req_psn = psn;
    let mut first = 0;
    let mut wqe_psns = (0, 0);
    let mut out = Vec::new();
    loop {
        let op = next_opcode(t, wr_op, prev, resid, mtu).expect("opcode");
        let mask = lookup(op).expect("known opcode").mask();
        let Payload::Bytes(p) = payload_len(t, mask, resid, mtu) else {
            panic!("too long");
        };
        let ack = ack_req(t, mask.contains(Mask::END), &mut flags);
        out.push(Pkt {
            opcode: op,
            payload: p,
            psn: req_psn,
            ack,
        });
        let step = psn_after_packet(mask, req_psn, first, resid, mtu);
        if let Some(ps) = step.wqe_psns {
            wqe_psns = ps;
            first = ps.0;
        }
        req_psn = step.next_psn;
        resid -= p;
        prev = Some(op);
        if mask.contains(Mask::END) {
            return (out, wqe_psns, req_psn);
        }
        assert!(out.len() < 100_000);
    }
}

#[test]
fn send_segments_by_mtu() {
    let (p, psns, next) = segment(Rc, wr::SEND, 2500, 1024, 10);
    let ops: Vec<u8> = p.iter().map(|p| p.opcode).collect();
    assert_eq!(ops, [RC_SEND_FIRST, RC_SEND_MIDDLE, RC_SEND_LAST]);
    let lens: Vec<u32> = p.iter().map(|p| p.payload).collect();
    assert_eq!(lens, [1024, 1024, 452]);
    assert_eq!(psns, (10, 12));
    assert_eq!(next, 13);
    assert_eq!(
        p.iter().map(|p| p.ack).collect::<Vec<_>>(),
        [false, false, true]
    );

    // Exactly a multiple of the MTU: no empty last packet.
    let (p, psns, _) = segment(Rc, wr::SEND_WITH_IMM, 2048, 1024, 0);
    let ops: Vec<u8> = p.iter().map(|p| p.opcode).collect();
    assert_eq!(ops, [RC_SEND_FIRST, RC_SEND_LAST_WITH_IMMEDIATE]);
    assert_eq!(psns, (0, 1));

    // Empty and one-packet messages are "only".
    let (p, psns, next) = segment(Rc, wr::SEND, 0, 1024, 7);
    assert_eq!(p[0].opcode, RC_SEND_ONLY);
    assert_eq!((psns, next), ((7, 7), 8));
    let (p, _, _) = segment(Rc, wr::SEND_WITH_INV, 1024, 1024, 0);
    assert_eq!(p[0].opcode, RC_SEND_ONLY_WITH_INVALIDATE);
    let (p, _, _) = segment(Rc, wr::SEND_WITH_INV, 1025, 1024, 0);
    assert_eq!(p[1].opcode, RC_SEND_LAST_WITH_INVALIDATE);
    let (p, _, _) = segment(Rc, wr::SEND_WITH_IMM, 10, 1024, 0);
    assert_eq!(p[0].opcode, RC_SEND_ONLY_WITH_IMMEDIATE);
}

#[test]
fn writes_and_uc() {
    let (p, _, _) = segment(Rc, wr::RDMA_WRITE, 5000, 4096, 0);
    assert_eq!(
        p.iter().map(|p| p.opcode).collect::<Vec<_>>(),
        [RC_RDMA_WRITE_FIRST, RC_RDMA_WRITE_LAST]
    );
    let (p, _, _) = segment(Rc, wr::RDMA_WRITE_WITH_IMM, 9000, 4096, 0);
    assert_eq!(
        p.iter().map(|p| p.opcode).collect::<Vec<_>>(),
        [
            RC_RDMA_WRITE_FIRST,
            RC_RDMA_WRITE_MIDDLE,
            RC_RDMA_WRITE_LAST_WITH_IMMEDIATE
        ]
    );
    let (p, _, _) = segment(Rc, wr::RDMA_WRITE_WITH_IMM, 4, 4096, 0);
    assert_eq!(p[0].opcode, RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
    let (p, _, _) = segment(Rc, wr::RDMA_WRITE, 4, 4096, 0);
    assert_eq!(p[0].opcode, RC_RDMA_WRITE_ONLY);

    // UC: the same shapes, no ACK request ever.
    let (p, _, _) = segment(Uc, wr::SEND, 3000, 1024, 0);
    assert_eq!(
        p.iter().map(|p| p.opcode).collect::<Vec<_>>(),
        [UC_SEND_FIRST, UC_SEND_MIDDLE, UC_SEND_LAST]
    );
    assert!(p.iter().all(|p| !p.ack));
    let (p, _, _) = segment(Uc, wr::RDMA_WRITE_WITH_IMM, 3000, 1024, 0);
    assert_eq!(
        p.iter().map(|p| p.opcode).collect::<Vec<_>>(),
        [
            UC_RDMA_WRITE_FIRST,
            UC_RDMA_WRITE_MIDDLE,
            UC_RDMA_WRITE_LAST_WITH_IMMEDIATE
        ]
    );
    let (p, _, _) = segment(Uc, wr::SEND_WITH_IMM, 1, 1024, 0);
    assert_eq!(p[0].opcode, UC_SEND_ONLY_WITH_IMMEDIATE);
    let (p, _, _) = segment(Uc, wr::RDMA_WRITE, 1, 1024, 0);
    assert_eq!(p[0].opcode, UC_RDMA_WRITE_ONLY);
    let (p, _, _) = segment(Uc, wr::SEND_WITH_IMM, 2000, 1024, 0);
    assert_eq!(p[1].opcode, UC_SEND_LAST_WITH_IMMEDIATE);
    let (p, _, _) = segment(Uc, wr::RDMA_WRITE, 2000, 1024, 0);
    assert_eq!(p[1].opcode, UC_RDMA_WRITE_LAST);

    // What a QP type cannot send.
    assert_eq!(next_opcode(Uc, wr::RDMA_READ, None, 0, 1024), None);
    assert_eq!(next_opcode(Uc, wr::SEND_WITH_INV, None, 0, 1024), None);
    assert_eq!(next_opcode(Ud, wr::RDMA_WRITE, None, 0, 1024), None);
    assert_eq!(next_opcode(Rc, wr::LOCAL_INV, None, 0, 1024), None);
    assert_eq!(next_opcode(Rc, wr::RDMA_READ_WITH_INV, None, 0, 1024), None);
    assert_eq!(next_opcode(Rc, 0xff, None, 0, 1024), None);
}

#[test]
fn single_packet_requests() {
    assert_eq!(
        next_opcode(Rc, wr::ATOMIC_CMP_AND_SWP, None, 8, 256),
        Some(RC_COMPARE_SWAP)
    );
    assert_eq!(
        next_opcode(Rc, wr::ATOMIC_FETCH_AND_ADD, None, 8, 256),
        Some(RC_FETCH_ADD)
    );
    assert_eq!(next_opcode(Rc, wr::FLUSH, None, 0, 256), Some(RC_FLUSH));
    assert_eq!(
        next_opcode(Rc, wr::ATOMIC_WRITE, None, 8, 256),
        Some(RC_ATOMIC_WRITE)
    );
    assert_eq!(
        next_opcode(Gsi, wr::SEND, None, 9000, 256),
        Some(UD_SEND_ONLY)
    );
    assert_eq!(
        next_opcode(Ud, wr::SEND_WITH_IMM, None, 9000, 256),
        Some(UD_SEND_ONLY_WITH_IMMEDIATE)
    );
    assert_eq!(next_opcode(Ud, wr::SEND_WITH_INV, None, 0, 256), None);
}

#[test]
fn read_request_takes_a_psn_per_response() {
    // A read of 10000 bytes at MTU 4096: one request, three PSNs.
    let (p, psns, next) = segment(Rc, wr::RDMA_READ, 10000, 4096, 0xff_fffe);
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].opcode, RC_RDMA_READ_REQUEST);
    assert_eq!(p[0].payload, 0);
    assert!(p[0].ack);
    // PSNs wrap at 2^24.
    assert_eq!(psns, (0xff_fffe, 0));
    assert_eq!(next, 1);
    // An empty read still takes one.
    let (_, psns, next) = segment(Rc, wr::RDMA_READ, 0, 4096, 5);
    assert_eq!((psns, next), ((5, 5), 6));
}

#[test]
fn payloads() {
    let send = lookup(RC_SEND_FIRST).unwrap().mask();
    let read = lookup(RC_RDMA_READ_REQUEST).unwrap().mask();
    let aw = lookup(RC_ATOMIC_WRITE).unwrap().mask();
    let ud = lookup(UD_SEND_ONLY).unwrap().mask();
    assert_eq!(payload_len(Rc, send, 5000, 1024), Payload::Bytes(1024));
    assert_eq!(payload_len(Rc, send, 100, 1024), Payload::Bytes(100));
    assert_eq!(payload_len(Rc, read, 5000, 1024), Payload::Bytes(0));
    assert_eq!(payload_len(Rc, aw, 8, 1024), Payload::Bytes(8));
    assert_eq!(payload_len(Ud, ud, 1025, 1024), Payload::UdTooLong);
    assert_eq!(payload_len(Ud, ud, 1024, 1024), Payload::Bytes(1024));
    // GSI segments as the C driver does (no silent skip).
    assert_eq!(payload_len(Gsi, ud, 1025, 1024), Payload::Bytes(1024));
    let s = ud_skip(0xff_ffff);
    assert_eq!((s.psn, s.next_psn, s.opcode), (0xff_ffff, 0, UD_SEND_ONLY));
    assert_eq!(packet_mtu(Rc, 1024, 4096), 1024);
    assert_eq!(packet_mtu(Uc, 1024, 4096), 1024);
    assert_eq!(packet_mtu(Ud, 1024, 4096), 4096);
    assert_eq!(packet_mtu(Gsi, 1024, 4096), 4096);
    assert_eq!(num_packets(0, 1024), 1);
    assert_eq!(num_packets(1024, 1024), 1);
    assert_eq!(num_packets(1025, 1024), 2);
    assert_eq!(num_packets(1 << 31, 256), 1 << 23);
    assert_eq!(num_packets(5, 0), 1);
}

#[test]
fn ack_request_every_65_packets() {
    // A 100-packet send: the A bit on packet 66 (after 65 without) and on
    // the last, as the C driver's `noack_pkts++ > RXE_MAX_PKT_PER_ACK`.
    let (p, _, _) = segment(Rc, wr::RDMA_WRITE, 100 * 256, 256, 0);
    let acks: Vec<usize> = p
        .iter()
        .enumerate()
        .filter(|(_, p)| p.ack)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(acks, [65, 99]);
    // GSI asks (the C driver does), UD and UC never.
    let mut f = ReqFlags::default();
    assert!(ack_req(Gsi, true, &mut f));
    assert!(!ack_req(Ud, true, &mut f));
    assert!(!ack_req(Uc, true, &mut f));
    f.noack_pkts = 5;
    assert!(ack_req(Rc, true, &mut f));
    assert_eq!(f.noack_pkts, 0);
}

#[test]
fn solicited_event_bit() {
    let m = |op| lookup(op).unwrap().mask();
    assert!(solicited(SEND_SOLICITED, m(RC_SEND_ONLY)));
    assert!(solicited(SEND_SOLICITED, m(RC_SEND_LAST)));
    assert!(!solicited(SEND_SOLICITED, m(RC_SEND_FIRST)));
    assert!(!solicited(0, m(RC_SEND_ONLY)));
    assert!(solicited(
        SEND_SOLICITED,
        m(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE)
    ));
    assert!(!solicited(SEND_SOLICITED, m(RC_RDMA_WRITE_ONLY)));
    assert!(!solicited(SEND_SOLICITED, m(RC_RDMA_READ_REQUEST)));
}

#[test]
fn wqe_states() {
    let m = |op| lookup(op).unwrap().mask();
    assert_eq!(
        state_after_packet(Rc, m(RC_SEND_FIRST)),
        WqeState::Processing
    );
    assert_eq!(state_after_packet(Rc, m(RC_SEND_LAST)), WqeState::Pending);
    assert_eq!(
        state_after_packet(Rc, m(RC_RDMA_READ_REQUEST)),
        WqeState::Pending
    );
    assert_eq!(state_after_packet(Uc, m(UC_SEND_LAST)), WqeState::Done);
    assert_eq!(state_after_packet(Ud, m(UD_SEND_ONLY)), WqeState::Done);
    for s in [
        WqeState::Posted,
        WqeState::Processing,
        WqeState::Pending,
        WqeState::Done,
        WqeState::Error,
    ] {
        assert_eq!(WqeState::from_raw(s.as_raw()), s);
    }
    assert_eq!(WqeState::from_raw(77), WqeState::Error);
    assert_eq!(WqeState::Pending.as_raw(), 2);
}

#[test]
fn waits() {
    // The window: 256 PSNs ahead of the completer, across the wrap.
    assert_eq!(crate::params::MAX_UNACKED_PSNS, 256);
    assert!(!window_full(Rc, 256, 0));
    assert!(window_full(Rc, 257, 0));
    assert!(!window_full(Rc, 0xff, 0xff_ffff));
    assert!(window_full(Rc, 0x100, 0xff_ffff));
    assert!(!window_full(Uc, 1000, 0));
    // Fences.
    assert!(is_fenced(wr::LOCAL_INV, 0, false, 4, 4));
    assert!(!is_fenced(wr::LOCAL_INV, 0, true, 0, 4));
    assert!(is_fenced(wr::SEND, SEND_FENCE, false, 3, 4));
    assert!(!is_fenced(wr::SEND, SEND_FENCE, false, 4, 4));
    assert!(!is_fenced(wr::SEND, 0, false, 0, 4));
    // Credits.
    let m = |op| lookup(op).unwrap().mask();
    assert!(needs_rd_atomic(m(RC_RDMA_READ_REQUEST)));
    assert!(needs_rd_atomic(m(RC_COMPARE_SWAP)));
    assert!(needs_rd_atomic(m(RC_ATOMIC_WRITE)));
    assert!(!needs_rd_atomic(m(RC_SEND_ONLY)));
    assert!(!needs_rd_atomic(m(RC_RDMA_WRITE_FIRST)));
    assert!(is_inline(crate::rxe_wqe::SEND_INLINE));
}

/// The C driver's `retry_first_write_send`, step by step: the reference
/// for [`rewind`]'s closed form.
fn c_rewind_write_send(
    t: QpType,
    wr_op: u32,
    length: u32,
    npsn: u32,
    mtu: u32,
) -> (u32, Option<u8>) {
    let mut resid = length;
    let mut opcode = None;
    for _ in 0..npsn {
        let to_send = resid.min(mtu);
        opcode = next_opcode(t, wr_op, opcode, resid, mtu);
        resid -= to_send;
    }
    (resid, opcode)
}

fn wqe(state: WqeState, wr_op: u32, length: u32, resid: u32, first_psn: u32) -> RewindWqe {
    RewindWqe {
        state,
        wr_op,
        send_flags: 0,
        wr_mask: wr_opcode_mask(wr_op, Rc),
        length,
        resid,
        first_psn,
    }
}

#[test]
fn rewind_matches_c_loop() {
    for (t, op) in [
        (Rc, wr::SEND),
        (Rc, wr::RDMA_WRITE_WITH_IMM),
        (Uc, wr::SEND_WITH_IMM),
        (Rc, wr::SEND_WITH_INV),
    ] {
        for length in [0, 1, 255, 256, 257, 1000, 1024, 1025, 4096] {
            let npkts = num_packets(length, 256);
            for acked in 0..=npkts {
                let first_psn = 0xff_fffd;
                let comp_psn = psn_add(first_psn, acked);
                let mut w = wqe(WqeState::Pending, op, length, 0, first_psn);
                w.wr_mask = wr_opcode_mask(op, t);
                let RewindStep::Restart(r) = rewind(t, &w, true, comp_psn, 256) else {
                    panic!("not restarted");
                };
                let (resid, opcode) = c_rewind_write_send(t, op, length, acked, 256);
                assert_eq!(
                    (r.resid, r.prev_opcode),
                    (resid, opcode),
                    "{t:?} {op} {length} {acked}"
                );
                assert_eq!(r.skip, length - resid);
                assert_eq!(r.iova_advance, 0);
            }
        }
    }
}

#[test]
fn rewind_walk() {
    // Done WQEs are skipped, posted ones end the walk.
    assert_eq!(
        rewind(Rc, &wqe(WqeState::Done, wr::SEND, 10, 0, 0), true, 0, 256),
        RewindStep::Skip
    );
    assert_eq!(
        rewind(
            Rc,
            &wqe(WqeState::Posted, wr::SEND, 10, 10, 0),
            true,
            0,
            256
        ),
        RewindStep::Stop
    );
    // A WQE after the first restarts from its start.
    let w = wqe(WqeState::Pending, wr::SEND, 1000, 0, 3);
    assert_eq!(
        rewind(Rc, &w, false, 5, 256),
        RewindStep::Restart(Restart {
            resid: 1000,
            skip: 0,
            iova_advance: 0,
            prev_opcode: None
        })
    );
    // A read keeps what it received, and asks for the rest further on.
    let r = wqe(WqeState::Pending, wr::RDMA_READ, 1000, 1000 - 512, 3);
    assert_eq!(
        rewind(Rc, &r, true, 5, 256),
        RewindStep::Restart(Restart {
            resid: 488,
            skip: 512,
            iova_advance: 512,
            prev_opcode: None
        })
    );
    // ... but not after the first.
    assert_eq!(
        rewind(Rc, &r, false, 5, 256),
        RewindStep::Restart(Restart {
            resid: 1000,
            skip: 0,
            iova_advance: 0,
            prev_opcode: None
        })
    );
    // An atomic is sent again whole.
    let a = wqe(WqeState::Pending, wr::ATOMIC_FETCH_AND_ADD, 8, 8, 3);
    assert_eq!(
        rewind(Rc, &a, true, 3, 256),
        RewindStep::Restart(Restart {
            resid: 8,
            skip: 0,
            iova_advance: 0,
            prev_opcode: None
        })
    );
    // A processing send, half acked, resumes with a middle.
    let s = wqe(WqeState::Processing, wr::SEND, 1024, 0, 100);
    let RewindStep::Restart(x) = rewind(Rc, &s, true, 102, 256) else {
        panic!()
    };
    assert_eq!((x.resid, x.prev_opcode), (512, Some(RC_SEND_MIDDLE)));
    assert_eq!(
        next_opcode(Rc, wr::SEND, x.prev_opcode, x.resid, 256),
        Some(RC_SEND_MIDDLE)
    );
    // A completer PSN behind the WQE (from before the wrap) counts as
    // nothing acked rather than 2^24 packets.
    let RewindStep::Restart(x) = rewind(Rc, &s, true, 99, 256) else {
        panic!()
    };
    assert_eq!((x.resid, x.prev_opcode), (1024, None));
    let _ = wr_mask::SEND;
}

fn view(wr_op: u32, resid: u32) -> SendView {
    SendView {
        wr_op,
        send_flags: 0,
        wr_mask: wr_opcode_mask(wr_op, Rc),
        resid,
        first_psn: 0,
        num_sge: 1,
        cur_sge: 0,
        has_rd_atomic: false,
    }
}

fn qview(psn: u32) -> ReqView {
    ReqView {
        t: Rc,
        mtu: 1024,
        max_sge: 4,
        at_head: true,
        rd_atomic_free: 2,
        max_rd_atomic: 2,
        psn,
        comp_psn: psn,
        prev_opcode: None,
        skb_out_high: false,
    }
}

#[test]
fn plan_a_whole_send() {
    let mut w = view(wr::SEND_WITH_IMM, 2500);
    let mut q = qview(0xff_ffff);
    let mut f = ReqFlags::default();
    let mut got = Vec::new();
    loop {
        let ReqStep::Packet(p) = plan(&w, &q, &mut f, || panic!("no credit needed")) else {
            panic!("no packet");
        };
        let a = after_send(Rc, &w, &p, q.mtu);
        got.push((p.opcode, p.psn, p.payload, a.state));
        if let Some((first, _)) = a.wqe_psns {
            w.first_psn = first;
        }
        w.resid = a.resid;
        q.psn = a.next_psn;
        q.prev_opcode = Some(a.prev_opcode);
        if a.next_wqe {
            break;
        }
    }
    assert_eq!(
        got,
        [
            (RC_SEND_FIRST, 0xff_ffff, 1024, WqeState::Processing),
            (RC_SEND_MIDDLE, 0, 1024, WqeState::Processing),
            (RC_SEND_LAST_WITH_IMMEDIATE, 1, 452, WqeState::Pending)
        ]
    );
    assert_eq!(q.psn, 2);
}

#[test]
fn plan_waits_and_failures() {
    use crate::rxe_comp_check::WcStatus;
    let mut f = ReqFlags::default();
    // A list longer than the queue allows (a user ring's garbage).
    let mut w = view(wr::SEND, 10);
    w.num_sge = 5;
    assert_eq!(
        plan(&w, &qview(0), &mut f, || true),
        ReqStep::Fail(WcStatus::LocQpOp)
    );
    let mut w = view(wr::SEND, 10);
    w.cur_sge = 4;
    assert_eq!(
        plan(&w, &qview(0), &mut f, || true),
        ReqStep::Fail(WcStatus::LocQpOp)
    );
    // ... but an empty message does not read the list.
    let mut w = view(wr::SEND, 0);
    w.cur_sge = 4;
    assert!(matches!(
        plan(&w, &qview(0), &mut f, || true),
        ReqStep::Packet(_)
    ));
    // Fences.
    let mut q = qview(0);
    q.at_head = false;
    assert_eq!(
        plan(&view(wr::LOCAL_INV, 0), &q, &mut f, || true),
        ReqStep::Wait(Wait::Fence)
    );
    assert!(f.wait_fence);
    assert_eq!(
        plan(&view(wr::LOCAL_INV, 0), &qview(0), &mut f, || true),
        ReqStep::LocalOp
    );
    // The window.
    let mut q = qview(300);
    q.comp_psn = 0;
    assert_eq!(
        plan(&view(wr::SEND, 1), &q, &mut f, || true),
        ReqStep::Wait(Wait::Window)
    );
    assert!(f.wait_psn);
    // Packets in flight.
    let mut q = qview(0);
    q.skb_out_high = true;
    assert_eq!(
        plan(&view(wr::SEND, 1), &q, &mut f, || true),
        ReqStep::Wait(Wait::SkbOut)
    );
    // No credit for a read.
    let mut f = ReqFlags::default();
    assert_eq!(
        plan(&view(wr::RDMA_READ, 100), &qview(0), &mut f, || false),
        ReqStep::Wait(Wait::RdAtomic)
    );
    assert!(f.need_rd_atomic);
    let ReqStep::Packet(p) = plan(&view(wr::RDMA_READ, 5000), &qview(0), &mut f, || true) else {
        panic!()
    };
    assert!(p.took_rd_atomic && !f.need_rd_atomic);
    assert_eq!((p.opcode, p.payload), (RC_RDMA_READ_REQUEST, 0));
    let a = after_send(Rc, &view(wr::RDMA_READ, 5000), &p, 1024);
    assert_eq!((a.wqe_psns, a.next_psn, a.resid), (Some((0, 4)), 5, 5000));
    // A retried read holds its credit already.
    let mut w = view(wr::RDMA_READ, 100);
    w.has_rd_atomic = true;
    let ReqStep::Packet(p) = plan(&w, &qview(0), &mut f, || panic!("second credit")) else {
        panic!()
    };
    assert!(!p.took_rd_atomic);
    // An opcode the QP type cannot send.
    let mut q = qview(0);
    q.t = Uc;
    assert_eq!(
        plan(&view(wr::RDMA_READ, 1), &q, &mut f, || true),
        ReqStep::Fail(WcStatus::LocQpOp)
    );
    // A too long UD message.
    let mut q = qview(9);
    q.t = Ud;
    let mut w = view(wr::SEND, 1025);
    w.wr_mask = wr_opcode_mask(wr::SEND, Ud);
    assert_eq!(plan(&w, &q, &mut f, || true), ReqStep::UdSkip(ud_skip(9)));
    // A flush leaves nothing to send.
    let mut w = view(wr::FLUSH, 64);
    w.has_rd_atomic = true;
    let ReqStep::Packet(p) = plan(&w, &qview(0), &mut f, || true) else {
        panic!()
    };
    assert_eq!(after_send(Rc, &w, &p, 1024).resid, 0);
    // A solicited send sets SE on its only packet.
    let mut w = view(wr::SEND, 1);
    w.send_flags = SEND_SOLICITED | SEND_SIGNALED;
    let ReqStep::Packet(p) = plan(&w, &qview(0), &mut f, || true) else {
        panic!()
    };
    assert!(p.solicited && p.ack_req);
    assert_eq!(after_send(Uc, &w, &p, 1024).state, WqeState::Done);
}

/// A send WQE's bytes as `struct rxe_send_wqe` lays them out.
fn wqe_bytes(wr_op: u32, send_flags: u32, length: u32, remote: u64) -> [u8; 256] {
    let mut b = [0u8; 256];
    let put =
        |b: &mut [u8; 256], off: usize, v: u32| b[off..off + 4].copy_from_slice(&v.to_ne_bytes());
    put(&mut b, 12, wr_op);
    put(&mut b, 16, send_flags);
    b[24..32].copy_from_slice(&remote.to_ne_bytes());
    put(&mut b, 184, length);
    put(&mut b, 188, length);
    put(&mut b, 196, 1);
    b
}

#[test]
fn wqe_bytes_layout() {
    use crate::rxe_wqe::{send_off, Remote, SendWqe};
    // The offsets agree with the post path's encoder.
    assert_eq!(wqe_off::OPCODE, send_off::OPCODE);
    assert_eq!(wqe_off::SEND_FLAGS, send_off::SEND_FLAGS);
    assert_eq!(wqe_off::REMOTE_ADDR, send_off::WR);
    assert_eq!(wqe_off::STATUS, send_off::STATUS);
    assert_eq!(wqe_off::STATE, send_off::STATE);
    assert_eq!(wqe_off::IOVA, send_off::IOVA);
    assert_eq!(wqe_off::MASK, send_off::MASK);
    assert_eq!(wqe_off::DMA_LENGTH, send_off::DMA);
    assert_eq!(wqe_off::FIXED, send_off::DATA);
    let mut b = [0u8; 208];
    SendWqe {
        wr_id: 1,
        opcode: wr::RDMA_WRITE,
        send_flags: SEND_SIGNALED,
        ex: 0,
        remote: crate::rxe_wqe::Remote::Rdma {
            addr: 0xabc0,
            rkey: 5,
        },
        iova: 0xabc0,
        mask: wr_opcode_mask(wr::RDMA_WRITE, Rc),
        length: 3000,
        num_sge: 2,
        ssn: 9,
    }
    .encode(&mut b);
    let _ = Remote::None;
    let w = SendWqeBytes::new(&mut b).unwrap();
    assert_eq!(w.wr_op(), wr::RDMA_WRITE);
    assert_eq!(w.send_flags(), SEND_SIGNALED);
    assert_eq!(w.state(), WqeState::Posted);
    assert_eq!((w.length(), w.resid(), w.iova()), (3000, 3000, 0xabc0));
    assert_eq!(w.remote_addr(wr_opcode_mask(wr::RDMA_WRITE, Rc)), 0xabc0);
    assert_eq!(w.remote_addr(wr_opcode_mask(wr::SEND, Rc)), 0);
    let v = w.send_view(Rc);
    assert_eq!((v.num_sge, v.cur_sge, v.resid), (2, 0, 3000));
    assert!(SendWqeBytes::new(&mut [0u8; 207]).is_none());
}

#[test]
fn wqe_bytes_send_and_rewind() {
    let mut b = wqe_bytes(wr::SEND, 0, 600, 0);
    let mut w = SendWqeBytes::new(&mut b).unwrap();
    // Send its first two packets at MTU 256.
    let mut q = qview(0xff_ffff);
    q.mtu = 256;
    let mut f = ReqFlags::default();
    for _ in 0..2 {
        let v = w.send_view(Rc);
        let ReqStep::Packet(p) = plan(&v, &q, &mut f, || true) else {
            panic!()
        };
        let a = after_send(Rc, &v, &p, 256);
        w.store_after_send(&a, p.took_rd_atomic);
        // (the kernel's copy moves the resid)
        let r = w.resid() - p.payload;
        w.set_position(r, 600 - r);
        q.psn = a.next_psn;
        q.prev_opcode = Some(a.prev_opcode);
    }
    assert_eq!(w.state(), WqeState::Processing);
    assert_eq!(w.psns(), (0xff_ffff, 1));
    assert_eq!(w.resid(), 88);
    // One packet acked (the completer at PSN 0): rewind.
    let mut first = true;
    let mut prev = None;
    let RewindStep::Restart(r) = w.rewind_step(Rc, &mut first, &mut prev, 0, 256) else {
        panic!()
    };
    assert_eq!((r.resid, r.skip), (344, 256));
    assert_eq!(prev, Some(RC_SEND_FIRST));
    assert!(!first);
    assert_eq!((w.state(), w.resid()), (WqeState::Posted, 344));
    // The next one restarts whole; a posted one stops the walk.
    let mut b2 = wqe_bytes(wr::RDMA_WRITE, crate::rxe_wqe::SEND_INLINE, 100, 0x5000);
    let mut w2 = SendWqeBytes::new(&mut b2).unwrap();
    w2.set_state(WqeState::Pending);
    w2.set_iova(0x5064);
    assert!(matches!(
        w2.rewind_step(Rc, &mut first, &mut prev, 0, 256),
        RewindStep::Restart(_)
    ));
    assert_eq!((w2.iova(), w2.resid()), (0x5000, 100));
    let mut b3 = wqe_bytes(wr::SEND, 0, 1, 0);
    let mut w3 = SendWqeBytes::new(&mut b3).unwrap();
    assert_eq!(
        w3.rewind_step(Rc, &mut first, &mut prev, 0, 256),
        RewindStep::Stop
    );
    // A first read keeps what it received and moves its address.
    let mut b4 = wqe_bytes(wr::RDMA_READ, 0, 1000, 0x9000);
    let mut w4 = SendWqeBytes::new(&mut b4).unwrap();
    w4.set_state(WqeState::Pending);
    w4.set_position(1000 - 512, 0);
    let mut first = true;
    let RewindStep::Restart(r) = w4.rewind_step(Rc, &mut first, &mut prev, 0, 256) else {
        panic!()
    };
    assert_eq!((r.skip, w4.resid(), w4.iova()), (512, 488, 0x9200));
    // Inline data is positioned by its offset.
    let mut b5 = wqe_bytes(wr::SEND, crate::rxe_wqe::SEND_INLINE, 600, 0);
    let mut w5 = SendWqeBytes::new(&mut b5).unwrap();
    w5.set_position(344, 256);
    assert_eq!(u32::from_ne_bytes(b5[200..204].try_into().unwrap()), 256);
    // Status, credit.
    let mut w5 = SendWqeBytes::new(&mut b5).unwrap();
    w5.set_status(crate::rxe_comp_check::WcStatus::RetryExc);
    w5.set_has_rd_atomic(true);
    assert_eq!(w5.status(), 12);
    assert!(w5.has_rd_atomic());
    let h = w5.head(Rc);
    assert_eq!(h.wr_op, wr::SEND);
}
