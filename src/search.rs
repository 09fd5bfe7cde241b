//! One request, end to end: visibility, recall legs in parallel, fusion, hits.

use std::collections::BTreeMap;
use std::time::Instant;

use braid_core::{
    Error, Explain, Fusion, Hit, Language, Leg, LegExplain, Mode, Result, SearchRequest, SearchResponse, Stage, Stats,
    Suggestion, Visibility, DEFAULT_RERANK_CANDIDATES, MAX_DEPTH, MAX_K, MAX_QUERY_BYTES,
};
use braid_fusion::{blend, normalised, rrf, rrf_ceiling, BlendParams, LegList, Normalisation};
use braid_lexical::{LegOutput, Snapshot};
use rayon::prelude::*;
use tracing::info_span;

use crate::index::Index;
use crate::paging::Page;
use crate::rerank;
use crate::routing;
use crate::{facets, scoring};

fn micros(since: Instant) -> u64 {
    since.elapsed().as_micros() as u64
}

/// The legs a mode runs on this index: `semantic` is `None` without an embedding model, and
/// whether the model covers the query's language otherwise. A model that does not cover it
/// (an English model asked in Chinese) leaves hybrid and auto to the lexical legs, and makes
/// semantic mode an error rather than a ranking of noise.
fn legs_for(mode: Mode, semantic: Option<bool>, language: Language) -> Result<Vec<Leg>> {
    Ok(match mode {
        Mode::Lexical => vec![Leg::Lexical],
        Mode::Fuzzy => vec![Leg::Fuzzy],
        Mode::Semantic if semantic == Some(true) => vec![Leg::Semantic],
        Mode::Semantic if semantic == Some(false) => {
            return Err(Error::LegUnavailable {
                leg: "semantic",
                reason: format!(
                    "the embedding model does not cover this query's language ({}); attach a model that does",
                    language.code()
                ),
            })
        }
        Mode::Semantic => {
            return Err(Error::LegUnavailable {
                leg: "semantic",
                reason: "no embedding model is attached to this index (index with `braid index --model <DIR>`, \
                         or call `Index::attach_embedder`)"
                    .into(),
            })
        }
        Mode::Hybrid | Mode::Auto if semantic == Some(true) => vec![Leg::Lexical, Leg::Fuzzy, Leg::Semantic],
        Mode::Hybrid | Mode::Auto => vec![Leg::Lexical, Leg::Fuzzy],
    })
}

pub(crate) fn search(index: &Index, request: &SearchRequest) -> Result<SearchResponse> {
    let started = Instant::now();
    let query = request.query();
    if query.len() > MAX_QUERY_BYTES {
        return Err(Error::QueryTooLong { max: MAX_QUERY_BYTES, got: query.len() });
    }
    if request.limit() > MAX_K {
        return Err(Error::invalid_request(format!("k = {} is above the maximum of {MAX_K}", request.limit())));
    }
    if request.depth_ref() > MAX_DEPTH {
        return Err(Error::invalid_request(format!(
            "depth = {} is above the maximum of {MAX_DEPTH}",
            request.depth_ref()
        )));
    }
    // Results (paging, facets, boosts): checked before anything runs.
    let page = Page::of(request)?;
    facets::check(request)?;
    request.boosts_ref().validate()?;
    let wants_facets = !request.facets_ref().is_empty();
    // Cooperative cancellation: `check_deadline` runs between stages and before each leg.
    request.check_deadline()?;
    let semantic = index.semantic();
    let language = Language::detect(query);
    let reranker = index.reranker();
    let rerank_budget = match &reranker {
        Some(_) => request.rerank_budget().unwrap_or(DEFAULT_RERANK_CANDIDATES),
        None => 0,
    };
    let supplied = crate::semantic::check_query_vector(semantic.as_deref(), request)?;
    let can_embed = semantic.as_ref().map(|s| supplied.is_some() || s.embeds(language));
    if request.mode_ref() == Mode::Semantic
        && supplied.is_none()
        && semantic.as_ref().is_some_and(|s| s.embedder.is_none())
    {
        return Err(crate::semantic::no_model());
    }
    let legs = legs_for(request.mode_ref(), can_embed, language)?;
    let mut stats = Stats { mode: Some(request.mode_ref()), language: Some(language), ..Stats::default() };
    let inner = &index.inner;
    let snapshot = inner.lexical.snapshot();

    // 1. Visibility, first: every later stage sees only the allowed set.
    let t = Instant::now();
    let allowed = {
        let _span = info_span!(target: "braid::visibility", "visibility").entered();
        let visibility =
            Visibility::new(request.principal().clone(), inner.config.policy, request.filter_ref().cloned());
        snapshot.allowed_set(visibility)?
    };
    stats.allowed = allowed.len();
    stats.micros.insert(Stage::Visibility.name(), micros(t));
    request.check_deadline()?;
    if request.limit() == 0 && !wants_facets {
        stats.micros.insert(Stage::Total.name(), micros(started));
        return Ok(SearchResponse {
            hits: Vec::new(),
            suggestions: Vec::new(),
            stats,
            next_cursor: None,
            facets: None,
        });
    }

    // The query's words as the caller's records know them: for routing and suggestions.
    let t = Instant::now();
    let mut view = snapshot.view(&allowed)?;
    // Results hooks: facets count the legs' whole match sets; field weights reweight the legs.
    if wants_facets {
        view.collect_matches();
    }
    let boosts = request.boosts_ref();
    if boosts.reweights_fields() {
        let title = boosts.title.unwrap_or_else(|| view.title_boost());
        view.set_field_weights(title, boosts.body.unwrap_or(1.0));
    }
    let view = view;
    let words = if request.wants_suggestions() || request.mode_ref() == Mode::Auto {
        view.query_words(query)?
    } else {
        Vec::new()
    };
    let (weights, blend_params) = match request.mode_ref() {
        Mode::Auto => (routing::route(query, &words, request.leg_weights()), BlendParams::DEFAULT),
        _ => (request.leg_weights(), BlendParams::DEFAULT),
    };
    stats.micros.insert(Stage::Analyse.name(), micros(t));
    request.check_deadline()?;

    // 2. Recall: the legs run in parallel, each confined to the allowed set. A single leg's
    // order is the final order, so it fetches only what the response can use.
    // (Facets count the semantic leg's candidates at the request's depth, whatever k.
    // Boosts rescore every candidate the legs' depth holds.)
    let semantic_facets = wants_facets && legs == [Leg::Semantic];
    let shortcut = legs.len() == 1 && !request.collapses() && !boosts.rescores() && !semantic_facets;
    let depth = if shortcut { request.leg_depth().min(page.end().max(rerank_budget)) } else { request.leg_depth() };
    let run = |leg: Leg| -> Result<(LegOutput, u64, Option<&'static str>)> {
        request.check_deadline()?;
        let t = Instant::now();
        let mut path = None;
        let out = match leg {
            Leg::Lexical => {
                let _span = info_span!(target: "braid::recall::lexical", "lexical").entered();
                view.lexical(query, depth, request.syntax_ref())?
            }
            Leg::Fuzzy => {
                let _span = info_span!(target: "braid::recall::fuzzy", "fuzzy").entered();
                view.fuzzy(query, depth)?
            }
            Leg::Semantic => {
                let _span = info_span!(target: "braid::recall::semantic", "semantic").entered();
                let semantic = semantic.as_ref().ok_or(Error::LegUnavailable {
                    leg: "semantic",
                    reason: "no embedding model is attached to this index".into(),
                })?;
                let (candidates, took) = semantic.search(query, supplied, depth, &allowed, request)?;
                path = Some(took.name());
                LegOutput { candidates, highlight: BTreeMap::new() }
            }
        };
        Ok((out, micros(t), path))
    };
    let results: Vec<Result<(LegOutput, u64, Option<&'static str>)>> = match legs.as_slice() {
        [leg] => vec![run(*leg)],
        _ => legs.par_iter().map(|&leg| run(leg)).collect(),
    };
    let mut outputs: Vec<(Leg, LegOutput, u64)> = Vec::with_capacity(legs.len());
    for (leg, result) in legs.iter().zip(results) {
        let (out, took, path) = result?;
        if path.is_some() {
            stats.semantic_path = path;
        }
        outputs.push((*leg, out, took));
    }
    // Facets: over every record the legs matched, before fusion cuts anything.
    let facets = if wants_facets {
        let t = Instant::now();
        let counted = facets::count(&view, request, outputs.iter().map(|(leg, out, _)| (*leg, out)))?;
        stats.micros.insert(Stage::Facets.name(), micros(t));
        request.check_deadline()?;
        Some(counted)
    } else {
        None
    };
    let mut highlight: BTreeMap<String, f32> = BTreeMap::new();
    let mut lists = Vec::with_capacity(outputs.len());
    for (leg, out, took) in outputs {
        stats.legs.push(leg);
        stats.candidates.insert(leg, out.candidates.len());
        stats.micros.insert(Stage::of(leg).name(), took);
        for (term, w) in out.highlight {
            let h = highlight.entry(term).or_insert(0.0);
            *h = h.max(w);
        }
        stats.weights.insert(leg, weights.get(leg));
        lists.push(LegList::new(leg, weights.get(leg), out.candidates));
    }

    // 3. Fusion.
    request.check_deadline()?;
    let t = Instant::now();
    let (fused, ceiling) = {
        let _span = info_span!(target: "braid::fusion", "fusion").entered();
        let (mut fused, ceiling) = match request.fusion_method() {
            Fusion::Rrf => (rrf(&lists, request.rrf_constant()), rrf_ceiling(&lists, request.rrf_constant())),
            Fusion::Blend => blend(&lists, &blend_params),
            Fusion::MinMax => (normalised(&lists, Normalisation::MinMax), 1.0),
            Fusion::ZScore => (normalised(&lists, Normalisation::ZScore), 1.0),
            Fusion::Dbsf => (normalised(&lists, Normalisation::Dbsf), 1.0),
        };
        // One scale for every method: [0, 1], 1 = first in every leg that ran.
        let ceiling = if ceiling > 0.0 { ceiling } else { 1.0 };
        let min_score = request.score_threshold();
        fused.retain(|f| f.score / ceiling >= min_score);
        (fused, ceiling)
    };
    stats.micros.insert(Stage::Fusion.name(), micros(t));
    request.check_deadline()?;

    // Boosts: the request's functions of each candidate's fields rescore every fused candidate.
    let (mut fused, ceiling) = (fused, ceiling);
    let t = Instant::now();
    let boosted = scoring::rescore(&snapshot, boosts, &mut fused, ceiling)?;
    if boosted.is_some() {
        stats.micros.insert(Stage::Boosts.name(), micros(t));
    }
    // Whether the ranking holds hits past the page (a single leg fetched only the page).
    let mut more = if shortcut { fused.len() >= depth } else { fused.len() > page.end() };
    // Collapsing needs every candidate: k sections may come from fewer than k articles.
    if !request.collapses() {
        fused.truncate(page.end().max(rerank_budget));
    }
    request.check_deadline()?;

    // 4. Hits: stored fields for the fused candidates (ids alone when that is all the caller
    // wants and neither reranking nor collapsing needs the records).
    let t = Instant::now();
    let ids_only = request.wants_ids_only() && rerank_budget == 0 && !request.collapses();
    let skip = if rerank_budget == 0 && !request.collapses() { page.offset() } else { 0 };
    let mut hits = build_hits(&snapshot, &fused, ceiling, ids_only, skip, boosted.as_ref())?;
    stats.micros.insert(Stage::Hits.name(), micros(t));
    request.check_deadline()?;

    // 5. Rerank: the cross-encoder rescores the top fused candidates, and only those.
    if let (Some(reranker), true) = (&reranker, rerank_budget > 0) {
        let t = Instant::now();
        let _span = info_span!(target: "braid::rerank", "rerank").entered();
        stats.reranked = rerank::rerank(reranker.as_ref(), query, &mut hits, rerank_budget, request)?;
        stats.micros.insert(Stage::Rerank.name(), micros(t));
    }
    if request.collapses() {
        // After rerank, so the best section per article is the best by the final order.
        let mut seen = std::collections::HashSet::new();
        hits.retain(|(hit, _)| seen.insert(hit.parent.clone().unwrap_or_else(|| hit.id.clone())));
    }
    // Paging: the page is cut from the ranking; the cursor names what came before the next.
    if request.collapses() {
        more = hits.len() > page.end();
    }
    let next_cursor = page.cut(&mut hits, |(hit, _)| hit, more)?;
    request.check_deadline()?;
    let t = Instant::now();
    let snippets = snapshot.snippets(&highlight, if request.wants_ids_only() { 0 } else { request.snippet_len() });
    let hits: Vec<Hit> = hits
        .into_iter()
        .map(|(mut hit, body)| {
            if request.wants_ids_only() {
                // Reranking or collapsing read the records; the caller still gets ids alone.
                hit = Hit::id_only(hit.id, hit.score, hit.explain);
            } else {
                hit.snippet = snippets.of(&body);
            }
            hit
        })
        .collect();
    stats.micros.insert(Stage::Snippets.name(), micros(t));

    // 6. Suggestions, from records the caller may see only (computed with the query's words).
    let suggestions: Vec<Suggestion> = if request.wants_suggestions() {
        words.iter().filter_map(|w| w.suggestion.clone()).collect()
    } else {
        Vec::new()
    };
    stats.micros.insert(Stage::Total.name(), micros(started));
    Ok(SearchResponse { hits, suggestions, stats, next_cursor, facets })
}

/// Hits for the fused candidates, in fused order, each with its body (for reranking and
/// snippets, which only the final top k get). With `ids_only`, hits carry ids alone and no
/// stored record is read.
fn build_hits(
    snapshot: &Snapshot,
    fused: &[braid_fusion::Fused],
    ceiling: f32,
    ids_only: bool,
    skip: usize,
    boosted: Option<&scoring::Boosted>,
) -> Result<Vec<(Hit, String)>> {
    let hit = |i: usize, f: &braid_fusion::Fused, id: String| {
        let legs = f
            .legs
            .iter()
            .map(|l| LegExplain { leg: l.leg, rank: l.rank, raw: l.raw, contribution: l.contribution })
            .collect();
        let boost = boosted.and_then(|b| b.get(&f.ord)).cloned();
        let score = boost.as_ref().map_or_else(|| scoring::relevance(f, ceiling), |b| b.score);
        let explain = Explain { legs, fused: f.score, fused_rank: i + 1, rerank: None, boost };
        Hit::id_only(id, score, explain)
    };
    // Ids alone for every hit (ids_only), or for the hits before the page (paging: ranked,
    // never returned).
    let skip = if ids_only { fused.len() } else { skip.min(fused.len()) };
    let ords: Vec<u64> = fused[..skip].iter().map(|f| f.ord).collect();
    let ids = snapshot.ids_of(&ords)?;
    let mut hits: Vec<(Hit, String)> = fused
        .iter()
        .zip(ids)
        .enumerate()
        .filter_map(|(i, (f, id))| id.map(|id| (hit(i, f, id), String::new())))
        .collect();
    let ords: Vec<u64> = fused[skip..].iter().map(|f| f.ord).collect();
    let records = snapshot.records(&ords)?;
    let mut by_ord: BTreeMap<u64, braid_lexical::StoredRecord> = records.into_iter().map(|r| (r.ord, r)).collect();
    for (i, f) in fused.iter().enumerate().skip(skip) {
        let Some(record) = by_ord.remove(&f.ord) else { continue };
        let hit = Hit {
            title: record.title,
            parent: record.parent,
            section: record.section,
            lines: record.lines,
            keywords: record.keywords,
            numbers: record.numbers,
            ..hit(i, f, record.id)
        };
        hits.push((hit, record.body));
    }
    Ok(hits)
}
