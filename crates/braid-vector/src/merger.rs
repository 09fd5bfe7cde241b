//! [`Merger`]: the thread that runs [`MergeJob`]s, one at a time, off the commit path.
//!
//! One thread per owner (an index's semantic leg), started when the first job comes: merges
//! rewrite a partition's base, which is I/O and a single core's work, and two at once would
//! only compete for the same disk. A job for a store that already has one queued or running
//! is dropped (the queued one folds whatever the log holds when it runs). Dropping the
//! `Merger` lets the job under way finish, drops the queued ones (their logs stay, whole,
//! and the next save hands them back) and joins the thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use crate::merge::{MergeJob, Merged};

/// Runs [`MergeJob`]s on a background thread of its own (see `merger.rs`).
pub struct Merger {
    tx: Option<Sender<MergeJob>>,
    thread: Option<JoinHandle<()>>,
    state: Arc<State>,
}

impl std::fmt::Debug for Merger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let queue = self.state.lock();
        f.debug_struct("Merger").field("queued", &queue.queued.len()).field("merged", &queue.merged).finish()
    }
}

#[derive(Default)]
struct State {
    queue: Mutex<Queue>,
    idle: Condvar,
    stopping: AtomicBool,
}

#[derive(Default)]
struct Queue {
    /// Jobs sent and not yet done.
    queued: Vec<MergeJob>,
    merged: u64,
    failed: u64,
}

impl State {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Merger {
    /// Starts the thread (named `braid-vector-merge`).
    ///
    /// # Errors
    ///
    /// [`braid_core::Error::Io`] when the thread cannot be spawned.
    pub fn start() -> braid_core::Result<Merger> {
        let (tx, rx) = mpsc::channel::<MergeJob>();
        let state = Arc::new(State::default());
        let shared = Arc::clone(&state);
        let thread = std::thread::Builder::new()
            .name("braid-vector-merge".into())
            .spawn(move || {
                for job in rx {
                    let outcome = if shared.stopping.load(Ordering::Acquire) { None } else { Some(job.run()) };
                    let mut queue = shared.lock();
                    match outcome {
                        Some(Ok(Merged { base_bytes, .. })) if base_bytes > 0 => queue.merged += 1,
                        Some(Err(e)) => {
                            queue.failed += 1;
                            tracing::warn!(target: "braid::vector", dir = %job.dir().display(), error = %e,
                                "background merge failed (the log stays; the next save hands it back)");
                        }
                        _ => {}
                    }
                    if let Some(at) = queue.queued.iter().position(|q| q.same_store(&job)) {
                        queue.queued.swap_remove(at);
                    }
                    shared.idle.notify_all();
                }
            })
            .map_err(|e| braid_core::Error::io("braid-vector-merge thread", e))?;
        Ok(Merger { tx: Some(tx), thread: Some(thread), state })
    }

    /// Queues `jobs` (those of a store with a job queued or running already are dropped).
    pub fn submit(&self, jobs: impl IntoIterator<Item = MergeJob>) {
        let Some(tx) = &self.tx else { return };
        let mut queue = self.state.lock();
        for job in jobs {
            if queue.queued.iter().any(|q| q.same_store(&job)) {
                continue;
            }
            queue.queued.push(job.clone());
            if tx.send(job).is_err() {
                queue.queued.pop();
            }
        }
    }

    /// Waits until every job queued so far has run.
    pub fn wait_idle(&self) {
        let mut queue = self.state.lock();
        while !queue.queued.is_empty() {
            queue = self.state.idle.wait(queue).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Merges done so far (jobs that found nothing to merge not counted).
    pub fn merged(&self) -> u64 {
        self.state.lock().merged
    }

    /// Jobs that failed so far (each logged as a warning).
    pub fn failed(&self) -> u64 {
        self.state.lock().failed
    }
}

impl Drop for Merger {
    fn drop(&mut self) {
        self.state.stopping.store(true, Ordering::Release);
        drop(self.tx.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::MergePolicy;
    use crate::params::HnswParams;
    use crate::sketch::tests::unit;
    use crate::store::VectorStore;

    /// Jobs run on the thread while the store goes on saving; a second job for a store with
    /// one queued is dropped; what the files hold at the end is memory, whole.
    #[test]
    fn the_merger_merges_while_saves_go_on() {
        let dir = tempfile::tempdir().unwrap();
        let params = HnswParams { m: 4, ef_construction: 16, exact_threshold: 0, ..HnswParams::default() };
        let mut store = VectorStore::new(6, params);
        store.set_merge_policy(MergePolicy { share_percent: 1, floor_bytes: 0 });
        let merger = Merger::start().unwrap();
        for ord in 0..200u64 {
            store.insert(ord, &unit(ord, 6)).unwrap();
            if ord % 7 == 3 {
                store.delete(ord - 2);
            }
            merger.submit(store.save_log(dir.path()).unwrap());
        }
        merger.wait_idle();
        assert!(merger.merged() > 0, "no merge ran");
        assert_eq!(merger.failed(), 0);
        let opened = VectorStore::open_checked(dir.path(), store.disk_mark().as_ref()).unwrap();
        let mut ords: Vec<u64> = opened.ords().collect();
        ords.sort_unstable();
        let mut want: Vec<u64> = store.ords().collect();
        want.sort_unstable();
        assert_eq!(ords, want);
        for ord in want {
            assert_eq!(opened.vector(ord), store.vector(ord));
        }
    }
}
