// SPDX-License-Identifier: GPL-2.0

//! The RDMA core's ops for memory windows (`struct ib_mw`).
//!
//! Being written (issue #3): the trait a driver implements and the
//! trampolines [`install`] puts in the device's ops.

use super::{
    bindings,
    ib_device::IbDriver, //
};

/// A driver's memory windows.
pub trait MwDriver: IbDriver {}

/// Installs the memory window ops of driver `T`.
pub fn install<T: MwDriver>(_ops: &mut bindings::ib_device_ops) {}
