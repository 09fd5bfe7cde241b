//! One request, end to end, as named stages over small structs:
//!
//! 1. [`validate`](validate::validate) — the request's bounds, before any work;
//! 2. [`plan`](plan::plan) — which legs run, how deep, what the rerank stage may score;
//! 3. visibility — the allowed set (principal, policy, filter): every later stage sees only it;
//! 4. analyse — the query's words among the caller's records ("did you mean", and the
//!    [corrected](correct::corrected) query the lexical and semantic legs read);
//! 5. [`recall`](recall::recall) — the legs, in parallel, confined to the allowed set;
//! 6. fuse — [`braid_fusion::fuse`], scores on `[0, 1]`, the score threshold, the candidates
//!    kept;
//! 7. [`hits`](hits::hits) — stored fields of the fused candidates;
//! 8. rerank — the cross-encoder rescores the top candidates, when the index has one;
//! 9. [`diversify`] — collapse and [`group`](diversify::group) (at most n hits per article or
//!    field value), then [`mmr`](diversify::mmr) — and truncate to `k`;
//! 10. [`snippets`](hits::finish) — of the final hits, packed into the request's
//!     [token budget](budget::pack) when it has one; then the suggestions computed in 4.
//!
//! Each stage's time goes to [`Stats::micros`] under its [`Stage`]; the deadline is checked
//! between stages.

mod budget;
mod correct;
mod diversify;
mod hits;
mod part;
mod plan;
mod recall;
pub(crate) mod validate;

use std::borrow::Cow;
use std::collections::HashMap;
use std::time::Instant;

use braid_core::{
    GroupBy, Language, Ordinal, Result, SearchRequest, SearchResponse, Stage, Stats, Suggestion, Visibility,
};
use braid_fusion::{fuse, BlendParams, FuseParams};
use braid_lexical::{QueryWord, View};
use plan::Plan;

pub(crate) use part::check_fans_out;
pub use part::Session;
use tracing::info_span;

use crate::rerank;
use crate::searcher::Searcher;
use crate::{facets, scoring};

fn micros(since: Instant) -> u64 {
    since.elapsed().as_micros() as u64
}

pub(crate) fn search(searcher: &Searcher, request: &SearchRequest) -> Result<SearchResponse> {
    let started = Instant::now();
    let page = validate::validate(request)?;
    if let Some(group) = &request.group_by {
        diversify::check_group(group, searcher.snapshot.schema())?;
    }
    if let Some(lambda) = request.mmr {
        diversify::check_mmr(lambda)?;
    }
    let mut plan = plan::plan(searcher, request, &page)?;
    let mut stats = Stats { mode: Some(request.mode), language: Some(plan.language), ..Stats::default() };
    let snapshot = &searcher.snapshot;

    // 3. Visibility, first: every later stage sees only the allowed set.
    let t = Instant::now();
    let allowed = {
        let _span = info_span!(target: "braid::visibility", "visibility").entered();
        let visibility = Visibility::new(request.principal.clone(), searcher.policy, request.filter.as_ref().cloned());
        snapshot.allowed_set(visibility)?
    };
    stats.allowed = allowed.len();
    stats.micros.insert(Stage::Visibility, micros(t));
    request.check_deadline()?;
    if request.k == 0 && !plan.facets {
        stats.micros.insert(Stage::Total, micros(started));
        return Ok(SearchResponse {
            hits: Vec::new(),
            suggestions: Vec::new(),
            stats,
            next_cursor: None,
            facets: None,
        });
    }

    // 4. Analyse: the query's words as the caller's records know them.
    let t = Instant::now();
    let mut view = snapshot.view(&allowed)?;
    prepare(&mut view, request, &plan);
    let view = view;
    let analysed = analyse(searcher, request, &mut plan, &view, &mut stats)?;
    let Analysed { words, embedded, lexical_text } = analysed;
    stats.micros.insert(Stage::Analyse, micros(t));
    request.check_deadline()?;

    // 5. Recall.
    let legs = recall::Legs {
        plan: &plan,
        view: &view,
        semantic: searcher.semantic.as_deref(),
        allowed: &allowed,
        lexical_text: &lexical_text,
    };
    let recalled = recall::recall(&legs, &embedded, request.weights, request, &mut stats)?;

    // 5b. Facets: over every record the legs matched, before fusion cuts anything.
    let facets = if plan.facets {
        let t = Instant::now();
        let counted = facets::count(&view, request, &recalled.lists)?;
        stats.micros.insert(Stage::Facets, micros(t));
        request.check_deadline()?;
        Some(counted)
    } else {
        None
    };

    // 6. Fuse.
    request.check_deadline()?;
    let t = Instant::now();
    let mut fused = {
        let _span = info_span!(target: "braid::fusion", "fusion").entered();
        let params = FuseParams { rrf_k: request.rrf_k, blend: BlendParams::DEFAULT };
        let mut fused = fuse(request.fusion, &recalled.lists, &params);
        let min_score = request.min_score;
        fused.retain(|f| f.score >= min_score);
        fused
    };
    stats.micros.insert(Stage::Fusion, micros(t));
    request.check_deadline()?;

    // 6b. Boosts: the request's functions of each candidate's fields rescore every fused
    // candidate, before the ranking is cut to the page.
    let t = Instant::now();
    let boosted = scoring::rescore(snapshot, &request.boosts, &mut fused)?;
    if boosted.is_some() {
        stats.micros.insert(Stage::Boosts, micros(t));
    }
    // Whether the ranking holds hits past the page (a single leg fetched only the page).
    let mut more = if plan.shortcut { fused.len() >= plan.depth } else { fused.len() > page.end() };
    // Collapsing, grouping and MMR need every candidate: k sections may come from fewer than
    // k articles.
    if !request.regroups() {
        fused.truncate(page.end().max(plan.rerank_budget));
    }
    request.check_deadline()?;

    // 7. Hits: stored fields for the fused candidates (ids alone when that is all the caller
    // wants and neither reranking nor collapsing needs the records).
    let t = Instant::now();
    let ids_only = request.ids_only && plan.rerank_budget == 0 && !request.regroups();
    let skip = if plan.rerank_budget == 0 && !request.regroups() { page.offset() } else { 0 };
    let found = hits::Found { fused: &fused, synonyms: &recalled.synonyms, boosted: boosted.as_ref() };
    let (mut hits, ords) = hits::hits(snapshot, &found, ids_only, skip)?;
    // MMR reads each candidate's vector by its ordinal, after rerank may have reordered them.
    let ord_of: HashMap<String, Ordinal> = match request.mmr {
        Some(_) => hits.iter().map(|(hit, _)| hit.id.clone()).zip(ords).collect(),
        None => HashMap::new(),
    };
    stats.micros.insert(Stage::Hits, micros(t));
    request.check_deadline()?;

    // 8. Rerank: the cross-encoder rescores the top fused candidates, and only those.
    if let (Some(reranker), true) = (&searcher.reranker, plan.rerank_budget > 0) {
        let t = Instant::now();
        let _span = info_span!(target: "braid::rerank", "rerank").entered();
        stats.reranked =
            rerank::rerank(reranker.as_ref(), request.query.as_str(), &mut hits, plan.rerank_budget, request)?;
        stats.micros.insert(Stage::Rerank, micros(t));
    }

    // 9. Diversify — collapse or group, then MMR — then the page: cut from the ranking; the
    // cursor names what came before the next one.
    if request.regroups() {
        let t = Instant::now();
        if request.collapse {
            diversify::group(&mut hits, &GroupBy { field: GroupBy::PARENT.into(), per_group: 1 });
        }
        if let Some(group) = &request.group_by {
            diversify::group(&mut hits, group);
        }
        if let Some(lambda) = request.mmr {
            let store = searcher.semantic.as_ref().map(|s| s.store.read().unwrap_or_else(|p| p.into_inner()));
            let similarity = diversify::RecordSimilarity::new(&hits, |hit| {
                let ord = ord_of.get(&hit.id)?;
                store.as_ref()?.vector(*ord)
            });
            drop(store);
            diversify::mmr(&mut hits, lambda, page.end(), &similarity);
        }
        more = hits.len() > page.end();
        stats.micros.insert(Stage::Diversify, micros(t));
    }
    let mut next_cursor = page.cut(&mut hits, |(hit, _)| hit, more)?;
    request.check_deadline()?;

    // 10. Snippets, then the suggestions, from records the caller may see only (computed
    // with the query's words).
    let t = Instant::now();
    let mut hits = hits::finish(snapshot, hits, &recalled.highlight, request.ids_only, request.snippet_chars);
    // 10b. The token budget: the page's hits while they fit; a page cut short has no cursor.
    if let Some(limit) = request.token_budget {
        let embedder = searcher.semantic.as_ref().and_then(|s| s.embedder.clone());
        let (kept, tokens) = budget::pack(&hits, limit, embedder.as_deref());
        if kept < hits.len() {
            hits.truncate(kept);
            next_cursor = None;
        }
        stats.tokens = Some(tokens);
    }
    stats.micros.insert(Stage::Snippets, micros(t));
    let suggestions: Vec<Suggestion> =
        if request.suggest { words.iter().filter_map(|w| w.suggestion.clone()).collect() } else { Vec::new() };
    stats.micros.insert(Stage::Total, micros(started));
    Ok(SearchResponse { hits, suggestions, stats, next_cursor, facets })
}

/// Readies a request's view for its legs: facets count the legs' whole match sets; the
/// request's field weights reweight the legs.
fn prepare(view: &mut View<'_>, request: &SearchRequest, plan: &Plan<'_>) {
    if plan.facets {
        view.collect_matches();
    }
    let boosts = &request.boosts;
    if boosts.reweights_fields() {
        view.set_field_weights(boosts.title, boosts.body.unwrap_or(1.0));
    }
}

/// What stage 4 makes of a query: its words among the caller's records, the text the
/// semantic leg embeds and the text the lexical leg reads.
struct Analysed {
    words: Vec<QueryWord>,
    /// The query as "did you mean" corrects it, less the simple syntax's operators.
    embedded: String,
    /// The query, corrected where the fuzzy leg runs beside the lexical one.
    lexical_text: String,
}

/// Stage 4, on `view`: the query's words as the caller's records know them, and the
/// corrected texts the legs read. A correction the model cannot read drops the semantic leg
/// from a hybrid `plan`.
fn analyse(
    searcher: &Searcher,
    request: &SearchRequest,
    plan: &mut Plan<'_>,
    view: &View<'_>,
    stats: &mut Stats,
) -> Result<Analysed> {
    // The words that score: the query itself, less the simple syntax's operators.
    let scoring = view.scoring_text(&request.query, request.syntax);
    let words = if request.suggest || plan.embeds_text() || plan.corrects_lexical() {
        view.query_words(&scoring)?
    } else {
        Vec::new()
    };
    // The query as "did you mean" corrects it: what the semantic leg embeds and, beside the
    // fuzzy leg, what the lexical leg reads.
    let mut embedded = if plan.embeds_text() { correct::corrected(&scoring, &words) } else { Cow::Borrowed(&*scoring) };
    // A correction the model cannot read (pinyin corrected to Chinese, under an English model)
    // is not embedded: hybrid drops the semantic leg, semantic mode embeds the text as typed.
    if embedded != scoring {
        let covers = searcher.semantic.as_deref().is_some_and(|s| s.embeds(Language::detect(&embedded)));
        if !plan.embeds_correction(covers) {
            embedded = Cow::Borrowed(&*scoring);
        }
    }
    if embedded != scoring {
        stats.embedded = Some(embedded.to_string());
    }
    let lexical_text = if plan.corrects_lexical() {
        correct::corrected(request.query.as_str(), &words)
    } else {
        Cow::Borrowed(request.query.as_str())
    };
    Ok(Analysed { embedded: embedded.into_owned(), lexical_text: lexical_text.into_owned(), words })
}
