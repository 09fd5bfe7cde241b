//! Writing, committing, reopening; locks and damaged files.

use braid::{Error, Index, IndexConfig, Principal, Record, SearchRequest};

use crate::common::ids;

fn find(idx: &Index, q: &str) -> Vec<String> {
    ids(&idx.search(&SearchRequest::new(q, Principal::public())).unwrap()).into_iter().map(String::from).collect()
}

#[test]
fn upsert_replaces_delete_removes_commit_publishes() {
    let dir = tempfile::tempdir().unwrap();
    let idx = Index::create(dir.path(), IndexConfig::default()).unwrap();
    let mut w = idx.writer().unwrap();
    w.upsert(&Record::new("a").title("Alpha").body("original text about walruses")).unwrap();
    w.upsert(&Record::new("b").title("Beta").body("text about penguins")).unwrap();
    assert!(find(&idx, "walruses").is_empty(), "uncommitted changes are invisible");
    w.commit().unwrap();
    assert_eq!(find(&idx, "walruses"), ["a"]);

    w.upsert(&Record::new("a").title("Alpha").body("replacement text about narwhals")).unwrap();
    w.delete("b").unwrap();
    w.commit().unwrap();
    assert!(find(&idx, "walruses").is_empty());
    assert_eq!(find(&idx, "narwhals"), ["a"]);
    assert!(find(&idx, "penguins").is_empty());
    assert_eq!(idx.num_records(), 1);
    drop(w);

    // Reopen: committed data is there; ordinals keep growing.
    let reopened = Index::open(dir.path()).unwrap();
    assert_eq!(find(&reopened, "narwhals"), ["a"]);
    let mut w = reopened.writer().unwrap();
    w.upsert(&Record::new("c").body("narwhals again")).unwrap();
    w.commit().unwrap();
    let r = reopened.search(&SearchRequest::new("narwhals", Principal::public())).unwrap();
    assert_eq!(r.hits.len(), 2);
}

#[test]
fn uncommitted_changes_are_lost_on_drop_only() {
    let dir = tempfile::tempdir().unwrap();
    let idx = Index::create(dir.path(), IndexConfig::default()).unwrap();
    let mut w = idx.writer().unwrap();
    w.upsert(&Record::new("kept").body("committed walrus")).unwrap();
    w.commit().unwrap();
    w.upsert(&Record::new("lost").body("uncommitted walrus")).unwrap();
    drop(w);
    drop(idx);
    let idx = Index::open(dir.path()).unwrap();
    assert_eq!(find(&idx, "walrus"), ["kept"]);
}

#[test]
fn a_second_writer_gets_a_lock_error() {
    let dir = tempfile::tempdir().unwrap();
    let idx = Index::create(dir.path(), IndexConfig::default()).unwrap();
    let _w = idx.writer().unwrap();
    assert!(matches!(idx.writer(), Err(Error::LockBusy { .. })));
    let other = Index::open(dir.path()).unwrap();
    assert!(matches!(other.writer(), Err(Error::LockBusy { .. })));
    let ram = Index::create_in_ram(IndexConfig::default()).unwrap();
    let _w = ram.writer().unwrap();
    assert!(matches!(ram.writer(), Err(Error::LockBusy { .. })));
}

#[test]
fn damaged_or_foreign_indexes_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(Index::open(dir.path()), Err(Error::Corrupt { .. })));

    let idx = Index::create(dir.path(), IndexConfig::default()).unwrap();
    drop(idx);
    assert!(matches!(Index::create(dir.path(), IndexConfig::default()), Err(Error::InvalidRequest { .. })));

    let manifest = dir.path().join("braid.json");
    let good = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, &good[..good.len() / 2]).unwrap();
    match Index::open(dir.path()) {
        Err(Error::Corrupt { path, .. }) => assert_eq!(path, manifest),
        other => panic!("expected Corrupt, got {:?}", other.err()),
    }
    std::fs::write(&manifest, good.replace("\"format\": 1", "\"format\": 99")).unwrap();
    assert!(matches!(Index::open(dir.path()), Err(Error::FormatVersion { found: 99, expected: 1, .. })));
    std::fs::write(&manifest, &good).unwrap();
    std::fs::remove_file(dir.path().join("lexical").join("meta.json")).unwrap();
    match Index::open(dir.path()) {
        Err(Error::Corrupt { path, .. }) => assert!(path.ends_with("meta.json")),
        other => panic!("expected Corrupt, got {:?}", other.err()),
    }
}

#[test]
fn check_finds_a_flipped_byte_in_any_lexical_file() {
    let dir = tempfile::tempdir().unwrap();
    let idx = Index::create(dir.path(), IndexConfig::default()).unwrap();
    let mut w = idx.writer().unwrap();
    for i in 0..50 {
        w.upsert(&Record::new(format!("r{i}")).title("walrus").body(format!("record number {i} about walruses")))
            .unwrap();
    }
    w.commit().unwrap();
    drop(w);
    drop(idx);
    assert_eq!(Index::check(dir.path()).unwrap(), 50);
    let lexical = dir.path().join("lexical");
    let segment_file = std::fs::read_dir(&lexical)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "idx"))
        .expect("a segment file");
    let mut bytes = std::fs::read(&segment_file).unwrap();
    bytes[0] ^= 0xff;
    std::fs::write(&segment_file, bytes).unwrap();
    match Index::check(dir.path()) {
        Err(Error::Corrupt { path, .. }) => assert_eq!(path, segment_file),
        other => panic!("expected Corrupt naming {}, got {other:?}", segment_file.display()),
    }
}

/// Readers search while the writer adds, replaces, deletes and commits: every search sees one
/// consistent commit (never a record twice, never a deleted batch half-gone), and none fails.
#[test]
fn searches_run_while_a_writer_commits() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let idx = Index::create_in_ram(IndexConfig::default()).unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let readers: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    let mut searches = 0;
                    while !stop.load(Ordering::SeqCst) {
                        let r = idx.search(&SearchRequest::new("walrus batch", Principal::public()).k(1000)).unwrap();
                        let mut ids: Vec<&str> = r.hits.iter().map(|h| h.id.as_str()).collect();
                        let n = ids.len();
                        ids.sort();
                        ids.dedup();
                        assert_eq!(ids.len(), n, "a record appeared twice");
                        // Batches are committed whole: 20 records each, all or none.
                        assert_eq!(n % 20, 0, "saw a partial commit: {n} records");
                        searches += 1;
                    }
                    searches
                })
            })
            .collect();
        let mut w = idx.writer().unwrap();
        for batch in 0..30 {
            for i in 0..20 {
                w.upsert(&Record::new(format!("b{batch}-{i}")).body(format!("walrus batch {batch}"))).unwrap();
            }
            if batch >= 5 {
                // Replace an older batch with identical ids, and delete another whole batch.
                for i in 0..20 {
                    w.upsert(
                        &Record::new(format!("b{}-{i}", batch - 5)).body(format!("walrus batch replaced {batch}")),
                    )
                    .unwrap();
                }
            }
            if batch >= 10 && batch % 2 == 0 {
                for i in 0..20 {
                    w.delete(&format!("b{}-{i}", batch - 10)).unwrap();
                }
            }
            w.commit().unwrap();
        }
        stop.store(true, Ordering::SeqCst);
        let total: usize = readers.into_iter().map(|r| r.join().unwrap()).sum();
        assert!(total > 0);
    });
}
