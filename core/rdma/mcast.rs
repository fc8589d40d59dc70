// SPDX-License-Identifier: GPL-2.0

//! The RDMA core's ops for multicast groups: attaching a UD QP to a group
//! (by multicast GID) and detaching it, and the netdev's multicast address
//! list the groups are received through.

use super::{
    bindings,
    ib_device::{
        Device,
        IbDriver, //
    },
    netdev::NetDevice,
};
use kernel::{
    ffi,
    prelude::*, //
};

/// A driver's multicast groups.
pub trait McastDriver: IbDriver {
    /// Attaches QP `qpn` to the group `mgid` (`attach_mcast`).
    fn attach_mcast(dev: &Device<Self>, qpn: u32, mgid: &[u8; 16]) -> Result;
    /// Detaches QP `qpn` from the group `mgid` (`detach_mcast`).
    fn detach_mcast(dev: &Device<Self>, qpn: u32, mgid: &[u8; 16]) -> Result;
}

/// Installs the multicast ops of driver `T`.
pub fn install<T: McastDriver>(ops: &mut bindings::ib_device_ops) {
    ops.attach_mcast = Some(attach_mcast_cb::<T>);
    ops.detach_mcast = Some(detach_mcast_cb::<T>);
}

/// The device, QP number and multicast GID of an attach or detach.
///
/// # Safety
///
/// `qp` is a live QP of a live device of driver `T`; `gid` is valid.
unsafe fn args<'a, T: McastDriver>(
    qp: *mut bindings::ib_qp,
    gid: *mut bindings::ib_gid,
) -> (&'a Device<T>, u32, [u8; 16]) {
    // SAFETY: the caller's promise; every bit pattern of the GID union is a
    // valid byte array.
    unsafe {
        (
            Device::<T>::from_raw((*qp).device),
            (*qp).qp_num,
            *(*gid).raw.as_ref(),
        )
    }
}

/// # Safety
///
/// Called by the core with a live QP of a device of driver `T` and a valid
/// GID.
unsafe extern "C" fn attach_mcast_cb<T: McastDriver>(
    qp: *mut bindings::ib_qp,
    gid: *mut bindings::ib_gid,
    _lid: u16,
) -> ffi::c_int {
    // SAFETY: see the function's safety section.
    let (dev, qpn, mgid) = unsafe { args::<T>(qp, gid) };
    super::op_result(T::attach_mcast(dev, qpn, &mgid))
}

/// # Safety
///
/// Called by the core with a live QP of a device of driver `T` and a valid
/// GID.
unsafe extern "C" fn detach_mcast_cb<T: McastDriver>(
    qp: *mut bindings::ib_qp,
    gid: *mut bindings::ib_gid,
    _lid: u16,
) -> ffi::c_int {
    // SAFETY: see the function's safety section.
    let (dev, qpn, mgid) = unsafe { args::<T>(qp, gid) };
    super::op_result(T::detach_mcast(dev, qpn, &mgid))
}

// `#[inline]`: only rdma_rxe links the glue these call.
impl NetDevice {
    /// Adds `mac` to the netdev's multicast addresses (`dev_mc_add`; counted,
    /// may sleep).
    #[inline]
    pub fn mc_add(&self, mac: &[u8; 6]) -> Result {
        // SAFETY: the netdev is valid; `mac` is 6 readable bytes.
        kernel::error::to_result(unsafe { bindings::rrxe_dev_mc_add(self.as_raw(), mac.as_ptr()) })
    }

    /// Removes one count of `mac` from the netdev's multicast addresses
    /// (`dev_mc_del`; may sleep).
    #[inline]
    pub fn mc_del(&self, mac: &[u8; 6]) -> Result {
        // SAFETY: as above.
        kernel::error::to_result(unsafe { bindings::rrxe_dev_mc_del(self.as_raw(), mac.as_ptr()) })
    }
}
