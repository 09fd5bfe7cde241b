//! Adding, replacing and deleting records in the inverted index.

use braid_core::{Error, Ord, Record, Result, NO_ACL_TOKEN, NO_TENANT_TOKEN, TENANT_PREFIX};
use tantivy::schema::Field;
use tantivy::tokenizer::{PreTokenizedString, TextAnalyzer};
use tantivy::{IndexWriter, TantivyDocument, Term};

use crate::analysis::{for_mode, tokens, ModeAnalyzers};
use crate::cjk::HanMode;
use crate::schema::Fields;
use crate::visibility::section_key;

/// The single writer of a lexical index. Changes become visible to searches at `commit()`.
pub struct LexicalWriter {
    pub(crate) writer: IndexWriter,
    pub(crate) fields: Fields,
    /// Analyzers for records whose language says how to cut Han characters.
    pub(crate) by_mode: [ModeAnalyzers; 2],
}

/// The content digest stored with a record (see `braid::content_hash`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentDigest {
    /// A SHA-256: what Braid writes.
    Sha256([u8; 32]),
    /// A 64-bit hash, as Braid wrote before the digest became SHA-256: such records read back
    /// with no [`crate::StoredRecord::digest`], so the writer rewrites them. Kept for tests of
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
    /// Adds `record` under ordinal `ord`, replacing any record with the same id.
    ///
    /// # Errors
    /// [`Error::InvalidRecord`] for a bad record, [`Error::UnknownField`] for keyword or
    /// numeric fields the schema does not declare.
    /// `digest` is the record's content digest (see `braid::content_hash`), stored with it.
    pub fn upsert(&mut self, ord: Ord, record: &Record, digest: impl Into<ContentDigest>) -> Result<()> {
        let digest = digest.into();
        record.validate()?;
        let doc = self.document(ord, record, &digest)?;
        self.writer.delete_term(Term::from_field_text(self.fields.id, record.id()));
        self.writer.add_document(doc).map_err(lexical)?;
        Ok(())
    }

    /// Deletes the record with external id `id` (a no-op when there is none).
    pub fn delete(&mut self, id: &str) {
        self.writer.delete_term(Term::from_field_text(self.fields.id, id));
    }

    /// Makes every change since the last commit durable and visible to new snapshots.
    ///
    /// # Errors
    /// [`Error::Lexical`] when tantivy cannot commit (for example, the disk is full).
    pub fn commit(&mut self) -> Result<()> {
        self.writer.commit().map_err(lexical)?;
        Ok(())
    }

    /// Merges every committed segment into one and purges deleted records from disk (a
    /// "force merge"). A search then walks one postings list per term instead of one per
    /// segment. Changes not yet committed are not part of the merge. The merge swaps its
    /// segment in atomically: a crash leaves the index as it was before or after, never between.
    ///
    /// # Errors
    /// [`Error::Lexical`] when the merged segment cannot be written.
    pub fn merge_segments(&mut self) -> Result<()> {
        let segments = self.writer.index().searchable_segment_ids().map_err(lexical)?;
        let deletes = self.writer.index().searchable_segment_metas().map_err(lexical)?.iter().any(|m| m.has_deletes());
        if segments.len() > 1 || deletes {
            self.writer.merge(&segments).wait().map_err(lexical)?;
            self.writer.garbage_collect_files().wait().map_err(lexical)?;
        }
        Ok(())
    }

    /// Drops every change since the last commit.
    ///
    /// # Errors
    /// [`Error::Lexical`] when tantivy cannot roll back.
    pub fn rollback(&mut self) -> Result<()> {
        self.writer.rollback().map_err(lexical)?;
        Ok(())
    }

    fn document(&self, ord: Ord, record: &Record, digest: &ContentDigest) -> Result<TantivyDocument> {
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
        doc.add_text(f.body, record.body_text());
        let flat = format!("{} {}", record.title_text(), record.body_text());
        // A CJK record's language (its `lang`, else detected) says how its Han characters are
        // cut; the index's tokenizers would decide by script alone, so such records arrive
        // tokenized. Everything else takes the index's analyzers, as before.
        match HanMode::of(record.language()) {
            None => {
                doc.add_text(f.title, record.title_text());
                doc.add_text(f.text, &flat);
                doc.add_text(f.words, &flat);
            }
            Some(mode) => {
                let a = for_mode(&self.by_mode, mode);
                add_tokenized(&mut doc, f.title, &a.text, record.title_text());
                add_tokenized(&mut doc, f.text, &a.text, &flat);
                add_tokenized(&mut doc, f.words, &a.words, &flat);
            }
        }
        doc.add_text(f.grams, &flat);
        let acl: Vec<&str> = record.acl_tokens().iter().map(|t| t.trim()).filter(|t| !t.is_empty()).collect();
        if acl.is_empty() {
            doc.add_text(f.acl, NO_ACL_TOKEN);
        }
        for token in &acl {
            doc.add_text(f.acl, token);
        }
        let mut tenants = acl.iter().filter(|t| t.starts_with(TENANT_PREFIX)).peekable();
        if tenants.peek().is_none() {
            doc.add_text(f.tenant, NO_TENANT_TOKEN);
        }
        for t in tenants {
            doc.add_text(f.tenant, t);
        }
        if let Some(parent) = record.parent_id() {
            doc.add_text(f.parent, parent);
        }
        let section = record.section_path();
        for heading in section {
            doc.add_text(f.section, heading);
        }
        for depth in 1..=section.len() {
            doc.add_text(f.section_path, section_key(&section[..depth]));
        }
        if let Some((s, e)) = record.line_range() {
            doc.add_u64(f.lines, u64::from(s));
            doc.add_u64(f.lines, u64::from(e));
        }
        for (name, values) in record.keywords() {
            let field = f.keyword(name)?;
            for v in values {
                doc.add_text(field, v);
            }
        }
        for (name, value) in record.numbers() {
            doc.add_f64(f.number(name)?, *value);
        }
        Ok(doc)
    }
}

fn add_tokenized(doc: &mut TantivyDocument, field: Field, analyzer: &TextAnalyzer, text: &str) {
    doc.add_pre_tokenized_text(field, PreTokenizedString { text: text.to_string(), tokens: tokens(analyzer, text) });
}

pub(crate) fn lexical(e: impl std::fmt::Display) -> Error {
    Error::Lexical(e.to_string())
}
