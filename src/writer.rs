//! The single writer: upserts and deletes, made durable and visible by `commit()`.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};

use braid_core::{Ordinal, Record, Result};
use braid_lexical::{LexicalWriter, Merges, DEFAULT_WRITER_HEAP};
use braid_vector::PartitionedStore;

use crate::index::{open_semantic, Index, Parts};
use crate::manifest::{sync_dir, Manifest, FORMAT_VERSION};
use crate::priority;
use crate::semantic::{EmbeddingInfo, Semantic};

/// The ordinal counter of an index: every upsert gets a fresh ordinal, never one handed out
/// before (not even one of a record that never committed). Persisted in the manifest at each
/// commit; only the writer takes from it.
pub(crate) struct Ordinals(Mutex<u64>);

impl Ordinals {
    pub fn starting_at(next: u64) -> Ordinals {
        Ordinals(Mutex::new(next))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, u64> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The next ordinal to hand out.
    pub fn peek(&self) -> u64 {
        *self.lock()
    }

    /// Never hand out an ordinal below `next` (after a reload, or past dropped orphans).
    pub fn raise_to(&self, next: u64) {
        let mut current = self.lock();
        *current = (*current).max(next);
    }

    /// Runs `use_it` with the next ordinal and takes it only when `use_it` succeeds.
    fn take<T>(&self, use_it: impl FnOnce(Ordinal) -> Result<T>) -> Result<T> {
        let mut next = self.lock();
        let out = use_it(*next)?;
        *next += 1;
        Ok(out)
    }
}

/// The smallest indexing buffer tantivy accepts.
pub const MIN_WRITER_HEAP: usize = 15_000_000;

/// Records whose vectors go into the store under one write lock at commit in a bulk load
/// ([`Merges::Deferred`]: their graph links searched on every core, under the lock). Between
/// parts, searches read the store. Other commits put the rows in under one short lock and
/// search the graph links under a read lock ([`braid_vector::PartitionedStore::insert_unlinked`]):
/// at 500,000 vectors (ef_construction 400) a part of 16 held the lock for 30–90 ms while
/// searches waited (`crates/braid-cli/examples/sustained_writes.rs`, research/scale-log.md).
const BULK_INSERT_PART: usize = 16;

/// The pause after each part, in which searches waiting for the store take it.
const PART_PAUSE: std::time::Duration = std::time::Duration::from_micros(200);

/// The pause after each record linked into a graph under the write lock.
const LINK_PAUSE: std::time::Duration = std::time::Duration::from_micros(20);

/// How often a commit asks again for the vector store's write lock while searches hold it, and
/// how long it asks before it waits in line ([`write_between_searches`]).
const LOCK_RETRY: std::time::Duration = std::time::Duration::from_micros(200);
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_millis(100);

/// `lock`'s write lock, taken in a gap between the searches that read it. A writer waiting in
/// line makes every search that comes after it wait too (the lock lets no new reader past a
/// waiting writer), for as long as the slowest search already in: at 1M records a whole
/// semantic leg. So the commit asks without waiting, again every [`LOCK_RETRY`], and waits in
/// line only after [`LOCK_PATIENCE`] (searches that always overlap cannot hold it off).
fn write_between_searches<T>(lock: &std::sync::RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    let asked = std::time::Instant::now();
    loop {
        match lock.try_write() {
            Ok(guard) => return guard,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => return poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) if asked.elapsed() < LOCK_PATIENCE => {
                std::thread::sleep(LOCK_RETRY)
            }
            Err(std::sync::TryLockError::WouldBlock) => return lock.write().unwrap_or_else(|p| p.into_inner()),
        }
    }
}

/// How long a commit waited for the vector store's write lock, and then held it.
#[derive(Debug, Clone, Copy)]
struct LockTimes {
    wait: std::time::Duration,
    held: std::time::Duration,
}

/// Runs `change` under `store`'s write lock, taken between searches
/// ([`write_between_searches`]), and says how long it waited and held it.
fn write_locked<T>(
    store: &RwLock<PartitionedStore>,
    change: impl FnOnce(&mut PartitionedStore) -> T,
) -> (T, LockTimes) {
    let asked = std::time::Instant::now();
    let mut locked = write_between_searches(store);
    let taken = std::time::Instant::now();
    let out = change(&mut locked);
    let held = taken.elapsed();
    drop(locked);
    (out, LockTimes { wait: taken - asked, held })
}

/// As [`write_locked`] on `semantic`'s store, at the searches' priority: a commit lowered by
/// [`crate::GroupCommit`] hands the section to the thread that lowered it
/// ([`priority::at_callers_priority`]), so that no search waits on a lock held by a thread the
/// scheduler puts last.
fn write_locked_raised<T: Send + 'static>(
    semantic: &Arc<Semantic>,
    change: impl FnOnce(&mut PartitionedStore) -> T + Send + 'static,
) -> (T, LockTimes) {
    let semantic = semantic.clone();
    priority::at_callers_priority(move || write_locked(&semantic.store, change))
}

/// The memory a [`Writer`] may hold while ingesting (see [`Index::writer_with`]).
///
/// A writer holds at most `heap_bytes` of inverted-index buffers (tantivy writes a segment to
/// disk, uncommitted, whenever they fill), at most `embed_batch` texts waiting for the
/// embedder, and, per record upserted since the last commit, its vector (4 bytes per
/// dimension) and its id; committing every N records bounds the last two.
///
/// A bulk load sets `merges` to [`Merges::Deferred`]: no segment merges until
/// [`Writer::optimize`], which merges once (`braid index` does this).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriterOptions {
    /// Bytes of indexing buffer, shared by tantivy's indexing threads. By default
    /// [`DEFAULT_WRITER_HEAP`] (128 MiB); at least [`MIN_WRITER_HEAP`].
    pub heap_bytes: usize,
    /// Texts embedded per batch. By default 8; at least 1. ONNX Runtime keeps memory for the
    /// largest batch it ran: indexing SciFact, 32 texts per batch peaked at 1082 MiB resident
    /// and 8 at 389 MiB, in 202 s against 242 s (`benches/ingest_memory.rs`, 320 records).
    pub embed_batch: usize,
    /// When segments merge. By default [`Merges::Background`].
    pub merges: Merges,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions { heap_bytes: DEFAULT_WRITER_HEAP, embed_batch: 8, merges: Merges::Background }
    }
}

/// Writes to an [`Index`]. There is one at a time per index; a second gets
/// [`braid_core::Error::LockBusy`].
///
/// Changes are invisible to searches until [`Writer::commit`]. Dropping a writer without
/// committing discards its changes. When the index was built with an embedder, records are
/// embedded in batches as they arrive; re-upserting a record whose content did not change is
/// a no-op, so re-indexing a corpus never recomputes its embeddings.
pub struct Writer {
    index: Index,
    /// The commit this writer writes on (no reload swaps it while the writer is open).
    parts: Arc<Parts>,
    options: WriterOptions,
    lexical: LexicalWriter,
    pending: usize,
    /// Records upserted since the last commit: id → ordinal.
    pending_ids: HashMap<String, Ordinal>,
    /// Texts waiting to be embedded, with their ordinals (a record's passages adjacent).
    to_embed: Vec<(Ordinal, String)>,
    /// Vectors ready to insert at commit: each record's, one or one per passage.
    vectors: Vec<(Ordinal, Vec<Vec<f32>>)>,
    /// The tenant tokens of records with vectors to insert that have any (they place the
    /// vectors in their tenant's partition).
    tenants: HashMap<Ordinal, Vec<String>>,
    /// Ordinals whose vectors go at commit (replaced or deleted records).
    superseded: Vec<Ordinal>,
    /// Ids upserted or deleted since the last commit.
    touched: HashSet<String>,
    /// Upserts skipped because the committed record was identical.
    unchanged: usize,
}

/// The model id an index records for vectors supplied with records when none was named
/// (see [`crate::IndexBuilder::vectors`]).
pub const SUPPLIED_MODEL: &str = "supplied";

impl Writer {
    pub(crate) fn new(index: Index, options: WriterOptions) -> Result<Writer> {
        if options.heap_bytes < MIN_WRITER_HEAP {
            return Err(braid_core::Error::invalid_request(format!(
                "writer heap of {} bytes is below the minimum of {MIN_WRITER_HEAP}",
                options.heap_bytes
            )));
        }
        if options.embed_batch == 0 {
            return Err(braid_core::Error::invalid_request("embed_batch must be at least 1"));
        }
        let (lexical, parts) = index.open_writer(|parts| {
            let mut lexical = parts.lexical.writer(options.heap_bytes)?;
            lexical.set_merges(options.merges)?;
            Ok((lexical, parts))
        })?;
        Ok(Writer {
            index,
            parts,
            options,
            lexical,
            pending: 0,
            pending_ids: HashMap::new(),
            to_embed: Vec::new(),
            vectors: Vec::new(),
            tenants: HashMap::new(),
            superseded: Vec::new(),
            touched: HashSet::new(),
            unchanged: 0,
        })
    }

    /// Adds `record`, replacing any record with the same id.
    ///
    /// # Errors
    /// [`braid_core::Error::InvalidRecord`] or [`braid_core::Error::UnknownField`]; the
    /// record is then not written. With an embedder, [`braid_core::Error::Model`]
    /// when a batch cannot be embedded.
    pub fn upsert(&mut self, record: &Record) -> Result<()> {
        record.validate()?;
        if let Some(vector) = record.vector.as_deref() {
            self.semantic_for(vector.len())?.check(vector, "record")?;
        }
        let hash = content_hash(record)?;
        let committed = self.parts.lexical.snapshot().record_by_id(record.id())?;
        if let Some(old) = &committed {
            let has_vector = self
                .semantic()
                .is_none_or(|s| !self.wants_vector(s, record) || s.store.read().is_ok_and(|v| v.contains(old.ord)));
            // An old record with no SHA-256 digest (a 64-bit hash from an earlier Braid) never
            // matches: it is rewritten once.
            if old.digest == Some(hash) && has_vector && !self.touched.contains(record.id()) {
                self.unchanged += 1;
                return Ok(());
            }
        }
        self.touched.insert(record.id().to_string());
        let lexical = &mut self.lexical;
        let ord = self.index.ordinals().take(|ord| lexical.upsert(ord, record, hash).map(|()| ord))?;
        self.pending += 1;
        self.supersede(record.id(), committed.map(|r| r.ord));
        self.pending_ids.insert(record.id().to_string(), ord);
        let tenants: Vec<String> = record.tenants().map(str::to_string).collect();
        if !tenants.is_empty()
            && (record.vector.is_some() || self.semantic().is_some_and(|s| s.embeds(record.language())))
        {
            self.tenants.insert(ord, tenants);
        }
        if let Some(vector) = record.vector.as_deref() {
            self.vectors.push((ord, vec![vector.to_vec()]));
        } else if self.semantic().is_some_and(|s| s.embeds(record.language())) {
            // Records in a language the model does not cover get no vector (an English
            // model's vector of Chinese text is noise); the lexical legs still find them.
            let passages = record.passages(self.index.config().passages.as_ref());
            self.to_embed.extend(passages.into_iter().map(|text| (ord, text)));
            if self.to_embed.len() >= self.options.embed_batch {
                self.embed_pending()?;
            }
        }
        Ok(())
    }

    /// Checks `record` alone as [`Writer::upsert`] would, and changes nothing: what a group
    /// commit runs over a whole batch before it writes any of it. On an index whose vectors
    /// are not yet attached, a supplied vector is checked against the dimension the manifest
    /// records, if any (the first upsert of a vector fixes it, so two records of one batch may
    /// still disagree: the upsert of the second refuses it).
    ///
    /// # Errors
    /// As [`Writer::upsert`]'s refusals: [`braid_core::Error::InvalidRecord`],
    /// [`braid_core::Error::UnknownField`], [`braid_core::Error::DimensionMismatch`],
    /// [`braid_core::Error::ReservedToken`].
    pub(crate) fn check(&self, record: &Record) -> Result<()> {
        self.lexical.check(record)?;
        let Some(vector) = record.vector.as_deref() else { return Ok(()) };
        if let Some(semantic) = self.semantic() {
            return semantic.check(vector, "record");
        }
        let recorded = self.parts.embedding.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map(|e| e.dim);
        match recorded {
            Some(expected) if expected != vector.len() => {
                Err(braid_core::Error::DimensionMismatch { expected, got: vector.len() })
            }
            _ => braid_core::check_vector(vector)
                .map_err(|reason| braid_core::Error::InvalidRecord { reason: format!("vector {reason}") }),
        }
    }

    /// Whether `record` should have a vector in `semantic`'s store: it supplies one, or the
    /// embedder covers its language.
    fn wants_vector(&self, semantic: &Semantic, record: &Record) -> bool {
        record.vector.as_deref().is_some() || semantic.embeds(record.language())
    }

    /// The semantic leg of the commit this writer writes on, if it has one.
    fn semantic(&self) -> Option<&Arc<Semantic>> {
        self.parts.semantic.get()
    }

    /// The semantic state a supplied vector of `dim` dimensions goes to: the index's, or, on an
    /// index opened without one, one started now for supplied vectors (under the model the
    /// manifest records — its saved vectors loaded — else [`SUPPLIED_MODEL`]). Set once, never
    /// replaced.
    fn semantic_for(&mut self, dim: usize) -> Result<Arc<Semantic>> {
        if let Some(semantic) = self.semantic() {
            return Ok(semantic.clone());
        }
        let recorded = self.parts.embedding.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let info = recorded.clone().unwrap_or(EmbeddingInfo { model_id: SUPPLIED_MODEL.into(), dim });
        let snapshot = self.parts.lexical.snapshot();
        let quantization = self.index.config().quantization;
        let (semantic, next_ord) = open_semantic(
            self.index.layout(),
            info,
            None,
            recorded.as_ref(),
            &snapshot,
            quantization,
            self.index.vector_tuning(),
        )?;
        self.index.ordinals().raise_to(next_ord);
        // The cell is set only here and at open, and this writer is the index's only one.
        let _ = self.parts.semantic.set(Arc::new(semantic));
        self.semantic().cloned().ok_or_else(|| braid_core::Error::Vector("vectors failed to attach".into()))
    }

    /// The number of upserts skipped since this writer opened because the committed record
    /// was identical (re-running an ingest skips what an earlier run committed).
    pub fn unchanged(&self) -> usize {
        self.unchanged
    }

    /// Deletes the record with this id (a no-op when there is none).
    ///
    /// # Errors
    /// [`braid_core::Error::Lexical`] when the committed record cannot be looked up.
    pub fn delete(&mut self, id: &str) -> Result<()> {
        self.lexical.delete(id)?;
        let committed = self.parts.lexical.snapshot().record_by_id(id)?;
        self.supersede(id, committed.map(|r| r.ord));
        self.pending_ids.remove(id);
        self.touched.insert(id.to_string());
        self.pending += 1;
        Ok(())
    }

    fn supersede(&mut self, id: &str, committed: Option<Ordinal>) {
        self.superseded.extend(committed);
        if let Some(ord) = self.pending_ids.get(id) {
            self.superseded.push(*ord);
        }
    }

    fn embed_pending(&mut self) -> Result<()> {
        let Some(embedder) = self.semantic().and_then(|s| s.embedder.clone()) else { return Ok(()) };
        if self.to_embed.is_empty() {
            return Ok(());
        }
        let texts: Vec<&str> = self.to_embed.iter().map(|(_, t)| t.as_str()).collect();
        let vectors = embedder.embed(&texts)?;
        if vectors.len() != texts.len() {
            return Err(braid_core::Error::Model {
                reason: format!("the embedder returned {} vectors for {} texts", vectors.len(), texts.len()),
            });
        }
        for ((ord, _), vector) in self.to_embed.drain(..).zip(vectors) {
            match self.vectors.last_mut() {
                Some((last, passages)) if *last == ord => passages.push(vector),
                _ => self.vectors.push((ord, vec![vector])),
            }
        }
        Ok(())
    }

    /// The number of upserts and deletes since the last commit.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Makes every change durable and visible to new searches. A crash (or power loss) at any
    /// point loses only uncommitted changes, and a reopened index sees exactly one commit.
    ///
    /// The order: the vector store saves what changed since the last commit — a checksummed
    /// record appended to each changed partition's log (the new vectors, the tombstones, the
    /// graph's new links) and fsynced ([`braid_vector::VectorStore::save_log`]; a whole vector
    /// file only where a record cannot say what changed: the first save, a compaction, a graph
    /// built) — then the manifest (temporary file, fsync,
    /// rename), then tantivy commits — its `meta.json` rename is the commit point — and the
    /// lexical directory is fsynced. Vectors of replaced or deleted records leave the store
    /// only after that point (their tombstones go into the next commit's record; until then the
    /// next open drops them as vectors of records no commit holds). So a crash before the
    /// commit point leaves vectors without a committed record, which the next open drops (a
    /// torn log record is ignored); never a committed record without its vector.
    ///
    /// A partition whose log has passed its share of its base
    /// ([`crate::IndexBuilder::vector_merge_policy`]) is merged into a new base afterwards, on
    /// the index's background merge thread, from the files (see [`braid_vector::MergeJob`]):
    /// no commit rewrites vectors it did not change, and none waits for a merge.
    ///
    /// Searches keep running meanwhile: new vectors go into the store a few records at a time
    /// (the batch is checked whole first, so it still goes in all or nothing), and the log
    /// record is written while searches read the store.
    ///
    /// # Errors
    /// [`braid_core::Error::Lexical`], [`braid_core::Error::Io`] or
    /// [`braid_core::Error::Model`] when the commit cannot be written; the previous commit
    /// stays intact on disk.
    pub fn commit(&mut self) -> Result<()> {
        let mut profile = CommitProfile::start();
        self.embed_pending()?;
        profile.mark("embed");
        let layout = self.index.layout().cloned();
        let parts = self.parts.clone();
        let mut merges = Vec::new();
        if let Some(semantic) = parts.semantic.get() {
            // Searches read the store while it grows: the batch is checked whole, then goes in
            // a part at a time, each under its own write lock, and the file is written under a
            // read lock. Vectors of records not yet committed are outside every allowed set.
            let tenants = |ord| self.tenants.get(&ord).cloned().unwrap_or_default();
            let checked =
                semantic.store.read().unwrap_or_else(|p| p.into_inner()).check_passages(&self.vectors, tenants)?;
            profile.mark("vector_check");
            if self.options.merges == Merges::Deferred {
                // A bulk load: parts linked on every core, under the lock.
                let mut pieces = checked.chunks(BULK_INSERT_PART).peekable();
                while let Some(piece) = pieces.next() {
                    let (inserted, times) = write_locked(&semantic.store, |store| store.insert_checked(piece));
                    profile.locked(times);
                    inserted?;
                    // The lock is not fair: without a pause this thread takes it again before a
                    // search it woke can run.
                    if pieces.peek().is_some() {
                        std::thread::sleep(PART_PAUSE);
                    }
                }
            } else {
                // The rows go in under one short lock, into arenas given room beforehand under
                // a read lock where they would grow (a copy of the arena, which under the write
                // lock every search would wait for; braid-vector's `room` module); the arenas
                // they replace are freed after the lock. The graph's links (a search of it at
                // build width per record, milliseconds at 500,000 vectors) are searched under a
                // read lock, beside the searches, and linked one record per short write lock.
                // Every write lock is taken and held at the searches' priority (`priority`).
                let rooms = semantic.store.read().unwrap_or_else(|p| p.into_inner()).rooms_for(&checked);
                profile.mark("vector_room");
                let (inserted, times) = write_locked_raised(semantic, move |store| {
                    let spares = store.make_rooms(rooms);
                    store.insert_unlinked(&checked).map(|()| spares)
                });
                profile.locked(times);
                drop(inserted?);
                let mut prepared = semantic.store.read().unwrap_or_else(|p| p.into_inner()).prepare_links();
                profile.mark("vector_rows_and_links");
                // Without a graph to link into (int8 stores below a million records), no
                // second lock.
                while !prepared.is_empty() {
                    let ((more, back), times) = write_locked_raised(semantic, move |store| {
                        let more = store.link_next(&mut prepared);
                        (more, prepared)
                    });
                    profile.locked(times);
                    prepared = back;
                    if !more {
                        break;
                    }
                    std::thread::sleep(LINK_PAUSE);
                }
            }
            profile.mark("vector_insert");
            if let Some(layout) = &layout {
                merges = semantic.store.read().unwrap_or_else(|p| p.into_inner()).save_log(&layout.vectors())?;
            }
            profile.mark("vector_log");
            *parts.embedding.lock().unwrap_or_else(|p| p.into_inner()) = Some(semantic.info.clone());
        }
        if let Some(layout) = &layout {
            let next_ord = self.index.ordinals().peek();
            let embedding = parts.embedding.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let config = self.index.config().clone();
            let (vector_mark, vector_partitions) = parts
                .semantic
                .get()
                .map(|s| s.store.read().unwrap_or_else(|p| p.into_inner()).disk_marks())
                .unwrap_or_default();
            Manifest { format: FORMAT_VERSION, config, next_ord, embedding, vector_mark, vector_partitions }
                .write(layout)?;
        }
        profile.mark("manifest");
        self.lexical.commit()?;
        profile.mark("lexical_commit");
        self.after_commit()?;
        profile.mark("after_commit");
        if let Some(semantic) = parts.semantic.get() {
            if !self.superseded.is_empty() {
                let superseded = std::mem::take(&mut self.superseded);
                let ((), times) = write_locked_raised(semantic, move |store| {
                    for ord in superseded {
                        store.delete(ord);
                    }
                });
                profile.locked(times);
            }
            // Partitions whose logs passed their share merge on the index's merge thread,
            // after this commit returned.
            semantic.merge_in_background(merges);
        }
        profile.mark("vector_delete");
        profile.finish(self.pending);
        self.pending = 0;
        self.pending_ids.clear();
        self.vectors.clear();
        self.tenants.clear();
        self.superseded.clear();
        self.touched.clear();
        Ok(())
    }

    /// After tantivy wrote a commit: makes its rename durable (tantivy renames meta.json without
    /// syncing the directory), serves it, and notes its commit point (so that
    /// [`Index::reload`] does not open it again).
    fn after_commit(&self) -> Result<()> {
        if let Some(layout) = self.index.layout() {
            let lexical = layout.lexical();
            sync_dir(&lexical).map_err(|e| braid_core::Error::io(&lexical, e))?;
            *self.parts.commit_point.lock().unwrap_or_else(|p| p.into_inner()) = layout.commit_point();
        }
        self.parts.lexical.reload()
    }

    /// Commits, then merges the index's segments into one (see
    /// [`LexicalWriter::merge_segments`]): searches get faster, and deleted records leave the
    /// disk. Worth it after a bulk load or many updates; it rewrites the whole lexical index,
    /// so it takes time and disk space in proportion to it. `braid index` calls it at the end.
    /// The vector store is not rewritten: its logs merge in the background past their share
    /// (see [`braid_vector::MergeJob`]).
    ///
    /// # Errors
    /// As [`Writer::commit`]; the committed index stays intact when the merge fails.
    pub fn optimize(&mut self) -> Result<()> {
        self.commit()?;
        self.lexical.merge_segments()?;
        self.after_commit()
    }

    /// Closes the writer once the segment merges it started in the background have ended.
    ///
    /// A writer kept open across commits merges its small segments as they pile up; dropping it
    /// abandons the merges still running (their work is lost, and a service that opens a
    /// writer per commit and drops it after ends up with a segment per commit, each commit
    /// costing more than the last). Close a long-lived writer with this instead of dropping
    /// it. Changes not yet committed are discarded, as on drop.
    ///
    /// # Errors
    /// [`braid_core::Error::Lexical`] when a merge failed; every commit before it stands.
    pub fn close(mut self) -> Result<()> {
        self.lexical.close()
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.index.close_writer();
    }
}

/// Where a commit's time went, phase by phase, and how long it held and waited for the vector
/// store's write lock: logged at debug level under the target `braid::commit` (for
/// `crates/braid-cli/examples/sustained_writes.rs`; nothing is measured unless that target is
/// enabled).
struct CommitProfile {
    on: bool,
    started: std::time::Instant,
    last: std::time::Instant,
    phases: Vec<(&'static str, std::time::Duration)>,
    lock_parts: u32,
    lock_wait: std::time::Duration,
    lock_held: std::time::Duration,
    lock_held_max: std::time::Duration,
}

impl CommitProfile {
    fn start() -> CommitProfile {
        let now = std::time::Instant::now();
        CommitProfile {
            on: tracing::enabled!(target: "braid::commit", tracing::Level::DEBUG),
            started: now,
            last: now,
            phases: Vec::new(),
            lock_parts: 0,
            lock_wait: std::time::Duration::ZERO,
            lock_held: std::time::Duration::ZERO,
            lock_held_max: std::time::Duration::ZERO,
        }
    }

    /// Ends phase `name` now.
    fn mark(&mut self, name: &'static str) {
        if self.on {
            let now = std::time::Instant::now();
            self.phases.push((name, now - self.last));
            self.last = now;
        }
    }

    /// The store's write lock taken and released, as `times` says.
    fn locked(&mut self, times: LockTimes) {
        self.lock_parts += 1;
        self.lock_wait += times.wait;
        self.lock_held += times.held;
        self.lock_held_max = self.lock_held_max.max(times.held);
    }

    fn finish(&self, changes: usize) {
        if !self.on {
            return;
        }
        let ms = |d: std::time::Duration| (d.as_secs_f64() * 1e5).round() / 100.0;
        let phases: Vec<String> = self.phases.iter().map(|(n, d)| format!("{n}={}", ms(*d))).collect();
        tracing::debug!(
            target: "braid::commit",
            changes,
            total_ms = ms(self.started.elapsed()),
            phases = %phases.join(","),
            lock_parts = self.lock_parts,
            lock_wait_ms = ms(self.lock_wait),
            lock_held_ms = ms(self.lock_held),
            lock_held_max_ms = ms(self.lock_held_max),
            "commit"
        );
    }
}

/// The SHA-256 of everything a record holds — id, title, body, keyword and numeric fields,
/// ACL and tenant tokens, parent, section and lines — over its canonical serialisation
/// (JSON, fields in declaration order, maps sorted), used to skip re-indexing unchanged
/// records. Collision resistance matters here: two records with the same hash are taken to be
/// the same, so a crafted collision would turn an ACL change into a no-op.
///
/// # Errors
/// [`braid_core::Error::InvalidRecord`] when the record cannot be serialised (never for a
/// record that passed [`Record::validate`]).
///
/// ```
/// use braid::{content_hash, Record};
/// let a = Record::new("a").body("x").acl(["tenant:acme"]);
/// let b = Record::new("a").body("x").acl(["tenant:globex"]);
/// assert_ne!(content_hash(&a)?, content_hash(&b)?);
/// assert_eq!(content_hash(&a)?, content_hash(&a.clone())?);
/// # Ok::<(), braid::Error>(())
/// ```
pub fn content_hash(record: &Record) -> Result<[u8; 32]> {
    use sha2::{Digest, Sha256};
    let bytes = serde_json::to_vec(record)
        .map_err(|e| braid_core::Error::InvalidRecord { reason: format!("cannot serialise the record: {e}") })?;
    let digest = Sha256::digest(&bytes);
    let mut out = [0u8; 32];
    out.copy_from_slice(&digest);
    Ok(out)
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::IndexConfig;

    #[test]
    fn a_record_with_an_old_64_bit_hash_is_rewritten_once() {
        let index = Index::create_in_ram(IndexConfig::default()).unwrap();
        let record = Record::new("doc").body("quarterly roadmap").acl(["group:staff"]);
        {
            // As an earlier Braid wrote it: one 64-bit hash value.
            let parts = index.parts();
            let mut lexical = parts.lexical.writer(DEFAULT_WRITER_HEAP).unwrap();
            lexical.upsert(0, &record, 0x1234_u64).unwrap();
            lexical.commit().unwrap();
            parts.lexical.reload().unwrap();
        }
        let old = index.parts().lexical.snapshot().record_by_id("doc").unwrap().unwrap();
        assert_eq!(old.digest, None);
        let mut w = index.writer().unwrap();
        w.upsert(&record).unwrap();
        assert_eq!(w.pending(), 1, "an old hash never counts as unchanged");
        w.commit().unwrap();
        let new = index.parts().lexical.snapshot().record_by_id("doc").unwrap().unwrap();
        assert_eq!(new.digest, Some(content_hash(&record).unwrap()));
        drop(w);
        // From then on the same content is skipped.
        let mut w = index.writer().unwrap();
        w.upsert(&record).unwrap();
        assert_eq!(w.pending(), 0);
    }
}
