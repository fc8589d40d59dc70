// SPDX-License-Identifier: GPL-2.0

//! The memory windows of an rxe device (`rxe_mw.c`): type 1 and type 2B
//! windows, their rkeys in the window range of the key space, and the
//! state that binding and invalidation (work requests of the transport)
//! change.

use crate::{
    device::{
        Rxe,
        RxeDev, //
    },
    keys,
    mr::Mr,
    params,
    rdma::{
        ib_device::Device,
        mr::{
            random_key_byte,
            PdId, //
        },
        mw::{
            MwDriver,
            MwType, //
        },
        pool::{
            Pool,
            PoolLimits, //
        },
    },
};
use core::sync::atomic::Ordering;
use kernel::{
    new_spinlock_irq,
    prelude::*,
    sync::{
        Arc,
        SpinLockIrq, //
    },
};

/// `enum rxe_mw_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MwState {
    /// Deallocated.
    Invalid,
    /// Not bound (a new type 2 window, or an invalidated one).
    Free,
    /// Bound (a type 1 window from the start).
    Valid,
}

/// The bind state of a window.
pub(crate) struct Binding {
    /// The window's rkey (its key byte changes with each bind).
    pub(crate) rkey: u32,
    pub(crate) state: MwState,
    pub(crate) access: u32,
    pub(crate) addr: u64,
    pub(crate) length: u64,
    /// The region it is bound to, counted in the region's `num_mw`.
    pub(crate) mr: Option<Arc<Mr>>,
    /// The QP a type 2 window is bound through.
    pub(crate) qpn: Option<u32>,
}

impl Binding {
    /// Drops the bound region, if any.
    pub(crate) fn unbind_mr(&mut self) {
        if let Some(mr) = self.mr.take() {
            mr.num_mw.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// A memory window.
#[pin_data]
pub(crate) struct Mw {
    index: u32,
    mw_type: MwType,
    pd: PdId,
    #[pin]
    pub(crate) binding: SpinLockIrq<Binding>,
}

/// The device's memory windows.
#[pin_data]
pub(crate) struct Mws {
    #[pin]
    pool: Pool<Mw>,
}

impl Mws {
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            pool <- Pool::new(PoolLimits {
                min_index: params::MIN_MW_INDEX,
                max_index: params::MAX_MW_INDEX,
                max_elem: params::MAX_MW,
            }),
        })
    }
}

impl Mws {
    /// The window named by `rkey`, if its rkey matches.
    pub(crate) fn get(&self, rkey: u32) -> Option<Arc<Mw>> {
        let mw = self.pool.get(keys::key_index(rkey))?;
        let ok = mw.binding.lock().rkey == rkey;
        ok.then_some(mw)
    }
}

/// A bind work request (`wr.mw` of `struct rxe_send_wr`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BindRequest {
    /// The window's current rkey.
    pub(crate) mw_rkey: u32,
    /// The new rkey, of which the key byte is taken.
    pub(crate) rkey: u32,
    /// The region's lkey (unused for a zero length).
    pub(crate) mr_lkey: u32,
    pub(crate) access: u32,
    pub(crate) addr: u64,
    pub(crate) length: u64,
}

/// `rxe_check_bind_mw`: `EINVAL` for every violation.
fn check_bind(mw: &Mw, b: &Binding, qp_pd: PdId, mr: Option<&Mr>, req: &BindRequest) -> Result {
    match mw.mw_type {
        // o10-36.2.2
        MwType::Type1 if b.state != MwState::Valid || req.access & keys::ZERO_BASED != 0 => {
            return Err(EINVAL)
        }
        // o10-37.2.30, o10-37.2.40
        MwType::Type2 if b.state != MwState::Free || mr.is_none() || req.length == 0 => {
            return Err(EINVAL)
        }
        _ => {}
    }
    // C10-72
    if qp_pd != mw.pd {
        return Err(EINVAL);
    }
    let Some(mr) = mr else {
        return Ok(());
    };
    let mr_access = mr.access();
    let (mr_iova, mr_length) = mr.range();
    if qp_pd != mr.pd() || mr_access & keys::ZERO_BASED != 0 {
        return Err(EINVAL);
    }
    // C10-73
    if mr_access & keys::ACCESS_MW_BIND == 0 {
        return Err(EINVAL);
    }
    // C10-74
    let writable = keys::ACCESS_REMOTE_WRITE | keys::ACCESS_REMOTE_ATOMIC;
    if req.access & writable != 0 && mr_access & keys::ACCESS_LOCAL_WRITE == 0 {
        return Err(EINVAL);
    }
    // C10-75
    let inside = if req.access & keys::ZERO_BASED != 0 {
        req.length <= mr_length
    } else {
        req.addr >= mr_iova
            && req.addr.checked_add(req.length).is_some_and(|end| {
                mr_iova
                    .checked_add(mr_length)
                    .is_none_or(|mr_end| end <= mr_end)
            })
    };
    if inside {
        Ok(())
    } else {
        Err(EINVAL)
    }
}

impl Mws {
    /// Executes a bind work request of QP `qpn` of `qp_pd`
    /// (`rxe_bind_mw`): `EINVAL` for an unknown window or region or a
    /// violation, `EOPNOTSUPP` for unsupported access flags.
    pub(crate) fn bind(
        &self,
        mrs: &crate::mr::Mrs,
        qp_pd: PdId,
        qpn: u32,
        req: &BindRequest,
    ) -> Result {
        let mw = self.pool.get(keys::key_index(req.mw_rkey)).ok_or(EINVAL)?;
        if mw.binding.lock().rkey != req.mw_rkey {
            return Err(EINVAL);
        }
        let mr = if req.length != 0 {
            let mr = mrs.get(keys::key_index(req.mr_lkey)).ok_or(EINVAL)?;
            if mr.keys().0 != req.mr_lkey {
                return Err(EINVAL);
            }
            Some(mr)
        } else {
            None
        };
        if !keys::mw_access_supported(req.access) {
            return Err(EOPNOTSUPP);
        }
        let mut b = mw.binding.lock();
        check_bind(&mw, &b, qp_pd, mr.as_deref(), req)?;
        b.rkey = keys::with_key_byte(b.rkey, req.rkey);
        b.access = req.access;
        b.state = MwState::Valid;
        b.addr = req.addr;
        b.length = req.length;
        b.unbind_mr();
        if req.length != 0 {
            if let Some(mr) = mr {
                mr.num_mw.fetch_add(1, Ordering::Relaxed);
                b.mr = Some(mr);
            }
        }
        if mw.mw_type == MwType::Type2 {
            b.qpn = Some(qpn);
        }
        Ok(())
    }

    /// Invalidates the type 2 window of `rkey` (`rxe_invalidate_mw`):
    /// `EINVAL` as the C driver.
    pub(crate) fn invalidate(&self, rkey: u32) -> Result {
        let mw = self.pool.get(keys::key_index(rkey)).ok_or(EINVAL)?;
        let mut b = mw.binding.lock();
        if b.rkey != rkey || b.state == MwState::Invalid || mw.mw_type == MwType::Type1 {
            return Err(EINVAL);
        }
        b.qpn = None;
        b.unbind_mr();
        b.access = 0;
        b.addr = 0;
        b.length = 0;
        b.state = MwState::Free;
        Ok(())
    }

    /// The valid window of `rkey` usable by QP `qpn` of `qp_pd` with
    /// `access` (`rxe_lookup_mw`).
    pub(crate) fn lookup(&self, qp_pd: PdId, qpn: u32, access: u32, rkey: u32) -> Option<Arc<Mw>> {
        let mw = self.pool.get(keys::key_index(rkey))?;
        let ok = {
            let b = mw.binding.lock();
            b.rkey == rkey
                && mw.pd == qp_pd
                && (mw.mw_type != MwType::Type2 || b.qpn == Some(qpn))
                && b.length != 0
                && keys::access_allows(b.access, access)
                && b.state == MwState::Valid
        };
        ok.then_some(mw)
    }
}

fn mws(dev: &Device<Rxe>) -> &Mws {
    let rxe: &RxeDev = dev.data().get_ref();
    &rxe.mws
}

impl MwDriver for Rxe {
    type Mw = Mw;

    fn alloc_mw(dev: &Device<Self>, pd: PdId, mw_type: MwType) -> Result<(Arc<Mw>, u32)> {
        let res = mws(dev).pool.reserve()?;
        let index = res.index();
        let rkey = keys::make_key(index, random_key_byte());
        let state = match mw_type {
            MwType::Type1 => MwState::Valid,
            MwType::Type2 => MwState::Free,
        };
        let mw = Arc::pin_init(
            pin_init!(Mw {
                index,
                mw_type,
                pd,
                binding <- new_spinlock_irq!(
                    Binding {
                        rkey,
                        state,
                        access: 0,
                        addr: 0,
                        length: 0,
                        mr: None,
                        qpn: None,
                    },
                    "rxe_mw"
                ),
            }),
            GFP_KERNEL,
        )?;
        res.publish(mw.clone());
        Ok((mw, rkey))
    }

    fn dealloc_mw(dev: &Device<Self>, mw: Arc<Mw>) {
        drop(mws(dev).pool.remove(mw.index));
        // The region and QP are let go now, not when the last reference to
        // the window goes (`rxe_mw_cleanup`).
        let mut b = mw.binding.lock();
        b.unbind_mr();
        b.qpn = None;
        b.access = 0;
        b.addr = 0;
        b.length = 0;
        b.state = MwState::Invalid;
    }
}
