// SPDX-License-Identifier: GPL-2.0

//! The RDMA core's ops for completion queues (`struct ib_cq`).
//!
//! A driver implements [`CqDriver`]; [`install`] puts trampolines in the
//! device's ops. The core allocates the `ib_cq` as an [`ObjectBox`] holding
//! the driver's `Arc<T::Cq>`. The driver's completion queue keeps a
//! [`CqCore`] to call the consumer's completion and event handlers.

use super::{
    bindings,
    ib_device::{
        Device,
        IbDriver, //
    },
    mmap::UserVerb,
    object::{
        CoreObject,
        ObjectBox, //
    },
};
use core::marker::PhantomData;
use kernel::{
    ffi,
    prelude::*,
    sync::Arc,
    transmute::{
        AsBytes,
        FromBytes, //
    },
};

/// The attributes of a completion queue being created.
pub type CqInitAttr = bindings::ib_cq_init_attr;

/// A work completion, as the transport reports it; the completion queue
/// stores it as user space or a kernel consumer reads it.
#[derive(Clone, Copy, Default)]
pub struct Completion {
    /// The work request's id.
    pub wr_id: u64,
    /// `enum ib_wc_status`.
    pub status: u32,
    /// `enum ib_wc_opcode`.
    pub opcode: u32,
    /// Vendor error.
    pub vendor_err: u32,
    /// Bytes transferred.
    pub byte_len: u32,
    /// The local QP's number (user completion queues).
    pub qp_num: u32,
    /// The local QP (kernel completion queues; may be NULL).
    pub qp: *mut bindings::ib_qp,
    /// Immediate data (network order, as received) or invalidated rkey.
    pub ex: u32,
    /// Source QP (UD).
    pub src_qp: u32,
    /// `IB_WC_*` flags.
    pub wc_flags: u32,
    /// P_Key index.
    pub pkey_index: u16,
    /// Source LID.
    pub slid: u16,
    /// Service level.
    pub sl: u8,
    /// DLID path bits.
    pub dlid_path_bits: u8,
    /// Port.
    pub port_num: u8,
    /// Source MAC (UD, kernel consumers).
    pub smac: [u8; 6],
    /// VLAN id (kernel consumers).
    pub vlan_id: u16,
    /// `RDMA_NETWORK_*` of the received packet (kernel consumers).
    pub network_hdr_type: u8,
}

/// `struct ib_uverbs_wc` (what a user completion queue holds), with the
/// union as an integer.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct UverbsWc {
    wr_id: u64,
    status: u32,
    opcode: u32,
    vendor_err: u32,
    byte_len: u32,
    ex: u32,
    qp_num: u32,
    src_qp: u32,
    wc_flags: u32,
    pkey_index: u16,
    slid: u16,
    sl: u8,
    dlid_path_bits: u8,
    port_num: u8,
    reserved: u8,
}

const _: () = {
    use core::mem::{
        offset_of,
        size_of, //
    };
    type U = bindings::ib_uverbs_wc;
    assert!(size_of::<UverbsWc>() == size_of::<U>());
    assert!(offset_of!(UverbsWc, ex) == offset_of!(U, ex));
    assert!(offset_of!(UverbsWc, qp_num) == offset_of!(U, qp_num));
    assert!(offset_of!(UverbsWc, wc_flags) == offset_of!(U, wc_flags));
    assert!(offset_of!(UverbsWc, pkey_index) == offset_of!(U, pkey_index));
    assert!(offset_of!(UverbsWc, sl) == offset_of!(U, sl));
    assert!(offset_of!(UverbsWc, reserved) == offset_of!(U, reserved));
};

// SAFETY: integers only, no padding (the size equals the sum of the
// fields' sizes, 48 bytes, checked above through the C layout).
unsafe impl AsBytes for UverbsWc {}
// SAFETY: integers only.
unsafe impl FromBytes for UverbsWc {}

impl From<&Completion> for UverbsWc {
    fn from(c: &Completion) -> Self {
        Self {
            wr_id: c.wr_id,
            status: c.status,
            opcode: c.opcode,
            vendor_err: c.vendor_err,
            byte_len: c.byte_len,
            ex: c.ex,
            qp_num: c.qp_num,
            src_qp: c.src_qp,
            wc_flags: c.wc_flags,
            pkey_index: c.pkey_index,
            slid: c.slid,
            sl: c.sl,
            dlid_path_bits: c.dlid_path_bits,
            port_num: c.port_num,
            reserved: 0,
        }
    }
}

/// `struct ib_wc` (what a kernel completion queue holds and `poll_cq`
/// returns).
#[repr(transparent)]
pub struct Wc(bindings::ib_wc);

// SAFETY: integers, raw pointers and unions of them: any bytes are valid.
unsafe impl FromBytes for Wc {}

impl From<&Completion> for Wc {
    fn from(c: &Completion) -> Self {
        // SAFETY: all zeroes is a valid `ib_wc` (integers, pointers, unions).
        let mut wc: bindings::ib_wc = unsafe { core::mem::zeroed() };
        // The unions' storage fields: `wr_id` and `invalidate_rkey`/`imm_data`.
        wc.__bindgen_anon_1.bindgen_union_field = c.wr_id;
        wc.status = c.status;
        wc.opcode = c.opcode;
        wc.vendor_err = c.vendor_err;
        wc.byte_len = c.byte_len;
        wc.qp = c.qp;
        wc.ex.bindgen_union_field = c.ex;
        wc.src_qp = c.src_qp;
        wc.slid = c.slid.into();
        wc.wc_flags = c.wc_flags as ffi::c_int;
        wc.pkey_index = c.pkey_index;
        wc.sl = c.sl;
        wc.dlid_path_bits = c.dlid_path_bits;
        wc.port_num = c.port_num.into();
        wc.smac = c.smac;
        wc.vlan_id = c.vlan_id;
        wc.network_hdr_type = c.network_hdr_type;
        Self(wc)
    }
}

/// The caller's array of work completions `poll_cq` fills.
///
/// # Invariants
///
/// `ptr` is valid for writes of `cap` `ib_wc`s; the first `len` are written.
pub struct WcArray<'a> {
    ptr: *mut bindings::ib_wc,
    cap: usize,
    len: usize,
    _a: PhantomData<&'a mut [bindings::ib_wc]>,
}

impl WcArray<'_> {
    /// Whether there is no room left.
    pub fn is_full(&self) -> bool {
        self.len >= self.cap
    }

    /// Completions written.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether none was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `wc`; `false` if there is no room.
    pub fn push(&mut self, wc: Wc) -> bool {
        if self.is_full() {
            return false;
        }
        // SAFETY: `len < cap`: in the caller's array (type invariant).
        unsafe { self.ptr.add(self.len).write(wc.0) };
        self.len += 1;
        true
    }
}

/// The core's `ib_cq` of a driver's completion queue: what the driver needs
/// of it to call the consumer.
///
/// Valid until the destroy op returns: the driver must not call it after
/// its destroy (the C driver's `rxe_cleanup` waits for the same).
pub struct CqCore(CoreObject<bindings::ib_cq>);

impl CqCore {
    /// Calls the consumer's completion handler (`comp_handler`).
    pub fn comp_handler(&self) {
        let cq = self.0.as_ptr();
        // SAFETY: the `ib_cq` is live until destroy (type docs); the core set
        // the handler and context before create and never changes them.
        unsafe {
            if let Some(h) = (*cq).comp_handler {
                h(cq, (*cq).cq_context);
            }
        }
    }

    /// Calls the consumer's event handler, if any, with `event`
    /// (`enum ib_event_type`, e.g. `IB_EVENT_CQ_ERR`).
    pub fn event(&self, event: u32) {
        let cq = self.0.as_ptr();
        // SAFETY: as in `comp_handler`; all zeroes is a valid `ib_event`.
        unsafe {
            if let Some(h) = (*cq).event_handler {
                let mut ev: bindings::ib_event = core::mem::zeroed();
                ev.device = (*cq).device;
                *ev.element.cq.as_mut() = cq;
                ev.event = event;
                h(&mut ev, (*cq).cq_context);
            }
        }
    }
}

/// A driver's completion queues.
pub trait CqDriver: IbDriver {
    /// The driver's state of a completion queue.
    type Cq: Send + Sync + 'static;

    /// Creates a completion queue for `attr`, from user space if `user` is
    /// given (the driver writes its response); returns it and the number of
    /// entries it holds (`ib_cq.cqe`).
    fn create_cq(
        dev: &Device<Self>,
        core: CqCore,
        attr: &CqInitAttr,
        user: Option<UserVerb<'_>>,
    ) -> Result<(Arc<Self::Cq>, u32)>;
    /// Resizes to at least `cqe` entries; returns the new number.
    fn resize_cq(
        dev: &Device<Self>,
        cq: &Self::Cq,
        cqe: u32,
        user: Option<UserVerb<'_>>,
    ) -> Result<u32>;
    /// Destroys it: once this returns, the driver no longer uses its
    /// [`CqCore`].
    fn destroy_cq(dev: &Device<Self>, cq: Arc<Self::Cq>);
    /// Moves completions to `wc` (a kernel consumer's `poll_cq`).
    fn poll_cq(cq: &Self::Cq, wc: &mut WcArray<'_>);
    /// Completions ready, at most `max`.
    fn peek_cq(cq: &Self::Cq, max: u32) -> u32;
    /// Arms the completion handler (`IB_CQ_SOLICITED`/`IB_CQ_NEXT_COMP`);
    /// with `IB_CQ_REPORT_MISSED_EVENTS`, whether completions are waiting.
    fn req_notify_cq(cq: &Self::Cq, flags: u32) -> bool;
}

/// The driver's state of a completion queue the core passes to another
/// verb (the send and receive CQs of `create_qp`), with a reference held.
///
/// # Safety
///
/// `ibcq` is NULL or a completion queue of driver `T` that the core keeps
/// alive for the call (it holds a use count on it).
pub unsafe fn driver_cq<T: CqDriver>(ibcq: *mut bindings::ib_cq) -> Option<Arc<T::Cq>> {
    if ibcq.is_null() {
        return None;
    }
    // SAFETY: the caller's promise: created by `create_cb`, so attached.
    Some(unsafe { ObjectBox::borrow::<T::Cq>(ibcq) }.into())
}

/// Installs the completion queue ops of driver `T`.
pub fn install<T: CqDriver>(ops: &mut bindings::ib_device_ops) {
    ops.create_cq = Some(Ops::<T>::create_cb);
    ops.destroy_cq = Some(Ops::<T>::destroy_cb);
    ops.resize_user_cq = Some(Ops::<T>::resize_cb);
    ops.poll_cq = Some(Ops::<T>::poll_cb);
    ops.peek_cq = Some(Ops::<T>::peek_cb);
    ops.req_notify_cq = Some(Ops::<T>::req_notify_cb);
    ops.size_ib_cq = ObjectBox::<bindings::ib_cq>::SIZE;
}

struct Ops<T>(PhantomData<T>);

impl<T: CqDriver> Ops<T> {
    /// # Safety
    ///
    /// Called by the core with a fresh `ib_cq` (of `size_ib_cq` bytes) of a
    /// live device, valid attributes and a NULL or valid attribute bundle.
    unsafe extern "C" fn create_cb(
        ibcq: *mut bindings::ib_cq,
        attr: *const bindings::ib_cq_init_attr,
        attrs: *mut bindings::uverbs_attr_bundle,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section; a kernel caller passes
        // no bundle, a user command its bundle whose driver udata is valid.
        let (dev, attr, user) = unsafe {
            let udata = if attrs.is_null() {
                core::ptr::null_mut()
            } else {
                &raw mut (*attrs).__bindgen_anon_1.hdr.driver_udata
            };
            (
                Device::<T>::from_raw((*ibcq).device),
                &*attr,
                UserVerb::from_raw(udata),
            )
        };
        let core = CqCore(CoreObject::new(ibcq));
        super::op_result(T::create_cq(dev, core, attr, user).map(|(cq, cqe)| {
            // SAFETY: the create op has the new object to itself.
            unsafe {
                (*ibcq).cqe = cqe as ffi::c_int;
                ObjectBox::attach(ibcq, cq);
            }
        }))
    }

    /// # Safety
    ///
    /// Called by the core with a CQ this driver created, once.
    unsafe extern "C" fn destroy_cb(
        ibcq: *mut bindings::ib_cq,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        let (dev, cq) = unsafe {
            (
                Device::<T>::from_raw((*ibcq).device),
                ObjectBox::detach::<T::Cq>(ibcq),
            )
        };
        if let Some(cq) = cq {
            T::destroy_cq(dev, cq);
        }
        0
    }

    /// # Safety
    ///
    /// Called by the core with a CQ this driver created and a valid udata.
    unsafe extern "C" fn resize_cb(
        ibcq: *mut bindings::ib_cq,
        cqe: ffi::c_uint,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section: the CQ stays attached
        // during the op; `udata` is a uverbs command's driver udata or NULL.
        let (dev, cq, user) = unsafe {
            (
                Device::<T>::from_raw((*ibcq).device),
                ObjectBox::borrow::<T::Cq>(ibcq),
                UserVerb::from_raw(udata),
            )
        };
        super::op_result(T::resize_cq(dev, &cq, cqe, user).map(|cqe| {
            // SAFETY: the core serialises ops on an object with its destroy
            // and resize (the uobject's write lock).
            unsafe { (*ibcq).cqe = cqe as ffi::c_int };
        }))
    }

    /// # Safety
    ///
    /// Called by the core with a CQ this driver created and room for
    /// `num` completions at `wc`.
    unsafe extern "C" fn poll_cb(
        ibcq: *mut bindings::ib_cq,
        num: ffi::c_int,
        wc: *mut bindings::ib_wc,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        let cq = unsafe { ObjectBox::borrow::<T::Cq>(ibcq) };
        // INVARIANT: the caller's array has room for `num` entries.
        let mut out = WcArray {
            ptr: wc,
            cap: usize::try_from(num).unwrap_or(0),
            len: 0,
            _a: PhantomData,
        };
        T::poll_cq(&cq, &mut out);
        out.len as ffi::c_int
    }

    /// # Safety
    ///
    /// Called by the core with a CQ this driver created.
    unsafe extern "C" fn peek_cb(ibcq: *mut bindings::ib_cq, wc_cnt: ffi::c_int) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        let cq = unsafe { ObjectBox::borrow::<T::Cq>(ibcq) };
        T::peek_cq(&cq, u32::try_from(wc_cnt).unwrap_or(0)) as ffi::c_int
    }

    /// # Safety
    ///
    /// Called by the core with a CQ this driver created.
    unsafe extern "C" fn req_notify_cb(
        ibcq: *mut bindings::ib_cq,
        flags: bindings::ib_cq_notify_flags,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        let cq = unsafe { ObjectBox::borrow::<T::Cq>(ibcq) };
        T::req_notify_cq(&cq, flags).into()
    }
}
