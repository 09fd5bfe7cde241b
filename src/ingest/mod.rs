//! Turning documents into records: BEIR `corpus.jsonl` files, Markdown help-center articles
//! (front matter, heading-aware sections) and plain text files.
//!
//! [`Source::detect`] recognises what a path holds; [`Source::records`] streams its records.

pub mod beir;
mod front_matter;
pub mod markdown;
mod source;

pub use source::Source;

pub use markdown::{article_id, parse_article, parse_text, read_dir, Article, ChunkOptions, FrontMatter, Section};
