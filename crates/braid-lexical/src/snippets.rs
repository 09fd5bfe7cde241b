//! Snippets: the passage of a hit's body with the most distinct query terms, those terms
//! marked.
//!
//! - **What is marked**: the analysed query terms (and their typo expansions and synonyms)
//!   wherever the index's analyzer finds them in the body, except function words
//!   ([`HIGHLIGHT_STOP_WORDS`]: "I", "can", "do", …). The analyzer keeps those words for
//!   ranking (its stop list is tantivy's short one, and changing it would change every
//!   score); marks and passage choice leave them out.
//! - **Which passage**: the window of at most `max_chars` characters, starting at a matched
//!   term (moved back to the start of its sentence when that is near), holding the largest
//!   weight of *distinct* terms; then the most matches; then the earliest. A passage naming
//!   "refund" and "annual" beats one repeating "refund" three times.
//! - **Identifiers whole**: matches joined by a single `-`, `_`, `.`, `/` or `#` (`FBX-1042`,
//!   `RMA-202610020001`) are one mark.

use std::collections::{BTreeMap, HashSet};

use braid_core::Snippet;
use tantivy::tokenizer::{TextAnalyzer, TokenStream};

use crate::analysis::terms;

/// The snippets of one search (see [`crate::Snapshot::snippets`]).
pub struct Snippets {
    maker: Option<SnippetMaker>,
}

impl Snippets {
    /// The snippets `maker` makes; none (empty snippets) without one.
    pub(crate) fn new(maker: Option<SnippetMaker>) -> Self {
        Snippets { maker }
    }

    /// The passage of `body` with the most distinct query terms, their byte ranges highlighted
    /// (function words never, identifiers whole: see [`crate::HIGHLIGHT_STOP_WORDS`]); the
    /// beginning of `body` when it holds none.
    pub fn of(&self, body: &str) -> Snippet {
        match &self.maker {
            Some(maker) => maker.of(body),
            None => Snippet::default(),
        }
    }
}

/// Words never marked in snippets (nor counted in choosing the passage): English function
/// words beyond the analyzer's own stop list (a subset of Snowball's English stop words).
pub const HIGHLIGHT_STOP_WORDS: &[&str] = &[
    "i", "me", "my", "myself", "we", "our", "ours", "you", "your", "yours", "he", "him", "his", "she", "her", "its",
    "them", "what", "which", "who", "whom", "am", "been", "being", "have", "has", "had", "having", "do", "does", "did",
    "doing", "can", "could", "would", "should", "may", "might", "must", "shall", "about", "against", "between",
    "through", "during", "before", "after", "above", "below", "from", "up", "down", "out", "off", "over", "under",
    "again", "further", "once", "here", "when", "where", "why", "how", "all", "any", "both", "each", "few", "more",
    "most", "other", "some", "nor", "only", "own", "same", "so", "than", "too", "very", "just", "now", "also", "s",
    "t", "don", "d", "ll", "m", "re", "ve", "y",
];

/// [`HIGHLIGHT_STOP_WORDS`] as `analyzer` analyses them (what a snippet never marks), computed
/// once per snapshot.
pub(crate) fn stop_terms(analyzer: &TextAnalyzer) -> HashSet<String> {
    terms(analyzer, &HIGHLIGHT_STOP_WORDS.join(" ")).into_iter().collect()
}

/// Characters that join two matches into one mark (identifiers such as `FBX-1042`).
const JOINERS: &[char] = &['-', '_', '.', '/', '#'];
/// How far back (bytes) a passage may move to start at its sentence.
const SENTENCE_REACH: usize = 80;

/// The snippet maker of one search.
pub(crate) struct SnippetMaker {
    finder: TextAnalyzer,
    /// Wanted term → weight.
    terms: BTreeMap<String, f32>,
    max_chars: usize,
}

impl SnippetMaker {
    /// `finder` yields the index's terms of a text; `highlight` is term → weight; `stop` is
    /// [`stop_terms`] of the index's analyzer.
    pub fn new(
        finder: TextAnalyzer,
        stop: &HashSet<String>,
        highlight: &BTreeMap<String, f32>,
        max_chars: usize,
    ) -> Self {
        let terms =
            highlight.iter().filter(|(t, w)| **w > 0.0 && !stop.contains(*t)).map(|(t, w)| (t.clone(), *w)).collect();
        SnippetMaker { finder, terms, max_chars }
    }

    /// The terms this maker marks.
    #[cfg(test)]
    fn wanted(&self) -> Vec<&str> {
        self.terms.keys().map(String::as_str).collect()
    }

    /// The wanted terms in `body`, as `(from, to, term)` byte ranges in order: the tokens are
    /// read off the stream, and only the matches kept (no token is copied).
    fn matches<'t>(&'t self, body: &str) -> Vec<(usize, usize, &'t str)> {
        let mut finder = self.finder.clone();
        let mut stream = finder.token_stream(body);
        let mut out = Vec::new();
        while stream.advance() {
            let t = stream.token();
            if let Some((term, _)) = self.terms.get_key_value(&t.text) {
                out.push((t.offset_from, t.offset_to, term.as_str()));
            }
        }
        out
    }

    /// The passage of `body` with the most distinct query terms, their byte ranges marked;
    /// the beginning of `body` when it holds none.
    pub fn of(&self, body: &str) -> Snippet {
        if body.is_empty() || self.max_chars == 0 {
            return Snippet::default();
        }
        let matches = if self.terms.is_empty() { Vec::new() } else { self.matches(body) };
        if matches.is_empty() {
            let end = char_end(body, 0, self.max_chars);
            return Snippet { text: body[..end].to_string(), highlights: Vec::new() };
        }
        // The best window: starting at a match, by distinct weight, then matches, then earliest.
        let mut best: Option<(f32, usize, usize, usize)> = None; // (weight, count, start, end)
        for (i, &(from, _, _)) in matches.iter().enumerate() {
            let start = sentence_start(body, from);
            let end = char_end(body, start, self.max_chars);
            let mut seen: Vec<&str> = Vec::new();
            let mut weight = 0.0;
            let mut count = 0;
            for &(f, t, term) in &matches[i..] {
                if t > end {
                    break;
                }
                if f < start {
                    continue;
                }
                count += 1;
                if !seen.contains(&term) {
                    seen.push(term);
                    weight += self.terms.get(term).copied().unwrap_or(0.0);
                }
            }
            let better = match best {
                None => true,
                Some((w, c, _, _)) => weight > w || (weight == w && count > c),
            };
            if better {
                best = Some((weight, count, start, end));
            }
        }
        let Some((_, _, start, end)) = best else { return Snippet::default() };
        let end = word_end(body, start, end);
        let text = body[start..end].to_string();
        let mut highlights: Vec<(usize, usize)> = Vec::new();
        for &(f, t, _) in &matches {
            if f < start || t > end {
                continue;
            }
            let (f, t) = (f - start, t - start);
            match highlights.last_mut() {
                Some(last) if joined(&text, last.1, f) => last.1 = t,
                _ => highlights.push((f, t)),
            }
        }
        Snippet { text, highlights }
    }
}

/// Whether the text between two marks is a single joining character.
fn joined(text: &str, end: usize, start: usize) -> bool {
    let gap = text.get(end..start).unwrap_or("");
    let mut chars = gap.chars();
    matches!((chars.next(), chars.next()), (Some(c), None) if JOINERS.contains(&c))
}

/// The byte offset `chars` characters after `start` (or the end of `text`).
fn char_end(text: &str, start: usize, chars: usize) -> usize {
    text[start..].char_indices().nth(chars).map_or(text.len(), |(i, _)| start + i)
}

/// Where the sentence holding byte `at` starts, when that is within [`SENTENCE_REACH`];
/// else `at`.
fn sentence_start(text: &str, at: usize) -> usize {
    let floor = at.saturating_sub(SENTENCE_REACH);
    let mut from = floor;
    while !text.is_char_boundary(from) {
        from += 1;
    }
    let before = &text[from..at];
    match before.rfind(['.', '!', '?', '\n', '|']) {
        Some(i) => {
            let mut s = from + i + 1;
            while s < at && text[s..].starts_with(char::is_whitespace) {
                s += text[s..].chars().next().map_or(1, char::len_utf8);
            }
            s
        }
        None if floor == 0 => 0,
        None => at,
    }
}

/// `end` moved back to the end of a word, unless it is the end of `text` (or the passage
/// would lose more than a third of its length).
fn word_end(text: &str, start: usize, end: usize) -> usize {
    if end >= text.len() || text[end..].starts_with(char::is_whitespace) {
        return end;
    }
    match text[start..end].rfind(char::is_whitespace) {
        Some(i) if i > (end - start) * 2 / 3 => start + i,
        _ => end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Analyzer;

    fn maker(query: &[&str], max_chars: usize) -> SnippetMaker {
        let analyzer = Analyzer::English.build();
        let highlight: BTreeMap<String, f32> =
            query.iter().flat_map(|q| terms(&analyzer, q)).map(|t| (t, 1.0)).collect();
        SnippetMaker::new(
            Analyzer::English.build_finding(highlight.keys().map(String::as_str)),
            &stop_terms(&analyzer),
            &highlight,
            max_chars,
        )
    }

    #[test]
    fn function_words_are_not_marked() {
        let m = maker(&["can I send it back"], 200);
        assert_eq!(m.wanted(), ["back", "send"]);
        let s = m.of("I can help. You can send the key back within 30 days.");
        assert_eq!(s.marked("«", "»"), "You can «send» the key «back» within 30 days.");
    }

    #[test]
    fn the_passage_with_most_distinct_terms_wins() {
        let body = format!(
            "Refund refund refund, we said. {} The annual refund window is 14 days.",
            "Filler words go here and here. ".repeat(6)
        );
        let s = maker(&["annual refund"], 60).of(&body);
        assert!(s.text.starts_with("The annual refund window"), "{}", s.text);
        assert_eq!(s.highlights.len(), 2);
    }

    #[test]
    fn identifiers_are_marked_whole() {
        let s = maker(&["FBX-1042", "RMA-202610020001"], 200)
            .of("Error FBX-1042 means a conflict; see RMA-202610020001 and FBX-2210.");
        assert_eq!(s.marked("[", "]"), "Error [FBX-1042] means a conflict; see [RMA-202610020001] and [FBX]-2210.");
        let s = maker(&["order 202610020001"], 200).of("Order 202610020001 shipped.");
        assert_eq!(s.marked("[", "]"), "[Order] [202610020001] shipped.");
    }

    #[test]
    fn no_match_gives_the_beginning() {
        let s = maker(&["zzz"], 5).of("héllo world");
        assert_eq!(s.text, "héllo");
        assert!(s.highlights.is_empty());
        assert_eq!(maker(&["x"], 10).of(""), Snippet::default());
    }
}
