// SPDX-License-Identifier: GPL-2.0

//! An IB client that names a character device to RDMA netlink.
//!
//! `RDMA_NLDEV_CMD_GET_CHARDEV` asks the RDMA core which device node serves
//! a client name ("rdma_cm"): the core looks for a registered `struct
//! ib_client` of that name and calls its `get_global_nl_info`, which answers
//! the node's `struct device` and ABI version (librdmacm checks the ABI this
//! way before it falls back to sysfs). The C `rdma_ucm` registers such a
//! client with no per-device callbacks; [`NlChardev`] does the same for a
//! misc device, registering the client after the node exists and
//! unregistering it before the node goes.
//!
//! Everything here is generic over the client, so a module that does not
//! register one (rdma_rxe) does not link the glue it calls.

use super::{
    bindings,
    cm::MiscWithAbiVersion,
    misc::{
        MiscFile,
        MiscOptions, //
    },
};
use core::{
    ptr,
    sync::atomic::{
        AtomicBool,
        AtomicPtr,
        Ordering, //
    },
};
use kernel::{
    error::to_result,
    ffi,
    prelude::*,
    types::Opaque, //
};

/// The static memory of one client: the RDMA core keeps a pointer to the
/// `struct ib_client` while it is registered, as C clients keep theirs in a
/// static.
pub struct ClientSlot {
    client: Opaque<bindings::ib_client>,
    /// The device node the client names; set before registration.
    cdev: AtomicPtr<kernel::bindings::device>,
    /// Whether a registration uses the slot.
    taken: AtomicBool,
}

// SAFETY: `client` is written only by `NlChardev::register` while no
// registration uses the slot (guarded by `taken`), then only by the RDMA core
// under its own locks until unregistration; the other fields are atomics.
unsafe impl Sync for ClientSlot {}

impl ClientSlot {
    /// An unused slot, for a `static`.
    pub const fn new() -> Self {
        Self {
            client: Opaque::zeroed(),
            cdev: AtomicPtr::new(ptr::null_mut()),
            taken: AtomicBool::new(false),
        }
    }
}

impl Default for ClientSlot {
    fn default() -> Self {
        Self::new()
    }
}

/// What a character device's client tells RDMA netlink.
pub trait ChardevClient: MiscFile {
    /// The client name netlink asks for (`RDMA_NLDEV_ATTR_CHARDEV_TYPE`).
    const CLIENT_NAME: &'static CStr;
    /// The ABI version reported (`RDMA_NLDEV_ATTR_CHARDEV_ABI`).
    const ABI: u64;

    /// The module's static slot for the client.
    fn slot() -> &'static ClientSlot;
}

/// A misc device with an `abi_version` attribute and an IB client naming it
/// to RDMA netlink. Dropping it unregisters the client, then the device.
///
/// # Invariants
///
/// While `registered` is true, `T::slot()` is registered with the RDMA core
/// (owned by this value), and its `cdev` is `misc`'s device.
#[pin_data(PinnedDrop)]
pub struct NlChardev<T: ChardevClient> {
    #[pin]
    misc: MiscWithAbiVersion<T>,
    registered: bool,
}

impl<T: ChardevClient> NlChardev<T> {
    /// Registers the misc device `opts`, then the client naming it.
    pub fn register(opts: MiscOptions) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            misc <- MiscWithAbiVersion::register(opts),
            registered: false,
        })
        .pin_chain(|this| {
            let slot = T::slot();
            if slot.taken.swap(true, Ordering::AcqRel) {
                return Err(EBUSY);
            }
            slot.cdev.store(this.misc.this_device(), Ordering::Release);
            let client = bindings::ib_client {
                name: T::CLIENT_NAME.as_char_ptr(),
                get_global_nl_info: Some(get_global_nl_info::<T>),
                ..Default::default()
            };
            // SAFETY: the slot is static and unused (`taken` was clear), so
            // nothing else reads or writes it now; the client is complete and
            // `ib_register_client` initialises the core's fields of it.
            let ret = unsafe {
                slot.client.get().write(client);
                bindings::ib_register_client(slot.client.get())
            };
            if let Err(e) = to_result(ret) {
                slot.taken.store(false, Ordering::Release);
                return Err(e);
            }
            // SAFETY: `registered` is not structurally pinned.
            // INVARIANT: the client is registered with `cdev` set above.
            unsafe { this.get_unchecked_mut().registered = true };
            Ok(())
        })
    }
}

#[pinned_drop]
impl<T: ChardevClient> PinnedDrop for NlChardev<T> {
    fn drop(self: Pin<&mut Self>) {
        if self.registered {
            let slot = T::slot();
            // SAFETY: registered by this value (type invariant). This waits
            // for the netlink readers inside `get_global_nl_info` (they hold
            // the core's client lock), which took their own reference on the
            // device; `misc` is dropped only after this.
            unsafe { bindings::ib_unregister_client(slot.client.get()) };
            slot.taken.store(false, Ordering::Release);
        }
    }
}

/// `get_global_nl_info` of the client of `T`.
///
/// # Safety
///
/// Called by the RDMA core, with `res` valid for writes, while the client of
/// `T` is registered.
unsafe extern "C" fn get_global_nl_info<T: ChardevClient>(
    res: *mut bindings::ib_client_nl_info,
) -> ffi::c_int {
    let cdev = T::slot().cdev.load(Ordering::Acquire);
    // SAFETY: `res` is valid (caller); `cdev` is the registered misc device,
    // alive while the client is registered (`NlChardev` invariant), and the
    // core takes its own reference on it before releasing its client lock.
    unsafe { bindings::rrxe_client_nl_info_set(res, cdev, T::ABI) };
    0
}
