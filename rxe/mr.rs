// SPDX-License-Identifier: GPL-2.0

//! The memory regions of an rxe device.
//!
//! Being written (issue #3).

use crate::{
    device::Rxe,
    rdma::mr::MrDriver, //
};
use kernel::prelude::*;

impl MrDriver for Rxe {}

/// The device's memory regions.
#[pin_data]
pub(crate) struct Mrs {}

impl Mrs {
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {})
    }
}
