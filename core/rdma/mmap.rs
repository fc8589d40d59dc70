// SPDX-License-Identifier: GPL-2.0

//! Queue buffers shared with user space, and their mapping through the
//! uverbs file.
//!
//! A [`QueueBuf`] is `vmalloc_user` memory (zeroed, page aligned, allowed to
//! be mapped to user space) holding one queue: a header with the indices and
//! the elements (`struct rxe_queue_buf`). The driver's queue logic reads and
//! writes it through the accessors here, which check bounds, use the
//! kernel's acquire/release atomics for the indices the other end owns, and
//! copy elements in and out: a queue mapped to user space can be written by
//! it at any time, so no reference into the buffer is ever handed out.
//!
//! A user process maps a queue the way the C driver's provider expects: the
//! create (or resize) response carries a `struct mminfo {offset, size}` and
//! the provider `mmap()`s the uverbs file at that offset. [`UserMapping`]
//! registers the buffer with the RDMA core's `rdma_user_mmap_entry`
//! machinery (the core hands out the offset and finds the entry again in
//! the `mmap` op); [`install`] sets the `mmap` and `mmap_free` ops. The
//! entry holds its own reference to the buffer, so a mapping racing with
//! the queue's destruction or resize maps valid memory; pages already
//! mapped stay with the process until it unmaps them, as in the C driver.
//!
//! Everything that calls the C glue is generic or `#[inline]`: this
//! directory is also built into `rdma_ucm`, which does not link that glue.

use super::{
    bindings,
    ib_device::IbDriver,
    udata::UData, //
};
use core::{
    marker::PhantomData,
    ptr::NonNull,
    sync::atomic::{
        AtomicBool,
        Ordering, //
    },
};
use kernel::{
    ffi,
    page::{
        PAGE_SHIFT,
        PAGE_SIZE, //
    },
    prelude::*,
    sync::{
        atomic::{
            Acquire,
            Atomic,
            Relaxed,
            Release, //
        },
        Arc,
    },
    transmute::{
        AsBytes,
        FromBytes, //
    },
    types::ForeignOwnable,
};

/// `struct mminfo`: where user space maps a queue.
pub type MmInfo = bindings::mminfo;

// SAFETY: `mminfo` is a `u64` and two `u32`s: no padding, any bits valid.
unsafe impl AsBytes for bindings::mminfo {}
// SAFETY: as above.
unsafe impl FromBytes for bindings::mminfo {}

// SAFETY: `rxe_create_qp_resp` is two `mminfo`s (the RQ's and the SQ's
// mapping): no padding, no pointers.
unsafe impl AsBytes for bindings::rxe_create_qp_resp {}

/// The cache line size (queue slots are at least this big).
#[inline]
pub fn cache_line_size() -> usize {
    // SAFETY: no preconditions.
    unsafe { bindings::rrxe_cache_line_size() as usize }
}

/// The memory of one queue: `vmalloc_user` memory, zeroed at allocation.
///
/// # Invariants
///
/// `ptr` points to `size` bytes from `vmalloc_user`, 4-byte aligned (page
/// aligned in fact), owned by this object until it is dropped.
pub struct QueueBuf {
    ptr: NonNull<u8>,
    size: usize,
    /// Whether it was handed to user space (see [`QueueBuf::write_value`]).
    user: AtomicBool,
}

// SAFETY: the buffer is plain memory; accesses go through the methods below,
// which are as safe from any thread as from the owner's.
unsafe impl Send for QueueBuf {}
// SAFETY: the methods take `&self` and only copy bytes in and out or access
// 32-bit words atomically; concurrent writers of the same bytes are the
// queue owner's locking concern, as for memory shared with user space.
unsafe impl Sync for QueueBuf {}

impl QueueBuf {
    /// A zeroed buffer of `size` bytes (`ENOMEM` if none).
    #[inline]
    pub fn new(size: usize) -> Result<Arc<Self>> {
        // SAFETY: no preconditions; returns zeroed memory or NULL.
        let ptr = NonNull::new(unsafe { bindings::rrxe_vmalloc_user(size) }.cast::<u8>());
        let ptr = ptr.ok_or(ENOMEM)?;
        // INVARIANT: `ptr` is `size` bytes of vmalloc_user memory.
        let buf = Self {
            ptr,
            size,
            user: AtomicBool::new(false),
        };
        // On error `buf` is dropped, which frees the memory.
        Ok(Arc::new(buf, GFP_KERNEL)?)
    }

    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.size
    }

    /// Whether it is empty (never, but clippy wants the pair).
    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    fn range(&self, offset: usize, len: usize) -> Result<*mut u8> {
        match offset.checked_add(len) {
            Some(end) if end <= self.size => {
                // SAFETY: `offset` is within the allocation (checked above).
                Ok(unsafe { self.ptr.as_ptr().add(offset) })
            }
            _ => Err(EINVAL),
        }
    }

    fn word(&self, offset: usize) -> Result<&Atomic<u32>> {
        if offset % 4 != 0 {
            return Err(EINVAL);
        }
        let p = self.range(offset, 4)?;
        // SAFETY: `p` is 4 aligned (the buffer is page aligned) and valid
        // for the buffer's life; the words used as indices are only
        // accessed atomically by the kernel (user space accesses them with
        // its own atomics).
        Ok(unsafe { Atomic::from_ptr(p.cast::<u32>()) })
    }

    /// Reads the 32-bit word at `offset` with acquire semantics
    /// (`smp_load_acquire`): an index the other end owns, after which the
    /// elements it published are visible.
    pub fn load_acquire(&self, offset: usize) -> Result<u32> {
        Ok(self.word(offset)?.load(Acquire))
    }

    /// Reads the 32-bit word at `offset` (`READ_ONCE`).
    pub fn load(&self, offset: usize) -> Result<u32> {
        Ok(self.word(offset)?.load(Relaxed))
    }

    /// Stores the 32-bit word at `offset` with release semantics
    /// (`smp_store_release`): the elements written before it are visible to
    /// whoever reads it with acquire.
    pub fn store_release(&self, offset: usize, value: u32) -> Result {
        self.word(offset)?.store(value, Release);
        Ok(())
    }

    /// Stores the 32-bit word at `offset` (`WRITE_ONCE`).
    pub fn store(&self, offset: usize, value: u32) -> Result {
        self.word(offset)?.store(value, Relaxed);
        Ok(())
    }

    /// Copies `bytes` to `offset`.
    pub fn write_bytes(&self, offset: usize, bytes: &[u8]) -> Result {
        let p = self.range(offset, bytes.len())?;
        // SAFETY: `p` is valid for `bytes.len()` bytes (checked by `range`);
        // a plain copy, as the C driver's memcpy into a queue.
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
        Ok(())
    }

    /// Copies `bytes.len()` bytes from `offset`.
    pub fn read_bytes(&self, offset: usize, bytes: &mut [u8]) -> Result {
        let p = self.range(offset, bytes.len())?;
        // SAFETY: as in `write_bytes`, the other way.
        unsafe { core::ptr::copy_nonoverlapping(p, bytes.as_mut_ptr(), bytes.len()) };
        Ok(())
    }

    /// Zeroes `len` bytes from `offset`.
    pub fn zero(&self, offset: usize, len: usize) -> Result {
        let p = self.range(offset, len)?;
        // SAFETY: `p` is valid for `len` bytes.
        unsafe { p.write_bytes(0, len) };
        Ok(())
    }

    /// Writes `value` at `offset` (no padding bytes, so nothing of the
    /// kernel's stack reaches user space).
    pub fn write<T: AsBytes>(&self, offset: usize, value: &T) -> Result {
        self.write_bytes(offset, value.as_bytes())
    }

    /// Reads a `T` at `offset`; any bytes are a valid `T`.
    pub fn read<T: FromBytes>(&self, offset: usize) -> Result<T> {
        let p = self.range(offset, core::mem::size_of::<T>())?;
        // SAFETY: `p` is valid for a `T`'s size; `T: FromBytes` accepts any
        // bytes; unaligned read since `offset` is the caller's.
        Ok(unsafe { p.cast::<T>().read_unaligned() })
    }

    /// Writes a `T` that may have padding (`struct ib_wc` of a kernel
    /// completion queue) at `offset`. `EPERM` if the buffer was mapped to
    /// user space: its padding would leak kernel memory there.
    pub fn write_value<T>(&self, offset: usize, value: T) -> Result {
        if self.user.load(Ordering::Relaxed) {
            return Err(EPERM);
        }
        let p = self.range(offset, core::mem::size_of::<T>())?;
        // SAFETY: `p` is valid for a `T`'s size; unaligned write since
        // `offset` is the caller's.
        unsafe { p.cast::<T>().write_unaligned(value) };
        Ok(())
    }

    /// Copies `len` bytes at `from_offset` of `from` to `offset` of this
    /// buffer (a resize's element moves).
    pub fn copy_from(
        &self,
        offset: usize,
        from: &QueueBuf,
        from_offset: usize,
        len: usize,
    ) -> Result {
        let dst = self.range(offset, len)?;
        let src = from.range(from_offset, len)?;
        // SAFETY: both ranges are valid for `len` bytes; `copy` allows them
        // to overlap (the same buffer).
        unsafe { core::ptr::copy(src, dst, len) };
        Ok(())
    }
}

impl Drop for QueueBuf {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the memory came from `vmalloc_user` and is ours (type
        // invariant). Pages user space still maps are kept by the mapping's
        // page references until it is unmapped.
        unsafe { bindings::rrxe_vfree(self.ptr.as_ptr().cast()) };
    }
}

/// The user context of a verbs command from user space: where its queues
/// are mapped.
///
/// # Invariants
///
/// `ctx` is the live `ib_ucontext` of the command being run, for `'a`.
pub struct UserContext<'a> {
    ctx: NonNull<bindings::ib_ucontext>,
    _a: PhantomData<&'a bindings::ib_ucontext>,
}

impl UserContext<'_> {
    /// The context of the command whose driver udata is `udata`, if it comes
    /// from user space.
    ///
    /// # Safety
    ///
    /// `udata` is NULL or the `driver_udata` of a `uverbs_attr_bundle` of a
    /// command being run, valid for `'a`.
    #[inline]
    pub unsafe fn from_udata<'a>(udata: *mut bindings::ib_udata) -> Option<UserContext<'a>> {
        if udata.is_null() {
            return None;
        }
        // SAFETY: the caller's promise: `udata` is inside a bundle.
        let ctx = NonNull::new(unsafe { bindings::rrxe_udata_ucontext(udata) })?;
        // INVARIANT: the bundle's context is live while the command runs.
        Some(UserContext {
            ctx,
            _a: PhantomData,
        })
    }
}

/// A verb called from user space: its driver udata and user context.
pub struct UserVerb<'a> {
    /// The provider's request and room for the driver's response.
    pub udata: UData<'a>,
    /// Where the queues it creates are mapped.
    pub ctx: UserContext<'a>,
    /// The udata, for the C helpers of the ops' modules.
    raw: *mut bindings::ib_udata,
}

impl UserVerb<'_> {
    /// The verb whose driver udata is `udata`; `None` for a kernel caller
    /// (NULL).
    ///
    /// # Safety
    ///
    /// As [`UserContext::from_udata`].
    #[inline]
    pub unsafe fn from_raw<'a>(udata: *mut bindings::ib_udata) -> Option<UserVerb<'a>> {
        // SAFETY: the caller's promise covers both.
        unsafe {
            Some(UserVerb {
                ctx: UserContext::from_udata(udata)?,
                udata: UData::from_raw(udata)?,
                raw: udata,
            })
        }
    }

    /// The `ib_udata`, valid while the verb runs.
    pub(super) fn as_raw(&self) -> *mut bindings::ib_udata {
        self.raw
    }
}

/// The `rdma_user_mmap_entry` of a queue buffer, allocated here and freed
/// by the core's `mmap_free` op.
#[repr(C)]
struct MapEntry {
    rdma: bindings::rdma_user_mmap_entry,
    /// An `Arc<QueueBuf>` made foreign.
    buf: *mut ffi::c_void,
}

/// A queue buffer offered to a user process for `mmap()`. Dropping it
/// withdraws the offer (`rdma_user_mmap_entry_remove`); the buffer lives on
/// while a mapping is being made. It must be dropped, in process context,
/// before the command's user context goes away: by the object's destroy op
/// (or when a resize replaces it).
///
/// # Invariants
///
/// `entry` is a `MapEntry` inserted in a user context's mmap table, on which
/// this object holds the driver's reference.
pub struct UserMapping {
    entry: NonNull<MapEntry>,
}

// SAFETY: the entry is managed by the RDMA core under its own locks; this
// object only removes it, once.
unsafe impl Send for UserMapping {}
// SAFETY: `&UserMapping` exposes nothing.
unsafe impl Sync for UserMapping {}

impl UserMapping {
    /// Offers `buf` for mapping in `ctx`; returns the offer and where user
    /// space maps it (`mminfo`: the offset in the uverbs file, and the size
    /// rounded up to pages, as the C driver reports it).
    #[inline]
    pub fn new(ctx: &UserContext<'_>, buf: &Arc<QueueBuf>) -> Result<(Self, MmInfo)> {
        let size = buf.len();
        let mapped_size = size
            .checked_add(PAGE_SIZE - 1)
            .map(|s| s & !(PAGE_SIZE - 1))
            .and_then(|s| u32::try_from(s).ok())
            .ok_or(EINVAL)?;
        let entry = KBox::new(
            MapEntry {
                rdma: pin_init::zeroed(),
                // Set before insertion: `mmap` may find the entry as soon as
                // it is inserted (the offset can be guessed).
                buf: Arc::clone(buf).into_foreign(),
            },
            GFP_KERNEL,
        )?;
        let raw = KBox::into_raw(entry);
        // SAFETY: `raw` is a valid, zeroed entry (the core initialises its
        // reference count, lock and list); the context is live.
        let ret = unsafe {
            bindings::rdma_user_mmap_entry_insert(ctx.ctx.as_ptr(), &raw mut (*raw).rdma, size)
        };
        if ret != 0 {
            // SAFETY: not inserted: still only ours, with the `Arc` made
            // foreign above.
            unsafe {
                let entry = KBox::from_raw(raw);
                drop(<Arc<QueueBuf> as ForeignOwnable>::from_foreign(entry.buf));
            }
            return Err(Error::from_errno(ret));
        }
        buf.user.store(true, Ordering::Relaxed);
        // SAFETY: inserted: the core set the offset.
        let pgoff = unsafe { (*raw).rdma.start_pgoff };
        let info = MmInfo {
            offset: (pgoff as u64) << PAGE_SHIFT,
            size: mapped_size,
            pad: 0,
        };
        // INVARIANT: inserted; the insertion's reference is ours.
        Ok((
            Self {
                // SAFETY: `raw` came from a `KBox`.
                entry: unsafe { NonNull::new_unchecked(raw) },
            },
            info,
        ))
    }
}

impl Drop for UserMapping {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the entry is inserted and the driver's reference is ours
        // (type invariant); the core frees it through `mmap_free` once no
        // `mmap` call holds it.
        unsafe { bindings::rdma_user_mmap_entry_remove(&raw mut (*self.entry.as_ptr()).rdma) };
    }
}

/// Installs the `mmap` and `mmap_free` ops that map the queues offered with
/// [`UserMapping`].
pub fn install<T: IbDriver>(ops: &mut bindings::ib_device_ops) {
    ops.mmap = Some(MmapOps::<T>::mmap_cb);
    ops.mmap_free = Some(MmapOps::<T>::mmap_free_cb);
}

/// The ops, generic so that only a driver that installs them links the glue
/// they call.
struct MmapOps<T>(PhantomData<T>);

impl<T: IbDriver> MmapOps<T> {
    /// # Safety
    ///
    /// Called by the core with a live user context and the VMA being set up.
    unsafe extern "C" fn mmap_cb(
        ctx: *mut bindings::ib_ucontext,
        vma: *mut bindings::vm_area_struct,
    ) -> ffi::c_int {
        // SAFETY: see the function's safety section. The core checks that the
        // VMA is shared and exactly the entry's size.
        let entry = unsafe { bindings::rdma_user_mmap_entry_get(ctx, vma) };
        if entry.is_null() {
            // As the C driver for an offset it does not know.
            return EINVAL.to_errno();
        }
        let entry = entry.cast::<MapEntry>();
        // SAFETY: every entry of this driver is a `MapEntry` (`rdma` first), kept
        // alive by the reference `rdma_user_mmap_entry_get` took.
        // `buf` is an `Arc<QueueBuf>` the entry holds until `mmap_free`, which
        // cannot run while we hold our reference.
        let buf = unsafe { <Arc<QueueBuf> as ForeignOwnable>::borrow((*entry).buf) };
        // SAFETY: the VMA is being set up by the core; the buffer is
        // vmalloc_user memory of at least the VMA's size (the core checked the
        // size against the entry, whose length is the buffer's).
        let ret = unsafe { bindings::rrxe_remap_vmalloc_range(vma, buf.ptr.as_ptr().cast()) };
        // SAFETY: puts the reference taken above.
        unsafe { bindings::rdma_user_mmap_entry_put(entry.cast()) };
        ret
    }

    /// # Safety
    ///
    /// Called by the core once, when the last reference to an entry of this
    /// driver is put.
    unsafe extern "C" fn mmap_free_cb(entry: *mut bindings::rdma_user_mmap_entry) {
        // SAFETY: the entry is a `MapEntry` from `KBox::into_raw` (see
        // `UserMapping::new`), no longer used by anyone.
        let entry = unsafe { KBox::from_raw(entry.cast::<MapEntry>()) };
        // SAFETY: `buf` is the entry's `Arc<QueueBuf>`, given back once.
        drop(unsafe { <Arc<QueueBuf> as ForeignOwnable>::from_foreign(entry.buf) });
    }
}
