// SPDX-License-Identifier: GPL-2.0

//! Per-QP work run on the driver's threads and workqueue (the C driver's
//! `rxe_task.c`): the requester, completer and responder of a QP each run
//! as a [`Task`].
//!
//! [`Task::sched`] queues the task unless it is queued or running already,
//! in which case the run in progress goes round once more (the C driver's
//! ARMED state): work scheduled while a run is in progress is never lost,
//! and a task never runs on two CPUs at once. The state is one atomic
//! byte, changed by compare-and-exchange where C takes the task's irq-safe
//! spinlock: a packet's wakeup of its task and the run's start and end
//! take no lock (each would be a section with interrupts off, and under
//! TCG its unlock a costly exit from the translated code). A run calls the
//! task's function until it says [`Step::Done`], at most
//! [`MAX_ITERATIONS`] times; if there is more, the task is queued again
//! behind the other work of the queue instead of holding the CPU (fairness
//! across QPs, no busy loop).
//! A user QP's task goes to one of the driver's threads when that is idle
//! ([`THREADS`]), a kernel QP's always to the workqueue ([`WQ`]).
//! [`Task::run_here`] runs an idle task in the caller's context instead,
//! for a few calls, and leaves the rest to a later run.
//!
//! While queued or running, the task holds a reference on its owner (the
//! QP), as the C driver takes one (`rxe_get`): the QP cannot be freed under
//! it. [`Task::disable`] (a QP back to RESET) and [`Task::cleanup`] (a QP
//! being destroyed) let the current work finish, running the function until
//! it is done, then wait (sleeping on the state's address, not spinning as
//! the C driver does) until the task is idle; after that it does not run
//! until [`Task::enable`], or never again after a cleanup.
//!
//! A QP has two tasks, each its own allocation (the work items' pointer is
//! the task's `Arc`): 96 bytes, in `kmalloc-96`, checked below.

use crate::rdma::{
    kthread::{
        KthreadWork,
        KthreadWorkItem,
        ModuleThreads, //
    },
    slot::ArcSlot,
    wait,
    workqueue::ModuleQueue,
};
use core::{
    marker::PhantomData,
    sync::atomic::{
        AtomicU8,
        Ordering, //
    },
};
use kernel::{
    new_work,
    prelude::*,
    sync::{
        Arc,
        ArcBorrow, //
    },
    workqueue::{
        impl_has_work,
        Work,
        WorkItem, //
    },
};

/// The driver's workqueue (`rxe_wq`): unbound and of normal priority, as
/// the C driver's. The module registers it before any device exists and
/// destroys it after the last one, waiting for the work items in it.
pub(crate) static WQ: ModuleQueue = ModuleQueue::new();

/// The driver's own threads (`rxe_task/<n>`, one per CPU online when the
/// module loads; a task runs on the one its address hashes to). A user
/// QP's task woken while its thread is idle runs there; one woken while
/// its thread runs another task, and every kernel QP's, goes to [`WQ`],
/// as all do in C. The threads are of normal policy
/// at nice 0, as the workqueue's workers, but ask for a short scheduler
/// slice ([`THREAD_SLICE_NS`]). The module starts them before any device
/// exists and stops them after the last one.
pub(crate) static THREADS: ModuleThreads = ModuleThreads::new();

/// The scheduler slice the threads ask for (the shortest the scheduler
/// grants, 0.1 ms; the default is 0.75 ms and more with more CPUs): a
/// thread woken with a shorter slice than the task running preempts it if
/// it is eligible (EEVDF's `PREEMPT_SHORT`), where a workqueue's worker
/// waits until the running task's slice is used up, up to a tick. A
/// packet's task woken while an application busy-polls its CQ on the same
/// CPU then runs at once. The share of the CPU is a nice-0 thread's, as a
/// worker's: the high priority the workqueue once had (`WQ_HIGHPRI`, nice
/// -20) gave its workers 87 times it, and under a flood of packets they
/// starved the RCU grace-period kthread (Documentation/differences.rst).
/// The work that a busy thread refuses runs in the workqueue's workers,
/// as many as there are tasks to run, as in C.
pub(crate) const THREAD_SLICE_NS: u64 = 100_000;

/// Calls of a task's function per run before it is queued again
/// (`RXE_MAX_ITERATIONS`).
pub(crate) const MAX_ITERATIONS: u32 = 1024;

/// Calls of a task's function a [`Task::run_here`] makes in the caller's
/// context before the rest goes to a later run: the send task's call is
/// up to 16 packets (rxe/rc.rs), so up to 1024 packets (a MiB at an MTU of
/// 1024) are sent before the system call returns, as a socket's send
/// does its own work; a longer post goes on in a worker rather than
/// holding the caller (Documentation/benchmarks.rst, "The requester in the
/// poster's context").
pub(crate) const INLINE_ITERATIONS: u32 = 64;

/// What one call of a task's function says (the C functions' 0 and
/// non-zero returns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// It did something and may have more to do: call again.
    More,
    /// Nothing more to do for now.
    Done,
}

/// What a task runs: a function of its owner `T`, one type per function so
/// that the task need not keep a pointer to it.
pub(crate) trait TaskFn<T>: Send + Sync + 'static {
    /// One call: some of the task's work.
    fn call(owner: &Arc<T>) -> Step;
}

/// The C driver's `enum rxe_task_state`, in its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
enum State {
    /// Neither queued nor running.
    Idle,
    /// Queued or running.
    Busy,
    /// Running, and scheduled again meanwhile: goes round once more.
    Armed,
    /// Being disabled or cleaned up: finishes its work, then stops.
    Draining,
    /// Stopped until enabled.
    Drained,
    /// Cleaned up: never runs again.
    Invalid,
}

impl State {
    fn from_raw(v: u8) -> Self {
        match v {
            0 => Self::Idle,
            1 => Self::Busy,
            2 => Self::Armed,
            3 => Self::Draining,
            4 => Self::Drained,
            _ => Self::Invalid,
        }
    }
}

/// Work `F` of an owner `T` (a QP) run on the driver's thread or workqueue.
#[pin_data]
pub(crate) struct Task<T: Send + Sync + 'static, F: TaskFn<T>> {
    /// Its work item on [`THREADS`].
    #[pin]
    kwork: KthreadWork<Task<T, F>>,
    /// Its work item on [`WQ`].
    #[pin]
    work: Work<Task<T, F>>,
    /// The owner, put here by the call that queues the task and taken by
    /// the run: held while queued or running.
    owner: ArcSlot<T>,
    /// A [`State`].
    state: AtomicU8,
    /// Whether a run may go to [`THREADS`] (a user QP's task); a kernel
    /// QP's always goes to [`WQ`], as every task does in C: the threads'
    /// preemption is for an application busy-polling its CQ, and a
    /// kernel QP's consumer is a CQ callback (the MAD layer's, a ULP's).
    /// On the threads, the GSI QP's MADs of a burst of connections each
    /// woke a thread that preempted the caller: about three context
    /// switches a connection more than C's (Documentation/benchmarks.rst,
    /// "The GSI QP's tasks").
    threads: bool,
    _f: PhantomData<F>,
}

crate::impl_has_kthread_work! {
    impl{T: Send + Sync + 'static, F: TaskFn<T>} for Task<T, F> { self.kwork }
}

impl_has_work! {
    impl{T: Send + Sync + 'static, F: TaskFn<T>} HasWork<Self> for Task<T, F> { self.work }
}

// A task is one `kmalloc-96` object (with its `Arc`'s count) where locks are
// plain, as it was before it had a thread's work item too: two a QP, 192
// bytes of `kmalloc-192` more a QP if it grows past (Documentation/
// benchmarks.rst, "Memory per QP").
#[cfg(not(any(
    CONFIG_DEBUG_SPINLOCK,
    CONFIG_DEBUG_LOCK_ALLOC,
    CONFIG_DEBUG_MUTEXES,
    CONFIG_PREEMPT_RT
)))]
const _: () = assert!(size_of::<Task<crate::qp::Qp, crate::qp_io::Sender>>() + 8 <= 96);

impl<T: Send + Sync + 'static, F: TaskFn<T>> Task<T, F> {
    /// A task running `F` on its owner, idle; on the driver's threads
    /// when idle ones are there if `threads`, else on the workqueue only.
    pub(crate) fn new(threads: bool) -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                kwork <- KthreadWork::new(),
                work <- new_work!("rxe_task"),
                owner: ArcSlot::new(),
                state: AtomicU8::new(State::Idle as u8),
                threads,
                _f: PhantomData,
            }),
            GFP_KERNEL,
        )
    }

    /// Changes the state to the one `to` gives for the state found (none:
    /// left as it is), retrying while other changes race it, and wakes a
    /// stop that waits if the state left [`State::Draining`]. The state
    /// found: `Ok` if it was changed.
    fn update(&self, mut to: impl FnMut(State) -> Option<State>) -> Result<State, State> {
        let found = self
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
                to(State::from_raw(v)).map(|s| s as u8)
            })
            .map(State::from_raw)
            .map_err(State::from_raw);
        // No change keeps a task Draining: this one ended the drain.
        if found == Ok(State::Draining) {
            wait::wake(&self.state);
        }
        found
    }

    /// Takes an idle task for a run (`__reserve_if_idle`) and says so; a
    /// task queued or running is armed to go round once more instead, and
    /// one stopped is left as it is.
    fn reserve(&self) -> bool {
        let found = self.update(|s| match s {
            State::Idle => Some(State::Busy),
            State::Busy => Some(State::Armed),
            _ => None,
        });
        found == Ok(State::Idle)
    }

    /// Has the task run on `owner` soon (`rxe_sched_task`); any context.
    pub(crate) fn sched(self: &Arc<Self>, owner: ArcBorrow<'_, T>) {
        if self.reserve() {
            self.queue(owner.into());
        }
    }

    /// Has the task run on `owner` soon on the workqueue, as every task
    /// runs in C, even if it may run on a thread: for work no consumer is
    /// polling for at once (the flush after a modify to ERR), where a
    /// thread woken with its short slice would preempt the caller, a
    /// process in its `modify_qp` system call, to do it. Any context.
    pub(crate) fn sched_on_wq(self: &Arc<Self>, owner: ArcBorrow<'_, T>) {
        if self.reserve() {
            self.queue_to(owner.into(), false);
        }
    }

    /// Queues a reserved task, which holds `owner` until its run, where it
    /// may run; see [`Task::queue_to`].
    fn queue(self: &Arc<Self>, owner: Arc<T>) {
        self.queue_to(owner, self.threads);
    }

    /// Queues a reserved task, which holds `owner` until its run, on a
    /// thread if `threads` allows; if there is no queue (the module is
    /// going away), it is left idle.
    fn queue_to(self: &Arc<Self>, owner: Arc<T>, threads: bool) {
        // Empty: the slot is filled only here, for a reserved task, and
        // emptied by the task's run.
        drop(self.owner.set(owner));
        if !self.enqueue(threads) {
            let held = self.owner.take();
            self.abandon();
            drop(held);
        }
    }

    /// Queues the task on its thread if `threads` and that is idle, else
    /// on the workqueue; `false` if there is no queue (the module is going
    /// away) or it is queued already.
    fn enqueue(self: &Arc<Self>, threads: bool) -> bool {
        let this = if threads {
            match KthreadWork::queue_if_idle(self.clone()) {
                Ok(()) => return true,
                Err(this) => this,
            }
        } else {
            self.clone()
        };
        matches!(WQ.get().map(|q| q.enqueue(this)), Some(Ok(())))
    }

    /// A reserved task that cannot be queued is idle again, or drained for
    /// a stop that waits.
    fn abandon(&self) {
        let _ = self.update(|s| {
            Some(if s == State::Draining {
                State::Drained
            } else {
                State::Idle
            })
        });
    }

    /// Runs the task on `owner` here, in the caller's context, if it is
    /// idle (the C driver's `rxe_run_task` of the tasklet era, which ran
    /// the requester in the poster's process context and the responder in
    /// the receive softirq), for at most `calls` calls of its function;
    /// what is left is queued to a later run. A task queued or running
    /// elsewhere goes round once more there instead, as [`Task::sched`].
    /// Process or softirq context (as the function allows), never under a
    /// lock the function takes; the caller's time pays for the work a
    /// thread's wakeup would otherwise be scheduled for.
    pub(crate) fn run_here(self: &Arc<Self>, owner: ArcBorrow<'_, T>, calls: u32) {
        if self.reserve() {
            self.clone().run(owner.into(), calls, true);
        }
    }

    /// Stops the task until [`Task::enable`] (`rxe_disable_task`): the work
    /// in progress is finished first. Process context; never from the
    /// task's own function.
    pub(crate) fn disable(&self) {
        self.stop(State::Drained);
    }

    /// Stops the task for good (`rxe_cleanup_task`), as [`Task::disable`].
    pub(crate) fn cleanup(&self) {
        self.stop(State::Invalid);
    }

    fn stop(&self, end: State) {
        loop {
            let found = self.update(|s| match s {
                State::Idle | State::Drained => Some(end),
                State::Busy | State::Armed => Some(State::Draining),
                State::Draining | State::Invalid => None,
            });
            match found {
                Ok(State::Idle | State::Drained) | Err(State::Invalid) => return,
                // The run ends the drain, and wakes this.
                _ => wait::wait_while(&self.state, State::Draining as u8),
            }
        }
    }

    /// Lets a disabled task be scheduled again (`rxe_enable_task`); not
    /// after a cleanup.
    pub(crate) fn enable(&self) {
        let _ = self.update(|s| (s == State::Drained).then_some(State::Idle));
    }

    /// One run (`do_task`) on `owner`: the function called until it is
    /// done, up to `budget` calls (then queued again), and once more for
    /// each [`Task::sched`] meanwhile; `here` (a [`Task::run_here`]) counts
    /// those rounds' calls in its budget and queues what is left.
    fn run(self: Arc<Self>, owner: Arc<T>, budget: u32, here: bool) {
        // A run on a thread or worker has `budget` calls a round; one here has
        // `budget` in all, its rounds included, so that responses arriving
        // all the while cannot hold the caller.
        let mut left = budget;
        loop {
            if !here {
                left = budget;
            }
            let mut step = Step::More;
            while step == Step::More && left > 0 {
                step = F::call(&owner);
                left -= 1;
            }
            match self.after(step) {
                Next::Round if !here || left > 0 => continue,
                // Busy: the owner stays held for the next run.
                Next::Round | Next::Queue => self.queue(owner),
                Next::End => drop(owner),
            }
            return;
        }
    }

    /// The state after a round of calls that ended with `step`, and what
    /// the run does next.
    fn after(&self, step: Step) -> Next {
        let mut next = Next::End;
        let _ = self.update(|s| {
            let to;
            (to, next) = match (step, s) {
                // A drain goes on until done.
                (Step::More, State::Draining) => (None, Next::Round),
                // Out of iterations: the rest in a later run, behind the
                // other QPs' work.
                (Step::More, _) => (Some(State::Busy), Next::Queue),
                // Scheduled while running: once more.
                (Step::Done, State::Armed) => (Some(State::Busy), Next::Round),
                (Step::Done, State::Draining) => (Some(State::Drained), Next::End),
                (Step::Done, _) => (Some(State::Idle), Next::End),
            };
            to
        });
        next
    }

    /// A queued run: the owner its queueing left in the slot.
    fn run_queued(self: Arc<Self>) {
        // Always there: a queued task holds its owner.
        if let Some(owner) = self.owner.take() {
            self.run(owner, MAX_ITERATIONS, false);
        }
    }
}

/// What a run does after its calls.
enum Next {
    /// Another round here.
    Round,
    /// The rest in a later run.
    Queue,
    /// Idle (or drained).
    End,
}

impl<T: Send + Sync + 'static, F: TaskFn<T>> KthreadWorkItem for Task<T, F> {
    fn threads() -> &'static ModuleThreads {
        &THREADS
    }

    fn run(this: Arc<Self>) {
        this.run_queued();
    }
}

impl<T: Send + Sync + 'static, F: TaskFn<T>> WorkItem for Task<T, F> {
    type Pointer = Arc<Self>;

    fn run(this: Arc<Self>) {
        this.run_queued();
    }
}
