// SPDX-License-Identifier: GPL-2.0

//! Which ID a received message is for: `cm.c`'s table lookups
//! (`cm_acquire_id()`, `cm_match_req()`, `cm_insert_remote_qpn()`,
//! `cm_acquire_rejected_id()`, `cm_acquire_mraed_id()`) as predicates over
//! the keys of an ID.
//!
//! Pure logic with no kernel dependency: built into the module and into the
//! host unit tests (`tests/host`). Communication IDs and GUIDs are in CPU
//! order, as the codec reads them.

use super::{
    msgs::MsgResponse,
    state::{
        mra_lookup,
        rej_lookup,
        RejLookup, //
    },
};

/// What an ID is found by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Keys {
    /// Its local communication ID (never 0).
    pub(crate) local_id: u32,
    /// The peer's communication ID, once learnt.
    pub(crate) remote_id: u32,
    /// The remote ID and GUID are in the remote table: between the REQ or
    /// REP and the return to idle or timewait.
    pub(crate) remote_known: bool,
    /// The peer's node GUID.
    pub(crate) remote_ca_guid: u64,
    /// The peer's QPN. While `remote_known`, the (QPN, GUID) pair is in the
    /// remote QPN table too: a new REQ or REP from the same QP of the same
    /// node is then a stale connection.
    pub(crate) remote_qpn: u32,
    /// The service ID it listens on, if it listens.
    pub(crate) listening_on: Option<u64>,
    /// It answers a SIDR_REQ (`IB_CM_SIDR_REQ_RCVD`); `remote_id` is the
    /// request ID.
    pub(crate) answering_sidr: bool,
}

/// A lookup of the ID a message is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// By our local ID alone (a REP; a REJ or MRA of our REQ).
    Local(u32),
    /// By our local ID and the peer's (RTU, DREQ, DREP, other REJs and
    /// MRAs).
    Both {
        /// Our communication ID, the message's remote one.
        local: u32,
        /// The peer's, the message's local one.
        remote: u32,
    },
    /// By the peer's ID and node GUID in the remote table (a repeated REQ,
    /// a timeout REJ that carries the GUID in its ARI).
    Remote {
        /// The peer's communication ID.
        remote: u32,
        /// The peer's node GUID.
        guid: u64,
    },
    /// By the peer's QPN and node GUID in the remote QPN table (the stale
    /// connection check of a REQ or REP).
    Qpn {
        /// The peer's QPN.
        qpn: u32,
        /// The peer's node GUID.
        guid: u64,
    },
    /// A listener on this service ID.
    Listen(u64),
    /// The ID answering this SIDR request ID (a repeated SIDR_REQ is
    /// dropped, `cm_insert_remote_sidr()`).
    Sidr(u32),
}

impl Lookup {
    /// Whether an ID with `keys` is the one looked for.
    pub(crate) fn takes(&self, k: &Keys) -> bool {
        match *self {
            Lookup::Local(local) => local != 0 && k.local_id == local,
            Lookup::Both { local, remote } => {
                local != 0 && k.local_id == local && k.remote_id == remote
            }
            Lookup::Remote { remote, guid } => {
                k.remote_known && k.remote_id == remote && k.remote_ca_guid == guid
            }
            Lookup::Qpn { qpn, guid } => {
                k.remote_known && k.remote_qpn == qpn && k.remote_ca_guid == guid
            }
            Lookup::Listen(sid) => k.listening_on == Some(sid),
            Lookup::Sidr(request) => k.answering_sidr && k.remote_id == request,
        }
    }
}

/// The lookup of a REJ with these fields (`local`/`remote`: the message's
/// local and remote communication IDs; `ari_guid`: the GUID in its ARI).
pub(crate) fn for_rej(
    reason: u16,
    message_rejected: u8,
    local: u32,
    remote: u32,
    ari_guid: u64,
) -> Lookup {
    match rej_lookup(reason, message_rejected) {
        RejLookup::RemoteIdAndGuid => Lookup::Remote {
            remote: local,
            guid: ari_guid,
        },
        RejLookup::LocalIdOnly => Lookup::Local(remote),
        RejLookup::LocalAndRemoteId => Lookup::Both {
            local: remote,
            remote: local,
        },
    }
}

/// The lookup of an MRA; `None` for an MRA of no known message (dropped).
pub(crate) fn for_mra(message_mraed: u8, local: u32, remote: u32) -> Option<Lookup> {
    Some(match mra_lookup(message_mraed)? {
        RejLookup::LocalIdOnly => Lookup::Local(remote),
        _ => Lookup::Both {
            local: remote,
            remote: local,
        },
    })
}

/// The lookup of a message an ID answers, by its attribute: RTU, DREQ and
/// DREP name both IDs, a REP only ours (it tells us the peer's).
pub(crate) fn for_reply(is_rep: bool, local: u32, remote: u32) -> Lookup {
    if is_rep {
        Lookup::Local(remote)
    } else {
        Lookup::Both {
            local: remote,
            remote: local,
        }
    }
}

/// Whether an MRA for `message_mraed` teaches the ID the peer's ID (an MRA
/// of our REQ is the first message from the peer).
pub(crate) fn mra_learns_remote(message_mraed: u8) -> bool {
    message_mraed == MsgResponse::Req as u8
}
