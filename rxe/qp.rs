// SPDX-License-Identifier: GPL-2.0

//! The queue pairs of an rxe device.
//!
//! Being written (issue #3).

use crate::{
    device::Rxe,
    rdma::qp::QpDriver, //
};
use kernel::prelude::*;

impl QpDriver for Rxe {}

/// The device's queue pairs.
#[pin_data]
pub(crate) struct Qps {}

impl Qps {
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {})
    }
}
