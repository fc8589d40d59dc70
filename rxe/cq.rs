// SPDX-License-Identifier: GPL-2.0

//! The completion queues of an rxe device.
//!
//! Being written (issue #3).

use crate::{
    device::Rxe,
    rdma::cq::CqDriver, //
};
use kernel::prelude::*;

impl CqDriver for Rxe {}

/// The device's completion queues.
#[pin_data]
pub(crate) struct Cqs {}

impl Cqs {
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {})
    }
}
