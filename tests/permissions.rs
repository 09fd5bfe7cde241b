//! Permissions are the first filter, in every mode.

use braid::{AccessPolicy, Filter, Index, IndexConfig, Mode, Principal, Record, SearchRequest};

use crate::common::{corpus, ids, index};

const MODES: [Mode; 3] = [Mode::Lexical, Mode::Fuzzy, Mode::Hybrid];

fn principals() -> Vec<Principal> {
    vec![
        Principal::public(),
        Principal::from_verified_tokens(["group:support"]),
        Principal::from_verified_tokens(["tenant:acme"]),
        Principal::from_verified_tokens(["tenant:globex"]),
        Principal::from_verified_tokens(["tenant:acme", "group:support"]),
        Principal::from_verified_tokens(["tenant:globex", "group:support"]),
    ]
}

/// The oracle: a record is visible iff the reference rule admits its ACL.
fn visible(principal: &Principal, id: &str) -> bool {
    let record = corpus().into_iter().find(|r| r.id() == id).expect("known id");
    braid::Visibility::new(principal.clone(), AccessPolicy::Public, None).admits_acl(record.acl.as_slice())
}

#[test]
fn no_mode_returns_a_record_the_principal_may_not_see() {
    let idx = index();
    let queries = [
        "refund",
        "sso setup saml",
        "escalation",
        "frobnicator",
        "zorblax",
        "quuxly",
        "globex",
        "acme",
        "",
        "refnd",
        "frob",
    ];
    for principal in principals() {
        for mode in MODES {
            for q in queries {
                let r = idx.search(&SearchRequest::new(q, principal.clone()).mode(mode).k(50)).unwrap();
                for hit in &r.hits {
                    assert!(visible(&principal, &hit.id), "{principal:?} {mode:?} {q:?} leaked {}", hit.id);
                }
                let total_visible = corpus().iter().filter(|rec| visible(&principal, rec.id())).count();
                assert_eq!(r.stats.allowed, total_visible);
                for c in r.stats.candidates.values() {
                    assert!(*c <= total_visible);
                }
            }
        }
    }
}

#[test]
fn tenants_and_groups_see_their_own_records() {
    let idx = index();
    let search = |q: &str, p: Principal| {
        ids(&idx.search(&SearchRequest::new(q, p).mode(Mode::Hybrid)).unwrap())
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(search("sso setup", Principal::from_verified_tokens(["tenant:acme"])), ["acme-sso"]);
    assert_eq!(search("sso setup", Principal::from_verified_tokens(["tenant:globex"])), ["globex-sso"]);
    assert!(search("sso setup", Principal::public()).is_empty());
    assert!(search("refund exceptions", Principal::from_verified_tokens(["group:support"]))
        .contains(&"refund-exceptions".to_string()));
    // A support agent of acme does not see globex's support runbook.
    assert!(search("frobnicator runbook", Principal::from_verified_tokens(["tenant:acme", "group:support"])).is_empty());
    assert_eq!(
        search("frobnicator runbook", Principal::from_verified_tokens(["tenant:globex", "group:support"]))[0],
        "globex-support-runbook"
    );
}

#[test]
fn suggestions_come_only_from_visible_records() {
    let idx = index();
    // "zorblax" appears only in a support-only record; "quuxly" only in acme's.
    for (typo, secret, insider) in [("zorblux", "zorblax", "group:support"), ("quuxli", "quuxly", "tenant:acme")] {
        let outsider = idx.search(&SearchRequest::new(typo, Principal::public()).mode(Mode::Hybrid)).unwrap();
        assert!(outsider.suggestions.iter().all(|s| s.suggestion != secret), "{:?}", outsider.suggestions);
        assert!(outsider.hits.is_empty());
        let inside = idx
            .search(&SearchRequest::new(typo, Principal::from_verified_tokens([insider])).mode(Mode::Hybrid))
            .unwrap();
        assert!(inside.suggestions.iter().any(|s| s.suggestion == secret), "{:?}", inside.suggestions);
    }
    // A word that exists only in hidden records counts as unknown to an outsider, and what is
    // suggested instead is a visible word.
    let r = idx.search(&SearchRequest::new("zorblax", Principal::public())).unwrap();
    assert!(r.hits.is_empty());
    assert!(r.suggestions.iter().all(|s| s.suggestion != "zorblax"));
}

/// "Did you mean" picks, among equally close corrections, the one that visible records hold
/// beside the query's other words; records the caller may not see never sway the choice, and
/// a stop word is never a correction.
#[test]
fn corrections_read_the_query_in_context_of_visible_records_only() {
    let mut records = Vec::new();
    for (i, body) in
        ["visual design", "visual layout", "visual grid", "visual theme", "visual tokens"].iter().enumerate()
    {
        records.push(Record::new(format!("visual-{i}")).title("Design").body(*body));
    }
    records.push(Record::new("viral-1").title("Health").body("viral infections spread in winter"));
    records.push(Record::new("viral-2").title("Health").body("the viral load of infections"));
    records.push(Record::new("thaw").title("Pipes").body("let the pipes thaw slowly"));
    let hidden: Vec<Record> = (0..6)
        .map(|i| Record::new(format!("lab-{i}")).title("Lab").body("visual infections of the eye").acl(["group:lab"]))
        .collect();
    let build = |with_hidden: bool| {
        let idx = Index::create_in_ram(IndexConfig::default()).unwrap();
        let mut w = idx.writer().unwrap();
        for r in records.iter().chain(hidden.iter().filter(|_| with_hidden)) {
            w.upsert(r).unwrap();
        }
        w.commit().unwrap();
        idx
    };
    let suggestion = |idx: &Index, q: &str, p: Principal| {
        let r = idx.search(&SearchRequest::new(q, p).mode(Mode::Hybrid)).unwrap();
        r.suggestions.into_iter().map(|s| s.suggestion).collect::<Vec<_>>()
    };
    let (with, without) = (build(true), build(false));
    for idx in [&with, &without] {
        // Alone, the more frequent correction; beside "infections", the one records pair with it.
        assert_eq!(suggestion(idx, "virual", Principal::public()), ["visual"]);
        assert_eq!(suggestion(idx, "virual infections", Principal::public()), ["viral"]);
        // "thw" is one edit from "the" too, which no leg would search for.
        assert_eq!(suggestion(idx, "thw pipes", Principal::public()), ["thaw"]);
    }
    // Whoever sees the lab's records reads "virual infections" as they do.
    assert_eq!(suggestion(&with, "virual infections", Principal::from_verified_tokens(["group:lab"])), ["visual"]);
}

#[test]
fn snippets_and_explain_only_describe_visible_records() {
    let idx = index();
    let r = idx
        .search(&SearchRequest::new("refund 30 days zorblax", Principal::public()).mode(Mode::Hybrid).k(50))
        .unwrap();
    for hit in &r.hits {
        assert!(!hit.snippet.text.contains("zorblax"));
        assert!(hit.explain.legs.iter().all(|l| l.rank <= r.stats.allowed));
    }
}

#[test]
fn deny_policy_hides_records_without_acl() {
    let idx = Index::create_in_ram(IndexConfig { policy: AccessPolicy::Deny, ..IndexConfig::default() }).unwrap();
    let mut w = idx.writer().unwrap();
    for r in corpus() {
        w.upsert(&r).unwrap();
    }
    w.commit().unwrap();
    let r = idx.search(&SearchRequest::new("kubernetes relay", Principal::public()).mode(Mode::Hybrid)).unwrap();
    assert!(r.hits.is_empty(), "kubernetes-relay has no ACL and the policy is deny");
    let open = index().search(&SearchRequest::new("kubernetes relay", Principal::public())).unwrap();
    assert_eq!(ids(&open)[0], "kubernetes-relay");
}

#[test]
fn filters_compose_with_access() {
    let idx = index();
    let support = Principal::from_verified_tokens(["group:support"]);
    let r = idx
        .search(&SearchRequest::new("refund", support.clone()).filter(Filter::keyword("category", "billing")).k(50))
        .unwrap();
    assert_eq!(
        {
            let mut v = ids(&r);
            v.sort();
            v
        },
        ["refund-annual", "refund-exceptions", "returns"]
    );
    let r = idx
        .search(&SearchRequest::new("refund", Principal::public()).filter(Filter::keyword("category", "billing")).k(50))
        .unwrap();
    assert!(!ids(&r).contains(&"refund-exceptions"));
    let r = idx
        .search(&SearchRequest::new("relay refund", Principal::public()).filter(Filter::range(
            "updated",
            Some(1_750_000_000.0),
            None,
        )))
        .unwrap();
    assert_eq!(ids(&r), ["refund-annual"]);
    let r =
        idx.search(&SearchRequest::new("vat", Principal::public()).filter(Filter::parent("billing-guide"))).unwrap();
    assert_eq!(ids(&r), ["chunk-1"]);
    let r = idx.search(&SearchRequest::new("vat", Principal::public()).filter(Filter::section(["Invoices"]))).unwrap();
    assert_eq!(ids(&r), ["chunk-1"]);
    let r = idx.search(&SearchRequest::new("vat", Principal::public()).filter(Filter::section(["VAT"]))).unwrap();
    assert!(r.hits.is_empty(), "section filters match heading-path prefixes");
    let r = idx
        .search(
            &SearchRequest::new("refund", Principal::public())
                .filter(Filter::not(Filter::keyword_any("category", ["billing", "admin"]))),
        )
        .unwrap();
    assert!(ids(&r).is_empty(), "{:?}", ids(&r));
    let err = idx
        .search(&SearchRequest::new("refund", Principal::public()).filter(Filter::keyword("colour", "red")))
        .unwrap_err();
    assert!(matches!(err, braid::Error::UnknownField { ref name } if name == "colour"), "{err}");
}

#[test]
fn record_reads_respect_access() {
    let idx = index();
    assert!(idx.record("acme-sso", &Principal::public()).unwrap().is_none());
    assert!(idx.record("acme-sso", &Principal::from_verified_tokens(["tenant:acme"])).unwrap().is_some());
    assert!(idx.record("no-such-id", &Principal::public()).unwrap().is_none());
    let _ = Record::new("x");
}

#[test]
fn ids_only_hits_are_the_same_hits_without_their_fields() {
    let idx = index();
    for principal in principals() {
        for mode in MODES {
            for q in ["refund", "sso setup saml", "frobnicator", "refnd", "invoices vat", "451"] {
                for collapse in [false, true] {
                    let request = SearchRequest::new(q, principal.clone()).mode(mode).collapse(collapse);
                    let whole = idx.search(&request).unwrap();
                    let bare = idx.search(&request.clone().ids_only(true)).unwrap();
                    let key = |r: &braid::SearchResponse| -> Vec<(String, f32)> {
                        r.hits.iter().map(|h| (h.id.clone(), h.score)).collect()
                    };
                    assert_eq!(key(&bare), key(&whole), "{q:?} {mode:?} {principal:?}");
                    assert!(bare.hits.iter().all(|h| visible(&principal, &h.id)));
                    for hit in &bare.hits {
                        assert!(hit.title.is_empty() && hit.snippet.text.is_empty(), "{hit:?}");
                        assert!(hit.parent.is_none() && hit.section.is_empty() && hit.keywords.is_empty(), "{hit:?}");
                    }
                }
            }
        }
    }
}
