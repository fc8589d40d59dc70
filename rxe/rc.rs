// SPDX-License-Identifier: GPL-2.0

//! The connected transports (RC and UC) of a QP's tasks: the requester and
//! the completer run from the send task, the responder from the receive
//! task, each driving its pure logic (`req_plan.rs`, `comp_check.rs`,
//! `resp_check.rs`) over the QP: its queues, the packets rxe/recv.rs
//! queued for it, the data path (rxe/copy.rs) and rxe/xmit.rs.
//!
//! The retransmission and RNR NAK timers are deadlines the send task
//! keeps (rxe/rc_timing.rs) over one kernel timer (rxe/rc_timer.rs).
//!
//! A local operation (LOCAL_INV, REG_MR, BIND_MW) is executed by the
//! requester when it reaches the WQE (`rxe_do_local_ops`, rxe/copy.rs):
//! no packet, the WQE is done (or failed, the QP then in ERR) and the
//! completer completes it in order. The responder does ATOMIC WRITE (a
//! release store of the 8 payload bytes, rxe/atomic.rs) and FLUSH (a
//! write barrier; for the persistence domain the CPU caches of the range
//! or region written back first), both answered by an empty READ
//! RESPONSE ONLY. An rkey violation of a request without a receive WQE
//! to report it raises the QP's access error event, as in C.

use crate::{
    access::RemoteError,
    comp_check::{
        self,
        CompEnv,
        CompInfo,
        HeadWqe,
        Resp,
        RetryLimits,
        WcStatus, //
    },
    copy::{
        self,
        FlushLevel, //
    },
    device::{
        Rxe,
        RxeDev, //
    },
    dma::{
        self,
        DmaInfo, //
    },
    mr::MrCache,
    net::{
        self,
        Dest, //
    },
    params,
    qp::Qp,
    qp_attr::{
        QpState,
        QpType, //
    },
    queue::Queue,
    queue_index::QueueType,
    rc_timer::{
        self,
        Timer, //
    },
    rc_timing::{
        retrans_period_ns,
        rnr_delay_ns, //
    },
    rdma::{
        bh_lock::SpinLockBh,
        bindings,
        cq::Completion,
        ib_device::Device,
        mr::CopyBuf,
        udp::TxBatch, //
    },
    recv::RecvPkt,
    req_plan::{
        self,
        after_send,
        plan,
        wqe_off,
        ReqFields,
        ReqFlags,
        ReqStep,
        ReqView,
        RewindStep,
        SendWqeBytes,
        WqeState, //
    },
    resp_check::{
        self,
        Ack,
        RdmaCtx,
        ReadResp,
        ReplayRes,
        ReqPkt,
        Resources,
        RespCfg,
        RespEnv,
        RespInfo,
        RespState,
        Responder, //
    },
    task::Step,
    wire::{
        bth::Bth,
        packet::{
            BuildError,
            PacketMut, //
        },
        psn::psn_diff, //
    },
    wqe::{
        self,
        send_off, //
    },
    xmit,
};
use core::cell::{
    OnceCell,
    RefCell, //
};
use kernel::{
    alloc::Flags,
    prelude::*,
    sync::Arc, //
};

/// Where the requester is in the send queue.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ReqAt {
    /// At the consumer's index.
    Consumer,
    /// At this WQE (queue index), to be copied out.
    Wqe(u32),
    /// In the middle of the message of the WQE at `index`, whose bytes
    /// its part of [`SendSide::wqe_buf`] holds as they are in the queue
    /// (`next` is the index after it): the message's next packet does not
    /// copy the WQE out again (C reads it in place). Only the requester
    /// writes a WQE while it sends it; whatever else writes one (the
    /// completer, a retry) moves the requester to [`ReqAt::Wqe`].
    Continuing { index: u32, next: u32 },
}

impl ReqAt {
    /// The requester's WQE, `None` at the consumer.
    fn index(self) -> Option<u32> {
        match self {
            Self::Consumer => None,
            Self::Wqe(i) | Self::Continuing { index: i, .. } => Some(i),
        }
    }
}

/// The send task's state: requester and completer.
struct SendSide {
    /// The requester's WQE.
    req: ReqAt,
    /// The opcode of the requester's previous packet.
    prev: Option<u8>,
    flags: ReqFlags,
    comp: CompInfo,
    /// The retransmission timer fired since the completer last ran
    /// (`comp.timeout`).
    comp_timeout: bool,
    /// The retry counts are due from the attributes (after a reset).
    fresh: bool,
    /// The retransmission and RNR NAK timers.
    timer: Timer,
    /// Where the requester and the completer copy a send WQE to: two of
    /// the queue's elements, the requester's then the completer's,
    /// allocated at the first call ([`new_wqe_buf`]) and kept, so that a
    /// packet allocates nothing. A UD QP's requester (rxe/ud.rs) borrows
    /// it too ([`take_wqe_buf`]). A boxed slice, not a vector: the QP has
    /// no room for a capacity it would never use (rxe/qp.rs).
    wqe_buf: Option<KBox<[u8]>>,
}

/// The receive WQE the responder fills: what its completion needs and its
/// DMA state; its entries are in [`RecvSide::list`].
struct CurRecv {
    wr_id: u64,
    dma: DmaInfo,
}

/// The receive task's state: the responder.
struct RecvSide {
    info: RespInfo,
    ctx: RdmaCtx,
    slots: KVec<ReplayRes>,
    head: usize,
    /// What the responder's environment ([`RespQp`]) works on, apart from
    /// the state [`resp_check::run`] borrows.
    io: RespIo,
    /// A fresh state is due (after a reset).
    fresh: bool,
}

/// The request, receive WQE and memory the responder is at.
struct RespIo {
    /// The request being answered, taken from the QP's queue.
    cur: Option<RecvPkt>,
    /// The receive WQE being filled.
    wqe: Option<CurRecv>,
    /// The entries of the receive WQE being filled, in the layout
    /// [`copy::copy_data`] walks, where the WQE's entries are copied from
    /// its queue; kept from one WQE to the next, so that a message
    /// allocates nothing once it exists.
    list: KVec<u8>,
    /// The memory the current RDMA request resolved to.
    mr: Option<copy::RemoteMr>,
}

/// A connected QP's transport state.
#[pin_data]
pub(crate) struct Rc {
    /// The requester's and completer's state: taken by the send task,
    /// which also runs in the receive softirq when a response comes
    /// (rxe/qp_io.rs), hence bottom halves off.
    #[pin]
    send: SpinLockBh<SendSide>,
    /// The responder's state: taken by the receive task, which also runs
    /// in the receive softirq (rxe/qp_io.rs), hence bottom halves off.
    #[pin]
    recv: SpinLockBh<RecvSide>,
}

impl Rc {
    /// The state of a new QP.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            send <- crate::new_spinlock_bh!(
                SendSide {
                    req: ReqAt::Consumer,
                    prev: None,
                    flags: ReqFlags::default(),
                    comp: CompInfo::default(),
                    comp_timeout: false,
                    fresh: true,
                    timer: Timer::new(),
                    wqe_buf: None,
                },
                "rxe_rc_send"
            ),
            recv <- crate::new_spinlock_bh!(
                RecvSide {
                    info: RespInfo::new(0),
                    ctx: RdmaCtx::default(),
                    slots: KVec::new(),
                    head: 0,
                    io: RespIo {
                        cur: None,
                        wqe: None,
                        list: KVec::new(),
                        mr: None,
                    },
                    fresh: true,
                },
                "rxe_rc_recv"
            ),
        })
    }

    /// Back to RESET: the requester, completer and responder start over
    /// (`rxe_qp_reset`'s clearing of `req`, `comp`, `resp`).
    pub(crate) fn reset(&self) {
        {
            let mut s = self.send.lock();
            s.req = ReqAt::Consumer;
            s.prev = None;
            s.flags = ReqFlags::default();
            s.comp = CompInfo::default();
            s.comp_timeout = false;
            s.fresh = true;
            s.timer.stop();
        }
        let mut r = self.recv.lock();
        r.io.cur = None;
        r.io.wqe = None;
        r.io.mr = None;
        r.fresh = true;
    }

    /// Stops the timers for good and drops the request the responder
    /// holds (destroy, after the tasks are stopped, so that nothing starts
    /// or takes them again): neither holds a QP any more.
    pub(crate) fn cleanup(&self) {
        self.send.lock().timer.stop();
        self.drop_request();
    }

    /// Drops the request packet the responder holds between runs, if any
    /// (a read reply in progress keeps its request, as C's responder keeps
    /// it at the head of `req_pkts`): for a QP in ERR, as C's
    /// `drain_req_pkts` frees it with the queue, and at destroy. Its skb
    /// holds a reference on the QP that sent it, this one or another,
    /// whose destroy waits for it: kept, it would stall that destroy for
    /// good (a process's exit destroying its QPs one after the other).
    pub(crate) fn drop_request(&self) {
        let held = self.recv.lock().io.cur.take();
        drop(held);
    }
}

/// Copies the send WQE at `index` of the locked send queue `q` into `buf`
/// (one element's size): its fixed part, then only the entries or inline
/// bytes it uses ([`wqe::send_data_used`]). The rest of `buf` keeps bytes
/// of earlier WQEs, as the element's own unused bytes are whatever they
/// are: nothing reads past the entries or the inline data of a WQE.
fn read_used(q: &Queue, index: u32, buf: &mut [u8]) -> Result {
    if buf.len() < send_off::DATA {
        return q.read_bytes(index, 0, buf);
    }
    let (fixed, rest) = buf.split_at_mut(send_off::DATA);
    q.read_bytes(index, 0, fixed)?;
    let n = wqe::send_data_used(fixed, rest.len());
    q.read_bytes(index, send_off::DATA, &mut rest[..n])
}

/// What [`fetch`] found at a send queue index.
struct Fetched {
    /// The consumer index.
    cons: u32,
    /// The index looked at, and the one after it.
    index: u32,
    next: u32,
    /// Whether a WQE was there (its bytes are then in the buffer).
    loaded: bool,
}

/// Under one hold of the send queue's irq-safe lock: its consumer index,
/// and the bytes of the WQE at `at` (the consumer's if `None`; none if the
/// queue ends there) copied into `buf`, one element's size, as
/// [`read_used`].
fn fetch(qp: &Qp, at: Option<u32>, buf: &mut [u8]) -> Result<Fetched> {
    let q = qp.sq_queue().lock();
    let cons = q.consumer(QueueType::FromClient);
    let prod = q.producer(QueueType::FromClient);
    let index = at.unwrap_or(cons);
    let loaded = index != prod;
    if loaded {
        read_used(&q, index, buf)?;
    }
    Ok(Fetched {
        cons,
        index,
        next: q.next_index(index),
        loaded,
    })
}

/// The send side's WQE buffer, for two of the send queue's elements
/// ([`SendSide::wqe_buf`]), allocated outside the queue's lock with
/// `flags`: once for a QP, at its first send, the element size being fixed
/// at creation (a QP that never sends has none).
fn new_wqe_buf(qp: &Qp, flags: Flags) -> Result<KBox<[u8]>> {
    let size = qp.sq_queue().lock().elem_size();
    let buf = KBox::pin_slice(|_| Ok::<u8, Error>(0), 2 * size, flags)?;
    // Bytes do not mind being moved.
    Ok(Pin::into_inner(buf))
}

/// The send side's WQE buffer, taken out of its state for a UD requester's
/// run (rxe/ud.rs), which holds no lock while it sends: allocated if this
/// is the QP's first send. Only the send task takes it, and it never runs
/// twice at once; [`put_wqe_buf`] gives it back.
pub(crate) fn take_wqe_buf(qp: &Qp) -> Result<KBox<[u8]>> {
    let held = qp.rc().send.lock().wqe_buf.take();
    match held {
        Some(b) => Ok(b),
        None => new_wqe_buf(qp, GFP_KERNEL),
    }
}

/// Gives back the buffer [`take_wqe_buf`] took.
pub(crate) fn put_wqe_buf(qp: &Qp, buf: KBox<[u8]>) {
    qp.rc().send.lock().wqe_buf = Some(buf);
}

/// The state of the send queue's oldest WQE, read in place; `None` if the
/// queue is empty.
fn head_state(qp: &Qp) -> Option<WqeState> {
    let q = qp.sq_queue().lock();
    let cons = q.consumer(QueueType::FromClient);
    if cons == q.producer(QueueType::FromClient) {
        return None;
    }
    q.read::<u32>(cons, wqe_off::STATE)
        .ok()
        .map(WqeState::from_raw)
}

/// A send WQE's bytes, copied out of its queue element (as [`fetch`]).
fn read_elem(qp: &Qp, index: u32, buf: &mut [u8]) -> Result {
    fetch(qp, Some(index), buf).map(|_| ())
}

/// The head of the send queue (the completer's WQE) and its bytes, copied
/// into `buf` (as [`fetch`]); `None` if the queue is empty.
fn read_head(qp: &Qp, buf: &mut [u8]) -> Option<u32> {
    let f = fetch(qp, None, buf).ok()?;
    f.loaded.then_some(f.index)
}

/// Writes a send WQE's fixed part and DMA state back (not its entries).
fn write_elem(qp: &Qp, index: u32, buf: &[u8]) -> Result {
    // A range of constant length (64 bytes): the copy is a few moves, not
    // a call of `memcpy`, once a packet.
    let part = buf
        .get(send_off::STATUS..send_off::DMA + dma::DMA_INFO_SIZE)
        .ok_or(EINVAL)?;
    let q = qp.sq_queue().lock();
    q.write_bytes(index, send_off::STATUS, part)
}

/// The send task (`rxe_sender`) for a connected QP: the requester, then
/// the completer.
pub(crate) fn sender(qp: &Arc<Qp>) -> Step {
    let Some(dev) = qp.device() else {
        return Step::Done;
    };
    let mut s = qp.rc().send.lock();
    if s.wqe_buf.is_none() {
        // Under the send side's lock, maybe in the receive softirq.
        match new_wqe_buf(qp, GFP_ATOMIC) {
            Ok(b) => s.wqe_buf = Some(b),
            // Nothing can be copied out: as for a queue that looks empty,
            // the next post or response runs the task again.
            Err(_) => return Step::Done,
        }
    }
    // The deadlines that passed. Those this call sets count from the tick
    // count read where each is set (rxe/rc_timer.rs).
    let now = s.timer.now();
    let fired = s.timer.deadlines().expire(now);
    if fired.retrans {
        s.comp_timeout = true;
    }
    if fired.rnr {
        // `rnr_nak_timer`: the send queue is retried.
        s.flags.need_retry = true;
        s.flags.wait_for_rnr_timer = false;
    }
    // Out of the locked state for the call, beside it (`requester` and
    // `completer` take both), and back at the end.
    let Some(mut buf) = s.wqe_buf.take() else {
        return Step::Done;
    };
    let half = buf.len() / 2;
    let (req_buf, comp_buf) = buf.split_at_mut(half);
    let mut mrs = MrCache::default();
    // The requester's packets of this call, held to leave together
    // (rxe/net.rs): sent when the requester has nothing more, and at the
    // end of the call at the latest.
    let mut batch = TxBatch::new();
    let mut step = Step::Done;
    // Once the requester has had nothing to send, the rest of the call is
    // the completer's (a READ's responses, ACKs): asking the requester
    // again after each response would copy its next WQE out just to find
    // it still waiting. If the completer did anything meanwhile (a
    // completion may have unblocked the requester), the requester looks
    // again once the completer has nothing left, in this call: another
    // call would take the device, the lock and the clock again for it.
    let mut req_idle = false;
    let mut comp_since_idle = false;
    // The head WQE the completer holds in `comp_buf`, kept from one
    // completer step to the next while the requester, which writes the
    // WQEs it sends, is idle.
    let mut comp_loaded = None;
    // What the completer read of the attributes, kept from one of its
    // steps to the next while the requester does not run; its PSN is
    // stored back before the requester runs and at the end of the call.
    let mut comp_attrs = None;
    for _ in 0..SEND_STEPS_PER_CALL {
        let mut sent = None;
        let req = if req_idle {
            Step::Done
        } else {
            comp_loaded = None;
            store_comp_psn(qp, &s, &mut comp_attrs);
            requester(&dev, qp, &mut s, req_buf, &mut mrs, &mut batch, &mut sent)
        };
        req_idle = req == Step::Done;
        if req_idle {
            net::flush(&dev, &mut batch);
        }
        let comp = match sent {
            Some(p) if !s.comp_timeout && !s.comp.timeout_retry && !qp.io().resp_queued() => {
                // The completer would find nothing to do: no response, no
                // timeout, and at the head this WQE or an older one that
                // waits for its ACK (a WQE the requester finishes itself
                // is never skipped). All that is left of its run is
                // `reset_retry_timer`, requests being unanswered.
                if let Some((now, period)) = p.retrans {
                    s.timer.deadlines().restart_retrans(now, period);
                }
                Step::Done
            }
            _ if req_idle && completer_idle(qp, &mut s, &mut comp_attrs) => Step::Done,
            _ => completer(
                &dev,
                qp,
                &mut s,
                comp_buf,
                &mut mrs,
                &mut comp_loaded,
                &mut comp_attrs,
            ),
        };
        if req_idle && comp == Step::More {
            comp_since_idle = true;
        }
        step = if req == Step::More || comp == Step::More {
            Step::More
        } else {
            Step::Done
        };
        if step == Step::Done {
            if !comp_since_idle {
                break;
            }
            comp_since_idle = false;
            req_idle = false;
            // Should the steps run out here, the next call looks.
            step = Step::More;
        }
    }
    net::flush(&dev, &mut batch);
    store_comp_psn(qp, &s, &mut comp_attrs);
    s.wqe_buf = Some(buf);
    s.timer.arm(qp);
    step
}

/// What the completer reads of the QP's attributes, in one hold of their
/// lock, and keeps over the steps it takes in a row in a send-task call
/// (while the requester, which moves `req_psn` and reads `comp_psn`, does
/// not run): a READ's responses, or a run of ACKs, take the irq-safe lock
/// once a call instead of twice a response. The state is read again
/// before each step, lock-free. A modify of the limits or the timeout in
/// the middle of a call (SQD allows it) is seen at the next call, at most
/// [`SEND_STEPS_PER_CALL`] responses later (C reads them unlocked, per
/// response).
#[derive(Clone, Copy)]
struct CompAttrs {
    lim: RetryLimits,
    /// The requester's PSN.
    req_psn: u32,
    /// The retry counts a modify to RTS set (`comp_retry_cnt`,
    /// `comp_rnr_retry`).
    counts: (u8, u8),
    timeout_jiffies: u64,
    /// `comp_psn` as the attributes hold it: the completer's own PSN
    /// (`CompInfo::psn`) goes back there when it differs.
    stored_psn: u32,
}

impl CompAttrs {
    /// The QP's state, read now, and the completer's attributes: those
    /// `kept` from its last step, or read now, with the completer's PSN
    /// taken from them (a modify may have set it, `sq_psn`).
    fn get(qp: &Qp, s: &mut SendSide, kept: &mut Option<Self>) -> (QpState, Self) {
        if let Some(a) = *kept {
            return (qp.state(), a);
        }
        let (state, a) = Self::read(qp);
        s.comp.psn = a.stored_psn;
        *kept = Some(a);
        (state, a)
    }

    fn read(qp: &Qp) -> (QpState, Self) {
        qp.with_attrs(|a| {
            (
                a.state,
                Self {
                    lim: RetryLimits {
                        retry_cnt: a.retry_cnt,
                        rnr_retry: a.rnr_retry,
                    },
                    req_psn: a.req_psn,
                    counts: (a.comp_retry_cnt, a.comp_rnr_retry),
                    timeout_jiffies: a.timeout_jiffies,
                    stored_psn: a.comp_psn,
                },
            )
        })
    }
}

/// Ends the completer's hold on `attrs`: stores its PSN for the requester
/// and query_qp if its steps moved it.
fn store_comp_psn(qp: &Qp, s: &SendSide, attrs: &mut Option<CompAttrs>) {
    if let Some(a) = attrs.take() {
        let psn = s.comp.psn;
        if psn != a.stored_psn {
            qp.with_attrs_mut(|at| at.comp_psn = psn);
        }
    }
}

/// Whether a run of the completer would find nothing to do (no response,
/// no timeout, and at the head of the send queue no WQE the requester
/// finished or failed), and if so, what that run would still do: restart
/// the retransmission timer while requests are unanswered
/// (`reset_retry_timer` at `COMPST_EXIT`), stop it once none is. Such a
/// run comes after every request the requester sends and after every
/// response taken (the requester looks again after it); this is a look at
/// the response queue and the head WQE's state instead of the completer's
/// setup and walk.
fn completer_idle(qp: &Qp, s: &mut SendSide, kept: &mut Option<CompAttrs>) -> bool {
    if s.comp_timeout || s.comp.timeout_retry || qp.io().resp_queued() {
        return false;
    }
    // A done or failed WQE at the head is one the requester finished (the
    // completer's own are retired in its run): an RC QP that only sends
    // over the wire never needs the queue's lock for this look.
    if s.flags.finished_own && matches!(head_state(qp), Some(WqeState::Done | WqeState::Error)) {
        return false;
    }
    let (state, a) = CompAttrs::get(qp, s, kept);
    if !matches!(state, QpState::Rts | QpState::Sqd) {
        // The completer returns at once.
        return true;
    }
    let comp_psn = s.comp.psn;
    let rearm = psn_diff(a.req_psn, comp_psn) > 0;
    settle_retry_timer(qp, s, rearm, a.req_psn, comp_psn, a.timeout_jiffies);
    true
}

/// The retransmission timer at the end of a completer run: restarted while
/// requests are unanswered (`rearm`, C's `reset_retry_timer` at
/// `COMPST_EXIT`, RC only: UC has no timer), stopped once every request is
/// acknowledged (the requester's PSN is the completer's).
fn settle_retry_timer(
    qp: &Qp,
    s: &mut SendSide,
    rearm: bool,
    req_psn: u32,
    comp_psn: u32,
    timeout_jiffies: u64,
) {
    if rearm {
        if qp.qp_type() == QpType::Rc {
            let period = retrans_period_ns(timeout_jiffies, rc_timer::hz());
            let now = s.timer.now();
            s.timer.deadlines().restart_retrans(now, period);
        }
    } else if req_psn == comp_psn {
        s.timer.deadlines().all_acked();
    }
}

/// Requester and completer steps (a packet sent, a response taken) the send
/// task takes in one call, with one device reference, one hold of the
/// send side's lock and one update of the kernel timer: C's `rxe_sender`
/// takes one a call. A run of the task (rxe/task.rs) is then up to 16
/// times [`crate::task::MAX_ITERATIONS`] packets before it queues itself
/// again; the workqueue is unbound, so other QPs' tasks run in workers of
/// their own meanwhile, preempted and scheduled by the scheduler.
const SEND_STEPS_PER_CALL: u32 = 16;

/// A request packet the requester sent whose WQE is not done: more
/// packets, or its ACK, are to come.
#[derive(Clone, Copy)]
struct SentUnfinished {
    /// For an RC QP, when it was sent and the retransmission timer's
    /// period (UC has no timer).
    retrans: Option<(u64, Option<u64>)>,
}

/// `rxe_requester` for RC/UC.
fn requester(
    dev: &Device<Rxe>,
    qp: &Arc<Qp>,
    s: &mut SendSide,
    buf: &mut [u8],
    mrs: &mut MrCache,
    batch: &mut TxBatch,
    sent: &mut Option<SentUnfinished>,
) -> Step {
    let t = qp.qp_type();
    let state = qp.state();
    if !matches!(state, QpState::Rts | QpState::Sqd) {
        return Step::Done;
    }
    let rxe = dev.data();
    if s.flags.need_retry && !s.flags.wait_for_rnr_timer {
        // The packets held leave before those the retry sends again.
        net::flush(dev, batch);
        retry(qp, s, buf);
        s.flags.need_retry = false;
        // Back to resend what was sent: a WQE resent keeps its credit,
        // and the one that waited for a credit asks again.
        s.flags.need_rd_atomic = false;
    }
    if s.flags.need_rd_atomic {
        // Its next WQE waits for a read/atomic credit, and none was freed
        // since (the completer clears the flag when it frees one, and
        // schedules this task): nothing to send, and no need to copy the
        // WQE out to find that out again after every READ response.
        return Step::Done;
    }
    let (at_head, index, next) = match s.req {
        // The message's next packet: its WQE is in `buf` as in the queue.
        // Not at a boundary, it is not a LOCAL_INV, the one WQE whose
        // fence asks whether it is at the head (a local operation is done
        // in one step).
        ReqAt::Continuing { index, next } => (false, index, next),
        _ => {
            // At a WQE index of its own that the producer has not passed,
            // nothing was posted since: a look at the producer index is
            // enough, without the queue's lock (in SQD, the consumer's
            // index is wanted too, below).
            if let Some(at) = s.req.index() {
                if state != QpState::Sqd && qp.sq_producer() == at {
                    return Step::Done;
                }
            }
            // The indices and the WQE in one hold of the queue's lock.
            let Ok(f) = fetch(qp, s.req.index(), buf) else {
                return Step::Done;
            };
            if !f.loaded {
                if state == QpState::Sqd && f.index == f.cons {
                    qp.check_sq_drained();
                }
                return Step::Done;
            }
            (f.index == f.cons, f.index, f.next)
        }
    };
    let Some(mut w) = SendWqeBytes::new(buf) else {
        return Step::Done;
    };
    if state == QpState::Sqd && w.state() != WqeState::Processing {
        return Step::Done;
    }
    let view = w.send_view(t);
    let (q, dest, fields, period) = qp.with_attrs(|a| {
        let q = ReqView {
            t,
            mtu: a.mtu,
            max_sge: qp.sq_max_sge(),
            at_head,
            rd_atomic_free: a.req_rd_atomic,
            max_rd_atomic: u32::from(a.max_rd_atomic),
            psn: a.req_psn,
            comp_psn: a.comp_psn,
            prev_opcode: s.prev,
            skb_out_high: qp.skb_out_high(),
        };
        let f = ReqFields {
            dest_qpn: a.dest_qp_num,
            ..ReqFields::default()
        };
        let period = retrans_period_ns(a.timeout_jiffies, rc_timer::hz());
        (q, xmit::dest_of(&a.pri_av), f, period)
    });
    let step = plan(&view, &q, &mut s.flags, || qp.take_rd_atomic());
    let fail = |s: &mut SendSide, w: &mut SendWqeBytes<'_>, status: WcStatus| {
        w.set_status(status);
        w.set_state(WqeState::Error);
        s.flags.finished_own = true;
        s.req = ReqAt::Wqe(next);
    };
    let p = match step {
        ReqStep::Wait(_) => return Step::Done,
        ReqStep::Packet(p) => p,
        ReqStep::LocalOp => return local_op(qp, s, index, next, buf),
        ReqStep::UdSkip(_) => {
            // A UD QP's WQEs are ud.rs's, never here.
            fail(s, &mut w, WcStatus::LocQpOp);
            let _ = write_elem(qp, index, buf);
            qp.as_arc_borrow().set_error();
            return Step::Done;
        }
        ReqStep::Fail(status) => {
            fail(s, &mut w, status);
            let _ = write_elem(qp, index, buf);
            qp.as_arc_borrow().set_error();
            return Step::Done;
        }
    };
    // The remote part, from the WQE's work request.
    let wr_op = w.wr_op();
    let iova = w.iova();
    let mut fields = fields;
    fields.iova = iova;
    fields.resid = view.resid;
    {
        // The work request's fields, from an array of the fixed part's
        // size: constant offsets inside it, no bounds checks (`w` showed
        // that `buf` holds the fixed part).
        let Some(fixed) = buf.first_chunk::<{ send_off::DATA }>() else {
            return Step::Done;
        };
        fields.rkey = match wr_op {
            wqe::opcode::ATOMIC_CMP_AND_SWP | wqe::opcode::ATOMIC_FETCH_AND_ADD => {
                wqe::get32(fixed, send_off::WR + 24)
            }
            // `wr.flush`: remote_addr, length, rkey, type, level.
            wqe::opcode::FLUSH => {
                fields.flush_type = fixed.get(send_off::WR + 16).copied().unwrap_or(0);
                fields.flush_level = fixed.get(send_off::WR + 17).copied().unwrap_or(0);
                wqe::get32(fixed, send_off::WR + 12)
            }
            _ => wqe::get32(fixed, send_off::WR + 8),
        };
        fields.compare_add = wqe::get64(fixed, send_off::WR + 8);
        fields.swap = wqe::get64(fixed, send_off::WR + 16);
        let ex = wqe::get32(fixed, send_off::EX);
        fields.imm = u32::from_be(ex);
        fields.inv_rkey = ex;
    }
    let mut bth = Bth::new(p.opcode, fields.dest_qpn, p.psn);
    bth.se = p.solicited;
    bth.ack_req = p.ack_req;
    let mut dma = DmaInfo::decode(buf.get(send_off::DMA..).unwrap_or_default()).unwrap_or_default();
    let list_start = send_off::DATA.min(buf.len());
    let inline = view.send_flags & wqe::SEND_INLINE != 0;
    let atomic_write = p.mask.intersects(crate::wire::opcode::Mask::ATOMIC_WRITE);
    let mut copy_status = WcStatus::Success;
    let r = {
        let list = &buf[list_start..];
        xmit::xmit(
            dev,
            qp,
            &dest,
            &bth,
            p.payload as usize,
            &mut |pkt| req_plan::write_request(pkt, &p, &fields),
            Some(batch),
            |payload| {
                if payload.is_empty() {
                    return Ok(());
                }
                let r = if inline {
                    dma.take_inline(list, payload)
                } else if atomic_write {
                    // The 8 bytes are in the WQE (`dma.atomic_wr`).
                    dma.take_atomic_write(list).map(|v| {
                        let n = payload.len().min(v.len());
                        payload[..n].copy_from_slice(&v[..n]);
                    })
                } else {
                    copy::copy_data(
                        &rxe,
                        mrs,
                        qp.pd_id(),
                        0,
                        &mut dma,
                        list,
                        CopyBuf::FromMr(payload),
                    )
                };
                r.map_err(|e| {
                    copy_status = if e.send_status() == bindings::ib_wc_status_IB_WC_LOC_PROT_ERR {
                        WcStatus::LocProt
                    } else {
                        WcStatus::LocQpOp
                    };
                    EINVAL
                })
            },
        )
    };
    let Some(mut w) = SendWqeBytes::new(buf) else {
        return Step::Done;
    };
    if r.is_err() {
        let status = if copy_status != WcStatus::Success {
            copy_status
        } else {
            WcStatus::LocQpOp
        };
        fail(s, &mut w, status);
        let _ = write_elem(qp, index, buf);
        qp.as_arc_borrow().set_error();
        return Step::Done;
    }
    let a = after_send(t, &view, &p, q.mtu);
    w.store_after_send(&a, p.took_rd_atomic);
    if a.state == WqeState::Done {
        s.flags.finished_own = true;
    }
    if p.mask.intersects(crate::wire::opcode::Mask::FLUSH) {
        // A flush carries nothing and leaves nothing (oA19-2): the
        // completer expects no more data for it.
        dma.resid = 0;
    }
    if let Some(d) = buf.get_mut(send_off::DMA..) {
        // A read's data position is the completer's.
        if !p.mask.contains(crate::wire::opcode::Mask::READ) {
            let _ = dma.encode(d);
        }
    }
    let _ = write_elem(qp, index, buf);
    qp.with_attrs_mut(|at| at.req_psn = a.next_psn);
    qp.req_skb_sent();
    // Counted from after the packet went out, as C's `update_state` does.
    let retrans = (t == QpType::Rc).then(|| (s.timer.now(), period));
    if let Some((now, period)) = retrans {
        // `update_state`: the retransmission timer runs while requests
        // are unanswered.
        s.timer.deadlines().sent(now, period);
    }
    if a.state != WqeState::Done {
        *sent = Some(SentUnfinished { retrans });
    }
    s.prev = Some(a.prev_opcode);
    if a.next_wqe {
        s.req = ReqAt::Wqe(next);
    } else {
        // `buf` is what was just written back.
        s.req = ReqAt::Continuing { index, next };
    }
    Step::More
}

/// Executes the local operation (LOCAL_INV, REG_MR, BIND_MW) of the WQE
/// at `index`, whose bytes are in `buf` (`rxe_do_local_ops`): the WQE is
/// done with no packet, and the requester goes on to the next one; the
/// completer completes it in order (signalled or not, as any WQE). A
/// failed operation fails the WQE (`IB_WC_LOC_QP_OP_ERR`, or
/// `IB_WC_MW_BIND_ERR` for a bind) and moves the QP to ERR, as C's
/// requester does.
fn local_op(qp: &Arc<Qp>, s: &mut SendSide, index: u32, next: u32, buf: &mut [u8]) -> Step {
    let Some(dev) = qp.device() else {
        return Step::Done;
    };
    let r = copy::do_local_op(&dev.data(), qp.pd_id(), qp.qpn(), buf);
    let Some(mut w) = SendWqeBytes::new(buf) else {
        return Step::Done;
    };
    s.req = ReqAt::Wqe(next);
    s.flags.finished_own = true;
    match r {
        Ok(()) => {
            w.set_status(WcStatus::Success);
            w.set_state(WqeState::Done);
            let _ = write_elem(qp, index, buf);
            Step::More
        }
        Err(status) => {
            w.set_status(if status == WcStatus::MwBind.as_raw() {
                WcStatus::MwBind
            } else {
                WcStatus::LocQpOp
            });
            w.set_state(WqeState::Error);
            let _ = write_elem(qp, index, buf);
            qp.as_arc_borrow().set_error();
            Step::Done
        }
    }
}

/// `req_retry`: the requester back to the completer's PSN.
fn retry(qp: &Qp, s: &mut SendSide, buf: &mut [u8]) {
    let t = qp.qp_type();
    let (comp_psn, mtu) = qp.with_attrs(|a| (a.comp_psn, a.mtu));
    qp.with_attrs_mut(|a| a.req_psn = comp_psn);
    let (cons, prod) = {
        let q = qp.sq_queue().lock();
        (
            q.consumer(QueueType::FromClient),
            q.producer(QueueType::FromClient),
        )
    };
    s.req = ReqAt::Wqe(cons);
    s.prev = None;
    let mut first = true;
    let mut index = cons;
    while index != prod {
        if read_elem(qp, index, buf).is_err() {
            return;
        }
        let Some(mut w) = SendWqeBytes::new(buf) else {
            return;
        };
        let step = w.rewind_step(t, &mut first, &mut s.prev, comp_psn, mtu);
        let inline = w.send_flags() & wqe::SEND_INLINE != 0;
        match step {
            RewindStep::Stop => return,
            RewindStep::Skip => {}
            RewindStep::Restart(r) => {
                if r.skip != 0 && !inline {
                    // Move the list cursor past what was acknowledged.
                    if let Some(mut dma) = buf.get(send_off::DMA..).and_then(DmaInfo::decode) {
                        let is_read = wqe::get32(buf, send_off::OPCODE) == wqe::opcode::RDMA_READ;
                        if !is_read {
                            dma.resid = dma.length;
                            dma.cur_sge = 0;
                            dma.sge_offset = 0;
                            let list_start = send_off::DATA.min(buf.len());
                            let (head, list) = buf.split_at_mut(list_start);
                            let _ = dma::advance(&mut dma, list, r.skip as usize);
                            let _ = dma.encode(&mut head[send_off::DMA..]);
                        }
                    }
                }
                let _ = write_elem(qp, index, buf);
            }
        }
        index = qp.sq_next(index);
    }
}

/// The completer's view of the QP.
struct CompQp<'a> {
    dev: &'a Device<Rxe>,
    rxe: &'a RxeDev,
    qp: &'a Arc<Qp>,
    /// The task call's last region (see [`MrCache`]).
    mrs: &'a mut MrCache,
    /// The requester's PSN when the run began (it does not move during
    /// the run).
    req_psn: u32,
    cur: Option<RecvPkt>,
    buf: &'a mut [u8],
    /// The WQE whose copy the requester keeps ([`ReqAt::Continuing`]),
    /// and whether the completer wrote it: the copy is then stale.
    req_kept: Option<u32>,
    wrote_req_kept: bool,
    /// `buf` has changes not yet written back to the held WQE's element
    /// (`loaded`): written once at the end of the run ([`CompQp::flush`]),
    /// not once a change, and not at all if the WQE is completed meanwhile
    /// (its slot is free then, and nothing reads it again).
    dirty: bool,
    /// The head WQE whose bytes `buf` holds: loaded once a run, or kept
    /// from the run before while the requester did not run (nothing else
    /// changes it: the requester runs in the same task), and again after
    /// each completion.
    loaded: Option<u32>,
    /// The consumer index before the first completion of the run.
    cons0: Option<u32>,
    /// `reset_retry_timer` was asked for.
    rearm: bool,
    /// An RNR NAK asked for this many microseconds before a retry.
    rnr_usecs: Option<u32>,
}

impl CompQp<'_> {
    /// Loads the head WQE's bytes, unless they are loaded already; its
    /// index.
    fn load(&mut self) -> Option<u32> {
        if self.loaded.is_none() {
            self.loaded = read_head(self.qp, self.buf);
        }
        self.loaded
    }

    /// Has the held WQE written back to element `i` by the end of the run
    /// ([`CompQp::flush`]). Only the completer's run reads the element
    /// meanwhile, through `buf`: the requester runs in the same task, after
    /// the run.
    fn write_back(&mut self, i: u32) {
        if self.req_kept == Some(i) {
            self.wrote_req_kept = true;
        }
        debug_assert_eq!(self.loaded, Some(i));
        self.dirty = true;
    }

    /// Writes the held WQE back if it has changes ([`write_elem`]); the
    /// end of every run.
    fn flush(&mut self) {
        if let (true, Some(i)) = (core::mem::take(&mut self.dirty), self.loaded) {
            let _ = write_elem(self.qp, i, self.buf);
        }
    }

    /// Copies `data` (a READ response's payload, an atomic's original
    /// value) into the buffers of the held send WQE at element `i`, from
    /// its DMA cursor on, and writes the advanced cursor back to the
    /// element; the bytes still to come.
    fn scatter_into_wqe(&mut self, i: u32, data: &[u8]) -> Result<u32, ()> {
        let mut dma = DmaInfo::decode(self.buf.get(send_off::DMA..).ok_or(())?).ok_or(())?;
        let list_start = send_off::DATA.min(self.buf.len());
        let (head, list) = self.buf.split_at_mut(list_start);
        copy::copy_data(
            self.rxe,
            self.mrs,
            self.qp.pd_id(),
            bindings::ib_access_flags_IB_ACCESS_LOCAL_WRITE,
            &mut dma,
            list,
            CopyBuf::ToMr(data),
        )
        .map_err(|_| ())?;
        dma.encode(&mut head[send_off::DMA..]).ok_or(())?;
        self.write_back(i);
        Ok(dma.resid)
    }
}

impl CompEnv for CompQp<'_> {
    fn next_resp(&mut self) -> Option<Resp> {
        self.cur = self.qp.io().take_resp();
        let pkt = self.cur.as_ref()?;
        let view = pkt.view()?;
        Some(Resp::from_packet(&view))
    }

    fn head(&mut self) -> Option<HeadWqe> {
        if self.cur.is_none() && self.loaded.is_none() {
            // No response: a WQE neither done nor failed leaves the walk
            // at once (`get_wqe`), which then looks at its state only (a
            // retry on timeout): that is read in place, as C does, not the
            // whole WQE copied out once a packet the requester sends.
            if let Some(state) = head_state(self.qp) {
                if !matches!(state, WqeState::Done | WqeState::Error) {
                    return Some(HeadWqe::of_state(state));
                }
            }
        }
        self.load()?;
        let t = self.qp.qp_type();
        SendWqeBytes::new(self.buf).map(|w| w.head(t))
    }

    fn set_status(&mut self, status: WcStatus) {
        if let Some(i) = self.load() {
            if let Some(mut w) = SendWqeBytes::new(self.buf) {
                w.set_status(status);
            }
            self.write_back(i);
        }
    }

    fn read_payload(&mut self) -> Result<u32, ()> {
        let i = self.load().ok_or(())?;
        // Out of `self` while its payload is scattered straight from the
        // skb, then back.
        let pkt = self.cur.take().ok_or(())?;
        let r = match pkt.view() {
            Some(view) => self.scatter_into_wqe(i, view.payload()),
            None => Err(()),
        };
        self.cur = Some(pkt);
        r
    }

    fn atomic_payload(&mut self) -> Result<(), ()> {
        let i = self.load().ok_or(())?;
        let pkt = self.cur.as_ref().ok_or(())?;
        let orig = pkt.view().and_then(|v| v.atmack()).ok_or(())?.orig;
        self.scatter_into_wqe(i, &orig.to_ne_bytes()).map(|_| ())
    }

    fn release_rd_atomic(&mut self) -> bool {
        let Some(i) = self.load() else {
            return false;
        };
        let Some(mut w) = SendWqeBytes::new(self.buf) else {
            return false;
        };
        if !w.has_rd_atomic() {
            return false;
        }
        w.set_has_rd_atomic(false);
        self.write_back(i);
        self.qp.with_attrs_mut(|a| a.req_rd_atomic += 1);
        true
    }

    fn check_sq_drained(&mut self, _comp_psn: u32) {}

    fn complete(&mut self) {
        let Some(i) = self.load() else {
            return;
        };
        let b = &*self.buf;
        let wr_op = wqe::get32(b, send_off::OPCODE);
        let flags = wqe::get32(b, send_off::SEND_FLAGS);
        let status = wqe::get32(b, send_off::STATUS);
        let ok = status == WcStatus::Success.as_raw();
        let signalled = self.qp.sq_sig_all() || flags & req_plan::SEND_SIGNALED != 0 || !ok;
        let completion = if signalled {
            let mut c = Completion {
                wr_id: wqe::get64(b, send_off::WR_ID),
                status,
                qp_num: self.qp.qpn(),
                qp: self.qp.ib_ptr(),
                ..Completion::default()
            };
            if ok {
                c.opcode = comp_check::wc_opcode(wr_op);
                if matches!(
                    wr_op,
                    wqe::opcode::RDMA_WRITE_WITH_IMM | wqe::opcode::SEND_WITH_IMM
                ) {
                    c.wc_flags = bindings::ib_wc_flags_IB_WC_WITH_IMM;
                }
                c.byte_len = wqe::get32(b, wqe_off::DMA_LENGTH);
            }
            Some(c)
        } else {
            None
        };
        if ok
            && matches!(
                wr_op,
                wqe::opcode::SEND | wqe::opcode::SEND_WITH_IMM | wqe::opcode::SEND_WITH_INV
            )
        {
            self.rxe.count(params::CNT_RDMA_SEND);
        }
        // The slot is freed before the completion is posted (`do_complete`):
        // a consumer that reaps the CQE may post into the slot at once.
        let _ = self
            .qp
            .sq_queue()
            .lock()
            .advance_consumer(QueueType::FromClient);
        self.loaded = None;
        // Freed: what the completer changed in it is of no more use.
        self.dirty = false;
        self.cons0.get_or_insert(i);
        if let Some(c) = completion {
            let _ = self.qp.scq().post(&c, false);
        }
    }

    fn count(&mut self, index: usize) {
        self.rxe.count(index);
    }

    fn req_psn(&self) -> u32 {
        self.req_psn
    }

    fn rearm_retry_timer(&mut self) {
        self.rearm = true;
    }

    fn start_rnr_timer(&mut self, usecs: u32) {
        self.rnr_usecs = Some(usecs);
    }

    fn qp_error(&mut self) {
        self.qp.as_arc_borrow().set_error();
    }
}

/// `rxe_completer` for RC/UC.
fn completer(
    dev: &Device<Rxe>,
    qp: &Arc<Qp>,
    s: &mut SendSide,
    buf: &mut [u8],
    mrs: &mut MrCache,
    loaded: &mut Option<u32>,
    kept: &mut Option<CompAttrs>,
) -> Step {
    let rxe = dev.data();
    // Everything the run reads of the attributes, read at the first step
    // of a row (the requester, which moves `req_psn`, runs in this task,
    // not meanwhile): [`CompAttrs`].
    let (state, attrs) = CompAttrs::get(qp, s, kept);
    if !matches!(state, QpState::Rts | QpState::Sqd) {
        return Step::Done;
    }
    let CompAttrs {
        lim,
        req_psn,
        counts,
        timeout_jiffies,
        ..
    } = attrs;
    if s.fresh {
        // The counts the modify to RTS set (`qp->comp.retry_cnt`,
        // `qp->comp.rnr_retry`).
        s.fresh = false;
        s.comp.retry_cnt = counts.0;
        s.comp.rnr_retry = counts.1;
    }
    let mut env = CompQp {
        dev,
        rxe: &rxe,
        qp,
        mrs,
        req_psn,
        cur: None,
        buf,
        req_kept: match s.req {
            ReqAt::Continuing { index, .. } => Some(index),
            _ => None,
        },
        wrote_req_kept: false,
        dirty: false,
        loaded: loaded.take(),
        cons0: None,
        rearm: false,
        rnr_usecs: None,
    };
    let again = comp_check::run(
        &mut env,
        &mut s.comp,
        &mut s.flags,
        comp_check::RunInput {
            timeout: core::mem::take(&mut s.comp_timeout),
            lim,
        },
    );
    env.flush();
    let _ = env.dev;
    *loaded = env.loaded;
    if let (true, ReqAt::Continuing { index, .. }) = (env.wrote_req_kept, s.req) {
        // The requester's copy is stale: it copies the WQE out again.
        s.req = ReqAt::Wqe(index);
    }
    // The completer's PSN goes to the attributes when the row of steps
    // ends (`store_comp_psn`).
    let psn = s.comp.psn;
    settle_retry_timer(qp, s, env.rearm, req_psn, psn, timeout_jiffies);
    if let Some(usecs) = env.rnr_usecs {
        // No retry before the RNR NAK timer fires.
        let now = s.timer.now();
        s.timer
            .deadlines()
            .start_rnr(now, rnr_delay_ns(usecs, rc_timer::hz()));
    }
    if let Some(p) = env.cur.take() {
        p.consume();
    }
    if let Some(cons0) = env.cons0 {
        if let (Some(req_psn), Some(a)) = (catch_up(qp, s, cons0), kept.as_mut()) {
            a.req_psn = req_psn;
        }
    }
    if again {
        Step::More
    } else {
        Step::Done
    }
}

/// After the completer freed the send queue slots from `cons0` on: a
/// requester still in one of them (resending a WQE a late ACK completed
/// meanwhile) goes on from the oldest WQE left, at the completer's PSN.
/// Left there, it would resend the rest of a completed message, and with
/// the send queue's indices wrapped, a freed slot can be the producer's
/// index: the requester would take the queue for empty and never send the
/// WQE posted next (the C driver's requester has the same window).
/// Returns the requester's PSN if it looked at it.
fn catch_up(qp: &Qp, s: &mut SendSide, cons0: u32) -> Option<u32> {
    let req = s.req.index()?;
    let freed = {
        let q = qp.sq_queue().lock();
        let cons = q.consumer(QueueType::FromClient);
        let mut i = cons0;
        let mut found = None;
        while i != cons {
            if i == req {
                found = Some(cons);
                break;
            }
            i = q.next_index(i);
        }
        found
    };
    let cons = freed?;
    s.req = ReqAt::Wqe(cons);
    s.prev = None;
    let comp_psn = s.comp.psn;
    Some(qp.with_attrs_mut(|a| {
        if psn_diff(a.req_psn, comp_psn) < 0 {
            a.req_psn = comp_psn;
        }
        a.req_psn
    }))
}

/// The payload of the request being processed, read in place from its skb
/// (empty if there is none).
fn payload(cur: &Option<RecvPkt>) -> &[u8] {
    cur.as_ref()
        .and_then(|p| p.view())
        .map_or(&[], |v| v.payload())
}

/// The responder's view of the QP.
struct RespQp<'a> {
    dev: &'a Device<Rxe>,
    rxe: &'a RxeDev,
    qp: &'a Arc<Qp>,
    r: &'a mut RespIo,
    /// The task call's last region (see [`MrCache`]).
    mrs: &'a mut MrCache,
    /// The QP's path and destination QPN, read at the task call's first
    /// response (a read's 16 responses would otherwise take the
    /// attributes' lock 16 more times).
    path: &'a OnceCell<(Dest, u32)>,
    /// The task call's responses, held to leave together (rxe/net.rs), as
    /// the requester's packets: sent at the end of the call.
    batch: &'a RefCell<TxBatch>,
}

impl RespQp<'_> {
    /// Sends a response to the QP's destination; `headers` writes its
    /// extension headers, given the destination QPN (read with the path,
    /// in one hold of the attributes' lock, once a task call).
    fn send(
        &self,
        opcode: u8,
        psn: u32,
        len: usize,
        mut headers: impl FnMut(&mut PacketMut<'_>, u32) -> Result<(), BuildError>,
        fill: impl FnOnce(&mut [u8]) -> Result,
    ) -> Result {
        let (dest, dqpn) = self.path.get_or_init(|| {
            self.qp
                .with_attrs(|a| (xmit::dest_of(&a.pri_av), a.dest_qp_num))
        });
        let bth = Bth::new(opcode, *dqpn, psn);
        let mut headers = |pkt: &mut PacketMut<'_>| headers(pkt, *dqpn);
        let mut batch = self.batch.borrow_mut();
        xmit::xmit(
            self.dev,
            self.qp,
            dest,
            &bth,
            len,
            &mut headers,
            Some(&mut batch),
            fill,
        )
    }
}

impl RespEnv for RespQp<'_> {
    fn peek_req(&mut self) -> Option<ReqPkt> {
        if !self.has_req() {
            return None;
        }
        let view = self.r.cur.as_ref()?.view()?;
        Some(ReqPkt::from_packet(&view))
    }

    fn has_req(&mut self) -> bool {
        if self.r.cur.is_none() {
            self.r.cur = self.qp.io().take_req();
        }
        self.r.cur.is_some()
    }

    fn take_recv_wqe(&mut self) -> Result<(), RespState> {
        // The list's room first, so that a failed allocation leaves the WQE
        // on its queue. The entries past the WQE's `num_sge` may be an
        // earlier WQE's: nothing reads them (the data walk stops at
        // `num_sge`, and a WQE without entries takes no byte).
        let list = &mut self.r.list;
        let size = crate::srq::RECV_LIST_LEN;
        if list.len() != size {
            list.clear();
            // Under the responder's lock, maybe in softirq context.
            if list.resize(size, 0, GFP_ATOMIC).is_err() {
                return Err(RespState::ErrRnr);
            }
        }
        let Some(w) = self.qp.take_recv_wqe(list) else {
            return Err(RespState::ErrRnr);
        };
        let dma = DmaInfo {
            length: w.length,
            resid: w.length,
            cur_sge: 0,
            num_sge: w.num_sge,
            sge_offset: 0,
        };
        self.r.wqe = Some(CurRecv {
            wr_id: w.wr_id,
            dma,
        });
        Ok(())
    }

    fn has_recv_wqe(&self) -> bool {
        self.r.wqe.is_some()
    }

    fn recv_len(&self) -> u32 {
        self.r.wqe.as_ref().map_or(0, |w| w.dma.length)
    }

    fn resolve_rkey(
        &mut self,
        rkey: u32,
        access: u32,
        iova: u64,
        len: u32,
        whole_mr: bool,
    ) -> Result<u64, ()> {
        let (mr, offset) =
            copy::lookup_rkey(self.rxe, self.qp.pd_id(), self.qp.qpn(), access, rkey).ok_or(())?;
        if !whole_mr {
            mr.check_range(iova.wrapping_add(offset), u64::from(len))
                .map_err(|_| ())?;
        }
        self.r.mr = Some(mr);
        Ok(offset)
    }

    fn drop_mr(&mut self) {
        // Kept for the rest of the call: the next response of a READ
        // checks it again instead of looking its key up.
        if let Some(m) = self.r.mr.take() {
            self.mrs.keep(m.into_mr());
        }
    }

    fn recv_data(&mut self) -> Result<(), RespState> {
        let pd = self.qp.pd_id();
        let r = &mut *self.r;
        let Some(CurRecv { dma, .. }) = r.wqe.as_mut() else {
            return Err(RespState::ErrMalformedWqe);
        };
        let list = &r.list;
        copy::copy_data(
            self.rxe,
            self.mrs,
            pd,
            bindings::ib_access_flags_IB_ACCESS_LOCAL_WRITE,
            dma,
            list,
            CopyBuf::ToMr(payload(&r.cur)),
        )
        .map_err(|e| {
            if e.is_length() {
                RespState::ErrLength
            } else {
                RespState::ErrMalformedWqe
            }
        })
    }

    fn write_data(&mut self, iova: u64) -> Result<(), ()> {
        let mr = self.r.mr.as_ref().ok_or(())?;
        mr.copy(iova, CopyBuf::ToMr(payload(&self.r.cur)))
            .map_err(|_| ())
    }

    fn invalidate(&mut self, rkey: u32) -> Result<(), ()> {
        copy::local_inv(self.rxe, rkey).map_err(|_| ())
    }

    fn recheck_mr(&mut self, rkey: u32) -> Result<(), ()> {
        self.r.mr = Some(copy::recheck_rkey(self.rxe, self.mrs, rkey).ok_or(())?);
        Ok(())
    }

    fn send_read_response(&mut self, rr: &ReadResp, iova: u64, msn: u32) -> Result<(), RespState> {
        let mut copy_failed = false;
        let mr = self.r.mr.as_ref();
        let r = self.send(
            rr.opcode,
            rr.psn,
            rr.payload as usize,
            |pkt, dqpn| resp_check::write_read_response(pkt, dqpn, rr, msn),
            |payload| {
                if payload.is_empty() {
                    return Ok(());
                }
                let Some(mr) = mr else {
                    copy_failed = true;
                    return Err(EINVAL);
                };
                mr.copy(iova, CopyBuf::FromMr(payload)).map_err(|_| {
                    copy_failed = true;
                    EINVAL
                })
            },
        );
        match r {
            Ok(()) => Ok(()),
            Err(_) if copy_failed => Err(RespState::ErrRkeyViolation),
            Err(_) => Err(RespState::ErrRnr),
        }
    }

    fn atomic(&mut self, iova: u64) -> Result<u64, RespState> {
        let a = self
            .r
            .cur
            .as_ref()
            .and_then(|p| p.view())
            .and_then(|v| v.atmeth().map(|a| (a, v.opcode())))
            .ok_or(RespState::ErrRkeyViolation)?;
        let mr = self.r.mr.as_ref().ok_or(RespState::ErrRkeyViolation)?;
        if !crate::access::atomic_aligned(iova) {
            return Err(RespState::ErrMisalignedAtomic);
        }
        let cmp_swap = a.1 == crate::wire::opcode::code::RC_COMPARE_SWAP;
        let op = crate::atomic::request_op(cmp_swap, a.0.comp, a.0.swap_add);
        crate::atomic::atomic_op(mr, iova, op).map_err(|_| RespState::ErrRkeyViolation)
    }

    fn atomic_write(&mut self, iova: u64) -> Result<(), RespState> {
        // The length check let only 8-byte payloads through.
        let value: [u8; 8] = self
            .r
            .cur
            .as_ref()
            .and_then(|p| p.view())
            .and_then(|v| v.payload().get(..8)?.try_into().ok())
            .ok_or(RespState::ErrRkeyViolation)?;
        let mr = self.r.mr.as_ref().ok_or(RespState::ErrRkeyViolation)?;
        // As `atomic_write_reply`: a violation here is never the access
        // error event's state.
        crate::atomic::atomic_write(mr, iova, value).map_err(|e| match e {
            RemoteError::Misaligned => RespState::ErrMisalignedAtomic,
            RemoteError::RkeyViolation => RespState::ErrRkeyViolation,
        })
    }

    fn flush(&mut self, iova: u64, len: u32, flush_type: u8, whole_mr: bool) -> Result<(), ()> {
        let mr = self.r.mr.as_ref().ok_or(())?;
        let level = if whole_mr {
            FlushLevel::Mr
        } else {
            FlushLevel::Range
        };
        mr.flush(level, u32::from(flush_type), iova, u64::from(len))
            .map_err(|_| ())
    }

    fn complete(&mut self, status: WcStatus, write_len: u32) -> Result<(), ()> {
        let Some(CurRecv { wr_id, dma }) = self.r.wqe.take() else {
            return Ok(());
        };
        let view = self.r.cur.as_ref().and_then(|p| p.view());
        let mask = view
            .as_ref()
            .map_or(crate::wire::opcode::Mask::NONE, |v| v.mask());
        let mut c = Completion {
            wr_id,
            status: status.as_raw(),
            qp_num: self.qp.qpn(),
            qp: self.qp.ib_ptr(),
            ..Completion::default()
        };
        if status == WcStatus::Success {
            self.rxe.count(params::CNT_RDMA_RECV);
            let (opcode, len) = resp_check::recv_wc(mask, write_len, dma.length, dma.resid);
            c.opcode = opcode;
            c.byte_len = len;
            c.wc_flags = bindings::ib_wc_flags_IB_WC_GRH;
            if let Some(v) = &view {
                if let Some(i) = v.immdt() {
                    c.wc_flags |= bindings::ib_wc_flags_IB_WC_WITH_IMM;
                    c.ex = i.imm.to_be();
                }
                if let Some(i) = v.ieth() {
                    c.wc_flags |= bindings::ib_wc_flags_IB_WC_WITH_INVALIDATE;
                    c.ex = i.rkey;
                }
            }
            c.port_num = 1;
        }
        let se = view.as_ref().is_none_or(|v| v.bth().se);
        self.qp.rcq().post(&c, se).map_err(|_| ())
    }

    fn in_error(&self) -> bool {
        self.qp.state() == QpState::Err
    }

    fn send_ack(&mut self, ack: &Ack, msn: u32, orig: u64) {
        let _ = self.send(
            ack.opcode,
            ack.psn,
            0,
            |pkt, dqpn| resp_check::write_ack(pkt, dqpn, ack, msn, orig),
            |_| Ok(()),
        );
    }

    fn reset_recv_wqe(&mut self) {
        if let Some(CurRecv { dma, .. }) = self.r.wqe.as_mut() {
            dma.resid = dma.length;
            dma.cur_sge = 0;
            dma.sge_offset = 0;
        }
    }

    fn access_error_event(&mut self) {
        self.qp.access_error_event();
    }

    fn release_req(&mut self) {
        if let Some(p) = self.r.cur.take() {
            p.consume();
        }
        self.r.mr = None;
    }

    fn count(&mut self, index: usize) {
        self.rxe.count(index);
    }

    fn qp_error(&mut self) {
        self.qp.as_arc_borrow().set_error();
    }
}

/// Whether the responder answers requests in `state`.
fn receiving(state: QpState) -> bool {
    matches!(state, QpState::Rtr | QpState::Rts | QpState::Sqd)
}

/// Request packets the responder answers in one call of the receive task,
/// with one device reference and one hold of its state's lock: C's
/// `rxe_receiver` takes one a call, which here would set up and tear down
/// that state once a packet.
const RESP_PACKETS_PER_CALL: u32 = 16;

/// The receive task (`rxe_receiver`) for a connected QP: the responder,
/// for up to [`RESP_PACKETS_PER_CALL`] packets. The QP's attributes (its
/// limits, access flags, path and expected PSN) are read once a call, in
/// one hold of their lock, and the PSN the call reached is stored back
/// at its end if it moved; the state is checked again before each packet
/// (lock-free, its mirror), so a move to ERR stops the responder at the
/// next packet.
/// A modify of the other attributes in the middle of a call is seen at
/// the next call, at most [`RESP_PACKETS_PER_CALL`] packets later: none of
/// them changes in RTS but the access flags, and a modify is ordered with
/// no packet in flight anyway (C reads them unlocked, per packet).
pub(crate) fn receiver(qp: &Arc<Qp>) -> Step {
    let Some(dev) = qp.device() else {
        return Step::Done;
    };
    let rxe = dev.data();
    let mut r = qp.rc().recv.lock();
    let (state, cfg, rq_psn, nres) = qp.with_attrs(|a| {
        (
            a.state,
            RespCfg {
                t: qp.qp_type(),
                mtu: a.mtu,
                access: a.qp_access_flags,
                max_dest_rd_atomic: a.rd_atomic_resources,
                has_srq: qp.has_srq(),
                min_rnr_timer: a.min_rnr_timer,
            },
            a.resp_psn,
            a.rd_atomic_resources as usize,
        )
    });
    if !receiving(state) {
        return Step::Done;
    }
    if r.fresh || r.slots.len() != nres {
        // After a reset, or with another `max_dest_rd_atomic`
        // (`free_rd_atomic_resources`, `alloc_rd_atomic_resources`): the
        // replay resources are new and empty.
        r.slots.clear();
        if r.slots
            .resize(nres, ReplayRes::default(), GFP_ATOMIC)
            .is_err()
        {
            return Step::Done;
        }
        r.head = 0;
        // No read or atomic is in progress on a freed resource.
        r.info.res = None;
    }
    if r.fresh {
        r.info = RespInfo::new(rq_psn);
        r.ctx = RdmaCtx::default();
        r.fresh = false;
    }
    r.info.psn = rq_psn;
    let mut mrs = MrCache::default();
    let path = OnceCell::new();
    let batch = RefCell::new(TxBatch::new());
    let mut again = false;
    for _ in 0..RESP_PACKETS_PER_CALL {
        // The environment and the state `run` changes are disjoint
        // fields, borrowed in place.
        let RecvSide {
            info,
            ctx,
            slots,
            head,
            io,
            ..
        } = &mut *r;
        let mut env = RespQp {
            dev: &dev,
            rxe: &rxe,
            qp,
            r: io,
            mrs: &mut mrs,
            path: &path,
            batch: &batch,
        };
        let mut resp = Responder {
            info,
            ctx,
            res: Resources::new(slots, head),
        };
        again = resp_check::run(&mut env, &cfg, &mut resp);
        if !again || !receiving(qp.state()) {
            again = false;
            break;
        }
    }
    net::flush(&dev, &mut batch.borrow_mut());
    // The expected PSN for query_qp, if the call moved it (a READ's
    // middle responses do not): as the completer stores `comp_psn`.
    let psn = r.info.psn;
    if psn != rq_psn {
        qp.with_attrs_mut(|a| a.resp_psn = psn);
    }
    if again {
        Step::More
    } else {
        Step::Done
    }
}
