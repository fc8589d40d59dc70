// SPDX-License-Identifier: GPL-2.0

//! Host tests of the CM's ID lookups (`core/cm/lookup.rs`): each received
//! message finds the ID `cm.c` finds, built from messages the codec writes.

use crate::cm::field::Mad;
use crate::cm::format::{
    self,
    Ids, //
};
use crate::cm::lookup::*;
use crate::cm::msgs::{
    Mra,
    MsgResponse,
    Rej, //
};
use crate::cm::state::rej_reason;

/// An active ID (ours: 0x11) connected to the passive 0x22 of node 0xAB.
fn active() -> Keys {
    Keys {
        local_id: 0x11,
        remote_id: 0x22,
        remote_known: true,
        remote_ca_guid: 0xAB,
        remote_qpn: 0x33,
        listening_on: None,
        answering_sidr: false,
    }
}

#[test]
fn replies_name_the_id() {
    // The peer's messages carry its ID as local and ours as remote.
    assert!(for_reply(false, 0x22, 0x11).takes(&active()));
    assert!(!for_reply(false, 0x23, 0x11).takes(&active()));
    assert!(!for_reply(false, 0x22, 0x12).takes(&active()));
    // A REP finds the ID by ours alone: the peer's is not known yet.
    let fresh = Keys {
        remote_id: 0,
        remote_known: false,
        ..active()
    };
    assert!(for_reply(true, 0x22, 0x11).takes(&fresh));
    assert!(!for_reply(true, 0x22, 0x12).takes(&fresh));
    // Nobody has local ID 0.
    let zero = Keys {
        local_id: 0,
        ..fresh
    };
    assert!(!for_reply(true, 0x22, 0).takes(&zero));
}

#[test]
fn duplicate_req_needs_the_remote_table() {
    let l = Lookup::Remote {
        remote: 0x22,
        guid: 0xAB,
    };
    assert!(l.takes(&active()));
    // Back to idle or in timewait: out of the remote table.
    let gone = Keys {
        remote_known: false,
        ..active()
    };
    assert!(!l.takes(&gone));
    // Same ID from another node.
    assert!(!Lookup::Remote {
        remote: 0x22,
        guid: 0xAC
    }
    .takes(&active()));
}

#[test]
fn listeners() {
    let l = Keys {
        listening_on: Some(0x0106_0000_0000_1234),
        ..Keys::default()
    };
    assert!(Lookup::Listen(0x0106_0000_0000_1234).takes(&l));
    assert!(!Lookup::Listen(0x0106_0000_0000_1235).takes(&l));
    assert!(!Lookup::Listen(0x0106_0000_0000_1234).takes(&active()));
}

/// A REJ from the peer (its ID 0x22, ours 0x11) built as the peer's CM
/// builds it.
fn rej(reason: u16, rejected: MsgResponse, zero_local_id: bool, ari: &[u8]) -> Mad {
    let mut m = [0u8; 256];
    let ids = Ids {
        tid: 7,
        local_id: 0x22,
        remote_id: 0x11,
    };
    format::rej(&mut m, ids, reason, rejected, zero_local_id, ari, &[]).unwrap();
    m
}

fn rej_lookup_of(m: &Mad) -> Lookup {
    let r = Rej(m);
    for_rej(
        r.reason(),
        r.message_rejected(),
        r.local_comm_id(),
        r.remote_comm_id(),
        r.ari_guid(),
    )
}

#[test]
fn rej_of_our_req_finds_us_without_the_peer_id() {
    // The passive side rejects the REQ with its local ID 0.
    let m = rej(rej_reason::CONSUMER_DEFINED, MsgResponse::Req, true, &[]);
    let before_rep = Keys {
        remote_id: 0,
        remote_known: false,
        ..active()
    };
    assert!(rej_lookup_of(&m).takes(&before_rep));
    assert_eq!(rej_lookup_of(&m), Lookup::Local(0x11));
}

#[test]
fn rej_after_rep_needs_both_ids() {
    let m = rej(rej_reason::CONSUMER_DEFINED, MsgResponse::Rep, false, &[]);
    assert!(rej_lookup_of(&m).takes(&active()));
    let other = Keys {
        remote_id: 0x23,
        ..active()
    };
    assert!(!rej_lookup_of(&m).takes(&other));
}

#[test]
fn timeout_rej_finds_the_id_by_guid() {
    // A timeout REJ carries the sender's node GUID in its ARI, and finds
    // the ID by the sender's ID and that GUID.
    let m = rej(
        rej_reason::TIMEOUT,
        MsgResponse::Other,
        false,
        &0xABu64.to_be_bytes(),
    );
    assert_eq!(
        rej_lookup_of(&m),
        Lookup::Remote {
            remote: 0x22,
            guid: 0xAB
        }
    );
    assert!(rej_lookup_of(&m).takes(&active()));
}

#[test]
fn mra_lookups() {
    let mra = |what: MsgResponse| {
        let mut m = [0u8; 256];
        let ids = Ids {
            tid: 7,
            local_id: 0x22,
            remote_id: 0x11,
        };
        format::mra(&mut m, ids, what, &[]).unwrap();
        let r = Mra(&m);
        (
            for_mra(r.message_mraed(), r.local_comm_id(), r.remote_comm_id()),
            mra_learns_remote(r.message_mraed()),
        )
    };
    // An MRA of our REQ: the peer's ID is new to us.
    let fresh = Keys {
        remote_id: 0,
        remote_known: false,
        ..active()
    };
    let (l, learns) = mra(MsgResponse::Req);
    assert!(l.unwrap().takes(&fresh));
    assert!(learns);
    // An MRA of a REP or LAP names both IDs.
    let (l, learns) = mra(MsgResponse::Rep);
    assert!(l.unwrap().takes(&active()));
    assert!(!l.unwrap().takes(&fresh));
    assert!(!learns);
    // The undefined value 3 is dropped.
    assert_eq!(for_mra(3, 0x22, 0x11), None);
}

#[test]
fn repeated_sidr_req() {
    let answering = Keys {
        local_id: 0x33,
        remote_id: 0x44,
        answering_sidr: true,
        ..Keys::default()
    };
    assert!(Lookup::Sidr(0x44).takes(&answering));
    assert!(!Lookup::Sidr(0x45).takes(&answering));
    // Once answered (idle), the request ID is free again.
    let answered = Keys {
        answering_sidr: false,
        ..answering
    };
    assert!(!Lookup::Sidr(0x44).takes(&answered));
}

#[test]
fn stale_connection_needs_the_qpn_and_guid_in_the_remote_table() {
    let stale = Lookup::Qpn {
        qpn: 0x33,
        guid: 0xAB,
    };
    assert!(stale.takes(&active()));
    // Another node's QP of the same number, or another QP of the node.
    assert!(!Lookup::Qpn { qpn: 0x33, guid: 0xAC }.takes(&active()));
    assert!(!Lookup::Qpn { qpn: 0x34, guid: 0xAB }.takes(&active()));
    // Out of the table (idle again, or in timewait): no longer stale.
    let gone = Keys {
        remote_known: false,
        ..active()
    };
    assert!(!stale.takes(&gone));
}
