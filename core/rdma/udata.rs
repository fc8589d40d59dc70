// SPDX-License-Identifier: GPL-2.0

//! The driver-specific part of a uverbs command (`struct ib_udata`): the
//! provider's request after the core's, and room for the driver's response.
//!
//! Functions are `#[inline]`: this directory is built into every module of
//! the project, and only the ones that call them should link what they use.

use super::bindings;
use kernel::{
    prelude::*,
    transmute::{
        AsBytes,
        FromBytes, //
    },
    uaccess::{
        UserPtr,
        UserSlice, //
    },
};

/// A command's user data; `None` where the op's `udata` is NULL (a kernel
/// caller).
///
/// # Invariants
///
/// The pointer is a valid `ib_udata` for the duration of the op.
pub struct UData<'a>(&'a bindings::ib_udata);

impl<'a> UData<'a> {
    /// # Safety
    ///
    /// `raw` is NULL or a valid `ib_udata` for `'a`.
    #[inline]
    pub unsafe fn from_raw(raw: *mut bindings::ib_udata) -> Option<Self> {
        // SAFETY: the caller's promise.
        unsafe { raw.as_ref() }.map(Self)
    }

    /// Bytes of request the provider passed.
    #[inline]
    pub fn in_len(&self) -> usize {
        self.0.inlen
    }

    /// Bytes of response the provider has room for.
    #[inline]
    pub fn out_len(&self) -> usize {
        self.0.outlen
    }

    /// Reads the request as a `T` (`ib_copy_from_udata` of `size_of::<T>()`
    /// bytes; as in C, the caller checks `in_len` where it matters).
    #[inline]
    pub fn read<T: FromBytes>(&self) -> Result<T> {
        let len = core::mem::size_of::<T>();
        let mut r = UserSlice::new(UserPtr::from_ptr(self.0.inbuf.cast_mut()), len).reader();
        r.read()
    }

    /// Writes `bytes` at `offset` of the response buffer (`copy_to_user`,
    /// `EFAULT` on a bad address). The caller checks `out_len`.
    #[inline]
    pub fn write_at(&self, offset: usize, bytes: &[u8]) -> Result {
        let addr = (self.0.outbuf as usize).checked_add(offset).ok_or(EFAULT)?;
        let mut w = UserSlice::new(UserPtr::from_addr(addr), bytes.len()).writer();
        w.write_slice(bytes)
    }

    /// Writes the response `resp` (`ib_copy_to_udata`).
    #[inline]
    pub fn respond<T: AsBytes>(&self, resp: &T) -> Result {
        self.write_at(0, resp.as_bytes())
    }
}
