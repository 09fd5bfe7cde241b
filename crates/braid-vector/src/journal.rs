//! What of a store is on disk: the base file and the log this process last read or wrote, and
//! what changed in memory since, so that a save appends only that ([`crate::log`]).

use std::path::PathBuf;

use crate::log::{BaseId, LogState};

/// The log is merged into a new base once it would pass this share of the base file's bytes
/// (in percent): a merge rewrites the base, so each appended byte costs on average
/// `100 / LOG_SHARE_PERCENT` bytes of merging later (2 at 50 %), and an open reads at most
/// half as much again as the base.
pub(crate) const LOG_SHARE_PERCENT: u64 = 50;

/// ... and past this many bytes, so that a small store is not rewritten at almost every save.
pub(crate) const LOG_FLOOR: u64 = 64 << 10;

/// The most bytes of log a base of `base_len` bytes carries before a merge.
pub(crate) fn log_limit(base_len: u64) -> u64 {
    (base_len / 100).saturating_mul(LOG_SHARE_PERCENT).max(LOG_FLOOR)
}

/// Which files a save left: the base (its length and stored checksum) and the bytes of log
/// beside it. Recorded with a commit (in the index's manifest), it lets an open tell a log
/// that lost acknowledged records (deleted, truncated, damaged at its end) from a torn tail
/// ([`crate::VectorStore::open_checked`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DiskMark {
    /// The base file's length.
    pub base_len: u64,
    /// The checksum stored at the base file's end.
    pub base_crc: u32,
    /// Bytes of header and records in the log (0: none).
    pub log_bytes: u64,
}

/// The store's files as this process last read or wrote them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OnDisk {
    /// The directory they are in.
    pub(crate) dir: PathBuf,
    /// The base file.
    pub(crate) base: BaseId,
    /// The log beside it.
    pub(crate) log: LogState,
    /// Slots the files hold.
    pub(crate) slots: usize,
    /// Points the files' graph holds (`None`: they hold no graph).
    pub(crate) graph_points: Option<usize>,
}

/// What the next save must write.
#[derive(Debug, Default)]
pub(crate) struct Journal {
    /// The files memory last matched; `None` when there are none, or since memory changed in
    /// a way a log record cannot say (a compaction, a graph built or dropped, new parameters):
    /// the next save writes a whole base.
    pub(crate) on_disk: Option<OnDisk>,
    /// Slots the files hold live that were tombstoned since.
    pub(crate) tombstoned: Vec<usize>,
}

impl Journal {
    /// Memory no longer matches the files in a way a log record can say.
    pub(crate) fn forget(&mut self) {
        self.on_disk = None;
        self.tombstoned.clear();
    }
}
