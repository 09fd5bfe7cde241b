//! Blend fusion: lexical evidence counted once, then a convex combination with the semantic
//! leg's normalised score.
//!
//! The lexical and fuzzy legs read the same words: on a clean query the fuzzy leg's exact
//! matches repeat BM25's, so summing both (equal-weight RRF over three legs) counts the query's
//! words twice and outvotes the embedding. Blend folds them into one piece of *lexical
//! evidence* per candidate, `E = max(w_lexical · n(lexical), w_fuzzy · φ · n(fuzzy))`: the fuzzy
//! leg only counts where it says more than BM25 (a corrected typo, a fragment), never on top of
//! it. The fused score is `(1 − α) · E + α · w_semantic · n(semantic)`, where `n` maps one leg's
//! raw scores over its own candidates to `[0, 1]` ([`Normalisation`]) and a leg that did not
//! find a candidate gives it 0.
//!
//! Without a semantic leg in the lists the score is `E` alone (`α` only splits lexical
//! evidence from semantic evidence).

use braid_core::Leg;

use crate::candidates::{firsts, Candidates};
use crate::normalised::{normalise, weight};
use crate::{Fused, LegList, LegScore, Normalisation};

/// The parameters of [`blend`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlendParams {
    /// How each leg's raw scores are normalised.
    pub normalisation: Normalisation,
    /// `α`: the semantic share of the fused score, in `[0, 1]`.
    pub semantic_share: f32,
    /// `φ`: how much a fuzzy match counts against an exact one, in `[0, 1]`.
    pub fuzzy_factor: f32,
}

impl BlendParams {
    /// The parameters blend runs with, fitted by `research/scripts/fit.sh` (`braid-report fit`, research/results/fit.json)
    /// on SciFact `train` and NFCorpus `dev`, clean and with real misspellings, never on test
    /// judgements: the best of 315 blends by macro nDCG@10 over those four groups (0.5176,
    /// against 0.5067 for equal-weight RRF). Blend with these is the default fusion
    /// (research/ranking-log.md has the test-set numbers). Refitted on 2026-12-03 with the legs of
    /// that day (research/results/fit.json), the best blend (α 0.5) scored 0.0003 above these; refitted
    /// again on the legs as the default search runs them, lexical feedback included
    /// (`research/scripts/fusion_study.sh`), 0.0008 above, not significantly.
    pub const DEFAULT: BlendParams =
        BlendParams { normalisation: Normalisation::MinMax, semantic_share: 0.45, fuzzy_factor: 1.0 };
}

impl Default for BlendParams {
    fn default() -> Self {
        BlendParams::DEFAULT
    }
}

/// Fuses the legs' lists by [`BlendParams`] (see the module docs). Returns the fused
/// candidates, best first (ties by best rank, then ordinal), and the highest score these legs
/// and weights can give, so that `score / ceiling` lies in `[0, 1]`.
///
/// A candidate's explain records name every leg that found it; only the legs that made its
/// score (the larger of lexical and fuzzy, and semantic) have a non-zero contribution.
pub fn blend(lists: &[LegList], params: &BlendParams) -> (Vec<Fused>, f32) {
    let alpha = unit(params.semantic_share);
    let phi = unit(params.fuzzy_factor);
    let has_semantic = lists.iter().any(|l| l.leg == Leg::Semantic);
    let lexical_share = if has_semantic { 1.0 - alpha } else { 1.0 };
    // Per leg: the factor its normalised score is multiplied by.
    let factor = |list: &LegList| -> f32 {
        let w = weight(list.weight);
        match list.leg {
            Leg::Lexical => lexical_share * w,
            Leg::Fuzzy => lexical_share * w * phi,
            Leg::Semantic => alpha * w,
        }
    };
    // Per candidate: its lexical evidence and its semantic part.
    let mut candidates: Candidates<(f32, f32)> = Candidates::for_lists(lists);
    let (mut lexical_top, mut semantic_top) = (0.0f32, 0.0f32);
    for list in lists {
        let f = factor(list);
        match list.leg {
            Leg::Semantic => semantic_top += f,
            _ => lexical_top = lexical_top.max(f),
        }
        let firsts = firsts(list);
        let norms = normalise(&firsts, params.normalisation);
        for (rank, ((ord, raw), norm)) in firsts.iter().zip(norms).enumerate() {
            let value = f * norm;
            let (fused, (lexical, semantic)) = candidates.entry(*ord);
            fused.legs.push(LegScore { leg: list.leg, rank: rank + 1, raw: *raw, contribution: value });
            match list.leg {
                Leg::Semantic => *semantic += value,
                _ => *lexical = lexical.max(value),
            }
        }
    }
    let fused = candidates
        .into_vec()
        .into_iter()
        .map(|(mut fused, (lexical, semantic))| {
            fused.score = lexical + semantic;
            // Only the larger lexical-evidence leg counts; the other's contribution is 0.
            let mut counted = false;
            for l in &mut fused.legs {
                if l.leg != Leg::Semantic {
                    if !counted && l.contribution >= lexical {
                        counted = true;
                    } else {
                        l.contribution = 0.0;
                    }
                }
            }
            fused
        })
        .collect();
    (crate::rrf::sorted(fused), lexical_top + semantic_top)
}

fn unit(x: f32) -> f32 {
    if x.is_finite() {
        x.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalised::normal_cdf;
    use braid_core::Ordinal;
    use proptest::prelude::*;

    fn params(normalisation: Normalisation, alpha: f32, phi: f32) -> BlendParams {
        BlendParams { normalisation, semantic_share: alpha, fuzzy_factor: phi }
    }

    #[test]
    fn lexical_evidence_counts_once() {
        // Record 1 is first in lexical and fuzzy; record 2 is first in semantic only.
        let lexical = LegList::new(Leg::Lexical, 1.0, vec![(1, 10.0), (2, 0.0)]);
        let fuzzy = LegList::new(Leg::Fuzzy, 1.0, vec![(1, 8.0), (3, 0.0)]);
        let semantic = LegList::new(Leg::Semantic, 1.0, vec![(2, 0.9), (1, 0.1)]);
        let (fused, ceiling) = blend(&[lexical, fuzzy, semantic], &params(Normalisation::MinMax, 0.5, 1.0));
        let score = |o| fused.iter().find(|x| x.ord == o).unwrap().score;
        // Summing both lexical legs would give record 1 twice the lexical evidence.
        assert!((score(1) - 0.5).abs() < 1e-6, "{}", score(1));
        assert!((score(2) - 0.5).abs() < 1e-6, "{}", score(2));
        assert!((ceiling - 1.0).abs() < 1e-6);
        let one = fused.iter().find(|x| x.ord == 1).unwrap();
        let counted: Vec<f32> = one.legs.iter().map(|l| l.contribution).collect();
        assert_eq!(counted.iter().filter(|c| **c > 0.0).count(), 1, "{counted:?}");
    }

    #[test]
    fn fuzzy_recovers_what_bm25_missed() {
        // A typo: BM25 finds nothing useful, the fuzzy leg finds record 5.
        let lexical = LegList::new(Leg::Lexical, 1.0, vec![(9, 3.0), (8, 1.0)]);
        let fuzzy = LegList::new(Leg::Fuzzy, 1.0, vec![(5, 6.0), (9, 1.0)]);
        let semantic = LegList::new(Leg::Semantic, 1.0, vec![(5, 0.6), (8, 0.5), (9, 0.4)]);
        let (fused, _) = blend(&[lexical, fuzzy, semantic], &params(Normalisation::MinMax, 0.5, 1.0));
        assert_eq!(fused[0].ord, 5);
        // With φ = 0 the fuzzy leg is ignored and BM25's first wins the lexical half.
        let lexical = LegList::new(Leg::Lexical, 1.0, vec![(9, 3.0), (8, 1.0)]);
        let fuzzy = LegList::new(Leg::Fuzzy, 1.0, vec![(5, 6.0), (9, 1.0)]);
        let (fused, _) = blend(&[lexical, fuzzy], &params(Normalisation::MinMax, 0.5, 0.0));
        assert_eq!(fused[0].ord, 9);
    }

    #[test]
    fn normalisations() {
        let s: Vec<(Ordinal, f32)> = vec![(1, 4.0), (2, 2.0), (3, 0.0)];
        assert_eq!(normalise(&s, Normalisation::MinMax), vec![1.0, 0.5, 0.0]);
        let z = normalise(&s, Normalisation::ZScore);
        assert!((z[1] - 0.5).abs() < 1e-6 && z[0] > 0.8 && z[2] < 0.2);
        let d = normalise(&s, Normalisation::Dbsf);
        assert!((d[1] - 0.5).abs() < 1e-6 && d[0] < 1.0 && d[2] > 0.0);
        assert_eq!(normalise(&[(1, 3.0), (2, 3.0)], Normalisation::Dbsf), vec![1.0, 1.0]);
        assert_eq!(normalise(&s, Normalisation::Tmm), vec![1.0, 0.5, 0.0]);
        let t = normalise(&[(1, 0.6), (2, 0.3), (3, -0.1)], Normalisation::Tmm);
        assert!(t[0] == 1.0 && (t[1] - 0.5).abs() < 1e-6 && t[2] == 0.0, "{t:?}");
        assert_eq!(normalise(&[(1, 0.0), (2, -1.0)], Normalisation::Tmm), vec![0.0, 0.0]);
        assert!(normalise(&[], Normalisation::ZScore).is_empty());
        assert!((normal_cdf(1.96) - 0.975).abs() < 1e-3);
        assert!((normal_cdf(-1.0) - 0.158_655).abs() < 1e-4);
    }

    #[test]
    fn degenerate_parameters_stay_in_range() {
        let a = LegList::new(Leg::Lexical, f32::NAN, vec![(1, 1.0)]);
        let b = LegList::new(Leg::Semantic, 1.0, vec![(1, f32::INFINITY)]);
        let (fused, ceiling) = blend(&[a, b], &params(Normalisation::ZScore, f32::NAN, 2.0));
        assert_eq!(fused.len(), 1);
        assert!(fused[0].score.is_finite() && ceiling.is_finite());
        assert!(blend(&[], &BlendParams::DEFAULT).0.is_empty());
    }

    proptest! {
        #[test]
        fn scores_lie_below_the_ceiling_and_sum_their_contributions(
            lists in proptest::collection::vec((proptest::collection::vec((0u64..30, -50.0f32..50.0), 0..20), 0.0f32..3.0), 0..3),
            alpha in 0.0f32..1.0,
            phi in 0.0f32..1.0,
            how in 0usize..Normalisation::ALL.len(),
        ) {
            let legs: Vec<LegList> = lists.iter().enumerate().map(|(i, (c, w))| LegList::new(Leg::ALL[i], *w, c.clone())).collect();
            let (fused, ceiling) = blend(&legs, &params(Normalisation::ALL[how], alpha, phi));
            for f in &fused {
                prop_assert!(f.score >= -1e-6 && f.score <= ceiling + 1e-5, "{} > {}", f.score, ceiling);
                let sum: f32 = f.legs.iter().map(|l| l.contribution).sum();
                prop_assert!((sum - f.score).abs() < 1e-4, "{} vs {}", sum, f.score);
            }
            for pair in fused.windows(2) {
                prop_assert!(pair[0].score >= pair[1].score);
            }
        }
    }
}
