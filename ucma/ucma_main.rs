// SPDX-License-Identifier: GPL-2.0

//! The RDMA CM user access device, `/dev/infiniband/rdma_cm`.
//!
//! A drop-in replacement for the kernel's C `rdma_ucm`: librdmacm writes
//! commands (a `struct rdma_ucm_cmd_hdr` followed by the command) to the
//! device; this module carries them out over the kernel's RDMA CM and queues
//! the CM's events for `RDMA_USER_CM_CMD_GET_EVENT`.

#[path = "../core/rdma/mod.rs"]
pub mod rdma;

mod cmd;
mod file;

use kernel::prelude::*;
use rdma::misc::{
    MiscOptions,
    MiscRegistration, //
};

module! {
    type: UcmaModule,
    name: "rdma_ucm",
    authors: ["The rust-rxe authors"],
    description: "RDMA Userspace Connection Manager Access (Rust)",
    license: "GPL",
    alias: ["char-major-10-rdma_cm"],
}

#[pin_data]
struct UcmaModule {
    #[pin]
    misc: MiscRegistration<file::UcmaFile>,
}

impl kernel::InPlaceModule for UcmaModule {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            misc <- MiscRegistration::register(MiscOptions {
                name: c"rdma_cm",
                nodename: c"infiniband/rdma_cm",
                mode: 0o666,
            }),
        })
    }
}
