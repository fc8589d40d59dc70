// SPDX-License-Identifier: GPL-2.0

//! The RDMA core's ops for shared receive queues (`struct ib_srq`), and
//! the receive work requests kernel consumers post (`struct ib_recv_wr`).
//!
//! A driver implements [`SrqDriver`]; [`install`] puts trampolines in the
//! device's ops. The core allocates the `ib_srq` as an [`ObjectBox`]
//! holding the driver's `Arc<T::Srq>`.

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

/// The attributes of a shared receive queue (`max_wr`, `max_sge`,
/// `srq_limit`).
pub type SrqAttr = bindings::ib_srq_attr;

/// A scatter/gather element: `struct ib_sge`, and the same layout as
/// `struct rxe_sge` in a WQE.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct Sge {
    /// Address.
    pub addr: u64,
    /// Bytes.
    pub length: u32,
    /// Local key.
    pub lkey: u32,
}

const _: () = {
    use core::mem::{
        offset_of,
        size_of, //
    };
    type S = bindings::ib_sge;
    type R = bindings::rxe_sge;
    assert!(size_of::<Sge>() == size_of::<S>() && size_of::<Sge>() == size_of::<R>());
    assert!(offset_of!(Sge, length) == offset_of!(S, length));
    assert!(offset_of!(Sge, lkey) == offset_of!(S, lkey));
    assert!(offset_of!(Sge, length) == offset_of!(R, length));
    assert!(offset_of!(Sge, lkey) == offset_of!(R, lkey));
};

// SAFETY: a `u64` and two `u32`s: no padding, any bits valid.
unsafe impl AsBytes for Sge {}
// SAFETY: as above.
unsafe impl FromBytes for Sge {}

/// Byte offsets in `struct rxe_recv_wqe` (`rdma_user_rxe.h`), the element of
/// receive queues and shared receive queues: a fixed header, then
/// `dma.num_sge` scatter/gather elements.
pub mod recv_wqe {
    use super::bindings::{
        rxe_dma_info,
        rxe_recv_wqe, //
    };
    use core::mem::offset_of;

    const DMA: usize = offset_of!(rxe_recv_wqe, dma);
    /// `wr_id`.
    pub const WR_ID: usize = offset_of!(rxe_recv_wqe, wr_id);
    /// `dma.length`.
    pub const LENGTH: usize = DMA + offset_of!(rxe_dma_info, length);
    /// `dma.resid`.
    pub const RESID: usize = DMA + offset_of!(rxe_dma_info, resid);
    /// `dma.cur_sge`.
    pub const CUR_SGE: usize = DMA + offset_of!(rxe_dma_info, cur_sge);
    /// `dma.num_sge`.
    pub const NUM_SGE: usize = DMA + offset_of!(rxe_dma_info, num_sge);
    /// `dma.sge_offset`.
    pub const SGE_OFFSET: usize = DMA + offset_of!(rxe_dma_info, sge_offset);
    /// `dma.sge[0]`.
    pub const SGE: usize = DMA + offset_of!(rxe_dma_info, __bindgen_anon_1);
    /// The header's size.
    pub const SIZE: usize = core::mem::size_of::<rxe_recv_wqe>();

    const _: () = assert!(SGE == SIZE);
}

/// One receive work request of a kernel consumer.
pub struct RecvWr<'a> {
    wr: &'a bindings::ib_recv_wr,
}

impl RecvWr<'_> {
    /// Its id.
    pub fn wr_id(&self) -> u64 {
        // The union's storage: `wr_id` (or the `wr_cqe` pointer's bits).
        self.wr.__bindgen_anon_1.bindgen_union_field
    }

    /// Its scatter/gather list, `EINVAL` if its length is negative.
    pub fn sges(&self) -> Result<&[Sge]> {
        let n = usize::try_from(self.wr.num_sge).map_err(|_| EINVAL)?;
        if n == 0 {
            return Ok(&[]);
        }
        // SAFETY: the consumer's request points to `num_sge` elements,
        // valid for the post call (`'_`); `Sge` has `ib_sge`'s layout.
        Ok(unsafe { core::slice::from_raw_parts(self.wr.sg_list.cast::<Sge>(), n) })
    }
}

/// The chain of receive work requests of a post call; the driver takes
/// them one by one and, if one fails, the core reports it as `bad_wr`.
///
/// # Invariants
///
/// `cur` is NULL or a valid request of the chain, valid for `'a`.
pub struct RecvWrs<'a> {
    cur: *const bindings::ib_recv_wr,
    _a: PhantomData<&'a bindings::ib_recv_wr>,
}

impl RecvWrs<'_> {
    /// The current request, if any.
    pub fn current(&self) -> Option<RecvWr<'_>> {
        // SAFETY: valid or NULL (type invariant).
        unsafe { self.cur.as_ref() }.map(|wr| RecvWr { wr })
    }

    /// Moves to the next request once the current one is posted.
    pub fn advance(&mut self) {
        if let Some(wr) = self.current() {
            // INVARIANT: the chain's next request, or NULL.
            self.cur = wr.wr.next;
        }
    }
}

/// The core's `ib_srq` of a driver's shared receive queue: what the driver
/// needs of it to call the consumer. Valid until the destroy op returns.
pub struct SrqCore(CoreObject<bindings::ib_srq>);

impl SrqCore {
    /// Whether the consumer has an event handler.
    pub fn has_event_handler(&self) -> bool {
        // SAFETY: the `ib_srq` is live until destroy (type docs); the core
        // set the handler before create.
        unsafe { (*self.0.as_ptr()).event_handler.is_some() }
    }

    /// Calls the consumer's event handler, if any, with `event` (`enum
    /// ib_event_type`, e.g. `IB_EVENT_SRQ_LIMIT_REACHED`).
    pub fn event(&self, event: u32) {
        let srq = self.0.as_ptr();
        // SAFETY: as in `has_event_handler`; all zeroes is a valid
        // `ib_event`.
        unsafe {
            if let Some(h) = (*srq).event_handler {
                let mut ev: bindings::ib_event = core::mem::zeroed();
                ev.device = (*srq).device;
                *ev.element.srq.as_mut() = srq;
                ev.event = event;
                h(&mut ev, (*srq).srq_context);
            }
        }
    }
}

/// A driver's shared receive queues.
pub trait SrqDriver: IbDriver {
    /// The driver's state of a shared receive queue.
    type Srq: Send + Sync + 'static;

    /// Creates a shared receive queue of type `srq_type` (`enum
    /// ib_srq_type`) for `attr`, which it updates to what it made, from
    /// user space if `user` is given (the driver writes its response).
    fn create_srq(
        dev: &Device<Self>,
        core: SrqCore,
        srq_type: u32,
        attr: &mut SrqAttr,
        user: Option<UserVerb<'_>>,
    ) -> Result<Arc<Self::Srq>>;
    /// Modifies the attributes of `mask` (`IB_SRQ_MAX_WR`, `IB_SRQ_LIMIT`).
    fn modify_srq(
        dev: &Device<Self>,
        srq: &Self::Srq,
        attr: &mut SrqAttr,
        mask: u32,
        user: Option<UserVerb<'_>>,
    ) -> Result;
    /// Its attributes.
    fn query_srq(srq: &Self::Srq, attr: &mut SrqAttr) -> Result;
    /// Destroys it: once this returns, the driver no longer uses its
    /// [`SrqCore`].
    fn destroy_srq(dev: &Device<Self>, srq: Arc<Self::Srq>);
    /// Posts the requests of a kernel consumer, stopping at the first that
    /// fails.
    fn post_srq_recv(srq: &Self::Srq, wrs: &mut RecvWrs<'_>) -> Result;
}

/// Reads the provider's `struct rxe_modify_srq_cmd` (`mmap_info_addr`:
/// where to write the `mminfo` of a resized queue), as
/// `ib_copy_validate_udata_in` does (`EINVAL` if too short).
#[inline]
pub fn modify_srq_cmd(user: &UserVerb<'_>) -> Result<u64> {
    let mut cmd = bindings::rxe_modify_srq_cmd::default();
    // SAFETY: the udata is a live command's; `cmd` is writable.
    let ret = unsafe { bindings::rrxe_modify_srq_cmd_in(user.as_raw(), &mut cmd) };
    kernel::error::to_result(ret)?;
    Ok(cmd.mmap_info_addr)
}

/// Installs the shared receive queue ops of driver `T`.
pub fn install<T: SrqDriver>(ops: &mut bindings::ib_device_ops) {
    ops.create_srq = Some(Ops::<T>::create_cb);
    ops.modify_srq = Some(Ops::<T>::modify_cb);
    ops.query_srq = Some(Ops::<T>::query_cb);
    ops.destroy_srq = Some(Ops::<T>::destroy_cb);
    ops.post_srq_recv = Some(Ops::<T>::post_recv_cb);
    ops.size_ib_srq = ObjectBox::<bindings::ib_srq>::SIZE;
}

struct Ops<T>(PhantomData<T>);

impl<T: SrqDriver> Ops<T> {
    /// # Safety
    ///
    /// Called by the core with a fresh `ib_srq` (of `size_ib_srq` bytes) of
    /// a live device, valid attributes and a NULL or uverbs driver udata.
    unsafe extern "C" fn create_cb(
        ibsrq: *mut bindings::ib_srq,
        init: *mut bindings::ib_srq_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        let (dev, init, user) = unsafe {
            (
                Device::<T>::from_raw((*ibsrq).device),
                &mut *init,
                UserVerb::from_raw(udata),
            )
        };
        let core = SrqCore(CoreObject::new(ibsrq));
        super::op_result(
            T::create_srq(dev, core, init.srq_type, &mut init.attr, user).map(|srq| {
                // SAFETY: the create op has the new object to itself.
                unsafe { ObjectBox::attach(ibsrq, srq) }
            }),
        )
    }

    /// # Safety
    ///
    /// Called by the core with an SRQ this driver created, valid attributes
    /// and a NULL or uverbs driver udata.
    unsafe extern "C" fn modify_cb(
        ibsrq: *mut bindings::ib_srq,
        attr: *mut bindings::ib_srq_attr,
        mask: bindings::ib_srq_attr_mask,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        let (dev, srq, attr, user) = unsafe {
            (
                Device::<T>::from_raw((*ibsrq).device),
                ObjectBox::borrow::<T::Srq>(ibsrq),
                &mut *attr,
                UserVerb::from_raw(udata),
            )
        };
        super::op_result(T::modify_srq(dev, &srq, attr, mask, user))
    }

    /// # Safety
    ///
    /// Called by the core with an SRQ this driver created and valid
    /// attributes.
    unsafe extern "C" fn query_cb(
        ibsrq: *mut bindings::ib_srq,
        attr: *mut bindings::ib_srq_attr,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        let (srq, attr) = unsafe { (ObjectBox::borrow::<T::Srq>(ibsrq), &mut *attr) };
        super::op_result(T::query_srq(&srq, attr))
    }

    /// # Safety
    ///
    /// Called by the core with an SRQ this driver created, once.
    unsafe extern "C" fn destroy_cb(
        ibsrq: *mut bindings::ib_srq,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        let (dev, srq) = unsafe {
            (
                Device::<T>::from_raw((*ibsrq).device),
                ObjectBox::detach::<T::Srq>(ibsrq),
            )
        };
        if let Some(srq) = srq {
            T::destroy_srq(dev, srq);
        }
        0
    }

    /// # Safety
    ///
    /// Called by a kernel consumer with an SRQ this driver created and a
    /// valid chain of requests.
    unsafe extern "C" fn post_recv_cb(
        ibsrq: *mut bindings::ib_srq,
        wr: *const bindings::ib_recv_wr,
        bad_wr: *mut *const bindings::ib_recv_wr,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        let srq = unsafe { ObjectBox::borrow::<T::Srq>(ibsrq) };
        // INVARIANT: the consumer's chain, valid for the call.
        let mut wrs = RecvWrs {
            cur: wr,
            _a: PhantomData,
        };
        let ret = T::post_srq_recv(&srq, &mut wrs);
        if ret.is_err() && !bad_wr.is_null() {
            // SAFETY: the consumer passes a writable `bad_wr`.
            unsafe { bad_wr.write(wrs.cur) };
        }
        super::op_result(ret)
    }
}
