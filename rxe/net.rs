// SPDX-License-Identifier: GPL-2.0

//! Network I/O: the RoCE v2 UDP sockets of each network namespace, the
//! receive hook, and packet transmission (the C driver's `rxe_net.c` and
//! `rxe_ns.c`).
//!
//! Each namespace with an rxe device has a UDP tunnel socket on port 4791
//! for IPv4 and, if the kernel has IPv6, one for IPv6. They are opened when
//! the first device of the namespace is created and released with the last
//! one, or when the namespace exits. A device takes its namespace's sockets
//! with [`NetUse::take`] and puts them once: when its netdev is unregistered
//! (or leaves the namespace), or when the device is freed.

use crate::device::{
    Rxe,
    RxeDev, //
};
use crate::params;
use crate::rdma::{
    ib_device::Device,
    netdev::NetDevice,
    netns::{
        Pernet,
        PernetState, //
    },
    udp::{
        self,
        Datagram,
        EncapRecv,
        IpAddr,
        Route,
        TxBatch,
        TxOwner,
        TxPacket,
        TxSkb,
        TxSocket,
        UdpTunnel, //
    },
};
use crate::recv::{
    self,
    Packet, //
};
use crate::wire::{
    icrc::{
        self,
        IpHdr,
        UDP_HDR_LEN, //
    },
    opcode::OpcodeInfo,
    ROCE_V2_UDP_DPORT, //
};
use core::sync::atomic::{
    AtomicBool,
    Ordering, //
};
use kernel::{
    new_mutex,
    prelude::*,
    sync::{
        Arc,
        ArcBorrow,
        Mutex, //
    },
};

/// The driver's per-namespace sockets.
pub(crate) static NETNS: Pernet<NsSockets> = Pernet::new();

/// The sockets of one namespace and the devices using them.
#[pin_data]
pub(crate) struct NsSockets {
    #[pin]
    inner: Mutex<NsInner>,
}

struct NsInner {
    /// Devices of the namespace holding the sockets.
    users: u32,
    v4: Option<UdpTunnel<RxeRecv>>,
    v6: Option<UdpTunnel<RxeRecv>>,
    /// The namespace exited: no socket any more, whatever `users` says.
    exited: bool,
}

impl NsSockets {
    fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            inner <- new_mutex!(NsInner {
                users: 0,
                v4: None,
                v6: None,
                exited: false,
            }),
        })
    }
}

impl PernetState for NsSockets {
    fn pernet() -> &'static Pernet<Self> {
        &NETNS
    }

    fn exit(&self) {
        let mut inner = self.inner.lock();
        inner.exited = true;
        inner.v4 = None;
        inner.v6 = None;
    }
}

/// A device's use of its namespace's sockets, put once.
pub(crate) struct NetUse {
    ns: Arc<NsSockets>,
    held: AtomicBool,
}

impl NetUse {
    /// Takes the sockets of `ndev`'s namespace, opening them if it has none
    /// (`rxe_net_init`). As the C driver: no IPv4 socket fails the device;
    /// no IPv6 socket only if the kernel has no IPv6 (`EAFNOSUPPORT`, with a
    /// warning), any other IPv6 failure fails the device; both with the C
    /// driver's errno (-1, `EPERM`).
    pub(crate) fn take(ndev: &NetDevice) -> Result<Self> {
        let ns = NETNS.get_or_create(ndev, || Arc::pin_init(NsSockets::new(), GFP_KERNEL))?;
        {
            let mut inner = ns.inner.lock();
            if inner.exited {
                return Err(ENODEV);
            }
            if inner.users == 0 {
                let net = ndev.net();
                let v4 = UdpTunnel::open(net, false, ROCE_V2_UDP_DPORT).map_err(|_| {
                    pr_err!("Failed to create IPv4 UDP tunnel\n");
                    EPERM
                })?;
                let v6 = match UdpTunnel::open(net, true, ROCE_V2_UDP_DPORT) {
                    Ok(s) => Some(s),
                    Err(e) if e == EAFNOSUPPORT => {
                        pr_warn!("IPv6 is not supported, can not create a UDPv6 socket\n");
                        None
                    }
                    Err(_) => {
                        pr_err!("Failed to create IPv6 UDP tunnel\n");
                        return Err(EPERM);
                    }
                };
                inner.v4 = Some(v4);
                inner.v6 = v6;
            }
            inner.users += 1;
        }
        Ok(Self {
            ns,
            held: AtomicBool::new(true),
        })
    }

    /// Puts the sockets (`rxe_net_del`): the last device of the namespace
    /// releases them. Only the first call puts.
    pub(crate) fn put(&self) {
        if !self.held.swap(false, Ordering::AcqRel) {
            return;
        }
        let mut inner = self.ns.inner.lock();
        if inner.exited {
            return;
        }
        inner.users = inner.users.saturating_sub(1);
        if inner.users == 0 {
            inner.v4 = None;
            inner.v6 = None;
        }
    }
}

impl Drop for NetUse {
    fn drop(&mut self) {
        self.put();
    }
}

/// The receiver of the sockets' datagrams (`rxe_udp_encap_recv`).
pub(crate) struct RxeRecv;

impl EncapRecv for RxeRecv {
    fn recv(ndev: &NetDevice, dgram: Datagram) {
        // The device of the netdev, or of the real device under a VLAN; a
        // datagram for no rxe device is dropped (with `dgram`).
        let Some(dev) = Device::<Rxe>::get_by_netdev(ndev)
            .or_else(|| ndev.vlan_real_dev().and_then(Device::<Rxe>::get_by_netdev))
        else {
            return;
        };
        recv::rcv(
            &dev,
            ndev,
            Packet {
                skb: dgram.skb,
                paylen: dgram.paylen,
                saddr: dgram.saddr,
                daddr: dgram.daddr,
                loopback: false,
            },
        );
    }
}

/// Where a packet goes: the parts of an address vector the network needs.
pub(crate) struct Dest {
    /// The AV's source GID index: the packet leaves from that GID's netdev.
    pub(crate) sgid_index: u8,
    /// Source address: the address of the GID at the AV's SGID index.
    pub(crate) src: IpAddr,
    /// Destination address (the AV's DGID).
    pub(crate) dst: IpAddr,
    /// Destination MAC: the device's own means loopback.
    pub(crate) dmac: [u8; 6],
    /// Traffic class (IPv4 TOS).
    pub(crate) tclass: u8,
    /// Hop limit (IPv4 TTL).
    pub(crate) hop_limit: u8,
}

/// The sending side of a packet: its QP's UDP source port and socket,
/// and whether it keeps its route.
pub(crate) struct Origin<'a, O: TxOwner> {
    /// UDP source port.
    pub(crate) sport: u16,
    /// A connected QP's packets: the route is the one kept in `socket`
    /// while it is valid (`rxe_find_route`).
    pub(crate) keep_route: bool,
    /// The QP's socket, which the skb is charged to, with that QP.
    pub(crate) socket: &'a TxSocket<O>,
    /// The QP.
    pub(crate) owner: ArcBorrow<'a, O>,
}

/// Sends one RoCE v2 packet of `paylen` bytes (BTH to ICRC) from `dev` to
/// `dest`, on behalf of `from`: `build` writes the packet but its ICRC and
/// returns its opcode's table entry (the layout it was built with), then
/// the route is looked up, the UDP and IP headers pushed, the ICRC
/// computed over them (`rxe_icrc_generate`), the skb charged to `from`'s
/// socket, and the packet sent from the netdev of the source GID (port
/// 1's, or an upper device of it such as a VLAN device, as the C driver's
/// `rxe_init_packet`), or looped back to this device's receive path when
/// `dest`'s MAC is the netdev's own (`rxe_loopback`). Counts `sent_pkts`
/// and `sent_bytes` (IP and UDP headers included, as the C driver), or
/// `send_err` if the IP layer refuses it.
///
/// With a `batch` (a connected QP's task call: the requester's packets,
/// the responder's), the packet joins the packets held there, or, if it
/// cannot (longer than the first, full), they are sent and it starts the
/// next batch; [`flush`] sends what is held, and counts it. A looped-back
/// packet is never held (what is held is sent first).
///
/// Errors: `ENODEV` without a source GID or its netdev, `ENOMEM` without an
/// skb, `EHOSTUNREACH` without a route, `EINVAL` if the packet is shorter
/// than its opcode's headers and ICRC, `build`'s own; `EIO` if the IP layer
/// refused it (not seen for a packet held in a batch: [`flush`] counts it).
pub(crate) fn send<O: TxOwner>(
    dev: &Device<Rxe>,
    dest: &Dest,
    from: Origin<'_, O>,
    paylen: u32,
    mut batch: Option<&mut TxBatch>,
    build: impl FnOnce(&mut [u8]) -> Result<&'static OpcodeInfo>,
) -> Result {
    let ndev = dev
        .gid_netdev(params::NUM_PORTS, dest.sgid_index)
        .ok_or(ENODEV)?;
    let mut skb = TxSkb::alloc(&ndev, &dest.dst, paylen)?;
    let info = build(skb.payload_mut())?;
    let route = if from.keep_route {
        from.socket.route(&ndev, &dest.src, &dest.dst)?
    } else {
        Route::output(&ndev, &dest.src, &dest.dst)?
    };
    let mut pkt = skb.prepare(
        route,
        &dest.src,
        &dest.dst,
        from.sport,
        ROCE_V2_UDP_DPORT,
        dest.tclass,
        dest.hop_limit,
    )?;
    let looped = ndev.has_mac(&dest.dmac);
    let joins = match &batch {
        Some(b) if !looped && b.takes(&pkt) => {
            b.ready(&mut pkt);
            true
        }
        _ => false,
    };
    {
        let (ip, udp_hdr, payload) = pkt.parts_mut();
        let ip = IpHdr::parse(ip).ok_or(EINVAL)?;
        let udp_hdr = udp_hdr.first_chunk::<UDP_HDR_LEN>().ok_or(EINVAL)?;
        let crc = icrc::icrc(udp::crc32_le, ip, udp_hdr, payload, info).ok_or(EINVAL)?;
        icrc::store(payload, crc);
    }
    if let Some(b) = batch.as_deref_mut() {
        if joins {
            match b.add(pkt, &*from.owner) {
                Ok(()) => return Ok(()),
                Err(p) => pkt = p,
            }
        }
        // What is held leaves before this packet.
        flush(dev, b);
    }
    pkt.set_owner(from.socket, from.owner)?;
    if looped {
        return loop_back(dev, &ndev, pkt, paylen, dest);
    }
    if let Some(b) = batch {
        // To be sent with the packets after it, or by `flush`.
        match b.start(pkt) {
            Ok(()) => return Ok(()),
            Err(p) => pkt = p,
        }
    }
    send_one(&dev.data(), pkt, paylen, dest)
}

/// Sends the packets `batch` holds, if any (see [`send`]), counting them in
/// `sent_pkts` and `sent_bytes`, or `send_err` if the IP layer dropped them
/// at once: the task that sent them has gone on, and they are recovered as
/// lost (an RC QP's retransmission).
pub(crate) fn flush(dev: &Device<Rxe>, batch: &mut TxBatch) {
    let Some((packets, bytes, r)) = batch.send() else {
        return;
    };
    let rxe = dev.data();
    match r {
        Ok(()) => {
            rxe.count_add(params::CNT_SENT_PKTS, u64::from(packets));
            rxe.count_add(params::CNT_SENT_BYTES, u64::from(bytes));
        }
        Err(_) => rxe.count_add(params::CNT_SEND_ERR, u64::from(packets)),
    }
}

/// Sends one packet to the network, counting it.
fn send_one(rxe: &RxeDev, pkt: TxPacket, paylen: u32, dest: &Dest) -> Result {
    let bytes = u64::from(paylen + dest.dst.ip_udp_hlen());
    match pkt.send() {
        Ok(()) => {
            rxe.count(params::CNT_SENT_PKTS);
            rxe.count_add(params::CNT_SENT_BYTES, bytes);
            Ok(())
        }
        Err(e) => {
            rxe.count(params::CNT_SEND_ERR);
            Err(e)
        }
    }
}

/// Hands a packet to this device's own receive path (`rxe_loopback`),
/// counting it as sent.
fn loop_back(
    dev: &Device<Rxe>,
    ndev: &NetDevice,
    pkt: TxPacket,
    paylen: u32,
    dest: &Dest,
) -> Result {
    let rxe = dev.data();
    rxe.count(params::CNT_SENT_PKTS);
    rxe.count_add(
        params::CNT_SENT_BYTES,
        u64::from(paylen + dest.dst.ip_udp_hlen()),
    );
    let pkt = Packet {
        skb: pkt.into_looped(),
        paylen,
        saddr: dest.src,
        daddr: dest.dst,
        loopback: true,
    };
    recv::rcv(dev, ndev, pkt);
    Ok(())
}
