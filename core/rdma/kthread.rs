// SPDX-License-Identifier: GPL-2.0

//! Kernel threads of a module's own that run its work items
//! (`kthread_worker`), for work that wants threads whose scheduling
//! attributes the module sets, as SPI controllers, mt76 or erofs have.
//!
//! A [`ModuleWorkers`] is a `static` slot holding one worker thread per
//! CPU online when the module started them ([`ModuleWorkers::start`]),
//! stopped when the returned [`WorkersOwner`] (a field of the module) is
//! dropped, after the work queued on them has run. A work item
//! ([`KthreadWork`], embedded in an `Arc`'d object) is tied to one of the
//! threads for its life ([`ModuleWorkers::pick`]): the kernel does not let
//! a `kthread_work` move between workers.
//!
//! Unlike a workqueue's workers, shared with the rest of the kernel, these
//! threads run nothing but the module's work, so their attributes are the
//! module's to choose.

use super::bindings;
use core::{
    marker::PhantomData,
    ptr,
    sync::atomic::{
        AtomicPtr,
        AtomicU32,
        Ordering, //
    },
};
use kernel::{
    prelude::*,
    sync::Arc,
    types::Opaque, //
};

/// An object with a [`KthreadWork`] in it.
///
/// # Safety
///
/// `OFFSET` is the byte offset of a field of type `KthreadWork<Self>` in
/// `Self`. Implement it with [`impl_has_kthread_work!`], which checks that.
pub unsafe trait HasKthreadWork: Sized {
    /// Where the `KthreadWork<Self>` is.
    const OFFSET: usize;
}

/// Says which field of a type is its [`KthreadWork`]:
/// `impl_has_kthread_work! { impl{T: Bound} for Type<T> { self.field } }`.
#[macro_export]
macro_rules! impl_has_kthread_work {
    (impl{$($generics:tt)*} for $ty:ty { self.$field:ident }) => {
        // SAFETY: `OFFSET` is the offset of `$field`, which the function
        // below checks is a `KthreadWork<Self>`.
        unsafe impl<$($generics)*> $crate::rdma::kthread::HasKthreadWork for $ty {
            const OFFSET: usize = {
                #[allow(dead_code)]
                fn check<$($generics)*>(this: &$ty) -> &$crate::rdma::kthread::KthreadWork<$ty> {
                    &this.$field
                }
                ::core::mem::offset_of!(Self, $field)
            };
        }
    };
}

/// What a [`KthreadWork`] runs.
pub trait KthreadWorkItem: HasKthreadWork + Send + Sync + 'static {
    /// Runs the item on its worker thread, with the reference
    /// [`ModuleWorkers::queue`] took.
    fn run(this: Arc<Self>);
}

/// A `struct kthread_work` in an object `T`.
#[repr(transparent)]
#[pin_data]
pub struct KthreadWork<T> {
    #[pin]
    work: Opaque<bindings::kthread_work>,
    _item: PhantomData<T>,
}

// SAFETY: the work is handed between threads by the kernel under the
// worker's lock; `T` itself is `Send + Sync` where it is queued.
unsafe impl<T> Send for KthreadWork<T> {}
// SAFETY: as above: nothing in it is reached without the worker's lock.
unsafe impl<T> Sync for KthreadWork<T> {}

impl<T: KthreadWorkItem> KthreadWork<T> {
    /// A work item that runs [`KthreadWorkItem::run`] on its `T`.
    pub fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            work <- Opaque::ffi_init(|slot| {
                // SAFETY: `slot` is the work's memory, valid for writes;
                // `run` is a function of the type the kernel calls.
                unsafe { bindings::rrxe_kthread_init_work(slot, Some(Self::run)) }
            }),
            _item: PhantomData,
        })
    }

    /// The kernel's call of a queued work item.
    ///
    /// # Safety
    ///
    /// `work` is the `KthreadWork<T>` of a `T` in an `Arc` one reference of
    /// which [`ModuleWorkers::queue`] gave to the kernel.
    unsafe extern "C" fn run(work: *mut bindings::kthread_work) {
        // SAFETY: `KthreadWork` is transparent over the `kthread_work`,
        // which is at `T::OFFSET` in its `T` (`HasKthreadWork`).
        let item = unsafe { work.cast::<u8>().sub(T::OFFSET).cast::<T>() };
        // SAFETY: the reference `queue` leaked for this run is taken back.
        T::run(unsafe { Arc::from_raw(item) });
    }
}

/// The worker threads.
struct Workers {
    threads: KVec<*mut bindings::kthread_worker>,
    /// Which thread [`ModuleWorkers::pick`] gives next.
    next: AtomicU32,
}

/// A module's own worker threads, none until started.
pub struct ModuleWorkers(AtomicPtr<Workers>);

impl ModuleWorkers {
    /// An empty slot.
    pub const fn new() -> Self {
        Self(AtomicPtr::new(ptr::null_mut()))
    }

    /// Starts one thread per CPU online now, named `name/<n>`, each of
    /// normal policy at nice 0 asking for a scheduler slice of `slice_ns`
    /// (`sched_attr.sched_runtime`, 0 for the default); they run until the
    /// returned owner is dropped.
    pub fn start(&'static self, name: &'static CStr, slice_ns: u64) -> Result<WorkersOwner> {
        // SAFETY: reads the count of online CPUs.
        let n = unsafe { bindings::rrxe_num_online_cpus() }.max(1);
        let mut set = KBox::new(
            Workers {
                threads: KVec::with_capacity(n as usize, GFP_KERNEL)?,
                next: AtomicU32::new(0),
            },
            GFP_KERNEL,
        )?;
        for id in 0..n {
            // SAFETY: `name` is NUL-terminated; the call copies it.
            let w =
                unsafe { bindings::rrxe_kthread_worker_create(name.as_char_ptr(), id, slice_ns) };
            // Room for `n` was reserved: the push does not fail.
            if let Err(e) = kernel::error::from_err_ptr(w).and_then(|w| {
                set.threads.push_within_capacity(w).map_err(|e| {
                    destroy(&[e.0]);
                    ENOMEM
                })
            }) {
                destroy(&set.threads);
                return Err(e);
            }
        }
        let set = KBox::into_raw(set);
        if self
            .0
            .compare_exchange(ptr::null_mut(), set, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            // SAFETY: `set` was never published; it is ours to free.
            let set = unsafe { KBox::from_raw(set) };
            destroy(&set.threads);
            return Err(EBUSY);
        }
        Ok(WorkersOwner(self))
    }

    fn get(&self) -> Option<&Workers> {
        let set = self.0.load(Ordering::Acquire);
        // SAFETY: a non-null pointer is the live set: it is cleared before
        // being freed in `WorkersOwner::drop`, at module exit, after every
        // object whose work is queued here is gone.
        unsafe { set.as_ref() }
    }

    /// The thread a new work item is to run on: the threads in turn.
    pub fn pick(&self) -> u32 {
        self.get().map_or(0, |s| {
            let n = u32::try_from(s.threads.len()).unwrap_or(u32::MAX);
            s.next
                .fetch_add(1, Ordering::Relaxed)
                .checked_rem(n)
                .unwrap_or(0)
        })
    }

    /// Queues `item`'s work on thread `thread` (from [`ModuleWorkers::pick`],
    /// the same for the item's whole life); `false` if it is queued already
    /// or there are no threads (the module is going away). Any context.
    pub fn queue<T: KthreadWorkItem>(&self, thread: u32, item: Arc<T>) -> bool {
        let Some(w) = self
            .get()
            .and_then(|s| s.threads.get(thread as usize).copied())
        else {
            return false;
        };
        let raw = Arc::into_raw(item);
        // SAFETY: `T::OFFSET` is where the item's `KthreadWork` is.
        let work = unsafe { raw.cast::<u8>().add(T::OFFSET).cast_mut() }.cast();
        // SAFETY: `w` is a live worker (as in `get`) and `work` an
        // initialised work item that is only ever queued on it; the
        // reference `raw` holds goes with it to `KthreadWork::run`.
        if unsafe { bindings::kthread_queue_work(w, work) } {
            true
        } else {
            // SAFETY: not queued: the reference is ours again.
            drop(unsafe { Arc::from_raw(raw) });
            false
        }
    }
}

impl Default for ModuleWorkers {
    fn default() -> Self {
        Self::new()
    }
}

/// Stops the threads, each after running the work queued on it.
fn destroy(threads: &[*mut bindings::kthread_worker]) {
    for &w in threads {
        // SAFETY: `w` is a live worker no one queues on any more;
        // `kthread_destroy_worker` flushes it, then stops its thread.
        unsafe { bindings::kthread_destroy_worker(w) };
    }
}

/// Stops its [`ModuleWorkers`]' threads when dropped, after the work queued
/// on them has run.
pub struct WorkersOwner(&'static ModuleWorkers);

impl Drop for WorkersOwner {
    fn drop(&mut self) {
        let set = self.0 .0.swap(ptr::null_mut(), Ordering::AcqRel);
        if !set.is_null() {
            // SAFETY: `set` came from `KBox::into_raw` in `start` and can no
            // longer be reached through the slot.
            let set = unsafe { KBox::from_raw(set) };
            destroy(&set.threads);
        }
    }
}
