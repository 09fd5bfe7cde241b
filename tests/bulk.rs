//! Bulk ingest: many commits, then one merge, never racing tantivy's background merges.

use braid::{Index, IndexConfig, Merges, Principal, Record, SearchRequest, WriterOptions};

fn record(i: usize) -> Record {
    Record::new(format!("r{i}"))
        .title(format!("Record {i}"))
        .body(format!("walrus number {i} swims with narwhal {} in the bay", i % 7))
        .acl([format!("group:g{}", i % 3)])
}

/// Enough commits for tantivy's log merge policy (8 segments of a size) to start background
/// merges after the last one, then an optimize at once: before the fix, the explicit merge
/// and a background one took the same segments and the later to finish failed with "The
/// segments that were merged could not be found in the SegmentManager".
#[test]
fn optimize_right_after_many_commits_never_races_background_merges() {
    for round in 0..4 {
        let dir = tempfile::tempdir().unwrap();
        let index = Index::create(dir.path(), IndexConfig::default()).unwrap();
        let mut writer = index.writer().unwrap();
        let mut n = 0;
        for _commit in 0..17 {
            for _ in 0..40 {
                writer.upsert(&record(n)).unwrap();
                n += 1;
            }
            writer.commit().unwrap();
        }
        writer.optimize().unwrap_or_else(|e| panic!("round {round}: {e}"));
        // The writer goes on working after the merge (it reopened tantivy's writer).
        writer.upsert(&record(n)).unwrap();
        writer.commit().unwrap();
        drop(writer);
        assert_eq!(index.num_records(), n as u64 + 1);
        assert_eq!(Index::check(dir.path()).unwrap().records, n as u64 + 1);
    }
}

/// A deferred-merge writer (what `braid index` uses) commits past several commit sizes,
/// merges once, and a second run over the same records finds them all unchanged.
#[test]
fn deferred_merges_commit_in_steps_and_a_rerun_skips_committed_records() {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create(dir.path(), IndexConfig::default()).unwrap();
    let options = WriterOptions { merges: Merges::Deferred, ..WriterOptions::default() };
    let mut writer = index.writer_with(options).unwrap();
    for i in 0..500 {
        writer.upsert(&record(i)).unwrap();
        if writer.pending() >= 60 {
            writer.commit().unwrap();
        }
    }
    // Killed here: what was committed stays, the rest is lost.
    drop(writer);
    let committed = index.num_records();
    assert_eq!(committed, 480);

    let reopened = Index::open(dir.path()).unwrap();
    let mut writer = reopened.writer_with(options).unwrap();
    for i in 0..500 {
        writer.upsert(&record(i)).unwrap();
        if writer.pending() >= 60 {
            writer.commit().unwrap();
        }
    }
    assert_eq!(writer.unchanged(), 480, "the rerun re-indexes only what the first run lost");
    writer.optimize().unwrap();
    assert_eq!(reopened.num_records(), 500);
    let hits = reopened
        .search(&SearchRequest::new("walrus 499", Principal::from_verified_tokens(["group:g1"])).k(3))
        .unwrap()
        .hits;
    assert_eq!(hits[0].id, "r499");
}

/// The segments every partition of the index in `dir` commits to (each `meta.json`).
fn committed_segments(dir: &std::path::Path) -> usize {
    let mut count = 0;
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.file_name().is_some_and(|n| n == "meta.json") {
                let meta: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
                count += meta["segments"].as_array().map_or(0, Vec::len);
            }
        }
    }
    count
}

/// A writer kept open over many one-record commits merges their segments in the background,
/// and `close` lets those merges land: a service that dropped its writer after each commit
/// abandoned them, and its segments (one a commit) made every commit dearer than the last.
#[test]
fn a_writer_closed_after_many_small_commits_lands_its_merges() {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create(dir.path(), IndexConfig::default()).unwrap();
    let mut writer = index.writer().unwrap();
    for i in 0..48 {
        let tenant = if i % 2 == 0 { "tenant:acme" } else { "group:g1" };
        writer.upsert(&record(i).acl([tenant])).unwrap();
        writer.commit().unwrap();
    }
    writer.close().unwrap();
    let segments = committed_segments(dir.path());
    assert!(segments < 16, "48 one-record commits left {segments} segments");
    // The index is whole, and free for the next writer.
    assert_eq!(Index::check(dir.path()).unwrap().records, 48);
    let hits = index.search(&SearchRequest::new("walrus", Principal::from_verified_tokens(["tenant:acme"])).k(100));
    assert_eq!(hits.unwrap().hits.len(), 24);
    index.writer().unwrap();
}
