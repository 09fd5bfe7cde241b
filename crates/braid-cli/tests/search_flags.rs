//! `braid search`'s results flags: `--facet`, `--offset`, `--cursor`, `--boosts`, `--ef-search`,
//! `--no-feedback`, `--group-by` and `--mmr`; and what it prints for an empty answer.

use std::io::Write;

use serde_json::Value;

use crate::support::braid;

fn search(index: &std::path::Path, args: &[&str]) -> Value {
    let out =
        braid().args(["search", "--json", "--mode", "lexical", "--index"]).arg(index).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn ids(v: &Value) -> Vec<String> {
    v["hits"].as_array().unwrap().iter().map(|h| h["id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn facets_pages_and_boosts_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, index) = (dir.path().join("c.jsonl"), dir.path().join("idx"));
    let mut f = std::fs::File::create(&corpus).unwrap();
    for i in 0..9 {
        let category = if i < 6 { "billing" } else { "admin" };
        let doc = serde_json::json!({
            "_id": format!("d{i}"), "title": "Walrus", "text": "walrus ".repeat(i + 1),
            "metadata": { "category": category, "updated": 1_700_000_000 + i * 86_400 }
        });
        writeln!(f, "{doc}").unwrap();
    }
    drop(f);
    let out = braid().args(["index"]).arg(&corpus).arg("--index").arg(&index).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let first = search(&index, &["-k", "4", "--facet", "category", "walrus"]);
    assert_eq!(first["facets"]["matched"], 9);
    assert_eq!(
        first["facets"]["values"]["category"],
        serde_json::json!([{"value": "billing", "count": 6}, {"value": "admin", "count": 3}])
    );
    let cursor = first["next_cursor"].as_str().unwrap();
    let second = search(&index, &["-k", "4", "--cursor", cursor, "walrus"]);
    assert_eq!(ids(&second), ids(&search(&index, &["-k", "4", "--offset", "4", "walrus"])));
    let ranges = r#"{"ranges":{"field":"updated","ranges":[{"to":1700200000},{"from":1700200000}]}}"#;
    let counted = search(&index, &["-k", "1", "--facet", ranges, "walrus"]);
    let counts: Vec<u64> = counted["facets"]["ranges"]["updated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["count"].as_u64().unwrap())
        .collect();
    assert_eq!(counts, [3, 6]);
    // d4's date: its neighbours a day away get 0.01, the rest next to nothing.
    let around_d4 =
        r#"{"decay":[{"field":"updated","function":"gauss","origin":1700345600,"scale":86400,"decay":0.01}]}"#;
    assert_eq!(ids(&search(&index, &["-k", "1", "walrus"])), ["d8"]);
    let boosted = search(&index, &["-k", "1", "--boosts", around_d4, "walrus"]);
    assert_eq!(ids(&boosted), ["d4"]);
    let bad = braid().args(["search", "--index"]).arg(&index).args(["--cursor", "nope", "walrus"]).output().unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("cursor"), "{}", String::from_utf8_lossy(&bad.stderr));
    // The graph's width is accepted (this index has no graph: the same hits), 0 refused.
    assert_eq!(ids(&search(&index, &["--ef-search", "50", "walrus"])), ids(&search(&index, &["walrus"])));
    let zero = braid().args(["search", "--index"]).arg(&index).args(["--ef-search", "0", "walrus"]).output().unwrap();
    assert!(!zero.status.success());
    assert!(String::from_utf8_lossy(&zero.stderr).contains("ef_search"), "{}", String::from_utf8_lossy(&zero.stderr));
    // One hit a category, then two; MMR with lambda 1 keeps the order.
    assert_eq!(ids(&search(&index, &["--group-by", "category", "walrus"])), ["d8", "d5"]);
    assert_eq!(ids(&search(&index, &["--group-by", "category:2", "walrus"])), ["d8", "d7", "d5", "d4"]);
    assert_eq!(ids(&search(&index, &["--mmr", "1", "walrus"])), ids(&search(&index, &["walrus"])));
    for (flag, value, says) in
        [("--group-by", "category:x", "number"), ("--group-by", "nope", "nope"), ("--mmr", "2", "mmr")]
    {
        let out = braid().args(["search", "--index"]).arg(&index).args([flag, value, "walrus"]).output().unwrap();
        assert!(!out.status.success(), "{flag} {value}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(says), "{}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn feedback_is_on_unless_turned_off() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, index) = (dir.path().join("c.jsonl"), dir.path().join("idx"));
    let mut f = std::fs::File::create(&corpus).unwrap();
    for (id, title, text) in [
        ("salt-1", "Salt intake", "Salt intake raises sodium levels and hypertension risk."),
        ("salt-2", "Cutting salt", "Less salt means less sodium and lower hypertension."),
        ("sodium", "Sodium and blood pressure", "Sodium drives hypertension in adults."),
    ] {
        writeln!(f, "{}", serde_json::json!({ "_id": id, "title": title, "text": text })).unwrap();
    }
    drop(f);
    let out = braid().args(["index"]).arg(&corpus).arg("--index").arg(&index).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let hybrid = |extra: &[&str]| {
        let out = braid()
            .args(["search", "--json", "--mode", "hybrid", "--index"])
            .arg(&index)
            .args(extra)
            .arg("salt intake")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        ids(&serde_json::from_slice(&out.stdout).unwrap())
    };
    assert!(hybrid(&[]).contains(&"sodium".to_string()), "{:?}", hybrid(&[]));
    assert!(!hybrid(&["--no-feedback"]).contains(&"sodium".to_string()), "{:?}", hybrid(&["--no-feedback"]));
}

#[test]
fn an_empty_answer_as_the_public_caller_says_how_to_name_one() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, index) = (dir.path().join("c.jsonl"), dir.path().join("idx"));
    let doc = serde_json::json!({ "_id": "d0", "title": "Walrus", "text": "walrus tusks", "acl": ["group:staff"] });
    std::fs::write(&corpus, format!("{doc}\n")).unwrap();
    let out = braid().args(["index"]).arg(&corpus).arg("--index").arg(&index).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = |args: &[&str]| {
        let out = braid().args(["search", "--index"]).arg(&index).args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let hint = "searched as the public caller";
    // The same words whether or not the index holds records the caller may not see.
    let hidden = text(&["walrus"]);
    let absent = text(&["narwhal"]);
    assert!(hidden.starts_with("no results\n(searched as the public caller"), "{hidden}");
    assert_eq!(hidden.lines().nth(1), absent.lines().nth(1));
    // Named callers get no hint, found or not.
    assert!(!text(&["--principal", "group:other", "walrus"]).contains(hint));
    let found = text(&["--principal", "group:staff", "walrus"]);
    assert!(found.contains("[d0]") && !found.contains(hint), "{found}");
}
