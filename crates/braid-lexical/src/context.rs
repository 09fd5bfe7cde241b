//! "Did you mean" in context: among corrections equally close to a typo, the one the query's
//! other words keep company with.
//!
//! `virual infections` is one edit from `viral` and from `visual`; `Food Stroe` from `store`
//! and `stroke`; `Cholesterol Siz` from `size` and `six`. The most frequent word wins such a
//! tie when the query has nothing else to go by, and that is often the wrong one. Here each
//! tied correction is scored by how many allowed records hold it *and* one of the query's
//! other known words (the joint count behind a noisy-channel speller's `P(correction, context)`),
//! then by its own frequency, then alphabetically.
//!
//! Every count is over the records the caller may see, and whether the counting runs at all
//! depends on visible counts only ([`MAX_POSTINGS`]), so the choice is a function of the
//! visible records, as every other word list of the view is.

use std::collections::HashMap;

use tantivy::{DocId, SegmentOrdinal};

use crate::visible_counts::VisibleCounts;

/// Tied corrections compared at most (the most frequent among allowed records).
pub(crate) const MAX_TIED: usize = 8;

/// The counting is skipped (the most frequent correction wins) when the tied corrections and
/// the context words hold more than this many allowed records between them: it reads each of
/// their postings once.
pub(crate) const MAX_POSTINGS: u64 = 200_000;

/// The correction to keep among `tied` (word, visible document frequency; most frequent first,
/// then alphabetical, at least one), given the query's other known words `context` with their
/// visible document frequencies.
pub(crate) fn choose(counts: &impl VisibleCounts, tied: &[(String, u64)], context: &[(&str, u64)]) -> usize {
    if tied.len() < 2 || context.is_empty() {
        return 0;
    }
    let postings: u64 = tied.iter().map(|(_, df)| df).chain(context.iter().map(|(_, df)| df)).sum();
    if postings > MAX_POSTINGS {
        return 0;
    }
    let tied_words: Vec<&str> = tied.iter().map(|(w, _)| w.as_str()).collect();
    let context_words: Vec<&str> = context.iter().map(|(w, _)| *w).collect();
    // The first of the best keeps the order of `tied` among equals.
    let counts = counts.joint(&tied_words, &context_words);
    let best = counts.iter().copied().max().unwrap_or(0);
    counts.iter().position(|&n| n == best).unwrap_or(0)
}

/// For each of the `tied` words, the records holding it and one of the `context` words, where
/// `each_with` calls its second argument with each (allowed) record holding a word, by
/// segment ordinal and document id.
pub(crate) fn joint_counts(
    each_with: impl Fn(&str, &mut dyn FnMut(SegmentOrdinal, DocId)),
    tied: &[&str],
    context: &[&str],
) -> Vec<u64> {
    // Records holding a context word, by segment.
    let mut near: HashMap<SegmentOrdinal, Vec<DocId>> = HashMap::new();
    for word in context {
        each_with(word, &mut |segment, doc| near.entry(segment).or_default().push(doc));
    }
    for docs in near.values_mut() {
        docs.sort_unstable();
        docs.dedup();
    }
    tied.iter()
        .map(|word| {
            let mut n = 0u64;
            each_with(word, &mut |segment, doc| {
                n += u64::from(near.get(&segment).is_some_and(|docs| docs.binary_search(&doc).is_ok()));
            });
            n
        })
        .collect()
}
