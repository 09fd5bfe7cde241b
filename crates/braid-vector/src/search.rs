//! What a vector search returns, and the top-k selection both paths share.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use braid_core::Ordinal;

/// Which path answered a vector search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SearchPath {
    /// The filtered HNSW graph (approximate).
    Hnsw,
    /// A brute-force scan over the allowed live vectors (exact).
    Exact,
    /// A scan screened by the vectors' sign bits: every allowed vector's estimate, then the
    /// int8 score of the best few hundred (approximate; see the crate docs).
    Screened,
}

impl SearchPath {
    /// A stable lowercase name for stats and logs: `"hnsw"`, `"exact"` or `"screened"`.
    pub fn name(self) -> &'static str {
        match self {
            SearchPath::Hnsw => "hnsw",
            SearchPath::Exact => "exact",
            SearchPath::Screened => "screened",
        }
    }
}

/// The answer of [`crate::VectorStore::search`].
#[derive(Debug, Clone, PartialEq)]
pub struct VectorSearch {
    /// `(ordinal, score)` pairs, best first; the score is the dot product of the normalised
    /// query and the stored vector (cosine similarity). Ties go to the smaller ordinal.
    pub hits: Vec<(Ordinal, f32)>,
    /// Which path produced the hits.
    pub path: SearchPath,
}

/// A hit ordered so that the *worst* hit is the greatest (for a bounded max-heap).
#[derive(Debug, Clone, Copy)]
struct Worst(Ordinal, f32);

impl PartialEq for Worst {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Worst {}
impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl std::cmp::Ord for Worst {
    fn cmp(&self, other: &Self) -> Ordering {
        better(&(self.0, self.1), &(other.0, other.1))
    }
}

/// Ranking order: higher score first, then smaller ordinal. `Less` means `a` ranks first.
pub(crate) fn better(a: &(Ordinal, f32), b: &(Ordinal, f32)) -> Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
}

/// Keeps the best `k` records of a stream of hits, then returns them best first.
///
/// Consecutive hits of one ordinal (a record's passages, which the store keeps in adjacent
/// slots and every walk offers one after another) count as one hit with the best of their
/// scores, so a record takes at most one of the `k` places.
pub(crate) struct TopK {
    k: usize,
    heap: BinaryHeap<Worst>,
    /// The ordinal being offered and its best score so far, not yet in `heap`.
    current: Option<(Ordinal, f32)>,
}

impl TopK {
    pub(crate) fn new(k: usize) -> Self {
        TopK { k, heap: BinaryHeap::with_capacity(k.saturating_add(1).min(4096)), current: None }
    }

    #[inline]
    pub(crate) fn push(&mut self, ord: Ordinal, score: f32) {
        match &mut self.current {
            Some((current, best)) if *current == ord => {
                if score > *best {
                    *best = score;
                }
            }
            current => {
                if let Some((done, best)) = current.replace((ord, score)) {
                    self.offer(done, best);
                }
            }
        }
    }

    #[inline]
    fn offer(&mut self, ord: Ordinal, score: f32) {
        if self.k == 0 {
            return;
        }
        let hit = Worst(ord, score);
        if self.heap.len() < self.k {
            self.heap.push(hit);
        } else if let Some(mut worst) = self.heap.peek_mut() {
            if hit < *worst {
                // Replaced in place: one sift down, not a pop and a push.
                *worst = hit;
            }
        }
    }

    /// How many records it keeps.
    pub(crate) fn k(&self) -> usize {
        self.k
    }

    /// A score every record offered from now on must reach to enter: the worst kept one once
    /// `k` records are kept (the record still being offered aside), else −∞.
    #[inline]
    pub(crate) fn floor(&self) -> f32 {
        match self.heap.peek() {
            Some(Worst(_, score)) if self.heap.len() >= self.k => *score,
            _ => f32::NEG_INFINITY,
        }
    }

    /// The `k`-th best score offered, or −∞ when fewer than `k` records were.
    pub(crate) fn kth_score(self) -> f32 {
        let k = self.k;
        let sorted = self.into_sorted();
        if k > 0 && sorted.len() >= k {
            sorted[k - 1].1
        } else {
            f32::NEG_INFINITY
        }
    }

    pub(crate) fn into_sorted(mut self) -> Vec<(Ordinal, f32)> {
        if let Some((ord, best)) = self.current.take() {
            self.offer(ord, best);
        }
        // `into_sorted_vec` is ascending, and ascending `Worst` is best first.
        self.heap.into_sorted_vec().into_iter().map(|Worst(o, s)| (o, s)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topk_keeps_best_and_breaks_ties_by_ord() {
        let mut top = TopK::new(3);
        for (o, s) in [(5, 0.1), (1, 0.9), (7, 0.5), (2, 0.5), (9, -1.0), (3, 0.5)] {
            top.push(o, s);
        }
        assert_eq!(top.into_sorted(), vec![(1, 0.9), (2, 0.5), (3, 0.5)]);
        let mut none = TopK::new(0);
        none.push(1, 1.0);
        assert!(none.into_sorted().is_empty());
    }

    #[test]
    fn topk_counts_a_run_of_one_ordinal_once_with_its_best_score() {
        let mut top = TopK::new(2);
        for (o, s) in [(4, 0.2), (4, 0.8), (4, 0.1), (6, 0.5), (6, 0.7), (1, 0.6)] {
            top.push(o, s);
        }
        assert_eq!(top.into_sorted(), vec![(4, 0.8), (6, 0.7)]);
    }

    #[test]
    fn path_names() {
        assert_eq!(SearchPath::Hnsw.name(), "hnsw");
        assert_eq!(SearchPath::Exact.name(), "exact");
    }
}
