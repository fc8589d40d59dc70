// SPDX-License-Identifier: GPL-2.0

//! The connection state machine of the IB connection manager.
//!
//! Pure logic with no kernel dependency: built into the module and into the
//! host unit tests (`tests/host`). Each function takes the state of one
//! `ib_cm_id` (and what the driver looked up) and returns a [`Step`]: the
//! state to move to and the actions around it, in the order the kernel's
//! `cm.c` takes them. The driver holds the ID's lock, computes the step,
//! carries it out and delivers the event; it decides nothing itself, so the
//! transitions below are all of the CM's behaviour that the host tests see.
//!
//! A step is carried out in this order:
//! 1. the [`Gate`], if any: a post or a MAD timeout change that must succeed
//!    for anything else to happen (its error is the caller's);
//! 2. the duplicate counter (`cm_rx_duplicates`), if [`Step::dup`];
//! 3. cancelling the ID's outstanding MAD, if [`Step::cancel_mad`];
//! 4. the new state and LAP state, with [`Step::leave`]'s bookkeeping;
//! 5. the ID's saved private data, per [`Step::private_data`];
//! 6. the message to send, [`Step::send`] (its failure is returned to a
//!    consumer, the state stays changed);
//! 7. the event to deliver, [`Step::deliver`].

use super::msgs::{
    size,
    CmQpType,
    MsgResponse, //
};

/// `enum ib_cm_state`, numbered as in `include/rdma/ib_cm.h`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u32)]
pub(crate) enum State {
    /// `IB_CM_IDLE`.
    Idle = 0,
    /// `IB_CM_LISTEN`.
    Listen,
    /// `IB_CM_REQ_SENT`.
    ReqSent,
    /// `IB_CM_REQ_RCVD`.
    ReqRcvd,
    /// `IB_CM_MRA_REQ_SENT`.
    MraReqSent,
    /// `IB_CM_MRA_REQ_RCVD`.
    MraReqRcvd,
    /// `IB_CM_REP_SENT`.
    RepSent,
    /// `IB_CM_REP_RCVD`.
    RepRcvd,
    /// `IB_CM_MRA_REP_SENT`.
    MraRepSent,
    /// `IB_CM_MRA_REP_RCVD`.
    MraRepRcvd,
    /// `IB_CM_ESTABLISHED`.
    Established,
    /// `IB_CM_DREQ_SENT`.
    DreqSent,
    /// `IB_CM_DREQ_RCVD`.
    DreqRcvd,
    /// `IB_CM_TIMEWAIT`.
    Timewait,
    /// `IB_CM_SIDR_REQ_SENT`.
    SidrReqSent,
    /// `IB_CM_SIDR_REQ_RCVD`.
    SidrReqRcvd,
}

impl State {
    /// Every state, in `enum ib_cm_state` order.
    pub(crate) const ALL: [State; 16] = [
        State::Idle,
        State::Listen,
        State::ReqSent,
        State::ReqRcvd,
        State::MraReqSent,
        State::MraReqRcvd,
        State::RepSent,
        State::RepRcvd,
        State::MraRepSent,
        State::MraRepRcvd,
        State::Established,
        State::DreqSent,
        State::DreqRcvd,
        State::Timewait,
        State::SidrReqSent,
        State::SidrReqRcvd,
    ];
}

/// `enum ib_cm_lap_state`; only IB links load alternate paths, never RoCE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum LapState {
    /// `IB_CM_LAP_UNINIT`.
    Uninit = 0,
    /// `IB_CM_LAP_IDLE`.
    Idle,
    /// `IB_CM_LAP_SENT`.
    Sent,
    /// `IB_CM_LAP_RCVD`.
    Rcvd,
    /// `IB_CM_MRA_LAP_SENT`.
    MraLapSent,
    /// `IB_CM_MRA_LAP_RCVD`.
    MraLapRcvd,
}

impl LapState {
    /// Every LAP state, in `enum ib_cm_lap_state` order.
    pub(crate) const ALL: [LapState; 6] = [
        LapState::Uninit,
        LapState::Idle,
        LapState::Sent,
        LapState::Rcvd,
        LapState::MraLapSent,
        LapState::MraLapRcvd,
    ];
}

/// `enum ib_cm_event_type`, numbered as in `include/rdma/ib_cm.h`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Event {
    /// `IB_CM_REQ_ERROR`: the REQ was never answered.
    ReqError = 0,
    /// `IB_CM_REQ_RECEIVED`.
    ReqReceived,
    /// `IB_CM_REP_ERROR`: the REP was never answered.
    RepError,
    /// `IB_CM_REP_RECEIVED`.
    RepReceived,
    /// `IB_CM_RTU_RECEIVED`.
    RtuReceived,
    /// `IB_CM_USER_ESTABLISHED`: the consumer's COMM_EST, reported back.
    UserEstablished,
    /// `IB_CM_DREQ_ERROR`: the DREQ was never answered.
    DreqError,
    /// `IB_CM_DREQ_RECEIVED`.
    DreqReceived,
    /// `IB_CM_DREP_RECEIVED`.
    DrepReceived,
    /// `IB_CM_TIMEWAIT_EXIT`.
    TimewaitExit,
    /// `IB_CM_MRA_RECEIVED`.
    MraReceived,
    /// `IB_CM_REJ_RECEIVED`.
    RejReceived,
    /// `IB_CM_LAP_ERROR`.
    LapError,
    /// `IB_CM_LAP_RECEIVED`.
    LapReceived,
    /// `IB_CM_APR_RECEIVED`.
    AprReceived,
    /// `IB_CM_SIDR_REQ_ERROR`: the SIDR_REQ was never answered.
    SidrReqError,
    /// `IB_CM_SIDR_REQ_RECEIVED`.
    SidrReqReceived,
    /// `IB_CM_SIDR_REP_RECEIVED`.
    SidrRepReceived,
}

/// `enum ib_cm_rej_reason` values the CM itself sends or looks at.
pub(crate) mod rej_reason {
    /// `IB_CM_REJ_TIMEOUT`: the ARI is the rejector's node GUID.
    pub(crate) const TIMEOUT: u16 = 4;
    /// `IB_CM_REJ_INVALID_SERVICE_ID`: nobody listens.
    pub(crate) const INVALID_SERVICE_ID: u16 = 8;
    /// `IB_CM_REJ_STALE_CONN`.
    pub(crate) const STALE_CONN: u16 = 10;
    /// `IB_CM_REJ_INVALID_GID`.
    pub(crate) const INVALID_GID: u16 = 12;
    /// `IB_CM_REJ_INVALID_ALT_GID`.
    pub(crate) const INVALID_ALT_GID: u16 = 18;
    /// `IB_CM_REJ_CONSUMER_DEFINED`.
    pub(crate) const CONSUMER_DEFINED: u16 = 28;
}

/// `ibcm_reject_msg()`: the text of a reject reason.
pub(crate) fn reject_msg(reason: i32) -> &'static core::ffi::CStr {
    match reason {
        1 => c"no QP",
        2 => c"no EEC",
        3 => c"no resources",
        4 => c"timeout",
        5 => c"unsupported",
        6 => c"invalid comm ID",
        7 => c"invalid comm instance",
        8 => c"invalid service ID",
        9 => c"invalid transport type",
        10 => c"stale conn",
        11 => c"RDC not exist",
        12 => c"invalid GID",
        13 => c"invalid LID",
        14 => c"invalid SL",
        15 => c"invalid traffic class",
        16 => c"invalid hop limit",
        17 => c"invalid packet rate",
        18 => c"invalid alt GID",
        19 => c"invalid alt LID",
        20 => c"invalid alt SL",
        21 => c"invalid alt traffic class",
        22 => c"invalid alt hop limit",
        23 => c"invalid alt packet rate",
        24 => c"port CM redirect",
        25 => c"port redirect",
        26 => c"invalid MTU",
        27 => c"insufficient resp resources",
        28 => c"consumer defined",
        29 => c"invalid RNR retry",
        30 => c"duplicate local comm ID",
        31 => c"invalid class version",
        32 => c"invalid flow label",
        33 => c"invalid alt flow label",
        35 => c"vendor option is not supported",
        _ => c"unrecognized reason",
    }
}

/// `enum ib_cm_sidr_status` values the CM itself sends.
pub(crate) mod sidr_status {
    /// `IB_SIDR_UNSUPPORTED`: nobody listens.
    pub(crate) const UNSUPPORTED: u8 = 1;
    /// `IB_SIDR_REJECT`: the consumer destroyed the ID unanswered.
    pub(crate) const REJECT: u8 = 2;
}

/// Why the CM refuses a consumer's call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// `EINVAL`: a bad parameter, or the call does not fit the state.
    Inval,
    /// `EISCONN`: COMM_EST on an established connection.
    IsConn,
}

impl Refusal {
    /// The negative errno the C module returns.
    pub(crate) fn to_errno(self) -> i32 {
        match self {
            Refusal::Inval => -22,
            Refusal::IsConn => -106,
        }
    }
}

/// What the ID's timewait record goes through with the state change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Leave {
    /// Nothing.
    Stay,
    /// `cm_reset_to_idle()`: forget the remote ID and QPN, free the record.
    ResetToIdle,
    /// `cm_enter_timewait()`: forget the remote ID and QPN, arm the
    /// timewait timer with the record.
    EnterTimewait,
    /// Leave the listen table (the driver keeps the share count).
    Unlisten,
    /// Leave the table of SIDR requests being answered.
    ForgetSidr,
}

/// What happens to the private data the ID keeps for resends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Keep {
    /// Unchanged.
    Same,
    /// Dropped: an MRA is resent without private data.
    Clear,
    /// The private data of the message sent (an RTU or DREP), for resends.
    Store,
}

/// A message the step sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Send {
    /// The consumer's REQ (the ID's tracked MAD).
    Req,
    /// The consumer's REP (tracked).
    Rep,
    /// The consumer's RTU; resent from the saved private data for a
    /// duplicate REP.
    Rtu,
    /// The consumer's DREQ (tracked).
    Dreq,
    /// A DREQ of the CM's own, untracked (`cm_issue_dreq()`).
    IssueDreq,
    /// The DREP, with the consumer's or the saved private data.
    Drep,
    /// A REJ from the ID: the format `cm_format_rej()` gives the state the
    /// ID was in.
    Rej {
        /// The reason.
        reason: u16,
        /// Which message is rejected.
        rejected: MsgResponse,
        /// Whether the local communication ID is sent as 0 (the REQ was
        /// never answered with an ID).
        zero_local_id: bool,
        /// The additional rejection information.
        ari: RejAri,
    },
    /// An MRA for the given message, with the saved private data.
    Mra(MsgResponse),
    /// The consumer's SIDR_REQ (tracked).
    SidrReq,
    /// A SIDR_REP with the consumer's parameters.
    SidrRep,
    /// A SIDR_REP of the CM's own, with this status and nothing else.
    SidrRepStatus(u8),
}

/// The additional rejection information of a REJ the ID sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RejAri {
    /// None.
    Empty,
    /// The consumer's (`ib_send_cm_rej()`).
    Consumer,
    /// The device's node GUID: a timeout REJ, so the peer finds its ID by
    /// our GUID even without our communication ID.
    NodeGuid,
}

/// What must succeed before the step is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Gate {
    /// Posting this message: the state changes only once it is on its way.
    Post(Send),
    /// Giving the outstanding MAD this new timeout, in ms
    /// (`ib_modify_mad()`): the peer asked for more time.
    ModifyMad(u32),
}

/// One transition of an ID: see the module documentation for the order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Step {
    /// The state after the step.
    pub(crate) state: State,
    /// The LAP state after the step.
    pub(crate) lap: LapState,
    /// What must succeed first.
    pub(crate) gate: Option<Gate>,
    /// Count the received message as a duplicate.
    pub(crate) dup: bool,
    /// Cancel the ID's outstanding MAD.
    pub(crate) cancel_mad: bool,
    /// Timewait record bookkeeping.
    pub(crate) leave: Leave,
    /// The saved private data.
    pub(crate) private_data: Keep,
    /// The message to send after the state change.
    pub(crate) send: Option<Send>,
    /// The event to deliver to the consumer.
    pub(crate) deliver: Option<Event>,
}

impl Step {
    /// No change at all: what a received message that does not fit the
    /// state gets (the C handlers' `-EINVAL`, the MAD is dropped).
    pub(crate) fn stay(state: State, lap: LapState) -> Step {
        Step {
            state,
            lap,
            gate: None,
            dup: false,
            cancel_mad: false,
            leave: Leave::Stay,
            private_data: Keep::Same,
            send: None,
            deliver: None,
        }
    }

    fn to(self, state: State) -> Step {
        Step { state, ..self }
    }

    fn lap(self, lap: LapState) -> Step {
        Step { lap, ..self }
    }

    fn gate(self, gate: Gate) -> Step {
        Step {
            gate: Some(gate),
            ..self
        }
    }

    fn dup(self) -> Step {
        Step { dup: true, ..self }
    }

    fn cancel(self) -> Step {
        Step {
            cancel_mad: true,
            ..self
        }
    }

    fn reset_to_idle(self) -> Step {
        Step {
            state: State::Idle,
            leave: Leave::ResetToIdle,
            ..self
        }
    }

    fn timewait(self) -> Step {
        Step {
            state: State::Timewait,
            leave: Leave::EnterTimewait,
            ..self
        }
    }

    fn leave(self, leave: Leave) -> Step {
        Step { leave, ..self }
    }

    fn keep(self, private_data: Keep) -> Step {
        Step {
            private_data,
            ..self
        }
    }

    fn send(self, send: Send) -> Step {
        Step {
            send: Some(send),
            ..self
        }
    }

    fn deliver(self, event: Event) -> Step {
        Step {
            deliver: Some(event),
            ..self
        }
    }

    /// Whether the step changes nothing and does nothing.
    pub(crate) fn is_noop(&self, state: State, lap: LapState) -> bool {
        *self == Step::stay(state, lap)
    }
}

// ---- the consumer's calls --------------------------------------------------

/// `ib_cm_listen()`: only an idle ID listens. The service ID is checked
/// first, by [`listen_service_id`].
pub(crate) fn listen(state: State, lap: LapState) -> Result<Step, Refusal> {
    match state {
        State::Idle => Ok(Step::stay(state, lap).to(State::Listen)),
        _ => Err(Refusal::Inval),
    }
}

/// `IB_CM_ASSIGN_SERVICE_ID` in CPU order: "give me a service ID".
pub(crate) const ASSIGN_SERVICE_ID: u64 = 0x0200_0000_0000_0000;
/// `IB_SERVICE_ID_AGN_MASK` in CPU order: the administration-group byte.
pub(crate) const SERVICE_ID_AGN_MASK: u64 = 0xFF00_0000_0000_0000;

/// The service ID a listen takes (`cm_init_listen()`): the one asked for,
/// or the next assigned one for [`ASSIGN_SERVICE_ID`]; the rest of the
/// assigned range is refused.
pub(crate) fn listen_service_id(asked: u64, next_assigned: &mut u64) -> Result<u64, Refusal> {
    if asked == ASSIGN_SERVICE_ID {
        let id = *next_assigned;
        *next_assigned = next_assigned.wrapping_add(1);
        Ok(id)
    } else if asked & SERVICE_ID_AGN_MASK == ASSIGN_SERVICE_ID {
        Err(Refusal::Inval)
    } else {
        Ok(asked)
    }
}

/// The consumer's REQ parameters the CM checks (`cm_validate_req_param()`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReqCheck {
    /// A primary path was given.
    pub(crate) has_primary_path: bool,
    /// The QP type, if it is one the CM connects (RC, UC, XRC initiator).
    pub(crate) qp_type: Option<CmQpType>,
    /// Bytes of private data.
    pub(crate) private_data_len: usize,
    /// An alternate path was given, and whether its P_Key and MTU match
    /// the primary path's.
    pub(crate) alt_path_matches: Option<bool>,
}

/// `ib_send_cm_req()`: checks the parameters, then an idle ID sends its REQ.
pub(crate) fn send_req(state: State, lap: LapState, p: &ReqCheck) -> Result<Step, Refusal> {
    if !p.has_primary_path
        || !matches!(
            p.qp_type,
            Some(CmQpType::Rc | CmQpType::Uc | CmQpType::XrcIni)
        )
        || p.private_data_len > size::REQ_PRIVATE_DATA
        || p.alt_path_matches == Some(false)
    {
        return Err(Refusal::Inval);
    }
    match state {
        State::Idle => Ok(Step::stay(state, lap)
            .gate(Gate::Post(Send::Req))
            .to(State::ReqSent)),
        _ => Err(Refusal::Inval),
    }
}

/// `ib_send_cm_rep()`: answers a REQ, MRAed or not.
pub(crate) fn send_rep(
    state: State,
    lap: LapState,
    private_data_len: usize,
) -> Result<Step, Refusal> {
    if private_data_len > size::REP_PRIVATE_DATA {
        return Err(Refusal::Inval);
    }
    match state {
        State::ReqRcvd | State::MraReqSent => Ok(Step::stay(state, lap)
            .gate(Gate::Post(Send::Rep))
            .to(State::RepSent)),
        _ => Err(Refusal::Inval),
    }
}

/// `ib_send_cm_rtu()`: the active side accepts the REP; the RTU's private
/// data is kept to answer a duplicate REP.
pub(crate) fn send_rtu(
    state: State,
    lap: LapState,
    private_data_len: usize,
) -> Result<Step, Refusal> {
    if private_data_len > size::RTU_PRIVATE_DATA {
        return Err(Refusal::Inval);
    }
    match state {
        State::RepRcvd | State::MraRepSent => Ok(Step::stay(state, lap)
            .gate(Gate::Post(Send::Rtu))
            .to(State::Established)
            .keep(Keep::Store)),
        _ => Err(Refusal::Inval),
    }
}

/// `ib_send_cm_dreq()`: disconnects an established connection, dropping a
/// LAP in flight. If the DREQ cannot be posted the driver enters timewait
/// instead ([`dreq_not_posted`]) and returns the error.
pub(crate) fn send_dreq(
    state: State,
    lap: LapState,
    private_data_len: usize,
) -> Result<Step, Refusal> {
    if private_data_len > size::DREQ_PRIVATE_DATA {
        return Err(Refusal::Inval);
    }
    match state {
        State::Established => {
            let step = Step::stay(state, lap)
                .gate(Gate::Post(Send::Dreq))
                .to(State::DreqSent);
            Ok(if matches!(lap, LapState::Sent | LapState::MraLapRcvd) {
                step.cancel()
            } else {
                step
            })
        }
        _ => Err(Refusal::Inval),
    }
}

/// What `ib_send_cm_dreq()` does when its DREQ cannot be posted: the
/// connection is over anyway.
pub(crate) fn dreq_not_posted(state: State, lap: LapState) -> Step {
    Step::stay(state, lap).timewait()
}

/// `ib_send_cm_drep()`: answers a DREQ; the ID enters timewait before the
/// DREP goes out (even if it then fails) and keeps its private data for a
/// duplicate DREQ.
pub(crate) fn send_drep(
    state: State,
    lap: LapState,
    private_data_len: usize,
) -> Result<Step, Refusal> {
    if private_data_len > size::DREP_PRIVATE_DATA {
        return Err(Refusal::Inval);
    }
    match state {
        State::DreqRcvd => Ok(Step::stay(state, lap)
            .timewait()
            .keep(Keep::Store)
            .send(Send::Drep)),
        _ => Err(Refusal::Inval),
    }
}

/// How `cm_format_rej()` fills a REJ sent from `state`.
fn rej_from(state: State, reason: u16, ari: RejAri) -> Send {
    let (rejected, zero_local_id) = match state {
        State::ReqRcvd => (MsgResponse::Req, true),
        State::MraReqSent => (MsgResponse::Req, false),
        State::RepRcvd | State::MraRepSent => (MsgResponse::Rep, false),
        _ => (MsgResponse::Other, false),
    };
    Send::Rej {
        reason,
        rejected,
        zero_local_id,
        ari,
    }
}

/// `ib_send_cm_rej()` (`cm_send_rej_locked()`): before the connection is
/// up, the ID goes back to idle; once this side sent its REP, the peer may
/// already use the QP, so it enters timewait. The REJ follows the state
/// change.
pub(crate) fn send_rej(
    state: State,
    lap: LapState,
    reason: u16,
    ari_len: usize,
    private_data_len: usize,
) -> Result<Step, Refusal> {
    if private_data_len > size::REJ_PRIVATE_DATA || ari_len > size::REJ_ARI {
        return Err(Refusal::Inval);
    }
    let step = Step::stay(state, lap).send(rej_from(state, reason, RejAri::Consumer));
    match state {
        State::ReqSent
        | State::MraReqRcvd
        | State::ReqRcvd
        | State::MraReqSent
        | State::RepRcvd
        | State::MraRepSent => Ok(step.reset_to_idle()),
        State::RepSent | State::MraRepRcvd => Ok(step.timewait()),
        _ => Err(Refusal::Inval),
    }
}

/// `ib_prepare_cm_mra()`: the consumer needs time; a duplicate of the
/// message it is handling will be answered with an MRA (without private
/// data) instead of being dropped.
pub(crate) fn prepare_mra(state: State, lap: LapState) -> Result<Step, Refusal> {
    let step = Step::stay(state, lap).keep(Keep::Clear);
    match (state, lap) {
        (State::ReqRcvd, _) => Ok(step.to(State::MraReqSent)),
        (State::RepRcvd, _) => Ok(step.to(State::MraRepSent)),
        (State::Established, LapState::Rcvd) => Ok(step.lap(LapState::MraLapSent)),
        _ => Err(Refusal::Inval),
    }
}

/// `ib_send_cm_sidr_req()`: an idle ID resolves a service ID.
pub(crate) fn send_sidr_req(
    state: State,
    lap: LapState,
    has_path: bool,
    private_data_len: usize,
) -> Result<Step, Refusal> {
    if !has_path || private_data_len > size::SIDR_REQ_PRIVATE_DATA {
        return Err(Refusal::Inval);
    }
    match state {
        State::Idle => Ok(Step::stay(state, lap)
            .gate(Gate::Post(Send::SidrReq))
            .to(State::SidrReqSent)),
        _ => Err(Refusal::Inval),
    }
}

/// `ib_send_cm_sidr_rep()`: answers a SIDR_REQ; the ID is idle once the
/// reply is on its way.
pub(crate) fn send_sidr_rep(
    state: State,
    lap: LapState,
    info_len: usize,
    private_data_len: usize,
) -> Result<Step, Refusal> {
    if info_len > size::SIDR_REP_INFO || private_data_len > size::SIDR_REP_PRIVATE_DATA {
        return Err(Refusal::Inval);
    }
    match state {
        State::SidrReqRcvd => Ok(Step::stay(state, lap)
            .gate(Gate::Post(Send::SidrRep))
            .to(State::Idle)
            .leave(Leave::ForgetSidr)),
        _ => Err(Refusal::Inval),
    }
}

/// `ib_cm_notify(IB_EVENT_COMM_EST)` (`cm_establish()`): the passive side's
/// QP received data before the RTU; the connection is established now, and
/// the event comes back through the work queue ([`user_established`]).
pub(crate) fn notify_comm_est(state: State, lap: LapState) -> Result<Step, Refusal> {
    match state {
        State::RepSent | State::MraRepRcvd => Ok(Step::stay(state, lap).to(State::Established)),
        State::Established => Err(Refusal::IsConn),
        _ => Err(Refusal::Inval),
    }
}

/// The queued COMM_EST reaching the ID (`cm_establish_handler()`): the REP
/// need not be resent any more.
pub(crate) fn user_established(state: State, lap: LapState) -> Step {
    match state {
        State::Established => Step::stay(state, lap)
            .cancel()
            .deliver(Event::UserEstablished),
        _ => Step::stay(state, lap),
    }
}

/// `ib_cm_notify(IB_EVENT_PATH_MIG)` (`cm_migrate()`): the QP moved to the
/// alternate path; the driver makes it the primary one.
pub(crate) fn notify_path_mig(state: State, lap: LapState) -> Result<Step, Refusal> {
    match (state, lap) {
        (State::Established, LapState::Uninit | LapState::Idle) => {
            Ok(Step::stay(state, lap).lap(LapState::Idle))
        }
        _ => Err(Refusal::Inval),
    }
}

/// Why the ID is destroyed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DestroyCause {
    /// `ib_destroy_cm_id()`, or a handler's error other than `ENOMEM`.
    Consumer,
    /// A handler returned `-ENOMEM` for a REQ: no REJ, so the peer retries.
    NoMemory,
}

/// One step of `cm_destroy_id()`. The driver repeats it until the ID is
/// idle (at most three steps: e.g. established, timewait, idle), then
/// removes it from every table and waits for its references.
pub(crate) fn destroy(
    state: State,
    lap: LapState,
    qp_type: Option<CmQpType>,
    cause: DestroyCause,
) -> Step {
    let here = Step::stay(state, lap);
    let consumer_rej =
        |s: Step| s.send(rej_from(state, rej_reason::CONSUMER_DEFINED, RejAri::Empty));
    match state {
        State::Listen => here.to(State::Idle).leave(Leave::Unlisten),
        State::SidrReqSent => here.cancel().to(State::Idle),
        State::SidrReqRcvd => here
            .send(Send::SidrRepStatus(sidr_status::REJECT))
            .to(State::Idle)
            .leave(Leave::ForgetSidr),
        State::ReqSent | State::MraReqRcvd => here.cancel().reset_to_idle().send(rej_from(
            state,
            rej_reason::TIMEOUT,
            RejAri::NodeGuid,
        )),
        State::ReqRcvd => match cause {
            DestroyCause::NoMemory => here.reset_to_idle(),
            DestroyCause::Consumer => consumer_rej(here.reset_to_idle()),
        },
        State::RepSent | State::MraRepRcvd => consumer_rej(here.cancel().timewait()),
        State::MraReqSent | State::RepRcvd | State::MraRepSent => {
            consumer_rej(here.reset_to_idle())
        }
        State::Established if qp_type == Some(CmQpType::XrcTgt) => here.to(State::Idle),
        State::Established => here.send(Send::IssueDreq).timewait(),
        State::DreqSent => here.cancel().timewait(),
        State::DreqRcvd => here.timewait().keep(Keep::Store).send(Send::Drep),
        State::Timewait => here.to(State::Idle),
        State::Idle => here,
    }
}

// ---- messages received ------------------------------------------------------

/// What a REQ finds in the CM's tables (`cm_match_req()`), in the order the
/// CM looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReqMatch {
    /// The sender's (communication ID, CA GUID) is known: a duplicate, to be
    /// answered by the ID that has it, in this state ([`dup_req`]).
    Duplicate,
    /// The sender's (QPN, CA GUID) is known under another ID: a stale
    /// connection. The REQ is rejected and the old ID disconnected.
    Stale,
    /// No ID listens on the service ID of this device.
    NoListener,
    /// A listener takes it: a new ID in [`State::ReqRcvd`].
    Listener,
}

/// A CM-built answer to a received message, made from that message only
/// (the `cm_issue_*()` functions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Issue {
    /// Nothing.
    Nothing,
    /// A REJ to the sender with this reason, rejecting this message.
    Rej(u16, MsgResponse),
    /// A DREP to the sender of a DREQ for an ID the CM does not know.
    Drep,
}

/// What happens to a received REQ that is not a duplicate, and whether
/// the ID known for its QPN gets a DREQ (`ib_send_cm_dreq()`).
pub(crate) fn new_req(found: ReqMatch) -> (Issue, Option<Step>) {
    match found {
        ReqMatch::Duplicate => (Issue::Nothing, None),
        ReqMatch::Stale => (Issue::Rej(rej_reason::STALE_CONN, MsgResponse::Req), None),
        ReqMatch::NoListener => (
            Issue::Rej(rej_reason::INVALID_SERVICE_ID, MsgResponse::Req),
            None,
        ),
        ReqMatch::Listener => (
            Issue::Nothing,
            Some(
                Step::stay(State::Idle, LapState::Uninit)
                    .to(State::ReqRcvd)
                    .deliver(Event::ReqReceived),
            ),
        ),
    }
}

/// A duplicate REQ, on the ID that has its sender's communication ID
/// (`cm_dup_req_handler()`): still with the consumer, it is dropped; if the
/// consumer asked for time, the MRA is repeated; after the connection, the
/// peer is told it is stale.
pub(crate) fn dup_req(state: State, lap: LapState) -> Step {
    let here = Step::stay(state, lap).dup();
    match state {
        State::MraReqSent => here.send(Send::Mra(MsgResponse::Req)),
        State::Timewait => here.send(rej_from(state, rej_reason::STALE_CONN, RejAri::Empty)),
        _ => here,
    }
}

/// A REP for this ID (found by its local ID with no remote ID yet,
/// `cm_rep_handler()`). The driver then checks the tables: a REP whose
/// sender is already known is dropped; one whose QPN is known under another
/// ID is rejected as stale ([`Issue::Rej`] with [`MsgResponse::Rep`]) and
/// that ID disconnected. Otherwise this step applies and the QP attributes
/// learnt from the REP are saved.
pub(crate) fn rep_received(state: State, lap: LapState) -> Step {
    match state {
        State::ReqSent | State::MraReqRcvd => Step::stay(state, lap)
            .to(State::RepRcvd)
            .cancel()
            .deliver(Event::RepReceived),
        _ => Step::stay(state, lap),
    }
}

/// A REP for an ID that already has its remote ID (`cm_dup_rep_handler()`):
/// the RTU or the MRA is repeated.
pub(crate) fn dup_rep(state: State, lap: LapState) -> Step {
    let here = Step::stay(state, lap).dup();
    match state {
        State::Established => here.send(Send::Rtu),
        State::MraRepSent => here.send(Send::Mra(MsgResponse::Rep)),
        _ => here,
    }
}

/// An RTU (`cm_rtu_handler()`).
pub(crate) fn rtu_received(state: State, lap: LapState) -> Step {
    match state {
        State::RepSent | State::MraRepRcvd => Step::stay(state, lap)
            .to(State::Established)
            .cancel()
            .deliver(Event::RtuReceived),
        _ => Step::stay(state, lap).dup(),
    }
}

/// A DREQ for a known ID (`cm_dreq_handler()`); `qpn_matches` tells whether
/// it names this ID's QP. For an unknown ID the driver answers
/// [`Issue::Drep`] and counts a duplicate.
pub(crate) fn dreq_received(state: State, lap: LapState, qpn_matches: bool) -> Step {
    let here = Step::stay(state, lap);
    if !qpn_matches {
        return here;
    }
    let accept = |s: Step| s.to(State::DreqRcvd).deliver(Event::DreqReceived);
    match state {
        State::RepSent | State::DreqSent | State::MraRepRcvd => accept(here.cancel()),
        State::Established if matches!(lap, LapState::Sent | LapState::MraLapRcvd) => {
            accept(here.cancel())
        }
        State::Established => accept(here),
        State::Timewait => here.dup().send(Send::Drep),
        State::DreqRcvd => here.dup(),
        _ => here,
    }
}

/// A DREP (`cm_drep_handler()`).
pub(crate) fn drep_received(state: State, lap: LapState) -> Step {
    match state {
        State::DreqSent | State::DreqRcvd => Step::stay(state, lap)
            .timewait()
            .cancel()
            .deliver(Event::DrepReceived),
        _ => Step::stay(state, lap),
    }
}

/// How the CM finds the ID a REJ is for (`cm_acquire_rejected_id()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RejLookup {
    /// By the sender's communication ID and the CA GUID in the ARI (a
    /// timeout REJ from a peer that lost the connection).
    RemoteIdAndGuid,
    /// By our communication ID, with no remote ID yet (the REQ was
    /// rejected).
    LocalIdOnly,
    /// By our communication ID and the sender's.
    LocalAndRemoteId,
}

/// Which lookup a REJ with this reason and rejected-message field takes.
pub(crate) fn rej_lookup(reason: u16, message_rejected: u8) -> RejLookup {
    if reason == rej_reason::TIMEOUT {
        RejLookup::RemoteIdAndGuid
    } else if message_rejected == MsgResponse::Req as u8 {
        RejLookup::LocalIdOnly
    } else {
        RejLookup::LocalAndRemoteId
    }
}

/// A REJ (`cm_rej_handler()`): before the connection the ID goes back to
/// idle, unless the peer found it stale; from the REP on, it enters
/// timewait.
pub(crate) fn rej_received(state: State, lap: LapState, reason: u16) -> Step {
    let here = Step::stay(state, lap);
    let stale_or_idle = |s: Step| {
        if reason == rej_reason::STALE_CONN {
            s.timewait()
        } else {
            s.reset_to_idle()
        }
    };
    let step = match state {
        State::ReqSent | State::MraReqRcvd | State::RepSent | State::MraRepRcvd => {
            stale_or_idle(here.cancel())
        }
        State::ReqRcvd | State::MraReqSent => stale_or_idle(here),
        State::DreqSent => here.cancel().timewait(),
        State::RepRcvd | State::MraRepSent => here.timewait(),
        State::Established if lap == LapState::Sent => here.cancel().timewait(),
        State::Established if lap == LapState::Uninit => here.timewait(),
        _ => return here,
    };
    step.deliver(Event::RejReceived)
}

/// Which lookup an MRA takes (`cm_acquire_mraed_id()`): `None` for the
/// undefined value 3, which is dropped.
pub(crate) fn mra_lookup(message_mraed: u8) -> Option<RejLookup> {
    match MsgResponse::from_u8(message_mraed)? {
        MsgResponse::Req => Some(RejLookup::LocalIdOnly),
        MsgResponse::Rep | MsgResponse::Other => Some(RejLookup::LocalAndRemoteId),
    }
}

/// An MRA (`cm_mra_handler()`): the peer needs time, so the outstanding
/// message waits `timeout_ms` longer (the gate); the driver also records the
/// new state as the one the MAD was sent in, for [`send_failed`].
pub(crate) fn mra_received(
    state: State,
    lap: LapState,
    message_mraed: u8,
    timeout_ms: u32,
) -> Step {
    let here = Step::stay(state, lap);
    let mraed = MsgResponse::from_u8(message_mraed);
    let acked = |s: Step| {
        s.gate(Gate::ModifyMad(timeout_ms))
            .deliver(Event::MraReceived)
    };
    match state {
        State::ReqSent if mraed == Some(MsgResponse::Req) => acked(here.to(State::MraReqRcvd)),
        State::RepSent if mraed == Some(MsgResponse::Rep) => acked(here.to(State::MraRepRcvd)),
        State::Established if mraed == Some(MsgResponse::Other) && lap == LapState::Sent => {
            acked(here.lap(LapState::MraLapRcvd))
        }
        State::Established if lap == LapState::MraLapRcvd => here.dup(),
        State::MraReqRcvd | State::MraRepRcvd => here.dup(),
        _ => here,
    }
}

/// A LAP (`cm_lap_handler()`); on RoCE the CM drops every LAP.
pub(crate) fn lap_received(state: State, lap: LapState, roce: bool) -> Step {
    let here = Step::stay(state, lap);
    if roce || state != State::Established {
        return here;
    }
    match lap {
        LapState::Uninit | LapState::Idle => here.lap(LapState::Rcvd).deliver(Event::LapReceived),
        LapState::MraLapSent => here.dup().send(Send::Mra(MsgResponse::Other)),
        LapState::Rcvd => here.dup(),
        _ => here,
    }
}

/// An APR (`cm_apr_handler()`); on RoCE the CM drops every APR.
pub(crate) fn apr_received(state: State, lap: LapState, roce: bool) -> Step {
    let here = Step::stay(state, lap);
    match (roce, state, lap) {
        (false, State::Established, LapState::Sent | LapState::MraLapRcvd) => here
            .lap(LapState::Idle)
            .cancel()
            .deliver(Event::AprReceived),
        _ => here,
    }
}

/// What a SIDR_REQ finds in the CM's tables (`cm_sidr_req_handler()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SidrMatch {
    /// The same request (request ID and source LID) is being answered.
    Duplicate,
    /// Nobody listens on the service ID.
    NoListener,
    /// A listener takes it.
    Listener,
}

/// The new ID of a received SIDR_REQ; `None` when the request is dropped
/// (counted as a duplicate if it is one). With no listener the ID answers
/// [`sidr_status::UNSUPPORTED`] and is destroyed.
pub(crate) fn new_sidr_req(found: SidrMatch) -> Option<Step> {
    let rcvd = Step::stay(State::Idle, LapState::Uninit).to(State::SidrReqRcvd);
    match found {
        SidrMatch::Duplicate => None,
        SidrMatch::NoListener => Some(
            rcvd.gate(Gate::Post(Send::SidrRepStatus(sidr_status::UNSUPPORTED)))
                .to(State::Idle)
                .leave(Leave::ForgetSidr),
        ),
        SidrMatch::Listener => Some(rcvd.deliver(Event::SidrReqReceived)),
    }
}

/// A SIDR_REP (`cm_sidr_rep_handler()`).
pub(crate) fn sidr_rep_received(state: State, lap: LapState) -> Step {
    match state {
        State::SidrReqSent => Step::stay(state, lap)
            .to(State::Idle)
            .cancel()
            .deliver(Event::SidrRepReceived),
        _ => Step::stay(state, lap),
    }
}

/// The timewait timer (`cm_timewait_handler()`): only an ID still in the
/// timewait of that connection (same remote QPN) leaves it.
pub(crate) fn timewait_expired(state: State, lap: LapState, qpn_matches: bool) -> Step {
    match state {
        State::Timewait if qpn_matches => Step::stay(state, lap)
            .to(State::Idle)
            .deliver(Event::TimewaitExit),
        _ => Step::stay(state, lap),
    }
}

/// How a tracked MAD ended (`struct ib_mad_send_wc`'s status, reduced).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SendStatus {
    /// Answered (or the last try went out and the ID moved on).
    Success,
    /// Cancelled (`IB_WC_WR_FLUSH_ERR`).
    Flushed,
    /// Every try timed out, or the send failed.
    Failed,
}

/// The end of the ID's tracked MAD, sent in `sent_in` (`cm_process_send_error()`;
/// the driver first drops completions of MADs that are no longer the ID's
/// current one). If the ID is still where the MAD left it, the peer never
/// answered: the consumer gets the error event.
pub(crate) fn send_failed(state: State, lap: LapState, sent_in: State, status: SendStatus) -> Step {
    let here = Step::stay(state, lap);
    if state != sent_in || status != SendStatus::Failed {
        return here;
    }
    match state {
        State::ReqSent | State::MraReqRcvd => here.reset_to_idle().deliver(Event::ReqError),
        State::RepSent | State::MraRepRcvd => here.reset_to_idle().deliver(Event::RepError),
        State::DreqSent => here.timewait().deliver(Event::DreqError),
        State::SidrReqSent => here.to(State::Idle).deliver(Event::SidrReqError),
        _ => here,
    }
}

// ---- QP attributes ------------------------------------------------------------

/// The QP state `ib_cm_init_qp_attr()` is asked about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QpTarget {
    /// `IB_QPS_INIT`.
    Init,
    /// `IB_QPS_RTR`.
    Rtr,
    /// `IB_QPS_RTS`.
    Rts,
}

/// `enum ib_qp_attr_mask` bits the CM sets.
pub(crate) mod qp_mask {
    /// `IB_QP_STATE`.
    pub(crate) const STATE: u32 = 1;
    /// `IB_QP_ACCESS_FLAGS`.
    pub(crate) const ACCESS_FLAGS: u32 = 1 << 3;
    /// `IB_QP_PKEY_INDEX`.
    pub(crate) const PKEY_INDEX: u32 = 1 << 4;
    /// `IB_QP_PORT`.
    pub(crate) const PORT: u32 = 1 << 5;
    /// `IB_QP_AV`.
    pub(crate) const AV: u32 = 1 << 7;
    /// `IB_QP_PATH_MTU`.
    pub(crate) const PATH_MTU: u32 = 1 << 8;
    /// `IB_QP_TIMEOUT`.
    pub(crate) const TIMEOUT: u32 = 1 << 9;
    /// `IB_QP_RETRY_CNT`.
    pub(crate) const RETRY_CNT: u32 = 1 << 10;
    /// `IB_QP_RNR_RETRY`.
    pub(crate) const RNR_RETRY: u32 = 1 << 11;
    /// `IB_QP_RQ_PSN`.
    pub(crate) const RQ_PSN: u32 = 1 << 12;
    /// `IB_QP_MAX_QP_RD_ATOMIC`.
    pub(crate) const MAX_QP_RD_ATOMIC: u32 = 1 << 13;
    /// `IB_QP_ALT_PATH`.
    pub(crate) const ALT_PATH: u32 = 1 << 14;
    /// `IB_QP_MIN_RNR_TIMER`.
    pub(crate) const MIN_RNR_TIMER: u32 = 1 << 15;
    /// `IB_QP_SQ_PSN`.
    pub(crate) const SQ_PSN: u32 = 1 << 16;
    /// `IB_QP_MAX_DEST_RD_ATOMIC`.
    pub(crate) const MAX_DEST_RD_ATOMIC: u32 = 1 << 17;
    /// `IB_QP_PATH_MIG_STATE`.
    pub(crate) const PATH_MIG_STATE: u32 = 1 << 18;
    /// `IB_QP_DEST_QPN`.
    pub(crate) const DEST_QPN: u32 = 1 << 20;
}

/// What the QP attribute computation needs besides the state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QpAttrInput {
    /// The connection's transport, if any.
    pub(crate) qp_type: Option<CmQpType>,
    /// The alternate path has a destination LID.
    pub(crate) alt_dlid: bool,
    /// The alternate path has a port (is usable).
    pub(crate) alt_port: bool,
}

/// The attribute mask `ib_cm_init_qp_attr()` returns for `target`, or why it
/// refuses; the driver fills the attributes the mask names from the ID.
pub(crate) fn qp_attr_mask(
    state: State,
    lap: LapState,
    target: QpTarget,
    q: QpAttrInput,
) -> Result<u32, Refusal> {
    use qp_mask::*;
    let connecting = matches!(
        state,
        State::ReqRcvd
            | State::MraReqSent
            | State::RepRcvd
            | State::MraRepSent
            | State::RepSent
            | State::MraRepRcvd
            | State::Established
    );
    match target {
        QpTarget::Init if connecting || matches!(state, State::ReqSent | State::MraReqRcvd) => {
            Ok(STATE | ACCESS_FLAGS | PKEY_INDEX | PORT)
        }
        QpTarget::Rtr if connecting => {
            let mut mask = STATE | AV | PATH_MTU | DEST_QPN | RQ_PSN;
            if matches!(q.qp_type, Some(CmQpType::Rc | CmQpType::XrcTgt)) {
                mask |= MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER;
            }
            if q.alt_dlid && q.alt_port {
                mask |= ALT_PATH;
            }
            Ok(mask)
        }
        QpTarget::Rts if connecting && lap == LapState::Uninit => {
            let mut mask = STATE | SQ_PSN;
            match q.qp_type {
                Some(CmQpType::Rc | CmQpType::XrcIni) => {
                    mask |= RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC | TIMEOUT
                }
                Some(CmQpType::XrcTgt) => mask |= TIMEOUT,
                _ => {}
            }
            if q.alt_dlid {
                mask |= PATH_MIG_STATE;
            }
            Ok(mask)
        }
        QpTarget::Rts if connecting => Ok(ALT_PATH | PATH_MIG_STATE),
        _ => Err(Refusal::Inval),
    }
}

/// `IB_ACCESS_REMOTE_WRITE`.
pub(crate) const ACCESS_REMOTE_WRITE: u32 = 1 << 1;
/// `IB_ACCESS_REMOTE_READ`.
pub(crate) const ACCESS_REMOTE_READ: u32 = 1 << 2;
/// `IB_ACCESS_REMOTE_ATOMIC`.
pub(crate) const ACCESS_REMOTE_ATOMIC: u32 = 1 << 3;
/// `IB_ACCESS_FLUSH_GLOBAL`.
pub(crate) const ACCESS_FLUSH_GLOBAL: u32 = 1 << 8;
/// `IB_ACCESS_FLUSH_PERSISTENT`.
pub(crate) const ACCESS_FLUSH_PERSISTENT: u32 = 1 << 9;

/// The QP access flags for INIT (`cm_init_qp_init_attr()`): remote writes
/// always; reads, atomics (and flushes if the device has them) when the
/// peer may issue reads.
pub(crate) fn init_access_flags(responder_resources: u8, device_flush: bool) -> u32 {
    let mut flags = ACCESS_REMOTE_WRITE;
    if responder_resources != 0 {
        flags |= ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC;
        if device_flush {
            flags |= ACCESS_FLUSH_GLOBAL | ACCESS_FLUSH_PERSISTENT;
        }
    }
    flags
}
