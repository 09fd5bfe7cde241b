//! Braid's lexical and fuzzy legs, on tantivy.
//!
//! A [`LexicalIndex`] stores records in tantivy indexes — one for records without a tenant and
//! small tenants, one per tenant past [`braid_core::PROMOTE_AT`] records — with a flat
//! title+body field for BM25, a title field for the title boost, an unstemmed word field whose
//! vocabulary (an `fst` map) drives typo expansion, completion and "did you mean", and a
//! trigram field for fragments.
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
//!
//! # Modules
//!
//! Three lifetimes, three types: a [`LexicalIndex`] lives as long as the index is open, a
//! [`Snapshot`] as long as one commit is searched, a [`View`] for one request (one allowed
//! set). Dependencies point one way, from the request down to the index:
//! `view` → `query_builder` → `weighted_query`, `view` → `scorer` → `weighted_query`, and
//! `view` → `snapshot` ← `index`. Nothing below `view` imports it: the query builders and
//! "did you mean" read visible counts through the `VisibleCounts` trait, which `View`
//! implements.
//!
//! | Module | Answers |
//! |---|---|
//! | `index` | How an index is created, opened, written and reloaded ([`LexicalIndex`]). |
//! | `verify` | Which files an open checks, and when each is read whole against its checksum ([`Verification`]). |
//! | `partition` | Which tantivy index holds a record (main, pool, promoted tenant), and the catalog the main partition's commit carries. |
//! | `promote` | How a tenant's records move to a partition of their own. |
//! | `writer` | How records are added, replaced, deleted and committed, atomically across partitions ([`LexicalWriter`]). |
//! | `schema` | Which tantivy fields a record becomes ([`SchemaConfig`]). |
//! | `snapshot` | What one commit holds: allowed sets, stored records, ids, chunks ([`Snapshot`]). |
//! | `segments` | Every partition's segments as one list, and the scope a request reads. |
//! | `allowed_cache` | Which allowed sets a snapshot keeps, per scope, within [`ALLOWED_CACHE_BYTES`]. |
//! | `visibility` | Which documents a visibility rule admits, per segment (ACL, tenant, filter). |
//! | `stored` | What a stored document reads back as ([`IndexedRecord`], feedback heads). |
//! | `ids` | A segment's external ids, from its `id` column. |
//! | `view` | One request: the lexical and fuzzy legs over the allowed records ([`View`]). |
//! | `view::counts` | Document frequencies and BM25 statistics over the allowed records only. |
//! | `view::suggest` | The query's words with visible counts, and "did you mean" ([`QueryWord`]). |
//! | `view::syntax` | The simple query syntax on a view: scoring words, constraints. |
//! | `view::with_feedback` | The lexical leg with pseudo-relevance feedback (RM3). |
//! | `visible_counts` | What the query builders may ask of the index: visible counts only. |
//! | `gathered` | Those counts gathered across indexes, for a search split over several. |
//! | `query_builder` | How query text becomes a weighted query (lexical, fuzzy, tantivy syntax). |
//! | `weighted_query` | What a leg scores: groups of alternatives of weighted BM25 terms. |
//! | `scorer` | A weighted query's top k over the allowed records, term at a time. |
//! | `bm25` | BM25 as tantivy computes it, length norms once per field. |
//! | `top_k` | The k best (ordinal, score), ties by ordinal. |
//! | `matches` | Every record the legs matched, and the facets counted over them. |
//! | `reweight` | A request's own title and body weights. |
//! | `feedback` | The relevance model of the first hits (RM3, [`Feedback`]). |
//! | `simple` | The opt-in simple syntax: `+`, `-`, quotes, `field:value`. |
//! | `synonyms` | Synonym files and how a query's words expand ([`Synonyms`]). |
//! | `context` | Which of several equally close corrections fits the query's other words. |
//! | `clitics` | English clitics and "I", dropped from the query's words. |
//! | `phonetic` | Chinese words by pinyin, initials and homophones. |
//! | `vocabulary` | The words of a snapshot: frequencies, neighbours, completions. |
//! | `saved_vocabulary` | The large segments' vocabulary saved by the writer, read by an open when it is theirs and intact. |
//! | `typo_walk`, `deletions` | Words within a few edits, walked or looked up. |
//! | `analysis`, `cjk`, `stem_gate` | How text is cut into terms ([`Analyzer`]). |
//! | `snippets` | Which passage of a hit to show, terms marked ([`Snippets`]). |
//! | `error` | Where a failure's cause is kept, and where it becomes a `braid_core::Error`. |
#![deny(missing_docs)]

mod allowed_cache;
mod analysis;
mod bm25;
mod cjk;
mod clitics;
mod context;
mod deletions;
mod directory;
mod error;
mod feedback;
mod gathered;
mod ids;
mod index;
mod matches;
mod partition;
mod phonetic;
mod promote;
mod query_builder;
mod reweight;
mod saved_vocabulary;
mod schema;
mod scorer;
mod segments;
mod simple;
mod snapshot;
mod snippets;
mod stem_gate;
mod stored;
mod synonyms;
mod top_k;
mod typo_walk;
mod verify;
mod view;
mod visibility;
mod visible_counts;
mod vocabulary;
mod weighted_query;
mod writer;

pub use allowed_cache::ALLOWED_CACHE_BYTES;
pub use analysis::Analyzer;
pub use feedback::Feedback;
pub use gathered::{Answer, FeedbackCandidate, Gathered, Memo, Question};
pub use index::{LexicalIndex, DEFAULT_WRITER_HEAP};
pub use matches::Located;
pub use query_builder::{max_edits, MAX_QUERY_TERMS};
pub use saved_vocabulary::VOCABULARY_FILE;
pub use schema::SchemaConfig;
pub use simple::MAX_PHRASE_CHECKS;
pub use snapshot::Snapshot;
pub use snippets::{Snippets, HIGHLIGHT_STOP_WORDS};
pub use stored::IndexedRecord;
pub use synonyms::{SynonymUse, Synonyms, MAX_SYNONYMS_BYTES};
pub use verify::{Verification, VerificationStatus, SMALL_FILE};
pub use view::{feedback_depth, feedback_model, LegOutput, QueryWord, View};
pub use writer::{ContentDigest, LexicalWriter, Merges};
