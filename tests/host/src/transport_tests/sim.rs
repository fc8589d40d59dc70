// SPDX-License-Identifier: GPL-2.0

//! The three pure actors together: a requester (`req_plan::plan`,
//! `after_send`, `rewind`), a responder (`resp_check::run`) and a
//! completer (`comp_check::run`) exchange packets over a wire that loses
//! some in both directions, with seeded randomness. Every message must
//! complete successfully, in order, once: sends received once each with
//! their length, writes written once, reads received whole.

use crate::qp_attr::QpType::{self, Rc, Uc};
use crate::rxe_comp_check::{
    self as comp, CompEnv, CompInfo, HeadWqe, Resp, RetryLimits, WcStatus,
};
use crate::rxe_req_plan::*;
use crate::rxe_resp_check::{self as resp, *};
use crate::rxe_wire::ext::{syndrome, Atmeth, Reth};
use crate::rxe_wire::opcode::{lookup, Mask};
use crate::rxe_wqe::{opcode as wr, wr_opcode_mask};
use std::collections::VecDeque;

const MTU: u32 = 256;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A request on the wire.
#[derive(Clone, Copy, Debug)]
struct Req {
    pkt: ReqPkt,
}

/// A send WQE of the simulated requester.
#[derive(Clone, Copy, Debug)]
struct Wqe {
    wr_op: u32,
    length: u32,
    resid: u32,
    state: WqeState,
    first_psn: u32,
    last_psn: u32,
    iova: u64,
    has_rd_atomic: bool,
    status: WcStatus,
}

/// The requester's and completer's side of the QP.
struct Sender {
    t: QpType,
    sq: Vec<Wqe>,
    /// The original values atomics returned.
    origs: Vec<u64>,
    log: Vec<String>,
    /// Ticks until the RNR timer fires.
    rnr_timer: Option<u32>,
    /// Index of the oldest WQE not completed.
    cons: usize,
    /// The requester's position.
    req_index: usize,
    psn: u32,
    prev: Option<u8>,
    credits: u32,
    /// Responses delivered to the completer.
    resps: VecDeque<(Resp, u32, u64)>,
    cur_payload: u32,
    cur_orig: u64,
    completed: Vec<(u32, WcStatus, u32)>,
}

const MAX_RD_ATOMIC: u32 = 2;

impl CompEnv for Sender {
    fn next_resp(&mut self) -> Option<Resp> {
        let (r, p, orig) = self.resps.pop_front()?;
        self.log.push(format!("resp {r:?} comp.psn? head {:?}", self.sq.get(self.cons)));
        self.cur_payload = p;
        self.cur_orig = orig;
        Some(r)
    }
    fn head(&mut self) -> Option<HeadWqe> {
        let w = self.sq.get(self.cons)?;
        Some(HeadWqe {
            state: w.state,
            wr_op: w.wr_op,
            wr_mask: wr_opcode_mask(w.wr_op, self.t),
            first_psn: w.first_psn,
            last_psn: w.last_psn,
        })
    }
    fn set_status(&mut self, status: WcStatus) {
        self.sq[self.cons].status = status;
    }
    fn read_payload(&mut self) -> Result<u32, ()> {
        let w = &mut self.sq[self.cons];
        assert!(self.cur_payload <= w.resid, "read response past the end");
        w.resid -= self.cur_payload;
        Ok(w.resid)
    }
    fn atomic_payload(&mut self) -> Result<(), ()> {
        self.origs.push(self.cur_orig);
        Ok(())
    }
    fn release_rd_atomic(&mut self) -> bool {
        let w = &mut self.sq[self.cons];
        if core::mem::take(&mut w.has_rd_atomic) {
            self.credits += 1;
            true
        } else {
            false
        }
    }
    fn check_sq_drained(&mut self, _comp_psn: u32) {}
    fn complete(&mut self) {
        let w = self.sq[self.cons];
        if w.wr_op == wr::ATOMIC_FETCH_AND_ADD {
            let n = self.completed.iter().filter(|c| c.0 == wr::ATOMIC_FETCH_AND_ADD).count();
            if self.origs.len() != n + 1 {
                for l in &self.log {
                    eprintln!("{l}");
                }
                panic!("atomic completed without its value");
            }
        }
        let got = if w.status != WcStatus::Success {
            0
        } else if w.wr_op == wr::RDMA_READ {
            w.length - w.resid
        } else {
            w.length
        };
        self.completed.push((w.wr_op, w.status, got));
        self.cons += 1;
        // The requester's position never lags the completer's.
        self.req_index = self.req_index.max(self.cons);
    }
    fn count(&mut self, _index: usize) {}
    fn req_psn(&self) -> u32 {
        self.psn
    }
    fn rearm_retry_timer(&mut self) {}
    fn start_rnr_timer(&mut self, _usecs: u32) {
        self.rnr_timer = Some(2);
    }
    fn qp_error(&mut self) {
        panic!(
            "QP error: {:?} {:?} psn {}",
            self.completed.last(),
            &self.sq[..self.cons.min(self.sq.len())],
            self.psn
        );
    }
}

impl Sender {
    /// `req_retry`: back to the completer's PSN.
    fn retry(&mut self, comp_psn: u32) {
        self.req_index = self.cons;
        self.psn = comp_psn;
        self.prev = None;
        let mut first = true;
        for w in &mut self.sq[self.cons..] {
            let rw = RewindWqe {
                state: w.state,
                wr_op: w.wr_op,
                send_flags: 0,
                wr_mask: wr_opcode_mask(w.wr_op, self.t),
                length: w.length,
                resid: w.resid,
                first_psn: w.first_psn,
            };
            match rewind(self.t, &rw, first, comp_psn, MTU) {
                RewindStep::Stop => break,
                RewindStep::Skip => continue,
                RewindStep::Restart(r) => {
                    w.resid = r.resid;
                    w.iova = 0x10_0000 + r.iova_advance;
                    if first {
                        self.prev = r.prev_opcode;
                    }
                    first = false;
                    w.state = WqeState::Posted;
                }
            }
        }
    }

    /// Runs the requester until it waits; the packets it sent.
    fn send(&mut self, comp_psn: u32, flags: &mut ReqFlags, out: &mut Vec<Req>) {
        if flags.need_retry && !flags.wait_for_rnr_timer {
            self.retry(comp_psn);
            flags.need_retry = false;
        }
        while let Some(w) = self.sq.get(self.req_index).copied() {
            let view = SendView {
                wr_op: w.wr_op,
                send_flags: 0,
                wr_mask: wr_opcode_mask(w.wr_op, self.t),
                resid: w.resid,
                first_psn: w.first_psn,
                num_sge: 1,
                cur_sge: 0,
                has_rd_atomic: w.has_rd_atomic,
            };
            let q = ReqView {
                t: self.t,
                mtu: MTU,
                max_sge: 1,
                at_head: self.req_index == self.cons,
                rd_atomic_free: self.credits,
                max_rd_atomic: MAX_RD_ATOMIC,
                psn: self.psn,
                comp_psn,
                prev_opcode: self.prev,
                skb_out_high: false,
            };
            let credits = &mut self.credits;
            let step = plan(&view, &q, flags, || {
                if *credits > 0 {
                    *credits -= 1;
                    true
                } else {
                    false
                }
            });
            let ReqStep::Packet(p) = step else {
                assert!(matches!(step, ReqStep::Wait(_)), "{step:?}");
                return;
            };
            let reth = if p.mask.contains(Mask::RETH) {
                Some(Reth {
                    va: w.iova,
                    rkey: 0x77,
                    len: w.resid,
                })
            } else {
                None
            };
            out.push(Req {
                pkt: ReqPkt {
                    psn: p.psn,
                    opcode: p.opcode,
                    mask: p.mask,
                    payload: p.payload,
                    pad: (p.payload.wrapping_neg() & 3) as u8,
                    ack_req: p.ack_req,
                    reth,
                    atmeth: p.mask.contains(Mask::ATMETH).then_some(Atmeth {
                        va: 0x20_0000,
                        rkey: 0x78,
                        swap_add: 1,
                        comp: 0,
                    }),
                    flush_type: 0,
                    flush_level: 0,
                    inv_rkey: None,
                },
            });
            let a = after_send(self.t, &view, &p, MTU);
            let w = &mut self.sq[self.req_index];
            w.has_rd_atomic |= p.took_rd_atomic;
            w.state = a.state;
            if let Some((first, last)) = a.wqe_psns {
                w.first_psn = first;
                w.last_psn = last;
            }
            // A write's address moves as it is sent (only the first
            // packet's RETH carries it).
            if p.mask.contains(Mask::WRITE) {
                w.iova += u64::from(p.payload);
            }
            w.resid = a.resid;
            self.psn = a.next_psn;
            self.prev = Some(a.prev_opcode);
            if a.next_wqe {
                self.req_index += 1;
            }
        }
    }
}

/// The responder's side.
#[derive(Default)]
struct Receiver {
    reqs: VecDeque<ReqPkt>,
    out: Vec<(Resp, u32, u64)>,
    msg_bytes: u32,
    recvs: Vec<u32>,
    written: u64,
    /// Receive WQEs posted and not yet used (`None`: never short).
    recv_avail: Option<u32>,
    held: bool,
    /// The remote word atomics add to.
    word: u64,
}

impl RespEnv for Receiver {
    fn peek_req(&mut self) -> Option<ReqPkt> {
        self.reqs.front().copied()
    }
    fn has_req(&mut self) -> bool {
        !self.reqs.is_empty()
    }
    fn take_recv_wqe(&mut self) -> Result<(), RespState> {
        if self.recv_avail == Some(0) {
            return Err(RespState::ErrRnr);
        }
        self.held = true;
        self.msg_bytes = 0;
        Ok(())
    }
    fn has_recv_wqe(&self) -> bool {
        self.held
    }
    fn recv_len(&self) -> u32 {
        u32::MAX
    }
    fn resolve_rkey(&mut self, _r: u32, _a: u32, _i: u64, _l: u32, _w: bool) -> Result<u64, ()> {
        Ok(0)
    }
    fn drop_mr(&mut self) {}
    fn recv_data(&mut self) -> Result<(), RespState> {
        self.msg_bytes += self.reqs.front().unwrap().payload;
        Ok(())
    }
    fn write_data(&mut self, _iova: u64) -> Result<(), ()> {
        self.written += u64::from(self.reqs.front().unwrap().payload);
        Ok(())
    }
    fn invalidate(&mut self, _rkey: u32) -> Result<(), ()> {
        Ok(())
    }
    fn recheck_mr(&mut self, _rkey: u32) -> Result<(), ()> {
        Ok(())
    }
    fn send_read_response(
        &mut self,
        rr: &ReadResp,
        _iova: u64,
        _msn: u32,
    ) -> Result<(), RespState> {
        let mask = lookup(rr.opcode).unwrap().mask();
        self.out.push((
            Resp {
                psn: rr.psn,
                opcode: rr.opcode,
                mask,
                syn: syndrome::ACK_UNLIMITED,
            },
            rr.payload,
            0,
        ));
        Ok(())
    }
    fn atomic(&mut self, _iova: u64) -> Result<u64, RespState> {
        let orig = self.word;
        self.word += self.reqs.front().unwrap().atmeth.unwrap().swap_add;
        Ok(orig)
    }
    fn atomic_write(&mut self, _iova: u64) -> Result<(), RespState> {
        Ok(())
    }
    fn flush(&mut self, _i: u64, _l: u32, _t: u8, _w: bool) -> Result<(), ()> {
        Ok(())
    }
    fn complete(&mut self, status: WcStatus, _write_len: u32) -> Result<(), ()> {
        assert_eq!(status, WcStatus::Success);
        if self.held {
            self.held = false;
            self.recvs.push(self.msg_bytes);
            if let Some(n) = &mut self.recv_avail {
                *n -= 1;
            }
        }
        Ok(())
    }
    fn in_error(&self) -> bool {
        false
    }
    fn send_ack(&mut self, ack: &Ack, _msn: u32, orig: u64) {
        let mask = lookup(ack.opcode).unwrap().mask();
        self.out.push((
            Resp {
                psn: ack.psn,
                opcode: ack.opcode,
                mask,
                syn: ack.syn,
            },
            0,
            orig,
        ));
    }
    fn reset_recv_wqe(&mut self) {
        self.msg_bytes = 0;
    }
    fn access_error_event(&mut self) {
        panic!("no access error here");
    }
    fn release_req(&mut self) {
        self.reqs.pop_front();
    }
    fn count(&mut self, _index: usize) {}
    fn qp_error(&mut self) {
        panic!("responder QP error");
    }
}

/// How a simulation runs.
#[derive(Clone, Copy, Debug)]
struct SimCfg {
    t: QpType,
    /// One packet in `loss` is lost each way (0: none).
    loss: u64,
    start_psn: u32,
    /// Receive WQEs posted at the start (`None`: never short); one more is
    /// posted in `recv_refill` ticks.
    recv_wqes: Option<u32>,
    recv_refill: u64,
}

/// Runs `ops` (opcode, length); the sender's and receiver's ends.
fn simulate(seed: u64, ops: &[(u32, u32)], cfg: SimCfg) -> (Sender, Receiver) {
    let mut rng = Rng(seed | 1);
    let lim = RetryLimits {
        retry_cnt: 7,
        rnr_retry: 7,
    };
    let start_psn = cfg.start_psn;
    let mut s = Sender {
        t: cfg.t,
        sq: ops
            .iter()
            .map(|&(wr_op, length)| Wqe {
                wr_op,
                length,
                resid: length,
                state: WqeState::Posted,
                first_psn: 0,
                last_psn: 0,
                iova: 0x10_0000,
                has_rd_atomic: false,
                status: WcStatus::Success,
            })
            .collect(),
        origs: Vec::new(),
        log: Vec::new(),
        rnr_timer: None,
        cons: 0,
        req_index: 0,
        psn: start_psn,
        prev: None,
        credits: MAX_RD_ATOMIC,
        resps: VecDeque::new(),
        cur_payload: 0,
        cur_orig: 0,
        completed: Vec::new(),
    };
    let mut comp_info = CompInfo::new(start_psn, lim);
    let mut flags = ReqFlags::default();
    let mut r = Receiver {
        recv_avail: cfg.recv_wqes,
        ..Receiver::default()
    };
    let mut info = RespInfo::new(start_psn);
    let mut ctx = RdmaCtx::default();
    let mut slots = [ReplayRes::default(); MAX_RD_ATOMIC as usize];
    let mut head = 0;
    let rcfg = RespCfg {
        t: cfg.t,
        mtu: MTU,
        access: crate::keys::ACCESS_REMOTE,
        max_dest_rd_atomic: MAX_RD_ATOMIC,
        has_srq: false,
        min_rnr_timer: 1,
    };
    let loss = cfg.loss;
    let lose = |rng: &mut Rng| loss != 0 && rng.below(loss) == 0;
    for _tick in 0..20_000 {
        if s.cons == s.sq.len() {
            return (s, r);
        }
        if let Some(n) = &mut r.recv_avail {
            if cfg.recv_refill != 0 && rng.below(cfg.recv_refill) == 0 {
                *n += 1;
            }
        }
        // The RNR timer: the requester retries.
        if let Some(t) = &mut s.rnr_timer {
            if *t == 0 {
                s.rnr_timer = None;
                flags.need_retry = true;
                flags.wait_for_rnr_timer = false;
            } else {
                *t -= 1;
            }
        }
        let mut moved = false;
        // Requester.
        let mut out = Vec::new();
        s.send(comp_info.psn, &mut flags, &mut out);
        for p in out {
            moved = true;
            if !lose(&mut rng) {
                r.reqs.push_back(p.pkt);
            }
        }
        // Responder.
        for _ in 0..1000 {
            let mut rs = Responder {
                info: &mut info,
                ctx: &mut ctx,
                res: Resources::new(&mut slots, &mut head),
            };
            if !resp::run(&mut r, &rcfg, &mut rs) {
                break;
            }
        }
        for a in r.out.drain(..) {
            moved = true;
            if !lose(&mut rng) {
                s.resps.push_back(a);
            }
        }
        // Completer; a retransmission timeout when nothing moved (RC).
        let mut timeout = !moved && cfg.t == Rc;
        for _ in 0..1000 {
            let again = comp::run(
                &mut s,
                &mut comp_info,
                &mut flags,
                comp::RunInput { timeout, lim },
            );
            timeout = false;
            if !again && s.resps.is_empty() {
                break;
            }
        }
    }
    panic!(
        "no progress: {:?} at {}\nops {ops:?}\ncomp {comp_info:?}\nflags {flags:?}\nreq psn {} index {}\nresp {info:?}\nres {slots:?}",
        s.sq.get(s.cons),
        s.cons,
        s.psn,
        s.req_index
    );
}

/// Checks an RC run: every WQE completed in order, successfully, with
/// all its bytes; each send received once with its length; writes written
/// once; each fetch-and-add done once; the credits all back.
fn check(ops: &[(u32, u32)], s: &Sender, r: &Receiver) {
    assert_eq!(s.completed.len(), ops.len());
    for (i, (&(op, len), &(c_op, status, got))) in ops.iter().zip(&s.completed).enumerate() {
        let len = if op == wr::ATOMIC_FETCH_AND_ADD {
            8
        } else {
            len
        };
        assert_eq!((c_op, status, got), (op, WcStatus::Success, len), "WQE {i}");
    }
    let sends: Vec<u32> = ops
        .iter()
        .filter(|(op, _)| *op == wr::SEND)
        .map(|&(_, l)| l)
        .collect();
    assert_eq!(r.recvs, sends);
    let written: u64 = ops
        .iter()
        .filter(|(op, _)| *op == wr::RDMA_WRITE)
        .map(|&(_, l)| u64::from(l))
        .sum();
    assert_eq!(r.written, written);
    let adds = ops
        .iter()
        .filter(|(op, _)| *op == wr::ATOMIC_FETCH_AND_ADD)
        .count() as u64;
    assert_eq!(r.word, adds);
    // Each add saw the one before it.
    assert_eq!(s.origs, (0..adds).collect::<Vec<_>>());
    assert_eq!(s.credits, MAX_RD_ATOMIC);
}

fn workload(rng: &mut Rng, n: usize, ops: &[u32]) -> Vec<(u32, u32)> {
    (0..n)
        .map(|_| {
            let op = ops[rng.below(ops.len() as u64) as usize];
            let len = match rng.below(4) {
                0 => 0,
                1 => rng.below(u64::from(MTU)) as u32 + 1,
                2 => MTU * (rng.below(4) as u32 + 1),
                _ => rng.below(u64::from(MTU) * 6) as u32,
            };
            let len = if op == wr::ATOMIC_FETCH_AND_ADD {
                8
            } else {
                len
            };
            (op, len)
        })
        .collect()
}

fn rc(loss: u64, start_psn: u32) -> SimCfg {
    SimCfg {
        t: Rc,
        loss,
        start_psn,
        recv_wqes: None,
        recv_refill: 0,
    }
}

const RC_OPS: [u32; 4] = [
    wr::SEND,
    wr::RDMA_WRITE,
    wr::RDMA_READ,
    wr::ATOMIC_FETCH_AND_ADD,
];

#[test]
fn lossless() {
    let ops = [
        (wr::SEND, 1000),
        (wr::RDMA_WRITE, 256),
        (wr::RDMA_READ, 600),
        (wr::ATOMIC_FETCH_AND_ADD, 8),
        (wr::SEND, 0),
        (wr::RDMA_READ, 0),
        (wr::RDMA_WRITE, 0),
    ];
    let (s, r) = simulate(1, &ops, rc(0, 0xff_fff0));
    check(&ops, &s, &r);
}

/// Random workloads over a lossy wire; `rounds` of them from `seed`.
fn lossy(seed: u64, rounds: usize, make: impl Fn(usize, &mut Rng) -> SimCfg) {
    let mut seeds = Rng(seed);
    for round in 0..rounds {
        let seed = seeds.next();
        let mut rng = Rng(seed | 1);
        let n = 1 + rng.below(30) as usize;
        let cfg = make(round, &mut rng);
        let ops = if cfg.t == Rc {
            workload(&mut rng, n, &RC_OPS)
        } else {
            workload(&mut rng, n, &[wr::SEND, wr::RDMA_WRITE])
        };
        eprintln!("round {round} seed {seed:#x} {cfg:?} ops {ops:?}");
        let (s, r) = simulate(seed, &ops, cfg);
        if cfg.t == Rc {
            check(&ops, &s, &r);
        } else {
            check_uc(&ops, &s, &r, cfg.loss);
        }
    }
}

/// A start PSN at or near the wrap every other round.
fn start_psn(round: usize, rng: &mut Rng) -> u32 {
    if round % 2 == 0 {
        0xff_ffff - rng.below(40) as u32
    } else {
        rng.below(1 << 24) as u32
    }
}

#[test]
fn lossy_random_workloads() {
    lossy(0x5eed, 500, |round, rng| {
        rc([0, 2, 3, 5, 10][round % 5], start_psn(round, rng))
    });
}

#[test]
fn rnr_with_scarce_receives() {
    // Few receive WQEs, posted slowly: sends meet RNR NAKs and are
    // retried after the RNR timer until they find one.
    lossy(0x0bad, 300, |round, rng| SimCfg {
        recv_wqes: Some(rng.below(3) as u32),
        recv_refill: 1 + rng.below(8),
        ..rc([0, 3, 10][round % 3], start_psn(round, rng))
    });
}

/// Checks a UC run: every WQE completes; what was lost is lost whole —
/// each receive is a whole send, in order.
fn check_uc(ops: &[(u32, u32)], s: &Sender, r: &Receiver, loss: u64) {
    assert_eq!(s.completed.len(), ops.len());
    assert!(s.completed.iter().all(|c| c.1 == WcStatus::Success));
    let sends: Vec<u32> = ops
        .iter()
        .filter(|(op, _)| *op == wr::SEND)
        .map(|&(_, l)| l)
        .collect();
    // The receives are a subsequence of the sends.
    let mut it = sends.iter();
    for got in &r.recvs {
        assert!(
            it.any(|l| l == got),
            "receive of {got} bytes is not a whole send"
        );
    }
    if loss == 0 {
        assert_eq!(r.recvs, sends);
    }
}

#[test]
fn uc_loses_whole_messages() {
    lossy(0x0c, 500, |round, rng| SimCfg {
        t: Uc,
        ..rc([0, 3, 5, 10][round % 4], start_psn(round, rng))
    });
}
