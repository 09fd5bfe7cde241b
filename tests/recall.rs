//! What each leg finds.

use braid::{Leg, Mode, Principal, QuerySyntax, SearchRequest, Stage};

use crate::common::{ids, index};

fn search(query: &str, mode: Mode) -> braid::SearchResponse {
    index().search(&SearchRequest::new(query, Principal::public()).mode(mode)).expect("search")
}

#[test]
fn lexical_finds_exact_codes_and_ranks_title_matches_first() {
    let r = search("HTTP 451", Mode::Lexical);
    assert_eq!(ids(&r)[0], "http-451");
    let r = search("FBX-2210", Mode::Lexical);
    assert_eq!(ids(&r), ["http-451"]);
    let r = search("refund", Mode::Lexical);
    assert_eq!(ids(&r)[0], "refund-annual", "title match first: {:?}", ids(&r));
}

#[test]
fn query_syntax_characters_are_plain_text() {
    let plain = ids(&search("return policy", Mode::Lexical)).into_iter().map(String::from).collect::<Vec<_>>();
    for q in [
        "\"return policy\"",
        "return AND policy",
        "return OR policy",
        "title:return policy",
        "(return) [policy]",
        "return -policy",
        "+return ~policy^2",
    ] {
        let r = search(q, Mode::Lexical);
        assert_eq!(ids(&r), plain, "{q}");
    }
}

#[test]
fn opt_in_query_syntax_is_lenient() {
    let idx = index();
    let r = idx
        .search(
            &SearchRequest::new("title:kubernetes AND (relay", Principal::public())
                .mode(Mode::Lexical)
                .syntax(QuerySyntax::Tantivy),
        )
        .expect("lenient parse");
    assert_eq!(ids(&r).first(), Some(&"kubernetes-relay"));
}

#[test]
fn fuzzy_recalls_typos_with_transpositions() {
    for q in ["retun policy", "rteurn polciy", "two factr authentification", "kubernets relay"] {
        let r = search(q, Mode::Fuzzy);
        assert!(!r.hits.is_empty(), "{q}");
        let want = match q {
            q if q.contains("factr") => "two-factor",
            q if q.contains("kuber") => "kubernetes-relay",
            _ => "returns",
        };
        assert_eq!(ids(&r)[0], want, "{q}: {:?}", ids(&r));
    }
}

#[test]
fn fuzzy_recalls_prefixes_and_fragments() {
    let r = search("kuber", Mode::Fuzzy);
    assert_eq!(ids(&r)[0], "kubernetes-relay");
    let r = search("bernetes", Mode::Fuzzy);
    assert_eq!(ids(&r).first(), Some(&"kubernetes-relay"), "trigram fragment recall");
    // Only the last word is completed as-you-type; "authenticat" is a fragment of a known word.
    let r = search("authenticat", Mode::Fuzzy);
    assert_eq!(ids(&r).first(), Some(&"two-factor"));
}

#[test]
fn exact_matches_outrank_fuzzy_ones() {
    let idx = braid::Index::create_in_ram(braid::IndexConfig::default()).unwrap();
    let mut w = idx.writer().unwrap();
    for i in 0..9 {
        w.upsert(&braid::Record::new(format!("relay-{i}")).title("Notes").body("the relay is configured")).unwrap();
    }
    // A record that really contains the rarer spelling.
    w.upsert(&braid::Record::new("exact").title("Notes").body("the rellay is configured")).unwrap();
    w.commit().unwrap();
    let r = idx.search(&SearchRequest::new("rellay", Principal::public()).mode(Mode::Fuzzy).k(20)).unwrap();
    assert_eq!(ids(&r)[0], "exact", "{:?}", ids(&r));
    assert_eq!(r.hits.len(), 10, "the frequent neighbour is recalled too");
    let exact = &r.hits[0].explain.legs[0].raw;
    assert!(r.hits[1..].iter().all(|h| h.explain.legs[0].raw < *exact));
    // A known word is not expanded toward a rarer neighbour.
    let r = idx.search(&SearchRequest::new("relay", Principal::public()).mode(Mode::Fuzzy).k(20)).unwrap();
    assert!(!ids(&r).contains(&"exact"));
}

#[test]
fn did_you_mean_suggests_known_terms() {
    let r = search("retun polcy", Mode::Lexical);
    let pairs: Vec<(&str, &str)> = r.suggestions.iter().map(|s| (s.term.as_str(), s.suggestion.as_str())).collect();
    assert!(pairs.contains(&("retun", "return")), "{pairs:?}");
    assert!(pairs.contains(&("polcy", "policy")), "{pairs:?}");
    assert!(search("return policy", Mode::Lexical).suggestions.is_empty());
}

#[test]
fn hybrid_runs_both_legs_and_explains_each() {
    let r = search("retun policy", Mode::Hybrid);
    assert_eq!(r.stats.legs, [Leg::Lexical, Leg::Fuzzy]);
    let top = &r.hits[0];
    assert_eq!(top.id, "returns");
    assert_eq!(top.explain.legs.len(), 2);
    let sum: f32 = top.explain.legs.iter().map(|l| l.contribution).sum();
    assert!((sum - top.explain.fused).abs() < 1e-6);
    assert!(top.explain.legs.iter().all(|l| l.rank >= 1 && l.raw > 0.0));
    for stage in [Stage::Visibility, Stage::Lexical, Stage::Fuzzy, Stage::Fusion, Stage::Hits, Stage::Total] {
        assert!(r.stats.micros.contains_key(&stage), "{stage}");
    }
    assert!(r.stats.candidates[&Leg::Fuzzy] >= 1);
    // Snippets highlight the body's words that matched, after analysis ("sending" → "send").
    let r = search("sending it bakc", Mode::Hybrid);
    let marked = r.hits[0].snippet.marked("[", "]");
    assert!(marked.contains("[send]") && marked.contains("[back]"), "{marked}");
}

#[test]
fn semantic_without_a_model_is_a_typed_error() {
    let err = index().search(&SearchRequest::new("anything", Principal::public()).mode(Mode::Semantic)).unwrap_err();
    assert!(matches!(err, braid::Error::LegUnavailable { leg: "semantic", .. }), "{err}");
}

#[test]
fn chunks_carry_parent_section_and_lines() {
    let r = search("VAT number", Mode::Lexical);
    let hit = &r.hits[0];
    assert_eq!(hit.id, "chunk-1");
    assert_eq!(hit.parent.as_deref(), Some("billing-guide"));
    assert_eq!(hit.section, ["Invoices", "VAT"]);
    assert_eq!(hit.lines, Some((10, 14)));
    assert!(hit.snippet.marked("[", "]").contains("[VAT]"));
}

#[test]
fn scores_share_one_scale_and_min_score_thresholds_it() {
    let idx = index();
    for fusion in
        [braid::Fusion::Blend, braid::Fusion::Rrf, braid::Fusion::MinMax, braid::Fusion::ZScore, braid::Fusion::Dbsf]
    {
        let r = idx
            .search(&SearchRequest::new("refund policy", Principal::public()).mode(Mode::Hybrid).fusion(fusion).k(50))
            .unwrap();
        assert!(!r.hits.is_empty());
        assert!(r.hits.iter().all(|h| (0.0..=1.0).contains(&h.score)), "{fusion:?}");
        for w in r.hits.windows(2) {
            assert!(w[0].score >= w[1].score);
        }
        let cut = r.hits[r.hits.len() / 2].score;
        let kept = idx
            .search(
                &SearchRequest::new("refund policy", Principal::public())
                    .mode(Mode::Hybrid)
                    .fusion(fusion)
                    .k(50)
                    .min_score(cut),
            )
            .unwrap();
        assert!(kept.hits.iter().all(|h| h.score >= cut));
        assert_eq!(kept.hits.len(), r.hits.iter().filter(|h| h.score >= cut).count());
    }
    // Ranked first by both legs: the top of the scale.
    let r = idx.search(&SearchRequest::new("HTTP 451", Principal::public()).mode(Mode::Hybrid)).unwrap();
    assert!((r.hits[0].score - 1.0).abs() < 1e-6, "{}", r.hits[0].score);
}

#[test]
fn feedback_reaches_records_in_the_top_records_words_unless_turned_off() {
    let idx = braid::Index::create_in_ram(braid::IndexConfig::default()).expect("index");
    let mut w = idx.writer().expect("writer");
    let records = [
        ("salt-1", "Salt intake", "Salt intake raises sodium levels and hypertension risk."),
        ("salt-2", "Cutting salt", "Less salt means less sodium and lower hypertension."),
        ("sodium", "Sodium and blood pressure", "Sodium drives hypertension in adults."),
        ("garden", "Gardening", "Tomatoes need sun, water and patience."),
    ];
    for (id, title, body) in records {
        w.upsert(&braid::Record::new(id).title(title).body(body).acl(["public"])).expect("upsert");
    }
    w.commit().expect("commit");
    drop(w);
    let ask = |feedback: bool, mode: Mode| {
        let r = idx.search(&SearchRequest::new("salt intake", Principal::public()).mode(mode).feedback(feedback));
        let r = r.expect("search");
        let lexical: Vec<String> = r
            .hits
            .iter()
            .filter(|h| h.explain.legs.iter().any(|e| e.leg == Leg::Lexical))
            .map(|h| h.id.clone())
            .collect();
        (ids(&r).into_iter().map(String::from).collect::<Vec<_>>(), lexical)
    };
    // Without feedback BM25 finds the records holding "salt"; with it, also the one that says
    // "sodium" and "hypertension" as the salt records do — and never the unrelated one.
    let (_, plain) = ask(false, Mode::Hybrid);
    assert!(!plain.contains(&"sodium".to_string()), "{plain:?}");
    let (hits, fed) = ask(true, Mode::Hybrid);
    assert!(fed.contains(&"sodium".to_string()), "{fed:?}");
    let mut first = fed[..2].to_vec();
    first.sort();
    assert_eq!(first, ["salt-1", "salt-2"], "the query's own matches stay first: {fed:?}");
    assert!(!hits.contains(&"garden".to_string()), "{hits:?}");
    // Lexical mode is BM25 of the query as typed: feedback is for the fused leg only.
    assert_eq!(ask(true, Mode::Lexical), ask(false, Mode::Lexical));
    // On by default.
    assert!(SearchRequest::new("salt", Principal::public()).feedback);
}

/// Feedback adds only words two documents agree on, and sections of one document are one
/// document: a query that one document answers brings in nothing else, however many of its
/// sections match.
#[test]
fn feedback_adds_only_words_documents_agree_on() {
    let idx = braid::Index::create_in_ram(braid::IndexConfig::default()).expect("index");
    let mut w = idx.writer().expect("writer");
    let records = [
        braid::Record::new("walrus#1").parent("walrus").title("Walruses").body("Walruses live near penguins."),
        braid::Record::new("walrus#2").parent("walrus").title("Walrus diet").body("Walruses never eat penguins."),
        braid::Record::new("penguins").title("Penguins").body("Penguins swim in cold water."),
    ];
    for record in &records {
        w.upsert(&record.clone().acl(["public"])).expect("upsert");
    }
    w.commit().expect("commit");
    drop(w);
    let r = idx.search(&SearchRequest::new("walruses", Principal::public()).mode(Mode::Hybrid)).expect("search");
    assert_eq!(ids(&r), ["walrus#1", "walrus#2"], "one document agrees with nothing but itself");
    // Two documents that both say "penguins" do agree.
    let mut w = idx.writer().expect("writer");
    w.upsert(
        &braid::Record::new("zoo").title("Zoo walruses").body("The zoo's walruses watch its penguins.").acl(["public"]),
    )
    .expect("upsert");
    w.commit().expect("commit");
    drop(w);
    let r = idx.search(&SearchRequest::new("walruses", Principal::public()).mode(Mode::Hybrid)).expect("search");
    assert!(ids(&r).contains(&"penguins"), "{:?}", ids(&r));
}
