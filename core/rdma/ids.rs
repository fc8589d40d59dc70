// SPDX-License-Identifier: GPL-2.0

//! Ids handed to user space, shared by every open file of a character
//! device, as the C `rdma_ucm`'s `ctx_table`: an allocating xarray of
//! `Arc<T>` that gives the lowest free 32-bit id, under the xarray's plain
//! spinlock (process context only).
//!
//! As in the C module an object is added in two steps: [`IdTable::reserve`]
//! takes an id (its slot holds the xarray's zero entry, which lookups do not
//! find) while the object is set up, [`IdReservation::publish`] makes it
//! visible. [`IdTable::get`] returns a counted reference, taken under the
//! lock, so a lookup racing with [`IdTable::remove`] either finds the
//! object alive or does not find it.
//!
//! The table lives in a `static` [`ModuleIds`], allocated by the module's
//! `init` ([`ModuleIds::alloc`]) and freed at its exit, when no file is open
//! and so every id is gone. Everything here is generic, so only a module
//! that uses a table links the glue it calls.

use super::{
    bindings,
    module_slot::{
        ModuleSlot,
        SlotContent,
        SlotOwner, //
    },
};
use core::marker::PhantomData;
use kernel::{
    prelude::*,
    sync::Arc,
    types::{
        ForeignOwnable,
        Opaque, //
    },
};

/// A table of ids of objects `T`.
///
/// # Invariants
///
/// `xa` is an initialised allocating xarray, used in process context only;
/// its present entries are `Arc<T>` made foreign, its reserved slots hold
/// the zero entry (which loads as NULL).
#[pin_data(PinnedDrop)]
pub struct IdTable<T: Send + Sync + 'static> {
    #[pin]
    xa: Opaque<bindings::xarray>,
    _t: PhantomData<Arc<T>>,
}

// SAFETY: the xarray is internally locked; its entries are `Arc<T>` with
// `T: Send + Sync`.
unsafe impl<T: Send + Sync + 'static> Send for IdTable<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync + 'static> Sync for IdTable<T> {}

impl<T: Send + Sync + 'static> IdTable<T> {
    /// An empty table.
    pub fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `slot` is valid and pinned for the table's life.
            // INVARIANT: initialised as an allocating xarray.
            xa <- Opaque::ffi_init(|slot| unsafe {
                bindings::xa_init_flags(slot, bindings::XA_FLAGS_ALLOC)
            }),
            _t: PhantomData,
        })
    }

    /// Takes the lowest free id for an object being set up. `ENOMEM`, or
    /// `EBUSY` when every 32-bit id is taken (`xa_alloc()`'s errors).
    pub fn reserve(&self) -> Result<IdReservation<'_, T>> {
        let mut id = 0u32;
        // SAFETY: the xarray is initialised (type invariant); a NULL entry
        // reserves the slot.
        let ret = unsafe { bindings::rrxe_ids_reserve(self.xa.get(), &mut id) };
        if ret < 0 {
            return Err(Error::from_errno(ret));
        }
        Ok(IdReservation { table: self, id })
    }

    /// The object with id `id`, if one is published.
    pub fn get(&self, id: u32) -> Option<Arc<T>> {
        let xa = self.xa.get();
        // SAFETY: the xarray is initialised; unlocked below.
        unsafe { bindings::xa_lock(xa) };
        // SAFETY: a valid xarray; the lock keeps the entry in it.
        let ptr = unsafe { bindings::xa_load(xa, id as usize) };
        let obj = (!ptr.is_null()).then(|| {
            // SAFETY: a present entry is an `Arc<T>` made foreign (type
            // invariant), kept alive by the table while the lock is held.
            let borrowed = unsafe { <Arc<T> as ForeignOwnable>::borrow(ptr) };
            Arc::from(borrowed)
        });
        // SAFETY: the lock taken above.
        unsafe { bindings::xa_unlock(xa) };
        obj
    }

    /// Removes the object with id `id` and returns the table's reference
    /// to it; lookups no longer find it and the id is free again.
    pub fn remove(&self, id: u32) -> Option<Arc<T>> {
        // SAFETY: the xarray is initialised. A reserved slot is left alone
        // (`IdReservation` frees it): only a present entry is erased.
        let ptr = unsafe { bindings::rrxe_ids_take(self.xa.get(), id as usize) };
        // SAFETY: a present entry is an `Arc<T>` made foreign (type
        // invariant); taking it out gave its ownership back to us.
        (!ptr.is_null()).then(|| unsafe { <Arc<T> as ForeignOwnable>::from_foreign(ptr) })
    }
}

#[pinned_drop]
impl<T: Send + Sync + 'static> PinnedDrop for IdTable<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: an initialised xarray of `Arc<T>` made foreign (type
        // invariant), of which we are the only user now.
        unsafe { destroy_arc_xarray::<T>(self.xa.get()) };
    }
}

/// Drops the `Arc<T>` of every present entry of `xa` and frees its nodes
/// (`xa_destroy()`): the end of an xarray of objects ([`IdTable`], and the
/// device's [`Pool`](super::pool::Pool)s).
///
/// # Safety
///
/// `xa` is an initialised xarray whose present entries are `Arc<T>` made
/// foreign, with no other user now or later (until it is initialised
/// again).
pub(crate) unsafe fn destroy_arc_xarray<T: Send + Sync + 'static>(xa: *mut bindings::xarray) {
    let mut index: usize = 0;
    loop {
        // SAFETY: `xa` is initialised (the caller's contract).
        let ptr = unsafe { bindings::xa_find(xa, &mut index, usize::MAX, bindings::XA_PRESENT) };
        if ptr.is_null() {
            break;
        }
        // SAFETY: a present entry is an `Arc<T>` made foreign, which no one
        // else will use (the caller's contract); `xa_destroy()` below
        // forgets it.
        drop(unsafe { <Arc<T> as ForeignOwnable>::from_foreign(ptr) });
        match index.checked_add(1) {
            Some(next) => index = next,
            None => break,
        }
    }
    // SAFETY: as above; frees the xarray's nodes, leaving it empty.
    unsafe { bindings::xa_destroy(xa) };
}

/// An id reserved for an object being set up. Dropping it without
/// [`IdReservation::publish`] frees the id.
pub struct IdReservation<'a, T: Send + Sync + 'static> {
    table: &'a IdTable<T>,
    id: u32,
}

impl<T: Send + Sync + 'static> IdReservation<'_, T> {
    /// The reserved id.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Stores the complete object under the reserved id, where lookups
    /// find it.
    pub fn publish(self, obj: Arc<T>) {
        let (xa, id) = (self.table.xa.get(), self.id);
        core::mem::forget(self);
        // SAFETY: the id is reserved, so the xarray has its slot and the
        // store allocates nothing (it cannot fail).
        // INVARIANT: the entry is an `Arc<T>` made foreign.
        unsafe { bindings::xa_store(xa, id as usize, obj.into_foreign(), bindings::GFP_KERNEL) };
    }
}

impl<T: Send + Sync + 'static> Drop for IdReservation<'_, T> {
    fn drop(&mut self) {
        // SAFETY: the xarray is initialised; the slot holds the zero entry
        // of this reservation, which erasing frees.
        unsafe { bindings::xa_erase(self.table.xa.get(), self.id as usize) };
    }
}

/// The content of a [`ModuleIds`]: a pinned, boxed table.
pub struct Ids<T>(PhantomData<T>);

impl<T: Send + Sync + 'static> SlotContent for Ids<T> {
    type Target = IdTable<T>;

    unsafe fn free(p: *mut IdTable<T>) {
        // SAFETY: `p` came from `KBox::into_raw` of a pinned box in
        // `ModuleIds::alloc` and is freed once (the slot's contract).
        drop(unsafe { Pin::new_unchecked(KBox::from_raw(p)) });
    }
}

/// A module's table of ids, reached through a `static`: the files that
/// look ids up have no other way to it.
pub struct ModuleIds<T: Send + Sync + 'static>(ModuleSlot<Ids<T>>);

/// Frees its [`ModuleIds`]'s table when dropped (at the module's exit).
pub type IdsOwner<T> = SlotOwner<Ids<T>>;

impl<T: Send + Sync + 'static> ModuleIds<T> {
    /// No table yet.
    pub const fn new() -> Self {
        Self(ModuleSlot::new())
    }

    /// Allocates the table; the module's `init` keeps the owner.
    pub fn alloc(&'static self) -> Result<IdsOwner<T>> {
        let table = KBox::pin_init(IdTable::new(), GFP_KERNEL)?;
        // SAFETY: the table stays pinned: it is only reached by reference
        // until `Ids::free` rebuilds the pinned box.
        let raw = KBox::into_raw(unsafe { Pin::into_inner_unchecked(table) });
        // SAFETY: a new table, ours, freed by `Ids::free`.
        unsafe { self.0.publish(raw) }
    }

    /// The table, while the module is loaded.
    pub fn get(&self) -> Option<&IdTable<T>> {
        let p = self.0.get()?;
        // SAFETY: the slot's content is the live table while it is there
        // and the caller runs (`ModuleSlot::get`).
        Some(unsafe { p.as_ref() })
    }

    /// Frees id `id` ([`IdTable::remove`]) and drops the table's
    /// reference to its object; nothing if there is no table (the module
    /// is going away, taking every id with it).
    pub fn free(&self, id: u32) {
        if let Some(ids) = self.get() {
            drop(ids.remove(id));
        }
    }
}

impl<T: Send + Sync + 'static> Default for ModuleIds<T> {
    fn default() -> Self {
        Self::new()
    }
}
