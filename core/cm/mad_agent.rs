// SPDX-License-Identifier: GPL-2.0

//! MAD agents of the CM class on a port's GSI QP (`ib_register_mad_agent()`).
//!
//! An agent registered for the CM class receives every CM MAD of its port
//! (the MAD layer has already checked the class and its version); an agent
//! registered without a class only sends (the C CM sends its REPs through
//! one, so that a REP retry is not taken for the answer to a REQ). The
//! agent's handlers run in the MAD layer's completion context, never after
//! `ib_unregister_mad_agent()` returns, which is what lets the agent hold
//! its handler context by a plain reference count.

use super::proto::{
    field::{
        Mad,
        MAD_HDR_SIZE,
        MAD_SIZE, //
    },
    msgs::{
        MadHdr,
        BASE_VERSION,
        CM_CLASS_VERSION,
        METHOD_SEND,
        MGMT_CLASS_CM, //
    },
};
use crate::{
    client::ClientDevice,
    rdma::bindings, //
};
use core::{
    marker::PhantomData,
    ptr::NonNull, //
};
use kernel::{
    error::{
        from_err_ptr,
        to_result, //
    },
    ffi,
    prelude::*,
    sync::Arc, //
};

/// `send_buf->context[0]` of an answer to a retried message
/// (`CM_DIRECT_RETRY_CTX`): its completion counts as a retry.
fn direct_retry_mark() -> *mut ffi::c_void {
    core::ptr::without_provenance_mut(1)
}

/// A received MAD, owned until dropped (`ib_free_recv_mad()`).
///
/// # Invariants
///
/// `wc` is a receive completion the MAD layer handed to a receive handler,
/// not freed yet, whose MAD buffer holds at least [`MAD_SIZE`] bytes.
pub(crate) struct RecvMad {
    wc: NonNull<bindings::ib_mad_recv_wc>,
}

// SAFETY: the completion is heap memory of the MAD layer, owned by this value
// alone; the MAD layer frees it from any context.
unsafe impl Send for RecvMad {}

impl RecvMad {
    /// The MAD.
    pub(crate) fn mad(&self) -> &Mad {
        // SAFETY: the buffer holds a whole MAD (type invariant), owned by
        // this value and not written by anyone while it lives.
        unsafe {
            &*(*self.wc.as_ptr())
                .recv_buf
                .__bindgen_anon_1
                .mad
                .cast::<Mad>()
        }
    }
}

impl RecvMad {
    /// The work completion and the GRH of the MAD, valid while `self` lives.
    pub(crate) fn raw_wc(&self) -> (*const bindings::ib_wc, *const bindings::ib_grh) {
        // SAFETY: `wc` is a valid completion (type invariant).
        unsafe {
            let rwc = self.wc.as_ptr();
            ((*rwc).wc.cast_const(), (*rwc).recv_buf.grh.cast_const())
        }
    }
}

impl Drop for RecvMad {
    fn drop(&mut self) {
        // SAFETY: not freed yet (type invariant); this is the last use.
        unsafe { bindings::ib_free_recv_mad(self.wc.as_ptr()) };
    }
}

/// What an agent does with its MADs.
pub(crate) trait MadHandler: Send + Sync + 'static {
    /// A CM MAD arrived on the agent's port; `agent` can answer it.
    fn recv(&self, agent: &Responder<'_>, mad: RecvMad);

    /// A MAD of attribute `attr_id` the agent sent is done, after
    /// `retries` retries.
    fn sent(&self, attr_id: u16, retries: u32);
}

/// The agent a MAD arrived on, for the duration of its receive handler.
///
/// # Invariants
///
/// `agent` is registered for `'a` (unregistering waits for the handler).
pub(crate) struct Responder<'a> {
    agent: NonNull<bindings::ib_mad_agent>,
    _handler: PhantomData<&'a ()>,
}

impl Responder<'_> {
    /// Sends to the sender of `rcv` the MAD `fill` writes
    /// (`cm_alloc_response_msg()` and `ib_post_send_mad()`): an address
    /// handle from the receive completion, the GSI QP, the P_Key index the
    /// MAD came with. `direct_retry` marks the answer to a retried message.
    pub(crate) fn respond(
        &self,
        rcv: &RecvMad,
        direct_retry: bool,
        fill: impl FnOnce(&mut Mad),
    ) -> Result {
        let agent = self.agent.as_ptr();
        // SAFETY: `rcv` owns a valid completion (its type invariant).
        let (wc, grh) = unsafe {
            let rwc = rcv.wc.as_ptr();
            ((*rwc).wc, (*rwc).recv_buf.grh)
        };
        // SAFETY: the agent is registered (type invariant) and the
        // completion's work completion is valid while `rcv` lives.
        let buf = from_err_ptr(unsafe {
            bindings::ib_create_send_mad(
                agent,
                1,
                (*wc).pkey_index,
                0,
                MAD_HDR_SIZE as ffi::c_int,
                (MAD_SIZE - MAD_HDR_SIZE) as ffi::c_int,
                bindings::GFP_ATOMIC,
                BASE_VERSION,
            )
        })?;
        // SAFETY: as above; the agent's QP and PD live as long as the agent.
        let ah = from_err_ptr(unsafe {
            bindings::ib_create_ah_from_wc((*(*agent).qp).pd, wc, grh, u32::from((*agent).port_num))
        });
        let ah = match ah {
            Ok(ah) => ah,
            Err(e) => {
                // SAFETY: `buf` was created above and never posted.
                unsafe { bindings::ib_free_send_mad(buf) };
                return Err(e);
            }
        };
        // SAFETY: `buf` is ours until posted; its MAD buffer holds a header
        // and `MAD_SIZE - MAD_HDR_SIZE` bytes of data, zeroed.
        let mad = unsafe {
            (*buf).ah = ah;
            if direct_retry {
                (*buf).context[0] = direct_retry_mark();
            }
            &mut *(*buf).mad.cast::<Mad>()
        };
        fill(mad);
        // SAFETY: `buf` is complete; the MAD layer owns it until its
        // completion reaches `send_callback`.
        let posted = to_result(unsafe { bindings::ib_post_send_mad(buf, core::ptr::null_mut()) });
        if posted.is_err() {
            // SAFETY: not posted: still ours.
            unsafe { free_send(buf) };
        }
        posted
    }
}

/// Frees a send buffer and its address handle (`cm_free_msg()`).
///
/// # Safety
///
/// `buf` is a send buffer of ours, not posted or completed.
pub(crate) unsafe fn free_send(buf: *mut bindings::ib_mad_send_buf) {
    // SAFETY: the buffer and its handle are ours (the caller's guarantee).
    unsafe {
        let ah = (*buf).ah;
        if !ah.is_null() {
            bindings::rdma_destroy_ah_user(ah, 0, core::ptr::null_mut());
        }
        bindings::ib_free_send_mad(buf);
    }
}

/// A registered agent; dropping it unregisters it, after which none of its
/// handlers runs.
///
/// # Invariants
///
/// `agent` was returned by `ib_register_mad_agent()` with `ctx` as context
/// and is registered until drop.
pub(crate) struct MadAgent<H: MadHandler> {
    agent: NonNull<bindings::ib_mad_agent>,
    ctx: Arc<H>,
}

// SAFETY: the agent pointer is only passed back to the MAD layer, which
// accepts it from any thread; the context is `Send + Sync`.
unsafe impl<H: MadHandler> Send for MadAgent<H> {}
// SAFETY: `&MadAgent` exposes nothing that touches the agent.
unsafe impl<H: MadHandler> Sync for MadAgent<H> {}

impl<H: MadHandler> MadAgent<H> {
    /// Registers an agent on `port` of `dev`, receiving the CM class's sends
    /// (`receive`) or only sending.
    pub(crate) fn register(
        dev: &ClientDevice,
        port: u32,
        receive: bool,
        ctx: Arc<H>,
    ) -> Result<Self> {
        let mut req: bindings::ib_mad_reg_req = pin_init::zeroed();
        req.mgmt_class = MGMT_CLASS_CM;
        req.mgmt_class_version = CM_CLASS_VERSION;
        // `set_bit(IB_MGMT_METHOD_SEND, method_mask)`: every CM message is
        // a send.
        req.method_mask[0] = 1 << METHOD_SEND;
        let (reg, recv): (*mut bindings::ib_mad_reg_req, bindings::ib_mad_recv_handler) = if receive
        {
            (&mut req, Some(Self::recv_callback))
        } else {
            (core::ptr::null_mut(), None)
        };
        // SAFETY: the device is registered; `req` lives for the call (the
        // MAD layer copies it); `ctx` outlives the agent, which holds it.
        let agent = from_err_ptr(unsafe {
            bindings::ib_register_mad_agent(
                dev.as_raw(),
                port,
                bindings::ib_qp_type_IB_QPT_GSI,
                reg,
                0,
                Some(Self::send_callback),
                recv,
                Arc::as_ptr(&ctx).cast_mut().cast(),
                0,
            )
        })?;
        let agent = NonNull::new(agent).ok_or(EINVAL)?;
        // INVARIANT: registered just above with `ctx` as context.
        Ok(Self { agent, ctx })
    }

    /// The C agent, to send through while it is registered.
    pub(crate) fn raw(&self) -> *mut bindings::ib_mad_agent {
        self.agent.as_ptr()
    }

    /// The handler context.
    pub(crate) fn ctx(&self) -> &Arc<H> {
        &self.ctx
    }

    /// # Safety
    ///
    /// Called by the MAD layer for an agent registered by `register`, with a
    /// receive completion the callee owns.
    unsafe extern "C" fn recv_callback(
        agent: *mut bindings::ib_mad_agent,
        _send_buf: *mut bindings::ib_mad_send_buf,
        wc: *mut bindings::ib_mad_recv_wc,
    ) {
        let Some(wc) = NonNull::new(wc) else {
            return;
        };
        // INVARIANT: the MAD layer gives the handler a completion to free;
        // the GSI receive buffers hold a whole MAD.
        let mad = RecvMad { wc };
        // SAFETY: the agent's context is the `Arc<H>` the agent holds until
        // it is unregistered, which waits for this handler.
        let ctx = unsafe { &*(*agent).context.cast::<H>() };
        let Some(agent) = NonNull::new(agent) else {
            return;
        };
        // INVARIANT: the agent is registered while its handler runs.
        let responder = Responder {
            agent,
            _handler: PhantomData,
        };
        ctx.recv(&responder, mad);
    }

    /// # Safety
    ///
    /// Called by the MAD layer for a send of an agent registered by
    /// `register`, with its completion.
    unsafe extern "C" fn send_callback(
        agent: *mut bindings::ib_mad_agent,
        wc: *mut bindings::ib_mad_send_wc,
    ) {
        // Each MAD is done with at its completion (`cm_send_handler()`); a
        // tracked one (an ID's REQ, REP or DREQ) tells its ID first.
        // SAFETY: the completion and its buffer are valid for the call; the
        // buffer is ours again; the context is as in `recv_callback`;
        // `context[1]`, when set, is the ID reference `id::post` gave it.
        unsafe {
            let buf = (*wc).send_buf;
            let owner = (*buf).context[1];
            if !owner.is_null() {
                (*buf).context[1] = core::ptr::null_mut();
                crate::id::send_done(owner, buf, (*wc).status);
            }
            let retries = if (*buf).context[0] == direct_retry_mark() {
                1
            } else {
                u32::try_from((*buf).retries).unwrap_or(0)
            };
            let attr_id = MadHdr(&*(*buf).mad.cast::<Mad>()).attr_id();
            (*(*agent).context.cast::<H>()).sent(attr_id, retries);
            free_send(buf);
        }
    }
}

impl<H: MadHandler> Drop for MadAgent<H> {
    fn drop(&mut self) {
        // SAFETY: registered since construction (type invariant); this
        // waits for running handlers, so `ctx` can go afterwards.
        unsafe { bindings::ib_unregister_mad_agent(self.agent.as_ptr()) };
    }
}

/// The largest MAD the CM reads; the receive buffers are at least this big.
const _: () = assert!(MAD_SIZE == core::mem::size_of::<bindings::ib_mad>());
