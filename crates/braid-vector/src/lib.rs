//! Braid's vector leg: a store of unit vectors over record ordinals, searched within the
//! request's [`braid_core::AllowedSet`].
//!
//! [`VectorStore`] keeps every vector in a dense arena (the source of truth) and indexes it
//! with an HNSW graph from `hnsw_rs`. [`VectorStore::search`] either walks the graph with a
//! filter that admits only allowed, live records ([`SearchPath::Hnsw`]) or, when the allowed
//! set is smaller than [`HnswParams::exact_threshold`], scans the allowed vectors exactly
//! ([`SearchPath::Exact`]); [`VectorSearch::path`] says which ran. Deletes and replacements
//! tombstone a slot; past [`HnswParams::rebuild_tombstone_fraction`] the graph is rebuilt.
//!
//! **Invariant:** no search returns an ordinal outside the allowed set or one that was
//! deleted, whichever path runs.
//!
//! **Persistence:** [`VectorStore::save`] writes the live vectors by slot and the parameters
//! in one checksummed file ([`VECTORS_FILE`], format [`FORMAT_VERSION`]) and, once the store
//! has a graph, `hnsw_rs`'s dump of it beside that file (two files whose checksums the vector
//! file records; each save dumps under a new name, fsyncs, renames the vector file, then removes
//! older dumps). [`VectorStore::open`] verifies all three and loads the graph instead of
//! rebuilding it ([`VectorStore::graph_was_loaded`]); before, opening rebuilt the graph: 3.9 s
//! for 5,000 × 384 random vectors, 22 s for 20,000 low-rank ones, on 2 busy cores in release.
//! `hnsw_rs` ties a reloaded graph's lifetime to its loader, so each open leaks one loader (a
//! path and a name). A store below [`HnswParams::exact_threshold`] vectors keeps no graph at
//! all (every search scans), so it saves none either.
//!
//! **Features:** `hnsw` (on by default) brings the graph and `hnsw_rs`. Without it the store
//! keeps no graph ([`VectorStore::has_graph`] is false, every search is
//! [`SearchPath::Exact`], exact for any allowed set), and a store saved with a graph by a
//! build with it still opens: the vector file is read and checked as always, the graph dump
//! it names is not read, and the next save writes no graph and removes the dump (a build
//! with `hnsw` rebuilds the graph on its next open, as for a store saved without one).
//!
//! **Defaults** (see [`HnswParams`]) come from `examples/recall_sweep.rs` (release build,
//! 2 shared cores, m = 16, ef_construction = 200, filtered search, times per query):
//!
//! | data | ef_search 16 | 32 | 64 | 128 | 200 | exact scan |
//! |------|-----|-----|-----|-----|-----|-----|
//! | 5,000 × 384 random, recall@10 | 0.658 | 0.863 | 0.972 | 0.995 | 1.000 | 1.000 |
//! | time | 2.3 ms | 4.1 ms | 3.3 ms | 2.8 ms | 3.4 ms | 0.3–0.8 ms |
//! | 20,000 × 384 low-rank, recall@10 | 0.962 | 0.994 | 0.998 | 1.000 | 1.000 | 1.000 |
//! | time | 2.1 ms | 3.1 ms | 3.7 ms | 4.9 ms | 5.9 ms | 1.7–2.7 ms |
//!
//! On 20,000 × 384 vectors at `ef_search` 128, forcing the graph at 1 %, 10 %, 50 % and
//! 100 % of records allowed took 53, 14, 7 and 4.9 ms against 0.16, 1.1, 2.8 and 2.5 ms for
//! the exact scan: `hnsw_rs`'s filtered search explores far when few records pass, and the
//! scan's cost is linear in the allowed set, so the crossover lies beyond 20,000 allowed
//! records, where [`HnswParams::exact_threshold`] is set.
//!
//! ```
//! use braid_core::{AccessPolicy, AllowedSet, OrdSet, Principal, Visibility};
//! use braid_vector::{HnswParams, VectorStore};
//!
//! # fn main() -> braid_core::Result<()> {
//! let mut store = VectorStore::new(2, HnswParams::default());
//! store.insert_batch(&[(1, vec![1.0, 0.0]), (2, vec![0.0, 1.0]), (3, vec![0.7, 0.7])])?;
//! store.delete(3);
//!
//! let everyone = Visibility::new(Principal::public(), AccessPolicy::Public, None);
//! let allowed = AllowedSet::new(everyone, (1..=3).collect::<OrdSet>());
//! let found = store.search(&[0.9, 0.1], 10, &allowed)?;
//! assert_eq!(found.hits.iter().map(|h| h.0).collect::<Vec<_>>(), [1, 2]); // 3 is deleted
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

mod distance;
#[cfg(feature = "hnsw")]
mod graph;
#[cfg(not(feature = "hnsw"))]
#[path = "no_graph.rs"]
mod graph;
mod params;
mod persist;
mod scan;
mod search;
mod store;

pub use params::HnswParams;
pub use persist::{FORMAT_VERSION, VECTORS_FILE};
pub use search::{SearchPath, VectorSearch};
pub use store::VectorStore;
