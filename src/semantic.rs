//! The semantic leg's state: the embedder, the vector store, and how both persist beside the
//! lexical index.

use std::sync::{Arc, OnceLock, RwLock};

use braid_core::{AllowedSet, Embedder, Error, Ordinal, Result, SearchRequest};
use braid_vector::{HnswParams, MergeJob, Merger, PartitionedStore, Quantization, SearchPath};
use serde::{Deserialize, Serialize};

use crate::index::VectorTuning;
use crate::layout::Layout;

/// Which model wrote an index's vectors; recorded in the manifest so that vectors of two
/// models are never mixed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbeddingInfo {
    /// The embedder's [`Embedder::model_id`].
    pub model_id: String,
    /// The number of dimensions.
    pub dim: usize,
}

/// The vectors of an index and, when it was built with one, the embedder that makes them. Without one,
/// records and requests supply their own vectors.
///
/// **Locks.** Searches take `store`'s read lock. A commit takes its write lock only for the
/// in-memory change (a few records at a time, [`crate::writer`]), and appends the log record
/// — the disk write and its fsync — under the read lock, which searches share; the only
/// thread that ever asks for the write lock is the writer's, so no writer waits behind the
/// append and no search waits behind a waiting writer. Merges run on `merger`'s thread and
/// never take `store` at all: a [`MergeJob`] reads the partition's files and holds only that
/// partition's file-state mutex, which a commit's append takes and a search never does.
pub(crate) struct Semantic {
    pub info: EmbeddingInfo,
    pub embedder: Option<Arc<dyn Embedder>>,
    /// The vectors, in tenant partitions ([`PartitionedStore`]).
    pub store: RwLock<PartitionedStore>,
    /// The background merger, started with the first merge a commit hands it.
    merger: OnceLock<Merger>,
}

impl Semantic {
    /// The semantic leg over `store` (a new, empty one of `quantization` when `None`),
    /// searching its graph at `ef_search` ([`crate::IndexBuilder::ef_search`]), else at
    /// today's default [`HnswParams::ef_search`] — never at the width the store was saved
    /// with, which is only the default of the release that saved it.
    pub fn new(
        info: EmbeddingInfo,
        embedder: Option<Arc<dyn Embedder>>,
        store: Option<PartitionedStore>,
        quantization: Quantization,
        tuning: VectorTuning,
    ) -> Result<Semantic> {
        let mut store = match store {
            Some(s) if s.dim() != info.dim => {
                return Err(Error::DimensionMismatch { expected: s.dim(), got: info.dim })
            }
            Some(s) => s,
            None => PartitionedStore::new(info.dim, HnswParams { quantization, ..HnswParams::default() }),
        };
        store.set_ef_search(tuning.ef_search.unwrap_or(HnswParams::default().ef_search));
        if let Some(records) = tuning.promote_at {
            store.set_promote_at(records);
        }
        store.set_merge_policy(tuning.merge_policy.unwrap_or_default());
        Ok(Semantic { info, embedder, store: RwLock::new(store), merger: OnceLock::new() })
    }

    /// Hands `jobs` (partitions whose logs passed their share at a commit) to the background
    /// merger, starting it first when need be; where no thread can be started they run here.
    pub fn merge_in_background(&self, jobs: Vec<MergeJob>) {
        if jobs.is_empty() {
            return;
        }
        if self.merger.get().is_none() {
            match Merger::start() {
                Ok(merger) => {
                    let _ = self.merger.set(merger);
                }
                Err(e) => {
                    tracing::warn!(target: "braid::vector", error = %e, "no merge thread: merging inline");
                    for job in jobs {
                        if let Err(e) = job.run() {
                            tracing::warn!(target: "braid::vector", error = %e, "vector merge failed");
                        }
                    }
                    return;
                }
            }
        }
        if let Some(merger) = self.merger.get() {
            merger.submit(jobs);
        }
    }

    /// Waits for the merges handed to the background merger so far; returns how many merged
    /// since it started.
    pub fn wait_for_merges(&self) -> u64 {
        self.merger.get().map_or(0, |merger| {
            merger.wait_idle();
            merger.merged()
        })
    }

    /// The vector store saved in the index, if any, its partitions as saved (the caller
    /// settles them: [`PartitionedStore::settle`]). `expected`: the manifest records an
    /// embedding model, so the store was saved before that commit and must be there.
    pub fn open_store(layout: &Layout, expected: bool) -> Result<Option<PartitionedStore>> {
        let file = layout.vector_file();
        if !file.exists() {
            if expected {
                return Err(Error::Corrupt { path: file, reason: "missing, but the manifest records vectors".into() });
            }
            return Ok(None);
        }
        // The manifest names the vector files its commit's save left; a reader may see a newer
        // manifest than its commit (written after that commit's vectors, so still covered).
        let manifest = crate::manifest::Manifest::read(layout).ok();
        let (mark, marks) = manifest.map(|m| (m.vector_mark, m.vector_partitions)).unwrap_or_default();
        Ok(Some(PartitionedStore::open(&layout.vectors(), mark.as_ref(), &marks)?))
    }

    /// Whether the attached embedder (if any) embeds text in `language`.
    pub fn embeds(&self, language: braid_core::Language) -> bool {
        self.embedder.as_ref().is_some_and(|e| e.covers(language))
    }

    /// Searches the allowed vectors with `supplied` (the request's query vector, already
    /// checked), or else with the embedding of `query`; `request`'s deadline is checked once
    /// the query is embedded (the model call is this leg's costly step).
    pub fn search(
        &self,
        query: &str,
        supplied: Option<&[f32]>,
        depth: usize,
        allowed: &AllowedSet,
        request: &SearchRequest,
    ) -> Result<(Vec<(Ordinal, f32)>, SearchPath)> {
        if (supplied.is_none() && query.trim().is_empty()) || allowed.is_empty() {
            return Ok((Vec::new(), SearchPath::Exact));
        }
        let embedded;
        let vector = match (supplied, &self.embedder) {
            (Some(v), _) => v,
            (None, Some(embedder)) => {
                embedded = embedder
                    .embed(&[query])?
                    .pop()
                    .ok_or_else(|| Error::Model { reason: "the embedder returned no vector".into() })?;
                request.check_deadline()?;
                &embedded
            }
            (None, None) => return Err(no_model()),
        };
        let asked = std::time::Instant::now();
        let store = self.store.read().unwrap_or_else(|p| p.into_inner());
        let waited = asked.elapsed();
        if waited > std::time::Duration::from_micros(500) {
            tracing::debug!(target: "braid::commit", wait_ms = waited.as_secs_f64() * 1e3, "search waited for the vector store");
        }
        let found = store.search(vector, depth, allowed)?;
        Ok((found.hits, found.path))
    }

    /// Checks a supplied vector (a record's or a request's) against this index: its
    /// dimension, then [`braid_core::check_vector`].
    pub fn check(&self, vector: &[f32], what: &str) -> Result<()> {
        if vector.len() != self.info.dim {
            return Err(Error::DimensionMismatch { expected: self.info.dim, got: vector.len() });
        }
        braid_core::check_vector(vector).map_err(|reason| match what {
            "record" => Error::InvalidRecord { reason: format!("vector {reason}") },
            _ => Error::invalid_request(format!("{what} vector {reason}")),
        })
    }
}

/// The request's query vector, checked against the index: `None` when it has none; an error
/// when the index has no vectors at all, or the vector's dimension or values are wrong.
pub(crate) fn check_query_vector<'r>(
    semantic: Option<&Semantic>,
    request: &'r braid_core::SearchRequest,
) -> Result<Option<&'r [f32]>> {
    let Some(vector) = request.vector.as_deref() else { return Ok(None) };
    let Some(semantic) = semantic else {
        return Err(Error::LegUnavailable {
            leg: "semantic",
            reason: "the request has a query vector but this index has no vectors (supply them with \
                     `Record::vector`, or open the index with `IndexBuilder::stored_vectors`)"
                .into(),
        });
    };
    semantic.check(vector, "query")?;
    Ok(Some(vector))
}

/// The semantic leg asked to embed text on an index that has vectors but no model.
pub(crate) fn no_model() -> Error {
    Error::LegUnavailable {
        leg: "semantic",
        reason: "this index has no embedding model attached: give the request a query vector \
                 (`SearchRequest::vector`), or open the index with its model (`IndexBuilder::embedder`)"
            .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use braid_vector::VectorStore;

    /// An index searches at the width its builder gave, else at today's default, whatever
    /// width its store was saved with (an older default, or a width another handle chose).
    #[test]
    fn an_index_searches_at_its_builders_width_or_todays_default() {
        let default = HnswParams::default().ef_search;
        let info = EmbeddingInfo { model_id: "m".into(), dim: 4 };
        for saved in [400, default * 2] {
            let dir = tempfile::tempdir().unwrap();
            let layout = Layout::new(dir.path());
            let mut store = VectorStore::new(4, HnswParams { ef_search: saved, ..HnswParams::default() });
            store.insert(1, &[1.0, 0.0, 0.0, 0.0]).unwrap();
            store.save(&layout.vectors()).unwrap();
            for (asked, expected) in [(None, default), (Some(64), 64)] {
                let opened = Semantic::open_store(&layout, true).unwrap();
                let tuning = VectorTuning { ef_search: asked, promote_at: None, merge_policy: None };
                let semantic = Semantic::new(info.clone(), None, opened, Quantization::F32, tuning).unwrap();
                let width = semantic.store.read().unwrap().params().ef_search;
                assert_eq!(width, expected, "saved {saved}, asked {asked:?}");
            }
        }
    }
}
