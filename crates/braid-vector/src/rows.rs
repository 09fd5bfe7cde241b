//! The arena of vectors by slot, as f32 components or as int8 codes with a scale per vector.
//!
//! Every score in the crate is computed here: [`Rows::score`] (a query against a slot, for
//! the exact scan and the graph walk) and [`Rows::similarity`] (two slots, for the graph's
//! neighbour choice). With [`Quantization::Int8`] a vector `v` is kept as
//! `codes[i] = round(v[i] / s)` with `s = max |v[i]| / 127`, and scored as
//! `s * sum(query[i] * codes[i])`: the query stays f32, so the only error is the stored
//! vector's rounding, at most `s / 2` per component. An f32 arena also keeps such codes, as
//! a [`Sketch`] that screens its exact scan without changing any score.

use std::sync::{Arc, OnceLock};

use braid_core::Ordinal;

use crate::distance::{code_score, dot, dot_i8, dot_q16, quantize_into, quantize_query, query_rounding};
use crate::huge_pages::Region;
use crate::params::Quantization;
use crate::scan::{ahead, prefetch, scan_codes_into, scan_into, Coded, Spread};
use crate::search::TopK;
use crate::signs::{Floor, Shortlist, SignQuery, Signs};
use crate::sketch::{Sketch, SCREEN_RATIO};

/// A unit query made ready, once per search, for scoring against one arena's rows: its f32
/// components, and its `i16` codes with their scale and rounding, so an int8 row (or an f32
/// row's sketch) costs one integer dot product ([`crate::distance::dot_q16`]).
#[derive(Debug, Clone)]
pub(crate) struct Query {
    unit: Vec<f32>,
    codes: Vec<i16>,
    scale: f32,
    /// At least `‖unit − scale · codes‖`.
    error: f32,
    /// The query as the sign bits' screen reads it, made by the first of a scan's chunks to
    /// need it.
    signs: OnceLock<SignQuery>,
}

impl Query {
    /// The codes as the sketch's screen reads them.
    fn coded(&self) -> Coded<'_> {
        Coded { unit: &self.unit, codes: &self.codes, scale: self.scale, error: self.error }
    }
}

/// Vectors by slot, `dim` components each.
#[derive(Debug, Clone)]
pub(crate) enum Rows {
    /// Slot-major f32 components, and their sketch.
    F32 { dim: usize, data: Vec<f32>, sketch: Sketch },
    /// Slot-major int8 codes and one scale per slot, and their sign bits ([`crate::signs`];
    /// none where `BRAID_VECTOR_PATHS` turns the screen off).
    Int8 { dim: usize, codes: Vec<i8>, scales: Vec<f32>, signs: Signs },
}

impl Rows {
    /// An empty arena of `dim`-component vectors held as `quantization` says.
    pub(crate) fn new(dim: usize, quantization: Quantization) -> Self {
        match quantization {
            Quantization::F32 => Rows::F32 { dim, data: Vec::new(), sketch: Sketch::default() },
            Quantization::Int8 => {
                // Kept from the start, so whether a store can screen never depends on when it
                // was opened or on how many vectors it held then.
                let signs = if crate::store::keeps_signs() { Signs::new(dim) } else { Signs::default() };
                Rows::Int8 { dim, codes: Vec::new(), scales: Vec::new(), signs }
            }
        }
    }

    /// Room for `slots` more vectors (so a store read from disk holds no slack).
    pub(crate) fn reserve(&mut self, slots: usize) {
        match self {
            Rows::F32 { dim, data, sketch } => {
                data.reserve_exact(slots * *dim);
                sketch.reserve(slots, *dim);
            }
            Rows::Int8 { dim, codes, scales, signs } => {
                codes.reserve_exact(slots * *dim);
                scales.reserve_exact(slots);
                signs.reserve(slots);
            }
        }
    }

    /// A copy with room for `slots` more vectors in every buffer, when any lacks it
    /// ([`crate::room`]); `None` when all have room.
    pub(crate) fn with_room(&self, slots: usize) -> Option<Rows> {
        use crate::room::{copy_with_room, lacks_room};
        match self {
            Rows::F32 { dim, data, sketch } => {
                (lacks_room(data, slots * dim) || sketch.lacks_room(slots, *dim)).then(|| Rows::F32 {
                    dim: *dim,
                    data: copy_with_room(data, slots * dim),
                    sketch: sketch.with_room(slots, *dim),
                })
            }
            Rows::Int8 { dim, codes, scales, signs } => (lacks_room(codes, slots * dim)
                || lacks_room(scales, slots)
                || signs.lacks_room(slots))
            .then(|| Rows::Int8 {
                dim: *dim,
                codes: copy_with_room(codes, slots * dim),
                scales: copy_with_room(scales, slots),
                signs: signs.with_room(slots),
            }),
        }
    }

    /// How the vectors are held.
    pub(crate) fn quantization(&self) -> Quantization {
        match self {
            Rows::F32 { .. } => Quantization::F32,
            Rows::Int8 { .. } => Quantization::Int8,
        }
    }

    fn dim(&self) -> usize {
        match self {
            Rows::F32 { dim, .. } | Rows::Int8 { dim, .. } => *dim,
        }
    }

    /// Bytes one slot takes in the vector file, besides its ordinal (an f32 slot also holds
    /// its sketch in memory).
    pub(crate) fn row_bytes(&self) -> usize {
        match self {
            Rows::F32 { dim, .. } => 4 * dim,
            Rows::Int8 { dim, .. } => 4 + dim,
        }
    }

    /// Appends `unit` (already checked and normalised) as the next slot.
    pub(crate) fn push(&mut self, unit: &[f32]) {
        match self {
            Rows::F32 { data, sketch, .. } => {
                data.extend_from_slice(unit);
                sketch.push(unit);
            }
            Rows::Int8 { codes, scales, signs, .. } => {
                let start = codes.len();
                let scale = quantize_into(unit, codes);
                scales.push(scale);
                signs.push(&codes[start..], scale);
            }
        }
    }

    /// Appends a slot read from a vector file: f32 components, or a scale and codes.
    pub(crate) fn push_stored(&mut self, stored: StoredRow<'_>) {
        match (self, stored) {
            (Rows::F32 { data, sketch, .. }, StoredRow::F32(row)) => {
                data.extend_from_slice(row);
                sketch.push(row);
            }
            (Rows::Int8 { codes, scales, signs, .. }, StoredRow::Int8(scale, row)) => {
                codes.extend_from_slice(row);
                scales.push(scale);
                signs.push(row, scale);
            }
            (rows, _) => unreachable!("a {} arena given another kind of row", rows.quantization().name()),
        }
    }

    /// The vector of `slot` as stored: its f32 components, or its scale and codes.
    pub(crate) fn stored(&self, slot: usize) -> StoredRow<'_> {
        match self {
            Rows::F32 { dim, data, .. } => StoredRow::F32(&data[slot * dim..(slot + 1) * dim]),
            Rows::Int8 { dim, codes, scales, .. } => {
                StoredRow::Int8(scales[slot], &codes[slot * dim..(slot + 1) * dim])
            }
        }
    }

    /// The vector of `slot` as f32 components (decoded when quantized).
    pub(crate) fn vector(&self, slot: usize) -> Vec<f32> {
        match self.stored(slot) {
            StoredRow::F32(row) => row.to_vec(),
            StoredRow::Int8(scale, row) => row.iter().map(|&c| f32::from(c) * scale).collect(),
        }
    }

    /// `unit` (a unit-length query) made ready to score against these rows.
    pub(crate) fn query(&self, unit: Vec<f32>) -> Query {
        let (codes, scale) = quantize_query(&unit);
        let error = query_rounding(&unit, &codes, scale);
        Query { unit, codes, scale, error, signs: OnceLock::new() }
    }

    /// The dot product of `query` with `slot`'s vector: exact for f32 rows; for int8 rows the
    /// product of both sides' codes times both scales, which differs from the f32 product by
    /// the rows' rounding (at most half a step a component) and the query's, 258 times finer.
    #[cfg_attr(not(feature = "hnsw"), allow(dead_code))] // the graph scores through these
    #[inline]
    pub(crate) fn score(&self, query: &Query, slot: usize) -> f32 {
        match self.stored(slot) {
            StoredRow::F32(row) => dot(&query.unit, row),
            StoredRow::Int8(scale, row) => code_score(scale, query.scale, dot_q16(&query.codes, row)),
        }
    }

    /// Asks the CPU to start loading `slot`'s row (a hint: it changes no result).
    #[inline]
    pub(crate) fn prefetch(&self, slot: usize) {
        match self {
            Rows::F32 { dim, data, .. } => prefetch(&data[slot * dim..(slot + 1) * dim]),
            Rows::Int8 { dim, codes, scales, .. } => {
                prefetch(&codes[slot * dim..(slot + 1) * dim]);
                prefetch(&scales[slot..slot + 1]);
            }
        }
    }

    /// The dot product of two slots' vectors.
    #[cfg_attr(not(feature = "hnsw"), allow(dead_code))] // the graph scores through these
    pub(crate) fn similarity(&self, a: usize, b: usize) -> f32 {
        match self {
            Rows::F32 { dim, data, .. } => dot(&data[a * dim..(a + 1) * dim], &data[b * dim..(b + 1) * dim]),
            Rows::Int8 { dim, codes, scales, .. } => {
                let (x, y) = (&codes[a * dim..(a + 1) * dim], &codes[b * dim..(b + 1) * dim]);
                scales[a] * scales[b] * dot_i8(x, y) as f32
            }
        }
    }

    /// Offers `(ord, score)` for each `(ord, slot)` candidate to `top` (empty), or at least
    /// for every candidate that can be among `top`'s best: an f32 arena's [`Sketch`] screens
    /// the rows when there are at least [`SCREEN_RATIO`] times `top`'s `k` of them
    /// (`records`, the number of candidate records, need only be about right); what `top`
    /// keeps is the same either way. In a [`Spread::Sparse`] scan each row is prefetched a few
    /// candidates ahead of its turn, so it waits on memory once per stretch rather than once
    /// per row.
    pub(crate) fn scan(
        &self,
        query: &Query,
        candidates: impl Iterator<Item = (Ordinal, usize)>,
        records: usize,
        spread: Spread,
        top: &mut TopK,
    ) {
        match self {
            Rows::F32 { data, sketch, .. } if records >= top.k().saturating_mul(SCREEN_RATIO) => {
                sketch.scan(query.coded(), data, self.dim(), candidates, spread, top)
            }
            _ => match spread {
                Spread::Dense => self.scan_rows(query, candidates, top),
                Spread::Sparse => self.scan_rows(query, ahead(candidates, |slot| self.prefetch(slot)), top),
            },
        }
    }

    /// [`Rows::scan`] without the sketch: every candidate row scored, in the order given.
    fn scan_rows(&self, query: &Query, candidates: impl Iterator<Item = (Ordinal, usize)>, top: &mut TopK) {
        let dim = self.dim();
        match self {
            Rows::F32 { data, .. } => {
                scan_into(&query.unit, candidates.map(|(ord, slot)| (ord, &data[slot * dim..(slot + 1) * dim])), top)
            }
            Rows::Int8 { codes, scales, .. } => scan_codes_into(
                &query.codes,
                query.scale,
                candidates.map(|(ord, slot)| (ord, scales[slot], &codes[slot * dim..(slot + 1) * dim])),
                top,
            ),
        }
    }

    /// Whether the rows keep sign bits that screen a scan ([`Rows::screen`]).
    pub(crate) fn keeps_signs(&self) -> bool {
        matches!(self, Rows::Int8 { signs, .. } if signs.kept())
    }

    /// The first pass of a screened scan ([`crate::signs`]): the best [`crate::signs::shortlist`]
    /// `(k)` of `candidates` by their sign bits' estimate; `None` when
    /// the rows keep no signs. `sparse`: rows far apart, each prefetched a few ahead. `floor`
    /// is shared by the shortlists of the scan's other chunks ([`Shortlist`]).
    pub(crate) fn shortlist(
        &self,
        query: &Query,
        candidates: impl Iterator<Item = (Ordinal, usize)>,
        sparse: bool,
        k: usize,
        floor: &Arc<Floor>,
    ) -> Option<Shortlist> {
        let Rows::Int8 { signs, .. } = self else { return None };
        if !signs.kept() {
            return None;
        }
        let mut top = Shortlist::sharing(crate::signs::shortlist(k), floor);
        signs.screen(query.signs.get_or_init(|| signs.query(&query.unit)), candidates, sparse, &mut top);
        Some(top)
    }

    /// [`Rows::shortlist`] of the slots of `range` that `allowed_bits` admits, 64 at a time
    /// ([`Signs::screen_blocks`]); `None` where the rows keep no signs or the CPU scans no
    /// column blocks.
    pub(crate) fn shortlist_blocks(
        &self,
        query: &Query,
        range: std::ops::Range<usize>,
        allowed_bits: impl Fn(usize) -> u64,
        k: usize,
        floor: &Arc<Floor>,
    ) -> Option<Shortlist> {
        let Rows::Int8 { signs, .. } = self else { return None };
        if !signs.kept() || !signs.has_columns() {
            return None;
        }
        let mut top = Shortlist::sharing(crate::signs::shortlist(k), floor);
        signs.screen_blocks(query.signs.get_or_init(|| signs.query(&query.unit)), range, allowed_bits, &mut top);
        Some(top)
    }

    /// Whether [`Rows::shortlist_blocks`] runs.
    pub(crate) fn screens_blocks(&self) -> bool {
        matches!(self, Rows::Int8 { signs, .. } if signs.kept() && signs.has_columns())
    }

    /// Offers each `(ord, slot)` candidate's score to `top`, every one scored (the second pass
    /// of a screened scan), its row prefetched a few candidates ahead.
    pub(crate) fn rescore(&self, query: &Query, candidates: impl Iterator<Item = (Ordinal, usize)>, top: &mut TopK) {
        self.scan_rows(query, ahead(candidates, |slot| self.prefetch(slot)), top);
    }

    /// The arena with only the slots where `keep` is true, in order.
    pub(crate) fn compacted(&self, keep: &[bool]) -> Rows {
        let mut out = Rows::new(self.dim(), self.quantization());
        out.reserve(keep.iter().filter(|&&k| k).count());
        for slot in (0..keep.len()).filter(|&slot| keep[slot]) {
            out.push_stored(self.stored(slot));
        }
        out
    }

    /// The arenas' whole huge pages ([`crate::huge_pages`]): what a scan reads.
    pub(crate) fn huge_page_regions(&self) -> Vec<Region> {
        match self {
            Rows::F32 { data, sketch, .. } => Region::of(data).into_iter().chain(sketch.huge_page_regions()).collect(),
            Rows::Int8 { codes, signs, .. } => Region::of(codes).into_iter().chain(signs.huge_page_regions()).collect(),
        }
    }

    /// Bytes held in memory.
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            Rows::F32 { data, sketch, .. } => data.capacity() * 4 + sketch.heap_bytes(),
            Rows::Int8 { codes, scales, signs, .. } => codes.capacity() + scales.capacity() * 4 + signs.heap_bytes(),
        }
    }
}

/// One slot's vector as stored.
#[derive(Debug, Clone, Copy)]
pub(crate) enum StoredRow<'a> {
    /// f32 components.
    F32(&'a [f32]),
    /// The scale and the int8 codes.
    Int8(f32, &'a [i8]),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distance::normalised;

    #[test]
    fn int8_scores_are_within_the_rounding_bound() {
        let dim = 384;
        let mut state = 7u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        };
        let vectors: Vec<Vec<f32>> =
            (0..50).map(|_| normalised(&(0..dim).map(|_| next()).collect::<Vec<_>>()).unwrap()).collect();
        let mut exact = Rows::new(dim, Quantization::F32);
        let mut coded = Rows::new(dim, Quantization::Int8);
        for v in &vectors {
            exact.push(v);
            coded.push(v);
        }
        assert_eq!(coded.row_bytes(), dim + 4);
        for (slot, v) in vectors.iter().enumerate() {
            let scale = v.iter().fold(0.0f32, |m, x| m.max(x.abs())) / 127.0;
            let decoded = coded.vector(slot);
            assert!(decoded.iter().zip(v).all(|(d, x)| (d - x).abs() <= scale / 2.0 + 1e-7));
            for query in &vectors {
                // The row's rounding: |error| <= sum |q_i| * s / 2 <= sqrt(dim) * s / 2 for a
                // unit query; the query's codes add at most sqrt(dim) * (its step / 2) * 1.
                let query_step = query.iter().fold(0.0f32, |m, x| m.max(x.abs())) / 32767.0;
                let bound = (dim as f32).sqrt() * (scale + query_step) / 2.0 + 1e-6;
                let (q_coded, q_exact) = (coded.query(query.clone()), exact.query(query.clone()));
                assert!((coded.score(&q_coded, slot) - exact.score(&q_exact, slot)).abs() <= bound);
            }
            assert!((coded.similarity(slot, slot) - 1.0).abs() < 0.01);
        }
        let keep: Vec<bool> = (0..50).map(|s| s % 3 == 0).collect();
        let kept = coded.compacted(&keep);
        assert_eq!(kept.vector(1), coded.vector(3));
    }
}
