// SPDX-License-Identifier: GPL-2.0

//! The value behind each file of the CM's counter directories.
//!
//! The attribute tables are C (`glue_cm.c`, the sysfs idiom); their `show`
//! asks Rust for the number it prints.

use crate::{
    client::{
        client_data,
        ClientDevice, //
    },
    device::CmClient,
    rdma::bindings, //
};
use kernel::ffi;

/// Counter `index` of directory `group` of `port` (`cm_show_counter()`).
///
/// # Safety
///
/// Called by the glue's `show` for a counter file of a registered device,
/// which `CmClient::remove` takes away before it frees the device's data.
#[no_mangle]
unsafe extern "C" fn rrxe_cm_counter(
    ibdev: *mut bindings::ib_device,
    port: u32,
    group: ffi::c_uint,
    index: ffi::c_uint,
) -> ffi::c_long {
    // SAFETY: the device is registered while its port's files exist.
    let dev = unsafe { ClientDevice::from_raw(ibdev) };
    // SAFETY: `CmClient` is the module's client; the data outlives this
    // read, as `remove` removes the file first.
    let Some(cm_dev) = (unsafe { client_data::<CmClient>(dev) }) else {
        return 0;
    };
    let value = usize::try_from(group)
        .ok()
        .zip(usize::try_from(index).ok())
        .and_then(|(g, i)| cm_dev.counter(port, g, i))
        .unwrap_or(0);
    // `long` is 64 bits on the architectures this builds for.
    value as ffi::c_long
}
