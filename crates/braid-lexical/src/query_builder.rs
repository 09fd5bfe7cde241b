//! How query text becomes what the lexical and fuzzy legs score: the query builders.
//!
//! Query text is never parsed as query syntax (unless the caller opts in): it is analysed
//! like the documents and turned into weighted terms ([`crate::scorer`]), so quotes, colons, brackets and
//! `AND`/`OR`/`-` are ordinary characters. The legs themselves (running a built query over the
//! allowed records) are the view's ([`crate::View::lexical`], [`crate::View::fuzzy`]).

use std::borrow::Cow;
use std::collections::BTreeMap;

use tantivy::query::{Query, QueryParser};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::Searcher;

use crate::analysis::{terms, word_trigrams, Analyzer};
use crate::clitics::without_clitics;
use crate::phonetic::Readings;
use crate::schema::{Fields, SchemaConfig};
use crate::synonyms::{Compiled, Span, SynonymUse};
use crate::visible_counts::VisibleCounts;
use crate::weighted_query::{Alternative, Group, WeightedQuery, WeightedTerm};

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

/// How a leg scores: a weighted query Braid evaluates over the allowed records, or (for the opt-in
/// query syntax) a tantivy query.
pub(crate) enum Scoring {
    Weighted(WeightedQuery),
    Tantivy(Box<dyn Query>),
}

/// A built query plus the analysed terms to highlight (term → weight) and the synonyms it
/// was expanded with.
pub(crate) struct BuiltQuery {
    pub scoring: Scoring,
    pub highlight: BTreeMap<String, f32>,
    pub synonyms: Vec<SynonymUse>,
}

/// The alternative of one synonym (its analysed terms) at `weight`: a single term as a query
/// word, several as an all-of (a record must hold each of them).
fn synonym_alternative(fields: &Fields, config: &SchemaConfig, terms: &[String], weight: f32) -> Alternative {
    if let [term] = terms {
        return scored_term(fields, config, term, weight);
    }
    let mut all: Vec<WeightedTerm> = terms.iter().map(|t| WeightedTerm::new(fields.text, t, weight)).collect();
    all.extend(terms.iter().filter_map(|t| {
        let title = config.title_boost_of(t);
        (title > 0.0).then(|| WeightedTerm::new(fields.title, t, weight * title))
    }));
    Alternative::All { terms: all, counted: terms.len() }
}

/// The synonym alternatives of `span`, their terms added to `highlight`, the uses recorded.
fn synonym_alternatives(
    fields: &Fields,
    config: &SchemaConfig,
    span: &Span,
    weight: f32,
    highlight: &mut BTreeMap<String, f32>,
    uses: &mut Vec<SynonymUse>,
) -> Vec<Alternative> {
    span.alternatives
        .iter()
        .map(|(label, terms)| {
            for t in terms {
                let h = highlight.entry(t.clone()).or_insert(0.0f32);
                *h = h.max(1.0);
            }
            if !uses.iter().any(|u| u.matched.query == span.label && u.matched.synonym == *label) {
                uses.push(SynonymUse::new(&span.label, label, terms));
            }
            synonym_alternative(fields, config, terms, weight)
        })
        .collect()
}

/// The words of a query the legs score: in English, without clitics and the pronoun `I`
/// ([`crate::clitics`]).
fn query_text<'t>(config: &SchemaConfig, text: &'t str) -> Cow<'t, str> {
    match config.analyzer {
        Analyzer::English => without_clitics(text),
        Analyzer::Simple => Cow::Borrowed(text),
    }
}

/// BM25 for one analysed term over the flat title+body field, plus the term's title boost
/// ([`SchemaConfig::title_boost_of`]), all times `weight`.
pub(crate) fn scored_term(fields: &Fields, config: &SchemaConfig, term: &str, weight: f32) -> Alternative {
    let mut terms = vec![WeightedTerm::new(fields.text, term, weight)];
    let title = config.title_boost_of(term);
    if title > 0.0 {
        terms.push(WeightedTerm::new(fields.title, term, weight * title));
    }
    Alternative::Terms(terms)
}

/// The lexical leg: BM25 over the analysed query terms, as a flat sum of weighted terms (the
/// body field, and the title field boosted).
///
/// A span of terms a synonym entry matches becomes one group: the best of the span's own
/// terms (summed, as without synonyms; absent for a one-way entry) and each synonym. Without
/// a match the query is the one built without synonyms.
pub(crate) fn lexical_query(
    fields: &Fields,
    config: &SchemaConfig,
    analyzer: &TextAnalyzer,
    text: &str,
    synonyms: &Compiled,
) -> BuiltQuery {
    let text = query_text(config, text);
    let mut analysed = terms(analyzer, &text);
    analysed.truncate(MAX_QUERY_TERMS);
    let mut highlight: BTreeMap<String, f32> = analysed.iter().map(|t| (t.clone(), 1.0)).collect();
    let spans = synonyms.spans(&analysed);
    let mut uses = Vec::new();
    let mut groups = Vec::with_capacity(analysed.len());
    let mut i = 0;
    let mut spans = spans.iter().peekable();
    while i < analysed.len() {
        match spans.next_if(|s| s.start == i) {
            Some(span) => {
                let mut alternatives = Vec::new();
                if span.keep_original {
                    let own =
                        analysed[span.start..span.end].iter().flat_map(|t| match scored_term(fields, config, t, 1.0) {
                            Alternative::Terms(terms) => terms,
                            _ => Vec::new(),
                        });
                    alternatives.push(Alternative::Terms(own.collect()));
                } else {
                    for t in &analysed[span.start..span.end] {
                        highlight.remove(t);
                    }
                }
                alternatives.extend(synonym_alternatives(fields, config, span, 1.0, &mut highlight, &mut uses));
                groups.push(Group { alternatives });
                i = span.end;
            }
            None => {
                groups.push(Group { alternatives: vec![scored_term(fields, config, &analysed[i], 1.0)] });
                i += 1;
            }
        }
    }
    BuiltQuery { scoring: Scoring::Weighted(WeightedQuery { groups, constraints: None }), highlight, synonyms: uses }
}

/// The fuzzy leg: for each query word, the best of its exact match, its fuzzy expansions
/// (scaled edit distance, transpositions as one edit), a prefix completion for the last word
/// as-you-type, and trigram recall for fragments no allowed record holds as a word. Exact
/// matches weigh most, so they outrank fuzzy ones. Chinese words typed in pinyin or with
/// homophone typos are read through `phonetic` and join the query as words of their own.
/// Every decision — which word is unknown, which expansions and completions are kept — is
/// taken on counts over the allowed records (`counts`).
pub(crate) fn fuzzy_query(
    fields: &Fields,
    config: &SchemaConfig,
    (analyzer, words_analyzer): (&TextAnalyzer, &TextAnalyzer),
    counts: &impl VisibleCounts,
    phonetic: &impl Readings,
    text: &str,
    synonyms: &Compiled,
) -> BuiltQuery {
    let text = query_text(config, text);
    let text = &*text;
    let mut words = terms(words_analyzer, text);
    words.truncate(MAX_QUERY_TERMS);
    // Synonyms, matched on the words' analysed terms: an equivalent entry adds its synonyms to
    // the group of the span's first word; a one-way entry replaces the span's groups by one.
    let mut uses = Vec::new();
    let mut synonym_highlight = BTreeMap::new();
    let mut extra: BTreeMap<usize, Vec<Alternative>> = BTreeMap::new();
    let mut replaced: BTreeMap<usize, Option<Vec<Alternative>>> = BTreeMap::new();
    if !synonyms.is_empty() {
        let mut analysed = Vec::new();
        let mut word_of = Vec::new();
        let mut word_weight = Vec::new();
        for (i, w) in words.iter().enumerate() {
            // A word no allowed record holds is matched as its closest correction (the fuzzy
            // leg reads "retun" as "return", and so do its synonyms). The synonyms of a sure
            // correction — the only known word at the least distance — weigh fully (the synonym
            // file vouches for the meaning); of an ambiguous one, what the correction weighs.
            let mut own = terms(analyzer, w);
            let mut weight = 1.0;
            let edits = max_edits(w);
            if edits > 0 && !own.is_empty() && counts.word_df(w) == 0 && own.iter().all(|t| counts.text_df(t) == 0) {
                let near = counts.expansions(w, edits, 0, 2);
                if let Some(first) = near.first() {
                    own = terms(analyzer, &first.word);
                    let sure = near.get(1).is_none_or(|second| second.distance > first.distance);
                    weight = match (sure, first.distance) {
                        (true, _) => 1.0,
                        (false, 0..=1) => ONE_EDIT_WEIGHT,
                        _ => TWO_EDIT_WEIGHT,
                    };
                }
            }
            for t in own {
                analysed.push(t);
                word_of.push(i);
                word_weight.push(weight);
            }
        }
        for span in synonyms.spans(&analysed) {
            let (first, last) = (word_of[span.start], word_of[span.end - 1]);
            // A synonym of a corrected word weighs what the correction weighs.
            let weight = word_weight[span.start..span.end].iter().copied().fold(1.0, f32::min);
            let alternatives = synonym_alternatives(fields, config, &span, weight, &mut synonym_highlight, &mut uses);
            if span.keep_original {
                extra.entry(first).or_default().extend(alternatives);
            } else {
                replaced.insert(first, Some(alternatives));
                for w in first + 1..=last {
                    replaced.insert(w, None);
                }
            }
        }
    }
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
    let df = |w: &str| counts.word_df(w);
    let (pinyin_words, mut readings) = phonetic.latin(&words, &df);
    readings.extend(phonetic.homophones(text, &df));
    readings.truncate(MAX_QUERY_TERMS);
    for (i, word) in words.iter().enumerate() {
        if pinyin_words.contains(&i) {
            continue;
        }
        if let Some(replacement) = replaced.get_mut(&i) {
            if let Some(alternatives) = replacement.take() {
                groups.push(Group { alternatives });
            }
            continue;
        }
        let is_last = i + 1 == words.len();
        let mut alternatives: BTreeMap<String, f32> = BTreeMap::new();
        add(&mut alternatives, word, 1.0);
        let stop_word = alternatives.is_empty();
        if stop_word && !(is_last && typing_last) {
            continue;
        }
        let df = counts.word_df(word);
        let edits = max_edits(word);
        if edits > 0 {
            for n in counts.expansions(word, edits, df.saturating_mul(EXPAND_KNOWN_RATIO), MAX_EXPANSIONS) {
                add(&mut alternatives, &n.word, if n.distance <= 1 { ONE_EDIT_WEIGHT } else { TWO_EDIT_WEIGHT });
            }
        }
        if is_last && typing_last && word.chars().count() >= 2 {
            for (completion, _) in counts.completions(word, MAX_COMPLETIONS) {
                add(&mut alternatives, &completion, PREFIX_WEIGHT);
            }
        }
        let mut disjuncts = disjuncts_of(&alternatives, &mut highlight);
        if let Some(synonyms) = extra.remove(&i) {
            disjuncts.extend(synonyms);
        }
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
    for (t, w) in synonym_highlight {
        let h = highlight.entry(t).or_insert(0.0f32);
        *h = h.max(w);
    }
    BuiltQuery { scoring: Scoring::Weighted(WeightedQuery { groups, constraints: None }), highlight, synonyms: uses }
}

/// The opt-in query syntax: `text` parsed by tantivy's query parser over title and body (the
/// title boosted), leniently (what it cannot parse it drops); the analysed words of `text`
/// are highlighted.
pub(crate) fn parsed_query(
    searcher: &Searcher,
    fields: &Fields,
    config: &SchemaConfig,
    analyzer: &TextAnalyzer,
    text: &str,
) -> BuiltQuery {
    let mut parser = QueryParser::new(
        searcher.schema().clone(),
        vec![fields.text, fields.title],
        searcher.index().tokenizers().clone(),
    );
    parser.set_field_boost(fields.title, config.title_boost);
    let (query, _errors) = parser.parse_query_lenient(text);
    let highlight = terms(analyzer, text).into_iter().take(MAX_QUERY_TERMS).map(|t| (t, 1.0)).collect();
    BuiltQuery { scoring: Scoring::Tantivy(query), highlight, synonyms: Vec::new() }
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
