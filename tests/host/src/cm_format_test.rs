// SPDX-License-Identifier: GPL-2.0

//! Host tests of the messages an ID builds and reads (`core/cm/format.rs`):
//! what goes where, and the swaps between the two sides.

use crate::cm::field::{
    Mad,
    TooLong,
    MAD_SIZE, //
};
use crate::cm::format::*;
use crate::cm::msgs::*;
use crate::cm::timing::ack_timeout;

fn zero() -> Mad {
    [0u8; MAD_SIZE]
}

fn path(n: u8) -> PathFields {
    PathFields {
        sgid: [n; 16],
        dgid: [n + 1; 16],
        slid: 0x100 + u16::from(n),
        dlid: 0x200 + u16::from(n),
        flow_label: 0xA_BCDE,
        rate: 7,
        traffic_class: 0x20,
        hop_limit: 1,
        sl: 3,
        packet_life_time: 14,
    }
}

fn req_fields<'a>(pd: &'a [u8]) -> ReqFields<'a> {
    ReqFields {
        tid: form_tid(0xAABB_CCDD, 0x0102_0304),
        local_id: 0x0102_0304,
        node_guid: 0x5254_00FF_FE00_0001,
        ack_delay: 15,
        service_id: 0x0106_4E20,
        qp_num: 0x11,
        qp_type: Some(CmQpType::Rc),
        starting_psn: 0xAB_CDEF,
        pkey: 0xFFFF,
        mtu: 3,
        responder_resources: 16,
        initiator_depth: 4,
        remote_cm_response_timeout: 20,
        local_cm_response_timeout: 22,
        flow_control: 1,
        retry_count: 7,
        rnr_retry_count: 6,
        max_cm_retries: 15,
        srq: 0,
        primary: path(1),
        primary_inbound_dlid: None,
        alternate: None,
        ece_vendor_id: 0x15B3,
        ece_attr_mod: 0x8000_0001,
        private_data: pd,
    }
}

#[test]
fn tids_carry_the_agent_and_the_local_id_as_the_c_reads_it() {
    let t = form_tid(0x1234_5678, 0x0102_0304);
    assert_eq!(
        t >> 32,
        0x1234_5678,
        "the MAD layer routes answers by the high half"
    );
    assert_eq!(t as u32, u32::from_ne_bytes([1, 2, 3, 4]));
}

#[test]
fn a_req_is_read_back_by_the_passive_side_with_the_swaps() {
    let pd = [0x42u8; 56];
    let p = req_fields(&pd);
    let mut m = zero();
    req(&mut m, &p).unwrap();
    let Ok(Msg::Req(r)) = decode(&m) else {
        panic!()
    };
    assert_eq!(r.hdr().tid(), p.tid);
    let e = ReqEvent::of(&r);
    assert_eq!(
        e,
        ReqEvent {
            remote_id: 0x0102_0304,
            service_id: 0x0106_4E20,
            remote_ca_guid: 0x5254_00FF_FE00_0001,
            remote_qkey: 0,
            remote_qpn: 0x11,
            qp_type: Some(CmQpType::Rc),
            starting_psn: 0xAB_CDEF,
            responder_resources: 4,
            initiator_depth: 16,
            local_cm_response_timeout: 20,
            remote_cm_response_timeout: 22,
            flow_control: 1,
            retry_count: 7,
            rnr_retry_count: 6,
            srq: 0,
            max_cm_retries: 15,
            pkey: 0xFFFF,
            mtu: 3,
            ece_vendor_id: 0x15B3,
            ece_attr_mod: 0x8000_0001,
        }
    );
    assert_eq!(&r.private_data()[..56], &pd[..]);
    assert!(r.private_data()[56..].iter().all(|b| *b == 0));
    assert!(!r.has_alt_path());
    assert_eq!(alternate_path(&r), None);
    let pp = primary_path(&r, 0x999);
    let lat = ack_timeout(15, 14);
    assert_eq!(r.primary_local_ack_timeout(), lat);
    assert_eq!(r.primary_subnet_local(), 1);
    assert_eq!(
        pp,
        ReqPath {
            path: PathFields {
                sgid: [2; 16],
                dgid: [1; 16],
                slid: 0x201,
                dlid: 0x999,
                flow_label: 0xA_BCDE,
                rate: 7,
                traffic_class: 0x20,
                hop_limit: 1,
                sl: 3,
                packet_life_time: lat - 1,
            },
            pkey: 0xFFFF,
            mtu: 3,
            service_id: 0x0106_4E20,
        }
    );
}

#[test]
fn req_variants() {
    // XRC: the initiator leaves the responder-side fields out.
    let mut p = req_fields(&[]);
    p.qp_type = Some(CmQpType::XrcIni);
    let mut m = zero();
    req(&mut m, &p).unwrap();
    let r = Req(&m);
    assert_eq!(r.qp_type(), Some(CmQpType::XrcTgt));
    assert_eq!(
        (
            r.responder_resources(),
            r.retry_count(),
            r.rnr_retry_count()
        ),
        (0, 0, 0)
    );
    // A routed primary path: permissive LIDs, or the inbound path's.
    let mut p = req_fields(&[]);
    p.primary.hop_limit = 64;
    req(&mut m, &p).unwrap();
    let r = Req(&m);
    assert_eq!(
        (r.primary_local_port_lid(), r.primary_remote_port_lid()),
        (0xFFFF, 0xFFFF)
    );
    assert_eq!(r.primary_subnet_local(), 0);
    p.primary_inbound_dlid = Some(0x77);
    req(&mut m, &p).unwrap();
    assert_eq!(Req(&m).primary_local_port_lid(), 0x77);
    // An alternate path.
    let mut p = req_fields(&[]);
    p.alternate = Some(PathFields {
        hop_limit: 2,
        ..path(5)
    });
    req(&mut m, &p).unwrap();
    let r = Req(&m);
    assert!(r.has_alt_path(), "a permissive LID counts as a LID");
    let a = alternate_path(&r).unwrap();
    assert_eq!((a.path.sgid, a.path.dgid), ([6; 16], [5; 16]));
    assert_eq!((a.path.slid, a.path.dlid), (0xFFFF, 0xFFFF));
    assert_eq!(a.path.packet_life_time, ack_timeout(15, 14) - 1);
    // Too much private data.
    let big = [0u8; 93];
    assert_eq!(req(&mut m, &req_fields(&big)), Err(TooLong));
}

fn rep_fields<'a>(pd: &'a [u8]) -> RepFields<'a> {
    RepFields {
        tid: 0x77,
        local_id: 0xB0B0,
        remote_id: 0xA0A0,
        node_guid: 0x0002_C903_0000_0001,
        ack_delay: 15,
        qp_type: Some(CmQpType::Rc),
        qp_num: 0x12_3456,
        starting_psn: 0x65_4321,
        responder_resources: 8,
        initiator_depth: 2,
        failover_accepted: 0,
        flow_control: 1,
        rnr_retry_count: 7,
        srq: 1,
        ece_vendor_id: 0x00_15B3,
        ece_attr_mod: 3,
        private_data: pd,
    }
}

#[test]
fn a_rep_is_read_back_by_the_active_side_with_the_swaps() {
    let pd = [9u8; 196];
    let mut m = zero();
    rep(&mut m, &rep_fields(&pd)).unwrap();
    let Ok(Msg::Rep(r)) = decode(&m) else {
        panic!()
    };
    assert_eq!((r.hdr().tid(), r.hdr().attr_mod()), (0x77, 3));
    let e = RepEvent::of(&r, CmQpType::Rc);
    assert_eq!(
        e,
        RepEvent {
            remote_id: 0xB0B0,
            remote_ca_guid: 0x0002_C903_0000_0001,
            remote_qkey: 0,
            remote_qpn: 0x12_3456,
            starting_psn: 0x65_4321,
            responder_resources: 2,
            initiator_depth: 8,
            target_ack_delay: 15,
            failover_accepted: 0,
            flow_control: 1,
            rnr_retry_count: 7,
            srq: 1,
            ece_vendor_id: 0x15B3,
            ece_attr_mod: 3,
        }
    );
    assert_eq!(r.remote_comm_id(), 0xA0A0);
    assert_eq!(r.private_data(), &pd[..]);
    assert_eq!(e.av_timeout(19), ack_timeout(15, 18));
    assert_eq!(e.av_timeout(0), 31, "the C's av.timeout - 1 wraps");
    // An XRC target answers with its QP in the EE context and an SRQ.
    let mut p = rep_fields(&[]);
    p.qp_type = Some(CmQpType::XrcTgt);
    p.srq = 0;
    rep(&mut m, &p).unwrap();
    let r = Rep(&m);
    assert_eq!(
        (r.local_qpn(), r.local_ee_context_number(), r.srq()),
        (0, 0x12_3456, 1)
    );
    assert_eq!((r.initiator_depth(), r.end_to_end_flow_control()), (0, 0));
    assert_eq!(RepEvent::of(&r, CmQpType::XrcIni).remote_qpn, 0x12_3456);
    assert_eq!(rep(&mut m, &rep_fields(&[0; 197])), Err(TooLong));
}

#[test]
fn the_other_messages_of_an_id() {
    let ids = Ids {
        tid: 0x1122,
        local_id: 0x10,
        remote_id: 0x20,
    };
    let mut m = zero();
    mra(&mut m, ids, MsgResponse::Rep, &[1, 2]).unwrap();
    let Ok(Msg::Mra(r)) = decode(&m) else {
        panic!()
    };
    assert_eq!(
        (r.hdr().tid(), r.local_comm_id(), r.remote_comm_id()),
        (0x1122, 0x10, 0x20)
    );
    assert_eq!((r.message_mraed(), r.service_timeout()), (1, 24));
    assert_eq!(&r.private_data()[..2], &[1, 2]);

    rej(&mut m, ids, 28, MsgResponse::Req, true, &[], &[7; 148]).unwrap();
    let Ok(Msg::Rej(r)) = decode(&m) else {
        panic!()
    };
    assert_eq!(
        (r.local_comm_id(), r.remote_comm_id(), r.reason()),
        (0, 0x20, 28)
    );
    assert_eq!((r.message_rejected(), r.rejected_info_length()), (0, 0));
    assert_eq!(r.private_data(), &[7; 148]);
    let guid = 0x0002_C903_0000_0001u64.to_be_bytes();
    rej(&mut m, ids, 4, MsgResponse::Other, false, &guid, &[]).unwrap();
    let r = Rej(&m);
    assert_eq!(
        (
            r.local_comm_id(),
            r.message_rejected(),
            r.rejected_info_length()
        ),
        (0x10, 2, 8)
    );
    assert_eq!(r.ari_guid(), 0x0002_C903_0000_0001);
    assert_eq!(
        rej(&mut m, ids, 4, MsgResponse::Other, false, &[0; 73], &[]),
        Err(TooLong)
    );

    rtu(&mut m, ids, &[5; 224]).unwrap();
    let Ok(Msg::Rtu(r)) = decode(&m) else {
        panic!()
    };
    assert_eq!(
        (r.local_comm_id(), r.remote_comm_id(), r.private_data()[223]),
        (0x10, 0x20, 5)
    );

    dreq(&mut m, ids, 0xFF_FFFF, &[]).unwrap();
    let Ok(Msg::Dreq(r)) = decode(&m) else {
        panic!()
    };
    assert_eq!(
        (r.local_comm_id(), r.remote_comm_id(), r.remote_qpn_eecn()),
        (0x10, 0x20, 0xFF_FFFF)
    );
    assert_eq!(dreq(&mut m, ids, 0, &[0; 221]), Err(TooLong));

    drep(&mut m, ids, &[3]).unwrap();
    let Ok(Msg::Drep(r)) = decode(&m) else {
        panic!()
    };
    assert_eq!(
        (r.hdr().tid(), r.local_comm_id(), r.private_data()[0]),
        (0x1122, 0x10, 3)
    );

    sidr_req(&mut m, 0x99, 0x10, 0x8001, 0x0111_0000_0000_1F90, &[4; 216]).unwrap();
    let Ok(Msg::SidrReq(r)) = decode(&m) else {
        panic!()
    };
    assert_eq!(
        (r.requestid(), r.partition_key(), r.serviceid()),
        (0x10, 0x8001, 0x0111_0000_0000_1F90)
    );

    let info = [8u8; 72];
    let p = SidrRepFields {
        tid: 0x99,
        remote_id: 0x10,
        service_id: 0x0111_0000_0000_1F90,
        status: 0,
        qp_num: 0x45,
        qkey: 0x0123_4567,
        ece_vendor_id: 0x12_3456,
        ece_attr_mod: 2,
        info: &info,
        private_data: &[1; 136],
    };
    sidr_rep(&mut m, &p).unwrap();
    let Ok(Msg::SidrRep(r)) = decode(&m) else {
        panic!()
    };
    assert_eq!(
        (r.requestid(), r.status(), r.qpn(), r.q_key()),
        (0x10, 0, 0x45, 0x0123_4567)
    );
    assert_eq!((r.vendor_id_l(), r.vendor_id_h()), (0x56, 0x34));
    assert_eq!(r.info_area(), &info[..]);
    assert_eq!(r.additional_information_length(), 0, "C never sets it");
    assert_eq!(r.hdr().attr_mod(), 2);
}
