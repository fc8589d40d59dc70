// SPDX-License-Identifier: GPL-2.0

//! Queue pair attributes: what create and modify refuse, and what a modify
//! changes (the C driver's `rxe_qp_chk_init`, `rxe_qp_chk_attr` and
//! `rxe_qp_from_attr`, `rxe_qp_to_attr` for query).
//!
//! Which state transitions are legal, with which attribute mask, is the RDMA
//! core's table (`ib_modify_qp_is_ok`, which the C driver calls too); the
//! caller passes it in as a function, so that this file has no kernel
//! dependency and is also built by the host test crate (`tests/host`).
//!
//! The refusals happen in the C driver's order, so that the errno is the
//! same whichever of several problems a request has.

use crate::av::{
    self,
    AhAttr,
    Av,
    GidType, //
};

/// Bits of a PSN (24).
pub const BTH_PSN_MASK: u32 = 0x00ff_ffff;

/// The UDP source port range RoCE v2 uses (`IB_ROCE_UDP_ENCAP_VALID_PORT_MIN`,
/// the C driver's `RXE_ROCE_V2_SPORT`).
pub const ROCE_V2_SPORT: u16 = 0xc000;

/// Bytes of a `struct ib_sge` / `struct rxe_sge` in a work queue entry.
pub const SGE_SIZE: u32 = 16;
/// Bytes of `struct rxe_send_wqe` (uapi `rdma_user_rxe.h`), without its
/// scatter/gather list or inline data.
pub const SEND_WQE_SIZE: u32 = 208;
/// Bytes of `struct rxe_recv_wqe`, without its scatter/gather list.
pub const RECV_WQE_SIZE: u32 = 40;

/// `enum ib_qp_attr_mask`: which attributes a modify sets.
pub mod mask {
    /// `qp_state`.
    pub const STATE: u32 = 1 << 0;
    /// `cur_qp_state`.
    pub const CUR_STATE: u32 = 1 << 1;
    /// `en_sqd_async_notify`.
    pub const EN_SQD_ASYNC_NOTIFY: u32 = 1 << 2;
    /// `qp_access_flags`.
    pub const ACCESS_FLAGS: u32 = 1 << 3;
    /// `pkey_index`.
    pub const PKEY_INDEX: u32 = 1 << 4;
    /// `port_num`.
    pub const PORT: u32 = 1 << 5;
    /// `qkey`.
    pub const QKEY: u32 = 1 << 6;
    /// `ah_attr`.
    pub const AV: u32 = 1 << 7;
    /// `path_mtu`.
    pub const PATH_MTU: u32 = 1 << 8;
    /// `timeout`.
    pub const TIMEOUT: u32 = 1 << 9;
    /// `retry_cnt`.
    pub const RETRY_CNT: u32 = 1 << 10;
    /// `rnr_retry`.
    pub const RNR_RETRY: u32 = 1 << 11;
    /// `rq_psn`.
    pub const RQ_PSN: u32 = 1 << 12;
    /// `max_rd_atomic`.
    pub const MAX_QP_RD_ATOMIC: u32 = 1 << 13;
    /// `alt_ah_attr`, `alt_port_num`, `alt_pkey_index`, `alt_timeout`.
    pub const ALT_PATH: u32 = 1 << 14;
    /// `min_rnr_timer`.
    pub const MIN_RNR_TIMER: u32 = 1 << 15;
    /// `sq_psn`.
    pub const SQ_PSN: u32 = 1 << 16;
    /// `max_dest_rd_atomic`.
    pub const MAX_DEST_RD_ATOMIC: u32 = 1 << 17;
    /// `path_mig_state`.
    pub const PATH_MIG_STATE: u32 = 1 << 18;
    /// `cap`.
    pub const CAP: u32 = 1 << 19;
    /// `dest_qp_num`.
    pub const DEST_QPN: u32 = 1 << 20;
    /// The bits a driver may be asked for (`IB_QP_ATTR_STANDARD_BITS`).
    pub const STANDARD_BITS: u32 = (1 << 21) - 1;
}

/// `enum ib_qp_type` values the driver supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum QpType {
    /// The general services QP (QP1) of the MAD layer.
    Gsi = 1,
    /// Reliable connected.
    Rc = 2,
    /// Unreliable connected.
    Uc = 3,
    /// Unreliable datagram.
    Ud = 4,
}

impl QpType {
    /// The type of `enum ib_qp_type` value `raw`, if supported.
    pub fn from_raw(raw: u32) -> Option<Self> {
        Some(match raw {
            1 => Self::Gsi,
            2 => Self::Rc,
            3 => Self::Uc,
            4 => Self::Ud,
            _ => return None,
        })
    }

    /// Whether the QP sends datagrams, each with its own address.
    pub fn is_datagram(self) -> bool {
        matches!(self, Self::Ud | Self::Gsi)
    }
}

/// `enum ib_qp_state`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u32)]
pub enum QpState {
    /// Just created or reset: nothing is processed.
    #[default]
    Reset = 0,
    /// Receives may be posted.
    Init = 1,
    /// Ready to receive.
    Rtr = 2,
    /// Ready to send.
    Rts = 3,
    /// Send queue drain.
    Sqd = 4,
    /// Send queue error.
    Sqe = 5,
    /// Error: work requests are flushed.
    Err = 6,
}

impl QpState {
    /// The state of `enum ib_qp_state` value `raw`.
    pub fn from_raw(raw: u32) -> Option<Self> {
        Some(match raw {
            0 => Self::Reset,
            1 => Self::Init,
            2 => Self::Rtr,
            3 => Self::Rts,
            4 => Self::Sqd,
            5 => Self::Sqe,
            6 => Self::Err,
            _ => return None,
        })
    }

    /// The `enum ib_qp_state` value.
    pub fn as_raw(self) -> u32 {
        self as u32
    }
}

/// Why a create or modify is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// `EINVAL`: an attribute out of range or not allowed.
    Inval,
    /// `EOPNOTSUPP`: a QP type, flag or attribute the driver does not have.
    NotSupported,
}

/// The device's bounds on a QP's queues.
#[derive(Clone, Copy, Debug)]
pub struct CapLimits {
    /// Work requests per queue (`max_qp_wr`).
    pub max_wr: u32,
    /// Scatter/gather entries per send work request.
    pub max_send_sge: u32,
    /// Scatter/gather entries per receive work request.
    pub max_recv_sge: u32,
    /// Bytes of inline data per send work request.
    pub max_inline_data: u32,
}

/// The queue sizes of a create (`struct ib_qp_cap`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cap {
    /// Send work requests.
    pub max_send_wr: u32,
    /// Receive work requests.
    pub max_recv_wr: u32,
    /// Scatter/gather entries per send work request.
    pub max_send_sge: u32,
    /// Scatter/gather entries per receive work request.
    pub max_recv_sge: u32,
    /// Bytes of inline data per send work request.
    pub max_inline_data: u32,
}

/// Checks queue sizes against the device's bounds; the receive queue's only
/// without a shared receive queue.
pub fn chk_cap(cap: &Cap, has_srq: bool, lim: &CapLimits) -> Result<(), Refusal> {
    if cap.max_send_wr > lim.max_wr || cap.max_send_sge > lim.max_send_sge {
        return Err(Refusal::Inval);
    }
    if !has_srq && (cap.max_recv_wr > lim.max_wr || cap.max_recv_sge > lim.max_recv_sge) {
        return Err(Refusal::Inval);
    }
    if cap.max_inline_data > lim.max_inline_data {
        return Err(Refusal::Inval);
    }
    Ok(())
}

/// What create checks of `struct ib_qp_init_attr`.
#[derive(Clone, Copy, Debug)]
pub struct InitReq {
    /// `enum ib_qp_type`.
    pub qp_type: u32,
    /// `IB_QP_CREATE_*` flags.
    pub create_flags: u32,
    /// A send completion queue is given.
    pub has_send_cq: bool,
    /// A receive completion queue is given.
    pub has_recv_cq: bool,
    /// A shared receive queue is given.
    pub has_srq: bool,
    /// Queue sizes.
    pub cap: Cap,
    /// Port (special QPs only).
    pub port_num: u32,
}

/// Checks a create (after the udata lengths, which the caller checks
/// first): no flags, a supported type, both completion queues, queue sizes
/// and, for the GSI QP, the port and that the device has none yet.
pub fn chk_init(
    req: &InitReq,
    lim: &CapLimits,
    num_ports: u32,
    gsi_exists: bool,
) -> Result<QpType, Refusal> {
    if req.create_flags != 0 {
        return Err(Refusal::NotSupported);
    }
    let qp_type = QpType::from_raw(req.qp_type).ok_or(Refusal::NotSupported)?;
    if !req.has_send_cq || !req.has_recv_cq {
        return Err(Refusal::Inval);
    }
    chk_cap(&req.cap, req.has_srq, lim)?;
    if qp_type == QpType::Gsi && (!port_valid(req.port_num, num_ports) || gsi_exists) {
        return Err(Refusal::Inval);
    }
    Ok(qp_type)
}

fn port_valid(port: u32, num_ports: u32) -> bool {
    (1..=num_ports).contains(&port)
}

/// The sizes of a send queue: entries hold `max(sge, inline)` bytes of
/// scatter/gather list or inline data after the WQE, and both bounds
/// reported back are what that room allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SqSizes {
    /// Scatter/gather entries per work request.
    pub max_sge: u32,
    /// Bytes of inline data per work request.
    pub max_inline: u32,
    /// Bytes of one queue entry.
    pub wqe_size: u32,
}

impl SqSizes {
    /// The sizes for a checked `cap`.
    pub fn new(cap: &Cap) -> Self {
        let room = (cap.max_send_sge * SGE_SIZE).max(cap.max_inline_data);
        Self {
            max_sge: room / SGE_SIZE,
            max_inline: room,
            wqe_size: SEND_WQE_SIZE + room,
        }
    }
}

/// Bytes of a receive queue entry for `max_sge` scatter/gather entries.
pub fn rq_wqe_size(max_sge: u32) -> u32 {
    RECV_WQE_SIZE + max_sge * SGE_SIZE
}

/// An address vector a modify gives with no attributes at all (all zeroes,
/// as a new QP's are in the C driver).
pub const NO_AH: AhAttr = AhAttr {
    port_num: 0,
    has_grh: false,
    dgid: [0; 16],
    flow_label: 0,
    sgid_index: 0,
    hop_limit: 0,
    traffic_class: 0,
    sgid: [0; 16],
    sgid_type: GidType::Ib,
    dmac: [0; 6],
};

/// The bytes of `enum ib_mtu` value `raw` (`ib_mtu_enum_to_int`), or
/// `u32::MAX` where that gives -1, as the C driver stores it.
pub fn mtu_bytes(raw: u32) -> u32 {
    match raw {
        1..=5 => 128 << raw,
        _ => u32::MAX,
    }
}

/// A modify request: `struct ib_qp_attr` as far as the driver reads it.
#[derive(Clone, Copy, Debug)]
pub struct ModifyReq {
    /// `qp_state`.
    pub qp_state: u32,
    /// `cur_qp_state`.
    pub cur_qp_state: u32,
    /// `path_mtu`.
    pub path_mtu: u32,
    /// `path_mig_state`.
    pub path_mig_state: u32,
    /// `qkey`.
    pub qkey: u32,
    /// `rq_psn`.
    pub rq_psn: u32,
    /// `sq_psn`.
    pub sq_psn: u32,
    /// `dest_qp_num`.
    pub dest_qp_num: u32,
    /// `qp_access_flags`.
    pub qp_access_flags: u32,
    /// `cap`.
    pub cap: Cap,
    /// `ah_attr`.
    pub ah: AhAttr,
    /// `alt_ah_attr`.
    pub alt_ah: AhAttr,
    /// `pkey_index`.
    pub pkey_index: u16,
    /// `alt_pkey_index`.
    pub alt_pkey_index: u16,
    /// `en_sqd_async_notify`.
    pub en_sqd_async_notify: u8,
    /// `max_rd_atomic`.
    pub max_rd_atomic: u8,
    /// `max_dest_rd_atomic`.
    pub max_dest_rd_atomic: u8,
    /// `min_rnr_timer`.
    pub min_rnr_timer: u8,
    /// `port_num`.
    pub port_num: u32,
    /// `timeout`.
    pub timeout: u8,
    /// `retry_cnt`.
    pub retry_cnt: u8,
    /// `rnr_retry`.
    pub rnr_retry: u8,
    /// `alt_port_num`.
    pub alt_port_num: u32,
    /// `alt_timeout`.
    pub alt_timeout: u8,
}

impl Default for ModifyReq {
    fn default() -> Self {
        Self {
            qp_state: 0,
            cur_qp_state: 0,
            path_mtu: 0,
            path_mig_state: 0,
            qkey: 0,
            rq_psn: 0,
            sq_psn: 0,
            dest_qp_num: 0,
            qp_access_flags: 0,
            cap: Cap::default(),
            ah: NO_AH,
            alt_ah: NO_AH,
            pkey_index: 0,
            alt_pkey_index: 0,
            en_sqd_async_notify: 0,
            max_rd_atomic: 0,
            max_dest_rd_atomic: 0,
            min_rnr_timer: 0,
            port_num: 0,
            timeout: 0,
            retry_cnt: 0,
            rnr_retry: 0,
            alt_port_num: 0,
            alt_timeout: 0,
        }
    }
}

/// The device's bounds a modify is checked against.
#[derive(Clone, Copy, Debug)]
pub struct ModifyLimits {
    /// Queue bounds (for `IB_QP_CAP`).
    pub cap: CapLimits,
    /// Ports.
    pub num_ports: u32,
    /// GID table entries.
    pub gid_tbl_len: u32,
    /// The port's largest `enum ib_mtu`.
    pub max_mtu: u32,
    /// Outstanding RDMA reads/atomics a QP may initiate.
    pub max_qp_rd_atom: u32,
    /// `IB_ACCESS_*` flags a QP may allow.
    pub access_supported: u32,
}

/// Checks the attributes of a modify, except the state transition
/// (`rxe_qp_chk_attr`).
pub fn chk_attr(
    qp_type: QpType,
    has_srq: bool,
    req: &ModifyReq,
    mask: u32,
    lim: &ModifyLimits,
) -> Result<(), Refusal> {
    if mask & !mask::STANDARD_BITS != 0 {
        return Err(Refusal::NotSupported);
    }
    if mask & mask::PORT != 0 && !port_valid(req.port_num, lim.num_ports) {
        return Err(Refusal::Inval);
    }
    if mask & mask::CAP != 0 {
        chk_cap(&req.cap, has_srq, &lim.cap)?;
    }
    if mask & mask::ACCESS_FLAGS != 0
        && (!matches!(qp_type, QpType::Rc | QpType::Uc)
            || req.qp_access_flags & !lim.access_supported != 0)
    {
        return Err(Refusal::Inval);
    }
    if mask & mask::AV != 0 {
        if !av::attr_ok(&req.ah, lim.gid_tbl_len) {
            return Err(Refusal::Inval);
        }
    }
    if mask & mask::ALT_PATH != 0 {
        if !av::attr_ok(&req.alt_ah, lim.gid_tbl_len) {
            return Err(Refusal::Inval);
        }
        if !port_valid(req.alt_port_num, lim.num_ports) || req.alt_timeout > 31 {
            return Err(Refusal::Inval);
        }
    }
    if mask & mask::PATH_MTU != 0 && req.path_mtu > lim.max_mtu {
        return Err(Refusal::Inval);
    }
    if mask & mask::MAX_QP_RD_ATOMIC != 0 && u32::from(req.max_rd_atomic) > lim.max_qp_rd_atom {
        return Err(Refusal::Inval);
    }
    if mask & mask::TIMEOUT != 0 && req.timeout > 31 {
        return Err(Refusal::Inval);
    }
    Ok(())
}

/// What the driver does on entering a state, beyond recording it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transition {
    /// To RESET: the queues are emptied and the transport state cleared.
    Reset,
    /// To SQD: the requester drains the send queue.
    Drain,
    /// To ERR: outstanding work requests are flushed.
    Error,
    /// Any other state: nothing more.
    Other,
}

/// The smallest power of two at least `n` (`roundup_pow_of_two`), 0 for 0.
pub fn roundup_pow_of_two(n: u32) -> u32 {
    if n == 0 {
        0
    } else {
        n.next_power_of_two()
    }
}

/// The local ACK timeout of `IB_QP_TIMEOUT` value `timeout` in nanoseconds
/// (4.096 us * 2^timeout), or `None` for 0 (wait forever).
pub fn ack_timeout_ns(timeout: u8) -> Option<u64> {
    (timeout != 0).then(|| 4096u64 << timeout.min(31))
}

/// The UDP source port of a QP until a modify gives it an address vector:
/// spreads QPs over the receivers' queues (`hash_32(qpn, 14)`).
pub fn initial_src_port(qpn: u32) -> u16 {
    const GOLDEN_RATIO_32: u32 = 0x61c8_8647;
    let hash = qpn.wrapping_mul(GOLDEN_RATIO_32) >> (32 - 14);
    ROCE_V2_SPORT + (hash & 0x3fff) as u16
}

/// The UDP source port for a flow (`rdma_get_udp_sport`): from the flow
/// label, or from both QPNs when it is 0, so that both ends agree.
pub fn udp_sport(flow_label: u32, lqpn: u32, rqpn: u32) -> u16 {
    let fl = if flow_label != 0 {
        flow_label
    } else {
        let mut v = u64::from(lqpn) * u64::from(rqpn);
        v ^= v >> 20;
        v ^= v >> 40;
        (v & 0xf_ffff) as u32
    };
    let low = (fl & 0x3fff) ^ ((fl & 0xf_c000) >> 14);
    (low as u16) | ROCE_V2_SPORT
}

/// A QP's attributes as modify sets them and query reports them (the C
/// driver's `qp->attr` with the requester's, completer's and responder's
/// copies that a modify initialises).
#[derive(Clone, Copy, Debug)]
pub struct QpAttrs {
    /// Current state.
    pub state: QpState,
    /// `cur_qp_state` as last given (the C driver stores `qp_state` there).
    pub cur_qp_state: u32,
    /// `enum ib_mtu` of the path.
    pub path_mtu: u32,
    /// The path MTU in bytes ([`mtu_bytes`]).
    pub mtu: u32,
    /// `enum ib_mig_state`.
    pub path_mig_state: u32,
    /// Q_Key (datagram QPs).
    pub qkey: u32,
    /// First PSN expected by the responder, as set.
    pub rq_psn: u32,
    /// First PSN sent, as set.
    pub sq_psn: u32,
    /// Remote QPN (connected QPs).
    pub dest_qp_num: u32,
    /// `IB_ACCESS_REMOTE_*` the QP allows.
    pub qp_access_flags: u32,
    /// P_Key index.
    pub pkey_index: u16,
    /// Alternate path P_Key index.
    pub alt_pkey_index: u16,
    /// Whether an event reports the end of an SQ drain.
    pub en_sqd_async_notify: u8,
    /// The send queue is draining (SQD until the requester is done).
    pub sq_draining: bool,
    /// Outstanding RDMA reads/atomics initiated (a power of two).
    pub max_rd_atomic: u8,
    /// Outstanding RDMA reads/atomics responded to, as query reports it
    /// (the C driver keeps the rounded value in a byte: 256 reads as 0).
    pub max_dest_rd_atomic: u8,
    /// Responder resources for RDMA reads/atomics (the rounded value).
    pub rd_atomic_resources: u32,
    /// RNR NAK timer code sent to the requester.
    pub min_rnr_timer: u8,
    /// Port.
    pub port_num: u32,
    /// Local ACK timeout code.
    pub timeout: u8,
    /// The ACK timeout in jiffies, 0 for none.
    pub timeout_jiffies: u64,
    /// Retries after a timeout.
    pub retry_cnt: u8,
    /// Retries after an RNR NAK.
    pub rnr_retry: u8,
    /// Alternate path port.
    pub alt_port_num: u32,
    /// Alternate path ACK timeout code.
    pub alt_timeout: u8,
    /// Primary path.
    pub pri_av: Av,
    /// Alternate path.
    pub alt_av: Av,
    /// The requester's next PSN.
    pub req_psn: u32,
    /// The completer's expected PSN.
    pub comp_psn: u32,
    /// The responder's expected PSN.
    pub resp_psn: u32,
    /// The completer's remaining retries.
    pub comp_retry_cnt: u8,
    /// The completer's remaining RNR retries.
    pub comp_rnr_retry: u8,
    /// The requester's RDMA read/atomic credits.
    pub req_rd_atomic: u32,
}

impl QpAttrs {
    /// The attributes of a new QP (RESET, path MTU 256) on `port_num` (the
    /// GSI QP's port; 0 for the others until a modify sets it).
    pub fn new(port_num: u32) -> Self {
        Self {
            state: QpState::Reset,
            cur_qp_state: 0,
            path_mtu: 1,
            mtu: mtu_bytes(1),
            path_mig_state: 0,
            qkey: 0,
            rq_psn: 0,
            sq_psn: 0,
            dest_qp_num: 0,
            qp_access_flags: 0,
            pkey_index: 0,
            alt_pkey_index: 0,
            en_sqd_async_notify: 0,
            sq_draining: false,
            max_rd_atomic: 0,
            max_dest_rd_atomic: 0,
            rd_atomic_resources: 0,
            min_rnr_timer: 0,
            port_num,
            timeout: 0,
            timeout_jiffies: 0,
            retry_cnt: 0,
            rnr_retry: 0,
            alt_port_num: 0,
            alt_timeout: 0,
            pri_av: Av::from_attr(&NO_AH),
            alt_av: Av::from_attr(&NO_AH),
            req_psn: 0,
            comp_psn: 0,
            resp_psn: 0,
            comp_retry_cnt: 0,
            comp_rnr_retry: 0,
            req_rd_atomic: 0,
        }
    }

    /// Checks the state transition of a modify (`__qp_chk_state`):
    /// `modify_ok(cur, new)` is the core's table for this QP's type and the
    /// request's mask. A QP still draining its send queue only goes to ERR.
    pub fn chk_state(
        &self,
        req: &ModifyReq,
        mask: u32,
        modify_ok: impl FnOnce(u32, u32) -> bool,
    ) -> Result<QpState, Refusal> {
        let cur = if mask & mask::CUR_STATE != 0 {
            req.cur_qp_state
        } else {
            self.state.as_raw()
        };
        let new = if mask & mask::STATE != 0 {
            req.qp_state
        } else {
            cur
        };
        if !modify_ok(cur, new) {
            return Err(Refusal::Inval);
        }
        // The core's table only passes valid states.
        let new = QpState::from_raw(new).ok_or(Refusal::Inval)?;
        if mask & mask::STATE != 0
            && cur == QpState::Sqd.as_raw()
            && self.sq_draining
            && new != QpState::Err
        {
            return Err(Refusal::Inval);
        }
        Ok(new)
    }

    /// Applies a checked modify (`rxe_qp_from_attr`): the state first, if
    /// asked, then every attribute in `mask`. Returns what entering the new
    /// state requires of the caller, if the state changed hands.
    ///
    /// `modify_ok` is as in [`QpAttrs::chk_state`]; `jiffies_of_ns`
    /// converts the ACK timeout (`nsecs_to_jiffies`).
    pub fn apply(
        &mut self,
        req: &ModifyReq,
        mask: u32,
        modify_ok: impl FnOnce(u32, u32) -> bool,
        jiffies_of_ns: impl FnOnce(u64) -> u64,
    ) -> Result<Option<Transition>, Refusal> {
        if mask & mask::CUR_STATE != 0 {
            self.cur_qp_state = req.qp_state;
        }
        let mut transition = None;
        if mask & mask::STATE != 0 {
            let new = self.chk_state(req, mask, modify_ok)?;
            self.state = new;
            transition = Some(self.enter(new));
        }
        if mask & mask::MAX_QP_RD_ATOMIC != 0 {
            // Checked against 128: the rounded value fits the byte.
            let n = roundup_pow_of_two(req.max_rd_atomic.into());
            self.max_rd_atomic = n as u8;
            self.req_rd_atomic = n;
        }
        if mask & mask::MAX_DEST_RD_ATOMIC != 0 {
            let n = roundup_pow_of_two(req.max_dest_rd_atomic.into());
            self.max_dest_rd_atomic = n as u8;
            self.rd_atomic_resources = n;
        }
        if mask & mask::EN_SQD_ASYNC_NOTIFY != 0 {
            self.en_sqd_async_notify = req.en_sqd_async_notify;
        }
        if mask & mask::ACCESS_FLAGS != 0 {
            self.qp_access_flags = req.qp_access_flags;
        }
        if mask & mask::PKEY_INDEX != 0 {
            self.pkey_index = req.pkey_index;
        }
        if mask & mask::PORT != 0 {
            self.port_num = req.port_num;
        }
        if mask & mask::QKEY != 0 {
            self.qkey = req.qkey;
        }
        if mask & mask::AV != 0 {
            self.pri_av = Av::from_attr(&req.ah);
        }
        if mask & mask::ALT_PATH != 0 {
            self.alt_av = Av::from_attr(&req.alt_ah);
            self.alt_port_num = req.alt_port_num;
            self.alt_pkey_index = req.alt_pkey_index;
            self.alt_timeout = req.alt_timeout;
        }
        if mask & mask::PATH_MTU != 0 {
            self.path_mtu = req.path_mtu;
            self.mtu = mtu_bytes(req.path_mtu);
        }
        if mask & mask::TIMEOUT != 0 {
            self.timeout = req.timeout;
            self.timeout_jiffies = match ack_timeout_ns(req.timeout) {
                None => 0,
                Some(ns) => jiffies_of_ns(ns).max(1),
            };
        }
        if mask & mask::RETRY_CNT != 0 {
            self.retry_cnt = req.retry_cnt;
            self.comp_retry_cnt = req.retry_cnt;
        }
        if mask & mask::RNR_RETRY != 0 {
            self.rnr_retry = req.rnr_retry;
            self.comp_rnr_retry = req.rnr_retry;
        }
        if mask & mask::RQ_PSN != 0 {
            self.rq_psn = req.rq_psn & BTH_PSN_MASK;
            self.resp_psn = self.rq_psn;
        }
        if mask & mask::MIN_RNR_TIMER != 0 {
            self.min_rnr_timer = req.min_rnr_timer;
        }
        if mask & mask::SQ_PSN != 0 {
            self.sq_psn = req.sq_psn & BTH_PSN_MASK;
            self.req_psn = self.sq_psn;
            self.comp_psn = self.sq_psn;
        }
        if mask & mask::PATH_MIG_STATE != 0 {
            self.path_mig_state = req.path_mig_state;
        }
        if mask & mask::DEST_QPN != 0 {
            self.dest_qp_num = req.dest_qp_num;
        }
        Ok(transition)
    }

    /// Records entering `state` and says what else it requires.
    fn enter(&mut self, state: QpState) -> Transition {
        match state {
            QpState::Reset => Transition::Reset,
            QpState::Sqd => {
                self.sq_draining = true;
                Transition::Drain
            }
            QpState::Err => Transition::Error,
            _ => Transition::Other,
        }
    }

    /// Moves to ERR outside a modify (a transport error, or a user's QP
    /// whose device goes away); the caller flushes.
    pub fn set_error(&mut self) {
        self.state = QpState::Err;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::av::{
        NETWORK_TYPE_IPV4,
        NETWORK_TYPE_IPV6, //
    };

    /// A RoCE v2 source GID of the network wanted (IPv4-mapped or not).
    fn sgid(v4: bool) -> [u8; 16] {
        let mut g = [0u8; 16];
        if v4 {
            g[10] = 0xff;
            g[11] = 0xff;
            g[12..].copy_from_slice(&[10, 0, 2, 1]);
        } else {
            g[0] = 0xfe;
            g[1] = 0x80;
            g[15] = 1;
        }
        g
    }

    const LIM: CapLimits = CapLimits {
        max_wr: 1 << 20,
        max_send_sge: 32,
        max_recv_sge: 32,
        max_inline_data: 512,
    };

    const MLIM: ModifyLimits = ModifyLimits {
        cap: LIM,
        num_ports: 1,
        gid_tbl_len: 1024,
        max_mtu: 5,
        max_qp_rd_atom: 128,
        access_supported: 0x1f,
    };

    fn init(qp_type: u32) -> InitReq {
        InitReq {
            qp_type,
            create_flags: 0,
            has_send_cq: true,
            has_recv_cq: true,
            has_srq: false,
            cap: Cap {
                max_send_wr: 16,
                max_recv_wr: 16,
                max_send_sge: 1,
                max_recv_sge: 1,
                max_inline_data: 0,
            },
            port_num: 0,
        }
    }

    #[test]
    fn init_types_and_flags() {
        for t in [2, 3, 4] {
            assert_eq!(chk_init(&init(t), &LIM, 1, false).map(|t| t as u32), Ok(t));
        }
        // SMI, raw packet, XRC, driver types: not supported.
        for t in [0, 5, 8, 9, 10, 0xff, 0x1000] {
            assert_eq!(
                chk_init(&init(t), &LIM, 1, false),
                Err(Refusal::NotSupported)
            );
        }
        let mut r = init(2);
        r.create_flags = 1 << 1;
        assert_eq!(chk_init(&r, &LIM, 1, false), Err(Refusal::NotSupported));
        // Flags first, as the C driver checks them before the type.
        r.qp_type = 0;
        r.has_send_cq = false;
        assert_eq!(chk_init(&r, &LIM, 1, false), Err(Refusal::NotSupported));
    }

    #[test]
    fn init_cqs_and_caps() {
        let mut r = init(2);
        r.has_recv_cq = false;
        assert_eq!(chk_init(&r, &LIM, 1, false), Err(Refusal::Inval));
        let mut r = init(2);
        r.has_send_cq = false;
        assert_eq!(chk_init(&r, &LIM, 1, false), Err(Refusal::Inval));
        let ok = init(2);
        let bad: [fn(&mut Cap); 5] = [
            |c| c.max_send_wr = (1 << 20) + 1,
            |c| c.max_recv_wr = (1 << 20) + 1,
            |c| c.max_send_sge = 33,
            |c| c.max_recv_sge = 33,
            |c| c.max_inline_data = 513,
        ];
        for f in bad {
            let mut r = ok;
            f(&mut r.cap);
            assert_eq!(chk_init(&r, &LIM, 1, false), Err(Refusal::Inval));
        }
        // The limits themselves are allowed.
        let mut r = ok;
        r.cap = Cap {
            max_send_wr: 1 << 20,
            max_recv_wr: 1 << 20,
            max_send_sge: 32,
            max_recv_sge: 32,
            max_inline_data: 512,
        };
        assert!(chk_init(&r, &LIM, 1, false).is_ok());
        // With an SRQ, the receive sizes are not looked at.
        let mut r = ok;
        r.has_srq = true;
        r.cap.max_recv_wr = u32::MAX;
        r.cap.max_recv_sge = u32::MAX;
        assert!(chk_init(&r, &LIM, 1, false).is_ok());
    }

    #[test]
    fn init_gsi() {
        let mut r = init(1);
        assert_eq!(chk_init(&r, &LIM, 1, false), Err(Refusal::Inval));
        r.port_num = 2;
        assert_eq!(chk_init(&r, &LIM, 1, false), Err(Refusal::Inval));
        r.port_num = 1;
        assert_eq!(chk_init(&r, &LIM, 1, false), Ok(QpType::Gsi));
        assert_eq!(chk_init(&r, &LIM, 1, true), Err(Refusal::Inval));
        // Other types ignore the port.
        let mut r = init(4);
        r.port_num = 7;
        assert_eq!(chk_init(&r, &LIM, 1, true), Ok(QpType::Ud));
    }

    #[test]
    fn queue_sizes() {
        let mut cap = init(2).cap;
        cap.max_send_sge = 2;
        cap.max_inline_data = 0;
        assert_eq!(
            SqSizes::new(&cap),
            SqSizes {
                max_sge: 2,
                max_inline: 32,
                wqe_size: 240
            }
        );
        cap.max_inline_data = 100;
        assert_eq!(
            SqSizes::new(&cap),
            SqSizes {
                max_sge: 6,
                max_inline: 100,
                wqe_size: 308
            }
        );
        cap.max_send_sge = 0;
        cap.max_inline_data = 0;
        assert_eq!(SqSizes::new(&cap).wqe_size, SEND_WQE_SIZE);
        assert_eq!(rq_wqe_size(0), 40);
        assert_eq!(rq_wqe_size(32), 40 + 512);
    }

    fn ah(sgid_type: GidType, v4: bool) -> AhAttr {
        AhAttr {
            has_grh: true,
            port_num: 1,
            sgid_type,
            sgid: sgid(v4),
            ..NO_AH
        }
    }

    #[test]
    fn av_checks() {
        let with = |a: AhAttr, lim: &ModifyLimits| {
            let r = ModifyReq {
                ah: a,
                ..ModifyReq::default()
            };
            chk_attr(QpType::Rc, false, &r, mask::AV, lim)
        };
        assert_eq!(with(ah(GidType::RoceV2, true), &MLIM), Ok(()));
        assert_eq!(with(ah(GidType::RoceV2, false), &MLIM), Ok(()));
        assert_eq!(with(ah(GidType::RoceV1, true), &MLIM), Err(Refusal::Inval));
        assert_eq!(with(ah(GidType::Ib, true), &MLIM), Err(Refusal::Inval));
        // Without a GRH nothing is looked at.
        let no_grh = AhAttr {
            has_grh: false,
            ..ah(GidType::Ib, true)
        };
        assert_eq!(with(no_grh, &MLIM), Ok(()));
        // The table length itself passes (the C driver's `>`).
        let a = AhAttr {
            sgid_index: 255,
            ..ah(GidType::RoceV2, true)
        };
        let lim = |n| ModifyLimits {
            gid_tbl_len: n,
            ..MLIM
        };
        assert_eq!(with(a, &lim(255)), Ok(()));
        assert_eq!(with(a, &lim(254)), Err(Refusal::Inval));
        assert_eq!(
            Av::from_attr(&ah(GidType::RoceV2, false)).network_type,
            NETWORK_TYPE_IPV6
        );
    }

    fn chk(t: QpType, req: &ModifyReq, mask: u32) -> Result<(), Refusal> {
        chk_attr(t, false, req, mask, &MLIM)
    }

    #[test]
    fn modify_checks() {
        let ok = ModifyReq {
            port_num: 1,
            alt_port_num: 1,
            ah: ah(GidType::RoceV2, true),
            alt_ah: ah(GidType::RoceV2, true),
            path_mtu: 5,
            max_rd_atomic: 128,
            timeout: 31,
            alt_timeout: 31,
            qp_access_flags: 0x1f,
            ..ModifyReq::default()
        };
        assert_eq!(chk(QpType::Rc, &ok, mask::STANDARD_BITS), Ok(()));
        assert_eq!(chk(QpType::Rc, &ok, 1 << 21), Err(Refusal::NotSupported));
        assert_eq!(chk(QpType::Rc, &ok, 1 << 25), Err(Refusal::NotSupported));
        let bad: [(u32, fn(&mut ModifyReq)); 11] = [
            (mask::PORT, |r| r.port_num = 0),
            (mask::PORT, |r| r.port_num = 2),
            (mask::CAP, |r| r.cap.max_send_wr = (1 << 20) + 1),
            (mask::ACCESS_FLAGS, |r| r.qp_access_flags = 0x20),
            (mask::AV, |r| r.ah.sgid_type = GidType::RoceV1),
            (mask::ALT_PATH, |r| r.alt_ah.sgid_type = GidType::Ib),
            (mask::ALT_PATH, |r| r.alt_port_num = 0),
            (mask::ALT_PATH, |r| r.alt_timeout = 32),
            (mask::PATH_MTU, |r| r.path_mtu = 6),
            (mask::MAX_QP_RD_ATOMIC, |r| r.max_rd_atomic = 129),
            (mask::TIMEOUT, |r| r.timeout = 32),
        ];
        for (m, f) in bad {
            let mut r = ok;
            f(&mut r);
            assert_eq!(chk(QpType::Rc, &r, m), Err(Refusal::Inval), "mask {m:#x}");
            // The same attribute outside the mask is not looked at.
            assert_eq!(chk(QpType::Rc, &r, mask::STANDARD_BITS & !m), Ok(()));
        }
        // Access flags only for connected QPs.
        assert_eq!(chk(QpType::Uc, &ok, mask::ACCESS_FLAGS), Ok(()));
        assert_eq!(
            chk(QpType::Ud, &ok, mask::ACCESS_FLAGS),
            Err(Refusal::Inval)
        );
        assert_eq!(
            chk(QpType::Gsi, &ok, mask::ACCESS_FLAGS),
            Err(Refusal::Inval)
        );
        // The destination's rd_atomic is not bounded (as in C).
        let mut r = ok;
        r.max_dest_rd_atomic = 255;
        assert_eq!(chk(QpType::Rc, &r, mask::MAX_DEST_RD_ATOMIC), Ok(()));
        // With an SRQ the receive caps are not checked.
        let mut r = ok;
        r.cap.max_recv_sge = 1000;
        assert_eq!(chk(QpType::Rc, &r, mask::CAP), Err(Refusal::Inval));
        assert_eq!(chk_attr(QpType::Rc, true, &r, mask::CAP, &MLIM), Ok(()));
    }

    /// A stand-in for the core's table: any transition between valid states.
    fn any(cur: u32, new: u32) -> bool {
        cur <= 6 && new <= 6
    }

    fn to(a: &mut QpAttrs, state: QpState) -> Result<Option<Transition>, Refusal> {
        let req = ModifyReq {
            qp_state: state.as_raw(),
            ..ModifyReq::default()
        };
        a.apply(&req, mask::STATE, any, |ns| ns / 1_000_000)
    }

    #[test]
    fn transitions() {
        let mut a = QpAttrs::new(0);
        assert_eq!(a.state, QpState::Reset);
        assert_eq!(to(&mut a, QpState::Init), Ok(Some(Transition::Other)));
        assert_eq!(to(&mut a, QpState::Rtr), Ok(Some(Transition::Other)));
        assert_eq!(to(&mut a, QpState::Rts), Ok(Some(Transition::Other)));
        assert_eq!(to(&mut a, QpState::Sqd), Ok(Some(Transition::Drain)));
        assert!(a.sq_draining);
        // Draining: only ERR.
        assert_eq!(to(&mut a, QpState::Rts), Err(Refusal::Inval));
        assert_eq!(to(&mut a, QpState::Sqd), Err(Refusal::Inval));
        assert_eq!(a.state, QpState::Sqd);
        // Once drained, SQD -> RTS is allowed.
        a.sq_draining = false;
        assert_eq!(to(&mut a, QpState::Rts), Ok(Some(Transition::Other)));
        assert_eq!(to(&mut a, QpState::Sqd), Ok(Some(Transition::Drain)));
        assert_eq!(to(&mut a, QpState::Err), Ok(Some(Transition::Error)));
        assert_eq!(a.state, QpState::Err);
        assert_eq!(to(&mut a, QpState::Reset), Ok(Some(Transition::Reset)));
        assert_eq!(a.state, QpState::Reset);
        // The table refuses: EINVAL, nothing applied.
        let req = ModifyReq {
            qp_state: 3,
            qkey: 7,
            ..ModifyReq::default()
        };
        let r = a.apply(&req, mask::STATE | mask::QKEY, |_, _| false, |n| n);
        assert_eq!(r, Err(Refusal::Inval));
        assert_eq!((a.state, a.qkey), (QpState::Reset, 0));
        // No state in the mask: no table lookup, no transition.
        let r = a.apply(&req, mask::QKEY, |_, _| unreachable!(), |n| n);
        assert_eq!((r, a.qkey), (Ok(None), 7));
    }

    #[test]
    fn cur_state() {
        let mut a = QpAttrs::new(0);
        let mut seen = None;
        let req = ModifyReq {
            qp_state: 2,
            cur_qp_state: 1,
            ..ModifyReq::default()
        };
        let r = a.apply(
            &req,
            mask::STATE | mask::CUR_STATE,
            |c, n| {
                seen = Some((c, n));
                true
            },
            |n| n,
        );
        assert_eq!(r, Ok(Some(Transition::Other)));
        // The table sees the claimed current state...
        assert_eq!(seen, Some((1, 2)));
        // ...and the C driver records qp_state as cur_qp_state.
        assert_eq!(a.cur_qp_state, 2);
        // Without STATE the new state is the current one.
        let a = QpAttrs::new(0);
        assert_eq!(
            a.chk_state(&req, mask::CUR_STATE, |c, n| c == 1 && n == 1),
            Ok(QpState::Init)
        );
        // An invalid state never passes the core's table.
        assert_eq!(
            a.chk_state(&ModifyReq { qp_state: 7, ..req }, mask::STATE, any),
            Err(Refusal::Inval)
        );
    }

    #[test]
    fn attributes() {
        let mut a = QpAttrs::new(1);
        assert_eq!((a.port_num, a.path_mtu, a.mtu), (1, 1, 256));
        let req = ModifyReq {
            sq_psn: 0xff12_3456,
            rq_psn: 0x0100_0001,
            path_mtu: 3,
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 6,
            max_rd_atomic: 3,
            max_dest_rd_atomic: 200,
            dest_qp_num: 0x11,
            min_rnr_timer: 12,
            qkey: 0x8001_0000,
            pkey_index: 0,
            port_num: 1,
            alt_port_num: 1,
            alt_timeout: 9,
            alt_pkey_index: 3,
            path_mig_state: 2,
            en_sqd_async_notify: 1,
            qp_access_flags: 7,
            ah: AhAttr {
                flow_label: 0x12345,
                dmac: [2, 0, 0, 0, 0, 1],
                ..ah(GidType::RoceV2, true)
            },
            alt_ah: ah(GidType::RoceV2, false),
            ..ModifyReq::default()
        };
        let r = a.apply(&req, mask::STANDARD_BITS & !mask::STATE, any, |ns| {
            ns / 1_000_000
        });
        assert_eq!(r, Ok(None));
        assert_eq!(
            (a.sq_psn, a.req_psn, a.comp_psn),
            (0x12_3456, 0x12_3456, 0x12_3456)
        );
        assert_eq!((a.rq_psn, a.resp_psn), (1, 1));
        assert_eq!((a.path_mtu, a.mtu), (3, 1024));
        // 4.096 us << 14 = 67 ms.
        assert_eq!((a.timeout, a.timeout_jiffies), (14, 67));
        assert_eq!((a.retry_cnt, a.comp_retry_cnt), (7, 7));
        assert_eq!((a.rnr_retry, a.comp_rnr_retry), (6, 6));
        assert_eq!((a.max_rd_atomic, a.req_rd_atomic), (4, 4));
        // 256 in a byte, as the C driver reports it; 256 resources.
        assert_eq!((a.max_dest_rd_atomic, a.rd_atomic_resources), (0, 256));
        assert_eq!(a.dest_qp_num, 0x11);
        assert_eq!(a.min_rnr_timer, 12);
        assert_eq!(a.qkey, 0x8001_0000);
        assert_eq!((a.alt_port_num, a.alt_timeout, a.alt_pkey_index), (1, 9, 3));
        assert_eq!(a.path_mig_state, 2);
        assert_eq!(a.en_sqd_async_notify, 1);
        assert_eq!(a.qp_access_flags, 7);
        assert_eq!(a.pri_av.flow_label, 0x12345);
        assert_eq!(a.pri_av.network_type, NETWORK_TYPE_IPV4);
        assert_eq!(a.pri_av.dmac, [2, 0, 0, 0, 0, 1]);
        assert_eq!(a.alt_av.network_type, NETWORK_TYPE_IPV6);
        // A timeout short enough to be 0 jiffies waits one.
        let t1 = ModifyReq { timeout: 1, ..req };
        a.apply(&t1, mask::TIMEOUT, any, |ns| ns / 1_000_000)
            .unwrap();
        assert_eq!(a.timeout_jiffies, 1);
        let t0 = ModifyReq { timeout: 0, ..req };
        a.apply(&t0, mask::TIMEOUT, any, |_| unreachable!())
            .unwrap();
        assert_eq!(a.timeout_jiffies, 0);
        // rd_atomic 0 stays 0.
        let z = ModifyReq {
            max_rd_atomic: 0,
            max_dest_rd_atomic: 0,
            ..req
        };
        a.apply(
            &z,
            mask::MAX_QP_RD_ATOMIC | mask::MAX_DEST_RD_ATOMIC,
            any,
            |n| n,
        )
        .unwrap();
        assert_eq!((a.max_rd_atomic, a.rd_atomic_resources), (0, 0));
        // An MTU the C driver cannot convert.
        let m0 = ModifyReq { path_mtu: 0, ..req };
        a.apply(&m0, mask::PATH_MTU, any, |n| n).unwrap();
        assert_eq!(a.mtu, u32::MAX);
    }

    #[test]
    fn ports() {
        assert_eq!(initial_src_port(0), 0xc000);
        // hash_32(17, 14) = (17 * 0x61c88647) >> 18.
        assert_eq!(
            initial_src_port(17),
            0xc000 + ((17u32.wrapping_mul(0x61c8_8647)) >> 18) as u16
        );
        for q in [1, 16, 17, 1000, 0xff_ffff] {
            assert!(initial_src_port(q) >= 0xc000);
        }
        // From the flow label: low 14 bits xor the high 6.
        assert_eq!(udp_sport(0x12345, 0, 0), 0xc000 | ((0x2345 ^ 0x4) as u16));
        assert_eq!(udp_sport(0x0_0001, 5, 6), 0xc001);
        // Without one, symmetric in the QPNs.
        assert_eq!(udp_sport(0, 17, 18), udp_sport(0, 18, 17));
        let v = 17u64 * 18;
        let fl = ((v ^ (v >> 20) ^ ((v ^ (v >> 20)) >> 40)) & 0xf_ffff) as u32;
        assert_eq!(udp_sport(0, 17, 18), udp_sport(fl, 0, 0));
    }

    #[test]
    fn mtus() {
        assert_eq!(mtu_bytes(1), 256);
        assert_eq!(mtu_bytes(5), 4096);
        assert_eq!(mtu_bytes(6), u32::MAX);
        assert_eq!(roundup_pow_of_two(3), 4);
        assert_eq!(roundup_pow_of_two(128), 128);
        assert_eq!(roundup_pow_of_two(0), 0);
    }

    #[test]
    fn sport_of_qpn_is_the_c_hash() {
        // hash_32(17, 14) = (17 * 0x61c88647) >> 18.
        let h = (17u32.wrapping_mul(0x61c8_8647) >> 18) as u16;
        assert_eq!(initial_src_port(17), 0xc000 | h);
        // 17 * 0x61c88647 = 0x7e50eab7 (mod 2^32), >> 18 = 0x1f94.
        assert_eq!(initial_src_port(17), 0xdf94);
        for qpn in [0, 1, 16, 0xff_fffe, 0xff_ffff] {
            assert!(initial_src_port(qpn) >= 0xc000);
        }
    }

    #[test]
    fn sport_of_flow() {
        // A flow label: low 14 bits xor the high 6.
        assert_eq!(udp_sport(0x1, 5, 6), 0xc001);
        assert_eq!(udp_sport(0xf_c000, 5, 6), 0xc03f);
        assert_eq!(udp_sport(0xf_ffff, 0, 0), 0xc000 | (0x3fff ^ 0x3f));
        // No label: the symmetric label of the two QPNs.
        assert_eq!(udp_sport(0, 17, 18), udp_sport(0, 18, 17));
        assert_eq!(udp_sport(0, 17, 18), udp_sport(17 * 18, 0, 0));
    }
}
