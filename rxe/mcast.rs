// SPDX-License-Identifier: GPL-2.0

//! The multicast groups (attach/detach of QPs) of an rxe device.
//!
//! Being written (issue #3).

use crate::{
    device::Rxe,
    rdma::mcast::McastDriver, //
};
use kernel::prelude::*;

impl McastDriver for Rxe {}

/// The device's multicast groups (attach/detach of QPs).
#[pin_data]
pub(crate) struct Mcasts {}

impl Mcasts {
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {})
    }
}
