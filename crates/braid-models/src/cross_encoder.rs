//! The cross-encoder: scores (query, passage) pairs jointly for the rerank stage.

use std::fmt;
use std::path::{Path, PathBuf};

use braid_core::{Error, Reranker, Result};

use crate::discovery::{find_model_dir, DEFAULT_RERANK_MODEL};
use crate::embedder::{config_usize, dir_label, read_config};
use crate::runtime::default_intra_threads;
use crate::session::ModelSession;
use crate::tokenize::{Encoded, TextTokenizer};

/// A [`Reranker`] running a BERT-style cross-encoder (such as ms-marco-MiniLM-L-6-v2) with
/// ONNX Runtime.
///
/// Each pair is encoded as `[CLS] query [SEP] passage [SEP]` with type ids 0…0 1…1; the output
/// `logits` (`float32 [batch, 1]`) is returned as the score, unchanged (apply a sigmoid for a
/// 0–1 value; the order is the same). Only the passage is truncated to fit; see
/// [`CrossEncoderBuilder::max_len`].
///
/// With a dynamically quantised (int8) model a pair's score depends slightly on what it is
/// batched with, because activation scales are chosen per batch; use an fp32 model where
/// scores must not depend on batching.
pub struct CrossEncoder {
    model_id: String,
    max_len: usize,
    max_passage_tokens: Option<usize>,
    batch_size: usize,
    tokenizer: TextTokenizer,
    session: ModelSession,
}

/// A (query, passage) pair as the cross-encoder sees it, before padding.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EncodedPair {
    /// `[CLS] query [SEP] passage [SEP]` as token ids.
    pub input_ids: Vec<i64>,
    /// 0 for `[CLS] query [SEP]`, 1 for `passage [SEP]`.
    pub token_type_ids: Vec<i64>,
}

/// Configures and loads a [`CrossEncoder`]. Every setting has a default; see each method.
#[derive(Debug, Clone)]
pub struct CrossEncoderBuilder {
    model_dir: Option<PathBuf>,
    model_name: String,
    onnx_file: String,
    max_len: usize,
    max_passage_tokens: Option<usize>,
    batch_size: usize,
    intra_threads: Option<usize>,
}

impl Default for CrossEncoderBuilder {
    fn default() -> Self {
        CrossEncoderBuilder {
            model_dir: None,
            model_name: DEFAULT_RERANK_MODEL.to_owned(),
            onnx_file: "model.onnx".to_owned(),
            max_len: 512,
            max_passage_tokens: None,
            batch_size: 16,
            intra_threads: None,
        }
    }
}

impl CrossEncoderBuilder {
    /// Loads the model from this directory. By default the directory is found with
    /// [`find_model_dir`] from the model name.
    pub fn model_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.model_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The model name used for discovery when no directory is given. By default
    /// [`DEFAULT_RERANK_MODEL`] (`ms-marco-MiniLM-L-6-v2`, not bundled).
    pub fn model_name(&mut self, name: &str) -> &mut Self {
        self.model_name = name.to_owned();
        self
    }

    /// The ONNX file inside the model directory. By default `model.onnx`.
    pub fn onnx_file(&mut self, file: &str) -> &mut Self {
        self.onnx_file = file.to_owned();
        self
    }

    /// The maximum tokens per pair, special tokens included. By default 512 (BERT's position
    /// table). The passage is cut to fit; the query is never cut unless it alone leaves no room
    /// for the passage, and then it keeps half of the budget. Cost grows with this length:
    /// 256 halves the time of long pairs.
    pub fn max_len(&mut self, tokens: usize) -> &mut Self {
        self.max_len = tokens;
        self
    }

    /// An extra cap on passage tokens, on top of `max_len`. By default none.
    pub fn max_passage_tokens(&mut self, tokens: usize) -> &mut Self {
        self.max_passage_tokens = Some(tokens);
        self
    }

    /// Pairs per inference call; each batch is padded to its longest pair. By default 16.
    pub fn batch_size(&mut self, pairs: usize) -> &mut Self {
        self.batch_size = pairs;
        self
    }

    /// ONNX Runtime intra-op threads for this model. By default
    /// [`default_intra_threads`](crate::default_intra_threads) (available parallelism).
    pub fn intra_threads(&mut self, threads: usize) -> &mut Self {
        self.intra_threads = Some(threads);
        self
    }

    /// Validates the settings, loads ONNX Runtime (if not yet loaded), the tokenizer and the
    /// model.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] for a zero batch size, thread count or passage budget, or an
    /// unusable `max_len`; [`Error::Model`] when the model directory, the ONNX file or the ONNX
    /// Runtime library cannot be found or loaded, or the model's inputs are not BERT's.
    pub fn build(&self) -> Result<CrossEncoder> {
        if self.batch_size == 0 {
            return Err(Error::invalid_request("cross-encoder batch_size must be at least 1"));
        }
        if self.max_passage_tokens == Some(0) {
            return Err(Error::invalid_request("cross-encoder max_passage_tokens must be at least 1"));
        }
        let threads = self.intra_threads.unwrap_or_else(default_intra_threads);
        if threads == 0 {
            return Err(Error::invalid_request("cross-encoder intra_threads must be at least 1"));
        }
        let dir = find_model_dir(self.model_dir.as_deref(), &self.model_name)?;
        let config = read_config(&dir)?;
        let tokenizer = TextTokenizer::from_dir(&dir)?;
        let min_len = tokenizer.pair_specials() + 2;
        let max_positions = config_usize(config.as_ref(), "max_position_embeddings");
        if self.max_len < min_len || max_positions.is_some_and(|max| self.max_len > max) {
            return Err(Error::invalid_request(format!(
                "cross-encoder max_len {} is outside {min_len}..={}",
                self.max_len,
                max_positions.map_or_else(|| "unbounded".to_owned(), |m| m.to_string())
            )));
        }
        let session = ModelSession::open(&dir.join(&self.onnx_file), threads, "logits")?;
        let model_id = format!("{}/{}", dir_label(&dir), self.onnx_file);
        tracing::debug!(target: "braid::models", model = %model_id, threads, "cross-encoder loaded");
        Ok(CrossEncoder {
            model_id,
            max_len: self.max_len,
            max_passage_tokens: self.max_passage_tokens,
            batch_size: self.batch_size,
            tokenizer,
            session,
        })
    }
}

impl CrossEncoder {
    /// A builder with the defaults: `ms-marco-MiniLM-L-6-v2` found by discovery,
    /// `model.onnx`, 512 tokens per pair, no extra passage cap, batches of 16, one intra-op
    /// thread per available core.
    pub fn builder() -> CrossEncoderBuilder {
        CrossEncoderBuilder::default()
    }

    /// The maximum tokens per pair (special tokens included).
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// Encodes one pair exactly as [`Reranker::score`] does (truncated, unpadded).
    ///
    /// # Errors
    /// [`Error::Model`] when tokenisation fails.
    pub fn encode_pair(&self, query: &str, passage: &str) -> Result<EncodedPair> {
        let mut pairs = self.tokenizer.encode_pairs(query, &[passage], self.max_len, self.max_passage_tokens)?;
        let Encoded { ids, type_ids } = pairs.remove(0);
        Ok(EncodedPair { input_ids: ids, token_type_ids: type_ids })
    }

    fn score_batch(&self, items: &[&Encoded]) -> Result<Vec<f32>> {
        let batch = self.tokenizer.pad(items);
        let rows = items.len();
        self.session.run(&batch, |shape, data| {
            if shape.first().is_none_or(|&b| b as usize != rows) || data.len() != rows {
                return Err(Error::Model { reason: format!("expected logits of shape [{rows}, 1], got {shape:?}") });
            }
            Ok(data.to_vec())
        })
    }
}

impl Reranker for CrossEncoder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    /// Scores `passages` against `query` in batches, shortest first (less padding), and
    /// returns the raw logits in input order. An empty slice gives an empty result.
    #[tracing::instrument(skip_all, target = "braid::models::rerank", fields(passages = passages.len()))]
    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>> {
        if passages.is_empty() {
            return Ok(Vec::new());
        }
        let encoded = self.tokenizer.encode_pairs(query, passages, self.max_len, self.max_passage_tokens)?;
        let mut order: Vec<usize> = (0..encoded.len()).collect();
        order.sort_by_key(|&i| encoded[i].ids.len());
        let mut out = vec![0f32; passages.len()];
        for chunk in order.chunks(self.batch_size) {
            let items: Vec<&Encoded> = chunk.iter().map(|&i| &encoded[i]).collect();
            for (&i, score) in chunk.iter().zip(self.score_batch(&items)?) {
                out[i] = score;
            }
        }
        Ok(out)
    }
}

impl fmt::Debug for CrossEncoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CrossEncoder")
            .field("model_id", &self.model_id)
            .field("max_len", &self.max_len)
            .field("max_passage_tokens", &self.max_passage_tokens)
            .field("batch_size", &self.batch_size)
            .finish_non_exhaustive()
    }
}
