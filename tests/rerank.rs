//! The rerank stage with a real ONNX cross-encoder (the random-weight fixture: its scores are
//! meaningless, its interface is the real one).

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use braid::models::CrossEncoder;
use braid::{Mode, Principal, Reranker, SearchRequest};

use crate::common::{index, index_built, unfetchable};

struct Counting {
    inner: CrossEncoder,
    calls: AtomicUsize,
    most: AtomicUsize,
}

impl Reranker for Counting {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }
    fn score(&self, query: &str, passages: &[&str]) -> braid::Result<Vec<f32>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.most.fetch_max(passages.len(), Ordering::SeqCst);
        self.inner.score(query, passages)
    }
}

/// The random-weight cross-encoder fixture, or `None` (the test skips) where it is absent.
fn fixture(test: &str) -> Option<Arc<Counting>> {
    let dir = unfetchable("models/test-fixtures/tiny-random-cross-encoder", test)?;
    let inner = CrossEncoder::builder().model_dir(&dir).intra_threads(1).build().expect("fixture");
    Some(Arc::new(Counting { inner, calls: AtomicUsize::new(0), most: AtomicUsize::new(0) }))
}

#[test]
fn reranking_stays_within_fusion_and_the_budget() {
    let Some(reranker) = fixture("reranking_stays_within_fusion_and_the_budget") else { return };
    let idx = index_built(braid::Index::builder().reranker(reranker.clone()));
    for q in ["refund policy 30 days", "sso setup saml", "kubernetes relay", "zzz", ""] {
        for budget in [1, 3, 50] {
            for mode in [Mode::Lexical, Mode::Hybrid] {
                let plain = index().search(&SearchRequest::new(q, Principal::public()).mode(mode).k(50)).unwrap();
                let r =
                    idx.search(&SearchRequest::new(q, Principal::public()).mode(mode).k(50).rerank(budget)).unwrap();
                let fused: HashSet<&str> = plain.hits.iter().map(|h| h.id.as_str()).collect();
                let got: HashSet<&str> = r.hits.iter().map(|h| h.id.as_str()).collect();
                assert_eq!(got, fused, "{q:?}: reranking neither adds nor drops candidates");
                assert!(r.stats.reranked <= budget);
                assert_eq!(
                    r.stats.reranked,
                    budget.min(plain.hits.len()).min(if q.is_empty() { 0 } else { usize::MAX })
                );
                let scored = r.hits.iter().filter(|h| h.explain.rerank.is_some()).count();
                assert_eq!(scored, r.stats.reranked);
                // The reranked prefix is ordered by rerank score; the rest keeps fused order.
                for w in r.hits[..scored].windows(2) {
                    assert!(w[0].explain.rerank >= w[1].explain.rerank);
                }
                for w in r.hits[scored..].windows(2) {
                    assert!(w[0].explain.fused_rank < w[1].explain.fused_rank);
                }
            }
        }
    }
    assert!(reranker.most.load(Ordering::SeqCst) <= 50);
    assert!(reranker.calls.load(Ordering::SeqCst) > 0);
}

#[test]
fn reranking_never_sees_hidden_records() {
    let Some(reranker) = fixture("reranking_never_sees_hidden_records") else { return };
    let idx = index_built(braid::Index::builder().reranker(reranker));
    let r = idx
        .search(
            &SearchRequest::new("sso setup frobnicator escalation", Principal::from_verified_tokens(["tenant:acme"]))
                .rerank(50)
                .k(50),
        )
        .unwrap();
    assert!(r
        .hits
        .iter()
        .all(|h| h.id != "globex-sso" && h.id != "globex-support-runbook" && h.id != "refund-exceptions"));
    assert!(r.stats.micros.contains_key(&braid::Stage::Rerank));
    // k smaller than the budget: the top k of the reranked candidates.
    let r = idx.search(&SearchRequest::new("refund", Principal::public()).rerank(10).k(1)).unwrap();
    assert_eq!(r.hits.len(), 1);
    assert!(r.hits[0].explain.rerank.is_some());
}
