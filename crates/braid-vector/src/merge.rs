//! A background merge: one store's log folded into a new base, from the files alone, while
//! the store is searched, changed and saved.
//!
//! [`crate::VectorStore::save_log`] appends a record and, once the log has passed its share of
//! the base ([`crate::MergePolicy`]), hands back a [`MergeJob`]; [`crate::Merger`] runs jobs on a
//! thread of its own. A job needs nothing of the store's memory, only its directory and the
//! state of its files (the base, and how far the log goes), which sits behind a mutex the store
//! takes only to save ([`crate::journal`]):
//!
//! 1. **Snapshot** (under that mutex, a copy): the base `B`, the log's length `X` and its
//!    record count `n` (records `folded + 1 ..= n` are what the base lacks).
//! 2. **Fold** (no lock): read `B` and the log up to `X` from disk, replay the records, and
//!    write the result to a temporary file (`vectors.braidvec.merge`) saying it *folds* `B`'s
//!    log through record `n`; fsync it. Commits keep appending records `n + 1, …` to the log,
//!    and searches read memory: neither waits.
//! 3. **Swap.** Under the mutex (so no append interleaves), if the files are still `B` and its
//!    log (no save wrote a whole base meanwhile), rename the new base `B'` into place and note
//!    it; then, without the mutex, fsync the directory (appends go on, to `B`'s log, which `B'`
//!    folds), and copy the log's tail — records `n + 1 ..` renumbered from 1 under a header
//!    bound to `B'` — to a temporary log, fsynced; then, under the mutex again, copy the few
//!    records appended since, rename the temporary log over the log and fsync the directory
//!    ([`crate::log`]'s `start_rebind` and `finish_rebind`). An append waits at most for a
//!    rename, or for a rename and a directory fsync. Files changed meanwhile: drop the
//!    temporary files.
//!
//! **Crash safety.** Before `B'`'s rename the files are `B` and its log, whole (the temporary
//! file is ignored, and overwritten by the next merge). Between the two renames they are `B'`
//! (which folds `B` through `n`) and `B`'s log: an open skips the log's first `n` records and
//! replays the rest on `B'`. After the second they are `B'` and a log bound to it. Every
//! record a commit acknowledged was fsynced in the log before its acknowledgement, and each
//! of these states holds it. The renames are what order the states: the new base is fsynced
//! before it is renamed, the rename is made durable (directory fsync) before the log is
//! rebound, so no crash can find a log bound to a base that is not on disk. The index's
//! manifest marks ([`crate::DiskMark`]) count records past a base, so the check of
//! acknowledged records holds across the swap: a mark of `B` with `r` records is met by `B'`
//! with `r − n` past it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use braid_core::Result;

use crate::journal::{self, OnDisk, SharedDisk};
use crate::log::{self, BaseId};
use crate::persist::{self, Folds};
use crate::store::VectorStore;

/// A merge of one store's log into a new base, to run off the commit path (see the module
/// docs of `merge.rs`): [`MergeJob::run`] on any thread, at any time; a job whose files
/// changed meanwhile (a whole base written, another merge done) does nothing.
#[derive(Debug, Clone)]
pub struct MergeJob {
    dir: PathBuf,
    disk: SharedDisk,
}

/// What [`MergeJob::run`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Merged {
    /// The new base's bytes (0: nothing was merged).
    pub base_bytes: u64,
    /// Log records folded into it.
    pub records: u64,
    /// Records appended meanwhile, rebound to the new base.
    pub rebound: u64,
}

impl MergeJob {
    pub(crate) fn new(dir: PathBuf, disk: SharedDisk) -> MergeJob {
        MergeJob { dir, disk }
    }

    /// The directory of the store's files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether `other` merges the same files.
    pub fn same_store(&self, other: &MergeJob) -> bool {
        self.dir == other.dir && Arc::ptr_eq(&self.disk, &other.disk)
    }

    /// Folds the log into a new base and swaps it in (see the module docs). Returns what it
    /// merged (nothing when there is no log past the base, or the files changed meanwhile).
    ///
    /// # Errors
    ///
    /// [`braid_core::Error::Io`] or [`braid_core::Error::Corrupt`] naming the file that could
    /// not be read or written. The files stay as they were, or — when the directory could not
    /// be synced after the rename — the next save writes a whole base.
    pub fn run(&self) -> Result<Merged> {
        let started = std::time::Instant::now();
        let Some(folded) = self.fold()? else { return Ok(NOTHING) };
        let merged = self.swap(folded, true)?;
        if merged.base_bytes > 0 {
            tracing::debug!(target: "braid::vector", dir = %self.dir.display(), bytes = merged.base_bytes,
                records = merged.records, rebound = merged.rebound,
                ms = started.elapsed().as_millis() as u64, "vector log merged in the background");
        }
        Ok(merged)
    }

    /// Steps 1 and 2: the snapshot, and the new base in the temporary file (`None`: nothing to
    /// merge, or the files changed under it).
    pub(crate) fn fold(&self) -> Result<Option<Folded>> {
        let dir = &self.dir;
        let Some(snap) = journal::lock(&self.disk).clone().filter(|d| d.dir == *dir) else { return Ok(None) };
        if snap.beyond() == 0 {
            return Ok(None);
        }
        let saved = persist::read(dir)?;
        if saved.id != snap.base {
            return Ok(None);
        }
        let (dim, quantization) = (saved.dim, saved.params.quantization);
        let logged = log::read(dir, &[snap.log_bound], Some(snap.log.valid), dim, quantization)?;
        if logged.bound != Some(snap.log_bound) || (logged.records.len() as u64) < snap.log.records {
            return Ok(None);
        }
        let records: Vec<log::Record> = logged.records.into_iter().skip(snap.folded as usize).collect();
        let count = records.len() as u64;
        let store = VectorStore::assemble(dir, saved, records, false)?;
        let folds = Folds { base: snap.log_bound, records: snap.log.records };
        let id = store.write_file(dir, Some(folds))?;
        Ok(Some(Folded { snap, id, folds, count }))
    }

    /// Step 3: the swap; `rebind`: rebind the log's tail to the new base (tests stop before
    /// it, to open what a crash between the two renames leaves). The files' lock is held only
    /// for the base's rename, and for the log's rename and directory fsync at the end: an
    /// append waits for one fsync of a directory at most.
    pub(crate) fn swap(&self, folded: Folded, rebind: bool) -> Result<Merged> {
        let Folded { snap, id, folds, count } = folded;
        let dir = &self.dir;
        let mut merged = Merged { base_bytes: id.len, records: count, rebound: 0 };
        // 3a. Under the lock (an append checks which base is there), the new base's rename.
        let seen = {
            let mut disk = journal::lock(&self.disk);
            let unchanged = disk.as_ref().is_some_and(|d| {
                d.dir == *dir
                    && d.base == snap.base
                    && d.log_bound == snap.log_bound
                    && d.log.records >= snap.log.records
            });
            let Some(d) = disk.as_mut().filter(|_| unchanged) else {
                let _ = std::fs::remove_file(dir.join(persist::MERGE_TMP));
                return Ok(NOTHING);
            };
            persist::rename_into_place(dir, persist::MERGE_TMP)?;
            (d.base, d.base_folds, d.folded) = (id, Some(folds), snap.log.records);
            d.log.clone()
        };
        // 3b. The rename made durable before any log is bound to the new base. Appends go on
        // meanwhile, to the old log, which the new base folds: either base a crash leaves
        // holds them with it.
        if let Err(e) = persist::sync(dir) {
            // Which base a crash leaves is not known: the next save writes a whole one.
            let mut disk = journal::lock(&self.disk);
            if disk.as_ref().is_some_and(|d| d.base == id) {
                *disk = None;
            }
            return Err(e);
        }
        if !rebind {
            return Ok(merged);
        }
        // 3c. The log's tail copied to a log bound to the new base, fsynced, without the lock.
        let rebound = match log::start_rebind(dir, id, snap.log.valid, seen.valid, snap.log.records) {
            Ok(rebound) => rebound,
            Err(e) => {
                tracing::warn!(target: "braid::vector", dir = %dir.display(), error = %e,
                    "the log's tail could not be rebound to the merged base");
                return Ok(merged);
            }
        };
        // 3d. Under the lock: the records appended since, the rename, the directory's fsync.
        let mut disk = journal::lock(&self.disk);
        let Some(d) = disk.as_mut().filter(|d| d.dir == *dir && d.base == id && d.log_bound == snap.log_bound) else {
            // A whole base written meanwhile: the log is gone, and with it what to rebind.
            let _ = std::fs::remove_file(dir.join(log::LOG_TMP));
            return Ok(merged);
        };
        merged.rebound = d.log.records - snap.log.records;
        match log::finish_rebind(dir, rebound, &d.log) {
            Ok(state) => (d.log, d.log_bound, d.folded) = (state, id, 0),
            // The old log stays, bound to the old base; the new base says which of its records
            // it holds, and the next merge rebinds the rest.
            Err(e) => tracing::warn!(target: "braid::vector", dir = %dir.display(), error = %e,
                "the log's tail could not be rebound to the merged base"),
        }
        Ok(merged)
    }
}

const NOTHING: Merged = Merged { base_bytes: 0, records: 0, rebound: 0 };

/// A new base in the merge's temporary file, and what it was folded from.
pub(crate) struct Folded {
    snap: OnDisk,
    id: BaseId,
    folds: Folds,
    count: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{DiskMark, MergePolicy};
    use crate::params::{HnswParams, Quantization};
    use crate::sketch::tests::unit;
    use braid_core::Ordinal;

    const DIM: usize = 8;

    /// A store with a graph from its first vector, merged at any log (so every save_log hands
    /// back a job).
    fn store(quantization: Quantization) -> VectorStore {
        let params =
            HnswParams { m: 4, ef_construction: 16, exact_threshold: 0, quantization, ..HnswParams::default() };
        let mut store = VectorStore::new(DIM, params);
        store.set_merge_policy(MergePolicy { share_percent: 0, floor_bytes: 0 });
        store
    }

    /// Batch `b`: ten new records, the first of the batch before replaced, the second of the
    /// one before that deleted.
    fn batch(store: &mut VectorStore, b: u64) {
        let items: Vec<(Ordinal, Vec<f32>)> = (b * 10..b * 10 + 10).map(|o| (o, unit(o, DIM))).collect();
        store.insert_batch(&items).unwrap();
        if b >= 1 {
            store.insert((b - 1) * 10, &unit(b * 1_000, DIM)).unwrap();
        }
        if b >= 2 {
            store.delete((b - 2) * 10 + 1);
        }
    }

    /// The reopened store holds what memory holds, vector for vector, and its graph answers
    /// alike.
    /// A store saved three batches into `dir`, the merge job the saves asked for, and that
    /// job's folded base, not yet swapped in.
    fn folded_after_three_saves(quantization: Quantization, dir: &Path) -> (VectorStore, MergeJob, Folded) {
        let mut memory = store(quantization);
        let mut job = None;
        for b in 0..3 {
            batch(&mut memory, b);
            job = memory.save_log(dir).unwrap().or(job);
        }
        let job = job.unwrap();
        let folded = job.fold().unwrap().unwrap();
        (memory, job, folded)
    }

    fn same(opened: &VectorStore, memory: &VectorStore) {
        let mut a: Vec<Ordinal> = opened.ords().collect();
        let mut b: Vec<Ordinal> = memory.ords().collect();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
        for &ord in &b {
            assert_eq!(opened.vector(ord), memory.vector(ord), "the vector of {ord}");
        }
        assert_eq!((opened.has_graph(), opened.tombstones()), (memory.has_graph(), memory.tombstones()));
    }

    /// Records appended while a merge writes its base are in the files after the swap (rebound
    /// to the new base), and so is everything before; later saves append to the new log.
    #[test]
    fn records_appended_during_a_merge_survive_it() {
        for quantization in [Quantization::F32, Quantization::Int8] {
            let dir = tempfile::tempdir().unwrap();
            let mut memory = store(quantization);
            let mut job = None;
            for b in 0..4 {
                batch(&mut memory, b);
                job = memory.save_log(dir.path()).unwrap().or(job);
            }
            let job = job.expect("a tiny share makes a merge due");
            let folded = job.fold().unwrap().expect("a log past the base");
            batch(&mut memory, 4);
            assert!(memory.save_log(dir.path()).unwrap().is_some());
            let merged = job.swap(folded, true).unwrap();
            // Batch 0 wrote the base; batches 1 to 3 are the log the merge folds.
            assert_eq!((merged.records, merged.rebound), (3, 1));
            assert!(!dir.path().join(persist::MERGE_TMP).exists());
            same(&VectorStore::open(dir.path()).unwrap(), &memory);
            let mark = memory.disk_mark().unwrap();
            assert_eq!(mark.log_records, Some(1));
            VectorStore::open_checked(dir.path(), Some(&mark)).unwrap();
            batch(&mut memory, 5);
            memory.save_log(dir.path()).unwrap().unwrap().run().unwrap();
            batch(&mut memory, 6);
            memory.save_log(dir.path()).unwrap();
            same(&VectorStore::open(dir.path()).unwrap(), &memory);
        }
    }

    /// What a crash between the new base's rename and the log's rebinding leaves — the new
    /// base, and the old log bound to the base it folds — opens with every record, and a mark
    /// written before the merge is met; a mark that counts a record more is not.
    #[test]
    fn a_crash_between_the_renames_loses_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (mut memory, job, folded) = folded_after_three_saves(Quantization::Int8, dir.path());
        batch(&mut memory, 3);
        memory.save_log(dir.path()).unwrap();
        let before = memory.disk_mark().unwrap();
        assert_eq!(before.log_records, Some(3));
        job.swap(folded, false).unwrap();
        let opened = VectorStore::open_checked(dir.path(), Some(&before)).unwrap();
        same(&opened, &memory);
        let greedy = DiskMark { log_records: Some(4), ..before };
        assert!(matches!(VectorStore::open_checked(dir.path(), Some(&greedy)), Err(braid_core::Error::Corrupt { .. })));
        // The store goes on appending to the old log, and the next merge rebinds it.
        batch(&mut memory, 4);
        let job = memory.save_log(dir.path()).unwrap().unwrap();
        same(&VectorStore::open(dir.path()).unwrap(), &memory);
        job.run().unwrap();
        same(&VectorStore::open_checked(dir.path(), Some(&before)).unwrap(), &memory);
        same(&VectorStore::open(dir.path()).unwrap(), &memory);
    }

    /// A whole base written from memory while a merge folds (a compaction, say) wins: the
    /// merge drops its file and changes nothing.
    #[test]
    fn a_whole_base_written_meanwhile_wins() {
        let dir = tempfile::tempdir().unwrap();
        let (memory, job, folded) = folded_after_three_saves(Quantization::F32, dir.path());
        memory.merge(dir.path()).unwrap();
        assert_eq!(job.swap(folded, true).unwrap().base_bytes, 0);
        assert!(!dir.path().join(persist::MERGE_TMP).exists());
        assert!(!dir.path().join(log::LOG_FILE).exists());
        same(&VectorStore::open(dir.path()).unwrap(), &memory);
    }
}
