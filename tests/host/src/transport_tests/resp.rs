// SPDX-License-Identifier: GPL-2.0

//! The responder's checks, error classes, acknowledgements and replays.

use crate::keys::*;
use crate::params::*;
use crate::qp_attr::QpType::{self, *};
use crate::rxe_comp_check::WcStatus;
use crate::rxe_resp_check::RespState::*;
use crate::rxe_resp_check::*;
use crate::rxe_wire::ext::{syndrome::*, Reth};
use crate::rxe_wire::opcode::{code::*, lookup};

fn pkt(opcode: u8, psn: u32, payload: u32) -> ReqPkt {
    ReqPkt {
        psn,
        opcode,
        mask: lookup(opcode).unwrap().mask(),
        payload,
        pad: (payload.wrapping_neg() & 3) as u8,
        ack_req: false,
        reth: None,
        atmeth: None,
        flush_type: 0,
        flush_level: 0,
        inv_rkey: None,
    }
}

fn with_reth(mut p: ReqPkt, va: u64, rkey: u32, len: u32) -> ReqPkt {
    p.reth = Some(Reth { va, rkey, len });
    p
}

#[test]
fn rc_psn_checks() {
    let mut r = RespInfo::new(0xff_ffff);
    assert_eq!(r.aeth_syndrome, ACK_UNLIMITED);
    assert_eq!(
        check_psn(Rc, &pkt(RC_SEND_ONLY, 0xff_ffff, 1), &mut r),
        (ChkOpSeq, None)
    );
    // Ahead (across the wrap): one NAK, then silent drops.
    assert_eq!(
        check_psn(Rc, &pkt(RC_SEND_ONLY, 1, 1), &mut r),
        (ErrPsnOutOfSeq, Some(CNT_OUT_OF_SEQ_REQ))
    );
    assert!(r.sent_psn_nak);
    assert_eq!(
        check_psn(Rc, &pkt(RC_SEND_ONLY, 2, 1), &mut r),
        (Cleanup, None)
    );
    // Behind: a duplicate.
    assert_eq!(
        check_psn(Rc, &pkt(RC_SEND_ONLY, 0xff_fff0, 1), &mut r),
        (DuplicateRequest, Some(CNT_DUP_REQ))
    );
    // The expected one clears the NAK.
    assert_eq!(
        check_psn(Rc, &pkt(RC_SEND_ONLY, 0xff_ffff, 1), &mut r),
        (ChkOpSeq, None)
    );
    assert!(!r.sent_psn_nak);
    // UD has no sequence.
    assert_eq!(
        check_psn(Ud, &pkt(UD_SEND_ONLY, 77, 1), &mut r),
        (ChkOpSeq, None)
    );
}

#[test]
fn uc_psn_gap_drops_the_message() {
    let mut r = RespInfo::new(10);
    // A middle after a gap: drop until a first.
    assert_eq!(
        check_psn(Uc, &pkt(UC_SEND_MIDDLE, 11, 256), &mut r),
        (Cleanup, None)
    );
    assert!(r.drop_msg);
    assert_eq!(
        check_psn(Uc, &pkt(UC_SEND_LAST, 10, 256), &mut r),
        (Cleanup, None)
    );
    assert_eq!(
        check_psn(Uc, &pkt(UC_SEND_FIRST, 13, 256), &mut r),
        (ChkOpSeq, None)
    );
    assert!(!r.drop_msg);
}

#[test]
fn opcode_sequences() {
    let mut r = RespInfo::new(0);
    let seq = |t: QpType, prev: Option<u8>, op: u8| {
        let mut r = RespInfo::new(0);
        r.opcode = prev;
        let s = check_op_seq(t, op, &mut r);
        (s, r.drop_msg)
    };
    // RC.
    assert_eq!(seq(Rc, None, RC_SEND_FIRST), (ChkOpValid, false));
    assert_eq!(
        seq(Rc, Some(RC_SEND_LAST), RC_SEND_ONLY),
        (ChkOpValid, false)
    );
    assert_eq!(
        seq(Rc, None, RC_SEND_MIDDLE),
        (ErrMissingOpcodeFirst, false)
    );
    assert_eq!(
        seq(
            Rc,
            Some(RC_RDMA_WRITE_LAST),
            RC_RDMA_WRITE_LAST_WITH_IMMEDIATE
        ),
        (ErrMissingOpcodeFirst, false)
    );
    assert_eq!(
        seq(Rc, None, RC_SEND_LAST_WITH_INVALIDATE),
        (ErrMissingOpcodeFirst, false)
    );
    assert_eq!(
        seq(Rc, Some(RC_SEND_FIRST), RC_SEND_MIDDLE),
        (ChkOpValid, false)
    );
    assert_eq!(
        seq(Rc, Some(RC_SEND_MIDDLE), RC_SEND_LAST_WITH_INVALIDATE),
        (ChkOpValid, false)
    );
    assert_eq!(
        seq(Rc, Some(RC_SEND_MIDDLE), RC_SEND_LAST_WITH_IMMEDIATE),
        (ChkOpValid, false)
    );
    assert_eq!(
        seq(Rc, Some(RC_SEND_FIRST), RC_RDMA_WRITE_MIDDLE),
        (ErrMissingOpcodeLastC, false)
    );
    assert_eq!(
        seq(Rc, Some(RC_SEND_FIRST), RC_SEND_ONLY),
        (ErrMissingOpcodeLastC, false)
    );
    assert_eq!(
        seq(Rc, Some(RC_RDMA_WRITE_FIRST), RC_RDMA_WRITE_LAST),
        (ChkOpValid, false)
    );
    assert_eq!(
        seq(Rc, Some(RC_RDMA_WRITE_MIDDLE), RC_SEND_LAST),
        (ErrMissingOpcodeLastC, false)
    );
    assert_eq!(
        seq(Rc, Some(RC_RDMA_WRITE_MIDDLE), RC_RDMA_READ_REQUEST),
        (ErrMissingOpcodeLastC, false)
    );
    assert_eq!(
        seq(Rc, Some(RC_COMPARE_SWAP), RC_RDMA_READ_REQUEST),
        (ChkOpValid, false)
    );
    // UC: drops instead of NAKs.
    assert_eq!(seq(Uc, None, UC_SEND_LAST), (Cleanup, true));
    assert_eq!(seq(Uc, None, UC_RDMA_WRITE_MIDDLE), (Cleanup, true));
    assert_eq!(
        seq(Uc, Some(UC_SEND_FIRST), UC_SEND_LAST_WITH_IMMEDIATE),
        (ChkOpValid, false)
    );
    assert_eq!(
        seq(Uc, Some(UC_SEND_MIDDLE), UC_SEND_FIRST),
        (ErrMissingOpcodeLastD1e, false)
    );
    assert_eq!(
        seq(Uc, Some(UC_RDMA_WRITE_FIRST), UC_RDMA_WRITE_MIDDLE),
        (ChkOpValid, false)
    );
    assert_eq!(
        seq(Uc, Some(UC_RDMA_WRITE_FIRST), UC_SEND_ONLY),
        (ErrMissingOpcodeLastD1e, false)
    );
    assert_eq!(seq(Ud, None, UD_SEND_ONLY), (ChkOpValid, false));
    r.opcode = None;
    assert_eq!(check_op_seq(Gsi, UD_SEND_ONLY, &mut r), ChkOpValid);
}

#[test]
fn access_checks() {
    let m = |op| lookup(op).unwrap().mask();
    assert!(qp_access_allows(m(RC_SEND_ONLY), 0, 0));
    assert!(!qp_access_allows(
        m(RC_RDMA_READ_REQUEST),
        ACCESS_REMOTE_WRITE,
        0
    ));
    assert!(qp_access_allows(
        m(RC_RDMA_READ_REQUEST),
        ACCESS_REMOTE_READ,
        0
    ));
    assert!(!qp_access_allows(
        m(RC_RDMA_WRITE_FIRST),
        ACCESS_REMOTE_READ,
        0
    ));
    assert!(!qp_access_allows(m(RC_ATOMIC_WRITE), ACCESS_REMOTE_READ, 0));
    assert!(!qp_access_allows(m(RC_FETCH_ADD), ACCESS_REMOTE_WRITE, 0));
    assert!(qp_access_allows(m(RC_FETCH_ADD), ACCESS_REMOTE_ATOMIC, 0));
    assert!(!qp_access_allows(m(RC_FLUSH), 0, FLUSH_GLOBAL));
    assert!(qp_access_allows(
        m(RC_FLUSH),
        ACCESS_FLUSH_GLOBAL,
        FLUSH_GLOBAL
    ));
    assert!(!qp_access_allows(
        m(RC_FLUSH),
        ACCESS_FLUSH_GLOBAL,
        FLUSH_GLOBAL | FLUSH_PERSISTENT
    ));

    let mut r = RespInfo::new(0);
    let w = pkt(RC_RDMA_WRITE_ONLY, 0, 4);
    assert_eq!(check_op_valid(Rc, &w, 0, &mut r), ErrUnsupportedOpcode);
    assert_eq!(
        check_op_valid(Rc, &w, ACCESS_REMOTE_WRITE, &mut r),
        ChkResource
    );
    let uw = pkt(UC_RDMA_WRITE_ONLY, 0, 4);
    assert_eq!(check_op_valid(Uc, &uw, 0, &mut r), Cleanup);
    assert!(r.drop_msg);
    assert_eq!(
        check_op_valid(Ud, &pkt(UD_SEND_ONLY, 0, 4), 0, &mut r),
        ChkResource
    );

    assert_eq!(rkey_access(m(RC_RDMA_READ_REQUEST), 0), ACCESS_REMOTE_READ);
    assert_eq!(rkey_access(m(RC_RDMA_WRITE_LAST), 0), ACCESS_REMOTE_WRITE);
    assert_eq!(rkey_access(m(RC_ATOMIC_WRITE), 0), ACCESS_REMOTE_WRITE);
    assert_eq!(rkey_access(m(RC_COMPARE_SWAP), 0), ACCESS_REMOTE_ATOMIC);
    assert_eq!(
        rkey_access(m(RC_FLUSH), FLUSH_GLOBAL | FLUSH_PERSISTENT),
        ACCESS_FLUSH_GLOBAL | ACCESS_FLUSH_PERSISTENT
    );
    assert_eq!(rkey_access(m(RC_SEND_ONLY), 0), 0);
}

#[test]
fn resources() {
    let m = |op| lookup(op).unwrap().mask();
    assert_eq!(check_resource(m(RC_RDMA_READ_REQUEST), 4), Resource::None);
    assert_eq!(check_resource(m(RC_COMPARE_SWAP), 0), Resource::TooMany);
    assert_eq!(check_resource(m(RC_ATOMIC_WRITE), 0), Resource::TooMany);
    assert_eq!(check_resource(m(RC_SEND_FIRST), 0), Resource::RecvWqe);
    assert_eq!(check_resource(m(RC_SEND_MIDDLE), 0), Resource::None);
    assert_eq!(
        check_resource(m(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE), 0),
        Resource::RecvWqe
    );
    assert_eq!(check_resource(m(RC_RDMA_WRITE_FIRST), 0), Resource::None);
    assert_eq!(check_resource(m(UD_SEND_ONLY), 0), Resource::RecvWqe);
}

#[test]
fn lengths() {
    let mtu = 1024;
    assert_eq!(
        check_length(Rc, &pkt(RC_SEND_ONLY, 0, 1024), mtu, 0),
        Execute
    );
    assert_eq!(
        check_length(Rc, &pkt(RC_SEND_ONLY, 0, 1025), mtu, 0),
        ErrLength
    );
    assert_eq!(check_length(Rc, &pkt(RC_SEND_ONLY, 0, 0), mtu, 0), Execute);
    assert_eq!(
        check_length(Rc, &pkt(RC_SEND_FIRST, 0, 1024), mtu, 0),
        Execute
    );
    assert_eq!(
        check_length(Rc, &pkt(RC_SEND_FIRST, 0, 1000), mtu, 0),
        ErrLength
    );
    assert_eq!(
        check_length(Uc, &pkt(UC_SEND_MIDDLE, 0, 1000), mtu, 0),
        ErrLength
    );
    assert_eq!(
        check_length(Rc, &pkt(RC_SEND_LAST, 0, 0), mtu, 0),
        ErrLength
    );
    assert_eq!(check_length(Rc, &pkt(RC_SEND_LAST, 0, 1), mtu, 0), Execute);
    assert_eq!(
        check_length(Rc, &pkt(RC_SEND_LAST, 0, 1025), mtu, 0),
        ErrLength
    );
    let w = with_reth(pkt(RC_RDMA_WRITE_FIRST, 0, 1024), 0, 1, 4096);
    assert_eq!(check_length(Rc, &w, mtu, 0), ChkRkey);
    let w = with_reth(pkt(RC_RDMA_WRITE_ONLY, 0, 0), 0, 1, (1 << 31) + 1);
    assert_eq!(check_length(Rc, &w, mtu, 0), ErrLength);
    let r = with_reth(pkt(RC_RDMA_READ_REQUEST, 0, 0), 0, 1, 1 << 31);
    assert_eq!(check_length(Rc, &r, mtu, 0), ChkRkey);
    assert_eq!(
        check_length(Rc, &pkt(RC_COMPARE_SWAP, 0, 0), mtu, 0),
        ChkRkey
    );
    // A UD receive buffer holds the 40-byte network header first.
    assert_eq!(
        check_length(Ud, &pkt(UD_SEND_ONLY, 0, 100), mtu, 140),
        Execute
    );
    assert_eq!(
        check_length(Gsi, &pkt(UD_SEND_ONLY, 0, 101), mtu, 140),
        ErrLength
    );
}

#[test]
fn rkeys_and_rdma_payloads() {
    let m = |op| lookup(op).unwrap().mask();
    assert_eq!(
        rkey_violation(m(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE)),
        ErrRkeyViolation
    );
    assert_eq!(rkey_violation(m(RC_RDMA_WRITE_ONLY)), ErrRkeyViolationEvent);
    assert_eq!(
        rkey_violation(m(RC_RDMA_READ_REQUEST)),
        ErrRkeyViolationEvent
    );
    // Empty reads and writes skip the rkey, and name none.
    let w0 = with_reth(pkt(RC_RDMA_WRITE_ONLY, 0, 0), 0x1000, 0x55, 0);
    assert!(rkey_skipped(&w0));
    assert_eq!(reth_rkey(w0.mask, &w0.reth.unwrap()), 0);
    let w = with_reth(pkt(RC_RDMA_WRITE_ONLY, 0, 4), 0x1000, 0x55, 4);
    assert!(!rkey_skipped(&w));
    assert_eq!(reth_rkey(w.mask, &w.reth.unwrap()), 0x55);
    assert!(!rkey_skipped(&pkt(RC_COMPARE_SWAP, 0, 0)));

    let mtu = 256;
    // Writes: full packets while more than an MTU is left, then exactly
    // the rest with its pad.
    assert_eq!(
        check_rdma_payload(&pkt(RC_RDMA_WRITE_FIRST, 0, 256), 1000, mtu),
        Ok(())
    );
    assert_eq!(
        check_rdma_payload(&pkt(RC_RDMA_WRITE_FIRST, 0, 255), 1000, mtu),
        Err(ErrLength)
    );
    assert_eq!(
        check_rdma_payload(&pkt(RC_RDMA_WRITE_LAST, 0, 5), 5, mtu),
        Ok(())
    );
    assert_eq!(
        check_rdma_payload(&pkt(RC_RDMA_WRITE_LAST, 0, 4), 5, mtu),
        Err(ErrLength)
    );
    let mut bad_pad = pkt(RC_RDMA_WRITE_LAST, 0, 5);
    bad_pad.pad = 0;
    assert_eq!(check_rdma_payload(&bad_pad, 5, mtu), Err(ErrLength));
    let mut padded_full = pkt(RC_RDMA_WRITE_MIDDLE, 0, 256);
    padded_full.pad = 1;
    assert_eq!(check_rdma_payload(&padded_full, 1000, mtu), Err(ErrLength));
    // Atomic writes: exactly 8 bytes.
    assert_eq!(
        check_rdma_payload(&pkt(RC_ATOMIC_WRITE, 0, 8), 8, mtu),
        Ok(())
    );
    assert_eq!(
        check_rdma_payload(&pkt(RC_ATOMIC_WRITE, 0, 4), 8, mtu),
        Err(ErrLength)
    );
    assert_eq!(
        check_rdma_payload(&pkt(RC_ATOMIC_WRITE, 0, 8), 16, mtu),
        Err(ErrLength)
    );
    assert_eq!(
        check_rdma_payload(&pkt(RC_RDMA_READ_REQUEST, 0, 0), 1 << 20, mtu),
        Ok(())
    );
}

#[test]
fn execution_advances_psn_and_msn() {
    let mut r = RespInfo::new(0xff_ffff);
    r.msn = 0xff_ffff;
    let first = pkt(RC_SEND_FIRST, 0xff_ffff, 256);
    executed(&first, &mut r);
    assert_eq!((r.psn, r.ack_psn, r.msn), (0, 0, 0xff_ffff));
    assert_eq!(r.opcode, Some(RC_SEND_FIRST));
    let last = pkt(RC_SEND_LAST, 0, 3);
    executed(&last, &mut r);
    // The MSN wraps at 24 bits too.
    assert_eq!((r.psn, r.msn), (1, 0));
    assert_eq!(r.status, WcStatus::Success);

    let m = |op| lookup(op).unwrap().mask();
    assert_eq!(after_execute(Rc, m(RC_SEND_LAST)), Complete);
    assert_eq!(after_execute(Rc, m(RC_SEND_FIRST)), Acknowledge);
    assert_eq!(after_execute(Uc, m(UC_SEND_FIRST)), Cleanup);
    assert_eq!(after_execute(Rc, m(RC_RDMA_WRITE_ONLY)), Acknowledge);
    assert_eq!(
        after_execute(Uc, m(UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE)),
        Complete
    );
}

#[test]
fn acknowledgements() {
    let mut p = pkt(RC_SEND_ONLY, 9, 4);
    assert_eq!(acknowledge(Rc, &p, ACK_UNLIMITED), None);
    p.ack_req = true;
    assert_eq!(
        acknowledge(Rc, &p, ACK_UNLIMITED),
        Some(Ack {
            opcode: RC_ACKNOWLEDGE,
            syn: ACK_UNLIMITED,
            psn: 9
        })
    );
    assert_eq!(acknowledge(Uc, &p, ACK_UNLIMITED), None);
    // A NAK is sent whatever the A bit.
    p.ack_req = false;
    assert_eq!(
        acknowledge(Rc, &p, NAK_REM_ACC_ERR).map(|a| (a.opcode, a.syn)),
        Some((RC_ACKNOWLEDGE, NAK_REM_ACC_ERR))
    );
    assert_eq!(
        acknowledge(Rc, &pkt(RC_FETCH_ADD, 3, 0), ACK_UNLIMITED).map(|a| a.opcode),
        Some(RC_ATOMIC_ACKNOWLEDGE)
    );
    assert_eq!(
        acknowledge(Rc, &pkt(RC_ATOMIC_WRITE, 3, 8), ACK_UNLIMITED).map(|a| a.opcode),
        Some(RC_RDMA_READ_RESPONSE_ONLY)
    );
    assert_eq!(
        acknowledge(Rc, &pkt(RC_FLUSH, 3, 0), ACK_UNLIMITED).map(|a| a.opcode),
        Some(RC_RDMA_READ_RESPONSE_ONLY)
    );
    assert_eq!(rnr_nak_syndrome(12), RNR_NAK | 12);
    assert_eq!(rnr_nak_syndrome(0xff), RNR_NAK | 0x1f);
}

#[test]
fn error_classes() {
    let act = |e, t, srq, wqe| error_action(e, t, srq, wqe, 12).unwrap();
    let a = act(ErrPsnOutOfSeq, Rc, false, false);
    assert_eq!(a.nak_now, Some((NAK_PSN_SEQ_ERROR, true)));
    assert_eq!(a.next, Cleanup);
    for e in [
        ErrTooManyRdmaAtmReq,
        ErrMissingOpcodeFirst,
        ErrMissingOpcodeLastC,
        ErrUnsupportedOpcode,
        ErrMisalignedAtomic,
    ] {
        let a = act(e, Rc, false, true);
        assert_eq!(
            (a.aeth_syndrome, a.status, a.goto_error, a.next),
            (
                Some(NAK_INVALID_REQ),
                Some(WcStatus::RemInvReq),
                true,
                Complete
            )
        );
    }
    // UC interrupted message: class E with an SRQ, D1 without.
    let a = act(ErrMissingOpcodeLastD1e, Uc, true, true);
    assert_eq!(
        (a.status, a.drop_msg, a.next),
        (Some(WcStatus::RemInvReq), true, Complete)
    );
    let a = act(ErrMissingOpcodeLastD1e, Uc, true, false);
    assert_eq!((a.status, a.next), (None, Cleanup));
    let a = act(ErrMissingOpcodeLastD1e, Uc, false, true);
    assert_eq!((a.reset_wqe, a.drop_msg, a.next), (true, false, Cleanup));
    // RNR: NAK on RC with the QP's timer, drop elsewhere.
    let a = act(ErrRnr, Rc, false, false);
    assert_eq!(a.nak_now, Some((RNR_NAK | 12, false)));
    assert_eq!(a.count, Some(CNT_SND_RNR));
    let a = act(ErrRnr, Uc, false, false);
    assert_eq!((a.nak_now, a.drop_msg, a.next), (None, true, Cleanup));
    // Rkey violations.
    let a = act(ErrRkeyViolationEvent, Rc, false, false);
    assert_eq!((a.access_event, a.next), (true, ErrRkeyViolation));
    let a = act(ErrRkeyViolationEvent, Uc, false, false);
    assert!(!a.access_event);
    let a = act(ErrRkeyViolation, Rc, false, false);
    assert_eq!(
        (a.aeth_syndrome, a.status, a.goto_error),
        (Some(NAK_REM_ACC_ERR), Some(WcStatus::RemAccess), true)
    );
    let a = act(ErrRkeyViolation, Uc, true, false);
    assert_eq!(
        (a.status, a.drop_msg, a.next),
        (Some(WcStatus::RemAccess), true, Complete)
    );
    let a = act(ErrRkeyViolation, Uc, false, false);
    assert_eq!((a.drop_msg, a.next), (true, Cleanup));
    let a = act(ErrInvalidateRkey, Rc, false, true);
    assert_eq!(
        (a.status, a.goto_error, a.aeth_syndrome),
        (Some(WcStatus::RemInvReq), true, None)
    );
    // Lengths.
    let a = act(ErrLength, Rc, false, true);
    assert_eq!(a.aeth_syndrome, Some(NAK_INVALID_REQ));
    let a = act(ErrLength, Ud, true, true);
    assert_eq!(
        (a.status, a.next, a.goto_error),
        (Some(WcStatus::RemInvReq), Complete, false)
    );
    let a = act(ErrLength, Ud, false, true);
    assert_eq!((a.drop_msg, a.next), (true, Cleanup));
    let a = act(ErrMalformedWqe, Ud, false, true);
    assert_eq!(
        (a.aeth_syndrome, a.status),
        (Some(NAK_REM_OP_ERR), Some(WcStatus::LocQpOp))
    );
    assert_eq!(act(ErrCqOverflow, Rc, false, true).next, Error);
    assert_eq!(error_action(Execute, Rc, false, false, 0), None);

    let mut r = RespInfo::new(0);
    r.opcode = Some(UC_SEND_FIRST);
    apply_error(&act(ErrMissingOpcodeLastD1e, Uc, false, true), &mut r);
    assert_eq!(r.opcode, None);
    apply_error(&act(ErrLength, Rc, false, true), &mut r);
    assert_eq!(
        (r.aeth_syndrome, r.status, r.goto_error),
        (NAK_INVALID_REQ, WcStatus::RemInvReq, true)
    );
    apply_error(&act(ErrRnr, Uc, false, false), &mut r);
    assert!(r.drop_msg);
}

#[test]
fn read_responses_segment_by_mtu() {
    let mut r = RespInfo::new(100);
    let mut res = ReplayRes::read(100, 0x1000, 0x77, 600, 256);
    assert_eq!((res.first_psn, res.last_psn), (100, 102));
    let mut got = Vec::new();
    loop {
        let rr = read_response(&res, 256);
        got.push((rr.opcode, rr.payload, rr.psn));
        if read_response_sent(&mut res, &rr, &mut r) {
            break;
        }
    }
    assert_eq!(
        got,
        [
            (RC_RDMA_READ_RESPONSE_FIRST, 256, 100),
            (RC_RDMA_READ_RESPONSE_MIDDLE, 256, 101),
            (RC_RDMA_READ_RESPONSE_LAST, 88, 102)
        ]
    );
    assert_eq!(r.psn, 103);
    assert_eq!(res.va, 0x1000 + 600);
    // An empty read: one ONLY response without payload.
    let mut res = ReplayRes::read(5, 0, 0, 0, 256);
    let rr = read_response(&res, 256);
    assert_eq!((rr.opcode, rr.payload), (RC_RDMA_READ_RESPONSE_ONLY, 0));
    let mut r = RespInfo::new(5);
    r.opcode = Some(RC_RDMA_READ_REQUEST);
    assert!(read_response_sent(&mut res, &rr, &mut r));
    assert_eq!((r.psn, r.opcode), (6, None));
}

#[test]
fn duplicate_reads_replay_from_resources() {
    let mut slots = [ReplayRes::default(); 2];
    let mut head = 0;
    let mut res = Resources::new(&mut slots, &mut head);
    assert_eq!(res.find(0), None);
    // A read of 1000 bytes at PSN 0xff_fffe, MTU 256: PSNs to 1 (wrapped).
    let i = res
        .prepare(ReplayRes::read(0xff_fffe, 0x1000, 9, 1000, 256))
        .unwrap();
    let j = res.prepare(ReplayRes::single(ResKind::Atomic, 2)).unwrap();
    assert_eq!((i, j), (0, 1));
    assert_eq!(res.find(0), Some(0));
    assert_eq!(res.find(1), Some(0));
    assert_eq!(res.find(2), Some(1));
    assert_eq!(res.find(3), None);

    // The whole read again.
    let p = with_reth(pkt(RC_RDMA_READ_REQUEST, 0xff_fffe, 0), 0x1000, 9, 1000);
    assert_eq!(duplicate(&p, &mut res, 3), Duplicate::Read(0));
    let r = *res.get(0).unwrap();
    assert_eq!(
        (r.state, r.replay, r.resid, r.cur_psn),
        (ReadState::New, true, 1000, 0xff_fffe)
    );
    // From its third response (a retried read's tail).
    let p = with_reth(pkt(RC_RDMA_READ_REQUEST, 0, 0), 0x1200, 9, 488);
    assert_eq!(duplicate(&p, &mut res, 3), Duplicate::Read(0));
    let r = *res.get(0).unwrap();
    assert_eq!(
        (r.state, r.va, r.resid, r.cur_psn),
        (ReadState::Replay, 0x1200, 488, 0)
    );
    let rr = read_response(&r, 256);
    assert_eq!((rr.opcode, rr.psn), (RC_RDMA_READ_RESPONSE_MIDDLE, 0));
    // Not a part of the original: dropped.
    let p = with_reth(pkt(RC_RDMA_READ_REQUEST, 0, 0), 0x1200, 9, 2000);
    assert_eq!(duplicate(&p, &mut res, 3), Duplicate::Drop);
    let p = with_reth(pkt(RC_RDMA_READ_REQUEST, 0, 0), 0x1200, 8, 10);
    assert_eq!(duplicate(&p, &mut res, 3), Duplicate::Drop);
    let p = with_reth(pkt(RC_RDMA_READ_REQUEST, 0, 0), 0x0fff, 9, 10);
    assert_eq!(duplicate(&p, &mut res, 3), Duplicate::Drop);
    // Unknown PSN.
    let p = with_reth(pkt(RC_RDMA_READ_REQUEST, 50, 0), 0x1200, 9, 10);
    assert_eq!(duplicate(&p, &mut res, 3), Duplicate::Drop);
    // The atomic is answered again (from its saved value).
    assert_eq!(
        duplicate(&pkt(RC_COMPARE_SWAP, 2, 0), &mut res, 3),
        Duplicate::Atomic(1)
    );
    assert!(res.get(1).unwrap().replay);
    // Sends and writes: ACK the last acknowledged PSN again.
    assert_eq!(
        duplicate(&pkt(RC_SEND_ONLY, 1, 4), &mut res, 0),
        Duplicate::AckAgain(0xff_ffff)
    );
    assert_eq!(
        duplicate(&pkt(RC_RDMA_WRITE_MIDDLE, 1, 4), &mut res, 5),
        Duplicate::AckAgain(4)
    );
    // The ring reuses the oldest: the read goes.
    res.prepare(ReplayRes::single(ResKind::AtomicWrite, 7))
        .unwrap();
    assert_eq!(res.find(0), None);
    assert_eq!(
        duplicate(&pkt(RC_ATOMIC_WRITE, 7, 8), &mut res, 8),
        Duplicate::AtomicWrite(0)
    );
    res.prepare(ReplayRes {
        kind: ResKind::Flush,
        ..ReplayRes::single(ResKind::Flush, 9)
    });
    assert_eq!(
        duplicate(&pkt(RC_FLUSH, 9, 0), &mut res, 10),
        Duplicate::Flush(1)
    );
    res.clear();
    assert_eq!(res.find(9), None);
    // No slot at all (max_dest_rd_atomic 0).
    let mut none: [ReplayRes; 0] = [];
    let mut h = 0;
    let mut res = Resources::new(&mut none, &mut h);
    assert_eq!(res.prepare(ReplayRes::single(ResKind::Atomic, 1)), None);
    assert_eq!(
        duplicate(&pkt(RC_FETCH_ADD, 1, 0), &mut res, 2),
        Duplicate::Drop
    );
}

#[test]
fn receive_completions() {
    let m = |op| lookup(op).unwrap().mask();
    assert_eq!(
        recv_wc(m(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE), 5000, 0, 0),
        (WC_RECV_RDMA_WITH_IMM, 5000)
    );
    assert_eq!(recv_wc(m(RC_SEND_LAST), 0, 4096, 1000), (WC_RECV, 3096));
    assert_eq!(
        recv_wc(m(RC_SEND_ONLY_WITH_IMMEDIATE), 0, 100, 0),
        (WC_RECV, 100)
    );
}

#[test]
fn empty_read_retried() {
    // An empty read's resource keeps rkey 0; its retry (with the
    // requester's key) is still answered.
    let mut slots = [ReplayRes::default(); 1];
    let mut head = 0;
    let mut res = Resources::new(&mut slots, &mut head);
    let p = with_reth(pkt(RC_RDMA_READ_REQUEST, 4, 0), 0x1000, 0x77, 0);
    let ctx = RdmaCtx::from_reth(p.mask, &p.reth.unwrap());
    assert_eq!(ctx.rkey, 0);
    res.prepare(ReplayRes::read(4, ctx.iova(), ctx.rkey, ctx.resid, 256));
    assert_eq!(duplicate(&p, &mut res, 5), Duplicate::Read(0));
}
