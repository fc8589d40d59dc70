// SPDX-License-Identifier: GPL-2.0

//! The responder's atomic operations on remote memory (`atomic_reply`,
//! `atomic_write_reply` of `rxe_resp.c`, `rxe_mr_do_atomic_op` and
//! `rxe_mr_do_atomic_write` of `rxe_mr.c`): CMP_SWP and FETCH_ADD on an
//! 8-byte aligned word of the region an rkey names, and the 8-byte
//! ATOMIC_WRITE.
//!
//! The C driver makes its atomics exclusive of one another with a global
//! spinlock around plain accesses; here each is one locked hardware
//! operation on the word (`core/rdma/mr.rs`), which is as exclusive of the
//! other requests and of CPU atomics on the same memory, without a lock
//! shared by every QP. An ATOMIC_WRITE is a release store, as in C.

use crate::{
    access::RemoteError,
    copy::RemoteMr,
    rdma::mr::WordOp, //
};

/// The operation of a CMP_SWP (`cmp_swap`) or FETCH_ADD request with the
/// operands of its AtomicETH (`atmeth_comp`, `atmeth_swap_add`, in host
/// order).
pub(crate) fn request_op(cmp_swap: bool, compare: u64, swap_add: u64) -> WordOp {
    if cmp_swap {
        WordOp::CompareSwap {
            compare,
            swap: swap_add,
        }
    } else {
        WordOp::FetchAdd(swap_add)
    }
}

/// Does a CMP_SWP or FETCH_ADD `op` at `iova` in `target` (the request's
/// address plus [`RemoteMr::offset`]) and returns the
/// original value for the AtomicAckETH. [`RemoteError::RkeyViolation`] if
/// the region is no longer valid, the word is out of its range or not
/// mapped; [`RemoteError::Misaligned`] if `iova` is not 8-byte aligned.
pub(crate) fn atomic_op(target: &RemoteMr, iova: u64, op: WordOp) -> Result<u64, RemoteError> {
    let op = match op {
        // A store is not a CMP_SWP or FETCH_ADD.
        WordOp::StoreRelease(_) => return Err(RemoteError::RkeyViolation),
        op => op,
    };
    target.mr().word_op(iova, op)
}

/// Does an ATOMIC_WRITE of the 8 payload bytes `value` (stored as they
/// arrived, as the C driver's `*(u64 *)payload_addr(pkt)`) at `iova` in
/// `target`, after all earlier accesses. Errors as
/// [`atomic_op`].
pub(crate) fn atomic_write(
    target: &RemoteMr,
    iova: u64,
    value: [u8; 8],
) -> Result<(), RemoteError> {
    let op = WordOp::StoreRelease(u64::from_ne_bytes(value));
    target.mr().word_op(iova, op).map(|_| ())
}
