// SPDX-License-Identifier: GPL-2.0

//! The InfiniBand connection manager (`ib_cm`).
//!
//! Meant as a drop-in replacement for the kernel's C `ib_cm`: an IB client
//! that registers the CM class MAD agents on every port that speaks the CM
//! protocol (IB and RoCE), and, once complete, the exported `ib_cm` API the
//! kernel's C `rdma_cm` calls. Built so far: the registration per device and
//! port (received CM MADs are counted and dropped), on top of the message
//! codec and the connection state machine of `proto`, which the host tests
//! cover. Nothing loads this module yet.

#[path = "../rdma/mod.rs"]
pub mod rdma;

#[path = "proto.rs"]
#[allow(
    dead_code,
    reason = "the codec and state machine cover the whole protocol; the driver uses a part yet"
)]
mod proto;

mod client;
mod device;
mod id;
mod mad_agent;
mod sysfs;

use client::ClientRegistration;
use device::CmClient;
use kernel::prelude::*;

module! {
    type: CmModule,
    name: "ib_cm",
    authors: ["The rust-rxe authors"],
    description: "InfiniBand CM in Rust",
    license: "GPL",
}

struct CmModule {
    // Unregistering takes the CM off every device (`remove` for each).
    _client: ClientRegistration<CmClient>,
}

impl kernel::Module for CmModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        id::init();
        Ok(Self {
            _client: ClientRegistration::register()?,
        })
    }
}
