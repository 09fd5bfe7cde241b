//! The log beside the vector file: a save appends only what changed; an open replays it;
//! a torn tail is ignored; the log merges into a new base; old files open; and no search,
//! on either path, returns a record outside the allowed set or deleted after any of it.

use std::path::Path;

use braid_core::{AccessPolicy, AllowedSet, Error, OrdSet, Ordinal, Principal, Visibility};
use braid_vector::{HnswParams, Quantization, SearchPath, VectorStore, LOG_FILE, VECTORS_FILE};

/// A small seeded generator (splitmix64), so every run sees the same data.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    fn vector(&mut self, dim: usize) -> Vec<f32> {
        (0..dim).map(|_| (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5).collect()
    }
}

fn allowed(ords: impl IntoIterator<Item = Ordinal>) -> AllowedSet {
    let everyone = Visibility::new(Principal::public(), AccessPolicy::Public, None);
    AllowedSet::new(everyone, ords.into_iter().collect::<OrdSet>())
}

const DIM: usize = 16;

/// Params whose graph exists from 100 vectors on (so the graph's log path runs), small enough
/// to build quickly in a debug build, and which rebuild only past half tombstones.
fn params(quantization: Quantization) -> HnswParams {
    HnswParams {
        m: 4,
        ef_construction: 32,
        exact_threshold: 100,
        rebuild_tombstone_fraction: 0.5,
        quantization,
        ..HnswParams::default()
    }
}

fn filled(quantization: Quantization, n: u64, rng: &mut Rng) -> VectorStore {
    let mut store = VectorStore::new(DIM, params(quantization));
    let items: Vec<(Ordinal, Vec<f32>)> = (0..n).map(|o| (o, rng.vector(DIM))).collect();
    store.insert_batch(&items).unwrap();
    store
}

fn len_of(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Asserts that `a` and `b` hold the same live records and answer alike: the same hits, bit for
/// bit, on the graph and the exact path, for everything and for a subset allowed.
fn assert_same(a: &VectorStore, b: &VectorStore, rng: &mut Rng, top: Ordinal) {
    assert_eq!((a.len(), a.vectors(), a.tombstones()), (b.len(), b.vectors(), b.tombstones()));
    assert_eq!(a.has_graph(), b.has_graph());
    let mut ords: Vec<Ordinal> = a.ords().collect();
    ords.sort_unstable();
    let mut theirs: Vec<Ordinal> = b.ords().collect();
    theirs.sort_unstable();
    assert_eq!(ords, theirs);
    for &ord in &ords {
        assert_eq!(a.vector(ord), b.vector(ord), "ord {ord}");
    }
    let everything = allowed(0..top);
    let some = allowed((0..top).filter(|o| o % 3 == 0));
    for _ in 0..10 {
        let q = rng.vector(DIM);
        for set in [&everything, &some] {
            assert_eq!(a.search(&q, 10, set).unwrap(), b.search(&q, 10, set).unwrap());
            assert_eq!(a.search_exact(&q, 10, set).unwrap(), b.search_exact(&q, 10, set).unwrap());
        }
    }
}

/// A save after an open appends the changes (new vectors, tombstones, graph links) to the log
/// and leaves the base untouched; the reopened store is the saved one, graph included, and a
/// save with nothing changed writes nothing. Both kinds of rows.
#[test]
fn a_save_appends_only_what_changed_and_an_open_replays_it() {
    for quantization in [Quantization::F32, Quantization::Int8] {
        let mut rng = Rng(1);
        let store = filled(quantization, 1_000, &mut rng);
        let dir = tempfile::tempdir().unwrap();
        store.save(dir.path()).unwrap();
        let base = std::fs::read(dir.path().join(VECTORS_FILE)).unwrap();
        assert!(!dir.path().join(LOG_FILE).exists(), "a first save writes a base only");

        let mut store = VectorStore::open(dir.path()).unwrap();
        let mut next = 1_000;
        for round in 0..4 {
            let items: Vec<(Ordinal, Vec<f32>)> = (0..10).map(|i| (next + i, rng.vector(DIM))).collect();
            next += 10;
            store.insert_batch(&items).unwrap();
            // Replace one record with passages, delete two.
            store.insert_passages(&[(round * 7, vec![rng.vector(DIM), rng.vector(DIM)])]).unwrap();
            assert!(store.delete(round * 7 + 1) && store.delete(next - 3));
            let log_before = len_of(&dir.path().join(LOG_FILE));
            store.save(dir.path()).unwrap();
            let appended = len_of(&dir.path().join(LOG_FILE)) - log_before;
            assert!(appended > 0, "round {round}: nothing appended");
            assert!(
                appended < base.len() as u64 / 4,
                "round {round}: appended {appended} of a {} byte base",
                base.len()
            );
            assert_eq!(std::fs::read(dir.path().join(VECTORS_FILE)).unwrap(), base, "the base was rewritten");
            let log_now = len_of(&dir.path().join(LOG_FILE));
            store.save(dir.path()).unwrap();
            assert_eq!(len_of(&dir.path().join(LOG_FILE)), log_now, "a save with nothing changed wrote");

            let reopened = VectorStore::open(dir.path()).unwrap();
            assert_eq!(
                reopened.graph_was_loaded(),
                cfg!(feature = "hnsw"),
                "the graph was rebuilt instead of replayed"
            );
            assert_same(&store, &reopened, &mut rng, next + 10);
        }
        // A store opened from the log appends after it.
        let mut again = VectorStore::open(dir.path()).unwrap();
        again.insert(next, &rng.vector(DIM)).unwrap();
        again.save(dir.path()).unwrap();
        assert_same(&again, &VectorStore::open(dir.path()).unwrap(), &mut rng, next + 10);
        assert_eq!(std::fs::read(dir.path().join(VECTORS_FILE)).unwrap(), base);
    }
}

/// A store saved in steps (S0 base, then S1, S2, S3 appended); returns the directory, the
/// log's length after each append, and a copy of the store after each step.
fn saved_in_steps(rng: &mut Rng) -> (tempfile::TempDir, Vec<u64>, Vec<VectorStore>) {
    let dir = tempfile::tempdir().unwrap();
    let store = filled(Quantization::F32, 300, rng);
    store.save(dir.path()).unwrap();
    let mut store = VectorStore::open(dir.path()).unwrap();
    let mut lens = vec![0];
    let mut copies = vec![VectorStore::open(dir.path()).unwrap()];
    for step in 0..3u64 {
        let items: Vec<(Ordinal, Vec<f32>)> = (0..5).map(|i| (1_000 + step * 10 + i, rng.vector(DIM))).collect();
        store.insert_batch(&items).unwrap();
        store.delete(step);
        store.save(dir.path()).unwrap();
        lens.push(len_of(&dir.path().join(LOG_FILE)));
        copies.push(VectorStore::open(dir.path()).unwrap());
    }
    (dir, lens, copies)
}

/// A log cut anywhere inside its last record (an append a crash interrupted) opens as the
/// store before that append; the next save overwrites the torn bytes and appends. A damaged
/// last record is a torn one too; a damaged record with more after it is an error.
#[test]
fn a_torn_tail_is_ignored_and_overwritten() {
    let mut rng = Rng(2);
    let (dir, lens, copies) = saved_in_steps(&mut rng);
    let log = dir.path().join(LOG_FILE);
    let good = std::fs::read(&log).unwrap();
    let (before, end) = (lens[2], lens[3]);
    for cut in (before..end).step_by(((end - before) / 23).max(1) as usize).chain([before + 1, end - 1]) {
        std::fs::write(&log, &good[..cut as usize]).unwrap();
        let opened = VectorStore::open(dir.path()).unwrap();
        assert_same(&copies[2], &opened, &mut rng, 2_000);
    }
    // A cut inside the header leaves only the base.
    std::fs::write(&log, &good[..10]).unwrap();
    assert_same(&copies[0], &VectorStore::open(dir.path()).unwrap(), &mut rng, 2_000);

    // Torn, then a store opened from it appends: the torn bytes go, the new record follows.
    std::fs::write(&log, &good[..(before + 9) as usize]).unwrap();
    let mut store = VectorStore::open(dir.path()).unwrap();
    store.insert(5_000, &rng.vector(DIM)).unwrap();
    store.save(dir.path()).unwrap();
    let reopened = VectorStore::open(dir.path()).unwrap();
    assert!(reopened.contains(5_000) && !reopened.contains(1_020), "{:?}", reopened.len());
    assert_same(&store, &reopened, &mut rng, 6_000);

    // A flipped byte in the last record: torn. In an earlier one: damage.
    let mut bytes = good.clone();
    bytes[(end - 6) as usize] ^= 0x10;
    std::fs::write(&log, &bytes).unwrap();
    assert_same(&copies[2], &VectorStore::open(dir.path()).unwrap(), &mut rng, 2_000);
    let mut bytes = good.clone();
    bytes[(before - 6) as usize] ^= 0x10;
    std::fs::write(&log, &bytes).unwrap();
    match VectorStore::open(dir.path()) {
        Err(Error::Corrupt { path, reason }) => {
            assert_eq!(path, log);
            assert!(reason.contains("checksum"), "{reason}");
        }
        other => panic!("a damaged middle record gave {other:?}"),
    }
    // A damaged header is damage too.
    let mut bytes = good.clone();
    bytes[3] ^= 0x01;
    std::fs::write(&log, &bytes).unwrap();
    assert!(matches!(VectorStore::open(dir.path()), Err(Error::Corrupt { .. })));
}

/// Past its share of the base the log merges into a new base (and is removed); `merge` does it
/// at once. A log left beside a newer base (a crash between the merge's rename and the log's
/// removal) is ignored. A half-written temporary base (a crash during the merge) is ignored.
#[test]
fn the_log_merges_into_a_new_base() {
    let mut rng = Rng(3);
    let dir = tempfile::tempdir().unwrap();
    // No graph: a round's record is its 20 vectors, so the log takes many rounds to fill.
    let mut store = VectorStore::new(DIM, HnswParams { exact_threshold: usize::MAX, ..params(Quantization::F32) });
    let items: Vec<(Ordinal, Vec<f32>)> = (0..200).map(|o| (o, rng.vector(DIM))).collect();
    store.insert_batch(&items).unwrap();
    store.save(dir.path()).unwrap();
    let (log, base) = (dir.path().join(LOG_FILE), dir.path().join(VECTORS_FILE));
    let mut next = 200;
    let mut merged_at = None;
    for round in 0..80 {
        let items: Vec<(Ordinal, Vec<f32>)> = (0..20).map(|i| (next + i, rng.vector(DIM))).collect();
        next += 20;
        store.insert_batch(&items).unwrap();
        let base_before = len_of(&base);
        store.save(dir.path()).unwrap();
        if len_of(&base) != base_before {
            merged_at = Some((round, len_of(&log), base_before));
            break;
        }
        // The log never passes its limit: half the base, or 64 KiB.
        assert!(len_of(&log) <= (len_of(&base) / 2).max(64 << 10));
    }
    let (round, log_after, base_before) = merged_at.expect("the log never merged");
    assert_eq!(log_after, 0, "the merge left the log (round {round})");
    assert!(round > 5, "merged after {round} rounds of a {base_before} byte base");
    assert_same(&store, &VectorStore::open(dir.path()).unwrap(), &mut rng, next);

    // Appends, then a copy of the log; merge; the stale log put back is ignored.
    store.insert(next, &rng.vector(DIM)).unwrap();
    assert!(store.delete(3));
    store.save(dir.path()).unwrap();
    let stale = std::fs::read(&log).unwrap();
    assert!(!stale.is_empty());
    store.merge(dir.path()).unwrap();
    assert!(!log.exists());
    std::fs::write(&log, &stale).unwrap();
    let reopened = VectorStore::open(dir.path()).unwrap();
    assert_same(&store, &reopened, &mut rng, next + 1);
    // ... and replaced by the next append of a store opened over it.
    let mut reopened = reopened;
    reopened.insert(next + 1, &rng.vector(DIM)).unwrap();
    reopened.save(dir.path()).unwrap();
    assert_same(&reopened, &VectorStore::open(dir.path()).unwrap(), &mut rng, next + 2);

    // A temporary base half written by a merge a crash interrupted changes nothing.
    std::fs::write(dir.path().join(format!("{VECTORS_FILE}.tmp")), &std::fs::read(&base).unwrap()[..100]).unwrap();
    assert_same(&reopened, &VectorStore::open(dir.path()).unwrap(), &mut rng, next + 2);
}

/// Memory changes a record cannot say (a compaction past the tombstone fraction, a graph built
/// at the threshold, where the build has graphs) make the next save write a whole base, which
/// opens as the store.
#[test]
fn a_compaction_or_a_new_graph_writes_a_whole_base() {
    let mut rng = Rng(4);
    let dir = tempfile::tempdir().unwrap();
    // 60 vectors: below the threshold of 100, no graph.
    let mut store = filled(Quantization::Int8, 60, &mut rng);
    store.save(dir.path()).unwrap();
    let base = dir.path().join(VECTORS_FILE);
    let first = std::fs::read(&base).unwrap();
    store.insert(60, &rng.vector(DIM)).unwrap();
    store.save(dir.path()).unwrap();
    assert_eq!(std::fs::read(&base).unwrap(), first);
    assert!(!store.has_graph());
    let items: Vec<(Ordinal, Vec<f32>)> = (61..130).map(|o| (o, rng.vector(DIM))).collect();
    store.insert_batch(&items).unwrap();
    store.save(dir.path()).unwrap();
    if cfg!(feature = "hnsw") {
        assert!(store.has_graph());
        assert_ne!(std::fs::read(&base).unwrap(), first, "a new graph went into the log");
        assert!(!dir.path().join(LOG_FILE).exists());
    }
    let reopened = VectorStore::open(dir.path()).unwrap();
    assert_eq!(reopened.graph_was_loaded(), cfg!(feature = "hnsw"));
    assert_same(&store, &reopened, &mut rng, 200);

    let second = std::fs::read(&base).unwrap();
    for ord in 0..70 {
        store.delete(ord);
    }
    assert!(store.tombstones() < 70, "the deletes did not compact the store");
    store.save(dir.path()).unwrap();
    assert_ne!(std::fs::read(&base).unwrap(), second);
    assert_same(&store, &VectorStore::open(dir.path()).unwrap(), &mut rng, 200);
}

/// A store whose files another process changed since (a second store saved there) does not
/// append to a log it does not know: it writes a whole base, which then opens as it.
#[test]
fn a_store_whose_files_changed_writes_a_whole_base() {
    let mut rng = Rng(5);
    let dir = tempfile::tempdir().unwrap();
    filled(Quantization::F32, 150, &mut rng).save(dir.path()).unwrap();
    let mut one = VectorStore::open(dir.path()).unwrap();
    let mut two = VectorStore::open(dir.path()).unwrap();
    two.insert(500, &rng.vector(DIM)).unwrap();
    two.save(dir.path()).unwrap();
    one.insert(600, &rng.vector(DIM)).unwrap();
    one.save(dir.path()).unwrap();
    assert!(!dir.path().join(LOG_FILE).exists(), "the stale store appended");
    let reopened = VectorStore::open(dir.path()).unwrap();
    assert!(reopened.contains(600) && !reopened.contains(500));
    assert_same(&one, &reopened, &mut rng, 700);
}

/// A format 1 file (Braid's first) opens; its next save writes a whole base of today's
/// format, then appends.
#[test]
fn an_old_format_opens_and_its_next_save_writes_a_base() {
    let mut rng = Rng(6);
    let dir = tempfile::tempdir().unwrap();
    let vectors: Vec<Vec<f32>> = (0..20)
        .map(|_| {
            let v = rng.vector(DIM);
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / n).collect()
        })
        .collect();
    let mut bytes = b"BRAIDVEC".to_vec();
    for v in [1u32, DIM as u32, 16, 200, 100] {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    bytes.extend_from_slice(&1_000u64.to_le_bytes());
    bytes.extend_from_slice(&0.2f32.to_le_bytes());
    bytes.extend_from_slice(&(vectors.len() as u64).to_le_bytes());
    for (ord, v) in vectors.iter().enumerate() {
        bytes.extend_from_slice(&(ord as u64 * 3).to_le_bytes());
        v.iter().for_each(|x| bytes.extend_from_slice(&x.to_le_bytes()));
    }
    let crc = crc32fast::hash(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    std::fs::write(dir.path().join(VECTORS_FILE), &bytes).unwrap();

    let mut store = VectorStore::open(dir.path()).unwrap();
    assert_eq!(store.len(), 20);
    assert_eq!(store.search(&vectors[4], 1, &allowed(0..100)).unwrap().hits[0].0, 12);
    store.insert(100, &rng.vector(DIM)).unwrap();
    store.save(dir.path()).unwrap();
    assert!(!dir.path().join(LOG_FILE).exists(), "an old base got a log");
    assert_eq!(
        &std::fs::read(dir.path().join(VECTORS_FILE)).unwrap()[8..12],
        &braid_vector::FORMAT_VERSION.to_le_bytes()
    );
    store.insert(101, &rng.vector(DIM)).unwrap();
    store.save(dir.path()).unwrap();
    assert!(dir.path().join(LOG_FILE).exists());
    assert_same(&store, &VectorStore::open(dir.path()).unwrap(), &mut rng, 200);
}

/// Random inserts (single vectors and passages), replacements and deletes, saved and reopened
/// at random: after every reopen, no search on either path returns an ordinal outside the
/// allowed set or one that was deleted, the exact path finds exactly the model's live allowed
/// records, and the reopened store answers as the one saved.
#[test]
fn no_search_returns_a_hidden_or_deleted_record_across_saves_and_reopens() {
    let mut rng = Rng(7);
    let dir = tempfile::tempdir().unwrap();
    let mut store = filled(Quantization::Int8, 150, &mut rng);
    let mut live: std::collections::BTreeSet<Ordinal> = (0..150).collect();
    store.save(dir.path()).unwrap();
    let mut next = 150;
    for step in 0..60 {
        match rng.below(4) {
            0 => {
                let items: Vec<(Ordinal, Vec<f32>)> =
                    (0..1 + rng.below(6)).map(|i| (next + i, rng.vector(DIM))).collect();
                next += items.len() as Ordinal;
                live.extend(items.iter().map(|i| i.0));
                store.insert_batch(&items).unwrap();
            }
            1 => {
                let ord = rng.below(next);
                store.insert_passages(&[(ord, vec![rng.vector(DIM); 1 + rng.below(3) as usize])]).unwrap();
                live.insert(ord);
            }
            _ => {
                let ord = rng.below(next);
                assert_eq!(store.delete(ord), live.remove(&ord));
            }
        }
        if rng.below(3) == 0 {
            store.save(dir.path()).unwrap();
            let reopened = VectorStore::open(dir.path()).unwrap();
            assert_same(&store, &reopened, &mut rng, next);
            store = reopened;
        }
        let set = allowed((0..next).filter(|o| (o + step) % 4 != 0));
        let expected: Vec<Ordinal> = live.iter().copied().filter(|o| set.contains(*o)).collect();
        let q = rng.vector(DIM);
        let exact = store.search_exact(&q, expected.len() + 5, &set).unwrap();
        let mut got: Vec<Ordinal> = exact.iter().map(|h| h.0).collect();
        got.sort_unstable();
        assert_eq!(got, expected, "step {step}");
        let found = store.search(&q, 10, &set).unwrap();
        assert!(matches!(found.path, SearchPath::Hnsw | SearchPath::Exact));
        for (ord, _) in found.hits {
            assert!(set.contains(ord) && live.contains(&ord), "step {step}: {ord} is hidden or deleted");
        }
    }
}

/// With the mark a save left (`disk_mark`, which the index records in its manifest), an open
/// tells a log that lost acknowledged records (deleted, cut, damaged at its end) from a torn
/// tail; a mark of an older base (a merge since) holds nothing the new base lacks.
#[test]
fn a_log_that_lost_marked_records_is_an_error() {
    let mut rng = Rng(8);
    let (dir, lens, _) = saved_in_steps(&mut rng);
    let log = dir.path().join(LOG_FILE);
    let store = VectorStore::open(dir.path()).unwrap();
    let mark = store.disk_mark().expect("a store opened from its files marks them");
    assert_eq!(mark.log_bytes, lens[3]);
    assert!(VectorStore::open_checked(dir.path(), Some(&mark)).is_ok());
    let good = std::fs::read(&log).unwrap();
    for damage in 0..3 {
        match damage {
            0 => std::fs::remove_file(&log).unwrap(),
            1 => std::fs::write(&log, &good[..good.len() - 1]).unwrap(),
            _ => {
                let mut bytes = good.clone();
                *bytes.last_mut().unwrap() ^= 1;
                std::fs::write(&log, &bytes).unwrap();
            }
        }
        assert!(VectorStore::open(dir.path()).is_ok(), "without a mark a torn tail opens");
        match VectorStore::open_checked(dir.path(), Some(&mark)) {
            Err(Error::Corrupt { path, .. }) => assert_eq!(path, log),
            other => panic!("damage {damage} gave {other:?}"),
        }
        std::fs::write(&log, &good).unwrap();
    }
    store.merge(dir.path()).unwrap();
    assert!(VectorStore::open_checked(dir.path(), Some(&mark)).is_ok(), "a merged base holds the marked records");
}
