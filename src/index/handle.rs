//! [`Index`]: the handle, what it keeps for its life, and what it serves.

use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

use braid_core::{Embedder, Error, Principal, Reranker, Result, SearchRequest, SearchResponse};
use braid_lexical::{Synonyms, VerificationStatus};

use super::builder::IndexBuilder;
use super::config::IndexConfig;
use super::models::Models;
use super::parts::Parts;
use crate::layout::Layout;
use crate::manifest::{self, Manifest};
use crate::searcher::Searcher;
use crate::semantic::{EmbeddingInfo, Semantic};
use crate::stored::StoredRecord;
use crate::writer::{Ordinals, Writer, WriterOptions};

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
    /// [`Error::Corrupt`], [`Error::Unparsable`] or [`Error::FormatVersion`] for a missing,
    /// damaged or foreign manifest.
    pub fn recorded_embedding(dir: &Path) -> Result<Option<EmbeddingInfo>> {
        Ok(Manifest::read(&Layout::new(dir))?.embedding)
    }

    /// The configuration the index in `dir` was created with, read from its manifest alone:
    /// what an index keeps when a later release changes a default (the title boost, 0.5 before
    /// 2026-12-04, 0.1 since).
    ///
    /// # Errors
    /// [`Error::Corrupt`], [`Error::Unparsable`] or [`Error::FormatVersion`] for a missing,
    /// damaged or foreign manifest.
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

    pub(super) fn assemble(
        layout: Option<Layout>,
        config: IndexConfig,
        models: Models,
        parts: Parts,
        next_ord: u64,
    ) -> Index {
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
    /// new commit (every lexical file the served commit's verification has not read whole is
    /// read against its checksum before this returns, the vector files checked as on every
    /// open, the models this index was built with attached) and serves it from the next
    /// [`Index::searcher`] on; searchers taken before keep their commit. Returns whether it swapped. A no-op in memory and while this handle has a
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
        let (manifest, parts, next_ord) = Parts::open(layout, &self.shared.models, point, Some(&current))?;
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

    /// The vector store's settings the builder gave ([`IndexBuilder::ef_search`],
    /// [`IndexBuilder::promote_tenants_at`]).
    pub(crate) fn vector_tuning(&self) -> super::models::VectorTuning {
        self.shared.models.tuning
    }

    /// The index's configuration.
    pub fn config(&self) -> &IndexConfig {
        &self.shared.config
    }

    /// The directory, for on-disk indexes.
    pub fn dir(&self) -> Option<&Path> {
        self.shared.layout.as_ref().map(Layout::root)
    }

    /// Waits until the vector merges that commits handed the index's background merge thread
    /// have run (see [`crate::Writer::commit`]); returns how many merged since the index
    /// opened. Commits never wait for merges: this is for a caller that wants the logs folded
    /// now (before a backup, say, or at the end of a bench).
    pub fn wait_for_vector_merges(&self) -> u64 {
        self.semantic().map_or(0, |semantic| semantic.wait_for_merges())
    }

    /// How far the verification of the served commit's lexical files has come
    /// ([`IndexBuilder::verification`]): running, verified, or damaged — then every search,
    /// read and writer of this handle fails with [`Error::Corrupt`] naming the file, until a
    /// [`Index::reload`] serves a commit without it.
    pub fn verification(&self) -> VerificationStatus {
        self.parts().lexical.verification()
    }

    /// Waits until every lexical file of the served commit has been read whole against its
    /// checksum, reading those the background thread has not reached on this thread too
    /// (so it returns at once after [`crate::Verification::Blocking`], or when the thread is
    /// done). What a test, a backup or an operator who wants the answer now calls.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the damaged file.
    pub fn verify(&self) -> Result<()> {
        self.parts().lexical.wait_for_verification()
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
    /// [`Error::Lexical`] or [`Error::LexicalEngine`] when the document store cannot be read;
    /// [`Error::Corrupt`] when a lexical file is damaged ([`Index::verification`]).
    pub fn record_ids(&self) -> Result<Vec<String>> {
        let parts = self.parts();
        let ids = parts.lexical.read_verified(|| parts.lexical.snapshot().ids())?;
        Ok(ids.into_iter().map(|(id, _)| id).collect())
    }

    /// Opens the single writer. It first waits for the verification of the served commit's
    /// lexical files ([`Index::verify`]): a writer merges segments, and never merges a file
    /// that has not been read whole against its checksum.
    ///
    /// # Errors
    /// [`Error::LockBusy`] when another writer, in this or another process, is open;
    /// [`Error::Corrupt`] naming a damaged lexical file.
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

    /// The outline of the latest commit under `path` (see [`Searcher::outline`]).
    ///
    /// # Errors
    /// As [`Searcher::outline`].
    pub fn outline(&self, principal: &Principal, path: &str, offset: usize, limit: usize) -> Result<crate::Outline> {
        self.searcher().outline(principal, path, offset, limit)
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
