//! The peers comparison, Braid's side: export the vectors, time `search()`, score every engine.
//!
//! Every engine gets the same documents, the same document vectors and the same query vectors
//! (written once by [`export`]), so query embedding is excluded on both sides: Braid's
//! requests carry the exported query vector (`SearchRequest::vector`), the peers read the
//! same file. [`export`] also writes Braid's passages — every vector its index stores for a
//! record, with the text it embedded — so the peers can run over the very rows Braid's
//! semantic leg reads (engines `*-passages`) as well as over one vector a record. A run file is
//! a JSON array of [`Run`]s; `benches/peers/peers.py` writes the same shape.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{ensure, Context, Result};
use braid::ingest::Source;
use braid::models::OnnxEmbedder;
use braid::{Embedder, Index, Mode, Principal, Record, SearchRequest};
use braid_eval::{evaluate_outcomes, paired_comparison, Dataset, PairedComparison, QueryOutcome};
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
    /// Documents of a Markdown corpus only: the article each record (a section) belongs to,
    /// in the order of `ids` — what the qrels judge, so every engine's results are collapsed
    /// to articles, as `braid eval` collapses Braid's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    parents: Vec<String>,
    /// Queries only, when some query is asked as a principal (`metadata.principal`): each
    /// query's principal, its tokens joined by spaces (empty: anonymous), in the order of `ids`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    principals: Vec<String>,
    /// Queries only: the records each principal of `principals` may see, as the index decides
    /// it (`Searcher::record`), for every principal that may not see them all. The peers apply
    /// it as a filter.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    visible: BTreeMap<String, Vec<String>>,
}

/// The passages Braid's semantic leg reads (`passages.json`, beside `passages.f32`): one row
/// per stored vector, a record's rows adjacent, its first the whole text as one vector reads it
/// (the row `docs.f32` holds).
#[derive(Debug, Serialize, Deserialize)]
struct PassagesMeta {
    model_id: String,
    dim: usize,
    /// The index's windows (`WORDS:STRIDE:MAX`, [`braid::Passages`]), or `off`.
    passages: String,
    /// The record of each row.
    ids: Vec<String>,
    /// Each row's text, as [`Record::passages`] cut it: what the model embedded.
    texts: Vec<String>,
    /// Rows whose text was embedded again at export and compared with the stored vector, and
    /// the lowest cosine among them.
    checked: usize,
    min_cosine: f32,
}

/// Rows of `passages` re-embedded at export to check that their texts are the ones the index
/// embedded: the first this many records with more than one passage, and as many with one.
const CHECKED_RECORDS: usize = 16;

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
    /// Braid's default request (`braid`, `hybrid`, same k) against this row, query by query:
    /// `delta` is the default's nDCG@10 minus this row's, `p_value` the paired randomization
    /// test's. Absent in files scored before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs_default: Option<PairedComparison>,
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

/// Writes `docs.json`/`docs.f32` (every record's stored vector, in the order the dataset's
/// source reads them: its first passage's), `passages.json`/`passages.f32` (every vector the
/// index stores for each record — one per passage Braid embedded — with the passage's text,
/// records in the same order) and `queries.json`/`queries.f32` (the queries `split` judges,
/// embedded by the index's model).
///
/// The records are the ones `braid index` reads from the dataset ([`Source`]): a BEIR corpus's
/// documents, or a Markdown corpus's sections, each with the article it belongs to (`parents`
/// in `docs.json`) and, as the peers read no Markdown, its whole text as one vector reads it
/// (`texts`). Queries asked as a principal (`metadata.principal`, as `braid eval` asks them)
/// carry it, and the records each such principal may see are written beside them (`visible`).
///
/// A passage's text is [`Record::passages`] of the record as the index stores it, under the
/// index's own windows: Braid's chunker, not a copy of it. A record whose stored vectors do not
/// number its passages is an error, and the texts of [`CHECKED_RECORDS`] records' passages are
/// embedded again and must give the stored vectors (cosine ≥ 0.999).
pub fn export(dataset_dir: &Path, index_dir: &Path, split: &str, out: &Path) -> Result<()> {
    let dataset = Dataset::load(dataset_dir, split).with_context(|| format!("loading {}", dataset_dir.display()))?;
    let model = Arc::new(index_model(index_dir)?);
    let index = Index::builder()
        .embedder(model.clone())
        .open(index_dir)
        .with_context(|| format!("opening {}", index_dir.display()))?;
    let windows = index.config().passages;
    let chunked = dataset.articles_dir().is_some();
    let searcher = index.searcher();
    let (mut ids, mut vectors, mut parents, mut doc_texts) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut row_ids, mut row_texts, mut row_vectors) = (Vec::new(), Vec::new(), Vec::new());
    let source = Source::detect(dataset_dir).with_context(|| format!("reading {}", dataset_dir.display()))?;
    for record in source.records(&index.config().schema) {
        let record = record.with_context(|| format!("reading {}", dataset_dir.display()))?;
        // A principal holding the record's own ACL tokens sees it (its tenant's included).
        let operator = Principal::from_verified_tokens(&record.acl);
        let missing = || {
            anyhow::anyhow!(
                "record {:?} has no vector in {}: was the index built from this corpus?",
                record.id,
                index_dir.display()
            )
        };
        let passages = searcher.passage_vectors(&record.id, &operator)?.ok_or_else(missing)?;
        let stored = searcher.record(&record.id, &operator)?.ok_or_else(missing)?;
        let stored = Record::new(stored.id.as_str()).title(stored.title).body(stored.body).section(stored.section);
        let texts = stored.passages(windows.as_ref());
        ensure!(
            texts.len() == passages.len(),
            "record {:?} has {} stored vectors but {} passages under the index's windows ({}): \
             were its vectors supplied rather than embedded?",
            record.id,
            passages.len(),
            texts.len(),
            windows.map_or("off".to_string(), |w| w.to_string())
        );
        if chunked {
            parents.push(record.parent.clone().unwrap_or_else(|| record.id.clone()));
            doc_texts.push(stored.passage());
        }
        ids.push(record.id.clone());
        vectors.push(passages[0].clone());
        row_ids.extend(std::iter::repeat_n(record.id, texts.len()));
        row_texts.extend(texts);
        row_vectors.extend(passages);
    }
    let (checked, min_cosine) = check_passages(model.as_ref(), &row_ids, &row_texts, &row_vectors)?;
    fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let dim = model.dim();
    let model_id = model.model_id().to_string();
    write_f32(&out.join("docs.f32"), &vectors)?;
    let docs = VectorsMeta {
        model_id: model_id.clone(),
        dim,
        ids,
        texts: doc_texts,
        embed_ms_per_query: 0.0,
        parents,
        principals: Vec::new(),
        visible: BTreeMap::new(),
    };
    fs::write(out.join("docs.json"), serde_json::to_string(&docs)?)?;
    write_f32(&out.join("passages.f32"), &row_vectors)?;
    let passages = PassagesMeta {
        model_id: model_id.clone(),
        dim,
        passages: windows.map_or("off".to_string(), |w| w.to_string()),
        ids: row_ids,
        texts: row_texts,
        checked,
        min_cosine,
    };
    fs::write(out.join("passages.json"), serde_json::to_string(&passages)?)?;

    // Each query's principal, and what each principal that does not see everything may see.
    let principals: Vec<String> = dataset.queries.iter().map(principal_key).collect();
    let mut visible = BTreeMap::new();
    for key in principals.iter().collect::<std::collections::BTreeSet<_>>() {
        let principal = Principal::from_verified_tokens(key.split_whitespace());
        let mut seen = Vec::new();
        for id in &docs.ids {
            if searcher.record(id, &principal)?.is_some() {
                seen.push(id.clone());
            }
        }
        if seen.len() < docs.ids.len() {
            visible.insert(key.clone(), seen);
        }
    }
    let principals = if principals.iter().all(String::is_empty) { Vec::new() } else { principals };

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
        parents: Vec::new(),
        principals,
        visible,
    };
    fs::write(out.join("queries.json"), serde_json::to_string(&queries)?)?;
    eprintln!(
        "exported {} document vectors{}, {} passages ({} windows; {checked} re-embedded, lowest cosine \
         {min_cosine:.5}) and {} query vectors ({dim} dimensions; queries embedded at {embed_ms_per_query:.1} ms each){}",
        docs.ids.len(),
        if chunked {
            format!(" (sections of {} articles)", docs.parents.iter().collect::<std::collections::BTreeSet<_>>().len())
        } else {
            String::new()
        },
        passages.ids.len(),
        passages.passages,
        queries.ids.len(),
        if queries.visible.is_empty() {
            String::new()
        } else {
            format!("; {} principals see part of the records", queries.visible.len())
        }
    );
    Ok(())
}

/// A judged query's principal as `braid eval` asks it (`metadata.principal`), as one string:
/// its tokens, sorted, joined by spaces; empty for an anonymous query.
fn principal_key(query: &braid_eval::Query) -> String {
    let mut tokens: Vec<&str> = query.principal_tokens().map(|t| t.collect()).unwrap_or_default();
    tokens.sort_unstable();
    tokens.dedup();
    tokens.join(" ")
}

/// The principal a judged query is asked as (`braid eval`'s rule): its `metadata.principal`
/// tokens, or an anonymous caller.
fn query_principal(query: &braid_eval::Query) -> Principal {
    match query.principal_tokens() {
        Some(tokens) => Principal::from_verified_tokens(tokens),
        None => Principal::public(),
    }
}

/// Embeds the passages of the first [`CHECKED_RECORDS`] records with several passages and as
/// many with one again, and compares each with its stored vector: the texts exported must be
/// the ones the index embedded. Returns the rows checked and the lowest cosine.
fn check_passages(
    model: &dyn Embedder,
    ids: &[String],
    texts: &[String],
    vectors: &[Vec<f32>],
) -> Result<(usize, f32)> {
    // Each record's rows: ids are adjacent per record.
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        match runs.last_mut() {
            Some(run) if ids[run.start] == *id => run.end = i + 1,
            _ => runs.push(i..i + 1),
        }
    }
    let many = runs.iter().filter(|r| r.len() > 1).take(CHECKED_RECORDS);
    let one = runs.iter().filter(|r| r.len() == 1).take(CHECKED_RECORDS);
    let rows: Vec<usize> = many.chain(one).flat_map(|r| r.clone()).collect();
    let mut min_cosine = 1.0f32;
    for batch in rows.chunks(32) {
        let batch_texts: Vec<&str> = batch.iter().map(|&i| texts[i].as_str()).collect();
        for (&i, fresh) in batch.iter().zip(model.embed(&batch_texts)?) {
            let cosine = cosine(&vectors[i], &fresh);
            ensure!(
                cosine >= 0.999,
                "passage {i} of record {:?} embeds to a vector at cosine {cosine} from the stored one: the \
                 exported text is not what the index embedded",
                ids[i]
            );
            min_cosine = min_cosine.min(cosine);
        }
    }
    Ok((rows.len(), min_cosine))
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (norm(a) * norm(b)).max(f32::MIN_POSITIVE)
}

/// What [`run`] measures.
pub struct RunArgs<'a> {
    pub dataset: &'a Path,
    /// The qrels split whose queries run (`test`).
    pub split: &'a str,
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

/// Hits asked per query on a Markdown corpus, whose sections are collapsed to their articles
/// before the first k are kept: `braid eval`'s depth there, so the rankings are its rankings.
const CHUNKED_K: usize = 300;

/// Times `search()` per mode: one untimed warm-up pass, then timed passes (see
/// [`MIN_SECONDS`]), one query at a time, snippets and suggestions off (the peers return ids and scores only), once returning
/// ids only and, with [`RunArgs::hits`], once whole hits. Each query is asked as its principal
/// (`metadata.principal`, as `braid eval` asks it); on a Markdown corpus the hits (sections)
/// are collapsed to their articles (`parents` of the export's `docs.json`), [`CHUNKED_K`] asked.
pub fn run(args: &RunArgs<'_>, modes: &[String], out: &Path) -> Result<()> {
    rayon::ThreadPoolBuilder::new().num_threads(args.threads.max(1)).build_global()?;
    let dataset =
        Dataset::load(args.dataset, args.split).with_context(|| format!("loading {}", args.dataset.display()))?;
    let chunked = dataset.articles_dir().is_some();
    let article: HashMap<String, String> = if chunked {
        let docs = read_meta(&args.vectors.join("docs.json"))?;
        ensure!(docs.parents.len() == docs.ids.len(), "the export's docs.json names no articles: export it again");
        docs.ids.into_iter().zip(docs.parents).collect()
    } else {
        HashMap::new()
    };
    let asked = if chunked { CHUNKED_K.max(args.k) } else { args.k };
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
                let mut request = SearchRequest::new(q.text.as_str(), query_principal(q))
                    .mode(parsed)
                    .k(asked)
                    .suggest(false)
                    .snippet_chars(0)
                    .ids_only(ids_only);
                if needs_vector {
                    let vector = query_vectors.get(&q.id).with_context(|| {
                        format!("query {:?} has no exported vector (run `braid-report export`)", q.id)
                    })?;
                    request = request.vector(vector.clone());
                }
                let ids = index.search(&request)?.hits.into_iter().map(|h| h.id);
                if !chunked {
                    return Ok(ids.collect());
                }
                let mut seen = std::collections::HashSet::new();
                Ok(ids
                    .map(|id| article.get(&id).cloned().unwrap_or(id))
                    .filter(|a| seen.insert(a.clone()))
                    .take(args.k)
                    .collect())
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
///
/// Each row is also compared with Braid's default request (`braid`, `hybrid`, same k) query by
/// query ([`Row::vs_default`]), and the comparisons are printed below the table.
pub fn score(dataset_dir: &Path, split: &str, files: &[PathBuf], out: Option<&Path>, note: &str) -> Result<()> {
    let dataset = Dataset::load(dataset_dir, split).with_context(|| format!("loading {}", dataset_dir.display()))?;
    let mut groups: BTreeMap<(String, usize, String), Vec<Run>> = BTreeMap::new();
    for file in files {
        let text = fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let runs: Vec<Run> = serde_json::from_str(&text).with_context(|| format!("parsing {}", file.display()))?;
        for r in runs {
            groups.entry((r.mode.clone(), r.k, r.engine.clone())).or_default().push(r);
        }
    }
    let mut rows = Vec::new();
    let mut per_query = Vec::new();
    for ((mode, k, engine), runs) in &groups {
        let qps = median(runs.iter().map(|r| r.queries as f64 / r.seconds.max(1e-12)).collect());
        let outcomes: Vec<QueryOutcome> = runs[0]
            .rankings
            .iter()
            .map(|(q, ranking)| QueryOutcome { query_id: q.clone(), ranking: ranking.clone(), micros: 0 })
            .collect();
        let report = evaluate_outcomes(&dataset, mode, &outcomes);
        per_query.push(report.per_query.values().copied().collect::<Vec<f64>>());
        rows.push(Row {
            engine: engine.clone(),
            mode: mode.clone(),
            k: *k,
            qps,
            rounds: runs.len(),
            ndcg_at_10: report.ndcg_at_10,
            braid_speedup: None,
            vs_default: None,
        });
    }
    for i in 0..rows.len() {
        let default = rows.iter().position(|b| b.engine == "braid" && b.mode == "hybrid" && b.k == rows[i].k);
        if let Some(d) = default.filter(|&d| d != i) {
            rows[i].vs_default = Some(paired_comparison(&rows[i].engine, &per_query[d], &per_query[i]));
        }
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
    // A split other than `test` names the dataset with it (`cargo-book-test`): the two halves
    // of one set are two tables.
    let name = if split == "test" && dataset.articles_dir().is_none() {
        dataset.name.clone()
    } else {
        format!("{}-{split}", dataset.name)
    };
    let scored = Scored { dataset: name, note: note.to_string(), rows };
    println!("{}", table(std::slice::from_ref(&scored)));
    println!("\n{}", vs_default_table(std::slice::from_ref(&scored)));
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
                other => match other.strip_suffix(PASSAGES) {
                    Some(peer) => format!("{peer}, Braid's passages (a row each)"),
                    None => other.to_string(),
                },
            };
            out.push_str(&format!(
                "\n| {} | {} | {} | {} | {:.0} | {:.4} | {} |",
                s.dataset, r.mode, r.k, engine, r.qps, r.ndcg_at_10, ratio
            ));
        }
    }
    out
}

/// Braid's default request (`braid`, `hybrid`) against every other row of each dataset that
/// carries the comparison ([`Row::vs_default`]), best row first: its nDCG@10, the default's
/// minus it, and the paired randomization test's p (`\*`: p < 0.05). Whole hits are left out
/// (they rank as ids do), and rows of one mode with equal scores share a line.
pub fn vs_default_table(scored: &[Scored]) -> String {
    let mut out = String::from(
        "| dataset | Braid's default | against | mode | its nDCG@10 | default − it | p |\n|---|---:|---|---|---:|---:|---:|",
    );
    for s in scored {
        let Some(default) = s.rows.iter().find(|r| r.engine == "braid" && r.mode == "hybrid" && r.k == 10) else {
            continue;
        };
        // Whole hits rank as ids do: one row for Braid's ranking of each mode.
        let mut rows: Vec<(&Row, &PairedComparison)> = s
            .rows
            .iter()
            .filter(|r| r.k == 10 && r.engine != "braid-hits")
            .filter_map(|r| r.vs_default.as_ref().map(|v| (r, v)))
            .collect();
        rows.sort_by(|a, b| {
            b.0.ndcg_at_10
                .total_cmp(&a.0.ndcg_at_10)
                .then_with(|| a.0.mode.cmp(&b.0.mode))
                .then_with(|| a.0.engine.cmp(&b.0.engine))
        });
        // Rows of one mode with the same scores (the same ranking, as every dense search over
        // the same rows gives) share a line.
        let mut lines: Vec<(Vec<String>, &Row, &PairedComparison)> = Vec::new();
        for (r, v) in rows {
            let engine = match r.engine.as_str() {
                "braid" => "Braid's own leg".to_string(),
                "braid-one-vector" => "Braid, one vector a record".to_string(),
                other => match other.strip_suffix(PASSAGES) {
                    Some(peer) => format!("{peer}, Braid's passages"),
                    None => other.to_string(),
                },
            };
            match lines.last_mut() {
                Some((engines, last, lv))
                    if last.mode == r.mode
                        && last.ndcg_at_10 == r.ndcg_at_10
                        && lv.delta == v.delta
                        && lv.p_value == v.p_value =>
                {
                    engines.push(engine)
                }
                _ => lines.push((vec![engine], r, v)),
            }
        }
        for (engines, r, v) in lines {
            let p = if v.p_value < 0.001 { "< 0.001".to_string() } else { format!("{:.3}", v.p_value) };
            out.push_str(&format!(
                "\n| {} | {:.4} | {} | {} | {:.4} | {:+.4}{} | {p} |",
                s.dataset,
                default.ndcg_at_10,
                engines.join("; "),
                r.mode,
                r.ndcg_at_10,
                v.delta,
                if v.significant() { "\\*" } else { "" },
            ));
        }
    }
    out
}

/// The suffix of a peer's engine name when it ran over Braid's passages, one row each, its
/// results deduplicated to records (benches/peers/peers.py).
const PASSAGES: &str = "-passages";

/// The peers of the quality table, in its column order: engine name, heading.
const QUALITY_PEERS: [(&str, &str); 4] =
    [("bm25s", "bm25s"), ("numpy-exact", "numpy exact"), ("lancedb", "LanceDB"), ("milvus-lite", "Milvus Lite")];

/// nDCG@10 alone, one row per dataset and mode: Braid's (`hybrid` is its default request)
/// beside each peer's over one vector a record and over Braid's passages (`one / passages`).
/// Braid's cell is bold where it is at least every peer's in both variants.
pub fn quality_table(scored: &[Scored]) -> String {
    let mut out = String::from("| dataset | mode | **Braid** |");
    for (_, heading) in QUALITY_PEERS {
        out.push_str(&format!(" {heading} |"));
    }
    out.push_str("\n|---|---|---:|");
    out.push_str(&"---:|".repeat(QUALITY_PEERS.len()));
    for s in scored {
        for mode in ["lexical", "fuzzy", "semantic", "hybrid"] {
            let ndcg = |engine: &str| {
                s.rows.iter().find(|r| r.engine == engine && r.mode == mode && r.k == 10).map(|r| r.ndcg_at_10)
            };
            let Some(braid) = ndcg("braid") else { continue };
            let mut best_peer = f64::NEG_INFINITY;
            let mut cells = String::new();
            for (engine, _) in QUALITY_PEERS {
                let (one, passages) = (ndcg(engine), ndcg(&format!("{engine}{PASSAGES}")));
                best_peer = best_peer.max(one.unwrap_or(f64::NEG_INFINITY)).max(passages.unwrap_or(f64::NEG_INFINITY));
                let cell = match (one, passages) {
                    (None, None) => "–".to_string(),
                    (Some(one), None) => format!("{one:.4}"),
                    (one, Some(passages)) => {
                        format!("{} / {passages:.4}", one.map_or("–".to_string(), |o| format!("{o:.4}")))
                    }
                };
                cells.push_str(&format!(" {cell} |"));
            }
            let braid = if braid >= best_peer { format!("**{braid:.4}**") } else { format!("{braid:.4}") };
            out.push_str(&format!("\n| {} | {mode} | {braid} |{cells}", s.dataset));
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

    /// A row of one round at 1 q/s, k = 10.
    fn test_row(engine: &str, mode: &str, ndcg: f64, vs_default: Option<PairedComparison>) -> Row {
        Row {
            engine: engine.into(),
            mode: mode.into(),
            k: 10,
            qps: 1.0,
            rounds: 1,
            ndcg_at_10: ndcg,
            braid_speedup: None,
            vs_default,
        }
    }

    /// The quality table puts each peer's two variants in one cell, and marks Braid's
    /// nDCG@10 bold only where no peer, in either variant, is above it.
    #[test]
    fn quality_table_sets_the_variants_side_by_side() {
        let row = |engine: &str, mode: &str, ndcg: f64| test_row(engine, mode, ndcg, None);
        let scored = Scored {
            dataset: "tiny".into(),
            note: String::new(),
            rows: vec![
                row("braid", "semantic", 0.5),
                row("numpy-exact", "semantic", 0.4),
                row("numpy-exact-passages", "semantic", 0.5),
                row("braid", "hybrid", 0.6),
                row("lancedb", "hybrid", 0.55),
                row("lancedb-passages", "hybrid", 0.61),
                row("milvus-lite", "hybrid", 0.5),
            ],
        };
        let table = quality_table(&[scored]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[0], "| dataset | mode | **Braid** | bm25s | numpy exact | LanceDB | Milvus Lite |");
        assert_eq!(lines[2], "| tiny | semantic | **0.5000** | – | 0.4000 / 0.5000 | – | – |");
        assert_eq!(lines[3], "| tiny | hybrid | 0.6000 | – | – | 0.5500 / 0.6100 | 0.5000 |");
        assert_eq!(lines.len(), 4, "no Braid lexical row, no lexical line");
    }

    /// The default-against-every-row table lists the rows that carry the comparison, best
    /// first, with the default's margin and p, starred below 0.05.
    #[test]
    fn vs_default_table_lists_every_compared_row_best_first() {
        let row = |engine: &str, mode: &str, ndcg: f64, vs: Option<(f64, f64)>| {
            let vs_default = vs.map(|(delta, p_value)| PairedComparison {
                baseline: engine.into(),
                queries: 3,
                delta,
                ci95: braid_eval::Interval { low: delta, high: delta },
                p_value,
            });
            test_row(engine, mode, ndcg, vs_default)
        };
        let scored = Scored {
            dataset: "tiny-test".into(),
            note: String::new(),
            rows: vec![
                row("braid", "hybrid", 0.8, None),
                row("bm25s", "lexical", 0.5, Some((0.3, 0.01))),
                row("bm25s-batch", "lexical", 0.5, Some((0.3, 0.01))),
                row("braid-hits", "hybrid", 0.8, Some((0.0, 1.0))),
                row("lancedb-passages", "hybrid", 0.75, Some((0.05, 0.2))),
            ],
        };
        let table = vs_default_table(&[scored]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 4, "{table}");
        assert_eq!(lines[2], "| tiny-test | 0.8000 | lancedb, Braid's passages | hybrid | 0.7500 | +0.0500 | 0.200 |");
        assert_eq!(lines[3], "| tiny-test | 0.8000 | bm25s; bm25s-batch | lexical | 0.5000 | +0.3000\\* | 0.010 |");
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
