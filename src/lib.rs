//! Braid: hybrid retrieval for RAG services, help centers and agent tools.
//!
//! Braid braids several kinds of recall into one ranking: BM25 keyword recall and fuzzy
//! recall (typos, fragments, as-you-type prefixes) from a tantivy index, and — with the
//! `braid-models`/`braid-vector` crates — semantic recall over embeddings. The legs run in
//! parallel, are fused by reciprocal rank fusion, and are confined to the records the caller
//! may see: permissions are the first filter, in every mode.
//!
//! One entry point, [`Index::search`], serves every mode:
//!
//! ```
//! use braid::{Index, IndexConfig, Mode, Principal, Record, SearchRequest};
//!
//! # fn main() -> braid::Result<()> {
//! let index = Index::create_in_ram(IndexConfig::default())?;
//! let mut writer = index.writer()?;
//! writer.upsert(&Record::new("returns").title("Return policy").body("Send an item back within 30 days.").acl(["public"]))?;
//! writer.upsert(&Record::new("refund-exceptions").title("Refund exceptions").body("Agents may refund after 30 days.").acl(["group:support"]))?;
//! writer.commit()?;
//!
//! let customer = Principal::public();
//! let response = index.search(&SearchRequest::new("retun policy", customer).mode(Mode::Hybrid))?;
//! assert_eq!(response.hits[0].id, "returns");
//! assert!(response.hits.iter().all(|h| h.id != "refund-exceptions"));
//! # Ok(()) }
//! ```
//!
//! # Features
//!
//! All on by default. `models`: [`models`] (ONNX Runtime); `cjk`: jieba segmentation and
//! pinyin recall for Chinese (without it, Chinese is cut into character bigrams); `hnsw`: the
//! HNSW graph for large allowed sets (without it, every vector search is exact, and a graph
//! saved by a build with it is ignored); `ingest`: [`ingest`] (BEIR, Markdown and text files).
//! With `default-features = false` the library is tantivy BM25, fuzzy recall and the semantic
//! leg over the caller's [`Embedder`] or supplied vectors, with no C build and no dictionary.
#![deny(missing_docs)]

mod facets;
pub mod fanout;
mod group_commit;
mod index;
mod layout;
mod manifest;
pub mod memory;
mod outline;
mod paging;
mod priority;
mod rerank;
mod scoring;
mod search;
mod searcher;
mod semantic;
mod stored;
mod tool_catalogue;
mod writer;

pub use braid_core::{id_tenant, is_tenant_name};
pub use braid_core::{
    AccessPolicy, BoostExplain, Boosts, BoxError, Citation, Decay, DecayFunction, Embedder, Error, Explain, Facet,
    FacetRange, Facets, FactorExplain, Filter, Fusion, GroupBy, Hit, KeywordBoost, Language, Leg, LegExplain,
    LegWeights, Mode, Modifier, NumberBoost, Passages, Principal, QuerySyntax, RangeCount, Record, Reranker, Result,
    SearchRequest, SearchResponse, Snippet, Stage, Stats, Suggestion, SynonymMatch, UnknownName, ValueCount,
    Visibility, DEFAULT_RERANK_CANDIDATES, MAX_BOOST_FUNCTIONS, MAX_DEPTH, MAX_FACETS, MAX_FACET_RANGES,
    MAX_FACET_VALUES, MAX_K, MAX_QUERY_BYTES, OWNER_PREFIX, RESERVED_PREFIX, TENANT_PREFIX,
};
pub use braid_lexical::{
    Analyzer, Merges, SchemaConfig, Synonyms, Verification, VerificationStatus, DEFAULT_WRITER_HEAP, SMALL_FILE,
};
pub use braid_vector::{MergePolicy, Partition, Quantization, PROMOTE_AT};
pub use group_commit::{
    Acknowledgement, Batch, GroupCommit, GroupCommitOptions, GroupCommitStats, DEFAULT_COMMIT_INTERVAL,
    DEFAULT_WRITER_NICE, GROUP_COMMIT_WRITER_HEAP,
};
pub use index::{CheckReport, Index, IndexBuilder, IndexConfig};
pub use outline::{Outline, OutlineEntry, OutlineSection, MAX_OUTLINE_ENTRIES};
pub use searcher::Searcher;
pub use semantic::EmbeddingInfo;
pub use stored::StoredRecord;
pub use tool_catalogue::{ToolCatalogue, ToolHit};

/// Ingestion (with the `ingest` feature): BEIR corpora, Markdown articles and text files as
/// records (the `braid-ingest` crate).
#[cfg(feature = "ingest")]
pub use braid_ingest as ingest;
/// The ONNX models (with the `models` feature): the bundled embedder and cross-encoder.
#[cfg(feature = "models")]
pub use braid_models as models;
pub use writer::{content_hash, Writer, WriterOptions, MIN_WRITER_HEAP, SUPPLIED_MODEL};
