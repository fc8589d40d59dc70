// SPDX-License-Identifier: GPL-2.0

//! The deadlines of an RC QP's two timers, the C driver's `retrans_timer`
//! and `rnr_nak_timer`: when each is due, and what the one kernel timer
//! that serves both (rxe/rc_timer.rs) must be set to. Times are in
//! nanoseconds from an arbitrary origin of the QP's.
//!
//! Kernel-independent: also compiled into the host tests.

use core::num::NonZeroU64;

/// Nanoseconds in a second.
const NSEC_PER_SEC: u64 = 1_000_000_000;

/// One jiffy in nanoseconds at `hz` ticks a second.
pub(crate) fn jiffy_ns(hz: u32) -> u64 {
    NSEC_PER_SEC / u64::from(hz.max(1))
}

/// The retransmission timer's period for an ACK timeout of
/// `timeout_jiffies` (the C driver's `qp_timeout_jiffies`); `None` when it
/// is 0 (the QP's `timeout` attribute 0: no timer).
pub(crate) fn retrans_period_ns(timeout_jiffies: u64, hz: u32) -> Option<u64> {
    (timeout_jiffies != 0).then(|| timeout_jiffies.saturating_mul(jiffy_ns(hz)))
}

/// The RNR NAK timer's delay for the `usecs` the responder asked for
/// (`rnrnak_jiffies`: whole jiffies rounded up, at least one).
pub(crate) fn rnr_delay_ns(usecs: u32, hz: u32) -> u64 {
    let j = jiffy_ns(hz);
    (u64::from(usecs) * 1000).div_ceil(j).max(1) * j
}

/// The timers that expired ([`Deadlines::expire`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Fired {
    /// The retransmission timer (`retransmit_timer`: `comp.timeout`).
    pub(crate) retrans: bool,
    /// The RNR NAK timer (`rnr_nak_timer`: a send queue retry is due).
    pub(crate) rnr: bool,
}

/// What to do with the kernel timer ([`Deadlines::arm`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arm {
    /// It is set for the earliest deadline already.
    Keep,
    /// (Re)start it to expire this many nanoseconds from now.
    Start(u64),
    /// Nothing is pending: stop it.
    Cancel,
}

/// A pending deadline: 8 bytes, not 16 as an `Option<u64>` (every QP has
/// three). A deadline due at 0 is kept as 1: a nanosecond late.
type At = Option<NonZeroU64>;

fn at(t: u64) -> At {
    Some(NonZeroU64::new(t).unwrap_or(NonZeroU64::MIN))
}

/// The pending deadlines of the two timers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Deadlines {
    /// When the retransmission timer expires, if pending.
    retrans: At,
    /// When the RNR NAK timer expires, if pending.
    rnr: At,
    /// The expiry the kernel timer was last started for.
    armed: At,
}

impl Deadlines {
    /// When the retransmission timer expires, if pending.
    #[cfg_attr(not(test), expect(dead_code, reason = "for the host tests"))]
    pub(crate) fn retrans(&self) -> Option<u64> {
        self.retrans.map(NonZeroU64::get)
    }

    /// When the RNR NAK timer expires, if pending.
    #[cfg_attr(not(test), expect(dead_code, reason = "for the host tests"))]
    pub(crate) fn rnr(&self) -> Option<u64> {
        self.rnr.map(NonZeroU64::get)
    }

    /// A request packet went out (the requester's `update_state`): the
    /// retransmission timer starts unless it is pending already.
    pub(crate) fn sent(&mut self, now: u64, period: Option<u64>) {
        if let (None, Some(p)) = (self.retrans, period) {
            self.retrans = at(now.saturating_add(p));
        }
    }

    /// The completer saw progress with requests still unanswered
    /// (`reset_retry_timer`): the retransmission timer starts over.
    pub(crate) fn restart_retrans(&mut self, now: u64, period: Option<u64>) {
        if let Some(p) = period {
            self.retrans = at(now.saturating_add(p));
        }
    }

    /// Every request sent was answered: the retransmission timer stops.
    /// (The C driver lets it run out; its expiry then finds nothing to
    /// retry, or cuts short the wait of the next request.)
    pub(crate) fn all_acked(&mut self) {
        self.retrans = None;
    }

    /// An RNR NAK: no retry before `delay` (`mod_timer(&qp->rnr_nak_timer)`).
    pub(crate) fn start_rnr(&mut self, now: u64, delay: u64) {
        self.rnr = at(now.saturating_add(delay));
    }

    /// Takes the timers due at `now`: they are no longer pending.
    pub(crate) fn expire(&mut self, now: u64) -> Fired {
        let due = |d: &mut At| {
            let fired = d.is_some_and(|t| t.get() <= now);
            if fired {
                *d = None;
            }
            fired
        };
        Fired {
            retrans: due(&mut self.retrans),
            rnr: due(&mut self.rnr),
        }
    }

    /// The earliest pending deadline.
    fn wanted(&self) -> At {
        match (self.retrans, self.rnr) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether the kernel timer is set for the earliest pending deadline
    /// already ([`Deadlines::arm`] would keep it, whatever the time).
    pub(crate) fn armed_as_wanted(&self) -> bool {
        self.wanted() == self.armed
    }

    /// The kernel timer for the earliest pending deadline, seen at `now`;
    /// records what it is set to.
    ///
    /// Lazily, as a timer wheel's `mod_timer` is cheap and a kernel timer's
    /// restart is not: a timer still pending (set for after `now`) that
    /// would fire no later than the earliest deadline is kept even if that
    /// deadline moved later or went away. The completer restarts the
    /// retransmission timer on every response and on every run with
    /// requests outstanding (`reset_retry_timer`), which would otherwise
    /// cancel and start the kernel timer once a packet. A kept timer fires
    /// early: the send task then finds nothing due ([`Deadlines::expire`])
    /// and sets it again for what is pending then.
    pub(crate) fn arm(&mut self, now: u64) -> Arm {
        let want = self.wanted();
        if want == self.armed {
            return Arm::Keep;
        }
        let pending = self.armed.filter(|&a| a.get() > now);
        match (want, pending) {
            // Pending and firing no later than needed (or nothing needed):
            // it fires early, and the send task sets it again then.
            (None, Some(_)) => return Arm::Keep,
            (Some(t), Some(a)) if a <= t => return Arm::Keep,
            _ => {}
        }
        self.armed = want;
        match want {
            None => Arm::Cancel,
            Some(t) => Arm::Start(t.get().saturating_sub(now)),
        }
    }

    /// Nothing pending; the kernel timer is stopped by the caller.
    pub(crate) fn clear(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_as_the_c_driver_rounds_them() {
        // timeout 14: 4.096 us << 14 = 67.1 ms = 16 jiffies at HZ 250.
        assert_eq!(retrans_period_ns(16, 250), Some(64_000_000));
        assert_eq!(retrans_period_ns(0, 250), None);
        assert_eq!(retrans_period_ns(1, 1000), Some(1_000_000));
        // 10 us: one jiffy; 4 ms: exactly one at HZ 250; 4.001 ms: two.
        assert_eq!(rnr_delay_ns(10, 250), 4_000_000);
        assert_eq!(rnr_delay_ns(4_000, 250), 4_000_000);
        assert_eq!(rnr_delay_ns(4_001, 250), 8_000_000);
        // Code 0 (655.36 ms) at HZ 1000: 656 jiffies.
        assert_eq!(rnr_delay_ns(655_360, 1000), 656_000_000);
        assert_eq!(rnr_delay_ns(0, 250), 4_000_000);
    }

    #[test]
    fn sent_starts_only_an_idle_timer() {
        let mut d = Deadlines::default();
        d.sent(100, Some(50));
        assert_eq!(d.retrans(), Some(150));
        d.sent(120, Some(50));
        assert_eq!(d.retrans(), Some(150));
        d.restart_retrans(130, Some(50));
        assert_eq!(d.retrans(), Some(180));
        d.all_acked();
        assert_eq!(d.retrans(), None);
        d.sent(200, Some(50));
        assert_eq!(d.retrans(), Some(250));
        let mut n = Deadlines::default();
        n.sent(100, None);
        n.restart_retrans(100, None);
        assert_eq!(n.retrans(), None);
    }

    #[test]
    fn expiry_takes_what_is_due() {
        let mut d = Deadlines::default();
        d.sent(0, Some(100));
        d.start_rnr(0, 40);
        assert_eq!(d.expire(39), Fired::default());
        assert_eq!(
            d.expire(40),
            Fired {
                retrans: false,
                rnr: true
            }
        );
        assert_eq!(d.rnr(), None);
        assert_eq!(
            d.expire(500),
            Fired {
                retrans: true,
                rnr: false
            }
        );
        assert_eq!(d.expire(600), Fired::default());
    }

    #[test]
    fn one_kernel_timer_for_the_earliest() {
        let mut d = Deadlines::default();
        assert_eq!(d.arm(0), Arm::Keep);
        d.sent(0, Some(100));
        assert_eq!(d.arm(10), Arm::Start(90));
        assert_eq!(d.arm(20), Arm::Keep);
        d.start_rnr(20, 30);
        assert_eq!(d.arm(20), Arm::Start(30));
        let _ = d.expire(50);
        assert_eq!(d.arm(55), Arm::Start(45));
        let _ = d.expire(100);
        assert_eq!(d.arm(101), Arm::Cancel);
        assert_eq!(d.arm(102), Arm::Keep);
        // A deadline already past starts the timer at once.
        d.restart_retrans(0, Some(10));
        assert_eq!(d.arm(200), Arm::Start(0));
        d.clear();
        assert_eq!(d, Deadlines::default());
    }

    #[test]
    fn armed_as_wanted_is_what_arm_keeps_at_any_time() {
        let mut d = Deadlines::default();
        assert!(d.armed_as_wanted());
        d.sent(0, Some(100));
        assert!(!d.armed_as_wanted());
        assert_eq!(d.arm(0), Arm::Start(100));
        assert!(d.armed_as_wanted());
        // Later packets of the same flight leave the deadline as it is.
        d.sent(40, Some(100));
        assert!(d.armed_as_wanted());
        for now in [0, 50, 99, 100, 1000] {
            let mut at_now = d;
            assert_eq!(at_now.arm(now), Arm::Keep);
        }
        // A restart moves it: then the time decides.
        d.restart_retrans(50, Some(100));
        assert!(!d.armed_as_wanted());
    }

    #[test]
    fn a_pending_timer_is_kept_until_it_fires() {
        let mut d = Deadlines::default();
        d.sent(0, Some(100));
        assert_eq!(d.arm(0), Arm::Start(100));
        // Restarted on every response: the kernel timer stays.
        d.restart_retrans(10, Some(100));
        assert_eq!(d.arm(10), Arm::Keep);
        d.restart_retrans(60, Some(100));
        assert_eq!(d.arm(60), Arm::Keep);
        // All answered: kept too, it fires early.
        d.all_acked();
        assert_eq!(d.arm(70), Arm::Keep);
        d.sent(80, Some(100));
        assert_eq!(d.arm(80), Arm::Keep);
        // It fired at 100 with nothing due: set for the deadline now.
        assert_eq!(d.expire(100), Fired::default());
        assert_eq!(d.arm(100), Arm::Start(80));
        // An earlier deadline restarts it at once.
        d.start_rnr(110, 20);
        assert_eq!(d.arm(110), Arm::Start(20));
        assert_eq!(
            d.expire(130),
            Fired {
                retrans: false,
                rnr: true
            }
        );
        assert_eq!(d.arm(130), Arm::Start(50));
        // Fired with nothing pending: stopped.
        d.all_acked();
        assert_eq!(d.arm(140), Arm::Keep);
        assert_eq!(d.expire(180), Fired::default());
        assert_eq!(d.arm(180), Arm::Cancel);
        assert_eq!(d.arm(181), Arm::Keep);
    }
}
