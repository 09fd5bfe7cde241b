//! Braid's evaluation kit: measure a search function on a BEIR-format dataset
//! the way BEIR's published numbers are measured.
//!
//! - [`beir`] loads a dataset: [`Dataset::load`] reads the judged queries of a
//!   split and their [`Qrels`]; [`read_corpus`] streams the documents.
//! - [`metrics`] computes nDCG@k, Recall@k, MRR@k (and P@k) exactly as
//!   trec_eval does: linear gain, `log2(rank + 1)` discount, ideal ranking from
//!   the qrels, a document never counted twice.
//! - [`runner`] runs every judged query through a search closure, times it, and
//!   summarises the run as a [`Report`] with a stable JSON form, per-query nDCG@10 and a 95 %
//!   bootstrap interval.
//! - [`significance`] compares two runs query by query: a paired randomization test and a
//!   bootstrap interval of the difference.
//! - [`misspellings`] reads a list of real misspellings to misspell queries as people do;
//!   [`typos`] seeds synthetic one-edit typos.
//!
//! The crate knows nothing about Braid's index: the caller plugs search in as a
//! closure, so it depends on no other Braid crate.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use braid_eval::{evaluate, read_corpus, Dataset};
//! # let dir = tempfile::tempdir()?;
//! # let dir = dir.path().join("tiny");
//! # std::fs::create_dir_all(dir.join("qrels"))?;
//! # std::fs::write(dir.join("corpus.jsonl"),
//! #     "{\"_id\": \"d1\", \"title\": \"Reset\", \"text\": \"how to reset a password\"}\n\
//! #      {\"_id\": \"d2\", \"title\": \"Billing\", \"text\": \"update a card\"}\n")?;
//! # std::fs::write(dir.join("queries.jsonl"), "{\"_id\": \"q1\", \"text\": \"forgot password\"}\n")?;
//! # std::fs::write(dir.join("qrels/test.tsv"), "query-id\tcorpus-id\tscore\nq1\td1\t1\n")?;
//! // `dir` is a BEIR directory: corpus.jsonl, queries.jsonl, qrels/test.tsv.
//! let dataset = Dataset::load(&dir, "test")?;
//! let docs = read_corpus(&dataset.corpus_path()).collect::<Result<Vec<_>, _>>()?;
//!
//! // A toy search: docs whose text shares a word with the query.
//! let report = evaluate(&dataset, "overlap", |query| {
//!     let hits = docs
//!         .iter()
//!         .filter(|d| query.text.split(' ').any(|w| d.text.contains(w)))
//!         .map(|d| d.id.clone())
//!         .collect();
//!     Ok::<_, std::convert::Infallible>(hits)
//! })?;
//! assert_eq!(report.queries, 1);
//! assert_eq!(report.ndcg_at_10, 1.0);
//! println!("{}\n{}", braid_eval::Report::table_header(), report.table_row());
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

pub mod beir;
pub mod error;
pub mod metrics;
pub mod misspellings;
pub mod runner;
pub mod significance;
pub mod typos;

pub use beir::{read_corpus, read_qrels, read_queries, CorpusDoc, Dataset, Qrels, Query};
pub use error::{EvalError, Result};
pub use metrics::{mrr_at, ndcg_at, precision_at, recall_at};
pub use misspellings::Misspellings;
pub use runner::{evaluate, evaluate_outcomes, percentile, QueryOutcome, Report};
pub use significance::{bootstrap_ci, paired_comparison, Interval, PairedComparison};
pub use typos::{misspell_query, SplitMix};
