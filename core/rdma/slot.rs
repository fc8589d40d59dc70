// SPDX-License-Identifier: GPL-2.0

//! A place for one `Arc` that threads hand over without a lock.

use core::{
    marker::PhantomData,
    ptr,
    sync::atomic::{
        AtomicPtr,
        Ordering, //
    },
};
use kernel::sync::Arc;

/// Empty, or holding one reference of an `Arc<T>`.
///
/// # Invariants
///
/// The pointer is null or came from `Arc::into_raw` of a reference the
/// slot owns.
pub struct ArcSlot<T: Send + Sync> {
    ptr: AtomicPtr<T>,
    _owns: PhantomData<Arc<T>>,
}

impl<T: Send + Sync> ArcSlot<T> {
    /// An empty slot.
    pub const fn new() -> Self {
        Self {
            ptr: AtomicPtr::new(ptr::null_mut()),
            _owns: PhantomData,
        }
    }

    /// Puts `item` in the slot; what was there, if anything, is returned.
    pub fn set(&self, item: Arc<T>) -> Option<Arc<T>> {
        // INVARIANT: the slot owns the reference `into_raw` leaves.
        let old = self
            .ptr
            .swap(Arc::into_raw(item).cast_mut(), Ordering::AcqRel);
        Self::from_ptr(old)
    }

    /// Takes what the slot holds, leaving it empty.
    pub fn take(&self) -> Option<Arc<T>> {
        Self::from_ptr(self.ptr.swap(ptr::null_mut(), Ordering::AcqRel))
    }

    fn from_ptr(p: *mut T) -> Option<Arc<T>> {
        if p.is_null() {
            None
        } else {
            // SAFETY: by the invariant, a non-null pointer is an `into_raw`
            // reference, which the caller took out of the slot.
            Some(unsafe { Arc::from_raw(p) })
        }
    }
}

impl<T: Send + Sync> Default for ArcSlot<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Send + Sync> Drop for ArcSlot<T> {
    fn drop(&mut self) {
        drop(self.take());
    }
}

// SAFETY: the slot hands an `Arc<T>` from one thread to another, which
// `T: Send + Sync` allows.
unsafe impl<T: Send + Sync> Send for ArcSlot<T> {}
// SAFETY: as above; its operations are atomic.
unsafe impl<T: Send + Sync> Sync for ArcSlot<T> {}
