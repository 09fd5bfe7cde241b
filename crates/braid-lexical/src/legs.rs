//! The lexical and fuzzy legs: how query text becomes a scoring plan.
//!
//! Query text is never parsed as query syntax (unless the caller opts in): it is analysed
//! like the documents and turned into weighted terms ([`crate::plan`]), so quotes, colons, brackets and
//! `AND`/`OR`/`-` are ordinary characters.

use std::collections::BTreeMap;

use tantivy::query::Query;
use tantivy::tokenizer::TextAnalyzer;

use crate::analysis::{terms, word_trigrams};
use crate::phonetic::Phonetic;
use crate::plan::{Alternative, Group, Plan, WeightedTerm};
use crate::schema::{Fields, SchemaConfig};
use crate::view::View;

/// At most this many query terms are used; the rest of a very long query is ignored.
pub const MAX_QUERY_TERMS: usize = 64;

/// Weight of a fuzzy expansion at one edit, relative to an exact match (1.0).
const ONE_EDIT_WEIGHT: f32 = 0.6;
/// Weight of a fuzzy expansion at two edits.
const TWO_EDIT_WEIGHT: f32 = 0.4;
/// Weight of a prefix completion of the last word.
const PREFIX_WEIGHT: f32 = 0.5;
/// Weight of trigram (fragment) recall for a word the vocabulary does not know.
const GRAM_WEIGHT: f32 = 0.25;
/// Fuzzy expansions kept per query word (the most frequent among allowed records).
const MAX_EXPANSIONS: usize = 3;
/// Prefix completions kept for the last word.
const MAX_COMPLETIONS: usize = 5;
/// A known word is still expanded toward neighbours this many times more frequent
/// (a real-word typo such as "form" for "from").
const EXPAND_KNOWN_RATIO: u64 = 8;

/// Edits allowed for a word of `chars` characters: none up to 3, one up to 7, then two.
/// Words with digits (codes, versions, numbers) are never fuzzed.
pub fn max_edits(word: &str) -> usize {
    if word.chars().any(|c| c.is_ascii_digit()) {
        return 0;
    }
    match word.chars().count() {
        0..=3 => 0,
        4..=7 => 1,
        _ => 2,
    }
}

/// How a leg scores: a plan Braid evaluates over the allowed records, or (for the opt-in
/// query syntax) a tantivy query.
pub(crate) enum Scoring {
    Plan(Plan),
    Tantivy(Box<dyn Query>),
}

/// A built query plus the analysed terms to highlight (term → weight).
pub(crate) struct BuiltQuery {
    pub scoring: Scoring,
    pub highlight: BTreeMap<String, f32>,
}

/// BM25 for one analysed term over the flat title+body field, plus the title boost, all
/// times `weight`.
fn scored_term(fields: &Fields, config: &SchemaConfig, term: &str, weight: f32) -> Alternative {
    let mut terms = vec![WeightedTerm::new(fields.text, term, weight)];
    if config.title_boost > 0.0 {
        terms.push(WeightedTerm::new(fields.title, term, weight * config.title_boost));
    }
    Alternative::Terms(terms)
}

/// The lexical leg: BM25 over the analysed query terms, as a flat sum of weighted terms (the
/// body field, and the title field boosted).
pub(crate) fn lexical_query(fields: &Fields, config: &SchemaConfig, analyzer: &TextAnalyzer, text: &str) -> BuiltQuery {
    let mut analysed = terms(analyzer, text);
    analysed.truncate(MAX_QUERY_TERMS);
    let highlight = analysed.iter().map(|t| (t.clone(), 1.0)).collect();
    let groups = analysed.iter().map(|t| Group { alternatives: vec![scored_term(fields, config, t, 1.0)] }).collect();
    BuiltQuery { scoring: Scoring::Plan(Plan { groups }), highlight }
}

/// The fuzzy leg: for each query word, the best of its exact match, its fuzzy expansions
/// (scaled edit distance, transpositions as one edit), a prefix completion for the last word
/// as-you-type, and trigram recall for fragments no allowed record holds as a word. Exact
/// matches weigh most, so they outrank fuzzy ones. Chinese words typed in pinyin or with
/// homophone typos are read through `phonetic` and join the query as words of their own.
/// Every decision — which word is unknown, which expansions and completions are kept — is
/// taken on counts over the allowed records (`view`).
pub(crate) fn fuzzy_query(
    fields: &Fields,
    config: &SchemaConfig,
    (analyzer, words_analyzer): (&TextAnalyzer, &TextAnalyzer),
    view: &View<'_>,
    phonetic: &Phonetic,
    text: &str,
) -> BuiltQuery {
    let mut words = terms(words_analyzer, text);
    words.truncate(MAX_QUERY_TERMS);
    let typing_last = !text.ends_with(char::is_whitespace);
    let mut highlight = BTreeMap::new();
    let mut groups: Vec<Group> = Vec::new();
    // Alternatives as analysed term → weight; the best weight per term wins.
    let add = |alternatives: &mut BTreeMap<String, f32>, word: &str, weight: f32| {
        for t in terms(analyzer, word) {
            let w = alternatives.entry(t).or_insert(0.0);
            *w = w.max(weight);
        }
    };
    let disjuncts_of = |alternatives: &BTreeMap<String, f32>, highlight: &mut BTreeMap<String, f32>| {
        for (t, &w) in alternatives {
            let h = highlight.entry(t.clone()).or_insert(0.0f32);
            *h = h.max(w);
        }
        alternatives.iter().map(|(t, &w)| scored_term(fields, config, t, w)).collect::<Vec<_>>()
    };
    let df = |w: &str| view.word_df(w);
    let (pinyin_words, mut readings) = phonetic.latin(&words, &df);
    readings.extend(phonetic.homophones(text, &df));
    readings.truncate(MAX_QUERY_TERMS);
    for (i, word) in words.iter().enumerate() {
        if pinyin_words.contains(&i) {
            continue;
        }
        let is_last = i + 1 == words.len();
        let mut alternatives: BTreeMap<String, f32> = BTreeMap::new();
        add(&mut alternatives, word, 1.0);
        let stop_word = alternatives.is_empty();
        if stop_word && !(is_last && typing_last) {
            continue;
        }
        let df = view.word_df(word);
        let edits = max_edits(word);
        if edits > 0 {
            for n in view.expansions(word, edits, df.saturating_mul(EXPAND_KNOWN_RATIO), MAX_EXPANSIONS) {
                add(&mut alternatives, &n.word, if n.distance <= 1 { ONE_EDIT_WEIGHT } else { TWO_EDIT_WEIGHT });
            }
        }
        if is_last && typing_last && word.chars().count() >= 2 {
            for (completion, _) in view.completions(word, MAX_COMPLETIONS) {
                add(&mut alternatives, &completion, PREFIX_WEIGHT);
            }
        }
        let mut disjuncts = disjuncts_of(&alternatives, &mut highlight);
        if df == 0 && word.chars().count() >= 4 {
            let grams: Vec<WeightedTerm> =
                word_trigrams(word).iter().map(|g| WeightedTerm::new(fields.grams, g, 1.0)).collect();
            if !grams.is_empty() {
                let needed = grams.len().div_ceil(2);
                disjuncts.push(Alternative::Grams { grams, needed, boost: GRAM_WEIGHT });
            }
        }
        if !disjuncts.is_empty() {
            groups.push(Group { alternatives: disjuncts });
        }
    }
    for reading in readings {
        let mut alternatives: BTreeMap<String, f32> = BTreeMap::new();
        for word in &reading.words {
            add(&mut alternatives, word, reading.weight);
        }
        let disjuncts = disjuncts_of(&alternatives, &mut highlight);
        if !disjuncts.is_empty() {
            groups.push(Group { alternatives: disjuncts });
        }
    }
    BuiltQuery { scoring: Scoring::Plan(Plan { groups }), highlight }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_scale_with_length_and_spare_codes() {
        assert_eq!(max_edits("the"), 0);
        assert_eq!(max_edits("retun"), 1);
        assert_eq!(max_edits("kubernets"), 2);
        assert_eq!(max_edits("fbx2210"), 0);
        assert_eq!(max_edits("451"), 0);
    }
}
