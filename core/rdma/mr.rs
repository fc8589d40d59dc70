// SPDX-License-Identifier: GPL-2.0

//! The RDMA core's ops for memory regions (`struct ib_mr`).
//!
//! Being written (issue #3): the trait a driver implements and the
//! trampolines [`install`] puts in the device's ops.

use super::{
    bindings,
    ib_device::IbDriver, //
};

/// A driver's memory regions.
pub trait MrDriver: IbDriver {}

/// Installs the memory region ops of driver `T`.
pub fn install<T: MrDriver>(_ops: &mut bindings::ib_device_ops) {}
