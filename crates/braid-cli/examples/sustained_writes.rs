//! Searches while writes go on all the time: a search's latency with the index idle and while
//! a writer commits a steady stream of small batches.
//!
//! ```text
//! cargo run --release -p braid-cli --example sustained_writes -- INDEX_DIR QUERIES_JSONL [RATE] [SECONDS] [BATCH] [QPS]
//! ```
//!
//! Opens an index of `scripts/scale.sh` (`INDEX_DIR`, with its supplied vectors where it has
//! them; the run changes it, so give it a copy) and runs hybrid searches (k = 10, each query's
//! supplied vector from `QUERIES_JSONL`) for two principals, one after the other: one tenant
//! of ten (`tenant:t3`) and one who sees every record. Searches start `QPS` times a second
//! (default 0: each as soon as the one before ended, a load that takes every core it can, so
//! any write takes time from it), the same in both phases. First idle (a warm-up pass, then
//! three measured passes over the queries), then for `SECONDS` (default 60) while another thread
//! writes `RATE` new records a second (default 1,000) in commits of `BATCH` (default 10): each
//! batch's records go to one writer's scope in turn — each of the ten tenants, then records
//! without a tenant (`group:g0`) —, each with a vector of the index's dimension. A writer that
//! falls behind the rate commits its next batch at once (and stops at `SECONDS` all the same);
//! the report says the rate reached.
//! Prints one JSON object: search p50/p99/max per principal idle and under writes, the ratio of
//! the p99s, and each commit's latency and the bytes the process wrote during it (background
//! merges included), with the bytes written in all over the commits.

mod support;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use braid::{Index, Mode, Principal, Record, SearchRequest};
use support::{in_ms, read_queries, round, summary, vector, write_bytes, Query};

/// What the writer did: each commit's latency and bytes, and how long it wrote.
struct Written {
    commits_ms: Vec<f64>,
    bytes: Vec<f64>,
    records: usize,
    seconds: f64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: sustained_writes INDEX_DIR QUERIES_JSONL [RATE] [SECONDS] [BATCH]";
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().ok_or(usage)?);
    let queries = read_queries(&PathBuf::from(args.next().ok_or(usage)?))?;
    let rate: f64 = args.next().map_or(Ok(1_000.0), |n| n.parse())?;
    let seconds: f64 = args.next().map_or(Ok(60.0), |n| n.parse())?;
    let batch: usize = args.next().map_or(Ok(10), |n| n.parse())?;
    let qps: f64 = args.next().map_or(Ok(0.0), |n| n.parse())?;
    let pace = Pace::new(qps);
    if queries.is_empty() || rate <= 0.0 || batch == 0 {
        return Err("need queries with vectors, a positive rate and a batch of at least one record".into());
    }
    let dim = Index::recorded_embedding(&dir)?.map(|e| e.dim);
    let index = if dim.is_some() { Index::builder().stored_vectors().open(&dir)? } else { Index::open(&dir)? };
    let mode = if dim.is_some() { Mode::Hybrid } else { Mode::Lexical };
    let everyone: Vec<String> =
        (0..10).map(|t| format!("tenant:t{t}")).chain((0..100).map(|g| format!("group:g{g}"))).collect();
    let principals = [
        ("one tenant", Principal::from_verified_tokens(["tenant:t3"])),
        ("100%", Principal::from_verified_tokens(&everyone)),
    ];
    let search = |principal: &Principal, (text, vector): &Query| -> braid::Result<Duration> {
        let mut request = SearchRequest::new(text, principal.clone()).k(10).mode(mode).suggest(false);
        if dim.is_some() {
            request = request.vector(vector.clone());
        }
        let started = Instant::now();
        index.search(&request)?;
        Ok(started.elapsed())
    };

    let mut idle = Vec::new();
    for (_, principal) in &principals {
        for query in &queries {
            search(principal, query)?;
        }
        let mut took = Vec::new();
        let mut paced = pace.start();
        for _ in 0..3 {
            for query in &queries {
                paced.wait();
                took.push(search(principal, query)?);
            }
        }
        idle.push(took);
    }

    let writing = AtomicBool::new(true);
    let (loaded, written) = std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let result = write(&index, dim, rate, seconds, batch);
            writing.store(false, Ordering::Release);
            result
        });
        let mut loaded: Vec<Vec<Duration>> = vec![Vec::new(); principals.len()];
        let mut next = queries.iter().cycle();
        let mut paced = pace.start();
        'load: while writing.load(Ordering::Acquire) {
            for (took, (_, principal)) in loaded.iter_mut().zip(&principals) {
                let Some(query) = next.next() else { break 'load };
                paced.wait();
                match search(principal, query) {
                    Ok(t) => took.push(t),
                    Err(e) => return Err(e.to_string()),
                }
            }
        }
        let written = writer.join().map_err(|_| "the writer panicked".to_string())?.map_err(|e| e.to_string())?;
        Ok((loaded, written))
    })?;

    let mut searches = serde_json::Map::new();
    for (((label, _), idle), loaded) in principals.iter().zip(idle).zip(loaded) {
        let (idle, loaded) = (summary(in_ms(&idle)), summary(in_ms(&loaded)));
        let ratio = match (idle["p99"].as_f64(), loaded["p99"].as_f64()) {
            (Some(i), Some(l)) if i > 0.0 => Some(round(l / i)),
            _ => None,
        };
        searches.insert(
            label.to_string(),
            serde_json::json!({ "idle_ms": idle, "while_writing_ms": loaded, "p99_while_writing_over_idle": ratio }),
        );
    }
    let total_bytes: f64 = written.bytes.iter().sum();
    let commits = written.commits_ms.len();
    let out = serde_json::json!({
        "records": index.num_records(),
        "mode": mode.name(),
        "vector_dim": dim,
        "target_records_per_second": rate,
        "records_per_commit": batch,
        "searches_per_second": if qps > 0.0 { serde_json::json!(qps) } else { "back to back".into() },
        "written_records": written.records,
        "written_seconds": round(written.seconds),
        "records_per_second": round(written.records as f64 / written.seconds),
        "commit_ms": summary(written.commits_ms),
        "commit_bytes_written": summary(written.bytes),
        "bytes_written_per_commit_mean": round(total_bytes / commits.max(1) as f64),
        "searches": searches,
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

/// When searches start: `qps` a second, or back to back.
struct Pace {
    period: Option<Duration>,
}

impl Pace {
    fn new(qps: f64) -> Pace {
        Pace { period: (qps > 0.0).then(|| Duration::from_secs_f64(1.0 / qps)) }
    }

    fn start(&self) -> Paced {
        Paced { period: self.period, start: Instant::now(), count: 0 }
    }
}

/// A run of searches at a [`Pace`].
struct Paced {
    period: Option<Duration>,
    start: Instant,
    count: u32,
}

impl Paced {
    /// Waits until the next search is due (one that is late starts at once).
    fn wait(&mut self) {
        if let Some(period) = self.period {
            if let Some(wait) = (period * self.count).checked_sub(self.start.elapsed()) {
                std::thread::sleep(wait);
            }
            self.count += 1;
        }
    }
}

/// Commits `batch` new records at a time, `rate` records a second, for `seconds`.
fn write(index: &Index, dim: Option<usize>, rate: f64, seconds: f64, batch: usize) -> braid::Result<Written> {
    let mut writer = index.writer()?;
    let run = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let scopes: Vec<String> = (0..10).map(|t| format!("tenant:t{t}")).chain(["group:g0".to_string()]).collect();
    let mut written = Written { commits_ms: Vec::new(), bytes: Vec::new(), records: 0, seconds: 0.0 };
    let start = Instant::now();
    let period = Duration::from_secs_f64(batch as f64 / rate);
    for c in 0.. {
        let due = period * c;
        if due.as_secs_f64() >= seconds || start.elapsed().as_secs_f64() >= seconds {
            break;
        }
        if let Some(wait) = due.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
        let acl = &scopes[c as usize % scopes.len()];
        let before = write_bytes();
        let started = Instant::now();
        for r in 0..batch {
            let i = written.records + r;
            let text = format!("record {r} of sustained write {c}, searched while the writes go on");
            let mut record =
                Record::new(format!("sustained-{run}-{i}")).title("Sustained writes").body(text).acl([acl]);
            if let Some(dim) = dim {
                record = record.vector(vector(i, dim));
            }
            writer.upsert(&record)?;
        }
        writer.commit()?;
        written.commits_ms.push(started.elapsed().as_secs_f64() * 1e3);
        written.bytes.push(write_bytes().saturating_sub(before) as f64);
        written.records += batch;
    }
    written.seconds = start.elapsed().as_secs_f64();
    Ok(written)
}
