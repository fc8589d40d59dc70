// SPDX-License-Identifier: GPL-2.0

//! What the transport's memory accesses check and how their failures are
//! reported, as the C driver does (`rxe_resp.c`'s `check_rkey` and atomic
//! replies, `rxe_mr.c`'s atomic ops, `rxe_req.c`'s `rxe_do_local_ops`).
//!
//! No kernel dependency: also built by the host test crate (`tests/host`).

use crate::{
    dma::wc_status,
    keys,
    wqe::opcode, //
};

/// What a remote request does to the memory its rkey names, for the
/// access flags it needs (`check_rkey`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemoteOp {
    /// RDMA READ.
    Read,
    /// RDMA WRITE (with or without immediate), and ATOMIC_WRITE.
    Write,
    /// CMP_SWP or FETCH_ADD.
    Atomic,
    /// FLUSH with the placement type bits of its FETH (`IB_FLUSH_GLOBAL`
    /// 1, `IB_FLUSH_PERSISTENT` 2).
    Flush(u32),
}

/// `IB_FLUSH_GLOBAL`.
pub const FLUSH_GLOBAL: u32 = 1 << 0;
/// `IB_FLUSH_PERSISTENT`.
pub const FLUSH_PERSISTENT: u32 = 1 << 1;

impl RemoteOp {
    /// The access flags the MR or MW of the rkey must grant.
    pub fn access(self) -> u32 {
        match self {
            Self::Read => keys::ACCESS_REMOTE_READ,
            Self::Write => keys::ACCESS_REMOTE_WRITE,
            Self::Atomic => keys::ACCESS_REMOTE_ATOMIC,
            Self::Flush(t) => {
                let mut a = 0;
                if t & FLUSH_GLOBAL != 0 {
                    a |= keys::ACCESS_FLUSH_GLOBAL;
                }
                if t & FLUSH_PERSISTENT != 0 {
                    a |= keys::ACCESS_FLUSH_PERSISTENT;
                }
                a
            }
        }
    }
}

/// Why an access by rkey failed, as the responder's states of the C
/// driver (the responder NAKs them: `RESPST_ERR_RKEY_VIOLATION` is a
/// remote access error, `AETH_NAK_REM_ACC_ERR` / `IB_WC_REM_ACCESS_ERR`
/// on RC, a dropped message on UC; `RESPST_ERR_MISALIGNED_ATOMIC` an
/// invalid request, `AETH_NAK_INVALID_REQ` / `IB_WC_REM_INV_REQ_ERR`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemoteError {
    /// `RESPST_ERR_RKEY_VIOLATION`: no valid MR or MW of the QP's PD with
    /// the access, out of its range, no page, the region not valid.
    RkeyViolation,
    /// `RESPST_ERR_MISALIGNED_ATOMIC`: an atomic's address is not 8-byte
    /// aligned.
    Misaligned,
}

/// Whether the 64-bit word of an atomic at `offset` in its page is
/// aligned (IBA o9-21: atomics are on naturally aligned quadwords).
pub fn atomic_aligned(offset: u64) -> bool {
    offset & 7 == 0
}

/// The completion status of a local operation (LOCAL_INV, REG_MR,
/// BIND_MW) that failed (`rxe_do_local_ops`): `IB_WC_MW_BIND_ERR` for a
/// bind, `IB_WC_LOC_QP_OP_ERR` otherwise (an unknown opcode included).
pub fn local_op_error_status(op: u32) -> u32 {
    match op {
        opcode::BIND_MW => wc_status::MW_BIND_ERR,
        _ => wc_status::LOC_QP_OP_ERR,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_bits() {
        assert_eq!(RemoteOp::Read.access(), keys::ACCESS_REMOTE_READ);
        assert_eq!(RemoteOp::Write.access(), keys::ACCESS_REMOTE_WRITE);
        assert_eq!(RemoteOp::Atomic.access(), keys::ACCESS_REMOTE_ATOMIC);
        assert_eq!(RemoteOp::Flush(0).access(), 0);
        assert_eq!(
            RemoteOp::Flush(FLUSH_GLOBAL | FLUSH_PERSISTENT).access(),
            keys::ACCESS_FLUSH_GLOBAL | keys::ACCESS_FLUSH_PERSISTENT
        );
        assert_eq!(
            RemoteOp::Flush(FLUSH_PERSISTENT).access(),
            keys::ACCESS_FLUSH_PERSISTENT
        );
    }

    #[test]
    fn alignment() {
        assert!(atomic_aligned(0));
        assert!(atomic_aligned(0xff8));
        assert!(!atomic_aligned(4));
        assert!(!atomic_aligned(0xfff));
    }

    #[test]
    fn local_op_statuses() {
        assert_eq!(local_op_error_status(opcode::BIND_MW), 6);
        assert_eq!(local_op_error_status(opcode::LOCAL_INV), 2);
        assert_eq!(local_op_error_status(opcode::REG_MR), 2);
        assert_eq!(local_op_error_status(0x99), 2);
    }
}
