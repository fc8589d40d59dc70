// SPDX-License-Identifier: GPL-2.0

//! Unreliable datagrams (UD QPs, and the GSI QP, QP1): the requester's and
//! the responder's part of the C driver's `rxe_req.c`, `rxe_resp.c` and
//! `rxe_comp.c` for them.
//!
//! Requester: one packet per WQE (a message beyond the path MTU sends none
//! and completes successfully, as C does, C10-93.1.1): BTH and DETH (the Q_Key of the work
//! request, or the QP's if its high bit is set; the source QPN), the payload
//! gathered from the WQE's entries by lkey or taken from its inline data,
//! sent to the address vector of the WQE's address handle; the WQE then
//! completes on the send CQ (if signalled) with the message length, as the
//! completer does for a UD send once it is sent.
//!
//! Responder: a SEND ONLY (with immediate) takes the next WQE of the
//! receive queue or SRQ (none: the packet is dropped, as C does for UD);
//! the 40-byte GRH (the IPv6 header, or 20 zero bytes then the IPv4
//! header, `build_rdma_network_hdr`) then the payload are scattered into
//! its entries, and it completes on the receive CQ with the source QPN,
//! `IB_WC_GRH` (and the immediate data), the P_Key index and, for a kernel
//! consumer, the network header type and the VLAN.
//!
//! The GSI QP (QP1) is a UD QP for this: the MAD layer posts its MADs
//! with an address handle, and QP1 always sends the GSI Q_Key.

use crate::device::Rxe;
use crate::dma::DmaInfo;
use crate::mr::MrCache;
use crate::qp::Qp;
use crate::qp_attr::QpState;
use crate::rdma::{bindings, cq::Completion, ib_device::Device, mr::CopyBuf};
use crate::recv::RecvPkt;
use crate::task::Step;
use crate::wire::{
    bth::{
        Bth,
        BTH_DEF_PKEY, //
    },
    ext::{
        Deth,
        Immdt,
        GSI_QKEY, //
    },
    icrc::IpHdr,
    opcode::code,
};
use crate::wqe::{
    self,
    send_off, //
};
use crate::{
    copy,
    params, //
};
use kernel::{
    prelude::*,
    sync::Arc, //
};

/// Byte offsets in `wr.ud` of a send WQE (`struct rxe_send_wr`).
mod ud_off {
    use super::send_off::WR;
    /// `remote_qpn`.
    pub(super) const REMOTE_QPN: usize = WR;
    /// `remote_qkey`.
    pub(super) const REMOTE_QKEY: usize = WR + 4;
    /// `ah_num`.
    pub(super) const AH_NUM: usize = WR + 12;
}

/// The 40 bytes a UD receive buffer starts with (`union rdma_network_hdr`).
const GRH_LEN: usize = 40;

/// Sends the WQE at the head of `qp`'s send queue, if any, and completes
/// it; [`Step::Done`] when the queue is empty or the QP cannot send.
pub(crate) fn requester(qp: &Arc<Qp>) -> Step {
    match qp.state() {
        QpState::Rts => {}
        QpState::Sqd => {
            // Nothing is in flight: the drain is over.
            qp.check_sq_drained();
            return Step::Done;
        }
        _ => return Step::Done,
    }
    if qp.skb_out_high() {
        // Scheduled again when the packets in flight are few.
        return Step::Done;
    }
    let Some(dev) = qp.device() else {
        // The device is going (its clients, the MAD layer among them, are
        // gone): what is left is flushed, not left for a waiter to hang on.
        qp.flush_send();
        return Step::Done;
    };
    // The WQE's bytes, copied into the send side's buffer (allocated at
    // the QP's first send, outside the queue's irq-safe lock, and kept):
    // the requester owns the consumer index, so they do not change until
    // it moves.
    let Ok(mut buf) = crate::rc::take_wqe_buf(qp) else {
        // Nothing can be copied out: the next post runs the task again.
        return Step::Done;
    };
    let step = send_head(&dev, qp, &mut buf);
    crate::rc::put_wqe_buf(qp, buf);
    step
}

/// Sends and completes the WQE at the head of the send queue, copied into
/// `buf` (at least an element long).
fn send_head(dev: &Device<Rxe>, qp: &Arc<Qp>, buf: &mut [u8]) -> Step {
    let wqe = {
        let q = qp.sq_queue().lock();
        let Some(index) = q.head(crate::queue_index::QueueType::FromClient) else {
            return Step::Done;
        };
        let Some(wqe) = buf.get_mut(..q.elem_size()) else {
            return Step::Done;
        };
        if q.read_bytes(index, 0, wqe).is_err() {
            return Step::Done;
        }
        wqe
    };
    let wqe = &*wqe;
    let status = send_one(dev, qp, wqe);
    qp.req_skb_sent();
    let flags = wqe::get32(wqe, send_off::SEND_FLAGS);
    let signalled = qp.sq_sig_all() || flags & bindings::ib_send_flags_IB_SEND_SIGNALED as u32 != 0;
    let ok = status == bindings::ib_wc_status_IB_WC_SUCCESS;
    if ok {
        dev.data().count(params::CNT_RDMA_SEND);
    }
    let completion = if signalled || !ok {
        let dma = DmaInfo::decode(wqe.get(send_off::DMA..).unwrap_or_default()).unwrap_or_default();
        let c = Completion {
            wr_id: wqe::get64(wqe, send_off::WR_ID),
            status,
            opcode: bindings::ib_wc_opcode_IB_WC_SEND,
            byte_len: dma.length,
            qp_num: qp.qpn(),
            qp: qp.ib_ptr(),
            ..Completion::default()
        };
        Some(c)
    } else {
        None
    };
    // The slot is freed before the completion is posted, as the C
    // completer does: a consumer that sees the CQE may post into the slot
    // at once, and with a one-deep queue it would otherwise find the
    // queue still full (ENOMEM from the provider's post_send).
    {
        let mut q = qp.sq_queue().lock();
        let _ = q.advance_consumer(crate::queue_index::QueueType::FromClient);
    }
    if let Some(c) = completion {
        let _ = qp.scq().post(&c, false);
    }
    if !ok {
        // As the C requester's error path: the QP goes to ERR, which
        // flushes the rest.
        qp.as_arc_borrow().set_error();
        return Step::Done;
    }
    Step::More
}

/// Builds and sends the packet of one UD send WQE; the completion status.
fn send_one(dev: &Device<Rxe>, qp: &Arc<Qp>, w: &[u8]) -> u32 {
    use bindings::{
        ib_wc_status_IB_WC_LOC_QP_OP_ERR as LOC_QP_OP_ERR,
        ib_wc_status_IB_WC_SUCCESS as SUCCESS, //
    };
    let opcode = wqe::get32(w, send_off::OPCODE);
    let flags = wqe::get32(w, send_off::SEND_FLAGS);
    let bth_op = match opcode {
        wqe::opcode::SEND => code::UD_SEND_ONLY,
        wqe::opcode::SEND_WITH_IMM => code::UD_SEND_ONLY_WITH_IMMEDIATE,
        _ => return LOC_QP_OP_ERR,
    };
    let Some(mut dma) = w.get(send_off::DMA..).and_then(DmaInfo::decode) else {
        return LOC_QP_OP_ERR;
    };
    let list = w.get(send_off::DATA..).unwrap_or_default();
    let len = dma.length as usize;
    if len > dev.data().mtu_bytes() as usize {
        // C10-93.1.1: no packet for a message beyond the MTU, and no error
        // either: C fakes a successful send that still takes a PSN.
        let _ = qp.next_req_psn();
        return SUCCESS;
    }
    let rxe = dev.data();
    let Some(av) = rxe.ahs.av(wqe::get32(w, ud_off::AH_NUM), qp.pd_id()) else {
        return LOC_QP_OP_ERR;
    };
    let wr_qkey = wqe::get32(w, ud_off::REMOTE_QKEY);
    // The GSI QP always sends the GSI Q_Key, whatever the work request
    // says (C: `deth_set_qkey(pkt, GSI_QKEY)` for QP1).
    let qkey = if qp.qpn() == 1 {
        GSI_QKEY
    } else if wr_qkey & 0x8000_0000 != 0 {
        qp.with_attrs(|a| a.qkey)
    } else {
        wr_qkey
    };
    let psn = qp.next_req_psn();
    let mut bth = Bth::new(bth_op, wqe::get32(w, ud_off::REMOTE_QPN), psn);
    bth.se = flags & bindings::ib_send_flags_IB_SEND_SOLICITED as u32 != 0;
    bth.pkey = BTH_DEF_PKEY;
    let deth = Deth {
        qkey,
        sqp: qp.qpn(),
    };
    let imm = wqe::get32(w, send_off::EX);
    let inline = flags & wqe::SEND_INLINE != 0;
    let pd = qp.pd_id();
    let mut copy_status = SUCCESS;
    let r = crate::xmit::xmit(
        dev,
        qp,
        &crate::xmit::dest_of(&av),
        &bth,
        len,
        &mut |p| {
            p.set(&deth)?;
            if bth_op == code::UD_SEND_ONLY_WITH_IMMEDIATE {
                // Kept in network order in the WQE, as in the completion.
                p.set(&Immdt {
                    imm: u32::from_be(imm),
                })?;
            }
            Ok(())
        },
        None,
        |payload| {
            let r = if inline {
                dma.take_inline(list, payload)
            } else {
                copy::copy_data(
                    &rxe,
                    &mut MrCache::default(),
                    pd,
                    0,
                    &mut dma,
                    list,
                    CopyBuf::FromMr(payload),
                )
            };
            r.map_err(|e| {
                copy_status = e.send_status();
                EINVAL
            })
        },
    );
    match r {
        Ok(()) => SUCCESS,
        Err(_) if copy_status != SUCCESS => copy_status,
        Err(_) => LOC_QP_OP_ERR,
    }
}

/// Takes the next request packet of `qp` and delivers it to a receive WQE;
/// [`Step::Done`] when none is left.
pub(crate) fn responder(qp: &Arc<Qp>) -> Step {
    let Some(pkt) = qp.io().take_req() else {
        return Step::Done;
    };
    let Some(dev) = qp.device() else {
        return Step::More;
    };
    receive_one(&dev, qp, pkt);
    Step::More
}

fn receive_one(dev: &Device<Rxe>, qp: &Arc<Qp>, pkt: RecvPkt) {
    let Some(view) = pkt.view() else {
        return;
    };
    let (imm, with_imm) = match view.opcode() {
        code::UD_SEND_ONLY => (0, false),
        code::UD_SEND_ONLY_WITH_IMMEDIATE => (view.immdt().map_or(0, |i| i.imm.to_be()), true),
        _ => return,
    };
    let Some(deth) = view.deth() else {
        return;
    };
    let payload = view.payload();
    let Some(grh) = network_hdr(&pkt) else {
        return;
    };
    let solicited = view.bth().se;
    let mut list = [0u8; crate::srq::RECV_LIST_LEN];
    let Some(wqe) = qp.take_recv_wqe(&mut list) else {
        // No receive posted: a datagram is dropped (C: RNR for UD).
        return;
    };
    let rxe = dev.data();
    let total = GRH_LEN + payload.len();
    let mut dma = DmaInfo {
        length: wqe.length,
        resid: wqe.length,
        cur_sge: 0,
        num_sge: wqe.num_sge,
        sge_offset: 0,
    };
    let mut status = bindings::ib_wc_status_IB_WC_SUCCESS;
    if total > wqe.length as usize {
        status = bindings::ib_wc_status_IB_WC_LOC_LEN_ERR;
    } else {
        let access = bindings::ib_access_flags_IB_ACCESS_LOCAL_WRITE;
        let mut mrs = MrCache::default();
        for part in [&grh[..], payload] {
            if let Err(e) = copy::copy_data(
                &rxe,
                &mut mrs,
                qp.pd_id(),
                access,
                &mut dma,
                &list,
                CopyBuf::ToMr(part),
            ) {
                status = if e.is_length() {
                    bindings::ib_wc_status_IB_WC_LOC_LEN_ERR
                } else {
                    bindings::ib_wc_status_IB_WC_LOC_PROT_ERR
                };
                break;
            }
        }
    }
    let c = if status == bindings::ib_wc_status_IB_WC_SUCCESS {
        recv_completion(qp, &pkt, wqe.wr_id, total as u32, deth.sqp, imm, with_imm)
    } else {
        // As C: an error completion says which WQE and why, nothing more.
        Completion {
            wr_id: wqe.wr_id,
            status,
            qp_num: qp.qpn(),
            qp: qp.ib_ptr(),
            ..Completion::default()
        }
    };
    rxe.count(params::CNT_RDMA_RECV);
    if qp.rcq().post(&c, solicited).is_err() {
        // A full receive CQ: the QP goes to the error state, as C's
        // responder does (`RESPST_ERR_CQ_OVERFLOW`).
        qp.as_arc_borrow().set_error();
    }
    pkt.consume();
}

/// The successful completion of a datagram received on `qp` (`do_complete`
/// for UD and GSI). A kernel consumer (the MAD layer, the IB CM building a
/// reply's address from it with `ib_init_ah_attr_from_wc`) also gets the
/// network header type and the VLAN the packet came in on; a user one only
/// the flags `struct ib_uverbs_wc` has room for, as C gives them.
fn recv_completion(
    qp: &Qp,
    pkt: &RecvPkt,
    wr_id: u64,
    byte_len: u32,
    src_qp: u32,
    imm: u32,
    with_imm: bool,
) -> Completion {
    let mut wc_flags = bindings::ib_wc_flags_IB_WC_GRH;
    if with_imm {
        wc_flags |= bindings::ib_wc_flags_IB_WC_WITH_IMM;
    }
    let mut c = Completion {
        wr_id,
        status: bindings::ib_wc_status_IB_WC_SUCCESS,
        opcode: bindings::ib_wc_opcode_IB_WC_RECV,
        byte_len,
        qp_num: qp.qpn(),
        qp: qp.ib_ptr(),
        ex: imm,
        src_qp,
        pkey_index: pkt.pkey_index,
        port_num: pkt.port_num,
        ..Completion::default()
    };
    if !qp.rcq().is_user() {
        wc_flags |= bindings::ib_wc_flags_IB_WC_WITH_NETWORK_HDR_TYPE;
        c.network_hdr_type = match pkt.ip_header() {
            Some(IpHdr::V4(_)) => bindings::rdma_network_type_RDMA_NETWORK_IPV4,
            _ => bindings::rdma_network_type_RDMA_NETWORK_IPV6,
        } as u8;
        if let Some(id) = pkt.vlan_id() {
            wc_flags |= bindings::ib_wc_flags_IB_WC_WITH_VLAN;
            c.vlan_id = id;
        }
    }
    c.wc_flags = wc_flags;
    c
}

/// `build_rdma_network_hdr`: the IPv6 header, or 20 zero bytes then the
/// IPv4 header.
fn network_hdr(pkt: &RecvPkt) -> Option<[u8; GRH_LEN]> {
    let mut grh = [0u8; GRH_LEN];
    match pkt.ip_header()? {
        IpHdr::V4(h) => grh[20..].copy_from_slice(h),
        IpHdr::V6(h) => grh.copy_from_slice(h),
    }
    Some(grh)
}
