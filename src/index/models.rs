//! The models an index is built with, and which model's vectors its semantic leg holds.

use std::sync::Arc;

use braid_core::{Embedder, Error, Reranker, Result};
use braid_lexical::{LexicalIndex, Verification};
use braid_vector::Quantization;

use super::parts::open_semantic;
use crate::semantic::{EmbeddingInfo, Semantic};

/// The models an index was built with ([`super::IndexBuilder`]); kept for the handle's life.
#[derive(Clone, Default)]
pub(super) struct Models {
    /// The embedder of records and queries, if any.
    pub embedder: Option<Arc<dyn Embedder>>,
    /// The cross-encoder of the rerank stage, if any.
    pub reranker: Option<Arc<dyn Reranker>>,
    /// Whether records and queries supply their own vectors, and of which model.
    pub vectors: SuppliedVectors,
    /// How the vector store is searched and partitioned.
    pub tuning: VectorTuning,
    /// When an open reads the lexical files whole ([`super::IndexBuilder::verification`]).
    pub verification: Verification,
}

/// The vector store's settings a builder may give; not saved with the index.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct VectorTuning {
    /// The graph's search width ([`super::IndexBuilder::ef_search`]); `None`: the default.
    pub ef_search: Option<usize>,
    /// Records at which a pooled tenant gets a partition of its own
    /// ([`super::IndexBuilder::promote_tenants_at`]); `None`: [`braid_vector::PROMOTE_AT`].
    pub promote_at: Option<usize>,
    /// When the vector logs are merged ([`super::IndexBuilder::vector_merge_policy`]); `None`:
    /// [`braid_vector::MergePolicy::default`].
    pub merge_policy: Option<braid_vector::MergePolicy>,
}

impl VectorTuning {
    /// Records at which a pooled tenant gets partitions of its own, lexical and vector.
    pub fn promote_at(&self) -> usize {
        self.promote_at.unwrap_or(braid_core::PROMOTE_AT)
    }
}

/// Whether the semantic leg runs on vectors that records and queries supply, without a model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) enum SuppliedVectors {
    /// No: the semantic leg runs with the builder's embedder, or the index has none (a writer
    /// still starts one at the first record that brings a vector).
    #[default]
    None,
    /// Vectors of the model named ([`super::IndexBuilder::vectors`]): the index must hold
    /// vectors of that model, or none yet.
    Named(EmbeddingInfo),
    /// Vectors of whatever model the index records ([`super::IndexBuilder::stored_vectors`]):
    /// its saved vectors are loaded; an index without vectors gets its model from the first
    /// record that brings one.
    AsRecorded,
}

impl Models {
    /// The model's name and dimension, when the builder named one (by its embedder or by
    /// [`SuppliedVectors::Named`]).
    pub fn info(&self) -> Option<EmbeddingInfo> {
        match (&self.embedder, &self.vectors) {
            (Some(e), _) => Some(EmbeddingInfo { model_id: e.model_id().to_string(), dim: e.dim() }),
            (None, SuppliedVectors::Named(info)) => Some(info.clone()),
            (None, SuppliedVectors::None | SuppliedVectors::AsRecorded) => None,
        }
    }

    /// The model whose vectors an index opens with, given the model its manifest records:
    /// the one the builder named, else the recorded one when the builder asked for it, else
    /// none (the index opens without its semantic leg).
    pub fn wanted(&self, recorded: Option<&EmbeddingInfo>) -> Option<EmbeddingInfo> {
        match (self.info(), &self.vectors) {
            (Some(info), _) => Some(info),
            (None, SuppliedVectors::AsRecorded) => recorded.cloned(),
            (None, SuppliedVectors::None | SuppliedVectors::Named(_)) => None,
        }
    }

    /// The semantic leg of a new index, when the builder asked for one with a known model.
    pub fn new_semantic(&self, lexical: &LexicalIndex, quantization: Quantization) -> Result<Option<Semantic>> {
        let Some(info) = self.info() else { return Ok(None) };
        let (semantic, _) =
            open_semantic(None, info, self.embedder.clone(), None, &lexical.snapshot(), quantization, self.tuning)?;
        Ok(Some(semantic))
    }
}

/// Checks that vectors of `info` may go in an index whose manifest records `recorded`.
pub(super) fn check_model(info: &EmbeddingInfo, recorded: Option<&EmbeddingInfo>) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn models(vectors: SuppliedVectors) -> Models {
        Models { vectors, ..Models::default() }
    }

    /// Each state of [`SuppliedVectors`] opens an index with the model it says: a named model
    /// whatever the manifest records (the open then checks the two agree), the recorded one
    /// only when asked for, and none without supplied vectors or an embedder.
    #[test]
    fn each_vector_state_opens_the_model_it_names() {
        let recorded = EmbeddingInfo { model_id: "recorded".into(), dim: 3 };
        let named = EmbeddingInfo { model_id: "named".into(), dim: 2 };
        let none = models(SuppliedVectors::None);
        assert_eq!((none.info(), none.wanted(Some(&recorded))), (None, None));
        let as_recorded = models(SuppliedVectors::AsRecorded);
        assert_eq!(as_recorded.info(), None);
        assert_eq!(as_recorded.wanted(Some(&recorded)), Some(recorded.clone()));
        assert_eq!(as_recorded.wanted(None), None);
        let given = models(SuppliedVectors::Named(named.clone()));
        assert_eq!(given.info(), Some(named.clone()));
        assert_eq!(given.wanted(Some(&recorded)), Some(named.clone()));
        assert!(check_model(&named, Some(&recorded)).is_err());
        assert!(check_model(&named, None).is_ok());
    }
}
