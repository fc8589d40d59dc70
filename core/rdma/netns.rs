// SPDX-License-Identifier: GPL-2.0

//! Network namespaces: [`Net`], the namespace of a netdev, and [`Pernet`],
//! a driver's state per namespace (`register_pernet_subsys`, as the C rxe's
//! `rxe_ns.c`).
//!
//! A [`Pernet<T>`] is a `static` of the driver; while its
//! [`PernetRegistration`] is in place, each namespace has a slot (the
//! `net_generic` memory of the registration) holding at most one `Arc<T>`,
//! made on first use ([`Pernet::get_or_create`]). When the namespace exits,
//! or the registration is dropped, the slot is emptied and
//! [`PernetState::exit`] is called on its state; holders of other `Arc<T>`
//! references keep the memory, so a late user finds the state exited rather
//! than freed.
//!
//! Everything here is generic or `#[inline]`: the `rdma` module is also
//! built into `rdma_ucm`, which does not link the glue it calls.

use super::{
    bindings,
    netdev::NetDevice, //
};
use core::{
    marker::PhantomData,
    ptr,
    sync::atomic::{
        AtomicBool,
        AtomicPtr,
        AtomicU32,
        Ordering, //
    },
};
use kernel::{
    prelude::*,
    sync::{
        Arc,
        ArcBorrow, //
    },
    types::Opaque, //
};

/// A network namespace (`struct net`), borrowed.
///
/// # Invariants
///
/// The namespace is valid for as long as the `&Net` is.
#[repr(transparent)]
pub struct Net(Opaque<bindings::net>);

impl Net {
    /// # Safety
    ///
    /// `ptr` must be a valid namespace for `'a`.
    #[inline]
    pub unsafe fn from_raw<'a>(ptr: *mut bindings::net) -> &'a Self {
        // SAFETY: transparent wrapper; validity is the caller's promise.
        unsafe { &*ptr.cast() }
    }

    /// The raw `struct net`, for calls into C.
    #[inline]
    pub fn as_raw(&self) -> *mut bindings::net {
        self.0.get()
    }
}

// A netdev's namespace and links, for the network I/O.
impl NetDevice {
    /// The namespace the netdev is in (`dev_net`).
    #[inline]
    pub fn net(&self) -> &Net {
        // SAFETY: the netdev is valid (type invariant of `NetDevice`), and a
        // namespace outlives the netdevs in it: its devices are unregistered
        // or moved out, and their references waited for, before its
        // subsystems exit.
        unsafe { Net::from_raw(bindings::rrxe_dev_net(self.as_raw())) }
    }

    /// The interface index.
    #[inline]
    pub fn ifindex(&self) -> i32 {
        // SAFETY: the netdev is valid.
        unsafe { bindings::rrxe_netdev_ifindex(self.as_raw()) }
    }

    /// The real device under a VLAN device, `None` for any other netdev.
    #[inline]
    pub fn vlan_real_dev(&self) -> Option<&NetDevice> {
        if !self.is_vlan() {
            return None;
        }
        // SAFETY: a VLAN device is valid (type invariant) and holds a
        // reference on its real device for as long as it exists.
        let real = unsafe { bindings::rrxe_vlan_dev_real_dev(self.as_raw()) };
        // SAFETY: as above: valid while `self` is.
        (!real.is_null()).then(|| unsafe { NetDevice::from_raw(real) })
    }
}

/// A driver's state in one network namespace.
pub trait PernetState: Send + Sync + Sized + 'static {
    /// The driver's `static` of this state.
    fn pernet() -> &'static Pernet<Self>;

    /// The namespace exits (or the registration goes away): release what the
    /// state holds in it. Called once, in process context.
    fn exit(&self);
}

/// The per-namespace state `T` of a driver, one `static` per driver.
///
/// # Invariants
///
/// While `registered` is set, `id` is the `net_generic` id assigned by
/// `register_pernet_subsys`, and each namespace's slot of that id is an
/// `AtomicPtr<T>` that is null or holds one strong count of an `Arc<T>`
/// (`Arc::into_raw`), taken back only by the namespace's exit.
pub struct Pernet<T: PernetState> {
    /// Written by `register_pernet_subsys` through `pernet_operations.id`.
    id: AtomicU32,
    registered: AtomicBool,
    _t: PhantomData<Arc<T>>,
}

impl<T: PernetState> Pernet<T> {
    /// Not registered yet: see [`PernetRegistration`].
    #[expect(clippy::new_without_default, reason = "a `static` initialiser")]
    pub const fn new() -> Self {
        Self {
            id: AtomicU32::new(0),
            registered: AtomicBool::new(false),
            _t: PhantomData,
        }
    }

    /// The slot of namespace `net`.
    ///
    /// # Safety
    ///
    /// The registration must be in place and `net` valid.
    #[inline]
    unsafe fn slot(&self, net: *mut bindings::net) -> &AtomicPtr<T> {
        let id = self.id.load(Ordering::Relaxed);
        // SAFETY: registered (caller), so the namespace has `size` bytes for
        // `id`, zeroed at namespace creation (a null `AtomicPtr`), and they
        // live as long as the namespace.
        unsafe { &*bindings::rrxe_net_generic(net, id).cast::<AtomicPtr<T>>() }
    }

    /// The state in the namespace of `ndev`, made by `create` if it has none.
    /// `ENODEV` if the registration is not in place.
    pub fn get_or_create(
        &'static self,
        ndev: &NetDevice,
        create: impl FnOnce() -> Result<Arc<T>>,
    ) -> Result<Arc<T>> {
        // A held netdev keeps its namespace from reaching the subsystem exits
        // (see `NetDevice::net`), so only the registration's removal can
        // empty the slot meanwhile; it waits for RCU readers after clearing
        // `registered`, so a slot used inside a read section is still there.
        let net = ndev.net().as_raw();
        {
            let _rcu = kernel::sync::rcu::read_lock();
            if let Some(state) = self.load(net)? {
                return Ok(state);
            }
        }
        let new = create()?;
        let raw = new.clone().into_raw().cast_mut();
        let _rcu = kernel::sync::rcu::read_lock();
        let stored = if self.registered.load(Ordering::Acquire) {
            // SAFETY: registered, inside the read section; the namespace is
            // valid.
            let slot = unsafe { self.slot(net) };
            // INVARIANT: on success the slot holds the count of `raw`.
            slot.compare_exchange(ptr::null_mut(), raw, Ordering::AcqRel, Ordering::Acquire)
        } else {
            Err(ptr::null_mut())
        };
        match stored {
            Ok(_) => Ok(new),
            Err(_) => {
                // SAFETY: `raw` came from `into_raw` above and is not stored.
                drop(unsafe { Arc::from_raw(raw) });
                // Another caller made the namespace's state first (or the
                // registration is going away).
                self.load(net)?.ok_or(ENODEV)
            }
        }
    }

    /// The state in namespace `net`, if any. Call inside an RCU read section
    /// with `net` valid and kept from its subsystem exits.
    #[inline]
    fn load(&self, net: *mut bindings::net) -> Result<Option<Arc<T>>> {
        if !self.registered.load(Ordering::Acquire) {
            return Err(ENODEV);
        }
        // SAFETY: registered, and (caller) inside the read section the
        // registration's removal waits for; the namespace is valid.
        let cur = unsafe { self.slot(net) }.load(Ordering::Acquire);
        if cur.is_null() {
            return Ok(None);
        }
        // SAFETY: the slot holds a strong count (type invariant) that only
        // the namespace's exit takes back, which cannot run now (see above).
        Ok(Some(unsafe { ArcBorrow::from_raw(cur) }.into()))
    }

    /// # Safety
    ///
    /// Called by the namespace core with the registration in place and a
    /// valid namespace that is exiting (or the registration being removed).
    unsafe extern "C" fn exit_cb(net: *mut bindings::net) {
        let this = T::pernet();
        // SAFETY: see the function's safety section.
        let slot = unsafe { this.slot(net) };
        let cur = slot.swap(ptr::null_mut(), Ordering::AcqRel);
        if !cur.is_null() {
            // SAFETY: the slot held this strong count (type invariant).
            let state = unsafe { Arc::from_raw(cur) };
            state.exit();
        }
    }
}

/// The registration of [`Pernet<T>`] (`register_pernet_subsys`); dropping it
/// exits every namespace's state and unregisters.
///
/// # Invariants
///
/// `ops` is registered from construction until drop, and pinned.
#[pin_data(PinnedDrop)]
pub struct PernetRegistration<T: PernetState> {
    #[pin]
    ops: Opaque<bindings::pernet_operations>,
    _t: PhantomData<T>,
}

// SAFETY: the operations are only touched by (un)registration, which the
// namespace core serialises.
unsafe impl<T: PernetState> Send for PernetRegistration<T> {}
// SAFETY: `&PernetRegistration` exposes nothing.
unsafe impl<T: PernetState> Sync for PernetRegistration<T> {}

impl<T: PernetState> PernetRegistration<T> {
    /// Registers `T`'s per-namespace state.
    pub fn register() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            ops <- Opaque::try_ffi_init(move |slot: *mut bindings::pernet_operations| {
                let this = T::pernet();
                let mut ops: bindings::pernet_operations = pin_init::zeroed();
                ops.exit = Some(Pernet::<T>::exit_cb);
                ops.id = this.id.as_ptr();
                ops.size = core::mem::size_of::<AtomicPtr<T>>();
                // SAFETY: `slot` is valid and pinned; it is unregistered in
                // `drop` before its memory goes away. `id` is a `'static`
                // integer the core writes once, during the call.
                // INVARIANT: registered on success.
                kernel::error::to_result(unsafe {
                    slot.write(ops);
                    bindings::register_pernet_subsys(slot)
                })?;
                this.registered.store(true, Ordering::Release);
                Ok::<(), Error>(())
            }),
            _t: PhantomData,
        })
    }
}

#[pinned_drop]
impl<T: PernetState> PinnedDrop for PernetRegistration<T> {
    fn drop(self: Pin<&mut Self>) {
        T::pernet().registered.store(false, Ordering::Release);
        // Wait for `get_or_create` calls that saw it set (read sections).
        kernel::sync::rcu::synchronize_rcu();
        // SAFETY: registered since construction (type invariant); this calls
        // the exit of every namespace's state.
        unsafe { bindings::unregister_pernet_subsys(self.ops.get()) };
    }
}
