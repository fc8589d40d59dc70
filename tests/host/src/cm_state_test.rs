// SPDX-License-Identifier: GPL-2.0

//! Host tests of the CM state machine and timers (`core/cm/state.rs`,
//! `core/cm/timing.rs`): the numbering against the kernel's `ib_cm.h`, each
//! transition of `cm.c`, invariants over every state, and two CMs talking.

use crate::cm::msgs::{
    CmQpType,
    MsgResponse, //
};
use crate::cm::state::*;
use crate::cm::timing::*;
use crate::cm_msgs_test::kernel_file;

const LAPS: [LapState; 6] = LapState::ALL;
const U: LapState = LapState::Uninit;

// ---- numbering against the kernel's headers ------------------------------

/// The enumerator names of `enum <name>` in a C header, in order.
fn c_enum(text: &str, name: &str) -> Vec<String> {
    let start = text
        .find(&format!("enum {name} {{"))
        .unwrap_or_else(|| panic!("enum {name}"));
    let body = &text[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find("};").unwrap()];
    body.split(',')
        .map(|e| e.split('=').next().unwrap().trim().to_string())
        .filter(|e| !e.is_empty())
        .collect()
}

/// `IB_CM_MRA_REQ_SENT` without `prefix` as `MraReqSent`.
fn camel(c: &str, prefix: &str) -> String {
    c.strip_prefix(prefix)
        .unwrap()
        .split('_')
        .map(|w| {
            let mut s = w[..1].to_string();
            s.push_str(&w[1..].to_lowercase());
            s
        })
        .collect()
}

#[test]
fn states_and_events_are_numbered_as_ib_cm_h() {
    let h = kernel_file("include/rdma/ib_cm.h");
    let states: Vec<String> = c_enum(&h, "ib_cm_state")
        .iter()
        .map(|c| camel(c, "IB_CM_"))
        .collect();
    let ours: Vec<String> = State::ALL.iter().map(|s| format!("{s:?}")).collect();
    assert_eq!(states, ours);
    for (i, s) in State::ALL.iter().enumerate() {
        assert_eq!(*s as usize, i);
    }
    let laps: Vec<String> = c_enum(&h, "ib_cm_lap_state")
        .iter()
        .map(|c| camel(&c.replace("IB_CM_LAP_", "IB_CM_"), "IB_CM_"))
        .collect();
    let ours: Vec<String> = LapState::ALL.iter().map(|s| format!("{s:?}")).collect();
    assert_eq!(laps, ours);
    let events: Vec<String> = c_enum(&h, "ib_cm_event_type")
        .iter()
        .map(|c| camel(c, "IB_CM_"))
        .collect();
    assert_eq!(events.len(), 18);
    for (i, name) in events.iter().enumerate() {
        let e = all_events()[i];
        assert_eq!(&format!("{e:?}"), name);
        assert_eq!(e as usize, i);
    }
}

fn all_events() -> [Event; 18] {
    use Event::*;
    [
        ReqError,
        ReqReceived,
        RepError,
        RepReceived,
        RtuReceived,
        UserEstablished,
        DreqError,
        DreqReceived,
        DrepReceived,
        TimewaitExit,
        MraReceived,
        RejReceived,
        LapError,
        LapReceived,
        AprReceived,
        SidrReqError,
        SidrReqReceived,
        SidrRepReceived,
    ]
}

#[test]
fn reject_texts_are_cm_c_ones() {
    let h = kernel_file("include/rdma/ib_cm.h");
    let start = h.find("enum ib_cm_rej_reason {").unwrap();
    let body = &h[start..start + h[start..].find("};").unwrap()];
    let mut values = std::collections::BTreeMap::new();
    for line in body.lines() {
        if let Some((name, v)) = line.split_once('=') {
            let v: i32 = v.trim().trim_end_matches(',').parse().unwrap();
            values.insert(name.trim().to_string(), v);
        }
    }
    assert_eq!(values.len(), 34);
    let c = kernel_file("drivers/infiniband/core/cm.c");
    let table = &c[c.find("ibcm_rej_reason_strs[] = {").unwrap()..];
    let table = &table[..table.find("};").unwrap()];
    let joined = table.replace("=\n", "= ");
    let mut seen = 0;
    for line in joined.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix('[') else {
            continue;
        };
        let (name, text) = rest.split_once(']').unwrap();
        let text = text.split('"').nth(1).unwrap();
        let v = values[name.trim()];
        assert_eq!(reject_msg(v).to_str().unwrap(), text, "{name}");
        seen += 1;
    }
    assert_eq!(seen, 34);
    for v in [-1, 0, 34, 36, 1000, i32::MIN] {
        assert_eq!(reject_msg(v).to_str().unwrap(), "unrecognized reason");
    }
    assert_eq!(values["IB_CM_REJ_TIMEOUT"], rej_reason::TIMEOUT.into());
    assert_eq!(
        values["IB_CM_REJ_STALE_CONN"],
        rej_reason::STALE_CONN.into()
    );
    assert_eq!(
        values["IB_CM_REJ_INVALID_SERVICE_ID"],
        rej_reason::INVALID_SERVICE_ID.into()
    );
    assert_eq!(
        values["IB_CM_REJ_CONSUMER_DEFINED"],
        rej_reason::CONSUMER_DEFINED.into()
    );
    assert_eq!(
        values["IB_CM_REJ_INVALID_GID"],
        rej_reason::INVALID_GID.into()
    );
    assert_eq!(
        values["IB_CM_REJ_INVALID_ALT_GID"],
        rej_reason::INVALID_ALT_GID.into()
    );
}

#[test]
fn qp_attr_mask_bits_are_ib_verbs_h_ones() {
    let h = kernel_file("include/rdma/ib_verbs.h");
    let names = c_enum(&h, "ib_qp_attr_mask");
    let bit = |n: &str| 1u32 << names.iter().position(|x| x == n).unwrap();
    use qp_mask::*;
    for (name, ours) in [
        ("IB_QP_STATE", STATE),
        ("IB_QP_ACCESS_FLAGS", ACCESS_FLAGS),
        ("IB_QP_PKEY_INDEX", PKEY_INDEX),
        ("IB_QP_PORT", PORT),
        ("IB_QP_AV", AV),
        ("IB_QP_PATH_MTU", PATH_MTU),
        ("IB_QP_TIMEOUT", TIMEOUT),
        ("IB_QP_RETRY_CNT", RETRY_CNT),
        ("IB_QP_RNR_RETRY", RNR_RETRY),
        ("IB_QP_RQ_PSN", RQ_PSN),
        ("IB_QP_MAX_QP_RD_ATOMIC", MAX_QP_RD_ATOMIC),
        ("IB_QP_ALT_PATH", ALT_PATH),
        ("IB_QP_MIN_RNR_TIMER", MIN_RNR_TIMER),
        ("IB_QP_SQ_PSN", SQ_PSN),
        ("IB_QP_MAX_DEST_RD_ATOMIC", MAX_DEST_RD_ATOMIC),
        ("IB_QP_PATH_MIG_STATE", PATH_MIG_STATE),
        ("IB_QP_DEST_QPN", DEST_QPN),
    ] {
        assert_eq!(bit(name), ours, "{name}");
    }
}

// ---- timers ---------------------------------------------------------------------

#[test]
fn iba_times_convert_as_cm_convert_to_ms() {
    for n in 0..=8u8 {
        assert_eq!(convert_to_ms(n), 1, "{n}");
    }
    assert_eq!(convert_to_ms(9), 2);
    assert_eq!(convert_to_ms(14), 64);
    assert_eq!(convert_to_ms(20), 4096);
    assert_eq!(convert_to_ms(MRA_SETTING), 65536);
    assert_eq!(convert_to_ms(31), 1 << 23);
    assert_eq!(
        convert_to_ms(255),
        1 << 30,
        "saturates instead of overflowing"
    );
    // The approximation: 2^(n-8) ms is 4.096 us * 2^n within 5%.
    for n in 8..=31u8 {
        let exact_ms = iba_time_ns(n) as f64 / 1e6;
        let approx = f64::from(convert_to_ms(n));
        assert!((exact_ms / approx - 1.048576).abs() < 1e-9, "{n}");
    }
    assert_eq!(iba_time_ns(0), 4096);
    assert_eq!(iba_time_ns(MRA_SETTING), 68_719_476_736);
}

/// `cm_ack_timeout()` as written in `cm.c`, on ints.
fn c_ack_timeout(ca_ack_delay: u8, packet_life_time: u8) -> u8 {
    let d = i32::from(ca_ack_delay);
    let mut a = i32::from(packet_life_time) + 1;
    if a >= d {
        a += (d >= a - 1) as i32;
    } else {
        a = d + (a >= d - 1) as i32;
    }
    a.min(31) as u8
}

#[test]
fn ack_timeout_follows_cm_c_for_every_input() {
    for d in 0..=255u8 {
        for l in 0..=255u8 {
            assert_eq!(ack_timeout(d, l), c_ack_timeout(d, l), "{d} {l}");
        }
    }
    assert_eq!(
        ack_timeout(15, 13),
        16,
        "life+1 = 14 is within 50% of 15: round up"
    );
    assert_eq!(ack_timeout(15, 10), 15);
    assert_eq!(ack_timeout(10, 15), 16);
    assert_eq!(ack_timeout(0, 30), 31);
    // The REP handler recomputes from av.timeout - 1, which wraps for 0.
    assert_eq!(ack_timeout(5, 0u8.wrapping_sub(1)), 31);
}

#[test]
fn cm_timeouts_follow_the_req_fields() {
    // rdma_cm's defaults: packet life time 14 (RoCE: 18 is common), response
    // timeout 20.
    assert_eq!(req_timeout_ms(14, 20), 64 * 2 + 4096);
    assert_eq!(rep_timeout_ms(20), 4096);
    assert_eq!(mra_timeout_ms(MRA_SETTING, 15), 65536 + 128);
    assert_eq!(timewait_ms(19), 2048);
    assert_eq!(destroy_wait_ms(15, 4224), 15 * 4224 * 5 / 4);
    assert_eq!(req_timeout_ms(31, 31), 3 << 23);
}

// ---- consumer calls ---------------------------------------------------------------

fn rc_req() -> ReqCheck {
    ReqCheck {
        has_primary_path: true,
        qp_type: Some(CmQpType::Rc),
        private_data_len: 56,
        alt_path_matches: None,
    }
}

#[test]
fn send_req_checks_parameters_before_state() {
    assert_eq!(
        send_req(State::Idle, U, &rc_req()).unwrap(),
        Step {
            state: State::ReqSent,
            lap: U,
            gate: Some(Gate::Post(Send::Req)),
            dup: false,
            cancel_mad: false,
            leave: Leave::Stay,
            private_data: Keep::Same,
            send: None,
            deliver: None,
        }
    );
    let bad = [
        ReqCheck {
            has_primary_path: false,
            ..rc_req()
        },
        ReqCheck {
            qp_type: None,
            ..rc_req()
        },
        ReqCheck {
            qp_type: Some(CmQpType::XrcTgt),
            ..rc_req()
        },
        ReqCheck {
            private_data_len: 93,
            ..rc_req()
        },
        ReqCheck {
            alt_path_matches: Some(false),
            ..rc_req()
        },
    ];
    for s in State::ALL {
        for p in &bad {
            assert_eq!(send_req(s, U, p), Err(Refusal::Inval));
        }
        let ok = send_req(s, U, &rc_req());
        assert_eq!(ok.is_ok(), s == State::Idle, "{s:?}");
    }
    for qp in [CmQpType::Uc, CmQpType::XrcIni] {
        let p = ReqCheck {
            qp_type: Some(qp),
            alt_path_matches: Some(true),
            private_data_len: 92,
            ..rc_req()
        };
        assert!(send_req(State::Idle, U, &p).is_ok());
    }
}

/// The states from which a consumer call succeeds.
fn accepting(f: impl Fn(State, LapState) -> Result<Step, Refusal>) -> Vec<State> {
    State::ALL
        .iter()
        .copied()
        .filter(|s| f(*s, U).is_ok())
        .collect()
}

#[test]
fn each_consumer_call_fits_the_states_cm_c_allows() {
    use State::*;
    assert_eq!(accepting(listen), [Idle]);
    assert_eq!(accepting(|s, l| send_rep(s, l, 0)), [ReqRcvd, MraReqSent]);
    assert_eq!(accepting(|s, l| send_rtu(s, l, 0)), [RepRcvd, MraRepSent]);
    assert_eq!(accepting(|s, l| send_dreq(s, l, 0)), [Established]);
    assert_eq!(accepting(|s, l| send_drep(s, l, 0)), [DreqRcvd]);
    assert_eq!(
        accepting(|s, l| send_rej(s, l, 28, 0, 0)),
        [ReqSent, ReqRcvd, MraReqSent, MraReqRcvd, RepSent, RepRcvd, MraRepSent, MraRepRcvd]
    );
    assert_eq!(accepting(prepare_mra), [ReqRcvd, RepRcvd]);
    assert_eq!(accepting(|s, l| send_sidr_req(s, l, true, 0)), [Idle]);
    assert_eq!(accepting(|s, l| send_sidr_rep(s, l, 0, 0)), [SidrReqRcvd]);
    assert_eq!(accepting(notify_comm_est), [RepSent, MraRepRcvd]);
    assert_eq!(accepting(notify_path_mig), [Established]);
    assert_eq!(notify_comm_est(Established, U), Err(Refusal::IsConn));
    assert_eq!(Refusal::IsConn.to_errno(), -106);
    assert_eq!(Refusal::Inval.to_errno(), -22);
}

#[test]
fn private_data_limits_are_the_ib_cm_data_sizes() {
    use State::*;
    assert!(send_rep(ReqRcvd, U, 196).is_ok());
    assert_eq!(send_rep(ReqRcvd, U, 197), Err(Refusal::Inval));
    assert!(send_rtu(RepRcvd, U, 224).is_ok());
    assert_eq!(send_rtu(RepRcvd, U, 225), Err(Refusal::Inval));
    assert!(send_dreq(Established, U, 220).is_ok());
    assert_eq!(send_dreq(Established, U, 221), Err(Refusal::Inval));
    assert!(send_drep(DreqRcvd, U, 224).is_ok());
    assert_eq!(send_drep(DreqRcvd, U, 225), Err(Refusal::Inval));
    assert!(send_rej(ReqRcvd, U, 28, 72, 148).is_ok());
    assert_eq!(send_rej(ReqRcvd, U, 28, 73, 0), Err(Refusal::Inval));
    assert_eq!(send_rej(ReqRcvd, U, 28, 0, 149), Err(Refusal::Inval));
    assert!(send_sidr_req(Idle, U, true, 216).is_ok());
    assert_eq!(send_sidr_req(Idle, U, true, 217), Err(Refusal::Inval));
    assert_eq!(send_sidr_req(Idle, U, false, 0), Err(Refusal::Inval));
    assert!(send_sidr_rep(SidrReqRcvd, U, 72, 136).is_ok());
    assert_eq!(send_sidr_rep(SidrReqRcvd, U, 73, 0), Err(Refusal::Inval));
    assert_eq!(send_sidr_rep(SidrReqRcvd, U, 0, 137), Err(Refusal::Inval));
}

fn rej(reason: u16, rejected: MsgResponse, zero_local_id: bool, ari: RejAri) -> Option<Send> {
    Some(Send::Rej {
        reason,
        rejected,
        zero_local_id,
        ari,
    })
}

#[test]
fn a_rej_goes_idle_before_the_rep_and_timewait_after() {
    use State::*;
    let c = RejAri::Consumer;
    for (s, next, msg, zero) in [
        (ReqSent, Idle, MsgResponse::Other, false),
        (MraReqRcvd, Idle, MsgResponse::Other, false),
        (ReqRcvd, Idle, MsgResponse::Req, true),
        (MraReqSent, Idle, MsgResponse::Req, false),
        (RepRcvd, Idle, MsgResponse::Rep, false),
        (MraRepSent, Idle, MsgResponse::Rep, false),
        (RepSent, Timewait, MsgResponse::Other, false),
        (MraRepRcvd, Timewait, MsgResponse::Other, false),
    ] {
        let st = send_rej(s, U, 28, 0, 0).unwrap();
        assert_eq!(st.state, next, "{s:?}");
        let leave = if next == Idle {
            Leave::ResetToIdle
        } else {
            Leave::EnterTimewait
        };
        assert_eq!(st.leave, leave);
        assert_eq!(st.send, rej(28, msg, zero, c), "{s:?}");
        assert_eq!(st.gate, None, "the state changes even if the REJ fails");
        assert!(!st.cancel_mad);
    }
}

#[test]
fn rtu_and_drep_keep_their_private_data_and_mra_clears_it() {
    use State::*;
    assert_eq!(send_rtu(RepRcvd, U, 4).unwrap().private_data, Keep::Store);
    let d = send_drep(DreqRcvd, U, 4).unwrap();
    assert_eq!(
        (d.state, d.leave, d.private_data),
        (Timewait, Leave::EnterTimewait, Keep::Store)
    );
    assert_eq!(d.send, Some(Send::Drep));
    assert_eq!(d.gate, None, "timewait is entered even if the DREP fails");
    let m = prepare_mra(ReqRcvd, U).unwrap();
    assert_eq!((m.state, m.private_data), (MraReqSent, Keep::Clear));
    assert_eq!(prepare_mra(RepRcvd, U).unwrap().state, MraRepSent);
    let l = prepare_mra(Established, LapState::Rcvd).unwrap();
    assert_eq!((l.state, l.lap), (Established, LapState::MraLapSent));
    assert_eq!(
        prepare_mra(Established, LapState::Idle),
        Err(Refusal::Inval)
    );
}

#[test]
fn dreq_cancels_a_lap_in_flight_and_falls_back_to_timewait() {
    use State::*;
    for lap in LAPS {
        let st = send_dreq(Established, lap, 0).unwrap();
        assert_eq!(st.state, DreqSent);
        assert_eq!(st.gate, Some(Gate::Post(Send::Dreq)));
        assert_eq!(
            st.cancel_mad,
            matches!(lap, LapState::Sent | LapState::MraLapRcvd),
            "{lap:?}"
        );
    }
    let f = dreq_not_posted(Established, U);
    assert_eq!((f.state, f.leave), (Timewait, Leave::EnterTimewait));
}

#[test]
fn listen_service_ids() {
    let mut next = ASSIGN_SERVICE_ID;
    assert_eq!(
        listen_service_id(ASSIGN_SERVICE_ID, &mut next),
        Ok(ASSIGN_SERVICE_ID)
    );
    assert_eq!(
        listen_service_id(ASSIGN_SERVICE_ID, &mut next),
        Ok(ASSIGN_SERVICE_ID + 1)
    );
    assert_eq!(next, ASSIGN_SERVICE_ID + 2);
    assert_eq!(
        listen_service_id(ASSIGN_SERVICE_ID | 5, &mut next),
        Err(Refusal::Inval)
    );
    let rdma_cm_port = 0x0000_0000_0106_4E20; // RDMA_PS_TCP, port 20000
    assert_eq!(listen_service_id(rdma_cm_port, &mut next), Ok(rdma_cm_port));
    assert_eq!(
        listen_service_id(0x0300_0000_0000_0001, &mut next),
        Ok(0x0300_0000_0000_0001)
    );
    assert_eq!(listen(State::Idle, U).unwrap().state, State::Listen);
    assert_eq!(listen(State::Listen, U), Err(Refusal::Inval));
}

// ---- destroy ------------------------------------------------------------------------

/// Steps destroy until idle; returns the steps taken.
fn destroy_all(
    mut s: State,
    lap: LapState,
    qp: Option<CmQpType>,
    cause: DestroyCause,
) -> Vec<Step> {
    let mut steps = Vec::new();
    loop {
        let st = destroy(s, lap, qp, cause);
        steps.push(st);
        s = st.state;
        if s == State::Idle {
            return steps;
        }
        assert!(steps.len() < 4, "destroy loops: {steps:?}");
    }
}

#[test]
fn destroy_reaches_idle_from_every_state() {
    for s in State::ALL {
        for lap in LAPS {
            for qp in [None, Some(CmQpType::Rc), Some(CmQpType::XrcTgt)] {
                for cause in [DestroyCause::Consumer, DestroyCause::NoMemory] {
                    let steps = destroy_all(s, lap, qp, cause);
                    assert!(steps.len() <= 3);
                    for st in &steps {
                        assert_eq!(st.gate, None, "destroy never waits on a send");
                        assert_eq!(st.deliver, None, "no event after destroy");
                    }
                }
            }
        }
    }
}

#[test]
fn destroy_tells_the_peer_as_cm_destroy_id_does() {
    use State::*;
    let d = |s| destroy_all(s, U, Some(CmQpType::Rc), DestroyCause::Consumer);
    let sends = |s| d(s).iter().filter_map(|st| st.send).collect::<Vec<_>>();
    let first = |s| d(s)[0];
    assert_eq!(
        sends(ReqSent),
        [rej(4, MsgResponse::Other, false, RejAri::NodeGuid).unwrap()]
    );
    assert!(first(ReqSent).cancel_mad);
    assert_eq!(
        sends(ReqRcvd),
        [rej(28, MsgResponse::Req, true, RejAri::Empty).unwrap()]
    );
    assert!(destroy_all(ReqRcvd, U, None, DestroyCause::NoMemory)[0]
        .send
        .is_none());
    assert_eq!(
        sends(RepSent),
        [rej(28, MsgResponse::Other, false, RejAri::Empty).unwrap()]
    );
    assert_eq!(d(RepSent).len(), 2, "through timewait");
    assert_eq!(
        sends(RepRcvd),
        [rej(28, MsgResponse::Rep, false, RejAri::Empty).unwrap()]
    );
    assert_eq!(sends(Established), [Send::IssueDreq]);
    assert_eq!(first(Established).leave, Leave::EnterTimewait);
    assert!(destroy_all(
        Established,
        U,
        Some(CmQpType::XrcTgt),
        DestroyCause::Consumer
    )[0]
    .send
    .is_none());
    assert_eq!(sends(DreqSent), []);
    assert!(first(DreqSent).cancel_mad);
    assert_eq!(sends(DreqRcvd), [Send::Drep]);
    assert_eq!(
        sends(SidrReqRcvd),
        [Send::SidrRepStatus(sidr_status::REJECT)]
    );
    assert_eq!(first(SidrReqRcvd).leave, Leave::ForgetSidr);
    assert!(first(SidrReqSent).cancel_mad);
    assert_eq!(first(Listen).leave, Leave::Unlisten);
    assert_eq!(sends(Timewait), []);
    assert_eq!(sends(Idle), []);
}

// ---- received messages --------------------------------------------------------------

/// For a receive handler, the states in which it does something.
fn acting(f: impl Fn(State, LapState) -> Step, lap: LapState) -> Vec<State> {
    State::ALL
        .iter()
        .copied()
        .filter(|s| !f(*s, lap).is_noop(*s, lap))
        .collect()
}

#[test]
fn received_messages_act_only_in_their_states() {
    use State::*;
    let ev = |st: Step| st.deliver;
    assert_eq!(acting(rep_received, U), [ReqSent, MraReqRcvd]);
    assert_eq!(ev(rep_received(ReqSent, U)), Some(Event::RepReceived));
    assert!(rep_received(MraReqRcvd, U).cancel_mad);
    // Every other state drops an RTU as a duplicate.
    for s in State::ALL {
        let st = rtu_received(s, U);
        if matches!(s, RepSent | MraRepRcvd) {
            assert_eq!(
                (st.state, st.deliver),
                (Established, Some(Event::RtuReceived))
            );
            assert!(st.cancel_mad);
        } else {
            assert_eq!(
                st,
                Step {
                    dup: true,
                    ..Step::stay(s, U)
                }
            );
        }
    }
    assert_eq!(acting(drep_received, U), [DreqSent, DreqRcvd]);
    let d = drep_received(DreqSent, U);
    assert_eq!(
        (d.state, d.leave, d.cancel_mad),
        (Timewait, Leave::EnterTimewait, true)
    );
    assert_eq!(acting(sidr_rep_received, U), [SidrReqSent]);
    assert_eq!(sidr_rep_received(SidrReqSent, U).state, Idle);
    assert_eq!(acting(user_established, U), [Established]);
    assert!(user_established(Established, U).cancel_mad);
    assert_eq!(acting(|s, l| timewait_expired(s, l, true), U), [Timewait]);
    assert_eq!(acting(|s, l| timewait_expired(s, l, false), U), []);
}

#[test]
fn dreq_handling() {
    use State::*;
    assert_eq!(acting(|s, l| dreq_received(s, l, false), U), []);
    let acts = acting(|s, l| dreq_received(s, l, true), U);
    assert_eq!(
        acts,
        [
            RepSent,
            MraRepRcvd,
            Established,
            DreqSent,
            DreqRcvd,
            Timewait
        ]
    );
    for s in [RepSent, MraRepRcvd, DreqSent] {
        let st = dreq_received(s, U, true);
        assert_eq!((st.state, st.cancel_mad), (DreqRcvd, true));
        assert_eq!(st.deliver, Some(Event::DreqReceived));
    }
    for lap in LAPS {
        let st = dreq_received(Established, lap, true);
        assert_eq!(st.state, DreqRcvd);
        assert_eq!(
            st.cancel_mad,
            matches!(lap, LapState::Sent | LapState::MraLapRcvd)
        );
    }
    let tw = dreq_received(Timewait, U, true);
    assert_eq!(
        (tw.state, tw.dup, tw.send, tw.deliver),
        (Timewait, true, Some(Send::Drep), None)
    );
    let again = dreq_received(DreqRcvd, U, true);
    assert_eq!((again.dup, again.send, again.deliver), (true, None, None));
}

#[test]
fn rej_handling() {
    use State::*;
    let stale = rej_reason::STALE_CONN;
    for s in [
        ReqSent, MraReqRcvd, RepSent, MraRepRcvd, ReqRcvd, MraReqSent,
    ] {
        let cancel = matches!(s, ReqSent | MraReqRcvd | RepSent | MraRepRcvd);
        let st = rej_received(s, U, 28);
        assert_eq!(
            (st.state, st.leave, st.cancel_mad),
            (Idle, Leave::ResetToIdle, cancel),
            "{s:?}"
        );
        assert_eq!(st.deliver, Some(Event::RejReceived));
        let st = rej_received(s, U, stale);
        assert_eq!(
            (st.state, st.leave),
            (Timewait, Leave::EnterTimewait),
            "{s:?}"
        );
    }
    for s in [DreqSent, RepRcvd, MraRepSent] {
        let st = rej_received(s, U, 28);
        assert_eq!((st.state, st.cancel_mad), (Timewait, s == DreqSent));
    }
    assert_eq!(rej_received(Established, U, 28).state, Timewait);
    let l = rej_received(Established, LapState::Sent, 28);
    assert_eq!((l.state, l.cancel_mad), (Timewait, true));
    for lap in [
        LapState::Idle,
        LapState::Rcvd,
        LapState::MraLapSent,
        LapState::MraLapRcvd,
    ] {
        assert!(rej_received(Established, lap, 28).is_noop(Established, lap));
    }
    for s in [Idle, Listen, DreqRcvd, Timewait, SidrReqSent, SidrReqRcvd] {
        assert!(rej_received(s, U, 28).is_noop(s, U));
    }
    assert_eq!(
        rej_lookup(rej_reason::TIMEOUT, 0),
        RejLookup::RemoteIdAndGuid
    );
    assert_eq!(rej_lookup(28, 0), RejLookup::LocalIdOnly);
    assert_eq!(rej_lookup(28, 1), RejLookup::LocalAndRemoteId);
    assert_eq!(rej_lookup(28, 2), RejLookup::LocalAndRemoteId);
    assert_eq!(rej_lookup(28, 3), RejLookup::LocalAndRemoteId);
}

#[test]
fn mra_handling() {
    use State::*;
    let (req, rep, other) = (0u8, 1u8, 2u8);
    let st = mra_received(ReqSent, U, req, 70_000);
    assert_eq!(st.state, MraReqRcvd);
    assert_eq!(st.gate, Some(Gate::ModifyMad(70_000)));
    assert_eq!(st.deliver, Some(Event::MraReceived));
    assert!(!st.cancel_mad, "the REQ stays outstanding, only later");
    assert!(mra_received(ReqSent, U, rep, 1).is_noop(ReqSent, U));
    assert_eq!(mra_received(RepSent, U, rep, 1).state, MraRepRcvd);
    assert!(mra_received(RepSent, U, req, 1).is_noop(RepSent, U));
    let l = mra_received(Established, LapState::Sent, other, 1);
    assert_eq!(l.lap, LapState::MraLapRcvd);
    assert!(mra_received(Established, LapState::MraLapRcvd, other, 1).dup);
    for s in [MraReqRcvd, MraRepRcvd] {
        let st = mra_received(s, U, req, 1);
        assert_eq!(
            st,
            Step {
                dup: true,
                ..Step::stay(s, U)
            }
        );
    }
    for s in [Idle, ReqRcvd, RepRcvd, DreqSent, Timewait] {
        for m in 0..4 {
            assert!(mra_received(s, U, m, 1).is_noop(s, U), "{s:?} {m}");
        }
    }
    assert_eq!(mra_lookup(0), Some(RejLookup::LocalIdOnly));
    assert_eq!(mra_lookup(1), Some(RejLookup::LocalAndRemoteId));
    assert_eq!(mra_lookup(2), Some(RejLookup::LocalAndRemoteId));
    assert_eq!(mra_lookup(3), None);
}

#[test]
fn duplicates_are_answered_not_reprocessed() {
    use State::*;
    for s in State::ALL {
        let st = dup_req(s, U);
        assert!(st.dup);
        assert_eq!(st.state, s, "a duplicate never changes the state");
        assert_eq!(st.deliver, None);
        let expect = match s {
            MraReqSent => Some(Send::Mra(MsgResponse::Req)),
            Timewait => rej(
                rej_reason::STALE_CONN,
                MsgResponse::Other,
                false,
                RejAri::Empty,
            ),
            _ => None,
        };
        assert_eq!(st.send, expect, "{s:?}");
        let st = dup_rep(s, U);
        assert!(st.dup);
        assert_eq!((st.state, st.deliver), (s, None));
        let expect = match s {
            Established => Some(Send::Rtu),
            MraRepSent => Some(Send::Mra(MsgResponse::Rep)),
            _ => None,
        };
        assert_eq!(st.send, expect, "{s:?}");
    }
}

#[test]
fn new_requests() {
    assert_eq!(new_req(ReqMatch::Duplicate), (Issue::Nothing, None));
    assert_eq!(
        new_req(ReqMatch::Stale),
        (Issue::Rej(rej_reason::STALE_CONN, MsgResponse::Req), None)
    );
    assert_eq!(
        new_req(ReqMatch::NoListener),
        (
            Issue::Rej(rej_reason::INVALID_SERVICE_ID, MsgResponse::Req),
            None
        )
    );
    let (issue, step) = new_req(ReqMatch::Listener);
    assert_eq!(issue, Issue::Nothing);
    let step = step.unwrap();
    assert_eq!(
        (step.state, step.deliver),
        (State::ReqRcvd, Some(Event::ReqReceived))
    );

    assert_eq!(new_sidr_req(SidrMatch::Duplicate), None);
    let no = new_sidr_req(SidrMatch::NoListener).unwrap();
    assert_eq!(
        no.gate,
        Some(Gate::Post(Send::SidrRepStatus(sidr_status::UNSUPPORTED)))
    );
    assert_eq!((no.state, no.deliver), (State::Idle, None));
    let yes = new_sidr_req(SidrMatch::Listener).unwrap();
    assert_eq!(
        (yes.state, yes.deliver),
        (State::SidrReqRcvd, Some(Event::SidrReqReceived))
    );
}

#[test]
fn lap_and_apr_are_ignored_on_roce() {
    use State::*;
    for s in State::ALL {
        for lap in LAPS {
            assert!(lap_received(s, lap, true).is_noop(s, lap));
            assert!(apr_received(s, lap, true).is_noop(s, lap));
        }
    }
    let l = lap_received(Established, LapState::Idle, false);
    assert_eq!(
        (l.lap, l.deliver),
        (LapState::Rcvd, Some(Event::LapReceived))
    );
    let m = lap_received(Established, LapState::MraLapSent, false);
    assert_eq!((m.dup, m.send), (true, Some(Send::Mra(MsgResponse::Other))));
    assert!(lap_received(Established, LapState::Rcvd, false).dup);
    assert!(lap_received(RepSent, LapState::Idle, false).is_noop(RepSent, LapState::Idle));
    let a = apr_received(Established, LapState::Sent, false);
    assert_eq!(
        (a.lap, a.cancel_mad, a.deliver),
        (LapState::Idle, true, Some(Event::AprReceived))
    );
    assert!(apr_received(Established, LapState::Idle, false).is_noop(Established, LapState::Idle));
}

#[test]
fn unanswered_messages_become_error_events() {
    use State::*;
    let f = SendStatus::Failed;
    for (s, next, ev, leave) in [
        (ReqSent, Idle, Event::ReqError, Leave::ResetToIdle),
        (MraReqRcvd, Idle, Event::ReqError, Leave::ResetToIdle),
        (RepSent, Idle, Event::RepError, Leave::ResetToIdle),
        (MraRepRcvd, Idle, Event::RepError, Leave::ResetToIdle),
        (DreqSent, Timewait, Event::DreqError, Leave::EnterTimewait),
        (SidrReqSent, Idle, Event::SidrReqError, Leave::Stay),
    ] {
        let st = send_failed(s, U, s, f);
        assert_eq!(
            (st.state, st.deliver, st.leave),
            (next, Some(ev), leave),
            "{s:?}"
        );
        for other in [SendStatus::Success, SendStatus::Flushed] {
            assert!(send_failed(s, U, s, other).is_noop(s, U));
        }
    }
    // A MAD sent in REQ_SENT failing after the REP arrived is stale news.
    assert!(send_failed(RepRcvd, U, ReqSent, f).is_noop(RepRcvd, U));
    for s in [Idle, Listen, ReqRcvd, Established, Timewait, DreqRcvd] {
        assert!(send_failed(s, U, s, f).is_noop(s, U));
    }
}

#[test]
fn qp_attributes_by_state() {
    use qp_mask::*;
    use State::*;
    let rc = QpAttrInput {
        qp_type: Some(CmQpType::Rc),
        alt_dlid: false,
        alt_port: false,
    };
    let connecting = [
        ReqRcvd,
        MraReqSent,
        RepRcvd,
        MraRepSent,
        RepSent,
        MraRepRcvd,
        Established,
    ];
    for s in State::ALL {
        let init = qp_attr_mask(s, U, QpTarget::Init, rc);
        let init_ok = connecting.contains(&s) || matches!(s, ReqSent | MraReqRcvd);
        assert_eq!(init.is_ok(), init_ok, "{s:?}");
        if init_ok {
            assert_eq!(init.unwrap(), STATE | ACCESS_FLAGS | PKEY_INDEX | PORT);
        }
        for t in [QpTarget::Rtr, QpTarget::Rts] {
            let r = qp_attr_mask(s, U, t, rc);
            assert_eq!(r.is_ok(), connecting.contains(&s), "{s:?} {t:?}");
            if !connecting.contains(&s) {
                assert_eq!(r, Err(Refusal::Inval));
            }
        }
    }
    let e = Established;
    assert_eq!(
        qp_attr_mask(e, U, QpTarget::Rtr, rc),
        Ok(STATE | AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER)
    );
    let uc = QpAttrInput {
        qp_type: Some(CmQpType::Uc),
        ..rc
    };
    assert_eq!(
        qp_attr_mask(e, U, QpTarget::Rtr, uc),
        Ok(STATE | AV | PATH_MTU | DEST_QPN | RQ_PSN)
    );
    let alt = QpAttrInput {
        alt_dlid: true,
        alt_port: true,
        ..rc
    };
    assert_ne!(
        qp_attr_mask(e, U, QpTarget::Rtr, alt).unwrap() & ALT_PATH,
        0
    );
    let alt_no_port = QpAttrInput {
        alt_port: false,
        ..alt
    };
    assert_eq!(
        qp_attr_mask(e, U, QpTarget::Rtr, alt_no_port).unwrap() & ALT_PATH,
        0
    );
    assert_eq!(
        qp_attr_mask(e, U, QpTarget::Rts, rc),
        Ok(STATE | SQ_PSN | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC | TIMEOUT)
    );
    let xrc_tgt = QpAttrInput {
        qp_type: Some(CmQpType::XrcTgt),
        ..rc
    };
    assert_eq!(
        qp_attr_mask(e, U, QpTarget::Rts, xrc_tgt),
        Ok(STATE | SQ_PSN | TIMEOUT)
    );
    assert_eq!(qp_attr_mask(e, U, QpTarget::Rts, uc), Ok(STATE | SQ_PSN));
    assert_eq!(
        qp_attr_mask(e, U, QpTarget::Rts, alt_no_port),
        Ok(STATE | SQ_PSN | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC | TIMEOUT | PATH_MIG_STATE)
    );
    assert_eq!(
        qp_attr_mask(e, LapState::Idle, QpTarget::Rts, rc),
        Ok(ALT_PATH | PATH_MIG_STATE)
    );
    assert_eq!(init_access_flags(0, true), ACCESS_REMOTE_WRITE);
    assert_eq!(
        init_access_flags(4, false),
        ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC
    );
    assert_eq!(init_access_flags(4, true), 0b11_0000_1110);
}

// ---- invariants over every state ------------------------------------------------------

/// Every step any function gives, for every state and LAP state.
fn every_step() -> Vec<(String, State, LapState, Step)> {
    let mut v = Vec::new();
    for s in State::ALL {
        for lap in LAPS {
            let mut add = |name: &str, st: Step| v.push((name.to_string(), s, lap, st));
            for (name, r) in [
                ("listen", listen(s, lap)),
                ("send_req", send_req(s, lap, &rc_req())),
                ("send_rep", send_rep(s, lap, 0)),
                ("send_rtu", send_rtu(s, lap, 0)),
                ("send_dreq", send_dreq(s, lap, 0)),
                ("send_drep", send_drep(s, lap, 0)),
                ("send_rej", send_rej(s, lap, 28, 0, 0)),
                ("prepare_mra", prepare_mra(s, lap)),
                ("send_sidr_req", send_sidr_req(s, lap, true, 0)),
                ("send_sidr_rep", send_sidr_rep(s, lap, 0, 0)),
                ("notify_comm_est", notify_comm_est(s, lap)),
                ("notify_path_mig", notify_path_mig(s, lap)),
            ] {
                if let Ok(st) = r {
                    add(name, st);
                }
            }
            if send_dreq(s, lap, 0).is_ok() {
                add("dreq_not_posted", dreq_not_posted(s, lap));
            }
            add("user_established", user_established(s, lap));
            for qp in [None, Some(CmQpType::XrcTgt)] {
                add("destroy", destroy(s, lap, qp, DestroyCause::Consumer));
                add("destroy", destroy(s, lap, qp, DestroyCause::NoMemory));
            }
            add("dup_req", dup_req(s, lap));
            add("rep_received", rep_received(s, lap));
            add("dup_rep", dup_rep(s, lap));
            add("rtu_received", rtu_received(s, lap));
            add("dreq_received", dreq_received(s, lap, true));
            add("dreq_received", dreq_received(s, lap, false));
            add("drep_received", drep_received(s, lap));
            for reason in [rej_reason::STALE_CONN, rej_reason::TIMEOUT, 28] {
                add("rej_received", rej_received(s, lap, reason));
            }
            for m in 0..4 {
                add("mra_received", mra_received(s, lap, m, 100));
            }
            for roce in [false, true] {
                add("lap_received", lap_received(s, lap, roce));
                add("apr_received", apr_received(s, lap, roce));
            }
            add("sidr_rep_received", sidr_rep_received(s, lap));
            add("timewait_expired", timewait_expired(s, lap, true));
            for sent_in in State::ALL {
                for status in [SendStatus::Success, SendStatus::Flushed, SendStatus::Failed] {
                    add("send_failed", send_failed(s, lap, sent_in, status));
                }
            }
        }
    }
    v
}

#[test]
fn every_step_keeps_the_bookkeeping_consistent() {
    let all = every_step();
    assert!(all.len() > 5000);
    for (name, from, lap, st) in &all {
        let at = format!("{name} from {from:?}/{lap:?}");
        match st.leave {
            Leave::ResetToIdle | Leave::Unlisten => assert_eq!(st.state, State::Idle, "{at}"),
            Leave::EnterTimewait => {
                assert_eq!(st.state, State::Timewait, "{at}");
                assert_ne!(*from, State::Timewait, "{at}: timewait is entered once");
            }
            Leave::ForgetSidr => assert_eq!(st.state, State::Idle, "{at}"),
            Leave::Stay => {}
        }
        // Only the CM's own bookkeeping moves an ID out of LISTEN.
        if *from == State::Listen {
            assert!(st.state == State::Listen || name == "destroy", "{at}");
        }
        // A LAP state changes only while established.
        if st.lap != *lap {
            assert_eq!(*from, State::Established, "{at}");
        }
        // Events come with a change, except the ones that report a
        // message without one (user established, MRA/LAP/APR on the LAP).
        if st.deliver.is_some() && st.state == *from && st.lap == *lap {
            assert_eq!(st.deliver, Some(Event::UserEstablished), "{at}");
        }
        if st.dup {
            assert_eq!(
                (st.state, st.deliver),
                (*from, None),
                "{at}: duplicates change nothing"
            );
        }
    }
}

// ---- two CMs talking -------------------------------------------------------------------

/// One side of a connection driven only by the state machine.
struct Side {
    state: State,
    lap: LapState,
    /// The state the outstanding tracked MAD was sent in, if any.
    outstanding: Option<State>,
    events: Vec<Event>,
}

impl Side {
    fn new() -> Side {
        Side {
            state: State::Idle,
            lap: U,
            outstanding: None,
            events: Vec::new(),
        }
    }

    /// Carries a step out the way the driver would; returns what it sends.
    fn apply(&mut self, st: Step) -> Option<Send> {
        let mut sent = None;
        if let Some(Gate::Post(m)) = st.gate {
            sent = Some(m);
            if matches!(m, Send::Req | Send::Rep | Send::Dreq | Send::SidrReq) {
                self.outstanding = Some(st.state);
            }
        }
        if let Some(Gate::ModifyMad(_)) = st.gate {
            self.outstanding = Some(st.state);
        }
        if st.cancel_mad {
            self.outstanding = None;
        }
        self.state = st.state;
        self.lap = st.lap;
        if let Some(ev) = st.deliver {
            self.events.push(ev);
        }
        sent.or(st.send)
    }
}

#[test]
fn a_connection_lives_and_dies() {
    let (mut a, mut p) = (Side::new(), Side::new());
    assert_eq!(
        a.apply(send_req(a.state, a.lap, &rc_req()).unwrap()),
        Some(Send::Req)
    );
    // The passive side's listener gets a new ID.
    let (issue, st) = new_req(ReqMatch::Listener);
    assert_eq!(issue, Issue::Nothing);
    p.apply(st.unwrap());
    assert_eq!(
        p.apply(send_rep(p.state, p.lap, 0).unwrap()),
        Some(Send::Rep)
    );
    a.apply(rep_received(a.state, a.lap));
    assert_eq!(a.outstanding, None, "the REP answered the REQ");
    // The REP is resent (the RTU was slow): the active side repeats nothing
    // until it sent its RTU, then repeats the RTU.
    assert_eq!(a.apply(dup_rep(a.state, a.lap)), None);
    assert_eq!(
        a.apply(send_rtu(a.state, a.lap, 0).unwrap()),
        Some(Send::Rtu)
    );
    assert_eq!(a.apply(dup_rep(a.state, a.lap)), Some(Send::Rtu));
    p.apply(rtu_received(p.state, p.lap));
    assert_eq!((a.state, p.state), (State::Established, State::Established));
    // Disconnect from the passive side.
    assert_eq!(
        p.apply(send_dreq(p.state, p.lap, 0).unwrap()),
        Some(Send::Dreq)
    );
    a.apply(dreq_received(a.state, a.lap, true));
    assert_eq!(
        a.apply(send_drep(a.state, a.lap, 0).unwrap()),
        Some(Send::Drep)
    );
    // The DREP is lost; the DREQ is resent and answered from timewait.
    assert_eq!(
        a.apply(dreq_received(a.state, a.lap, true)),
        Some(Send::Drep)
    );
    p.apply(drep_received(p.state, p.lap));
    assert_eq!((a.state, p.state), (State::Timewait, State::Timewait));
    a.apply(timewait_expired(a.state, a.lap, true));
    p.apply(timewait_expired(p.state, p.lap, true));
    assert_eq!(
        a.events,
        [Event::RepReceived, Event::DreqReceived, Event::TimewaitExit]
    );
    assert_eq!(
        p.events,
        [
            Event::ReqReceived,
            Event::RtuReceived,
            Event::DrepReceived,
            Event::TimewaitExit
        ]
    );
    assert_eq!((a.state, p.state), (State::Idle, State::Idle));
}

#[test]
fn a_slow_passive_side_sends_mra_and_the_connection_succeeds() {
    let (mut a, mut p) = (Side::new(), Side::new());
    a.apply(send_req(a.state, a.lap, &rc_req()).unwrap());
    p.apply(new_req(ReqMatch::Listener).1.unwrap());
    // rdma_cm's handler asks for time before it hands the REQ up.
    p.apply(prepare_mra(p.state, p.lap).unwrap());
    // The REQ is resent: the MRA answers it.
    let mra = p.apply(dup_req(p.state, p.lap));
    assert_eq!(mra, Some(Send::Mra(MsgResponse::Req)));
    let timeout = mra_timeout_ms(MRA_SETTING, 15);
    a.apply(mra_received(
        a.state,
        a.lap,
        MsgResponse::Req as u8,
        timeout,
    ));
    assert_eq!(a.state, State::MraReqRcvd);
    assert_eq!(a.outstanding, Some(State::MraReqRcvd));
    // A second MRA is a duplicate.
    assert!(mra_received(a.state, a.lap, 0, timeout).dup);
    // The REQ's retry is gone; a failure now would still be this REQ's.
    assert_eq!(
        send_failed(a.state, a.lap, State::MraReqRcvd, SendStatus::Failed).deliver,
        Some(Event::ReqError)
    );
    p.apply(send_rep(p.state, p.lap, 0).unwrap());
    a.apply(rep_received(a.state, a.lap));
    a.apply(send_rtu(a.state, a.lap, 0).unwrap());
    p.apply(rtu_received(p.state, p.lap));
    assert_eq!((a.state, p.state), (State::Established, State::Established));
    assert_eq!(a.events, [Event::MraReceived, Event::RepReceived]);
}

#[test]
fn an_unanswered_req_reports_unreachable_and_a_rejected_one_rejected() {
    let mut a = Side::new();
    a.apply(send_req(a.state, a.lap, &rc_req()).unwrap());
    let sent_in = a.outstanding.unwrap();
    a.apply(send_failed(a.state, a.lap, sent_in, SendStatus::Failed));
    assert_eq!(
        (a.state, a.events.as_slice()),
        (State::Idle, &[Event::ReqError][..])
    );

    // Nobody listens: the passive CM rejects, the active ID is idle again.
    let mut a = Side::new();
    a.apply(send_req(a.state, a.lap, &rc_req()).unwrap());
    let (issue, st) = new_req(ReqMatch::NoListener);
    assert!(st.is_none());
    let Issue::Rej(reason, MsgResponse::Req) = issue else {
        panic!()
    };
    assert_eq!(
        rej_lookup(reason, MsgResponse::Req as u8),
        RejLookup::LocalIdOnly
    );
    a.apply(rej_received(a.state, a.lap, reason));
    assert_eq!((a.state, a.outstanding), (State::Idle, None));
    assert_eq!(a.events, [Event::RejReceived]);
}

#[test]
fn comm_est_before_the_rtu() {
    let mut p = Side::new();
    p.apply(new_req(ReqMatch::Listener).1.unwrap());
    p.apply(send_rep(p.state, p.lap, 0).unwrap());
    p.apply(notify_comm_est(p.state, p.lap).unwrap());
    assert_eq!(p.state, State::Established);
    assert_eq!(p.outstanding, Some(State::RepSent));
    p.apply(user_established(p.state, p.lap));
    assert_eq!(p.outstanding, None);
    // The late RTU is a duplicate.
    assert!(rtu_received(p.state, p.lap).dup);
    assert_eq!(p.events, [Event::ReqReceived, Event::UserEstablished]);
}

#[test]
fn sidr_round_trip() {
    let (mut a, mut p) = (Side::new(), Side::new());
    assert_eq!(
        a.apply(send_sidr_req(a.state, a.lap, true, 0).unwrap()),
        Some(Send::SidrReq)
    );
    p.apply(new_sidr_req(SidrMatch::Listener).unwrap());
    assert_eq!(
        p.apply(send_sidr_rep(p.state, p.lap, 0, 0).unwrap()),
        Some(Send::SidrRep)
    );
    a.apply(sidr_rep_received(a.state, a.lap));
    assert_eq!((a.state, p.state), (State::Idle, State::Idle));
    assert_eq!(a.events, [Event::SidrRepReceived]);
}
