//! ARCHITECTURE.md held to the code, as rust-analyzer's tidy holds its docs: every path it
//! names exists, the tracing targets it lists are exactly the ones the code emits, and the
//! dependency rules it states are the ones the manifests declare. A change to the code that
//! makes the map wrong fails here, so the map is changed with it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn architecture() -> String {
    fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md is readable")
}

/// The lines of the section under `heading` (a `## ` heading), up to the next `## `.
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    let mut lines = text.lines().skip_while(|l| l.trim() != heading);
    assert!(lines.next().is_some(), "ARCHITECTURE.md has no {heading:?} section");
    lines.take_while(|l| !l.starts_with("## ")).collect()
}

/// The spans of `line` between backticks.
fn code_spans(line: &str) -> impl Iterator<Item = &str> {
    line.split('`').skip(1).step_by(2)
}

/// Where the repository keeps things: a word naming a path starts with one of these.
const TOP_LEVEL: &[&str] = &[
    "src/",
    "crates/",
    "tests/",
    "docs/",
    "scripts/",
    "benches/",
    "research/",
    "results/",
    "examples/",
    "datasets/",
    "python/",
    ".ci/",
];

/// The paths a text names: words starting with a top-level folder, or a crate's folder
/// (`braid-lexical/src/view.rs` means `crates/braid-lexical/src/view.rs`).
fn named_paths(text: &str, crates: &BTreeSet<String>) -> BTreeSet<String> {
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "/._-".contains(c);
    let mut paths = BTreeSet::new();
    for word in text.split(|c: char| !is_path_char(c)) {
        let word = word.trim_end_matches(['.', ',']);
        if !word.contains('/') {
            continue;
        }
        if TOP_LEVEL.iter().any(|top| word.starts_with(top)) || matches!(word, "README.md" | "ARCHITECTURE.md") {
            paths.insert(word.to_string());
        } else if crates.iter().any(|c| word.starts_with(&format!("{c}/"))) {
            paths.insert(format!("crates/{word}"));
        }
    }
    paths
}

fn crate_names() -> BTreeSet<String> {
    fs::read_dir(root().join("crates"))
        .expect("crates/ is readable")
        .map(|e| e.expect("a crates/ entry").file_name().to_string_lossy().into_owned())
        .filter(|name| root().join("crates").join(name).join("Cargo.toml").exists())
        .collect()
}

#[test]
fn every_path_the_map_names_exists() {
    let missing: Vec<String> = named_paths(&architecture(), &crate_names())
        .into_iter()
        .filter(|p| !root().join(p.trim_end_matches('/')).exists())
        .collect();
    assert!(missing.is_empty(), "ARCHITECTURE.md names paths that do not exist: {missing:?}");
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The tracing targets the library and binaries emit (`target: "braid::…"`).
fn targets_in_code() -> BTreeSet<String> {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    for name in crate_names() {
        rust_files(&root().join("crates").join(name).join("src"), &mut files);
    }
    let mut targets = BTreeSet::new();
    for file in files {
        let text = fs::read_to_string(&file).expect("a source file is readable");
        for piece in text.split("target:").skip(1) {
            let piece = piece.trim_start();
            let Some(rest) = piece.strip_prefix('"') else { continue };
            let Some((target, _)) = rest.split_once('"') else { continue };
            if target.starts_with("braid") {
                targets.insert(target.to_string());
            }
        }
    }
    targets
}

#[test]
fn the_tracing_targets_listed_are_the_ones_emitted() {
    let text = architecture();
    let listed: BTreeSet<String> = section(&text, "## Tracing targets")
        .into_iter()
        .flat_map(code_spans)
        .filter(|s| s.starts_with("braid::"))
        .map(str::to_string)
        .collect();
    assert_eq!(listed, targets_in_code(), "ARCHITECTURE.md's tracing targets (left) against the code's (right)");
}

/// The Braid crates a manifest's `[dependencies]` names.
fn braid_dependencies(manifest: &Path) -> BTreeSet<String> {
    let text = fs::read_to_string(manifest).expect("a Cargo.toml is readable");
    let mut in_dependencies = false;
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
            continue;
        }
        if !in_dependencies {
            continue;
        }
        let key = line.split(['=', '.', ' ']).next().unwrap_or_default();
        if key.starts_with("braid") {
            found.insert(key.to_string());
        }
    }
    found
}

#[test]
fn the_dependency_rules_stated_are_the_ones_declared() {
    let text = architecture();
    // Rows of the table: | `crate` | `dep`, `dep` | … |
    let mut stated: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in section(&text, "## Dependency rules") {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 3 || !cells[1].starts_with('`') {
            continue;
        }
        let name = cells[1].trim_matches('`').to_string();
        stated.insert(name, code_spans(cells[2]).map(str::to_string).collect());
    }
    let mut declared = BTreeMap::new();
    declared.insert("braid".to_string(), braid_dependencies(&root().join("Cargo.toml")));
    for name in crate_names() {
        declared.insert(name.clone(), braid_dependencies(&root().join("crates").join(&name).join("Cargo.toml")));
    }
    assert_eq!(stated, declared, "ARCHITECTURE.md's dependency rules (left) against the manifests (right)");
}

#[test]
fn path_words_are_found_and_crate_paths_resolved() {
    let crates: BTreeSet<String> = ["braid-core".to_string()].into();
    let found = named_paths("see `src/index/mod.rs`, braid-core/src/error.rs and (tests/tidy.rs).", &crates);
    let expected: BTreeSet<String> =
        ["src/index/mod.rs", "crates/braid-core/src/error.rs", "tests/tidy.rs"].map(String::from).into();
    assert_eq!(found, expected);
}
