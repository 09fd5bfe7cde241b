//! The subcommands.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use braid::ingest::Source;
use braid::{
    AccessPolicy, EmbeddingInfo, Fusion, Index, IndexBuilder, IndexConfig, LegWeights, Mode, Principal, SearchRequest,
};
use braid_eval::{evaluate, misspell_query, Dataset, Misspellings, Report};
use indicatif::{ProgressBar, ProgressStyle};

use crate::output;
use crate::vectors::{field_vector, VectorSource};

/// Records between intermediate commits of a long ingest, by default.
pub const DEFAULT_COMMIT_EVERY: usize = 50_000;

fn progress(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    let style = ProgressStyle::with_template(&format!("{what} {{bar:40}} {{pos}}/{{len}} {{per_sec}} eta {{eta}}"))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// What `braid index` runs.
pub struct IndexArgs<'a> {
    pub input: &'a Path,
    pub dir: &'a Path,
    /// For a new index; an existing index with another policy is an error.
    pub policy: Option<AccessPolicy>,
    /// For a new index; an existing index with another setting is an error.
    pub quantization: Option<braid::Quantization>,
    /// For a new index; an existing index with another setting is an error.
    pub passages: Option<PassagesArg>,
    pub model: Option<&'a str>,
    /// Upserts between intermediate commits (each bounds the writer's memory).
    pub commit_every: usize,
    /// Records at which a tenant gets partitions of its own (`None`: the default).
    pub promote_tenants_at: Option<usize>,
    /// Vectors supplied with the records, if any.
    pub vectors: Option<VectorSource>,
    /// The name the index records for supplied vectors' model.
    pub vector_model: Option<&'a str>,
    /// Delete the records no document of the input holds, memories excepted (a sync;
    /// `--no-prune` turns it off).
    pub prune: bool,
}

/// `--passages`: the windows a new index cuts long records into, or `off` (one vector a
/// record).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassagesArg(pub Option<braid::Passages>);

impl std::str::FromStr for PassagesArg {
    type Err = braid::Error;

    fn from_str(s: &str) -> braid::Result<Self> {
        match s {
            "off" | "none" => Ok(PassagesArg(None)),
            _ => s.parse().map(|p| PassagesArg(Some(p))),
        }
    }
}

impl std::fmt::Display for PassagesArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            None => f.write_str("off"),
            Some(p) => write!(f, "{p}"),
        }
    }
}

/// Records as a source yields them, each with the vector its JSONL line carried, if any.
type RecordsWithVectors = Box<dyn Iterator<Item = braid::Result<(braid::Record, Option<Vec<f32>>)>>>;

/// What a load did.
struct Loaded {
    added: usize,
    unchanged: usize,
    removed: usize,
    without_vector: usize,
}

/// Documents whose errors are printed before the count of the rest.
const ERRORS_SHOWN: usize = 20;

/// The ids an input holds, each with the place of the item that gave it in the source's stream
/// (0-based; a JSONL corpus yields one item a non-blank line), to name both documents of an id
/// given twice.
type InputIds = HashMap<String, usize>;

/// Reads every record of `source` without writing: the ids it holds, or every document that
/// cannot be read and every id given by two documents (each printed on stderr, terminal or
/// not). Two documents with one id would otherwise be merged silently, the later one winning
/// with its own access: each must name its own record.
fn validate(index: &Index, source: &Source) -> Result<InputIds> {
    let (mut ids, mut failed) = (InputIds::new(), 0usize);
    // An id given again: the id, the places of its first and latest items, and the latest
    // record's parent (a Markdown record's article).
    let mut repeated: Vec<(String, usize, usize, Option<String>)> = Vec::new();
    for (place, record) in source.records(&index.config().schema).enumerate() {
        // A memory's id is the memory API's alone (it derives it from the owner and the text):
        // an input naming one would replace an agent's memory, or plant one in its scope.
        let record =
            record.and_then(|r| r.validate().map(|()| r)).and_then(|r| match braid::memory::is_memory_id(r.id()) {
                true => Err(braid::Error::InvalidRecord {
                    reason: format!(
                        "id {:?} is a memory's (under tenant:<name>/memory/): only the memory API writes those",
                        r.id()
                    ),
                }),
                false => Ok(r),
            });
        match record {
            Ok(r) => match ids.entry(r.id().to_string()) {
                Entry::Vacant(slot) => {
                    slot.insert(place);
                }
                Entry::Occupied(first) => repeated.push((r.id().to_string(), *first.get(), place, r.parent.clone())),
            },
            Err(e) => {
                failed += 1;
                if failed <= ERRORS_SHOWN {
                    eprintln!("error: {e}");
                }
            }
        }
    }
    if !repeated.is_empty() {
        let lines = match source {
            Source::Beir(path) => jsonl_lines(path, repeated.iter().flat_map(|r| [r.1, r.2])),
            Source::Markdown(_) => HashMap::new(),
        };
        for (shown, (id, first, again, parent)) in repeated.iter().enumerate() {
            if failed + shown >= ERRORS_SHOWN {
                break;
            }
            eprintln!("error: {}", repeated_id(source, &lines, id, *first, *again, parent.as_deref()));
        }
    }
    let errors = failed + repeated.len();
    if errors > 0 {
        if errors > ERRORS_SHOWN {
            eprintln!("error: … and {} more", errors - ERRORS_SHOWN);
        }
        let mut what = Vec::new();
        if failed > 0 {
            what.push(format!("{failed} document(s) cannot be read"));
        }
        if !repeated.is_empty() {
            what.push(format!("{} record id(s) are given by more than one document", repeated.len()));
        }
        bail!(
            "{}; nothing was written, so the index still serves the previous version of every record (including \
             any whose access this run narrows) until a run succeeds: fix the input and run again",
            what.join(" and ")
        );
    }
    Ok(ids)
}

/// The 1-based line numbers of the items at `places` of a JSONL corpus's stream: its non-blank
/// lines, read as `braid::ingest::beir::read_documents` reads them (a byte order mark
/// starting the file is ignored). Places past the end are left out.
fn jsonl_lines(path: &Path, places: impl IntoIterator<Item = usize>) -> HashMap<usize, usize> {
    use std::io::BufRead;
    let wanted: HashSet<usize> = places.into_iter().collect();
    let mut found = HashMap::new();
    let Ok(file) = std::fs::File::open(path) else { return found };
    let (mut reader, mut buf, mut line, mut place) = (std::io::BufReader::new(file), Vec::new(), 0usize, 0usize);
    while found.len() < wanted.len() {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        line += 1;
        let bytes = if line == 1 { buf.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&buf) } else { &buf[..] };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if wanted.contains(&place) {
            found.insert(place, line);
        }
        place += 1;
    }
    found
}

/// The message for record `id`, given by the items at `first` and `again` of `source`: both
/// lines of a JSONL corpus, or the files of a Markdown article (`parent`) whose paths differ
/// only in their extension.
fn repeated_id(
    source: &Source,
    lines: &HashMap<usize, usize>,
    id: &str,
    first: usize,
    again: usize,
    parent: Option<&str>,
) -> String {
    match source {
        Source::Beir(path) => {
            let line = |place: usize| lines.get(&place).map_or_else(|| "?".to_string(), ToString::to_string);
            format!(
                "{}, lines {} and {}: both have `_id` {id:?} (a number `_id` is read as its decimal text, so 1 and \
                 \"1\" are one id); give each document an id of its own",
                path.display(),
                line(first),
                line(again)
            )
        }
        Source::Markdown(root) => {
            let files = parent.map(|article| article_files(root, article)).unwrap_or_default();
            let from = match files.as_slice() {
                [_, _, ..] => files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(" and "),
                _ => format!("two files of article {:?}", parent.unwrap_or(id)),
            };
            format!(
                "record id {id:?} comes from {from}: files whose paths differ only in their extension get one \
                 article id; rename one of them"
            )
        }
    }
}

/// The files under `root` that Markdown ingestion reads as article `article`: same folder, same
/// name without the extension, an extension it reads (`md`, `markdown`, `txt`), sorted.
fn article_files(root: &Path, article: &str) -> Vec<std::path::PathBuf> {
    let path = root.join(article);
    let (Some(dir), Some(stem)) = (path.parent(), path.file_name()) else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_stem() == Some(stem))
        .filter(|p| {
            p.extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| matches!(x.to_ascii_lowercase().as_str(), "md" | "markdown" | "txt"))
        })
        .collect();
    files.sort();
    files
}

/// Loads every record of `source` into `index`: commits every `commit_every` upserts, with
/// segment merges deferred to one merge at the end; then deletes the records `source` no
/// longer holds (`ids` holds what it does): with `prune` every one, written over the server or
/// not, except memories ([`braid::memory::is_memory_id`]: only the memory API writes them,
/// never an input); without it, a Markdown article's sections that the article no longer
/// has (`{path}#{section}` for an article of the input), so that a section renamed in a run
/// that narrows its article's access does not stay readable as it was. An interrupted load resumes: records an earlier run
/// committed are skipped unchanged. The records were validated first; a failure now (the
/// files changed meanwhile, a supplied vector of the wrong dimension) stops the run.
fn load(
    index: &Index,
    source: &Source,
    commit_every: usize,
    mut vectors: Option<VectorSource>,
    ids: Option<&InputIds>,
    prune: bool,
) -> Result<Loaded> {
    let bar = progress(source.estimate(), "indexing");
    let options = braid::WriterOptions { merges: braid::Merges::Deferred, ..braid::WriterOptions::default() };
    let mut writer = index.writer_with(options)?;
    let mut loaded = Loaded { added: 0, unchanged: 0, removed: 0, without_vector: 0 };
    let schema = index.config().schema.clone();
    let records: RecordsWithVectors = match (&vectors, source) {
        (Some(VectorSource::Field(field)), Source::Beir(path)) => {
            let field = field.clone();
            // The same reader as pass one's: access is decided once, by braid-ingest.
            Box::new(braid::ingest::beir::read_documents(path, &schema).map(move |doc| {
                let doc = doc?;
                let vector = field_vector(&doc.metadata, &field)
                    .map_err(|e| braid::Error::InvalidRecord { reason: format!("{}: {e:#}", doc.record.id()) })?;
                Ok((doc.record, vector))
            }))
        }
        (Some(VectorSource::Field(_)), Source::Markdown(_)) => {
            bail!("--vector-field reads a JSONL corpus's metadata; this input is a folder of Markdown")
        }
        _ => Box::new(source.records(&schema).map(|r| r.map(|r| (r, None)))),
    };
    for item in records {
        let (record, vector) = item?;
        let vector = match (&mut vectors, vector) {
            (Some(VectorSource::Sidecar(sidecar)), _) => {
                sidecar.get(record.id()).map_err(|e| braid::Error::Vector(format!("{e:#}")))?
            }
            (_, v) => v,
        };
        if vectors.is_some() && vector.is_none() {
            loaded.without_vector += 1;
        }
        let record = match vector {
            Some(v) => record.vector(v),
            None => record,
        };
        let before = writer.unchanged();
        writer.upsert(&record)?;
        if writer.unchanged() > before {
            loaded.unchanged += 1;
        } else {
            loaded.added += 1;
        }
        bar.inc(1);
        if writer.pending() >= commit_every {
            writer.commit()?;
        }
    }
    if let Some(keep) = ids {
        let articles: HashSet<&str> = match source {
            Source::Markdown(_) if !prune => keep.keys().filter_map(|id| Some(id.split_once('#')?.0)).collect(),
            _ => HashSet::new(),
        };
        let stale = |id: &str| prune || id.split_once('#').is_some_and(|(article, _)| articles.contains(article));
        if prune || !articles.is_empty() {
            for id in index.record_ids()? {
                if stale(&id) && !keep.contains_key(&id) && !braid::memory::is_memory_id(&id) {
                    writer.delete(&id)?;
                    loaded.removed += 1;
                }
            }
        }
    }
    // One merge, at the end: every later search walks one postings list per term.
    writer.optimize()?;
    bar.finish_and_clear();
    Ok(loaded)
}

/// Loads an embedding model: `spec` is a model directory, an `.onnx` file inside one (for
/// another file than `model.onnx`, such as all-MiniLM-L6-v2's `model_int8.onnx`), `default`
/// for all-MiniLM-L6-v2 found by discovery, or `hf:<owner>/<name>` to download one from the
/// Hugging Face hub into the model cache; `None` means the model the index records
/// (`recorded`), if any.
fn embedder(spec: Option<&str>, recorded: Option<&EmbeddingInfo>) -> Result<Option<Arc<dyn braid::Embedder>>> {
    use braid::models::{OnnxEmbedder, DEFAULT_EMBEDDING_MODEL};
    let mut builder = OnnxEmbedder::builder();
    match (spec, recorded) {
        (Some("default"), _) => builder.model_name(DEFAULT_EMBEDDING_MODEL),
        (Some(spec), _) if spec.starts_with("hf:") => builder.model_dir(braid::models::fetch_model(&spec[3..])?),
        (Some(file), _) if file.ends_with(".onnx") => {
            let path = Path::new(file);
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("model.onnx");
            builder.model_dir(path.parent().unwrap_or(Path::new("."))).onnx_file(name)
        }
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

/// What to do when the model an index records cannot be loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MissingModel {
    /// Say so and go on: lexical and fuzzy search still work, and the semantic leg runs on
    /// queries that supply a vector (search, serve).
    Warn,
    /// Stop: a measurement of fused modes without their semantic leg would carry the wrong
    /// label (eval, fit).
    Fail,
}

/// A builder for the index in `dir` with the embedding model asked for (`spec`) or recorded in
/// the index, and whether it has a semantic leg. A recorded model that cannot be loaded is a
/// warning or an error, as `missing` says.
pub(crate) fn builder_for(dir: &Path, spec: Option<&str>, missing: MissingModel) -> Result<(IndexBuilder, bool)> {
    let recorded = if Index::exists(dir) {
        Index::recorded_embedding(dir).with_context(|| format!("opening index {}", dir.display()))?
    } else {
        None
    };
    let builder = Index::builder();
    if spec.is_none() {
        if let Some(info) = recorded.clone().filter(|i| i.model_id == braid::SUPPLIED_MODEL) {
            // Vectors supplied with the records, no model: queries bring their own vector.
            return Ok((builder.vectors(info), true));
        }
    }
    Ok(match embedder(spec, recorded.as_ref()) {
        Ok(Some(e)) => (builder.embedder(e), true),
        Ok(None) => (builder, false),
        Err(e) if spec.is_none() && missing == MissingModel::Warn => {
            eprintln!("warning: the index's model is unavailable ({e:#}); the semantic leg runs only for queries that supply a vector");
            (builder.stored_vectors(), true)
        }
        Err(e) if spec.is_none() => {
            return Err(e.context(format!(
                "the model index {} was built with is unavailable, so its semantic leg would be off and a \
                 fused run would measure the other legs alone (pass --model, or set BRAID_MODEL_DIR)",
                dir.display()
            )))
        }
        Err(e) => return Err(e),
    })
}

/// Opens the index in `dir` with its embedding model (see [`builder_for`]), its vector graph
/// searched at `ef_search` when given ([`IndexBuilder::ef_search`]).
pub(crate) fn open_with_model(
    dir: &Path,
    spec: Option<&str>,
    ef_search: Option<usize>,
    missing: MissingModel,
) -> Result<Index> {
    let (mut builder, _) = builder_for(dir, spec, missing)?;
    if let Some(width) = ef_search {
        builder = builder.ef_search(width);
    }
    builder.open(dir).with_context(|| format!("opening index {}", dir.display()))
}

/// `braid index`: a sync of `dir` to `input` — afterwards the index holds exactly the records
/// of `input`'s current documents, and the memories of its tenants (`prune`; without it,
/// records of vanished documents stay): a record written over the server that no document
/// holds is deleted too. Every document is read and checked before anything is written: a
/// document that cannot be read, two that give one record id (the later would replace the
/// earlier, access included), or, when pruning, an input with no documents at all (it would
/// empty the index) fails the run, and the index is left as it was. `policy` is for a new
/// index; given for an existing index with another policy, it is an error.
pub fn index(args: IndexArgs<'_>) -> Result<()> {
    let IndexArgs {
        input,
        dir,
        policy,
        quantization,
        passages,
        model,
        commit_every,
        promote_tenants_at,
        vectors,
        vector_model,
        prune,
    } = args;
    if commit_every == 0 {
        bail!("--commit-every must be at least 1");
    }
    let source = Source::detect(input).with_context(|| format!("reading {}", input.display()))?;
    let config = IndexConfig {
        policy: policy.unwrap_or_default(),
        quantization: quantization.unwrap_or_default(),
        passages: passages.map_or(IndexConfig::default().passages, |p| p.0),
        ..IndexConfig::default()
    };
    let (mut builder, semantic) = builder_for(dir, model, MissingModel::Warn)?;
    if let Some(records) = promote_tenants_at {
        if records == 0 {
            bail!("--promote-tenants-at must be at least 1");
        }
        builder = builder.promote_tenants_at(records);
    }
    if let (Some(VectorSource::Sidecar(sidecar)), false) = (&vectors, semantic) {
        let model_id = vector_model.unwrap_or(braid::SUPPLIED_MODEL).to_string();
        builder = builder.vectors(EmbeddingInfo { model_id, dim: sidecar.dim() });
    }
    let index =
        builder.config(config).open_or_create(dir).with_context(|| format!("opening index {}", dir.display()))?;
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
    let existing = index.config().quantization;
    if let Some(asked) = quantization.filter(|q| *q != existing) {
        bail!(
            "index {} was created with --quantize {}; --quantize {} cannot change it: build a new index, or drop \
             --quantize",
            dir.display(),
            existing.name(),
            asked.name()
        );
    }
    let existing = PassagesArg(index.config().passages);
    if let Some(asked) = passages.filter(|p| *p != existing) {
        bail!(
            "index {} was created with --passages {existing}; --passages {asked} cannot change it (its vectors \
             were made that way): build a new index, or drop --passages",
            dir.display()
        );
    }
    match (&vectors, vector_model) {
        (Some(VectorSource::Sidecar(_)), _) if !semantic => {}
        (Some(VectorSource::Sidecar(_)), Some(name)) => {
            let has = index.embedding().map_or_else(|| "a model attached".to_string(), |i| i.model_id);
            bail!("--vector-model {name:?} names the model of vectors on a new index; this one holds {has}")
        }
        (_, Some(_)) => {
            bail!("--vector-model goes with --vectors (vectors from a JSONL field are recorded as `supplied`)")
        }
        _ => {}
    }
    let started = Instant::now();
    let ids = validate(&index, &source)?;
    if prune && ids.is_empty() {
        bail!(
            "{} holds no documents, and a sync deletes every record no input document holds (memories \
             excepted): nothing was written. To add nothing, run with --no-prune; to start over, delete the index \
             directory {}",
            input.display(),
            dir.display()
        );
    }
    let loaded = load(&index, &source, commit_every, vectors, Some(&ids), prune)?;
    let secs = started.elapsed().as_secs_f64();
    let Loaded { added, unchanged, removed, without_vector } = loaded;
    let mut notes = String::new();
    if unchanged > 0 {
        notes.push_str(&format!(", {unchanged} unchanged (already committed)"));
    }
    if removed > 0 {
        notes.push_str(&format!(", removed {removed} whose documents are gone"));
    }
    if without_vector > 0 {
        notes.push_str(&format!(", {without_vector} without a supplied vector"));
    }
    eprintln!(
        "indexed {added} records in {secs:.1} s ({:.0} records/s){notes}; the index holds {}",
        added as f64 / secs.max(1e-9),
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
    let report = Index::check(dir).with_context(|| format!("checking index {}", dir.display()))?;
    println!("ok: {} holds {} records; every file matches its checksum", dir.display(), report.records);
    if !report.vector_partitions.is_empty() {
        let parts: Vec<String> = report
            .vector_partitions
            .iter()
            .map(|(partition, records)| {
                let name = match partition {
                    braid::Partition::Tenant(token) => token.clone(),
                    other => other.name(),
                };
                format!("{name} {records}")
            })
            .collect();
        println!("vectors by partition: {}", parts.join(", "));
    }
    if !report.lexical_partitions.is_empty() {
        println!("tenants with lexical partitions of their own: {}", report.lexical_partitions.join(", "));
    }
    if report.orphan_vectors > 0 {
        println!(
            "note: {} vectors belong to no committed record (a write was cut short); the next writer drops them",
            report.orphan_vectors
        );
    }
    if !report.feedback_heads {
        println!(
            "note: written before records stored the words lexical feedback reads, so hybrid \
             searches analyse them again (the same results, about 0.4 ms more a search); index the \
             corpus into a new directory to store them"
        );
    }
    let title = Index::recorded_config(dir)?.schema.title_boost;
    let default = braid::SchemaConfig::default().title_boost;
    if title != default {
        println!(
            "note: this index weighs a title match by {title}; new indexes by {default} (fitted on \
             training splits, research/ranking-log.md); a request's boosts.title sets it per search, or \
             index the corpus into a new directory"
        );
    }
    Ok(())
}

/// What `braid search` runs.
pub struct SearchArgs<'a> {
    pub dir: &'a Path,
    pub mode: Mode,
    pub k: usize,
    pub json: bool,
    pub principal: &'a [String],
    pub model: Option<&'a str>,
    pub rerank: Option<(&'a Path, usize)>,
    /// A query vector supplied on the command line.
    pub vector: Option<Vec<f32>>,
    /// `plain` or `simple`.
    pub syntax: &'a str,
    /// Which page.
    pub page: PageArgs<'a>,
    /// `--ef-search`: the vector graph's search width.
    pub ef_search: Option<usize>,
    /// `--facet` values: field names or facets as JSON.
    pub facets: &'a [String],
    /// `--boosts` as JSON.
    pub boosts: Option<&'a str>,
    /// Pseudo-relevance feedback on the fused lexical leg (off with `--no-feedback`).
    pub feedback: bool,
    /// `--group-by`: a field and the most hits a value keeps.
    pub group_by: Option<(String, usize)>,
    /// `--mmr`: maximal marginal relevance's lambda.
    pub mmr: Option<f32>,
    /// `--token-budget`: the most tokens the page holds.
    pub token_budget: Option<usize>,
}

/// `braid search`'s paging flags.
#[derive(Clone, Copy)]
pub struct PageArgs<'a> {
    pub offset: usize,
    pub cursor: Option<&'a str>,
    pub depth: Option<usize>,
}

/// A `--facet` value: a keyword field's name, or a `braid::Facet` as JSON.
fn parse_facet(text: &str) -> Result<braid::Facet> {
    if text.trim_start().starts_with('{') {
        serde_json::from_str(text).with_context(|| format!("--facet {text:?} is not a facet"))
    } else {
        Ok(braid::Facet::values(text.trim()))
    }
}

/// `braid synonyms`: installs, clears or prints an index's synonym set.
pub fn synonyms(dir: &Path, file: Option<&Path>, clear: bool) -> Result<()> {
    let index = Index::open(dir).with_context(|| format!("opening index {}", dir.display()))?;
    if clear {
        index.set_synonyms(braid::Synonyms::default())?;
        eprintln!("removed the synonyms of {}", dir.display());
        return Ok(());
    }
    let Some(file) = file else {
        print!("{}", index.synonyms().text());
        return Ok(());
    };
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let set = braid::Synonyms::parse(&text).with_context(|| file.display().to_string())?;
    if set.is_empty() {
        // An empty or truncated file would clear every rule: that is what --clear is for.
        bail!("{} holds no synonym rules; to remove the index's synonyms, run with --clear", file.display());
    }
    let rules = set.len();
    index.set_synonyms(set)?;
    eprintln!("{rules} synonym rules set on {}", dir.display());
    Ok(())
}

pub fn search(args: &SearchArgs<'_>, query: &str) -> Result<()> {
    let SearchArgs { dir, mode, k, json, principal, model, rerank, ef_search, .. } = *args;
    let (mut builder, _) = builder_for(dir, model, MissingModel::Warn)?;
    if let Some(width) = ef_search {
        builder = builder.ef_search(width);
    }
    if let Some((dir, _)) = rerank {
        let model = braid::models::CrossEncoder::builder().model_dir(dir).max_len(256).build()?;
        builder = builder.reranker(Arc::new(model));
    }
    let index = builder.open(dir).with_context(|| format!("opening index {}", dir.display()))?;
    // The operator's command line is a verified source of principal tokens.
    let public_caller = principal.is_empty();
    let principal = Principal::try_from_verified_tokens(principal).context("--principal")?;
    let syntax = match braid::QuerySyntax::parse(args.syntax) {
        Some(s @ (braid::QuerySyntax::Plain | braid::QuerySyntax::Simple)) => s,
        _ => bail!("unknown syntax {:?} (plain, simple)", args.syntax),
    };
    let mut request = SearchRequest::new(query, principal).k(k).mode(mode).syntax(syntax);
    if let Some(vector) = &args.vector {
        request = request.vector(vector.clone());
    }
    request = request.offset(args.page.offset);
    if let Some(cursor) = args.page.cursor {
        request = request.cursor(cursor);
    }
    if let Some(depth) = args.page.depth {
        request = request.depth(depth);
    }
    for facet in args.facets {
        request = request.facet(parse_facet(facet)?);
    }
    if let Some(boosts) = args.boosts {
        request = request.boosts(serde_json::from_str(boosts).context("--boosts is not valid boosts JSON")?);
    }
    request = request.feedback(args.feedback);
    if let Some((field, n)) = &args.group_by {
        request = request.group_by(field.as_str(), *n);
    }
    if let Some(lambda) = args.mmr {
        request = request.mmr(lambda);
    }
    if let Some(tokens) = args.token_budget {
        request = request.token_budget(tokens);
    }
    if let Some((_, candidates)) = rerank {
        request = request.rerank(candidates);
    }
    let response = index.search(&request)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&response)?);
    } else {
        output::print_response(&response, public_caller);
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
    /// Per-request boosts as JSON (`braid::Boosts`), applied to every query.
    pub boosts: Option<&'a str>,
    /// A list of real misspellings (`wrong->right` lines): each query gets one real typo, and
    /// queries with no listed word are left out.
    pub misspellings: Option<&'a Path>,
    /// The run every other run is compared to: a label of this invocation, or `FILE#LABEL`.
    pub baseline: Option<&'a str>,
    /// A synonym file for the temporary index.
    pub synonyms: Option<&'a Path>,
    /// Pseudo-relevance feedback on the fused lexical leg, for every query (off with
    /// `--no-feedback`).
    pub feedback: bool,
    /// Maximal marginal relevance's lambda, for every query (`--mmr`).
    pub mmr: Option<f32>,
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

pub fn eval(args: &EvalArgs<'_>, modes: &[Mode], fusions: &[Fusion], out: Option<&Path>) -> Result<()> {
    let EvalArgs {
        dataset: dataset_dir,
        index: index_dir,
        split,
        json,
        typos,
        model,
        weights,
        boosts,
        misspellings,
        baseline,
        synonyms,
        feedback,
        mmr,
    } = *args;
    let weights = weights.map(parse_weights).transpose()?;
    let boosts: Option<braid::Boosts> =
        boosts.map(|b| serde_json::from_str(b).context("--boosts is not valid boosts JSON")).transpose()?;
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
        Some(dir) => open_with_model(dir, model, None, MissingModel::Fail)?,
        None => {
            let index = match embedder(model, None)? {
                Some(e) => Index::builder().embedder(e).create_in_ram()?,
                None => Index::create_in_ram(IndexConfig::default())?,
            };
            let source = Source::detect(dataset_dir)?;
            let started = Instant::now();
            validate(&index, &source)?;
            let added = load(&index, &source, DEFAULT_COMMIT_EVERY, None, None, false)?.added;
            eprintln!("indexed {added} records in {:.1} s", started.elapsed().as_secs_f64());
            if let Some(file) = synonyms {
                let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
                let set = braid::Synonyms::parse(&text).with_context(|| file.display().to_string())?;
                eprintln!("{} synonym rules from {}", set.len(), file.display());
                index.set_synonyms(set)?;
            }
            index
        }
    };
    let chunked = dataset.articles_dir().is_some();
    let mut reports: Vec<Report> = Vec::new();
    let runs: Vec<(Mode, Fusion)> = modes.iter().flat_map(|&m| fusions.iter().map(move |&f| (m, f))).collect();
    for (mode, fusion) in runs {
        let mut label = mode.name().to_string();
        if fusion != Fusion::default() {
            label.push_str(&format!("/{}", fusion.name()));
        }
        if let Some(w) = weights {
            label.push_str(&format!("/w{}-{}-{}", w.lexical, w.fuzzy, w.semantic));
        }
        if let Some(b) = &boosts {
            label.push_str(&format!("/boosts{}", serde_json::to_string(b)?));
        }
        if !feedback {
            label.push_str("/no-feedback");
        }
        if let Some(lambda) = mmr {
            label.push_str(&format!("/mmr{lambda}"));
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
            let mut request =
                SearchRequest::new(text, principal).k(k).mode(mode).fusion(fusion).snippet_chars(0).feedback(feedback);
            if let Some(w) = weights {
                request = request.weights(w);
            }
            if let Some(b) = &boosts {
                request = request.boosts(b.clone());
            }
            if let Some(lambda) = mmr {
                request = request.mmr(lambda);
            }
            let response = index.search(&request)?;
            for (stage, us) in &response.stats.micros {
                *stages.entry(stage.name()).or_default() += us;
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
    // A saved baseline is another run (another index or build), so even a run of its own label
    // is compared with it; a baseline of this invocation is not compared with itself.
    let saved = saved_baseline.is_some();
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
            if saved || report.mode != base.mode || report.dataset != base.dataset {
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
    match query.principal_tokens() {
        Some(tokens) => Principal::from_verified_tokens(tokens),
        None => Principal::public(),
    }
}
