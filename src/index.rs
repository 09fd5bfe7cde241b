//! An index: the lexical store, its configuration and ordinal counter, on disk or in memory.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use braid_core::{
    AccessPolicy, Embedder, Error, Principal, Reranker, Result, SearchRequest, SearchResponse, Visibility,
};
use braid_lexical::{LexicalIndex, SchemaConfig, StoredRecord, Synonyms};
use serde::{Deserialize, Serialize};

use crate::manifest::{self, Manifest, FORMAT_VERSION, LEXICAL_DIR, MANIFEST_FILE};
use crate::semantic::{EmbeddingInfo, Semantic};
use crate::writer::{Writer, WriterOptions};

/// How an index is built; fixed at creation and stored with the index.
///
/// By default: [`SchemaConfig::default`] and [`AccessPolicy::Public`] for records without ACL.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IndexConfig {
    /// Analyzer, boosts, keyword and numeric fields.
    pub schema: SchemaConfig,
    /// Visibility of records that carry no ACL tokens.
    pub policy: AccessPolicy,
}

/// A Braid index. Cheap to clone; every clone sees the same data.
///
/// Searches run on the latest committed snapshot and never block on writing; there is one
/// writer at a time (see [`Index::writer`]).
#[derive(Clone)]
pub struct Index {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub dir: Option<PathBuf>,
    pub config: IndexConfig,
    pub lexical: LexicalIndex,
    /// The next ordinal to hand out; persisted in the manifest at each commit.
    pub next_ord: Mutex<u64>,
    /// The model recorded in the manifest (vectors on disk were made with it).
    pub embedding: Mutex<Option<EmbeddingInfo>>,
    /// The semantic leg, once an embedder is attached.
    pub semantic: RwLock<Option<Arc<Semantic>>>,
    /// The cross-encoder of the rerank stage, once attached.
    pub reranker: RwLock<Option<Arc<dyn Reranker>>>,
}

impl Index {
    /// Creates a new index in `dir` (created if needed; it must not hold an index already).
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] when `dir` already holds an index, [`Error::Io`] when it cannot
    /// be written.
    pub fn create(dir: &Path, config: IndexConfig) -> Result<Index> {
        if Manifest::path(dir).exists() {
            return Err(Error::invalid_request(format!("{} already holds an index", dir.display())));
        }
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        clear_interrupted_create(&dir.join(LEXICAL_DIR))?;
        let lexical = LexicalIndex::create(Some(&dir.join(LEXICAL_DIR)), config.schema.clone())?;
        let manifest = Manifest { format: FORMAT_VERSION, config: config.clone(), next_ord: 0, embedding: None };
        manifest.write(dir)?;
        Ok(Self::assemble(Some(dir.to_path_buf()), config, lexical, 0, None))
    }

    /// Creates an index held in memory only.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] for a bad configuration.
    pub fn create_in_ram(config: IndexConfig) -> Result<Index> {
        let lexical = LexicalIndex::create(None, config.schema.clone())?;
        Ok(Self::assemble(None, config, lexical, 0, None))
    }

    /// Opens the index in `dir`. Every file of the lexical index is checked against its
    /// checksum first (one read of the index), so a damaged file is an error, never a panic.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the file when the index is missing or damaged,
    /// [`Error::FormatVersion`] when another version of Braid wrote it.
    pub fn open(dir: &Path) -> Result<Index> {
        let manifest = Manifest::read(dir)?;
        let lexical = LexicalIndex::open(&dir.join(LEXICAL_DIR), manifest.config.schema.clone())?;
        let after_max = lexical.snapshot().max_ord()?.map_or(0, |m| m + 1);
        let next_ord = manifest.next_ord.max(after_max);
        let index = Self::assemble(Some(dir.to_path_buf()), manifest.config, lexical, next_ord, manifest.embedding);
        index.reload_synonyms()?;
        Ok(index)
    }

    /// Replaces the synonyms queries are expanded with (see [`Synonyms`] for the format and
    /// docs/search-box.md): searches that start after the call use them; records are not
    /// touched, so nothing is re-indexed. An on-disk index keeps them in `synonyms.txt` beside
    /// its manifest (an empty set removes the file), and [`Index::open`] reads them back.
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
        if let Some(dir) = &self.inner.dir {
            manifest::write_synonyms(dir, (!synonyms.is_empty()).then_some(synonyms.text()))?;
        }
        self.inner.lexical.set_synonyms(synonyms);
        Ok(())
    }

    /// The synonyms in use (empty unless set).
    pub fn synonyms(&self) -> Arc<Synonyms> {
        self.inner.lexical.synonyms()
    }

    /// Reads the on-disk index's `synonyms.txt` again (what another process, such as
    /// `braid synonyms`, wrote) and uses it from the next search on; no file means no
    /// synonyms. Returns whether the set changed. An in-memory index keeps its set.
    ///
    /// # Errors
    /// [`Error::Synonyms`] naming the line when the file does not parse (the set in use is
    /// then unchanged), [`Error::Io`] when it cannot be read.
    pub fn reload_synonyms(&self) -> Result<bool> {
        let Some(dir) = &self.inner.dir else { return Ok(false) };
        let text = manifest::read_synonyms(dir)?.unwrap_or_default();
        if self.synonyms().text() == text {
            return Ok(false);
        }
        self.inner.lexical.set_synonyms(Synonyms::parse(&text)?);
        Ok(true)
    }

    /// Verifies an index on disk without changing it: the manifest parses and has this build's
    /// format, every file of the lexical index is there and matches its checksum (as on every
    /// [`Index::open`]), and the vector file (when the manifest records a model) is there,
    /// complete and matches its checksum. Returns the number of live records.
    ///
    /// # Errors
    /// [`Error::Corrupt`] or [`Error::FormatVersion`] naming the damaged file.
    pub fn check(dir: &Path) -> Result<u64> {
        let index = Self::open(dir)?;
        if let Some(store) = Semantic::open_store(dir, index.embedding().is_some())? {
            let live: std::collections::HashSet<u64> =
                index.inner.lexical.snapshot().ids()?.into_iter().map(|(_, ord, _)| ord).collect();
            let orphans = store.ords().filter(|o| !live.contains(o)).count();
            if orphans > 0 {
                tracing::warn!(target: "braid::check", orphans, "vectors without a committed record (dropped on next attach)");
            }
        }
        Ok(index.num_records())
    }

    /// Opens the index in `dir`, or creates it with `config` when there is none.
    ///
    /// # Errors
    /// As [`Index::open`] and [`Index::create`].
    pub fn open_or_create(dir: &Path, config: IndexConfig) -> Result<Index> {
        if Manifest::path(dir).exists() {
            Self::open(dir)
        } else {
            Self::create(dir, config)
        }
    }

    fn assemble(
        dir: Option<PathBuf>,
        config: IndexConfig,
        lexical: LexicalIndex,
        next_ord: u64,
        embedding: Option<EmbeddingInfo>,
    ) -> Index {
        Index {
            inner: Arc::new(Inner {
                dir,
                config,
                lexical,
                next_ord: Mutex::new(next_ord),
                embedding: Mutex::new(embedding),
                semantic: RwLock::new(None),
                reranker: RwLock::new(None),
            }),
        }
    }

    /// Attaches an embedding model: from now on the writer embeds records and searches can run
    /// the semantic leg. On an index that already holds vectors, the model must be the one
    /// that made them, and its vectors are loaded.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] when the index's vectors were made by another model,
    /// [`Error::Corrupt`] when its vector file is damaged.
    pub fn attach_embedder(&self, embedder: Arc<dyn Embedder>) -> Result<()> {
        let info = EmbeddingInfo { model_id: embedder.model_id().to_string(), dim: embedder.dim() };
        self.attach_semantic(info, Some(embedder))
    }

    /// Turns the semantic leg on without a model: records carry their own vectors
    /// ([`braid_core::Record::vector`]) and requests their query vector
    /// ([`SearchRequest::vector`]). `info` names the model that made the vectors (any name the
    /// caller uses for it) and their dimension; on an index that already holds vectors it
    /// must be the one recorded, and its vectors are loaded. A writer does this on its own
    /// when it meets the first record with a vector (named `supplied` on an index without
    /// one recorded), so this is needed only to search such an index after [`Index::open`].
    ///
    /// # Errors
    /// As [`Index::attach_embedder`].
    ///
    /// ```
    /// # use braid::{EmbeddingInfo, Index, IndexConfig, Mode, Principal, Record, SearchRequest};
    /// # fn main() -> braid::Result<()> {
    /// let index = Index::create_in_ram(IndexConfig::default())?;
    /// index.attach_vectors(EmbeddingInfo { model_id: "my-model".into(), dim: 2 })?;
    /// let mut w = index.writer()?;
    /// w.upsert(&Record::new("north").body("up").vector(vec![0.0, 1.0]))?;
    /// w.upsert(&Record::new("east").body("right").vector(vec![1.0, 0.0]))?;
    /// w.commit()?;
    /// let request = SearchRequest::new("", Principal::public()).vector(vec![0.9, 0.1]).mode(Mode::Semantic);
    /// assert_eq!(index.search(&request)?.hits[0].id, "east");
    /// # Ok(()) }
    /// ```
    pub fn attach_vectors(&self, info: EmbeddingInfo) -> Result<()> {
        self.attach_semantic(info, None)
    }

    fn attach_semantic(&self, info: EmbeddingInfo, embedder: Option<Arc<dyn Embedder>>) -> Result<()> {
        let inner = &self.inner;
        if info.dim == 0 {
            return Err(Error::invalid_request("vectors need at least one dimension"));
        }
        if let Some(recorded) = inner.embedding.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            if recorded.model_id != info.model_id || recorded.dim != info.dim {
                return Err(Error::invalid_request(format!(
                    "this index holds vectors of {} ({} dimensions); the model given is {} ({} dimensions)",
                    recorded.model_id, recorded.dim, info.model_id, info.dim
                )));
            }
        }
        let recorded = inner.embedding.lock().unwrap_or_else(|p| p.into_inner()).is_some();
        let mut store = match &inner.dir {
            Some(dir) => Semantic::open_store(dir, recorded)?,
            None => None,
        };
        if let Some(store) = store.as_mut() {
            // A crash between saving vectors and committing the records leaves vectors of
            // records that never committed: drop them, and never reuse their ordinals.
            let live: std::collections::HashSet<u64> =
                inner.lexical.snapshot().ids()?.into_iter().map(|(_, ord, _)| ord).collect();
            let orphans: Vec<u64> = store.ords().filter(|o| !live.contains(o)).collect();
            let mut next = inner.next_ord.lock().unwrap_or_else(|p| p.into_inner());
            for ord in orphans {
                *next = (*next).max(ord + 1);
                store.delete(ord);
            }
        }
        let semantic = Semantic::new(info, embedder, store)?;
        *inner.semantic.write().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(semantic));
        Ok(())
    }

    /// Attaches a cross-encoder: searches then rescore their top fused candidates with it
    /// (see [`SearchRequest::rerank`]). Any BERT-style cross-encoder exported to ONNX works
    /// through `braid::models::CrossEncoder`.
    pub fn attach_reranker(&self, reranker: Arc<dyn Reranker>) {
        *self.inner.reranker.write().unwrap_or_else(|p| p.into_inner()) = Some(reranker);
    }

    /// The attached cross-encoder, if any (to attach the same model to a reopened index).
    pub fn reranker(&self) -> Option<Arc<dyn Reranker>> {
        self.inner.reranker.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The embedding model whose vectors this index holds, if any.
    pub fn embedding(&self) -> Option<EmbeddingInfo> {
        self.inner.embedding.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Whether the semantic leg can run (an embedder or a store of supplied vectors is
    /// attached; without an embedder, only requests with a query vector use it).
    pub fn has_semantic(&self) -> bool {
        self.inner.semantic.read().unwrap_or_else(|p| p.into_inner()).is_some()
    }

    /// The attached embedder, if any (to attach the same model to a reopened index).
    pub fn embedder(&self) -> Option<Arc<dyn Embedder>> {
        self.semantic().and_then(|s| s.embedder.clone())
    }

    pub(crate) fn semantic(&self) -> Option<Arc<Semantic>> {
        self.inner.semantic.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The index's configuration.
    pub fn config(&self) -> &IndexConfig {
        &self.inner.config
    }

    /// The directory, for on-disk indexes.
    pub fn dir(&self) -> Option<&Path> {
        self.inner.dir.as_deref()
    }

    /// The number of committed, live records.
    pub fn num_records(&self) -> u64 {
        self.inner.lexical.snapshot().num_records()
    }

    /// The ids of every committed, live record, in no particular order: what a sync compares
    /// with its source to delete the records whose documents are gone. An operator's view of
    /// the whole index, with no principal: never serve it to a caller.
    ///
    /// # Errors
    /// [`Error::Lexical`] when the document store cannot be read.
    pub fn record_ids(&self) -> Result<Vec<String>> {
        Ok(self.inner.lexical.snapshot().ids()?.into_iter().map(|(id, _, _)| id).collect())
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

    /// Searches the latest commit. See [`SearchRequest`] for the knobs and defaults.
    ///
    /// # Errors
    /// [`Error::QueryTooLong`], [`Error::InvalidRequest`] (`k` above [`braid_core::MAX_K`]),
    /// [`Error::UnknownField`] (a filter on an undeclared field), [`Error::LegUnavailable`]
    /// (semantic mode without a model). An empty or unanalysable query gives no hits, not an
    /// error.
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResponse> {
        crate::search::search(self, request)
    }

    /// Reads one record by id on behalf of `principal`: `None` when it does not exist or the
    /// principal may not see it (the two are indistinguishable on purpose).
    ///
    /// # Errors
    /// [`Error::Lexical`] when the store cannot be read.
    pub fn record(&self, id: &str, principal: &Principal) -> Result<Option<StoredRecord>> {
        let snapshot = self.inner.lexical.snapshot();
        let Some(record) = snapshot.record_by_id(id)? else { return Ok(None) };
        let allowed = snapshot.allowed_set(Visibility::new(principal.clone(), self.inner.config.policy, None))?;
        Ok(allowed.contains(record.ord).then_some(record))
    }

    /// The stored embedding of record `id` on behalf of `principal` (for exporting vectors to
    /// another engine, or checking them): `None` when the record does not exist, the principal
    /// may not see it, or no embedder is attached (vectors load with [`Index::attach_embedder`]).
    ///
    /// # Errors
    /// [`Error::Lexical`] when the store cannot be read.
    pub fn vector(&self, id: &str, principal: &Principal) -> Result<Option<Vec<f32>>> {
        let Some(record) = self.record(id, principal)? else { return Ok(None) };
        let Some(semantic) = self.semantic() else { return Ok(None) };
        let store = semantic.store.read().unwrap_or_else(|p| p.into_inner());
        Ok(store.vector(record.ord).map(<[f32]>::to_vec))
    }

    /// A section with its neighbours, for a RAG prompt: the chunk `id` plus up to `before`
    /// preceding and `after` following chunks of the same parent, in line order, as
    /// `principal` may see them (hidden neighbours are skipped, never returned). A record
    /// without a parent comes back alone. Empty when `id` does not exist or is not visible.
    ///
    /// # Errors
    /// [`Error::Lexical`] when the store cannot be read.
    ///
    /// ```
    /// # use braid::{Index, IndexConfig, Principal, Record};
    /// # fn main() -> braid::Result<()> {
    /// let index = Index::create_in_ram(IndexConfig::default())?;
    /// let mut w = index.writer()?;
    /// for (i, text) in ["Intro.", "Refunds take 5 days.", "Contact us."].iter().enumerate() {
    ///     let n = i as u32 * 10;
    ///     w.upsert(&Record::new(format!("guide#{i}")).body(*text).parent("guide").lines(n + 1, n + 9))?;
    /// }
    /// w.commit()?;
    /// let window = index.neighbours("guide#1", &Principal::public(), 1, 1)?;
    /// assert_eq!(window.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["guide#0", "guide#1", "guide#2"]);
    /// # Ok(()) }
    /// ```
    pub fn neighbours(
        &self,
        id: &str,
        principal: &Principal,
        before: usize,
        after: usize,
    ) -> Result<Vec<StoredRecord>> {
        let snapshot = self.inner.lexical.snapshot();
        let Some(record) = snapshot.record_by_id(id)? else { return Ok(Vec::new()) };
        let allowed = snapshot.allowed_set(Visibility::new(principal.clone(), self.inner.config.policy, None))?;
        if !allowed.contains(record.ord) {
            return Ok(Vec::new());
        }
        let Some(parent) = record.parent.clone() else { return Ok(vec![record]) };
        let siblings = snapshot.children(&parent, &allowed)?;
        let Some(at) = siblings.iter().position(|r| r.id == id) else { return Ok(vec![record]) };
        let start = at.saturating_sub(before);
        let end = (at + after + 1).min(siblings.len());
        Ok(siblings[start..end].to_vec())
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
        if !(name == "meta.json" || name.starts_with('.')) {
            return Err(Error::invalid_request(format!(
                "{} holds index files but no {MANIFEST_FILE}: not a Braid index this build can create over",
                lexical.display()
            )));
        }
    }
    std::fs::remove_dir_all(lexical).map_err(|e| Error::io(lexical, e))
}
