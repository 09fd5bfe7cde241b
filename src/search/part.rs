//! One index's part of a search over several ([`crate::fanout`]): the stages up to recall,
//! run on counts gathered across the indexes, and the reads of the page's records.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use braid_core::{AllowedSet, Error, Explain, Hit, Leg, Ordinal, Result, SearchRequest, Stats, Visibility};
use braid_fusion::LegList;
use braid_lexical::{feedback_depth, Feedback, Gathered, Memo, Question, SynonymUse};

use super::plan;
use super::recall::{self, Legs};
use super::{analyse, prepare, validate, Analysed};
use crate::fanout::{Ask, PartLegs, PartList, Reply};
use crate::searcher::Searcher;

impl Searcher {
    /// Opens this index's share of one request fanned out over several ([`crate::fanout`]):
    /// a [`Session`] that answers the fan-out's asks for `request`, the same request on every
    /// index, round after round, on this searcher's commit.
    ///
    /// # Errors
    /// As [`Searcher::search`]'s validation; [`braid_core::Error::InvalidRequest`] for what
    /// a fan-out cannot do (see [`crate::fanout`]).
    pub fn session(&self, request: &SearchRequest) -> Result<Session> {
        self.verified(|| Session::open(self, request))
    }
}

/// One index's share of one request fanned out over several ([`crate::fanout`]), from the
/// fan-out's first ask to its last: made by [`Searcher::session`], it answers each
/// [`Ask`] ([`Session::answer`]).
///
/// A session holds what does not change between rounds, so a round redoes only what its new
/// counts change:
/// - the commit: every round reads the one its [`Searcher`] held when the session was
///   opened, whatever commits and reloads happen meanwhile, so the ordinals of its lists are
///   those its fetch reads;
/// - the request's validation, plan and allowed set;
/// - the counts the fan-out sent: each search ask carries only what is new since the
///   last ([`Ask::Search`]);
/// - the vocabulary walks, and the lists made of gathered answers (a gathered answer never
///   changes): the lexical view's memory ([`braid_lexical::Memo`]);
/// - the semantic leg's list, once the query it embeds is settled.
///
/// A session's memory grows with the request's gathered counts and is freed with it: keep
/// one per request in flight, and drop it after the last round (the fetch, or the legs when
/// the page is empty).
pub struct Session {
    searcher: Searcher,
    request: SearchRequest,
    allowed: AllowedSet,
    /// Every count the fan-out sent, merged.
    gathered: Arc<Gathered>,
    /// What the lexical view remembers between rounds.
    memo: Arc<Memo>,
    /// The semantic leg's list, by the text it embedded.
    semantic: Option<(String, SemanticList)>,
}

/// The semantic leg's ranked list before the simple syntax's constraints, the ordinals they
/// drop, and the path it took.
type SemanticList = (Vec<(Ordinal, f32)>, Vec<Ordinal>, &'static str);

impl Session {
    fn open(searcher: &Searcher, request: &SearchRequest) -> Result<Session> {
        let page = validate::validate(request)?;
        check_fans_out(request)?;
        let plan = plan::plan(searcher, request, &page)?;
        if plan.rerank_budget > 0 {
            return Err(Error::invalid_request(
                "cross-encoder reranking cannot run across indexes (a fan-out): ask with `rerank` 0, or open the \
                 indexes without a reranker",
            ));
        }
        Ok(Session {
            searcher: searcher.clone(),
            request: request.clone(),
            allowed: allowed(searcher, request)?,
            gathered: Arc::new(Gathered::default()),
            memo: Arc::new(Memo::default()),
            semantic: None,
        })
    }

    /// The request this session answers for.
    pub fn request(&self) -> &SearchRequest {
        &self.request
    }

    /// Whether this session holds what `ask` builds on: a search ask's `held` is what the
    /// session was sent so far, or 0 for the whole table (which replaces what it holds). A
    /// session that does not (opened anew after its process restarted, or sent one delta
    /// twice) needs the ask again in full ([`crate::fanout::FanOut::resend`]); counts and
    /// fetches build on nothing.
    pub fn holds(&self, ask: &Ask) -> bool {
        match ask {
            Ask::Search { held, .. } => *held == 0 || *held == held_of(&self.gathered),
            Ask::Count { .. } | Ask::Fetch { .. } => true,
        }
    }

    /// Answers one [`Ask`] of the fan-out, over this index's records the request's principal
    /// may see.
    ///
    /// # Errors
    /// As [`Searcher::search`]; [`braid_core::Error::InvalidRequest`] for a search ask that
    /// builds on counts this session does not hold ([`Session::holds`]).
    pub fn answer(&mut self, ask: &Ask) -> Result<Reply> {
        let searcher = self.searcher.clone();
        searcher.verified(|| self.answer_verified(ask))
    }

    fn answer_verified(&mut self, ask: &Ask) -> Result<Reply> {
        match ask {
            Ask::Search { gathered, held } => {
                let holds = held_of(&self.gathered);
                if *held != 0 && *held != holds {
                    return Err(Error::invalid_request(format!(
                        "the ask builds on {held} gathered answers and this index's session holds {holds}: ask \
                         again in full (FanOut::resend)"
                    )));
                }
                if *held == 0 {
                    self.gathered = gathered.clone();
                } else if !gathered.is_empty() || gathered.feedback.is_some() {
                    Arc::make_mut(&mut self.gathered).extend(Gathered::clone(gathered))?;
                }
                self.search()
            }
            Ask::Count { questions } => self.count(questions),
            Ask::Fetch { ords, highlight, synonyms } => self.fetch(ords, highlight, synonyms),
        }
    }
}

/// How much of a fan-out's table `gathered` is ([`Ask::Search`]'s `held`).
fn held_of(gathered: &Gathered) -> usize {
    gathered.len() + usize::from(gathered.feedback.is_some())
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

impl Session {
    /// The request on the counts gathered so far: the questions they leave open, else this
    /// index's part of the feedback model, else every leg's list.
    fn search(&mut self) -> Result<Reply> {
        let Session { searcher, request, allowed, gathered, memo, .. } = &*self;
        let page = validate::validate(request)?;
        let mut plan = plan::plan(searcher, request, &page)?;
        let mut view = searcher.snapshot.view_remembering(allowed, gathered.clone(), memo.clone())?;
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
            allowed,
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
        let mut lists: Vec<(LegList, Vec<Ordinal>)> =
            words_recalled.lists.into_iter().map(|l| (l, Vec::new())).collect();
        let mut semantic_path = None;
        let semantic = if plan.legs.contains(&Leg::Semantic) {
            let list = match &self.semantic {
                Some((text, list)) if *text == embedded => list.clone(),
                _ => {
                    let (ranked, path) =
                        recall::semantic_leg(searcher.semantic.as_deref(), &plan, &embedded, allowed, request)?;
                    let kept = view.keep_matching(request.query.as_str(), request.syntax, ranked.clone())?;
                    let kept: HashSet<Ordinal> = kept.into_iter().map(|(ord, _)| ord).collect();
                    let dropped = ranked.iter().map(|(ord, _)| *ord).filter(|ord| !kept.contains(ord)).collect();
                    (ranked, dropped, path)
                }
            };
            let (ranked, dropped, path) = list.clone();
            let weight = request.weights.get(Leg::Semantic);
            lists.push((LegList::new(Leg::Semantic, weight, ranked), dropped));
            lists.sort_by_key(|(list, _)| plan.legs.iter().position(|leg| *leg == list.leg));
            semantic_path = Some(path.to_string());
            Some((embedded, list))
        } else {
            None
        };
        let mut part_lists = Vec::with_capacity(lists.len());
        for (list, dropped) in lists {
            let ords: Vec<Ordinal> = list.candidates.iter().map(|(ord, _)| *ord).collect();
            let ids = searcher.snapshot.ids_of(&ords)?;
            let candidates = list
                .candidates
                .iter()
                .zip(ids)
                .filter_map(|(&(ord, score), id)| id.map(|id| (ord, id, score)))
                .collect();
            part_lists.push(PartList { leg: list.leg, weight: list.weight, candidates, dropped });
        }
        let suggestions =
            if request.suggest { words.iter().filter_map(|w| w.suggestion.clone()).collect() } else { Vec::new() };
        let reply = Reply::Legs(PartLegs {
            lists: part_lists,
            depth: plan.depth,
            shortcut: plan.shortcut,
            allowed: allowed.len(),
            suggestions,
            highlight: words_recalled.highlight,
            synonyms: words_recalled.synonyms,
            embedded: stats.embedded,
            semantic_path,
        });
        drop(view);
        if semantic.is_some() {
            self.semantic = semantic;
        }
        Ok(reply)
    }

    /// This index's answers to `questions` over the records the principal may see.
    fn count(&self, questions: &[Question]) -> Result<Reply> {
        let view = self.searcher.snapshot.view_remembering(&self.allowed, self.gathered.clone(), self.memo.clone())?;
        Ok(Reply::Counted { answers: view.answer(questions)? })
    }

    /// The page's records on this index: fields, snippet and the synonyms each holds. Only
    /// records the principal may see are read; another ordinal is left out, as a deleted
    /// record is.
    fn fetch(&self, ords: &[Ordinal], highlight: &BTreeMap<String, f32>, synonyms: &[SynonymUse]) -> Result<Reply> {
        let ords: Vec<Ordinal> = ords.iter().copied().filter(|&ord| self.allowed.contains(ord)).collect();
        let snapshot = &self.searcher.snapshot;
        let held = snapshot.synonyms_held(synonyms, &ords)?;
        let held: BTreeMap<Ordinal, _> = ords.iter().copied().zip(held).collect();
        let snippets = snapshot.snippets(highlight, if self.request.ids_only { 0 } else { self.request.snippet_chars });
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
}
