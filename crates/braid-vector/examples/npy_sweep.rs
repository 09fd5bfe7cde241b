//! Builds a store from the first N rows of a `.npy` file (2-D little-endian float32, 384
//! columns: the scale corpus's sidecar) and measures the forced graph's recall@10 against the
//! exact scan at 100 %, 50 % and 10 % of records allowed and `ef_search` 200, 400 and 800,
//! with the build time and bytes a vector: the harness behind the graph defaults in
//! [`braid_vector::HnswParams`]. With `scan` it builds no graph and times the exact scan alone
//! at 1 %, 10 %, 50 % and 100 % allowed.
//!
//! ```text
//! cargo run --release -p braid-vector --example npy_sweep -- VECTORS_NPY QUERIES_JSONL N [int8] [scan]
//! ```
//! `BRAID_M` and `BRAID_EF_CONSTRUCTION` override the graph's shape. "Within 0.01" counts a
//! hit as found when it scores within 0.01 of the exact tenth (near ties).

use std::time::Instant;

use braid_core::{AccessPolicy, AllowedSet, OrdSet, Ordinal, Principal, Visibility};
use braid_vector::{HnswParams, Quantization, VectorStore};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(npy), Some(queries_path)) = (args.first(), args.get(1)) else {
        return Err("usage: npy_sweep VECTORS_NPY QUERIES_JSONL N [int8] [scan]".into());
    };
    let n: usize = args.get(2).map_or(Ok(100_000), |a| a.parse())?;
    let quantization = if args.iter().any(|a| a == "int8") { Quantization::Int8 } else { Quantization::F32 };
    let bytes = std::fs::read(npy)?;
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(format!("{npy} is not a .npy file").into());
    }
    let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    let dim = 384;
    let floats: Vec<f32> =
        bytes[10 + header_len..].chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    let n = n.min(floats.len() / dim);
    let data: Vec<(Ordinal, Vec<f32>)> =
        (0..n).map(|i| (i as Ordinal, floats[i * dim..(i + 1) * dim].to_vec())).collect();
    let queries: Vec<Vec<f32>> = std::fs::read_to_string(queries_path)?
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line)?;
            Ok(v["vector"]
                .as_array()
                .map_or_else(Vec::new, |a| a.iter().filter_map(|x| x.as_f64()).map(|x| x as f32).collect()))
        })
        .collect::<Result<_, serde_json::Error>>()?;
    let queries: Vec<Vec<f32>> = queries.into_iter().filter(|q: &Vec<f32>| q.len() == dim).collect();
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse().ok());
    let defaults = HnswParams::default();
    let params = HnswParams {
        quantization,
        m: env("BRAID_M").unwrap_or(defaults.m),
        ef_construction: env("BRAID_EF_CONSTRUCTION").unwrap_or(defaults.ef_construction),
        exact_threshold: 0,
        ..defaults
    };
    if args.iter().any(|a| a == "scan") {
        let mut store = VectorStore::new(dim, HnswParams { exact_threshold: usize::MAX, ..params });
        store.insert_batch(&data)?;
        for pct in [1u64, 10, 50, 100] {
            let subset: OrdSet =
                (0..n as Ordinal).filter(|o| (o.wrapping_mul(2_654_435_761) >> 7) % 100 < pct).collect();
            let allowed = AllowedSet::new(Visibility::new(Principal::public(), AccessPolicy::Public, None), subset);
            let mut micros: Vec<f64> = queries
                .iter()
                .map(|q| {
                    let t = Instant::now();
                    let _ = store.search_exact(q, 10, &allowed);
                    t.elapsed().as_secs_f64() * 1e6
                })
                .collect();
            micros.sort_by(f64::total_cmp);
            println!("scan {pct:>3}%: p50 {:.2} ms", micros[micros.len() / 2] / 1e3);
        }
        return Ok(());
    }
    let t = Instant::now();
    let mut store = VectorStore::new(dim, params.clone());
    store.insert_batch(&data)?;
    println!(
        "n {n} {} m {} ef_c {}: build {:.1?}, {:.0} bytes/vector",
        quantization.name(),
        params.m,
        params.ef_construction,
        t.elapsed(),
        store.memory_bytes() as f64 / n as f64
    );
    for pct in [100u64, 50, 10] {
        let subset: OrdSet = (0..n as Ordinal).filter(|o| (o.wrapping_mul(2_654_435_761) >> 7) % 100 < pct).collect();
        let allowed = AllowedSet::new(Visibility::new(Principal::public(), AccessPolicy::Public, None), subset);
        let exact: Vec<_> = queries.iter().map(|q| store.search_exact(q, 10, &allowed)).collect::<Result<_, _>>()?;
        for ef in [200usize, 400, 800] {
            store.set_ef_search(ef);
            let (mut hit, mut near, mut total) = (0usize, 0usize, 0usize);
            let t = Instant::now();
            for (q, truth) in queries.iter().zip(&exact) {
                let found = store.search(q, 10, &allowed)?;
                total += truth.len();
                hit += truth.iter().filter(|t| found.hits.iter().any(|h| h.0 == t.0)).count();
                // Hits scoring within 0.01 of the exact tenth count as found (near ties).
                let floor = truth.last().map_or(f32::NEG_INFINITY, |t| t.1 - 0.01);
                near += found.hits.iter().filter(|h| h.1 >= floor).count().min(truth.len());
            }
            println!(
                "  {pct:>3}% ef {ef:>4}: recall {:.4}, within 0.01 {:.4}, {:.2} ms/query",
                hit as f64 / total as f64,
                near as f64 / total as f64,
                t.elapsed().as_secs_f64() * 1e3 / queries.len() as f64
            );
        }
    }
    Ok(())
}
