//! The graph without the `hnsw` feature: there is none. [`Graph`] has no values, so a
//! store's `Option<Graph>` is always `None`: every search is the exact scan, and the methods
//! below (which the store calls only on a graph it holds) can never run.

use std::path::Path;

use braid_core::Result;

/// No graph: an uninhabited type standing where `hnsw_rs`'s graph is with the `hnsw` feature.
pub(crate) enum Graph {}

impl Graph {
    pub(crate) fn dump(&self, _dir: &Path, _basename: &str) -> Result<String> {
        match *self {}
    }

    pub(crate) fn points(&self) -> usize {
        match *self {}
    }

    pub(crate) fn insert(&mut self, _items: &[(&[f32], usize)]) {
        match *self {}
    }

    pub(crate) fn search(&self, _query: &[f32], _ef: usize, _keep: &dyn Fn(usize) -> bool) -> Vec<usize> {
        match *self {}
    }
}
