// SPDX-License-Identifier: GPL-2.0

//! Lookups in the RDMA core's GID cache of a device, for the receive path.

use super::{
    bindings,
    ib_device::{
        Device,
        IbDriver, //
    },
    netdev::NetDevice,
};

impl<T: IbDriver> Device<T> {
    /// Whether port `port`'s GID table has `gid` of type `gid_type` (`enum
    /// ib_gid_type`) on `ndev` (`rdma_find_gid_by_port`). Any context: the
    /// cache is read under its irq-safe lock.
    pub fn has_gid(&self, gid: &[u8; 16], gid_type: u32, port: u32, ndev: &NetDevice) -> bool {
        // SAFETY: the device and netdev are live; `union ib_gid` is 16 bytes
        // of any value, read during the call.
        let attr = unsafe {
            bindings::rdma_find_gid_by_port(
                self.as_raw(),
                gid.as_ptr().cast(),
                gid_type,
                port,
                ndev.as_raw(),
            )
        };
        if kernel::error::from_err_ptr(attr.cast_mut()).is_err() || attr.is_null() {
            return false;
        }
        // SAFETY: the lookup returned a held attribute; put it back.
        unsafe { bindings::rdma_put_gid_attr(attr) };
        true
    }
}
