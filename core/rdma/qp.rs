// SPDX-License-Identifier: GPL-2.0

//! The RDMA core's ops for queue pairs (`struct ib_qp`).
//!
//! Being written (issue #3): the trait a driver implements and the
//! trampolines [`install`] puts in the device's ops.

use super::{
    bindings,
    ib_device::IbDriver, //
};

/// A driver's queue pairs.
pub trait QpDriver: IbDriver {}

/// Installs the queue pair ops of driver `T`.
pub fn install<T: QpDriver>(_ops: &mut bindings::ib_device_ops) {}
