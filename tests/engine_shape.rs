//! The index's shape: models given up front, a searcher that holds one commit, reload.
//!
//! Two defects of the old attach-after-open API are impossible by construction now; each test
//! below is the scenario that used to show one.

use std::sync::Arc;

use braid::{EmbeddingInfo, Index, IndexConfig, Mode, Principal, Record, SearchRequest};

use crate::common::HashEmbedder;

fn semantic_ids(index: &Index, query: &str) -> Vec<String> {
    let request = SearchRequest::new(query, Principal::public()).mode(Mode::Semantic).k(5);
    index.search(&request).unwrap().hits.into_iter().map(|h| h.id).collect()
}

/// Once: a second `attach_embedder` on an in-memory index swapped in an empty vector store, and
/// the semantic leg silently found nothing. Now the embedder is given once, at build time, and
/// every clone of the index shares its one store.
#[test]
fn an_in_memory_index_keeps_its_vectors_for_its_whole_life() {
    let index = Index::builder().embedder(Arc::new(HashEmbedder::new(16))).create_in_ram().unwrap();
    let mut w = index.writer().unwrap();
    w.upsert(&Record::new("returns").title("Return policy").body("send an item back within 30 days")).unwrap();
    w.upsert(&Record::new("sso").title("Single sign-on").body("configure SAML for your workspace")).unwrap();
    w.commit().unwrap();
    drop(w);
    let first = semantic_ids(&index, "return policy");
    assert_eq!(first.len(), 2, "the semantic leg finds the committed vectors");
    let clone = index.clone();
    assert_eq!(semantic_ids(&clone, "return policy"), first);
    // A second writer (a later batch) adds to the same store.
    let mut w = clone.writer().unwrap();
    w.upsert(&Record::new("billing").title("Invoices").body("download invoices as PDF")).unwrap();
    w.commit().unwrap();
    assert_eq!(semantic_ids(&index, "invoices").len(), 3);
}

/// Once: `attach_embedder` while a writer was open left the writer on the old store, so the
/// vectors it committed stayed invisible until a reopen. Now a writer writes to the commit's
/// own semantic state: vectors supplied to a writer opened before the index had any are
/// searchable as soon as the commit lands, through every handle.
#[test]
fn vectors_committed_by_an_early_writer_are_searchable_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create(dir.path(), IndexConfig::default()).unwrap();
    assert!(!index.has_semantic());
    let mut w = index.writer().unwrap();
    w.upsert(&Record::new("north").body("up").vector(vec![0.0, 1.0])).unwrap();
    w.upsert(&Record::new("east").body("right").vector(vec![1.0, 0.0])).unwrap();
    w.commit().unwrap();
    assert!(index.has_semantic());
    let request = SearchRequest::new("", Principal::public()).vector(vec![0.9, 0.1]).mode(Mode::Semantic);
    assert_eq!(index.search(&request).unwrap().hits[0].id, "east");
    drop(w);
    // Reopened with its stored vectors: the same answer, without a model.
    let reopened = Index::builder().stored_vectors().open(dir.path()).unwrap();
    assert_eq!(reopened.embedding(), Some(EmbeddingInfo { model_id: braid::SUPPLIED_MODEL.into(), dim: 2 }));
    assert_eq!(reopened.search(&request).unwrap().hits[0].id, "east");
}

/// Opening with another model than the one that made the vectors is refused, before anything
/// is read into the semantic leg.
#[test]
fn a_model_that_did_not_make_the_vectors_is_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::builder().embedder(Arc::new(HashEmbedder::new(16))).create(dir.path()).unwrap();
    let mut w = index.writer().unwrap();
    w.upsert(&Record::new("a").body("alpha")).unwrap();
    w.commit().unwrap();
    drop((w, index));
    let other = Index::builder().embedder(Arc::new(HashEmbedder::new(8))).open(dir.path());
    assert!(matches!(other, Err(braid::Error::InvalidRequest { .. })));
    let named = Index::builder().vectors(EmbeddingInfo { model_id: "someone-else".into(), dim: 16 }).open(dir.path());
    assert!(matches!(named, Err(braid::Error::InvalidRequest { .. })));
}

/// A searcher holds one commit: later commits do not change what it answers, and the index's
/// next searcher sees them.
#[test]
fn a_searcher_keeps_its_commit() {
    let index = Index::create_in_ram(IndexConfig::default()).unwrap();
    let mut w = index.writer().unwrap();
    w.upsert(&Record::new("one").body("refund policy")).unwrap();
    w.commit().unwrap();
    let before = index.searcher();
    w.upsert(&Record::new("two").body("refund exceptions")).unwrap();
    w.commit().unwrap();
    let request = SearchRequest::new("refund", Principal::public()).mode(Mode::Lexical);
    assert_eq!(before.search(&request).unwrap().hits.len(), 1);
    assert_eq!(before.num_records(), 1);
    assert_eq!(index.searcher().search(&request).unwrap().hits.len(), 2);
}

/// `reload` picks up a commit another handle (standing in for another process) wrote, keeps
/// the models the index was built with, and is a no-op when nothing changed.
#[test]
fn reload_serves_a_commit_written_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let embedder = Arc::new(HashEmbedder::new(16));
    {
        let writer_side = Index::builder().embedder(embedder.clone()).create(dir.path()).unwrap();
        let mut w = writer_side.writer().unwrap();
        w.upsert(&Record::new("one").title("Return policy").body("send it back")).unwrap();
        w.commit().unwrap();
    }
    let served = Index::builder().embedder(embedder.clone()).open(dir.path()).unwrap();
    let commit = served.commit_id().expect("an on-disk index names its commit");
    assert!(!served.reload().unwrap(), "nothing changed");
    {
        let writer_side = Index::builder().embedder(embedder).open(dir.path()).unwrap();
        let mut w = writer_side.writer().unwrap();
        w.upsert(&Record::new("two").title("Return labels").body("print a label")).unwrap();
        w.commit().unwrap();
    }
    let held = served.searcher();
    assert_eq!(served.num_records(), 1, "not yet reloaded");
    assert!(served.reload().unwrap());
    assert_ne!(served.commit_id().unwrap(), commit);
    assert_eq!(served.num_records(), 2);
    assert_eq!(held.num_records(), 1, "a searcher taken before keeps its commit");
    assert_eq!(semantic_ids(&served, "return").len(), 2, "the model stays attached across the reload");
    assert!(!served.reload().unwrap());
}

/// While a handle has a writer open, reload leaves its parts alone (its own commits are served
/// as they land), so the writer never writes to parts that are no longer served.
#[test]
fn reload_never_swaps_under_an_open_writer() {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create(dir.path(), IndexConfig::default()).unwrap();
    let mut w = index.writer().unwrap();
    w.upsert(&Record::new("one").body("alpha")).unwrap();
    w.commit().unwrap();
    assert!(!index.reload().unwrap());
    w.upsert(&Record::new("two").body("alpha beta")).unwrap();
    w.commit().unwrap();
    assert_eq!(index.num_records(), 2);
    drop(w);
    assert!(!index.reload().unwrap(), "the writer's own commit is the one served");
}
