// SPDX-License-Identifier: GPL-2.0

//! Waiting for a field of an object to change, without a wait queue in the
//! object: the kernel's `wait_var_event()` and `wake_up_var()`, which hash
//! the field's address to one of a few shared wait queues. For waits that
//! are rare (a QP's task stopped at a reset or destroy) in objects made in
//! numbers, where a `CondVar` of its own would cost every object 24 bytes
//! and every wakeup its lock.

use super::bindings;
use core::sync::atomic::AtomicU8;

/// Sleeps (uninterruptibly) while `var` holds `val` (read with acquire);
/// the writer of another value wakes it ([`wake`]). Process context.
pub fn wait_while(var: &AtomicU8, val: u8) {
    // SAFETY: `var` is valid for reads for the call (a reference); the C
    // side only reads it, with `READ_ONCE`, as the atomic it is.
    unsafe { bindings::rrxe_wait_var_while_u8(var.as_ptr(), val) }
}

/// Wakes the [`wait_while`] callers on `var`, after a change of it; any
/// context. Costs a full barrier and, with nobody waiting, nothing else.
pub fn wake(var: &AtomicU8) {
    // SAFETY: `var` is valid (a reference); `wake_up_var` uses its address
    // only as a key.
    unsafe { bindings::rrxe_wake_up_var_mb(var.as_ptr().cast()) }
}
