//! `Mode::Auto`: lean on the legs that suit the query.
//!
//! The heuristic, applied on top of the request's weights. A content word (not a stop word)
//! is *misspelled* when no record the caller may see holds it but one holds a word within the
//! length-scaled edit distance (it has a "did you mean" suggestion). With `trust` the share of
//! content words that are not misspelled:
//! - **Misspelled words lean on fuzzy.** The lexical weight is multiplied by `trust²` and the
//!   semantic weight by `trust`; fuzzy keeps its weight. BM25 on "retun polcy" matches
//!   near-random records, and an embedding of misspelled words drifts, so neither may outvote
//!   the fuzzy leg's corrected matches. Squared for BM25: a typo that spells another known
//!   word still leaves BM25 chasing the wrong word.
//! - An unknown word *without* a near neighbour is vocabulary mismatch, not a typo: the
//!   weights stay, since that is where the semantic leg helps most.
//! - Queries with no content words keep the request's weights.
//!
//! Measured with `braid eval`: on clean queries `auto` equals `hybrid` on SciFact and NFCorpus
//! (every word is known), and on misspelled SciFact queries it recovers what plain RRF loses
//! (README, "Typos").

use braid_core::LegWeights;
use braid_lexical::QueryWord;

pub(crate) fn route(words: &[QueryWord], base: LegWeights) -> LegWeights {
    let content = words.iter().filter(|w| !w.stop_word).count();
    if content == 0 {
        return base;
    }
    let misspelled = words.iter().filter(|w| w.suggestion.is_some()).count() as f32;
    let trust = 1.0 - misspelled / content as f32;
    LegWeights { lexical: base.lexical * trust * trust, fuzzy: base.fuzzy, semantic: base.semantic * trust }
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
    fn misspelled_words_shift_weight_to_fuzzy() {
        let base = LegWeights::default();
        assert_eq!(route(&[word("return", 5, false, None), word("policy", 3, false, None)], base), base);
        let w = route(
            &[word("retun", 0, false, Some("return")), word("policy", 3, false, None), word("the", 9, true, None)],
            base,
        );
        assert!((w.lexical - 0.25).abs() < 1e-6 && (w.semantic - 0.5).abs() < 1e-6 && w.fuzzy == 1.0);
        // An unknown word with no near neighbour is vocabulary mismatch, not a typo.
        assert_eq!(route(&[word("zyzzyva", 0, false, None)], base), base);
        assert_eq!(route(&[word("the", 9, true, None)], base), base);
        assert_eq!(route(&[], base), base);
    }
}
