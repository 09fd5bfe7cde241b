//! `braid index` at scale, in miniature: commits past `--commit-every`, resumes, and vectors
//! supplied from a sidecar or a JSONL field, searched with `braid search --vector`.

use std::io::Write;
use std::path::Path;

use crate::support::braid;

/// Record `i`'s vector: axis `i % 4` of 4 dimensions, slightly tilted.
fn vector(i: usize) -> [f32; 4] {
    let mut v = [0.1f32; 4];
    v[i % 4] = 1.0;
    v
}

fn write_corpus(path: &Path, n: usize, with_field: bool) {
    let mut f = std::fs::File::create(path).unwrap();
    for i in 0..n {
        let mut doc = serde_json::json!({
            "_id": format!("d{i}"), "title": format!("Doc {i}"),
            "text": format!("walrus report {i} on axis {}", i % 4), "acl": [format!("group:g{}", i % 2)]
        });
        if with_field {
            doc["metadata"] = serde_json::json!({ "emb": vector(i) });
        }
        writeln!(f, "{doc}").unwrap();
    }
}

fn run(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{:?}: {}", cmd, String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout)
}

fn search_ids(index: &Path, extra: &[&str]) -> Vec<String> {
    let out = run(braid().args(["search", "--index"]).arg(index).args(["--json", "-k", "3"]).args(extra));
    let json: serde_json::Value = serde_json::from_str(&out[out.find('{').unwrap()..]).unwrap();
    json["hits"].as_array().unwrap().iter().map(|h| h["id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn index_commits_in_steps_resumes_and_takes_sidecar_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, part, index) = (dir.path().join("c.jsonl"), dir.path().join("part.jsonl"), dir.path().join("idx"));
    write_corpus(&corpus, 230, false);
    // The first 150 documents, as a killed run would have committed them.
    let all = std::fs::read_to_string(&corpus).unwrap();
    std::fs::write(&part, all.lines().take(150).map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    // A raw f32 sidecar with an ids file, in another order than the corpus.
    let (vectors, ids) = (dir.path().join("v.f32"), dir.path().join("ids.txt"));
    let mut v = std::fs::File::create(&vectors).unwrap();
    let mut names = String::new();
    for i in (0..230).rev() {
        for x in vector(i) {
            v.write_all(&x.to_le_bytes()).unwrap();
        }
        names.push_str(&format!("d{i}\n"));
    }
    drop(v);
    std::fs::write(&ids, names).unwrap();
    let sidecar = ["--vectors", vectors.to_str().unwrap(), "--vector-ids", ids.to_str().unwrap(), "--vector-dim", "4"];

    let first =
        run(braid().arg("index").arg(&part).arg("--index").arg(&index).args(["--commit-every", "40"]).args(sidecar));
    assert!(first.contains("indexed 150 records"), "{first}");
    let second =
        run(braid().arg("index").arg(&corpus).arg("--index").arg(&index).args(["--commit-every", "40"]).args(sidecar));
    assert!(second.contains("indexed 80 records") && second.contains("150 unchanged"), "{second}");
    let checked = run(braid().args(["check", "--index"]).arg(&index));
    assert!(checked.contains("holds 230 records") && !checked.contains("note:"), "{checked}");

    // No model: the semantic leg runs on the query vector; permissions still first.
    let hits = search_ids(&index, &["--mode", "semantic", "--principal", "group:g1", "--vector", "[0.1,1.0,0.1,0.1]"]);
    assert_eq!(hits.len(), 3);
    assert!(hits.iter().all(|id| id[1..].parse::<usize>().unwrap() % 4 == 1), "{hits:?}");
    // Text alone cannot run the semantic leg without a model: an error, exit code 2.
    let out = braid().args(["search", "--index"]).arg(&index).args(["--mode", "semantic", "walrus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // A vector of the wrong dimension is refused.
    let out = braid()
        .args(["search", "--index"])
        .arg(&index)
        .args(["--mode", "semantic", "--vector", "[1,0]"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("dimension"));
}

#[test]
fn index_reads_vectors_from_a_jsonl_field() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, index) = (dir.path().join("c.jsonl"), dir.path().join("idx"));
    write_corpus(&corpus, 40, true);
    let out = run(braid().arg("index").arg(&corpus).arg("--index").arg(&index).args(["--vector-field", "emb"]));
    assert!(out.contains("indexed 40 records"), "{out}");
    let hits = search_ids(&index, &["--mode", "semantic", "--principal", "group:g0", "--vector", "[0.1,0.1,1.0,0.1]"]);
    assert!(hits.iter().all(|id| id[1..].parse::<usize>().unwrap() % 4 == 2), "{hits:?}");
    // A bad sidecar is a clear error before anything is written.
    let out = braid()
        .arg("index")
        .arg(&corpus)
        .arg("--index")
        .arg(dir.path().join("other"))
        .args(["--vectors", corpus.to_str().unwrap(), "--vector-ids", corpus.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--vector-dim"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `--quantize int8` makes an int8 store; the setting belongs to the index: asking another
/// one on the next run is an error (exit 2) that changes nothing, and an unknown name is a
/// usage error.
/// `--passages` sets a new index's windows (`off`: one vector a record); the setting is the
/// index's, so asking for another one later is exit 2, and a malformed value is refused.
#[test]
fn index_keeps_its_passage_setting() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, index) = (dir.path().join("c.jsonl"), dir.path().join("idx"));
    write_corpus(&corpus, 20, true);
    let fielded = ["--vector-field", "emb"];
    let out =
        run(braid().arg("index").arg(&corpus).arg("--index").arg(&index).args(["--passages", "off"]).args(fielded));
    assert!(out.contains("indexed 20 records"), "{out}");
    assert_eq!(braid::Index::open(&index).unwrap().config().passages, None);
    let again = braid()
        .arg("index")
        .arg(&corpus)
        .arg("--index")
        .arg(&index)
        .args(["--passages", "64:48"])
        .args(fielded)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("--passages off") && stderr.contains("--passages 64:48:16"), "{stderr}");
    let fresh = dir.path().join("fresh");
    let bad =
        braid().arg("index").arg(&corpus).arg("--index").arg(&fresh).args(["--passages", "10:20"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("stride"), "{}", String::from_utf8_lossy(&bad.stderr));
}

#[test]
fn index_quantizes_on_request_and_keeps_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, index) = (dir.path().join("c.jsonl"), dir.path().join("idx"));
    write_corpus(&corpus, 60, true);
    let fielded = ["--vector-field", "emb"];
    let out =
        run(braid().arg("index").arg(&corpus).arg("--index").arg(&index).args(["--quantize", "int8"]).args(fielded));
    assert!(out.contains("indexed 60 records"), "{out}");
    assert_eq!(braid::Index::open(&index).unwrap().config().quantization, braid::Quantization::Int8);
    let hits = search_ids(&index, &["--mode", "semantic", "--principal", "group:g1", "--vector", "[0.1,1.0,0.1,0.1]"]);
    assert!(!hits.is_empty() && hits.iter().all(|id| id[1..].parse::<usize>().unwrap() % 4 == 1), "{hits:?}");

    let again = braid()
        .arg("index")
        .arg(&corpus)
        .arg("--index")
        .arg(&index)
        .args(["--quantize", "f32"])
        .args(fielded)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("--quantize int8"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let bad =
        braid().arg("index").arg(&corpus).arg("--index").arg(&index).args(["--quantize", "int4"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("int4"));
    // The same run without --quantize keeps the index's setting.
    let kept = run(braid().arg("index").arg(&corpus).arg("--index").arg(&index).args(fielded));
    assert!(kept.contains("60 unchanged"), "{kept}");
}

#[path = "../../../tests/shared_dir.rs"]
mod shared_dir;

/// `--model DIR/model_int8.onnx` embeds with that file of the folder (the int8 MiniLM), the
/// index records it, and later searches embed queries with it without naming it again.
#[test]
fn index_embeds_with_a_named_onnx_file() {
    let int8 = shared_dir::shared("models/all-MiniLM-L6-v2/model_int8.onnx");
    let dir = tempfile::tempdir().unwrap();
    let (corpus, index) = (dir.path().join("c.jsonl"), dir.path().join("idx"));
    let docs = [
        ("refunds", "Refund policy", "You can send an item back within 30 days for your money."),
        ("shipping", "Shipping times", "Parcels leave the warehouse in two working days."),
        ("passwords", "Reset a password", "Use the link on the sign-in page to choose a new password."),
    ];
    let mut f = std::fs::File::create(&corpus).unwrap();
    for (id, title, text) in docs {
        writeln!(f, "{}", serde_json::json!({ "_id": id, "title": title, "text": text, "acl": ["public"] })).unwrap();
    }
    drop(f);
    run(braid().arg("index").arg(&corpus).arg("--index").arg(&index).arg("--model").arg(&int8));
    let recorded = braid::Index::recorded_embedding(&index).unwrap().unwrap();
    assert_eq!(recorded.model_id, "all-MiniLM-L6-v2/model_int8.onnx");
    let hits = search_ids(&index, &["--mode", "semantic", "can I get my money back if I return it"]);
    assert_eq!(hits[0], "refunds", "{hits:?}");
}

/// An index whose recorded model cannot be found here: `braid search` says so and searches with
/// the other legs, but `braid eval` stops — a hybrid run without its semantic leg would be
/// reported under hybrid's name.
#[test]
fn eval_refuses_an_index_whose_model_is_missing() {
    let int8 = shared_dir::shared("models/all-MiniLM-L6-v2/model_int8.onnx");
    let dir = tempfile::tempdir().unwrap();
    let set = dir.path().join("set");
    std::fs::create_dir_all(set.join("qrels")).unwrap();
    let index = dir.path().join("idx");
    let mut f = std::fs::File::create(set.join("corpus.jsonl")).unwrap();
    writeln!(
        f,
        "{}",
        serde_json::json!({ "_id": "refunds", "title": "Refund policy", "text": "Send it back in 30 days." })
    )
    .unwrap();
    writeln!(
        f,
        "{}",
        serde_json::json!({ "_id": "shipping", "title": "Shipping", "text": "Parcels leave in two days." })
    )
    .unwrap();
    drop(f);
    std::fs::write(set.join("queries.jsonl"), "{\"_id\": \"q1\", \"text\": \"refund\"}\n").unwrap();
    std::fs::write(set.join("qrels/test.tsv"), "query-id\tcorpus-id\tscore\nq1\trefunds\t1\n").unwrap();
    run(braid().arg("index").arg(set.join("corpus.jsonl")).arg("--index").arg(&index).arg("--model").arg(&int8));
    // Nowhere to find the model: no model folder, an empty cache, no shared folder above.
    let elsewhere = |cmd: &mut std::process::Command| {
        cmd.current_dir(dir.path())
            .env("HOME", dir.path())
            .env("BRAID_SHARED", dir.path())
            .env_remove("BRAID_MODEL_DIR");
    };
    let mut search = braid();
    elsewhere(search.args(["search", "--index"]).arg(&index).args(["--mode", "hybrid", "refund"]));
    let out = search.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("model is unavailable"));
    let mut eval = braid();
    elsewhere(eval.args(["eval", "--dataset"]).arg(&set).arg("--index").arg(&index).args(["--mode", "hybrid"]));
    let out = eval.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("semantic leg would be off"), "{stderr}");
}

/// `braid check` says when an index keeps a title boost other than today's default (an index
/// stores the one it was created with), and says nothing for a new one.
#[test]
fn check_notes_a_title_boost_from_before() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    let before = braid::SchemaConfig { title_boost: 0.5, ..braid::SchemaConfig::default() };
    for (path, schema) in [(&old, before), (&new, braid::SchemaConfig::default())] {
        let config = braid::IndexConfig { schema, ..braid::IndexConfig::default() };
        let index = braid::Index::create(path, config).unwrap();
        let mut w = index.writer().unwrap();
        w.upsert(&braid::Record::new("a").title("Refunds").body("Send it back.")).unwrap();
        w.commit().unwrap();
    }
    assert_eq!(braid::Index::recorded_config(&old).unwrap().schema.title_boost, 0.5);
    let noted = run(braid().args(["check", "--index"]).arg(&old));
    assert!(noted.contains("weighs a title match by 0.5"), "{noted}");
    let quiet = run(braid().args(["check", "--index"]).arg(&new));
    assert!(!quiet.contains("title match"), "{quiet}");
}
