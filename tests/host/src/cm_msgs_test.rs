// SPDX-License-Identifier: GPL-2.0

//! Host tests of the CM message codec (`core/cm/field.rs`, `core/cm/msgs.rs`).
//!
//! The field positions are checked against the kernel's own description,
//! `include/rdma/ibta_vol1_c12.h`, read from the kernel source the project
//! builds against and evaluated with the formulas of `include/rdma/iba.h`.

use crate::cm::field::{
    Bytes,
    Field,
    Mad,
    TooLong,
    MAD_HDR_SIZE,
    MAD_SIZE, //
};
use crate::cm::msgs::*;
use std::collections::BTreeMap;

/// Every message module's field tables, with the C struct each describes.
fn tables() -> Vec<(
    &'static str,
    u16,
    &'static [(&'static str, Field)],
    &'static [(&'static str, Bytes)],
)> {
    vec![
        ("cm_req_msg", req::ATTR_ID, req::FIELDS, req::BYTES),
        ("cm_mra_msg", mra::ATTR_ID, mra::FIELDS, mra::BYTES),
        ("cm_rej_msg", rej::ATTR_ID, rej::FIELDS, rej::BYTES),
        ("cm_rep_msg", rep::ATTR_ID, rep::FIELDS, rep::BYTES),
        ("cm_rtu_msg", rtu::ATTR_ID, rtu::FIELDS, rtu::BYTES),
        ("cm_dreq_msg", dreq::ATTR_ID, dreq::FIELDS, dreq::BYTES),
        ("cm_drep_msg", drep::ATTR_ID, drep::FIELDS, drep::BYTES),
        (
            "cm_sidr_req_msg",
            sidr_req::ATTR_ID,
            sidr_req::FIELDS,
            sidr_req::BYTES,
        ),
        (
            "cm_sidr_rep_msg",
            sidr_rep::ATTR_ID,
            sidr_rep::FIELDS,
            sidr_rep::BYTES,
        ),
        ("cm_lap_msg", lap::ATTR_ID, lap::FIELDS, lap::BYTES),
        ("cm_apr_msg", apr::ATTR_ID, apr::FIELDS, apr::BYTES),
    ]
}

// ---- the kernel's header, evaluated as iba.h does -------------------------

/// One field as `IBA_FIELD*_LOC` / `IBA_FIELD_MLOC` expand it.
#[derive(Debug, PartialEq, Eq)]
enum CLoc {
    /// (struct, byte offset of the word, GENMASK value, word width in bits)
    Scalar(String, usize, u64, u32),
    /// (struct, byte offset, bits)
    Mem(String, usize, usize),
}

/// `GENMASK_ULL(h, l)`.
fn genmask(h: u32, l: u32) -> u64 {
    assert!(h >= l && h < 64);
    (u64::MAX >> (63 - h)) & (u64::MAX << l)
}

/// A file of the kernel source the project builds against.
pub(crate) fn kernel_file(rel: &str) -> String {
    let mut candidates = Vec::new();
    if let Ok(src) = std::env::var("RRXE_KERNEL_SRC") {
        candidates.push(std::path::PathBuf::from(src));
    }
    let cache = std::env::var("RRXE_CACHE").unwrap_or_else(|_| "/var/cache/rust-rxe".into());
    if let Ok(dir) = std::fs::read_dir(format!("{cache}/src")) {
        let mut found: Vec<_> = dir
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("linux-7.3"))
            })
            .collect();
        found.sort();
        candidates.extend(found);
    }
    for c in &candidates {
        if let Ok(s) = std::fs::read_to_string(c.join(rel)) {
            return s;
        }
    }
    panic!("{rel} not found (tried {candidates:?}); set RRXE_KERNEL_SRC to the kernel source");
}

/// The `CM_<NAME>` field definitions of the header, by name.
fn parse_header(text: &str) -> BTreeMap<String, CLoc> {
    let joined = text.replace("\\\n", " ");
    let mut out = BTreeMap::new();
    for line in joined.lines() {
        let Some(def) = line.trim().strip_prefix("#define ") else {
            continue;
        };
        let def = def.trim();
        let (name, body) = def
            .split_once(|c: char| c.is_whitespace())
            .unwrap_or((def, ""));
        let body = body.trim();
        if !name.starts_with("CM_") || !body.starts_with("CM_FIELD") || name.contains('(') {
            continue;
        }
        let (mac, rest) = body.split_once('(').unwrap();
        let args: Vec<String> = rest
            .trim_end()
            .strip_suffix(')')
            .unwrap()
            .split(',')
            .map(|a| a.trim().to_string())
            .collect();
        let st = args[0].strip_prefix("struct ").unwrap().to_string();
        let num = |i: usize| -> usize { args[i].parse().unwrap() };
        let at = num(1) + 24; // sizeof(struct ib_mad_hdr)
        let loc = match mac.trim() {
            "CM_FIELD_BLOC" => {
                let (bit, w) = (num(2) as u32, num(3) as u32);
                CLoc::Scalar(st, at, genmask(7 - bit, 7 - bit - (w - 1)), 8)
            }
            "CM_FIELD8_LOC" => {
                let w = num(2) as u32;
                CLoc::Scalar(st, at, genmask(7, 7 - (w - 1)), 8)
            }
            "CM_FIELD16_LOC" => {
                let (w, top) = (num(2) as u32, 15 - (at % 2) as u32 * 8);
                CLoc::Scalar(st, at & 0xFFFE, genmask(top, top - (w - 1)), 16)
            }
            "CM_FIELD32_LOC" => {
                let (w, top) = (num(2) as u32, 31 - (at % 4) as u32 * 8);
                CLoc::Scalar(st, at & 0xFFFC, genmask(top, top - (w - 1)), 32)
            }
            "CM_FIELD64_LOC" => CLoc::Scalar(st, at, genmask(63, 0), 64),
            "CM_FIELD_MLOC" => CLoc::Mem(st, at, num(2)),
            other => panic!("unknown field macro {other} in {name}"),
        };
        out.insert(name.to_string(), loc);
    }
    out
}

#[test]
fn every_field_is_where_ibta_vol1_c12_h_puts_it() {
    let header = parse_header(&kernel_file("include/rdma/ibta_vol1_c12.h"));
    assert!(header.len() > 100, "parsed only {} fields", header.len());
    let mut ours = BTreeMap::new();
    for (st, _, fields, bytes) in tables() {
        for (name, f) in fields {
            let loc = CLoc::Scalar(st.to_string(), f.offset, f.mask(), 8 * f.width as u32);
            assert!(
                ours.insert(format!("CM_{name}"), loc).is_none(),
                "{name} twice"
            );
        }
        for (name, b) in bytes {
            let loc = CLoc::Mem(st.to_string(), b.offset, 8 * b.len);
            assert!(
                ours.insert(format!("CM_{name}"), loc).is_none(),
                "{name} twice"
            );
        }
    }
    for (name, loc) in &header {
        assert_eq!(ours.get(name), Some(loc), "{name}");
    }
    for name in ours.keys() {
        assert!(header.contains_key(name), "{name} is not in the header");
    }
}

// ---- layout sanity, independent of the header ---------------------------

/// The bits of the MAD a field covers, as a set of (byte, bit) pairs.
fn field_bits(f: Field) -> Vec<(usize, u32)> {
    let mut v = Vec::new();
    for b in 0..f.bits {
        let bit = f.shift + b; // from the word's LSB
        let byte = f.offset + f.width - 1 - (bit / 8) as usize;
        v.push((byte, bit % 8));
    }
    v
}

#[test]
fn fields_of_a_message_never_overlap_and_stay_in_the_mad() {
    for (st, _, fields, bytes) in tables() {
        let mut owner: BTreeMap<(usize, u32), &str> = BTreeMap::new();
        let mut claim = |bit: (usize, u32), name: &'static str| {
            assert!(bit.0 >= MAD_HDR_SIZE && bit.0 < MAD_SIZE, "{name} outside");
            if let Some(prev) = owner.insert(bit, name) {
                panic!("{st}: {name} overlaps {prev} at {bit:?}");
            }
        };
        for (name, f) in fields {
            for bit in field_bits(*f) {
                claim(bit, name);
            }
        }
        for (name, b) in bytes {
            for byte in b.offset..b.offset + b.len {
                for bit in 0..8 {
                    claim((byte, bit), name);
                }
            }
        }
    }
}

#[test]
fn private_data_ends_every_message_with_the_documented_size() {
    let expect = [
        (req::REQ_PRIVATE_DATA, size::REQ_PRIVATE_DATA),
        (mra::MRA_PRIVATE_DATA, size::MRA_PRIVATE_DATA),
        (rej::REJ_PRIVATE_DATA, size::REJ_PRIVATE_DATA),
        (rep::REP_PRIVATE_DATA, size::REP_PRIVATE_DATA),
        (rtu::RTU_PRIVATE_DATA, size::RTU_PRIVATE_DATA),
        (dreq::DREQ_PRIVATE_DATA, size::DREQ_PRIVATE_DATA),
        (drep::DREP_PRIVATE_DATA, size::DREP_PRIVATE_DATA),
        (lap::LAP_PRIVATE_DATA, size::LAP_PRIVATE_DATA),
        (apr::APR_PRIVATE_DATA, size::APR_PRIVATE_DATA),
        (sidr_req::SIDR_REQ_PRIVATE_DATA, size::SIDR_REQ_PRIVATE_DATA),
        (sidr_rep::SIDR_REP_PRIVATE_DATA, size::SIDR_REP_PRIVATE_DATA),
    ];
    for (b, len) in expect {
        assert_eq!(b.len, len);
        assert_eq!(b.offset + b.len, MAD_SIZE);
    }
    assert_eq!(rej::REJ_ARI.len, size::REJ_ARI);
    assert_eq!(apr::APR_ADDITIONAL_INFORMATION.len, size::APR_INFO);
    assert_eq!(
        sidr_rep::SIDR_REP_ADDITIONAL_INFORMATION.len,
        size::SIDR_REP_INFO
    );
}

#[test]
fn attribute_ids_are_the_cm_ones() {
    let ids: Vec<u16> = tables().iter().map(|t| t.1).collect();
    assert_eq!(ids, (0x10..=0x1A).collect::<Vec<u16>>());
}

// ---- bit-exact spot checks, computed by hand from the IBTA tables --------

fn zero() -> Mad {
    [0u8; MAD_SIZE]
}

#[test]
fn req_fields_land_on_the_wire_bytes() {
    let mut m = zero();
    let mut r = Req(&mut m);
    r.set_local_comm_id(0x0102_0304);
    r.set_local_qpn(0x00AB_CDEF);
    r.set_responder_resources(0x5A);
    r.set_transport_service_type(3);
    r.set_remote_cm_response_timeout(0x1F);
    r.set_end_to_end_flow_control(1);
    r.set_retry_count(7);
    r.set_partition_key(0xFFFF);
    r.set_path_packet_payload_mtu(5);
    r.set_rnr_retry_count(6);
    r.set_max_cm_retries(15);
    r.set_srq(1);
    r.set_extended_transport_type(1);
    r.set_primary_flow_label(0xF_FFFF);
    r.set_primary_packet_rate(0x3F);
    r.set_vendor_id(0x00C0_FFEE);
    r.set_service_id(0x1122_3344_5566_7788);
    let h = MAD_HDR_SIZE;
    assert_eq!(&m[h..h + 4], &[1, 2, 3, 4]);
    assert_eq!(&m[h + 5..h + 8], &[0xC0, 0xFF, 0xEE]);
    assert_eq!(m[h + 4], 0);
    assert_eq!(
        &m[h + 8..h + 16],
        &[0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]
    );
    assert_eq!(&m[h + 32..h + 36], &[0xAB, 0xCD, 0xEF, 0x5A]);
    // Byte 43: timeout in bits 7..3, transport in 2..1, flow control in 0.
    assert_eq!(m[h + 43], 0b1111_1111);
    // Byte 47: local timeout 0, retry count in bits 2..0.
    assert_eq!(m[h + 47], 0b0000_0111);
    assert_eq!(&m[h + 48..h + 50], &[0xFF, 0xFF]);
    // Byte 50: MTU in 7..4, RDC 3, RNR retry in 2..0.
    assert_eq!(m[h + 50], 0b0101_0110);
    // Byte 51: max CM retries in 7..4, SRQ 3, extended type in 2..0.
    assert_eq!(m[h + 51], 0b1111_1001);
    assert_eq!(&m[h + 88..h + 92], &[0xFF, 0xFF, 0xF0, 0x3F]);
    let r = Req(&m);
    assert_eq!(r.qp_type(), Some(CmQpType::XrcTgt));
}

#[test]
fn rep_sidr_rep_and_rej_fields_land_on_the_wire_bytes() {
    let h = MAD_HDR_SIZE;
    let mut m = zero();
    let mut r = Rep(&mut m);
    r.set_local_qpn(0x12_3456);
    r.set_vendor_id(0xAA_BBCC);
    r.set_local_ee_context_number(0x65_4321);
    r.set_starting_psn(0xFF_FFFF);
    r.set_target_ack_delay(0x1F);
    r.set_failover_accepted(2);
    r.set_rnr_retry_count(5);
    r.set_srq(1);
    r.set_local_ca_guid(0x0102_0304_0506_0708);
    assert_eq!(&m[h + 12..h + 16], &[0x12, 0x34, 0x56, 0xAA]);
    assert_eq!(&m[h + 16..h + 20], &[0x65, 0x43, 0x21, 0xBB]);
    assert_eq!(&m[h + 20..h + 24], &[0xFF, 0xFF, 0xFF, 0xCC]);
    assert_eq!(m[h + 26], 0b1111_1100);
    assert_eq!(m[h + 27], 0b1011_0000);
    assert_eq!(&m[h + 28..h + 36], &[1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(Rep(&m).vendor_id(), 0xAA_BBCC);
    assert_eq!(Rep(&m).qpn(CmQpType::XrcIni), 0x65_4321);
    assert_eq!(Rep(&m).qpn(CmQpType::Rc), 0x12_3456);

    let mut m = zero();
    let mut s = SidrRep(&mut m);
    s.set_status(3);
    s.set_additional_information_length(9);
    s.set_vendor_id(0x12_3456);
    s.set_qpn(0xAB_CDEF);
    s.set_serviceid(u64::MAX);
    s.set_q_key(0x8001_0002);
    assert_eq!(
        &m[h + 4..h + 12],
        &[3, 9, 0x00, 0x34, 0xAB, 0xCD, 0xEF, 0x56]
    );
    assert_eq!(&m[h + 12..h + 20], &[0xFF; 8]);
    assert_eq!(&m[h + 20..h + 24], &[0x80, 0x01, 0x00, 0x02]);

    let mut m = zero();
    let mut j = Rej(&mut m);
    j.set_message_rejected(2);
    j.set_reason(28);
    j.set_ari_with_length(&[9; 8]).unwrap();
    assert_eq!(&m[h + 8..h + 12], &[0b1000_0000, 8 << 1, 0, 28]);
    assert_eq!(&m[h + 12..h + 20], &[9; 8]);
    assert_eq!(Rej(&m).ari(), &[9; 8]);
    assert_eq!(Rej(&m).ari_guid(), 0x0909_0909_0909_0909);
}

#[test]
fn mad_header_is_formatted_as_cm_format_mad_hdr() {
    let mut m = [0xEEu8; MAD_SIZE];
    Dreq(&mut m).format(0x0102_0304_0506_0708, 0);
    assert_eq!(
        &m[..4],
        &[BASE_VERSION, MGMT_CLASS_CM, CM_CLASS_VERSION, METHOD_SEND]
    );
    assert_eq!(&m[4..8], &[0; 4]);
    assert_eq!(&m[8..16], &[1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(&m[16..18], &[0, 0x15]);
    assert_eq!(&m[18..24], &[0; 6]);
    assert!(m[24..].iter().all(|b| *b == 0), "format zeroes the body");
    Rep(&mut m).format(7, 0xDEAD_BEEF);
    let h = MadHdr(&m);
    assert_eq!((h.tid(), h.attr_id(), h.attr_mod()), (7, 0x13, 0xDEAD_BEEF));
    assert_eq!(
        (h.base_version(), h.mgmt_class(), h.class_version()),
        (1, 7, 2)
    );
    assert_eq!((h.method(), h.status()), (3, 0));
}

// ---- round trips ----------------------------------------------------------

/// A small deterministic generator (xorshift64*), so runs are reproducible.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }
    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn fill(&mut self, buf: &mut [u8]) {
        for b in buf {
            *b = self.next() as u8;
        }
    }
}

#[test]
fn every_field_round_trips_and_touches_only_its_bits() {
    let mut rng = Rng::new(0x5eed);
    for (st, _, fields, bytes) in tables() {
        for (name, f) in fields {
            for _ in 0..64 {
                let mut m = zero();
                rng.fill(&mut m);
                let before = m;
                let v = rng.next();
                f.set(&mut m, v);
                assert_eq!(f.get(&m), v & (f.mask() >> f.shift), "{st}.{name}");
                let mine = field_bits(*f);
                for byte in 0..MAD_SIZE {
                    for bit in 0..8 {
                        if !mine.contains(&(byte, bit)) {
                            assert_eq!(
                                (m[byte] >> bit) & 1,
                                (before[byte] >> bit) & 1,
                                "{st}.{name} changed byte {byte} bit {bit}"
                            );
                        }
                    }
                }
            }
        }
        for (name, b) in bytes {
            let mut m = zero();
            rng.fill(&mut m);
            let before = m;
            let len = rng.below(b.len as u64 + 1) as usize;
            let mut data = vec![0u8; len];
            rng.fill(&mut data);
            b.set(&mut m, &data).unwrap();
            assert_eq!(&b.get(&m)[..len], &data[..], "{st}.{name}");
            assert!(
                b.get(&m)[len..].iter().all(|x| *x == 0),
                "{st}.{name} padding"
            );
            assert_eq!(&m[..b.offset], &before[..b.offset]);
            assert_eq!(&m[b.offset + b.len..], &before[b.offset + b.len..]);
            assert_eq!(b.set(&mut m, &vec![1; b.len + 1]), Err(TooLong));
        }
    }
}

/// Sets each (setter, getter, value) and reads it back after a decode.
macro_rules! round_trip {
    ($variant:ident, $ty:ident, [$(($set:ident, $get:ident, $v:expr)),* $(,)?]) => {{
        let mut m = zero();
        let mut w = $ty(&mut m);
        w.format(0xABCD_0000_0000_1234, 0x55);
        $( w.$set($v); )*
        match decode(&m) {
            Ok(Msg::$variant(r)) => {
                assert_eq!(r.hdr().tid(), 0xABCD_0000_0000_1234);
                assert_eq!(r.hdr().attr_mod(), 0x55);
                $( assert_eq!(r.$get(), $v, stringify!($get)); )*
            }
            _ => panic!("{} did not decode as itself", stringify!($ty)),
        }
    }};
}

#[test]
fn req_round_trips() {
    round_trip!(
        Req,
        Req,
        [
            (set_local_comm_id, local_comm_id, 0xDEAD_BEEF),
            (set_vendor_id, vendor_id, 0x12_3456),
            (set_service_id, service_id, 0x0000_0000_0106_4E20),
            (set_local_ca_guid, local_ca_guid, 0x5254_00FF_FE12_3456),
            (set_local_q_key, local_q_key, 0x8001_0000),
            (set_local_qpn, local_qpn, 0x11),
            (set_responder_resources, responder_resources, 16),
            (set_local_eecn, local_eecn, 0x12_3456),
            (set_initiator_depth, initiator_depth, 8),
            (set_remote_eecn, remote_eecn, 0x65_4321),
            (
                set_remote_cm_response_timeout,
                remote_cm_response_timeout,
                20
            ),
            (set_transport_service_type, transport_service_type, 1),
            (set_end_to_end_flow_control, end_to_end_flow_control, 1),
            (set_starting_psn, starting_psn, 0xAB_CDEF),
            (set_local_cm_response_timeout, local_cm_response_timeout, 22),
            (set_retry_count, retry_count, 7),
            (set_partition_key, partition_key, 0xFFFF),
            (set_path_packet_payload_mtu, path_packet_payload_mtu, 3),
            (set_rdc_exists, rdc_exists, 1),
            (set_rnr_retry_count, rnr_retry_count, 7),
            (set_max_cm_retries, max_cm_retries, 15),
            (set_srq, srq, 1),
            (set_extended_transport_type, extended_transport_type, 5),
            (set_primary_local_port_lid, primary_local_port_lid, 0xFFFF),
            (set_primary_remote_port_lid, primary_remote_port_lid, 0x1234),
            (set_primary_flow_label, primary_flow_label, 0xA_BCDE),
            (set_primary_packet_rate, primary_packet_rate, 0x2A),
            (set_primary_traffic_class, primary_traffic_class, 0x80),
            (set_primary_hop_limit, primary_hop_limit, 64),
            (set_primary_sl, primary_sl, 15),
            (set_primary_subnet_local, primary_subnet_local, 1),
            (set_primary_local_ack_timeout, primary_local_ack_timeout, 19),
            (set_alternate_local_port_lid, alternate_local_port_lid, 7),
            (set_alternate_remote_port_lid, alternate_remote_port_lid, 8),
            (set_alternate_flow_label, alternate_flow_label, 0xF_FFFF),
            (set_alternate_packet_rate, alternate_packet_rate, 0x3F),
            (set_alternate_traffic_class, alternate_traffic_class, 3),
            (set_alternate_hop_limit, alternate_hop_limit, 255),
            (set_alternate_sl, alternate_sl, 9),
            (set_alternate_subnet_local, alternate_subnet_local, 1),
            (
                set_alternate_local_ack_timeout,
                alternate_local_ack_timeout,
                31
            ),
            (set_sap_supported, sap_supported, 1),
        ]
    );
}

#[test]
fn req_byte_fields_and_semantics_round_trip() {
    let mut m = zero();
    let mut w = Req(&mut m);
    w.format(1, 0);
    let gids: Vec<[u8; 16]> = (0..4u8).map(|i| [i + 1; 16]).collect();
    w.set_primary_local_port_gid(&gids[0]).unwrap();
    w.set_primary_remote_port_gid(&gids[1]).unwrap();
    w.set_alternate_local_port_gid(&gids[2]).unwrap();
    w.set_alternate_remote_port_gid(&gids[3]).unwrap();
    let pd: Vec<u8> = (0..size::REQ_PRIVATE_DATA as u8).collect();
    w.set_private_data(&pd).unwrap();
    assert_eq!(w.set_private_data(&[0; 93]), Err(TooLong));
    for (qp, back) in [
        (CmQpType::Rc, Some(CmQpType::Rc)),
        (CmQpType::Uc, Some(CmQpType::Uc)),
        (CmQpType::XrcIni, Some(CmQpType::XrcTgt)),
    ] {
        let mut m2 = m;
        Req(&mut m2).set_qp_type(qp);
        assert_eq!(Req(&m2).qp_type(), back);
    }
    let Ok(Msg::Req(r)) = decode(&m) else {
        panic!()
    };
    assert_eq!(r.primary_local_port_gid(), &gids[0]);
    assert_eq!(r.primary_remote_port_gid(), &gids[1]);
    assert_eq!(r.alternate_local_port_gid(), &gids[2]);
    assert_eq!(r.alternate_remote_port_gid(), &gids[3]);
    assert_eq!(r.private_data(), &pd[..]);
    // Transport 2 and 3 with another extension are the C's "0".
    let mut m3 = zero();
    Req(&mut m3).set_transport_service_type(2);
    assert_eq!(Req(&m3).qp_type(), None);
    Req(&mut m3).set_transport_service_type(3);
    Req(&mut m3).set_extended_transport_type(2);
    assert_eq!(Req(&m3).qp_type(), None);
}

#[test]
fn req_alternate_path_presence() {
    let mut m = zero();
    assert!(!Req(&m).has_alt_path());
    Req(&mut m).set_alternate_local_port_lid(1);
    assert!(Req(&m).has_alt_path());
    let mut m = zero();
    let mut gid = [0u8; 16];
    gid[8..11].copy_from_slice(&[0x00, 0x06, 0x6A]);
    Req(&mut m).set_alternate_local_port_gid(&gid).unwrap();
    assert!(Req(&m).has_alt_path(), "an OPA GID means an alternate path");
    gid[10] = 0x6B;
    Req(&mut m).set_alternate_local_port_gid(&gid).unwrap();
    assert!(!Req(&m).has_alt_path());
}

#[test]
fn mra_rej_rtu_dreq_drep_round_trip() {
    round_trip!(
        Mra,
        Mra,
        [
            (set_local_comm_id, local_comm_id, 1),
            (set_remote_comm_id, remote_comm_id, u32::MAX),
            (set_message_mraed, message_mraed, 2),
            (set_service_timeout, service_timeout, 24),
        ]
    );
    round_trip!(
        Rej,
        Rej,
        [
            (set_local_comm_id, local_comm_id, 0),
            (set_remote_comm_id, remote_comm_id, 0x8000_0001),
            (set_message_rejected, message_rejected, 1),
            (set_rejected_info_length, rejected_info_length, 127),
            (set_reason, reason, 0xFFFF),
        ]
    );
    round_trip!(
        Rtu,
        Rtu,
        [
            (set_local_comm_id, local_comm_id, 5),
            (set_remote_comm_id, remote_comm_id, 6),
        ]
    );
    round_trip!(
        Dreq,
        Dreq,
        [
            (set_local_comm_id, local_comm_id, 5),
            (set_remote_comm_id, remote_comm_id, 6),
            (set_remote_qpn_eecn, remote_qpn_eecn, 0xFF_FFFF),
        ]
    );
    round_trip!(
        Drep,
        Drep,
        [
            (set_local_comm_id, local_comm_id, 0xFFFF_FFFF),
            (set_remote_comm_id, remote_comm_id, 0),
        ]
    );
    assert_eq!(MsgResponse::from_u8(0), Some(MsgResponse::Req));
    assert_eq!(MsgResponse::from_u8(1), Some(MsgResponse::Rep));
    assert_eq!(MsgResponse::from_u8(2), Some(MsgResponse::Other));
    assert_eq!(MsgResponse::from_u8(3), None);
}

#[test]
fn rep_round_trips() {
    round_trip!(
        Rep,
        Rep,
        [
            (set_local_comm_id, local_comm_id, 0x1234_5678),
            (set_remote_comm_id, remote_comm_id, 0x9ABC_DEF0),
            (set_local_q_key, local_q_key, 0xFFFF_FFFF),
            (set_local_qpn, local_qpn, 0xFF_FFFE),
            (set_vendor_id_h, vendor_id_h, 0xAA),
            (
                set_local_ee_context_number,
                local_ee_context_number,
                0x11_1111
            ),
            (set_vendor_id_m, vendor_id_m, 0xBB),
            (set_starting_psn, starting_psn, 0x22_2222),
            (set_vendor_id_l, vendor_id_l, 0xCC),
            (set_responder_resources, responder_resources, 1),
            (set_initiator_depth, initiator_depth, 2),
            (set_target_ack_delay, target_ack_delay, 15),
            (set_failover_accepted, failover_accepted, 3),
            (set_end_to_end_flow_control, end_to_end_flow_control, 1),
            (set_rnr_retry_count, rnr_retry_count, 6),
            (set_srq, srq, 1),
            (set_local_ca_guid, local_ca_guid, 0x0011_2233_4455_6677),
        ]
    );
}

#[test]
fn sidr_lap_apr_round_trip() {
    round_trip!(
        SidrReq,
        SidrReq,
        [
            (set_requestid, requestid, 42),
            (set_partition_key, partition_key, 0x7FFF),
            (set_serviceid, serviceid, 0x0000_0000_0111_0000),
        ]
    );
    round_trip!(
        SidrRep,
        SidrRep,
        [
            (set_requestid, requestid, 42),
            (set_status, status, 5),
            (
                set_additional_information_length,
                additional_information_length,
                72
            ),
            (set_vendor_id_h, vendor_id_h, 0xBEEF),
            (set_qpn, qpn, 0xAB_CDEF),
            (set_vendor_id_l, vendor_id_l, 0x12),
            (set_serviceid, serviceid, 0x0102_0304_0506_0708),
            (set_q_key, q_key, 0x1234_5678),
        ]
    );
    round_trip!(
        Lap,
        Lap,
        [
            (set_local_comm_id, local_comm_id, 1),
            (set_remote_comm_id, remote_comm_id, 2),
            (set_remote_qpn_eecn, remote_qpn_eecn, 3),
            (
                set_remote_cm_response_timeout,
                remote_cm_response_timeout,
                4
            ),
            (set_alternate_local_port_lid, alternate_local_port_lid, 5),
            (set_alternate_remote_port_lid, alternate_remote_port_lid, 6),
            (set_alternate_flow_label, alternate_flow_label, 7),
            (set_alternate_traffic_class, alternate_traffic_class, 8),
            (set_alternate_hop_limit, alternate_hop_limit, 9),
            (set_alternate_packet_rate, alternate_packet_rate, 10),
            (set_alternate_sl, alternate_sl, 11),
            (set_alternate_subnet_local, alternate_subnet_local, 1),
            (
                set_alternate_local_ack_timeout,
                alternate_local_ack_timeout,
                13
            ),
        ]
    );
    round_trip!(
        Apr,
        Apr,
        [
            (set_local_comm_id, local_comm_id, 1),
            (set_remote_comm_id, remote_comm_id, 2),
            (
                set_additional_information_length,
                additional_information_length,
                3
            ),
            (set_ar_status, ar_status, 4),
        ]
    );
}

#[test]
fn peer_lengths_are_clamped_to_their_areas() {
    let mut m = zero();
    let mut j = Rej(&mut m);
    j.set_ari(&[7; 72]).unwrap();
    j.set_rejected_info_length(127);
    assert_eq!(Rej(&m).ari().len(), 72);
    Rej(&mut m).set_rejected_info_length(3);
    assert_eq!(Rej(&m).ari(), &[7; 3]);
    assert_eq!(Rej(&mut m).set_ari_with_length(&[0; 73]), Err(TooLong));

    let mut m = zero();
    SidrRep(&mut m).set_additional_information_length(255);
    assert_eq!(SidrRep(&m).info().len(), 72);
    let mut m = zero();
    Apr(&mut m).set_additional_information_length(200);
    assert_eq!(Apr(&m).info().len(), 72);
    Apr(&mut m).set_additional_information_length(0);
    assert!(Apr(&m).info().is_empty());
}

#[test]
fn setters_truncate_as_iba_set_does() {
    let mut m = zero();
    let mut r = Req(&mut m);
    r.set_local_qpn(0xFF12_3456);
    r.set_end_to_end_flow_control(2); // FIELD_PREP keeps bit 0 only
    r.set_max_cm_retries(0x1F);
    assert_eq!(Req(&m).local_qpn(), 0x12_3456);
    assert_eq!(Req(&m).end_to_end_flow_control(), 0);
    assert_eq!(Req(&m).max_cm_retries(), 0xF);
    assert_eq!(m[MAD_HDR_SIZE + 35], 0, "QPN overflow stays out of byte 35");
}

// ---- decode ----------------------------------------------------------------

#[test]
fn decode_refuses_what_is_not_a_cm_message() {
    assert_eq!(decode(&[]).err(), Some(DecodeError::Short(0)));
    assert_eq!(decode(&[0; 255]).err(), Some(DecodeError::Short(255)));
    let mut m = zero();
    Req(&mut m).format(0, 0);
    assert!(matches!(decode(&m), Ok(Msg::Req(_))));
    let mut long = m.to_vec();
    long.extend_from_slice(&[0xFF; 40]);
    assert!(
        matches!(decode(&long), Ok(Msg::Req(_))),
        "trailing bytes are ignored"
    );
    m[1] = 0x04; // a subnet administration MAD
    assert_eq!(decode(&m).err(), Some(DecodeError::NotCm(4)));
    m[1] = MGMT_CLASS_CM;
    for attr in [0u16, 0x0F, 0x1B, 0xFFFF] {
        m[16..18].copy_from_slice(&attr.to_be_bytes());
        assert_eq!(decode(&m).err(), Some(DecodeError::UnknownAttr(attr)));
    }
}

/// Reads everything a received message offers, as a driver would.
fn read_all(msg: &Msg<'_>) -> u64 {
    let mut acc = 0u64;
    let mut add = |v: u64| acc = acc.wrapping_add(v);
    let add_bytes = |b: &[u8]| b.iter().map(|x| u64::from(*x)).sum::<u64>();
    match msg {
        Msg::Req(r) => {
            add(r.local_comm_id().into());
            add(r.service_id());
            add(r.local_ca_guid());
            add(r.local_qpn().into());
            add(r.starting_psn().into());
            add(r.vendor_id().into());
            add(r.hdr().attr_mod().into());
            add(u64::from(r.qp_type().is_some()));
            add(u64::from(r.has_alt_path()));
            add(r.remote_cm_response_timeout().into());
            add(r.local_cm_response_timeout().into());
            add(r.primary_local_ack_timeout().into());
            add(r.max_cm_retries().into());
            add(add_bytes(r.private_data()));
            add(add_bytes(r.primary_local_port_gid()));
            add(add_bytes(r.alternate_local_port_gid()));
        }
        Msg::Mra(r) => {
            add(r.remote_comm_id().into());
            add(u64::from(MsgResponse::from_u8(r.message_mraed()).is_some()));
            add(r.service_timeout().into());
            add(add_bytes(r.private_data()));
        }
        Msg::Rej(r) => {
            add(r.reason().into());
            add(r.ari_guid());
            add(add_bytes(r.ari()));
            add(add_bytes(r.private_data()));
            add(r.message_rejected().into());
        }
        Msg::Rep(r) => {
            add(r.qpn(CmQpType::XrcIni).into());
            add(r.qpn(CmQpType::Rc).into());
            add(r.vendor_id().into());
            add(r.local_ca_guid());
            add(r.target_ack_delay().into());
            add(add_bytes(r.private_data()));
        }
        Msg::Rtu(r) => add(add_bytes(r.private_data()) + u64::from(r.remote_comm_id())),
        Msg::Dreq(r) => add(r.remote_qpn_eecn().into()),
        Msg::Drep(r) => add(add_bytes(r.private_data())),
        Msg::SidrReq(r) => add(r.serviceid() ^ u64::from(r.partition_key())),
        Msg::SidrRep(r) => {
            add(add_bytes(r.info()));
            add(r.q_key().into());
            add(r.qpn().into());
        }
        Msg::Lap(r) => {
            add(add_bytes(r.alternate_remote_port_gid()));
            add(r.alternate_flow_label().into());
        }
        Msg::Apr(r) => {
            add(add_bytes(r.info()));
            add(r.ar_status().into());
        }
    }
    acc
}

#[test]
fn decoding_arbitrary_bytes_never_panics() {
    let mut rng = Rng::new(0xC0FFEE);
    let mut kinds = [0usize; 12];
    for _ in 0..50_000 {
        let len = match rng.below(4) {
            0 => rng.below(MAD_SIZE as u64 + 64) as usize,
            _ => MAD_SIZE,
        };
        let mut buf = vec![0u8; len];
        rng.fill(&mut buf);
        // Mostly CM MADs of a known or nearby attribute, so the readers run.
        if len >= 18 && rng.below(8) != 0 {
            buf[1] = MGMT_CLASS_CM;
            let attr = 0x0F + rng.below(13) as u16;
            buf[16..18].copy_from_slice(&attr.to_be_bytes());
        }
        match decode(&buf) {
            Ok(msg) => {
                kinds[usize::from(
                    MadHdr(<&Mad>::try_from(&buf[..MAD_SIZE]).unwrap()).attr_id(),
                ) - 0x10] += 1;
                std::hint::black_box(read_all(&msg));
            }
            Err(DecodeError::Short(n)) => assert!(n < MAD_SIZE && n == len),
            Err(DecodeError::NotCm(c)) => assert_ne!(c, MGMT_CLASS_CM),
            Err(DecodeError::UnknownAttr(a)) => assert!(!(0x10..=0x1A).contains(&a)),
        }
    }
    assert!(kinds[..11].iter().all(|n| *n > 1000), "{kinds:?}");
}

#[test]
fn every_field_reads_within_bounds_on_random_mads() {
    let mut rng = Rng::new(7);
    for _ in 0..2_000 {
        let mut m = zero();
        rng.fill(&mut m);
        for (_, _, fields, bytes) in tables() {
            for (_, f) in fields {
                assert!(f.get(&m) <= f.mask() >> f.shift);
            }
            for (_, b) in bytes {
                assert_eq!(b.get(&m).len(), b.len);
                let claim = rng.below(300) as usize;
                assert_eq!(b.prefix(&m, claim).len(), claim.min(b.len));
            }
        }
    }
}

// ---- answers the CM builds from a received message -----------------------------

#[test]
fn issued_rej_drep_and_sidr_rep_answer_the_received_message() {
    use crate::cm::issue;
    let mut req = zero();
    let mut r = Req(&mut req);
    r.format(0x0000_0001_0000_00AA, 0x1234);
    r.set_local_comm_id(0x1111_2222);
    r.set_service_id(0x0106_4E20);
    let mut out = [0x5Au8; MAD_SIZE];
    issue::rej(&req, &mut out, 8, MsgResponse::Req);
    let Ok(Msg::Rej(j)) = decode(&out) else {
        panic!()
    };
    assert_eq!(j.hdr().tid(), 0x0000_0001_0000_00AA);
    assert_eq!(
        j.hdr().attr_mod(),
        0,
        "cm_format_mad_hdr() leaves attr_mod 0"
    );
    assert_eq!(
        (j.hdr().method(), j.hdr().class_version()),
        (METHOD_SEND, 2)
    );
    assert_eq!((j.remote_comm_id(), j.local_comm_id()), (0x1111_2222, 0));
    assert_eq!(
        (j.reason(), j.message_rejected(), j.rejected_info_length()),
        (8, 0, 0)
    );
    assert!(j.ari_area().iter().all(|b| *b == 0));
    assert!(j.private_data().iter().all(|b| *b == 0));

    let mut dreq = zero();
    let mut d = Dreq(&mut dreq);
    d.format(77, 0);
    d.set_local_comm_id(5);
    d.set_remote_comm_id(6);
    issue::drep(&dreq, &mut out);
    let Ok(Msg::Drep(p)) = decode(&out) else {
        panic!()
    };
    assert_eq!(
        (p.hdr().tid(), p.local_comm_id(), p.remote_comm_id()),
        (77, 6, 5)
    );

    let mut sreq = zero();
    let mut s = SidrReq(&mut sreq);
    s.format(99, 0);
    s.set_requestid(0xABCD);
    s.set_serviceid(0x0111_0000_0000_1F90);
    s.set_partition_key(0xFFFF);
    issue::sidr_rep_status(&SidrReq(&sreq), &mut out, 1);
    let Ok(Msg::SidrRep(p)) = decode(&out) else {
        panic!()
    };
    assert_eq!((p.hdr().tid(), p.requestid(), p.status()), (99, 0xABCD, 1));
    assert_eq!(
        (p.serviceid(), p.qpn(), p.q_key()),
        (0x0111_0000_0000_1F90, 0, 0)
    );
    assert!(p.info().is_empty());
}
