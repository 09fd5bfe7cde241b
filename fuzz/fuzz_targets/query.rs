//! Query handling: arbitrary query text and request knobs (mode, k, depth, fusion, weights,
//! thresholds, filters, principals, query syntax) against a small in-memory index, in every
//! mode; the semantic leg has no model here, so it must answer with a typed error. A search
//! either errs or returns at most `k` hits, each visible to the principal.
#![no_main]

use std::sync::OnceLock;

use braid::{Filter, Fusion, Index, LegWeights, Mode, Principal, QuerySyntax, SearchRequest, MAX_K};
use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../tests/common.rs"]
mod common;

const FIELDS: [&str; 7] = ["category", "updated", "lang", "priority", "parent", "no-such-field", ""];
const TOKENS: [&str; 5] = ["public", "group:support", "tenant:acme", "tenant:globex", "user:42"];

fn field(u: &mut Unstructured<'_>) -> Result<String> {
    Ok(if u.ratio(1, 8)? { u.arbitrary()? } else { u.choose(&FIELDS)?.to_string() })
}

fn filter(u: &mut Unstructured<'_>, depth: u32) -> Result<Filter> {
    let top = if depth >= 3 { 4 } else { 7 };
    Ok(match u.int_in_range(0..=top)? {
        0 => Filter::keyword(field(u)?, u.arbitrary::<String>()?),
        1 => Filter::keyword_any(field(u)?, u.arbitrary::<Vec<String>>()?),
        2 => Filter::range(field(u)?, u.arbitrary()?, u.arbitrary()?),
        3 => Filter::parent(u.arbitrary::<String>()?),
        4 => Filter::section(u.arbitrary::<Vec<String>>()?),
        5 => Filter::all(filters(u, depth)?),
        6 => Filter::any(filters(u, depth)?),
        _ => Filter::not(filter(u, depth + 1)?),
    })
}

fn filters(u: &mut Unstructured<'_>, depth: u32) -> Result<Vec<Filter>> {
    (0..u.int_in_range(0..=3)?).map(|_| filter(u, depth + 1)).collect()
}

/// Builds a request from `knobs` for `query` and checks what the search returns.
fn run(index: &Index, knobs: &[u8], query: &str) -> Result<()> {
    let u = &mut Unstructured::new(knobs);
    let mut tokens: Vec<String> = Vec::new();
    for _ in 0..u.int_in_range(0..=3)? {
        tokens.push(if u.ratio(1, 6)? { u.arbitrary()? } else { u.choose(&TOKENS)?.to_string() });
    }
    let principal = Principal::from_verified_tokens(tokens);
    let mode = *u.choose(&[Mode::Lexical, Mode::Fuzzy, Mode::Semantic, Mode::Hybrid])?;
    let k = u.int_in_range(0..=MAX_K + 2)?;
    let mut request = SearchRequest::new(query, principal.clone()).mode(mode).k(k);
    if u.ratio(1, 4)? {
        request = request.syntax(QuerySyntax::Tantivy);
    }
    if u.ratio(1, 2)? {
        request = request.filter(filter(u, 0)?);
    }
    if u.ratio(1, 4)? {
        request = request.depth(u.int_in_range(0..=5000)?);
    }
    if u.ratio(1, 4)? {
        request = request.rrf_k(u.arbitrary()?);
    }
    if u.ratio(1, 4)? {
        request =
            request.weights(LegWeights { lexical: u.arbitrary()?, fuzzy: u.arbitrary()?, semantic: u.arbitrary()? });
    }
    if u.ratio(1, 4)? {
        request = request.fusion(*u.choose(&[Fusion::Rrf, Fusion::MinMax, Fusion::ZScore])?);
    }
    if u.ratio(1, 4)? {
        request = request.min_score(u.arbitrary()?);
    }
    if u.ratio(1, 4)? {
        request = request.snippet_chars(u.int_in_range(0..=5000)?);
    }
    if u.ratio(1, 8)? {
        request = request.rerank(u.int_in_range(0..=100)?);
    }
    request = request.suggest(u.arbitrary()?).collapse(u.arbitrary()?);
    if let Ok(response) = index.search(&request) {
        assert!(response.hits.len() <= k, "{} hits for k = {k}", response.hits.len());
        for hit in &response.hits {
            let visible = index.record(&hit.id, &principal).expect("record");
            assert!(visible.is_some(), "hit {} is not visible to the principal", hit.id);
        }
    }
    Ok(())
}

// The first byte says how many of the following bytes set the knobs; the rest is the query
// text, so that libFuzzer's byte mutations mostly change the text.
fuzz_target!(|data: &[u8]| {
    static INDEX: OnceLock<Index> = OnceLock::new();
    let index = INDEX.get_or_init(common::index);
    let Some((&n, rest)) = data.split_first() else { return };
    let (knobs, query) = rest.split_at(usize::from(n).min(rest.len()));
    let _ = run(index, knobs, &String::from_utf8_lossy(query));
});
