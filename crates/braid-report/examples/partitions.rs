//! The building block of `docs/scale-out.md`: one search fanned out over N partitions in one
//! process, against one index, on a BEIR set.
//!
//! ```text
//! cargo run --release -p braid-report --example partitions -- [DATASET] [N...]
//! ```
//!
//! Builds one in-memory index of the corpus (by default `../shared/datasets/scifact`) and, for
//! each N (by default 4 and 16), N in-memory indexes that split it by a hash of the id. A
//! partitioned search runs the lexical and the fuzzy leg on every partition to depth 100,
//! merges each leg's lists by raw score (ties by id), cuts each to 100 and fuses them with the
//! same RRF as one index (`braid_fusion::rrf`, k = 60). Each partition keeps its own BM25
//! statistics and vocabulary, as an engine without a global-statistics phase would, so the
//! nDCG@10 difference is what such a deployment loses; the merge time is what fan-out costs
//! here beyond the partitions' own searches. No embeddings (the semantic leg's cosine scores
//! merge exactly by construction). Prints JSON lines.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::time::Instant;

use braid::ingest::Source;
use braid::{Index, IndexConfig, Leg, Mode, Principal, SearchRequest};
use braid_eval::{evaluate, Dataset};
use braid_fusion::{rrf, LegList};

const DEPTH: usize = 100;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dataset_dir = PathBuf::from(args.next().unwrap_or_else(|| "../shared/datasets/scifact".into()));
    let mut counts: Vec<usize> = args.map(|a| a.parse()).collect::<Result<_, _>>()?;
    if counts.is_empty() {
        counts = vec![4, 16];
    }
    let dataset = Dataset::load(&dataset_dir, "test")?;
    let source = Source::detect(&dataset_dir)?;
    let records: Vec<braid::Record> = source.records(&IndexConfig::default().schema).collect::<braid::Result<_>>()?;
    let name = dataset_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let public = Principal::public();

    let single = build(&records, |_| 0, 1)?.remove(0);
    let one = |mode: Mode, q: &str| -> braid::Result<Vec<String>> {
        let request = SearchRequest::new(q, public.clone()).mode(mode).k(DEPTH).suggest(false).snippet_chars(0);
        Ok(single.search(&request)?.hits.into_iter().map(|h| h.id).collect())
    };
    for mode in [Mode::Lexical, Mode::Hybrid] {
        let report = evaluate(&dataset, mode.name(), |q| one(mode, &q.text))?;
        println!(
            "{}",
            serde_json::json!({"dataset": name, "partitions": 1, "mode": mode.name(), "ndcg@10": report.ndcg_at_10, "p50_ms": report.p50_ms})
        );
    }

    for n in counts {
        let parts = build(&records, |id| (hash(id) % n as u64) as usize, n)?;
        let mut merge_micros = Vec::new();
        for mode in [Mode::Lexical, Mode::Hybrid] {
            let legs: &[Leg] = if mode == Mode::Lexical { &[Leg::Lexical] } else { &[Leg::Lexical, Leg::Fuzzy] };
            let report = evaluate(&dataset, mode.name(), |q| -> braid::Result<Vec<String>> {
                // Per leg: every partition's top DEPTH as (raw score, id).
                let mut per_leg: Vec<Vec<(f32, String)>> = vec![Vec::new(); legs.len()];
                for part in &parts {
                    for (i, leg) in legs.iter().enumerate() {
                        let leg_mode = if *leg == Leg::Lexical { Mode::Lexical } else { Mode::Fuzzy };
                        let request = SearchRequest::new(q.text.as_str(), public.clone())
                            .mode(leg_mode)
                            .k(DEPTH)
                            .suggest(false)
                            .ids_only(true);
                        for hit in part.search(&request)?.hits {
                            let raw = hit.explain.legs.first().map_or(0.0, |l| l.raw);
                            per_leg[i].push((raw, hit.id));
                        }
                    }
                }
                let t = Instant::now();
                let mut ids: HashMap<String, u64> = HashMap::new();
                let mut lists = Vec::new();
                for (i, mut hits) in per_leg.into_iter().enumerate() {
                    hits.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
                    hits.truncate(DEPTH);
                    let candidates = hits
                        .into_iter()
                        .map(|(raw, id)| {
                            let next = ids.len() as u64;
                            (*ids.entry(id).or_insert(next), raw)
                        })
                        .collect();
                    lists.push(LegList::new(legs[i], 1.0, candidates));
                }
                let by_ord: HashMap<u64, String> = ids.into_iter().map(|(id, o)| (o, id)).collect();
                let fused = rrf(&lists, 60.0);
                let ranking = fused.into_iter().filter_map(|f| by_ord.get(&f.ord).cloned()).collect();
                merge_micros.push(t.elapsed().as_micros() as u64);
                Ok(ranking)
            })?;
            merge_micros.sort_unstable();
            let merge_p50 = merge_micros.get(merge_micros.len() / 2).copied().unwrap_or(0);
            println!(
                "{}",
                serde_json::json!({"dataset": name, "partitions": n, "mode": mode.name(), "ndcg@10": report.ndcg_at_10,
                    "p50_ms": report.p50_ms, "merge_p50_us": merge_p50})
            );
            merge_micros.clear();
        }
    }
    Ok(())
}

/// `n` in-memory indexes, record `r` in index `part(r.id())`.
fn build(records: &[braid::Record], part: impl Fn(&str) -> usize, n: usize) -> braid::Result<Vec<Index>> {
    let indexes: Vec<Index> =
        (0..n).map(|_| Index::create_in_ram(IndexConfig::default())).collect::<braid::Result<_>>()?;
    let mut writers = indexes.iter().map(Index::writer).collect::<braid::Result<Vec<_>>>()?;
    for r in records {
        writers[part(r.id())].upsert(r)?;
    }
    for w in &mut writers {
        w.optimize()?;
    }
    Ok(indexes)
}

fn hash(id: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}
