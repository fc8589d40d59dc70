// SPDX-License-Identifier: GPL-2.0

//! The shared receive queues of an rxe device (`rxe_srq.c` and the SRQ
//! verbs of `rxe_verbs.c`), and the receive WQE codec that receive queues
//! share with them.
//!
//! A shared receive queue is a [`Queue`] of `struct rxe_recv_wqe` plus
//! `max_sge` scatter/gather elements, produced by the client (user space,
//! or a kernel consumer's `post_srq_recv`) and consumed by the responder
//! with [`Srq::take_wqe`], which raises `IB_EVENT_SRQ_LIMIT_REACHED` once
//! when fewer than the armed limit remain.

use crate::{
    device::Rxe,
    params,
    qp_attr::SGE_SIZE,
    queue::Queue,
    queue_index::QueueType,
    rdma::{
        bindings,
        ib_device::Device,
        mmap::{
            MmInfo,
            UserMapping,
            UserVerb, //
        },
        pool::{
            Pool,
            PoolLimits, //
        },
        srq::{
            self,
            recv_wqe,
            RecvWr,
            RecvWrs,
            Sge,
            SrqAttr,
            SrqCore,
            SrqDriver, //
        },
    },
    wqe, //
};
use core::mem::{
    offset_of,
    size_of, //
};
use kernel::{
    new_mutex, new_spinlock_irq,
    prelude::*,
    sync::{
        Arc,
        Mutex,
        SpinLockIrq, //
    },
    transmute::AsBytes,
    uaccess::{
        UserPtr,
        UserSlice, //
    },
};

/// Bytes of a receive WQE with room for `max_sge` elements.
pub(crate) fn recv_wqe_size(max_sge: u32) -> usize {
    recv_wqe::SIZE + max_sge as usize * size_of::<Sge>()
}

/// The fixed part of a receive WQE copied out of its queue; its entries go
/// straight to the responder's list ([`read_recv_wqe`]).
#[derive(Clone, Copy)]
pub(crate) struct RecvHead {
    /// The work request's id.
    pub(crate) wr_id: u64,
    /// Bytes the scatter/gather list holds.
    pub(crate) length: u32,
    /// Entries the list has.
    pub(crate) num_sge: u32,
}

/// Bytes of a responder's list with room for the most entries a receive
/// WQE may have, the room [`read_recv_wqe`] is given.
pub(crate) const RECV_LIST_LEN: usize = params::MAX_SGE as usize * SGE_SIZE as usize;

/// Copies the WQE at `index` of `q`: its fixed part, returned, and its
/// `num_sge` entries into `list` in the layout [`crate::copy::copy_data`]
/// walks ([`wqe::put_sge`]). `EINVAL` if `num_sge` is over `max_sge` or
/// `list`'s room (user space wrote it: a malformed WQE). Only the entries in
/// use are copied, once: a WQE is read for every message, and a copy with
/// room for [`params::MAX_SGE`] entries (528 bytes, moved again on its way
/// out) made the receive path copy twice the bytes C's does.
pub(crate) fn read_recv_wqe(
    q: &Queue,
    index: u32,
    max_sge: u32,
    list: &mut [u8],
) -> Result<RecvHead> {
    let num_sge: u32 = q.read(index, recv_wqe::NUM_SGE)?;
    if num_sge > max_sge
        || num_sge > params::MAX_SGE
        || list.len() < num_sge as usize * SGE_SIZE as usize
    {
        return Err(EINVAL);
    }
    for i in 0..num_sge as usize {
        let s: Sge = q.read(index, recv_wqe::SGE + i * size_of::<Sge>())?;
        wqe::put_sge(list, 0, i, s.addr, s.length, s.lkey);
    }
    Ok(RecvHead {
        wr_id: q.read(index, recv_wqe::WR_ID)?,
        length: q.read(index, recv_wqe::LENGTH)?,
        num_sge,
    })
}

/// Posts a kernel consumer's request `wr` to `q` as a [`QueueType::FromUlp`]
/// producer (`post_one_recv`): `ENOMEM` if full, `EINVAL` if it has more
/// than `max_sge` elements or more than the largest message.
pub(crate) fn post_recv_wqe(q: &mut Queue, wr: &RecvWr<'_>, max_sge: u32) -> Result {
    let t = QueueType::FromUlp;
    if q.full(t) {
        return Err(ENOMEM);
    }
    let sges = wr.sges()?;
    if sges.len() > max_sge as usize {
        return Err(EINVAL);
    }
    let length: u64 = sges.iter().map(|s| u64::from(s.length)).sum();
    if length > u64::from(params::port::MAX_MSG_SZ) {
        return Err(EINVAL);
    }
    let length = length as u32;
    let index = q.producer(t);
    q.write(index, recv_wqe::WR_ID, &wr.wr_id())?;
    q.write(index, recv_wqe::LENGTH, &length)?;
    q.write(index, recv_wqe::RESID, &length)?;
    q.write(index, recv_wqe::NUM_SGE, &(sges.len() as u32))?;
    q.write(index, recv_wqe::CUR_SGE, &0u32)?;
    q.write(index, recv_wqe::SGE_OFFSET, &0u32)?;
    for (i, sge) in sges.iter().enumerate() {
        q.write(index, recv_wqe::SGE + i * size_of::<Sge>(), sge)?;
    }
    q.advance_producer(t)
}

/// What the lock of a shared receive queue protects.
struct SrqInner {
    queue: Queue,
    /// `IB_SRQ_LIMIT`: raise the event when fewer remain; 0 disarmed.
    limit: u32,
    /// Destroyed: the core's `ib_srq` is no longer to be used.
    dead: bool,
}

/// A shared receive queue.
#[pin_data]
pub(crate) struct Srq {
    core: SrqCore,
    /// Its number (`srq_num`), its index in the device's pool.
    srq_num: u32,
    /// Scatter/gather elements per WQE.
    max_sge: u32,
    #[pin]
    rq: SpinLockIrq<SrqInner>,
    /// The user mapping of the current queue; replaced by a resize, dropped
    /// by destroy.
    #[pin]
    mapping: Mutex<Option<UserMapping>>,
}

impl Srq {
    /// Takes the next WQE for an incoming message (`get_srq_wqe`), its
    /// entries into `list` as [`read_recv_wqe`]: `None` if there is none (an
    /// RNR for the sender), `EINVAL` if it is malformed. Raises
    /// `IB_EVENT_SRQ_LIMIT_REACHED`, once, when fewer than the armed limit
    /// remain.
    pub(crate) fn take_wqe(&self, list: &mut [u8]) -> Result<Option<RecvHead>> {
        let t = QueueType::FromClient;
        let mut g = self.rq.lock();
        if g.dead {
            return Ok(None);
        }
        let Some(index) = g.queue.head(t) else {
            return Ok(None);
        };
        let wqe = read_recv_wqe(&g.queue, index, self.max_sge, list)?;
        g.queue.advance_consumer(t)?;
        let count = g.queue.count(t);
        if g.limit != 0 && self.core.has_event_handler() && count < g.limit {
            g.limit = 0;
            // Under the lock (unlike the C driver), so that destroy waits
            // for it.
            self.core
                .event(bindings::ib_event_type_IB_EVENT_SRQ_LIMIT_REACHED);
        }
        Ok(Some(wqe))
    }
}

/// The device's shared receive queues.
#[pin_data]
pub(crate) struct Srqs {
    #[pin]
    pool: Pool<Srq>,
}

impl Srqs {
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            pool <- Pool::new(PoolLimits {
                min_index: params::MIN_SRQ_INDEX,
                max_index: params::MAX_SRQ_INDEX,
                max_elem: params::MAX_SRQ,
            }),
        })
    }
}

/// Writes `mi` at the user address `addr` (the provider's `modify_srq`
/// passes where it wants the new `mminfo`).
fn write_mminfo_at(addr: u64, mi: &MmInfo) -> Result {
    let addr = usize::try_from(addr).map_err(|_| EFAULT)?;
    let bytes = mi.as_bytes();
    UserSlice::new(UserPtr::from_addr(addr), bytes.len())
        .writer()
        .write_slice(bytes)
}

impl SrqDriver for Rxe {
    type Srq = Srq;

    fn create_srq(
        dev: &Device<Self>,
        core: SrqCore,
        srq_type: u32,
        attr: &mut SrqAttr,
        user: Option<UserVerb<'_>>,
    ) -> Result<Arc<Srq>> {
        if let Some(u) = &user {
            if u.udata.out_len() < size_of::<bindings::rxe_create_srq_resp>() {
                return Err(EINVAL);
            }
        }
        if srq_type != bindings::ib_srq_type_IB_SRQT_BASIC {
            return Err(EOPNOTSUPP);
        }
        // rxe_srq_chk_init
        if attr.max_wr > params::MAX_SRQ_WR || attr.max_wr == 0 {
            return Err(EINVAL);
        }
        attr.max_wr = attr.max_wr.max(params::MIN_SRQ_WR);
        if attr.max_sge > params::MAX_SRQ_SGE {
            return Err(EINVAL);
        }
        attr.max_sge = attr.max_sge.max(params::MIN_SRQ_SGE);

        let rxe = dev.data();
        let slot = rxe.srqs.pool.reserve()?;
        let srq_num = slot.index();
        let queue = Queue::new(
            attr.max_wr,
            recv_wqe_size(attr.max_sge),
            QueueType::FromClient,
        )?;
        let mapping = match &user {
            Some(u) => {
                let (mapping, mi) = queue.map_user(&u.ctx)?;
                u.udata.respond(&mi)?;
                let at = offset_of!(bindings::rxe_create_srq_resp, srq_num);
                u.udata.write_at(at, &srq_num.to_ne_bytes())?;
                Some(mapping)
            }
            None => None,
        };
        attr.max_wr = queue.capacity();
        let max_sge = attr.max_sge;
        let limit = attr.srq_limit;
        let srq = Arc::pin_init(
            try_pin_init!(Srq {
                core,
                srq_num,
                max_sge,
                rq <- new_spinlock_irq!(SrqInner {
                    queue,
                    limit,
                    dead: false,
                }),
                mapping <- new_mutex!(mapping),
            }),
            GFP_KERNEL,
        )?;
        slot.publish(srq.clone());
        Ok(srq)
    }

    fn modify_srq(
        _dev: &Device<Self>,
        srq: &Srq,
        attr: &mut SrqAttr,
        mask: u32,
        user: Option<UserVerb<'_>>,
    ) -> Result {
        use bindings::{
            ib_srq_attr_mask_IB_SRQ_LIMIT as LIMIT,
            ib_srq_attr_mask_IB_SRQ_MAX_WR as MAX_WR, //
        };
        let mi_addr = match &user {
            Some(u) => srq::modify_srq_cmd(u)?,
            None => 0,
        };
        // rxe_srq_chk_attr
        {
            let g = srq.rq.lock();
            if mask & MAX_WR != 0 {
                if attr.max_wr > params::MAX_SRQ_WR || attr.max_wr == 0 {
                    return Err(EINVAL);
                }
                if g.limit != 0 && attr.max_wr < g.limit {
                    return Err(EINVAL);
                }
                attr.max_wr = attr.max_wr.max(params::MIN_SRQ_WR);
            }
            if mask & LIMIT != 0
                && (attr.srq_limit > params::MAX_SRQ_WR || attr.srq_limit > g.queue.capacity())
            {
                return Err(EINVAL);
            }
        }
        if mask & MAX_WR != 0 {
            let new = Queue::new(
                attr.max_wr,
                recv_wqe_size(srq.max_sge),
                QueueType::FromClient,
            )?;
            // As the C driver: user space gets the new mminfo at the address
            // its command names, not in the response.
            let mapping = match &user {
                Some(u) if mi_addr != 0 => {
                    let (mapping, mi) = new.map_user(&u.ctx)?;
                    write_mminfo_at(mi_addr, &mi)?;
                    Some(mapping)
                }
                _ => None,
            };
            let cap = new.capacity();
            let old = srq.rq.lock().queue.resize_finish(new);
            // Either queue is dropped here, out of the lock.
            old.map_err(|_| EINVAL)?;
            if mapping.is_some() {
                *srq.mapping.lock() = mapping;
            }
            attr.max_wr = cap;
        }
        if mask & LIMIT != 0 {
            srq.rq.lock().limit = attr.srq_limit;
        }
        Ok(())
    }

    fn query_srq(srq: &Srq, attr: &mut SrqAttr) -> Result {
        let g = srq.rq.lock();
        attr.max_wr = g.queue.capacity();
        attr.max_sge = srq.max_sge;
        attr.srq_limit = g.limit;
        Ok(())
    }

    fn destroy_srq(dev: &Device<Self>, srq: Arc<Srq>) {
        drop(dev.data().srqs.pool.remove(srq.srq_num));
        drop(srq.mapping.lock().take());
        srq.rq.lock().dead = true;
    }

    fn post_srq_recv(srq: &Srq, wrs: &mut RecvWrs<'_>) -> Result {
        let mut g = srq.rq.lock();
        while let Some(wr) = wrs.current() {
            post_recv_wqe(&mut g.queue, &wr, srq.max_sge)?;
            wrs.advance();
        }
        Ok(())
    }
}
