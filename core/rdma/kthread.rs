// SPDX-License-Identifier: GPL-2.0

//! Kernel threads of a module's own that run its work items
//! (`kthread_worker`), for work that wants threads whose scheduling
//! attributes the module sets, as SPI controllers, mt76 or erofs have.
//!
//! A [`ModuleThreads`] is a `static` slot (core/rdma/module_slot.rs)
//! holding one worker thread per CPU online when the module started them
//! ([`ModuleThreads::start`]), stopped when the returned [`ThreadsOwner`]
//! (a field of the module) is dropped, after the work queued on them has
//! run. A work item ([`KthreadWork`], embedded in an `Arc`'d object) runs
//! on the thread its object's address hashes to, always the same one: the
//! kernel does not let a `kthread_work` move between workers. The hash,
//! not a thread number kept in the item, so that the item is just the
//! kernel's `kthread_work` (objects made by the thousand, as QPs' tasks,
//! stay in a smaller slab). A thread takes one item at a time
//! ([`KthreadWork::queue_if_idle`]); the caller sends what a busy thread
//! refuses elsewhere (a workqueue).
//!
//! Unlike a workqueue's workers, shared with the rest of the kernel, these
//! threads run nothing but the module's work, so their attributes are the
//! module's to choose.

use super::{
    bindings,
    module_slot::{
        ModuleSlot,
        SlotContent,
        SlotOwner, //
    },
};
use core::{
    marker::PhantomData,
    sync::atomic::{
        AtomicBool,
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
    /// The threads it runs on.
    fn threads() -> &'static ModuleThreads;

    /// Runs the item on its thread, with the reference
    /// [`KthreadWork::queue_if_idle`] took.
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

    /// Queues `item`'s work on its thread of [`KthreadWorkItem::threads`]
    /// if nothing is queued or running there; else, or if there are no
    /// threads (the module is going away), gives the item back. Any
    /// context.
    pub fn queue_if_idle(item: Arc<T>) -> Result<(), Arc<T>> {
        let raw = Arc::into_raw(item);
        // SAFETY: `T::OFFSET` is where the item's `KthreadWork` is; the
        // item is alive (`raw` holds a reference).
        let kw = unsafe { &*raw.cast::<u8>().add(T::OFFSET).cast::<Self>() };
        let thread = T::threads().thread_of(raw.cast());
        let queued = thread.is_some_and(|t| {
            t.busy
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
                && {
                    // SAFETY: `t.worker` is a live worker (as in `get`) and
                    // the work an initialised item's, only ever queued on
                    // this worker (its address hashes to it each time);
                    // the reference `raw` holds goes with it to
                    // `KthreadWork::run`.
                    let ok = unsafe { bindings::kthread_queue_work(t.worker, kw.work.get()) };
                    if !ok {
                        t.busy.store(false, Ordering::Release);
                    }
                    ok
                }
        });
        if queued {
            Ok(())
        } else {
            // SAFETY: not queued: the reference is the caller's again.
            Err(unsafe { Arc::from_raw(raw) })
        }
    }

    /// The kernel's call of a queued work item.
    ///
    /// # Safety
    ///
    /// `work` is the `KthreadWork<T>` of a `T` in an `Arc` one reference of
    /// which [`KthreadWork::queue_if_idle`] gave to the kernel.
    unsafe extern "C" fn run(work: *mut bindings::kthread_work) {
        // SAFETY: the `kthread_work` is its `KthreadWork<T>`
        // (`repr(transparent)`), which is at `T::OFFSET` in its `T`
        // (`HasKthreadWork`).
        let item = unsafe { work.cast::<u8>().sub(T::OFFSET).cast::<T>() };
        // Found before the item, which may go with its last reference.
        let thread = T::threads().thread_of(item.cast());
        // SAFETY: the reference `queue_if_idle` leaked for this run is
        // taken back.
        T::run(unsafe { Arc::from_raw(item) });
        if let Some(t) = thread {
            t.busy.store(false, Ordering::Release);
        }
    }
}

/// One worker thread.
struct Thread {
    worker: *mut bindings::kthread_worker,
    /// Whether an item is queued on it or running.
    busy: AtomicBool,
}

/// The worker threads.
pub struct Threads {
    threads: KVec<Thread>,
}

impl Drop for Threads {
    /// Stops the threads, each after running the work queued on it.
    fn drop(&mut self) {
        destroy(&self.threads);
    }
}

/// The content of a [`ModuleThreads`]: a boxed [`Threads`].
pub struct ThreadSet;

impl SlotContent for ThreadSet {
    type Target = Threads;

    unsafe fn free(set: *mut Threads) {
        // SAFETY: `set` came from `KBox::into_raw` in `start` and no new
        // reference to it can be taken (the caller's promise).
        drop(unsafe { KBox::from_raw(set) });
    }
}

/// A module's own worker threads, none until started.
pub struct ModuleThreads(ModuleSlot<ThreadSet>);

/// Stops its [`ModuleThreads`]' threads when dropped, after the work queued
/// on them has run.
pub type ThreadsOwner = SlotOwner<ThreadSet>;

impl ModuleThreads {
    /// An empty slot.
    pub const fn new() -> Self {
        Self(ModuleSlot::new())
    }

    /// Starts one thread per CPU online now, named `name/<n>`, each of
    /// normal policy at nice 0 asking for a scheduler slice of `slice_ns`
    /// (`sched_attr.sched_runtime`, 0 for the default); they run until the
    /// returned owner is dropped.
    pub fn start(&'static self, name: &'static CStr, slice_ns: u64) -> Result<ThreadsOwner> {
        // SAFETY: reads the count of online CPUs.
        let n = unsafe { bindings::rrxe_num_online_cpus() }.max(1);
        let mut set = KBox::new(
            Threads {
                threads: KVec::with_capacity(n as usize, GFP_KERNEL)?,
            },
            GFP_KERNEL,
        )?;
        for id in 0..n {
            // SAFETY: `name` is NUL-terminated; the call copies it.
            let w =
                unsafe { bindings::rrxe_kthread_worker_create(name.as_char_ptr(), id, slice_ns) };
            // On an error `set` goes, stopping the threads made so far.
            let worker = kernel::error::from_err_ptr(w)?;
            let thread = Thread {
                worker,
                busy: AtomicBool::new(false),
            };
            // Room for `n` was reserved: the push does not fail.
            set.threads.push_within_capacity(thread).map_err(|e| {
                destroy(core::slice::from_ref(&e.0));
                ENOMEM
            })?;
        }
        // SAFETY: a new set, ours, freed by `ThreadSet::free`.
        unsafe { self.0.publish(KBox::into_raw(set)) }
    }

    fn get(&self) -> Option<&Threads> {
        let set = self.0.get()?;
        // SAFETY: the slot's content is the live set while it is there and
        // the caller runs (`ModuleSlot::get`): every object whose work is
        // queued here is gone before the module's exit frees it.
        Some(unsafe { set.as_ref() })
    }

    /// The thread of the item at `item`: its address hashed (`hash_64()`'s
    /// multiplier), the same for the item's life; none if there are no
    /// threads.
    fn thread_of(&self, item: *const u8) -> Option<&Thread> {
        const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;
        let s = self.get()?;
        // Objects are at least 8-byte aligned: the low bits say nothing.
        let h = ((item as usize as u64) >> 3).wrapping_mul(GOLDEN_RATIO_64) >> 32;
        // The 32-bit hash scaled to the thread count (`reciprocal_scale()`):
        // a multiplication where `h % n` would divide, on every queueing
        // and every run. `h < 2^32` and `n < 2^32`: no overflow.
        let n = s.threads.len() as u64;
        s.threads.get(usize::try_from((h * n) >> 32).ok()?)
    }
}

impl Default for ModuleThreads {
    fn default() -> Self {
        Self::new()
    }
}

/// Stops the threads, each after running the work queued on it.
fn destroy(threads: &[Thread]) {
    for t in threads {
        // SAFETY: `t.worker` is a live worker no one queues on any more;
        // `kthread_destroy_worker` flushes it, then stops its thread.
        unsafe { bindings::kthread_destroy_worker(t.worker) };
    }
}
