// SPDX-License-Identifier: GPL-2.0

//! A spinlock taken with bottom halves off (`spin_lock_bh`), for state
//! that a softirq handler uses as well as process context: the kernel
//! crate has the plain and the irq-disabling kinds only. A holder in process
//! context cannot be interrupted by a softirq on its CPU that wants the
//! lock; a softirq holder is never interrupted by another. Unlike the
//! irq-disabling lock, the holder may send packets (the network stack's
//! `local_bh_enable` must not run with interrupts off), and the unlock
//! leaves TCG's translated code only if softirqs are pending.

use super::bindings;
use kernel::sync::lock::{
    Backend,
    Guard,
    Lock, //
};

/// A spinlock held with bottom halves disabled.
pub type SpinLockBh<T> = Lock<T, SpinLockBhBackend>;

/// A [`SpinLockBh`]'s guard.
pub type SpinLockBhGuard<'a, T> = Guard<'a, T, SpinLockBhBackend>;

/// Creates a [`SpinLockBh`] initialiser with the given name and a new lock
/// class.
#[macro_export]
macro_rules! new_spinlock_bh {
    ($inner:expr $(, $name:literal)? $(,)?) => {
        $crate::rdma::bh_lock::SpinLockBh::new(
            $inner,
            ::kernel::optional_name!($($name)?),
            ::kernel::static_lock_class!(),
        )
    };
}

/// The backend of [`SpinLockBh`]: the kernel's `spinlock_t` with its `_bh`
/// operations.
pub struct SpinLockBhBackend;

// SAFETY: `spinlock_t` gives mutual exclusion; the lock and unlock pair the
// `_bh` calls, so bottom halves are off exactly while the lock is held.
unsafe impl Backend for SpinLockBhBackend {
    type State = bindings::spinlock_t;
    type GuardState = ();

    #[inline]
    unsafe fn init(
        ptr: *mut Self::State,
        name: *const kernel::ffi::c_char,
        key: *mut bindings::lock_class_key,
    ) {
        // SAFETY: the caller gives a valid pointer for writes and a name
        // and key that live for ever.
        unsafe { bindings::__spin_lock_init(ptr, name, key) }
    }

    #[inline]
    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState {
        // SAFETY: the caller gives an initialised lock.
        unsafe { bindings::rrxe_spin_lock_bh(ptr) }
    }

    #[inline]
    unsafe fn try_lock(ptr: *mut Self::State) -> Option<Self::GuardState> {
        // SAFETY: the caller gives an initialised lock.
        (unsafe { bindings::rrxe_spin_trylock_bh(ptr) } != 0).then_some(())
    }

    #[inline]
    unsafe fn unlock(ptr: *mut Self::State, _guard_state: &Self::GuardState) {
        // SAFETY: the caller holds the lock, taken by `lock` or `try_lock`.
        unsafe { bindings::rrxe_spin_unlock_bh(ptr) }
    }

    #[inline]
    unsafe fn assert_is_held(ptr: *mut Self::State) {
        // SAFETY: the caller gives an initialised lock.
        unsafe { bindings::spin_assert_is_held(ptr) }
    }
}

/// Whether the caller runs in a softirq handler (`in_serving_softirq()`),
/// such as NAPI's receive path; not in a section that merely has bottom
/// halves disabled.
#[inline]
pub fn in_serving_softirq() -> bool {
    // SAFETY: reads the preempt count only.
    unsafe { bindings::rrxe_in_serving_softirq() }
}
