// SPDX-License-Identifier: GPL-2.0

//! The entry of received packets (the C driver's `rxe_recv.c`), from the UDP
//! sockets or looped back by the transmit path: the checks, in the C
//! driver's order, then the delivery to the QP it is for (or to every QP
//! attached to its multicast group).
//!
//! Checks: a BTH, a destination GID of the port (not for loopback), the
//! header codec's structure checks (opcode, length, version, QPN 0), the QP
//! (in the device's pool, valid, of the opcode's transport type, in a
//! state that takes the packet), the address of a connected QP, the P_Key
//! and, for UD and GSI, the Q_Key; then the ICRC. As in the C driver, a
//! dropped packet is freed as a drop (`kfree_skb`) and logs nothing; only a
//! bad P_Key or Q_Key is counted (the port's `bad_pkey_cntr` and
//! `qkey_viol_cntr`); `rcvd_pkts`/`rcvd_bytes` count the packets accepted.
//!
//! Delivery: a request goes to the QP's responder input, a response (ACK,
//! RDMA READ response, ATOMIC ACK) to its completer input (`sender_sched`
//! counted, as C), and the task that consumes it is scheduled
//! (rxe/qp_io.rs).

use crate::device::Rxe;
use crate::params;
use crate::qp::Qp;
use crate::qp_attr::{
    QpState,
    QpType, //
};
use crate::rdma::{
    bindings,
    ib_device::Device,
    netdev::NetDevice,
    skb::Skb,
    udp::{
        self,
        IpAddr, //
    },
};
use crate::roce;
use crate::wire::{
    bth::{
        BTH_LEN,
        MULTICAST_QPN, //
    },
    ext::GSI_QKEY,
    icrc::{
        IpHdr,
        UDP_HDR_LEN, //
    },
    opcode::{
        self,
        Mask, //
    },
    packet,
};
use core::sync::atomic::{
    AtomicU32,
    Ordering, //
};
use kernel::sync::Arc;

/// A received RoCE v2 packet as the UDP socket or the loopback hands it.
pub(crate) struct Packet {
    /// The skb, its data at the BTH, its network header at the IP header.
    pub(crate) skb: Skb,
    /// The UDP payload length (BTH to ICRC).
    pub(crate) paylen: u32,
    /// The IP source address.
    pub(crate) saddr: IpAddr,
    /// The IP destination address.
    pub(crate) daddr: IpAddr,
    /// Looped back by this device's transmit path, not from the wire.
    pub(crate) loopback: bool,
}

/// A packet accepted for a QP: what the requester, completer and
/// responder take from the QP's input queues.
pub(crate) struct RecvPkt {
    /// The skb, its data at the BTH (BTH to ICRC, checked).
    skb: Skb,
    /// The opcode's mask, with [`Mask::GRH`] (every RoCE v2 packet has an
    /// IP header) and [`Mask::LOOPBACK`] as the C driver adds them.
    pub(crate) mask: Mask,
    /// The port it arrived on (always 1).
    pub(crate) port_num: u8,
    /// The P_Key index it matched (always 0, as C).
    pub(crate) pkey_index: u16,
}

impl RecvPkt {
    /// The packet, BTH to ICRC: its headers and payload.
    #[inline]
    pub(crate) fn view(&self) -> Option<packet::Packet<'_>> {
        // Parsed once on receive; the bytes have not changed since.
        packet::Packet::reparse(self.skb.data())
    }

    /// The IP header (the GRH of a UD receive is built from it): IPv4's
    /// first 20 bytes or IPv6's 40.
    pub(crate) fn ip_header(&self) -> Option<IpHdr<'_>> {
        IpHdr::parse(self.skb.headers())
    }

    /// The VLAN ID of the device it came in on, if a VLAN device.
    pub(crate) fn vlan_id(&self) -> Option<u16> {
        self.skb.rx_vlan_id()
    }

    /// Frees the packet as consumed (`consume_skb`), not as a drop.
    pub(crate) fn consume(self) {
        self.skb.consume();
    }
}

/// Why a packet is dropped (for a debugger: nothing logs it, as in C).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DropReason {
    /// Shorter than a BTH.
    NoBth,
    /// The destination address is none of the port's RoCE v2 GIDs.
    NotOurGid,
    /// The header checks of the codec (opcode, length, version, QPN 0).
    Malformed(packet::ParseError),
    /// No QP has the destination QPN.
    NoQp(u32),
    /// The QP is destroyed, of another transport type, or in a state that
    /// does not take the packet.
    TypeState,
    /// The addresses are not the connected QP's path.
    Addr,
    /// P_Key mismatch (`bad_pkey_cntr` counted).
    Pkey,
    /// Q_Key mismatch (`qkey_viol_cntr` counted).
    Qkey,
    /// A multicast packet without a GRH.
    NoGrh,
    /// The ICRC does not match.
    Icrc,
    /// No multicast group has the destination GID, or no QP of it took it.
    NoMcastGroup,
    /// The QP's input queue could not grow.
    NoMem,
}

/// Receives `pkt` on `dev`, which it arrived at through `ndev`
/// (`rxe_rcv`); any context up to softirq.
pub(crate) fn rcv(dev: &Device<Rxe>, ndev: &NetDevice, pkt: Packet) {
    // The reason is for a debugger; the skb was dropped with `pkt` if it
    // was not delivered.
    let _reason = rcv_or_drop(dev, ndev, pkt);
}

fn rcv_or_drop(dev: &Device<Rxe>, ndev: &NetDevice, pkt: Packet) -> Result<(), DropReason> {
    let bytes = pkt.skb.data();
    if bytes.len() < BTH_LEN {
        return Err(DropReason::NoBth);
    }
    if !pkt.loopback && !dgid_is_ours(dev, ndev, &pkt.daddr) {
        return Err(DropReason::NotOurGid);
    }
    let p = packet::Packet::parse(bytes).map_err(DropReason::Malformed)?;
    let mut mask = p.mask() | Mask::GRH;
    if pkt.loopback {
        mask = mask | Mask::LOOPBACK;
    }
    let rxe = dev.data();
    let qpn = p.qpn();
    let qp = if qpn == MULTICAST_QPN {
        // `hdr_check`: RoCE v2 packets always have their GRH (the IP
        // header), so the C driver's GRH check always passes here.
        if !mask.contains(Mask::GRH) {
            return Err(DropReason::NoGrh);
        }
        None
    } else {
        let qp = rxe.qps.get(qpn).ok_or(DropReason::NoQp(qpn))?;
        check_type_state(&qp, mask, p.opcode())?;
        check_addr(&qp, &pkt)?;
        check_keys(dev, &qp, &p)?;
        Some(qp)
    };
    // The ICRC last, as the C driver: only for a packet some QP takes.
    let hdrs = pkt.skb.headers();
    if !icrc_ok(hdrs, &p) {
        return Err(DropReason::Icrc);
    }
    let skblen = u64::from(pkt.paylen) + hdrs.len() as u64;
    rxe.count_add(params::CNT_RCVD_BYTES, skblen);
    rxe.count(params::CNT_RCVD_PKTS);
    let daddr = pkt.daddr;
    let rpkt = RecvPkt {
        skb: pkt.skb,
        mask,
        port_num: 1,
        pkey_index: 0,
    };
    match qp {
        Some(qp) => deliver(dev, &qp, rpkt),
        None => rcv_mcast(dev, rpkt, &daddr),
    }
}

/// Hands `pkt` to `qp`: a request to its responder, a response to its
/// completer (`rxe_rcv_pkt`).
fn deliver(dev: &Device<Rxe>, qp: &Arc<Qp>, pkt: RecvPkt) -> Result<(), DropReason> {
    if pkt.mask.contains(Mask::REQ) {
        qp.io()
            .queue_req(qp.as_arc_borrow(), pkt)
            .map_err(|_| DropReason::NoMem)
    } else {
        dev.data().count(params::CNT_SENDER_SCHED);
        qp.io()
            .queue_resp(qp.as_arc_borrow(), pkt)
            .map_err(|_| DropReason::NoMem)
    }
}

/// A multicast packet to every QP of its group that takes it
/// (`rxe_rcv_mcast_pkt`): a clone of the skb for each but the last, which
/// gets the packet itself. A QP that refuses it is skipped. `daddr` is
/// its IP destination, the group's address.
fn rcv_mcast(dev: &Device<Rxe>, pkt: RecvPkt, daddr: &IpAddr) -> Result<(), DropReason> {
    let mgid = match *daddr {
        IpAddr::V4(a) => roce::gid_of_ipv4(a),
        IpAddr::V6(a) => a,
    };
    let rxe = dev.data();
    let group = rxe.mcasts.members(&mgid).ok_or(DropReason::NoMcastGroup)?;
    let view = pkt.view().ok_or(DropReason::NoMcastGroup)?;
    let mut takers = group.qpns().iter().filter_map(|&qpn| {
        let qp = rxe.qps.get(qpn)?;
        check_type_state(&qp, pkt.mask, view.opcode()).ok()?;
        check_keys(dev, &qp, &view).ok()?;
        Some(qp)
    });
    let Some(mut qp) = takers.next() else {
        return Err(DropReason::NoMcastGroup);
    };
    for next in takers {
        if let Some(skb) = pkt.skb.clone_atomic() {
            let copy = RecvPkt {
                skb,
                mask: pkt.mask,
                port_num: pkt.port_num,
                pkey_index: pkt.pkey_index,
            };
            // Unreliable datagrams: a QP that cannot take it misses it.
            let _ = deliver(dev, &qp, copy);
        }
        qp = next;
    }
    deliver(dev, &qp, pkt)
}

/// `check_type_state`: the QP is valid, of the opcode's transport, and
/// ready to receive (RTR on) for a request or to send (RTS on) for a
/// response.
fn check_type_state(qp: &Qp, mask: Mask, opcode: u8) -> Result<(), DropReason> {
    if !qp.is_valid() {
        return Err(DropReason::TypeState);
    }
    let transport = opcode & opcode::TRANSPORT_MASK;
    let type_ok = match qp.qp_type() {
        QpType::Rc => transport == opcode::RC,
        QpType::Uc => transport == opcode::UC,
        QpType::Ud | QpType::Gsi => transport == opcode::UD,
    };
    if !type_ok {
        return Err(DropReason::TypeState);
    }
    let least = if mask.contains(Mask::REQ) {
        QpState::Rtr
    } else {
        QpState::Rts
    };
    if qp.state() < least {
        return Err(DropReason::TypeState);
    }
    Ok(())
}

/// `check_addr`: a connected QP takes packets only from its path's
/// destination to its source address, on its port.
fn check_addr(qp: &Qp, pkt: &Packet) -> Result<(), DropReason> {
    if !matches!(qp.qp_type(), QpType::Rc | QpType::Uc) {
        return Ok(());
    }
    let (port_ok, ours, theirs) =
        qp.with_attrs(|a| (a.port_num == 1, a.pri_av.sgid_addr, a.pri_av.dgid_addr()));
    if !port_ok || !same_addr(&pkt.daddr, &ours) || !same_addr(&pkt.saddr, &theirs) {
        return Err(DropReason::Addr);
    }
    Ok(())
}

/// Whether a packet's address is an address vector's.
fn same_addr(a: &IpAddr, b: &crate::av::IpAddr) -> bool {
    match (a, b) {
        (IpAddr::V4(a), crate::av::IpAddr::V4(b)) => a == b,
        (IpAddr::V6(a), crate::av::IpAddr::V6(b)) => a == b,
        _ => false,
    }
}

/// `check_keys`: the P_Key must match the default one (full or limited
/// member), and a datagram's Q_Key the QP's (the GSI QP's is the
/// well-known one). A mismatch is counted in the port's counter.
fn check_keys(dev: &Device<Rxe>, qp: &Qp, p: &packet::Packet<'_>) -> Result<(), DropReason> {
    let rxe = dev.data();
    if !pkey_match(p.bth().pkey, params::port::DEFAULT_PKEY) {
        saturating_inc(&rxe.bad_pkey_cntr);
        return Err(DropReason::Pkey);
    }
    let qp_type = qp.qp_type();
    if matches!(qp_type, QpType::Ud | QpType::Gsi) {
        let want = if p.qpn() == 1 {
            GSI_QKEY
        } else {
            qp.with_attrs(|a| a.qkey)
        };
        if p.deth().map(|d| d.qkey) != Some(want) {
            saturating_inc(&rxe.qkey_viol_cntr);
            return Err(DropReason::Qkey);
        }
    }
    Ok(())
}

/// `pkey_match`: the same 15-bit key, not 0, at least one a full member.
fn pkey_match(a: u16, b: u16) -> bool {
    (a & 0x7fff) != 0 && (a & 0x7fff) == (b & 0x7fff) && ((a | b) & 0x8000) != 0
}

/// The port's 16-bit error counters stop at 0xffff.
fn saturating_inc(c: &AtomicU32) {
    let _ = c.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
        (v < 0xffff).then_some(v + 1)
    });
}

/// `rxe_icrc_check`: over the IP and UDP headers the packet came with
/// (`hdrs`, the skb's bytes from its network header to its data).
fn icrc_ok(hdrs: &[u8], p: &packet::Packet<'_>) -> bool {
    let (Some(ip), Some(udp)) = (
        IpHdr::parse(hdrs),
        hdrs.len()
            .checked_sub(UDP_HDR_LEN)
            .and_then(|at| hdrs.get(at..))
            .and_then(|u| u.first_chunk::<UDP_HDR_LEN>()),
    ) else {
        return false;
    };
    p.icrc_ok(udp::crc32_le, ip, udp)
}

fn gid_of(addr: &IpAddr) -> [u8; 16] {
    match *addr {
        IpAddr::V4(a) => roce::gid_of_ipv4(a),
        IpAddr::V6(a) => a,
    }
}

/// `rxe_chk_dgid`: a multicast address, or one of the port's RoCE v2 GIDs
/// on the netdev the packet came through.
fn dgid_is_ours(dev: &Device<Rxe>, ndev: &NetDevice, daddr: &IpAddr) -> bool {
    let gid = gid_of(daddr);
    roce::gid_is_multicast(&gid)
        || dev.has_gid(
            &gid,
            bindings::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP,
            1,
            ndev,
        )
}
