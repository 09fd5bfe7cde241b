//! The vector store: a dense arena of unit vectors over record ordinals, with a graph beside it.

use std::collections::HashSet;
use std::fmt;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, MutexGuard};

use braid_core::{AllowedSet, Error, Ordinal, Result};

use crate::distance::{normalised, BadVector};
use crate::graph::{Graph, Prepared};
use crate::journal::{self, DiskMark, Journal, MergePolicy, OnDisk};
use crate::log::{self, LogState};
use crate::merge::MergeJob;
use crate::params::{HnswParams, Quantization};
use crate::persist;
use crate::room::{Room, Spare};
use crate::rows::{Query, Rows};
use crate::scan::Spread;
use crate::search::{better, SearchPath, TopK, VectorSearch};
use crate::signs;
use crate::slots::{first_slots, SlotMap};

/// Unit vectors keyed by record ordinal, searchable by dot product within an [`AllowedSet`].
///
/// A record has one vector, or several — its passages ([`VectorStore::insert_passages`]) —
/// and then scores as the best of them: a search returns each record at most once.
///
/// Vectors live in a dense arena (the source of truth) addressed by *slot*, as f32 or as int8
/// codes ([`HnswParams::quantization`]); an HNSW graph of Braid's own indexes the slots. Deleting or replacing a record tombstones its slot; once
/// tombstones pass [`HnswParams::rebuild_tombstone_fraction`] the arena is compacted and the
/// graph rebuilt from the live vectors.
///
/// Vectors are L2-normalised on insert and queries on search, so a score is the cosine
/// similarity, which for already normalised embeddings is their dot product.
///
/// ```
/// use braid_core::{AccessPolicy, AllowedSet, OrdSet, Principal, Visibility};
/// use braid_vector::{HnswParams, SearchPath, VectorStore};
///
/// # fn main() -> braid_core::Result<()> {
/// let mut store = VectorStore::new(3, HnswParams::default());
/// store.insert(7, &[1.0, 0.0, 0.0])?;
/// store.insert(8, &[0.0, 1.0, 0.0])?;
/// store.insert(9, &[0.6, 0.8, 0.0])?;
///
/// // The visibility stage decides which ordinals this request may touch.
/// let visibility = Visibility::new(Principal::public(), AccessPolicy::Public, None);
/// let allowed = AllowedSet::new(visibility, [7, 9].into_iter().collect::<OrdSet>());
///
/// let found = store.search(&[1.0, 0.1, 0.0], 2, &allowed)?;
/// assert_eq!(found.hits.iter().map(|h| h.0).collect::<Vec<_>>(), [7, 9]);
/// assert_eq!(found.path, SearchPath::Exact); // tiny allowed set: scanned exactly
///
/// let dir = std::env::temp_dir().join(format!("braid-vector-doc-{}", std::process::id()));
/// store.save(&dir)?;
/// let reopened = VectorStore::open(&dir)?;
/// assert_eq!(reopened.search(&[1.0, 0.1, 0.0], 2, &allowed)?, found);
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok(())
/// # }
/// ```
pub struct VectorStore {
    dim: usize,
    params: HnswParams,
    /// The vectors by slot (unit length before quantization).
    rows: Rows,
    /// Which arena `rows` is: a new number whenever it is made, read or compacted, the same
    /// while it is only appended to ([`crate::room`]).
    arena: u64,
    /// The ordinal each slot was written for.
    slot_ord: Vec<Ordinal>,
    /// Whether each slot is live (not deleted or replaced).
    live: Vec<bool>,
    /// Live ordinals to their first slot. A record's slots are adjacent: its run is the live
    /// slots of its ordinal from there on ([`VectorStore::run`]).
    slots: SlotMap,
    /// Number of tombstoned slots.
    dead: usize,
    /// Indexes the live slots that existed when it was (re)built or since inserted; kept
    /// only while the store holds at least [`VectorStore::graph_from`] records (below that no
    /// search walks it, so building it would be wasted time).
    graph: Option<Graph>,
    /// Whether `graph` came from a dump on open (rather than being built here).
    loaded: bool,
    /// What of the store is on disk, and what the next save must append. Changed under
    /// `&mut self` without locking; a save (under `&self`, while searches run) locks the
    /// files' state, which background merges share ([`MergeJob`]).
    journal: Journal,
    /// When the log is merged into a new base; not saved.
    merge_policy: MergePolicy,
    /// Whether the exact scan always looks the allowed records up rather than walking every
    /// slot ([`VectorStore::set_look_up_only`]); not saved.
    look_up_only: bool,
}

/// Graph links searched for a store's new slots by [`VectorStore::prepare_links`], for
/// [`VectorStore::link_next`].
#[derive(Debug, Default)]
pub struct PreparedLinks(Prepared);

/// A record's vectors, checked and normalised by [`VectorStore::check_passages`], ready for
/// [`VectorStore::insert_checked`].
#[derive(Debug, Clone)]
pub struct CheckedRecord {
    ord: Ordinal,
    units: Vec<Vec<f32>>,
}

impl CheckedRecord {
    /// The record's ordinal.
    pub fn ord(&self) -> Ordinal {
        self.ord
    }

    /// How many vectors it holds (one a passage).
    pub fn vectors(&self) -> usize {
        self.units.len()
    }
}

impl fmt::Debug for VectorStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VectorStore")
            .field("dim", &self.dim)
            .field("len", &self.len())
            .field("tombstones", &self.dead)
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

impl VectorStore {
    /// An empty store for vectors of `dim` dimensions.
    pub fn new(dim: usize, params: HnswParams) -> Self {
        let mut store = VectorStore {
            dim,
            rows: Rows::new(dim, params.quantization),
            arena: crate::room::next_arena(),
            params,
            slot_ord: Vec::new(),
            live: Vec::new(),
            slots: SlotMap::default(),
            dead: 0,
            graph: None,
            loaded: false,
            journal: Journal::default(),
            merge_policy: MergePolicy::default(),
            look_up_only: false,
        };
        store.fit_graph();
        store
    }

    /// Makes every exact scan look the allowed records up, however many there are, rather than
    /// walk every slot once they are many: its work is then a function of the allowed records
    /// alone, never of the others the store holds. What a store shared by many small tenants
    /// (the pool of [`crate::PartitionedStore`]) wants; a store of one tenant walks faster.
    pub fn set_look_up_only(&mut self, look_up_only: bool) {
        self.look_up_only = look_up_only;
    }

    /// Copies the vectors of `ords` from `from` (a store of the same dimension and
    /// quantization) as they are stored there — the same f32 components or int8 codes, bit for
    /// bit — replacing whatever vectors those ordinals had here, and grows the graph once.
    /// Ordinals `from` holds no vector for are skipped. Returns how many records were copied.
    ///
    /// # Errors
    ///
    /// [`Error::DimensionMismatch`] when the dimensions differ, [`Error::Vector`] when the
    /// quantizations do (nothing is copied then).
    pub fn copy_from(&mut self, from: &VectorStore, ords: &[Ordinal]) -> Result<usize> {
        if from.dim != self.dim {
            return Err(Error::DimensionMismatch { expected: self.dim, got: from.dim });
        }
        if from.quantization() != self.quantization() {
            return Err(Error::Vector(format!(
                "cannot copy {} vectors into a {} store",
                from.quantization().name(),
                self.quantization().name()
            )));
        }
        let mut copied = 0;
        for &ord in ords {
            let Some(&first) = from.slots.get(&ord) else { continue };
            if let Some(old) = self.slots.remove(&ord) {
                self.tombstone(old);
            }
            self.slots.insert(ord, self.slot_ord.len());
            for slot in from.run(first) {
                self.rows.push_stored(from.rows.stored(slot));
                self.slot_ord.push(ord);
                self.live.push(true);
            }
            copied += 1;
        }
        self.extend_graph();
        self.maybe_rebuild();
        self.fit_graph();
        Ok(copied)
    }

    /// The number of dimensions every vector has.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The number of records with live vectors.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// The number of live vectors: [`VectorStore::len`] plus every passage past a record's
    /// first.
    pub fn vectors(&self) -> usize {
        self.slot_ord.len() - self.dead
    }

    /// Whether the store holds no live vector.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The parameters the store was created (or saved) with.
    pub fn params(&self) -> &HnswParams {
        &self.params
    }

    /// Changes the search width [`HnswParams::ef_search`]; takes effect on the next search.
    pub fn set_ef_search(&mut self, ef_search: usize) {
        self.params.ef_search = ef_search;
    }

    /// Changes [`HnswParams::exact_threshold`]; takes effect on the next search (building
    /// the graph now when the store reaches the new threshold, dropping it when it no longer
    /// does).
    pub fn set_exact_threshold(&mut self, exact_threshold: usize) {
        if self.params.exact_threshold != exact_threshold {
            // The base file's header holds the parameters.
            self.journal.forget();
        }
        self.params.exact_threshold = exact_threshold;
        self.fit_graph();
    }

    /// Whether the store keeps an HNSW graph (it does from [`HnswParams::exact_threshold`]
    /// records on, an int8 store from 1,000,000; never without the `hnsw` feature).
    pub fn has_graph(&self) -> bool {
        self.graph.is_some()
    }

    /// Whether the graph was loaded from the dump saved with the store (and not rebuilt
    /// since): true after [`VectorStore::open`] of a store saved with a graph, until a
    /// rebuild (past [`HnswParams::rebuild_tombstone_fraction`]) replaces it.
    pub fn graph_was_loaded(&self) -> bool {
        self.loaded && self.graph.is_some()
    }

    /// The number of tombstoned slots (deleted or replaced vectors still in the graph).
    pub fn tombstones(&self) -> usize {
        self.dead
    }

    /// The live ordinals, in no particular order.
    pub fn ords(&self) -> impl Iterator<Item = Ordinal> + '_ {
        self.slots.keys().copied()
    }

    /// Whether `ord` has a live vector.
    pub fn contains(&self, ord: Ordinal) -> bool {
        self.slots.contains_key(&ord)
    }

    /// The stored (normalised) vector of `ord`, if live — its first, for a record with
    /// passages; decoded from its codes in an int8 store.
    pub fn vector(&self, ord: Ordinal) -> Option<Vec<f32>> {
        self.slots.get(&ord).map(|&slot| self.rows.vector(slot))
    }

    /// Every stored (normalised) vector of `ord`, if live, in the order they were inserted: a
    /// record's passages ([`VectorStore::insert_passages`]; the first is the one
    /// [`VectorStore::vector`] returns), or its one vector. Decoded from their codes in an
    /// int8 store. Read-only: for exporting what a search scores a record by.
    pub fn passage_vectors(&self, ord: Ordinal) -> Option<Vec<Vec<f32>>> {
        self.slots.get(&ord).map(|&first| self.run(first).map(|slot| self.rows.vector(slot)).collect())
    }

    /// How the store holds its vectors.
    pub fn quantization(&self) -> Quantization {
        self.rows.quantization()
    }

    /// Bytes the store holds in memory for its vectors, their graph and the slot tables
    /// (the ordinal map counted at its table's size), for the scale bench.
    pub fn memory_bytes(&self) -> usize {
        let map = self.slots.capacity() * (std::mem::size_of::<(Ordinal, usize)>() + 1);
        self.rows.heap_bytes()
            + self.slot_ord.capacity() * std::mem::size_of::<Ordinal>()
            + self.live.capacity()
            + map
            + self.graph.as_ref().map_or(0, Graph::heap_bytes)
    }

    /// The address ranges of the store's large arenas (rows and graph links) that
    /// [`crate::huge_pages`] backs with huge pages after an open.
    pub(crate) fn huge_page_regions(&self) -> Vec<crate::huge_pages::Region> {
        let mut regions = self.rows.huge_page_regions();
        regions.extend(self.graph.iter().flat_map(Graph::huge_page_regions));
        regions
    }

    /// Stores `vector` for `ord`, replacing any vector `ord` had.
    ///
    /// # Errors
    ///
    /// [`Error::DimensionMismatch`] when `vector.len() != self.dim()`;
    /// [`Error::InvalidRecord`] when it has a NaN or infinite component or is all zeros.
    pub fn insert(&mut self, ord: Ordinal, vector: &[f32]) -> Result<()> {
        let units = [self.check_record(vector)?];
        self.push_records(std::iter::once((ord, &units[..])));
        Ok(())
    }

    /// Stores many vectors at once, inserting them into the graph in parallel. Later items
    /// win over earlier ones with the same ordinal. All or nothing: on error nothing is stored.
    ///
    /// # Errors
    ///
    /// As [`VectorStore::insert`], for the first bad item.
    pub fn insert_batch(&mut self, items: &[(Ordinal, Vec<f32>)]) -> Result<()> {
        let units = items.iter().map(|(_, v)| self.check_record(v).map(|u| vec![u])).collect::<Result<Vec<_>>>()?;
        self.push_records(items.iter().map(|(ord, _)| *ord).zip(units.iter().map(Vec::as_slice)));
        Ok(())
    }

    /// Stores several vectors per record — its passages — replacing whatever vectors each
    /// record had; a search scores a record by the best of its vectors, and
    /// [`VectorStore::vector`] returns its first. Later items win over earlier ones with the
    /// same ordinal. All or nothing, as [`VectorStore::insert_batch`].
    ///
    /// # Errors
    ///
    /// As [`VectorStore::insert`], for the first bad vector; [`Error::InvalidRecord`] for a
    /// record with no vector.
    pub fn insert_passages(&mut self, items: &[(Ordinal, Vec<Vec<f32>>)]) -> Result<()> {
        let checked = self.check_passages(items)?;
        self.insert_checked(&checked)
    }

    /// Checks and normalises what [`VectorStore::insert_passages`] would, inserting nothing:
    /// a caller that inserts a large batch in parts ([`VectorStore::insert_checked`], to let
    /// searches run in between) checks it whole first, so the batch still goes in all or
    /// nothing, and each vector is checked once.
    ///
    /// # Errors
    ///
    /// As [`VectorStore::insert_passages`].
    pub fn check_passages(&self, items: &[(Ordinal, Vec<Vec<f32>>)]) -> Result<Vec<CheckedRecord>> {
        items
            .iter()
            .map(|(ord, vectors)| {
                if vectors.is_empty() {
                    return Err(Error::InvalidRecord { reason: "a record's passages hold no vector".into() });
                }
                let units = vectors.iter().map(|v| self.check_record(v)).collect::<Result<_>>()?;
                Ok(CheckedRecord { ord: *ord, units })
            })
            .collect()
    }

    /// A copy of the arena with room for `slots` more vectors, when appending them would grow
    /// it; `None` when it has room, or is past [`crate::room`]'s bound (it grows in place).
    /// Reads only: a commit makes it under a read lock, beside
    /// the searches, and installs it with [`VectorStore::make_room`] under the write lock
    /// ([`crate::room`]).
    pub fn room_for(&self, slots: usize) -> Option<Room> {
        if self.rows.heap_bytes() > crate::room::COPIED_UP_TO {
            return None;
        }
        let grown = self.rows.with_room(slots)?;
        Some(Room { rows: grown, from: (self.arena, self.slot_ord.len()) })
    }

    /// Installs `room` when the arena is still the one it was copied from (the same arena,
    /// the same slots); gives back the arena it replaced, to drop once the lock is released.
    /// A room copied from another arena is dropped: the next push grows the arena itself.
    pub fn make_room(&mut self, room: Room) -> Option<Spare> {
        if room.from != (self.arena, self.slot_ord.len()) {
            return None;
        }
        self.arena = crate::room::next_arena();
        Some(Spare(std::mem::replace(&mut self.rows, room.rows)))
    }

    /// Stores records [`VectorStore::check_passages`] checked, as
    /// [`VectorStore::insert_passages`] does.
    ///
    /// # Errors
    ///
    /// [`Error::DimensionMismatch`] for records checked by a store of another dimension
    /// (nothing is stored then).
    pub fn insert_checked(&mut self, records: &[CheckedRecord]) -> Result<()> {
        for unit in records.iter().flat_map(|r| &r.units) {
            self.check_dim(unit)?;
        }
        self.push_records(records.iter().map(|r| (r.ord, r.units.as_slice())));
        Ok(())
    }

    /// Stores checked records as [`VectorStore::insert_checked`] does, but leaves linking them
    /// into the graph (where the store has one) to [`VectorStore::prepare_links`] and
    /// [`VectorStore::link_next`]: appending rows is quick, and the graph's searches can then
    /// run under a read lock, beside the searches of readers. Until linked, the records are in
    /// exact scans and not in graph walks.
    ///
    /// # Errors
    ///
    /// As [`VectorStore::insert_checked`].
    pub fn insert_unlinked(&mut self, records: &[CheckedRecord]) -> Result<()> {
        if self.graph.is_none() {
            return self.insert_checked(records);
        }
        for unit in records.iter().flat_map(|r| &r.units) {
            self.check_dim(unit)?;
        }
        for record in records {
            self.push_record(record.ord, &record.units);
        }
        Ok(())
    }

    /// Searches the graph for the links of the slots not yet in it: the costly, read-only half
    /// of inserting them (see [`VectorStore::insert_unlinked`]).
    pub fn prepare_links(&self) -> PreparedLinks {
        match &self.graph {
            Some(graph) if graph.points() < self.slot_ord.len() => {
                let live = &self.live;
                PreparedLinks(graph.prepare(&self.rows, graph.points(), self.slot_ord.len(), &|slot| live[slot]))
            }
            _ => PreparedLinks::default(),
        }
    }

    /// Links the next slot `prepared` holds into the graph (a few comparisons: its candidates
    /// were found by [`VectorStore::prepare_links`]); returns whether any is left. Once none
    /// is, inserts whatever was not prepared and settles the graph as an insert does (rebuilt
    /// past its tombstones, built or dropped at the exact threshold).
    pub fn link_next(&mut self, prepared: &mut PreparedLinks) -> bool {
        if let Some(graph) = &mut self.graph {
            let live = &self.live;
            if graph.link_one(&self.rows, &mut prepared.0, &|slot| live[slot]) {
                return true;
            }
        }
        self.extend_graph();
        self.maybe_rebuild();
        self.fit_graph();
        false
    }

    /// Appends checked records, then grows the graph once.
    fn push_records<'a>(&mut self, records: impl Iterator<Item = (Ordinal, &'a [Vec<f32>])>) {
        for (ord, units) in records {
            self.push_record(ord, units);
        }
        self.extend_graph();
        self.maybe_rebuild();
        self.fit_graph();
    }

    /// Deletes `ord`'s vector; returns whether it had one. The slot is tombstoned and the
    /// graph rebuilt once tombstones pass the configured fraction.
    pub fn delete(&mut self, ord: Ordinal) -> bool {
        match self.slots.remove(&ord) {
            Some(first) => {
                self.tombstone(first);
                self.maybe_rebuild();
                self.fit_graph();
                true
            }
            None => false,
        }
    }

    /// The `k` allowed live vectors most similar to `query`, best first.
    ///
    /// Allowed sets smaller than [`HnswParams::exact_threshold`] (and any search while the
    /// graph is empty) are scanned exactly; larger ones search the graph with a filter that
    /// admits only allowed, live slots. Should the graph return fewer than `k` hits, the exact
    /// scan answers instead, so a result is short only when fewer than `k` vectors qualify.
    ///
    /// An int8 store keeps its vectors' sign bits ([`crate::signs`]): a search of 20,000 to 1,000,000 allowed records there is a scan
    /// screened by them ([`SearchPath::Screened`]: every allowed row's one-bit estimate, then
    /// the int8 score of the best ten per hit asked, at least 400), in place of the exact scan
    /// or the graph: approximate, as the graph is.
    ///
    /// # Errors
    ///
    /// [`Error::DimensionMismatch`] for a query of the wrong length;
    /// [`Error::InvalidRequest`] for a query with a non-finite component or all zeros.
    #[tracing::instrument(level = "debug", skip_all, target = "braid::recall::semantic",
        fields(k, allowed = allowed.len(), path, hits))]
    pub fn search(&self, query: &[f32], k: usize, allowed: &AllowedSet) -> Result<VectorSearch> {
        self.search_in(query, k, allowed, allowed.len(), false)
    }

    /// [`VectorStore::search`] as one part of a search whose allowed set holds `requested`
    /// records in all (a partition's, [`crate::PartitionedStore::search`]): whether to screen
    /// depends on both. `whole`: `allowed` is every live record of this store (so a walk
    /// tests no record's bit, only whether its slot is live).
    pub(crate) fn search_in(
        &self,
        query: &[f32],
        k: usize,
        allowed: &AllowedSet,
        requested: usize,
        whole: bool,
    ) -> Result<VectorSearch> {
        let query = self.rows.query(self.check_query(query)?);
        let span = tracing::Span::current();
        if k == 0 {
            return Ok(VectorSearch { hits: Vec::new(), path: SearchPath::Exact });
        }
        let screens = self.screens(allowed, requested);
        let scanned = if screens { SearchPath::Screened } else { SearchPath::Exact };
        let graph = self
            .graph
            .as_ref()
            .filter(|g| g.points() > 0 && allowed.len() >= self.params.exact_threshold)
            .filter(|_| paths() != Paths::Exact && !screens);
        let found = if let Some(graph) = graph {
            let hits = self.graph_search(graph, &query, k, allowed);
            if hits.len() < k {
                VectorSearch { hits: self.scan(&query, k, allowed, screens, whole), path: scanned }
            } else {
                VectorSearch { hits, path: SearchPath::Hnsw }
            }
        } else {
            VectorSearch { hits: self.scan(&query, k, allowed, screens, whole), path: scanned }
        };
        span.record("path", found.path.name());
        span.record("hits", found.hits.len());
        Ok(found)
    }

    /// The exact `k` best allowed live vectors by brute force: the ground truth the graph is
    /// measured against. Same ordering and scores as [`VectorStore::search`].
    ///
    /// # Errors
    ///
    /// As [`VectorStore::search`].
    pub fn search_exact(&self, query: &[f32], k: usize, allowed: &AllowedSet) -> Result<Vec<(Ordinal, f32)>> {
        let query = self.rows.query(self.check_query(query)?);
        Ok(self.scan(&query, k, allowed, false, false))
    }

    /// Makes the store durable in `dir` (created if needed), writing only what changed since
    /// it was last saved there or opened from there: a record appended to the log beside the
    /// base file ([`LOG_FILE`](crate::LOG_FILE): the new slots' vectors, the slots tombstoned,
    /// the graph's new points and changed links), checksummed and fsynced. Nothing changed:
    /// nothing is written.
    ///
    /// The whole store is written as a new base file instead ([`VectorStore::merge`]) when
    /// `dir` holds no base this store matches (a new store, another directory, files another
    /// process changed), when memory changed in a way a record cannot say (a compaction, a
    /// graph built or dropped, new parameters), and when the log would pass its share of the
    /// base ([`MergePolicy`], by default half the base's bytes and 64 KiB): so a merge's cost,
    /// amortised, is about twice the bytes appended. That merge runs here, inline: a caller
    /// that wants it off its path calls [`VectorStore::save_log`] instead.
    ///
    /// Crash safety: a record is fsynced before this returns, and a torn one (a crash during
    /// the append) is ignored on open and overwritten by the next append; a merge leaves the
    /// old base and log, or the new base (see [`VectorStore::merge`]).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] naming the path that failed (the next save then writes a whole base);
    /// [`Error::Vector`] when a size does not fit the format.
    pub fn save(&self, dir: &Path) -> Result<()> {
        self.save_with(dir, true).map(|_| ())
    }

    /// [`VectorStore::save`] that never merges: it appends a log record (or, when a record
    /// cannot say what changed, writes a whole base, as `save` does) and returns a
    /// [`MergeJob`] when the log has passed its share of the base ([`MergePolicy`]). The
    /// caller runs the job where it likes — on a background thread ([`crate::Merger`]) — while
    /// this store is searched, changed and saved again: the job reads the files, not memory,
    /// and takes only the lock of the files' state, briefly, to swap them.
    ///
    /// # Errors
    ///
    /// As [`VectorStore::save`].
    pub fn save_log(&self, dir: &Path) -> Result<Option<MergeJob>> {
        Ok(self.save_with(dir, false)?.then(|| MergeJob::new(dir.to_path_buf(), Arc::clone(&self.journal.disk))))
    }

    /// Changes when the log is merged ([`MergePolicy`]); takes effect on the next save.
    pub fn set_merge_policy(&mut self, policy: MergePolicy) {
        self.merge_policy = policy;
    }

    /// When the log is merged ([`MergePolicy`]).
    pub fn merge_policy(&self) -> MergePolicy {
        self.merge_policy
    }

    /// Saves (merging inline past the log's share when `inline`); returns whether the log is
    /// past its share (only ever without `inline`).
    fn save_with(&self, dir: &Path, inline: bool) -> Result<bool> {
        let started = std::time::Instant::now();
        let mut disk = journal::lock(&self.journal.disk);
        let appended = if self.journal.take_stale() { Ok(None) } else { self.append(&mut disk, dir, inline) };
        match appended {
            Ok(Some(bytes)) => {
                if bytes > 0 {
                    tracing::debug!(target: "braid::vector", bytes, slots = self.slot_ord.len(),
                        ms = started.elapsed().as_millis() as u64, "vector log appended");
                }
                let due = disk.as_ref().is_some_and(|d| d.log.valid > self.merge_policy.log_limit(d.base.len));
                Ok(due && !inline)
            }
            Ok(None) => self.write_base(&mut disk, dir).map(|()| false),
            Err(e) => {
                *disk = None;
                Err(e)
            }
        }
    }

    /// Writes every slot's vector, the parameters and the graph (when the store has one) to
    /// `dir` (created if needed) as one checksummed base file ([`VECTORS_FILE`](crate::VECTORS_FILE),
    /// format [`FORMAT_VERSION`](crate::FORMAT_VERSION)), then removes the log beside it: a
    /// temporary file, fsynced and renamed over the old base, then the directory fsynced, so a
    /// crash leaves the old base (and its log) or the new one (a log left beside it is bound to
    /// the old base, and ignored). [`VectorStore::save`] calls it when the log has grown past
    /// its share; a caller may call it to fold the log in now (after a bulk load, say).
    ///
    /// # Errors
    ///
    /// As [`VectorStore::save`].
    pub fn merge(&self, dir: &Path) -> Result<()> {
        let mut disk = journal::lock(&self.journal.disk);
        self.journal.take_stale();
        self.write_base(&mut disk, dir)
    }

    /// Which files the last save (or the open) left, when memory matches them: record it with
    /// the commit the save belongs to, and pass it to [`VectorStore::open_checked`].
    pub fn disk_mark(&self) -> Option<DiskMark> {
        let disk = journal::lock(&self.journal.disk);
        disk.as_ref().map(|d| DiskMark {
            base_len: d.base.len,
            base_crc: d.base.crc,
            log_bytes: d.log.valid,
            log_records: Some(d.beyond()),
        })
    }

    /// [`VectorStore::open`], checking that the files hold at least what `mark` (from
    /// [`VectorStore::disk_mark`] after a save) says: while the base is the one marked, the
    /// log must hold at least the marked records past it (or, for a mark written before
    /// background merges, the marked bytes); where a background merge has since folded `n`
    /// records of the marked base's log into a new base, the new base's log must hold the
    /// marked records less `n`. Else acknowledged changes were lost (the log deleted,
    /// truncated or damaged). A base newer still (a second merge since) holds them.
    ///
    /// # Errors
    ///
    /// As [`VectorStore::open`]; [`Error::Corrupt`] naming the log when it lost records.
    pub fn open_checked(dir: &Path, mark: Option<&DiskMark>) -> Result<Self> {
        let store = Self::open(dir)?;
        if let Some(mark) = mark {
            let disk = journal::lock(&store.journal.disk);
            if let Some(d) = disk.as_ref() {
                let marked = log::BaseId { len: mark.base_len, crc: mark.base_crc };
                let short = if d.base == marked {
                    match mark.log_records {
                        Some(records) => (d.beyond() < records).then(|| (d.beyond(), records)),
                        None if d.log_bound == d.base && d.log.valid < mark.log_bytes => {
                            return Err(Error::Corrupt {
                                path: dir.join(log::LOG_FILE),
                                reason: format!(
                                    "the log holds {} valid bytes; the last commit wrote {}",
                                    d.log.valid, mark.log_bytes
                                ),
                            });
                        }
                        None => None,
                    }
                } else {
                    match (d.base_folds.filter(|f| f.base == marked), mark.log_records) {
                        (Some(f), Some(records)) if f.records + d.beyond() < records => {
                            Some((f.records + d.beyond(), records))
                        }
                        _ => None,
                    }
                };
                if let Some((held, records)) = short {
                    return Err(Error::Corrupt {
                        path: dir.join(log::LOG_FILE),
                        reason: format!(
                            "the files hold {held} log records past the marked base; the last commit wrote {records}"
                        ),
                    });
                }
            }
        }
        Ok(store)
    }

    /// Appends what changed since `disk`'s files to their log: `Some(bytes)` written (0 when
    /// nothing changed), or `None` when a whole base must be written instead (with `inline`,
    /// also when the record would take the log past its share).
    fn append(&self, disk: &mut MutexGuard<'_, Option<OnDisk>>, dir: &Path, inline: bool) -> Result<Option<u64>> {
        let Some(d) = disk.as_ref().filter(|d| d.dir == dir) else { return Ok(None) };
        if d.graph_points.is_some() != self.graph.as_ref().is_some_and(|g| g.points() > 0) {
            return Ok(None);
        }
        let graph = self.graph.as_ref().map(|g| g.changes(d.graph_points.unwrap_or(0)));
        let unchanged = graph.as_ref().is_none_or(|p| p.levels.is_empty() && p.blocks.is_empty());
        let mut tombstoned = self.journal.tombstoned.lock().unwrap_or_else(|p| p.into_inner());
        tombstoned.retain(|&slot| slot < d.slots);
        if unchanged && self.slot_ord.len() == d.slots && tombstoned.is_empty() {
            return Ok(Some(0));
        }
        // Another process may have written here since (a stale store must not append to a log
        // it does not know): then the whole store goes down, as before there was a log.
        if persist::base_id(dir)? != Some(d.base) || log::file_len(dir)? != d.log.seen {
            tracing::info!(target: "braid::vector", dir = %dir.display(), "vector files changed on disk: writing a whole base");
            return Ok(None);
        }
        let fresh = d.log.valid == 0;
        let record = log::Append {
            seq: if fresh { 1 } else { d.log.records + 1 },
            slots_before: d.slots,
            slot_ord: &self.slot_ord,
            live: &self.live,
            rows: &self.rows,
            dead: &tombstoned,
            graph,
        }
        .encode();
        let start = if fresh { log::HEADER_LEN } else { d.log.valid };
        if inline && start + record.len() as u64 > self.merge_policy.log_limit(d.base.len) {
            return Ok(None);
        }
        let state = log::append(dir, d.base, &d.log, &record)?;
        let graph_points = self.graph.as_ref().map(Graph::points);
        if let Some(d) = disk.as_mut() {
            if fresh {
                (d.log_bound, d.folded) = (d.base, 0);
            }
            (d.log, d.slots, d.graph_points) = (state, self.slot_ord.len(), graph_points);
        }
        self.journal.saved_slots.store(self.slot_ord.len(), Ordering::Release);
        tombstoned.clear();
        if let Some(graph) = &self.graph {
            graph.forget_changes();
        }
        Ok(Some(record.len() as u64))
    }

    /// Writes the whole store as a new base in `dir` and removes the log.
    fn write_base(&self, disk: &mut MutexGuard<'_, Option<OnDisk>>, dir: &Path) -> Result<()> {
        let started = std::time::Instant::now();
        **disk = None;
        self.journal.tombstoned.lock().unwrap_or_else(|p| p.into_inner()).clear();
        let base = self.write_file(dir, None)?;
        log::remove(dir)?;
        persist::remove_stale_graphs(dir)?;
        let graph_points = self.graph.as_ref().filter(|g| g.points() > 0).map(Graph::points);
        **disk = Some(OnDisk::fresh(dir.to_path_buf(), base, self.slot_ord.len(), graph_points));
        self.journal.saved_slots.store(self.slot_ord.len(), Ordering::Release);
        if let Some(graph) = &self.graph {
            graph.forget_changes();
        }
        tracing::debug!(target: "braid::vector", bytes = base.len, slots = self.slot_ord.len(),
            ms = started.elapsed().as_millis() as u64, "vector base written");
        Ok(())
    }

    /// Writes the whole store as a base file in `dir`: renamed into place when `merged` is
    /// `None`, else left in the merge's temporary file and saying what it folds.
    pub(crate) fn write_file(&self, dir: &Path, merged: Option<persist::Folds>) -> Result<log::BaseId> {
        let graph = self.graph.as_ref().filter(|g| g.points() > 0);
        let save = persist::ToSave {
            dim: self.dim,
            params: &self.params,
            slot_ord: &self.slot_ord,
            live: &self.live,
            rows: &self.rows,
            graph: graph.map(Graph::parts),
            folds: merged,
        };
        match merged {
            None => persist::write(dir, &save),
            Some(_) => persist::write_file(dir, persist::MERGE_TMP, &save),
        }
    }

    /// Reads a store written by [`VectorStore::save`]: its base file (checksummed), with its
    /// graph, so a store with a graph opens without rebuilding it, then the log beside it
    /// (each record checksummed; a torn last record, left by a crash during an append, is
    /// ignored; the records a background merge's base already holds are skipped). A store
    /// saved without a graph (or by format 1 or 2, whose `hnsw_rs` dump is not read) that has
    /// reached [`HnswParams::exact_threshold`] builds one. Opening never writes (a reader may
    /// open while a writer appends); should a merge replace the base while it is read, the
    /// read starts again.
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] naming the file when it is missing, truncated or fails its checksum,
    /// or a log record does not follow from the base; [`Error::FormatVersion`] when another
    /// format version wrote it; [`Error::Vector`] when its graph is inconsistent;
    /// [`Error::Io`] otherwise.
    pub fn open(dir: &Path) -> Result<Self> {
        let mut attempt = 0;
        loop {
            let saved = persist::read(dir)?;
            let logged = if saved.version >= 3 {
                let bases: Vec<log::BaseId> = std::iter::once(saved.id).chain(saved.folds.map(|f| f.base)).collect();
                log::read(dir, &bases, None, saved.dim, saved.params.quantization)?
            } else {
                log::Logged { bound: None, records: Vec::new(), valid: 0, seen: log::file_len(dir)? }
            };
            attempt += 1;
            if attempt < 3 && persist::base_id(dir)? != Some(saved.id) {
                continue;
            }
            return Self::from_saved(dir, saved, logged);
        }
    }

    /// The store a base file and its log hold.
    fn from_saved(dir: &Path, saved: persist::Saved, mut logged: log::Logged) -> Result<Self> {
        let file = dir.join(persist::VECTORS_FILE);
        let (version, id, had_graph, folds) = (saved.version, saved.id, saved.graph.is_some(), saved.folds);
        // A log bound to the base this one folds: its first records are in the base already.
        let mut folded = match (logged.bound, folds) {
            (Some(bound), Some(f)) if bound == f.base && bound != id => f.records,
            _ => 0,
        };
        let total = logged.records.len() as u64;
        if total < folded {
            // The log lost records the base holds anyway: nothing in it to replay, and the next
            // append starts a log of the new base.
            (logged.records, logged.bound, logged.valid, folded) = (Vec::new(), None, 0, 0);
        }
        let records = logged.records.len() as u64;
        let replayed: Vec<log::Record> = logged.records.into_iter().skip(folded as usize).collect();
        let mut store = Self::assemble(dir, saved, replayed, true)?;
        store.slots = first_slots(&store.slot_ord, &store.live)
            .ok_or_else(|| Error::Corrupt { path: file, reason: "an ordinal is live in two places".into() })?;
        store.dead = store.live.iter().filter(|&&live| !live).count();
        // A graph the store no longer wants (an int8 store below a million records, whose
        // searches screen) is dropped before it is extended; one it wants and lacks is built.
        store.fit_graph();
        store.extend_graph();
        // Formats 1 and 2 are rewritten whole, as is a graph this build does not keep.
        if version >= 3 && had_graph == store.graph.is_some() {
            let graph_points = store.graph.as_ref().map(Graph::points);
            let on_disk = OnDisk {
                dir: dir.to_path_buf(),
                base: id,
                log_bound: logged.bound.unwrap_or(id),
                folded,
                base_folds: folds,
                log: LogState { valid: logged.valid, seen: logged.seen, records },
                slots: store.slot_ord.len(),
                graph_points,
            };
            *journal::lock(&store.journal.disk) = Some(on_disk);
            *store.journal.saved_slots.get_mut() = store.slot_ord.len();
        }
        Ok(store)
    }

    /// The store a base file holds with `records` (log records that follow it) replayed: its
    /// arena and graph as the files hold them, no slot map (what a merge writes as a new base,
    /// and what an open starts from). `open`: a graph that covers fewer slots than the base
    /// has grows over the rest before the records are replayed (as memory did before it saved
    /// them); a merge extends nothing.
    pub(crate) fn assemble(dir: &Path, saved: persist::Saved, records: Vec<log::Record>, open: bool) -> Result<Self> {
        let mut store = VectorStore::new(saved.dim, saved.params);
        store.rows = saved.rows;
        store.arena = crate::room::next_arena();
        store.slot_ord = saved.slot_ord;
        store.live = saved.live;
        if let Some(parts) = saved.graph {
            store.take_graph(parts)?;
            if open {
                store.extend_graph();
            }
        }
        for record in records {
            store.replay(record, dir)?;
        }
        Ok(store)
    }

    /// Applies one log record read on open.
    fn replay(&mut self, record: log::Record, dir: &Path) -> Result<()> {
        let corrupt = |reason: String| Error::Corrupt { path: dir.join(log::LOG_FILE), reason };
        if record.slots_before != self.slot_ord.len() {
            return Err(corrupt(format!(
                "log record {} follows {} slots; the store has {}",
                record.seq,
                record.slots_before,
                self.slot_ord.len()
            )));
        }
        for slot in record.dead {
            self.live[slot] = false;
        }
        for slot in 0..record.slot_ord.len() {
            self.rows.push_stored(record.rows.stored(slot));
        }
        self.slot_ord.extend(record.slot_ord);
        self.live.extend(record.live);
        match (record.graph, self.graph.as_mut()) {
            (Some(patch), Some(graph)) => graph.apply(patch)?,
            (None, None) => {}
            // A build without the graph keeps none.
            (Some(_), None) if !cfg!(feature = "hnsw") => {}
            (Some(_), None) => {
                return Err(corrupt(format!("log record {} links a graph the base has not", record.seq)))
            }
            (None, Some(_)) => {
                return Err(corrupt(format!("log record {} adds slots without the graph's links", record.seq)))
            }
        }
        Ok(())
    }

    /// Takes the saved graph as it is.
    #[cfg(feature = "hnsw")]
    fn take_graph(&mut self, parts: persist::GraphParts) -> Result<()> {
        let graph = Graph::from_parts(&self.params, parts)?;
        if graph.points() > self.slot_ord.len() {
            return Err(Error::Vector("the saved graph covers more slots than the store has".into()));
        }
        self.graph = Some(graph);
        self.loaded = true;
        Ok(())
    }

    /// Without the `hnsw` feature a saved graph is not kept (the arena is the source of truth;
    /// the next save writes none).
    #[cfg(not(feature = "hnsw"))]
    fn take_graph(&mut self, parts: persist::GraphParts) -> Result<()> {
        tracing::debug!(target: "braid::vector", points = parts.levels.len(), "graph not kept: built without the hnsw feature");
        Ok(())
    }

    fn check_dim(&self, vector: &[f32]) -> Result<()> {
        if vector.len() == self.dim {
            Ok(())
        } else {
            Err(Error::DimensionMismatch { expected: self.dim, got: vector.len() })
        }
    }

    fn check_record(&self, vector: &[f32]) -> Result<Vec<f32>> {
        self.check_dim(vector)?;
        normalised(vector).map_err(|bad: BadVector| Error::InvalidRecord { reason: bad.reason().to_string() })
    }

    fn check_query(&self, query: &[f32]) -> Result<Vec<f32>> {
        self.check_dim(query)?;
        normalised(query).map_err(|bad| Error::invalid_request(format!("query {}", bad.reason())))
    }

    /// Appends adjacent live slots for `ord`'s vectors, tombstoning the ones they replace
    /// first (so the old run and the new one never merge).
    fn push_record(&mut self, ord: Ordinal, units: &[Vec<f32>]) {
        if let Some(old) = self.slots.remove(&ord) {
            self.tombstone(old);
        }
        self.slots.insert(ord, self.slot_ord.len());
        for unit in units {
            self.rows.push(unit);
            self.slot_ord.push(ord);
            self.live.push(true);
        }
    }

    /// The slots of the record whose first slot is `first`: the live slots of its ordinal from
    /// there on.
    fn run(&self, first: usize) -> Range<usize> {
        let ord = self.slot_ord[first];
        let end = (first..self.slot_ord.len()).find(|&s| !self.live[s] || self.slot_ord[s] != ord);
        first..end.unwrap_or(self.slot_ord.len())
    }

    /// Tombstones the run starting at `first`.
    fn tombstone(&mut self, first: usize) {
        let run = self.run(first);
        let saved = *self.journal.saved_slots.get_mut();
        let tombstoned = self.journal.tombstoned.get_mut().unwrap_or_else(|p| p.into_inner());
        for slot in run {
            self.live[slot] = false;
            self.dead += 1;
            if slot < saved {
                tombstoned.push(slot);
            }
        }
    }

    /// Inserts the slots added since the graph last grew (the live ones; replaced ones are
    /// gaps).
    fn extend_graph(&mut self) {
        if let Some(graph) = &mut self.graph {
            let live = &self.live;
            graph.insert_from(&self.rows, graph.points(), self.slot_ord.len(), &|slot| live[slot]);
        }
    }

    fn graph_search(&self, graph: &Graph, query: &Query, k: usize, allowed: &AllowedSet) -> Vec<(Ordinal, f32)> {
        // Records with passages take several of the walk's places: widen it by their mean count.
        let per_record = self.vectors().div_ceil(self.len().max(1));
        let ef = self.params.ef_search.max(k.saturating_mul(per_record));
        let keep = |slot: usize| self.live.get(slot).copied().unwrap_or(false) && allowed.contains(self.slot_ord[slot]);
        let mut hits: Vec<(Ordinal, f32)> = graph
            .search(&self.rows, query, ef, &keep)
            .into_iter()
            .map(|(slot, score)| (self.slot_ord[slot], score))
            .collect();
        hits.sort_by(better);
        // A record with passages may come back once per passage: keep its best.
        let mut seen = HashSet::with_capacity(hits.len());
        hits.retain(|h| seen.insert(h.0));
        hits.truncate(k);
        hits
    }

    /// The exact top `k` of the allowed live records. The candidates are the same on either
    /// walk (the live slots of each allowed ordinal, a record's adjacent, so [`TopK`] keeps its
    /// best), and [`TopK`] orders them totally, so which walk runs changes the time only.
    ///
    /// With `screen` (what [`VectorStore::screens`] said), the scan is screened by the rows'
    /// sign bits instead ([`VectorStore::screened`]): not exact.
    fn scan(&self, query: &Query, k: usize, allowed: &AllowedSet, screen: bool, whole: bool) -> Vec<(Ordinal, f32)> {
        if k == 0 || self.dim == 0 {
            return Vec::new();
        }
        if screen && self.rows.keeps_signs() {
            return self.screened(query, k, allowed, whole);
        }
        // The allowed set alone decides whether to screen (the work, like the hits, is a function
        // of what the caller may see).
        let records = allowed.len();
        if self.looks_up(allowed) {
            let mut top = TopK::new(k);
            self.rows.scan(query, self.looked_up(allowed).into_iter(), records, Spread::Sparse, &mut top);
            top.into_sorted()
        } else {
            self.walk_top(query, k, allowed, CHUNK_SLOTS)
        }
    }

    /// Few allowed: their slots looked up rather than every slot tested, in memory order.
    fn looked_up(&self, allowed: &AllowedSet) -> Vec<(Ordinal, usize)> {
        let mut found: Vec<(Ordinal, usize)> = allowed
            .ords()
            .iter()
            .filter_map(|ord| self.slots.get(&ord).map(|&first| (ord, first)))
            .flat_map(|(ord, first)| self.run(first).map(move |slot| (ord, slot)))
            .collect();
        found.sort_unstable_by_key(|&(_, slot)| slot);
        found
    }

    /// Whether a search of `allowed` (of a request allowed `requested` records in all) is a
    /// scan screened by the rows' sign bits, the graph or not: the rows keep them, the
    /// request allows at least [`signs::SCREEN_REQUEST_FROM`] records, and this store from
    /// [`signs::SCREEN_FROM`] up to [`signs::SCREEN_UP_TO`] of them (the allowed sets alone
    /// decide, as everywhere in the scan). A store that looks its records up (the pool of small
    /// tenants, [`VectorStore::set_look_up_only`]) is never screened: which tenants it holds
    /// depends on every tenant's whole record count, hidden records included, so a screen
    /// there, whose shortlist depends on the rows screened together, would let a tenant's
    /// hidden records change what its callers find.
    fn screens(&self, allowed: &AllowedSet, requested: usize) -> bool {
        !self.look_up_only
            && requested >= signs::SCREEN_REQUEST_FROM
            && (signs::SCREEN_FROM..signs::SCREEN_UP_TO).contains(&allowed.len())
            && self.rows.keeps_signs()
            && !matches!(paths(), Paths::Exact | Paths::Unscreened)
    }

    /// The screened scan ([`crate::signs`]): the allowed rows' sign-bit estimates into a
    /// shortlist (by lookup or by the walk, in parallel chunks as [`VectorStore::walk_top`]
    /// cuts them, sharing a floor, the chunks' shortlists merged in the estimates' total order), then the
    /// shortlist's rows scored with their int8 codes, in slot order, into the top `k`. A walk
    /// over mostly allowed slots is screened 64 slots at a time where the CPU can
    /// ([`crate::signs::Signs::screen_blocks`]); `whole` (every live record allowed) spares it
    /// the allowed set's bits.
    fn screened(&self, query: &Query, k: usize, allowed: &AllowedSet, whole: bool) -> Vec<(Ordinal, f32)> {
        let slots = self.slot_ord.len();
        let empty = || signs::Shortlist::new(signs::shortlist(k));
        let floor = signs::Floor::new();
        let shortlist = if self.looks_up(allowed) {
            self.rows.shortlist(query, self.looked_up(allowed).into_iter(), true, k, &floor)
        } else {
            let spread = self.spread(allowed);
            let blocks = spread == Spread::Dense && self.rows.screens_blocks();
            let list_of = |range: Range<usize>| {
                if blocks {
                    let bits = |first| self.allowed_bits((!whole).then_some(allowed), &range, first);
                    self.rows.shortlist_blocks(query, range.clone(), bits, k, &floor)
                } else {
                    self.rows.shortlist(query, self.walk(allowed, range), spread == Spread::Sparse, k, &floor)
                }
            };
            if slots / CHUNK_SLOTS < 2 || rayon::current_num_threads() < 2 {
                list_of(0..slots)
            } else {
                braid_parallel::map(&self.chunks(CHUNK_SLOTS), |range| list_of(range.clone()).unwrap_or_else(empty))
                    .into_iter()
                    .reduce(signs::Shortlist::merge)
            }
        };
        let shortlist = shortlist.map(signs::Shortlist::into_slots).unwrap_or_default();
        let mut top = TopK::new(k);
        self.rows.rescore(query, shortlist.into_iter().map(|slot| (self.slot_ord[slot], slot)), &mut top);
        top.into_sorted()
    }

    /// The top `k` of a walk over every slot. From two chunks of `chunk` slots on, and where
    /// rayon has a second thread, the slots are cut into chunks (never between two slots of
    /// one ordinal, so a record is scored whole in one chunk) that rayon's threads take as they
    /// come free, each keeping its own top `k`; the chunks' tops are merged in [`better`]'s
    /// total order. A record in the overall top `k` is in its chunk's top `k` (any record that
    /// beats it there beats it overall), so the hits are the single walk's, bit for bit.
    fn walk_top(&self, query: &Query, k: usize, allowed: &AllowedSet, chunk: usize) -> Vec<(Ordinal, f32)> {
        let records = allowed.len();
        let slots = self.slot_ord.len();
        let spread = self.spread(allowed);
        let top_of = |range: Range<usize>| {
            let mut top = TopK::new(k);
            self.rows.scan(query, self.walk(allowed, range), records, spread, &mut top);
            top.into_sorted()
        };
        if slots / chunk.max(1) < 2 || rayon::current_num_threads() < 2 {
            return top_of(0..slots);
        }
        let mut hits: Vec<(Ordinal, f32)> =
            braid_parallel::map(&self.chunks(chunk), |range| top_of(range.clone())).into_iter().flatten().collect();
        hits.sort_unstable_by(better);
        hits.truncate(k);
        hits
    }

    /// `0..slots` cut every `chunk` slots, each cut moved on past the slots of the ordinal it
    /// would split.
    fn chunks(&self, chunk: usize) -> Vec<Range<usize>> {
        let slots = self.slot_ord.len();
        let mut out = Vec::with_capacity(slots / chunk.max(1) + 1);
        let mut start = 0;
        while start < slots {
            let mut end = start.saturating_add(chunk.max(1)).min(slots);
            while end < slots && self.slot_ord[end] == self.slot_ord[end - 1] {
                end += 1;
            }
            out.push(start..end);
            start = end;
        }
        out
    }

    /// `(ordinal, slot)` of every live slot of an allowed record within `range`, in slot
    /// order, found by testing every slot: 64 at a time ([`VectorStore::allowed_bits`]), so a
    /// sparse caller's walk takes no branch per slot.
    fn walk<'a>(&'a self, allowed: &'a AllowedSet, range: Range<usize>) -> impl Iterator<Item = (Ordinal, usize)> + 'a {
        range.clone().step_by(64).flat_map(move |first| {
            let mut bits = self.allowed_bits(Some(allowed), &range, first);
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let slot = first + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    (self.slot_ord[slot], slot)
                })
            })
        })
    }

    /// The live slots of allowed records among `first..first + 64` within `range`, bit `i` for
    /// slot `first + i` (what [`VectorStore::walk`] yields there); every live slot's where
    /// `allowed` is `None` (every live record allowed). Each slot's bit is computed, not
    /// branched on: a random tenth of the slots allowed would mispredict a branch per slot.
    fn allowed_bits(&self, allowed: Option<&AllowedSet>, range: &Range<usize>, first: usize) -> u64 {
        let (start, end) = (first.max(range.start), (first + 64).min(range.end).min(self.slot_ord.len()));
        if start >= end {
            return 0;
        }
        let (ords, live) = (&self.slot_ord[start..end], &self.live[start..end]);
        let bits = match allowed {
            None => live.chunks(8).enumerate().fold(0, |bits, (i, eight)| bits | u64::from(packed(eight)) << (8 * i)),
            Some(allowed) => ords
                .iter()
                .zip(live)
                .enumerate()
                .fold(0, |bits, (i, (&ord, &live))| bits | u64::from(live & allowed.contains(ord)) << i),
        };
        bits << (start - first)
    }

    /// How the walk's candidates lie: [`Spread::Dense`] when at least [`DENSE_PERCENT`] of the
    /// live records are allowed (decided by the allowed set's size, like the rest of the walk).
    fn spread(&self, allowed: &AllowedSet) -> Spread {
        if allowed.len().saturating_mul(100) >= self.slots.len().saturating_mul(DENSE_PERCENT) {
            Spread::Dense
        } else {
            Spread::Sparse
        }
    }

    /// Whether the exact scan finds the allowed records' slots by lookup (few allowed) rather
    /// than by walking every slot.
    fn looks_up(&self, allowed: &AllowedSet) -> bool {
        self.look_up_only || allowed.len().saturating_mul(LOOKUP_RATIO) < self.slot_ord.len()
    }

    fn maybe_rebuild(&mut self) {
        let slots = self.slot_ord.len();
        if self.dead > 0 && self.dead as f32 > self.params.rebuild_tombstone_fraction * slots as f32 {
            self.compact();
            if self.graph.is_some() {
                self.build_graph();
            }
        }
    }

    /// Live records from which a search can walk the graph, so from which the store keeps one.
    ///
    /// A search walks it for an allowed set of [`HnswParams::exact_threshold`] records or more
    /// that it does not screen. An int8 store keeps sign bits and screens every such set of
    /// fewer than [`signs::SCREEN_UP_TO`] records (from [`signs::SCREEN_REQUEST_FROM`] a
    /// request, which the threshold, 150,000 by default, is past), so below that many records
    /// no search walks its graph: building it would cost every bulk load, commit and open
    /// (linking each new record at `ef_construction`) for nothing.
    fn graph_from(&self) -> usize {
        let threshold = self.params.exact_threshold.max(1);
        if self.rows.keeps_signs() && threshold >= signs::SCREEN_REQUEST_FROM {
            threshold.max(signs::SCREEN_UP_TO)
        } else {
            threshold
        }
    }

    /// Builds the graph when the store has reached [`VectorStore::graph_from`] records and has
    /// none; drops it when the store is below.
    fn fit_graph(&mut self) {
        let wanted = cfg!(feature = "hnsw") && self.slots.len() >= self.graph_from();
        match (wanted, self.graph.is_some()) {
            (true, false) => self.build_graph(),
            (false, true) => {
                self.graph = None;
                self.journal.forget();
            }
            _ => {}
        }
    }

    /// Drops tombstoned slots from the arena; slot numbers change, so the graph must follow.
    fn compact(&mut self) {
        self.journal.forget();
        self.rows = self.rows.compacted(&self.live);
        self.arena = crate::room::next_arena();
        self.slot_ord = self.slot_ord.iter().zip(&self.live).filter(|(_, &live)| live).map(|(&ord, _)| ord).collect();
        self.live = vec![true; self.slot_ord.len()];
        self.slots = first_slots(&self.slot_ord, &self.live).expect("compaction keeps each record's slots adjacent");
        self.dead = 0;
    }

    /// Without the `hnsw` feature there is no graph to build ([`VectorStore::fit_graph`] never
    /// asks for one).
    #[cfg(not(feature = "hnsw"))]
    fn build_graph(&mut self) {
        self.graph = None;
    }

    /// A fresh graph over every live slot.
    #[cfg(feature = "hnsw")]
    fn build_graph(&mut self) {
        let started = std::time::Instant::now();
        self.journal.forget();
        self.graph = Some(Graph::new(&self.params));
        self.loaded = false;
        self.extend_graph();
        tracing::debug!(target: "braid::vector", points = self.slots.len(), ms = started.elapsed().as_millis() as u64, "graph rebuilt");
    }
}

/// The exact scan looks each allowed ordinal's slot up (a hash lookup, a few hundred
/// nanoseconds in a large store) when fewer than one in this many slots is allowed, and
/// otherwise walks every slot in memory order testing the allowed set's bits (a nanosecond or
/// two a slot). At 1,000,000 int8 vectors the walk gathered 10 % of them in 9–12 ms where the
/// lookups took 41–44 ms, and 1 % in 1.6–2.1 ms against 2.1–6.2 (`examples/npy_sweep.rs ...
/// scan`).
const LOOKUP_RATIO: usize = 256;

/// The share of live records allowed (in percent) from which the exact scan's walk is
/// [`Spread::Dense`] and prefetches nothing: at 300,000 rows out of cache, 70 % allowed scanned
/// faster with prefetching and 85 % without (measured in [`Spread`]'s docs).
const DENSE_PERCENT: usize = 80;

/// How searches choose their path, for paired measurements and recall (`BRAID_VECTOR_PATHS`,
/// read once): by default as [`VectorStore::search`] says; `exact` scans every search exactly
/// (no graph, no screen: the ground truth), `unscreened` never screens (the paths before the
/// sign-bit screen).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Paths {
    Default,
    Exact,
    Unscreened,
}

/// Whether stores keep sign bits to screen with (not where `BRAID_VECTOR_PATHS` turns the
/// screen off, so a measurement of the paths before it pays neither its memory nor its open).
pub(crate) fn keeps_signs() -> bool {
    paths() == Paths::Default
}

fn paths() -> Paths {
    static PATHS: std::sync::OnceLock<Paths> = std::sync::OnceLock::new();
    *PATHS.get_or_init(|| match std::env::var("BRAID_VECTOR_PATHS").as_deref() {
        Ok("exact") => Paths::Exact,
        Ok("unscreened") => Paths::Unscreened,
        _ => Paths::Default,
    })
}

/// Up to eight flags as the bits of a byte, flag `i` at bit `i`. Eight whole flags are read as
/// one little-endian word, a byte each (0 or 1, at bits 0, 8, …, 56), and one multiplication
/// moves byte `i`'s bit to bit `56 + i` with no two partial products meeting (so no carries).
/// A screened scan of everyone's records on the 1M scale corpus builds a million slots' bits a
/// query.
fn packed(flags: &[bool]) -> u8 {
    match <&[bool; 8]>::try_from(flags) {
        Ok(eight) => {
            let word = u64::from_le_bytes(eight.map(u8::from));
            (word.wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8
        }
        Err(_) => flags.iter().enumerate().fold(0, |bits, (i, &f)| bits | u8::from(f) << i),
    }
}

/// Slots a chunk of the exact scan's walk covers when the walk runs in parallel
/// ([`VectorStore::walk_top`]): 16 chunks at 1,000,000 slots, each some hundreds of
/// microseconds of work at 10 % allowed, small enough for an idle thread to take the last
/// ones; a store under two chunks is walked on one thread.
const CHUNK_SLOTS: usize = 1 << 16;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::tests::unit;
    use braid_core::{AccessPolicy, OrdSet, Principal, Visibility};

    fn allowed(ords: impl IntoIterator<Item = Ordinal>) -> AllowedSet {
        let everyone = Visibility::new(Principal::public(), AccessPolicy::Public, None);
        AllowedSet::new(everyone, ords.into_iter().collect::<OrdSet>())
    }

    /// Every pattern of up to eight flags packs to its bits, flag `i` at bit `i`.
    #[test]
    fn packed_flags_are_their_bits() {
        for len in 0..=8 {
            for pattern in 0u32..1 << len {
                let flags: Vec<bool> = (0..len).map(|i| pattern >> i & 1 == 1).collect();
                assert_eq!(u32::from(packed(&flags)), pattern, "{flags:?}");
            }
        }
    }

    /// A store that never builds a graph, of `n` records of one to three passages, every 7th
    /// then replaced by two new passages and every 13th from the 5th deleted: runs of one
    /// ordinal with tombstones between them.
    fn churned(quantization: Quantization, dim: usize, n: u64) -> VectorStore {
        churned_with(HnswParams { quantization, exact_threshold: usize::MAX, ..HnswParams::default() }, dim, n)
    }

    /// [`churned`] with the store's parameters given.
    fn churned_with(params: HnswParams, dim: usize, n: u64) -> VectorStore {
        let mut store = VectorStore::new(dim, params);
        let records: Vec<(Ordinal, Vec<Vec<f32>>)> =
            (0..n).map(|ord| (ord, (0..1 + ord % 3).map(|p| unit(ord * 7 + p, dim)).collect())).collect();
        store.insert_passages(&records).unwrap();
        for ord in (0..n).step_by(7) {
            store.insert_passages(&[(ord, vec![unit(ord + 70_000, dim), unit(ord + 80_000, dim)])]).unwrap();
        }
        for ord in (5..n).step_by(13) {
            store.delete(ord);
        }
        store
    }

    /// A room made for a commit's vectors takes them without the arena growing, and the store
    /// then answers as one whose arena grew by itself; a room copied before the arena changed
    /// (another append, a compaction) is refused, and the arena grows as before.
    #[test]
    fn a_room_made_beforehand_takes_the_commit_and_a_stale_one_is_refused() {
        for quantization in [Quantization::F32, Quantization::Int8] {
            let dim = 24;
            // A compacted arena is exactly full, as one read from disk is.
            let full = || {
                let mut store = churned(quantization, dim, 300);
                store.compact();
                store
            };
            let later: Vec<(Ordinal, Vec<Vec<f32>>)> = (1000..1040).map(|o| (o, vec![unit(o, dim)])).collect();
            let mut roomy = full();
            let checked = roomy.check_passages(&later).unwrap();
            let room = roomy.room_for(later.len()).expect("a full arena lacks room");
            drop(roomy.make_room(room).expect("the arena the room was copied from"));
            assert!(roomy.room_for(later.len()).is_none(), "{quantization:?}: room made");
            let capacity = roomy.rows.heap_bytes();
            roomy.insert_checked(&checked).unwrap();
            assert_eq!(roomy.rows.heap_bytes(), capacity, "{quantization:?}: the commit grew nothing");
            let mut grown = full();
            grown.insert_passages(&later).unwrap();
            let everyone = allowed(0..2000);
            for q in 0..8 {
                let query = unit(50_000 + q, dim);
                let hits = |s: &VectorStore| {
                    s.search(&query, 20, &everyone)
                        .unwrap()
                        .hits
                        .iter()
                        .map(|h| (h.0, h.1.to_bits()))
                        .collect::<Vec<_>>()
                };
                assert_eq!(hits(&roomy), hits(&grown), "{quantization:?}, query {q}");
            }

            let mut appended = full();
            let room = appended.room_for(later.len()).unwrap();
            appended.insert_passages(&later[..1]).unwrap();
            assert!(appended.make_room(room).is_none(), "{quantization:?}: rows appended since the copy");
            let mut compacted = full();
            let room = compacted.room_for(later.len()).unwrap();
            compacted.delete(1);
            compacted.compact();
            assert!(compacted.make_room(room).is_none(), "{quantization:?}: compacted since the copy");
            assert_eq!(compacted.len(), full().len() - 1);
        }
    }

    /// An int8 store screens every search a graph could answer below a million records, so it
    /// keeps no graph there; an f32 store of as many records does, and a lower threshold than
    /// the screen's (a request below [`signs::SCREEN_REQUEST_FROM`] is never screened) keeps
    /// one in an int8 store too.
    #[test]
    #[cfg(feature = "hnsw")]
    fn an_int8_store_keeps_no_graph_its_searches_would_not_walk() {
        let (dim, n) = (4, signs::SCREEN_REQUEST_FROM as u64);
        let records: Vec<(Ordinal, Vec<f32>)> = (0..n).map(|o| (o, unit(o, dim))).collect();
        let params = |quantization, exact_threshold| HnswParams {
            m: 4,
            ef_construction: 8,
            exact_threshold,
            quantization,
            ..HnswParams::default()
        };
        let mut int8 = VectorStore::new(dim, params(Quantization::Int8, n as usize));
        int8.insert_batch(&records).unwrap();
        assert!(!int8.has_graph());
        let found = int8.search(&unit(n + 1, dim), 10, &allowed(0..n)).unwrap();
        assert_eq!(found.path, SearchPath::Screened);
        assert_eq!(found.hits.len(), 10);

        let mut f32 = VectorStore::new(dim, params(Quantization::F32, n as usize));
        f32.insert_batch(&records).unwrap();
        assert!(f32.has_graph());

        int8.set_exact_threshold(n as usize - 1);
        assert!(int8.has_graph(), "below the screen's request size the graph answers");
        let found = int8.search(&unit(n + 1, dim), 10, &allowed(0..n - 1)).unwrap();
        assert_eq!(found.path, SearchPath::Hnsw);
    }

    /// Records inserted unlinked, their links searched apart and linked one at a time, land in
    /// the graph as an insert puts them there: each one's graph walk finds it.
    #[test]
    #[cfg(feature = "hnsw")]
    fn links_prepared_apart_make_the_graph_an_insert_makes() {
        let dim = 16;
        let params = HnswParams { exact_threshold: 50, ..HnswParams::default() };
        let first: Vec<(Ordinal, Vec<f32>)> = (0..300).map(|o| (o, unit(o, dim))).collect();
        let later: Vec<(Ordinal, Vec<Vec<f32>>)> = (300..340).map(|o| (o, vec![unit(o, dim)])).collect();
        let mut at_once = VectorStore::new(dim, params.clone());
        let mut apart = VectorStore::new(dim, params);
        for store in [&mut at_once, &mut apart] {
            store.insert_batch(&first).unwrap();
            assert!(store.has_graph());
        }
        at_once.insert_passages(&later).unwrap();
        let checked = apart.check_passages(&later).unwrap();
        apart.insert_unlinked(&checked).unwrap();
        let mut prepared = apart.prepare_links();
        let mut linked = 0;
        while apart.link_next(&mut prepared) {
            linked += 1;
        }
        assert_eq!(linked, later.len() - 1, "one record a call");
        let every = allowed(0..340);
        for (ord, vectors) in &later {
            let hits = apart.search(&vectors[0], 1, &every).unwrap();
            assert_eq!((hits.path, hits.hits[0].0), (SearchPath::Hnsw, *ord));
        }
        // Nothing left to link: the graph is settled, and saving it records the new points.
        let mut none = apart.prepare_links();
        assert!(!apart.link_next(&mut none));
        let (a, b) = (at_once.graph.as_ref().unwrap(), apart.graph.as_ref().unwrap());
        assert_eq!((a.points(), b.points()), (340, 340));
        assert_eq!(b.changes(300).levels.len(), later.len());
    }

    /// Both ways of finding the allowed slots (lookups, and the walk over every slot) give the
    /// same hits, bit for bit, with passages, replacements and deletes, on both kinds of rows.
    #[test]
    fn the_lookup_and_the_walk_find_the_same_hits() {
        let dim = 24;
        for quantization in [Quantization::F32, Quantization::Int8] {
            let store = churned(quantization, dim, 3_000);
            for (i, size) in [1usize, 2, 5, 9, 20].into_iter().enumerate() {
                let set = allowed((0..size as u64).map(|j| (j * 263 + i as u64 * 31) % 3_000));
                assert!(store.looks_up(&set), "{size} allowed of {} slots", store.slot_ord.len());
                let query = store.rows.query(unit(900 + i as u64, dim));
                let bits =
                    |hits: Vec<(Ordinal, f32)>| hits.into_iter().map(|(o, s)| (o, s.to_bits())).collect::<Vec<_>>();
                let by_lookup = bits(store.scan(&query, 10, &set, false, false));
                for spread in [Spread::Dense, Spread::Sparse] {
                    let mut top = TopK::new(10);
                    store.rows.scan(&query, store.walk(&set, 0..store.slot_ord.len()), set.len(), spread, &mut top);
                    assert_eq!(by_lookup, bits(top.into_sorted()), "{quantization:?}, {size} allowed, {spread:?}");
                }
            }
        }
    }

    /// A store that looks its records up (the pool) is never screened, however many of its
    /// records a request allows; the same store walked is.
    #[test]
    fn a_store_that_looks_records_up_is_never_screened() {
        let mut store = churned(Quantization::Int8, 8, signs::SCREEN_FROM as u64 + 100);
        assert!(store.rows.keeps_signs());
        let set = allowed(0..signs::SCREEN_FROM as u64 + 100);
        assert!(store.screens(&set, signs::SCREEN_REQUEST_FROM));
        store.set_look_up_only(true);
        assert!(!store.screens(&set, signs::SCREEN_REQUEST_FROM));
    }

    /// The walk, 64 slots at a time, yields the live slots of allowed records in slot order,
    /// as testing each slot does, over ranges that start and end anywhere in a block (every
    /// third record allowed, tombstones between runs of one ordinal).
    #[test]
    fn the_walk_yields_each_live_allowed_slot_in_order() {
        let store = churned(Quantization::Int8, 8, 1_000);
        let set = allowed((0..1_000).filter(|ord| ord % 3 != 1));
        let slots = store.slot_ord.len();
        for range in [0..slots, 1..slots, 63..64, 64..65, 5..200, 130..131, slots - 70..slots, 7..7] {
            let by_slot: Vec<(Ordinal, usize)> = range
                .clone()
                .filter(|&slot| store.live[slot] && set.contains(store.slot_ord[slot]))
                .map(|slot| (store.slot_ord[slot], slot))
                .collect();
            assert_eq!(store.walk(&set, range.clone()).collect::<Vec<_>>(), by_slot, "{range:?}");
        }
    }

    /// The walk cut into chunks on several threads finds the single walk's hits, bit for bit,
    /// whatever the chunk size (records of one to three passages, some replaced, some deleted,
    /// so cuts fall inside records and beside tombstones), called on a pool's worker or from a
    /// thread outside the pool (which scans chunks itself).
    #[test]
    fn the_chunked_walk_finds_the_single_walks_hits() {
        let dim = 16;
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        for quantization in [Quantization::F32, Quantization::Int8] {
            let store = churned(quantization, dim, 2_000);
            for (i, every) in [1u64, 2, 10].into_iter().enumerate() {
                let set = allowed((0..2_000u64).filter(|o| o % every == 0));
                let query = store.rows.query(unit(400 + i as u64, dim));
                for k in [1, 10, 100] {
                    let single = store.walk_top(&query, k, &set, usize::MAX);
                    for chunk in [1, 7, 64, 1_000] {
                        // On a pool's worker, and from this thread (which takes part itself).
                        let on_pool = pool.install(|| store.walk_top(&query, k, &set, chunk));
                        let from_here = store.walk_top(&query, k, &set, chunk);
                        for chunked in [on_pool, from_here] {
                            assert_eq!(single.len(), chunked.len());
                            for (a, b) in single.iter().zip(&chunked) {
                                assert_eq!(
                                    (a.0, a.1.to_bits()),
                                    (b.0, b.1.to_bits()),
                                    "{quantization:?} every {every}, k {k}, chunk {chunk}"
                                );
                            }
                        }
                    }
                }
            }
            assert!(store.chunks(7).windows(2).all(|w| store.slot_ord[w[0].end - 1] != store.slot_ord[w[1].start]));
        }
    }
    /// An int8 store keeps sign bits, through a save and an open, and a search of many allowed
    /// records is screened by them: every hit is an allowed, live record with its exact int8 score
    /// (bit for bit), most of the exact top 10 are found, `search_exact` stays exact, and a
    /// request of few records scans exactly.
    #[test]
    fn a_screened_search_returns_allowed_records_with_their_exact_scores() {
        let (dim, n) = (64, signs::SCREEN_REQUEST_FROM as u64 + 2_000);
        let store = int8_store_with_gaps(dim, n, 11);
        assert!(store.rows.keeps_signs());
        let dir = tempfile::tempdir().unwrap();
        store.save(dir.path()).unwrap();
        let store = VectorStore::open(dir.path()).unwrap();
        assert!(store.rows.keeps_signs());
        let everyone = allowed(0..n);
        let mut found_of_ten = 0;
        for q in 0..10 {
            let query = unit(1_000_000 + q, dim);
            let exact = store.search_exact(&query, 10, &everyone).unwrap();
            let all: std::collections::HashMap<Ordinal, u32> = store
                .search_exact(&query, n as usize, &everyone)
                .unwrap()
                .into_iter()
                .map(|(o, s)| (o, s.to_bits()))
                .collect();
            let found = store.search(&query, 10, &everyone).unwrap();
            assert_eq!(found.path, SearchPath::Screened);
            assert_eq!(found.hits.len(), 10);
            for (ord, score) in &found.hits {
                assert_eq!(all.get(ord), Some(&score.to_bits()), "ord {ord}: not live, or another score");
            }
            found_of_ten += exact.iter().filter(|h| found.hits.contains(h)).count();
            // Few allowed: the exact scan.
            let few = allowed((0..n).step_by(5));
            let found = store.search(&query, 10, &few).unwrap();
            assert_eq!(found.path, SearchPath::Exact);
            assert_eq!(found.hits, store.search_exact(&query, 10, &few).unwrap());
        }
        assert!(found_of_ten >= 80, "{found_of_ten} of the exact top 10s' 100 hits found");
    }

    /// An int8 store that never builds a graph, of records `0..n` of `dim` dimensions, every
    /// `gap`-th from the first deleted (tombstones between live slots).
    fn int8_store_with_gaps(dim: usize, n: u64, gap: usize) -> VectorStore {
        let params =
            HnswParams { quantization: Quantization::Int8, exact_threshold: usize::MAX, ..HnswParams::default() };
        let mut store = VectorStore::new(dim, params);
        store.insert_batch(&(0..n).map(|o| (o, unit(o, dim))).collect::<Vec<_>>()).unwrap();
        for ord in (0..n).step_by(gap) {
            store.delete(ord);
        }
        store
    }

    /// A screened walk over mostly allowed slots, 64 at a time where the CPU can, finds what
    /// the walk slot by slot finds, bit for bit: with every live record allowed (told so or
    /// not), and with some left out; over several chunks, with dead slots between.
    #[test]
    fn a_screen_in_blocks_finds_what_the_walk_finds() {
        let (dim, n) = (8, 2 * CHUNK_SLOTS as u64 + 5_000);
        let store = int8_store_with_gaps(dim, n, 97);
        let live: Vec<Ordinal> = store.ords().collect();
        let bits = |hits: Vec<(Ordinal, f32)>| hits.into_iter().map(|(o, s)| (o, s.to_bits())).collect::<Vec<_>>();
        for q in 0..3 {
            let query = store.rows.query(normalised(&unit(1_000_000 + q, dim)).unwrap());
            for (set, whole) in [
                (allowed(live.iter().copied()), true),
                (allowed(live.iter().copied()), false),
                (allowed(live.iter().copied().filter(|o| o % 31 != 0)), false),
            ] {
                let slots = store.slot_ord.len();
                let walked =
                    store.rows.shortlist(&query, store.walk(&set, 0..slots), false, 10, &signs::Floor::new()).unwrap();
                let mut top = TopK::new(10);
                let mut listed = walked.into_sorted();
                listed.sort_unstable_by_key(|&(_, slot)| slot);
                store.rows.rescore(&query, listed.into_iter().map(|(_, slot)| (store.slot_ord[slot], slot)), &mut top);
                let screened = store.screened(&query, 10, &set, whole);
                assert_eq!(bits(screened), bits(top.into_sorted()), "query {q}, whole {whole}, {} allowed", set.len());
            }
        }
    }

    /// A record's vectors come back whole and in the order inserted — its passages, the
    /// first the one `vector` returns — past replacements and deletes (tombstones between
    /// runs), a save and reopen, and a compaction; a deleted or unknown record has none.
    #[test]
    fn passage_vectors_are_a_records_rows_in_order() {
        let dim = 8;
        let n = 60;
        // Never compacted on its own, so the tombstones stay between the runs until asked.
        let params =
            HnswParams { exact_threshold: usize::MAX, rebuild_tombstone_fraction: 1.0, ..HnswParams::default() };
        let mut store = churned_with(params, dim, n);
        let inserted = |ord: Ordinal| -> Option<Vec<Vec<f32>>> {
            if ord >= 5 && (ord - 5).is_multiple_of(13) {
                return None;
            }
            let rows: Vec<Vec<f32>> = match ord % 7 {
                0 => vec![unit(ord + 70_000, dim), unit(ord + 80_000, dim)],
                _ => (0..1 + ord % 3).map(|p| unit(ord * 7 + p, dim)).collect(),
            };
            Some(rows.iter().map(|v| normalised(v).unwrap()).collect())
        };
        let check = |store: &VectorStore, when: &str| {
            for ord in 0..n + 2 {
                let got = store.passage_vectors(ord);
                assert_eq!(got, if ord < n { inserted(ord) } else { None }, "ord {ord}, {when}");
                assert_eq!(got.map(|rows| rows[0].clone()), store.vector(ord), "ord {ord}, {when}");
            }
        };
        check(&store, "as inserted");
        let dir = tempfile::tempdir().unwrap();
        store.save(dir.path()).unwrap();
        check(&VectorStore::open(dir.path()).unwrap(), "reopened");
        assert!(store.dead > 0);
        store.compact();
        check(&store, "compacted");
    }

    /// A reopened store maps each ordinal to its first slot as the saved one did; a slot table
    /// (its checksum made good again) in which a record's slots are adjacent opens as one
    /// record of passages, one in which an ordinal is live in two separate places is refused.
    #[test]
    fn an_opened_store_maps_adjacent_slots_to_one_record_and_refuses_an_ordinal_live_twice() {
        let store = churned(Quantization::Int8, 8, 300);
        let dir = tempfile::tempdir().unwrap();
        store.save(dir.path()).unwrap();
        let reopened = VectorStore::open(dir.path()).unwrap();
        assert_eq!((reopened.slots.clone(), reopened.dead), (store.slots.clone(), store.dead));

        let mut plain = VectorStore::new(3, HnswParams { exact_threshold: usize::MAX, ..HnswParams::default() });
        for ord in 1..=3 {
            plain.insert(ord, &[1.0, ord as f32, 0.5]).unwrap();
        }
        plain.save(dir.path()).unwrap();
        let file = dir.path().join(persist::VECTORS_FILE);
        let good = std::fs::read(&file).unwrap();
        // Rows start after a 57-byte header; an f32 row of 3 dimensions is 8 + 1 + 12 bytes.
        let with_ord = |slot: usize, ord: Ordinal| {
            let mut bytes = good.clone();
            let at = 57 + slot * 21;
            bytes[at..at + 8].copy_from_slice(&ord.to_le_bytes());
            let body = bytes.len() - 4;
            let crc = crc32fast::hash(&bytes[..body]);
            bytes[body..].copy_from_slice(&crc.to_le_bytes());
            std::fs::write(&file, bytes).unwrap();
            VectorStore::open(dir.path())
        };
        let passages = with_ord(1, 1).unwrap();
        assert_eq!((passages.len(), passages.vectors()), (2, 3));
        match with_ord(2, 1) {
            Err(Error::Corrupt { path, reason }) => {
                assert_eq!(path, file);
                assert!(reason.contains("two places"), "{reason}");
            }
            other => panic!("an ordinal live twice gave {other:?}"),
        }
    }
}
