// SPDX-License-Identifier: GPL-2.0

//! The CM messages an ID sends, built from its connection state, and what
//! an ID and its consumer learn from the messages it receives.
//!
//! Pure logic with no kernel dependency: built into the module and into the
//! host unit tests (`tests/host`). These are `cm.c`'s `cm_format_*()` and
//! `cm_format_*_event()` functions, with their swaps: what the peer calls
//! its responder resources is this side's initiator depth, its local
//! response timeout this side's remote one. All numbers are in CPU order;
//! IDs, GUIDs and service IDs are as the wire carries them.

use super::{
    field::{
        Mad,
        TooLong, //
    },
    msgs::{
        CmQpType,
        Drep,
        Dreq,
        Mra,
        MsgResponse,
        Rej,
        Rep,
        Req,
        Rtu,
        SidrRep,
        SidrReq, //
    },
    timing::{
        ack_timeout,
        MRA_SETTING, //
    },
};
use core::borrow::Borrow;

/// `IB_LID_PERMISSIVE`: "whichever LID the packet comes from".
pub(crate) const LID_PERMISSIVE: u16 = 0xFFFF;

/// The transaction ID of a message an ID starts (`cm_form_tid()`): the
/// agent's high half, then the ID's local ID as the C's `__be32` reads as
/// an integer.
pub(crate) fn form_tid(hi_tid: u32, local_id: u32) -> u64 {
    (u64::from(hi_tid) << 32) | u64::from(u32::from_ne_bytes(local_id.to_be_bytes()))
}

/// What a REQ says about one path (from a `struct sa_path_rec`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PathFields {
    /// The sender's GID.
    pub(crate) sgid: [u8; 16],
    /// The receiver's GID.
    pub(crate) dgid: [u8; 16],
    /// The sender's LID.
    pub(crate) slid: u16,
    /// The receiver's LID.
    pub(crate) dlid: u16,
    /// Flow label (20 bits).
    pub(crate) flow_label: u32,
    /// Static rate (`enum ib_rate`).
    pub(crate) rate: u8,
    /// Traffic class.
    pub(crate) traffic_class: u8,
    /// Hop limit: at most 1 within a subnet.
    pub(crate) hop_limit: u8,
    /// Service level.
    pub(crate) sl: u8,
    /// Packet life time, an IBA time value.
    pub(crate) packet_life_time: u8,
}

/// The consumer's REQ (`struct ib_cm_req_param`) with what the ID adds.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ReqFields<'a> {
    /// The transaction ID ([`form_tid`]).
    pub(crate) tid: u64,
    /// The ID's local ID.
    pub(crate) local_id: u32,
    /// The device's node GUID.
    pub(crate) node_guid: u64,
    /// The device's CA ACK delay.
    pub(crate) ack_delay: u8,
    /// The service ID.
    pub(crate) service_id: u64,
    /// The QP number.
    pub(crate) qp_num: u32,
    /// The QP type (RC, UC or XRC initiator).
    pub(crate) qp_type: Option<CmQpType>,
    /// Starting PSN.
    pub(crate) starting_psn: u32,
    /// Partition key of the primary path.
    pub(crate) pkey: u16,
    /// Path MTU of the primary path.
    pub(crate) mtu: u8,
    /// RDMA reads and atomics accepted at once.
    pub(crate) responder_resources: u8,
    /// RDMA reads and atomics issued at once.
    pub(crate) initiator_depth: u8,
    /// How long the passive side may take to answer.
    pub(crate) remote_cm_response_timeout: u8,
    /// How long this side takes to answer.
    pub(crate) local_cm_response_timeout: u8,
    /// End-to-end flow control.
    pub(crate) flow_control: u8,
    /// Transport retries.
    pub(crate) retry_count: u8,
    /// RNR retries.
    pub(crate) rnr_retry_count: u8,
    /// Tries of each CM message.
    pub(crate) max_cm_retries: u8,
    /// The QP uses an SRQ.
    pub(crate) srq: u8,
    /// The primary path.
    pub(crate) primary: PathFields,
    /// The inbound primary path's destination LID, if one was given
    /// (`primary_path_inbound`), for a routed connection.
    pub(crate) primary_inbound_dlid: Option<u16>,
    /// The alternate path, if any.
    pub(crate) alternate: Option<PathFields>,
    /// ECE: vendor ID and options.
    pub(crate) ece_vendor_id: u32,
    /// ECE: options, sent as the attribute modifier.
    pub(crate) ece_attr_mod: u32,
    /// Private data.
    pub(crate) private_data: &'a [u8],
}

/// `cm_format_req()`: the REQ of `p` into `out`.
pub(crate) fn req(out: &mut Mad, p: &ReqFields<'_>) -> Result<(), TooLong> {
    let mut m = Req(out);
    m.format(p.tid, p.ece_attr_mod);
    m.set_local_comm_id(p.local_id);
    m.set_service_id(p.service_id);
    m.set_local_ca_guid(p.node_guid);
    m.set_local_qpn(p.qp_num);
    m.set_initiator_depth(p.initiator_depth);
    m.set_remote_cm_response_timeout(p.remote_cm_response_timeout);
    m.set_qp_type(p.qp_type.unwrap_or(CmQpType::Rc));
    m.set_end_to_end_flow_control(p.flow_control);
    m.set_starting_psn(p.starting_psn);
    m.set_local_cm_response_timeout(p.local_cm_response_timeout);
    m.set_partition_key(p.pkey);
    m.set_path_packet_payload_mtu(p.mtu);
    m.set_max_cm_retries(p.max_cm_retries);
    if p.qp_type != Some(CmQpType::XrcIni) {
        m.set_responder_resources(p.responder_resources);
        m.set_retry_count(p.retry_count);
        m.set_rnr_retry_count(p.rnr_retry_count);
        m.set_srq(p.srq);
    }
    let pri = &p.primary;
    m.set_primary_local_port_gid(&pri.sgid)?;
    m.set_primary_remote_port_gid(&pri.dgid)?;
    if pri.hop_limit <= 1 {
        m.set_primary_local_port_lid(pri.slid);
        m.set_primary_remote_port_lid(pri.dlid);
    } else {
        // Routed: the remote LID is not known here.
        m.set_primary_local_port_lid(p.primary_inbound_dlid.unwrap_or(LID_PERMISSIVE));
        m.set_primary_remote_port_lid(LID_PERMISSIVE);
    }
    m.set_primary_flow_label(pri.flow_label);
    m.set_primary_packet_rate(pri.rate);
    m.set_primary_traffic_class(pri.traffic_class);
    m.set_primary_hop_limit(pri.hop_limit);
    m.set_primary_sl(pri.sl);
    m.set_primary_subnet_local(u8::from(pri.hop_limit <= 1));
    m.set_primary_local_ack_timeout(ack_timeout(p.ack_delay, pri.packet_life_time));
    if let Some(alt) = &p.alternate {
        m.set_alternate_local_port_gid(&alt.sgid)?;
        m.set_alternate_remote_port_gid(&alt.dgid)?;
        if alt.hop_limit <= 1 {
            m.set_alternate_local_port_lid(alt.slid);
            m.set_alternate_remote_port_lid(alt.dlid);
        } else {
            m.set_alternate_local_port_lid(LID_PERMISSIVE);
            m.set_alternate_remote_port_lid(LID_PERMISSIVE);
        }
        m.set_alternate_flow_label(alt.flow_label);
        m.set_alternate_packet_rate(alt.rate);
        m.set_alternate_traffic_class(alt.traffic_class);
        m.set_alternate_hop_limit(alt.hop_limit);
        m.set_alternate_sl(alt.sl);
        m.set_alternate_subnet_local(u8::from(alt.hop_limit <= 1));
        m.set_alternate_local_ack_timeout(ack_timeout(p.ack_delay, alt.packet_life_time));
    }
    m.set_vendor_id(p.ece_vendor_id);
    m.set_private_data(p.private_data)
}

/// What the passive side's consumer is told of a REQ
/// (`struct ib_cm_req_event_param`, `cm_format_req_event()`), and what its
/// new ID keeps (`cm_req_handler()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReqEvent {
    /// The sender's communication ID: the ID's remote ID.
    pub(crate) remote_id: u32,
    /// The service ID asked for.
    pub(crate) service_id: u64,
    /// The sender's node GUID.
    pub(crate) remote_ca_guid: u64,
    /// The sender's Q_Key.
    pub(crate) remote_qkey: u32,
    /// The sender's QP number.
    pub(crate) remote_qpn: u32,
    /// The transport (`None`: the C's 0).
    pub(crate) qp_type: Option<CmQpType>,
    /// The sender's starting PSN: this side's send queue PSN.
    pub(crate) starting_psn: u32,
    /// This side's responder resources: the sender's initiator depth.
    pub(crate) responder_resources: u8,
    /// This side's initiator depth: the sender's responder resources.
    pub(crate) initiator_depth: u8,
    /// How long this side may take: the REQ's remote response timeout.
    pub(crate) local_cm_response_timeout: u8,
    /// How long the sender takes: the REQ's local response timeout.
    pub(crate) remote_cm_response_timeout: u8,
    /// End-to-end flow control.
    pub(crate) flow_control: u8,
    /// Transport retries.
    pub(crate) retry_count: u8,
    /// RNR retries.
    pub(crate) rnr_retry_count: u8,
    /// The sender's QP uses an SRQ.
    pub(crate) srq: u8,
    /// Tries of each CM message.
    pub(crate) max_cm_retries: u8,
    /// Partition key.
    pub(crate) pkey: u16,
    /// Path MTU.
    pub(crate) mtu: u8,
    /// ECE vendor ID.
    pub(crate) ece_vendor_id: u32,
    /// ECE options.
    pub(crate) ece_attr_mod: u32,
}

impl ReqEvent {
    /// Reads a received REQ.
    pub(crate) fn of<B: Borrow<Mad>>(m: &Req<B>) -> ReqEvent {
        ReqEvent {
            remote_id: m.local_comm_id(),
            service_id: m.service_id(),
            remote_ca_guid: m.local_ca_guid(),
            remote_qkey: m.local_q_key(),
            remote_qpn: m.local_qpn(),
            qp_type: m.qp_type(),
            starting_psn: m.starting_psn(),
            responder_resources: m.initiator_depth(),
            initiator_depth: m.responder_resources(),
            local_cm_response_timeout: m.remote_cm_response_timeout(),
            remote_cm_response_timeout: m.local_cm_response_timeout(),
            flow_control: m.end_to_end_flow_control(),
            retry_count: m.retry_count(),
            rnr_retry_count: m.rnr_retry_count(),
            srq: m.srq(),
            max_cm_retries: m.max_cm_retries(),
            pkey: m.partition_key(),
            mtu: m.path_packet_payload_mtu(),
            ece_vendor_id: m.vendor_id(),
            ece_attr_mod: m.hdr().attr_mod(),
        }
    }
}

/// The path record the passive side derives from a REQ
/// (`cm_format_paths_from_req()`), seen from this side: source and
/// destination swapped, the packet life time one below the ACK timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReqPath {
    /// The path's fields, this side as the source.
    pub(crate) path: PathFields,
    /// Partition key.
    pub(crate) pkey: u16,
    /// MTU.
    pub(crate) mtu: u8,
    /// Service ID.
    pub(crate) service_id: u64,
}

/// The primary path of a REQ; `wc_slid` is the LID the REQ came from.
pub(crate) fn primary_path<B: Borrow<Mad>>(m: &Req<B>, wc_slid: u16) -> ReqPath {
    let mut gids = ([0u8; 16], [0u8; 16]);
    gids.0.copy_from_slice(m.primary_remote_port_gid());
    gids.1.copy_from_slice(m.primary_local_port_gid());
    let t = m.primary_local_ack_timeout();
    ReqPath {
        path: PathFields {
            sgid: gids.0,
            dgid: gids.1,
            slid: m.primary_remote_port_lid(),
            dlid: wc_slid,
            flow_label: m.primary_flow_label(),
            rate: m.primary_packet_rate(),
            traffic_class: m.primary_traffic_class(),
            hop_limit: m.primary_hop_limit(),
            sl: m.primary_sl(),
            packet_life_time: t.saturating_sub(1),
        },
        pkey: m.partition_key(),
        mtu: m.path_packet_payload_mtu(),
        service_id: m.service_id(),
    }
}

/// The alternate path of a REQ, if it has one.
pub(crate) fn alternate_path<B: Borrow<Mad>>(m: &Req<B>) -> Option<ReqPath> {
    if !m.has_alt_path() {
        return None;
    }
    let mut gids = ([0u8; 16], [0u8; 16]);
    gids.0.copy_from_slice(m.alternate_remote_port_gid());
    gids.1.copy_from_slice(m.alternate_local_port_gid());
    let t = m.alternate_local_ack_timeout();
    Some(ReqPath {
        path: PathFields {
            sgid: gids.0,
            dgid: gids.1,
            slid: m.alternate_remote_port_lid(),
            dlid: m.alternate_local_port_lid(),
            flow_label: m.alternate_flow_label(),
            rate: m.alternate_packet_rate(),
            traffic_class: m.alternate_traffic_class(),
            hop_limit: m.alternate_hop_limit(),
            sl: m.alternate_sl(),
            packet_life_time: t.saturating_sub(1),
        },
        pkey: m.partition_key(),
        mtu: m.path_packet_payload_mtu(),
        service_id: m.service_id(),
    })
}

/// The consumer's REP (`struct ib_cm_rep_param`) with what the ID adds.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RepFields<'a> {
    /// The REQ's transaction ID.
    pub(crate) tid: u64,
    /// The ID's local ID.
    pub(crate) local_id: u32,
    /// The ID's remote ID.
    pub(crate) remote_id: u32,
    /// The device's node GUID.
    pub(crate) node_guid: u64,
    /// The device's CA ACK delay.
    pub(crate) ack_delay: u8,
    /// The connection's transport, as the REQ asked.
    pub(crate) qp_type: Option<CmQpType>,
    /// The QP number.
    pub(crate) qp_num: u32,
    /// Starting PSN.
    pub(crate) starting_psn: u32,
    /// RDMA reads and atomics accepted at once.
    pub(crate) responder_resources: u8,
    /// RDMA reads and atomics issued at once.
    pub(crate) initiator_depth: u8,
    /// Whether the alternate path is accepted.
    pub(crate) failover_accepted: u8,
    /// End-to-end flow control.
    pub(crate) flow_control: u8,
    /// RNR retries.
    pub(crate) rnr_retry_count: u8,
    /// The QP uses an SRQ.
    pub(crate) srq: u8,
    /// ECE vendor ID.
    pub(crate) ece_vendor_id: u32,
    /// ECE options.
    pub(crate) ece_attr_mod: u32,
    /// Private data.
    pub(crate) private_data: &'a [u8],
}

/// `cm_format_rep()`: the REP of `p` into `out`; an XRC target puts its
/// QP number in the EE context field and always has an SRQ.
pub(crate) fn rep(out: &mut Mad, p: &RepFields<'_>) -> Result<(), TooLong> {
    let mut m = Rep(out);
    m.format(p.tid, p.ece_attr_mod);
    m.set_local_comm_id(p.local_id);
    m.set_remote_comm_id(p.remote_id);
    m.set_starting_psn(p.starting_psn);
    m.set_responder_resources(p.responder_resources);
    m.set_target_ack_delay(p.ack_delay);
    m.set_failover_accepted(p.failover_accepted);
    m.set_rnr_retry_count(p.rnr_retry_count);
    m.set_local_ca_guid(p.node_guid);
    if p.qp_type == Some(CmQpType::XrcTgt) {
        m.set_srq(1);
        m.set_local_ee_context_number(p.qp_num);
    } else {
        m.set_initiator_depth(p.initiator_depth);
        m.set_end_to_end_flow_control(p.flow_control);
        m.set_srq(p.srq);
        m.set_local_qpn(p.qp_num);
    }
    m.set_vendor_id(p.ece_vendor_id);
    m.set_private_data(p.private_data)
}

/// What the active side's consumer is told of a REP
/// (`struct ib_cm_rep_event_param`, `cm_format_rep_event()`), and what its
/// ID keeps (`cm_rep_handler()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RepEvent {
    /// The sender's communication ID: the ID's remote ID.
    pub(crate) remote_id: u32,
    /// The sender's node GUID.
    pub(crate) remote_ca_guid: u64,
    /// The sender's Q_Key.
    pub(crate) remote_qkey: u32,
    /// The sender's QP number (from the EE context field for XRC).
    pub(crate) remote_qpn: u32,
    /// The sender's starting PSN: this side's send queue PSN.
    pub(crate) starting_psn: u32,
    /// This side's responder resources: the sender's initiator depth.
    pub(crate) responder_resources: u8,
    /// This side's initiator depth: the sender's responder resources.
    pub(crate) initiator_depth: u8,
    /// The sender's CA ACK delay.
    pub(crate) target_ack_delay: u8,
    /// Whether the alternate path was accepted.
    pub(crate) failover_accepted: u8,
    /// End-to-end flow control.
    pub(crate) flow_control: u8,
    /// RNR retries.
    pub(crate) rnr_retry_count: u8,
    /// The sender's QP uses an SRQ.
    pub(crate) srq: u8,
    /// ECE vendor ID.
    pub(crate) ece_vendor_id: u32,
    /// ECE options.
    pub(crate) ece_attr_mod: u32,
}

impl RepEvent {
    /// Reads a received REP for an ID of transport `qp_type`.
    pub(crate) fn of<B: Borrow<Mad>>(m: &Rep<B>, qp_type: CmQpType) -> RepEvent {
        RepEvent {
            remote_id: m.local_comm_id(),
            remote_ca_guid: m.local_ca_guid(),
            remote_qkey: m.local_q_key(),
            remote_qpn: m.qpn(qp_type),
            starting_psn: m.starting_psn(),
            responder_resources: m.initiator_depth(),
            initiator_depth: m.responder_resources(),
            target_ack_delay: m.target_ack_delay(),
            failover_accepted: m.failover_accepted(),
            flow_control: m.end_to_end_flow_control(),
            rnr_retry_count: m.rnr_retry_count(),
            srq: m.srq(),
            ece_vendor_id: m.vendor_id(),
            ece_attr_mod: m.hdr().attr_mod(),
        }
    }

    /// The path's QP timeout once the peer's ACK delay is known
    /// (`cm_rep_handler()` recomputes it from the timeout it had).
    pub(crate) fn av_timeout(&self, av_timeout: u8) -> u8 {
        ack_timeout(self.target_ack_delay, av_timeout.wrapping_sub(1))
    }
}

/// The communication IDs of an ID's messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Ids {
    /// The transaction ID.
    pub(crate) tid: u64,
    /// The ID's local ID.
    pub(crate) local_id: u32,
    /// The ID's remote ID.
    pub(crate) remote_id: u32,
}

/// `cm_format_mra()`: asks the peer to wait (`MRA_SETTING`) for the
/// message `mraed`.
pub(crate) fn mra(
    out: &mut Mad,
    ids: Ids,
    mraed: MsgResponse,
    private_data: &[u8],
) -> Result<(), TooLong> {
    let mut m = Mra(out);
    m.format(ids.tid, 0);
    m.set_message_mraed(mraed as u8);
    m.set_local_comm_id(ids.local_id);
    m.set_remote_comm_id(ids.remote_id);
    m.set_service_timeout(MRA_SETTING);
    m.set_private_data(private_data)
}

/// `cm_format_rej()`: a REJ of `reason` rejecting `rejected`, with the local
/// ID sent as 0 if `zero_local_id`.
pub(crate) fn rej(
    out: &mut Mad,
    ids: Ids,
    reason: u16,
    rejected: MsgResponse,
    zero_local_id: bool,
    ari: &[u8],
    private_data: &[u8],
) -> Result<(), TooLong> {
    let mut m = Rej(out);
    m.format(ids.tid, 0);
    m.set_remote_comm_id(ids.remote_id);
    m.set_local_comm_id(if zero_local_id { 0 } else { ids.local_id });
    m.set_message_rejected(rejected as u8);
    m.set_reason(reason);
    m.set_ari_with_length(ari)?;
    m.set_private_data(private_data)
}

/// `cm_format_rtu()`.
pub(crate) fn rtu(out: &mut Mad, ids: Ids, private_data: &[u8]) -> Result<(), TooLong> {
    let mut m = Rtu(out);
    m.format(ids.tid, 0);
    m.set_local_comm_id(ids.local_id);
    m.set_remote_comm_id(ids.remote_id);
    m.set_private_data(private_data)
}

/// `cm_format_dreq()`: `ids.tid` is a new one ([`form_tid`]).
pub(crate) fn dreq(
    out: &mut Mad,
    ids: Ids,
    remote_qpn: u32,
    private_data: &[u8],
) -> Result<(), TooLong> {
    let mut m = Dreq(out);
    m.format(ids.tid, 0);
    m.set_local_comm_id(ids.local_id);
    m.set_remote_comm_id(ids.remote_id);
    m.set_remote_qpn_eecn(remote_qpn);
    m.set_private_data(private_data)
}

/// `cm_format_drep()`: `ids.tid` is the DREQ's.
pub(crate) fn drep(out: &mut Mad, ids: Ids, private_data: &[u8]) -> Result<(), TooLong> {
    let mut m = Drep(out);
    m.format(ids.tid, 0);
    m.set_local_comm_id(ids.local_id);
    m.set_remote_comm_id(ids.remote_id);
    m.set_private_data(private_data)
}

/// `cm_format_sidr_req()`.
pub(crate) fn sidr_req(
    out: &mut Mad,
    tid: u64,
    local_id: u32,
    pkey: u16,
    service_id: u64,
    private_data: &[u8],
) -> Result<(), TooLong> {
    let mut m = SidrReq(out);
    m.format(tid, 0);
    m.set_requestid(local_id);
    m.set_partition_key(pkey);
    m.set_serviceid(service_id);
    m.set_private_data(private_data)
}

/// The consumer's SIDR_REP (`struct ib_cm_sidr_rep_param`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SidrRepFields<'a> {
    /// The SIDR_REQ's transaction ID.
    pub(crate) tid: u64,
    /// The SIDR_REQ's request ID (the ID's remote ID).
    pub(crate) remote_id: u32,
    /// The service ID resolved.
    pub(crate) service_id: u64,
    /// `enum ib_cm_sidr_status`.
    pub(crate) status: u8,
    /// The service's QP number.
    pub(crate) qp_num: u32,
    /// The service's Q_Key.
    pub(crate) qkey: u32,
    /// ECE vendor ID.
    pub(crate) ece_vendor_id: u32,
    /// ECE options.
    pub(crate) ece_attr_mod: u32,
    /// Additional information.
    pub(crate) info: &'a [u8],
    /// Private data.
    pub(crate) private_data: &'a [u8],
}

/// `cm_format_sidr_rep()`. As in C, the information's length field is left
/// 0 (the receiver reads a length of 0).
pub(crate) fn sidr_rep(out: &mut Mad, p: &SidrRepFields<'_>) -> Result<(), TooLong> {
    let mut m = SidrRep(out);
    m.format(p.tid, p.ece_attr_mod);
    m.set_requestid(p.remote_id);
    m.set_status(p.status);
    m.set_qpn(p.qp_num);
    m.set_serviceid(p.service_id);
    m.set_q_key(p.qkey);
    m.set_vendor_id(p.ece_vendor_id);
    m.set_additional_information(p.info)?;
    m.set_private_data(p.private_data)
}
