//! The peers comparison, Braid's side: export the vectors, time `search()`, score every engine.
//!
//! Every engine gets the same documents, the same document vectors and the same query vectors
//! (written once by [`export`]), so query embedding is excluded on both sides: Braid's
//! requests carry the exported query vector (`SearchRequest::vector`), the peers read the
//! same file. A run file is a JSON array of [`Run`]s; `benches/peers/peers.py` writes the
//! same shape.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, ensure, Context, Result};
use braid::models::OnnxEmbedder;
use braid::{Embedder, Index, Mode, Principal, SearchRequest};
use braid_eval::{evaluate_outcomes, read_corpus, Dataset, QueryOutcome};
use serde::{Deserialize, Serialize};

/// The ids and model of an exported vector file (`docs.json` / `queries.json`).
#[derive(Debug, Serialize, Deserialize)]
struct VectorsMeta {
    model_id: String,
    dim: usize,
    ids: Vec<String>,
    /// Query texts, in the order of `ids` (queries only).
    #[serde(default)]
    texts: Vec<String>,
    /// Mean milliseconds to embed one query (batches of 32), for the record: excluded from
    /// every engine's q/s.
    #[serde(default)]
    embed_ms_per_query: f64,
}

/// One engine's rankings for one mode, and how long the queries took.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    /// The engine (`braid`, `bm25s`, `lancedb`, …).
    pub engine: String,
    /// `lexical`, `semantic` or `hybrid`.
    pub mode: String,
    /// Hits asked per query.
    pub k: usize,
    /// Searches timed (one at a time): the queries times the timed passes.
    pub queries: usize,
    /// Wall time of the timed passes, in seconds.
    pub seconds: f64,
    /// Query id → doc ids, best first.
    pub rankings: BTreeMap<String, Vec<String>>,
}

/// One scored row: an engine and mode beside Braid's same mode.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    /// The engine.
    pub engine: String,
    /// The mode.
    pub mode: String,
    /// Hits asked per query.
    pub k: usize,
    /// Queries per second, median over rounds.
    pub qps: f64,
    /// Rounds the median is over.
    pub rounds: usize,
    /// Mean nDCG@10 (trec_eval rules, `braid_eval`).
    #[serde(rename = "ndcg@10")]
    pub ndcg_at_10: f64,
    /// Braid's q/s divided by this engine's, for the same mode and k.
    pub braid_speedup: Option<f64>,
}

/// The scored comparison on one dataset.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Scored {
    /// The dataset's name.
    pub dataset: String,
    /// Where and how it was measured.
    pub note: String,
    /// Rows, grouped by mode, Braid first.
    pub rows: Vec<Row>,
}

/// The embedding model an index was built with (ids are "<model dir name>/<onnx file>").
pub(crate) fn index_model(index_dir: &Path) -> Result<OnnxEmbedder> {
    let info = Index::recorded_embedding(index_dir)?
        .context("the index holds no vectors: build it with `braid index --model default`")?;
    let (name, file) = info.model_id.split_once('/').unwrap_or((info.model_id.as_str(), "model.onnx"));
    Ok(OnnxEmbedder::builder().model_name(name).onnx_file(file).build()?)
}

fn write_f32(path: &Path, rows: &[Vec<f32>]) -> Result<()> {
    let mut bytes = Vec::with_capacity(rows.iter().map(|r| r.len() * 4).sum());
    for x in rows.iter().flatten() {
        bytes.extend_from_slice(&x.to_le_bytes());
    }
    fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

fn read_f32(path: &Path, dim: usize, count: usize) -> Result<Vec<Vec<f32>>> {
    let bytes = fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    ensure!(
        bytes.len() == count * dim * 4,
        "{} holds {} bytes, expected {count} × {dim} f32",
        path.display(),
        bytes.len()
    );
    Ok(bytes
        .chunks_exact(dim * 4)
        .map(|row| row.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
        .collect())
}

fn read_meta(path: &Path) -> Result<VectorsMeta> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// Writes `docs.json`/`docs.f32` (every corpus record's stored vector, corpus order) and
/// `queries.json`/`queries.f32` (the judged test queries, embedded by the index's model).
pub fn export(dataset_dir: &Path, index_dir: &Path, out: &Path) -> Result<()> {
    let dataset = Dataset::load(dataset_dir, "test").with_context(|| format!("loading {}", dataset_dir.display()))?;
    let model = Arc::new(index_model(index_dir)?);
    let index = Index::builder()
        .embedder(model.clone())
        .open(index_dir)
        .with_context(|| format!("opening {}", index_dir.display()))?;
    let operator = Principal::public();
    let (mut ids, mut vectors) = (Vec::new(), Vec::new());
    for doc in read_corpus(&dataset.corpus_path()) {
        let doc = doc?;
        match index.vector(&doc.id, &operator)? {
            Some(v) => {
                ids.push(doc.id);
                vectors.push(v);
            }
            None => bail!(
                "record {:?} has no vector in {}: was the index built from this corpus?",
                doc.id,
                index_dir.display()
            ),
        }
    }
    fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let dim = model.dim();
    let model_id = model.model_id().to_string();
    write_f32(&out.join("docs.f32"), &vectors)?;
    let docs = VectorsMeta { model_id: model_id.clone(), dim, ids, texts: Vec::new(), embed_ms_per_query: 0.0 };
    fs::write(out.join("docs.json"), serde_json::to_string(&docs)?)?;

    let texts: Vec<&str> = dataset.queries.iter().map(|q| q.text.as_str()).collect();
    let started = Instant::now();
    let mut query_vectors = Vec::with_capacity(texts.len());
    for batch in texts.chunks(32) {
        query_vectors.extend(model.embed(batch)?);
    }
    let embed_ms_per_query = started.elapsed().as_secs_f64() * 1000.0 / texts.len().max(1) as f64;
    write_f32(&out.join("queries.f32"), &query_vectors)?;
    let queries = VectorsMeta {
        model_id,
        dim,
        ids: dataset.queries.iter().map(|q| q.id.clone()).collect(),
        texts: texts.iter().map(|t| t.to_string()).collect(),
        embed_ms_per_query,
    };
    fs::write(out.join("queries.json"), serde_json::to_string(&queries)?)?;
    eprintln!(
        "exported {} document and {} query vectors ({dim} dimensions; queries embedded at {embed_ms_per_query:.1} ms each)",
        docs.ids.len(),
        queries.ids.len()
    );
    Ok(())
}

/// What [`run`] measures.
pub struct RunArgs<'a> {
    pub dataset: &'a Path,
    pub index: &'a Path,
    pub vectors: &'a Path,
    pub k: usize,
    pub threads: usize,
    /// The engine name of the ids-only runs (`braid` by default; another name for another
    /// index of the same dataset, such as one vector a record).
    pub engine: &'a str,
    /// Also time whole hits (engine `<engine>-hits`).
    pub hits: bool,
}

/// Timed passes go on until this many seconds have passed (at least one pass): a set of 64
/// queries at 10,000 q/s is otherwise timed over 6 ms, less than the machine's jitter.
const MIN_SECONDS: f64 = 1.0;

/// Times `search()` per mode: one untimed warm-up pass, then timed passes (see
/// [`MIN_SECONDS`]), one query at a time, snippets and suggestions off (the peers return ids and scores only), once returning
/// ids only and, with [`RunArgs::hits`], once whole hits.
pub fn run(args: &RunArgs<'_>, modes: &[String], out: &Path) -> Result<()> {
    rayon::ThreadPoolBuilder::new().num_threads(args.threads.max(1)).build_global()?;
    let dataset = Dataset::load(args.dataset, "test").with_context(|| format!("loading {}", args.dataset.display()))?;
    let modes: Vec<Mode> =
        modes.iter().map(|m| m.parse::<Mode>().map_err(anyhow::Error::from)).collect::<Result<_>>()?;
    // The index opens with its stored vectors and no model: the semantic leg reads the exported
    // query vector each request carries (a query without one is an error, never a zero vector).
    let mut builder = Index::builder();
    let mut query_vectors: HashMap<String, Vec<f32>> = HashMap::new();
    if modes.iter().any(|m| *m != Mode::Lexical && *m != Mode::Fuzzy) {
        let meta = read_meta(&args.vectors.join("queries.json"))?;
        let vectors = read_f32(&args.vectors.join("queries.f32"), meta.dim, meta.ids.len())?;
        query_vectors = meta.ids.into_iter().zip(vectors).collect();
        builder = builder.stored_vectors();
    }
    let index = builder.open(args.index).with_context(|| format!("opening {}", args.index.display()))?;
    let mut runs = Vec::new();
    for parsed in modes {
        // "braid" returns ids, as every peer here does (they select `id` only); "braid-hits"
        // returns whole hits (title, fields) read from the document store.
        let hits_engine = format!("{}-hits", args.engine);
        let passes = [(args.engine, true), (hits_engine.as_str(), false)];
        for &(engine, ids_only) in &passes[..if args.hits { 2 } else { 1 }] {
            let needs_vector = parsed != Mode::Lexical && parsed != Mode::Fuzzy;
            let search = |q: &braid_eval::Query| -> Result<Vec<String>> {
                let mut request = SearchRequest::new(q.text.as_str(), Principal::public())
                    .mode(parsed)
                    .k(args.k)
                    .suggest(false)
                    .snippet_chars(0)
                    .ids_only(ids_only);
                if needs_vector {
                    let vector = query_vectors.get(&q.id).with_context(|| {
                        format!("query {:?} has no exported vector (run `braid-report export`)", q.id)
                    })?;
                    request = request.vector(vector.clone());
                }
                Ok(index.search(&request)?.hits.into_iter().map(|h| h.id).collect())
            };
            for q in &dataset.queries {
                std::hint::black_box(search(q)?);
            }
            // Timed passes until MIN_SECONDS have passed, as benches/peers/peers.py times the
            // peers; the rankings are the first pass's.
            let mut rankings = BTreeMap::new();
            let mut passes = 0;
            let started = Instant::now();
            while passes == 0 || started.elapsed().as_secs_f64() < MIN_SECONDS {
                for q in &dataset.queries {
                    let ranking = search(q)?;
                    if passes == 0 {
                        rankings.insert(q.id.clone(), ranking);
                    }
                }
                passes += 1;
            }
            let seconds = started.elapsed().as_secs_f64();
            let queries = passes * dataset.queries.len();
            let mode = parsed.name();
            eprintln!("{engine} {mode} k={}: {:.0} q/s", args.k, queries as f64 / seconds);
            runs.push(Run { engine: engine.into(), mode: mode.into(), k: args.k, queries, seconds, rankings });
        }
    }
    fs::write(out, serde_json::to_string(&runs)?).with_context(|| format!("writing {}", out.display()))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Scores run files: median q/s per engine, mode and k over the rounds, nDCG@10 of the
/// rankings (identical across rounds for these deterministic engines; the first is scored).
pub fn score(dataset_dir: &Path, files: &[PathBuf], out: Option<&Path>, note: &str) -> Result<()> {
    let dataset = Dataset::load(dataset_dir, "test").with_context(|| format!("loading {}", dataset_dir.display()))?;
    let mut groups: BTreeMap<(String, usize, String), Vec<Run>> = BTreeMap::new();
    for file in files {
        let text = fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let runs: Vec<Run> = serde_json::from_str(&text).with_context(|| format!("parsing {}", file.display()))?;
        for r in runs {
            groups.entry((r.mode.clone(), r.k, r.engine.clone())).or_default().push(r);
        }
    }
    let mut rows = Vec::new();
    for ((mode, k, engine), runs) in &groups {
        let qps = median(runs.iter().map(|r| r.queries as f64 / r.seconds.max(1e-12)).collect());
        let outcomes: Vec<QueryOutcome> = runs[0]
            .rankings
            .iter()
            .map(|(q, ranking)| QueryOutcome { query_id: q.clone(), ranking: ranking.clone(), micros: 0 })
            .collect();
        let report = evaluate_outcomes(&dataset, mode, &outcomes);
        rows.push(Row {
            engine: engine.clone(),
            mode: mode.clone(),
            k: *k,
            qps,
            rounds: runs.len(),
            ndcg_at_10: report.ndcg_at_10,
            braid_speedup: None,
        });
    }
    for i in 0..rows.len() {
        let braid =
            rows.iter().find(|b| b.engine == "braid" && b.mode == rows[i].mode && b.k == rows[i].k).map(|b| b.qps);
        rows[i].braid_speedup = braid.map(|b| b / rows[i].qps.max(1e-12));
    }
    let braid_first =
        |engine: &str| ["braid", "braid-hits", "braid-one-vector"].iter().position(|e| *e == engine).unwrap_or(3);
    rows.sort_by(|a, b| {
        (a.k, mode_rank(&a.mode), braid_first(&a.engine), &a.engine).cmp(&(
            b.k,
            mode_rank(&b.mode),
            braid_first(&b.engine),
            &b.engine,
        ))
    });
    let scored = Scored { dataset: dataset.name.clone(), note: note.to_string(), rows };
    println!("{}", table(std::slice::from_ref(&scored)));
    if let Some(out) = out {
        fs::write(out, serde_json::to_string_pretty(&scored)?).with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(())
}

fn mode_rank(mode: &str) -> usize {
    ["lexical", "semantic", "hybrid"].iter().position(|m| *m == mode).unwrap_or(3)
}

/// The comparison as one Markdown table.
pub fn table(scored: &[Scored]) -> String {
    let mut out = String::from(
        "| dataset | mode | k | engine | q/s | nDCG@10 | Braid q/s ÷ engine q/s |\n|---|---|---:|---|---:|---:|---:|",
    );
    for s in scored {
        for r in &s.rows {
            // One vector a record reads numpy's rows: its ratio is to numpy's exact search.
            let numpy = || s.rows.iter().find(|n| n.engine == "numpy-exact" && n.mode == r.mode && n.k == r.k);
            let ratio = match (r.engine.as_str(), r.braid_speedup) {
                ("braid", _) => "1".to_string(),
                ("braid-one-vector", _) => match numpy() {
                    Some(n) => format!("**{:.2}× numpy**", r.qps / n.qps.max(1e-12)),
                    None => "–".to_string(),
                },
                ("braid-hits", Some(x)) => format!("{x:.2}×"),
                (_, Some(x)) => format!("**{x:.2}×**"),
                (_, None) => "–".to_string(),
            };
            let engine = match r.engine.as_str() {
                "braid" => "**Braid** (ids, like the peers)".to_string(),
                "braid-hits" => "Braid (whole hits: title, fields)".to_string(),
                "braid-one-vector" => "Braid, one vector a record (numpy's rows)".to_string(),
                other => other.to_string(),
            };
            out.push_str(&format!(
                "\n| {} | {} | {} | {} | {:.0} | {:.4} | {} |",
                s.dataset, r.mode, r.k, engine, r.qps, r.ndcg_at_10, ratio
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(Vec::new()), 0.0);
    }

    #[test]
    fn vectors_round_trip_and_wrong_sizes_are_errors() {
        let dir = std::env::temp_dir().join(format!("braid-report-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("v.f32");
        let rows = vec![vec![1.0, -2.5, 3.25], vec![0.0, f32::MIN_POSITIVE, 7.0]];
        write_f32(&path, &rows).unwrap();
        assert_eq!(read_f32(&path, 3, 2).unwrap(), rows);
        assert!(read_f32(&path, 3, 3).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }
}
