//! The subcommands.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use braid::ingest::Source;
use braid::{AccessPolicy, Fusion, Index, IndexConfig, LegWeights, Mode, Principal, SearchRequest};
use braid_eval::{evaluate, misspell_query, Dataset, Misspellings, Report};
use indicatif::{ProgressBar, ProgressStyle};

use crate::output;

/// Records between intermediate commits of a long ingest.
const COMMIT_EVERY: usize = 50_000;

fn progress(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    let style = ProgressStyle::with_template(&format!("{what} {{bar:40}} {{pos}}/{{len}} {{per_sec}} eta {{eta}}"))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// Loads every record of `source` into `index`, committing periodically.
fn load(index: &Index, source: &Source) -> Result<(usize, usize)> {
    let bar = progress(source.estimate(), "indexing");
    let mut writer = index.writer()?;
    let (mut added, mut rejected) = (0usize, 0usize);
    for record in source.records(&index.config().schema) {
        match record.and_then(|r| writer.upsert(&r)) {
            Ok(()) => added += 1,
            Err(e) => {
                rejected += 1;
                if rejected <= 5 {
                    bar.println(format!("skipped: {e}"));
                }
            }
        }
        bar.inc(1);
        if writer.pending() >= COMMIT_EVERY {
            writer.commit()?;
        }
    }
    // One segment: every later search walks one postings list per term.
    writer.optimize()?;
    bar.finish_and_clear();
    Ok((added, rejected))
}

/// Loads an embedding model: `spec` is a model directory, `default` for all-MiniLM-L6-v2
/// found by discovery, or `hf:<owner>/<name>` to download one from the Hugging Face hub into
/// the model cache; `None` means the model the index was built with, if any.
fn embedder(spec: Option<&str>, index: &Index) -> Result<Option<Arc<dyn braid::Embedder>>> {
    use braid::models::{OnnxEmbedder, DEFAULT_EMBEDDING_MODEL};
    let mut builder = OnnxEmbedder::builder();
    match (spec, index.embedding()) {
        (Some("default"), _) => builder.model_name(DEFAULT_EMBEDDING_MODEL),
        (Some(spec), _) if spec.starts_with("hf:") => builder.model_dir(braid::models::fetch_model(&spec[3..])?),
        (Some(dir), _) => builder.model_dir(dir),
        (None, Some(info)) => {
            // Model ids are "<model dir name>/<onnx file>".
            let (name, file) = info.model_id.split_once('/').unwrap_or((info.model_id.as_str(), "model.onnx"));
            builder.model_name(name).onnx_file(file)
        }
        (None, None) => return Ok(None),
    };
    Ok(Some(Arc::new(builder.build()?)))
}

/// Attaches the embedding model when one is asked for or recorded in the index. A recorded
/// model that cannot be loaded is a warning: lexical and fuzzy search still work.
pub(crate) fn attach(index: &Index, spec: Option<&str>) -> Result<()> {
    match embedder(spec, index) {
        Ok(Some(e)) => index.attach_embedder(e)?,
        Ok(None) => {}
        Err(e) if spec.is_none() => eprintln!("warning: semantic leg off: {e:#}"),
        Err(e) => return Err(e),
    }
    Ok(())
}

pub fn index(input: &Path, dir: &Path, policy: AccessPolicy, model: Option<&str>) -> Result<()> {
    let source = Source::detect(input).with_context(|| format!("reading {}", input.display()))?;
    let config = IndexConfig { policy, ..IndexConfig::default() };
    let index = Index::open_or_create(dir, config).with_context(|| format!("opening index {}", dir.display()))?;
    attach(&index, model)?;
    let started = Instant::now();
    let (added, rejected) = load(&index, &source)?;
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "indexed {added} records in {secs:.1} s ({:.0} records/s){}; the index holds {}",
        added as f64 / secs.max(1e-9),
        if rejected > 0 { format!(", {rejected} rejected") } else { String::new() },
        index.num_records()
    );
    Ok(())
}

pub fn check(dir: &Path) -> Result<()> {
    let records = Index::check(dir).with_context(|| format!("checking index {}", dir.display()))?;
    println!("ok: {} holds {records} records; every file matches its checksum", dir.display());
    Ok(())
}

fn parse_mode(text: &str) -> Result<Mode> {
    match Mode::parse(text) {
        Some(m) => Ok(m),
        None => bail!("unknown mode {text:?} (expected auto, lexical, fuzzy, semantic or hybrid)"),
    }
}

/// What `braid search` runs.
pub struct SearchArgs<'a> {
    pub dir: &'a Path,
    pub mode: &'a str,
    pub k: usize,
    pub json: bool,
    pub principal: &'a [String],
    pub model: Option<&'a str>,
    pub rerank: Option<(&'a Path, usize)>,
}

pub fn search(args: &SearchArgs<'_>, query: &str) -> Result<()> {
    let SearchArgs { dir, mode, k, json, principal, model, rerank } = *args;
    let index = Index::open(dir).with_context(|| format!("opening index {}", dir.display()))?;
    attach(&index, model)?;
    // The operator's command line is a verified source of principal tokens.
    let principal = Principal::from_verified_tokens(principal);
    let mut request = SearchRequest::new(query, principal).k(k).mode(parse_mode(mode)?);
    if let Some((dir, candidates)) = rerank {
        let model = braid::models::CrossEncoder::builder().model_dir(dir).max_len(256).build()?;
        index.attach_reranker(Arc::new(model));
        request = request.rerank(candidates);
    }
    let response = index.search(&request)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&response)?);
    } else {
        output::print_response(&response);
    }
    Ok(())
}

/// What `braid eval` runs on.
pub struct EvalArgs<'a> {
    pub dataset: &'a Path,
    pub index: Option<&'a Path>,
    pub split: &'a str,
    pub json: bool,
    pub typos: bool,
    pub model: Option<&'a str>,
    pub weights: Option<&'a str>,
    /// A list of real misspellings (`wrong->right` lines): each query gets one real typo, and
    /// queries with no listed word are left out.
    pub misspellings: Option<&'a Path>,
    /// The run every other run is compared to: a label of this invocation, or `FILE#LABEL`.
    pub baseline: Option<&'a str>,
}

/// Parses `lexical=1,fuzzy=0.5,semantic=1`.
fn parse_weights(text: &str) -> Result<LegWeights> {
    let mut w = LegWeights::default();
    for part in text.split(',').filter(|p| !p.trim().is_empty()) {
        let (leg, value) = part.split_once('=').with_context(|| format!("weight {part:?} is not leg=number"))?;
        let value: f32 = value.trim().parse().with_context(|| format!("weight {part:?} is not a number"))?;
        match leg.trim() {
            "lexical" => w.lexical = value,
            "fuzzy" => w.fuzzy = value,
            "semantic" => w.semantic = value,
            other => bail!("unknown leg {other:?} (lexical, fuzzy, semantic)"),
        }
    }
    Ok(w)
}

pub fn eval(args: &EvalArgs<'_>, modes: &[String], fusions: &[String], out: Option<&Path>) -> Result<()> {
    let EvalArgs { dataset: dataset_dir, index: index_dir, split, json, typos, model, weights, misspellings, baseline } =
        *args;
    let weights = weights.map(parse_weights).transpose()?;
    let mut dataset =
        Dataset::load(dataset_dir, split).with_context(|| format!("loading {}", dataset_dir.display()))?;
    let real = misspellings
        .map(|path| Misspellings::load(path).with_context(|| format!("loading misspellings {}", path.display())))
        .transpose()?;
    if let Some(real) = &real {
        let before = dataset.queries.len();
        dataset.queries.retain(|q| real.misspell(&q.text, &q.id).is_some());
        eprintln!("{} of {before} queries have a word with a real misspelling in the list", dataset.queries.len());
    }
    let saved_baseline =
        baseline.and_then(|b| b.split_once('#')).map(|(file, label)| load_run(file, label)).transpose()?;
    let index = match index_dir {
        Some(dir) => {
            let index = Index::open(dir).with_context(|| format!("opening index {}", dir.display()))?;
            attach(&index, model)?;
            index
        }
        None => {
            let index = Index::create_in_ram(IndexConfig::default())?;
            attach(&index, model)?;
            let source = Source::detect(dataset_dir)?;
            let started = Instant::now();
            let (added, _) = load(&index, &source)?;
            eprintln!("indexed {added} records in {:.1} s", started.elapsed().as_secs_f64());
            index
        }
    };
    let chunked = dataset.articles_dir().is_some();
    let mut reports: Vec<Report> = Vec::new();
    let runs: Vec<(Mode, Fusion)> = modes
        .iter()
        .map(|m| parse_mode(m))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flat_map(|m| fusions.iter().map(move |f| (m, f)))
        .map(|(m, f)| {
            Fusion::parse(f)
                .map(|f| (m, f))
                .with_context(|| format!("unknown fusion {f:?} (blend, rrf, minmax, zscore, dbsf)"))
        })
        .collect::<Result<_>>()?;
    for (mode, fusion) in runs {
        let mut label = mode.name().to_string();
        if fusion != Fusion::default() {
            label.push_str(&format!("/{}", fusion.name()));
        }
        if let Some(w) = weights {
            label.push_str(&format!("/w{}-{}-{}", w.lexical, w.fuzzy, w.semantic));
        }
        if typos {
            label.push_str("+typos");
        }
        if real.is_some() {
            label.push_str("+misspelt");
        }
        let mut stages: std::collections::BTreeMap<&'static str, u64> = Default::default();
        let report = evaluate(&dataset, &label, |query| -> Result<Vec<String>> {
            let text = match &real {
                Some(real) => real.misspell(&query.text, &query.id).unwrap_or_else(|| query.text.clone()),
                None => query.text.clone(),
            };
            let text = if typos { misspell_query(&text, &query.id) } else { text };
            let principal = query_principal(query);
            // Chunked corpora are judged per article: collapse sections to their parent.
            let k = if chunked { 300 } else { 100 };
            // Rankings are all evaluation reads: no snippets (suggestions still run).
            let mut request = SearchRequest::new(text, principal).k(k).mode(mode).fusion(fusion).snippet_chars(0);
            if let Some(w) = weights {
                request = request.weights(w);
            }
            let response = index.search(&request)?;
            for (stage, us) in &response.stats.micros {
                *stages.entry(stage).or_default() += us;
            }
            let mut seen = HashSet::new();
            Ok(response
                .hits
                .into_iter()
                .map(|h| h.parent.unwrap_or(h.id))
                .filter(|id| seen.insert(id.clone()))
                .collect())
        })?;
        let n = report.queries.max(1) as f64;
        let means: Vec<String> = stages.iter().map(|(s, us)| format!("{s} {:.2}", *us as f64 / n / 1000.0)).collect();
        eprintln!("{label}: mean ms per stage: {}", means.join(", "));
        reports.push(report);
    }
    // Every run against the baseline, query by query.
    let base = match (baseline, saved_baseline) {
        (_, Some(saved)) => Some(saved),
        (Some(label), None) => Some(
            reports
                .iter()
                .find(|r| r.mode == label)
                .cloned()
                .with_context(|| format!("--baseline {label:?} is not a run of this invocation (or FILE#LABEL)"))?,
        ),
        (None, None) => None,
    };
    for report in &mut reports {
        if let Some(base) = &base {
            if report.mode != base.mode || report.dataset != base.dataset {
                report.compare_to(base);
            }
        }
    }
    for (i, report) in reports.iter().enumerate() {
        if json {
            println!("{}", serde_json::to_string(&report)?);
        } else {
            if i == 0 {
                println!("{}", Report::table_header());
            }
            println!("{}", report.table_row());
        }
    }
    if let Some(out) = out {
        std::fs::write(out, serde_json::to_string_pretty(&reports)?)
            .with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(())
}

/// The run labelled `label` in a results file `braid eval --out` wrote.
fn load_run(file: &str, label: &str) -> Result<Report> {
    let text = std::fs::read_to_string(file).with_context(|| format!("reading baseline {file}"))?;
    let runs: Vec<Report> = serde_json::from_str(&text).with_context(|| format!("parsing baseline {file}"))?;
    let run = runs.into_iter().find(|r| r.mode == label).with_context(|| format!("no run {label:?} in {file}"))?;
    if run.per_query.is_empty() {
        bail!("run {label:?} in {file} has no per-query scores (re-run it with this braid eval)");
    }
    Ok(run)
}

/// The principal a judged query is asked as: the dataset's `metadata.principal` tokens (the
/// evaluation harness is the operator here), or an anonymous caller.
fn query_principal(query: &braid_eval::Query) -> Principal {
    match query.metadata.get("principal").and_then(|v| v.as_array()) {
        Some(tokens) => Principal::from_verified_tokens(tokens.iter().filter_map(|t| t.as_str())),
        None => Principal::public(),
    }
}
