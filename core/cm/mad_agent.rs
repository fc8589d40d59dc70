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
        MAD_SIZE, //
    },
    msgs::{
        CM_CLASS_VERSION,
        METHOD_SEND,
        MGMT_CLASS_CM, //
    },
};
use crate::{
    client::ClientDevice,
    rdma::bindings, //
};
use core::ptr::NonNull;
use kernel::{
    error::from_err_ptr,
    prelude::*,
    sync::Arc, //
};

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

impl Drop for RecvMad {
    fn drop(&mut self) {
        // SAFETY: not freed yet (type invariant); this is the last use.
        unsafe { bindings::ib_free_recv_mad(self.wc.as_ptr()) };
    }
}

/// What an agent does with its MADs.
pub(crate) trait MadHandler: Send + Sync + 'static {
    /// A CM MAD arrived on the agent's port.
    fn recv(&self, mad: RecvMad);
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
        ctx.recv(mad);
    }

    /// # Safety
    ///
    /// Called by the MAD layer for a send of an agent registered by
    /// `register`, with its completion.
    unsafe extern "C" fn send_callback(
        _agent: *mut bindings::ib_mad_agent,
        wc: *mut bindings::ib_mad_send_wc,
    ) {
        // Nothing is sent yet: a completion can only be for a buffer the
        // MAD layer created for us, which is freed here.
        // SAFETY: the completion and its buffer are valid for the call; the
        // buffer is ours to free.
        unsafe { bindings::ib_free_send_mad((*wc).send_buf) };
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
