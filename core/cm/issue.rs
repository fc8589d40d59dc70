// SPDX-License-Identifier: GPL-2.0

//! Answers the CM builds from a received message alone, with no ID of its
//! own behind them (`cm_issue_rej()`, `cm_issue_drep()`, and the SIDR_REP a
//! SIDR_REQ gets when nobody listens).
//!
//! Pure logic with no kernel dependency: built into the module and into the
//! host unit tests (`tests/host`). Each answer takes the received MAD's
//! transaction ID and swaps its communication IDs: every CM message starts
//! with the sender's ID then the receiver's (a SIDR_REQ with its request ID).

use super::{
    field::Mad,
    msgs::{
        Drep,
        MsgResponse,
        Rej,
        SidrRep,
        SidrReq, //
    },
};
use core::borrow::Borrow;

/// The (sender's, receiver's) communication IDs of any CM message, read
/// as the C reads them, through the REJ layout.
fn comm_ids(rcv: &Mad) -> (u32, u32) {
    let any = Rej(rcv);
    (any.local_comm_id(), any.remote_comm_id())
}

/// A REJ of `reason` for the message `rcv`, which it rejects as `rejected`
/// (`cm_issue_rej()`), with no additional information.
pub(crate) fn rej(rcv: &Mad, out: &mut Mad, reason: u16, rejected: MsgResponse) {
    let (sender, receiver) = comm_ids(rcv);
    let tid = super::msgs::MadHdr(rcv).tid();
    let mut rej = Rej(out);
    rej.format(tid, 0);
    rej.set_remote_comm_id(sender);
    rej.set_local_comm_id(receiver);
    rej.set_message_rejected(rejected as u8);
    rej.set_reason(reason);
}

/// A DREP for the DREQ `rcv` of a connection the CM does not know
/// (`cm_issue_drep()`): the peer may finish its disconnection.
pub(crate) fn drep(rcv: &Mad, out: &mut Mad) {
    let (sender, receiver) = comm_ids(rcv);
    let tid = super::msgs::MadHdr(rcv).tid();
    let mut drep = Drep(out);
    drep.format(tid, 0);
    drep.set_remote_comm_id(sender);
    drep.set_local_comm_id(receiver);
}

/// A SIDR_REP with only a status for the SIDR_REQ `rcv`, as the ID the CM
/// creates for it sends when nobody listens (`cm_format_sidr_rep()` with
/// every other parameter zero).
pub(crate) fn sidr_rep_status<B: Borrow<Mad>>(rcv: &SidrReq<B>, out: &mut Mad, status: u8) {
    let mut rep = SidrRep(out);
    rep.format(rcv.hdr().tid(), 0);
    rep.set_requestid(rcv.requestid());
    rep.set_status(status);
    rep.set_serviceid(rcv.serviceid());
}
