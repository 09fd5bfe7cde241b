//! What the write benches share: their queries, the percentiles they print, the bytes the
//! process wrote, and stand-in vectors for new records. Each example uses a part of it.
#![allow(dead_code)]

use std::path::Path;
use std::time::Duration;

/// A query's text and its supplied vector.
pub type Query = (String, Vec<f32>);

/// The queries of a `QUERIES_JSONL` file (`{"text", "vector"}` per line) that carry a vector.
pub fn read_queries(path: &Path) -> Result<Vec<Query>, Box<dyn std::error::Error>> {
    let mut queries = Vec::new();
    for line in std::fs::read_to_string(path)?.lines() {
        let v: serde_json::Value = serde_json::from_str(line)?;
        let vector: Vec<f32> = v["vector"]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x.as_f64()).map(|x| x as f32).collect())
            .unwrap_or_default();
        if !vector.is_empty() {
            queries.push((v["text"].as_str().unwrap_or_default().to_string(), vector));
        }
    }
    Ok(queries)
}

/// Count, p50, p99 and the largest of `values` (nearest rank), to two decimals.
pub fn summary(mut values: Vec<f64>) -> serde_json::Value {
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values.get(((values.len() as f64 * q).ceil() as usize).saturating_sub(1)).copied();
    let round = |v: Option<f64>| v.map(round);
    serde_json::json!({
        "count": values.len(), "p50": round(at(0.5)), "p99": round(at(0.99)), "max": round(values.last().copied()),
    })
}

/// Each duration in milliseconds.
pub fn in_ms(took: &[Duration]) -> Vec<f64> {
    took.iter().map(|d| d.as_secs_f64() * 1e3).collect()
}

/// `d` in milliseconds, to two decimals.
pub fn ms(d: Duration) -> f64 {
    round(d.as_secs_f64() * 1e3)
}

/// `x` to two decimals.
pub fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Bytes this process has written to storage so far (0 where `/proc` has no such line).
pub fn write_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|io| io.lines().find_map(|l| l.strip_prefix("write_bytes:").map(|v| v.trim().parse().ok())))
        .flatten()
        .unwrap_or(0)
}

/// A unit vector of `dim` components, different for each `i` (where it points does not matter
/// to these benches: what a commit costs does not depend on it).
pub fn vector(i: usize, dim: usize) -> Vec<f32> {
    let v: Vec<f32> = (0..dim).map(|j| ((i * 7919 + j * 104_729) % 2003) as f32 - 1001.0).collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(f32::MIN_POSITIVE);
    v.into_iter().map(|x| x / norm).collect()
}

/// Logs to stderr what the `BRAID_TRACE` filter lets through (as the `braid` binary does),
/// e.g. `braid::commit=debug` for each commit's phases and the vector store's lock holds.
pub fn trace_from_env() {
    if let Ok(filter) = std::env::var("BRAID_TRACE") {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .init();
    }
}
