// SPDX-License-Identifier: GPL-2.0

//! Randomised runs of two CMs over a lossy network, driven only by the state
//! machine of `core/cm/state.rs` the way the module drives it: messages are
//! dropped, duplicated and reordered, retries and timeouts fire at random,
//! consumers answer, reject, ask for time, disconnect and destroy at random.
//! Whatever happens, the state machine must stay consistent and both IDs
//! must end idle.

use crate::cm::msgs::{
    CmQpType,
    MsgResponse, //
};
use crate::cm::state::*;
use crate::cm::timing::{
    mra_timeout_ms,
    MRA_SETTING, //
};
use crate::cm_msgs_test::Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Who {
    Active,
    Passive,
}

/// A message on the wire: what was sent, by whom.
#[derive(Clone, Copy, Debug)]
struct Wire {
    from: Who,
    msg: Send,
}

struct Side {
    /// The ID exists (the passive one is made by the first REQ).
    exists: bool,
    destroyed: bool,
    state: State,
    lap: LapState,
    /// The tracked MAD: what it is, the state it was sent in, tries left.
    outstanding: Option<(Send, State, u32)>,
    /// The ID knows its peer's communication ID.
    has_remote: bool,
    events: Vec<Event>,
    ever_rep_sent: bool,
    ever_established: bool,
}

impl Side {
    fn new(who: Who) -> Side {
        Side {
            exists: who == Who::Active,
            destroyed: false,
            state: State::Idle,
            lap: LapState::Uninit,
            outstanding: None,
            has_remote: false,
            events: Vec::new(),
            ever_rep_sent: false,
            ever_established: false,
        }
    }
}

struct World {
    rng: Rng,
    a: Side,
    p: Side,
    wire: Vec<Wire>,
    log: Vec<String>,
}

const TRIES: u32 = 3;

impl World {
    fn side(&mut self, who: Who) -> &mut Side {
        match who {
            Who::Active => &mut self.a,
            Who::Passive => &mut self.p,
        }
    }

    /// Carries out `st` on `who`, as the driver does; returns the event.
    fn apply(&mut self, who: Who, st: Step) -> Option<Event> {
        let from = self.side(who).state;
        self.log
            .push(format!("{who:?} {from:?} -> {:?} {:?}", st.state, st));
        match st.leave {
            Leave::ResetToIdle | Leave::Unlisten | Leave::ForgetSidr => {
                assert_eq!(st.state, State::Idle)
            }
            Leave::EnterTimewait => assert_eq!(st.state, State::Timewait),
            Leave::Stay => {}
        }
        let mut out = Vec::new();
        {
            let s = self.side(who);
            assert!(!s.destroyed || st.deliver.is_none(), "event after destroy");
            if let Some(Gate::Post(m)) = st.gate {
                if matches!(m, Send::Req | Send::Rep | Send::Dreq | Send::SidrReq) {
                    s.outstanding = Some((m, st.state, TRIES));
                }
                out.push(m);
            }
            if let Some(Gate::ModifyMad(_)) = st.gate {
                let (m, _, tries) = s.outstanding.expect("an MRA for nothing outstanding");
                s.outstanding = Some((m, st.state, tries));
            }
            if st.cancel_mad {
                s.outstanding = None;
            }
            if st.leave == Leave::ResetToIdle {
                s.has_remote = false;
            }
            s.state = st.state;
            s.lap = st.lap;
            s.ever_rep_sent |= st.state == State::RepSent;
            s.ever_established |= st.state == State::Established;
            if let Some(m) = st.send {
                out.push(m);
            }
            if let Some(e) = st.deliver {
                s.events.push(e);
            }
        }
        for msg in out {
            self.wire.push(Wire { from: who, msg });
        }
        st.deliver
    }

    /// The consumer's answer to an event, sometimes none.
    fn consume(&mut self, who: Who, ev: Event) {
        let r = self.rng.below(10);
        let s = self.side(who);
        let (state, lap) = (s.state, s.lap);
        let step = match ev {
            Event::ReqReceived if r < 2 => prepare_mra(state, lap).ok(),
            Event::ReqReceived if r < 3 => send_rej(state, lap, 28, 0, 0).ok(),
            Event::ReqReceived => send_rep(state, lap, 0).ok(),
            Event::RepReceived if r < 2 => prepare_mra(state, lap).ok(),
            Event::RepReceived if r < 3 => send_rej(state, lap, 28, 0, 0).ok(),
            Event::RepReceived => send_rtu(state, lap, 0).ok(),
            Event::DreqReceived if r < 8 => send_drep(state, lap, 0).ok(),
            _ => None,
        };
        if let Some(st) = step {
            self.apply(who, st);
        }
    }

    fn deliver(&mut self, w: Wire) {
        let to = match w.from {
            Who::Active => Who::Passive,
            Who::Passive => Who::Active,
        };
        let s = self.side(to);
        let (state, lap, exists, has_remote, destroyed) =
            (s.state, s.lap, s.exists, s.has_remote, s.destroyed);
        if destroyed {
            // The ID is gone: the CM answers what it answers without one.
            match w.msg {
                Send::Req => self.wire.push(Wire {
                    from: to,
                    msg: Send::Rej {
                        reason: rej_reason::INVALID_SERVICE_ID,
                        rejected: MsgResponse::Req,
                        zero_local_id: true,
                        ari: RejAri::Empty,
                    },
                }),
                Send::Dreq | Send::IssueDreq => self.wire.push(Wire {
                    from: to,
                    msg: Send::Drep,
                }),
                _ => {}
            }
            return;
        }
        let step = match w.msg {
            Send::Req if !exists => {
                let (_, st) = new_req(ReqMatch::Listener);
                let s = self.side(to);
                s.exists = true;
                s.has_remote = true;
                st
            }
            Send::Req => Some(dup_req(state, lap)),
            Send::Rep if !has_remote && matches!(state, State::ReqSent | State::MraReqRcvd) => {
                self.side(to).has_remote = true;
                Some(rep_received(state, lap))
            }
            Send::Rep => Some(dup_rep(state, lap)),
            Send::Rtu => Some(rtu_received(state, lap)),
            Send::Dreq | Send::IssueDreq if exists => Some(dreq_received(state, lap, true)),
            Send::Drep => Some(drep_received(state, lap)),
            Send::Rej { reason, .. } => Some(rej_received(state, lap, reason)),
            Send::Mra(m) => Some(mra_received(
                state,
                lap,
                m as u8,
                mra_timeout_ms(MRA_SETTING, 15),
            )),
            _ => None,
        };
        if let Some(st) = step {
            if let Some(ev) = self.apply(to, st) {
                self.consume(to, ev);
            }
        }
    }

    /// The tracked MAD of `who` times out once: resent, or failed.
    fn timeout(&mut self, who: Who) {
        let s = self.side(who);
        let Some((m, sent_in, tries)) = s.outstanding else {
            return;
        };
        if tries > 1 {
            s.outstanding = Some((m, sent_in, tries - 1));
            self.wire.push(Wire { from: who, msg: m });
            return;
        }
        s.outstanding = None;
        let (state, lap) = (s.state, s.lap);
        self.apply(who, send_failed(state, lap, sent_in, SendStatus::Failed));
    }

    fn tick(&mut self) {
        match self.rng.below(12) {
            0..=4 if !self.wire.is_empty() => {
                let i = self.rng.below(self.wire.len() as u64) as usize;
                let w = if self.rng.below(5) == 0 {
                    self.wire[i] // duplicated
                } else {
                    self.wire.swap_remove(i)
                };
                self.deliver(w);
            }
            5 if !self.wire.is_empty() => {
                let i = self.rng.below(self.wire.len() as u64) as usize;
                self.wire.swap_remove(i); // lost
            }
            6 => self.timeout(Who::Active),
            7 => self.timeout(Who::Passive),
            8 => {
                for who in [Who::Active, Who::Passive] {
                    let s = self.side(who);
                    if s.state == State::Timewait && !s.destroyed {
                        let (state, lap) = (s.state, s.lap);
                        self.apply(who, timewait_expired(state, lap, true));
                    }
                }
            }
            9 => {
                let who = if self.rng.below(2) == 0 {
                    Who::Active
                } else {
                    Who::Passive
                };
                let s = self.side(who);
                if !s.destroyed {
                    let (state, lap) = (s.state, s.lap);
                    if let Ok(st) = send_dreq(state, lap, 0) {
                        self.apply(who, st);
                    }
                }
            }
            10 => {
                // A consumer that asked for time answers now.
                for who in [Who::Active, Who::Passive] {
                    let s = self.side(who);
                    let (state, lap) = (s.state, s.lap);
                    let st = match state {
                        State::MraReqSent => send_rep(state, lap, 0).ok(),
                        State::MraRepSent => send_rtu(state, lap, 0).ok(),
                        _ => None,
                    };
                    if let Some(st) = st {
                        self.apply(who, st);
                    }
                }
            }
            11 if self.rng.below(20) == 0 => {
                let who = if self.rng.below(2) == 0 {
                    Who::Active
                } else {
                    Who::Passive
                };
                self.destroy(who);
            }
            _ => {}
        }
        // Safety: the active side is connected only to a passive side that
        // sent its REP.
        if self.a.state == State::Established {
            assert!(self.p.ever_rep_sent, "active established without a REP");
        }
    }

    fn destroy(&mut self, who: Who) {
        let s = self.side(who);
        if s.destroyed || !s.exists {
            return;
        }
        let mut n = 0;
        loop {
            let s = self.side(who);
            if s.state == State::Idle {
                break;
            }
            let (state, lap) = (s.state, s.lap);
            self.apply(
                who,
                destroy(state, lap, Some(CmQpType::Rc), DestroyCause::Consumer),
            );
            n += 1;
            assert!(n <= 3);
        }
        let s = self.side(who);
        s.destroyed = true;
        s.outstanding = None;
    }
}

#[test]
fn two_cms_over_a_lossy_network_stay_consistent() {
    let mut established = 0;
    let mut rejected = 0;
    let mut failed = 0;
    for seed in 0..3000u64 {
        let mut w = World {
            rng: Rng::new(0x9E37_79B9 ^ seed.wrapping_mul(0x1000_0001)),
            a: Side::new(Who::Active),
            p: Side::new(Who::Passive),
            wire: Vec::new(),
            log: Vec::new(),
        };
        let st = send_req(
            State::Idle,
            LapState::Uninit,
            &ReqCheck {
                has_primary_path: true,
                qp_type: Some(CmQpType::Rc),
                private_data_len: 0,
                alt_path_matches: None,
            },
        )
        .unwrap();
        w.apply(Who::Active, st);
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            for _ in 0..300 {
                w.tick();
            }
            w.destroy(Who::Active);
            w.destroy(Who::Passive);
            // Whatever is still on the wire reaches destroyed IDs.
            while let Some(m) = w.wire.pop() {
                if w.wire.len() > 1000 {
                    break;
                }
                w.deliver(m);
            }
        }));
        if let Err(e) = run {
            for l in w.log.iter().rev().take(30).rev() {
                eprintln!("{l}");
            }
            std::panic::resume_unwind(e);
        }
        assert_eq!(
            (w.a.state, w.p.state),
            (State::Idle, State::Idle),
            "seed {seed}"
        );
        established += usize::from(w.a.ever_established);
        rejected += usize::from(w.a.events.contains(&Event::RejReceived));
        failed += usize::from(w.a.events.contains(&Event::ReqError));
    }
    eprintln!("established {established}, rejected {rejected}, REQ failed {failed} of 3000");
    // The runs cover the interesting outcomes.
    assert!(established > 300, "{established}");
    assert!(rejected > 100, "{rejected}");
    assert!(failed > 10, "{failed}");
}
