// SPDX-License-Identifier: GPL-2.0

//! The RDMA core's ops for queue pairs (`struct ib_qp`).
//!
//! The core allocates a QP as an [`ObjectBox<ib_qp>`] (`size_ib_qp`) and
//! fills its `ib_qp` (device, PD, CQs, SRQ, type) before the driver's
//! create. [`QpDriver::create_qp`] returns the driver's state, which the
//! trampoline attaches; modify, query and the posts borrow it. Destroy is
//! two steps: [`QpDriver::destroy_qp`] may refuse (the QP stays as it is),
//! then the trampoline detaches the state, drops its reference, and waits
//! until the state itself is gone (references the driver handed out, to
//! packets in flight or timers, may outlive the destroy call), since the
//! core frees the `ib_qp` the state points to on return. The state says
//! when it is gone by dropping its [`ReleaseMark`] (its last field): a flag
//! in the core's object, not a completion of its own, so that a QP costs
//! no allocation for it.
//!
//! Attributes are the core's plain structures (`ib_qp_attr`,
//! `ib_qp_init_attr`); the helpers here read and write their unions and the
//! GID entries they point to. Work requests of kernel users are read
//! through [`SendWr`] and [`RecvWr`].
//!
//! Everything calling into the rxe module's glue is generic or `#[inline]`,
//! as this directory is also built into `rdma_ucm`.

use super::{
    ah::AhDriver,
    bindings,
    cq::{
        driver_cq,
        CqDriver, //
    },
    ib_device::{
        Device,
        IbDriver, //
    },
    mmap::UserContext,
    object::{
        CoreObject,
        ObjectBox, //
    },
    srq::SrqDriver,
    udata::UData,
    wait,
};
use core::{
    marker::PhantomData,
    sync::atomic::{
        AtomicU8,
        Ordering, //
    },
};
use kernel::{
    ffi,
    prelude::*,
    str::NullTerminatedFormatter,
    sync::{
        Arc,
        ArcBorrow, //
    },
};

/// `struct ib_qp_attr`: a modify's request, a query's answer.
pub type QpAttr = bindings::ib_qp_attr;
/// `struct ib_qp_init_attr`: a create's request (its `cap` is written back
/// with the sizes granted), a query's answer.
pub type QpInitAttr = bindings::ib_qp_init_attr;
/// `struct rdma_ah_attr`: an address vector.
pub type AhAttr = bindings::rdma_ah_attr;
/// `struct ib_sge`: a scatter/gather entry.
pub type Sge = bindings::ib_sge;

/// A QP the core is creating.
///
/// # Invariants
///
/// `raw` is the `ib_qp` at the start of a `QpObject` (an
/// [`ObjectBox<ib_qp>`] and a flag) the core
/// allocated and filled, to which the create op has exclusive access for `'a`.
pub struct NewQp<'a> {
    raw: *mut bindings::ib_qp,
    _p: PhantomData<&'a mut bindings::ib_qp>,
}

impl NewQp<'_> {
    fn ib(&self) -> &bindings::ib_qp {
        // SAFETY: valid and exclusively ours for `'a` (type invariant).
        unsafe { &*self.raw }
    }

    /// `enum ib_qp_type`.
    pub fn qp_type(&self) -> u32 {
        self.ib().qp_type
    }

    /// The protection domain.
    pub fn pd(&self) -> CoreObject<bindings::ib_pd> {
        CoreObject::new(self.ib().pd)
    }

    /// The core's QP, for the driver's state to keep (completions and
    /// events name it).
    pub fn core(&self) -> CoreObject<bindings::ib_qp> {
        CoreObject::new(self.raw)
    }

    /// The QP's release mark, for the driver's state to keep as its last
    /// field: destroy waits until it is dropped. One per QP; a state that
    /// keeps none is not waited for. If the create fails, the mark must be
    /// dropped before the create op returns (the core frees the object
    /// then, without a destroy).
    pub fn release_mark(&mut self) -> ReleaseMark {
        // SAFETY: the `ib_qp` is the start of a `QpObject` (type invariant),
        // which the core keeps until destroy returns.
        let pending = unsafe { QpObject::pending(self.raw) };
        pending.store(1, Ordering::Relaxed);
        // INVARIANT: the flag just set, of a QP the core frees only after
        // destroy saw it clear.
        ReleaseMark(pending.as_ptr())
    }

    /// Sets the QP number the core and user space know the QP by.
    pub fn set_qp_num(&mut self, qpn: u32) {
        // SAFETY: valid and exclusively ours (type invariant).
        unsafe { (*self.raw).qp_num = qpn };
    }
}

/// An address vector's fields (`struct rdma_ah_attr` with its GRH), and
/// its source GID entry as the core resolved it.
#[derive(Clone, Copy, Debug, Default)]
pub struct AhFields {
    /// `IB_AH_GRH` is set.
    pub has_grh: bool,
    /// Port.
    pub port_num: u32,
    /// Destination GID.
    pub dgid: [u8; 16],
    /// Flow label.
    pub flow_label: u32,
    /// Source GID index.
    pub sgid_index: u8,
    /// Hop limit.
    pub hop_limit: u8,
    /// Traffic class.
    pub traffic_class: u8,
    /// Destination MAC (the RoCE member of the attribute's union).
    pub dmac: [u8; 6],
    /// The source GID entry's GID and `enum ib_gid_type`, if it has one.
    pub sgid: Option<([u8; 16], u32)>,
}

/// Reads an address vector of a modify, whose source GID entry the core
/// holds for the duration of the op.
pub fn ah_fields(ah: &AhAttr) -> AhFields {
    let grh = &ah.grh;
    // SAFETY: the GID entry of a modify's address vector is NULL or held by
    // the core (`rdma_fill_sgid_attr`) until the op returns.
    let sgid = unsafe { grh.sgid_attr.as_ref() }.map(|a| {
        // SAFETY: every bit pattern of the GID union is a byte array.
        (unsafe { *a.gid.raw.as_ref() }, a.gid_type)
    });
    AhFields {
        has_grh: u32::from(ah.ah_flags) & bindings::ib_ah_flags_IB_AH_GRH != 0,
        port_num: ah.port_num,
        // SAFETY: as above.
        dgid: unsafe { *grh.dgid.raw.as_ref() },
        flow_label: grh.flow_label,
        sgid_index: grh.sgid_index,
        hop_limit: grh.hop_limit,
        traffic_class: grh.traffic_class,
        // SAFETY: the union's members are plain bytes; a RoCE device's
        // address vectors use `roce`.
        dmac: unsafe { ah.__bindgen_anon_1.roce.as_ref().dmac },
        sgid,
    }
}

/// Writes an address vector for a query (`rxe_av_to_attr`): a RoCE vector
/// with a GRH; the rest of `ah` is left as it is.
pub fn set_ah_fields(ah: &mut AhAttr, f: &AhFields) {
    ah.type_ = bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_ROCE;
    // SAFETY: every bit pattern of the GID union is a byte array.
    unsafe { *ah.grh.dgid.raw.as_mut() = f.dgid };
    ah.grh.flow_label = f.flow_label;
    ah.grh.sgid_index = f.sgid_index;
    ah.grh.hop_limit = f.hop_limit;
    ah.grh.traffic_class = f.traffic_class;
    ah.ah_flags = bindings::ib_ah_flags_IB_AH_GRH as u8;
    ah.port_num = f.port_num;
}

/// Reports asynchronous event `event` (`IB_EVENT_*`) of `qp` to its
/// owner's handler (`qp->ibqp.event_handler`, as the C driver calls it).
pub fn qp_event(qp: &CoreObject<bindings::ib_qp>, event: u32) {
    let ib = qp.as_ptr();
    // SAFETY: a QP's core object is valid while its driver state lives
    // (`CoreObject`; the destroy op waits for the state's last user).
    let (handler, device, context) =
        unsafe { ((*ib).event_handler, (*ib).device, (*ib).qp_context) };
    let Some(handler) = handler else {
        return;
    };
    // SAFETY: all zeroes is a valid `ib_event` (a pointer, a union of
    // pointers and a port number, an integer).
    let mut ev: bindings::ib_event = unsafe { core::mem::zeroed() };
    ev.device = device;
    // SAFETY: a bindgen union field: writes the QP variant.
    unsafe { *ev.element.qp.as_mut() = ib };
    ev.event = event;
    // SAFETY: the core's handler for this QP, given a valid event and the
    // QP's context, as the core's `__ib_qp_event_handler` expects.
    unsafe { handler(&mut ev, context) };
}

/// The core's state table (`ib_modify_qp_is_ok`): whether a QP of type
/// `qp_type` may go from `cur` to `new` with attribute mask `mask`.
#[inline]
pub fn modify_is_ok(cur: u32, new: u32, qp_type: u32, mask: u32) -> bool {
    // SAFETY: a pure function of its arguments, which it range-checks.
    unsafe { bindings::ib_modify_qp_is_ok(cur, new, qp_type, mask) }
}

/// `nsecs_to_jiffies`.
#[inline]
pub fn nsecs_to_jiffies(ns: u64) -> u64 {
    // SAFETY: a pure conversion.
    let j = unsafe { bindings::nsecs_to_jiffies(ns) };
    j as u64
}

/// The tick count (`jiffies`): a load, where a reading of the clock
/// (`ktime_get`) is a call that, under emulation, reads the host's clock.
#[inline]
pub fn jiffies() -> u64 {
    // SAFETY: `jiffies` is a word the timer tick updates and nothing
    // frees; a volatile load of it whole is what the C `jiffies` (declared
    // volatile) is.
    let j = unsafe { core::ptr::read_volatile(&raw const bindings::jiffies) };
    j as u64
}

/// A kernel user's send work request (`struct ib_send_wr` and the struct
/// around it that its opcode and the QP type say it is part of).
pub struct SendWr<'a> {
    wr: &'a bindings::ib_send_wr,
    datagram: bool,
}

/// The remote part of an RDMA read or write (`struct ib_rdma_wr`).
#[derive(Clone, Copy, Debug)]
pub struct RdmaWr {
    /// Remote virtual address.
    pub remote_addr: u64,
    /// Remote key.
    pub rkey: u32,
}

/// The remote part of an atomic (`struct ib_atomic_wr`).
#[derive(Clone, Copy, Debug)]
pub struct AtomicWr {
    /// Remote virtual address.
    pub remote_addr: u64,
    /// Compare (compare and swap) or add (fetch and add) operand.
    pub compare_add: u64,
    /// Swap operand.
    pub swap: u64,
    /// Remote key.
    pub rkey: u32,
}

/// The destination of a datagram (`struct ib_ud_wr`).
pub struct UdWr {
    /// The address handle.
    pub ah: CoreObject<bindings::ib_ah>,
    /// Remote QPN.
    pub remote_qpn: u32,
    /// Remote Q_Key.
    pub remote_qkey: u32,
    /// P_Key index (GSI QP).
    pub pkey_index: u16,
}

/// A fast registration (`struct ib_reg_wr`).
pub struct RegWr {
    /// The memory region.
    pub mr: CoreObject<bindings::ib_mr>,
    /// The key it gets.
    pub key: u32,
    /// `IB_ACCESS_*` flags.
    pub access: i32,
}

impl<'a> SendWr<'a> {
    /// The caller's id for the completion.
    pub fn wr_id(&self) -> u64 {
        // SAFETY: the union is an id or a pointer: 64 plain bits either way.
        unsafe { *self.wr.__bindgen_anon_1.wr_id.as_ref() }
    }

    /// `enum ib_wr_opcode`.
    pub fn opcode(&self) -> u32 {
        self.wr.opcode
    }

    /// `IB_SEND_*` flags.
    pub fn send_flags(&self) -> u32 {
        self.wr.send_flags as u32
    }

    /// The number of scatter/gather entries as given (may be negative).
    pub fn num_sge(&self) -> i32 {
        self.wr.num_sge
    }

    /// The scatter/gather list; empty for a negative count.
    pub fn sges(&self) -> &'a [Sge] {
        sge_slice(self.wr.sg_list, self.wr.num_sge)
    }

    /// The data of an inline send (`IB_SEND_INLINE`), entry by entry; empty
    /// for any other send.
    pub fn inline_data(&self) -> impl Iterator<Item = &'a [u8]> {
        let inline = self.send_flags() & bindings::ib_send_flags_IB_SEND_INLINE as u32 != 0;
        let sges = if inline { self.sges() } else { &[] };
        sges.iter().map(|s| {
            let (addr, len) = (s.addr as usize, s.length as usize);
            if addr == 0 {
                return &[][..];
            }
            // SAFETY: the verbs API: the entries of a kernel user's inline
            // send are kernel virtual addresses of `length` bytes
            // (`ib_virt_dma_to_ptr`), valid during the post.
            unsafe { core::slice::from_raw_parts(addr as *const u8, len) }
        })
    }

    /// The immediate data or the rkey to invalidate (one union), as stored.
    pub fn ex(&self) -> u32 {
        // SAFETY: both members are 32 plain bits.
        unsafe { *self.wr.ex.invalidate_rkey.as_ref() }
    }

    fn is_one_of(&self, ops: &[u32]) -> bool {
        ops.contains(&self.wr.opcode)
    }

    /// The remote address of an RDMA read or write on a connected QP.
    pub fn rdma(&self) -> Option<RdmaWr> {
        use bindings::*;
        if self.datagram
            || !self.is_one_of(&[
                ib_wr_opcode_IB_WR_RDMA_WRITE,
                ib_wr_opcode_IB_WR_RDMA_WRITE_WITH_IMM,
                ib_wr_opcode_IB_WR_RDMA_READ,
                ib_wr_opcode_IB_WR_RDMA_READ_WITH_INV,
            ])
        {
            return None;
        }
        // SAFETY: the verbs API: a work request with an RDMA opcode is the
        // `wr` of an `ib_rdma_wr` (`rdma_wr()`).
        let w = unsafe { &*core::ptr::from_ref(self.wr).cast::<ib_rdma_wr>() };
        Some(RdmaWr {
            remote_addr: w.remote_addr,
            rkey: w.rkey,
        })
    }

    /// The operands of an atomic on a connected QP.
    pub fn atomic(&self) -> Option<AtomicWr> {
        use bindings::*;
        if self.datagram
            || !self.is_one_of(&[
                ib_wr_opcode_IB_WR_ATOMIC_CMP_AND_SWP,
                ib_wr_opcode_IB_WR_ATOMIC_FETCH_AND_ADD,
            ])
        {
            return None;
        }
        // SAFETY: the verbs API: an atomic work request is the `wr` of an
        // `ib_atomic_wr` (`atomic_wr()`).
        let w = unsafe { &*core::ptr::from_ref(self.wr).cast::<ib_atomic_wr>() };
        Some(AtomicWr {
            remote_addr: w.remote_addr,
            compare_add: w.compare_add,
            swap: w.swap,
            rkey: w.rkey,
        })
    }

    /// The destination of a send on a datagram QP.
    pub fn ud(&self) -> Option<UdWr> {
        if !self.datagram {
            return None;
        }
        // SAFETY: the verbs API: a work request posted to a UD or GSI QP is
        // the `wr` of an `ib_ud_wr` (`ud_wr()`).
        let w = unsafe { &*core::ptr::from_ref(self.wr).cast::<bindings::ib_ud_wr>() };
        Some(UdWr {
            ah: CoreObject::new(w.ah),
            remote_qpn: w.remote_qpn,
            remote_qkey: w.remote_qkey,
            pkey_index: w.pkey_index,
        })
    }

    /// The driver's address handle of a send on a datagram QP.
    pub fn ud_ah<T: AhDriver>(&self) -> Option<Arc<T::Ah>> {
        let ah = self.ud()?.ah.as_ptr();
        if ah.is_null() {
            return None;
        }
        // SAFETY: the verbs API: the handle of a kernel user's datagram is
        // one of the QP's device, so created by this driver's `create_ah`
        // (its state attached), and kept for the post.
        Some(unsafe { ObjectBox::<bindings::ib_ah>::borrow::<T::Ah>(ah) }.into())
    }

    /// The registration of a fast-register work request.
    pub fn reg(&self) -> Option<RegWr> {
        if self.datagram || self.wr.opcode != bindings::ib_wr_opcode_IB_WR_REG_MR {
            return None;
        }
        // SAFETY: the verbs API: an `IB_WR_REG_MR` work request is the `wr`
        // of an `ib_reg_wr` (`reg_wr()`).
        let w = unsafe { &*core::ptr::from_ref(self.wr).cast::<bindings::ib_reg_wr>() };
        Some(RegWr {
            mr: CoreObject::new(w.mr),
            key: w.key,
            access: w.access,
        })
    }
}

fn sge_slice<'a>(list: *mut Sge, n: i32) -> &'a [Sge] {
    match usize::try_from(n) {
        Ok(n) if n > 0 && !list.is_null() => {
            // SAFETY: a work request's list holds `num_sge` entries, valid
            // for the post (the verbs API).
            unsafe { core::slice::from_raw_parts(list, n) }
        }
        _ => &[],
    }
}

/// A kernel user's list of send work requests.
pub struct SendWrs<'a> {
    next: *const bindings::ib_send_wr,
    datagram: bool,
    _p: PhantomData<&'a bindings::ib_send_wr>,
}

impl<'a> Iterator for SendWrs<'a> {
    type Item = SendWr<'a>;

    fn next(&mut self) -> Option<SendWr<'a>> {
        // SAFETY: the list is valid for the post (the verbs API).
        let wr = unsafe { self.next.as_ref() }?;
        self.next = wr.next;
        Some(SendWr {
            wr,
            datagram: self.datagram,
        })
    }
}

/// A kernel user's receive work request (`struct ib_recv_wr`).
pub struct RecvWr<'a> {
    wr: &'a bindings::ib_recv_wr,
}

impl<'a> RecvWr<'a> {
    /// The caller's id for the completion.
    pub fn wr_id(&self) -> u64 {
        // SAFETY: the union is an id or a pointer: 64 plain bits either way.
        unsafe { *self.wr.__bindgen_anon_1.wr_id.as_ref() }
    }

    /// The number of scatter/gather entries as given (may be negative).
    pub fn num_sge(&self) -> i32 {
        self.wr.num_sge
    }

    /// The scatter/gather list; empty for a negative count.
    pub fn sges(&self) -> &'a [Sge] {
        sge_slice(self.wr.sg_list, self.wr.num_sge)
    }
}

/// A kernel user's list of receive work requests.
pub struct RecvWrs<'a> {
    next: *const bindings::ib_recv_wr,
    _p: PhantomData<&'a bindings::ib_recv_wr>,
}

impl<'a> Iterator for RecvWrs<'a> {
    type Item = RecvWr<'a>;

    fn next(&mut self) -> Option<RecvWr<'a>> {
        // SAFETY: the list is valid for the post (the verbs API).
        let wr = unsafe { self.next.as_ref() }?;
        self.next = wr.next;
        Some(RecvWr { wr })
    }
}

/// A refused post: the error and the position in the list of the work
/// request that was not posted (it and those after it were not).
#[derive(Debug)]
pub struct PostError {
    /// The errno.
    pub err: Error,
    /// Index of the first work request not posted.
    pub index: usize,
}

/// Prints `msg` as a rate-limited error of `dev` (`ibdev_err_ratelimited`),
/// where the C driver prints one. Any context: formats on the stack,
/// truncated to 127 bytes.
#[inline]
pub fn err_ratelimited<T: IbDriver>(dev: &Device<T>, msg: core::fmt::Arguments<'_>) {
    use core::fmt::Write;
    let mut buf = [0u8; 128];
    if let Some(mut f) = NullTerminatedFormatter::new(&mut buf) {
        // A message too long is cut where it no longer fits.
        let _ = f.write_fmt(msg);
    }
    // SAFETY: the device is live; the formatter keeps `buf` NUL-terminated.
    unsafe { bindings::rrxe_ibdev_err_ratelimited(dev.as_raw(), buf.as_ptr().cast()) };
}

/// The driver's completion queues and shared receive queue a new QP's
/// `ib_qp_init_attr` names (the core holds a use count on each while the
/// QP exists).
pub struct QpLinks<T: QpDriver> {
    /// Send completion queue.
    pub send_cq: Option<Arc<T::Cq>>,
    /// Receive completion queue.
    pub recv_cq: Option<Arc<T::Cq>>,
    /// Shared receive queue.
    pub srq: Option<Arc<T::Srq>>,
}

/// A driver's queue pairs.
pub trait QpDriver: IbDriver + CqDriver + SrqDriver {
    /// The driver's state of a QP.
    type Qp: Send + Sync + 'static;

    /// Creates a QP: checks `init` and `udata` (`None` for a kernel user,
    /// whose command runs in user context `uctx`), sets the QP number,
    /// writes the granted sizes to `init.cap`.
    fn create_qp(
        dev: &Device<Self>,
        qp: &mut NewQp<'_>,
        init: &mut QpInitAttr,
        links: QpLinks<Self>,
        udata: Option<&UData<'_>>,
        uctx: Option<&UserContext<'_>>,
    ) -> Result<Arc<Self::Qp>>;

    /// Modifies the attributes in `mask` (`IB_QP_*`).
    fn modify_qp(
        dev: &Device<Self>,
        qp: ArcBorrow<'_, Self::Qp>,
        attr: &QpAttr,
        mask: u32,
        udata: Option<&UData<'_>>,
    ) -> Result;

    /// Reports the attributes (`attr` and `init` are as the caller passed
    /// them; `init`'s handler, context, CQs and SRQ are already the core's).
    fn query_qp(
        dev: &Device<Self>,
        qp: ArcBorrow<'_, Self::Qp>,
        attr: &mut QpAttr,
        mask: u32,
        init: &mut QpInitAttr,
    ) -> Result;

    /// Whether the QP may be destroyed now, and if so takes it out of the
    /// driver's lookups. A refusal leaves the QP as it was.
    fn destroy_qp(dev: &Device<Self>, qp: ArcBorrow<'_, Self::Qp>) -> Result;

    /// Posts send work requests (a kernel user's list; an empty list is a
    /// user QP's doorbell).
    fn post_send(
        dev: &Device<Self>,
        qp: ArcBorrow<'_, Self::Qp>,
        wrs: SendWrs<'_>,
    ) -> core::result::Result<(), PostError>;

    /// Posts receive work requests of a kernel user.
    fn post_recv(
        dev: &Device<Self>,
        qp: ArcBorrow<'_, Self::Qp>,
        wrs: RecvWrs<'_>,
    ) -> core::result::Result<(), PostError>;
}

/// Installs the queue pair ops of driver `T`.
pub fn install<T: QpDriver>(ops: &mut bindings::ib_device_ops) {
    ops.create_qp = Some(Adapter::<T>::create_qp_cb);
    ops.modify_qp = Some(Adapter::<T>::modify_qp_cb);
    ops.query_qp = Some(Adapter::<T>::query_qp_cb);
    ops.destroy_qp = Some(Adapter::<T>::destroy_qp_cb);
    ops.post_send = Some(Adapter::<T>::post_send_cb);
    ops.post_recv = Some(Adapter::<T>::post_recv_cb);
    ops.size_ib_qp = core::mem::size_of::<QpObject>();
}

/// A QP as the core allocates it for this project (`size_ib_qp` bytes,
/// zeroed): the [`ObjectBox`] (the core's `ib_qp` first, then the driver's
/// state), then whether a [`ReleaseMark`] of it is still alive.
#[repr(C)]
struct QpObject {
    obj: ObjectBox<bindings::ib_qp>,
    /// 1 from [`NewQp::release_mark`] until the mark is dropped.
    pending: AtomicU8,
}

impl QpObject {
    /// The release flag of the QP whose `ib_qp` is `qp`.
    ///
    /// # Safety
    ///
    /// `qp` is the start of a `QpObject` (one this module's ops were given
    /// by the core) that stays allocated for `'a`.
    unsafe fn pending<'a>(qp: *mut bindings::ib_qp) -> &'a AtomicU8 {
        // SAFETY: the caller's promise; the flag is only ever accessed
        // atomically.
        unsafe { &(*qp.cast::<QpObject>()).pending }
    }
}

/// Dropped with the driver's QP state (its last field, see
/// [`NewQp::release_mark`]): tells the destroy that waits for it that the
/// state no longer uses the core's `ib_qp`.
///
/// # Invariants
///
/// Points to the `pending` flag of a live [`QpObject`], set, which nothing
/// else clears; the object is freed only after the flag is seen clear.
pub struct ReleaseMark(*mut u8);

// SAFETY: the flag is written atomically, from any thread.
unsafe impl Send for ReleaseMark {}
// SAFETY: a shared mark gives access to nothing.
unsafe impl Sync for ReleaseMark {}

impl Drop for ReleaseMark {
    fn drop(&mut self) {
        // SAFETY: the flag is live until it is seen clear (type invariant),
        // and the call does not touch it after clearing it.
        unsafe { bindings::rrxe_set_and_wake_var_u8(self.0, 0) };
    }
}

struct Adapter<T>(PhantomData<T>);

impl<T: QpDriver> Adapter<T> {
    /// # Safety
    ///
    /// `qp` is a QP of a live device of driver `T`.
    unsafe fn dev<'a>(qp: *mut bindings::ib_qp) -> &'a Device<T> {
        // SAFETY: the caller's promise; the device outlives its QPs.
        unsafe { Device::from_raw((*qp).device) }
    }

    /// # Safety
    ///
    /// Called by the core with a new QP object of `size_ib_qp` bytes it
    /// filled, a valid init attribute and a valid or NULL udata.
    unsafe extern "C" fn create_qp_cb(
        qp: *mut bindings::ib_qp,
        init: *mut bindings::ib_qp_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section; a create's udata is the
        // driver udata of the command's bundle.
        let (dev, init, uctx, udata) = unsafe {
            (
                Self::dev(qp),
                &mut *init,
                UserContext::from_udata(udata),
                UData::from_raw(udata),
            )
        };
        // SAFETY: the CQs and SRQ of a create are NULL or objects of this
        // driver's device, created by its ops (so with their state
        // attached), on which the core holds a use count.
        let links = unsafe {
            QpLinks::<T> {
                send_cq: driver_cq::<T>(init.send_cq),
                recv_cq: driver_cq::<T>(init.recv_cq),
                srq: (!init.srq.is_null())
                    .then(|| ObjectBox::<bindings::ib_srq>::borrow::<T::Srq>(init.srq).into()),
            }
        };
        // INVARIANT: the create op has the new object to itself.
        let mut new = NewQp {
            raw: qp,
            _p: PhantomData,
        };
        match T::create_qp(dev, &mut new, init, links, udata.as_ref(), uctx.as_ref()) {
            Ok(state) => {
                // SAFETY: a new object of `size_ib_qp` bytes, nothing
                // attached, ours during the create op; always `T::Qp`.
                unsafe { ObjectBox::<bindings::ib_qp>::attach(qp, state) };
                0
            }
            Err(e) => e.to_errno(),
        }
    }

    /// # Safety
    ///
    /// Called by the core on a created QP of driver `T` (not being
    /// destroyed) with a valid attribute and a valid or NULL udata.
    unsafe extern "C" fn modify_qp_cb(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        mask: ffi::c_int,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section: a `T::Qp` is attached
        // for the op.
        let (dev, state, attr, udata) = unsafe {
            (
                Self::dev(qp),
                ObjectBox::<bindings::ib_qp>::borrow::<T::Qp>(qp),
                &*attr,
                UData::from_raw(udata),
            )
        };
        super::op_result(T::modify_qp(dev, state, attr, mask as u32, udata.as_ref()))
    }

    /// # Safety
    ///
    /// Called by the core on a created QP of driver `T` (not being
    /// destroyed) with valid attribute buffers.
    unsafe extern "C" fn query_qp_cb(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        mask: ffi::c_int,
        init: *mut bindings::ib_qp_init_attr,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        let (dev, state, ib, attr, init) = unsafe {
            (
                Self::dev(qp),
                ObjectBox::<bindings::ib_qp>::borrow::<T::Qp>(qp),
                &*qp,
                &mut *attr,
                &mut *init,
            )
        };
        init.event_handler = ib.event_handler;
        init.qp_context = ib.qp_context;
        init.send_cq = ib.send_cq;
        init.recv_cq = ib.recv_cq;
        init.srq = ib.srq;
        super::op_result(T::query_qp(dev, state, attr, mask as u32, init))
    }

    /// # Safety
    ///
    /// Called by the core on a created QP of driver `T`, as its last op on
    /// it when it succeeds.
    unsafe extern "C" fn destroy_qp_cb(
        qp: *mut bindings::ib_qp,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        let (dev, state) = unsafe {
            (
                Self::dev(qp),
                ObjectBox::<bindings::ib_qp>::borrow::<T::Qp>(qp),
            )
        };
        if let Err(e) = T::destroy_qp(dev, state) {
            return e.to_errno();
        }
        // SAFETY: the destroy op has the object to itself; the state is a
        // `T::Qp`.
        if let Some(state) = unsafe { ObjectBox::<bindings::ib_qp>::detach::<T::Qp>(qp) } {
            drop(state);
            // SAFETY: the `ib_qp` is the start of a `QpObject`, which the
            // core frees after this returns.
            let pending = unsafe { QpObject::pending(qp) };
            // Until the last reference to the state, and with it its mark,
            // is gone.
            wait::wait_while(pending, 1);
        }
        0
    }

    /// # Safety
    ///
    /// Called by the core on a created QP of driver `T` with a valid (or
    /// NULL) list and a valid `bad_wr`.
    unsafe extern "C" fn post_send_cb(
        qp: *mut bindings::ib_qp,
        wr: *const bindings::ib_send_wr,
        bad_wr: *mut *const bindings::ib_send_wr,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        let (dev, state, qp_type) = unsafe {
            (
                Self::dev(qp),
                ObjectBox::<bindings::ib_qp>::borrow::<T::Qp>(qp),
                (*qp).qp_type,
            )
        };
        let wrs = SendWrs {
            next: wr,
            datagram: matches!(
                qp_type,
                bindings::ib_qp_type_IB_QPT_UD | bindings::ib_qp_type_IB_QPT_GSI
            ),
            _p: PhantomData,
        };
        match T::post_send(dev, state, wrs) {
            Ok(()) => 0,
            Err(e) => {
                let mut bad = wr;
                for _ in 0..e.index {
                    // SAFETY: the list is valid; the index is within it or
                    // its end (NULL).
                    match unsafe { bad.as_ref() } {
                        Some(w) => bad = w.next,
                        None => break,
                    }
                }
                // SAFETY: `bad_wr` is valid for writes.
                unsafe { bad_wr.write(bad) };
                e.err.to_errno()
            }
        }
    }

    /// # Safety
    ///
    /// Called by the core on a created QP of driver `T` with a valid list
    /// and a valid `bad_wr`.
    unsafe extern "C" fn post_recv_cb(
        qp: *mut bindings::ib_qp,
        wr: *const bindings::ib_recv_wr,
        bad_wr: *mut *const bindings::ib_recv_wr,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        let (dev, state) = unsafe {
            (
                Self::dev(qp),
                ObjectBox::<bindings::ib_qp>::borrow::<T::Qp>(qp),
            )
        };
        let wrs = RecvWrs {
            next: wr,
            _p: PhantomData,
        };
        match T::post_recv(dev, state, wrs) {
            Ok(()) => 0,
            Err(e) => {
                let mut bad = wr;
                for _ in 0..e.index {
                    // SAFETY: as in `post_send_cb`.
                    match unsafe { bad.as_ref() } {
                        Some(w) => bad = w.next,
                        None => break,
                    }
                }
                // SAFETY: `bad_wr` is valid for writes.
                unsafe { bad_wr.write(bad) };
                e.err.to_errno()
            }
        }
    }
}
