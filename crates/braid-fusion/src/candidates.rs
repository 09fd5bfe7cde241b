//! The fused candidates of one request while the legs' lists are read: one [`Fused`] per
//! ordinal, in the order first met, found through a hash of the ordinal.
//!
//! Fusion runs on every request over a few hundred candidates, so what it allocates is sized
//! once from the lists' lengths, and ordinals (small integers the index assigns, not user
//! input) are hashed with `rustc-hash` rather than SipHash.

use rustc_hash::{FxHashMap, FxHashSet};

use braid_core::Ordinal;

use crate::{Fused, LegList, LegScores};

/// The candidates met so far and, per candidate, a value the method accumulates beside it.
pub(crate) struct Candidates<T> {
    slots: FxHashMap<Ordinal, usize>,
    fused: Vec<(Fused, T)>,
}

impl<T: Default> Candidates<T> {
    /// Room for every candidate of `lists` (at most the sum of their lengths).
    pub(crate) fn for_lists(lists: &[LegList]) -> Self {
        let most = lists.iter().map(|l| l.candidates.len()).sum();
        let mut slots = FxHashMap::default();
        slots.reserve(most);
        Candidates { slots, fused: Vec::with_capacity(most) }
    }

    /// `ord`'s candidate, made (score 0, no legs yet) the first time it is met.
    pub(crate) fn entry(&mut self, ord: Ordinal) -> &mut (Fused, T) {
        let next = self.fused.len();
        let slot = *self.slots.entry(ord).or_insert(next);
        if slot == next {
            self.fused.push((Fused { ord, score: 0.0, legs: LegScores::new() }, T::default()));
        }
        &mut self.fused[slot]
    }

    /// Every candidate with its accumulated value, in the order first met.
    pub(crate) fn into_vec(self) -> Vec<(Fused, T)> {
        self.fused
    }
}

/// `list`'s candidates with each ordinal at its first (best) place only.
pub(crate) fn firsts(list: &LegList) -> Vec<(Ordinal, f32)> {
    let mut seen = FxHashSet::default();
    seen.reserve(list.candidates.len());
    list.candidates.iter().copied().filter(|(o, _)| seen.insert(*o)).collect()
}
