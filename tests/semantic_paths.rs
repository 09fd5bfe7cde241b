//! The semantic leg in every build: the deterministic [`HashEmbedder`] stands in for a model,
//! so fusion with the semantic leg, permission-filtered vector search, persistence and
//! deletes are tested without ONNX Runtime (`cargo test -p braid --no-default-features`) as
//! well as with it. `semantic.rs` tests the same paths with the real model where the `models`
//! feature is on; `crash.rs` and `leaks.rs` pick the hash embedder when it is off.

use std::sync::Arc;

use braid::{Embedder, Error, Index, IndexConfig, Leg, Mode, Passages, Principal, Record, SearchRequest};

use crate::common::{assert_semantic_search_is_confined, corpus, ids, visible, Counting, HashEmbedder};

const DIM: usize = 64;

fn counting() -> Arc<Counting> {
    Counting::new(Arc::new(HashEmbedder::new(DIM)))
}

fn fill(index: &Index, records: &[Record]) {
    let mut w = index.writer().unwrap();
    for r in records {
        w.upsert(r).unwrap();
    }
    w.commit().unwrap();
}

fn semantic_index() -> Index {
    let index = Index::builder().embedder(Arc::new(HashEmbedder::new(DIM))).create_in_ram().unwrap();
    fill(&index, &corpus());
    index
}

#[test]
fn a_records_own_passage_is_its_nearest_neighbour() {
    let idx = semantic_index();
    let insider = Principal::from_verified_tokens(["group:support", "tenant:globex"]);
    for record in corpus().into_iter().filter(|r| visible(&insider, r)) {
        let r = idx.search(&SearchRequest::new(record.passage(), insider.clone()).mode(Mode::Semantic).k(3)).unwrap();
        assert_eq!(r.stats.legs, [Leg::Semantic]);
        assert_eq!(r.stats.semantic_path, Some("exact"));
        assert_eq!(ids(&r)[0], record.id(), "{}", record.id());
        assert!(r.hits[0].score > 0.0);
    }
}

/// Hybrid mode fuses the semantic leg with the lexical ones: the semantic leg runs, has
/// candidates and a weight, and shows in the hits' explain records; a query no word of which
/// any visible record holds still gets semantic neighbours, only visible ones.
#[test]
fn hybrid_fuses_the_semantic_leg() {
    let idx = semantic_index();
    let r = idx.search(&SearchRequest::new("send an item back within 30 days", Principal::public())).unwrap();
    assert_eq!(r.stats.legs, [Leg::Lexical, Leg::Fuzzy, Leg::Semantic]);
    assert_eq!(ids(&r)[0], "returns");
    assert!(r.stats.candidates.get(&Leg::Semantic).copied().unwrap_or(0) > 0, "{:?}", r.stats.candidates);
    assert!(r.stats.weights.contains_key(&Leg::Semantic), "{:?}", r.stats.weights);
    let top = &r.hits[0].explain;
    assert!(top.legs.iter().any(|l| l.leg == Leg::Semantic && l.rank == 1), "{top:?}");
    assert!(top.legs.iter().any(|l| l.leg == Leg::Lexical), "{top:?}");

    // "zorblax" is only in a support-only record: the public gets no lexical hit for it, and
    // whatever the semantic leg brings is public.
    let r = idx.search(&SearchRequest::new("zorblax", Principal::public()).mode(Mode::Hybrid).k(50)).unwrap();
    assert!(!ids(&r).contains(&"refund-exceptions"));
    for hit in &r.hits {
        let record = corpus().into_iter().find(|c| c.id() == hit.id).unwrap();
        assert!(visible(&Principal::public(), &record), "leaked {}", hit.id);
        assert!(hit.explain.legs.iter().all(|l| l.leg == Leg::Semantic), "{:?}", hit.explain);
    }
    let support = Principal::from_verified_tokens(["group:support"]);
    let r = idx.search(&SearchRequest::new("zorblax", support).mode(Mode::Hybrid)).unwrap();
    assert_eq!(ids(&r)[0], "refund-exceptions");
}

/// Vector search is confined to the caller's records in every semantic mode.
#[test]
fn filtered_vector_search_respects_permissions() {
    let idx = semantic_index();
    assert_semantic_search_is_confined(&idx, true);
    // Stored vectors: the embedding of the passage, and none for a record the caller may not see.
    let record = corpus().into_iter().find(|r| r.id() == "returns").unwrap();
    let stored = idx.vector("returns", &Principal::public()).unwrap().expect("a vector");
    let fresh = HashEmbedder::new(DIM).embed(&[record.passage().as_str()]).unwrap().pop().unwrap();
    let cosine: f32 = stored.iter().zip(&fresh).map(|(a, b)| a * b).sum();
    assert!(cosine > 0.999, "cosine {cosine}");
    assert_eq!(idx.vector("refund-exceptions", &Principal::public()).unwrap(), None);
    assert!(idx.vector("refund-exceptions", &Principal::from_verified_tokens(["group:support"])).unwrap().is_some());
    let passages = |principal: &Principal| idx.searcher().passage_vectors("refund-exceptions", principal).unwrap();
    assert_eq!(passages(&Principal::public()), None);
    assert_eq!(passages(&Principal::from_verified_tokens(["group:support"])).map(|rows| rows.len()), Some(1));
}

#[test]
fn vectors_persist_and_unchanged_records_are_not_embedded_again() {
    let dir = tempfile::tempdir().unwrap();
    let embedder = counting();
    let idx = Index::builder().embedder(embedder.clone()).create(dir.path()).unwrap();
    fill(&idx, &corpus());
    let first = embedder.texts();
    assert_eq!(first, corpus().len());
    let changed: Vec<Record> = corpus()
        .into_iter()
        .map(|r| if r.id() == "returns" { r.body("Items can be returned within 45 days.") } else { r })
        .collect();
    fill(&idx, &changed);
    assert_eq!(embedder.texts(), first + 1);
    drop(idx);

    assert_eq!(Index::recorded_embedding(dir.path()).unwrap().unwrap().dim, DIM);
    let again = counting();
    let reopened = Index::builder().embedder(again.clone()).open(dir.path()).unwrap();
    assert_eq!(again.texts(), 0, "reopening embeds nothing");
    let passage = changed.iter().find(|r| r.id() == "returns").unwrap().passage();
    let r = reopened.search(&SearchRequest::new(passage, Principal::public()).mode(Mode::Semantic).k(50)).unwrap();
    assert_eq!(ids(&r)[0], "returns");
    assert_eq!(r.hits.len(), 6, "every public record has exactly one vector");
    // Another model (same dimension) is refused on an index with this model's vectors.
    struct Other;
    impl Embedder for Other {
        fn model_id(&self) -> &str {
            "other/model"
        }
        fn dim(&self) -> usize {
            DIM
        }
        fn embed(&self, texts: &[&str]) -> braid::Result<Vec<Vec<f32>>> {
            Ok(texts.iter().map(|_| vec![1.0; DIM]).collect())
        }
    }
    assert!(matches!(Index::builder().embedder(Arc::new(Other)).open(dir.path()), Err(Error::InvalidRequest { .. })));
}

#[test]
fn deleted_and_replaced_records_leave_the_vector_leg() {
    let idx = semantic_index();
    let old = corpus().into_iter().find(|r| r.id() == "two-factor").unwrap().passage();
    let mut w = idx.writer().unwrap();
    w.delete("returns").unwrap();
    w.upsert(&Record::new("two-factor").title("Passkeys").body("Sign in with a passkey.").acl(["public"])).unwrap();
    w.commit().unwrap();
    let returns = corpus().into_iter().find(|r| r.id() == "returns").unwrap().passage();
    let r = idx.search(&SearchRequest::new(returns, Principal::public()).mode(Mode::Semantic).k(50)).unwrap();
    assert!(!ids(&r).contains(&"returns"));
    assert_eq!(r.hits.len(), 5);
    // The replaced record has one vector, its new passage's; its new text finds it first.
    let embed = |text: &str| HashEmbedder::new(DIM).embed(&[text]).unwrap().pop().unwrap();
    let cosine = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let stored = idx.vector("two-factor", &Principal::public()).unwrap().expect("a vector");
    let new = "Passkeys\nSign in with a passkey.";
    assert!(cosine(&stored, &embed(new)) > 0.999);
    assert!(cosine(&stored, &embed(&old)) < 0.9);
    let r = idx.search(&SearchRequest::new(new, Principal::public()).mode(Mode::Semantic)).unwrap();
    assert_eq!(ids(&r)[0], "two-factor");
}

/// The semantic leg embeds the query with its misspellings corrected by "did you mean", from
/// the caller's records only: a word some record the caller sees holds is embedded as typed.
#[test]
fn the_semantic_leg_embeds_the_corrected_query() {
    let idx = Index::builder().embedder(Arc::new(HashEmbedder::new(DIM))).create_in_ram().unwrap();
    let mut records = corpus();
    records.push(
        Record::new("typo-note").title("Retun").body("An internal note that spells retun so.").acl(["group:ops"]),
    );
    fill(&idx, &records);
    let public = Principal::public();
    let ops = Principal::from_verified_tokens(["group:ops"]);
    for mode in [Mode::Semantic, Mode::Hybrid] {
        let search = |who: &Principal, query: &str| {
            idx.search(&SearchRequest::new(query, who.clone()).mode(mode).suggest(false)).unwrap()
        };
        let typed = search(&public, "Retun policy?");
        assert_eq!(typed.stats.embedded.as_deref(), Some("return policy?"), "{mode:?}");
        let corrected = search(&public, "return policy?");
        assert_eq!(corrected.stats.embedded, None);
        if mode == Mode::Semantic {
            // The same vector, so the same ranking and scores.
            let scores = |r: &braid::SearchResponse| r.hits.iter().map(|h| (h.id.clone(), h.score)).collect::<Vec<_>>();
            assert_eq!(scores(&typed), scores(&corrected));
        }
        // `ops` sees a record holding "retun": nothing to correct.
        assert_eq!(search(&ops, "Retun policy?").stats.embedded, None, "{mode:?}");
    }
    // Beside the fuzzy leg, the lexical leg reads the correction too; alone, it is plain BM25
    // of the words as typed.
    let leg_hits = |mode: Mode| {
        let r = idx.search(&SearchRequest::new("retun", Principal::public()).mode(mode)).unwrap();
        r.stats.candidates.get(&Leg::Lexical).copied()
    };
    assert!(leg_hits(Mode::Hybrid) > Some(0));
    assert_eq!(leg_hits(Mode::Lexical), Some(0));
    // A supplied query vector is searched as given: nothing is embedded.
    let vector = HashEmbedder::new(DIM).embed(&["x"]).unwrap().remove(0);
    let r = idx.search(&SearchRequest::new("retun", public).mode(Mode::Hybrid).vector(vector)).unwrap();
    assert_eq!(r.stats.embedded, None);
}

/// A long record is embedded as passages (the default windows, [`Passages::DEFAULT`]): one
/// text a window, each read with the title, and the record scores by its best window, so the
/// exact text of its last window finds it with a cosine of 1 — which one vector a record
/// (`passages: None`, as indexes made before passages have) cannot give. The setting is the
/// index's: it survives a reopen.
#[test]
fn long_records_are_embedded_as_passages() {
    let words: Vec<String> = (0..300).map(|i| format!("word{i}")).collect();
    let long = Record::new("long").title("Manual").body(format!("{} lighthouse keeper", words.join(" ")));
    let short = Record::new("short").title("Note").body("a lighthouse by the sea");
    let windows = long.passages(Some(&Passages::DEFAULT));
    assert_eq!(windows.len(), 3, "302 words: the whole text, then windows from words 96 and 192");
    let last = windows.last().unwrap().clone();
    assert!(last.starts_with("Manual ") && last.ends_with("lighthouse keeper"), "{last}");

    let dir = tempfile::tempdir().unwrap();
    let best_of = |index: &Index| {
        let r = index.search(&SearchRequest::new(last.clone(), Principal::public()).mode(Mode::Semantic)).unwrap();
        assert_eq!(ids(&r)[0], "long");
        r.hits[0].explain.legs[0].raw
    };
    for passages in [Some(Passages::DEFAULT), None] {
        let embedder = counting();
        let config = IndexConfig { passages, ..IndexConfig::default() };
        let path = dir.path().join(format!("{passages:?}").replace([' ', '{', '}', ':', ','], ""));
        let index = Index::builder().embedder(embedder.clone()).config(config).create(&path).unwrap();
        fill(&index, &[long.clone(), short.clone()]);
        let expected = if passages.is_some() { windows.len() + 1 } else { 2 };
        assert_eq!(embedder.texts(), expected, "texts embedded with {passages:?}");
        // The stored rows, read back: one per window, each the model's vector of that window.
        let texts = long.passages(index.config().passages.as_ref());
        let stored = index.searcher().passage_vectors("long", &Principal::public()).unwrap().unwrap();
        assert_eq!(stored.len(), texts.len(), "{passages:?}");
        assert_eq!(Some(&stored[0]), index.vector("long", &Principal::public()).unwrap().as_ref());
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        for (row, fresh) in stored.iter().zip(HashEmbedder::new(DIM).embed(&texts).unwrap()) {
            let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
            let cosine = row.iter().zip(&fresh).map(|(a, b)| a * b).sum::<f32>() / (norm(row) * norm(&fresh));
            assert!(cosine > 0.9999, "{passages:?}: a stored row at cosine {cosine} from its window's vector");
        }
        let score = best_of(&index);
        if passages.is_some() {
            assert!((score - 1.0).abs() < 1e-5, "the last window's own text scores {score}");
        } else {
            assert!(score < 0.9, "one vector for 302 words scores {score}");
        }
        drop(index);
        let reopened = Index::builder().embedder(counting()).open(&path).unwrap();
        assert_eq!(reopened.config().passages, passages);
        assert_eq!(best_of(&reopened), score);
    }
}
