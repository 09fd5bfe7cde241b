//! The sign bits of an int8 arena, which screen a large exact scan: a shortlist by a one-bit
//! estimate, then the int8 score of the shortlist only.
//!
//! An int8 row is 384 bytes at 384 dimensions, and a scan of many rows is bound by reading
//! them (a caller who sees ten tenant partitions of 50,000 vectors reads 190 MB a query).
//! [`Signs`] keeps each row of every int8 arena also as one bit a dimension — whether its
//! code is positive — 48 bytes at 384 dimensions, with one factor per row. A screened scan
//! ([`crate::store::VectorStore`]'s: a request of at least [`SCREEN_REQUEST_FROM`] allowed
//! records, a store of [`SCREEN_FROM`] to [`SCREEN_UP_TO`] of them) runs in two passes:
//!
//! 1. every candidate row's estimate from its bits and the query's four-bit codes, in integers
//!    (popcounts), into a shortlist of the best [`shortlist`]`(k)` rows — where a walk's 64
//!    slots in a row are all candidates and the CPU has AVX-512 or AVX2, from a second copy of the bits
//!    in columns, 64 rows at once by table lookups ([`crate::sign_columns`]; the same
//!    integers);
//! 2. the shortlist's rows scored as the unscreened scan scores them (the int8 codes, the same
//!    bits), into the caller's top `k`.
//!
//! Unlike the f32 arena's [`crate::sketch::Sketch`] the screen is **not exact**: a row whose
//! estimate misses the shortlist is never scored, so a hit can be lost (recall is measured in
//! `crates/braid-cli/examples/semantic_hits.rs`). Every score returned is still the row's int8 score, and every
//! row read is an allowed one: the work is a function of the allowed rows alone.
//!
//! **The estimate** (RaBitQ's, without its rotation): with `b` the row's signs as ±1 and `x`
//! the row, `q·x ≈ (q·b) / (b·x)`. The bits give `q·b`; `1 / (b·x)` is the row's factor,
//! computed from its codes and scale (`b·x = s · Σ|c_i|`). The query is held as unsigned
//! four-bit codes `u_i` on a grid symmetric about zero, `q_i ≈ Δ · (u_i − 7.5)`, so with `β`
//! the row's bits as 0/1, `P = Σ β_i` and `S = Σ β_i u_i` (four popcounts of the bits against
//! the query's bit planes),
//! `q·b ≈ Δ · (2S − 15P + 7.5·dim − Σu)`: two popcount sums a row, exact in integers, so every
//! build ranks alike. Nothing of it depends on another row (no corpus statistics).

use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use braid_core::Ordinal;

use crate::scan::{ahead, prefetch};
use crate::sign_columns::{Columns, Tables, BLOCK_ROWS};

/// Allowed records in a request from which its search is screened: below, the exact scan
/// costs about a millisecond or less (a caller of one tenant of 50,000 int8 vectors: 1.0–1.4
/// ms), and keeps its exact answer.
pub(crate) const SCREEN_REQUEST_FROM: usize = 60_000;

/// Allowed records in a store from which a search is screened (below, the int8 scan alone is
/// cheap: about a millisecond at 20,000 rows).
pub(crate) const SCREEN_FROM: usize = 20_000;

/// Allowed records in a store up to which a screened scan answers rather than the graph: at
/// 500,000 allowed int8 vectors the screen took about 10 ns a row (5 ms) where the graph
/// walked at `ef_search` 1,600 in 8–9 ms, and found more of the exact top 10 (1.0 against
/// 0.9855 on the 1M scale corpus, research/scale-log.md); past a million rows the walk,
/// whose cost grows with the logarithm of the rows, is the cheaper.
pub(crate) const SCREEN_UP_TO: usize = 1_000_000;

/// Bits of the query's codes.
const QUERY_BITS: usize = 4;

/// The shortlist's length for `k` hits: rows rescored with their int8 codes.
pub(crate) fn shortlist(k: usize) -> usize {
    k.saturating_mul(SHORTLIST_PER_HIT).max(SHORTLIST_MIN)
}

/// Rows rescored per hit asked for, and at least. On the 1M scale corpus's partitions of
/// 50,000 and 500,000 int8 vectors (k = 100, 200 queries), recall@10 against the exact scan was
/// 0.986–1.0 at 4 a hit, 0.9945–1.0 at 10 and 0.997–1.0 at 20, and recall@100 for a caller of
/// one tenant 0.73, 0.87 and 0.94 (research/scale-log.md); rescoring a row costs about as
/// much as estimating 10.
const SHORTLIST_PER_HIT: usize = 10;
const SHORTLIST_MIN: usize = 400;

/// Sign bits and factor per slot of an int8 arena (empty until [`Signs::keep`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Signs {
    /// Whether the signs are kept (then every slot has them).
    kept: bool,
    /// `u64` words a row: `dim` bits rounded up.
    words: usize,
    /// Slot-major bits: bit `i % 64` of word `i / 64` is set when code `i` is positive.
    bits: Vec<u64>,
    /// `1 / (b·x)` per slot (0 for a row of no positive or negative code, never the case for
    /// a unit vector).
    factors: Vec<f32>,
    /// The same bits in column blocks, for [`Signs::screen_blocks`] (where the CPU scans them).
    columns: Option<Columns>,
}

/// A query made ready for the screen: its bit planes, and the constant of its estimate.
#[derive(Debug, Clone)]
pub(crate) struct SignQuery {
    /// `QUERY_BITS` planes of `words` words: plane `j` holds bit `j` of every `u_i`.
    planes: Vec<u64>,
    /// `7.5·dim − Σu`, the estimate's constant (in units of `Δ`).
    constant: f32,
    /// The codes' tables for the column kernel (where the signs have columns).
    tables: Option<Tables>,
}

impl Signs {
    /// Signs kept for rows of `dim` codes, none yet.
    pub(crate) fn new(dim: usize) -> Self {
        let words = dim.div_ceil(64);
        Signs { kept: true, words, bits: Vec::new(), factors: Vec::new(), columns: Columns::new(words) }
    }

    /// Whether the signs are kept.
    pub(crate) fn kept(&self) -> bool {
        self.kept
    }

    /// Starts keeping signs for an arena of `dim`-code rows, computing them for every row in
    /// `codes` and `scales`.
    #[cfg(test)]
    pub(crate) fn keep(&mut self, dim: usize, codes: &[i8], scales: &[f32]) {
        self.kept = true;
        self.words = dim.div_ceil(64);
        self.bits = Vec::new();
        self.factors = Vec::new();
        self.columns = Columns::new(self.words);
        self.reserve(scales.len());
        if dim == 0 {
            return;
        }
        for (row, &scale) in codes.chunks_exact(dim).zip(scales) {
            self.push(row, scale);
        }
    }

    /// Room for `slots` more rows (when kept).
    pub(crate) fn reserve(&mut self, slots: usize) {
        if self.kept {
            self.bits.reserve_exact(slots * self.words);
            self.factors.reserve_exact(slots);
            if let Some(columns) = &mut self.columns {
                columns.reserve(slots);
            }
        }
    }

    /// Whether a push of `slots` more rows would grow a buffer (never when not kept).
    pub(crate) fn lacks_room(&self, slots: usize) -> bool {
        use crate::room::lacks_room;
        self.kept
            && (lacks_room(&self.bits, slots * self.words)
                || lacks_room(&self.factors, slots)
                || self.columns.as_ref().is_some_and(|c| c.lacks_room(slots)))
    }

    /// A copy with room for `slots` more rows ([`crate::room`]).
    pub(crate) fn with_room(&self, slots: usize) -> Signs {
        use crate::room::copy_with_room;
        Signs {
            kept: self.kept,
            words: self.words,
            bits: copy_with_room(&self.bits, slots * self.words),
            factors: copy_with_room(&self.factors, slots),
            columns: self.columns.as_ref().map(|c| c.with_room(slots)),
        }
    }

    /// Appends a row's signs (when kept).
    pub(crate) fn push(&mut self, codes: &[i8], scale: f32) {
        if !self.kept {
            return;
        }
        let mut magnitude = 0u32;
        for chunk in codes.chunks(64) {
            let (word, sum) = sign_word(chunk);
            self.bits.push(word);
            magnitude += sum;
        }
        let dot = scale * magnitude as f32;
        self.factors.push(if dot > 0.0 { 1.0 / dot } else { 0.0 });
        if let Some(columns) = &mut self.columns {
            let slot = self.factors.len() - 1;
            columns.push(&self.bits[slot * self.words..(slot + 1) * self.words]);
        }
    }

    /// The bits' whole huge pages, in rows and in columns ([`crate::huge_pages`]).
    pub(crate) fn huge_page_regions(&self) -> Vec<crate::huge_pages::Region> {
        let columns = self.columns.as_ref().and_then(Columns::huge_page_region);
        crate::huge_pages::Region::of(&self.bits).into_iter().chain(columns).collect()
    }

    /// Bytes held in memory.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.bits.capacity() * 8 + self.factors.capacity() * 4 + self.columns.as_ref().map_or(0, Columns::heap_bytes)
    }

    /// Whether [`Signs::screen_blocks`] can run (the CPU scans column blocks).
    pub(crate) fn has_columns(&self) -> bool {
        self.columns.is_some()
    }

    /// `unit` made ready for [`Signs::screen`].
    pub(crate) fn query(&self, unit: &[f32]) -> SignQuery {
        let largest = unit.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        let top = ((1 << QUERY_BITS) - 1) as f32; // 15
        let step = if largest > 0.0 { 2.0 * largest / top } else { 1.0 };
        let mut planes = vec![0u64; QUERY_BITS * self.words];
        let mut sum = 0u32;
        let mut codes = Vec::with_capacity(unit.len());
        for (i, &x) in unit.iter().enumerate() {
            // q ≈ step · (u − 7.5), u in 0..=15.
            let u = (x / step + top / 2.0).round().clamp(0.0, top) as u32;
            sum += u;
            codes.push(u as u8);
            for (j, plane) in planes.chunks_exact_mut(self.words).enumerate() {
                if u >> j & 1 == 1 {
                    plane[i / 64] |= 1 << (i % 64);
                }
            }
        }
        let tables = self.columns.as_ref().map(|_| Tables::new(&codes, self.words));
        SignQuery { planes, constant: top / 2.0 * unit.len() as f32 - sum as f32, tables }
    }

    /// Offers every candidate `(ord, slot)`'s estimate to `shortlist`; prefetching each row's
    /// bits a few candidates ahead when `sparse`.
    pub(crate) fn screen(
        &self,
        query: &SignQuery,
        candidates: impl Iterator<Item = (Ordinal, usize)>,
        sparse: bool,
        shortlist: &mut Shortlist,
    ) {
        if sparse {
            let fetch = |slot: usize| {
                prefetch(&self.bits[slot * self.words..(slot + 1) * self.words]);
                prefetch(&self.factors[slot..slot + 1]);
            };
            self.screen_rows(query, ahead(candidates, fetch), shortlist);
        } else {
            self.screen_rows(query, candidates, shortlist);
        }
    }

    /// Offers the estimate of every slot in `range` that `allowed_bits` admits to `shortlist`,
    /// 64 slots at a time: `allowed_bits(first)` gives the admitted slots among `first..first +
    /// 64` (bit `i` for slot `first + i`; only those in `range`). A block whose 64 slots are all
    /// admitted is estimated from the columns at once; the others row by row, as
    /// [`Signs::screen`] does, so only admitted rows' bits are read (every block, where the
    /// signs have no columns). The same rows and estimates as [`Signs::screen`] over the
    /// admitted slots, so the same shortlist.
    pub(crate) fn screen_blocks(
        &self,
        query: &SignQuery,
        range: Range<usize>,
        allowed_bits: impl Fn(usize) -> u64,
        shortlist: &mut Shortlist,
    ) {
        let columns = self.columns.as_ref().zip(query.tables.as_ref());
        let mut slots = [0usize; BLOCK_ROWS];
        let mut estimates = [0f32; BLOCK_ROWS];
        let end = range.end.min(self.factors.len());
        let mut block = range.start / BLOCK_ROWS;
        while block * BLOCK_ROWS < end {
            let first = block * BLOCK_ROWS;
            let bits = allowed_bits(first);
            let mut n = 0;
            if let (u64::MAX, Some((columns, tables))) = (bits, columns) {
                let factors = &self.factors[first..first + BLOCK_ROWS];
                let mut all = [0f32; BLOCK_ROWS];
                let floor = shortlist.floor();
                let mut rest = columns.estimates(tables, block, factors, query.constant, floor, &mut all);
                while rest != 0 {
                    let i = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    slots[n] = first + i;
                    estimates[n] = all[i];
                    n += 1;
                }
            } else if bits != 0 {
                let mut rest = bits;
                while rest != 0 {
                    slots[n] = first + rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    n += 1;
                }
                self.estimate(query, &slots[..n], &mut estimates[..n]);
            }
            shortlist.offer(&slots[..n], &estimates[..n]);
            block += 1;
        }
    }

    /// Estimates the candidates a block at a time (the kernel's loop calls nothing, so its
    /// registers stay put), each block then offered to the shortlist.
    fn screen_rows(&self, query: &SignQuery, candidates: impl Iterator<Item = (Ordinal, usize)>, top: &mut Shortlist) {
        let mut slots = [0usize; BLOCK];
        let mut estimates = [0f32; BLOCK];
        let mut n = 0;
        for (_, slot) in candidates {
            slots[n] = slot;
            n += 1;
            if n == BLOCK {
                self.estimate(query, &slots, &mut estimates);
                top.offer(&slots, &estimates);
                n = 0;
            }
        }
        self.estimate(query, &slots[..n], &mut estimates[..n]);
        top.offer(&slots[..n], &estimates[..n]);
    }

    /// The estimate of each of `slots` into `out`: with AVX-512's vector popcount, with the
    /// `popcnt` instruction, or portable code (the CPU checked at run time; the same integers).
    fn estimate(&self, query: &SignQuery, slots: &[usize], out: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        {
            if self.words <= 8 && has_avx512_popcnt() {
                // SAFETY: the kernel's features were just detected, and rows fit one register.
                return unsafe { self.estimate_avx512(query, slots, out) };
            }
            if std::arch::is_x86_feature_detected!("popcnt") {
                // SAFETY: `popcnt` was just detected.
                return unsafe { self.estimate_popcnt(query, slots, out) };
            }
        }
        self.estimate_portable(query, slots, out);
    }

    /// [`Signs::estimate`]'s loop, in whatever instructions the caller is compiled for (a
    /// build for any x86-64 CPU counts bits without `popcnt`, several times slower).
    #[inline(always)]
    fn estimate_portable(&self, query: &SignQuery, slots: &[usize], out: &mut [f32]) {
        let words = self.words;
        let plane = |j: usize| &query.planes[j * words..(j + 1) * words];
        let planes: [&[u64]; QUERY_BITS] = std::array::from_fn(plane);
        for (&slot, out) in slots.iter().zip(out) {
            let row = &self.bits[slot * words..(slot + 1) * words];
            let (mut s, mut p) = (0i64, 0i64);
            for (w, &x) in row.iter().enumerate() {
                p += i64::from(x.count_ones());
                for (j, plane) in planes.iter().enumerate() {
                    s += i64::from((x & plane[w]).count_ones()) << j;
                }
            }
            *out = self.scaled(slot, 2 * s - 15 * p, query);
        }
    }

    /// [`Signs::estimate_portable`] compiled with the `popcnt` instruction.
    ///
    /// # Safety
    ///
    /// The CPU must support `popcnt`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    unsafe fn estimate_popcnt(&self, query: &SignQuery, slots: &[usize], out: &mut [f32]) {
        self.estimate_portable(query, slots, out);
    }

    /// The estimate of `slot` from its integer sum `2S − 15P`.
    #[inline(always)]
    fn scaled(&self, slot: usize, sum: i64, query: &SignQuery) -> f32 {
        self.factors[slot] * (sum as f32 + query.constant)
    }

    /// [`Signs::estimate`] with AVX-512's 64-bit popcount: a row of up to eight words in one
    /// register.
    ///
    /// # Safety
    ///
    /// The CPU must support the features [`has_avx512_popcnt`] checks, and `self.words <= 8`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vpopcntdq")]
    unsafe fn estimate_avx512(&self, query: &SignQuery, slots: &[usize], out: &mut [f32]) {
        use std::arch::x86_64::{
            _mm512_add_epi64, _mm512_and_si512, _mm512_maskz_loadu_epi64, _mm512_popcnt_epi64, _mm512_reduce_add_epi64,
            _mm512_slli_epi64, _mm512_sub_epi64,
        };
        let words = self.words;
        let mask: u8 = if words >= 8 { u8::MAX } else { (1u8 << words) - 1 };
        let planes = query.planes.as_ptr();
        // SAFETY: each of the four planes holds `words` words; the masked loads read only those.
        let (u0, u1, u2, u3) = unsafe {
            (
                _mm512_maskz_loadu_epi64(mask, planes.cast()),
                _mm512_maskz_loadu_epi64(mask, planes.add(words).cast()),
                _mm512_maskz_loadu_epi64(mask, planes.add(2 * words).cast()),
                _mm512_maskz_loadu_epi64(mask, planes.add(3 * words).cast()),
            )
        };
        assert!(slots.iter().all(|&slot| (slot + 1) * words <= self.bits.len()));
        for (&slot, out) in slots.iter().zip(out) {
            // SAFETY: the row's `words` words lie inside `bits` (asserted above); the masked
            // load reads only those.
            let x = unsafe { _mm512_maskz_loadu_epi64(mask, self.bits.as_ptr().add(slot * words).cast()) };
            let p = _mm512_popcnt_epi64(x);
            let s = _mm512_add_epi64(
                _mm512_add_epi64(
                    _mm512_popcnt_epi64(_mm512_and_si512(x, u0)),
                    _mm512_slli_epi64::<1>(_mm512_popcnt_epi64(_mm512_and_si512(x, u1))),
                ),
                _mm512_add_epi64(
                    _mm512_slli_epi64::<2>(_mm512_popcnt_epi64(_mm512_and_si512(x, u2))),
                    _mm512_slli_epi64::<3>(_mm512_popcnt_epi64(_mm512_and_si512(x, u3))),
                ),
            );
            // 2S − 15P = 2S − 16P + P, lane by lane, then one sum.
            let lanes = _mm512_add_epi64(_mm512_sub_epi64(_mm512_slli_epi64::<1>(s), _mm512_slli_epi64::<4>(p)), p);
            *out = self.scaled(slot, _mm512_reduce_add_epi64(lanes), query);
        }
    }
}

/// Candidates estimated per call of the kernel.
const BLOCK: usize = 64;

/// The best `length` rows by estimate, in the total order of a better estimate, then the lower
/// slot: rows are kept while they reach the floor, and once twice `length` are kept the best
/// `length` are selected and the floor rises to the last of them. Which rows it ends with
/// depends on the rows offered, not on their order. A row is kept as one integer, [`rank`], so
/// that selecting compares integers.
///
/// The shortlists of one scan's chunks (one store's, each chunk a disjoint share of its slots,
/// merged at the end) share a [`Floor`]: each raises it to its own floor, and each keeps only
/// rows that reach the highest. A chunk's floor is an estimate that `length` rows it saw reach,
/// so no row below it is among the store's best `length`: the merged shortlist is the same rows
/// whichever chunk ran first, and a chunk that starts late starts from a floor instead of from
/// nothing (a store of 500,000 rows is eight chunks).
#[derive(Debug)]
pub(crate) struct Shortlist {
    length: usize,
    /// [`rank`]s of the rows kept.
    kept: Vec<u128>,
    floor: f32,
    shared: Option<Arc<Floor>>,
}

/// The highest floor the shortlists of one scan's chunks have reached (see [`Shortlist`]).
#[derive(Debug)]
pub(crate) struct Floor(AtomicU32);

impl Floor {
    /// No floor yet.
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Floor(AtomicU32::new(key(f32::NEG_INFINITY))))
    }

    fn get(&self) -> f32 {
        unkey(self.0.load(Ordering::Relaxed))
    }

    fn raise(&self, floor: f32) {
        self.0.fetch_max(key(floor), Ordering::Relaxed);
    }
}

/// `estimate`'s bits turned so that unsigned order is the floats' total order.
fn key(estimate: f32) -> u32 {
    let bits = estimate.to_bits();
    if bits >> 31 == 1 {
        !bits
    } else {
        bits | 1 << 31
    }
}

/// The float whose [`key`] is `key`.
fn unkey(key: u32) -> f32 {
    f32::from_bits(if key >> 31 == 1 { key & !(1 << 31) } else { !key })
}

/// A row as one integer, greater for the better row: its estimate's [`key`] above its slot's
/// complement (the lower slot the better).
fn rank(estimate: f32, slot: usize) -> u128 {
    u128::from(key(estimate)) << 64 | u128::from(!(slot as u64))
}

/// The estimate and slot of a [`rank`].
fn unrank(rank: u128) -> (f32, usize) {
    (unkey((rank >> 64) as u32), !(rank as u64) as usize)
}

impl Shortlist {
    pub(crate) fn new(length: usize) -> Self {
        Shortlist { length, kept: Vec::with_capacity(2 * length + BLOCK), floor: f32::NEG_INFINITY, shared: None }
    }

    /// A shortlist of one chunk of a scan whose chunks share `floor`.
    pub(crate) fn sharing(length: usize, floor: &Arc<Floor>) -> Self {
        Shortlist { shared: Some(Arc::clone(floor)), ..Shortlist::new(length) }
    }

    /// The least estimate still kept: this shortlist's floor, or the shared one where higher.
    fn floor(&mut self) -> f32 {
        if let Some(shared) = &self.shared {
            self.floor = self.floor.max(shared.get());
        }
        self.floor
    }

    /// Offers each of `slots` with its estimate.
    fn offer(&mut self, slots: &[usize], estimates: &[f32]) {
        let floor = self.floor();
        for (&slot, &estimate) in slots.iter().zip(estimates) {
            if estimate >= floor {
                self.kept.push(rank(estimate, slot));
            }
        }
        if self.kept.len() >= 2 * self.length.max(1) {
            self.select();
            if let Some(&last) = self.kept.last() {
                self.floor = self.floor.max(unrank(last).0);
                if let Some(shared) = &self.shared {
                    shared.raise(self.floor);
                }
            }
        }
    }

    /// Cuts `kept` to the best `length` (unordered but for the last, the worst of them: the
    /// selection puts it in its sorted place).
    fn select(&mut self) {
        if self.length == 0 {
            self.kept.clear();
        } else if self.kept.len() > self.length {
            self.kept.select_nth_unstable_by(self.length - 1, |a, b| b.cmp(a));
            self.kept.truncate(self.length);
        }
    }

    /// Merges another shortlist's rows (of a disjoint set of slots) into this one.
    pub(crate) fn merge(mut self, other: Shortlist) -> Shortlist {
        self.kept.extend(other.kept);
        self.select();
        self
    }

    /// The rows kept, best first.
    #[cfg(test)]
    pub(crate) fn into_sorted(mut self) -> Vec<(f32, usize)> {
        self.select();
        self.kept.sort_unstable_by(|a, b| b.cmp(a));
        self.kept.into_iter().map(unrank).collect()
    }

    /// The slots of the rows kept, in slot order.
    pub(crate) fn into_slots(mut self) -> Vec<usize> {
        self.select();
        let mut slots: Vec<usize> = self.kept.into_iter().map(|rank| unrank(rank).1).collect();
        slots.sort_unstable();
        slots
    }
}

/// Better estimate first, then the lower slot.
#[cfg(test)]
fn order(a: &(f32, usize), b: &(f32, usize)) -> std::cmp::Ordering {
    b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
}

/// Up to 64 codes' sign bits (bit `i` set when code `i` is positive) and the sum of their
/// magnitudes; 64 codes at once with AVX-512 or AVX2 (checked at run time; the same integers).
#[inline]
fn sign_word(chunk: &[i8]) -> (u64, u32) {
    #[cfg(target_arch = "x86_64")]
    if chunk.len() == 64 {
        if std::arch::is_x86_feature_detected!("avx512bw") {
            // SAFETY: AVX-512BW was just detected and the chunk holds 64 codes.
            return unsafe { sign_word_avx512(chunk) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 was just detected and the chunk holds 64 codes.
            return unsafe { sign_word_avx2(chunk) };
        }
    }
    sign_word_portable(chunk)
}

/// [`sign_word`] a code at a time.
fn sign_word_portable(chunk: &[i8]) -> (u64, u32) {
    let mut word = 0u64;
    let mut sum = 0u32;
    for (i, &c) in chunk.iter().enumerate() {
        word |= u64::from(c > 0) << i;
        // b·c with b = +1 where c > 0, else −1: |c| (a zero code adds nothing).
        sum += u32::from(c.unsigned_abs());
    }
    (word, sum)
}

/// [`sign_word`] of 64 codes with AVX-512BW.
///
/// # Safety
///
/// The CPU must support AVX-512F and AVX-512BW, and `chunk` must hold 64 codes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn sign_word_avx512(chunk: &[i8]) -> (u64, u32) {
    use std::arch::x86_64::{
        _mm512_abs_epi8, _mm512_cmpgt_epi8_mask, _mm512_loadu_si512, _mm512_reduce_add_epi64, _mm512_sad_epu8,
        _mm512_setzero_si512,
    };
    // SAFETY: the chunk holds 64 bytes, read unaligned.
    let v = unsafe { _mm512_loadu_si512(chunk.as_ptr().cast()) };
    let zero = _mm512_setzero_si512();
    let word = _mm512_cmpgt_epi8_mask(v, zero);
    // |−128| is 128 as an unsigned byte, as `unsigned_abs` gives.
    let sum = _mm512_reduce_add_epi64(_mm512_sad_epu8(_mm512_abs_epi8(v), zero));
    (word, sum as u32)
}

/// [`sign_word`] of 64 codes with AVX2, 32 at a time.
///
/// # Safety
///
/// The CPU must support AVX2, and `chunk` must hold 64 codes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sign_word_avx2(chunk: &[i8]) -> (u64, u32) {
    use std::arch::x86_64::{
        __m256i, _mm256_abs_epi8, _mm256_add_epi64, _mm256_cmpgt_epi8, _mm256_loadu_si256, _mm256_movemask_epi8,
        _mm256_sad_epu8, _mm256_setzero_si256, _mm256_storeu_si256,
    };
    // SAFETY: the chunk holds 64 bytes, read unaligned in two halves.
    let (a, b) = unsafe {
        (
            _mm256_loadu_si256(chunk.as_ptr().cast::<__m256i>()),
            _mm256_loadu_si256(chunk.as_ptr().add(32).cast::<__m256i>()),
        )
    };
    let zero = _mm256_setzero_si256();
    let low = _mm256_movemask_epi8(_mm256_cmpgt_epi8(a, zero)) as u32;
    let high = _mm256_movemask_epi8(_mm256_cmpgt_epi8(b, zero)) as u32;
    // |−128| is 128 as an unsigned byte, as `unsigned_abs` gives.
    let sums = _mm256_add_epi64(_mm256_sad_epu8(_mm256_abs_epi8(a), zero), _mm256_sad_epu8(_mm256_abs_epi8(b), zero));
    let mut lanes = [0u64; 4];
    // SAFETY: the store writes 32 bytes into a 32-byte array.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast::<__m256i>(), sums) };
    (u64::from(low) | u64::from(high) << 32, lanes.iter().sum::<u64>() as u32)
}

/// Whether the CPU runs [`Signs::estimate_avx512`].
#[cfg(target_arch = "x86_64")]
fn has_avx512_popcnt() -> bool {
    std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vpopcntdq")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distance::{normalised, quantize_into};

    fn unit(seed: u64, dim: usize) -> Vec<f32> {
        normalised(&crate::sketch::tests::unit(seed, dim)).unwrap()
    }

    /// A row's rank orders rows as the estimates' total order, then the lower slot, and gives
    /// back its estimate and slot, bit for bit.
    #[test]
    fn ranks_order_rows_as_estimates_then_slots() {
        let estimates = [f32::NEG_INFINITY, -3.5, -1e-30, -0.0, 0.0, 1e-30, 0.25, 7.0, f32::INFINITY];
        let slots = [0usize, 1, 63, 64, 1 << 20, usize::MAX >> 1];
        let rows: Vec<(f32, usize)> = estimates.iter().flat_map(|&e| slots.iter().map(move |&s| (e, s))).collect();
        for a in &rows {
            let (e, s) = unrank(rank(a.0, a.1));
            assert_eq!((e.to_bits(), s), (a.0.to_bits(), a.1));
            for b in &rows {
                assert_eq!(rank(b.0, b.1).cmp(&rank(a.0, a.1)), order(a, b), "{a:?} against {b:?}");
            }
        }
    }

    /// Both builds of a row's sign word agree, extremes included.
    #[test]
    fn sign_words_agree() {
        let chunk: Vec<i8> = (0..64).map(|i: i32| ((i * 37) % 256 - 128) as i8).collect();
        let mut word = 0u64;
        let mut sum = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            word |= u64::from(c > 0) << i;
            sum += u32::from(c.unsigned_abs());
        }
        assert_eq!(sign_word(&chunk), (word, sum));
        assert_eq!(sign_word_portable(&chunk), (word, sum));
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 was just detected and the chunk holds 64 codes.
            assert_eq!(unsafe { sign_word_avx2(&chunk) }, (word, sum));
            let extremes: Vec<i8> = (0..64).map(|i| [i8::MIN, i8::MAX, 0, -1, 1][i % 5]).collect();
            // SAFETY: as above.
            assert_eq!(unsafe { sign_word_avx2(&extremes) }, sign_word_portable(&extremes));
        }
        assert_eq!(sign_word(&chunk[..10]).1, chunk[..10].iter().map(|c| u32::from(c.unsigned_abs())).sum::<u32>());
    }

    /// Every row kernel the CPU runs gives each row the portable loop's estimate, bit for bit,
    /// at dimensions inside one word, at a word boundary and past eight words.
    #[test]
    fn every_row_kernel_estimates_alike() {
        for dim in [40, 128, 384, 600] {
            let n = 200usize;
            let (mut codes, mut scales) = (Vec::new(), Vec::new());
            for i in 0..n as u64 {
                scales.push(quantize_into(&unit(i, dim), &mut codes));
            }
            let mut signs = Signs::default();
            signs.keep(dim, &codes, &scales);
            let query = signs.query(&unit(77_000 + dim as u64, dim));
            let slots: Vec<usize> = (0..n).rev().step_by(3).collect();
            let mut want = vec![0f32; slots.len()];
            signs.estimate_portable(&query, &slots, &mut want);
            let want: Vec<u32> = want.iter().map(|e| e.to_bits()).collect();
            let mut got = vec![0f32; slots.len()];
            signs.estimate(&query, &slots, &mut got);
            assert_eq!(got.iter().map(|e| e.to_bits()).collect::<Vec<_>>(), want, "dim {dim}, the CPU's kernel");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("popcnt") {
                // SAFETY: `popcnt` was just detected.
                unsafe { signs.estimate_popcnt(&query, &slots, &mut got) };
                assert_eq!(got.iter().map(|e| e.to_bits()).collect::<Vec<_>>(), want, "dim {dim}, popcnt");
            }
        }
    }

    /// At the extremes a row's sum can take (every sign bit set or none, against a query of
    /// all-top or all-bottom codes), up to the widest rows the columns hold, the columns give
    /// each row the estimate its popcounts do, bit for bit.
    #[test]
    fn the_columns_are_exact_at_the_extreme_sums() {
        for dim in [384, 2176] {
            let n = 192usize;
            let (mut codes, mut scales) = (Vec::new(), Vec::new());
            for i in 0..n {
                let sign = match i % 3 {
                    0 => |_: usize| 1.0f32,
                    1 => |_: usize| -1.0,
                    _ => |d: usize| if d.is_multiple_of(2) { 1.0 } else { -1.0 },
                };
                let row: Vec<f32> = (0..dim).map(|d| sign(d) * (1.0 + (i % 5) as f32)).collect();
                scales.push(quantize_into(&normalised(&row).unwrap(), &mut codes));
            }
            let mut signs = Signs::default();
            signs.keep(dim, &codes, &scales);
            for direction in [1.0f32, -1.0] {
                let query = signs.query(&normalised(&vec![direction; dim]).unwrap());
                let bits = |v: Vec<(f32, usize)>| v.into_iter().map(|(e, s)| (e.to_bits(), s)).collect::<Vec<_>>();
                let mut blocks = Shortlist::new(n);
                signs.screen_blocks(&query, 0..n, |_| u64::MAX, &mut blocks);
                let mut rows = Shortlist::new(n);
                signs.screen(&query, (0..n).map(|s| (s as Ordinal, s)), false, &mut rows);
                assert_eq!(bits(blocks.into_sorted()), bits(rows.into_sorted()), "dim {dim}, direction {direction}");
            }
        }
    }

    /// The estimates of every build are the portable loop's, bit for bit, at dimensions below,
    /// at and past a word boundary; the shortlist is the best rows by them whatever the order
    /// they come in; and the estimate tracks the exact score.
    #[test]
    fn every_build_estimates_alike_and_the_shortlist_is_the_best() {
        for dim in [3, 64, 65, 130, 384, 512] {
            let n = 300usize;
            let (mut codes, mut scales) = (Vec::new(), Vec::new());
            let rows: Vec<Vec<f32>> = (0..n as u64).map(|i| unit(i, dim)).collect();
            for row in &rows {
                scales.push(quantize_into(row, &mut codes));
            }
            let mut signs = Signs::default();
            signs.keep(dim, &codes, &scales);
            assert_eq!(signs.factors.len(), n);
            let q = unit(10_000 + dim as u64, dim);
            let query = signs.query(&q);
            let words = signs.words;
            let planes: Vec<&[u64]> = query.planes.chunks_exact(words).collect();
            let mut portable: Vec<(f32, usize)> = (0..n)
                .map(|slot| {
                    let row = &signs.bits[slot * words..(slot + 1) * words];
                    let (mut s, mut p) = (0i64, 0i64);
                    for (w, &x) in row.iter().enumerate() {
                        p += i64::from(x.count_ones());
                        for (j, plane) in planes.iter().enumerate() {
                            s += i64::from((x & plane[w]).count_ones()) << j;
                        }
                    }
                    (signs.scaled(slot, 2 * s - 15 * p, &query), slot)
                })
                .collect();
            portable.sort_unstable_by(order);
            let bits = |v: Vec<(f32, usize)>| v.into_iter().map(|(e, s)| (e.to_bits(), s)).collect::<Vec<_>>();
            for length in [1, 7, 40, n] {
                let want = bits(portable[..length].to_vec());
                for sparse in [false, true] {
                    let mut top = Shortlist::new(length);
                    signs.screen(&query, (0..n).map(|s| (s as Ordinal, s)), sparse, &mut top);
                    assert_eq!(bits(top.into_sorted()), want, "dim {dim}, length {length}, sparse {sparse}");
                }
                // 64 at a time (from the columns where the CPU keeps them), with every slot
                // admitted and with some left out (blocks then run row by row), over all slots
                // and over a range cut inside blocks: the rows `screen` gives over the same slots.
                for (range, skip) in [(0..n, 0), (0..n, 7), (37..n - 20, 0), (37..n - 20, 5)] {
                    let admitted = |slot: usize| range.contains(&slot) && (skip == 0 || slot % skip != 3);
                    let admitted_bits =
                        |first: usize| (0..64).filter(|i| admitted(first + i)).fold(0u64, |bits, i| bits | 1 << i);
                    let mut blocks = Shortlist::new(length);
                    signs.screen_blocks(&query, range.clone(), admitted_bits, &mut blocks);
                    let mut rows = Shortlist::new(length);
                    let candidates = (0..n).filter(|&s| admitted(s)).map(|s| (s as Ordinal, s));
                    signs.screen(&query, candidates, false, &mut rows);
                    let what = format!("dim {dim}, length {length}, {range:?}, skip {skip}");
                    assert_eq!(bits(blocks.into_sorted()), bits(rows.into_sorted()), "{what}");
                }
                // Reversed, and in two halves merged: the same rows.
                let mut top = Shortlist::new(length);
                signs.screen(&query, (0..n).rev().map(|s| (s as Ordinal, s)), false, &mut top);
                assert_eq!(bits(top.into_sorted()), want, "dim {dim}, length {length}, reversed");
                let (mut a, mut b) = (Shortlist::new(length), Shortlist::new(length));
                signs.screen(&query, (0..n / 3).map(|s| (s as Ordinal, s)), false, &mut a);
                signs.screen(&query, (n / 3..n).map(|s| (s as Ordinal, s)), false, &mut b);
                assert_eq!(bits(a.merge(b).into_sorted()), want, "dim {dim}, length {length}, merged");
                // Three chunks sharing a floor, run one after another in either order or a block
                // at a time in turn: the same rows.
                let chunks = [0..n / 3, n / 3..n / 2, n / 2..n];
                let run = |order: &[usize], interleaved: bool| {
                    let floor = Floor::new();
                    let mut lists: Vec<Shortlist> = (0..3).map(|_| Shortlist::sharing(length, &floor)).collect();
                    if interleaved {
                        for first in (0..n).step_by(BLOCK) {
                            for &c in order {
                                let slots = first.max(chunks[c].start)..(first + BLOCK).min(chunks[c].end);
                                signs.screen(&query, slots.map(|s| (s as Ordinal, s)), false, &mut lists[c]);
                            }
                        }
                    } else {
                        for &c in order {
                            signs.screen(&query, chunks[c].clone().map(|s| (s as Ordinal, s)), false, &mut lists[c]);
                        }
                    }
                    let merged = lists.into_iter().reduce(Shortlist::merge).unwrap();
                    bits(merged.into_sorted())
                };
                for (order, interleaved) in [([0, 1, 2], false), ([2, 1, 0], false), ([1, 2, 0], true)] {
                    assert_eq!(run(&order, interleaved), want, "dim {dim}, length {length}, {order:?} sharing a floor");
                }
            }
            if dim >= 64 {
                // The estimate orders rows roughly as the score does: the best row by score is
                // in the estimate's better half.
                let best = (0..n)
                    .max_by(|&a, &b| crate::distance::dot(&q, &rows[a]).total_cmp(&crate::distance::dot(&q, &rows[b])))
                    .unwrap();
                let rank = portable.iter().position(|&(_, s)| s == best).unwrap();
                assert!(rank < n / 2, "dim {dim}: the best row ranks {rank} of {n}");
            }
        }
    }
}
