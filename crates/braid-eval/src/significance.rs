//! Differences you can trust: a percentile-bootstrap 95 % interval of a run's mean, and a
//! paired comparison of two runs over the same queries (a two-sided paired randomization test
//! and a bootstrap interval of the mean difference).
//!
//! Both resample with a fixed seed, so a report is reproducible to the last digit.

use serde::{Deserialize, Serialize};

use crate::typos::SplitMix;

/// Resamples for intervals and permutations for the randomization test.
pub const RESAMPLES: usize = 10_000;
/// The generator seed every resampling starts from.
const SEED: u64 = 0x5eed_b4a1_d000_0001;

/// A two-sided 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The 2.5th percentile.
    pub low: f64,
    /// The 97.5th percentile.
    pub high: f64,
}

impl Interval {
    /// Whether the interval excludes 0.
    pub fn excludes_zero(&self) -> bool {
        self.low > 0.0 || self.high < 0.0
    }
}

/// One run against a baseline over the queries both judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedComparison {
    /// The baseline run's label.
    pub baseline: String,
    /// Queries compared.
    pub queries: usize,
    /// Mean of `run − baseline` per query (nDCG@10).
    pub delta: f64,
    /// Bootstrap 95 % interval of that mean.
    pub ci95: Interval,
    /// Two-sided p-value of the paired randomization test (sign flips of the differences).
    pub p_value: f64,
}

impl PairedComparison {
    /// Significant at the 5 % level: p < 0.05.
    pub fn significant(&self) -> bool {
        self.p_value < 0.05
    }
}

/// The percentile-bootstrap 95 % interval of the mean of `values` ([`RESAMPLES`] resamples,
/// fixed seed). A single value (or none) gives a zero-width interval at the mean.
pub fn bootstrap_ci(values: &[f64]) -> Interval {
    let n = values.len();
    if n < 2 {
        let m = values.first().copied().unwrap_or(0.0);
        return Interval { low: m, high: m };
    }
    let mut rng = SplitMix::new(SEED);
    let mut means: Vec<f64> =
        (0..RESAMPLES).map(|_| (0..n).map(|_| values[rng.below(n)]).sum::<f64>() / n as f64).collect();
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((q * RESAMPLES as f64) as usize).min(RESAMPLES - 1)];
    Interval { low: at(0.025), high: at(0.975) }
}

/// Compares `run` to `baseline`, both per-query scores of the same queries in the same order:
/// the mean difference, its bootstrap 95 % interval, and the two-sided p-value of a paired
/// randomization test — each difference's sign flipped at random [`RESAMPLES`] times, p being
/// the share of flips whose mean is at least as far from 0 as the observed one (with the
/// observed one counted, so p > 0).
///
/// # Panics
///
/// Never: slices of different lengths are compared over their common prefix.
pub fn paired_comparison(baseline_label: &str, run: &[f64], baseline: &[f64]) -> PairedComparison {
    let diffs: Vec<f64> = run.iter().zip(baseline).map(|(a, b)| a - b).collect();
    let n = diffs.len();
    let delta = if n == 0 { 0.0 } else { diffs.iter().sum::<f64>() / n as f64 };
    let mut rng = SplitMix::new(SEED ^ 0xf1f1);
    let observed = delta.abs() - 1e-12;
    let mut extreme = 1usize;
    for _ in 0..RESAMPLES {
        let flipped: f64 = diffs.iter().map(|d| if rng.next() & 1 == 0 { *d } else { -*d }).sum();
        if n > 0 && (flipped / n as f64).abs() >= observed {
            extreme += 1;
        }
    }
    PairedComparison {
        baseline: baseline_label.to_owned(),
        queries: n,
        delta,
        ci95: bootstrap_ci(&diffs),
        p_value: if n == 0 { 1.0 } else { extreme as f64 / (RESAMPLES + 1) as f64 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_brackets_the_mean_and_shrinks_with_more_queries() {
        let small: Vec<f64> = (0..30).map(|i| f64::from(i % 2)).collect();
        let large: Vec<f64> = (0..3000).map(|i| f64::from(i % 2)).collect();
        let (a, b) = (bootstrap_ci(&small), bootstrap_ci(&large));
        assert!(a.low < 0.5 && a.high > 0.5 && b.low < 0.5 && b.high > 0.5);
        assert!(b.high - b.low < (a.high - a.low) / 5.0, "{a:?} {b:?}");
        // The textbook half-width for a proportion: 1.96 · sqrt(0.25 / n).
        let half = 1.96 * (0.25f64 / 3000.0).sqrt();
        assert!(((b.high - b.low) / 2.0 - half).abs() < 0.004, "{b:?}");
        assert_eq!(bootstrap_ci(&[0.7]), Interval { low: 0.7, high: 0.7 });
        assert_eq!(bootstrap_ci(&[]), Interval { low: 0.0, high: 0.0 });
    }

    #[test]
    fn a_consistent_gain_is_significant_and_noise_is_not() {
        let base: Vec<f64> = (0..300).map(|i| f64::from(i % 7) / 7.0).collect();
        let better: Vec<f64> = base.iter().map(|b| b + 0.02).collect();
        let c = paired_comparison("hybrid", &better, &base);
        assert!((c.delta - 0.02).abs() < 1e-9);
        assert!(c.significant() && c.ci95.excludes_zero(), "{c:?}");
        assert_eq!(c.baseline, "hybrid");
        // Half the queries up, half down by the same amount: no difference.
        let noisy: Vec<f64> = base.iter().enumerate().map(|(i, b)| b + if i % 2 == 0 { 0.1 } else { -0.1 }).collect();
        let c = paired_comparison("hybrid", &noisy, &base);
        assert!(c.delta.abs() < 1e-9 && !c.significant() && !c.ci95.excludes_zero(), "{c:?}");
        // Identical runs: p = 1.
        let c = paired_comparison("same", &base, &base);
        assert!((c.p_value - 1.0).abs() < 1e-9);
        assert_eq!(paired_comparison("none", &[], &[]).p_value, 1.0);
    }
}
