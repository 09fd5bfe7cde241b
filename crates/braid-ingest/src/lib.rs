//! Braid's ingestion: turning documents into [`braid_core::Record`]s — BEIR `corpus.jsonl`
//! files, Markdown help-center articles (front matter, heading-aware sections) and plain text
//! files.
//!
//! Who may see a document is decided in one place, [`access`], for every format: the
//! lowercase keys `acl` or `tenant` (at the top level of a JSONL line, or in YAML or TOML
//! front matter), or the index's policy when a document has neither; anything malformed,
//! misspelt or misplaced is an [`AccessError`], never a public record.
//!
//! [`Source::detect`] recognises what a path holds; [`Source::records`] streams its records.
//! The `braid` facade re-exports this crate as `braid::ingest` (its `ingest` feature, on by
//! default). The crate depends on `braid-core` (records, errors) and `braid-lexical` (only for
//! [`braid_lexical::SchemaConfig`]'s keyword and numeric fields), never on the facade.
//!
//! ```
//! use braid_ingest::{parse_article, ChunkOptions};
//!
//! # fn main() -> braid_core::Result<()> {
//! let article = parse_article("billing/refunds", "# Refunds\n\nWithin 30 days.\n", &ChunkOptions::default())?;
//! assert_eq!(article.records()?[0].id(), "billing/refunds#intro");
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod access;
pub mod beir;
pub mod markdown;
mod source;

pub use access::{Access, AccessError, AccessProblem};
pub use source::Source;

pub use markdown::{article_id, parse_article, parse_text, read_dir, Article, ChunkOptions, FrontMatter, Section};
