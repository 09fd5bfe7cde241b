use braid_core::{Leg, Ordinal};
use smallvec::SmallVec;

use crate::candidates::Candidates;

/// One leg's ranked candidates, best first, with the leg's fusion weight.
#[derive(Debug, Clone)]
pub struct LegList {
    /// The leg.
    pub leg: Leg,
    /// The leg's fusion weight.
    pub weight: f32,
    /// `(ordinal, raw score)`, best first.
    pub candidates: Vec<(Ordinal, f32)>,
}

impl LegList {
    /// A leg's ranked list.
    pub fn new(leg: Leg, weight: f32, candidates: Vec<(Ordinal, f32)>) -> Self {
        LegList { leg, weight, candidates }
    }
}

/// One leg's part in a fused candidate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LegScore {
    /// The leg.
    pub leg: Leg,
    /// 1-based rank in the leg's list.
    pub rank: usize,
    /// The leg's raw score.
    pub raw: f32,
    /// What the leg added to the fused score.
    pub contribution: f32,
}

/// The legs' parts in one fused candidate: held inline up to one per leg, so fusing a few
/// hundred candidates allocates nothing per candidate.
pub type LegScores = SmallVec<[LegScore; Leg::ALL.len()]>;

/// A fused candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused {
    /// The record's ordinal.
    pub ord: Ordinal,
    /// The fused score: the sum of the contributions.
    pub score: f32,
    /// The legs that found the candidate, in the order the lists were given.
    pub legs: LegScores,
}

impl Fused {
    fn best_rank(&self) -> usize {
        self.legs.iter().map(|l| l.rank).min().unwrap_or(usize::MAX)
    }
}

/// Reciprocal rank fusion with constant `k` (60 is the usual choice) and per-leg weights.
///
/// A candidate listed twice by one leg counts once, at its best rank. Ties in the fused score
/// are broken by the best rank any leg gave, then by ordinal, so the order is deterministic.
/// Legs with a weight of zero or below still appear in explain records but contribute
/// nothing.
pub fn rrf(lists: &[LegList], k: f32) -> Vec<Fused> {
    let k = if k.is_finite() && k >= 0.0 { k } else { 60.0 };
    let mut candidates: Candidates<()> = Candidates::for_lists(lists);
    for list in lists {
        let weight = if list.weight.is_finite() { list.weight.max(0.0) } else { 0.0 };
        let mut rank = 0;
        for &(ord, raw) in &list.candidates {
            let (fused, ()) = candidates.entry(ord);
            if fused.legs.iter().any(|l| l.leg == list.leg) {
                continue;
            }
            rank += 1;
            let contribution = weight / (k + rank as f32);
            fused.score += contribution;
            fused.legs.push(LegScore { leg: list.leg, rank, raw, contribution });
        }
    }
    sorted(candidates.into_vec().into_iter().map(|(fused, ())| fused).collect())
}

/// Best fused score first; ties by the best rank any leg gave, then by ordinal.
pub(crate) fn sorted(mut fused: Vec<Fused>) -> Vec<Fused> {
    fused.sort_by(|a, b| {
        b.score.total_cmp(&a.score).then_with(|| a.best_rank().cmp(&b.best_rank())).then_with(|| a.ord.cmp(&b.ord))
    });
    fused
}

/// The highest fused score RRF can give with these legs: a candidate ranked first by each.
/// Dividing by it maps RRF scores to `[0, 1]`.
pub fn rrf_ceiling(lists: &[LegList], k: f32) -> f32 {
    let k = if k.is_finite() && k >= 0.0 { k } else { 60.0 };
    lists.iter().map(|l| if l.weight.is_finite() { l.weight.max(0.0) } else { 0.0 }).sum::<f32>() / (k + 1.0)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use proptest::prelude::*;

    #[test]
    fn contributions_and_weights() {
        let a = LegList::new(Leg::Lexical, 2.0, vec![(1, 5.0), (2, 4.0)]);
        let b = LegList::new(Leg::Semantic, 1.0, vec![(2, 0.9)]);
        let fused = rrf(&[a, b], 60.0);
        assert_eq!(fused.len(), 2);
        // ord 2: 2/62 + 1/61 > ord 1: 2/61
        assert_eq!(fused[0].ord, 2);
        assert!((fused[0].score - (2.0 / 62.0 + 1.0 / 61.0)).abs() < 1e-6);
        assert_eq!(fused[1].legs[0].rank, 1);
        assert!((fused[1].score - 2.0 / 61.0).abs() < 1e-6);
    }

    #[test]
    fn duplicates_count_once_and_ranks_skip_them() {
        let a = LegList::new(Leg::Lexical, 1.0, vec![(1, 5.0), (1, 4.0), (2, 3.0)]);
        let fused = rrf(&[a], 60.0);
        let two = fused.iter().find(|f| f.ord == 2).unwrap();
        assert_eq!(two.legs[0].rank, 2);
        assert_eq!(fused.len(), 2);
    }

    #[test]
    fn empty_and_degenerate() {
        assert!(rrf(&[], 60.0).is_empty());
        let a = LegList::new(Leg::Fuzzy, f32::NAN, vec![(1, 1.0)]);
        let fused = rrf(&[a], f32::NAN);
        assert_eq!(fused[0].score, 0.0);
    }

    /// The naive oracle: sum of weight/(k+rank) over legs, using first occurrences.
    fn oracle(lists: &[(Vec<Ordinal>, f32)], k: f32) -> HashMap<Ordinal, f32> {
        let mut out = HashMap::new();
        for (ords, w) in lists {
            let mut seen = Vec::new();
            for ord in ords {
                if seen.contains(ord) {
                    continue;
                }
                seen.push(*ord);
                *out.entry(*ord).or_insert(0.0) += w / (k + seen.len() as f32);
            }
        }
        out
    }

    proptest! {
        #[test]
        fn matches_naive_oracle(
            lists in proptest::collection::vec((proptest::collection::vec(0u64..40, 0..30), 0.0f32..3.0), 0..3),
            k in 0.0f32..100.0,
        ) {
            let legs: Vec<LegList> = lists.iter().enumerate().map(|(i, (ords, w))| {
                LegList::new(Leg::ALL[i], *w, ords.iter().map(|&o| (o, 0.0)).collect())
            }).collect();
            let fused = rrf(&legs, k);
            let want = oracle(&lists, k);
            prop_assert_eq!(fused.len(), want.len());
            for f in &fused {
                prop_assert!((f.score - want[&f.ord]).abs() < 1e-4);
                let sum: f32 = f.legs.iter().map(|l| l.contribution).sum();
                prop_assert!((sum - f.score).abs() < 1e-5);
            }
            for pair in fused.windows(2) {
                prop_assert!(pair[0].score >= pair[1].score);
            }
        }
    }
}
