// SPDX-License-Identifier: GPL-2.0

//! Kernel threads of a module's own that run its work items
//! (`kthread_worker`), for work that wants threads whose scheduling
//! attributes the module sets, as SPI controllers, mt76 or erofs have.
//!
//! A [`ModuleThreads`] is a `static` slot holding one worker thread per
//! CPU online when the module started them ([`ModuleThreads::start`]),
//! stopped when the returned [`ThreadsOwner`] (a field of the module) is
//! dropped, after the work queued on them has run. A work item
//! ([`KthreadWork`], embedded in an `Arc`'d object) is given one of the
//! threads, in turn, when it is made, and keeps it: the kernel does not
//! let a `kthread_work` move between workers. A thread takes one item at
//! a time ([`ModuleThreads::queue_if_idle`]); the caller sends what a busy
//! thread refuses elsewhere (a workqueue).
//!
//! Unlike a workqueue's workers, shared with the rest of the kernel, these
//! threads run nothing but the module's work, so their attributes are the
//! module's to choose.

use super::bindings;
use core::{
    marker::PhantomData,
    ptr,
    sync::atomic::{
        AtomicBool,
        AtomicPtr,
        AtomicUsize,
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
    /// Runs the item on its thread, with the reference
    /// [`ModuleThreads::queue_if_idle`] took.
    fn run(this: Arc<Self>);
}

/// A `struct kthread_work` in an object `T`, and the thread it runs on.
#[repr(C)]
#[pin_data]
pub struct KthreadWork<T> {
    /// First: the kernel's pointer to it is one to the whole.
    #[pin]
    work: Opaque<bindings::kthread_work>,
    threads: &'static ModuleThreads,
    thread: usize,
    _item: PhantomData<T>,
}

// SAFETY: the work is handed between threads by the kernel under the
// worker's lock; `T` itself is `Send + Sync` where it is queued.
unsafe impl<T> Send for KthreadWork<T> {}
// SAFETY: as above: nothing in it is reached without the worker's lock.
unsafe impl<T> Sync for KthreadWork<T> {}

impl<T: KthreadWorkItem> KthreadWork<T> {
    /// A work item that runs [`KthreadWorkItem::run`] on its `T`, on the
    /// next of `threads` in turn.
    pub fn new(threads: &'static ModuleThreads) -> impl PinInit<Self> {
        pin_init!(Self {
            work <- Opaque::ffi_init(|slot| {
                // SAFETY: `slot` is the work's memory, valid for writes;
                // `run` is a function of the type the kernel calls.
                unsafe { bindings::rrxe_kthread_init_work(slot, Some(Self::run)) }
            }),
            threads,
            thread: threads.pick(),
            _item: PhantomData,
        })
    }

    /// The kernel's call of a queued work item.
    ///
    /// # Safety
    ///
    /// `work` is the `KthreadWork<T>` of a `T` in an `Arc` one reference of
    /// which [`ModuleThreads::queue_if_idle`] gave to the kernel.
    unsafe extern "C" fn run(work: *mut bindings::kthread_work) {
        // SAFETY: the `kthread_work` is the first field of its
        // `KthreadWork<T>` (`repr(C)`), which is at `T::OFFSET` in its `T`
        // (`HasKthreadWork`).
        let (kw, item) = unsafe {
            (
                &*work.cast::<Self>(),
                work.cast::<u8>().sub(T::OFFSET).cast::<T>(),
            )
        };
        // Read before the item, which may go with its last reference.
        let (threads, thread) = (kw.threads, kw.thread);
        // SAFETY: the reference `queue_if_idle` leaked for this run is
        // taken back.
        T::run(unsafe { Arc::from_raw(item) });
        threads.done(thread);
    }
}

/// One worker thread.
struct Thread {
    worker: *mut bindings::kthread_worker,
    /// Whether an item is queued on it or running.
    busy: AtomicBool,
}

/// The worker threads.
struct Threads {
    threads: KVec<Thread>,
    /// Which thread [`ModuleThreads::pick`] gives next.
    next: AtomicUsize,
}

/// A module's own worker threads, none until started.
pub struct ModuleThreads(AtomicPtr<Threads>);

impl ModuleThreads {
    /// An empty slot.
    pub const fn new() -> Self {
        Self(AtomicPtr::new(ptr::null_mut()))
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
                next: AtomicUsize::new(0),
            },
            GFP_KERNEL,
        )?;
        for id in 0..n {
            // SAFETY: `name` is NUL-terminated; the call copies it.
            let w =
                unsafe { bindings::rrxe_kthread_worker_create(name.as_char_ptr(), id, slice_ns) };
            // Room for `n` was reserved: the push does not fail.
            if let Err(e) = kernel::error::from_err_ptr(w).and_then(|worker| {
                let thread = Thread {
                    worker,
                    busy: AtomicBool::new(false),
                };
                set.threads.push_within_capacity(thread).map_err(|e| {
                    destroy(core::slice::from_ref(&e.0));
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
        Ok(ThreadsOwner(self))
    }

    fn get(&self) -> Option<&Threads> {
        let set = self.0.load(Ordering::Acquire);
        // SAFETY: a non-null pointer is the live set: it is cleared before
        // being freed in `ThreadsOwner::drop`, at module exit, after every
        // object whose work is queued here is gone.
        unsafe { set.as_ref() }
    }

    /// The thread a new work item is to run on: the threads in turn.
    fn pick(&self) -> usize {
        self.get().map_or(0, |s| {
            s.next
                .fetch_add(1, Ordering::Relaxed)
                .checked_rem(s.threads.len())
                .unwrap_or(0)
        })
    }

    /// Queues `item`'s work on its thread if nothing is queued or running
    /// there; else, or if there are no threads (the module is going away),
    /// gives the item back. Any context.
    pub fn queue_if_idle<T: KthreadWorkItem>(&self, item: Arc<T>) -> Result<(), Arc<T>> {
        let raw = Arc::into_raw(item);
        // SAFETY: `T::OFFSET` is where the item's `KthreadWork` is; the
        // item is alive (`raw` holds a reference).
        let kw = unsafe { &*raw.cast::<u8>().add(T::OFFSET).cast::<KthreadWork<T>>() };
        let thread = self.get().and_then(|s| s.threads.get(kw.thread));
        let queued = thread.is_some_and(|t| {
            t.busy
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
                && {
                    // SAFETY: `t.worker` is a live worker (as in `get`) and
                    // the work an initialised item only ever queued on it;
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

    /// Thread `thread` is done with its item.
    fn done(&self, thread: usize) {
        if let Some(t) = self.get().and_then(|s| s.threads.get(thread)) {
            t.busy.store(false, Ordering::Release);
        }
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

/// Stops its [`ModuleThreads`]' threads when dropped, after the work queued
/// on them has run.
pub struct ThreadsOwner(&'static ModuleThreads);

impl Drop for ThreadsOwner {
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
