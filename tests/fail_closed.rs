//! Requests and records that would widen what someone sees, or run unbounded, are refused
//! with typed errors: reserved tokens, an oversized depth, a passed deadline; and the
//! unchanged-record skip never takes a changed ACL for unchanged.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use braid::{
    content_hash, AccessPolicy, Error, Index, IndexConfig, Mode, Principal, Record, Reranker, SearchRequest, MAX_DEPTH,
};

use crate::common::{ids, index};

#[test]
fn reserved_tokens_are_refused_on_records_and_principals() {
    let idx = Index::create_in_ram(IndexConfig { policy: AccessPolicy::Deny, ..IndexConfig::default() }).unwrap();
    let mut w = idx.writer().unwrap();
    for acl in ["__braid:no-acl", "__braid:no-tenant", " __braid:x "] {
        let err = w.upsert(&Record::new("r").body("secret plans").acl([acl])).unwrap_err();
        assert!(matches!(err, Error::ReservedToken { .. }), "{acl}: {err}");
        assert!(err.is_user_error());
    }
    w.upsert(&Record::new("unlabelled").body("secret plans")).unwrap();
    w.commit().unwrap();
    // A principal cannot be built holding the token that stands for "no ACL" …
    let err = Principal::try_from_verified_tokens(["group:x", "__braid:no-acl"]).unwrap_err();
    assert!(matches!(err, Error::ReservedToken { ref token } if token == "__braid:no-acl"), "{err}");
    // … and the infallible constructor drops it, so under `deny` nothing leaks either.
    let dropped = Principal::from_verified_tokens(["__braid:no-acl"]);
    assert!(!dropped.has("__braid:no-acl"));
    let hits = idx.search(&SearchRequest::new("secret", dropped).mode(Mode::Lexical)).unwrap();
    assert!(hits.hits.is_empty(), "{:?}", ids(&hits));
}

#[test]
fn depth_above_the_maximum_is_a_typed_error() {
    let idx = index();
    for depth in [MAX_DEPTH + 1, usize::MAX / 2, usize::MAX] {
        for mode in [Mode::Lexical, Mode::Fuzzy, Mode::Hybrid] {
            let err =
                idx.search(&SearchRequest::new("refund", Principal::public()).depth(depth).mode(mode)).unwrap_err();
            assert!(matches!(err, Error::InvalidRequest { .. }), "{depth} {mode:?}: {err}");
            assert!(err.to_string().contains("depth"), "{err}");
        }
    }
    let ok = idx.search(&SearchRequest::new("refund", Principal::public()).depth(MAX_DEPTH)).unwrap();
    assert!(!ok.hits.is_empty());
}

#[test]
fn a_passed_deadline_cancels_the_search() {
    let idx = index();
    let late = SearchRequest::new("refund", Principal::public()).deadline(Instant::now());
    assert!(matches!(idx.search(&late), Err(Error::DeadlineExceeded)));
    let soon = SearchRequest::new("refund", Principal::public()).deadline(Instant::now() + Duration::from_secs(600));
    assert!(!idx.search(&soon).unwrap().hits.is_empty());
}

/// A cross-encoder whose every call lasts until the request's deadline has passed: the
/// search must stop before the next batch instead of scoring the rest.
struct UntilDeadline {
    /// Set just before the search (the reranker is given when the index is built).
    deadline: std::sync::OnceLock<Instant>,
    calls: AtomicUsize,
}

impl Reranker for UntilDeadline {
    fn model_id(&self) -> &str {
        "until-deadline"
    }
    fn score(&self, _: &str, passages: &[&str]) -> braid::Result<Vec<f32>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let deadline = *self.deadline.get().expect("the test sets the deadline before searching");
        while Instant::now() <= deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(passages.iter().map(|p| p.len() as f32).collect())
    }
}

#[test]
fn a_deadline_passing_during_rerank_stops_at_the_next_batch() {
    let reranker = Arc::new(UntilDeadline { deadline: std::sync::OnceLock::new(), calls: AtomicUsize::new(0) });
    let idx = Index::builder().reranker(Arc::clone(&reranker) as Arc<dyn Reranker>).create_in_ram().unwrap();
    let mut w = idx.writer().unwrap();
    for i in 0..40 {
        w.upsert(&Record::new(format!("r{i}")).title("Refunds").body(format!("refund request number {i}"))).unwrap();
    }
    w.commit().unwrap();
    let deadline = Instant::now() + Duration::from_millis(200);
    reranker.deadline.set(deadline).unwrap();
    let request = SearchRequest::new("refund", Principal::public()).mode(Mode::Lexical).rerank(30).deadline(deadline);
    assert!(matches!(idx.search(&request), Err(Error::DeadlineExceeded)));
    // 30 candidates are four batches; the deadline passed during the first.
    assert_eq!(reranker.calls.load(Ordering::SeqCst), 1);
}

#[test]
fn an_acl_change_is_never_skipped_as_unchanged() {
    let idx = Index::create_in_ram(IndexConfig::default()).unwrap();
    let doc = |acl: &str| Record::new("doc").title("Roadmap").body("quarterly roadmap").acl([acl]);
    let find = |who: &str| {
        let p = Principal::from_verified_tokens([who]);
        idx.search(&SearchRequest::new("roadmap", p).mode(Mode::Lexical)).unwrap().hits.len()
    };
    let mut w = idx.writer().unwrap();
    w.upsert(&doc("public")).unwrap();
    w.commit().unwrap();
    assert_eq!(find("nobody"), 1);
    // Same text, narrower ACL: the digest differs, so the record is rewritten.
    assert_ne!(content_hash(&doc("public")).unwrap(), content_hash(&doc("group:staff")).unwrap());
    w.upsert(&doc("group:staff")).unwrap();
    w.commit().unwrap();
    assert_eq!(find("nobody"), 0);
    assert_eq!(find("group:staff"), 1);
    // The digest is SHA-256 (32 bytes) over every part of the record, tenant included.
    let tenant = |t: &str| Record::new("doc").body("x").acl([format!("tenant:{t}")]);
    assert_ne!(content_hash(&tenant("acme")).unwrap(), content_hash(&tenant("globex")).unwrap());
    let kw = |v: &str| Record::new("doc").body("x").keyword("k", v);
    assert_ne!(content_hash(&kw("a")).unwrap(), content_hash(&kw("b")).unwrap());
}
