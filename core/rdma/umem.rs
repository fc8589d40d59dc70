// SPDX-License-Identifier: GPL-2.0

//! Pinned user memory (`struct ib_umem`): the pages of a user memory region,
//! pinned by the RDMA core for as long as the region is registered.
//!
//! Functions are `#[inline]`: this directory is built into every module of
//! the project, and only the ones that call them should link what they use
//! (`ib_umem_*` and the glue of `glue_mr.c`).

use super::{
    bindings,
    ib_device::{
        Device,
        IbDriver, //
    },
};
use core::ptr::NonNull;
use kernel::{
    ffi,
    prelude::*, //
};

/// User memory pinned by `ib_umem_get`; dropping it unpins the pages
/// (`ib_umem_release`, which may sleep: drop it in process context).
///
/// # Invariants
///
/// The pointer is a umem returned by `ib_umem_get_va` and not yet released.
pub struct Umem(NonNull<bindings::ib_umem>);

// SAFETY: a umem is not tied to the thread that pinned it; the RDMA core
// releases umems from any process context.
unsafe impl Send for Umem {}
// SAFETY: `&Umem` only reads the umem's immutable scatter table.
unsafe impl Sync for Umem {}

impl Umem {
    /// Pins `len` bytes of the caller's memory at `addr` for a region with
    /// access flags `access` (`ib_umem_get_va`).
    #[inline]
    pub fn pin<T: IbDriver>(dev: &Device<T>, addr: u64, len: u64, access: u32) -> Result<Self> {
        let addr = ffi::c_ulong::try_from(addr).map_err(|_| EINVAL)?;
        let len = usize::try_from(len).map_err(|_| EINVAL)?;
        // SAFETY: the device is live; the core checks the range and the
        // access flags itself and returns a umem or an error pointer.
        let ptr = unsafe { bindings::rrxe_umem_get(dev.as_raw(), addr, len, access as ffi::c_int) };
        let ptr = kernel::error::from_err_ptr(ptr)?;
        // INVARIANT: a umem from `ib_umem_get_va`.
        NonNull::new(ptr).map(Self).ok_or(ENOMEM)
    }

    /// Pages the memory spans (`ib_umem_num_pages`).
    #[inline]
    pub fn num_pages(&self) -> usize {
        // SAFETY: the umem is valid (type invariant).
        unsafe { bindings::rrxe_umem_num_pages(self.0.as_ptr()) }
    }

    /// Whether a re-registration with `flags` (`IB_MR_REREG_*`) and new
    /// access flags `access` may keep this memory (`ib_umem_check_rereg`:
    /// `EACCES` for write access to memory pinned read-only).
    #[inline]
    pub fn check_rereg(&self, flags: u32, access: u32) -> Result {
        // SAFETY: the umem is valid (type invariant).
        kernel::error::to_result(unsafe {
            bindings::ib_umem_check_rereg(
                self.0.as_ptr(),
                flags as ffi::c_int,
                access as ffi::c_int,
            )
        })
    }

    /// Calls `f` with each pinned page, in order of address.
    #[inline]
    pub(crate) fn for_each_page(
        &self,
        mut f: impl FnMut(NonNull<bindings::page>) -> Result,
    ) -> Result {
        // SAFETY: the umem is valid; its scatter table is set up by
        // `ib_umem_get` and not changed until release.
        let sgt = unsafe { &*bindings::rrxe_umem_sgt(self.0.as_ptr()) };
        // SAFETY: all zeroes is a valid iterator before
        // `__sg_page_iter_start` initialises it (integers and pointers).
        let mut iter: bindings::sg_page_iter = unsafe { core::mem::zeroed() };
        // SAFETY: `iter` is valid for writes; the table's list holds
        // `orig_nents` entries (the CPU-side list of the umem).
        unsafe { bindings::__sg_page_iter_start(&mut iter, sgt.sgl, sgt.orig_nents, 0) };
        // SAFETY: `iter` was started above on a live table.
        while unsafe { bindings::__sg_page_iter_next(&mut iter) } {
            // SAFETY: `iter` is positioned on a valid page of the table.
            let page = unsafe { bindings::rrxe_sg_page_iter_page(&mut iter) };
            f(NonNull::new(page).ok_or(EFAULT)?)?;
        }
        Ok(())
    }
}

impl Drop for Umem {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the umem is valid and released exactly once, here.
        unsafe { bindings::ib_umem_release(self.0.as_ptr()) };
    }
}
