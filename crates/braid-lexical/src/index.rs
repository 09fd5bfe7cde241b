//! The lexical index: its partitions (tantivy indexes on disk or in memory, see
//! [`crate::partition`]), its single writer, the current [`Snapshot`] (one commit of every
//! partition) that searches run on, and the verification of its files ([`crate::verify`]).

use std::collections::{BTreeMap, HashSet};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use braid_core::{Error, Result};
use tantivy::{Index, IndexReader, ReloadPolicy, TantivyError};

use crate::analysis::{self, words_analyzer, GRAMS_TOKENIZER, TEXT_TOKENIZER, WORDS_TOKENIZER};
use crate::directory::PartitionDirectory;
use crate::error::lexical;
use crate::partition::{Catalog, Part};
use crate::saved_vocabulary::SavedVocabulary;
use crate::schema::{build_schema, fields_of, Fields, SchemaConfig};
use crate::segments::{PartCommit, Segments};
use crate::snapshot::Snapshot;
use crate::synonyms::{Synonyms, SynonymsHandle};
use crate::verify::{self, Verification, VerificationStatus, Verifier};
use crate::writer::{open_writer, sync_dir, LexicalWriter, HEAP_PER_THREAD_MIN, LOCK_PATIENCE};

/// Memory budget of the writer's indexing buffer. By default, 128 MiB.
pub const DEFAULT_WRITER_HEAP: usize = 128 * 1024 * 1024;
/// Decompressed document-store blocks kept per segment (16 KiB each, so at most 16 MiB per
/// segment, filled only by blocks hits were read from). Tantivy's default of 100 re-decompresses
/// most blocks of a corpus the size of SciFact on every search.
const DOC_STORE_CACHE_BLOCKS: usize = 1024;

/// An inverted index over records: BM25, fuzzy recall, suggestions and stored fields.
pub struct LexicalIndex {
    pub(crate) shared: Arc<Shared>,
}

/// One partition's tantivy index and its reader.
#[derive(Clone)]
pub(crate) struct PartIndex {
    pub index: Index,
    reader: IndexReader,
    /// The directory it was opened from (sharing its mappings), when this process opened it
    /// from disk rather than built it.
    directory: Option<PartitionDirectory>,
}

impl PartIndex {
    fn new(index: Index, config: &SchemaConfig) -> Result<Self> {
        Self::opened(index, None, config)
    }

    fn opened(index: Index, directory: Option<PartitionDirectory>, config: &SchemaConfig) -> Result<Self> {
        let tokenizers = index.tokenizers();
        tokenizers.register(TEXT_TOKENIZER, config.analyzer.build());
        tokenizers.register(WORDS_TOKENIZER, words_analyzer());
        tokenizers.register(GRAMS_TOKENIZER, analysis::grams_analyzer());
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .doc_store_cache_num_blocks(DOC_STORE_CACHE_BLOCKS)
            .try_into()
            .map_err(lexical)?;
        Ok(PartIndex { index, reader, directory })
    }
}

/// What the index and its writer share: the partitions, the current snapshot, and the
/// settings both read.
pub(crate) struct Shared {
    pub main: PartIndex,
    pub fields: Fields,
    pub config: SchemaConfig,
    /// The index's directory (`None` in memory).
    pub path: Option<PathBuf>,
    /// The pool and the promoted tenants' partitions opened so far (a commit of the main
    /// partition says which of them a snapshot reads).
    satellites: RwLock<BTreeMap<Part, PartIndex>>,
    /// The published snapshot (`None` only while the index opens).
    snapshot: RwLock<Option<Arc<Snapshot>>>,
    synonyms: SynonymsHandle,
    /// Records a pooled tenant holds when the writer promotes it.
    promote_at: AtomicUsize,
    /// Held while a snapshot is built, so two reloads never race to publish; it holds the
    /// snapshots replaced while searches still held them (see [`Shared::reload`]).
    reloading: Mutex<Vec<Arc<Snapshot>>>,
    /// The files of the commit opened, read whole in the background ([`crate::verify`]).
    verifier: Verifier,
    /// The large segments' vocabulary saved in the directory (`None` in memory).
    pub(crate) saved_vocabulary: Option<SavedVocabulary>,
}

impl LexicalIndex {
    /// Creates an index in the empty directory `dir`, or in memory when `dir` is `None`.
    ///
    /// # Errors
    /// [`Error::Io`] when the directory cannot be used, [`Error::Lexical`] when it already
    /// holds an index.
    pub fn create(dir: Option<&Path>, config: SchemaConfig) -> Result<Self> {
        config.validate()?;
        let (schema, fields) = build_schema(&config);
        let index = match dir {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
                let directory = PartitionDirectory::open(dir).map_err(lexical)?;
                Index::create(directory, schema, store_settings()).map_err(lexical)?
            }
            None => Index::create_in_ram(schema),
        };
        let main = PartIndex::new(index, &config)?;
        Self::from_main(main, fields, config, dir.map(Path::to_path_buf), Verifier::new(Verification::Blocking))
    }

    /// Opens the index in `dir`, written with `config`, its files verified as
    /// [`Verification::default`] says: each checked cheaply and the small ones read whole
    /// before tantivy parses any (tantivy can panic on a damaged file), the others read whole
    /// by a background thread afterwards (see [`LexicalIndex::open_with`]).
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the missing or damaged file.
    pub fn open(dir: &Path, config: SchemaConfig) -> Result<Self> {
        Self::open_with(dir, config, Verification::default())
    }

    /// Opens the index in `dir`, written with `config`, its files verified as `verification`
    /// says. With [`Verification::Background`], what a search reads before the background
    /// thread has read a file is not known to be intact: a damaged byte there may give a wrong
    /// answer, an error or a panic inside tantivy; [`LexicalIndex::read_verified`] turns the
    /// last two into [`Error::Corrupt`] naming the file. Once the thread finds a damaged file,
    /// [`LexicalIndex::read_verified`] and [`LexicalIndex::writer`] fail naming it.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the missing or damaged file: any file without an intact
    /// footer, a file read whole at the open that does not match its checksum, and — when the
    /// open itself fails or panics on a damaged file — the file the verification finds.
    pub fn open_with(dir: &Path, config: SchemaConfig, verification: Verification) -> Result<Self> {
        let index = Self::open_unstarted(dir, config, verification)?;
        index.start_verification();
        Ok(index)
    }

    /// [`LexicalIndex::open_with`], but the background thread starts reading only at
    /// [`LexicalIndex::start_verification`]: an open that reads other files before it returns
    /// (the vector store) keeps the disk and the cores for them meanwhile. Until then a search
    /// or writer reads what it waits for on its own thread, as it would once the thread runs.
    ///
    /// # Errors
    /// As [`LexicalIndex::open_with`].
    pub fn open_unstarted(dir: &Path, config: SchemaConfig, verification: Verification) -> Result<Self> {
        Self::open_verified(dir, config, Verifier::new(verification))
    }

    /// Lets the background verification of an index opened with
    /// [`LexicalIndex::open_unstarted`] start (nothing when it runs or has ended).
    pub fn start_verification(&self) {
        self.shared.verifier.start();
    }

    /// Opens the commit now in `dir` of the index `previous` has open there (a reload): the
    /// files `previous` has read whole against their checksums are taken as verified (files
    /// never change once written), and every other file is read whole before this returns, so
    /// that a reload costs a read of what changed, and a damaged new commit fails here while
    /// `previous` goes on serving.
    ///
    /// # Errors
    /// As [`LexicalIndex::open_with`] with [`Verification::Blocking`].
    pub fn open_after(dir: &Path, config: SchemaConfig, previous: &LexicalIndex) -> Result<Self> {
        let index = Self::open_verified(dir, config, Verifier::after(&previous.shared.verifier))?;
        index.start_verification();
        Ok(index)
    }

    fn open_verified(dir: &Path, config: SchemaConfig, verifier: Verifier) -> Result<Self> {
        let (index, directory) = open_part(dir, &verifier)?;
        let fields = fields_of(&index.schema(), &config)?;
        let opened = catch_unwind(AssertUnwindSafe(|| {
            let main = PartIndex::opened(index, Some(directory), &config)?;
            Self::from_main(main, fields, config, Some(dir.to_path_buf()), verifier.clone())
        }));
        match opened {
            Ok(Ok(index)) => Ok(index),
            // A file not yet read whole may be the cause: read them all now, and name it.
            Ok(Err(e)) => {
                verifier.wait()?;
                Err(match e {
                    Error::Lexical(reason) => Error::Corrupt { path: dir.join("meta.json"), reason },
                    Error::LexicalEngine { source } => {
                        Error::Corrupt { path: dir.join("meta.json"), reason: source.to_string() }
                    }
                    other => other,
                })
            }
            Err(panic) => {
                verifier.wait()?;
                resume_unwind(panic)
            }
        }
    }

    fn from_main(
        main: PartIndex,
        fields: Fields,
        config: SchemaConfig,
        path: Option<PathBuf>,
        verifier: Verifier,
    ) -> Result<Self> {
        let synonyms = SynonymsHandle::default();
        let shared = Arc::new(Shared {
            main,
            fields,
            config,
            saved_vocabulary: path.as_deref().map(SavedVocabulary::new),
            path,
            satellites: RwLock::new(BTreeMap::new()),
            snapshot: RwLock::new(None),
            synonyms,
            promote_at: AtomicUsize::new(braid_core::PROMOTE_AT),
            reloading: Mutex::new(Vec::new()),
            verifier,
        });
        shared.reload()?;
        Ok(LexicalIndex { shared })
    }

    /// How far the verification of the opened commit's files has come (see
    /// [`LexicalIndex::open_with`]); an index created here, or in memory, has nothing to verify.
    pub fn verification(&self) -> VerificationStatus {
        self.shared.verifier.status()
    }

    /// Reads whole every file of the opened commit not read yet, alongside the background
    /// thread, and returns once all are: what a test or an operator waits on.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the damaged file, when there is one.
    pub fn wait_for_verification(&self) -> Result<()> {
        self.shared.verifier.wait()
    }

    /// Runs `read`, a read of this index, unless its verification found a damaged file: then
    /// that is the error. When `read` fails inside the lexical engine ([`Error::Lexical`],
    /// [`Error::LexicalEngine`], [`Error::Io`]) or panics while files are still unverified, the
    /// verification is finished on this thread first, and a damaged file it finds is the error
    /// instead (a panic with every file intact goes on unwinding); other errors (a bad
    /// request, a deadline) return at once.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the damaged file; else `read`'s own error.
    pub fn read_verified<T>(&self, read: impl FnOnce() -> Result<T>) -> Result<T> {
        let verifier = &self.shared.verifier;
        verifier.damage()?;
        match catch_unwind(AssertUnwindSafe(read)) {
            Ok(Ok(out)) => Ok(out),
            // A bad request, a deadline, a model's failure: not what a damaged file causes.
            Ok(Err(e)) if !matches!(e, Error::Lexical(_) | Error::LexicalEngine { .. } | Error::Io { .. }) => Err(e),
            Ok(Err(e)) => {
                verifier.wait()?;
                Err(e)
            }
            Err(panic) => {
                verifier.wait()?;
                resume_unwind(panic)
            }
        }
    }

    /// The schema configuration.
    pub fn config(&self) -> &SchemaConfig {
        &self.shared.config
    }

    /// Whether records are written with the analysed first words lexical feedback reads
    /// (indexes written before 2026-12-03 are not: their feedback analyses the stored text,
    /// with the same result and more work a query).
    pub fn stores_feedback_heads(&self) -> bool {
        self.shared.fields.head.is_some()
    }

    /// Promotes a pooled tenant to a partition of its own once it holds `records` records (by
    /// default [`braid_core::PROMOTE_AT`]); the writer checks at each commit.
    pub fn set_promote_at(&self, records: usize) {
        self.shared.promote_at.store(records.max(1), Ordering::Relaxed);
    }

    /// The promoted tenants, by token: those whose records a partition of their own holds.
    pub fn promoted_tenants(&self) -> Vec<String> {
        self.snapshot().promoted_tenants()
    }

    /// Opens the single writer, with an indexing buffer of `heap_bytes`. A writer merges
    /// segments, and a merge writes a new checksum over whatever it reads: so it first waits
    /// until the verification of the opened commit has read every file, and reads whole the
    /// files of any later commit on disk (another process's) before it returns.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming a damaged file of the commit opened or of the latest one;
    /// [`Error::LockBusy`] when another writer (thread or process) holds the index, after
    /// waiting a quarter of a second for it (a forked process may still share a lock that a
    /// writer of this process released).
    pub fn writer(&self, heap_bytes: usize) -> Result<LexicalWriter> {
        let heap_bytes = heap_bytes.max(HEAP_PER_THREAD_MIN);
        self.shared.verifier.wait()?;
        let writer = self.shared.open_writer(&self.shared.main.index, heap_bytes)?;
        self.shared.verify_latest()?;
        LexicalWriter::new(self.shared.clone(), writer, heap_bytes)
    }

    /// Picks up the latest commit: later calls to [`LexicalIndex::snapshot`] see it.
    ///
    /// # Errors
    /// [`Error::Lexical`] when the new commit cannot be read.
    pub fn reload(&self) -> Result<()> {
        self.shared.reload()
    }

    /// Replaces the synonym set queries are expanded with (see [`Synonyms`]); requests that
    /// start after the call use it, on every snapshot. Records are untouched: no re-index.
    pub fn set_synonyms(&self, synonyms: Synonyms) {
        self.shared.synonyms.set(synonyms, &self.shared.config.analyzer.build());
    }

    /// The synonym set in use (empty by default).
    pub fn synonyms(&self) -> Arc<Synonyms> {
        self.shared.synonyms.synonyms()
    }

    /// The current snapshot. Searching it never blocks on writing.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.shared.snapshot()
    }
}

impl Drop for LexicalIndex {
    /// The files not read yet are left: nothing reads this index any more.
    fn drop(&mut self) {
        self.shared.verifier.close();
    }
}

impl Shared {
    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        let published = self.snapshot.read().unwrap_or_else(|p| p.into_inner()).clone();
        published.expect("an index publishes its first snapshot before it is returned")
    }

    /// The promotion threshold.
    pub fn promote_at(&self) -> usize {
        self.promote_at.load(Ordering::Relaxed)
    }

    /// A new tantivy writer on `index`, a partition of this one; files a writer killed
    /// mid-commit left behind are removed first.
    pub fn open_writer(&self, index: &Index, heap_bytes: usize) -> Result<tantivy::IndexWriter> {
        let writer = open_writer(index, heap_bytes, LOCK_PATIENCE).map_err(|e| match e {
            TantivyError::LockFailure(..) => {
                Error::LockBusy { path: self.path.clone().unwrap_or_else(|| PathBuf::from("<memory>")) }
            }
            other => lexical(other),
        })?;
        // A writer killed mid-commit leaves files no commit references (for example a
        // `<segment>.<opstamp>.del` that this writer would create again under the same name and
        // fail on): remove them before writing anything.
        writer.garbage_collect_files().wait().map_err(lexical)?;
        Ok(writer)
    }

    /// Partition `part` (the pool or a promoted tenant's), opened from its directory if this
    /// process has not opened it yet.
    pub fn part(&self, part: &Part) -> Result<PartIndex> {
        if let Some(opened) = self.satellites.read().unwrap_or_else(|p| p.into_inner()).get(part) {
            return Ok(opened.clone());
        }
        let (Some(path), Some(name)) = (&self.path, part.dir_name()) else {
            return Err(Error::Lexical(format!("the in-memory partition {part:?} is missing")));
        };
        let (index, directory) = open_part(&path.join(name), &self.verifier)?;
        let opened = PartIndex::opened(index, Some(directory), &self.config)?;
        self.verifier.resume();
        Ok(self.satellites.write().unwrap_or_else(|p| p.into_inner()).entry(part.clone()).or_insert(opened).clone())
    }

    /// Reads whole every file of the latest commit on disk of every partition that this index
    /// has not checked (a commit another process wrote after this index opened), then forgets
    /// every other file: what a writer's open does, under the writer's lock, once the opened
    /// commit's verification has ended. In memory there is nothing to read.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the first damaged file.
    fn verify_latest(&self) -> Result<()> {
        let Some(path) = &self.path else { return Ok(()) };
        let metas = self.main.index.load_metas().map_err(lexical)?;
        let catalog = Catalog::read(metas.payload.as_deref())?;
        let mut parts = vec![(path.clone(), self.main.clone(), metas.segments)];
        for part in catalog.satellites() {
            let Some(name) = part.dir_name() else { continue };
            let opened = self.part(&part)?;
            let segments = opened.index.load_metas().map_err(lexical)?.segments;
            parts.push((path.join(name), opened, segments));
        }
        // A partition this index had not opened was just checked and queued by `part`.
        self.verifier.wait()?;
        let mut latest = HashSet::new();
        for (dir, part, segments) in &parts {
            verify::verify_now(part.directory.as_ref(), &self.verifier.unknown(dir, segments))?;
            latest.extend(verify::commit_files(dir, segments));
        }
        self.verifier.keep_only(latest);
        Ok(())
    }

    /// Makes `index`, just built for `part`, the partition a snapshot reads once a commit of
    /// the main partition names it.
    pub fn add_part(&self, part: Part, index: Index) -> Result<()> {
        let opened = PartIndex::new(index, &self.config)?;
        self.satellites.write().unwrap_or_else(|p| p.into_inner()).insert(part, opened);
        Ok(())
    }

    /// The directory of partition `part`, emptied (a directory no commit names: one a crash
    /// left half-built), or `None` in memory.
    pub fn fresh_dir(&self, part: &Part) -> Result<Option<PathBuf>> {
        let (Some(path), Some(name)) = (&self.path, part.dir_name()) else { return Ok(None) };
        let dir = path.join(name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        }
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        Ok(Some(dir))
    }

    /// Creates the pool, empty, for a writer whose catalog does not name one yet; a snapshot
    /// reads it once a commit of the main partition names it.
    pub fn create_pool(&self) -> Result<PartIndex> {
        let (schema, settings) = (self.main.index.schema(), self.main.index.settings().clone());
        let index = match self.fresh_dir(&Part::Pool)? {
            Some(dir) => {
                let directory = PartitionDirectory::open(&dir).map_err(lexical)?;
                let index = Index::create(directory, schema, settings).map_err(lexical)?;
                if let Some(path) = &self.path {
                    sync_dir(path).map_err(|e| Error::io(path, e))?;
                }
                index
            }
            None => Index::builder().schema(schema).settings(settings).create_in_ram().map_err(lexical)?,
        };
        self.add_part(Part::Pool, index)?;
        self.part(&Part::Pool)
    }

    /// Builds the snapshot of the latest commit of every partition the main partition's latest
    /// commit names, and publishes it.
    pub fn reload(&self) -> Result<()> {
        let mut retired = self.reloading.lock().unwrap_or_else(|p| p.into_inner());
        let started = std::time::Instant::now();
        // Snapshots replaced earlier that no search holds any more are released here, on the
        // writer's thread: nothing can take them again once replaced.
        retired.retain(|s| Arc::strong_count(s) > 1);
        let main = latest_commit(&self.main, Part::Main)?;
        let catalog = Catalog::read(main.payload.as_deref())?;
        let mut parts = vec![main];
        for part in catalog.satellites() {
            parts.push(latest_commit(&self.part(&part)?, part)?);
        }
        let previous = self.snapshot.read().unwrap_or_else(|p| p.into_inner()).clone();
        if previous.as_ref().is_some_and(|p| p.segments.same_commits(&parts, &catalog)) {
            return Ok(());
        }
        let read = started.elapsed();
        let segments = Segments::new(parts, catalog, &self.fields, previous.as_deref().map(|p| &p.segments))?;
        let segmented = started.elapsed();
        let snapshot = Snapshot::new(
            segments,
            self.fields.clone(),
            self.config.clone(),
            self.synonyms.clone(),
            previous.as_deref(),
            self.saved_vocabulary.as_ref(),
        )?;
        let replaced = self.snapshot.write().unwrap_or_else(|p| p.into_inner()).replace(Arc::new(snapshot));
        // Releasing a snapshot frees its vocabulary and readers, tens of milliseconds at a
        // million records: a search that held the replaced one would pay that on its way out.
        // It is kept until a later reload finds no search holding it.
        drop(previous);
        if let Some(replaced) = replaced.filter(|s| Arc::strong_count(s) > 1) {
            retired.push(replaced);
        }
        let ms = |d: std::time::Duration| (d.as_secs_f64() * 1e5).round() / 100.0;
        tracing::debug!(target: "braid::commit", read_ms = ms(read), segments_ms = ms(segmented - read),
            snapshot_ms = ms(started.elapsed() - segmented), "reload");
        Ok(())
    }

    /// Saves the current snapshot's large-segment vocabulary unless the file holds it already
    /// ([`crate::saved_vocabulary`]); only the writer calls this, under the writer's lock. The
    /// file is a cache an open checks, so a failure to write it fails nothing: it is logged,
    /// and opens build the vocabulary as they did before.
    pub fn save_vocabulary(&self) {
        let Some(saved) = &self.saved_vocabulary else { return };
        let snapshot = self.snapshot();
        let Some(tier) = snapshot.large_tier() else { return };
        if let Err(e) = saved.save(&tier.ids, &tier.vocabulary) {
            tracing::warn!(target: "braid::lexical", error = %e, "the vocabulary could not be saved; opens will build it");
        }
    }
}

/// The latest commit of partition `part`: its searcher with the metadata it was opened from.
/// A writer in another process may commit between reading the one and the other: they are read
/// again until the searcher is the commit the metadata describes.
fn latest_commit(index: &PartIndex, part: Part) -> Result<PartCommit> {
    loop {
        let metas = index.index.load_metas().map_err(lexical)?;
        index.reader.reload().map_err(lexical)?;
        let searcher = index.reader.searcher();
        let mut read: Vec<_> =
            searcher.segment_readers().iter().map(|s| (s.segment_id(), s.num_deleted_docs())).collect();
        let mut committed: Vec<_> = metas.segments.iter().map(|m| (m.id(), m.num_deleted_docs())).collect();
        read.sort_unstable();
        committed.sort_unstable();
        if read == committed {
            return Ok(PartCommit {
                part,
                index: index.index.clone(),
                searcher,
                metas: metas.segments,
                payload: metas.payload,
            });
        }
    }
}

/// Opens the tantivy index of one partition in `dir`, with the directory it reads through; the
/// files of its commit are checked by `verifier` first (see [`crate::verify`]): each one's
/// footer, and the small ones (or all, as its mode says) read whole.
fn open_part(dir: &Path, verifier: &Verifier) -> Result<(Index, PartitionDirectory)> {
    if !dir.join("meta.json").is_file() {
        return Err(Error::Corrupt { path: dir.join("meta.json"), reason: "missing".into() });
    }
    let directory = PartitionDirectory::open(dir).map_err(|e| corrupt(dir, e.into()))?;
    let index = Index::open(directory.clone()).map_err(|e| corrupt(dir, e))?;
    let metas = index.searchable_segment_metas().map_err(|e| corrupt(dir, e))?;
    verifier.cover(dir, &directory, &metas)?;
    Ok((index, directory))
}

/// A tantivy error met while opening the index in `dir`, as [`Error::Corrupt`] naming the
/// file it concerns (`meta.json` when tantivy does not say).
fn corrupt(dir: &Path, e: TantivyError) -> Error {
    use tantivy::directory::error::OpenReadError;
    let file = match &e {
        TantivyError::OpenReadError(OpenReadError::FileDoesNotExist(p)) => Some(p.clone()),
        TantivyError::OpenReadError(OpenReadError::IoError { filepath, .. }) => Some(filepath.clone()),
        // `DataCorruption` keeps its file private; its message reads "(in file `"<name>"`)".
        TantivyError::DataCorruption(c) => {
            let text = format!("{c:?}");
            text.split_once("in file `\"").and_then(|(_, rest)| rest.split_once("\"`")).map(|(f, _)| PathBuf::from(f))
        }
        _ => None,
    };
    Error::Corrupt { path: dir.join(file.unwrap_or_else(|| PathBuf::from("meta.json"))), reason: e.to_string() }
}

/// How a new index stores its documents: zstd at level 9 in tantivy's 16 KiB blocks instead of
/// its default lz4. On the 10,000-record scale corpus (`scripts/scale.sh`) the document store
/// shrinks from 0.76 of the raw text to 0.53 (level 3) or 0.52 (level 9, at the same indexing
/// time), the whole lexical index from 1.73 to 1.49 times the raw text. Decompression is the
/// same at every level. Indexes created before keep the compressor their settings name.
pub(crate) fn store_settings() -> tantivy::IndexSettings {
    tantivy::IndexSettings {
        docstore_compression: tantivy::store::Compressor::Zstd(tantivy::store::ZstdCompressor {
            compression_level: Some(9),
        }),
        ..tantivy::IndexSettings::default()
    }
}
