// SPDX-License-Identifier: GPL-2.0

//! The RDMA core's ops for memory windows (`struct ib_mw`): allocation and
//! deallocation; binding and invalidation are work requests of the
//! transport.
//!
//! The core allocates a window as an [`ObjectBox<ib_mw>`] of
//! `size_ib_mw` bytes, with its PD and type set, and frees it after
//! `dealloc_mw`.

use super::{
    bindings,
    ib_device::{
        Device,
        IbDriver, //
    },
    mr::PdId,
    object::ObjectBox,
};
use kernel::{
    ffi,
    prelude::*,
    sync::Arc, //
};

/// The type of a memory window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MwType {
    /// Type 1: bound by a verb, valid once allocated.
    Type1,
    /// Type 2: bound by a work request of one QP.
    Type2,
}

/// A driver's memory windows.
pub trait MwDriver: IbDriver {
    /// The driver's state of a window.
    type Mw: Send + Sync + 'static;

    /// A new window of `pd`; returns it and its rkey.
    fn alloc_mw(dev: &Device<Self>, pd: PdId, mw_type: MwType) -> Result<(Arc<Self::Mw>, u32)>;
    /// The window is being deallocated.
    fn dealloc_mw(dev: &Device<Self>, mw: Arc<Self::Mw>);
}

/// Installs the memory window ops of driver `T`.
pub fn install<T: MwDriver>(ops: &mut bindings::ib_device_ops) {
    ops.alloc_mw = Some(alloc_mw_cb::<T>);
    ops.dealloc_mw = Some(dealloc_mw_cb::<T>);
    ops.size_ib_mw = ObjectBox::<bindings::ib_mw>::SIZE;
}

/// # Safety
///
/// Called by the core with a new window (an `ObjectBox<ib_mw>`, device, PD
/// and type set) of a live device of driver `T`.
unsafe extern "C" fn alloc_mw_cb<T: MwDriver>(
    ibmw: *mut bindings::ib_mw,
    _udata: *mut bindings::ib_udata,
) -> ffi::c_int {
    // SAFETY: see the function's safety section.
    let (dev, pd, t) = unsafe {
        (
            Device::<T>::from_raw((*ibmw).device),
            PdId::of((*ibmw).pd),
            (*ibmw).type_,
        )
    };
    let mw_type = match t {
        bindings::ib_mw_type_IB_MW_TYPE_1 => MwType::Type1,
        bindings::ib_mw_type_IB_MW_TYPE_2 => MwType::Type2,
        _ => return EINVAL.to_errno(),
    };
    match T::alloc_mw(dev, pd, mw_type) {
        Ok((state, rkey)) => {
            // SAFETY: the create op has exclusive access to the new window.
            unsafe {
                (*ibmw).rkey = rkey;
                ObjectBox::attach(ibmw, state);
            }
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// # Safety
///
/// Called by the core with a window of driver `T` being destroyed.
unsafe extern "C" fn dealloc_mw_cb<T: MwDriver>(ibmw: *mut bindings::ib_mw) -> ffi::c_int {
    // SAFETY: see the function's safety section: the destroy op has
    // exclusive access.
    let (dev, state) = unsafe {
        (
            Device::<T>::from_raw((*ibmw).device),
            ObjectBox::<bindings::ib_mw>::detach::<T::Mw>(ibmw),
        )
    };
    if let Some(state) = state {
        T::dealloc_mw(dev, state);
    }
    0
}
