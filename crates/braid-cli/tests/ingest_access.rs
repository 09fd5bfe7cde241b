//! `braid index` reads access the same way for every format and fails closed: a JSONL line or
//! front matter whose access keys are malformed, misspelt or misplaced fails the run (exit
//! code 2, the document, line and key on stderr) before anything is written; `tenant` is read
//! in every format; a document with no access key is left to `--policy`.

use std::path::Path;

use crate::support::{index, lexical_ids};

fn indexed(input: &Path, idx: &Path, extra: &[&str]) {
    let out = index(input, idx, extra);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Runs `braid index` on the malformed `input`: exit code 2, stderr holding each of `names`,
/// and the index as it was (`before` is all anyone finds).
fn refused(input: &Path, idx: &Path, names: &[&str], before: &[&str]) {
    let out = index(input, idx, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    for name in names {
        assert!(stderr.contains(name), "{name:?} missing from: {stderr}");
    }
    assert!(stderr.contains("nothing was written"), "{stderr}");
    assert_eq!(lexical_ids(idx, "public", "walrus"), before, "{stderr}");
    assert_eq!(lexical_ids(idx, "group:staff", "walrus"), before, "{stderr}");
}

#[test]
fn jsonl_access_fails_closed() {
    let tmp = tempfile::tempdir().unwrap();
    let (corpus, idx) = (tmp.path().join("corpus.jsonl"), tmp.path().join("index"));
    let good = r#"{"_id": "a", "title": "Walrus A", "text": "walrus notes"}"#;
    std::fs::write(&corpus, format!("{good}\n")).unwrap();
    indexed(&corpus, &idx, &[]);
    // A line without access keys (every BEIR corpus) is left to the policy: public here.
    assert_eq!(lexical_ids(&idx, "public", "walrus"), ["a"]);

    // Each of these lines was indexed as a public record.
    for (field, key) in [
        (r#""acl": []"#, "`acl` is empty"),
        (r#""acl": null"#, "`acl` is empty"),
        (r#""acl": [" "]"#, "`acl` is empty"),
        (r#""acl": 7"#, "`acl` must be"),
        (r#""ACL": ["group:staff"]"#, "`ACL` looks like the access key `acl`"),
        (r#""Tenant": "acme""#, "`Tenant` looks like"),
        (r#""acls": ["group:staff"]"#, "`acls` looks like"),
        (r#""metadata": {"acl": ["group:staff"]}"#, "`acl` is inside `metadata`"),
        (r#""metadata": {"tenant": "acme"}"#, "`tenant` is inside `metadata`"),
        (r#""tenant": "acme", "acl": ["group:staff"]"#, "cannot be combined"),
    ] {
        let bad = format!(r#"{{"_id": "b", "title": "Walrus B", "text": "walrus secret", {field}}}"#);
        std::fs::write(&corpus, format!("{good}\n\n{bad}\n")).unwrap();
        refused(&corpus, &idx, &["corpus.jsonl (_id \"b\"), line 3", key], &["a"]);
    }

    // `tenant` is read, as in front matter: the record belongs to that tenant only.
    let tenant = r#"{"_id": "t", "title": "Walrus T", "text": "walrus ledger", "tenant": "acme"}"#;
    std::fs::write(&corpus, format!("{good}\n{tenant}\n")).unwrap();
    indexed(&corpus, &idx, &[]);
    assert_eq!(lexical_ids(&idx, "public", "walrus"), ["a"]);
    assert_eq!(lexical_ids(&idx, "tenant:globex", "walrus"), ["a"]);
    assert_eq!(lexical_ids(&idx, "tenant:acme", "walrus"), ["a", "t"]);
}

#[test]
fn jsonl_with_vectors_from_a_field_reads_access_the_same_way() {
    let tmp = tempfile::tempdir().unwrap();
    let (corpus, idx) = (tmp.path().join("c.jsonl"), tmp.path().join("index"));
    let line = |id: &str, access: &str, v: [f32; 2]| {
        format!(r#"{{"_id": "{id}", "text": "walrus {id}", {access}"metadata": {{"emb": [{}, {}]}}}}"#, v[0], v[1])
    };
    let lines = [line("p", "", [1.0, 0.1]), line("t", r#""tenant": "acme", "#, [0.1, 1.0])];
    std::fs::write(&corpus, lines.join("\n")).unwrap();
    indexed(&corpus, &idx, &["--vector-field", "emb"]);
    assert_eq!(lexical_ids(&idx, "public", "walrus"), ["p"]);
    assert_eq!(lexical_ids(&idx, "tenant:acme", "walrus"), ["p", "t"]);
    std::fs::write(&corpus, [lines[0].clone(), line("m", r#""ACL": ["g"], "#, [1.0, 1.0])].join("\n")).unwrap();
    let out = index(&corpus, &idx, &["--vector-field", "emb"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`ACL`"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_corpus_without_access_keys_follows_the_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let (corpus, idx) = (tmp.path().join("corpus.jsonl"), tmp.path().join("index"));
    std::fs::write(&corpus, "{\"_id\": \"a\", \"text\": \"walrus\", \"metadata\": {\"url\": \"x\"}}\n").unwrap();
    indexed(&corpus, &idx, &["--policy", "deny"]);
    assert!(lexical_ids(&idx, "public", "walrus").is_empty());
}

#[test]
fn front_matter_access_fails_closed_in_markdown_and_text() {
    let tmp = tempfile::tempdir().unwrap();
    let (docs, idx) = (tmp.path().join("docs"), tmp.path().join("index"));
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("a.md"), "# Walrus A\n\nwalrus notes\n").unwrap();
    indexed(&docs, &idx, &[]);
    assert_eq!(lexical_ids(&idx, "public", "walrus"), ["a#intro"]);

    // Each of these articles was indexed as a public record.
    for (file, source, key) in [
        ("b.md", "---\nACL: [group:staff]\n---\n# Walrus B\n\nwalrus secret\n", "`ACL` looks like"),
        ("b.md", "---\nTenant: acme\n---\n# Walrus B\n\nwalrus secret\n", "`Tenant` looks like"),
        ("b.md", "---\nacls: [group:staff]\n---\n# Walrus B\n\nwalrus secret\n", "`acls` looks like"),
        ("b.md", "+++\nacl = []\n+++\n# Walrus B\n\nwalrus secret\n", "`acl` is empty"),
        ("b.md", "+++\nACL = [\"group:staff\"]\n+++\n# Walrus B\n\nwalrus secret\n", "`ACL` looks like"),
        ("b.txt", "---\nacl: []\n---\nWalrus B\n\nwalrus secret\n", "`acl` is empty"),
        ("b.txt", "---\ntennant: acme\n---\nWalrus B\n\nwalrus secret\n", "`tennant` looks like"),
    ] {
        std::fs::write(docs.join(file), source).unwrap();
        refused(&docs, &idx, &["article \"b\", line 2", key], &["a#intro"]);
        std::fs::remove_file(docs.join(file)).unwrap();
    }

    // TOML front matter and a text file's front matter are read, not skipped.
    std::fs::write(docs.join("t.md"), "+++\nacl = [\"group:staff\"]\n+++\n# Walrus T\n\nwalrus toml\n").unwrap();
    std::fs::write(docs.join("x.txt"), "---\ntenant: acme\n---\nWalrus X\n\nwalrus text\n").unwrap();
    indexed(&docs, &idx, &[]);
    assert_eq!(lexical_ids(&idx, "public", "walrus"), ["a#intro"]);
    assert_eq!(lexical_ids(&idx, "group:staff", "walrus"), ["a#intro", "t#intro"]);
    assert_eq!(lexical_ids(&idx, "tenant:acme", "walrus"), ["a#intro", "x#intro"]);
}
