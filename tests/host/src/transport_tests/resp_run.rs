// SPDX-License-Identifier: GPL-2.0

//! The responder's state walk, run against a mock QP that records what it
//! does: sends, writes, reads with their replays, atomics, and the error
//! classes' NAKs.

use crate::keys::*;
use crate::params::*;
use crate::qp_attr::QpType::{self, *};
use crate::rxe_comp_check::WcStatus;
use crate::rxe_resp_check::*;
use crate::rxe_wire::ext::{syndrome::*, Atmeth, Reth};
use crate::rxe_wire::opcode::{code::*, lookup};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    Ack(u8, u8, u32, u32),
    Read(u8, u32, u32, u64),
    Write(u64),
    Recv,
    Atomic(u64),
    AtomicWrite(u64),
    Complete(WcStatus),
    Invalidate(u32),
    AccessEvent,
    ResetWqe,
    Release,
    Count(usize),
    QpError,
}

#[derive(Default)]
struct Mock {
    reqs: VecDeque<ReqPkt>,
    recv_wqes: u32,
    held_wqe: bool,
    recv_len: u32,
    bad_rkeys: Vec<u32>,
    cq_full: bool,
    /// The QP is in ERR.
    err: bool,
    /// The consumer moves the QP to ERR as soon as it sees a completion
    /// (librdmacm's rdma_disconnect() after its last one).
    err_on_complete: bool,
    ev: Vec<Ev>,
    atomic_val: u64,
    /// The write length the last completion was given.
    write_len: Option<u32>,
    /// Requests read (`peek_req`).
    peeks: u32,
}

impl RespEnv for Mock {
    fn peek_req(&mut self) -> Option<ReqPkt> {
        self.peeks += 1;
        self.reqs.front().copied()
    }
    fn has_req(&mut self) -> bool {
        !self.reqs.is_empty()
    }
    fn take_recv_wqe(&mut self) -> Result<(), RespState> {
        if self.recv_wqes == 0 {
            return Err(RespState::ErrRnr);
        }
        self.held_wqe = true;
        Ok(())
    }
    fn has_recv_wqe(&self) -> bool {
        self.held_wqe
    }
    fn recv_len(&self) -> u32 {
        self.recv_len
    }
    fn resolve_rkey(
        &mut self,
        rkey: u32,
        _a: u32,
        _iova: u64,
        _len: u32,
        _w: bool,
    ) -> Result<u64, ()> {
        if self.bad_rkeys.contains(&rkey) {
            Err(())
        } else {
            Ok(0)
        }
    }
    fn drop_mr(&mut self) {}
    fn recv_data(&mut self) -> Result<(), RespState> {
        self.ev.push(Ev::Recv);
        Ok(())
    }
    fn write_data(&mut self, iova: u64) -> Result<(), ()> {
        self.ev.push(Ev::Write(iova));
        Ok(())
    }
    fn invalidate(&mut self, rkey: u32) -> Result<(), ()> {
        self.ev.push(Ev::Invalidate(rkey));
        if self.bad_rkeys.contains(&rkey) {
            Err(())
        } else {
            Ok(())
        }
    }
    fn recheck_mr(&mut self, rkey: u32) -> Result<(), ()> {
        if self.bad_rkeys.contains(&rkey) {
            Err(())
        } else {
            Ok(())
        }
    }
    fn send_read_response(&mut self, rr: &ReadResp, iova: u64, _msn: u32) -> Result<(), RespState> {
        self.ev.push(Ev::Read(rr.opcode, rr.psn, rr.payload, iova));
        Ok(())
    }
    fn atomic(&mut self, iova: u64) -> Result<u64, RespState> {
        self.ev.push(Ev::Atomic(iova));
        self.atomic_val += 1;
        Ok(self.atomic_val)
    }
    fn atomic_write(&mut self, iova: u64) -> Result<(), RespState> {
        self.ev.push(Ev::AtomicWrite(iova));
        Ok(())
    }
    fn flush(&mut self, _iova: u64, _len: u32, _t: u8, _w: bool) -> Result<(), ()> {
        Ok(())
    }
    fn complete(&mut self, status: WcStatus, write_len: u32) -> Result<(), ()> {
        self.write_len = Some(write_len);
        if self.cq_full {
            return Err(());
        }
        if self.held_wqe {
            self.held_wqe = false;
            self.recv_wqes -= 1;
            self.ev.push(Ev::Complete(status));
            self.err |= self.err_on_complete;
        }
        Ok(())
    }
    fn in_error(&self) -> bool {
        self.err
    }
    fn send_ack(&mut self, ack: &Ack, msn: u32, orig: u64) {
        let _ = orig;
        self.ev.push(Ev::Ack(ack.opcode, ack.syn, ack.psn, msn));
        if ack.opcode == RC_ATOMIC_ACKNOWLEDGE {
            self.ev.push(Ev::Atomic(orig | 1 << 63));
        }
    }
    fn reset_recv_wqe(&mut self) {
        self.ev.push(Ev::ResetWqe);
    }
    fn access_error_event(&mut self) {
        self.ev.push(Ev::AccessEvent);
    }
    fn release_req(&mut self) {
        self.reqs.pop_front();
        self.ev.push(Ev::Release);
    }
    fn count(&mut self, index: usize) {
        self.ev.push(Ev::Count(index));
    }
    fn qp_error(&mut self) {
        self.ev.push(Ev::QpError);
    }
}

struct Bench {
    m: Mock,
    cfg: RespCfg,
    info: RespInfo,
    ctx: RdmaCtx,
    slots: [ReplayRes; 4],
    head: usize,
}

impl Bench {
    fn new(t: QpType, psn: u32) -> Self {
        Self {
            m: Mock {
                recv_len: 1 << 20,
                ..Mock::default()
            },
            cfg: RespCfg {
                t,
                mtu: 256,
                access: ACCESS_REMOTE_READ | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_ATOMIC,
                max_dest_rd_atomic: 4,
                has_srq: false,
                min_rnr_timer: 12,
            },
            info: RespInfo::new(psn),
            ctx: RdmaCtx::default(),
            slots: [ReplayRes::default(); 4],
            head: 0,
        }
    }

    /// A request with a RETH for `len` bytes at `va` with `rkey`.
    fn push_rdma(
        &mut self,
        opcode: u8,
        psn: u32,
        payload: u32,
        va: u64,
        rkey: u32,
        len: u32,
    ) -> &mut ReqPkt {
        let p = self.push(opcode, psn, payload);
        p.reth = Some(Reth { va, rkey, len });
        p
    }

    fn push(&mut self, opcode: u8, psn: u32, payload: u32) -> &mut ReqPkt {
        self.m.reqs.push_back(ReqPkt {
            psn,
            opcode,
            mask: lookup(opcode).unwrap().mask(),
            payload,
            pad: (payload.wrapping_neg() & 3) as u8,
            ack_req: true,
            reth: None,
            atmeth: None,
            flush_type: 0,
            flush_level: 0,
            inv_rkey: None,
        });
        self.m.reqs.back_mut().unwrap()
    }

    fn run(&mut self) -> bool {
        let mut r = Responder {
            info: &mut self.info,
            ctx: &mut self.ctx,
            res: Resources::new(&mut self.slots, &mut self.head),
        };
        run(&mut self.m, &self.cfg, &mut r)
    }

    fn drain(&mut self) -> Vec<Ev> {
        for _ in 0..100 {
            if !self.run() {
                return core::mem::take(&mut self.m.ev);
            }
        }
        panic!("responder never stops");
    }
}

#[test]
fn rc_send_consumes_a_receive_and_acks() {
    let mut b = Bench::new(Rc, 0xff_ffff);
    b.m.recv_wqes = 1;
    b.push(RC_SEND_FIRST, 0xff_ffff, 256).ack_req = false;
    b.push(RC_SEND_MIDDLE, 0, 256).ack_req = false;
    b.push(RC_SEND_LAST_WITH_IMMEDIATE, 1, 3);
    assert_eq!(
        b.drain(),
        [
            Ev::Recv,
            Ev::Release,
            Ev::Recv,
            Ev::Release,
            Ev::Recv,
            Ev::Complete(WcStatus::Success),
            Ev::Ack(RC_ACKNOWLEDGE, ACK_UNLIMITED, 1, 1),
            Ev::Release
        ]
    );
    assert_eq!((b.info.psn, b.info.msn), (2, 1));
}

#[test]
fn rnr_nak_without_receive() {
    let mut b = Bench::new(Rc, 5);
    b.push(RC_SEND_ONLY, 5, 10);
    assert_eq!(
        b.drain(),
        [
            Ev::Count(CNT_SND_RNR),
            Ev::Ack(RC_ACKNOWLEDGE, RNR_NAK | 12, 5, 0),
            Ev::Release
        ]
    );
    // The PSN did not move: the retried send is the expected one.
    assert_eq!(b.info.psn, 5);
    b.m.recv_wqes = 1;
    b.push(RC_SEND_ONLY, 5, 10);
    assert_eq!(
        b.drain(),
        [
            Ev::Recv,
            Ev::Complete(WcStatus::Success),
            Ev::Ack(RC_ACKNOWLEDGE, ACK_UNLIMITED, 5, 1),
            Ev::Release
        ]
    );
}

#[test]
fn out_of_sequence_and_duplicates() {
    let mut b = Bench::new(Rc, 10);
    b.m.recv_wqes = 5;
    b.push(RC_SEND_ONLY, 12, 1);
    b.push(RC_SEND_ONLY, 13, 1);
    assert_eq!(
        b.drain(),
        [
            Ev::Count(CNT_OUT_OF_SEQ_REQ),
            Ev::Ack(RC_ACKNOWLEDGE, NAK_PSN_SEQ_ERROR, 10, 0),
            Ev::Release,
            Ev::Release
        ]
    );
    b.push(RC_SEND_ONLY, 10, 1);
    b.drain();
    // The same send again: ACK the last PSN again, no second receive.
    b.push(RC_SEND_ONLY, 10, 1);
    assert_eq!(
        b.drain(),
        [
            Ev::Count(CNT_DUP_REQ),
            Ev::Ack(RC_ACKNOWLEDGE, ACK_UNLIMITED, 10, 1),
            Ev::Release
        ]
    );
}

#[test]
fn write_then_write_with_immediate() {
    let mut b = Bench::new(Rc, 0);
    b.m.recv_wqes = 1;
    let p = b.push_rdma(RC_RDMA_WRITE_FIRST, 0, 256, 0x1000, 0x77, 300);
    p.ack_req = false;
    b.push(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, 1, 44);
    assert_eq!(
        b.drain(),
        [
            Ev::Write(0x1000),
            Ev::Release,
            Ev::Write(0x1100),
            Ev::Complete(WcStatus::Success),
            Ev::Ack(RC_ACKNOWLEDGE, ACK_UNLIMITED, 1, 1),
            Ev::Release
        ]
    );
    // An empty write touches nothing.
    let p = b.push(RC_RDMA_WRITE_ONLY, 2, 0);
    p.reth = Some(Reth {
        va: 0,
        rkey: 0xdead,
        len: 0,
    });
    b.m.bad_rkeys.push(0xdead);
    assert_eq!(
        b.drain(),
        [Ev::Ack(RC_ACKNOWLEDGE, ACK_UNLIMITED, 2, 2), Ev::Release]
    );
}

#[test]
fn write_only_with_immediate_completes_with_its_own_length() {
    let mut b = Bench::new(Rc, 0);
    b.m.recv_wqes = 1;
    b.push_rdma(RC_RDMA_WRITE_ONLY, 0, 128, 0x1000, 0x77, 128);
    b.drain();
    assert_eq!(b.m.write_len, None);
    b.push_rdma(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 1, 100, 0x2000, 0x77, 100);
    assert_eq!(
        b.drain(),
        [
            Ev::Write(0x2000),
            Ev::Complete(WcStatus::Success),
            Ev::Ack(RC_ACKNOWLEDGE, ACK_UNLIMITED, 1, 2),
            Ev::Release
        ]
    );
    // The length of the request the completion ends, set by its own RETH.
    assert_eq!(b.m.write_len, Some(100));
}

#[test]
fn rkey_violation_naks_and_errors() {
    let mut b = Bench::new(Rc, 0);
    b.m.bad_rkeys.push(0x99);
    let p = b.push(RC_RDMA_WRITE_ONLY, 0, 8);
    p.reth = Some(Reth {
        va: 0x1000,
        rkey: 0x99,
        len: 8,
    });
    assert_eq!(
        b.drain(),
        [
            Ev::AccessEvent,
            Ev::Ack(RC_ACKNOWLEDGE, NAK_REM_ACC_ERR, 0, 0),
            Ev::Release,
            Ev::QpError
        ]
    );
}

#[test]
fn access_and_sequence_errors_are_class_c() {
    let mut b = Bench::new(Rc, 0);
    b.cfg.access = 0;
    let p = b.push(RC_RDMA_READ_REQUEST, 0, 0);
    p.reth = Some(Reth {
        va: 0,
        rkey: 1,
        len: 8,
    });
    assert_eq!(
        b.drain(),
        [
            Ev::Ack(RC_ACKNOWLEDGE, NAK_INVALID_REQ, 0, 0),
            Ev::Release,
            Ev::QpError
        ]
    );
    let mut b = Bench::new(Rc, 0);
    b.push(RC_SEND_LAST, 0, 4);
    assert_eq!(
        b.drain(),
        [
            Ev::Ack(RC_ACKNOWLEDGE, NAK_INVALID_REQ, 0, 0),
            Ev::Release,
            Ev::QpError
        ]
    );
    // A first packet shorter than the MTU.
    let mut b = Bench::new(Rc, 0);
    b.m.recv_wqes = 1;
    b.push(RC_SEND_FIRST, 0, 100);
    assert_eq!(
        b.drain(),
        [
            Ev::Complete(WcStatus::RemInvReq),
            Ev::Ack(RC_ACKNOWLEDGE, NAK_INVALID_REQ, 0, 0),
            Ev::Release,
            Ev::QpError
        ]
    );
    // A completion queue overflow: class G.
    let mut b = Bench::new(Rc, 0);
    b.m.recv_wqes = 1;
    b.m.cq_full = true;
    b.push(RC_SEND_ONLY, 0, 4);
    assert_eq!(b.drain(), [Ev::Recv, Ev::QpError]);
}

#[test]
fn read_responses_and_replay() {
    let mut b = Bench::new(Rc, 100);
    let p = b.push(RC_RDMA_READ_REQUEST, 100, 0);
    p.reth = Some(Reth {
        va: 0x4000,
        rkey: 0x55,
        len: 600,
    });
    // One response per run; the request stays queued until the last.
    assert!(b.run());
    assert!(b.run());
    assert!(b.run());
    assert_eq!(
        core::mem::take(&mut b.m.ev),
        [
            Ev::Read(RC_RDMA_READ_RESPONSE_FIRST, 100, 256, 0x4000),
            Ev::Read(RC_RDMA_READ_RESPONSE_MIDDLE, 101, 256, 0x4100),
            Ev::Read(RC_RDMA_READ_RESPONSE_LAST, 102, 88, 0x4200),
            Ev::Release
        ]
    );
    assert_eq!((b.info.psn, b.info.msn, b.info.res), (103, 1, None));
    // The request was read once, not again for each response.
    assert_eq!(b.m.peeks, 1);
    // The requester lost the last response and asks for it again.
    let p = b.push(RC_RDMA_READ_REQUEST, 102, 0);
    p.reth = Some(Reth {
        va: 0x4200,
        rkey: 0x55,
        len: 88,
    });
    assert_eq!(
        b.drain(),
        [
            Ev::Count(CNT_DUP_REQ),
            Ev::Read(RC_RDMA_READ_RESPONSE_LAST, 102, 88, 0x4200),
            Ev::Release
        ]
    );
    assert_eq!((b.info.psn, b.info.msn), (103, 1));
    // An empty read: one empty ONLY response.
    let p = b.push(RC_RDMA_READ_REQUEST, 103, 0);
    p.reth = Some(Reth {
        va: 0,
        rkey: 0,
        len: 0,
    });
    assert_eq!(
        b.drain(),
        [Ev::Read(RC_RDMA_READ_RESPONSE_ONLY, 103, 0, 0), Ev::Release]
    );
    assert_eq!(b.info.psn, 104);
}

#[test]
fn read_whose_region_goes_mid_read_naks_at_its_psn() {
    // The region is deregistered after the first response: the next one's
    // key check fails, and the NAK (at the request's PSN) and the error are
    // those of the request, read again for them.
    let mut b = Bench::new(Rc, 100);
    b.push_rdma(RC_RDMA_READ_REQUEST, 100, 0, 0x4000, 0x55, 600);
    assert!(b.run());
    b.m.ev.clear();
    b.m.bad_rkeys.push(0x55);
    assert_eq!(
        b.drain(),
        [
            Ev::Ack(RC_ACKNOWLEDGE, NAK_REM_ACC_ERR, 100, 1),
            Ev::Release,
            Ev::QpError
        ]
    );
    assert_eq!(b.m.peeks, 2);
}

#[test]
fn atomics_are_done_once() {
    let mut b = Bench::new(Rc, 7);
    let a = Atmeth {
        va: 0x8000,
        rkey: 0x33,
        swap_add: 1,
        comp: 0,
    };
    b.push(RC_FETCH_ADD, 7, 0).atmeth = Some(a);
    assert_eq!(
        b.drain(),
        [
            Ev::Atomic(0x8000),
            Ev::Ack(RC_ATOMIC_ACKNOWLEDGE, ACK_UNLIMITED, 7, 1),
            Ev::Atomic(1 | 1 << 63),
            Ev::Release
        ]
    );
    // Repeated: the saved original value, not a second add.
    b.push(RC_FETCH_ADD, 7, 0).atmeth = Some(a);
    assert_eq!(
        b.drain(),
        [
            Ev::Count(CNT_DUP_REQ),
            Ev::Ack(RC_ATOMIC_ACKNOWLEDGE, ACK_UNLIMITED, 7, 1),
            Ev::Atomic(1 | 1 << 63),
            Ev::Release
        ]
    );
    // An atomic write is answered by an empty read response.
    let p = b.push(RC_ATOMIC_WRITE, 8, 8);
    p.reth = Some(Reth {
        va: 0x9000,
        rkey: 0x33,
        len: 8,
    });
    assert_eq!(
        b.drain(),
        [
            Ev::AtomicWrite(0x9000),
            Ev::Ack(RC_RDMA_READ_RESPONSE_ONLY, ACK_UNLIMITED, 8, 2),
            Ev::Release
        ]
    );
}

#[test]
fn send_with_invalidate() {
    let mut b = Bench::new(Rc, 0);
    b.m.recv_wqes = 2;
    b.push(RC_SEND_ONLY_WITH_INVALIDATE, 0, 4).inv_rkey = Some(0x1234);
    let ev = b.drain();
    assert_eq!(
        ev[..3],
        [
            Ev::Recv,
            Ev::Invalidate(0x1234),
            Ev::Complete(WcStatus::Success)
        ]
    );
    // A key that cannot be invalidated: class J.
    b.m.bad_rkeys.push(0x4321);
    b.push(RC_SEND_ONLY_WITH_INVALIDATE, 1, 4).inv_rkey = Some(0x4321);
    assert_eq!(
        b.drain(),
        [
            Ev::Recv,
            Ev::Invalidate(0x4321),
            Ev::Complete(WcStatus::RemInvReq),
            Ev::Ack(RC_ACKNOWLEDGE, ACK_UNLIMITED, 1, 1),
            Ev::Release,
            Ev::QpError
        ]
    );
}

#[test]
fn uc_drops_instead_of_naking() {
    let mut b = Bench::new(Uc, 0);
    b.m.recv_wqes = 2;
    // A gap in the middle of a message: the rest is dropped.
    b.push(UC_SEND_FIRST, 0, 256);
    b.push(UC_SEND_LAST, 2, 4);
    b.push(UC_SEND_ONLY, 3, 4);
    assert_eq!(
        b.drain(),
        [
            Ev::Recv,
            Ev::Release,
            Ev::Release,
            // A new message after a first of an interrupted one: D1, the
            // receive WQE starts over.
            Ev::ResetWqe,
            Ev::Release
        ]
    );
    // No receive: dropped silently.
    let mut b = Bench::new(Uc, 0);
    b.push(UC_SEND_ONLY, 0, 4);
    assert_eq!(b.drain(), [Ev::Release]);
    assert!(b.info.drop_msg);
    // UD: delivered with no ACK.
    let mut b = Bench::new(Ud, 0);
    b.m.recv_wqes = 1;
    b.push(UD_SEND_ONLY, 1234, 4);
    assert_eq!(
        b.drain(),
        [Ev::Recv, Ev::Complete(WcStatus::Success), Ev::Release]
    );
}

#[test]
fn send_completed_then_qp_to_error_is_still_acked() {
    // The consumer's reaction to the receive completion (moving the QP to
    // ERR) must not eat the ACK of the request it saw complete: without
    // it the requester retries for ever against a QP that drops all.
    let mut b = Bench::new(Rc, 7);
    b.m.recv_wqes = 1;
    b.m.err_on_complete = true;
    b.push(RC_SEND_ONLY, 7, 16);
    assert_eq!(
        b.drain(),
        [
            Ev::Recv,
            Ev::Complete(WcStatus::Success),
            Ev::Ack(RC_ACKNOWLEDGE, ACK_UNLIMITED, 7, 1),
            Ev::Release
        ]
    );
}

#[test]
fn send_completed_in_error_is_not_acked() {
    // A QP already in ERR when the completion is posted (moved there by
    // another thread mid-run) answers nothing, as C's do_complete().
    let mut b = Bench::new(Rc, 7);
    b.m.recv_wqes = 1;
    b.m.err = true;
    b.push(RC_SEND_ONLY, 7, 16);
    let ev = b.drain();
    assert!(ev.contains(&Ev::Complete(WcStatus::Success)), "{ev:?}");
    assert!(!ev.iter().any(|e| matches!(e, Ev::Ack(..))), "{ev:?}");
}
