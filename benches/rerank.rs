//! The rerank stage alone: a MiniLM-L6-shaped cross-encoder (the untrained cost fixture, same
//! layers and shapes as ms-marco-MiniLM-L-6-v2) scoring N SciFact (then NFCorpus) abstracts of
//! about 200 words against a query of the same dataset, N = 10, 20, 50. Criterion's median is the p50 per rerank call.
//!
//! ```text
//! cargo bench --bench rerank
//! ```

use braid::models::CrossEncoder;
use braid::Reranker;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

#[path = "../tests/shared_dir.rs"]
mod shared_dir;
use shared_dir::{shared, unfetchable};

fn rerank(c: &mut Criterion) {
    let Some(fixture) = unfetchable("models/test-fixtures/minilm-l6-cross-encoder-untrained", "bench rerank") else {
        return;
    };
    let model = CrossEncoder::builder()
        .model_dir(fixture)
        .max_len(256)
        .build()
        .expect("cost fixture (run scripts/setup-onnxruntime.sh)");
    // Abstracts of 190–210 words, as in shared/models/README.md's measurement.
    for (name, query) in [
        ("scifact", "0-dimensional biomaterials show inductive properties."),
        ("nfcorpus", "Do Cholesterol Statin Drugs Cause Breast Cancer?"),
    ] {
        // Abstracts of 190–210 words, as in shared/models/README.md's measurement.
        let passages: Vec<String> = braid_eval::read_corpus(&shared(&format!("datasets/{name}/corpus.jsonl")))
            .filter_map(Result::ok)
            .map(|d| format!("{} {}", d.title, d.text))
            .filter(|p| (190..=210).contains(&p.split_whitespace().count()))
            .take(50)
            .collect();
        let mut group = c.benchmark_group(format!("rerank_{name}_minilm_l6_256_tokens"));
        group.sample_size(10);
        for n in [10usize, 20, 50] {
            let batch: Vec<&str> = passages.iter().take(n).map(String::as_str).collect();
            group.bench_with_input(BenchmarkId::from_parameter(n), &batch, |b, batch| {
                b.iter(|| std::hint::black_box(model.score(query, batch).unwrap()))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, rerank);
criterion_main!(benches);
