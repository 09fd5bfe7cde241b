//! Embedding throughput of Braid's ONNX embedder on SciFact passages.
//!
//! ```text
//! cargo run --release --example embed_throughput -- <N docs> <threads> [batch] [sorted]
//! ```
//! Prints one JSON line: docs, threads, batch, seconds, docs_per_s (tokenisation included,
//! after one warm-up batch). `sorted` passes every passage to one `embed` call, which orders
//! them by token count before cutting batches (less padding); without it each batch is one
//! call in corpus order. `benches/peers/embed_vs_python.sh` runs it beside Python
//! onnxruntime with the same model, passages, batch size and thread count.

use std::time::Instant;

use braid::models::OnnxEmbedder;
use braid::Embedder;

#[path = "../tests/shared_dir.rs"]
mod shared_dir;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sorted = std::env::args().skip(1).any(|a| a == "sorted");
    let n = args.first().copied().unwrap_or(256);
    let threads = args.get(1).copied().unwrap_or(1);
    let batch = args.get(2).copied().unwrap_or(32);
    let corpus = shared_dir::shared_dir()
        .map(|dir| dir.join("datasets/scifact/corpus.jsonl"))
        .filter(|path| path.is_file())
        .ok_or("no shared/datasets/scifact (set BRAID_SHARED; see datasets/README.md)")?;
    let passages: Vec<String> = braid_eval::read_corpus(&corpus)
        .take(n)
        .map(|d| d.map(|d| format!("{} {}", d.title, d.text)))
        .collect::<Result<_, _>>()?;
    let model = OnnxEmbedder::builder().intra_threads(threads).batch_size(batch).build()?;
    let texts: Vec<&str> = passages.iter().map(String::as_str).collect();
    model.embed(&texts[..batch.min(texts.len())])?; // warm-up
    let started = Instant::now();
    if sorted {
        std::hint::black_box(model.embed(&texts)?);
    } else {
        for chunk in texts.chunks(batch) {
            std::hint::black_box(model.embed(chunk)?);
        }
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{{\"engine\":\"braid\",\"docs\":{},\"threads\":{threads},\"batch\":{batch},\"sorted\":{sorted},\"seconds\":{secs:.3},\"docs_per_s\":{:.2}}}",
        texts.len(),
        texts.len() as f64 / secs
    );
    Ok(())
}
