//! The vector store of a built index on its own: open time, memory, and recall@10 of the
//! filtered graph against the exact scan at several visibilities (`scripts/scale.sh` runs it).
//!
//! ```text
//! cargo run --release -p braid-vector --example ann_recall -- INDEX_DIR/vectors QUERIES_JSONL [VECTORS_NPY]
//! ```
//!
//! Each query line carries a `"vector"`. The allowed sets hold 1 %, 10 %, 50 % and 100 % of the
//! ordinals, chosen by a hash of the ordinal (the scale corpus draws its ACLs at random, so a
//! hashed subset is a principal of that visibility as far as the vectors can tell). For each,
//! every query runs through [`PartitionedStore::search`] as configured (the graph from
//! `exact_threshold` allowed records up, the scan below), through the graph forced (threshold
//! 0), and through [`PartitionedStore::search_exact`]; recall@10 is against the exact scan. Given
//! the f32 vectors the store was built from (the `.npy` sidecar `braid index --vectors` read,
//! row `i` the record of ordinal `i`, which a fresh bulk index assigns and this checks on a
//! sample), it also reports recall@10 against the exact f32 top 10 by brute force: what an
//! int8 store costs against f32 vectors. `ANN_EF=400,800` adds forced-graph rows at those
//! search widths. Beside the strict recall@10 (the exact top 10's ids found), each row gives
//! recall@10 as ann-benchmarks counts it: a hit counts when its cosine distance is within
//! 0.001 of the exact 10th's, so a record tied with the 10th within that margin is not a miss.
//! Prints one JSON object.
//!
//! The store is opened as an index saves it, in tenant partitions ([`PartitionedStore`]), and
//! searched as a principal of every tenant: each partition answers for the allowed records it
//! holds, so "forced" builds a graph in each partition below the threshold first.

use std::path::PathBuf;
use std::time::Instant;

use braid_core::{AccessPolicy, AllowedSet, OrdSet, Principal, Visibility};
use braid_vector::{Partition, PartitionedStore, SearchPath};

/// ann-benchmarks' margin for its k-nn recall: a hit within this distance of the exact `k`-th
/// counts (`knn_threshold` there; here on cosine similarity, distance `1 − cos`).
const ANN_BENCHMARKS_EPSILON: f32 = 1e-3;

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

    let originals = args.next().map(|path| read_npy(&PathBuf::from(path))).transpose()?;
    let t = Instant::now();
    let mut store = PartitionedStore::open(&dir, None, &Default::default())?;
    let open_ms = t.elapsed().as_secs_f64() * 1e3;
    let threshold = store.params().exact_threshold;
    let default_ef = store.params().ef_search;
    // More search widths to try on the forced graph path, e.g. ANN_EF=400,800.
    let extra_ef: Vec<usize> =
        std::env::var("ANN_EF").unwrap_or_default().split(',').filter_map(|v| v.trim().parse().ok()).collect();
    let mut ords: Vec<u64> = store.ords().collect();
    ords.sort_unstable();
    if let Some((dim, rows)) = &originals {
        check_rows(&store, *dim, rows, &ords)?;
    }
    let mut rows = Vec::new();
    for pct in [1u64, 10, 50, 100] {
        let subset: OrdSet =
            ords.iter().copied().filter(|o| (o.wrapping_mul(2_654_435_761) >> 7) % 100 < pct).collect();
        let everyone = Visibility::new(every_tenant(&store), AccessPolicy::Public, None);
        let allowed = AllowedSet::new(everyone, subset);
        let mut row = serde_json::json!({ "allowed_pct": pct, "allowed": allowed.len() });
        let exact: Vec<_> = queries.iter().map(|q| store.search_exact(q, 10, &allowed)).collect::<Result<_, _>>()?;
        let f32_truth: Option<Vec<Vec<u64>>> = originals.as_ref().map(|(dim, rows)| {
            let members: Vec<u64> = ords.iter().copied().filter(|o| allowed.contains(*o)).collect();
            queries.iter().map(|q| brute_top10(q, *dim, rows, &members)).collect()
        });
        if let Some(truth) = &f32_truth {
            let (mut hit, mut total) = (0usize, 0usize);
            for (found, want) in exact.iter().zip(truth) {
                total += want.len();
                hit += want.iter().filter(|w| found.iter().any(|h| h.0 == **w)).count();
            }
            row["exact_scan_recall_vs_f32"] = round(hit as f64 / total.max(1) as f64).into();
        }
        let mut runs = vec![("configured".to_string(), false, default_ef), ("graph".to_string(), true, default_ef)];
        runs.extend(extra_ef.iter().map(|&ef| (format!("graph_ef{ef}"), true, ef)));
        for (label, forced, ef) in runs {
            let label = label.as_str();
            store.set_ef_search(ef);
            store.set_exact_threshold(if forced { 0 } else { threshold });
            let (mut hit, mut within, mut total, mut graph_runs) = (0usize, 0usize, 0usize, 0usize);
            let mut micros = Vec::with_capacity(queries.len());
            for (q, truth) in queries.iter().zip(&exact) {
                let t = Instant::now();
                let found = store.search(q, 10, &allowed)?;
                micros.push(t.elapsed().as_secs_f64() * 1e6);
                graph_runs += usize::from(found.path == SearchPath::Hnsw);
                total += truth.len();
                hit += truth.iter().filter(|t| found.hits.iter().any(|h| h.0 == t.0)).count();
                if let Some(tenth) = truth.last() {
                    within +=
                        found.hits.iter().take(truth.len()).filter(|h| h.1 >= tenth.1 - ANN_BENCHMARKS_EPSILON).count();
                }
            }
            micros.sort_by(f64::total_cmp);
            row[label] = serde_json::json!({
                "recall_at_10": round(hit as f64 / total.max(1) as f64),
                "recall_at_10_ann_benchmarks": round(within as f64 / total.max(1) as f64),
                "p50_ms": round(micros[micros.len() / 2] / 1e3),
                "on_graph": graph_runs,
            });
            if let Some(truth) = &f32_truth {
                let (mut hit, mut total) = (0usize, 0usize);
                for (q, want) in queries.iter().zip(truth) {
                    let found = store.search(q, 10, &allowed)?;
                    total += want.len();
                    hit += want.iter().filter(|w| found.hits.iter().any(|h| h.0 == **w)).count();
                }
                row[label]["recall_at_10_vs_f32"] = round(hit as f64 / total.max(1) as f64).into();
            }
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
    store.set_ef_search(default_ef);
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

/// A principal of every promoted tenant, and of one more tenant so that its searches visit the
/// pool (which any principal with a tenant visits; the allowed set says which records count).
fn every_tenant(store: &PartitionedStore) -> Principal {
    let tenants = store.partitions().filter_map(|(p, _)| match p {
        Partition::Tenant(token) => Some(token.clone()),
        _ => None,
    });
    Principal::from_verified_tokens(tenants.chain(["tenant:ann-recall".to_string()]))
}

/// A 2-D little-endian float32 `.npy` file: its column count and its rows, flat.
fn read_npy(path: &std::path::Path) -> Result<(usize, Vec<f32>), Box<dyn std::error::Error>> {
    let bytes = std::fs::read(path)?;
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(format!("{} is not a .npy file", path.display()).into());
    }
    let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    let header = std::str::from_utf8(&bytes[10..10 + header_len])?;
    if !header.contains("'<f4'") || header.contains("'fortran_order': True") {
        return Err(format!("{}: want little-endian float32 in C order, header {header}", path.display()).into());
    }
    let shape = header.split("'shape': (").nth(1).and_then(|s| s.split(')').next()).ok_or("no shape")?;
    let dim: usize = shape.split(',').nth(1).map(str::trim).ok_or("not 2-D")?.parse()?;
    let rows = bytes[10 + header_len..].chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    Ok((dim, rows))
}

/// Checks that row `ord` of the originals is the store's vector of `ord` (on a sample).
fn check_rows(
    store: &PartitionedStore,
    dim: usize,
    rows: &[f32],
    ords: &[u64],
) -> Result<(), Box<dyn std::error::Error>> {
    for &ord in ords.iter().step_by((ords.len() / 1000).max(1)) {
        let row = rows.get(ord as usize * dim..(ord as usize + 1) * dim).ok_or("fewer rows than ordinals")?;
        let stored = store.vector(ord).ok_or("a listed ordinal has no vector")?;
        let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        let cosine: f32 = row.iter().zip(&stored).map(|(a, b)| a * b).sum::<f32>() / norm;
        if cosine < 0.99 {
            return Err(format!("row {ord} is not the vector of ordinal {ord} (cosine {cosine})").into());
        }
    }
    Ok(())
}

/// The ordinals of the 10 rows among `members` with the highest cosine to `query`.
fn brute_top10(query: &[f32], dim: usize, rows: &[f32], members: &[u64]) -> Vec<u64> {
    let qn = query.iter().map(|x| x * x).sum::<f32>().sqrt();
    let mut scored: Vec<(f32, u64)> = members
        .iter()
        .map(|&o| {
            let row = &rows[o as usize * dim..(o as usize + 1) * dim];
            let (dot, nn) = row.iter().zip(query).fold((0.0f32, 0.0f32), |(d, n), (a, b)| (d + a * b, n + a * a));
            (dot / (nn.sqrt() * qn), o)
        })
        .collect();
    let k = scored.len().min(10);
    if k == 0 {
        return Vec::new();
    }
    scored.select_nth_unstable_by(k - 1, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored[..k].iter().map(|s| s.1).collect()
}

fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}
