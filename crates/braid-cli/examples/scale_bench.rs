//! Serving side of `scripts/scale.sh`: open time, resident memory and latency per mode and
//! visibility on an index built by `braid index` from `scripts/scale_corpus.py`'s corpus.
//!
//! ```text
//! cargo run --release -p braid-cli --example scale_bench -- INDEX_DIR QUERIES_JSONL
//! ```
//!
//! Opens the index (lexical alone, then with its supplied vectors), then runs
//! every query of `QUERIES_JSONL` (`{"text", "vector"}` per line) at k = 10 in each mode for
//! three principals: every token (100 % of records), `tenant:t3` plus groups g0-g9 (10 %), and
//! groups g0-g1 (1 %). Semantic and hybrid requests carry the query's supplied vector, so no
//! model runs: the times exclude query embedding. Prints one JSON object.

use std::path::PathBuf;
use std::time::Instant;

use braid::{Index, Mode, Principal, SearchRequest};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().ok_or("usage: scale_bench INDEX_DIR QUERIES_JSONL")?);
    let queries_path = PathBuf::from(args.next().ok_or("usage: scale_bench INDEX_DIR QUERIES_JSONL")?);
    let queries: Vec<(String, Vec<f32>)> = std::fs::read_to_string(&queries_path)?
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line)?;
            let text = v["text"].as_str().unwrap_or_default().to_string();
            let vector =
                v["vector"].as_array().map(|a| a.iter().filter_map(|x| x.as_f64()).map(|x| x as f32).collect());
            Ok((text, vector.unwrap_or_default()))
        })
        .collect::<Result<_, serde_json::Error>>()?;

    let rss_before = status_kib("VmRSS");
    let t = Instant::now();
    drop(Index::open(&dir)?);
    let open_lexical_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let index = Index::builder().stored_vectors().open(&dir)?;
    let open_vectors_ms = (t.elapsed().as_secs_f64() * 1e3 - open_lexical_ms).max(0.0);
    let rss_open = status_kib("VmRSS");

    let everyone: Vec<String> =
        (0..10).map(|t| format!("tenant:t{t}")).chain((0..100).map(|g| format!("group:g{g}"))).collect();
    let tenth: Vec<String> =
        std::iter::once("tenant:t3".to_string()).chain((0..10).map(|g| format!("group:g{g}"))).collect();
    let hundredth: Vec<String> = vec!["group:g0".into(), "group:g1".into()];
    let principals = [("100%", everyone), ("10%", tenth), ("1%", hundredth)];
    let modes = [Mode::Lexical, Mode::Fuzzy, Mode::Semantic, Mode::Hybrid];
    let mut rows = Vec::new();
    for (label, tokens) in &principals {
        let principal = Principal::from_verified_tokens(tokens);
        let allowed = index.search(&SearchRequest::new("", principal.clone()).k(0))?.stats.allowed;
        for mode in modes {
            let mut micros = Vec::with_capacity(queries.len());
            let mut paths = std::collections::BTreeMap::<String, usize>::new();
            // One warm-up pass (caches, allowed-set cache), then the measured one.
            for pass in 0..2 {
                for (text, vector) in &queries {
                    let mut request =
                        SearchRequest::new(text.as_str(), principal.clone()).k(10).mode(mode).suggest(false);
                    if matches!(mode, Mode::Semantic | Mode::Hybrid) && !vector.is_empty() {
                        request = request.vector(vector.clone());
                    }
                    let t = Instant::now();
                    let response = index.search(&request)?;
                    if pass == 1 {
                        micros.push(t.elapsed().as_secs_f64() * 1e6);
                        if let Some(p) = response.stats.semantic_path {
                            *paths.entry(p.to_string()).or_default() += 1;
                        }
                    }
                }
            }
            micros.sort_by(f64::total_cmp);
            let pct = |p: f64| micros[((micros.len() as f64 - 1.0) * p).round() as usize] / 1e3;
            rows.push(serde_json::json!({
                "principal": label, "allowed": allowed, "mode": mode.name(),
                "p50_ms": round(pct(0.5)), "p95_ms": round(pct(0.95)), "queries": micros.len(),
                "semantic_paths": paths,
            }));
        }
    }
    let out = serde_json::json!({
        "records": index.num_records(),
        "open_lexical_ms": round(open_lexical_ms),
        "open_vectors_ms": round(open_vectors_ms),
        "rss_before_open_mib": rss_before / 1024,
        "rss_after_open_mib": rss_open / 1024,
        "peak_rss_serving_mib": status_kib("VmHWM") / 1024,
        "latency": rows,
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// A `/proc/self/status` field in KiB (0 where there is none).
fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}
