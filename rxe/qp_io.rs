// SPDX-License-Identifier: GPL-2.0

//! A QP's transport plumbing: its two tasks and its two input queues, as
//! the C driver's QP has them.
//!
//! - the send task (`send_task`, `rxe_sender`) runs the requester, then the
//!   completer; it is scheduled by a post to the send queue, a drain or an
//!   error, and by a response packet queued for the completer;
//! - the receive task (`recv_task`, `rxe_receiver`) runs the responder; it
//!   is scheduled by a request packet queued for it (or, idle and of a
//!   connected QP, runs one call in the receive softirq that queued it),
//!   a post to the receive queue in ERR, and an error.
//!
//! The input queues hold the packets rxe/recv.rs accepted for the QP until
//! its tasks take them: requests for the responder (`req_pkts`), responses
//! for the completer (`resp_pkts`). They are unbounded, as the C driver's
//! skb queues; a packet that cannot be queued (no memory) is dropped.

use crate::qp::Qp;
use crate::qp_attr::{
    QpState,
    QpType, //
};
use crate::rdma::bh_lock::in_serving_softirq;
use crate::recv::RecvPkt;
use crate::task::{
    Step,
    Task,
    TaskFn,
    INLINE_ITERATIONS, //
};
use crate::wire::opcode::Mask;
use core::sync::atomic::{
    AtomicU8,
    Ordering, //
};
use kernel::{
    alloc::AllocError,
    new_spinlock_irq,
    prelude::*,
    sync::{
        Arc,
        ArcBorrow,
        SpinLockIrq, //
    },
};

/// Calls of the responder a request's softirq makes itself (each up to
/// `rc::RESP_PACKETS_PER_CALL` packets), and of the send task a
/// response's (up to `rc::SEND_STEPS_PER_CALL` steps): the one that
/// answers the request or takes the response just queued, when nothing
/// else is; a longer run (a READ's responses, a burst queued meanwhile, a
/// message the completion lets the requester send) goes on in the task's
/// thread, as C's tasks run in a worker, so that one QP does not hold the
/// CPU's softirq.
const SOFTIRQ_CALLS: u32 = 1;

/// A FIFO of received packets.
struct PktQueue {
    pkts: KVec<Option<RecvPkt>>,
    /// Index of the oldest packet; those before it are taken.
    head: usize,
}

impl PktQueue {
    const fn new() -> Self {
        Self {
            pkts: KVec::new(),
            head: 0,
        }
    }

    fn push(&mut self, pkt: RecvPkt) -> Result<(), AllocError> {
        // Softirq: no sleeping allocation.
        self.pkts.push(Some(pkt), GFP_ATOMIC)
    }

    fn pop(&mut self) -> Option<RecvPkt> {
        let pkt = self.pkts.get_mut(self.head)?.take();
        self.head += 1;
        if self.head == self.pkts.len() {
            self.pkts.clear();
            self.head = 0;
        } else if self.head >= 64 && self.head * 2 >= self.pkts.len() {
            // Never empty for long: drop the taken slots now and then.
            let mut i = 0;
            let head = self.head;
            self.pkts.retain(|_| {
                i += 1;
                i > head
            });
            self.head = 0;
        }
        pkt
    }

    fn is_empty(&self) -> bool {
        self.head >= self.pkts.len()
    }
}

/// A QP's tasks and input queues.
#[pin_data]
pub(crate) struct QpIo {
    send_task: Arc<Task<Qp, Sender>>,
    recv_task: Arc<Task<Qp, Receiver>>,
    /// Requests for the responder.
    #[pin]
    req_pkts: SpinLockIrq<PktQueue>,
    /// Responses for the completer.
    #[pin]
    resp_pkts: SpinLockIrq<PktQueue>,
    /// Which of the two queues hold packets ([`REQS`], [`RESPS`]), set
    /// and cleared under the queue's lock: a task with nothing queued
    /// finds out without the lock (the completer looks after every packet
    /// the requester sends). A packet queued just after the look
    /// schedules the task again.
    queued: AtomicU8,
}

/// [`QpIo::queued`]'s bit for `req_pkts`.
const REQS: u8 = 1;
/// [`QpIo::queued`]'s bit for `resp_pkts`.
const RESPS: u8 = 2;

impl QpIo {
    /// Idle tasks, empty queues; the tasks may run on the driver's
    /// threads if `threads` (a user QP's), else only on its workqueue
    /// ([`Task::new`]).
    pub(crate) fn new(threads: bool) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            send_task: Task::new(threads)?,
            recv_task: Task::new(threads)?,
            req_pkts <- new_spinlock_irq!(PktQueue::new(), "rxe_qp_req_pkts"),
            resp_pkts <- new_spinlock_irq!(PktQueue::new(), "rxe_qp_resp_pkts"),
            queued: AtomicU8::new(0),
        })
    }

    /// Schedules the send task (`rxe_sched_task(&qp->send_task)`).
    pub(crate) fn sched_send(&self, qp: ArcBorrow<'_, Qp>) {
        self.send_task.sched(qp);
    }

    /// Runs the send task in the caller's context if it is idle, else has
    /// it go round once more where it runs ([`Task::run_here`]): a user
    /// QP's doorbell, from its `post_send` system call.
    pub(crate) fn run_send_here(&self, qp: ArcBorrow<'_, Qp>) {
        self.send_task.run_here(qp, INLINE_ITERATIONS);
    }

    /// Schedules the receive task (`rxe_sched_task(&qp->recv_task)`).
    pub(crate) fn sched_recv(&self, qp: ArcBorrow<'_, Qp>) {
        self.recv_task.sched(qp);
    }

    /// Schedules the send task for a modify to SQD, the drain
    /// (`rxe_sched_task(&qp->send_task)` in `rxe_qp_from_attr`), on the
    /// workqueue rather than a thread ([`Task::sched_on_wq`]): the
    /// modifying process does not wait for it, and a woken thread would
    /// preempt it to do it.
    pub(crate) fn sched_drain(&self, qp: ArcBorrow<'_, Qp>) {
        self.send_task.sched_on_wq(qp);
    }

    /// Schedules both tasks for a modify to ERR, the flush of both
    /// queues, on the workqueue for the same reason as
    /// [`QpIo::sched_drain`].
    pub(crate) fn sched_flush(&self, qp: ArcBorrow<'_, Qp>) {
        self.recv_task.sched_on_wq(qp);
        self.send_task.sched_on_wq(qp);
    }

    /// Queues a request for the responder and has it run
    /// (`rxe_resp_queue_pkt`). In the receive softirq, an idle responder
    /// of a connected QP runs there at once, for [`SOFTIRQ_CALLS`] call
    /// (the C driver's responder ran in softirq context, a tasklet, until
    /// its tasks moved to a workqueue); what is left, and every other
    /// case, goes to its thread or worker. Not for a packet of this host's
    /// own (loopback), which arrives in the sender's context, itself maybe
    /// a responder. The packet is dropped on error.
    pub(crate) fn queue_req(&self, qp: ArcBorrow<'_, Qp>, pkt: RecvPkt) -> Result<(), AllocError> {
        let softirq = matches!(qp.qp_type(), QpType::Rc | QpType::Uc);
        self.queue(&self.req_pkts, REQS, &self.recv_task, softirq, qp, pkt)
    }

    /// Queues a response for the completer and has it run
    /// (`rxe_comp_queue_pkt`). In the receive softirq, a response that can
    /// complete a WQE (an ACK, an atomic ACK, a read's last or only
    /// response) has an idle send task run there at once for
    /// [`SOFTIRQ_CALLS`] call, as the responder does for a request
    /// ([`QpIo::queue_req`]): the completion is not left waiting for a
    /// thread's wakeup. A read's first and middle responses only schedule
    /// it: the thread takes a run of them in one call, where the softirq
    /// would make a call of each. A response of this host's own (loopback)
    /// arrives in its sender's context and is queued. The packet is
    /// dropped on error.
    pub(crate) fn queue_resp(&self, qp: ArcBorrow<'_, Qp>, pkt: RecvPkt) -> Result<(), AllocError> {
        // Only an RC QP takes responses (rxe/recv.rs checks the opcode's
        // transport); a UD send task must not run in softirq.
        let softirq = qp.qp_type() == QpType::Rc && pkt.mask.intersects(Mask::END);
        self.queue(&self.resp_pkts, RESPS, &self.send_task, softirq, qp, pkt)
    }

    /// Queues `pkt` on `q` (its bit `bit` in [`QpIo::queued`]) and has
    /// `task` take it: in the receive softirq, where `softirq` allows it
    /// and the packet is not looped back, an idle task runs there for
    /// [`SOFTIRQ_CALLS`] call; otherwise it is scheduled.
    fn queue<F: TaskFn<Qp>>(
        &self,
        q: &SpinLockIrq<PktQueue>,
        bit: u8,
        task: &Arc<Task<Qp, F>>,
        softirq: bool,
        qp: ArcBorrow<'_, Qp>,
        pkt: RecvPkt,
    ) -> Result<(), AllocError> {
        let here = softirq && !pkt.mask.intersects(Mask::LOOPBACK) && in_serving_softirq();
        self.push(q, bit, pkt)?;
        if here {
            task.run_here(qp, SOFTIRQ_CALLS);
        } else {
            task.sched(qp);
        }
        Ok(())
    }

    /// Whether a response waits for the completer (seen without the lock:
    /// one queued after the look schedules the send task again).
    pub(crate) fn resp_queued(&self) -> bool {
        self.queued.load(Ordering::Acquire) & RESPS != 0
    }

    /// Takes the oldest request (the responder's `get_req`).
    pub(crate) fn take_req(&self) -> Option<RecvPkt> {
        self.pop(&self.req_pkts, REQS)
    }

    /// Takes the oldest response (the completer's `get_pkt`).
    pub(crate) fn take_resp(&self) -> Option<RecvPkt> {
        self.pop(&self.resp_pkts, RESPS)
    }

    fn push(&self, q: &SpinLockIrq<PktQueue>, bit: u8, pkt: RecvPkt) -> Result<(), AllocError> {
        let mut g = q.lock();
        g.push(pkt)?;
        self.queued.fetch_or(bit, Ordering::Release);
        Ok(())
    }

    fn pop(&self, q: &SpinLockIrq<PktQueue>, bit: u8) -> Option<RecvPkt> {
        if self.queued.load(Ordering::Acquire) & bit == 0 {
            return None;
        }
        let mut g = q.lock();
        let pkt = g.pop();
        if g.is_empty() {
            self.queued.fetch_and(!bit, Ordering::Release);
        }
        pkt
    }

    /// Drops every queued packet, requests and responses (`drain_req_pkts`,
    /// `drain_resp_pkts`): for a QP in ERR or RESET.
    pub(crate) fn drain(&self) {
        while let Some(pkt) = self.take_req() {
            drop(pkt);
        }
        while let Some(pkt) = self.take_resp() {
            drop(pkt);
        }
    }

    /// Stops both tasks until [`QpIo::enable`] (a reset), finishing the work
    /// in progress. Process context.
    pub(crate) fn disable(&self) {
        self.send_task.disable();
        self.recv_task.disable();
    }

    /// Lets the tasks run again after [`QpIo::disable`].
    pub(crate) fn enable(&self) {
        self.send_task.enable();
        self.recv_task.enable();
    }

    /// Stops both tasks for good (destroy), then drops the queued packets.
    /// Process context.
    pub(crate) fn cleanup(&self) {
        self.send_task.cleanup();
        self.recv_task.cleanup();
        self.drain();
    }
}

/// The send task's function.
pub(crate) struct Sender;

impl TaskFn<Qp> for Sender {
    fn call(qp: &Arc<Qp>) -> Step {
        sender(qp)
    }
}

/// The receive task's function.
pub(crate) struct Receiver;

impl TaskFn<Qp> for Receiver {
    fn call(qp: &Arc<Qp>) -> Step {
        receiver(qp)
    }
}

/// The send task (`rxe_sender`): the requester and completer of a UD or
/// GSI QP (rxe/ud.rs) or a connected one (rxe/rc.rs); in ERR, or for
/// another type, it drops responses and flushes the send queue (or ends an
/// SQ drain).
fn sender(qp: &Arc<Qp>) -> Step {
    if matches!(qp.qp_type(), QpType::Ud | QpType::Gsi) && qp.state() != QpState::Err {
        return crate::ud::requester(qp);
    }
    if matches!(qp.qp_type(), QpType::Rc | QpType::Uc) && qp.state() != QpState::Err {
        return crate::rc::sender(qp);
    }
    let io = qp.io();
    while let Some(pkt) = io.take_resp() {
        drop(pkt);
    }
    if qp.state() == QpState::Err {
        qp.flush_send();
    } else {
        qp.check_sq_drained();
    }
    Step::Done
}

/// The receive task (`rxe_receiver`): the responder (rxe/ud.rs,
/// rxe/rc.rs); in ERR, or for another type, requests are dropped and the
/// receive queue is flushed.
fn receiver(qp: &Arc<Qp>) -> Step {
    if matches!(qp.qp_type(), QpType::Ud | QpType::Gsi) && qp.state() != QpState::Err {
        return crate::ud::responder(qp);
    }
    if matches!(qp.qp_type(), QpType::Rc | QpType::Uc) && qp.state() != QpState::Err {
        return crate::rc::receiver(qp);
    }
    let io = qp.io();
    if matches!(qp.qp_type(), QpType::Rc | QpType::Uc) {
        qp.rc().drop_request();
    }
    while let Some(pkt) = io.take_req() {
        drop(pkt);
    }
    qp.flush_recv();
    Step::Done
}
