// SPDX-License-Identifier: GPL-2.0

//! RDMA devices (`struct ib_device`) created and registered by a driver.
//!
//! A driver implements [`IbDriver`]; [`Device::register`] allocates an
//! `ib_device` (the C glue's `struct rrxe_ib_device`: the `ib_device` followed
//! by a pointer to the driver's pinned per-device [`IbDriver::Data`]), sets
//! its attributes, installs the ops, binds a netdev to port 1 and registers
//! it with the RDMA core. From then on the core owns the device: it is
//! unregistered by `rdma link delete`, by [`Device::unregister_queued`] or
//! when the driver goes away ([`DriverRegistration`]), and the core calls
//! `dealloc_driver`, which frees the driver data, as the last op.
//!
//! The `ib_device_ops` table is built in Rust, per driver type, from
//! generic trampolines (as `link.rs` and `misc.rs` do): the core copies the
//! table into the device with `ib_set_device_ops()`, so it is built on the
//! stack at registration. Only the sysfs `parent` attribute group is C
//! (a static `attribute_group` in `glue_ib.c`).

use super::{
    bindings,
    netdev::NetDevice, //
};
use core::{
    marker::PhantomData,
    ptr::NonNull, //
};
use kernel::{
    ffi,
    prelude::*,
    types::{
        ForeignOwnable,
        Opaque, //
    },
    ThisModule, //
};

/// Device attributes (`struct ib_device_attr`), as `query_device` fills them.
pub type DeviceAttr = bindings::ib_device_attr;
/// Port attributes (`struct ib_port_attr`), as `query_port` fills them.
pub type PortAttr = bindings::ib_port_attr;
/// What `modify_device` asks for (`struct ib_device_modify`).
pub type DeviceModify = bindings::ib_device_modify;
/// What `modify_port` asks for (`struct ib_port_modify`).
pub type PortModify = bindings::ib_port_modify;

/// The immutable attributes of a port (`struct ib_port_immutable`).
pub struct PortImmutable {
    /// `RDMA_CORE_PORT_*` flags.
    pub core_cap_flags: u32,
    /// P_Key table length.
    pub pkey_tbl_len: i32,
    /// GID table length.
    pub gid_tbl_len: i32,
    /// Largest MAD.
    pub max_mad_size: u32,
}

/// A netdev event the driver is told about for a netdev bound to one of its
/// devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetdevEvent {
    /// The netdev is being unregistered.
    Unregister,
    /// Its MTU changed.
    ChangeMtu,
    /// It went down.
    Down,
    /// Its carrier or state changed.
    Change,
    /// Anything else.
    Other,
}

impl NetdevEvent {
    fn from_raw(event: ffi::c_ulong) -> Self {
        match event as u32 {
            bindings::netdev_cmd_NETDEV_UNREGISTER => Self::Unregister,
            bindings::netdev_cmd_NETDEV_CHANGEMTU => Self::ChangeMtu,
            bindings::netdev_cmd_NETDEV_DOWN => Self::Down,
            bindings::netdev_cmd_NETDEV_CHANGE => Self::Change,
            _ => Self::Other,
        }
    }
}

/// One hardware counter's description (`struct rdma_stat_desc`), for a
/// driver's static table of counters.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct StatDesc(bindings::rdma_stat_desc);

// SAFETY: the descriptor only points to a `'static` C string, never written.
unsafe impl Sync for StatDesc {}

impl StatDesc {
    /// A counter named `name`.
    #[expect(
        clippy::disallowed_methods,
        reason = "const fn: `as_char_ptr` is a trait method; C only reads the name"
    )]
    pub const fn new(name: &'static CStr) -> Self {
        Self(bindings::rdma_stat_desc {
            name: name.as_ptr().cast(),
            flags: 0,
            priv_: core::ptr::null(),
        })
    }
}

/// A GID table entry of the RDMA core (`struct ib_gid_attr`), as an
/// address vector's source GID names it ([`super::ah::AhAttr::sgid_attr`]).
#[repr(transparent)]
pub struct GidAttr(Opaque<bindings::ib_gid_attr>);

impl GidAttr {
    fn raw(&self) -> &bindings::ib_gid_attr {
        // SAFETY: a `GidAttr` is only handed out by reference to an entry
        // the core holds a reference on while the reference lives
        // (`AhAttr::sgid_attr`).
        unsafe { &*self.0.get() }
    }

    /// The GID.
    pub fn gid(&self) -> [u8; 16] {
        // SAFETY: every bit pattern of the union is a valid byte array.
        unsafe { *self.raw().gid.raw.as_ref() }
    }

    /// The GID type (`enum ib_gid_type`: 0 IB/RoCE v1, 2 RoCE v2).
    pub fn gid_type(&self) -> u32 {
        self.raw().gid_type
    }
}

/// A driver of RDMA devices.
pub trait IbDriver: Sized + Send + Sync + 'static {
    /// Per-device state of the driver.
    type Data: Send + Sync;
    /// `enum rdma_driver_id`.
    const DRIVER_ID: u32;
    /// The uverbs ABI version its user-space provider expects.
    const UVERBS_ABI_VER: u32;
    /// The port hardware counters.
    const HW_COUNTERS: &'static [StatDesc];

    /// Fills the device attributes (`attr` is zeroed).
    fn query_device(dev: &Device<Self>, attr: &mut DeviceAttr) -> Result;
    /// Fills the attributes of port `port` (`attr` is zeroed).
    fn query_port(dev: &Device<Self>, port: u32, attr: &mut PortAttr) -> Result;
    /// Changes the device attributes of `mask` (`IB_DEVICE_MODIFY_*`);
    /// the node description, if asked for and this returns `Ok`, is then
    /// set by the caller.
    fn modify_device(dev: &Device<Self>, mask: u32, attr: &DeviceModify) -> Result;
    /// Changes the attributes of port `port` (`IB_PORT_*` modify flags).
    fn modify_port(dev: &Device<Self>, port: u32, mask: u32, attr: &PortModify) -> Result;
    /// The P_Key at `index` of port `port`'s table.
    fn query_pkey(dev: &Device<Self>, port: u32, index: u16) -> Result<u16>;
    /// The immutable attributes of port `port`.
    fn port_immutable(dev: &Device<Self>, port: u32) -> Result<PortImmutable>;
    /// The link layer of port `port` (`enum rdma_link_layer`).
    fn link_layer(dev: &Device<Self>, port: u32) -> u32;
    /// A user context is being created.
    fn alloc_ucontext(dev: &Device<Self>) -> Result;
    /// A user context is being destroyed.
    fn dealloc_ucontext(dev: &Device<Self>);
    /// A protection domain is being created.
    fn alloc_pd(dev: &Device<Self>) -> Result;
    /// A protection domain is being destroyed.
    fn dealloc_pd(dev: &Device<Self>);
    /// Reads the counters of port `port` into `values`; returns how many.
    fn hw_stats(dev: &Device<Self>, port: u32, values: &mut [u64]) -> Result<usize>;
    /// The device is registered and about to be announced to the core's
    /// clients (`enable_driver`).
    fn enable(dev: &Device<Self>) -> Result;
    /// An event of the netdev bound to `dev`.
    fn netdev_event(dev: &Device<Self>, ndev: &NetDevice, event: NetdevEvent);
    /// Installs the ops of the driver's verbs objects, each kind's from its
    /// own module (`cq::install::<Self>(ops)`, ...).
    fn install_verbs(_ops: &mut bindings::ib_device_ops) {}
}

/// What a device is registered with.
pub struct DeviceInfo<'a> {
    /// Device name (`rxe0`).
    pub name: &'a CStr,
    /// Node GUID, in wire (big-endian) byte order.
    pub node_guid: [u8; 8],
    /// Node description.
    pub node_desc: &'a CStr,
    /// Ports.
    pub phys_port_cnt: u32,
    /// Extra uverbs write commands (bit numbers of `IB_USER_VERBS_CMD_*`)
    /// beyond those the core enables from the ops present.
    pub uverbs_cmds: &'a [u32],
    /// Whether the device has the sysfs `parent` attribute (the name of the
    /// netdev bound to port 1).
    pub sysfs_parent: bool,
}

/// An RDMA device of driver `T`.
///
/// # Invariants
///
/// The `ib_device` was allocated by [`Device::register`] (so it is the first
/// member of a `struct rrxe_ib_device` whose `drv` is a
/// `Pin<KBox<T::Data>>` made foreign) and has not been deallocated: a
/// `&Device<T>` is only made from an op the core calls on a live device, or
/// from a reference counted lookup ([`DeviceRef`]).
#[repr(transparent)]
pub struct Device<T: IbDriver>(Opaque<bindings::ib_device>, PhantomData<T>);

// SAFETY: the driver data is `Send + Sync`, and the `ib_device` is shared
// with the RDMA core, which synchronises its own fields.
unsafe impl<T: IbDriver> Send for Device<T> {}
// SAFETY: as above.
unsafe impl<T: IbDriver> Sync for Device<T> {}

impl<T: IbDriver> Device<T> {
    /// # Safety
    ///
    /// `ptr` must be a live device of driver `T` (see the type invariants)
    /// for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_device) -> &'a Self {
        // SAFETY: transparent wrapper; validity is the caller's promise.
        unsafe { &*ptr.cast() }
    }

    /// The raw `ib_device`.
    pub fn as_raw(&self) -> *mut bindings::ib_device {
        self.0.get()
    }

    /// The driver's per-device data.
    #[inline]
    pub fn data(&self) -> Pin<&T::Data> {
        // Read here rather than through `rrxe_ib_drv`: every packet asks
        // for it, several times.
        // SAFETY: the device was allocated as the `ib_dev` of a `struct
        // rrxe_ib_device` (`rrxe_ib_alloc_device`), whose `drv` holds a
        // `Pin<KBox<T::Data>>` made foreign until `dealloc_driver`, after
        // which no `&Device` exists (invariants); it is written once,
        // before any `&Device` is handed out.
        unsafe {
            let outer = kernel::container_of!(self.as_raw(), bindings::rrxe_ib_device, ib_dev);
            <Pin<KBox<T::Data>> as ForeignOwnable>::borrow((*outer).drv)
        }
    }

    /// The device name.
    pub fn name(&self) -> &CStr {
        // SAFETY: `name` is a NUL-terminated array of the live device, set
        // before registration and changed only by a rename (a torn read of a
        // name used in messages is harmless).
        unsafe { CStr::from_char_ptr((*self.as_raw()).name.as_ptr()) }
    }

    /// The netdev bound to `port`, with a reference held.
    pub fn netdev(&self, port: u32) -> Option<NetDevRef> {
        // SAFETY: the device is live; the core returns a held netdev or NULL.
        let ptr = unsafe { bindings::ib_device_get_netdev(self.as_raw(), port) };
        // INVARIANT: `ib_device_get_netdev` took a reference.
        NonNull::new(ptr).map(NetDevRef)
    }

    /// The netdev of GID `index` of `port`, with a reference held: the one
    /// that has the GID's address (a VLAN device for a GID of a VLAN's
    /// address), which is what the C driver sends a packet from
    /// (`rxe_init_packet`). `None` for an empty entry.
    pub fn gid_netdev(&self, port: u32, index: u8) -> Option<NetDevRef> {
        // SAFETY: the device is live; the core returns a held attribute or an
        // error pointer (`-EINVAL` for an index beyond the table).
        let attr = unsafe { bindings::rdma_get_gid_attr(self.as_raw(), port, index.into()) };
        if is_err_or_null(attr) {
            return None;
        }
        let ndev = {
            let _rcu = kernel::sync::rcu::read_lock();
            // SAFETY: the attribute is held, and read inside an RCU read
            // section as the function requires.
            let ptr = unsafe { bindings::rdma_read_gid_attr_ndev_rcu(attr) };
            match NonNull::new(ptr).filter(|p| !is_err_or_null(p.as_ptr())) {
                Some(ptr) => {
                    // SAFETY: the netdev is valid inside the read section;
                    // the reference taken keeps it valid after it.
                    unsafe { bindings::rrxe_netdev_hold(ptr.as_ptr()) };
                    // INVARIANT: a reference is held.
                    Some(NetDevRef(ptr))
                }
                None => None,
            }
        };
        // SAFETY: puts the reference `rdma_get_gid_attr` took.
        unsafe { bindings::rdma_put_gid_attr(attr) };
        ndev
    }

    /// Speed and width of `port` from the netdev's ethtool link settings
    /// (`ib_get_eth_speed`; takes RTNL).
    pub fn eth_speed(&self, port: u32) -> Result<(u16, u8)> {
        let mut speed = 0u16;
        let mut width = 0u8;
        // SAFETY: the device is live; the out pointers are valid.
        let ret =
            unsafe { bindings::ib_get_eth_speed(self.as_raw(), port, &mut speed, &mut width) };
        kernel::error::to_result(ret)?;
        Ok((speed, width))
    }

    /// Queues the unregistration of this device (`ib_unregister_device_queued`),
    /// for contexts that may not wait for it, such as a netdev notifier.
    pub fn unregister_queued(&self) {
        // SAFETY: the device is live and registered with `dealloc_driver`.
        unsafe { bindings::ib_unregister_device_queued(self.as_raw()) };
    }

    /// Dispatches a port event (`enum ib_event_type`) to the core's clients.
    pub fn dispatch_port_event(&self, port: u32, event: u32) {
        // SAFETY: all zeroes is a valid `ib_event` (a pointer, a union of a
        // pointer and a port number, an integer).
        let mut ev: bindings::ib_event = unsafe { core::mem::zeroed() };
        ev.device = self.as_raw();
        // SAFETY: a bindgen union field: writes the port number variant.
        unsafe { *ev.element.port_num.as_mut() = port };
        ev.event = event;
        // SAFETY: `ev` is a valid event of the live device for the call.
        unsafe { bindings::ib_dispatch_event(&ev) };
    }

    /// The registered device of driver `T` bound to `ndev`, if any.
    pub fn get_by_netdev(ndev: &NetDevice) -> Option<DeviceRef<T>> {
        // SAFETY: `ndev` is valid; the core returns a counted device or NULL.
        let ptr = unsafe { bindings::ib_device_get_by_netdev(ndev.as_raw(), T::DRIVER_ID) };
        // INVARIANT: a device with `T`'s driver id was registered by
        // `Device::<T>::register` (one driver per id) and is held by the
        // reference `ib_device_get_by_netdev` took.
        NonNull::new(ptr).map(|p| DeviceRef(p, PhantomData))
    }

    /// A registration reference on the device of `qp`, a QP of driver `T`
    /// while it is attached (`ib_device_try_get`); `None` once the device's
    /// unregistration began.
    pub fn of_qp(qp: &super::object::CoreObject<bindings::ib_qp>) -> Option<DeviceRef<T>> {
        // SAFETY: an attached QP's `ib_qp` is valid (`CoreObject`), and so
        // is its device, which is freed only after its QPs are destroyed.
        let dev = unsafe { (*qp.as_ptr()).device };
        // SAFETY: a valid device; a reference is taken only if it is still
        // registered.
        if dev.is_null() || !unsafe { bindings::rrxe_ib_device_try_get(dev) } {
            return None;
        }
        // INVARIANT: a QP of driver `T`'s device, a reference held.
        NonNull::new(dev).map(|p| DeviceRef(p, PhantomData))
    }

    /// Creates, sets up and registers a device of driver `T` bound to
    /// `ndev` on port 1. On error nothing is left behind.
    pub fn register(
        module: &ThisModule,
        info: &DeviceInfo<'_>,
        ndev: &NetDevice,
        data: impl PinInit<T::Data, Error>,
    ) -> Result {
        let data = KBox::pin_init(data, GFP_KERNEL)?;
        // SAFETY: no preconditions.
        let raw = unsafe { bindings::rrxe_ib_alloc_device() };
        if raw.is_null() {
            return Err(ENOMEM);
        }
        // SAFETY: `raw` is a freshly allocated `rrxe_ib_device`; nothing else
        // sees it yet. Once `drv` is set the ops (installed below, including
        // `dealloc_driver`) own `data`: `ib_dealloc_device` frees it through
        // `dealloc_driver`, on the error paths here and after unregistration.
        unsafe {
            bindings::rrxe_ib_set_drv(raw, data.into_foreign());
            bindings::rrxe_ib_mark_name_assigned_by_user(raw);
            let dev = &mut *raw;
            dev.node_type = bindings::RDMA_NODE_IB_CA as u8;
            dev.phys_port_cnt = info.phys_port_cnt;
            dev.num_comp_vectors = bindings::rrxe_num_possible_cpus() as ffi::c_int;
            dev.local_dma_lkey = 0;
            dev.node_guid = u64::from_ne_bytes(info.node_guid);
            let desc = info.node_desc.to_bytes();
            let n = desc.len().min(dev.node_desc.len() - 1);
            for (d, s) in dev.node_desc.iter_mut().zip(&desc[..n]) {
                *d = *s as ffi::c_char;
            }
            for cmd in info.uverbs_cmds {
                dev.uverbs_cmd_mask |= 1u64 << cmd;
            }
            let ops = Self::ops(module, info.sysfs_parent);
            bindings::ib_set_device_ops(raw, &ops);
        }
        // SAFETY: `raw` is a valid, unregistered device; `ndev` is held by
        // the caller for the call (the core takes its own reference).
        let mut ret = unsafe { bindings::ib_device_set_netdev(raw, ndev.as_raw(), 1) };
        if ret == 0 {
            // SAFETY: as above; the name is NUL-terminated; NULL DMA device:
            // the core uses virtual DMA (CONFIG_INFINIBAND_VIRT_DMA).
            ret = unsafe {
                bindings::ib_register_device(raw, info.name.as_char_ptr(), core::ptr::null_mut())
            };
        }
        if ret != 0 {
            // SAFETY: registration failed; the caller deallocates (the core
            // never frees a device whose registration failed). This calls
            // `dealloc_driver`, freeing `data`.
            unsafe { bindings::ib_dealloc_device(raw) };
        }
        kernel::error::to_result(ret)
    }

    fn ops(module: &ThisModule, parent: bool) -> bindings::ib_device_ops {
        // SAFETY: all zeroes is a valid `ib_device_ops`: integers, raw
        // pointers, `Option`s of function pointers and bitfields.
        let mut ops: bindings::ib_device_ops = unsafe { core::mem::zeroed() };
        ops.owner = module.as_ptr();
        ops.driver_id = T::DRIVER_ID;
        ops.uverbs_abi_ver = T::UVERBS_ABI_VER;
        if parent {
            // A static C attribute group: only its address is taken.
            ops.device_group = &raw const bindings::rrxe_ib_parent_group;
        }
        ops.query_device = Some(Self::query_device_cb);
        ops.query_port = Some(Self::query_port_cb);
        ops.modify_device = Some(Self::modify_device_cb);
        ops.modify_port = Some(Self::modify_port_cb);
        ops.query_pkey = Some(Self::query_pkey_cb);
        ops.get_port_immutable = Some(Self::port_immutable_cb);
        ops.get_link_layer = Some(Self::link_layer_cb);
        ops.alloc_ucontext = Some(Self::alloc_ucontext_cb);
        ops.dealloc_ucontext = Some(Self::dealloc_ucontext_cb);
        // With this op the core takes no module reference for an open user
        // context: `rdma link delete` and `rmmod` go ahead under a live
        // process, the core destroying its objects through the ordinary
        // destroy ops first, as with the C driver.
        ops.disassociate_ucontext = Some(Self::disassociate_ucontext_cb);
        ops.alloc_pd = Some(Self::alloc_pd_cb);
        ops.dealloc_pd = Some(Self::dealloc_pd_cb);
        ops.alloc_hw_port_stats = Some(Self::alloc_hw_port_stats_cb);
        ops.get_hw_stats = Some(Self::get_hw_stats_cb);
        ops.dealloc_driver = Some(Self::dealloc_driver_cb);
        ops.enable_driver = Some(Self::enable_driver_cb);
        // The driver keeps no state of its own in these objects yet: they are
        // the core's structures exactly.
        ops.size_ib_ucontext = core::mem::size_of::<bindings::ib_ucontext>();
        ops.size_ib_pd = core::mem::size_of::<bindings::ib_pd>();
        T::install_verbs(&mut ops);
        ops
    }

    /// # Safety
    ///
    /// Called by the core on a live device of this driver with a valid
    /// attribute buffer and a valid or NULL udata.
    unsafe extern "C" fn query_device_cb(
        dev: *mut bindings::ib_device,
        attr: *mut bindings::ib_device_attr,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        // SAFETY: `udata` is valid or NULL, as the callee accepts.
        let ret = unsafe { bindings::rrxe_ib_no_udata_io(udata) };
        if ret != 0 {
            return ret;
        }
        // SAFETY: see the function's safety section; `attr` is writable and
        // all zeroes is a valid `ib_device_attr` (integers and bitfields).
        let (dev, attr) = unsafe {
            attr.write_bytes(0, 1);
            (Self::from_raw(dev), &mut *attr)
        };
        super::op_result(T::query_device(dev, attr))
    }

    /// # Safety
    ///
    /// Called by the core on a live device with a valid attribute buffer.
    unsafe extern "C" fn query_port_cb(
        dev: *mut bindings::ib_device,
        port: u32,
        attr: *mut bindings::ib_port_attr,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section; all zeroes is a valid
        // `ib_port_attr` (integers and bitfields).
        let (dev, attr) = unsafe {
            attr.write_bytes(0, 1);
            (Self::from_raw(dev), &mut *attr)
        };
        super::op_result(T::query_port(dev, port, attr))
    }

    /// # Safety
    ///
    /// Called by the core on a live device with a valid request.
    unsafe extern "C" fn modify_device_cb(
        dev: *mut bindings::ib_device,
        mask: ffi::c_int,
        attr: *mut bindings::ib_device_modify,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        let (dev, attr) = unsafe { (Self::from_raw(dev), &*attr) };
        let mask = mask as u32;
        if let Err(e) = T::modify_device(dev, mask, attr) {
            return e.to_errno();
        }
        if mask & bindings::ib_device_modify_flags_IB_DEVICE_MODIFY_NODE_DESC != 0 {
            // SAFETY: the device is live; the core serialises changes of the
            // node description (it calls this under its sysfs store), and
            // readers copy it as the C drivers' memcpy leaves it.
            unsafe { (*dev.as_raw()).node_desc = attr.node_desc };
        }
        0
    }

    /// # Safety
    ///
    /// Called by the core on a live device with a valid request.
    unsafe extern "C" fn modify_port_cb(
        dev: *mut bindings::ib_device,
        port: u32,
        mask: ffi::c_int,
        attr: *mut bindings::ib_port_modify,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        let (dev, attr) = unsafe { (Self::from_raw(dev), &*attr) };
        super::op_result(T::modify_port(dev, port, mask as u32, attr))
    }

    /// # Safety
    ///
    /// Called by the core on a live device with a valid output pointer.
    unsafe extern "C" fn query_pkey_cb(
        dev: *mut bindings::ib_device,
        port: u32,
        index: u16,
        pkey: *mut u16,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        let dev = unsafe { Self::from_raw(dev) };
        match T::query_pkey(dev, port, index) {
            Ok(p) => {
                // SAFETY: `pkey` is valid for writes.
                unsafe { pkey.write(p) };
                0
            }
            Err(e) => e.to_errno(),
        }
    }

    /// # Safety
    ///
    /// Called by the core on a live device with a valid output pointer.
    unsafe extern "C" fn port_immutable_cb(
        dev: *mut bindings::ib_device,
        port: u32,
        imm: *mut bindings::ib_port_immutable,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        let dev = unsafe { Self::from_raw(dev) };
        match T::port_immutable(dev, port) {
            Ok(p) => {
                // SAFETY: `imm` is valid for writes.
                let imm = unsafe { &mut *imm };
                imm.core_cap_flags = p.core_cap_flags;
                imm.pkey_tbl_len = p.pkey_tbl_len;
                imm.gid_tbl_len = p.gid_tbl_len;
                imm.max_mad_size = p.max_mad_size;
                0
            }
            Err(e) => e.to_errno(),
        }
    }

    /// # Safety
    ///
    /// Called by the core on a live device.
    unsafe extern "C" fn link_layer_cb(
        dev: *mut bindings::ib_device,
        port: u32,
    ) -> bindings::rdma_link_layer {
        // SAFETY: see the function's safety section.
        T::link_layer(unsafe { Self::from_raw(dev) }, port)
    }

    /// # Safety
    ///
    /// Called by the core with a valid context of a live device.
    unsafe extern "C" fn alloc_ucontext_cb(
        ctx: *mut bindings::ib_ucontext,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        let dev = unsafe { Self::from_raw((*ctx).device) };
        super::op_result(T::alloc_ucontext(dev))
    }

    /// # Safety
    ///
    /// Called by the core with a valid context of a live device.
    unsafe extern "C" fn dealloc_ucontext_cb(ctx: *mut bindings::ib_ucontext) {
        // SAFETY: see the function's safety section.
        T::dealloc_ucontext(unsafe { Self::from_raw((*ctx).device) });
    }

    /// Nothing to do, as in the C driver: the queues a process has mapped
    /// are `vmalloc_user` pages the mapping holds its own references on (the
    /// buffer's `vfree` leaves them to the process until it unmaps them), and
    /// no other state of this driver lives in the process.
    ///
    /// # Safety
    ///
    /// None required: the context is not touched.
    unsafe extern "C" fn disassociate_ucontext_cb(_ctx: *mut bindings::ib_ucontext) {}

    /// # Safety
    ///
    /// Called by the core with a valid PD of a live device.
    unsafe extern "C" fn alloc_pd_cb(
        pd: *mut bindings::ib_pd,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        let dev = unsafe { Self::from_raw((*pd).device) };
        super::op_result(T::alloc_pd(dev))
    }

    /// # Safety
    ///
    /// Called by the core with a valid PD of a live device.
    unsafe extern "C" fn dealloc_pd_cb(
        pd: *mut bindings::ib_pd,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        T::dealloc_pd(unsafe { Self::from_raw((*pd).device) });
        0
    }

    /// # Safety
    ///
    /// Called by the core on a live device.
    unsafe extern "C" fn alloc_hw_port_stats_cb(
        _dev: *mut bindings::ib_device,
        _port: u32,
    ) -> *mut bindings::rdma_hw_stats {
        // SAFETY: the descriptors are `'static` (a `StatDesc` is a transparent
        // `rdma_stat_desc`); the core keeps the pointer in the stats.
        unsafe {
            bindings::rdma_alloc_hw_stats_struct(
                T::HW_COUNTERS.as_ptr().cast(),
                T::HW_COUNTERS.len() as ffi::c_int,
                bindings::RDMA_HW_STATS_DEFAULT_LIFESPAN as ffi::c_ulong,
            )
        }
    }

    /// # Safety
    ///
    /// Called by the core on a live device with stats from
    /// `alloc_hw_port_stats` or NULL.
    unsafe extern "C" fn get_hw_stats_cb(
        dev: *mut bindings::ib_device,
        stats: *mut bindings::rdma_hw_stats,
        port: u32,
        _index: ffi::c_int,
    ) -> ffi::c_int {
        if port == 0 || stats.is_null() {
            return EINVAL.to_errno();
        }
        // SAFETY: see the function's safety section: the stats hold
        // `num_counters` values, and the core serialises their use with the
        // stats' lock.
        let (dev, values) = unsafe {
            let n = usize::try_from((*stats).num_counters).unwrap_or(0);
            (Self::from_raw(dev), (*stats).value.as_mut_slice(n))
        };
        match T::hw_stats(dev, port, values) {
            Ok(n) => n.try_into().unwrap_or(0),
            Err(e) => e.to_errno(),
        }
    }

    /// # Safety
    ///
    /// Called by the core on a live, registered device.
    unsafe extern "C" fn enable_driver_cb(dev: *mut bindings::ib_device) -> ffi::c_int {
        // SAFETY: see the function's safety section.
        super::op_result(T::enable(unsafe { Self::from_raw(dev) }))
    }

    /// # Safety
    ///
    /// Called by the core once, as the last op of a device of this driver.
    unsafe extern "C" fn dealloc_driver_cb(dev: *mut bindings::ib_device) {
        // SAFETY: `drv` was made foreign by `register` and is taken back
        // exactly once, here; no `&Device` outlives this call.
        drop(unsafe {
            <Pin<KBox<T::Data>> as ForeignOwnable>::from_foreign(bindings::rrxe_ib_drv(dev))
        });
    }
}

/// A counted reference to a registered device of driver `T`; dropping it
/// puts the reference (`ib_device_put`).
///
/// # Invariants
///
/// The pointer is a device of driver `T` on which a registration reference
/// (`ib_device_try_get`) is held.
pub struct DeviceRef<T: IbDriver>(NonNull<bindings::ib_device>, PhantomData<T>);

impl<T: IbDriver> core::ops::Deref for DeviceRef<T> {
    type Target = Device<T>;

    fn deref(&self) -> &Device<T> {
        // SAFETY: the held reference keeps the device (and its data) live.
        unsafe { Device::from_raw(self.0.as_ptr()) }
    }
}

impl<T: IbDriver> Drop for DeviceRef<T> {
    fn drop(&mut self) {
        // SAFETY: puts the reference held (type invariant).
        unsafe { bindings::ib_device_put(self.0.as_ptr()) };
    }
}

/// A netdev with a reference held (`dev_hold`); dropping it puts it.
///
/// # Invariants
///
/// A reference on the pointed netdev is held.
pub struct NetDevRef(NonNull<bindings::net_device>);

impl core::ops::Deref for NetDevRef {
    type Target = NetDevice;

    fn deref(&self) -> &NetDevice {
        // SAFETY: the reference held keeps the netdev valid.
        unsafe { NetDevice::from_raw(self.0.as_ptr()) }
    }
}

impl Drop for NetDevRef {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: puts the reference held (type invariant).
        unsafe { bindings::rrxe_netdev_put(self.0.as_ptr()) };
    }
}

// The device model's reads of a netdev. `#[inline]`: the `rdma` module is
// also built into `rdma_ucm`, which does not link the glue they call.
impl NetDevice {
    /// The MTU.
    #[inline]
    pub fn mtu(&self) -> u32 {
        // SAFETY: the netdev is valid (type invariant of `NetDevice`).
        unsafe { bindings::rrxe_netdev_mtu(self.as_raw()) }
    }

    /// Whether `mac` is its hardware address (a 6-byte, Ethernet one),
    /// compared in place, without copying the address out (the loopback
    /// test of every packet sent).
    #[inline]
    pub fn has_mac(&self, mac: &[u8; 6]) -> bool {
        // SAFETY: the netdev is valid; `mac` is 6 readable bytes.
        unsafe { bindings::rrxe_netdev_has_mac(self.as_raw(), mac.as_ptr()) }
    }

    /// The hardware address truncated or padded to 6 bytes, or a random
    /// locally administered unicast one if it has none.
    #[inline]
    pub fn mac_or_random(&self) -> [u8; 6] {
        let mut mac = [0u8; 6];
        // SAFETY: the netdev is valid; `mac` has room for 6 bytes.
        let len = unsafe { bindings::rrxe_netdev_hw_addr(self.as_raw(), mac.as_mut_ptr(), 6) };
        if len == 0 {
            // SAFETY: `mac` is 6 writable bytes.
            unsafe { bindings::rrxe_eth_random_addr(mac.as_mut_ptr()) };
        }
        mac
    }

    /// Running with carrier: the RDMA port is ACTIVE (`ib_get_curr_port_state`).
    #[inline]
    pub fn port_active(&self) -> bool {
        // SAFETY: the netdev is valid.
        unsafe { bindings::rrxe_netdev_port_active(self.as_raw()) }
    }

    /// Administratively up (`IFF_UP`).
    #[inline]
    pub fn admin_up(&self) -> bool {
        // SAFETY: the netdev is valid.
        unsafe { bindings::rrxe_netdev_admin_up(self.as_raw()) }
    }
}

/// The driver-wide registration of driver `T`: a netdev notifier that
/// passes the events of netdevs bound to `T`'s devices to
/// [`IbDriver::netdev_event`]. Dropping it unregisters every device of `T`
/// (`ib_unregister_driver`), then the notifier.
///
/// # Invariants
///
/// `nb` is registered with `register_netdevice_notifier` from construction
/// until drop, and pinned.
#[pin_data(PinnedDrop)]
pub struct DriverRegistration<T: IbDriver> {
    #[pin]
    nb: Opaque<bindings::notifier_block>,
    _t: PhantomData<T>,
}

// SAFETY: the notifier block is only touched by (un)registration, which the
// netdev core serialises.
unsafe impl<T: IbDriver> Send for DriverRegistration<T> {}
// SAFETY: `&DriverRegistration` exposes nothing.
unsafe impl<T: IbDriver> Sync for DriverRegistration<T> {}

impl<T: IbDriver> DriverRegistration<T> {
    /// Registers the driver's netdev notifier.
    pub fn register() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            nb <- Opaque::try_ffi_init(move |slot: *mut bindings::notifier_block| {
                let mut nb: bindings::notifier_block = pin_init::zeroed();
                nb.notifier_call = Some(Self::notify);
                // SAFETY: `slot` is valid and pinned; it is unregistered in
                // `drop` before its memory goes away.
                // INVARIANT: registered on success.
                kernel::error::to_result(unsafe {
                    slot.write(nb);
                    bindings::register_netdevice_notifier(slot)
                })
            }),
            _t: PhantomData,
        })
    }

    /// # Safety
    ///
    /// Called by the netdev core with RTNL held and a valid notifier info.
    unsafe extern "C" fn notify(
        _nb: *mut bindings::notifier_block,
        event: ffi::c_ulong,
        info: *mut ffi::c_void,
    ) -> ffi::c_int {
        // SAFETY: the info of a netdev notifier holds a valid netdev.
        let ndev = unsafe { NetDevice::from_raw(bindings::rrxe_netdev_notifier_info_to_dev(info)) };
        if let Some(dev) = Device::<T>::get_by_netdev(ndev) {
            T::netdev_event(&dev, ndev, NetdevEvent::from_raw(event));
        }
        bindings::NOTIFY_OK as ffi::c_int
    }
}

#[pinned_drop]
impl<T: IbDriver> PinnedDrop for DriverRegistration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: unregisters (and waits for) every device of this driver,
        // then the notifier registered since construction (type invariant).
        unsafe {
            bindings::ib_unregister_driver(T::DRIVER_ID);
            bindings::unregister_netdevice_notifier(self.nb.get());
        }
    }
}

/// `IS_ERR_OR_NULL`: a null pointer or an error pointer (the last
/// `MAX_ERRNO` addresses). Checked here rather than with
/// `kernel::error::from_err_ptr`, which is not inlined (two calls a check),
/// on the per-packet path.
#[inline]
fn is_err_or_null<T>(ptr: *const T) -> bool {
    const MAX_ERRNO: usize = 4095;
    ptr.is_null() || ptr as usize > usize::MAX - MAX_ERRNO
}
