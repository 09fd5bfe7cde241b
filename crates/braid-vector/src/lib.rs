//! Braid's vector leg: a store of unit vectors over record ordinals, searched within the
//! request's [`braid_core::AllowedSet`].
//!
//! [`VectorStore`] keeps every vector in a dense arena (the source of truth), as f32 or as
//! int8 codes with a scale per vector ([`Quantization`]), and indexes it with an HNSW graph of
//! Braid's own (`u32` neighbour lists in flat arrays, scoring through the arena, so it holds no
//! copy of the vectors). [`VectorStore::search`] either walks the graph with a filter that
//! admits only allowed, live records ([`SearchPath::Hnsw`]) or, when the allowed set is
//! smaller than [`HnswParams::exact_threshold`], scans the allowed vectors exactly
//! ([`SearchPath::Exact`]); [`VectorSearch::path`] says which ran. Deletes and replacements
//! tombstone a slot; past [`HnswParams::rebuild_tombstone_fraction`] the graph is rebuilt.
//!
//! **Invariant:** no search returns an ordinal outside the allowed set or one that was
//! deleted, whichever path runs.
//!
//! **Persistence:** [`VectorStore::save`] writes every slot's vector, the parameters and the
//! graph in one checksummed file ([`VECTORS_FILE`], format [`FORMAT_VERSION`]; temporary file,
//! fsync, rename). [`VectorStore::open`] verifies it and takes the graph as saved
//! ([`VectorStore::graph_was_loaded`]), so opening never rebuilds it. Files of format 2, whose
//! graph was an `hnsw_rs` dump beside them (Braid's graph before this one), still open: the
//! graph is rebuilt and the next save removes the dump. A store below
//! [`HnswParams::exact_threshold`] vectors keeps no graph at all (every search scans).
//!
//! **Exact scans read a sketch first:** an f32 store also keeps each vector as int8 codes with
//! a bound on their error, so a scan over many candidates scores the codes (a quarter of the
//! bytes), and the f32 rows only of the candidates those bounds cannot rule out. Its hits are
//! those of a plain f32 scan, bit for bit (`sketch.rs` has the argument and the tests).
//!
//! **Memory** ([`VectorStore::memory_bytes`]): per 384-d vector, 1,928 bytes as f32 (1,536 of
//! components, 392 of sketch; the file holds the components only) or 388 as int8, plus about
//! 140 for the graph at `m` = 16 and 17 for the slot tables.
//!
//! **Features:** `hnsw` (on by default) brings the graph. Without it the store keeps no graph
//! ([`VectorStore::has_graph`] is false, every search is [`SearchPath::Exact`], exact for any
//! allowed set), and a store saved with a graph by a build with it still opens: its graph is
//! not kept, and the next save writes none (a build with `hnsw` rebuilds it on its next open).
//!
//! **Defaults** (see [`HnswParams`]) come from `examples/recall_sweep.rs` (release build, 2
//! shared cores, m = 16, ef_construction = 200, unfiltered, times per query, f32):
//!
//! | data | ef_search 32 | 64 | 128 | 200 | 300 | exact scan |
//! |------|-----|-----|-----|-----|-----|-----|
//! | 3,000 × 384 random, recall@10 | 0.582 | 0.774 | 0.934 | 0.984 | 0.997 | 1.000 |
//! | time | 58 µs | 95 µs | 146 µs | 191 µs | 235 µs | 70 µs |
//! | 20,000 × 384 low-rank (int8), recall@10 | 0.955 | – | 1.000 | – | – | 1.000 |
//!
//! On the 20,000 low-rank vectors (int8, `ef_search` 128), forcing the graph at 1 %, 10 %,
//! 50 % and 100 % of records allowed took 17.7, 7.6, 2.6 and 0.5 ms against 0.16, 1.0–1.6,
//! 3.1 and 1.4 ms for the exact scan: the filtered walk explores far when few records pass,
//! and the scan's cost is linear in the allowed set, so the crossover lies near 10,000–20,000
//! allowed records, where [`HnswParams::exact_threshold`] is set.
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
mod rows;
mod scan;
mod search;
mod sketch;
mod store;

pub use params::{HnswParams, Quantization};
pub use persist::{FORMAT_VERSION, VECTORS_FILE};
pub use search::{SearchPath, VectorSearch};
pub use store::VectorStore;
