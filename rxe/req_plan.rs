// SPDX-License-Identifier: GPL-2.0

//! The requester's decisions (the C driver's `rxe_req.c`), with no kernel
//! dependency: which opcode the next packet of a send WQE carries, how much
//! payload, which PSNs it consumes, whether it asks for an ACK, when the
//! requester must wait (window, fence, read/atomic credits), how a WQE's
//! state moves, and where a retransmission restarts.
//!
//! The kernel side (`req.rs`) reads the WQE and the QP, asks these
//! functions, builds the packet and stores the answers back. Also built by
//! the host test crate (`tests/host`).

use crate::{
    params::{
        MAX_PKT_PER_ACK,
        MAX_UNACKED_PSNS, //
    },
    qp_attr::QpType,
    wire::{
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
        wr_mask,
        SEND_INLINE, //
    },
};

/// `IB_SEND_FENCE`.
pub(crate) const SEND_FENCE: u32 = 1 << 0;
/// `IB_SEND_SIGNALED`.
pub(crate) const SEND_SIGNALED: u32 = 1 << 1;
/// `IB_SEND_SOLICITED`.
pub(crate) const SEND_SOLICITED: u32 = 1 << 2;

/// Where a send WQE is in its life (`enum wqe_state`, stored in the WQE's
/// `state` word, which user space's provider also reads).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum WqeState {
    /// Posted, not started by the requester (or rewound for a retry).
    #[default]
    Posted = 0,
    /// Some of its packets are sent, not the last.
    Processing = 1,
    /// All sent; waiting for the responder's acknowledgement (RC).
    Pending = 2,
    /// Needs no acknowledgement: the completer completes it as it is.
    Done = 3,
    /// Failed at the requester: the completer completes it in error.
    Error = 4,
}

impl WqeState {
    /// The state stored as `raw`; an unknown value (a user QP's ring is
    /// writable by user space) reads as [`WqeState::Error`].
    pub(crate) fn from_raw(raw: u32) -> Self {
        match raw {
            0 => Self::Posted,
            1 => Self::Processing,
            2 => Self::Pending,
            3 => Self::Done,
            _ => Self::Error,
        }
    }

    /// The value stored in the WQE.
    pub(crate) fn as_raw(self) -> u32 {
        self as u32
    }
}

/// The requester's flags the completer and the timers also set (the
/// C driver's `struct rxe_req_info` less its position in the queue).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ReqFlags {
    /// A fenced WQE waits for earlier ones to complete.
    pub(crate) wait_fence: bool,
    /// A read/atomic waits for a credit (`max_rd_atomic`).
    pub(crate) need_rd_atomic: bool,
    /// The send window (`MAX_UNACKED_PSNS`) is full.
    pub(crate) wait_psn: bool,
    /// The completer asks for a retransmission from its PSN.
    pub(crate) need_retry: bool,
    /// An RNR NAK was received: no retry before the RNR timer fires.
    pub(crate) wait_for_rnr_timer: bool,
    /// Packets sent since the last one that asked for an ACK.
    pub(crate) noack_pkts: u32,
    /// The completer unblocked the requester: run the send task again.
    pub(crate) again: bool,
    /// The requester has itself finished or failed a WQE since the last
    /// reset (a local operation, a UC message, an error): only then can
    /// the head of the send queue be a WQE done that the completer has not
    /// seen, so only then does the send task's idle look read its state.
    /// Here, not beside the send side's other state: in a padding byte.
    pub(crate) finished_own: bool,
}

/// Bytes of payload a packet of a QP of type `t` may carry: the path MTU
/// of a connected QP, the port's MTU for datagrams (`get_mtu`).
pub(crate) fn packet_mtu(t: QpType, path_mtu: u32, port_mtu: u32) -> u32 {
    match t {
        QpType::Rc | QpType::Uc => path_mtu,
        QpType::Ud | QpType::Gsi => port_mtu,
    }
}

/// Packets a message of `len` bytes takes at `mtu` bytes each (a message
/// of no byte still takes one).
pub(crate) fn num_packets(len: u32, mtu: u32) -> u32 {
    if mtu == 0 {
        return 1;
    }
    len.div_ceil(mtu).max(1)
}

/// The opcode of the next packet of a WQE of work request opcode `wr_op`
/// with `resid` bytes still to send, after a packet of opcode `prev` (the
/// previous packet this QP sent, `None` at a message boundary or after a
/// rewind). `None` for an opcode the QP type cannot send (the C driver's
/// `-EINVAL`, completed with `IB_WC_LOC_QP_OP_ERR`).
pub(crate) fn next_opcode(
    t: QpType,
    wr_op: u32,
    prev: Option<u8>,
    resid: u32,
    mtu: u32,
) -> Option<u8> {
    use code::*;
    let fits = resid <= mtu;
    // A multi-packet message continues while the previous packet was its
    // first or a middle one.
    let seg = |first: u8, middle: u8, last: u8, only: u8| {
        let continues = prev == Some(first) || prev == Some(middle);
        Some(match (continues, fits) {
            (true, true) => last,
            (true, false) => middle,
            (false, true) => only,
            (false, false) => first,
        })
    };
    match t {
        QpType::Rc => match wr_op {
            wr::RDMA_WRITE => seg(
                RC_RDMA_WRITE_FIRST,
                RC_RDMA_WRITE_MIDDLE,
                RC_RDMA_WRITE_LAST,
                RC_RDMA_WRITE_ONLY,
            ),
            wr::RDMA_WRITE_WITH_IMM => seg(
                RC_RDMA_WRITE_FIRST,
                RC_RDMA_WRITE_MIDDLE,
                RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
                RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
            ),
            wr::SEND => seg(RC_SEND_FIRST, RC_SEND_MIDDLE, RC_SEND_LAST, RC_SEND_ONLY),
            wr::SEND_WITH_IMM => seg(
                RC_SEND_FIRST,
                RC_SEND_MIDDLE,
                RC_SEND_LAST_WITH_IMMEDIATE,
                RC_SEND_ONLY_WITH_IMMEDIATE,
            ),
            wr::SEND_WITH_INV => seg(
                RC_SEND_FIRST,
                RC_SEND_MIDDLE,
                RC_SEND_LAST_WITH_INVALIDATE,
                RC_SEND_ONLY_WITH_INVALIDATE,
            ),
            // One request, whatever the length: the responses segment.
            wr::RDMA_READ => Some(RC_RDMA_READ_REQUEST),
            wr::ATOMIC_CMP_AND_SWP => Some(RC_COMPARE_SWAP),
            wr::ATOMIC_FETCH_AND_ADD => Some(RC_FETCH_ADD),
            wr::FLUSH => Some(RC_FLUSH),
            wr::ATOMIC_WRITE => Some(RC_ATOMIC_WRITE),
            _ => None,
        },
        QpType::Uc => match wr_op {
            wr::RDMA_WRITE => seg(
                UC_RDMA_WRITE_FIRST,
                UC_RDMA_WRITE_MIDDLE,
                UC_RDMA_WRITE_LAST,
                UC_RDMA_WRITE_ONLY,
            ),
            wr::RDMA_WRITE_WITH_IMM => seg(
                UC_RDMA_WRITE_FIRST,
                UC_RDMA_WRITE_MIDDLE,
                UC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
                UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
            ),
            wr::SEND => seg(UC_SEND_FIRST, UC_SEND_MIDDLE, UC_SEND_LAST, UC_SEND_ONLY),
            wr::SEND_WITH_IMM => seg(
                UC_SEND_FIRST,
                UC_SEND_MIDDLE,
                UC_SEND_LAST_WITH_IMMEDIATE,
                UC_SEND_ONLY_WITH_IMMEDIATE,
            ),
            _ => None,
        },
        // A datagram is one packet; a longer one is never sent (see
        // [`payload_len`]).
        QpType::Ud | QpType::Gsi => match wr_op {
            wr::SEND => Some(UD_SEND_ONLY),
            wr::SEND_WITH_IMM => Some(UD_SEND_ONLY_WITH_IMMEDIATE),
            _ => None,
        },
    }
}

/// How much of the message the next packet carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Payload {
    /// This many bytes.
    Bytes(u32),
    /// A UD message longer than the MTU: no packet is sent and the WQE
    /// completes successfully (IBTA C10-93.1.1), see [`ud_skip`].
    UdTooLong,
}

/// The payload of the next packet of opcode mask `mask` with `resid` bytes
/// left and `mtu` bytes per packet: reads and atomics carry none (reads
/// ask for the whole rest in their RETH).
pub(crate) fn payload_len(t: QpType, mask: Mask, resid: u32, mtu: u32) -> Payload {
    let carries = mask.intersects(Mask::WRITE_OR_SEND.or(Mask::ATOMIC_WRITE));
    let payload = if carries { resid } else { 0 };
    if payload <= mtu {
        Payload::Bytes(payload)
    } else if t == QpType::Ud {
        // Only UD, as in the C driver: GSI segments like a connected QP
        // would not, but its MADs are never longer than the MTU.
        Payload::UdTooLong
    } else {
        Payload::Bytes(mtu)
    }
}

/// What the requester stores when it skips a too long UD WQE: it takes one
/// PSN and is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct UdSkip {
    /// The WQE's first and last PSN.
    pub(crate) psn: u32,
    /// The requester's next PSN.
    pub(crate) next_psn: u32,
    /// The requester's previous opcode.
    pub(crate) opcode: u8,
}

/// The skip of a too long UD WQE at requester PSN `req_psn`.
pub(crate) fn ud_skip(req_psn: u32) -> UdSkip {
    UdSkip {
        psn: req_psn,
        next_psn: psn_add(req_psn, 1),
        opcode: code::UD_SEND_ONLY,
    }
}

/// Whether a packet of opcode mask `mask` needs a read/atomic credit
/// (`max_rd_atomic` of them per QP).
pub(crate) fn needs_rd_atomic(mask: Mask) -> bool {
    mask.intersects(Mask::READ_OR_ATOMIC.or(Mask::ATOMIC_WRITE))
}

/// Whether the send window is full: an RC requester keeps at most
/// `MAX_UNACKED_PSNS` PSNs ahead of the completer.
pub(crate) fn window_full(t: QpType, req_psn: u32, comp_psn: u32) -> bool {
    t == QpType::Rc && psn_diff(req_psn, psn_add(comp_psn, MAX_UNACKED_PSNS)) > 0
}

/// Whether the WQE must wait (`rxe_wqe_is_fenced`): a local invalidate
/// waits for every earlier WQE (IBA 10.6.5.1, mandatory in rxe), a fenced
/// WQE for every earlier read and atomic (IBA 10.8.3.3). `at_head`: the
/// WQE is the oldest not completed; `rd_atomic_free`: credits not in use.
pub(crate) fn is_fenced(
    wr_op: u32,
    send_flags: u32,
    at_head: bool,
    rd_atomic_free: u32,
    max_rd_atomic: u32,
) -> bool {
    if wr_op == wr::LOCAL_INV {
        return !at_head;
    }
    send_flags & SEND_FENCE != 0 && rd_atomic_free != max_rd_atomic
}

/// Whether the packet asks for an acknowledgement (the BTH A bit): the
/// last packet of every RC (and GSI, as the C driver does) message, and one
/// in `MAX_PKT_PER_ACK` of a long one. Counts in `flags.noack_pkts`.
pub(crate) fn ack_req(t: QpType, is_end: bool, flags: &mut ReqFlags) -> bool {
    if matches!(t, QpType::Ud | QpType::Uc) {
        return false;
    }
    let ack = if is_end {
        true
    } else {
        let n = flags.noack_pkts;
        flags.noack_pkts = n.wrapping_add(1);
        n > MAX_PKT_PER_ACK
    };
    if ack {
        flags.noack_pkts = 0;
    }
    ack
}

/// The BTH SE bit: a solicited send, or write with immediate, sets it on
/// its last packet.
pub(crate) fn solicited(send_flags: u32, mask: Mask) -> bool {
    send_flags & SEND_SOLICITED != 0
        && mask.contains(Mask::END)
        && (mask.contains(Mask::SEND) || mask.contains(Mask::WRITE.or(Mask::IMMDT)))
}

/// The WQE's state once a packet of opcode mask `mask` is sent.
pub(crate) fn state_after_packet(t: QpType, mask: Mask) -> WqeState {
    if !mask.contains(Mask::END) {
        WqeState::Processing
    } else if t == QpType::Rc {
        WqeState::Pending
    } else {
        WqeState::Done
    }
}

/// The PSNs a sent packet took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PsnStep {
    /// For the first packet of a message: the WQE's first and last PSN.
    pub(crate) wqe_psns: Option<(u32, u32)>,
    /// The requester's next PSN.
    pub(crate) next_psn: u32,
}

/// The PSNs after sending a packet of opcode mask `mask` at PSN `req_psn`
/// (`update_wqe_psn`): `resid_before` is what the message had left before
/// the packet, `wqe_first_psn` the WQE's first PSN so far. A read request
/// takes one PSN per response packet.
pub(crate) fn psn_after_packet(
    mask: Mask,
    req_psn: u32,
    wqe_first_psn: u32,
    resid_before: u32,
    mtu: u32,
) -> PsnStep {
    let n = num_packets(resid_before, mtu);
    let (wqe_psns, first) = if mask.contains(Mask::START) {
        (Some((req_psn, psn_add(req_psn, n - 1))), req_psn)
    } else {
        (None, wqe_first_psn)
    };
    let next_psn = if mask.contains(Mask::READ) {
        psn_add(first, n)
    } else {
        psn_add(req_psn, 1)
    };
    PsnStep { wqe_psns, next_psn }
}

/// A send WQE as a retransmission rewind reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RewindWqe {
    /// Its state.
    pub(crate) state: WqeState,
    /// `enum ib_wr_opcode`.
    pub(crate) wr_op: u32,
    /// `IB_SEND_*` flags.
    pub(crate) send_flags: u32,
    /// Its [`wr_mask`] for the QP type.
    pub(crate) wr_mask: u32,
    /// Bytes in the message.
    pub(crate) length: u32,
    /// Bytes left: to send, or for a read to receive.
    pub(crate) resid: u32,
    /// Its first PSN.
    pub(crate) first_psn: u32,
}

/// Where a WQE restarts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Restart {
    /// Bytes left to send (the WQE's `dma.resid`).
    pub(crate) resid: u32,
    /// Bytes of the local data already acknowledged, where the copy
    /// restarts (`length - resid` for writes and sends; 0 for others).
    pub(crate) skip: u32,
    /// Added to the remote address the next RETH/AtomicETH carries.
    pub(crate) iova_advance: u64,
    /// The requester's previous opcode after the rewind (`Some` when the
    /// restart is in the middle of a write or send).
    pub(crate) prev_opcode: Option<u8>,
}

/// What a rewind does to one WQE of the send queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RewindStep {
    /// Not started: this and every later WQE stay as they are.
    Stop,
    /// Completed at the requester: left for the completer.
    Skip,
    /// Set back to posted, to be sent from this position.
    Restart(Restart),
}

/// The rewind of a retransmission (`req_retry`) for one WQE, walking the
/// send queue from its oldest entry with the requester set back to the
/// completer's PSN `comp_psn`. `first`: no WQE was restarted yet in this
/// walk — the first restarted resumes at the first unacknowledged PSN,
/// the others from their beginning.
pub(crate) fn rewind(t: QpType, w: &RewindWqe, first: bool, comp_psn: u32, mtu: u32) -> RewindStep {
    match w.state {
        WqeState::Posted => return RewindStep::Stop,
        WqeState::Done => return RewindStep::Skip,
        _ => {}
    }
    let from_start = Restart {
        resid: w.length,
        skip: 0,
        iova_advance: 0,
        prev_opcode: None,
    };
    if !first {
        return RewindStep::Restart(from_start);
    }
    if w.wr_mask & (wr_mask::WRITE | wr_mask::SEND) != 0 {
        // The packets from the first PSN to the completer's were acked.
        let npkts = num_packets(w.length, mtu);
        // A completer PSN before the WQE (never expected) acks nothing.
        let acked = (psn_diff(comp_psn, w.first_psn).max(0) as u32).min(npkts);
        if acked == 0 {
            return RewindStep::Restart(from_start);
        }
        let done = (u64::from(acked) * u64::from(mtu)).min(u64::from(w.length)) as u32;
        // The opcode of the last acked packet: an "only" or "first" for
        // the first one, a "middle" or "last" after it.
        let before_last = w.length - ((acked - 1) * mtu).min(w.length);
        let prev = if acked == 1 {
            None
        } else {
            next_opcode(t, w.wr_op, None, w.length, mtu)
        };
        return RewindStep::Restart(Restart {
            resid: w.length - done,
            skip: done,
            iova_advance: 0,
            prev_opcode: next_opcode(t, w.wr_op, prev, before_last, mtu),
        });
    }
    if w.wr_mask & wr_mask::READ != 0 {
        // The read resumes after the responses already received: its
        // remaining length is the completer's, its address moves by the
        // whole packets received.
        let mtu = mtu.max(1);
        let received = w.length.saturating_sub(w.resid) / mtu;
        return RewindStep::Restart(Restart {
            resid: w.resid,
            skip: w.length.saturating_sub(w.resid),
            iova_advance: u64::from(received) * u64::from(mtu),
            prev_opcode: None,
        });
    }
    RewindStep::Restart(from_start)
}

/// Whether a WQE's data is inline (copied from the WQE, not through keys).
pub(crate) fn is_inline(send_flags: u32) -> bool {
    send_flags & SEND_INLINE != 0
}

/// A send WQE as the requester reads it before its next packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SendView {
    /// `enum ib_wr_opcode`.
    pub(crate) wr_op: u32,
    /// `IB_SEND_*` flags.
    pub(crate) send_flags: u32,
    /// Its [`wr_mask`] for the QP type.
    pub(crate) wr_mask: u32,
    /// Bytes left to send.
    pub(crate) resid: u32,
    /// Its first PSN (set by its first packet).
    pub(crate) first_psn: u32,
    /// Scatter/gather entries (from the ring: user space may have written
    /// anything).
    pub(crate) num_sge: u32,
    /// The entry the data continues from.
    pub(crate) cur_sge: u32,
    /// It holds a read/atomic credit already.
    pub(crate) has_rd_atomic: bool,
}

/// What the requester's QP looks like to [`plan`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReqView {
    /// The QP type.
    pub(crate) t: QpType,
    /// Payload bytes per packet ([`packet_mtu`]).
    pub(crate) mtu: u32,
    /// The send queue's `max_sge`.
    pub(crate) max_sge: u32,
    /// The WQE is the oldest not completed.
    pub(crate) at_head: bool,
    /// Read/atomic credits not in use.
    pub(crate) rd_atomic_free: u32,
    /// `max_rd_atomic`.
    pub(crate) max_rd_atomic: u32,
    /// The requester's next PSN.
    pub(crate) psn: u32,
    /// The completer's next PSN.
    pub(crate) comp_psn: u32,
    /// The opcode of the previous packet sent, `None` at a boundary.
    pub(crate) prev_opcode: Option<u8>,
    /// Too many of the QP's packets are in flight.
    pub(crate) skb_out_high: bool,
}

/// Why the requester waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// A fence: for earlier WQEs to complete (`wait_fence`).
    Fence,
    /// The send window (`wait_psn`).
    Window,
    /// Packets in flight (`need_req_skb`).
    SkbOut,
    /// A read/atomic credit (`need_rd_atomic`).
    RdAtomic,
}

/// The next packet of a WQE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PacketPlan {
    /// Its opcode.
    pub(crate) opcode: u8,
    /// Its opcode's mask.
    pub(crate) mask: Mask,
    /// Its PSN.
    pub(crate) psn: u32,
    /// Payload bytes.
    pub(crate) payload: u32,
    /// The BTH AckReq bit.
    pub(crate) ack_req: bool,
    /// The BTH SE bit.
    pub(crate) solicited: bool,
    /// The packet took a read/atomic credit for its WQE.
    pub(crate) took_rd_atomic: bool,
}

/// The requester's decision for the WQE at its position
/// (`rxe_requester` from its checks to the packet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReqStep {
    /// Stop until woken (the matching flag is set in [`ReqFlags`]).
    Wait(Wait),
    /// A local operation: do it, then the WQE is done.
    LocalOp,
    /// The WQE fails with this status; the QP goes to ERR.
    Fail(crate::comp_check::WcStatus),
    /// A UD message longer than the MTU: done without a packet.
    UdSkip(UdSkip),
    /// Send this packet.
    Packet(PacketPlan),
}

/// Decides the next step for WQE `w` (`rxe_requester` less its QP state
/// checks and I/O). `take_rd_atomic` takes a credit if one is free (the
/// QP's atomic counter). Sets the wait flags and counts the packet towards
/// the next ACK request.
pub(crate) fn plan(
    w: &SendView,
    q: &ReqView,
    flags: &mut ReqFlags,
    take_rd_atomic: impl FnOnce() -> bool,
) -> ReqStep {
    use crate::comp_check::WcStatus;
    // A user QP's ring is user memory: bound what indexes the list.
    if w.num_sge > q.max_sge || (w.resid != 0 && w.cur_sge >= q.max_sge) {
        return ReqStep::Fail(WcStatus::LocQpOp);
    }
    if is_fenced(
        w.wr_op,
        w.send_flags,
        q.at_head,
        q.rd_atomic_free,
        q.max_rd_atomic,
    ) {
        flags.wait_fence = true;
        return ReqStep::Wait(Wait::Fence);
    }
    if w.wr_mask & wr_mask::LOCAL_OP != 0 {
        return ReqStep::LocalOp;
    }
    if window_full(q.t, q.psn, q.comp_psn) {
        flags.wait_psn = true;
        return ReqStep::Wait(Wait::Window);
    }
    if q.skb_out_high {
        return ReqStep::Wait(Wait::SkbOut);
    }
    let Some(opcode) = next_opcode(q.t, w.wr_op, q.prev_opcode, w.resid, q.mtu) else {
        return ReqStep::Fail(WcStatus::LocQpOp);
    };
    let Some(info) = crate::wire::opcode::lookup(opcode) else {
        return ReqStep::Fail(WcStatus::LocQpOp);
    };
    let mask = info.mask();
    let mut took_rd_atomic = false;
    if needs_rd_atomic(mask) && !w.has_rd_atomic {
        flags.need_rd_atomic = true;
        if !take_rd_atomic() {
            return ReqStep::Wait(Wait::RdAtomic);
        }
        flags.need_rd_atomic = false;
        took_rd_atomic = true;
    }
    let payload = match payload_len(q.t, mask, w.resid, q.mtu) {
        Payload::Bytes(n) => n,
        Payload::UdTooLong => return ReqStep::UdSkip(ud_skip(q.psn)),
    };
    ReqStep::Packet(PacketPlan {
        opcode,
        mask,
        psn: q.psn,
        payload,
        ack_req: ack_req(q.t, mask.contains(Mask::END), flags),
        solicited: solicited(w.send_flags, mask),
        took_rd_atomic,
    })
}

/// What the requester stores once a planned packet is sent
/// (`update_wqe_state`, `update_wqe_psn`, `update_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AfterSend {
    /// The WQE's new state.
    pub(crate) state: WqeState,
    /// Its first and last PSN, set by the first packet.
    pub(crate) wqe_psns: Option<(u32, u32)>,
    /// Bytes it has left to send.
    pub(crate) resid: u32,
    /// The requester's next PSN.
    pub(crate) next_psn: u32,
    /// The requester's previous opcode.
    pub(crate) prev_opcode: u8,
    /// The requester moves to the next WQE.
    pub(crate) next_wqe: bool,
}

/// The updates after sending packet `p` of WQE `w` (with `mtu` bytes per
/// packet) on a QP of type `t`.
pub(crate) fn after_send(t: QpType, w: &SendView, p: &PacketPlan, mtu: u32) -> AfterSend {
    let step = psn_after_packet(p.mask, p.psn, w.first_psn, w.resid, mtu);
    AfterSend {
        state: state_after_packet(t, p.mask),
        wqe_psns: step.wqe_psns,
        // A flush carries nothing and leaves nothing (oA19-2).
        resid: if p.mask.intersects(Mask::FLUSH) {
            0
        } else {
            w.resid - p.payload.min(w.resid)
        },
        next_psn: step.next_psn,
        prev_opcode: p.opcode,
        next_wqe: p.mask.contains(Mask::END),
    }
}

/// Byte offsets in `struct rxe_send_wqe` (uapi `rdma_user_rxe.h`) of what
/// the requester and completer read and write, in host byte order (user
/// space's provider shares the entries).
pub(crate) mod wqe_off {
    /// `wr.opcode`.
    pub(crate) const OPCODE: usize = 12;
    /// `wr.send_flags`.
    pub(crate) const SEND_FLAGS: usize = 16;
    /// `wr.wr.{rdma,atomic,flush}.remote_addr`.
    pub(crate) const REMOTE_ADDR: usize = 24;
    /// `status`.
    pub(crate) const STATUS: usize = 144;
    /// `state`.
    pub(crate) const STATE: usize = 148;
    /// `iova`.
    pub(crate) const IOVA: usize = 152;
    /// `mask`.
    pub(crate) const MASK: usize = 160;
    /// `first_psn`.
    pub(crate) const FIRST_PSN: usize = 164;
    /// `last_psn`.
    pub(crate) const LAST_PSN: usize = 168;
    /// `has_rd_atomic`.
    pub(crate) const HAS_RD_ATOMIC: usize = 180;
    /// `dma.length`.
    pub(crate) const DMA_LENGTH: usize = 184;
    /// `dma.resid`.
    pub(crate) const DMA_RESID: usize = 188;
    /// `dma.cur_sge`.
    pub(crate) const DMA_CUR_SGE: usize = 192;
    /// `dma.num_sge`.
    pub(crate) const DMA_NUM_SGE: usize = 196;
    /// `dma.sge_offset`.
    pub(crate) const DMA_SGE_OFFSET: usize = 200;
    /// Bytes of the fixed part (the entries follow).
    pub(crate) const FIXED: usize = 208;
}

/// The fixed part of a send WQE in its queue element, read and written in
/// place.
pub(crate) struct SendWqeBytes<'a> {
    /// An array, not a slice: the offsets being constants inside it, the
    /// compiler drops the bounds checks of every field's access.
    b: &'a mut [u8; wqe_off::FIXED],
}

impl<'a> SendWqeBytes<'a> {
    /// The WQE at the start of `b`, if it is long enough.
    pub(crate) fn new(b: &'a mut [u8]) -> Option<Self> {
        Some(Self {
            b: b.first_chunk_mut()?,
        })
    }

    // The fields are read and written as arrays, not with
    // `copy_from_slice` (an out-of-line call and a `memcpy` per field in
    // the kernel's `core`); the offsets are all inside the fixed part, so
    // the `None` arms are never taken.
    #[inline]
    fn u32_at(&self, off: usize) -> u32 {
        self.b
            .get(off..)
            .and_then(<[u8]>::first_chunk::<4>)
            .map_or(0, |c| u32::from_ne_bytes(*c))
    }

    #[inline]
    fn u64_at(&self, off: usize) -> u64 {
        self.b
            .get(off..)
            .and_then(<[u8]>::first_chunk::<8>)
            .map_or(0, |c| u64::from_ne_bytes(*c))
    }

    #[inline]
    fn put32(&mut self, off: usize, v: u32) {
        if let Some(c) = self.b.get_mut(off..).and_then(<[u8]>::first_chunk_mut::<4>) {
            *c = v.to_ne_bytes();
        }
    }

    #[inline]
    fn put64(&mut self, off: usize, v: u64) {
        if let Some(c) = self.b.get_mut(off..).and_then(<[u8]>::first_chunk_mut::<8>) {
            *c = v.to_ne_bytes();
        }
    }

    /// `enum ib_wr_opcode`.
    pub(crate) fn wr_op(&self) -> u32 {
        self.u32_at(wqe_off::OPCODE)
    }

    /// `IB_SEND_*` flags.
    pub(crate) fn send_flags(&self) -> u32 {
        self.u32_at(wqe_off::SEND_FLAGS)
    }

    /// Its state (unknown values read as error).
    pub(crate) fn state(&self) -> WqeState {
        WqeState::from_raw(self.u32_at(wqe_off::STATE))
    }

    /// Sets its state.
    pub(crate) fn set_state(&mut self, s: WqeState) {
        self.put32(wqe_off::STATE, s.as_raw());
    }

    /// Its completion status.
    pub(crate) fn status(&self) -> u32 {
        self.u32_at(wqe_off::STATUS)
    }

    /// Sets its completion status.
    pub(crate) fn set_status(&mut self, s: crate::comp_check::WcStatus) {
        self.put32(wqe_off::STATUS, s.as_raw());
    }

    /// Its first and last PSN.
    pub(crate) fn psns(&self) -> (u32, u32) {
        (
            self.u32_at(wqe_off::FIRST_PSN),
            self.u32_at(wqe_off::LAST_PSN),
        )
    }

    /// Sets its first and last PSN.
    pub(crate) fn set_psns(&mut self, first: u32, last: u32) {
        self.put32(wqe_off::FIRST_PSN, first);
        self.put32(wqe_off::LAST_PSN, last);
    }

    /// Whether it holds a read/atomic credit.
    pub(crate) fn has_rd_atomic(&self) -> bool {
        self.u32_at(wqe_off::HAS_RD_ATOMIC) != 0
    }

    /// Sets whether it holds a read/atomic credit.
    pub(crate) fn set_has_rd_atomic(&mut self, has: bool) {
        self.put32(wqe_off::HAS_RD_ATOMIC, u32::from(has));
    }

    /// The remote address its next RETH/AtomicETH carries.
    pub(crate) fn iova(&self) -> u64 {
        self.u64_at(wqe_off::IOVA)
    }

    /// Sets it.
    pub(crate) fn set_iova(&mut self, iova: u64) {
        self.put64(wqe_off::IOVA, iova);
    }

    /// The remote address the work request named (0 for an operation with
    /// none), where a rewind restarts from.
    pub(crate) fn remote_addr(&self, wr_mask_bits: u32) -> u64 {
        if wr_mask_bits & (wr_mask::ATOMIC | wr_mask::READ | wr_mask::WRITE) != 0 {
            self.u64_at(wqe_off::REMOTE_ADDR)
        } else {
            0
        }
    }

    /// `dma.length`.
    pub(crate) fn length(&self) -> u32 {
        self.u32_at(wqe_off::DMA_LENGTH)
    }

    /// `dma.resid`.
    pub(crate) fn resid(&self) -> u32 {
        self.u32_at(wqe_off::DMA_RESID)
    }

    /// Sets the data position: `resid` bytes left, `skip` done. The list
    /// cursor (`cur_sge`, `sge_offset`) is reset to the start for the
    /// kernel side to advance by `skip` (inline data: `sge_offset` is the
    /// position itself).
    pub(crate) fn set_position(&mut self, resid: u32, skip: u32) {
        self.put32(wqe_off::DMA_RESID, resid);
        self.put32(wqe_off::DMA_CUR_SGE, 0);
        let inline = self.send_flags() & SEND_INLINE != 0;
        self.put32(wqe_off::DMA_SGE_OFFSET, if inline { skip } else { 0 });
    }

    /// The view [`plan`] reads, with the WQE's mask for QP type `t`.
    pub(crate) fn send_view(&self, t: QpType) -> SendView {
        let wr_op = self.wr_op();
        SendView {
            wr_op,
            send_flags: self.send_flags(),
            wr_mask: crate::wqe::wr_opcode_mask(wr_op, t),
            resid: self.resid(),
            first_psn: self.psns().0,
            num_sge: self.u32_at(wqe_off::DMA_NUM_SGE),
            cur_sge: self.u32_at(wqe_off::DMA_CUR_SGE),
            has_rd_atomic: self.has_rd_atomic(),
        }
    }

    /// The view the completer reads.
    pub(crate) fn head(&self, t: QpType) -> crate::comp_check::HeadWqe {
        let wr_op = self.wr_op();
        let (first_psn, last_psn) = self.psns();
        crate::comp_check::HeadWqe {
            state: self.state(),
            wr_op,
            wr_mask: crate::wqe::wr_opcode_mask(wr_op, t),
            first_psn,
            last_psn,
        }
    }

    /// Stores what [`after_send`] decided.
    pub(crate) fn store_after_send(&mut self, a: &AfterSend, took_rd_atomic: bool) {
        self.set_state(a.state);
        if let Some((first, last)) = a.wqe_psns {
            self.set_psns(first, last);
        }
        if took_rd_atomic {
            self.set_has_rd_atomic(true);
        }
    }

    /// One step of a retransmission rewind (`req_retry`) over this WQE,
    /// the walk going from the oldest WQE until a [`RewindStep::Stop`];
    /// `first` and `prev_opcode` carry the walk's state (see [`rewind`]).
    /// A restarted WQE is stored back as posted with its remote address
    /// and data position; the kernel side then advances the list cursor of
    /// a write or send with list data by [`Restart::skip`] bytes (inline
    /// data is positioned already, a first read keeps its cursor).
    pub(crate) fn rewind_step(
        &mut self,
        t: QpType,
        first: &mut bool,
        prev_opcode: &mut Option<u8>,
        comp_psn: u32,
        mtu: u32,
    ) -> RewindStep {
        let wr_op = self.wr_op();
        let mask = crate::wqe::wr_opcode_mask(wr_op, t);
        let w = RewindWqe {
            state: self.state(),
            wr_op,
            send_flags: self.send_flags(),
            wr_mask: mask,
            length: self.length(),
            resid: self.resid(),
            first_psn: self.psns().0,
        };
        let step = rewind(t, &w, *first, comp_psn, mtu);
        match step {
            RewindStep::Stop | RewindStep::Skip => step,
            RewindStep::Restart(r) => {
                if *first {
                    *prev_opcode = r.prev_opcode;
                }
                *first = false;
                let base = self.remote_addr(mask);
                self.set_iova(base.wrapping_add(r.iova_advance));
                // A first read keeps its cursor (what it received).
                if !(w.wr_mask & wr_mask::READ != 0 && r.skip != 0) {
                    self.set_position(r.resid, r.skip);
                }
                self.set_state(WqeState::Posted);
                step
            }
        }
    }
}

/// What a request's headers carry besides its plan: the WQE's remote
/// part and the QP's destination.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ReqFields {
    /// The destination QPN.
    pub(crate) dest_qpn: u32,
    /// The remote key (RDMA, atomic or flush).
    pub(crate) rkey: u32,
    /// The remote address (the WQE's `iova`).
    pub(crate) iova: u64,
    /// The RETH's DMA length: the bytes the message has left.
    pub(crate) resid: u32,
    /// Immediate data, the wire value (`u32::from_be` of the stored
    /// `imm_data`).
    pub(crate) imm: u32,
    /// The rkey a send with invalidate invalidates.
    pub(crate) inv_rkey: u32,
    /// Compare (compare-and-swap) or add (fetch-and-add) operand.
    pub(crate) compare_add: u64,
    /// Swap operand.
    pub(crate) swap: u64,
    /// A flush's placement type.
    pub(crate) flush_type: u8,
    /// A flush's selectivity level.
    pub(crate) flush_level: u8,
}

/// Writes the BTH and extension headers of planned request `p` into
/// `pkt` (laid out for `p.opcode` and `p.payload`), as `init_req_packet`
/// does; the caller fills the payload and the ICRC.
pub(crate) fn write_request(
    pkt: &mut crate::wire::packet::PacketMut<'_>,
    p: &PacketPlan,
    f: &ReqFields,
) -> Result<(), crate::wire::packet::BuildError> {
    use crate::wire::{
        bth::Bth,
        ext::{
            Atmeth,
            Feth,
            Ieth,
            Immdt,
            Reth, //
        },
    };
    let mut bth = Bth::new(p.opcode, f.dest_qpn, p.psn);
    bth.se = p.solicited;
    bth.ack_req = p.ack_req;
    pkt.set_bth(&bth);
    let m = p.mask;
    if m.contains(Mask::RETH) {
        pkt.set(&Reth {
            va: f.iova,
            rkey: f.rkey,
            len: f.resid,
        })?;
    }
    if m.contains(Mask::FETH) {
        pkt.set(&Feth {
            plt: f.flush_type,
            sel: f.flush_level,
        })?;
    }
    if m.contains(Mask::IMMDT) {
        pkt.set(&Immdt { imm: f.imm })?;
    }
    if m.contains(Mask::IETH) {
        pkt.set(&Ieth { rkey: f.inv_rkey })?;
    }
    if m.contains(Mask::ATMETH) {
        // A compare-and-swap carries both operands; a fetch-and-add its
        // addend in the swap/add field.
        let cmp_swap = p.opcode == crate::wire::opcode::code::RC_COMPARE_SWAP;
        pkt.set(&Atmeth {
            va: f.iova,
            rkey: f.rkey,
            swap_add: if cmp_swap { f.swap } else { f.compare_add },
            comp: if cmp_swap { f.compare_add } else { 0 },
        })?;
    }
    Ok(())
}
