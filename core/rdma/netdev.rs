// SPDX-License-Identifier: GPL-2.0

//! Network devices as the RDMA code sees them.

use super::bindings;
use kernel::{
    str::CStrExt,
    types::Opaque, //
};

/// A `struct net_device` borrowed from the kernel.
///
/// # Invariants
///
/// The wrapped `net_device` is valid (registered or being unregistered, with
/// a reference held by whoever handed it out) for as long as `&NetDevice` is.
#[repr(transparent)]
pub struct NetDevice(Opaque<bindings::net_device>);

impl NetDevice {
    /// Borrows a `net_device` the caller holds.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a valid `net_device` that stays valid for `'a`.
    pub unsafe fn from_raw<'a>(ptr: *mut bindings::net_device) -> &'a Self {
        // SAFETY: `NetDevice` is a transparent wrapper of `net_device`, and the
        // caller guarantees validity for `'a`.
        unsafe { &*ptr.cast() }
    }

    /// The raw `net_device` pointer, for calls into C.
    pub fn as_raw(&self) -> *mut bindings::net_device {
        self.0.get()
    }

    /// The interface name (`eth0`).
    pub fn name(&self) -> &kernel::str::CStr {
        // SAFETY: `name` is a NUL-terminated array inside the valid device
        // (type invariant); it changes only under RTNL on rename, and a torn
        // read of a name is harmless for the messages it is used in.
        unsafe { kernel::str::CStr::from_char_ptr(bindings::rrxe_netdev_name(self.as_raw())) }
    }

    /// The hardware type (`ARPHRD_*`).
    pub fn hw_type(&self) -> u16 {
        // SAFETY: the device is valid (type invariant).
        unsafe { bindings::rrxe_netdev_type(self.as_raw()) }
    }

    /// Whether this is an 802.1Q VLAN device.
    pub fn is_vlan(&self) -> bool {
        // SAFETY: the device is valid (type invariant).
        unsafe { bindings::rrxe_netdev_is_vlan(self.as_raw()) }
    }
}
