//! [`IndexBuilder`]: an index's models and configuration, then create or open.

use std::path::Path;
use std::sync::Arc;

use braid_core::{Embedder, Error, Reranker, Result};
use braid_lexical::{LexicalIndex, Verification};

use super::models::{Models, SuppliedVectors};
use super::parts::Parts;
use super::{Index, IndexConfig};
use crate::layout::Layout;
use crate::manifest::{Manifest, FORMAT_VERSION};
use crate::semantic::EmbeddingInfo;

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
    /// and requests their query vector ([`braid_core::SearchRequest::vector`]). An index that already
    /// holds vectors must have been made with the same model.
    pub fn vectors(mut self, info: EmbeddingInfo) -> Self {
        self.models.vectors = SuppliedVectors::Named(info);
        self
    }

    /// As [`IndexBuilder::vectors`], with whatever model the index records: its stored vectors
    /// are loaded (none yet: the writer starts a store with the first record that has one).
    pub fn stored_vectors(mut self) -> Self {
        self.models.vectors = SuppliedVectors::AsRecorded;
        self
    }

    /// The cross-encoder of the rerank stage: searches then rescore their top fused
    /// candidates with it (see [`braid_core::SearchRequest::rerank`]).
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
    /// Measured on 1,000,000 int8 vectors with everything visible (research/scale-log.md): recall@10
    /// against the exact f32 top 10 is 0.9455 at 1,200 and 0.955 at 1,600, at 6.9 and 9.4 ms
    /// for the graph alone.
    pub fn ef_search(mut self, width: usize) -> Self {
        self.models.tuning.ef_search = Some(width);
        self
    }

    /// The number of records at which a tenant leaves the partitions shared by small tenants
    /// for partitions of its own — its vectors a store and graph of their own (see
    /// [`braid_vector::PartitionedStore`]), its records a lexical index of their own (see
    /// [`braid_lexical::LexicalIndex`]); by default [`braid_core::PROMOTE_AT`], 10,000. Where a
    /// tenant lives changes what a search costs and what it reads, never what it finds. Not
    /// saved with the index: a tenant already promoted stays in its partitions.
    pub fn promote_tenants_at(mut self, records: usize) -> Self {
        self.models.tuning.promote_at = Some(records);
        self
    }

    /// When a vector partition's log is merged into a new base (by default
    /// [`braid_vector::MergePolicy::default`]: past half the base's bytes, and 64 KiB). Merges
    /// run on a background thread of the index, never inside [`crate::Writer::commit`]; a lower
    /// share merges more often (more bytes written, less log to replay on open). Not saved with
    /// the index. The crash tests set a tiny one so that merges run all the time.
    pub fn vector_merge_policy(mut self, policy: braid_vector::MergePolicy) -> Self {
        self.models.tuning.merge_policy = Some(policy);
        self
    }

    /// When opening reads the lexical files whole against their checksums (by default
    /// [`Verification::Background`], with files up to [`braid_lexical::SMALL_FILE`] read by the
    /// open itself). In the background, the open checks every file cheaply — it is there and
    /// ends in an intact footer — and a thread reads the files whole afterwards, while
    /// searches run: a damaged file it finds makes every later search and writer of the handle
    /// fail with [`Error::Corrupt`] naming it, and a writer waits for it to end
    /// ([`Index::verification`], [`Index::verify`]). [`Verification::Blocking`] reads them
    /// all before the open returns, as [`Index::check`] does. The vector files are read whole
    /// and checked at every open either way. docs/durability.md says what a search may read
    /// before the thread is done.
    pub fn verification(mut self, verification: Verification) -> Self {
        self.models.verification = verification;
        self
    }

    /// Checks the settings every way of making an index shares.
    fn check(&self) -> Result<()> {
        if self.models.tuning.ef_search == Some(0) {
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
        lexical.set_promote_at(self.models.tuning.promote_at());
        let semantic = self.models.new_semantic(&lexical, self.config.quantization)?;
        let manifest = Manifest {
            format: FORMAT_VERSION,
            config: self.config.clone(),
            next_ord: 0,
            embedding: None,
            vector_mark: None,
            vector_partitions: Default::default(),
        };
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
        lexical.set_promote_at(self.models.tuning.promote_at());
        let semantic = self.models.new_semantic(&lexical, self.config.quantization)?;
        let parts = Parts::new(lexical, semantic, None, None);
        Ok(Index::assemble(None, self.config, self.models, parts, 0))
    }

    /// Opens the index in `dir`. Every file of the lexical index is checked before tantivy
    /// parses it — there and intact at its end, small ones against their checksums — and read
    /// whole against its checksum by a background thread afterwards, or before this returns
    /// ([`IndexBuilder::verification`]); the vector store is loaded, and checked whole, when
    /// the builder asks for the semantic leg.
    ///
    /// # Errors
    /// [`Error::Corrupt`] or [`Error::Unparsable`] naming the file when the index is missing or
    /// damaged, [`Error::FormatVersion`] when another version of Braid wrote it,
    /// [`Error::InvalidRequest`] when its vectors were made by another model than the one given
    /// or a setting is invalid.
    pub fn open(self, dir: &Path) -> Result<Index> {
        self.check()?;
        let layout = Layout::new(dir);
        let point = layout.commit_point();
        let (manifest, parts, next_ord) = Parts::open(&layout, &self.models, point, None)?;
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
