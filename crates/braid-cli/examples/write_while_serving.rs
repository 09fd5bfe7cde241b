//! Searches while a commit lands: how long the semantic leg waits for a writer.
//!
//! ```text
//! cargo run --release -p braid-cli --example write_while_serving -- INDEX_DIR QUERIES_JSONL [RECORDS]
//! ```
//!
//! Opens an index of `scripts/scale.sh` (`INDEX_DIR`, with its supplied vectors; the run
//! changes it, so give it a copy) and runs hybrid searches for a principal who sees every
//! record, one at a time with each query's supplied vector (`QUERIES_JSONL`, `{"text",
//! "vector"}` per line, k = 10): first alone, then while another thread upserts `RECORDS` new
//! records (default 1,000; the queries' texts and vectors, slightly moved) and commits, then
//! deletes them and commits again. Prints one JSON object: latency percentiles and the
//! slowest search of each phase, how long each commit took, when each writer step ended and
//! when the five slowest searches started (ms since the writer started).

mod support;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use braid::{Index, Mode, Principal, Record, SearchRequest};
use support::{in_ms, ms, read_queries, round, summary, Query};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: write_while_serving INDEX_DIR QUERIES_JSONL [RECORDS]";
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().ok_or(usage)?);
    let queries = read_queries(&PathBuf::from(args.next().ok_or(usage)?))?;
    let records: usize = args.next().map_or(Ok(1_000), |n| n.parse())?;
    if queries.is_empty() {
        return Err("no queries with a vector".into());
    }
    let index = Index::builder().stored_vectors().open(&dir)?;
    let tokens: Vec<String> =
        (0..10).map(|t| format!("tenant:t{t}")).chain((0..100).map(|g| format!("group:g{g}"))).collect();
    let principal = Principal::from_verified_tokens(&tokens);
    let search = |(text, vector): &Query| -> Result<Duration, braid::Error> {
        let request =
            SearchRequest::new(text, principal.clone()).k(10).mode(Mode::Hybrid).suggest(false).vector(vector.clone());
        let started = Instant::now();
        index.search(&request)?;
        Ok(started.elapsed())
    };

    // Warm-up, then the searches alone.
    for query in &queries {
        search(query)?;
    }
    let alone = queries.iter().map(&search).collect::<Result<Vec<_>, _>>()?;

    let writing = AtomicBool::new(true);
    let start = Instant::now();
    let (during, phases) = std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let result = write_and_remove(&index, &queries, records, start);
            writing.store(false, Ordering::Release);
            result
        });
        // Each search's start, in ms since the writer started, and its duration.
        let mut during: Vec<(f64, Duration)> = Vec::new();
        let mut next = queries.iter().cycle();
        while writing.load(Ordering::Acquire) {
            let at = ms(start.elapsed());
            match next.next().map(&search) {
                Some(Ok(took)) => during.push((at, took)),
                Some(Err(e)) => return Err(e.to_string()),
                None => break,
            }
        }
        let phases = writer.join().map_err(|_| "the writer panicked".to_string())?.map_err(|e| e.to_string())?;
        Ok((during, phases))
    })?;

    let mut slowest = during.clone();
    slowest.sort_by_key(|s| std::cmp::Reverse(s.1));
    let slowest: Vec<_> =
        slowest.iter().take(5).map(|(at, took)| serde_json::json!({"at_ms": at, "took_ms": ms(*took)})).collect();
    let out = serde_json::json!({
        "records": index.num_records(),
        "written": records,
        "alone_ms": summary(in_ms(&alone)),
        "while_writing_ms": summary(during.iter().map(|(_, took)| took.as_secs_f64() * 1e3).collect()),
        "commit_upserts_ms": round(phases[2] - phases[1]),
        "commit_deletes_ms": round(phases[4] - phases[3]),
        "writer_phases_ms": {"upserted": phases[1], "committed": phases[2], "deleted": phases[3], "committed_again": phases[4]},
        "slowest_while_writing": slowest,
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

/// Upserts `records` new records and commits, then deletes them and commits; returns when
/// each step ended, in ms since `start` (the first: when the writer opened).
fn write_and_remove(index: &Index, queries: &[Query], records: usize, start: Instant) -> braid::Result<[f64; 5]> {
    let mut writer = index.writer()?;
    let opened = ms(start.elapsed());
    for (i, (text, vector)) in queries.iter().cycle().take(records).enumerate() {
        let moved: Vec<f32> =
            vector.iter().enumerate().map(|(d, x)| x + if d == i % vector.len() { 0.1 } else { 0.0 }).collect();
        let record = Record::new(format!("written-{i}")).title(text.clone()).body(text.clone()).acl(["group:g0"]);
        writer.upsert(&record.vector(moved))?;
    }
    let upserted = ms(start.elapsed());
    writer.commit()?;
    let committed = ms(start.elapsed());
    for i in 0..records {
        writer.delete(&format!("written-{i}"))?;
    }
    let deleted = ms(start.elapsed());
    writer.commit()?;
    Ok([opened, upserted, committed, deleted, ms(start.elapsed())])
}
