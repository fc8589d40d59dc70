// SPDX-License-Identifier: GPL-2.0

//! RDMA netlink link types: `rdma link add NAME type TYPE netdev DEV`.
//!
//! The RDMA core's `nldev_newlink` looks a link type up by name among the
//! registered `struct rdma_link_ops` (loading `rdma-link-TYPE` if none is) and
//! calls its `newlink` with the new device's name and the netdev, holding a
//! reference on the netdev for the duration of the call.

use super::{
    bindings,
    netdev::NetDevice, //
};
use core::marker::PhantomData;
use kernel::{
    ffi,
    prelude::*,
    types::Opaque, //
};

/// A link type's behaviour.
pub trait LinkOps: Sync + 'static {
    /// The type name given to `rdma link add ... type NAME`.
    const TYPE: &'static CStr;

    /// Creates an RDMA device named `ibdev_name` bound to `ndev`.
    fn newlink(ibdev_name: &CStr, ndev: &NetDevice) -> Result;
}

/// A registered link type; dropping it unregisters the type.
///
/// # Invariants
///
/// `ops` is registered with `rdma_link_register()` from construction until
/// drop, and is pinned for that whole time (the core links it into a list).
#[pin_data(PinnedDrop)]
pub struct LinkRegistration<T: LinkOps> {
    #[pin]
    ops: Opaque<bindings::rdma_link_ops>,
    _t: PhantomData<T>,
}

// SAFETY: the registration is only touched by register/unregister, which the
// RDMA core serialises with its own lock; it may be dropped on any thread.
unsafe impl<T: LinkOps> Send for LinkRegistration<T> {}
// SAFETY: `&LinkRegistration` exposes no methods that touch the ops.
unsafe impl<T: LinkOps> Sync for LinkRegistration<T> {}

impl<T: LinkOps> LinkRegistration<T> {
    /// Registers link type `T`.
    pub fn register() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            ops <- Opaque::try_ffi_init(move |slot: *mut bindings::rdma_link_ops| {
                let mut ops: bindings::rdma_link_ops = pin_init::zeroed();
                ops.type_ = T::TYPE.as_char_ptr();
                ops.newlink = Some(Self::newlink_callback);
                // SAFETY: `slot` is valid for writes and pinned; it is
                // unregistered in `drop` before its memory goes away.
                // INVARIANT: registered from here on.
                unsafe {
                    slot.write(ops);
                    bindings::rdma_link_register(slot);
                }
                Ok::<(), Error>(())
            }),
            _t: PhantomData,
        })
    }

    /// # Safety
    ///
    /// Called by the RDMA core with a NUL-terminated name and a netdev it
    /// holds a reference on for the duration of the call.
    unsafe extern "C" fn newlink_callback(
        ibdev_name: *const ffi::c_char,
        ndev: *mut bindings::net_device,
    ) -> ffi::c_int {
        // SAFETY: the core passes a NUL-terminated buffer valid for the call.
        let name = unsafe { CStr::from_char_ptr(ibdev_name) };
        // SAFETY: the core holds a reference on `ndev` for the call.
        let ndev = unsafe { NetDevice::from_raw(ndev) };
        super::op_result(T::newlink(name, ndev))
    }
}

#[pinned_drop]
impl<T: LinkOps> PinnedDrop for LinkRegistration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: registered since construction (type invariant).
        unsafe { bindings::rdma_link_unregister(self.ops.get()) };
    }
}
