// SPDX-License-Identifier: GPL-2.0

//! The kernel timer behind an RC QP's retransmission and RNR NAK timers.
//!
//! One high-resolution timer of the QP (its `rc_timer`) serves both: it is
//! set for the earlier of their deadlines, or left pending for an earlier
//! time when they moved later (rxe/rc_timing.rs: no restart per packet).
//! When it fires it only schedules the send task, as the C driver's
//! `retransmit_timer` and `rnr_nak_timer` do; the send task then finds
//! which deadline passed, if any, acts on it and sets the timer again.
//!
//! Deadlines count in ticks (`jiffies`), as the C driver's timers do: the
//! tick count is a load, so the send task reads it where it sets a
//! deadline, after the packet or response that sets it. A reading of the
//! clock is a call (under emulation, a read of the host's clock); read
//! once at the start of a send-task call instead, it set deadlines early
//! by the call's length, and a call slowed down (the first one of a QP,
//! whose code is not yet translated under TCG, or one preempted) made the
//! retransmission timer fire before its period while the response was on
//! its way: a retry the C driver does not make.
//!
//! A started timer holds a reference on the QP (its handle does, kept in
//! [`Timer`]): the QP cannot be freed while it may fire. Destroy stops it
//! ([`Timer::stop`]) after the tasks are stopped, so nothing starts it
//! again, and so lets the QP go.

use crate::{
    qp::Qp,
    rc_timing::{
        jiffy_ns,
        Arm,
        Deadlines, //
    },
    rdma::{
        bindings,
        qp::jiffies, //
    },
};
use kernel::{
    impl_has_hr_timer,
    sync::{
        Arc,
        ArcBorrow, //
    },
    time::{
        hrtimer::{
            ArcHrTimerHandle,
            HrTimerCallback,
            HrTimerCallbackContext,
            HrTimerPointer,
            HrTimerRestart,
            RelativeSoftMode, //
        },
        Delta,
        Monotonic, //
    },
};

impl_has_hr_timer! {
    impl HasHrTimer<Qp> for Qp {
        // Soft: the callback runs in softirq, as a `timer_list`'s does.
        mode: RelativeSoftMode<Monotonic>,
        field: self.rc_timer,
    }
}

impl HrTimerCallback for Qp {
    type Pointer<'a> = Arc<Qp>;

    fn run(this: ArcBorrow<'_, Qp>, _ctx: HrTimerCallbackContext<'_, Self>) -> HrTimerRestart {
        // A destroyed QP's task no longer runs: scheduling it is a no-op.
        this.io().sched_send(this);
        HrTimerRestart::NoRestart
    }
}

/// The kernel's tick rate (`HZ`, the configured `CONFIG_HZ`, not the
/// user-space `HZ` the bindings also have), which the C driver's timers
/// count in. A constant: the requester asks for every packet.
pub(crate) const fn hz() -> u32 {
    bindings::CONFIG_HZ
}

/// The QP's timer: the deadlines, its clock origin and the running kernel
/// timer's handle. Guarded by the send side's lock.
pub(crate) struct Timer {
    deadlines: Deadlines,
    /// The tick count the QP's times count from.
    origin: u64,
    handle: Option<ArcHrTimerHandle<Qp>>,
}

impl Timer {
    /// Nothing pending.
    pub(crate) fn new() -> Self {
        Self {
            deadlines: Deadlines::default(),
            origin: jiffies(),
            handle: None,
        }
    }

    /// Nanoseconds since the origin, in whole ticks: behind the clock by
    /// less than one, as the C driver's `jiffies` deadlines are.
    pub(crate) fn now(&self) -> u64 {
        jiffies()
            .wrapping_sub(self.origin)
            .saturating_mul(jiffy_ns(hz()))
    }

    /// The deadlines, to start or expire timers.
    pub(crate) fn deadlines(&mut self) -> &mut Deadlines {
        &mut self.deadlines
    }

    /// Sets the kernel timer for the earliest deadline (after the send
    /// task changed them). Process context.
    pub(crate) fn arm(&mut self, qp: &Arc<Qp>) {
        if self.deadlines.armed_as_wanted() {
            // Nothing to change, which the clock is not needed to see.
            return;
        }
        let now = self.now();
        match self.deadlines.arm(now) {
            Arm::Keep => {}
            Arm::Cancel => drop(self.handle.take()),
            Arm::Start(ns) => {
                // The old handle first: dropping it cancels the timer,
                // which would stop the restarted one.
                drop(self.handle.take());
                let ns = i64::try_from(ns).unwrap_or(i64::MAX);
                self.handle = Some(qp.clone().start(Delta::from_nanos(ns)));
            }
        }
    }

    /// No deadline; the kernel timer is stopped, its callback finished
    /// (`timer_delete_sync`), and its reference on the QP dropped. Process
    /// context; the caller keeps a reference on the QP.
    pub(crate) fn stop(&mut self) {
        self.deadlines.clear();
        drop(self.handle.take());
    }
}
