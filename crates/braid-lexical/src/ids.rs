//! External ids by document, without the document store.
//!
//! The `id` field is a fast (columnar) field: a dictionary of every id plus, per document, the
//! ordinal of its id in that dictionary. Looking one id up in the dictionary decodes a block
//! of it (~20 µs); reading the dictionary once when a snapshot opens (a sequential stream, like
//! the vocabulary's) makes every later lookup an array access. It costs the ids' bytes plus
//! 8 bytes per distinct id.

use tantivy::columnar::{Column, StrColumn};
use tantivy::DocId;

/// One segment's ids: document → id ordinal → id bytes.
pub(crate) struct SegmentIds {
    ords: Column<u64>,
    bytes: Vec<u8>,
    /// `bytes[ends[i - 1]..ends[i]]` is the id with ordinal `i`.
    ends: Vec<usize>,
}

impl SegmentIds {
    /// Reads the whole dictionary of `column`.
    pub fn read(column: &StrColumn) -> std::io::Result<Self> {
        let mut bytes = Vec::new();
        let mut ends = Vec::with_capacity(column.num_terms());
        let mut stream = column.dictionary().stream()?;
        while stream.advance() {
            bytes.extend_from_slice(stream.key());
            ends.push(bytes.len());
        }
        Ok(SegmentIds { ords: column.ords().clone(), bytes, ends })
    }

    /// The id of document `doc`, if it has one.
    pub fn get(&self, doc: DocId) -> Option<&str> {
        let ord = usize::try_from(self.ords.first(doc)?).ok()?;
        let start = if ord == 0 { 0 } else { *self.ends.get(ord - 1)? };
        let end = *self.ends.get(ord)?;
        std::str::from_utf8(self.bytes.get(start..end)?).ok()
    }
}
