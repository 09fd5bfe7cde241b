//! Searches while writes go on all the time: a search's latency with the index idle and while
//! a writer commits a steady stream of small batches.
//!
//! ```text
//! cargo run --release -p braid-cli --example sustained_writes -- INDEX_DIR QUERIES_JSONL [RATE] [SECONDS] [BATCH] [QPS] [--clients N] [--commit-delay-ms D] [--commit-interval-ms I] [--writer-nice N] [--writer-idle] [--writer-heap BYTES] [--trace FILE]
//! ```
//!
//! Opens an index of `scripts/scale.sh` (`INDEX_DIR`, with its supplied vectors where it has
//! them; the run changes it, so give it a copy) and runs hybrid searches (k = 10, each query's
//! supplied vector from `QUERIES_JSONL`) for two principals, one after the other: one tenant
//! of ten (`tenant:t3`) and one who sees every record. Searches start `QPS` times a second
//! (default 0: each as soon as the one before ended, a load that takes every core it can, so
//! any write takes time from it), the same in both phases. First idle (a warm-up pass, then
//! three measured passes over the queries), then for `SECONDS` (default 60) while `RATE` new
//! records a second (default 1,000) are written in batches of `BATCH` (default 10): each
//! batch's records go to one writer's scope in turn — each of the ten tenants, then records
//! without a tenant (`group:g0`) —, each with a vector of the index's dimension.
//!
//! Two ways to write:
//! - without `--clients` (or `--clients 0`), one writer thread commits each batch on its own
//!   (a commit per batch); a writer that falls behind the rate commits its next batch at once;
//! - with `--clients N`, batch `i` is due at `i × BATCH / RATE` s and the first of `N` client
//!   threads free takes it, waits until it is due and hands it to one [`braid::GroupCommit`]
//!   (with `--commit-delay-ms D`, default 0, and `--commit-interval-ms I`, default
//!   [`braid::DEFAULT_COMMIT_INTERVAL`]), waiting for its acknowledgement as a service's
//!   callers do; batches that meet share commits.
//!
//! Either stops at `SECONDS`; the report says the rate reached.
//! Prints one JSON object: search p50/p99/max per principal idle and under writes, the ratio of
//! the p99s, the commits made and records per commit, the bytes the process wrote while
//! writing (background merges included); one commit per batch: each commit's latency and
//! bytes; grouped: each batch's acknowledgement latency (from its call, and from when it was
//! due); per principal, each search stage's p99 idle and while writing (with taking the
//! searcher and dropping it, outside the stages). `--writer-nice N` sets
//! [`braid::GroupCommitOptions::writer_nice`] (default 10), `--writer-idle`
//! [`braid::GroupCommitOptions::writer_idle`] (the idle scheduling class), `--writer-heap BYTES`
//! the group commit's writer's [`braid::WriterOptions::heap_bytes`]. `--trace FILE` writes
//! every search (start time, latency, stages, and how long the search pool's threads and the
//! calling thread ran and waited to run meanwhile, from Linux's `schedstat`) as JSON lines; `BRAID_TRACE=braid::commit=debug`
//! logs each commit's phases, the vector store's lock holds and the searches that waited for
//! it, to stderr.

mod support;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use braid::{Batch, GroupCommit, GroupCommitOptions, Index, Mode, Principal, Record, SearchRequest};
use support::{in_ms, read_queries, round, summary, trace_from_env, vector, write_bytes, Query};

/// What the writers did: in one commit per batch, each commit's latency and bytes; grouped,
/// each batch's acknowledgement latency; the commits, records and bytes in all, and how long
/// they wrote.
struct Written {
    commits_ms: Vec<f64>,
    bytes: Vec<f64>,
    acks_ms: Vec<f64>,
    from_due_ms: Vec<f64>,
    commits: u64,
    records: usize,
    total_bytes: u64,
    seconds: f64,
}

/// How the batches are written: a commit each, or by `clients` threads through a group commit.
#[derive(Clone, Copy)]
enum Writing {
    CommitPerBatch,
    Grouped { clients: usize, delay: Duration, interval: Duration, nice: i32, idle: bool, heap: usize },
}

/// Takes `--name VALUE` out of `args`, parsed.
fn flag<T: std::str::FromStr>(args: &mut Vec<String>, name: &str) -> Result<Option<T>, Box<dyn std::error::Error>>
where
    T::Err: std::error::Error + 'static,
{
    let Some(at) = args.iter().position(|a| a == name) else { return Ok(None) };
    let value = args.get(at + 1).ok_or_else(|| format!("{name} needs a value"))?.parse()?;
    args.drain(at..at + 2);
    Ok(Some(value))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: sustained_writes INDEX_DIR QUERIES_JSONL [RATE] [SECONDS] [BATCH] [QPS] [--clients N] [--commit-delay-ms D] [--commit-interval-ms I] [--writer-nice N] [--writer-idle] [--writer-heap BYTES] [--trace FILE]";
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let clients: usize = flag(&mut args, "--clients")?.unwrap_or(0);
    let delay_ms: u64 = flag(&mut args, "--commit-delay-ms")?.unwrap_or(0);
    let interval: Option<u64> = flag(&mut args, "--commit-interval-ms")?;
    let interval = interval.map_or(GroupCommitOptions::default().commit_interval, Duration::from_millis);
    let trace: Option<PathBuf> = flag(&mut args, "--trace")?;
    let nice: i32 = flag(&mut args, "--writer-nice")?.unwrap_or(braid::DEFAULT_WRITER_NICE);
    let heap: usize = flag(&mut args, "--writer-heap")?.unwrap_or(GroupCommitOptions::default().writer.heap_bytes);
    let idle = args.iter().any(|a| a == "--writer-idle");
    args.retain(|a| a != "--writer-idle");
    trace_from_env();
    let how = match clients {
        0 => Writing::CommitPerBatch,
        clients => Writing::Grouped { clients, delay: Duration::from_millis(delay_ms), interval, nice, idle, heap },
    };
    let mut args = args.into_iter();
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
    // With a trace, each search also records how long the search pool's threads ran and waited
    // to run (Linux's per-thread scheduler statistics): a slow search that waited is one the
    // scheduler held back, one that ran long was slowed where it ran.
    let pool: Vec<PathBuf> = match &trace {
        Some(_) => rayon::broadcast(|_| {
            std::fs::read_link("/proc/thread-self").map(|p| Path::new("/proc").join(p).join("schedstat"))
        })
        .into_iter()
        .filter_map(Result::ok)
        .collect(),
        None => Vec::new(),
    };
    let sum = |paths: &mut dyn Iterator<Item = &Path>| -> [u64; 2] {
        paths.filter_map(|p| std::fs::read_to_string(p).ok()).fold([0, 0], |[ran, waited], line| {
            let mut fields = line.split_whitespace().map(|f| f.parse::<u64>().unwrap_or(0));
            [ran + fields.next().unwrap_or(0), waited + fields.next().unwrap_or(0)]
        })
    };
    // The pool's threads, then the calling thread (which runs a search's semantic leg).
    let caller = trace.as_ref().map(|_| Path::new("/proc/thread-self/schedstat"));
    let scheduled = || -> [u64; 4] {
        let [ran, waited] = sum(&mut pool.iter().map(PathBuf::as_path));
        let [here_ran, here_waited] = sum(&mut caller.into_iter());
        [ran, waited, here_ran, here_waited]
    };
    let search = |principal: &Principal, (text, vector): &Query| -> braid::Result<Took> {
        let mut request = SearchRequest::new(text, principal.clone()).k(10).mode(mode).suggest(false);
        if dim.is_some() {
            request = request.vector(vector.clone());
        }
        let at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        let before = scheduled();
        let started = Instant::now();
        let searcher = index.searcher();
        let taken = started.elapsed();
        let response = searcher.search(&request)?;
        let searched = started.elapsed();
        let stages = response.stats.micros.clone();
        drop(response);
        drop(searcher);
        let took = started.elapsed();
        let after = scheduled();
        let [pool_ran, pool_waited, ran, waited] = std::array::from_fn(|i| after[i].saturating_sub(before[i]) / 1000);
        let pool = [pool_ran, pool_waited, ran, waited];
        // Outside the pipeline's stages: taking the searcher, and dropping it (its snapshot, when
        // it was the last to hold it) with the response.
        Ok(Took { took, at, stages, outside: [taken, took - searched], pool })
    };

    let mut idle: Vec<Vec<Took>> = Vec::new();
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
            let result = match how {
                Writing::CommitPerBatch => write(&index, dim, rate, seconds, batch),
                Writing::Grouped { clients, delay, interval, nice, idle, heap } => {
                    let options = GroupCommitOptions {
                        commit_delay: delay,
                        commit_interval: interval,
                        writer_nice: nice,
                        writer_idle: idle,
                        writer: braid::WriterOptions { heap_bytes: heap, ..GroupCommitOptions::default().writer },
                    };
                    write_grouped(&index, dim, rate, seconds, batch, clients, options)
                }
            };
            writing.store(false, Ordering::Release);
            result
        });
        let mut loaded: Vec<Vec<Took>> = vec![Vec::new(); principals.len()];
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

    if let Some(path) = &trace {
        let mut lines = String::new();
        for (phase, runs) in [("idle", &idle), ("writing", &loaded)] {
            for ((label, _), took) in principals.iter().zip(runs.iter()) {
                for t in took {
                    let stages: serde_json::Map<String, serde_json::Value> =
                        t.micros().map(|(name, us)| (name.to_string(), us.into())).collect();
                    let line = serde_json::json!({ "phase": phase, "principal": label, "at": t.at,
                        "ms": t.took.as_secs_f64() * 1e3, "stages_us": stages,
                        "pool_ran_us": t.pool[0], "pool_waited_us": t.pool[1],
                        "caller_ran_us": t.pool[2], "caller_waited_us": t.pool[3] });
                    lines.push_str(&line.to_string());
                    lines.push('\n');
                }
            }
        }
        std::fs::write(path, lines)?;
    }
    let mut searches = serde_json::Map::new();
    for (((label, _), idle), loaded) in principals.iter().zip(idle).zip(loaded) {
        let stages = stage_p99s(&idle, &loaded);
        let (idle, loaded) = (summary(in_ms(&durations(&idle))), summary(in_ms(&durations(&loaded))));
        let ratio = match (idle["p99"].as_f64(), loaded["p99"].as_f64()) {
            (Some(i), Some(l)) if i > 0.0 => Some(round(l / i)),
            _ => None,
        };
        searches.insert(
            label.to_string(),
            serde_json::json!({ "idle_ms": idle, "while_writing_ms": loaded, "p99_while_writing_over_idle": ratio,
                "stage_p99_ms_idle_and_writing": stages }),
        );
    }
    let commits = written.commits.max(1) as f64;
    let mut out = serde_json::json!({
        "records": index.num_records(),
        "mode": mode.name(),
        "vector_dim": dim,
        "target_records_per_second": rate,
        "records_per_batch": batch,
        "searches_per_second": if qps > 0.0 { serde_json::json!(qps) } else { "back to back".into() },
        "written_records": written.records,
        "written_seconds": round(written.seconds),
        "records_per_second": round(written.records as f64 / written.seconds),
        "commits": written.commits,
        "records_per_commit": round(written.records as f64 / commits),
        "bytes_written": written.total_bytes,
        "bytes_written_per_commit_mean": round(written.total_bytes as f64 / commits),
        "searches": searches,
    });
    let details = match how {
        Writing::CommitPerBatch => serde_json::json!({
            "writing": "one commit per batch",
            "commit_ms": summary(written.commits_ms),
            "commit_bytes_written": summary(written.bytes),
        }),
        Writing::Grouped { clients, delay, interval, nice, idle, heap } => serde_json::json!({
            "writer_heap_bytes": heap,
            "writing": "group commit",
            "clients": clients,
            "writer_nice": nice,
            "writer_idle": idle,
            "commit_delay_ms": delay.as_millis() as u64,
            "commit_interval_ms": interval.as_millis() as u64,
            "ack_ms": summary(written.acks_ms),
            "ack_from_due_ms": summary(written.from_due_ms),
        }),
    };
    if let (Some(out), serde_json::Value::Object(details)) = (out.as_object_mut(), details) {
        out.extend(details);
    }
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

/// One search: how long it took, when it started (seconds since the epoch) and its stages'
/// microseconds (the response's [`braid::Stats::micros`]).
#[derive(Clone)]
struct Took {
    took: Duration,
    at: f64,
    stages: std::collections::BTreeMap<braid::Stage, u64>,
    /// Taking the searcher, and dropping it with the response.
    outside: [Duration; 2],
    /// Microseconds the search pool's threads ran and waited to run meanwhile, then the
    /// calling thread's (with a trace).
    pool: [u64; 4],
}

impl Took {
    /// Each stage's microseconds by name, and the two steps outside them.
    fn micros(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        let outside = ["searcher", "drop"].into_iter().zip(self.outside.iter().map(|d| d.as_micros() as u64));
        self.stages.iter().map(|(s, us)| (s.name(), *us)).chain(outside)
    }
}

fn durations(took: &[Took]) -> Vec<Duration> {
    took.iter().map(|t| t.took).collect()
}

/// Each stage's p99 (milliseconds, nearest rank) idle and while writing: which stage grew.
fn stage_p99s(idle: &[Took], loaded: &[Took]) -> serde_json::Value {
    let p99 = |took: &[Took], name: &str| {
        let mut v: Vec<f64> =
            took.iter().map(|t| t.micros().find(|(n, _)| *n == name).map_or(0, |(_, us)| us) as f64 / 1e3).collect();
        v.sort_by(f64::total_cmp);
        v.get(((v.len() as f64 * 0.99).ceil() as usize).saturating_sub(1)).copied().map(round)
    };
    let mut out = serde_json::Map::new();
    let names = braid::Stage::ALL.iter().map(|s| s.name()).chain(["searcher", "drop"]);
    for name in names {
        if let (Some(i), Some(l)) = (p99(idle, name), p99(loaded, name)) {
            if i > 0.0 || l > 0.0 {
                out.insert(name.to_string(), serde_json::json!([i, l]));
            }
        }
    }
    out.into()
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
    let mut written = Written {
        commits_ms: Vec::new(),
        bytes: Vec::new(),
        acks_ms: Vec::new(),
        from_due_ms: Vec::new(),
        commits: 0,
        records: 0,
        total_bytes: 0,
        seconds: 0.0,
    };
    let first = write_bytes();
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
        let before = write_bytes();
        let started = Instant::now();
        for record in records(run, c as usize, batch, dim) {
            writer.upsert(&record)?;
        }
        writer.commit()?;
        written.commits_ms.push(started.elapsed().as_secs_f64() * 1e3);
        written.bytes.push(write_bytes().saturating_sub(before) as f64);
        written.records += batch;
        written.commits += 1;
    }
    written.seconds = start.elapsed().as_secs_f64();
    written.total_bytes = write_bytes().saturating_sub(first);
    Ok(written)
}

/// Batch `c` of run `run`: `batch` new records in one writer's scope (the ten tenants in turn,
/// then `group:g0`), each with a vector of `dim` dimensions when the index has vectors.
fn records(run: u128, c: usize, batch: usize, dim: Option<usize>) -> Vec<Record> {
    let scopes = 11;
    let acl = match c % scopes {
        10 => "group:g0".to_string(),
        t => format!("tenant:t{t}"),
    };
    (0..batch)
        .map(|r| {
            let i = c * batch + r;
            let text = format!("record {r} of sustained write {c}, searched while the writes go on");
            let record = Record::new(format!("sustained-{run}-{i}")).title("Sustained writes").body(text).acl([&acl]);
            match dim {
                Some(dim) => record.vector(vector(i, dim)),
                None => record,
            }
        })
        .collect()
}

/// Writes batch `i` of `batch` records at `i × batch / rate` s, for `seconds`, each taken by the
/// first of `clients` threads free, through one group commit with `options`; each client waits
/// for its batch's acknowledgement before it takes another.
fn write_grouped(
    index: &Index,
    dim: Option<usize>,
    rate: f64,
    seconds: f64,
    batch: usize,
    clients: usize,
    options: GroupCommitOptions,
) -> braid::Result<Written> {
    let front = GroupCommit::with_options(index.clone(), options);
    let run = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let period = Duration::from_secs_f64(batch as f64 / rate);
    let next = AtomicU64::new(0);
    let latencies = Mutex::new((Vec::new(), Vec::new()));
    let first = write_bytes();
    let start = Instant::now();
    std::thread::scope(|scope| -> braid::Result<()> {
        let handles: Vec<_> = (0..clients)
            .map(|_| {
                scope.spawn(|| -> braid::Result<()> {
                    loop {
                        let c = next.fetch_add(1, Ordering::Relaxed);
                        let due = period * c as u32;
                        if due.as_secs_f64() >= seconds || start.elapsed().as_secs_f64() >= seconds {
                            return Ok(());
                        }
                        let records = records(run, c as usize, batch, dim);
                        if let Some(wait) = due.checked_sub(start.elapsed()) {
                            std::thread::sleep(wait);
                        }
                        let called = Instant::now();
                        front.write(Batch { upserts: records, deletes: Vec::new() })?;
                        let (acks, from_due) = &mut *latencies.lock().unwrap_or_else(|p| p.into_inner());
                        acks.push(called.elapsed().as_secs_f64() * 1e3);
                        from_due.push(start.elapsed().saturating_sub(due).as_secs_f64() * 1e3);
                    }
                })
            })
            .collect();
        for handle in handles {
            handle.join().map_err(|_| braid::Error::invalid_request("a client panicked"))??;
        }
        Ok(())
    })?;
    let seconds = start.elapsed().as_secs_f64();
    let total_bytes = write_bytes().saturating_sub(first);
    let stats = front.stats();
    let (acks_ms, from_due_ms) = latencies.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok(Written {
        commits_ms: Vec::new(),
        bytes: Vec::new(),
        acks_ms,
        from_due_ms,
        commits: stats.commits,
        records: stats.changes as usize,
        total_bytes,
        seconds,
    })
}
