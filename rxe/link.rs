// SPDX-License-Identifier: GPL-2.0

//! The `rxe` link type: `rdma link add NAME type rxe netdev DEV`.

use crate::rdma::{
    link::LinkOps,
    netdev::NetDevice, //
};
use kernel::prelude::*;

/// The `rxe` link type.
pub(crate) struct RxeLink;

impl LinkOps for RxeLink {
    const TYPE: &'static CStr = c"rxe";

    fn newlink(_ibdev_name: &CStr, _ndev: &NetDevice) -> Result {
        // Device creation is not implemented yet: refuse cleanly, creating
        // nothing, rather than half-build a device.
        Err(EOPNOTSUPP)
    }
}
