//! Score-normalised fusion: each leg's raw scores are mapped to `[0, 1]`, then averaged with
//! the legs' weights.

use braid_core::Ordinal;

use crate::candidates::{firsts, Candidates};
use crate::{Fused, LegList, LegScore};

/// How raw scores of one leg are mapped to `[0, 1]` before they are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Normalisation {
    /// `(s − min) / (max − min)` over the leg's candidates (all 1 when they tie).
    MinMax,
    /// `Φ((s − mean) / std)`: the standard normal CDF of the z-score over the leg's
    /// candidates, a distribution-based normalisation robust to one outlying score.
    ZScore,
    /// Distribution-based score fusion (DBSF): `(s − (mean − 3σ)) / 6σ`, clipped to `[0, 1]`;
    /// the leg's score distribution, not its extremes, sets the scale.
    Dbsf,
    /// Theoretical min-max: `max(s, 0) / max` over the leg's candidates, the floor being the
    /// least score the leg can give related text (BM25 and a cosine similarity are 0 for text
    /// that shares nothing), not the last candidate's (Bruch et al., "An Analysis of Fusion
    /// Functions for Hybrid Retrieval", 2023). A leg whose candidates score alike keeps them
    /// alike instead of stretching their small differences over `[0, 1]`.
    Tmm,
}

impl Normalisation {
    /// Every normalisation, for fitting.
    pub const ALL: [Normalisation; 4] =
        [Normalisation::MinMax, Normalisation::ZScore, Normalisation::Dbsf, Normalisation::Tmm];

    /// The normalisation's name: `minmax`, `zscore`, `dbsf` or `tmm`.
    pub fn name(self) -> &'static str {
        match self {
            Normalisation::MinMax => "minmax",
            Normalisation::ZScore => "zscore",
            Normalisation::Dbsf => "dbsf",
            Normalisation::Tmm => "tmm",
        }
    }
}

/// Weighted average of normalised scores: a candidate's score is
/// `Σ weight · norm(raw) / Σ weight` over the legs that ran; a leg that did not find the
/// candidate contributes 0. Scores lie in `[0, 1]`: 1 means the top score of every leg.
pub fn normalised(lists: &[LegList], how: Normalisation) -> Vec<Fused> {
    let total_weight: f32 = lists.iter().map(|l| weight(l.weight)).sum();
    let mut candidates: Candidates<()> = Candidates::for_lists(lists);
    for list in lists {
        let firsts = firsts(list);
        let norms = normalise(&firsts, how);
        for (rank, ((ord, raw), norm)) in firsts.iter().zip(norms).enumerate() {
            let contribution = if total_weight > 0.0 { weight(list.weight) * norm / total_weight } else { 0.0 };
            let (fused, ()) = candidates.entry(*ord);
            fused.score += contribution;
            fused.legs.push(LegScore { leg: list.leg, rank: rank + 1, raw: *raw, contribution });
        }
    }
    crate::rrf::sorted(candidates.into_vec().into_iter().map(|(fused, ())| fused).collect())
}

pub(crate) fn weight(w: f32) -> f32 {
    if w.is_finite() {
        w.max(0.0)
    } else {
        0.0
    }
}

/// One leg's raw scores mapped to `[0, 1]`, in the order given (non-finite scores read as 0).
pub(crate) fn normalise(scores: &[(Ordinal, f32)], how: Normalisation) -> Vec<f32> {
    let finite: Vec<f32> = scores.iter().map(|(_, s)| if s.is_finite() { *s } else { 0.0 }).collect();
    if finite.is_empty() {
        return Vec::new();
    }
    let n = finite.len() as f32;
    let mean = || finite.iter().sum::<f32>() / n;
    let std = |mean: f32| (finite.iter().map(|s| (s - mean).powi(2)).sum::<f32>() / n).sqrt();
    match how {
        Normalisation::MinMax => {
            let (min, max) = finite.iter().fold((f32::MAX, f32::MIN), |(lo, hi), &s| (lo.min(s), hi.max(s)));
            finite.iter().map(|&s| if max > min { (s - min) / (max - min) } else { 1.0 }).collect()
        }
        Normalisation::ZScore => {
            let mean = mean();
            let std = std(mean);
            finite.iter().map(|&s| if std > 0.0 { normal_cdf((s - mean) / std) } else { 0.5 }).collect()
        }
        Normalisation::Dbsf => {
            let mean = mean();
            let std = std(mean);
            let low = mean - 3.0 * std;
            finite.iter().map(|&s| if std > 0.0 { ((s - low) / (6.0 * std)).clamp(0.0, 1.0) } else { 1.0 }).collect()
        }
        Normalisation::Tmm => {
            let max = finite.iter().fold(0.0f32, |hi, &s| hi.max(s));
            finite.iter().map(|&s| if max > 0.0 { s.max(0.0) / max } else { 0.0 }).collect()
        }
    }
}

/// The standard normal CDF, via erf (Abramowitz & Stegun 7.1.26, |error| < 1.5e-7).
pub(crate) fn normal_cdf(z: f32) -> f32 {
    let x = f64::from(z) / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly =
        t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    let erf = if x >= 0.0 { erf } else { -erf };
    (0.5 * (1.0 + erf)) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use braid_core::Leg;
    use proptest::prelude::*;

    #[test]
    fn minmax_scales_and_averages() {
        let a = LegList::new(Leg::Lexical, 1.0, vec![(1, 10.0), (2, 5.0), (3, 0.0)]);
        let b = LegList::new(Leg::Semantic, 1.0, vec![(3, 0.9), (1, 0.1)]);
        let f = normalised(&[a, b], Normalisation::MinMax);
        let score = |o| f.iter().find(|x| x.ord == o).unwrap().score;
        assert!((score(1) - 0.5).abs() < 1e-6); // 1.0 and 0.0
        assert!((score(2) - 0.25).abs() < 1e-6); // 0.5 and missing
        assert!((score(3) - 0.5).abs() < 1e-6); // 0.0 and 1.0
        assert_eq!(f[0].ord, 1, "ties broken by best rank, then ordinal");
    }

    #[test]
    fn normal_cdf_is_right() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-6);
        assert!((normal_cdf(1.96) - 0.975).abs() < 1e-3);
        assert!((normal_cdf(-1.0) - 0.158_655).abs() < 1e-4);
    }

    proptest! {
        #[test]
        fn scores_stay_in_unit_range(
            lists in proptest::collection::vec((proptest::collection::vec((0u64..30, -50.0f32..50.0), 0..20), 0.0f32..3.0), 0..3),
            z in proptest::bool::ANY,
        ) {
            let legs: Vec<LegList> = lists.iter().enumerate().map(|(i, (c, w))| LegList::new(Leg::ALL[i], *w, c.clone())).collect();
            let how = if z { Normalisation::ZScore } else { Normalisation::MinMax };
            for f in normalised(&legs, how) {
                prop_assert!((-1e-5..=1.0 + 1e-5).contains(&f.score), "{}", f.score);
                let sum: f32 = f.legs.iter().map(|l| l.contribution).sum();
                prop_assert!((sum - f.score).abs() < 1e-4);
            }
        }
    }
}
