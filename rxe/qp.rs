// SPDX-License-Identifier: GPL-2.0

//! The queue pairs of an rxe device: create, modify, query, destroy and the
//! posts of kernel users (the QP verbs of the C driver's `rxe_verbs.c` and
//! `rxe_qp.c`).
//!
//! A QP is an `Arc<Qp>`: the core's object holds one, the device's pool
//! another (so the receive path finds it by QPN), and the transport takes
//! more while it works on it. Destroy takes the QP out of the pool, then
//! waits until every other reference is gone before the core frees its
//! `ib_qp` (as the C driver's `rxe_cleanup` waits).
//!
//! What the checks refuse and what a modify changes is [`crate::qp_attr`];
//! the transport (requester, completer, responder) runs in the QP's tasks
//! (rxe/qp_io.rs, [`Qp::sched_send`], [`Qp::sched_recv`]), reading what a
//! modify sets in [`QpAttrs`].

use crate::{
    av::{
        AhAttr,
        Av,
        GidType, //
    },
    cq::Cq,
    device::{
        Rxe,
        RxeDev, //
    },
    params,
    qp_attr::{
        self,
        Cap,
        CapLimits,
        InitReq,
        ModifyLimits,
        ModifyReq,
        QpAttrs,
        QpState,
        QpType,
        Refusal,
        SqSizes,
        Transition, //
    },
    qp_io::QpIo,
    queue::{
        ProducerIndex,
        Queue, //
    },
    queue_index::QueueType,
    rdma::{
        bh_lock::{
            SpinLockBh,
            SpinLockBhGuard, //
        },
        bindings,
        cq::Completion as WorkCompletion,
        ib_device::{
            Device,
            DeviceRef, //
        },
        mmap::{
            UserContext,
            UserMapping, //
        },
        mr::PdId,
        object::CoreObject,
        pool::{
            Pool,
            PoolLimits, //
        },
        qp::{
            self as core_qp,
            AhFields,
            NewQp,
            PostError,
            QpAttr,
            QpDriver,
            QpInitAttr,
            QpLinks,
            RecvWr,
            RecvWrs,
            ReleaseMark,
            SendWr,
            SendWrs, //
        },
        udata::UData,
        udp::{
            TxOwner,
            TxSocket, //
        },
    },
    srq::Srq,
    wqe::{
        self,
        wr_mask,
        Remote,
        SendCheck,
        SendWqe, //
    },
};
use core::{
    ops::{
        Deref,
        DerefMut, //
    },
    sync::atomic::{
        AtomicBool,
        AtomicU16,
        AtomicU32,
        AtomicU8,
        Ordering, //
    },
};
use kernel::{
    new_spinlock, new_spinlock_irq,
    prelude::*,
    sync::{
        Arc,
        ArcBorrow,
        SpinLock,
        SpinLockIrq,
        SpinLockIrqGuard, //
    },
};

/// The device's bounds on a QP's queues.
const CAP_LIMITS: CapLimits = CapLimits {
    max_wr: params::MAX_QP_WR,
    max_send_sge: params::MAX_SGE,
    max_recv_sge: params::MAX_SGE,
    max_inline_data: params::MAX_INLINE_DATA,
};

/// The device's bounds a modify is checked against.
const MODIFY_LIMITS: ModifyLimits = ModifyLimits {
    cap: CAP_LIMITS,
    num_ports: params::NUM_PORTS,
    gid_tbl_len: params::port::GID_TBL_LEN as u32,
    max_mtu: bindings::ib_mtu_IB_MTU_4096,
    max_qp_rd_atom: params::MAX_QP_RD_ATOM,
    access_supported: params::ACCESS_SUPPORTED_QP,
};

// The work queue entry layouts the pure sizes assume.
const _: () = {
    assert!(core::mem::size_of::<bindings::rxe_send_wqe>() == qp_attr::SEND_WQE_SIZE as usize);
    assert!(core::mem::size_of::<bindings::rxe_recv_wqe>() == qp_attr::RECV_WQE_SIZE as usize);
    assert!(core::mem::size_of::<bindings::ib_sge>() == qp_attr::SGE_SIZE as usize);
};

fn errno(r: Refusal) -> Error {
    match r {
        Refusal::Inval => EINVAL,
        Refusal::NotSupported => EOPNOTSUPP,
    }
}

/// The device's queue pairs.
#[pin_data]
pub(crate) struct Qps {
    /// By pool index: the QPN, except for the GSI QP (QPN 1).
    #[pin]
    pool: Pool<Qp>,
    /// Pool index of the GSI QP, 0 if there is none.
    gsi_index: AtomicU32,
}

impl Qps {
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            pool <- Pool::new(PoolLimits {
                min_index: params::MIN_QP_INDEX,
                max_index: params::MAX_QP_INDEX,
                max_elem: params::MAX_QP,
            }),
            gsi_index: AtomicU32::new(0),
        })
    }

    /// The QP with number `qpn`, for the receive path.
    pub(crate) fn get(&self, qpn: u32) -> Option<Arc<Qp>> {
        let index = match qpn {
            1 => self.gsi_index.load(Ordering::Acquire),
            n => n,
        };
        self.pool.get(index)
    }
}

/// A send queue's sizes, as granted.
struct Sq {
    max_wr: u32,
    max_sge: u32,
    max_inline: u32,
}

/// A receive queue's sizes, as granted (zeros with a shared receive queue,
/// which leaves the QP none: not an `Option`, whose tag would cost the QP
/// 8 bytes it does not have, see the size check below).
#[derive(Default)]
struct Rq {
    max_wr: u32,
    max_sge: u32,
}

/// A user QP's queues as offered to its process for `mmap()`; dropping
/// them withdraws the offers.
struct Mappings {
    _sq: UserMapping,
    _rq: Option<UserMapping>,
}

/// A queue pair.
#[pin_data]
pub(crate) struct Qp {
    /// Index in the device's pool.
    index: u32,
    /// The number the wire and the core know it by.
    qpn: u32,
    qp_type: QpType,
    /// Created by user space: its queues are mapped, its work requests
    /// written there by the provider.
    is_user: bool,
    /// `enum ib_sig_type` is `IB_SIGNAL_ALL_WR`: every send completes
    /// (the other value, `IB_SIGNAL_REQ_WR`, is the only one besides).
    sq_sig_all: bool,
    /// The core's QP, named by completions and events.
    ib: CoreObject<bindings::ib_qp>,
    /// The protection domain its memory accesses are checked against.
    pd: CoreObject<bindings::ib_pd>,
    /// Send completion queue.
    scq: Arc<Cq>,
    /// Receive completion queue.
    rcq: Arc<Cq>,
    /// Shared receive queue, if any.
    srq: Option<Arc<Srq>>,
    sq: Sq,
    rq: Rq,
    /// The send queue: work requests the requester processes and the
    /// completer retires.
    #[pin]
    sq_queue: SpinLockIrq<Queue>,
    /// The send queue's producer index, for the requester's look for a
    /// new WQE without the queue's lock.
    sq_prod: ProducerIndex,
    /// The receive queue (none with a shared receive queue): the
    /// responder consumes it.
    #[pin]
    rq_queue: SpinLockIrq<Option<Queue>>,
    /// A user QP's mappings, withdrawn by destroy (taken out under the
    /// lock, dropped in process context outside it). A spinlock: 20
    /// bytes less than a mutex in every QP, and nothing sleeps under it.
    #[pin]
    mappings: SpinLock<Option<Mappings>>,
    /// The attributes and transport state a modify sets (the C driver's
    /// `state_lock` and what it guards); the receive path takes it too.
    #[pin]
    attrs: SpinLockIrq<QpAttrs>,
    /// The attributes' state, mirrored outside their lock for the data
    /// path's checks (the C driver reads `qp->attr.qp_state` without its
    /// lock too); brought up to date under the lock by every change
    /// ([`AttrsMut`]).
    state: AtomicU8,
    /// UDP source port of its packets.
    src_port: AtomicU16,
    /// The socket its packets are charged to (the C driver's `qp->sk`):
    /// each skb holds a reference on the QP until the network stack frees
    /// it. An RC or UC QP, which sends to its one destination (`pri_av`),
    /// keeps that route in it ([`Qp::keeps_route`]). Set when the QP is
    /// created, taken by destroy (the socket holds a reference on the QP
    /// too, and is released in process context, outside the lock). Held
    /// while a packet is sent, by the receive task in softirq context too,
    /// hence bottom halves off.
    #[pin]
    tx: SpinLockBh<Option<TxSocket<Qp>>>,
    /// Its packets not yet freed by the network stack (`skb_out`).
    skb_out: AtomicU32,
    /// The requester stopped at [`params::INFLIGHT_SKBS_PER_QP_HIGH`]
    /// packets in flight and is scheduled again when they drop below
    /// [`params::INFLIGHT_SKBS_PER_QP_LOW`] (`need_req_skb`).
    need_req_skb: AtomicBool,
    /// Send sequence number of the last WQE posted by a kernel user.
    ssn: AtomicU32,
    /// Multicast groups it is attached to; no destroy while any.
    mcg_num: AtomicU32,
    /// Not destroyed yet.
    valid: AtomicBool,
    /// The transport's tasks and input queues (rxe/qp_io.rs).
    #[pin]
    io: QpIo,
    /// The connected transports' state (rxe/rc.rs).
    #[pin]
    rc: crate::rc::Rc,
    /// The kernel timer of the RC timers (rxe/rc_timer.rs).
    #[pin]
    pub(crate) rc_timer: kernel::time::hrtimer::HrTimer<Qp>,
    /// Last, so dropped after everything else of the QP: tells its destroy,
    /// which waits for it, that nothing of the QP uses the core's `ib_qp`
    /// any more (references outlive the destroy call: packets in flight,
    /// the timer's run).
    _release: ReleaseMark,
}

// A QP is one `kmalloc-1k` object (its `Arc`'s count, 8 bytes with the
// padding, and this) where locks are plain (no lock debugging or RT): the
// C driver's `rxe_qp` takes a `kmalloc-2k` one, and with the core's
// `ib_qp` beside it (`kmalloc-512`) this QP stays smaller than C's
// (Documentation/benchmarks.rst, "Memory per QP"). A field that crosses
// the line doubles every QP's slab: make room first.
#[cfg(not(any(
    CONFIG_DEBUG_SPINLOCK,
    CONFIG_DEBUG_LOCK_ALLOC,
    CONFIG_DEBUG_MUTEXES,
    CONFIG_PREEMPT_RT
)))]
const _: () = assert!(size_of::<Qp>() + 8 <= 1024);

impl TxOwner for Qp {
    fn skb_queued(&self, packets: u32) {
        self.skb_out.fetch_add(packets, Ordering::SeqCst);
    }

    fn skb_done(this: ArcBorrow<'_, Self>, packets: u32) {
        // `rxe_skb_tx_dtor`: the requester goes on once the packets in
        // flight are few again. A batch (`TxBatch`) counts its packets,
        // released together with its first.
        // Never below zero: each packet was counted when charged.
        let out = this
            .skb_out
            .fetch_sub(packets, Ordering::SeqCst)
            .wrapping_sub(packets);
        if out < params::INFLIGHT_SKBS_PER_QP_LOW && this.need_req_skb.load(Ordering::SeqCst) {
            this.io.sched_send(this);
        }
    }
}

/// A QP's attributes locked for a change: the state mirror outside the
/// lock ([`Qp::state`]) is brought up to date before the lock is released.
struct AttrsMut<'a> {
    guard: SpinLockIrqGuard<'a, QpAttrs>,
    mirror: &'a AtomicU8,
}

impl Deref for AttrsMut<'_> {
    type Target = QpAttrs;

    fn deref(&self) -> &QpAttrs {
        &self.guard
    }
}

impl DerefMut for AttrsMut<'_> {
    fn deref_mut(&mut self) -> &mut QpAttrs {
        &mut self.guard
    }
}

impl Drop for AttrsMut<'_> {
    fn drop(&mut self) {
        // Still under the lock: the guard is dropped after this.
        self.mirror.store(self.guard.state as u8, Ordering::Relaxed);
    }
}

impl Qp {
    /// The current state.
    pub(crate) fn state(&self) -> QpState {
        // Only `AttrsMut` stores it, a state's value.
        QpState::from_raw(u32::from(self.state.load(Ordering::Relaxed))).unwrap_or(QpState::Err)
    }

    /// The attributes, locked for a change.
    fn attrs_mut(&self) -> AttrsMut<'_> {
        AttrsMut {
            guard: self.attrs.lock(),
            mirror: &self.state,
        }
    }

    /// The transport's tasks and input queues.
    pub(crate) fn io(&self) -> &QpIo {
        &self.io
    }

    /// The connected transports' state.
    pub(crate) fn rc(&self) -> &crate::rc::Rc {
        &self.rc
    }

    /// Calls `f` with the attributes to change, under the state lock.
    pub(crate) fn with_attrs_mut<R>(&self, f: impl FnOnce(&mut QpAttrs) -> R) -> R {
        f(&mut self.attrs_mut())
    }

    /// The send queue's `max_sge`.
    pub(crate) fn sq_max_sge(&self) -> u32 {
        self.sq.max_sge
    }

    /// The send queue's producer index, read without its lock: whether a
    /// WQE follows an index the requester holds.
    pub(crate) fn sq_producer(&self) -> u32 {
        self.sq_prod.get(self.sq.max_wr)
    }

    /// The send queue index after `index`.
    pub(crate) fn sq_next(&self, index: u32) -> u32 {
        self.sq_queue.lock().next_index(index)
    }

    /// Takes a read/atomic credit if one is free (`rd_atomic`).
    pub(crate) fn take_rd_atomic(&self) -> bool {
        let mut a = self.attrs_mut();
        if a.req_rd_atomic == 0 {
            return false;
        }
        a.req_rd_atomic -= 1;
        true
    }

    /// It takes its receives from a shared receive queue.
    pub(crate) fn has_srq(&self) -> bool {
        self.srq.is_some()
    }

    /// Not destroyed yet.
    pub(crate) fn is_valid(&self) -> bool {
        self.valid.load(Ordering::Relaxed)
    }

    /// The QP's type.
    pub(crate) fn qp_type(&self) -> QpType {
        self.qp_type
    }

    /// Its QPN.
    pub(crate) fn qpn(&self) -> u32 {
        self.qpn
    }

    /// The core's QP, for completions.
    pub(crate) fn ib_ptr(&self) -> *mut bindings::ib_qp {
        self.ib.as_ptr()
    }

    /// Its device, while registered (for the transport's tasks).
    pub(crate) fn device(&self) -> Option<DeviceRef<Rxe>> {
        Device::of_qp(&self.ib)
    }

    /// Its protection domain.
    pub(crate) fn pd_id(&self) -> PdId {
        PdId::of(self.pd.as_ptr())
    }

    /// Every send completes (`IB_SIGNAL_ALL_WR`).
    pub(crate) fn sq_sig_all(&self) -> bool {
        self.sq_sig_all
    }

    /// The send queue.
    pub(crate) fn sq_queue(&self) -> &SpinLockIrq<Queue> {
        &self.sq_queue
    }

    /// The send and receive completion queues.
    pub(crate) fn scq(&self) -> &Cq {
        &self.scq
    }

    /// The receive completion queue.
    pub(crate) fn rcq(&self) -> &Cq {
        &self.rcq
    }

    /// The requester's next PSN, taken (`qp->req.psn++`).
    pub(crate) fn next_req_psn(&self) -> u32 {
        let mut a = self.attrs_mut();
        let psn = a.req_psn;
        a.req_psn = (psn + 1) & crate::wire::bth::BTH_PSN_MASK;
        psn
    }

    /// Takes the next receive WQE of its SRQ or receive queue, for the
    /// responder; `None` if there is none (or it is malformed).
    pub(crate) fn take_recv_wqe(&self, list: &mut [u8]) -> Option<crate::srq::RecvHead> {
        if let Some(srq) = &self.srq {
            return srq.take_wqe(list).ok().flatten();
        }
        let max_sge = self.rq.max_sge;
        let mut g = self.rq_queue.lock();
        let q = (*g).as_mut()?;
        let index = q.head(QueueType::FromClient)?;
        let wqe = crate::srq::read_recv_wqe(q, index, max_sge, list).ok()?;
        q.advance_consumer(QueueType::FromClient).ok()?;
        Some(wqe)
    }

    /// Calls `f` with the attributes, under the state lock.
    pub(crate) fn with_attrs<R>(&self, f: impl FnOnce(&QpAttrs) -> R) -> R {
        f(&self.attrs.lock())
    }

    /// The UDP source port of its packets.
    pub(crate) fn src_port(&self) -> u16 {
        self.src_port.load(Ordering::Relaxed)
    }

    /// The socket its packets are charged to, while it has one: held
    /// while a packet is sent.
    pub(crate) fn tx_socket(&self) -> SpinLockBhGuard<'_, Option<TxSocket<Qp>>> {
        self.tx.lock()
    }

    /// Whether the requester must wait for packets in flight to be freed
    /// (more than [`params::INFLIGHT_SKBS_PER_QP_HIGH`]); if so, it is
    /// scheduled again once fewer than [`params::INFLIGHT_SKBS_PER_QP_LOW`]
    /// are (C's `need_req_skb`, without its window: the flag is set before
    /// the count is read again, and the destructor reads the flag after
    /// counting down).
    pub(crate) fn skb_out_high(&self) -> bool {
        if self.skb_out.load(Ordering::SeqCst) <= params::INFLIGHT_SKBS_PER_QP_HIGH {
            return false;
        }
        self.need_req_skb.store(true, Ordering::SeqCst);
        self.skb_out.load(Ordering::SeqCst) >= params::INFLIGHT_SKBS_PER_QP_LOW
    }

    /// The requester sent a packet (`update_state`): it does not wait.
    pub(crate) fn req_skb_sent(&self) {
        self.need_req_skb.store(false, Ordering::Relaxed);
    }

    /// Whether its packets go by the route kept in its socket
    /// ([`TxSocket::route`]): an RC or UC QP's, which send to one
    /// destination; UD and GSI QPs look up each work request's.
    pub(crate) fn keeps_route(&self) -> bool {
        matches!(self.qp_type, QpType::Rc | QpType::Uc)
    }

    /// Counts a multicast attachment (the mcast verbs).
    pub(crate) fn mcast_attached(&self, attached: bool) {
        if attached {
            self.mcg_num.fetch_add(1, Ordering::Relaxed);
        } else {
            let _ = self
                .mcg_num
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
        }
    }

    /// Has the requester process the send queue: new work requests, a
    /// drain (SQD) or a flush (ERR). The C driver's
    /// `rxe_sched_task(&qp->send_task)`.
    ///
    fn sched_send(self: ArcBorrow<'_, Self>) {
        self.io.sched_send(self);
    }

    /// In SQD, ends the drain once no work request is in flight and tells
    /// the owner (`IB_EVENT_SQ_DRAINED`, whatever `en_sqd_async_notify`
    /// says, as the C driver does).
    pub(crate) fn check_sq_drained(&self) {
        {
            let mut a = self.attrs_mut();
            if a.state != QpState::Sqd || !a.sq_draining {
                return;
            }
            a.sq_draining = false;
        }
        core_qp::qp_event(&self.ib, bindings::ib_event_type_IB_EVENT_SQ_DRAINED);
    }

    /// Tells the owner that a remote request violated its memory access
    /// (`IB_EVENT_QP_ACCESS_ERR`, IBA C9-222.1), as the C responder's
    /// `RESPST_ERR_RKEY_VIOLATION_EVENT` does for an RC QP.
    pub(crate) fn access_error_event(&self) {
        core_qp::qp_event(&self.ib, bindings::ib_event_type_IB_EVENT_QP_ACCESS_ERR);
    }

    /// Has the responder process its packets and, in ERR, flush the receive
    /// queue. The C driver's `rxe_sched_task(&qp->recv_task)`.
    fn sched_recv(self: ArcBorrow<'_, Self>) {
        self.io.sched_recv(self);
    }

    /// In ERR, what the receive task does (`flush_recv_queue`): the
    /// receive queue flushed, or for an SRQ's QP the last-WQE event.
    pub(crate) fn flush_recv(&self) {
        if self.state() != QpState::Err {
            return;
        }
        if self.srq.is_some() {
            core_qp::qp_event(
                &self.ib,
                bindings::ib_event_type_IB_EVENT_QP_LAST_WQE_REACHED,
            );
            return;
        }
        if let Some(q) = &mut *self.rq_queue.lock() {
            self.flush(q, &self.rcq, 0);
        }
    }

    /// Completes every work request of the send queue with
    /// `IB_WC_WR_FLUSH_ERR`.
    pub(crate) fn flush_send(&self) {
        self.flush(&mut self.sq_queue.lock(), &self.scq, wqe::send_off::WR_ID);
    }

    /// Consumes every work request of `q`, completing each on `cq` with
    /// `IB_WC_WR_FLUSH_ERR` (its id at byte `wr_id_at` of the entry) until
    /// the completion queue refuses one; the rest go without completion
    /// (`flush_send_queue`, `flush_recv_queue`).
    fn flush(&self, q: &mut Queue, cq: &Cq, wr_id_at: usize) {
        let mut notify = true;
        while let Some(index) = q.head(QueueType::FromClient) {
            if notify {
                let c = WorkCompletion {
                    wr_id: q.read::<u64>(index, wr_id_at).unwrap_or(0),
                    status: bindings::ib_wc_status_IB_WC_WR_FLUSH_ERR,
                    qp_num: self.qpn,
                    qp: self.ib.as_ptr(),
                    ..WorkCompletion::default()
                };
                notify = cq.post(&c, false).is_ok();
            }
            if q.advance_consumer(QueueType::FromClient).is_err() {
                break;
            }
        }
    }

    /// Back to RESET: the transport stops, the queues are emptied without
    /// completions and zeroed, the requester's, completer's and responder's
    /// state cleared (the responder's read/atomic resources are made anew
    /// when it next runs) (`rxe_qp_reset`).
    fn reset(&self) {
        self.io.disable();
        self.io.drain();
        Self::discard(&mut self.sq_queue.lock());
        if let Some(q) = &mut *self.rq_queue.lock() {
            Self::discard(q);
        }
        self.ssn.store(0, Ordering::Relaxed);
        self.rc.reset();
        self.io.enable();
    }

    /// Consumes every work request of `q` without completing it, then
    /// zeroes its elements (the indices stay, as in the C driver).
    fn discard(q: &mut Queue) {
        while q.head(QueueType::FromClient).is_some() {
            if q.advance_consumer(QueueType::FromClient).is_err() {
                break;
            }
        }
        let _ = q.reset();
    }

    /// Moves the QP to ERR, as the transport does on a fatal error: the
    /// tasks then flush outstanding work requests (`rxe_qp_error`).
    pub(crate) fn set_error(self: ArcBorrow<'_, Self>) {
        self.attrs_mut().set_error();
        self.sched_recv();
        self.sched_send();
    }

    /// Copies a kernel user's send work requests into the send queue and
    /// has the requester process them (`rxe_post_send_kernel`).
    fn post_send_kernel(
        self: ArcBorrow<'_, Self>,
        dev: &Device<Rxe>,
        wrs: SendWrs<'_>,
    ) -> core::result::Result<(), PostError> {
        let mut posted = 0;
        let mut r = Ok(());
        {
            let mut q = self.sq_queue.lock();
            for wr in wrs {
                if let Err(err) = self.post_one_send(dev, &mut q, &wr) {
                    r = Err(PostError { err, index: posted });
                    break;
                }
                posted += 1;
            }
        }
        if posted > 0 {
            self.sched_send();
        }
        r
    }

    /// Checks one send work request and writes its WQE at the producer
    /// index (`post_one_send`).
    fn post_one_send(&self, dev: &Device<Rxe>, q: &mut Queue, wr: &SendWr<'_>) -> Result {
        let sges = wr.sges();
        let length: u64 = sges.iter().map(|s| u64::from(s.length)).sum();
        let atomic = wr.atomic();
        let check = SendCheck {
            opcode: wr.opcode(),
            send_flags: wr.send_flags(),
            num_sge: wr.num_sge(),
            length,
            atomic_addr: atomic.map_or(0, |a| a.remote_addr),
        };
        let mask = match wqe::chk_send(&check, self.qp_type, self.sq.max_sge, self.sq.max_inline) {
            Ok(mask) => mask,
            Err(r) => {
                self.err_msg(dev, "validate_send_wr", "bad work request");
                return Err(errno(r));
            }
        };
        if q.full(QueueType::FromUlp) {
            self.err_msg(dev, "post_one_send", "send queue full");
            return Err(ENOMEM);
        }
        let rdma = wr.rdma();
        let remote = if let Some(ud) = wr.ud() {
            Remote::Ud {
                qpn: ud.remote_qpn,
                qkey: ud.remote_qkey,
                pkey_index: if self.qp_type == QpType::Gsi {
                    ud.pkey_index
                } else {
                    0
                },
                ah_num: wr.ud_ah::<Rxe>().map_or(0, |ah| ah.ah_num()),
            }
        } else if let Some(a) = atomic {
            Remote::Atomic {
                addr: a.remote_addr,
                compare_add: a.compare_add,
                swap: a.swap,
                rkey: a.rkey,
            }
        } else if let Some(r) = rdma {
            Remote::Rdma {
                addr: r.remote_addr,
                rkey: r.rkey,
            }
        } else if let Some(reg) = wr.reg() {
            Remote::Reg {
                mr: reg.mr.as_ptr() as u64,
                key: reg.key,
                access: reg.access as u32,
            }
        } else {
            Remote::None
        };
        let iova = if mask & wr_mask::ATOMIC != 0 {
            atomic.map_or(0, |a| a.remote_addr)
        } else if mask & wr_mask::READ_OR_WRITE != 0 {
            rdma.map_or(0, |r| r.remote_addr)
        } else {
            0
        };
        let local = mask & wr_mask::LOCAL_OP != 0;
        let inline = wr.send_flags() & wqe::SEND_INLINE != 0;
        let ssn = if local {
            0
        } else {
            self.ssn.fetch_add(1, Ordering::Relaxed).wrapping_add(1)
        };
        let w = SendWqe {
            wr_id: wr.wr_id(),
            opcode: wr.opcode(),
            send_flags: wr.send_flags(),
            ex: wr.ex(),
            remote,
            iova,
            mask,
            // At most 2^31, checked.
            length: length as u32,
            num_sge: sges.len() as u32,
            ssn,
        };
        let mut hdr = [0u8; qp_attr::SEND_WQE_SIZE as usize];
        w.encode(&mut hdr);
        let index = q.producer(QueueType::FromUlp);
        q.write_bytes(index, 0, &hdr)?;
        if !local {
            let mut off = wqe::send_off::DATA;
            if inline {
                // At most `max_inline` bytes in all, checked: they fit.
                for data in wr.inline_data() {
                    q.write_bytes(index, off, data)?;
                    off += data.len();
                }
            } else {
                for s in sges {
                    let mut e = [0u8; qp_attr::SGE_SIZE as usize];
                    wqe::put_sge(&mut e, 0, 0, s.addr, s.length, s.lkey);
                    q.write_bytes(index, off, &e)?;
                    off += e.len();
                }
            }
        }
        q.advance_producer(QueueType::FromUlp)
    }

    /// Copies a kernel user's receive work requests into the receive queue
    /// (`post_one_recv` each).
    fn post_recv_kernel(&self, wrs: RecvWrs<'_>) -> core::result::Result<(), PostError> {
        let mut guard = self.rq_queue.lock();
        let Some(q) = (*guard).as_mut() else {
            return Err(PostError {
                err: EINVAL,
                index: 0,
            });
        };
        let max_sge = self.rq.max_sge;
        for (index, wr) in wrs.enumerate() {
            Self::post_one_recv(q, &wr, max_sge).map_err(|err| PostError { err, index })?;
        }
        Ok(())
    }

    fn post_one_recv(q: &mut Queue, wr: &RecvWr<'_>, max_sge: u32) -> Result {
        if q.full(QueueType::FromUlp) {
            return Err(ENOMEM);
        }
        let sges = wr.sges();
        let length: u64 = sges.iter().map(|s| u64::from(s.length)).sum();
        wqe::chk_recv(wr.num_sge(), length, max_sge).map_err(errno)?;
        let mut hdr = [0u8; qp_attr::RECV_WQE_SIZE as usize];
        // At most 2^31, checked.
        wqe::encode_recv(&mut hdr, wr.wr_id(), length as u32, sges.len() as u32);
        let index = q.producer(QueueType::FromUlp);
        q.write_bytes(index, 0, &hdr)?;
        let mut off = wqe::recv_off::DATA;
        for s in sges {
            let mut e = [0u8; qp_attr::SGE_SIZE as usize];
            wqe::put_sge(&mut e, 0, 0, s.addr, s.length, s.lkey);
            q.write_bytes(index, off, &e)?;
            off += e.len();
        }
        q.advance_producer(QueueType::FromUlp)
    }

    fn err_msg(&self, dev: &Device<Rxe>, func: &str, msg: &str) {
        core_qp::err_ratelimited(dev, fmt!("qp#{} {}: {}", self.index, func, msg));
    }

    fn err_prefix(&self, dev: &Device<Rxe>, what: &str, err: Error) {
        core_qp::err_ratelimited(
            dev,
            fmt!(
                "qp#{} {}: returned err = {}",
                self.index,
                what,
                err.to_errno()
            ),
        );
    }
}

fn init_req(init: &QpInitAttr) -> InitReq {
    InitReq {
        qp_type: init.qp_type,
        create_flags: init.create_flags,
        has_send_cq: !init.send_cq.is_null(),
        has_recv_cq: !init.recv_cq.is_null(),
        has_srq: !init.srq.is_null(),
        cap: Cap {
            max_send_wr: init.cap.max_send_wr,
            max_recv_wr: init.cap.max_recv_wr,
            max_send_sge: init.cap.max_send_sge,
            max_recv_sge: init.cap.max_recv_sge,
            max_inline_data: init.cap.max_inline_data,
        },
        port_num: init.port_num,
    }
}

fn ah_attr(f: &AhFields) -> AhAttr {
    // No GID entry (the core always gives one with a GRH) reads as IB, which
    // the checks refuse.
    let (sgid, sgid_type) = match f.sgid {
        Some((gid, 1)) => (gid, GidType::RoceV1),
        Some((gid, 2)) => (gid, GidType::RoceV2),
        Some((gid, _)) => (gid, GidType::Ib),
        None => ([0; 16], GidType::Ib),
    };
    AhAttr {
        has_grh: f.has_grh,
        // The C driver keeps the port in a byte, too.
        port_num: f.port_num as u8,
        dgid: f.dgid,
        flow_label: f.flow_label,
        sgid_index: f.sgid_index,
        hop_limit: f.hop_limit,
        traffic_class: f.traffic_class,
        dmac: f.dmac,
        sgid,
        sgid_type,
    }
}

fn modify_req(a: &QpAttr, mask: u32) -> ModifyReq {
    use qp_attr::mask as m;
    // The GID entries are only looked at where the mask says the vectors
    // are given.
    let ah = |attr, bit| {
        if mask & bit != 0 {
            ah_attr(&core_qp::ah_fields(attr))
        } else {
            qp_attr::NO_AH
        }
    };
    ModifyReq {
        qp_state: a.qp_state,
        cur_qp_state: a.cur_qp_state,
        path_mtu: a.path_mtu,
        path_mig_state: a.path_mig_state,
        qkey: a.qkey,
        rq_psn: a.rq_psn,
        sq_psn: a.sq_psn,
        dest_qp_num: a.dest_qp_num,
        qp_access_flags: a.qp_access_flags as u32,
        cap: Cap {
            max_send_wr: a.cap.max_send_wr,
            max_recv_wr: a.cap.max_recv_wr,
            max_send_sge: a.cap.max_send_sge,
            max_recv_sge: a.cap.max_recv_sge,
            max_inline_data: a.cap.max_inline_data,
        },
        ah: ah(&a.ah_attr, m::AV),
        alt_ah: ah(&a.alt_ah_attr, m::ALT_PATH),
        pkey_index: a.pkey_index,
        alt_pkey_index: a.alt_pkey_index,
        en_sqd_async_notify: a.en_sqd_async_notify,
        max_rd_atomic: a.max_rd_atomic,
        max_dest_rd_atomic: a.max_dest_rd_atomic,
        min_rnr_timer: a.min_rnr_timer,
        port_num: a.port_num,
        timeout: a.timeout,
        retry_cnt: a.retry_cnt,
        rnr_retry: a.rnr_retry,
        alt_port_num: a.alt_port_num,
        alt_timeout: a.alt_timeout,
    }
}

fn av_fields(av: &Av) -> AhFields {
    AhFields {
        has_grh: true,
        port_num: av.port_num.into(),
        dgid: av.dgid,
        flow_label: av.flow_label,
        sgid_index: av.sgid_index,
        hop_limit: av.hop_limit,
        traffic_class: av.traffic_class,
        dmac: [0; 6],
        sgid: None,
    }
}

/// Checks and builds a QP; the steps of `rxe_create_qp` after the udata
/// checks.
fn create(
    rxe: &RxeDev,
    new: &mut NewQp<'_>,
    init: &mut QpInitAttr,
    links: QpLinks<Rxe>,
    udata: Option<&UData<'_>>,
    uctx: Option<&UserContext<'_>>,
) -> Result<Arc<Qp>> {
    let qps = &rxe.qps;
    let req = init_req(init);
    let gsi_exists = qps.gsi_index.load(Ordering::Relaxed) != 0;
    let qp_type =
        qp_attr::chk_init(&req, &CAP_LIMITS, params::NUM_PORTS, gsi_exists).map_err(errno)?;
    let slot = qps.pool.reserve()?;
    let index = slot.index();
    let qpn = if qp_type == QpType::Gsi { 1 } else { index };

    let sizes = SqSizes::new(&req.cap);
    let sq_queue = Queue::new(
        req.cap.max_send_wr,
        sizes.wqe_size as usize,
        QueueType::FromClient,
    )?;
    let sq_prod = sq_queue.producer_index();
    let sq = Sq {
        max_wr: sq_queue.capacity(),
        max_sge: sizes.max_sge,
        max_inline: sizes.max_inline,
    };
    let rq_queue = if req.has_srq {
        None
    } else {
        let size = qp_attr::rq_wqe_size(req.cap.max_recv_sge);
        Some(Queue::new(
            req.cap.max_recv_wr,
            size as usize,
            QueueType::FromClient,
        )?)
    };
    let rq = rq_queue.as_ref().map_or_else(Rq::default, |q| Rq {
        max_wr: q.capacity(),
        max_sge: req.cap.max_recv_sge,
    });
    // A user QP's queues are mapped by its process: the response says
    // where (an SRQ's QP has no receive queue: its entry stays zero).
    let mappings = match (udata, uctx) {
        (Some(u), Some(ctx)) => {
            let mut resp = bindings::rxe_create_qp_resp::default();
            let (sq_map, mi) = sq_queue.map_user(ctx)?;
            resp.sq_mi = mi;
            let rq_map = match &rq_queue {
                Some(q) => {
                    let (map, mi) = q.map_user(ctx)?;
                    resp.rq_mi = mi;
                    Some(map)
                }
                None => None,
            };
            u.respond(&resp)?;
            Some(Mappings {
                _sq: sq_map,
                _rq: rq_map,
            })
        }
        _ => None,
    };

    let src_port = qp_attr::initial_src_port(qpn);
    let gsi_port = if qp_type == QpType::Gsi {
        req.port_num
    } else {
        0
    };
    let is_user = udata.is_some();
    let sq_sig_all = init.sq_sig_type == bindings::ib_sig_type_IB_SIGNAL_ALL_WR;
    let (ib, pd) = (new.core(), new.pd());
    // Both CQs are there: checked above.
    let scq = links.send_cq.ok_or(EINVAL)?;
    let rcq = links.recv_cq.ok_or(EINVAL)?;
    let srq = links.srq;
    let release = new.release_mark();
    let qp = Arc::pin_init(
        try_pin_init!(Qp {
            index,
            qpn,
            qp_type,
            is_user,
            sq_sig_all,
            ib,
            pd,
            scq,
            rcq,
            srq,
            sq,
            rq,
            sq_queue <- new_spinlock_irq!(sq_queue, "rxe_qp_sq"),
            sq_prod,
            rq_queue <- new_spinlock_irq!(rq_queue, "rxe_qp_rq"),
            mappings <- new_spinlock!(mappings, "rxe_qp_mappings"),
            attrs <- new_spinlock_irq!(QpAttrs::new(gsi_port), "rxe_qp_attrs"),
            state: AtomicU8::new(QpState::Reset as u8),
            src_port: AtomicU16::new(src_port),
            tx <- crate::new_spinlock_bh!(None, "rxe_qp_tx"),
            skb_out: AtomicU32::new(0),
            need_req_skb: AtomicBool::new(false),
            ssn: AtomicU32::new(0),
            mcg_num: AtomicU32::new(0),
            valid: AtomicBool::new(true),
            // A kernel QP's tasks only on the workqueue, as C's.
            io <- QpIo::new(*is_user),
            rc <- crate::rc::Rc::new(),
            rc_timer <- kernel::time::hrtimer::HrTimer::new(),
            _release: release,
        }),
        GFP_KERNEL,
    )?;
    if qp_type == QpType::Gsi
        && qps
            .gsi_index
            .compare_exchange(0, index, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
    {
        // Another GSI QP was created meanwhile.
        return Err(EINVAL);
    }

    // The sizes granted, which may be larger than asked.
    init.cap.max_send_wr = qp.sq.max_wr;
    init.cap.max_send_sge = qp.sq.max_sge;
    init.cap.max_inline_data = qp.sq.max_inline;
    if !qp.has_srq() {
        init.cap.max_recv_wr = qp.rq.max_wr;
    }
    // Last, as nothing can fail after it: the socket holds a reference on
    // the QP, which only destroy gives back.
    let sock = TxSocket::new(qp.clone())?;
    *qp.tx.lock() = Some(sock);
    new.set_qp_num(qpn);
    slot.publish(qp.clone());
    Ok(qp)
}

impl QpDriver for Rxe {
    type Qp = Qp;

    fn create_qp(
        dev: &Device<Self>,
        qp: &mut NewQp<'_>,
        init: &mut QpInitAttr,
        links: QpLinks<Self>,
        udata: Option<&UData<'_>>,
        uctx: Option<&UserContext<'_>>,
    ) -> Result<Arc<Qp>> {
        let r = (|| {
            if let Some(u) = udata {
                if u.in_len() != 0
                    || u.out_len() < core::mem::size_of::<bindings::rxe_create_qp_resp>()
                {
                    return Err(EINVAL);
                }
            }
            create(&dev.data(), qp, init, links, udata, uctx)
        })();
        if let Err(e) = &r {
            core_qp::err_ratelimited(dev, fmt!("rxe_create_qp: returned err = {}", e.to_errno()));
        }
        r
    }

    fn modify_qp(
        dev: &Device<Self>,
        qp: ArcBorrow<'_, Qp>,
        attr: &QpAttr,
        mask: u32,
        _udata: Option<&UData<'_>>,
    ) -> Result {
        let r = modify(qp, attr, mask);
        if let Err(e) = r {
            qp.err_prefix(dev, "rxe_modify_qp", e);
        }
        r
    }

    fn query_qp(
        _dev: &Device<Self>,
        qp: ArcBorrow<'_, Qp>,
        attr: &mut QpAttr,
        _mask: u32,
        init: &mut QpInitAttr,
    ) -> Result {
        query(&qp, attr, init);
        Ok(())
    }

    fn destroy_qp(dev: &Device<Self>, qp: ArcBorrow<'_, Qp>) -> Result {
        // IBA o10-2.2.3: not while attached to a multicast group.
        if qp.mcg_num.load(Ordering::Relaxed) != 0 {
            qp.err_prefix(dev, "rxe_destroy_qp", EBUSY);
            return Err(EBUSY);
        }
        qp.valid.store(false, Ordering::Relaxed);
        // No task runs on it after this (`rxe_cleanup_task`).
        qp.io.cleanup();
        // Then the timers, which the tasks no longer start.
        qp.rc.cleanup();
        let qps = &dev.data().qps;
        if qp.qp_type == QpType::Gsi {
            // Unlike the C driver, which keeps the stale index, a new GSI QP
            // may be created after this one.
            let _ =
                qps.gsi_index
                    .compare_exchange(qp.index, 0, Ordering::AcqRel, Ordering::Relaxed);
        }
        drop(qps.pool.remove(qp.index));
        // Withdrawn here, in process context, while the user context lives.
        let mappings = qp.mappings.lock().take();
        drop(mappings);
        // Nothing sends on it any more (its tasks are stopped): its socket
        // goes now, in process context, with the reference it holds. Its
        // packets still in flight hold theirs, which the core's destroy
        // waits for after this (core/rdma/qp.rs, `ReleaseMark`).
        let tx = qp.tx.lock().take();
        drop(tx);
        Ok(())
    }

    fn post_send(
        dev: &Device<Self>,
        qp: ArcBorrow<'_, Qp>,
        wrs: SendWrs<'_>,
    ) -> core::result::Result<(), PostError> {
        let refuse = |err| Err(PostError { err, index: 0 });
        if !qp.valid.load(Ordering::Relaxed) {
            return refuse(EINVAL);
        }
        if qp.state() < QpState::Rts {
            core_qp::err_ratelimited(
                dev,
                fmt!("qp#{} rxe_post_send: qp not ready to send", qp.index),
            );
            return refuse(EINVAL);
        }
        if qp.is_user {
            // A doorbell: the provider wrote the WQEs to the mapped queue.
            // The requester sends them in this system call's process
            // context, as the C driver did before its tasks became work
            // items, rather than waking a worker for them
            // (Documentation/differences.rst).
            qp.io.run_send_here(qp);
            return Ok(());
        }
        qp.post_send_kernel(dev, wrs)
    }

    fn post_recv(
        _dev: &Device<Self>,
        qp: ArcBorrow<'_, Qp>,
        wrs: RecvWrs<'_>,
    ) -> core::result::Result<(), PostError> {
        let refuse = |err| Err(PostError { err, index: 0 });
        if !qp.valid.load(Ordering::Relaxed) {
            return refuse(EINVAL);
        }
        // C10-97.2.1: receives may be posted from INIT on.
        if qp.state() < QpState::Init || qp.srq.is_some() {
            return refuse(EINVAL);
        }
        let r = qp.post_recv_kernel(wrs);
        // In ERR the responder flushes what was just posted.
        if qp.state() == QpState::Err {
            qp.sched_recv();
        }
        r
    }
}

/// `rxe_modify_qp`: checks, then applies under the state lock.
fn modify(qp: ArcBorrow<'_, Qp>, attr: &QpAttr, mask: u32) -> Result {
    let req = modify_req(attr, mask);
    qp_attr::chk_attr(qp.qp_type, qp.srq.is_some(), &req, mask, &MODIFY_LIMITS).map_err(errno)?;
    let qp_type = qp.qp_type as u32;
    let (transition, dest_qpn) = {
        let mut a = qp.attrs_mut();
        let t = a
            .apply(
                &req,
                mask,
                |cur, new| core_qp::modify_is_ok(cur, new, qp_type, mask),
                core_qp::nsecs_to_jiffies,
            )
            .map_err(errno)?;
        (t, a.dest_qp_num)
    };
    // The drain's and the flush's work goes to the workqueue, as in C: on
    // a thread it preempted the process that modifies, once a task, which
    // made `cmtime`'s disconnect slower (Documentation/benchmarks.rst,
    // "The flush on a thread").
    match transition {
        Some(Transition::Reset) => qp.reset(),
        Some(Transition::Drain) => qp.io.sched_drain(qp),
        Some(Transition::Error) => qp.io.sched_flush(qp),
        Some(Transition::Other) | None => {}
    }
    // A new `max_dest_rd_atomic` makes the responder's read/atomic
    // resources anew when it next runs (rxe/rc.rs `receiver`), as the C
    // driver frees and allocates them in the modify.
    if mask & qp_attr::mask::AV != 0 {
        // A new destination: its route is looked up again.
        if let Some(tx) = qp.tx_socket().as_ref() {
            tx.reset_route();
        }
        if req.ah.has_grh {
            let port = qp_attr::udp_sport(req.ah.flow_label, qp.qpn, dest_qpn);
            qp.src_port.store(port, Ordering::Relaxed);
        }
    }
    Ok(())
}

/// `rxe_query_qp`: the attributes as set, the transport's PSNs, the sizes
/// granted.
fn query(qp: &Qp, attr: &mut QpAttr, init: &mut QpInitAttr) {
    let a = *qp.attrs.lock();
    *attr = QpAttr::default();
    attr.qp_state = a.state.as_raw();
    attr.cur_qp_state = a.state.as_raw();
    attr.path_mtu = a.path_mtu;
    attr.path_mig_state = a.path_mig_state;
    attr.qkey = a.qkey;
    attr.rq_psn = a.resp_psn;
    attr.sq_psn = a.req_psn;
    attr.dest_qp_num = a.dest_qp_num;
    attr.qp_access_flags = a.qp_access_flags as i32;
    attr.pkey_index = a.pkey_index;
    attr.alt_pkey_index = a.alt_pkey_index;
    attr.en_sqd_async_notify = a.en_sqd_async_notify;
    attr.sq_draining = a.sq_draining.into();
    attr.max_rd_atomic = a.max_rd_atomic;
    attr.max_dest_rd_atomic = a.max_dest_rd_atomic;
    attr.min_rnr_timer = a.min_rnr_timer;
    attr.port_num = a.port_num;
    attr.timeout = a.timeout;
    attr.retry_cnt = a.retry_cnt;
    attr.rnr_retry = a.rnr_retry;
    attr.alt_port_num = a.alt_port_num;
    attr.alt_timeout = a.alt_timeout;
    core_qp::set_ah_fields(&mut attr.ah_attr, &av_fields(&a.pri_av));
    core_qp::set_ah_fields(&mut attr.alt_ah_attr, &av_fields(&a.alt_av));

    for cap in [&mut attr.cap, &mut init.cap] {
        cap.max_send_wr = qp.sq.max_wr;
        cap.max_send_sge = qp.sq.max_sge;
        cap.max_inline_data = qp.sq.max_inline;
        if !qp.has_srq() {
            cap.max_recv_wr = qp.rq.max_wr;
            cap.max_recv_sge = qp.rq.max_sge;
        }
    }
    init.sq_sig_type = if qp.sq_sig_all {
        bindings::ib_sig_type_IB_SIGNAL_ALL_WR
    } else {
        bindings::ib_sig_type_IB_SIGNAL_REQ_WR
    };
    init.qp_type = qp.qp_type as u32;
    init.port_num = 1;
}
