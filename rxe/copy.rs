// SPDX-License-Identifier: GPL-2.0

//! The transport's access to memory (`copy_data`, `check_rkey`,
//! `rxe_recheck_mr`, `rxe_do_local_ops` of the C driver): copying a
//! message to or from the entries of a WQE by lkey, reaching remote
//! memory by rkey, and the local operations a send queue executes.
//!
//! - The requester gathers a payload with [`copy_data`] (access 0,
//!   [`CopyBuf::FromMr`]) or [`DmaInfo::take_inline`] for
//!   `IB_SEND_INLINE`; the responder scatters a SEND into its receive WQE
//!   with [`copy_data`] (`ACCESS_LOCAL_WRITE`, [`CopyBuf::ToMr`]), and so
//!   does the completer with RDMA READ responses and atomic acknowledgements.
//! - The responder resolves the rkey of a RETH or AtomicETH with
//!   [`lookup_rkey`], checks the range with [`RemoteMr::check_range`], then
//!   copies with [`RemoteMr::copy`] or does the atomic of
//!   [`crate::atomic`]. Later packets of an RDMA READ find the region
//!   again with [`recheck_rkey`].
//! - The requester executes LOCAL_INV, REG_MR and BIND_MW with
//!   [`local_inv`], [`reg_mr`] and [`bind_mw`].
//!
//! A region's lock is held only for one copy into or out of it (see
//! `mr.rs`), never across regions.

use crate::{
    access::{
        self,
        LocalOp,
        RemoteError, //
    },
    device::RxeDev,
    dma::{
        self,
        wc_status,
        CopyError,
        DmaInfo, //
    },
    keys,
    mr::{
        Lookup,
        Mr,
        MrCache, //
    },
    mw::BindRequest,
    rdma::mr::{
        CopyBuf,
        PdId, //
    },
};
use kernel::{
    prelude::*,
    sync::{
        barrier::{
            mb,
            Write, //
        },
        Arc, //
    },
};

/// What a region's copy error means to `copy_data`: `EFAULT` stays, any
/// other (out of range) is `EINVAL`.
fn from_mr_error(e: Error) -> CopyError {
    if e == EFAULT {
        CopyError::Fault
    } else {
        CopyError::Inval
    }
}

/// Copies `buf` to (`ToMr`) or fills it from (`FromMr`) the next
/// `buf.len()` bytes of a WQE's entries (`copy_data`), and moves its
/// cursor `dma` past them. `list` is the WQE's bytes after its DMA state
/// (the entries; at most the element's room). Each entry's lkey must name
/// a valid region of `pd` granting `access` (`ACCESS_LOCAL_WRITE` to
/// scatter, 0 to gather).
///
/// Errors as the C driver (the cursor is unchanged on an error):
/// [`CopyError::Inval`] (`EINVAL`) for more bytes than `resid`, an lkey
/// that names no such region, or a range outside it;
/// [`CopyError::NoSpc`] (`ENOSPC`) when the entries end first;
/// [`CopyError::Fault`] (`EFAULT`) for an unmapped page. The requester
/// completes with [`CopyError::send_status`], the responder's receive
/// with `RESPST_ERR_LENGTH` if [`CopyError::is_length`] else
/// `RESPST_ERR_MALFORMED_WQE`, the completer with `IB_WC_LOC_PROT_ERR`.
pub(crate) fn copy_data(
    rxe: &RxeDev,
    mrs: &mut MrCache,
    pd: PdId,
    access: u32,
    dma: &mut DmaInfo,
    list: &[u8],
    mut buf: CopyBuf<'_>,
) -> Result<(), CopyError> {
    let len = buf.len();
    dma::walk(dma, list, len, |c| {
        let part = buf
            .part(c.buf_start, c.buf_start + c.len)
            .ok_or(CopyError::Inval)?;
        // The lookup and the copy in one hold of the region's lock.
        rxe.mrs
            .copy_local(mrs, pd, access, c.sge.lkey, c.iova, part)
            .ok_or(CopyError::Inval)?
            .map_err(from_mr_error)
    })
}

/// The memory an rkey names for a remote request (`qp->resp.mr`): a
/// region, reached directly or through a memory window.
pub(crate) struct RemoteMr {
    mr: Arc<Mr>,
    /// The remote key a region found again by [`recheck_rkey`] must still
    /// have, valid, at each copy: checked there, in the copy's hold of the
    /// region's lock.
    rkey: Option<u32>,
}

impl RemoteMr {
    /// The region.
    pub(crate) fn mr(&self) -> &Arc<Mr> {
        &self.mr
    }

    /// The region, the window (if any) left.
    pub(crate) fn into_mr(self) -> Arc<Mr> {
        self.mr
    }

    /// [`RemoteError::RkeyViolation`] unless `length` bytes at `iova`
    /// are in the region (`check_rkey`'s `mr_check_range`; as in the C
    /// driver, a window's own bounds are not checked, only its region's).
    pub(crate) fn check_range(&self, iova: u64, length: u64) -> Result<(), RemoteError> {
        self.mr
            .check_range(iova, length)
            .map_err(|_| RemoteError::RkeyViolation)
    }

    /// Copies between `buf` and the region at `iova` (`write_data_in`,
    /// `read_reply`): [`RemoteError::RkeyViolation`] on any failure (out
    /// of range, unmapped, deregistered meanwhile).
    pub(crate) fn copy(&self, iova: u64, buf: CopyBuf<'_>) -> Result<(), RemoteError> {
        match self.rkey {
            Some(rkey) => self.mr.copy_with_rkey(rkey, iova, buf),
            None => self.mr.copy(iova, buf),
        }
        .map_err(|_| RemoteError::RkeyViolation)
    }
}

/// The level of a FLUSH (`enum ib_flush_level`, the FETH's selectivity).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FlushLevel {
    /// `IB_FLUSH_RANGE`: the request's range.
    Range,
    /// `IB_FLUSH_MR`: the whole region (its range is not checked).
    Mr,
}

impl RemoteMr {
    /// Makes the data of a FLUSH visible or persistent (`process_flush`):
    /// `placement` is the FETH's placement type (`IB_FLUSH_GLOBAL`,
    /// `IB_FLUSH_PERSISTENT` of [`crate::access`]); `iova` and `length`
    /// the request's (for [`FlushLevel::Range`]). Persistence writes the CPU
    /// caches back then orders with a write barrier; global visibility is
    /// the barrier alone. [`RemoteError::RkeyViolation`] if the write-back
    /// fails (a DMA region, out of range, unmapped).
    pub(crate) fn flush(
        &self,
        level: FlushLevel,
        placement: u32,
        iova: u64,
        length: u64,
    ) -> Result<(), RemoteError> {
        let (start, length) = match level {
            FlushLevel::Range => (iova, length),
            FlushLevel::Mr => self.mr.range(),
        };
        if placement & access::FLUSH_PERSISTENT != 0 {
            self.mr
                .flush_pmem(start, length)
                .map_err(|_| RemoteError::RkeyViolation)?;
            mb(Write);
        } else if placement & access::FLUSH_GLOBAL != 0 {
            mb(Write);
        }
        Ok(())
    }
}

/// Resolves the rkey of a remote request to QP `qpn` of PD `pd`
/// (`check_rkey`): a memory window (`rxe_lookup_mw`: same PD, a type 2
/// window bound through this QP, non-empty, granting `access`, valid)
/// with its region, or a region (`lookup_mr` by rkey: same PD, granting
/// `access`, valid). `access` is what the request needs
/// ([`crate::access::RemoteOp::access`]). With the memory, what the
/// request's address is offset by (a zero-based window's address, else 0;
/// `qp->resp.offset`): the region is accessed at `iova = va + offset`, the
/// address every method of [`RemoteMr`] takes. `None` is
/// `RESPST_ERR_RKEY_VIOLATION` (with the access error event unless the
/// request carries immediate data, `get_rkey_violation_state`). The caller
/// checks the range next, with [`RemoteMr::check_range`].
///
/// A zero-length RDMA READ or WRITE does not resolve its rkey (C9-88).
pub(crate) fn lookup_rkey(
    rxe: &RxeDev,
    pd: PdId,
    qpn: u32,
    access: u32,
    rkey: u32,
) -> Option<(RemoteMr, u64)> {
    if keys::rkey_is_mw(rkey) {
        let mw = rxe.mws.lookup(pd, qpn, access, rkey)?;
        let b = mw.binding.lock();
        let mr = b.mr.clone()?;
        let offset = if b.access & keys::ZERO_BASED != 0 {
            b.addr
        } else {
            0
        };
        Some((RemoteMr { mr, rkey: None }, offset))
    } else {
        let mr = rxe.mrs.lookup(pd, access, rkey, Lookup::Remote)?;
        Some((RemoteMr { mr, rkey: None }, 0))
    }
}

/// Finds the region of an rkey again for a later packet of an RDMA READ
/// response or its replay (`rxe_recheck_mr`): the window or region must
/// still have that rkey and be valid; the access and range checked at the
/// first packet are not checked again; the caller keeps the address it
/// computed with [`lookup_rkey`]'s offset at the first packet.
/// `None` is `RESPST_ERR_RKEY_VIOLATION`.
///
/// A region (not a window) is found by the key's index, the one kept in
/// `cache` (the previous response's) first, and its key and state are
/// checked by [`RemoteMr::copy`] in the hold of the region's lock the copy
/// takes anyway: a failure there is the same violation, found one step
/// later, with the response not sent.
pub(crate) fn recheck_rkey(rxe: &RxeDev, cache: &MrCache, rkey: u32) -> Option<RemoteMr> {
    if !keys::rkey_is_mw(rkey) {
        let index = keys::key_index(rkey);
        let mr = cache.region(index).or_else(|| rxe.mrs.get(index))?;
        return Some(RemoteMr {
            mr,
            rkey: Some(rkey),
        });
    }
    let mw = rxe.mws.get(rkey)?;
    let b = mw.binding.lock();
    if b.state != crate::mw::MwState::Valid {
        return None;
    }
    let mr = b.mr.clone()?;
    drop(b);
    (mr.state() == crate::mr::MrState::Valid).then_some(RemoteMr { mr, rkey: None })
}

/// Executes LOCAL_INV of `rkey` (`rxe_do_local_ops`: `rxe_invalidate_mw`
/// for a window's key, else `rxe_invalidate_mr`). `EINVAL` as the C
/// driver; the WQE then completes with `IB_WC_LOC_QP_OP_ERR`
/// ([`crate::access::local_op_error_status`]). Also the invalidation of a
/// SEND_WITH_INV at the responder (`invalidate_rkey`, where a failure is
/// `RESPST_ERR_INVALIDATE_RKEY`).
pub(crate) fn local_inv(rxe: &RxeDev, rkey: u32) -> Result {
    if keys::rkey_is_mw(rkey) {
        rxe.mws.invalidate(rkey)
    } else {
        rxe.mrs.invalidate(rkey)
    }
}

/// Executes REG_MR on a QP of `qp_pd` (`rxe_reg_fast_mr`): the
/// fast-registration region named by `key`'s index gets `key` as lkey and
/// rkey, `access`, and becomes valid. `EINVAL` as the C driver (region not
/// free, another PD, no such region); the WQE then completes with
/// `IB_WC_LOC_QP_OP_ERR`.
///
/// Unlike the C driver, the region is found by the key's index rather
/// than by the `struct ib_mr *` in the WQE, which a user QP's mapped
/// queue could forge; the key's index must name the region anyway. Its
/// address is `iova` if the poster gives it (the `ib_mr`'s at post time),
/// else the one `map_mr_sg` set.
pub(crate) fn reg_mr(
    rxe: &RxeDev,
    qp_pd: PdId,
    key: u32,
    access: u32,
    iova: Option<u64>,
) -> Result {
    let mr = rxe.mrs.get(keys::key_index(key)).ok_or(EINVAL)?;
    let iova = iova.unwrap_or_else(|| mr.range().0);
    mr.reg_fast(qp_pd, key, access, iova)
}

/// Executes the local operation of a send WQE (`rxe_do_local_ops`) of
/// QP `qpn` of `qp_pd`: `wqe` is the WQE's bytes from its start. On
/// failure, the status the WQE completes with (`IB_WC_LOC_QP_OP_ERR`, or
/// `IB_WC_MW_BIND_ERR` for a bind), the errno aside as the C driver's
/// callers do.
pub(crate) fn do_local_op(rxe: &RxeDev, qp_pd: PdId, qpn: u32, wqe: &[u8]) -> Result<(), u32> {
    let op = LocalOp::decode(wqe).ok_or(wc_status::LOC_QP_OP_ERR)?;
    let r = match op {
        LocalOp::Inv { rkey } => local_inv(rxe, rkey),
        LocalOp::Reg { key, access } => reg_mr(rxe, qp_pd, key, access, None),
        LocalOp::Bind {
            addr,
            length,
            mr_lkey,
            mw_rkey,
            rkey,
            access,
        } => {
            let req = BindRequest {
                mw_rkey,
                rkey,
                mr_lkey,
                access,
                addr,
                length,
            };
            bind_mw(rxe, qp_pd, qpn, &req)
        }
        LocalOp::Other(_) => Err(EINVAL),
    };
    r.map_err(|_| op.error_status())
}

/// Executes BIND_MW for QP `qpn` of `qp_pd` (`rxe_bind_mw`): `EINVAL`
/// for an unknown window or region or a rule broken, `EOPNOTSUPP` for
/// access flags rxe does not support; the WQE then completes with
/// `IB_WC_MW_BIND_ERR`.
pub(crate) fn bind_mw(rxe: &RxeDev, qp_pd: PdId, qpn: u32, req: &BindRequest) -> Result {
    rxe.mws.bind(&rxe.mrs, qp_pd, qpn, req)
}
