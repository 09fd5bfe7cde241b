//! Commits at a lower scheduling priority than searches, and the short sections of a commit
//! that searches wait for run back at theirs.
//!
//! [`crate::GroupCommit`] runs each commit on a thread of its own, niced, so that on a busy
//! machine searches take the cores first ([`lowered`]). But a niced thread that holds a lock
//! searches wait for is an inversion: preempted by the commit's own indexing threads (as niced,
//! and started from it), it kept the vector store's write lock 1–30 ms for well under a
//! millisecond of work (research/scale-log.md, thirteenth session), and an unprivileged thread
//! cannot raise its priority back. So the thread that lowered the commit, at the searches'
//! priority and otherwise idle while it waits, runs those sections for it
//! ([`at_callers_priority`]).

use std::cell::RefCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::mpsc::{self, SendError, Sender};
use std::sync::Mutex;

/// A section handed back to the thread that lowered the current one.
type Section = Box<dyn FnOnce() + Send>;

thread_local! {
    /// On a thread [`lowered`] started: where its sections go.
    static CALLER: RefCell<Option<Sender<Section>>> = const { RefCell::new(None) };
}

/// Runs `work` on a thread of its own, `nice` steps lower (with `idle`, in the idle scheduling
/// class; Linux only), while the calling thread runs what `work` hands it through
/// [`at_callers_priority`]. Runs `work` on the calling thread when `nice` is 0, off Linux, or
/// when no thread can be started. A panic in `work` goes on unwinding on the calling thread.
pub(crate) fn lowered<T: Send>(nice: i32, idle: bool, work: impl FnOnce() -> T + Send) -> T {
    if nice <= 0 || !cfg!(target_os = "linux") {
        return work();
    }
    let work = Mutex::new(Some(work));
    let take = || work.lock().unwrap_or_else(|p| p.into_inner()).take();
    let (sections, handed) = mpsc::channel::<Section>();
    let spawned = std::thread::scope(|scope| {
        let lowered = std::thread::Builder::new().name("braid-commit".into()).spawn_scoped(scope, || {
            lower(nice, idle);
            let _caller = Caller::set(sections);
            take().map(|work| work())
        });
        let handle = lowered.ok()?;
        // Ends when the lowered thread drops its sender: when `work` returned or unwound.
        for section in handed {
            section();
        }
        Some(handle.join().unwrap_or_else(|panic| resume_unwind(panic)))
    });
    match spawned.flatten() {
        Some(out) => out,
        None => take().map(|work| work()).expect("the work runs once"),
    }
}

/// Runs `section` on the thread that started the current one through [`lowered`], at that
/// thread's priority, and returns its result; on the current thread where no such thread
/// waits. A panic in `section` goes on unwinding here.
pub(crate) fn at_callers_priority<T: Send + 'static>(section: impl FnOnce() -> T + Send + 'static) -> T {
    let Some(caller) = CALLER.with(|caller| caller.borrow().clone()) else {
        return section();
    };
    let (answer, answered) = mpsc::sync_channel(1);
    let handed: Section = Box::new(move || {
        // The receiver waits below until this is sent.
        let _ = answer.send(catch_unwind(AssertUnwindSafe(section)));
    });
    if let Err(SendError(handed)) = caller.send(handed) {
        handed();
    }
    match answered.recv().expect("a handed section is always run, and always answers") {
        Ok(out) => out,
        Err(panic) => resume_unwind(panic),
    }
}

/// The current thread's [`CALLER`] while it lives: dropped (also when unwinding), the sender
/// goes and the lowering thread stops waiting for sections.
struct Caller;

impl Caller {
    fn set(sender: Sender<Section>) -> Caller {
        CALLER.with(|caller| *caller.borrow_mut() = Some(sender));
        Caller
    }
}

impl Drop for Caller {
    fn drop(&mut self) {
        CALLER.with(|caller| caller.borrow_mut().take());
    }
}

/// Lowers the calling thread's scheduling priority by `nice` steps (its nice value raised, at
/// most to 19), and with `idle` moves it to the idle scheduling class; threads it starts
/// inherit both. Never fails: where the kernel refuses, the thread keeps its priority.
#[cfg(target_os = "linux")]
fn lower(nice: i32, idle: bool) {
    // SAFETY: plain system calls on this thread's own id; the one pointer is to a local.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        if idle {
            let param = libc::sched_param { sched_priority: 0 };
            libc::sched_setscheduler(tid as libc::pid_t, libc::SCHED_IDLE, &param);
        }
        *libc::__errno_location() = 0;
        let current = libc::getpriority(libc::PRIO_PROCESS, tid);
        if current == -1 && *libc::__errno_location() != 0 {
            return;
        }
        libc::setpriority(libc::PRIO_PROCESS, tid, current.saturating_add(nice).min(19));
    }
}

#[cfg(not(target_os = "linux"))]
fn lower(_nice: i32, _idle: bool) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calling thread's nice value (Linux).
    #[cfg(target_os = "linux")]
    fn nice() -> i32 {
        // SAFETY: a plain system call on this thread's own id.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::syscall(libc::SYS_gettid) as libc::id_t) }
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_section_runs_on_the_caller_at_its_priority_and_the_rest_lowered() {
        let caller = std::thread::current().id();
        let before = nice();
        let (work_on, work_nice, section_on, section_nice) = lowered(5, false, || {
            let (section_on, section_nice) = at_callers_priority(|| (std::thread::current().id(), nice()));
            (std::thread::current().id(), nice(), section_on, section_nice)
        });
        assert_ne!(work_on, caller);
        assert_eq!(work_nice, (before + 5).min(19));
        assert_eq!((section_on, section_nice), (caller, before));
        assert_eq!(nice(), before, "the caller keeps its priority");
    }

    #[test]
    fn without_a_lowered_caller_a_section_runs_here() {
        let here = std::thread::current().id();
        assert_eq!(at_callers_priority(|| std::thread::current().id()), here);
        assert_eq!(lowered(0, false, || at_callers_priority(|| std::thread::current().id())), here);
    }

    #[test]
    fn a_panic_in_a_section_unwinds_into_the_caller_of_lowered() {
        let unwound = catch_unwind(|| lowered(3, false, || at_callers_priority(|| panic!("in the section"))));
        let panic = unwound.expect_err("the panic reaches the caller");
        assert_eq!(panic.downcast_ref::<&str>(), Some(&"in the section"));
        // And the machinery is left as it was: the next section runs.
        assert_eq!(lowered(3, false, || at_callers_priority(|| 7)), 7);
    }
}
