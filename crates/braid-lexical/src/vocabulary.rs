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
use crate::saved_vocabulary::{Decoder, Encoder};
use crate::typo_walk;

/// Words longer than this are not expanded (no one types them with typos worth fixing).
const MAX_FUZZY_CHARS: usize = typo_walk::MAX_CHARS;

/// Words at least this frequent are also indexed by their deletion variants
/// ([`Deletions`]). A known query word is only expanded toward words more frequent than it by
/// a ratio (8, see `query_builder.rs`), so toward words in at least 9 records: those lookups never walk
/// the long tail of rare words, which is most of a vocabulary.
const FREQUENT: u64 = 9;

/// word → document frequency over a set of segments of one snapshot (a tier of its vocabulary).
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

/// Neighbours found, by vocabulary (its address: one request reads one snapshot's), word and
/// distance.
type Walks = HashMap<(usize, String, usize), Arc<[Neighbour]>>;

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

    /// The vocabulary of `words` (word → document frequency), built afresh.
    #[cfg(test)]
    pub(crate) fn from_words(words: BTreeMap<Vec<u8>, u64>) -> Result<Self> {
        Self::from_sorted(words, None)
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

    /// Appends the vocabulary to `out` as a saved vocabulary holds it
    /// ([`crate::saved_vocabulary`]): the settings it was built with, its highest frequency,
    /// both maps' bytes, and the frequent words' deletion index.
    pub fn encode(&self, out: &mut Encoder) {
        out.u64(FREQUENT);
        out.u32(MAX_FUZZY_CHARS as u32);
        out.u64(self.max_df);
        for map in [&self.map, &self.backward] {
            let bytes = map.as_fst().as_bytes();
            out.u64(bytes.len() as u64);
            out.bytes(bytes);
        }
        self.frequent.encode(out);
    }

    /// The vocabulary [`Vocabulary::encode`] wrote, or what is wrong with the bytes. Words the
    /// settings of this build would index otherwise (another [`FREQUENT`] or longest fuzzy
    /// word) are refused as well: the vocabulary is then built again.
    pub fn decode(input: &mut Decoder<'_>) -> std::result::Result<Self, String> {
        let (frequent, max_chars) = (input.u64()?, input.u32()?);
        if frequent != FREQUENT || max_chars as usize != MAX_FUZZY_CHARS {
            return Err(format!("built for words of {frequent} records and {max_chars} characters"));
        }
        let max_df = input.u64()?;
        let mut maps = Vec::with_capacity(2);
        for name in ["words", "reversed words"] {
            let len = input.count(1)?;
            let bytes = input.take(len)?.to_vec();
            maps.push(Map::new(bytes).map_err(|e| format!("the map of {name}: {e}"))?);
        }
        let backward = maps.pop().expect("two maps");
        let map = maps.pop().expect("two maps");
        if map.len() != backward.len() {
            return Err(format!("{} words, {} reversed", map.len(), backward.len()));
        }
        let frequent = Deletions::decode(input)?;
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
        let key = (std::ptr::from_ref(self) as usize, word.to_string(), max_distance);
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

/// Vocabularies of disjoint sets of segments (the snapshot's tiers) read as one: each word's
/// document frequency is the sum of its frequencies in them. With one vocabulary it is that
/// vocabulary exactly.
pub(crate) struct ScopedVocabulary<'a> {
    parts: Vec<&'a Vocabulary>,
}

impl<'a> ScopedVocabulary<'a> {
    /// The vocabularies `parts` read as one (none: an empty index).
    pub fn new(parts: Vec<&'a Vocabulary>) -> Self {
        ScopedVocabulary { parts }
    }

    /// Document frequency of `word` (0 when unknown).
    pub fn df(&self, word: &str) -> u64 {
        self.parts.iter().map(|p| p.df(word)).sum()
    }

    /// [`Vocabulary::neighbours`] over every vocabulary.
    pub fn neighbours(&self, word: &str, max_distance: usize, lookups: &Lookups) -> Vec<Neighbour> {
        if let [one] = self.parts.as_slice() {
            return one.neighbours(word, max_distance, lookups);
        }
        let found = self.parts.iter().flat_map(|p| p.walk(word, max_distance, lookups).to_vec());
        self.summed(found, 0)
    }

    /// [`Vocabulary::neighbours_above`] over every vocabulary. A word above `min_df` in the
    /// sum is above `min_df / n` in at least one of the `n` vocabularies, so each is asked for
    /// those and the sums decide.
    pub fn neighbours_above(&self, word: &str, max_distance: usize, min_df: u64, lookups: &Lookups) -> Vec<Neighbour> {
        match self.parts.as_slice() {
            [] => return Vec::new(),
            [one] => return one.neighbours_above(word, max_distance, min_df, lookups),
            _ => {}
        }
        let share = min_df / self.parts.len() as u64;
        let found = self.parts.iter().flat_map(|p| p.neighbours_above(word, max_distance, share, lookups));
        self.summed(found, min_df)
    }

    /// `found` once per word, with summed frequencies above `min_df`, in neighbour order.
    fn summed(&self, found: impl Iterator<Item = Neighbour>, min_df: u64) -> Vec<Neighbour> {
        let mut by_word: BTreeMap<String, usize> = BTreeMap::new();
        for n in found {
            by_word.entry(n.word).or_insert(n.distance);
        }
        let mut out: Vec<Neighbour> = by_word
            .into_iter()
            .map(|(word, distance)| Neighbour { df: self.df(&word), word, distance })
            .filter(|n| n.df > min_df)
            .collect();
        sort_neighbours(&mut out);
        out
    }

    /// [`Vocabulary::completions`] over every vocabulary.
    pub fn completions(&self, prefix: &str, limit: usize) -> Vec<(String, u64)> {
        if let [one] = self.parts.as_slice() {
            return one.completions(prefix, limit);
        }
        let mut by_word: BTreeMap<String, u64> = BTreeMap::new();
        for part in &self.parts {
            for (word, df) in part.completions(prefix, usize::MAX) {
                *by_word.entry(word).or_insert(0) += df;
            }
        }
        let mut out: Vec<(String, u64)> = by_word.into_iter().collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out.truncate(limit);
        out
    }
}

/// Closest first, then most frequent, then alphabetical.
pub(crate) fn sort_neighbours(out: &mut [Neighbour]) {
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

    /// Partitions' vocabularies read as one answer as the vocabulary of their records together:
    /// summed frequencies, the same neighbours above any threshold, the same completions.
    #[test]
    fn scoped_vocabularies_read_as_one() {
        let a = [("return", 4), ("retune", 9), ("rerun", 1), ("retina", 30), ("kube", 2), ("kubectl", 5)];
        let b = [("return", 6), ("returns", 12), ("retina", 1), ("kubernetes", 40), ("kube", 7)];
        let mut sum: BTreeMap<&str, u64> = BTreeMap::new();
        for (w, df) in a.iter().chain(&b) {
            *sum.entry(w).or_insert(0) += df;
        }
        let whole = vocab(&sum.into_iter().collect::<Vec<_>>());
        let (va, vb) = (vocab(&a), vocab(&b));
        let scoped = ScopedVocabulary::new(vec![&va, &vb]);
        for word in ["return", "retun", "retina", "kube", "nothing"] {
            assert_eq!(scoped.df(word), whole.df(word), "{word}");
            for distance in [1, 2] {
                let (l1, l2) = (Lookups::default(), Lookups::default());
                assert_eq!(scoped.neighbours(word, distance, &l1), whole.neighbours(word, distance, &l2), "{word}");
                for min_df in [0, 1, 4, 8, 9, 10, 11, 20, 30, 31, 46, 100] {
                    assert_eq!(
                        scoped.neighbours_above(word, distance, min_df, &l1),
                        whole.neighbours_above(word, distance, min_df, &l2),
                        "{word} {distance} {min_df}"
                    );
                }
            }
        }
        for (prefix, limit) in [("kube", 5), ("kube", 1), ("ret", 3), ("", 3)] {
            assert_eq!(scoped.completions(prefix, limit), whole.completions(prefix, limit), "{prefix}");
        }
        // An empty index has no vocabulary at all.
        let none = ScopedVocabulary::new(Vec::new());
        let lookups = Lookups::default();
        assert!(
            none.neighbours_above("return", 2, 3, &lookups).is_empty()
                && none.neighbours("return", 2, &lookups).is_empty()
        );
        assert!(none.completions("re", 3).is_empty() && none.df("return") == 0);
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
