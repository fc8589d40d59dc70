// SPDX-License-Identifier: GPL-2.0

//! Building and sending one packet of a QP (the C driver's
//! `rxe_init_packet`, `rxe_prepare` and `rxe_xmit_packet`, for the
//! requester, completer and responder).
//!
//! A packet is its BTH and extension headers (rxe/wire's encoders), a
//! payload the caller fills, and the ICRC; it goes to the QP's path (or a
//! UD work request's address vector) through rxe/net.rs, from the QP's UDP
//! source port, or straight to this device's receive path when the
//! destination MAC is the netdev's own (`rxe_loopback`).

use crate::av::{
    self,
    Av, //
};
use crate::device::Rxe;
use crate::net::{
    self,
    Dest, //
};
use crate::qp::Qp;
use crate::rdma::{
    ib_device::Device,
    udp::{
        IpAddr,
        TxBatch, //
    },
};
use crate::wire::{
    bth::Bth,
    packet::{
        BuildError,
        Layout,
        PacketMut, //
    },
};
use kernel::{
    prelude::*,
    sync::Arc, //
};

/// Where an address vector's packets go: its IP addresses (those of its
/// GIDs, `rxe_av_fill_ip_info`), MAC, traffic class and hop limit.
#[inline]
pub(crate) fn dest_of(av: &Av) -> Dest {
    Dest {
        sgid_index: av.sgid_index,
        src: ip_of(av.sgid_addr),
        dst: ip_of(av.dgid_addr()),
        dmac: av.dmac,
        tclass: av.traffic_class,
        hop_limit: av.hop_limit,
    }
}

#[inline]
fn ip_of(a: av::IpAddr) -> IpAddr {
    match a {
        av::IpAddr::V4(a) => IpAddr::V4(a),
        av::IpAddr::V6(a) => IpAddr::V6(a),
    }
}

/// The headers of a packet beyond its BTH.
pub(crate) type Headers<'a> = &'a mut dyn FnMut(&mut PacketMut<'_>) -> Result<(), BuildError>;

/// Builds and sends one packet of `qp` to `dest`: `bth` (its opcode and pad
/// count set from the layout of `opcode` with `payload_len` bytes),
/// `headers` writes the extension headers, `fill` the payload; the ICRC is
/// computed over the headers it is sent with. The error of the first step
/// that failed: `EINVAL` for a packet that cannot be built (unknown opcode,
/// too long, a header the opcode lacks), `fill`'s, or the network's (see
/// [`net::send`]). With a `batch`, the packet may be held there with those
/// before it, to leave with them ([`net::flush`]).
#[expect(
    clippy::too_many_arguments,
    reason = "a packet's fields, its QP and its batch"
)]
pub(crate) fn xmit(
    dev: &Device<Rxe>,
    qp: &Arc<Qp>,
    dest: &Dest,
    bth: &Bth,
    payload_len: usize,
    headers: Headers<'_>,
    batch: Option<&mut TxBatch>,
    fill: impl FnOnce(&mut [u8]) -> Result,
) -> Result {
    let layout = Layout::new(bth.opcode, payload_len).map_err(|_| EINVAL)?;
    let paylen = u32::try_from(layout.len()).map_err(|_| EINVAL)?;
    // Charged to the QP (`rxe_send`, `rxe_loopback`) until the network
    // stack frees it; a destroyed QP has no socket and sends nothing.
    let tx = qp.tx_socket();
    let from = net::Origin {
        sport: qp.src_port(),
        keep_route: qp.keeps_route(),
        socket: tx.as_ref().ok_or(EINVAL)?,
        owner: qp.as_arc_borrow(),
    };
    net::send(dev, dest, from, paylen, batch, |buf| {
        let mut pkt = PacketMut::new(buf, layout, bth).map_err(|_| EINVAL)?;
        headers(&mut pkt).map_err(|_| EINVAL)?;
        fill(pkt.payload_mut())?;
        Ok(layout.info())
    })
}
