//! Queries per second per mode on a BEIR corpus held in RAM, one query at a time (issue 20's
//! speed goals; the results are in research/ranking-log.md, "Speed").
//!
//! ```text
//! taskset -c 1 cargo run --release --example speed -- ../shared/datasets/scifact [--passes N] [--modes M,..]
//! ```
//!
//! Every record gets a deterministic pseudo-random 384-d vector ([`Record::vector`], seeded
//! by its id) and every test query one seeded by the query's id, so no model runs: the times
//! exclude embedding, as the issue's harness precomputes query vectors. For each mode
//! (lexical, fuzzy, semantic, hybrid) the example sends every judged test query as a user
//! would (the default [`SearchRequest`] with that mode, `k = 10`, and the query vector for
//! semantic and hybrid; `--modes` picks some): one warm-up pass, then `--passes` timed passes (5 by default). It
//! prints, per mode, the median over the passes of queries per second (wall clock, and per
//! second of CPU time the process got: on a shared machine the second is the steadier), the
//! median latency over every timed query, and the mean time of each stage
//! ([`braid::Stats::micros`]). The row
//! `store` times [`braid_vector::VectorStore::search_exact`] alone (k = 10, every record
//! allowed): the kernel the semantic mode runs, without the request around it.
//!
//! `--lean` sends the request the peers harness sends (`benches/peers`, `braid-report run`):
//! ids only, no suggestions, no snippets. `--no-feedback` turns the lexical leg's feedback off
//! (hybrid), to time what it costs.
//!
//! `--hits FILE` writes every mode's response to every query (ids, score bits, snippets,
//! explain records, suggestions) to `FILE`, to check that a speed-up changed no answer (`cmp` two runs' files).
//!
//! `--dump DIR` writes the normalised record vectors (`records.f32`, rows of 384 little-endian
//! floats in record order), query vectors (`queries.f32`) and the store's top 10 per query
//! (`braid_top10.txt`, record positions) for `research/scripts/speed_numpy.py`, which times numpy on
//! the same shapes and checks its top 10 against Braid's.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use braid::ingest::Source;
use braid::{EmbeddingInfo, Index, Mode, Principal, SearchRequest};
use braid_core::{AccessPolicy, AllowedSet, OrdSet, Visibility};
use braid_vector::{HnswParams, VectorStore};

const DIM: usize = 384;

fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// A unit vector of `DIM` components uniform in [-1, 1) before normalising, from SplitMix64
/// seeded by `seed`.
fn vector(seed: &str) -> Vec<f32> {
    let mut state = fnv(seed);
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let v: Vec<f64> = (0..DIM).map(|_| (next() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0).collect();
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    v.iter().map(|x| (x / norm) as f32).collect()
}

/// Seconds this process's threads have run on a CPU (`/proc/self/task/*/schedstat`; 0 where
/// there is no such file): on a shared machine, time the scheduler gave to others is not in it.
fn cpu_seconds() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return 0.0 };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .sum::<f64>()
        / 1e9
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn write_f32(path: &std::path::Path, rows: &[Vec<f32>]) -> std::io::Result<()> {
    let bytes: Vec<u8> = rows.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(path, bytes)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut dir = None;
    let mut passes = 5usize;
    let mut dump = None;
    let mut hits_file = None;
    let mut lean = false;
    let mut feedback = true;
    let mut modes = vec![Mode::Lexical, Mode::Fuzzy, Mode::Semantic, Mode::Hybrid];
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--passes" => passes = args.next().ok_or("--passes N")?.parse()?,
            "--dump" => dump = Some(PathBuf::from(args.next().ok_or("--dump DIR")?)),
            "--modes" => {
                let names = args.next().ok_or("--modes lexical,fuzzy,semantic,hybrid")?;
                modes = names.split(',').map(|m| m.parse::<Mode>()).collect::<Result<_, _>>()?;
            }
            "--hits" => hits_file = Some(PathBuf::from(args.next().ok_or("--hits FILE")?)),
            "--lean" => lean = true,
            "--no-feedback" => feedback = false,
            _ => dir = Some(PathBuf::from(arg)),
        }
    }
    let Some(dir) = dir else {
        eprintln!("usage: speed <BEIR DATASET DIR> [--passes N] [--modes M,..] [--dump DIR] [--hits FILE] [--lean] [--no-feedback]");
        std::process::exit(2);
    };
    let passes = passes.max(1);

    let info = EmbeddingInfo { model_id: "speed-seeded-random".into(), dim: DIM };
    let index = Index::builder().vectors(info).create_in_ram()?;
    let mut writer = index.writer()?;
    let mut record_vectors = Vec::new();
    for record in Source::detect(&dir)?.records(&index.config().schema) {
        let record = record?;
        let v = vector(record.id());
        writer.upsert(&record.vector(v.clone()))?;
        record_vectors.push(v);
    }
    writer.commit()?;
    drop(writer);
    let dataset = braid_eval::Dataset::load(&dir, "test")?;
    let queries: Vec<(String, Vec<f32>)> =
        dataset.queries.iter().map(|q| (q.text.clone(), vector(&format!("query:{}", q.id)))).collect();
    if let Some(out) = &dump {
        std::fs::create_dir_all(out)?;
        write_f32(&out.join("records.f32"), &record_vectors)?;
        let qv: Vec<Vec<f32>> = queries.iter().map(|q| q.1.clone()).collect();
        write_f32(&out.join("queries.f32"), &qv)?;
    }
    println!(
        "{}: {} records, {} queries, {DIM}-d vectors, {passes} timed passes, {} rayon thread(s)",
        dataset.name,
        record_vectors.len(),
        queries.len(),
        rayon::current_num_threads()
    );
    println!("{:<9} {:>9} {:>9} {:>9}  mean stage µs", "mode", "q/s", "cpu q/s", "p50 ms");

    // The kernel alone: the store the semantic leg searches, every record allowed.
    {
        let mut store = VectorStore::new(DIM, HnswParams::default());
        let items: Vec<(u64, Vec<f32>)> =
            record_vectors.iter().cloned().enumerate().map(|(i, v)| (i as u64, v)).collect();
        store.insert_batch(&items)?;
        let visibility = Visibility::new(Principal::public(), AccessPolicy::Public, None);
        let allowed = AllowedSet::new(visibility, (0..items.len() as u64).collect::<OrdSet>());
        let mut rates = Vec::new();
        let mut took = Vec::new();
        let mut top10 = Vec::new();
        let mut cpu_rates = Vec::new();
        for pass in 0..=passes {
            let started = Instant::now();
            let cpu = cpu_seconds();
            for (_, q) in &queries {
                let t = Instant::now();
                let hits = store.search_exact(q, 10, &allowed)?;
                if pass == 0 {
                    top10.push(hits.iter().map(|h| h.0.to_string()).collect::<Vec<_>>().join(" "));
                }
                std::hint::black_box(hits);
                if pass > 0 {
                    took.push(t.elapsed().as_secs_f64() * 1e3);
                }
            }
            if pass > 0 {
                rates.push(queries.len() as f64 / started.elapsed().as_secs_f64());
                cpu_rates.push(queries.len() as f64 / (cpu_seconds() - cpu));
            }
        }
        println!("{:<9} {:>9.0} {:>9.0} {:>9.3}", "store", median(rates), median(cpu_rates), median(took));
        if let Some(out) = &dump {
            std::fs::write(out.join("braid_top10.txt"), top10.join("\n") + "\n")?;
        }
    }

    let mut answers = String::new();
    for mode in modes {
        let requests: Vec<SearchRequest> = queries
            .iter()
            .map(|(text, v)| {
                let mut request =
                    SearchRequest::new(text.as_str(), Principal::public()).mode(mode).k(10).feedback(feedback);
                if lean {
                    request = request.ids_only(true).suggest(false).snippet_chars(0);
                }
                match mode {
                    Mode::Semantic | Mode::Hybrid => request.vector(v.clone()),
                    _ => request,
                }
            })
            .collect();
        let mut rates = Vec::new();
        let mut took = Vec::new();
        let mut stages: BTreeMap<&'static str, u64> = BTreeMap::new();
        let mut cpu_rates = Vec::new();
        for pass in 0..=passes {
            let started = Instant::now();
            let cpu = cpu_seconds();
            for request in &requests {
                let t = Instant::now();
                let response = index.search(request)?;
                if pass == 0 && hits_file.is_some() {
                    let hits: Vec<String> =
                        response.hits.iter().map(|h| format!("{}:{:08x}", h.id, h.score.to_bits())).collect();
                    let suggestions: Vec<&str> = response.suggestions.iter().map(|s| s.suggestion.as_str()).collect();
                    let snippets =
                        response.hits.iter().map(|h| format!("{:?} {:?}", h.snippet.marked("[", "]"), h.explain));
                    answers += &format!(
                        "{} {:?} | {} | {}\n",
                        mode.name(),
                        request.query,
                        hits.join(" "),
                        suggestions.join(" ")
                    );
                    answers += &format!("  snippets {}\n", snippets.collect::<Vec<_>>().join(" "));
                }
                if pass > 0 {
                    took.push(t.elapsed().as_secs_f64() * 1e3);
                    for (stage, micros) in &response.stats.micros {
                        *stages.entry(stage.name()).or_default() += micros;
                    }
                }
                std::hint::black_box(response);
            }
            if pass > 0 {
                rates.push(requests.len() as f64 / started.elapsed().as_secs_f64());
                cpu_rates.push(requests.len() as f64 / (cpu_seconds() - cpu));
            }
        }
        let n = (passes * requests.len()) as f64;
        let breakdown: Vec<String> = braid::Stage::ALL
            .iter()
            .filter_map(|s| stages.get(s.name()).map(|&m| format!("{} {:.0}", s.name(), m as f64 / n)))
            .collect();
        let (rate, cpu_rate, p50) = (median(rates), median(cpu_rates), median(took));
        println!("{:<9} {:>9.0} {:>9.0} {:>9.3}  {}", mode.name(), rate, cpu_rate, p50, breakdown.join(", "));
    }
    if let Some(file) = &hits_file {
        std::fs::write(file, answers)?;
    }
    Ok(())
}
