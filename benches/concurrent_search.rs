//! Search throughput with and without a concurrent writer.
//!
//! ```text
//! cargo run --release --example concurrent_search -- [--readers N] [--secs S] [--mode hybrid] [DATASET]
//! ```
//!
//! Indexes a BEIR corpus (by default `datasets/scifact` of the shared folder: `$BRAID_SHARED` or `../shared`) into a temporary on-disk
//! index, then runs the dataset's queries from N reader threads for S seconds (default 2
//! readers, 10 s): first alone, then while one writer upserts new records, rewrites and
//! deletes existing ones, and commits (fsync included) in a loop. Every search runs on one
//! committed snapshot; none waits for the writer. Prints queries per second and latency
//! percentiles for both phases, and the writer's commit rate.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use braid::ingest::Source;
use braid::{Index, IndexConfig, Mode, Principal, Record, SearchRequest};

struct Phase {
    searches: usize,
    latencies: Vec<Duration>,
    elapsed: Duration,
    commits: usize,
    writes: usize,
}

#[path = "../tests/shared_dir.rs"]
mod shared_dir;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut readers = 2usize;
    let mut secs = 10u64;
    let mut mode = Mode::Hybrid;
    let mut dataset = shared_dir::shared_dir().unwrap_or_else(|| PathBuf::from("../shared")).join("datasets/scifact");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--readers" => readers = args.next().ok_or("--readers N")?.parse()?,
            "--secs" => secs = args.next().ok_or("--secs S")?.parse()?,
            "--mode" => mode = args.next().ok_or("--mode M")?.parse::<Mode>()?,
            other => dataset = PathBuf::from(other),
        }
    }
    let source = Source::detect(&dataset)?;
    let queries: Vec<String> =
        braid_eval::read_queries(&dataset.join("queries.jsonl"))?.into_iter().map(|q| q.text).collect();
    let tmp = std::env::temp_dir().join(format!("braid-concurrent-{}", std::process::id()));
    let index = Index::create(&tmp, IndexConfig::default())?;
    let mut corpus = Vec::new();
    {
        let mut writer = index.writer()?;
        for record in source.records(&index.config().schema) {
            let record = record?;
            writer.upsert(&record)?;
            corpus.push(record);
        }
        writer.commit()?;
    }
    println!(
        "{}: {} records, {} queries, {readers} reader threads, {secs} s per phase, mode {}",
        dataset.display(),
        index.num_records(),
        queries.len(),
        mode.name()
    );

    let alone = phase(&index, &queries, readers, secs, mode, None);
    let writing = phase(&index, &queries, readers, secs, mode, Some(&corpus));
    println!("| writer | q/s | p50 ms | p95 ms | commits/s | records written/s |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, p) in [("none", &alone), ("upsert+delete+commit loop", &writing)] {
        let secs = p.elapsed.as_secs_f64();
        println!(
            "| {name} | {:.1} | {:.2} | {:.2} | {:.2} | {:.0} |",
            p.searches as f64 / secs,
            percentile(&p.latencies, 0.50),
            percentile(&p.latencies, 0.95),
            p.commits as f64 / secs,
            p.writes as f64 / secs
        );
    }
    drop(index);
    std::fs::remove_dir_all(&tmp)?;
    Ok(())
}

/// Runs the readers for `secs` seconds, with a writer when `corpus` is given.
fn phase(index: &Index, queries: &[String], readers: usize, secs: u64, mode: Mode, corpus: Option<&[Record]>) -> Phase {
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..readers)
            .map(|r| {
                let stop = &stop;
                s.spawn(move || {
                    let mut latencies = Vec::new();
                    let mut i = r * 97;
                    while !stop.load(Ordering::Relaxed) {
                        let query = &queries[i % queries.len()];
                        let t = Instant::now();
                        let request = SearchRequest::new(query.as_str(), Principal::public()).mode(mode).k(10);
                        index.search(&request).expect("search");
                        latencies.push(t.elapsed());
                        i += 1;
                    }
                    latencies
                })
            })
            .collect();
        let writer = corpus.map(|corpus| {
            let stop = &stop;
            s.spawn(move || write_loop(index, corpus, stop))
        });
        std::thread::sleep(Duration::from_secs(secs));
        stop.store(true, Ordering::Relaxed);
        let (commits, writes) = writer.map_or((0, 0), |w| w.join().expect("writer"));
        let mut latencies: Vec<Duration> = handles.into_iter().flat_map(|h| h.join().expect("reader")).collect();
        latencies.sort();
        Phase { searches: latencies.len(), latencies, elapsed: started.elapsed(), commits, writes }
    })
}

/// Each round: 40 new records, 40 rewritten ones, 20 deletions, one commit.
fn write_loop(index: &Index, corpus: &[Record], stop: &AtomicBool) -> (usize, usize) {
    let mut writer = index.writer().expect("writer");
    let (mut commits, mut writes, mut round) = (0usize, 0usize, 0usize);
    while !stop.load(Ordering::Relaxed) {
        for i in 0..40 {
            let base = &corpus[(round * 40 + i) % corpus.len()];
            let copy = Record::new(format!("new-{round}-{i}")).title(base.title.as_str()).body(base.body.as_str());
            writer.upsert(&copy).expect("upsert");
            let rewritten = &corpus[(round * 40 + i + 1000) % corpus.len()];
            let edit = Record::new(rewritten.id())
                .title(rewritten.title.as_str())
                .body(format!("{} (revision {round})", rewritten.body.as_str()));
            writer.upsert(&edit).expect("upsert");
        }
        if round > 0 {
            for i in 0..20 {
                writer.delete(&format!("new-{}-{i}", round - 1)).expect("delete");
            }
        }
        writer.commit().expect("commit");
        commits += 1;
        writes += 100;
        round += 1;
    }
    (commits, writes)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let at = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[at].as_secs_f64() * 1000.0
}
