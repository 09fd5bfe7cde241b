//! The bundled help center: sections, citations and permission-restricted articles.

use std::sync::OnceLock;

use braid::{Index, Mode, Principal, SearchRequest};

fn helpcenter() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| crate::common::index_of(&crate::common::repo().join("datasets/helpcenter")))
}

fn articles(q: &str, p: Principal) -> Vec<String> {
    let r = helpcenter().search(&SearchRequest::new(q, p).mode(Mode::Hybrid).k(100)).unwrap();
    r.hits.into_iter().map(|h| h.parent.unwrap_or(h.id)).collect()
}

#[test]
fn sections_cite_article_heading_path_and_lines() {
    let r = helpcenter().search(&SearchRequest::new("HTTP 451", Principal::public()).k(3)).unwrap();
    let top = &r.hits[0];
    assert!(top.parent.as_deref().is_some_and(|p| p.starts_with("api-errors/")), "{:?}", top.parent);
    let (start, end) = top.lines.expect("line range");
    assert!(start >= 1 && end >= start);
    assert!(top.id.starts_with(top.parent.as_deref().unwrap()));
}

#[test]
fn internal_and_tenant_articles_stay_with_their_audience() {
    let everyone = [
        "refund exceptions escalation",
        "sso setup okta entra",
        "data retention policy",
        "naming conventions",
        "vpn proxy network access",
    ];
    for q in everyone {
        for a in articles(q, Principal::public()) {
            assert!(!a.starts_with("internal/") && !a.starts_with("tenants/"), "public saw {a} for {q:?}");
        }
        for a in articles(q, Principal::from_verified_tokens(["tenant:acme"])) {
            assert!(!a.starts_with("internal/") && !a.starts_with("tenants/globex/"), "acme saw {a}");
        }
        for a in articles(q, Principal::from_verified_tokens(["group:support"])) {
            assert!(!a.starts_with("tenants/"), "support saw {a}");
        }
    }
    assert!(articles("sso setup", Principal::from_verified_tokens(["tenant:acme"]))
        .iter()
        .any(|a| a.starts_with("tenants/acme/")));
    assert!(articles("sso setup", Principal::from_verified_tokens(["tenant:globex"]))
        .iter()
        .any(|a| a.starts_with("tenants/globex/")));
    assert!(articles("refund exceptions", Principal::from_verified_tokens(["group:support"]))
        .iter()
        .any(|a| a.starts_with("internal/")));
}

#[test]
fn neighbours_follow_line_order_and_access() {
    let idx = helpcenter();
    let r = idx.search(&SearchRequest::new("return window for the sync key", Principal::public()).k(1)).unwrap();
    let hit = &r.hits[0];
    let window = idx.neighbours(&hit.id, &Principal::public(), 1, 1).unwrap();
    assert!(window.iter().any(|s| s.id == hit.id));
    assert!(window.len() <= 3);
    assert!(window.iter().all(|s| s.parent == hit.parent));
    for pair in window.windows(2) {
        assert!(pair[0].lines.unwrap().0 < pair[1].lines.unwrap().0, "in line order");
    }
    // A hidden section has no neighbours for an outsider, and does not leak through a visible one.
    let internal = idx
        .search(&SearchRequest::new("refund exceptions", Principal::from_verified_tokens(["group:support"])).k(1))
        .unwrap();
    let hidden = &internal.hits[0].id;
    assert!(idx.neighbours(hidden, &Principal::public(), 5, 5).unwrap().is_empty());
    assert!(!idx.neighbours(hidden, &Principal::from_verified_tokens(["group:support"]), 5, 5).unwrap().is_empty());
    assert!(idx.neighbours("no-such-id", &Principal::public(), 1, 1).unwrap().is_empty());
}

#[test]
fn collapse_keeps_the_best_section_per_article() {
    let idx = helpcenter();
    let plain = idx.search(&SearchRequest::new("sync key return", Principal::public()).k(50)).unwrap();
    let collapsed =
        idx.search(&SearchRequest::new("sync key return", Principal::public()).k(5).collapse(true)).unwrap();
    assert_eq!(collapsed.hits.len(), 5);
    let parents: Vec<&str> = collapsed.hits.iter().map(|h| h.parent.as_deref().unwrap()).collect();
    let unique: std::collections::HashSet<&&str> = parents.iter().collect();
    assert_eq!(unique.len(), parents.len(), "one hit per article: {parents:?}");
    // Each is the article's best section in the uncollapsed ranking.
    for hit in &collapsed.hits {
        let first = plain.hits.iter().find(|h| h.parent == hit.parent).expect("in the plain ranking");
        assert_eq!(first.id, hit.id);
    }
}
