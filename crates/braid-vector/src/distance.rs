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
    /// The dot product of two equally long slices (the graph's f32 kernel).
    #[cfg_attr(not(feature = "hnsw"), allow(dead_code))]
    dot = dot_body(a: &[f32], b: &[f32]) -> f32
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

/// The dot product of two rows of int8 codes, exact in `i32` (up to 133,143 dimensions of
/// products of at most 127² each); on AVX2 CPUs (checked at run time) both rows are widened to
/// `i16` and multiplied pairwise (`vpmaddwd`), like [`dot_q16`]. The graph's neighbour choice
/// runs on it: most of an int8 graph's build time.
#[cfg_attr(not(feature = "hnsw"), allow(dead_code))]
#[inline]
pub(crate) fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: `dot_i8_avx2` requires only that the CPU supports AVX2, just checked.
        return unsafe { dot_i8_avx2(a, b) };
    }
    dot_i8_body(a, b)
}

/// [`dot_i8`]'s portable body: sixteen `i32` lanes.
#[cfg_attr(not(feature = "hnsw"), allow(dead_code))]
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

/// The dot product of an int16 query with a row of int8 codes, exact in `i32` when
/// `len · 127 · max |a_i|` fits, which [`quantize_query`] ensures. Integer sums do not
/// depend on their order, so the AVX2 build (checked at run time) and the portable one agree
/// exactly.
#[cfg_attr(not(feature = "hnsw"), allow(dead_code))]
#[inline]
pub(crate) fn dot_q16(a: &[i16], codes: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if has_avx512_vnni() {
        // SAFETY: `dot_q16_avx512` requires only the CPU features just checked.
        return unsafe { dot_q16_avx512(a, codes) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: `dot_q16_avx2` requires only that the CPU supports AVX2, just checked.
        return unsafe { dot_q16_avx2(a, codes) };
    }
    dot_q16_body(a, codes)
}

/// [`dot_q16`]'s portable body.
#[inline(always)]
pub(crate) fn dot_q16_body(a: &[i16], codes: &[i8]) -> i32 {
    debug_assert_eq!(a.len(), codes.len());
    a.iter().zip(codes).map(|(&x, &c)| i32::from(x) * i32::from(c)).sum()
}

/// [`dot_q16`] with AVX2: sixteen codes widened to `i16` and multiplied pairwise into eight
/// `i32` sums (`vpmaddwd`) per step, about three times the speed of the f32 query's loop.
///
/// # Safety
///
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn dot_q16_avx2(a: &[i16], codes: &[i8]) -> i32 {
    use std::arch::x86_64::{__m256i, _mm256_loadu_si256};
    let len = a.len().min(codes.len());
    let whole = len - len % 16;
    // SAFETY: `madd_avx2` asks for `i + 16 <= whole <= a.len()`, so the unaligned load reads
    // inside `a`; AVX2 is this function's own requirement.
    let sum = unsafe { madd_avx2(codes, whole, |i| _mm256_loadu_si256(a.as_ptr().add(i).cast::<__m256i>())) };
    sum + dot_q16_body(&a[whole..len], &codes[whole..len])
}

/// Whether the CPU runs [`dot_q16_avx512`]: AVX-512 with its byte/word and VNNI extensions.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn has_avx512_vnni() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vnni")
}

/// [`dot_q16`] with AVX-512 VNNI: thirty-two codes widened to `i16` and multiplied pairwise
/// into sixteen `i32` sums, added in the same instruction (`vpdpwssd`), per step: a third of
/// the AVX2 loop's instructions. Integer sums are exact, so every build returns the same
/// value (the query's codes keep every partial sum inside `i32`, [`quantize_query`]).
///
/// # Safety
///
/// The CPU must support AVX-512F, AVX-512BW and AVX-512 VNNI ([`has_avx512_vnni`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
#[inline]
pub(crate) unsafe fn dot_q16_avx512(a: &[i16], codes: &[i8]) -> i32 {
    use std::arch::x86_64::{
        __m256i, _mm256_loadu_si256, _mm512_add_epi32, _mm512_cvtepi8_epi16, _mm512_dpwssd_epi32, _mm512_loadu_si512,
        _mm512_reduce_add_epi32, _mm512_setzero_si512,
    };
    let len = a.len().min(codes.len());
    let whole = len - len % 32;
    // SAFETY (of `step`): `i + 32 <= whole <= len`, so thirty-two codes (256 bits) and
    // thirty-two `i16` (512 bits) at `i` lie inside `codes` and `a`; both loads are unaligned.
    let step = |acc, i: usize| unsafe {
        let c = _mm512_cvtepi8_epi16(_mm256_loadu_si256(codes.as_ptr().add(i).cast::<__m256i>()));
        _mm512_dpwssd_epi32(acc, c, _mm512_loadu_si512(a.as_ptr().add(i).cast()))
    };
    // Four sums, so that each `vpdpwssd` waits on the one four steps back, not the last.
    let mut acc = [_mm512_setzero_si512(); 4];
    let mut i = 0;
    while i + 128 <= whole {
        for (j, sum) in acc.iter_mut().enumerate() {
            *sum = step(*sum, i + 32 * j);
        }
        i += 128;
    }
    while i + 32 <= whole {
        acc[0] = step(acc[0], i);
        i += 32;
    }
    let acc = _mm512_add_epi32(_mm512_add_epi32(acc[0], acc[1]), _mm512_add_epi32(acc[2], acc[3]));
    _mm512_reduce_add_epi32(acc) + dot_q16_body(&a[whole..len], &codes[whole..len])
}

/// [`dot_i8`] with AVX2.
///
/// # Safety
///
/// The CPU must support AVX2.
#[cfg_attr(not(feature = "hnsw"), allow(dead_code))]
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn dot_i8_avx2(a: &[i8], b: &[i8]) -> i32 {
    use std::arch::x86_64::{__m128i, _mm256_cvtepi8_epi16, _mm_loadu_si128};
    let len = a.len().min(b.len());
    let whole = len - len % 16;
    // SAFETY: as in `dot_q16_avx2`, for the sixteen bytes of `a` at `i`.
    let sum =
        unsafe { madd_avx2(b, whole, |i| _mm256_cvtepi8_epi16(_mm_loadu_si128(a.as_ptr().add(i).cast::<__m128i>()))) };
    sum + dot_i8_body(&a[whole..len], &b[whole..len])
}

/// The sum over `i` in steps of 16 below `whole` of `lanes(i)` (sixteen `i16`) times
/// `codes[i..i + 16]` widened to `i16`, in `i32`.
///
/// # Safety
///
/// The CPU must support AVX2, `whole <= codes.len()`, and `lanes(i)` must be safe to call for
/// every `i + 16 <= whole`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn madd_avx2(codes: &[i8], whole: usize, lanes: impl Fn(usize) -> std::arch::x86_64::__m256i) -> i32 {
    use std::arch::x86_64::{
        __m128i, __m256i, _mm256_add_epi32, _mm256_cvtepi8_epi16, _mm256_madd_epi16, _mm256_setzero_si256,
        _mm256_storeu_si256, _mm_loadu_si128,
    };
    debug_assert!(whole <= codes.len());
    // SAFETY (of `step`): callers ask for `i + 16 <= whole <= codes.len()`; the load is an
    // unaligned one.
    let step = |i: usize| {
        let c = unsafe { _mm_loadu_si128(codes.as_ptr().add(i).cast::<__m128i>()) };
        _mm256_madd_epi16(_mm256_cvtepi8_epi16(c), lanes(i))
    };
    // Two sums in flight, so one step need not wait for the last (integer sums: same value).
    let (mut even, mut odd) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    let mut i = 0;
    while i + 32 <= whole {
        even = _mm256_add_epi32(even, step(i));
        odd = _mm256_add_epi32(odd, step(i + 16));
        i += 32;
    }
    if i + 16 <= whole {
        even = _mm256_add_epi32(even, step(i));
    }
    let acc = _mm256_add_epi32(even, odd);
    let mut sums = [0i32; 8];
    // SAFETY: `sums` holds exactly one 256-bit register, written unaligned.
    unsafe { _mm256_storeu_si256(sums.as_mut_ptr().cast::<__m256i>(), acc) };
    sums.iter().sum()
}

/// A unit query as `i16` codes for [`dot_q16`] against int8 rows, with their scale: the
/// largest magnitude maps to the largest code that keeps every such dot product inside `i32`
/// (32,767 up to 422 dimensions, less beyond). The codes depend on the query alone.
pub(crate) fn quantize_query(unit: &[f32]) -> (Vec<i16>, f32) {
    let top = (i32::MAX as usize / (127 * unit.len().max(1))).clamp(1, i16::MAX as usize) as f32;
    let largest = unit.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if largest == 0.0 {
        return (vec![0; unit.len()], 0.0);
    }
    let scale = largest / top;
    (unit.iter().map(|&x| (x / scale).round().clamp(-top, top) as i16).collect(), scale)
}

/// An upper bound on `‖unit − scale · codes‖`, the rounding of a query's codes: computed in f64,
/// enlarged by a relative 1e-6 and rounded up to f32, so it is never below the true value.
pub(crate) fn query_rounding(unit: &[f32], codes: &[i16], scale: f32) -> f32 {
    let error = unit
        .iter()
        .zip(codes)
        .map(|(&x, &c)| {
            let e = f64::from(x) - f64::from(scale) * f64::from(c);
            e * e
        })
        .sum::<f64>()
        .sqrt()
        * (1.0 + 1e-6);
    let mut bound = error as f32;
    if f64::from(bound) < error {
        bound = bound.next_up();
    }
    bound
}

/// The score of an int8 row from its scale, the query's scale and their codes' dot product:
/// one expression, so the graph and the exact scan give the same bits for the same row.
#[inline(always)]
pub(crate) fn code_score(row_scale: f32, query_scale: f32, dot: i32) -> f32 {
    row_scale * query_scale * dot as f32
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
    fn dot_q16_is_exact_on_every_build() {
        for n in (0..70).chain([383, 384, 385, 1536]) {
            let a: Vec<i16> = (0..n).map(|i| (i as i16).wrapping_mul(4099)).collect();
            let c: Vec<i8> = (0..n).map(|i| (i as i8).wrapping_mul(37)).collect();
            let naive: i64 = a.iter().zip(&c).map(|(x, y)| i64::from(*x) * i64::from(*y)).sum();
            assert_eq!(i64::from(dot_q16(&a, &c)), naive, "n = {n}");
            assert_eq!(i64::from(dot_q16_body(&a, &c)), naive, "n = {n}");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: AVX2 was just detected.
                assert_eq!(i64::from(unsafe { dot_q16_avx2(&a, &c) }), naive, "avx2, n = {n}");
            }
            #[cfg(target_arch = "x86_64")]
            if has_avx512_vnni() {
                // SAFETY: the kernel's features were just detected.
                assert_eq!(i64::from(unsafe { dot_q16_avx512(&a, &c) }), naive, "avx512, n = {n}");
            }
        }
        // The extremes a query's codes can reach (`quantize_query`), at the model's dimension.
        let a = vec![i16::MAX; 384];
        let c = vec![-128i8; 384];
        assert_eq!(i64::from(dot_q16(&a, &c)), -128 * 32767 * 384);
    }

    #[test]
    fn query_codes_stay_in_range_and_track_the_query() {
        for dim in [3, 384, 1536, 4096] {
            let v: Vec<f32> = (0..dim).map(|i| ((i * 7919) % 200) as f32 - 99.5).collect();
            let unit = normalised(&v).unwrap();
            let (codes, scale) = quantize_query(&unit);
            let worst: i64 = codes.iter().map(|&c| i64::from(c).abs() * 127).sum();
            assert!(worst <= i64::from(i32::MAX), "dim {dim}");
            for (&c, &x) in codes.iter().zip(&unit) {
                assert!((f32::from(c) * scale - x).abs() <= scale / 2.0 + 1e-7, "dim {dim}");
            }
        }
    }
}
