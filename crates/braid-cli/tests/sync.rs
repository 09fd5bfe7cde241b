//! `braid index` as a sync that never loses data by accident: two documents giving one record
//! id fail the run (naming both), an input with no documents is refused rather than emptying
//! the index, and a sync deletes records written over the server that no document holds but
//! never an agent's memories.

use std::path::Path;

use braid::memory::{is_memory_id, Memory, Note};
use braid::{Index, Principal, Record};

use crate::support::{braid, index, lexical_ids};

/// Runs `braid index`, which must succeed; its stderr.
fn indexed(input: &Path, idx: &Path, extra: &[&str]) -> String {
    let out = index(input, idx, extra);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    stderr
}

/// Runs `braid index`, which must fail with exit code 2 and say nothing was written; its stderr.
fn refused(input: &Path, idx: &Path, extra: &[&str]) -> String {
    let out = index(input, idx, extra);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("nothing was written"), "{stderr}");
    stderr
}

/// The ids of every record of the index in `dir`, sorted.
fn ids(dir: &Path) -> Vec<String> {
    let mut ids = Index::open(dir).unwrap().record_ids().unwrap();
    ids.sort();
    ids
}

/// The auditor's reproduction: a restricted line and a public line with one `_id` were merged,
/// the public one winning. Now the run fails naming both lines, and writes nothing.
#[test]
fn one_id_on_two_jsonl_lines_fails_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let (corpus, idx) = (tmp.path().join("corpus.jsonl"), tmp.path().join("index"));
    std::fs::write(&corpus, "{\"_id\": \"0\", \"title\": \"Walrus zero\", \"text\": \"walrus notes\"}\n").unwrap();
    indexed(&corpus, &idx, &[]);

    let restricted = r#"{"_id": "1", "title": "Walrus one", "text": "walrus secret", "acl": ["group:a"]}"#;
    for public in [
        r#"{"_id": "1", "title": "Walrus one", "text": "walrus public"}"#,
        // A number `_id` is its decimal text: the same id.
        r#"{"_id": 1, "title": "Walrus one", "text": "walrus public"}"#,
    ] {
        std::fs::write(&corpus, format!("{restricted}\n\n{public}\n")).unwrap();
        let stderr = refused(&corpus, &idx, &[]);
        assert!(stderr.contains("corpus.jsonl, lines 1 and 3: both have `_id` \"1\""), "{stderr}");
        assert!(stderr.contains("1 record id(s) are given by more than one document"), "{stderr}");
        assert!(stderr.contains("previous version of every record"), "{stderr}");
        assert_eq!(ids(&idx), ["0"], "{stderr}");
        assert_eq!(lexical_ids(&idx, "public", "walrus"), ["0"]);
        // --no-prune merges no more than a sync does.
        refused(&corpus, &idx, &["--no-prune"]);
        assert_eq!(ids(&idx), ["0"]);
    }

    // Distinct ids index as before.
    std::fs::write(&corpus, format!("{restricted}\n{}\n", r#"{"_id": "2", "text": "walrus public"}"#)).unwrap();
    indexed(&corpus, &idx, &[]);
    assert_eq!(lexical_ids(&idx, "public", "walrus"), ["2"]);
    assert_eq!(lexical_ids(&idx, "group:a", "walrus"), ["1", "2"]);
}

/// The auditor's reproduction: `notes/plan.md` and `notes/plan.txt` get one article id, so one
/// file's sections overwrote the other's.
#[test]
fn markdown_files_with_one_article_id_fail_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let (docs, idx) = (tmp.path().join("docs"), tmp.path().join("index"));
    std::fs::create_dir_all(docs.join("notes")).unwrap();
    std::fs::write(docs.join("notes/plan.md"), "---\ntenant: a\n---\n# Plan\n\nWalrus plan of a.\n").unwrap();
    std::fs::write(docs.join("notes/plan.txt"), "---\ntenant: b\n---\nPlan\n\nWalrus plan of b.\n").unwrap();
    std::fs::write(docs.join("other.md"), "# Other\n\nOther notes.\n").unwrap();
    let stderr = refused(&docs, &idx, &[]);
    let (md, txt) = (docs.join("notes/plan.md"), docs.join("notes/plan.txt"));
    assert!(stderr.contains(&format!("comes from {} and {}", md.display(), txt.display())), "{stderr}");
    assert!(stderr.contains("differ only in their extension"), "{stderr}");
    assert!(ids(&idx).is_empty(), "{stderr}");

    std::fs::rename(&txt, docs.join("notes/plan-b.txt")).unwrap();
    indexed(&docs, &idx, &[]);
    assert_eq!(lexical_ids(&idx, "tenant:a", "walrus plan"), ["notes/plan#intro"]);
    assert_eq!(lexical_ids(&idx, "tenant:b", "walrus plan"), ["notes/plan-b#intro"]);
}

/// The auditor's reproduction: an empty input pruned the whole index with exit code 0.
#[test]
fn an_empty_input_is_refused_when_pruning() {
    let tmp = tempfile::tempdir().unwrap();
    let (corpus, idx) = (tmp.path().join("corpus.jsonl"), tmp.path().join("index"));
    std::fs::write(&corpus, "{\"_id\": \"a\", \"text\": \"walrus a\"}\n{\"_id\": \"b\", \"text\": \"walrus b\"}\n")
        .unwrap();
    indexed(&corpus, &idx, &[]);

    let (empty_file, empty_dir) = (tmp.path().join("empty.jsonl"), tmp.path().join("empty"));
    std::fs::write(&empty_file, "\n \n").unwrap();
    std::fs::create_dir(&empty_dir).unwrap();
    for empty in [&empty_file, &empty_dir] {
        let stderr = refused(empty, &idx, &[]);
        assert!(stderr.contains("holds no documents"), "{stderr}");
        assert!(stderr.contains("--no-prune") && stderr.contains("delete the index directory"), "{stderr}");
        assert_eq!(ids(&idx), ["a", "b"], "{stderr}");
        // With --no-prune it adds nothing and removes nothing.
        let stderr = indexed(empty, &idx, &["--no-prune"]);
        assert!(stderr.contains("indexed 0 records") && stderr.contains("the index holds 2"), "{stderr}");
    }
    // A sync to a smaller input still removes what it no longer holds.
    std::fs::write(&corpus, "{\"_id\": \"a\", \"text\": \"walrus a\"}\n").unwrap();
    let stderr = indexed(&corpus, &idx, &[]);
    assert!(stderr.contains("removed 1 whose documents are gone"), "{stderr}");
    assert_eq!(ids(&idx), ["a"]);
}

/// A sync deletes a record written over the server that no document holds, but never a
/// memory: only the memory API writes those.
#[test]
fn a_sync_keeps_memories() {
    let tmp = tempfile::tempdir().unwrap();
    let (corpus, idx) = (tmp.path().join("corpus.jsonl"), tmp.path().join("index"));
    std::fs::write(&corpus, "{\"_id\": \"a\", \"text\": \"walrus a\"}\n").unwrap();
    indexed(&corpus, &idx, &[]);
    let memory_id = {
        let index = Index::open(&idx).unwrap();
        let mut w = index.writer().unwrap();
        let alice = Principal::from_verified_tokens(["tenant:acme", "owner:user:idp/alice"]);
        let memory = Memory::new(&index).unwrap();
        let remembered = memory.remember(&mut w, &alice, &Note::new("Alice parks on level three"), 1.7e9).unwrap();
        // What a tenant's writer would have put over the server.
        w.upsert(&Record::new("tenant:acme/notes/1").body("walrus note").acl(["tenant:acme"])).unwrap();
        w.commit().unwrap();
        remembered.memory.id
    };
    assert!(is_memory_id(&memory_id), "{memory_id}");
    assert_eq!(ids(&idx).len(), 3);

    let stderr = indexed(&corpus, &idx, &[]);
    assert!(stderr.contains("removed 1 whose documents are gone"), "{stderr}");
    assert_eq!(ids(&idx), ["a".to_string(), memory_id.clone()]);
    // An input may not name a memory: it would replace one, or plant one in an agent's scope.
    let line = format!("{{\"_id\": {memory_id:?}, \"text\": \"parks on level one\", \"tenant\": \"acme\"}}\n");
    std::fs::write(&corpus, line).unwrap();
    let stderr = refused(&corpus, &idx, &["--no-prune"]);
    assert!(stderr.contains("only the memory API writes those"), "{stderr}");
}

/// `braid synonyms` given a file with no rules (empty, or cut short) refuses rather than clear
/// the index's synonyms; `--clear` does that.
#[test]
fn an_empty_synonym_file_clears_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (corpus, idx) = (tmp.path().join("corpus.jsonl"), tmp.path().join("index"));
    std::fs::write(&corpus, "{\"_id\": \"a\", \"text\": \"walrus a\"}\n").unwrap();
    indexed(&corpus, &idx, &[]);
    let (rules, empty) = (tmp.path().join("rules.txt"), tmp.path().join("empty.txt"));
    std::fs::write(&rules, "walrus, sea cow\n").unwrap();
    std::fs::write(&empty, "\n# nothing yet\n").unwrap();
    let synonyms =
        |args: &[&std::ffi::OsStr]| braid().arg("synonyms").arg("--index").arg(&idx).args(args).output().unwrap();
    assert!(synonyms(&[rules.as_os_str()]).status.success());
    let out = synonyms(&[empty.as_os_str()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--clear"));
    let listed = synonyms(&[]);
    assert!(String::from_utf8_lossy(&listed.stdout).contains("walrus"), "the rules stand");
    assert!(synonyms(&["--clear".as_ref()]).status.success());
    assert!(!String::from_utf8_lossy(&synonyms(&[]).stdout).contains("walrus"));
}

/// Under `--no-prune` a Markdown article's sections it no longer has are deleted all the same
/// (the auditor's case: a run that narrowed the article's access and renamed a section left
/// the old section public), while records of other inputs stay.
#[test]
fn no_prune_drops_the_sections_an_article_lost() {
    let tmp = tempfile::tempdir().unwrap();
    let (first, second, idx) = (tmp.path().join("first"), tmp.path().join("second"), tmp.path().join("index"));
    std::fs::create_dir_all(&first).unwrap();
    std::fs::create_dir_all(&second).unwrap();
    std::fs::write(first.join("other.md"), "# Other\n\nWalrus notes.\n").unwrap();
    let plan = "# Plan\n\nThe plan.\n\n## Launch date\n\nZebracanary launch is in March.\n";
    std::fs::write(second.join("plan.md"), plan).unwrap();
    indexed(&first, &idx, &[]);
    indexed(&second, &idx, &["--no-prune"]);
    assert_eq!(lexical_ids(&idx, "public", "zebracanary launch"), ["plan#launch-date"]);

    let narrowed =
        "---\nacl: [group:staff]\n---\n# Plan\n\nThe plan.\n\n## Launch\n\nZebracanary launch is in March.\n";
    std::fs::write(second.join("plan.md"), narrowed).unwrap();
    indexed(&second, &idx, &["--no-prune"]);
    assert!(lexical_ids(&idx, "public", "zebracanary launch").is_empty());
    assert_eq!(lexical_ids(&idx, "group:staff", "zebracanary launch"), ["plan#launch"]);
    assert_eq!(lexical_ids(&idx, "public", "walrus"), ["other#intro"], "the other input's records stay");
}
