// SPDX-License-Identifier: GPL-2.0

//! Soft RoCE: a software RDMA over Converged Ethernet (RoCEv2) device.
//!
//! A drop-in replacement for the kernel's C `rdma_rxe`: the same module name,
//! the same `rxe` link type (`rdma link add rxe0 type rxe netdev eth0`), the
//! same wire protocol and user ABI.

#[path = "../core/rdma/mod.rs"]
pub mod rdma;

pub mod access;
mod ah;
mod atomic;
pub mod av;
#[expect(
    dead_code,
    reason = "shared with the host tests (tests/host), which use items the driver does not"
)]
mod comp_check;
mod copy;
mod cq;
mod device;
pub mod dma;
pub mod keys;
mod link;
mod mcast;
pub mod mcast_group;
mod mr;
mod mw;
mod net;
pub mod params;
mod qp;
pub mod qp_attr;
mod qp_io;
mod queue;
pub mod queue_index;
mod rc;
mod rc_timer;
mod rc_timing;
mod recv;
#[expect(
    dead_code,
    reason = "shared with the host tests (tests/host), which use items the driver does not"
)]
mod req_plan;
#[expect(
    dead_code,
    reason = "shared with the host tests (tests/host), which use items the driver does not"
)]
mod resp_check;
pub mod roce;
mod srq;
mod task;
mod ud;
#[expect(
    dead_code,
    reason = "shared with the host tests (tests/host), which use items the driver does not"
)]
mod wire;
pub mod wqe;
mod xmit;

use kernel::{
    bindings::{
        wq_consts_WQ_MAX_ACTIVE,
        wq_flags_WQ_UNBOUND, //
    },
    prelude::*, //
};
use rdma::{
    ib_device::DriverRegistration,
    kthread::ThreadsOwner,
    link::LinkRegistration,
    netns::PernetRegistration,
    workqueue::QueueOwner, //
};

module! {
    type: RxeModule,
    name: "rdma_rxe",
    authors: ["The rust-rxe authors"],
    description: "Soft RDMA transport (RoCEv2) in Rust",
    license: "GPL",
    alias: ["rdma-link-rxe"],
}

#[pin_data]
struct RxeModule {
    // Dropped first: no new device while the driver goes away.
    #[pin]
    link: LinkRegistration<link::RxeLink>,
    // Then every device is unregistered, and the netdev notifier removed.
    #[pin]
    driver: DriverRegistration<device::Rxe>,
    // The QPs' threads and workqueue (rxe/task.rs), stopped once no QP can
    // use them.
    threads: ThreadsOwner,
    wq: QueueOwner,
    // Last: each namespace's UDP sockets (rxe/net.rs), released once no
    // device can use them.
    #[pin]
    netns: PernetRegistration<net::NsSockets>,
}

impl kernel::InPlaceModule for RxeModule {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            // The per-namespace sockets before any device can take them.
            netns <- PernetRegistration::register(),
            // C's `alloc_workqueue("rxe_wq", WQ_UNBOUND, WQ_MAX_ACTIVE)`
            // (rxe/task.rs, `WQ`), and the threads (`THREADS`).
            wq: task::WQ.alloc_with(
                c"rxe_wq",
                wq_flags_WQ_UNBOUND,
                wq_consts_WQ_MAX_ACTIVE as i32,
            )?,
            threads: task::THREADS.start(c"rxe_task", task::THREAD_SLICE_NS)?,
            // The notifier is in place before the first device can appear.
            driver <- DriverRegistration::register(),
            link <- LinkRegistration::register(),
        })
    }
}
