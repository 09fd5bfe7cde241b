//! The vocabulary of a snapshot as an `fst` map (word → document frequency), and the same
//! words reversed: prefix completion walks the first; "did you mean" and the fuzzy expansion
//! of unknown words walk both ([`crate::typo_walk`]); a known word's expansions, which only
//! frequent words can be, are looked up among the frequent words' deletion variants
//! ([`crate::deletions`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use braid_core::Result;
use fst::automaton::Str;
use fst::{Automaton, IntoStreamer, Map, Streamer};
use tantivy::schema::Field;
use tantivy::SegmentReader;

use crate::deletions::Deletions;
use crate::error::{lexical, LexicalError};
use crate::typo_walk;

/// Words longer than this are not expanded (no one types them with typos worth fixing).
const MAX_FUZZY_CHARS: usize = typo_walk::MAX_CHARS;

/// Words at least this frequent are also indexed by their deletion variants
/// ([`Deletions`]). A known query word is only expanded toward words more frequent than it by
/// a ratio (8, see `query_builder.rs`), so toward words in at least 9 records: those lookups never walk
/// the long tail of rare words, which is most of a vocabulary.
const FREQUENT: u64 = 9;

/// word → document frequency over every segment of one snapshot.
pub(crate) struct Vocabulary {
    map: Map<Vec<u8>>,
    /// The words of `map` with their characters reversed, for the typo walks' backward half.
    /// Built with the snapshot (about as long as `map`: ~30 ms for SciFact's words), not by
    /// the first walk: a request never pays for another's, nor waits on it.
    backward: Map<Vec<u8>>,
    /// The words of `map` at least [`FREQUENT`].
    frequent: Deletions,
    /// The highest document frequency of any word.
    max_df: u64,
}

/// The walks of a whole vocabulary made for one search, by word and distance: a misspelt word
/// is looked up by the fuzzy leg and again for "did you mean", and walks once. It lives as
/// long as one request, so repeated queries (a benchmark's passes) never share walks.
#[derive(Default)]
pub(crate) struct Lookups(Mutex<Walks>);

/// Neighbours found, by word and distance.
type Walks = HashMap<(String, usize), Arc<[Neighbour]>>;

/// A known word near a query word.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Neighbour {
    pub word: String,
    pub distance: usize,
    pub df: u64,
}

impl Vocabulary {
    /// The vocabulary of `field` over `segments`; `previous` (the vocabulary of the snapshot
    /// before) lends its typo index's work for the words both hold, with the same result as
    /// without it.
    pub fn build(segments: &[SegmentReader], field: Field, previous: Option<&Vocabulary>) -> Result<Self> {
        let mut merged: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        for segment in segments {
            let inverted = segment.inverted_index(field).map_err(lexical)?;
            let mut stream = inverted.terms().stream().map_err(lexical)?;
            while stream.advance() {
                *merged.entry(stream.key().to_vec()).or_insert(0) += u64::from(stream.value().doc_freq);
            }
        }
        Self::from_sorted(merged, previous)
    }

    fn from_sorted(words: BTreeMap<Vec<u8>, u64>, previous: Option<&Vocabulary>) -> Result<Self> {
        let error = |e: fst::Error| lexical(LexicalError::Vocabulary(e));
        let frequent = Deletions::rebuild(
            previous.map(|p| &p.frequent),
            words.iter().filter(|(_, &df)| df >= FREQUENT).map(|(w, &df)| (w.as_slice(), df)),
            MAX_FUZZY_CHARS,
        );
        let max_df = words.values().copied().max().unwrap_or(0);
        let map = Map::from_iter(words).map_err(error)?;
        let backward = typo_walk::reversed(&map).map_err(error)?;
        Ok(Vocabulary { map, backward, frequent, max_df })
    }

    /// Document frequency of `word` (0 when unknown).
    pub fn df(&self, word: &str) -> u64 {
        self.map.get(word).unwrap_or(0)
    }

    /// Known words within `max_distance` edits of `word` (transpositions count as one edit),
    /// the word itself excluded; closest first, then most frequent.
    pub fn neighbours(&self, word: &str, max_distance: usize, lookups: &Lookups) -> Vec<Neighbour> {
        self.walk(word, max_distance, lookups).to_vec()
    }

    /// [`typo_walk::near`] over the whole vocabulary, once per request.
    fn walk(&self, word: &str, max_distance: usize, lookups: &Lookups) -> Arc<[Neighbour]> {
        let key = (word.to_string(), max_distance);
        if let Some(found) = lookups.0.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return found.clone();
        }
        let edits = max_distance.min(crate::deletions::MAX_EDITS);
        let mut found: Vec<Neighbour> = typo_walk::near(&self.map, &self.backward, word, edits)
            .into_iter()
            .map(|(word, distance, df)| Neighbour { word, distance, df })
            .collect();
        sort_neighbours(&mut found);
        let found: Arc<[Neighbour]> = found.into();
        lookups.0.lock().unwrap_or_else(|p| p.into_inner()).insert(key, found.clone());
        found
    }

    /// The words made only of Han characters, with their document frequencies (empty, and
    /// cheap, for a vocabulary without Chinese).
    pub fn han_words(&self) -> Vec<(String, u64)> {
        let mut stream = self.map.range().ge("\u{3400}").into_stream();
        let mut out = Vec::new();
        while let Some((key, df)) = stream.next() {
            if let Ok(w) = std::str::from_utf8(key) {
                if w.chars().all(braid_core::is_han) {
                    out.push((w.to_string(), df));
                }
            }
        }
        out
    }

    /// [`Vocabulary::neighbours`] with a document frequency above `min_df`, in the same order;
    /// looked up among the frequent words when `min_df` leaves only those in, and none when no
    /// word is that frequent.
    pub fn neighbours_above(&self, word: &str, max_distance: usize, min_df: u64, lookups: &Lookups) -> Vec<Neighbour> {
        if min_df >= self.max_df {
            return Vec::new();
        }
        if min_df < FREQUENT - 1 {
            let mut out = self.walk(word, max_distance, lookups).to_vec();
            out.retain(|n| n.df > min_df);
            return out;
        }
        if max_distance == 0 || word.chars().count() > MAX_FUZZY_CHARS {
            return Vec::new();
        }
        let mut out = Vec::new();
        self.frequent.near(word, max_distance, min_df, |w, distance, df| {
            out.push(Neighbour { word: w.to_string(), distance, df });
        });
        sort_neighbours(&mut out);
        out
    }

    /// Known words that start with `prefix` (the prefix itself excluded), most frequent first.
    pub fn completions(&self, prefix: &str, limit: usize) -> Vec<(String, u64)> {
        if prefix.is_empty() || limit == 0 {
            return Vec::new();
        }
        let automaton = Str::new(prefix).starts_with();
        let mut stream = self.map.search(automaton).into_stream();
        let mut out = Vec::new();
        while let Some((key, df)) = stream.next() {
            if key != prefix.as_bytes() {
                if let Ok(w) = std::str::from_utf8(key) {
                    out.push((w.to_string(), df));
                }
            }
        }
        out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out.truncate(limit);
        out
    }
}

/// Closest first, then most frequent, then alphabetical.
fn sort_neighbours(out: &mut [Neighbour]) {
    out.sort_by(|a, b| a.distance.cmp(&b.distance).then(b.df.cmp(&a.df)).then_with(|| a.word.cmp(&b.word)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab(words: &[(&str, u64)]) -> Vocabulary {
        Vocabulary::from_sorted(words.iter().map(|(w, d)| (w.as_bytes().to_vec(), *d)).collect(), None).unwrap()
    }

    #[test]
    fn frequent_neighbours_are_the_frequent_among_all() {
        let words: Vec<(String, u64)> =
            ["return", "retune", "rerun", "retina", "reruns", "returns", "retuned", "tuner"]
                .iter()
                .enumerate()
                .map(|(i, w)| (w.to_string(), [1, 3, 8, 9, 10, 90, 2, 800][i]))
                .collect();
        let refs: Vec<(&str, u64)> = words.iter().map(|(w, d)| (w.as_str(), *d)).collect();
        let v = vocab(&refs);
        for word in ["retun", "return", "retunes", "rerun"] {
            for distance in [1, 2] {
                for min_df in [0, 1, 7, 8, 9, 15, 16, 17, 80, 81, 89, 90, 727, 728, 729, 799, 800, 1000] {
                    let lookups = Lookups::default();
                    let mut expected = v.neighbours(word, distance, &lookups);
                    expected.retain(|n| n.df > min_df);
                    let fresh = v.neighbours_above(word, distance, min_df, &Lookups::default());
                    assert_eq!(fresh, expected, "{word} {distance} {min_df}");
                    assert_eq!(v.neighbours_above(word, distance, min_df, &lookups), expected, "remembered");
                }
            }
        }
    }

    #[test]
    fn neighbours_count_transpositions_as_one_edit() {
        let v = vocab(&[("return", 10), ("retina", 2), ("policy", 5), ("receive", 3)]);
        let n = v.neighbours("retun", 1, &Lookups::default());
        assert_eq!(n[0].word, "return");
        assert_eq!(n[0].distance, 1);
        let n = v.neighbours("recieve", 1, &Lookups::default());
        assert_eq!(n.iter().map(|n| n.word.as_str()).collect::<Vec<_>>(), ["receive"]);
        assert!(v.neighbours("policy", 1, &Lookups::default()).is_empty());
        assert!(v.neighbours("zzzzzz", 2, &Lookups::default()).is_empty());
    }

    #[test]
    fn completions_by_frequency() {
        let v = vocab(&[("kubectl", 3), ("kubernetes", 9), ("kube", 1), ("cube", 4)]);
        assert_eq!(v.completions("kube", 5), [("kubernetes".to_string(), 9), ("kubectl".to_string(), 3)]);
        assert!(v.completions("", 5).is_empty());
    }
}
