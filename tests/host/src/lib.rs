// SPDX-License-Identifier: GPL-2.0

//! The kernel-independent parts of the modules, built for the host so their
//! unit tests run with `cargo test`. Each module below is the very file the
//! kernel module compiles.

#[path = "../../../ucma/cmd.rs"]
#[allow(dead_code)]
pub mod ucma_cmd;

#[path = "../../../ucma/abi.rs"]
#[allow(dead_code)]
pub mod ucma_abi;

#[path = "../../../rxe/params.rs"]
#[allow(dead_code)]
pub mod rxe_params;

/// The IB connection manager's pure parts, the very tree the module includes.
#[path = "../../../core/cm/proto.rs"]
#[allow(dead_code)]
pub mod cm;

#[cfg(test)]
mod ucma_fuzz;

/// A software crc32_le (the ICRC tests, the fuzz entry points).
mod crc;

/// The cargo-fuzz targets' entry points (tests/fuzz).
pub mod fuzz_entry;

#[cfg(test)]
mod cm_msgs_test;

#[cfg(test)]
mod cm_state_test;

#[cfg(test)]
mod cm_format_test;

#[cfg(test)]
mod cm_sim_test;

#[cfg(test)]
mod cm_lookup_test;

#[path = "../../../rxe/wire/mod.rs"]
#[allow(dead_code)]
pub mod rxe_wire;

#[cfg(test)]
mod wire_tests;

#[path = "../../../rxe/queue_index.rs"]
#[allow(dead_code)]
pub mod rxe_queue_index;

#[path = "../../../rxe/qp_attr.rs"]
#[allow(dead_code)]
pub mod rxe_qp_attr;
use rxe_qp_attr as qp_attr;
use rxe_av as av;

#[path = "../../../rxe/wqe.rs"]
#[allow(dead_code)]
pub mod rxe_wqe;

#[path = "../../../rxe/keys.rs"]
#[allow(dead_code)]
pub mod rxe_keys;

#[path = "../../../rxe/av.rs"]
#[allow(dead_code)]
pub mod rxe_av;

#[path = "../../../rxe/mcast_group.rs"]
#[allow(dead_code)]
pub mod rxe_mcast_group;

// The rxe files name the parameters `crate::params`, as in the module.
pub use rxe_params as params;

// The transport's files name these as the module does.
use rxe_keys as keys;
use rxe_wire as wire;
use rxe_wqe as wqe;

#[path = "../../../rxe/req_plan.rs"]
#[allow(dead_code)]
pub mod rxe_req_plan;
use rxe_req_plan as req_plan;

#[path = "../../../rxe/comp_check.rs"]
#[allow(dead_code)]
pub mod rxe_comp_check;
use rxe_comp_check as comp_check;

#[path = "../../../rxe/resp_check.rs"]
#[allow(dead_code)]
pub mod rxe_resp_check;

#[cfg(test)]
mod transport_tests;

#[path = "../../../rxe/rc_timing.rs"]
#[allow(dead_code)]
pub mod rxe_rc_timing;

#[path = "../../../rxe/dma.rs"]
#[allow(dead_code)]
pub mod rxe_dma;

#[path = "../../../rxe/access.rs"]
#[allow(dead_code)]
pub mod rxe_access;

// The data path's files name each other as the module does.
use rxe_dma as dma;

#[path = "../../../rxe/roce.rs"]
#[allow(dead_code)]
pub mod rxe_roce;
