//! Dot products and normalisation, shared by the exact scan and the graph.

/// Defines `$name`, which runs `$body` compiled for AVX2 where the CPU has it (checked at run
/// time, a cached flag) and as portable code elsewhere. No fused multiply-add is enabled (and
/// Rust never fuses on its own), so both builds round alike and give the same bits.
macro_rules! dispatched {
    ($(#[$doc:meta])* $name:ident = $body:ident ($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        $(#[$doc])*
        #[inline]
        pub(crate) fn $name($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                #[target_feature(enable = "avx2")]
                unsafe fn avx2($($arg: $ty),*) -> $ret {
                    $body($($arg),*)
                }
                // SAFETY: `avx2` requires only that the CPU supports AVX2, just checked; its
                // body is safe code.
                return unsafe { avx2($($arg),*) };
            }
            $body($($arg),*)
        }
    };
}

dispatched!(
    /// The dot product of two equally long slices.
    dot = dot_body(a: &[f32], b: &[f32]) -> f32
);
dispatched!(
    /// The dot product of an f32 query with a row of int8 codes (to be multiplied by the
    /// row's scale).
    dot_codes = dot_codes_body(a: &[f32], codes: &[i8]) -> f32
);
dispatched!(
    /// The dot product of two rows of int8 codes, exact in `i32` (384 products of at most
    /// 127² each are far from overflowing).
    dot_i8 = dot_i8_body(a: &[i8], b: &[i8]) -> i32
);

/// [`dot`]'s body, written so the compiler vectorises it; the exact scan inlines it into its
/// own AVX2 loop.
#[inline(always)]
pub(crate) fn dot_body(a: &[f32], b: &[f32]) -> f32 {
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

/// [`dot_i8`]'s body: sixteen `i32` lanes, so AVX2 widens and multiplies a register at a time.
#[inline(always)]
fn dot_i8_body(a: &[i8], b: &[i8]) -> i32 {
    debug_assert_eq!(a.len(), b.len());
    const LANES: usize = 16;
    let mut acc = [0i32; LANES];
    let (a_chunks, a_rest) = a.split_at(a.len() - a.len() % LANES);
    let (b_chunks, b_rest) = b.split_at(a_chunks.len());
    for (x, y) in a_chunks.chunks_exact(LANES).zip(b_chunks.chunks_exact(LANES)) {
        for i in 0..LANES {
            acc[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    let mut sum: i32 = acc.iter().sum();
    for (x, y) in a_rest.iter().zip(b_rest) {
        sum += i32::from(*x) * i32::from(*y);
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

/// [`dot_codes`]'s body, written like [`dot_body`].
#[inline(always)]
pub(crate) fn dot_codes_body(a: &[f32], codes: &[i8]) -> f32 {
    debug_assert_eq!(a.len(), codes.len());
    const LANES: usize = 8;
    let mut acc = [0.0f32; LANES];
    let (a_chunks, a_rest) = a.split_at(a.len() - a.len() % LANES);
    let (c_chunks, c_rest) = codes.split_at(a_chunks.len());
    for (x, c) in a_chunks.chunks_exact(LANES).zip(c_chunks.chunks_exact(LANES)) {
        for i in 0..LANES {
            acc[i] += x[i] * f32::from(c[i]);
        }
    }
    let mut sum: f32 = acc.iter().sum();
    for (x, c) in a_rest.iter().zip(c_rest) {
        sum += x * f32::from(*c);
    }
    sum
}

/// Appends `unit`'s int8 codes to `codes` and returns their scale.
pub(crate) fn quantize_into(unit: &[f32], codes: &mut Vec<i8>) -> f32 {
    let largest = unit.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    // A unit vector has a non-zero component, so `largest > 0`.
    let scale = largest / 127.0;
    codes.extend(unit.iter().map(|&x| (x / scale).round().clamp(-127.0, 127.0) as i8));
    scale
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

    #[test]
    fn dot_i8_is_exact() {
        for n in 0..40 {
            let a: Vec<i8> = (0..n).map(|i| (i as i8).wrapping_mul(53)).collect();
            let b: Vec<i8> = (0..n).map(|i| 127 - (i as i8)).collect();
            let naive: i32 = a.iter().zip(&b).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum();
            assert_eq!(dot_i8(&a, &b), naive);
            assert_eq!(dot_i8_body(&a, &b), naive);
        }
    }

    #[test]
    fn dot_codes_matches_naive_for_all_tail_lengths() {
        for n in 0..20 {
            let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 3.0).collect();
            let c: Vec<i8> = (0..n).map(|i| (i as i8).wrapping_mul(37)).collect();
            let naive: f32 = a.iter().zip(&c).map(|(x, y)| x * f32::from(*y)).sum();
            assert!((dot_codes(&a, &c) - naive).abs() < 1e-2, "n = {n}");
        }
    }
}
