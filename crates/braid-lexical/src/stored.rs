//! Records as stored in the index, read back for hits.

use std::collections::BTreeMap;

use braid_core::Ordinal;
use tantivy::schema::Value;
use tantivy::TantivyDocument;

use crate::schema::Fields;

/// A record read back from the index with the engine's bookkeeping (ordinal, content hash):
/// everything but the ACL, which never leaves the engine. The facade's `braid::StoredRecord`
/// is what a caller reads back: this without the bookkeeping.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedRecord {
    /// Internal ordinal.
    pub ord: Ordinal,
    /// External id.
    pub id: String,
    /// Title.
    pub title: String,
    /// Body.
    pub body: String,
    /// Parent record, for chunks.
    pub parent: Option<String>,
    /// Heading path.
    pub section: Vec<String>,
    /// Line range.
    pub lines: Option<(u32, u32)>,
    /// Keyword fields.
    pub keywords: BTreeMap<String, Vec<String>>,
    /// Numeric and date fields.
    pub numbers: BTreeMap<String, f64>,
    /// The first 64 bits of the content hash (see `content_hash`); the whole of it in
    /// indexes written before the hash became SHA-256.
    pub hash: u64,
    /// The SHA-256 content digest (see `content_hash`), stored as four `u64` values of the
    /// hash field; `None` in records written before (a 64-bit hash), which the writer treats
    /// as changed, so the next re-index rewrites them once.
    pub digest: Option<[u8; 32]>,
}

/// What lexical feedback reads of a stored record.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FeedbackRead {
    /// Internal ordinal.
    pub ord: Ordinal,
    /// The document the record belongs to: its parent, else its own id.
    pub document: String,
    /// Its first words.
    pub head: Head,
}

/// A record's first words as feedback reads them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Head {
    /// Their analysed terms as written with the record, separated by single spaces.
    Terms(String),
    /// The record's title, a space and its body, to analyse (an index written before heads
    /// were stored, or a feedback setting reading another number of words).
    Text(String),
}

/// The feedback read of `doc`: its stored head when `stored_head` allows one and the document
/// holds it, else its text.
pub(crate) fn feedback_read(fields: &Fields, doc: &TantivyDocument, stored_head: bool) -> FeedbackRead {
    let stored = fields.head.filter(|_| stored_head).and_then(|f| text(doc, f));
    let head = match stored {
        Some(terms) => Head::Terms(terms),
        None => Head::Text(format!(
            "{} {}",
            text(doc, fields.title).unwrap_or_default(),
            text(doc, fields.body).unwrap_or_default()
        )),
    };
    let ord = doc.get_first(fields.ord).and_then(|v| v.as_u64()).unwrap_or(0);
    let document = text(doc, fields.parent).or_else(|| text(doc, fields.id)).unwrap_or_default();
    FeedbackRead { ord, document, head }
}

fn text(doc: &TantivyDocument, field: tantivy::schema::Field) -> Option<String> {
    // Titles of CJK records are stored pre-tokenized (see the writer): their text is the title.
    doc.get_first(field)
        .and_then(|v| v.as_str().map(str::to_string).or_else(|| v.as_pre_tokenized_text().map(|p| p.text)))
}

/// Four stored `u64` values back into a 32-byte digest (big-endian words, as written).
fn digest_of(words: &[u64]) -> Option<[u8; 32]> {
    let words: &[u64; 4] = words.try_into().ok()?;
    let mut out = [0u8; 32];
    for (chunk, w) in out.chunks_exact_mut(8).zip(words) {
        chunk.copy_from_slice(&w.to_be_bytes());
    }
    Some(out)
}

/// A 32-byte digest as the four `u64` values the hash field stores.
pub(crate) fn digest_words(digest: &[u8; 32]) -> [u64; 4] {
    let mut words = [0u64; 4];
    for (w, chunk) in words.iter_mut().zip(digest.chunks_exact(8)) {
        let mut b = [0u8; 8];
        b.copy_from_slice(chunk);
        *w = u64::from_be_bytes(b);
    }
    words
}

pub(crate) fn from_doc(fields: &Fields, doc: &TantivyDocument) -> IndexedRecord {
    let u64s = |field| doc.get_all(field).filter_map(|v| v.as_u64()).collect::<Vec<u64>>();
    let lines = u64s(fields.lines);
    let keywords = fields
        .keywords
        .iter()
        .filter_map(|(name, f)| {
            let values: Vec<String> = doc.get_all(*f).filter_map(|v| v.as_str()).map(str::to_string).collect();
            (!values.is_empty()).then(|| (name.clone(), values))
        })
        .collect();
    let numbers = fields
        .numbers
        .iter()
        .filter_map(|(name, f)| doc.get_first(*f).and_then(|v| v.as_f64()).map(|v| (name.clone(), v)))
        .collect();
    IndexedRecord {
        ord: u64s(fields.ord).first().copied().unwrap_or(0),
        id: text(doc, fields.id).unwrap_or_default(),
        title: text(doc, fields.title).unwrap_or_default(),
        body: text(doc, fields.body).unwrap_or_default(),
        parent: text(doc, fields.parent),
        section: doc.get_all(fields.section).filter_map(|v| v.as_str()).map(str::to_string).collect(),
        lines: match lines.as_slice() {
            [s, e] => Some((*s as u32, *e as u32)),
            _ => None,
        },
        keywords,
        numbers,
        hash: u64s(fields.hash).first().copied().unwrap_or(0),
        digest: digest_of(&u64s(fields.hash)),
    }
}
