//! The HNSW graph over slots: a thin wrapper around `hnsw_rs` whose data ids are slot indices.

use std::path::Path;

use braid_core::{Error, Result};
use hnsw_rs::api::AnnT;
use hnsw_rs::hnswio::HnswIo;
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

    /// Writes the graph as `hnsw_rs` dumps it (`<basename>.hnsw.graph` and `.hnsw.data` in
    /// `dir`); returns the basename it used (hnsw_rs may add a suffix to avoid overwriting).
    pub(crate) fn dump(&self, dir: &Path, basename: &str) -> Result<String> {
        let dumped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.hnsw.file_dump(dir, basename)));
        match dumped {
            Ok(Ok(name)) => Ok(name),
            Ok(Err(e)) => Err(Error::Vector(format!("dumping the graph into {}: {e}", dir.display()))),
            Err(_) => Err(Error::Vector(format!(
                "dumping the graph into {}: hnsw_rs could not open its files",
                dir.display()
            ))),
        }
    }

    /// Loads a dump written by [`Graph::dump`] that holds `points` points. The caller has
    /// verified the files' checksums: hnsw_rs asserts on what it reads, so it must only read
    /// files known to be the ones written.
    pub(crate) fn load(dir: &Path, basename: &str, points: usize) -> Result<Self> {
        // hnsw_rs ties a reloaded graph's lifetime to its loader (for memory-mapped data,
        // which Braid does not use): the loader, a directory path and a name, is leaked once
        // per open so the graph can be 'static like a built one.
        let loader: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(dir, basename)));
        let mut once = Some(loader);
        let loaded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match once.take() {
            Some(loader) => reload(loader),
            None => Err("the loader was used twice".to_string()),
        }));
        let mut hnsw = match loaded {
            Ok(Ok(hnsw)) => hnsw,
            Ok(Err(e)) => return Err(Error::Vector(format!("loading the graph {basename}: {e}"))),
            Err(_) => return Err(Error::Vector(format!("loading the graph {basename}: hnsw_rs rejected the dump"))),
        };
        if hnsw.get_nb_point() != points {
            return Err(Error::Vector(format!(
                "the graph {basename} holds {} points, its vector file says {points}",
                hnsw.get_nb_point()
            )));
        }
        hnsw.set_searching_mode(false);
        Ok(Graph { hnsw, points })
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

/// Reloads a dump through a loader that lives for the rest of the process.
fn reload(loader: &'static mut HnswIo) -> std::result::Result<Hnsw<'static, f32, DotDistance>, String> {
    loader.load_hnsw::<f32, DotDistance>().map_err(|e| e.to_string())
}
