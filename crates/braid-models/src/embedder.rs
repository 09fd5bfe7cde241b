//! The bi-encoder: texts to L2-normalised vectors (mean pooling over the attention mask).

use std::fmt;
use std::path::{Path, PathBuf};

use braid_core::{Embedder, Error, Language, Result};

use crate::discovery::{find_model_dir, DEFAULT_EMBEDDING_MODEL};
use crate::runtime::default_intra_threads;
use crate::session::ModelSession;
use crate::tokenize::{Encoded, TextTokenizer};

/// An [`Embedder`] running a BERT-style bi-encoder (such as all-MiniLM-L6-v2) with ONNX
/// Runtime.
///
/// Inputs are `input_ids`, `attention_mask` and `token_type_ids` (`int64 [batch, sequence]`,
/// type ids all 0); the output `last_hidden_state` (`float32 [batch, sequence, dim]`) is
/// mean-pooled over the attention mask and L2-normalised, so the dot product of two vectors
/// is their cosine similarity. Texts longer than the maximum sequence length are truncated.
///
/// Build one with [`OnnxEmbedder::builder`]. It is `Send + Sync`; concurrent calls are
/// serialised on the model's session.
pub struct OnnxEmbedder {
    model_id: String,
    dim: usize,
    max_seq_len: usize,
    batch_size: usize,
    tokenizer: TextTokenizer,
    session: ModelSession,
    languages: Option<Vec<Language>>,
}

/// Model families trained on English text only (sentence-transformers' English models): an
/// index does not use them for Chinese, Japanese or Korean text.
const ENGLISH_ONLY: [&str; 5] = ["all-MiniLM-", "all-mpnet-", "all-distilroberta-", "msmarco-", "multi-qa-"];

/// The languages a model directory's name says the model covers: English for the English
/// sentence-transformers families, `None` (every language) otherwise.
fn known_languages(dir_name: &str) -> Option<Vec<Language>> {
    ENGLISH_ONLY.iter().any(|p| dir_name.starts_with(p)).then(|| vec![Language::En])
}

/// Configures and loads an [`OnnxEmbedder`]. Every setting has a default; see each method.
#[derive(Debug, Clone)]
pub struct OnnxEmbedderBuilder {
    model_dir: Option<PathBuf>,
    model_name: String,
    onnx_file: String,
    max_seq_len: usize,
    batch_size: usize,
    intra_threads: Option<usize>,
    languages: Option<Vec<Language>>,
}

impl Default for OnnxEmbedderBuilder {
    fn default() -> Self {
        OnnxEmbedderBuilder {
            model_dir: None,
            model_name: DEFAULT_EMBEDDING_MODEL.to_owned(),
            onnx_file: "model.onnx".to_owned(),
            max_seq_len: 256,
            batch_size: 32,
            intra_threads: None,
            languages: None,
        }
    }
}

impl OnnxEmbedderBuilder {
    /// Loads the model from this directory. By default the directory is found with
    /// [`find_model_dir`] from the model name.
    pub fn model_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.model_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The model name used for discovery when no directory is given. By default
    /// [`DEFAULT_EMBEDDING_MODEL`] (`all-MiniLM-L6-v2`).
    pub fn model_name(&mut self, name: &str) -> &mut Self {
        self.model_name = name.to_owned();
        self
    }

    /// The ONNX file inside the model directory. By default `model.onnx`; all-MiniLM-L6-v2
    /// also ships `model_int8.onnx` (a quarter of the size, not faster without VNNI).
    pub fn onnx_file(&mut self, file: &str) -> &mut Self {
        self.onnx_file = file.to_owned();
        self
    }

    /// The maximum tokens per text, special tokens included; longer texts are truncated.
    /// By default 256 (all-MiniLM-L6-v2's `max_seq_length`), overriding the 128 baked into
    /// its `tokenizer.json`.
    pub fn max_seq_len(&mut self, tokens: usize) -> &mut Self {
        self.max_seq_len = tokens;
        self
    }

    /// Texts per inference call; each batch is padded to its longest text. By default 32.
    pub fn batch_size(&mut self, texts: usize) -> &mut Self {
        self.batch_size = texts;
        self
    }

    /// ONNX Runtime intra-op threads for this model. By default
    /// [`default_intra_threads`](crate::default_intra_threads) (available parallelism).
    pub fn intra_threads(&mut self, threads: usize) -> &mut Self {
        self.intra_threads = Some(threads);
        self
    }

    /// The languages the model covers (see [`Embedder::languages`]). By default they come from
    /// the model's name: English for the English-only sentence-transformers families
    /// (`all-MiniLM-*`, `all-mpnet-*`, `msmarco-*`, …), otherwise unrestricted, so a
    /// multilingual model is used for Chinese records and queries without any setting.
    pub fn languages(&mut self, languages: &[Language]) -> &mut Self {
        self.languages = Some(languages.to_vec());
        self
    }

    /// Validates the settings, loads ONNX Runtime (if not yet loaded), the tokenizer and the
    /// model.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] for a zero batch size or thread count or an unusable
    /// `max_seq_len`; [`Error::Model`] when the model directory, the ONNX file or the ONNX
    /// Runtime library cannot be found or loaded, or the model's inputs are not BERT's.
    pub fn build(&self) -> Result<OnnxEmbedder> {
        if self.batch_size == 0 {
            return Err(Error::invalid_request("embedder batch_size must be at least 1"));
        }
        let threads = self.intra_threads.unwrap_or_else(default_intra_threads);
        if threads == 0 {
            return Err(Error::invalid_request("embedder intra_threads must be at least 1"));
        }
        let dir = find_model_dir(self.model_dir.as_deref(), &self.model_name)?;
        let config = read_config(&dir)?;
        let tokenizer = TextTokenizer::from_dir(&dir)?;
        let min_len = tokenizer.single_specials() + 1;
        let max_positions = config_usize(config.as_ref(), "max_position_embeddings");
        if self.max_seq_len < min_len || max_positions.is_some_and(|max| self.max_seq_len > max) {
            return Err(Error::invalid_request(format!(
                "embedder max_seq_len {} is outside {min_len}..={}",
                self.max_seq_len,
                max_positions.map_or_else(|| "unbounded".to_owned(), |m| m.to_string())
            )));
        }
        let session = ModelSession::open(&dir.join(&self.onnx_file), threads, "last_hidden_state")?;
        let declared = session.output_dims();
        let dim = match declared.last() {
            Some(&d) if declared.len() == 3 && d > 0 => d as usize,
            _ => config_usize(config.as_ref(), "hidden_size").ok_or_else(|| Error::Model {
                reason: format!(
                    "cannot tell the embedding dimension of {}: the output shape is dynamic and config.json has no hidden_size",
                    dir.display()
                ),
            })?,
        };
        let model_id = format!("{}/{}", dir_label(&dir), self.onnx_file);
        let languages = self.languages.clone().or_else(|| known_languages(&dir_label(&dir)));
        tracing::debug!(target: "braid::models", model = %model_id, dim, threads, "embedder loaded");
        Ok(OnnxEmbedder {
            model_id,
            dim,
            max_seq_len: self.max_seq_len,
            batch_size: self.batch_size,
            tokenizer,
            session,
            languages,
        })
    }
}

impl OnnxEmbedder {
    /// A builder with the defaults: all-MiniLM-L6-v2 found by discovery, `model.onnx`,
    /// 256 tokens, batches of 32, one intra-op thread per available core.
    pub fn builder() -> OnnxEmbedderBuilder {
        OnnxEmbedderBuilder::default()
    }

    /// The maximum tokens per text (special tokens included).
    pub fn max_seq_len(&self) -> usize {
        self.max_seq_len
    }

    /// The token ids each text is turned into (truncated, unpadded), for inspection.
    ///
    /// # Errors
    /// [`Error::Model`] when tokenisation fails.
    pub fn token_ids(&self, texts: &[&str]) -> Result<Vec<Vec<i64>>> {
        Ok(self.tokenizer.encode_singles(texts, self.max_seq_len)?.into_iter().map(|e| e.ids).collect())
    }

    fn embed_batch(&self, items: &[&Encoded]) -> Result<Vec<Vec<f32>>> {
        let batch = self.tokenizer.pad(items);
        let mask = &batch.attention_mask;
        self.session.run(&batch, |shape, data| {
            let (rows, cols) = mask.dim();
            if shape.len() != 3 || shape[0] as usize != rows || shape[1] as usize != cols {
                return Err(Error::Model {
                    reason: format!("unexpected output shape {shape:?} for a batch of {rows}x{cols}"),
                });
            }
            let hidden = shape[2] as usize;
            if hidden != self.dim {
                return Err(Error::DimensionMismatch { expected: self.dim, got: hidden });
            }
            Ok((0..rows)
                .map(|r| {
                    let mut sum = vec![0f32; hidden];
                    let mut count = 0f32;
                    for c in 0..cols {
                        if mask[[r, c]] == 1 {
                            let start = (r * cols + c) * hidden;
                            for (s, x) in sum.iter_mut().zip(&data[start..start + hidden]) {
                                *s += x;
                            }
                            count += 1.0;
                        }
                    }
                    let count = count.max(1e-9);
                    sum.iter_mut().for_each(|s| *s /= count);
                    let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
                    sum.iter_mut().for_each(|s| *s /= norm);
                    sum
                })
                .collect())
        })
    }
}

impl Embedder for OnnxEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn languages(&self) -> Option<&[Language]> {
        self.languages.as_deref()
    }

    /// Counts with the model's own tokenizer (`None` only if it fails on the text).
    fn count_tokens(&self, text: &str) -> Option<usize> {
        self.tokenizer.count(text).ok()
    }

    /// Embeds `texts` in batches, shortest first (less padding), and returns the vectors in
    /// input order. An empty slice gives an empty result; an empty text is embedded as
    /// `[CLS] [SEP]`.
    #[tracing::instrument(skip_all, target = "braid::models::embed", fields(texts = texts.len()))]
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encoded = self.tokenizer.encode_singles(texts, self.max_seq_len)?;
        let mut order: Vec<usize> = (0..encoded.len()).collect();
        order.sort_by_key(|&i| encoded[i].ids.len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(self.batch_size) {
            let items: Vec<&Encoded> = chunk.iter().map(|&i| &encoded[i]).collect();
            for (&i, vector) in chunk.iter().zip(self.embed_batch(&items)?) {
                out[i] = vector;
            }
        }
        Ok(out)
    }
}

impl fmt::Debug for OnnxEmbedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnnxEmbedder")
            .field("model_id", &self.model_id)
            .field("dim", &self.dim)
            .field("max_seq_len", &self.max_seq_len)
            .field("batch_size", &self.batch_size)
            .finish_non_exhaustive()
    }
}

/// `config.json` of a model directory, when present.
pub(crate) fn read_config(dir: &Path) -> Result<Option<serde_json::Value>> {
    let path = dir.join("config.json");
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| Error::model_failed(format!("cannot parse {}", path.display()), e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// A non-negative integer field of `config.json`.
pub(crate) fn config_usize(config: Option<&serde_json::Value>, key: &str) -> Option<usize> {
    config?.get(key)?.as_u64().and_then(|v| usize::try_from(v).ok())
}

/// The last component of a model directory, for model ids.
pub(crate) fn dir_label(dir: &Path) -> String {
    dir.file_name().map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_families_are_declared_english() {
        assert_eq!(known_languages("all-MiniLM-L6-v2"), Some(vec![Language::En]));
        assert_eq!(known_languages("paraphrase-multilingual-MiniLM-L12-v2"), None);
    }
}
