//! ONNX models for Braid: a bi-encoder [`OnnxEmbedder`] for the semantic recall leg and a
//! cross-encoder [`CrossEncoder`] for the rerank stage, both running on ONNX Runtime through
//! `ort`, with tokenisation by Hugging Face `tokenizers`.
//!
//! The roles:
//! - [`init_runtime`] loads the ONNX Runtime shared library once per process. It is linked
//!   dynamically; `bash scripts/setup-onnxruntime.sh` installs it where this crate looks.
//! - [`find_model_dir`] locates a model directory (`tokenizer.json` plus an `.onnx` file):
//!   explicit path, `BRAID_MODEL_DIR`, the model cache, then `$BRAID_SHARED/models` or,
//!   without `BRAID_SHARED`, `shared/models` above the current directory.
//! - [`OnnxEmbedder`] implements [`braid_core::Embedder`]: mean pooling over the attention
//!   mask, then L2 normalisation, so the dot product of two vectors is their cosine.
//! - [`CrossEncoder`] implements [`braid_core::Reranker`]: scores `[CLS] query [SEP]
//!   passage [SEP]` pairs, truncating only the passage, and returns the raw logit.
//!
//! Nothing here panics on user input: a missing library or model is an
//! [`Error::Model`](braid_core::Error::Model) that says how to fix it.
//!
//! ```
//! use braid_core::Embedder;
//! use braid_models::OnnxEmbedder;
//!
//! # fn main() -> braid_core::Result<()> {
//! // Finds all-MiniLM-L6-v2 by discovery and loads ONNX Runtime on first use.
//! let embedder = OnnxEmbedder::builder().build()?;
//! let vectors = embedder.embed(&["how do I reset my password?"])?;
//! assert_eq!(vectors[0].len(), embedder.dim());
//! # Ok(())
//! # }
//! ```
//!
//! # Threads
//!
//! Each model owns one ONNX Runtime session whose intra-op thread pool defaults to
//! [`default_intra_threads`] (the machine's available parallelism); set it per model with
//! `intra_threads(n)` on the builders. Calls on one model are serialised (the session is
//! behind a mutex), so for parallel throughput build one model per worker with fewer
//! threads each rather than sharing one model between many threads.
#![deny(missing_docs)]

mod cross_encoder;
mod discovery;
mod embedder;
#[cfg(feature = "fetch")]
mod fetch;
mod runtime;
mod session;
mod tokenize;

pub use cross_encoder::{CrossEncoder, CrossEncoderBuilder, EncodedPair};
pub use discovery::{find_model_dir, DEFAULT_EMBEDDING_MODEL, DEFAULT_RERANK_MODEL, MODEL_DIR_ENV, SHARED_DIR_ENV};
pub use embedder::{OnnxEmbedder, OnnxEmbedderBuilder};
#[cfg(feature = "fetch")]
pub use fetch::{fetch_model, fetch_model_from, HF_ENDPOINT_ENV};
pub use runtime::{default_intra_threads, init_runtime, ORT_INSTALL_HINT};
