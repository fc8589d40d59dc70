// SPDX-License-Identifier: GPL-2.0

//! The RDMA core's ops for shared receive queues (`struct ib_srq`).
//!
//! Being written (issue #3): the trait a driver implements and the
//! trampolines [`install`] puts in the device's ops.

use super::{
    bindings,
    ib_device::IbDriver, //
};

/// A driver's shared receive queues.
pub trait SrqDriver: IbDriver {}

/// Installs the shared receive queue ops of driver `T`.
pub fn install<T: SrqDriver>(_ops: &mut bindings::ib_device_ops) {}
