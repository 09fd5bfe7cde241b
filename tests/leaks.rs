//! Property tests: random corpora, ACLs, principals and queries, in every mode; the oracle is
//! `Visibility::admits_acl`. Nothing about a record outside the allowed set may show in hits,
//! snippets, suggestions, counts or explain records.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};

use braid::{AccessPolicy, Index, IndexConfig, Mode, Principal, Record, SearchRequest, Visibility};
use proptest::prelude::*;

const WORDS: [&str; 12] = [
    "refund",
    "invoice",
    "relay",
    "kubernetes",
    "password",
    "tenant",
    "escalate",
    "secret",
    "quota",
    "webhook",
    "sync",
    "policy",
];
const TOKENS: [&str; 6] = ["public", "group:support", "tenant:acme", "tenant:globex", "user:1", "user:2"];

#[derive(Debug, Clone)]
struct Doc {
    words: Vec<usize>,
    /// A word unique to this record, so that any leak of its text is recognisable.
    marker: String,
    acl: Vec<usize>,
}

fn doc() -> impl Strategy<Value = Doc> {
    (proptest::collection::vec(0..WORDS.len(), 1..8), proptest::collection::vec(0..TOKENS.len(), 0..3), 0u32..1_000_000)
        .prop_map(|(words, acl, n)| Doc { words, marker: format!("zq{n:06}x"), acl })
}

fn record(i: usize, d: &Doc) -> Record {
    let body: Vec<&str> = d.words.iter().map(|&w| WORDS[w]).collect();
    Record::new(format!("r{i}"))
        .title(WORDS[d.words[0]])
        .body(format!("{} {}", body.join(" "), d.marker))
        .acl(d.acl.iter().map(|&t| TOKENS[t]))
}

fn query() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::collection::vec(0..WORDS.len(), 1..4).prop_map(|w| w
            .iter()
            .map(|&i| WORDS[i])
            .collect::<Vec<_>>()
            .join(" ")),
        // Typos and fragments of the vocabulary.
        (0..WORDS.len(), 0usize..3).prop_map(|(w, cut)| WORDS[w][..WORDS[w].len() - cut].to_string()),
        (0..WORDS.len()).prop_map(|w| WORDS[w].chars().rev().collect()),
        // Near-misses of record markers: "did you mean" must not reveal hidden ones.
        (0u32..1_000_000).prop_map(|n| format!("zq{n:06}")),
    ]
}

/// Probes run so far, per mode name (for the soak's report).
static PROBES: [AtomicUsize; 4] = [const { AtomicUsize::new(0) }; 4];

/// Cases per property: 48 in CI; `BRAID_SOAK=N` runs N (the soak in the README).
fn cases() -> u32 {
    std::env::var("BRAID_SOAK").ok().and_then(|v| v.parse().ok()).unwrap_or(48)
}

fn report() {
    if std::env::var_os("BRAID_SOAK").is_some() {
        let modes = ["lexical", "fuzzy", "semantic", "hybrid"];
        let counts: Vec<String> =
            modes.iter().zip(&PROBES).map(|(m, c)| format!("{m} {}", c.load(Ordering::SeqCst))).collect();
        eprintln!("leak soak: probes per mode (cumulative): {}; leaks found: 0", counts.join(", "));
    }
}

fn check(index: &Index, docs: &[Doc], principal: &Principal, q: &str, mode: Mode) -> Result<(), TestCaseError> {
    let rule = Visibility::new(principal.clone(), AccessPolicy::Public, None);
    let acl = |d: &Doc| d.acl.iter().map(|&t| TOKENS[t].to_string()).collect::<Vec<_>>();
    let visible: HashSet<String> =
        docs.iter().enumerate().filter(|(_, d)| rule.admits_acl(&acl(d))).map(|(i, _)| format!("r{i}")).collect();
    let hidden_markers: Vec<&str> = docs
        .iter()
        .enumerate()
        .filter(|(i, _)| !visible.contains(&format!("r{i}")))
        .map(|(_, d)| d.marker.as_str())
        .collect();
    let r = index.search(&SearchRequest::new(q, principal.clone()).mode(mode).k(100)).unwrap();
    let slot = match mode {
        Mode::Lexical => 0,
        Mode::Fuzzy => 1,
        Mode::Semantic => 2,
        Mode::Hybrid => 3,
    };
    PROBES[slot].fetch_add(1, Ordering::SeqCst);
    prop_assert_eq!(r.stats.allowed, visible.len());
    for hit in &r.hits {
        prop_assert!(visible.contains(&hit.id), "{:?} {:?} leaked {}", principal, mode, hit.id);
        prop_assert!(hit.explain.legs.iter().all(|l| l.rank <= visible.len()));
        for m in &hidden_markers {
            prop_assert!(!hit.snippet.text.contains(m));
        }
    }
    for c in r.stats.candidates.values() {
        prop_assert!(*c <= visible.len());
    }
    for s in &r.suggestions {
        prop_assert!(!hidden_markers.contains(&s.suggestion.as_str()), "suggested hidden {}", s.suggestion);
    }
    Ok(())
}

fn principal() -> impl Strategy<Value = Principal> {
    proptest::collection::vec(0..TOKENS.len(), 0..3)
        .prop_map(|t| Principal::from_verified_tokens(t.iter().map(|&i| TOKENS[i])))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn no_leaks_in_lexical_and_fuzzy_modes(
        docs in proptest::collection::vec(doc(), 1..25),
        probes in proptest::collection::vec((principal(), query()), 1..6),
    ) {
        let index = Index::create_in_ram(IndexConfig::default()).unwrap();
        let mut w = index.writer().unwrap();
        for (i, d) in docs.iter().enumerate() {
            w.upsert(&record(i, d)).unwrap();
        }
        w.commit().unwrap();
        for (principal, q) in &probes {
            for mode in [Mode::Lexical, Mode::Fuzzy, Mode::Hybrid] {
                check(&index, &docs, principal, q, mode)?;
            }
        }
        report();
    }
}

/// The semantic leg: one random corpus embedded with the real model (with the `models`
/// feature; else the deterministic hash embedder), many random probes.
#[test]
fn no_leaks_in_semantic_modes() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let docs = proptest::collection::vec(doc(), 40).new_tree(&mut runner).unwrap().current();
    #[cfg(feature = "models")]
    let model = std::sync::Arc::new(braid::models::OnnxEmbedder::builder().intra_threads(1).build().expect("model"));
    #[cfg(not(feature = "models"))]
    let model = std::sync::Arc::new(crate::common::HashEmbedder::new(64));
    let index = Index::builder().embedder(model).create_in_ram().unwrap();
    let mut w = index.writer().unwrap();
    for (i, d) in docs.iter().enumerate() {
        w.upsert(&record(i, d)).unwrap();
    }
    w.commit().unwrap();
    for _ in 0..cases().max(60) {
        let p = principal().new_tree(&mut runner).unwrap().current();
        let q = query().new_tree(&mut runner).unwrap().current();
        for mode in [Mode::Semantic, Mode::Hybrid] {
            check(&index, &docs, &p, &q, mode).unwrap();
        }
    }
    report();
}
