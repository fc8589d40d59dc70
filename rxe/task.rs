// SPDX-License-Identifier: GPL-2.0

//! Per-QP work run on the driver's threads and workqueue (the C driver's
//! `rxe_task.c`): the requester, completer and responder of a QP each run
//! as a [`Task`].
//!
//! [`Task::sched`] queues the task unless it is queued or running already,
//! in which case the run in progress goes round once more (the C driver's
//! ARMED state): work scheduled while a run is in progress is never lost,
//! and a task never runs on two CPUs at once. A run calls the task's
//! function until it says [`Step::Done`], at most [`MAX_ITERATIONS`] times;
//! if there is more, the task is queued again behind the other work of the
//! queue instead of holding the CPU (fairness across QPs, no busy loop).
//! [`Task::run_here`] runs an idle task in the caller's context instead,
//! for a few calls, and leaves the rest to a later run.
//!
//! While queued or running, the task holds a reference on its owner (the
//! QP), as the C driver takes one (`rxe_get`): the QP cannot be freed under
//! it. [`Task::disable`] (a QP back to RESET) and [`Task::cleanup`] (a QP
//! being destroyed) let the current work finish, running the function until
//! it is done, then wait (sleeping, not spinning as the C driver does)
//! until the task is idle; after that it does not run until
//! [`Task::enable`], or never again after a cleanup.

use crate::rdma::{
    kthread::{
        KthreadWork,
        KthreadWorkItem,
        ModuleThreads, //
    },
    workqueue::ModuleQueue,
};
use kernel::{
    new_condvar, new_spinlock_irq, new_work,
    prelude::*,
    sync::{
        Arc,
        ArcBorrow,
        CondVar,
        SpinLockIrq, //
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
/// module loads; each task is given one in turn). A task woken while its
/// thread is idle runs there; one woken while its thread runs another
/// task goes to [`WQ`], as all do in C. The threads are of normal policy
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

/// The C driver's `enum rxe_task_state`, in its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
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

struct Inner<T> {
    state: State,
    /// The owner, held while queued or running.
    owner: Option<Arc<T>>,
}

impl<T> Inner<T> {
    /// Takes an idle task for a run on `owner`, which it then holds, and
    /// says so (`__reserve_if_idle`); a task queued or running is armed to
    /// go round once more instead, and one stopped is left as it is.
    fn reserve(&mut self, owner: ArcBorrow<'_, T>) -> bool {
        match self.state {
            State::Idle => {
                self.state = State::Busy;
                self.owner = Some(owner.into());
                true
            }
            State::Busy => {
                self.state = State::Armed;
                false
            }
            _ => false,
        }
    }
}

/// Work of an owner `T` (a QP) run on the driver's thread or workqueue.
#[pin_data]
pub(crate) struct Task<T: Send + Sync + 'static> {
    /// Its work item on [`THREADS`].
    #[pin]
    kwork: KthreadWork<Task<T>>,
    /// Its work item on [`WQ`].
    #[pin]
    work: Work<Task<T>>,
    #[pin]
    inner: SpinLockIrq<Inner<T>>,
    /// Signalled when a run ends, for `disable` and `cleanup`.
    #[pin]
    idle: CondVar,
    func: fn(&Arc<T>) -> Step,
}

crate::impl_has_kthread_work! {
    impl{T: Send + Sync + 'static} for Task<T> { self.kwork }
}

impl_has_work! {
    impl{T: Send + Sync + 'static} HasWork<Self> for Task<T> { self.work }
}

impl<T: Send + Sync + 'static> Task<T> {
    /// A task running `func` on its owner, idle.
    pub(crate) fn new(func: fn(&Arc<T>) -> Step) -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                kwork <- KthreadWork::new(&THREADS),
                work <- new_work!("rxe_task"),
                inner <- new_spinlock_irq!(
                    Inner {
                        state: State::Idle,
                        owner: None,
                    },
                    "rxe_task"
                ),
                idle <- new_condvar!("rxe_task_idle"),
                func,
            }),
            GFP_KERNEL,
        )
    }

    /// Has the task run on `owner` soon (`rxe_sched_task`); any context.
    pub(crate) fn sched(self: &Arc<Self>, owner: ArcBorrow<'_, T>) {
        let mut g = self.inner.lock();
        if g.reserve(owner) && !self.enqueue() {
            // No queue (module going away), or queued already, which an
            // idle task cannot be.
            g.state = State::Idle;
            let owner = g.owner.take();
            drop(g);
            drop(owner);
        }
    }

    /// Queues the task on its thread if that is idle, else on the
    /// workqueue; `false` if there is no queue (the module is going away)
    /// or it is queued already.
    fn enqueue(self: &Arc<Self>) -> bool {
        match THREADS.queue_if_idle(self.clone()) {
            Ok(()) => true,
            Err(this) => matches!(WQ.get().map(|q| q.enqueue(this)), Some(Ok(()))),
        }
    }

    /// Runs the task on `owner` here, in the caller's context, if it is
    /// idle (the C driver's `rxe_run_task` of the tasklet era, which ran
    /// the requester in the poster's process context), for at most
    /// [`INLINE_ITERATIONS`] calls of its function; what is left is queued
    /// to a later run. A task queued or running elsewhere goes round once
    /// more there instead, as [`Task::sched`]. Process context, never under
    /// a lock the function takes; the caller's time pays for the work a
    /// worker's wakeup would otherwise be scheduled for.
    pub(crate) fn run_here(self: &Arc<Self>, owner: ArcBorrow<'_, T>) {
        let mut g = self.inner.lock();
        if g.reserve(owner) {
            drop(g);
            self.clone().run(INLINE_ITERATIONS, true);
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
        let mut g = self.inner.lock();
        if matches!(g.state, State::Busy | State::Armed | State::Draining) {
            g.state = State::Draining;
            while g.state == State::Draining {
                self.idle.wait(&mut g);
            }
        }
        if g.state != State::Invalid {
            g.state = end;
        }
    }

    /// Lets a disabled task be scheduled again (`rxe_enable_task`); not
    /// after a cleanup.
    pub(crate) fn enable(&self) {
        let mut g = self.inner.lock();
        if g.state != State::Invalid {
            g.state = State::Idle;
        }
    }

    /// One run (`do_task`): the function called until it is done, up to
    /// `budget` calls (then queued again), and once more for each
    /// [`Task::sched`] meanwhile; `here` (a [`Task::run_here`]) counts
    /// those rounds' calls in its budget and queues what is left.
    fn run(self: Arc<Self>, budget: u32, here: bool) {
        let owner = {
            let mut g = self.inner.lock();
            match (g.state, g.owner.clone()) {
                (State::Busy | State::Armed | State::Draining, Some(owner)) => owner,
                _ => {
                    let owner = g.owner.take();
                    drop(g);
                    drop(owner);
                    self.idle.notify_all();
                    return;
                }
            }
        };
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
                step = (self.func)(&owner);
                left -= 1;
            }
            let mut g = self.inner.lock();
            let next = match (step, g.state) {
                // A drain goes on until done.
                (Step::More, State::Draining) => Next::Round,
                // Out of iterations: the rest in a later run, behind the
                // other QPs' work.
                (Step::More, _) => {
                    g.state = State::Busy;
                    Next::Queue
                }
                // Scheduled while running: once more.
                (Step::Done, State::Armed) => {
                    g.state = State::Busy;
                    Next::Round
                }
                (Step::Done, State::Draining) => {
                    g.state = State::Drained;
                    Next::End
                }
                (Step::Done, _) => {
                    g.state = State::Idle;
                    Next::End
                }
            };
            match next {
                Next::Round if !here || left > 0 => continue,
                Next::Round | Next::Queue => {
                    if self.enqueue() {
                        // The owner stays held for the next run.
                        return;
                    }
                    // No queue: the module is going away.
                    g.state = if g.state == State::Draining {
                        State::Drained
                    } else {
                        State::Idle
                    };
                }
                Next::End => {}
            }
            let held = g.owner.take();
            drop(g);
            self.idle.notify_all();
            drop(held);
            return;
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

impl<T: Send + Sync + 'static> KthreadWorkItem for Task<T> {
    fn run(this: Arc<Task<T>>) {
        this.run(MAX_ITERATIONS, false);
    }
}

impl<T: Send + Sync + 'static> WorkItem for Task<T> {
    type Pointer = Arc<Task<T>>;

    fn run(this: Arc<Task<T>>) {
        this.run(MAX_ITERATIONS, false);
    }
}
