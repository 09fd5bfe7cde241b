//! A record as a caller reads it back: what it wrote, without the engine's bookkeeping.

/// A record read back from the index on behalf of a principal ([`crate::Searcher::record`],
/// [`crate::Searcher::neighbours`]): everything the record holds but its ACL, its vector and
/// the engine's internal ordinal and content digest.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StoredRecord {
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
    pub keywords: std::collections::BTreeMap<String, Vec<String>>,
    /// Numeric and date fields.
    pub numbers: std::collections::BTreeMap<String, f64>,
}

impl StoredRecord {
    /// The record as it will read back once written (its ACL and vector left out).
    pub(crate) fn from_record(r: &braid_core::Record) -> StoredRecord {
        StoredRecord {
            id: r.id.clone(),
            title: r.title.clone(),
            body: r.body.clone(),
            parent: r.parent.clone(),
            section: r.section.clone(),
            lines: r.lines,
            keywords: r.keywords.clone(),
            numbers: r.numbers.clone(),
        }
    }

    /// How to cite the record (see [`braid_core::Citation`]).
    pub fn citation(&self) -> braid_core::Citation {
        braid_core::Citation {
            title: self.title.clone(),
            section: self.section.clone(),
            document: self.parent.clone(),
            lines: self.lines,
        }
    }
}

impl From<braid_lexical::IndexedRecord> for StoredRecord {
    fn from(r: braid_lexical::IndexedRecord) -> StoredRecord {
        StoredRecord {
            id: r.id,
            title: r.title,
            body: r.body,
            parent: r.parent,
            section: r.section,
            lines: r.lines,
            keywords: r.keywords,
            numbers: r.numbers,
        }
    }
}
