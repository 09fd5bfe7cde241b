//! `search()` per mode on SciFact, through the public API, as users call it.
//!
//! ```text
//! cargo bench --bench search
//! # semantic and hybrid-with-semantic too, on an index built once with embeddings:
//! braid index ../shared/datasets/scifact --index target/scifact-minilm --model default
//! BRAID_BENCH_INDEX=target/scifact-minilm cargo bench --bench search
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use braid::ingest::Source;
use braid::{Index, IndexConfig, Mode, Principal, Record, SearchRequest};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn scifact_dir() -> PathBuf {
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    loop {
        let candidate = dir.join("shared/datasets/scifact");
        if candidate.is_dir() {
            return candidate;
        }
        assert!(dir.pop(), "no shared/datasets/scifact above the repository (see datasets/README.md)");
    }
}

fn records() -> Vec<Record> {
    let index_schema = IndexConfig::default().schema;
    Source::detect(&scifact_dir()).unwrap().records(&index_schema).map(|r| r.unwrap()).collect()
}

fn queries() -> Vec<String> {
    let dataset = braid_eval::Dataset::load(&scifact_dir(), "test").unwrap();
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

/// An index with embeddings, when `BRAID_BENCH_INDEX` names one built with `--model default`.
fn semantic_index() -> Option<Index> {
    let dir = std::env::var_os("BRAID_BENCH_INDEX")?;
    let index = Index::open(&PathBuf::from(dir)).ok()?;
    let model = braid::models::OnnxEmbedder::builder().intra_threads(1).build().ok()?;
    index.attach_embedder(Arc::new(model)).ok()?;
    Some(index)
}

fn bench_modes(c: &mut Criterion, name: &str, index: &Index, modes: &[Mode], queries: &[String]) {
    let mut group = c.benchmark_group(name);
    group.sample_size(10);
    group.throughput(Throughput::Elements(queries.len() as u64));
    for &mode in modes {
        group.bench_with_input(BenchmarkId::from_parameter(mode.name()), &mode, |b, &mode| {
            b.iter(|| {
                for q in queries {
                    let r =
                        index.search(&SearchRequest::new(q.as_str(), Principal::public()).mode(mode).k(10)).unwrap();
                    std::hint::black_box(r);
                }
            })
        });
    }
    group.finish();
}

fn search(c: &mut Criterion) {
    let records = records();
    let queries = queries();
    let index = lexical_index(&records);
    bench_modes(c, "scifact_search_100q", &index, &[Mode::Lexical, Mode::Fuzzy, Mode::Hybrid], &queries);
    if let Some(index) = semantic_index() {
        bench_modes(c, "scifact_search_100q_minilm", &index, &[Mode::Semantic, Mode::Hybrid, Mode::Auto], &queries);
    } else {
        eprintln!("semantic benches skipped: set BRAID_BENCH_INDEX to an index built with --model default");
    }
}

/// Permissions first, at what cost: the same queries as a principal who sees every record
/// and as one who sees a tenth of them (records spread over ten groups).
fn restricted(c: &mut Criterion) {
    let records: Vec<Record> =
        records().into_iter().enumerate().map(|(i, r)| r.acl([format!("group:g{}", i % 10)])).collect();
    let queries = queries();
    let index = lexical_index(&records);
    let everyone = Principal::from_verified_tokens((0..10).map(|g| format!("group:g{g}")));
    let tenth = Principal::from_verified_tokens(["group:g3"]);
    let mut group = c.benchmark_group("scifact_acl_100q");
    group.sample_size(10);
    group.throughput(Throughput::Elements(queries.len() as u64));
    for mode in [Mode::Lexical, Mode::Fuzzy, Mode::Hybrid] {
        for (who, principal) in [("all", &everyone), ("tenth", &tenth)] {
            group.bench_function(BenchmarkId::new(mode.name(), who), |b| {
                b.iter(|| {
                    for q in &queries {
                        let request = SearchRequest::new(q.as_str(), principal.clone()).mode(mode).k(10);
                        std::hint::black_box(index.search(&request).unwrap());
                    }
                })
            });
        }
    }
    group.finish();
}

fn indexing(c: &mut Criterion) {
    let records: Vec<Record> = records().into_iter().take(1000).collect();
    let mut group = c.benchmark_group("scifact_index_1000_docs");
    group.sample_size(10);
    group.throughput(Throughput::Elements(records.len() as u64));
    group.bench_function("lexical", |b| b.iter(|| lexical_index(&records)));
    group.finish();
}

criterion_group!(benches, search, restricted, indexing);
criterion_main!(benches);
