//! Regenerates README tables from JSON results.
//!
//! A table lives between an opening marker that names its JSON files (in `results/`, without
//! `.json`) and `<!-- /results -->`:
//!
//! ```text
//! <!-- results: scifact nfcorpus -->     rows of `braid eval --out` reports, in file order
//! <!-- peers: peers-scifact -->          the peers comparison written by `braid-report score`
//! <!-- peers-quality: peers-scifact -->  its nDCG@10 alone, a row per set and mode, each peer
//!                                        over one vector a record and over Braid's passages
//! <!-- peers-vs-default: peers-x -->     Braid's default against every other row, query by
//!                                        query (files scored with the comparison only)
//! <!-- defaults: scifact:SciFact -->     the headline table from `defaults/<set>.json` and
//!                                        `defaults/<set>-misspelt.json` (`scripts/defaults.sh`)
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
        "peers-quality" => {
            let scored: Vec<Scored> = names.iter().map(|n| read_json(results, n)).collect::<Result<_>>()?;
            Ok(Some(peers::quality_table(&scored)))
        }
        "peers-vs-default" => {
            let scored: Vec<Scored> = names.iter().map(|n| read_json(results, n)).collect::<Result<_>>()?;
            Ok(Some(peers::vs_default_table(&scored)))
        }
        "defaults" => {
            let sets: Vec<(&str, &str)> = names.iter().map(|n| n.split_once(':').unwrap_or((n, n))).collect();
            Ok(Some(defaults_table(results, &sets)?))
        }
        _ => Ok(None),
    }
}

/// The headline table: every set's legs alone, hybrid with RRF and with the blend (the default,
/// its paired difference with RRF beside it), then the misspelt rows.
fn defaults_table(results: &Path, sets: &[(&str, &str)]) -> Result<String> {
    let by_mode = |name: &str| -> Result<std::collections::BTreeMap<String, Report>> {
        let runs: Vec<Report> = read_json(&results.join("defaults"), name)?;
        Ok(runs.into_iter().map(|r| (r.mode.clone(), r)).collect())
    };
    let run = |runs: &std::collections::BTreeMap<String, Report>, mode: &str, name: &str| -> Result<Report> {
        runs.get(mode).cloned().with_context(|| format!("defaults/{name}.json has no {mode} run"))
    };
    let cell = |r: &Report| match &r.vs {
        Some(v) => format!("{:.4} ({:+.4}{})", r.ndcg_at_10, v.delta, if v.significant() { "\\*" } else { "" }),
        None => format!("{:.4}", r.ndcg_at_10),
    };
    let mut table = String::from(
        "| set (queries) | lexical | fuzzy | semantic | hybrid, RRF | **hybrid, blend** (default) |\n\
         |---|---:|---:|---:|---:|---:|",
    );
    let mut misspelt_rows = String::new();
    for (name, label) in sets {
        let clean = by_mode(name)?;
        let hybrid = run(&clean, "hybrid", name)?;
        table.push_str(&format!(
            "\n| {label} ({}) | {:.4} | {:.4} | {:.4} | {} | **{}** |",
            hybrid.queries,
            run(&clean, "lexical", name)?.ndcg_at_10,
            run(&clean, "fuzzy", name)?.ndcg_at_10,
            run(&clean, "semantic", name)?.ndcg_at_10,
            cell(&run(&clean, "hybrid/rrf", name)?),
            cell(&hybrid),
        ));
        let misspelt_name = format!("{name}-misspelt");
        let misspelt = by_mode(&misspelt_name)?;
        let blend = run(&misspelt, "hybrid+misspelt", &misspelt_name)?;
        misspelt_rows.push_str(&format!(
            "\n| {label}, one real misspelling per query ({}) | | | | {} | **{}** |",
            blend.queries,
            cell(&run(&misspelt, "hybrid/rrf+misspelt", &misspelt_name)?),
            cell(&blend),
        ));
    }
    table.push_str(&misspelt_rows);
    Ok(table)
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

    /// The README's and docs/results.md's tables are the ones the results files give: a
    /// results file changed without regenerating them (`bash scripts/report.sh`) fails here.
    #[test]
    fn the_repository_tables_are_up_to_date() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for doc in ["README.md", "docs/results.md"] {
            let text = fs::read_to_string(root.join(doc)).unwrap();
            let regenerated = rewrite(&text, &root.join("results")).unwrap();
            assert!(regenerated == text, "{doc}'s tables differ from results/: run `bash scripts/report.sh`");
        }
    }
}
