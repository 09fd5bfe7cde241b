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
//! - **Long questions lean on the semantic leg.** Six words or more, ending in `?` or opening
//!   with a question word (`how`, `can`, `does`, …): semantic weight × 1.5.
//!
//! Misspellings need no routing of their own: the lexical and semantic legs read the query as
//! "did you mean" corrects it (see `search::correct`), the fuzzy leg the words as typed, so a
//! misspelt query is weighed as its correction would be. (Until 2026-12 the misspelt words'
//! share lowered the lexical and semantic weights instead; reading the correction does better
//! on every fitting split, see docs/ranking.md.)
//!
//! Both leans were fitted on training splits only (SciFact `train`, NFCorpus `train` and
//! `dev`, clean and misspelt: `scripts/fusion_study.py`, results/fusion-study.txt), on the legs'
//! lists as the default search runs them (lexical feedback included): the question lean gains
//! +0.0081 nDCG@10 on the 504 question samples there (p 0.001); the code lean is the best of
//! 1, 1.25, 1.5 and 2 on the 118 code samples, +0.0015 over none (not significant; 1.5, the
//! choice before feedback, now loses 0.0090). Test numbers: docs/ranking.md.

use braid_core::LegWeights;

/// Queries of at most this many words can be lookups of a code.
const MAX_CODE_QUERY_WORDS: usize = 4;
/// Questions of at least this many words lean on the semantic leg.
const MIN_QUESTION_WORDS: usize = 6;
/// How much a code lookup leans on BM25 (and away from fuzzy and semantic).
const CODE_LEAN: f32 = 1.25;
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
    // In a query of several words typed in capitals (`ELECTRON DENSITY PROFILES`) case says
    // nothing: no word is an acronym for being upper-case. A single word (`DHA`) still is.
    let acronyms = tokens.len() == 1 || query.chars().any(char::is_lowercase);
    if tokens.len() <= MAX_CODE_QUERY_WORDS && tokens.iter().any(|t| code_like(t, acronyms)) {
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

pub(crate) fn route(query: &str, base: LegWeights) -> LegWeights {
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
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_queries_keep_the_request_weights() {
        let base = LegWeights::default();
        for q in ["return policy", "the retun policy", "zyzzyva", "the", ""] {
            assert_eq!(route(q, base), base, "{q}");
        }
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
            "DHA",
            "ERROR E_TOKEN_EXPIRED",
            "HTTP 451 ERROR",
            "FBX-KEY",
            "U.S. Dry Bean Council",
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
            "ELECTRON DENSITY PROFILES",
            "RADIO-WAVE PROPAGATION",
            "Plant-Based Diets for Fibromyalgia",
            "Avoid Butter-Flavored Microwave Popcorn",
            "X-rays",
        ] {
            assert_eq!(shape(q), Shape::Plain, "{q}");
        }
        let w = route("HTTP 451", LegWeights::default());
        assert!(w.lexical > w.fuzzy && w.lexical > w.semantic);
        let w = route("how do I rotate an API key for a service account", LegWeights::default());
        assert!(w.semantic > w.lexical);
    }
}
