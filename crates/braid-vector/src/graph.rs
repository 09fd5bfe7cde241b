//! Braid's HNSW graph over slots (Malkov & Yashunin, 2018), stored flat: `u32` neighbour ids,
//! no per-node allocation, no copy of the vectors.
//!
//! `hnsw_rs`, which Braid used before, keeps its own f32 copy of every point and neighbour
//! lists of reference-counted pointers (16 bytes an edge), about 2.3 KB a 384-d point on top
//! of the store's own vector; this graph costs about 140 bytes a point at `m` = 16 (layer 0:
//! a count and `2m` ids; upper layers, which one point in `m` reaches, `m` ids a layer) and
//! scores through the store's [`Rows`], so an int8 store's graph walks int8 codes.
//!
//! Node levels come from a hash of the slot, so the same inserts in the same order build the
//! same graph. Deleted slots stay in the graph as waypoints (the caller's `keep` filter drops
//! them from results); the store rebuilds the graph once they pass a fraction.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

use std::sync::Mutex;

use braid_core::{Error, Result};

use crate::log::GraphPatch;
use crate::params::HnswParams;
use crate::persist::GraphParts;
use crate::rows::{Query, Rows};

/// Layers a point may reach.
const MAX_LEVEL: u8 = 15;
/// The level of a slot that was never inserted (a gap in the slot range).
const ABSENT: u8 = u8::MAX;
/// `upper_at` of a point on layer 0 only.
const NO_UPPER: u32 = u32::MAX;
/// Points the graph needs before inserts go in parallel chunks (below, one at a time).
const PARALLEL_FROM: usize = 4_096;
/// The most points in one parallel chunk (a chunk is also at most a sixteenth of the graph,
/// so its points, which do not see each other's searches, are few beside what they do see).
const MAX_CHUNK: usize = 1_024;

/// An HNSW graph whose points are slots `0..points()` of the owning store.
#[derive(Debug)]
pub(crate) struct Graph {
    /// Neighbours kept per point on layers above 0.
    m: usize,
    /// Neighbours kept per point on layer 0 (`2m`).
    m0: usize,
    ef_construction: usize,
    /// Each point's top layer, or [`ABSENT`].
    levels: Vec<u8>,
    /// Per point `1 + m0` ids: the count, then the layer-0 neighbours.
    links0: Vec<u32>,
    /// Per point the offset of its upper-layer blocks in `upper`, or [`NO_UPPER`].
    upper_at: Vec<u32>,
    /// Blocks of `1 + m` ids (count, neighbours) for layers `1..=level` of each point.
    upper: Vec<u32>,
    /// The entry point and its level; `None` while the graph is empty.
    entry: Option<(u32, u8)>,
    /// One bit a point: its links changed since [`Graph::forget_changes`] (what the store's
    /// log must write). Set under `&mut self` (no locking), taken by a save under `&self`.
    changed: Mutex<Vec<u64>>,
}

/// A scored point; ordered by score, then by smaller id, so every heap is deterministic.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Scored(f32, u32);

impl Eq for Scored {}
impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored {
    /// Greater is better: higher score, then smaller id.
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(other.1.cmp(&self.1))
    }
}

impl Graph {
    /// An empty graph with `params`' shape.
    pub(crate) fn new(params: &HnswParams) -> Self {
        let m = params.m.clamp(2, 1 << 16);
        Graph {
            m,
            m0: 2 * m,
            ef_construction: params.ef_construction.max(m),
            levels: Vec::new(),
            links0: Vec::new(),
            upper_at: Vec::new(),
            upper: Vec::new(),
            entry: None,
            changed: Mutex::new(Vec::new()),
        }
    }

    /// The slot range the graph covers (inserted or skipped).
    pub(crate) fn points(&self) -> usize {
        self.levels.len()
    }

    /// Bytes held in memory.
    /// The link arrays' whole huge pages ([`crate::huge_pages`]): what a walk reads besides
    /// the rows.
    pub(crate) fn huge_page_regions(&self) -> Vec<crate::huge_pages::Region> {
        [&self.links0[..], &self.upper[..]].into_iter().filter_map(crate::huge_pages::Region::of).collect()
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.levels.capacity() + 4 * (self.links0.capacity() + self.upper_at.capacity() + self.upper.capacity())
    }

    /// Inserts slots `from..to` (each slot for which `present` is true; the others are gaps,
    /// never linked), in slot order.
    ///
    /// Once the graph has [`PARALLEL_FROM`] points, slots go in chunks: the chunk's searches
    /// run in parallel against the graph as it stood before the chunk (they only read it), then
    /// each point is linked in slot order, its candidates joined by the chunk's earlier points
    /// (scored exactly), so no point misses a near neighbour inserted beside it. The graph is
    /// the same whatever the number of threads.
    pub(crate) fn insert_from(&mut self, rows: &Rows, from: usize, to: usize, present: &dyn Fn(usize) -> bool) {
        let mut slot = from.max(self.points());
        while slot < to {
            let chunk = (self.points() / 16).clamp(1, MAX_CHUNK);
            if self.points() < PARALLEL_FROM || chunk == 1 {
                let level = if present(slot) { level_of(slot, self.m) } else { ABSENT };
                let candidates = if level == ABSENT {
                    Vec::new()
                } else {
                    self.candidates(rows, &rows.query(rows.vector(slot)), level)
                };
                self.link(rows, slot, level, candidates, slot);
                slot += 1;
                continue;
            }
            let end = (slot + chunk).min(to);
            let levels: Vec<u8> = (slot..end).map(|s| if present(s) { level_of(s, self.m) } else { ABSENT }).collect();
            let found = self.candidates_in_parallel(rows, slot, &levels);
            for ((offset, &level), candidates) in levels.iter().enumerate().zip(found) {
                self.link(rows, slot + offset, level, candidates, slot);
            }
            slot = end;
        }
    }

    /// The read-only half of inserting slots `from..to` (those for which `present` is true):
    /// each one's level and candidates, searched in the graph as it stands. [`Graph::link_one`]
    /// links them, in slot order, each joined by the prepared slots before it, as a chunk of
    /// [`Graph::insert_from`] is; a writer prepares under a read lock and links under a short
    /// write lock.
    pub(crate) fn prepare(&self, rows: &Rows, from: usize, to: usize, present: &dyn Fn(usize) -> bool) -> Prepared {
        let from = from.max(self.points());
        let links = (from..to)
            .map(|slot| {
                let level = if present(slot) { level_of(slot, self.m) } else { ABSENT };
                let candidates = if level == ABSENT {
                    Vec::new()
                } else {
                    self.candidates(rows, &rows.query(rows.vector(slot)), level)
                };
                (level, candidates)
            })
            .collect();
        Prepared { from, links }
    }

    /// Links the next slot of `prepared` (the graph's next point); returns whether one was
    /// left. Slots prepared against another graph than this one are inserted afresh.
    pub(crate) fn link_one(&mut self, rows: &Rows, prepared: &mut Prepared, present: &dyn Fn(usize) -> bool) -> bool {
        let slot = self.points();
        let Some(at) = slot.checked_sub(prepared.from).filter(|&at| at < prepared.links.len()) else {
            return false;
        };
        let (level, candidates) = std::mem::take(&mut prepared.links[at]);
        if level == ABSENT || present(slot) {
            self.link(rows, slot, level, candidates, prepared.from);
        } else {
            self.link(rows, slot, ABSENT, Vec::new(), prepared.from);
        }
        at + 1 < prepared.links.len()
    }

    /// [`Graph::candidates`] of slots `start..` at `levels` ([`ABSENT`]: none), on as many
    /// threads as the machine has.
    fn candidates_in_parallel(&self, rows: &Rows, start: usize, levels: &[u8]) -> Vec<Vec<Vec<Scored>>> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(levels.len()).max(1);
        let per = levels.len().div_ceil(threads);
        let one = |(at, level): (usize, &u8)| {
            if *level == ABSENT {
                Vec::new()
            } else {
                self.candidates(rows, &rows.query(rows.vector(start + at)), *level)
            }
        };
        if threads == 1 {
            return levels.iter().enumerate().map(one).collect();
        }
        std::thread::scope(|scope| {
            let workers: Vec<_> = levels
                .chunks(per)
                .enumerate()
                .map(|(block, part)| {
                    scope.spawn(move || {
                        part.iter().enumerate().map(|(i, level)| one((block * per + i, level))).collect::<Vec<_>>()
                    })
                })
                .collect();
            workers.into_iter().flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
        })
    }

    /// The candidates of a new point with vector `query` at `level`, per layer from 0 up to
    /// the lower of `level` and the graph's top, best first: the read-only half of an insert.
    fn candidates(&self, rows: &Rows, query: &Query, level: u8) -> Vec<Vec<Scored>> {
        let Some((entry, top)) = self.entry else { return Vec::new() };
        let mut nearest = vec![Scored(rows.score(query, entry as usize), entry)];
        for layer in (level.saturating_add(1)..=top).rev() {
            nearest = self.search_layer(rows, query, &nearest, 1, layer, None);
        }
        let mut per_layer = vec![Vec::new(); usize::from(level.min(top)) + 1];
        for layer in (0..=level.min(top)).rev() {
            nearest = self.search_layer(rows, query, &nearest, self.ef_construction, layer, None);
            per_layer[usize::from(layer)] = nearest.clone();
        }
        per_layer
    }

    /// Appends `slot` at `level` and links it on each of its layers to the best of
    /// `candidates` (per layer, from [`Graph::candidates`]) joined by the points of slots
    /// `peers_from..slot` on that layer, and them back to it: the writing half of an insert.
    fn link(&mut self, rows: &Rows, slot: usize, level: u8, mut candidates: Vec<Vec<Scored>>, peers_from: usize) {
        self.push_point(slot, level);
        if level == ABSENT {
            return;
        }
        let id = slot as u32;
        let top = self.entry.map(|e| e.1);
        for layer in 0..=level {
            let mut pool = candidates.get_mut(usize::from(layer)).map(std::mem::take).unwrap_or_default();
            for peer in peers_from..slot {
                let peer_level = self.levels[peer];
                if peer_level != ABSENT && peer_level >= layer {
                    pool.push(Scored(rows.similarity(slot, peer), peer as u32));
                }
            }
            if pool.is_empty() {
                continue;
            }
            pool.sort_by(|a, b| b.cmp(a));
            pool.dedup_by_key(|s| s.1);
            pool.truncate(self.ef_construction);
            let chosen = self.select(rows, &pool, self.cap(layer));
            self.set_links(id, layer, &chosen);
            for &neighbour in &chosen {
                self.connect(rows, neighbour, id, layer);
            }
        }
        if top.is_none_or(|top| level > top) {
            self.entry = Some((id, level));
        }
    }

    /// Up to `ef` slots near `query` that pass `keep`, with their scores, nearest first.
    pub(crate) fn search(
        &self,
        rows: &Rows,
        query: &Query,
        ef: usize,
        keep: &dyn Fn(usize) -> bool,
    ) -> Vec<(usize, f32)> {
        let Some((entry, top)) = self.entry else { return Vec::new() };
        let mut nearest = vec![Scored(rows.score(query, entry as usize), entry)];
        for layer in (1..=top).rev() {
            nearest = self.search_layer(rows, query, &nearest, 1, layer, None);
        }
        self.search_layer(rows, query, &nearest, ef.max(1), 0, Some(keep))
            .into_iter()
            .map(|s| (s.1 as usize, s.0))
            .collect()
    }

    /// The best `ef` points reachable from `entries` on `layer` (only those passing `keep`,
    /// when given, though every point is walked through), best first.
    fn search_layer(
        &self,
        rows: &Rows,
        query: &Query,
        entries: &[Scored],
        ef: usize,
        layer: u8,
        keep: Option<&dyn Fn(usize) -> bool>,
    ) -> Vec<Scored> {
        VISITED.with(|visited| {
            let mut visited = visited.borrow_mut();
            visited.start(self.points());
            let mut candidates: BinaryHeap<Scored> = BinaryHeap::with_capacity(ef * 2);
            // Results as a min-heap (worst on top) through `Reverse`.
            let mut results: BinaryHeap<std::cmp::Reverse<Scored>> = BinaryHeap::with_capacity(ef + 1);
            let admits = |id: u32| keep.is_none_or(|keep| keep(id as usize));
            for &e in entries {
                if visited.mark(e.1) {
                    candidates.push(e);
                    if admits(e.1) {
                        offer(&mut results, e, ef);
                    }
                }
            }
            while let Some(best) = candidates.pop() {
                if results.len() >= ef && results.peek().is_some_and(|w| best < w.0) {
                    break;
                }
                // Ask for every unseen neighbour's row before scoring the first, so their
                // memory loads overlap instead of each waiting for the last.
                let links = self.links(best.1, layer);
                for &n in links {
                    if !visited.seen(n) {
                        rows.prefetch(n as usize);
                    }
                }
                for &n in links {
                    if !visited.mark(n) {
                        continue;
                    }
                    let scored = Scored(rows.score(query, n as usize), n);
                    let full = results.len() >= ef;
                    if !full || results.peek().is_some_and(|w| scored > w.0) {
                        candidates.push(scored);
                        if admits(n) {
                            offer(&mut results, scored, ef);
                        }
                    }
                }
            }
            let mut out: Vec<Scored> = results.into_iter().map(|r| r.0).collect();
            out.sort_by(|a, b| b.cmp(a));
            out
        })
    }

    /// The heuristic neighbour choice (the paper's algorithm 4, keeping pruned connections):
    /// walking `found` best first, a point is taken when it is nearer the new point than any
    /// point already taken, which spreads links in every direction instead of into one
    /// cluster; the places left are then filled with the nearest points passed over (as
    /// `hnsw_rs` does), so a point's list is full whenever enough points were found.
    fn select(&self, rows: &Rows, found: &[Scored], cap: usize) -> Vec<u32> {
        let mut kept: Vec<u32> = Vec::with_capacity(cap);
        let mut passed: Vec<u32> = Vec::new();
        for &Scored(score, id) in found {
            if kept.len() >= cap {
                break;
            }
            if kept.iter().all(|&k| rows.similarity(id as usize, k as usize) <= score) {
                kept.push(id);
            } else {
                passed.push(id);
            }
        }
        let room = cap - kept.len();
        kept.extend(passed.into_iter().take(room));
        kept
    }

    /// Links `neighbour` to `new` on `layer`; when its list is full, the list is chosen again
    /// from itself and `new` by [`Graph::select`] (as hnswlib does), so the link dropped is one
    /// of the points that another kept link already leads towards, not simply the least
    /// similar. On 100,000 scale-corpus vectors (int8, `examples/npy_sweep.rs`) keeping the
    /// most similar instead gave recall@10 0.9115 at `ef_search` 200 (0.9405 with the
    /// heuristic) at the same build time.
    fn connect(&mut self, rows: &Rows, neighbour: u32, new: u32, layer: u8) {
        let cap = self.cap(layer);
        let current = self.links(neighbour, layer);
        if current.contains(&new) {
            return;
        }
        if current.len() < cap {
            let mut links = current.to_vec();
            links.push(new);
            self.set_links(neighbour, layer, &links);
            return;
        }
        let mut pool: Vec<Scored> = current
            .iter()
            .chain(std::iter::once(&new))
            .map(|&id| Scored(rows.similarity(neighbour as usize, id as usize), id))
            .collect();
        pool.sort_by(|a, b| b.cmp(a));
        let chosen = self.select(rows, &pool, cap);
        self.set_links(neighbour, layer, &chosen);
    }

    fn cap(&self, layer: u8) -> usize {
        if layer == 0 {
            self.m0
        } else {
            self.m
        }
    }

    /// Appends `slot` (which must be the next point) at `level`.
    fn push_point(&mut self, slot: usize, level: u8) {
        debug_assert_eq!(slot, self.points());
        self.levels.push(level);
        self.links0.extend(std::iter::repeat_n(0, 1 + self.m0));
        if level == ABSENT || level == 0 {
            self.upper_at.push(NO_UPPER);
        } else {
            self.upper_at.push(self.upper.len() as u32);
            self.upper.extend(std::iter::repeat_n(0, usize::from(level) * (1 + self.m)));
        }
    }

    /// The block (count, then ids) of `id` on `layer`.
    fn block_range(&self, id: u32, layer: u8) -> std::ops::Range<usize> {
        if layer == 0 {
            let at = id as usize * (1 + self.m0);
            at..at + 1 + self.m0
        } else {
            let at = self.upper_at[id as usize] as usize + (usize::from(layer) - 1) * (1 + self.m);
            at..at + 1 + self.m
        }
    }

    fn links(&self, id: u32, layer: u8) -> &[u32] {
        let range = self.block_range(id, layer);
        let block = if layer == 0 { &self.links0[range] } else { &self.upper[range] };
        &block[1..1 + block[0] as usize]
    }

    fn set_links(&mut self, id: u32, layer: u8, links: &[u32]) {
        let changed = self.changed.get_mut().unwrap_or_else(|p| p.into_inner());
        let word = id as usize / 64;
        if changed.len() <= word {
            changed.resize(word + 1, 0);
        }
        changed[word] |= 1 << (id % 64);
        let range = self.block_range(id, layer);
        let block = if layer == 0 { &mut self.links0[range] } else { &mut self.upper[range] };
        block[0] = links.len() as u32;
        block[1..1 + links.len()].copy_from_slice(links);
    }

    /// A point's whole link lists: its layer-0 block, then its upper blocks (empty for a
    /// slot never inserted).
    fn blocks_of(&self, id: u32) -> Vec<u32> {
        let level = self.levels[id as usize];
        if level == ABSENT {
            return Vec::new();
        }
        let mut out = self.links0[self.block_range(id, 0)].to_vec();
        if level > 0 {
            let at = self.upper_at[id as usize] as usize;
            out.extend_from_slice(&self.upper[at..at + usize::from(level) * (1 + self.m)]);
        }
        out
    }

    /// What changed since the graph had `points_before` points and its changes were last
    /// forgotten: the new points' levels, the entry point, and the link lists of every new
    /// point and every older one whose links changed.
    pub(crate) fn changes(&self, points_before: usize) -> GraphPatch {
        let changed = self.changed.lock().unwrap_or_else(|p| p.into_inner());
        let points_before = points_before.min(self.points());
        let old = changed.iter().enumerate().flat_map(|(word, &bits)| {
            (0..64).filter(move |bit| bits & (1 << bit) != 0).map(move |bit| (word * 64 + bit) as u32)
        });
        let ids = old.filter(|&id| (id as usize) < points_before).chain(points_before as u32..self.points() as u32);
        GraphPatch {
            points_before,
            levels: self.levels[points_before..].to_vec(),
            entry: self.entry.map(|e| e.0),
            blocks: ids.filter(|&id| self.levels[id as usize] != ABSENT).map(|id| (id, self.blocks_of(id))).collect(),
        }
    }

    /// Forgets which links changed (a save wrote them).
    pub(crate) fn forget_changes(&self) {
        self.changed.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// Applies a log record's [`GraphPatch`], checked as [`Graph::from_parts`] checks a saved
    /// graph, so that no link, offset or count can index out of bounds.
    pub(crate) fn apply(&mut self, patch: GraphPatch) -> Result<()> {
        let bad = |what: &str| Error::Vector(format!("a logged graph change is inconsistent: {what}"));
        if patch.points_before != self.points() {
            return Err(bad("it starts at another point count"));
        }
        if patch.levels.iter().any(|&l| l != ABSENT && l > MAX_LEVEL) {
            return Err(bad("a level past the top"));
        }
        for &level in &patch.levels {
            self.push_point(self.points(), level);
        }
        let points = self.points();
        for (id, words) in patch.blocks {
            let Some(&level) = self.levels.get(id as usize).filter(|&&l| l != ABSENT) else {
                return Err(bad(&format!("links for point {id}, which is not in the graph")));
            };
            if words.len() != 1 + self.m0 + usize::from(level) * (1 + self.m) {
                return Err(bad(&format!("point {id}'s links have the wrong length")));
            }
            let mut at = 0;
            for layer in 0..=level {
                let block = &words[at..at + 1 + self.cap(layer)];
                let count = block[0] as usize;
                let linked_ok = |&n: &u32| {
                    (n as usize) < points && self.levels[n as usize] != ABSENT && self.levels[n as usize] >= layer
                };
                if count > self.cap(layer) || !block[1..1 + count].iter().all(linked_ok) {
                    return Err(bad(&format!("point {id} has too many links or links off its layer")));
                }
                let range = self.block_range(id, layer);
                let target = if layer == 0 { &mut self.links0[range] } else { &mut self.upper[range] };
                target.copy_from_slice(block);
                at += block.len();
            }
        }
        let top = patch.levels.iter().chain(self.entry.as_ref().map(|e| &e.1)).filter(|&&l| l != ABSENT).max();
        self.entry = match (patch.entry, top) {
            (None, None) => None,
            (Some(e), Some(&top)) if (e as usize) < points && self.levels[e as usize] == top => Some((e, top)),
            _ => return Err(bad("the entry point")),
        };
        Ok(())
    }

    /// The graph's arrays, for the vector file.
    pub(crate) fn parts(&self) -> GraphParts {
        GraphParts {
            m: self.m,
            levels: self.levels.clone(),
            links0: self.links0.clone(),
            upper_at: self.upper_at.clone(),
            upper: self.upper.clone(),
            entry: self.entry.map(|e| e.0),
        }
    }

    /// A graph from saved parts, checked so that no link, offset or count can index out of
    /// bounds (the vector file's checksum already vouches for the bytes).
    pub(crate) fn from_parts(params: &HnswParams, parts: GraphParts) -> Result<Self> {
        let bad = |what: &str| Error::Vector(format!("the saved graph is inconsistent: {what}"));
        let mut graph = Graph::new(params);
        if parts.m != graph.m {
            return Err(bad("its m differs from the parameters'"));
        }
        let points = parts.levels.len();
        if parts.links0.len() != points * (1 + graph.m0) || parts.upper_at.len() != points {
            return Err(bad("array lengths do not match the point count"));
        }
        let mut upper_len = 0usize;
        for (id, (&level, &at)) in parts.levels.iter().zip(&parts.upper_at).enumerate() {
            if level == ABSENT || level == 0 {
                if at != NO_UPPER {
                    return Err(bad("a layer-0 point has upper links"));
                }
            } else {
                if level > MAX_LEVEL || at as usize != upper_len {
                    return Err(bad(&format!("point {id} has a bad level or offset")));
                }
                upper_len += usize::from(level) * (1 + graph.m);
            }
        }
        if parts.upper.len() != upper_len {
            return Err(bad("the upper layers' length"));
        }
        graph.levels = parts.levels;
        graph.links0 = parts.links0;
        graph.upper_at = parts.upper_at;
        graph.upper = parts.upper;
        for id in 0..points as u32 {
            let level = graph.levels[id as usize];
            if level == ABSENT {
                continue;
            }
            for layer in 0..=level {
                let block = &(if layer == 0 { &graph.links0 } else { &graph.upper })[graph.block_range(id, layer)];
                let count = block[0] as usize;
                if count > graph.cap(layer) {
                    return Err(bad(&format!("point {id} has too many links")));
                }
                let linked_ok = |&n: &u32| {
                    (n as usize) < points && graph.levels[n as usize] != ABSENT && graph.levels[n as usize] >= layer
                };
                if !block[1..1 + count].iter().all(linked_ok) {
                    return Err(bad(&format!("point {id} links to a point that is not on its layer")));
                }
            }
        }
        graph.entry = match parts.entry {
            None if points == 0 || graph.levels.iter().all(|&l| l == ABSENT) => None,
            Some(e) if (e as usize) < points && graph.levels[e as usize] != ABSENT => {
                let level = graph.levels[e as usize];
                if graph.levels.iter().any(|&l| l != ABSENT && l > level) {
                    return Err(bad("the entry point is not on the top layer"));
                }
                Some((e, level))
            }
            _ => return Err(bad("the entry point")),
        };
        Ok(graph)
    }
}

/// Adds `scored` to the bounded min-heap `results`, dropping its worst past `ef`.
/// Slots prepared for [`Graph::link_one`] by [`Graph::prepare`]: from slot `from` on, each
/// one's level and candidates per layer.
#[derive(Debug, Default)]
pub(crate) struct Prepared {
    from: usize,
    links: Vec<(u8, Vec<Vec<Scored>>)>,
}

fn offer(results: &mut BinaryHeap<std::cmp::Reverse<Scored>>, scored: Scored, ef: usize) {
    results.push(std::cmp::Reverse(scored));
    if results.len() > ef {
        results.pop();
    }
}

/// The level of `slot`: `floor(-ln(u) / ln(m))` for `u` uniform on (0, 1] from a hash of
/// the slot, so a point reaches layer `l` with probability `m^-l`.
fn level_of(slot: usize, m: usize) -> u8 {
    let mut z = (slot as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    let u = ((z >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
    let level = (-u.ln() / (m as f64).ln()).floor();
    level.min(f64::from(MAX_LEVEL)) as u8
}

/// Which points a walk has seen: one mark per point, reset by bumping the epoch.
struct Visited {
    marks: Vec<u16>,
    epoch: u16,
}

impl Visited {
    fn start(&mut self, points: usize) {
        if self.marks.len() < points {
            self.marks.resize(points, 0);
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.marks.iter_mut().for_each(|m| *m = 0);
            self.epoch = 1;
        }
    }

    /// Whether `id` is marked.
    #[inline]
    fn seen(&self, id: u32) -> bool {
        self.marks[id as usize] == self.epoch
    }

    /// Marks `id`; returns whether it was unmarked.
    #[inline]
    fn mark(&mut self, id: u32) -> bool {
        let mark = &mut self.marks[id as usize];
        let fresh = *mark != self.epoch;
        *mark = self.epoch;
        fresh
    }
}

thread_local! {
    static VISITED: RefCell<Visited> = const { RefCell::new(Visited { marks: Vec::new(), epoch: 0 }) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Quantization;

    fn rows(n: usize, dim: usize, quantization: Quantization) -> Rows {
        let mut state = 99u64;
        let mut rows = Rows::new(dim, quantization);
        for _ in 0..n {
            let v: Vec<f32> = (0..dim)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((state >> 33) as f32 / (1u64 << 31) as f32) - 0.5
                })
                .collect();
            rows.push(&crate::distance::normalised(&v).unwrap());
        }
        rows
    }

    /// Past `PARALLEL_FROM` points inserts go in parallel chunks: the graph is still the same
    /// on every build (whatever the threads did first), links every point, and finds each.
    #[test]
    fn chunked_inserts_are_deterministic() {
        let rows = rows(PARALLEL_FROM + 2_000, 12, Quantization::Int8);
        let params = HnswParams { m: 6, ef_construction: 24, ..HnswParams::default() };
        let build = || {
            let mut graph = Graph::new(&params);
            graph.insert_from(&rows, 0, PARALLEL_FROM + 2_000, &|slot| slot % 97 != 3);
            graph
        };
        let (a, b) = (build(), build());
        assert_eq!(a.parts().links0, b.parts().links0);
        assert_eq!(a.parts().upper, b.parts().upper);
        let late = (PARALLEL_FROM..PARALLEL_FROM + 2_000).filter(|s| s % 97 != 3);
        assert!(late.clone().all(|s| !a.links(s as u32, 0).is_empty()), "a chunked point has no links");
        let found =
            late.step_by(50).filter(|&s| a.search(&rows, &rows.query(rows.vector(s)), 16, &|_| true)[0].0 == s).count();
        assert!(found >= 38, "{found} of 40 chunked points find themselves first");
    }

    #[test]
    fn levels_follow_the_geometric_law() {
        let at_least_one = (0..100_000).filter(|&s| level_of(s, 16) >= 1).count();
        assert!((5_500..7_000).contains(&at_least_one), "{at_least_one} of 100000 above layer 0 (expect ~6250)");
        assert_eq!(level_of(12345, 16), level_of(12345, 16));
    }

    #[test]
    fn finds_itself_and_survives_its_parts() {
        for quantization in [Quantization::F32, Quantization::Int8] {
            let rows = rows(600, 24, quantization);
            let params = HnswParams { m: 6, ef_construction: 40, ..HnswParams::default() };
            let mut graph = Graph::new(&params);
            graph.insert_from(&rows, 0, 600, &|slot| slot % 50 != 7);
            assert_eq!(graph.points(), 600);
            for slot in (0..600).step_by(13).filter(|s| s % 50 != 7) {
                let found: Vec<usize> = graph
                    .search(&rows, &rows.query(rows.vector(slot)), 10, &|_| true)
                    .into_iter()
                    .map(|h| h.0)
                    .collect();
                assert_eq!(found[0], slot, "{quantization:?}");
                assert!(found.iter().all(|s| s % 50 != 7), "a gap was linked");
            }
            let even = graph.search(&rows, &rows.query(rows.vector(3)), 10, &|s| s % 2 == 0);
            assert!(even.len() == 10 && even.iter().all(|s| s.0 % 2 == 0));
            let again = Graph::from_parts(&params, graph.parts()).unwrap();
            assert_eq!(
                again.search(&rows, &rows.query(rows.vector(5)), 10, &|_| true),
                graph.search(&rows, &rows.query(rows.vector(5)), 10, &|_| true)
            );
            let mut broken = graph.parts();
            broken.links0[1] = 10_000;
            broken.links0[0] = broken.links0[0].max(1);
            assert!(Graph::from_parts(&params, broken).is_err());
        }
    }
}
