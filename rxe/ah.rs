// SPDX-License-Identifier: GPL-2.0

//! The address handles of an rxe device (the AH verbs of `rxe_verbs.c`,
//! `rxe_av.c`).
//!
//! Each handle has a number from the device's AH pool (`ah_num`), which a
//! current rdma-core provider receives in `struct rxe_create_ah_resp` and
//! puts in its UD send work requests; an older provider, which has no room
//! for the response, builds the address vector into each work request
//! itself, and its handles get number 0. Creation and destruction may run
//! in atomic context (see `core/rdma/ah.rs`): nothing here sleeps then.

use crate::{
    av::{
        self,
        Av,
        GidType, //
    },
    device::{
        Rxe,
        RxeDev, //
    },
    params,
    rdma::{
        ah::{
            AhAttr,
            AhDriver,
            AhQuery, //
        },
        bindings,
        ib_device::Device,
        mr::PdId,
        pool::{
            Pool,
            PoolLimits, //
        },
        udata::UData,
    },
};
use kernel::{
    new_spinlock_irq,
    prelude::*,
    sync::{
        Arc,
        SpinLockIrq, //
    },
};

/// An address handle.
#[pin_data]
pub(crate) struct Ah {
    index: u32,
    /// The number user space knows it by; 0 for an old provider's.
    ah_num: u32,
    pd: PdId,
    #[pin]
    av: SpinLockIrq<Av>,
}

impl Ah {
    /// The number user space knows the handle by (0 for an old provider).
    pub(crate) fn ah_num(&self) -> u32 {
        self.ah_num
    }
}

impl Ah {
    /// Its address vector.
    pub(crate) fn av(&self) -> Av {
        *self.av.lock()
    }
}

/// The device's address handles.
#[pin_data]
pub(crate) struct Ahs {
    #[pin]
    pool: Pool<Ah>,
}

impl Ahs {
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            pool <- Pool::new(PoolLimits {
                min_index: params::MIN_AH_INDEX,
                max_index: params::MAX_AH_INDEX,
                max_elem: params::MAX_AH,
            }),
        })
    }

    /// The address vector of handle `ah_num` if it belongs to `pd`, for a
    /// UD send of a QP of `pd` (`rxe_get_av`).
    pub(crate) fn av(&self, ah_num: u32, pd: PdId) -> Option<Av> {
        let ah = self.pool.get(ah_num)?;
        (ah.pd == pd).then(|| ah.av())
    }
}

fn ahs(dev: &Device<Rxe>) -> &Ahs {
    let rxe: &RxeDev = dev.data().get_ref();
    &rxe.ahs
}

/// The attributes the address vector is built from.
fn av_attr(attr: &AhAttr<'_>) -> av::AhAttr {
    let (sgid, sgid_type) = match attr.sgid_attr() {
        Some(g) => (
            g.gid(),
            match g.gid_type() {
                bindings::ib_gid_type_IB_GID_TYPE_ROCE => GidType::RoceV1,
                bindings::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP => GidType::RoceV2,
                _ => GidType::Ib,
            },
        ),
        None => ([0; 16], GidType::Ib),
    };
    av::AhAttr {
        port_num: attr.port_num() as u8,
        has_grh: attr.has_grh(),
        dgid: attr.dgid(),
        flow_label: attr.flow_label(),
        sgid_index: attr.sgid_index(),
        hop_limit: attr.hop_limit(),
        traffic_class: attr.traffic_class(),
        sgid,
        sgid_type,
        dmac: attr.dmac(),
    }
}

/// The checked attributes (`rxe_ah_chk_attr`: `EINVAL`).
fn checked_attr(attr: &AhAttr<'_>) -> Result<av::AhAttr> {
    let a = av_attr(attr);
    if av::attr_ok(&a, params::port::GID_TBL_LEN as u32) {
        Ok(a)
    } else {
        Err(EINVAL)
    }
}

impl AhDriver for Rxe {
    type Ah = Ah;

    fn create_ah(
        dev: &Device<Self>,
        pd: PdId,
        attr: &AhAttr<'_>,
        sleepable: bool,
        udata: Option<&UData<'_>>,
    ) -> Result<Arc<Ah>> {
        let pool = &ahs(dev).pool;
        let (res, gfp) = if sleepable {
            (pool.reserve()?, GFP_KERNEL)
        } else {
            (pool.reserve_atomic()?, GFP_ATOMIC)
        };
        let a = checked_attr(attr)?;
        let index = res.index();
        let mut ah_num = index;
        if let Some(udata) = udata {
            if udata.out_len() >= core::mem::size_of::<bindings::rxe_create_ah_resp>() {
                // Only the number is written, as the C driver does.
                udata
                    .write_at(0, &ah_num.to_ne_bytes())
                    .map_err(|_| EFAULT)?;
            } else {
                // An old provider: it puts the AV into each work request.
                ah_num = 0;
            }
        }
        let ah = Arc::pin_init(
            pin_init!(Ah {
                index,
                ah_num,
                pd,
                av <- new_spinlock_irq!(Av::from_attr(&a), "rxe_ah"),
            }),
            gfp,
        )?;
        res.publish(ah.clone());
        Ok(ah)
    }

    fn modify_ah(_dev: &Device<Self>, ah: &Ah, attr: &AhAttr<'_>) -> Result {
        let a = checked_attr(attr)?;
        *ah.av.lock() = Av::from_attr(&a);
        Ok(())
    }

    fn query_ah(ah: &Ah) -> AhQuery {
        let av = ah.av();
        AhQuery {
            port_num: av.port_num.into(),
            dgid: av.dgid,
            flow_label: av.flow_label,
            sgid_index: av.sgid_index,
            hop_limit: av.hop_limit,
            traffic_class: av.traffic_class,
        }
    }

    fn destroy_ah(dev: &Device<Self>, ah: Arc<Ah>, _sleepable: bool) {
        // The state holds no resource to wait for: a send still holding the
        // handle keeps its own reference to the address vector.
        drop(ahs(dev).pool.remove(ah.index));
    }
}
