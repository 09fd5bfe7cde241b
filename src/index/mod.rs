//! An index: its parts on disk or in memory, the models it was built with, and reloading.
//!
//! [`Index`] owns what lives as long as the handle: the directory's [`Layout`], the models given
//! to its [`IndexBuilder`], the ordinal counter and the current [`Parts`] — one opened commit
//! of the lexical index and the vector store. [`Index::searcher`] takes one snapshot of them;
//! [`Index::reload`] swaps in a newer commit another process wrote.

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use braid_core::{
    AccessPolicy, Embedder, Error, OrdSet, Passages, Principal, Reranker, Result, SearchRequest, SearchResponse,
};
use braid_lexical::{LexicalIndex, SchemaConfig, Synonyms};
use braid_vector::{Quantization, VectorStore};
use serde::{Deserialize, Serialize};

use crate::layout::Layout;
use crate::manifest::{self, Manifest, FORMAT_VERSION};
use crate::searcher::Searcher;
use crate::semantic::{EmbeddingInfo, Semantic};
use crate::stored::StoredRecord;
use crate::writer::{Ordinals, Writer, WriterOptions};

/// How an index is built; fixed at creation and stored with the index.
///
/// By default: [`SchemaConfig::default`], [`AccessPolicy::Public`] for records without ACL,
/// What [`Index::check`] found in an intact index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckReport {
    /// Live records.
    pub records: u64,
    /// Vectors of records no commit holds (a writer stopped between the vector file and the
    /// lexical commit): dropped the next time the index opens for writing.
    pub orphan_vectors: usize,
    /// Whether records store the analysed first words lexical feedback reads. Indexes written
    /// before 2026-12-03 do not: their feedback analyses the stored text again on every hybrid
    /// search (the same results, more work); indexing the corpus into a new directory
    /// stores them.
    pub feedback_heads: bool,
}

/// f32 vectors ([`Quantization::F32`]) and long records embedded as passages
/// ([`Passages::DEFAULT`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexConfig {
    /// Analyzer, boosts, keyword and numeric fields.
    pub schema: SchemaConfig,
    /// Visibility of records that carry no ACL tokens.
    pub policy: AccessPolicy,
    /// How the vector store, once the index has one, holds its vectors (the store records it
    /// too, so a store keeps the setting it was created with).
    #[serde(default)]
    pub quantization: Quantization,
    /// How long records are cut into passages for the embedder, one vector each (`None`: one
    /// vector a record, as indexes made before passages existed have). Only records the
    /// embedder embeds have passages; supplied vectors are one a record.
    #[serde(default)]
    pub passages: Option<Passages>,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            schema: SchemaConfig::default(),
            policy: AccessPolicy::default(),
            quantization: Quantization::default(),
            passages: Some(Passages::DEFAULT),
        }
    }
}

impl IndexConfig {
    /// Checks the parts a caller sets by hand (today the passage windows).
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] naming the bad setting.
    pub fn validate(&self) -> Result<()> {
        self.passages.as_ref().map_or(Ok(()), Passages::validate)
    }
}

/// A Braid index. Cheap to clone; every clone sees the same data.
///
/// Build one with [`Index::builder`] (models are given up front and kept for the index's
/// life), or with the shorthands [`Index::create`], [`Index::open`] and
/// [`Index::create_in_ram`] for an index without models. Searches run on the latest committed
/// snapshot and never block on writing; there is one writer at a time (see [`Index::writer`]).
#[derive(Clone)]
pub struct Index {
    shared: Arc<Shared>,
}

/// What an [`Index`] keeps for its whole life.
struct Shared {
    /// Where it lives; `None` in memory.
    layout: Option<Layout>,
    config: IndexConfig,
    models: Models,
    ordinals: Ordinals,
    /// The commit served: replaced by [`Index::reload`], never while a writer is open.
    current: RwLock<Arc<Parts>>,
    /// Whether this handle has a writer open (held while a reload decides to swap, so that a
    /// writer never writes to parts that are no longer served).
    writing: Mutex<bool>,
}

/// The models an index was built with.
#[derive(Clone, Default)]
struct Models {
    embedder: Option<Arc<dyn Embedder>>,
    reranker: Option<Arc<dyn Reranker>>,
    /// Vectors without a model (records and queries supply them), named or as recorded.
    vectors: Option<Option<EmbeddingInfo>>,
    /// The graph's search width asked for ([`IndexBuilder::ef_search`]); `None`: the default.
    ef_search: Option<usize>,
}

/// One opened commit: the lexical index and, once there are vectors, the semantic leg.
pub(crate) struct Parts {
    pub lexical: LexicalIndex,
    /// Set once: at open or create when the index has (or is built for) vectors, else by the
    /// writer when it meets the first record with a vector. Never replaced.
    pub semantic: OnceLock<Arc<Semantic>>,
    /// The model recorded in the manifest (the vectors on disk were made with it).
    pub embedding: Mutex<Option<EmbeddingInfo>>,
    /// The commit point these parts were opened at (`None` in memory).
    pub commit_point: Mutex<Option<Vec<u8>>>,
}

/// Builds an [`Index`] with its models: an embedder (the semantic leg embeds records and
/// queries), vectors without a model (records and queries bring their own), a cross-encoder
/// for the rerank stage.
///
/// ```
/// # use braid::{EmbeddingInfo, Index, Mode, Principal, Record, SearchRequest};
/// # fn main() -> braid::Result<()> {
/// let index = Index::builder().vectors(EmbeddingInfo { model_id: "my-model".into(), dim: 2 }).create_in_ram()?;
/// let mut w = index.writer()?;
/// w.upsert(&Record::new("north").body("up").vector(vec![0.0, 1.0]))?;
/// w.upsert(&Record::new("east").body("right").vector(vec![1.0, 0.0]))?;
/// w.commit()?;
/// let request = SearchRequest::new("", Principal::public()).vector(vec![0.9, 0.1]).mode(Mode::Semantic);
/// assert_eq!(index.search(&request)?.hits[0].id, "east");
/// # Ok(()) }
/// ```
#[derive(Clone, Default)]
#[must_use]
pub struct IndexBuilder {
    config: IndexConfig,
    models: Models,
}

impl IndexBuilder {
    /// The configuration of a new index (ignored by [`IndexBuilder::open`], which reads the
    /// stored one).
    pub fn config(mut self, config: IndexConfig) -> Self {
        self.config = config;
        self
    }

    /// The embedding model: the writer embeds records with it and searches embed queries.
    /// An index that already holds vectors must have been made with the same model.
    pub fn embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.models.embedder = Some(embedder);
        self
    }

    /// The semantic leg without a model, on vectors of the model `info` names (any name the
    /// caller uses for it): records carry their own vectors ([`braid_core::Record::vector`])
    /// and requests their query vector ([`SearchRequest::vector`]). An index that already
    /// holds vectors must have been made with the same model.
    pub fn vectors(mut self, info: EmbeddingInfo) -> Self {
        self.models.vectors = Some(Some(info));
        self
    }

    /// As [`IndexBuilder::vectors`], with whatever model the index records: its stored vectors
    /// are loaded (none yet: the writer starts a store with the first record that has one).
    pub fn stored_vectors(mut self) -> Self {
        self.models.vectors = Some(None);
        self
    }

    /// The cross-encoder of the rerank stage: searches then rescore their top fused
    /// candidates with it (see [`SearchRequest::rerank`]).
    pub fn reranker(mut self, reranker: Arc<dyn Reranker>) -> Self {
        self.models.reranker = Some(reranker);
        self
    }

    /// The width of the candidate list the vector leg's HNSW graph is searched with
    /// ([`braid_vector::HnswParams::ef_search`], by default 1,600): wider finds more of the
    /// exact top k and costs more per search. It matters only for large collections: a
    /// principal who may see fewer than 150,000 records is always answered by an exact scan.
    /// The same for every caller of this handle; not saved with the index (an index opened
    /// without it searches at the default, whatever width another handle used).
    ///
    /// Measured on 1,000,000 int8 vectors with everything visible (docs/scale.md): recall@10
    /// against the exact f32 top 10 is 0.9455 at 1,200 and 0.955 at 1,600, at 6.9 and 9.4 ms
    /// for the graph alone.
    pub fn ef_search(mut self, width: usize) -> Self {
        self.models.ef_search = Some(width);
        self
    }

    /// Checks the settings every way of making an index shares.
    fn check(&self) -> Result<()> {
        if self.models.ef_search == Some(0) {
            return Err(Error::invalid_request("ef_search must be at least 1"));
        }
        Ok(())
    }

    /// Creates a new index in `dir` (created if needed; it must not hold an index already).
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] when `dir` already holds an index or a setting is invalid,
    /// [`Error::Io`] when it cannot be written.
    pub fn create(self, dir: &Path) -> Result<Index> {
        self.check()?;
        self.config.validate()?;
        let layout = Layout::new(dir);
        if layout.holds_index() {
            return Err(Error::invalid_request(format!("{} already holds an index", dir.display())));
        }
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        clear_interrupted_create(&layout.lexical())?;
        let lexical = LexicalIndex::create(Some(&layout.lexical()), self.config.schema.clone())?;
        let semantic = self.models.new_semantic(&lexical, self.config.quantization)?;
        let manifest = Manifest { format: FORMAT_VERSION, config: self.config.clone(), next_ord: 0, embedding: None };
        manifest.write(&layout)?;
        let parts = Parts::new(lexical, semantic, None, layout.commit_point());
        Ok(Index::assemble(Some(layout), self.config, self.models, parts, 0))
    }

    /// Creates an index held in memory only.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] for a bad configuration or setting.
    pub fn create_in_ram(self) -> Result<Index> {
        self.check()?;
        self.config.validate()?;
        let lexical = LexicalIndex::create(None, self.config.schema.clone())?;
        let semantic = self.models.new_semantic(&lexical, self.config.quantization)?;
        let parts = Parts::new(lexical, semantic, None, None);
        Ok(Index::assemble(None, self.config, self.models, parts, 0))
    }

    /// Opens the index in `dir`. Every file of the lexical index is checked against its
    /// checksum first (one read of the index), so a damaged file is an error, never a panic;
    /// the vector store is loaded when the builder asks for the semantic leg.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the file when the index is missing or damaged,
    /// [`Error::FormatVersion`] when another version of Braid wrote it,
    /// [`Error::InvalidRequest`] when its vectors were made by another model than the one given
    /// or a setting is invalid.
    pub fn open(self, dir: &Path) -> Result<Index> {
        self.check()?;
        let layout = Layout::new(dir);
        let point = layout.commit_point();
        let (manifest, parts, next_ord) = Parts::open(&layout, &self.models, point)?;
        Ok(Index::assemble(Some(layout), manifest.config, self.models, parts, next_ord))
    }

    /// Opens the index in `dir`, or creates it when there is none.
    ///
    /// # Errors
    /// As [`IndexBuilder::open`] and [`IndexBuilder::create`].
    pub fn open_or_create(self, dir: &Path) -> Result<Index> {
        if Layout::new(dir).holds_index() {
            self.open(dir)
        } else {
            self.create(dir)
        }
    }
}

impl Models {
    /// The model's name and dimension, when the builder named one.
    fn info(&self) -> Option<EmbeddingInfo> {
        match (&self.embedder, &self.vectors) {
            (Some(e), _) => Some(EmbeddingInfo { model_id: e.model_id().to_string(), dim: e.dim() }),
            (None, Some(Some(info))) => Some(info.clone()),
            _ => None,
        }
    }

    /// The semantic leg of a new index, when the builder asked for one with a known model.
    fn new_semantic(&self, lexical: &LexicalIndex, quantization: Quantization) -> Result<Option<Semantic>> {
        let Some(info) = self.info() else { return Ok(None) };
        let (semantic, _) =
            open_semantic(None, info, self.embedder.clone(), None, &lexical.snapshot(), quantization, self.ef_search)?;
        Ok(Some(semantic))
    }
}

impl Parts {
    fn new(
        lexical: LexicalIndex,
        semantic: Option<Semantic>,
        embedding: Option<EmbeddingInfo>,
        commit_point: Option<Vec<u8>>,
    ) -> Parts {
        let cell = OnceLock::new();
        if let Some(semantic) = semantic {
            let _ = cell.set(Arc::new(semantic));
        }
        Parts { lexical, semantic: cell, embedding: Mutex::new(embedding), commit_point: Mutex::new(commit_point) }
    }

    /// Opens the commit on disk, as of the commit point `point` read before (a commit landing
    /// meanwhile is then opened once more by the next reload, never missed). Returns the
    /// manifest, the parts and the next free ordinal.
    fn open(layout: &Layout, models: &Models, point: Option<Vec<u8>>) -> Result<(Manifest, Parts, u64)> {
        let manifest = Manifest::read(layout)?;
        let recorded = manifest.embedding.clone();
        let wanted = match (models.info(), &models.vectors) {
            (Some(info), _) => Some(info),
            (None, Some(None)) => recorded.clone(),
            (None, _) => None,
        };
        if let Some(info) = &wanted {
            check_model(info, recorded.as_ref())?;
        }
        // The vector file is read on a second thread while the lexical index opens: at a
        // million records each takes about half a second here.
        let (lexical, store) = std::thread::scope(|scope| {
            let store = scope.spawn(|| match wanted {
                Some(_) => Semantic::open_store(layout, recorded.is_some()),
                None => Ok(None),
            });
            let lexical = open_lexical(layout, &manifest);
            (lexical, store.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        });
        let (lexical, store) = (lexical?, store?);
        let snapshot = lexical.snapshot();
        let mut next_ord = manifest.next_ord.max(snapshot.max_ord()?.map_or(0, |m| m + 1));
        let semantic = match wanted {
            Some(info) => {
                let quantization = manifest.config.quantization;
                let (semantic, after_orphans) =
                    semantic_over(info, models.embedder.clone(), store, &snapshot, quantization, models.ef_search)?;
                next_ord = next_ord.max(after_orphans);
                Some(semantic)
            }
            None => None,
        };
        let parts = Parts::new(lexical, semantic, recorded, point);
        Ok((manifest, parts, next_ord))
    }
}

/// The lexical index saved in `layout`, with the synonyms the manifest's commit saved.
fn open_lexical(layout: &Layout, manifest: &Manifest) -> Result<LexicalIndex> {
    let lexical = LexicalIndex::open(&layout.lexical(), manifest.config.schema.clone())?;
    if let Some(text) = manifest::read_synonyms(layout)? {
        lexical.set_synonyms(Synonyms::parse(&text)?);
    }
    Ok(lexical)
}

/// The semantic leg for vectors of `info`, with the store saved in `layout` when the manifest
/// records one (`recorded`, which `info` must match). Returns it with the smallest ordinal the
/// writer may hand out after it ([`semantic_over`]).
pub(crate) fn open_semantic(
    layout: Option<&Layout>,
    info: EmbeddingInfo,
    embedder: Option<Arc<dyn Embedder>>,
    recorded: Option<&EmbeddingInfo>,
    snapshot: &braid_lexical::Snapshot,
    quantization: Quantization,
    ef_search: Option<usize>,
) -> Result<(Semantic, u64)> {
    check_model(&info, recorded)?;
    let store = match layout {
        Some(layout) => Semantic::open_store(layout, recorded.is_some())?,
        None => None,
    };
    semantic_over(info, embedder, store, snapshot, quantization, ef_search)
}

/// Checks that vectors of `info` may go in an index whose manifest records `recorded`.
fn check_model(info: &EmbeddingInfo, recorded: Option<&EmbeddingInfo>) -> Result<()> {
    if info.dim == 0 {
        return Err(Error::invalid_request("vectors need at least one dimension"));
    }
    if let Some(recorded) = recorded {
        if recorded.model_id != info.model_id || recorded.dim != info.dim {
            return Err(Error::invalid_request(format!(
                "this index holds vectors of {} ({} dimensions); the model given is {} ({} dimensions)",
                recorded.model_id, recorded.dim, info.model_id, info.dim
            )));
        }
    }
    Ok(())
}

/// The semantic leg for vectors of `info` over `store`, the one saved in the index (if any).
/// Returns it with the smallest ordinal the writer may hand out after it: a crash between
/// saving vectors and committing their records leaves vectors of records that never
/// committed, which are dropped here, and their ordinals never reused.
fn semantic_over(
    info: EmbeddingInfo,
    embedder: Option<Arc<dyn Embedder>>,
    mut store: Option<VectorStore>,
    snapshot: &braid_lexical::Snapshot,
    quantization: Quantization,
    ef_search: Option<usize>,
) -> Result<(Semantic, u64)> {
    let mut next_ord = 0;
    if let Some(store) = store.as_mut() {
        let live: OrdSet = snapshot.ords()?.into_iter().collect();
        let orphans: Vec<u64> = store.ords().filter(|&o| !live.contains(o)).collect();
        for ord in orphans {
            next_ord = next_ord.max(ord + 1);
            store.delete(ord);
        }
    }
    Ok((Semantic::new(info, embedder, store, quantization, ef_search)?, next_ord))
}

impl Index {
    /// A builder, to give the index its models before it opens or is created.
    pub fn builder() -> IndexBuilder {
        IndexBuilder::default()
    }

    /// Creates a new index in `dir` without models (see [`IndexBuilder::create`]).
    ///
    /// # Errors
    /// As [`IndexBuilder::create`].
    pub fn create(dir: &Path, config: IndexConfig) -> Result<Index> {
        Index::builder().config(config).create(dir)
    }

    /// Creates an index held in memory only, without models.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] for a bad configuration.
    pub fn create_in_ram(config: IndexConfig) -> Result<Index> {
        Index::builder().config(config).create_in_ram()
    }

    /// Opens the index in `dir` without models (see [`IndexBuilder::open`]).
    ///
    /// # Errors
    /// As [`IndexBuilder::open`].
    pub fn open(dir: &Path) -> Result<Index> {
        Index::builder().open(dir)
    }

    /// Opens the index in `dir`, or creates it with `config` when there is none.
    ///
    /// # Errors
    /// As [`Index::open`] and [`Index::create`].
    pub fn open_or_create(dir: &Path, config: IndexConfig) -> Result<Index> {
        Index::builder().config(config).open_or_create(dir)
    }

    /// Whether `dir` holds an index (its manifest, the last file a create writes, is there).
    pub fn exists(dir: &Path) -> bool {
        Layout::new(dir).holds_index()
    }

    /// The model whose vectors the index in `dir` holds, read from its manifest alone (to pick
    /// the embedder before [`IndexBuilder::open`]).
    ///
    /// # Errors
    /// [`Error::Corrupt`] or [`Error::FormatVersion`] for a missing or foreign manifest.
    pub fn recorded_embedding(dir: &Path) -> Result<Option<EmbeddingInfo>> {
        Ok(Manifest::read(&Layout::new(dir))?.embedding)
    }

    /// The configuration the index in `dir` was created with, read from its manifest alone:
    /// what an index keeps when a later release changes a default (the title boost, 0.5 before
    /// 2026-12-04, 0.1 since).
    ///
    /// # Errors
    /// [`Error::Corrupt`] or [`Error::FormatVersion`] for a missing or foreign manifest.
    pub fn recorded_config(dir: &Path) -> Result<IndexConfig> {
        Ok(Manifest::read(&Layout::new(dir))?.config)
    }

    /// Replaces the synonyms queries are expanded with (see [`Synonyms`] for the format and
    /// docs/search-box.md): searches that start after the call use them; records are not
    /// touched, so nothing is re-indexed. An on-disk index keeps them in `synonyms.txt` beside
    /// its manifest (an empty set removes the file), and every open and reload reads them back.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be written (the set in use is then unchanged).
    ///
    /// ```
    /// # use braid::{Index, IndexConfig, Mode, Principal, Record, SearchRequest, Synonyms};
    /// # fn main() -> braid::Result<()> {
    /// let index = Index::create_in_ram(IndexConfig::default())?;
    /// let mut w = index.writer()?;
    /// w.upsert(&Record::new("2fa").title("Two-factor authentication").body("Turn it on in settings."))?;
    /// w.commit()?;
    /// index.set_synonyms(Synonyms::parse("2fa, two-factor authentication")?)?;
    /// let r = index.search(&SearchRequest::new("2FA", Principal::public()).mode(Mode::Lexical))?;
    /// assert_eq!(r.hits[0].id, "2fa");
    /// assert_eq!(r.hits[0].explain.synonyms[0].synonym, "two-factor authentication");
    /// # Ok(()) }
    /// ```
    pub fn set_synonyms(&self, synonyms: Synonyms) -> Result<()> {
        if let Some(layout) = self.layout() {
            manifest::write_synonyms(layout, (!synonyms.is_empty()).then_some(synonyms.text()))?;
        }
        self.parts().lexical.set_synonyms(synonyms);
        Ok(())
    }

    /// The synonyms in use (empty unless set).
    pub fn synonyms(&self) -> Arc<Synonyms> {
        self.parts().lexical.synonyms()
    }

    /// Reads the on-disk index's `synonyms.txt` again (what another process, such as
    /// `braid synonyms`, wrote) and uses it from the next search on; no file means no
    /// synonyms. Returns whether the set changed. An in-memory index keeps its set.
    ///
    /// # Errors
    /// [`Error::Synonyms`] naming the line when the file does not parse (the set in use is
    /// then unchanged), [`Error::Io`] when it cannot be read.
    pub fn reload_synonyms(&self) -> Result<bool> {
        let Some(layout) = self.layout() else { return Ok(false) };
        let text = manifest::read_synonyms(layout)?.unwrap_or_default();
        if self.synonyms().text() == text {
            return Ok(false);
        }
        self.parts().lexical.set_synonyms(Synonyms::parse(&text)?);
        Ok(true)
    }

    /// Verifies an index on disk without changing it: the manifest parses and has this build's
    /// format, every file of the lexical index is there and matches its checksum (as on every
    /// [`Index::open`]), and the vector file (when the manifest records a model) is there,
    /// complete and matches its checksum. Returns what it found ([`CheckReport`]).
    ///
    /// # Errors
    /// [`Error::Corrupt`] or [`Error::FormatVersion`] naming the damaged file.
    pub fn check(dir: &Path) -> Result<CheckReport> {
        let index = Index::builder().stored_vectors().open(dir)?;
        let mut orphan_vectors = 0;
        if let Some(semantic) = index.semantic() {
            let live: std::collections::HashSet<u64> = index.parts().lexical.snapshot().ords()?.into_iter().collect();
            let store = semantic.store.read().unwrap_or_else(|p| p.into_inner());
            orphan_vectors = store.ords().filter(|o| !live.contains(o)).count();
        }
        Ok(CheckReport {
            records: index.num_records(),
            orphan_vectors,
            feedback_heads: index.parts().lexical.stores_feedback_heads(),
        })
    }

    fn assemble(layout: Option<Layout>, config: IndexConfig, models: Models, parts: Parts, next_ord: u64) -> Index {
        Index {
            shared: Arc::new(Shared {
                layout,
                config,
                models,
                ordinals: Ordinals::starting_at(next_ord),
                current: RwLock::new(Arc::new(parts)),
                writing: Mutex::new(false),
            }),
        }
    }

    /// The commit served now.
    pub(crate) fn parts(&self) -> Arc<Parts> {
        self.shared.current.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn ordinals(&self) -> &Ordinals {
        &self.shared.ordinals
    }

    pub(crate) fn layout(&self) -> Option<&Layout> {
        self.shared.layout.as_ref()
    }

    /// Opens a writer with `open`, which gets the parts the writer is bound to, and marks this
    /// handle as writing until [`Index::close_writer`] (so no reload swaps those parts).
    pub(crate) fn open_writer<T>(&self, open: impl FnOnce(Arc<Parts>) -> Result<T>) -> Result<T> {
        let mut writing = self.shared.writing.lock().unwrap_or_else(|p| p.into_inner());
        let out = open(self.parts())?;
        *writing = true;
        Ok(out)
    }

    /// Called by the writer when it closes.
    pub(crate) fn close_writer(&self) {
        *self.shared.writing.lock().unwrap_or_else(|p| p.into_inner()) = false;
    }

    /// Picks up a commit another process wrote (a re-index with `braid index`, a writer of its
    /// own): when the commit point on disk changed since these parts were opened, opens the
    /// new commit (checksums verified, as on every open, the models this index was built with
    /// attached) and serves it from the next [`Index::searcher`] on; searchers taken before keep
    /// their commit. Returns whether it swapped. A no-op in memory and while this handle has a
    /// writer open (whose commits are served as they land).
    ///
    /// # Errors
    /// As [`IndexBuilder::open`], and [`Error::InvalidRequest`] when the index was re-created
    /// with another configuration; the commit served stays as it was.
    pub fn reload(&self) -> Result<bool> {
        let Some(layout) = &self.shared.layout else { return Ok(false) };
        let writing = self.shared.writing.lock().unwrap_or_else(|p| p.into_inner());
        if *writing {
            return Ok(false);
        }
        let point = layout.commit_point();
        let current = self.parts();
        if point.is_none() || *current.commit_point.lock().unwrap_or_else(|p| p.into_inner()) == point {
            return Ok(false);
        }
        let (manifest, parts, next_ord) = Parts::open(layout, &self.shared.models, point)?;
        if manifest.config != self.shared.config {
            return Err(Error::invalid_request(format!(
                "{} was re-created with another configuration: open it afresh",
                layout.root().display()
            )));
        }
        self.shared.ordinals.raise_to(next_ord);
        *self.shared.current.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(parts);
        drop(writing);
        Ok(true)
    }

    /// A short, opaque name of the commit served: the first 16 hex digits of the SHA-256 of its
    /// commit point (`None` in memory). It tells two commits apart and carries no count.
    pub fn commit_id(&self) -> Option<String> {
        use sha2::{Digest, Sha256};
        let parts = self.parts();
        let point = parts.commit_point.lock().unwrap_or_else(|p| p.into_inner());
        point.as_deref().map(|p| Sha256::digest(p).iter().take(8).map(|b| format!("{b:02x}")).collect())
    }

    /// One snapshot of every part of the latest commit, to search and read from; cheap to take
    /// and to clone. A searcher never sees a later commit.
    pub fn searcher(&self) -> Searcher {
        Searcher::new(self.parts(), self.shared.config.policy, self.shared.models.reranker.clone())
    }

    /// The cross-encoder the index was built with, if any.
    pub fn reranker(&self) -> Option<Arc<dyn Reranker>> {
        self.shared.models.reranker.clone()
    }

    /// The embedding model whose vectors this index holds, if any.
    pub fn embedding(&self) -> Option<EmbeddingInfo> {
        self.parts().embedding.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Whether the semantic leg can run (the index was built with an embedder, or holds
    /// supplied vectors; without an embedder, only requests with a query vector use it).
    pub fn has_semantic(&self) -> bool {
        self.semantic().is_some()
    }

    /// The embedder the index was built with, if any.
    pub fn embedder(&self) -> Option<Arc<dyn Embedder>> {
        self.shared.models.embedder.clone()
    }

    pub(crate) fn semantic(&self) -> Option<Arc<Semantic>> {
        self.parts().semantic.get().cloned()
    }

    /// The graph's search width the builder asked for ([`IndexBuilder::ef_search`]).
    pub(crate) fn ef_search(&self) -> Option<usize> {
        self.shared.models.ef_search
    }

    /// The index's configuration.
    pub fn config(&self) -> &IndexConfig {
        &self.shared.config
    }

    /// The directory, for on-disk indexes.
    pub fn dir(&self) -> Option<&Path> {
        self.shared.layout.as_ref().map(Layout::root)
    }

    /// The number of committed, live records.
    pub fn num_records(&self) -> u64 {
        self.parts().lexical.snapshot().num_records()
    }

    /// The ids of every committed, live record, in no particular order: what a sync compares
    /// with its source to delete the records whose documents are gone. An operator's view of
    /// the whole index, with no principal: never serve it to a caller.
    ///
    /// # Errors
    /// [`Error::Lexical`] when the document store cannot be read.
    pub fn record_ids(&self) -> Result<Vec<String>> {
        Ok(self.parts().lexical.snapshot().ids()?.into_iter().map(|(id, _)| id).collect())
    }

    /// Opens the single writer.
    ///
    /// # Errors
    /// [`Error::LockBusy`] when another writer, in this or another process, is open.
    pub fn writer(&self) -> Result<Writer> {
        Writer::new(self.clone(), WriterOptions::default())
    }

    /// Opens the single writer with a memory budget for bulk ingestion.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] for a budget below the minimum (see [`WriterOptions`]),
    /// [`Error::LockBusy`] as [`Index::writer`].
    pub fn writer_with(&self, options: WriterOptions) -> Result<Writer> {
        Writer::new(self.clone(), options)
    }

    /// Searches the latest commit (see [`Searcher::search`]).
    ///
    /// # Errors
    /// As [`Searcher::search`].
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResponse> {
        self.searcher().search(request)
    }

    /// Reads one record of the latest commit (see [`Searcher::record`]).
    ///
    /// # Errors
    /// As [`Searcher::record`].
    pub fn record(&self, id: &str, principal: &Principal) -> Result<Option<StoredRecord>> {
        self.searcher().record(id, principal)
    }

    /// The stored vector of one record of the latest commit (see [`Searcher::vector`]).
    ///
    /// # Errors
    /// As [`Searcher::vector`].
    pub fn vector(&self, id: &str, principal: &Principal) -> Result<Option<Vec<f32>>> {
        self.searcher().vector(id, principal)
    }

    /// A section with its neighbours in the latest commit (see [`Searcher::neighbours`]).
    ///
    /// # Errors
    /// As [`Searcher::neighbours`].
    pub fn neighbours(
        &self,
        id: &str,
        principal: &Principal,
        before: usize,
        after: usize,
    ) -> Result<Vec<StoredRecord>> {
        self.searcher().neighbours(id, principal, before, after)
    }
}

/// The manifest is the last file `Index::create` writes: a lexical folder without one is what a
/// create killed midway leaves, when it holds no segment (tantivy's empty `meta.json`, lock and
/// bookkeeping files). That is removed so the create can start over; a folder holding segments
/// is someone's data and is left alone.
fn clear_interrupted_create(lexical: &Path) -> Result<()> {
    let entries = match std::fs::read_dir(lexical) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(lexical, e)),
    };
    for entry in entries {
        let name = entry.map_err(|e| Error::io(lexical, e))?.file_name();
        let name = name.to_string_lossy();
        if !Layout::is_create_leftover(&name) {
            return Err(Error::invalid_request(format!(
                "{} holds index files but no {}: not a Braid index this build can create over",
                lexical.display(),
                crate::layout::MANIFEST_FILE
            )));
        }
    }
    std::fs::remove_dir_all(lexical).map_err(|e| Error::io(lexical, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use braid_core::Record;
    use braid_vector::HnswParams;

    fn width(index: &Index) -> usize {
        let semantic = index.semantic().expect("a semantic leg");
        let store = semantic.store.read().unwrap();
        store.params().ef_search
    }

    /// The builder's search width reaches the vector store however the semantic leg starts —
    /// with a new index, on open, or attached by the writer at the first record with a vector
    /// — and without one the store searches at the default; a width of 0 is refused.
    #[test]
    fn the_builders_search_width_reaches_the_vector_store() {
        let info = EmbeddingInfo { model_id: "m".into(), dim: 2 };
        let default = HnswParams::default().ef_search;
        let dir = tempfile::tempdir().unwrap();
        let created = Index::builder().vectors(info.clone()).ef_search(64).create(dir.path()).unwrap();
        assert_eq!(width(&created), 64);
        let mut writer = created.writer().unwrap();
        writer.upsert(&Record::new("a").body("x").vector(vec![1.0, 0.0])).unwrap();
        writer.commit().unwrap();
        drop((writer, created));
        assert_eq!(width(&Index::builder().stored_vectors().ef_search(96).open(dir.path()).unwrap()), 96);
        assert_eq!(width(&Index::builder().stored_vectors().open(dir.path()).unwrap()), default);

        let plain = tempfile::tempdir().unwrap();
        let index = Index::builder().ef_search(32).create(plain.path()).unwrap();
        let mut writer = index.writer().unwrap();
        writer.upsert(&Record::new("b").body("y").vector(vec![0.0, 1.0])).unwrap();
        writer.commit().unwrap();
        assert_eq!(width(&index), 32);

        for zero in [Index::builder().ef_search(0).create_in_ram(), Index::builder().ef_search(0).open(dir.path())] {
            match zero {
                Err(Error::InvalidRequest { reason }) => assert!(reason.contains("ef_search"), "{reason}"),
                Err(other) => panic!("ef_search 0 gave {other}"),
                Ok(_) => panic!("ef_search 0 was accepted"),
            }
        }
    }
}
