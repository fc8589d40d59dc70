// SPDX-License-Identifier: GPL-2.0

//! CM contexts, multicast memberships and events, and how they die.
//!
//! Ownership (no raw pointers anywhere):
//! - an open file owns its contexts (`FileInner::ctxs`), its multicast
//!   memberships (`FileInner::mcs`) and its queued events; the module's
//!   table of context ids ([`CTX_IDS`], the C module's `ctx_table`) holds
//!   one more reference on each while it is in its file;
//! - a context owns its C id ([`CmId`], in `Ctx::cm`), and the C id owns one
//!   reference on the context (its `context` pointer) until the id is
//!   destroyed; a context refers back to its file (`Ctx::file`);
//! - an event refers to its context (and to the new context of a connection
//!   request, and to its multicast membership).
//!
//! These cycles are broken explicitly by [`destroy_ctx`]: the C id is taken
//! out and destroyed first (`rdma_destroy_id()` waits for running handlers,
//! and no handler runs afterwards), then the context's queued events and
//! memberships are removed; undelivered connection requests of a listener
//! are destroyed the same way. DESTROY_ID and the file's release are the
//! only callers. A C id is never destroyed inside an event handler.
//!
//! Lock order: `Ctx::cm` → the C id's handler mutex → `FileInner` (the
//! handler takes it) → `Ctx::file`. A new context's `cm` is only try-locked
//! under `FileInner` (it is fresh, so that always succeeds).

use crate::{
    abi::{
        self,
        EventParam,
        EventResp, //
    },
    file::{
        FileInner,
        UcmaFile, //
    },
    rdma::cm::{
        self,
        CmEvent,
        CmHandler,
        CmId,
        ConnRequest,
        SockAddr, //
    },
    rdma::{
        ids::{
            IdReservation,
            ModuleIds, //
        },
        tagged_list::ListTag,
        workqueue::ModuleQueue,
    },
};
use core::sync::atomic::{
    AtomicI32,
    AtomicU32,
    AtomicU64,
    Ordering, //
};
use kernel::{
    list::{
        List,
        ListArc,
        ListLinks, //
    },
    new_mutex, new_spinlock,
    prelude::*,
    sync::{
        Arc,
        ArcBorrow,
        Mutex,
        SpinLock, //
    },
};

/// The contexts of every open file by id (the C module's `ctx_table`): the
/// lowest free 32-bit id, unique over all files, so an id keeps its number
/// when it migrates, and a command naming another file's id is told
/// `EINVAL` where an unknown one is told `ENOENT`, as in C.
pub(crate) static CTX_IDS: ModuleIds<Ctx> = ModuleIds::new();

/// The multicast memberships of every open file by id (the C module's
/// `multicast_table`), numbered and checked as contexts are.
pub(crate) static MC_IDS: ModuleIds<Mc> = ModuleIds::new();

/// One `rdma_cm_id` of a user.
#[pin_data]
pub(crate) struct Ctx {
    /// The id userspace knows it by.
    pub(crate) id: u32,
    /// The C id; `None` once destroyed. Also serialises the commands on this
    /// context (the C module's `ctx->mutex`).
    #[pin]
    pub(crate) cm: Mutex<Option<CmId<Ctx>>>,
    /// The file whose event queue receives this context's events.
    #[pin]
    pub(crate) file: SpinLock<Arc<UcmaFile>>,
    /// Userspace's handle, echoed in events; 0 until a connection request's
    /// context is accepted (events are dropped until then).
    pub(crate) uid: AtomicU64,
    /// Connection requests a listener may still queue.
    pub(crate) backlog: AtomicI32,
    /// Events delivered by GET_EVENT (reported by DESTROY_ID).
    pub(crate) events_reported: AtomicU32,
    /// Its place in its file's list of contexts (`FileInner::ctxs`), and
    /// which file's list that is.
    #[pin]
    links: ListLinks,
    list_tag: ListTag,
}

kernel::list::impl_list_arc_safe! {
    impl ListArcSafe<0> for Ctx { untracked; }
}
kernel::list::impl_list_item! {
    impl ListItem<0> for Ctx {
        using ListLinks { self.links };
    }
}
crate::impl_has_list_tag! { impl HasListTag<0> for Ctx { self.list_tag } }

impl Ctx {
    /// A new context of `file` without C id yet, under the id `id` reserves;
    /// the reference returned is the one its file's list will hold.
    pub(crate) fn new(
        id: &IdReservation<'_, Ctx>,
        file: Arc<UcmaFile>,
        uid: u64,
    ) -> Result<ListArc<Self>> {
        let id = id.id();
        ListArc::pin_init(
            try_pin_init!(Ctx {
                id,
                cm <- new_mutex!(None),
                file <- new_spinlock!(file),
                uid: AtomicU64::new(uid),
                backlog: AtomicI32::new(0),
                events_reported: AtomicU32::new(0),
                links <- ListLinks::new(),
                list_tag: ListTag::new(),
            }),
            GFP_KERNEL,
        )
    }

    /// The file the context's events currently go to.
    pub(crate) fn file(&self) -> Arc<UcmaFile> {
        self.file.lock().clone()
    }

    /// Whether the context is `file`'s now.
    pub(crate) fn is_of(&self, file: &UcmaFile) -> bool {
        core::ptr::eq(&**self.file.lock(), file)
    }

    /// Takes one unit of backlog, if any is left (`atomic_add_unless`).
    fn take_backlog(&self) -> bool {
        let mut cur = self.backlog.load(Ordering::Relaxed);
        while cur > 0 {
            match self
                .backlog
                .compare_exchange(cur, cur - 1, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
        false
    }

    /// The user event for `ev` on this context.
    fn user_event<'a>(&self, ev: &CmEvent<'a>) -> EventResp<'a> {
        EventResp {
            uid: self.uid.load(Ordering::Acquire),
            id: self.id,
            event: ev.event,
            status: ev.status,
            param: match &ev.param {
                cm::EventParam::None => EventParam::None,
                cm::EventParam::Conn(c) => EventParam::Conn(abi::EventConn {
                    qp_num: c.qp_num,
                    qkey: c.qkey,
                    private_data: c.private_data,
                    private_data_len: c.private_data_len,
                    srq: c.srq,
                    responder_resources: c.responder_resources,
                    initiator_depth: c.initiator_depth,
                    flow_control: c.flow_control,
                    retry_count: c.retry_count,
                    rnr_retry_count: c.rnr_retry_count,
                    valid: 0,
                }),
                cm::EventParam::Ud(u) => EventParam::Ud(abi::UdParam {
                    qp_num: u.qp_num,
                    qkey: u.qkey,
                    ah_attr: u.ah_attr,
                    private_data: u.private_data,
                    private_data_len: u.private_data_len,
                }),
            },
            ece: abi::Ece {
                vendor_id: ev.ece_vendor_id,
                attr_mod: ev.ece_attr_mod,
            },
        }
    }
}

/// A multicast membership of a context.
pub(crate) struct Mc {
    pub(crate) id: u32,
    pub(crate) ctx: Arc<Ctx>,
    pub(crate) uid: u64,
    pub(crate) addr: SockAddr,
    /// Events delivered by GET_EVENT (reported by LEAVE_MCAST).
    pub(crate) events_reported: AtomicU32,
}

impl Mc {
    /// A new membership of `ctx`, under the id `id` reserves.
    pub(crate) fn new(
        id: &IdReservation<'_, Mc>,
        ctx: Arc<Ctx>,
        uid: u64,
        addr: SockAddr,
    ) -> Result<Arc<Self>> {
        Ok(Arc::new(
            Mc {
                id: id.id(),
                ctx,
                uid,
                addr,
                events_reported: AtomicU32::new(0),
            },
            GFP_KERNEL,
        )?)
    }
}

/// A queued event: an entry of its file's event list (`FileInner::events`),
/// as the C module's `struct ucma_event` on `file->event_list`.
#[pin_data]
pub(crate) struct Event {
    /// The context the event is reported on (the listener, for a request).
    pub(crate) ctx: Arc<Ctx>,
    /// The new connection's context, for a connection request.
    pub(crate) conn_req: Option<Arc<Ctx>>,
    /// The membership, for multicast events.
    pub(crate) mc: Option<Arc<Mc>>,
    /// `enum rdma_cm_event_type`.
    pub(crate) event: u32,
    /// The response GET_EVENT copies out, encoded when the event is made
    /// (the C module's `uevent->resp`).
    pub(crate) resp: [u8; abi::EVENT_RESP_SIZE],
    #[pin]
    links: ListLinks,
}

kernel::list::impl_list_arc_safe! {
    impl ListArcSafe<0> for Event { untracked; }
}
kernel::list::impl_list_item! {
    impl ListItem<0> for Event {
        using ListLinks { self.links };
    }
}

impl Event {
    /// An event of `ctx` (about `conn_req` or `mc`, if given) answering
    /// `resp`, encoded in place in its allocation (the 336 bytes are not
    /// built on the stack and copied).
    pub(crate) fn new(
        ctx: Arc<Ctx>,
        conn_req: Option<Arc<Ctx>>,
        mc: Option<Arc<Mc>>,
        resp: &EventResp<'_>,
    ) -> Result<ListArc<Self>> {
        let init = try_pin_init!(Event {
            ctx,
            conn_req,
            mc,
            event: resp.event,
            resp: [0; abi::EVENT_RESP_SIZE],
            links <- ListLinks::new(),
        })
        .pin_chain(|ev| {
            resp.encode_into(ev.project().resp);
            Ok(())
        });
        ListArc::pin_init(init, GFP_KERNEL)
    }
}

/// Takes the events `f` selects out of `events`, in their order.
pub(crate) fn take_events(
    events: &mut List<Event>,
    mut f: impl FnMut(&Event) -> bool,
) -> List<Event> {
    let mut taken = List::new();
    let mut cursor = events.cursor_front();
    while let Some(next) = cursor.peek_next() {
        if f(&next) {
            taken.push_back(next.remove());
        } else {
            cursor.move_next();
        }
    }
    taken
}

impl CmHandler for Ctx {
    fn event(this: ArcBorrow<'_, Self>, ev: &CmEvent<'_>) {
        // Events of a new connection are ignored until it is accepted.
        if this.uid.load(Ordering::Acquire) != 0 {
            queue_event(this, ev);
        }
        // Even for a connection not yet accepted: its C id holds the device.
        if ev.event == abi::EVENT_DEVICE_REMOVAL {
            close_on_removal(this.into());
        }
    }

    fn connect_request(
        listener: ArcBorrow<'_, Self>,
        req: ConnRequest<'_, Self>,
        ev: &CmEvent<'_>,
    ) -> Result {
        if !listener.take_backlog() {
            // Better than the C module, which drops the request silently and
            // lets the client retry until it times out: reject it at once
            // (consumer defined), so the client gets REJECTED promptly.
            let _ = req.reject(abi::REJ_CONSUMER_DEFINED);
            return Err(ENOMEM);
        }
        let listener: Arc<Ctx> = listener.into();
        let res = queue_connect_request(listener.clone(), req, ev);
        if res.is_err() {
            listener.backlog.fetch_add(1, Ordering::AcqRel);
        }
        res
    }
}

/// Queues `ev` on the file `this` reports to; an event that cannot be
/// queued is lost, as in the C module.
fn queue_event(this: ArcBorrow<'_, Ctx>, ev: &CmEvent<'_>) {
    let file = this.file();
    let is_mc = ev.event == abi::EVENT_MULTICAST_JOIN || ev.event == abi::EVENT_MULTICAST_ERROR;
    let mut resp = this.user_event(ev);
    // Allocated before the file's lock, as in the C module; a multicast
    // event under it, where its membership is found and stays until the
    // event is queued (LEAVE_MCAST removes the membership's events).
    let mut event = if is_mc {
        None
    } else {
        match Event::new(this.into(), None, None, &resp) {
            Ok(e) => Some(e),
            Err(_) => return,
        }
    };
    {
        let mut inner = file.inner.lock();
        if inner.closed {
            return;
        }
        if is_mc {
            let key = u32::try_from(ev.mc_context).unwrap_or(u32::MAX);
            // None: the membership was left meanwhile; the event is dropped.
            let Some(mc) = inner.mcs.get(&key).cloned() else {
                return;
            };
            (resp.uid, resp.id) = (mc.uid, mc.id);
            event = Event::new(this.into(), None, Some(mc), &resp).ok();
        }
        let Some(event) = event else {
            return;
        };
        inner.events.push_back(event);
    }
    file.wait.notify_all();
}

/// The module's queue for [`close_on_removal`], owned by the module.
pub(crate) static CLOSE_WQ: ModuleQueue = ModuleQueue::new();

/// DEVICE_REMOVAL: the RDMA CM removes the device only once every id on it
/// is destroyed, so the context's C id is destroyed now, from the module's
/// workqueue (an id is never destroyed inside its own handler), as the C
/// module's `ucma_close_id` does. The context stays until userspace
/// destroys it; its commands fail with `ENXIO` meanwhile.
fn close_on_removal(ctx: Arc<Ctx>) {
    let Some(wq) = CLOSE_WQ.get() else {
        return;
    };
    let spawned = wq.try_spawn(GFP_KERNEL, move || {
        let cm = ctx.cm.lock().take();
        // Outside the lock: destroying waits for the id's running handler.
        drop(cm);
    });
    if spawned.is_err() {
        // The id then lives until userspace destroys it (librdmacm does on
        // this event), and the device removal waits for that.
        pr_warn!("rdma_ucm: no memory to close an id on device removal\n");
    }
}

/// Makes a context for a connection request on `listener` and queues the
/// request event; adopts the request only once nothing can fail any more.
fn queue_connect_request(
    listener: Arc<Ctx>,
    req: ConnRequest<'_, Ctx>,
    ev: &CmEvent<'_>,
) -> Result {
    let file = listener.file();
    let id = CTX_IDS.get().ok_or(ENODEV)?.reserve()?;
    let ctx = Ctx::new(&id, file.clone(), 0)?;
    let mut resp = listener.user_event(ev);
    resp.id = ctx.id;
    let event = Event::new(listener, Some(ctx.clone_arc()), None, &resp)?;
    {
        let mut inner = file.inner.lock();
        if inner.closed {
            return Err(ENOMEM);
        }
        let mut slot = ctx.cm.try_lock().ok_or(EBUSY)?;
        *slot = Some(req.adopt(ctx.clone_arc()));
        drop(slot);
        list_ctx(&mut inner, ctx, id);
        inner.events.push_back(event);
    }
    file.wait.notify_all();
    Ok(())
}

/// Adds a new context to its file's list, `inner`, and to the module's
/// table, under the id `id` reserved for it: from here on commands find it.
pub(crate) fn list_ctx(inner: &mut FileInner, ctx: ListArc<Ctx>, id: IdReservation<'_, Ctx>) {
    id.publish(ctx.clone_arc());
    inner.ctxs.push_back(ctx);
}

/// Takes `ctx` out of its file's list, `inner`, if it is still there (not
/// destroyed nor migrated meanwhile), and out of the module's table, where
/// its id is free again: both under the file's lock, so that no new context
/// takes the id before this one has left the file.
pub(crate) fn unlist_ctx(inner: &mut FileInner, ctx: &Ctx) -> Option<Arc<Ctx>> {
    let taken = inner.ctxs.remove(ctx)?;
    unpublish_ctx(ctx.id);
    Some(taken.into_arc())
}

/// Takes the first context out of its file's list, `inner`, and out of the
/// module's table (as [`unlist_ctx`]), for the file's release.
pub(crate) fn unlist_first_ctx(inner: &mut FileInner) -> Option<Arc<Ctx>> {
    let taken = inner.ctxs.pop_front()?;
    unpublish_ctx(taken.id);
    Some(taken.into_arc())
}

/// Frees context id `id`: lookups no longer find the context.
fn unpublish_ctx(id: u32) {
    CTX_IDS.free(id);
}

/// Frees membership id `id`, once no event of the membership can come.
pub(crate) fn free_mc_id(id: u32) {
    MC_IDS.free(id);
}

/// Destroys a context taken out of its file's table: its C id, then its
/// queued events (destroying the contexts of undelivered connection
/// requests), then its memberships. Returns the events reported.
pub(crate) fn destroy_ctx(file: &UcmaFile, ctx: Arc<Ctx>) -> u32 {
    let cm = ctx.cm.lock().take();
    // No handler of this id runs once this returns.
    drop(cm);
    let mut taken = {
        let mut inner = file.inner.lock();
        let taken = take_events(&mut inner.events, |e| Arc::ptr_eq(&e.ctx, &ctx));
        for ev in &taken {
            if let Some(c) = &ev.conn_req {
                drop(unlist_ctx(&mut inner, c));
            }
        }
        taken
    };
    while let Some(ev) = taken.pop_front() {
        if let Some(c) = &ev.conn_req {
            destroy_conn_req(file, c.clone());
        }
    }
    remove_mcs(file, &ctx);
    ctx.events_reported.load(Ordering::Acquire)
}

/// Destroys a connection request's context that userspace never saw.
fn destroy_conn_req(file: &UcmaFile, ctx: Arc<Ctx>) {
    let cm = ctx.cm.lock().take();
    drop(cm);
    let taken = take_events(&mut file.inner.lock().events, |e| Arc::ptr_eq(&e.ctx, &ctx));
    drop(taken);
    remove_mcs(file, &ctx);
}

/// Forgets the memberships of context `ctx` (its C id is destroyed, which
/// left the groups).
fn remove_mcs(file: &UcmaFile, ctx: &Ctx) {
    loop {
        let mut inner = file.inner.lock();
        let key = inner
            .mcs
            .iter()
            .find(|(_, mc)| core::ptr::eq(&*mc.ctx, ctx))
            .map(|(k, _)| *k);
        match key {
            Some(k) => {
                if let Some(mc) = inner.mcs.remove(&k) {
                    drop(take_events(&mut inner.events, |e| {
                        e.mc.as_ref().is_some_and(|m| Arc::ptr_eq(m, &mc))
                    }));
                }
                // The C id is destroyed: no event of it comes any more, the
                // id can go.
                free_mc_id(k);
            }
            None => break,
        }
    }
}

/// Moves `ctx` from file `cur` to file `new` (MIGRATE_ID): its table entry,
/// its queued events, the contexts of its undelivered connection requests
/// and its memberships. Runs under the context's handler lock, so no event
/// of it is queued meanwhile. Returns the events reported.
pub(crate) fn migrate_ctx(cur: &Arc<UcmaFile>, new: &Arc<UcmaFile>, ctx: &Arc<Ctx>) -> Result<u32> {
    if Arc::ptr_eq(cur, new) {
        return Ok(ctx.events_reported.load(Ordering::Acquire));
    }
    // The contexts leaving `cur`'s list (moved as they are: no allocation).
    let mut ctxs = List::<Ctx>::new();
    let mut mc_nodes = KVec::new();
    let mut events;
    let reported;
    {
        let mut inner = cur.inner.lock();
        if !inner.ctxs.contains(ctx) {
            return Err(ENOENT);
        }
        // Make room first, so nothing fails once entries start moving.
        let n_mc = inner
            .mcs
            .values()
            .filter(|m| Arc::ptr_eq(&m.ctx, ctx))
            .count();
        mc_nodes.reserve(n_mc, GFP_KERNEL)?;
        if let Some(taken) = inner.ctxs.remove(ctx) {
            ctxs.push_back(taken);
        }
        events = take_events(&mut inner.events, |e| Arc::ptr_eq(&e.ctx, ctx));
        for ev in &events {
            if let Some(c) = &ev.conn_req {
                if let Some(taken) = inner.ctxs.remove(c) {
                    ctxs.push_back(taken);
                }
            }
        }
        while let Some(k) = inner
            .mcs
            .iter()
            .find(|(_, m)| Arc::ptr_eq(&m.ctx, ctx))
            .map(|(k, _)| *k)
        {
            match inner.mcs.remove_node(&k) {
                Some(node) => {
                    if let Err(e) = mc_nodes.push_within_capacity(node) {
                        drop(e);
                        break;
                    }
                }
                None => break,
            }
        }
        reported = ctx.events_reported.load(Ordering::Acquire);
    }
    *ctx.file.lock() = new.clone();
    for ev in &events {
        if let Some(c) = &ev.conn_req {
            *c.file.lock() = new.clone();
        }
    }
    {
        let mut inner = new.inner.lock();
        while let Some(c) = ctxs.pop_front() {
            inner.ctxs.push_back(c);
        }
        for node in mc_nodes.drain_all() {
            inner.mcs.insert(node);
        }
        inner.events.push_all_back(&mut events);
    }
    new.wait.notify_all();
    Ok(reported)
}
