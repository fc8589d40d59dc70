// SPDX-License-Identifier: GPL-2.0

//! The messages of the InfiniBand communication manager.
//!
//! Pure logic with no kernel dependency: built into the module and into the
//! host unit tests (`tests/host`). Every message is a 256-byte MAD of the CM
//! class: the common MAD header, then the message laid out as the IBTA's
//! tables 106 to 120 say (the kernel's `include/rdma/ibta_vol1_c12.h`). A
//! message type is a view over a MAD buffer, borrowed or owned: reading a
//! field needs `B: Borrow<Mad>`, writing it `B: BorrowMut<Mad>`. Readers never
//! fail and never panic whatever the bytes are; a peer's length fields are
//! clamped to the room the message has. Writers truncate scalar values to the
//! field's width, as the kernel's `IBA_SET` does.

use super::field::{
    Bytes,
    Field,
    FieldValue,
    Mad,
    TooLong,
    MAD_SIZE, //
};
use core::borrow::{
    Borrow,
    BorrowMut, //
};

/// `IB_MGMT_BASE_VERSION`.
pub(crate) const BASE_VERSION: u8 = 1;
/// `IB_MGMT_CLASS_CM`.
pub(crate) const MGMT_CLASS_CM: u8 = 0x07;
/// `IB_CM_CLASS_VERSION`: the CM of IBTA 1.2.
pub(crate) const CM_CLASS_VERSION: u8 = 2;
/// `IB_MGMT_METHOD_SEND`: every CM message is a send.
pub(crate) const METHOD_SEND: u8 = 0x03;

/// The common MAD header (`struct ib_mad_hdr`).
pub(crate) mod hdr {
    use super::Field;

    /// `base_version`.
    pub(crate) const BASE_VERSION: Field = Field::hdr(0, 1);
    /// `mgmt_class`.
    pub(crate) const MGMT_CLASS: Field = Field::hdr(1, 1);
    /// `class_version`.
    pub(crate) const CLASS_VERSION: Field = Field::hdr(2, 1);
    /// `method`.
    pub(crate) const METHOD: Field = Field::hdr(3, 1);
    /// `status`.
    pub(crate) const STATUS: Field = Field::hdr(4, 2);
    /// `class_specific`.
    pub(crate) const CLASS_SPECIFIC: Field = Field::hdr(6, 2);
    /// `tid`: the transaction ID.
    pub(crate) const TID: Field = Field::hdr(8, 8);
    /// `attr_id`: which CM message this is.
    pub(crate) const ATTR_ID: Field = Field::hdr(16, 2);
    /// `resv`.
    pub(crate) const RESV: Field = Field::hdr(18, 2);
    /// `attr_mod`: carries the ECE options of REQ, REP and SIDR_REP.
    pub(crate) const ATTR_MOD: Field = Field::hdr(20, 4);
}

/// A view of the common MAD header.
pub(crate) struct MadHdr<B>(pub(crate) B);

impl<B: Borrow<Mad>> MadHdr<B> {
    /// `base_version`.
    pub(crate) fn base_version(&self) -> u8 {
        u8::from_field(hdr::BASE_VERSION.get(self.0.borrow()))
    }
    /// `mgmt_class`.
    pub(crate) fn mgmt_class(&self) -> u8 {
        u8::from_field(hdr::MGMT_CLASS.get(self.0.borrow()))
    }
    /// `class_version`.
    pub(crate) fn class_version(&self) -> u8 {
        u8::from_field(hdr::CLASS_VERSION.get(self.0.borrow()))
    }
    /// `method`.
    pub(crate) fn method(&self) -> u8 {
        u8::from_field(hdr::METHOD.get(self.0.borrow()))
    }
    /// `status`.
    pub(crate) fn status(&self) -> u16 {
        u16::from_field(hdr::STATUS.get(self.0.borrow()))
    }
    /// The transaction ID, in CPU order.
    pub(crate) fn tid(&self) -> u64 {
        hdr::TID.get(self.0.borrow())
    }
    /// The attribute ID, in CPU order.
    pub(crate) fn attr_id(&self) -> u16 {
        u16::from_field(hdr::ATTR_ID.get(self.0.borrow()))
    }
    /// The attribute modifier, in CPU order.
    pub(crate) fn attr_mod(&self) -> u32 {
        u32::from_field(hdr::ATTR_MOD.get(self.0.borrow()))
    }
}

impl<B: BorrowMut<Mad>> MadHdr<B> {
    /// Zeroes the MAD and writes the header of a CM message
    /// (`cm_format_mad_hdr()`, plus `attr_mod` as `cm_format_mad_ece_hdr()`).
    pub(crate) fn format(&mut self, attr_id: u16, tid: u64, attr_mod: u32) {
        let mad = self.0.borrow_mut();
        mad.fill(0);
        hdr::BASE_VERSION.set(mad, BASE_VERSION.into());
        hdr::MGMT_CLASS.set(mad, MGMT_CLASS_CM.into());
        hdr::CLASS_VERSION.set(mad, CM_CLASS_VERSION.into());
        hdr::METHOD.set(mad, METHOD_SEND.into());
        hdr::ATTR_ID.set(mad, attr_id.into());
        hdr::TID.set(mad, tid);
        hdr::ATTR_MOD.set(mad, attr_mod.into());
    }
}

macro_rules! cm_msg {
    (
        $(#[$doc:meta])*
        $name:ident, $module:ident, $attr:literal;
        $( $(#[$fdoc:meta])* $get:ident, $set:ident: $ty:ty = $konst:ident, $ctor:ident($($arg:expr),*); )*
        @bytes
        $( $(#[$bdoc:meta])* $bget:ident, $bset:ident = $bkonst:ident, ($boff:expr, $bbits:expr); )*
    ) => {
        $(#[$doc])*
        #[doc = ""]
        #[doc = "Field positions, named as in `ibta_vol1_c12.h`."]
        pub(crate) mod $module {
            use super::{
                Bytes,
                Field, //
            };

            /// The attribute ID of the message.
            pub(crate) const ATTR_ID: u16 = $attr;
            $(
                #[doc = concat!("`CM_", stringify!($konst), "`.")]
                pub(crate) const $konst: Field = Field::$ctor($($arg),*);
            )*
            $(
                #[doc = concat!("`CM_", stringify!($bkonst), "`.")]
                pub(crate) const $bkonst: Bytes = Bytes::mloc($boff, $bbits);
            )*

            /// Every scalar field, by name.
            #[cfg(test)]
            pub(crate) const FIELDS: &[(&str, Field)] = &[$((stringify!($konst), $konst)),*];
            /// Every byte-array field, by name.
            #[cfg(test)]
            pub(crate) const BYTES: &[(&str, Bytes)] = &[$((stringify!($bkonst), $bkonst)),*];
        }

        $(#[$doc])*
        pub(crate) struct $name<B>(pub(crate) B);

        impl<B: Borrow<Mad>> $name<B> {
            /// The message's MAD header.
            pub(crate) fn hdr(&self) -> MadHdr<&Mad> {
                MadHdr(self.0.borrow())
            }
            $(
                $(#[$fdoc])*
                pub(crate) fn $get(&self) -> $ty {
                    <$ty>::from_field($module::$konst.get(self.0.borrow()))
                }
            )*
            $(
                $(#[$bdoc])*
                pub(crate) fn $bget(&self) -> &[u8] {
                    $module::$bkonst.get(self.0.borrow())
                }
            )*
        }

        impl<B: BorrowMut<Mad>> $name<B> {
            /// Zeroes the MAD and writes the message's header.
            pub(crate) fn format(&mut self, tid: u64, attr_mod: u32) {
                MadHdr(self.0.borrow_mut()).format($module::ATTR_ID, tid, attr_mod);
            }
            $(
                #[doc = concat!("Sets [`Self::", stringify!($get), "`].")]
                pub(crate) fn $set(&mut self, v: $ty) {
                    $module::$konst.set(self.0.borrow_mut(), v.to_field())
                }
            )*
            $(
                #[doc = concat!("Sets [`Self::", stringify!($bget), "`], zero-padded.")]
                pub(crate) fn $bset(&mut self, data: &[u8]) -> Result<(), TooLong> {
                    $module::$bkonst.set(self.0.borrow_mut(), data)
                }
            )*
        }
    };
}

cm_msg! {
    /// REQ, the connection request (table 106).
    Req, req, 0x0010;
    /// The sender's communication ID.
    local_comm_id, set_local_comm_id: u32 = REQ_LOCAL_COMM_ID, f32(0, 32);
    /// The ECE vendor ID.
    vendor_id, set_vendor_id: u32 = REQ_VENDOR_ID, f32(5, 24);
    /// The service the request connects to.
    service_id, set_service_id: u64 = REQ_SERVICE_ID, f64(8);
    /// The sender's node GUID.
    local_ca_guid, set_local_ca_guid: u64 = REQ_LOCAL_CA_GUID, f64(16);
    /// The sender's Q_Key (unused by the kernel's CM).
    local_q_key, set_local_q_key: u32 = REQ_LOCAL_Q_KEY, f32(28, 32);
    /// The sender's QP number.
    local_qpn, set_local_qpn: u32 = REQ_LOCAL_QPN, f32(32, 24);
    /// RDMA reads and atomics the sender accepts at once.
    responder_resources, set_responder_resources: u8 = REQ_RESPONDER_RESOURCES, f8(35, 8);
    /// The sender's EE context (RD only).
    local_eecn, set_local_eecn: u32 = REQ_LOCAL_EECN, f32(36, 24);
    /// RDMA reads and atomics the sender issues at once.
    initiator_depth, set_initiator_depth: u8 = REQ_INITIATOR_DEPTH, f8(39, 8);
    /// The receiver's EE context (RD only).
    remote_eecn, set_remote_eecn: u32 = REQ_REMOTE_EECN, f32(40, 24);
    /// How long the receiver may take to answer, 4.096 us * 2^n.
    remote_cm_response_timeout, set_remote_cm_response_timeout: u8 =
        REQ_REMOTE_CM_RESPONSE_TIMEOUT, f8(43, 5);
    /// 0 RC, 1 UC, 3 extended (see [`Self::qp_type`]).
    transport_service_type, set_transport_service_type: u8 =
        REQ_TRANSPORT_SERVICE_TYPE, bloc(43, 5, 2);
    /// End-to-end flow control.
    end_to_end_flow_control, set_end_to_end_flow_control: u8 =
        REQ_END_TO_END_FLOW_CONTROL, bloc(43, 7, 1);
    /// The sender's receive queue starting PSN.
    starting_psn, set_starting_psn: u32 = REQ_STARTING_PSN, f32(44, 24);
    /// How long the sender takes to answer, 4.096 us * 2^n.
    local_cm_response_timeout, set_local_cm_response_timeout: u8 =
        REQ_LOCAL_CM_RESPONSE_TIMEOUT, f8(47, 5);
    /// Transport retries for the connection's QP.
    retry_count, set_retry_count: u8 = REQ_RETRY_COUNT, bloc(47, 5, 3);
    /// The partition key.
    partition_key, set_partition_key: u16 = REQ_PARTITION_KEY, f16(48, 16);
    /// The path MTU (`enum ib_mtu`).
    path_packet_payload_mtu, set_path_packet_payload_mtu: u8 =
        REQ_PATH_PACKET_PAYLOAD_MTU, f8(50, 4);
    /// RD channel exists (RD only).
    rdc_exists, set_rdc_exists: u8 = REQ_RDC_EXISTS, bloc(50, 4, 1);
    /// RNR NAK retries for the connection's QP.
    rnr_retry_count, set_rnr_retry_count: u8 = REQ_RNR_RETRY_COUNT, bloc(50, 5, 3);
    /// How many times the CM resends a message before giving up.
    max_cm_retries, set_max_cm_retries: u8 = REQ_MAX_CM_RETRIES, f8(51, 4);
    /// The sender's QP uses an SRQ.
    srq, set_srq: u8 = REQ_SRQ, bloc(51, 4, 1);
    /// 1 XRC, when the transport service type is 3.
    extended_transport_type, set_extended_transport_type: u8 =
        REQ_EXTENDED_TRANSPORT_TYPE, bloc(51, 5, 3);
    /// Primary path: the sender's LID.
    primary_local_port_lid, set_primary_local_port_lid: u16 =
        REQ_PRIMARY_LOCAL_PORT_LID, f16(52, 16);
    /// Primary path: the receiver's LID.
    primary_remote_port_lid, set_primary_remote_port_lid: u16 =
        REQ_PRIMARY_REMOTE_PORT_LID, f16(54, 16);
    /// Primary path: the flow label.
    primary_flow_label, set_primary_flow_label: u32 = REQ_PRIMARY_FLOW_LABEL, f32(88, 20);
    /// Primary path: the static rate.
    primary_packet_rate, set_primary_packet_rate: u8 = REQ_PRIMARY_PACKET_RATE, bloc(91, 2, 6);
    /// Primary path: the traffic class.
    primary_traffic_class, set_primary_traffic_class: u8 = REQ_PRIMARY_TRAFFIC_CLASS, f8(92, 8);
    /// Primary path: the hop limit.
    primary_hop_limit, set_primary_hop_limit: u8 = REQ_PRIMARY_HOP_LIMIT, f8(93, 8);
    /// Primary path: the service level.
    primary_sl, set_primary_sl: u8 = REQ_PRIMARY_SL, f8(94, 4);
    /// Primary path: both ends are in one subnet.
    primary_subnet_local, set_primary_subnet_local: u8 = REQ_PRIMARY_SUBNET_LOCAL, bloc(94, 4, 1);
    /// Primary path: the local ACK timeout, 4.096 us * 2^n.
    primary_local_ack_timeout, set_primary_local_ack_timeout: u8 =
        REQ_PRIMARY_LOCAL_ACK_TIMEOUT, f8(95, 5);
    /// Alternate path: the sender's LID.
    alternate_local_port_lid, set_alternate_local_port_lid: u16 =
        REQ_ALTERNATE_LOCAL_PORT_LID, f16(96, 16);
    /// Alternate path: the receiver's LID.
    alternate_remote_port_lid, set_alternate_remote_port_lid: u16 =
        REQ_ALTERNATE_REMOTE_PORT_LID, f16(98, 16);
    /// Alternate path: the flow label.
    alternate_flow_label, set_alternate_flow_label: u32 = REQ_ALTERNATE_FLOW_LABEL, f32(132, 20);
    /// Alternate path: the static rate.
    alternate_packet_rate, set_alternate_packet_rate: u8 =
        REQ_ALTERNATE_PACKET_RATE, bloc(135, 2, 6);
    /// Alternate path: the traffic class.
    alternate_traffic_class, set_alternate_traffic_class: u8 =
        REQ_ALTERNATE_TRAFFIC_CLASS, f8(136, 8);
    /// Alternate path: the hop limit.
    alternate_hop_limit, set_alternate_hop_limit: u8 = REQ_ALTERNATE_HOP_LIMIT, f8(137, 8);
    /// Alternate path: the service level.
    alternate_sl, set_alternate_sl: u8 = REQ_ALTERNATE_SL, f8(138, 4);
    /// Alternate path: both ends are in one subnet.
    alternate_subnet_local, set_alternate_subnet_local: u8 =
        REQ_ALTERNATE_SUBNET_LOCAL, bloc(138, 4, 1);
    /// Alternate path: the local ACK timeout, 4.096 us * 2^n.
    alternate_local_ack_timeout, set_alternate_local_ack_timeout: u8 =
        REQ_ALTERNATE_LOCAL_ACK_TIMEOUT, f8(139, 5);
    /// Send-alternate-path supported.
    sap_supported, set_sap_supported: u8 = REQ_SAP_SUPPORTED, bloc(139, 5, 1);
    @bytes
    /// Primary path: the sender's GID.
    primary_local_port_gid, set_primary_local_port_gid =
        REQ_PRIMARY_LOCAL_PORT_GID, (56, 128);
    /// Primary path: the receiver's GID.
    primary_remote_port_gid, set_primary_remote_port_gid =
        REQ_PRIMARY_REMOTE_PORT_GID, (72, 128);
    /// Alternate path: the sender's GID.
    alternate_local_port_gid, set_alternate_local_port_gid =
        REQ_ALTERNATE_LOCAL_PORT_GID, (100, 128);
    /// Alternate path: the receiver's GID.
    alternate_remote_port_gid, set_alternate_remote_port_gid =
        REQ_ALTERNATE_REMOTE_PORT_GID, (116, 128);
    /// The consumer's private data (`IB_CM_REQ_PRIVATE_DATA_SIZE`).
    private_data, set_private_data = REQ_PRIVATE_DATA, (140, 736);
}

cm_msg! {
    /// MRA, message receipt acknowledgement (table 107).
    Mra, mra, 0x0011;
    /// The sender's communication ID.
    local_comm_id, set_local_comm_id: u32 = MRA_LOCAL_COMM_ID, f32(0, 32);
    /// The receiver's communication ID.
    remote_comm_id, set_remote_comm_id: u32 = MRA_REMOTE_COMM_ID, f32(4, 32);
    /// Which message is acknowledged ([`MsgResponse`]).
    message_mraed, set_message_mraed: u8 = MRA_MESSAGE_MRAED, f8(8, 2);
    /// How much longer the sender needs, 4.096 us * 2^n.
    service_timeout, set_service_timeout: u8 = MRA_SERVICE_TIMEOUT, f8(9, 5);
    @bytes
    /// The consumer's private data (`IB_CM_MRA_PRIVATE_DATA_SIZE`).
    private_data, set_private_data = MRA_PRIVATE_DATA, (10, 1776);
}

cm_msg! {
    /// REJ, a rejection (table 108).
    Rej, rej, 0x0012;
    /// The sender's communication ID (0 when it rejects a REQ it never
    /// gave an ID to).
    local_comm_id, set_local_comm_id: u32 = REJ_LOCAL_COMM_ID, f32(0, 32);
    /// The receiver's communication ID.
    remote_comm_id, set_remote_comm_id: u32 = REJ_REMOTE_COMM_ID, f32(4, 32);
    /// Which message is rejected ([`MsgResponse`]).
    message_rejected, set_message_rejected: u8 = REJ_MESSAGE_REJECTED, f8(8, 2);
    /// Bytes of additional rejection information, as the peer claims.
    rejected_info_length, set_rejected_info_length: u8 = REJ_REJECTED_INFO_LENGTH, f8(9, 7);
    /// The reason (`enum ib_cm_rej_reason`).
    reason, set_reason: u16 = REJ_REASON, f16(10, 16);
    @bytes
    /// The whole additional rejection information area (`IB_CM_REJ_ARI_LENGTH`).
    ari_area, set_ari = REJ_ARI, (12, 576);
    /// The consumer's private data (`IB_CM_REJ_PRIVATE_DATA_SIZE`).
    private_data, set_private_data = REJ_PRIVATE_DATA, (84, 1184);
}

cm_msg! {
    /// REP, the reply to a REQ (table 110).
    Rep, rep, 0x0013;
    /// The sender's communication ID.
    local_comm_id, set_local_comm_id: u32 = REP_LOCAL_COMM_ID, f32(0, 32);
    /// The receiver's communication ID.
    remote_comm_id, set_remote_comm_id: u32 = REP_REMOTE_COMM_ID, f32(4, 32);
    /// The sender's Q_Key.
    local_q_key, set_local_q_key: u32 = REP_LOCAL_Q_KEY, f32(8, 32);
    /// The sender's QP number.
    local_qpn, set_local_qpn: u32 = REP_LOCAL_QPN, f32(12, 24);
    /// ECE vendor ID, bits 23..16.
    vendor_id_h, set_vendor_id_h: u8 = REP_VENDOR_ID_H, f8(15, 8);
    /// The sender's EE context; the XRC target's QP number for XRC.
    local_ee_context_number, set_local_ee_context_number: u32 =
        REP_LOCAL_EE_CONTEXT_NUMBER, f32(16, 24);
    /// ECE vendor ID, bits 15..8.
    vendor_id_m, set_vendor_id_m: u8 = REP_VENDOR_ID_M, f8(19, 8);
    /// The sender's receive queue starting PSN.
    starting_psn, set_starting_psn: u32 = REP_STARTING_PSN, f32(20, 24);
    /// ECE vendor ID, bits 7..0.
    vendor_id_l, set_vendor_id_l: u8 = REP_VENDOR_ID_L, f8(23, 8);
    /// RDMA reads and atomics the sender accepts at once.
    responder_resources, set_responder_resources: u8 = REP_RESPONDER_RESOURCES, f8(24, 8);
    /// RDMA reads and atomics the sender issues at once.
    initiator_depth, set_initiator_depth: u8 = REP_INITIATOR_DEPTH, f8(25, 8);
    /// The sender's CA ACK delay, 4.096 us * 2^n.
    target_ack_delay, set_target_ack_delay: u8 = REP_TARGET_ACK_DELAY, f8(26, 5);
    /// Whether the alternate path was accepted.
    failover_accepted, set_failover_accepted: u8 = REP_FAILOVER_ACCEPTED, bloc(26, 5, 2);
    /// End-to-end flow control.
    end_to_end_flow_control, set_end_to_end_flow_control: u8 =
        REP_END_TO_END_FLOW_CONTROL, bloc(26, 7, 1);
    /// RNR NAK retries for the connection's QP.
    rnr_retry_count, set_rnr_retry_count: u8 = REP_RNR_RETRY_COUNT, f8(27, 3);
    /// The sender's QP uses an SRQ.
    srq, set_srq: u8 = REP_SRQ, bloc(27, 3, 1);
    /// The sender's node GUID.
    local_ca_guid, set_local_ca_guid: u64 = REP_LOCAL_CA_GUID, f64(28);
    @bytes
    /// The consumer's private data (`IB_CM_REP_PRIVATE_DATA_SIZE`).
    private_data, set_private_data = REP_PRIVATE_DATA, (36, 1568);
}

cm_msg! {
    /// RTU, ready to use (table 111).
    Rtu, rtu, 0x0014;
    /// The sender's communication ID.
    local_comm_id, set_local_comm_id: u32 = RTU_LOCAL_COMM_ID, f32(0, 32);
    /// The receiver's communication ID.
    remote_comm_id, set_remote_comm_id: u32 = RTU_REMOTE_COMM_ID, f32(4, 32);
    @bytes
    /// The consumer's private data (`IB_CM_RTU_PRIVATE_DATA_SIZE`).
    private_data, set_private_data = RTU_PRIVATE_DATA, (8, 1792);
}

cm_msg! {
    /// DREQ, the disconnection request (table 112).
    Dreq, dreq, 0x0015;
    /// The sender's communication ID.
    local_comm_id, set_local_comm_id: u32 = DREQ_LOCAL_COMM_ID, f32(0, 32);
    /// The receiver's communication ID.
    remote_comm_id, set_remote_comm_id: u32 = DREQ_REMOTE_COMM_ID, f32(4, 32);
    /// The receiver's QP number, as the sender knows it.
    remote_qpn_eecn, set_remote_qpn_eecn: u32 = DREQ_REMOTE_QPN_EECN, f32(8, 24);
    @bytes
    /// The consumer's private data (`IB_CM_DREQ_PRIVATE_DATA_SIZE`).
    private_data, set_private_data = DREQ_PRIVATE_DATA, (12, 1760);
}

cm_msg! {
    /// DREP, the disconnection reply (table 113).
    Drep, drep, 0x0016;
    /// The sender's communication ID.
    local_comm_id, set_local_comm_id: u32 = DREP_LOCAL_COMM_ID, f32(0, 32);
    /// The receiver's communication ID.
    remote_comm_id, set_remote_comm_id: u32 = DREP_REMOTE_COMM_ID, f32(4, 32);
    @bytes
    /// The consumer's private data (`IB_CM_DREP_PRIVATE_DATA_SIZE`).
    private_data, set_private_data = DREP_PRIVATE_DATA, (8, 1792);
}

cm_msg! {
    /// SIDR_REQ, service ID resolution request (table 119).
    SidrReq, sidr_req, 0x0017;
    /// The sender's request ID (its communication ID).
    requestid, set_requestid: u32 = SIDR_REQ_REQUESTID, f32(0, 32);
    /// The partition key.
    partition_key, set_partition_key: u16 = SIDR_REQ_PARTITION_KEY, f16(4, 16);
    /// The service to resolve.
    serviceid, set_serviceid: u64 = SIDR_REQ_SERVICEID, f64(8);
    @bytes
    /// The consumer's private data (`IB_CM_SIDR_REQ_PRIVATE_DATA_SIZE`).
    private_data, set_private_data = SIDR_REQ_PRIVATE_DATA, (16, 1728);
}

cm_msg! {
    /// SIDR_REP, service ID resolution reply (table 120).
    SidrRep, sidr_rep, 0x0018;
    /// The request ID of the SIDR_REQ answered.
    requestid, set_requestid: u32 = SIDR_REP_REQUESTID, f32(0, 32);
    /// The status (`enum ib_cm_sidr_status`).
    status, set_status: u8 = SIDR_REP_STATUS, f8(4, 8);
    /// Bytes of additional information, as the peer claims.
    additional_information_length, set_additional_information_length: u8 =
        SIDR_REP_ADDITIONAL_INFORMATION_LENGTH, f8(5, 8);
    /// ECE vendor ID, high part.
    vendor_id_h, set_vendor_id_h: u16 = SIDR_REP_VENDOR_ID_H, f16(6, 16);
    /// The QP number of the service.
    qpn, set_qpn: u32 = SIDR_REP_QPN, f32(8, 24);
    /// ECE vendor ID, low byte.
    vendor_id_l, set_vendor_id_l: u8 = SIDR_REP_VENDOR_ID_L, f8(11, 8);
    /// The service resolved.
    serviceid, set_serviceid: u64 = SIDR_REP_SERVICEID, f64(12);
    /// The Q_Key of the service's QP.
    q_key, set_q_key: u32 = SIDR_REP_Q_KEY, f32(20, 32);
    @bytes
    /// The whole additional information area (`IB_CM_SIDR_REP_INFO_LENGTH`).
    info_area, set_additional_information = SIDR_REP_ADDITIONAL_INFORMATION, (24, 576);
    /// The consumer's private data (`IB_CM_SIDR_REP_PRIVATE_DATA_SIZE`).
    private_data, set_private_data = SIDR_REP_PRIVATE_DATA, (96, 1088);
}

cm_msg! {
    /// LAP, load alternate path (table 115); the kernel ignores it on RoCE.
    Lap, lap, 0x0019;
    /// The sender's communication ID.
    local_comm_id, set_local_comm_id: u32 = LAP_LOCAL_COMM_ID, f32(0, 32);
    /// The receiver's communication ID.
    remote_comm_id, set_remote_comm_id: u32 = LAP_REMOTE_COMM_ID, f32(4, 32);
    /// The receiver's QP number.
    remote_qpn_eecn, set_remote_qpn_eecn: u32 = LAP_REMOTE_QPN_EECN, f32(12, 24);
    /// How long the receiver may take to answer, 4.096 us * 2^n.
    remote_cm_response_timeout, set_remote_cm_response_timeout: u8 =
        LAP_REMOTE_CM_RESPONSE_TIMEOUT, f8(15, 5);
    /// Alternate path: the sender's LID.
    alternate_local_port_lid, set_alternate_local_port_lid: u16 =
        LAP_ALTERNATE_LOCAL_PORT_LID, f16(20, 16);
    /// Alternate path: the receiver's LID.
    alternate_remote_port_lid, set_alternate_remote_port_lid: u16 =
        LAP_ALTERNATE_REMOTE_PORT_LID, f16(22, 16);
    /// Alternate path: the flow label.
    alternate_flow_label, set_alternate_flow_label: u32 = LAP_ALTERNATE_FLOW_LABEL, f32(56, 20);
    /// Alternate path: the traffic class.
    alternate_traffic_class, set_alternate_traffic_class: u8 =
        LAP_ALTERNATE_TRAFFIC_CLASS, f8(59, 8);
    /// Alternate path: the hop limit.
    alternate_hop_limit, set_alternate_hop_limit: u8 = LAP_ALTERNATE_HOP_LIMIT, f8(60, 8);
    /// Alternate path: the static rate.
    alternate_packet_rate, set_alternate_packet_rate: u8 =
        LAP_ALTERNATE_PACKET_RATE, bloc(61, 2, 6);
    /// Alternate path: the service level.
    alternate_sl, set_alternate_sl: u8 = LAP_ALTERNATE_SL, f8(62, 4);
    /// Alternate path: both ends are in one subnet.
    alternate_subnet_local, set_alternate_subnet_local: u8 =
        LAP_ALTERNATE_SUBNET_LOCAL, bloc(62, 4, 1);
    /// Alternate path: the local ACK timeout, 4.096 us * 2^n.
    alternate_local_ack_timeout, set_alternate_local_ack_timeout: u8 =
        LAP_ALTERNATE_LOCAL_ACK_TIMEOUT, f8(63, 5);
    @bytes
    /// Alternate path: the sender's GID.
    alternate_local_port_gid, set_alternate_local_port_gid =
        LAP_ALTERNATE_LOCAL_PORT_GID, (24, 128);
    /// Alternate path: the receiver's GID.
    alternate_remote_port_gid, set_alternate_remote_port_gid =
        LAP_ALTERNATE_REMOTE_PORT_GID, (40, 128);
    /// The consumer's private data (`IB_CM_LAP_PRIVATE_DATA_SIZE`).
    private_data, set_private_data = LAP_PRIVATE_DATA, (64, 1344);
}

cm_msg! {
    /// APR, alternate path response (table 116); the kernel ignores it on RoCE.
    Apr, apr, 0x001A;
    /// The sender's communication ID.
    local_comm_id, set_local_comm_id: u32 = APR_LOCAL_COMM_ID, f32(0, 32);
    /// The receiver's communication ID.
    remote_comm_id, set_remote_comm_id: u32 = APR_REMOTE_COMM_ID, f32(4, 32);
    /// Bytes of additional information, as the peer claims.
    additional_information_length, set_additional_information_length: u8 =
        APR_ADDITIONAL_INFORMATION_LENGTH, f8(8, 8);
    /// The status (`enum ib_cm_apr_status`).
    ar_status, set_ar_status: u8 = APR_AR_STATUS, f8(9, 8);
    @bytes
    /// The whole additional information area (`IB_CM_APR_INFO_LENGTH`).
    info_area, set_additional_information = APR_ADDITIONAL_INFORMATION, (12, 576);
    /// The consumer's private data (`IB_CM_APR_PRIVATE_DATA_SIZE`).
    private_data, set_private_data = APR_PRIVATE_DATA, (84, 1184);
}

/// Which message an MRA acknowledges or a REJ rejects (`enum
/// cm_msg_response`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum MsgResponse {
    /// A REQ.
    Req = 0,
    /// A REP.
    Rep = 1,
    /// Anything else: a LAP for an MRA; for a REJ, a message after the REP.
    Other = 2,
}

impl MsgResponse {
    /// The response named by the 2-bit field value `v`; 3 names none.
    pub(crate) fn from_u8(v: u8) -> Option<MsgResponse> {
        match v {
            0 => Some(MsgResponse::Req),
            1 => Some(MsgResponse::Rep),
            2 => Some(MsgResponse::Other),
            _ => None,
        }
    }
}

/// The transports a REQ can ask for (the connected `enum ib_qp_type`s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CmQpType {
    /// `IB_QPT_RC`.
    Rc,
    /// `IB_QPT_UC`.
    Uc,
    /// `IB_QPT_XRC_INI`: the active side of an XRC connection.
    XrcIni,
    /// `IB_QPT_XRC_TGT`: the passive side of an XRC connection.
    XrcTgt,
}

/// `OPA_SPECIAL_OUI`: the top 24 bits of a GID interface ID carrying an OPA
/// extended LID.
const OPA_SPECIAL_OUI: u64 = 0x00066A;

/// Whether a 16-byte GID carries an OPA extended LID (`ib_is_opa_gid()`).
pub(crate) fn is_opa_gid(gid: &[u8]) -> bool {
    let Some(iid) = gid.get(8..16) else {
        return false;
    };
    let mut be = [0u8; 8];
    be.copy_from_slice(iid);
    u64::from_be_bytes(be) >> 40 == OPA_SPECIAL_OUI
}

impl<B: Borrow<Mad>> Req<B> {
    /// The transport asked for (`cm_req_get_qp_type()`): an XRC request
    /// arrives as `XrcTgt`, the passive side's type; `None` is the C's 0.
    pub(crate) fn qp_type(&self) -> Option<CmQpType> {
        match self.transport_service_type() {
            0 => Some(CmQpType::Rc),
            1 => Some(CmQpType::Uc),
            3 if self.extended_transport_type() == 1 => Some(CmQpType::XrcTgt),
            _ => None,
        }
    }

    /// Whether the request carries an alternate path (`cm_req_has_alt_path()`).
    pub(crate) fn has_alt_path(&self) -> bool {
        self.alternate_local_port_lid() != 0 || is_opa_gid(self.alternate_local_port_gid())
    }
}

impl<B: BorrowMut<Mad>> Req<B> {
    /// Sets the transport fields for `qp_type` (`cm_req_set_qp_type()`):
    /// anything but UC and XRC is sent as RC.
    pub(crate) fn set_qp_type(&mut self, qp_type: CmQpType) {
        match qp_type {
            CmQpType::Uc => self.set_transport_service_type(1),
            CmQpType::XrcIni => {
                self.set_transport_service_type(3);
                self.set_extended_transport_type(1);
            }
            CmQpType::Rc | CmQpType::XrcTgt => self.set_transport_service_type(0),
        }
    }
}

impl<B: Borrow<Mad>> Rep<B> {
    /// The sender's QP number as the receiver of type `qp_type` sees it
    /// (`cm_rep_get_qpn()`): an XRC target puts it in the EE context field.
    pub(crate) fn qpn(&self, qp_type: CmQpType) -> u32 {
        if qp_type == CmQpType::XrcIni {
            self.local_ee_context_number()
        } else {
            self.local_qpn()
        }
    }

    /// The 24-bit ECE vendor ID, split in three bytes on the wire.
    pub(crate) fn vendor_id(&self) -> u32 {
        (u32::from(self.vendor_id_h()) << 16)
            | (u32::from(self.vendor_id_m()) << 8)
            | u32::from(self.vendor_id_l())
    }
}

impl<B: BorrowMut<Mad>> Rep<B> {
    /// Sets the ECE vendor ID's three bytes.
    pub(crate) fn set_vendor_id(&mut self, vendor_id: u32) {
        self.set_vendor_id_l(u8::from_field(vendor_id.into()));
        self.set_vendor_id_m(u8::from_field((vendor_id >> 8).into()));
        self.set_vendor_id_h(u8::from_field((vendor_id >> 16).into()));
    }
}

impl<B: Borrow<Mad>> Rej<B> {
    /// The additional rejection information, as long as the peer says but
    /// no longer than its area.
    pub(crate) fn ari(&self) -> &[u8] {
        rej::REJ_ARI.prefix(self.0.borrow(), self.rejected_info_length().into())
    }

    /// The rejector's node GUID that a timeout REJ carries as its ARI (read
    /// by `cm_acquire_rejected_id()` whatever the ARI length).
    pub(crate) fn ari_guid(&self) -> u64 {
        let mut be = [0u8; 8];
        be.copy_from_slice(self.ari_area().get(..8).unwrap_or(&[0; 8]));
        u64::from_be_bytes(be)
    }
}

impl<B: BorrowMut<Mad>> Rej<B> {
    /// Sets the additional rejection information and its length, as
    /// `cm_format_rej()`: an empty one leaves both zero.
    pub(crate) fn set_ari_with_length(&mut self, ari: &[u8]) -> Result<(), TooLong> {
        if ari.is_empty() {
            return Ok(());
        }
        self.set_ari(ari)?;
        // At most 72 bytes once set_ari() accepted it: fits the 7 bits.
        self.set_rejected_info_length(u8::from_field(ari.len() as u64));
        Ok(())
    }
}

impl<B: Borrow<Mad>> SidrRep<B> {
    /// The additional information, as long as the peer says but no longer
    /// than its area.
    pub(crate) fn info(&self) -> &[u8] {
        sidr_rep::SIDR_REP_ADDITIONAL_INFORMATION
            .prefix(self.0.borrow(), self.additional_information_length().into())
    }
}

impl<B: BorrowMut<Mad>> SidrRep<B> {
    /// Sets the ECE vendor ID as `cm_format_sidr_rep()` does: its low byte,
    /// then its second byte in the 16-bit high field.
    pub(crate) fn set_vendor_id(&mut self, vendor_id: u32) {
        self.set_vendor_id_l(u8::from_field(vendor_id.into()));
        self.set_vendor_id_h(u16::from_field(((vendor_id >> 8) & 0xff).into()));
    }
}

impl<B: Borrow<Mad>> Apr<B> {
    /// The additional information, as long as the peer says but no longer
    /// than its area.
    pub(crate) fn info(&self) -> &[u8] {
        apr::APR_ADDITIONAL_INFORMATION
            .prefix(self.0.borrow(), self.additional_information_length().into())
    }
}

/// A received CM message, by kind.
pub(crate) enum Msg<'a> {
    /// REQ.
    Req(Req<&'a Mad>),
    /// MRA.
    Mra(Mra<&'a Mad>),
    /// REJ.
    Rej(Rej<&'a Mad>),
    /// REP.
    Rep(Rep<&'a Mad>),
    /// RTU.
    Rtu(Rtu<&'a Mad>),
    /// DREQ.
    Dreq(Dreq<&'a Mad>),
    /// DREP.
    Drep(Drep<&'a Mad>),
    /// SIDR_REQ.
    SidrReq(SidrReq<&'a Mad>),
    /// SIDR_REP.
    SidrRep(SidrRep<&'a Mad>),
    /// LAP.
    Lap(Lap<&'a Mad>),
    /// APR.
    Apr(Apr<&'a Mad>),
}

/// Why bytes are not a CM message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// Fewer bytes than a MAD.
    Short(usize),
    /// A MAD of another management class.
    NotCm(u8),
    /// A CM attribute the CM does not handle (`cm_recv_handler()` drops it).
    UnknownAttr(u16),
}

/// Recognizes the CM message at the start of `bytes`.
pub(crate) fn decode(bytes: &[u8]) -> Result<Msg<'_>, DecodeError> {
    let mad: &Mad = bytes
        .get(..MAD_SIZE)
        .and_then(|b| b.try_into().ok())
        .ok_or(DecodeError::Short(bytes.len()))?;
    let h = MadHdr(mad);
    if h.mgmt_class() != MGMT_CLASS_CM {
        return Err(DecodeError::NotCm(h.mgmt_class()));
    }
    Ok(match h.attr_id() {
        req::ATTR_ID => Msg::Req(Req(mad)),
        mra::ATTR_ID => Msg::Mra(Mra(mad)),
        rej::ATTR_ID => Msg::Rej(Rej(mad)),
        rep::ATTR_ID => Msg::Rep(Rep(mad)),
        rtu::ATTR_ID => Msg::Rtu(Rtu(mad)),
        dreq::ATTR_ID => Msg::Dreq(Dreq(mad)),
        drep::ATTR_ID => Msg::Drep(Drep(mad)),
        sidr_req::ATTR_ID => Msg::SidrReq(SidrReq(mad)),
        sidr_rep::ATTR_ID => Msg::SidrRep(SidrRep(mad)),
        lap::ATTR_ID => Msg::Lap(Lap(mad)),
        apr::ATTR_ID => Msg::Apr(Apr(mad)),
        other => return Err(DecodeError::UnknownAttr(other)),
    })
}

/// The consumer's private data limits (`enum ib_cm_data_size`).
pub(crate) mod size {
    /// `IB_CM_REQ_PRIVATE_DATA_SIZE`.
    pub(crate) const REQ_PRIVATE_DATA: usize = 92;
    /// `IB_CM_MRA_PRIVATE_DATA_SIZE`.
    pub(crate) const MRA_PRIVATE_DATA: usize = 222;
    /// `IB_CM_REJ_PRIVATE_DATA_SIZE`.
    pub(crate) const REJ_PRIVATE_DATA: usize = 148;
    /// `IB_CM_REP_PRIVATE_DATA_SIZE`.
    pub(crate) const REP_PRIVATE_DATA: usize = 196;
    /// `IB_CM_RTU_PRIVATE_DATA_SIZE`.
    pub(crate) const RTU_PRIVATE_DATA: usize = 224;
    /// `IB_CM_DREQ_PRIVATE_DATA_SIZE`.
    pub(crate) const DREQ_PRIVATE_DATA: usize = 220;
    /// `IB_CM_DREP_PRIVATE_DATA_SIZE`.
    pub(crate) const DREP_PRIVATE_DATA: usize = 224;
    /// `IB_CM_REJ_ARI_LENGTH`.
    pub(crate) const REJ_ARI: usize = 72;
    /// `IB_CM_LAP_PRIVATE_DATA_SIZE`.
    pub(crate) const LAP_PRIVATE_DATA: usize = 168;
    /// `IB_CM_APR_PRIVATE_DATA_SIZE`.
    pub(crate) const APR_PRIVATE_DATA: usize = 148;
    /// `IB_CM_APR_INFO_LENGTH`.
    pub(crate) const APR_INFO: usize = 72;
    /// `IB_CM_SIDR_REQ_PRIVATE_DATA_SIZE`.
    pub(crate) const SIDR_REQ_PRIVATE_DATA: usize = 216;
    /// `IB_CM_SIDR_REP_PRIVATE_DATA_SIZE`.
    pub(crate) const SIDR_REP_PRIVATE_DATA: usize = 136;
    /// `IB_CM_SIDR_REP_INFO_LENGTH`.
    pub(crate) const SIDR_REP_INFO: usize = 72;
}
