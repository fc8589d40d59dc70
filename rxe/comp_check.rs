// SPDX-License-Identifier: GPL-2.0

//! The completer (the C driver's `rxe_comp.c`): the state machine that
//! matches responses (ACKs, NAKs, read responses, atomic ACKs) with the
//! send queue's oldest WQEs, completes them, and asks for retransmissions.
//!
//! The whole machine is here, with no kernel dependency: its decisions are
//! pure functions of the response, the head WQE and the completer's
//! counters, and what it does to the QP (copy read data, post a completion,
//! arm a timer, count, move the QP to ERR) goes through [`CompEnv`], which
//! the kernel side (`comp.rs`) implements over the QP and the host tests
//! implement with a recording mock. Also built by `tests/host`.

use crate::{
    params::{
        CNT_COMP_RETRY,
        CNT_RCV_RNR,
        CNT_RCV_SEQ_ERR,
        CNT_RETRY_EXCEEDED,
        CNT_RNR_RETRY_EXCEEDED,
        RETRY_INFINITE, //
    },
    req_plan::{
        ReqFlags,
        WqeState, //
    },
    wire::{
        ext::syndrome,
        opcode::{
            code,
            Mask, //
        },
        psn::{
            psn_add,
            psn_diff, //
        },
    },
    wqe::{
        opcode as wr,
        wr_mask, //
    },
};

/// `enum ib_wc_status`: the statuses the transport completes with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum WcStatus {
    /// Success.
    #[default]
    Success = 0,
    /// Local length error.
    LocLen = 1,
    /// Local QP operation error.
    LocQpOp = 2,
    /// Local protection error.
    LocProt = 4,
    /// Flushed: the QP is in the error state.
    WrFlush = 5,
    /// Memory window bind error.
    MwBind = 6,
    /// Bad response.
    BadResp = 7,
    /// Remote invalid request.
    RemInvReq = 9,
    /// Remote access error.
    RemAccess = 10,
    /// Remote operational error.
    RemOp = 11,
    /// Transport retry counter exceeded.
    RetryExc = 12,
    /// RNR retry counter exceeded.
    RnrRetryExc = 13,
    /// Fatal error.
    Fatal = 19,
}

impl WcStatus {
    /// The `enum ib_wc_status` value.
    pub(crate) fn as_raw(self) -> u32 {
        self as u32
    }
}

/// The completer's states (`enum comp_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CompState {
    /// Take the next response, if any.
    GetAck,
    /// Look at the send queue's head WQE.
    GetWqe,
    /// Complete a WQE that needs no (more) acknowledgement.
    CompWqe,
    /// Complete the WQE the response acknowledges.
    CompAck,
    /// Place the response's PSN against the WQE and the expected PSN.
    CheckPsn,
    /// Check the response's opcode sequence and syndrome.
    CheckAck,
    /// Copy a read response's data.
    Read,
    /// Copy an atomic ACK's original value.
    Atomic,
    /// An ACK of a write or send.
    WriteSend,
    /// Advance the expected PSN past the response.
    UpdateComp,
    /// Ask the requester to retransmit, if retries remain.
    ErrorRetry,
    /// Arm the RNR timer, if RNR retries remain.
    RnrRetry,
    /// Complete the WQE in error and move the QP to ERR.
    Error,
    /// Stop; run again only if the requester was unblocked.
    Exit,
    /// Stop; run again (there may be more responses).
    Done,
}

/// A response packet as the completer reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Resp {
    /// Its PSN.
    pub(crate) psn: u32,
    /// Its opcode.
    pub(crate) opcode: u8,
    /// Its opcode's mask.
    pub(crate) mask: Mask,
    /// Its AETH syndrome (0 when it has no AETH).
    pub(crate) syn: u8,
}

/// The send queue's oldest WQE as the completer reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HeadWqe {
    /// Its state.
    pub(crate) state: WqeState,
    /// `enum ib_wr_opcode`.
    pub(crate) wr_op: u32,
    /// Its [`wr_mask`].
    pub(crate) wr_mask: u32,
    /// Its first PSN.
    pub(crate) first_psn: u32,
    /// Its last PSN.
    pub(crate) last_psn: u32,
}

impl HeadWqe {
    /// A WQE known by its state only, for a walk without a response, in
    /// which nothing else of a WQE neither done nor failed is read
    /// ([`get_wqe`], [`error_retry`]).
    pub(crate) fn of_state(state: WqeState) -> Self {
        Self {
            state,
            wr_op: 0,
            wr_mask: 0,
            first_psn: 0,
            last_psn: 0,
        }
    }

    fn is_read_or_atomic(&self) -> bool {
        self.wr_mask & (wr_mask::READ | wr_mask::ATOMIC) != 0
    }
}

/// The completer's own state (`struct rxe_comp_info`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CompInfo {
    /// The next PSN a response is expected for.
    pub(crate) psn: u32,
    /// The opcode of the last response of an unfinished read, `None`
    /// between messages.
    pub(crate) opcode: Option<u8>,
    /// This run follows a retransmission timeout with no response since.
    pub(crate) timeout_retry: bool,
    /// A retransmission was asked for and has not been answered yet.
    pub(crate) started_retry: bool,
    /// Transport retries left.
    pub(crate) retry_cnt: u8,
    /// RNR retries left.
    pub(crate) rnr_retry: u8,
}

/// The QP's retry attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RetryLimits {
    /// `retry_cnt` (0 to 7).
    pub(crate) retry_cnt: u8,
    /// `rnr_retry` (0 to 7; 7 is for ever).
    pub(crate) rnr_retry: u8,
}

impl CompInfo {
    /// The state of a QP entering RTS with send PSN `sq_psn`.
    pub(crate) fn new(sq_psn: u32, lim: RetryLimits) -> Self {
        let mut c = Self {
            psn: sq_psn,
            ..Self::default()
        };
        c.reset_retry(lim);
        c
    }

    /// A response made progress: the retry budgets are full again.
    pub(crate) fn reset_retry(&mut self, lim: RetryLimits) {
        self.retry_cnt = lim.retry_cnt;
        self.rnr_retry = lim.rnr_retry;
        self.started_retry = false;
    }
}

/// What an AETH syndrome says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AckKind {
    /// Positive acknowledgement.
    Ack,
    /// Receiver not ready: retry after the timer of this code (0-31).
    RnrNak(u8),
    /// Negative acknowledgement with this full syndrome.
    Nak(u8),
    /// A reserved type.
    Reserved,
}

/// Decodes an AETH syndrome (bit 7 counts: a syndrome with it set is of a
/// reserved type, as in the C driver).
pub(crate) fn decode_syndrome(syn: u8) -> AckKind {
    match syn & syndrome::TYPE_MASK {
        syndrome::ACK => AckKind::Ack,
        syndrome::RNR_NAK => AckKind::RnrNak(syn & syndrome::VALUE_MASK),
        syndrome::NAK => AckKind::Nak(syn),
        _ => AckKind::Reserved,
    }
}

/// The status a NAK other than a PSN sequence error completes its WQE
/// with. The C driver knows four NAK codes; the others (invalid RD request
/// included) are remote operational errors.
pub(crate) fn nak_status(syn: u8) -> WcStatus {
    match syn {
        syndrome::NAK_INVALID_REQ => WcStatus::RemInvReq,
        syndrome::NAK_REM_ACC_ERR => WcStatus::RemAccess,
        _ => WcStatus::RemOp,
    }
}

/// Microseconds of the RNR NAK timer code `timer` (IBTA table 45; code 0
/// is the longest).
pub(crate) fn rnr_timeout_usecs(timer: u8) -> u32 {
    const USECS: [u32; 32] = [
        655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1_280, 1_920, 2_560,
        3_840, 5_120, 7_680, 10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880,
        163_840, 245_760, 327_680, 491_520,
    ];
    USECS[usize::from(timer & syndrome::VALUE_MASK)]
}

/// `enum ib_wc_opcode` of a send WQE's completion (`wr_to_wc_opcode`).
pub(crate) fn wc_opcode(wr_op: u32) -> u32 {
    match wr_op {
        wr::RDMA_WRITE | wr::RDMA_WRITE_WITH_IMM => 1,
        wr::SEND | wr::SEND_WITH_IMM | wr::SEND_WITH_INV => 0,
        wr::RDMA_READ | wr::RDMA_READ_WITH_INV => 2,
        wr::ATOMIC_CMP_AND_SWP => 3,
        wr::ATOMIC_FETCH_AND_ADD => 4,
        wr::BIND_MW => 5,
        wr::LOCAL_INV => 6,
        wr::LSO => 7,
        wr::FLUSH => 8,
        wr::ATOMIC_WRITE => 9,
        wr::REG_MR => 10,
        _ => 0xff,
    }
}

/// What the completer does to the QP.
pub(crate) trait CompEnv {
    /// Takes the next response from the QP's response queue; it stays the
    /// current packet until the next call or the end of the run.
    fn next_resp(&mut self) -> Option<Resp>;
    /// The send queue's oldest WQE (not yet completed).
    fn head(&mut self) -> Option<HeadWqe>;
    /// Sets the head WQE's completion status.
    fn set_status(&mut self, status: WcStatus);
    /// Copies the current read response's payload into the head WQE's
    /// buffers; the bytes the WQE still expects after it, or `Err` for a
    /// local protection error.
    fn read_payload(&mut self) -> Result<u32, ()>;
    /// Copies the current atomic ACK's original value into the head WQE's
    /// buffer; `Err` for a local protection error.
    fn atomic_payload(&mut self) -> Result<(), ()>;
    /// Gives back the head WQE's read/atomic credit; whether it held one.
    fn release_rd_atomic(&mut self) -> bool;
    /// Signals the end of a send queue drain (SQD) once the completer
    /// caught up with the requester at `comp_psn`.
    fn check_sq_drained(&mut self, comp_psn: u32);
    /// Completes the head WQE (`do_complete`): posts its completion when
    /// signaled or failed, pops it, counts sends.
    fn complete(&mut self);
    /// Counts an event in port counter `index`.
    fn count(&mut self, index: usize);
    /// The requester's next PSN.
    fn req_psn(&self) -> u32;
    /// Restarts the retransmission timer (RC, timeout set, state >= RTS).
    fn rearm_retry_timer(&mut self);
    /// Arms the RNR timer to fire after `usecs` (at least one jiffy).
    fn start_rnr_timer(&mut self, usecs: u32);
    /// Moves the QP to the error state.
    fn qp_error(&mut self);
}

/// Next state for the head WQE `wqe` (`get_wqe`), with or without a
/// response at hand.
pub(crate) fn get_wqe(wqe: Option<&HeadWqe>, have_resp: bool) -> CompState {
    let stop = if have_resp {
        CompState::Done
    } else {
        CompState::Exit
    };
    match wqe.map(|w| w.state) {
        None | Some(WqeState::Posted) => stop,
        Some(WqeState::Done) => CompState::CompWqe,
        Some(WqeState::Error) => CompState::Error,
        Some(_) if have_resp => CompState::CheckPsn,
        Some(_) => CompState::Exit,
    }
}

/// Places the response against the WQE and the expected PSN
/// (`check_psn`).
pub(crate) fn check_psn(
    pkt: &Resp,
    wqe: &HeadWqe,
    comp: &mut CompInfo,
    lim: RetryLimits,
) -> CompState {
    // Past the WQE: it was acknowledged by a coalesced ACK (a write or
    // send), or its responses were lost (a read or atomic: retry).
    if psn_diff(pkt.psn, wqe.last_psn) > 0 {
        if wqe.state != WqeState::Pending {
            return CompState::Done;
        }
        if wqe.is_read_or_atomic() {
            return CompState::ErrorRetry;
        }
        comp.reset_retry(lim);
        return CompState::CompWqe;
    }
    let diff = psn_diff(pkt.psn, comp.psn);
    if diff < 0 {
        // An old response: it can still complete its WQE; a NAK in the
        // middle of a read is looked at; else ignore it. (The C driver
        // looks at a positive ACK there too, and its update forgets the
        // read in progress: the next read response is then refused as out
        // of sequence. A duplicate request's ACK during a read does it.)
        let mid_read = matches!(
            comp.opcode,
            Some(code::RC_RDMA_READ_RESPONSE_FIRST | code::RC_RDMA_READ_RESPONSE_MIDDLE)
        );
        let nak = decode_syndrome(pkt.syn) != AckKind::Ack;
        if pkt.psn == wqe.last_psn {
            CompState::CompAck
        } else if pkt.opcode == code::RC_ACKNOWLEDGE && mid_read && nak {
            CompState::CheckAck
        } else {
            CompState::Done
        }
    } else if diff > 0 && wqe.is_read_or_atomic() {
        // Responses of a read/atomic come in order; one is missing.
        CompState::Done
    } else {
        CompState::CheckAck
    }
}

/// The verdict of [`check_ack`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AckVerdict {
    /// The next state.
    pub(crate) next: CompState,
    /// The head WQE's status, when the verdict sets it.
    pub(crate) status: Option<WcStatus>,
    /// A port counter to count.
    pub(crate) count: Option<usize>,
}

impl AckVerdict {
    fn go(next: CompState) -> Self {
        Self {
            next,
            status: None,
            count: None,
        }
    }

    fn fail(status: WcStatus) -> Self {
        Self {
            next: CompState::Error,
            status: Some(status),
            count: None,
        }
    }
}

/// Checks the response's place in the opcode sequence and its syndrome
/// (`check_ack`). A sequence error completes with
/// [`WcStatus::BadResp`] where the C driver left the status at success
/// (and warned).
pub(crate) fn check_ack(
    pkt: &Resp,
    wqe: &HeadWqe,
    comp: &mut CompInfo,
    req: &mut ReqFlags,
    lim: RetryLimits,
) -> AckVerdict {
    use code::*;
    let bad = AckVerdict::fail(WcStatus::BadResp);
    match comp.opcode {
        None => {
            // Every "only" is a start; a middle or last is not.
            if !pkt.mask.contains(Mask::START) {
                return bad;
            }
        }
        Some(RC_RDMA_READ_RESPONSE_FIRST | RC_RDMA_READ_RESPONSE_MIDDLE) => {
            let continues = matches!(
                pkt.opcode,
                RC_ACKNOWLEDGE | RC_RDMA_READ_RESPONSE_MIDDLE | RC_RDMA_READ_RESPONSE_LAST
            );
            // A retried read may restart from its first response.
            let restarts = (pkt.psn == wqe.first_psn && pkt.opcode == RC_RDMA_READ_RESPONSE_FIRST)
                || (wqe.first_psn == wqe.last_psn && pkt.opcode == RC_RDMA_READ_RESPONSE_ONLY);
            if !continues && !restarts {
                return bad;
            }
        }
        // The completer only keeps the opcode of an unfinished read.
        Some(_) => return bad,
    }
    let is_read = matches!(
        wqe.wr_op,
        wr::RDMA_READ | wr::RDMA_READ_WITH_INV | wr::FLUSH
    );
    match pkt.opcode {
        RC_RDMA_READ_RESPONSE_FIRST
        | RC_RDMA_READ_RESPONSE_LAST
        | RC_RDMA_READ_RESPONSE_ONLY
        | RC_RDMA_READ_RESPONSE_MIDDLE => {
            let with_aeth = pkt.opcode != RC_RDMA_READ_RESPONSE_MIDDLE;
            if with_aeth {
                if decode_syndrome(pkt.syn) != AckKind::Ack {
                    return bad;
                }
                // An atomic write is acknowledged by an empty read response.
                if wqe.wr_op == wr::ATOMIC_WRITE {
                    return AckVerdict::go(CompState::WriteSend);
                }
            }
            if !is_read {
                return AckVerdict::fail(WcStatus::Fatal);
            }
            comp.reset_retry(lim);
            AckVerdict::go(CompState::Read)
        }
        RC_ATOMIC_ACKNOWLEDGE => {
            if decode_syndrome(pkt.syn) != AckKind::Ack
                || !matches!(wqe.wr_op, wr::ATOMIC_CMP_AND_SWP | wr::ATOMIC_FETCH_AND_ADD)
            {
                return bad;
            }
            comp.reset_retry(lim);
            AckVerdict::go(CompState::Atomic)
        }
        RC_ACKNOWLEDGE => match decode_syndrome(pkt.syn) {
            // A read or atomic completes with its data, never with a
            // plain ACK. The responder ACKs a duplicate send or write with
            // the PSN before its next expected one, which may be a read's
            // or an atomic's: the C completer completes that WQE then,
            // without its data. Ignored here; a retry replays the data.
            AckKind::Ack if wqe.is_read_or_atomic() => AckVerdict::go(CompState::Done),
            AckKind::Ack => {
                comp.reset_retry(lim);
                AckVerdict::go(CompState::WriteSend)
            }
            AckKind::RnrNak(_) => AckVerdict {
                next: CompState::RnrRetry,
                status: None,
                count: Some(CNT_RCV_RNR),
            },
            AckKind::Nak(syndrome::NAK_PSN_SEQ_ERROR) => {
                // The NAK acknowledges every PSN before its own.
                let mut count = None;
                if psn_diff(pkt.psn, comp.psn) > 0 {
                    count = Some(CNT_RCV_SEQ_ERR);
                    comp.psn = pkt.psn;
                    if req.wait_psn {
                        req.wait_psn = false;
                        req.again = true;
                    }
                }
                AckVerdict {
                    next: CompState::ErrorRetry,
                    status: None,
                    count,
                }
            }
            AckKind::Nak(syn) => AckVerdict::fail(nak_status(syn)),
            AckKind::Reserved => bad,
        },
        _ => bad,
    }
}

/// Whether the completer should run again, as the C driver's return value
/// (0: again; `-EAGAIN`: stop until scheduled).
pub(crate) type RunAgain = bool;

/// What starts a completer run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RunInput {
    /// The retransmission timer fired since the last run.
    pub(crate) timeout: bool,
    /// The QP's retry attributes.
    pub(crate) lim: RetryLimits,
}

/// One completer run (`rxe_completer` after its QP state checks, which
/// flush in ERR and RESET): takes at most one response and walks the
/// states until it stops.
pub(crate) fn run<E: CompEnv>(
    env: &mut E,
    comp: &mut CompInfo,
    req: &mut ReqFlags,
    input: RunInput,
) -> RunAgain {
    req.again = false;
    comp.timeout_retry = input.timeout;
    let again = if req.need_retry {
        // The requester has a retry to do first.
        false
    } else {
        walk(env, comp, req, input.lim)
    };
    let again = again || req.again;
    req.again = false;
    again
}

/// The state walk of a run; true when it ends in DONE.
fn walk<E: CompEnv>(
    env: &mut E,
    comp: &mut CompInfo,
    req: &mut ReqFlags,
    lim: RetryLimits,
) -> bool {
    let mut pkt: Option<Resp> = None;
    let mut wqe: Option<HeadWqe> = None;
    let mut state = CompState::GetAck;
    loop {
        state = match state {
            CompState::GetAck => {
                pkt = env.next_resp();
                if pkt.is_some() {
                    comp.timeout_retry = false;
                }
                CompState::GetWqe
            }
            CompState::GetWqe => {
                wqe = env.head();
                get_wqe(wqe.as_ref(), pkt.is_some())
            }
            CompState::CheckPsn => match (&pkt, &wqe) {
                (Some(p), Some(w)) => check_psn(p, w, comp, lim),
                _ => CompState::Exit,
            },
            CompState::CheckAck => match (&pkt, &wqe) {
                (Some(p), Some(w)) => {
                    let v = check_ack(p, w, comp, req, lim);
                    if let Some(s) = v.status {
                        env.set_status(s);
                    }
                    if let Some(c) = v.count {
                        env.count(c);
                    }
                    v.next
                }
                _ => CompState::Exit,
            },
            CompState::Read => match env.read_payload() {
                Err(()) => {
                    env.set_status(WcStatus::LocProt);
                    CompState::Error
                }
                Ok(0) if pkt.is_some_and(|p| p.mask.contains(Mask::END)) => CompState::CompAck,
                Ok(_) => CompState::UpdateComp,
            },
            CompState::Atomic => match env.atomic_payload() {
                Err(()) => {
                    env.set_status(WcStatus::LocProt);
                    CompState::Error
                }
                Ok(()) => CompState::CompAck,
            },
            CompState::WriteSend => match (&pkt, &wqe) {
                (Some(p), Some(w)) if acks_whole_wqe(w, p) => CompState::CompAck,
                _ => CompState::UpdateComp,
            },
            CompState::CompAck => {
                if env.release_rd_atomic() && req.need_rd_atomic {
                    // The requester waited for this credit.
                    comp.timeout_retry = false;
                    req.need_rd_atomic = false;
                    req.again = true;
                }
                env.check_sq_drained(comp.psn);
                complete(env, req);
                match pkt {
                    Some(p) if psn_diff(p.psn, comp.psn) >= 0 => CompState::UpdateComp,
                    _ => CompState::Done,
                }
            }
            CompState::CompWqe => {
                if let (Some(_), Some(w)) = (&pkt, &wqe) {
                    if w.state == WqeState::Pending {
                        if psn_diff(w.last_psn, comp.psn) >= 0 {
                            comp.psn = psn_add(w.last_psn, 1);
                            comp.opcode = None;
                        }
                        unblock_window(req);
                    }
                }
                complete(env, req);
                CompState::GetWqe
            }
            CompState::UpdateComp => {
                if let Some(p) = &pkt {
                    comp.opcode = if p.mask.contains(Mask::END) {
                        None
                    } else {
                        Some(p.opcode)
                    };
                    if psn_diff(p.psn, comp.psn) >= 0 {
                        comp.psn = psn_add(p.psn, 1);
                    }
                }
                unblock_window(req);
                CompState::Done
            }
            CompState::Done => return true,
            CompState::Exit => {
                if comp.timeout_retry && wqe.is_some() {
                    CompState::ErrorRetry
                } else {
                    if psn_diff(env.req_psn(), comp.psn) > 0 {
                        env.rearm_retry_timer();
                    }
                    return false;
                }
            }
            CompState::ErrorRetry => match error_retry(wqe.as_ref(), comp, req, env.req_psn()) {
                RetryVerdict::Stop => return false,
                RetryVerdict::Wait => return true,
                RetryVerdict::Retry => {
                    env.count(CNT_COMP_RETRY);
                    return true;
                }
                RetryVerdict::Exhausted => {
                    env.count(CNT_RETRY_EXCEEDED);
                    env.set_status(WcStatus::RetryExc);
                    CompState::Error
                }
            },
            CompState::RnrRetry => {
                if comp.rnr_retry > 0 {
                    if comp.rnr_retry != RETRY_INFINITE {
                        comp.rnr_retry -= 1;
                    }
                    // No retry before the timer the responder asked for.
                    req.wait_for_rnr_timer = true;
                    let syn = pkt.map_or(0, |p| p.syn);
                    env.start_rnr_timer(rnr_timeout_usecs(syn));
                    return false;
                }
                env.count(CNT_RNR_RETRY_EXCEEDED);
                env.set_status(WcStatus::RnrRetryExc);
                CompState::Error
            }
            CompState::Error => {
                complete(env, req);
                env.qp_error();
                return false;
            }
        };
    }
}

/// Whether the positive ACK `p` of a write or send acknowledges the whole
/// of the head WQE `w`: it is the ACK of its last PSN, and `w` was sent
/// whole (pending), or is being sent again (processing: a retransmission;
/// the ACK says the responder has every packet of it). The C driver
/// completes a pending WQE only; an ACK of the last PSN taken while the
/// requester is inside the WQE's retransmission moves `comp.psn` past the
/// WQE without completing it, and once the requester's PSN is there too
/// nothing is unanswered: no retry, no timer, and a WQE that no response
/// will ever complete (a pingpong under loss stalls, both sides idle).
pub(crate) fn acks_whole_wqe(w: &HeadWqe, p: &Resp) -> bool {
    matches!(w.state, WqeState::Pending | WqeState::Processing) && w.last_psn == p.psn
}

/// Completes the head WQE; a fenced requester may go on.
fn complete<E: CompEnv>(env: &mut E, req: &mut ReqFlags) {
    env.complete();
    if req.wait_fence {
        req.wait_fence = false;
        req.again = true;
    }
}

/// The window moved: a requester waiting for it may go on.
fn unblock_window(req: &mut ReqFlags) {
    if req.wait_psn {
        req.wait_psn = false;
        req.again = true;
    }
}

/// The outcome of the retry state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RetryVerdict {
    /// Nothing to retry.
    Stop,
    /// A retry is under way, or nothing the requester sent is unanswered.
    Wait,
    /// The requester retransmits from the completer's PSN.
    Retry,
    /// No retry left: the WQE fails with [`WcStatus::RetryExc`].
    Exhausted,
}

/// The retry decision (`COMPST_ERROR_RETRY`) after a timeout, a PSN
/// sequence NAK or a skipped read/atomic response; `retry_cnt` 7 retries
/// for ever.
pub(crate) fn error_retry(
    wqe: Option<&HeadWqe>,
    comp: &mut CompInfo,
    req: &mut ReqFlags,
    req_psn: u32,
) -> RetryVerdict {
    if wqe.is_none_or(|w| w.state == WqeState::Posted) {
        return RetryVerdict::Stop;
    }
    // One retry at a time, unless its answer timed out too.
    if comp.started_retry && !comp.timeout_retry {
        return RetryVerdict::Wait;
    }
    if comp.retry_cnt == 0 {
        return RetryVerdict::Exhausted;
    }
    if comp.retry_cnt != RETRY_INFINITE {
        comp.retry_cnt -= 1;
    }
    // Nothing to resend when the last PSN sent was answered.
    if psn_diff(req_psn, comp.psn) <= 0 {
        return RetryVerdict::Wait;
    }
    req.need_retry = true;
    req.again = true;
    comp.started_retry = true;
    RetryVerdict::Retry
}

impl Resp {
    /// The response `p` as the completer reads it.
    pub(crate) fn from_packet(p: &crate::wire::packet::Packet<'_>) -> Self {
        Self {
            psn: p.psn(),
            opcode: p.opcode(),
            mask: p.mask(),
            syn: p.aeth().map_or(0, |a| a.syn),
        }
    }
}
