// SPDX-License-Identifier: GPL-2.0

//! The opcode table against the C driver's, as extracted from its source.

use super::c_opcode_table::C_OPCODES;
use crate::rxe_wire::opcode::{
    code,
    lookup,
    HdrType,
    Mask,
    NUM_HDR_TYPES,
    OPCODES, //
};

const HDRS: [HdrType; NUM_HDR_TYPES] = [
    HdrType::Lrh,
    HdrType::Grh,
    HdrType::Bth,
    HdrType::Reth,
    HdrType::Aeth,
    HdrType::Atmeth,
    HdrType::Atmack,
    HdrType::Ieth,
    HdrType::Rdeth,
    HdrType::Deth,
    HdrType::Immdt,
    HdrType::Feth,
    HdrType::Payload,
];

#[test]
fn same_opcodes_as_c() {
    let ours: Vec<u8> = OPCODES.iter().map(|i| i.opcode()).collect();
    let theirs: Vec<u8> = C_OPCODES.iter().map(|e| e.0).collect();
    assert_eq!(ours, theirs);
}

#[test]
fn every_entry_matches_c() {
    for &(opcode, mask, length, offsets) in &C_OPCODES {
        let info = lookup(opcode).unwrap();
        let name = info.name();
        assert_eq!(info.opcode(), opcode);
        assert_eq!(info.mask().bits(), mask, "{name}: mask");
        assert_eq!(info.header_len(), length, "{name}: length");
        assert_eq!(info.icrc_payload_offset(), offsets[HdrType::Payload as usize], "{name}");
        for hdr in HDRS {
            let c = offsets[hdr as usize];
            match hdr {
                HdrType::Bth => assert_eq!(info.offset(hdr), Some(0)),
                HdrType::Payload => assert_eq!(info.offset(hdr), Some(length)),
                _ if info.mask().intersects(hdr.mask()) => {
                    assert_eq!(info.offset(hdr), Some(c), "{name}: {hdr:?}")
                }
                _ => {
                    assert_eq!(info.offset(hdr), None, "{name}: {hdr:?}");
                    assert_eq!(c, 0, "{name}: C has an offset for absent {hdr:?}");
                }
            }
        }
    }
}

#[test]
fn unknown_opcodes_have_no_entry() {
    let known: Vec<u8> = C_OPCODES.iter().map(|e| e.0).collect();
    for opcode in 0..=255u8 {
        assert_eq!(lookup(opcode).is_some(), known.contains(&opcode), "{opcode:#x}");
    }
}

#[test]
fn headers_tile_the_header_area() {
    // Each opcode's headers follow each other without gap or overlap.
    for info in &OPCODES {
        let mut hdrs: Vec<(usize, usize)> = HDRS
            .iter()
            .filter(|h| !matches!(h, HdrType::Payload | HdrType::Lrh | HdrType::Grh))
            .filter_map(|&h| info.offset(h).map(|at| (at, h.len())))
            .collect();
        hdrs.sort();
        let mut end = 0;
        for (at, len) in hdrs {
            assert_eq!(at, end, "{}", info.name());
            end = at + len;
        }
        assert_eq!(end, info.header_len(), "{}", info.name());
    }
}

#[test]
fn only_three_entries_lack_a_payload_offset() {
    let odd: Vec<u8> = OPCODES
        .iter()
        .filter(|i| i.icrc_payload_offset() != i.header_len())
        .map(|i| i.opcode())
        .collect();
    assert_eq!(odd, [code::RC_FLUSH, code::RD_ACKNOWLEDGE, code::RD_ATOMIC_ACKNOWLEDGE]);
    assert!(odd.iter().all(|&op| lookup(op).unwrap().icrc_payload_offset() == 0));
}

#[test]
fn names_are_unique_and_match_the_transport() {
    let mut names: Vec<&str> = OPCODES.iter().map(|i| i.name()).collect();
    for info in &OPCODES {
        let prefix = ["RC_", "UC_", "RD_", "UD_"][usize::from(info.opcode() >> 5)];
        assert!(info.name().starts_with(prefix), "{}", info.name());
    }
    names.sort();
    names.dedup();
    assert_eq!(names.len(), OPCODES.len());
}

#[test]
fn mask_helpers() {
    let m = Mask::REQ | Mask::SEND;
    assert!(m.contains(Mask::REQ));
    assert!(!m.contains(Mask::REQ | Mask::ACK));
    assert!(m.intersects(Mask::WRITE_OR_SEND));
    assert!(!m.intersects(Mask::READ_OR_ATOMIC));
    assert_eq!(Mask::REQ.bits(), 1 << 13);
    assert_eq!(Mask::ATOMIC_WRITE.bits(), 1 << 27);
    assert_eq!(Mask::LOOPBACK.bits(), 1 << 25);
    assert_eq!(Mask::RDMA_OP.bits(), (1 << 16) | (1 << 17) | (1 << 18) | (1 << 19) | (1 << 27));
}
