// SPDX-License-Identifier: GPL-2.0

//! Random-input tests of the rdma_cm command decoders (`ucma/cmd.rs`,
//! `ucma/abi.rs`), run in every `cargo test` (the coverage-guided fuzzer of
//! the same decoders is `tests/fuzz`'s `ucma_write`). Every write userspace can
//! make is a header then a command body that the module copies into a
//! fixed-size array and decodes; these feed both random bytes, biased
//! towards the values the decoders branch on (address families and their
//! sizes, reject reasons, short `in` lengths), and check that nothing
//! panics and that what is accepted satisfies the ABI's rules.
//! `RRXE_WIRE_SEED=<n>` replays or varies the run.

use crate::{
    ucma_abi::*,
    ucma_cmd::{
        CmdHdr,
        HdrError,
        CMD_HDR_SIZE, //
    },
    wire_tests::rng::Rng,
};

const CASES: usize = 20_000;

fn fill<const N: usize>(rng: &mut Rng) -> [u8; N] {
    core::array::from_fn(|_| rng.u8())
}

/// A random family at `off`, mostly one the decoders know, and, at
/// `size_off`, a size that mostly matches it.
fn family(rng: &mut Rng, b: &mut [u8], off: usize, size_off: Option<usize>) {
    let fam = match rng.below(5) {
        0 => AF_INET,
        1 => AF_INET6,
        2 => AF_IB,
        3 => 0,
        _ => rng.u32() as u16,
    };
    b[off..off + 2].copy_from_slice(&fam.to_ne_bytes());
    if let Some(s) = size_off {
        let size = if rng.below(4) == 0 {
            rng.u32() as u16
        } else {
            addr_size(&b[off..]) as u16
        };
        b[s..s + 2].copy_from_slice(&size.to_ne_bytes());
    }
}

fn known(addr: &[u8]) -> bool {
    addr_size(addr) != 0
}

fn is_ip(addr: &[u8]) -> bool {
    matches!(u16::from_ne_bytes([addr[0], addr[1]]), AF_INET | AF_INET6)
}

#[test]
fn header_never_accepts_beyond_the_write() {
    let mut rng = Rng::seeded("header_never_accepts_beyond_the_write", 0x0c3a_0001);
    for _ in 0..CASES {
        let mut b: [u8; CMD_HDR_SIZE] = fill(&mut rng);
        if rng.bool() {
            b[..4].copy_from_slice(&(rng.below(26) as u32).to_ne_bytes());
        }
        let write_len = rng.below(600);
        match CmdHdr::decode(&b, write_len) {
            Ok(h) => {
                assert!(write_len >= CMD_HDR_SIZE + usize::from(h.in_len));
                assert!((h.cmd as u32) < 25);
            }
            Err(HdrError::Short) => assert!(write_len < CMD_HDR_SIZE),
            Err(_) => {}
        }
    }
}

#[test]
fn address_commands_accept_only_sized_known_families() {
    let mut rng = Rng::seeded("address_commands_accept_only_sized_known_families", 0x0c3a_0002);
    for _ in 0..CASES {
        let mut b: [u8; Bind::IP_SIZE] = fill(&mut rng);
        family(&mut rng, &mut b, 8, None);
        if let Ok(d) = Bind::decode_ip(&b) {
            assert!(is_ip(&d.addr));
            assert!(d.addr[SOCKADDR_IN6_SIZE..].iter().all(|&x| x == 0));
        }

        let mut b: [u8; Bind::SIZE] = fill(&mut rng);
        if rng.bool() {
            b[6..8].fill(0);
        }
        family(&mut rng, &mut b, 8, Some(4));
        if let Ok(d) = Bind::decode(&b) {
            assert!(known(&d.addr));
            assert_eq!(usize::from(u16::from_ne_bytes([b[4], b[5]])), addr_size(&d.addr));
        }

        let mut b: [u8; ResolveAddr::IP_SIZE] = fill(&mut rng);
        family(&mut rng, &mut b, 0, None);
        family(&mut rng, &mut b, 28, None);
        if let Ok(d) = ResolveAddr::decode_ip(&b) {
            assert!(is_ip(&d.dst));
        }

        let mut b: [u8; ResolveAddr::SIZE] = fill(&mut rng);
        if rng.bool() {
            b[12..16].fill(0);
        }
        if rng.bool() {
            b[8..10].fill(0);
        }
        let src_size = if rng.bool() { Some(8) } else { None };
        family(&mut rng, &mut b, 16, src_size);
        family(&mut rng, &mut b, 144, Some(10));
        if let Ok(d) = ResolveAddr::decode(&b) {
            assert!(known(&d.dst));
            assert_eq!(usize::from(u16::from_ne_bytes([b[10], b[11]])), addr_size(&d.dst));
        }

        let mut b: [u8; JoinMcast::IP_SIZE] = fill(&mut rng);
        family(&mut rng, &mut b, 20, None);
        let _ = JoinMcast::decode_ip(&b);
        let mut b: [u8; JoinMcast::SIZE] = fill(&mut rng);
        family(&mut rng, &mut b, 24, Some(20));
        if let Ok(d) = JoinMcast::decode(&b) {
            assert!(known(&d.addr));
        }
    }
}

#[test]
fn connection_commands_bound_their_private_data() {
    let mut rng = Rng::seeded("connection_commands_bound_their_private_data", 0x0c3a_0003);
    for _ in 0..CASES {
        let b: [u8; Connect::SIZE] = fill(&mut rng);
        let in_len = Connect::MIN_IN + rng.below(9);
        let c = Connect::decode(&b, in_len);
        if in_len < Connect::SIZE {
            assert_eq!((c.ece.vendor_id, c.ece.attr_mod), (0, 0));
        }
        let b: [u8; Connect::ACCEPT_SIZE] = fill(&mut rng);
        let in_len = Connect::ACCEPT_MIN_IN + rng.below(9);
        let c = Connect::decode_accept(&b, in_len);
        if in_len < Connect::ACCEPT_SIZE {
            assert_eq!((c.ece.vendor_id, c.ece.attr_mod), (0, 0));
        }

        let mut b: [u8; Reject::SIZE] = fill(&mut rng);
        b[5] = match rng.below(4) {
            0 => 0,
            1 => REJ_CONSUMER_DEFINED,
            2 => REJ_VENDOR_OPTION_NOT_SUPPORTED,
            _ => rng.u8(),
        };
        if let Some(r) = Reject::decode(&b) {
            assert!(matches!(r.reason, REJ_CONSUMER_DEFINED | REJ_VENDOR_OPTION_NOT_SUPPORTED));
            assert!(r.data().len() <= MAX_PRIVATE_DATA);
            assert_eq!(r.data().len(), usize::from(b[4]));
        } else {
            assert!(!matches!(b[5], 0 | REJ_CONSUMER_DEFINED | REJ_VENDOR_OPTION_NOT_SUPPORTED));
        }

        let _ = CreateId::decode(&fill(&mut rng));
        let _ = DestroyId::decode(&fill(&mut rng));
        let _ = IdArg::decode(&fill(&mut rng));
        let _ = Query::decode(&fill(&mut rng));
    }
}
