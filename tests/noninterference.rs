//! Non-interference, as a property: for random corpora, ACLs, tenants and a principal P, the
//! same requests against (a) an index and (b) the same index without the records P may not
//! see give identical responses — ids, order, scores, explain, snippets, suggestions and
//! stats (all but the timings) — in every mode and fusion. (a) is also written the way a
//! live index is: several commits (so several segments), replaced and deleted records; (b) is
//! written once. The oracle for "may see" is `Visibility::admits_acl`.
//!
//! `BRAID_SOAK=N` runs N cases (the README's soak); CI runs 24.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use braid::{
    AccessPolicy, Boosts, Decay, DecayFunction, Facet, FacetRange, Fusion, Index, IndexConfig, KeywordBoost, Mode,
    Modifier, NumberBoost, Principal, QuerySyntax, Record, SearchRequest, SearchResponse, Synonyms, Visibility,
};
use proptest::prelude::*;

use crate::common::HashEmbedder;

/// Words chosen to exercise every decision the fuzzy leg and "did you mean" take: typo
/// neighbours (refund/refunds/refine), prefixes (kube…), rare and frequent words, Chinese
/// words and their pinyin.
const WORDS: [&str; 20] = [
    "refund",
    "refunds",
    "refine",
    "kubernetes",
    "kubectl",
    "kube",
    "password",
    "passwords",
    "invoice",
    "invoices",
    "relay",
    "delay",
    "policy",
    "police",
    "secret",
    "secrets",
    "同步",
    "退款",
    "webhook",
    "the",
];
/// ACL tokens; `tenant:` ones are tenants, `owner:` ones owners (both conjunctive classes).
const TOKENS: [&str; 9] = [
    "public",
    "group:a",
    "group:b",
    "tenant:acme",
    "tenant:globex",
    "user:1",
    "owner:u1",
    "owner:u2",
    "tenant:initech",
];

/// Values of the `category` keyword field (index 3: none).
const CATEGORIES: [&str; 3] = ["billing", "admin", "security"];

#[derive(Debug, Clone)]
struct Doc {
    title: Vec<usize>,
    body: Vec<usize>,
    acl: Vec<usize>,
    /// A `category` (an index into CATEGORIES, or none) and an `updated` value (or none).
    category: usize,
    updated: Option<u8>,
}

fn doc() -> impl Strategy<Value = Doc> {
    (
        proptest::collection::vec(0..WORDS.len(), 0..3),
        proptest::collection::vec(0..WORDS.len(), 1..12),
        proptest::collection::vec(0..TOKENS.len(), 0..3),
        0..=CATEGORIES.len(),
        proptest::option::of(any::<u8>()),
    )
        .prop_map(|(title, body, acl, category, updated)| Doc { title, body, acl, category, updated })
}

fn text(words: &[usize]) -> String {
    words.iter().map(|&w| WORDS[w]).collect::<Vec<_>>().join(" ")
}

fn record(id: usize, d: &Doc) -> Record {
    let mut r =
        Record::new(format!("r{id}")).title(text(&d.title)).body(text(&d.body)).acl(d.acl.iter().map(|&t| TOKENS[t]));
    if let Some(category) = CATEGORIES.get(d.category) {
        r = r.keyword("category", *category);
    }
    if let Some(updated) = d.updated {
        r = r.number("updated", f64::from(updated));
    }
    r
}

/// The results side of a request: facets over the matches, boosts, lexical feedback (on by
/// default, said here so that it meets the boosts and the pages: it reads the top documents'
/// stored text back), and a page cut from a ranking deeper than `k` (so a cursor comes back
/// when there is a further page).
fn with_results(request: SearchRequest, k: usize) -> SearchRequest {
    request
        .feedback(true)
        .k(k.div_ceil(2))
        .depth(k + 2)
        .facet(Facet::values("category"))
        .facet(Facet::ranges("updated", [FacetRange::new(None, Some(100.0)), FacetRange::new(Some(100.0), None)]))
        .boosts(
            Boosts::default()
                .title_weight(1.5)
                .keyword(KeywordBoost::new("category", "admin", 2.0))
                .decay(Decay::new("updated", DecayFunction::Gauss, 200.0, 60.0))
                .number(NumberBoost::new("updated", 0.01, Modifier::Log1p)),
        )
}

fn acl(d: &Doc) -> Vec<String> {
    d.acl.iter().map(|&t| TOKENS[t].to_string()).collect()
}

/// What happens to (a) after the first writes: a record replaced (new text and ACL) or
/// deleted, then possibly a commit.
#[derive(Debug, Clone)]
enum Change {
    Replace(usize, Doc),
    Delete(usize),
    Commit,
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        (0usize..40, doc()).prop_map(|(i, d)| Change::Replace(i, d)),
        (0usize..40).prop_map(Change::Delete),
        Just(Change::Commit),
    ]
}

fn query() -> impl Strategy<Value = String> {
    let word = (0..WORDS.len()).prop_map(|w| WORDS[w].to_string());
    prop_oneof![
        proptest::collection::vec(0..WORDS.len(), 1..4).prop_map(|w| text(&w)),
        // Typos: a letter dropped, doubled or swapped.
        (word.clone(), 0usize..8).prop_map(|(w, at)| {
            let mut c: Vec<char> = w.chars().collect();
            let at = at % c.len();
            c.remove(at);
            c.into_iter().collect()
        }),
        (word.clone(), 0usize..8).prop_map(|(w, at)| {
            let mut c: Vec<char> = w.chars().collect();
            let at = at % c.len().saturating_sub(1).max(1);
            if at + 1 < c.len() {
                c.swap(at, at + 1);
            }
            c.into_iter().collect()
        }),
        // Fragments, as typed.
        (word.clone(), 1usize..5).prop_map(|(w, keep)| w.chars().take(keep + 1).collect()),
        Just("tongbu".to_string()),
        Just("同部 tuikuan".to_string()),
        Just("kuber".to_string()),
        // The simple syntax's operators (plain words under the plain syntax).
        (word.clone(), word.clone()).prop_map(|(a, b)| format!("\"{a} {b}\"")),
        (word.clone(), word.clone()).prop_map(|(a, b)| format!("{a} -{b}")),
        (word.clone(), word.clone(), word.clone()).prop_map(|(a, b, c)| format!("{a} OR \"{b} {c}\" -\"{c} {a}\"")),
        (word.clone(), word).prop_map(|(a, b)| format!("\"{a} {b} policy\" OR kube -")),
    ]
}

/// Synonyms over the corpus words, equivalent and one-way, one and several words.
const SYNONYMS: &str = "refund, webhook relay\ninvoice => secret, password\nkubernetes, kube\npolicy police => delay\n";

fn principal() -> impl Strategy<Value = Principal> {
    proptest::collection::vec(0..TOKENS.len(), 0..3)
        .prop_map(|t| Principal::from_verified_tokens(t.iter().map(|&i| TOKENS[i])))
}

/// A response with its timings removed: everything else must match exactly.
fn comparable(r: &SearchResponse) -> serde_json::Value {
    let mut v = serde_json::to_value(r).expect("responses serialise");
    if let Some(stats) = v.get_mut("stats").and_then(|s| s.as_object_mut()) {
        stats.remove("micros");
    }
    v
}

static CASES: AtomicUsize = AtomicUsize::new(0);
static PAIRS: AtomicUsize = AtomicUsize::new(0);

fn cases() -> u32 {
    std::env::var("BRAID_SOAK").ok().and_then(|v| v.parse().ok()).unwrap_or(24)
}

fn index(policy: AccessPolicy) -> Index {
    promoting_at(policy, braid::PROMOTE_AT)
}

/// An index whose tenants leave the pool for partitions of their own (vector store and
/// lexical index) at `records`.
fn promoting_at(policy: AccessPolicy, records: usize) -> Index {
    Index::builder()
        .config(IndexConfig { policy, ..IndexConfig::default() })
        .embedder(Arc::new(HashEmbedder::new(32)))
        .promote_tenants_at(records)
        .create_in_ram()
        .unwrap()
}

fn with_synonyms(index: Index, synonyms: bool) -> Index {
    if synonyms {
        index.set_synonyms(Synonyms::parse(SYNONYMS).unwrap()).unwrap();
    }
    index
}

const MODES: [Mode; 4] = [Mode::Lexical, Mode::Fuzzy, Mode::Semantic, Mode::Hybrid];
const FUSIONS: [Fusion; 5] = [Fusion::Blend, Fusion::Rrf, Fusion::MinMax, Fusion::ZScore, Fusion::Dbsf];

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn responses_depend_only_on_visible_records(
        docs in proptest::collection::vec(doc(), 1..40),
        changes in proptest::collection::vec(change(), 0..12),
        first_commit in 1usize..40,
        deny in any::<bool>(),
        principal in principal(),
        queries in proptest::collection::vec((query(), 0usize..FUSIONS.len(), 1usize..15, any::<bool>()), 1..5),
        synonyms in any::<bool>(),
        promote_at in 1usize..8,
    ) {
        let policy = if deny { AccessPolicy::Deny } else { AccessPolicy::Public };
        // (a): the first writes in two commits, then the changes; `last` keeps each live
        // record's final version and when it was written. Its tenants leave the pool for
        // partitions of their own, vector and lexical, after a few records (mid-test, at some
        // commit); (b) keeps them pooled.
        let full = with_synonyms(promoting_at(policy, promote_at), synonyms);
        let mut w = full.writer().unwrap();
        let mut last: Vec<Option<(usize, Doc)>> = Vec::new();
        let mut clock = 0;
        for (i, d) in docs.iter().enumerate() {
            w.upsert(&record(i, d)).unwrap();
            last.push(Some((clock, d.clone())));
            clock += 1;
            if i + 1 == first_commit {
                w.commit().unwrap();
            }
        }
        w.commit().unwrap();
        for c in &changes {
            match c {
                Change::Replace(i, d) => {
                    let i = i % docs.len();
                    w.upsert(&record(i, d)).unwrap();
                    last[i] = Some((clock, d.clone()));
                    clock += 1;
                }
                Change::Delete(i) => {
                    let i = i % docs.len();
                    w.delete(&format!("r{i}")).unwrap();
                    last[i] = None;
                }
                Change::Commit => w.commit().unwrap(),
            }
        }
        w.commit().unwrap();
        drop(w);

        // (b): only the records the principal may see, in the order (a) last wrote them.
        let rule = Visibility::new(principal.clone(), policy, None);
        let mut visible: Vec<(usize, usize, &Doc)> = last
            .iter()
            .enumerate()
            .filter_map(|(i, l)| l.as_ref().map(|(at, d)| (*at, i, d)))
            .filter(|(_, _, d)| rule.admits_acl(&acl(d)))
            .collect();
        visible.sort_by_key(|(at, _, _)| *at);
        let control = with_synonyms(index(policy), synonyms);
        let mut w = control.writer().unwrap();
        for (_, i, d) in &visible {
            w.upsert(&record(*i, d)).unwrap();
        }
        w.commit().unwrap();
        drop(w);

        for (q, fusion, k, simple) in &queries {
            for mode in MODES {
                let request = SearchRequest::new(q.as_str(), principal.clone())
                    .mode(mode)
                    .k(*k)
                    .fusion(FUSIONS[*fusion])
                    .syntax(if *simple { QuerySyntax::Simple } else { QuerySyntax::Plain })
                    .suggest(true);
                let a = full.search(&request);
                let b = control.search(&request);
                match (a, b) {
                    (Ok(a), Ok(b)) => prop_assert_eq!(comparable(&a), comparable(&b), "{:?} {:?} {:?}", q, mode, principal),
                    (a, b) => prop_assert_eq!(a.err().map(|e| e.to_string()), b.err().map(|e| e.to_string())),
                }
                PAIRS.fetch_add(1, Ordering::SeqCst);
                // Facets, boosts and paging: counts, boosted scores and cursors (bytes and
                // all) are functions of the visible records; so is the page a cursor names.
                let paged = with_results(request.clone(), *k);
                let (a, b) = (full.search(&paged), control.search(&paged));
                match (a, b) {
                    (Ok(a), Ok(b)) => {
                        prop_assert_eq!(comparable(&a), comparable(&b), "paged {:?} {:?} {:?}", q, mode, principal);
                        prop_assert_eq!(&a.next_cursor, &b.next_cursor);
                        if let Some(cursor) = &a.next_cursor {
                            let next = paged.clone().cursor(cursor.as_str());
                            match (full.search(&next), control.search(&next)) {
                                (Ok(a), Ok(b)) => prop_assert_eq!(comparable(&a), comparable(&b), "next page {:?} {:?}", q, mode),
                                (a, b) => prop_assert_eq!(a.err().map(|e| e.to_string()), b.err().map(|e| e.to_string())),
                            }
                        }
                    }
                    (a, b) => prop_assert_eq!(a.err().map(|e| e.to_string()), b.err().map(|e| e.to_string())),
                }
            }
            // Grouping and MMR: what they keep and reorder comes from visible records (their
            // fields, vectors and words).
            for mode in MODES {
                let diverse = SearchRequest::new(q.as_str(), principal.clone())
                    .mode(mode)
                    .k(*k)
                    .fusion(FUSIONS[*fusion])
                    .group_by(if *simple { "category" } else { "parent" }, 1 + *k % 2)
                    .mmr(0.6);
                match (full.search(&diverse), control.search(&diverse)) {
                    (Ok(a), Ok(b)) => prop_assert_eq!(comparable(&a), comparable(&b), "diverse {:?} {:?}", q, mode),
                    (a, b) => prop_assert_eq!(a.err().map(|e| e.to_string()), b.err().map(|e| e.to_string())),
                }
            }
            // The same through the record lookups every surface offers.
            for (_, i, _) in &visible {
                let id = format!("r{i}");
                let a = full.record(&id, &principal).unwrap().map(|r| (r.id, r.title, r.body));
                let b = control.record(&id, &principal).unwrap().map(|r| (r.id, r.title, r.body));
                prop_assert_eq!(a, b);
            }
        }
        let n = CASES.fetch_add(1, Ordering::SeqCst) + 1;
        if std::env::var_os("BRAID_SOAK").is_some() && (n.is_multiple_of(500) || n == cases() as usize) {
            let pairs = PAIRS.load(Ordering::SeqCst);
            eprintln!(
                "non-interference soak: {n} cases, {pairs} request pairs ({} per mode), 0 differences",
                pairs / MODES.len()
            );
        }
    }
}

/// An index of `records`, written in one commit.
fn index_of(records: &[Record]) -> Index {
    let index = index(AccessPolicy::Public);
    let mut w = index.writer().unwrap();
    for r in records {
        w.upsert(r).unwrap();
    }
    w.commit().unwrap();
    index
}

/// The observation that opened issue 16: another tenant's words switched the fuzzy leg's
/// trigram recall and "did you mean" on and off, so acme learned whether globex's records
/// hold a word. Now acme's answers are those of an index without globex.
#[test]
fn another_tenants_words_change_nothing() {
    let acme = vec![
        Record::new("a1").title("Zorblan relay").body("The zorblan relay forwards webhooks.").acl(["tenant:acme"]),
        Record::new("a2").title("Quota").body("Quotas reset every night.").acl(["tenant:acme"]),
    ];
    let globex = vec![
        Record::new("g1")
            .title("Zorblax escalation")
            .body("Zorblax is our secret escalation queue.")
            .acl(["tenant:globex"]),
        Record::new("g2").title("Quotax").body("Quotax quotax quotas.").acl(["tenant:globex"]),
    ];
    let both = index_of(&[acme.clone(), globex].concat());
    let alone = index_of(&acme);
    let who = Principal::from_verified_tokens(["tenant:acme"]);
    for q in ["zorblax", "zorbla", "zorblax relay", "quotax", "quot", "zorblaxx"] {
        for mode in MODES {
            let request = SearchRequest::new(q, who.clone()).mode(mode).suggest(true);
            let (a, b) = (both.search(&request).unwrap(), alone.search(&request).unwrap());
            assert_eq!(comparable(&a), comparable(&b), "{q:?} {mode:?}");
        }
    }
    // And the decoy is found by its trigrams in both.
    let r = both.search(&SearchRequest::new("zorblax", who).mode(Mode::Fuzzy)).unwrap();
    assert_eq!(r.hits.first().map(|h| h.id.as_str()), Some("a1"));
}

/// Raw BM25 scores in explain records once gave away the index's record count and a hidden
/// word's document count; now they are computed from the caller's records.
#[test]
fn scores_count_only_visible_records() {
    let visible = vec![
        Record::new("v1").title("Refund policy").body("Refunds within 30 days.").acl(["group:a"]),
        Record::new("v2").title("Shipping").body("Refunds are not shipping costs.").acl(["group:a"]),
    ];
    let hidden: Vec<Record> = (0..50)
        .map(|i| Record::new(format!("h{i}")).title("Refund secret").body("refund refund secret").acl(["group:b"]))
        .collect();
    let both = index_of(&[visible.clone(), hidden].concat());
    let alone = index_of(&visible);
    let who = Principal::from_verified_tokens(["group:a"]);
    for mode in [Mode::Lexical, Mode::Fuzzy, Mode::Hybrid] {
        let request = SearchRequest::new("refund policy", who.clone()).mode(mode).fusion(Fusion::MinMax);
        let (a, b) = (both.search(&request).unwrap(), alone.search(&request).unwrap());
        assert_eq!(comparable(&a), comparable(&b), "{mode:?}");
        assert!(a.hits[0].explain.legs.iter().all(|l| l.raw > 0.0));
    }
}
