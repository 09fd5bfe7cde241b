//! Regenerates README tables from JSON results.
//!
//! A table lives between an opening marker that names its JSON files (in `results/`, without
//! `.json`) and `<!-- /results -->`:
//!
//! ```text
//! <!-- results: scifact nfcorpus -->     rows of `braid eval --out` reports, in file order
//! <!-- peers: peers-scifact -->          the peers comparison written by `braid-report score`
//! <!-- /results -->
//! ```
//! Everything between the markers is replaced; everything else is left as it is.

use std::fs;
use std::path::Path;

use anyhow::{bail, Context, Result};
use braid_eval::Report;

use crate::peers::{self, Scored};

const END: &str = "<!-- /results -->";

fn read_json<T: serde::de::DeserializeOwned>(results: &Path, name: &str) -> Result<T> {
    let path = results.join(format!("{name}.json"));
    let text = fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// The table an opening marker asks for, or `None` when `line` is not an opening marker.
fn table_for(line: &str, results: &Path) -> Result<Option<String>> {
    let Some(inner) = line.trim().strip_prefix("<!--").and_then(|l| l.strip_suffix("-->")) else { return Ok(None) };
    let Some((kind, names)) = inner.trim().split_once(':') else { return Ok(None) };
    let names: Vec<&str> = names.split_whitespace().collect();
    match kind.trim() {
        "results" => {
            let mut table = Report::table_header().to_string();
            for name in names {
                for report in read_json::<Vec<Report>>(results, name)? {
                    table.push('\n');
                    table.push_str(&report.table_row());
                }
            }
            Ok(Some(table))
        }
        "peers" => {
            let scored: Vec<Scored> = names.iter().map(|n| read_json(results, n)).collect::<Result<_>>()?;
            let mut table = peers::table(&scored);
            let mut notes: Vec<&str> = scored.iter().map(|s| s.note.as_str()).filter(|n| !n.is_empty()).collect();
            notes.dedup();
            for note in notes {
                table.push_str(&format!("\n\n{note}"));
            }
            Ok(Some(table))
        }
        _ => Ok(None),
    }
}

/// Rewrites every marked table of `text`.
fn rewrite(text: &str, results: &Path) -> Result<String> {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        let Some(table) = table_for(line, results)? else { continue };
        if !lines.by_ref().any(|l| l.trim() == END) {
            bail!("the marker {:?} has no closing {END}", line.trim());
        }
        out.push_str(&table);
        out.push('\n');
        out.push_str(END);
        out.push('\n');
    }
    Ok(out)
}

/// Rewrites the README's marked tables in place from the JSON files in `results`.
pub fn regenerate(results: &Path, readme: &Path) -> Result<()> {
    let text = fs::read_to_string(readme).with_context(|| format!("reading {}", readme.display()))?;
    let new = rewrite(&text, results)?;
    fs::write(readme, new).with_context(|| format!("writing {}", readme.display()))?;
    eprintln!("regenerated the tables of {}", readme.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marked_tables_are_replaced_and_the_rest_kept() {
        let dir = std::env::temp_dir().join(format!("braid-readme-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let report = Report {
            dataset: "tiny".into(),
            mode: "lexical".into(),
            queries: 3,
            ndcg_at_10: 0.5,
            recall_at_100: 1.0,
            mrr_at_10: 0.25,
            p50_ms: 1.5,
            p95_ms: 12.0,
            ndcg_ci95: None,
            vs: None,
            per_query: Default::default(),
        };
        fs::write(dir.join("tiny.json"), serde_json::to_string(std::slice::from_ref(&report)).unwrap()).unwrap();
        let text = "# T\n\n<!-- results: tiny -->\n| old | table |\n<!-- /results -->\nafter\n";
        let new = rewrite(text, &dir).unwrap();
        let expected = format!(
            "# T\n\n<!-- results: tiny -->\n{}\n{}\n{END}\nafter\n",
            Report::table_header(),
            report.table_row()
        );
        assert_eq!(new, expected);
        assert_eq!(rewrite(&new, &dir).unwrap(), new, "regenerating twice changes nothing");
        assert!(rewrite("<!-- results: tiny -->\nno end\n", &dir).is_err());
        assert!(rewrite("<!-- results: missing -->\n<!-- /results -->\n", &dir).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }
}
