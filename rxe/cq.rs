// SPDX-License-Identifier: GPL-2.0

//! The completion queues of an rxe device (`rxe_cq.c` and the CQ verbs of
//! `rxe_verbs.c`).
//!
//! A completion queue is a [`Queue`] the driver produces into
//! ([`QueueType::ToClient`]): elements are `struct ib_uverbs_wc` for user
//! space, which maps the queue and polls it itself, or `struct ib_wc` for a
//! kernel consumer, which polls through `poll_cq`. The completer and the
//! responder post completions with [`Cq::post`].

use crate::{
    device::Rxe,
    params,
    queue::Queue,
    queue_index::QueueType,
    rdma::{
        bindings,
        cq::{
            Completion,
            CqCore,
            CqDriver,
            CqInitAttr,
            UverbsWc,
            Wc,
            WcArray, //
        },
        ib_device::Device,
        mmap::{
            UserMapping,
            UserVerb, //
        },
        pool::{
            Pool,
            PoolLimits, //
        },
    },
};
use core::mem::size_of;
use kernel::{
    new_mutex, new_spinlock_irq,
    prelude::*,
    sync::{
        Arc,
        Mutex,
        SpinLockIrq, //
    },
};

/// Bytes of an element: `struct rxe_cqe`, the union of both completion
/// formats, whichever the queue holds.
const CQE_SIZE: usize = if size_of::<bindings::ib_wc>() > size_of::<UverbsWc>() {
    size_of::<bindings::ib_wc>()
} else {
    size_of::<UverbsWc>()
};

/// What the lock of a completion queue protects.
struct CqInner {
    queue: Queue,
    /// `IB_CQ_SOLICITED`/`IB_CQ_NEXT_COMP` armed by `req_notify_cq`.
    notify: u32,
    /// Destroyed: the core's `ib_cq` is no longer to be used.
    dead: bool,
}

/// A completion queue.
#[pin_data]
pub(crate) struct Cq {
    core: CqCore,
    /// Its index in the device's pool (`cq#` of the C driver's messages).
    index: u32,
    /// Created from user space: elements are `struct ib_uverbs_wc`.
    is_user: bool,
    #[pin]
    inner: SpinLockIrq<CqInner>,
    /// The user mapping of the current queue; replaced by a resize, dropped
    /// by destroy.
    #[pin]
    mapping: Mutex<Option<UserMapping>>,
}

impl Cq {
    /// Posts completion `c` (`rxe_cq_post`); calls the consumer's completion
    /// handler if it armed the queue for it (`solicited`: the completion is
    /// of a solicited event). A full queue is an overflow: the consumer gets
    /// `IB_EVENT_CQ_ERR` and the caller `EBUSY`. `EINVAL` once the queue is
    /// destroyed.
    pub(crate) fn post(&self, c: &Completion, solicited: bool) -> Result {
        use bindings::{
            ib_cq_notify_flags_IB_CQ_NEXT_COMP as NEXT_COMP,
            ib_cq_notify_flags_IB_CQ_SOLICITED as SOLICITED, //
        };
        let mut g = self.inner.lock();
        if g.dead {
            return Err(EINVAL);
        }
        let t = QueueType::ToClient;
        if g.queue.full(t) {
            // The handler runs under the lock (unlike the C driver), so that
            // destroy, which takes it, waits for it.
            self.core.event(bindings::ib_event_type_IB_EVENT_CQ_ERR);
            return Err(EBUSY);
        }
        let index = g.queue.producer(t);
        if self.is_user {
            g.queue.write(index, 0, &UverbsWc::from(c))?;
        } else {
            g.queue.write_value(index, 0, Wc::from(c))?;
        }
        g.queue.advance_producer(t)?;
        if g.notify & NEXT_COMP != 0 || (g.notify & SOLICITED != 0 && solicited) {
            g.notify = 0;
            self.core.comp_handler();
        }
        Ok(())
    }

    /// Created from user space (its elements are `struct ib_uverbs_wc`).
    pub(crate) fn is_user(&self) -> bool {
        self.is_user
    }
}

/// The device's completion queues.
#[pin_data]
pub(crate) struct Cqs {
    #[pin]
    pool: Pool<Cq>,
}

impl Cqs {
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            pool <- Pool::new(PoolLimits {
                min_index: 1,
                max_index: params::MAX_CQ,
                max_elem: params::MAX_CQ,
            }),
        })
    }
}

/// Offers `queue` to user space and writes the `mminfo` at the start of
/// the response (`rxe_create_cq_resp`, `rxe_resize_cq_resp`).
fn map_for(queue: &Queue, user: Option<&UserVerb<'_>>) -> Result<Option<UserMapping>> {
    let Some(u) = user else {
        return Ok(None);
    };
    let (mapping, mi) = queue.map_user(&u.ctx)?;
    u.udata.respond(&mi)?;
    Ok(Some(mapping))
}

impl CqDriver for Rxe {
    type Cq = Cq;

    fn create_cq(
        dev: &Device<Self>,
        core: CqCore,
        attr: &CqInitAttr,
        user: Option<UserVerb<'_>>,
    ) -> Result<(Arc<Cq>, u32)> {
        if let Some(u) = &user {
            if u.udata.out_len() < size_of::<bindings::rxe_create_cq_resp>() {
                return Err(EINVAL);
            }
        }
        if attr.flags != 0 {
            return Err(EOPNOTSUPP);
        }
        if attr.cqe > params::MAX_CQE {
            return Err(EINVAL);
        }
        let rxe = dev.data();
        let slot = rxe.cqs.pool.reserve()?;
        let queue = Queue::new(attr.cqe, CQE_SIZE, QueueType::ToClient)?;
        let mapping = map_for(&queue, user.as_ref())?;
        let cqe = queue.capacity();
        let index = slot.index();
        let cq = Arc::pin_init(
            try_pin_init!(Cq {
                core,
                index,
                is_user: user.is_some(),
                inner <- new_spinlock_irq!(CqInner {
                    queue,
                    notify: 0,
                    dead: false,
                }),
                mapping <- new_mutex!(mapping),
            }),
            GFP_KERNEL,
        )?;
        slot.publish(cq.clone());
        Ok((cq, cqe))
    }

    fn resize_cq(
        _dev: &Device<Self>,
        cq: &Cq,
        cqe: u32,
        user: Option<UserVerb<'_>>,
    ) -> Result<u32> {
        if let Some(u) = &user {
            if u.udata.out_len() < size_of::<bindings::rxe_resize_cq_resp>() {
                return Err(EINVAL);
            }
        }
        let count = cq.inner.lock().queue.count(QueueType::ToClient);
        if cqe > params::MAX_CQE || cqe < count {
            return Err(EINVAL);
        }
        let new = Queue::new(cqe, CQE_SIZE, QueueType::ToClient)?;
        let mapping = map_for(&new, user.as_ref())?;
        let cqe = new.capacity();
        // Elements posted since the count above may no longer fit.
        let old = cq.inner.lock().queue.resize_finish(new);
        // Either queue is dropped here, out of the lock.
        old.map_err(|_| EINVAL)?;
        if mapping.is_some() {
            *cq.mapping.lock() = mapping;
        }
        Ok(cqe)
    }

    fn destroy_cq(dev: &Device<Self>, cq: Arc<Cq>) {
        drop(dev.data().cqs.pool.remove(cq.index));
        // No new user mapping (existing ones keep their pages), and the
        // offer goes before the user context does.
        drop(cq.mapping.lock().take());
        // Waits for a post in progress; later posts fail.
        cq.inner.lock().dead = true;
    }

    fn poll_cq(cq: &Cq, wc: &mut WcArray<'_>) {
        let t = QueueType::ToUlp;
        let mut g = cq.inner.lock();
        while !wc.is_full() {
            let Some(index) = g.queue.head(t) else {
                break;
            };
            let Ok(c) = g.queue.read::<Wc>(index, 0) else {
                break;
            };
            wc.push(c);
            if g.queue.advance_consumer(t).is_err() {
                break;
            }
        }
    }

    fn peek_cq(cq: &Cq, max: u32) -> u32 {
        cq.inner.lock().queue.count(QueueType::ToUlp).min(max)
    }

    fn req_notify_cq(cq: &Cq, flags: u32) -> bool {
        use bindings::{
            ib_cq_notify_flags_IB_CQ_REPORT_MISSED_EVENTS as REPORT_MISSED,
            ib_cq_notify_flags_IB_CQ_SOLICITED_MASK as SOLICITED_MASK, //
        };
        let mut g = cq.inner.lock();
        g.notify |= flags & SOLICITED_MASK;
        flags & REPORT_MISSED != 0 && !g.queue.empty(QueueType::ToUlp)
    }
}
