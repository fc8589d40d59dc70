// SPDX-License-Identifier: GPL-2.0

//! CM IDs (`struct cm_id_private`): the exported API, the ID table, and the
//! dispatch of received messages into the state machine of `proto::state`.
//!
//! An ID is an `Arc<CmId>` whose first field is the C `struct ib_cm_id` the
//! consumer holds a pointer to. The ID table holds one reference from
//! `ib_create_cm_id()` until `ib_destroy_cm_id()`; the consumer's pointer is
//! valid exactly that long. A tracked MAD (REQ, REP, DREQ) holds another
//! until its send completion. Events reach the consumer with the ID's
//! handler mutex held, so one at a time; destroy marks the ID, then takes
//! the mutex once, which waits for a handler in flight: no handler runs
//! after `ib_destroy_cm_id()` returns.
//!
//! Every transition is a `state::Step` computed under the ID's spinlock and
//! carried out in `cm.c`'s order (see Documentation/cm.rst).

use super::proto::{
    field::{
        Mad,
        TooLong,
        MAD_HDR_SIZE,
        MAD_SIZE, //
    },
    format::{
        self,
        Ids,
        PathFields,
        RepEvent,
        ReqEvent,
        ReqFields, //
    },
    lookup::{
        for_mra,
        for_rej,
        for_reply,
        mra_learns_remote,
        Keys,
        Lookup, //
    },
    msgs::{
        size,
        CmQpType,
        MadHdr,
        Mra,
        MsgResponse,
        Rej,
        Rep,
        Req,
        SidrRep,
        SidrReq,
        BASE_VERSION, //
    },
    state::{
        self,
        DestroyCause,
        Event,
        Gate,
        Issue,
        Keep,
        LapState,
        Leave,
        QpAttrInput,
        QpTarget,
        RejAri,
        ReqCheck,
        Send,
        SendStatus,
        State,
        Step, //
    },
    timing,
};
use crate::{
    device::{
        CmPort,
        CounterGroup, //
    },
    mad_agent::{
        RecvMad,
        Responder, //
    },
    rdma::{
        bindings,
        workqueue::ModuleQueue, //
    },
};
use core::ptr;
use kernel::{
    error::from_err_ptr,
    ffi, new_mutex, new_spinlock,
    prelude::*,
    sync::{
        Arc,
        ArcBorrow,
        Mutex,
        SpinLock, //
    },
    types::Opaque,
    workqueue::{
        new_delayed_work,
        new_work,
        DelayedWork,
        Work,
        WorkItem, //
    },
};

// ---- ports ------------------------------------------------------------------

/// A CM port as the IDs send through it.
struct PortRef {
    dev: usize,
    num: u32,
    /// The receiving agent (`ib_mad_agent *`): every message goes out on it.
    agent: usize,
}

/// The IDs. Lock order: `TABLES`, then an ID's `inner`, then `PORTS`.
pub(crate) struct Tables {
    ids: KVec<Arc<CmId>>,
    next_local_id: u32,
    next_service_id: u64,
}

impl Tables {
    const fn new() -> Self {
        Tables {
            ids: KVec::new(),
            next_local_id: 0x1000,
            next_service_id: state::ASSIGN_SERVICE_ID,
        }
    }
}

kernel::sync::global_lock! {
    // SAFETY: initialised by `init()` in the module's init, before the
    // client registers (no device, so no MAD and no ID before that).
    unsafe(uninit) static TABLES: SpinLock<Tables> = Tables::new();
}

kernel::sync::global_lock! {
    // SAFETY: as `TABLES`.
    unsafe(uninit) static PORTS: SpinLock<KVec<PortRef>> = KVec::new();
}

/// The `ib_cm` workqueue the IDs' works run on (`cm.wq`), allocated in the
/// module's init before the client registers and destroyed after it has
/// unregistered. Works are queued only for an ID not yet destroyed (checked
/// under its lock), and destroying an ID cancels its pending ones; the IDs
/// are all destroyed before the module can go (its users, `rdma_cm` among
/// them, are gone), so destroying the queue only waits for works in flight.
pub(crate) static WQ: ModuleQueue = ModuleQueue::new();

/// Initialises the tables; called once from the module's init. The returned
/// owner frees their memory when dropped.
pub(crate) fn init() -> TablesOwner {
    // SAFETY: called once, from the module's init, before any use.
    unsafe {
        TABLES.init();
        PORTS.init();
    }
    TablesOwner
}

/// Frees the tables' buffers when dropped, at module exit: statics are never
/// dropped, so their heap memory would outlive the module (a kmemleak
/// report once it is unloaded). Dropped after the client has unregistered
/// (no port left) and the IDs' users are gone (no ID left).
pub(crate) struct TablesOwner;

impl Drop for TablesOwner {
    fn drop(&mut self) {
        let ids = core::mem::take(&mut TABLES.lock().ids);
        let ports = core::mem::take(&mut *PORTS.lock());
        // Dropped unlocked, as every ID leaving the table.
        drop((ids, ports));
    }
}

/// Makes `agent` on port `num` of `dev` the one IDs send through.
pub(crate) fn add_port(
    dev: *mut bindings::ib_device,
    num: u32,
    agent: *mut bindings::ib_mad_agent,
) -> Result {
    let mut t = PORTS.lock();
    t.push(
        PortRef {
            dev: dev as usize,
            num,
            agent: agent as usize,
        },
        GFP_ATOMIC,
    )?;
    Ok(())
}

/// No message goes out on port `num` of `dev` once this returns (its agent
/// is about to be unregistered).
pub(crate) fn remove_port(dev: *mut bindings::ib_device, num: u32) {
    let mut t = PORTS.lock();
    t.retain(|p| !(p.dev == dev as usize && p.num == num));
}

// ---- the ID ---------------------------------------------------------------

/// The connection state of an ID (the fields of `cm_id_private`).
struct Inner {
    state: State,
    lap: LapState,
    destroyed: bool,
    /// Consumers sharing a listen (`ib_cm_insert_listen()`).
    listen_share: u32,
    local_id: u32,
    remote_id: u32,
    /// The remote ID is in the remote table (duplicate detection).
    remote_known: bool,
    remote_ca_guid: u64,
    service_id: u64,
    port: u32,
    /// The address vector to the peer, owning its GID attribute reference.
    av: bindings::rdma_ah_attr,
    av_valid: bool,
    av_timeout: u8,
    pkey_index: u16,
    tid: u64,
    timeout_ms: u32,
    max_cm_retries: u8,
    /// The tracked MAD (`cm_id_private.msg`) and the state it was sent in.
    msg: *mut bindings::ib_mad_send_buf,
    msg_state: State,
    local_qpn: u32,
    remote_qpn: u32,
    sq_psn: u32,
    rq_psn: u32,
    qp_type: Option<CmQpType>,
    path_mtu: u8,
    responder_resources: u8,
    initiator_depth: u8,
    retry_count: u8,
    rnr_retry_count: u8,
    /// Private data kept for resends (RTU, DREP, MRA).
    saved_pd: KVec<u8>,
}

// SAFETY: the raw pointers are a send buffer and GID attribute references,
// which the MAD layer and the RDMA core accept from any thread.
unsafe impl core::marker::Send for Inner {}

impl Drop for Inner {
    fn drop(&mut self) {
        if self.av_valid {
            // SAFETY: `av` was initialised by the RDMA core and holds its
            // references until now.
            unsafe { bindings::rdma_destroy_ah_attr(&mut self.av) };
        }
    }
}

/// An ID: the C `struct ib_cm_id` first, as `cm_id_private` embeds it.
#[pin_data]
#[repr(C)]
pub(crate) struct CmId {
    cid: Opaque<bindings::ib_cm_id>,
    #[pin]
    inner: SpinLock<Inner>,
    #[pin]
    handler: Mutex<()>,
    /// The timewait timer (`cm_timewait_info.work`).
    #[pin]
    timewait: DelayedWork<CmId>,
    /// Delivers `IB_CM_USER_ESTABLISHED` after `ib_cm_notify()`, which may
    /// be called in atomic context (`cm_establish()` queues a work too).
    #[pin]
    established: Work<CmId, 1>,
}

kernel::workqueue::impl_has_work! {
    impl HasWork<Self, 1> for CmId { self.established }
}

impl WorkItem<1> for CmId {
    type Pointer = Arc<CmId>;

    fn run(this: Arc<CmId>) {
        this.user_established();
    }
}

kernel::workqueue::impl_has_delayed_work! {
    impl HasDelayedWork<Self> for CmId { self.timewait }
}

impl WorkItem for CmId {
    type Pointer = Arc<CmId>;

    fn run(this: Arc<CmId>) {
        this.timewait_expired();
    }
}

// SAFETY: the C struct is written by the consumer (handler and context,
// before events can arrive, as in C) and by this module under `inner`.
unsafe impl core::marker::Send for CmId {}
// SAFETY: as above.
unsafe impl Sync for CmId {}

fn qp_type_of(t: bindings::ib_qp_type) -> Option<CmQpType> {
    match t {
        bindings::ib_qp_type_IB_QPT_RC => Some(CmQpType::Rc),
        bindings::ib_qp_type_IB_QPT_UC => Some(CmQpType::Uc),
        bindings::ib_qp_type_IB_QPT_XRC_INI => Some(CmQpType::XrcIni),
        bindings::ib_qp_type_IB_QPT_XRC_TGT => Some(CmQpType::XrcTgt),
        _ => None,
    }
}

fn qp_type_to_c(t: Option<CmQpType>) -> bindings::ib_qp_type {
    match t {
        Some(CmQpType::Rc) => bindings::ib_qp_type_IB_QPT_RC,
        Some(CmQpType::Uc) => bindings::ib_qp_type_IB_QPT_UC,
        Some(CmQpType::XrcIni) => bindings::ib_qp_type_IB_QPT_XRC_INI,
        Some(CmQpType::XrcTgt) => bindings::ib_qp_type_IB_QPT_XRC_TGT,
        None => 0,
    }
}

/// The bytes a consumer passed as `(pointer, length)`.
///
/// # Safety
///
/// `p` is null or points to `len` readable bytes for `'a`.
unsafe fn bytes<'a>(p: *const ffi::c_void, len: u8) -> &'a [u8] {
    if p.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: the caller's guarantee.
        unsafe { core::slice::from_raw_parts(p.cast::<u8>(), usize::from(len)) }
    }
}

impl CmId {
    fn new(
        dev: *mut bindings::ib_device,
        handler: bindings::ib_cm_handler,
        context: *mut ffi::c_void,
    ) -> Result<Arc<CmId>> {
        let inner = Inner {
            state: State::Idle,
            lap: LapState::Uninit,
            destroyed: false,
            listen_share: 0,
            local_id: 0,
            remote_id: 0,
            remote_known: false,
            remote_ca_guid: 0,
            service_id: 0,
            port: 0,
            av: Default::default(),
            av_valid: false,
            av_timeout: 0,
            pkey_index: 0,
            tid: 0,
            timeout_ms: 0,
            max_cm_retries: 0,
            msg: ptr::null_mut(),
            msg_state: State::Idle,
            local_qpn: 0,
            remote_qpn: 0,
            sq_psn: 0,
            rq_psn: 0,
            qp_type: None,
            path_mtu: 0,
            responder_resources: 0,
            initiator_depth: 0,
            retry_count: 0,
            rnr_retry_count: 0,
            saved_pd: KVec::new(),
        };
        let cid = bindings::ib_cm_id {
            cm_handler: handler,
            context,
            device: dev,
            remote_cm_qpn: 1,
            ..Default::default()
        };
        let id = Arc::pin_init(
            pin_init!(CmId {
                cid: Opaque::new(cid),
                inner <- new_spinlock!(inner, "cm_id"),
                handler <- new_mutex!((), "cm_id_handler"),
                timewait <- new_delayed_work!("cm_id::timewait"),
                established <- new_work!("cm_id::established"),
            }),
            GFP_KERNEL,
        )?;
        // Give it a local ID and publish it.
        let mut t = TABLES.lock();
        let local_id = loop {
            let cand = t.next_local_id;
            t.next_local_id = t.next_local_id.wrapping_add(1).max(1);
            if !t.ids.iter().any(|i| i.inner.lock().local_id == cand) {
                break cand;
            }
        };
        id.inner.lock().local_id = local_id;
        // SAFETY: not shared yet but through the table we hold locked.
        unsafe { (*id.cid.get()).local_id = local_id.to_be() };
        t.ids.push(id.clone(), GFP_ATOMIC)?;
        Ok(id)
    }

    fn raw(&self) -> *mut bindings::ib_cm_id {
        self.cid.get()
    }

    fn device(&self) -> *mut bindings::ib_device {
        // SAFETY: `device` is set at creation and never changes.
        unsafe { (*self.raw()).device }
    }

    /// The ID behind a consumer's pointer, counted.
    ///
    /// # Safety
    ///
    /// `cid` came from `ib_create_cm_id()` or `ib_cm_insert_listen()` (or a
    /// REQ event) and was not destroyed.
    unsafe fn from_c(cid: *mut bindings::ib_cm_id) -> Arc<CmId> {
        // SAFETY: `cid` is the first field of a `CmId` (repr(C)) in an `Arc`
        // the table holds until destroy.
        let b = unsafe { ArcBorrow::from_raw(cid.cast::<CmId>()) };
        b.into()
    }

    /// Mirrors the state into the C struct (`cm_id->state`, debug use).
    fn publish_state(&self, g: &Inner) {
        // SAFETY: the C struct lives as long as `self`; the consumer only
        // reads these fields.
        unsafe {
            let c = self.raw();
            (*c).state = g.state as u32;
            (*c).lap_state = g.lap as u32;
            (*c).remote_id = g.remote_id.to_be();
            (*c).service_id = g.service_id.to_be();
        }
    }

    fn ids(g: &Inner) -> Ids {
        Ids {
            tid: g.tid,
            local_id: g.local_id,
            remote_id: g.remote_id,
        }
    }

    /// Builds a message with `fill` and posts it to the peer on the ID's
    /// address vector (`cm_alloc_msg()` and `ib_post_send_mad()`); a tracked
    /// one is retried by the MAD layer and becomes the ID's `msg`.
    fn post(
        self: &Arc<Self>,
        g: &mut Inner,
        tracked: bool,
        fill: impl FnOnce(&mut Mad, u32) -> Result<(), TooLong>,
    ) -> Result {
        if !g.av_valid {
            return Err(EINVAL);
        }
        let t = PORTS.lock();
        let dev = self.device() as usize;
        let p = t
            .iter()
            .find(|p| p.dev == dev && p.num == g.port)
            .ok_or(ENODEV)?;
        let agent = p.agent as *mut bindings::ib_mad_agent;
        // SAFETY: the agent stays registered while its port is in the table,
        // which we hold locked.
        let buf = from_err_ptr(unsafe {
            bindings::ib_create_send_mad(
                agent,
                1,
                g.pkey_index,
                0,
                MAD_HDR_SIZE as ffi::c_int,
                (MAD_SIZE - MAD_HDR_SIZE) as ffi::c_int,
                bindings::GFP_ATOMIC,
                BASE_VERSION,
            )
        })?;
        // SAFETY: as above; the agent's QP and PD live as long as the agent,
        // and `av` is a complete address vector.
        let ah = from_err_ptr(unsafe { bindings::rdma_create_ah((*(*agent).qp).pd, &mut g.av, 0) });
        let ah = match ah {
            Ok(ah) => ah,
            Err(e) => {
                // SAFETY: `buf` was created above and never posted.
                unsafe { bindings::ib_free_send_mad(buf) };
                return Err(e);
            }
        };
        // SAFETY: `buf` is ours until posted; its MAD buffer holds a whole
        // MAD, zeroed.
        let (mad, hi_tid) = unsafe {
            (*buf).ah = ah;
            (&mut *(*buf).mad.cast::<Mad>(), (*agent).hi_tid)
        };
        if fill(mad, hi_tid).is_err() {
            // SAFETY: not posted: still ours.
            unsafe { crate::mad_agent::free_send(buf) };
            return Err(EINVAL);
        }
        if tracked {
            // SAFETY: `buf` is ours; the reference is taken back at its
            // completion (`send_done`).
            unsafe {
                (*buf).timeout_ms = g.timeout_ms as ffi::c_int;
                (*buf).retries = ffi::c_int::from(g.max_cm_retries);
                (*buf).context[1] = Arc::into_raw(self.clone()).cast_mut().cast();
            }
        }
        // SAFETY: `buf` is complete; the MAD layer owns it until its
        // completion.
        let ret = unsafe { bindings::ib_post_send_mad(buf, ptr::null_mut()) };
        drop(t);
        if ret != 0 {
            // SAFETY: not posted: still ours, with the reference we took.
            unsafe {
                if tracked {
                    drop(Arc::from_raw((*buf).context[1].cast::<CmId>()));
                }
                crate::mad_agent::free_send(buf);
            }
            return Err(Error::from_errno(ret));
        }
        if tracked {
            g.msg = buf;
        }
        Ok(())
    }

    /// Posts one of the messages a step sends from the ID's state.
    fn post_send(
        self: &Arc<Self>,
        g: &mut Inner,
        send: Send,
        pd: Option<&[u8]>,
        ari: &[u8],
    ) -> Result {
        let saved = core::mem::take(&mut g.saved_pd);
        let pd_or_saved: &[u8] = pd.unwrap_or(&saved);
        let ids = Self::ids(g);
        let node_guid = self.node_guid();
        let ret = match send {
            Send::Rtu => self.post(g, false, |m, _| format::rtu(m, ids, pd_or_saved)),
            Send::Drep => self.post(g, false, |m, _| format::drep(m, ids, pd_or_saved)),
            Send::Mra(what) => self.post(g, false, |m, _| format::mra(m, ids, what, pd_or_saved)),
            Send::Dreq | Send::IssueDreq => {
                let tracked = send == Send::Dreq;
                let remote_qpn = g.remote_qpn;
                let local_id = g.local_id;
                let mut tid = 0;
                let r = self.post(g, tracked, |m, hi| {
                    tid = format::form_tid(hi, local_id);
                    format::dreq(m, Ids { tid, ..ids }, remote_qpn, pd_or_saved)
                });
                if r.is_ok() {
                    g.tid = tid;
                }
                r
            }
            Send::Rej {
                reason,
                rejected,
                zero_local_id,
                ari: which,
            } => {
                let guid = node_guid.to_be_bytes();
                let ari: &[u8] = match which {
                    RejAri::Empty => &[],
                    RejAri::Consumer => ari,
                    RejAri::NodeGuid => &guid,
                };
                let pd: &[u8] = pd.unwrap_or(&[]);
                self.post(g, false, |m, _| {
                    format::rej(m, ids, reason, rejected, zero_local_id, ari, pd)
                })
            }
            Send::SidrRepStatus(status) => {
                let fields = format::SidrRepFields {
                    tid: g.tid,
                    remote_id: g.remote_id,
                    service_id: g.service_id,
                    status,
                    ..Default::default()
                };
                self.post(g, false, |m, _| format::sidr_rep(m, &fields))
            }
            _ => Err(EINVAL),
        };
        if g.saved_pd.is_empty() {
            g.saved_pd = saved;
        }
        ret
    }

    fn node_guid(&self) -> u64 {
        // SAFETY: the device outlives its IDs (the consumer destroys them
        // before the device goes).
        u64::from_be(unsafe { (*self.device()).node_guid })
    }

    fn ack_delay(&self) -> u8 {
        // SAFETY: as in `node_guid`.
        unsafe { (*self.device()).attrs.local_ca_ack_delay }
    }

    /// After a request (REQ, SIDR_REQ) was posted by hand: keeps its
    /// transaction id for the response, then carries out the rest of `step`
    /// and records the state the message was sent in.
    fn enter_posted(self: &Arc<Self>, g: &mut Inner, step: &Step) {
        // SAFETY: `msg` was just posted and is ours to read until completion,
        // which clears it under this lock.
        g.tid = MadHdr(unsafe { &*(*g.msg).mad.cast::<Mad>() }).tid();
        let _ = self.apply(
            g,
            &Step {
                gate: None,
                ..*step
            },
            None,
            &[],
        );
        g.msg_state = step.state;
    }

    /// Carries out `step` (gate, cancel, state, bookkeeping, send) under the
    /// ID's lock; returns the event to deliver, or the error of the gate or
    /// the send.
    fn apply(
        self: &Arc<Self>,
        g: &mut Inner,
        step: &Step,
        pd: Option<&[u8]>,
        ari: &[u8],
    ) -> Result<Option<Event>> {
        match step.gate {
            Some(Gate::Post(send)) => self.post_send(g, send, pd, ari)?,
            Some(Gate::ModifyMad(ms)) => {
                if !g.msg.is_null() {
                    // SAFETY: `msg` is ours until its completion clears it
                    // under this lock.
                    unsafe { bindings::ib_modify_mad(g.msg, ms) };
                }
            }
            None => {}
        }
        if step.cancel_mad && !g.msg.is_null() {
            // SAFETY: as above; a cancelled MAD completes with a flush.
            unsafe { bindings::ib_modify_mad(g.msg, 0) };
        }
        let tracked_gate = matches!(step.gate, Some(Gate::Post(Send::Dreq)));
        g.state = step.state;
        g.lap = step.lap;
        if tracked_gate || matches!(step.gate, Some(Gate::ModifyMad(_))) {
            g.msg_state = step.state;
        }
        match step.leave {
            Leave::ResetToIdle => g.remote_known = false,
            Leave::EnterTimewait => {
                g.remote_known = false;
                if !g.destroyed {
                    let ms = timing::timewait_ms(g.av_timeout);
                    let delay = kernel::time::msecs_to_jiffies(ms);
                    if let Some(wq) = WQ.get() {
                        // Already armed: the one pending covers this timewait.
                        let _ = wq.enqueue_delayed(self.clone(), delay);
                    }
                }
            }
            Leave::Unlisten | Leave::ForgetSidr | Leave::Stay => {}
        }
        match step.private_data {
            Keep::Same => {}
            Keep::Clear => g.saved_pd.clear(),
            Keep::Store => {
                g.saved_pd.clear();
                let _ = g.saved_pd.extend_from_slice(pd.unwrap_or(&[]), GFP_ATOMIC);
            }
        }
        self.publish_state(g);
        if let Some(send) = step.send {
            self.post_send(g, send, pd, ari)?;
        }
        Ok(step.deliver)
    }

    /// Calls the consumer's handler with `ev`, unless the ID is being
    /// destroyed; returns the handler's verdict.
    fn deliver(self: &Arc<Self>, ev: &bindings::ib_cm_event) -> ffi::c_int {
        let _h = self.handler.lock();
        if self.inner.lock().destroyed {
            return 0;
        }
        let c = self.raw();
        // SAFETY: the consumer set the handler at creation (or the listener's
        // was copied); the C struct is valid while we hold a reference.
        match unsafe { (*c).cm_handler } {
            // SAFETY: the C handler's contract: the ID and event are valid for
            // the call.
            Some(h) => unsafe { h(c, ev) },
            None => 0,
        }
    }

    /// Delivers `ev` and destroys the ID if the handler asks (`cm_process_work()`).
    fn deliver_or_destroy(self: &Arc<Self>, ev: &bindings::ib_cm_event) {
        let ret = self.deliver(ev);
        if ret != 0 {
            let cause = if ret == ENOMEM.to_errno() && ev.event == Event::ReqReceived as u32 {
                DestroyCause::NoMemory
            } else {
                DestroyCause::Consumer
            };
            self.destroy(cause);
        }
    }

    /// The timewait timer fired (`cm_timewait_handler()`): the ID is idle
    /// again and the consumer hears of it. The timer only runs for the
    /// ID's current connection (it is armed once per timewait).
    fn timewait_expired(self: &Arc<Self>) {
        let event = {
            let mut g = self.inner.lock();
            if g.destroyed {
                return;
            }
            let step = state::timewait_expired(g.state, g.lap, true);
            self.apply(&mut g, &step, None, &[]).unwrap_or(step.deliver)
        };
        if let Some(e) = event {
            self.deliver_or_destroy(&zeroed_event(e));
        }
    }

    /// The queued COMM_EST (`cm_establish_handler()`).
    fn user_established(self: &Arc<Self>) {
        let event = {
            let mut g = self.inner.lock();
            if g.destroyed {
                return;
            }
            let step = state::user_established(g.state, g.lap);
            self.apply(&mut g, &step, None, &[]).unwrap_or(step.deliver)
        };
        if let Some(e) = event {
            self.deliver_or_destroy(&zeroed_event(e));
        }
    }

    /// Stops pending timewait and COMM_EST works, releasing the references
    /// they hold.
    fn cancel_timewait(self: &Arc<Self>) {
        let w = ptr::addr_of!(self.established)
            .cast_mut()
            .cast::<kernel::bindings::work_struct>();
        // SAFETY: `Work` is a transparent wrapper of the initialised C
        // `work_struct`; cancelling never waits.
        if unsafe { kernel::bindings::cancel_work(w) } {
            // SAFETY: the pending work owned the reference `enqueue` made
            // with `Arc::into_raw`; cancelled, it never runs to take it.
            drop(unsafe { Arc::from_raw(Arc::as_ptr(self)) });
        }
        let dw = ptr::addr_of!(self.timewait)
            .cast_mut()
            .cast::<kernel::bindings::delayed_work>();
        // SAFETY: `DelayedWork` is a transparent wrapper of the initialised
        // C `delayed_work`; cancelling never waits.
        if unsafe { kernel::bindings::cancel_delayed_work(dw) } {
            // SAFETY: the pending work owned the reference `enqueue_delayed`
            // made with `Arc::into_raw`; cancelled, it never runs to take it.
            drop(unsafe { Arc::from_raw(Arc::as_ptr(self)) });
        }
    }

    /// `cm_destroy_id()`: takes the ID through the destroy steps to idle,
    /// waits for a handler in flight, and leaves the table.
    fn destroy(self: &Arc<Self>, cause: DestroyCause) {
        {
            let mut g = self.inner.lock();
            if g.destroyed {
                return;
            }
            if g.state == State::Listen && g.listen_share > 1 {
                g.listen_share -= 1;
                return;
            }
            g.destroyed = true;
            for _ in 0..4 {
                if g.state == State::Idle {
                    break;
                }
                let step = state::destroy(g.state, g.lap, g.qp_type, cause);
                if step.is_noop(g.state, g.lap) {
                    break;
                }
                // A failed send changes nothing about going away.
                let _ = self.apply(&mut g, &step, None, &[]);
                if g.state == State::Timewait {
                    // No timewait record outlives the ID.
                    g.state = State::Idle;
                }
            }
            if !g.msg.is_null() {
                // SAFETY: as in `apply`.
                unsafe { bindings::ib_modify_mad(g.msg, 0) };
            }
        }
        self.cancel_timewait();
        // Wait for a handler in flight; none starts after this.
        drop(self.handler.lock());
        let gone = {
            let mut t = TABLES.lock();
            let i = t.ids.iter().position(|i| ptr::eq(&**i, &**self));
            i.and_then(|i| t.ids.remove(i).ok())
        };
        // Dropped unlocked: the last reference releases a GID attribute,
        // which may sleep.
        drop(gone);
    }
}

// ---- received messages -------------------------------------------------------

impl Inner {
    fn keys(&self) -> Keys {
        Keys {
            local_id: self.local_id,
            remote_id: self.remote_id,
            remote_known: self.remote_known,
            remote_ca_guid: self.remote_ca_guid,
            remote_qpn: self.remote_qpn,
            listening_on: (self.state == State::Listen).then_some(self.service_id),
            answering_sidr: self.state == State::SidrReqRcvd,
        }
    }
}

/// The live ID `lookup` takes (a listener: of device `dev`).
fn find_on(dev: *mut bindings::ib_device, lookup: Lookup) -> Option<Arc<CmId>> {
    let t = TABLES.lock();
    t.ids
        .iter()
        .find(|i| {
            let g = i.inner.lock();
            !g.destroyed
                && lookup.takes(&g.keys())
                && (!matches!(lookup, Lookup::Listen(_) | Lookup::Sidr(_)) || i.device() == dev)
        })
        .cloned()
}

fn find(lookup: Lookup) -> Option<Arc<CmId>> {
    find_on(ptr::null_mut(), lookup)
}

fn find_listener(dev: *mut bindings::ib_device, service_id: u64) -> Option<Arc<CmId>> {
    find_on(dev, Lookup::Listen(service_id))
}

fn zeroed_event(event: Event) -> bindings::ib_cm_event {
    bindings::ib_cm_event {
        event: event as u32,
        ..Default::default()
    }
}

/// Where a MAD arrived.
pub(crate) struct Arrival<'a> {
    pub(crate) dev: *mut bindings::ib_device,
    pub(crate) port_num: u32,
    pub(crate) port: &'a CmPort,
    /// The agent the MAD arrived on, for answers the CM builds itself.
    pub(crate) agent: &'a Responder<'a>,
}

/// Sends the CM-built `issue` to the sender of `mad` (`cm_issue_rej()`,
/// `cm_issue_drep()`). A failed answer is dropped: the peer retries.
pub(crate) fn answer(agent: &Responder<'_>, mad: &RecvMad, issue: Issue) {
    let _ = match issue {
        Issue::Rej(reason, rejected) => agent.respond(mad, false, |out| {
            super::proto::issue::rej(mad.mad(), out, reason, rejected)
        }),
        Issue::Drep => agent.respond(mad, true, |out| super::proto::issue::drep(mad.mad(), out)),
        Issue::Nothing => Ok(()),
    };
}

/// A stale connection (`cm_match_req()`, `cm_rep_handler()`): the peer's QP
/// is still known connected under `old`, so the peer lost that connection.
/// The new REQ or REP is rejected and the old connection disconnected.
fn reject_stale(at: &Arrival<'_>, mad: &RecvMad, rejected: MsgResponse, old: &Arc<CmId>) {
    answer(
        at.agent,
        mad,
        Issue::Rej(state::rej_reason::STALE_CONN, rejected),
    );
    // Refused by the old ID's state (already disconnecting): nothing to do.
    let _ = send_dreq(old, &[]);
}

/// A received message for an ID, or a REQ for a listener. Returns `false`
/// when no ID takes it (the caller answers as for an unknown ID).
pub(crate) fn recv(at: &Arrival<'_>, mad: &RecvMad) -> bool {
    use super::proto::msgs::{
        decode,
        Msg, //
    };
    let Ok(msg) = decode(mad.mad()) else {
        return true;
    };
    match msg {
        Msg::Req(m) => recv_req(at, mad, &m),
        Msg::Rep(m) => {
            let Some(id) = find(for_reply(true, m.local_comm_id(), m.remote_comm_id())) else {
                return true;
            };
            recv_rep(at, mad, &id, &m);
            true
        }
        Msg::Rtu(m) => {
            let _ = recv_for_id(
                at,
                mad,
                (m.local_comm_id(), m.remote_comm_id()),
                m.private_data(),
                |g| state::rtu_received(g.state, g.lap),
            );
            true
        }
        Msg::Dreq(m) => recv_for_id(
            at,
            mad,
            (m.local_comm_id(), m.remote_comm_id()),
            m.private_data(),
            |g| {
                let s = state::dreq_received(g.state, g.lap, m.remote_qpn_eecn() == g.local_qpn);
                if s.deliver.is_some() || s.send.is_some() {
                    g.tid = m.hdr().tid();
                }
                s
            },
        ),
        Msg::Drep(m) => {
            let _ = recv_for_id(
                at,
                mad,
                (m.local_comm_id(), m.remote_comm_id()),
                m.private_data(),
                |g| state::drep_received(g.state, g.lap),
            );
            true
        }
        Msg::Rej(m) => {
            recv_rej(at, mad, &m);
            true
        }
        Msg::Mra(m) => {
            recv_mra(at, &m);
            true
        }
        Msg::SidrReq(m) => recv_sidr_req(at, mad, &m),
        Msg::SidrRep(m) => {
            recv_sidr_rep(at, &m);
            true
        }
        _ => true,
    }
}

/// An RTU, DREQ or DREP (`comm_ids`: the message's local and remote
/// communication IDs, which name both of ours): the step the ID's state
/// takes (`step_of`, under the ID's lock), then its event. `false` when no
/// ID has those IDs.
fn recv_for_id(
    at: &Arrival<'_>,
    mad: &RecvMad,
    comm_ids: (u32, u32),
    private_data: &[u8],
    step_of: impl FnOnce(&mut Inner) -> Step,
) -> bool {
    let Some(id) = find(for_reply(false, comm_ids.0, comm_ids.1)) else {
        return false;
    };
    let step = step_of(&mut id.inner.lock());
    finish(
        at,
        &id,
        step,
        MadHdr(mad.mad()).attr_id(),
        private_data.as_ptr(),
        |_| {},
    );
    true
}

/// Takes a step computed for a received message, then delivers its event
/// with `fill` completing the event's parameters.
fn finish(
    at: &Arrival<'_>,
    id: &Arc<CmId>,
    step: Step,
    attr_id: u16,
    private_data: *const u8,
    fill: impl FnOnce(&mut bindings::ib_cm_event),
) {
    if step.dup {
        at.port.count(CounterGroup::RecvDuplicates, attr_id);
    }
    let event = {
        let mut g = id.inner.lock();
        if g.destroyed {
            return;
        }
        match id.apply(&mut g, &step, None, &[]) {
            Ok(e) => e,
            Err(_) => step.deliver,
        }
    };
    if let Some(e) = event {
        let mut ev = zeroed_event(e);
        ev.private_data = private_data.cast_mut().cast();
        fill(&mut ev);
        id.deliver_or_destroy(&ev);
    }
}

fn recv_req(at: &Arrival<'_>, mad: &RecvMad, m: &Req<&Mad>) -> bool {
    let req = ReqEvent::of(m);
    if let Some(id) = find(Lookup::Remote {
        remote: req.remote_id,
        guid: req.remote_ca_guid,
    }) {
        let step = {
            let g = id.inner.lock();
            state::dup_req(g.state, g.lap)
        };
        finish(
            at,
            &id,
            step,
            MadHdr(mad.mad()).attr_id(),
            ptr::null(),
            |_| {},
        );
        return true;
    }
    if let Some(old) = find(Lookup::Qpn {
        qpn: req.remote_qpn,
        guid: req.remote_ca_guid,
    }) {
        reject_stale(at, mad, MsgResponse::Req, &old);
        return true;
    }
    let Some(listener) = find_listener(at.dev, req.service_id) else {
        return false;
    };
    let mut av: bindings::rdma_ah_attr = Default::default();
    let (wc, grh) = mad.raw_wc();
    // SAFETY: the completion is valid while `mad` lives; process context.
    let ret = unsafe { bindings::ib_init_ah_attr_from_wc(at.dev, at.port_num, wc, grh, &mut av) };
    if ret != 0 {
        return true;
    }
    // SAFETY: the completion is valid while `mad` lives.
    let (pkey_index, wc_slid) = unsafe { ((*wc).pkey_index, (*wc).slid as u16) };
    // SAFETY: the listener lives while we hold it.
    let (handler, context) = unsafe { ((*listener.raw()).cm_handler, (*listener.raw()).context) };
    let id = match CmId::new(at.dev, handler, context) {
        Ok(id) => id,
        Err(_) => {
            // SAFETY: `av` was initialised above.
            unsafe { bindings::rdma_destroy_ah_attr(&mut av) };
            return true;
        }
    };
    let Some(step) = state::new_req(state::ReqMatch::Listener).1 else {
        return true;
    };
    let sgid_attr = av.grh.sgid_attr;
    let dmac = {
        // SAFETY: a RoCE address vector (`ib_init_ah_attr_from_wc()` took the
        // RoCE branch for this port) has its MAC in the `roce` arm.
        unsafe { av.__bindgen_anon_1.roce.as_ref().dmac }
    };
    {
        let mut g = id.inner.lock();
        g.port = at.port_num;
        g.av = av;
        g.av_valid = true;
        g.av_timeout = m.primary_local_ack_timeout();
        g.pkey_index = pkey_index;
        g.tid = m.hdr().tid();
        g.timeout_ms = timing::rep_timeout_ms(m.local_cm_response_timeout());
        g.max_cm_retries = req.max_cm_retries;
        g.remote_id = req.remote_id;
        g.remote_known = true;
        g.remote_ca_guid = req.remote_ca_guid;
        g.remote_qpn = req.remote_qpn;
        g.sq_psn = req.starting_psn;
        g.qp_type = req.qp_type;
        g.path_mtu = req.mtu;
        g.responder_resources = req.responder_resources;
        g.initiator_depth = req.initiator_depth;
        g.retry_count = req.retry_count;
        g.rnr_retry_count = req.rnr_retry_count;
        g.service_id = req.service_id;
        let _ = id.apply(&mut g, &step, None, &[]);
    }
    // The primary path as the consumer sees it (`cm_format_paths_from_req()`).
    let p = format::primary_path(m, wc_slid);
    let mut path: bindings::sa_path_rec = Default::default();
    // SAFETY: `ib_gid` is 16 bytes; `sgid_attr` is held by the ID's `av`.
    unsafe {
        ptr::write(ptr::addr_of_mut!(path.dgid).cast::<[u8; 16]>(), p.path.dgid);
        ptr::write(ptr::addr_of_mut!(path.sgid).cast::<[u8; 16]>(), p.path.sgid);
        path.rec_type = bindings::rrxe_cm_pathrec_type((*sgid_attr).gid_type as ffi::c_int) as u32;
        path.__bindgen_anon_1.roce.as_mut().dmac = dmac;
    }
    path.service_id = p.service_id.to_be();
    path.flow_label = p.path.flow_label.to_be();
    path.hop_limit = p.path.hop_limit;
    path.traffic_class = p.path.traffic_class;
    path.reversible = 1;
    path.numb_path = 1;
    path.pkey = p.pkey.to_be();
    path.sl = p.path.sl;
    path.mtu_selector = bindings::ib_sa_selector_IB_SA_EQ as u8;
    path.mtu = p.mtu;
    path.rate_selector = bindings::ib_sa_selector_IB_SA_EQ as u8;
    path.rate = p.path.rate;
    path.packet_life_time_selector = bindings::ib_sa_selector_IB_SA_EQ as u8;
    path.packet_life_time = p.path.packet_life_time;
    let listen_raw = listener.raw();
    let mut ev = zeroed_event(Event::ReqReceived);
    ev.private_data = m.private_data().as_ptr().cast_mut().cast();
    // SAFETY: writing the `req_rcvd` arm of a zeroed union.
    let r = unsafe { &mut *ev.param.req_rcvd.as_mut() };
    r.listen_id = listen_raw;
    r.bth_pkey = req.pkey;
    r.port = at.port_num as u8;
    r.primary_path = &mut path;
    r.alternate_path = ptr::null_mut();
    r.ppath_sgid_attr = sgid_attr;
    r.remote_ca_guid = req.remote_ca_guid.to_be();
    r.remote_qkey = req.remote_qkey;
    r.remote_qpn = req.remote_qpn;
    r.qp_type = qp_type_to_c(req.qp_type);
    r.starting_psn = req.starting_psn;
    r.responder_resources = req.responder_resources;
    r.initiator_depth = req.initiator_depth;
    r.set_local_cm_response_timeout(req.local_cm_response_timeout.into());
    r.set_flow_control(req.flow_control.into());
    r.set_remote_cm_response_timeout(req.remote_cm_response_timeout.into());
    r.set_retry_count(req.retry_count.into());
    r.set_rnr_retry_count(req.rnr_retry_count.into());
    r.set_srq(req.srq.into());
    r.ece.vendor_id = req.ece_vendor_id;
    r.ece.attr_mod = req.ece_attr_mod;
    id.deliver_or_destroy(&ev);
    drop(listener);
    true
}

fn recv_rep(at: &Arrival<'_>, mad: &RecvMad, id: &Arc<CmId>, m: &Rep<&Mad>) {
    let attr_id = m.hdr().attr_id();
    // The stale check looks through the table, which locks IDs: done before
    // this ID's lock is taken, for a REP the ID would take.
    let fresh = {
        let g = id.inner.lock();
        let dup = g.remote_known && g.remote_id == m.local_comm_id();
        (!dup && state::rep_received(g.state, g.lap).deliver.is_some())
            .then(|| RepEvent::of(m, g.qp_type.unwrap_or(CmQpType::Rc)))
    };
    if let Some(rep) = fresh {
        let old = find(Lookup::Qpn {
            qpn: rep.remote_qpn,
            guid: rep.remote_ca_guid,
        });
        if let Some(old) = old.filter(|o| !Arc::ptr_eq(o, id)) {
            reject_stale(at, mad, MsgResponse::Rep, &old);
            return;
        }
    }
    let (step, rep) = {
        let mut g = id.inner.lock();
        if g.remote_known && g.remote_id == m.local_comm_id() {
            (state::dup_rep(g.state, g.lap), None)
        } else {
            let step = state::rep_received(g.state, g.lap);
            if step.deliver.is_some() {
                let rep = RepEvent::of(m, g.qp_type.unwrap_or(CmQpType::Rc));
                g.remote_id = rep.remote_id;
                g.remote_known = true;
                g.remote_ca_guid = rep.remote_ca_guid;
                g.remote_qpn = rep.remote_qpn;
                g.sq_psn = rep.starting_psn;
                g.responder_resources = rep.responder_resources;
                g.initiator_depth = rep.initiator_depth;
                g.rnr_retry_count = rep.rnr_retry_count;
                g.av_timeout = rep.av_timeout(g.av_timeout);
                (step, Some(rep))
            } else {
                (step, None)
            }
        }
    };
    finish(at, id, step, attr_id, m.private_data().as_ptr(), |ev| {
        let Some(rep) = rep else { return };
        // SAFETY: writing the `rep_rcvd` arm of a zeroed union.
        let r = unsafe { &mut *ev.param.rep_rcvd.as_mut() };
        r.remote_ca_guid = rep.remote_ca_guid.to_be();
        r.remote_qkey = rep.remote_qkey;
        r.remote_qpn = rep.remote_qpn;
        r.starting_psn = rep.starting_psn;
        r.responder_resources = rep.responder_resources;
        r.initiator_depth = rep.initiator_depth;
        r.set_target_ack_delay(rep.target_ack_delay.into());
        r.set_failover_accepted(rep.failover_accepted.into());
        r.set_flow_control(rep.flow_control.into());
        r.set_rnr_retry_count(rep.rnr_retry_count.into());
        r.set_srq(rep.srq.into());
        r.ece.vendor_id = rep.ece_vendor_id;
        r.ece.attr_mod = rep.ece_attr_mod;
    });
}

fn recv_rej(at: &Arrival<'_>, mad: &RecvMad, m: &Rej<&Mad>) {
    let reason = m.reason();
    let id = find(for_rej(
        reason,
        m.message_rejected(),
        m.local_comm_id(),
        m.remote_comm_id(),
        m.ari_guid(),
    ));
    let Some(id) = id else { return };
    let step = {
        let g = id.inner.lock();
        state::rej_received(g.state, g.lap, reason)
    };
    let ari = m.ari();
    let (ari_ptr, ari_len) = (ari.as_ptr(), ari.len() as u8);
    finish(
        at,
        &id,
        step,
        MadHdr(mad.mad()).attr_id(),
        m.private_data().as_ptr(),
        |ev| {
            // SAFETY: writing the `rej_rcvd` arm of a zeroed union.
            let r = unsafe { &mut *ev.param.rej_rcvd.as_mut() };
            r.reason = reason.into();
            r.ari = ari_ptr.cast_mut().cast();
            r.ari_length = ari_len;
        },
    );
}

fn recv_mra(at: &Arrival<'_>, m: &Mra<&Mad>) {
    let Some(lookup) = for_mra(m.message_mraed(), m.local_comm_id(), m.remote_comm_id()) else {
        return;
    };
    let id = find(lookup);
    let Some(id) = id else { return };
    let service_timeout = m.service_timeout();
    let step = {
        let mut g = id.inner.lock();
        if mra_learns_remote(m.message_mraed()) {
            g.remote_id = m.local_comm_id();
        }
        let ms = timing::mra_timeout_ms(service_timeout, g.av_timeout);
        state::mra_received(g.state, g.lap, m.message_mraed(), ms)
    };
    finish(
        at,
        &id,
        step,
        m.hdr().attr_id(),
        m.private_data().as_ptr(),
        |ev| {
            // SAFETY: writing the `mra_rcvd` arm of a zeroed union.
            unsafe { ev.param.mra_rcvd.as_mut().service_timeout = service_timeout };
        },
    );
}

/// A SIDR_REQ (`cm_sidr_req_handler()`): a listener gets a new ID in
/// `SIDR_REQ_RCVD`; without one the caller answers `IB_SIDR_UNSUPPORTED`.
fn recv_sidr_req(at: &Arrival<'_>, mad: &RecvMad, m: &SidrReq<&Mad>) -> bool {
    if find_on(at.dev, Lookup::Sidr(m.requestid())).is_some() {
        at.port
            .count(CounterGroup::RecvDuplicates, m.hdr().attr_id());
        return true;
    }
    let Some(listener) = find_listener(at.dev, m.serviceid()) else {
        return false;
    };
    let Some(step) = state::new_sidr_req(state::SidrMatch::Listener) else {
        return true;
    };
    let mut av: bindings::rdma_ah_attr = Default::default();
    let (wc, grh) = mad.raw_wc();
    // SAFETY: the completion is valid while `mad` lives; process context.
    let ret = unsafe { bindings::ib_init_ah_attr_from_wc(at.dev, at.port_num, wc, grh, &mut av) };
    if ret != 0 {
        return true;
    }
    // SAFETY: the completion is valid while `mad` lives.
    let pkey_index = unsafe { (*wc).pkey_index };
    // SAFETY: the listener lives while we hold it.
    let (handler, context) = unsafe { ((*listener.raw()).cm_handler, (*listener.raw()).context) };
    let id = match CmId::new(at.dev, handler, context) {
        Ok(id) => id,
        Err(_) => {
            // SAFETY: `av` was initialised above.
            unsafe { bindings::rdma_destroy_ah_attr(&mut av) };
            return true;
        }
    };
    let sgid_attr = av.grh.sgid_attr;
    {
        let mut g = id.inner.lock();
        g.port = at.port_num;
        g.av = av;
        g.av_valid = true;
        g.pkey_index = pkey_index;
        g.tid = m.hdr().tid();
        g.remote_id = m.requestid();
        g.service_id = m.serviceid();
        let _ = id.apply(&mut g, &step, None, &[]);
    }
    let mut ev = zeroed_event(Event::SidrReqReceived);
    ev.private_data = m.private_data().as_ptr().cast_mut().cast();
    // SAFETY: writing the `sidr_req_rcvd` arm of a zeroed union.
    let r = unsafe { ev.param.sidr_req_rcvd.as_mut() };
    r.listen_id = listener.raw();
    r.service_id = m.serviceid().to_be();
    r.sgid_attr = sgid_attr;
    r.bth_pkey = m.partition_key();
    r.port = at.port_num as u8;
    r.pkey = m.partition_key();
    id.deliver_or_destroy(&ev);
    true
}

/// A SIDR_REP (`cm_sidr_rep_handler()`).
fn recv_sidr_rep(at: &Arrival<'_>, m: &SidrRep<&Mad>) {
    let Some(id) = find(Lookup::Local(m.requestid())) else {
        return;
    };
    let (step, sgid_attr) = {
        let g = id.inner.lock();
        (state::sidr_rep_received(g.state, g.lap), g.av.grh.sgid_attr)
    };
    let info = m.info();
    let (info_ptr, info_len) = (info.as_ptr(), info.len() as u8);
    finish(
        at,
        &id,
        step,
        m.hdr().attr_id(),
        m.private_data().as_ptr(),
        |ev| {
            // SAFETY: writing the `sidr_rep_rcvd` arm of a zeroed union.
            let r = unsafe { ev.param.sidr_rep_rcvd.as_mut() };
            r.status = m.status().into();
            r.qkey = m.q_key();
            r.qpn = m.qpn();
            r.info = info_ptr.cast_mut().cast();
            r.info_len = info_len;
            r.sgid_attr = sgid_attr;
        },
    );
}

/// The completion of a tracked MAD (`cm_send_handler()` /
/// `cm_process_send_error()`).
///
/// # Safety
///
/// `ctx` is the reference `post` put in `context[1]` of `buf`, handed over
/// once; `buf` is that buffer, not freed yet.
pub(crate) unsafe fn send_done(
    ctx: *mut ffi::c_void,
    buf: *mut bindings::ib_mad_send_buf,
    status: bindings::ib_wc_status,
) {
    // SAFETY: the caller's guarantee.
    let id = unsafe { Arc::from_raw(ctx.cast::<CmId>()) };
    let status = match status {
        bindings::ib_wc_status_IB_WC_SUCCESS => SendStatus::Success,
        bindings::ib_wc_status_IB_WC_WR_FLUSH_ERR => SendStatus::Flushed,
        _ => SendStatus::Failed,
    };
    let event = {
        let mut g = id.inner.lock();
        if g.msg != buf {
            return;
        }
        g.msg = ptr::null_mut();
        if g.destroyed {
            return;
        }
        let step = state::send_failed(g.state, g.lap, g.msg_state, status);
        id.apply(&mut g, &step, None, &[]).unwrap_or(step.deliver)
    };
    if let Some(e) = event {
        let mut ev = zeroed_event(e);
        // SAFETY: writing the `send_status` arm of a zeroed union.
        unsafe { *ev.param.send_status.as_mut() = bindings::ib_wc_status_IB_WC_RESP_TIMEOUT_ERR };
        id.deliver_or_destroy(&ev);
    }
}

// ---- the exported API -----------------------------------------------------------

/// `ib_create_cm_id()`.
#[no_mangle]
pub(crate) extern "C" fn rrxe_cm_create_id(
    device: *mut bindings::ib_device,
    cm_handler: bindings::ib_cm_handler,
    context: *mut ffi::c_void,
) -> *mut bindings::ib_cm_id {
    match CmId::new(device, cm_handler, context) {
        Ok(id) => id.raw(),
        Err(e) => e.to_ptr(),
    }
}

/// `ib_destroy_cm_id()`.
///
/// # Safety
///
/// `cm_id` is a live ID of the caller's (see `CmId::from_c`).
#[no_mangle]
pub(crate) unsafe extern "C" fn rrxe_cm_destroy_id(cm_id: *mut bindings::ib_cm_id) {
    // SAFETY: the caller's guarantee.
    let id = unsafe { CmId::from_c(cm_id) };
    id.destroy(DestroyCause::Consumer);
}

fn listen(id: &Arc<CmId>, service_id: u64) -> Result {
    let mut t = TABLES.lock();
    let mut next = t.next_service_id;
    let sid = state::listen_service_id(service_id, &mut next)
        .map_err(|r| Error::from_errno(r.to_errno()))?;
    let dev = id.device();
    let busy = t.ids.iter().any(|i| {
        let g = i.inner.lock();
        !g.destroyed && g.state == State::Listen && g.service_id == sid && i.device() == dev
    });
    if busy {
        return Err(EBUSY);
    }
    let mut g = id.inner.lock();
    let step = state::listen(g.state, g.lap).map_err(|r| Error::from_errno(r.to_errno()))?;
    t.next_service_id = next;
    g.service_id = sid;
    g.state = step.state;
    g.listen_share = 1;
    id.publish_state(&g);
    Ok(())
}

/// `ib_cm_listen()`.
///
/// # Safety
///
/// As [`rrxe_cm_destroy_id`].
#[no_mangle]
pub(crate) unsafe extern "C" fn rrxe_cm_listen(
    cm_id: *mut bindings::ib_cm_id,
    service_id: u64,
) -> ffi::c_int {
    // SAFETY: the caller's guarantee.
    let id = unsafe { CmId::from_c(cm_id) };
    match listen(&id, u64::from_be(service_id)) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// `ib_cm_insert_listen()`: a listener shared by every caller with the same
/// device, handler and service ID.
#[no_mangle]
pub(crate) extern "C" fn rrxe_cm_insert_listen(
    device: *mut bindings::ib_device,
    cm_handler: bindings::ib_cm_handler,
    service_id: u64,
) -> *mut bindings::ib_cm_id {
    let sid = u64::from_be(service_id);
    if let Some(l) = find_listener(device, sid) {
        let mut g = l.inner.lock();
        // SAFETY: the listener is alive (we hold it).
        let same =
            unsafe { (*l.raw()).cm_handler }.map(|f| f as usize) == cm_handler.map(|f| f as usize);
        if !same || g.destroyed || g.state != State::Listen {
            return EINVAL.to_ptr();
        }
        g.listen_share += 1;
        return l.raw();
    }
    let id = match CmId::new(device, cm_handler, ptr::null_mut()) {
        Ok(id) => id,
        Err(e) => return e.to_ptr(),
    };
    match listen(&id, sid) {
        Ok(()) => id.raw(),
        Err(e) => {
            id.destroy(DestroyCause::Consumer);
            e.to_ptr()
        }
    }
}

fn errno(r: Result) -> ffi::c_int {
    match r {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

fn refusal(r: state::Refusal) -> Error {
    Error::from_errno(r.to_errno())
}

fn send_req(id: &Arc<CmId>, p: &bindings::ib_cm_req_param) -> Result {
    // SAFETY: the consumer passes valid pointers for the call.
    let pd = unsafe { bytes(p.private_data, p.private_data_len) };
    let check = ReqCheck {
        has_primary_path: !p.primary_path.is_null(),
        qp_type: qp_type_of(p.qp_type),
        private_data_len: pd.len(),
        alt_path_matches: None,
    };
    {
        let g = id.inner.lock();
        state::send_req(g.state, g.lap, &check).map_err(refusal)?;
    }
    // SAFETY: checked non-null; the consumer's path record for the call.
    let path = unsafe { &mut *p.primary_path };
    let sgid_attr = p.ppath_sgid_attr;
    if sgid_attr.is_null() {
        return Err(EINVAL);
    }
    let dev = id.device();
    // SAFETY: a GID attribute the consumer holds for the call.
    let port = unsafe { (*sgid_attr).port_num };
    let mut pkey_index = 0u16;
    // SAFETY: the device is registered while the consumer uses it.
    kernel::error::to_result(unsafe {
        bindings::ib_find_cached_pkey(dev, port, u16::from_be(path.pkey), &mut pkey_index)
    })?;
    let mut av: bindings::rdma_ah_attr = Default::default();
    // SAFETY: as above; process context.
    kernel::error::to_result(unsafe {
        bindings::ib_init_ah_attr_from_path(dev, port, path, &mut av, sgid_attr)
    })?;
    // SAFETY: `ib_gid` is 16 bytes.
    let (sgid, dgid) = unsafe {
        (
            ptr::read(ptr::addr_of!(path.sgid).cast::<[u8; 16]>()),
            ptr::read(ptr::addr_of!(path.dgid).cast::<[u8; 16]>()),
        )
    };
    let ack_delay = id.ack_delay();
    let node_guid = id.node_guid();
    let mut g = id.inner.lock();
    // Checked again: the state may have moved while unlocked.
    let step = state::send_req(g.state, g.lap, &check).map_err(refusal)?;
    if g.av_valid {
        // SAFETY: the previous address vector is ours.
        unsafe { bindings::rdma_destroy_ah_attr(&mut g.av) };
    }
    g.av = av;
    g.av_valid = true;
    g.port = port;
    g.pkey_index = pkey_index;
    g.av_timeout = path.packet_life_time.wrapping_add(1);
    g.timeout_ms = timing::req_timeout_ms(path.packet_life_time, p.remote_cm_response_timeout);
    g.max_cm_retries = p.max_cm_retries;
    g.service_id = u64::from_be(p.service_id);
    g.local_qpn = p.qp_num;
    g.qp_type = check.qp_type;
    g.rq_psn = p.starting_psn;
    g.responder_resources = p.responder_resources;
    g.initiator_depth = p.initiator_depth;
    g.retry_count = p.retry_count;
    g.rnr_retry_count = p.rnr_retry_count;
    g.path_mtu = path.mtu;
    let local_id = g.local_id;
    let snapshot = ReqFields {
        tid: 0,
        local_id,
        node_guid,
        ack_delay,
        service_id: g.service_id,
        qp_num: p.qp_num,
        qp_type: check.qp_type,
        starting_psn: p.starting_psn,
        pkey: u16::from_be(path.pkey),
        mtu: path.mtu,
        responder_resources: p.responder_resources,
        initiator_depth: p.initiator_depth,
        remote_cm_response_timeout: p.remote_cm_response_timeout,
        local_cm_response_timeout: p.local_cm_response_timeout,
        flow_control: p.flow_control,
        retry_count: p.retry_count,
        rnr_retry_count: p.rnr_retry_count,
        max_cm_retries: p.max_cm_retries,
        srq: p.srq,
        primary: PathFields {
            sgid,
            dgid,
            slid: 0,
            dlid: 0,
            flow_label: u32::from_be(path.flow_label),
            rate: path.rate,
            traffic_class: path.traffic_class,
            hop_limit: path.hop_limit,
            sl: path.sl,
            packet_life_time: path.packet_life_time,
        },
        primary_inbound_dlid: None,
        alternate: None,
        ece_vendor_id: p.ece.vendor_id,
        ece_attr_mod: p.ece.attr_mod,
        private_data: pd,
    };
    let posted = id.post(&mut g, true, |m, hi| {
        let tid = format::form_tid(hi, local_id);
        format::req(m, &ReqFields { tid, ..snapshot })
    });
    posted?;
    id.enter_posted(&mut g, &step);
    Ok(())
}

/// `ib_send_cm_req()`.
///
/// # Safety
///
/// As [`rrxe_cm_destroy_id`]; `param` is valid for the call.
#[no_mangle]
pub(crate) unsafe extern "C" fn rrxe_cm_send_req(
    cm_id: *mut bindings::ib_cm_id,
    param: *mut bindings::ib_cm_req_param,
) -> ffi::c_int {
    // SAFETY: the caller's guarantee.
    let (id, p) = unsafe { (CmId::from_c(cm_id), &*param) };
    errno(send_req(&id, p))
}

fn send_rep(id: &Arc<CmId>, p: &bindings::ib_cm_rep_param) -> Result {
    // SAFETY: the consumer passes valid pointers for the call.
    let pd = unsafe { bytes(p.private_data, p.private_data_len) };
    let ack_delay = id.ack_delay();
    let node_guid = id.node_guid();
    let mut g = id.inner.lock();
    let step = state::send_rep(g.state, g.lap, pd.len()).map_err(refusal)?;
    let fields = format::RepFields {
        tid: g.tid,
        local_id: g.local_id,
        remote_id: g.remote_id,
        node_guid,
        ack_delay,
        qp_type: g.qp_type,
        qp_num: p.qp_num,
        starting_psn: p.starting_psn,
        responder_resources: p.responder_resources,
        initiator_depth: p.initiator_depth,
        failover_accepted: p.failover_accepted,
        flow_control: p.flow_control,
        rnr_retry_count: p.rnr_retry_count,
        srq: p.srq,
        ece_vendor_id: p.ece.vendor_id,
        ece_attr_mod: p.ece.attr_mod,
        private_data: pd,
    };
    id.post(&mut g, true, |m, _| format::rep(m, &fields))?;
    g.local_qpn = p.qp_num;
    g.rq_psn = p.starting_psn;
    g.initiator_depth = p.initiator_depth;
    g.responder_resources = p.responder_resources;
    g.rnr_retry_count = p.rnr_retry_count;
    let _ = id.apply(&mut g, &Step { gate: None, ..step }, None, &[]);
    g.msg_state = step.state;
    Ok(())
}

/// `ib_send_cm_rep()`.
///
/// # Safety
///
/// As [`rrxe_cm_send_req`].
#[no_mangle]
pub(crate) unsafe extern "C" fn rrxe_cm_send_rep(
    cm_id: *mut bindings::ib_cm_id,
    param: *mut bindings::ib_cm_rep_param,
) -> ffi::c_int {
    // SAFETY: the caller's guarantee.
    let (id, p) = unsafe { (CmId::from_c(cm_id), &*param) };
    errno(send_rep(&id, p))
}

/// A consumer call that is one step of the state machine with private data.
fn simple(
    id: &Arc<CmId>,
    pd: &[u8],
    ari: &[u8],
    step_of: impl FnOnce(State, LapState) -> Result<Step, state::Refusal>,
) -> Result {
    let mut g = id.inner.lock();
    let step = step_of(g.state, g.lap).map_err(refusal)?;
    id.apply(&mut g, &step, Some(pd), ari).map(|_| ())
}

/// `ib_send_cm_rtu()`.
///
/// # Safety
///
/// As [`rrxe_cm_destroy_id`]; the private data is valid for the call.
#[no_mangle]
pub(crate) unsafe extern "C" fn rrxe_cm_send_rtu(
    cm_id: *mut bindings::ib_cm_id,
    private_data: *const ffi::c_void,
    private_data_len: u8,
) -> ffi::c_int {
    // SAFETY: the caller's guarantee.
    let (id, pd) = unsafe { (CmId::from_c(cm_id), bytes(private_data, private_data_len)) };
    errno(simple(&id, pd, &[], |s, l| state::send_rtu(s, l, pd.len())))
}

/// `ib_send_cm_dreq()`.
///
/// # Safety
///
/// As [`rrxe_cm_send_rtu`].
#[no_mangle]
pub(crate) unsafe extern "C" fn rrxe_cm_send_dreq(
    cm_id: *mut bindings::ib_cm_id,
    private_data: *const ffi::c_void,
    private_data_len: u8,
) -> ffi::c_int {
    // SAFETY: the caller's guarantee.
    let (id, pd) = unsafe { (CmId::from_c(cm_id), bytes(private_data, private_data_len)) };
    errno(send_dreq(&id, pd))
}

/// Disconnects `id` with a DREQ carrying `pd` (`ib_send_cm_dreq()`).
fn send_dreq(id: &Arc<CmId>, pd: &[u8]) -> Result {
    let mut g = id.inner.lock();
    let step = state::send_dreq(g.state, g.lap, pd.len()).map_err(refusal)?;
    if let Err(e) = id.apply(&mut g, &step, Some(pd), &[]) {
        let s = state::dreq_not_posted(g.state, g.lap);
        let _ = id.apply(&mut g, &s, None, &[]);
        return Err(e);
    }
    Ok(())
}

/// `ib_send_cm_drep()`.
///
/// # Safety
///
/// As [`rrxe_cm_send_rtu`].
#[no_mangle]
pub(crate) unsafe extern "C" fn rrxe_cm_send_drep(
    cm_id: *mut bindings::ib_cm_id,
    private_data: *const ffi::c_void,
    private_data_len: u8,
) -> ffi::c_int {
    // SAFETY: the caller's guarantee.
    let (id, pd) = unsafe { (CmId::from_c(cm_id), bytes(private_data, private_data_len)) };
    errno(simple(&id, pd, &[], |s, l| {
        state::send_drep(s, l, pd.len())
    }))
}

/// `ib_cm_notify()`: COMM_EST establishes a passive connection before the
/// RTU (the RTU then only completes it); other events need nothing on RoCE.
///
/// # Safety
///
/// As [`rrxe_cm_destroy_id`].
#[no_mangle]
pub(crate) unsafe extern "C" fn rrxe_cm_notify(
    cm_id: *mut bindings::ib_cm_id,
    event: bindings::ib_event_type,
) -> ffi::c_int {
    // SAFETY: the caller's guarantee.
    let id = unsafe { CmId::from_c(cm_id) };
    let mut g = id.inner.lock();
    match event {
        bindings::ib_event_type_IB_EVENT_COMM_EST => {
            let step = match state::notify_comm_est(g.state, g.lap) {
                Ok(s) => s,
                Err(r) => return r.to_errno(),
            };
            let ret = id.apply(&mut g, &step, None, &[]).map(|_| ());
            if ret.is_ok() && !g.destroyed {
                if let Some(wq) = WQ.get() {
                    // Already queued: that one delivers the event.
                    let _ = wq.enqueue::<_, 1>(id.clone());
                }
            }
            errno(ret)
        }
        bindings::ib_event_type_IB_EVENT_PATH_MIG => errno(
            state::notify_path_mig(g.state, g.lap)
                .map(|_| ())
                .map_err(refusal),
        ),
        _ => EINVAL.to_errno(),
    }
}

/// `ib_send_cm_rej()`.
///
/// # Safety
///
/// As [`rrxe_cm_send_rtu`]; `ari` is valid for `ari_length` bytes.
#[no_mangle]
pub(crate) unsafe extern "C" fn rrxe_cm_send_rej(
    cm_id: *mut bindings::ib_cm_id,
    reason: bindings::ib_cm_rej_reason,
    ari: *mut ffi::c_void,
    ari_length: u8,
    private_data: *const ffi::c_void,
    private_data_len: u8,
) -> ffi::c_int {
    // SAFETY: the caller's guarantee.
    let (id, pd, ari) = unsafe {
        (
            CmId::from_c(cm_id),
            bytes(private_data, private_data_len),
            bytes(ari, ari_length),
        )
    };
    errno(simple(&id, pd, ari, |s, l| {
        state::send_rej(s, l, reason as u16, ari.len(), pd.len())
    }))
}

/// `ib_prepare_cm_mra()`.
///
/// # Safety
///
/// As [`rrxe_cm_destroy_id`].
#[no_mangle]
pub(crate) unsafe extern "C" fn rrxe_cm_prepare_mra(cm_id: *mut bindings::ib_cm_id) -> ffi::c_int {
    // SAFETY: the caller's guarantee.
    let id = unsafe { CmId::from_c(cm_id) };
    errno(simple(&id, &[], &[], state::prepare_mra))
}

/// `ib_cm_init_qp_attr()`.
///
/// # Safety
///
/// As [`rrxe_cm_destroy_id`]; `qp_attr` and `qp_attr_mask` are valid.
#[no_mangle]
pub(crate) unsafe extern "C" fn rrxe_cm_init_qp_attr(
    cm_id: *mut bindings::ib_cm_id,
    qp_attr: *mut bindings::ib_qp_attr,
    qp_attr_mask: *mut ffi::c_int,
) -> ffi::c_int {
    // SAFETY: the caller's guarantee.
    let (id, a) = unsafe { (CmId::from_c(cm_id), &mut *qp_attr) };
    let target = match a.qp_state {
        bindings::ib_qp_state_IB_QPS_INIT => QpTarget::Init,
        bindings::ib_qp_state_IB_QPS_RTR => QpTarget::Rtr,
        bindings::ib_qp_state_IB_QPS_RTS => QpTarget::Rts,
        _ => return EINVAL.to_errno(),
    };
    // SAFETY: the device outlives its IDs.
    let flush = unsafe {
        (*id.device()).attrs.device_cap_flags
            & (bindings::ib_device_cap_flags_IB_DEVICE_FLUSH_GLOBAL
                | bindings::ib_device_cap_flags_IB_DEVICE_FLUSH_PERSISTENT) as u64
            != 0
    };
    let g = id.inner.lock();
    let input = QpAttrInput {
        qp_type: g.qp_type,
        alt_dlid: false,
        alt_port: false,
    };
    let mask = match state::qp_attr_mask(g.state, g.lap, target, input) {
        Ok(m) => m,
        Err(r) => return r.to_errno(),
    };
    match target {
        QpTarget::Init => {
            a.qp_access_flags =
                state::init_access_flags(g.responder_resources, flush) as ffi::c_int;
            a.pkey_index = g.pkey_index;
            a.port_num = g.port;
        }
        QpTarget::Rtr => {
            // A shallow copy, as in C: the ID keeps the GID reference.
            // SAFETY: `rdma_ah_attr` is plain data here; the consumer does not
            // release it.
            a.ah_attr = unsafe { ptr::read(&g.av) };
            a.path_mtu = u32::from(g.path_mtu);
            a.dest_qp_num = g.remote_qpn;
            a.rq_psn = g.rq_psn;
            a.max_dest_rd_atomic = g.responder_resources;
            a.min_rnr_timer = 0;
        }
        QpTarget::Rts => {
            a.sq_psn = g.sq_psn;
            a.retry_cnt = g.retry_count;
            a.rnr_retry = g.rnr_retry_count;
            a.max_rd_atomic = g.initiator_depth;
            a.timeout = g.av_timeout;
        }
    }
    // SAFETY: the caller's guarantee.
    unsafe { *qp_attr_mask = mask as ffi::c_int };
    0
}

fn send_sidr_req(id: &Arc<CmId>, p: &bindings::ib_cm_sidr_req_param) -> Result {
    // SAFETY: the consumer passes valid pointers for the call.
    let pd = unsafe { bytes(p.private_data, p.private_data_len) };
    {
        let g = id.inner.lock();
        state::send_sidr_req(g.state, g.lap, !p.path.is_null(), pd.len()).map_err(refusal)?;
    }
    // SAFETY: checked non-null; the consumer's path record for the call.
    let path = unsafe { &mut *p.path };
    let sgid_attr = p.sgid_attr;
    if sgid_attr.is_null() {
        return Err(EINVAL);
    }
    let dev = id.device();
    // SAFETY: a GID attribute the consumer holds for the call.
    let port = unsafe { (*sgid_attr).port_num };
    let mut pkey_index = 0u16;
    // SAFETY: the device is registered while the consumer uses it.
    kernel::error::to_result(unsafe {
        bindings::ib_find_cached_pkey(dev, port, u16::from_be(path.pkey), &mut pkey_index)
    })?;
    let mut av: bindings::rdma_ah_attr = Default::default();
    // SAFETY: as above; process context.
    kernel::error::to_result(unsafe {
        bindings::ib_init_ah_attr_from_path(dev, port, path, &mut av, sgid_attr)
    })?;
    let mut g = id.inner.lock();
    let step = state::send_sidr_req(g.state, g.lap, true, pd.len()).map_err(refusal)?;
    if g.av_valid {
        // SAFETY: the previous address vector is ours.
        unsafe { bindings::rdma_destroy_ah_attr(&mut g.av) };
    }
    g.av = av;
    g.av_valid = true;
    g.port = port;
    g.pkey_index = pkey_index;
    g.av_timeout = path.packet_life_time.wrapping_add(1);
    g.timeout_ms = u32::try_from(p.timeout_ms).unwrap_or(u32::MAX);
    g.max_cm_retries = p.max_cm_retries;
    g.service_id = u64::from_be(p.service_id);
    let (local_id, service_id, pkey) = (g.local_id, g.service_id, u16::from_be(path.pkey));
    id.post(&mut g, true, |m, hi| {
        let tid = format::form_tid(hi, local_id);
        format::sidr_req(m, tid, local_id, pkey, service_id, pd)
    })?;
    id.enter_posted(&mut g, &step);
    Ok(())
}

/// `ib_send_cm_sidr_req()`.
///
/// # Safety
///
/// As [`rrxe_cm_send_req`].
#[no_mangle]
pub(crate) unsafe extern "C" fn rrxe_cm_send_sidr_req(
    cm_id: *mut bindings::ib_cm_id,
    param: *mut bindings::ib_cm_sidr_req_param,
) -> ffi::c_int {
    // SAFETY: the caller's guarantee.
    let (id, p) = unsafe { (CmId::from_c(cm_id), &*param) };
    errno(send_sidr_req(&id, p))
}

fn send_sidr_rep(id: &Arc<CmId>, p: &bindings::ib_cm_sidr_rep_param) -> Result {
    // SAFETY: the consumer passes valid pointers for the call.
    let (pd, info) = unsafe {
        (
            bytes(p.private_data, p.private_data_len),
            bytes(p.info, p.info_length),
        )
    };
    let mut g = id.inner.lock();
    let step = state::send_sidr_rep(g.state, g.lap, info.len(), pd.len()).map_err(refusal)?;
    let fields = format::SidrRepFields {
        tid: g.tid,
        remote_id: g.remote_id,
        service_id: g.service_id,
        status: p.status as u8,
        qp_num: p.qp_num,
        qkey: p.qkey,
        ece_vendor_id: p.ece.vendor_id,
        ece_attr_mod: p.ece.attr_mod,
        info,
        private_data: pd,
    };
    id.post(&mut g, false, |m, _| format::sidr_rep(m, &fields))?;
    let _ = id.apply(&mut g, &Step { gate: None, ..step }, None, &[]);
    Ok(())
}

/// `ib_send_cm_sidr_rep()`.
///
/// # Safety
///
/// As [`rrxe_cm_send_req`].
#[no_mangle]
pub(crate) unsafe extern "C" fn rrxe_cm_send_sidr_rep(
    cm_id: *mut bindings::ib_cm_id,
    param: *mut bindings::ib_cm_sidr_rep_param,
) -> ffi::c_int {
    // SAFETY: the caller's guarantee.
    let (id, p) = unsafe { (CmId::from_c(cm_id), &*param) };
    errno(send_sidr_rep(&id, p))
}

/// `ibcm_reject_msg()`.
#[no_mangle]
pub(crate) extern "C" fn rrxe_cm_reject_msg(reason: ffi::c_int) -> *const ffi::c_char {
    state::reject_msg(reason).as_char_ptr()
}

const _: () = assert!(size::REJ_ARI <= u8::MAX as usize);
