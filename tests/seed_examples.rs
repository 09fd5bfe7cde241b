//! The help center's seed examples answer well out of the box, with and without a model: the
//! intended article is among the first three articles (sections collapsed per article) in
//! `Mode::Hybrid` (the default), on the bundled corpus as it is, with its shipped synonyms.

use std::sync::Arc;

use braid::{Index, IndexConfig, Mode, Principal, SearchRequest, Synonyms};

use crate::common::repo;

/// Each seed query and the articles that answer it (any one of them counts).
const SEEDS: [(&str, &[&str]); 6] = [
    ("retun policy", &["billing/sync-key-hardware-returns"]),
    ("HTTP 451", &["api-errors/http-451-unavailable-legal-reasons"]),
    ("order 202610020001", &["billing/find-invoice-by-order-number"]),
    ("kuber", &["admin/self-hosted-relay-kubernetes"]),
    ("can I send it back if I no longer want it?", &["billing/sync-key-hardware-returns"]),
    ("Can a premium member refund the wrong plan?", &["billing/refund-policy-annual", "billing/refund-policy-monthly"]),
];

fn build(embedder: Option<Arc<dyn braid::Embedder>>) -> Index {
    let builder = Index::builder().config(IndexConfig::default());
    let index = match embedder {
        Some(e) => builder.embedder(e).create_in_ram().unwrap(),
        None => builder.create_in_ram().unwrap(),
    };
    let mut w = index.writer().unwrap();
    let corpus = repo().join("datasets/helpcenter");
    for record in braid::ingest::Source::detect(&corpus).unwrap().records(&index.config().schema) {
        w.upsert(&record.unwrap()).unwrap();
    }
    w.commit().unwrap();
    let synonyms = std::fs::read_to_string(corpus.join("synonyms.txt")).unwrap();
    index.set_synonyms(Synonyms::parse(&synonyms).unwrap()).unwrap();
    index
}

/// The first three articles for `query`, as a search box shows them.
fn top_articles(index: &Index, query: &str) -> Vec<String> {
    let request = SearchRequest::new(query, Principal::public()).mode(Mode::Hybrid).collapse(true).k(3);
    index.search(&request).unwrap().hits.into_iter().map(|h| h.parent.unwrap_or(h.id)).collect()
}

/// Asserts every seed but those in `known_misses`.
fn check(index: &Index, known_misses: &[&str]) {
    let mut misses = Vec::new();
    for (query, wanted) in SEEDS.into_iter().filter(|(q, _)| !known_misses.contains(q)) {
        let top = top_articles(index, query);
        if !top.iter().any(|a| wanted.contains(&a.as_str())) {
            misses.push(format!("{query:?}: {top:?}, wanted one of {wanted:?}"));
        }
    }
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

#[test]
fn seed_examples_without_a_model() {
    check(&build(None), &[]);
}

/// The same with all-MiniLM-L6-v2 (ONNX Runtime and the model required; embedding the help
/// center's 741 sections takes about three minutes on 2 cores).
///
/// `retun policy` passes because the semantic leg embeds the query as corrected by "did you
/// mean" (`return policy`): the misspelt text's embedding drifts toward other "policy"
/// articles (refund, data retention, desktop client policy).
#[test]
fn seed_examples_with_the_model() {
    let model = braid::models::OnnxEmbedder::builder().build().expect("model (bash scripts/setup-onnxruntime.sh)");
    check(&build(Some(Arc::new(model))), &[]);
}
