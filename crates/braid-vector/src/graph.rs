//! The HNSW graph over slots: a thin wrapper around `hnsw_rs` whose data ids are slot indices.

use hnsw_rs::prelude::Hnsw;

use crate::distance::DotDistance;
use crate::params::HnswParams;

/// Layers the graph may use (hnsw_rs caps it at 16 too).
const MAX_LAYER: usize = 16;

/// Batches smaller than this are inserted one by one: rayon's overhead is not worth it.
const PARALLEL_MIN: usize = 64;

/// An HNSW graph whose data ids are slot indices of the owning store.
///
/// The graph keeps its own copy of each vector (hnsw_rs owns its points); the store's arena
/// stays the source of truth, so the graph can be dropped and rebuilt at any time.
pub(crate) struct Graph {
    hnsw: Hnsw<'static, f32, DotDistance>,
    points: usize,
}

impl Graph {
    /// An empty graph sized for about `capacity` points.
    pub(crate) fn new(params: &HnswParams, capacity: usize) -> Self {
        let m = params.m.clamp(2, 255);
        let ef_construction = params.ef_construction.max(m);
        let hnsw = Hnsw::new(m, capacity.max(1), MAX_LAYER, ef_construction, DotDistance);
        Graph { hnsw, points: 0 }
    }

    /// Number of points inserted (live or not).
    pub(crate) fn points(&self) -> usize {
        self.points
    }

    /// Inserts `(vector, slot)` pairs, in parallel when the batch is large enough.
    pub(crate) fn insert(&mut self, items: &[(&[f32], usize)]) {
        if items.len() < PARALLEL_MIN {
            for &item in items {
                self.hnsw.insert_slice(item);
            }
        } else {
            self.hnsw.parallel_insert_slice(&items.to_vec());
        }
        self.points += items.len();
    }

    /// Up to `ef` slots near `query` that pass `keep`, nearest first (hnsw_rs's own order).
    pub(crate) fn search(&self, query: &[f32], ef: usize, keep: &dyn Fn(usize) -> bool) -> Vec<usize> {
        if self.points == 0 {
            return Vec::new();
        }
        let filter = |slot: &usize| keep(*slot);
        // Ask for `ef` neighbours, not `k`: hnsw_rs cuts to `k` before it filters, so a
        // filtered-out entry point could otherwise cost a hit. The caller truncates to `k`.
        self.hnsw
            .search_filter(query, ef, ef, Some(&filter))
            .into_iter()
            .map(|n| n.d_id)
            .filter(|&slot| keep(slot))
            .collect()
    }
}
