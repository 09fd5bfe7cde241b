//! What of a store is on disk: the base file and the log this process last read or wrote, and
//! what changed in memory since, so that a save appends only that ([`crate::log`]).
//!
//! The files' state ([`OnDisk`]) sits behind a mutex of its own, shared with the store's
//! [`crate::MergeJob`]s: a background merge replaces the files without touching memory, so it
//! takes neither the store nor anything a search or an insert needs. What changed in memory
//! (tombstones, and whether memory changed in a way a log record cannot say) is the store's
//! own, changed under `&mut self` without locking.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::log::{BaseId, LogState};
use crate::persist::Folds;

/// When a store's log is merged into a new base: once it passes `share_percent` of the base
/// file's bytes, and `floor_bytes`. A merge rewrites the base, so each appended byte costs on
/// average `100 / share_percent` bytes of merging later (2 at the default 50 %), and an open
/// reads at most `share_percent` % more than the base.
///
/// Not saved with the store; a lower share merges more often (more bytes written, a shorter
/// log to replay on open): the crash tests use a tiny one so that merges happen all the time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MergePolicy {
    /// The log's share of the base's bytes, in percent, past which it is merged.
    pub share_percent: u64,
    /// ... and the bytes of log below which it never is (a small store is not rewritten at
    /// almost every save).
    pub floor_bytes: u64,
}

impl Default for MergePolicy {
    /// 50 % of the base, and 64 KiB.
    fn default() -> Self {
        MergePolicy { share_percent: 50, floor_bytes: 64 << 10 }
    }
}

impl MergePolicy {
    /// The most bytes of log a base of `base_len` bytes carries before a merge.
    pub(crate) fn log_limit(&self, base_len: u64) -> u64 {
        (base_len / 100).saturating_mul(self.share_percent).max(self.floor_bytes)
    }
}

/// Which files a save left: the base (its length and stored checksum) and the log beside it.
/// Recorded with a commit (in the index's manifest), it lets an open tell a log that lost
/// acknowledged records (deleted, truncated, damaged at its end) from a torn tail
/// ([`crate::VectorStore::open_checked`]), across background merges too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DiskMark {
    /// The base file's length.
    pub base_len: u64,
    /// The checksum stored at the base file's end.
    pub base_crc: u32,
    /// Bytes of header and records in the log (0: none).
    pub log_bytes: u64,
    /// Log records past what the base holds (absent in marks written before background
    /// merges, which are checked by `log_bytes` alone). A merge that folds `n` of them into a
    /// new base leaves the rest: the new base must hold at least this many, less `n`, past it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_records: Option<u64>,
}

/// The store's files as this process last read or wrote them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OnDisk {
    /// The directory they are in.
    pub(crate) dir: PathBuf,
    /// The base file.
    pub(crate) base: BaseId,
    /// The base the log's header binds it to: `base`, or the base a merge folded into `base`
    /// (until the merge rebinds the log's tail to the new base).
    pub(crate) log_bound: BaseId,
    /// The log's first records the base already holds (0 unless `log_bound` differs).
    pub(crate) folded: u64,
    /// What the base says it folds, when a background merge wrote it.
    pub(crate) base_folds: Option<Folds>,
    /// The log beside it.
    pub(crate) log: LogState,
    /// Slots the files hold.
    pub(crate) slots: usize,
    /// Points the files' graph holds (`None`: they hold no graph).
    pub(crate) graph_points: Option<usize>,
}

impl OnDisk {
    /// The files a base just written whole from memory leaves (no log).
    pub(crate) fn fresh(dir: PathBuf, base: BaseId, slots: usize, graph_points: Option<usize>) -> OnDisk {
        OnDisk {
            dir,
            base,
            log_bound: base,
            folded: 0,
            base_folds: None,
            log: LogState { valid: 0, seen: 0, records: 0 },
            slots,
            graph_points,
        }
    }

    /// Log records past what the base holds.
    pub(crate) fn beyond(&self) -> u64 {
        self.log.records.saturating_sub(self.folded)
    }
}

/// The files' state, shared by a store and its merge jobs.
pub(crate) type SharedDisk = Arc<Mutex<Option<OnDisk>>>;

/// Locks the files' state (a poisoned lock is taken as it is: the state is replaced whole).
pub(crate) fn lock(disk: &SharedDisk) -> MutexGuard<'_, Option<OnDisk>> {
    disk.lock().unwrap_or_else(|p| p.into_inner())
}

/// What the next save must write.
#[derive(Debug, Default)]
pub(crate) struct Journal {
    /// The files memory last matched (`None` when there are none); shared with merge jobs.
    pub(crate) disk: SharedDisk,
    /// Slots the files hold, as the last save or open left them: slots below it tombstoned
    /// since are noted in `tombstoned` (newer slots are written with their live flag).
    pub(crate) saved_slots: AtomicUsize,
    /// Slots the files hold live that were tombstoned since the last save.
    pub(crate) tombstoned: Mutex<Vec<usize>>,
    /// Memory changed in a way a log record cannot say (a compaction, a graph built or
    /// dropped, new parameters): the next save writes a whole base.
    pub(crate) stale: AtomicBool,
}

impl Journal {
    /// Memory no longer matches the files in a way a log record can say. Takes no lock a
    /// merge holds (called while the store is written, which searches wait for).
    pub(crate) fn forget(&mut self) {
        *self.stale.get_mut() = true;
        self.tombstoned.get_mut().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// Whether [`Journal::forget`] was called since the last whole base, clearing the flag.
    pub(crate) fn take_stale(&self) -> bool {
        self.stale.swap(false, Ordering::AcqRel)
    }
}
