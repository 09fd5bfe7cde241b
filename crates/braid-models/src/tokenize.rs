//! Tokenisation shared by the embedder and the cross-encoder: loading `tokenizer.json`
//! without its baked-in padding/truncation, single and pair encodings, batch padding.

use std::path::Path;

use braid_core::{Error, Result};
use ndarray::Array2;
use tokenizers::{Encoding, PostProcessor, Tokenizer, TruncationDirection};

/// One encoded input, before padding (its attention mask is all ones).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Encoded {
    pub(crate) ids: Vec<i64>,
    pub(crate) type_ids: Vec<i64>,
}

/// A padded batch, ready for the three model inputs.
pub(crate) struct Batch {
    pub(crate) input_ids: Array2<i64>,
    pub(crate) attention_mask: Array2<i64>,
    pub(crate) token_type_ids: Array2<i64>,
}

/// A `tokenizers` tokenizer with Braid's own truncation and padding.
pub(crate) struct TextTokenizer {
    inner: Tokenizer,
    pad_id: u32,
    single_specials: usize,
    pair_specials: usize,
}

impl TextTokenizer {
    /// Loads `dir/tokenizer.json`, dropping its fixed padding and truncation (all-MiniLM-L6-v2
    /// ships `Fixed(128)` padding and 128-token truncation): Braid truncates per model and pads
    /// each batch to its longest input.
    pub(crate) fn from_dir(dir: &Path) -> Result<Self> {
        let path = dir.join("tokenizer.json");
        if !path.is_file() {
            return Err(Error::Model { reason: format!("{} is missing", path.display()) });
        }
        let mut inner = Tokenizer::from_file(&path)
            .map_err(|e| Error::model_failed(format!("cannot load {}", path.display()), e))?;
        let pad_id = inner.get_padding().map(|p| p.pad_id).or_else(|| inner.token_to_id("[PAD]")).unwrap_or(0);
        inner.with_padding(None);
        inner
            .with_truncation(None)
            .map_err(|e| Error::model_failed(format!("cannot configure {}", path.display()), e))?;
        let (single_specials, pair_specials) = match inner.get_post_processor() {
            Some(pp) => (pp.added_tokens(false), pp.added_tokens(true)),
            None => (0, 0),
        };
        Ok(TextTokenizer { inner, pad_id, single_specials, pair_specials })
    }

    /// The tokens of `text`, without special tokens or truncation.
    pub(crate) fn count(&self, text: &str) -> Result<usize> {
        Ok(self.inner.encode_fast(text, false).map_err(tokenisation_failed)?.len())
    }

    /// The special tokens added around a pair (3 for BERT: `[CLS] a [SEP] b [SEP]`).
    pub(crate) fn pair_specials(&self) -> usize {
        self.pair_specials
    }

    /// The special tokens added around a single text (2 for BERT).
    pub(crate) fn single_specials(&self) -> usize {
        self.single_specials
    }

    /// Encodes texts one by one, each truncated to `max_len` tokens including special tokens.
    pub(crate) fn encode_singles(&self, texts: &[&str], max_len: usize) -> Result<Vec<Encoded>> {
        let budget = max_len.saturating_sub(self.single_specials);
        let raw = self.inner.encode_batch_fast(texts.to_vec(), false).map_err(tokenisation_failed)?;
        raw.into_iter()
            .map(|mut enc| {
                if enc.len() > budget {
                    enc.truncate(budget, 0, TruncationDirection::Right);
                }
                self.finish(enc, None)
            })
            .collect()
    }

    /// Encodes `(query, passage)` pairs as `[CLS] query [SEP] passage [SEP]` with type ids
    /// 0…0 1…1, at most `max_len` tokens each.
    ///
    /// Only the passage is truncated, to fit `max_len` and at most `max_passage_tokens`. The
    /// query is kept whole unless it alone leaves no room for a passage token; then it is cut
    /// to half of the budget left after the special tokens.
    pub(crate) fn encode_pairs(
        &self,
        query: &str,
        passages: &[&str],
        max_len: usize,
        max_passage_tokens: Option<usize>,
    ) -> Result<Vec<Encoded>> {
        let budget = max_len.saturating_sub(self.pair_specials);
        let mut q = self.inner.encode_fast(query, false).map_err(tokenisation_failed)?;
        if q.len() >= budget {
            q.truncate(budget / 2, 0, TruncationDirection::Right);
        }
        let passage_budget = (budget - q.len()).min(max_passage_tokens.unwrap_or(usize::MAX));
        let raw = self.inner.encode_batch_fast(passages.to_vec(), false).map_err(tokenisation_failed)?;
        raw.into_iter()
            .map(|mut p| {
                if p.len() > passage_budget {
                    p.truncate(passage_budget, 0, TruncationDirection::Right);
                }
                self.finish(q.clone(), Some(p))
            })
            .collect()
    }

    /// Adds the special tokens and type ids with the tokenizer's post-processor.
    fn finish(&self, first: Encoding, second: Option<Encoding>) -> Result<Encoded> {
        let enc = self.inner.post_process(first, second, true).map_err(tokenisation_failed)?;
        Ok(Encoded {
            ids: enc.get_ids().iter().map(|&x| i64::from(x)).collect(),
            type_ids: enc.get_type_ids().iter().map(|&x| i64::from(x)).collect(),
        })
    }

    /// Pads `items` to the longest of them: pad id, type id 0, attention 0.
    pub(crate) fn pad(&self, items: &[&Encoded]) -> Batch {
        let rows = items.len();
        let cols = items.iter().map(|e| e.ids.len()).max().unwrap_or(0);
        let mut input_ids = Array2::from_elem((rows, cols), i64::from(self.pad_id));
        let mut attention_mask = Array2::zeros((rows, cols));
        let mut token_type_ids = Array2::zeros((rows, cols));
        for (r, e) in items.iter().enumerate() {
            for (c, (&id, &ty)) in e.ids.iter().zip(&e.type_ids).enumerate() {
                input_ids[[r, c]] = id;
                attention_mask[[r, c]] = 1;
                token_type_ids[[r, c]] = ty;
            }
        }
        Batch { input_ids, attention_mask, token_type_ids }
    }
}

/// The error of a tokenizer call that failed, with the tokenizer's error as its source.
fn tokenisation_failed(e: tokenizers::Error) -> Error {
    Error::model_failed("tokenisation failed", e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::find_model_dir;

    fn tokenizer() -> TextTokenizer {
        // cargo runs unit tests in the package root, so the walk for shared/ starts there.
        let dir = find_model_dir(None, "all-MiniLM-L6-v2").expect("shared/models/all-MiniLM-L6-v2");
        TextTokenizer::from_dir(&dir).unwrap()
    }

    #[test]
    fn single_encoding_ignores_baked_in_128_limits() {
        let tok = tokenizer();
        let long = "word ".repeat(400);
        let enc = tok.encode_singles(&[&long, "", "hi"], 256).unwrap();
        assert_eq!(enc[0].ids.len(), 256);
        assert_eq!((enc[0].ids[0], enc[0].ids[255]), (101, 102));
        assert_eq!(enc[1].ids, vec![101, 102], "empty text is [CLS] [SEP]");
        assert_eq!(enc[2].ids.len(), 3, "no fixed padding");
        let batch = tok.pad(&[&enc[1], &enc[2]]);
        assert_eq!(batch.input_ids.shape(), &[2, 3]);
        assert_eq!(batch.input_ids[[0, 2]], 0);
        assert_eq!(batch.attention_mask.row(0).to_vec(), vec![1, 1, 0]);
    }

    #[test]
    fn pair_truncation_cuts_only_the_passage() {
        let tok = tokenizer();
        let query = "how many people live in berlin";
        let q_ids = tok.encode_singles(&[query], 512).unwrap().remove(0).ids;
        let q_core = &q_ids[1..q_ids.len() - 1];
        let passage = "berlin is big. ".repeat(300);
        let enc = tok.encode_pairs(query, &[&passage], 64, None).unwrap().remove(0);
        assert_eq!(enc.ids.len(), 64);
        assert_eq!(&enc.ids[1..1 + q_core.len()], q_core);
        assert_eq!(enc.type_ids.iter().filter(|&&t| t == 0).count(), q_core.len() + 2);
        assert_eq!(*enc.ids.last().unwrap(), 102);

        let capped = tok.encode_pairs(query, &[&passage], 512, Some(10)).unwrap().remove(0);
        assert_eq!(capped.ids.len(), q_core.len() + 3 + 10);
    }

    #[test]
    fn an_overlong_query_is_cut_to_half_the_budget() {
        let tok = tokenizer();
        let query = "question ".repeat(100);
        let enc = tok.encode_pairs(&query, &["short passage"], 32, None).unwrap().remove(0);
        assert!(enc.ids.len() <= 32);
        let query_tokens = enc.type_ids.iter().filter(|&&t| t == 0).count() - 2;
        assert_eq!(query_tokens, (32 - 3) / 2);
        assert!(enc.type_ids.iter().filter(|&&t| t == 1).count() >= 3, "passage survives");
    }
}
