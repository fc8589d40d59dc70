// SPDX-License-Identifier: GPL-2.0

//! Object pools: the objects of one kind of a device, indexed by the number
//! the wire and user space know them by (QPN, key index, AH number, SRQ
//! number), as the C driver's `rxe_pool`.
//!
//! A pool is an allocating xarray of `Arc<D>` plus a bound on the number of
//! objects. Creating an object is two steps, as in the C driver: [`Pool::reserve`]
//! takes an index (cyclically within the kind's range, so a number is not
//! reused at once) while the object is being set up, and
//! [`Reservation::publish`] makes it visible to lookups once it is complete.
//! A lookup ([`Pool::get`]) returns a counted reference, so an object found
//! by the receive path stays valid however its destroy races with it; the
//! driver's destroy removes the object ([`Pool::remove`]) first, so no new
//! reference is handed out.
//!
//! The xarray's lock is taken with interrupts disabled: the receive path
//! looks objects up from softirq context. Everything here is generic, so
//! only a module that uses a pool links the glue it calls.

use super::{
    bindings,
    ids::destroy_arc_xarray, //
};
use core::{
    marker::PhantomData,
    sync::atomic::{
        AtomicU32,
        Ordering, //
    },
};
use kernel::{
    prelude::*,
    sync::Arc,
    types::{
        ForeignOwnable,
        Opaque, //
    },
};

/// The index range and size bound of a kind of object.
#[derive(Clone, Copy, Debug)]
pub struct PoolLimits {
    /// Lowest index handed out.
    pub min_index: u32,
    /// Highest index handed out.
    pub max_index: u32,
    /// Most objects at once; one more is refused with `EINVAL` (the C
    /// driver's errno).
    pub max_elem: u32,
}

/// A pool of objects `D`.
///
/// # Invariants
///
/// `xa` is an initialised allocating xarray whose present entries are
/// `Arc<D>` made foreign (reserved indices hold the xarray's zero entry,
/// which loads as NULL). `next` is only used under the xarray's lock.
#[pin_data(PinnedDrop)]
pub struct Pool<D: Send + Sync + 'static> {
    #[pin]
    xa: Opaque<bindings::xarray>,
    next: Opaque<u32>,
    count: AtomicU32,
    limits: PoolLimits,
    _d: PhantomData<Arc<D>>,
}

// SAFETY: the xarray is internally locked; entries are `Arc<D>` with `D:
// Send + Sync`.
unsafe impl<D: Send + Sync + 'static> Send for Pool<D> {}
// SAFETY: as above; `next` is only touched under the xarray's lock.
unsafe impl<D: Send + Sync + 'static> Sync for Pool<D> {}

impl<D: Send + Sync + 'static> Pool<D> {
    /// An empty pool.
    pub fn new(limits: PoolLimits) -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `slot` is valid and pinned for the pool's life.
            // INVARIANT: initialised as an allocating xarray.
            xa <- Opaque::ffi_init(|slot| unsafe { bindings::rrxe_xa_init_alloc(slot) }),
            next: Opaque::new(limits.min_index),
            count: AtomicU32::new(0),
            limits,
            _d: PhantomData,
        })
    }

    /// Objects in the pool (reserved or published).
    pub fn count(&self) -> u32 {
        self.count.load(Ordering::Relaxed)
    }

    /// Reserves an index for a new object, in process context. `EINVAL` if
    /// the pool is full (as the C driver), or the xarray's error.
    pub fn reserve(&self) -> Result<Reservation<'_, D>> {
        self.reserve_gfp(bindings::GFP_KERNEL)
    }

    /// As [`Pool::reserve`], from atomic context (the core may create an
    /// address handle with a spinlock held).
    pub fn reserve_atomic(&self) -> Result<Reservation<'_, D>> {
        self.reserve_gfp(bindings::GFP_ATOMIC)
    }

    fn reserve_gfp(&self, gfp: bindings::gfp_t) -> Result<Reservation<'_, D>> {
        let max = self.limits.max_elem;
        self.count
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < max).then_some(n + 1)
            })
            .map_err(|_| EINVAL)?;
        let mut id = 0u32;
        // SAFETY: the xarray is initialised (type invariant); `next` is
        // used under its lock by the callee.
        let ret = unsafe {
            bindings::rrxe_xa_alloc_cyclic(
                self.xa.get(),
                &mut id,
                self.limits.min_index,
                self.limits.max_index,
                self.next.get(),
                gfp,
            )
        };
        if ret < 0 {
            self.count.fetch_sub(1, Ordering::Relaxed);
            return Err(Error::from_errno(ret));
        }
        Ok(Reservation {
            pool: self,
            index: id,
        })
    }

    /// The object at `index`, if one is published there.
    pub fn get(&self, index: u32) -> Option<Arc<D>> {
        // SAFETY: the xarray is initialised; the lock is released below.
        let flags = unsafe { bindings::rrxe_xa_lock(self.xa.get()) };
        // SAFETY: the lock is held, as `xa_load` under the lock requires
        // nothing more than a valid xarray.
        let ptr = unsafe { bindings::xa_load(self.xa.get(), index as usize) };
        let obj = (!ptr.is_null()).then(|| {
            // SAFETY: a present entry is an `Arc<D>` made foreign (type
            // invariant), kept alive by the pool while the lock is held.
            let borrowed = unsafe { <Arc<D> as ForeignOwnable>::borrow(ptr) };
            Arc::from(borrowed)
        });
        // SAFETY: `flags` are those of the lock taken above.
        unsafe { bindings::rrxe_xa_unlock(self.xa.get(), flags) };
        obj
    }

    /// Removes the object at `index` and returns the pool's reference to
    /// it; lookups no longer find it.
    pub fn remove(&self, index: u32) -> Option<Arc<D>> {
        // SAFETY: the xarray is initialised.
        let ptr = unsafe { bindings::rrxe_xa_erase(self.xa.get(), index as usize) };
        if ptr.is_null() {
            return None;
        }
        self.count.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: a present entry is an `Arc<D>` made foreign (type
        // invariant); erasing it gave its ownership back to us.
        Some(unsafe { <Arc<D> as ForeignOwnable>::from_foreign(ptr) })
    }
}

#[pinned_drop]
impl<D: Send + Sync + 'static> PinnedDrop for Pool<D> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: an initialised xarray of `Arc<D>` made foreign (reserved
        // slots hold the zero entry, which is not present), of which we are
        // the only user now.
        unsafe { destroy_arc_xarray::<D>(self.xa.get()) };
    }
}

/// An index reserved in a pool for an object being created. Dropping it
/// without [`Reservation::publish`] gives the index back.
pub struct Reservation<'a, D: Send + Sync + 'static> {
    pool: &'a Pool<D>,
    index: u32,
}

impl<D: Send + Sync + 'static> Reservation<'_, D> {
    /// The reserved index.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// Stores the complete object at the reserved index, where lookups find
    /// it.
    pub fn publish(self, obj: Arc<D>) {
        let index = self.index;
        let xa = self.pool.xa.get();
        core::mem::forget(self);
        // SAFETY: the index is reserved, so the xarray has its slot and the
        // store allocates nothing (hence GFP_ATOMIC is enough, from any
        // context).
        // INVARIANT: the entry is an `Arc<D>` made foreign.
        unsafe {
            bindings::rrxe_xa_store(xa, index as usize, obj.into_foreign(), bindings::GFP_ATOMIC)
        };
    }
}

impl<D: Send + Sync + 'static> Drop for Reservation<'_, D> {
    fn drop(&mut self) {
        // SAFETY: the xarray is initialised; the slot holds the zero entry.
        unsafe { bindings::rrxe_xa_erase(self.pool.xa.get(), self.index as usize) };
        self.pool.count.fetch_sub(1, Ordering::Relaxed);
    }
}
