//! [`Index::check`]: verifying an index on disk without changing it.

use std::path::Path;

use braid_core::Result;
use braid_lexical::Verification;

use super::Index;

/// What [`Index::check`] found in an intact index.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// The vector store's partitions, each with the records whose vectors it holds (see
    /// [`braid_vector::PartitionedStore`]); empty when the index has no vectors.
    pub vector_partitions: Vec<(braid_vector::Partition, usize)>,
    /// The tenants whose records a lexical partition of their own holds (see
    /// [`braid_lexical::LexicalIndex`]), by token.
    pub lexical_partitions: Vec<String>,
}

impl Index {
    /// Verifies an index on disk without changing it: the manifest parses and has this build's
    /// format, every file of the lexical index is there and matches its checksum (read whole
    /// before the open returns: [`braid_lexical::Verification::Blocking`]), and the vector file
    /// (when the manifest records a model) is there, complete and matches its checksum.
    /// Returns what it found ([`CheckReport`]).
    ///
    /// # Errors
    /// [`braid_core::Error::Corrupt`], [`braid_core::Error::Unparsable`] or
    /// [`braid_core::Error::FormatVersion`] naming the damaged file
    /// ([`braid_core::Error::damaged_file`]).
    pub fn check(dir: &Path) -> Result<CheckReport> {
        let index = Index::builder().stored_vectors().verification(Verification::Blocking).open(dir)?;
        let (mut orphan_vectors, mut vector_partitions) = (0, Vec::new());
        if let Some(semantic) = index.semantic() {
            let live: std::collections::HashSet<u64> = index.parts().lexical.snapshot().ords()?.into_iter().collect();
            let store = semantic.store.read().unwrap_or_else(|p| p.into_inner());
            orphan_vectors = store.ords().filter(|o| !live.contains(o)).count();
            vector_partitions = store.partitions().map(|(p, n)| (p.clone(), n)).collect();
        }
        Ok(CheckReport {
            records: index.num_records(),
            orphan_vectors,
            feedback_heads: index.parts().lexical.stores_feedback_heads(),
            vector_partitions,
            lexical_partitions: index.parts().lexical.promoted_tenants(),
        })
    }
}
