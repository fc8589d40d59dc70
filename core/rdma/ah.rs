// SPDX-License-Identifier: GPL-2.0

//! The RDMA core's ops for address handles (`struct ib_ah`).
//!
//! Being written (issue #3): the trait a driver implements and the
//! trampolines [`install`] puts in the device's ops.

use super::{
    bindings,
    ib_device::IbDriver, //
};

/// A driver's address handles.
pub trait AhDriver: IbDriver {}

/// Installs the address handle ops of driver `T`.
pub fn install<T: AhDriver>(_ops: &mut bindings::ib_device_ops) {}
