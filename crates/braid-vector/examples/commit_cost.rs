//! What a small commit costs the vector store: the whole-file rewrite every commit did before
//! the log (`VectorStore::merge`, the code path `save` always took: every slot, the graph,
//! temporary file, fsync, rename) against the log append `save` does now, in one run on one
//! store.
//!
//! ```text
//! cargo run --release -p braid-vector --example commit_cost -- [records] [dim] [commits] [batch] [f32|int8] [graph]
//! ```
//!
//! Defaults: 100,000 records of 384 dimensions, f32, 30 commits of 10 records each (10 new
//! records and 10 tombstones, as an upsert of 10 changed records does), no graph (below the
//! exact threshold of 150,000, as at 100,000 records in an index); `graph` builds one
//! (exact threshold 0), which takes minutes at 100,000. Each commit's time covers inserting
//! its vectors and saving; bytes are those the process handed to `write` (`/proc/self/io`
//! `wchar`), and the growth of the files. At the end the log is merged once, to measure
//! what a merge costs and its amortised share per commit.

use std::path::Path;
use std::time::Instant;

use braid_vector::{HnswParams, Quantization, VectorStore, LOG_FILE, VECTORS_FILE};

/// Bytes this process passed to `write` so far (0 where /proc is not there).
fn written() -> u64 {
    let io = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    io.lines().find_map(|l| l.strip_prefix("wchar: ")).and_then(|v| v.trim().parse().ok()).unwrap_or(0)
}

fn len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

mod common;

use common::{percentile, Rng};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (records, dim, commits, batch) = (arg(0, 100_000), arg(1, 384) as usize, arg(2, 30), arg(3, 10));
    let quantization = if args.get(4).is_some_and(|a| a == "int8") { Quantization::Int8 } else { Quantization::F32 };
    let graph = args.get(5).is_some_and(|a| a == "graph");
    let params = HnswParams {
        quantization,
        exact_threshold: if graph { 0 } else { HnswParams::default().exact_threshold },
        ..HnswParams::default()
    };
    let dir = std::env::temp_dir().join(format!("braid-commit-cost-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut rng = Rng(42);
    let started = Instant::now();
    let mut store = VectorStore::new(dim, params);
    let mut next = 0;
    while next < records {
        let items: Vec<(u64, Vec<f32>)> = (next..(next + 10_000).min(records)).map(|o| (o, rng.vector(dim))).collect();
        next += items.len() as u64;
        store.insert_batch(&items).expect("insert");
    }
    store.merge(&dir).expect("base");
    println!(
        "{records} records x {dim} dims, {quantization:?}, graph: {}; built and saved in {:.1} s; base {} bytes",
        store.has_graph(),
        started.elapsed().as_secs_f64(),
        len(&dir.join(VECTORS_FILE))
    );
    let mut victim = 0;
    let mut commit = |store: &mut VectorStore, whole: bool| -> (f64, u64) {
        let before = written();
        let t = Instant::now();
        let items: Vec<(u64, Vec<f32>)> = (next..next + batch).map(|o| (o, rng.vector(dim))).collect();
        next += batch;
        store.insert_batch(&items).expect("insert");
        for _ in 0..batch {
            store.delete(victim);
            victim += 1;
        }
        if whole {
            store.merge(&dir).expect("merge");
        } else {
            store.save(&dir).expect("save");
        }
        (t.elapsed().as_secs_f64() * 1e3, written() - before)
    };
    for (name, whole) in [("before: whole file every commit (merge)", true), ("after: log append (save)", false)] {
        let log_before = len(&dir.join(LOG_FILE));
        let (mut ms, mut bytes) = (Vec::new(), Vec::new());
        for _ in 0..commits {
            let (m, b) = commit(&mut store, whole);
            ms.push(m);
            bytes.push(b as f64);
        }
        ms.sort_by(f64::total_cmp);
        bytes.sort_by(f64::total_cmp);
        println!(
            "{name}: {commits} commits of {batch} records: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; \
             written per commit p50 {:.0} bytes, max {:.0}; log grew {} bytes",
            percentile(&ms, 0.5),
            percentile(&ms, 0.99),
            ms[ms.len() - 1],
            percentile(&bytes, 0.5),
            bytes[bytes.len() - 1],
            len(&dir.join(LOG_FILE)) - log_before,
        );
    }
    // A commit that changed nothing.
    let before = written();
    let t = Instant::now();
    store.save(&dir).expect("save");
    println!("unchanged commit: {:.2} ms, {} bytes", t.elapsed().as_secs_f64() * 1e3, written() - before);
    let log = len(&dir.join(LOG_FILE));
    let t = Instant::now();
    let reopened = VectorStore::open(&dir).expect("open");
    println!("open with a {log} byte log: {:.0} ms, {} records", t.elapsed().as_secs_f64() * 1e3, reopened.len());
    drop(reopened);
    // One merge, and its share per commit: the log merges once it would pass half the base.
    let per_commit = log as f64 / commits as f64;
    let base = len(&dir.join(VECTORS_FILE));
    let before = written();
    let t = Instant::now();
    store.merge(&dir).expect("merge");
    let merge_bytes = written() - before;
    let commits_per_merge = (base as f64 / 2.0) / per_commit;
    println!(
        "merge: {:.0} ms, {merge_bytes} bytes; at {per_commit:.0} log bytes a commit a merge comes every \
         {commits_per_merge:.0} commits: {:.0} bytes a commit amortised",
        t.elapsed().as_secs_f64() * 1e3,
        merge_bytes as f64 / commits_per_merge
    );
    let t = Instant::now();
    let reopened = VectorStore::open(&dir).expect("open");
    println!("open after the merge: {:.0} ms, {} records", t.elapsed().as_secs_f64() * 1e3, reopened.len());
    let _ = std::fs::remove_dir_all(&dir);
}
