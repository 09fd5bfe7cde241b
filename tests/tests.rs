//! Integration tests of the `braid` facade: one binary, a module per concern.
//!
//! Modules that need the ONNX models, jieba/pinyin or the ingestion crate are compiled with
//! their features only; the semantic leg is tested in every build (`semantic_paths`, `crash`,
//! `leaks`, `noninterference` use the deterministic `HashEmbedder` where ONNX Runtime is not
//! built in), so `cargo test -p braid --no-default-features` runs it too.

#[cfg(feature = "ingest")]
mod boosts;
mod budget;
mod bulk;
#[cfg(all(feature = "cjk", feature = "models", feature = "ingest"))]
mod cjk;
mod common;
mod crash;
mod diversity;
mod engine_shape;
#[cfg(feature = "ingest")]
mod facets;
mod fail_closed;
#[cfg(feature = "ingest")]
mod fanout;
mod features;
mod group_commit;
#[cfg(feature = "ingest")]
mod helpcenter;
mod hostile_input;
mod leaks;
mod lifecycle;
mod memory;
mod noninterference;
mod outline;
#[cfg(feature = "ingest")]
mod paging;
mod partitions;
mod permissions;
#[cfg(feature = "ingest")]
mod quality;
mod recall;
#[cfg(feature = "models")]
mod rerank;
#[cfg(feature = "ingest")]
mod search_box;
#[cfg(all(feature = "ingest", feature = "models"))]
mod seed_examples;
#[cfg(feature = "models")]
mod semantic;
mod semantic_paths;
mod supplied_vectors;
mod tidy;
mod tool_catalogue;
mod vocabulary_file;
