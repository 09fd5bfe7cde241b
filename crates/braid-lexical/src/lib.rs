//! Braid's lexical and fuzzy legs, on tantivy.
//!
//! A [`LexicalIndex`] stores records in a tantivy index with a flat title+body field for BM25,
//! a title field for the title boost, an unstemmed word field whose vocabulary (an `fst` map)
//! drives typo expansion, completion and "did you mean", and a trigram field for fragments.
//! Searches run on a [`View`] of a [`Snapshot`], confined to an [`braid_core::AllowedSet`]:
//! the visibility rule confines every leg inside the index (the only documents the
//! term-at-a-time scorer offers, a required clause of tantivy queries), never a post-filter
//! over a top-k, and every statistic and word list a leg uses is computed from the allowed
//! records alone.
//!
//! ```
//! use braid_core::{AccessPolicy, Principal, QuerySyntax, Record, Visibility};
//! use braid_lexical::{LexicalIndex, SchemaConfig};
//!
//! # fn main() -> braid_core::Result<()> {
//! let index = LexicalIndex::create(None, SchemaConfig::default())?;
//! let mut writer = index.writer(braid_lexical::DEFAULT_WRITER_HEAP)?;
//! writer.upsert(0, &Record::new("a").title("Return policy").body("Send it back within 30 days."), 0)?;
//! writer.commit()?;
//! index.reload()?;
//!
//! let snapshot = index.snapshot();
//! let allowed = snapshot.allowed_set(Visibility::new(Principal::public(), AccessPolicy::Public, None))?;
//! let hits = snapshot.view(&allowed)?.fuzzy("retun polcy", 10)?;
//! assert_eq!(hits.candidates[0].0, 0);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod allowed_cache;
mod analysis;
mod bm25;
mod cjk;
mod clitics;
mod context;
mod deletions;
mod error;
mod feedback;
mod ids;
mod index;
mod matches;
mod phonetic;
mod query_builder;
mod reweight;
mod schema;
mod scorer;
mod simple;
mod snapshot;
mod snippets;
mod stem_gate;
mod stored;
mod synonyms;
mod top_k;
mod typo_walk;
mod view;
mod visibility;
mod visible_counts;
mod vocabulary;
mod weighted_query;
mod writer;

pub use analysis::Analyzer;
pub use feedback::Feedback;
pub use allowed_cache::ALLOWED_CACHE_BYTES;
pub use index::{LexicalIndex, DEFAULT_WRITER_HEAP};
pub use query_builder::{max_edits, MAX_QUERY_TERMS};
pub use matches::Located;
pub use schema::SchemaConfig;
pub use simple::MAX_PHRASE_CHECKS;
pub use snapshot::Snapshot;
pub use snippets::{Snippets, HIGHLIGHT_STOP_WORDS};
pub use stored::StoredRecord;
pub use synonyms::{SynonymUse, Synonyms, MAX_SYNONYMS_BYTES};
pub use view::{LegOutput, QueryWord, View};
pub use writer::{ContentDigest, LexicalWriter, Merges};
