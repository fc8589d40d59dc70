// SPDX-License-Identifier: GPL-2.0

//! Address vectors: where a UD send or a connected QP's packets go, built
//! from an address handle's attributes as the C driver's `rxe_av.c` does,
//! and the Ethernet multicast address of a multicast GID.
//!
//! No kernel dependency: this file is also built by the host test crate
//! (`tests/host`).

/// `RXE_NETWORK_TYPE_IPV4`: RoCE v2 over IPv4.
pub const NETWORK_TYPE_IPV4: u8 = 1;
/// `RXE_NETWORK_TYPE_IPV6`: RoCE v2 over IPv6.
pub const NETWORK_TYPE_IPV6: u8 = 2;

/// The type of a GID table entry (`enum ib_gid_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GidType {
    /// InfiniBand.
    Ib,
    /// RoCE v1 (Ethernet, no IP).
    RoceV1,
    /// RoCE v2 (UDP/IP encapsulation).
    RoceV2,
}

/// The network a GID entry is on (`enum rdma_network_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkType {
    /// InfiniBand.
    Ib,
    /// RoCE v1.
    RoceV1,
    /// IPv4 (RoCE v2 with an IPv4-mapped GID).
    Ipv4,
    /// IPv6.
    Ipv6,
}

/// Whether a GID is an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`).
pub fn gid_is_v4mapped(gid: &[u8; 16]) -> bool {
    // One comparison of the 12 bytes, not a loop over 10 of them: the
    // requester asks this of its destination once a packet
    // (`Av::dgid_addr`).
    const PREFIX: [u8; 12] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];
    gid.first_chunk::<12>() == Some(&PREFIX)
}

/// The network of a GID entry (`rdma_gid_attr_network_type`).
pub fn network_type(gid_type: GidType, gid: &[u8; 16]) -> NetworkType {
    match gid_type {
        GidType::Ib => NetworkType::Ib,
        GidType::RoceV1 => NetworkType::RoceV1,
        GidType::RoceV2 if gid_is_v4mapped(gid) => NetworkType::Ipv4,
        GidType::RoceV2 => NetworkType::Ipv6,
    }
}

/// An IP address as the AV's socket addresses hold it (`rdma_gid2ip`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpAddr {
    /// `AF_INET`, from an IPv4-mapped GID.
    V4([u8; 4]),
    /// `AF_INET6`.
    V6([u8; 16]),
}

impl IpAddr {
    /// The address a GID stands for.
    pub fn from_gid(gid: &[u8; 16]) -> Self {
        if gid_is_v4mapped(gid) {
            Self::V4([gid[12], gid[13], gid[14], gid[15]])
        } else {
            Self::V6(*gid)
        }
    }
}

/// The attributes of an address handle the AV is built from (the parts of
/// `struct rdma_ah_attr` the driver uses, with its source GID entry).
#[derive(Clone, Copy, Debug)]
pub struct AhAttr {
    /// Port number.
    pub port_num: u8,
    /// Whether the attributes carry a GRH (`IB_AH_GRH`).
    pub has_grh: bool,
    /// Destination GID.
    pub dgid: [u8; 16],
    /// Flow label.
    pub flow_label: u32,
    /// Source GID index.
    pub sgid_index: u8,
    /// Hop limit.
    pub hop_limit: u8,
    /// Traffic class.
    pub traffic_class: u8,
    /// The source GID entry's GID and type.
    pub sgid: [u8; 16],
    /// The source GID entry's type.
    pub sgid_type: GidType,
    /// Destination MAC (`roce.dmac`).
    pub dmac: [u8; 6],
}

/// Whether the driver accepts the attributes (`chk_attr`): with a GRH, the
/// source GID index within the table (`gid_tbl_len` itself is let through,
/// as in the C driver) and a RoCE v2 source GID.
pub fn attr_ok(attr: &AhAttr, gid_tbl_len: u32) -> bool {
    if !attr.has_grh {
        return true;
    }
    if u32::from(attr.sgid_index) > gid_tbl_len {
        return false;
    }
    matches!(
        network_type(attr.sgid_type, &attr.sgid),
        NetworkType::Ipv4 | NetworkType::Ipv6
    )
}

/// An address vector (`struct rxe_av` without its socket layout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Av {
    /// Port number.
    pub port_num: u8,
    /// [`NETWORK_TYPE_IPV4`], [`NETWORK_TYPE_IPV6`] or 0.
    pub network_type: u8,
    /// Destination MAC.
    pub dmac: [u8; 6],
    /// Destination GID.
    pub dgid: [u8; 16],
    /// Flow label.
    pub flow_label: u32,
    /// Source GID index.
    pub sgid_index: u8,
    /// Hop limit.
    pub hop_limit: u8,
    /// Traffic class.
    pub traffic_class: u8,
    /// Source IP address.
    pub sgid_addr: IpAddr,
}

impl Av {
    /// The AV of `attr` (`rxe_init_av`: `rxe_av_from_attr`, then
    /// `rxe_av_fill_ip_info`, then the MAC).
    pub fn from_attr(attr: &AhAttr) -> Self {
        let network_type = match network_type(attr.sgid_type, &attr.sgid) {
            NetworkType::Ipv4 => NETWORK_TYPE_IPV4,
            NetworkType::Ipv6 => NETWORK_TYPE_IPV6,
            // Refused by `attr_ok` where a GRH is given.
            NetworkType::Ib | NetworkType::RoceV1 => 0,
        };
        Self {
            port_num: attr.port_num,
            network_type,
            dmac: attr.dmac,
            dgid: attr.dgid,
            flow_label: attr.flow_label,
            sgid_index: attr.sgid_index,
            hop_limit: attr.hop_limit,
            traffic_class: attr.traffic_class,
            sgid_addr: IpAddr::from_gid(&attr.sgid),
        }
    }

    /// Destination IP address, that of the destination GID: derived when
    /// needed rather than kept beside it (every QP has two AVs).
    pub fn dgid_addr(&self) -> IpAddr {
        IpAddr::from_gid(&self.dgid)
    }
}

/// The Ethernet multicast address of a multicast GID, as of an IPv6
/// multicast address (`ipv6_eth_mc_map`): `33:33` and the GID's last four
/// bytes.
pub fn mgid_to_mac(mgid: &[u8; 16]) -> [u8; 6] {
    [0x33, 0x33, mgid[12], mgid[13], mgid[14], mgid[15]]
}

#[cfg(test)]
mod tests {
    use super::*;

    const V4: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 2, 15];
    const V6: [u8; 16] = [
        0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x54, 0, 0xff, 0xfe, 0, 2, 1,
    ];

    fn attr(sgid: [u8; 16], sgid_type: GidType) -> AhAttr {
        AhAttr {
            port_num: 1,
            has_grh: true,
            dgid: V4,
            flow_label: 5,
            sgid_index: 1,
            hop_limit: 64,
            traffic_class: 3,
            sgid,
            sgid_type,
            dmac: [2, 0, 0, 0, 0, 1],
        }
    }

    #[test]
    fn network() {
        assert!(gid_is_v4mapped(&V4));
        assert!(!gid_is_v4mapped(&V6));
        // Each of the 12 bytes matters.
        for i in 0..12 {
            let mut g = V4;
            g[i] ^= 0x10;
            assert!(!gid_is_v4mapped(&g), "byte {i}");
        }
        assert_eq!(network_type(GidType::RoceV2, &V4), NetworkType::Ipv4);
        assert_eq!(network_type(GidType::RoceV2, &V6), NetworkType::Ipv6);
        assert_eq!(network_type(GidType::RoceV1, &V4), NetworkType::RoceV1);
        assert_eq!(IpAddr::from_gid(&V4), IpAddr::V4([10, 0, 2, 15]));
        assert_eq!(IpAddr::from_gid(&V6), IpAddr::V6(V6));
    }

    #[test]
    fn checks() {
        assert!(attr_ok(&attr(V6, GidType::RoceV2), 1024));
        assert!(!attr_ok(&attr(V6, GidType::RoceV1), 1024));
        let mut a = attr(V4, GidType::RoceV2);
        a.sgid_index = 2;
        assert!(attr_ok(&a, 2));
        assert!(!attr_ok(&a, 1));
        a.has_grh = false;
        a.sgid_type = GidType::Ib;
        assert!(attr_ok(&a, 1));
    }

    #[test]
    fn av() {
        let av = Av::from_attr(&attr(V6, GidType::RoceV2));
        assert_eq!(av.network_type, NETWORK_TYPE_IPV6);
        assert_eq!(av.sgid_addr, IpAddr::V6(V6));
        assert_eq!(av.dgid_addr(), IpAddr::V4([10, 0, 2, 15]));
        assert_eq!(av.port_num, 1);
        assert_eq!(av.hop_limit, 64);
        assert_eq!(av.flow_label, 5);
        assert_eq!(av.dmac, [2, 0, 0, 0, 0, 1]);
        let av = Av::from_attr(&attr(V4, GidType::RoceV2));
        assert_eq!(av.network_type, NETWORK_TYPE_IPV4);
    }

    #[test]
    fn mcast_mac() {
        let mgid = [
            0xff, 0x12, 0x40, 0x1b, 0, 0, 0, 0, 0, 0, 0, 0, 0xe0, 0, 0, 0xfb,
        ];
        assert_eq!(mgid_to_mac(&mgid), [0x33, 0x33, 0xe0, 0, 0, 0xfb]);
    }
}
