//! Peak memory of a bulk ingest with embeddings, by writer budget.
//!
//! ```text
//! cargo run --release --example ingest_memory -- [--embed-batch N] [--heap-mb M] [--limit N] [DATASET]
//! ```
//!
//! Indexes a BEIR corpus (by default `datasets/scifact` of the shared folder: `$BRAID_SHARED` or `../shared`, the first `--limit`
//! documents, all by default) into a temporary on-disk index with all-MiniLM-L6-v2 attached,
//! through `Index::writer_with` and the given [`braid::WriterOptions`], and prints the process's
//! peak resident set size (`VmHWM`) before and after. The embedding batch bounds ONNX
//! Runtime's activations; the heap bounds tantivy's indexing buffers.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use braid::ingest::Source;
use braid::{Index, IndexConfig, WriterOptions};

#[path = "../tests/shared_dir.rs"]
mod shared_dir;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut options = WriterOptions::default();
    let mut limit = usize::MAX;
    let mut dataset = shared_dir::shared_dir().unwrap_or_else(|| PathBuf::from("../shared")).join("datasets/scifact");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--embed-batch" => options.embed_batch = args.next().ok_or("--embed-batch N")?.parse()?,
            "--heap-mb" => options.heap_bytes = args.next().ok_or("--heap-mb M")?.parse::<usize>()? << 20,
            "--limit" => limit = args.next().ok_or("--limit N")?.parse()?,
            other => dataset = PathBuf::from(other),
        }
    }
    let model = braid::models::OnnxEmbedder::builder().batch_size(options.embed_batch).build()?;
    println!("model loaded: peak RSS {} MiB", peak_rss_mib());
    let tmp = std::env::temp_dir().join(format!("braid-ingest-memory-{}", std::process::id()));
    let index = Index::builder().config(IndexConfig::default()).embedder(Arc::new(model)).create(&tmp)?;
    let started = Instant::now();
    let mut writer = index.writer_with(options)?;
    let source = Source::detect(&dataset)?;
    for record in source.records(&index.config().schema).take(limit) {
        writer.upsert(&record?)?;
    }
    writer.commit()?;
    println!(
        "{} records, embed batch {}, writer heap {} MiB: {:.0} s, peak RSS {} MiB",
        index.num_records(),
        options.embed_batch,
        options.heap_bytes >> 20,
        started.elapsed().as_secs_f64(),
        peak_rss_mib()
    );
    drop(writer);
    drop(index);
    std::fs::remove_dir_all(&tmp)?;
    Ok(())
}

/// `VmHWM` from `/proc/self/status` (Linux), in MiB; 0 elsewhere.
fn peak_rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb / 1024)
}
