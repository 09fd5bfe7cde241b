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
//! [`PartitionedStore`] keeps one such store per tenant partition — records without a tenant
//! in a shared one, small tenants together in a pool that is only scanned, each tenant past
//! [`PROMOTE_AT`] records in its own (with its own graph) — and a search visits only the
//! partitions its principal's tenants name ([`Partition`], `partitions.rs` has the rules).
//!
//! **Invariant:** no search returns an ordinal outside the allowed set or one that was
//! deleted, whichever path runs.
//!
//! **Persistence** is log-structured: a base file holds every slot's vector, the parameters
//! and the graph ([`VECTORS_FILE`], format [`FORMAT_VERSION`], one checksum; written whole by
//! [`VectorStore::merge`]: temporary file, fsync, rename), and a log beside it ([`LOG_FILE`])
//! holds a checksummed record per save of what changed since: the new slots' vectors, the
//! slots tombstoned, the graph's new points and the link lists that changed. A save appends
//! and fsyncs one record (nothing when nothing changed) and rewrites no data it did not
//! change. Once the log passes its share of the base ([`MergePolicy`]: by default half the
//! base's bytes, and 64 KiB) it is merged into a new base, so a merge costs each appended
//! byte about two more, amortised: inline in [`VectorStore::save`], or — with
//! [`VectorStore::save_log`], which only appends and hands back a [`MergeJob`] — on a
//! background thread ([`Merger`]) that reads the files, not memory, while the store is
//! searched, changed and saved (`merge.rs` has the steps and the crash argument). The log is
//! bound to its base (length and checksum): one left beside a newer base is ignored, unless
//! that base folds it (a background merge's, until it rebinds the log's tail).
//! [`VectorStore::open`] verifies the base, takes the graph as saved
//! ([`VectorStore::graph_was_loaded`]), so opening never rebuilds it, and replays the log
//! (a torn last record, left by a crash during an append, is ignored; the next append
//! overwrites it). Memory changes a record cannot say — a compaction, a graph built or
//! dropped, new parameters — make the next save write a whole base. Files of format 2, whose
//! graph was an `hnsw_rs` dump beside them (Braid's graph before this one), still open: the
//! graph is rebuilt and the next save removes the dump. A store below
//! [`HnswParams::exact_threshold`] vectors keeps no graph at all (every search scans), nor
//! does an int8 store below 1,000,000 (its searches are screened, below; an index saved with
//! such a graph drops it on open and its next save writes a base without it).
//!
//! **Exact scans read a sketch first:** an f32 store also keeps each vector as int8 codes with
//! a bound on their error, so a scan over many candidates scores the codes (a quarter of the
//! bytes), and the f32 rows only of the candidates those bounds cannot rule out. Its hits are
//! those of a plain f32 scan, bit for bit (`sketch.rs` has the argument and the tests).
//!
//! **Large int8 searches are screened by sign bits** (`signs.rs`): every int8 store keeps one
//! bit a dimension of each vector (whether its code is positive) and a factor, 52 bytes a 384-d
//! vector, and where the CPU has AVX-512 or AVX2 the bits again in columns of 64 rows (48 bytes more),
//! computed from the codes as they are read or inserted (no format change). A
//! search whose request allows at least 60,000 records, in a store where 20,000 to 1,000,000
//! of them are, estimates every allowed row from its bits (popcounts against the query's
//! four-bit planes; a block of 64 allowed slots by table lookups over the columns), then
//! scores the best ten per hit asked (at least 400) with their int8
//! codes: [`SearchPath::Screened`], approximate like the graph, in place of the exact scan or
//! the graph walk. Only allowed rows are read. On the 1M scale corpus, recall@10 against the
//! exact scan is 0.998–1.0 for callers of 10 %, 50 % and 100 % (the graph it replaced for the
//! last: 0.9855). `BRAID_VECTOR_PATHS=exact` (every search exact) and `unscreened` (no screen)
//! select the paths for measurements. Once open, the arenas are collapsed into huge pages on a
//! background thread (`huge_pages.rs`; `BRAID_NO_HUGE_PAGES=1` turns it off).
//!
//! **Memory** ([`VectorStore::memory_bytes`]): per 384-d vector, 1,928 bytes as f32 (1,536 of
//! components, 392 of sketch; the file holds the components only) or 388 as int8, plus about
//! 140 for the graph at `m` = 16 and 17 for the slot tables.
//!
//! **Kernels:** an int8 store scores a query quantized once per search to `i16` codes against
//! the rows' `i8` codes in exact integer arithmetic (AVX2 `vpmaddwd` where the CPU has it,
//! chosen at run time; the portable loop gives the same integers), so the graph, the exact scan
//! and every build give the same bits. A sparse exact scan gathers the allowed slots in memory
//! order and prefetches each row a few candidates ahead.
//!
//! **Features:** `hnsw` (on by default) brings the graph. Without it the store keeps no graph
//! ([`VectorStore::has_graph`] is false, every search is [`SearchPath::Exact`], exact for any
//! allowed set), and a store saved with a graph by a build with it still opens: its graph is
//! not kept, and the next save writes none (a build with `hnsw` rebuilds it on its next open).
//!
//! **Defaults** (see [`HnswParams`]): `m` = 16, `ef_construction` = 400, `ef_search` = 1,600,
//! `exact_threshold` = 150,000 allowed records. The graph's reverse links are chosen by the
//! same diversity heuristic as its forward links (hnswlib's rule). Measured on 100,000
//! scale-corpus vectors (random projections, int8, `examples/npy_sweep.rs`, release build,
//! 2 cores; recall@10 of the forced graph against the exact scan, at `ef_search` 200 / 800):
//!
//! | build | 100 % allowed | 50 % | 10 % | build time |
//! |---|---:|---:|---:|---:|
//! | reverse links keep the most similar, ef_construction 200 | 0.9115 / 0.9625 | 0.9370 / 0.9785 | 0.9465 / 0.9970 | 134 s |
//! | reverse links by the heuristic, ef_construction 200 | 0.9405 / 0.9775 | 0.9470 / 0.9880 | 0.9655 / 1.0000 | 135 s |
//! | the same, ef_construction 400 | 0.9525 / 0.9845 | 0.9605 / 0.9925 | 0.9745 / 0.9995 | 102 s* |
//! | the same, m 20 | 0.9510 / 0.9850 | 0.9615 / 0.9935 | 0.9855 / 1.0000 | 118 s* |
//! | the same, m 24 | 0.9615 / 0.9895 | 0.9680 / 0.9970 | 0.9930 / 1.0000 | 263 s |
//!
//! (*: with the `i16` query kernel and the `i8` neighbour kernel, which made builds about
//! 1.7× faster; `m` 24 had the first only, the first two rows neither; build times on a machine
//! also running other work.) `m` 20 and 24 cost 43 and 86 bytes a vector more, past the 0.6 KB a vector
//! the store is held to at 1,000,000 vectors, so `m` stays 16 and the construction widens.
//! On low-rank, embedding-like vectors any of these finds the exact top 10
//! (`examples/recall_sweep.rs ... lowrank`).
//!
//! The exact scan costs about 30 ns an allowed int8 vector when most of the store is allowed
//! and about 100 ns when few are (memory latency, halved by prefetching); the filtered graph
//! walk costs more the more hidden points it passes. At 1,000,000 vectors the scan took 2.5 ms
//! at 1 % allowed and 10 ms at 10 %, where the graph found fewer of the exact top 10, so the
//! scan answers up to [`HnswParams::exact_threshold`] allowed records. In a store of at least
//! two chunks of 65,536 slots the scan's walk is cut into chunks that rayon's idle threads
//! take (10 % of 1,000,000 on 2 cores: 12.4 → 7.0 ms, the same hits), and the graph walk
//! prefetches a node's unseen neighbours before scoring them (2.7 → 2.1 ms at `ef_search`
//! 400 with everything allowed, 9.0 → 6.9 ms at 1,200).
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
mod huge_pages;
mod journal;
mod log;
mod merge;
mod merger;
mod params;
mod partitions;
mod persist;
mod room;
mod rows;
mod scan;
mod search;
mod sign_columns;
mod signs;
mod sketch;
mod slots;
mod store;

pub use journal::{DiskMark, MergePolicy};
pub use log::LOG_FILE;
pub use merge::{MergeJob, Merged};
pub use merger::Merger;
pub use params::{HnswParams, Quantization};
pub use partitions::{Partition, PartitionedStore, PlacedRecord, PROMOTE_AT};
pub use persist::{FORMAT_VERSION, VECTORS_FILE};
pub use room::{Room, Spare};
pub use search::{SearchPath, VectorSearch};
pub use store::{CheckedRecord, PreparedLinks, VectorStore};
