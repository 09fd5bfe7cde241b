//! Integration tests for braid-models against `shared/models/reference.json` (outputs of
//! Python onnxruntime 1.31.1).
//!
//! Tests that run a model need the ONNX Runtime library: run `bash scripts/setup-onnxruntime.sh`
//! first (CI does). Without it they FAIL rather than skip, so a missing runtime is never
//! mistaken for a passing suite.
//!
//! `reference.json` and the random-weight cross-encoder fixtures have no public source, so
//! `scripts/fetch-shared.sh` cannot lay them out: the tests that need them skip, with a line on
//! stderr, only where they are absent (they are present in the workplace's `shared/models`).

use std::io::Write;
use std::path::{Path, PathBuf};

use braid_core::{Embedder, Error, Reranker};
use braid_models::{find_model_dir, init_runtime, CrossEncoder, OnnxEmbedder, DEFAULT_EMBEDDING_MODEL, SHARED_DIR_ENV};
use serde_json::Value;

/// The shared folder's `models/`: `$BRAID_SHARED/models` when `BRAID_SHARED` is set, else the
/// first `shared/models` above the working directory or this crate (the rule discovery follows).
fn shared_models() -> PathBuf {
    if let Some(dir) = std::env::var_os(SHARED_DIR_ENV).filter(|v| !v.is_empty()) {
        return PathBuf::from(dir).join("models");
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    [cwd.as_path(), Path::new(env!("CARGO_MANIFEST_DIR"))]
        .iter()
        .flat_map(|start| start.ancestors())
        .map(|dir| dir.join("shared").join("models"))
        .find(|dir| dir.join(DEFAULT_EMBEDDING_MODEL).is_dir())
        .expect("no shared/models above the crate; run `bash scripts/fetch-shared.sh DIR` and set BRAID_SHARED=DIR")
}

/// `shared/models/<rel>` for an asset no public source serves (reference.json, the test
/// fixtures), or `None` after telling stderr (uncaptured, so it shows) that `test` is skipped.
fn unfetchable(rel: &str, test: &str) -> Option<PathBuf> {
    let path = shared_models().join(rel);
    if path.exists() {
        return Some(path);
    }
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test}: {} is absent (not publicly fetchable; the workplace's shared/models has it)",
        path.display()
    );
    None
}

fn reference(test: &str) -> Option<Value> {
    let path = unfetchable("reference.json", test)?;
    Some(serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap())
}

fn runtime() {
    if let Err(e) = init_runtime() {
        panic!("ONNX Runtime is required for this test; run `bash scripts/setup-onnxruntime.sh`: {e}");
    }
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect()
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect()
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_owned()).collect()
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    dot(a, b) / (dot(a, a).sqrt() * dot(b, b).sqrt())
}

fn minilm_dir() -> PathBuf {
    shared_models().join(DEFAULT_EMBEDDING_MODEL)
}

fn check_embedding_parity(key: &str, file: &str) {
    runtime();
    let Some(reference) = reference(&format!("{key} parity")) else { return };
    let case = &reference["embedding"][key];
    assert_eq!(case["file"], file);
    let sentences = strs(&reference["sentences"]);
    let texts: Vec<&str> = sentences.iter().map(String::as_str).collect();

    let embedder = OnnxEmbedder::builder().model_dir(minilm_dir()).onnx_file(file).build().unwrap();
    assert_eq!(embedder.dim(), 384);
    assert_eq!(embedder.model_id(), format!("all-MiniLM-L6-v2/{file}"));

    // Reference ids are padded with [PAD] = 0 to the batch's longest sentence.
    let ids = embedder.token_ids(&texts).unwrap();
    for (got, want) in ids.iter().zip(case["token_ids"].as_array().unwrap()) {
        let mut want = ints(want);
        while want.last() == Some(&0) {
            want.pop();
        }
        assert_eq!(got, &want);
    }

    let vectors = embedder.embed(&texts).unwrap();
    assert_eq!(vectors.len(), 3);
    for (i, (got, want)) in vectors.iter().zip(case["vectors"].as_array().unwrap()).enumerate() {
        let want = floats(want);
        assert_eq!(got.len(), 384);
        assert!((dot(got, got) - 1.0).abs() < 1e-5, "s{i} is not unit length");
        let cos = cosine(got, &want);
        assert!(cos >= 0.9999, "{key} s{i}: cosine {cos} to the reference");
    }
}

#[test]
fn fp32_embeddings_match_reference() {
    check_embedding_parity("all-MiniLM-L6-v2/fp32", "model.onnx");
}

#[test]
fn int8_embeddings_match_reference() {
    check_embedding_parity("all-MiniLM-L6-v2/int8", "model_int8.onnx");
}

#[test]
fn embed_keeps_input_order_and_handles_empty_input() {
    runtime();
    let embedder = OnnxEmbedder::builder().model_dir(minilm_dir()).batch_size(2).build().unwrap();
    assert!(embedder.embed(&[]).unwrap().is_empty());

    let texts = [
        "Rust is a systems programming language focused on safety and speed.",
        "",
        "fox",
        "The quick brown fox jumps over the lazy dog.",
        "ünïcödé ✓ 中文 🦀",
    ];
    let together = embedder.embed(&texts).unwrap();
    for (text, vector) in texts.iter().zip(&together) {
        let alone = embedder.embed(&[text]).unwrap().remove(0);
        assert!(cosine(vector, &alone) > 0.99999, "{text:?} moved");
    }
    // A text far beyond max_seq_len is truncated, not refused.
    let long = "retrieval ".repeat(2000);
    let v = embedder.embed(&[&long]).unwrap();
    assert_eq!(v[0].len(), 384);
}

#[test]
fn tiny_cross_encoder_matches_reference() {
    runtime();
    let Some(reference) = reference("tiny_cross_encoder_matches_reference") else { return };
    let case = &reference["reranker"]["tiny-random-cross-encoder/FIXTURE"];
    let dir = shared_models().join(case["dir"].as_str().unwrap());
    let model = CrossEncoder::builder().model_dir(&dir).max_len(512).build().unwrap();
    assert_eq!(model.model_id(), "tiny-random-cross-encoder/model.onnx");

    let pairs = case["pairs"].as_array().unwrap();
    let query = pairs[0][0].as_str().unwrap();
    let passages: Vec<&str> = pairs
        .iter()
        .map(|p| {
            assert_eq!(p[0].as_str().unwrap(), query);
            p[1].as_str().unwrap()
        })
        .collect();

    for (i, passage) in passages.iter().enumerate() {
        let enc = model.encode_pair(query, passage).unwrap();
        let mask = ints(&reference["cost_fixture_reranker"]["attention_mask"][i]);
        let len = mask.iter().filter(|&&m| m == 1).count();
        assert_eq!(enc.input_ids, ints(&case["token_ids"][i])[..len]);
        assert_eq!(enc.token_type_ids, ints(&case["type_ids"][i])[..len]);
    }

    let scores = model.score(query, &passages).unwrap();
    for (got, want) in scores.iter().zip(floats(&case["logits"])) {
        assert!((got - want).abs() < 1e-5, "logit {got}, reference {want}");
    }
    // Each pair alone (fp32 model: batching does not change scores).
    for (passage, want) in passages.iter().zip(floats(&case["logits"])) {
        let got = model.score(query, &[passage]).unwrap()[0];
        assert!((got - want).abs() < 1e-5, "logit {got} alone, reference {want}");
    }
    assert!(model.score(query, &[]).unwrap().is_empty());
}

#[test]
fn cost_fixture_matches_reference_in_one_batch() {
    runtime();
    let Some(reference) = reference("cost_fixture_matches_reference_in_one_batch") else { return };
    let case = &reference["cost_fixture_reranker"];
    let dir = shared_models().join(case["dir"].as_str().unwrap());
    // int8 with dynamic quantisation: the reference sent both pairs in one padded batch,
    // so this must too (batch_size >= 2).
    let model = CrossEncoder::builder().model_dir(&dir).max_len(512).batch_size(16).intra_threads(1).build().unwrap();
    let pairs = case["pairs"].as_array().unwrap();
    let query = pairs[0][0].as_str().unwrap();
    let passages: Vec<&str> = pairs.iter().map(|p| p[1].as_str().unwrap()).collect();
    let scores = model.score(query, &passages).unwrap();
    for (got, want) in scores.iter().zip(floats(&case["logits"])) {
        assert!((got - want).abs() < 1e-5, "logit {got}, reference {want}");
    }
}

#[test]
fn long_passage_is_truncated_but_query_kept() {
    runtime();
    let Some(reference) = reference("long_passage_is_truncated_but_query_kept") else { return };
    let case = &reference["reranker"]["tiny-random-cross-encoder/FIXTURE"];
    let dir = shared_models().join(case["dir"].as_str().unwrap());
    let model = CrossEncoder::builder().model_dir(&dir).max_len(128).build().unwrap();
    let query = case["pairs"][0][0].as_str().unwrap();
    // [CLS] query [SEP] from the reference encoding: the first 9 tokens.
    let query_part = &ints(&case["token_ids"][0])[..9];
    let passage = "Berlin has a population of 3,520,031 registered inhabitants. ".repeat(500);

    let enc = model.encode_pair(query, &passage).unwrap();
    assert_eq!(enc.input_ids.len(), 128);
    assert_eq!(&enc.input_ids[..9], query_part, "every query token is present");
    assert_eq!(enc.token_type_ids[..9], [0; 9]);
    assert!(enc.token_type_ids[9..].iter().all(|&t| t == 1));
    assert_eq!(enc.input_ids.last(), Some(&102), "ends with [SEP]");

    let scores = model.score(query, &[&passage, "short"]).unwrap();
    assert_eq!(scores.len(), 2);
    assert!(scores.iter().all(|s| s.is_finite()));
}

#[test]
fn missing_model_dir_is_a_typed_error() {
    let nowhere = Path::new("/nonexistent/braid-model");
    let err = OnnxEmbedder::builder().model_dir(nowhere).build().unwrap_err();
    assert!(matches!(err, Error::Model { .. }), "{err:?}");
    let err = CrossEncoder::builder().model_dir(nowhere).build().unwrap_err();
    assert!(matches!(err, Error::Model { .. }), "{err:?}");
    let err = find_model_dir(None, "no-such-model-for-braid").unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::Model { .. }) && msg.contains("no-such-model-for-braid"), "{msg}");
    // A missing ONNX file in a valid directory is also typed.
    let err = OnnxEmbedder::builder().model_dir(minilm_dir()).onnx_file("nope.onnx").build().unwrap_err();
    assert!(matches!(err, Error::Model { .. }), "{err:?}");
}

#[test]
fn explicit_model_dir_wins_over_discovery() {
    // The order env > cache > shared/models is covered by the unit tests in discovery.rs
    // (without mutating this process's environment).
    // Any directory that qualifies (tokenizer.json and an .onnx file) wins when named.
    let other = tempfile::tempdir().unwrap();
    std::fs::copy(minilm_dir().join("tokenizer.json"), other.path().join("tokenizer.json")).unwrap();
    std::fs::write(other.path().join("other.onnx"), b"").unwrap();
    assert_eq!(find_model_dir(Some(other.path()), DEFAULT_EMBEDDING_MODEL).unwrap(), other.path());
    let found = find_model_dir(None, DEFAULT_EMBEDDING_MODEL).unwrap();
    assert!(found.ends_with(DEFAULT_EMBEDDING_MODEL), "{}", found.display());
}

#[test]
fn invalid_settings_are_refused() {
    let err = OnnxEmbedder::builder().model_dir(minilm_dir()).batch_size(0).build().unwrap_err();
    assert!(matches!(err, Error::InvalidRequest { .. }), "{err:?}");
    let err = OnnxEmbedder::builder().model_dir(minilm_dir()).max_seq_len(4096).build().unwrap_err();
    assert!(matches!(err, Error::InvalidRequest { .. }), "{err:?}");
    if let Some(tiny) =
        unfetchable("test-fixtures/tiny-random-cross-encoder", "invalid_settings_are_refused (cross-encoder part)")
    {
        let err = CrossEncoder::builder().model_dir(&tiny).max_len(2).build().unwrap_err();
        assert!(matches!(err, Error::InvalidRequest { .. }), "{err:?}");
    }
}

/// Fetching by Hugging Face id, against a local server that lays the shared model out as the
/// hub does (`/<owner>/<name>/resolve/main/<file>`).
#[cfg(feature = "fetch")]
mod fetch {
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;

    use super::*;
    use braid_models::fetch_model_from;

    /// Serves `requests` GETs, then stops. `onnx/model.onnx` is the int8 graph (smaller);
    /// `config.json` is missing (404), as optional files may be.
    fn hub(requests: usize) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for stream in listener.incoming().take(requests) {
                let mut stream = stream.unwrap();
                let mut line = String::new();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                reader.read_line(&mut line).unwrap();
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap() <= 2 {
                        break;
                    }
                }
                let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
                let file = match path.rsplit_once("/resolve/main/").map(|(_, f)| f) {
                    Some("tokenizer.json") => Some(minilm_dir().join("tokenizer.json")),
                    Some("onnx/model.onnx") => Some(minilm_dir().join("model_int8.onnx")),
                    _ => None,
                };
                match file.and_then(|f| std::fs::read(f).ok()) {
                    Some(body) => {
                        let head =
                            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
                        stream.write_all(head.as_bytes()).unwrap();
                        stream.write_all(&body).unwrap();
                    }
                    None => stream
                        .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                        .unwrap(),
                }
            }
        });
        address
    }

    #[test]
    fn a_model_fetched_by_id_embeds_and_is_cached() {
        runtime();
        let cache = tempfile::tempdir().unwrap();
        let endpoint = hub(3);
        let dir = fetch_model_from(&endpoint, "sentence-transformers/all-MiniLM-L6-v2", cache.path()).unwrap();
        assert_eq!(dir, cache.path().join("all-MiniLM-L6-v2"));
        assert!(!dir.join("config.json").exists(), "optional files may be missing");
        let model = OnnxEmbedder::builder().model_dir(&dir).build().unwrap();
        assert_eq!(model.embed(&["hello"]).unwrap()[0].len(), 384);
        // The server is gone now: a second fetch is served from the cache.
        let again = fetch_model_from(&endpoint, "sentence-transformers/all-MiniLM-L6-v2", cache.path()).unwrap();
        assert_eq!(again, dir);
    }

    #[test]
    fn unreachable_hubs_and_bad_ids_are_typed_errors() {
        let cache = tempfile::tempdir().unwrap();
        // The HTTP client's error is kept as the source.
        let err = fetch_model_from("http://127.0.0.1:9", "a/b", cache.path()).unwrap_err();
        assert!(matches!(err, Error::ModelFailed { .. }), "{err}");
        assert!(std::error::Error::source(&err).is_some(), "{err}");
        let err = fetch_model_from(&hub(1), "owner/missing-model", cache.path()).unwrap_err();
        assert!(matches!(err, Error::ModelFailed { .. }), "{err}");
        assert!(matches!(fetch_model_from("http://x", "../../etc", cache.path()), Err(Error::InvalidRequest { .. })));
    }
}
