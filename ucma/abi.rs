// SPDX-License-Identifier: GPL-2.0

//! The command and response structures of `/dev/infiniband/rdma_cm`.
//!
//! Pure logic with no kernel dependency: built into the module and into the
//! host unit tests (`tests/host`). Layouts follow
//! `include/uapi/rdma/rdma_user_cm.h` (native endian, as the ABI is); each
//! command is decoded from the exact bytes copied from the user, each
//! response encoded into a zeroed buffer of its exact size, so no byte of a
//! response is left uninitialised.

/// `RDMA_USER_CM_ABI_VERSION`.
pub(crate) const ABI_VERSION: u32 = 4;
/// `RDMA_MAX_PRIVATE_DATA`.
pub(crate) const MAX_PRIVATE_DATA: usize = 256;
/// `sizeof(struct __kernel_sockaddr_storage)`.
pub(crate) const SOCKADDR_STORAGE_SIZE: usize = 128;
/// `sizeof(struct sockaddr_in6)`.
pub(crate) const SOCKADDR_IN6_SIZE: usize = 28;
/// `sizeof(struct sockaddr_in)`.
pub(crate) const SOCKADDR_IN_SIZE: usize = 16;
/// `sizeof(struct sockaddr_ib)`.
pub(crate) const SOCKADDR_IB_SIZE: usize = 48;
/// `sizeof(struct ib_uverbs_ah_attr)`.
pub(crate) const AH_ATTR_SIZE: usize = 32;
/// `sizeof(struct ib_user_path_rec)`.
pub(crate) const USER_PATH_REC_SIZE: usize = 64;
/// `sizeof(struct ib_path_rec_data)`.
pub(crate) const PATH_REC_DATA_SIZE: usize = 72;
/// `sizeof(struct ib_uverbs_qp_attr)`.
pub(crate) const QP_ATTR_SIZE: usize = 144;

/// Address families.
pub(crate) const AF_INET: u16 = 2;
/// IPv6.
pub(crate) const AF_INET6: u16 = 10;
/// InfiniBand native addressing.
pub(crate) const AF_IB: u16 = 27;

/// Event numbers the module treats specially (`enum rdma_cm_event_type`).
pub(crate) const EVENT_CONNECT_REQUEST: u32 = 4;
/// `RDMA_CM_EVENT_DEVICE_REMOVAL`.
pub(crate) const EVENT_DEVICE_REMOVAL: u32 = 11;
/// `RDMA_CM_EVENT_MULTICAST_JOIN`.
pub(crate) const EVENT_MULTICAST_JOIN: u32 = 12;
/// `RDMA_CM_EVENT_MULTICAST_ERROR`.
pub(crate) const EVENT_MULTICAST_ERROR: u32 = 13;

/// Little helper reading native-endian integers out of a command's bytes.
///
/// Out-of-range reads yield zero instead of panicking; every caller reads
/// within the fixed size of its own command, so this never happens.
struct Rd<'a>(&'a [u8]);

impl Rd<'_> {
    fn arr<const N: usize>(&self, off: usize) -> [u8; N] {
        let mut out = [0u8; N];
        if let Some(s) = off.checked_add(N).and_then(|end| self.0.get(off..end)) {
            out.copy_from_slice(s);
        }
        out
    }
    fn u8(&self, off: usize) -> u8 {
        self.0.get(off).copied().unwrap_or(0)
    }
    fn u16(&self, off: usize) -> u16 {
        u16::from_ne_bytes(self.arr(off))
    }
    fn u32(&self, off: usize) -> u32 {
        u32::from_ne_bytes(self.arr(off))
    }
    fn u64(&self, off: usize) -> u64 {
        u64::from_ne_bytes(self.arr(off))
    }
}

/// A field of a command, read native-endian at its byte offset.
trait Field {
    fn read(r: &Rd<'_>, off: usize) -> Self;
}

/// The integers, native endian as the ABI is.
macro_rules! int_field {
    ($($t:ty),*) => {
        $(impl Field for $t {
            fn read(r: &Rd<'_>, off: usize) -> Self {
                <$t>::from_ne_bytes(r.arr(off))
            }
        })*
    };
}

int_field!(u8, u16, u32, u64);

impl<const N: usize> Field for [u8; N] {
    fn read(r: &Rd<'_>, off: usize) -> Self {
        r.arr(off)
    }
}

/// Declares a command of fixed-offset fields, `SIZE` bytes long, and its
/// `decode` from exactly those bytes as copied from the user.
macro_rules! command {
    (
        $(#[$meta:meta])*
        struct $name:ident[$size:literal] {
            $($field:ident: $ty:ty = $off:literal,)*
        }
    ) => {
        $(#[$meta])*
        pub(crate) struct $name {
            $(pub(crate) $field: $ty,)*
        }

        impl $name {
            pub(crate) const SIZE: usize = $size;
            pub(crate) fn decode(b: &[u8; Self::SIZE]) -> Self {
                let r = Rd(b);
                Self {
                    $($field: Field::read(&r, $off),)*
                }
            }
        }
    };
}

/// Writer of native-endian integers into a response buffer (bounds-checked,
/// out-of-range writes are dropped).
struct Wr<'a>(&'a mut [u8]);

impl Wr<'_> {
    fn bytes(&mut self, off: usize, b: &[u8]) {
        if let Some(d) = off
            .checked_add(b.len())
            .and_then(|end| self.0.get_mut(off..end))
        {
            d.copy_from_slice(b);
        }
    }
    fn u8(&mut self, off: usize, v: u8) {
        self.bytes(off, &[v]);
    }
    fn u16(&mut self, off: usize, v: u16) {
        self.bytes(off, &v.to_ne_bytes());
    }
    fn u32(&mut self, off: usize, v: u32) {
        self.bytes(off, &v.to_ne_bytes());
    }
    fn u64(&mut self, off: usize, v: u64) {
        self.bytes(off, &v.to_ne_bytes());
    }
}

/// The size of the address in a `sockaddr_storage` by its family, as
/// `rdma_addr_size()` computes it (0 for an unknown family).
pub(crate) fn addr_size(addr: &[u8]) -> usize {
    match Rd(addr).u16(0) {
        AF_INET => SOCKADDR_IN_SIZE,
        AF_INET6 => SOCKADDR_IN6_SIZE,
        AF_IB => SOCKADDR_IB_SIZE,
        _ => 0,
    }
}

/// A `sockaddr_storage` as bytes.
pub(crate) type SockAddrBytes = [u8; SOCKADDR_STORAGE_SIZE];

/// Widens a `sockaddr_in6`-sized field into a storage buffer.
fn storage_from_in6(b: [u8; SOCKADDR_IN6_SIZE]) -> SockAddrBytes {
    let mut s = [0u8; SOCKADDR_STORAGE_SIZE];
    Wr(&mut s).bytes(0, &b);
    s
}

command! {
    /// `struct rdma_ucm_create_id`.
    struct CreateId[24] {
        uid: u64 = 0,
        response: u64 = 8,
        ps: u16 = 16,
        qp_type: u8 = 18,
    }
}

/// Port spaces (`enum rdma_ucm_port_space`).
pub(crate) const PS_IPOIB: u16 = 0x0002;
/// `RDMA_PS_IB`.
pub(crate) const PS_IB: u16 = 0x013F;
/// `RDMA_PS_TCP`.
pub(crate) const PS_TCP: u16 = 0x0106;
/// `RDMA_PS_UDP`.
pub(crate) const PS_UDP: u16 = 0x0111;
/// `IB_QPT_RC`.
pub(crate) const QPT_RC: u32 = 2;
/// `IB_QPT_UD`.
pub(crate) const QPT_UD: u32 = 4;

/// The QP type a port space implies (`ucma_get_qp_type()`), `None` for an
/// unknown port space (`EINVAL`).
pub(crate) fn qp_type_of(ps: u16, qp_type: u8) -> Option<u32> {
    match ps {
        PS_TCP => Some(QPT_RC),
        PS_UDP | PS_IPOIB => Some(QPT_UD),
        PS_IB => Some(u32::from(qp_type)),
        _ => None,
    }
}

command! {
    /// A command made of a response pointer and an id (`struct rdma_ucm_destroy_id`,
    /// also used by LEAVE_MCAST).
    struct DestroyId[16] {
        response: u64 = 0,
        id: u32 = 8,
    }
}

/// `struct rdma_ucm_bind_ip` and `struct rdma_ucm_bind`, normalised.
pub(crate) struct Bind {
    pub(crate) id: u32,
    pub(crate) addr: SockAddrBytes,
}

/// Why an address is refused (`EINVAL`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct BadAddr;

impl Bind {
    pub(crate) const IP_SIZE: usize = 40;
    pub(crate) const SIZE: usize = 136;

    /// Decodes BIND_IP: the address must be IPv4 or IPv6.
    pub(crate) fn decode_ip(b: &[u8; Self::IP_SIZE]) -> Result<Self, BadAddr> {
        let r = Rd(b);
        let addr = storage_from_in6(r.arr(8));
        if !is_ip(&addr) {
            return Err(BadAddr);
        }
        Ok(Self {
            id: r.u32(36),
            addr,
        })
    }

    /// Decodes BIND: the size must match the address family.
    pub(crate) fn decode(b: &[u8; Self::SIZE]) -> Result<Self, BadAddr> {
        let r = Rd(b);
        let size = usize::from(r.u16(4));
        let addr: SockAddrBytes = r.arr(8);
        if r.u16(6) != 0 || size == 0 || size != addr_size(&addr) {
            return Err(BadAddr);
        }
        Ok(Self { id: r.u32(0), addr })
    }
}

/// `rdma_addr_size_in6()` != 0: the family fits a `sockaddr_in6`.
fn is_ip(addr: &[u8]) -> bool {
    matches!(Rd(addr).u16(0), AF_INET | AF_INET6)
}

/// `struct rdma_ucm_resolve_ip` and `struct rdma_ucm_resolve_addr`, normalised.
pub(crate) struct ResolveAddr {
    pub(crate) id: u32,
    pub(crate) timeout_ms: u32,
    /// The source address, if one was given.
    pub(crate) src: Option<SockAddrBytes>,
    pub(crate) dst: SockAddrBytes,
}

impl ResolveAddr {
    pub(crate) const IP_SIZE: usize = 64;
    pub(crate) const SIZE: usize = 272;

    /// Decodes RESOLVE_IP.
    pub(crate) fn decode_ip(b: &[u8; Self::IP_SIZE]) -> Result<Self, BadAddr> {
        let r = Rd(b);
        let src = storage_from_in6(r.arr(0));
        let dst = storage_from_in6(r.arr(28));
        let src_family = r.u16(0);
        if (src_family != 0 && !is_ip(&src)) || !is_ip(&dst) {
            return Err(BadAddr);
        }
        Ok(Self {
            id: r.u32(56),
            timeout_ms: r.u32(60),
            src: Some(src),
            dst,
        })
    }

    /// Decodes RESOLVE_ADDR.
    pub(crate) fn decode(b: &[u8; Self::SIZE]) -> Result<Self, BadAddr> {
        let r = Rd(b);
        let src_size = usize::from(r.u16(8));
        let dst_size = usize::from(r.u16(10));
        let src: SockAddrBytes = r.arr(16);
        let dst: SockAddrBytes = r.arr(144);
        if r.u32(12) != 0
            || (src_size != 0 && src_size != addr_size(&src))
            || dst_size == 0
            || dst_size != addr_size(&dst)
        {
            return Err(BadAddr);
        }
        Ok(Self {
            id: r.u32(0),
            timeout_ms: r.u32(4),
            src: Some(src),
            dst,
        })
    }
}

command! {
    /// Two `u32`s: RESOLVE_ROUTE (id, timeout), LISTEN (id, backlog), NOTIFY
    /// (id, event), DISCONNECT (id, -).
    struct IdArg[8] {
        id: u32 = 0,
        arg: u32 = 4,
    }
}

/// `struct rdma_ucm_disconnect`.
pub(crate) const DISCONNECT_SIZE: usize = 4;

/// The backlog LISTEN uses (`ucma_listen()`): 0 or beyond the maximum
/// means the maximum.
pub(crate) fn listen_backlog(requested: u32, max: u32) -> u32 {
    if requested == 0 || requested > max {
        max
    } else {
        requested
    }
}

command! {
    /// `struct rdma_ucm_query` (also QUERY_ROUTE, INIT_QP_ATTR: response, id, arg).
    struct Query[16] {
        response: u64 = 0,
        id: u32 = 8,
        option: u32 = 12,
    }
}

/// QUERY options.
pub(crate) const QUERY_ADDR: u32 = 0;
/// `RDMA_USER_CM_QUERY_PATH`.
pub(crate) const QUERY_PATH: u32 = 1;
/// `RDMA_USER_CM_QUERY_GID`.
pub(crate) const QUERY_GID: u32 = 2;
/// `RDMA_USER_CM_QUERY_IB_SERVICE`.
pub(crate) const QUERY_IB_SERVICE: u32 = 3;

/// `struct rdma_ucm_query_ib_service_resp` header size.
pub(crate) const QUERY_IB_SERVICE_RESP_HDR: usize = 8;
/// `sizeof(struct ib_user_service_rec)`.
pub(crate) const USER_SERVICE_REC_SIZE: usize = 176;

/// How many service records fit a QUERY_IB_SERVICE response of `out_len`
/// bytes (at least the header, checked first).
pub(crate) fn ib_service_recs_fitting(out_len: usize) -> usize {
    out_len.saturating_sub(QUERY_IB_SERVICE_RESP_HDR) / USER_SERVICE_REC_SIZE
}

/// Encodes QUERY_IB_SERVICE's response: the total number of records, then
/// the records that fit (`recs`, already cut to what fits). As
/// `ucma_query_ib_service()`, nothing at all is written when no record fits.
pub(crate) fn encode_query_ib_service(num: u32, recs: &[u8], out: &mut [u8]) -> usize {
    if recs.is_empty() {
        return 0;
    }
    let mut w = Wr(out);
    w.u32(0, num);
    w.bytes(QUERY_IB_SERVICE_RESP_HDR, recs);
    QUERY_IB_SERVICE_RESP_HDR + recs.len()
}

command! {
    /// `struct rdma_ucm_resolve_ib_service`.
    struct ResolveIbService[88] {
        id: u32 = 0,
        service_id: u64 = 8,
        service_name: [u8; 64] = 16,
        flags: u32 = 80,
        reserved: u32 = 84,
    }
}

/// What the kernel knows of a CM ID's device, for query responses.
#[derive(Clone, Copy, Default)]
pub(crate) struct DevInfo {
    /// `node_guid` as stored (big endian, passed through as is).
    pub(crate) node_guid: u64,
    pub(crate) ibdev_index: u32,
    pub(crate) port_num: u8,
    /// P_Key, big endian as the ABI carries it.
    pub(crate) pkey_be: u16,
}

/// `struct rdma_ucm_query_addr_resp` (QUERY_ADDR and QUERY_GID).
pub(crate) struct QueryAddrResp {
    pub(crate) dev: Option<DevInfo>,
    pub(crate) src: SockAddrBytes,
    pub(crate) src_size: u16,
    pub(crate) dst: SockAddrBytes,
    pub(crate) dst_size: u16,
}

impl QueryAddrResp {
    pub(crate) const SIZE: usize = 280;
    /// The shortest response buffer accepted (`offsetof(.., ibdev_index)`).
    pub(crate) const MIN_OUT: usize = 272;
    /// Writes the response into `b`, which must be zeroed (the room of
    /// the addresses beyond their sizes stays zero).
    pub(crate) fn encode_into(&self, b: &mut [u8; Self::SIZE]) {
        let mut w = Wr(b);
        if let Some(d) = &self.dev {
            w.u64(0, d.node_guid);
            w.u8(8, d.port_num);
            w.u16(10, d.pkey_be);
            w.u32(272, d.ibdev_index);
        }
        w.u16(12, self.src_size);
        w.u16(14, self.dst_size);
        let src_len = usize::from(self.src_size).min(SOCKADDR_STORAGE_SIZE);
        let dst_len = usize::from(self.dst_size).min(SOCKADDR_STORAGE_SIZE);
        w.bytes(16, self.src.get(..src_len).unwrap_or(&[]));
        w.bytes(144, self.dst.get(..dst_len).unwrap_or(&[]));
    }
}

/// A `struct sockaddr_ib` for QUERY_GID (`sib_family`, `sib_pkey`, the GID
/// in `sib_addr`, `sib_sid`; the rest zero).
pub(crate) fn sockaddr_ib(pkey_be: u16, gid: [u8; 16], sid_be: u64) -> SockAddrBytes {
    let mut s = [0u8; SOCKADDR_STORAGE_SIZE];
    let mut w = Wr(&mut s);
    w.u16(0, AF_IB);
    w.u16(2, pkey_be);
    w.bytes(8, &gid);
    w.u64(24, sid_be);
    s
}

/// The family of an address.
pub(crate) fn family(addr: &[u8]) -> u16 {
    Rd(addr).u16(0)
}

/// `struct rdma_ucm_query_route_resp`.
pub(crate) struct QueryRouteResp {
    pub(crate) dev: Option<DevInfo>,
    pub(crate) ib_route: [[u8; USER_PATH_REC_SIZE]; 2],
    pub(crate) src: SockAddrBytes,
    pub(crate) dst: SockAddrBytes,
    pub(crate) num_paths: u32,
}

impl QueryRouteResp {
    pub(crate) const SIZE: usize = 208;
    /// The shortest response buffer accepted (`offsetof(.., ibdev_index)`).
    pub(crate) const MIN_OUT: usize = 200;
    /// Writes the response into `b`, which must be zeroed.
    pub(crate) fn encode_into(&self, b: &mut [u8; Self::SIZE]) {
        let mut w = Wr(b);
        w.bytes(8, &self.ib_route[0]);
        w.bytes(8 + USER_PATH_REC_SIZE, &self.ib_route[1]);
        // The C module copies a sockaddr_in for AF_INET, else a sockaddr_in6.
        for (off, a) in [(136, &self.src), (164, &self.dst)] {
            let n = if Rd(a).u16(0) == AF_INET {
                SOCKADDR_IN_SIZE
            } else {
                SOCKADDR_IN6_SIZE
            };
            w.bytes(off, a.get(..n).unwrap_or(&[]));
        }
        if let Some(d) = &self.dev {
            w.u64(0, d.node_guid);
            w.u32(192, self.num_paths);
            w.u8(196, d.port_num);
            w.u32(200, d.ibdev_index);
        }
    }
}

/// `struct rdma_ucm_query_path_resp` header size.
pub(crate) const QUERY_PATH_RESP_HDR: usize = 8;

/// `IB_PATH_GMP | IB_PATH_PRIMARY | IB_PATH_BIDIRECTIONAL`.
pub(crate) const PATH_FLAGS_PRIMARY_GMP_BIDI: u32 = 1 | (1 << 1) | (1 << 3) | (1 << 5);

/// Encodes QUERY_PATH's response into `out`, the buffer of the size user
/// space offered: as many packed path records as fit, taken from `packed`
/// only as far as they do. Returns the number of bytes to copy out.
pub(crate) fn encode_query_path(
    out: &mut [u8],
    num_paths: u32,
    packed: impl IntoIterator<Item = [u8; 64]>,
) -> usize {
    let mut w = Wr(out);
    w.u32(0, num_paths);
    let mut packed = packed.into_iter();
    let mut len = QUERY_PATH_RESP_HDR;
    while let Some(end) = len
        .checked_add(PATH_REC_DATA_SIZE)
        .filter(|&end| end <= w.0.len())
    {
        let Some(rec) = packed.next() else {
            break;
        };
        w.u32(len, PATH_FLAGS_PRIMARY_GMP_BIDI);
        w.bytes(len + 8, &rec);
        len = end;
    }
    len
}

/// `struct rdma_ucm_conn_param`: of CONNECT/ACCEPT with the private data
/// in a buffer of its own (`P` the default), or of an event with it
/// borrowed from the CM's event until it is encoded ([`EventConn`]).
#[derive(Clone, Copy)]
pub(crate) struct ConnParam<P = [u8; MAX_PRIVATE_DATA]> {
    pub(crate) qp_num: u32,
    pub(crate) qkey: u32,
    pub(crate) private_data: P,
    pub(crate) private_data_len: u8,
    pub(crate) srq: u8,
    pub(crate) responder_resources: u8,
    pub(crate) initiator_depth: u8,
    pub(crate) flow_control: u8,
    pub(crate) retry_count: u8,
    pub(crate) rnr_retry_count: u8,
    pub(crate) valid: u8,
}

impl ConnParam {
    pub(crate) const SIZE: usize = 272;
    fn decode(r: &Rd<'_>, o: usize) -> Self {
        Self {
            qp_num: r.u32(o),
            qkey: r.u32(o + 4),
            private_data: r.arr(o + 8),
            private_data_len: r.u8(o + 264),
            srq: r.u8(o + 265),
            responder_resources: r.u8(o + 266),
            initiator_depth: r.u8(o + 267),
            flow_control: r.u8(o + 268),
            retry_count: r.u8(o + 269),
            rnr_retry_count: r.u8(o + 270),
            valid: r.u8(o + 271),
        }
    }
}

/// `struct rdma_ucm_ece`.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct Ece {
    pub(crate) vendor_id: u32,
    pub(crate) attr_mod: u32,
}

/// `struct rdma_ucm_connect` (CONNECT) and `struct rdma_ucm_accept` (ACCEPT).
pub(crate) struct Connect {
    pub(crate) uid: u64,
    pub(crate) conn_param: ConnParam,
    pub(crate) id: u32,
    pub(crate) ece: Ece,
}

impl Connect {
    pub(crate) const SIZE: usize = 288;
    /// `offsetofend(struct rdma_ucm_connect, reserved)`.
    pub(crate) const MIN_IN: usize = 280;
    pub(crate) const ACCEPT_SIZE: usize = 296;
    /// `offsetofend(struct rdma_ucm_accept, reserved)`.
    pub(crate) const ACCEPT_MIN_IN: usize = 288;

    /// Decodes CONNECT from the `in_len` bytes the user gave (up to SIZE);
    /// the ECE is taken only if the user's structure has it.
    pub(crate) fn decode(b: &[u8; Self::SIZE], in_len: usize) -> Self {
        let r = Rd(b);
        Self {
            uid: 0,
            conn_param: ConnParam::decode(&r, 0),
            id: r.u32(272),
            ece: if in_len >= Self::SIZE {
                Ece {
                    vendor_id: r.u32(280),
                    attr_mod: r.u32(284),
                }
            } else {
                Ece::default()
            },
        }
    }

    /// Decodes ACCEPT likewise.
    pub(crate) fn decode_accept(b: &[u8; Self::ACCEPT_SIZE], in_len: usize) -> Self {
        let r = Rd(b);
        Self {
            uid: r.u64(0),
            conn_param: ConnParam::decode(&r, 8),
            id: r.u32(280),
            ece: if in_len >= Self::ACCEPT_SIZE {
                Ece {
                    vendor_id: r.u32(288),
                    attr_mod: r.u32(292),
                }
            } else {
                Ece::default()
            },
        }
    }
}

/// `struct rdma_ucm_reject`.
pub(crate) struct Reject {
    pub(crate) id: u32,
    pub(crate) private_data_len: u8,
    pub(crate) reason: u8,
    pub(crate) private_data: [u8; MAX_PRIVATE_DATA],
}

/// `IB_CM_REJ_CONSUMER_DEFINED`.
pub(crate) const REJ_CONSUMER_DEFINED: u8 = 28;
/// `IB_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED`.
pub(crate) const REJ_VENDOR_OPTION_NOT_SUPPORTED: u8 = 35;

impl Reject {
    pub(crate) const SIZE: usize = 264;
    /// Decodes REJECT; only the two reasons the C module allows pass (0
    /// means consumer defined).
    pub(crate) fn decode(b: &[u8; Self::SIZE]) -> Option<Self> {
        let r = Rd(b);
        let reason = match r.u8(5) {
            0 => REJ_CONSUMER_DEFINED,
            x @ (REJ_CONSUMER_DEFINED | REJ_VENDOR_OPTION_NOT_SUPPORTED) => x,
            _ => return None,
        };
        Some(Self {
            id: r.u32(0),
            private_data_len: r.u8(4),
            reason,
            private_data: r.arr(8),
        })
    }

    /// The private data to send.
    pub(crate) fn data(&self) -> &[u8] {
        self.private_data
            .get(..usize::from(self.private_data_len))
            .unwrap_or(&self.private_data)
    }
}

/// `IB_QPS_ERR`: the highest QP state INIT_QP_ATTR accepts.
pub(crate) const QPS_ERR: u32 = 6;

/// `struct rdma_ucm_join_ip_mcast` and `struct rdma_ucm_join_mcast`, normalised.
pub(crate) struct JoinMcast {
    pub(crate) response: u64,
    pub(crate) uid: u64,
    pub(crate) id: u32,
    /// `None` when the size or flags are refused (`EINVAL`, checked after
    /// the response size, as `ucma_process_join()` does).
    pub(crate) join_state: Option<u8>,
    pub(crate) addr: SockAddrBytes,
}

/// `BIT(FULLMEMBER_JOIN)`.
pub(crate) const JOIN_STATE_FULLMEMBER: u8 = 1 << 0;
/// `BIT(SENDONLY_FULLMEMBER_JOIN)`.
pub(crate) const JOIN_STATE_SENDONLY_FULLMEMBER: u8 = 1 << 3;

impl JoinMcast {
    pub(crate) const IP_SIZE: usize = 48;
    pub(crate) const SIZE: usize = 152;

    /// Decodes JOIN_IP_MCAST (always a full-member join).
    pub(crate) fn decode_ip(b: &[u8; Self::IP_SIZE]) -> Result<Self, BadAddr> {
        let r = Rd(b);
        let addr = storage_from_in6(r.arr(16));
        if !is_ip(&addr) {
            return Err(BadAddr);
        }
        Ok(Self {
            response: r.u64(0),
            uid: r.u64(8),
            id: r.u32(44),
            join_state: Some(JOIN_STATE_FULLMEMBER),
            addr,
        })
    }

    /// Decodes JOIN_MCAST: the family must be known; the size must match
    /// it and the flags must be one of the two joins (`join_state`).
    pub(crate) fn decode(b: &[u8; Self::SIZE]) -> Result<Self, BadAddr> {
        let r = Rd(b);
        let addr: SockAddrBytes = r.arr(24);
        let size = addr_size(&addr);
        if size == 0 {
            return Err(BadAddr);
        }
        let join_state = match r.u16(22) {
            _ if usize::from(r.u16(20)) != size => None,
            0 => Some(JOIN_STATE_FULLMEMBER),
            1 => Some(JOIN_STATE_SENDONLY_FULLMEMBER),
            _ => None,
        };
        Ok(Self {
            response: r.u64(0),
            uid: r.u64(8),
            id: r.u32(16),
            join_state,
            addr,
        })
    }
}

/// `struct rdma_ucm_get_event`.
pub(crate) const GET_EVENT_SIZE: usize = 8;

/// Reads the response pointer of GET_EVENT.
pub(crate) fn decode_get_event(b: &[u8; GET_EVENT_SIZE]) -> u64 {
    Rd(b).u64(0)
}

/// A 4-byte response (`create_id_resp`, `destroy_id_resp`, `migrate_resp`).
pub(crate) fn encode_u32(v: u32) -> [u8; 4] {
    v.to_ne_bytes()
}

/// The connection parameters of an event.
pub(crate) type EventConn<'a> = ConnParam<&'a [u8]>;

impl EventConn<'_> {
    fn encode(&self, w: &mut Wr<'_>, o: usize) {
        w.u32(o, self.qp_num);
        w.u32(o + 4, self.qkey);
        w.bytes(
            o + 8,
            private_bytes(self.private_data, self.private_data_len),
        );
        w.u8(o + 264, self.private_data_len);
        w.u8(o + 265, self.srq);
        w.u8(o + 266, self.responder_resources);
        w.u8(o + 267, self.initiator_depth);
        w.u8(o + 268, self.flow_control);
        w.u8(o + 269, self.retry_count);
        w.u8(o + 270, self.rnr_retry_count);
    }
}

/// The private data an event reports: its length's worth (as the C
/// module's `memcpy` of `private_data_len` bytes), within the ABI's room.
fn private_bytes(data: &[u8], len: u8) -> &[u8] {
    let n = usize::from(len).min(MAX_PRIVATE_DATA).min(data.len());
    data.get(..n).unwrap_or(&[])
}

/// The UD parameters of an event (`struct rdma_ucm_ud_param`), the private
/// data borrowed as in [`EventConn`].
#[derive(Clone, Copy)]
pub(crate) struct UdParam<'a> {
    pub(crate) qp_num: u32,
    pub(crate) qkey: u32,
    pub(crate) ah_attr: [u8; AH_ATTR_SIZE],
    pub(crate) private_data: &'a [u8],
    pub(crate) private_data_len: u8,
}

/// The parameter union of an event.
#[derive(Clone, Copy)]
pub(crate) enum EventParam<'a> {
    None,
    /// The 64-bit argument of a WRITE_CM_EVENT event.
    Arg(u64),
    Conn(EventConn<'a>),
    Ud(UdParam<'a>),
}

/// `struct rdma_ucm_event_resp`.
#[derive(Clone, Copy)]
pub(crate) struct EventResp<'a> {
    pub(crate) uid: u64,
    pub(crate) id: u32,
    pub(crate) event: u32,
    pub(crate) status: i32,
    pub(crate) param: EventParam<'a>,
    pub(crate) ece: Ece,
}

/// The bytes of `struct rdma_ucm_event_resp`.
pub(crate) const EVENT_RESP_SIZE: usize = 336;

impl EventResp<'_> {
    /// Old 32-bit libraries do not send the trailing reserved word and ECE.
    pub(crate) const MIN_OUT: usize = EVENT_RESP_SIZE - 4 - 8;

    /// Writes the response into `b`, which must be zeroed: only the
    /// private data's length is copied, the rest of its room stays zero.
    pub(crate) fn encode_into(&self, b: &mut [u8; EVENT_RESP_SIZE]) {
        let mut w = Wr(b);
        w.u64(0, self.uid);
        w.u32(8, self.id);
        w.u32(12, self.event);
        w.bytes(16, &self.status.to_ne_bytes());
        match &self.param {
            EventParam::None => {}
            EventParam::Arg(a) => w.u64(20, *a),
            EventParam::Conn(c) => c.encode(&mut w, 20),
            EventParam::Ud(u) => {
                w.u32(20, u.qp_num);
                w.u32(24, u.qkey);
                w.bytes(28, &u.ah_attr);
                w.bytes(60, private_bytes(u.private_data, u.private_data_len));
                w.u8(316, u.private_data_len);
            }
        }
        w.u32(328, self.ece.vendor_id);
        w.u32(332, self.ece.attr_mod);
    }
}

command! {
    /// `struct rdma_ucm_set_option`.
    struct SetOption[24] {
        optval: u64 = 0,
        id: u32 = 8,
        level: u32 = 12,
        optname: u32 = 16,
        optlen: u32 = 20,
    }
}

/// A validated SET_OPTION.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum CmOption {
    /// `RDMA_OPTION_ID_TOS`.
    Tos(u8),
    /// `RDMA_OPTION_ID_REUSEADDR`.
    ReuseAddr(bool),
    /// `RDMA_OPTION_ID_AFONLY`.
    AfOnly(bool),
    /// `RDMA_OPTION_ID_ACK_TIMEOUT`.
    AckTimeout(u8),
}

/// Why an option is refused: `EINVAL` (bad length) or `ENOSYS` (unknown).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum OptError {
    Inval,
    NoSys,
}

/// `RDMA_OPTION_ID`.
pub(crate) const OPTION_ID: u32 = 0;
/// `RDMA_OPTION_IB`.
pub(crate) const OPTION_IB: u32 = 1;
/// `RDMA_OPTION_IB_PATH`.
pub(crate) const OPTION_IB_PATH: u32 = 1;

/// The path record RDMA_OPTION_IB_PATH sets (`ucma_set_ib_path()`): the
/// value is an array of `struct ib_path_rec_data`, of which the first
/// primary bidirectional GMP path counts. `None` (`EINVAL`) when the length
/// is not a whole number of entries or no entry is such a path.
pub(crate) fn pick_ib_path(val: &[u8]) -> Option<[u8; 64]> {
    if val.len() % PATH_REC_DATA_SIZE != 0 {
        return None;
    }
    val.chunks_exact(PATH_REC_DATA_SIZE)
        .find(|e| Rd(e).u32(0) == PATH_FLAGS_PRIMARY_GMP_BIDI)
        .map(|e| Rd(e).arr(8))
}

/// Validates an `RDMA_OPTION_ID` level option (`ucma_set_option_id()`).
pub(crate) fn parse_id_option(optname: u32, val: &[u8]) -> Result<CmOption, OptError> {
    let int = |v: &[u8]| -> Result<bool, OptError> {
        let a: [u8; 4] = v.try_into().map_err(|_| OptError::Inval)?;
        Ok(i32::from_ne_bytes(a) != 0)
    };
    let byte = |v: &[u8]| -> Result<u8, OptError> {
        match v {
            [b] => Ok(*b),
            _ => Err(OptError::Inval),
        }
    };
    match optname {
        0 => Ok(CmOption::Tos(byte(val)?)),
        1 => Ok(CmOption::ReuseAddr(int(val)?)),
        2 => Ok(CmOption::AfOnly(int(val)?)),
        3 => Ok(CmOption::AckTimeout(byte(val)?)),
        _ => Err(OptError::NoSys),
    }
}

/// `struct rdma_ucm_write_cm_event`.
pub(crate) struct WriteCmEvent {
    pub(crate) id: u32,
    pub(crate) event: u32,
    pub(crate) status: i32,
    pub(crate) arg: u64,
}

/// `RDMA_CM_EVENT_USER`.
pub(crate) const EVENT_USER: u32 = 18;
/// `RDMA_CM_EVENT_INTERNAL`.
pub(crate) const EVENT_INTERNAL: u32 = 19;

impl WriteCmEvent {
    pub(crate) const SIZE: usize = 320;
    /// Decodes WRITE_CM_EVENT; only user and internal events may be written.
    pub(crate) fn decode(b: &[u8; Self::SIZE]) -> Option<Self> {
        let r = Rd(b);
        let event = r.u32(8);
        if event != EVENT_USER && event != EVENT_INTERNAL {
            return None;
        }
        Some(Self {
            id: r.u32(0),
            event,
            status: i32::from_ne_bytes(r.arr(12)),
            arg: r.u64(16),
        })
    }
}

command! {
    /// `struct rdma_ucm_migrate_id`.
    struct MigrateId[16] {
        response: u64 = 0,
        id: u32 = 8,
        fd: u32 = 12,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A response `encode_into` writes into a new zeroed buffer.
    fn encoded<const N: usize>(encode_into: impl FnOnce(&mut [u8; N])) -> [u8; N] {
        let mut b = [0u8; N];
        encode_into(&mut b);
        b
    }

    fn in6(family: u16) -> [u8; SOCKADDR_IN6_SIZE] {
        let mut a = [0u8; SOCKADDR_IN6_SIZE];
        a[..2].copy_from_slice(&family.to_ne_bytes());
        a
    }

    #[test]
    fn create_id_and_qp_types() {
        let mut b = [0u8; CreateId::SIZE];
        b[..8].copy_from_slice(&7u64.to_ne_bytes());
        b[8..16].copy_from_slice(&0x1000u64.to_ne_bytes());
        b[16..18].copy_from_slice(&PS_TCP.to_ne_bytes());
        let c = CreateId::decode(&b);
        assert_eq!((c.uid, c.response, c.ps), (7, 0x1000, PS_TCP));
        assert_eq!(qp_type_of(PS_TCP, 9), Some(QPT_RC));
        assert_eq!(qp_type_of(PS_UDP, 9), Some(QPT_UD));
        assert_eq!(qp_type_of(PS_IPOIB, 9), Some(QPT_UD));
        assert_eq!(qp_type_of(PS_IB, 9), Some(9));
        assert_eq!(qp_type_of(0x1234, 0), None);
    }

    #[test]
    fn fixed_offset_commands_read_their_fields() {
        // Byte i holds i, so each field shows the offset it was read at.
        let b: [u8; 88] = core::array::from_fn(|i| i as u8);
        let s = SetOption::decode(b[..SetOption::SIZE].try_into().unwrap());
        assert_eq!(s.optval, u64::from_ne_bytes(b[0..8].try_into().unwrap()));
        assert_eq!(s.id, u32::from_ne_bytes([8, 9, 10, 11]));
        assert_eq!(s.optlen, u32::from_ne_bytes([20, 21, 22, 23]));
        let m = MigrateId::decode(b[..MigrateId::SIZE].try_into().unwrap());
        assert_eq!(
            (m.id, m.fd),
            (
                u32::from_ne_bytes([8, 9, 10, 11]),
                u32::from_ne_bytes([12, 13, 14, 15])
            )
        );
        let r = ResolveIbService::decode(&b);
        assert_eq!(
            r.service_id,
            u64::from_ne_bytes(b[8..16].try_into().unwrap())
        );
        assert_eq!(r.service_name[..], b[16..80]);
        assert_eq!(r.flags, u32::from_ne_bytes([80, 81, 82, 83]));
        let a = IdArg::decode(b[..IdArg::SIZE].try_into().unwrap());
        assert_eq!(a.arg, u32::from_ne_bytes([4, 5, 6, 7]));
    }

    #[test]
    fn bind_checks_sizes() {
        let mut b = [0u8; Bind::SIZE];
        b[..4].copy_from_slice(&3u32.to_ne_bytes());
        b[4..6].copy_from_slice(&16u16.to_ne_bytes());
        b[8..10].copy_from_slice(&AF_INET.to_ne_bytes());
        let ok = Bind::decode(&b).unwrap();
        assert_eq!(ok.id, 3);
        b[4..6].copy_from_slice(&28u16.to_ne_bytes());
        assert!(Bind::decode(&b).is_err());
        b[4..6].copy_from_slice(&16u16.to_ne_bytes());
        b[6] = 1;
        assert!(Bind::decode(&b).is_err());

        let mut ip = [0u8; Bind::IP_SIZE];
        ip[8..36].copy_from_slice(&in6(AF_INET6));
        ip[36..40].copy_from_slice(&5u32.to_ne_bytes());
        assert_eq!(Bind::decode_ip(&ip).unwrap().id, 5);
        ip[8..36].copy_from_slice(&in6(AF_IB));
        assert!(Bind::decode_ip(&ip).is_err());
    }

    #[test]
    fn resolve_checks() {
        let mut b = [0u8; ResolveAddr::IP_SIZE];
        b[28..56].copy_from_slice(&in6(AF_INET));
        assert!(ResolveAddr::decode_ip(&b).is_ok());
        b[..28].copy_from_slice(&in6(99));
        assert!(ResolveAddr::decode_ip(&b).is_err());

        let mut r = [0u8; ResolveAddr::SIZE];
        r[10..12].copy_from_slice(&16u16.to_ne_bytes());
        r[144..146].copy_from_slice(&AF_INET.to_ne_bytes());
        assert!(ResolveAddr::decode(&r).is_ok());
        r[10..12].copy_from_slice(&0u16.to_ne_bytes());
        assert!(ResolveAddr::decode(&r).is_err());
    }

    #[test]
    fn event_resp_layout() {
        // Beyond the length (0xbb): not copied.
        let data = [0xaa, 0, 0, 0, 0, 0xbb];
        let c = EventConn {
            qp_num: 0x11,
            qkey: 0,
            private_data: &data,
            private_data_len: 3,
            srq: 1,
            responder_resources: 2,
            initiator_depth: 3,
            flow_control: 4,
            retry_count: 5,
            rnr_retry_count: 6,
            valid: 0,
        };
        let e = encoded(|b| {
            EventResp {
                uid: 1,
                id: 2,
                event: 9,
                status: -110,
                param: EventParam::Conn(c),
                ece: Ece {
                    vendor_id: 0x15b3,
                    attr_mod: 7,
                },
            }
            .encode_into(b)
        });
        assert_eq!(&e[..8], &1u64.to_ne_bytes());
        assert_eq!(&e[8..12], &2u32.to_ne_bytes());
        assert_eq!(&e[16..20], &(-110i32).to_ne_bytes());
        assert_eq!(&e[20..24], &0x11u32.to_ne_bytes());
        assert_eq!(e[28], 0xaa);
        assert_eq!(e[33], 0);
        assert_eq!(e[20 + 264], 3);
        assert_eq!(e[20 + 270], 6);
        assert_eq!(&e[328..332], &0x15b3u32.to_ne_bytes());
        assert_eq!(EventResp::MIN_OUT, 324);
    }

    #[test]
    fn connect_ece_only_when_given() {
        let mut b = [0u8; Connect::SIZE];
        b[272..276].copy_from_slice(&9u32.to_ne_bytes());
        b[280..284].copy_from_slice(&5u32.to_ne_bytes());
        b[271] = 1;
        let c = Connect::decode(&b, Connect::SIZE);
        assert_eq!((c.id, c.ece.vendor_id, c.conn_param.valid), (9, 5, 1));
        let c = Connect::decode(&b, Connect::MIN_IN);
        assert_eq!(c.ece, Ece::default());
    }

    #[test]
    fn reject_reasons() {
        let mut b = [0u8; Reject::SIZE];
        b[4] = 2;
        assert_eq!(Reject::decode(&b).unwrap().reason, REJ_CONSUMER_DEFINED);
        assert_eq!(Reject::decode(&b).unwrap().data().len(), 2);
        b[5] = REJ_VENDOR_OPTION_NOT_SUPPORTED;
        assert!(Reject::decode(&b).is_some());
        b[5] = 1;
        assert!(Reject::decode(&b).is_none());
    }

    #[test]
    fn options() {
        assert_eq!(parse_id_option(0, &[5]), Ok(CmOption::Tos(5)));
        assert_eq!(parse_id_option(0, &[5, 0]), Err(OptError::Inval));
        assert_eq!(
            parse_id_option(1, &1i32.to_ne_bytes()),
            Ok(CmOption::ReuseAddr(true))
        );
        assert_eq!(
            parse_id_option(2, &0i32.to_ne_bytes()),
            Ok(CmOption::AfOnly(false))
        );
        assert_eq!(parse_id_option(3, &[14]), Ok(CmOption::AckTimeout(14)));
        assert_eq!(parse_id_option(4, &[0]), Err(OptError::NoSys));
    }

    #[test]
    fn join_flags() {
        let mut b = [0u8; JoinMcast::SIZE];
        b[20..22].copy_from_slice(&28u16.to_ne_bytes());
        b[24..26].copy_from_slice(&AF_INET6.to_ne_bytes());
        assert_eq!(
            JoinMcast::decode(&b).unwrap().join_state,
            Some(JOIN_STATE_FULLMEMBER)
        );
        b[22] = 1;
        assert_eq!(
            JoinMcast::decode(&b).unwrap().join_state,
            Some(JOIN_STATE_SENDONLY_FULLMEMBER)
        );
        // Bad flags or a size not matching the family are refused after
        // the response size check; an unknown family before it.
        b[22] = 2;
        assert_eq!(JoinMcast::decode(&b).unwrap().join_state, None);
        b[22] = 0;
        b[20..22].copy_from_slice(&16u16.to_ne_bytes());
        assert_eq!(JoinMcast::decode(&b).unwrap().join_state, None);
        b[24..26].copy_from_slice(&99u16.to_ne_bytes());
        assert!(JoinMcast::decode(&b).is_err());
    }

    #[test]
    fn ib_path_option_picks_the_primary_gmp_path() {
        let entry = |flags: u32, fill: u8| {
            let mut e = [fill; PATH_REC_DATA_SIZE];
            e[..4].copy_from_slice(&flags.to_ne_bytes());
            e
        };
        assert_eq!(pick_ib_path(&[]), None);
        assert_eq!(pick_ib_path(&[0u8; PATH_REC_DATA_SIZE - 1]), None);
        assert_eq!(pick_ib_path(&entry(1, 5)), None);
        let mut v = entry(PATH_FLAGS_PRIMARY_GMP_BIDI | 4, 6).to_vec();
        v.extend_from_slice(&entry(PATH_FLAGS_PRIMARY_GMP_BIDI, 7));
        v.extend_from_slice(&entry(PATH_FLAGS_PRIMARY_GMP_BIDI, 8));
        assert_eq!(pick_ib_path(&v), Some([7u8; 64]));
        v.push(0);
        assert_eq!(pick_ib_path(&v), None);
    }

    #[test]
    fn ib_service_layouts() {
        let mut b = [0u8; ResolveIbService::SIZE];
        b[..4].copy_from_slice(&3u32.to_ne_bytes());
        b[8..16].copy_from_slice(&0x1122u64.to_ne_bytes());
        b[16] = b'x';
        b[79] = b'z';
        b[80..84].copy_from_slice(&2u32.to_ne_bytes());
        let c = ResolveIbService::decode(&b);
        assert_eq!((c.id, c.service_id, c.flags, c.reserved), (3, 0x1122, 2, 0));
        assert_eq!((c.service_name[0], c.service_name[63]), (b'x', b'z'));

        assert_eq!(ib_service_recs_fitting(8), 0);
        assert_eq!(ib_service_recs_fitting(8 + 175), 0);
        assert_eq!(ib_service_recs_fitting(8 + 2 * 176), 2);
        let mut out = [0u8; 8 + 176];
        assert_eq!(encode_query_ib_service(5, &[], &mut out), 0);
        assert_eq!(encode_query_ib_service(5, &[9u8; 176], &mut out), 184);
        assert_eq!(&out[..4], &5u32.to_ne_bytes());
        assert_eq!((out[8], out[183]), (9, 9));
    }

    #[test]
    fn query_path_fits_the_buffer() {
        let recs = [[1u8; 64], [2u8; 64]];
        let mut out = [0u8; 8 + 72];
        assert_eq!(encode_query_path(&mut out, 2, recs), 80);
        assert_eq!(&out[..4], &2u32.to_ne_bytes());
        assert_eq!(out[16], 1);
        let mut out = [0u8; 8 + 72 * 6];
        assert_eq!(encode_query_path(&mut out, 2, recs), 8 + 144);
    }

    #[test]
    fn query_path_packs_only_what_fits() {
        let mut packed = 0;
        let recs = core::iter::repeat_with(|| {
            packed += 1;
            [3u8; 64]
        })
        .take(6);
        let mut out = [0u8; 8 + 72 * 2 + 10];
        assert_eq!(encode_query_path(&mut out, 6, recs), 8 + 144);
        assert_eq!(packed, 2);
    }

    #[test]
    fn write_cm_event() {
        let mut b = [0u8; WriteCmEvent::SIZE];
        b[8..12].copy_from_slice(&EVENT_USER.to_ne_bytes());
        b[16..24].copy_from_slice(&0x1122u64.to_ne_bytes());
        let w = WriteCmEvent::decode(&b).unwrap();
        assert_eq!(w.arg, 0x1122);
        let e = encoded(|b| {
            EventResp {
                uid: 1,
                id: 0,
                event: w.event,
                status: 0,
                param: EventParam::Arg(w.arg),
                ece: Ece::default(),
            }
            .encode_into(b)
        });
        assert_eq!(&e[20..28], &0x1122u64.to_ne_bytes());
        b[8] = 3;
        assert!(WriteCmEvent::decode(&b).is_none());
    }

    #[test]
    fn backlog() {
        assert_eq!(listen_backlog(0, 1024), 1024);
        assert_eq!(listen_backlog(2, 1024), 2);
        assert_eq!(listen_backlog(u32::MAX, 1024), 1024);
    }

    #[test]
    fn query_route_layout() {
        // AF_INET: a sockaddr_in's 16 bytes copied; AF_INET6: 28.
        let mut src = [0u8; SOCKADDR_STORAGE_SIZE];
        src[..2].copy_from_slice(&AF_INET.to_ne_bytes());
        src[15] = 7;
        src[16] = 9; // beyond a sockaddr_in: not copied
        let mut dst = [0u8; SOCKADDR_STORAGE_SIZE];
        dst[..SOCKADDR_IN6_SIZE].copy_from_slice(&in6(AF_INET6));
        dst[27] = 8;
        let mut ib_route = [[0u8; USER_PATH_REC_SIZE]; 2];
        ib_route[0][0] = 1;
        ib_route[1][63] = 2;
        let r = encoded(|b| {
            QueryRouteResp {
                dev: Some(DevInfo {
                    node_guid: 5,
                    ibdev_index: 3,
                    port_num: 1,
                    pkey_be: 0xffff,
                }),
                ib_route,
                src,
                dst,
                num_paths: 1,
            }
            .encode_into(b)
        });
        assert_eq!(&r[..8], &5u64.to_ne_bytes());
        assert_eq!((r[8], r[8 + 2 * USER_PATH_REC_SIZE - 1]), (1, 2));
        assert_eq!((r[136 + 15], r[136 + 16]), (7, 0));
        assert_eq!(r[164 + 27], 8);
        assert_eq!(&r[192..196], &1u32.to_ne_bytes());
        assert_eq!((r[196], &r[200..204]), (1, &3u32.to_ne_bytes()[..]));
    }

    #[test]
    fn query_addr_layout() {
        let mut src = [0u8; SOCKADDR_STORAGE_SIZE];
        src[0] = 2;
        src[100] = 9; // beyond src_size: not copied
        let r = encoded(|b| {
            QueryAddrResp {
                dev: Some(DevInfo {
                    node_guid: 5,
                    ibdev_index: 3,
                    port_num: 1,
                    pkey_be: 0xffff,
                }),
                src,
                src_size: 16,
                dst: [0; SOCKADDR_STORAGE_SIZE],
                dst_size: 0,
            }
            .encode_into(b)
        });
        assert_eq!(r[8], 1);
        assert_eq!(r[16], 2);
        assert_eq!(r[116], 0);
        assert_eq!(&r[272..276], &3u32.to_ne_bytes());
    }
}
