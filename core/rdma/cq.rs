// SPDX-License-Identifier: GPL-2.0

//! The RDMA core's ops for completion queues (`struct ib_cq`).
//!
//! Being written (issue #3): the trait a driver implements and the
//! trampolines [`install`] puts in the device's ops.

use super::{
    bindings,
    ib_device::IbDriver, //
};

/// A driver's completion queues.
pub trait CqDriver: IbDriver {}

/// Installs the completion queue ops of driver `T`.
pub fn install<T: CqDriver>(_ops: &mut bindings::ib_device_ops) {}
