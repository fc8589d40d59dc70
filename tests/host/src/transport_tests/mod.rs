// SPDX-License-Identifier: GPL-2.0

//! Host tests of the transport's pure logic: the requester's plan
//! (`rxe/req_plan.rs`), the completer's state machine
//! (`rxe/comp_check.rs`, driven through a recording mock of the QP) and the
//! responder's checks (`rxe/resp_check.rs`).

mod c_packets;
mod comp;
mod req;
mod resp;
mod resp_run;
mod sim;
