//! Integration tests for `braid-vector`: recall against exact search, the permission
//! invariant on both paths, tombstones, persistence faults, and a proptest against an oracle.

use std::path::Path;

use braid_core::{AccessPolicy, AllowedSet, Error, OrdSet, Ordinal, Principal, Visibility};
use braid_vector::{HnswParams, Quantization, SearchPath, VectorStore, FORMAT_VERSION, VECTORS_FILE};
use proptest::prelude::*;

/// A small seeded generator (xorshift64*), so every run sees the same data.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn gaussian(&mut self) -> f32 {
        let (u, v) = (self.unit().max(1e-12), self.unit());
        ((-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()) as f32
    }
    fn unit_vector(&mut self, dim: usize) -> Vec<f32> {
        let v: Vec<f32> = (0..dim).map(|_| self.gaussian()).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }
}

fn allowed(ords: impl IntoIterator<Item = Ordinal>) -> AllowedSet {
    let everyone = Visibility::new(Principal::public(), AccessPolicy::Public, None);
    AllowedSet::new(everyone, ords.into_iter().collect::<OrdSet>())
}

fn dataset(n: usize, dim: usize, seed: u64) -> Vec<(Ordinal, Vec<f32>)> {
    let mut rng = Rng::new(seed);
    (0..n as Ordinal).map(|o| (o, rng.unit_vector(dim))).collect()
}

fn store_of(data: &[(Ordinal, Vec<f32>)], dim: usize, params: HnswParams) -> VectorStore {
    let mut store = VectorStore::new(dim, params);
    store.insert_batch(data).unwrap();
    store
}

/// Mean recall@k of `search` against `search_exact`; also checks every hit is allowed and live
/// and that the path is `expected`.
fn recall_at(store: &VectorStore, queries: &[Vec<f32>], k: usize, allowed: &AllowedSet, expected: SearchPath) -> f64 {
    let (mut found_total, mut truth_total) = (0usize, 0usize);
    for q in queries {
        let truth = store.search_exact(q, k, allowed).unwrap();
        let found = store.search(q, k, allowed).unwrap();
        assert_eq!(found.path, expected, "allowed {} of {}", allowed.len(), store.len());
        assert!(found.hits.len() <= k);
        assert_eq!(found.hits.len(), truth.len(), "a short answer while enough vectors qualify");
        for &(ord, _) in &found.hits {
            assert!(allowed.contains(ord), "ord {ord} is not allowed");
            assert!(store.contains(ord), "ord {ord} is deleted");
        }
        truth_total += truth.len();
        found_total += truth.iter().filter(|t| found.hits.iter().any(|h| h.0 == t.0)).count();
    }
    found_total as f64 / truth_total.max(1) as f64
}

const N: usize = 3_000;
const DIM: usize = 384;

/// One store per quantization serves both recall checks, since building a 3,000 x 384 graph
/// dominates the test's time in debug builds: first unfiltered, then with deletes and filters.
#[test]
fn recall_against_exact_search() {
    recall_against_exact_search_with(Quantization::F32);
}

#[test]
fn recall_against_exact_search_int8() {
    recall_against_exact_search_with(Quantization::Int8);
}

/// An int8 store's exact scan finds nearly the f32 store's exact top 10 (the codes' rounding
/// is all that differs), and its scores stay within the rounding bound.
#[test]
fn int8_codes_keep_the_exact_top_ten() {
    let data = dataset(N, DIM, 1);
    let exact = store_of(&data, DIM, HnswParams::default());
    let coded = store_of(&data, DIM, HnswParams { quantization: Quantization::Int8, ..HnswParams::default() });
    assert_eq!(coded.quantization(), Quantization::Int8);
    assert!(coded.memory_bytes() * 3 < exact.memory_bytes(), "{} vs {}", coded.memory_bytes(), exact.memory_bytes());
    let mut rng = Rng::new(3);
    let everyone = allowed(0..N as Ordinal);
    let (mut found, mut total) = (0, 0);
    for _ in 0..100 {
        let q = rng.unit_vector(DIM);
        let truth = exact.search_exact(&q, 10, &everyone).unwrap();
        let got = coded.search_exact(&q, 10, &everyone).unwrap();
        total += truth.len();
        found += truth.iter().filter(|t| got.iter().any(|g| g.0 == t.0)).count();
        for (ord, score) in got {
            let want: f32 = exact.vector(ord).unwrap().iter().zip(&q).map(|(a, b)| a * b).sum();
            assert!((score - want).abs() < 0.01, "ord {ord}: {score} vs {want}");
        }
    }
    let recall = found as f64 / total as f64;
    assert!(recall >= 0.95, "int8 exact recall@10 against f32 = {recall}");
}

fn recall_against_exact_search_with(quantization: Quantization) {
    let data = dataset(N, DIM, 1);
    let mut store = store_of(&data, DIM, HnswParams { quantization, ..HnswParams::default() });
    let mut rng = Rng::new(2);
    let queries: Vec<Vec<f32>> = (0..100).map(|_| rng.unit_vector(DIM)).collect();

    // Unfiltered, at the default ef_search, forced onto the graph (3,000 records are below
    // the default exact threshold, where the scan would answer).
    store.set_exact_threshold(0);
    let recall = recall_at(&store, &queries, 10, &allowed(0..N as Ordinal), SearchPath::Hnsw);
    assert!(recall >= 0.98, "unfiltered recall@10 = {recall}");

    // Some deleted records inside every allowed set: they must never come back.
    for ord in (0..N as Ordinal).filter(|o| o % 17 == 0) {
        assert!(store.delete(ord));
    }
    let queries = &queries[..30];
    for pct in [1u64, 10, 50] {
        let subset = allowed((0..N as Ordinal).filter(|o| (o.wrapping_mul(2_654_435_761) >> 5) % 100 < pct));
        // With the default threshold, small allowed sets take the exact path.
        store.set_exact_threshold(HnswParams::default().exact_threshold);
        let expected = if subset.len() < store.params().exact_threshold { SearchPath::Exact } else { SearchPath::Hnsw };
        if pct == 1 {
            assert_eq!(expected, SearchPath::Exact);
        }
        let recall = recall_at(&store, queries, 10, &subset, expected);
        assert!(recall >= 0.95, "{pct}%: recall@10 = {recall} on the {} path", expected.name());
        if pct >= 10 {
            // Forced onto the filtered graph, recall holds as well.
            store.set_exact_threshold(0);
            let recall = recall_at(&store, queries, 10, &subset, SearchPath::Hnsw);
            assert!(recall >= 0.95, "{pct}%: recall@10 = {recall} on the forced graph path");
        }
    }
}

#[test]
fn errors_and_edge_cases() {
    let mut store = VectorStore::new(4, HnswParams::default());
    assert!(matches!(store.insert(1, &[1.0, 0.0]), Err(Error::DimensionMismatch { expected: 4, got: 2 })));
    assert!(matches!(store.insert(1, &[f32::NAN, 0.0, 0.0, 1.0]), Err(Error::InvalidRecord { .. })));
    assert!(matches!(store.insert(1, &[f32::INFINITY, 0.0, 0.0, 1.0]), Err(Error::InvalidRecord { .. })));
    assert!(matches!(store.insert(1, &[0.0; 4]), Err(Error::InvalidRecord { .. })));
    // A bad item anywhere in a batch stores nothing.
    let batch = vec![(1, vec![1.0, 0.0, 0.0, 0.0]), (2, vec![0.0, 1.0])];
    assert!(matches!(store.insert_batch(&batch), Err(Error::DimensionMismatch { expected: 4, got: 2 })));
    assert!(store.is_empty());

    store.insert(1, &[1.0, 0.0, 0.0, 0.0]).unwrap();
    store.insert(2, &[0.0, 2.0, 0.0, 0.0]).unwrap(); // normalised on the way in
    assert_eq!(store.vector(2), Some(vec![0.0, 1.0, 0.0, 0.0]));
    let all = allowed([1, 2, 3]);
    assert!(matches!(store.search(&[1.0; 3], 5, &all), Err(Error::DimensionMismatch { expected: 4, got: 3 })));
    assert!(matches!(store.search_exact(&[1.0; 5], 5, &all), Err(Error::DimensionMismatch { expected: 4, got: 5 })));
    assert!(matches!(store.search(&[f32::NAN, 0.0, 0.0, 0.0], 5, &all), Err(Error::InvalidRequest { .. })));
    assert!(matches!(store.search(&[0.0; 4], 5, &all), Err(Error::InvalidRequest { .. })));
    assert!(store.search(&[1.0, 0.0, 0.0, 0.0], 0, &all).unwrap().hits.is_empty());
    assert!(store.search_exact(&[1.0, 0.0, 0.0, 0.0], 0, &all).unwrap().is_empty());
    assert!(store.search(&[1.0, 0.0, 0.0, 0.0], 5, &allowed([])).unwrap().hits.is_empty());
    let found = store.search(&[1.0, 0.0, 0.0, 0.0], 5, &all).unwrap();
    assert_eq!(found.hits, vec![(1, 1.0), (2, 0.0)]);

    // Re-inserting replaces; deleting twice reports the second as a no-op.
    store.insert(1, &[0.0, 0.0, 1.0, 0.0]).unwrap();
    assert_eq!(store.len(), 2);
    assert_eq!(store.vector(1), Some(vec![0.0, 0.0, 1.0, 0.0]));
    assert_eq!(store.search(&[0.0, 0.0, 1.0, 0.0], 1, &all).unwrap().hits, vec![(1, 1.0)]);
    assert!(store.delete(1));
    assert!(!store.delete(1));
    assert!(!store.contains(1) && store.vector(1).is_none());
    assert_eq!(store.search(&[0.0, 0.0, 1.0, 0.0], 5, &all).unwrap().hits.len(), 1);

    // Later items of a batch win over earlier ones with the same ordinal.
    store.insert_batch(&[(5, vec![1.0, 0.0, 0.0, 0.0]), (5, vec![0.0, 0.0, 0.0, 1.0])]).unwrap();
    assert_eq!(store.vector(5), Some(vec![0.0, 0.0, 0.0, 1.0]));
}

#[test]
fn store_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<VectorStore>();
}

#[test]
fn tombstones_are_skipped_and_rebuild_keeps_results_correct() {
    let (n, dim) = (1_200, 32);
    let data = dataset(n, dim, 5);
    let mut rng = Rng::new(6);
    let queries: Vec<Vec<f32>> = (0..30).map(|_| rng.unit_vector(dim)).collect();
    let everything = allowed(0..n as Ordinal);

    // No rebuild: half the records become tombstones in the graph, and are skipped.
    let never = HnswParams { exact_threshold: 0, rebuild_tombstone_fraction: 1.0, ..HnswParams::default() };
    let mut store = store_of(&data, dim, never);
    for ord in (0..n as Ordinal).step_by(2) {
        store.delete(ord);
    }
    assert_eq!((store.len(), store.tombstones()), (n / 2, n / 2));
    let recall = recall_at(&store, &queries, 10, &everything, SearchPath::Hnsw);
    assert!(recall >= 0.95, "recall@10 with tombstones = {recall}");

    // Default fraction: deleting past 20 % rebuilds the graph, dropping the tombstones.
    let params = HnswParams { exact_threshold: 0, ..HnswParams::default() };
    let mut store = store_of(&data, dim, params);
    let mut deleted = 0;
    let mut rebuilt = false;
    for ord in (0..n as Ordinal).step_by(2) {
        store.delete(ord);
        deleted += 1;
        if store.tombstones() < deleted {
            rebuilt = true;
        }
        assert!(store.tombstones() as f32 <= 0.2 * (store.len() + store.tombstones()) as f32 + 1.0);
    }
    assert!(rebuilt, "deleting half never rebuilt the graph");
    let recall = recall_at(&store, &queries, 10, &everything, SearchPath::Hnsw);
    assert!(recall >= 0.95, "recall@10 after rebuilds = {recall}");

    // Replacing vectors also counts as tombstones.
    let replacements: Vec<(Ordinal, Vec<f32>)> =
        (1..n as Ordinal).step_by(2).take(300).map(|o| (o, rng.unit_vector(dim))).collect();
    store.insert_batch(&replacements).unwrap();
    assert_eq!(store.len(), n / 2);
    for (ord, v) in &replacements {
        let top = store.search(v, 1, &everything).unwrap();
        assert_eq!(top.hits[0].0, *ord);
    }
}

fn roundtrip_store() -> (VectorStore, Vec<Vec<f32>>) {
    let (n, dim) = (600, 16);
    let data = dataset(n, dim, 7);
    let params = HnswParams { exact_threshold: 100, rebuild_tombstone_fraction: 0.5, ..HnswParams::default() };
    let mut store = store_of(&data, dim, params);
    for ord in (0..n as Ordinal).step_by(5) {
        store.delete(ord);
    }
    let mut rng = Rng::new(8);
    (store, (0..20).map(|_| rng.unit_vector(dim)).collect())
}

#[test]
fn save_open_roundtrip_returns_identical_results() {
    let (store, queries) = roundtrip_store();
    let dir = tempfile::tempdir().unwrap();
    store.save(dir.path()).unwrap();
    let reopened = VectorStore::open(dir.path()).unwrap();
    assert_eq!(reopened.len(), store.len());
    assert_eq!(reopened.dim(), store.dim());
    assert_eq!(reopened.params(), store.params());
    assert_eq!(reopened.tombstones(), store.tombstones());
    assert!(reopened.graph_was_loaded(), "the graph is loaded from its dump, not rebuilt");
    for ord in 0..600 {
        assert_eq!(reopened.vector(ord), store.vector(ord));
    }
    let small = allowed((0..600).filter(|o| o % 9 == 0)); // exact path
    let large = allowed(0..600); // graph path
    for q in &queries {
        assert_eq!(reopened.search(q, 10, &small).unwrap(), store.search(q, 10, &small).unwrap());
        // The graph is the one saved: the same answers, by the same path.
        let before = store.search(q, 10, &large).unwrap();
        let after = reopened.search(q, 10, &large).unwrap();
        assert_eq!((before.path, after.path), (SearchPath::Hnsw, SearchPath::Hnsw));
        assert_eq!(after.hits, before.hits);
        assert_eq!(after.hits, reopened.search_exact(q, 10, &large).unwrap());
    }
    // Saving again over an existing store replaces it atomically.
    reopened.save(dir.path()).unwrap();
    assert_eq!(VectorStore::open(dir.path()).unwrap().len(), store.len());
    assert!(!dir.path().join(format!("{VECTORS_FILE}.tmp")).exists());
    // One file holds everything.
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(files, [VECTORS_FILE], "{files:?}");
}

#[test]
fn a_loaded_graph_takes_inserts_and_deletes_and_saves_again() {
    let (mut store, queries) = roundtrip_store();
    let dir = tempfile::tempdir().unwrap();
    store.save(dir.path()).unwrap();
    let mut reopened = VectorStore::open(dir.path()).unwrap();
    let more = dataset(700, 16, 99).split_off(600);
    reopened.insert_batch(&more).unwrap();
    store.insert_batch(&more).unwrap();
    for ord in [1, 2, 650] {
        assert!(reopened.delete(ord));
        store.delete(ord);
    }
    assert!(reopened.graph_was_loaded(), "inserts and deletes did not rebuild the graph");
    reopened.save(dir.path()).unwrap();
    let again = VectorStore::open(dir.path()).unwrap();
    let everything = allowed(0..700);
    for q in &queries {
        let exact = store.search_exact(q, 10, &everything).unwrap();
        assert_eq!(again.search_exact(q, 10, &everything).unwrap(), exact);
        let found = again.search(q, 10, &everything).unwrap();
        assert_eq!(found.path, SearchPath::Hnsw);
        assert!(found.hits.iter().all(|h| ![1, 2, 650].contains(&h.0)));
        let hit = found.hits.iter().filter(|h| exact.contains(h)).count();
        assert!(hit >= 9, "recall {hit}/10 after reload, inserts and deletes");
    }
}

/// A record with passages scores by its best vector and comes back once, on both paths,
/// through replacement, deletion, a compaction and a save.
#[test]
fn passages_score_a_record_by_its_best_vector() {
    let dim = 16;
    let mut rng = Rng::new(5);
    let records: Vec<(Ordinal, Vec<Vec<f32>>)> =
        (0..600).map(|o| (o, (0..3).map(|_| rng.unit_vector(dim)).collect())).collect();
    let params = HnswParams { exact_threshold: 100, rebuild_tombstone_fraction: 0.2, ..HnswParams::default() };
    let mut store = VectorStore::new(dim, params);
    store.insert_passages(&records).unwrap();
    assert_eq!((store.len(), store.vectors()), (600, 1800));
    assert!(store.has_graph());
    assert_eq!(store.vector(7).unwrap(), records[7].1[0]);
    let everything = allowed(0..600);
    let first_is = |store: &VectorStore, query: &[f32], ord: Ordinal| {
        let graph = store.search(query, 10, &everything).unwrap();
        assert_eq!(graph.path, SearchPath::Hnsw);
        for hits in [graph.hits, store.search_exact(query, 10, &everything).unwrap()] {
            assert_eq!(hits.len(), 10);
            assert_eq!(hits[0].0, ord, "{hits:?}");
            assert!((hits[0].1 - 1.0).abs() < 1e-5, "{hits:?}");
            let mut seen = std::collections::BTreeSet::new();
            assert!(hits.iter().all(|h| seen.insert(h.0)), "a record twice in {hits:?}");
        }
    };
    for o in [0, 17, 599] {
        first_is(&store, &records[o as usize].1[2], o);
    }
    // A passage that no longer belongs to its record finds it no more.
    store.insert_passages(&[(17, vec![records[17].1[0].clone()])]).unwrap();
    assert_ne!(store.search_exact(&records[17].1[2], 1, &everything).unwrap()[0].0, 17);
    first_is(&store, &records[17].1[0], 17);
    for o in 100..250 {
        assert!(store.delete(o));
    }
    assert!(store.tombstones() < 450, "453 of 1,801 slots dead should have compacted the arena once");
    assert_eq!((store.len(), store.vectors()), (450, 1348));
    first_is(&store, &records[300].1[1], 300);
    assert!(store.search_exact(&records[150].1[1], 10, &everything).unwrap().iter().all(|h| h.0 != 150));

    let dir = tempfile::tempdir().unwrap();
    store.save(dir.path()).unwrap();
    let reopened = VectorStore::open(dir.path()).unwrap();
    assert!(reopened.graph_was_loaded());
    assert_eq!((reopened.len(), reopened.vectors()), (450, 1348));
    for q in [&records[300].1[1], &records[17].1[0], &records[599].1[2]] {
        assert_eq!(reopened.search(q, 10, &everything).unwrap(), store.search(q, 10, &everything).unwrap());
        assert_eq!(reopened.search_exact(q, 10, &everything).unwrap(), store.search_exact(q, 10, &everything).unwrap());
    }
    assert!(matches!(store.insert_passages(&[(1, vec![])]), Err(Error::InvalidRecord { .. })));
}

/// A batch checked whole and then inserted in parts (as a commit does, so searches run in
/// between) holds what one insert of it holds, and a batch with one bad vector is refused by
/// the check before any part of it goes in.
#[test]
fn a_batch_checked_whole_goes_in_by_parts_as_one() {
    let dim = 16;
    let mut rng = Rng::new(11);
    let records: Vec<(Ordinal, Vec<Vec<f32>>)> =
        (0..500).map(|o| (o, (0..1 + o as usize % 3).map(|_| rng.unit_vector(dim)).collect())).collect();
    let params = HnswParams { exact_threshold: 100, ..HnswParams::default() };
    let mut whole = VectorStore::new(dim, params.clone());
    whole.insert_passages(&records).unwrap();
    let mut parts = VectorStore::new(dim, params);
    let checked = parts.check_passages(&records).unwrap();
    for part in checked.chunks(64) {
        parts.insert_checked(part).unwrap();
    }
    assert_eq!((parts.len(), parts.vectors()), (whole.len(), whole.vectors()));
    assert!(parts.has_graph());
    let everything = allowed(0..500);
    for (ord, vectors) in records.iter().step_by(50) {
        let exact = whole.search_exact(&vectors[0], 10, &everything).unwrap();
        assert_eq!(parts.search_exact(&vectors[0], 10, &everything).unwrap(), exact);
        assert_eq!(parts.search(&vectors[0], 10, &everything).unwrap().hits[0].0, *ord);
    }

    let mut bad = vec![(600, vec![rng.unit_vector(dim)]), (601, vec![rng.unit_vector(dim)])];
    bad.push((602, vec![vec![f32::NAN; dim]]));
    assert!(matches!(parts.check_passages(&bad), Err(Error::InvalidRecord { .. })));
    assert!(matches!(parts.check_passages(&[(603, vec![])]), Err(Error::InvalidRecord { .. })));
    assert!(matches!(parts.check_passages(&[(604, vec![vec![1.0; dim + 1]])]), Err(Error::DimensionMismatch { .. })));
    assert_eq!(parts.len(), 500, "a check inserts nothing");
}

/// The `hnsw_rs` dumps a format 2 store kept beside its file are removed by the next save.
#[test]
fn a_save_removes_old_graph_dumps() {
    let (store, _) = roundtrip_store();
    let dir = tempfile::tempdir().unwrap();
    for name in ["graph-1-2.hnsw.graph", "graph-1-2.hnsw.data", "notes.txt"] {
        std::fs::write(dir.path().join(name), b"x").unwrap();
    }
    store.save(dir.path()).unwrap();
    let mut files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    files.sort();
    assert_eq!(files, ["notes.txt", VECTORS_FILE]);
}

/// Every path works on an int8 store: save, reopen, loaded graph, inserts and deletes.
#[test]
fn an_int8_store_roundtrips_with_its_graph() {
    let (n, dim) = (600, 16);
    let data = dataset(n, dim, 7);
    let params = HnswParams { exact_threshold: 100, quantization: Quantization::Int8, ..HnswParams::default() };
    let mut store = store_of(&data, dim, params);
    for ord in (0..n as Ordinal).step_by(5) {
        store.delete(ord);
    }
    let dir = tempfile::tempdir().unwrap();
    store.save(dir.path()).unwrap();
    let mut reopened = VectorStore::open(dir.path()).unwrap();
    assert_eq!(reopened.quantization(), Quantization::Int8);
    assert!(reopened.graph_was_loaded());
    let mut rng = Rng::new(8);
    let everything = allowed(0..n as Ordinal + 10);
    for _ in 0..20 {
        let q = rng.unit_vector(dim);
        assert_eq!(reopened.search(&q, 10, &everything).unwrap(), store.search(&q, 10, &everything).unwrap());
    }
    reopened.insert(n as Ordinal + 3, &data[3].1).unwrap();
    assert!(reopened.delete(1));
    let found = reopened.search(&data[3].1, 2, &everything).unwrap();
    assert_eq!(found.path, SearchPath::Hnsw);
    let top: Vec<Ordinal> = found.hits.iter().map(|h| h.0).collect();
    assert!(top.contains(&3) && top.contains(&(n as Ordinal + 3)), "{top:?}");
}

fn damaged(dir: &Path, damage: impl FnOnce(&mut Vec<u8>)) -> Error {
    let file = dir.join(VECTORS_FILE);
    let mut bytes = std::fs::read(&file).unwrap();
    damage(&mut bytes);
    std::fs::write(&file, &bytes).unwrap();
    VectorStore::open(dir).unwrap_err()
}

#[test]
fn damaged_files_give_typed_errors() {
    let (store, _) = roundtrip_store();
    let file_is = |path: &Path, dir: &Path| assert_eq!(path, dir.join(VECTORS_FILE));
    let fresh = || {
        let dir = tempfile::tempdir().unwrap();
        store.save(dir.path()).unwrap();
        dir
    };

    let dir = fresh();
    match damaged(dir.path(), |b| b.truncate(b.len() - 7)) {
        Error::Corrupt { path, reason } => {
            file_is(&path, dir.path());
            assert!(reason.contains("truncated"), "{reason}");
        }
        other => panic!("truncation gave {other:?}"),
    }
    let dir = fresh();
    match damaged(dir.path(), |b| b.truncate(10)) {
        Error::Corrupt { path, .. } => file_is(&path, dir.path()),
        other => panic!("truncation to 10 bytes gave {other:?}"),
    }
    let dir = fresh();
    match damaged(dir.path(), |b| b.clear()) {
        Error::Corrupt { path, .. } => file_is(&path, dir.path()),
        other => panic!("an empty file gave {other:?}"),
    }
    let dir = fresh();
    match damaged(dir.path(), |b| {
        let mid = b.len() / 2;
        b[mid] ^= 0x40;
    }) {
        Error::Corrupt { path, reason } => {
            file_is(&path, dir.path());
            assert!(reason.contains("checksum"), "{reason}");
        }
        other => panic!("a flipped byte gave {other:?}"),
    }
    let dir = fresh();
    match damaged(dir.path(), |b| b[0] = b'X') {
        Error::Corrupt { path, .. } => file_is(&path, dir.path()),
        other => panic!("bad magic gave {other:?}"),
    }
    let dir = fresh();
    match damaged(dir.path(), |b| b[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes())) {
        Error::FormatVersion { path, found, expected } => {
            file_is(&path, dir.path());
            assert_eq!((found, expected), (FORMAT_VERSION + 1, FORMAT_VERSION));
        }
        other => panic!("a newer version gave {other:?}"),
    }
    // A count that claims more vectors than the file holds.
    let dir = fresh();
    match damaged(dir.path(), |b| b[41..49].copy_from_slice(&u64::MAX.to_le_bytes())) {
        Error::Corrupt { path, .. } => file_is(&path, dir.path()),
        other => panic!("a huge count gave {other:?}"),
    }
    // Flipping every byte position in turn never panics and never opens silently.
    let dir = fresh();
    let good = std::fs::read(dir.path().join(VECTORS_FILE)).unwrap();
    for at in (0..good.len()).step_by(97) {
        let mut bytes = good.clone();
        bytes[at] ^= 0x01;
        std::fs::write(dir.path().join(VECTORS_FILE), &bytes).unwrap();
        assert!(VectorStore::open(dir.path()).is_err(), "flip at byte {at} went unnoticed");
    }

    let empty = tempfile::tempdir().unwrap();
    match VectorStore::open(empty.path()) {
        Err(Error::Corrupt { path, reason }) => {
            file_is(&path, empty.path());
            assert!(reason.contains("missing"), "{reason}");
        }
        other => panic!("a missing file gave {other:?}"),
    }
    assert!(matches!(VectorStore::open(&empty.path().join("nowhere")), Err(Error::Corrupt { .. })));
}

/// What a script of operations should leave live: each record's vectors.
type Model = std::collections::BTreeMap<Ordinal, Vec<Vec<f32>>>;

/// The passages op 2 gives a record: `v`, and `v` rotated by one and by two components.
fn passages_of(v: &[f32]) -> Vec<Vec<f32>> {
    (0..3).map(|turn| (0..v.len()).map(|i| v[(i + turn) % v.len()]).collect()).collect()
}

/// A store built from a script of operations (0, 1: insert one vector; 2: insert three
/// passages; 3: delete), beside a naive model of what should be live.
fn scripted(
    dim: usize,
    ops: &[(u8, Ordinal, Vec<f32>)],
    exact_threshold: usize,
    fraction: f32,
) -> (VectorStore, Model) {
    let params = HnswParams {
        m: 4,
        ef_construction: 16,
        ef_search: 16,
        exact_threshold,
        rebuild_tombstone_fraction: fraction,
        ..HnswParams::default()
    };
    let mut store = VectorStore::new(dim, params);
    let mut model = Model::new();
    for (op, ord, v) in ops {
        if *op < 2 {
            if store.insert(*ord, v).is_ok() {
                model.insert(*ord, vec![v.clone()]);
            }
        } else if *op == 2 {
            let passages = passages_of(v);
            if store.insert_passages(&[(*ord, passages.clone())]).is_ok() {
                model.insert(*ord, passages);
            }
        } else {
            assert_eq!(store.delete(*ord), model.remove(ord).is_some());
        }
    }
    (store, model)
}

/// The best `k` allowed records of `model`, each scored by its best passage's cosine.
fn naive_top(model: &Model, query: &[f32], k: usize, allowed: &AllowedSet) -> Vec<(Ordinal, f32)> {
    let cosine = |v: &[f32]| {
        let dot: f32 = v.iter().zip(query).map(|(a, b)| a * b).sum();
        let norms = v.iter().map(|x| x * x).sum::<f32>().sqrt() * query.iter().map(|x| x * x).sum::<f32>().sqrt();
        dot / norms
    };
    let mut all: Vec<(Ordinal, f32)> = model
        .iter()
        .filter(|(o, _)| allowed.contains(**o))
        .map(|(&o, passages)| (o, passages.iter().map(|v| cosine(v)).fold(f32::MIN, f32::max)))
        .collect();
    all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    all.truncate(k);
    all
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn search_respects_allowed_and_deletes_and_exact_matches_oracle(
        dim in 2usize..6,
        ops in prop::collection::vec((0u8..4, 0u64..48, prop::collection::vec(-1.0f32..1.0, 5)), 1..90),
        allowed_ords in prop::collection::btree_set(0u64..56, 0..56),
        query in prop::collection::vec(-1.0f32..1.0, 5),
        k in 0usize..12,
        exact_threshold in 0usize..24,
        fraction in prop::sample::select(vec![0.0f32, 0.2, 0.5, 1.0]),
    ) {
        let ops: Vec<(u8, Ordinal, Vec<f32>)> = ops.into_iter().map(|(op, o, v)| (op, o, v[..dim].to_vec())).collect();
        let (store, model) = scripted(dim, &ops, exact_threshold, fraction);
        prop_assert_eq!(store.len(), model.len());
        prop_assert_eq!(store.ords().collect::<std::collections::BTreeSet<_>>(), model.keys().copied().collect());
        let allowed = allowed(allowed_ords.iter().copied());
        let query = &query[..dim];
        let Ok(found) = store.search(query, k, &allowed) else {
            // Only an unusable (all-zero) query may be refused.
            prop_assert!(query.iter().all(|x| *x == 0.0));
            return Ok(());
        };
        prop_assert!(found.hits.len() <= k);
        for &(ord, _) in &found.hits {
            prop_assert!(allowed.contains(ord), "ord {} not allowed", ord);
            prop_assert!(model.contains_key(&ord), "ord {} deleted", ord);
        }
        let mut seen = std::collections::BTreeSet::new();
        prop_assert!(found.hits.iter().all(|h| seen.insert(h.0)), "duplicate ord in {:?}", found.hits);

        let exact = store.search_exact(query, k, &allowed).unwrap();
        prop_assert_eq!(store.vectors(), model.values().map(Vec::len).sum::<usize>());
        let oracle = naive_top(&model, query, k, &allowed);
        prop_assert_eq!(exact.len(), oracle.len());
        for (e, o) in exact.iter().zip(&oracle) {
            prop_assert!((e.1 - o.1).abs() < 1e-5, "exact {:?} vs oracle {:?}", exact, oracle);
        }
        // The search returns as many hits as qualify (the graph falls back when short).
        prop_assert_eq!(found.hits.len(), oracle.len());
        if found.path == SearchPath::Exact {
            prop_assert_eq!(&found.hits, &exact);
        }
    }
}

/// Below the exact threshold a store keeps no graph (every search scans), so opening one
/// builds none; reaching the threshold builds it, and its searches take the graph.
#[test]
fn the_graph_exists_only_from_the_exact_threshold_on() {
    let params = HnswParams { exact_threshold: 50, ..HnswParams::default() };
    let mut store = VectorStore::new(8, params);
    let vector = |i: usize| (0..8).map(|d| ((i * 7 + d * 3) % 11) as f32 + 0.5).collect::<Vec<f32>>();
    for i in 0..49 {
        store.insert(i as u64, &vector(i)).unwrap();
    }
    assert!(!store.has_graph());
    let dir = tempfile::tempdir().unwrap();
    store.save(dir.path()).unwrap();
    assert!(!VectorStore::open(dir.path()).unwrap().has_graph());

    store.insert(49, &vector(49)).unwrap();
    assert!(store.has_graph());
    let all = allowed(0..50);
    assert_eq!(store.search(&vector(3), 5, &all).unwrap().path, SearchPath::Hnsw);
    store.save(dir.path()).unwrap();
    assert!(VectorStore::open(dir.path()).unwrap().has_graph());
    store.delete(49);
    assert!(!store.has_graph(), "below the threshold again");
    assert_eq!(store.search(&vector(3), 5, &all).unwrap().path, SearchPath::Exact);
}
