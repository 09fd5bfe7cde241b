//! The vector store of a built index on its own: open time, memory, and recall@10 of the
//! filtered graph against the exact scan at several visibilities (`scripts/scale.sh` runs it).
//!
//! ```text
//! cargo run --release -p braid-vector --example ann_recall -- INDEX_DIR/vectors QUERIES_JSONL
//! ```
//!
//! Each query line carries a `"vector"`. The allowed sets hold 1 %, 10 %, 50 % and 100 % of the
//! ordinals, chosen by a hash of the ordinal (the scale corpus draws its ACLs at random, so a
//! hashed subset is a principal of that visibility as far as the vectors can tell). For each,
//! every query runs through [`VectorStore::search`] as configured (the graph from
//! `exact_threshold` allowed records up, the scan below), through the graph forced (threshold
//! 0), and through [`VectorStore::search_exact`]; recall@10 is against the exact scan. Prints
//! one JSON object.

use std::path::PathBuf;
use std::time::Instant;

use braid_core::{AccessPolicy, AllowedSet, OrdSet, Principal, Visibility};
use braid_vector::{SearchPath, VectorStore};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: ann_recall VECTORS_DIR QUERIES_JSONL";
    let dir = PathBuf::from(args.next().ok_or(usage)?);
    let queries_path = PathBuf::from(args.next().ok_or(usage)?);
    let queries: Vec<Vec<f32>> = std::fs::read_to_string(&queries_path)?
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line)?;
            Ok(v["vector"]
                .as_array()
                .map_or_else(Vec::new, |a| a.iter().filter_map(|x| x.as_f64()).map(|x| x as f32).collect()))
        })
        .collect::<Result<_, serde_json::Error>>()?;
    let queries: Vec<Vec<f32>> = queries.into_iter().filter(|q| !q.is_empty()).collect();

    let t = Instant::now();
    let mut store = VectorStore::open(&dir)?;
    let open_ms = t.elapsed().as_secs_f64() * 1e3;
    let threshold = store.params().exact_threshold;
    let mut ords: Vec<u64> = store.ords().collect();
    ords.sort_unstable();
    let mut rows = Vec::new();
    for pct in [1u64, 10, 50, 100] {
        let subset: OrdSet =
            ords.iter().copied().filter(|o| (o.wrapping_mul(2_654_435_761) >> 7) % 100 < pct).collect();
        let everyone = Visibility::new(Principal::public(), AccessPolicy::Public, None);
        let allowed = AllowedSet::new(everyone, subset);
        let mut row = serde_json::json!({ "allowed_pct": pct, "allowed": allowed.len() });
        let exact: Vec<_> = queries.iter().map(|q| store.search_exact(q, 10, &allowed)).collect::<Result<_, _>>()?;
        for (label, forced) in [("configured", false), ("graph", true)] {
            store.set_exact_threshold(if forced { 0 } else { threshold });
            let (mut hit, mut total, mut graph_runs) = (0usize, 0usize, 0usize);
            let mut micros = Vec::with_capacity(queries.len());
            for (q, truth) in queries.iter().zip(&exact) {
                let t = Instant::now();
                let found = store.search(q, 10, &allowed)?;
                micros.push(t.elapsed().as_secs_f64() * 1e6);
                graph_runs += usize::from(found.path == SearchPath::Hnsw);
                total += truth.len();
                hit += truth.iter().filter(|t| found.hits.iter().any(|h| h.0 == t.0)).count();
            }
            micros.sort_by(f64::total_cmp);
            row[label] = serde_json::json!({
                "recall_at_10": round(hit as f64 / total.max(1) as f64),
                "p50_ms": round(micros[micros.len() / 2] / 1e3),
                "on_graph": graph_runs,
            });
        }
        let mut micros: Vec<f64> = queries
            .iter()
            .map(|q| {
                let t = Instant::now();
                let _ = store.search_exact(q, 10, &allowed);
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        micros.sort_by(f64::total_cmp);
        row["exact_p50_ms"] = round(micros[micros.len() / 2] / 1e3).into();
        rows.push(row);
    }
    store.set_exact_threshold(threshold);
    let out = serde_json::json!({
        "vectors": store.len(),
        "dim": store.dim(),
        "quantization": store.quantization().name(),
        "params": { "m": store.params().m, "ef_construction": store.params().ef_construction,
                    "ef_search": store.params().ef_search, "exact_threshold": threshold },
        "open_ms": round(open_ms),
        "memory_bytes": store.memory_bytes(),
        "memory_bytes_per_vector": round(store.memory_bytes() as f64 / store.len().max(1) as f64),
        "queries": queries.len(),
        "recall": rows,
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}
