// SPDX-License-Identifier: GPL-2.0

//! The address handles of an rxe device.
//!
//! Being written (issue #3).

use crate::{
    device::Rxe,
    rdma::ah::AhDriver, //
};
use kernel::prelude::*;

impl AhDriver for Rxe {}

/// The device's address handles.
#[pin_data]
pub(crate) struct Ahs {}

impl Ahs {
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {})
    }
}
