// SPDX-License-Identifier: GPL-2.0

//! The link between the RDMA core's verbs objects and a driver's own state.
//!
//! The core allocates most verbs objects itself (`rdma_zalloc_drv_obj`:
//! `size_ib_cq` bytes and so on, with the core's `struct ib_cq` first) and
//! frees them after the driver's destroy op returns. This driver's objects
//! are that memory as an [`ObjectBox`]: the core's struct, then a pointer to
//! the driver's state, an `Arc<D>` made foreign. The driver state is
//! reference counted so that the transport can hold an object while user
//! space destroys it; the driver's destroy op takes the `Arc` back
//! ([`ObjectBox::detach`]) and must make sure that no reference it handed
//! out still uses the core's struct once it returns (the C driver's
//! `rxe_cleanup` waits for the same).
//!
//! Memory regions are the exception: the driver allocates them and returns
//! the `ib_mr`; their module allocates an `ObjectBox<ib_mr>` itself.

use core::marker::PhantomData;
use kernel::{
    ffi,
    sync::{
        Arc,
        ArcBorrow, //
    },
    types::ForeignOwnable,
};

/// A verbs object as allocated for this project: the core's `I` (`ib_cq`,
/// `ib_qp`, ...) at offset 0, as `INIT_RDMA_OBJ_SIZE` requires, then the
/// driver's state.
#[repr(C)]
pub struct ObjectBox<I> {
    ib: I,
    /// An `Arc<D>` made foreign, or NULL before `attach`/after `detach`.
    drv: *mut ffi::c_void,
}

impl<I> ObjectBox<I> {
    /// The size to tell the core (`ib_device_ops.size_ib_*`).
    pub const SIZE: usize = core::mem::size_of::<Self>();

    /// # Safety
    ///
    /// `raw` points to the core struct at the start of an `ObjectBox<I>`
    /// (the core allocated `SIZE` bytes for it), valid for `'a`.
    unsafe fn from_raw<'a>(raw: *mut I) -> &'a mut Self {
        // SAFETY: `ib` is at offset 0 of the `repr(C)` box.
        unsafe { &mut *raw.cast::<Self>() }
    }

    /// Attaches the driver's state to the object at `raw`.
    ///
    /// # Safety
    ///
    /// `raw` is as in [`ObjectBox::from_raw`], with nothing attached, and
    /// the caller has exclusive access (the create op); every later
    /// [`ObjectBox::borrow`] and [`ObjectBox::detach`] uses the same `D`.
    pub unsafe fn attach<D: Send + Sync + 'static>(raw: *mut I, state: Arc<D>) {
        // SAFETY: the caller's promise.
        let b = unsafe { Self::from_raw(raw) };
        b.drv = state.into_foreign();
    }

    /// The driver's state of the object at `raw`.
    ///
    /// # Safety
    ///
    /// `raw` is as in [`ObjectBox::from_raw`], with a `D` attached that
    /// stays attached for `'a` (an op of the object other than its destroy).
    pub unsafe fn borrow<'a, D: Send + Sync + 'static>(raw: *mut I) -> ArcBorrow<'a, D> {
        // SAFETY: the caller's promise: `drv` is an attached `Arc<D>`, which
        // nothing detaches during `'a`.
        unsafe { <Arc<D> as ForeignOwnable>::borrow((*raw.cast::<Self>()).drv) }
    }

    /// Takes the driver's state back from the object at `raw`, if attached.
    ///
    /// # Safety
    ///
    /// `raw` is as in [`ObjectBox::from_raw`]; the caller has exclusive
    /// access (the create op's error path, or the destroy op).
    pub unsafe fn detach<D: Send + Sync + 'static>(raw: *mut I) -> Option<Arc<D>> {
        // SAFETY: the caller's promise.
        let b = unsafe { Self::from_raw(raw) };
        let p = core::mem::take(&mut b.drv);
        // SAFETY: a non-NULL `drv` is an `Arc<D>` made foreign by `attach`.
        unsafe { <Arc<D> as ForeignOwnable>::try_from_foreign(p) }
    }
}

/// A raw pointer to a core object that a driver's state may keep (to
/// dispatch events or completions, or to find its device), sendable across
/// threads. Valid while the object is attached (see the module docs).
pub struct CoreObject<I>(*mut I, PhantomData<I>);

// SAFETY: a plain pointer to a core object that the core keeps alive until
// the destroy op returns, which waits for the driver's users (module docs).
unsafe impl<I> Send for CoreObject<I> {}
// SAFETY: as above; it is only read.
unsafe impl<I> Sync for CoreObject<I> {}

impl<I> CoreObject<I> {
    /// Wraps `raw`.
    pub fn new(raw: *mut I) -> Self {
        Self(raw, PhantomData)
    }

    /// The pointer.
    pub fn as_ptr(&self) -> *mut I {
        self.0
    }
}
