// SPDX-License-Identifier: GPL-2.0

//! The memory windows of an rxe device.
//!
//! Being written (issue #3).

use crate::{
    device::Rxe,
    rdma::mw::MwDriver, //
};
use kernel::prelude::*;

impl MwDriver for Rxe {}

/// The device's memory windows.
#[pin_data]
pub(crate) struct Mws {}

impl Mws {
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {})
    }
}
