// SPDX-License-Identifier: GPL-2.0

//! Work queue entries as kernel users' posts write them: which work request
//! opcodes a QP type takes (`rxe_wr_opcode_info`), the checks of a post
//! (`validate_send_wr`, `post_one_recv`), and the layouts of `struct
//! rxe_send_wqe` and `struct rxe_recv_wqe` (uapi `rdma_user_rxe.h`, the same
//! entries rdma-core's provider writes to a user QP's mapped queues).
//!
//! No kernel dependency: also built by the host test crate (`tests/host`).

use crate::qp_attr::{
    QpType,
    Refusal,
    RECV_WQE_SIZE,
    SEND_WQE_SIZE,
    SGE_SIZE, //
};

/// What a work request opcode does (`WR_*_MASK` of `rxe_opcode.h`).
pub mod wr_mask {
    /// May carry inline data.
    pub const INLINE: u32 = 1 << 0;
    /// Atomic.
    pub const ATOMIC: u32 = 1 << 1;
    /// Send.
    pub const SEND: u32 = 1 << 2;
    /// RDMA read.
    pub const READ: u32 = 1 << 3;
    /// RDMA write.
    pub const WRITE: u32 = 1 << 4;
    /// Local operation (invalidate, register, bind).
    pub const LOCAL_OP: u32 = 1 << 5;
    /// Flush.
    pub const FLUSH: u32 = 1 << 6;
    /// Atomic write.
    pub const ATOMIC_WRITE: u32 = 1 << 7;
    /// RDMA read or write.
    pub const READ_OR_WRITE: u32 = READ | WRITE;
}

/// `enum ib_wr_opcode` values.
pub mod opcode {
    /// RDMA write.
    pub const RDMA_WRITE: u32 = 0;
    /// RDMA write with immediate.
    pub const RDMA_WRITE_WITH_IMM: u32 = 1;
    /// Send.
    pub const SEND: u32 = 2;
    /// Send with immediate.
    pub const SEND_WITH_IMM: u32 = 3;
    /// RDMA read.
    pub const RDMA_READ: u32 = 4;
    /// Atomic compare and swap.
    pub const ATOMIC_CMP_AND_SWP: u32 = 5;
    /// Atomic fetch and add.
    pub const ATOMIC_FETCH_AND_ADD: u32 = 6;
    /// Local invalidate.
    pub const LOCAL_INV: u32 = 7;
    /// Bind memory window.
    pub const BIND_MW: u32 = 8;
    /// Send with invalidate.
    pub const SEND_WITH_INV: u32 = 9;
    /// TCP segmentation offload.
    pub const LSO: u32 = 10;
    /// RDMA read with invalidate.
    pub const RDMA_READ_WITH_INV: u32 = 11;
    /// Flush.
    pub const FLUSH: u32 = 14;
    /// Atomic write.
    pub const ATOMIC_WRITE: u32 = 15;
    /// Fast registration of a memory region.
    pub const REG_MR: u32 = 0x20;
}

/// `IB_SEND_INLINE`.
pub const SEND_INLINE: u32 = 1 << 3;

/// The largest message (`RXE_PORT_MAX_MSG_SZ`).
pub const MAX_MSG_SZ: u64 = 1 << 31;

/// What opcode `op` does on a QP of type `t`; 0 where it is not allowed.
pub fn wr_opcode_mask(op: u32, t: QpType) -> u32 {
    use opcode as o;
    use wr_mask as m;
    use QpType::*;
    let connected = matches!(t, Rc | Uc);
    match op {
        o::RDMA_WRITE | o::RDMA_WRITE_WITH_IMM if connected => m::INLINE | m::WRITE,
        o::SEND | o::SEND_WITH_IMM => m::INLINE | m::SEND,
        o::SEND_WITH_INV if t != Gsi => m::INLINE | m::SEND,
        o::RDMA_READ | o::RDMA_READ_WITH_INV if t == Rc => m::READ,
        o::ATOMIC_CMP_AND_SWP | o::ATOMIC_FETCH_AND_ADD if t == Rc => m::ATOMIC,
        o::LOCAL_INV | o::REG_MR if t == Rc => m::LOCAL_OP,
        o::BIND_MW if connected => m::LOCAL_OP,
        o::FLUSH if t == Rc => m::FLUSH,
        o::ATOMIC_WRITE if t == Rc => m::ATOMIC_WRITE,
        _ => 0,
    }
}

/// A send work request as far as its checks read it.
#[derive(Clone, Copy, Debug)]
pub struct SendCheck {
    /// `enum ib_wr_opcode`.
    pub opcode: u32,
    /// `IB_SEND_*` flags.
    pub send_flags: u32,
    /// Scatter/gather entries.
    pub num_sge: i32,
    /// Sum of their lengths.
    pub length: u64,
    /// The remote address of an atomic.
    pub atomic_addr: u64,
}

/// Checks a kernel user's send work request (`validate_send_wr`) on a QP
/// of type `t` whose queue takes `max_sge` entries or `max_inline` bytes;
/// returns its [`wr_mask`].
pub fn chk_send(w: &SendCheck, t: QpType, max_sge: u32, max_inline: u32) -> Result<u32, Refusal> {
    let mask = wr_opcode_mask(w.opcode, t);
    if mask == 0 {
        return Err(Refusal::Inval);
    }
    // A negative count is refused too (the C driver would copy garbage).
    if u32::try_from(w.num_sge).map_or(true, |n| n > max_sge) {
        return Err(Refusal::Inval);
    }
    if w.length > MAX_MSG_SZ {
        return Err(Refusal::Inval);
    }
    if mask & wr_mask::ATOMIC != 0 && (w.length != 8 || w.atomic_addr & 7 != 0) {
        return Err(Refusal::Inval);
    }
    if w.send_flags & SEND_INLINE != 0
        && (mask & wr_mask::INLINE == 0 || w.length > u64::from(max_inline))
    {
        return Err(Refusal::Inval);
    }
    // The opcodes a kernel user's WQE has room for (`init_send_wr`).
    let known = if t.is_datagram() {
        matches!(w.opcode, opcode::SEND | opcode::SEND_WITH_IMM)
    } else {
        w.opcode != opcode::LSO
    };
    if !known {
        return Err(Refusal::Inval);
    }
    Ok(mask)
}

/// The remote part of a send work request, as the WQE keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Remote {
    /// Nothing remote (sends on connected QPs, local operations).
    None,
    /// RDMA read or write.
    Rdma {
        /// Remote address.
        addr: u64,
        /// Remote key.
        rkey: u32,
    },
    /// Atomic.
    Atomic {
        /// Remote address.
        addr: u64,
        /// Compare or add operand.
        compare_add: u64,
        /// Swap operand.
        swap: u64,
        /// Remote key.
        rkey: u32,
    },
    /// Datagram destination.
    Ud {
        /// Remote QPN.
        qpn: u32,
        /// Remote Q_Key.
        qkey: u32,
        /// P_Key index (GSI).
        pkey_index: u16,
        /// The address handle's number.
        ah_num: u32,
    },
    /// Fast registration: the core's `ib_mr` pointer, key, access.
    Reg {
        /// The `struct ib_mr *` of the kernel user.
        mr: u64,
        /// The key it gets.
        key: u32,
        /// `IB_ACCESS_*` flags.
        access: u32,
    },
}

/// The fixed part of a send WQE (`struct rxe_send_wqe` up to its
/// scatter/gather list or inline data).
#[derive(Clone, Copy, Debug)]
pub struct SendWqe {
    /// The user's id.
    pub wr_id: u64,
    /// `enum ib_wr_opcode`.
    pub opcode: u32,
    /// `IB_SEND_*` flags.
    pub send_flags: u32,
    /// Immediate data (as stored) or rkey to invalidate.
    pub ex: u32,
    /// The remote part.
    pub remote: Remote,
    /// Remote address the requester starts at.
    pub iova: u64,
    /// [`wr_mask`] of the opcode.
    pub mask: u32,
    /// Bytes in all.
    pub length: u32,
    /// Scatter/gather entries (0 with inline data).
    pub num_sge: u32,
    /// Send sequence number.
    pub ssn: u32,
}

/// Byte offsets in `struct rxe_send_wqe`.
pub mod send_off {
    /// `wr.wr_id`.
    pub const WR_ID: usize = 0;
    /// `wr.opcode`.
    pub const OPCODE: usize = 12;
    /// `wr.send_flags`.
    pub const SEND_FLAGS: usize = 16;
    /// `wr.ex`.
    pub const EX: usize = 20;
    /// `wr.wr`: the union of remote parts.
    pub const WR: usize = 24;
    /// `status`.
    pub const STATUS: usize = 144;
    /// `state`.
    pub const STATE: usize = 148;
    /// `iova`.
    pub const IOVA: usize = 152;
    /// `mask`.
    pub const MASK: usize = 160;
    /// `ssn`.
    pub const SSN: usize = 176;
    /// `dma`.
    pub const DMA: usize = 184;
    /// `dma.sge` / `dma.inline_data`.
    pub const DATA: usize = 208;
}

/// Byte offsets in `struct rxe_recv_wqe`.
pub mod recv_off {
    /// `wr_id`.
    pub const WR_ID: usize = 0;
    /// `dma`.
    pub const DMA: usize = 16;
    /// `dma.sge`.
    pub const DATA: usize = 40;
}

/// Reads the native-endian `u32` field at `off` of a WQE copied out of its
/// queue; 0 if the copy is too short (the caller's layout checks decide).
pub fn get32(b: &[u8], off: usize) -> u32 {
    b.get(off..off + 4)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u32::from_ne_bytes)
}

/// Bytes past the fixed part of a send WQE ([`send_off::DATA`]) that its
/// transport reads, from the fixed part `fixed` (at least
/// [`send_off::DATA`] bytes): its `num_sge` scatter/gather entries (at
/// least the first, which also holds an ATOMIC WRITE's 8 bytes,
/// `dma.atomic_wr`) or its inline data (`dma.length` bytes), whichever is
/// more; at most `room`, the element's bytes past the fixed part. The
/// requester and the completer copy only these out of the queue element,
/// not the whole element.
pub fn send_data_used(fixed: &[u8], room: usize) -> usize {
    let length = get32(fixed, send_off::DMA) as usize;
    let num_sge = get32(fixed, send_off::DMA + 12) as usize;
    let mut n = num_sge
        .saturating_mul(SGE_SIZE as usize)
        .max(SGE_SIZE as usize);
    if get32(fixed, send_off::SEND_FLAGS) & SEND_INLINE != 0 {
        n = n.max(length);
    }
    n.min(room)
}

/// As [`get32`], for a `u64` field.
pub fn get64(b: &[u8], off: usize) -> u64 {
    b.get(off..off + 8)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u64::from_ne_bytes)
}

// As arrays, not with `copy_from_slice` (see `SendWqeBytes`); out of
// bounds is a bug of the caller, which sized the element.
fn put32(b: &mut [u8], off: usize, v: u32) {
    if let Some(c) = b.get_mut(off..).and_then(<[u8]>::first_chunk_mut::<4>) {
        *c = v.to_ne_bytes();
    }
}

fn put64(b: &mut [u8], off: usize, v: u64) {
    if let Some(c) = b.get_mut(off..).and_then(<[u8]>::first_chunk_mut::<8>) {
        *c = v.to_ne_bytes();
    }
}

/// Writes `struct rxe_dma_info` at `off`: `length` bytes to go, from the
/// first entry.
fn put_dma(b: &mut [u8], off: usize, length: u32, num_sge: u32) {
    put32(b, off, length);
    put32(b, off + 4, length);
    put32(b, off + 8, 0);
    put32(b, off + 12, num_sge);
    put32(b, off + 16, 0);
    put32(b, off + 20, 0);
}

/// Writes scatter/gather entry `i` of a list at `off` (`struct rxe_sge`).
pub fn put_sge(b: &mut [u8], off: usize, i: usize, addr: u64, length: u32, lkey: u32) {
    let at = off + i * SGE_SIZE as usize;
    put64(b, at, addr);
    put32(b, at + 8, length);
    put32(b, at + 12, lkey);
}

impl SendWqe {
    /// Writes the WQE to `b` (zeroing the rest of its fixed part); the
    /// caller adds the list or inline data at [`send_off::DATA`]. A local
    /// operation only has its request and mask, as in the C driver.
    pub fn encode(&self, b: &mut [u8; SEND_WQE_SIZE as usize]) {
        b.fill(0);
        put64(b, send_off::WR_ID, self.wr_id);
        put32(b, send_off::OPCODE, self.opcode);
        put32(b, send_off::SEND_FLAGS, self.send_flags);
        put32(b, send_off::EX, self.ex);
        let w = send_off::WR;
        match self.remote {
            Remote::None => {}
            Remote::Rdma { addr, rkey } => {
                put64(b, w, addr);
                put32(b, w + 8, rkey);
            }
            Remote::Atomic {
                addr,
                compare_add,
                swap,
                rkey,
            } => {
                put64(b, w, addr);
                put64(b, w + 8, compare_add);
                put64(b, w + 16, swap);
                put32(b, w + 24, rkey);
            }
            Remote::Ud {
                qpn,
                qkey,
                pkey_index,
                ah_num,
            } => {
                put32(b, w, qpn);
                put32(b, w + 4, qkey);
                b[w + 8..w + 10].copy_from_slice(&pkey_index.to_ne_bytes());
                put32(b, w + 12, ah_num);
            }
            Remote::Reg { mr, key, access } => {
                put64(b, w, mr);
                put32(b, w + 8, key);
                put32(b, w + 12, access);
            }
        }
        put32(b, send_off::MASK, self.mask);
        // `state` stays wqe_state_posted (0).
        if self.mask & wr_mask::LOCAL_OP != 0 {
            return;
        }
        put64(b, send_off::IOVA, self.iova);
        put32(b, send_off::SSN, self.ssn);
        put_dma(b, send_off::DMA, self.length, self.num_sge);
    }
}

/// Writes the fixed part of a receive WQE: id and `length` bytes over
/// `num_sge` entries, which the caller adds at [`recv_off::DATA`].
pub fn encode_recv(b: &mut [u8; RECV_WQE_SIZE as usize], wr_id: u64, length: u32, num_sge: u32) {
    b.fill(0);
    put64(b, recv_off::WR_ID, wr_id);
    put_dma(b, recv_off::DMA, length, num_sge);
}

/// Checks a kernel user's receive work request (`post_one_recv`, after its
/// queue-full check) for a queue of `max_sge` entries.
pub fn chk_recv(num_sge: i32, length: u64, max_sge: u32) -> Result<(), Refusal> {
    if u32::try_from(num_sge).map_or(true, |n| n > max_sge) || length > MAX_MSG_SZ {
        return Err(Refusal::Inval);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_data_used_is_the_list_or_inline_bytes() {
        let mut f = [0u8; send_off::DATA];
        put_dma(&mut f, send_off::DMA, 4096, 3);
        assert_eq!(send_data_used(&f, 512), 48);
        assert_eq!(send_data_used(&f, 32), 32);
        put_dma(&mut f, send_off::DMA, 8, 0);
        assert_eq!(send_data_used(&f, 512), 16);
        put_dma(&mut f, send_off::DMA, 200, 1);
        put32(&mut f, send_off::SEND_FLAGS, SEND_INLINE);
        assert_eq!(send_data_used(&f, 512), 200);
        assert_eq!(send_data_used(&f, 100), 100);
        put_dma(&mut f, send_off::DMA, 0, u32::MAX);
        assert_eq!(send_data_used(&f, 512), 512);
        assert_eq!(send_data_used(&[], 512), 16);
    }

    #[test]
    fn opcode_masks() {
        use opcode::*;
        use QpType::*;
        assert_eq!(
            wr_opcode_mask(RDMA_WRITE, Rc),
            wr_mask::INLINE | wr_mask::WRITE
        );
        assert_eq!(
            wr_opcode_mask(RDMA_WRITE, Uc),
            wr_mask::INLINE | wr_mask::WRITE
        );
        assert_eq!(wr_opcode_mask(RDMA_WRITE, Ud), 0);
        assert_eq!(wr_opcode_mask(SEND, Gsi), wr_mask::INLINE | wr_mask::SEND);
        assert_eq!(
            wr_opcode_mask(SEND_WITH_INV, Ud),
            wr_mask::INLINE | wr_mask::SEND
        );
        assert_eq!(wr_opcode_mask(SEND_WITH_INV, Gsi), 0);
        assert_eq!(wr_opcode_mask(RDMA_READ, Uc), 0);
        assert_eq!(wr_opcode_mask(ATOMIC_FETCH_AND_ADD, Rc), wr_mask::ATOMIC);
        assert_eq!(wr_opcode_mask(BIND_MW, Uc), wr_mask::LOCAL_OP);
        assert_eq!(wr_opcode_mask(REG_MR, Uc), 0);
        assert_eq!(wr_opcode_mask(LSO, Ud), 0);
        assert_eq!(wr_opcode_mask(12, Rc), 0);
        assert_eq!(wr_opcode_mask(0xff, Rc), 0);
        assert_eq!(wr_opcode_mask(FLUSH, Rc), wr_mask::FLUSH);
        assert_eq!(wr_opcode_mask(ATOMIC_WRITE, Rc), wr_mask::ATOMIC_WRITE);
    }

    fn send(opcode: u32) -> SendCheck {
        SendCheck {
            opcode,
            send_flags: 0,
            num_sge: 1,
            length: 8,
            atomic_addr: 0,
        }
    }

    #[test]
    fn send_checks() {
        use QpType::*;
        assert_eq!(
            chk_send(&send(opcode::SEND), Ud, 1, 0),
            Ok(wr_mask::INLINE | wr_mask::SEND)
        );
        assert_eq!(
            chk_send(&send(opcode::RDMA_READ), Ud, 1, 0),
            Err(Refusal::Inval)
        );
        // Valid for UD by the table, but a kernel UD WQE has no room for it.
        assert_eq!(
            chk_send(&send(opcode::SEND_WITH_INV), Ud, 1, 0),
            Err(Refusal::Inval)
        );
        let w = SendCheck {
            num_sge: 2,
            ..send(opcode::SEND)
        };
        assert_eq!(chk_send(&w, Rc, 1, 0), Err(Refusal::Inval));
        let w = SendCheck {
            num_sge: -1,
            ..send(opcode::SEND)
        };
        assert_eq!(chk_send(&w, Rc, 1, 0), Err(Refusal::Inval));
        let w = SendCheck {
            length: MAX_MSG_SZ + 1,
            ..send(opcode::SEND)
        };
        assert_eq!(chk_send(&w, Rc, 1, 0), Err(Refusal::Inval));
        assert!(chk_send(&send(opcode::ATOMIC_CMP_AND_SWP), Rc, 1, 0).is_ok());
        let w = SendCheck {
            length: 4,
            ..send(opcode::ATOMIC_CMP_AND_SWP)
        };
        assert_eq!(chk_send(&w, Rc, 1, 0), Err(Refusal::Inval));
        let w = SendCheck {
            atomic_addr: 4,
            ..send(opcode::ATOMIC_CMP_AND_SWP)
        };
        assert_eq!(chk_send(&w, Rc, 1, 0), Err(Refusal::Inval));
        let inline = SendCheck {
            send_flags: SEND_INLINE,
            length: 64,
            ..send(opcode::SEND)
        };
        assert!(chk_send(&inline, Rc, 1, 64).is_ok());
        assert_eq!(chk_send(&inline, Rc, 1, 63), Err(Refusal::Inval));
        let w = SendCheck {
            opcode: opcode::RDMA_READ,
            ..inline
        };
        assert_eq!(chk_send(&w, Rc, 1, 64), Err(Refusal::Inval));
    }

    #[test]
    fn send_layout() {
        let mut b = [0xaau8; SEND_WQE_SIZE as usize];
        let w = SendWqe {
            wr_id: 0x1122_3344_5566_7788,
            opcode: opcode::SEND,
            send_flags: 2,
            ex: 0xdead_beef,
            remote: Remote::Ud {
                qpn: 0x12,
                qkey: 0x8001_0000,
                pkey_index: 3,
                ah_num: 9,
            },
            iova: 0,
            mask: wr_mask::INLINE | wr_mask::SEND,
            length: 100,
            num_sge: 2,
            ssn: 5,
        };
        w.encode(&mut b);
        let u32_at = |o: usize| u32::from_ne_bytes(b[o..o + 4].try_into().unwrap());
        assert_eq!(u64::from_ne_bytes(b[0..8].try_into().unwrap()), w.wr_id);
        assert_eq!(u32_at(8), 0);
        assert_eq!(u32_at(12), opcode::SEND);
        assert_eq!(u32_at(16), 2);
        assert_eq!(u32_at(20), 0xdead_beef);
        assert_eq!((u32_at(24), u32_at(28), u32_at(36)), (0x12, 0x8001_0000, 9));
        assert_eq!(u16::from_ne_bytes([b[32], b[33]]), 3);
        assert_eq!(u32_at(160), w.mask);
        assert_eq!(u32_at(176), 5);
        // dma: length, resid, cur_sge, num_sge, sge_offset.
        assert_eq!(
            (
                u32_at(184),
                u32_at(188),
                u32_at(192),
                u32_at(196),
                u32_at(200)
            ),
            (100, 100, 0, 2, 0)
        );
        assert_eq!(u32_at(148), 0);

        // A local operation: no SSN, no DMA info.
        let reg = SendWqe {
            opcode: opcode::REG_MR,
            remote: Remote::Reg {
                mr: 0xffff_8880_0000_1000,
                key: 0x1234,
                access: 7,
            },
            mask: wr_mask::LOCAL_OP,
            ..w
        };
        reg.encode(&mut b);
        let u32_at = |o: usize| u32::from_ne_bytes(b[o..o + 4].try_into().unwrap());
        assert_eq!(
            u64::from_ne_bytes(b[24..32].try_into().unwrap()),
            0xffff_8880_0000_1000
        );
        assert_eq!((u32_at(32), u32_at(36)), (0x1234, 7));
        assert_eq!((u32_at(176), u32_at(184), u32_at(196)), (0, 0, 0));

        let atomic = SendWqe {
            remote: Remote::Atomic {
                addr: 0x1000,
                compare_add: 1,
                swap: 2,
                rkey: 3,
            },
            ..w
        };
        atomic.encode(&mut b);
        let u64_at = |o: usize| u64::from_ne_bytes(b[o..o + 8].try_into().unwrap());
        assert_eq!((u64_at(24), u64_at(32), u64_at(40)), (0x1000, 1, 2));
        assert_eq!(u32::from_ne_bytes(b[48..52].try_into().unwrap()), 3);
    }

    #[test]
    fn recv_layout() {
        let mut b = [0xaau8; RECV_WQE_SIZE as usize];
        encode_recv(&mut b, 42, 4096, 1);
        assert_eq!(u64::from_ne_bytes(b[0..8].try_into().unwrap()), 42);
        assert_eq!(&b[8..16], &[0; 8]);
        let u32_at = |o: usize| u32::from_ne_bytes(b[o..o + 4].try_into().unwrap());
        assert_eq!((u32_at(16), u32_at(20), u32_at(28)), (4096, 4096, 1));
        let mut sg = [0u8; 32];
        put_sge(&mut sg, 0, 1, 0xabcd, 10, 0x55);
        assert_eq!(u64::from_ne_bytes(sg[16..24].try_into().unwrap()), 0xabcd);
        assert_eq!(u32::from_ne_bytes(sg[24..28].try_into().unwrap()), 10);
        assert_eq!(u32::from_ne_bytes(sg[28..32].try_into().unwrap()), 0x55);
        assert_eq!(chk_recv(2, 0, 1), Err(Refusal::Inval));
        assert_eq!(chk_recv(-1, 0, 1), Err(Refusal::Inval));
        assert_eq!(chk_recv(1, MAX_MSG_SZ + 1, 1), Err(Refusal::Inval));
        assert_eq!(chk_recv(1, MAX_MSG_SZ, 1), Ok(()));
    }
}
