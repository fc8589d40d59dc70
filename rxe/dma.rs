// SPDX-License-Identifier: GPL-2.0

//! The scatter/gather cursor of a work queue entry (`struct rxe_dma_info`
//! of uapi `rdma_user_rxe.h`) and the arithmetic of walking it, as the C
//! driver's `copy_data` and `advance_dma_data` do (`rxe_mr.c`).
//!
//! A send or receive WQE ends with its DMA state: the message length, the
//! bytes still to go (`resid`), the entry being consumed (`cur_sge`) and
//! the offset in it (`sge_offset`), then the entries (`struct rxe_sge`) or
//! the inline data. The state lives in the WQE because user space's queues
//! hold it too; whoever copies data reads it with [`DmaInfo::decode`],
//! moves it with [`walk`], [`advance`] or [`DmaInfo::take_inline`], and
//! writes it back with [`DmaInfo::encode`].
//!
//! A WQE in a user queue may hold anything: every entry index is checked
//! against the bytes the element has (an entry beyond them is a malformed
//! WQE, [`CopyError::Inval`]) and all arithmetic is checked or wrapping.
//!
//! No kernel dependency: also built by the host test crate (`tests/host`).

use crate::qp_attr::SGE_SIZE;

/// Bytes of `struct rxe_dma_info` before its entries.
pub const DMA_INFO_SIZE: usize = 24;

/// Why a copy to or from a WQE's memory failed, as the C driver's errnos.
///
/// The callers turn them into completion statuses or responder states as
/// the C driver does: see [`CopyError::send_status`] (requester),
/// [`CopyError::is_length`] (responder's receive: `RESPST_ERR_LENGTH` or
/// else `RESPST_ERR_MALFORMED_WQE`); the completer reports any of them as
/// `IB_WC_LOC_PROT_ERR`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyError {
    /// `EINVAL`: more bytes than the WQE has left, an lkey that names no
    /// valid region of the PD with the access needed, a range outside its
    /// region, or an entry index beyond the WQE.
    Inval,
    /// `ENOSPC`: the entries end before the bytes do.
    NoSpc,
    /// `EFAULT`: the region maps no page at an address in its range.
    Fault,
}

/// `enum ib_wc_status` values the data path reports.
pub mod wc_status {
    /// `IB_WC_SUCCESS`.
    pub const SUCCESS: u32 = 0;
    /// `IB_WC_LOC_LEN_ERR`.
    pub const LOC_LEN_ERR: u32 = 1;
    /// `IB_WC_LOC_QP_OP_ERR`.
    pub const LOC_QP_OP_ERR: u32 = 2;
    /// `IB_WC_LOC_PROT_ERR`.
    pub const LOC_PROT_ERR: u32 = 4;
    /// `IB_WC_MW_BIND_ERR`.
    pub const MW_BIND_ERR: u32 = 6;
}

impl CopyError {
    /// The status of a send WQE whose payload could not be gathered
    /// (`rxe_requester` after `finish_packet`): `IB_WC_LOC_PROT_ERR` for
    /// `EFAULT`, else `IB_WC_LOC_QP_OP_ERR`.
    pub fn send_status(self) -> u32 {
        match self {
            Self::Fault => wc_status::LOC_PROT_ERR,
            Self::Inval | Self::NoSpc => wc_status::LOC_QP_OP_ERR,
        }
    }

    /// Whether the responder reports this receive failure as a length
    /// error (`send_data_in`: `ENOSPC` is `RESPST_ERR_LENGTH`, anything
    /// else `RESPST_ERR_MALFORMED_WQE`).
    pub fn is_length(self) -> bool {
        self == Self::NoSpc
    }
}

fn get32(b: &[u8], off: usize) -> Option<u32> {
    let bytes = b.get(off..off.checked_add(4)?)?;
    Some(u32::from_ne_bytes(bytes.try_into().ok()?))
}

fn put32(b: &mut [u8], off: usize, v: u32) -> Option<()> {
    // An array store, not `copy_from_slice` (an out-of-line call and a
    // `memcpy` in the kernel's `core`).
    *b.get_mut(off..)?.first_chunk_mut::<4>()? = v.to_ne_bytes();
    Some(())
}

/// A scatter/gather entry (`struct rxe_sge`, as `struct ib_sge`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sge {
    /// Address in the region of `lkey`.
    pub addr: u64,
    /// Bytes.
    pub length: u32,
    /// The local key of the region.
    pub lkey: u32,
}

impl Sge {
    /// Entry `i` of the list in `list` (the bytes after the DMA state);
    /// `None` if the list has no room for it.
    pub fn decode(list: &[u8], i: u32) -> Option<Self> {
        let at = (i as usize).checked_mul(SGE_SIZE as usize)?;
        let e = list.get(at..at.checked_add(SGE_SIZE as usize)?)?;
        Some(Self {
            addr: u64::from_ne_bytes(e[0..8].try_into().ok()?),
            length: u32::from_ne_bytes(e[8..12].try_into().ok()?),
            lkey: u32::from_ne_bytes(e[12..16].try_into().ok()?),
        })
    }
}

/// Bytes of the five words of [`DmaInfo`] (its reserved word follows).
const STATE_WORDS_SIZE: usize = 20;

/// The DMA state of a WQE (`struct rxe_dma_info` without its entries).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DmaInfo {
    /// Bytes of the message.
    pub length: u32,
    /// Bytes still to copy.
    pub resid: u32,
    /// The entry being consumed.
    pub cur_sge: u32,
    /// Entries in the list.
    pub num_sge: u32,
    /// Bytes of the current entry (or of the inline data) consumed.
    pub sge_offset: u32,
}

impl DmaInfo {
    /// The state at the start of `b`; `None` if `b` is too short.
    pub fn decode(b: &[u8]) -> Option<Self> {
        // The words are read from an array of their size: one length
        // check for the five (the requester decodes this once a packet).
        let b: &[u8] = b.first_chunk::<STATE_WORDS_SIZE>()?;
        Some(Self {
            length: get32(b, 0)?,
            resid: get32(b, 4)?,
            cur_sge: get32(b, 8)?,
            num_sge: get32(b, 12)?,
            sge_offset: get32(b, 16)?,
        })
    }

    /// Writes the state at the start of `b` (its reserved word is left
    /// alone); `None` if `b` is too short.
    pub fn encode(&self, b: &mut [u8]) -> Option<()> {
        let b: &mut [u8] = b.first_chunk_mut::<STATE_WORDS_SIZE>()?;
        put32(b, 0, self.length)?;
        put32(b, 4, self.resid)?;
        put32(b, 8, self.cur_sge)?;
        put32(b, 12, self.num_sge)?;
        put32(b, 16, self.sge_offset)
    }

    /// Sum of the lengths of the `num_sge` entries in `list` (the room a
    /// UD receive offers, `rxe_resp_check_length`); entries beyond the
    /// list count as empty.
    pub fn total_length(&self, list: &[u8]) -> u64 {
        (0..self.num_sge)
            .map_while(|i| Sge::decode(list, i))
            .map(|s| u64::from(s.length))
            .sum()
    }

    /// Copies the next `out.len()` bytes of inline data (the bytes after
    /// the DMA state, `inline` here) to `out` and consumes them, as
    /// `finish_packet` does for `IB_SEND_INLINE`. `Inval` if they are not
    /// all in `inline` (a corrupt user WQE; the C driver does not check).
    pub fn take_inline(&mut self, inline: &[u8], out: &mut [u8]) -> Result<(), CopyError> {
        let start = self.sge_offset as usize;
        let end = start.checked_add(out.len()).ok_or(CopyError::Inval)?;
        let src = inline.get(start..end).ok_or(CopyError::Inval)?;
        out.copy_from_slice(src);
        let n = out.len() as u32;
        self.resid = self.resid.wrapping_sub(n);
        self.sge_offset = self.sge_offset.wrapping_add(n);
        Ok(())
    }

    /// The 8 bytes of an ATOMIC_WRITE (`dma.atomic_wr`, at the start of
    /// `data`), consumed (`finish_packet`). `Inval` if `data` is short.
    pub fn take_atomic_write(&mut self, data: &[u8]) -> Result<[u8; 8], CopyError> {
        let v: [u8; 8] = data
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .ok_or(CopyError::Inval)?;
        self.resid = self.resid.wrapping_sub(8);
        Ok(v)
    }
}

/// One piece of a walk: `buf` (a range of the caller's buffer) is copied
/// to or from `iova` in the region of `sge.lkey`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// The entry the bytes are in.
    pub sge: Sge,
    /// The address in the region.
    pub iova: u64,
    /// Offset in the caller's buffer.
    pub buf_start: usize,
    /// Bytes (never 0).
    pub len: usize,
}

/// Walks `length` bytes of the entries in `list` from the cursor `dma`,
/// calling `copy` with each non-empty piece in order (`copy_data`'s loop;
/// the caller looks the lkey up and copies). On success the cursor has
/// moved past the bytes; on an error it is unchanged.
///
/// `Inval` if `length` exceeds `resid` or an entry is beyond `list`;
/// `NoSpc` if the entries end first; `copy`'s error as it returned it.
pub fn walk(
    dma: &mut DmaInfo,
    list: &[u8],
    length: usize,
    mut copy: impl FnMut(Chunk) -> Result<(), CopyError>,
) -> Result<(), CopyError> {
    if length == 0 {
        return Ok(());
    }
    if length > dma.resid as usize {
        return Err(CopyError::Inval);
    }
    let mut cur = dma.cur_sge;
    let mut offset = dma.sge_offset;
    let mut sge = Sge::decode(list, cur).ok_or(CopyError::Inval)?;
    let mut done = 0usize;
    while done < length {
        if offset >= sge.length {
            cur = cur.checked_add(1).ok_or(CopyError::NoSpc)?;
            offset = 0;
            if cur >= dma.num_sge {
                return Err(CopyError::NoSpc);
            }
            sge = Sge::decode(list, cur).ok_or(CopyError::Inval)?;
            continue;
        }
        let n = (length - done).min((sge.length - offset) as usize);
        copy(Chunk {
            sge,
            iova: sge.addr.wrapping_add(u64::from(offset)),
            buf_start: done,
            len: n,
        })?;
        // `n` is at most `sge.length - offset`, a u32.
        offset += n as u32;
        done += n;
    }
    dma.cur_sge = cur;
    dma.sge_offset = offset;
    dma.resid -= length as u32;
    Ok(())
}

/// Moves the cursor over `length` bytes without copying
/// (`advance_dma_data`, for a retransmission that resumes mid-message).
/// `NoSpc` if the entries end first, `Inval` for an entry beyond `list`;
/// the cursor is unchanged on an error.
pub fn advance(dma: &mut DmaInfo, list: &[u8], length: usize) -> Result<(), CopyError> {
    let resid = dma.resid;
    let mut d = DmaInfo {
        resid: u32::MAX,
        ..*dma
    };
    walk(&mut d, list, length, |_| Ok(()))?;
    // As the C driver, `resid` may wrap if asked to skip more than is left.
    dma.cur_sge = d.cur_sge;
    dma.sge_offset = d.sge_offset;
    dma.resid = resid.wrapping_sub(length as u32);
    Ok(())
}

/// Moves the entry cursor (`cur_sge`, `sge_offset`) over `skip` bytes,
/// leaving `resid` alone: for a retransmission whose `resid` was already
/// set (the requester's `set_position`), where the C driver's
/// `advance_dma_data` runs on a cursor reset to the start. Errors as
/// [`advance`]; the cursor is unchanged on an error.
pub fn seek(dma: &mut DmaInfo, list: &[u8], skip: usize) -> Result<(), CopyError> {
    let resid = dma.resid;
    advance(dma, list, skip)?;
    dma.resid = resid;
    Ok(())
}

/// The DMA state of the WQE in `wqe` (its whole element) at `dma_off`,
/// and the bytes after it (entries or inline data); `Inval` if the
/// element is too short.
pub fn split_wqe(
    wqe: &mut [u8],
    dma_off: usize,
) -> Result<(DmaInfo, &mut [u8], &mut [u8]), CopyError> {
    let rest = wqe.get_mut(dma_off..).ok_or(CopyError::Inval)?;
    if rest.len() < DMA_INFO_SIZE {
        return Err(CopyError::Inval);
    }
    let (head, list) = rest.split_at_mut(DMA_INFO_SIZE);
    let dma = DmaInfo::decode(head).ok_or(CopyError::Inval)?;
    Ok((dma, head, list))
}

/// [`seek`] on the WQE in `wqe` (its whole element, DMA state at
/// `dma_off`), in place.
pub fn wqe_seek(wqe: &mut [u8], dma_off: usize, skip: usize) -> Result<(), CopyError> {
    let (mut dma, head, list) = split_wqe(wqe, dma_off)?;
    seek(&mut dma, list, skip)?;
    dma.encode(head).ok_or(CopyError::Inval)
}

/// [`DmaInfo::take_inline`] on the WQE in `wqe` (its whole element, DMA
/// state at `dma_off`), in place.
pub fn wqe_take_inline(wqe: &mut [u8], dma_off: usize, out: &mut [u8]) -> Result<(), CopyError> {
    let (mut dma, head, list) = split_wqe(wqe, dma_off)?;
    dma.take_inline(list, out)?;
    dma.encode(head).ok_or(CopyError::Inval)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(sges: &[(u64, u32, u32)]) -> Vec<u8> {
        let mut b = vec![0u8; sges.len() * SGE_SIZE as usize];
        for (i, &(addr, length, lkey)) in sges.iter().enumerate() {
            crate::wqe::put_sge(&mut b, 0, i, addr, length, lkey);
        }
        b
    }

    fn dma(length: u32, num_sge: u32) -> DmaInfo {
        DmaInfo {
            length,
            resid: length,
            cur_sge: 0,
            num_sge,
            sge_offset: 0,
        }
    }

    fn chunks(d: &mut DmaInfo, l: &[u8], len: usize) -> Result<Vec<Chunk>, CopyError> {
        let mut v = Vec::new();
        walk(d, l, len, |c| {
            v.push(c);
            Ok(())
        })?;
        Ok(v)
    }

    #[test]
    fn layout() {
        let mut b = [0u8; 200];
        crate::wqe::encode_recv((&mut b[..40]).try_into().unwrap(), 1, 300, 2);
        let d = DmaInfo::decode(&b[crate::wqe::recv_off::DMA..]).unwrap();
        assert_eq!(d, dma(300, 2));
        let mut e = [0xffu8; DMA_INFO_SIZE];
        let d = DmaInfo {
            length: 1,
            resid: 2,
            cur_sge: 3,
            num_sge: 4,
            sge_offset: 5,
        };
        d.encode(&mut e).unwrap();
        assert_eq!(DmaInfo::decode(&e), Some(d));
        // The reserved word is not touched.
        assert_eq!(&e[20..24], &[0xff; 4]);
        assert_eq!(DmaInfo::decode(&e[..19]), None);
        assert_eq!(d.encode(&mut [0u8; 19]), None);
        assert_eq!(
            crate::wqe::send_off::DATA - crate::wqe::send_off::DMA,
            DMA_INFO_SIZE
        );
        assert_eq!(
            crate::wqe::recv_off::DATA - crate::wqe::recv_off::DMA,
            DMA_INFO_SIZE
        );
        let l = list(&[(0x1000, 10, 0x100), (0x2000, 20, 0x200)]);
        assert_eq!(
            Sge::decode(&l, 1),
            Some(Sge {
                addr: 0x2000,
                length: 20,
                lkey: 0x200
            })
        );
        assert_eq!(Sge::decode(&l, 2), None);
        assert_eq!(Sge::decode(&l, u32::MAX), None);
        assert_eq!(dma(0, 2).total_length(&l), 30);
        assert_eq!(dma(0, 5).total_length(&l), 30);
    }

    #[test]
    fn gather_across_entries() {
        let l = list(&[(0x1000, 10, 1), (0x2000, 0, 2), (0x3000, 20, 3)]);
        let mut d = dma(30, 3);
        let c = chunks(&mut d, &l, 4).unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].iova, c[0].buf_start, c[0].len), (0x1000, 0, 4));
        assert_eq!((d.cur_sge, d.sge_offset, d.resid), (0, 4, 26));
        // The rest of entry 0, the empty entry skipped, part of entry 2.
        let c = chunks(&mut d, &l, 16).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[0].sge.lkey, c[0].iova, c[0].buf_start, c[0].len),
            (1, 0x1004, 0, 6)
        );
        assert_eq!(
            (c[1].sge.lkey, c[1].iova, c[1].buf_start, c[1].len),
            (3, 0x3000, 6, 10)
        );
        assert_eq!((d.cur_sge, d.sge_offset, d.resid), (2, 10, 10));
        // Exactly to the end: the cursor stays on the last entry.
        let c = chunks(&mut d, &l, 10).unwrap();
        assert_eq!((c[0].iova, c[0].len), (0x300a, 10));
        assert_eq!((d.cur_sge, d.sge_offset, d.resid), (2, 20, 0));
        // Nothing more to give.
        assert_eq!(chunks(&mut d, &l, 1), Err(CopyError::Inval));
        assert_eq!(chunks(&mut d, &l, 0), Ok(vec![]));
    }

    #[test]
    fn errors_leave_the_cursor() {
        let l = list(&[(0x1000, 4, 1), (0x2000, 4, 2)]);
        // resid larger than the entries: they run out.
        let mut d = DmaInfo {
            resid: 100,
            ..dma(8, 2)
        };
        let before = d;
        assert_eq!(chunks(&mut d, &l, 9), Err(CopyError::NoSpc));
        assert_eq!(d, before);
        // num_sge beyond the list's room: a malformed WQE.
        let mut d = DmaInfo {
            resid: 100,
            ..dma(8, 3)
        };
        assert_eq!(chunks(&mut d, &l, 9), Err(CopyError::Inval));
        // cur_sge beyond the list.
        let mut d = DmaInfo {
            cur_sge: 7,
            ..dma(8, 2)
        };
        assert_eq!(chunks(&mut d, &l, 1), Err(CopyError::Inval));
        let mut d = DmaInfo {
            cur_sge: u32::MAX,
            sge_offset: u32::MAX,
            ..dma(8, u32::MAX)
        };
        assert_eq!(chunks(&mut d, &l, 1), Err(CopyError::Inval));
        // The copy's own error comes back, the cursor unchanged.
        let mut d = dma(8, 2);
        let r = walk(&mut d, &l, 6, |c| {
            if c.sge.lkey == 2 {
                Err(CopyError::Fault)
            } else {
                Ok(())
            }
        });
        assert_eq!(r, Err(CopyError::Fault));
        assert_eq!(d, dma(8, 2));
        // No entries at all: anything is too much.
        let mut d = dma(0, 0);
        assert_eq!(chunks(&mut d, &[], 1), Err(CopyError::Inval));
        assert_eq!(chunks(&mut d, &[], 0), Ok(vec![]));
    }

    #[test]
    fn scatter_many_packets() {
        // A receive of 3 entries filled by packets of 7 bytes: every byte
        // lands once, in order.
        let l = list(&[(100, 5, 1), (200, 9, 2), (300, 6, 3)]);
        let mut d = dma(20, 3);
        let mut seen = Vec::new();
        let mut off = 0;
        while d.resid > 0 {
            let n = (d.resid as usize).min(7);
            for c in chunks(&mut d, &l, n).unwrap() {
                for i in 0..c.len {
                    seen.push((c.iova + i as u64, off + c.buf_start + i));
                }
            }
            off += n;
        }
        let addrs: Vec<u64> = seen.iter().map(|s| s.0).collect();
        let want: Vec<u64> = (100..105).chain(200..209).chain(300..306).collect();
        assert_eq!(addrs, want);
        assert!(seen.iter().enumerate().all(|(i, s)| s.1 == i));
    }

    #[test]
    fn advance_skips() {
        let l = list(&[(0x1000, 4, 1), (0x2000, 4, 2), (0x3000, 4, 3)]);
        let mut d = dma(12, 3);
        advance(&mut d, &l, 6).unwrap();
        assert_eq!((d.cur_sge, d.sge_offset, d.resid), (1, 2, 6));
        let c = chunks(&mut d, &l, 3).unwrap();
        assert_eq!(
            (c[0].iova, c[0].len, c[1].iova, c[1].len),
            (0x2002, 2, 0x3000, 1)
        );
        assert_eq!(advance(&mut d, &l, 4), Err(CopyError::NoSpc));
        assert_eq!((d.cur_sge, d.sge_offset, d.resid), (2, 1, 3));
        advance(&mut d, &l, 0).unwrap();
        assert_eq!(d.resid, 3);
    }

    #[test]
    fn in_place() {
        use crate::qp_attr::SEND_WQE_SIZE;
        use crate::wqe::{
            put_sge,
            send_off,
            wr_mask,
            Remote,
            SendWqe, //
        };
        let mut b = vec![0u8; SEND_WQE_SIZE as usize + 3 * SGE_SIZE as usize];
        let w = SendWqe {
            wr_id: 1,
            opcode: crate::wqe::opcode::SEND,
            send_flags: 0,
            ex: 0,
            remote: Remote::None,
            iova: 0,
            mask: wr_mask::SEND,
            length: 12,
            num_sge: 3,
            ssn: 0,
        };
        w.encode((&mut b[..SEND_WQE_SIZE as usize]).try_into().unwrap());
        for i in 0..3 {
            put_sge(&mut b, send_off::DATA, i, 0x1000 * (i as u64 + 1), 4, 1);
        }
        // A retransmission from byte 6: resid set by the requester, the
        // cursor reset, then moved.
        b[send_off::DMA + 4..send_off::DMA + 8].copy_from_slice(&6u32.to_ne_bytes());
        wqe_seek(&mut b, send_off::DMA, 6).unwrap();
        let (d, _, l) = split_wqe(&mut b, send_off::DMA).unwrap();
        assert_eq!((d.resid, d.cur_sge, d.sge_offset), (6, 1, 2));
        let mut d2 = d;
        let c = chunks(&mut d2, l, 6).unwrap();
        assert_eq!(
            (c[0].iova, c[0].len, c[1].iova, c[1].len),
            (0x2002, 2, 0x3000, 4)
        );
        assert_eq!(wqe_seek(&mut b, send_off::DMA, 7), Err(CopyError::NoSpc));
        assert_eq!(
            split_wqe(&mut b[..200], send_off::DMA).err(),
            Some(CopyError::Inval)
        );
        assert_eq!(split_wqe(&mut b, usize::MAX).err(), Some(CopyError::Inval));

        // Inline data in place.
        let mut b = vec![0u8; SEND_WQE_SIZE as usize + 16];
        w.encode((&mut b[..SEND_WQE_SIZE as usize]).try_into().unwrap());
        for (i, x) in b[send_off::DATA..].iter_mut().enumerate() {
            *x = i as u8;
        }
        let mut out = [0u8; 5];
        wqe_take_inline(&mut b, send_off::DMA, &mut out).unwrap();
        wqe_take_inline(&mut b, send_off::DMA, &mut out).unwrap();
        assert_eq!(out, [5, 6, 7, 8, 9]);
        let (d, _, _) = split_wqe(&mut b, send_off::DMA).unwrap();
        assert_eq!((d.resid, d.sge_offset), (2, 10));
        assert_eq!(
            wqe_take_inline(&mut b, send_off::DMA, &mut [0u8; 7]),
            Err(CopyError::Inval)
        );
    }

    #[test]
    fn inline_data() {
        let data: Vec<u8> = (0..64).collect();
        let mut d = dma(10, 0);
        let mut out = [0u8; 4];
        d.take_inline(&data, &mut out).unwrap();
        assert_eq!(out, [0, 1, 2, 3]);
        let mut out = [0u8; 6];
        d.take_inline(&data, &mut out).unwrap();
        assert_eq!(out, [4, 5, 6, 7, 8, 9]);
        assert_eq!((d.resid, d.sge_offset), (0, 10));
        let mut d = DmaInfo {
            sge_offset: 62,
            ..dma(10, 0)
        };
        assert_eq!(d.take_inline(&data, &mut [0u8; 3]), Err(CopyError::Inval));
        let mut d = DmaInfo {
            sge_offset: u32::MAX,
            ..dma(10, 0)
        };
        assert_eq!(d.take_inline(&data, &mut [0u8; 3]), Err(CopyError::Inval));
        let mut d = dma(8, 0);
        assert_eq!(
            d.take_atomic_write(&data).unwrap(),
            [0, 1, 2, 3, 4, 5, 6, 7]
        );
        assert_eq!(d.resid, 0);
        assert_eq!(d.take_atomic_write(&data[..7]), Err(CopyError::Inval));
    }

    #[test]
    fn statuses() {
        assert_eq!(CopyError::Fault.send_status(), wc_status::LOC_PROT_ERR);
        assert_eq!(CopyError::Inval.send_status(), wc_status::LOC_QP_OP_ERR);
        assert_eq!(CopyError::NoSpc.send_status(), wc_status::LOC_QP_OP_ERR);
        assert!(CopyError::NoSpc.is_length());
        assert!(!CopyError::Inval.is_length());
    }

    #[test]
    fn random_walks_cover_each_byte_once() {
        // A small xorshift: list shapes and packet sizes at random.
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |m: u64| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s % m
        };
        for _ in 0..500 {
            let n = 1 + rnd(6) as usize;
            let sges: Vec<(u64, u32, u32)> = (0..n)
                .map(|i| ((i as u64 + 1) << 20, rnd(50) as u32, i as u32))
                .collect();
            let total: u32 = sges.iter().map(|s| s.1).sum();
            let l = list(&sges);
            let mut d = dma(total, n as u32);
            let mut got = Vec::new();
            while d.resid > 0 {
                let len = 1 + rnd(u64::from(d.resid)) as usize;
                let before = got.len();
                for c in chunks(&mut d, &l, len).unwrap() {
                    assert!(c.len > 0);
                    assert_eq!(before + c.buf_start, got.len());
                    got.extend((0..c.len as u64).map(|i| c.iova + i));
                }
                assert_eq!(got.len() - before, len);
            }
            let want: Vec<u64> = sges
                .iter()
                .flat_map(|&(a, l, _)| a..a + u64::from(l))
                .collect();
            assert_eq!(got, want);
        }
    }
}
