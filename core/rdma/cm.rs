// SPDX-License-Identifier: GPL-2.0

//! The kernel's RDMA connection manager (`rdma_cm`), as the ucma uses it.
//!
//! A [`CmId`] owns one `struct rdma_cm_id` and one reference on its context
//! object `T`: the C id's `context` is an `Arc<T>` turned into a foreign
//! pointer, taken back after `rdma_destroy_id()` (which waits for running
//! event handlers and guarantees no later ones). The CM calls
//! [`CmHandler::event`] for each event of the id, with the id's handler
//! mutex held, in process context (the handler may sleep). A connection
//! request on a listening id arrives on a brand-new C id whose context is
//! still the listener's; [`CmHandler::connect_request`] may adopt it
//! ([`ConnRequest::adopt`]), otherwise the CM destroys it.
//!
//! Dropping a [`CmId`] destroys the C id: it must never happen inside an
//! event handler of that same id (the destroy would wait for itself).

use super::{
    bindings,
    misc::{
        MiscFile,
        MiscOptions,
        MiscRegistration, //
    }, //
};
use core::{
    cell::Cell,
    marker::PhantomData,
    ptr::NonNull, //
};
use kernel::{
    error::{
        from_err_ptr,
        to_result, //
    },
    ffi,
    fs::LocalFile,
    prelude::*,
    sync::{
        Arc,
        ArcBorrow, //
    },
    types::ForeignOwnable,
};

/// `RDMA_MAX_PRIVATE_DATA`: the room for private data in the user ABI.
pub const MAX_PRIVATE_DATA: usize = 256;
/// `sizeof(struct ib_uverbs_qp_attr)`.
pub const UVERBS_QP_ATTR_SIZE: usize = core::mem::size_of::<bindings::ib_uverbs_qp_attr>();
/// `sizeof(struct ib_user_path_rec)`.
pub const USER_PATH_REC_SIZE: usize = core::mem::size_of::<bindings::ib_user_path_rec>();
/// `sizeof(struct ib_uverbs_ah_attr)`.
pub const UVERBS_AH_ATTR_SIZE: usize = core::mem::size_of::<bindings::ib_uverbs_ah_attr>();
/// The size of a packed (wire format) path record.
pub const PACKED_PATH_REC_SIZE: usize = 64;
/// `sizeof(struct ib_user_service_rec)`.
pub const USER_SERVICE_REC_SIZE: usize = core::mem::size_of::<bindings::ib_user_service_rec>();

// The CM's service records are copied out as the uapi ones (as in C).
const _: () = assert!(USER_SERVICE_REC_SIZE == core::mem::size_of::<bindings::sa_service_rec>());

/// The service RESOLVE_IB_SERVICE looks for (`struct rdma_ucm_ib_service`).
pub struct IbService {
    /// Service id (as the user gave it).
    pub service_id: u64,
    /// Service name.
    pub service_name: [u8; 64],
    /// `RDMA_USER_CM_IB_SERVICE_FLAG_*`.
    pub flags: u32,
    /// Reserved (passed on as given).
    pub reserved: u32,
}

const AF_IB: u16 = 27;

/// A socket address in an aligned `sockaddr_storage`-sized buffer.
#[repr(C, align(8))]
#[derive(Clone, Copy)]
pub struct SockAddr(pub [u8; 128]);

// The buffer stands for a `struct __kernel_sockaddr_storage`.
const _: () = assert!(
    core::mem::size_of::<SockAddr>() == core::mem::size_of::<bindings::__kernel_sockaddr_storage>()
);

impl SockAddr {
    fn as_mut_ptr(&mut self) -> *mut bindings::sockaddr {
        self.0.as_mut_ptr().cast()
    }

    fn as_ptr(&self) -> *const bindings::sockaddr {
        self.0.as_ptr().cast()
    }

    /// Copies a C `sockaddr_storage`.
    fn from_storage(s: &bindings::__kernel_sockaddr_storage) -> Self {
        let mut out = SockAddr([0; 128]);
        // SAFETY: both are 128 bytes (asserted above), `s` is a valid
        // reference and `out` a distinct local.
        unsafe {
            core::ptr::copy_nonoverlapping(
                core::ptr::from_ref(s).cast::<u8>(),
                out.0.as_mut_ptr(),
                out.0.len(),
            )
        };
        out
    }
}

/// Connection parameters: of CONNECT and ACCEPT with their private data
/// in a buffer of its own (`P` the default), or of an event with it
/// borrowed from the C event ([`EventConn`]).
#[derive(Clone, Copy)]
pub struct ConnParam<P = [u8; MAX_PRIVATE_DATA]> {
    /// Private data; only the first `private_data_len` bytes count.
    pub private_data: P,
    /// Length of the private data.
    pub private_data_len: u8,
    /// Responder resources.
    pub responder_resources: u8,
    /// Initiator depth.
    pub initiator_depth: u8,
    /// Flow control.
    pub flow_control: u8,
    /// Retry count.
    pub retry_count: u8,
    /// RNR retry count.
    pub rnr_retry_count: u8,
    /// Whether the QP uses an SRQ.
    pub srq: u8,
    /// QP number.
    pub qp_num: u32,
    /// Q_Key (AF_IB only).
    pub qkey: u32,
}

/// Connection parameters of an event, the private data (the CM's
/// `private_data_len` bytes, empty if it gave none) borrowed from the C
/// event, valid for the handler call: copied once, where the consumer keeps
/// it, as the C module copies it once into its event.
pub type EventConn<'a> = ConnParam<&'a [u8]>;

/// UD parameters of an event, the private data borrowed as in
/// [`EventConn`].
#[derive(Clone, Copy)]
pub struct EventUd<'a> {
    /// Private data: the CM's `private_data_len` bytes (none for a
    /// multicast event, whose pointer is the membership's context).
    pub private_data: &'a [u8],
    /// Length of the private data.
    pub private_data_len: u8,
    /// The address handle, as `struct ib_uverbs_ah_attr`.
    pub ah_attr: [u8; UVERBS_AH_ATTR_SIZE],
    /// Remote QP number.
    pub qp_num: u32,
    /// Q_Key.
    pub qkey: u32,
}

/// The parameters an event carries.
#[derive(Clone, Copy)]
pub enum EventParam<'a> {
    /// None (`RDMA_CM_EVENT_ADDRINFO_RESOLVED`).
    None,
    /// Connected (RC) ids.
    Conn(EventConn<'a>),
    /// UD ids.
    Ud(EventUd<'a>),
}

/// An event of the CM: its fields read out of the C event, its private
/// data borrowed (valid for the handler call).
pub struct CmEvent<'a> {
    /// `enum rdma_cm_event_type`.
    pub event: u32,
    /// Status (0 or a negative errno or a reject reason).
    pub status: i32,
    /// The parameters.
    pub param: EventParam<'a>,
    /// ECE vendor id.
    pub ece_vendor_id: u32,
    /// ECE attribute modifier.
    pub ece_attr_mod: u32,
    /// For multicast events, the context given to [`CmId::join_multicast`].
    pub mc_context: usize,
}

const EV_CONNECT_REQUEST: u32 = bindings::rdma_cm_event_type_RDMA_CM_EVENT_CONNECT_REQUEST;
const EV_MC_JOIN: u32 = bindings::rdma_cm_event_type_RDMA_CM_EVENT_MULTICAST_JOIN;
const EV_MC_ERROR: u32 = bindings::rdma_cm_event_type_RDMA_CM_EVENT_MULTICAST_ERROR;
const EV_ADDRINFO_RESOLVED: u32 = bindings::rdma_cm_event_type_RDMA_CM_EVENT_ADDRINFO_RESOLVED;

/// The `len` bytes of private data at `src` (may be NULL: none).
///
/// # Safety
///
/// `src`, if not NULL, is valid for reads of `len` bytes for `'a`.
unsafe fn private_data<'a>(src: *const ffi::c_void, len: u8) -> &'a [u8] {
    if src.is_null() {
        return &[];
    }
    // SAFETY: readable for `len` bytes for `'a` (the caller's guarantee).
    unsafe { core::slice::from_raw_parts(src.cast::<u8>(), usize::from(len)) }
}

impl<'a> CmEvent<'a> {
    /// Reads a C event of the id `id`.
    ///
    /// # Safety
    ///
    /// `id` and `ev` are the valid arguments of a CM event handler call,
    /// and `ev` (with the private data it points to) stays valid for `'a`.
    unsafe fn from_raw(id: *mut bindings::rdma_cm_id, ev: *const bindings::rdma_cm_event) -> Self {
        // SAFETY: valid for `'a` and the call (caller).
        let (e, id): (&'a bindings::rdma_cm_event, _) = unsafe { (&*ev, &*id) };
        let event = e.event;
        let mc = event == EV_MC_JOIN || event == EV_MC_ERROR;
        let mut mc_context = 0;
        let param = if event == EV_ADDRINFO_RESOLVED {
            EventParam::None
        } else if id.qp_type == bindings::ib_qp_type_IB_QPT_UD {
            // SAFETY: UD ids get UD parameters.
            let ud = unsafe { e.param.ud.as_ref() };
            if mc {
                mc_context = ud.private_data as usize;
            }
            let mut ah: bindings::ib_uverbs_ah_attr = Default::default();
            // SAFETY: `ah` is a valid destination; the CM's `ah_attr` is
            // valid for the call; the function only reads it.
            unsafe {
                bindings::ib_copy_ah_attr_to_user(
                    id.device,
                    &mut ah,
                    core::ptr::from_ref(&ud.ah_attr).cast_mut(),
                )
            };
            let private_data = if mc {
                &[]
            } else {
                // SAFETY: the CM's private data is valid for its length, as
                // long as the event.
                unsafe { private_data(ud.private_data, ud.private_data_len) }
            };
            EventParam::Ud(EventUd {
                private_data,
                private_data_len: if mc { 0 } else { ud.private_data_len },
                // SAFETY: `ib_uverbs_ah_attr` is a uapi struct of integers
                // without padding, fully initialised (zeroed, then filled).
                ah_attr: unsafe {
                    core::mem::transmute::<bindings::ib_uverbs_ah_attr, [u8; UVERBS_AH_ATTR_SIZE]>(
                        ah,
                    )
                },
                qp_num: ud.qp_num,
                qkey: ud.qkey,
            })
        } else {
            // SAFETY: connected ids get connection parameters.
            let c = unsafe { e.param.conn.as_ref() };
            EventParam::Conn(EventConn {
                // SAFETY: the CM's private data is valid for its length, as
                // long as the event.
                private_data: unsafe { private_data(c.private_data, c.private_data_len) },
                private_data_len: c.private_data_len,
                responder_resources: c.responder_resources,
                initiator_depth: c.initiator_depth,
                flow_control: c.flow_control,
                retry_count: c.retry_count,
                rnr_retry_count: c.rnr_retry_count,
                srq: c.srq,
                qp_num: c.qp_num,
                qkey: c.qkey,
            })
        };
        CmEvent {
            event,
            status: e.status,
            param,
            ece_vendor_id: e.ece.vendor_id,
            ece_attr_mod: e.ece.attr_mod,
            mc_context,
        }
    }
}

/// The receiver of a CM id's events.
pub trait CmHandler: Send + Sync + Sized + 'static {
    /// An event on an id whose context is `this`. Runs with the id's handler
    /// mutex held: must not destroy the id nor wait for anything that does.
    fn event(this: ArcBorrow<'_, Self>, event: &CmEvent<'_>);

    /// A connection request on the listening id whose context is `listener`.
    /// Adopt `req` to keep the new connection; returning without adopting it
    /// makes the CM destroy it. Same restrictions as [`CmHandler::event`].
    fn connect_request(
        listener: ArcBorrow<'_, Self>,
        req: ConnRequest<'_, Self>,
        event: &CmEvent<'_>,
    ) -> Result;
}

/// A new connection's C id offered to [`CmHandler::connect_request`].
pub struct ConnRequest<'a, T: CmHandler> {
    id: NonNull<bindings::rdma_cm_id>,
    adopted: &'a Cell<bool>,
    _t: PhantomData<T>,
}

impl<T: CmHandler> ConnRequest<'_, T> {
    /// Takes the new id, with `ctx` as its context from now on.
    pub fn adopt(self, ctx: Arc<T>) -> CmId<T> {
        // SAFETY: the id is valid and its handler mutex is held by the CM for
        // this call, so no other handler reads `context` concurrently.
        // INVARIANT: the context now holds a reference on `ctx`.
        unsafe { (*self.id.as_ptr()).context = ctx.into_foreign().cast() };
        self.adopted.set(true);
        CmId {
            id: self.id,
            _t: PhantomData,
        }
    }

    /// Rejects the request (before returning without adopting it).
    pub fn reject(&self, reason: u8) -> Result {
        // SAFETY: the id is valid for the handler call.
        to_result(unsafe { bindings::rdma_reject(self.id.as_ptr(), core::ptr::null(), 0, reason) })
    }
}

/// The event handler installed on every id this wrapper creates.
///
/// # Safety
///
/// Called by the RDMA CM with a valid id whose `context` is an `Arc<T>`
/// foreign pointer (its own, or its listener's for a connection request).
unsafe extern "C" fn event_handler<T: CmHandler>(
    id: *mut bindings::rdma_cm_id,
    ev: *mut bindings::rdma_cm_event,
) -> ffi::c_int {
    // SAFETY: see the function's safety section; the referenced `T` lives at
    // least until the id is destroyed, which waits for this call.
    let ctx = unsafe { <Arc<T> as ForeignOwnable>::borrow((*id).context.cast()) };
    // SAFETY: the handler's arguments are valid for the call.
    let event = unsafe { CmEvent::from_raw(id, ev) };
    if event.event == EV_CONNECT_REQUEST {
        let Some(nn) = NonNull::new(id) else {
            return ENOMEM.to_errno();
        };
        let adopted = Cell::new(false);
        let req = ConnRequest {
            id: nn,
            adopted: &adopted,
            _t: PhantomData,
        };
        let res = T::connect_request(ctx, req, &event);
        if adopted.get() {
            0
        } else {
            match res {
                Err(e) => e.to_errno(),
                Ok(()) => ENOMEM.to_errno(),
            }
        }
    } else {
        T::event(ctx, &event);
        0
    }
}

/// The device an id is bound to.
#[derive(Clone, Copy)]
pub struct DevInfo {
    /// `node_guid`, as stored (big endian).
    pub node_guid: u64,
    /// `ib_device->index`.
    pub index: u32,
    /// Port number of the id.
    pub port_num: u32,
    /// P_Key of the id's address (host order).
    pub pkey: u16,
}

/// What QUERY_ROUTE reports.
pub struct RouteInfo {
    /// Number of paths.
    pub num_paths: u32,
    /// Paths as `struct ib_user_path_rec` (or only GIDs/P_Key in path 0).
    pub paths: [[u8; USER_PATH_REC_SIZE]; 2],
}

/// What INIT_QP_ATTR answers: a `struct ib_uverbs_qp_attr`, filled in
/// place by [`CmId::init_qp_attr`] and copied out from there.
#[repr(transparent)]
#[derive(Default)]
pub struct UserQpAttr(bindings::ib_uverbs_qp_attr);

impl UserQpAttr {
    /// Its bytes, as the user ABI lays them out.
    pub fn as_bytes(&self) -> &[u8; UVERBS_QP_ATTR_SIZE] {
        // SAFETY: `ib_uverbs_qp_attr` is a uapi struct of integers without
        // padding, fully initialised (zeroed by `default`, then filled), of
        // `UVERBS_QP_ATTR_SIZE` bytes; `[u8; N]` has no alignment need.
        unsafe { &*core::ptr::from_ref(&self.0).cast::<[u8; UVERBS_QP_ATTR_SIZE]>() }
    }
}

/// An RDMA CM id owning a reference on its context `T`.
///
/// # Invariants
///
/// `id` is a live `rdma_cm_id` created by `rdma_create_user_id()` with
/// [`event_handler::<T>`] (or adopted from a connection request of such an
/// id), whose `context` is an `Arc<T>` foreign pointer owned by this value.
pub struct CmId<T: CmHandler> {
    id: NonNull<bindings::rdma_cm_id>,
    _t: PhantomData<Arc<T>>,
}

// SAFETY: the C id may be used and destroyed from any thread; the context is
// `Send + Sync`.
unsafe impl<T: CmHandler> Send for CmId<T> {}
// SAFETY: `&CmId` methods only read fields the CM keeps valid; all changes
// go through `&mut self`.
unsafe impl<T: CmHandler> Sync for CmId<T> {}

/// A timeout in milliseconds as the CM takes it.
fn ms(timeout_ms: u32) -> ffi::c_ulong {
    ffi::c_ulong::try_from(timeout_ms).unwrap_or(ffi::c_ulong::MAX)
}

impl<T: CmHandler> CmId<T> {
    /// Creates a user id of port space `ps` and QP type `qp_type`.
    pub fn new(ctx: Arc<T>, ps: u32, qp_type: u32) -> Result<Self> {
        let raw = ctx.into_foreign();
        // SAFETY: the handler matches the context's type; the context stays
        // valid until the id is destroyed (type invariant of the result).
        let id = unsafe {
            bindings::rdma_create_user_id(Some(event_handler::<T>), raw.cast(), ps, qp_type)
        };
        match from_err_ptr(id).ok().and_then(NonNull::new) {
            // INVARIANT: created with our handler and context.
            Some(id) => Ok(CmId {
                id,
                _t: PhantomData,
            }),
            None => {
                // SAFETY: the id was not created; take the reference back.
                drop(unsafe { <Arc<T> as ForeignOwnable>::from_foreign(raw) });
                Err(from_err_ptr(id).err().unwrap_or(ENOMEM))
            }
        }
    }

    fn raw(&self) -> *mut bindings::rdma_cm_id {
        self.id.as_ptr()
    }

    fn cm(&self) -> &bindings::rdma_cm_id {
        // SAFETY: the id is live (type invariant).
        unsafe { self.id.as_ref() }
    }

    /// Whether the id is bound to a device.
    pub fn has_device(&self) -> bool {
        !self.cm().device.is_null()
    }

    /// The QP type.
    pub fn qp_type(&self) -> u32 {
        self.cm().qp_type
    }

    /// The source address.
    pub fn src_addr(&self) -> SockAddr {
        SockAddr::from_storage(&self.cm().route.addr.src_addr)
    }

    /// The source address's family (without copying the address).
    fn src_family(&self) -> u16 {
        let storage = core::ptr::from_ref(&self.cm().route.addr.src_addr);
        // SAFETY: a `sockaddr_storage` begins with its 2-byte family and is
        // aligned for it; the live id's route is readable.
        unsafe { storage.cast::<u16>().read() }
    }

    /// The destination address.
    pub fn dst_addr(&self) -> SockAddr {
        SockAddr::from_storage(&self.cm().route.addr.dst_addr)
    }

    /// The device, port and P_Key, once bound.
    pub fn dev_info(&self) -> Option<DevInfo> {
        let cm = self.cm();
        if cm.device.is_null() {
            return None;
        }
        // SAFETY: a bound id holds its device.
        let dev = unsafe { &*cm.device };
        let dev_addr = core::ptr::from_ref(&cm.route.addr.dev_addr).cast_mut();
        Some(DevInfo {
            node_guid: dev.node_guid,
            index: dev.index,
            port_num: cm.port_num,
            // SAFETY: `dev_addr` is part of the live id; only read.
            pkey: unsafe { bindings::rrxe_addr_get_pkey(dev_addr) },
        })
    }

    /// The route, as QUERY_ROUTE reports it (`ucma_copy_*_route()`).
    pub fn route(&self) -> RouteInfo {
        let cm = self.cm();
        let mut info = RouteInfo {
            num_paths: 0,
            paths: [[0; USER_PATH_REC_SIZE]; 2],
        };
        if cm.device.is_null() {
            return info;
        }
        let port = cm.port_num;
        let route = &cm.route;
        let n = route.num_pri_alt_paths;
        info.num_paths = u32::try_from(n).unwrap_or(0);
        let mut recs: [bindings::ib_user_path_rec; 2] = Default::default();
        // SAFETY: the device of a bound id is valid.
        let (ib_sa, roce, iwarp) = unsafe {
            (
                bindings::rrxe_cap_ib_sa(cm.device, port),
                bindings::rrxe_protocol_roce(cm.device, port),
                bindings::rrxe_protocol_iwarp(cm.device, port),
            )
        };
        let dev_addr = core::ptr::from_ref(&route.addr.dev_addr).cast_mut();
        let copy_paths = |recs: &mut [bindings::ib_user_path_rec; 2]| {
            let count = usize::try_from(n).unwrap_or(0).min(2);
            for (i, rec) in recs.iter_mut().enumerate().take(count) {
                // SAFETY: `path_rec` holds `num_pri_alt_paths` records.
                unsafe { bindings::ib_copy_path_rec_to_user(rec, route.path_rec.add(i)) };
            }
        };
        if ib_sa || roce {
            if n == 0 {
                let r = &mut recs[0];
                if ib_sa {
                    // SAFETY: valid id, valid out-parameters (16-byte GIDs).
                    unsafe {
                        bindings::rrxe_addr_get_dgid(dev_addr, r.dgid.as_mut_ptr().cast());
                        bindings::rrxe_addr_get_sgid(dev_addr, r.sgid.as_mut_ptr().cast());
                        r.pkey = bindings::rrxe_addr_get_pkey(dev_addr).to_be();
                    }
                } else {
                    let mut dst = self.dst_addr();
                    let mut src = self.src_addr();
                    // SAFETY: valid addresses and 16-byte GID buffers.
                    unsafe {
                        bindings::rrxe_ip2gid(dst.as_mut_ptr(), r.dgid.as_mut_ptr().cast());
                        bindings::rrxe_ip2gid(src.as_mut_ptr(), r.sgid.as_mut_ptr().cast());
                    }
                    r.pkey = 0xffffu16.to_be();
                }
            } else if !route.path_rec.is_null() {
                copy_paths(&mut recs);
            }
        } else if iwarp {
            info.num_paths = 0;
            let r = &mut recs[0];
            // SAFETY: valid id, valid out-parameters (16-byte GIDs).
            unsafe {
                bindings::rrxe_addr_get_dgid(dev_addr, r.dgid.as_mut_ptr().cast());
                bindings::rrxe_addr_get_sgid(dev_addr, r.sgid.as_mut_ptr().cast());
            }
        } else {
            info.num_paths = 0;
        }
        for (out, rec) in info.paths.iter_mut().zip(recs) {
            // SAFETY: `ib_user_path_rec` is a uapi struct of integers without
            // padding, fully initialised (zeroed, then filled).
            *out = unsafe {
                core::mem::transmute::<bindings::ib_user_path_rec, [u8; USER_PATH_REC_SIZE]>(rec)
            };
        }
        info
    }

    /// The number of paths, and the paths in wire format (QUERY_PATH), each
    /// packed as the iterator reaches it.
    pub fn packed_paths(&self) -> (u32, impl Iterator<Item = [u8; PACKED_PATH_REC_SIZE]> + '_) {
        let route = &self.cm().route;
        let n = if route.path_rec.is_null() {
            0
        } else {
            u32::try_from(route.num_pri_alt_paths).unwrap_or(0)
        };
        let packed = (0..usize::try_from(n).unwrap_or(0)).map(move |i| {
            let mut packed = [0u8; PACKED_PATH_REC_SIZE];
            // SAFETY: `path_rec` holds `num_pri_alt_paths` records and `i` is
            // below that; the packed form is 64 bytes. OPA records are not
            // converted (no OPA device runs RoCE).
            unsafe { bindings::ib_sa_pack_path(route.path_rec.add(i), packed.as_mut_ptr().cast()) };
            packed
        });
        (n, packed)
    }

    /// The source and destination GIDs (`rdma_read_gids()`).
    pub fn gids(&self) -> ([u8; 16], [u8; 16]) {
        let mut s: bindings::ib_gid = Default::default();
        let mut d: bindings::ib_gid = Default::default();
        // SAFETY: live id, valid out-parameters.
        unsafe { bindings::rdma_read_gids(self.raw(), &mut s, &mut d) };
        // SAFETY: `ib_gid` is a 16-byte union of integers, all initialised.
        unsafe {
            (
                core::mem::transmute::<bindings::ib_gid, [u8; 16]>(s),
                core::mem::transmute::<bindings::ib_gid, [u8; 16]>(d),
            )
        }
    }

    /// The service id of `addr` for this id (big endian, as stored).
    pub fn service_id(&self, addr: &SockAddr) -> u64 {
        let mut a = *addr;
        // SAFETY: live id and a valid address buffer.
        unsafe { bindings::rdma_get_service_id(self.raw(), a.as_mut_ptr()) }
    }

    /// `rdma_resolve_ib_service()` (`RDMA_USER_CM_CMD_RESOLVE_IB_SERVICE`).
    pub fn resolve_ib_service(&mut self, ibs: &IbService) -> Result {
        let mut c = bindings::rdma_ucm_ib_service {
            service_id: ibs.service_id,
            service_name: ibs.service_name,
            flags: ibs.flags,
            reserved: ibs.reserved,
        };
        // SAFETY: live id; `c` is valid for the call (the CM copies it).
        to_result(unsafe { bindings::rdma_resolve_ib_service(self.raw(), &mut c) })
    }

    /// The id's service records, as `struct ib_user_service_rec`s: their
    /// number and the first `max` of them; `None` if the id has none (no
    /// service was resolved).
    pub fn service_recs(&self, max: usize) -> Result<Option<(u32, KVec<u8>)>> {
        let route = &self.cm().route;
        if route.service_recs.is_null() {
            return Ok(None);
        }
        let num = route.num_service_recs;
        let n = usize::try_from(num).unwrap_or(0).min(max);
        let len = n.checked_mul(USER_SERVICE_REC_SIZE).ok_or(EINVAL)?;
        let mut out = KVec::from_elem(0u8, len, GFP_KERNEL)?;
        // SAFETY: `service_recs` holds `num_service_recs` records (`n` is
        // at most that), and a `struct sa_service_rec` is laid out as the
        // uapi `struct ib_user_service_rec` (asserted with
        // `USER_SERVICE_REC_SIZE`); `out` holds
        // `len` bytes.
        unsafe {
            core::ptr::copy_nonoverlapping(
                route.service_recs.cast::<u8>().cast_const(),
                out.as_mut_ptr(),
                len,
            )
        };
        Ok(Some((num, out)))
    }

    /// `rdma_set_ib_path()` with the wire-format path record `packed`
    /// (`RDMA_OPTION_IB_PATH`), converted for OPA ports as the C module does.
    /// `EINVAL` if the id has no device.
    pub fn set_ib_path(&mut self, packed: &[u8; PACKED_PATH_REC_SIZE]) -> Result {
        let (device, port) = (self.cm().device, self.cm().port_num);
        if device.is_null() {
            return Err(EINVAL);
        }
        let mut rec = bindings::sa_path_rec {
            rec_type: bindings::sa_path_rec_type_SA_PATH_REC_TYPE_IB,
            ..Default::default()
        };
        // SAFETY: `packed` holds a 64-byte wire-format record, only read;
        // `rec` is a valid destination.
        unsafe { bindings::ib_sa_unpack_path(packed.as_ptr().cast_mut().cast(), &mut rec) };
        // SAFETY: the device of a bound id is valid.
        if unsafe { bindings::rrxe_cap_opa_ah(device, port) } {
            let mut opa: bindings::sa_path_rec = Default::default();
            // SAFETY: both records are valid; `rec` is only read.
            unsafe { bindings::rrxe_sa_convert_path_ib_to_opa(&mut opa, &mut rec) };
            rec = opa;
        }
        // SAFETY: live id; the CM copies the record.
        to_result(unsafe { bindings::rdma_set_ib_path(self.raw(), &mut rec) })
    }

    /// Hands the id's handler an event of type `event` with everything else
    /// zero, under the handler lock, as if the CM had raised it (the C
    /// module reports `RDMA_OPTION_IB_PATH` as a resolved route this way).
    pub fn raise_event(&self, event: u32) {
        let ev = bindings::rdma_cm_event {
            event,
            ..Default::default()
        };
        self.with_handler_locked(|| {
            // SAFETY: the live id and a valid event, only read.
            let e = unsafe { CmEvent::from_raw(self.raw(), &ev) };
            // SAFETY: the id's context is its own `Arc<T>` (type invariant),
            // alive as long as the id.
            let ctx = unsafe { <Arc<T> as ForeignOwnable>::borrow(self.cm().context.cast()) };
            T::event(ctx, &e);
        })
    }

    /// `rdma_bind_addr()`.
    pub fn bind_addr(&mut self, addr: &SockAddr) -> Result {
        let mut a = *addr;
        // SAFETY: live id and a valid address.
        to_result(unsafe { bindings::rdma_bind_addr(self.raw(), a.as_mut_ptr()) })
    }

    /// `rdma_resolve_addr()`.
    pub fn resolve_addr(
        &mut self,
        src: Option<&SockAddr>,
        dst: &SockAddr,
        timeout_ms: u32,
    ) -> Result {
        // The source is copied (the C function takes it as mutable), the
        // destination is not (`const`).
        let mut s = src.copied();
        let sp = s.as_mut().map_or(core::ptr::null_mut(), |a| a.as_mut_ptr());
        // SAFETY: live id and valid (or NULL) addresses.
        to_result(unsafe {
            bindings::rdma_resolve_addr(self.raw(), sp, dst.as_ptr(), ms(timeout_ms))
        })
    }

    /// `rdma_resolve_route()`.
    pub fn resolve_route(&mut self, timeout_ms: u32) -> Result {
        // SAFETY: live id.
        to_result(unsafe { bindings::rdma_resolve_route(self.raw(), ms(timeout_ms)) })
    }

    fn c_conn_param(&self, p: &ConnParam) -> bindings::rdma_conn_param {
        let af_ib = self.src_family() == AF_IB;
        bindings::rdma_conn_param {
            private_data: p.private_data.as_ptr().cast(),
            private_data_len: p.private_data_len,
            responder_resources: p.responder_resources,
            initiator_depth: p.initiator_depth,
            flow_control: p.flow_control,
            retry_count: p.retry_count,
            rnr_retry_count: p.rnr_retry_count,
            srq: p.srq,
            qp_num: p.qp_num & 0xff_ffff,
            qkey: if af_ib { p.qkey } else { 0 },
        }
    }

    /// `rdma_connect_ece()`.
    pub fn connect(&mut self, p: &ConnParam, ece: (u32, u32)) -> Result {
        let mut cp = self.c_conn_param(p);
        let mut e = bindings::rdma_ucm_ece {
            vendor_id: ece.0,
            attr_mod: ece.1,
        };
        // SAFETY: live id; `cp` points at `p`'s private data, valid for the call.
        to_result(unsafe { bindings::rdma_connect_ece(self.raw(), &mut cp, &mut e) })
    }

    /// `rdma_listen()`.
    pub fn listen(&mut self, backlog: i32) -> Result {
        // SAFETY: live id.
        to_result(unsafe { bindings::rdma_listen(self.raw(), backlog) })
    }

    /// `rdma_accept_ece()` under the id's handler lock; `on_success` runs
    /// under that lock too (no event handler runs meanwhile).
    pub fn accept(
        &mut self,
        p: Option<&ConnParam>,
        ece: (u32, u32),
        on_success: impl FnOnce(),
    ) -> Result {
        let mut cp = p.map(|p| self.c_conn_param(p));
        let cpp = cp
            .as_mut()
            .map_or(core::ptr::null_mut(), core::ptr::from_mut);
        let mut e = bindings::rdma_ucm_ece {
            vendor_id: ece.0,
            attr_mod: ece.1,
        };
        // SAFETY: live id; the handler lock is taken and released here.
        unsafe { bindings::rdma_lock_handler(self.raw()) };
        // SAFETY: live id; `cpp` is NULL or points at `cp`, valid for the call.
        let r = to_result(unsafe { bindings::rdma_accept_ece(self.raw(), cpp, &mut e) });
        if r.is_ok() {
            on_success();
        }
        // SAFETY: locked above.
        unsafe { bindings::rdma_unlock_handler(self.raw()) };
        r
    }

    /// Runs `f` under the id's handler lock (no event handler runs meanwhile).
    pub fn with_handler_locked<R>(&self, f: impl FnOnce() -> R) -> R {
        // SAFETY: live id.
        unsafe { bindings::rdma_lock_handler(self.raw()) };
        let r = f();
        // SAFETY: locked above.
        unsafe { bindings::rdma_unlock_handler(self.raw()) };
        r
    }

    /// `rdma_reject()`.
    pub fn reject(&mut self, private_data: &[u8], reason: u8) -> Result {
        let len = u8::try_from(private_data.len()).map_err(|_| EINVAL)?;
        // SAFETY: live id; the data is valid for the call.
        to_result(unsafe {
            bindings::rdma_reject(self.raw(), private_data.as_ptr().cast(), len, reason)
        })
    }

    /// `rdma_disconnect()`.
    pub fn disconnect(&mut self) -> Result {
        // SAFETY: live id.
        to_result(unsafe { bindings::rdma_disconnect(self.raw()) })
    }

    /// `rdma_init_qp_attr()` for `qp_state`, converted into `out`, the
    /// user's `struct ib_uverbs_qp_attr` (with the mask filled in).
    pub fn init_qp_attr(&mut self, qp_state: u32, out: &mut UserQpAttr) -> Result {
        let mut attr = bindings::ib_qp_attr {
            qp_state,
            ..Default::default()
        };
        let mut mask: ffi::c_int = 0;
        // SAFETY: live id; valid out-parameters.
        to_result(unsafe { bindings::rdma_init_qp_attr(self.raw(), &mut attr, &mut mask) })?;
        // SAFETY: the device of the id is valid (rdma_init_qp_attr succeeded
        // only for a bound id); `out.0` and `attr` are valid.
        unsafe { bindings::ib_copy_qp_attr_to_user(self.cm().device, &mut out.0, &mut attr) };
        out.0.qp_attr_mask = mask as u32;
        Ok(())
    }

    /// `rdma_notify()`.
    pub fn notify(&mut self, event: u32) -> Result {
        // SAFETY: live id.
        to_result(unsafe { bindings::rdma_notify(self.raw(), event) })
    }

    /// `rdma_set_service_type()`.
    pub fn set_tos(&mut self, tos: u8) {
        // SAFETY: live id.
        unsafe { bindings::rdma_set_service_type(self.raw(), tos.into()) }
    }

    /// `rdma_set_reuseaddr()`.
    pub fn set_reuseaddr(&mut self, on: bool) -> Result {
        // SAFETY: live id.
        to_result(unsafe { bindings::rdma_set_reuseaddr(self.raw(), on.into()) })
    }

    /// `rdma_set_afonly()`.
    pub fn set_afonly(&mut self, on: bool) -> Result {
        // SAFETY: live id.
        to_result(unsafe { bindings::rdma_set_afonly(self.raw(), on.into()) })
    }

    /// `rdma_set_ack_timeout()`.
    pub fn set_ack_timeout(&mut self, t: u8) -> Result {
        // SAFETY: live id.
        to_result(unsafe { bindings::rdma_set_ack_timeout(self.raw(), t) })
    }

    /// `rdma_join_multicast()`; `context` comes back in the multicast events.
    pub fn join_multicast(&mut self, addr: &SockAddr, join_state: u8, context: usize) -> Result {
        let mut a = *addr;
        // SAFETY: live id; the CM copies the address; the context is an
        // opaque integer it only hands back.
        to_result(unsafe {
            bindings::rdma_join_multicast(
                self.raw(),
                a.as_mut_ptr(),
                join_state,
                context as *mut ffi::c_void,
            )
        })
    }

    /// `rdma_leave_multicast()`.
    pub fn leave_multicast(&mut self, addr: &SockAddr) {
        let mut a = *addr;
        // SAFETY: live id and a valid address.
        unsafe { bindings::rdma_leave_multicast(self.raw(), a.as_mut_ptr()) }
    }
}

impl<T: CmHandler> Drop for CmId<T> {
    fn drop(&mut self) {
        let ctx = self.cm().context;
        // SAFETY: live id (type invariant), destroyed once; this waits for
        // running handlers and no handler runs afterwards.
        unsafe { bindings::rdma_destroy_id(self.raw()) };
        // SAFETY: the context was an `Arc<T>` foreign pointer owned by this
        // id (type invariant); nothing uses it any more.
        drop(unsafe { <Arc<T> as ForeignOwnable>::from_foreign(ctx.cast()) });
    }
}

/// The state of `other` if it is an open file of the same misc device type
/// as `this`, whose state is `this_state` (MIGRATE_ID names another open
/// `rdma_cm` file by descriptor).
///
/// `this`'s private data must be `this_state` (checked), which proves that
/// `this` was opened through the `file_operations` of [`MiscFile`] `T`; a file
/// with the same `file_operations` was opened by the same `open`, which
/// stored an `Arc<T>` as its private data until its release, and the
/// caller's reference on `other` keeps it from being released.
pub fn same_device_file<'a, T: MiscFile>(
    this: &LocalFile,
    this_state: ArcBorrow<'_, T>,
    other: &'a LocalFile,
) -> Option<ArcBorrow<'a, T>> {
    let mine = Arc::<T>::from(this_state).into_foreign();
    // SAFETY: `mine` was just made by `into_foreign`; this gives it back.
    drop(unsafe { <Arc<T> as ForeignOwnable>::from_foreign(mine) });
    let (a, b) = (this.as_ptr(), other.as_ptr());
    // SAFETY: both files are valid for the call (the caller holds them).
    let (a_ops, a_priv, b_ops, b_priv) =
        unsafe { ((*a).f_op, (*a).private_data, (*b).f_op, (*b).private_data) };
    if a_priv.cast::<ffi::c_void>() != mine || a_ops != b_ops || b_priv.is_null() {
        return None;
    }
    // SAFETY: see above: `b_priv` is an `Arc<T>` foreign pointer that lives
    // as long as `other` is held.
    Some(unsafe { <Arc<T> as ForeignOwnable>::borrow(b_priv.cast()) })
}

/// The registration of the sysctl `net.rdma_ucm.max_backlog`; dropping it
/// unregisters the sysctl.
///
/// # Invariants
///
/// `hdr` is the live result of `register_net_sysctl()`.
pub struct MaxBacklogSysctl {
    hdr: NonNull<ffi::c_void>,
}

// SAFETY: unregistering may happen on any thread.
unsafe impl Send for MaxBacklogSysctl {}
// SAFETY: no `&self` methods touch the registration.
unsafe impl Sync for MaxBacklogSysctl {}

impl MaxBacklogSysctl {
    /// Registers the sysctl.
    pub fn register() -> Result<Self> {
        // SAFETY: registers a static table; no preconditions.
        let hdr = unsafe { bindings::rrxe_ucma_sysctl_register() };
        // INVARIANT: registered when not NULL.
        NonNull::new(hdr).map(|hdr| Self { hdr }).ok_or(ENOMEM)
    }

    /// The sysctl's current value.
    pub fn max_backlog() -> u32 {
        // SAFETY: reads a static integer.
        unsafe { bindings::rrxe_ucma_max_backlog() }
    }
}

impl Drop for MaxBacklogSysctl {
    fn drop(&mut self) {
        // SAFETY: registered (type invariant), unregistered once.
        unsafe { bindings::rrxe_ucma_sysctl_unregister(self.hdr.as_ptr()) };
    }
}

/// A misc device carrying the read-only sysfs attribute `abi_version`
/// (`/sys/class/misc/<name>/abi_version`, read by librdmacm).
///
/// # Invariants
///
/// `attr` is true while the attribute exists on `misc`'s device.
#[pin_data(PinnedDrop)]
pub struct MiscWithAbiVersion<T: MiscFile> {
    #[pin]
    misc: MiscRegistration<T>,
    attr: bool,
}

impl<T: MiscFile> MiscWithAbiVersion<T> {
    /// The `struct device` of the registered node.
    pub fn this_device(&self) -> *mut kernel::bindings::device {
        self.misc.this_device()
    }

    /// Registers the misc device `opts`, then adds the attribute.
    pub fn register(opts: MiscOptions) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            misc <- MiscRegistration::register(opts),
            attr: false,
        })
        .pin_chain(|this| {
            let dev = this.misc.this_device();
            // SAFETY: the device is registered and outlives the attribute,
            // which `drop` removes before deregistering.
            to_result(unsafe { bindings::rrxe_ucma_abi_attr_create(dev.cast()) })?;
            // SAFETY: `attr` is not structurally pinned.
            // INVARIANT: the attribute exists.
            unsafe { this.get_unchecked_mut().attr = true };
            Ok(())
        })
    }
}

#[pinned_drop]
impl<T: MiscFile> PinnedDrop for MiscWithAbiVersion<T> {
    fn drop(self: Pin<&mut Self>) {
        if self.attr {
            // SAFETY: the attribute exists (type invariant) on the still
            // registered device.
            unsafe { bindings::rrxe_ucma_abi_attr_remove(self.misc.this_device().cast()) };
        }
    }
}
