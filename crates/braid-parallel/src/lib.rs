//! Fork-join for a search's parts from whatever thread called the search.
//!
//! [`rayon::join`] and rayon's parallel iterators, called from outside rayon's pool, hand all
//! the work to the pool and block the caller until it is done: a request then depends on
//! waking one worker, which wakes the second, and on waking the caller again at the end.
//! Where another thread keeps a core busy (a commit) those wakes are where a small search
//! loses its time: a woken worker is placed beside the busy thread or behind its sibling, and
//! rayon's idle workers yield their core to it until the next tick (research/scale-log.md,
//! "twelfth session"). [`fork`] runs the first side on the calling thread and offers the
//! second to the pool; when the caller is done with its own side and no worker has started the
//! other, it takes that back and runs it too. So a search never waits for a worker that has
//! not begun, and at worst runs as one thread would. On a worker of rayon's pool it is
//! [`rayon::join`], which already works that way. [`map`] splits a slice in halves with it.

use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// Runs `here` on the calling thread and `offered` on rayon's pool or, if no worker has
/// started it by the time `here` returns, on the calling thread after `here`. Returns both
/// results; a panic on either side goes on unwinding in the caller once neither side runs.
pub fn fork<A, B, RA, RB>(here: A, offered: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    if rayon::current_thread_index().is_some() {
        return rayon::join(here, offered);
    }
    let mut out: Option<RB> = None;
    let slot = &mut out;
    let job: Box<dyn FnOnce() + Send + '_> = Box::new(move || *slot = Some(offered()));
    // SAFETY: the job borrows this frame (`out` and what `offered` captures). It is called only
    // by the side that takes it out of `Offer::state`: the pool's worker, in which case this
    // function waits below until the worker marks it done, whether `here` returned or
    // panicked, before it returns or unwinds; or this thread, which calls or drops it here.
    // The pool's task keeps only the `Arc<Offer>`, whose state no longer holds the job once
    // either side took it, so nothing reaches the borrowed frame after this function ends.
    let job: Box<dyn FnOnce() + Send + 'static> = unsafe { std::mem::transmute(job) };
    let offer = Arc::new(Offer { state: Mutex::new(State::Offered(job)), done: Condvar::new() });
    let task = Arc::clone(&offer);
    rayon::spawn(move || task.run_if_offered());
    let ran_here = panic::catch_unwind(AssertUnwindSafe(here));
    let taken_back = {
        let mut state = offer.lock();
        match std::mem::replace(&mut *state, State::TakenBack) {
            State::Offered(job) => Some(job),
            begun => {
                *state = begun;
                None
            }
        }
    };
    let panicked_there = if taken_back.is_none() { offer.wait_done() } else { None };
    let ran_here = ran_here.unwrap_or_else(|panicked| panic::resume_unwind(panicked));
    if let Some(panicked) = panicked_there {
        panic::resume_unwind(panicked);
    }
    if let Some(job) = taken_back {
        job();
    }
    (ran_here, out.expect("the offered side ran, here or on the pool"))
}

/// `f` of every item, in order, the items split in halves with [`fork`]: the calling thread
/// takes the first half of each split and the pool's workers the second halves they start.
pub fn map<T, R, F>(items: &[T], f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    fn halves<T: Sync, R: Send>(items: &[T], f: &(impl Fn(&T) -> R + Sync), out: &mut Vec<R>) {
        match items {
            [] => {}
            [one] => out.push(f(one)),
            _ => {
                let (first, second) = items.split_at(items.len() / 2);
                let (mut here, there) = fork(
                    || {
                        let mut here = Vec::with_capacity(first.len());
                        halves(first, f, &mut here);
                        here
                    },
                    || {
                        let mut there = Vec::with_capacity(second.len());
                        halves(second, f, &mut there);
                        there
                    },
                );
                out.append(&mut here);
                out.extend(there);
            }
        }
    }
    let mut out = Vec::with_capacity(items.len());
    halves(items, &f, &mut out);
    out
}

/// A panic's payload, carried from the pool's worker to the caller.
type Panic = Box<dyn std::any::Any + Send>;

/// Where the offered side stands.
enum State {
    /// Waiting for a worker or for the caller, whichever comes first.
    Offered(Box<dyn FnOnce() + Send>),
    /// A worker runs it.
    Running,
    /// A worker ran it; with the payload if it panicked.
    Done(Option<Panic>),
    /// The caller took it back (or is deciding).
    TakenBack,
}

/// The offered side, shared by the caller and the pool's task.
struct Offer {
    state: Mutex<State>,
    done: Condvar,
}

impl Offer {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The pool's task: runs the job unless the caller took it back first.
    fn run_if_offered(&self) {
        let job = {
            let mut state = self.lock();
            match std::mem::replace(&mut *state, State::Running) {
                State::Offered(job) => job,
                other => {
                    *state = other;
                    return;
                }
            }
        };
        let panicked = panic::catch_unwind(AssertUnwindSafe(job)).err();
        *self.lock() = State::Done(panicked);
        self.done.notify_all();
    }

    /// Blocks until the worker that took the job has run it; its panic, if it panicked.
    fn wait_done(&self) -> Option<Panic> {
        let mut state = self.lock();
        loop {
            match std::mem::replace(&mut *state, State::TakenBack) {
                State::Done(panicked) => return panicked,
                other => *state = other,
            }
            state = self.done.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{mpsc, Barrier};
    use std::thread::{self, ThreadId};
    use std::time::Duration;

    use super::{fork, map};

    #[test]
    fn both_sides_run_once_and_return_their_results() {
        let mut counted = Vec::new();
        for n in 0..200u64 {
            let borrowed: Vec<u64> = (0..n).collect();
            let (a, b) = fork(|| borrowed.iter().sum::<u64>(), || borrowed.iter().map(|x| x * 2).sum::<u64>());
            assert_eq!((a, b), (n * n.saturating_sub(1) / 2, n * n.saturating_sub(1)));
            counted.push(b);
        }
        // From a worker of the pool too (rayon's join).
        let (sent, got) = mpsc::channel();
        rayon::spawn(move || sent.send(fork(|| 1, || 2)).unwrap());
        assert_eq!(got.recv_timeout(Duration::from_secs(30)).unwrap(), (1, 2));
        assert_eq!(counted.len(), 200);
    }

    #[test]
    fn map_keeps_the_items_order_from_any_thread() {
        for n in [0usize, 1, 2, 3, 7, 16, 101] {
            let items: Vec<usize> = (0..n).collect();
            let want: Vec<usize> = items.iter().map(|x| x * x).collect();
            assert_eq!(map(&items, |x| x * x), want);
            let (sent, got) = mpsc::channel();
            let on_pool = items.clone();
            rayon::spawn(move || sent.send(map(&on_pool, |x| x * x)).unwrap());
            assert_eq!(got.recv_timeout(Duration::from_secs(30)).unwrap(), want);
        }
    }

    #[test]
    fn a_free_worker_takes_the_offered_side() {
        // `here` waits until the other side has begun, so a worker must have taken it.
        let (began, begun) = mpsc::channel::<ThreadId>();
        let caller = thread::current().id();
        let (_, ran_on) = fork(
            move || begun.recv_timeout(Duration::from_secs(30)).expect("a worker took the offered side"),
            move || {
                let me = thread::current().id();
                began.send(me).unwrap();
                (me, rayon::current_thread_index().is_some())
            },
        );
        assert_ne!(ran_on.0, caller);
        assert!(ran_on.1, "the offered side ran on rayon's pool");
    }

    #[test]
    fn the_caller_takes_back_what_no_worker_began() {
        // Every worker of the pool is held, from before the fork until it has returned.
        let workers = rayon::current_num_threads();
        let held = std::sync::Arc::new(Barrier::new(workers + 1));
        let (holding, hold) = mpsc::channel();
        for _ in 0..workers {
            let (held, holding) = (held.clone(), holding.clone());
            rayon::spawn(move || {
                holding.send(()).unwrap();
                held.wait();
            });
        }
        for _ in 0..workers {
            hold.recv_timeout(Duration::from_secs(30)).expect("every worker is held");
        }
        let caller = thread::current().id();
        let (a, ran_on) = fork(|| 7, || thread::current().id());
        held.wait();
        assert_eq!(a, 7);
        assert_eq!(ran_on, caller, "taken back and run where the fork was called");
    }

    #[test]
    fn a_panic_on_either_side_reaches_the_caller_after_both_stopped() {
        let still_running = AtomicBool::new(false);
        let (began, begun) = mpsc::channel::<()>();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            fork(
                move || {
                    begun.recv_timeout(Duration::from_secs(30)).unwrap();
                    panic!("here")
                },
                || {
                    still_running.store(true, Ordering::SeqCst);
                    began.send(()).unwrap();
                    thread::sleep(Duration::from_millis(50));
                    still_running.store(false, Ordering::SeqCst);
                },
            )
        }));
        assert!(caught.is_err());
        assert!(!still_running.load(Ordering::SeqCst), "the fork waited for the worker's side");
        let caught = std::panic::catch_unwind(|| fork(|| 1, || -> u32 { panic!("offered") }));
        let message = caught.err().and_then(|p| p.downcast_ref::<&str>().map(|s| s.to_string()));
        assert_eq!(message.as_deref(), Some("offered"));
    }
}
