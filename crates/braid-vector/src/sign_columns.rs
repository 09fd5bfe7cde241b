//! The sign bits of an int8 arena a second time, in columns: 64 rows a block, byte by byte, so
//! a screened scan estimates a block's 64 rows at once by table lookups rather than a row at
//! a time by popcounts (Faiss's and RaBitQ's "fast scan").
//!
//! A row's estimate is the integer `Σ β_i (2u_i − 15)` ([`crate::signs`]: `β` the row's sign
//! bits, `u` the query's four-bit codes), which [`crate::signs::Signs`] counts with popcounts
//! over the row's words. Cut the dimensions into nibbles of four: a nibble's share of the sum
//! depends only on the row's four bits there, so the query makes one table of 16 entries a
//! nibble ([`Tables`]), and a row's sum is the sum of one entry a nibble. AVX-512's byte
//! shuffle looks 64 entries up in one instruction when the 64 indexes lie side by side, which
//! is what the columns hold: byte `p` of a block's 64 rows, then byte `p + 1`, … The sums are
//! the same integers as the popcounts', so every row keeps its estimate bit for bit (tested in
//! [`crate::signs`]).
//!
//! The columns cost a second copy of the bits (48 bytes a row at 384 dimensions); the rows'
//! own copy stays for scans of rows far apart, where a row's bytes lie together.

/// Rows a block holds: one bit each in a `u64` mask.
pub(crate) const BLOCK_ROWS: usize = 64;

/// The largest share of one byte of a row in its sum, either way: two nibbles of `4 · 15`.
const MAX_BYTE_SUM: usize = 120;

/// The bits in column blocks (empty where the CPU cannot scan them).
#[derive(Debug, Clone, Default)]
pub(crate) struct Columns {
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
        let row_bytes = words * 8;
        (available() && row_bytes * MAX_BYTE_SUM <= i16::MAX as usize).then_some(Columns {
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
        // SAFETY: `Columns` exist only where `available` said the CPU has the kernel's features;
        // the column holds `row_bytes` runs of 64 bytes and the tables two entries each
        // (asserted above).
        unsafe {
            estimates_avx512(column, &tables.wide, factors, constant, floor, out)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (column, factors, constant, floor, out);
            unreachable!("columns are never made off x86-64")
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

/// Whether the CPU runs the column kernel (AVX-512 F and BW).
fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512bw")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
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
