//! What the query builders and "did you mean" may ask about the index: counts over the
//! records the caller may see, never the index's own.
//!
//! [`VisibleCounts`] is the one door through which [`crate::query_builder`] (which words a
//! query expands to) and [`crate::context`] (which correction fits the query's other words)
//! read the index. A request's [`crate::View`] implements it over its allowed set, so every
//! decision they take is a function of the visible records (ARCHITECTURE.md, threat model).

use crate::vocabulary::Neighbour;

/// Document frequencies and word lists over the records a request may see.
///
/// An index error met while counting is kept by the implementation and returned by the leg
/// that asked, so the counts themselves are plain numbers (an unreadable posting list counts
/// as none).
pub(crate) trait VisibleCounts {
    /// Allowed records holding `word` (unstemmed, as the words field indexes it).
    fn word_df(&self, word: &str) -> u64;

    /// Allowed records holding the analysed `term` in title or body.
    fn text_df(&self, term: &str) -> u64;

    /// Known words within `edits` of `word` that more than `min_df` allowed records hold:
    /// closest first, then most frequent among allowed records, then alphabetical; at most
    /// `limit`, cut only after visibility.
    fn expansions(&self, word: &str, edits: usize, min_df: u64, limit: usize) -> Vec<Neighbour>;

    /// Known words starting with `prefix` (itself excluded) that allowed records hold, most
    /// frequent among them first (then alphabetical), at most `limit`.
    fn completions(&self, prefix: &str, limit: usize) -> Vec<(String, u64)>;

    /// For each of the `tied` words, the allowed records that hold it and at least one of the
    /// `context` words (all unstemmed; see [`crate::context`]).
    fn joint(&self, tied: &[&str], context: &[&str]) -> Vec<u64>;
}
