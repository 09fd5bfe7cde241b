//! One snapshot of every part of an index, to search and read from.

use std::sync::Arc;

use braid_core::{
    AccessPolicy, AllowedSet, Filter, Ordinal, Principal, Reranker, Result, SearchRequest, SearchResponse, Visibility,
};
use braid_lexical::Snapshot;

use crate::index::Parts;
use crate::semantic::Semantic;
use crate::stored::StoredRecord;

/// One commit of an [`crate::Index`]: the lexical snapshot, the vectors and the models, as they
/// were when [`crate::Index::searcher`] took it. Cheap to clone; every read through it sees the
/// same commit, whatever commits or reloads happen meanwhile.
///
/// Every method takes the caller's [`Principal`] and sees only what it may see.
#[derive(Clone)]
pub struct Searcher {
    pub(crate) snapshot: Arc<Snapshot>,
    pub(crate) semantic: Option<Arc<Semantic>>,
    pub(crate) reranker: Option<Arc<dyn Reranker>>,
    pub(crate) policy: AccessPolicy,
    /// Keeps the commit's parts open for as long as the searcher lives.
    parts: Arc<Parts>,
}

impl Searcher {
    pub(crate) fn new(parts: Arc<Parts>, policy: AccessPolicy, reranker: Option<Arc<dyn Reranker>>) -> Searcher {
        Searcher {
            snapshot: parts.lexical.snapshot(),
            semantic: parts.semantic.get().cloned(),
            reranker,
            policy,
            parts,
        }
    }

    /// Runs `read` on this commit unless the verification of its lexical files found a damaged
    /// one, which is then the error; a failure or panic of `read` while files are still being
    /// verified waits for the verification, and a damaged file it finds is the error instead
    /// ([`braid_lexical::LexicalIndex::read_verified`]).
    pub(crate) fn verified<T>(&self, read: impl FnOnce() -> Result<T>) -> Result<T> {
        self.parts.lexical.read_verified(read)
    }

    /// Searches this commit. See [`SearchRequest`] for the knobs and defaults, and
    /// `ARCHITECTURE.md` for the stages a request goes through.
    ///
    /// # Errors
    /// [`braid_core::Error::QueryTooLong`], [`braid_core::Error::InvalidRequest`] (`k` above
    /// [`braid_core::MAX_K`]), [`braid_core::Error::UnknownField`] (a filter on an undeclared
    /// field), [`braid_core::Error::LegUnavailable`] (semantic mode without a model),
    /// [`braid_core::Error::DeadlineExceeded`]. An empty or unanalysable query gives no hits, not
    /// an error. [`braid_core::Error::Corrupt`] naming a damaged index file
    /// ([`crate::Index::verification`]).
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResponse> {
        self.verified(|| crate::search::search(self, request))
    }

    /// The records `principal` may see, with no filter.
    pub(crate) fn allowed(&self, principal: &Principal) -> Result<AllowedSet> {
        self.snapshot.allowed_set(Visibility::new(principal.clone(), self.policy, None))
    }

    /// The ids of every record `principal` may see that `filter` admits, in no particular
    /// order: a listing by filter alone, with no query (what memory uses to find a scope's
    /// expired or kind-matching memories).
    ///
    /// # Errors
    /// [`braid_core::Error::UnknownField`] for a filter on an undeclared field; the store's
    /// errors.
    pub fn ids_where(&self, principal: &Principal, filter: &Filter) -> Result<Vec<String>> {
        self.verified(|| {
            let allowed =
                self.snapshot.allowed_set(Visibility::new(principal.clone(), self.policy, Some(filter.clone())))?;
            let ords: Vec<u64> = allowed.ords().iter().collect();
            Ok(self.snapshot.ids_of(&ords)?.into_iter().flatten().collect())
        })
    }

    /// The records `principal` may see that `filter` admits, in no particular order (see
    /// [`Searcher::ids_where`]).
    ///
    /// # Errors
    /// As [`Searcher::ids_where`].
    pub fn records_where(&self, principal: &Principal, filter: &Filter) -> Result<Vec<StoredRecord>> {
        self.verified(|| {
            let allowed =
                self.snapshot.allowed_set(Visibility::new(principal.clone(), self.policy, Some(filter.clone())))?;
            let ords: Vec<u64> = allowed.ords().iter().collect();
            Ok(self.snapshot.records(&ords)?.into_iter().map(StoredRecord::from).collect())
        })
    }

    /// Reads one record by id on behalf of `principal`: `None` when it does not exist or the
    /// principal may not see it (the two are indistinguishable on purpose).
    ///
    /// # Errors
    /// [`braid_core::Error::Lexical`] or [`braid_core::Error::LexicalEngine`] when the store
    /// cannot be read.
    pub fn record(&self, id: &str, principal: &Principal) -> Result<Option<StoredRecord>> {
        self.verified(|| {
            let Some(record) = self.snapshot.record_by_id(id)? else { return Ok(None) };
            Ok(self.allowed(principal)?.contains(record.ord).then(|| record.into()))
        })
    }

    /// The stored embedding of record `id` on behalf of `principal` (for exporting vectors to
    /// another engine, or checking them): `None` when the record does not exist, the principal
    /// may not see it, or the index was opened without its vectors.
    ///
    /// # Errors
    /// [`braid_core::Error::Lexical`] or [`braid_core::Error::LexicalEngine`] when the store
    /// cannot be read.
    pub fn vector(&self, id: &str, principal: &Principal) -> Result<Option<Vec<f32>>> {
        self.stored_vectors(id, principal, braid_vector::PartitionedStore::vector)
    }

    /// Every stored embedding of record `id` on behalf of `principal`, in order: one per
    /// passage the index's model embedded — the texts [`braid_core::Record::passages`] cuts
    /// with the index's [`crate::IndexConfig::passages`] from the record as stored
    /// ([`Searcher::record`]), the first being the whole text, the vector [`Searcher::vector`]
    /// returns — or the one vector a record supplied. The semantic leg scores the record by
    /// the best of them. `None` as for [`Searcher::vector`]. For exporting to another engine
    /// the rows Braid's semantic leg reads, or checking them.
    ///
    /// # Errors
    /// As [`Searcher::vector`].
    pub fn passage_vectors(&self, id: &str, principal: &Principal) -> Result<Option<Vec<Vec<f32>>>> {
        self.stored_vectors(id, principal, braid_vector::PartitionedStore::passage_vectors)
    }

    /// What `read` takes from the vector store for record `id`, when `principal` may see it
    /// and the index was opened with its vectors (`None` otherwise).
    fn stored_vectors<T>(
        &self,
        id: &str,
        principal: &Principal,
        read: impl FnOnce(&braid_vector::PartitionedStore, Ordinal) -> Option<T>,
    ) -> Result<Option<T>> {
        self.verified(|| {
            let Some(record) = self.snapshot.record_by_id(id)? else { return Ok(None) };
            if !self.allowed(principal)?.contains(record.ord) {
                return Ok(None);
            }
            let Some(semantic) = &self.semantic else { return Ok(None) };
            let store = semantic.store.read().unwrap_or_else(|p| p.into_inner());
            Ok(read(&store, record.ord))
        })
    }

    /// A section with its neighbours, for a RAG prompt: the chunk `id` plus up to `before`
    /// preceding and `after` following chunks of the same parent, in line order, as
    /// `principal` may see them (hidden neighbours are skipped, never returned). A record
    /// without a parent comes back alone. Empty when `id` does not exist or is not visible.
    ///
    /// # Errors
    /// [`braid_core::Error::Lexical`] or [`braid_core::Error::LexicalEngine`] when the store
    /// cannot be read.
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
    /// let window = index.searcher().neighbours("guide#1", &Principal::public(), 1, 1)?;
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
        self.verified(|| {
            let Some(record) = self.snapshot.record_by_id(id)? else { return Ok(Vec::new()) };
            let allowed = self.allowed(principal)?;
            if !allowed.contains(record.ord) {
                return Ok(Vec::new());
            }
            let Some(parent) = record.parent.clone() else { return Ok(vec![record.into()]) };
            let mut siblings = self.snapshot.children(&parent, &allowed)?;
            let Some(at) = siblings.iter().position(|r| r.id == id) else { return Ok(vec![record.into()]) };
            let start = at.saturating_sub(before);
            let end = (at + after + 1).min(siblings.len());
            Ok(siblings.drain(start..end).map(StoredRecord::from).collect())
        })
    }

    /// The number of live records in this commit (an operator's count, of every principal's
    /// records).
    pub fn num_records(&self) -> u64 {
        self.snapshot.num_records()
    }
}
