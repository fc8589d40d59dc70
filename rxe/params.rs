// SPDX-License-Identifier: GPL-2.0

//! The device's fixed parameters and the pure conversions around them.
//!
//! The values are those of the C driver (`rxe_param.h`), so that `ibv_devinfo
//! -v` shows the same device. No kernel dependency: this file is also built
//! by the host test crate (`tests/host`).

use core::ffi::CStr;

/// `DEFAULT_MAX_VALUE` of the C driver.
const DEFAULT_MAX_VALUE: u32 = 1 << 20;

/// IBTA vendor id: "no vendor" (IBTA v1.4 A3.3.1).
pub const VENDOR_ID: u32 = 0xff_ffff;
/// Largest memory region (all of it).
pub const MAX_MR_SIZE: u64 = u64::MAX;
/// Page sizes a memory region may use.
pub const PAGE_SIZE_CAP: u64 = 0xffff_f000;
/// Work requests per queue.
pub const MAX_QP_WR: u32 = DEFAULT_MAX_VALUE;
/// Scatter/gather entries per send or receive work request.
pub const MAX_SGE: u32 = 32;
/// Scatter/gather entries per RDMA read.
pub const MAX_SGE_RD: u32 = 32;
/// Completion queues.
pub const MAX_CQ: u32 = DEFAULT_MAX_VALUE;
/// Log2 of the completion queue size bound.
pub const MAX_LOG_CQE: u32 = 15;
/// Entries per completion queue.
pub const MAX_CQE: u32 = (1 << MAX_LOG_CQE) - 1;
/// Protection domains.
pub const MAX_PD: u32 = DEFAULT_MAX_VALUE;
/// Outstanding RDMA reads/atomics a QP responds to.
pub const MAX_QP_RD_ATOM: u32 = 128;
/// Outstanding RDMA reads/atomics the device responds to.
pub const MAX_RES_RD_ATOM: u32 = 0x3f000;
/// Outstanding RDMA reads/atomics a QP initiates.
pub const MAX_QP_INIT_RD_ATOM: u32 = 128;
/// Multicast groups.
pub const MAX_MCAST_GRP: u32 = 8192;
/// QPs per multicast group.
pub const MAX_MCAST_QP_ATTACH: u32 = 56;
/// QP attachments to multicast groups in all.
pub const MAX_TOT_MCAST_QP_ATTACH: u32 = 0x70000;
/// Address handles (32Ki - 1).
pub const MAX_AH: u32 = (1 << 15) - 1;
/// Work requests per shared receive queue.
pub const MAX_SRQ_WR: u32 = DEFAULT_MAX_VALUE;
/// Scatter/gather entries per shared receive queue work request.
pub const MAX_SRQ_SGE: u32 = 27;
/// Pages in a fast-registration page list.
pub const MAX_FMR_PAGE_LIST_LEN: u32 = 512;
/// P_Keys.
pub const MAX_PKEYS: u16 = 64;
/// Local CA ACK delay.
pub const LOCAL_CA_ACK_DELAY: u8 = 15;
/// First QP index of user QPs (0 and 1 are the special QPs).
pub const MIN_QP_INDEX: u32 = 16;
/// User contexts.
pub const MAX_UCONTEXT: u32 = DEFAULT_MAX_VALUE;
/// Queue pairs.
pub const MAX_QP: u32 = DEFAULT_MAX_VALUE - MIN_QP_INDEX;
/// First SRQ index.
pub const MIN_SRQ_INDEX: u32 = 0x0002_0001;
/// Shared receive queues.
pub const MAX_SRQ: u32 = DEFAULT_MAX_VALUE - MIN_SRQ_INDEX;
/// Last MR index; MW indices follow.
pub const MAX_MR_INDEX: u32 = DEFAULT_MAX_VALUE >> 1;
/// First MR index.
pub const MIN_MR_INDEX: u32 = 1;
/// Memory regions.
pub const MAX_MR: u32 = MAX_MR_INDEX - MIN_MR_INDEX;
/// Memory windows.
pub const MAX_MW: u32 = DEFAULT_MAX_VALUE - (MAX_MR_INDEX + 1);

/// The C driver's `RXE_UVERBS_ABI_VERSION` (rdma-core's rxe provider checks it).
pub const UVERBS_ABI_VERSION: u32 = 2;
/// Node description.
pub const NODE_DESC: &CStr = c"rxe";
/// Ports (numbered from 1).
pub const NUM_PORTS: u32 = 1;

/// Port parameters of `rxe_param.h`.
pub mod port {
    /// GID table entries.
    pub const GID_TBL_LEN: i32 = 1024;
    /// P_Key table entries.
    pub const PKEY_TBL_LEN: u16 = 1;
    /// Largest message.
    pub const MAX_MSG_SZ: u32 = 1 << 31;
    /// Virtual lanes.
    pub const MAX_VL_NUM: u8 = 1;
    /// The one P_Key: the default, full membership.
    pub const DEFAULT_PKEY: u16 = 0xffff;
}

/// `ARPHRD_ETHER`: the netdev hardware type RoCE runs over.
pub const ARPHRD_ETHER: u16 = 1;

/// Bytes of headers (Ethernet, IP, UDP, BTH and the largest extension
/// headers, ICRC) the C driver reserves below the netdev MTU.
pub const MAX_HDR_LENGTH: u32 = 80;

/// An IB path MTU (`enum ib_mtu`): 1 = 256 bytes ... 5 = 4096 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u32)]
pub enum IbMtu {
    /// 256 bytes.
    Mtu256 = 1,
    /// 512 bytes.
    Mtu512 = 2,
    /// 1024 bytes.
    Mtu1024 = 3,
    /// 2048 bytes.
    Mtu2048 = 4,
    /// 4096 bytes.
    Mtu4096 = 5,
}

impl IbMtu {
    /// The largest IB MTU that fits `bytes` of payload, if any does.
    pub fn from_payload(bytes: u32) -> Option<Self> {
        Some(match bytes {
            0..=255 => return None,
            256..=511 => Self::Mtu256,
            512..=1023 => Self::Mtu512,
            1024..=2047 => Self::Mtu1024,
            2048..=4095 => Self::Mtu2048,
            _ => Self::Mtu4096,
        })
    }

    /// The port's active MTU for a netdev MTU: what is left after the
    /// headers, at least 256 bytes (as the C driver's `rxe_set_mtu`).
    pub fn for_netdev_mtu(ndev_mtu: u32) -> Self {
        Self::from_payload(ndev_mtu.saturating_sub(MAX_HDR_LENGTH)).unwrap_or(Self::Mtu256)
    }

    /// The MTU in bytes.
    pub fn bytes(self) -> u32 {
        128 << (self as u32)
    }

    /// The `enum ib_mtu` value.
    pub fn as_raw(self) -> u32 {
        self as u32
    }
}

/// The modified EUI-64 of an EUI-48 (MAC) address, as `addrconf_addr_eui48`
/// makes it: FF:FE in the middle and the universal/local bit flipped. The
/// node GUID, system image GUID and the default GID's interface id.
pub fn eui64_from_mac(mac: &[u8; 6]) -> [u8; 8] {
    [
        mac[0] ^ 0x02,
        mac[1],
        mac[2],
        0xff,
        0xfe,
        mac[3],
        mac[4],
        mac[5],
    ]
}

/// The port counters, in the C driver's order and with its names
/// (`rxe_hw_counters.c`), as `rdma statistic` and sysfs `hw_counters` show.
pub const COUNTER_NAMES: [&CStr; 17] = [
    c"sent_pkts",
    c"rcvd_pkts",
    c"duplicate_request",
    c"out_of_seq_request",
    c"rcvd_rnr_err",
    c"send_rnr_err",
    c"rcvd_seq_err",
    c"ack_deferred",
    c"retry_exceeded_err",
    c"retry_rnr_exceeded_err",
    c"completer_retry_err",
    c"send_err",
    c"link_downed",
    c"rdma_sends",
    c"rdma_recvs",
    c"sent_bytes",
    c"rcvd_bytes",
];

/// Index of `link_downed` in [`COUNTER_NAMES`].
pub const CNT_LINK_DOWNED: usize = 12;
/// Indices of the packet counters in [`COUNTER_NAMES`].
pub const CNT_SENT_PKTS: usize = 0;
/// Received packets handed to a QP.
pub const CNT_RCVD_PKTS: usize = 1;
/// Responses queued for a completer (`RXE_CNT_SENDER_SCHED`).
pub const CNT_SENDER_SCHED: usize = 7;
/// Packets the IP layer refused.
pub const CNT_SEND_ERR: usize = 11;
/// Bytes sent, IP and UDP headers included.
pub const CNT_SENT_BYTES: usize = 15;
/// Bytes received, IP and UDP headers included.
pub const CNT_RCVD_BYTES: usize = 16;

/// Last QP index (the C driver's `RXE_MAX_QP_INDEX`).
pub const MAX_QP_INDEX: u32 = DEFAULT_MAX_VALUE;
/// Bytes of inline data per send work request (`RXE_MAX_INLINE_DATA`: room
/// for [`MAX_SGE`] scatter/gather entries).
pub const MAX_INLINE_DATA: u32 = MAX_SGE * 16;
/// `IB_ACCESS_*` flags a QP may allow (`RXE_ACCESS_SUPPORTED_QP`): remote
/// read/write/atomic, local write, MW bind, on demand, flush, optional.
pub const ACCESS_SUPPORTED_QP: u32 = 0x3ff0_035f;
/// Lowest memory window index: above every region's, so an rkey tells
/// which of the two it names.
pub const MIN_MW_INDEX: u32 = MAX_MR_INDEX + 1;
/// Highest memory window index.
pub const MAX_MW_INDEX: u32 = DEFAULT_MAX_VALUE;
/// Lowest address handle number (0 means "no AH" in a user send WQE).
pub const MIN_AH_INDEX: u32 = 1;
/// Highest address handle number.
pub const MAX_AH_INDEX: u32 = MAX_AH;

/// Last SRQ index.
pub const MAX_SRQ_INDEX: u32 = DEFAULT_MAX_VALUE;
/// Fewest work requests of a shared receive queue (smaller requests get it).
pub const MIN_SRQ_WR: u32 = 1;
/// Fewest scatter/gather entries of a shared receive queue work request.
pub const MIN_SRQ_SGE: u32 = 1;

/// Most packets a requester sends before one asks for an ACK.
pub const MAX_PKT_PER_ACK: u32 = 64;
/// Most PSNs an RC requester sends ahead of the completer: twice C's
/// `RXE_MAX_UNACKED_PSNS` (128). With 1024-byte packets and an ACK asked
/// for at a message's end, C's window holds two 64 KiB messages, and a
/// stream of them waits on the round trip of each ACK; four in flight
/// keep the responder busy while one travels (Documentation/differences.rst,
/// "The transport"). Pacing only: the packets, the ACKs asked for and the
/// counters are C's.
pub const MAX_UNACKED_PSNS: u32 = 256;
/// Packets in flight (sent, not yet freed) above which a QP stops sending:
/// twice C's `RXE_INFLIGHT_SKBS_PER_QP_HIGH` (64), so that the send window
/// above is not cut short by transmissions the NIC has not completed yet.
pub const INFLIGHT_SKBS_PER_QP_HIGH: u32 = 128;
/// Packets in flight below which a stopped QP sends again.
pub const INFLIGHT_SKBS_PER_QP_LOW: u32 = 16;
/// `retry_cnt` and `rnr_retry` value meaning "retry for ever".
pub const RETRY_INFINITE: u8 = 7;

/// Index of `duplicate_request` in [`COUNTER_NAMES`].
pub const CNT_DUP_REQ: usize = 2;
/// Index of `out_of_seq_request`.
pub const CNT_OUT_OF_SEQ_REQ: usize = 3;
/// Index of `rcvd_rnr_err`.
pub const CNT_RCV_RNR: usize = 4;
/// Index of `send_rnr_err`.
pub const CNT_SND_RNR: usize = 5;
/// Index of `rcvd_seq_err`.
pub const CNT_RCV_SEQ_ERR: usize = 6;
/// Index of `retry_exceeded_err`.
pub const CNT_RETRY_EXCEEDED: usize = 8;
/// Index of `retry_rnr_exceeded_err`.
pub const CNT_RNR_RETRY_EXCEEDED: usize = 9;
/// Index of `completer_retry_err`.
pub const CNT_COMP_RETRY: usize = 10;
/// Index of `rdma_sends`.
pub const CNT_RDMA_SEND: usize = 13;
/// Index of `rdma_recvs`.
pub const CNT_RDMA_RECV: usize = 14;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_match_c() {
        assert_eq!(MAX_QP, 1_048_560);
        assert_eq!(MAX_SRQ, 917_503);
        assert_eq!(MAX_MR, 524_287);
        assert_eq!(MAX_MW, 524_287);
        assert_eq!(MAX_CQE, 32_767);
        assert_eq!(MAX_AH, 32_767);
    }

    #[test]
    fn eui64() {
        assert_eq!(
            eui64_from_mac(&[0x52, 0x54, 0x00, 0x00, 0x02, 0x01]),
            [0x50, 0x54, 0x00, 0xff, 0xfe, 0x00, 0x02, 0x01]
        );
        assert_eq!(eui64_from_mac(&[0x02, 0, 0, 0, 0, 0])[0], 0);
    }

    #[test]
    fn mtu() {
        assert_eq!(IbMtu::for_netdev_mtu(1500), IbMtu::Mtu1024);
        assert_eq!(IbMtu::for_netdev_mtu(9000), IbMtu::Mtu4096);
        assert_eq!(IbMtu::for_netdev_mtu(600), IbMtu::Mtu512);
        assert_eq!(IbMtu::for_netdev_mtu(591), IbMtu::Mtu256);
        assert_eq!(IbMtu::for_netdev_mtu(592), IbMtu::Mtu512);
        assert_eq!(IbMtu::for_netdev_mtu(68), IbMtu::Mtu256);
        assert_eq!(IbMtu::for_netdev_mtu(0), IbMtu::Mtu256);
        assert_eq!(IbMtu::for_netdev_mtu(4176), IbMtu::Mtu4096);
        assert_eq!(IbMtu::for_netdev_mtu(4175), IbMtu::Mtu2048);
        assert_eq!(IbMtu::Mtu1024.bytes(), 1024);
        assert_eq!(IbMtu::Mtu4096.as_raw(), 5);
    }

    #[test]
    fn counters() {
        assert_eq!(COUNTER_NAMES[CNT_LINK_DOWNED], c"link_downed");
        assert_eq!(COUNTER_NAMES.len(), 17);
        assert_eq!(COUNTER_NAMES[CNT_DUP_REQ], c"duplicate_request");
        assert_eq!(COUNTER_NAMES[CNT_OUT_OF_SEQ_REQ], c"out_of_seq_request");
        assert_eq!(COUNTER_NAMES[CNT_RCV_RNR], c"rcvd_rnr_err");
        assert_eq!(COUNTER_NAMES[CNT_SND_RNR], c"send_rnr_err");
        assert_eq!(COUNTER_NAMES[CNT_RCV_SEQ_ERR], c"rcvd_seq_err");
        assert_eq!(COUNTER_NAMES[CNT_RETRY_EXCEEDED], c"retry_exceeded_err");
        assert_eq!(
            COUNTER_NAMES[CNT_RNR_RETRY_EXCEEDED],
            c"retry_rnr_exceeded_err"
        );
        assert_eq!(COUNTER_NAMES[CNT_COMP_RETRY], c"completer_retry_err");
        assert_eq!(COUNTER_NAMES[CNT_RDMA_SEND], c"rdma_sends");
        assert_eq!(COUNTER_NAMES[CNT_RDMA_RECV], c"rdma_recvs");
        assert_eq!(COUNTER_NAMES[CNT_SENT_PKTS], c"sent_pkts");
        assert_eq!(COUNTER_NAMES[CNT_RCVD_PKTS], c"rcvd_pkts");
        assert_eq!(COUNTER_NAMES[CNT_SEND_ERR], c"send_err");
        assert_eq!(COUNTER_NAMES[CNT_SENDER_SCHED], c"ack_deferred");
        assert_eq!(COUNTER_NAMES[CNT_SENT_BYTES], c"sent_bytes");
        assert_eq!(COUNTER_NAMES[CNT_RCVD_BYTES], c"rcvd_bytes");
    }
}
