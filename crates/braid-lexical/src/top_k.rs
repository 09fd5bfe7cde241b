//! The `k` best `(ordinal, score)` of a ranking, ties by ordinal: the selection every
//! lexical and fuzzy leg ends with ([`TopK`]), and the same as a tantivy collector for the
//! opt-in query syntax ([`OrdTop`]).

use braid_core::Ordinal;
use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::{DocId, Score, SegmentOrdinal, SegmentReader};

/// A candidate, ordered best first: higher score, then (on equal scores) lower ordinal.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Candidate(Score, Ordinal);

impl Eq for Candidate {}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::cmp::Ord for Candidate {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
    }
}

/// The `k` best candidates by score, then lower ordinal.
///
/// Admitted candidates are appended unordered and cut back to the best `k` (a selection, not
/// a sort) whenever `2k` have gathered, which then raises the floor: a scan that admits a few
/// hundred of its documents pays a few linear selections instead of a heap's sift for each.
pub(crate) struct TopK {
    k: usize,
    /// The candidates still in the running, best `k` among them, in no order.
    kept: Vec<Candidate>,
    /// The least score that can still be kept: the `k`-th best one's as of the last cut (an
    /// equal score may win on its ordinal), 0 before (infinite when `k` is 0). Every candidate
    /// of the final top `k` reaches it, so the scan of every document's score asks it alone.
    floor: Score,
}

impl TopK {
    pub fn new(k: usize) -> Self {
        // Nothing is kept when `k` is 0.
        let floor = if k == 0 { Score::INFINITY } else { 0.0 };
        TopK { k, kept: Vec::with_capacity(2 * k.min(4096)), floor }
    }

    /// Whether a match scoring `score` might be kept (an equal score may still win on its
    /// ordinal; only positive scores are kept).
    #[inline]
    pub fn admits(&self, score: Score) -> bool {
        score > 0.0 && score >= self.floor
    }

    /// Bit `i` set where `scores[i]` is admitted now (at most 64 scores): [`TopK::admits`]
    /// for a block, in one pass that compiles to vector compares.
    pub fn admitted(&self, scores: &[Score]) -> u64 {
        debug_assert!(scores.len() <= 64);
        // `score > 0 && score >= floor` as one comparison: a positive floor implies the first;
        // a zero one asks for the least positive float (scores are never NaN, and NaN fails
        // both forms anyway).
        let least = if self.floor > 0.0 { self.floor } else { Score::from_bits(1) };
        #[cfg(target_arch = "x86_64")]
        if let Ok(block) = <&[Score; 64]>::try_from(scores) {
            return admitted_sse2(block, least);
        }
        let mut mask = 0u64;
        for (i, lanes) in scores.chunks(8).enumerate() {
            let mut bits = 0u64;
            for (j, &score) in lanes.iter().enumerate() {
                bits |= u64::from(score >= least) << j;
            }
            mask |= bits << (8 * i);
        }
        mask
    }

    pub fn offer(&mut self, score: Score, ord: Ordinal) {
        if !self.admits(score) {
            return;
        }
        self.kept.push(Candidate(score, ord));
        if self.kept.len() >= self.k.saturating_mul(2) {
            self.cut();
        }
    }

    /// Keeps the best `k` and raises the floor to the `k`-th best score.
    fn cut(&mut self) {
        if self.k == 0 || self.kept.len() < self.k {
            return;
        }
        // Candidates order best first; the `k`-th best lands at `k - 1`, the better before it.
        let (_, kth, _) = self.kept.select_nth_unstable(self.k - 1);
        self.floor = kth.0;
        self.kept.truncate(self.k);
    }

    /// Best first.
    pub fn into_sorted(mut self) -> Vec<(Ordinal, Score)> {
        if self.kept.len() > self.k {
            self.cut();
        }
        self.kept.sort_unstable();
        self.kept.into_iter().map(|Candidate(s, o)| (o, s)).collect()
    }
}

/// [`TopK::admitted`] of a whole block: four scores a compare and a move of their sign bits
/// (SSE, which every x86-64 CPU has). The compiler made the portable form shift each
/// comparison into place one at a time: for a caller who sees all of the 1M scale corpus (a
/// million scores a pass, three passes a hybrid request) the scan of the scores took 12 % of
/// a hybrid request's CPU, and 2 % this way (`perf`, `scale_bench --principals 100%`).
#[cfg(target_arch = "x86_64")]
#[inline]
fn admitted_sse2(scores: &[Score; 64], least: Score) -> u64 {
    use std::arch::x86_64::{_mm_cmpge_ps, _mm_loadu_ps, _mm_movemask_ps, _mm_set1_ps};
    let mut mask = 0u64;
    // SAFETY: SSE is part of every x86-64 CPU; each load reads the four floats of a chunk of
    // four.
    unsafe {
        let least = _mm_set1_ps(least);
        for (i, lanes) in scores.chunks_exact(4).enumerate() {
            // A NaN compares false, as in the portable form.
            let bits = _mm_movemask_ps(_mm_cmpge_ps(_mm_loadu_ps(lanes.as_ptr()), least));
            mask |= u64::from(bits as u32) << (4 * i);
        }
    }
    mask
}

/// The `k` best `(ordinal, score)` of a tantivy query, ties by ordinal.
pub(crate) struct OrdTop {
    /// How many to keep.
    pub k: usize,
}

/// One segment's [`OrdTop`].
pub(crate) struct OrdTopSegment {
    ords: Column<u64>,
    top: TopK,
}

impl Collector for OrdTop {
    type Fruit = Vec<(Ordinal, Score)>;
    type Child = OrdTopSegment;

    fn for_segment(&self, _: SegmentOrdinal, segment: &SegmentReader) -> tantivy::Result<OrdTopSegment> {
        Ok(OrdTopSegment { ords: segment.fast_fields().u64("ord")?, top: TopK::new(self.k) })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, fruits: Vec<Self::Fruit>) -> tantivy::Result<Self::Fruit> {
        let mut top = TopK::new(self.k);
        for (ord, score) in fruits.into_iter().flatten() {
            top.offer(score, ord);
        }
        Ok(top.into_sorted())
    }
}

impl SegmentCollector for OrdTopSegment {
    type Fruit = Vec<(Ordinal, Score)>;

    fn collect(&mut self, doc: DocId, score: Score) {
        if self.top.admits(score) {
            if let Some(ord) = self.ords.first(doc) {
                self.top.offer(score, ord);
            }
        }
    }

    fn harvest(self) -> Self::Fruit {
        self.top.into_sorted()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The floor never refuses a candidate that belongs in the top `k` of what was offered
    /// so far, and once `2k` were admitted it is the `k`-th best score.
    #[test]
    fn admits_every_candidate_of_the_top_k() {
        let scores = [3.0, 1.0, 0.0, 2.5, 1.0, 4.0, 0.5, 2.5, 1.5, 0.25, 2.5, 5.0, 0.75];
        for k in 0..=scores.len() {
            let mut top = TopK::new(k);
            for (ord, &score) in scores.iter().enumerate() {
                top.offer(score, ord as Ordinal);
                let mut so_far: Vec<Score> = scores[..=ord].iter().copied().filter(|&s| s > 0.0).collect();
                so_far.sort_by(|a, b| b.total_cmp(a));
                let kth = if k == 0 { Score::INFINITY } else { so_far.get(k - 1).copied().unwrap_or(0.0) };
                for probe in [0.0, 0.1, 0.25, 0.5, 1.0, 1.5, 2.5, 3.0, 4.0, 5.0, 6.0] {
                    if probe > 0.0 && probe >= kth {
                        assert!(top.admits(probe), "k {k}, after {ord}, probe {probe}");
                    }
                    assert!(!top.admits(probe) || probe > 0.0);
                    assert_eq!(top.admitted(&[probe]) == 1, top.admits(probe));
                }
                assert!(
                    top.floor <= kth || k == 0,
                    "k {k}, after {ord}: floor {} above the k-th best {kth}",
                    top.floor
                );
            }
        }
        // Ten offers, k = 2: the cuts leave the floor at the second best.
        let mut top = TopK::new(2);
        for (ord, score) in [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0].into_iter().enumerate() {
            top.offer(score, ord as Ordinal);
        }
        assert_eq!(top.floor, 7.0);
        assert_eq!(top.into_sorted(), vec![(7, 8.0), (6, 7.0)]);
        // Any k, however large, keeps what it is offered.
        let mut top = TopK::new(usize::MAX);
        top.offer(1.0, 1);
        top.offer(2.0, 0);
        assert_eq!(top.into_sorted(), vec![(0, 2.0), (1, 1.0)]);
    }

    /// A block's bits are [`TopK::admits`] of each score, for blocks of any length up to 64,
    /// before and after the top k fills.
    #[test]
    fn admitted_bits_are_admits_per_score() {
        let block: Vec<Score> = (0..64u32)
            .map(|i| [0.0, 1.5, -1.0, 0.25, 3.0, 1e-40, 2.0][i as usize % 7] * (1.0 + i as Score / 64.0))
            .collect();
        for k in [0, 1, 3, 100] {
            let mut top = TopK::new(k);
            for round in 0..3 {
                for len in [0, 1, 7, 8, 9, 31, 64] {
                    let bits = top.admitted(&block[..len]);
                    for (i, &score) in block[..len].iter().enumerate() {
                        assert_eq!(bits >> i & 1 == 1, top.admits(score), "k {k}, round {round}, score {score}");
                    }
                    assert_eq!(bits >> len.min(63), u64::from(len == 64 && top.admits(block[63])));
                }
                top.offer(1.0 + round as Score, round);
            }
        }
    }

    #[test]
    fn top_k_breaks_ties_by_ordinal_whatever_the_offer_order() {
        let offers = [(1.0, 9), (2.0, 5), (1.0, 3), (1.0, 7), (0.5, 1), (2.0, 4), (0.0, 0)];
        let mut expected: Vec<(Ordinal, Score)> = offers.iter().filter(|o| o.0 > 0.0).map(|&(s, o)| (o, s)).collect();
        expected.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for rotation in 0..offers.len() {
            let mut shuffled = offers.to_vec();
            shuffled.rotate_left(rotation);
            shuffled.swap(0, rotation % 3);
            for k in 0..=offers.len() {
                let mut top = TopK::new(k);
                for &(s, o) in &shuffled {
                    top.offer(s, o);
                }
                let want: Vec<_> = expected.iter().take(k).copied().collect();
                assert_eq!(top.into_sorted(), want, "k {k}, rotation {rotation}");
            }
        }
    }
}
