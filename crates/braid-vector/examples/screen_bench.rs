//! Times one vector partition's search with every record allowed (and a tenth of them), k =
//! 100, over the queries of a `queries.jsonl`: the scan alone, without the index around it.
//!
//! ```text
//! cargo run --release -p braid-vector --example screen_bench -- PARTITION_DIR QUERIES_JSONL
//! ```
//!
//! `BRAID_VECTOR_PATHS=unscreened` times the scan before the sign-bit screen.

use std::path::PathBuf;
use std::time::Instant;

use braid_core::{AccessPolicy, AllowedSet, OrdSet, Principal, Visibility};
use braid_vector::VectorStore;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: screen_bench PARTITION_DIR QUERIES_JSONL";
    let dir = PathBuf::from(args.next().ok_or(usage)?);
    let queries: Vec<Vec<f32>> = std::fs::read_to_string(PathBuf::from(args.next().ok_or(usage)?))?
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line)?;
            Ok(v["vector"]
                .as_array()
                .map_or_else(Vec::new, |a| a.iter().filter_map(|x| x.as_f64()).map(|x| x as f32).collect()))
        })
        .collect::<Result<_, serde_json::Error>>()?;
    let t = Instant::now();
    let store = VectorStore::open(&dir)?;
    let open_ms = t.elapsed().as_secs_f64() * 1e3;
    let mut ords: Vec<u64> = store.ords().collect();
    ords.sort_unstable();
    let everyone = Visibility::new(Principal::public(), AccessPolicy::Public, None);
    for every in [1u64, 10] {
        let allowed =
            AllowedSet::new(everyone.clone(), ords.iter().copied().filter(|o| o % every == 0).collect::<OrdSet>());
        let mut micros = Vec::new();
        let mut path = "";
        for pass in 0..2 {
            for q in &queries {
                let t = Instant::now();
                let found = store.search(q, 100, &allowed)?;
                if pass == 1 {
                    micros.push(t.elapsed().as_secs_f64() * 1e6);
                    path = found.path.name();
                }
            }
        }
        micros.sort_by(f64::total_cmp);
        println!(
            "{} records, {} allowed, open {:.0} ms, path {path}: p50 {:.0} us, mean {:.0} us",
            ords.len(),
            allowed.len(),
            open_ms,
            micros[micros.len() / 2],
            micros.iter().sum::<f64>() / micros.len() as f64
        );
    }
    Ok(())
}
