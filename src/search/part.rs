//! One index's part of a search over several ([`crate::fanout`]): the stages up to recall,
//! run on counts gathered across the indexes, and the reads of the page's records.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use braid_core::{AllowedSet, Error, Explain, Hit, Leg, Ordinal, Result, SearchRequest, Stats, Visibility};
use braid_fusion::LegList;
use braid_lexical::{feedback_depth, Feedback, Gathered, Question, SynonymUse};

use super::plan;
use super::recall::{self, Legs};
use super::{analyse, prepare, validate, Analysed};
use crate::fanout::{Ask, PartLegs, PartList, Reply};
use crate::searcher::Searcher;

/// Answers one [`Ask`] of a fan-out for `request`, over this index's records the request's
/// principal may see.
pub(crate) fn part(searcher: &Searcher, request: &SearchRequest, ask: &Ask) -> Result<Reply> {
    match ask {
        Ask::Search { gathered } => search(searcher, request, gathered.clone()),
        Ask::Count { questions } => count(searcher, request, questions),
        Ask::Fetch { ords, highlight, synonyms } => fetch(searcher, request, ords, highlight, synonyms),
    }
}

/// Refuses what a fan-out cannot do across indexes (see [`crate::fanout`]).
pub(crate) fn check_fans_out(request: &SearchRequest) -> Result<()> {
    let refuse = |what: &str| Err(Error::invalid_request(format!("{what} cannot run across indexes (a fan-out)")));
    if !request.facets.is_empty() {
        return refuse("counting facets");
    }
    if request.boosts.rescores() {
        return refuse("boosts that rescore");
    }
    if request.regroups() {
        return refuse("collapsing, grouping or MMR");
    }
    if request.token_budget.is_some() {
        return refuse("a token budget");
    }
    Ok(())
}

fn allowed(searcher: &Searcher, request: &SearchRequest) -> Result<AllowedSet> {
    let visibility = Visibility::new(request.principal.clone(), searcher.policy, request.filter.clone());
    searcher.snapshot.allowed_set(visibility)
}

/// The request on the counts `gathered` so far: the questions they leave open, else this
/// index's part of the feedback model, else every leg's list.
fn search(searcher: &Searcher, request: &SearchRequest, gathered: Arc<Gathered>) -> Result<Reply> {
    let page = validate::validate(request)?;
    check_fans_out(request)?;
    let mut plan = plan::plan(searcher, request, &page)?;
    if plan.rerank_budget > 0 {
        return Err(Error::invalid_request(
            "cross-encoder reranking cannot run across indexes (a fan-out): ask with `rerank` 0, or open the \
             indexes without a reranker",
        ));
    }
    let allowed = allowed(searcher, request)?;
    let mut view = searcher.snapshot.view_gathered(&allowed, gathered)?;
    prepare(&mut view, request, &plan);
    let view = view;
    let mut stats = Stats::default();
    let Analysed { words, embedded, lexical_text } = analyse(searcher, request, &mut plan, &view, &mut stats)?;
    // The word legs first: they are what asks for counts and feedback.
    let mut word_plan = plan.clone();
    word_plan.legs.retain(|leg| *leg != Leg::Semantic);
    let legs = Legs {
        plan: &word_plan,
        view: &view,
        semantic: searcher.semantic.as_deref(),
        allowed: &allowed,
        lexical_text: &lexical_text,
    };
    let words_recalled = recall::recall(&legs, &embedded, request.weights, request, &mut stats)?;
    let questions: Vec<Question> = view.asked();
    if !questions.is_empty() {
        return Ok(Reply::Asked { questions });
    }
    if let Some(candidates) = view.feedback_part() {
        return Ok(Reply::Feedback { read: feedback_depth(plan.depth, Feedback::DEFAULT), candidates });
    }
    // Then the semantic leg, once, on the settled query: its candidates before the simple
    // syntax's constraints, which the fan-out applies after the depth cut, as one index does.
    let mut lists: Vec<(LegList, Vec<Ordinal>)> = words_recalled.lists.into_iter().map(|l| (l, Vec::new())).collect();
    let mut semantic_path = None;
    if plan.legs.contains(&Leg::Semantic) {
        let (ranked, path) = recall::semantic_leg(searcher.semantic.as_deref(), &plan, &embedded, &allowed, request)?;
        let kept = view.keep_matching(request.query.as_str(), request.syntax, ranked.clone())?;
        let kept: HashSet<Ordinal> = kept.into_iter().map(|(ord, _)| ord).collect();
        let dropped = ranked.iter().map(|(ord, _)| *ord).filter(|ord| !kept.contains(ord)).collect();
        let weight = request.weights.get(Leg::Semantic);
        lists.push((LegList::new(Leg::Semantic, weight, ranked), dropped));
        lists.sort_by_key(|(list, _)| plan.legs.iter().position(|leg| *leg == list.leg));
        semantic_path = Some(path.to_string());
    }
    let mut part_lists = Vec::with_capacity(lists.len());
    for (list, dropped) in lists {
        let ords: Vec<Ordinal> = list.candidates.iter().map(|(ord, _)| *ord).collect();
        let ids = searcher.snapshot.ids_of(&ords)?;
        let candidates =
            list.candidates.iter().zip(ids).filter_map(|(&(ord, score), id)| id.map(|id| (ord, id, score))).collect();
        part_lists.push(PartList { leg: list.leg, weight: list.weight, candidates, dropped });
    }
    let suggestions =
        if request.suggest { words.iter().filter_map(|w| w.suggestion.clone()).collect() } else { Vec::new() };
    Ok(Reply::Legs(PartLegs {
        lists: part_lists,
        depth: plan.depth,
        shortcut: plan.shortcut,
        allowed: allowed.len(),
        suggestions,
        highlight: words_recalled.highlight,
        synonyms: words_recalled.synonyms,
        embedded: stats.embedded,
        semantic_path,
    }))
}

/// This index's answers to `questions` over the records the principal may see.
fn count(searcher: &Searcher, request: &SearchRequest, questions: &[Question]) -> Result<Reply> {
    let allowed = allowed(searcher, request)?;
    let view = searcher.snapshot.view(&allowed)?;
    Ok(Reply::Counted { answers: view.answer(questions)? })
}

/// The page's records on this index: fields, snippet and the synonyms each holds. Only
/// records the principal may see are read; another ordinal is left out, as a deleted record is.
fn fetch(
    searcher: &Searcher,
    request: &SearchRequest,
    ords: &[Ordinal],
    highlight: &BTreeMap<String, f32>,
    synonyms: &[SynonymUse],
) -> Result<Reply> {
    let allowed = allowed(searcher, request)?;
    let ords: Vec<Ordinal> = ords.iter().copied().filter(|&ord| allowed.contains(ord)).collect();
    let snapshot = &searcher.snapshot;
    let held = snapshot.synonyms_held(synonyms, &ords)?;
    let held: BTreeMap<Ordinal, _> = ords.iter().copied().zip(held).collect();
    let snippets = snapshot.snippets(highlight, if request.ids_only { 0 } else { request.snippet_chars });
    let hits = snapshot
        .records(&ords)?
        .into_iter()
        .map(|record| {
            let explain =
                Explain { synonyms: held.get(&record.ord).cloned().unwrap_or_default(), ..Explain::default() };
            let hit = Hit {
                title: record.title,
                snippet: snippets.of(&record.body),
                parent: record.parent,
                section: record.section,
                lines: record.lines,
                keywords: record.keywords,
                numbers: record.numbers,
                ..Hit::id_only(record.id, 0.0, explain)
            };
            (record.ord, hit)
        })
        .collect();
    Ok(Reply::Fetched { hits })
}
