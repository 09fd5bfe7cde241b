//! Adding, replacing and deleting records in the inverted index.

use std::time::{Duration, Instant};

use braid_core::{Error, Ordinal, Record, Result, NO_ACL_TOKEN, NO_TENANT_TOKEN};
use tantivy::indexer::{LogMergePolicy, NoMergePolicy};
use tantivy::schema::Field;
use tantivy::tokenizer::{PreTokenizedString, TextAnalyzer};
use tantivy::{IndexWriter, TantivyDocument, Term};

use crate::analysis::{for_mode, head_terms, tokens, Analyzer, ModeAnalyzers, HEAD_WORDS};
use crate::cjk::HanMode;
use crate::error::lexical;
use crate::schema::Fields;
use crate::visibility::section_key;

/// When a lexical writer merges segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Merges {
    /// tantivy's log merge policy merges small segments in the background as commits
    /// accumulate them (the default: right for a writer that commits small batches forever).
    #[default]
    Background,
    /// No merge runs until [`LexicalWriter::merge_segments`]: right for a bulk load, whose
    /// every intermediate merge would be rewritten again by the final one.
    Deferred,
}

/// The single writer of a lexical index. Changes become visible to searches at `commit()`.
pub struct LexicalWriter {
    /// tantivy's writer; `None` only when reopening it after waiting for its merges failed
    /// (every later call then reports [`Error::Lexical`]).
    writer: Option<IndexWriter>,
    heap_bytes: usize,
    merges: Merges,
    pub(crate) fields: Fields,
    /// The index's configured text analyzer (for the feedback heads; tantivy analyses the
    /// indexed fields with the same one, registered on the index).
    text: TextAnalyzer,
    /// Analyzers for records whose language says how to cut Han characters.
    pub(crate) by_mode: [ModeAnalyzers; 2],
}

/// The content digest stored with a record (see `braid::content_hash`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentDigest {
    /// A SHA-256: what Braid writes.
    Sha256([u8; 32]),
    /// A 64-bit hash, as Braid wrote before the digest became SHA-256: such records read back
    /// with no [`crate::IndexedRecord::digest`], so the writer rewrites them. Kept for tests of
    /// that upgrade path and of the lexical layer alone.
    Legacy(u64),
}

impl From<[u8; 32]> for ContentDigest {
    fn from(bytes: [u8; 32]) -> Self {
        ContentDigest::Sha256(bytes)
    }
}

impl From<u64> for ContentDigest {
    fn from(hash: u64) -> Self {
        ContentDigest::Legacy(hash)
    }
}

impl LexicalWriter {
    pub(crate) fn new(writer: IndexWriter, heap_bytes: usize, fields: Fields, analyzer: Analyzer) -> Self {
        LexicalWriter {
            writer: Some(writer),
            heap_bytes,
            merges: Merges::Background,
            fields,
            text: analyzer.build(),
            by_mode: ModeAnalyzers::both(analyzer),
        }
    }

    fn tantivy(&mut self) -> Result<&mut IndexWriter> {
        self.writer.as_mut().ok_or_else(|| Error::Lexical("the writer was closed by a failed reopen".into()))
    }

    /// Chooses when segments merge (see [`Merges`]); takes effect for merges not yet started.
    pub fn set_merges(&mut self, merges: Merges) -> Result<()> {
        self.merges = merges;
        let policy = self.policy();
        self.tantivy()?.set_merge_policy(policy);
        Ok(())
    }

    fn policy(&self) -> Box<dyn tantivy::indexer::MergePolicy> {
        match self.merges {
            Merges::Background => Box::new(LogMergePolicy::default()),
            Merges::Deferred => Box::new(NoMergePolicy),
        }
    }

    /// Adds `record` under ordinal `ord`, replacing any record with the same id.
    ///
    /// # Errors
    /// [`Error::InvalidRecord`] for a bad record, [`Error::UnknownField`] for keyword or
    /// numeric fields the schema does not declare.
    /// `digest` is the record's content digest (see `braid::content_hash`), stored with it.
    pub fn upsert(&mut self, ord: Ordinal, record: &Record, digest: impl Into<ContentDigest>) -> Result<()> {
        let digest = digest.into();
        record.validate()?;
        let doc = self.document(ord, record, &digest)?;
        let id = Term::from_field_text(self.fields.id, record.id());
        let writer = self.tantivy()?;
        writer.delete_term(id);
        writer.add_document(doc).map_err(lexical)?;
        Ok(())
    }

    /// Deletes the record with external id `id` (a no-op when there is none, and on a writer
    /// closed by a failed reopen, whose next commit fails).
    pub fn delete(&mut self, id: &str) {
        if let Some(writer) = &self.writer {
            writer.delete_term(Term::from_field_text(self.fields.id, id));
        }
    }

    /// Makes every change since the last commit durable and visible to new snapshots.
    ///
    /// # Errors
    /// [`Error::Lexical`] when tantivy cannot commit (for example, the disk is full).
    pub fn commit(&mut self) -> Result<()> {
        self.tantivy()?.commit().map_err(lexical)?;
        Ok(())
    }

    /// Merges every committed segment into one and purges deleted records from disk (a
    /// "force merge"). A search then walks one postings list per term instead of one per
    /// segment. Changes not yet committed are not part of the merge. The merge swaps its
    /// segment in atomically: a crash leaves the index as it was before or after, never between.
    ///
    /// tantivy's merge policy may be merging some of those segments in the background: a
    /// second merge over the same segments would find them gone when it ends ("the segments
    /// that were merged could not be found in the SegmentManager"). So this stops new
    /// background merges, waits for the running ones (tantivy waits only by closing its
    /// writer, so the writer is closed and reopened), merges once, and restores the policy.
    ///
    /// # Errors
    /// [`Error::Lexical`] when the merged segment cannot be written.
    pub fn merge_segments(&mut self) -> Result<()> {
        self.tantivy()?.set_merge_policy(Box::new(NoMergePolicy));
        self.settle_merges()?;
        let writer = self.tantivy()?;
        let segments = writer.index().searchable_segment_ids().map_err(lexical)?;
        let deletes = writer.index().searchable_segment_metas().map_err(lexical)?.iter().any(|m| m.has_deletes());
        if segments.len() > 1 || deletes {
            writer.merge(&segments).wait().map_err(lexical)?;
            writer.garbage_collect_files().wait().map_err(lexical)?;
        }
        let policy = self.policy();
        self.tantivy()?.set_merge_policy(policy);
        Ok(())
    }

    /// Waits until no background merge runs, by closing tantivy's writer (which waits for its
    /// merging threads) and opening a new one with the same budget and no merge policy.
    /// Everything up to the last commit is on disk; uncommitted changes would be lost, so this
    /// runs only right after a commit.
    fn settle_merges(&mut self) -> Result<()> {
        let Some(writer) = self.writer.take() else { return Err(Error::Lexical("the writer is closed".into())) };
        let index = writer.index().clone();
        writer.wait_merging_threads().map_err(lexical)?;
        let reopened = open_writer(&index, self.heap_bytes, REOPEN_PATIENCE).map_err(lexical)?;
        reopened.set_merge_policy(Box::new(NoMergePolicy));
        self.writer = Some(reopened);
        Ok(())
    }

    fn document(&self, ord: Ordinal, record: &Record, digest: &ContentDigest) -> Result<TantivyDocument> {
        let f = &self.fields;
        let mut doc = TantivyDocument::default();
        doc.add_text(f.id, record.id());
        doc.add_u64(f.ord, ord);
        match digest {
            ContentDigest::Sha256(bytes) => {
                for word in crate::stored::digest_words(bytes) {
                    doc.add_u64(f.hash, word);
                }
            }
            ContentDigest::Legacy(hash) => doc.add_u64(f.hash, *hash),
        }
        doc.add_text(f.body, record.body.as_str());
        let flat = format!("{} {}", record.title.as_str(), record.body.as_str());
        // A CJK record's language (its `lang`, else detected) says how its Han characters are
        // cut; the index's tokenizers would decide by script alone, so such records arrive
        // tokenized. Everything else takes the index's analyzers, as before.
        match HanMode::of(record.language()) {
            None => {
                doc.add_text(f.title, record.title.as_str());
                doc.add_text(f.text, &flat);
                doc.add_text(f.words, &flat);
            }
            Some(mode) => {
                let a = for_mode(&self.by_mode, mode);
                add_tokenized(&mut doc, f.title, &a.text, record.title.as_str());
                add_tokenized(&mut doc, f.text, &a.text, &flat);
                add_tokenized(&mut doc, f.words, &a.words, &flat);
            }
        }
        doc.add_text(f.grams, &flat);
        if let Some(head) = f.head {
            doc.add_text(head, head_terms(&self.text, &self.by_mode, &flat, HEAD_WORDS).join(" "));
        }
        let acl: Vec<&str> = record.acl.iter().map(|t| t.trim()).filter(|t| !t.is_empty()).collect();
        if acl.is_empty() {
            doc.add_text(f.acl, NO_ACL_TOKEN);
        }
        for token in &acl {
            doc.add_text(f.acl, token);
        }
        let mut tenants = record.tenants().peekable();
        if tenants.peek().is_none() {
            doc.add_text(f.tenant, NO_TENANT_TOKEN);
        }
        for t in tenants {
            doc.add_text(f.tenant, t);
        }
        if let Some(parent) = record.parent.as_deref() {
            doc.add_text(f.parent, parent);
        }
        let section = record.section.as_slice();
        for heading in section {
            doc.add_text(f.section, heading);
        }
        for depth in 1..=section.len() {
            doc.add_text(f.section_path, section_key(&section[..depth]));
        }
        if let Some((s, e)) = record.lines {
            doc.add_u64(f.lines, u64::from(s));
            doc.add_u64(f.lines, u64::from(e));
        }
        for (name, values) in &record.keywords {
            let field = f.keyword(name)?;
            for v in values {
                doc.add_text(field, v);
            }
        }
        for (name, value) in &record.numbers {
            doc.add_f64(f.number(name)?, *value);
        }
        Ok(doc)
    }
}

fn add_tokenized(doc: &mut TantivyDocument, field: Field, analyzer: &TextAnalyzer, text: &str) {
    doc.add_pre_tokenized_text(field, PreTokenizedString { text: text.to_string(), tokens: tokens(analyzer, text) });
}

/// How long opening tantivy's writer waits for a busy lock before calling it busy. The lock is
/// an `flock` on a file: a process forked while a writer of this process held it (a server or
/// a test harness spawning a tool) shares the open file until it runs its program, and holds
/// the lock so long, after the writer that took it is gone.
pub(crate) const LOCK_PATIENCE: Duration = Duration::from_millis(250);

/// How long reopening the writer this process just closed waits for its lock: the lock is
/// surely ours to take, so a busy one is a forked child still on its way to `exec`, which a
/// loaded machine may take longer to reach.
const REOPEN_PATIENCE: Duration = Duration::from_secs(2);

/// A new tantivy writer on `index`; a lock still busy is waited for, up to `patience`.
pub(crate) fn open_writer(
    index: &tantivy::Index,
    heap_bytes: usize,
    patience: Duration,
) -> tantivy::Result<IndexWriter> {
    let started = Instant::now();
    loop {
        match index.writer(heap_bytes) {
            Err(tantivy::TantivyError::LockFailure(..)) if started.elapsed() < patience => {
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::directory::{Directory, INDEX_WRITER_LOCK};

    /// A writer lock still held when the writer opens (a forked process sharing the lock
    /// file) is waited for while it is released within the patience, and is busy after it.
    #[test]
    fn opening_waits_for_a_lock_released_soon_and_fails_on_one_kept() {
        let dir = tempfile::tempdir().unwrap();
        let index = tantivy::Index::create_in_dir(
            dir.path(),
            crate::schema::build_schema(&crate::schema::SchemaConfig::default()).0,
        )
        .unwrap();
        let held = index.directory().acquire_lock(&INDEX_WRITER_LOCK).unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            drop(held);
        });
        let started = Instant::now();
        let writer = open_writer(&index, 15_000_000, Duration::from_secs(5)).unwrap();
        assert!(started.elapsed() >= Duration::from_millis(100), "the lock was not waited for");
        release.join().unwrap();
        drop(writer);

        let _kept = index.directory().acquire_lock(&INDEX_WRITER_LOCK).unwrap();
        let busy = open_writer(&index, 15_000_000, Duration::from_millis(50));
        assert!(matches!(busy, Err(tantivy::TantivyError::LockFailure(..))));
    }
}
