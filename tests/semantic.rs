//! The semantic leg with the real all-MiniLM-L6-v2 model (ONNX Runtime must be installed:
//! `bash scripts/setup-onnxruntime.sh`, which the README's test command runs).

use std::sync::{Arc, OnceLock};

use braid::models::OnnxEmbedder;
use braid::{Embedder, Error, Index, Leg, Mode, Principal, Record, SearchRequest};

use crate::common::{assert_semantic_search_is_confined, corpus, ids, Counting};

fn model() -> Arc<OnnxEmbedder> {
    static MODEL: OnceLock<Arc<OnnxEmbedder>> = OnceLock::new();
    MODEL.get_or_init(|| Arc::new(OnnxEmbedder::builder().intra_threads(1).build().expect("model"))).clone()
}

fn counting() -> Arc<Counting> {
    Counting::new(model())
}

fn semantic_index() -> Index {
    let index = Index::builder().embedder(model()).create_in_ram().unwrap();
    let mut w = index.writer().unwrap();
    for r in corpus() {
        w.upsert(&r).unwrap();
    }
    w.commit().unwrap();
    index
}

#[test]
fn natural_questions_find_their_answer() {
    let idx = semantic_index();
    let r = idx
        .search(
            &SearchRequest::new("can I send it back if I no longer want it?", Principal::public()).mode(Mode::Semantic),
        )
        .unwrap();
    assert_eq!(ids(&r)[0], "returns");
    assert_eq!(r.stats.legs, [Leg::Semantic]);
    assert_eq!(r.stats.semantic_path, Some("exact"));
    let r = idx.search(&SearchRequest::new("how do I secure my login with a phone app", Principal::public())).unwrap();
    assert_eq!(r.stats.legs, [Leg::Lexical, Leg::Fuzzy, Leg::Semantic]);
    assert_eq!(ids(&r)[0], "two-factor");
}

#[test]
fn the_semantic_leg_respects_permissions() {
    assert_semantic_search_is_confined(&semantic_index(), false);
}

#[test]
fn unchanged_records_are_not_embedded_again() {
    let dir = tempfile::tempdir().unwrap();
    let embedder = counting();
    let idx = Index::builder().embedder(embedder.clone()).create(dir.path()).unwrap();
    let mut w = idx.writer().unwrap();
    for r in corpus() {
        w.upsert(&r).unwrap();
    }
    w.commit().unwrap();
    let first = embedder.texts();
    assert_eq!(first, corpus().len());
    // Re-index everything, one record changed.
    for r in corpus() {
        let r = if r.id() == "returns" { r.body("Items can be returned within 45 days.") } else { r };
        w.upsert(&r).unwrap();
    }
    w.commit().unwrap();
    assert_eq!(embedder.texts(), first + 1);
    drop(w);

    // Reopen with the same model: the vectors come back; another model is refused.
    assert_eq!(Index::recorded_embedding(dir.path()).unwrap().unwrap().dim, 384);
    let reopened = Index::builder().embedder(counting()).open(dir.path()).unwrap();
    let r = reopened
        .search(
            &SearchRequest::new("how many days do I have to return an item", Principal::public()).mode(Mode::Semantic),
        )
        .unwrap();
    assert_eq!(ids(&r)[0], "returns");
    assert_eq!(r.hits.len(), 6, "every public record has exactly one vector");

    struct Other;
    impl Embedder for Other {
        fn model_id(&self) -> &str {
            "other/model.onnx"
        }
        fn dim(&self) -> usize {
            384
        }
        fn embed(&self, texts: &[&str]) -> braid::Result<Vec<Vec<f32>>> {
            Ok(texts.iter().map(|_| vec![1.0; 384]).collect())
        }
    }
    assert!(matches!(Index::builder().embedder(Arc::new(Other)).open(dir.path()), Err(Error::InvalidRequest { .. })));
}

#[test]
fn deleted_records_leave_the_vector_leg() {
    let idx = semantic_index();
    let mut w = idx.writer().unwrap();
    w.delete("returns").unwrap();
    w.upsert(&Record::new("new").title("Exchange policy").body("Swap an item for another size.").acl(["public"]))
        .unwrap();
    w.commit().unwrap();
    let r = idx
        .search(&SearchRequest::new("return an unwanted item", Principal::public()).mode(Mode::Semantic).k(50))
        .unwrap();
    assert!(!ids(&r).contains(&"returns"));
    assert!(ids(&r).contains(&"new"));
}

#[test]
fn stored_vectors_are_the_models_and_respect_permissions() {
    let idx = semantic_index();
    let record = corpus().into_iter().find(|r| r.id() == "returns").unwrap();
    let stored = idx.vector("returns", &Principal::public()).unwrap().expect("a public record has a vector");
    let fresh = model().embed(&[record.passage().as_str()]).unwrap().pop().unwrap();
    let cosine: f32 = stored.iter().zip(&fresh).map(|(a, b)| a * b).sum();
    assert_eq!(stored.len(), 384);
    assert!(cosine > 0.999, "the stored vector is the model's embedding of the passage (cosine {cosine})");
    // A record the caller may not see has no vector for them, exactly like a missing one.
    let hidden = corpus().into_iter().find(|r| r.acl.as_slice() == ["group:support"]).unwrap();
    assert_eq!(idx.vector(hidden.id(), &Principal::public()).unwrap(), None);
    assert_eq!(idx.vector("no-such-record", &Principal::public()).unwrap(), None);
    let insider = Principal::from_verified_tokens(hidden.acl.as_slice().iter().cloned());
    assert!(idx.vector(hidden.id(), &insider).unwrap().is_some());
}
