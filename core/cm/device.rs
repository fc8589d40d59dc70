// SPDX-License-Identifier: GPL-2.0

//! The CM's view of RDMA devices (`cm_add_one()` / `cm_remove_one()`).
//!
//! For every port that speaks the CM protocol the CM registers two MAD
//! agents of the CM class, one that receives and one that only sends REPs,
//! and announces `IB_PORT_CM_SUP`. A device with no such port is left alone.
//! Each port counts the CM messages it sees, by attribute, as the C module's
//! `cm_rx_msgs` counters do.

use super::proto::msgs::{
    decode,
    MadHdr, //
};
use crate::{
    client::{
        ClientDevice,
        ClientDriver, //
    },
    mad_agent::{
        MadAgent,
        MadHandler,
        RecvMad, //
    },
};
use core::sync::atomic::{
    AtomicU64,
    Ordering, //
};
use kernel::{
    prelude::*,
    sync::Arc, //
};

/// The CM attributes, REQ (0x10) to APR (0x1A): one counter each.
const ATTR_COUNT: usize = 11;
/// The attribute ID of the first counter (`CM_ATTR_ID_OFFSET`).
const ATTR_ID_OFFSET: u16 = 0x10;

/// One CM port: its counters, shared with its MAD agents' handlers.
pub(crate) struct CmPort {
    /// The port number.
    num: u32,
    /// `cm_rx_msgs`, by attribute.
    rx: [AtomicU64; ATTR_COUNT],
}

impl MadHandler for CmPort {
    fn recv(&self, mad: RecvMad) {
        // The protocol is not handled yet: count what arrives and drop it
        // (the MAD is freed as `mad` goes), as the C module drops what it
        // does not know.
        if decode(mad.mad()).is_err() {
            return;
        }
        let attr = MadHdr(mad.mad()).attr_id();
        if let Some(c) = attr
            .checked_sub(ATTR_ID_OFFSET)
            .and_then(|i| self.rx.get(usize::from(i)))
        {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A port the CM registered on. Fields drop in order: the agents (which
/// wait for their handlers) before anything they use.
struct PortReg {
    mad_agent: MadAgent<CmPort>,
    /// Held for its registration: REPs will be sent through it.
    _rep_agent: MadAgent<CmPort>,
}

impl PortReg {
    fn num(&self) -> u32 {
        self.mad_agent.ctx().num
    }
}

/// The CM's data of one device.
pub(crate) struct CmDevice {
    ports: KVec<PortReg>,
}

/// The IB client of the CM.
pub(crate) struct CmClient;

impl CmClient {
    fn add_port(dev: &ClientDevice, num: u32) -> Result<PortReg> {
        let port = Arc::new(
            CmPort {
                num,
                rx: [const { AtomicU64::new(0) }; ATTR_COUNT],
            },
            GFP_KERNEL,
        )?;
        let mad_agent = MadAgent::register(dev, num, true, port.clone())?;
        let rep_agent = MadAgent::register(dev, num, false, port)?;
        dev.set_port_cm_sup(num, true)?;
        Ok(PortReg {
            mad_agent,
            _rep_agent: rep_agent,
        })
    }

    fn remove_ports(dev: &ClientDevice, ports: &mut KVec<PortReg>) {
        while let Some(p) = ports.pop() {
            // As the C module: a failure to clear the capability changes
            // nothing about taking the port down.
            let _ = dev.set_port_cm_sup(p.num(), false);
            drop(p);
        }
    }
}

impl ClientDriver for CmClient {
    const NAME: &'static CStr = c"cm";
    type Data = KBox<CmDevice>;

    fn add(dev: &ClientDevice) -> Result<KBox<CmDevice>> {
        let mut ports = KVec::new();
        for num in dev.ports() {
            if !dev.cap_ib_cm(num) {
                continue;
            }
            let port = match Self::add_port(dev, num) {
                Ok(port) => port,
                Err(e) => {
                    Self::remove_ports(dev, &mut ports);
                    return Err(e);
                }
            };
            if ports.push(port, GFP_KERNEL).is_err() {
                let _ = dev.set_port_cm_sup(num, false);
                Self::remove_ports(dev, &mut ports);
                return Err(ENOMEM);
            }
        }
        if ports.is_empty() {
            return Err(EOPNOTSUPP);
        }
        Ok(KBox::new(CmDevice { ports }, GFP_KERNEL)?)
    }

    fn remove(dev: &ClientDevice, mut data: KBox<CmDevice>) {
        Self::remove_ports(dev, &mut data.ports);
    }
}
