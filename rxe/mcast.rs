// SPDX-License-Identifier: GPL-2.0

//! The multicast groups of an rxe device (`rxe_mcast.c`): the UD QPs
//! attached to each multicast GID, within the device's bounds on groups and
//! attachments, and the Ethernet multicast address of each group in the
//! netdev's list so that its packets are received.
//!
//! Unlike the C driver, the last detach of a group also removes its
//! address from the netdev (the C driver only does on a failed attach, so
//! the netdev keeps one count of the address per group ever created).

use crate::{
    av,
    device::{
        Rxe,
        RxeDev, //
    },
    mcast_group::{
        AttachRefused,
        Group, //
    },
    params,
    qp::Qp,
    rdma::{
        ib_device::Device,
        mcast::McastDriver, //
    },
};
use kernel::{
    new_spinlock_irq,
    prelude::*,
    rbtree::{
        RBTree,
        RBTreeNodeReservation, //
    },
    sync::SpinLockIrq,
};

struct Table {
    groups: RBTree<[u8; 16], Group>,
    /// Groups, including those being created.
    ngroups: u32,
    /// QP attachments over all groups.
    attached: u32,
}

/// The device's multicast groups.
#[pin_data]
pub(crate) struct Mcasts {
    #[pin]
    table: SpinLockIrq<Table>,
}

impl Mcasts {
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            table <- new_spinlock_irq!(
                Table {
                    groups: RBTree::new(),
                    ngroups: 0,
                    attached: 0,
                },
                "rxe_mcg"
            ),
        })
    }

    /// The QPs attached to group `mgid`, for the receive path.
    pub(crate) fn members(&self, mgid: &[u8; 16]) -> Option<Group> {
        self.table.lock().groups.get(mgid).cloned()
    }
}

fn mcasts(dev: &Device<Rxe>) -> &Mcasts {
    let rxe: &RxeDev = dev.data().get_ref();
    &rxe.mcasts
}

/// Attaches `qp` to `group`, counting a new attachment in the QP (which
/// may not be destroyed while attached: IBA o10-2.2.3).
fn attach(group: &mut Group, qp: &Qp, qpn: u32, attached: &mut u32) -> Result {
    match group.attach(qpn, attached) {
        Ok(true) => {
            qp.mcast_attached(true);
            Ok(())
        }
        Ok(false) => Ok(()),
        Err(AttachRefused::DeviceFull | AttachRefused::GroupFull) => Err(ENOMEM),
    }
}

/// Creates group `mgid` with QP `qpn`, or attaches the QP to the group
/// another attach created meanwhile. Holds a slot in `ngroups`, which it
/// gives back unless it adds the group.
fn create(dev: &Device<Rxe>, m: &Mcasts, qp: &Qp, qpn: u32, mgid: &[u8; 16]) -> Result {
    let mac = av::mgid_to_mac(mgid);
    let prepared = (|| {
        let reservation = RBTreeNodeReservation::new(GFP_KERNEL)?;
        let ndev = dev.netdev(params::NUM_PORTS).ok_or(ENODEV)?;
        // May sleep: before the group is visible, outside the lock.
        ndev.mc_add(&mac)?;
        Ok((reservation, ndev))
    })();
    let (reservation, ndev) = match prepared {
        Ok(p) => p,
        Err(e) => {
            m.table.lock().ngroups -= 1;
            return Err(e);
        }
    };
    let result = {
        let mut guard = m.table.lock();
        let t = &mut *guard;
        if let Some(g) = t.groups.get_mut(mgid) {
            t.ngroups -= 1;
            attach(g, qp, qpn, &mut t.attached).map(|()| false)
        } else {
            let mut group = Group::new();
            match attach(&mut group, qp, qpn, &mut t.attached) {
                Ok(()) => {
                    t.groups.insert(reservation.into_node(*mgid, group));
                    Ok(true)
                }
                Err(e) => {
                    t.ngroups -= 1;
                    Err(e)
                }
            }
        }
    };
    if !matches!(result, Ok(true)) {
        // The address is not kept for a group this call did not create.
        let _ = ndev.mc_del(&mac);
    }
    result.map(drop)
}

impl McastDriver for Rxe {
    fn attach_mcast(dev: &Device<Self>, qpn: u32, mgid: &[u8; 16]) -> Result {
        let m = mcasts(dev);
        let qp = dev.data().get_ref().qps.get(qpn).ok_or(EINVAL)?;
        {
            let mut guard = m.table.lock();
            let t = &mut *guard;
            if let Some(g) = t.groups.get_mut(mgid) {
                return attach(g, &qp, qpn, &mut t.attached);
            }
            if t.ngroups >= params::MAX_MCAST_GRP {
                return Err(ENOMEM);
            }
            t.ngroups += 1;
        }
        create(dev, m, &qp, qpn, mgid)
    }

    fn detach_mcast(dev: &Device<Self>, qpn: u32, mgid: &[u8; 16]) -> Result {
        let m = mcasts(dev);
        let removed = {
            let mut guard = m.table.lock();
            let t = &mut *guard;
            let g = t.groups.get_mut(mgid).ok_or(EINVAL)?;
            if !g.detach(qpn, &mut t.attached) {
                return Err(EINVAL);
            }
            if let Some(qp) = dev.data().get_ref().qps.get(qpn) {
                qp.mcast_attached(false);
            }
            if g.is_empty() {
                t.ngroups -= 1;
                t.groups.remove_node(mgid)
            } else {
                None
            }
        };
        if removed.is_some() {
            if let Some(ndev) = dev.netdev(params::NUM_PORTS) {
                let _ = ndev.mc_del(&av::mgid_to_mac(mgid));
            }
        }
        Ok(())
    }
}
