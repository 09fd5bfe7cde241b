//! The semantic leg's state: the embedder, the vector store, and how both persist beside the
//! lexical index.

use std::path::Path;
use std::sync::{Arc, RwLock};

use braid_core::{AllowedSet, Embedder, Error, Ord, Result, SearchRequest};
use braid_vector::{HnswParams, SearchPath, VectorStore};
use serde::{Deserialize, Serialize};

/// Where the vector store lives inside an index directory.
pub(crate) const VECTORS_DIR: &str = "vectors";

/// Which model wrote an index's vectors; recorded in the manifest so that vectors of two
/// models are never mixed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbeddingInfo {
    /// The embedder's [`Embedder::model_id`].
    pub model_id: String,
    /// The number of dimensions.
    pub dim: usize,
}

/// The embedder (when attached) and the vectors of an index.
pub(crate) struct Semantic {
    pub info: EmbeddingInfo,
    pub embedder: Arc<dyn Embedder>,
    pub store: RwLock<VectorStore>,
}

impl Semantic {
    pub fn new(embedder: Arc<dyn Embedder>, store: Option<VectorStore>) -> Result<Semantic> {
        let info = EmbeddingInfo { model_id: embedder.model_id().to_string(), dim: embedder.dim() };
        let store = match store {
            Some(s) if s.dim() != info.dim => {
                return Err(Error::DimensionMismatch { expected: s.dim(), got: info.dim })
            }
            Some(s) => s,
            None => VectorStore::new(info.dim, HnswParams::default()),
        };
        Ok(Semantic { info, embedder, store: RwLock::new(store) })
    }

    /// The vector store saved in the index `dir`, if any. `expected`: the manifest records an
    /// embedding model, so the store was saved before that commit and must be there.
    pub fn open_store(dir: &Path, expected: bool) -> Result<Option<VectorStore>> {
        let dir = dir.join(VECTORS_DIR);
        let file = dir.join(braid_vector::VECTORS_FILE);
        if !file.exists() {
            if expected {
                return Err(Error::Corrupt { path: file, reason: "missing, but the manifest records vectors".into() });
            }
            return Ok(None);
        }
        VectorStore::open(&dir).map(Some)
    }

    /// Embeds one query and searches the allowed vectors; `request`'s deadline is checked
    /// once the query is embedded (the model call is this leg's costly step).
    pub fn search(
        &self,
        query: &str,
        depth: usize,
        allowed: &AllowedSet,
        request: &SearchRequest,
    ) -> Result<(Vec<(Ord, f32)>, SearchPath)> {
        if query.trim().is_empty() || allowed.is_empty() {
            return Ok((Vec::new(), SearchPath::Exact));
        }
        let vector = self
            .embedder
            .embed(&[query])?
            .pop()
            .ok_or_else(|| Error::Model { reason: "the embedder returned no vector".into() })?;
        request.check_deadline()?;
        let store = self.store.read().unwrap_or_else(|p| p.into_inner());
        let found = store.search(&vector, depth, allowed)?;
        Ok((found.hits, found.path))
    }
}
