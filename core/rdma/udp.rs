// SPDX-License-Identifier: GPL-2.0

//! RoCE v2's UDP encapsulation over the kernel's UDP tunnel API
//! (`include/net/udp_tunnel.h`).
//!
//! Receive: a [`UdpTunnel<H>`] is a kernel UDP socket bound to a port of a
//! namespace whose `encap_rcv` hook hands every datagram, as a
//! [`Datagram`], to [`EncapRecv::recv`] (in softirq context). Dropping it
//! releases the socket.
//!
//! Transmit: [`TxSkb::alloc`] an skb with room for the headers, write the
//! payload, find a [`Route`], then [`TxSkb::prepare`] pushes the UDP and IP
//! headers as the C rxe's `prepare4`/`prepare6` (the IP ID is chosen then,
//! so that the ICRC, which covers it, can be computed before sending), and
//! [`TxPacket::send`] sends it (`ip_local_out`) or [`TxPacket::into_looped`]
//! turns it into a received packet. An skb may be charged to an owner
//! ([`TxPacket::set_owner`] with a [`TxSocket`]), told when the skb is
//! freed, as the C rxe counts the skbs in flight per QP.
//!
//! Everything here is generic or `#[inline]`: the `rdma` module is also
//! built into `rdma_ucm`, which does not link the glue it calls.

use super::{
    bindings,
    netdev::NetDevice,
    netns::Net,
    skb::Skb, //
};
use core::{
    marker::PhantomData,
    ptr::NonNull,
    sync::atomic::{
        AtomicU32,
        Ordering, //
    }, //
};
use kernel::{
    ffi,
    prelude::*,
    sync::{
        Arc,
        ArcBorrow, //
    },
};

/// Ethernet, UDP, IPv4 and IPv6 header sizes (`rxe_init_packet`'s room).
const ETH_HLEN: u32 = 14;
const UDP_HLEN: u32 = 8;
const IPV4_HLEN: u32 = 20;
const IPV6_HLEN: u32 = 40;

/// An IP address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpAddr {
    /// IPv4, in network byte order.
    V4([u8; 4]),
    /// IPv6.
    V6([u8; 16]),
}

impl IpAddr {
    /// The IP and UDP header bytes a datagram to this address carries before
    /// its payload.
    pub fn ip_udp_hlen(&self) -> u32 {
        match self {
            Self::V4(_) => IPV4_HLEN + UDP_HLEN,
            Self::V6(_) => IPV6_HLEN + UDP_HLEN,
        }
    }
}

/// A received UDP datagram: its skb, with the data at the UDP payload.
pub struct Datagram {
    /// The skb; its data starts at the UDP payload.
    pub skb: Skb,
    /// The UDP payload length (the UDP length less its header).
    pub paylen: u32,
    /// Source address of the IP header.
    pub saddr: IpAddr,
    /// Destination address of the IP header.
    pub daddr: IpAddr,
}

impl Datagram {
    /// Takes a datagram as the UDP layer hands it to `encap_rcv`: data at
    /// the UDP header, linear or not. Linearises it and pulls the UDP
    /// header, and returns it with the device it came in on; `None` (the
    /// skb dropped) if that cannot be done. One glue call a packet
    /// (`rrxe_udp_rx_take`), not one a field: every packet takes this path.
    ///
    /// # Safety
    ///
    /// `skb` must be a received IPv4 or IPv6 UDP datagram (network and
    /// transport headers set, data at the UDP header), in the receive
    /// softirq (RCU read side), where its device stays valid.
    #[inline]
    unsafe fn from_encap(skb: Skb) -> Option<(*mut bindings::net_device, Self)> {
        let mut rx = core::mem::MaybeUninit::<bindings::rrxe_udp_rx>::uninit();
        // SAFETY: the skb is valid and owned; `rx` is written before a 0
        // return.
        if unsafe { bindings::rrxe_udp_rx_take(skb.as_raw(), rx.as_mut_ptr()) } != 0 {
            return None;
        }
        // SAFETY: 0 was returned: every field was written.
        let rx = unsafe { rx.assume_init() };
        let (saddr, daddr) = if rx.ipv6 {
            (IpAddr::V6(rx.saddr), IpAddr::V6(rx.daddr))
        } else {
            // An IPv4 address is the first four bytes.
            let v4 = |a: [u8; 16]| {
                let [a0, a1, a2, a3, ..] = a;
                IpAddr::V4([a0, a1, a2, a3])
            };
            (v4(rx.saddr), v4(rx.daddr))
        };
        Some((
            rx.dev,
            Self {
                skb,
                paylen: rx.paylen,
                saddr,
                daddr,
            },
        ))
    }
}

/// The receiver of a [`UdpTunnel`]'s datagrams.
pub trait EncapRecv: 'static {
    /// A datagram arrived through `ndev` (softirq context, RCU read side).
    /// Dropping it drops the packet.
    fn recv(ndev: &NetDevice, dgram: Datagram);
}

/// A kernel UDP tunnel socket, receiving through `H`.
///
/// It must be dropped before its namespace's subsystems exit (keep it in a
/// [`super::netns::PernetState`], released by its exit): a kernel socket
/// holds no reference on its namespace.
///
/// # Invariants
///
/// `sk` is a socket made by `rrxe_udp_tunnel_open` with `encap_rcv::<H>`,
/// released only by drop.
pub struct UdpTunnel<H: EncapRecv> {
    sk: NonNull<bindings::sock>,
    _h: PhantomData<H>,
}

// SAFETY: the socket is only released, which may happen from any process
// context.
unsafe impl<H: EncapRecv> Send for UdpTunnel<H> {}
// SAFETY: `&UdpTunnel` exposes nothing.
unsafe impl<H: EncapRecv> Sync for UdpTunnel<H> {}

impl<H: EncapRecv> UdpTunnel<H> {
    /// Opens a UDP tunnel socket on `port` (host order) of `net`, IPv6
    /// (v6only) if `ipv6`. The errno of `udp_sock_create` on failure
    /// (`EAFNOSUPPORT` for IPv6 without IPv6, `EADDRINUSE` ...).
    pub fn open(net: &Net, ipv6: bool, port: u16) -> Result<Self> {
        let mut sk = core::ptr::null_mut();
        // SAFETY: `net` is valid; the hook is a function of the right type
        // for as long as the module is loaded, which outlives the socket
        // (released on drop); `sk` is writable.
        let ret = unsafe {
            bindings::rrxe_udp_tunnel_open(
                net.as_raw(),
                ipv6,
                port.to_be(),
                Some(Self::encap_rcv),
                &mut sk,
            )
        };
        kernel::error::to_result(ret)?;
        // INVARIANT: opened with `encap_rcv::<H>`.
        Ok(Self {
            sk: NonNull::new(sk).ok_or(ENOMEM)?,
            _h: PhantomData,
        })
    }

    /// # Safety
    ///
    /// Called by the UDP layer with a tunnel socket of this type and a
    /// received datagram it gives away.
    unsafe extern "C" fn encap_rcv(
        _sk: *mut bindings::sock,
        skb: *mut bindings::sk_buff,
    ) -> ffi::c_int {
        let Some(skb) = NonNull::new(skb) else {
            return 0;
        };
        // SAFETY: the skb is given to us (0 is returned: consumed).
        let skb = unsafe { Skb::from_raw(skb) };
        // SAFETY: the UDP layer hands `encap_rcv` received UDP datagrams,
        // in the receive softirq.
        if let Some((ndev, dgram)) = unsafe { Datagram::from_encap(skb) } {
            // SAFETY: a received skb's device (not null: checked by
            // `from_encap`), valid in the receive softirq (RCU read side)
            // this runs in, for the duration of the call.
            let ndev = unsafe { NetDevice::from_raw(ndev) };
            H::recv(ndev, dgram);
        }
        0
    }
}

impl<H: EncapRecv> Drop for UdpTunnel<H> {
    fn drop(&mut self) {
        // SAFETY: the socket is ours (type invariant) and released once.
        unsafe { bindings::rrxe_udp_tunnel_release(self.sk.as_ptr()) };
    }
}

/// A route (`struct dst_entry` reference) for a UDP flow.
///
/// # Invariants
///
/// `dst` is a held route of the family of `v6`.
pub struct Route {
    dst: NonNull<bindings::dst_entry>,
    v6: bool,
}

// SAFETY: a route reference may be released from any context.
unsafe impl Send for Route {}

impl Route {
    /// The route of a UDP flow from `src` to `dst` out of `ndev`
    /// (`ip_route_output_key` / `ip6_dst_lookup_flow` in `ndev`'s
    /// namespace). `EHOSTUNREACH` if there is none, as the C rxe; `EINVAL`
    /// for addresses of two families.
    #[inline]
    pub fn output(ndev: &NetDevice, src: &IpAddr, dst: &IpAddr) -> Result<Self> {
        let net = ndev.net().as_raw();
        let oif = ndev.ifindex();
        let (ptr, v6) = match (src, dst) {
            // SAFETY: the namespace is valid (held netdev); the addresses
            // are read during the call.
            (IpAddr::V4(s), IpAddr::V4(d)) => unsafe {
                (
                    bindings::rrxe_route4(net, oif, u32::from_ne_bytes(*s), u32::from_ne_bytes(*d)),
                    false,
                )
            },
            // SAFETY: as above; `in6_addr` is 16 bytes of any value.
            (IpAddr::V6(s), IpAddr::V6(d)) => unsafe {
                (
                    bindings::rrxe_route6(net, oif, s.as_ptr().cast(), d.as_ptr().cast()),
                    true,
                )
            },
            _ => return Err(EINVAL),
        };
        let dst = kernel::error::from_err_ptr(ptr).map_err(|_| EHOSTUNREACH)?;
        // INVARIANT: a held route of that family.
        Ok(Self {
            dst: NonNull::new(dst).ok_or(EHOSTUNREACH)?,
            v6,
        })
    }

    #[inline]
    fn into_raw(self) -> *mut bindings::dst_entry {
        let ptr = self.dst.as_ptr();
        core::mem::forget(self);
        ptr
    }
}

impl Drop for Route {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the reference is held (type invariant) and put here.
        unsafe { bindings::rrxe_dst_release(self.dst.as_ptr()) };
    }
}

/// An skb being built for transmission: headroom for the Ethernet, IP and
/// UDP headers, then the payload.
///
/// # Invariants
///
/// The skb is not shared (freshly allocated), linear, and has no owner.
pub struct TxSkb {
    skb: Skb,
    v6: bool,
}

impl TxSkb {
    /// An skb for `paylen` bytes of payload to an address of the family of
    /// `dst`, with the headroom `ndev` needs (`rxe_init_packet`). `ENOMEM`
    /// if it cannot be allocated (atomic allocation).
    #[inline]
    pub fn alloc(ndev: &NetDevice, dst: &IpAddr, paylen: u32) -> Result<Self> {
        let v6 = matches!(dst, IpAddr::V6(_));
        let hlen = ETH_HLEN + dst.ip_udp_hlen();
        // SAFETY: the netdev is valid (held by the caller).
        let skb = unsafe { bindings::rrxe_alloc_tx_skb(ndev.as_raw(), hlen, paylen, v6) };
        // SAFETY: a new skb, ours.
        let skb = unsafe { Skb::from_raw(NonNull::new(skb).ok_or(ENOMEM)?) };
        // INVARIANT: freshly allocated, no owner.
        Ok(Self { skb, v6 })
    }

    /// The payload, to be written.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let data = self.skb.data();
        let (ptr, len) = (data.as_ptr().cast_mut(), data.len());
        if len == 0 {
            return &mut [];
        }
        // SAFETY: the linear data of an unshared skb (type invariant) that
        // `&mut self` borrows exclusively.
        unsafe { core::slice::from_raw_parts_mut(ptr, len) }
    }

    /// The payload length.
    #[inline]
    pub fn len(&self) -> u32 {
        self.skb.len()
    }

    /// Whether the payload is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.skb.is_empty()
    }
}

/// The kernel's CRC-32 (`crc32_le`: reflected polynomial 0xedb88320, no
/// inversion on entry or exit), for the RoCE ICRC.
#[inline]
pub fn crc32_le(crc: u32, bytes: &[u8]) -> u32 {
    // SAFETY: `bytes` is readable for its length during the call.
    unsafe { bindings::crc32_le(crc, bytes.as_ptr().cast(), bytes.len()) }
}

impl TxSkb {
    /// Pushes the UDP header (source port `sport`, destination `dport`, host
    /// order, no checksum) and the IP header from `src` to `dst` (IPv4: DF,
    /// TOS `tos`, TTL `ttl`, its IP ID chosen now; IPv6: traffic class
    /// `tos`, hop limit `ttl`, flow label 0) and gives the skb `route`, as
    /// the C rxe's `prepare4`/`prepare6`. `EINVAL` (and the skb dropped) if
    /// the families of the addresses, route and skb differ.
    #[inline]
    #[expect(
        clippy::too_many_arguments,
        reason = "the fields of the IP and UDP headers"
    )]
    pub fn prepare(
        self,
        route: Route,
        src: &IpAddr,
        dst: &IpAddr,
        sport: u16,
        dport: u16,
        tos: u8,
        ttl: u8,
    ) -> Result<TxPacket> {
        let (sport, dport) = (sport.to_be(), dport.to_be());
        let raw = self.skb.as_raw();
        match (src, dst, route.v6, self.v6) {
            // SAFETY: the skb is ours, unshared, with headroom for the
            // headers (`alloc`); the route reference is given to it.
            (IpAddr::V4(s), IpAddr::V4(d), false, false) => unsafe {
                bindings::rrxe_prepare4(
                    raw,
                    route.into_raw(),
                    u32::from_ne_bytes(*s),
                    u32::from_ne_bytes(*d),
                    tos,
                    ttl,
                    sport,
                    dport,
                )
            },
            // SAFETY: as above; the addresses are read during the call.
            (IpAddr::V6(s), IpAddr::V6(d), true, true) => unsafe {
                bindings::rrxe_prepare6(
                    raw,
                    route.into_raw(),
                    s.as_ptr().cast(),
                    d.as_ptr().cast(),
                    tos,
                    ttl,
                    sport,
                    dport,
                )
            },
            _ => return Err(EINVAL),
        }
        let ip_hlen = if self.v6 { IPV6_HLEN } else { IPV4_HLEN } as usize;
        // INVARIANT: the headers are pushed; no owner yet.
        Ok(TxPacket {
            skb: self.skb,
            ip_hlen,
            owned: false,
        })
    }
}

/// An skb with its IP and UDP headers, ready to send or loop back.
///
/// # Invariants
///
/// The skb is unshared, linear, its data at an IP header of `ip_hlen` bytes
/// followed by a UDP header (pushed by [`TxSkb::prepare`]), with a route.
/// It has no owner, or a [`TxSocket`] owner set by [`TxPacket::set_owner`]
/// if `owned`.
pub struct TxPacket {
    skb: Skb,
    ip_hlen: usize,
    owned: bool,
}

impl TxPacket {
    /// The IP header, the UDP header and the UDP payload, the last to be
    /// completed (the ICRC, which covers the other two).
    #[inline]
    pub fn parts_mut(&mut self) -> (&[u8], &[u8], &mut [u8]) {
        let data = self.skb.data();
        let (ptr, len) = (data.as_ptr().cast_mut(), data.len());
        if len < self.ip_hlen + UDP_HLEN as usize {
            return (&[], &[], &mut []);
        }
        // SAFETY: the linear data of an unshared skb (type invariant),
        // borrowed exclusively through `&mut self`.
        let all = unsafe { core::slice::from_raw_parts_mut(ptr, len) };
        let (ip, rest) = all.split_at_mut(self.ip_hlen);
        let (udp, payload) = rest.split_at_mut(UDP_HLEN as usize);
        (ip, udp, payload)
    }

    /// The IPv4 header's identification, `None` for IPv6.
    #[inline]
    fn ipv4_id(&self) -> Option<u16> {
        let d = self.skb.data();
        (self.ip_hlen == IPV4_HLEN as usize)
            .then(|| d.get(4..6).map(|b| u16::from_be_bytes([b[0], b[1]])))
            .flatten()
    }

    /// Sets the IPv4 header's identification (before the ICRC, which covers
    /// it, is computed; the header checksum is the IP layer's). Nothing for
    /// IPv6.
    #[inline]
    fn set_ipv4_id(&mut self, id: u16) {
        let data = self.skb.data();
        let (ptr, len) = (data.as_ptr().cast_mut(), data.len());
        if self.ip_hlen != IPV4_HLEN as usize || len < IPV4_HLEN as usize {
            return;
        }
        // SAFETY: the linear data of an unshared skb (type invariant),
        // borrowed exclusively through `&mut self`, as in `parts_mut`.
        let all = unsafe { core::slice::from_raw_parts_mut(ptr, len) };
        all[4..6].copy_from_slice(&id.to_be_bytes());
    }

    /// The flow's addresses and ports: the IP header's source and
    /// destination addresses, then the UDP header's ports (IPv4: bytes 12
    /// to 24 of the packet, IPv6: 8 to 44), what the segmentation of a
    /// batch gives every packet from the first.
    #[inline]
    fn flow(&self) -> &[u8] {
        let start = if self.ip_hlen == IPV4_HLEN as usize {
            12
        } else {
            8
        };
        // The UDP ports are the four bytes after the IP header.
        self.skb.data().get(start..self.ip_hlen + 4).unwrap_or(&[])
    }

    /// The UDP payload's length.
    #[inline]
    fn udp_payload_len(&self) -> u32 {
        self.skb
            .len()
            .saturating_sub(self.ip_hlen as u32 + UDP_HLEN)
    }

    /// Sends the packet (`ip_local_out` / `ip6_local_out`, as the C rxe's
    /// `rxe_send`). `EIO` if the IP layer drops it at once (the C driver
    /// counts `send_err` then); a later drop is not seen.
    #[inline]
    pub fn send(self) -> Result {
        // SAFETY: a prepared skb with its route (type invariant), given away.
        let ret = unsafe { bindings::rrxe_ip_local_out(self.skb.into_raw()) };
        xmit_result(ret)
    }

    /// The packet as if received: the IP and UDP headers pulled, data at the
    /// UDP payload, network header still at the IP header (the C driver's
    /// `rxe_loopback`).
    #[inline]
    pub fn into_looped(mut self) -> Skb {
        // The headers were pushed by `prepare` (type invariant).
        let _ = self.skb.pull(self.ip_hlen as u32 + UDP_HLEN);
        self.skb
    }

    /// Charges the skb to `sock`'s owner, `owner` (the caller's reference
    /// to it: taking it from the socket's user data costs two more calls a
    /// packet): [`TxOwner::skb_queued`] now, [`TxOwner::skb_done`] when the
    /// skb is freed, wherever that is (sent, dropped on the way, looped
    /// back). `EBUSY` if it has an owner already, `EINVAL` if `owner` is
    /// not the socket's.
    pub fn set_owner<O: TxOwner>(&mut self, sock: &TxSocket<O>, owner: ArcBorrow<'_, O>) -> Result {
        if self.owned {
            return Err(EBUSY);
        }
        let sk = sock.sk();
        // The destructor gives the count back through `sk_user_data`: it
        // must be of that very owner.
        // SAFETY: the socket is valid until `sock` drops (type invariant).
        let theirs = unsafe { bindings::rrxe_sk_user_data(sk) };
        if !core::ptr::eq(theirs.cast_const().cast::<O>(), &*owner) {
            return Err(EINVAL);
        }
        let owner: Arc<O> = owner.into();
        owner.skb_queued(1);
        // The skb keeps a strong count of the owner (at the very address in
        // `sk_user_data`) and a reference on the socket; the destructor
        // gives both back.
        let _ = owner.into_raw();
        // SAFETY: `sk` is a live socket; the skb is ours and unowned (type
        // invariant), so nothing else has set its socket or destructor. The
        // glue takes the socket's reference.
        unsafe {
            bindings::rrxe_skb_set_owner(self.skb.as_raw(), sk, Some(TxSocket::<O>::skb_dtor));
        }
        // INVARIANT: owned by a `TxSocket<O>`.
        self.owned = true;
        Ok(())
    }
}

/// Most packets a [`TxBatch`] holds.
pub const BATCH_MAX_PACKETS: u32 = 16;

/// Most bytes (IP headers on) a [`TxBatch`] holds: until it is split, the
/// head's IP and UDP length fields carry the whole batch's, in 16 bits.
const BATCH_MAX_BYTES: u32 = 60 * 1024;

/// Packets of one flow held to leave together as one skb, a UDP GSO skb
/// whose frag list carries the packets after the first
/// (`rrxe_gso_append`, core/glue_net.h): the IP layer and the qdisc are
/// passed once for them all, and the device gets them as one list, told
/// of all but the last that more follow (`xmit_more`), so that a virtio
/// NIC is notified once a batch rather than up to once a packet. Each
/// packet is complete (its own headers and ICRC): the segmentation only
/// gives each its IP length, checksum and identification, the last
/// predicted here ([`TxBatch::ready`]) so that the ICRC covers the header
/// as sent (IPv4; an IPv6 header has no field the segmentation sets but
/// its payload length, which is each packet's own).
///
/// # Invariants
///
/// `head`, if any, is a packet charged to an owner, carrying
/// `packets` packets (itself and those appended to it), `bytes` in all
/// (IP headers on), none with a longer UDP payload than its own; `flow`,
/// `ip_hlen` and `max_payload` are the head's (its flow's bytes, IP
/// header length and UDP payload length), read once when it came.
#[derive(Default)]
pub struct TxBatch {
    head: Option<TxPacket>,
    packets: u32,
    bytes: u32,
    flow: FlowKey,
    ip_hlen: usize,
    max_payload: u32,
}

/// A flow's bytes ([`TxPacket::flow`]): 12 (IPv4) or 36 (IPv6).
struct FlowKey {
    bytes: [u8; 36],
    len: usize,
}

impl Default for FlowKey {
    fn default() -> Self {
        Self::NONE
    }
}

impl FlowKey {
    const NONE: Self = Self {
        bytes: [0; 36],
        len: 0,
    };

    fn of(flow: &[u8]) -> Self {
        let mut key = Self::NONE;
        if let Some(d) = key.bytes.get_mut(..flow.len()) {
            d.copy_from_slice(flow);
            key.len = flow.len();
        }
        key
    }

    fn get(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or(&[])
    }
}

/// Whether two packets' flows ([`TxPacket::flow`]) are the same, compared
/// as arrays of the two lengths there are (IPv4 and IPv6), which the
/// compiler compares inline: as slices, each comparison of a batch's
/// packets was a call to `bcmp`.
#[inline]
fn same_flow(a: &[u8], b: &[u8]) -> bool {
    if let (Ok(x), Ok(y)) = (<&[u8; 12]>::try_from(a), <&[u8; 12]>::try_from(b)) {
        return x == y;
    }
    if let (Ok(x), Ok(y)) = (<&[u8; 36]>::try_from(a), <&[u8; 36]>::try_from(b)) {
        return x == y;
    }
    false
}

impl TxBatch {
    /// An empty batch.
    #[inline]
    pub const fn new() -> Self {
        Self {
            head: None,
            packets: 0,
            bytes: 0,
            flow: FlowKey::NONE,
            ip_hlen: 0,
            max_payload: 0,
        }
    }

    /// Whether `pkt` (prepared, not yet owned) can join the batch: a
    /// packet of the first one's IP version and flow (the segmentation
    /// would give it the first one's addresses and ports), no longer than
    /// it, with room left.
    #[inline]
    pub fn takes(&self, pkt: &TxPacket) -> bool {
        self.head.is_some()
            && !pkt.owned
            && pkt.ip_hlen == self.ip_hlen
            && same_flow(pkt.flow(), self.flow.get())
            && pkt.udp_payload_len() <= self.max_payload
            && self.packets < BATCH_MAX_PACKETS
            && self.bytes.saturating_add(pkt.skb.len()) <= BATCH_MAX_BYTES
    }

    /// Gives `pkt`, which the batch [`takes`](TxBatch::takes), the IPv4
    /// identification the segmentation will give it (the first packet's
    /// plus its position): called before its ICRC is computed.
    #[inline]
    pub fn ready(&self, pkt: &mut TxPacket) {
        if let Some(id) = self.head.as_ref().and_then(TxPacket::ipv4_id) {
            pkt.set_ipv4_id(id.wrapping_add(self.packets as u16));
        }
    }

    /// Adds `pkt`, readied by [`TxBatch::ready`] and with its ICRC, and
    /// charges it to `owner`, the first packet's owner; gives it back if
    /// the batch does not take it.
    #[inline]
    pub fn add<O: TxOwner>(&mut self, pkt: TxPacket, owner: &O) -> Result<(), TxPacket> {
        if !self.takes(&pkt) {
            return Err(pkt);
        }
        let Some(head) = &self.head else {
            return Err(pkt);
        };
        let len = pkt.skb.len();
        owner.skb_queued(1);
        // SAFETY: both skbs are ours, prepared and unshared (type
        // invariants); the head is charged to `owner`, whose count its
        // destructor gives back with the packets it carries; `pkt`'s skb is
        // unowned and given away to the head, which frees it with its own.
        unsafe { bindings::rrxe_gso_append(head.skb.as_raw(), pkt.skb.into_raw()) };
        // INVARIANT: one more packet, no longer than the head's.
        self.packets += 1;
        self.bytes += len;
        Ok(())
    }

    /// Starts a batch with `pkt`, charged to its owner; gives it back if it
    /// cannot head one (unowned) or the batch is not empty.
    #[inline]
    pub fn start(&mut self, pkt: TxPacket) -> Result<(), TxPacket> {
        if self.head.is_some() || !pkt.owned {
            return Err(pkt);
        }
        // INVARIANT: an owned packet, one packet, its flow, header and
        // payload lengths.
        self.packets = 1;
        self.bytes = pkt.skb.len();
        self.flow = FlowKey::of(pkt.flow());
        self.ip_hlen = pkt.ip_hlen;
        self.max_payload = pkt.udp_payload_len();
        self.head = Some(pkt);
        Ok(())
    }

    /// Sends the packets held, if any: their number and bytes (IP headers
    /// on), and whether the IP layer took them (`EIO` if it dropped them
    /// at once, as [`TxPacket::send`]). The batch is empty after.
    #[inline]
    pub fn send(&mut self) -> Option<(u32, u32, Result)> {
        let head = self.head.take()?;
        let (packets, bytes) = (self.packets, self.bytes);
        self.packets = 0;
        self.bytes = 0;
        if packets == 1 {
            return Some((packets, bytes, head.send()));
        }
        // SAFETY: a prepared, owned skb with its route, carrying the
        // other packets in its frag list, none longer than it (type
        // invariants); given away.
        let ret = unsafe { bindings::rrxe_gso_send(head.skb.into_raw()) };
        Some((packets, bytes, xmit_result(ret)))
    }
}

/// `net_xmit_eval`: congestion notification is no error.
#[inline]
fn xmit_result(ret: i32) -> Result {
    if ret != 0 && ret != 2 {
        return Err(EIO);
    }
    Ok(())
}

/// The owner of transmitted skbs (a QP): told of the packets charged to it
/// and of their release.
pub trait TxOwner: Send + Sync + 'static {
    /// `packets` were charged to the owner: an skb's ([`TxPacket::set_owner`]),
    /// or one more of a batch's ([`TxBatch::add`]).
    fn skb_queued(&self, packets: u32);
    /// An skb charged to the owner was freed (softirq or process context),
    /// with the `packets` it carried.
    fn skb_done(this: ArcBorrow<'_, Self>, packets: u32);
}

/// A kernel socket standing for an owner `O` of transmitted skbs, as the C
/// rxe's per-QP socket: the skbs point to it (`skb->sk`), and its
/// `sk_user_data` is the owner.
///
/// # Invariants
///
/// `sock` is a kernel UDP socket (of `init_net`, as the C rxe's) whose
/// `sk_user_data` holds one strong count of an `Arc<O>` (`into_raw`) until
/// drop; each skb charged to it holds one more count at the same address
/// and a reference on its `sock`.
pub struct TxSocket<O: TxOwner> {
    sock: NonNull<bindings::socket>,
    /// The cookie of the route cached in the socket (see
    /// [`TxSocket::route`]).
    route_cookie: AtomicU32,
    _o: PhantomData<Arc<O>>,
}

// SAFETY: the socket is only released, from process context; the owner is
// `Send + Sync`.
unsafe impl<O: TxOwner> Send for TxSocket<O> {}
// SAFETY: `&TxSocket` only hands its `sock` to skbs.
unsafe impl<O: TxOwner> Sync for TxSocket<O> {}

impl<O: TxOwner> TxSocket<O> {
    /// A socket for `owner` (process context).
    pub fn new(owner: Arc<O>) -> Result<Self> {
        let mut sock = core::ptr::null_mut();
        // SAFETY: `sock` is writable.
        kernel::error::to_result(unsafe { bindings::rrxe_sock_create_kern_udp(&mut sock) })?;
        let sock = NonNull::new(sock).ok_or(ENOMEM)?;
        // SAFETY: a new socket with its `sk`; nothing else uses its user data.
        // INVARIANT: `sk_user_data` holds the count of `owner`.
        unsafe {
            let sk = (*sock.as_ptr()).sk;
            bindings::rrxe_sk_set_user_data(sk, owner.into_raw().cast_mut().cast());
        }
        Ok(Self {
            sock,
            route_cookie: AtomicU32::new(0),
            _o: PhantomData,
        })
    }

    /// The route to `dst` kept in the socket between packets
    /// (`sk_dst_cache`, where the C rxe keeps an RC QP's) while it is
    /// valid, else [`Route::output`]'s, which is then kept. A route goes
    /// stale by itself (its device gone, the routing changed, an IPv6
    /// route's cookie out of date); the caller gives the same `ndev`, `src`
    /// and `dst` every time, or calls [`TxSocket::reset_route`] when they
    /// change. Any context; no lock (the socket's cache is swapped
    /// atomically, its route read under RCU).
    #[inline]
    pub fn route(&self, ndev: &NetDevice, src: &IpAddr, dst: &IpAddr) -> Result<Route> {
        let v6 = matches!(dst, IpAddr::V6(_));
        let cookie = self.route_cookie.load(Ordering::Relaxed);
        // SAFETY: the socket is valid (type invariant).
        let cached = unsafe { bindings::rrxe_sk_dst_get(self.sk(), cookie) };
        if let Some(cached) = NonNull::new(cached) {
            // INVARIANT: a held route, kept for this family's `dst`.
            return Ok(Route { dst: cached, v6 });
        }
        let route = Route::output(ndev, src, dst)?;
        // SAFETY: the route is held (by `route`) for the call; the socket
        // takes a reference of its own.
        unsafe {
            let cookie = bindings::rrxe_dst_cookie(route.dst.as_ptr());
            self.route_cookie.store(cookie, Ordering::Relaxed);
            bindings::rrxe_sk_dst_set(self.sk(), route.dst.as_ptr());
        }
        Ok(route)
    }

    /// Forgets the route kept: the next [`TxSocket::route`] looks it up.
    #[inline]
    pub fn reset_route(&self) {
        // SAFETY: the socket is valid (type invariant); a null route
        // empties its cache.
        unsafe { bindings::rrxe_sk_dst_set(self.sk(), core::ptr::null_mut()) };
    }

    #[inline]
    fn sk(&self) -> *mut bindings::sock {
        // SAFETY: the socket is valid until drop (type invariant).
        unsafe { (*self.sock.as_ptr()).sk }
    }

    /// # Safety
    ///
    /// Called as the destructor of an skb charged by [`TxSkb::set_owner`].
    unsafe extern "C" fn skb_dtor(skb: *mut bindings::sk_buff) {
        // SAFETY: the skb is charged to a `TxSocket<O>` (see the function's
        // safety section): its socket is held for it, and that socket's user
        // data is an `Arc<O>` of which the skb holds a count.
        unsafe {
            let sk = (*skb).sk;
            let packets = bindings::rrxe_skb_packets(skb) as u32;
            let owner =
                Arc::<O>::from_raw(bindings::rrxe_sk_user_data(sk).cast::<O>().cast_const());
            O::skb_done(owner.as_arc_borrow(), packets);
            drop(owner);
            bindings::rrxe_sock_put(sk);
        }
    }
}

impl<O: TxOwner> Drop for TxSocket<O> {
    fn drop(&mut self) {
        // SAFETY: the socket is ours (type invariant). Its `sk` lives on while
        // skbs hold it, its user data unchanged: each holds its own count.
        unsafe {
            let sk = self.sk();
            let owner = bindings::rrxe_sk_user_data(sk).cast::<O>().cast_const();
            bindings::sock_release(self.sock.as_ptr());
            drop(Arc::<O>::from_raw(owner));
        }
    }
}
