// SPDX-License-Identifier: GPL-2.0

//! The completer's state machine, run against a mock QP that records what
//! the machine does to it.

use crate::params::*;
use crate::qp_attr::QpType;
use crate::rxe_comp_check::*;
use crate::rxe_req_plan::{ReqFlags, WqeState};
use crate::rxe_wire::ext::syndrome::*;
use crate::rxe_wire::opcode::{code::*, lookup};
use crate::rxe_wire::psn::psn_add;
use crate::rxe_wqe::{opcode as wr, wr_opcode_mask};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    Status(WcStatus),
    Complete(u64, WcStatus),
    Count(usize),
    Rearm,
    Rnr(u32),
    QpError,
    Drained(u32),
}

struct MockWqe {
    id: u64,
    head: HeadWqe,
    resid: u32,
    has_rd_atomic: bool,
    status: WcStatus,
}

#[derive(Default)]
struct Mock {
    resps: VecDeque<(Resp, u32)>,
    cur_payload: u32,
    sq: VecDeque<MockWqe>,
    ev: Vec<Ev>,
    req_psn: u32,
    copy_fails: bool,
    /// As rxe/rc.rs's `CompQp::head`: without a response in the run, a
    /// head WQE neither done nor failed is given by its state only.
    state_only: bool,
    took_resp: bool,
}

impl CompEnv for Mock {
    fn next_resp(&mut self) -> Option<Resp> {
        let (r, p) = self.resps.pop_front()?;
        self.cur_payload = p;
        self.took_resp = true;
        Some(r)
    }
    fn head(&mut self) -> Option<HeadWqe> {
        let h = self.sq.front().map(|w| w.head)?;
        if self.state_only
            && !self.took_resp
            && !matches!(h.state, WqeState::Done | WqeState::Error)
        {
            return Some(HeadWqe::of_state(h.state));
        }
        Some(h)
    }
    fn set_status(&mut self, s: WcStatus) {
        self.ev.push(Ev::Status(s));
        if let Some(w) = self.sq.front_mut() {
            w.status = s;
        }
    }
    fn read_payload(&mut self) -> Result<u32, ()> {
        if self.copy_fails {
            return Err(());
        }
        let w = self.sq.front_mut().unwrap();
        w.resid -= self.cur_payload.min(w.resid);
        Ok(w.resid)
    }
    fn atomic_payload(&mut self) -> Result<(), ()> {
        if self.copy_fails {
            Err(())
        } else {
            Ok(())
        }
    }
    fn release_rd_atomic(&mut self) -> bool {
        let w = self.sq.front_mut().unwrap();
        core::mem::take(&mut w.has_rd_atomic)
    }
    fn check_sq_drained(&mut self, comp_psn: u32) {
        if comp_psn == self.req_psn {
            self.ev.push(Ev::Drained(comp_psn));
        }
    }
    fn complete(&mut self) {
        let w = self.sq.pop_front().unwrap();
        self.ev.push(Ev::Complete(w.id, w.status));
    }
    fn count(&mut self, index: usize) {
        self.ev.push(Ev::Count(index));
    }
    fn req_psn(&self) -> u32 {
        self.req_psn
    }
    fn rearm_retry_timer(&mut self) {
        self.ev.push(Ev::Rearm);
    }
    fn start_rnr_timer(&mut self, usecs: u32) {
        self.ev.push(Ev::Rnr(usecs));
    }
    fn qp_error(&mut self) {
        self.ev.push(Ev::QpError);
    }
}

const LIM: RetryLimits = RetryLimits {
    retry_cnt: 2,
    rnr_retry: 1,
};

/// A completer, its requester flags and a mock QP.
struct Bench {
    m: Mock,
    comp: CompInfo,
    req: ReqFlags,
    lim: RetryLimits,
}

impl Bench {
    fn new(psn: u32) -> Self {
        Self {
            m: Mock {
                req_psn: psn,
                ..Mock::default()
            },
            comp: CompInfo::new(psn, LIM),
            req: ReqFlags::default(),
            lim: LIM,
        }
    }

    /// Posts a WQE the requester sent whole: `npkts` PSNs from the
    /// requester's next.
    fn sent(&mut self, id: u64, wr_op: u32, npkts: u32, len: u32) {
        let first = self.m.req_psn;
        let last = psn_add(first, npkts - 1);
        self.m.req_psn = psn_add(last, 1);
        let mask = wr_opcode_mask(wr_op, QpType::Rc);
        self.m.sq.push_back(MockWqe {
            id,
            head: HeadWqe {
                state: WqeState::Pending,
                wr_op,
                wr_mask: mask,
                first_psn: first,
                last_psn: last,
            },
            resid: len,
            has_rd_atomic: matches!(
                wr_op,
                wr::RDMA_READ | wr::ATOMIC_CMP_AND_SWP | wr::ATOMIC_FETCH_AND_ADD
            ),
            status: WcStatus::Success,
        });
    }

    fn resp(&mut self, opcode: u8, psn: u32, syn: u8, payload: u32) {
        let mask = lookup(opcode).unwrap().mask();
        self.m.resps.push_back((
            Resp {
                psn,
                opcode,
                mask,
                syn,
            },
            payload,
        ));
    }

    fn run(&mut self, timeout: bool) -> bool {
        self.m.took_resp = false;
        run(
            &mut self.m,
            &mut self.comp,
            &mut self.req,
            RunInput {
                timeout,
                lim: self.lim,
            },
        )
    }

    /// Runs until the completer stops asking for more.
    fn drain(&mut self) {
        for _ in 0..100 {
            if !self.run(false) {
                return;
            }
        }
        panic!("completer never stops");
    }

    fn take(&mut self) -> Vec<Ev> {
        core::mem::take(&mut self.m.ev)
    }
}

/// Without a response, a run needs nothing of a WQE neither done nor
/// failed but its state: the kernel reads only that (`CompQp::head`), and
/// every outcome, the timeout's retries and their exhaustion included, is
/// the same as with the whole WQE.
#[test]
fn a_run_without_response_needs_only_the_state() {
    for state in [
        WqeState::Posted,
        WqeState::Processing,
        WqeState::Pending,
        WqeState::Done,
        WqeState::Error,
    ] {
        for retries in [0u8, 2] {
            let outcome = |state_only: bool| {
                let mut b = Bench::new(0);
                b.lim.retry_cnt = retries;
                b.comp = CompInfo::new(0, b.lim);
                b.m.state_only = state_only;
                b.sent(1, wr::RDMA_READ, 2, 2048);
                b.sent(2, wr::SEND, 1, 0);
                b.m.sq[0].head.state = state;
                let mut runs = Vec::new();
                for timeout in [true, false, true, true, true] {
                    runs.push((b.run(timeout), b.req, b.comp, b.take()));
                }
                runs
            };
            assert_eq!(outcome(false), outcome(true), "{state:?}, {retries} retries");
        }
    }
}

#[test]
fn send_acked() {
    let mut b = Bench::new(0);
    b.sent(1, wr::SEND, 3, 0);
    b.resp(RC_ACKNOWLEDGE, 2, ACK_UNLIMITED, 0);
    b.drain();
    assert_eq!(b.take(), [Ev::Complete(1, WcStatus::Success)]);
    assert_eq!(b.comp.psn, 3);
    assert_eq!(b.comp.opcode, None);
}

#[test]
fn coalesced_ack_completes_earlier_wqes() {
    let mut b = Bench::new(0xff_fffe);
    b.sent(1, wr::SEND, 1, 0);
    b.sent(2, wr::RDMA_WRITE, 2, 0);
    b.sent(3, wr::SEND, 1, 0);
    // One ACK for PSN 0 (after the wrap) acknowledges the first two.
    b.resp(RC_ACKNOWLEDGE, 0, ACK_UNLIMITED, 0);
    b.drain();
    let ev = b.take();
    assert_eq!(
        ev,
        [
            Ev::Complete(1, WcStatus::Success),
            Ev::Complete(2, WcStatus::Success),
            Ev::Rearm
        ]
    );
    assert_eq!(b.comp.psn, 1);
    assert_eq!(b.m.sq.len(), 1);
    // The last one's ACK.
    b.resp(RC_ACKNOWLEDGE, 1, ACK_UNLIMITED, 0);
    b.drain();
    assert_eq!(b.take(), [Ev::Complete(3, WcStatus::Success)]);
}

#[test]
fn ack_of_the_last_psn_during_a_retransmission_completes() {
    // A 3-packet send, sent whole; the timer fired and the requester
    // resent its first two packets (the WQE is processing again) when the
    // ACK of its last PSN arrives: the responder has all of it.
    let mut b = Bench::new(0x53c);
    b.sent(1, wr::SEND, 3, 0);
    b.m.sq[0].head.state = WqeState::Processing;
    b.m.req_psn = 0x53e;
    b.resp(RC_ACKNOWLEDGE, 0x53e, ACK_UNLIMITED, 0);
    b.drain();
    assert_eq!(b.take(), [Ev::Complete(1, WcStatus::Success)]);
    assert_eq!(b.comp.psn, 0x53f);
    assert!(b.m.sq.is_empty());
    // Left in the queue (as before), the WQE would wait for a response
    // that never comes: comp.psn past it, and once the requester resent
    // its last packet, nothing unanswered to retry or time.
    let mut b = Bench::new(0x53c);
    b.sent(1, wr::SEND, 3, 0);
    b.m.sq[0].head.state = WqeState::Processing;
    b.resp(RC_ACKNOWLEDGE, 0x53d, ACK_UNLIMITED, 0);
    b.drain();
    // An ACK of a middle PSN only moves the window (the last PSN is
    // still unanswered: the timer runs on).
    assert_eq!(b.take(), [Ev::Rearm]);
    assert_eq!(b.comp.psn, 0x53e);
    assert_eq!(b.m.sq.len(), 1);
}

#[test]
fn ack_of_a_middle_packet_moves_the_window() {
    let mut b = Bench::new(0);
    b.sent(1, wr::RDMA_WRITE, 4, 0);
    b.req.wait_psn = true;
    b.resp(RC_ACKNOWLEDGE, 1, ACK_UNLIMITED, 0);
    assert!(b.run(false));
    assert_eq!(b.comp.psn, 2);
    assert!(!b.req.wait_psn);
    assert!(b.m.ev.is_empty());
}

#[test]
fn read_responses() {
    let mut b = Bench::new(10);
    b.sent(7, wr::RDMA_READ, 3, 600);
    b.req.need_rd_atomic = true;
    b.resp(RC_RDMA_READ_RESPONSE_FIRST, 10, ACK_UNLIMITED, 256);
    b.resp(RC_RDMA_READ_RESPONSE_MIDDLE, 11, 0, 256);
    b.resp(RC_RDMA_READ_RESPONSE_LAST, 12, ACK_UNLIMITED, 88);
    assert!(b.run(false));
    assert_eq!(b.comp.opcode, Some(RC_RDMA_READ_RESPONSE_FIRST));
    assert_eq!(b.comp.psn, 11);
    assert!(b.run(false));
    assert_eq!(b.comp.opcode, Some(RC_RDMA_READ_RESPONSE_MIDDLE));
    // The last completes the read, frees its credit: the requester that
    // waited for one runs again.
    assert!(b.run(false));
    assert_eq!(b.take(), [Ev::Complete(7, WcStatus::Success)]);
    assert!(!b.req.need_rd_atomic);
    assert_eq!(b.comp.psn, 13);
    assert_eq!(b.comp.opcode, None);
}

#[test]
fn read_only_and_atomic() {
    let mut b = Bench::new(0);
    b.sent(1, wr::RDMA_READ, 1, 10);
    b.sent(2, wr::ATOMIC_FETCH_AND_ADD, 1, 8);
    b.resp(RC_RDMA_READ_RESPONSE_ONLY, 0, ACK_UNLIMITED, 10);
    b.resp(RC_ATOMIC_ACKNOWLEDGE, 1, ACK_UNLIMITED, 0);
    b.drain();
    assert_eq!(
        b.take(),
        [
            Ev::Complete(1, WcStatus::Success),
            Ev::Complete(2, WcStatus::Success)
        ]
    );
}

#[test]
fn lost_read_response_then_timeout_retries() {
    let mut b = Bench::new(0);
    b.sent(1, wr::RDMA_READ, 3, 768);
    b.resp(RC_RDMA_READ_RESPONSE_FIRST, 0, ACK_UNLIMITED, 256);
    // The middle is lost: the last is ignored.
    b.resp(RC_RDMA_READ_RESPONSE_LAST, 2, ACK_UNLIMITED, 256);
    b.drain();
    assert_eq!(b.comp.psn, 1);
    assert_eq!(b.m.sq.len(), 1);
    b.take();
    // The retransmission timer fires: retry from PSN 1.
    assert!(b.run(true));
    assert_eq!(b.take(), [Ev::Count(CNT_COMP_RETRY)]);
    assert!(b.req.need_retry);
    assert!(b.comp.started_retry);
    assert_eq!(b.comp.retry_cnt, 1);
    // Until the requester retried, the completer stays out.
    assert!(!b.run(false));
    assert!(b.m.ev.is_empty());
}

#[test]
fn read_retry_restarting_with_first() {
    let mut b = Bench::new(0);
    b.sent(1, wr::RDMA_READ, 3, 768);
    b.resp(RC_RDMA_READ_RESPONSE_FIRST, 0, ACK_UNLIMITED, 256);
    b.drain();
    // The retried read answers from its first response again: accepted
    // (an old PSN, ignored), no sequence error.
    b.resp(RC_RDMA_READ_RESPONSE_FIRST, 0, ACK_UNLIMITED, 256);
    b.drain();
    assert!(b.m.ev.iter().all(|e| !matches!(e, Ev::QpError)));
}

#[test]
fn psn_sequence_nak_retries() {
    let mut b = Bench::new(100);
    b.sent(1, wr::SEND, 1, 0);
    b.sent(2, wr::SEND, 1, 0);
    b.sent(3, wr::SEND, 1, 0);
    b.req.wait_psn = true;
    // The responder missed PSN 101: its NAK acks 100.
    b.resp(RC_ACKNOWLEDGE, 101, NAK_PSN_SEQ_ERROR, 0);
    assert!(b.run(false));
    assert_eq!(
        b.take(),
        [
            Ev::Complete(1, WcStatus::Success),
            Ev::Count(CNT_COMP_RETRY)
        ]
    );
    assert_eq!(b.comp.psn, 101);
    assert!(b.req.need_retry);
    assert!(!b.req.wait_psn);
    // A second NAK while the retry is under way: nothing more.
    b.req.need_retry = false;
    b.resp(RC_ACKNOWLEDGE, 101, NAK_PSN_SEQ_ERROR, 0);
    assert!(b.run(false));
    assert!(b.take().is_empty());
    assert!(!b.req.need_retry);

    // A NAK in the middle of a WQE acks its first packets and counts.
    let mut b = Bench::new(100);
    b.sent(1, wr::RDMA_WRITE, 3, 0);
    b.req.wait_psn = true;
    b.resp(RC_ACKNOWLEDGE, 102, NAK_PSN_SEQ_ERROR, 0);
    assert!(b.run(false));
    assert_eq!(
        b.take(),
        [Ev::Count(CNT_RCV_SEQ_ERR), Ev::Count(CNT_COMP_RETRY)]
    );
    assert_eq!(b.comp.psn, 102);
    assert!(!b.req.wait_psn);
    // An old NAK does not move it back.
    b.req.need_retry = false;
    b.comp.started_retry = false;
    b.resp(RC_ACKNOWLEDGE, 101, NAK_PSN_SEQ_ERROR, 0);
    b.run(false);
    assert_eq!(b.comp.psn, 102);
}

#[test]
fn remote_naks_fail_the_wqe() {
    for (syn, status) in [
        (NAK_INVALID_REQ, WcStatus::RemInvReq),
        (NAK_REM_ACC_ERR, WcStatus::RemAccess),
        (NAK_REM_OP_ERR, WcStatus::RemOp),
        // Invalid RD request and unknown codes: operational errors.
        (NAK | 4, WcStatus::RemOp),
        (NAK | 0x1f, WcStatus::RemOp),
    ] {
        let mut b = Bench::new(0);
        b.sent(1, wr::RDMA_WRITE, 1, 0);
        b.resp(RC_ACKNOWLEDGE, 0, syn, 0);
        assert!(!b.run(false));
        assert_eq!(
            b.take(),
            [Ev::Status(status), Ev::Complete(1, status), Ev::QpError]
        );
    }
}

#[test]
fn rnr_nak_waits_then_gives_up() {
    let mut b = Bench::new(0);
    b.sent(1, wr::SEND, 1, 0);
    // Timer code 14: 1.28 ms.
    b.resp(RC_ACKNOWLEDGE, 0, RNR_NAK | 14, 0);
    assert!(!b.run(false));
    assert_eq!(b.take(), [Ev::Count(CNT_RCV_RNR), Ev::Rnr(1280)]);
    assert!(b.req.wait_for_rnr_timer);
    assert_eq!(b.comp.rnr_retry, 0);
    // The retried send gets another: no retry left.
    b.resp(RC_ACKNOWLEDGE, 0, RNR_NAK | 14, 0);
    assert!(!b.run(false));
    assert_eq!(
        b.take(),
        [
            Ev::Count(CNT_RCV_RNR),
            Ev::Count(CNT_RNR_RETRY_EXCEEDED),
            Ev::Status(WcStatus::RnrRetryExc),
            Ev::Complete(1, WcStatus::RnrRetryExc),
            Ev::QpError
        ]
    );
}

#[test]
fn rnr_retry_7_is_for_ever() {
    let mut b = Bench::new(0);
    b.lim.rnr_retry = RETRY_INFINITE;
    b.comp.reset_retry(b.lim);
    b.sent(1, wr::SEND, 1, 0);
    for _ in 0..20 {
        b.resp(RC_ACKNOWLEDGE, 0, RNR_NAK, 0);
        assert!(!b.run(false));
        assert_eq!(b.take(), [Ev::Count(CNT_RCV_RNR), Ev::Rnr(655_360)]);
    }
    // Then an ACK resets the budgets and completes.
    b.resp(RC_ACKNOWLEDGE, 0, ACK_UNLIMITED, 0);
    b.drain();
    assert_eq!(b.take(), [Ev::Complete(1, WcStatus::Success)]);
    assert_eq!(b.comp.rnr_retry, RETRY_INFINITE);
}

#[test]
fn timeouts_exhaust_retry_cnt() {
    let mut b = Bench::new(0);
    b.sent(1, wr::SEND, 1, 0);
    for left in [1, 0] {
        assert!(b.run(true));
        assert_eq!(b.take(), [Ev::Count(CNT_COMP_RETRY)]);
        assert_eq!(b.comp.retry_cnt, left);
        // The requester retransmits.
        assert!(b.req.need_retry);
        b.req.need_retry = false;
    }
    assert!(!b.run(true));
    assert_eq!(
        b.take(),
        [
            Ev::Count(CNT_RETRY_EXCEEDED),
            Ev::Status(WcStatus::RetryExc),
            Ev::Complete(1, WcStatus::RetryExc),
            Ev::QpError
        ]
    );
}

#[test]
fn retry_cnt_7_is_for_ever() {
    let mut b = Bench::new(0);
    b.lim.retry_cnt = RETRY_INFINITE;
    b.comp.reset_retry(b.lim);
    b.sent(1, wr::SEND, 1, 0);
    for _ in 0..50 {
        assert!(b.run(true));
        assert_eq!(b.take(), [Ev::Count(CNT_COMP_RETRY)]);
        b.req.need_retry = false;
    }
    assert_eq!(b.comp.retry_cnt, RETRY_INFINITE);
}

#[test]
fn timeout_with_nothing_outstanding() {
    let mut b = Bench::new(0);
    // No WQE: nothing to retry; no timer to rearm.
    assert!(!b.run(true));
    assert!(b.take().is_empty());
    // A posted WQE not yet sent: nothing either.
    b.sent(1, wr::SEND, 1, 0);
    b.m.sq[0].head.state = WqeState::Posted;
    assert!(!b.run(true));
    assert!(b.take().is_empty());
    // Everything sent was answered (req_psn == comp.psn): count down, no
    // retry.
    b.m.sq[0].head.state = WqeState::Pending;
    b.comp.psn = b.m.req_psn;
    assert!(b.run(true));
    assert!(b.take().is_empty());
    assert!(!b.req.need_retry);
    assert_eq!(b.comp.retry_cnt, 1);
}

#[test]
fn exit_rearms_the_timer_while_unanswered() {
    let mut b = Bench::new(0);
    b.sent(1, wr::SEND, 1, 0);
    assert!(!b.run(false));
    assert_eq!(b.take(), [Ev::Rearm]);
}

#[test]
fn done_and_error_wqes() {
    let mut b = Bench::new(0);
    // UC/UD or local operations: done at the requester.
    b.sent(1, wr::SEND, 1, 0);
    b.m.sq[0].head.state = WqeState::Done;
    b.sent(2, wr::LOCAL_INV, 1, 0);
    b.m.sq[1].head.state = WqeState::Done;
    b.m.req_psn = 0;
    b.req.wait_fence = true;
    // The fenced requester may go on.
    assert!(b.run(false));
    let ev = b.take();
    assert_eq!(
        ev,
        [
            Ev::Complete(1, WcStatus::Success),
            Ev::Complete(2, WcStatus::Success)
        ]
    );
    assert!(!b.req.wait_fence);
    // The requester failed one.
    b.sent(3, wr::SEND, 1, 0);
    b.m.sq[0].head.state = WqeState::Error;
    b.m.sq[0].status = WcStatus::LocQpOp;
    assert!(!b.run(false));
    assert_eq!(b.take(), [Ev::Complete(3, WcStatus::LocQpOp), Ev::QpError]);
}

#[test]
fn fenced_requester_runs_again_after_completion() {
    let mut b = Bench::new(0);
    b.sent(1, wr::SEND, 1, 0);
    b.req.wait_fence = true;
    b.resp(RC_ACKNOWLEDGE, 0, ACK_UNLIMITED, 0);
    assert!(b.run(false));
    assert!(!b.req.wait_fence);
}

#[test]
fn stale_and_bad_responses() {
    // An old duplicate ACK is ignored.
    let mut b = Bench::new(5);
    b.sent(1, wr::SEND, 2, 0);
    b.resp(RC_ACKNOWLEDGE, 3, ACK_UNLIMITED, 0);
    assert!(b.run(false));
    assert!(b.take().is_empty());
    assert_eq!(b.comp.psn, 5);
    // A response with no WQE waiting is dropped.
    let mut b = Bench::new(0);
    b.resp(RC_ACKNOWLEDGE, 0, ACK_UNLIMITED, 0);
    assert!(b.run(false));
    assert!(b.take().is_empty());

    // A read middle with no first: a bad response.
    let mut b = Bench::new(0);
    b.sent(1, wr::RDMA_READ, 3, 768);
    b.resp(RC_RDMA_READ_RESPONSE_MIDDLE, 0, 0, 256);
    assert!(!b.run(false));
    assert_eq!(
        b.take(),
        [
            Ev::Status(WcStatus::BadResp),
            Ev::Complete(1, WcStatus::BadResp),
            Ev::QpError
        ]
    );
    // A read response for a send: fatal.
    let mut b = Bench::new(0);
    b.sent(1, wr::SEND, 1, 0);
    b.resp(RC_RDMA_READ_RESPONSE_ONLY, 0, ACK_UNLIMITED, 0);
    assert!(!b.run(false));
    assert_eq!(b.take()[0], Ev::Status(WcStatus::Fatal));
    // An atomic ACK for a read.
    let mut b = Bench::new(0);
    b.sent(1, wr::RDMA_READ, 1, 8);
    b.resp(RC_ATOMIC_ACKNOWLEDGE, 0, ACK_UNLIMITED, 0);
    assert!(!b.run(false));
    assert_eq!(b.take()[0], Ev::Status(WcStatus::BadResp));
    // A read response whose AETH is a NAK.
    let mut b = Bench::new(0);
    b.sent(1, wr::RDMA_READ, 1, 8);
    b.resp(RC_RDMA_READ_RESPONSE_ONLY, 0, NAK_REM_ACC_ERR, 0);
    assert!(!b.run(false));
    assert_eq!(b.take()[0], Ev::Status(WcStatus::BadResp));
    // A reserved syndrome type.
    let mut b = Bench::new(0);
    b.sent(1, wr::SEND, 1, 0);
    b.resp(RC_ACKNOWLEDGE, 0, RSVD, 0);
    assert!(!b.run(false));
    assert_eq!(b.take()[0], Ev::Status(WcStatus::BadResp));
    // A local copy failure.
    let mut b = Bench::new(0);
    b.sent(1, wr::RDMA_READ, 1, 8);
    b.m.copy_fails = true;
    b.resp(RC_RDMA_READ_RESPONSE_ONLY, 0, ACK_UNLIMITED, 8);
    assert!(!b.run(false));
    assert_eq!(b.take()[0], Ev::Status(WcStatus::LocProt));
    let mut b = Bench::new(0);
    b.sent(1, wr::ATOMIC_CMP_AND_SWP, 1, 8);
    b.m.copy_fails = true;
    b.resp(RC_ATOMIC_ACKNOWLEDGE, 0, ACK_UNLIMITED, 0);
    assert!(!b.run(false));
    assert_eq!(b.take()[0], Ev::Status(WcStatus::LocProt));
}

#[test]
fn ack_past_a_pending_read_retries() {
    let mut b = Bench::new(0);
    b.sent(1, wr::RDMA_READ, 2, 512);
    b.sent(2, wr::SEND, 1, 0);
    // The send's ACK came, the read's responses did not.
    b.resp(RC_ACKNOWLEDGE, 2, ACK_UNLIMITED, 0);
    assert!(b.run(false));
    assert_eq!(b.take(), [Ev::Count(CNT_COMP_RETRY)]);
    assert!(b.req.need_retry);
}

#[test]
fn atomic_write_acked_by_empty_read_response() {
    let mut b = Bench::new(0);
    b.sent(1, wr::ATOMIC_WRITE, 1, 8);
    b.resp(RC_RDMA_READ_RESPONSE_ONLY, 0, ACK_UNLIMITED, 0);
    b.drain();
    assert_eq!(b.take(), [Ev::Complete(1, WcStatus::Success)]);
}

#[test]
fn decoding() {
    assert_eq!(decode_syndrome(ACK_UNLIMITED), AckKind::Ack);
    assert_eq!(decode_syndrome(RNR_NAK | 3), AckKind::RnrNak(3));
    assert_eq!(
        decode_syndrome(NAK_REM_OP_ERR),
        AckKind::Nak(NAK_REM_OP_ERR)
    );
    assert_eq!(decode_syndrome(RSVD), AckKind::Reserved);
    // Bit 7 makes a reserved type, as in the C driver.
    assert_eq!(decode_syndrome(0x80), AckKind::Reserved);
    assert_eq!(rnr_timeout_usecs(0), 655_360);
    assert_eq!(rnr_timeout_usecs(1), 10);
    assert_eq!(rnr_timeout_usecs(25), 61_440);
    assert_eq!(rnr_timeout_usecs(31), 491_520);
    assert_eq!(rnr_timeout_usecs(RNR_NAK | 31), 491_520);
    assert_eq!(wc_opcode(wr::SEND_WITH_INV), 0);
    assert_eq!(wc_opcode(wr::RDMA_WRITE_WITH_IMM), 1);
    assert_eq!(wc_opcode(wr::RDMA_READ), 2);
    assert_eq!(wc_opcode(wr::ATOMIC_CMP_AND_SWP), 3);
    assert_eq!(wc_opcode(wr::ATOMIC_FETCH_AND_ADD), 4);
    assert_eq!(wc_opcode(wr::BIND_MW), 5);
    assert_eq!(wc_opcode(wr::LOCAL_INV), 6);
    assert_eq!(wc_opcode(wr::FLUSH), 8);
    assert_eq!(wc_opcode(wr::ATOMIC_WRITE), 9);
    assert_eq!(wc_opcode(wr::REG_MR), 10);
    assert_eq!(wc_opcode(99), 0xff);
    assert_eq!(WcStatus::RnrRetryExc.as_raw(), 13);
    assert_eq!(WcStatus::WrFlush.as_raw(), 5);
    assert_eq!(get_wqe(None, true), CompState::Done);
    assert_eq!(get_wqe(None, false), CompState::Exit);
}

#[test]
fn stale_ack_during_a_read_is_ignored() {
    let mut b = Bench::new(0);
    b.sent(1, wr::SEND, 1, 0);
    b.sent(2, wr::RDMA_READ, 3, 768);
    b.resp(RC_RDMA_READ_RESPONSE_FIRST, 1, ACK_UNLIMITED, 256);
    b.drain();
    assert_eq!(b.take(), [Ev::Complete(1, WcStatus::Success), Ev::Rearm]);
    assert_eq!(b.comp.opcode, Some(RC_RDMA_READ_RESPONSE_FIRST));
    // The send's ACK again (the responder saw it twice): ignored, the
    // read goes on.
    b.resp(RC_ACKNOWLEDGE, 0, ACK_UNLIMITED, 0);
    b.resp(RC_RDMA_READ_RESPONSE_MIDDLE, 2, 0, 256);
    b.resp(RC_RDMA_READ_RESPONSE_LAST, 3, ACK_UNLIMITED, 256);
    b.drain();
    assert_eq!(b.take(), [Ev::Complete(2, WcStatus::Success)]);
    // A NAK there is looked at.
    let mut b = Bench::new(0);
    b.sent(1, wr::SEND, 1, 0);
    b.sent(2, wr::RDMA_READ, 3, 768);
    b.resp(RC_RDMA_READ_RESPONSE_FIRST, 1, ACK_UNLIMITED, 256);
    b.drain();
    b.take();
    b.resp(RC_ACKNOWLEDGE, 0, NAK_REM_ACC_ERR, 0);
    assert!(!b.run(false));
    assert_eq!(b.take()[0], Ev::Status(WcStatus::RemAccess));
}

#[test]
fn plain_ack_never_completes_a_read_or_atomic() {
    // The responder ACKs a duplicate write with the PSN of the atomic
    // after it: the atomic waits for its ATOMIC ACKNOWLEDGE (a retry
    // replays it).
    for (op, len) in [(wr::ATOMIC_FETCH_AND_ADD, 8), (wr::RDMA_READ, 8)] {
        let mut b = Bench::new(0);
        b.sent(1, op, 1, len);
        b.resp(RC_ACKNOWLEDGE, 0, ACK_UNLIMITED, 0);
        assert!(b.run(false));
        assert!(b.take().is_empty());
        assert_eq!(b.m.sq.len(), 1);
        assert_eq!(b.comp.psn, 0);
    }
}
