//! What a search box expects: synonyms, the simple query syntax, snippets that mark query
//! terms, and the help center's seed examples.

use std::sync::OnceLock;

use braid::{Error, Index, IndexConfig, Mode, Principal, QuerySyntax, SearchRequest, SearchResponse, Synonyms};
use proptest::prelude::*;

use crate::common::{ids, index, repo};

fn search(index: &Index, q: &str, mode: Mode, syntax: QuerySyntax) -> SearchResponse {
    index.search(&SearchRequest::new(q, Principal::public()).mode(mode).syntax(syntax).k(10)).unwrap()
}

/// A response with its timings removed.
fn comparable(r: &SearchResponse) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap();
    v["stats"].as_object_mut().unwrap().remove("micros");
    v
}

fn helpcenter_queries() -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("datasets/helpcenter/queries.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["text"].as_str().unwrap().to_string())
        .collect()
}

fn helpcenter_synonyms() -> Synonyms {
    Synonyms::parse(&std::fs::read_to_string(repo().join("datasets/helpcenter/synonyms.txt")).unwrap()).unwrap()
}

/// The bundled help center, lexical only, without synonyms.
fn helpcenter() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| crate::common::index_of(&repo().join("datasets/helpcenter")))
}

const MODES: [Mode; 3] = [Mode::Lexical, Mode::Fuzzy, Mode::Hybrid];

#[test]
fn synonyms_expand_queries_and_explain_says_which() {
    let idx = index();
    let before = search(&idx, "2FA", Mode::Lexical, QuerySyntax::Plain);
    assert!(!ids(&before).contains(&"two-factor"), "{:?}", ids(&before));
    idx.set_synonyms(Synonyms::parse("# security\n2fa => two-factor authentication\nsend back, return\n").unwrap())
        .unwrap();
    for mode in MODES {
        let r = search(&idx, "2FA", mode, QuerySyntax::Plain);
        assert_eq!(ids(&r)[0], "two-factor", "{mode:?}");
        let s = &r.hits[0].explain.synonyms;
        assert_eq!((s[0].query.as_str(), s[0].synonym.as_str()), ("2fa", "two-factor authentication"));
    }
    // Equivalent, multi-word: "send back" finds "return", and the reverse.
    let r = search(&idx, "return it", Mode::Lexical, QuerySyntax::Plain);
    let hit = r.hits.iter().find(|h| h.id == "returns").unwrap();
    assert!(hit.snippet.marked("[", "]").contains("[send]"), "{}", hit.snippet.marked("[", "]"));
    // Clearing them restores the response exactly.
    idx.set_synonyms(Synonyms::default()).unwrap();
    assert_eq!(comparable(&search(&idx, "2FA", Mode::Lexical, QuerySyntax::Plain)), comparable(&before));
}

#[test]
fn synonym_files_report_the_bad_line() {
    match Synonyms::parse("refund, money back\n\n# fine\nsso => \n") {
        Err(Error::Synonyms { line: 4, reason }) => assert!(reason.contains("both sides"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert!(Error::Synonyms { line: 1, reason: "x".into() }.is_user_error());
    helpcenter_synonyms();
}

#[test]
fn synonyms_live_beside_the_index_and_reload_without_reindexing() {
    let dir = tempfile::tempdir().unwrap();
    let idx = Index::create(dir.path(), IndexConfig::default()).unwrap();
    let mut w = idx.writer().unwrap();
    for r in crate::common::corpus() {
        w.upsert(&r).unwrap();
    }
    w.commit().unwrap();
    drop(w);
    idx.set_synonyms(Synonyms::parse("2fa => two-factor authentication").unwrap()).unwrap();
    assert!(dir.path().join("synonyms.txt").is_file());
    drop(idx);
    let idx = Index::open(dir.path()).unwrap();
    assert_eq!(idx.synonyms().len(), 1);
    assert_eq!(ids(&search(&idx, "2fa", Mode::Lexical, QuerySyntax::Plain))[0], "two-factor");
    // Another process rewrites the file: a reload picks it up; a broken file keeps the set.
    std::fs::write(dir.path().join("synonyms.txt"), "kube, kubernetes\n").unwrap();
    assert!(idx.reload_synonyms().unwrap());
    assert!(search(&idx, "2fa", Mode::Lexical, QuerySyntax::Plain).hits.is_empty());
    assert_eq!(ids(&search(&idx, "kube", Mode::Lexical, QuerySyntax::Plain))[0], "kubernetes-relay");
    std::fs::write(dir.path().join("synonyms.txt"), "a,,b\n").unwrap();
    assert!(matches!(idx.reload_synonyms(), Err(Error::Synonyms { line: 1, .. })));
    assert_eq!(idx.synonyms().len(), 1);
    idx.set_synonyms(Synonyms::default()).unwrap();
    assert!(!dir.path().join("synonyms.txt").exists());
}

/// Synonyms cost nothing when none is configured — and when none matches the query: every
/// help-center query, in every mode, answers exactly as on an index that never had any.
#[test]
fn without_a_matching_synonym_responses_are_identical() {
    let plain = helpcenter();
    let inert = crate::common::index_of(&repo().join("datasets/helpcenter"));
    inert.set_synonyms(Synonyms::parse("zzyzx, qwxv plorf\nfrobozz => gnusto rezrov\n").unwrap()).unwrap();
    let cleared = crate::common::index_of(&repo().join("datasets/helpcenter"));
    cleared.set_synonyms(helpcenter_synonyms()).unwrap();
    cleared.set_synonyms(Synonyms::default()).unwrap();
    for q in helpcenter_queries() {
        for mode in MODES {
            let a = comparable(&search(plain, &q, mode, QuerySyntax::Plain));
            assert_eq!(a, comparable(&search(&inert, &q, mode, QuerySyntax::Plain)), "{q:?} {mode:?}");
            assert_eq!(a, comparable(&search(&cleared, &q, mode, QuerySyntax::Plain)), "{q:?} {mode:?}");
        }
    }
}

/// A query without operators ranks exactly the same in the simple syntax as in plain text.
#[test]
fn the_simple_syntax_changes_nothing_without_operators() {
    let idx = helpcenter();
    for q in helpcenter_queries() {
        if q.contains('"') || q.contains(" -") || q.starts_with('-') || q.contains(" OR ") || q.contains(':') {
            continue;
        }
        for mode in MODES {
            // The cursors differ on purpose: a cursor names the request it continues, syntax included.
            let without_cursor = |syntax| {
                let mut v = comparable(&search(idx, &q, mode, syntax));
                v.as_object_mut().unwrap().remove("next_cursor");
                v
            };
            assert_eq!(without_cursor(QuerySyntax::Plain), without_cursor(QuerySyntax::Simple), "{q:?} {mode:?}");
        }
    }
}

#[test]
fn phrases_exclusions_or_and_fields_narrow_the_hits() {
    let idx = index();
    let all = |q: &str, mode: Mode| -> Vec<String> {
        idx.search(&SearchRequest::new(q, Principal::public()).mode(mode).syntax(QuerySyntax::Simple).k(20))
            .unwrap()
            .hits
            .into_iter()
            .map(|h| h.id)
            .collect()
    };
    for mode in MODES {
        // A phrase: the words adjacent, in order.
        assert_eq!(all("\"two-factor authentication\"", mode), ["two-factor"], "{mode:?}");
        assert!(all("\"authentication two-factor\"", mode).is_empty(), "{mode:?}");
        // Exclusion.
        let refunds = all("refund", mode);
        assert!(refunds.contains(&"returns".to_string()), "{mode:?} {refunds:?}");
        let without = all("refund -payment", mode);
        assert!(!without.contains(&"returns".to_string()) && !without.is_empty(), "{mode:?} {without:?}");
        // OR between a phrase and a word.
        let either = all("\"legal reasons\" OR kubectl", mode);
        assert_eq!(either.len(), 2, "{mode:?} {either:?}");
        // field:value on a declared keyword field; an undeclared one is a plain word.
        let billing = all("refund category:billing", mode);
        assert!(!billing.is_empty() && billing.iter().all(|id| id.starts_with("re")), "{mode:?} {billing:?}");
        assert!(all("refund nosuchfield:billing", mode).contains(&"returns".to_string()), "{mode:?}");
    }
    // Hidden records stay hidden whatever the operators: the support-only refund exception
    // never shows for the public, even asked for by phrase.
    assert!(all("\"zorblax escalation\"", Mode::Hybrid).is_empty());
    let support = idx
        .search(
            &SearchRequest::new("\"zorblax escalation\"", Principal::from_verified_tokens(["group:support"]))
                .syntax(QuerySyntax::Simple),
        )
        .unwrap();
    assert_eq!(ids(&support), ["refund-exceptions"]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any string, read in the simple syntax, answers without error or panic.
    #[test]
    fn any_text_is_a_valid_simple_query(
        text in proptest::collection::vec(
            prop_oneof![
                Just("\"".to_string()), Just("-".to_string()), Just("OR".to_string()), Just(" ".to_string()),
                Just("category:".to_string()), Just(":".to_string()), Just("refund".to_string()),
                Just("billing".to_string()), Just("two-factor".to_string()), "\\PC{0,6}",
            ],
            0..12,
        ).prop_map(|parts| parts.concat()),
        mode in 0usize..MODES.len(),
    ) {
        static INDEX: OnceLock<Index> = OnceLock::new();
        let idx = INDEX.get_or_init(index);
        let r = idx.search(&SearchRequest::new(text.as_str(), Principal::public()).mode(MODES[mode]).syntax(QuerySyntax::Simple));
        prop_assert!(r.is_ok(), "{text:?}: {:?}", r.err());
    }
}

#[test]
fn snippets_mark_query_terms_not_function_words() {
    let r = search(helpcenter(), "can I send it back if I no longer want it?", Mode::Hybrid, QuerySyntax::Plain);
    for hit in &r.hits {
        let marked = hit.snippet.marked("«", "»").to_lowercase();
        for stop in ["«i»", "«can»", "«it»", "«if»"] {
            assert!(!marked.contains(stop), "{stop} in {marked}");
        }
    }
    let r = search(helpcenter(), "FBX-1042", Mode::Hybrid, QuerySyntax::Plain);
    let marked = r.hits[0].snippet.marked("[", "]");
    assert!(marked.contains("[FBX-1042]"), "{marked}");
}
