// SPDX-License-Identifier: GPL-2.0

//! A `static` slot for something a module makes at load and frees at
//! unload (its own workqueue, its own threads), reached from callbacks
//! that have no path to the module's state.
//!
//! The module fills the slot in its `init` ([`ModuleSlot::publish`]) and
//! keeps the returned [`SlotOwner`] as a field; dropping the owner at exit
//! empties the slot, then frees what it held ([`SlotContent::free`], which
//! waits for what still runs on it). Users call [`ModuleSlot::get`]
//! between the two, from objects the module registered and removes before
//! its exit, so what they get is not freed under them.

use core::{
    marker::PhantomData,
    ptr::{
        self,
        NonNull, //
    },
    sync::atomic::{
        AtomicPtr,
        Ordering, //
    },
};
use kernel::prelude::*;

/// What a [`ModuleSlot`] holds, and how it is freed.
pub trait SlotContent {
    /// What the slot points to.
    type Target;

    /// Frees `p`, waiting for what still runs on it.
    ///
    /// # Safety
    ///
    /// `p` is the live content of a slot, published there and no longer
    /// reachable through it, or never published.
    unsafe fn free(p: *mut Self::Target);
}

/// A module's slot, empty until published.
pub struct ModuleSlot<C: SlotContent>(AtomicPtr<C::Target>, PhantomData<C>);

impl<C: SlotContent> ModuleSlot<C> {
    /// An empty slot.
    pub const fn new() -> Self {
        Self(AtomicPtr::new(ptr::null_mut()), PhantomData)
    }

    /// Publishes `p`, which lives until the returned owner is dropped; a
    /// slot already filled is left as it is, `p` freed, and `EBUSY`
    /// returned.
    ///
    /// # Safety
    ///
    /// `p` is live, the caller's, and freed by [`SlotContent::free`].
    pub unsafe fn publish(&'static self, p: *mut C::Target) -> Result<SlotOwner<C>> {
        if self
            .0
            .compare_exchange(ptr::null_mut(), p, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            // SAFETY: `p` was never published (the caller's promise).
            unsafe { C::free(p) };
            return Err(EBUSY);
        }
        Ok(SlotOwner(self))
    }

    /// What the slot holds, `None` outside its owner's lifetime. Live
    /// while the caller runs: the owner's drop empties the slot before
    /// freeing it, at module exit, after every object whose callbacks call
    /// this is gone (module docs).
    pub fn get(&self) -> Option<NonNull<C::Target>> {
        NonNull::new(self.0.load(Ordering::Acquire))
    }
}

impl<C: SlotContent> Default for ModuleSlot<C> {
    fn default() -> Self {
        Self::new()
    }
}

/// Empties its [`ModuleSlot`] and frees what it held when dropped.
pub struct SlotOwner<C: SlotContent + 'static>(&'static ModuleSlot<C>);

impl<C: SlotContent> Drop for SlotOwner<C> {
    fn drop(&mut self) {
        let p = self.0 .0.swap(ptr::null_mut(), Ordering::AcqRel);
        if !p.is_null() {
            // SAFETY: `p` was published and can no longer be reached
            // through the slot.
            unsafe { C::free(p) };
        }
    }
}
