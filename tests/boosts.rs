//! Boosts: the score is the documented formula, checked numerically against formulas written
//! out here (Elasticsearch's decay functions); no boosts means today's ranking to the bit;
//! the agent-memory ordering follows relevance × recency × importance.

use std::collections::HashMap;

use braid::{
    Boosts, Decay, DecayFunction, Error, Fusion, Index, IndexConfig, KeywordBoost, Mode, Modifier, NumberBoost,
    Principal, Record, SchemaConfig, SearchRequest, SearchResponse,
};

use crate::common;

fn helpcenter() -> Index {
    common::index_of(&common::repo().join("datasets/helpcenter/articles"))
}

fn comparable(r: &SearchResponse) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap();
    v["stats"].as_object_mut().unwrap().remove("micros");
    v
}

const MODES: [Mode; 3] = [Mode::Lexical, Mode::Fuzzy, Mode::Hybrid];

/// Elasticsearch's decay functions, from its documentation, written independently of the
/// library's.
fn es_decay(function: &str, x: f64, origin: f64, scale: f64, offset: f64, decay: f64) -> f64 {
    let d = ((x - origin).abs() - offset).max(0.0);
    match function {
        "gauss" => {
            let sigma2 = -scale.powi(2) / (2.0 * decay.ln());
            (-d.powi(2) / (2.0 * sigma2)).exp()
        }
        "exp" => (decay.ln() / scale * d).exp(),
        "linear" => {
            let s = scale / (1.0 - decay);
            ((s - d) / s).max(0.0)
        }
        _ => unreachable!(),
    }
}

#[test]
fn no_boosts_is_todays_ranking_to_the_bit() {
    let index = helpcenter();
    for q in ["refund", "retun policy", "sso", "HTTP 451", "kuber"] {
        for mode in MODES {
            let plain = SearchRequest::new(q, Principal::public()).mode(mode).k(20);
            let today = comparable(&index.search(&plain).unwrap());
            let empty = comparable(&index.search(&plain.clone().boosts(Boosts::default())).unwrap());
            // The schema's own weights, given explicitly: the legs' plans are rewritten, term for term.
            let schema = index.config().schema.title_boost;
            let defaults = plain.clone().boosts(Boosts::default().title_weight(schema).body_weight(1.0));
            let mut explicit = comparable(&index.search(&defaults).unwrap());
            assert_eq!(today, empty, "{q:?} {mode:?}");
            // (Its cursor is another request's: the boosts are part of what a cursor names.)
            let mut today = today;
            assert_eq!(
                today.as_object_mut().unwrap().remove("next_cursor").is_some(),
                explicit.as_object_mut().unwrap().remove("next_cursor").is_some()
            );
            assert_eq!(today, explicit, "{q:?} {mode:?}");
        }
    }
}

#[test]
fn field_weights_scale_the_legs_bm25() {
    let index = helpcenter();
    let raw = |r: &SearchResponse| -> HashMap<String, f32> {
        r.hits.iter().map(|h| (h.id.clone(), h.explain.legs[0].raw)).collect()
    };
    let title = index.config().schema.title_boost;
    for q in ["refund policy", "two factor", "relay"] {
        let base = SearchRequest::new(q, Principal::public()).mode(Mode::Lexical).k(50);
        let one = raw(&index.search(&base).unwrap());
        let twice = Boosts::default().title_weight(2.0 * title).body_weight(2.0);
        let double = raw(&index.search(&base.clone().boosts(twice)).unwrap());
        assert_eq!(one.len(), double.len());
        for (id, s) in &one {
            assert_eq!(double[id], 2.0 * s, "{q:?} {id}: BM25 is linear in the weights");
        }
        // Without the title's extra weight, a title match counts only in the flat field.
        let flat = raw(&index.search(&base.clone().boosts(Boosts::default().title_weight(0.0))).unwrap());
        assert!(flat.iter().all(|(id, s)| *s <= one[id]), "{q:?}");
        assert!(flat.iter().any(|(id, s)| *s < one[id]), "{q:?}: some hit matches in its title");
    }
}

#[test]
fn the_score_is_the_documented_formula() {
    let index = helpcenter();
    let origin = braid_core::parse_date("2026-09-20").unwrap() as f64;
    let day = 86_400.0;
    for (function, shape) in
        [("gauss", DecayFunction::Gauss), ("exp", DecayFunction::Exp), ("linear", DecayFunction::Linear)]
    {
        let boosts = Boosts::default()
            .keyword(KeywordBoost::new("audience", "admin", 1.5))
            .decay(Decay::new("updated", shape, origin, 20.0 * day).offset(2.0 * day).decay(0.4))
            .number(NumberBoost::new("updated", 1e-9, Modifier::Sqrt));
        for q in ["refund", "sync", "sso", "policy"] {
            for mode in MODES {
                let base = SearchRequest::new(q, Principal::public()).mode(mode).k(30).depth(30);
                let unboosted = index.search(&base).unwrap();
                let relevance: HashMap<&str, f32> = unboosted.hits.iter().map(|h| (h.id.as_str(), h.score)).collect();
                let r = index.search(&base.clone().boosts(boosts.clone())).unwrap();
                assert!(!r.hits.is_empty(), "{q:?}");
                let mut last = f32::INFINITY;
                for hit in &r.hits {
                    let boost = hit.explain.boost.as_ref().expect("a boost explanation");
                    // Relevance is the unboosted score of the same record.
                    if let Some(&rel) = relevance.get(hit.id.as_str()) {
                        assert_eq!(boost.relevance, rel, "{q:?} {mode:?} {}", hit.id);
                    }
                    let admin = hit.keywords.get("audience").is_some_and(|a| a.iter().any(|v| v == "admin"));
                    let updated = hit.numbers.get("updated").copied();
                    let want = f64::from(boost.relevance)
                        * if admin { 1.5 } else { 1.0 }
                        * updated.map_or(1.0, |x| es_decay(function, x, origin, 20.0 * day, 2.0 * day, 0.4))
                        * updated.map_or(1.0, |x| 1.0 + 1e-9 * x.max(0.0).sqrt());
                    assert!(
                        (f64::from(hit.score) - want).abs() <= 1e-6 * want.max(1e-3),
                        "{function} {q:?} {}: {} vs {want}",
                        hit.id,
                        hit.score
                    );
                    assert_eq!(boost.score, hit.score);
                    assert_eq!(boost.factors.len(), 3);
                    assert!(hit.score <= last, "{function} {q:?} {mode:?}: ranked by the boosted score");
                    last = hit.score;
                }
            }
        }
    }
}

#[test]
fn a_boost_reaches_past_the_page() {
    // The record a decay favours is ranked 20th without it: boosts rescore every fused
    // candidate, not the page. (RRF, whose relevance never reaches 0: min-max normalised
    // fusion gives the weakest candidate of a one-leg list relevance 0, which no factor lifts.)
    let index = Index::create_in_ram(IndexConfig::default()).unwrap();
    let mut w = index.writer().unwrap();
    for i in 0..20u32 {
        let body = "refund ".repeat(20 - i as usize);
        w.upsert(&Record::new(format!("r{i}")).body(body).number("updated", f64::from(i))).unwrap();
    }
    w.commit().unwrap();
    let request = SearchRequest::new("refund", Principal::public()).mode(Mode::Lexical).fusion(Fusion::Rrf).k(1);
    assert_eq!(index.search(&request).unwrap().hits[0].id, "r0");
    let recent = Boosts::default().decay(Decay::new("updated", DecayFunction::Gauss, 19.0, 1.0).decay(0.01));
    assert_eq!(index.search(&request.clone().boosts(recent)).unwrap().hits[0].id, "r19");
}

#[test]
fn bad_boosts_are_typed_errors() {
    let index = helpcenter();
    let ask = |b: Boosts| index.search(&SearchRequest::new("refund", Principal::public()).boosts(b));
    assert!(matches!(
        ask(Boosts::default().decay(Decay::new("nope", DecayFunction::Exp, 0.0, 1.0))),
        Err(Error::UnknownField { .. })
    ));
    assert!(matches!(
        ask(Boosts::default().keyword(KeywordBoost::new("updated", "x", 2.0))),
        Err(Error::UnknownField { .. })
    ));
    assert!(matches!(
        ask(Boosts::default().number(NumberBoost::new("tags", 1.0, Modifier::Log1p))),
        Err(Error::UnknownField { .. })
    ));
    // Unknown fields are refused even when nothing matches.
    let none = index.search(
        &SearchRequest::new("zzzzqqq", Principal::public())
            .mode(Mode::Lexical)
            .boosts(Boosts::default().decay(Decay::new("nope", DecayFunction::Exp, 0.0, 1.0))),
    );
    assert!(matches!(none, Err(Error::UnknownField { .. })));
    assert!(matches!(
        ask(Boosts::default().decay(Decay::new("updated", DecayFunction::Exp, 0.0, -1.0))),
        Err(Error::InvalidRequest { .. })
    ));
}

/// The agent-memory case (examples/agent_memory.rs): memories ranked by relevance × recency ×
/// importance, where a stale but important memory and a fresh trivial one trade places as the
/// formula says.
#[test]
fn agent_memory_orders_by_relevance_recency_and_importance() {
    let schema =
        SchemaConfig { numeric_fields: ["created", "importance"].map(String::from).into(), ..SchemaConfig::default() };
    let index = Index::create_in_ram(IndexConfig { schema, ..IndexConfig::default() }).unwrap();
    let now = 1_790_000_000.0;
    let hour = 3600.0;
    // Identical text, so relevance ties and recency × importance decides.
    let memories = [
        ("fresh-trivial", 1.0, 1.0),
        ("old-important", 48.0, 10.0),
        ("day-medium", 24.0, 5.0),
        ("ancient", 240.0, 10.0),
    ];
    let mut w = index.writer().unwrap();
    for (id, hours, importance) in memories {
        w.upsert(
            &Record::new(id)
                .body("the library is closed for repairs")
                .number("created", now - hours * hour)
                .number("importance", importance)
                .acl(["user:klaus"]),
        )
        .unwrap();
    }
    w.upsert(
        &Record::new("unrelated")
            .body("coffee at the cafe")
            .number("created", now)
            .number("importance", 10.0)
            .acl(["user:klaus"]),
    )
    .unwrap();
    w.commit().unwrap();
    let boosts = Boosts::default()
        .decay(Decay::new("created", DecayFunction::Exp, now, 24.0 * hour))
        .number(NumberBoost::new("importance", 0.1, Modifier::Linear));
    let who = Principal::from_verified_tokens(["user:klaus"]);
    let r = index.search(&SearchRequest::new("library repairs", who).mode(Mode::Fuzzy).boosts(boosts)).unwrap();
    let ids: Vec<&str> = r.hits.iter().map(|h| h.id.as_str()).collect();
    // recency × importance: fresh 0.5^(1/24)·1.1 = 1.068; day 0.5·1.5 = 0.75;
    // old 0.25·2 = 0.5; ancient 0.5^10·2 ≈ 0.002. The unrelated memory matches nothing.
    assert_eq!(ids, ["fresh-trivial", "day-medium", "old-important", "ancient"]);
    let expected = |hours: f64, importance: f64| 0.5f64.powf(hours / 24.0) * (1.0 + 0.1 * importance);
    let relevance = r.hits[0].explain.boost.as_ref().unwrap().relevance;
    for (hit, (_, hours, importance)) in r.hits.iter().zip([memories[0], memories[2], memories[1], memories[3]]) {
        let want = f64::from(relevance) * expected(hours, importance);
        assert!((f64::from(hit.score) - want).abs() < 1e-6, "{}: {} vs {want}", hit.id, hit.score);
    }
}
