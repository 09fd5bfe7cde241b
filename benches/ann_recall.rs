//! HNSW recall against exact search on real embeddings, unfiltered and filtered.
//!
//! ```text
//! braid index ../shared/datasets/scifact --index /tmp/scifact-minilm --model default
//! cargo run --release --example ann_recall -- /tmp/scifact-minilm ../shared/datasets/scifact
//! ```
//!
//! Embeds the dataset's judged queries, then for allowed sets of 100 %, 50 %, 10 % and 1 % of
//! the records (seeded random subsets) compares the HNSW graph (forced, whatever the allowed
//! set's size) with the exact scan: recall@10 and time per query for each path, and which
//! path the default parameters pick.

use std::path::PathBuf;
use std::time::Instant;

use braid::models::OnnxEmbedder;
use braid::{AccessPolicy, Embedder, Principal, Visibility};
use braid_core::{AllowedSet, OrdSet};
use braid_vector::VectorStore;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(index), Some(dataset)) = (args.first(), args.get(1)) else {
        eprintln!("usage: ann_recall <INDEX DIR with vectors> <BEIR DATASET DIR>");
        std::process::exit(2);
    };
    let mut store = VectorStore::open(&PathBuf::from(index).join("vectors"))?;
    let defaults = store.params().clone();
    let dataset = braid_eval::Dataset::load(&PathBuf::from(dataset), "test")?;
    let model = OnnxEmbedder::builder().build()?;
    let texts: Vec<&str> = dataset.queries.iter().map(|q| q.text.as_str()).collect();
    let queries = model.embed(&texts)?;
    let ords: Vec<u64> = store.ords().collect();
    println!(
        "{} vectors, {} queries, m {} ef_construction {} ef_search {} exact_threshold {}",
        ords.len(),
        queries.len(),
        defaults.m,
        defaults.ef_construction,
        defaults.ef_search,
        defaults.exact_threshold
    );
    println!("| allowed | default path | HNSW recall@10 | HNSW ms/query | exact ms/query |");
    println!("|---:|---|---:|---:|---:|");
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    for percent in [100u64, 50, 10, 1] {
        let allowed_ords: OrdSet = ords
            .iter()
            .copied()
            .filter(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed % 100 < percent
            })
            .collect();
        let allowed = AllowedSet::new(Visibility::new(Principal::public(), AccessPolicy::Public, None), allowed_ords);
        store.set_exact_threshold(defaults.exact_threshold);
        let default_path = store.search(&queries[0], 10, &allowed)?.path.name();
        store.set_exact_threshold(0);
        let (mut hnsw_time, mut exact_time, mut found, mut wanted) = (0.0, 0.0, 0usize, 0usize);
        for q in &queries {
            let t = Instant::now();
            let exact = store.search_exact(q, 10, &allowed)?;
            exact_time += t.elapsed().as_secs_f64();
            let t = Instant::now();
            let ann = store.search(q, 10, &allowed)?;
            hnsw_time += t.elapsed().as_secs_f64();
            wanted += exact.len();
            found += exact.iter().filter(|(o, _)| ann.hits.iter().any(|(a, _)| a == o)).count();
        }
        let n = queries.len() as f64;
        println!(
            "| {percent} % ({}) | {default_path} | {:.4} | {:.2} | {:.2} |",
            allowed.len(),
            found as f64 / wanted.max(1) as f64,
            1000.0 * hnsw_time / n,
            1000.0 * exact_time / n
        );
    }
    Ok(())
}
