// SPDX-License-Identifier: GPL-2.0

//! The RDMA core's ops for multicast groups (attach/detach of QPs) (`struct ib_qp`).
//!
//! Being written (issue #3): the trait a driver implements and the
//! trampolines [`install`] puts in the device's ops.

use super::{
    bindings,
    ib_device::IbDriver, //
};

/// A driver's multicast groups (attach/detach of QPs).
pub trait McastDriver: IbDriver {}

/// Installs the multicast group ops of driver `T`.
pub fn install<T: McastDriver>(_ops: &mut bindings::ib_device_ops) {}
