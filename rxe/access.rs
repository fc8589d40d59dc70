// SPDX-License-Identifier: GPL-2.0

//! What the transport's memory accesses check and how their failures are
//! reported, as the C driver does (`rxe_resp.c`'s `check_rkey` and atomic
//! replies, `rxe_mr.c`'s atomic ops, `rxe_req.c`'s `rxe_do_local_ops`).
//!
//! No kernel dependency: also built by the host test crate (`tests/host`).

use crate::{
    dma::wc_status,
    keys,
    wqe::{
        opcode,
        send_off, //
    },
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

/// A local operation of a send WQE, as `rxe_do_local_ops` reads it from
/// `struct rxe_send_wr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalOp {
    /// LOCAL_INV of `ex.invalidate_rkey`.
    Inv {
        /// The key to invalidate (a region's or a window's).
        rkey: u32,
    },
    /// REG_MR (`wr.reg`; the `struct ib_mr *` is not read, see
    /// `copy::reg_mr`).
    Reg {
        /// The region's new key.
        key: u32,
        /// Its new access flags.
        access: u32,
    },
    /// BIND_MW (`wr.mw`).
    Bind {
        /// Start of the window.
        addr: u64,
        /// Bytes (0 unbinds).
        length: u64,
        /// The region's lkey.
        mr_lkey: u32,
        /// The window's current rkey.
        mw_rkey: u32,
        /// The new rkey (its key byte is taken).
        rkey: u32,
        /// The window's access flags.
        access: u32,
    },
    /// Any other opcode (`EINVAL`, `IB_WC_LOC_QP_OP_ERR`).
    Other(u32),
}

fn get32(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(off..off + 4)?.try_into().ok()?))
}

fn get64(b: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(off..off + 8)?.try_into().ok()?))
}

impl LocalOp {
    /// The local operation of the send WQE in `wqe` (from its first
    /// byte); `None` if `wqe` is too short for it.
    pub fn decode(wqe: &[u8]) -> Option<Self> {
        let w = send_off::WR;
        Some(match get32(wqe, send_off::OPCODE)? {
            opcode::LOCAL_INV => Self::Inv {
                rkey: get32(wqe, send_off::EX)?,
            },
            opcode::REG_MR => Self::Reg {
                key: get32(wqe, w + 8)?,
                access: get32(wqe, w + 12)?,
            },
            opcode::BIND_MW => Self::Bind {
                addr: get64(wqe, w)?,
                length: get64(wqe, w + 8)?,
                mr_lkey: get32(wqe, w + 16)?,
                mw_rkey: get32(wqe, w + 20)?,
                rkey: get32(wqe, w + 24)?,
                access: get32(wqe, w + 28)?,
            },
            op => Self::Other(op),
        })
    }

    /// The status the WQE completes with if the operation fails
    /// ([`local_op_error_status`]).
    pub fn error_status(&self) -> u32 {
        match self {
            Self::Bind { .. } => wc_status::MW_BIND_ERR,
            _ => wc_status::LOC_QP_OP_ERR,
        }
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
    fn local_op_decoding() {
        use crate::qp_attr::SEND_WQE_SIZE;
        use crate::wqe::{
            wr_mask,
            Remote,
            SendWqe, //
        };
        let mut b = [0u8; SEND_WQE_SIZE as usize];
        let base = SendWqe {
            wr_id: 1,
            opcode: opcode::LOCAL_INV,
            send_flags: 0,
            ex: 0x1234_56ab,
            remote: Remote::None,
            iova: 0,
            mask: wr_mask::LOCAL_OP,
            length: 0,
            num_sge: 0,
            ssn: 0,
        };
        base.encode(&mut b);
        assert_eq!(
            LocalOp::decode(&b),
            Some(LocalOp::Inv { rkey: 0x1234_56ab })
        );
        let reg = SendWqe {
            opcode: opcode::REG_MR,
            remote: Remote::Reg {
                mr: 0xffff_8880_0000_1000,
                key: 0x3cd,
                access: 7,
            },
            ..base
        };
        reg.encode(&mut b);
        let op = LocalOp::decode(&b).unwrap();
        assert_eq!(
            op,
            LocalOp::Reg {
                key: 0x3cd,
                access: 7
            }
        );
        assert_eq!(op.error_status(), wc_status::LOC_QP_OP_ERR);
        // `wr.mw` as rdma-core's provider writes it.
        b.fill(0);
        b[send_off::OPCODE..send_off::OPCODE + 4].copy_from_slice(&opcode::BIND_MW.to_ne_bytes());
        let w = send_off::WR;
        b[w..w + 8].copy_from_slice(&0x7000u64.to_ne_bytes());
        b[w + 8..w + 16].copy_from_slice(&0x100u64.to_ne_bytes());
        for (i, v) in [0x201u32, 0x30_0011, 0x30_0022, 0x6].iter().enumerate() {
            b[w + 16 + 4 * i..w + 20 + 4 * i].copy_from_slice(&v.to_ne_bytes());
        }
        let op = LocalOp::decode(&b).unwrap();
        assert_eq!(
            op,
            LocalOp::Bind {
                addr: 0x7000,
                length: 0x100,
                mr_lkey: 0x201,
                mw_rkey: 0x30_0011,
                rkey: 0x30_0022,
                access: 6
            }
        );
        assert_eq!(op.error_status(), wc_status::MW_BIND_ERR);
        b[send_off::OPCODE..send_off::OPCODE + 4].copy_from_slice(&opcode::SEND.to_ne_bytes());
        assert_eq!(LocalOp::decode(&b), Some(LocalOp::Other(opcode::SEND)));
        assert_eq!(LocalOp::decode(&b[..15]), None);
        assert_eq!(
            LocalOp::decode(&b[..16]),
            Some(LocalOp::Other(opcode::SEND))
        );
    }

    #[test]
    fn local_op_statuses() {
        assert_eq!(local_op_error_status(opcode::BIND_MW), 6);
        assert_eq!(local_op_error_status(opcode::LOCAL_INV), 2);
        assert_eq!(local_op_error_status(opcode::REG_MR), 2);
        assert_eq!(local_op_error_status(0x99), 2);
    }
}
