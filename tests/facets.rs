//! Facets count every matched record the caller may see, not only the page: checked against
//! an oracle built from the public API (a request deep enough to return every match).

use std::collections::BTreeMap;

use braid::{Error, Facet, FacetRange, Index, Mode, Principal, SearchRequest, SearchResponse};

use crate::common;

fn helpcenter() -> Index {
    common::index_of(&common::repo().join("datasets/helpcenter/articles"))
}

/// Every match: a lexical or fuzzy leg's list at a depth above the corpus size is its whole
/// match set.
fn everything(index: &Index, q: &str, mode: Mode, principal: &Principal) -> SearchResponse {
    index.search(&SearchRequest::new(q, principal.clone()).mode(mode).k(10_000).depth(10_000)).unwrap()
}

fn oracle_values(r: &SearchResponse, field: &str) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for hit in &r.hits {
        for v in hit.keywords.get(field).into_iter().flatten() {
            *counts.entry(v.clone()).or_insert(0) += 1;
        }
    }
    counts
}

#[test]
fn facets_count_every_match_not_only_the_page() {
    let index = helpcenter();
    let day = 86_400.0;
    let cut = braid_core::parse_date("2026-09-01").unwrap() as f64;
    let ranges = [
        FacetRange::new(None, Some(cut)),
        FacetRange::new(Some(cut), Some(cut + 30.0 * day)),
        FacetRange::new(Some(cut), None),
    ];
    for q in ["refund", "sync", "retun policy", "sso login", "kuber", "the"] {
        for mode in [Mode::Lexical, Mode::Fuzzy] {
            for principal in [Principal::public(), Principal::from_verified_tokens(["group:support"])] {
                let request = SearchRequest::new(q, principal.clone())
                    .mode(mode)
                    .k(3)
                    .facet(Facet::top_values("tags", 100))
                    .facet(Facet::values("audience"))
                    .facet(Facet::ranges("updated", ranges));
                let r = index.search(&request).unwrap();
                let facets = r.facets.as_ref().expect("facets asked for");
                let all = everything(&index, q, mode, &principal);
                assert_eq!(facets.matched, all.hits.len() as u64, "{q:?} {mode:?}");
                // The 100 most frequent, then by value, as the facet returns them.
                let mut want: Vec<(String, u64)> = oracle_values(&all, "tags").into_iter().collect();
                want.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                want.truncate(100);
                let got: Vec<(String, u64)> =
                    facets.values["tags"].iter().map(|v| (v.value.clone(), v.count)).collect();
                assert_eq!(got, want, "{q:?} {mode:?}");
                let audience = &facets.values["audience"];
                assert!(audience
                    .windows(2)
                    .all(|w| w[0].count > w[1].count || (w[0].count == w[1].count && w[0].value < w[1].value)));
                for (range, counted) in ranges.iter().zip(&facets.ranges["updated"]) {
                    let want = all
                        .hits
                        .iter()
                        .filter(|h| h.numbers.get("updated").is_some_and(|&v| range.contains(v)))
                        .count();
                    assert_eq!(counted.count, want as u64, "{q:?} {mode:?} {range:?}");
                }
                // The page is still the page.
                assert!(r.hits.len() <= 3);
            }
        }
    }
}

/// Hybrid counts the union of what their legs match.
#[test]
fn a_hybrid_request_counts_the_union_of_its_legs() {
    let index = helpcenter();
    for q in ["retun polcy", "refund", "two factor"] {
        let r = index
            .search(
                &SearchRequest::new(q, Principal::public()).mode(Mode::Hybrid).facet(Facet::top_values("tags", 100)),
            )
            .unwrap();
        let mut union = std::collections::BTreeSet::new();
        for mode in [Mode::Lexical, Mode::Fuzzy] {
            union.extend(everything(&index, q, mode, &Principal::public()).hits.into_iter().map(|h| h.id));
        }
        assert_eq!(r.facets.unwrap().matched, union.len() as u64, "{q:?}");
    }
}

#[test]
fn k_zero_counts_facets_alone() {
    let index = helpcenter();
    let request = SearchRequest::new("refund", Principal::public()).k(0).facet(Facet::values("audience"));
    let r = index.search(&request).unwrap();
    assert!(r.hits.is_empty());
    assert!(r.facets.unwrap().matched > 0);
    // Without facets, k = 0 stays the visibility-only request it was.
    let plain = index.search(&SearchRequest::new("refund", Principal::public()).k(0)).unwrap();
    assert!(plain.facets.is_none() && plain.stats.legs.is_empty());
}

#[test]
fn bad_facets_are_typed_errors() {
    let index = helpcenter();
    let ask = |f: Facet| index.search(&SearchRequest::new("refund", Principal::public()).facet(f));
    assert!(matches!(ask(Facet::values("nope")), Err(Error::UnknownField { .. })));
    assert!(matches!(ask(Facet::values("updated")), Err(Error::UnknownField { .. })));
    assert!(matches!(ask(Facet::ranges("tags", [FacetRange::new(None, None)])), Err(Error::UnknownField { .. })));
    assert!(matches!(ask(Facet::top_values("tags", 101)), Err(Error::InvalidRequest { .. })));
    assert!(matches!(ask(Facet::ranges("updated", [])), Err(Error::InvalidRequest { .. })));
    assert!(matches!(
        ask(Facet::ranges("updated", [FacetRange::new(Some(f64::NAN), None)])),
        Err(Error::InvalidRequest { .. })
    ));
    let mut many = SearchRequest::new("refund", Principal::public());
    for _ in 0..=braid::MAX_FACETS {
        many = many.facet(Facet::values("tags"));
    }
    assert!(matches!(index.search(&many), Err(Error::InvalidRequest { .. })));
}
