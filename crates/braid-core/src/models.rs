//! The model interfaces. Implementations live in `braid-models` (ONNX Runtime); this crate
//! stays free of heavy dependencies.

use crate::{Language, Result};

/// A bi-encoder: turns texts into vectors whose dot product measures relatedness.
pub trait Embedder: Send + Sync {
    /// A stable identifier of the model (used to refuse mixing vectors of different models).
    fn model_id(&self) -> &str;

    /// The number of dimensions of each vector.
    fn dim(&self) -> usize;

    /// Embeds a batch of texts; the output has one L2-normalised vector per input.
    ///
    /// # Errors
    /// Fails when the model cannot run (for example the ONNX Runtime library is missing).
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;

    /// The languages the model was trained for; `None` (the default) when it does not say,
    /// and then it is used for every text.
    fn languages(&self) -> Option<&[Language]> {
        None
    }

    /// Whether the model understands text in `language`. Only CJK languages are ever
    /// refused: text detected as [`Language::Other`] (Latin script without a `lang`) is
    /// always embedded, since detection does not tell Latin languages apart.
    fn covers(&self, language: Language) -> bool {
        !language.is_cjk() || self.languages().is_none_or(|l| l.contains(&language))
    }

    /// The number of tokens the model's tokenizer makes of `text`, special tokens excluded;
    /// `None` (the default) when the embedder has no tokenizer to count with. What
    /// [`crate::SearchRequest::token_budget`] counts in.
    fn count_tokens(&self, text: &str) -> Option<usize> {
        let _ = text;
        None
    }
}

/// A cross-encoder: scores (query, passage) pairs jointly; higher is more relevant.
pub trait Reranker: Send + Sync {
    /// A stable identifier of the model.
    fn model_id(&self) -> &str;

    /// Scores each passage against the query, in input order.
    ///
    /// # Errors
    /// Fails when the model cannot run.
    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>>;
}
