// SPDX-License-Identifier: GPL-2.0

//! An IB client (`struct ib_client`): told of every RDMA device as it comes
//! and goes.
//!
//! The RDMA core calls the client's `add` for each registered device (those
//! present at registration included) and `remove` when a device goes away or
//! the client unregisters, with the data `add` attached to the device. The
//! C clients keep their `struct ib_client` in a static; so does this one, so
//! a module has at most one client registered at a time.

use crate::rdma::bindings;
use core::{
    marker::PhantomData,
    sync::atomic::{
        AtomicBool,
        Ordering, //
    },
};
use kernel::{
    ffi,
    prelude::*,
    types::{
        ForeignOwnable,
        Opaque, //
    },
};

/// A device as a client sees it: registered with the RDMA core for the
/// duration of the callback it is passed to.
#[repr(transparent)]
pub(crate) struct ClientDevice(Opaque<bindings::ib_device>);

impl ClientDevice {
    /// # Safety
    ///
    /// `ptr` is a registered device, alive for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_device) -> &'a ClientDevice {
        // SAFETY: `ClientDevice` is a transparent wrapper of the C struct,
        // valid for `'a` by the caller's guarantee.
        unsafe { &*ptr.cast::<ClientDevice>() }
    }

    /// The C device.
    pub(crate) fn as_raw(&self) -> *mut bindings::ib_device {
        self.0.get()
    }

    /// The port numbers of `rdma_for_each_port()`.
    pub(crate) fn ports(&self) -> core::ops::RangeInclusive<u32> {
        // SAFETY: the device is registered (type invariant of the reference).
        let (first, last) = unsafe {
            (
                bindings::rrxe_cm_start_port(self.as_raw()),
                bindings::rrxe_cm_end_port(self.as_raw()),
            )
        };
        first..=last
    }

    /// Whether `port` speaks the CM protocol (`rdma_cap_ib_cm()`).
    pub(crate) fn cap_ib_cm(&self, port: u32) -> bool {
        // SAFETY: the device is registered; the core checks the port range.
        unsafe { bindings::rrxe_cm_cap_ib_cm(self.as_raw(), port) }
    }

    /// Adds the CM's counter directories to `port`.
    pub(crate) fn add_counters(&self, port: u32) -> Result {
        // SAFETY: the device is registered; the glue's attribute tables are
        // static.
        kernel::error::to_result(unsafe { bindings::rrxe_cm_add_counters(self.as_raw(), port) })
    }

    /// Removes the CM's counter directories from `port`; returns once no
    /// reader is left in them.
    pub(crate) fn remove_counters(&self, port: u32) {
        // SAFETY: the device is registered and the directories were added.
        unsafe { bindings::rrxe_cm_remove_counters(self.as_raw(), port) };
    }

    /// Sets (`set`) or clears the `IB_PORT_CM_SUP` capability of `port`
    /// (`ib_modify_port()`).
    pub(crate) fn set_port_cm_sup(&self, port: u32, set: bool) -> Result {
        let cm_sup = bindings::ib_port_capability_mask_bits_IB_PORT_CM_SUP;
        let mut modify: bindings::ib_port_modify = pin_init::zeroed();
        if set {
            modify.set_port_cap_mask = cm_sup;
        } else {
            modify.clr_port_cap_mask = cm_sup;
        }
        // SAFETY: the device is registered and `modify` lives for the call.
        kernel::error::to_result(unsafe {
            bindings::ib_modify_port(self.as_raw(), port, 0, &mut modify)
        })
    }
}

/// A client's behaviour.
pub(crate) trait ClientDriver: 'static {
    /// The client's name (`ib_client.name`).
    const NAME: &'static CStr;
    /// What the client attaches to each device it takes.
    type Data: ForeignOwnable + Send;

    /// A device appeared; an error means the client leaves it alone (and
    /// `remove` is not called for it).
    fn add(dev: &ClientDevice) -> Result<Self::Data>;

    /// The device goes away (or the client unregisters): the last use of
    /// `data`.
    fn remove(dev: &ClientDevice, data: Self::Data);
}

/// The data the registered client `T` attached to `dev`, if any: none
/// before `add` returned, or after `remove` began.
///
/// # Safety
///
/// `T` is the client registered; the caller must not use the data past the
/// moment `remove` frees it: it
/// runs in a callback that `remove` waits for (a sysfs read of a file that
/// `remove` takes away first).
pub(crate) unsafe fn client_data<'a, T: ClientDriver>(
    dev: &'a ClientDevice,
) -> Option<<T::Data as ForeignOwnable>::Borrowed<'a>> {
    if !CLIENT_TAKEN.load(Ordering::Acquire) {
        return None;
    }
    // SAFETY: the device is registered and `CLIENT` is registered (taken).
    let data = unsafe { bindings::rrxe_cm_get_client_data(dev.as_raw(), CLIENT.0.get()) };
    if data.is_null() {
        return None;
    }
    // SAFETY: a non-null client data is what `add_callback` attached with
    // `into_foreign`, alive until `remove` as the caller guarantees.
    Some(unsafe { T::Data::borrow(data) })
}

/// The module's `struct ib_client`, like the C clients' static ones.
struct ClientSlot(Opaque<bindings::ib_client>);

// SAFETY: the slot is written only by `ClientRegistration::register` while no
// registration exists (guarded by `CLIENT_TAKEN`), then only by the RDMA core
// under its own locks until unregistration.
unsafe impl Sync for ClientSlot {}

static CLIENT: ClientSlot = ClientSlot(Opaque::uninit());
static CLIENT_TAKEN: AtomicBool = AtomicBool::new(false);

/// A registered client; dropping it unregisters it, after which `remove`
/// has run for every device the client took.
///
/// # Invariants
///
/// `CLIENT` is registered with the RDMA core, with `T`'s callbacks, from
/// construction until drop, and this registration alone owns it.
pub(crate) struct ClientRegistration<T: ClientDriver> {
    _t: PhantomData<T>,
}

impl<T: ClientDriver> ClientRegistration<T> {
    /// Registers `T`; `add` runs for each device already registered before
    /// this returns. `EBUSY` if the module has a client already.
    pub(crate) fn register() -> Result<Self> {
        if CLIENT_TAKEN.swap(true, Ordering::AcqRel) {
            return Err(EBUSY);
        }
        let client = bindings::ib_client {
            name: T::NAME.as_char_ptr(),
            add: Some(Self::add_callback),
            remove: Some(Self::remove_callback),
            ..Default::default()
        };
        let slot = CLIENT.0.get();
        // SAFETY: `slot` is static; no registration uses it (`CLIENT_TAKEN`
        // was clear), so nothing else reads or writes it now.
        unsafe { slot.write(client) };
        // SAFETY: `slot` is a fully initialised client in static memory.
        let ret = unsafe { bindings::ib_register_client(slot) };
        if let Err(e) = kernel::error::to_result(ret) {
            CLIENT_TAKEN.store(false, Ordering::Release);
            return Err(e);
        }
        // INVARIANT: registered just above.
        Ok(Self { _t: PhantomData })
    }

    /// # Safety
    ///
    /// Called by the RDMA core with a registered device.
    unsafe extern "C" fn add_callback(ibdev: *mut bindings::ib_device) -> ffi::c_int {
        // SAFETY: the core passes a registered device for the callback.
        let dev = unsafe { ClientDevice::from_raw(ibdev) };
        match T::add(dev) {
            Ok(data) => {
                // SAFETY: the device is registered and `CLIENT` is this
                // registered client; `remove_callback` takes the data back.
                unsafe { bindings::ib_set_client_data(ibdev, CLIENT.0.get(), data.into_foreign()) };
                0
            }
            Err(e) => e.to_errno(),
        }
    }

    /// # Safety
    ///
    /// Called by the RDMA core, once per device `add_callback` succeeded
    /// for, with the data it attached.
    unsafe extern "C" fn remove_callback(ibdev: *mut bindings::ib_device, data: *mut ffi::c_void) {
        // SAFETY: the core passes a device still registered for the call.
        let dev = unsafe { ClientDevice::from_raw(ibdev) };
        // SAFETY: `data` came from `into_foreign` in `add_callback`, and the
        // core hands it back once.
        let data = unsafe { T::Data::from_foreign(data) };
        T::remove(dev, data);
    }
}

impl<T: ClientDriver> Drop for ClientRegistration<T> {
    fn drop(&mut self) {
        // SAFETY: registered since construction (type invariant); this
        // calls `remove` for every device the client took and waits for
        // callbacks in flight.
        unsafe { bindings::ib_unregister_client(CLIENT.0.get()) };
        CLIENT_TAKEN.store(false, Ordering::Release);
    }
}
