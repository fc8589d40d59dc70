// SPDX-License-Identifier: GPL-2.0

//! The entry of received packets (the C driver's `rxe_rcv`), from the UDP
//! sockets or looped back by the transmit path.
//!
//! Until the transport exists (issue #4), only the checks that need no QP
//! are made, in the C driver's order, and every packet ends dropped: there
//! is no QP to deliver to. As in the C driver, a dropped packet is freed as
//! a drop (`kfree_skb`), counts in no port counter and logs nothing;
//! `rcvd_pkts`/`rcvd_bytes` count only packets handed to a QP.

use crate::device::Rxe;
use crate::rdma::{
    bindings,
    ib_device::Device,
    netdev::NetDevice,
    skb::Skb,
    udp::IpAddr, //
};
use crate::roce;
use crate::wire::{
    bth::{
        BTH_LEN,
        MULTICAST_QPN, //
    },
    packet::{
        self,
        ParseError, //
    },
};

/// A received RoCE v2 packet.
pub(crate) struct Packet {
    /// The skb, its data at the BTH.
    pub(crate) skb: Skb,
    /// The UDP payload length (BTH to ICRC).
    #[expect(dead_code, reason = "for the header length checks (issue #4)")]
    pub(crate) paylen: u32,
    /// The IP source address.
    #[expect(dead_code, reason = "for the QP address checks (issue #4)")]
    pub(crate) saddr: IpAddr,
    /// The IP destination address.
    pub(crate) daddr: IpAddr,
    /// Looped back by this device's transmit path, not from the wire.
    pub(crate) loopback: bool,
}

/// Why a packet is not delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Drop {
    /// Shorter than a BTH.
    NoBth,
    /// The destination address is none of the port's RoCE v2 GIDs.
    NotOurGid,
    /// The header checks of the codec (opcode, length, version, QPN 0).
    Malformed(ParseError),
    /// No QP has the destination QPN (the QP lookup and checks, the ICRC
    /// and the delivery come with the transport).
    NoQp(u32),
    /// No multicast group has the destination GID (the ICRC and the group
    /// lookup come with the transport).
    NoMcastGroup,
}

/// Receives `pkt` on `dev`, which it arrived at through `ndev`.
pub(crate) fn rcv(dev: &Device<Rxe>, ndev: &NetDevice, pkt: Packet) {
    // The reason is for the transport to come (and a debugger); the skb is
    // dropped with `pkt` whatever it is.
    let _reason = check(dev, ndev, &pkt);
}

/// The checks of `rxe_rcv`, in its order, up to the QP lookup.
fn check(dev: &Device<Rxe>, ndev: &NetDevice, pkt: &Packet) -> Drop {
    let bytes = pkt.skb.data();
    if bytes.len() < BTH_LEN {
        return Drop::NoBth;
    }
    if !pkt.loopback && !dgid_is_ours(dev, ndev, &pkt.daddr) {
        return Drop::NotOurGid;
    }
    match packet::Packet::parse(bytes) {
        Err(e) => Drop::Malformed(e),
        Ok(p) if p.qpn() == MULTICAST_QPN => Drop::NoMcastGroup,
        Ok(p) => Drop::NoQp(p.qpn()),
    }
}

/// `rxe_chk_dgid`: a multicast address, or one of the port's RoCE v2 GIDs
/// on the netdev the packet came through.
fn dgid_is_ours(dev: &Device<Rxe>, ndev: &NetDevice, daddr: &IpAddr) -> bool {
    let gid = match *daddr {
        IpAddr::V4(a) => roce::gid_of_ipv4(a),
        IpAddr::V6(a) => a,
    };
    roce::gid_is_multicast(&gid)
        || dev.has_gid(
            &gid,
            bindings::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP,
            1,
            ndev,
        )
}
