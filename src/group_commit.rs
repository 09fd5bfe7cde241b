//! Group commit: write batches from many threads share one commit.
//!
//! A commit costs about the same whether it holds one record or a hundred (the vector log's
//! fsync, the manifest, tantivy's commit point, the reload that serves it): at 1M records a
//! commit of 10 records takes a core for 20–35 ms, so one commit per small batch cannot keep
//! up with 100 batches a second (docs/scale.md). [`GroupCommit`] is a writer front that many
//! threads call with a [`Batch`]; batches that arrive while a commit runs share the next one,
//! and each call returns once the commit holding its batch is durable and served.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use braid_core::{Error, Record, Result};

use crate::index::Index;
use crate::priority;
use crate::writer::{Writer, WriterOptions, MIN_WRITER_HEAP};

/// One caller's changes: records to upsert, then ids to delete, committed all or nothing.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    /// Records to add or replace, in order.
    pub upserts: Vec<Record>,
    /// Ids of records to delete (a no-op for an id that holds none), after the upserts.
    pub deletes: Vec<String>,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Batch {
        Batch::default()
    }

    /// The batch with `record` upserted too.
    #[must_use]
    pub fn upsert(mut self, record: Record) -> Batch {
        self.upserts.push(record);
        self
    }

    /// The batch with `id` deleted too.
    #[must_use]
    pub fn delete(mut self, id: impl Into<String>) -> Batch {
        self.deletes.push(id.into());
        self
    }

    /// The number of changes: upserts and deletes.
    pub fn len(&self) -> usize {
        self.upserts.len() + self.deletes.len()
    }

    /// Whether the batch changes nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// How a [`GroupCommit`] commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupCommitOptions {
    /// How long a leader waits for more batches before it commits its group (Postgres's
    /// `commit_delay`). By default zero: a lone write is committed at once and pays nothing
    /// for grouping; batches still share commits whenever they arrive while one runs.
    pub commit_delay: Duration,
    /// The least time from the start of one group's commit to the next while writes queue up
    /// behind commits (a batch was waiting when the last group's commit ended): under a steady
    /// stream of writes, commits come at most this often and hold more each, where each commit
    /// costs the same again — a segment per partition, its term tables and files, its reload —
    /// whatever it holds. A write that finds no backlog commits at once, so a lone write, or
    /// one caller writing and waiting in turn, never waits for it. Zero: each group as soon as
    /// the one before ended.
    pub commit_interval: Duration,
    /// The options of the writer the front keeps open. By default [`WriterOptions::default`]
    /// with [`GROUP_COMMIT_WRITER_HEAP`] of indexing buffer.
    pub writer: WriterOptions,
    /// How much lower than its caller's the scheduling priority of a group's commit is, in
    /// nice steps (Linux; elsewhere ignored): searches first. Each group is committed on a
    /// thread of its own that lowers its priority by this much, and the writer's indexing and
    /// merge threads, started on it, inherit that; the sections under the vector store's write
    /// lock, which searches wait for, it hands back to the leader's thread, at the leader's
    /// priority, while the leader waits for it. By default [`DEFAULT_WRITER_NICE`]; 0 commits
    /// on the leader's thread, at its priority.
    pub writer_nice: i32,
    /// Whether that thread also leaves the normal scheduling class for Linux's idle one
    /// (`SCHED_IDLE`; elsewhere ignored): a search thread that wakes then takes a core from
    /// the commit at once, where a niced commit keeps it until its time slice ends; the
    /// commit still gets a small share of cores searches keep busy. Only with a positive
    /// [`GroupCommitOptions::writer_nice`] (a thread of its own). By default false.
    pub writer_idle: bool,
}

/// The default [`GroupCommitOptions::commit_interval`]: under a steady stream of writes, about
/// two commits a second. At 1M records and 1,000 records a second in batches of 10
/// (`sustained_writes`, nice +10; eight runs against five of commits as soon as the last
/// ended, every 100–164 ms): a fifth to a quarter of the commits, 163–167 MB written a minute
/// instead of 395–498, a third less of the writer's CPU, and searches' p99 under writes
/// 17.6–33.2 ms instead of 23.8–47.4 (everyone) and 4.5–9.5 instead of 7.4–13.4 (one tenant);
/// acknowledgements' p50 408–454 ms instead of 179–251, p99 680–764 instead of 296–439
/// (research/scale-log.md).
pub const DEFAULT_COMMIT_INTERVAL: Duration = Duration::from_millis(500);

/// The default [`GroupCommitOptions::writer_nice`]: a commit's threads weigh about a tenth of a
/// search thread's where both want a core. At 1M records and 1,000 records a second, searches
/// otherwise shared the cores with the commit and ran 4–8 times slower at p99 (research/scale-log.md).
pub const DEFAULT_WRITER_NICE: i32 = 10;

/// The default indexing buffer of a [`GroupCommit`]'s writer: [`MIN_WRITER_HEAP`], which gives
/// each partition's tantivy writer one indexing thread. A group's commit holds a few hundred
/// records, far from filling it, and every thread costs the same again at each commit: tantivy
/// starts it anew, with a term table of half a million slots made, zeroed and walked at the
/// flush, and it writes a segment of its own. At 1M records and 1,000 records a second
/// (`sustained_writes --writer-idle`, two runs each way), against the 128 MiB of a bulk load's
/// two threads: 1.08–1.13 MB written a commit instead of 1.79–1.90, acknowledgements' p50
/// 306–316 ms instead of 347–395, and searches' p99 under writes 32 ms instead of 33–37 for a
/// caller of everything (9.0–9.3 instead of 9.9–11.2 for one tenant).
pub const GROUP_COMMIT_WRITER_HEAP: usize = MIN_WRITER_HEAP;

impl Default for GroupCommitOptions {
    fn default() -> Self {
        GroupCommitOptions {
            commit_delay: Duration::ZERO,
            commit_interval: DEFAULT_COMMIT_INTERVAL,
            writer: WriterOptions { heap_bytes: GROUP_COMMIT_WRITER_HEAP, ..WriterOptions::default() },
            writer_nice: DEFAULT_WRITER_NICE,
            writer_idle: false,
        }
    }
}

/// What a [`GroupCommit::write`] got: the commit that holds its batch, served when it returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acknowledgement {
    /// The commit served when the call returned, which holds the batch ([`Index::commit_id`]);
    /// `None` for an index in memory, and for a batch that changed nothing (its records as
    /// they were), which needs no commit: the one served then would say only when others
    /// last wrote.
    pub commit: Option<String>,
    /// The group's number among this front's groups, from 1: batches with the same number
    /// shared a commit.
    pub group: u64,
    /// The batches that group committed, this one included (refused ones not counted).
    pub batches: usize,
}

/// Counts of what a [`GroupCommit`] did since it was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GroupCommitStats {
    /// Commits made: one per group that changed anything, and one per [`GroupCommit::run`]
    /// that did.
    pub commits: u64,
    /// Groups led (a group that changed nothing made no commit).
    pub groups: u64,
    /// Batches acknowledged.
    pub batches: u64,
    /// Upserts and deletes in the batches acknowledged.
    pub changes: u64,
    /// Batches refused for bad input, and batches of groups whose commit failed.
    pub failed: u64,
    /// Groups whose leader waited for [`GroupCommitOptions::commit_interval`]: commits a
    /// backlog of writes paced.
    pub paced: u64,
}

/// A thread-safe writer front for an [`Index`]: many threads [`write`](GroupCommit::write)
/// batches, batches that arrive while a commit runs share the next commit, and each call
/// returns only when the commit holding its batch is durable and served — a search after the
/// return sees it — or with an error.
///
/// **Leader and followers**, as RocksDB's write groups: a caller whose batch finds no commit
/// under way becomes the leader; it waits [`GroupCommitOptions::commit_delay`] (zero by
/// default) — and, where batches queued behind the last group, until
/// [`GroupCommitOptions::commit_interval`] has passed since that group's commit began —,
/// takes every batch queued by then, writes and commits them as one group, and wakes their
/// callers (the followers), the first of those still queued then leading the next group.
/// There is no committer thread: nothing to start, stop or keep alive beside the index, an
/// error lands on the threads of the callers it concerns, and a lone write costs what a
/// plain [`Writer::commit`] does.
///
/// **Each batch is all or nothing.** A batch is checked whole before any of it is written
/// (ids, ACLs, fields, vectors: what [`Writer::upsert`] refuses), so a bad record fails its
/// batch alone and the rest of the group commits. A refusal that only the write itself finds
/// drops the uncommitted writer (tantivy cannot take back part of an uncommitted writer) and
/// writes the group's other batches again on a fresh one. An infrastructure error (I/O, the
/// lexical engine, the model) fails every batch of the group with [`Error::GroupCommit`] (or
/// [`Error::LockBusy`] when another process holds the index's writer), commits nothing of it,
/// and the next write starts from a fresh writer.
///
/// The writer stays open between groups, so that the segment merges its commits start land
/// (dropping a writer abandons them); [`GroupCommit::close_idle`] closes it once writes stop,
/// letting its merges finish, so that another process may take the index's writer.
/// [`GroupCommit::run`] lends the same writer to work that is not a batch (an agent's memory),
/// one commit per call. While the front holds a writer, [`Index::writer`] is busy.
pub struct GroupCommit {
    index: Index,
    options: GroupCommitOptions,
    /// Batches waiting for a leader, and the results of groups committed.
    queue: Mutex<Queue>,
    /// Signalled when a group's results are in and its leader stepped down.
    turn: Condvar,
    /// The writer, held by a leader for its group or by [`GroupCommit::run`] for its work.
    kept: Mutex<Kept>,
    commits: AtomicU64,
    groups: AtomicU64,
    batches: AtomicU64,
    changes: AtomicU64,
    failed: AtomicU64,
    paced: AtomicU64,
}

/// The batches queued and the results not yet collected.
#[derive(Default)]
struct Queue {
    next_ticket: u64,
    waiting: VecDeque<Queued>,
    /// Whether a leader is committing a group now.
    leading: bool,
    /// When the last group was taken for its commit.
    last_group: Option<Instant>,
    /// Whether batches were waiting when the last group's leader stepped down.
    backlog: bool,
    done: HashMap<u64, Result<Acknowledgement>>,
}

/// A caller's batch, and the ticket its result is filed under.
struct Queued {
    ticket: u64,
    batch: Batch,
}

/// The writer kept between groups, and when it last wrote.
struct Kept {
    writer: Option<Writer>,
    last: Instant,
}

impl Kept {
    /// The open writer, opened first when there is none.
    fn open(&mut self, index: &Index, options: WriterOptions) -> Result<&mut Writer> {
        let writer = match self.writer.take() {
            Some(writer) => writer,
            None => index.writer_with(options)?,
        };
        Ok(self.writer.insert(writer))
    }

    /// Drops the writer and whatever it holds uncommitted: the next write opens a fresh one.
    fn discard(&mut self) {
        self.writer = None;
    }
}

impl std::fmt::Debug for GroupCommit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCommit").field("options", &self.options).field("stats", &self.stats()).finish()
    }
}

/// How applying a batch failed: whether part of it was written (so the writer must go).
struct Failed {
    error: Error,
    wrote_part: bool,
}

impl GroupCommit {
    /// A front for `index` with the default options (no commit delay).
    pub fn new(index: Index) -> GroupCommit {
        GroupCommit::with_options(index, GroupCommitOptions::default())
    }

    /// A front for `index` with `options`. No writer opens until the first write.
    pub fn with_options(index: Index, options: GroupCommitOptions) -> GroupCommit {
        GroupCommit {
            index,
            options,
            queue: Mutex::new(Queue::default()),
            turn: Condvar::new(),
            kept: Mutex::new(Kept { writer: None, last: Instant::now() }),
            commits: AtomicU64::new(0),
            groups: AtomicU64::new(0),
            batches: AtomicU64::new(0),
            changes: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            paced: AtomicU64::new(0),
        }
    }

    /// The index written.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// The options it commits with.
    pub fn options(&self) -> GroupCommitOptions {
        self.options
    }

    /// Counts of the commits, groups and batches so far.
    pub fn stats(&self) -> GroupCommitStats {
        GroupCommitStats {
            commits: self.commits.load(Ordering::Relaxed),
            groups: self.groups.load(Ordering::Relaxed),
            batches: self.batches.load(Ordering::Relaxed),
            changes: self.changes.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            paced: self.paced.load(Ordering::Relaxed),
        }
    }

    /// The batches queued for the next group now (not the group being committed).
    pub fn waiting(&self) -> usize {
        self.queue().waiting.len()
    }

    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn kept(&self) -> MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes `batch` — its upserts, then its deletes — in a commit shared with the batches of
    /// other callers that arrived meanwhile, and returns once that commit is durable and
    /// served. Batches of one group are written in the order they arrived.
    ///
    /// # Errors
    /// The batch's own refusal ([`Error::InvalidRecord`], [`Error::UnknownField`],
    /// [`Error::DimensionMismatch`], [`Error::ReservedToken`]): nothing of it is committed, and
    /// the other batches of its group are not affected. [`Error::GroupCommit`] when the group's
    /// commit failed, [`Error::LockBusy`] when another writer holds the index: nothing of the
    /// group was committed.
    pub fn write(&self, batch: Batch) -> Result<Acknowledgement> {
        let mut queue = self.queue();
        let ticket = queue.next_ticket;
        queue.next_ticket += 1;
        queue.waiting.push_back(Queued { ticket, batch });
        loop {
            if let Some(result) = queue.done.remove(&ticket) {
                return result;
            }
            if !queue.leading {
                // No group is being committed, and this batch is still queued: lead the next.
                queue.leading = true;
                drop(queue);
                self.lead();
                queue = self.queue();
                continue;
            }
            queue = self.turn.wait(queue).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Commits one group as its leader: waits the commit delay (or what is left of the commit
    /// interval, under a backlog), takes the writer and every batch queued, commits them,
    /// files each batch's result and steps down.
    fn lead(&self) {
        let mut leading = Leading { front: self, tickets: Vec::new() };
        let paced = {
            let queue = self.queue();
            match queue.last_group {
                Some(last) if queue.backlog => {
                    (last + self.options.commit_interval).checked_duration_since(Instant::now()).unwrap_or_default()
                }
                _ => Duration::ZERO,
            }
        };
        if !paced.is_zero() {
            self.paced.fetch_add(1, Ordering::Relaxed);
        }
        let wait = paced.max(self.options.commit_delay);
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
        let mut kept = self.kept();
        // Taken once the writer is ours: batches queued while a `run` held it join this group.
        let group: Vec<Queued> = {
            let mut queue = self.queue();
            queue.last_group = Some(Instant::now());
            queue.waiting.drain(..).collect()
        };
        leading.tickets = group.iter().map(|q| q.ticket).collect();
        let writer = &mut *kept;
        let (nice, idle) = (self.options.writer_nice, self.options.writer_idle);
        let results = priority::lowered(nice, idle, || self.commit_group(writer, group));
        drop(kept);
        self.queue().done.extend(results);
    }

    /// Writes the group's batches and commits them: each batch checked whole first; a batch
    /// refused after part of it was written makes the others be written again on a fresh
    /// writer, without it.
    fn commit_group(&self, kept: &mut Kept, group: Vec<Queued>) -> Vec<(u64, Result<Acknowledgement>)> {
        let number = self.groups.fetch_add(1, Ordering::Relaxed) + 1;
        let mut refused: Vec<Option<Error>> = group.iter().map(|_| None).collect();
        // Whether each batch changed anything (an upsert of a record as it is changes nothing).
        let mut changed = vec![false; group.len()];
        let outcome = 'attempt: loop {
            let writer = match kept.open(&self.index, self.options.writer) {
                Ok(writer) => writer,
                Err(e) => break Err(e),
            };
            for ((queued, refusal), changed) in group.iter().zip(refused.iter_mut()).zip(changed.iter_mut()) {
                if refusal.is_some() {
                    continue;
                }
                let before = writer.pending();
                match apply(writer, &queued.batch) {
                    Ok(()) => *changed = writer.pending() > before,
                    Err(Failed { error, wrote_part }) if error.is_user_error() => {
                        *refusal = Some(error);
                        if wrote_part {
                            kept.discard();
                            continue 'attempt;
                        }
                    }
                    Err(Failed { error, .. }) => {
                        kept.discard();
                        break 'attempt Err(error);
                    }
                }
            }
            if writer.pending() == 0 {
                break Ok(false);
            }
            match writer.commit() {
                Ok(()) => break Ok(true),
                Err(e) => {
                    kept.discard();
                    break Err(e);
                }
            }
        };
        kept.last = Instant::now();
        let refusals = refused.iter().filter(|r| r.is_some()).count();
        let accepted = group.len() - refusals;
        match outcome {
            Ok(committed) => {
                if committed {
                    self.commits.fetch_add(1, Ordering::Relaxed);
                }
                self.batches.fetch_add(accepted as u64, Ordering::Relaxed);
                self.failed.fetch_add(refusals as u64, Ordering::Relaxed);
                let changes: usize =
                    group.iter().zip(&refused).filter(|(_, r)| r.is_none()).map(|(q, _)| q.batch.len()).sum();
                self.changes.fetch_add(changes as u64, Ordering::Relaxed);
                let commit = self.index.commit_id();
                let ack = |changed: bool| Acknowledgement {
                    commit: commit.clone().filter(|_| changed),
                    group: number,
                    batches: accepted,
                };
                group
                    .iter()
                    .zip(refused)
                    .zip(changed)
                    .map(|((q, refusal), changed)| (q.ticket, refusal.map_or_else(|| Ok(ack(changed)), Err)))
                    .collect()
            }
            Err(error) => {
                self.failed.fetch_add(group.len() as u64, Ordering::Relaxed);
                let shared = Arc::new(error);
                group
                    .iter()
                    .zip(refused)
                    .map(|(q, refusal)| (q.ticket, Err(refusal.unwrap_or_else(|| group_failed(&shared)))))
                    .collect()
            }
        }
    }

    /// Runs `work` with the front's writer — between groups, never during one — and commits
    /// what it left pending (nothing when it wrote nothing), served before this returns.
    /// Returns `work`'s value and the commit it made (`None` when it wrote nothing, as
    /// [`Acknowledgement::commit`]). When `work` fails having written, the writer and what
    /// `work` wrote are dropped: no later commit holds any of it; one that failed before
    /// writing (a memory not found, a note refused) leaves the writer, and its merges, open.
    ///
    /// `work` must not call [`GroupCommit::write`] or `run` on the same front: it would wait
    /// for itself.
    ///
    /// # Errors
    /// `work`'s error; as [`GroupCommit::write`] when the writer cannot be opened or the
    /// commit fails.
    pub fn run<T, E: From<Error>>(
        &self,
        work: impl FnOnce(&mut Writer) -> std::result::Result<T, E>,
    ) -> std::result::Result<(T, Option<String>), E> {
        let mut kept = self.kept();
        let writer = kept.open(&self.index, self.options.writer)?;
        let out = match work(writer) {
            Ok(out) => out,
            Err(e) => {
                if writer.pending() > 0 {
                    kept.discard();
                }
                return Err(e);
            }
        };
        let committed = writer.pending() > 0;
        if committed {
            if let Err(e) = writer.commit() {
                kept.discard();
                return Err(e.into());
            }
            self.commits.fetch_add(1, Ordering::Relaxed);
        }
        kept.last = Instant::now();
        Ok((out, self.index.commit_id().filter(|_| committed)))
    }

    /// Closes the writer when it has not written for `idle`, once the segment merges it
    /// started have ended (writes wait meanwhile). Returns whether it closed one.
    ///
    /// # Errors
    /// When a merge failed ([`Writer::close`]); the writer is closed all the same, and every
    /// commit stands.
    pub fn close_idle(&self, idle: Duration) -> Result<bool> {
        let mut kept = self.kept();
        if kept.writer.is_none() || kept.last.elapsed() < idle {
            return Ok(false);
        }
        match kept.writer.take() {
            Some(writer) => writer.close().map(|()| true),
            None => Ok(false),
        }
    }

    /// Closes the writer now, if one is open, once its merges have ended (see
    /// [`GroupCommit::close_idle`]).
    ///
    /// # Errors
    /// As [`GroupCommit::close_idle`].
    pub fn close(&self) -> Result<()> {
        self.close_idle(Duration::ZERO).map(|_| ())
    }
}

/// Checks `batch` whole, then writes it.
fn apply(writer: &mut Writer, batch: &Batch) -> std::result::Result<(), Failed> {
    for record in &batch.upserts {
        writer.check(record).map_err(|error| Failed { error, wrote_part: false })?;
    }
    for record in &batch.upserts {
        writer.upsert(record).map_err(|error| Failed { error, wrote_part: true })?;
    }
    for id in &batch.deletes {
        writer.delete(id).map_err(|error| Failed { error, wrote_part: true })?;
    }
    Ok(())
}

/// The error each batch of a failed group gets: another process's lock as itself (so that
/// callers retry), anything else as [`Error::GroupCommit`] around the shared failure.
fn group_failed(failure: &Arc<Error>) -> Error {
    match failure.as_ref() {
        Error::LockBusy { path } => Error::LockBusy { path: path.clone() },
        _ => Error::GroupCommit { source: failure.clone() },
    }
}

/// A leader's term: when it ends — normally or by a panic — every batch of its group has a
/// result, and the next queued batch's caller may lead.
struct Leading<'a> {
    front: &'a GroupCommit,
    tickets: Vec<u64>,
}

impl Drop for Leading<'_> {
    fn drop(&mut self) {
        let mut queue = self.front.queue();
        for ticket in &self.tickets {
            if !queue.done.contains_key(ticket) {
                let failure = Arc::new(Error::Lexical("the group's commit was interrupted".into()));
                queue.done.insert(*ticket, Err(Error::GroupCommit { source: failure }));
            }
        }
        queue.leading = false;
        queue.backlog = !queue.waiting.is_empty();
        drop(queue);
        self.front.turn.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IndexConfig;

    #[test]
    fn a_lone_batch_commits_at_once_and_an_empty_one_commits_nothing() {
        let index = Index::create_in_ram(IndexConfig::default()).unwrap();
        let front = GroupCommit::new(index.clone());
        let ack = front.write(Batch::new().upsert(Record::new("a").body("quokka").acl(["public"]))).unwrap();
        assert_eq!((ack.group, ack.batches), (1, 1));
        assert_eq!(index.num_records(), 1);
        front.write(Batch::new()).unwrap();
        assert_eq!(
            front.stats(),
            GroupCommitStats { commits: 1, groups: 2, batches: 2, changes: 1, failed: 0, paced: 0 }
        );
    }

    fn paced_front(interval: Duration) -> GroupCommit {
        let index = Index::create_in_ram(IndexConfig::default()).unwrap();
        GroupCommit::with_options(
            index,
            GroupCommitOptions { commit_interval: interval, ..GroupCommitOptions::default() },
        )
    }

    #[test]
    fn a_leader_steps_down_marking_a_backlog_only_when_batches_wait() {
        let front = paced_front(Duration::from_secs(30));
        drop(Leading { front: &front, tickets: Vec::new() });
        assert!(!front.queue().backlog);
        front.queue().waiting.push_back(Queued { ticket: 7, batch: Batch::new() });
        drop(Leading { front: &front, tickets: Vec::new() });
        assert!(front.queue().backlog);
    }

    #[test]
    fn under_a_backlog_the_next_group_waits_out_the_interval_and_otherwise_commits_at_once() {
        let interval = Duration::from_millis(300);
        let front = paced_front(interval);
        let note = |n: &str| Batch::new().upsert(Record::new(n).body("quokka").acl(["public"]));
        // Written and waited for in turn: no backlog, so no wait, however close together.
        for n in ["a", "b", "c"] {
            front.write(note(n)).unwrap();
        }
        assert_eq!(front.stats().paced, 0);
        // As if batches had queued behind a group that just began.
        {
            let mut queue = front.queue();
            queue.backlog = true;
            queue.last_group = Some(Instant::now());
        }
        let started = Instant::now();
        front.write(note("d")).unwrap();
        assert!(started.elapsed() >= interval - Duration::from_millis(5), "{:?}", started.elapsed());
        assert_eq!(front.stats().paced, 1);
        // A backlog whose last group began longer ago than the interval waits for nothing.
        {
            let mut queue = front.queue();
            queue.backlog = true;
            queue.last_group = Instant::now().checked_sub(interval * 2);
        }
        front.write(note("e")).unwrap();
        assert_eq!(front.stats().paced, 1);
        assert_eq!(front.index().num_records(), 5);
    }
}
