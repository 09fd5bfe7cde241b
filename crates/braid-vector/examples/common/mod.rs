//! What the store's timing examples share: a seeded generator of vectors and a percentile.

/// A seeded generator (SplitMix64), so runs are repeatable without extra crates.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A vector of `dim` components, each uniform in `[-0.5, 0.5)`.
    pub fn vector(&mut self, dim: usize) -> Vec<f32> {
        (0..dim).map(|_| (self.next() >> 40) as f32 / (1u64 << 24) as f32 - 0.5).collect()
    }
}

/// The `p`-th percentile (`0.0..=1.0`) of ascending `sorted`, nearest rank.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Commit `c` of a run over `tenants` tenants (ordinal `o` belongs to tenant `o % tenants`; the
/// commits take the tenants in turn): ten new ordinals of that tenant from `next`, which moves
/// past them, and ten of its oldest ordinals for the commit to delete.
#[allow(dead_code)] // commit_cost, which includes this module too, has no tenants
pub fn commit_ords(c: u64, tenants: u64, next: &mut u64) -> (Vec<u64>, Vec<u64>) {
    let who = c % tenants;
    let fresh = (0..10).map(|i| *next + i * tenants + who).collect();
    *next += 10 * tenants;
    let old = (0..10).map(|i| (c / tenants * 10 + i) * tenants + who).collect();
    (fresh, old)
}
