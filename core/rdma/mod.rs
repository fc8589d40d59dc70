// SPDX-License-Identifier: GPL-2.0

//! The RDMA-core side shared by this project's modules.
//!
//! Each module's crate includes this directory as its `rdma` module (an
//! out-of-tree module is a single Rust crate, so the shared code cannot be a
//! library crate of its own). It holds the generated bindings and the safe
//! wrappers the drivers use; it is the only place with raw pointers and
//! `unsafe`.

pub mod ah;
pub mod bh_lock;
pub mod bindings;
pub mod cm;
pub mod cq;
pub mod gid;
pub mod ib_client;
pub mod ib_device;
pub mod ids;
pub mod kthread;
pub mod link;
pub mod mcast;
pub mod misc;
pub mod mmap;
pub mod module_slot;
pub mod mr;
pub mod mw;
pub mod netdev;
pub mod netns;
pub mod object;
pub mod pool;
pub mod qp;
pub mod skb;
pub mod slot;
pub mod srq;
pub mod tagged_list;
pub mod udata;
pub mod udp;
pub mod umem;
pub mod wait;
pub mod workqueue;

/// What an op returns to the RDMA core: 0, or the error's negative errno.
#[inline]
pub fn op_result(r: kernel::error::Result) -> kernel::ffi::c_int {
    match r {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}
