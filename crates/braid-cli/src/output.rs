//! Human-readable search output.

use std::io::IsTerminal;

use braid::SearchResponse;

/// Prints `response` for a person. `public_caller`: the search ran as the public caller (no
/// `--principal`), said beside an empty answer — from the command line alone, never from the
/// index, so it tells nothing about records the caller may not see.
pub fn print_response(response: &SearchResponse, public_caller: bool) {
    let tty = std::io::stdout().is_terminal();
    let (open, close) = if tty { ("\x1b[1m", "\x1b[0m") } else { ("**", "**") };
    if let Some(first) = response.suggestions.first() {
        let fixes: Vec<String> =
            response.suggestions.iter().map(|s| format!("{} → {}", s.term, s.suggestion)).collect();
        println!("did you mean: {}{}", fixes.join(", "), if first.distance > 1 { " (2 edits)" } else { "" });
    }
    if response.hits.is_empty() {
        println!("no results");
        if public_caller {
            println!("(searched as the public caller: --principal gives the caller's ACL tokens)");
        }
    }
    for (i, hit) in response.hits.iter().enumerate() {
        println!("{:>2}. {}  [{}]  score {:.4}", i + 1, braid::Citation::from(hit), hit.id, hit.score);
        let snippet = hit.snippet.marked(open, close).replace('\n', " ");
        if !snippet.trim().is_empty() {
            println!("    {}", snippet.trim());
        }
    }
    if let Some(facets) = &response.facets {
        println!("— {} matching records", facets.matched);
        for (field, values) in &facets.values {
            let counts: Vec<String> = values.iter().map(|v| format!("{} {}", v.value, v.count)).collect();
            println!("  {field}: {}", counts.join(" · "));
        }
        for (field, ranges) in &facets.ranges {
            let bound = |b: Option<f64>| b.map_or_else(String::new, |b| b.to_string());
            let counts: Vec<String> =
                ranges.iter().map(|r| format!("{}..{} {}", bound(r.from), bound(r.to), r.count)).collect();
            println!("  {field}: {}", counts.join(" · "));
        }
    }
    if let Some(cursor) = &response.next_cursor {
        println!("— next page: --cursor {cursor}");
    }
    let s = &response.stats;
    let legs: Vec<String> =
        s.legs.iter().map(|l| format!("{l} {}", s.candidates.get(l).copied().unwrap_or(0))).collect();
    println!(
        "— {} hits · legs: {} · {:.1} ms",
        response.hits.len(),
        legs.join(", "),
        s.micros.get(&braid::Stage::Total).copied().unwrap_or(0) as f64 / 1000.0
    );
}
