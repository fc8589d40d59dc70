// SPDX-License-Identifier: GPL-2.0

//! A workqueue a module owns (`alloc_workqueue()` .. `destroy_workqueue()`).
//!
//! The kernel crate offers only the system workqueues, which a module cannot
//! drain: work it queued there may still run after the module's text is
//! gone. A module that queues work from callbacks it does not control (an
//! RDMA CM event handler, say) owns a queue instead and destroys it on exit,
//! which waits for everything queued on it.
//!
//! The queue is reached through a `static` [`ModuleQueue`], because the
//! callbacks that queue work have no path to the module's state; it is
//! allocated by [`ModuleQueue::alloc`] in the module's `init` and destroyed
//! when the returned [`QueueOwner`] (a field of the module) is dropped.

use super::bindings;
use core::{
    ptr,
    sync::atomic::{
        AtomicPtr,
        Ordering, //
    },
};
use kernel::{
    prelude::*,
    workqueue::Queue, //
};

/// A module's own workqueue, empty until allocated.
pub struct ModuleQueue(AtomicPtr<bindings::workqueue_struct>);

impl ModuleQueue {
    /// An empty slot.
    pub const fn new() -> Self {
        Self(AtomicPtr::new(ptr::null_mut()))
    }

    /// Allocates the queue (`WQ_UNBOUND`, as the system queues the C modules
    /// use for the same work); it lives until the returned owner is dropped.
    pub fn alloc(&'static self, name: &'static CStr) -> Result<QueueOwner> {
        self.alloc_with(name, bindings::wq_flags_WQ_UNBOUND, 0)
    }

    /// Allocates the queue with the `alloc_workqueue()` `flags` and
    /// `max_active` of the C module it replaces (0 is the default); it lives
    /// until the returned owner is dropped.
    pub fn alloc_with(
        &'static self,
        name: &'static CStr,
        flags: u32,
        max_active: i32,
    ) -> Result<QueueOwner> {
        // SAFETY: `name` is a NUL-terminated string that outlives the queue
        // (it is `'static`); `alloc_workqueue()` checks the flags and
        // `max_active` and fails on invalid ones.
        let wq = unsafe { bindings::rrxe_alloc_workqueue(name.as_char_ptr(), flags, max_active) };
        if wq.is_null() {
            return Err(ENOMEM);
        }
        if self
            .0
            .compare_exchange(ptr::null_mut(), wq, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            // SAFETY: `wq` was just allocated and was never published.
            unsafe { bindings::destroy_workqueue(wq) };
            return Err(EBUSY);
        }
        Ok(QueueOwner(self))
    }

    /// The queue, `None` outside the owner's lifetime.
    ///
    /// Callers run between the module's `init` and `exit` (they are callbacks
    /// of objects the module has registered), so the queue cannot be
    /// destroyed under them while they use it.
    pub fn get(&self) -> Option<&Queue> {
        let wq = self.0.load(Ordering::Acquire);
        if wq.is_null() {
            return None;
        }
        // SAFETY: a non-null pointer is a live queue: it is cleared before
        // `destroy_workqueue()` in `QueueOwner::drop`, which runs at module
        // exit, after every object whose callbacks call this is gone.
        Some(unsafe { Queue::from_raw(wq) })
    }
}

impl Default for ModuleQueue {
    fn default() -> Self {
        Self::new()
    }
}

/// Destroys its [`ModuleQueue`]'s queue when dropped, waiting for the work
/// queued on it.
pub struct QueueOwner(&'static ModuleQueue);

impl Drop for QueueOwner {
    fn drop(&mut self) {
        let wq = self.0 .0.swap(ptr::null_mut(), Ordering::AcqRel);
        if !wq.is_null() {
            // SAFETY: `wq` came from `alloc_workqueue()` and no new reference
            // to it can be taken (the slot is cleared); destroying it drains
            // the work still queued.
            unsafe { bindings::destroy_workqueue(wq) };
        }
    }
}
