//! Build a prompt-ready context block for a RAG answer from the bundled help center.
//!
//! ```text
//! cargo run --release --example rag_context -- "how do I rotate an API key?"
//! cargo run --release --example rag_context -- --principal group:support "refund after 30 days"
//! ```
//!
//! The top sections (best section per article, up to four articles) are read back whole —
//! a short one together with the section after it (`Index::neighbours`) — and printed as
//! numbered sources a model can cite: article, heading path and line range. The
//! sources and step timings are reported after the block, as data beside the text, never in
//! the text a model reads.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Instant;

use braid::ingest::Source;
use braid::{Index, IndexConfig, Mode, SearchRequest};

/// Articles cited at most.
const MAX_SOURCES: usize = 4;
/// Sections shorter than this are extended with the section that follows them.
const SHORT_SECTION_BYTES: usize = 400;

#[path = "support/args.rs"]
mod args;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Arguments: optional `--principal tok1,tok2`, then the query words.
    let (principal, args) = args::principal_and_words();
    let question = if args.is_empty() { "how do I rotate an API key?".to_string() } else { args.join(" ") };

    let t = Instant::now();
    let index = Index::create_in_ram(IndexConfig::default())?;
    let mut writer = index.writer()?;
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("datasets/helpcenter");
    for record in Source::detect(&corpus)?.records(&index.config().schema) {
        writer.upsert(&record?)?;
    }
    writer.commit()?;
    let index_ms = t.elapsed().as_secs_f64() * 1000.0;

    let t = Instant::now();
    let response = index.search(&SearchRequest::new(question.as_str(), principal.clone()).mode(Mode::Hybrid).k(20))?;
    let search_ms = t.elapsed().as_secs_f64() * 1000.0;

    // Collapse to the best section per article, then read each section back whole — as the
    // same principal, so nothing the search could not show is ever read.
    let t = Instant::now();
    let mut seen = HashSet::new();
    let mut sources = Vec::new();
    for hit in &response.hits {
        let article = hit.parent.clone().unwrap_or_else(|| hit.id.clone());
        if !seen.insert(article.clone()) {
            continue;
        }
        // A short section reads better with the one after it: `neighbours` returns both, in
        // line order, skipping anything this principal may not see.
        let window = index.neighbours(&hit.id, &principal, 0, 1)?;
        let Some(mut section) = window.first().cloned() else { continue };
        if section.body.len() < SHORT_SECTION_BYTES {
            if let Some(next) = window.get(1) {
                section.body = format!("{}\n\n{}", section.body.trim_end(), next.body);
                if let (Some((s, _)), Some((_, e))) = (section.lines, next.lines) {
                    section.lines = Some((s, e));
                }
            }
        }
        sources.push((article, section));
        if sources.len() == MAX_SOURCES {
            break;
        }
    }
    let read_ms = t.elapsed().as_secs_f64() * 1000.0;

    println!("Answer the question using only the sources below. Cite them as [1], [2], ….\n");
    println!("Question: {question}\n");
    for (i, (_, section)) in sources.iter().enumerate() {
        println!("[{}] {}", i + 1, section.citation());
        println!("{}\n", section.body.trim());
    }
    if sources.is_empty() {
        println!("(no sources visible to this principal)");
    }

    // Telemetry beside the answer.
    eprintln!("--- sources");
    for (i, (article, section)) in sources.iter().enumerate() {
        eprintln!("[{}] id={} article={article} lines={:?}", i + 1, section.id, section.lines);
    }
    eprintln!(
        "--- steps: index {index_ms:.1} ms · search {search_ms:.1} ms ({} legs) · read {read_ms:.1} ms",
        response.stats.legs.len()
    );
    Ok(())
}
