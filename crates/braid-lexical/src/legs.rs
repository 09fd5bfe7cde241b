//! The lexical and fuzzy legs: how query text becomes a tantivy query.
//!
//! Query text is never parsed as query syntax (unless the caller opts in): it is analysed
//! like the documents and turned into term queries, so quotes, colons, brackets and
//! `AND`/`OR`/`-` are ordinary characters.

use std::collections::BTreeMap;

use tantivy::query::{BooleanQuery, BoostQuery, DisjunctionMaxQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::tokenizer::TextAnalyzer;
use tantivy::Term;

use crate::analysis::{terms, word_trigrams};
use crate::phonetic::Phonetic;
use crate::schema::{Fields, SchemaConfig};
use crate::term_at_a_time::WeightedTerm;
use crate::vocabulary::{Lookups, Vocabulary};

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
/// Fuzzy expansions kept per query word.
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

/// A built query plus the analysed terms to highlight (term → weight).
pub(crate) struct BuiltQuery {
    /// A tantivy query (fuzzy leg, query syntax).
    pub query: Option<Box<dyn Query>>,
    /// Or a flat sum of weighted BM25 terms (lexical leg).
    pub terms: Vec<WeightedTerm>,
    pub highlight: BTreeMap<String, f32>,
}

fn term_query(field: tantivy::schema::Field, text: &str) -> Box<dyn Query> {
    Box::new(TermQuery::new(Term::from_field_text(field, text), IndexRecordOption::WithFreqs))
}

/// BM25 for one analysed term over the flat title+body field, plus the title boost.
fn scored_term(fields: &Fields, config: &SchemaConfig, term: &str, weight: f32) -> Box<dyn Query> {
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Should, term_query(fields.text, term))];
    if config.title_boost > 0.0 {
        clauses.push((Occur::Should, Box::new(BoostQuery::new(term_query(fields.title, term), config.title_boost))));
    }
    let q: Box<dyn Query> =
        if clauses.len() == 1 { clauses.pop().expect("one clause").1 } else { Box::new(BooleanQuery::new(clauses)) };
    if (weight - 1.0).abs() < f32::EPSILON {
        q
    } else {
        Box::new(BoostQuery::new(q, weight))
    }
}

/// The lexical leg: BM25 over the analysed query terms, as a flat sum of weighted terms (the
/// body field, and the title field boosted), run by [`crate::term_at_a_time`] or, on large
/// segments, as [`union_query`].
pub(crate) fn lexical_query(fields: &Fields, config: &SchemaConfig, analyzer: &TextAnalyzer, text: &str) -> BuiltQuery {
    let mut analysed = terms(analyzer, text);
    analysed.truncate(MAX_QUERY_TERMS);
    let highlight = analysed.iter().map(|t| (t.clone(), 1.0)).collect();
    let mut weighted = Vec::with_capacity(analysed.len() * 2);
    for t in &analysed {
        weighted.push(WeightedTerm::new(fields.text, t, 1.0));
        if config.title_boost > 0.0 {
            weighted.push(WeightedTerm::new(fields.title, t, config.title_boost));
        }
    }
    BuiltQuery { query: None, terms: weighted, highlight }
}

/// Weighted terms as one flat union of term queries (the sum of their BM25 scores), so
/// tantivy can prune it with block-max WAND.
pub(crate) fn union_query(terms: &[WeightedTerm]) -> Box<dyn Query> {
    let clauses = terms
        .iter()
        .map(|t| {
            let q: Box<dyn Query> = Box::new(TermQuery::new(t.term.clone(), IndexRecordOption::WithFreqs));
            let q: Box<dyn Query> =
                if (t.boost - 1.0).abs() < f32::EPSILON { q } else { Box::new(BoostQuery::new(q, t.boost)) };
            (Occur::Should, q)
        })
        .collect();
    Box::new(BooleanQuery::new(clauses))
}

/// The fuzzy leg: for each query word, the best of its exact match, its fuzzy expansions
/// (scaled edit distance, transpositions as one edit), a prefix completion for the last word
/// as-you-type, and trigram recall for fragments the vocabulary does not know. Exact matches
/// weigh most, so they outrank fuzzy ones. Chinese words typed in pinyin or with homophone
/// typos are read through `phonetic` and join the query as words of their own.
pub(crate) fn fuzzy_query(
    fields: &Fields,
    config: &SchemaConfig,
    (analyzer, words_analyzer): (&TextAnalyzer, &TextAnalyzer),
    vocabulary: &Vocabulary,
    phonetic: &Phonetic,
    text: &str,
    lookups: &Lookups,
) -> BuiltQuery {
    let mut words = terms(words_analyzer, text);
    words.truncate(MAX_QUERY_TERMS);
    let typing_last = !text.ends_with(char::is_whitespace);
    let mut highlight = BTreeMap::new();
    let mut per_word: Vec<(Occur, Box<dyn Query>)> = Vec::new();
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
    let (pinyin_words, mut readings) = phonetic.latin(&words, vocabulary);
    readings.extend(phonetic.homophones(text, vocabulary));
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
        let df = vocabulary.df(word);
        let edits = max_edits(word);
        if edits > 0 {
            let expansions = vocabulary
                .neighbours_above(word, edits, df.saturating_mul(EXPAND_KNOWN_RATIO), lookups)
                .into_iter()
                .take(MAX_EXPANSIONS);
            for n in expansions {
                add(&mut alternatives, &n.word, if n.distance <= 1 { ONE_EDIT_WEIGHT } else { TWO_EDIT_WEIGHT });
            }
        }
        if is_last && typing_last && word.chars().count() >= 2 {
            for (completion, _) in vocabulary.completions(word, MAX_COMPLETIONS) {
                add(&mut alternatives, &completion, PREFIX_WEIGHT);
            }
        }
        let mut disjuncts = disjuncts_of(&alternatives, &mut highlight);
        if df == 0 && word.chars().count() >= 4 {
            let grams: Vec<(Occur, Box<dyn Query>)> =
                word_trigrams(word).iter().map(|g| (Occur::Should, term_query(fields.grams, g))).collect();
            if !grams.is_empty() {
                let needed = grams.len().div_ceil(2);
                let q = BooleanQuery::with_minimum_required_clauses(grams, needed);
                disjuncts.push(Box::new(BoostQuery::new(Box::new(q), GRAM_WEIGHT)));
            }
        }
        if !disjuncts.is_empty() {
            per_word.push((Occur::Should, Box::new(DisjunctionMaxQuery::new(disjuncts))));
        }
    }
    for reading in readings {
        let mut alternatives: BTreeMap<String, f32> = BTreeMap::new();
        for word in &reading.words {
            add(&mut alternatives, word, reading.weight);
        }
        let disjuncts = disjuncts_of(&alternatives, &mut highlight);
        if !disjuncts.is_empty() {
            per_word.push((Occur::Should, Box::new(DisjunctionMaxQuery::new(disjuncts))));
        }
    }
    let query = (!per_word.is_empty()).then(|| Box::new(BooleanQuery::new(per_word)) as Box<dyn Query>);
    BuiltQuery { query, terms: Vec::new(), highlight }
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
