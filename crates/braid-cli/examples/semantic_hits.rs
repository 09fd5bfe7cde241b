//! The semantic leg's hits, for measuring an approximate vector path against the exact one:
//! for `scale_bench`'s five principals, every query of `QUERIES_JSONL` asked in semantic mode
//! with its supplied vector at k = 100 (the depth a hybrid request's semantic leg searches
//! at), and the ids of the hits, best first, printed as one JSON object.
//!
//! ```text
//! cargo run --release -p braid-cli --example semantic_hits -- INDEX_DIR QUERIES_JSONL > hits.json
//! BRAID_VECTOR_PATHS=exact cargo run --release -p braid-cli --example semantic_hits -- ... > exact.json
//! python3 scripts/semantic_recall.py exact.json hits.json
//! ```
//!
//! `BRAID_VECTOR_PATHS` (read by `braid-vector`) picks the paths: `exact` scans everything
//! exactly (the ground truth), `unscreened` the paths before the sign-bit screen.

use std::path::PathBuf;

use braid::{Index, Mode, Principal, SearchRequest};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: semantic_hits INDEX_DIR QUERIES_JSONL";
    let dir = PathBuf::from(args.next().ok_or(usage)?);
    let queries_path = PathBuf::from(args.next().ok_or(usage)?);
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
    let index = Index::builder().stored_vectors().open(&dir)?;
    let everyone: Vec<String> =
        (0..10).map(|t| format!("tenant:t{t}")).chain((0..100).map(|g| format!("group:g{g}"))).collect();
    let tenth: Vec<String> =
        std::iter::once("tenant:t3".to_string()).chain((0..10).map(|g| format!("group:g{g}"))).collect();
    let half: Vec<String> = (0..10).map(|t| format!("tenant:t{t}")).collect();
    let principals = [
        ("100%", everyone),
        ("50%", half),
        ("10%", tenth),
        ("one tenant", vec!["tenant:t3".to_string()]),
        ("1%", vec!["group:g0".to_string(), "group:g1".to_string()]),
    ];
    let mut out = serde_json::Map::new();
    for (label, tokens) in &principals {
        let principal = Principal::from_verified_tokens(tokens);
        let mut lists = Vec::with_capacity(queries.len());
        let mut paths = std::collections::BTreeMap::<String, usize>::new();
        for (text, vector) in &queries {
            let request =
                SearchRequest::new(text, principal.clone()).k(100).mode(Mode::Semantic).vector(vector.clone());
            let response = index.search(&request)?;
            if let Some(p) = response.stats.semantic_path {
                *paths.entry(p.to_string()).or_default() += 1;
            }
            lists.push(response.hits.iter().map(|h| h.id.clone()).collect::<Vec<_>>());
        }
        out.insert(label.to_string(), serde_json::json!({ "paths": paths, "hits": lists }));
    }
    println!("{}", serde_json::Value::Object(out));
    Ok(())
}
