//! `Mode::Auto`: lean on the legs that suit the query.
//!
//! The heuristic, applied on top of the request's weights.
//!
//! - **Code lookups lean on BM25.** A query of at most four words with an identifier in it
//!   (a digit, an underscore, `FBX-KEY`-style capitals, an acronym: `HTTP 451`,
//!   `order 202610020001`, `Go 1.22`, `E_TOKEN_EXPIRED`) doubles the lexical weight and halves
//!   fuzzy (codes must not be "corrected") and semantic (embeddings blur identifiers).
//! - **Long questions lean on the semantic leg.** Six words or more, ending in `?` or opening
//!   with a question word (`how`, `can`, `does`, …): semantic weight × 1.5.
//!
//! Then, for misspellings: a content word (not a stop word)
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
//! Measured with `braid eval` (README): `auto` is at or above plain RRF (`hybrid`) on SciFact
//! (0.7160 vs 0.7150), NFCorpus (0.3560 vs 0.3552) and the help center (0.9464 vs 0.9435), and
//! on misspelled SciFact queries it recovers most of what plain RRF loses (0.6486 vs 0.5070).

use braid_core::LegWeights;
use braid_lexical::QueryWord;

/// Queries of at most this many words can be lookups of a code.
const MAX_CODE_QUERY_WORDS: usize = 4;
/// Questions of at least this many words lean on the semantic leg.
const MIN_QUESTION_WORDS: usize = 6;
/// How much a code lookup leans on BM25 (and away from fuzzy and semantic).
const CODE_LEAN: f32 = 2.0;
/// How much a natural question leans on the semantic leg.
const QUESTION_LEAN: f32 = 1.5;

/// What the query looks like, from its raw text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A short lookup of an identifier: `HTTP 451`, `order 202610020001`, `E_TOKEN_EXPIRED`.
    Code,
    /// A long question in natural language.
    Question,
    /// Anything else.
    Plain,
}

pub(crate) fn shape(query: &str) -> Shape {
    let tokens: Vec<&str> = query
        .split_whitespace()
        .map(|t| t.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|t| !t.is_empty())
        .collect();
    if tokens.is_empty() {
        return Shape::Plain;
    }
    if tokens.len() <= MAX_CODE_QUERY_WORDS && tokens.iter().any(|t| code_like(t)) {
        return Shape::Code;
    }
    const OPENERS: [&str; 20] = [
        "how", "what", "why", "when", "where", "which", "who", "can", "could", "do", "does", "did", "is", "are",
        "should", "will", "would", "i", "my", "has",
    ];
    let first = tokens[0].to_lowercase();
    if tokens.len() >= MIN_QUESTION_WORDS && (query.trim_end().ends_with('?') || OPENERS.contains(&first.as_str())) {
        return Shape::Question;
    }
    Shape::Plain
}

/// A token that names something rather than says something: it has a digit, an underscore,
/// or letters joined by `-`/`.` with capitals (`FBX-KEY`), or is an upper-case acronym.
fn code_like(token: &str) -> bool {
    let letters = token.chars().filter(|c| c.is_alphabetic()).count();
    token.chars().any(|c| c.is_ascii_digit())
        || token.contains('_')
        || (token.contains(['-', '.']) && token.chars().any(|c| c.is_uppercase()))
        || (letters >= 2 && token.chars().all(|c| c.is_ascii_uppercase()))
}

pub(crate) fn route(query: &str, words: &[QueryWord], base: LegWeights) -> LegWeights {
    let mut w = base;
    match shape(query) {
        Shape::Code => {
            w.lexical *= CODE_LEAN;
            w.fuzzy /= CODE_LEAN;
            w.semantic /= CODE_LEAN;
        }
        Shape::Question => w.semantic *= QUESTION_LEAN,
        Shape::Plain => {}
    }
    let content = words.iter().filter(|w| !w.stop_word).count();
    if content == 0 {
        return w;
    }
    let misspelled = words.iter().filter(|w| w.suggestion.is_some()).count() as f32;
    let trust = 1.0 - misspelled / content as f32;
    LegWeights { lexical: w.lexical * trust * trust, fuzzy: w.fuzzy, semantic: w.semantic * trust }
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
        assert_eq!(
            route("return policy", &[word("return", 5, false, None), word("policy", 3, false, None)], base),
            base
        );
        let w = route(
            "the retun policy",
            &[word("retun", 0, false, Some("return")), word("policy", 3, false, None), word("the", 9, true, None)],
            base,
        );
        assert!((w.lexical - 0.25).abs() < 1e-6 && (w.semantic - 0.5).abs() < 1e-6 && w.fuzzy == 1.0);
        // An unknown word with no near neighbour is vocabulary mismatch, not a typo.
        assert_eq!(route("zyzzyva", &[word("zyzzyva", 0, false, None)], base), base);
        assert_eq!(route("the", &[word("the", 9, true, None)], base), base);
        assert_eq!(route("", &[], base), base);
    }

    #[test]
    fn shapes() {
        for code in [
            "HTTP 451",
            "order 202610020001",
            "Go 1.22",
            "E_TOKEN_EXPIRED",
            "FBX-2210",
            "sku FBX-KEY-USBC",
            "429 too many",
        ] {
            assert_eq!(shape(code), Shape::Code, "{code}");
        }
        for q in [
            "can I send it back if I no longer want it?",
            "how do I rotate an API key for a service account",
            "Do statins cause breast cancer in older women?",
        ] {
            assert_eq!(shape(q), Shape::Question, "{q}");
        }
        for q in [
            "retun policy",
            "kuber",
            "refund annual plan",
            "",
            "!!!",
            "vitamin d deficiency and depression risk in adults",
        ] {
            assert_eq!(shape(q), Shape::Plain, "{q}");
        }
        let w = route("HTTP 451", &[], LegWeights::default());
        assert!(w.lexical > w.fuzzy && w.lexical > w.semantic);
        let w = route("how do I rotate an API key for a service account", &[], LegWeights::default());
        assert!(w.semantic > w.lexical);
    }
}
