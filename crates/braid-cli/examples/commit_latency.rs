//! What a small commit costs on a large index: its latency and the bytes it writes.
//!
//! ```text
//! cargo run --release -p braid-cli --example commit_latency -- INDEX_DIR [COMMITS] [RECORDS] [PROMOTE_AT] [--writer-heap BYTES]
//! ```
//!
//! Opens an index of `scripts/scale.sh` (`INDEX_DIR`; the run changes it, so give it a copy),
//! with its supplied vectors where it has them (each new record then carries a vector of the
//! index's dimension), and makes `COMMITS` commits (default 30) of `RECORDS` new records each
//! (default 10) for each of two writers a service would have: one tenant's (`tenant:t3`, a
//! promoted tenant of the scale corpus at 1M records) and one without a tenant (`group:g0`,
//! records that live in the main partition). Each commit is timed from the first upsert to the
//! end of `commit()`, which includes making the commit searchable; its bytes are what the
//! process wrote meanwhile (`/proc/self/io`, `write_bytes`: background merges included). Prints
//! one JSON object with p50, p99 and max per writer. `PROMOTE_AT` is the writer's promotion
//! threshold (`IndexBuilder::promote_tenants_at`; by default 10,000): give the one an index
//! was built with (`scripts/scale.sh`'s `SCALE_PROMOTE_AT`), or the first commit promotes.
//! `commit_ms_by_tenth` is the p50 of each tenth of the commits in order: a commit that grows
//! costlier with the commits before it shows there. `--writer-heap BYTES` sets the writer's
//! [`braid::WriterOptions::heap_bytes`] (by default [`braid::WriterOptions::default`]'s). `BRAID_TRACE=braid::commit=debug` logs each
//! commit's phases to stderr.

mod support;

use std::path::PathBuf;
use std::time::Instant;

use braid::{Index, Record, WriterOptions};
use support::{summary, trace_from_env, vector, write_bytes};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: commit_latency INDEX_DIR [COMMITS] [RECORDS] [PROMOTE_AT] [--writer-heap BYTES]";
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut options = WriterOptions::default();
    if let Some(at) = args.iter().position(|a| a == "--writer-heap") {
        let heap = args.get(at + 1).ok_or(usage)?;
        options.heap_bytes = heap.parse()?;
        args.drain(at..at + 2);
    }
    let mut args = args.into_iter();
    let dir = PathBuf::from(args.next().ok_or(usage)?);
    let commits: usize = args.next().map_or(Ok(30), |n| n.parse())?;
    let records: usize = args.next().map_or(Ok(10), |n| n.parse())?;
    let promote_at: usize = args.next().map_or(Ok(braid::PROMOTE_AT), |n| n.parse())?;
    trace_from_env();
    let dim = Index::recorded_embedding(&dir)?.map(|e| e.dim);
    let builder = Index::builder().promote_tenants_at(promote_at);
    let index = if dim.is_some() { builder.stored_vectors().open(&dir)? } else { builder.open(&dir)? };
    let promoted = Index::check(&dir)?.lexical_partitions;
    let mut writer = index.writer_with(options)?;
    // New ids each run: a record written again unchanged is skipped, and its commit is empty.
    let run = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_nanos();
    let before = index.num_records();
    let mut out = serde_json::Map::new();
    for (name, acl) in [("tenant", "tenant:t3"), ("no_tenant", "group:g0")] {
        let (mut took, mut written) = (Vec::new(), Vec::new());
        for c in 0..commits {
            let before = write_bytes();
            let start = Instant::now();
            for r in 0..records {
                let id = format!("commit-latency-{run}-{name}-{c}-{r}");
                let text = format!("a small commit {c} of record {r}, written while the index serves");
                let mut record = Record::new(id).title("Commit latency").body(text).acl([acl]);
                if let Some(dim) = dim {
                    record = record.vector(vector(c * records + r, dim));
                }
                writer.upsert(&record)?;
            }
            writer.commit()?;
            took.push(start.elapsed().as_secs_f64() * 1e3);
            written.push(write_bytes().saturating_sub(before) as f64);
        }
        out.insert(
            name.to_string(),
            serde_json::json!({
                "acl": acl,
                "commit_ms_by_tenth": by_tenth(&took),
                "commit_ms": summary(took),
                "bytes_written": summary(written),
            }),
        );
    }
    let report = serde_json::json!({
        "records": before,
        "vector_dim": dim,
        "records_after": index.num_records(),
        "promoted_tenants": promoted,
        "commits": commits,
        "writer_heap_bytes": options.heap_bytes,
        "records_per_commit": records,
        "writers": out,
    });
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}

/// The p50 of each tenth of `took`, in the order the commits ran.
fn by_tenth(took: &[f64]) -> Vec<serde_json::Value> {
    let tenth = took.len().div_ceil(10).max(1);
    took.chunks(tenth).map(|part| summary(part.to_vec())["p50"].clone()).collect()
}
