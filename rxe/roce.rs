// SPDX-License-Identifier: GPL-2.0

//! RoCE v2 encapsulation facts of the network I/O: the UDP ports, and the
//! checks of a received packet that need no QP. Pure: also built and tested
//! by the host crate (`tests/host`).

/// The RoCE v2 UDP destination port (`ROCE_V2_UDP_DPORT`).
pub const UDP_DPORT: u16 = 4791;

/// The lowest UDP source port of RoCE v2 (`RXE_ROCE_V2_SPORT`,
/// `IB_ROCE_UDP_ENCAP_VALID_PORT_MIN`); the low 14 bits vary per flow.
pub const UDP_SPORT_BASE: u16 = 0xc000;

/// Base transport header length (`RXE_BTH_BYTES`).
pub const BTH_BYTES: usize = 12;

/// The only transport header version (`BTH_TVER`).
pub const BTH_TVER: u8 = 0;

/// The multicast QPN (`IB_MULTICAST_QPN`).
pub const MULTICAST_QPN: u32 = 0xff_ffff;

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

/// Why a received packet is dropped before any QP is looked up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EarlyDrop {
    /// Shorter than a BTH.
    Short,
    /// A transport header version other than 0.
    BadVersion,
    /// QPN 0 (QP0, the subnet management QP, does not exist on RoCE).
    QpnZero,
}

/// The fields of a BTH the first checks read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BthFirst {
    /// Opcode.
    pub opcode: u8,
    /// Destination QPN (24 bits).
    pub qpn: u32,
}

/// The length check of `rxe_rcv`: the payload holds a BTH.
pub fn check_len(payload: &[u8]) -> Result<(), EarlyDrop> {
    if payload.len() < BTH_BYTES {
        Err(EarlyDrop::Short)
    } else {
        Ok(())
    }
}

/// The checks of `hdr_check` before its QP lookup: version, QPN not 0.
pub fn check_bth(payload: &[u8]) -> Result<BthFirst, EarlyDrop> {
    let bth = payload.get(..BTH_BYTES).ok_or(EarlyDrop::Short)?;
    if bth[1] & 0x0f != BTH_TVER {
        return Err(EarlyDrop::BadVersion);
    }
    let qpn = u32::from_be_bytes([0, bth[5], bth[6], bth[7]]);
    if qpn == 0 {
        return Err(EarlyDrop::QpnZero);
    }
    Ok(BthFirst {
        opcode: bth[0],
        qpn,
    })
}

/// The GID of an IPv4 address (IPv4-mapped IPv6, `ipv6_addr_set_v4mapped`).
pub fn gid_of_ipv4(addr: [u8; 4]) -> [u8; 16] {
    let mut gid = [0u8; 16];
    gid[10] = 0xff;
    gid[11] = 0xff;
    gid[12..].copy_from_slice(&addr);
    gid
}

/// Whether a GID is an IPv6 multicast address (`rdma_is_multicast_addr`:
/// `ff00::/8`, or an IPv4-mapped `224.0.0.0/4`).
pub fn gid_is_multicast(gid: &[u8; 16]) -> bool {
    gid[0] == 0xff || (gid[..12] == gid_of_ipv4([0; 4])[..12] && gid[12] & 0xf0 == 0xe0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sport_of_qpn_is_the_c_hash() {
        // hash_32(17, 14) = (17 * 0x61c88647) >> 18, computed by hand.
        let h = (17u32.wrapping_mul(0x61c8_8647) >> 18) as u16;
        assert_eq!(udp_sport_of_qpn(17), 0xc000 | h);
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
        let v = 17u64 * 18;
        assert_eq!(
            udp_sport_of_flow(0, 17, 18),
            udp_sport_of_flow(v as u32, 0, 0)
        );
    }

    fn bth(opcode: u8, flags: u8, qpn: u32) -> [u8; 12] {
        let q = qpn.to_be_bytes();
        [opcode, flags, 0xff, 0xff, 0, q[1], q[2], q[3], 0, 0, 0, 1]
    }

    #[test]
    fn first_checks() {
        assert_eq!(check_len(&[0; 11]), Err(EarlyDrop::Short));
        assert_eq!(check_len(&[0; 12]), Ok(()));
        assert_eq!(check_bth(&bth(4, 0x01, 17)), Err(EarlyDrop::BadVersion));
        // Solicited event, migration and pad bits are not the version.
        assert_eq!(
            check_bth(&bth(4, 0xf0, 17)),
            Ok(BthFirst { opcode: 4, qpn: 17 })
        );
        assert_eq!(check_bth(&bth(4, 0, 0)), Err(EarlyDrop::QpnZero));
        assert_eq!(
            check_bth(&bth(0x64, 0, 0xff_ffff)).map(|b| b.qpn),
            Ok(MULTICAST_QPN)
        );
    }

    #[test]
    fn gids() {
        let g = gid_of_ipv4([192, 0, 2, 1]);
        assert_eq!(g[..12], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]);
        assert_eq!(g[12..], [192, 0, 2, 1]);
        assert!(!gid_is_multicast(&g));
        assert!(gid_is_multicast(&gid_of_ipv4([239, 1, 2, 3])));
        let mut v6 = [0u8; 16];
        v6[0] = 0xff;
        assert!(gid_is_multicast(&v6));
        v6[0] = 0xfe;
        assert!(!gid_is_multicast(&v6));
    }
}
