// SPDX-License-Identifier: GPL-2.0

//! The InfiniBand connection manager (`ib_cm`).
//!
//! Meant as a drop-in replacement for the kernel's C `ib_cm`: an IB client
//! that registers the CM class MAD agents on every port that speaks the CM
//! protocol (IB and RoCE), and the exported `ib_cm` API the
//! kernel's C `rdma_cm` calls, on top of the message codec and the
//! connection state machine of `proto`, which the host tests cover (see
//! Documentation/cm.rst).

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
use kernel::{
    bindings::wq_flags_WQ_PERCPU,
    prelude::*, //
};
use rdma::workqueue::QueueOwner;

module! {
    type: CmModule,
    name: "ib_cm",
    authors: ["The rust-rxe authors"],
    description: "InfiniBand CM in Rust",
    license: "GPL",
}

// Fields drop in order: the client, the queue its IDs used, the tables.
struct CmModule {
    // Unregistering takes the CM off every device (`remove` for each).
    _client: ClientRegistration<CmClient>,
    // Destroying the queue waits for the works still running on it.
    _wq: QueueOwner,
    // Frees the ID and port tables, empty by then.
    _tables: id::TablesOwner,
}

impl kernel::Module for CmModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let tables = id::init();
        // As cm.c: `alloc_workqueue("ib_cm", WQ_PERCPU, 1)`.
        let wq = id::WQ.alloc_with(c"ib_cm", wq_flags_WQ_PERCPU, 1)?;
        Ok(Self {
            _client: ClientRegistration::register()?,
            _wq: wq,
            _tables: tables,
        })
    }
}
