// SPDX-License-Identifier: GPL-2.0

//! The CM's view of RDMA devices (`cm_add_one()` / `cm_remove_one()`).
//!
//! For every port that speaks the CM protocol the CM registers two MAD
//! agents of the CM class, one that receives and one that only sends REPs,
//! and announces `IB_PORT_CM_SUP`. A device with no such port is left alone.
//! Each port counts the CM messages it sends and receives, by attribute, in
//! the sysfs directories of the C module (`cm_tx_msgs`, `cm_tx_retries`,
//! `cm_rx_msgs`, `cm_rx_duplicates` under the port).

use super::proto::{
    issue,
    msgs::{
        decode,
        MadHdr,
        Msg, //
    },
    state::{
        self,
        Gate,
        Issue,
        ReqMatch,
        Send,
        SidrMatch, //
    },
};
use crate::{
    client::{
        ClientDevice,
        ClientDriver, //
    },
    mad_agent::{
        MadAgent,
        MadHandler,
        RecvMad,
        Responder, //
    },
};
use core::sync::atomic::{
    AtomicI64,
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

/// The counter directories, in the order of the glue's table.
#[derive(Clone, Copy)]
#[repr(usize)]
#[allow(
    dead_code,
    reason = "sends and duplicates are counted once the CM answers"
)]
pub(crate) enum CounterGroup {
    /// `cm_tx_msgs`: messages sent, retries included.
    Xmit = 0,
    /// `cm_tx_retries`.
    XmitRetries = 1,
    /// `cm_rx_msgs`.
    Recv = 2,
    /// `cm_rx_duplicates`.
    RecvDuplicates = 3,
}

const GROUP_COUNT: usize = 4;

/// One CM port: its counters, shared with its MAD agents' handlers.
pub(crate) struct CmPort {
    /// The device (`ib_device *`).
    dev: usize,
    /// The port number.
    num: u32,
    /// The counters (`atomic_long_t` in C), by group and attribute.
    counters: [[AtomicI64; ATTR_COUNT]; GROUP_COUNT],
}

impl CmPort {
    /// Counts `n` more messages of attribute `attr_id` in `group`.
    fn count_n(&self, group: CounterGroup, attr_id: u16, n: u32) {
        if let Some(c) = attr_id
            .checked_sub(ATTR_ID_OFFSET)
            .and_then(|i| self.counters[group as usize].get(usize::from(i)))
        {
            c.fetch_add(n.into(), Ordering::Relaxed);
        }
    }

    /// Counts one more message of attribute `attr_id` in `group`.
    pub(crate) fn count(&self, group: CounterGroup, attr_id: u16) {
        self.count_n(group, attr_id, 1);
    }
}

impl MadHandler for CmPort {
    fn recv(&self, agent: &Responder<'_>, mad: RecvMad) {
        let Ok(msg) = decode(mad.mad()) else {
            // Not a CM message the CM knows: dropped, not counted.
            return;
        };
        let attr_id = MadHdr(mad.mad()).attr_id();
        self.count(CounterGroup::Recv, attr_id);
        let at = crate::id::Arrival {
            dev: self.dev as *mut crate::rdma::bindings::ib_device,
            port_num: self.num,
            port: self,
            agent,
        };
        if crate::id::recv(&at, &mad) {
            return;
        }
        // No ID takes it: the CM answers as the C one does when it has no
        // ID for a message: a REQ finds no listener, a DREQ no connection,
        // a SIDR_REQ no listener. A failed answer is dropped: the peer
        // retries.
        match msg {
            Msg::Req(_) => crate::id::answer(agent, &mad, state::new_req(ReqMatch::NoListener).0),
            Msg::Dreq(_) => {
                self.count(CounterGroup::RecvDuplicates, attr_id);
                crate::id::answer(agent, &mad, Issue::Drep);
            }
            Msg::SidrReq(req) => {
                let step = state::new_sidr_req(SidrMatch::NoListener);
                if let Some(Gate::Post(Send::SidrRepStatus(status))) = step.and_then(|s| s.gate) {
                    let _ =
                        agent.respond(&mad, false, |out| issue::sidr_rep_status(&req, out, status));
                }
            }
            _ => {}
        }
    }

    fn sent(&self, attr_id: u16, retries: u32) {
        // As `cm_send_handler()`: every try is a message sent.
        self.count_n(CounterGroup::Xmit, attr_id, retries.saturating_add(1));
        if retries != 0 {
            self.count_n(CounterGroup::XmitRetries, attr_id, retries);
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

impl CmDevice {
    /// Counter `index` (the attribute's, from REQ) of `group` on `port`, as
    /// the sysfs files show it; `None` for a port or counter there is not.
    pub(crate) fn counter(&self, port: u32, group: usize, index: usize) -> Option<i64> {
        let p = self.ports.iter().find(|p| p.num() == port)?;
        let c = p.mad_agent.ctx().counters.get(group)?.get(index)?;
        Some(c.load(Ordering::Relaxed))
    }
}

/// The IB client of the CM.
pub(crate) struct CmClient;

impl CmClient {
    fn add_port(dev: &ClientDevice, num: u32) -> Result<PortReg> {
        let port = Arc::new(
            CmPort {
                dev: dev.as_raw() as usize,
                num,
                counters: [const { [const { AtomicI64::new(0) }; ATTR_COUNT] }; GROUP_COUNT],
            },
            GFP_KERNEL,
        )?;
        // Until `add` returns the files read as 0, which every counter is.
        dev.add_counters(num)?;
        let agents = MadAgent::register(dev, num, true, port.clone()).and_then(|mad_agent| {
            let rep_agent = MadAgent::register(dev, num, false, port)?;
            crate::id::add_port(dev.as_raw(), num, mad_agent.raw())?;
            if let Err(e) = dev.set_port_cm_sup(num, true) {
                crate::id::remove_port(dev.as_raw(), num);
                return Err(e);
            }
            Ok((mad_agent, rep_agent))
        });
        let (mad_agent, rep_agent) = agents.inspect_err(|_| dev.remove_counters(num))?;
        Ok(PortReg {
            mad_agent,
            _rep_agent: rep_agent,
        })
    }

    fn remove_ports(dev: &ClientDevice, ports: &mut KVec<PortReg>) {
        // First the files, whose readers look the ports up: once they are
        // gone no one else reads `ports`.
        for p in ports.iter() {
            dev.remove_counters(p.num());
            // No ID sends on the port any more.
            crate::id::remove_port(dev.as_raw(), p.num());
        }
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
                dev.remove_counters(num);
                crate::id::remove_port(dev.as_raw(), num);
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
