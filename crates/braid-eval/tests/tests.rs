//! Integration tests over the shared BEIR datasets.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use braid_eval::{evaluate, read_corpus, read_queries, Dataset, EvalError, Report};

/// The shared folder's `datasets/`: `$BRAID_SHARED/datasets` when `BRAID_SHARED` is set (as
/// `scripts/test.sh` sets it after `scripts/fetch-shared.sh`), else `<ancestor>/shared/datasets`,
/// found by walking up from this crate.
fn datasets_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("BRAID_SHARED").filter(|v| !v.is_empty()) {
        return PathBuf::from(dir).join("datasets");
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    [cwd.as_path(), Path::new(env!("CARGO_MANIFEST_DIR"))]
        .iter()
        .flat_map(|start| start.ancestors())
        .map(|dir| dir.join("shared").join("datasets"))
        .find(|d| d.is_dir())
        .expect("no shared/datasets above the crate; run `bash scripts/fetch-shared.sh DIR` and set BRAID_SHARED=DIR")
}

fn load(name: &str) -> Dataset {
    Dataset::load(&datasets_dir().join(name), "test").expect("dataset loads")
}

#[test]
fn scifact_test_split_counts() {
    let ds = load("scifact");
    assert_eq!(ds.name, "scifact");
    assert_eq!(ds.queries.len(), 300);
    assert_eq!(ds.qrels.len(), 300);
    assert_eq!(ds.qrels.judgment_count(), 339);
    // Every judged query resolves, in qrels (sorted id) order.
    let ids: Vec<&str> = ds.queries.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(ids, ds.qrels.query_ids());
    assert!(ds.queries.iter().all(|q| !q.text.is_empty()));
    // All of SciFact's grades are 1.
    assert!(ds.qrels.iter().all(|(_, _, g)| g == 1));
}

#[test]
fn nfcorpus_test_split_counts() {
    let ds = load("nfcorpus");
    assert_eq!(ds.queries.len(), 323);
    assert_eq!(ds.qrels.judgment_count(), 12_334);
    let ids: Vec<&str> = ds.queries.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(ids, ds.qrels.query_ids());
    let grades: HashSet<i32> = ds.qrels.iter().map(|(_, _, g)| g).collect();
    assert_eq!(grades, HashSet::from([1, 2]));
}

#[test]
fn scifact_corpus_streams_and_covers_the_qrels() {
    let ds = load("scifact");
    let mut ids = HashSet::new();
    for doc in read_corpus(&ds.corpus_path()) {
        let doc = doc.expect("every line parses");
        assert!(doc.metadata.is_empty() && doc.acl.is_empty());
        assert!(ids.insert(doc.id), "ids are unique");
    }
    assert_eq!(ids.len(), 5_183);
    assert!(ds.qrels.iter().all(|(_, d, _)| ids.contains(d)));
    // All 1,109 queries of the collection parse, though only 300 are judged.
    assert_eq!(read_queries(&ds.root.join("queries.jsonl")).unwrap().len(), 1_109);
}

#[test]
fn oracle_search_scores_one_on_scifact() {
    let ds = load("scifact");
    let report = evaluate(&ds, "oracle", |q| {
        // Every judged doc of SciFact has grade 1, so any order is ideal.
        let ranking = ds.qrels.get(&q.id).unwrap().keys().cloned().collect();
        Ok::<_, EvalError>(ranking)
    })
    .unwrap();
    assert_eq!(report.queries, 300);
    assert_eq!(report.ndcg_at_10, 1.0);
    assert_eq!(report.recall_at_100, 1.0);
    assert_eq!(report.mrr_at_10, 1.0);
    assert!(report.p50_ms <= report.p95_ms);
    let json = serde_json::to_value(&report).unwrap();
    // Sorted: serde_json's `preserve_order` feature may be on in the workspace.
    let mut keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    let mut expected = vec![
        "dataset",
        "mode",
        "queries",
        "ndcg@10",
        "recall@100",
        "mrr@10",
        "p50_ms",
        "p95_ms",
        "ndcg@10_ci95",
        "per_query",
    ];
    expected.sort_unstable();
    assert_eq!(keys, expected);
    assert_eq!(report.per_query.len(), 300);
    let ci = report.ndcg_ci95.unwrap();
    assert_eq!((ci.low, ci.high), (1.0, 1.0), "every query scores 1");
    assert!(report.table_row().starts_with("| scifact | oracle | 1.0000 | 1.0000–1.0000 | – | 1.0000 | 1.0000 |"));
    assert!(Report::table_header().starts_with("| dataset | mode |"));
}

#[test]
fn malformed_json_line_is_a_parse_error_with_its_line_number() {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    writeln!(file, r#"{{"_id": "1", "title": "a", "text": "b"}}"#).unwrap();
    writeln!(file).unwrap();
    writeln!(file, r#"{{"_id": "2", "title": "a", "text": "b"}}"#).unwrap();
    writeln!(file, r#"{{"_id": "3", "title": "a", "text": "b""#).unwrap();
    writeln!(file, r#"{{"_id": "4", "title": "a", "text": "b"}}"#).unwrap();
    file.flush().unwrap();

    let items: Vec<_> = read_corpus(file.path()).collect();
    assert_eq!(items.len(), 4);
    match &items[2] {
        Err(err @ EvalError::Parse { path, line, .. }) => {
            assert_eq!(*line, 4);
            assert_eq!(path, file.path());
            assert!(err.to_string().contains(":4: "), "{err}");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    assert_eq!(items[3].as_ref().unwrap().id, "4");
    match read_queries(file.path()) {
        Err(EvalError::Parse { line, .. }) => assert_eq!(line, 4),
        other => panic!("expected a parse error, got {other:?}"),
    }
}
