//! The exact scan's inner loop: each candidate row's dot product with the query, offered to a
//! [`TopK`].
//!
//! The loop is [`crate::distance::dot`] per row, in the order the candidates come (memory order on a full
//! scan, so the hardware prefetcher streams the arena). On x86-64 CPUs with AVX2, checked at
//! run time, the same code runs compiled for AVX2: `dot`'s eight lanes fill one register.
//! No fused multiply-add is enabled (and Rust never fuses on its own), so both builds round
//! alike and every score is bit for bit the portable one (tested below).
//!
//! Measured on 5,183 × 384 vectors, one pinned core of a shared 2-core AMD EPYC (Zen 3) VM,
//! best of 8 runs of 300 queries (`/tmp` micro-benchmark, research/ranking-log.md "Speed"): 57 ns a row
//! portable, 43 with AVX2 while the arena is in cache; about 120 ns either way when it is not
//! (the scan is then bound by memory). Interleaving 8 rows (independent sums, same rounding)
//! was as fast in cache but 1.7× slower out of it: eight short streams defeat the prefetcher.
//!
//! The integer loops (the sketch's screen, int8 rows) run AVX-512 VNNI where the CPU has it
//! ([`crate::distance::dot_q16_avx512`]; integer sums are exact, so every build gives the same
//! hits). On SciFact's passage index (about 11,900 rows a query), one pinned core of a Zen 4 VM,
//! four alternating rounds: semantic 2,474–2,633 q/s with AVX2, 2,670–2,767 with VNNI over four
//! sums; with one sum it was slower than AVX2 (2,200–2,310), each step waiting on the last.

use braid_core::Ordinal;

use crate::distance::{code_score, dot_body, dot_q16_body};
#[cfg(target_arch = "x86_64")]
use crate::distance::{dot_q16_avx2, dot_q16_avx512, has_avx512_vnni};
use crate::search::TopK;

/// How many candidates ahead of the one being scored a sparse scan prefetches. At 1,000,000
/// int8 vectors with 10 % of them allowed, a scan took 20.1 ms without prefetching, 10.4 ms at
/// 2 ahead, 9.8 at 4 and 10.3 at 16 (a row is scored in tens of nanoseconds, memory answers in
/// about a hundred, and too many rows in flight evict each other).
const AHEAD: usize = 4;

/// How a scan's candidate rows lie in its arena, which decides whether rows are prefetched.
///
/// A walk that takes most slots in memory order is streamed by the hardware prefetcher, and
/// software prefetching only adds work: on SciFact's passage index (11,860 rows, in cache)
/// every slot allowed took 409–410 µs a query at k = 100 without it against 531–540 with it,
/// and 300,000 rows out of cache 5.7–6.1 ms against 8.1–9.6 with 85 % or more allowed. A
/// sparser walk waits on memory once per row unless rows are fetched ahead: 300,000 rows, 10 %
/// allowed, 1.7–1.9 ms with prefetching against 4.3–4.6 without, 70 % 10.9–11.1 against 13.1
/// (`examples/npy_sweep.rs ... scan`, one pinned core).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Spread {
    /// Most slots, in memory order: read as they come.
    Dense,
    /// Rows far apart, or looked up: read through [`ahead`].
    Sparse,
}

/// The candidates in order, each yielded after `fetch` was called for the one [`AHEAD`]
/// places further on (the first [`AHEAD`] are fetched before the first is yielded); the
/// lookahead is a window of [`AHEAD`] candidates, so nothing else is collected. What a
/// [`Spread::Sparse`] scan reads its candidates through.
pub(crate) fn ahead(
    mut candidates: impl Iterator<Item = (Ordinal, usize)>,
    fetch: impl Fn(usize),
) -> impl Iterator<Item = (Ordinal, usize)> {
    let mut window = std::collections::VecDeque::with_capacity(AHEAD + 1);
    for candidate in candidates.by_ref().take(AHEAD) {
        fetch(candidate.1);
        window.push_back(candidate);
    }
    std::iter::from_fn(move || {
        if let Some(next) = candidates.next() {
            fetch(next.1);
            window.push_back(next);
        }
        window.pop_front()
    })
}

/// Asks the CPU to start loading every cache line of `data` (a hint: no effect on results,
/// and none at all off x86-64). Every line the bytes touch, counted from the line `data` starts
/// in: a row of 48 bytes at a multiple of 48 spans two lines half the time, and an arena's rows
/// start wherever the allocator put its first byte.
#[inline(always)]
pub(crate) fn prefetch<T>(data: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        const LINE: usize = 64;
        let lead = data.as_ptr() as usize % LINE;
        let line = data.as_ptr().cast::<i8>().wrapping_sub(lead);
        let bytes = std::mem::size_of_val(data);
        for offset in (0..lead + bytes).step_by(LINE) {
            // SAFETY: SSE is part of every x86-64 CPU, and a prefetch reads nothing the program
            // sees and never faults (each address is in a line `data` touches anyway).
            unsafe { _mm_prefetch::<_MM_HINT_T0>(line.wrapping_add(offset)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}

/// Offers `(ord, dot(query, row))` for each candidate to `top`.
pub(crate) fn scan_into<'a>(query: &[f32], candidates: impl Iterator<Item = (Ordinal, &'a [f32])>, top: &mut TopK) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: `scan_avx2` requires only that the CPU supports AVX2, just checked; its body
        // is safe code.
        return unsafe { scan_avx2(query, candidates, top) };
    }
    scan_body(query, candidates, top);
}

/// [`scan_into`] compiled for AVX2.
///
/// # Safety
///
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scan_avx2<'a>(query: &[f32], candidates: impl Iterator<Item = (Ordinal, &'a [f32])>, top: &mut TopK) {
    scan_body(query, candidates, top);
}

#[inline(always)]
fn scan_body<'a>(query: &[f32], candidates: impl Iterator<Item = (Ordinal, &'a [f32])>, top: &mut TopK) {
    for (ord, row) in candidates {
        top.push(ord, dot_body(query, row));
    }
}

/// Offers `(ord, code_score(scale, query_scale, dot_q16(query, codes)))` for each int8
/// candidate to `top`: [`crate::rows::Rows::score`]'s bits, with the kernel chosen once.
pub(crate) fn scan_codes_into<'a>(
    query: &[i16],
    query_scale: f32,
    candidates: impl Iterator<Item = (Ordinal, f32, &'a [i8])>,
    top: &mut TopK,
) {
    #[cfg(target_arch = "x86_64")]
    if has_avx512_vnni() {
        // SAFETY: the kernel's features were just detected.
        return unsafe { scan_codes_avx512(query, query_scale, candidates, top) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: as in `scan_into`.
        return unsafe { scan_codes_avx2(query, query_scale, candidates, top) };
    }
    scan_codes_body(query, query_scale, candidates, top, dot_q16_body);
}

/// [`scan_codes_into`] with the AVX2 kernel.
///
/// # Safety
///
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scan_codes_avx2<'a>(
    query: &[i16],
    query_scale: f32,
    candidates: impl Iterator<Item = (Ordinal, f32, &'a [i8])>,
    top: &mut TopK,
) {
    // SAFETY: this function runs only where AVX2 is supported.
    scan_codes_body(query, query_scale, candidates, top, |q, codes| unsafe { dot_q16_avx2(q, codes) });
}

/// [`scan_codes_into`] with the AVX-512 VNNI kernel.
///
/// # Safety
///
/// The CPU must support the features [`has_avx512_vnni`] checks.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn scan_codes_avx512<'a>(
    query: &[i16],
    query_scale: f32,
    candidates: impl Iterator<Item = (Ordinal, f32, &'a [i8])>,
    top: &mut TopK,
) {
    // SAFETY: this function runs only where the kernel's features are supported.
    scan_codes_body(query, query_scale, candidates, top, |q, codes| unsafe { dot_q16_avx512(q, codes) });
}

#[inline(always)]
fn scan_codes_body<'a>(
    query: &[i16],
    query_scale: f32,
    candidates: impl Iterator<Item = (Ordinal, f32, &'a [i8])>,
    top: &mut TopK,
    dot: impl Fn(&[i16], &[i8]) -> i32,
) {
    for (ord, scale, codes) in candidates {
        top.push(ord, code_score(scale, query_scale, dot(query, codes)));
    }
}

/// One row as the sketch screens it: ordinal, slot, scale, slack, codes.
pub(crate) type Screened<'a> = (Ordinal, usize, f32, f32, &'a [i8]);

/// A query as the screen reads it: its `i16` codes ([`crate::distance::quantize_query`]), their
/// scale, and `error ≥ ‖q − scale · codes‖` ([`crate::distance::query_rounding`]); and the
/// query itself, which the rows the screen keeps are scored against.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Coded<'a> {
    pub(crate) unit: &'a [f32],
    pub(crate) codes: &'a [i16],
    pub(crate) scale: f32,
    pub(crate) error: f32,
}

/// The sketch's first pass ([`crate::sketch`]): scores each row's codes against the query's
/// in integers and, for the rows whose upper bound reaches `lower`'s floor at the time, offers
/// the lower bound to `lower` and keeps `(ord, slot, upper bound)`. The bounds are the
/// estimate ± the row's slack widened by the query's own rounding; the same dispatch as
/// [`scan_into`], with [`dot_q16_avx2`] where the CPU has AVX2.
pub(crate) fn screen_into<'a>(
    query: Coded<'_>,
    rows: impl Iterator<Item = Screened<'a>>,
    lower: &mut TopK,
    kept: &mut Vec<(Ordinal, usize, f32)>,
) {
    #[cfg(target_arch = "x86_64")]
    if has_avx512_vnni() {
        // SAFETY: the kernel's features were just detected.
        return unsafe { screen_avx512(query, rows, lower, kept) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: as in `scan_into`.
        return unsafe { screen_avx2(query, rows, lower, kept) };
    }
    screen_body(query, rows, lower, kept, dot_q16_body);
}

/// [`screen_into`] with the AVX2 kernel.
///
/// # Safety
///
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn screen_avx2<'a>(
    query: Coded<'_>,
    rows: impl Iterator<Item = Screened<'a>>,
    lower: &mut TopK,
    kept: &mut Vec<(Ordinal, usize, f32)>,
) {
    // SAFETY: this function runs only where AVX2 is supported.
    screen_body(query, rows, lower, kept, |a, codes| unsafe { dot_q16_avx2(a, codes) });
}

/// [`screen_into`] with the AVX-512 VNNI kernel.
///
/// # Safety
///
/// The CPU must support the features [`has_avx512_vnni`] checks.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn screen_avx512<'a>(
    query: Coded<'_>,
    rows: impl Iterator<Item = Screened<'a>>,
    lower: &mut TopK,
    kept: &mut Vec<(Ordinal, usize, f32)>,
) {
    // SAFETY: this function runs only where the kernel's features are supported.
    screen_body(query, rows, lower, kept, |a, codes| unsafe { dot_q16_avx512(a, codes) });
}

#[inline(always)]
fn screen_body<'a>(
    query: Coded<'_>,
    rows: impl Iterator<Item = Screened<'a>>,
    lower: &mut TopK,
    kept: &mut Vec<(Ordinal, usize, f32)>,
    dot: impl Fn(&[i16], &[i8]) -> i32,
) {
    // `lower`'s floor only rises. A row whose upper bound is below it has a lower bound below
    // it too, which `lower` would never keep, and an exact score below the final `k`-th lower
    // bound, which no survivor has: it is passed over without touching `lower`.
    let mut floor = lower.floor();
    for (ord, slot, scale, slack, codes) in rows {
        let estimate = code_score(scale, query.scale, dot(query.codes, codes));
        // The row's slack bounds its codes' rounding against any unit query; the query's own
        // rounding widens it (see `crate::sketch`).
        let slack = slack + query.error * (slack + 1.0);
        let upper = estimate + slack;
        if upper < floor {
            continue;
        }
        lower.push(ord, estimate - slack);
        floor = lower.floor();
        kept.push((ord, slot, upper));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ring yields every candidate once, in order, and fetches each before yielding it.
    #[test]
    fn ahead_yields_in_order_and_fetches_first() {
        for n in 0..3 * AHEAD + 2 {
            let fetched = std::cell::RefCell::new(Vec::new());
            let candidates = (0..n).map(|i| (i as Ordinal * 2, i));
            let mut yielded = Vec::new();
            for (ord, slot) in ahead(candidates, |slot| fetched.borrow_mut().push(slot)) {
                assert!(fetched.borrow().contains(&slot), "slot {slot} yielded before it was fetched");
                assert!(fetched.borrow().len() <= (slot + AHEAD + 1).min(n), "fetched too far ahead");
                yielded.push((ord, slot));
            }
            assert_eq!(yielded, (0..n).map(|i| (i as Ordinal * 2, i)).collect::<Vec<_>>(), "n = {n}");
            assert_eq!(fetched.into_inner(), (0..n).collect::<Vec<_>>());
        }
    }

    /// A SplitMix64 stream of floats in [-1, 1).
    fn floats(seed: u64, n: usize) -> Vec<f32> {
        let mut state = seed;
        (0..n)
            .map(|_| {
                state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 23) as f32 - 1.0
            })
            .collect()
    }

    fn bits(hits: Vec<(Ordinal, f32)>) -> Vec<(Ordinal, u32)> {
        hits.into_iter().map(|(o, s)| (o, s.to_bits())).collect()
    }

    /// Every build of the loop gives `dot`'s scores bit for bit, in `TopK`'s order, for every
    /// tail length and the model's dimension.
    #[test]
    fn every_build_scores_like_dot() {
        for dim in (1..40).chain([383, 384, 385]) {
            let rows = 50;
            let arena = floats(dim as u64, dim * rows);
            let query = floats(1000 + dim as u64, dim);
            let candidates = || arena.chunks_exact(dim).enumerate().map(|(i, r)| (i as Ordinal * 3, r));
            let mut expected: Vec<(Ordinal, f32)> =
                candidates().map(|(o, r)| (o, crate::distance::dot(&query, r))).collect();
            expected.sort_by(crate::search::better);
            for k in [1, 10, rows] {
                let want = bits(expected[..k].to_vec());
                let mut top = TopK::new(k);
                scan_into(&query, candidates(), &mut top);
                assert_eq!(bits(top.into_sorted()), want, "dispatched, dim {dim}, k {k}");
                let mut top = TopK::new(k);
                scan_body(&query, candidates(), &mut top);
                assert_eq!(bits(top.into_sorted()), want, "portable, dim {dim}, k {k}");
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    let mut top = TopK::new(k);
                    // SAFETY: AVX2 was just detected.
                    unsafe { scan_avx2(&query, candidates(), &mut top) };
                    assert_eq!(bits(top.into_sorted()), want, "avx2, dim {dim}, k {k}");
                }
            }
        }
    }
}
