// SPDX-License-Identifier: GPL-2.0

//! The QPs attached to one multicast group, and the device-wide bounds on
//! groups and attachments (`rxe_mcast.c`).
//!
//! No kernel dependency: this file is also built by the host test crate
//! (`tests/host`).

use crate::params;

/// Why an attach is refused; the C driver answers `ENOMEM` to both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttachRefused {
    /// The device has `MAX_TOT_MCAST_QP_ATTACH` attachments.
    DeviceFull,
    /// The group has `MAX_MCAST_QP_ATTACH` QPs.
    GroupFull,
}

/// The QPs of a group, by QP number.
#[derive(Clone, Debug)]
pub struct Group {
    qpns: [u32; params::MAX_MCAST_QP_ATTACH as usize],
    len: usize,
}

impl Default for Group {
    fn default() -> Self {
        Self::new()
    }
}

impl Group {
    /// A group without QPs.
    pub const fn new() -> Self {
        Self {
            qpns: [0; params::MAX_MCAST_QP_ATTACH as usize],
            len: 0,
        }
    }

    /// The attached QPs, in attach order.
    pub fn qpns(&self) -> &[u32] {
        &self.qpns[..self.len]
    }

    /// Whether no QP is attached.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `qpn` is attached.
    pub fn contains(&self, qpn: u32) -> bool {
        self.qpns().contains(&qpn)
    }

    /// Attaches `qpn`, counting it in the device's `total` attachments;
    /// `true` if it was not a member. Attaching a member again does nothing,
    /// as in the C driver.
    pub fn attach(&mut self, qpn: u32, total: &mut u32) -> Result<bool, AttachRefused> {
        if self.contains(qpn) {
            return Ok(false);
        }
        if *total >= params::MAX_TOT_MCAST_QP_ATTACH {
            return Err(AttachRefused::DeviceFull);
        }
        if self.len >= self.qpns.len() {
            return Err(AttachRefused::GroupFull);
        }
        self.qpns[self.len] = qpn;
        self.len += 1;
        *total += 1;
        Ok(true)
    }

    /// Detaches `qpn`; `false` if it was not attached.
    pub fn detach(&mut self, qpn: u32, total: &mut u32) -> bool {
        let Some(i) = self.qpns().iter().position(|&q| q == qpn) else {
            return false;
        };
        self.qpns.copy_within(i + 1..self.len, i);
        self.len -= 1;
        *total = total.saturating_sub(1);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attach_detach() {
        let mut g = Group::new();
        let mut total = 0;
        assert!(g.is_empty());
        assert_eq!(g.attach(17, &mut total), Ok(true));
        assert_eq!(g.attach(18, &mut total), Ok(true));
        assert_eq!(g.attach(17, &mut total), Ok(false));
        assert_eq!(total, 2);
        assert_eq!(g.qpns(), &[17, 18]);
        assert!(g.detach(17, &mut total));
        assert!(!g.detach(17, &mut total));
        assert_eq!(g.qpns(), &[18]);
        assert_eq!(total, 1);
    }

    #[test]
    fn limits() {
        let mut g = Group::new();
        let mut total = 0;
        for q in 0..params::MAX_MCAST_QP_ATTACH {
            assert_eq!(g.attach(100 + q, &mut total), Ok(true));
        }
        assert_eq!(g.attach(99, &mut total), Err(AttachRefused::GroupFull));
        let mut g = Group::new();
        let mut total = params::MAX_TOT_MCAST_QP_ATTACH;
        assert_eq!(g.attach(1, &mut total), Err(AttachRefused::DeviceFull));
        assert!(g.is_empty());
    }
}
