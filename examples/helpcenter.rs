//! Help-center search over the bundled Ferrybox corpus (`datasets/helpcenter`).
//!
//! ```text
//! cargo run --release --example helpcenter -- "can I send it back if I no longer want it?"
//! cargo run --release --example helpcenter -- --principal group:support "refund exceptions"
//! cargo run --release --example helpcenter            # interactive: one query per line
//! ```
//!
//! The first run indexes every article, section by section, into `target/helpcenter-index`
//! (set `BRAID_HELPCENTER_INDEX` to change it); later runs reuse that index. When ONNX Runtime
//! is installed (`bash scripts/setup-onnxruntime.sh`) the sections are embedded too and search
//! is hybrid; otherwise it is lexical + fuzzy and says so. Queries are expanded with the help
//! center's `synonyms.txt` (docs/search-box.md). Each answer cites
//! its article, heading path and line range so a reader — or a RAG prompt — can open the source.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use braid::ingest::Source;
use std::sync::Arc;

use braid::{Embedder, Index, IndexConfig, Mode, Principal, SearchRequest, SearchResponse};

#[path = "support/args.rs"]
mod args;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Arguments: optional `--principal tok1,tok2`, then the query words.
    let (principal, args) = args::principal_and_words();

    let corpus = repo_root().join("datasets/helpcenter");
    // With ONNX Runtime and the all-MiniLM-L6-v2 model available, search is hybrid; without,
    // lexical + fuzzy, and we say why.
    let embedder = match braid::models::OnnxEmbedder::builder().build() {
        Ok(model) => Some(Arc::new(model) as Arc<dyn Embedder>),
        Err(e) => {
            println!("semantic leg off: {e}");
            None
        }
    };
    let index = open_or_build(&corpus, embedder)?;
    let legs = if index.has_semantic() { "lexical + fuzzy + semantic (all-MiniLM-L6-v2)" } else { "lexical + fuzzy" };
    println!("{} sections indexed · legs: {legs}", index.num_records());

    if !args.is_empty() {
        answer(&index, &principal, &args.join(" "))?;
        return Ok(());
    }
    let stdin = std::io::stdin();
    loop {
        print!("search> ");
        std::io::stdout().flush()?;
        let mut line = String::new();
        if stdin.lock().read_line(&mut line)? == 0 {
            break;
        }
        if !line.trim().is_empty() {
            answer(&index, &principal, line.trim())?;
        }
    }
    Ok(())
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Reuses the index built on an earlier run (one per kind: with or without embeddings);
/// builds it otherwise. Re-upserting unchanged sections is a no-op, so edits to the corpus
/// are picked up cheaply.
fn open_or_build(corpus: &Path, embedder: Option<Arc<dyn Embedder>>) -> Result<Index, Box<dyn std::error::Error>> {
    let base = std::env::var_os("BRAID_HELPCENTER_INDEX")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/helpcenter-index"));
    let dir = if embedder.is_some() { base.with_extension("minilm") } else { base };
    let builder = match embedder {
        Some(embedder) => Index::builder().embedder(embedder),
        None => Index::builder(),
    };
    let index = match builder.clone().open(&dir) {
        Ok(index) => index,
        Err(_) => {
            if dir.exists() {
                std::fs::remove_dir_all(&dir)?;
            }
            builder.config(IndexConfig::default()).create(&dir)?
        }
    };
    if index.has_semantic() && index.embedding().is_none() {
        println!("embedding the corpus once (about a minute on 2 cores)…");
    }
    let mut writer = index.writer()?;
    for record in Source::detect(corpus)?.records(&index.config().schema) {
        writer.upsert(&record?)?;
    }
    writer.commit()?;
    // The help center's synonyms ("send back" = "return", "2FA" = "two-factor
    // authentication", …): applied to queries, so changing them needs no re-index.
    let synonyms = std::fs::read_to_string(corpus.join("synonyms.txt"))?;
    index.set_synonyms(braid::Synonyms::parse(&synonyms)?)?;
    Ok(index)
}

fn answer(index: &Index, principal: &Principal, query: &str) -> Result<(), Box<dyn std::error::Error>> {
    let response = index.search(&SearchRequest::new(query, principal.clone()).mode(Mode::Hybrid).k(5))?;
    print_answers(query, &response);
    Ok(())
}

fn print_answers(query: &str, response: &SearchResponse) {
    println!("\n“{query}”");
    if !response.suggestions.is_empty() {
        let fixes: Vec<String> =
            response.suggestions.iter().map(|s| format!("{} → {}", s.term, s.suggestion)).collect();
        println!("  did you mean: {}", fixes.join(", "));
    }
    if response.hits.is_empty() {
        println!("  no answers visible to you");
    }
    for (rank, hit) in response.hits.iter().enumerate() {
        println!("  {}. {}  [{}]", rank + 1, braid::Citation::from(hit), hit.id);
        let snippet = hit.snippet.marked("«", "»").split_whitespace().collect::<Vec<_>>().join(" ");
        if !snippet.is_empty() {
            println!("     {snippet}");
        }
    }
    let ms = response.stats.micros.get(&braid::Stage::Total).copied().unwrap_or(0) as f64 / 1000.0;
    println!("  ({} of {} visible sections matched · {ms:.1} ms)", response.hits.len(), response.stats.allowed);
}
