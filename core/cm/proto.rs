// SPDX-License-Identifier: GPL-2.0

//! The kernel-independent parts of the IB connection manager: the message
//! codec and the connection state machine. The module includes this file
//! with `#[path]`, as does the host test crate, so both see the same tree.

pub(crate) mod field;
pub(crate) mod format;
pub(crate) mod issue;
pub(crate) mod lookup;
pub(crate) mod msgs;
pub(crate) mod state;
pub(crate) mod timing;
