// SPDX-License-Identifier: GPL-2.0

//! The rxe device: attributes, its one port, GIDs, counters and the verbs
//! the RDMA core and rdma-core's rxe provider call on it.

use crate::params::{
    self,
    IbMtu, //
};
use crate::rdma::{
    bindings,
    ib_device::{
        Device,
        DeviceAttr,
        DeviceInfo,
        DeviceModify,
        IbDriver,
        NetdevEvent,
        PortAttr,
        PortImmutable,
        PortModify,
        StatDesc, //
    },
    netdev::NetDevice,
};
use core::sync::atomic::{
    AtomicU32,
    AtomicU64,
    Ordering, //
};
use kernel::prelude::*;

/// The driver, as the RDMA core sees it.
pub(crate) struct Rxe;

/// The port counters' descriptors, built from the names of `params`.
static COUNTERS: [StatDesc; params::COUNTER_NAMES.len()] = {
    let mut descs = [StatDesc::new(c""); params::COUNTER_NAMES.len()];
    let mut i = 0;
    while i < descs.len() {
        descs[i] = StatDesc::new(params::COUNTER_NAMES[i]);
        i += 1;
    }
    descs
};

/// A count of objects of one kind, bounded as the C driver's pools are.
struct Counted {
    n: AtomicU32,
    max: u32,
}

impl Counted {
    const fn new(max: u32) -> Self {
        Self {
            n: AtomicU32::new(0),
            max,
        }
    }

    /// One more, or `EINVAL` beyond the bound (the C pools' errno).
    fn get(&self) -> Result {
        let max = self.max;
        self.n
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < max).then_some(n + 1)
            })
            .map(drop)
            .map_err(|_| EINVAL)
    }

    fn put(&self) {
        let _ = self
            .n
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }
}

/// The state of one rxe device.
#[pin_data]
pub(crate) struct RxeDev {
    /// The EUI-64 of the netdev's MAC: the node GUID.
    guid: [u8; 8],
    /// The system image GUID as `query_device` reports it (wire byte
    /// order); the node GUID until `modify_device` sets it.
    sys_image_guid: AtomicU64,
    /// The port's capability flags (`IB_PORT_*_SUP`), as `modify_port`
    /// sets and clears them.
    port_cap_flags: AtomicU32,
    /// Q_Key violations of the port (reset by `modify_port`).
    pub(crate) qkey_viol_cntr: AtomicU32,
    /// P_Key violations of the port (rxe/recv.rs).
    pub(crate) bad_pkey_cntr: AtomicU32,
    /// `enum ib_mtu` of port 1, from the netdev MTU.
    active_mtu: AtomicU32,
    /// The counters of [`params::COUNTER_NAMES`].
    counters: [AtomicU64; params::COUNTER_NAMES.len()],
    /// User contexts.
    ucontexts: Counted,
    /// Protection domains.
    pds: Counted,
    /// Verbs objects, each kind in its own module.
    #[pin]
    pub(crate) cqs: crate::cq::Cqs,
    #[pin]
    pub(crate) qps: crate::qp::Qps,
    #[pin]
    pub(crate) srqs: crate::srq::Srqs,
    #[pin]
    pub(crate) mrs: crate::mr::Mrs,
    #[pin]
    pub(crate) mws: crate::mw::Mws,
    #[pin]
    pub(crate) ahs: crate::ah::Ahs,
    #[pin]
    pub(crate) mcasts: crate::mcast::Mcasts,
    /// The UDP sockets of the netdev's namespace (rxe/net.rs), held from
    /// creation until the netdev goes or the device is freed.
    net: crate::net::NetUse,
}

impl RxeDev {
    fn new(guid: [u8; 8], ndev_mtu: u32, net: crate::net::NetUse) -> impl PinInit<Self, Error> {
        let sys_image_guid = u64::from_ne_bytes(guid);
        try_pin_init!(Self {
            guid,
            sys_image_guid: AtomicU64::new(sys_image_guid),
            port_cap_flags: AtomicU32::new(bindings::ib_port_capability_mask_bits_IB_PORT_CM_SUP),
            qkey_viol_cntr: AtomicU32::new(0),
            bad_pkey_cntr: AtomicU32::new(0),
            active_mtu: AtomicU32::new(IbMtu::for_netdev_mtu(ndev_mtu).as_raw()),
            counters: [const { AtomicU64::new(0) }; params::COUNTER_NAMES.len()],
            ucontexts: Counted::new(params::MAX_UCONTEXT),
            pds: Counted::new(params::MAX_PD),
            cqs <- crate::cq::Cqs::new(),
            qps <- crate::qp::Qps::new(),
            srqs <- crate::srq::Srqs::new(),
            mrs <- crate::mr::Mrs::new(),
            mws <- crate::mw::Mws::new(),
            ahs <- crate::ah::Ahs::new(),
            mcasts <- crate::mcast::Mcasts::new(),
            net,
        })
    }

    fn set_mtu(&self, ndev_mtu: u32) {
        self.active_mtu
            .store(IbMtu::for_netdev_mtu(ndev_mtu).as_raw(), Ordering::Relaxed);
    }

    /// The port's active MTU in bytes (`mtu_cap`: a UD message's bound).
    pub(crate) fn mtu_bytes(&self) -> u32 {
        256 << (self.active_mtu.load(Ordering::Relaxed).clamp(1, 5) - 1)
    }

    pub(crate) fn count(&self, counter: usize) {
        self.count_add(counter, 1);
    }

    pub(crate) fn count_add(&self, counter: usize, n: u64) {
        if let Some(c) = self.counters.get(counter) {
            c.fetch_add(n, Ordering::Relaxed);
        }
    }
}

/// Creates the rxe device `name` on `ndev` and registers it.
pub(crate) fn create(name: &CStr, ndev: &NetDevice) -> Result {
    // A netdev without an address gets a random one, as in the C driver:
    // connection management needs a unique GUID.
    let mac = ndev.mac_or_random();
    let guid = params::eui64_from_mac(&mac);
    let info = DeviceInfo {
        name,
        node_guid: guid,
        node_desc: params::NODE_DESC,
        phys_port_cnt: params::NUM_PORTS,
        uverbs_cmds: &[
            bindings::ib_uverbs_write_cmds_IB_USER_VERBS_CMD_POST_SEND,
            bindings::ib_uverbs_write_cmds_IB_USER_VERBS_CMD_REQ_NOTIFY_CQ,
        ],
        sysfs_parent: true,
    };
    // The namespace's sockets first, as the C driver (put again if the
    // registration fails: the data is dropped).
    let net = crate::net::NetUse::take(ndev)?;
    Device::<Rxe>::register(
        &<crate::RxeModule as kernel::ModuleMetadata>::THIS_MODULE,
        &info,
        ndev,
        RxeDev::new(guid, ndev.mtu(), net),
    )
}

fn device_attr(rxe: &RxeDev, attr: &mut DeviceAttr) {
    use bindings::*;
    attr.vendor_id = params::VENDOR_ID;
    attr.max_mr_size = params::MAX_MR_SIZE;
    attr.page_size_cap = params::PAGE_SIZE_CAP;
    attr.max_qp = params::MAX_QP;
    attr.max_qp_wr = params::MAX_QP_WR;
    attr.device_cap_flags = (ib_device_cap_flags_IB_DEVICE_BAD_PKEY_CNTR
        | ib_device_cap_flags_IB_DEVICE_BAD_QKEY_CNTR
        | ib_device_cap_flags_IB_DEVICE_AUTO_PATH_MIG
        | ib_device_cap_flags_IB_DEVICE_CHANGE_PHY_PORT
        | ib_device_cap_flags_IB_DEVICE_UD_AV_PORT_ENFORCE
        | ib_device_cap_flags_IB_DEVICE_PORT_ACTIVE_EVENT
        | ib_device_cap_flags_IB_DEVICE_SYS_IMAGE_GUID
        | ib_device_cap_flags_IB_DEVICE_RC_RNR_NAK_GEN
        | ib_device_cap_flags_IB_DEVICE_SRQ_RESIZE
        | ib_device_cap_flags_IB_DEVICE_MEM_MGT_EXTENSIONS
        | ib_device_cap_flags_IB_DEVICE_MEM_WINDOW
        | ib_device_cap_flags_IB_DEVICE_FLUSH_GLOBAL
        | ib_device_cap_flags_IB_DEVICE_FLUSH_PERSISTENT
        | ib_device_cap_flags_IB_DEVICE_MEM_WINDOW_TYPE_2B
        | ib_device_cap_flags_IB_DEVICE_ATOMIC_WRITE) as u64;
    attr.kernel_cap_flags = ib_kernel_cap_flags_IBK_ALLOW_USER_UNREG.into();
    attr.max_send_sge = params::MAX_SGE;
    attr.max_recv_sge = params::MAX_SGE;
    attr.max_sge_rd = params::MAX_SGE_RD;
    attr.max_cq = params::MAX_CQ;
    attr.max_cqe = params::MAX_CQE;
    attr.max_mr = params::MAX_MR;
    attr.max_mw = params::MAX_MW;
    attr.max_pd = params::MAX_PD;
    attr.max_qp_rd_atom = params::MAX_QP_RD_ATOM;
    attr.max_res_rd_atom = params::MAX_RES_RD_ATOM;
    attr.max_qp_init_rd_atom = params::MAX_QP_INIT_RD_ATOM;
    attr.atomic_cap = ib_atomic_cap_IB_ATOMIC_HCA;
    attr.max_mcast_grp = params::MAX_MCAST_GRP;
    attr.max_mcast_qp_attach = params::MAX_MCAST_QP_ATTACH;
    attr.max_total_mcast_qp_attach = params::MAX_TOT_MCAST_QP_ATTACH;
    attr.max_ah = params::MAX_AH;
    attr.max_srq = params::MAX_SRQ;
    attr.max_srq_wr = params::MAX_SRQ_WR;
    attr.max_srq_sge = params::MAX_SRQ_SGE;
    attr.max_fast_reg_page_list_len = params::MAX_FMR_PAGE_LIST_LEN;
    attr.max_pkeys = params::MAX_PKEYS;
    attr.local_ca_ack_delay = params::LOCAL_CA_ACK_DELAY;
    attr.sys_image_guid = rxe.sys_image_guid.load(Ordering::Relaxed);
    if cfg!(CONFIG_INFINIBAND_ON_DEMAND_PAGING) {
        // On-demand paging as the C driver reports it (implicit ODP aside).
        attr.kernel_cap_flags |= u64::from(ib_kernel_cap_flags_IBK_ON_DEMAND_PAGING);
        attr.odp_caps.general_caps |= u64::from(ib_odp_general_cap_bits_IB_ODP_SUPPORT);
        let caps = &mut attr.odp_caps.per_transport_caps;
        caps.ud_odp_caps |= ib_odp_transport_cap_bits_IB_ODP_SUPPORT_SEND
            | ib_odp_transport_cap_bits_IB_ODP_SUPPORT_RECV
            | ib_odp_transport_cap_bits_IB_ODP_SUPPORT_SRQ_RECV;
        caps.rc_odp_caps |= ib_odp_transport_cap_bits_IB_ODP_SUPPORT_SEND
            | ib_odp_transport_cap_bits_IB_ODP_SUPPORT_RECV
            | ib_odp_transport_cap_bits_IB_ODP_SUPPORT_WRITE
            | ib_odp_transport_cap_bits_IB_ODP_SUPPORT_READ
            | ib_odp_transport_cap_bits_IB_ODP_SUPPORT_ATOMIC
            | ib_odp_transport_cap_bits_IB_ODP_SUPPORT_SRQ_RECV
            | ib_odp_transport_cap_bits_IB_ODP_SUPPORT_FLUSH
            | ib_odp_transport_cap_bits_IB_ODP_SUPPORT_ATOMIC_WRITE;
    }
}

fn check_port(port: u32) -> Result {
    if port == params::NUM_PORTS {
        Ok(())
    } else {
        Err(EINVAL)
    }
}

impl IbDriver for Rxe {
    type Data = RxeDev;
    const DRIVER_ID: u32 = bindings::rdma_driver_id_RDMA_DRIVER_RXE;
    const UVERBS_ABI_VER: u32 = params::UVERBS_ABI_VERSION;
    const HW_COUNTERS: &'static [StatDesc] = &COUNTERS;

    fn query_device(dev: &Device<Self>, attr: &mut DeviceAttr) -> Result {
        device_attr(&dev.data(), attr);
        Ok(())
    }

    fn query_port(dev: &Device<Self>, port: u32, attr: &mut PortAttr) -> Result {
        use bindings::{
            ib_mtu_IB_MTU_4096,
            ib_port_phys_state_IB_PORT_PHYS_STATE_DISABLED as DISABLED,
            ib_port_phys_state_IB_PORT_PHYS_STATE_LINK_UP as LINK_UP,
            ib_port_phys_state_IB_PORT_PHYS_STATE_POLLING as POLLING,
            ib_port_state_IB_PORT_ACTIVE as ACTIVE,
            ib_port_state_IB_PORT_DOWN as DOWN, //
        };
        check_port(port)?;
        let ndev = dev.netdev(port).ok_or(ENODEV)?;
        attr.max_mtu = ib_mtu_IB_MTU_4096;
        attr.active_mtu = dev.data().active_mtu.load(Ordering::Relaxed);
        attr.gid_tbl_len = params::port::GID_TBL_LEN;
        attr.port_cap_flags = dev.data().port_cap_flags.load(Ordering::Relaxed);
        attr.qkey_viol_cntr = dev.data().qkey_viol_cntr.load(Ordering::Relaxed);
        attr.bad_pkey_cntr = dev.data().bad_pkey_cntr.load(Ordering::Relaxed);
        attr.max_msg_sz = params::port::MAX_MSG_SZ;
        attr.pkey_tbl_len = params::port::PKEY_TBL_LEN;
        attr.max_vl_num = params::port::MAX_VL_NUM;
        let (speed, width) = dev.eth_speed(port)?;
        attr.active_speed = speed;
        attr.active_width = width;
        let (state, phys_state) = if ndev.port_active() {
            (ACTIVE, LINK_UP)
        } else if ndev.admin_up() {
            (DOWN, POLLING)
        } else {
            (DOWN, DISABLED)
        };
        attr.state = state;
        attr.phys_state = phys_state as u8;
        Ok(())
    }

    fn modify_device(dev: &Device<Self>, mask: u32, attr: &DeviceModify) -> Result {
        use bindings::{
            ib_device_modify_flags_IB_DEVICE_MODIFY_NODE_DESC as IB_DEVICE_MODIFY_NODE_DESC,
            ib_device_modify_flags_IB_DEVICE_MODIFY_SYS_IMAGE_GUID as IB_DEVICE_MODIFY_SYS_IMAGE_GUID, //
        };
        if mask & !(IB_DEVICE_MODIFY_SYS_IMAGE_GUID | IB_DEVICE_MODIFY_NODE_DESC) != 0 {
            // The C driver's errno and message.
            pr_err!("{}: returned err = {}\n", dev.name(), EOPNOTSUPP.to_errno());
            return Err(EOPNOTSUPP);
        }
        if mask & IB_DEVICE_MODIFY_SYS_IMAGE_GUID != 0 {
            // Given in CPU order, reported in wire order.
            let guid = attr.sys_image_guid.to_be();
            dev.data().sys_image_guid.store(guid, Ordering::Relaxed);
        }
        Ok(())
    }

    fn modify_port(dev: &Device<Self>, port: u32, mask: u32, attr: &PortModify) -> Result {
        if port != params::NUM_PORTS {
            pr_err!("{}: returned err = {}\n", dev.name(), EINVAL.to_errno());
            return Err(EINVAL);
        }
        if mask & !bindings::ib_port_modify_flags_IB_PORT_RESET_QKEY_CNTR != 0 {
            pr_err!("{}: returned err = {}\n", dev.name(), EOPNOTSUPP.to_errno());
            return Err(EOPNOTSUPP);
        }
        let rxe = dev.data();
        let _ = rxe
            .port_cap_flags
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |f| {
                Some((f | attr.set_port_cap_mask) & !attr.clr_port_cap_mask)
            });
        if mask & bindings::ib_port_modify_flags_IB_PORT_RESET_QKEY_CNTR != 0 {
            rxe.qkey_viol_cntr.store(0, Ordering::Relaxed);
        }
        Ok(())
    }

    fn query_pkey(_dev: &Device<Self>, _port: u32, index: u16) -> Result<u16> {
        if index != 0 {
            return Err(EINVAL);
        }
        Ok(params::port::DEFAULT_PKEY)
    }

    fn port_immutable(_dev: &Device<Self>, port: u32) -> Result<PortImmutable> {
        check_port(port)?;
        Ok(PortImmutable {
            core_cap_flags: bindings::RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP,
            pkey_tbl_len: params::port::PKEY_TBL_LEN.into(),
            gid_tbl_len: params::port::GID_TBL_LEN,
            max_mad_size: bindings::IB_MGMT_MAD_SIZE,
        })
    }

    fn link_layer(_dev: &Device<Self>, _port: u32) -> u32 {
        bindings::rdma_link_layer_IB_LINK_LAYER_ETHERNET
    }

    fn alloc_ucontext(dev: &Device<Self>) -> Result {
        dev.data().ucontexts.get()
    }

    fn dealloc_ucontext(dev: &Device<Self>) {
        dev.data().ucontexts.put();
    }

    fn alloc_pd(dev: &Device<Self>) -> Result {
        dev.data().pds.get()
    }

    fn dealloc_pd(dev: &Device<Self>) {
        dev.data().pds.put();
    }

    fn hw_stats(dev: &Device<Self>, _port: u32, values: &mut [u64]) -> Result<usize> {
        let rxe = dev.data();
        for (v, c) in values.iter_mut().zip(rxe.counters.iter()) {
            *v = c.load(Ordering::Relaxed);
        }
        Ok(values.len().min(rxe.counters.len()))
    }

    fn enable(dev: &Device<Self>) -> Result {
        // As the C driver: announce the port's state, then the device.
        let ndev = dev.netdev(1).ok_or(ENODEV)?;
        if ndev.port_active() {
            dev.dispatch_port_event(1, bindings::ib_event_type_IB_EVENT_PORT_ACTIVE);
            pr_info!("{}: set active\n", dev.name());
        } else {
            dev.dispatch_port_event(1, bindings::ib_event_type_IB_EVENT_PORT_ERR);
            dev.data().count(params::CNT_LINK_DOWNED);
            pr_info!("{}: set down\n", dev.name());
        }
        pr_info!("{}: added {}\n", dev.name(), ndev.name());
        Ok(())
    }

    fn install_verbs(ops: &mut bindings::ib_device_ops) {
        use crate::rdma::{
            ah,
            cq,
            mcast,
            mr,
            mw,
            qp,
            srq, //
        };
        ah::install::<Self>(ops);
        crate::rdma::mmap::install::<Self>(ops);
        cq::install::<Self>(ops);
        mcast::install::<Self>(ops);
        mr::install::<Self>(ops);
        mw::install::<Self>(ops);
        qp::install::<Self>(ops);
        srq::install::<Self>(ops);
    }

    fn netdev_event(dev: &Device<Self>, ndev: &NetDevice, event: NetdevEvent) {
        match event {
            NetdevEvent::Unregister => {
                dev.unregister_queued();
                // Now, while the namespace is sure to be alive: the socket
                // of its last device is released (`rxe_net_del`).
                dev.data().net.put();
            }
            NetdevEvent::ChangeMtu => dev.data().set_mtu(ndev.mtu()),
            NetdevEvent::Down | NetdevEvent::Change => {
                if !ndev.port_active() {
                    dev.data().count(params::CNT_LINK_DOWNED);
                }
            }
            NetdevEvent::Other => {}
        }
    }
}
