//! Dot products and normalisation, shared by the exact scan and the graph.

#[cfg(feature = "hnsw")]
use hnsw_rs::prelude::Distance;

/// The dot product of two equally long slices, written so the compiler vectorises it.
#[inline]
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    debug_assert_eq!(a.len(), b.len());
    const LANES: usize = 8;
    let mut acc = [0.0f32; LANES];
    let (a_chunks, a_rest) = a.split_at(a.len() - a.len() % LANES);
    let (b_chunks, b_rest) = b.split_at(a_chunks.len());
    for (x, y) in a_chunks.chunks_exact(LANES).zip(b_chunks.chunks_exact(LANES)) {
        for i in 0..LANES {
            acc[i] += x[i] * y[i];
        }
    }
    let mut sum: f32 = acc.iter().sum();
    for (x, y) in a_rest.iter().zip(b_rest) {
        sum += x * y;
    }
    sum
}

/// Why a vector cannot be stored or searched with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BadVector {
    NonFinite,
    Zero,
}

impl BadVector {
    pub(crate) fn reason(self) -> &'static str {
        match self {
            BadVector::NonFinite => "vector has a non-finite component",
            BadVector::Zero => "vector has zero length and cannot be normalised",
        }
    }
}

/// Returns `v` scaled to unit L2 length, or why it cannot be.
pub(crate) fn normalised(v: &[f32]) -> Result<Vec<f32>, BadVector> {
    if v.iter().any(|x| !x.is_finite()) {
        return Err(BadVector::NonFinite);
    }
    // Accumulate in f64 so huge finite components do not overflow to infinity.
    let norm = v.iter().map(|&x| f64::from(x) * f64::from(x)).sum::<f64>().sqrt();
    if norm == 0.0 || !norm.is_finite() {
        return Err(BadVector::Zero);
    }
    let out: Vec<f32> = v.iter().map(|&x| (f64::from(x) / norm) as f32).collect();
    if out.iter().all(|&x| x == 0.0) {
        return Err(BadVector::Zero);
    }
    Ok(out)
}

/// `1 - dot`, clamped at zero: the graph's distance for unit vectors.
///
/// `hnsw_rs`'s own `DistDot` asserts `dot <= 1`, which rounding breaks for a vector and its
/// duplicate; its search also asserts non-negative distances. Clamping keeps both true.
#[cfg(feature = "hnsw")]
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct DotDistance;

#[cfg(feature = "hnsw")]
impl Distance<f32> for DotDistance {
    fn eval(&self, va: &[f32], vb: &[f32]) -> f32 {
        let d = 1.0 - dot(va, vb);
        if d > 0.0 {
            d
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_matches_naive_for_all_tail_lengths() {
        for n in 0..20 {
            let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 3.0).collect();
            let b: Vec<f32> = (0..n).map(|i| 1.0 - i as f32 * 0.25).collect();
            let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - naive).abs() < 1e-4, "n = {n}");
        }
    }

    #[test]
    fn normalised_rejects_bad_vectors() {
        assert_eq!(normalised(&[0.0, 0.0]), Err(BadVector::Zero));
        assert_eq!(normalised(&[f32::NAN, 1.0]), Err(BadVector::NonFinite));
        assert_eq!(normalised(&[f32::INFINITY, 1.0]), Err(BadVector::NonFinite));
        assert_eq!(normalised(&[]), Err(BadVector::Zero));
        let v = normalised(&[3.0, 4.0]).unwrap();
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
        let big = normalised(&[f32::MAX, f32::MAX]).unwrap();
        assert!((dot(&big, &big) - 1.0).abs() < 1e-5);
    }

    #[cfg(feature = "hnsw")]
    #[test]
    fn distance_never_negative() {
        let v = normalised(&[0.1, 0.7, 0.3]).unwrap();
        assert!(DotDistance.eval(&v, &v) >= 0.0);
        assert!(DotDistance.eval(&v, &v) < 1e-6);
    }
}
