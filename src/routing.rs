//! `Mode::Auto`: lean on the legs that suit the query.
//!
//! The heuristic, applied on top of the request's weights.
//!
//! - **Code lookups lean on BM25.** A query of at most four words with an identifier in it
//!   (a digit, an underscore, `FBX-KEY`-style capitals, an acronym: `HTTP 451`,
//!   `order 202610020001`, `Go 1.22`, `E_TOKEN_EXPIRED`) multiplies the lexical weight by 1.25
//!   and divides fuzzy (codes must not be "corrected") and semantic (embeddings blur
//!   identifiers) by it. A word joined by `-` or `.` is an identifier only in capitals:
//!   `Plant-Based` is a word in title case, not a code.
//!   In a query of several words typed all in capitals (`ELECTRON DENSITY PROFILES`, as
//!   NPL's queries are) capitals mean nothing: no word there is an acronym (`DHA` alone is).
//! - **Anything else keeps the request's weights**, questions included: a lean of the semantic
//!   leg on long questions (× 1.5) was dropped on 2026-12-04 (below).
//!
//! Misspellings need no routing of their own: the lexical and semantic legs read the query as
//! "did you mean" corrects it (see `search::correct`), the fuzzy leg the words as typed, so a
//! misspelt query is weighed as its correction would be. (Until 2026-12 the misspelt words'
//! share lowered the lexical and semantic weights instead; reading the correction does better
//! on every fitting split, see docs/ranking.md.)
//!
//! The code lean was fitted on training splits only (SciFact `train`, NFCorpus `train` and
//! `dev`, clean and misspelt: `scripts/fusion_study.py`, results/fusion-study.txt), on the legs'
//! lists as the default search runs them (lexical feedback included): it is the best of 1, 1.25,
//! 1.5 and 2 on the 118 code samples, +0.0015 over none (not significant; 1.5, the choice
//! before feedback, now loses 0.0090).
//!
//! The question lean had +0.0081 on the fitting splits' 504 question samples (p 0.001), all of
//! them NFCorpus's: no second dataset there to show that it transfers, the test that rejected a
//! per-query semantic share. On test it did not: it lost on the three sets whose questions are
//! not NFCorpus's (Cranfield's 174, CACM's 6, NPL's 9), so `auto` fell below `hybrid` on six
//! rows, and issue 20 asks of `auto` that it be at least as good as `hybrid` on every set or go.
//! Without it `auto` is `hybrid` but for code lookups. Numbers: docs/ranking.md.

use braid_core::LegWeights;

/// Queries of at most this many words can be lookups of a code.
const MAX_CODE_QUERY_WORDS: usize = 4;
/// How much a code lookup leans on BM25 (and away from fuzzy and semantic).
const CODE_LEAN: f32 = 1.25;

/// Whether the query, from its raw text, is a short lookup of an identifier: `HTTP 451`,
/// `order 202610020001`, `E_TOKEN_EXPIRED`.
pub(crate) fn is_code_lookup(query: &str) -> bool {
    let tokens: Vec<&str> = query
        .split_whitespace()
        .map(|t| t.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|t| !t.is_empty())
        .collect();
    // In a query of several words typed in capitals (`ELECTRON DENSITY PROFILES`) case says
    // nothing: no word is an acronym for being upper-case. A single word (`DHA`) still is.
    let acronyms = tokens.len() == 1 || query.chars().any(char::is_lowercase);
    !tokens.is_empty() && tokens.len() <= MAX_CODE_QUERY_WORDS && tokens.iter().any(|t| code_like(t, acronyms))
}

/// A token that names something rather than says something: it has a digit or an
/// underscore, or — where `acronyms` says case means something in this query — its letters are
/// all capitals: an acronym of two letters or more, or letters joined by `-`/`.` (`FBX-KEY`,
/// `U.S.`; not `Plant-Based`).
fn code_like(token: &str, acronyms: bool) -> bool {
    if token.chars().any(|c| c.is_ascii_digit()) || token.contains('_') {
        return true;
    }
    let letters = token.chars().filter(|c| c.is_alphabetic()).count();
    let capitals = acronyms && letters > 0 && token.chars().all(|c| !c.is_alphabetic() || c.is_ascii_uppercase());
    capitals && (letters >= 2 || token.contains(['-', '.']))
}

/// The request's weights, leaned toward BM25 where the query is a code lookup.
pub(crate) fn route(query: &str, base: LegWeights) -> LegWeights {
    let mut w = base;
    if is_code_lookup(query) {
        w.lexical *= CODE_LEAN;
        w.fuzzy /= CODE_LEAN;
        w.semantic /= CODE_LEAN;
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_queries_keep_the_request_weights() {
        let base = LegWeights::default();
        for q in [
            "return policy",
            "the retun policy",
            "zyzzyva",
            "the",
            "",
            "can I send it back if I no longer want it?",
            "how do I rotate an API key for a service account",
        ] {
            assert_eq!(route(q, base), base, "{q}");
        }
    }

    #[test]
    fn code_lookups() {
        for code in [
            "HTTP 451",
            "order 202610020001",
            "Go 1.22",
            "E_TOKEN_EXPIRED",
            "FBX-2210",
            "sku FBX-KEY-USBC",
            "429 too many",
            "DHA",
            "ERROR E_TOKEN_EXPIRED",
            "HTTP 451 ERROR",
            "FBX-KEY",
            "U.S. Dry Bean Council",
        ] {
            assert!(is_code_lookup(code), "{code}");
        }
        for q in [
            "retun policy",
            "kuber",
            "refund annual plan",
            "",
            "!!!",
            "vitamin d deficiency and depression risk in adults",
            "ELECTRON DENSITY PROFILES",
            "RADIO-WAVE PROPAGATION",
            "Plant-Based Diets for Fibromyalgia",
            "Avoid Butter-Flavored Microwave Popcorn",
            "X-rays",
            "Do statins cause breast cancer in older women?",
        ] {
            assert!(!is_code_lookup(q), "{q}");
        }
        let w = route("HTTP 451", LegWeights::default());
        assert!(w.lexical > w.fuzzy && w.lexical > w.semantic);
    }
}
