//! `Mode::Auto`: lean on the legs that suit the query.
//!
//! The heuristic, applied on top of the request's weights:
//! - **Misspelled words lean on fuzzy.** The lexical leg's weight is multiplied by the square
//!   of the share of the query's content words (not stop words) that occur in records the
//!   caller may see (squared: a typo that happens to spell another known word still leaves
//!   BM25 chasing the wrong word, so partial coverage is weak evidence). A
//!   query whose every word is known keeps full weight; "retun polcy" gives BM25 no weight, so
//!   its near-random matches cannot outvote the fuzzy leg's corrected ones.
//! - Queries with no content words keep the request's weights.
//!
//! Measured with `braid eval`: on clean queries `auto` equals `hybrid` on SciFact and NFCorpus
//! (every word is known), and on misspelled SciFact queries it recovers what plain RRF loses
//! (README, "Typos").

use braid_core::LegWeights;
use braid_lexical::QueryWord;

pub(crate) fn route(words: &[QueryWord], base: LegWeights) -> LegWeights {
    let content: Vec<&QueryWord> = words.iter().filter(|w| !w.stop_word).collect();
    if content.is_empty() {
        return base;
    }
    let known = content.iter().filter(|w| w.visible_df > 0).count() as f32;
    let coverage = known / content.len() as f32;
    LegWeights { lexical: base.lexical * coverage * coverage, ..base }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(w: &str, df: usize, stop: bool) -> QueryWord {
        QueryWord { word: w.into(), visible_df: df, stop_word: stop }
    }

    #[test]
    fn unknown_words_shift_weight_from_lexical() {
        let base = LegWeights::default();
        assert_eq!(route(&[word("return", 5, false), word("policy", 3, false)], base), base);
        let w = route(&[word("retun", 0, false), word("policy", 3, false), word("the", 9, true)], base);
        assert!((w.lexical - 0.25).abs() < 1e-6 && w.fuzzy == 1.0);
        assert_eq!(route(&[word("the", 9, true)], base), base);
        assert_eq!(route(&[], base), base);
    }
}
