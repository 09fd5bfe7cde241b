//! `Mode::Auto`: the blend's parameters chosen by what the index observes about the query.
//!
//! One signal, the one the legs disagree on most: whether a word of the query is
//! *misspelled* — no record the caller may see holds it, but one holds a word within the
//! length-scaled edit distance (it has a "did you mean" suggestion, exactly the response's
//! `suggestions`). A misspelled
//! query is fused with [`TYPO_BLEND`], every other query with [`BlendParams::DEFAULT`] (what
//! `hybrid` uses). Both parameter sets are fitted by `scripts/fit.sh` on training splits only
//! (SciFact `train`, NFCorpus `dev`, clean and with real misspellings): the default on every
//! query, the typo set on the queries this signal flags. The request's leg weights apply
//! unchanged; with a fusion other than blend, `auto` is `hybrid`.
//!
//! The earlier hand-set rules (identifier lookups lean on BM25, long questions on the
//! semantic leg, weights scaled by the share of correct words) were tuned on this project's
//! own help center; on public training data they did not beat the fitted blend and were
//! dropped (docs/ranking.md).

use braid_core::LegWeights;
use braid_fusion::{BlendParams, Normalisation};
use braid_lexical::QueryWord;

/// The blend for queries with a misspelled word: fitted by `scripts/fit.sh` on the training
/// queries flagged as misspelled (docs/ranking.md).
pub(crate) const TYPO_BLEND: BlendParams =
    BlendParams { normalisation: Normalisation::Dbsf, semantic_share: 0.5, fuzzy_factor: 1.0 };

/// The leg weights and blend parameters `auto` fuses this query with.
pub(crate) fn route(words: &[QueryWord], base: LegWeights) -> (LegWeights, BlendParams) {
    (base, if misspelled(words) { TYPO_BLEND } else { BlendParams::DEFAULT })
}

/// Whether a word of the query has a "did you mean" suggestion.
pub(crate) fn misspelled(words: &[QueryWord]) -> bool {
    words.iter().any(|w| w.suggestion.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use braid_core::Suggestion;

    fn word(w: &str, df: usize, stop: bool, fix: Option<&str>) -> QueryWord {
        let suggestion = fix.map(|s| Suggestion { term: w.into(), suggestion: s.into(), distance: 1 });
        QueryWord { word: w.into(), visible_df: df, stop_word: stop, suggestion }
    }

    #[test]
    fn misspelled_queries_get_the_typo_blend() {
        let base = LegWeights::default();
        let clean = [word("return", 5, false, None), word("policy", 3, false, None)];
        assert_eq!(route(&clean, base), (base, BlendParams::DEFAULT));
        let typo =
            [word("retun", 0, false, Some("return")), word("policy", 3, false, None), word("the", 9, true, None)];
        assert_eq!(route(&typo, base), (base, TYPO_BLEND));
        // An unknown word with no near neighbour is vocabulary mismatch, not a typo.
        assert_eq!(route(&[word("zyzzyva", 0, false, None)], base).1, BlendParams::DEFAULT);
        assert_eq!(route(&[], base).1, BlendParams::DEFAULT);
        let weights = LegWeights { lexical: 2.0, fuzzy: 0.5, semantic: 1.0 };
        assert_eq!(route(&typo, weights).0, weights);
    }
}
