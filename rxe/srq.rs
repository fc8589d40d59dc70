// SPDX-License-Identifier: GPL-2.0

//! The shared receive queues of an rxe device.
//!
//! Being written (issue #3).

use crate::{
    device::Rxe,
    rdma::srq::SrqDriver, //
};
use kernel::prelude::*;

impl SrqDriver for Rxe {}

/// The device's shared receive queues.
#[pin_data]
pub(crate) struct Srqs {}

impl Srqs {
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {})
    }
}
