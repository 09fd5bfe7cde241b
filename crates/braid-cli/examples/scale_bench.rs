//! Serving side of `scripts/scale.sh`: open time, resident memory and latency per mode and
//! visibility on an index built by `braid index` from `scripts/scale_corpus.py`'s corpus.
//!
//! ```text
//! cargo run --release -p braid-cli --example scale_bench -- INDEX_DIR QUERIES_JSONL [--no-feedback] [--modes M,..] [--principals P,..]
//! ```
//!
//! Opens the index (lexical alone, then whole: with its supplied vectors), then runs
//! every query of `QUERIES_JSONL` (`{"text", "vector"}` per line) at k = 10 in each mode for
//! five principals: every token (100 % of records), the ten tenants (50 %), `tenant:t3` plus
//! groups g0-g9 (10 %), `tenant:t3` alone (one tenant of ten, 5 %), and groups g0-g1 (1 %).
//! Semantic and hybrid requests carry the query's supplied vector, so no model runs: the times
//! exclude query embedding. An index without vectors (a corpus written
//! with DIM 0) runs the lexical and fuzzy modes only. Two more rows per principal measure
//! facets: lexical requests counting the `category` values and four yearly `updated` ranges
//! over every matched record, and the same requests plain, on the same queries. Prints one
//! JSON object. `--no-feedback` sends every request without lexical feedback (on by default
//! where the lexical leg is fused: hybrid), to time what it costs. `--modes semantic,hybrid`
//! runs only the named modes (the facet rows run with `lexical`), `--principals 100%,1%` only
//! the named principals (as the output labels them). Each row also has the
//! process's CPU time per measured request (`cpu_ms`: user and system time of every thread,
//! from `/proc/self/stat`, so rayon's helpers count), and the output the load average before
//! and after, and each stage's median time (`stage_p50_ms`, from the responses' `stats.micros`;
//! the legs run in parallel, so their times overlap).

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Instant;

use braid::{Facet, FacetRange, Index, Mode, Principal, SearchRequest};

/// 2022-01-01, the first `updated` date of the corpus, and a year in seconds.
const START: f64 = 1_640_995_200.0;
const YEAR: f64 = 365.0 * 86_400.0;

/// How a request is measured: its mode, and whether it counts facets.
#[derive(Clone, Copy)]
struct Run {
    mode: Mode,
    facets: bool,
}

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
    let has_vectors = Index::recorded_embedding(&dir)?.is_some();
    let t = Instant::now();
    let index = if has_vectors { Index::builder().stored_vectors().open(&dir)? } else { Index::open(&dir)? };
    // The whole open, as a service pays it: the vector file is read beside the lexical index.
    let open_ms = t.elapsed().as_secs_f64() * 1e3;
    let rss_open = status_kib("VmRSS");

    let everyone: Vec<String> =
        (0..10).map(|t| format!("tenant:t{t}")).chain((0..100).map(|g| format!("group:g{g}"))).collect();
    let tenth: Vec<String> =
        std::iter::once("tenant:t3".to_string()).chain((0..10).map(|g| format!("group:g{g}"))).collect();
    let half: Vec<String> = (0..10).map(|t| format!("tenant:t{t}")).collect();
    let hundredth: Vec<String> = vec!["group:g0".into(), "group:g1".into()];
    let one_tenant: Vec<String> = vec!["tenant:t3".into()];
    let mut principals =
        vec![("100%", everyone), ("50%", half), ("10%", tenth), ("one tenant", one_tenant), ("1%", hundredth)];
    if let Some(labels) = listed("--principals") {
        principals.retain(|(label, _)| labels.iter().any(|l| l == label));
    }
    let mut runs: Vec<Run> = [Mode::Lexical, Mode::Fuzzy].map(|mode| Run { mode, facets: false }).into();
    if has_vectors {
        runs.extend([Mode::Semantic, Mode::Hybrid].map(|mode| Run { mode, facets: false }));
    }
    runs.push(Run { mode: Mode::Lexical, facets: true });
    if let Some(modes) = listed("--modes") {
        runs.retain(|run| modes.iter().any(|m| m == run.mode.name()));
    }
    let load_before = loadavg();
    let mut rows = Vec::new();
    for (label, tokens) in &principals {
        let principal = Principal::from_verified_tokens(tokens);
        let allowed = index.search(&SearchRequest::new("", principal.clone()).k(0))?.stats.allowed;
        for run in &runs {
            let mut micros = Vec::with_capacity(queries.len());
            let mut stages = std::collections::BTreeMap::<&str, Vec<u64>>::new();
            let mut paths = std::collections::BTreeMap::<String, usize>::new();
            let mut matched = 0u64;
            let mut cpu_ticks = 0u64;
            // One warm-up pass (caches, allowed-set cache), then the measured one.
            for pass in 0..2 {
                let ticks = cpu_ticks_now();
                for (text, vector) in &queries {
                    let request = request(text, vector, &principal, *run);
                    let t = Instant::now();
                    let response = index.search(&request)?;
                    if pass == 1 {
                        micros.push(t.elapsed().as_secs_f64() * 1e6);
                        for (stage, us) in &response.stats.micros {
                            stages.entry(stage.name()).or_default().push(*us);
                        }
                        if let Some(p) = response.stats.semantic_path {
                            *paths.entry(p.to_string()).or_default() += 1;
                        }
                        matched += response.facets.map_or(0, |f| f.matched);
                    }
                }
                if pass == 1 {
                    cpu_ticks = cpu_ticks_now().saturating_sub(ticks);
                }
            }
            micros.sort_by(f64::total_cmp);
            let pct = |p: f64| micros[((micros.len() as f64 - 1.0) * p).round() as usize] / 1e3;
            let mut row = serde_json::json!({
                "principal": label, "allowed": allowed, "mode": run.mode.name(),
                "p50_ms": round(pct(0.5)), "p95_ms": round(pct(0.95)), "queries": micros.len(),
                "cpu_ms": round(cpu_ticks as f64 * 1e3 / TICKS_PER_SECOND / micros.len().max(1) as f64),
                "semantic_paths": paths,
                "stage_p50_ms": stages.into_iter().map(|(stage, mut us)| {
                    us.sort_unstable();
                    (stage.to_string(), serde_json::json!(round(us[us.len() / 2] as f64 / 1e3)))
                }).collect::<serde_json::Map<_, _>>(),
            });
            if run.facets {
                row["facets"] = "category values + 4 updated ranges".into();
                row["mean_matched"] = round(matched as f64 / micros.len() as f64).into();
            }
            rows.push(row);
        }
    }
    let out = serde_json::json!({
        "records": index.num_records(),
        "has_vectors": has_vectors,
        "open_lexical_ms": round(open_lexical_ms),
        "open_ms": round(open_ms),
        "rss_before_open_mib": rss_before / 1024,
        "rss_after_open_mib": rss_open / 1024,
        "peak_rss_serving_mib": status_kib("VmHWM") / 1024,
        // Resident now, split: the heap and other private memory, and pages of mapped files
        // (the lexical index; how many depends on the page cache too, and the kernel can drop
        // them under pressure).
        "rss_anon_serving_mib": status_kib("RssAnon") / 1024,
        "rss_file_serving_mib": status_kib("RssFile") / 1024,
        "rss_file_by_kind_mib": file_rss_by_kind(),
        "loadavg_before": load_before,
        "loadavg_after": loadavg(),
        "latency": rows,
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

/// The comma-separated list after `flag` on the command line, if it is there.
fn listed(flag: &str) -> Option<Vec<String>> {
    std::env::args()
        .skip_while(|a| a != flag)
        .nth(1)
        .map(|list| list.split(',').map(|m| m.trim().to_string()).collect())
}

/// Whether requests run with lexical feedback (the default; `--no-feedback` turns it off).
static FEEDBACK: OnceLock<bool> = OnceLock::new();

/// One measured request: k = 10, no suggestions; the query vector for the semantic modes;
/// facets when the run counts them.
fn request(text: &str, vector: &[f32], principal: &Principal, run: Run) -> SearchRequest {
    let feedback = *FEEDBACK.get_or_init(|| !std::env::args().any(|a| a == "--no-feedback"));
    let mut request =
        SearchRequest::new(text, principal.clone()).k(10).mode(run.mode).suggest(false).feedback(feedback);
    if matches!(run.mode, Mode::Semantic | Mode::Hybrid) && !vector.is_empty() {
        request = request.vector(vector.to_vec());
    }
    if run.facets {
        let years =
            (0..4).map(|y| FacetRange::new(Some(START + f64::from(y) * YEAR), Some(START + f64::from(y + 1) * YEAR)));
        request = request.facet(Facet::values("category")).facet(Facet::ranges("updated", years));
    }
    request
}

/// `USER_HZ`, the unit of `/proc/self/stat`'s CPU times (100 on every Linux this runs on).
const TICKS_PER_SECOND: f64 = 100.0;

/// The process's user plus system time so far, every thread, in ticks of [`TICKS_PER_SECOND`]
/// (0 where there is no `/proc`).
fn cpu_ticks_now() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // After the command name in parentheses: state is field 3, utime 14 and stime 15.
    let fields: Vec<&str> = stat.rsplit_once(')').map_or(vec![], |(_, rest)| rest.split_whitespace().collect());
    let field = |i: usize| fields.get(i - 3).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    field(14) + field(15)
}

/// The first three fields of `/proc/loadavg` ("" where there is none).
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
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

/// Resident MiB of this process's file mappings, summed by the file's kind: its extension
/// (tantivy's `idx`, `pos`, `term`, `store`, `fast`, ...) or its name where it has none.
fn file_rss_by_kind() -> serde_json::Value {
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else { return serde_json::Value::Null };
    let mut kib = std::collections::BTreeMap::<String, u64>::new();
    let mut kind: Option<String> = None;
    for line in smaps.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.first().is_some_and(|f| f.contains('-') && !f.ends_with(':')) {
            kind = fields.get(5).filter(|p| p.starts_with('/')).map(|path| {
                let name = path.rsplit('/').next().unwrap_or(path);
                name.rsplit_once('.').map_or(name, |(_, ext)| ext).to_string()
            });
        } else if let (Some(k), ["Rss:", value, ..]) = (&kind, fields.as_slice()) {
            *kib.entry(k.clone()).or_default() += value.parse::<u64>().unwrap_or(0);
        }
    }
    kib.into_iter().filter(|(_, v)| *v >= 1024).map(|(k, v)| (k, serde_json::json!(v / 1024))).collect()
}
