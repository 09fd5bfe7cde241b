//! Text analysis: how titles, bodies and queries become terms.

use serde::{Deserialize, Serialize};
use tantivy::tokenizer::{
    AsciiFoldingFilter, Language, LowerCaser, NgramTokenizer, RemoveLongFilter, Stemmer, StopWordFilter, TextAnalyzer,
};

use crate::cjk::{HanMode, MixedTokenizer};
use crate::stem_gate::GatedStemmer;

/// Name under which the configured analyzer for title and body is registered.
pub(crate) const TEXT_TOKENIZER: &str = "braid_text";
/// Lowercased, folded words without stemming: the vocabulary for fuzzy recall and suggestions.
pub(crate) const WORDS_TOKENIZER: &str = "braid_words";
/// Character trigrams: fragment and substring recall.
pub(crate) const GRAMS_TOKENIZER: &str = "braid_grams";

/// Tokens longer than this many bytes are dropped (they are never words people type).
const MAX_TOKEN_BYTES: usize = 40;

/// The analyzer for title and body, chosen per index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Analyzer {
    /// Words split on non-alphanumerics, lowercased, ASCII-folded, English stop words removed,
    /// Snowball English stemming (the default). Chinese is segmented into words (jieba; with
    /// the `cjk` feature off, into character bigrams), Japanese and Korean into character
    /// bigrams; Latin words among them are still stemmed.
    #[default]
    English,
    /// Like `English` without stop words and stemming.
    Simple,
}

impl Analyzer {
    /// Builds the tantivy analyzer (Han cut by script).
    pub(crate) fn build(self) -> TextAnalyzer {
        self.build_for(None)
    }

    /// Builds the tantivy analyzer for text whose Han runs are cut as `han` says.
    pub(crate) fn build_for(self, han: Option<HanMode>) -> TextAnalyzer {
        let base = Self::base(han);
        match self {
            Analyzer::English => base.filter(english_stop_words()).filter(Stemmer::new(Language::English)).build(),
            Analyzer::Simple => base.build(),
        }
    }

    /// The analyzer of [`Analyzer::build`] for finding the analysed terms `wanted` in a text
    /// (snippets): every wanted term it yields where `build`'s analyzer would, with stemming
    /// skipped for words that cannot stem into one (see [`GatedStemmer`]).
    pub(crate) fn build_finding<'a>(self, wanted: impl IntoIterator<Item = &'a str>) -> TextAnalyzer {
        let base = Self::base(None);
        match self {
            Analyzer::English => base.filter(english_stop_words()).filter(GatedStemmer::new(wanted)).build(),
            Analyzer::Simple => base.build(),
        }
    }

    fn base(han: Option<HanMode>) -> tantivy::tokenizer::TextAnalyzerBuilder<impl tantivy::tokenizer::Tokenizer> {
        TextAnalyzer::builder(MixedTokenizer::new(han))
            .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
            .filter(LowerCaser)
            .filter(AsciiFoldingFilter)
    }
}

fn english_stop_words() -> StopWordFilter {
    StopWordFilter::new(Language::English).expect("tantivy ships English stop words")
}

pub(crate) fn words_analyzer() -> TextAnalyzer {
    words_analyzer_for(None)
}

/// The words analyzer for text whose Han runs are cut as `han` says.
pub(crate) fn words_analyzer_for(han: Option<HanMode>) -> TextAnalyzer {
    TextAnalyzer::builder(MixedTokenizer::new(han))
        .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .build()
}

pub(crate) fn grams_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(NgramTokenizer::new(3, 3, false).expect("3..=3 is a valid n-gram range"))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .build()
}

/// The text and words analyzers of one language's Han mode, built once per writer or snapshot.
#[derive(Clone)]
pub(crate) struct ModeAnalyzers {
    pub text: TextAnalyzer,
    pub words: TextAnalyzer,
}

impl ModeAnalyzers {
    /// Analyzers for both explicit modes: `[Words, Bigrams]`.
    pub fn both(analyzer: Analyzer) -> [ModeAnalyzers; 2] {
        [HanMode::Words, HanMode::Bigrams]
            .map(|m| ModeAnalyzers { text: analyzer.build_for(Some(m)), words: words_analyzer_for(Some(m)) })
    }
}

/// The analyzers of `han` among `both` (as built by [`ModeAnalyzers::both`]).
pub(crate) fn for_mode(both: &[ModeAnalyzers; 2], han: HanMode) -> &ModeAnalyzers {
    match han {
        HanMode::Words => &both[0],
        HanMode::Bigrams => &both[1],
    }
}

/// Runs `analyzer` over `text` and returns the tokens (text, offsets, positions), in order.
pub(crate) fn tokens(analyzer: &TextAnalyzer, text: &str) -> Vec<tantivy::tokenizer::Token> {
    let mut analyzer = analyzer.clone();
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    while stream.advance() {
        out.push(stream.token().clone());
    }
    out
}

/// Runs `analyzer` over `text` and returns the terms, in order.
pub(crate) fn terms(analyzer: &TextAnalyzer, text: &str) -> Vec<String> {
    tokens(analyzer, text).into_iter().map(|t| t.text).collect()
}

/// `text` up to the end of its `words`-th word (a run of letters and digits, as the analyzers'
/// tokenizer cuts words; a run of Han characters counts as one): all of it when it has no more.
pub(crate) fn head(text: &str, words: usize) -> &str {
    let mut seen = 0;
    let mut in_word = false;
    for (at, c) in text.char_indices() {
        let alphanumeric = c.is_alphanumeric();
        if alphanumeric && !in_word {
            if seen == words {
                return &text[..at];
            }
            seen += 1;
        }
        in_word = alphanumeric;
    }
    text
}

/// The words of a record that lexical feedback reads: its title and body, cut after this many
/// words ([`crate::Feedback::words`] of the default setting).
pub(crate) const HEAD_WORDS: usize = 96;

/// The text analyzer for `text`: the one for the Han mode of its detected language, else
/// `default` (the index's configured analyzer).
pub(crate) fn text_analyzer_for<'a>(
    default: &'a TextAnalyzer,
    by_mode: &'a [ModeAnalyzers; 2],
    text: &str,
) -> &'a TextAnalyzer {
    match HanMode::of(braid_core::Language::detect(text)) {
        Some(mode) => &for_mode(by_mode, mode).text,
        None => default,
    }
}

/// The analysed terms of a record's first `words` words — `flat` is its title, a space and
/// its body — in order, as lexical feedback reads them. Written with the record (the index's
/// `head` field, for [`HEAD_WORDS`]) and computed again only where the index has no such field.
pub(crate) fn head_terms(
    default: &TextAnalyzer,
    by_mode: &[ModeAnalyzers; 2],
    flat: &str,
    words: usize,
) -> Vec<String> {
    let head = head(flat, words);
    terms(text_analyzer_for(default, by_mode, head), head)
}

/// The character trigrams of one word, as the grams field indexes them.
pub(crate) fn word_trigrams(word: &str) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    if chars.len() < 3 {
        return Vec::new();
    }
    let mut grams: Vec<String> = chars.windows(3).map(|w| w.iter().collect()).collect();
    grams.dedup();
    grams
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_ends_after_its_last_word() {
        assert_eq!(head("Salt, salt and sodium.", 2), "Salt, salt ");
        assert_eq!(head("Salt, salt and sodium.", 4), "Salt, salt and sodium.");
        assert_eq!(head("Salt, salt and sodium.", 9), "Salt, salt and sodium.");
        assert_eq!(head("  -- Café naïve", 1), "  -- Café ");
        assert_eq!(head("anything", 0), "");
        assert_eq!(head("", 3), "");
        // The words are the analyzer's: the head's terms are the text's first terms.
        let a = Analyzer::English.build();
        let text = "The refunds of policies, e-mail U.S. HTTP-451 and returns";
        for words in 0..12 {
            let all = terms(&a, text);
            let first = terms(&a, head(text, words));
            assert_eq!(first[..], all[..first.len()], "{words}");
        }
    }

    #[test]
    fn english_stems_and_drops_stop_words() {
        let a = Analyzer::English.build();
        assert_eq!(terms(&a, "The Refunds of Policies"), ["refund", "polici"]);
        assert_eq!(terms(&a, "HTTP 451 — Café"), ["http", "451", "cafe"]);
        assert!(terms(&a, "\"unbalanced (quotes AND -x").contains(&"unbalanc".to_string()));
        assert!(terms(&a, "🙂🙂 ¿?").is_empty());
    }

    #[cfg(feature = "cjk")]
    #[test]
    fn mixed_text_stems_latin_and_segments_chinese() {
        let a = Analyzer::English.build();
        assert_eq!(terms(&a, "Syncing Policies 同步失败"), ["sync", "polici", "同步", "失败"]);
        assert_eq!(terms(&words_analyzer(), "Syncing 同步"), ["syncing", "同步"]);
    }

    #[cfg(not(feature = "cjk"))]
    #[test]
    fn mixed_text_stems_latin_and_cuts_chinese_into_bigrams() {
        let a = Analyzer::English.build();
        assert_eq!(terms(&a, "Syncing Policies 同步失败"), ["sync", "polici", "同步", "步失", "失败"]);
        assert_eq!(terms(&words_analyzer(), "Syncing 同步"), ["syncing", "同步"]);
    }

    #[test]
    fn words_and_grams() {
        assert_eq!(terms(&words_analyzer(), "Kubernetes Relays"), ["kubernetes", "relays"]);
        assert_eq!(word_trigrams("kuber"), ["kub", "ube", "ber"]);
        assert!(word_trigrams("ab").is_empty());
        assert_eq!(terms(&grams_analyzer(), "AbcD"), ["abc", "bcd"]);
    }
}
