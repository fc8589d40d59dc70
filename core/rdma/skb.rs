// SPDX-License-Identifier: GPL-2.0

//! Socket buffers (`struct sk_buff`) the driver owns.
//!
//! An [`Skb`] is one reference to an skb: dropping it frees the skb as a
//! drop (`kfree_skb`, seen by the `skb:kfree_skb` tracepoint and drop
//! monitors), [`Skb::consume`] as delivered (`consume_skb`).
//!
//! Everything here is `#[inline]`: the `rdma` module is also built into
//! `rdma_ucm`, which does not link the glue it calls.

use super::bindings;
use core::ptr::NonNull;
use kernel::prelude::*;

/// An owned reference to a socket buffer.
///
/// # Invariants
///
/// The pointer is a valid skb of which this value owns one reference.
pub struct Skb(NonNull<bindings::sk_buff>);

// SAFETY: an skb reference may be freed or used from any context.
unsafe impl Send for Skb {}

impl Skb {
    /// Takes ownership of `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` must be a valid skb whose reference the caller gives away.
    #[inline]
    pub unsafe fn from_raw(ptr: NonNull<bindings::sk_buff>) -> Self {
        // INVARIANT: the caller's promise.
        Self(ptr)
    }

    /// The raw skb, still owned by `self`.
    #[inline]
    pub fn as_raw(&self) -> *mut bindings::sk_buff {
        self.0.as_ptr()
    }

    /// Gives the reference away, for C that takes ownership.
    #[inline]
    pub fn into_raw(self) -> *mut bindings::sk_buff {
        let ptr = self.0.as_ptr();
        core::mem::forget(self);
        ptr
    }

    /// Frees the skb as delivered, not dropped (`consume_skb`).
    #[inline]
    pub fn consume(self) {
        // SAFETY: the reference is owned (type invariant) and given up here.
        unsafe { bindings::rrxe_consume_skb(self.into_raw()) };
    }

    /// Another reference to the same data with its own header
    /// (`skb_clone`, atomic allocation); `None` without memory. The data
    /// is shared: neither may be written.
    #[inline]
    pub fn clone_atomic(&self) -> Option<Self> {
        // SAFETY: the skb is valid; the clone is a new reference we own.
        let c = unsafe { bindings::rrxe_skb_clone_atomic(self.as_raw()) };
        // SAFETY: a new skb, ours.
        NonNull::new(c).map(|c| unsafe { Self::from_raw(c) })
    }

    /// The length of the data (linear part and fragments).
    #[inline]
    pub fn len(&self) -> u32 {
        // SAFETY: the skb is valid (type invariant).
        unsafe { (*self.as_raw()).len }
    }

    /// The length of the linear part (`skb_headlen`).
    #[inline]
    fn headlen(&self) -> u32 {
        // SAFETY: the skb is valid (type invariant).
        unsafe {
            let skb = self.as_raw();
            (*skb).len.wrapping_sub((*skb).data_len)
        }
    }

    /// Whether there is no data.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The data of the linear part (all of it after [`Skb::linearize`]).
    #[inline]
    pub fn data(&self) -> &[u8] {
        // SAFETY: the skb is valid; its linear part is `headlen` readable
        // bytes from `data`, unchanged while `self` is borrowed (only `&mut
        // self` methods move or reallocate them).
        unsafe {
            // `skb_headlen` and `skb->data`, read here (the receive and
            // transmit paths ask several times a packet).
            let skb = self.as_raw();
            let len = (*skb).len.wrapping_sub((*skb).data_len) as usize;
            let data = (*skb).data;
            if data.is_null() || len == 0 {
                return &[];
            }
            core::slice::from_raw_parts(data, len)
        }
    }

    /// The bytes from the network header to the data: a received
    /// datagram's IP and UDP headers once the UDP header is pulled (empty if
    /// the network header is not before the data).
    #[inline]
    pub fn headers(&self) -> &[u8] {
        // SAFETY: the skb is valid; its network header and data point into
        // its buffer, which is readable from the head to the tail, so the
        // bytes between the two are; they stay unchanged while `self` is
        // borrowed (only `&mut self` methods change them).
        unsafe {
            let nh = bindings::rrxe_skb_network_header(self.as_raw());
            let data = (*self.as_raw()).data;
            if nh.is_null() || data.is_null() || nh > data {
                return &[];
            }
            core::slice::from_raw_parts(nh, data.offset_from(nh) as usize)
        }
    }

    /// The VLAN ID of the device a received skb came in on, if that is a
    /// VLAN device (`is_vlan_dev(skb->dev)`, `vlan_dev_vlan_id`).
    #[inline]
    pub fn rx_vlan_id(&self) -> Option<u16> {
        // SAFETY: the skb is valid (type invariant); its device, if any, is
        // a received skb's, which stays registered while the skb is queued
        // to the device's QPs (they are drained before it goes).
        let id = unsafe { bindings::rrxe_skb_rx_vlan_id(self.as_raw()) };
        (id != 0xffff).then_some(id)
    }

    /// Removes `n` bytes from the start of the linear data (`skb_pull`);
    /// `EINVAL` if the linear part is shorter.
    #[inline]
    pub fn pull(&mut self, n: u32) -> Result {
        if n > self.headlen() {
            return Err(EINVAL);
        }
        // SAFETY: the skb is valid and owned; `n` bytes are linear.
        unsafe { bindings::rrxe_skb_pull(self.as_raw(), n) };
        Ok(())
    }
}

impl Drop for Skb {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the reference is owned (type invariant) and given up here.
        unsafe { bindings::rrxe_kfree_skb(self.as_raw()) };
    }
}
