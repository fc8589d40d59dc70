// SPDX-License-Identifier: GPL-2.0

//! RoCE v2 encapsulation facts of the network I/O that the header codec
//! (`rxe/wire`) does not hold: the GIDs of IP addresses (the UDP source
//! ports of a QP and of a flow are [`crate::qp_attr`]'s). Pure: also built and tested by the host
//! crate (`tests/host`).

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
