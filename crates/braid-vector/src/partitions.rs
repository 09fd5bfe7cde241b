//! Tenant partitions: each large tenant's vectors in a store and graph of its own, small
//! tenants together in a pool that is only ever scanned, records without a tenant in a shared
//! store. A search visits only the partitions its principal's tenants name.
//!
//! Qdrant calls this tiered multitenancy: a tenant starts in the pool, and once it holds
//! [`PROMOTE_AT`] records its vectors move to a partition of its own ("promotion"), where they
//! stay. The pool has no graph and its exact scan looks the allowed records up one by one
//! ([`VectorStore::set_look_up_only`]), so what a search there costs is a function of the
//! records its principal may see; a tenant's own partition walks its own graph past
//! [`HnswParams::exact_threshold`] allowed records, and no other tenant's vector is ever in it.
//!
//! **Placement** is decided by a record's tenant tokens (`tenant:…` in its ACL): none, the
//! shared partition; one, its tenant's partition once promoted, else the pool; several, the
//! pool (such records are rare, and never promoted). Each partition is a [`VectorStore`] in a
//! directory of its own — the shared one in the store's directory itself (where a store from
//! before partitions was), the pool in `pool/`, a tenant in `tenant-<hex of its name>/` — with
//! its own base file and log, so a commit appends to the logs of the partitions it changed and
//! to no other, and a partition's directory is a unit a second machine could take.
//!
//! **Crash safety.** A save writes the tenant partitions first, then the pool, then the shared
//! one: a record moved (by a promotion, or out of a store written before partitions) is durable
//! in its new partition before its tombstone is in the old one. Opening reads every partition
//! directory there is; a record found in two keeps the copy in the partition read first (tenant
//! partitions, then the pool, then the shared one), and [`PartitionedStore::settle`] then moves
//! every record whose placement is not its tenants' — which is how a store saved before
//! partitions migrates: its tenants' records leave the shared store in memory on open and on
//! disk with the next save. Opening never writes.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use braid_core::{AllowedSet, Error, OrdSet, Ordinal, Principal, Result, POOL_DIR_NAME as POOL_DIR};
use rayon::prelude::*;

use crate::journal::{DiskMark, MergePolicy};
use crate::merge::MergeJob;
use crate::params::{HnswParams, Quantization};
use crate::persist::VECTORS_FILE;
use crate::room::{Room, Spare};
use crate::search::{better, SearchPath, VectorSearch};
use crate::store::{CheckedRecord, PreparedLinks, VectorStore};

pub use braid_core::PROMOTE_AT;

/// Where a record's vectors live.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Partition {
    /// A promoted tenant's own partition, named by its tenant token (`tenant:acme`).
    Tenant(String),
    /// The pool: every tenant not yet promoted, and records of several tenants.
    Pool,
    /// Records without a tenant.
    Shared,
}

impl Partition {
    /// The partition's name: `shared`, `pool`, or `tenant-` and the hex of the tenant's name
    /// (the name of its directory, and the key of its mark in an index's manifest).
    pub fn name(&self) -> String {
        match self {
            Partition::Shared => "shared".into(),
            Partition::Pool => POOL_DIR.into(),
            Partition::Tenant(token) => braid_core::tenant_dir_name(token),
        }
    }

    /// The directory of this partition's files under the store's directory `root`.
    pub fn dir(&self, root: &Path) -> PathBuf {
        match self {
            Partition::Shared => root.to_path_buf(),
            other => root.join(other.name()),
        }
    }

    /// The partition a directory under the store's directory holds, if it is one.
    fn from_dir_name(name: &str) -> Option<Partition> {
        if name == POOL_DIR {
            return Some(Partition::Pool);
        }
        braid_core::tenant_of_dir_name(name).map(Partition::Tenant)
    }
}

/// A record's vectors checked by [`PartitionedStore::check_passages`], with the tenants that
/// place it.
#[derive(Debug, Clone)]
pub struct PlacedRecord {
    record: CheckedRecord,
    tenants: Box<[String]>,
}

/// One partition: its store and the ordinals it holds.
struct Part {
    store: VectorStore,
    members: OrdSet,
}

impl Part {
    fn new(store: VectorStore) -> Part {
        let members = store.ords().collect();
        Part { store, members }
    }
}

/// Unit vectors keyed by record ordinal, kept in one [`VectorStore`] per partition (see the
/// module docs) and searched within an [`AllowedSet`] as one store would be: a search's hits
/// are the best of each visited partition's, merged in the same total order (score, then the
/// lower ordinal), so where every partition scans exactly they are those of one store holding
/// every vector, bit for bit.
///
/// ```
/// use braid_core::{AccessPolicy, AllowedSet, OrdSet, Principal, Visibility};
/// use braid_vector::{HnswParams, Partition, PartitionedStore};
///
/// # fn main() -> braid_core::Result<()> {
/// let mut store = PartitionedStore::new(2, HnswParams::default());
/// store.set_promote_at(2);
/// let items = [(1, vec![vec![1.0, 0.0]]), (2, vec![vec![0.0, 1.0]]), (3, vec![vec![0.7, 0.7]])];
/// let tenants = |ord: u64| if ord == 3 { vec![] } else { vec!["tenant:acme".to_string()] };
/// let placed = store.check_passages(&items, tenants)?;
/// store.insert_checked(&placed)?;
/// assert_eq!(store.partition_of(1), Some(Partition::Tenant("tenant:acme".into()))); // promoted at 2
/// assert_eq!(store.partition_of(3), Some(Partition::Shared));
///
/// let acme = Visibility::new(Principal::from_verified_tokens(["tenant:acme"]), AccessPolicy::Public, None);
/// let allowed = AllowedSet::new(acme, (1..=3).collect::<OrdSet>());
/// let found = store.search(&[0.9, 0.1], 10, &allowed)?;
/// assert_eq!(found.hits.iter().map(|h| h.0).collect::<Vec<_>>(), [1, 3, 2]);
/// # Ok(())
/// # }
/// ```
pub struct PartitionedStore {
    /// The background collapse of the arenas into huge pages, stopped when the store is
    /// dropped; first, so that it stops before the partitions' arenas are freed.
    collapsing: crate::huge_pages::Collapsing,
    dim: usize,
    /// The parameters of the shared partition and of every tenant partition made here.
    params: HnswParams,
    promote_at: usize,
    /// Every partition's ([`VectorStore::set_merge_policy`]).
    merge_policy: MergePolicy,
    parts: BTreeMap<Partition, Part>,
    /// The tenant of each pooled record of exactly one tenant (what a promotion moves).
    pooled: HashMap<Ordinal, String>,
    /// How many records each tenant has in the pool (of exactly one tenant).
    pool_counts: HashMap<String, usize>,
}

impl std::fmt::Debug for PartitionedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartitionedStore")
            .field("dim", &self.dim)
            .field("len", &self.len())
            .field("partitions", &self.parts.len())
            .finish_non_exhaustive()
    }
}

impl PartitionedStore {
    /// An empty store for vectors of `dim` dimensions; `params` are the shared partition's and
    /// every tenant partition's (the pool keeps no graph).
    pub fn new(dim: usize, params: HnswParams) -> Self {
        let shared = VectorStore::new(dim, params.clone());
        Self::over(shared)
    }

    /// A store whose shared partition is `shared` (a store saved before partitions, say);
    /// nothing else yet. Its records with tenants move out at [`PartitionedStore::settle`].
    pub fn over(shared: VectorStore) -> Self {
        let (dim, params) = (shared.dim(), shared.params().clone());
        let mut parts = BTreeMap::new();
        parts.insert(Partition::Shared, Part::new(shared));
        PartitionedStore {
            collapsing: crate::huge_pages::Collapsing::default(),
            dim,
            params,
            promote_at: PROMOTE_AT,
            merge_policy: MergePolicy::default(),
            parts,
            pooled: HashMap::new(),
            pool_counts: HashMap::new(),
        }
    }

    /// Opens the partitions saved under `root`: the shared one in `root` itself (`shared`:
    /// what [`VectorStore::open_checked`] checks it against), every other partition directory
    /// found there, each checked against its mark in `marks` (by [`Partition::name`]). Call
    /// [`PartitionedStore::settle`] next with the records' tenants.
    ///
    /// # Errors
    ///
    /// As [`VectorStore::open_checked`]; [`Error::Corrupt`] for a partition `marks` names
    /// that is not there (its acknowledged vectors are lost), or of another dimension.
    pub fn open(root: &Path, shared: Option<&DiskMark>, marks: &BTreeMap<String, DiskMark>) -> Result<Self> {
        let mut found: Vec<Partition> = Vec::new();
        match std::fs::read_dir(root) {
            Ok(entries) => {
                for entry in entries {
                    let entry = entry.map_err(|e| Error::io(root, e))?;
                    let name = entry.file_name();
                    let Some(partition) = name.to_str().and_then(Partition::from_dir_name) else { continue };
                    if entry.path().join(VECTORS_FILE).exists() {
                        found.push(partition);
                    }
                }
            }
            Err(e) => return Err(Error::io(root, e)),
        }
        for name in marks.keys() {
            if !found.iter().any(|p| &p.name() == name) {
                return Err(Error::Corrupt {
                    path: root.join(name),
                    reason: "missing, but the manifest records vectors in it".into(),
                });
            }
        }
        // Tenant partitions first, then the pool, then the shared one: a record in two keeps
        // the copy read first (see the module docs).
        found.sort();
        let (shared, stores) = open_all(root, shared, &found, marks);
        let mut store = Self::over(shared?);
        let mut claimed: OrdSet = OrdSet::new();
        let mut opened = Vec::with_capacity(found.len());
        for (partition, part) in found.into_iter().zip(stores) {
            let dir = partition.dir(root);
            let mut part = part?;
            if part.dim() != store.dim {
                return Err(Error::Corrupt {
                    path: dir,
                    reason: format!("vectors of {} dimensions beside {}", part.dim(), store.dim),
                });
            }
            if partition == Partition::Pool {
                part.set_look_up_only(true);
            }
            let twice: Vec<Ordinal> = part.ords().filter(|&o| claimed.contains(o)).collect();
            for ord in twice {
                part.delete(ord);
            }
            let part = Part::new(part);
            for ord in part.members.iter() {
                claimed.insert(ord);
            }
            opened.push((partition, part));
        }
        let twice: Vec<Ordinal> =
            store.parts[&Partition::Shared].members.iter().filter(|&o| claimed.contains(o)).collect();
        for ord in twice {
            store.remove(ord);
        }
        store.parts.extend(opened);
        // Huge pages for the arenas, made on a thread of its own: the open does not wait.
        store.collapsing = crate::huge_pages::collapse_in_background(store.huge_page_regions());
        Ok(store)
    }

    /// Every partition's arenas as [`crate::huge_pages`] collapses them.
    fn huge_page_regions(&self) -> Vec<crate::huge_pages::Region> {
        self.parts.values().flat_map(|p| p.store.huge_page_regions()).collect()
    }

    /// Places every record where its tenants say (`tenants`: each tenant token with the
    /// ordinals of its records, as the lexical index holds them), moving in memory those that
    /// are elsewhere — records of a store saved before partitions, or of a promotion a crash
    /// interrupted — then promotes every pooled tenant past the threshold. The next save
    /// writes what moved.
    ///
    /// # Errors
    ///
    /// As [`VectorStore::copy_from`] (never for partitions of one store).
    pub fn settle(&mut self, tenants: &[(String, OrdSet)]) -> Result<()> {
        let mut with_tenant = OrdSet::new();
        let mut several = OrdSet::new();
        for (_, ords) in tenants {
            several.union_with(&with_tenant.intersection(ords));
            with_tenant.union_with(ords);
        }
        // The records whose tenants must be read: the pool's, and any that may be misplaced.
        let mut candidates = OrdSet::new();
        for (partition, part) in &self.parts {
            match partition {
                Partition::Pool => candidates.union_with(&part.members),
                Partition::Shared => candidates.union_with(&part.members.intersection(&with_tenant)),
                Partition::Tenant(token) => {
                    let own = tenants.iter().find(|(t, _)| t == token).map(|(_, o)| o);
                    for ord in part.members.iter() {
                        if own.is_none_or(|o| !o.contains(ord)) || several.contains(ord) {
                            candidates.insert(ord);
                        }
                    }
                }
            }
        }
        let mut of: HashMap<Ordinal, Vec<String>> = HashMap::new();
        for (token, ords) in tenants {
            for ord in ords.intersection(&candidates).iter() {
                of.entry(ord).or_default().push(token.clone());
            }
        }
        self.pooled.clear();
        self.pool_counts.clear();
        let mut moves: BTreeMap<(Partition, Partition), Vec<Ordinal>> = BTreeMap::new();
        for ord in candidates.iter() {
            let tenants = of.get(&ord).map_or(&[][..], Vec::as_slice);
            let (Some(from), to) = (self.partition_of(ord), self.home(tenants)) else { continue };
            if to == Partition::Pool {
                self.note_pooled(ord, tenants);
            }
            if from != to {
                moves.entry((from, to)).or_default().push(ord);
            }
        }
        for ((from, to), ords) in moves {
            self.move_records(&from, &to, &ords)?;
        }
        self.promote_due()
    }

    /// The number of dimensions every vector has.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The parameters of the shared partition (and of every tenant partition).
    pub fn params(&self) -> &HnswParams {
        &self.params
    }

    /// How every partition holds its vectors.
    pub fn quantization(&self) -> Quantization {
        self.params.quantization
    }

    /// Changes the graph search width of every partition ([`VectorStore::set_ef_search`]).
    pub fn set_ef_search(&mut self, ef_search: usize) {
        self.params.ef_search = ef_search;
        for part in self.parts.values_mut() {
            part.store.set_ef_search(ef_search);
        }
    }

    /// Changes [`HnswParams::exact_threshold`] of the shared and the tenant partitions (never
    /// of the pool, which keeps no graph).
    pub fn set_exact_threshold(&mut self, exact_threshold: usize) {
        self.params.exact_threshold = exact_threshold;
        for (partition, part) in &mut self.parts {
            if *partition != Partition::Pool {
                part.store.set_exact_threshold(exact_threshold);
            }
        }
    }

    /// Changes the number of records at which a pooled tenant is promoted (default
    /// [`PROMOTE_AT`]); tenants already past it move with the next insert.
    pub fn set_promote_at(&mut self, records: usize) {
        self.promote_at = records.max(1);
    }

    /// Changes when every partition's log is merged ([`MergePolicy`]), partitions made later
    /// included.
    pub fn set_merge_policy(&mut self, policy: MergePolicy) {
        self.merge_policy = policy;
        for part in self.parts.values_mut() {
            part.store.set_merge_policy(policy);
        }
    }

    /// The number of records with live vectors.
    pub fn len(&self) -> usize {
        self.parts.values().map(|p| p.store.len()).sum()
    }

    /// Whether no partition holds a live vector.
    pub fn is_empty(&self) -> bool {
        self.parts.values().all(|p| p.store.is_empty())
    }

    /// The partitions, each with the number of records it holds.
    pub fn partitions(&self) -> impl Iterator<Item = (&Partition, usize)> {
        self.parts.iter().map(|(p, part)| (p, part.store.len()))
    }

    /// The partition holding `ord`'s vectors, if it has any.
    pub fn partition_of(&self, ord: Ordinal) -> Option<Partition> {
        self.parts.iter().find(|(_, part)| part.members.contains(ord)).map(|(p, _)| p.clone())
    }

    /// Whether any partition keeps an HNSW graph.
    pub fn has_graph(&self) -> bool {
        self.parts.values().any(|p| p.store.has_graph())
    }

    /// Whether every partition with a graph loaded it from its files (see
    /// [`VectorStore::graph_was_loaded`]); false when none has a graph.
    pub fn graph_was_loaded(&self) -> bool {
        self.has_graph() && self.parts.values().all(|p| !p.store.has_graph() || p.store.graph_was_loaded())
    }

    /// The live ordinals, in no particular order.
    pub fn ords(&self) -> impl Iterator<Item = Ordinal> + '_ {
        self.parts.values().flat_map(|p| p.store.ords())
    }

    /// Whether `ord` has a live vector.
    pub fn contains(&self, ord: Ordinal) -> bool {
        self.parts.values().any(|p| p.members.contains(ord))
    }

    /// The stored vector of `ord` (see [`VectorStore::vector`]).
    pub fn vector(&self, ord: Ordinal) -> Option<Vec<f32>> {
        self.parts.values().find(|p| p.members.contains(ord)).and_then(|p| p.store.vector(ord))
    }

    /// Every stored vector of `ord`, its passages in order (see
    /// [`VectorStore::passage_vectors`]).
    pub fn passage_vectors(&self, ord: Ordinal) -> Option<Vec<Vec<f32>>> {
        self.parts.values().find(|p| p.members.contains(ord)).and_then(|p| p.store.passage_vectors(ord))
    }

    /// Bytes held in memory by every partition ([`VectorStore::memory_bytes`]) and the
    /// partitions' ordinal sets.
    pub fn memory_bytes(&self) -> usize {
        self.parts.values().map(|p| p.store.memory_bytes() + p.members.heap_bytes()).sum::<usize>()
            + self.pooled.capacity() * (std::mem::size_of::<(Ordinal, String)>() + 8)
    }

    /// Checks and normalises records' vectors as [`VectorStore::check_passages`] does, each
    /// with its tenant tokens (`tenants`: a record's `tenant:…` ACL tokens, which place it).
    ///
    /// # Errors
    ///
    /// As [`VectorStore::check_passages`].
    pub fn check_passages(
        &self,
        items: &[(Ordinal, Vec<Vec<f32>>)],
        tenants: impl Fn(Ordinal) -> Vec<String>,
    ) -> Result<Vec<PlacedRecord>> {
        let checked = self.parts[&Partition::Shared].store.check_passages(items)?;
        Ok(checked
            .into_iter()
            .zip(items)
            .map(|(record, (ord, _))| {
                let mut tenants = tenants(*ord);
                tenants.sort();
                tenants.dedup();
                PlacedRecord { record, tenants: tenants.into() }
            })
            .collect())
    }

    /// Stores checked records, each in its tenants' partition (replacing any vectors its
    /// ordinal had, wherever they were), then promotes every pooled tenant past the threshold.
    ///
    /// # Errors
    ///
    /// As [`VectorStore::insert_checked`].
    pub fn insert_checked(&mut self, records: &[PlacedRecord]) -> Result<()> {
        self.insert_with(records, VectorStore::insert_checked)
    }

    /// [`PartitionedStore::insert_checked`], but the records of partitions with a graph are
    /// not linked into it yet ([`VectorStore::insert_unlinked`]): a writer then searches their
    /// links under a read lock ([`PartitionedStore::prepare_links`]) and links them one at a
    /// time under short write locks ([`PartitionedStore::link_next`]).
    ///
    /// # Errors
    ///
    /// As [`VectorStore::insert_checked`].
    pub fn insert_unlinked(&mut self, records: &[PlacedRecord]) -> Result<()> {
        self.insert_with(records, VectorStore::insert_unlinked)
    }

    /// Rooms for `records` ([`VectorStore::room_for`]): a copy of each arena that storing them
    /// (as [`PartitionedStore::insert_unlinked`] places them) would grow. Reads only, for a
    /// read lock ([`crate::room`]).
    pub fn rooms_for(&self, records: &[PlacedRecord]) -> Vec<(Partition, Room)> {
        let mut vectors: BTreeMap<Partition, usize> = BTreeMap::new();
        for placed in records {
            *vectors.entry(self.home(&placed.tenants)).or_default() += placed.record.vectors();
        }
        vectors
            .into_iter()
            .filter_map(|(partition, n)| {
                let room = self.parts.get(&partition)?.store.room_for(n)?;
                Some((partition, room))
            })
            .collect()
    }

    /// Installs each of `rooms` in its partition ([`VectorStore::make_room`]); gives back the
    /// arenas they replaced, to drop once the lock is released.
    pub fn make_rooms(&mut self, rooms: Vec<(Partition, Room)>) -> Vec<Spare> {
        rooms
            .into_iter()
            .filter_map(|(partition, room)| self.parts.get_mut(&partition)?.store.make_room(room))
            .collect()
    }

    /// Places each record in its tenants' partition (replacing any vectors its ordinal had),
    /// stores each partition's records with `insert`, then promotes every pooled tenant past
    /// the threshold.
    fn insert_with(
        &mut self,
        records: &[PlacedRecord],
        insert: fn(&mut VectorStore, &[CheckedRecord]) -> Result<()>,
    ) -> Result<()> {
        let mut by_home: BTreeMap<Partition, Vec<CheckedRecord>> = BTreeMap::new();
        for placed in records {
            let ord = placed.record.ord();
            self.remove(ord);
            let home = self.home(&placed.tenants);
            if home == Partition::Pool {
                self.note_pooled(ord, &placed.tenants);
            }
            by_home.entry(home).or_default().push(placed.record.clone());
        }
        for (partition, records) in by_home {
            let part = self.part_mut(&partition);
            insert(&mut part.store, &records)?;
            for record in &records {
                part.members.insert(record.ord());
            }
        }
        self.promote_due()
    }

    /// Each partition's [`VectorStore::prepare_links`], for those with slots to link.
    pub fn prepare_links(&self) -> Vec<(Partition, PreparedLinks)> {
        self.parts
            .iter()
            .filter(|(_, part)| part.store.has_graph())
            .map(|(partition, part)| (partition.clone(), part.store.prepare_links()))
            .collect()
    }

    /// Links the next prepared slot ([`VectorStore::link_next`]); returns whether any is left.
    pub fn link_next(&mut self, prepared: &mut Vec<(Partition, PreparedLinks)>) -> bool {
        while let Some((partition, links)) = prepared.last_mut() {
            if let Some(part) = self.parts.get_mut(partition) {
                if part.store.link_next(links) {
                    return true;
                }
            }
            prepared.pop();
        }
        false
    }

    /// Deletes `ord`'s vectors; returns whether it had any.
    pub fn delete(&mut self, ord: Ordinal) -> bool {
        self.remove(ord)
    }

    /// The `k` allowed live vectors most similar to `query`, best first: each partition the
    /// principal's tenants name (the shared one, the pool for a principal of any tenant, and
    /// its tenants' own) searched with the allowed records it holds, as
    /// [`VectorStore::search`] searches (its graph past [`HnswParams::exact_threshold`] of them,
    /// else exactly), and the hits merged. [`VectorSearch::path`] is
    /// [`SearchPath::Hnsw`] when any partition walked its graph.
    ///
    /// # Errors
    ///
    /// As [`VectorStore::search`].
    pub fn search(&self, query: &[f32], k: usize, allowed: &AllowedSet) -> Result<VectorSearch> {
        // The query is checked once, whether or not a partition has anything to search.
        let mut hits = self.parts[&Partition::Shared].store.search_exact(query, 0, allowed)?;
        let requested = allowed.len();
        let found = self.in_each_visited(allowed, |part, here| {
            // The partition's members are its store's live records.
            let whole = here.len() == part.members.len();
            part.store.search_in(query, k, here, requested, whole)
        })?;
        let path = [SearchPath::Hnsw, SearchPath::Screened]
            .into_iter()
            .find(|p| found.iter().any(|f| f.path == *p))
            .unwrap_or(SearchPath::Exact);
        hits.extend(found.into_iter().flat_map(|f| f.hits));
        Ok(VectorSearch { hits: merged(hits, k), path })
    }

    /// The exact `k` best allowed live vectors (see [`VectorStore::search_exact`]) over the
    /// partitions [`PartitionedStore::search`] visits.
    ///
    /// # Errors
    ///
    /// As [`VectorStore::search`].
    pub fn search_exact(&self, query: &[f32], k: usize, allowed: &AllowedSet) -> Result<Vec<(Ordinal, f32)>> {
        let mut hits = self.parts[&Partition::Shared].store.search_exact(query, 0, allowed)?;
        hits.extend(self.in_each_visited(allowed, |part, here| part.store.search_exact(query, k, here))?.concat());
        Ok(merged(hits, k))
    }

    /// `search` run in each partition the principal of `allowed` visits that holds allowed
    /// records, with those records, in parallel: a principal of several tenants scans several
    /// partitions. The results come in the partitions' order.
    ///
    /// Each partition's share of the allowed set is a bitset over every ordinal. A caller of
    /// more than [`SHARES_IN_PARALLEL_FROM`] partitions takes them in the partitions' tasks:
    /// one after another, the eleven shares of a caller of every partition of the 1M scale
    /// corpus held back the first scan (semantic p50 at 100 % 1.96 → 1.79 ms in parallel). A
    /// caller of a few takes them first, so that a search of the one partition holding its
    /// records runs where it was called (in tasks, a one-tenant caller's semantic p50 went
    /// 1.00 → 1.18 ms: the scan went to a second thread woken for it).
    fn in_each_visited<T: Send>(
        &self,
        allowed: &AllowedSet,
        search: impl Fn(&Part, &AllowedSet) -> Result<T> + Sync,
    ) -> Result<Vec<T>> {
        let visited: Vec<&Part> = self.visited(allowed.visibility().principal()).collect();
        if visited.len() <= SHARES_IN_PARALLEL_FROM {
            let shares: Vec<(&Part, AllowedSet)> =
                visited.into_iter().filter_map(|part| Some((part, within(part, allowed)?))).collect();
            // The largest share first, so the calling thread (which takes the first of a
            // split, `braid_parallel::map`) scans it while a worker takes the others.
            let mut order: Vec<usize> = (0..shares.len()).collect();
            order.sort_by_key(|&at| std::cmp::Reverse(shares[at].1.len()));
            let mut found: Vec<(usize, Result<T>)> =
                braid_parallel::map(&order, |&at| (at, search(shares[at].0, &shares[at].1)));
            found.sort_by_key(|(at, _)| *at);
            return found.into_iter().map(|(_, result)| result).collect();
        }
        let found: Vec<Option<T>> =
            braid_parallel::map(&visited, |part| within(part, allowed).map(|here| search(part, &here)).transpose())
                .into_iter()
                .collect::<Result<_>>()?;
        Ok(found.into_iter().flatten().collect())
    }

    /// Makes every partition durable under `root` ([`VectorStore::save`]: a partition that
    /// changed nothing writes nothing): the tenant partitions, then the pool, then the shared
    /// one, so a record moved between partitions is durable in its new one first.
    ///
    /// # Errors
    ///
    /// As [`VectorStore::save`].
    pub fn save(&self, root: &Path) -> Result<()> {
        for (partition, part) in &self.parts {
            part.store.save(&partition.dir(root))?;
        }
        Ok(())
    }

    /// [`PartitionedStore::save`] that never merges ([`VectorStore::save_log`]): each partition
    /// appends what changed, in the same order, and the partitions whose logs have passed their
    /// share come back as [`MergeJob`]s, for a background thread ([`crate::Merger`]).
    ///
    /// # Errors
    ///
    /// As [`VectorStore::save`].
    pub fn save_log(&self, root: &Path) -> Result<Vec<MergeJob>> {
        let mut jobs = Vec::new();
        for (partition, part) in &self.parts {
            jobs.extend(part.store.save_log(&partition.dir(root))?);
        }
        Ok(jobs)
    }

    /// Writes every partition whole ([`VectorStore::merge`]), in the order of
    /// [`PartitionedStore::save`].
    ///
    /// # Errors
    ///
    /// As [`VectorStore::save`].
    pub fn merge(&self, root: &Path) -> Result<()> {
        for (partition, part) in &self.parts {
            part.store.merge(&partition.dir(root))?;
        }
        Ok(())
    }

    /// The marks of the shared partition and of every other (by [`Partition::name`]) that the
    /// last save left ([`VectorStore::disk_mark`]): record them with the commit, and pass them
    /// to [`PartitionedStore::open`].
    pub fn disk_marks(&self) -> (Option<DiskMark>, BTreeMap<String, DiskMark>) {
        let mut marks = BTreeMap::new();
        let mut shared = None;
        for (partition, part) in &self.parts {
            match (partition, part.store.disk_mark()) {
                (Partition::Shared, mark) => shared = mark,
                (other, Some(mark)) => {
                    marks.insert(other.name(), mark);
                }
                (_, None) => {}
            }
        }
        (shared, marks)
    }

    /// The partition a record of `tenants` (sorted, distinct) belongs in.
    fn home(&self, tenants: &[String]) -> Partition {
        match tenants {
            [] => Partition::Shared,
            [one] if self.parts.contains_key(&Partition::Tenant(one.clone())) => Partition::Tenant(one.clone()),
            _ => Partition::Pool,
        }
    }

    /// The partitions a search on behalf of `principal` visits.
    fn visited<'a>(&'a self, principal: &'a Principal) -> impl Iterator<Item = &'a Part> + 'a {
        let has_tenant = principal.tenants().next().is_some();
        self.parts
            .iter()
            .filter(move |(partition, _)| match partition {
                Partition::Shared => true,
                Partition::Pool => has_tenant,
                Partition::Tenant(token) => principal.has(token),
            })
            .map(|(_, part)| part)
    }

    /// The partition, made (empty) if it is not there yet.
    fn part_mut(&mut self, partition: &Partition) -> &mut Part {
        let (dim, params, policy) = (self.dim, self.params.clone(), self.merge_policy);
        self.parts.entry(partition.clone()).or_insert_with(|| {
            let mut store = match partition {
                Partition::Pool => {
                    let mut pool = VectorStore::new(dim, HnswParams { exact_threshold: usize::MAX, ..params });
                    pool.set_look_up_only(true);
                    pool
                }
                _ => VectorStore::new(dim, params),
            };
            store.set_merge_policy(policy);
            Part::new(store)
        })
    }

    /// Notes a record placed in the pool (counted towards its tenant's promotion when it has
    /// exactly one).
    fn note_pooled(&mut self, ord: Ordinal, tenants: &[String]) {
        if let [one] = tenants {
            if self.pooled.insert(ord, one.clone()).is_none() {
                *self.pool_counts.entry(one.clone()).or_default() += 1;
            }
        }
    }

    /// Removes `ord` from whichever partition holds it; returns whether one did.
    fn remove(&mut self, ord: Ordinal) -> bool {
        let Some(partition) = self.partition_of(ord) else { return false };
        if let Some(part) = self.parts.get_mut(&partition) {
            part.store.delete(ord);
            part.members.remove(ord);
        }
        if let Some(tenant) = self.pooled.remove(&ord) {
            if let Some(count) = self.pool_counts.get_mut(&tenant) {
                *count = count.saturating_sub(1);
            }
        }
        true
    }

    /// Moves `ords`' vectors from one partition to another, as stored: copied into the target
    /// first, then deleted from the source.
    fn move_records(&mut self, from: &Partition, to: &Partition, ords: &[Ordinal]) -> Result<()> {
        if from == to || !self.parts.contains_key(from) {
            return Ok(());
        }
        self.part_mut(to);
        // Two entries of one map: the target is taken out while it copies from the source.
        let Some(mut target) = self.parts.remove(to) else { return Ok(()) };
        let copied = target.store.copy_from(&self.parts[from].store, ords);
        if copied.is_ok() {
            for &ord in ords {
                target.members.insert(ord);
            }
        }
        self.parts.insert(to.clone(), target);
        copied?;
        if let Some(source) = self.parts.get_mut(from) {
            for &ord in ords {
                source.store.delete(ord);
                source.members.remove(ord);
            }
        }
        if *to != Partition::Pool {
            for ord in ords {
                if let Some(tenant) = self.pooled.remove(ord) {
                    if let Some(count) = self.pool_counts.get_mut(&tenant) {
                        *count = count.saturating_sub(1);
                    }
                }
            }
        }
        Ok(())
    }

    /// Promotes every pooled tenant holding at least the threshold's records.
    fn promote_due(&mut self) -> Result<()> {
        let mut due: Vec<String> =
            self.pool_counts.iter().filter(|(_, &n)| n >= self.promote_at).map(|(t, _)| t.clone()).collect();
        due.sort();
        for tenant in due {
            let mut ords: Vec<Ordinal> =
                self.pooled.iter().filter(|(_, t)| **t == tenant).map(|(&ord, _)| ord).collect();
            ords.sort_unstable();
            tracing::info!(target: "braid::vector", tenant = %tenant, records = ords.len(), "tenant promoted to a partition of its own");
            self.move_records(&Partition::Pool, &Partition::Tenant(tenant.clone()), &ords)?;
            self.pool_counts.remove(&tenant);
        }
        Ok(())
    }
}

/// The shared store under `root` and the stores of `partitions` (in that order), each opened
/// as [`VectorStore::open_checked`] opens it, in parallel: opening is reading and checksumming
/// the files and copying rows, and the partitions are independent. The shared one, usually the
/// largest, starts first.
fn open_all(
    root: &Path,
    shared: Option<&DiskMark>,
    partitions: &[Partition],
    marks: &BTreeMap<String, DiskMark>,
) -> (Result<VectorStore>, Vec<Result<VectorStore>>) {
    let jobs: Vec<(PathBuf, Option<&DiskMark>)> = std::iter::once((root.to_path_buf(), shared))
        .chain(partitions.iter().map(|p| (p.dir(root), marks.get(&p.name()))))
        .collect();
    let mut stores: Vec<Result<VectorStore>> =
        jobs.par_iter().map(|(dir, mark)| VectorStore::open_checked(dir, *mark)).collect();
    let shared = stores.remove(0);
    (shared, stores)
}

/// The allowed records `part` holds, as an allowed set of the same rule; `None` when there are
/// none.
fn within(part: &Part, allowed: &AllowedSet) -> Option<AllowedSet> {
    let here = part.members.intersection(allowed.ords());
    (!here.is_empty()).then(|| AllowedSet::new(allowed.visibility().clone(), here))
}

/// Partitions a search visits beyond which each partition's share of the allowed set is
/// taken in its own task ([`PartitionedStore::in_each_visited`]).
const SHARES_IN_PARALLEL_FROM: usize = 4;

/// The best `k` of several partitions' hits, in [`better`]'s total order.
fn merged(mut hits: Vec<(Ordinal, f32)>, k: usize) -> Vec<(Ordinal, f32)> {
    hits.sort_unstable_by(better);
    hits.truncate(k);
    hits
}

#[cfg(test)]
mod tests {
    use super::*;
    use braid_core::{AccessPolicy, Visibility};

    fn vector(i: u64) -> Vec<f32> {
        let x = i as f32;
        vec![(x * 0.37).sin(), (x * 0.11).cos(), (x * 0.23).sin() + 0.1, 1.0]
    }

    fn tenant_of(ord: Ordinal) -> Vec<String> {
        match ord % 4 {
            0 => vec![],
            1 => vec!["tenant:acme".into()],
            2 => vec!["tenant:globex".into()],
            _ => vec!["tenant:acme".into(), "tenant:globex".into()],
        }
    }

    fn filled(n: u64, promote_at: usize) -> PartitionedStore {
        let mut store = PartitionedStore::new(4, HnswParams::default());
        store.set_promote_at(promote_at);
        let items: Vec<(Ordinal, Vec<Vec<f32>>)> = (1..=n).map(|i| (i, vec![vector(i)])).collect();
        let placed = store.check_passages(&items, tenant_of).unwrap();
        store.insert_checked(&placed).unwrap();
        store
    }

    fn allowed(tokens: &[&str], ords: impl IntoIterator<Item = Ordinal>) -> AllowedSet {
        let principal = Principal::from_verified_tokens(tokens.iter().copied());
        AllowedSet::new(Visibility::new(principal, AccessPolicy::Public, None), ords.into_iter().collect())
    }

    /// Every record lands where its tenants say, a tenant past the threshold moves to its own
    /// partition, and records of several tenants stay in the pool.
    #[test]
    fn records_are_placed_by_their_tenants_and_promoted() {
        let store = filled(40, 8);
        for ord in 1..=40 {
            let expected = match ord % 4 {
                0 => Partition::Shared,
                1 => Partition::Tenant("tenant:acme".into()),
                2 => Partition::Tenant("tenant:globex".into()),
                _ => Partition::Pool,
            };
            assert_eq!(store.partition_of(ord), Some(expected), "ord {ord}");
        }
        assert_eq!(store.len(), 40);
        let store = filled(12, 8);
        assert_eq!(store.partition_of(1), Some(Partition::Pool), "3 acme records stay pooled");
    }

    /// Where every partition scans, the hits are one store's over every vector, bit for bit,
    /// for any allowed set.
    #[test]
    fn hits_are_those_of_one_store() {
        let partitioned = filled(200, 16);
        let mut one = VectorStore::new(4, HnswParams::default());
        one.insert_batch(&(1..=200).map(|i| (i, vector(i))).collect::<Vec<_>>()).unwrap();
        let everyone = ["tenant:acme", "tenant:globex"];
        for (tokens, ords) in [
            (&everyone[..], (1..=200).collect::<Vec<_>>()),
            (&everyone[..1], (1..=200).filter(|o| o % 4 != 2).collect()),
            (&everyone[..0], (1..=200).filter(|o| o % 4 == 0).collect()),
            (&everyone[..], (1..=200).filter(|o| o % 3 == 0).collect()),
        ] {
            let allowed = allowed(tokens, ords);
            for q in [3, 77, 150] {
                let query = vector(q + 1000);
                assert_eq!(
                    partitioned.search(&query, 10, &allowed).unwrap().hits,
                    one.search(&query, 10, &allowed).unwrap().hits
                );
                assert_eq!(
                    partitioned.search_exact(&query, 7, &allowed).unwrap(),
                    one.search_exact(&query, 7, &allowed).unwrap()
                );
            }
        }
    }

    /// A principal's search never visits a partition of a tenant it does not hold, even with
    /// an allowed set that (wrongly) names its records.
    #[test]
    fn a_search_visits_only_its_tenants_partitions() {
        let store = filled(80, 8);
        let globex_only: Vec<Ordinal> = (1..=80).filter(|o| o % 4 == 2).collect();
        let found = store.search(&vector(5), 10, &allowed(&["tenant:acme"], globex_only.clone())).unwrap();
        assert!(found.hits.is_empty(), "{:?}", found.hits);
        let found = store.search(&vector(5), 10, &allowed(&["tenant:globex"], globex_only)).unwrap();
        assert_eq!(found.hits.len(), 10);
    }

    /// Saved and opened again, every partition comes back; a store saved before partitions
    /// (everything in the shared one) settles its tenants' records where they belong.
    #[test]
    fn partitions_persist_and_a_store_without_them_migrates() {
        let dir = tempfile::tempdir().unwrap();
        let store = filled(60, 8);
        store.save(dir.path()).unwrap();
        let (shared, marks) = store.disk_marks();
        assert!(marks.contains_key("pool") && marks.contains_key(&Partition::Tenant("tenant:acme".into()).name()));
        let mut reopened = PartitionedStore::open(dir.path(), shared.as_ref(), &marks).unwrap();
        let tenants = tenant_postings(60);
        reopened.settle(&tenants).unwrap();
        for ord in 1..=60 {
            assert_eq!(reopened.partition_of(ord), store.partition_of(ord), "ord {ord}");
            assert_eq!(reopened.vector(ord), store.vector(ord));
        }

        let old = tempfile::tempdir().unwrap();
        let mut one = VectorStore::new(4, HnswParams::default());
        one.insert_batch(&(1..=60).map(|i| (i, vector(i))).collect::<Vec<_>>()).unwrap();
        one.save(old.path()).unwrap();
        let mut migrated = PartitionedStore::open(old.path(), one.disk_mark().as_ref(), &BTreeMap::new()).unwrap();
        migrated.set_promote_at(8);
        migrated.settle(&tenants).unwrap();
        for ord in 1..=60 {
            assert_eq!(migrated.partition_of(ord), store.partition_of(ord), "ord {ord}");
        }
        migrated.save(old.path()).unwrap();
        let (shared, marks) = migrated.disk_marks();
        let mut again = PartitionedStore::open(old.path(), shared.as_ref(), &marks).unwrap();
        again.settle(&tenants).unwrap();
        assert_eq!(
            again.partitions().map(|(p, n)| (p.clone(), n)).collect::<Vec<_>>(),
            migrated.partitions().map(|(p, n)| (p.clone(), n)).collect::<Vec<_>>()
        );
    }

    /// A promotion interrupted after the tenant's partition was written but before the pool
    /// dropped its copies opens with each record once, in the tenant's partition.
    #[test]
    fn a_record_found_twice_keeps_its_tenant_partitions_copy() {
        let dir = tempfile::tempdir().unwrap();
        let pooled = filled(20, 100);
        pooled.save(dir.path()).unwrap();
        let mut promoted = filled(20, 100);
        promoted.set_promote_at(3);
        promoted.promote_due().unwrap();
        // Only the tenant partitions reach the disk: the pool's tombstones never do.
        for (partition, part) in &promoted.parts {
            if matches!(partition, Partition::Tenant(_)) {
                part.store.save(&partition.dir(dir.path())).unwrap();
            }
        }
        let mut opened = PartitionedStore::open(dir.path(), None, &BTreeMap::new()).unwrap();
        opened.set_promote_at(3);
        opened.settle(&tenant_postings(20)).unwrap();
        assert_eq!(opened.len(), 20);
        for ord in 1..=20 {
            assert_eq!(opened.partition_of(ord), promoted.partition_of(ord), "ord {ord}");
        }
    }

    /// A partition the manifest records but the disk lacks is an error, not an empty tenant.
    #[test]
    fn a_missing_partition_is_corrupt() {
        let dir = tempfile::tempdir().unwrap();
        let store = filled(40, 8);
        store.save(dir.path()).unwrap();
        let (shared, marks) = store.disk_marks();
        std::fs::remove_dir_all(Partition::Tenant("tenant:acme".into()).dir(dir.path())).unwrap();
        let err = PartitionedStore::open(dir.path(), shared.as_ref(), &marks).unwrap_err();
        assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    }

    /// Collapsing the arenas into huge pages changes no answer: a store large enough to have
    /// regions (int8 and f32 partitions of several MiB), saved and opened (the open starts the
    /// background collapse), answers as the store it was saved from while the collapse runs
    /// and after it is done again here.
    #[test]
    fn huge_pages_change_no_answer() {
        let dim = 384;
        let params = |quantization| HnswParams { quantization, ..HnswParams::default() };
        for quantization in [Quantization::Int8, Quantization::F32] {
            let mut store = PartitionedStore::new(dim, params(quantization));
            store.set_promote_at(100);
            let n = 48_000u64;
            let items: Vec<(Ordinal, Vec<Vec<f32>>)> =
                (1..=n).map(|i| (i, vec![crate::sketch::tests::unit(i, dim)])).collect();
            let tenants = |ord: Ordinal| if ord.is_multiple_of(2) { vec!["tenant:acme".to_string()] } else { vec![] };
            let placed = store.check_passages(&items, tenants).unwrap();
            store.insert_checked(&placed).unwrap();
            let regions = store.huge_page_regions();
            assert!(!regions.is_empty(), "{quantization:?}: no arena of 8 MiB");
            let dir = tempfile::tempdir().unwrap();
            store.save(dir.path()).unwrap();
            let (shared, marks) = store.disk_marks();
            let opened = PartitionedStore::open(dir.path(), shared.as_ref(), &marks).unwrap();
            let principal = ["tenant:acme"];
            let queries: Vec<Vec<f32>> = (0..6).map(|q| crate::sketch::tests::unit(q + 900_000, dim)).collect();
            let answers = |s: &PartitionedStore| -> Vec<Vec<(Ordinal, u32)>> {
                queries
                    .iter()
                    .flat_map(|q| {
                        [allowed(&principal, 1..=n), allowed(&principal, (1..=n).filter(|o| o % 7 == 0))]
                            .map(|a| s.search(q, 10, &a).unwrap().hits.iter().map(|h| (h.0, h.1.to_bits())).collect())
                    })
                    .collect()
            };
            let expected = answers(&store);
            assert_eq!(answers(&opened), expected, "{quantization:?}, while the collapse may run");
            crate::huge_pages::collapse(&opened.huge_page_regions(), &std::sync::atomic::AtomicBool::new(false));
            assert_eq!(answers(&opened), expected, "{quantization:?}, collapsed");
        }
    }

    #[test]
    fn partition_names_round_trip() {
        for p in [Partition::Pool, Partition::Tenant("tenant:acme".into()), Partition::Tenant("tenant:a/b ü".into())] {
            assert_eq!(Partition::from_dir_name(&p.name()), Some(p.clone()));
        }
        assert_eq!(Partition::from_dir_name("tenant-zz"), None);
        assert_eq!(Partition::from_dir_name("other"), None);
    }

    fn tenant_postings(n: u64) -> Vec<(String, OrdSet)> {
        ["tenant:acme", "tenant:globex"]
            .iter()
            .map(|t| (t.to_string(), (1..=n).filter(|&o| tenant_of(o).iter().any(|x| x == t)).collect()))
            .collect()
    }
}
