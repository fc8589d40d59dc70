// SPDX-License-Identifier: GPL-2.0

//! The responder's decisions (the C driver's `rxe_resp.c`), with no kernel
//! dependency: the checks a request goes through (PSN, opcode sequence,
//! access, resources, length), the error classes and the NAK each one
//! sends, what a new request advances (PSN, MSN), the acknowledgement it
//! gets, the read responses' opcodes, and the replay of duplicate reads
//! and atomics from the responder resources.
//!
//! The kernel side (`resp.rs`) drives the states: it looks up keys, copies
//! data, posts completions and sends the acknowledgements these functions
//! choose. Also built by the host test crate (`tests/host`).

use crate::{
    comp_check::WcStatus,
    keys::{
        ACCESS_FLUSH_GLOBAL,
        ACCESS_FLUSH_PERSISTENT,
        ACCESS_REMOTE_ATOMIC,
        ACCESS_REMOTE_READ,
        ACCESS_REMOTE_WRITE, //
    },
    params::{
        CNT_DUP_REQ,
        CNT_OUT_OF_SEQ_REQ, //
    },
    qp_attr::QpType,
    wire::{
        ext::{
            syndrome,
            Atmeth,
            Reth, //
        },
        opcode::{
            code,
            Mask, //
        },
        psn::{
            psn_add,
            psn_diff,
            psn_in_range,
            psn_sub, //
        },
    },
};

/// `IB_FLUSH_GLOBAL` (FETH placement type bit).
pub(crate) const FLUSH_GLOBAL: u8 = 1 << 0;
/// `IB_FLUSH_PERSISTENT`.
pub(crate) const FLUSH_PERSISTENT: u8 = 1 << 1;
/// `IB_FLUSH_MR` (FETH selectivity level: the whole memory region).
pub(crate) const FLUSH_MR: u8 = 1;
/// The largest DMA length of a RETH (IBA C9-94).
pub(crate) const MAX_DMA_LEN: u32 = 1 << 31;
/// Bytes of the network header a UD receive buffer starts with
/// (`union rdma_network_hdr`).
pub(crate) const NETWORK_HDR_LEN: u32 = 40;

/// The responder's states (`enum resp_states`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RespState {
    /// Take the next request.
    GetReq,
    /// Check its PSN.
    ChkPsn,
    /// Check its place in the opcode sequence.
    ChkOpSeq,
    /// Check the QP allows it.
    ChkOpValid,
    /// Take a receive WQE or a responder resource.
    ChkResource,
    /// Check its length.
    ChkLength,
    /// Resolve its rkey.
    ChkRkey,
    /// Do it.
    Execute,
    /// Send (the next) read response.
    ReadReply,
    /// Do an atomic and answer.
    AtomicReply,
    /// Do an atomic write and answer.
    AtomicWriteReply,
    /// Do a flush and answer.
    ProcessFlush,
    /// Complete the receive WQE.
    Complete,
    /// Send the acknowledgement.
    Acknowledge,
    /// Drop the request and release what it held.
    Cleanup,
    /// Answer a duplicate request.
    DuplicateRequest,
    /// A receive WQE with too many entries (class A).
    ErrMalformedWqe,
    /// An operation the QP does not allow (class C).
    ErrUnsupportedOpcode,
    /// A misaligned atomic (class C).
    ErrMisalignedAtomic,
    /// A PSN after the expected one (class B).
    ErrPsnOutOfSeq,
    /// A middle or last without its first (RC, class C).
    ErrMissingOpcodeFirst,
    /// A message interrupted by another (RC, class C).
    ErrMissingOpcodeLastC,
    /// A message interrupted by another (UC, class D1/E).
    ErrMissingOpcodeLastD1e,
    /// A read or atomic with no responder resource (class C).
    ErrTooManyRdmaAtmReq,
    /// No receive WQE (RC: RNR NAK).
    ErrRnr,
    /// An rkey violation with an asynchronous event.
    ErrRkeyViolationEvent,
    /// An rkey violation.
    ErrRkeyViolation,
    /// A send with invalidate of a key that cannot be (class J).
    ErrInvalidateRkey,
    /// A length error.
    ErrLength,
    /// The receive completion queue overflowed (class G).
    ErrCqOverflow,
    /// Move the QP to ERR.
    Error,
    /// Stop; run again.
    Done,
    /// Stop until scheduled.
    Exit,
}

/// A request packet as the responder's checks read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReqPkt {
    /// Its PSN.
    pub(crate) psn: u32,
    /// Its opcode.
    pub(crate) opcode: u8,
    /// Its opcode's mask.
    pub(crate) mask: Mask,
    /// Bytes of payload (without pad).
    pub(crate) payload: u32,
    /// Its BTH pad count.
    pub(crate) pad: u8,
    /// Its BTH AckReq bit.
    pub(crate) ack_req: bool,
    /// Its RETH, if it has one.
    pub(crate) reth: Option<Reth>,
    /// Its AtomicETH, if it has one.
    pub(crate) atmeth: Option<Atmeth>,
    /// Its FETH placement type, for a flush.
    pub(crate) flush_type: u8,
    /// Its FETH selectivity level, for a flush.
    pub(crate) flush_level: u8,
    /// Its IETH's rkey, for a send with invalidate.
    pub(crate) inv_rkey: Option<u32>,
}

/// The responder's own state (`struct rxe_resp_info`, less its buffers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RespInfo {
    /// Message sequence number: messages completed, 24 bits.
    pub(crate) msn: u32,
    /// The next PSN expected.
    pub(crate) psn: u32,
    /// The PSN after the last request acknowledged.
    pub(crate) ack_psn: u32,
    /// The opcode of the last request of an unfinished message, `None`
    /// between messages.
    pub(crate) opcode: Option<u8>,
    /// UC: drop packets until the next message's first.
    pub(crate) drop_msg: bool,
    /// Go to the error state at the end of the run.
    pub(crate) goto_error: bool,
    /// A PSN sequence NAK was sent and not yet answered.
    pub(crate) sent_psn_nak: bool,
    /// The status of the receive completion.
    pub(crate) status: WcStatus,
    /// The syndrome of this run's acknowledgement.
    pub(crate) aeth_syndrome: u8,
    /// The responder resource being answered (a read's later responses,
    /// a replay), as an index in [`Resources`].
    pub(crate) res: Option<usize>,
}

impl RespInfo {
    /// The state of a QP entering RTR with receive PSN `rq_psn`.
    pub(crate) fn new(rq_psn: u32) -> Self {
        Self {
            psn: rq_psn,
            ack_psn: rq_psn,
            aeth_syndrome: syndrome::ACK_UNLIMITED,
            ..Self::default()
        }
    }
}

/// A decision and the port counter it counts.
pub(crate) type Counted = (RespState, Option<usize>);

/// Checks the request's PSN (`check_psn`). RC: a later PSN is NAKed once
/// (then dropped until the expected one comes), an earlier one is a
/// duplicate. UC: a gap drops the rest of the message.
pub(crate) fn check_psn(t: QpType, pkt: &ReqPkt, resp: &mut RespInfo) -> Counted {
    let diff = psn_diff(pkt.psn, resp.psn);
    match t {
        QpType::Rc => {
            if diff > 0 {
                if resp.sent_psn_nak {
                    return (RespState::Cleanup, None);
                }
                resp.sent_psn_nak = true;
                return (RespState::ErrPsnOutOfSeq, Some(CNT_OUT_OF_SEQ_REQ));
            }
            if diff < 0 {
                return (RespState::DuplicateRequest, Some(CNT_DUP_REQ));
            }
            resp.sent_psn_nak = false;
        }
        QpType::Uc => {
            if resp.drop_msg || diff != 0 {
                if pkt.mask.contains(Mask::START) {
                    resp.drop_msg = false;
                    return (RespState::ChkOpSeq, None);
                }
                resp.drop_msg = true;
                return (RespState::Cleanup, None);
            }
        }
        QpType::Ud | QpType::Gsi => {}
    }
    (RespState::ChkOpSeq, None)
}

/// Checks the request continues the message in progress, or starts one
/// (`check_op_seq`).
pub(crate) fn check_op_seq(t: QpType, opcode: u8, resp: &mut RespInfo) -> RespState {
    use code::*;
    let (base, last_err) = match t {
        QpType::Rc => (RC_SEND_FIRST, RespState::ErrMissingOpcodeLastC),
        QpType::Uc => (UC_SEND_FIRST, RespState::ErrMissingOpcodeLastD1e),
        QpType::Ud | QpType::Gsi => return RespState::ChkOpValid,
    };
    // Offsets from the transport's SEND FIRST: the same for RC and UC.
    let op = |rc: u8| base | (rc & !crate::wire::opcode::TRANSPORT_MASK);
    let send_more = [
        op(RC_SEND_MIDDLE),
        op(RC_SEND_LAST),
        op(RC_SEND_LAST_WITH_IMMEDIATE),
    ];
    let write_more = [
        op(RC_RDMA_WRITE_MIDDLE),
        op(RC_RDMA_WRITE_LAST),
        op(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE),
    ];
    // Only RC has a send with invalidate.
    let send_inv = t == QpType::Rc && opcode == RC_SEND_LAST_WITH_INVALIDATE;
    let in_send = send_more.contains(&opcode) || send_inv;
    let in_write = write_more.contains(&opcode);
    match resp.opcode {
        Some(p) if p == op(RC_SEND_FIRST) || p == op(RC_SEND_MIDDLE) => {
            if in_send {
                RespState::ChkOpValid
            } else {
                last_err
            }
        }
        Some(p) if p == op(RC_RDMA_WRITE_FIRST) || p == op(RC_RDMA_WRITE_MIDDLE) => {
            if in_write {
                RespState::ChkOpValid
            } else {
                last_err
            }
        }
        _ if in_send || in_write => {
            if t == QpType::Rc {
                RespState::ErrMissingOpcodeFirst
            } else {
                resp.drop_msg = true;
                RespState::Cleanup
            }
        }
        _ => RespState::ChkOpValid,
    }
}

/// Whether the QP's access flags allow the request (`check_qp_attr_access`).
pub(crate) fn qp_access_allows(mask: Mask, access: u32, flush_type: u8) -> bool {
    let needs = |m: Mask, flag: u32| mask.intersects(m) && access & flag == 0;
    if needs(Mask::READ, ACCESS_REMOTE_READ)
        || needs(Mask::WRITE.or(Mask::ATOMIC_WRITE), ACCESS_REMOTE_WRITE)
        || needs(Mask::ATOMIC, ACCESS_REMOTE_ATOMIC)
    {
        return false;
    }
    if mask.intersects(Mask::FLUSH) {
        let global = flush_type & FLUSH_GLOBAL != 0 && access & ACCESS_FLUSH_GLOBAL == 0;
        let persistent =
            flush_type & FLUSH_PERSISTENT != 0 && access & ACCESS_FLUSH_PERSISTENT == 0;
        if global || persistent {
            return false;
        }
    }
    true
}

/// Checks the QP allows the operation (`check_op_valid`): RC answers an
/// invalid request, UC drops a write it does not allow.
pub(crate) fn check_op_valid(
    t: QpType,
    pkt: &ReqPkt,
    access: u32,
    resp: &mut RespInfo,
) -> RespState {
    match t {
        QpType::Rc if !qp_access_allows(pkt.mask, access, pkt.flush_type) => {
            RespState::ErrUnsupportedOpcode
        }
        QpType::Uc if pkt.mask.intersects(Mask::WRITE) && access & ACCESS_REMOTE_WRITE == 0 => {
            resp.drop_msg = true;
            RespState::Cleanup
        }
        _ => RespState::ChkResource,
    }
}

/// What the request needs before its length is checked
/// (`check_resource`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resource {
    /// Nothing: go on.
    None,
    /// A receive WQE (from the SRQ if the QP has one); none is an
    /// [`RespState::ErrRnr`].
    RecvWqe,
    /// Reads and atomics need responder resources, and the QP has none.
    TooMany,
}

/// The resource a request of mask `mask` needs on a QP accepting
/// `max_dest_rd_atomic` reads/atomics. A send takes its receive WQE at its
/// first packet, a write with immediate at its last.
pub(crate) fn check_resource(mask: Mask, max_dest_rd_atomic: u32) -> Resource {
    if mask.intersects(Mask::READ_OR_ATOMIC.or(Mask::ATOMIC_WRITE)) {
        // The requester keeps within the limit; resources are recycled.
        return if max_dest_rd_atomic > 0 {
            Resource::None
        } else {
            Resource::TooMany
        };
    }
    if mask.intersects(Mask::RWR) {
        return Resource::RecvWqe;
    }
    Resource::None
}

/// Checks the request's lengths (`rxe_resp_check_length`). `recv_len`:
/// the receive WQE's buffer bytes (datagrams only).
pub(crate) fn check_length(t: QpType, pkt: &ReqPkt, mtu: u32, recv_len: u32) -> RespState {
    let m = pkt.mask;
    if t.is_datagram() && u64::from(pkt.payload) + u64::from(NETWORK_HDR_LEN) > u64::from(recv_len)
    {
        return RespState::ErrLength;
    }
    if m.intersects(Mask::PAYLOAD) && matches!(t, QpType::Rc | QpType::Uc) {
        let p = pkt.payload;
        let ok = if m.contains(Mask::START.or(Mask::END)) {
            p <= mtu
        } else if m.intersects(Mask::START.or(Mask::MIDDLE)) {
            p == mtu
        } else if m.contains(Mask::END) {
            p != 0 && p <= mtu
        } else {
            true
        };
        if !ok {
            return RespState::ErrLength;
        }
    }
    if pkt.reth.is_some_and(|r| r.len > MAX_DMA_LEN) {
        return RespState::ErrLength;
    }
    if m.intersects(Mask::RDMA_OP) {
        RespState::ChkRkey
    } else {
        RespState::Execute
    }
}

/// An rkey violation's state (`get_rkey_violation_state`): a write with
/// immediate has a receive WQE to report it on; the others raise the QP's
/// access error event (IBA C9-222.1).
pub(crate) fn rkey_violation(mask: Mask) -> RespState {
    if mask.intersects(Mask::IMMDT) {
        RespState::ErrRkeyViolation
    } else {
        RespState::ErrRkeyViolationEvent
    }
}

/// The access an RDMA request needs of the memory its rkey names.
pub(crate) fn rkey_access(mask: Mask, flush_type: u8) -> u32 {
    if mask.intersects(Mask::READ) {
        ACCESS_REMOTE_READ
    } else if mask.intersects(Mask::WRITE.or(Mask::ATOMIC_WRITE)) {
        ACCESS_REMOTE_WRITE
    } else if mask.intersects(Mask::FLUSH) {
        let mut a = 0;
        if flush_type & FLUSH_GLOBAL != 0 {
            a |= ACCESS_FLUSH_GLOBAL;
        }
        if flush_type & FLUSH_PERSISTENT != 0 {
            a |= ACCESS_FLUSH_PERSISTENT;
        }
        a
    } else if mask.intersects(Mask::ATOMIC) {
        ACCESS_REMOTE_ATOMIC
    } else {
        0
    }
}

/// Whether a read or write of no byte skips the rkey (IBA C9-88: its
/// address and key mean nothing).
pub(crate) fn rkey_skipped(pkt: &ReqPkt) -> bool {
    pkt.mask.intersects(Mask::READ_OR_WRITE) && pkt.reth.is_some_and(|r| r.len == 0)
}

/// The rkey a request's RETH gives (`qp_resp_from_reth`): 0, which no key
/// is, for an empty read or write.
pub(crate) fn reth_rkey(mask: Mask, reth: &Reth) -> u32 {
    if mask.intersects(Mask::READ_OR_WRITE) && reth.len == 0 {
        0
    } else {
        reth.rkey
    }
}

/// The payload checks once the rkey resolved (end of `check_rkey`):
/// `resid` is what the message has left to write.
pub(crate) fn check_rdma_payload(pkt: &ReqPkt, resid: u32, mtu: u32) -> Result<(), RespState> {
    let m = pkt.mask;
    let pkt_len = pkt.payload;
    let ok = if m.intersects(Mask::ATOMIC_WRITE) {
        // IBA oA19-28: exactly 8 bytes.
        resid == 8 && pkt_len == 8 && pkt.pad == 0
    } else if m.intersects(Mask::WRITE) {
        if resid > mtu {
            pkt_len == mtu && pkt.pad == 0
        } else {
            pkt_len == resid && u32::from(pkt.pad) == resid.wrapping_neg() & 3
        }
    } else {
        true
    };
    if ok {
        Ok(())
    } else {
        Err(RespState::ErrLength)
    }
}

/// What a new request advances once executed (`execute` and the replies):
/// the MSN at a message's end, the expected PSN, the message opcode.
pub(crate) fn executed(pkt: &ReqPkt, resp: &mut RespInfo) {
    if pkt.mask.contains(Mask::END) {
        resp.msn = psn_add(resp.msn, 1);
    }
    resp.psn = psn_add(pkt.psn, 1);
    resp.ack_psn = resp.psn;
    resp.opcode = Some(pkt.opcode);
    resp.status = WcStatus::Success;
}

/// Where a send or write goes once its data is in (`execute`'s end).
pub(crate) fn after_execute(t: QpType, mask: Mask) -> RespState {
    if mask.intersects(Mask::COMP) {
        RespState::Complete
    } else if t == QpType::Rc {
        RespState::Acknowledge
    } else {
        RespState::Cleanup
    }
}

/// The acknowledgement a request gets (`acknowledge`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ack {
    /// The opcode: ACKNOWLEDGE, ATOMIC ACKNOWLEDGE, or an empty READ
    /// RESPONSE ONLY (flushes and atomic writes).
    pub(crate) opcode: u8,
    /// The AETH syndrome.
    pub(crate) syn: u8,
    /// The PSN it acknowledges.
    pub(crate) psn: u32,
}

/// The acknowledgement for a request `pkt` of an RC QP whose run set the
/// syndrome `aeth_syndrome` (a NAK) or left it at ACK; `None` when the
/// requester asked for none.
pub(crate) fn acknowledge(t: QpType, pkt: &ReqPkt, aeth_syndrome: u8) -> Option<Ack> {
    if t != QpType::Rc {
        return None;
    }
    let ack = |opcode, syn| {
        Some(Ack {
            opcode,
            syn,
            psn: pkt.psn,
        })
    };
    if aeth_syndrome != syndrome::ACK_UNLIMITED {
        ack(code::RC_ACKNOWLEDGE, aeth_syndrome)
    } else if pkt.mask.intersects(Mask::ATOMIC) {
        ack(code::RC_ATOMIC_ACKNOWLEDGE, syndrome::ACK_UNLIMITED)
    } else if pkt.mask.intersects(Mask::FLUSH.or(Mask::ATOMIC_WRITE)) {
        ack(code::RC_RDMA_READ_RESPONSE_ONLY, syndrome::ACK_UNLIMITED)
    } else if pkt.ack_req {
        ack(code::RC_ACKNOWLEDGE, syndrome::ACK_UNLIMITED)
    } else {
        None
    }
}

/// The RNR NAK syndrome for the QP's `min_rnr_timer`.
pub(crate) fn rnr_nak_syndrome(min_rnr_timer: u8) -> u8 {
    syndrome::RNR_NAK | (min_rnr_timer & syndrome::VALUE_MASK)
}

/// What an error state does (the `RESPST_ERR_*` cases of `rxe_receiver`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ErrAction {
    /// Send an ACKNOWLEDGE with this syndrome now, at the expected PSN
    /// (`true`) or at the request's (`false`).
    pub(crate) nak_now: Option<(u8, bool)>,
    /// Set the syndrome of the acknowledgement the run sends.
    pub(crate) aeth_syndrome: Option<u8>,
    /// The receive completion's status.
    pub(crate) status: Option<WcStatus>,
    /// Move the QP to ERR at the end of the run.
    pub(crate) goto_error: bool,
    /// Drop the rest of the message (UC/UD).
    pub(crate) drop_msg: bool,
    /// Raise the QP's access error event.
    pub(crate) access_event: bool,
    /// Reset the receive WQE to its start (UC class D1).
    pub(crate) reset_wqe: bool,
    /// A port counter to count.
    pub(crate) count: Option<usize>,
    /// The next state.
    pub(crate) next: RespState,
}

impl ErrAction {
    fn to(next: RespState) -> Self {
        Self {
            nak_now: None,
            aeth_syndrome: None,
            status: None,
            goto_error: false,
            drop_msg: false,
            access_event: false,
            reset_wqe: false,
            count: None,
            next,
        }
    }

    /// Class A or C: NAK with `syn`, complete with `status`, then ERR.
    fn class_ac(syn: u8, status: WcStatus) -> Self {
        Self {
            aeth_syndrome: Some(syn),
            status: Some(status),
            goto_error: true,
            ..Self::to(RespState::Complete)
        }
    }
}

/// The action of error state `err` on a QP of type `t`. `has_srq`: the QP
/// takes its receives from an SRQ; `has_wqe`: it holds a receive WQE;
/// `min_rnr_timer`: its RNR NAK timer code. `None` for a state that is not
/// an error.
pub(crate) fn error_action(
    err: RespState,
    t: QpType,
    has_srq: bool,
    has_wqe: bool,
    min_rnr_timer: u8,
) -> Option<ErrAction> {
    use RespState::*;
    let rc = t == QpType::Rc;
    Some(match err {
        // RC only, class B: NAK and drop.
        ErrPsnOutOfSeq => ErrAction {
            nak_now: Some((syndrome::NAK_PSN_SEQ_ERROR, true)),
            ..ErrAction::to(Cleanup)
        },
        // RC only, class C.
        ErrTooManyRdmaAtmReq
        | ErrMissingOpcodeFirst
        | ErrMissingOpcodeLastC
        | ErrUnsupportedOpcode
        | ErrMisalignedAtomic => {
            ErrAction::class_ac(syndrome::NAK_INVALID_REQ, WcStatus::RemInvReq)
        }
        ErrMissingOpcodeLastD1e => {
            if has_srq {
                // Class E.
                ErrAction {
                    drop_msg: true,
                    status: has_wqe.then_some(WcStatus::RemInvReq),
                    ..ErrAction::to(if has_wqe { Complete } else { Cleanup })
                }
            } else {
                // Class D1: the new message may be valid; the old one
                // is dropped and its WQE reused from its start.
                ErrAction {
                    reset_wqe: has_wqe,
                    ..ErrAction::to(Cleanup)
                }
            }
        }
        ErrRnr => {
            if rc {
                ErrAction {
                    nak_now: Some((rnr_nak_syndrome(min_rnr_timer), false)),
                    count: Some(crate::params::CNT_SND_RNR),
                    ..ErrAction::to(Cleanup)
                }
            } else {
                ErrAction {
                    drop_msg: true,
                    ..ErrAction::to(Cleanup)
                }
            }
        }
        ErrRkeyViolationEvent => ErrAction {
            access_event: rc,
            ..ErrAction::to(ErrRkeyViolation)
        },
        ErrRkeyViolation => {
            if rc {
                ErrAction::class_ac(syndrome::NAK_REM_ACC_ERR, WcStatus::RemAccess)
            } else if has_srq {
                ErrAction {
                    drop_msg: true,
                    status: Some(WcStatus::RemAccess),
                    ..ErrAction::to(Complete)
                }
            } else {
                ErrAction {
                    drop_msg: true,
                    ..ErrAction::to(Cleanup)
                }
            }
        }
        // RC, class J.
        ErrInvalidateRkey => ErrAction {
            status: Some(WcStatus::RemInvReq),
            goto_error: true,
            ..ErrAction::to(Complete)
        },
        ErrLength => {
            if rc {
                ErrAction::class_ac(syndrome::NAK_INVALID_REQ, WcStatus::RemInvReq)
            } else if has_srq {
                ErrAction {
                    status: Some(WcStatus::RemInvReq),
                    ..ErrAction::to(Complete)
                }
            } else {
                ErrAction {
                    drop_msg: true,
                    ..ErrAction::to(Cleanup)
                }
            }
        }
        // All, class A.
        ErrMalformedWqe => ErrAction::class_ac(syndrome::NAK_REM_OP_ERR, WcStatus::LocQpOp),
        // All, class G.
        ErrCqOverflow => ErrAction::to(Error),
        _ => return None,
    })
}

/// Applies an [`ErrAction`] to the responder's state (what is not I/O).
pub(crate) fn apply_error(a: &ErrAction, resp: &mut RespInfo) {
    if let Some(s) = a.aeth_syndrome {
        resp.aeth_syndrome = s;
    }
    if let Some(s) = a.status {
        resp.status = s;
    }
    if a.goto_error {
        resp.goto_error = true;
    }
    if a.drop_msg {
        resp.drop_msg = true;
    }
    if a.reset_wqe {
        resp.opcode = None;
    }
}

/// What a responder resource replays (`struct resp_res`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum ResKind {
    /// Free.
    #[default]
    Free,
    /// An RDMA read.
    Read,
    /// An atomic, with the value it found.
    Atomic,
    /// An atomic write.
    AtomicWrite,
    /// A flush.
    Flush,
}

/// Where a read's responses are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum ReadState {
    /// Later responses of a read in progress.
    #[default]
    Next,
    /// The first response is due.
    New,
    /// A duplicate read restarts from a later response.
    Replay,
}

/// A responder resource: what a read, atomic or flush needs to be
/// answered again when its request is repeated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ReplayRes {
    /// What it holds.
    pub(crate) kind: ResKind,
    /// It answers a duplicate request.
    pub(crate) replay: bool,
    /// The request's first PSN.
    pub(crate) first_psn: u32,
    /// Its last (a read's last response's).
    pub(crate) last_psn: u32,
    /// The PSN of the next response.
    pub(crate) cur_psn: u32,
    /// A read's response state.
    pub(crate) state: ReadState,
    /// A read's original remote address.
    pub(crate) va_org: u64,
    /// A read's rkey.
    pub(crate) rkey: u32,
    /// A read's or flush's length.
    pub(crate) length: u32,
    /// A read's next remote address.
    pub(crate) va: u64,
    /// A read's bytes left.
    pub(crate) resid: u32,
    /// An atomic's original value.
    pub(crate) orig_val: u64,
    /// A flush's placement type.
    pub(crate) flush_type: u8,
    /// A flush's selectivity level.
    pub(crate) flush_level: u8,
}

impl ReplayRes {
    /// A read of `length` bytes at `va` with key `rkey`, requested at PSN
    /// `psn`: it answers with one response per `mtu` bytes.
    pub(crate) fn read(psn: u32, va: u64, rkey: u32, length: u32, mtu: u32) -> Self {
        let pkts = crate::req_plan::num_packets(length, mtu);
        Self {
            kind: ResKind::Read,
            first_psn: psn,
            cur_psn: psn,
            last_psn: psn_add(psn, pkts - 1),
            state: ReadState::New,
            va_org: va,
            va,
            rkey,
            length,
            resid: length,
            ..Self::default()
        }
    }

    /// An atomic (or atomic write, `kind`) at PSN `psn`.
    pub(crate) fn single(kind: ResKind, psn: u32) -> Self {
        Self {
            kind,
            first_psn: psn,
            last_psn: psn,
            cur_psn: psn,
            ..Self::default()
        }
    }
}

/// The ring of responder resources, `max_dest_rd_atomic` of them: the
/// oldest is reused first.
pub(crate) struct Resources<'a> {
    slots: &'a mut [ReplayRes],
    head: &'a mut usize,
}

impl<'a> Resources<'a> {
    /// The ring over `slots`, next to use at `head`.
    pub(crate) fn new(slots: &'a mut [ReplayRes], head: &'a mut usize) -> Self {
        Self { slots, head }
    }

    /// Stores `res` in the oldest slot (`rxe_prepare_res`); its index, or
    /// `None` with no slot at all.
    pub(crate) fn prepare(&mut self, res: ReplayRes) -> Option<usize> {
        let n = self.slots.len();
        if n == 0 {
            return None;
        }
        let i = *self.head % n;
        self.slots[i] = res;
        *self.head = (i + 1) % n;
        Some(i)
    }

    /// The resource whose PSNs hold `psn` (`find_resource`).
    pub(crate) fn find(&self, psn: u32) -> Option<usize> {
        self.slots
            .iter()
            .position(|r| r.kind != ResKind::Free && psn_in_range(psn, r.first_psn, r.last_psn))
    }

    /// Slot `i`.
    pub(crate) fn get(&mut self, i: usize) -> Option<&mut ReplayRes> {
        self.slots.get_mut(i)
    }

    /// Frees every slot (the QP is reset).
    pub(crate) fn clear(&mut self) {
        self.slots.fill(ReplayRes::default());
        *self.head = 0;
    }
}

/// How a duplicate request is answered (`duplicate_request`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Duplicate {
    /// A send or write: ACK again the last PSN acknowledged (C9-105).
    AckAgain(u32),
    /// Unknown, or not a subset of the original: drop (class D).
    Drop,
    /// Replay a read from resource `res` (its state set for it).
    Read(usize),
    /// Answer an atomic again from resource `res`.
    Atomic(usize),
    /// Answer an atomic write again.
    AtomicWrite(usize),
    /// Answer a flush again.
    Flush(usize),
}

/// Decides a duplicate request's answer and readies its resource.
pub(crate) fn duplicate(pkt: &ReqPkt, res: &mut Resources<'_>, ack_psn: u32) -> Duplicate {
    let m = pkt.mask;
    if m.intersects(Mask::SEND.or(Mask::WRITE)) {
        return Duplicate::AckAgain(psn_sub(ack_psn, 1));
    }
    let Some(i) = res.find(pkt.psn) else {
        return Duplicate::Drop;
    };
    let Some(r) = res.get(i) else {
        return Duplicate::Drop;
    };
    if m.intersects(Mask::READ) {
        let Some(reth) = pkt.reth else {
            return Duplicate::Drop;
        };
        // The repeated read must ask for the original or a part of it.
        // An empty read names no key (C9-88; its resource keeps 0): the C
        // driver compares anyway and so drops every retry of an empty read
        // whose response was lost.
        let end = u128::from(reth.va) + u128::from(reth.len);
        let org_end = u128::from(r.va_org) + u128::from(r.length);
        let key_differs = reth.len != 0 && reth.rkey != r.rkey;
        if reth.va < r.va_org || reth.len > r.length || end > org_end || key_differs {
            return Duplicate::Drop;
        }
        r.cur_psn = pkt.psn;
        r.state = if pkt.psn == r.first_psn {
            ReadState::New
        } else {
            ReadState::Replay
        };
        r.replay = true;
        r.va_org = reth.va;
        r.va = reth.va;
        r.resid = reth.len;
        return Duplicate::Read(i);
    }
    r.replay = true;
    r.cur_psn = pkt.psn;
    if m.intersects(Mask::FLUSH) {
        Duplicate::Flush(i)
    } else if m.intersects(Mask::ATOMIC) {
        Duplicate::Atomic(i)
    } else {
        Duplicate::AtomicWrite(i)
    }
}

/// One read response to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReadResp {
    /// Its opcode.
    pub(crate) opcode: u8,
    /// Its payload bytes.
    pub(crate) payload: u32,
    /// Its PSN.
    pub(crate) psn: u32,
}

/// The next response of the read in `r` (`read_reply`): FIRST or ONLY when
/// it starts (or restarts), MIDDLE or LAST after.
pub(crate) fn read_response(r: &ReplayRes, mtu: u32) -> ReadResp {
    use code::*;
    let opcode = match (r.state, r.resid <= mtu) {
        (ReadState::New, true) => RC_RDMA_READ_RESPONSE_ONLY,
        (ReadState::New, false) => RC_RDMA_READ_RESPONSE_FIRST,
        (_, false) => RC_RDMA_READ_RESPONSE_MIDDLE,
        (_, true) => RC_RDMA_READ_RESPONSE_LAST,
    };
    ReadResp {
        opcode,
        payload: r.resid.min(mtu),
        psn: r.cur_psn,
    }
}

/// Records a sent read response; whether the read is finished. Finished,
/// it moves the expected PSN past it (a replay leaves the message opcode).
pub(crate) fn read_response_sent(r: &mut ReplayRes, sent: &ReadResp, resp: &mut RespInfo) -> bool {
    r.state = ReadState::Next;
    r.va = r.va.wrapping_add(u64::from(sent.payload));
    r.resid -= sent.payload.min(r.resid);
    r.cur_psn = psn_add(r.cur_psn, 1);
    if r.resid > 0 {
        return false;
    }
    if !r.replay {
        resp.opcode = None;
    }
    if psn_diff(r.cur_psn, resp.psn) >= 0 {
        resp.psn = r.cur_psn;
    }
    true
}

/// `enum ib_wc_opcode` `IB_WC_RECV`.
pub(crate) const WC_RECV: u32 = 1 << 7;
/// `IB_WC_RECV_RDMA_WITH_IMM`.
pub(crate) const WC_RECV_RDMA_WITH_IMM: u32 = WC_RECV + 1;

/// The receive completion's opcode and byte count: a write with immediate
/// reports the write's length, a send what its WQE received.
pub(crate) fn recv_wc(mask: Mask, write_len: u32, wqe_len: u32, wqe_resid: u32) -> (u32, u32) {
    if mask.contains(Mask::IMMDT.or(Mask::WRITE)) {
        (WC_RECV_RDMA_WITH_IMM, write_len)
    } else {
        (WC_RECV, wqe_len.saturating_sub(wqe_resid))
    }
}

/// Where an RDMA request's remote buffer is (`qp->resp.va`, `offset`,
/// `rkey`, `resid`, `length`): set by its first packet, advanced by each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RdmaCtx {
    /// The remote address the next byte goes to (without the offset).
    pub(crate) va: u64,
    /// Added to `va` (a zero-based memory window's address).
    pub(crate) offset: u64,
    /// The key the request named (0 for an empty read or write).
    pub(crate) rkey: u32,
    /// Bytes left.
    pub(crate) resid: u32,
    /// Bytes in all.
    pub(crate) length: u32,
}

impl RdmaCtx {
    /// The context a RETH starts (`qp_resp_from_reth`).
    pub(crate) fn from_reth(mask: Mask, reth: &Reth) -> Self {
        Self {
            va: reth.va,
            offset: 0,
            rkey: reth_rkey(mask, reth),
            resid: reth.len,
            length: reth.len,
        }
    }

    /// The context an AtomicETH starts (`qp_resp_from_atmeth`); the length
    /// stays the previous request's, as in the C driver.
    pub(crate) fn with_atmeth(&self, a: &Atmeth) -> Self {
        Self {
            va: a.va,
            offset: 0,
            rkey: a.rkey,
            resid: 8,
            length: self.length,
        }
    }

    /// The address the next byte goes to.
    pub(crate) fn iova(&self) -> u64 {
        self.va.wrapping_add(self.offset)
    }
}

/// The QP's attributes the responder reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RespCfg {
    /// The QP type.
    pub(crate) t: QpType,
    /// The path MTU in bytes.
    pub(crate) mtu: u32,
    /// `qp_access_flags`.
    pub(crate) access: u32,
    /// `max_dest_rd_atomic`.
    pub(crate) max_dest_rd_atomic: u32,
    /// The QP takes its receives from an SRQ.
    pub(crate) has_srq: bool,
    /// `min_rnr_timer`.
    pub(crate) min_rnr_timer: u8,
}

/// What the responder does to the QP.
pub(crate) trait RespEnv {
    /// The request at the head of the QP's request queue, left there.
    fn peek_req(&mut self) -> Option<ReqPkt>;
    /// Whether a request is at the head of the QP's request queue, left
    /// there and not read: a read in progress sends its next response
    /// from its resource alone.
    fn has_req(&mut self) -> bool;
    /// Takes a receive WQE (the RQ's head, or one popped from the SRQ with
    /// its limit event); `Err` with [`RespState::ErrRnr`] when there is
    /// none, [`RespState::ErrMalformedWqe`] when it has too many entries.
    fn take_recv_wqe(&mut self) -> Result<(), RespState>;
    /// Whether a receive WQE is held.
    fn has_recv_wqe(&self) -> bool;
    /// Bytes the held receive WQE's buffers take (0 without one).
    fn recv_len(&self) -> u32;
    /// Resolves `rkey` for `access` over `len` bytes at `iova` (the whole
    /// region for a `whole_mr` flush), holding the memory for the request;
    /// the offset a zero-based window adds, or `Err` for a violation.
    fn resolve_rkey(
        &mut self,
        rkey: u32,
        access: u32,
        iova: u64,
        len: u32,
        whole_mr: bool,
    ) -> Result<u64, ()>;
    /// Releases the memory a request held.
    fn drop_mr(&mut self);
    /// Copies a send's payload (after the network header on UD) into the
    /// receive WQE: `Err` with [`RespState::ErrLength`] or
    /// [`RespState::ErrMalformedWqe`].
    fn recv_data(&mut self) -> Result<(), RespState>;
    /// Copies a write's payload to `iova` of the held memory.
    fn write_data(&mut self, iova: u64) -> Result<(), ()>;
    /// Invalidates `rkey` (send with invalidate); `Err` if it cannot be.
    fn invalidate(&mut self, rkey: u32) -> Result<(), ()>;
    /// Re-resolves a read's `rkey` for its later responses and replays;
    /// `Err` if the memory went away.
    fn recheck_mr(&mut self, rkey: u32) -> Result<(), ()>;
    /// Sends read response `rr` with its payload from `iova`; `Err` with
    /// [`RespState::ErrRnr`] (no packet) or
    /// [`RespState::ErrRkeyViolation`] (copy).
    fn send_read_response(&mut self, rr: &ReadResp, iova: u64, msn: u32) -> Result<(), RespState>;
    /// Does the current atomic at `iova`; the original value, or `Err`
    /// with the state the failure goes to.
    fn atomic(&mut self, iova: u64) -> Result<u64, RespState>;
    /// Does the current atomic write at `iova`.
    fn atomic_write(&mut self, iova: u64) -> Result<(), RespState>;
    /// Makes `len` bytes at `iova` (the held region for `whole_mr`)
    /// persistent or visible as `flush_type` asks.
    fn flush(&mut self, iova: u64, len: u32, flush_type: u8, whole_mr: bool) -> Result<(), ()>;
    /// Posts the receive completion with `status` and releases the
    /// receive WQE (nothing without one); `Err` when the completion queue
    /// overflowed. `write_len` is the length of the RDMA write the request
    /// belongs to (`qp->resp.length`), a write with immediate's byte count.
    fn complete(&mut self, status: WcStatus, write_len: u32) -> Result<(), ()>;
    /// Whether the QP moved to the error state meanwhile.
    fn in_error(&self) -> bool;
    /// Sends an acknowledgement with the MSN `msn`; `orig` is an atomic
    /// ACK's original value.
    fn send_ack(&mut self, ack: &Ack, msn: u32, orig: u64);
    /// Sets the receive WQE back to its start (UC class D1).
    fn reset_recv_wqe(&mut self);
    /// Raises the QP's access error event.
    fn access_error_event(&mut self);
    /// Drops the request at the head of the queue (and the memory held).
    fn release_req(&mut self);
    /// Counts an event in port counter `index`.
    fn count(&mut self, index: usize);
    /// Moves the QP to the error state.
    fn qp_error(&mut self);
}

/// The responder's state for a run: its counters, the RDMA context and
/// the resources.
pub(crate) struct Responder<'a> {
    /// Its counters.
    pub(crate) info: &'a mut RespInfo,
    /// The current RDMA request's buffer.
    pub(crate) ctx: &'a mut RdmaCtx,
    /// The read/atomic replay resources.
    pub(crate) res: Resources<'a>,
}

/// One responder run (`rxe_receiver` after its QP state checks, which
/// flush in ERR and RESET): answers at most one request packet (or one
/// read response) and returns whether to run again.
pub(crate) fn run<E: RespEnv>(env: &mut E, cfg: &RespCfg, r: &mut Responder<'_>) -> bool {
    r.info.aeth_syndrome = syndrome::ACK_UNLIMITED;
    let mut pkt: Option<ReqPkt> = None;
    // A request is at the head of the queue (`pkt` is its reading, but
    // for a read in progress, which is not read again).
    let mut have_req = false;
    let mut state = RespState::GetReq;
    // Every path through the states is finite; the bound only guards a
    // mistake from looping in softirq-free but still shared context.
    for _ in 0..64 {
        // Matched on the state alone: the request is borrowed, not copied
        // into a tuple at every state.
        state = match state {
            // A read in progress goes on while its request is queued
            // (C's `get_req`), without parsing it again for every response.
            RespState::GetReq if r.info.res.is_some() => {
                have_req = env.has_req();
                if have_req {
                    RespState::ReadReply
                } else {
                    RespState::Exit
                }
            }
            RespState::GetReq => match env.peek_req() {
                None => RespState::Exit,
                Some(p) => {
                    pkt = Some(p);
                    have_req = true;
                    RespState::ChkPsn
                }
            },
            RespState::Done | RespState::Exit => {
                if r.info.goto_error {
                    RespState::Error
                } else {
                    return state == RespState::Done;
                }
            }
            RespState::Error => {
                r.info.goto_error = false;
                env.qp_error();
                return false;
            }
            RespState::Cleanup => {
                if have_req {
                    env.release_req();
                } else {
                    env.drop_mr();
                }
                RespState::Done
            }
            // A read in progress: its request was not read again.
            RespState::ReadReply if pkt.is_none() => read_reply(env, cfg, r, None),
            s => {
                // A read in progress reads its request only when a state
                // needs it: an error's NAK, its counters.
                if pkt.is_none() && have_req {
                    pkt = env.peek_req();
                }
                match &pkt {
                    Some(p) => step(env, cfg, r, s, p),
                    // Every other state has a packet.
                    None => RespState::Exit,
                }
            }
        };
    }
    r.info.goto_error = false;
    env.qp_error();
    false
}

/// One state with a request at hand.
fn step<E: RespEnv>(
    env: &mut E,
    cfg: &RespCfg,
    r: &mut Responder<'_>,
    state: RespState,
    p: &ReqPkt,
) -> RespState {
    use RespState::*;
    let t = cfg.t;
    match state {
        ChkPsn => {
            let (next, count) = check_psn(t, p, r.info);
            if let Some(c) = count {
                env.count(c);
            }
            next
        }
        ChkOpSeq => check_op_seq(t, p.opcode, r.info),
        ChkOpValid => check_op_valid(t, p, cfg.access, r.info),
        ChkResource => match check_resource(p.mask, cfg.max_dest_rd_atomic) {
            Resource::None => ChkLength,
            Resource::TooMany => ErrTooManyRdmaAtmReq,
            Resource::RecvWqe => match env.take_recv_wqe() {
                Ok(()) => ChkLength,
                Err(s) => s,
            },
        },
        ChkLength => check_length(t, p, cfg.mtu, env.recv_len()),
        ChkRkey => chk_rkey(env, cfg, r, p),
        Execute => execute(env, cfg, r, p),
        ReadReply => read_reply(env, cfg, r, Some(p.psn)),
        AtomicReply | AtomicWriteReply => {
            let idx = match r.info.res {
                Some(i) => i,
                None => {
                    let kind = if state == AtomicReply {
                        ResKind::Atomic
                    } else {
                        ResKind::AtomicWrite
                    };
                    match r.res.prepare(ReplayRes::single(kind, p.psn)) {
                        Some(i) => i,
                        None => return ErrTooManyRdmaAtmReq,
                    }
                }
            };
            r.info.res = Some(idx);
            let replay = r.res.get(idx).is_some_and(|x| x.replay);
            if !replay {
                let iova = r.ctx.iova();
                if state == AtomicReply {
                    match env.atomic(iova) {
                        Ok(orig) => {
                            if let Some(x) = r.res.get(idx) {
                                x.orig_val = orig;
                            }
                        }
                        Err(s) => return s,
                    }
                } else {
                    if let Err(s) = env.atomic_write(iova) {
                        return s;
                    }
                    r.ctx.resid = 0;
                }
                executed(p, r.info);
            }
            Acknowledge
        }
        ProcessFlush => {
            let idx = match r.info.res {
                Some(i) => i,
                None => {
                    let res = ReplayRes {
                        kind: ResKind::Flush,
                        va: r.ctx.iova(),
                        length: r.ctx.length,
                        flush_type: p.flush_type,
                        flush_level: p.flush_level,
                        ..ReplayRes::single(ResKind::Flush, p.psn)
                    };
                    match r.res.prepare(res) {
                        Some(i) => i,
                        None => return ErrTooManyRdmaAtmReq,
                    }
                }
            };
            r.info.res = Some(idx);
            let Some(x) = r.res.get(idx).copied() else {
                return ErrTooManyRdmaAtmReq;
            };
            if x.replay {
                return Acknowledge;
            }
            let whole = x.flush_level == FLUSH_MR;
            if env.flush(x.va, x.length, x.flush_type, whole).is_err() {
                return rkey_violation(p.mask);
            }
            executed(p, r.info);
            Acknowledge
        }
        Complete => {
            // Whether the QP was in error before the completion, not after:
            // a consumer woken by the completion may move the QP to ERR at
            // once (librdmacm's rdma_disconnect() does), and the request it
            // saw completed must still be acknowledged, or the requester
            // retransmits to a QP that drops everything, for ever with
            // retry_cnt 7. C's do_complete() checks after, and has that
            // window: its responder, like this one, runs in a workqueue
            // the woken consumer can preempt or overtake.
            let was_in_error = env.in_error();
            if env.complete(r.info.status, r.ctx.length).is_err() {
                return ErrCqOverflow;
            }
            if was_in_error {
                // Completed once; the rest is flushed at the next run.
                Cleanup
            } else if t == QpType::Rc {
                Acknowledge
            } else {
                Cleanup
            }
        }
        Acknowledge => {
            if let Some(ack) = acknowledge(t, p, r.info.aeth_syndrome) {
                let orig = r
                    .info
                    .res
                    .and_then(|i| r.res.get(i).map(|x| x.orig_val))
                    .unwrap_or(0);
                env.send_ack(&ack, r.info.msn, orig);
                // An atomic's or flush's answer ends its resource's use.
                if ack.opcode != code::RC_ACKNOWLEDGE {
                    r.info.res = None;
                }
            }
            Cleanup
        }
        DuplicateRequest => match duplicate(p, &mut r.res, r.info.ack_psn) {
            Duplicate::AckAgain(psn) => {
                let ack = Ack {
                    opcode: code::RC_ACKNOWLEDGE,
                    syn: syndrome::ACK_UNLIMITED,
                    psn,
                };
                env.send_ack(&ack, r.info.msn, 0);
                Cleanup
            }
            Duplicate::Drop => Cleanup,
            Duplicate::Read(i) => {
                r.info.res = Some(i);
                ReadReply
            }
            Duplicate::Atomic(i) => {
                r.info.res = Some(i);
                AtomicReply
            }
            Duplicate::AtomicWrite(i) => {
                r.info.res = Some(i);
                AtomicWriteReply
            }
            Duplicate::Flush(i) => {
                r.info.res = Some(i);
                ProcessFlush
            }
        },
        err => {
            let Some(a) = error_action(err, t, cfg.has_srq, env.has_recv_wqe(), cfg.min_rnr_timer)
            else {
                return Exit;
            };
            apply_error(&a, r.info);
            if let Some(c) = a.count {
                env.count(c);
            }
            if let Some((syn, at_expected)) = a.nak_now {
                let psn = if at_expected { r.info.psn } else { p.psn };
                let ack = Ack {
                    opcode: code::RC_ACKNOWLEDGE,
                    syn,
                    psn,
                };
                env.send_ack(&ack, r.info.msn, 0);
            }
            if a.access_event {
                env.access_error_event();
            }
            if a.reset_wqe {
                env.reset_recv_wqe();
                env.drop_mr();
            }
            a.next
        }
    }
}

/// `check_rkey`: the request's buffer and key, resolved.
fn chk_rkey<E: RespEnv>(
    env: &mut E,
    cfg: &RespCfg,
    r: &mut Responder<'_>,
    p: &ReqPkt,
) -> RespState {
    let m = p.mask;
    if m.intersects(Mask::READ_OR_WRITE.or(Mask::ATOMIC_WRITE).or(Mask::FLUSH)) {
        if let Some(reth) = &p.reth {
            *r.ctx = RdmaCtx::from_reth(m, reth);
        }
    } else if m.intersects(Mask::ATOMIC) {
        if let Some(a) = &p.atmeth {
            *r.ctx = r.ctx.with_atmeth(a);
        }
    }
    if rkey_skipped(p) {
        return RespState::Execute;
    }
    let whole = m.intersects(Mask::FLUSH) && p.flush_level == FLUSH_MR;
    let access = rkey_access(m, p.flush_type);
    match env.resolve_rkey(r.ctx.rkey, access, r.ctx.iova(), r.ctx.resid, whole) {
        Ok(offset) => r.ctx.offset = offset,
        Err(()) => return rkey_violation(m),
    }
    if let Err(s) = check_rdma_payload(p, r.ctx.resid, cfg.mtu) {
        env.drop_mr();
        return s;
    }
    RespState::Execute
}

/// `execute`: a new request's effect.
fn execute<E: RespEnv>(env: &mut E, cfg: &RespCfg, r: &mut Responder<'_>, p: &ReqPkt) -> RespState {
    let m = p.mask;
    if m.intersects(Mask::SEND) {
        if let Err(s) = env.recv_data() {
            return s;
        }
    } else if m.intersects(Mask::WRITE) {
        // An empty write names no memory (C9-88).
        if p.payload > 0 && env.write_data(r.ctx.iova()).is_err() {
            return rkey_violation(m);
        }
        r.ctx.va = r.ctx.va.wrapping_add(u64::from(p.payload));
        r.ctx.resid = r.ctx.resid.saturating_sub(p.payload);
    } else if m.intersects(Mask::READ) {
        // The MSN counts a read when it is accepted (C9-148).
        r.info.msn = psn_add(r.info.msn, 1);
        return RespState::ReadReply;
    } else if m.intersects(Mask::ATOMIC) {
        return RespState::AtomicReply;
    } else if m.intersects(Mask::ATOMIC_WRITE) {
        return RespState::AtomicWriteReply;
    } else if m.intersects(Mask::FLUSH) {
        return RespState::ProcessFlush;
    }
    if m.intersects(Mask::IETH) {
        if let Some(rkey) = p.inv_rkey {
            if env.invalidate(rkey).is_err() {
                return RespState::ErrInvalidateRkey;
            }
        }
    }
    executed(p, r.info);
    after_execute(cfg.t, m)
}

/// `read_reply`: the next response of a read (new, continued or replayed).
/// `req_psn` is the PSN of the request at hand, which a read that has no
/// resource yet starts from; a read in progress needs none.
fn read_reply<E: RespEnv>(
    env: &mut E,
    cfg: &RespCfg,
    r: &mut Responder<'_>,
    req_psn: Option<u32>,
) -> RespState {
    let idx = match (r.info.res, req_psn) {
        (Some(i), _) => i,
        (None, Some(psn)) => {
            let res = ReplayRes::read(psn, r.ctx.iova(), r.ctx.rkey, r.ctx.resid, cfg.mtu);
            match r.res.prepare(res) {
                Some(i) => i,
                None => return RespState::ErrTooManyRdmaAtmReq,
            }
        }
        // Only a read in progress comes here without its request read.
        (None, None) => return RespState::Exit,
    };
    r.info.res = Some(idx);
    let Some(x) = r.res.get(idx).copied() else {
        return RespState::ErrTooManyRdmaAtmReq;
    };
    // The first response of a new read uses the memory its rkey check
    // holds (none for an empty read); every other looks the key up again,
    // as the memory may have gone since.
    let fresh = x.state == ReadState::New && (!x.replay || r.ctx.length == 0);
    if !fresh && env.recheck_mr(x.rkey).is_err() {
        return RespState::ErrRkeyViolation;
    }
    let rr = read_response(&x, cfg.mtu);
    if let Err(s) = env.send_read_response(&rr, x.va, r.info.msn) {
        return s;
    }
    let Some(x) = r.res.get(idx) else {
        return RespState::ErrTooManyRdmaAtmReq;
    };
    if read_response_sent(x, &rr, r.info) {
        r.info.res = None;
        RespState::Cleanup
    } else {
        env.drop_mr();
        RespState::Done
    }
}

impl ReqPkt {
    /// The request `p` as the responder reads it.
    pub(crate) fn from_packet(p: &crate::wire::packet::Packet<'_>) -> Self {
        let payload = p.payload().len();
        let feth = p.feth();
        Self {
            psn: p.psn(),
            opcode: p.opcode(),
            mask: p.mask(),
            // A packet is at most 64 KiB.
            payload: u32::try_from(payload).unwrap_or(u32::MAX),
            pad: p.bth().pad,
            ack_req: p.bth().ack_req,
            reth: p.reth(),
            atmeth: p.atmeth(),
            flush_type: feth.map_or(0, |f| f.plt),
            flush_level: feth.map_or(0, |f| f.sel),
            inv_rkey: p.ieth().map(|i| i.rkey),
        }
    }
}

/// Writes the headers of acknowledgement `ack` (`prepare_ack_packet`) to
/// the QP's destination `dest_qpn`: BTH, AETH with the MSN, and an atomic
/// ACK's original value. `pkt` is laid out for `ack.opcode` with no
/// payload.
pub(crate) fn write_ack(
    pkt: &mut crate::wire::packet::PacketMut<'_>,
    dest_qpn: u32,
    ack: &Ack,
    msn: u32,
    orig: u64,
) -> Result<(), crate::wire::packet::BuildError> {
    use crate::wire::ext::{
        Aeth,
        Atmack, //
    };
    pkt.set_bth(&crate::wire::bth::Bth::new(ack.opcode, dest_qpn, ack.psn));
    let m = pkt.layout().info().mask();
    if m.contains(Mask::AETH) {
        pkt.set(&Aeth { syn: ack.syn, msn })?;
    }
    if m.contains(Mask::ATMACK) {
        pkt.set(&Atmack { orig })?;
    }
    Ok(())
}

/// Writes the headers of read response `rr` (its AETH, when it has one,
/// says ACK with the MSN); the caller copies the payload.
pub(crate) fn write_read_response(
    pkt: &mut crate::wire::packet::PacketMut<'_>,
    dest_qpn: u32,
    rr: &ReadResp,
    msn: u32,
) -> Result<(), crate::wire::packet::BuildError> {
    let ack = Ack {
        opcode: rr.opcode,
        syn: syndrome::ACK_UNLIMITED,
        psn: rr.psn,
    };
    write_ack(pkt, dest_qpn, &ack, msn, 0)
}
