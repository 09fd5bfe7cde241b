//! The query's words as the caller's records know them, and "did you mean": for a content
//! word no allowed record holds, the closest word allowed records do hold (fewest edits, then
//! the query's context, [`crate::context`], then visible frequency).

use std::collections::HashSet;

use braid_core::{Result, Suggestion};
use tantivy::tokenizer::TextAnalyzer;

use super::View;
use crate::analysis;
use crate::context;
use crate::phonetic::Readings;
use crate::query_builder::{max_edits, MAX_QUERY_TERMS};
use crate::visible_counts::VisibleCounts;

/// A query word and how often it occurs in records the caller may see.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryWord {
    /// The word, lowercased and folded, unstemmed.
    pub word: String,
    /// Records of the allowed set that contain it.
    pub visible_df: usize,
    /// Whether the analyzer drops it as a stop word.
    pub stop_word: bool,
    /// For a content word no allowed record holds: the closest word one does hold.
    pub suggestion: Option<Suggestion>,
}

impl View<'_> {
    /// The query's words as the caller's records know them, in query order, without repeats:
    /// how many allowed records hold each, and — for a content word that none holds — the
    /// closest word that allowed records do hold ("did you mean").
    ///
    /// # Errors
    /// [`braid_core::Error::Lexical`] on an internal failure.
    pub fn query_words(&self, text: &str) -> Result<Vec<QueryWord>> {
        let (analyzer, words_analyzer) = self.snapshot.analyzers(text);
        let mut words = analysis::terms(words_analyzer, text);
        words.truncate(MAX_QUERY_TERMS);
        let mut seen = HashSet::new();
        words.retain(|w| seen.insert(w.clone()));
        let mut out: Vec<QueryWord> = words
            .into_iter()
            .map(|word| {
                let stop_word = analysis::terms(analyzer, &word).is_empty();
                let visible_df = self.word_df(&word) as usize;
                QueryWord { word, visible_df, stop_word, suggestion: None }
            })
            .collect();
        // The known content words: the context a correction is chosen in.
        let context: Vec<(&str, u64)> = out
            .iter()
            .filter(|w| !w.stop_word && w.visible_df > 0)
            .map(|w| (w.word.as_str(), w.visible_df as u64))
            .collect();
        let suggestions: Vec<Option<Suggestion>> = out
            .iter()
            .map(|w| if w.stop_word || w.visible_df > 0 { None } else { self.closest(&w.word, analyzer, &context) })
            .collect();
        for (word, suggestion) in out.iter_mut().zip(suggestions) {
            word.suggestion = suggestion;
        }
        self.check()?;
        Ok(out)
    }

    /// The closest word allowed records hold, for a word none holds: fewest edits, then the
    /// one that most allowed records hold beside the query's other known words (`context`,
    /// see [`crate::context`]), then most frequent among allowed records, then alphabetical;
    /// never a stop word (the legs would drop it). Else a Chinese word its pinyin, initials or
    /// homophones name.
    fn closest(&self, word: &str, analyzer: &TextAnalyzer, context: &[(&str, u64)]) -> Option<Suggestion> {
        let has_digits = word.chars().any(|c| c.is_ascii_digit());
        let edits = max_edits(word).max(usize::from(word.chars().count() >= 3 && !has_digits));
        let neighbours = if edits == 0 { Vec::new() } else { self.neighbours_of(word, edits) };
        // Neighbours come closest first: keep those at the least distance that count.
        let mut least = None;
        let mut tied: Vec<(String, u64)> = Vec::new();
        for (neighbour, distance, _) in neighbours {
            if least.is_some_and(|d| distance > d) {
                break;
            }
            let df = self.word_df(&neighbour);
            if df == 0 || analysis::terms(analyzer, &neighbour).is_empty() {
                continue;
            }
            least = Some(distance);
            tied.push((neighbour, df));
        }
        if let Some(distance) = least {
            tied.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            tied.truncate(context::MAX_TIED);
            let pick = context::choose(self, &tied, context);
            let suggestion = tied.swap_remove(pick).0;
            return Some(Suggestion { term: word.to_string(), suggestion, distance });
        }
        let df = |w: &str| self.word_df(w);
        self.phonetic().alternatives(word, &df).into_iter().next().map(|suggestion| Suggestion {
            term: word.to_string(),
            suggestion,
            distance: 1,
        })
    }
}
