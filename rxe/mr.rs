// SPDX-License-Identifier: GPL-2.0

//! The memory regions of an rxe device (`rxe_mr.c`, the MR verbs of
//! `rxe_verbs.c`).
//!
//! A region is found by the index in its keys (the device's MR pool). Its
//! mutable state (keys, access, range, pages) is behind one lock that the
//! transport also takes to copy data, so that deregistration, which takes
//! the pages away under the same lock, waits for a copy in progress and
//! then unpins the memory in process context. A reference to a region that
//! outlives its deregistration finds it invalid.
//!
//! On-demand paging is not implemented: `IB_ACCESS_ON_DEMAND` is refused
//! with `EOPNOTSUPP`, the C driver's answer without ODP support.

use crate::{
    access::{
        self,
        RemoteError, //
    },
    device::{
        Rxe,
        RxeDev, //
    },
    keys::{
        self,
        MrKind,
        PageGeometry, //
    },
    params,
    rdma::{
        bindings,
        ib_device::Device,
        mr::{
            random_key_byte,
            CopyBuf,
            DmaAddr,
            KernelMemory,
            MrDriver,
            MrKeys,
            MrPages,
            PdId,
            UserMrRequest,
            WordOp, //
        },
        pool::{
            Pool,
            PoolLimits, //
        },
        umem::Umem,
    },
};
use core::sync::atomic::{
    AtomicU32,
    Ordering, //
};
use kernel::{
    new_spinlock_irq,
    page::PAGE_SHIFT,
    prelude::*,
    sync::{
        Arc,
        SpinLockIrq, //
    },
};

/// `enum rxe_mr_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MrState {
    /// Deregistered, or not usable yet.
    Invalid,
    /// A fast-registration region waiting for a REG_MR.
    Free,
    /// Usable.
    Valid,
}

/// Which key a lookup matches (`enum rxe_mr_lookup_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// The lkey of a local work request.
    Local,
    /// The rkey of a remote request.
    Remote,
}

/// The memory a region maps.
enum Memory {
    /// Nothing (deregistered).
    None,
    /// All kernel memory (DMA region).
    Kernel(KernelMemory),
    /// Pinned user pages or fast-registered pages.
    Pages(MrPages),
}

struct Inner {
    pd: PdId,
    lkey: u32,
    rkey: u32,
    access: u32,
    state: MrState,
    iova: u64,
    length: u64,
    page_shift: u32,
    mem: Memory,
}

/// A memory region.
#[pin_data]
pub(crate) struct Mr {
    kind: MrKind,
    index: u32,
    /// The page list length a fast-registration region was allocated with
    /// (`max_num_sg`), in pages of any size.
    num_buf: usize,
    /// Memory windows bound to the region.
    pub(crate) num_mw: AtomicU32,
    #[pin]
    inner: SpinLockIrq<Inner>,
}

impl Mr {
    fn new(kind: MrKind, index: u32, num_buf: usize, inner: Inner) -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                kind,
                index,
                num_buf,
                num_mw: AtomicU32::new(0),
                inner <- new_spinlock_irq!(inner, "rxe_mr"),
            }),
            GFP_KERNEL,
        )
    }

    /// Its lkey and rkey.
    pub(crate) fn keys(&self) -> (u32, u32) {
        let g = self.inner.lock();
        (g.lkey, g.rkey)
    }
}

impl Mr {
    /// The region's PD.
    pub(crate) fn pd(&self) -> PdId {
        self.inner.lock().pd
    }

    /// The region's access flags.
    pub(crate) fn access(&self) -> u32 {
        self.inner.lock().access
    }

    /// The region's state.
    pub(crate) fn state(&self) -> MrState {
        self.inner.lock().state
    }

    /// The mapped range `(iova, length)`.
    pub(crate) fn range(&self) -> (u64, u64) {
        let g = self.inner.lock();
        (g.iova, g.length)
    }

    /// `EINVAL` unless `[iova, iova + length)` is in the region
    /// (`mr_check_range`).
    pub(crate) fn check_range(&self, iova: u64, length: u64) -> Result {
        let g = self.inner.lock();
        check_range(self.kind, &g, iova, length)
    }

    /// Copies between `buf` and the region at `iova` (`rxe_mr_copy`):
    /// `EINVAL` out of range, `EFAULT` where no page is mapped.
    pub(crate) fn copy(&self, iova: u64, buf: CopyBuf<'_>) -> Result {
        if buf.is_empty() {
            return Ok(());
        }
        let g = self.inner.lock();
        self.copy_locked(&g, iova, buf)
    }

    /// [`Mr::copy`] if the region is valid with remote key `rkey`
    /// (`rxe_recheck_mr`'s checks), in one hold of its lock; `EFAULT` if
    /// it is not.
    pub(crate) fn copy_with_rkey(&self, rkey: u32, iova: u64, buf: CopyBuf<'_>) -> Result {
        if buf.is_empty() {
            return Ok(());
        }
        let g = self.inner.lock();
        if g.rkey != rkey || g.state != MrState::Valid {
            return Err(EFAULT);
        }
        self.copy_locked(&g, iova, buf)
    }

    /// [`Mr::copy`] with the region's lock held (`g`).
    fn copy_locked(&self, g: &Inner, iova: u64, mut buf: CopyBuf<'_>) -> Result {
        match &g.mem {
            Memory::Kernel(k) => k.copy(iova, buf),
            Memory::None => Err(EFAULT),
            Memory::Pages(pages) => {
                check_range(self.kind, g, iova, buf.len() as u64)?;
                let geo = PageGeometry {
                    page_shift: g.page_shift,
                    cpu_page_shift: PAGE_SHIFT as u32,
                    iova: g.iova,
                };
                let mut iova = iova;
                let mut done = 0;
                let len = buf.len();
                while done < len {
                    let index = usize::try_from(geo.index(iova)).map_err(|_| EFAULT)?;
                    let offset = geo.offset(iova) as usize;
                    let part = buf.part(done, len).ok_or(EFAULT)?;
                    let n = pages.copy(index, offset, part)?;
                    if n == 0 {
                        return Err(EFAULT);
                    }
                    done += n;
                    iova += n as u64;
                }
                Ok(())
            }
        }
    }

    /// Writes the CPU caches of `[iova, iova + length)` back to
    /// persistent memory (`rxe_flush_pmem_iova`, for a FLUSH to the
    /// persistence domain): `EFAULT` for a DMA region or where no page is
    /// mapped, `EINVAL` out of range.
    pub(crate) fn flush_pmem(&self, iova: u64, length: u64) -> Result {
        if length == 0 {
            return Ok(());
        }
        let g = self.inner.lock();
        let Memory::Pages(pages) = &g.mem else {
            return Err(EFAULT);
        };
        check_range(self.kind, &g, iova, length)?;
        let geo = PageGeometry {
            page_shift: g.page_shift,
            cpu_page_shift: PAGE_SHIFT as u32,
            iova: g.iova,
        };
        let (mut iova, mut left) = (iova, length);
        while left > 0 {
            let index = usize::try_from(geo.index(iova)).map_err(|_| EFAULT)?;
            let offset = geo.offset(iova) as usize;
            let len = usize::try_from(left).unwrap_or(usize::MAX);
            let n = pages.write_back(index, offset, len)?;
            if n == 0 {
                return Err(EFAULT);
            }
            left -= n as u64;
            iova += n as u64;
        }
        Ok(())
    }

    /// Does `op` on the 64-bit word at `iova` (`rxe_mr_do_atomic_op`,
    /// `rxe_mr_do_atomic_write`) and returns the word's value before (0
    /// for a store). [`RemoteError::RkeyViolation`] if the region is not
    /// valid, the word not in its range or not mapped;
    /// [`RemoteError::Misaligned`] if not 8-byte aligned. Atomic with
    /// respect to the other atomics on the word (see [`WordOp`]), and to
    /// deregistration, which waits for the region's lock.
    pub(crate) fn word_op(&self, iova: u64, op: WordOp) -> Result<u64, RemoteError> {
        let g = self.inner.lock();
        if g.state != MrState::Valid {
            return Err(RemoteError::RkeyViolation);
        }
        match &g.mem {
            Memory::None => Err(RemoteError::RkeyViolation),
            Memory::Kernel(k) => {
                if !access::atomic_aligned(iova) {
                    return Err(RemoteError::Misaligned);
                }
                k.word_op(iova, op).map_err(|_| RemoteError::RkeyViolation)
            }
            Memory::Pages(pages) => {
                check_range(self.kind, &g, iova, 8).map_err(|_| RemoteError::RkeyViolation)?;
                let geo = PageGeometry {
                    page_shift: g.page_shift,
                    cpu_page_shift: PAGE_SHIFT as u32,
                    iova: g.iova,
                };
                let index =
                    usize::try_from(geo.index(iova)).map_err(|_| RemoteError::RkeyViolation)?;
                let offset = geo.offset(iova) as usize;
                let in_page = pages
                    .page_offset(index, offset)
                    .map_err(|_| RemoteError::RkeyViolation)?;
                if !access::atomic_aligned(in_page as u64) {
                    return Err(RemoteError::Misaligned);
                }
                pages
                    .word_op(index, offset, op)
                    .map_err(|_| RemoteError::RkeyViolation)
            }
        }
    }

    /// Executes a REG_MR work request of a QP of `qp_pd` for this region
    /// (`rxe_reg_fast_mr`): the new `key` (same index), `access` and the
    /// `iova` its user set. `EINVAL` as the C driver.
    pub(crate) fn reg_fast(&self, qp_pd: PdId, key: u32, access: u32, iova: u64) -> Result {
        let mut g = self.inner.lock();
        if g.state != MrState::Free || g.pd != qp_pd {
            return Err(EINVAL);
        }
        if keys::key_index(g.lkey) != keys::key_index(key) {
            return Err(EINVAL);
        }
        g.access = access;
        g.lkey = key;
        g.rkey = key;
        g.iova = iova;
        g.state = MrState::Valid;
        Ok(())
    }
}

fn check_range(kind: MrKind, g: &Inner, iova: u64, length: u64) -> Result {
    if keys::range_ok(kind, g.iova, g.length, iova, length) {
        Ok(())
    } else {
        Err(EINVAL)
    }
}

/// The device's memory regions.
#[pin_data]
pub(crate) struct Mrs {
    #[pin]
    pool: Pool<Mr>,
}

impl Mrs {
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            pool <- Pool::new(PoolLimits {
                min_index: params::MIN_MR_INDEX,
                max_index: params::MAX_MR_INDEX,
                max_elem: params::MAX_MR,
            }),
        })
    }
}

/// Whether the region whose state `g` is has `key` as its `kind` key, is
/// of `pd`, allows `access` and is valid (`lookup_mr`'s checks).
fn key_ok(g: &Inner, pd: PdId, access: u32, key: u32, kind: Lookup) -> bool {
    let k = match kind {
        Lookup::Local => g.lkey,
        Lookup::Remote => g.rkey,
    };
    k == key && g.pd == pd && keys::access_allows(g.access, access) && g.state == MrState::Valid
}

/// [`Mr::copy_locked`] once the key checks passed, nothing for no bytes.
fn copy_checked(mr: &Mr, g: &Inner, iova: u64, buf: CopyBuf<'_>) -> Result {
    if buf.is_empty() {
        return Ok(());
    }
    mr.copy_locked(g, iova, buf)
}

/// The region the last local copy of a task's call used ([`Mrs::copy_local`]),
/// for the next: the packets of a work request copy from or to the same
/// few regions, so a hit saves the pool lookup (the C driver looks up per
/// packet, under RCU). Held for one call of a task, not longer: a
/// deregistered region is not kept alive by an idle QP.
#[derive(Default)]
pub(crate) struct MrCache(Option<Arc<Mr>>);

impl MrCache {
    /// Keeps `mr` for the calls that follow (a READ's region between its
    /// responses).
    pub(crate) fn keep(&mut self, mr: Arc<Mr>) {
        self.0 = Some(mr);
    }

    /// The kept region if it has pool index `index` (its key and state
    /// not checked).
    pub(crate) fn region(&self, index: u32) -> Option<Arc<Mr>> {
        self.0.as_ref().filter(|mr| mr.index == index).cloned()
    }
}

impl Mrs {
    /// The valid region of `pd` with `key` allowing `access` (`lookup_mr`).
    pub(crate) fn lookup(&self, pd: PdId, access: u32, key: u32, kind: Lookup) -> Option<Arc<Mr>> {
        let mr = self.pool.get(keys::key_index(key))?;
        let ok = key_ok(&mr.inner.lock(), pd, access, key, kind);
        ok.then_some(mr)
    }

    /// [`Mrs::lookup`] of local key `key`, then [`Mr::copy`] of `buf` at
    /// `iova` on the region found, in one hold of the region's irq-safe
    /// lock (the data path's copy of a scatter/gather entry's part); `None`
    /// if the lookup finds no such region.
    ///
    /// The region found is kept in `cache` for the next call: a region
    /// there with the key's index is tried first, with the same checks
    /// under its lock, and the pool is searched only if they fail (a
    /// region deregistered meanwhile, another with the same index).
    pub(crate) fn copy_local(
        &self,
        cache: &mut MrCache,
        pd: PdId,
        access: u32,
        key: u32,
        iova: u64,
        buf: CopyBuf<'_>,
    ) -> Option<Result> {
        let index = keys::key_index(key);
        if let Some(mr) = cache.0.as_ref().filter(|mr| mr.index == index) {
            let g = mr.inner.lock();
            if key_ok(&g, pd, access, key, Lookup::Local) {
                return Some(copy_checked(mr, &g, iova, buf));
            }
        }
        let mr = self.pool.get(index)?;
        let r = {
            let g = mr.inner.lock();
            if !key_ok(&g, pd, access, key, Lookup::Local) {
                return None;
            }
            copy_checked(&mr, &g, iova, buf)
        };
        cache.0 = Some(mr);
        Some(r)
    }

    /// The region with `index`, whatever its state.
    pub(crate) fn get(&self, index: u32) -> Option<Arc<Mr>> {
        self.pool.get(index)
    }

    /// Invalidates the fast-registration region of `key`
    /// (`rxe_invalidate_mr`): `EINVAL` as the C driver.
    pub(crate) fn invalidate(&self, key: u32) -> Result {
        let mr = self.pool.get(keys::key_index(key)).ok_or(EINVAL)?;
        let mut g = mr.inner.lock();
        let remote = g.access & keys::ACCESS_REMOTE != 0;
        if key != if remote { g.rkey } else { g.lkey } {
            return Err(EINVAL);
        }
        if mr.num_mw.load(Ordering::Relaxed) > 0 || mr.kind != MrKind::Fast {
            return Err(EINVAL);
        }
        g.state = MrState::Free;
        Ok(())
    }
}

impl Mrs {
    /// A region in a new pool slot, its keys from the slot.
    fn create(
        &self,
        kind: MrKind,
        pd: PdId,
        access: u32,
        state: MrState,
        num_buf: usize,
        mem: impl FnOnce() -> Result<(Memory, u64, u64)>,
    ) -> Result<Arc<Mr>> {
        let slot = self.pool.reserve()?;
        let (mem, iova, length) = mem()?;
        let key = keys::make_key(slot.index(), random_key_byte());
        let mr = Mr::new(
            kind,
            slot.index(),
            num_buf,
            Inner {
                pd,
                lkey: key,
                rkey: key,
                access,
                state,
                iova,
                length,
                page_shift: PAGE_SHIFT as u32,
                mem,
            },
        )?;
        slot.publish(mr.clone());
        Ok(mr)
    }
}

fn mrs(dev: &Device<Rxe>) -> &Mrs {
    let rxe: &RxeDev = dev.data().get_ref();
    &rxe.mrs
}

impl MrDriver for Rxe {
    type Mr = Mr;

    fn keys(mr: &Mr) -> MrKeys {
        let (lkey, rkey) = mr.keys();
        MrKeys { lkey, rkey }
    }

    fn get_dma_mr(dev: &Device<Self>, pd: PdId, access: u32, mem: KernelMemory) -> Result<Arc<Mr>> {
        mrs(dev).create(MrKind::Dma, pd, access, MrState::Valid, 0, || {
            Ok((Memory::Kernel(mem), 0, 0))
        })
    }

    fn reg_user_mr(dev: &Device<Self>, pd: PdId, req: &UserMrRequest) -> Result<Arc<Mr>> {
        if req.has_dmah || !keys::mr_access_supported(req.access) {
            return Err(EOPNOTSUPP);
        }
        mrs(dev).create(MrKind::User, pd, req.access, MrState::Valid, 0, || {
            if req.access & keys::ACCESS_ON_DEMAND != 0 {
                return Err(EOPNOTSUPP);
            }
            let umem = Umem::pin(dev, req.start, req.length, req.access)?;
            let persistent = req.access & keys::ACCESS_FLUSH_PERSISTENT != 0;
            let pages = MrPages::from_umem(umem, persistent)?;
            // The core sets the region's iova to `hca_va` after this op.
            Ok((Memory::Pages(pages), req.iova, req.length))
        })
    }

    fn rereg_user_mr(_dev: &Device<Self>, mr: &Mr, flags: u32, access: u32, pd: PdId) -> Result {
        if flags & !keys::REREG_SUPPORTED != 0 {
            return Err(EOPNOTSUPP);
        }
        let mut g = mr.inner.lock();
        if let Memory::Pages(p) = &g.mem {
            if let Some(umem) = p.umem() {
                umem.check_rereg(flags, access)?;
            }
        }
        if flags & keys::REREG_ACCESS != 0 && !keys::mr_access_supported(access) {
            return Err(EOPNOTSUPP);
        }
        if flags & keys::REREG_PD != 0 {
            g.pd = pd;
        }
        if flags & keys::REREG_ACCESS != 0 {
            g.access = access;
        }
        Ok(())
    }

    fn alloc_mr(dev: &Device<Self>, pd: PdId, mr_type: u32, max_num_sg: u32) -> Result<Arc<Mr>> {
        if mr_type != bindings::ib_mr_type_IB_MR_TYPE_MEM_REG {
            return Err(EINVAL);
        }
        // Fast-registration regions always allow remote access; the REG_MR
        // work request sets the access its user wants.
        let num_buf = max_num_sg as usize;
        mrs(dev).create(
            MrKind::Fast,
            pd,
            keys::ACCESS_REMOTE,
            MrState::Free,
            num_buf,
            || {
                let pages = MrPages::with_capacity(num_buf)?;
                Ok((Memory::Pages(pages), 0, 0))
            },
        )
    }

    fn map_mr_sg_start(mr: &Mr, page_size: u32) -> Result {
        if page_size == 0 {
            return Err(EINVAL);
        }
        let geo = PageGeometry {
            page_shift: page_size.ilog2(),
            cpu_page_shift: PAGE_SHIFT as u32,
            iova: 0,
        };
        if !geo.compatible() {
            return Err(EINVAL);
        }
        if mr.kind != MrKind::Fast {
            return Err(EINVAL);
        }
        let capacity = match &mr.inner.lock().mem {
            Memory::Pages(p) => p.capacity(),
            _ => return Err(EINVAL),
        };
        // Large pages are split into CPU pages: the list may have to grow
        // (the C driver reallocates it the same way).
        let needed = (geo.cpu_pages_per_page() as usize).saturating_mul(mr.num_buf);
        let bigger = if geo.cpu_pages_per_page() > 1 && needed > capacity {
            Some(MrPages::with_capacity(needed).map_err(|_| ENOMEM)?)
        } else {
            None
        };
        let mut g = mr.inner.lock();
        if let Memory::Pages(p) = &mut g.mem {
            match bigger {
                Some(b) => *p = b,
                None => p.clear(),
            }
        }
        g.page_shift = geo.page_shift;
        Ok(())
    }

    fn set_page(mr: &Mr, addr: DmaAddr) -> Result {
        let mut g = mr.inner.lock();
        let per_page = if g.page_shift > PAGE_SHIFT as u32 {
            1u64 << (g.page_shift - PAGE_SHIFT as u32)
        } else {
            1
        };
        let persistent = g.access & keys::ACCESS_FLUSH_PERSISTENT != 0;
        match &mut g.mem {
            Memory::Pages(p) => {
                for i in 0..per_page {
                    p.push(&addr, i, persistent)?;
                }
                Ok(())
            }
            _ => Err(EINVAL),
        }
    }

    fn map_mr_sg_done(mr: &Mr, iova: u64, length: u64) {
        let mut g = mr.inner.lock();
        g.iova = iova;
        g.length = length;
    }

    fn dereg_mr(dev: &Device<Self>, mr: &Mr) -> Result {
        // IBA 10.6.7.2.6: not while memory windows are bound to it.
        if mr.num_mw.load(Ordering::Relaxed) > 0 {
            return Err(EINVAL);
        }
        drop(mrs(dev).pool.remove(mr.index));
        // Taking the memory waits for a copy in progress; later users find
        // the region invalid.
        let mem = {
            let mut g = mr.inner.lock();
            g.state = MrState::Invalid;
            core::mem::replace(&mut g.mem, Memory::None)
        };
        // Unpins user memory here, in process context.
        drop(mem);
        Ok(())
    }
}
