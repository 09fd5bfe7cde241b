//! The graph without the `hnsw` feature: there is none. [`Graph`] has no values, so a
//! store's `Option<Graph>` is always `None`: every search is the exact scan, and the methods
//! below (which the store calls only on a graph it holds) can never run.

use braid_core::Result;

use crate::log::GraphPatch;
use crate::persist::GraphParts;
use crate::rows::{Query, Rows};

/// Links prepared for no graph: there are none.
#[derive(Debug, Default)]
pub(crate) struct Prepared;

/// No graph: an uninhabited type standing where the HNSW graph is with the `hnsw` feature.
pub(crate) enum Graph {}

impl Graph {
    pub(crate) fn points(&self) -> usize {
        match *self {}
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        match *self {}
    }

    pub(crate) fn huge_page_regions(&self) -> Vec<crate::huge_pages::Region> {
        match *self {}
    }

    pub(crate) fn parts(&self) -> GraphParts {
        match *self {}
    }

    pub(crate) fn insert_from(&mut self, _rows: &Rows, _from: usize, _to: usize, _present: &dyn Fn(usize) -> bool) {
        match *self {}
    }

    pub(crate) fn prepare(&self, _rows: &Rows, _from: usize, _to: usize, _present: &dyn Fn(usize) -> bool) -> Prepared {
        match *self {}
    }

    pub(crate) fn link_one(
        &mut self,
        _rows: &Rows,
        _prepared: &mut Prepared,
        _present: &dyn Fn(usize) -> bool,
    ) -> bool {
        match *self {}
    }

    pub(crate) fn search(
        &self,
        _rows: &Rows,
        _query: &Query,
        _ef: usize,
        _keep: &dyn Fn(usize) -> bool,
    ) -> Vec<(usize, f32)> {
        match *self {}
    }

    pub(crate) fn changes(&self, _points_before: usize) -> GraphPatch {
        match *self {}
    }

    pub(crate) fn forget_changes(&self) {
        match *self {}
    }

    pub(crate) fn apply(&mut self, _patch: GraphPatch) -> Result<()> {
        match *self {}
    }
}
