// SPDX-License-Identifier: GPL-2.0

//! The circular queues the driver shares with its clients: completion
//! queues, send queues, receive queues and shared receive queues (the C
//! driver's `rxe_queue`).
//!
//! A [`Queue`] is a [`QueueBuf`] laid out as `struct rxe_queue_buf` (see
//! [`crate::queue_index`]) plus the driver's view of it: the layout, whether
//! it goes to or comes from the client, and the driver's private copy of
//! the index it owns (user space may overwrite the shared copy; the driver
//! never reads its own index back from there).
//!
//! # Using a queue
//!
//! The owner of a queue keeps it under a lock (`SpinLockIrq<Queue>`, taken
//! by both ends that the kernel runs: the transport and a kernel ULP's verb),
//! since advancing an index takes `&mut self`. Every method takes the
//! [`QueueType`] of the caller, as the C inlines do:
//!
//! - A completion queue is created [`QueueType::ToClient`], elements of
//!   `struct rxe_cqe` size ([`Queue::new`]). The completer/responder post
//!   with `ToClient` (check [`Queue::full`], [`Queue::write`] at
//!   [`Queue::producer`], then [`Queue::advance_producer`]); a kernel
//!   consumer's `poll_cq` uses [`QueueType::ToUlp`] ([`Queue::head`],
//!   [`Queue::read`], [`Queue::advance_consumer`]).
//! - A send queue is created [`QueueType::FromClient`] with elements of
//!   `size_of::<rxe_send_wqe>() + max(max_sge * size_of::<ib_sge>(),
//!   max_inline)` bytes (`rxe_qp.c`'s `rxe_init_sq`); the requester reads
//!   WQEs at indices from [`Queue::consumer`] onwards (it keeps its own
//!   cursor), writes their state back with [`Queue::write`] (at a byte
//!   offset inside the element), and the completer retires them with
//!   [`Queue::advance_consumer`]. `post_send` of a kernel ULP produces with
//!   [`QueueType::FromUlp`].
//! - A receive queue or shared receive queue is created `FromClient` with
//!   elements of `size_of::<rxe_recv_wqe>() + max_sge * size_of::<ib_sge>()`;
//!   `post_recv` of a kernel ULP produces with `FromUlp`, the responder
//!   consumes with `FromClient` ([`Queue::head`], then
//!   [`Queue::advance_consumer`]).
//!
//! Element accessors take an index (masked, so any value is in bounds) and
//! a byte offset inside the element; a `T` that does not fit the element
//! is refused with `EINVAL`. Elements are copied in and out: user space
//! may change a mapped element at any time, so what is read must be checked
//! (`num_sge <= max_sge`, ...) after the copy, as the C driver does.
//!
//! For user space, [`Queue::map_user`] offers the buffer for `mmap()` and
//! returns the `mminfo` the create response carries; keep the returned
//! [`UserMapping`] out of the queue's lock and drop it in the object's
//! destroy op (or when a resize replaces the queue).
//!
//! A resize is two steps as in the C driver: make the new queue and its
//! mapping (sleeping, outside the lock), then move the elements with the
//! lock held ([`Queue::resize_finish`]).

use crate::{
    queue_index::{
        IndexSource,
        Layout,
        QueueType,
        CONSUMER_OFFSET,
        INDEX_MASK_OFFSET,
        LOG2_ELEM_SIZE_OFFSET,
        PRODUCER_OFFSET, //
    },
    rdma::mmap::{
        cache_line_size,
        MmInfo,
        QueueBuf,
        UserContext,
        UserMapping, //
    },
};
use kernel::{
    prelude::*,
    sync::Arc,
    transmute::{
        AsBytes,
        FromBytes, //
    },
};

/// The producer index of a queue the driver consumes, read without the
/// queue's lock: the word in the shared header, loaded with acquire as
/// [`Queue::producer`] does for [`QueueType::FromClient`] (the client, or
/// a kernel ULP's `post_send` under the lock, stores it with release after
/// the element). For a consumer that only asks whether an element follows
/// an index it holds itself, as the C driver's requester reads the index
/// without a lock.
///
/// The index mask is the queue's [`Queue::capacity`], which its owner
/// keeps anyway (the mask in the shared header is user space's to
/// overwrite).
pub(crate) struct ProducerIndex {
    buf: Arc<QueueBuf>,
}

impl ProducerIndex {
    /// The producer index (`queue_get_producer` for `FromClient`) of the
    /// queue of capacity `capacity`.
    #[inline]
    pub(crate) fn get(&self, capacity: u32) -> u32 {
        // The offset is a constant inside the header: the load cannot fail.
        self.buf.load_acquire(PRODUCER_OFFSET).unwrap_or(0) & capacity
    }
}

/// A queue shared between the driver and a client.
pub(crate) struct Queue {
    buf: Arc<QueueBuf>,
    layout: Layout,
    /// [`QueueType::ToClient`] or [`QueueType::FromClient`].
    kind: QueueType,
    /// The driver's own index: the producer of a `ToClient` queue, the
    /// consumer of a `FromClient` one.
    index: u32,
}

impl Queue {
    /// A queue of at least `num_elem` elements of `elem_size` bytes, of
    /// `kind` [`QueueType::ToClient`] or [`QueueType::FromClient`]
    /// (`rxe_queue_init`). Its [`Queue::capacity`] is what the verb reports
    /// back (`max_wr`, `cqe`). `ENOMEM` if it cannot be allocated.
    pub(crate) fn new(num_elem: u32, elem_size: usize, kind: QueueType) -> Result<Self> {
        let layout = Layout::new(num_elem, elem_size, cache_line_size()).ok_or(ENOMEM)?;
        let buf = QueueBuf::new(layout.buf_size)?;
        buf.store(LOG2_ELEM_SIZE_OFFSET, layout.log2_elem_size)?;
        buf.store(INDEX_MASK_OFFSET, layout.index_mask)?;
        Ok(Self {
            buf,
            layout,
            kind,
            index: 0,
        })
    }

    /// Elements it holds at most.
    pub(crate) fn capacity(&self) -> u32 {
        self.layout.capacity()
    }

    /// The element size it was created with.
    pub(crate) fn elem_size(&self) -> usize {
        self.layout.elem_size
    }

    /// Its producer index, readable without the queue's lock (a
    /// [`QueueType::FromClient`] queue's, which is never resized).
    pub(crate) fn producer_index(&self) -> ProducerIndex {
        ProducerIndex {
            buf: self.buf.clone(),
        }
    }

    /// Offers the buffer to the user process of `ctx` for `mmap()` (see the
    /// module docs).
    pub(crate) fn map_user(&self, ctx: &UserContext<'_>) -> Result<(UserMapping, MmInfo)> {
        UserMapping::new(ctx, &self.buf)
    }

    fn read_index(&self, source: IndexSource, offset: usize) -> u32 {
        // The offsets are constants inside the header: the loads cannot fail.
        match source {
            IndexSource::Private => self.index,
            IndexSource::SharedAcquire => self.buf.load_acquire(offset).unwrap_or(0),
            IndexSource::SharedOwned => self.buf.load(offset).unwrap_or(0),
        }
    }

    /// The producer index as side `t` sees it (`queue_get_producer`).
    pub(crate) fn producer(&self, t: QueueType) -> u32 {
        self.read_index(t.producer_source(), PRODUCER_OFFSET) & self.layout.index_mask
    }

    /// The consumer index as side `t` sees it (`queue_get_consumer`).
    pub(crate) fn consumer(&self, t: QueueType) -> u32 {
        self.read_index(t.consumer_source(), CONSUMER_OFFSET) & self.layout.index_mask
    }

    /// Elements in the queue.
    pub(crate) fn count(&self, t: QueueType) -> u32 {
        self.layout.count(self.producer(t), self.consumer(t))
    }

    /// Whether it holds no element.
    pub(crate) fn empty(&self, t: QueueType) -> bool {
        self.count(t) == 0
    }

    /// Whether no element can be added.
    pub(crate) fn full(&self, t: QueueType) -> bool {
        self.layout.full(self.producer(t), self.consumer(t))
    }

    /// The index of the oldest element, if any (`queue_head`).
    pub(crate) fn head(&self, t: QueueType) -> Option<u32> {
        let cons = self.consumer(t);
        (!self.layout.empty(self.producer(t), cons)).then_some(cons)
    }

    /// The index following `index`.
    pub(crate) fn next_index(&self, index: u32) -> u32 {
        self.layout.next(index)
    }

    /// Publishes the element at the producer index (`queue_advance_producer`).
    /// Only a producing side (`ToClient`, `FromUlp`) may; others get
    /// `EINVAL` (a warning in C).
    pub(crate) fn advance_producer(&mut self, t: QueueType) -> Result {
        let prod = self.layout.next(self.producer(t));
        match t {
            QueueType::ToClient => {
                self.index = prod;
                self.buf.store_release(PRODUCER_OFFSET, prod)
            }
            QueueType::FromUlp => self.buf.store_release(PRODUCER_OFFSET, prod),
            QueueType::FromClient | QueueType::ToUlp => Err(EINVAL),
        }
    }

    /// Retires the element at the consumer index (`queue_advance_consumer`).
    /// Only a consuming side (`FromClient`, `ToUlp`) may.
    pub(crate) fn advance_consumer(&mut self, t: QueueType) -> Result {
        let cons = self.layout.next(self.consumer(t));
        match t {
            QueueType::FromClient => {
                self.index = cons;
                self.buf.store_release(CONSUMER_OFFSET, cons)
            }
            QueueType::ToUlp => self.buf.store_release(CONSUMER_OFFSET, cons),
            QueueType::ToClient | QueueType::FromUlp => Err(EINVAL),
        }
    }

    #[inline]
    fn at(&self, index: u32, offset: usize, len: usize) -> Result<usize> {
        match offset.checked_add(len) {
            Some(end) if end <= self.layout.slot_size() => {
                Ok(self.layout.offset_of(index) + offset)
            }
            _ => Err(EINVAL),
        }
    }

    /// Reads a `T` at byte `offset` of the element at `index`.
    pub(crate) fn read<T: FromBytes>(&self, index: u32, offset: usize) -> Result<T> {
        self.buf
            .read(self.at(index, offset, core::mem::size_of::<T>())?)
    }

    /// Writes `value` at byte `offset` of the element at `index`.
    pub(crate) fn write<T: AsBytes>(&self, index: u32, offset: usize, value: &T) -> Result {
        self.buf
            .write(self.at(index, offset, core::mem::size_of::<T>())?, value)
    }

    /// Writes `value`, which may have padding, at byte `offset` of the
    /// element at `index`; only for a queue not mapped to user space
    /// (`EPERM` otherwise).
    pub(crate) fn write_value<T>(&self, index: u32, offset: usize, value: T) -> Result {
        self.buf
            .write_value(self.at(index, offset, core::mem::size_of::<T>())?, value)
    }

    /// Copies bytes at byte `offset` of the element at `index`.
    #[inline]
    pub(crate) fn read_bytes(&self, index: u32, offset: usize, bytes: &mut [u8]) -> Result {
        self.buf
            .read_bytes(self.at(index, offset, bytes.len())?, bytes)
    }

    /// Copies `bytes` to byte `offset` of the element at `index`.
    #[inline]
    pub(crate) fn write_bytes(&self, index: u32, offset: usize, bytes: &[u8]) -> Result {
        self.buf
            .write_bytes(self.at(index, offset, bytes.len())?, bytes)
    }

    /// Zeroes every element, not the header (`rxe_queue_reset`).
    pub(crate) fn reset(&self) -> Result {
        let start = self.layout.offset_of(0);
        self.buf.zero(start, self.layout.buf_size - start)
    }

    /// Moves the elements into `new` and makes it this queue
    /// (`resize_finish`); returns the old queue, to drop once the lock is
    /// released. `EINVAL` (and `new` is given back to be dropped) if `new`
    /// cannot hold the elements.
    pub(crate) fn resize_finish(&mut self, mut new: Queue) -> core::result::Result<Queue, Queue> {
        let t = self.kind;
        let prod = self.producer(t);
        let cons = self.consumer(t);
        let new_prod = new.producer(t);
        let Some(moves) = self.layout.resize_moves(prod, cons, &new.layout, new_prod) else {
            return Err(new);
        };
        let (final_cons, final_prod) = (moves.final_consumer(), moves.final_producer());
        let len = new.layout.elem_size.min(self.layout.slot_size());
        for (from, to) in moves {
            let from = self.layout.offset_of(from);
            let to = new.layout.offset_of(to);
            // In range by construction: offsets of masked indices.
            if new.buf.copy_from(to, &self.buf, from, len).is_err() {
                return Err(new);
            }
        }
        // Header words: the stores cannot fail.
        let _ = new.buf.store(PRODUCER_OFFSET, final_prod);
        let _ = self.buf.store(CONSUMER_OFFSET, final_cons);
        if t == QueueType::ToClient {
            new.index = final_prod;
        }
        core::mem::swap(self, &mut new);
        Ok(new)
    }
}
