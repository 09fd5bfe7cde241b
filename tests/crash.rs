//! Crash safety: ingestion in a child process is killed with SIGKILL at random moments; every
//! commit the child acknowledged must survive, whole, in every leg.
//!
//! The test binary re-executes itself as the child (`current_exe()` running this same test
//! with `BRAID_CRASH_CHILD` set), so no extra binary is needed. The child ingests batches that
//! are a pure function of their number: each adds [`BATCH`] records with a unique word,
//! rewrites the first record of the previous batch (a new vector replaces the old) and deletes
//! the second record of the batch before that. It prints `ack N` only after `commit()` of
//! batch N returned. The parent kills it, reopens the index, runs [`Index::check`], and checks
//! that the index holds exactly batches `0..=N` or `0..=N+1` (the batch being committed may
//! have made it, but only whole) — by id, by record count, and by search in the lexical, fuzzy
//! and semantic legs. The next trial continues on the same directory, so recovery after a
//! crash is exercised too. The records belong to two tenants and to none, and the child's
//! tenants leave the vector pool for partitions of their own after a few batches, so kills
//! land in promotions as well (a reopened index settles a promotion a kill interrupted).
//!
//! `BRAID_CRASH_TRIALS` sets the number of trials (3 by default; the README's soak runs 50),
//! `BRAID_CRASH_SEED` the seed of the kill times and samples.
//!
//! [`sigkill_during_vector_appends_and_merges_loses_nothing`] does the same to the vector
//! store alone, whose saves are many times quicker than a commit of the whole index, so the
//! kills land inside log appends and merges (every third save merges; the summary counts the
//! kills that left a half-written base behind).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use braid::{Embedder, Error, Index, IndexConfig, Mode, Partition, Principal, Record, SearchRequest};
use braid_eval::SplitMix;

/// Records added per batch.
const BATCH: u64 = 10;
const CHILD_DIR: &str = "BRAID_CRASH_CHILD";
const CHILD_FROM: &str = "BRAID_CRASH_FROM";
const LOCK_CHILD: &str = "BRAID_LOCK_CHILD";
/// Prefixes the child's lines on stdout.
const MARK: &str = "crash-child: ";

/// The real all-MiniLM-L6-v2, int8 (the cheapest real model we have), on one thread.
#[cfg(feature = "models")]
pub fn embedder() -> Arc<dyn Embedder> {
    use braid::models::OnnxEmbedder;
    Arc::new(OnnxEmbedder::builder().onnx_file("model_int8.onnx").intra_threads(1).build().expect("int8 MiniLM"))
}

/// Without the `models` feature (no ONNX Runtime): the deterministic hash embedder. Every
/// record holds a word no other has, so its own passage is still its nearest neighbour.
#[cfg(not(feature = "models"))]
pub fn embedder() -> Arc<dyn Embedder> {
    Arc::new(crate::common::HashEmbedder::new(256))
}

/// A word no other record has: letters only, ending in `x` so that no stemmer shortens it.
fn word(batch: u64, i: u64, version: u64) -> String {
    let mut n = (batch * BATCH + i) * 4 + version;
    let mut out = String::from("zq");
    loop {
        out.push(char::from(b'a' + (n % 26) as u8));
        n /= 26;
        if n == 0 {
            break;
        }
    }
    out.push('x');
    out
}

const TOPICS: [&str; 8] = [
    "ferry timetables and harbour fees",
    "vitamin d and bone density",
    "refunds for annual plans",
    "kubernetes relay deployment",
    "two-factor authentication keys",
    "invoice vat numbers",
    "tide tables for small boats",
    "password reset emails",
];

/// The text of record `i` of `batch`, rewritten `version` times.
fn body(batch: u64, i: u64, version: u64) -> String {
    let topic = TOPICS[((batch * 7 + i * 3 + version) % TOPICS.len() as u64) as usize];
    format!("Note {batch}.{i} (v{version}) about {topic}: {}", word(batch, i, version))
}

fn id(batch: u64, i: u64) -> String {
    format!("b{batch}-{i}")
}

/// A third of the records are public, a third acme's, a third globex's: the tenants' vectors
/// start in the pool and move to partitions of their own at [`PROMOTE_AT`] records, so kills
/// also land in promotions.
fn record(batch: u64, i: u64, version: u64) -> Record {
    let acl = ["public", "tenant:acme", "tenant:globex"][(i % 3) as usize];
    Record::new(id(batch, i)).title(format!("Batch {batch}")).body(body(batch, i, version)).acl([acl])
}

/// Records at which the child's tenants are promoted (about the fourth batch).
const PROMOTE_AT: usize = 12;

/// Who the checks search as: sees every record.
fn everyone() -> Principal {
    Principal::from_verified_tokens(["tenant:acme", "tenant:globex"])
}

/// What batch `b` does, in order.
fn apply_batch(writer: &mut braid::Writer, b: u64) -> braid::Result<()> {
    for i in 0..BATCH {
        writer.upsert(&record(b, i, 0))?;
    }
    if b >= 1 {
        writer.upsert(&record(b - 1, 0, 1))?;
    }
    if b >= 2 {
        writer.delete(&id(b - 2, 1))?;
    }
    Ok(())
}

/// The live records after batches `0..=last`.
fn expected(last: Option<u64>) -> Vec<Record> {
    let Some(last) = last else { return Vec::new() };
    let mut out = Vec::new();
    for b in 0..=last {
        for i in 0..BATCH {
            if i == 1 && b + 2 <= last {
                continue;
            }
            let version = u64::from(i == 0 && b < last);
            out.push(record(b, i, version));
        }
    }
    out
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// Set in the child of [`sigkill_during_background_merges_loses_nothing`]: merge every vector
/// log past its first record.
const CHILD_MERGES: &str = "BRAID_CRASH_MERGES";

/// A merge policy that makes every log with a record in it due: the background merger then
/// runs all the time, and kills land inside its merges.
fn merge_always() -> braid::MergePolicy {
    braid::MergePolicy { share_percent: 0, floor_bytes: 0 }
}

/// The child: opens the index, then commits batch after batch from `BRAID_CRASH_FROM` until
/// it is killed.
fn child(dir: &Path) {
    let from = env_u64(CHILD_FROM).expect("BRAID_CRASH_FROM");
    let mut builder = Index::builder().embedder(embedder()).promote_tenants_at(PROMOTE_AT);
    if std::env::var_os(CHILD_MERGES).is_some() {
        builder = builder.vector_merge_policy(merge_always());
    }
    let index = builder.open_or_create(dir).expect("open");
    let mut writer = index.writer().expect("writer");
    // libtest may have printed "test <name> ... " without a newline: mark our lines.
    println!("\n{MARK}ready");
    for b in from.. {
        apply_batch(&mut writer, b).expect("batch");
        writer.commit().expect("commit");
        println!("{MARK}ack {b}");
    }
}

fn hit_ids(index: &Index, query: &str, mode: Mode, k: usize) -> Vec<String> {
    let request = SearchRequest::new(query, everyone()).mode(mode).k(k);
    index.search(&request).expect("search").hits.into_iter().map(|h| h.id).collect()
}

/// Reopens the index after a kill and checks that it holds exactly the batches `0..=last`
/// (`last` = the last acknowledged batch or the one after it). `full_from`: batches from here
/// on are checked record by record in every leg; older ones by id and lexically, plus a
/// sample in every leg.
fn verify(dir: &Path, acked: Option<u64>, full_from: u64, rng: &mut SplitMix) -> (Option<u64>, usize) {
    let report = Index::check(dir).unwrap_or_else(|e| panic!("check after a crash: {e}"));
    let records = report.records;
    let index = Index::builder().embedder(embedder()).open(dir).expect("reopen");
    // The open left the large files to its background verification, which agrees with check.
    index.verify().unwrap_or_else(|e| panic!("the background verification after a crash: {e}"));
    let public = everyone();
    // The batch being committed at the kill is either wholly in or wholly out.
    let next = acked.map_or(0, |a| a + 1);
    let next_in = index.record(&id(next, 2), &public).expect("read").is_some();
    let last = if next_in { Some(next) } else { acked };
    let want = expected(last);
    // By batch 5 each tenant holds more than PROMOTE_AT records: it has partitions of its own,
    // vector and lexical. The vector store's come with the commit; the lexical ones are
    // promoted after its commit point, within `commit()`, so a kill between the two leaves a
    // batch in whose tenants are still pooled — promoted once its commit was acknowledged.
    if last.is_some_and(|l| l >= 5) {
        for tenant in ["tenant:acme", "tenant:globex"] {
            let partition = braid::Partition::Tenant(tenant.into());
            assert!(
                report.vector_partitions.iter().any(|(p, n)| *p == partition && *n > 0),
                "{tenant} not promoted: {:?}",
                report.vector_partitions
            );
            if acked.is_some_and(|a| a >= 5) {
                let lexical = &report.lexical_partitions;
                assert!(lexical.iter().any(|t| t == tenant), "{tenant} (acknowledged through {acked:?}): {lexical:?}");
            }
        }
    }
    assert_eq!(records, want.len() as u64, "record count after the crash (acknowledged through {acked:?})");
    assert!(index.record(&id(last.map_or(0, |l| l + 1), 3), &public).unwrap().is_none(), "a later batch leaked in");
    let mut checked = 0;
    for want in &want {
        let rid = want.id().to_string();
        let batch: u64 = rid[1..rid.find('-').unwrap()].parse().unwrap();
        let stored = index.record(&rid, &public).expect("read").unwrap_or_else(|| panic!("{rid} lost"));
        assert_eq!(stored.body, want.body.as_str(), "{rid} is not at its committed version");
        let unique = want.body.as_str().rsplit(' ').next().unwrap();
        assert_eq!(hit_ids(&index, unique, Mode::Lexical, 3), [rid.as_str()], "lexical leg lost {rid}");
        if batch >= full_from || rng.below(50) == 0 {
            assert!(hit_ids(&index, unique, Mode::Fuzzy, 10).contains(&rid), "fuzzy leg lost {rid}");
            // The record's own passage is its nearest neighbour, when its vector is there.
            assert_eq!(hit_ids(&index, &want.passage(), Mode::Semantic, 1), [rid.as_str()], "semantic leg lost {rid}");
            checked += 1;
        }
    }
    // Deleted records stay deleted, in every leg.
    if let Some(l) = last.filter(|l| *l >= 2) {
        let gone = id(l - 2, 1);
        assert!(index.record(&gone, &public).unwrap().is_none());
        let text = record(l - 2, 1, 0).passage();
        for mode in [Mode::Lexical, Mode::Fuzzy, Mode::Semantic] {
            assert!(!hit_ids(&index, &text, mode, 50).contains(&gone), "{mode:?} still finds deleted {gone}");
        }
    }
    (last, checked)
}

/// Kills ingesting children with SIGKILL at random moments; nothing acknowledged is lost.
#[test]
fn sigkill_never_loses_an_acknowledged_commit() {
    if let Ok(dir) = std::env::var(CHILD_DIR) {
        child(Path::new(&dir));
        return;
    }
    kill_committing_children("crash::sigkill_never_loses_an_acknowledged_commit", false);
}

/// The same with every vector partition's log merged on the index's background thread as soon
/// as it holds a record ([`merge_always`]): kills land in appends, in merges (the new base
/// written, renamed, the log's tail rebound) and in promotions, and every acknowledged commit
/// survives, [`Index::check`] passes, and the manifest's marks are met.
#[test]
fn sigkill_during_background_merges_loses_nothing() {
    if let Ok(dir) = std::env::var(CHILD_DIR) {
        child(Path::new(&dir));
        return;
    }
    kill_committing_children("crash::sigkill_during_background_merges_loses_nothing", true);
}

/// The files a background merge leaves while it is under way, under the index in `dir`: its
/// new base not yet renamed, or the log's rebound tail not yet renamed.
fn merges_under_way(dir: &Path) -> usize {
    let vectors = dir.join("vectors");
    let mut dirs = vec![vectors.clone()];
    if let Ok(entries) = std::fs::read_dir(&vectors) {
        dirs.extend(entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_dir()));
    }
    dirs.iter()
        .filter(|d| {
            d.join(format!("{}.merge", braid_vector::VECTORS_FILE)).exists()
                || d.join(format!("{}.tmp", braid_vector::LOG_FILE)).exists()
        })
        .count()
}

/// Runs `test`'s child (committing batches, with background merges all the time when
/// `merges`) and kills it, `BRAID_CRASH_TRIALS` times, checking after each kill that the index
/// holds exactly the acknowledged batches (and perhaps the one in flight, whole).
fn kill_committing_children(test: &str, merges: bool) {
    let trials = env_u64("BRAID_CRASH_TRIALS").unwrap_or(3);
    let seed = env_u64("BRAID_CRASH_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(7, |d| d.as_secs())
    });
    eprintln!("crash trials: {trials}, BRAID_CRASH_SEED={seed}");
    let mut rng = SplitMix::new(seed);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    let started = Instant::now();
    let (mut last, mut acked_total, mut in_flight_committed, mut full_checks) = (None::<u64>, 0u64, 0u64, 0usize);
    let mut mid_merge = 0;
    for trial in 0..trials {
        let from = last.map_or(0, |l| l + 1);
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args(["--exact", test, "--nocapture", "--test-threads=1"])
            .env(CHILD_DIR, &dir)
            .env(CHILD_FROM, from.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if merges {
            command.env(CHILD_MERGES, "1");
        }
        let mut child = command.spawn().expect("spawn the child");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let Some(ours) = line.strip_prefix(MARK) else { continue };
                if tx.send(ours.to_string()).is_err() {
                    break;
                }
            }
        });
        let mut acks = Vec::new();
        // Wait for the child to be ready (model loaded, writer open), then kill it somewhere
        // in its stream of commits.
        loop {
            match rx.recv_timeout(Duration::from_secs(120)) {
                Ok(line) if line == "ready" => break,
                Ok(_) => {}
                Err(_) => {
                    let _ = child.kill();
                    let out = child.wait_with_output().unwrap();
                    panic!("the child never became ready: {}", String::from_utf8_lossy(&out.stderr));
                }
            }
        }
        // The first trial kills only after one acknowledged commit, so a loaded machine, where
        // the first commit can take longer than any delay drawn, still tests something; later
        // trials may kill before their first commit.
        if trial == 0 {
            match rx.recv_timeout(Duration::from_secs(120)) {
                Ok(line) => acks.extend(line.strip_prefix("ack ").and_then(|n| n.parse::<u64>().ok())),
                Err(_) => {
                    let _ = child.kill();
                    let out = child.wait_with_output().unwrap();
                    panic!("the child acknowledged no commit: {}", String::from_utf8_lossy(&out.stderr));
                }
            }
        }
        std::thread::sleep(Duration::from_millis(100 + rng.below(1500) as u64));
        child.kill().expect("SIGKILL");
        let status = child.wait().unwrap();
        reader.join().unwrap();
        acks.extend(rx.try_iter().filter_map(|l| l.strip_prefix("ack ").and_then(|n| n.parse::<u64>().ok())));
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(status.signal(), Some(9), "the child ended by itself ({status}): {stderr}");
        }
        assert!(!stderr.contains("panicked"), "the child panicked: {stderr}");
        let acked = acks.iter().copied().max().or(last);
        assert!(acks.windows(2).all(|w| w[1] == w[0] + 1), "acks out of order: {acks:?}");
        acked_total += acks.len() as u64 * BATCH;
        let full_from = last.map_or(0, |l| l.saturating_sub(2));
        mid_merge += merges_under_way(&dir);
        let (now, checked) = verify(&dir, acked, full_from, &mut rng);
        if now != acked {
            in_flight_committed += 1;
        }
        full_checks += checked;
        eprintln!(
            "trial {trial}: acknowledged through {acked:?}, index holds through {now:?} ({} records), {checked} checked in every leg",
            expected(now).len()
        );
        last = now;
    }
    eprintln!(
        "crash summary: {trials} trials, {acked_total} records acknowledged in {} batches, 0 lost, {} records live, \
         {full_checks} record checks in every leg, {in_flight_committed} kills landed after a commit point but before \
         its ack, {mid_merge} left a background merge's file behind, {:.0} s",
        last.map_or(0, |l| l + 1),
        expected(last).len(),
        started.elapsed().as_secs_f64()
    );
    assert!(acked_total > 0 || trials == 0, "no trial acknowledged a commit: kills came too early to test anything");
}

/// A writer in another process gets the typed lock error, while this one holds the lock.
#[test]
fn a_writer_in_another_process_gets_a_lock_error() {
    if let Ok(dir) = std::env::var(LOCK_CHILD) {
        let index = Index::open(Path::new(&dir)).expect("open");
        match index.writer() {
            Err(Error::LockBusy { path }) => println!("lock busy: {}", path.display()),
            Err(e) => println!("other error: {e}"),
            Ok(_) => println!("got a writer"),
        }
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::create(tmp.path(), IndexConfig::default()).unwrap();
    let run_child = || {
        let out = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "crash::a_writer_in_another_process_gets_a_lock_error",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(LOCK_CHILD, tmp.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let writer = index.writer().unwrap();
    let out = run_child();
    assert!(out.contains("lock busy: "), "{out}");
    drop(writer);
    // Once released, the other process may write.
    assert!(run_child().contains("got a writer"));
}

const VLOG_CHILD: &str = "BRAID_VLOG_CHILD";
const VLOG_FROM: &str = "BRAID_VLOG_FROM";
const PROMO_CHILD: &str = "BRAID_PROMO_CHILD";
/// Vectors per batch of the vector-store crash test, and their dimensions.
const VBATCH: u64 = 40;
const VDIM: usize = 32;

/// The vector of `ord` at `version`, a pure function of both.
fn vector_of(ord: u64, version: u64) -> Vec<f32> {
    let mut rng = SplitMix::new(ord * 31 + version * 7_919 + 1);
    (0..VDIM).map(|_| rng.below(2_000) as f32 / 1_000.0 - 1.0 + 1e-3).collect()
}

/// Batch `b` of the vector-store test: adds its [`VBATCH`] ordinals, replaces the first of
/// the batch before (a new vector for the same ordinal) and deletes the second of the batch
/// before that.
fn vector_batch(store: &mut braid_vector::VectorStore, b: u64) {
    let items: Vec<(u64, Vec<f32>)> = (b * VBATCH..(b + 1) * VBATCH).map(|o| (o, vector_of(o, 0))).collect();
    store.insert_batch(&items).expect("insert");
    if b >= 1 {
        let ord = (b - 1) * VBATCH;
        store.insert(ord, &vector_of(ord, 1)).expect("replace");
    }
    if b >= 2 {
        store.delete((b - 2) * VBATCH + 1);
    }
}

/// The store after batches `0..=last`, built in memory.
fn vector_model(last: Option<u64>) -> braid_vector::VectorStore {
    let mut store = braid_vector::VectorStore::new(VDIM, vector_params());
    for b in 0..last.map_or(0, |l| l + 1) {
        vector_batch(&mut store, b);
    }
    store
}

/// A small graph from the first vector on, so appends carry graph links too.
fn vector_params() -> braid_vector::HnswParams {
    braid_vector::HnswParams { m: 4, ef_construction: 24, exact_threshold: 0, ..braid_vector::HnswParams::default() }
}

/// The vector-store child: opens (or starts) the store, then saves batch after batch, merging
/// every third, printing `ack N` once save (or merge) of batch N returned.
fn vector_child(dir: &Path) {
    let from = env_u64(VLOG_FROM).expect("BRAID_VLOG_FROM");
    let mut store = if from == 0 {
        braid_vector::VectorStore::new(VDIM, vector_params())
    } else {
        braid_vector::VectorStore::open(dir).expect("open")
    };
    println!("\n{MARK}ready");
    for b in from.. {
        vector_batch(&mut store, b);
        if b % 3 == 2 {
            store.merge(dir).expect("merge");
        } else {
            store.save(dir).expect("save");
        }
        println!("{MARK}ack {b}");
    }
}

/// Kills a process saving the vector store with SIGKILL at random moments — during log
/// appends and during merges: the store reopens with every acknowledged batch, whole, and
/// nothing of a later one but the batch whose save was under way, whole or not at all.
#[test]
fn sigkill_during_vector_appends_and_merges_loses_nothing() {
    if let Ok(dir) = std::env::var(VLOG_CHILD) {
        vector_child(Path::new(&dir));
        return;
    }
    kill_saving_children("crash::sigkill_during_vector_appends_and_merges_loses_nothing", VLOG_CHILD);
}

const VMERGE_CHILD: &str = "BRAID_VMERGE_CHILD";

/// The background-merge child: opens (or starts) the store, merging every log with a record
/// in it ([`merge_always`]) on a [`braid_vector::Merger`] thread, then saves batch after batch
/// with [`braid_vector::VectorStore::save_log`] (appends only), printing `ack N` and the
/// store's [`braid_vector::DiskMark`] once the save of batch N returned, then handing the
/// merge to the thread.
fn background_merge_child(dir: &Path) {
    let from = env_u64(VLOG_FROM).expect("BRAID_VLOG_FROM");
    let mut store = if from == 0 {
        braid_vector::VectorStore::new(VDIM, vector_params())
    } else {
        braid_vector::VectorStore::open(dir).expect("open")
    };
    store.set_merge_policy(merge_always());
    let merger = braid_vector::Merger::start().expect("merger");
    println!("\n{MARK}ready");
    for b in from.. {
        vector_batch(&mut store, b);
        let jobs = store.save_log(dir).expect("save");
        let mark = store.disk_mark().expect("a mark after a save");
        println!("{MARK}ack {b} {}", serde_json::to_string(&mark).unwrap());
        merger.submit(jobs);
    }
}

/// Kills a process whose vector store merges its log on a background thread after every save
/// with SIGKILL at random moments — in appends, in the merge's fold, between its renames: the
/// store reopens, checked against the mark of the last acknowledged save, with every
/// acknowledged batch, whole, and nothing of a later one but the batch in flight.
#[test]
fn sigkill_during_background_vector_merges_loses_nothing() {
    if let Ok(dir) = std::env::var(VMERGE_CHILD) {
        background_merge_child(Path::new(&dir));
        return;
    }
    kill_saving_children("crash::sigkill_during_background_vector_merges_loses_nothing", VMERGE_CHILD);
}

/// Runs `test`'s vector-store child (`child_env`) and kills it, `BRAID_CRASH_TRIALS` × 3
/// times, checking after each kill that the store holds the acknowledged batches exactly (and
/// perhaps the one in flight, whole); an acknowledgement that carries a mark is checked with
/// [`braid_vector::VectorStore::open_checked`].
fn kill_saving_children(test: &str, child_env: &str) {
    let trials = env_u64("BRAID_CRASH_TRIALS").unwrap_or(3) * 3;
    let seed = env_u64("BRAID_CRASH_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(7, |d| d.as_secs())
    });
    eprintln!("vector crash trials: {trials}, BRAID_CRASH_SEED={seed}");
    let mut rng = SplitMix::new(seed);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("vectors");
    let (mut last, mut acked_total, mut mid_merge, mut mid_rebind) = (None::<u64>, 0usize, 0usize, 0usize);
    let mut mark: Option<braid_vector::DiskMark> = None;
    for trial in 0..trials {
        let from = last.map_or(0, |l| l + 1);
        let acks = run_and_kill_lines(test, child_env, &dir, from, &mut rng);
        acked_total += acks.len();
        let acked = acks.iter().map(|a| a.0).max().or(last);
        if let Some((_, line)) = acks.last().filter(|(_, line)| !line.is_empty()) {
            mark = Some(serde_json::from_str(line).expect("a mark"));
        }
        mid_merge += usize::from(dir.join(format!("{}.tmp", braid_vector::VECTORS_FILE)).exists());
        mid_merge += usize::from(dir.join(format!("{}.merge", braid_vector::VECTORS_FILE)).exists());
        mid_rebind += usize::from(dir.join(format!("{}.tmp", braid_vector::LOG_FILE)).exists());
        if !dir.join(braid_vector::VECTORS_FILE).exists() {
            // Killed before the first save finished: nothing was acknowledged.
            assert_eq!(acked, None, "acknowledged batches but no vector file");
            continue;
        }
        let store = braid_vector::VectorStore::open_checked(&dir, mark.as_ref())
            .unwrap_or_else(|e| panic!("trial {trial}: open after a kill (mark {mark:?}): {e}"));
        let next = acked.map_or(0, |a| a + 1);
        let now = if store.contains(next * VBATCH + 5) { Some(next) } else { acked };
        let model = vector_model(now);
        let mut ords: Vec<u64> = store.ords().collect();
        ords.sort_unstable();
        let mut want: Vec<u64> = model.ords().collect();
        want.sort_unstable();
        assert_eq!(ords, want, "trial {trial}: live ordinals (acknowledged through {acked:?}, holds through {now:?})");
        for &ord in &want {
            assert_eq!(store.vector(ord), model.vector(ord), "trial {trial}: the vector of {ord}");
        }
        // The reopened graph is the one the child built (the model, built in memory by the same
        // inserts, answers alike, bit for bit), and nothing deleted or hidden comes back.
        let visible: Vec<u64> = want.iter().copied().filter(|o| o % 2 == 0).collect();
        let allowed = braid_core::AllowedSet::new(
            braid::Visibility::new(Principal::public(), braid::AccessPolicy::Public, None),
            visible.iter().copied().collect::<braid_core::OrdSet>(),
        );
        assert_eq!(store.has_graph(), model.has_graph());
        for &ord in visible.iter().step_by(7) {
            let query = model.vector(ord).unwrap();
            let found = store.search(&query, 10, &allowed).expect("search");
            assert_eq!(found, model.search(&query, 10, &allowed).unwrap(), "trial {trial}: the search for {ord}");
            assert!(found.hits.iter().all(|h| h.0 % 2 == 0 && model.contains(h.0)), "a hidden or deleted hit");
            assert_eq!(store.search_exact(&query, 1, &allowed).unwrap()[0].0, ord, "{ord} does not find itself");
        }
        last = now;
    }
    eprintln!(
        "vector crash summary ({test}): {trials} trials, {acked_total} batches acknowledged, 0 lost, through batch \
         {last:?}; {mid_merge} kills left a half-written base (a merge under way), {mid_rebind} a half-written \
         rebound log"
    );
    assert!(acked_total > 0, "no trial acknowledged a save");
}

/// Runs this test binary's `test` as a child (`child_env` naming `dir`, [`VLOG_FROM`] the first
/// batch), waits until it is ready, kills it with SIGKILL 20–420 ms later, and returns the
/// batches it acknowledged, in order.
fn run_and_kill(test: &str, child_env: &str, dir: &Path, from: u64, rng: &mut SplitMix) -> Vec<u64> {
    run_and_kill_lines(test, child_env, dir, from, rng).into_iter().map(|(b, _)| b).collect()
}

/// [`run_and_kill`], returning each acknowledgement's batch with the rest of its line.
fn run_and_kill_lines(test: &str, child_env: &str, dir: &Path, from: u64, rng: &mut SplitMix) -> Vec<(u64, String)> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(child_env, dir)
        .env(VLOG_FROM, from.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the child");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let Some(ours) = line.strip_prefix(MARK) else { continue };
            if tx.send(ours.to_string()).is_err() {
                break;
            }
        }
    });
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(line) if line == "ready" => {}
        other => {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("the child never became ready ({other:?}): {}", String::from_utf8_lossy(&out.stderr));
        }
    }
    std::thread::sleep(Duration::from_millis(20 + rng.below(400) as u64));
    child.kill().expect("SIGKILL");
    let status = child.wait().unwrap();
    reader.join().unwrap();
    let acks: Vec<(u64, String)> = rx
        .try_iter()
        .filter_map(|l| {
            let rest = l.strip_prefix("ack ")?;
            let (batch, rest) = rest.split_once(' ').unwrap_or((rest, ""));
            Some((batch.parse().ok()?, rest.to_string()))
        })
        .collect();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "the child ended by itself ({status}): {stderr}");
    }
    assert!(acks.windows(2).all(|w| w[1].0 == w[0].0 + 1), "acks out of order: {acks:?}");
    acks
}

/// The tenant of ordinal `o` in the promotion test: tenant k holds the second half of batch
/// k − 1 and the first half of batch k, so each batch completes a tenant whose first records an
/// earlier save put in the pool.
fn promo_tenant(o: u64) -> String {
    format!("tenant:t{}", (o + VBATCH / 2) / VBATCH)
}

/// Each tenant's ordinals among `ords`, as the lexical index would list them.
fn promo_postings(ords: impl Iterator<Item = u64>) -> Vec<(String, braid_core::OrdSet)> {
    let mut by: std::collections::BTreeMap<String, braid_core::OrdSet> = Default::default();
    for o in ords {
        by.entry(promo_tenant(o)).or_default().insert(o);
    }
    by.into_iter().collect()
}

/// Batch `b` of the promotion test: [`VBATCH`] new ordinals, each placed by [`promo_tenant`],
/// and the tombstone of the record batch `b − 1` deleted. As in an index: a deletion committed
/// with batch `d` reaches the vector store after its commit point, with the next batch's save,
/// and a changed record gets a new ordinal, so a save that a kill cuts short leaves only
/// vectors no commit holds (which an index drops when it opens; here, whatever the model of the
/// acknowledged batches lacks).
fn promo_batch(store: &mut braid_vector::PartitionedStore, b: u64) {
    let items: Vec<(u64, Vec<Vec<f32>>)> = (b * VBATCH..(b + 1) * VBATCH).map(|o| (o, vec![vector_of(o, 0)])).collect();
    let placed = store.check_passages(&items, |o| vec![promo_tenant(o)]).expect("check");
    store.insert_checked(&placed).expect("insert");
    if let Some(gone) = b.checked_sub(1).and_then(promo_deleted) {
        store.delete(gone);
    }
}

/// The record the commit of batch `d` deletes: the second of the batch two before it.
fn promo_deleted(d: u64) -> Option<u64> {
    d.checked_sub(2).map(|b| b * VBATCH + 1)
}

/// The vectors that batches `0..=last`, committed, must leave: every record they added but
/// those their commits deleted.
fn promo_model(last: Option<u64>) -> braid_vector::PartitionedStore {
    let mut store = braid_vector::PartitionedStore::new(VDIM, vector_params());
    store.set_promote_at(VBATCH as usize);
    let Some(last) = last else { return store };
    for b in 0..=last {
        promo_batch(&mut store, b);
    }
    if let Some(gone) = promo_deleted(last) {
        store.delete(gone);
    }
    store
}

/// The promotion child: opens (or starts) the partitioned store, then saves batch after batch,
/// each promoting a tenant out of the pool, printing `ack N` once the save of batch N returned.
fn promo_child(dir: &Path) {
    let from = env_u64(VLOG_FROM).expect("BRAID_VLOG_FROM");
    let mut store = if from == 0 {
        let mut store = braid_vector::PartitionedStore::new(VDIM, vector_params());
        store.set_promote_at(VBATCH as usize);
        store
    } else {
        let mut store = braid_vector::PartitionedStore::open(dir, None, &Default::default()).expect("open");
        store.set_promote_at(VBATCH as usize);
        let postings = promo_postings(store.ords().collect::<Vec<_>>().into_iter());
        store.settle(&postings).expect("settle");
        store
    };
    println!("\n{MARK}ready");
    for b in from.. {
        promo_batch(&mut store, b);
        store.save(dir).expect("save");
        println!("{MARK}ack {b}");
    }
}

/// Kills a process whose every save promotes a tenant out of the pool (the tenant's partition
/// written, then the pool's tombstones) with SIGKILL at random moments: reopened and settled,
/// the store holds every acknowledged batch, each record once and where its tenant says.
#[test]
fn sigkill_during_promotions_loses_nothing() {
    if let Ok(dir) = std::env::var(PROMO_CHILD) {
        promo_child(Path::new(&dir));
        return;
    }
    let trials = env_u64("BRAID_CRASH_TRIALS").unwrap_or(3) * 3;
    let seed = env_u64("BRAID_CRASH_SEED").unwrap_or(11);
    let mut rng = SplitMix::new(seed);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("vectors");
    let (mut last, mut acked_total) = (None::<u64>, 0usize);
    for trial in 0..trials {
        let from = last.map_or(0, |l| l + 1);
        let acks = run_and_kill("crash::sigkill_during_promotions_loses_nothing", PROMO_CHILD, &dir, from, &mut rng);
        acked_total += acks.len();
        let acked = acks.iter().copied().max().or(last);
        if !dir.join(braid_vector::VECTORS_FILE).exists() {
            assert_eq!(acked, None, "acknowledged batches but no vector file");
            continue;
        }
        let mut store = braid_vector::PartitionedStore::open(&dir, None, &Default::default())
            .unwrap_or_else(|e| panic!("open after a kill: {e}"));
        store.set_promote_at(VBATCH as usize);
        let model = promo_model(acked);
        let missing: Vec<u64> = model.ords().filter(|o| !store.contains(*o)).collect();
        assert!(missing.is_empty(), "trial {trial}: acknowledged vectors lost: {missing:?}");
        // The save in flight may have reached some partitions: what it wrote belongs to no
        // acknowledged batch, and goes as an index's open drops vectors no commit holds.
        let orphans: Vec<u64> = store.ords().filter(|o| !model.contains(*o)).collect();
        for o in orphans {
            store.delete(o);
        }
        store.settle(&promo_postings(model.ords())).expect("settle");
        let mut ords: Vec<u64> = store.ords().collect();
        ords.sort_unstable();
        let mut want: Vec<u64> = model.ords().collect();
        want.sort_unstable();
        assert_eq!(ords, want, "trial {trial}: live ordinals (acknowledged through {acked:?})");
        // Every promotion acknowledged stands; one under way at the kill may stand too (its
        // partition written before the pool's tombstones), which changes where records live,
        // never what a search finds. Either way each record is once, where its tenant says.
        let parts: Vec<Partition> = store.partitions().map(|(p, _)| p.clone()).collect();
        for (partition, _) in model.partitions() {
            assert!(parts.contains(partition), "trial {trial}: the acknowledged promotion of {partition:?} was lost");
        }
        for &ord in &want {
            assert_eq!(store.vector(ord), model.vector(ord), "trial {trial}: the vector of {ord}");
            let own = Partition::Tenant(promo_tenant(ord));
            let home = if parts.contains(&own) { own } else { Partition::Pool };
            assert_eq!(store.partition_of(ord), Some(home), "trial {trial}: where {ord} lives");
        }
        // The next child goes on after the last acknowledged batch; the vectors of the one
        // in flight are written again.
        last = acked;
    }
    eprintln!(
        "promotion crash summary: {trials} trials, {acked_total} batches acknowledged, 0 lost, through batch {last:?}"
    );
    assert!(acked_total > 0, "no trial acknowledged a save");
}
