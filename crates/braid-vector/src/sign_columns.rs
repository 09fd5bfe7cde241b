//! The sign bits of an int8 arena a second time, in columns: 64 rows a block, byte by byte, so
//! a screened scan estimates a block's 64 rows at once by table lookups rather than a row at
//! a time by popcounts (Faiss's and RaBitQ's "fast scan").
//!
//! A row's estimate is the integer `Σ β_i (2u_i − 15)` ([`crate::signs`]: `β` the row's sign
//! bits, `u` the query's four-bit codes), which [`crate::signs::Signs`] counts with popcounts
//! over the row's words. Cut the dimensions into nibbles of four: a nibble's share of the sum
//! depends only on the row's four bits there, so the query makes one table of 16 entries a
//! nibble ([`Tables`]), and a row's sum is the sum of one entry a nibble. A byte shuffle looks
//! 64 entries up in one AVX-512 instruction (32 in one AVX2 instruction) when the indexes lie
//! side by side, which is what the columns hold: byte `p` of a block's 64 rows, then byte
//! `p + 1`, … The sums are the same integers as the popcounts', so every row keeps its estimate
//! bit for bit, whichever kernel runs (tested here and in [`crate::signs`]).
//!
//! The columns cost a second copy of the bits (48 bytes a row at 384 dimensions); the rows'
//! own copy stays for scans of rows far apart, where a row's bytes lie together.

/// Rows a block holds: one bit each in a `u64` mask.
pub(crate) const BLOCK_ROWS: usize = 64;

/// The largest share of one byte of a row in its sum, either way: two nibbles of `4 · 15`.
const MAX_BYTE_SUM: usize = 120;

/// The bits in column blocks (empty where the CPU cannot scan them).
#[derive(Debug, Clone)]
pub(crate) struct Columns {
    /// The kernel that estimates a block.
    kernel: Kernel,
    /// Bytes of one row's bits (its words times eight).
    row_bytes: usize,
    /// Rows pushed.
    rows: usize,
    /// Block-major; in a block, byte `p` of its 64 rows, then byte `p + 1`. A block's rows not
    /// pushed yet are zero.
    bytes: Vec<u8>,
}

impl Columns {
    /// Columns for rows of `words` words, none yet; `None` where the CPU cannot scan them or
    /// a row's sum could overflow the kernel's 16 bits (past 2,176 dimensions).
    pub(crate) fn new(words: usize) -> Option<Self> {
        Columns::with_kernel(Kernel::detect()?, words)
    }

    /// [`Columns::new`] with `kernel`, which the CPU must run (see [`Kernel::detect`]).
    fn with_kernel(kernel: Kernel, words: usize) -> Option<Self> {
        let row_bytes = words * 8;
        (row_bytes * MAX_BYTE_SUM <= i16::MAX as usize).then_some(Columns {
            kernel,
            row_bytes,
            rows: 0,
            bytes: Vec::new(),
        })
    }

    /// Room for `rows` more rows.
    pub(crate) fn reserve(&mut self, rows: usize) {
        let blocks = (self.rows + rows).div_ceil(BLOCK_ROWS);
        self.bytes.reserve_exact((blocks * self.block_bytes()).saturating_sub(self.bytes.len()));
    }

    /// Bytes a push of `rows` more rows adds.
    fn bytes_for(&self, rows: usize) -> usize {
        ((self.rows + rows).div_ceil(BLOCK_ROWS) * self.block_bytes()).saturating_sub(self.bytes.len())
    }

    /// Whether a push of `rows` more rows would grow the columns.
    pub(crate) fn lacks_room(&self, rows: usize) -> bool {
        crate::room::lacks_room(&self.bytes, self.bytes_for(rows))
    }

    /// A copy with room for `rows` more rows ([`crate::room`]).
    pub(crate) fn with_room(&self, rows: usize) -> Columns {
        Columns { bytes: crate::room::copy_with_room(&self.bytes, self.bytes_for(rows)), ..*self }
    }

    /// Appends a row's bits.
    pub(crate) fn push(&mut self, words: &[u64]) {
        let (block, row) = (self.rows / BLOCK_ROWS, self.rows % BLOCK_ROWS);
        if row == 0 {
            self.bytes.resize(self.bytes.len() + self.block_bytes(), 0);
        }
        let block_bytes = self.block_bytes();
        let column = &mut self.bytes[block * block_bytes..(block + 1) * block_bytes];
        for (p, byte) in words.iter().flat_map(|w| w.to_le_bytes()).enumerate() {
            column[p * BLOCK_ROWS + row] = byte;
        }
        self.rows += 1;
    }

    /// The columns' whole huge pages ([`crate::huge_pages`]).
    pub(crate) fn huge_page_region(&self) -> Option<crate::huge_pages::Region> {
        crate::huge_pages::Region::of(&self.bytes)
    }

    /// Bytes held in memory.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.bytes.capacity()
    }

    fn block_bytes(&self) -> usize {
        self.row_bytes * BLOCK_ROWS
    }

    /// The estimates of block `block`'s 64 rows into `out`, `factors[i] · (sum_i + constant)`
    /// with `sum_i` row `i`'s integer `Σ β_i (2u_i − 15)` (as [`crate::signs::Signs`] scales
    /// it, the same float operations in the same order); returns the rows whose estimate is at
    /// least `floor`, bit `i` for row `i`.
    pub(crate) fn estimates(
        &self,
        tables: &Tables,
        block: usize,
        factors: &[f32],
        constant: f32,
        floor: f32,
        out: &mut [f32; BLOCK_ROWS],
    ) -> u64 {
        let start = block * self.block_bytes();
        let column = &self.bytes[start..start + self.block_bytes()];
        assert_eq!(tables.wide.len(), 2 * self.row_bytes, "tables of another width");
        let factors: &[f32; BLOCK_ROWS] = factors.try_into().expect("a factor for each row of the block");
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Columns` hold only a kernel `Kernel::detect` found the CPU's features for;
        // the column holds `row_bytes` runs of 64 bytes and the tables two entries each
        // (asserted above).
        unsafe {
            match self.kernel {
                Kernel::Avx512 => estimates_avx512(column, &tables.wide, factors, constant, floor, out),
                Kernel::Avx2 => estimates_avx2(column, &tables.wide, factors, constant, floor, out),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (column, factors, constant, floor, out);
            match self.kernel {}
        }
    }
}

/// The query's tables: for each nibble of dimensions, the sum `Σ (2u_i − 15)` over the bits of
/// each of the 16 nibble values, repeated four times to fill a 64-byte register.
#[derive(Debug, Clone)]
pub(crate) struct Tables {
    /// Nibble `2p` is byte `p`'s low four bits, nibble `2p + 1` its high four.
    wide: Vec<[i8; 64]>,
}

impl Tables {
    /// The tables of a query of four-bit codes `codes` (one a dimension), for rows of `words`
    /// words. Dimensions past the codes count nothing (their bits are never set).
    pub(crate) fn new(codes: &[u8], words: usize) -> Self {
        let wide = (0..words * 16)
            .map(|nibble| {
                let mut table = [0i8; 16];
                for (value, entry) in table.iter_mut().enumerate() {
                    let sum: i32 = (0..4)
                        .filter(|bit| value >> bit & 1 == 1)
                        .filter_map(|bit| codes.get(nibble * 4 + bit))
                        .map(|&u| 2 * i32::from(u) - 15)
                        .sum();
                    // |sum| ≤ 4 · 15.
                    *entry = sum as i8;
                }
                let mut wide = [0i8; 64];
                for lane in wide.chunks_exact_mut(16) {
                    lane.copy_from_slice(&table);
                }
                wide
            })
            .collect();
        Tables { wide }
    }
}

/// A kernel of [`Columns::estimates`]: the instructions it is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kernel {
    /// AVX-512 F and BW: 64 rows a shuffle.
    #[cfg(target_arch = "x86_64")]
    Avx512,
    /// AVX2: 32 rows a shuffle.
    #[cfg(target_arch = "x86_64")]
    Avx2,
}

impl Kernel {
    /// The fastest kernel the CPU runs; `None` where it runs none (then a scan estimates row
    /// by row).
    fn detect() -> Option<Kernel> {
        Kernel::available().into_iter().next()
    }

    /// Every kernel the CPU runs, fastest first.
    fn available() -> Vec<Kernel> {
        #[allow(unused_mut)]
        let mut kernels = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512bw") {
                kernels.push(Kernel::Avx512);
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                kernels.push(Kernel::Avx2);
            }
        }
        kernels
    }
}

/// [`Columns::estimates`]'s kernel: per byte of the rows, each row's two nibbles looked up in
/// their tables (64 rows a shuffle), the two entries added in bytes (at most 120 either way),
/// and the bytes widened into 16-bit sums (at most 5,760 either way at 384 dimensions;
/// [`Columns::new`] keeps rows within 16 bits); then each sum scaled and compared, 16 rows at a
/// time.
///
/// # Safety
///
/// The CPU must support AVX-512 F and BW; `column` must hold `tables.len() / 2` runs of 64
/// bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn estimates_avx512(
    column: &[u8],
    tables: &[[i8; 64]],
    factors: &[f32; BLOCK_ROWS],
    constant: f32,
    floor: f32,
    out: &mut [f32; BLOCK_ROWS],
) -> u64 {
    use std::arch::x86_64::{
        _mm512_add_epi16, _mm512_add_epi8, _mm512_add_ps, _mm512_and_si512, _mm512_castsi512_si256, _mm512_cmp_ps_mask,
        _mm512_cvtepi16_epi32, _mm512_cvtepi32_ps, _mm512_cvtepi8_epi16, _mm512_extracti64x4_epi64, _mm512_loadu_ps,
        _mm512_loadu_si512, _mm512_mul_ps, _mm512_set1_epi8, _mm512_set1_ps, _mm512_setzero_si512, _mm512_shuffle_epi8,
        _mm512_srli_epi16, _mm512_storeu_ps, _CMP_GE_OQ,
    };
    let low = _mm512_set1_epi8(0x0f);
    let (mut first, mut second) = (_mm512_setzero_si512(), _mm512_setzero_si512());
    for (bytes, pair) in column.chunks_exact(BLOCK_ROWS).zip(tables.chunks_exact(2)) {
        // SAFETY: each load reads 64 bytes of a 64-byte slice.
        let (v, t0, t1) = unsafe {
            (
                _mm512_loadu_si512(bytes.as_ptr().cast()),
                _mm512_loadu_si512(pair[0].as_ptr().cast()),
                _mm512_loadu_si512(pair[1].as_ptr().cast()),
            )
        };
        let lo = _mm512_and_si512(v, low);
        let hi = _mm512_and_si512(_mm512_srli_epi16::<4>(v), low);
        let both = _mm512_add_epi8(_mm512_shuffle_epi8(t0, lo), _mm512_shuffle_epi8(t1, hi));
        first = _mm512_add_epi16(first, _mm512_cvtepi8_epi16(_mm512_castsi512_si256(both)));
        second = _mm512_add_epi16(second, _mm512_cvtepi8_epi16(_mm512_extracti64x4_epi64::<1>(both)));
    }
    let sums = [
        _mm512_castsi512_si256(first),
        _mm512_extracti64x4_epi64::<1>(first),
        _mm512_castsi512_si256(second),
        _mm512_extracti64x4_epi64::<1>(second),
    ];
    let (constant, floor) = (_mm512_set1_ps(constant), _mm512_set1_ps(floor));
    let mut at_least = 0u64;
    for (i, sum) in sums.into_iter().enumerate() {
        // SAFETY: each load and store covers 16 floats of 64.
        unsafe {
            let factor = _mm512_loadu_ps(factors.as_ptr().add(16 * i));
            let estimate =
                _mm512_mul_ps(factor, _mm512_add_ps(_mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(sum)), constant));
            _mm512_storeu_ps(out.as_mut_ptr().add(16 * i), estimate);
            at_least |= u64::from(_mm512_cmp_ps_mask::<_CMP_GE_OQ>(estimate, floor)) << (16 * i);
        }
    }
    at_least
}

/// [`estimates_avx512`] in AVX2: per byte of the rows, 32 rows a shuffle (the 16-entry tables
/// fill a 128-bit lane, so the first 32 bytes of a wide table serve), the two entries added in
/// bytes and widened into 16-bit sums, 16 rows to a register; then each sum scaled and
/// compared, 8 rows at a time. The same integers and the same float operations as the other
/// kernels, so the same bits.
///
/// # Safety
///
/// The CPU must support AVX2; `column` must hold `tables.len() / 2` runs of 64 bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn estimates_avx2(
    column: &[u8],
    tables: &[[i8; 64]],
    factors: &[f32; BLOCK_ROWS],
    constant: f32,
    floor: f32,
    out: &mut [f32; BLOCK_ROWS],
) -> u64 {
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi16, _mm256_add_epi8, _mm256_add_ps, _mm256_and_si256, _mm256_castsi256_si128,
        _mm256_cmp_ps, _mm256_cvtepi16_epi32, _mm256_cvtepi32_ps, _mm256_cvtepi8_epi16, _mm256_extracti128_si256,
        _mm256_loadu_ps, _mm256_loadu_si256, _mm256_movemask_ps, _mm256_mul_ps, _mm256_set1_epi8, _mm256_set1_ps,
        _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_srli_epi16, _mm256_storeu_ps, _CMP_GE_OQ,
    };
    let low = _mm256_set1_epi8(0x0f);
    // Rows 0–15, 16–31, 32–47 and 48–63.
    let mut sums = [_mm256_setzero_si256(); 4];
    for (bytes, pair) in column.chunks_exact(BLOCK_ROWS).zip(tables.chunks_exact(2)) {
        // SAFETY: each load reads 32 bytes of a 64-byte slice.
        let (t0, t1) =
            unsafe { (_mm256_loadu_si256(pair[0].as_ptr().cast()), _mm256_loadu_si256(pair[1].as_ptr().cast())) };
        for (half, sums) in sums.chunks_exact_mut(2).enumerate() {
            // SAFETY: as above, the first or the second 32 of the 64 bytes.
            let v = unsafe { _mm256_loadu_si256(bytes.as_ptr().add(32 * half).cast::<__m256i>()) };
            let lo = _mm256_and_si256(v, low);
            let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(v), low);
            let both = _mm256_add_epi8(_mm256_shuffle_epi8(t0, lo), _mm256_shuffle_epi8(t1, hi));
            sums[0] = _mm256_add_epi16(sums[0], _mm256_cvtepi8_epi16(_mm256_castsi256_si128(both)));
            sums[1] = _mm256_add_epi16(sums[1], _mm256_cvtepi8_epi16(_mm256_extracti128_si256::<1>(both)));
        }
    }
    let (constant, floor) = (_mm256_set1_ps(constant), _mm256_set1_ps(floor));
    let mut at_least = 0u64;
    let eights = sums.into_iter().flat_map(|s| [_mm256_castsi256_si128(s), _mm256_extracti128_si256::<1>(s)]);
    for (i, sum) in eights.enumerate() {
        // SAFETY: each load and store covers 8 floats of 64.
        unsafe {
            let factor = _mm256_loadu_ps(factors.as_ptr().add(8 * i));
            let estimate =
                _mm256_mul_ps(factor, _mm256_add_ps(_mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(sum)), constant));
            _mm256_storeu_ps(out.as_mut_ptr().add(8 * i), estimate);
            let at = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_GE_OQ>(estimate, floor));
            at_least |= u64::from(at as u8) << (8 * i);
        }
    }
    at_least
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic stream of bits.
    fn bits(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// Every kernel the CPU runs gives each row of a block the estimate of its sum counted bit
    /// by bit, and flags the rows at or above the floor: over random rows and queries, and at
    /// the extreme sums (every bit set or none against all-top or all-bottom codes), at 384
    /// dimensions and at the widest rows the columns hold.
    #[test]
    fn every_kernel_estimates_as_the_bits_count() {
        for words in [6, 34] {
            let dim = words * 64;
            let mut next = bits(words as u64);
            let mut rows: Vec<Vec<u64>> = (0..2 * BLOCK_ROWS).map(|_| (0..words).map(|_| next()).collect()).collect();
            rows.extend([vec![u64::MAX; words], vec![0; words]]);
            rows.resize(3 * BLOCK_ROWS, vec![u64::MAX; words]);
            let queries: Vec<Vec<u8>> = vec![
                (0..dim).map(|_| (next() % 16) as u8).collect(),
                vec![15; dim],
                vec![0; dim],
                (0..dim - 5).map(|_| (next() % 16) as u8).collect(),
            ];
            let factors: Vec<f32> = (0..rows.len()).map(|i| 1e-3 * (1 + i % 7) as f32).collect();
            for kernel in Kernel::available() {
                let mut columns = Columns::with_kernel(kernel, words).expect("rows within 16 bits");
                rows.iter().for_each(|row| columns.push(row));
                for codes in &queries {
                    let tables = Tables::new(codes, words);
                    let constant = 7.5 * dim as f32 - codes.iter().map(|&u| f32::from(u)).sum::<f32>();
                    for block in 0..rows.len() / BLOCK_ROWS {
                        let factors = &factors[block * BLOCK_ROWS..(block + 1) * BLOCK_ROWS];
                        let want: Vec<f32> = (0..BLOCK_ROWS)
                            .map(|i| {
                                let row = &rows[block * BLOCK_ROWS + i];
                                let sum: i32 = (0..codes.len())
                                    .filter(|&d| row[d / 64] >> (d % 64) & 1 == 1)
                                    .map(|d| 2 * i32::from(codes[d]) - 15)
                                    .sum();
                                factors[i] * (sum as f32 + constant)
                            })
                            .collect();
                        let mut sorted = want.clone();
                        sorted.sort_by(f32::total_cmp);
                        for floor in [f32::NEG_INFINITY, sorted[BLOCK_ROWS / 2], f32::INFINITY] {
                            let mut out = [0f32; BLOCK_ROWS];
                            let at_least = columns.estimates(&tables, block, factors, constant, floor, &mut out);
                            let what = format!("{kernel:?}, {words} words, block {block}, floor {floor}");
                            assert_eq!(
                                out.map(f32::to_bits).to_vec(),
                                want.iter().map(|e| e.to_bits()).collect::<Vec<_>>(),
                                "{what}"
                            );
                            let flagged = (0..BLOCK_ROWS).filter(|&i| want[i] >= floor).fold(0u64, |b, i| b | 1 << i);
                            assert_eq!(at_least, flagged, "{what}");
                        }
                    }
                }
            }
        }
    }
}
