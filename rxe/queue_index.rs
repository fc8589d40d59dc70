// SPDX-License-Identifier: GPL-2.0

//! The layout and index arithmetic of the queues the driver shares with its
//! clients (`rxe_queue.h`, `struct rxe_queue_buf` of `rdma_user_rxe.h`).
//!
//! A queue is one buffer: a header holding the element size, the index mask
//! and the producer and consumer indices (each in its own cache line), then
//! a power-of-two number of slots of a power-of-two size. The queue is empty
//! when the indices are equal, so it holds one element fewer than it has
//! slots. Indices are always masked: values read from a buffer user space
//! can write are never trusted to be in range.
//!
//! No kernel dependency: this file is also built by the host test crate.

/// Offset of `log2_elem_size` in `struct rxe_queue_buf`.
pub const LOG2_ELEM_SIZE_OFFSET: usize = 0;
/// Offset of `index_mask`.
pub const INDEX_MASK_OFFSET: usize = 4;
/// Offset of `producer_index` (after `pad_1[30]`).
pub const PRODUCER_OFFSET: usize = 128;
/// Offset of `consumer_index` (after `pad_2[31]`).
pub const CONSUMER_OFFSET: usize = 256;
/// Offset of the first element (after `pad_3[31]`): the header's size.
pub const DATA_OFFSET: usize = 384;

/// Who writes a queue and who reads it, from the point of view of the code
/// touching it (the C driver's `enum queue_type`). A queue is created as
/// [`QueueType::ToClient`] (completion queues) or [`QueueType::FromClient`]
/// (send and receive queues); a kernel consumer or producer (a ULP) works on
/// the same queue as the other end, [`QueueType::ToUlp`] or
/// [`QueueType::FromUlp`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueType {
    /// The driver produces, the client consumes; the driver's side.
    ToClient,
    /// The client produces, the driver consumes; the driver's side.
    FromClient,
    /// A kernel client producing into a [`QueueType::FromClient`] queue.
    FromUlp,
    /// A kernel client consuming from a [`QueueType::ToClient`] queue.
    ToUlp,
}

/// Where the caller of a given [`QueueType`] finds an index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexSource {
    /// The driver's private copy: the driver owns the index, and only ever
    /// stores it to the shared buffer, never reads it back from there (user
    /// space could have changed it).
    Private,
    /// The shared buffer, read with acquire semantics: the other end owns
    /// the index and publishes elements before it.
    SharedAcquire,
    /// The shared buffer, read plainly: the caller owns the index.
    SharedOwned,
}

impl QueueType {
    /// Where the producer index is read from.
    pub fn producer_source(self) -> IndexSource {
        match self {
            Self::FromClient | Self::ToUlp => IndexSource::SharedAcquire,
            Self::ToClient => IndexSource::Private,
            Self::FromUlp => IndexSource::SharedOwned,
        }
    }

    /// Where the consumer index is read from.
    pub fn consumer_source(self) -> IndexSource {
        match self {
            Self::ToClient | Self::FromUlp => IndexSource::SharedAcquire,
            Self::FromClient => IndexSource::Private,
            Self::ToUlp => IndexSource::SharedOwned,
        }
    }

    /// Whether this side produces (advances the producer index).
    pub fn produces(self) -> bool {
        matches!(self, Self::ToClient | Self::FromUlp)
    }
}

/// The shape of a queue's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Log2 of the slot size.
    pub log2_elem_size: u32,
    /// Slots - 1: masks an index, and is the number of elements it holds.
    pub index_mask: u32,
    /// Bytes of the whole buffer (header and slots).
    pub buf_size: usize,
    /// The element size asked for (what a resize copies).
    pub elem_size: usize,
}

impl Layout {
    /// The layout of a queue of at least `num_elem` elements of
    /// `elem_size` bytes (`rxe_queue_init`): slots are padded to at least a
    /// cache line and to a power of two; there is one slot more than
    /// elements, rounded up to a power of two. `None` if it does not fit
    /// the address space or an index.
    pub fn new(num_elem: u32, elem_size: usize, cache_line: usize) -> Option<Self> {
        let slot = elem_size.max(cache_line).checked_next_power_of_two()?;
        let slots = num_elem.checked_add(1)?.checked_next_power_of_two()?;
        let buf_size = (slots as usize)
            .checked_mul(slot)?
            .checked_add(DATA_OFFSET)?;
        Some(Self {
            log2_elem_size: slot.trailing_zeros(),
            index_mask: slots - 1,
            buf_size,
            elem_size,
        })
    }

    /// Elements the queue holds (`*num_elem` after `rxe_queue_init`).
    pub fn capacity(&self) -> u32 {
        self.index_mask
    }

    /// Bytes of a slot.
    pub fn slot_size(&self) -> usize {
        1 << self.log2_elem_size
    }

    /// Offset in the buffer of the slot of `index` (masked).
    #[inline]
    pub fn offset_of(&self, index: u32) -> usize {
        DATA_OFFSET + (((index & self.index_mask) as usize) << self.log2_elem_size)
    }

    /// The index following `index`.
    #[inline]
    pub fn next(&self, index: u32) -> u32 {
        index.wrapping_add(1) & self.index_mask
    }

    /// Elements between consumer `cons` and producer `prod`.
    #[inline]
    pub fn count(&self, prod: u32, cons: u32) -> u32 {
        prod.wrapping_sub(cons) & self.index_mask
    }

    /// Whether there is no element.
    #[inline]
    pub fn empty(&self, prod: u32, cons: u32) -> bool {
        self.count(prod, cons) == 0
    }

    /// Whether no element can be added.
    pub fn full(&self, prod: u32, cons: u32) -> bool {
        prod.wrapping_add(1).wrapping_sub(cons) & self.index_mask == 0
    }

    /// The copies of a resize (`resize_finish`): each element from consumer
    /// `cons` up to producer `prod` of this queue goes to the next slot of
    /// `new` from its producer `new_prod`, as (old index, new index) pairs.
    /// `None` (`EINVAL`) if `new` cannot hold them.
    pub fn resize_moves(
        &self,
        prod: u32,
        cons: u32,
        new: &Layout,
        new_prod: u32,
    ) -> Option<ResizeMoves> {
        let count = self.count(prod, cons);
        if count > new.capacity() {
            return None;
        }
        Some(ResizeMoves {
            old: *self,
            new: *new,
            cons: cons & self.index_mask,
            new_prod: new_prod & new.index_mask,
            left: count,
        })
    }
}

/// The element copies of a resize, see [`Layout::resize_moves`].
#[derive(Clone, Debug)]
pub struct ResizeMoves {
    old: Layout,
    new: Layout,
    cons: u32,
    new_prod: u32,
    left: u32,
}

impl ResizeMoves {
    /// The old queue's consumer index once every element is moved.
    pub fn final_consumer(&self) -> u32 {
        self.cons.wrapping_add(self.left) & self.old.index_mask
    }

    /// The new queue's producer index once every element is moved.
    pub fn final_producer(&self) -> u32 {
        self.new_prod.wrapping_add(self.left) & self.new.index_mask
    }
}

impl Iterator for ResizeMoves {
    type Item = (u32, u32);

    fn next(&mut self) -> Option<(u32, u32)> {
        if self.left == 0 {
            return None;
        }
        let pair = (self.cons, self.new_prod);
        self.cons = self.old.next(self.cons);
        self.new_prod = self.new.next(self.new_prod);
        self.left -= 1;
        Some(pair)
    }
}

/// `PAGE_ALIGN`: the size user space maps (`mminfo.size`).
pub fn page_align(size: usize, page_size: usize) -> Option<usize> {
    size.checked_add(page_size - 1)
        .map(|s| s & !(page_size - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_matches_uapi() {
        // log2_elem_size, index_mask, pad_1[30]; producer_index, pad_2[31];
        // consumer_index, pad_3[31]; data[].
        assert_eq!(PRODUCER_OFFSET, 4 * (2 + 30));
        assert_eq!(CONSUMER_OFFSET, PRODUCER_OFFSET + 4 * (1 + 31));
        assert_eq!(DATA_OFFSET, CONSUMER_OFFSET + 4 * (1 + 31));
    }

    #[test]
    fn layout_rounds_as_c() {
        // A CQ of 1 entry: struct rxe_cqe is 72 bytes -> 128-byte slots, two.
        let l = Layout::new(1, 72, 64).unwrap();
        assert_eq!((l.log2_elem_size, l.index_mask, l.capacity()), (7, 1, 1));
        assert_eq!(l.buf_size, 384 + 2 * 128);
        // Small elements are padded to a cache line.
        let l = Layout::new(16, 8, 64).unwrap();
        assert_eq!((l.log2_elem_size, l.index_mask), (6, 31));
        // A power of two of elements needs twice the slots.
        assert_eq!(Layout::new(256, 64, 64).unwrap().capacity(), 511);
        assert_eq!(Layout::new(255, 64, 64).unwrap().capacity(), 255);
        // num_elem 0 is allowed: one slot, nothing fits.
        let l = Layout::new(0, 64, 64).unwrap();
        assert_eq!((l.index_mask, l.capacity()), (0, 0));
        assert_eq!(Layout::new(u32::MAX, 64, 64), None);
        assert_eq!(Layout::new(10, usize::MAX / 2, 64), None);
    }

    #[test]
    fn index_math() {
        let l = Layout::new(3, 64, 64).unwrap();
        assert_eq!(l.index_mask, 3);
        assert!(l.empty(0, 0) && !l.full(0, 0));
        assert_eq!(l.count(3, 0), 3);
        assert!(l.full(3, 0) && l.full(0, 1) && l.full(2, 3));
        assert!(!l.full(2, 0));
        assert_eq!(l.count(1, 3), 2);
        assert_eq!(l.next(3), 0);
        assert_eq!(l.offset_of(5), DATA_OFFSET + 64);
        // Garbage in the high bits (user space wrote them) is masked off.
        assert_eq!(l.count(0xffff_fff1, 0x10), 1);
        assert!(l.empty(0x104, 0));
    }

    #[test]
    fn sources_follow_ownership() {
        use IndexSource::*;
        assert_eq!(QueueType::ToClient.producer_source(), Private);
        assert_eq!(QueueType::ToClient.consumer_source(), SharedAcquire);
        assert_eq!(QueueType::FromClient.producer_source(), SharedAcquire);
        assert_eq!(QueueType::FromClient.consumer_source(), Private);
        assert_eq!(QueueType::FromUlp.producer_source(), SharedOwned);
        assert_eq!(QueueType::FromUlp.consumer_source(), SharedAcquire);
        assert_eq!(QueueType::ToUlp.producer_source(), SharedAcquire);
        assert_eq!(QueueType::ToUlp.consumer_source(), SharedOwned);
        assert!(QueueType::ToClient.produces() && QueueType::FromUlp.produces());
        assert!(!QueueType::FromClient.produces() && !QueueType::ToUlp.produces());
    }

    #[test]
    fn resize_copies_in_order() {
        let old = Layout::new(3, 64, 64).unwrap();
        let new = Layout::new(7, 64, 64).unwrap();
        // Three elements wrapping around the end of the old queue.
        let m = old.resize_moves(1, 2, &new, 0).unwrap();
        assert_eq!((m.final_consumer(), m.final_producer()), (1, 3));
        assert_eq!(m.collect::<Vec<_>>(), [(2, 0), (3, 1), (0, 2)]);
        // Shrinking below the count is refused; to exactly it is not.
        let small = Layout::new(1, 64, 64).unwrap();
        assert!(old.resize_moves(1, 2, &small, 0).is_none());
        assert_eq!(old.resize_moves(3, 2, &small, 0).unwrap().count(), 1);
        // An empty queue moves nothing.
        let m = old.resize_moves(2, 2, &small, 0).unwrap();
        assert_eq!((m.final_consumer(), m.final_producer()), (2, 0));
        assert_eq!(m.count(), 0);
    }

    #[test]
    fn page_alignment() {
        assert_eq!(page_align(640, 4096), Some(4096));
        assert_eq!(page_align(4096, 4096), Some(4096));
        assert_eq!(page_align(4097, 4096), Some(8192));
        assert_eq!(page_align(usize::MAX, 4096), None);
    }
}
