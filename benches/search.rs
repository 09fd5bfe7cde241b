//! `search()` and the writer through the public API, as users call them, on SciFact and
//! NFCorpus: every mode; filtered search at 100 %, 50 %, 10 % and 1 % selectivity; one index of
//! 100 tenants; indexing with and without embeddings.
//!
//! ```text
//! cargo bench --bench search                      # all groups, a few minutes
//! cargo bench --bench search -- nfcorpus_search   # one group
//! ```
//! The semantic modes need an index built with embeddings: `bash scripts/report.sh` (or
//! `braid index ../shared/datasets/scifact --index ~/.cache/braid/eval/scifact-minilm --model
//! default`) leaves them in `$BRAID_EVAL_DIR` (by default `~/.cache/braid/eval`), where this
//! bench looks for `<dataset>-minilm`; the groups that need one say so and are skipped when it
//! is missing. Each sample runs 100 test queries one after another (k = 10, defaults
//! otherwise: suggestions on, snippets of 200 characters), so criterion's throughput is q/s.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use braid::ingest::Source;
use braid::models::OnnxEmbedder;
use braid::{Index, IndexConfig, Mode, Principal, Record, SearchRequest};
use criterion::{criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion, Throughput};

#[path = "../tests/shared_dir.rs"]
mod shared_dir;

fn dataset_dir(name: &str) -> PathBuf {
    shared_dir::shared(&format!("datasets/{name}"))
}

fn records(name: &str) -> Vec<Record> {
    let index_schema = IndexConfig::default().schema;
    Source::detect(&dataset_dir(name)).unwrap().records(&index_schema).map(|r| r.unwrap()).collect()
}

fn queries(name: &str) -> Vec<String> {
    let dataset = braid_eval::Dataset::load(&dataset_dir(name), "test").unwrap();
    dataset.queries.iter().take(100).map(|q| q.text.clone()).collect()
}

fn lexical_index(records: &[Record]) -> Index {
    let index = Index::create_in_ram(IndexConfig::default()).unwrap();
    let mut w = index.writer().unwrap();
    for r in records {
        w.upsert(r).unwrap();
    }
    w.commit().unwrap();
    index
}

/// As `braid index` leaves it: one segment.
fn optimized_index(records: &[Record]) -> Index {
    let index = lexical_index(records);
    index.writer().unwrap().optimize().unwrap();
    index
}

fn embedder() -> Option<Arc<OnnxEmbedder>> {
    match OnnxEmbedder::builder().intra_threads(1).build() {
        Ok(model) => Some(Arc::new(model)),
        Err(e) => {
            eprintln!("embedding benches skipped: {e} (run scripts/setup-onnxruntime.sh)");
            None
        }
    }
}

/// The dataset's index with embeddings from the report's cache, when it has been built.
fn semantic_index(name: &str) -> Option<Index> {
    let root = std::env::var_os("BRAID_EVAL_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/braid/eval")))?;
    let dir = root.join(format!("{name}-minilm"));
    let Ok(index) = Index::builder().embedder(embedder()?).open(&dir) else {
        eprintln!(
            "{name}: semantic benches skipped: no index with embeddings at {} (bash scripts/report.sh)",
            dir.display()
        );
        return None;
    };
    Some(index)
}

fn bounded<'a>(
    c: &'a mut Criterion,
    name: &str,
    queries: usize,
) -> BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group(name);
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(queries as u64));
    group
}

fn run_queries(index: &Index, queries: &[String], principal: &Principal, mode: Mode) {
    run_requests(index, queries, |q| SearchRequest::new(q, principal.clone()).mode(mode).k(10));
}

fn run_requests(index: &Index, queries: &[String], request: impl Fn(&str) -> SearchRequest) {
    for q in queries {
        std::hint::black_box(index.search(&request(q)).unwrap());
    }
}

fn bench_modes(c: &mut Criterion, name: &str, index: &Index, modes: &[Mode], queries: &[String]) {
    let mut group = bounded(c, name, queries.len());
    for &mode in modes {
        group.bench_with_input(BenchmarkId::from_parameter(mode.name()), &mode, |b, &mode| {
            b.iter(|| run_queries(index, queries, &Principal::public(), mode))
        });
    }
    if modes.contains(&Mode::Lexical) {
        // Ids only, as the peers return them; snippets and suggestions off.
        group.bench_function("lexical_ids_only", |b| {
            b.iter(|| {
                run_requests(index, queries, |q| {
                    let request = SearchRequest::new(q, Principal::public()).mode(Mode::Lexical).k(10);
                    request.ids_only(true).suggest(false).snippet_chars(0)
                })
            })
        });
    }
    group.finish();
}

/// Every mode on SciFact and NFCorpus: lexical legs on an in-memory index, the semantic modes
/// (query embedding included, one thread) on the report's embedded index.
fn search(c: &mut Criterion) {
    for name in ["scifact", "nfcorpus"] {
        let queries = queries(name);
        let index = optimized_index(&records(name));
        bench_modes(c, &format!("{name}_search_100q"), &index, &[Mode::Lexical, Mode::Fuzzy, Mode::Hybrid], &queries);
        if let Some(index) = semantic_index(name) {
            let modes = [Mode::Semantic, Mode::Hybrid];
            bench_modes(c, &format!("{name}_search_100q_minilm"), &index, &modes, &queries);
        }
    }
}

/// Permissions first, at what cost: SciFact records spread over 100 groups; principals who see
/// all of them, half, a tenth and a hundredth of the records.
fn filtered(c: &mut Criterion) {
    let records: Vec<Record> =
        records("scifact").into_iter().enumerate().map(|(i, r)| r.acl([format!("group:g{}", i % 100)])).collect();
    let queries = queries("scifact");
    let index = optimized_index(&records);
    let principal = |groups: usize| Principal::from_verified_tokens((0..groups).map(|g| format!("group:g{g}")));
    let mut group = bounded(c, "scifact_filtered_100q", queries.len());
    for mode in [Mode::Lexical, Mode::Fuzzy, Mode::Hybrid] {
        for (label, groups) in [("100%", 100), ("50%", 50), ("10%", 10), ("1%", 1)] {
            let who = principal(groups);
            group.bench_function(BenchmarkId::new(mode.name(), label), |b| {
                b.iter(|| run_queries(&index, &queries, &who, mode))
            });
        }
    }
    group.finish();
}

/// One index, 100 tenants: SciFact records spread over `tenant:t0` … `tenant:t99`; a tenant's
/// principal sees its 1 %, and statistics come from those records only.
fn tenants(c: &mut Criterion) {
    let records: Vec<Record> =
        records("scifact").into_iter().enumerate().map(|(i, r)| r.acl([format!("tenant:t{}", i % 100)])).collect();
    let queries = queries("scifact");
    let index = optimized_index(&records);
    let who = Principal::from_verified_tokens(["tenant:t7"]);
    let mut group = bounded(c, "scifact_100_tenants_100q", queries.len());
    for mode in [Mode::Lexical, Mode::Fuzzy, Mode::Hybrid] {
        group.bench_function(BenchmarkId::new(mode.name(), "one tenant"), |b| {
            b.iter(|| run_queries(&index, &queries, &who, mode))
        });
    }
    group.finish();
}

/// Indexing throughput (records/s): 1,000 SciFact records without embeddings, and 16 with
/// all-MiniLM-L6-v2 embeddings on one thread (embedding dominates: a few records per second).
fn indexing(c: &mut Criterion) {
    let records: Vec<Record> = records("scifact").into_iter().take(1000).collect();
    let mut group = c.benchmark_group("scifact_index");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    group.throughput(Throughput::Elements(records.len() as u64));
    group.bench_function("lexical_1000_records", |b| b.iter(|| lexical_index(&records)));
    if let Some(model) = embedder() {
        let slice = &records[..16];
        group.throughput(Throughput::Elements(slice.len() as u64));
        group.bench_function("embedded_16_records", |b| {
            b.iter(|| {
                let index = Index::builder().embedder(model.clone()).create_in_ram().unwrap();
                let mut w = index.writer().unwrap();
                for r in slice {
                    w.upsert(r).unwrap();
                }
                w.commit().unwrap();
                index
            })
        });
    }
    group.finish();
}

criterion_group!(benches, search, filtered, tenants, indexing);
criterion_main!(benches);
