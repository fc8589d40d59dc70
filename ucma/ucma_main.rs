// SPDX-License-Identifier: GPL-2.0

//! The RDMA CM user access device, `/dev/infiniband/rdma_cm`.
//!
//! A drop-in replacement for the kernel's C `rdma_ucm`: librdmacm writes
//! commands (a `struct rdma_ucm_cmd_hdr` followed by the command) to the
//! device; this module carries them out over the kernel's RDMA CM and queues
//! the CM's events for `RDMA_USER_CM_CMD_GET_EVENT`.

#[path = "../core/rdma/mod.rs"]
pub mod rdma;

mod abi;
mod cmd;
mod ctx;
mod file;

use core::mem::size_of;
use kernel::prelude::*;
use rdma::{
    bindings,
    cm::MaxBacklogSysctl,
    ib_client::{
        ChardevClient,
        ClientSlot,
        NlChardev, //
    },
    ids::IdsOwner,
    misc::MiscOptions,
    workqueue::QueueOwner, //
};

// The hand-written ABI layouts of `abi` match the kernel's uapi headers.
const _: () = {
    assert!(size_of::<bindings::rdma_ucm_create_id>() == abi::CreateId::SIZE);
    assert!(size_of::<bindings::rdma_ucm_destroy_id>() == abi::DestroyId::SIZE);
    assert!(size_of::<bindings::rdma_ucm_bind_ip>() == abi::Bind::IP_SIZE);
    assert!(size_of::<bindings::rdma_ucm_bind>() == abi::Bind::SIZE);
    assert!(size_of::<bindings::rdma_ucm_resolve_ip>() == abi::ResolveAddr::IP_SIZE);
    assert!(size_of::<bindings::rdma_ucm_resolve_addr>() == abi::ResolveAddr::SIZE);
    assert!(size_of::<bindings::rdma_ucm_resolve_route>() == abi::IdArg::SIZE);
    assert!(size_of::<bindings::rdma_ucm_query>() == abi::Query::SIZE);
    assert!(size_of::<bindings::rdma_ucm_query_route_resp>() == abi::QueryRouteResp::SIZE);
    assert!(size_of::<bindings::rdma_ucm_query_addr_resp>() == abi::QueryAddrResp::SIZE);
    assert!(size_of::<bindings::rdma_ucm_query_path_resp>() == abi::QUERY_PATH_RESP_HDR);
    assert!(size_of::<bindings::ib_path_rec_data>() == abi::PATH_REC_DATA_SIZE);
    assert!(size_of::<bindings::rdma_ucm_conn_param>() == <abi::ConnParam>::SIZE);
    assert!(size_of::<bindings::rdma_ucm_connect>() == abi::Connect::SIZE);
    assert!(size_of::<bindings::rdma_ucm_accept>() == abi::Connect::ACCEPT_SIZE);
    assert!(size_of::<bindings::rdma_ucm_reject>() == abi::Reject::SIZE);
    assert!(size_of::<bindings::rdma_ucm_disconnect>() == abi::DISCONNECT_SIZE);
    assert!(size_of::<bindings::rdma_ucm_init_qp_attr>() == abi::Query::SIZE);
    assert!(size_of::<bindings::rdma_ucm_listen>() == abi::IdArg::SIZE);
    assert!(size_of::<bindings::rdma_ucm_notify>() == abi::IdArg::SIZE);
    assert!(size_of::<bindings::rdma_ucm_join_ip_mcast>() == abi::JoinMcast::IP_SIZE);
    assert!(size_of::<bindings::rdma_ucm_join_mcast>() == abi::JoinMcast::SIZE);
    assert!(size_of::<bindings::rdma_ucm_get_event>() == abi::GET_EVENT_SIZE);
    assert!(size_of::<bindings::rdma_ucm_event_resp>() == abi::EVENT_RESP_SIZE);
    assert!(size_of::<bindings::rdma_ucm_set_option>() == abi::SetOption::SIZE);
    assert!(size_of::<bindings::rdma_ucm_migrate_id>() == abi::MigrateId::SIZE);
    assert!(size_of::<bindings::rdma_ucm_write_cm_event>() == abi::WriteCmEvent::SIZE);
    assert!(size_of::<bindings::rdma_ucm_resolve_ib_service>() == abi::ResolveIbService::SIZE);
    assert!(
        size_of::<bindings::rdma_ucm_query_ib_service_resp>() == abi::QUERY_IB_SERVICE_RESP_HDR
    );
    assert!(size_of::<bindings::ib_user_service_rec>() == abi::USER_SERVICE_REC_SIZE);
    assert!(size_of::<bindings::ib_uverbs_qp_attr>() == abi::QP_ATTR_SIZE);
    assert!(size_of::<bindings::ib_uverbs_ah_attr>() == abi::AH_ATTR_SIZE);
    assert!(size_of::<bindings::ib_user_path_rec>() == abi::USER_PATH_REC_SIZE);
    assert!(bindings::RDMA_USER_CM_ABI_VERSION == abi::ABI_VERSION);
};

module! {
    type: UcmaModule,
    name: "rdma_ucm",
    authors: ["The rust-rxe authors"],
    description: "RDMA Userspace Connection Manager Access (Rust)",
    license: "GPL",
    alias: ["rdma-client-rdma_cm"],
}

#[pin_data]
struct UcmaModule {
    /// Made before the device can be opened. At exit no file is open (an
    /// open file pins the module), so nothing queues on it any more; dropping
    /// it waits for the id closes still queued.
    close_wq: QueueOwner,
    /// Every context and membership id (`CTX_IDS`, `MC_IDS`); none is left
    /// at exit, as no file is.
    ctx_ids: IdsOwner<ctx::Ctx>,
    mc_ids: IdsOwner<ctx::Mc>,
    sysctl: MaxBacklogSysctl,
    #[pin]
    misc: NlChardev<file::UcmaFile>,
}

/// The `rdma_cm` IB client's memory (`rdma_cma_client` of the C module).
static CLIENT: ClientSlot = ClientSlot::new();

/// RDMA netlink's `RDMA_NLDEV_CMD_GET_CHARDEV` for "rdma_cm" names the misc
/// device, as for the C module (librdmacm reads the ABI version this way).
impl ChardevClient for file::UcmaFile {
    const CLIENT_NAME: &'static CStr = c"rdma_cm";
    const ABI: u64 = abi::ABI_VERSION as u64;

    fn slot() -> &'static ClientSlot {
        &CLIENT
    }
}

impl kernel::InPlaceModule for UcmaModule {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            close_wq: ctx::CLOSE_WQ.alloc(c"rdma_ucm_close")?,
            ctx_ids: ctx::CTX_IDS.alloc()?,
            mc_ids: ctx::MC_IDS.alloc()?,
            sysctl: MaxBacklogSysctl::register()?,
            misc <- NlChardev::register(MiscOptions {
                name: c"rdma_cm",
                nodename: c"infiniband/rdma_cm",
                mode: 0o666,
            }),
        })
    }
}
