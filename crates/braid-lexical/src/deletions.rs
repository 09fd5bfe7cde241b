//! The frequent words of a vocabulary by their deletion neighbourhoods, so a word's neighbours
//! within one or two edits are found by lookups instead of a walk of the whole vocabulary.
//!
//! Two words within `d` edits (insertions, deletions, substitutions, transpositions of
//! adjacent characters: the optimal string alignment distance) have a string in common that
//! each reaches by deleting at most `d` of its characters: a substitution or a transposition
//! deletes one character on each side, an insertion one on the longer side. So every indexed
//! word within `d` of a query word is among the words sharing one of the query's deletion
//! variants (SymSpell's idea); each such candidate is then measured exactly
//! ([`strsim::osa_distance`]), as the automaton's walk measures what it accepts.
//!
//! Variants are kept as 32-bit hashes, sorted (eight bytes a variant with the word's number):
//! a collision only adds a candidate that the exact distance then drops. The index holds the
//! words in at least 9 records, where a known query word's expansions are looked for. On
//! SciFact (one pinned core, clean test queries, same expansions and rankings), the walk of
//! those words by automaton cost about 325,000 instructions a word, and the fuzzy leg ran at
//! 2,270–2,390 q/s; with these lookups, 3,110–3,510. Built for 100,000 random words of 4–12
//! letters, it took 0.27 s and 53 MB here.

use std::hash::Hasher;

use rustc_hash::FxHasher;

use crate::saved_vocabulary::{Decoder, Encoder};

/// Edits the index answers for (a word's variants are indexed up to this many deletions).
pub(crate) const MAX_EDITS: usize = 2;

/// Words indexed by every variant at most [`MAX_EDITS`] deletions away, with their document
/// frequencies.
#[cfg_attr(test, derive(Debug, PartialEq))]
pub(crate) struct Deletions {
    words: Vec<(String, u64)>,
    /// `(variant hash, word)`, sorted.
    variants: Vec<(u32, u32)>,
    /// Where each run of `variants` sharing a hash's top `32 − shift` bits starts (one more
    /// entry at the end): a lookup reads its bucket of a few entries instead of
    /// binary-searching the whole list.
    buckets: Vec<u32>,
    shift: u32,
}

/// About this many variants a bucket, on average.
const VARIANTS_PER_BUCKET: usize = 4;

impl Deletions {
    /// A fresh build: [`Deletions::rebuild`] with nothing before.
    #[cfg(test)]
    pub(crate) fn build<'a>(words: impl Iterator<Item = (&'a [u8], u64)>, max_chars: usize) -> Deletions {
        Self::rebuild(None, words, max_chars)
    }

    /// Indexes `words` (word, document frequency; sorted by their bytes, as a vocabulary is),
    /// skipping those longer than `max_chars` plus [`MAX_EDITS`] characters (no query word the
    /// index answers for is that close to them). `previous`, the index of the vocabulary
    /// before, lends its variants for the words both hold: only words new since it are
    /// hashed, and the sorted list is merged instead of sorted whole. The result is the one a
    /// fresh build gives (tested), so a snapshot does not depend on the commits before it.
    pub(crate) fn rebuild<'a>(
        previous: Option<&Deletions>,
        words: impl Iterator<Item = (&'a [u8], u64)>,
        max_chars: usize,
    ) -> Deletions {
        let old_words: &[(String, u64)] = previous.map_or(&[], |p| &p.words);
        // Where each of the previous words went (`u32::MAX`: gone); ids follow the words'
        // order in both, so the map is increasing and keeps the previous variants sorted.
        let mut moved = vec![u32::MAX; old_words.len()];
        let mut old = 0;
        let mut kept = Vec::new();
        let mut fresh = Vec::new();
        let mut scratch = Vec::new();
        for (bytes, df) in words {
            let Ok(word) = std::str::from_utf8(bytes) else { continue };
            if word.chars().count() > max_chars + MAX_EDITS {
                continue;
            }
            let id = kept.len() as u32;
            while old < old_words.len() && old_words[old].0.as_bytes() < bytes {
                old += 1;
            }
            if old < old_words.len() && old_words[old].0.as_bytes() == bytes {
                moved[old] = id;
                old += 1;
            } else {
                variant_hashes(word, MAX_EDITS, &mut scratch);
                fresh.extend(scratch.iter().map(|&h| (h, id)));
            }
            kept.push((word.to_string(), df));
        }
        fresh.sort_unstable();
        let reused = previous.map_or(&[][..], |p| &p.variants[..]).iter().filter_map(|&(h, id)| {
            let to = moved[id as usize];
            (to != u32::MAX).then_some((h, to))
        });
        Self::bucketed(kept, merge_sorted(reused, fresh))
    }

    /// The index of `words` (sorted by their bytes) over `variants` (sorted), with its buckets.
    fn bucketed(words: Vec<(String, u64)>, variants: Vec<(u32, u32)>) -> Deletions {
        let bits = (variants.len() / VARIANTS_PER_BUCKET).max(1).ilog2().clamp(1, 24);
        let shift = 32 - bits;
        let mut buckets = Vec::with_capacity((1 << bits) + 1);
        let mut at = 0;
        for bucket in 0..=(1u64 << bits) {
            while at < variants.len() && u64::from(variants[at].0 >> shift) < bucket {
                at += 1;
            }
            buckets.push(at as u32);
        }
        Deletions { words, variants, buckets, shift }
    }

    /// Appends the index to `out` as a saved vocabulary holds it
    /// ([`crate::saved_vocabulary`]): the words (lengths, then their bytes), their
    /// frequencies, then the sorted variants. The buckets are computed again on reading.
    pub(crate) fn encode(&self, out: &mut Encoder) {
        out.u64(self.words.len() as u64);
        for (word, _) in &self.words {
            out.u32(word.len() as u32);
        }
        for (word, _) in &self.words {
            out.bytes(word.as_bytes());
        }
        for (_, df) in &self.words {
            out.u64(*df);
        }
        out.u64(self.variants.len() as u64);
        for &(hash, id) in &self.variants {
            out.u32(hash);
            out.u32(id);
        }
    }

    /// The index [`Deletions::encode`] wrote, checked as far as a lookup or a later rebuild
    /// relies on it: words in UTF-8 and strictly increasing, variants sorted and naming a word.
    ///
    /// # Errors
    /// What is wrong, when the bytes are not such an index.
    pub(crate) fn decode(input: &mut Decoder<'_>) -> std::result::Result<Deletions, String> {
        let count = input.count(4)?;
        let lens: Vec<usize> = (0..count).map(|_| input.u32().map(|n| n as usize)).collect::<Result<_, _>>()?;
        let mut words: Vec<(String, u64)> = Vec::with_capacity(count);
        for len in lens {
            let word = std::str::from_utf8(input.take(len)?).map_err(|_| "a frequent word is not UTF-8")?;
            if words.last().is_some_and(|(last, _)| last.as_bytes() >= word.as_bytes()) {
                return Err("the frequent words are not in order".into());
            }
            words.push((word.to_string(), 0));
        }
        for (_, df) in &mut words {
            *df = input.u64()?;
        }
        let count = input.count(8)?;
        let mut variants = Vec::with_capacity(count);
        for _ in 0..count {
            let variant = (input.u32()?, input.u32()?);
            if variant.1 as usize >= words.len() || variants.last().is_some_and(|&last| last > variant) {
                return Err("a deletion variant is out of order or names no word".into());
            }
            variants.push(variant);
        }
        Ok(Self::bucketed(words, variants))
    }

    /// Indexed words other than `word` within `max_edits` (at most [`MAX_EDITS`]) of it and
    /// more than `min_df` documents frequent, with their distances, in no particular order.
    pub(crate) fn near(&self, word: &str, max_edits: usize, min_df: u64, mut found: impl FnMut(&str, usize, u64)) {
        let max_edits = max_edits.min(MAX_EDITS);
        let mut hashes = Vec::new();
        variant_hashes(word, max_edits, &mut hashes);
        let mut candidates: Vec<u32> = Vec::new();
        for h in hashes {
            let bucket = (h >> self.shift) as usize;
            let run = &self.variants[self.buckets[bucket] as usize..self.buckets[bucket + 1] as usize];
            candidates.extend(run.iter().skip_while(|&&(v, _)| v < h).take_while(|&&(v, _)| v == h).map(|&(_, id)| id));
        }
        candidates.sort_unstable();
        candidates.dedup();
        for id in candidates {
            let (candidate, df) = &self.words[id as usize];
            if *df <= min_df || candidate == word {
                continue;
            }
            let distance = strsim::osa_distance(word, candidate);
            if distance <= max_edits {
                found(candidate, distance, *df);
            }
        }
    }
}

/// The union of two sorted lists, sorted.
fn merge_sorted(a: impl Iterator<Item = (u32, u32)>, b: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    let mut out = Vec::with_capacity(b.len() + a.size_hint().0);
    let mut b = b.into_iter().peekable();
    for x in a {
        while let Some(&y) = b.peek() {
            if y < x {
                out.push(y);
                b.next();
            } else {
                break;
            }
        }
        out.push(x);
    }
    out.extend(b);
    out
}

/// The hashes of `word` and of every string made by deleting up to `edits` of its characters,
/// each once, into `out` (cleared first).
fn variant_hashes(word: &str, edits: usize, out: &mut Vec<u32>) {
    out.clear();
    let chars: Vec<char> = word.chars().collect();
    let mut kept = vec![true; chars.len()];
    collect(&chars, &mut kept, 0, edits, out);
    out.sort_unstable();
    out.dedup();
}

/// Adds the hash of `chars` less the deleted ones, then of each variant deleting one more
/// character at or after `from`, up to `edits` more.
fn collect(chars: &[char], kept: &mut [bool], from: usize, edits: usize, out: &mut Vec<u32>) {
    // One character a `write`, so a string always hashes the same way.
    let mut hasher = FxHasher::default();
    let mut buf = [0u8; 4];
    for (c, _) in chars.iter().zip(kept.iter()).filter(|(_, &k)| k) {
        hasher.write(c.encode_utf8(&mut buf).as_bytes());
    }
    // FxHasher's high bits are its best mixed.
    out.push((hasher.finish() >> 32) as u32);
    if edits == 0 {
        return;
    }
    for i in from..chars.len() {
        kept[i] = false;
        collect(chars, kept, i + 1, edits - 1, out);
        kept[i] = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn near(index: &Deletions, word: &str, edits: usize, min_df: u64) -> Vec<(String, usize, u64)> {
        let mut out = Vec::new();
        index.near(word, edits, min_df, |w, d, df| out.push((w.to_string(), d, df)));
        out.sort();
        out
    }

    fn brute(words: &[(String, u64)], word: &str, edits: usize, min_df: u64) -> Vec<(String, usize, u64)> {
        let mut out: Vec<(String, usize, u64)> = words
            .iter()
            .filter(|(w, df)| *df > min_df && w != word)
            .map(|(w, df)| (w.clone(), strsim::osa_distance(word, w), *df))
            .filter(|&(_, d, _)| d <= edits)
            .collect();
        out.sort();
        out
    }

    #[test]
    fn finds_typos_of_every_kind() {
        let words: Vec<(String, u64)> =
            [("return", 40), ("retina", 12), ("policy", 30), ("receive", 20), ("über", 9), ("tuner", 10)]
                .iter()
                .map(|(w, d)| (w.to_string(), *d))
                .collect();
        let index = Deletions::build(words.iter().map(|(w, d)| (w.as_bytes(), *d)), 32);
        let found = |w: &str, e: usize| near(&index, w, e, 0).into_iter().map(|(w, d, _)| (w, d)).collect::<Vec<_>>();
        assert_eq!(found("retun", 1), [("return".to_string(), 1)]);
        assert_eq!(found("recieve", 1), [("receive".to_string(), 1)]);
        assert_eq!(found("polciy", 1), [("policy".to_string(), 1)], "a transposition is one edit");
        assert_eq!(found("plicyy", 2), [("policy".to_string(), 2)]);
        assert!(found("plicyy", 1).is_empty());
        assert_eq!(found("uber", 1), [("über".to_string(), 1)]);
        assert!(found("return", 1).is_empty(), "the word itself is not its neighbour");
        assert!(near(&index, "retun", 1, 40).is_empty(), "too rare");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// The lookups find exactly the words a brute-force scan of the distance finds.
        #[test]
        fn lookups_are_the_brute_force_scan(
            words in prop::collection::btree_map("[abcé]{1,9}", 1u64..50, 1..60),
            query in "[abcé]{0,10}",
            edits in 0usize..3,
            min_df in 0u64..30,
        ) {
            let words: Vec<(String, u64)> = words.into_iter().collect();
            let index = Deletions::build(words.iter().map(|(w, d)| (w.as_bytes(), *d)), 32);
            prop_assert_eq!(near(&index, &query, edits, min_df), brute(&words, &query, edits, min_df));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// A rebuild from the previous vocabulary's index is the fresh build, whatever words
        /// came, went or changed frequency between the two.
        #[test]
        fn a_rebuild_is_the_fresh_build(
            before in prop::collection::btree_map("[abcé]{1,7}", 1u64..50, 0..40),
            after in prop::collection::btree_map("[abcé]{1,7}", 1u64..50, 0..40),
            max_chars in 1usize..8,
        ) {
            let before: Vec<(&[u8], u64)> = before.iter().map(|(w, d)| (w.as_bytes(), *d)).collect();
            let after: Vec<(&[u8], u64)> = after.iter().map(|(w, d)| (w.as_bytes(), *d)).collect();
            let previous = Deletions::build(before.into_iter(), max_chars);
            let fresh = Deletions::build(after.iter().copied(), max_chars);
            let rebuilt = Deletions::rebuild(Some(&previous), after.iter().copied(), max_chars);
            prop_assert_eq!(rebuilt, fresh);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(100))]
        /// What [`Deletions::encode`] writes, [`Deletions::decode`] reads back as it was, and
        /// a cut anywhere in it is an error.
        #[test]
        fn an_encoded_index_decodes_to_itself(
            words in prop::collection::btree_map("[abcé]{1,7}", 1u64..50, 0..40),
            cut in 0usize..1000,
        ) {
            let words: Vec<(&[u8], u64)> = words.iter().map(|(w, d)| (w.as_bytes(), *d)).collect();
            let index = Deletions::build(words.into_iter(), 6);
            let mut out = Encoder::default();
            index.encode(&mut out);
            let bytes = out.into_bytes();
            let mut input = Decoder::new(&bytes);
            prop_assert_eq!(Deletions::decode(&mut input).unwrap(), index);
            let cut = cut % bytes.len();
            prop_assert!(Deletions::decode(&mut Decoder::new(&bytes[..cut])).is_err());
        }
    }

    #[test]
    fn variants_are_counted_once() {
        let mut out = Vec::new();
        variant_hashes("aab", 2, &mut out);
        // aab; ab, aa; a, b: five strings.
        assert_eq!(out.len(), 5);
        variant_hashes("", 2, &mut out);
        assert_eq!(out.len(), 1);
    }
}
