// SPDX-License-Identifier: GPL-2.0

//! The `rxe` link type: `rdma link add NAME type rxe netdev DEV`.

use crate::device::{
    self,
    Rxe, //
};
use crate::params;
use crate::rdma::{
    ib_device::Device,
    link::LinkOps,
    netdev::NetDevice, //
};
use kernel::prelude::*;

/// The `rxe` link type.
pub(crate) struct RxeLink;

impl LinkOps for RxeLink {
    const TYPE: &'static CStr = c"rxe";

    fn newlink(ibdev_name: &CStr, ndev: &NetDevice) -> Result {
        // The C driver's refusals, in its order and with its errnos.
        if ndev.is_vlan() {
            pr_err!("rxe creation allowed on top of a real device only\n");
            return Err(EPERM);
        }
        // Unlike the C driver, which makes a device with a random GUID on,
        // say, a tun device: RoCE needs Ethernet (issue #3 asks for this).
        if ndev.hw_type() != params::ARPHRD_ETHER {
            pr_err!("{} is not an Ethernet device\n", ndev.name());
            return Err(EINVAL);
        }
        if Device::<Rxe>::get_by_netdev(ndev).is_some() {
            pr_err!("already configured on {}\n", ndev.name());
            return Err(EEXIST);
        }
        device::create(ibdev_name, ndev).inspect_err(|e| {
            pr_err!("failed to add {}: {:?}\n", ndev.name(), e);
        })
    }
}
