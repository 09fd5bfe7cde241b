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
    // A manifest that does not parse keeps the parser's error as its source.
    match Index::open(dir.path()) {
        Err(e @ Error::Unparsable { .. }) => {
            assert_eq!(e.damaged_file(), Some(manifest.as_path()));
            let source = std::error::Error::source(&e).expect("the parser's error");
            assert!(source.downcast_ref::<serde_json::Error>().is_some(), "{source:?}");
        }
        other => panic!("expected Unparsable, got {:?}", other.err()),
    }
    std::fs::write(&manifest, good.replace("\"format\": 3", "\"format\": 99")).unwrap();
    assert!(matches!(Index::open(dir.path()), Err(Error::FormatVersion { found: 99, expected: 3, .. })));
    // Valid JSON that says something else (a changed setting) fails its checksum.
    assert!(good.contains("\"policy\": \"public\""), "{good}");
    std::fs::write(&manifest, good.replace("\"policy\": \"public\"", "\"policy\": \"deny\"")).unwrap();
    match Index::open(dir.path()) {
        Err(Error::Corrupt { path, reason }) => {
            assert_eq!((path, reason.as_str()), (manifest.clone(), "checksum mismatch"))
        }
        other => panic!("expected Corrupt, got {:?}", other.err()),
    }
    // A manifest written before the checksum (format 1) still opens.
    let mut unsealed: serde_json::Value = serde_json::from_str(&good).unwrap();
    let fields = unsealed.as_object_mut().unwrap();
    assert!(fields.remove("checksum").is_some());
    fields.insert("format".into(), 1.into());
    std::fs::write(&manifest, unsealed.to_string()).unwrap();
    Index::open(dir.path()).unwrap_or_else(|e| panic!("a format 1 manifest: {e}\n{unsealed}"));
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
    let report = Index::check(dir.path()).unwrap();
    assert_eq!(report.records, 50);
    assert_eq!(report.orphan_vectors, 0);
    assert!(report.feedback_heads, "a new index stores the words feedback reads");
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

/// How a file is damaged in [`every_damaged_file_is_a_typed_error_naming_it`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Damage {
    Missing,
    Empty,
    TruncatedToHalf,
    LastByteCut,
    FlippedMiddleByte,
    FlippedLastByte,
}

impl Damage {
    pub(crate) fn apply(self, file: &std::path::Path) {
        let bytes = std::fs::read(file).unwrap();
        let n = bytes.len();
        let write = |b: &[u8]| std::fs::write(file, b).unwrap();
        let flipped = |at: usize| {
            let mut b = bytes.clone();
            b[at] ^= 0x5a;
            b
        };
        match self {
            Damage::Missing => std::fs::remove_file(file).unwrap(),
            Damage::Empty => write(&[]),
            Damage::TruncatedToHalf => write(&bytes[..n / 2]),
            // The last byte that is not trailing whitespace (JSON files end in a newline).
            Damage::LastByteCut => write(&bytes[..bytes.trim_ascii_end().len().saturating_sub(1)]),
            Damage::FlippedMiddleByte => write(&flipped(n / 2)),
            Damage::FlippedLastByte => write(&flipped(n - 1)),
        }
    }
}

/// Every file of an index with vectors (manifest, every tantivy file, the vector file), each
/// missing, emptied, truncated or with a flipped byte, under both verifications: `braid check`
/// (every file read whole before the open returns) answers with a typed error naming that
/// file, never a panic and never `Ok`; and an open that leaves every lexical file to the
/// background thread either fails naming the file (the cheap checks: a file missing or without
/// its footer, a damaged manifest or vector file) or opens, and then the verification, every
/// search and the writer fail naming it.
#[test]
fn every_damaged_file_is_a_typed_error_naming_it() {
    let pristine = tempfile::tempdir().unwrap();
    let embedder = crate::crash::embedder();
    {
        let idx = Index::builder().embedder(embedder.clone()).create(pristine.path()).unwrap();
        let mut w = idx.writer().unwrap();
        for batch in 0..2 {
            for i in 0..15 {
                w.upsert(
                    &Record::new(format!("r{batch}-{i}")).title("Walrus").body(format!("walrus note {batch} {i}")),
                )
                .unwrap();
            }
            w.delete("r0-3").unwrap();
            w.commit().unwrap();
        }
    }
    let mut files = Vec::new();
    for sub in ["", "lexical", "vectors"] {
        for entry in std::fs::read_dir(pristine.path().join(sub)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            // Lock files hold no data; `.managed.json` only lists files for tantivy's garbage
            // collection (its damage is checked below).
            if path.is_file() && !name.ends_with(".lock") && name != ".managed.json" {
                files.push(path.strip_prefix(pristine.path()).unwrap().to_path_buf());
            }
        }
    }
    assert!(files.len() >= 10, "{files:?}");
    eprintln!("{} files, {} damaged-file cases", files.len(), files.len() * 6);
    let background = braid::Verification::Background { small_files: 0 };
    let (mut failures, mut found_in_background) = (Vec::new(), 0);
    for file in &files {
        for damage in [
            Damage::Missing,
            Damage::Empty,
            Damage::TruncatedToHalf,
            Damage::LastByteCut,
            Damage::FlippedMiddleByte,
            Damage::FlippedLastByte,
        ] {
            let work = tempfile::tempdir().unwrap();
            crate::common::copy_dir(pristine.path(), work.path());
            let damaged = work.path().join(file);
            damage.apply(&damaged);
            let names_it = |e: &Error| e.damaged_file() == Some(damaged.as_path());
            let case = format!("{}: {damage:?}", file.display());
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Index::check(work.path()))) {
                Err(_) => failures.push(format!("{case}: check panicked")),
                Ok(Ok(_)) => failures.push(format!("{case}: check found nothing")),
                Ok(Err(e)) if names_it(&e) => {}
                Ok(Err(e)) => failures.push(format!("{case}: check: {e:?}")),
            }
            let opened = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                Index::builder().embedder(embedder.clone()).verification(background).open(work.path())
            }));
            let index = match opened {
                Err(_) => {
                    failures.push(format!("{case}: open panicked"));
                    continue;
                }
                Ok(Err(e)) if names_it(&e) => continue,
                Ok(Err(e)) => {
                    failures.push(format!("{case}: open: {e:?}"));
                    continue;
                }
                Ok(Ok(index)) => index,
            };
            // Only a byte inside a lexical file's body gets past the open's checks.
            if !(file.starts_with("lexical") && matches!(damage, Damage::FlippedMiddleByte)) {
                failures.push(format!("{case}: opened with only the background verification left to find it"));
            }
            found_in_background += 1;
            let search = SearchRequest::new("walrus", Principal::public());
            let outcomes = [
                ("verify", index.verify().err()),
                ("search", index.search(&search).err()),
                ("record", index.record("r1-1", &Principal::public()).err()),
                ("writer", index.writer().err()),
            ];
            for (what, outcome) in outcomes {
                match outcome {
                    Some(e) if names_it(&e) && matches!(e, Error::Corrupt { .. }) => {}
                    other => failures.push(format!("{case}: {what} after the verification: {other:?}")),
                }
            }
            match index.verification() {
                braid::VerificationStatus::Damaged { path, .. } if path == damaged => {}
                other => failures.push(format!("{case}: status {other:?}")),
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} cases:\n{}", failures.len(), files.len() * 6, failures.join("\n"));
    let lexical_files = files.iter().filter(|f| f.starts_with("lexical")).count();
    eprintln!("{found_in_background} of {lexical_files} flipped bytes in lexical files were left to the background");
    assert!(
        found_in_background > 0 && found_in_background <= lexical_files,
        "{found_in_background} of {lexical_files} flipped bytes in lexical files opened"
    );

    // A damaged `.managed.json` loses no data: the index opens, or the error names the file.
    let managed = std::path::Path::new("lexical/.managed.json");
    for damage in [Damage::Missing, Damage::Empty, Damage::TruncatedToHalf, Damage::FlippedMiddleByte] {
        let work = tempfile::tempdir().unwrap();
        crate::common::copy_dir(pristine.path(), work.path());
        damage.apply(&work.path().join(managed));
        match Index::check(work.path()) {
            Ok(report) => assert_eq!(report.records, 29),
            Err(Error::Corrupt { path, .. }) => assert_eq!(path, work.path().join(managed)),
            Err(e) => panic!("{damage:?}: {e:?}"),
        }
    }
}

/// An index of `n` records with long bodies, committed at once.
fn index_of(dir: &std::path::Path, n: usize) {
    let idx = Index::create(dir, IndexConfig::default()).unwrap();
    let mut w = idx.writer().unwrap();
    for i in 0..n {
        // 200 words a record, each drawn by a hash from 5,000: text zstd cannot shrink much.
        let words: Vec<String> = (0..200u64)
            .map(|j| {
                let h = ((i as u64) << 8 | j).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                format!("w{}", (h >> 40) % 5000)
            })
            .collect();
        w.upsert(&Record::new(format!("r{i}")).title("walrus").body(format!("walrus {i} {}", words.join(" "))))
            .unwrap();
    }
    w.commit().unwrap();
}

/// An index whose document store is larger than the files an open reads whole by default
/// ([`braid::SMALL_FILE`]), and that file: the open never reads the document store, so a
/// damaged byte in it is found by the verification alone.
fn large_index(dir: &std::path::Path) -> std::path::PathBuf {
    index_of(dir, 10_000);
    let store = std::fs::read_dir(dir.join("lexical"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "store"))
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    let len = std::fs::metadata(&store).unwrap().len();
    assert!(len > braid::SMALL_FILE, "{}: {len} bytes", store.display());
    store
}

/// Flips the byte in the middle of `file`, inside its body: its footer stays intact, so only a
/// read of the whole file finds it.
fn flip_middle_byte(file: &std::path::Path) {
    Damage::FlippedMiddleByte.apply(file);
}

/// With the default verification, a large file's checksum is not read by the open: the open
/// succeeds and the background thread finds the damage by itself (no call waits on it); from
/// then on every search fails naming the file. An intact index verifies clean.
#[test]
fn the_background_verification_finds_a_damaged_large_file_by_itself() {
    let dir = tempfile::tempdir().unwrap();
    let largest = large_index(dir.path());
    let intact = Index::open(dir.path()).unwrap();
    intact.verify().unwrap();
    assert_eq!(intact.verification(), braid::VerificationStatus::Verified);
    drop(intact);

    flip_middle_byte(&largest);
    let index = Index::open(dir.path()).expect("the open reads only the footer of a large file");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        match index.verification() {
            braid::VerificationStatus::Damaged { path, reason } => {
                assert_eq!((path.as_path(), reason.as_str()), (largest.as_path(), "checksum mismatch"));
                break;
            }
            braid::VerificationStatus::Verified => panic!("the damaged file verified"),
            braid::VerificationStatus::Running { .. } => {
                assert!(std::time::Instant::now() < deadline, "the background verification did not end");
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    }
    match index.search(&SearchRequest::new("walrus", Principal::public())) {
        Err(Error::Corrupt { path, .. }) => assert_eq!(path, largest),
        other => panic!("a search on a damaged index: {other:?}"),
    }
    match Index::check(dir.path()) {
        Err(Error::Corrupt { path, .. }) => assert_eq!(path, largest),
        other => panic!("check: {other:?}"),
    }
}

/// A writer never builds on a file that has not been read whole: opening one waits for the
/// verification (no call to `verify` first) and fails naming the damaged file, and nothing is
/// written.
#[test]
fn a_writer_waits_for_the_verification_and_never_opens_on_a_damaged_file() {
    let dir = tempfile::tempdir().unwrap();
    let largest = large_index(dir.path());
    flip_middle_byte(&largest);
    let before: Vec<_> =
        std::fs::read_dir(dir.path().join("lexical")).unwrap().map(|e| e.unwrap().file_name()).collect();
    // The open may meet the damage itself, where one of its own reads touches the damaged
    // bytes and it reads the file whole to say why: it then fails, as closed as a writer's.
    let refused = match Index::open(dir.path()) {
        Ok(index) => index.writer().map(|_| ()),
        Err(e) => Err(e),
    };
    match refused {
        Err(Error::Corrupt { path, reason }) => {
            assert_eq!((path, reason.as_str()), (largest.clone(), "checksum mismatch"))
        }
        Err(e) => panic!("{e:?}"),
        Ok(()) => panic!("a writer opened on a damaged file"),
    }
    let after: Vec<_> =
        std::fs::read_dir(dir.path().join("lexical")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(before, after, "the failed writer changed the index");
}

/// A handle opened before another writer committed: its writer reads whole the files of the
/// newer commit it never opened, and refuses a damaged one; its reload does the same before it
/// swaps, and the older commit goes on serving.
#[test]
fn a_later_commit_is_verified_before_a_writer_or_a_reload_uses_it() {
    let dir = tempfile::tempdir().unwrap();
    index_of(dir.path(), 10);
    let stale = Index::open(dir.path()).unwrap();
    stale.verify().unwrap();
    let lexical = dir.path().join("lexical");
    let listed = || -> std::collections::HashSet<std::path::PathBuf> {
        std::fs::read_dir(&lexical).unwrap().map(|e| e.unwrap().path()).collect()
    };
    let old_files = listed();
    {
        let other = Index::open(dir.path()).unwrap();
        let mut w = other.writer().unwrap();
        w.upsert(&Record::new("late").body("walrus from a later commit")).unwrap();
        w.commit().unwrap();
    }
    let store = listed()
        .difference(&old_files)
        .find(|p| p.extension().is_some_and(|x| x == "store"))
        .cloned()
        .expect("the later commit's segment");
    flip_middle_byte(&store);
    match stale.reload() {
        Err(Error::Corrupt { path, .. }) => assert_eq!(path, store),
        other => panic!("a reload onto a damaged commit: {other:?}"),
    }
    assert_eq!(find(&stale, "walrus").len(), 10, "the older commit goes on serving");
    match stale.writer() {
        Err(Error::Corrupt { path, .. }) => assert_eq!(path, store),
        Err(e) => panic!("{e:?}"),
        Ok(_) => panic!("a writer opened on a later commit's damaged file"),
    }
}

/// The writer's memory budget: below tantivy's minimum or a zero embedding batch is a typed
/// error; at the minimum, an ingest larger than the buffer flushes segments and commits whole.
#[test]
fn writer_budget_is_validated_and_bounds_ingest() {
    use braid::{WriterOptions, MIN_WRITER_HEAP};
    let dir = tempfile::tempdir().unwrap();
    let idx = Index::create(dir.path(), IndexConfig::default()).unwrap();
    let small = WriterOptions { heap_bytes: MIN_WRITER_HEAP - 1, ..WriterOptions::default() };
    assert!(matches!(idx.writer_with(small), Err(Error::InvalidRequest { .. })));
    let no_batch = WriterOptions { embed_batch: 0, ..WriterOptions::default() };
    assert!(matches!(idx.writer_with(no_batch), Err(Error::InvalidRequest { .. })));
    let mut w = idx
        .writer_with(WriterOptions { heap_bytes: MIN_WRITER_HEAP, embed_batch: 8, ..WriterOptions::default() })
        .unwrap();
    // About 30 MB of text: more than the buffer holds, so tantivy writes segments before commit.
    let filler = "walrus tusk ".repeat(2500);
    for i in 0..1000 {
        w.upsert(&Record::new(format!("r{i}")).body(format!("{filler} unique{i}"))).unwrap();
    }
    w.commit().unwrap();
    assert_eq!(idx.num_records(), 1000);
    assert_eq!(find(&idx, "unique977"), ["r977"]);
}

/// The segments of an index's lexical part, by their `.idx` files.
fn segments(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir.join("lexical"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "idx"))
        .count()
}

#[test]
fn optimize_merges_segments_and_keeps_every_answer() {
    let dir = tempfile::tempdir().unwrap();
    let idx = Index::create(dir.path(), IndexConfig::default()).unwrap();
    let mut w = idx.writer().unwrap();
    for (i, record) in crate::common::corpus().into_iter().enumerate() {
        w.upsert(&record).unwrap();
        if i % 3 == 2 {
            w.commit().unwrap();
        }
    }
    w.delete("two-factor").unwrap();
    w.commit().unwrap();
    assert!(segments(dir.path()) > 1, "several commits make several segments");
    let queries = ["refund", "kubernetes relay", "451", "sso saml", "two-factor", "invoices vat"];
    let sets = |idx: &Index| -> Vec<Vec<String>> {
        queries
            .iter()
            .map(|q| {
                let mut found = find(idx, q);
                found.sort();
                found
            })
            .collect()
    };
    let before = sets(&idx);

    w.optimize().unwrap();
    assert_eq!(segments(dir.path()), 1);
    assert_eq!(sets(&idx), before, "a merge changes no answer");
    assert!(find(&idx, "two-factor authentication").iter().all(|id| id != "two-factor"), "deletes stay deleted");
    drop(w);
    let reopened = Index::open(dir.path()).unwrap();
    assert_eq!(sets(&reopened), before);
    assert_eq!(Index::check(dir.path()).unwrap().records, reopened.num_records());
}

#[test]
fn a_create_killed_before_its_manifest_can_be_created_again() {
    let dir = tempfile::tempdir().unwrap();
    // What `Index::create` leaves when killed before it writes braid.json: an empty lexical index.
    Index::create(dir.path(), IndexConfig::default()).unwrap();
    std::fs::remove_file(dir.path().join("braid.json")).unwrap();
    assert!(matches!(Index::open(dir.path()), Err(Error::Corrupt { .. })));
    let idx = Index::open_or_create(dir.path(), IndexConfig::default()).unwrap();
    let mut w = idx.writer().unwrap();
    w.upsert(&Record::new("a").body("walruses")).unwrap();
    w.commit().unwrap();
    assert_eq!(find(&idx, "walruses"), ["a"]);
    drop((w, idx));

    // A lexical folder with committed records but no manifest is data: create refuses it and
    // leaves every file where it was.
    std::fs::remove_file(dir.path().join("braid.json")).unwrap();
    let before: Vec<_> =
        std::fs::read_dir(dir.path().join("lexical")).unwrap().map(|e| e.unwrap().file_name()).collect();
    let Err(err) = Index::create(dir.path(), IndexConfig::default()) else { panic!("created over committed data") };
    assert!(matches!(err, Error::InvalidRequest { .. }), "{err}");
    let after: Vec<_> =
        std::fs::read_dir(dir.path().join("lexical")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(before.len(), after.len());
}

/// `stats.micros` names stages of `braid::Stage` only (the OpenAPI schema's list comes from
/// it), and every stage a hybrid search with a model runs is timed.
#[test]
fn stage_timings_use_the_stage_names() {
    let index = braid::Index::builder()
        .embedder(std::sync::Arc::new(crate::common::HashEmbedder::new(16)))
        .create_in_ram()
        .unwrap();
    let mut w = index.writer().unwrap();
    w.upsert(&braid::Record::new("a").title("Return policy").body("Send it back within 30 days.")).unwrap();
    w.commit().unwrap();
    let request = braid::SearchRequest::new("retun policy", braid::Principal::public()).mode(braid::Mode::Hybrid);
    let response = index.search(&request).unwrap();
    let json = serde_json::to_value(&response).unwrap();
    let names: Vec<&str> = braid::Stage::ALL.iter().map(|s| s.name()).collect();
    for key in json["stats"]["micros"].as_object().unwrap().keys() {
        assert!(names.contains(&key.as_str()), "{key} is not a stage");
    }
    use braid::Stage::{Analyse, Fusion, Fuzzy, Hits, Lexical, Semantic, Snippets, Total, Visibility};
    for stage in [Visibility, Analyse, Lexical, Fuzzy, Semantic, Fusion, Hits, Snippets, Total] {
        assert!(response.stats.micros.contains_key(&stage), "{stage} was not timed: {:?}", response.stats.micros);
    }
}
