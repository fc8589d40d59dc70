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

use super::{
    bindings,
    module_slot::{
        ModuleSlot,
        SlotContent,
        SlotOwner, //
    },
};
use kernel::{
    prelude::*,
    workqueue::Queue, //
};

/// The content of a [`ModuleQueue`]: a workqueue.
pub struct Workqueue;

impl SlotContent for Workqueue {
    type Target = bindings::workqueue_struct;

    unsafe fn free(wq: *mut bindings::workqueue_struct) {
        // SAFETY: `wq` came from `alloc_workqueue()` and no new reference to
        // it can be taken (the caller's promise); destroying it drains the
        // work still queued.
        unsafe { bindings::destroy_workqueue(wq) };
    }
}

/// A module's own workqueue, empty until allocated.
pub struct ModuleQueue(ModuleSlot<Workqueue>);

/// Destroys its [`ModuleQueue`]'s queue when dropped, waiting for the work
/// queued on it.
pub type QueueOwner = SlotOwner<Workqueue>;

impl ModuleQueue {
    /// An empty slot.
    pub const fn new() -> Self {
        Self(ModuleSlot::new())
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
        // SAFETY: a new queue, ours, freed by `Workqueue::free`.
        unsafe { self.0.publish(wq) }
    }

    /// The queue, `None` outside the owner's lifetime.
    pub fn get(&self) -> Option<&Queue> {
        let wq = self.0.get()?;
        // SAFETY: the slot's content is a live queue while it is there and
        // the caller runs (`ModuleSlot::get`).
        Some(unsafe { Queue::from_raw(wq.as_ptr()) })
    }
}

impl Default for ModuleQueue {
    fn default() -> Self {
        Self::new()
    }
}
