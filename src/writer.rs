//! The single writer: upserts and deletes, made durable and visible by `commit()`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use braid_core::{Ord, Record, Result};
use braid_lexical::{LexicalWriter, Merges, DEFAULT_WRITER_HEAP};

use crate::index::Index;
use crate::manifest::{sync_dir, Manifest, FORMAT_VERSION, LEXICAL_DIR};
use crate::semantic::{EmbeddingInfo, Semantic, VECTORS_DIR};

/// The smallest indexing buffer tantivy accepts.
pub const MIN_WRITER_HEAP: usize = 15_000_000;

/// The memory a [`Writer`] may hold while ingesting (see [`Index::writer_with`]).
///
/// A writer holds at most `heap_bytes` of inverted-index buffers (tantivy writes a segment to
/// disk, uncommitted, whenever they fill), at most `embed_batch` texts waiting for the
/// embedder, and, per record upserted since the last commit, its vector (4 bytes per
/// dimension) and its id; committing every N records bounds the last two.
///
/// A bulk load sets `merges` to [`Merges::Deferred`]: no segment merges until
/// [`Writer::optimize`], which merges once (`braid index` does this).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriterOptions {
    /// Bytes of indexing buffer, shared by tantivy's indexing threads. By default
    /// [`DEFAULT_WRITER_HEAP`] (128 MiB); at least [`MIN_WRITER_HEAP`].
    pub heap_bytes: usize,
    /// Texts embedded per batch. By default 8; at least 1. ONNX Runtime keeps memory for the
    /// largest batch it ran: indexing SciFact, 32 texts per batch peaked at 1082 MiB resident
    /// and 8 at 389 MiB, in 202 s against 242 s (`examples/ingest_memory.rs`, 320 records).
    pub embed_batch: usize,
    /// When segments merge. By default [`Merges::Background`].
    pub merges: Merges,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions { heap_bytes: DEFAULT_WRITER_HEAP, embed_batch: 8, merges: Merges::Background }
    }
}

/// Writes to an [`Index`]. There is one at a time per index; a second gets
/// [`braid_core::Error::LockBusy`].
///
/// Changes are invisible to searches until [`Writer::commit`]. Dropping a writer without
/// committing discards its changes. When the index has an embedder attached, records are
/// embedded in batches as they arrive; re-upserting a record whose content did not change is
/// a no-op, so re-indexing a corpus never recomputes its embeddings.
pub struct Writer {
    index: Index,
    options: WriterOptions,
    lexical: LexicalWriter,
    semantic: Option<Arc<Semantic>>,
    pending: usize,
    /// Records upserted since the last commit: id → ordinal.
    pending_ids: HashMap<String, Ord>,
    /// Texts waiting to be embedded, with their ordinals.
    to_embed: Vec<(Ord, String)>,
    /// Vectors ready to insert at commit.
    vectors: Vec<(Ord, Vec<f32>)>,
    /// Ordinals whose vectors go at commit (replaced or deleted records).
    superseded: Vec<Ord>,
    /// Ids upserted or deleted since the last commit.
    touched: HashSet<String>,
    /// Upserts skipped because the committed record was identical.
    unchanged: usize,
}

/// The model id an index records for vectors supplied with records when none was named
/// (see [`Index::attach_vectors`]).
pub const SUPPLIED_MODEL: &str = "supplied";

impl Writer {
    pub(crate) fn new(index: Index, options: WriterOptions) -> Result<Writer> {
        if options.heap_bytes < MIN_WRITER_HEAP {
            return Err(braid_core::Error::invalid_request(format!(
                "writer heap of {} bytes is below the minimum of {MIN_WRITER_HEAP}",
                options.heap_bytes
            )));
        }
        if options.embed_batch == 0 {
            return Err(braid_core::Error::invalid_request("embed_batch must be at least 1"));
        }
        let mut lexical = index.inner.lexical.writer(options.heap_bytes)?;
        lexical.set_merges(options.merges)?;
        let semantic = index.semantic();
        Ok(Writer {
            index,
            options,
            lexical,
            semantic,
            pending: 0,
            pending_ids: HashMap::new(),
            to_embed: Vec::new(),
            vectors: Vec::new(),
            superseded: Vec::new(),
            touched: HashSet::new(),
            unchanged: 0,
        })
    }

    /// Adds `record`, replacing any record with the same id.
    ///
    /// # Errors
    /// [`braid_core::Error::InvalidRecord`] or [`braid_core::Error::UnknownField`]; the
    /// record is then not written. With an embedder attached, [`braid_core::Error::Model`]
    /// when a batch cannot be embedded.
    pub fn upsert(&mut self, record: &Record) -> Result<()> {
        record.validate()?;
        if let Some(vector) = record.supplied_vector() {
            self.semantic_for(vector.len())?.check(vector, "record")?;
        }
        let hash = content_hash(record)?;
        let committed = self.index.inner.lexical.snapshot().record_by_id(record.id())?;
        if let Some(old) = &committed {
            let has_vector = self
                .semantic
                .as_ref()
                .is_none_or(|s| !self.wants_vector(s, record) || s.store.read().is_ok_and(|v| v.contains(old.ord)));
            // An old record with no SHA-256 digest (a 64-bit hash from an earlier Braid) never
            // matches: it is rewritten once.
            if old.digest == Some(hash) && has_vector && !self.touched.contains(record.id()) {
                self.unchanged += 1;
                return Ok(());
            }
        }
        self.touched.insert(record.id().to_string());
        let ord = {
            let mut next = self.index.inner.next_ord.lock().unwrap_or_else(|p| p.into_inner());
            let ord = *next;
            self.lexical.upsert(ord, record, hash)?;
            *next += 1;
            ord
        };
        self.pending += 1;
        self.supersede(record.id(), committed.map(|r| r.ord));
        self.pending_ids.insert(record.id().to_string(), ord);
        if let Some(vector) = record.supplied_vector() {
            self.vectors.push((ord, vector.to_vec()));
        } else if self.semantic.as_ref().is_some_and(|s| s.embeds(record.language())) {
            // Records in a language the model does not cover get no vector (an English
            // model's vector of Chinese text is noise); the lexical legs still find them.
            self.to_embed.push((ord, record.passage()));
            if self.to_embed.len() >= self.options.embed_batch {
                self.embed_pending()?;
            }
        }
        Ok(())
    }

    /// Whether `record` should have a vector in `semantic`'s store: it supplies one, or the
    /// embedder covers its language.
    fn wants_vector(&self, semantic: &Semantic, record: &Record) -> bool {
        record.supplied_vector().is_some() || semantic.embeds(record.language())
    }

    /// The semantic state a supplied vector of `dim` dimensions goes to: the attached one, or,
    /// on an index without, a store of supplied vectors attached now (under the model the
    /// manifest records, else `supplied`).
    fn semantic_for(&mut self, dim: usize) -> Result<Arc<Semantic>> {
        if let Some(semantic) = self.semantic.clone().or_else(|| self.index.semantic()) {
            self.semantic = Some(semantic.clone());
            return Ok(semantic);
        }
        let info = self.index.embedding().unwrap_or(EmbeddingInfo { model_id: SUPPLIED_MODEL.into(), dim });
        self.index.attach_vectors(info)?;
        let semantic =
            self.index.semantic().ok_or_else(|| braid_core::Error::Vector("vectors failed to attach".into()))?;
        self.semantic = Some(semantic.clone());
        Ok(semantic)
    }

    /// The number of upserts skipped since this writer opened because the committed record
    /// was identical (re-running an ingest skips what an earlier run committed).
    pub fn unchanged(&self) -> usize {
        self.unchanged
    }

    /// Deletes the record with this id (a no-op when there is none).
    ///
    /// # Errors
    /// [`braid_core::Error::Lexical`] when the committed record cannot be looked up.
    pub fn delete(&mut self, id: &str) -> Result<()> {
        self.lexical.delete(id);
        let committed = self.index.inner.lexical.snapshot().record_by_id(id)?;
        self.supersede(id, committed.map(|r| r.ord));
        self.pending_ids.remove(id);
        self.touched.insert(id.to_string());
        self.pending += 1;
        Ok(())
    }

    fn supersede(&mut self, id: &str, committed: Option<Ord>) {
        self.superseded.extend(committed);
        if let Some(ord) = self.pending_ids.get(id) {
            self.superseded.push(*ord);
        }
    }

    fn embed_pending(&mut self) -> Result<()> {
        let Some(embedder) = self.semantic.as_ref().and_then(|s| s.embedder.clone()) else { return Ok(()) };
        if self.to_embed.is_empty() {
            return Ok(());
        }
        let texts: Vec<&str> = self.to_embed.iter().map(|(_, t)| t.as_str()).collect();
        let vectors = embedder.embed(&texts)?;
        self.vectors.extend(self.to_embed.drain(..).map(|(ord, _)| ord).zip(vectors));
        Ok(())
    }

    /// The number of upserts and deletes since the last commit.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Makes every change durable and visible to new searches. A crash (or power loss) at any
    /// point loses only uncommitted changes, and a reopened index sees exactly one commit.
    ///
    /// The order: the vector file gains the new vectors (written to a temporary file, fsynced,
    /// renamed, directory fsynced), then the manifest (same way), then tantivy commits — its
    /// `meta.json` rename is the commit point — and the lexical directory is fsynced. Vectors
    /// of replaced or deleted records leave the store only after that point. So a crash
    /// before the commit point leaves vectors without a committed record, which
    /// [`Index::attach_embedder`] drops on open; never a committed record without its vector.
    ///
    /// # Errors
    /// [`braid_core::Error::Lexical`], [`braid_core::Error::Io`] or
    /// [`braid_core::Error::Model`] when the commit cannot be written; the previous commit
    /// stays intact on disk.
    pub fn commit(&mut self) -> Result<()> {
        self.embed_pending()?;
        let inner = &self.index.inner;
        if let Some(semantic) = &self.semantic {
            let mut store = semantic.store.write().unwrap_or_else(|p| p.into_inner());
            store.insert_batch(&self.vectors)?;
            if let Some(dir) = &inner.dir {
                store.save(&dir.join(VECTORS_DIR))?;
            }
            *inner.embedding.lock().unwrap_or_else(|p| p.into_inner()) = Some(semantic.info.clone());
        }
        if let Some(dir) = &inner.dir {
            let next_ord = *inner.next_ord.lock().unwrap_or_else(|p| p.into_inner());
            let embedding = inner.embedding.lock().unwrap_or_else(|p| p.into_inner()).clone();
            Manifest { format: FORMAT_VERSION, config: inner.config.clone(), next_ord, embedding }.write(dir)?;
        }
        self.lexical.commit()?;
        if let Some(dir) = &inner.dir {
            // tantivy renames meta.json without syncing the directory: make the rename durable.
            let lexical = dir.join(LEXICAL_DIR);
            sync_dir(&lexical).map_err(|e| braid_core::Error::io(&lexical, e))?;
        }
        inner.lexical.reload()?;
        if let Some(semantic) = &self.semantic {
            let mut store = semantic.store.write().unwrap_or_else(|p| p.into_inner());
            for ord in &self.superseded {
                store.delete(*ord);
            }
        }
        self.pending = 0;
        self.pending_ids.clear();
        self.vectors.clear();
        self.superseded.clear();
        self.touched.clear();
        Ok(())
    }

    /// Commits, then merges the index's segments into one (see
    /// [`LexicalWriter::merge_segments`]): searches get faster, and deleted records leave the
    /// disk. Worth it after a bulk load or many updates; it rewrites the whole lexical index,
    /// so it takes time and disk space in proportion to it. `braid index` calls it at the end.
    ///
    /// # Errors
    /// As [`Writer::commit`]; the committed index stays intact when the merge fails.
    pub fn optimize(&mut self) -> Result<()> {
        self.commit()?;
        self.lexical.merge_segments()?;
        let inner = &self.index.inner;
        if let Some(dir) = &inner.dir {
            let lexical = dir.join(LEXICAL_DIR);
            sync_dir(&lexical).map_err(|e| braid_core::Error::io(&lexical, e))?;
        }
        inner.lexical.reload()
    }
}

/// The SHA-256 of everything a record holds — id, title, body, keyword and numeric fields,
/// ACL and tenant tokens, parent, section and lines — over its canonical serialisation
/// (JSON, fields in declaration order, maps sorted), used to skip re-indexing unchanged
/// records. Collision resistance matters here: two records with the same hash are taken to be
/// the same, so a crafted collision would turn an ACL change into a no-op.
///
/// # Errors
/// [`braid_core::Error::InvalidRecord`] when the record cannot be serialised (never for a
/// record that passed [`Record::validate`]).
///
/// ```
/// use braid::{content_hash, Record};
/// let a = Record::new("a").body("x").acl(["tenant:acme"]);
/// let b = Record::new("a").body("x").acl(["tenant:globex"]);
/// assert_ne!(content_hash(&a)?, content_hash(&b)?);
/// assert_eq!(content_hash(&a)?, content_hash(&a.clone())?);
/// # Ok::<(), braid::Error>(())
/// ```
pub fn content_hash(record: &Record) -> Result<[u8; 32]> {
    use sha2::{Digest, Sha256};
    let bytes = serde_json::to_vec(record)
        .map_err(|e| braid_core::Error::InvalidRecord { reason: format!("cannot serialise the record: {e}") })?;
    let digest = Sha256::digest(&bytes);
    let mut out = [0u8; 32];
    out.copy_from_slice(&digest);
    Ok(out)
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::IndexConfig;

    #[test]
    fn a_record_with_an_old_64_bit_hash_is_rewritten_once() {
        let index = Index::create_in_ram(IndexConfig::default()).unwrap();
        let record = Record::new("doc").body("quarterly roadmap").acl(["group:staff"]);
        {
            // As an earlier Braid wrote it: one 64-bit hash value.
            let mut lexical = index.inner.lexical.writer(DEFAULT_WRITER_HEAP).unwrap();
            lexical.upsert(0, &record, 0x1234_u64).unwrap();
            lexical.commit().unwrap();
            index.inner.lexical.reload().unwrap();
        }
        let old = index.inner.lexical.snapshot().record_by_id("doc").unwrap().unwrap();
        assert_eq!(old.digest, None);
        let mut w = index.writer().unwrap();
        w.upsert(&record).unwrap();
        assert_eq!(w.pending(), 1, "an old hash never counts as unchanged");
        w.commit().unwrap();
        let new = index.inner.lexical.snapshot().record_by_id("doc").unwrap().unwrap();
        assert_eq!(new.digest, Some(content_hash(&record).unwrap()));
        drop(w);
        // From then on the same content is skipped.
        let mut w = index.writer().unwrap();
        w.upsert(&record).unwrap();
        assert_eq!(w.pending(), 0);
    }
}
