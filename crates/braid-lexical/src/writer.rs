//! Adding, replacing and deleting records in the inverted index.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use braid_core::{Error, Ordinal, Record, Result, NO_ACL_TOKEN, NO_TENANT_TOKEN};
use tantivy::indexer::{LogMergePolicy, NoMergePolicy, UserOperation};
use tantivy::schema::Field;
use tantivy::tokenizer::{PreTokenizedString, TextAnalyzer};
use tantivy::{IndexWriter, TantivyDocument, Term};

use crate::analysis::{for_mode, head_terms, tokens, ModeAnalyzers, HEAD_WORDS};
use crate::cjk::HanMode;
use crate::error::lexical;
use crate::index::Shared;
use crate::partition::{Catalog, Part, POOL_KEY};
use crate::schema::Fields;
use crate::visibility::section_key;

/// Segments below this many documents count as this size to the merge policy (tantivy's
/// `min_layer_size`, 10,000 by default).
const MERGE_FLOOR_DOCS: u32 = 1_000;

/// The operations a partition's writer holds back in each commit and sends to tantivy as one
/// group, when the commit begins or as soon as this many are held; the rest of a larger commit
/// go one by one. tantivy hands each group to one of its indexing threads, and each thread
/// that indexed anything writes a segment at the commit: sent one by one, a commit of 10
/// records wrote a segment per thread (two here), each as many files and table set-ups again
/// (research/scale-log.md, fourteenth session). An upsert into the main partition is two
/// operations (the old version's delete, the add), so 32 hold a 10-record commit. Only where
/// tantivy has several indexing threads ([`indexing_threads`]): with one, a commit is one
/// segment anyway, and holding only delayed the indexing (a group commit's writer has one; held
/// there, its commits of 500 records took 200–225 ms at the median against 149–157, research/
/// scale-log.md). Kept small, so that a large commit's records are indexed while it is
/// written, not at its end.
const HELD_UP_TO: usize = 32;

/// tantivy's least indexing heap a thread, and most indexing threads (its `IndexWriter`'s
/// `MEMORY_BUDGET_NUM_BYTES_MIN` and `MAX_NUM_THREAD`).
pub(crate) const HEAP_PER_THREAD_MIN: usize = 15_000_000;
const THREADS_MAX: usize = 8;

/// The indexing threads of a writer of `heap_bytes`, as tantivy's `Index::writer` chooses them
/// (one a core, at most eight, each with at least 15 MB of the heap), chosen here so that the
/// writer knows whether a commit's operations are split between threads ([`HELD_UP_TO`]).
pub(crate) fn indexing_threads(heap_bytes: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(THREADS_MAX);
    if heap_bytes / cores < HEAP_PER_THREAD_MIN {
        (heap_bytes / HEAP_PER_THREAD_MIN).max(1)
    } else {
        cores
    }
}

/// When a lexical writer merges segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Merges {
    /// tantivy's log merge policy merges small segments in the background as commits
    /// accumulate them (the default: right for a writer that commits small batches forever).
    #[default]
    Background,
    /// No merge runs until [`LexicalWriter::merge_segments`]: right for a bulk load, whose
    /// every intermediate merge would be rewritten again by the final one.
    Deferred,
}

/// The single writer of a lexical index. Changes become visible to searches at `commit()`.
///
/// A record goes to its partition ([`crate::partition`]): a promoted tenant's record to that
/// tenant's, another tenant's to the pool, a record without a tenant or of several to the main
/// one.
///
/// **A commit is atomic across partitions.** The main partition's commit is the commit point;
/// its [`Catalog`] says which records of the other partitions (the satellites: the pool and
/// the tenants') belong to it. A commit runs in three steps:
/// 1. each satellite it wrote commits its new records (ordinals above the catalog's
///    `ords_through`, which searches do not see yet) and nothing else;
/// 2. the main partition commits its own changes with the new catalog: `ords_through` raised
///    to this commit's records, and the satellites' records this commit replaced or deleted
///    listed as `superseded` (searches stop seeing them here);
/// 3. the satellites delete the superseded records.
///
/// A crash before step 2 leaves the index as it was before the commit, one after it as it is
/// after; the next writer deletes what the catalog hides before it writes (see
/// [`LexicalWriter::new`]). After the commit, each pooled tenant it wrote that now holds
/// [`braid_core::PROMOTE_AT`] records is promoted ([`crate::promote`]).
pub struct LexicalWriter {
    shared: Arc<Shared>,
    /// The main partition's tantivy writer; `None` once closed ([`LexicalWriter::close`]) or
    /// when reopening it after waiting for its merges failed (every later call then reports
    /// [`Error::Lexical`]).
    main: Option<IndexWriter>,
    /// The writers of the pool and of promoted tenants' partitions, opened when first written.
    satellites: BTreeMap<Part, IndexWriter>,
    /// The main partition's last catalog (see the type's docs).
    catalog: Catalog,
    /// The partition and ordinal of each record written since the last commit, by id.
    pending: HashMap<String, (Part, Ordinal)>,
    /// Committed records of the satellites that the next commit replaces or deletes, by
    /// partition key ([`Part::key`]).
    superseded: BTreeMap<String, Vec<Ordinal>>,
    /// The highest ordinal written since the last commit.
    written_through: Option<Ordinal>,
    /// Pooled tenants written since the last commit: the candidates for promotion.
    pooled: BTreeSet<String>,
    /// The satellites written since the last commit.
    written: BTreeSet<Part>,
    /// Per partition, the operations held back since its last commit ([`HELD_UP_TO`]).
    held: BTreeMap<Part, Held>,
    /// Whether operations are held: the writers have several indexing threads.
    holds: bool,
    heap_bytes: usize,
    merges: Merges,
    pub(crate) fields: Fields,
    /// The index's configured text analyzer (for the feedback heads; tantivy analyses the
    /// indexed fields with the same one, registered on the index).
    text: TextAnalyzer,
    /// Analyzers for records whose language says how to cut Han characters.
    pub(crate) by_mode: [ModeAnalyzers; 2],
}

/// The content digest stored with a record (see `braid::content_hash`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentDigest {
    /// A SHA-256: what Braid writes.
    Sha256([u8; 32]),
    /// A 64-bit hash, as Braid wrote before the digest became SHA-256: such records read back
    /// with no [`crate::IndexedRecord::digest`], so the writer rewrites them. Kept for tests of
    /// that upgrade path and of the lexical layer alone.
    Legacy(u64),
}

impl From<[u8; 32]> for ContentDigest {
    fn from(bytes: [u8; 32]) -> Self {
        ContentDigest::Sha256(bytes)
    }
}

impl From<u64> for ContentDigest {
    fn from(hash: u64) -> Self {
        ContentDigest::Legacy(hash)
    }
}

/// A partition's operations held back in a commit ([`HELD_UP_TO`]).
#[derive(Default)]
struct Held {
    operations: Vec<UserOperation>,
    /// Whether this commit sent a group already: the rest go one by one.
    sent: bool,
}

impl LexicalWriter {
    /// The writer of the index `shared`, over tantivy's writer `main` of its main partition.
    /// First it completes what a crash left of the last commit: each satellite deletes the
    /// records the main partition's catalog hides (those of a commit the crash cut short
    /// before its commit point, and those its last commit superseded).
    pub(crate) fn new(shared: Arc<Shared>, main: IndexWriter, heap_bytes: usize) -> Result<Self> {
        let catalog = Catalog::read(shared.main.index.load_metas().map_err(lexical)?.payload.as_deref())?;
        let analyzer = shared.config.analyzer;
        let mut writer = LexicalWriter {
            fields: shared.fields.clone(),
            shared,
            main: Some(main),
            satellites: BTreeMap::new(),
            catalog,
            pending: HashMap::new(),
            superseded: BTreeMap::new(),
            written_through: None,
            pooled: BTreeSet::new(),
            written: BTreeSet::new(),
            held: BTreeMap::new(),
            holds: indexing_threads(heap_bytes) > 1,
            heap_bytes,
            merges: Merges::Background,
            text: analyzer.build(),
            by_mode: ModeAnalyzers::both(analyzer),
        };
        writer.delete_hidden()?;
        // An index an older build wrote, or whose last writer died before saving, gets its
        // saved vocabulary here (built from files the open has verified whole by now).
        writer.shared.save_vocabulary();
        Ok(writer)
    }

    /// Deletes from each satellite the records the catalog hides, and commits those it
    /// changed.
    fn delete_hidden(&mut self) -> Result<()> {
        let ord_field = self.fields.ord;
        for part in self.catalog.satellites() {
            let key = part.key().unwrap_or_default();
            let searcher = self.shared.part(&part)?.index.reader().map_err(lexical)?.searcher();
            let mut hidden = Vec::new();
            for segment in searcher.segment_readers() {
                let ords = segment.fast_fields().u64("ord").map_err(lexical)?;
                hidden.extend(
                    segment.doc_ids_alive().filter_map(|d| ords.first(d)).filter(|&o| self.catalog.hides(key, o)),
                );
            }
            if hidden.is_empty() {
                continue;
            }
            for ord in hidden {
                self.send(&part, UserOperation::Delete(Term::from_field_u64(ord_field, ord)))?;
            }
            self.commit_part(&part)?;
        }
        Ok(())
    }

    /// Sends `operation` to `part`'s writer (opened on first use): held back with the others
    /// of this commit while they are fewer than [`HELD_UP_TO`] (where the writers hold), at
    /// once after.
    fn send(&mut self, part: &Part, operation: UserOperation) -> Result<()> {
        let streams = !self.holds || self.held.get(part).is_some_and(|held| held.sent);
        let writer = self.writer_of(part)?;
        if streams {
            return writer.run([operation]).map(drop).map_err(lexical);
        }
        let held = self.held.entry(part.clone()).or_default();
        held.operations.push(operation);
        if held.operations.len() >= HELD_UP_TO {
            self.send_held(part)?;
            self.held.entry(part.clone()).or_default().sent = true;
        }
        Ok(())
    }

    /// Sends what `part`'s writer holds back, in order, as one group (when a commit begins);
    /// the next operations are held again.
    fn send_held(&mut self, part: &Part) -> Result<()> {
        let Some(held) = self.held.remove(part) else { return Ok(()) };
        if held.operations.is_empty() {
            return Ok(());
        }
        self.writer_of(part)?.run(held.operations).map(drop).map_err(lexical)
    }

    fn main(&mut self) -> Result<&mut IndexWriter> {
        self.main.as_mut().ok_or_else(|| Error::Lexical("the writer is closed".into()))
    }

    /// The writer of `part`, opened on first use (the pool created when the catalog names
    /// none yet).
    fn writer_of(&mut self, part: &Part) -> Result<&mut IndexWriter> {
        if *part == Part::Main {
            return self.main();
        }
        // A closed writer opens no satellite either.
        self.main()?;
        if !self.satellites.contains_key(part) {
            let index = if *part == Part::Pool && !self.catalog.pool {
                self.shared.create_pool()?.index
            } else {
                self.shared.part(part)?.index
            };
            let writer = self.shared.open_writer(&index, self.heap_bytes)?;
            writer.set_merge_policy(self.policy());
            self.satellites.insert(part.clone(), writer);
        }
        self.satellites.get_mut(part).ok_or_else(|| Error::Lexical(format!("no writer for {part:?}")))
    }

    /// Chooses when segments merge (see [`Merges`]); takes effect for merges not yet started.
    pub fn set_merges(&mut self, merges: Merges) -> Result<()> {
        self.merges = merges;
        let policy = self.policy();
        self.main()?.set_merge_policy(policy);
        for writer in self.satellites.values() {
            writer.set_merge_policy(self.policy());
        }
        Ok(())
    }

    fn policy(&self) -> Box<dyn tantivy::indexer::MergePolicy> {
        match self.merges {
            Merges::Background => {
                // tantivy's default counts every segment below 10,000 documents as one size, so
                // in a small index a commit's few records were merged into the largest segment
                // every eighth commit; from 1,000 documents up, segments merge with their peers.
                let mut policy = LogMergePolicy::default();
                policy.set_min_layer_size(MERGE_FLOOR_DOCS);
                Box::new(policy)
            }
            Merges::Deferred => Box::new(NoMergePolicy),
        }
    }

    /// The partition `record` belongs in.
    fn placement(&self, record: &Record) -> Part {
        match braid_core::sole_tenant(record.tenants()) {
            Some(t) if self.catalog.promoted.contains(t) => Part::Tenant(t.to_string()),
            Some(_) => Part::Pool,
            None => Part::Main,
        }
    }

    /// Removes every version of the record with id `id`: in the main partition by its id
    /// (with the main partition's commit); a committed one in a satellite by listing it as
    /// superseded (deleted after the commit point); one written since the last commit by its
    /// ordinal, in the satellite it went to (it was never committed).
    fn remove_versions(&mut self, id: &str) -> Result<()> {
        let id_term = Term::from_field_text(self.fields.id, id);
        self.send(&Part::Main, UserOperation::Delete(id_term))?;
        for (part, ord) in self.shared.snapshot().satellite_versions_of(id)? {
            if let Some(key) = part.key() {
                self.superseded.entry(key.to_string()).or_default().push(ord);
            }
        }
        if let Some((part, ord)) = self.pending.remove(id) {
            if part != Part::Main {
                let term = Term::from_field_u64(self.fields.ord, ord);
                self.send(&part, UserOperation::Delete(term))?;
                self.written.insert(part);
            }
        }
        Ok(())
    }

    /// Adds `record` under ordinal `ord`, replacing any record with the same id.
    ///
    /// # Errors
    /// [`Error::InvalidRecord`] for a bad record, [`Error::UnknownField`] for keyword or
    /// numeric fields the schema does not declare.
    /// `digest` is the record's content digest (see `braid::content_hash`), stored with it.
    pub fn upsert(&mut self, ord: Ordinal, record: &Record, digest: impl Into<ContentDigest>) -> Result<()> {
        let digest = digest.into();
        record.validate()?;
        let doc = self.document(ord, record, &digest)?;
        let part = self.placement(record);
        self.remove_versions(record.id())?;
        self.send(&part, UserOperation::Add(doc))?;
        if part == Part::Pool {
            self.pooled.extend(braid_core::sole_tenant(record.tenants()).map(str::to_string));
        }
        if part != Part::Main {
            self.written.insert(part.clone());
        }
        self.written_through = self.written_through.max(Some(ord));
        self.pending.insert(record.id().to_string(), (part, ord));
        Ok(())
    }

    /// Checks `record` as [`LexicalWriter::upsert`] would, and writes nothing: a batch checked
    /// whole before any of it is written goes in all or nothing.
    ///
    /// # Errors
    /// As [`LexicalWriter::upsert`]: [`Error::InvalidRecord`], [`Error::UnknownField`].
    pub fn check(&self, record: &Record) -> Result<()> {
        record.validate()?;
        for name in record.keywords.keys() {
            self.fields.keyword(name)?;
        }
        for name in record.numbers.keys() {
            self.fields.number(name)?;
        }
        Ok(())
    }

    /// Deletes the record with external id `id` (a no-op when there is none).
    ///
    /// # Errors
    /// [`Error::Lexical`] when the partition holding it cannot be written, or on a writer
    /// closed by a failed reopen.
    pub fn delete(&mut self, id: &str) -> Result<()> {
        self.remove_versions(id)
    }

    /// Makes every change since the last commit durable and visible to new snapshots,
    /// atomically across partitions (see the type's docs), then promotes the pooled tenants it
    /// wrote that reached the threshold.
    ///
    /// # Errors
    /// [`Error::Lexical`] when tantivy cannot commit (for example, the disk is full).
    pub fn commit(&mut self) -> Result<()> {
        let profiled = tracing::enabled!(target: "braid::commit", tracing::Level::DEBUG);
        let started = Instant::now();
        let mut phases: Vec<(&str, Duration)> = Vec::new();
        let mut last = started;
        let mut mark = |name: &'static str| {
            if profiled {
                let now = Instant::now();
                phases.push((name, now - last));
                last = now;
            }
        };
        let satellites = self.written.len();
        // Every partition's held group goes to its indexing threads first, so that they index
        // side by side while the partitions commit one after another.
        for part in self.held.keys().cloned().collect::<Vec<_>>() {
            self.send_held(&part)?;
        }
        self.commit_new_records()?;
        mark("satellites");
        self.commit_point()?;
        mark("main");
        self.delete_superseded()?;
        mark("superseded");
        self.shared.reload()?;
        mark("reload");
        for tenant in std::mem::take(&mut self.pooled) {
            if self.promotion_due(&tenant)? {
                self.promote(&tenant)?;
            }
        }
        mark("promotions");
        self.shared.save_vocabulary();
        mark("vocabulary");
        if profiled {
            let ms = |d: Duration| (d.as_secs_f64() * 1e5).round() / 100.0;
            let phases: Vec<String> = phases.iter().map(|(n, d)| format!("{n}={}", ms(*d))).collect();
            tracing::debug!(target: "braid::commit", satellites, total_ms = ms(started.elapsed()),
                phases = %phases.join(","), "lexical commit");
        }
        Ok(())
    }

    /// A commit's first step: the satellites' new records, which the catalog does not reach
    /// yet.
    pub(crate) fn commit_new_records(&mut self) -> Result<()> {
        for part in std::mem::take(&mut self.written) {
            self.commit_part(&part)?;
        }
        Ok(())
    }

    /// A commit's second step, its commit point: the main partition with the new catalog
    /// (naming the pool from the first commit that wrote it).
    pub(crate) fn commit_point(&mut self) -> Result<()> {
        let mut catalog = self.catalog.clone();
        catalog.pool |= self.satellites.contains_key(&Part::Pool);
        catalog.ords_through = catalog.ords_through.max(self.written_through.take());
        catalog.superseded = std::mem::take(&mut self.superseded);
        self.pending.clear();
        self.commit_main(catalog)
    }

    /// A commit's last step: what it superseded leaves the satellites.
    pub(crate) fn delete_superseded(&mut self) -> Result<()> {
        let ord_field = self.fields.ord;
        for (key, ords) in self.catalog.superseded.clone() {
            let part = Part::of_key(&key);
            for ord in ords {
                self.send(&part, UserOperation::Delete(Term::from_field_u64(ord_field, ord)))?;
            }
            self.commit_part(&part)?;
        }
        Ok(())
    }

    /// Commits satellite `part` and makes the commit durable.
    fn commit_part(&mut self, part: &Part) -> Result<()> {
        let started = Instant::now();
        self.send_held(part)?;
        self.writer_of(part)?.commit().map_err(lexical)?;
        let committed = started.elapsed();
        if let (Some(path), Some(name)) = (&self.shared.path, part.dir_name()) {
            let dir = path.join(name);
            sync_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        }
        tracing::debug!(target: "braid::commit", part = ?part,
            commit_ms = (committed.as_secs_f64() * 1e5).round() / 100.0,
            sync_ms = ((started.elapsed() - committed).as_secs_f64() * 1e5).round() / 100.0, "part commit");
        Ok(())
    }

    /// Commits the main partition with `catalog`, which becomes the writer's.
    fn commit_main(&mut self, catalog: Catalog) -> Result<()> {
        let payload = catalog.payload();
        self.send_held(&Part::Main)?;
        let mut prepared = self.main()?.prepare_commit().map_err(lexical)?;
        prepared.set_payload(&payload);
        prepared.commit().map_err(lexical)?;
        if let Some(path) = &self.shared.path {
            sync_dir(path).map_err(|e| Error::io(path, e))?;
        }
        self.catalog = catalog;
        Ok(())
    }

    /// Whether pooled `tenant` holds the records that promote it.
    fn promotion_due(&self, tenant: &str) -> Result<bool> {
        let at = self.shared.promote_at();
        let snapshot = self.shared.snapshot();
        // The postings' document frequency counts deleted records too: a bound, checked
        // first so that a small tenant costs a dictionary lookup per commit.
        if snapshot.pooled_tenant_bound(tenant)? < at as u64 {
            return Ok(false);
        }
        Ok(snapshot.pooled_records_of(tenant)?.iter().map(|(_, docs)| docs.len()).sum::<usize>() >= at)
    }

    /// Moves pooled `tenant`'s records to a partition of its own (see [`crate::promote`]): the
    /// main partition's commit that names the tenant deletes those it held and lists those of
    /// the pool as superseded; the pool deletes them after.
    fn promote(&mut self, tenant: &str) -> Result<()> {
        // Merges would change the segments under the copy: wait them out (the pool merges only
        // in a writer that has opened it).
        let pool = self.satellites.contains_key(&Part::Pool);
        self.settle_part(&Part::Main)?;
        if pool {
            self.settle_part(&Part::Pool)?;
        }
        self.shared.reload()?;
        let snapshot = self.shared.snapshot();
        let copied = crate::promote::copy_out(&self.shared, &snapshot, tenant)?;
        let id_field = self.fields.id;
        for id in &copied.main_ids {
            self.send(&Part::Main, UserOperation::Delete(Term::from_field_text(id_field, id)))?;
        }
        let mut catalog = self.catalog.clone();
        catalog.promoted.insert(tenant.to_string());
        catalog.superseded.clear();
        if !copied.pool_ords.is_empty() {
            catalog.superseded.insert(POOL_KEY.to_string(), copied.pool_ords);
        }
        self.commit_main(catalog)?;
        self.delete_superseded()?;
        self.resume_merges(&Part::Main)?;
        if pool {
            self.resume_merges(&Part::Pool)?;
        }
        self.shared.reload()
    }

    /// Closes the writer once its background merges have ended, so that their work lands.
    ///
    /// Dropping a writer abandons the merges it started: tantivy drops a merge that ends after
    /// its writer, so a service that opened a writer per commit and dropped it after merged
    /// almost nothing, and its segments piled up (each commit then costs more than the last).
    /// Changes not yet committed are discarded, as on drop; the writer writes nothing after
    /// (every later call reports [`Error::Lexical`]).
    ///
    /// # Errors
    /// [`Error::Lexical`] when a merge failed; the commits before it stand.
    pub fn close(&mut self) -> Result<()> {
        let writers = self.main.take().into_iter().chain(std::mem::take(&mut self.satellites).into_values());
        let mut failed = None;
        for writer in writers {
            if let Err(e) = writer.wait_merging_threads() {
                failed.get_or_insert(e);
            }
        }
        failed.map_or(Ok(()), |e| Err(lexical(e)))
    }

    /// Waits until no background merge of `part`'s writer runs (see [`settle`]); it merges
    /// nothing more until [`LexicalWriter::resume_merges`]. Returns the writer.
    fn settle_part(&mut self, part: &Part) -> Result<&mut IndexWriter> {
        self.writer_of(part)?.set_merge_policy(Box::new(NoMergePolicy));
        let settled = match part {
            Part::Main => settle(self.main.take(), self.heap_bytes)?,
            satellite => settle(self.satellites.remove(satellite), self.heap_bytes)?,
        };
        match part {
            Part::Main => self.main = Some(settled),
            satellite => {
                self.satellites.insert(satellite.clone(), settled);
            }
        }
        self.writer_of(part)
    }

    /// Gives `part`'s writer the merge policy of [`LexicalWriter::set_merges`] back.
    fn resume_merges(&mut self, part: &Part) -> Result<()> {
        let policy = self.policy();
        self.writer_of(part)?.set_merge_policy(policy);
        Ok(())
    }

    /// Promotes every pooled tenant that holds the records that promote it, then merges every
    /// committed segment of each partition into one and purges deleted records from disk (a
    /// "force merge"). A search then walks one postings list per term and
    /// partition instead of one per segment. Changes not yet committed are not part of the
    /// merge. Each merge swaps its segment in atomically: a crash leaves a partition as it was
    /// before or after, never between.
    ///
    /// tantivy's merge policy may be merging some of those segments in the background: a
    /// second merge over the same segments would find them gone when it ends ("the segments
    /// that were merged could not be found in the SegmentManager"). So this stops new
    /// background merges, waits for the running ones (tantivy waits only by closing its
    /// writer, so the writer is closed and reopened), merges once, and restores the policy.
    ///
    /// # Errors
    /// [`Error::Lexical`] when the merged segment cannot be written.
    pub fn merge_segments(&mut self) -> Result<()> {
        // An index written before partitions (or by a writer that promoted at a higher count)
        // gets its tenants' partitions here: `braid index` ends with this merge.
        for tenant in self.shared.snapshot().pooled_tenants()? {
            if self.promotion_due(&tenant)? {
                self.promote(&tenant)?;
            }
        }
        let parts: Vec<Part> = std::iter::once(Part::Main).chain(self.catalog.satellites()).collect();
        for part in parts {
            let settled = self.settle_part(&part)?;
            let segments = settled.index().searchable_segment_ids().map_err(lexical)?;
            let deletes = settled.index().searchable_segment_metas().map_err(lexical)?.iter().any(|m| m.has_deletes());
            if segments.len() > 1 || deletes {
                settled.merge(&segments).wait().map_err(lexical)?;
                settled.garbage_collect_files().wait().map_err(lexical)?;
            }
            self.resume_merges(&part)?;
        }
        self.shared.reload()?;
        self.shared.save_vocabulary();
        Ok(())
    }

    fn document(&self, ord: Ordinal, record: &Record, digest: &ContentDigest) -> Result<TantivyDocument> {
        let f = &self.fields;
        let mut doc = TantivyDocument::default();
        doc.add_text(f.id, record.id());
        doc.add_u64(f.ord, ord);
        match digest {
            ContentDigest::Sha256(bytes) => {
                for word in crate::stored::digest_words(bytes) {
                    doc.add_u64(f.hash, word);
                }
            }
            ContentDigest::Legacy(hash) => doc.add_u64(f.hash, *hash),
        }
        doc.add_text(f.body, record.body.as_str());
        let flat = format!("{} {}", record.title.as_str(), record.body.as_str());
        // A CJK record's language (its `lang`, else detected) says how its Han characters are
        // cut; the index's tokenizers would decide by script alone, so such records arrive
        // tokenized. Everything else takes the index's analyzers, as before.
        match HanMode::of(record.language()) {
            None => {
                doc.add_text(f.title, record.title.as_str());
                doc.add_text(f.text, &flat);
                doc.add_text(f.words, &flat);
            }
            Some(mode) => {
                let a = for_mode(&self.by_mode, mode);
                add_tokenized(&mut doc, f.title, &a.text, record.title.as_str());
                add_tokenized(&mut doc, f.text, &a.text, &flat);
                add_tokenized(&mut doc, f.words, &a.words, &flat);
            }
        }
        doc.add_text(f.grams, &flat);
        if let Some(head) = f.head {
            doc.add_text(head, head_terms(&self.text, &self.by_mode, &flat, HEAD_WORDS).join(" "));
        }
        let acl: Vec<&str> = record.acl.iter().map(|t| t.trim()).filter(|t| !t.is_empty()).collect();
        if acl.is_empty() {
            doc.add_text(f.acl, NO_ACL_TOKEN);
        }
        for token in &acl {
            doc.add_text(f.acl, token);
        }
        let mut tenants = record.tenants().peekable();
        if tenants.peek().is_none() {
            doc.add_text(f.tenant, NO_TENANT_TOKEN);
        }
        for t in tenants {
            doc.add_text(f.tenant, t);
        }
        if let Some(parent) = record.parent.as_deref() {
            doc.add_text(f.parent, parent);
        }
        let section = record.section.as_slice();
        for heading in section {
            doc.add_text(f.section, heading);
        }
        for depth in 1..=section.len() {
            doc.add_text(f.section_path, section_key(&section[..depth]));
        }
        if let Some((s, e)) = record.lines {
            doc.add_u64(f.lines, u64::from(s));
            doc.add_u64(f.lines, u64::from(e));
        }
        for (name, values) in &record.keywords {
            let field = f.keyword(name)?;
            for v in values {
                doc.add_text(field, v);
            }
        }
        for (name, value) in &record.numbers {
            doc.add_f64(f.number(name)?, *value);
        }
        Ok(doc)
    }
}

/// Waits until no background merge of `writer` runs, by closing it (tantivy waits for its
/// merging threads only then) and opening a new one with the same budget and no merge policy.
/// Everything up to the last commit is on disk; uncommitted changes would be lost, so this
/// runs only right after a commit.
fn settle(writer: Option<IndexWriter>, heap_bytes: usize) -> Result<IndexWriter> {
    let Some(writer) = writer else { return Err(Error::Lexical("the writer is closed".into())) };
    let index = writer.index().clone();
    writer.wait_merging_threads().map_err(lexical)?;
    let reopened = open_writer(&index, heap_bytes, REOPEN_PATIENCE).map_err(lexical)?;
    reopened.set_merge_policy(Box::new(NoMergePolicy));
    Ok(reopened)
}

/// Makes the entries of `dir` durable (tantivy renames `meta.json` without syncing its
/// directory).
pub(crate) fn sync_dir(dir: &std::path::Path) -> std::io::Result<()> {
    #[cfg(unix)]
    std::fs::File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

fn add_tokenized(doc: &mut TantivyDocument, field: Field, analyzer: &TextAnalyzer, text: &str) {
    doc.add_pre_tokenized_text(field, PreTokenizedString { text: text.to_string(), tokens: tokens(analyzer, text) });
}

/// How long opening tantivy's writer waits for a busy lock before calling it busy. The lock is
/// an `flock` on a file: a process forked while a writer of this process held it (a server or
/// a test harness spawning a tool) shares the open file until it runs its program, and holds
/// the lock so long, after the writer that took it is gone.
pub(crate) const LOCK_PATIENCE: Duration = Duration::from_millis(250);

/// How long reopening the writer this process just closed waits for its lock: the lock is
/// surely ours to take, so a busy one is a forked child still on its way to `exec`, which a
/// loaded machine may take longer to reach.
const REOPEN_PATIENCE: Duration = Duration::from_secs(2);

/// A new tantivy writer on `index`; a lock still busy is waited for, up to `patience`.
pub(crate) fn open_writer(
    index: &tantivy::Index,
    heap_bytes: usize,
    patience: Duration,
) -> tantivy::Result<IndexWriter> {
    let started = Instant::now();
    loop {
        match index.writer_with_num_threads(indexing_threads(heap_bytes), heap_bytes) {
            Err(tantivy::TantivyError::LockFailure(..)) if started.elapsed() < patience => {
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::directory::{Directory, INDEX_WRITER_LOCK};

    /// A writer lock still held when the writer opens (a forked process sharing the lock
    /// file) is waited for while it is released within the patience, and is busy after it.
    #[test]
    fn opening_waits_for_a_lock_released_soon_and_fails_on_one_kept() {
        let dir = tempfile::tempdir().unwrap();
        let index = tantivy::Index::create_in_dir(
            dir.path(),
            crate::schema::build_schema(&crate::schema::SchemaConfig::default()).0,
        )
        .unwrap();
        let held = index.directory().acquire_lock(&INDEX_WRITER_LOCK).unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            drop(held);
        });
        let started = Instant::now();
        let writer = open_writer(&index, 15_000_000, Duration::from_secs(5)).unwrap();
        assert!(started.elapsed() >= Duration::from_millis(100), "the lock was not waited for");
        release.join().unwrap();
        drop(writer);

        let _kept = index.directory().acquire_lock(&INDEX_WRITER_LOCK).unwrap();
        let busy = open_writer(&index, 15_000_000, Duration::from_millis(50));
        assert!(matches!(busy, Err(tantivy::TantivyError::LockFailure(..))));
    }

    /// A small commit is one segment of its partition, whichever of tantivy's indexing threads
    /// takes it, and its operations keep their order (a record written twice in it is the
    /// second version, one deleted after its upsert is gone); a commit past [`HELD_UP_TO`]
    /// operations loses none.
    #[test]
    fn a_small_commit_is_one_segment_and_keeps_its_order() {
        let dir = tempfile::tempdir().unwrap();
        let index = crate::LexicalIndex::create(Some(dir.path()), crate::SchemaConfig::default()).unwrap();
        let mut writer = index.writer(crate::DEFAULT_WRITER_HEAP).unwrap();
        writer.set_merges(crate::Merges::Deferred).unwrap();
        let main = index.shared.main.index.clone();
        let counts = || {
            let segments = main.searchable_segment_ids().unwrap().len();
            (segments, main.reader().unwrap().searcher().num_docs())
        };
        let upsert = |writer: &mut LexicalWriter, ord: u64, id: &str, body: &str| {
            writer.upsert(ord, &Record::new(id).body(body), 0_u64).unwrap();
        };
        // Commits of 15 records, 30 operations each (an upsert into the main partition is two:
        // the old version's delete, the add), each the segment after the last. Sent one by one,
        // tantivy's indexing threads (one a core, up to eight) often each took some.
        let per_commit = 15_u64;
        assert!(2 * per_commit < HELD_UP_TO as u64, "each commit fits one group");
        for c in 0..4_u64 {
            for i in 0..per_commit {
                upsert(&mut writer, c * 100 + i, &format!("r{c}-{i}"), "first");
            }
            writer.commit().unwrap();
            assert_eq!(counts(), (c as usize + 1, (c + 1) * per_commit));
        }
        upsert(&mut writer, 1000, "r0-0", "second");
        writer.delete("r0-1").unwrap();
        writer.commit().unwrap();
        assert_eq!(counts(), (5, 4 * per_commit - 1));
        let r0 = index.snapshot().record_by_id("r0-0").unwrap().expect("r0-0 is live");
        assert_eq!((r0.ord, r0.body.as_str()), (1000, "second"));
        assert!(index.snapshot().record_by_id("r0-1").unwrap().is_none());

        let many = 4 * HELD_UP_TO as u64;
        for i in 0..many {
            upsert(&mut writer, 2000 + i, &format!("s{i}"), "many");
        }
        writer.commit().unwrap();
        assert_eq!(counts().1, 4 * per_commit - 1 + many);
    }
}
