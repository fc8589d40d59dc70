// SPDX-License-Identifier: GPL-2.0

//! The RDMA core's ops for memory regions (`struct ib_mr`), and the memory
//! a region maps.
//!
//! Unlike the other verbs objects, the driver allocates its `ib_mr`: each
//! region is an [`ObjectBox<ib_mr>`] allocated here, with the driver's
//! [`MrDriver::Mr`] attached, and freed by `dereg_mr` once the driver
//! agreed to the deregistration.
//!
//! The memory of a region is one of three kinds. A DMA region reaches all
//! kernel memory by kernel virtual address ([`KernelMemory`]), as kernel
//! users (`ib_alloc_pd`'s local DMA lkey) expect. A user region maps pinned
//! user pages ([`MrPages::from_umem`]). A fast-registration region maps the
//! pages its kernel user hands to `map_mr_sg` ([`MrPages::push`]): the C
//! driver trusts those to stay valid while they are registered, and so does
//! this one.
//!
//! Functions that use the glue of `glue_mr.c` or `ib_umem_*` are generic or
//! `#[inline]`: this directory is also built into `rdma_ucm`, which does
//! not link them.

use super::{
    bindings,
    ib_device::{
        Device,
        IbDriver, //
    },
    object::ObjectBox,
    umem::Umem,
};
use core::ptr::NonNull;
use kernel::{
    ffi,
    page::PAGE_SIZE,
    prelude::*,
    sync::{
        atomic::{
            Atomic,
            Full,
            Release, //
        },
        Arc, //
    },
};

/// The identity of a protection domain, to compare the PD of an object with
/// that of a QP or work request (the core's `ib_pd` pointer; PDs keep no
/// driver state).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PdId(usize);

impl PdId {
    /// The identity of the PD at `pd`.
    pub fn of(pd: *const bindings::ib_pd) -> Self {
        Self(pd as usize)
    }
}

/// A random byte for the variable part of a new key (`rxe_get_next_key`).
pub fn random_key_byte() -> u8 {
    // SAFETY: no preconditions.
    unsafe { bindings::get_random_u8() }
}

/// The caller's side of a copy between its buffer and a region, which also
/// says the direction: a packet's payload is read-only (a shared skb), so
/// copying it into a region must not need a mutable buffer, and neither a
/// bounce buffer.
#[derive(Debug)]
pub enum CopyBuf<'a> {
    /// The bytes copied into the region (`RXE_TO_MR_OBJ`).
    ToMr(&'a [u8]),
    /// The buffer filled from the region (`RXE_FROM_MR_OBJ`).
    FromMr(&'a mut [u8]),
}

impl CopyBuf<'_> {
    /// The bytes to copy.
    pub fn len(&self) -> usize {
        match self {
            Self::ToMr(b) => b.len(),
            Self::FromMr(b) => b.len(),
        }
    }

    /// Whether there is nothing to copy.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes `start..end` of the buffer, the same way; `None` if the
    /// range is not inside it.
    pub fn part(&mut self, start: usize, end: usize) -> Option<CopyBuf<'_>> {
        match self {
            Self::ToMr(b) => b.get(start..end).map(CopyBuf::ToMr),
            Self::FromMr(b) => b.get_mut(start..end).map(CopyBuf::FromMr),
        }
    }
}

/// Copies `buf` to or from `page` at `offset` (within the page); `EINVAL`
/// if the range is not inside the page.
///
/// Mapped and copied here, as `rxe_mr_copy` does, rather than through
/// `kernel::page::Page::{read_raw, write_raw}`: those are not inlined into
/// an out-of-tree module, and cost five calls a copy on the per-packet
/// path where this costs three (map, `memcpy`, unmap).
///
/// # Safety
///
/// `page` is a valid page for the call.
#[inline]
unsafe fn copy_page(page: NonNull<bindings::page>, offset: usize, buf: CopyBuf<'_>) -> Result {
    let len = buf.len();
    if offset > PAGE_SIZE || len > PAGE_SIZE - offset {
        return Err(EINVAL);
    }
    // SAFETY: the caller's promise; the mapping is undone below.
    let va = unsafe { bindings::kmap_local_page(page.as_ptr()) }.cast::<u8>();
    // SAFETY: `[offset, offset + len)` is inside the mapped page (checked
    // above); `buf` is valid for `len` bytes (written only for `FromMr`,
    // which holds it mutably) and is not the page. The page is memory the
    // region's owner shares with this device: concurrent accesses by user
    // space or another packet are the owner's business, as with the C
    // driver's memcpy.
    unsafe {
        match buf {
            CopyBuf::ToMr(b) => core::ptr::copy_nonoverlapping(b.as_ptr(), va.add(offset), len),
            CopyBuf::FromMr(b) => {
                core::ptr::copy_nonoverlapping(va.add(offset), b.as_mut_ptr(), len)
            }
        }
    }
    // SAFETY: the mapping made above, ended once.
    unsafe { bindings::kunmap_local(va.cast()) };
    Ok(())
}

/// An operation on an aligned 64-bit word of a region, for the atomic
/// requests of the transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WordOp {
    /// Stores `swap` if the word is `compare` (`CMP_SWP`).
    CompareSwap {
        /// The value compared.
        compare: u64,
        /// The value stored if equal.
        swap: u64,
    },
    /// Adds to the word, wrapping (`FETCH_ADD`).
    FetchAdd(u64),
    /// Stores the word after all earlier accesses (`ATOMIC_WRITE`, the C
    /// driver's `smp_store_release`).
    StoreRelease(u64),
}

/// Does `op` on the 64-bit word at `offset` in `page`, atomically with
/// respect to any other atomic access to the word, and returns the word's
/// value before (0 for a store). `EINVAL` unless `offset` is 8-byte aligned
/// and the word lies in the page.
///
/// The C driver serialises its atomics with one global spinlock and plain
/// accesses; a locked hardware operation gives the same atomicity against
/// other requests, and against CPU atomics of the memory's owner too.
///
/// # Safety
///
/// `page` is a valid page for the call.
#[inline]
unsafe fn word_op(page: NonNull<bindings::page>, offset: usize, op: WordOp) -> Result<u64> {
    if offset % 8 != 0 || offset.checked_add(8).is_none_or(|end| end > PAGE_SIZE) {
        return Err(EINVAL);
    }
    // SAFETY: the page is valid (the caller's promise); the mapping is
    // undone below, before returning.
    let va = unsafe { bindings::kmap_local_page(page.as_ptr()) };
    // SAFETY: `va` maps the whole page and the word is inside it, 8-byte
    // aligned (checked above), so valid for atomic accesses while mapped.
    // Accesses by other requests are atomic too; plain accesses by the
    // memory's owner race as they do with the C driver and any RDMA
    // device (the owner's business, IBA o9-19 leaves them undefined).
    let word = unsafe { Atomic::<u64>::from_ptr(va.cast::<u8>().add(offset).cast::<u64>()) };
    let old = match op {
        WordOp::CompareSwap { compare, swap } => {
            word.cmpxchg(compare, swap, Full).unwrap_or_else(|old| old)
        }
        WordOp::FetchAdd(add) => word.fetch_add(add, Full),
        WordOp::StoreRelease(value) => {
            word.store(value, Release);
            0
        }
    };
    // SAFETY: the mapping made above, ended once, no reference to it left.
    unsafe { bindings::kunmap_local(va) };
    Ok(old)
}

/// The memory of a DMA region: all of kernel memory, by kernel virtual
/// address. Only the core makes one, for `get_dma_mr`.
pub struct KernelMemory(());

impl KernelMemory {
    /// Copies between `buf` and the kernel memory at `addr`
    /// (`rxe_mr_copy_dma`).
    #[inline]
    pub fn copy(&self, addr: u64, mut buf: CopyBuf<'_>) -> Result {
        let mut addr = addr;
        let mut done = 0;
        let len = buf.len();
        while done < len {
            let offset = (addr as usize) & (PAGE_SIZE - 1);
            let n = (len - done).min(PAGE_SIZE - offset);
            // SAFETY: a DMA region's addresses are kernel virtual addresses
            // its kernel user granted access to (as the C driver assumes).
            let page = unsafe { bindings::rrxe_virt_dma_to_page(addr) };
            let page = NonNull::new(page).ok_or(EFAULT)?;
            let part = buf.part(done, done + n).ok_or(EFAULT)?;
            // SAFETY: the page of a live kernel address, see above.
            unsafe { copy_page(page, offset, part)? };
            done += n;
            addr = addr.wrapping_add(n as u64);
        }
        Ok(())
    }

    /// Does `op` on the word at kernel address `addr` (see [`WordOp`]):
    /// `EINVAL` if misaligned, `EFAULT` if no page is there.
    #[inline]
    pub fn word_op(&self, addr: u64, op: WordOp) -> Result<u64> {
        // SAFETY: as for `copy`: a DMA region's kernel user granted access.
        let page = unsafe { bindings::rrxe_virt_dma_to_page(addr) };
        let page = NonNull::new(page).ok_or(EFAULT)?;
        // SAFETY: the page of a live kernel address, see above.
        unsafe { word_op(page, (addr as usize) & (PAGE_SIZE - 1), op) }
    }
}

/// A page address `map_mr_sg` passes to [`MrDriver::set_page`]: a kernel
/// virtual address (`ib_virt_dma_to_page`), from the core only.
pub struct DmaAddr(u64);

struct PageInfo {
    page: NonNull<bindings::page>,
    /// Where the region's page starts in the CPU page.
    offset: usize,
}

/// The pages a user or fast-registration region maps, in order (the C
/// driver's `page_info`).
///
/// # Invariants
///
/// Every page is valid while `self` lives: pinned by `umem`, or set by
/// `map_mr_sg` from kernel memory its kernel user keeps for the
/// registration (see the module docs).
pub struct MrPages {
    pages: KVec<PageInfo>,
    capacity: usize,
    umem: Option<Umem>,
}

// SAFETY: the page pointers are plain references to memory valid in any
// context (type invariant); the umem is `Send`.
unsafe impl Send for MrPages {}
// SAFETY: `&MrPages` only reads pages and the list.
unsafe impl Sync for MrPages {}

impl MrPages {
    /// An empty list with room for `capacity` pages, for `map_mr_sg`.
    #[inline]
    pub fn with_capacity(capacity: usize) -> Result<Self> {
        Ok(Self {
            pages: KVec::with_capacity(capacity, GFP_KERNEL)?,
            capacity,
            umem: None,
        })
    }

    /// The pages of `umem`, which the list keeps pinned. With `persistent`
    /// every page must be persistent memory (`EINVAL` otherwise).
    #[inline]
    pub fn from_umem(umem: Umem, persistent: bool) -> Result<Self> {
        let mut list = Self::with_capacity(umem.num_pages())?;
        let pages = &mut list.pages;
        umem.for_each_page(|page| {
            // SAFETY: a page pinned by the umem.
            if persistent && !unsafe { bindings::rrxe_page_is_pmem(page.as_ptr()) } {
                return Err(EINVAL);
            }
            pages.push(PageInfo { page, offset: 0 }, GFP_KERNEL)?;
            Ok(())
        })?;
        // INVARIANT: the pages are pinned by the umem kept with them.
        list.umem = Some(umem);
        Ok(list)
    }

    /// The pinned user memory, for a user region.
    pub fn umem(&self) -> Option<&Umem> {
        self.umem.as_ref()
    }

    /// Pages in the list.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// Most pages the list holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Empties the list (a new `map_mr_sg`).
    pub fn clear(&mut self) {
        self.pages.clear();
    }

    /// Appends the CPU page `cpu_page` of the region page at `addr`
    /// (`rxe_set_page`): `ENOMEM` when the list is full, `EINVAL` if
    /// `persistent` and the page is not persistent memory.
    #[inline]
    pub fn push(&mut self, addr: &DmaAddr, cpu_page: u64, persistent: bool) -> Result {
        if self.pages.len() >= self.capacity {
            return Err(ENOMEM);
        }
        let a = addr.0.wrapping_add(cpu_page * PAGE_SIZE as u64);
        // SAFETY: `map_mr_sg` addresses are kernel virtual addresses of
        // memory the region's kernel user registers (module docs).
        let page = NonNull::new(unsafe { bindings::rrxe_virt_dma_to_page(a) }).ok_or(EFAULT)?;
        // SAFETY: as above.
        if persistent && !unsafe { bindings::rrxe_page_is_pmem(page.as_ptr()) } {
            return Err(EINVAL);
        }
        // INVARIANT: a page of registered kernel memory.
        self.pages.push(
            PageInfo {
                page,
                offset: (a as usize) & (PAGE_SIZE - 1),
            },
            GFP_ATOMIC,
        )?;
        Ok(())
    }

    /// Copies between the start of `buf` and entry `index` at `offset` from
    /// the start of the region page in it, up to the end of the CPU page;
    /// returns the bytes copied. `EFAULT` if there is no such entry.
    #[inline]
    pub fn copy(&self, index: usize, offset: usize, mut buf: CopyBuf<'_>) -> Result<usize> {
        let info = self.pages.get(index).ok_or(EFAULT)?;
        let offset = info.offset.checked_add(offset).ok_or(EFAULT)?;
        let n = buf.len().min(PAGE_SIZE.checked_sub(offset).ok_or(EFAULT)?);
        let part = buf.part(0, n).ok_or(EFAULT)?;
        // SAFETY: the page is valid while `self` lives (type invariant).
        unsafe { copy_page(info.page, offset, part) }.map_err(|_| EFAULT)?;
        Ok(n)
    }

    /// Writes the CPU caches of entry `index` back to persistent memory
    /// from `offset` (from the start of the region page in it) for at most
    /// `len` bytes, up to the end of the CPU page (`arch_wb_cache_pmem`);
    /// returns the bytes done. `EFAULT` if there is no such entry.
    #[inline]
    pub fn write_back(&self, index: usize, offset: usize, len: usize) -> Result<usize> {
        let info = self.pages.get(index).ok_or(EFAULT)?;
        let offset = info.offset.checked_add(offset).ok_or(EFAULT)?;
        let n = len.min(PAGE_SIZE.checked_sub(offset).ok_or(EFAULT)?);
        // SAFETY: the page is valid while `self` lives (type invariant);
        // the mapping is undone below.
        let va = unsafe { bindings::kmap_local_page(info.page.as_ptr()) };
        // SAFETY: `[offset, offset + n)` is inside the mapped page (`n` is
        // bounded by the page's end above); write-back only reads the
        // range's cache lines.
        unsafe { bindings::rrxe_wb_cache_pmem(va.cast::<u8>().add(offset).cast(), n) };
        // SAFETY: the mapping made above, ended once.
        unsafe { bindings::kunmap_local(va) };
        Ok(n)
    }

    /// Where entry `index` at `offset` from the start of the region page in
    /// it is in its CPU page: `EFAULT` if there is no such entry.
    pub fn page_offset(&self, index: usize, offset: usize) -> Result<usize> {
        let info = self.pages.get(index).ok_or(EFAULT)?;
        info.offset.checked_add(offset).ok_or(EFAULT)
    }

    /// Does `op` on the word at `offset` from the start of the region page
    /// in entry `index` (see [`WordOp`]): `EFAULT` if there is no such
    /// entry, `EINVAL` if the word is misaligned or not in the CPU page.
    #[inline]
    pub fn word_op(&self, index: usize, offset: usize, op: WordOp) -> Result<u64> {
        let info = self.pages.get(index).ok_or(EFAULT)?;
        let offset = info.offset.checked_add(offset).ok_or(EFAULT)?;
        // SAFETY: the page is valid while `self` lives (type invariant).
        unsafe { word_op(info.page, offset, op) }
    }
}

/// What `reg_user_mr` asks for.
#[derive(Clone, Copy, Debug)]
pub struct UserMrRequest {
    /// User address of the memory.
    pub start: u64,
    /// Bytes.
    pub length: u64,
    /// The address the region is accessed by (`hca_va`).
    pub iova: u64,
    /// `IB_ACCESS_*` flags.
    pub access: u32,
    /// Whether a DMA handle was given (not supported by rxe).
    pub has_dmah: bool,
}

/// The keys of a region, as the core shows them (`ib_mr.lkey/rkey`).
#[derive(Clone, Copy, Debug)]
pub struct MrKeys {
    /// Local key.
    pub lkey: u32,
    /// Remote key.
    pub rkey: u32,
}

/// A driver's memory regions.
pub trait MrDriver: IbDriver {
    /// The driver's state of a region.
    type Mr: Send + Sync + 'static;

    /// The keys of a new region.
    fn keys(mr: &Self::Mr) -> MrKeys;
    /// A DMA region of `pd` (`get_dma_mr`).
    fn get_dma_mr(
        dev: &Device<Self>,
        pd: PdId,
        access: u32,
        mem: KernelMemory,
    ) -> Result<Arc<Self::Mr>>;
    /// A user region of `pd` (`reg_user_mr`).
    fn reg_user_mr(dev: &Device<Self>, pd: PdId, req: &UserMrRequest) -> Result<Arc<Self::Mr>>;
    /// Changes a user region in place (`rereg_user_mr`): `flags` are
    /// `IB_MR_REREG_*`, `pd` the new PD when `IB_MR_REREG_PD` is set.
    fn rereg_user_mr(
        dev: &Device<Self>,
        mr: &Self::Mr,
        flags: u32,
        access: u32,
        pd: PdId,
    ) -> Result;
    /// A region of `pd` of type `mr_type` (`enum ib_mr_type`) for up to
    /// `max_num_sg` pages (`alloc_mr`).
    fn alloc_mr(
        dev: &Device<Self>,
        pd: PdId,
        mr_type: u32,
        max_num_sg: u32,
    ) -> Result<Arc<Self::Mr>>;
    /// `map_mr_sg` starts with pages of `page_size` bytes.
    fn map_mr_sg_start(mr: &Self::Mr, page_size: u32) -> Result;
    /// The next region page of a `map_mr_sg`.
    fn set_page(mr: &Self::Mr, addr: DmaAddr) -> Result;
    /// `map_mr_sg` mapped `length` bytes at `iova`.
    fn map_mr_sg_done(mr: &Self::Mr, iova: u64, length: u64);
    /// The region is being deregistered; an error keeps it. On success no
    /// user of the region's memory may remain when this returns.
    fn dereg_mr(dev: &Device<Self>, mr: &Self::Mr) -> Result;
}

/// Installs the memory region ops of driver `T`.
pub fn install<T: MrDriver>(ops: &mut bindings::ib_device_ops) {
    ops.get_dma_mr = Some(get_dma_mr_cb::<T>);
    ops.reg_user_mr = Some(reg_user_mr_cb::<T>);
    ops.rereg_user_mr = Some(rereg_user_mr_cb::<T>);
    ops.alloc_mr = Some(alloc_mr_cb::<T>);
    ops.map_mr_sg = Some(map_mr_sg_cb::<T>);
    ops.dereg_mr = Some(dereg_mr_cb::<T>);
}

/// Allocates a zeroed `ObjectBox<ib_mr>`, returns its `ib_mr`.
fn alloc_box() -> Result<*mut bindings::ib_mr> {
    let mut b = KBox::<ObjectBox<bindings::ib_mr>>::new_uninit(GFP_KERNEL)?;
    // SAFETY: all zeroes is a valid `ObjectBox<ib_mr>`: the `ib_mr`
    // (integers, pointers, a list head and a restrack entry the core
    // initialises) and a NULL driver pointer (nothing attached).
    let b = unsafe {
        b.as_mut_ptr().write_bytes(0, 1);
        b.assume_init()
    };
    Ok(KBox::into_raw(b).cast())
}

/// Frees a box from [`alloc_box`].
///
/// # Safety
///
/// `raw` is from [`alloc_box`], nothing is attached, and nothing uses it
/// any more.
unsafe fn free_box(raw: *mut bindings::ib_mr) {
    // SAFETY: the caller's promise; `ib_mr` is at offset 0 of the box.
    drop(unsafe { KBox::from_raw(raw.cast::<ObjectBox<bindings::ib_mr>>()) });
}

/// Makes the `ib_mr` of a new region of `pd`, or an error pointer.
///
/// # Safety
///
/// `pd` is a valid PD of a live device of driver `T`.
unsafe fn new_mr<T: MrDriver>(
    pd: *mut bindings::ib_pd,
    mr_type: Option<u32>,
    create: impl FnOnce(&Device<T>, PdId) -> Result<Arc<T::Mr>>,
) -> *mut bindings::ib_mr {
    // SAFETY: the caller's promise.
    let ibdev = unsafe { (*pd).device };
    // SAFETY: as above.
    let dev = unsafe { Device::<T>::from_raw(ibdev) };
    let raw = match alloc_box() {
        Ok(raw) => raw,
        Err(e) => return e.to_ptr(),
    };
    match create(dev, PdId::of(pd)) {
        Ok(state) => {
            let keys = T::keys(&state);
            // SAFETY: `raw` is a fresh box only this op sees.
            unsafe {
                let mr = &mut *raw;
                mr.device = ibdev;
                mr.pd = pd;
                mr.lkey = keys.lkey;
                mr.rkey = keys.rkey;
                mr.page_size = PAGE_SIZE as ffi::c_uint;
                if let Some(t) = mr_type {
                    mr.type_ = t;
                }
                ObjectBox::attach(raw, state);
            }
            raw
        }
        Err(e) => {
            // SAFETY: nothing was attached or published.
            unsafe { free_box(raw) };
            e.to_ptr()
        }
    }
}

/// # Safety
///
/// Called by the core with a valid PD of a live device of driver `T`.
unsafe extern "C" fn get_dma_mr_cb<T: MrDriver>(
    pd: *mut bindings::ib_pd,
    access: ffi::c_int,
) -> *mut bindings::ib_mr {
    // SAFETY: see the function's safety section.
    unsafe {
        new_mr::<T>(pd, Some(bindings::ib_mr_type_IB_MR_TYPE_DMA), |dev, pd| {
            T::get_dma_mr(dev, pd, access as u32, KernelMemory(()))
        })
    }
}

/// # Safety
///
/// Called by the core with a valid PD of a live device of driver `T`.
unsafe extern "C" fn reg_user_mr_cb<T: MrDriver>(
    pd: *mut bindings::ib_pd,
    start: u64,
    length: u64,
    iova: u64,
    access: ffi::c_int,
    dmah: *mut bindings::ib_dmah,
    _udata: *mut bindings::ib_udata,
) -> *mut bindings::ib_mr {
    let req = UserMrRequest {
        start,
        length,
        iova,
        access: access as u32,
        has_dmah: !dmah.is_null(),
    };
    // SAFETY: see the function's safety section.
    unsafe {
        new_mr::<T>(pd, Some(bindings::ib_mr_type_IB_MR_TYPE_USER), |dev, pd| {
            T::reg_user_mr(dev, pd, &req)
        })
    }
}

/// # Safety
///
/// Called by the core with a valid PD of a live device of driver `T`.
unsafe extern "C" fn alloc_mr_cb<T: MrDriver>(
    pd: *mut bindings::ib_pd,
    mr_type: bindings::ib_mr_type,
    max_num_sg: u32,
) -> *mut bindings::ib_mr {
    // SAFETY: see the function's safety section.
    unsafe {
        new_mr::<T>(pd, None, |dev, pd| {
            T::alloc_mr(dev, pd, mr_type, max_num_sg)
        })
    }
}

/// # Safety
///
/// Called by the core with a live region of driver `T` and a valid PD.
unsafe extern "C" fn rereg_user_mr_cb<T: MrDriver>(
    ibmr: *mut bindings::ib_mr,
    flags: ffi::c_int,
    _start: u64,
    _length: u64,
    _iova: u64,
    access: ffi::c_int,
    pd: *mut bindings::ib_pd,
    _udata: *mut bindings::ib_udata,
) -> *mut bindings::ib_mr {
    // SAFETY: see the function's safety section; the region stays attached
    // for the op.
    let (dev, mr) = unsafe {
        (
            Device::<T>::from_raw((*ibmr).device),
            ObjectBox::<bindings::ib_mr>::borrow::<T::Mr>(ibmr),
        )
    };
    match T::rereg_user_mr(dev, &mr, flags as u32, access as u32, PdId::of(pd)) {
        // NULL: changed in place, the core keeps the same `ib_mr`.
        Ok(()) => core::ptr::null_mut(),
        Err(e) => e.to_ptr(),
    }
}

/// # Safety
///
/// Called by `ib_sg_to_pages` from `map_mr_sg_cb::<T>` with its region.
unsafe extern "C" fn set_page_cb<T: MrDriver>(ibmr: *mut bindings::ib_mr, addr: u64) -> ffi::c_int {
    // SAFETY: see the function's safety section.
    let mr = unsafe { ObjectBox::<bindings::ib_mr>::borrow::<T::Mr>(ibmr) };
    super::op_result(T::set_page(&mr, DmaAddr(addr)))
}

/// # Safety
///
/// Called by the core with a live region of driver `T` and a valid
/// scatterlist of `sg_nents` entries.
unsafe extern "C" fn map_mr_sg_cb<T: MrDriver>(
    ibmr: *mut bindings::ib_mr,
    sg: *mut bindings::scatterlist,
    sg_nents: ffi::c_int,
    sg_offset: *mut ffi::c_uint,
) -> ffi::c_int {
    // SAFETY: see the function's safety section; `ib_map_mr_sg` set the
    // page size before calling.
    let (mr, page_size) = unsafe {
        (
            ObjectBox::<bindings::ib_mr>::borrow::<T::Mr>(ibmr),
            (*ibmr).page_size,
        )
    };
    if let Err(e) = T::map_mr_sg_start(&mr, page_size) {
        return e.to_errno();
    }
    // SAFETY: the arguments are the core's; `set_page_cb::<T>` gets this
    // region back.
    let n =
        unsafe { bindings::ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, Some(set_page_cb::<T>)) };
    // SAFETY: `ib_sg_to_pages` set the mapped range in the region.
    let (iova, length) = unsafe { ((*ibmr).iova, (*ibmr).length) };
    T::map_mr_sg_done(&mr, iova, length);
    n
}

/// # Safety
///
/// Called by the core with a live region of driver `T`, allocated by
/// `new_mr`.
unsafe extern "C" fn dereg_mr_cb<T: MrDriver>(
    ibmr: *mut bindings::ib_mr,
    _udata: *mut bindings::ib_udata,
) -> ffi::c_int {
    // SAFETY: see the function's safety section.
    let (dev, mr) = unsafe {
        (
            Device::<T>::from_raw((*ibmr).device),
            ObjectBox::<bindings::ib_mr>::borrow::<T::Mr>(ibmr),
        )
    };
    if let Err(e) = T::dereg_mr(dev, &mr) {
        return e.to_errno();
    }
    // SAFETY: the region is being destroyed and the driver let it go; the
    // core does not touch the `ib_mr` once this returns 0.
    unsafe {
        drop(ObjectBox::<bindings::ib_mr>::detach::<T::Mr>(ibmr));
        free_box(ibmr);
    }
    0
}
