//! Help-center search over the bundled Ferrybox corpus (`datasets/helpcenter`).
//!
//! ```text
//! cargo run --release --example helpcenter -- "can I send it back if I no longer want it?"
//! cargo run --release --example helpcenter -- --principal group:support "refund exceptions"
//! cargo run --release --example helpcenter            # interactive: one query per line
//! ```
//!
//! The first run indexes every article, section by section, into `target/helpcenter-index`
//! (set `BRAID_HELPCENTER_INDEX` to change it); later runs reuse that index. Each answer cites
//! its article, heading path and line range so a reader — or a RAG prompt — can open the source.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use braid::ingest::Source;
use braid::{Index, IndexConfig, Mode, Principal, SearchRequest, SearchResponse};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Arguments: optional `--principal tok1,tok2`, then the query words.
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut tokens: Vec<String> = Vec::new();
    if let Some(at) = args.iter().position(|a| a == "--principal") {
        if at + 1 < args.len() {
            tokens = args[at + 1].split(',').map(str::to_string).collect();
            args.drain(at..=at + 1);
        }
    }
    // The operator's command line is a verified source of principal tokens.
    let principal = Principal::from_verified_tokens(&tokens);

    let corpus = repo_root().join("datasets/helpcenter");
    let index = open_or_build(&corpus)?;
    println!("{} sections indexed · legs: lexical + fuzzy (no embedding model configured)", index.num_records());

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

/// Reuses the index when it was built from the same corpus; rebuilds it otherwise.
fn open_or_build(corpus: &Path) -> Result<Index, Box<dyn std::error::Error>> {
    let dir = std::env::var_os("BRAID_HELPCENTER_INDEX")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/helpcenter-index"));
    if let Ok(index) = Index::open(&dir) {
        if index.num_records() > 0 {
            return Ok(index);
        }
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    let index = Index::create(&dir, IndexConfig::default())?;
    let mut writer = index.writer()?;
    for record in Source::detect(corpus)?.records(&index.config().schema) {
        writer.upsert(&record?)?;
    }
    writer.commit()?;
    Ok(index)
}

fn answer(index: &Index, principal: &Principal, query: &str) -> Result<(), Box<dyn std::error::Error>> {
    let response = index.search(&SearchRequest::new(query, principal.clone()).mode(Mode::Auto).k(5))?;
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
        let article = hit.parent.as_deref().unwrap_or(&hit.id);
        let path = if hit.section.is_empty() { String::new() } else { format!(" › {}", hit.section.join(" > ")) };
        let lines = hit.lines.map(|(s, e)| format!(", lines {s}–{e}")).unwrap_or_default();
        println!("  {}. {}{}", rank + 1, hit.title, path);
        println!("     [{article}.md{lines}]");
        let snippet = hit.snippet.marked("«", "»").split_whitespace().collect::<Vec<_>>().join(" ");
        if !snippet.is_empty() {
            println!("     {snippet}");
        }
    }
    let ms = response.stats.micros.get("total").copied().unwrap_or(0) as f64 / 1000.0;
    println!("  ({} of {} visible sections matched · {ms:.1} ms)", response.hits.len(), response.stats.allowed);
}
