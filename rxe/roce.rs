// SPDX-License-Identifier: GPL-2.0

//! RoCE v2 encapsulation facts of the network I/O that the header codec
//! (`rxe/wire`) does not hold: the UDP source ports of a QP and of a flow,
//! and the GIDs of IP addresses. Pure: also built and tested by the host
//! crate (`tests/host`).

/// The lowest UDP source port of RoCE v2 (`RXE_ROCE_V2_SPORT`,
/// `IB_ROCE_UDP_ENCAP_VALID_PORT_MIN`); the low 14 bits vary per flow.
pub const UDP_SPORT_BASE: u16 = 0xc000;

/// The UDP source port of a QP before it has an address vector: the C rxe's
/// `RXE_ROCE_V2_SPORT + (hash_32(qpn, 14) & 0x3fff)`.
pub fn udp_sport_of_qpn(qpn: u32) -> u16 {
    const GOLDEN_RATIO_32: u32 = 0x61c8_8647;
    let hash = qpn.wrapping_mul(GOLDEN_RATIO_32) >> (32 - 14);
    UDP_SPORT_BASE | (hash & 0x3fff) as u16
}

/// The UDP source port of a flow (`rdma_get_udp_sport`): from the GRH flow
/// label, or, without one, from the label both ends compute from the QPNs
/// (`rdma_calc_flow_label`).
pub fn udp_sport_of_flow(flow_label: u32, lqpn: u32, rqpn: u32) -> u16 {
    let fl = if flow_label != 0 {
        flow_label
    } else {
        let mut v = u64::from(lqpn) * u64::from(rqpn);
        v ^= v >> 20;
        v ^= v >> 40;
        (v & 0xf_ffff) as u32
    };
    let low = (fl & 0x3fff) ^ ((fl & 0xf_c000) >> 14);
    UDP_SPORT_BASE | low as u16
}

/// The GID of an IPv4 address (IPv4-mapped IPv6, `ipv6_addr_set_v4mapped`).
pub fn gid_of_ipv4(addr: [u8; 4]) -> [u8; 16] {
    let mut gid = [0u8; 16];
    gid[10] = 0xff;
    gid[11] = 0xff;
    gid[12..].copy_from_slice(&addr);
    gid
}

/// Whether a GID is a multicast address (`rdma_is_multicast_addr`:
/// `ff00::/8`, or an IPv4-mapped `224.0.0.0/4`).
pub fn gid_is_multicast(gid: &[u8; 16]) -> bool {
    gid[0] == 0xff || (gid[..12] == gid_of_ipv4([0; 4])[..12] && gid[12] & 0xf0 == 0xe0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sport_of_qpn_is_the_c_hash() {
        // hash_32(17, 14) = (17 * 0x61c88647) >> 18.
        let h = (17u32.wrapping_mul(0x61c8_8647) >> 18) as u16;
        assert_eq!(udp_sport_of_qpn(17), 0xc000 | h);
        // 17 * 0x61c88647 = 0x7e50eab7 (mod 2^32), >> 18 = 0x1f94.
        assert_eq!(udp_sport_of_qpn(17), 0xdf94);
        for qpn in [0, 1, 16, 0xff_fffe, 0xff_ffff] {
            assert!(udp_sport_of_qpn(qpn) >= 0xc000);
        }
    }

    #[test]
    fn sport_of_flow() {
        // A flow label: low 14 bits xor the high 6.
        assert_eq!(udp_sport_of_flow(0x1, 5, 6), 0xc001);
        assert_eq!(udp_sport_of_flow(0xf_c000, 5, 6), 0xc03f);
        assert_eq!(udp_sport_of_flow(0xf_ffff, 0, 0), 0xc000 | (0x3fff ^ 0x3f));
        // No label: the symmetric label of the two QPNs.
        assert_eq!(udp_sport_of_flow(0, 17, 18), udp_sport_of_flow(0, 18, 17));
        assert_eq!(
            udp_sport_of_flow(0, 17, 18),
            udp_sport_of_flow(17 * 18, 0, 0)
        );
    }

    #[test]
    fn gids() {
        let g = gid_of_ipv4([192, 0, 2, 1]);
        assert_eq!(g[..12], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]);
        assert_eq!(g[12..], [192, 0, 2, 1]);
        assert!(!gid_is_multicast(&g));
        assert!(!gid_is_multicast(&gid_of_ipv4([255, 255, 255, 255])));
        assert!(gid_is_multicast(&gid_of_ipv4([239, 1, 2, 3])));
        let mut v6 = [0u8; 16];
        v6[0] = 0xff;
        assert!(gid_is_multicast(&v6));
        v6[0] = 0xfe;
        assert!(!gid_is_multicast(&v6));
    }
}
