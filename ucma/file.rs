// SPDX-License-Identifier: GPL-2.0

//! An open `/dev/infiniband/rdma_cm`: command dispatch, event queue, poll,
//! release.

use crate::{
    abi::{
        self,
        Bind,
        Connect,
        CreateId,
        DestroyId,
        IdArg,
        JoinMcast,
        Query,
        QueryAddrResp,
        QueryRouteResp,
        Reject,
        ResolveAddr,
        SetOption, //
    },
    cmd::{
        Cmd,
        CmdHdr,
        CMD_HDR_SIZE, //
    },
    ctx::{
        destroy_ctx,
        free_mc_id,
        list_ctx,
        migrate_ctx,
        take_events,
        unlist_ctx,
        unlist_first_ctx,
        Ctx,
        Event,
        Mc,
        CTX_IDS,
        MC_IDS, //
    },
    rdma::{
        bindings,
        cm::{
            self,
            CmId,
            SockAddr, //
        },
        misc::{
            safe_file_access,
            MiscFile, //
        },
        tagged_list::TaggedList,
    },
};
use core::sync::atomic::Ordering;
use kernel::{
    fs::{
        file::flags::O_NONBLOCK,
        File,
        LocalFile, //
    },
    list::List,
    new_mutex, pr_err_once,
    prelude::*,
    rbtree::{
        RBTree,
        RBTreeNode, //
    },
    sync::{
        poll::{
            PollCondVar,
            PollTable, //
        },
        Arc,
        ArcBorrow,
        Mutex, //
    },
    uaccess::{
        UserPtr,
        UserSlice,
        UserSliceReader, //
    },
};

/// What the file's lock protects.
pub(crate) struct FileInner {
    /// The file's contexts, oldest first: an intrusive list, as the C
    /// module's `ctx_list`, so that creating and destroying a context
    /// allocate nothing for it (commands find contexts by id in
    /// [`CTX_IDS`]).
    pub(crate) ctxs: TaggedList<Ctx>,
    /// The file's multicast memberships by id.
    pub(crate) mcs: RBTree<u32, Arc<Mc>>,
    /// Events not yet delivered, oldest first: a list, as the C module's
    /// `event_list`, so that GET_EVENT takes the front in constant time
    /// however many are queued (cmtime queues a hundred at a time).
    pub(crate) events: List<Event>,
    /// Set by release: no more contexts or events are added.
    pub(crate) closed: bool,
}

/// The state of one open file of the device.
#[pin_data]
pub(crate) struct UcmaFile {
    #[pin]
    pub(crate) inner: Mutex<FileInner>,
    /// Woken when an event is queued (GET_EVENT and poll wait on it).
    #[pin]
    pub(crate) wait: PollCondVar,
}

/// Copies `data` to the user's response buffer at `addr`.
fn write_resp(addr: u64, data: &[u8]) -> Result {
    let addr = usize::try_from(addr).map_err(|_| EFAULT)?;
    UserSlice::new(UserPtr::from_addr(addr), data.len())
        .writer()
        .write_slice(data)
}

/// Reads a command of `N` bytes.
fn read_cmd<const N: usize>(r: &mut UserSliceReader) -> Result<[u8; N]> {
    let mut b = [0u8; N];
    r.read_slice(&mut b)?;
    Ok(b)
}

/// Reads a command of up to `N` bytes of which the user gave `in_len`.
fn read_cmd_partial<const N: usize>(r: &mut UserSliceReader, in_len: usize) -> Result<[u8; N]> {
    let mut b = [0u8; N];
    let n = in_len.min(N);
    r.read_slice(b.get_mut(..n).ok_or(EINVAL)?)?;
    Ok(b)
}

fn out_at_least(out_len: u16, min: usize) -> Result {
    if usize::from(out_len) < min {
        Err(ENOSPC)
    } else {
        Ok(())
    }
}

fn to_sockaddr(b: &abi::SockAddrBytes) -> SockAddr {
    SockAddr(*b)
}

fn to_cm_param(p: &abi::ConnParam) -> cm::ConnParam {
    cm::ConnParam {
        private_data: p.private_data,
        private_data_len: p.private_data_len,
        responder_resources: p.responder_resources,
        initiator_depth: p.initiator_depth,
        flow_control: p.flow_control,
        retry_count: p.retry_count,
        rnr_retry_count: p.rnr_retry_count,
        srq: p.srq,
        qp_num: p.qp_num,
        qkey: p.qkey,
    }
}

fn dev_info(c: &CmId<Ctx>) -> Option<abi::DevInfo> {
    c.dev_info().map(|d| abi::DevInfo {
        node_guid: d.node_guid,
        ibdev_index: d.index,
        port_num: u8::try_from(d.port_num).unwrap_or(0),
        pkey_be: d.pkey.to_be(),
    })
}

impl UcmaFile {
    /// The context `id` of this file (`ucma_get_ctx()`): `ENOENT` if no
    /// file has it, `EINVAL` if another file does.
    fn get_ctx(&self, id: u32) -> Result<Arc<Ctx>> {
        let ctx = CTX_IDS.get().and_then(|ids| ids.get(id)).ok_or(ENOENT)?;
        if !ctx.is_of(self) {
            return Err(EINVAL);
        }
        Ok(ctx)
    }

    /// Runs `f` on the live C id of context `id`; `need_dev` requires it to
    /// be bound to a device (`ucma_get_ctx_dev()`).
    fn with_cm<R>(
        &self,
        id: u32,
        need_dev: bool,
        f: impl FnOnce(&Ctx, &mut CmId<Ctx>) -> Result<R>,
    ) -> Result<R> {
        let ctx = self.get_ctx(id)?;
        let mut guard = ctx.cm.lock();
        let cm = Option::as_mut(&mut *guard).ok_or(ENXIO)?;
        if need_dev && !cm.has_device() {
            return Err(EINVAL);
        }
        f(&ctx, cm)
    }

    fn create_id(this: ArcBorrow<'_, Self>, r: &mut UserSliceReader, out_len: u16) -> Result {
        out_at_least(out_len, 4)?;
        let cmd = CreateId::decode(&read_cmd::<{ CreateId::SIZE }>(r)?);
        let qp_type = abi::qp_type_of(cmd.ps, cmd.qp_type).ok_or(EINVAL)?;
        let id = CTX_IDS.get().ok_or(ENODEV)?.reserve()?;
        let ctx = Ctx::new(&id, this.into(), cmd.uid)?;
        let cm = CmId::new(ctx.clone_arc(), u32::from(cmd.ps), qp_type)?;
        *ctx.cm.lock() = Some(cm);
        if let Err(e) = write_resp(cmd.response, &abi::encode_u32(ctx.id)) {
            // Never visible to userspace: destroy it (no events were queued,
            // since nothing was started on it).
            let cm = ctx.cm.lock().take();
            drop(cm);
            return Err(e);
        }
        list_ctx(&mut this.inner.lock(), ctx, id);
        Ok(())
    }

    fn destroy_id(&self, r: &mut UserSliceReader, out_len: u16) -> Result {
        out_at_least(out_len, 4)?;
        let cmd = DestroyId::decode(&read_cmd::<{ DestroyId::SIZE }>(r)?);
        // EINVAL for another file's id, as in C.
        let ctx = self.get_ctx(cmd.id)?;
        let ctx = unlist_ctx(&mut self.inner.lock(), &ctx).ok_or(ENOENT)?;
        let reported = destroy_ctx(self, ctx);
        write_resp(cmd.response, &abi::encode_u32(reported))
    }

    fn bind(&self, cmd: Bind) -> Result {
        let addr = to_sockaddr(&cmd.addr);
        self.with_cm(cmd.id, false, |_, cm| cm.bind_addr(&addr))
    }

    fn resolve_addr(&self, cmd: ResolveAddr) -> Result {
        let src = cmd.src.as_ref().map(to_sockaddr);
        let dst = to_sockaddr(&cmd.dst);
        self.with_cm(cmd.id, false, |_, cm| {
            cm.resolve_addr(src.as_ref(), &dst, cmd.timeout_ms)
        })
    }

    fn query_route(&self, r: &mut UserSliceReader, out_len: u16) -> Result {
        out_at_least(out_len, QueryRouteResp::MIN_OUT)?;
        let cmd = Query::decode(&read_cmd::<{ Query::SIZE }>(r)?);
        // Encoded in place, where it is copied out from (not returned).
        let mut resp = [0u8; QueryRouteResp::SIZE];
        self.with_cm(cmd.id, false, |_, cm| {
            let route = cm.route();
            QueryRouteResp {
                dev: dev_info(cm),
                ib_route: route.paths,
                src: cm.src_addr().0,
                dst: cm.dst_addr().0,
                num_paths: route.num_paths,
            }
            .encode_into(&mut resp);
            Ok(())
        })?;
        let n = usize::from(out_len).min(resp.len());
        write_resp(cmd.response, resp.get(..n).unwrap_or(&resp))
    }

    fn query(&self, r: &mut UserSliceReader, out_len: u16) -> Result {
        let cmd = Query::decode(&read_cmd::<{ Query::SIZE }>(r)?);
        let out = usize::from(out_len);
        // Copied out once the context is unlocked: QUERY_ADDR and QUERY_GID
        // encoded into `addr` in place (not returned through the closure,
        // 280 bytes), the records (QUERY_PATH, QUERY_IB_SERVICE) in an
        // allocation of the size user space offered (as the C module's
        // `ucma_query_path`).
        let mut addr = [0u8; QueryAddrResp::SIZE];
        let records = self.with_cm(cmd.id, false, |_, cm| match cmd.option {
            abi::QUERY_ADDR => {
                out_at_least(out_len, QueryAddrResp::MIN_OUT)?;
                let src = cm.src_addr().0;
                let dst = cm.dst_addr().0;
                QueryAddrResp {
                    dev: dev_info(cm),
                    src_size: u16::try_from(abi::addr_size(&src)).unwrap_or(0),
                    src,
                    dst_size: u16::try_from(abi::addr_size(&dst)).unwrap_or(0),
                    dst,
                }
                .encode_into(&mut addr);
                Ok(None)
            }
            abi::QUERY_PATH => {
                out_at_least(out_len, abi::QUERY_PATH_RESP_HDR)?;
                let (num, packed) = cm.packed_paths();
                let mut v = KVec::from_elem(0u8, out, GFP_KERNEL)?;
                let len = abi::encode_query_path(&mut v, num, packed);
                v.truncate(len);
                Ok(Some(v))
            }
            abi::QUERY_GID => {
                out_at_least(out_len, QueryAddrResp::MIN_OUT)?;
                let dev = dev_info(cm);
                let pkey_be = dev.map_or(0, |d| d.pkey_be);
                let (sgid, dgid) = cm.gids();
                let src_addr = cm.src_addr();
                let dst_addr = cm.dst_addr();
                let conv = |a: &SockAddr, gid: [u8; 16]| -> abi::SockAddrBytes {
                    if abi::family(&a.0) == abi::AF_IB {
                        let mut s = [0u8; abi::SOCKADDR_STORAGE_SIZE];
                        if let (Some(d), Some(src)) = (
                            s.get_mut(..abi::SOCKADDR_IB_SIZE),
                            a.0.get(..abi::SOCKADDR_IB_SIZE),
                        ) {
                            d.copy_from_slice(src);
                        }
                        s
                    } else {
                        abi::sockaddr_ib(pkey_be, gid, cm.service_id(a))
                    }
                };
                QueryAddrResp {
                    dev,
                    src: conv(&src_addr, sgid),
                    src_size: abi::SOCKADDR_IB_SIZE as u16,
                    dst: conv(&dst_addr, dgid),
                    dst_size: abi::SOCKADDR_IB_SIZE as u16,
                }
                .encode_into(&mut addr);
                Ok(None)
            }
            abi::QUERY_IB_SERVICE => {
                out_at_least(out_len, abi::QUERY_IB_SERVICE_RESP_HDR)?;
                let (num, recs) = cm
                    .service_recs(abi::ib_service_recs_fitting(out))?
                    .ok_or(ENODATA)?;
                let mut v = KVec::from_elem(0u8, out, GFP_KERNEL)?;
                let len = abi::encode_query_ib_service(num, &recs, &mut v);
                v.truncate(len);
                Ok(Some(v))
            }
            _ => Err(ENOSYS),
        })?;
        let bytes = match &records {
            None => addr.get(..out.min(addr.len())).unwrap_or(&addr),
            Some(v) => v,
        };
        if bytes.is_empty() {
            // QUERY_IB_SERVICE with no room for a record copies nothing.
            return Ok(());
        }
        write_resp(cmd.response, bytes)
    }

    fn resolve_ib_service(&self, r: &mut UserSliceReader) -> Result {
        let cmd = abi::ResolveIbService::decode(&read_cmd::<{ abi::ResolveIbService::SIZE }>(r)?);
        let ibs = cm::IbService {
            service_id: cmd.service_id,
            service_name: cmd.service_name,
            flags: cmd.flags,
            reserved: cmd.reserved,
        };
        self.with_cm(cmd.id, false, |_, cm| cm.resolve_ib_service(&ibs))
    }

    fn connect(&self, r: &mut UserSliceReader, in_len: u16) -> Result {
        let in_len = usize::from(in_len);
        if in_len < Connect::MIN_IN {
            return Err(EINVAL);
        }
        let cmd = Connect::decode(&read_cmd_partial::<{ Connect::SIZE }>(r, in_len)?, in_len);
        if cmd.conn_param.valid == 0 {
            return Err(EINVAL);
        }
        let p = to_cm_param(&cmd.conn_param);
        self.with_cm(cmd.id, true, |_, cm| {
            cm.connect(&p, (cmd.ece.vendor_id, cmd.ece.attr_mod))
        })
    }

    fn listen(&self, r: &mut UserSliceReader) -> Result {
        let cmd = IdArg::decode(&read_cmd::<{ IdArg::SIZE }>(r)?);
        let backlog = abi::listen_backlog(cmd.arg, cm::MaxBacklogSysctl::max_backlog());
        let backlog = i32::try_from(backlog).unwrap_or(i32::MAX);
        self.with_cm(cmd.id, false, |ctx, cm| {
            ctx.backlog.store(backlog, Ordering::Release);
            cm.listen(backlog)
        })
    }

    fn accept(&self, r: &mut UserSliceReader, in_len: u16) -> Result {
        let in_len = usize::from(in_len);
        if in_len < Connect::ACCEPT_MIN_IN {
            return Err(EINVAL);
        }
        let cmd = Connect::decode_accept(
            &read_cmd_partial::<{ Connect::ACCEPT_SIZE }>(r, in_len)?,
            in_len,
        );
        let ece = (cmd.ece.vendor_id, cmd.ece.attr_mod);
        self.with_cm(cmd.id, true, |ctx, cm| {
            if cmd.conn_param.valid != 0 {
                let p = to_cm_param(&cmd.conn_param);
                // The uid is set atomically with respect to the handler.
                cm.accept(Some(&p), ece, || ctx.uid.store(cmd.uid, Ordering::Release))
            } else {
                cm.accept(None, ece, || {})
            }
        })
    }

    fn reject(&self, r: &mut UserSliceReader) -> Result {
        let cmd = Reject::decode(&read_cmd::<{ Reject::SIZE }>(r)?).ok_or(EINVAL)?;
        self.with_cm(cmd.id, true, |_, cm| cm.reject(cmd.data(), cmd.reason))
    }

    fn disconnect(&self, r: &mut UserSliceReader) -> Result {
        let b = read_cmd::<{ abi::DISCONNECT_SIZE }>(r)?;
        let id = u32::from_ne_bytes(b);
        self.with_cm(id, true, |_, cm| cm.disconnect())
    }

    fn init_qp_attr(&self, r: &mut UserSliceReader, out_len: u16) -> Result {
        out_at_least(out_len, abi::QP_ATTR_SIZE)?;
        let cmd = Query::decode(&read_cmd::<{ Query::SIZE }>(r)?);
        if cmd.option > abi::QPS_ERR {
            return Err(EINVAL);
        }
        // Filled in place, copied out once the context is unlocked.
        let mut attr = cm::UserQpAttr::default();
        self.with_cm(cmd.id, true, |_, cm| cm.init_qp_attr(cmd.option, &mut attr))?;
        write_resp(cmd.response, attr.as_bytes())
    }

    fn get_event(&self, file: &File, r: &mut UserSliceReader, out_len: u16) -> Result {
        out_at_least(out_len, abi::EventResp::MIN_OUT)?;
        let response = abi::decode_get_event(&read_cmd::<{ abi::GET_EVENT_SIZE }>(r)?);
        let mut inner = self.inner.lock();
        while inner.events.is_empty() {
            if file.flags() & O_NONBLOCK != 0 {
                return Err(EAGAIN);
            }
            if self.wait.wait_interruptible(&mut inner) {
                return Err(ERESTARTSYS);
            }
        }
        let Some(first) = inner.events.iter().next() else {
            return Err(EAGAIN);
        };
        let n = usize::from(out_len).min(first.resp.len());
        write_resp(response, first.resp.get(..n).unwrap_or(&first.resp))?;
        let ev = inner.events.pop_front().ok_or(EAGAIN)?;
        ev.ctx.events_reported.fetch_add(1, Ordering::AcqRel);
        if let Some(mc) = &ev.mc {
            mc.events_reported.fetch_add(1, Ordering::AcqRel);
        }
        if ev.event == abi::EVENT_CONNECT_REQUEST {
            ev.ctx.backlog.fetch_add(1, Ordering::AcqRel);
        }
        drop(inner);
        drop(ev);
        Ok(())
    }

    fn set_option(&self, r: &mut UserSliceReader) -> Result {
        let cmd = SetOption::decode(&read_cmd::<{ SetOption::SIZE }>(r)?);
        // KMALLOC_MAX_SIZE bounds the C module's copy; options are tiny.
        if cmd.optlen > (1 << 22) {
            return Err(EINVAL);
        }
        let ctx = self.get_ctx(cmd.id)?;
        let mut val = KVec::new();
        let addr = usize::try_from(cmd.optval).map_err(|_| EFAULT)?;
        let len = usize::try_from(cmd.optlen).map_err(|_| EINVAL)?;
        UserSlice::new(UserPtr::from_addr(addr), len).read_all(&mut val, GFP_KERNEL)?;
        match cmd.level {
            abi::OPTION_ID => {
                let opt = abi::parse_id_option(cmd.optname, &val).map_err(|e| match e {
                    abi::OptError::Inval => EINVAL,
                    abi::OptError::NoSys => ENOSYS,
                })?;
                let mut guard = ctx.cm.lock();
                let cm = Option::as_mut(&mut *guard).ok_or(ENXIO)?;
                match opt {
                    abi::CmOption::Tos(t) => {
                        cm.set_tos(t);
                        Ok(())
                    }
                    abi::CmOption::ReuseAddr(on) => cm.set_reuseaddr(on),
                    abi::CmOption::AfOnly(on) => cm.set_afonly(on),
                    abi::CmOption::AckTimeout(t) => cm.set_ack_timeout(t),
                }
            }
            // A route resolved in user space (librdmacm with ibacm): set it
            // and report it as resolved, as the C module does.
            abi::OPTION_IB if cmd.optname == abi::OPTION_IB_PATH => {
                let packed = abi::pick_ib_path(&val).ok_or(EINVAL)?;
                let mut guard = ctx.cm.lock();
                let cm = Option::as_mut(&mut *guard).ok_or(ENXIO)?;
                cm.set_ib_path(&packed)?;
                cm.raise_event(bindings::rdma_cm_event_type_RDMA_CM_EVENT_ROUTE_RESOLVED);
                Ok(())
            }
            _ => Err(ENOSYS),
        }
    }

    fn notify(&self, r: &mut UserSliceReader) -> Result {
        let cmd = IdArg::decode(&read_cmd::<{ IdArg::SIZE }>(r)?);
        self.with_cm(cmd.id, false, |_, cm| {
            if cm.has_device() {
                cm.notify(cmd.arg)
            } else {
                Err(EINVAL)
            }
        })
    }

    fn join(&self, cmd: JoinMcast, out_len: u16) -> Result {
        out_at_least(out_len, 4)?;
        let join_state = cmd.join_state.ok_or(EINVAL)?;
        let ctx = self.get_ctx(cmd.id)?;
        let addr = to_sockaddr(&cmd.addr);
        let id = MC_IDS.get().ok_or(ENODEV)?.reserve()?;
        let mc = Mc::new(&id, ctx.clone(), cmd.uid, addr)?;
        let node = RBTreeNode::new(mc.id, mc.clone(), GFP_KERNEL)?;
        let mut guard = ctx.cm.lock();
        let cm = Option::as_mut(&mut *guard).ok_or(ENXIO)?;
        if !cm.has_device() {
            return Err(EINVAL);
        }
        // Visible to the event handler before the join can complete.
        self.inner.lock().mcs.insert(node);
        let res = cm
            .join_multicast(&addr, join_state, mc.id as usize)
            .and_then(|()| {
                write_resp(cmd.response, &abi::encode_u32(mc.id))
                    .inspect_err(|_| cm.leave_multicast(&addr))
            });
        drop(guard);
        match res {
            // LEAVE_MCAST finds it from here on (C stores it after the copy
            // of the response, too).
            Ok(()) => id.publish(mc),
            Err(_) => {
                // The reservation, dropped, frees the id.
                let mut inner = self.inner.lock();
                inner.mcs.remove(&mc.id);
                drop(take_events(&mut inner.events, |e| {
                    e.mc.as_ref().is_some_and(|m| Arc::ptr_eq(m, &mc))
                }));
            }
        }
        res
    }

    fn leave(&self, r: &mut UserSliceReader, out_len: u16) -> Result {
        out_at_least(out_len, 4)?;
        let cmd = DestroyId::decode(&read_cmd::<{ DestroyId::SIZE }>(r)?);
        // ENOENT if no file has it, EINVAL if another file does (C's
        // ucma_leave_multicast()).
        let mc = MC_IDS.get().and_then(|ids| ids.get(cmd.id)).ok_or(ENOENT)?;
        if !mc.ctx.is_of(self) {
            return Err(EINVAL);
        }
        let mc = self.inner.lock().mcs.remove(&cmd.id).ok_or(ENOENT)?;
        {
            let mut guard = mc.ctx.cm.lock();
            if let Some(cm) = Option::as_mut(&mut *guard) {
                cm.leave_multicast(&mc.addr);
            }
        }
        // The handler finds memberships by id under the file lock, so no
        // event of this one can be queued any more.
        let taken = take_events(&mut self.inner.lock().events, |e| {
            e.mc.as_ref().is_some_and(|m| Arc::ptr_eq(m, &mc))
        });
        drop(taken);
        // Left, so no event of it comes any more: the id can go.
        free_mc_id(mc.id);
        write_resp(
            cmd.response,
            &abi::encode_u32(mc.events_reported.load(Ordering::Acquire)),
        )
    }

    fn migrate_id(this: ArcBorrow<'_, Self>, file: &File, r: &mut UserSliceReader) -> Result {
        let cmd = abi::MigrateId::decode(&read_cmd::<{ abi::MigrateId::SIZE }>(r)?);
        // The current file of the id, held against its release meanwhile.
        let other = LocalFile::fget(cmd.fd).map_err(|_| ENOENT)?;
        let cur: Arc<UcmaFile> = cm::same_device_file::<UcmaFile>(file, this, &other)
            .ok_or(EINVAL)?
            .into();
        let ctx = cur.get_ctx(cmd.id)?;
        let new: Arc<UcmaFile> = this.into();
        let reported = {
            let guard = ctx.cm.lock();
            let cm = Option::as_ref(&*guard).ok_or(ENXIO)?;
            cm.with_handler_locked(|| migrate_ctx(&cur, &new, &ctx))?
        };
        write_resp(cmd.response, &abi::encode_u32(reported))
    }

    fn write_cm_event(&self, r: &mut UserSliceReader) -> Result {
        let cmd = abi::WriteCmEvent::decode(&read_cmd::<{ abi::WriteCmEvent::SIZE }>(r)?)
            .ok_or(EINVAL)?;
        let ctx = self.get_ctx(cmd.id)?;
        let mut resp = abi::EventResp {
            uid: 0,
            id: ctx.id,
            event: cmd.event,
            status: cmd.status,
            param: abi::EventParam::Arg(cmd.arg),
            ece: abi::Ece::default(),
        };
        let guard = ctx.cm.lock();
        let cm = Option::as_ref(&*guard).ok_or(ENXIO)?;
        // Under the handler lock, so the uid is stable (as in the C module).
        cm.with_handler_locked(|| {
            resp.uid = ctx.uid.load(Ordering::Acquire);
            if resp.uid == 0 {
                return Err(EINVAL);
            }
            let ev = Event::new(ctx.clone(), None, None, &resp)?;
            let file = ctx.file();
            file.inner.lock().events.push_back(ev);
            file.wait.notify_all();
            Ok(())
        })
    }

    fn dispatch(
        this: ArcBorrow<'_, Self>,
        file: &File,
        hdr: CmdHdr,
        r: &mut UserSliceReader,
    ) -> Result {
        let (in_len, out_len) = (hdr.in_len, hdr.out_len);
        match hdr.cmd {
            Cmd::CreateId => Self::create_id(this, r, out_len),
            Cmd::DestroyId => this.destroy_id(r, out_len),
            Cmd::BindIp => {
                this.bind(Bind::decode_ip(&read_cmd::<{ Bind::IP_SIZE }>(r)?).map_err(|_| EINVAL)?)
            }
            Cmd::Bind => {
                this.bind(Bind::decode(&read_cmd::<{ Bind::SIZE }>(r)?).map_err(|_| EINVAL)?)
            }
            Cmd::ResolveIp => this.resolve_addr(
                ResolveAddr::decode_ip(&read_cmd::<{ ResolveAddr::IP_SIZE }>(r)?)
                    .map_err(|_| EINVAL)?,
            ),
            Cmd::ResolveAddr => this.resolve_addr(
                ResolveAddr::decode(&read_cmd::<{ ResolveAddr::SIZE }>(r)?).map_err(|_| EINVAL)?,
            ),
            Cmd::ResolveRoute => {
                let cmd = IdArg::decode(&read_cmd::<{ IdArg::SIZE }>(r)?);
                this.with_cm(cmd.id, true, |_, cm| cm.resolve_route(cmd.arg))
            }
            Cmd::QueryRoute => this.query_route(r, out_len),
            Cmd::Query => this.query(r, out_len),
            Cmd::Connect => this.connect(r, in_len),
            Cmd::Listen => this.listen(r),
            Cmd::Accept => this.accept(r, in_len),
            Cmd::Reject => this.reject(r),
            Cmd::Disconnect => this.disconnect(r),
            Cmd::InitQpAttr => this.init_qp_attr(r, out_len),
            Cmd::GetEvent => this.get_event(file, r, out_len),
            Cmd::SetOption => this.set_option(r),
            Cmd::Notify => this.notify(r),
            Cmd::JoinIpMcast => this.join(
                JoinMcast::decode_ip(&read_cmd::<{ JoinMcast::IP_SIZE }>(r)?)
                    .map_err(|_| EINVAL)?,
                out_len,
            ),
            Cmd::JoinMcast => this.join(
                JoinMcast::decode(&read_cmd::<{ JoinMcast::SIZE }>(r)?).map_err(|_| EINVAL)?,
                out_len,
            ),
            Cmd::LeaveMcast => this.leave(r, out_len),
            // GET_OPTION has no handler in the C module either.
            Cmd::GetOption => Err(ENOSYS),
            Cmd::WriteCmEvent => this.write_cm_event(r),
            Cmd::MigrateId => Self::migrate_id(this, file, r),
            Cmd::ResolveIbService => this.resolve_ib_service(r),
        }
    }
}

#[vtable]
impl MiscFile for UcmaFile {
    type OwnerModule = crate::UcmaModule;

    fn open(_file: &File) -> Result<Arc<Self>> {
        Arc::pin_init(
            try_pin_init!(UcmaFile {
                inner <- new_mutex!(FileInner {
                    ctxs: TaggedList::new(),
                    mcs: RBTree::new(),
                    events: List::new(),
                    closed: false,
                }),
                wait <- kernel::new_poll_condvar!("ucma_file::wait"),
            }),
            GFP_KERNEL,
        )
    }

    fn release(this: Arc<Self>, _file: &File) {
        this.inner.lock().closed = true;
        loop {
            let next = {
                let mut inner = this.inner.lock();
                unlist_first_ctx(&mut inner)
            };
            match next {
                Some(ctx) => {
                    destroy_ctx(&this, ctx);
                }
                None => break,
            }
        }
        let (events, mcs) = {
            let mut inner = this.inner.lock();
            (
                core::mem::take(&mut inner.events),
                core::mem::take(&mut inner.mcs),
            )
        };
        // Every context is destroyed, with its memberships: none should be
        // left, but an id that is must not outlive its file.
        for id in mcs.keys() {
            free_mc_id(*id);
        }
        // Dropped outside the lock (they may hold the last references).
        drop(events);
        drop(mcs);
    }

    fn write(this: ArcBorrow<'_, Self>, file: &File, buf: UserSlice, len: usize) -> Result<usize> {
        if !safe_file_access(file) {
            pr_err_once!("ucma_write: process changed security contexts after opening file descriptor, this is not allowed.\n");
            return Err(EACCES);
        }
        if len < CMD_HDR_SIZE {
            return Err(EINVAL);
        }
        let mut reader = buf.reader();
        let mut raw = [0u8; CMD_HDR_SIZE];
        reader.read_slice(&mut raw)?;
        let hdr = CmdHdr::decode(&raw, len).map_err(|_| EINVAL)?;
        Self::dispatch(this, file, hdr, &mut reader)?;
        Ok(len)
    }

    fn poll(this: ArcBorrow<'_, Self>, file: &File, table: PollTable<'_>) -> u32 {
        table.register_wait(file, &this.wait);
        if this.inner.lock().events.is_empty() {
            0
        } else {
            bindings::POLLIN | bindings::POLLRDNORM
        }
    }
}
