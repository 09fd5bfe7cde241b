//! The int8 sketch of an f32 arena, which screens the exact scan without changing its answer.
//!
//! A brute-force scan is bound by the bytes it reads: 1,536 a 384-d f32 row. The sketch keeps
//! each row also as int8 codes (384 bytes), the scale `s` they are multiplied by, and a
//! *slack*: a bound on how far the code's score can be from the f32 one for any unit query.
//! The scan then runs in two passes:
//!
//! 1. every candidate row is scored from its codes against the query's `i16` codes `c_q`
//!    (scale `s_q`), in integers: `est = s · s_q · (c_q · codes)`, which brackets its exact
//!    score in `[est − slack', est + slack']`. A [`TopK`] of the lower ends gives `τ`, the
//!    `k`-th best record's lower bound: at least `k` records score `τ` or more;
//! 2. only rows whose upper end reaches `τ` are scored exactly, with the same `dot` as the
//!    unscreened scan, into the caller's [`TopK`].
//!
//! A row left out has an exact score below `τ`, hence below the `k`-th best record's, so no
//! record of the top `k` (ties included) loses the row that makes its score. The hits are
//! the unscreened scan's, bit for bit (tested below and by the store's oracle tests).
//!
//! **The slack.** With `v = s·c + e` (`e` the rounding of the row's codes), `q·v = s·(q·c) +
//! q·e` and `|q·e| ≤ ‖q‖·‖e‖` (Cauchy–Schwarz). The row's slack is `‖e‖`, computed in f64 and
//! enlarged by a relative 1e-6 (a query normalised in f32 has `‖q‖ ≤ 1 + 1e-6`) plus an
//! absolute [`ROUNDING`]: the exact f32 dot product sums 384 terms whose magnitudes add up to
//! at most about 1 (`Σ|q_i·v_i| ≤ ‖q‖·‖v‖`), in eight lanes of 48 terms and a final sum of
//! eight, so it is within `56 · 2⁻²⁴ ≈ 3.4e-6` of its real value, and ROUNDING covers that
//! with room to spare (the estimate's integer dot product is exact; its conversion and two
//! products add about 2e-7).
//!
//! **The query's rounding.** The estimate reads the query's codes, `q' = s_q·c_q`, not `q`.
//! With `δ ≥ ‖q − q'‖` ([`crate::distance::query_rounding`], about 4e-5 for a 384-d query),
//! `q·v − s·(q'·c) = (q − q')·v + q'·e`, at most `δ·‖v‖ + (‖q‖ + δ)·‖e‖` in magnitude, which
//! `slack' = slack + δ·(slack + 1)` covers (`‖v‖ ≤ 1 + 1e-6`, and ROUNDING absorbs the
//! `1e-6·δ` left over).

use braid_core::Ordinal;

use crate::distance::quantize_into;
use crate::scan::{ahead, prefetch, scan_into, screen_into, Coded, Spread};
use crate::search::TopK;

/// Absolute room for the rounding of the two f32 dot products (module docs).
const ROUNDING: f64 = 1e-5;

/// Below this many candidate records per place asked for, the screen is not worth its first
/// pass (most rows would be rescored anyway) and the scan reads the f32 rows only.
pub(crate) const SCREEN_RATIO: usize = 8;

/// Codes, scale and slack per slot of an f32 arena.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sketch {
    codes: Vec<i8>,
    scales: Vec<f32>,
    slack: Vec<f32>,
}

impl Sketch {
    /// Room for `slots` more rows of `dim` components.
    pub(crate) fn reserve(&mut self, slots: usize, dim: usize) {
        self.codes.reserve_exact(slots * dim);
        self.scales.reserve_exact(slots);
        self.slack.reserve_exact(slots);
    }

    /// Whether a push of `slots` more rows of `dim` components would grow a buffer.
    pub(crate) fn lacks_room(&self, slots: usize, dim: usize) -> bool {
        use crate::room::lacks_room;
        lacks_room(&self.codes, slots * dim) || lacks_room(&self.scales, slots) || lacks_room(&self.slack, slots)
    }

    /// A copy with room for `slots` more rows of `dim` components ([`crate::room`]).
    pub(crate) fn with_room(&self, slots: usize, dim: usize) -> Sketch {
        use crate::room::copy_with_room;
        Sketch {
            codes: copy_with_room(&self.codes, slots * dim),
            scales: copy_with_room(&self.scales, slots),
            slack: copy_with_room(&self.slack, slots),
        }
    }

    /// Sketches `unit` (a stored row, unit length) as the next slot.
    pub(crate) fn push(&mut self, unit: &[f32]) {
        let start = self.codes.len();
        let scale = quantize_into(unit, &mut self.codes);
        let error: f64 = unit
            .iter()
            .zip(&self.codes[start..])
            .map(|(&x, &c)| {
                let e = f64::from(x) - f64::from(scale) * f64::from(c);
                e * e
            })
            .sum::<f64>()
            .sqrt();
        let slack = error * (1.0 + 1e-6) + ROUNDING;
        // Rounded up, so the f32 slack is never below the f64 one.
        let mut slack32 = slack as f32;
        if f64::from(slack32) < slack {
            slack32 = slack32.next_up();
        }
        self.scales.push(scale);
        self.slack.push(slack32);
    }

    /// The codes' whole huge pages ([`crate::huge_pages`]).
    pub(crate) fn huge_page_regions(&self) -> Option<crate::huge_pages::Region> {
        crate::huge_pages::Region::of(&self.codes)
    }

    /// Bytes held in memory.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.codes.capacity() + (self.scales.capacity() + self.slack.capacity()) * 4
    }

    /// Offers each `(ord, slot)` candidate's exact score (`dot(query.unit, row)` over `data`, rows of
    /// `dim`) to `top`, computing it only for rows the sketch cannot rule out of `top`'s `k`
    /// (module docs). `top` must be empty. A [`Spread::Sparse`] scan
    /// prefetches each row's codes a few candidates ahead.
    pub(crate) fn scan(
        &self,
        query: Coded<'_>,
        data: &[f32],
        dim: usize,
        candidates: impl Iterator<Item = (Ordinal, usize)>,
        spread: Spread,
        top: &mut TopK,
    ) {
        let fetch = |slot: usize| {
            prefetch(&self.codes[slot * dim..(slot + 1) * dim]);
            prefetch(&self.scales[slot..slot + 1]);
            prefetch(&self.slack[slot..slot + 1]);
        };
        match spread {
            Spread::Dense => self.screen(query, data, dim, candidates, top),
            Spread::Sparse => self.screen(query, data, dim, ahead(candidates, fetch), top),
        }
    }

    /// [`Sketch::scan`] over the candidates in the order given.
    fn screen(
        &self,
        query: Coded<'_>,
        data: &[f32],
        dim: usize,
        candidates: impl Iterator<Item = (Ordinal, usize)>,
        top: &mut TopK,
    ) {
        let mut lower = TopK::new(top.k());
        let mut kept: Vec<(Ordinal, usize, f32)> = Vec::new();
        let rows = candidates.map(|(ord, slot)| {
            (ord, slot, self.scales[slot], self.slack[slot], &self.codes[slot * dim..(slot + 1) * dim])
        });
        screen_into(query, rows, &mut lower, &mut kept);
        let tau = lower.kth_score();
        // The survivors lie far apart in `data`: each is fetched a few rows before its turn.
        let survivors = kept.into_iter().filter(|&(_, _, upper)| upper >= tau).map(|(ord, slot, _)| (ord, slot));
        let survivors = ahead(survivors, |slot| prefetch(&data[slot * dim..(slot + 1) * dim]))
            .map(|(ord, slot)| (ord, &data[slot * dim..(slot + 1) * dim]));
        scan_into(query.unit, survivors, top);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::distance::{code_score, dot, dot_q16_body, normalised, quantize_query, query_rounding};
    use proptest::prelude::*;

    /// A seeded unit vector (xorshift components in [-0.5, 0.5)), shared with other modules'
    /// tests.
    pub(crate) fn unit(seed: u64, dim: usize) -> Vec<f32> {
        let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let v: Vec<f32> = (0..dim)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
            })
            .collect();
        normalised(&v).unwrap()
    }

    /// The widened slack bounds the code score's error for every query tried, with room.
    #[test]
    fn slack_bounds_the_error() {
        let dim = 384;
        let mut sketch = Sketch::default();
        let rows: Vec<Vec<f32>> = (0..200).map(|i| unit(i, dim)).collect();
        for r in &rows {
            sketch.push(r);
        }
        for q in (1000..1050).map(|i| unit(i, dim)) {
            let (codes, scale) = quantize_query(&q);
            let error = query_rounding(&q, &codes, scale);
            assert!(error > 0.0 && error < 1e-4, "{error}");
            for (slot, r) in rows.iter().enumerate() {
                let dot_codes = dot_q16_body(&codes, &sketch.codes[slot * dim..(slot + 1) * dim]);
                let est = code_score(sketch.scales[slot], scale, dot_codes);
                let slack = sketch.slack[slot] + error * (sketch.slack[slot] + 1.0);
                assert!((dot(&q, r) - est).abs() <= slack, "slot {slot}");
            }
        }
        // The bound is useful: well under the gap between neighbouring cosines of real models.
        assert!(sketch.slack.iter().all(|&s| s < 0.02), "{:?}", sketch.slack.iter().fold(0.0f32, |m, &s| m.max(s)));
    }

    fn plain(query: &[f32], data: &[f32], dim: usize, ords: &[Ordinal], k: usize) -> Vec<(Ordinal, u32)> {
        let mut top = TopK::new(k);
        scan_into(query, ords.iter().enumerate().map(|(slot, &o)| (o, &data[slot * dim..(slot + 1) * dim])), &mut top);
        top.into_sorted().into_iter().map(|(o, s)| (o, s.to_bits())).collect()
    }

    fn screened(
        query: &[f32],
        data: &[f32],
        dim: usize,
        ords: &[Ordinal],
        k: usize,
        sketch: &Sketch,
        spread: Spread,
    ) -> Vec<(Ordinal, u32)> {
        let mut top = TopK::new(k);
        let (codes, scale) = quantize_query(query);
        let coded = Coded { unit: query, codes: &codes, scale, error: query_rounding(query, &codes, scale) };
        sketch.scan(coded, data, dim, ords.iter().copied().enumerate().map(|(slot, o)| (o, slot)), spread, &mut top);
        top.into_sorted().into_iter().map(|(o, s)| (o, s.to_bits())).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Screened and plain scans agree bit for bit: records of one to four adjacent rows,
        /// near-duplicate rows (close ties) and exact duplicates (equal scores, broken by
        /// ordinal), every k.
        #[test]
        fn screened_scan_is_the_plain_scan(
            seed in 0u64..1_000_000,
            records in 1usize..120,
            dim in prop::sample::select(vec![3usize, 17, 64, 384]),
            k in 1usize..40,
            near in 0.0f32..0.05,
        ) {
            let base: Vec<Vec<f32>> = (0..6).map(|i| unit(seed + i, dim)).collect();
            let mut data = Vec::new();
            let mut ords = Vec::new();
            let mut sketch = Sketch::default();
            for r in 0..records {
                for p in 0..(1 + (seed as usize + r) % 4) {
                    let i = (seed as usize).wrapping_add(r * 7 + p) % 6;
                    // Rows near one of six directions; every fifth record repeats one exactly.
                    let row = if r % 5 == 0 {
                        base[i].clone()
                    } else {
                        let noise = unit(seed ^ (r as u64 * 131 + p as u64), dim);
                        normalised(&base[i].iter().zip(&noise).map(|(b, n)| b + near * n).collect::<Vec<_>>()).unwrap()
                    };
                    sketch.push(&row);
                    data.extend_from_slice(&row);
                    ords.push(r as Ordinal * 2 + 1);
                }
            }
            let query = unit(seed ^ 0xabc, dim);
            for spread in [Spread::Dense, Spread::Sparse] {
                prop_assert_eq!(screened(&query, &data, dim, &ords, k, &sketch, spread), plain(&query, &data, dim, &ords, k));
                prop_assert_eq!(screened(&base[0], &data, dim, &ords, k, &sketch, spread), plain(&base[0], &data, dim, &ords, k));
            }
        }
    }
}
