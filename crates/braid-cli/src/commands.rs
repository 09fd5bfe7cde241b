//! The subcommands.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use braid::ingest::Source;
use braid::{AccessPolicy, Fusion, Index, IndexConfig, LegWeights, Mode, Principal, SearchRequest};
use braid_eval::{evaluate, misspell_query, Dataset, Report};
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

/// Documents whose errors are printed before the count of the rest.
const ERRORS_SHOWN: usize = 20;

/// Reads every record of `source` without writing: the ids it holds, or every document that
/// cannot be read (each printed on stderr, terminal or not).
fn validate(index: &Index, source: &Source) -> Result<HashSet<String>> {
    let (mut ids, mut failed) = (HashSet::new(), 0usize);
    for record in source.records(&index.config().schema) {
        match record.and_then(|r| r.validate().map(|()| r)) {
            Ok(r) => {
                ids.insert(r.id().to_string());
            }
            Err(e) => {
                failed += 1;
                if failed <= ERRORS_SHOWN {
                    eprintln!("error: {e}");
                }
            }
        }
    }
    if failed > 0 {
        if failed > ERRORS_SHOWN {
            eprintln!("error: … and {} more", failed - ERRORS_SHOWN);
        }
        bail!(
            "{failed} document(s) cannot be read; nothing was written (fix them and run again: a record is never \
             left in an older or more public version)"
        );
    }
    Ok(ids)
}

/// Loads every record of `source` into `index`, committing periodically, then (with `prune`)
/// deletes every record whose id `source` no longer holds. Returns (written, removed).
fn load(index: &Index, source: &Source, prune: Option<&HashSet<String>>) -> Result<(usize, usize)> {
    let bar = progress(source.estimate(), "indexing");
    let mut writer = index.writer()?;
    let mut added = 0usize;
    for record in source.records(&index.config().schema) {
        // Validated above; a failure now (the files changed meanwhile) stops the run before its
        // last commit.
        writer.upsert(&record?)?;
        added += 1;
        bar.inc(1);
        if writer.pending() >= COMMIT_EVERY {
            writer.commit()?;
        }
    }
    let mut removed = 0usize;
    if let Some(keep) = prune {
        for id in index.record_ids()? {
            if !keep.contains(&id) {
                writer.delete(&id)?;
                removed += 1;
            }
        }
    }
    // One segment: every later search walks one postings list per term.
    writer.optimize()?;
    bar.finish_and_clear();
    Ok((added, removed))
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

/// `braid index`: a sync of `dir` to `input` — afterwards the index holds exactly the records
/// of `input`'s current documents (`prune`; without it, records of vanished documents stay).
/// Every document is read and checked before anything is written: one that cannot be read
/// fails the run, and the index is left as it was. `policy` is for a new index; given for an
/// existing index with another policy, it is an error.
pub fn index(input: &Path, dir: &Path, policy: Option<AccessPolicy>, model: Option<&str>, prune: bool) -> Result<()> {
    let source = Source::detect(input).with_context(|| format!("reading {}", input.display()))?;
    let config = IndexConfig { policy: policy.unwrap_or_default(), ..IndexConfig::default() };
    let index = Index::open_or_create(dir, config).with_context(|| format!("opening index {}", dir.display()))?;
    let existing = index.config().policy;
    if let Some(asked) = policy.filter(|p| *p != existing) {
        bail!(
            "index {} was created with --policy {}; --policy {} cannot change it (records without an ACL \
             would change visibility): build a new index with the new policy, or drop --policy",
            dir.display(),
            policy_name(existing),
            policy_name(asked)
        );
    }
    attach(&index, model)?;
    let started = Instant::now();
    let ids = validate(&index, &source)?;
    let (added, removed) = load(&index, &source, prune.then_some(&ids))?;
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "indexed {added} records in {secs:.1} s ({:.0} records/s){}; the index holds {}",
        added as f64 / secs.max(1e-9),
        if removed > 0 { format!(", removed {removed} whose documents are gone") } else { String::new() },
        index.num_records()
    );
    Ok(())
}

fn policy_name(policy: AccessPolicy) -> &'static str {
    match policy {
        AccessPolicy::Public => "public",
        AccessPolicy::Deny => "deny",
    }
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
    let principal = Principal::try_from_verified_tokens(principal).context("--principal")?;
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
    let EvalArgs { dataset: dataset_dir, index: index_dir, split, json, typos, model, weights } = *args;
    let weights = weights.map(parse_weights).transpose()?;
    let dataset = Dataset::load(dataset_dir, split).with_context(|| format!("loading {}", dataset_dir.display()))?;
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
            let (added, _) = load(&index, &source, None)?;
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
            Fusion::parse(f).map(|f| (m, f)).with_context(|| format!("unknown fusion {f:?} (rrf, minmax, zscore)"))
        })
        .collect::<Result<_>>()?;
    for (mode, fusion) in runs {
        let mut label = mode.name().to_string();
        if fusion != Fusion::Rrf {
            label.push_str(&format!("/{}", fusion.name()));
        }
        if let Some(w) = weights {
            label.push_str(&format!("/w{}-{}-{}", w.lexical, w.fuzzy, w.semantic));
        }
        if typos {
            label.push_str("+typos");
        }
        let mut stages: std::collections::BTreeMap<&'static str, u64> = Default::default();
        let report = evaluate(&dataset, &label, |query| -> Result<Vec<String>> {
            let text = if typos { misspell_query(&query.text, &query.id) } else { query.text.clone() };
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
        if json {
            println!("{}", serde_json::to_string(&report)?);
        } else {
            if reports.is_empty() {
                println!("{}", Report::table_header());
            }
            println!("{}", report.table_row());
        }
        reports.push(report);
    }
    if let Some(out) = out {
        std::fs::write(out, serde_json::to_string_pretty(&reports)?)
            .with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(())
}

/// The principal a judged query is asked as: the dataset's `metadata.principal` tokens (the
/// evaluation harness is the operator here), or an anonymous caller.
fn query_principal(query: &braid_eval::Query) -> Principal {
    match query.metadata.get("principal").and_then(|v| v.as_array()) {
        Some(tokens) => Principal::from_verified_tokens(tokens.iter().filter_map(|t| t.as_str())),
        None => Principal::public(),
    }
}
