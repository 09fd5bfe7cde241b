//! The fan-out's side of a search over several indexes: what to ask each, and the response
//! made of their replies (see [`crate::fanout`]).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use braid_core::{
    Error, Explain, Hit, Language, LegExplain, Ordinal, Result, SearchRequest, SearchResponse, Stage, Stats,
};
use braid_fusion::{fuse, BlendParams, FuseParams, Fused, LegList};
use braid_lexical::{feedback_model, Feedback, Gathered, Question};

use super::{Ask, PartLegs, Reply};
use crate::paging::Page;
use crate::search::{check_fans_out, validate};

/// Rounds a fan-out may take before it gives up (a request settles in four to eight: counts
/// twice, feedback, counts for the expansion, the legs, the fetch).
pub const MAX_ROUNDS: usize = 24;

/// What a [`FanOut`] wants next.
#[derive(Debug)]
pub enum Step {
    /// Send each index its ask (one per index, in the order the fan-out was made with) and
    /// hand their replies, in the same order, to [`FanOut::next`].
    Ask(Vec<Ask>),
    /// The response one index holding every record would give.
    Done(Box<SearchResponse>),
}

/// One request fanned out over several indexes (see [`crate::fanout`]): a state machine
/// without I/O, driven by [`FanOut::start`] and [`FanOut::next`].
#[derive(Debug)]
pub struct FanOut {
    request: SearchRequest,
    page: Page,
    parts: usize,
    gathered: Gathered,
    /// The gathered questions in the order they came: an index was sent a prefix of them.
    order: Vec<Question>,
    /// What each index was sent of the table: how many of `order`, and whether the feedback
    /// model. Each search ask sends an index only what is new since.
    sent: Vec<Sent>,
    /// The last asks, for [`FanOut::resend`].
    asked: Vec<Ask>,
    waiting: Waiting,
    rounds: usize,
    started: Instant,
}

/// What one index was sent of the gathered table.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Sent {
    answers: usize,
    feedback: bool,
}

impl Sent {
    /// What an index that was sent this holds ([`Ask::Search`]'s `held`).
    fn held(self) -> usize {
        self.answers + usize::from(self.feedback)
    }
}

#[derive(Debug)]
enum Waiting {
    Search,
    Count(Vec<Question>),
    Fetch(Box<Ranked>),
    Done,
}

/// The page, ranked, while its records are read.
#[derive(Debug)]
struct Ranked {
    /// Each hit with the index and ordinal that hold it.
    hits: Vec<(Hit, usize, Ordinal)>,
    next_cursor: Option<String>,
    stats: Stats,
    suggestions: Vec<braid_core::Suggestion>,
}

impl FanOut {
    /// A fan-out of `request` over `parts` indexes.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] for no indexes, or a request a fan-out cannot answer exactly
    /// (see [`crate::fanout`]); the request's own validation errors.
    pub fn new(request: SearchRequest, parts: usize) -> Result<FanOut> {
        if parts == 0 {
            return Err(Error::invalid_request("a fan-out needs at least one index"));
        }
        let page = validate::validate(&request)?;
        check_fans_out(&request)?;
        Ok(FanOut {
            request,
            page,
            parts,
            gathered: Gathered::default(),
            order: Vec::new(),
            sent: vec![Sent::default(); parts],
            asked: Vec::new(),
            waiting: Waiting::Search,
            rounds: 0,
            started: Instant::now(),
        })
    }

    /// The request this fan-out answers.
    pub fn request(&self) -> &SearchRequest {
        &self.request
    }

    /// The first asks: every index runs the request with nothing gathered yet.
    pub fn start(&mut self) -> Vec<Ask> {
        self.waiting = Waiting::Search;
        self.search_asks()
    }

    /// What the last asks asked of index `at`, built on nothing it was sent before: the same
    /// ask, but a search ask with the whole table gathered so far (`held` 0). Ask an index
    /// that lost what it held — a new session, after its process restarted — this instead,
    /// and hand its reply to [`FanOut::next`] with the others. `None` before the first asks
    /// or for an index out of range.
    pub fn resend(&self, at: usize) -> Option<Ask> {
        Some(match self.asked.get(at)? {
            Ask::Search { .. } => Ask::Search { gathered: Arc::new(self.gathered.clone()), held: 0 },
            ask => ask.clone(),
        })
    }

    /// Every index's search ask: the table's part it was not sent yet, on what it was sent.
    fn search_asks(&mut self) -> Vec<Ask> {
        let now = Sent { answers: self.order.len(), feedback: self.gathered.feedback.is_some() };
        // The indexes were sent the same so far (unless one was asked again in full): one
        // table of what is new for each thing sent.
        let mut made: Vec<(Sent, Arc<Gathered>)> = Vec::with_capacity(1);
        let asks: Vec<Ask> = (0..self.parts)
            .map(|at| {
                let sent = std::mem::replace(&mut self.sent[at], now);
                let gathered = match made.iter().find(|(s, _)| *s == sent) {
                    Some((_, table)) => table.clone(),
                    None => {
                        let mut added = self.gathered.only(&self.order[sent.answers.min(self.order.len())..]);
                        if !sent.feedback {
                            added.feedback = self.gathered.feedback.clone();
                        }
                        let added = Arc::new(added);
                        made.push((sent, added.clone()));
                        added
                    }
                };
                Ask::Search { gathered, held: sent.held() }
            })
            .collect();
        self.asked = asks.clone();
        asks
    }

    /// Asks `asks` (one per index), remembered for [`FanOut::resend`].
    fn ask(&mut self, asks: Vec<Ask>) -> Step {
        self.asked = asks.clone();
        Step::Ask(asks)
    }

    /// Takes every index's reply to the last asks (in index order) and says what comes next.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] when the replies do not fit the asks (wrong number or kind)
    /// or the request does not settle within [`MAX_ROUNDS`]; then the fan-out is over.
    pub fn next(&mut self, replies: Vec<Reply>) -> Result<Step> {
        self.rounds += 1;
        if self.rounds > MAX_ROUNDS {
            self.waiting = Waiting::Done;
            return Err(Error::invalid_request(format!("the fan-out did not settle in {MAX_ROUNDS} rounds")));
        }
        if replies.len() != self.parts {
            self.waiting = Waiting::Done;
            return Err(Error::invalid_request(format!("{} replies from {} indexes", replies.len(), self.parts)));
        }
        match std::mem::replace(&mut self.waiting, Waiting::Done) {
            Waiting::Search => self.searched(replies),
            Waiting::Count(questions) => {
                for reply in replies {
                    let Reply::Counted { answers } = reply else { return Err(unexpected("counts", &reply)) };
                    self.gathered.add(&questions, answers)?;
                }
                self.order.extend(questions);
                self.waiting = Waiting::Search;
                Ok(Step::Ask(self.search_asks()))
            }
            Waiting::Fetch(page) => self.fetched(*page, replies),
            Waiting::Done => Err(Error::invalid_request("the fan-out is over")),
        }
    }

    fn searched(&mut self, replies: Vec<Reply>) -> Result<Step> {
        let mut asked = BTreeSet::new();
        let mut feedback = Vec::new();
        let mut read = None;
        let mut legs = Vec::with_capacity(replies.len());
        for reply in replies {
            match reply {
                Reply::Asked { questions } => asked.extend(questions),
                Reply::Feedback { read: r, candidates } => {
                    read = Some(r);
                    feedback.extend(candidates);
                }
                Reply::Legs(part) => legs.push(part),
                other => return Err(unexpected("a search", &other)),
            }
        }
        if !asked.is_empty() {
            let questions: Vec<Question> = asked.into_iter().filter(|q| self.gathered.get(q).is_none()).collect();
            if questions.is_empty() {
                return Err(Error::invalid_request("an index asked again for counts already gathered"));
            }
            self.waiting = Waiting::Count(questions.clone());
            return Ok(self.ask(vec![Ask::Count { questions }; self.parts]));
        }
        if let Some(read) = read {
            if !legs.is_empty() || self.gathered.feedback.is_some() {
                return Err(Error::invalid_request("the indexes disagree on the feedback round"));
            }
            self.gathered.feedback = Some(feedback_model(feedback, read, Feedback::DEFAULT));
            self.waiting = Waiting::Search;
            return Ok(Step::Ask(self.search_asks()));
        }
        self.fuse(legs)
    }

    /// Merges each leg's lists, fuses them and ranks the page; asks for its records.
    fn fuse(&mut self, parts: Vec<PartLegs>) -> Result<Step> {
        let Some(first) = parts.first() else { return Err(Error::invalid_request("no legs came back")) };
        if parts.iter().any(|p| p.lists.len() != first.lists.len()) {
            return Err(Error::invalid_request("the indexes ran different legs"));
        }
        let depth = first.depth;
        // One ordinal space across the indexes, in id order: ties in fusion fall by id.
        let mut keys: Vec<(&str, usize, Ordinal)> = Vec::new();
        for (at, part) in parts.iter().enumerate() {
            for list in &part.lists {
                keys.extend(list.candidates.iter().map(|(ord, id, _)| (id.as_str(), at, *ord)));
            }
        }
        keys.sort_unstable();
        keys.dedup();
        let global: HashMap<(usize, Ordinal), Ordinal> =
            keys.iter().enumerate().map(|(g, (_, at, ord))| ((*at, *ord), g as Ordinal)).collect();
        let global = &global;
        let lists: Vec<LegList> = (0..first.lists.len())
            .map(|i| {
                let mut merged: Vec<(f32, &str, Ordinal)> = parts
                    .iter()
                    .enumerate()
                    .flat_map(|(at, part)| {
                        part.lists[i].candidates.iter().map(move |(ord, id, score)| (*score, id.as_str(), at, *ord))
                    })
                    .map(|(score, id, at, ord)| (score, id, global[&(at, ord)]))
                    .collect();
                merged.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
                merged.truncate(depth);
                let dropped: HashSet<Ordinal> = parts
                    .iter()
                    .enumerate()
                    .flat_map(|(at, part)| part.lists[i].dropped.iter().filter_map(move |ord| global.get(&(at, *ord))))
                    .copied()
                    .collect();
                merged.retain(|(_, _, g)| !dropped.contains(g));
                let list = &first.lists[i];
                LegList::new(list.leg, list.weight, merged.into_iter().map(|(score, _, g)| (g, score)).collect())
            })
            .collect();
        let request = &self.request;
        let params = FuseParams { rrf_k: request.rrf_k, blend: BlendParams::DEFAULT };
        let mut fused = fuse(request.fusion, &lists, &params);
        fused.retain(|f| f.score >= request.min_score);
        let more = if first.shortcut { fused.len() >= depth } else { fused.len() > self.page.end() };
        fused.truncate(self.page.end());
        let mut ranked: Vec<(Hit, usize, Ordinal)> = fused
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let (id, at, ord) = keys[f.ord as usize];
                (bare_hit(i, f, id.to_string()), at, ord)
            })
            .collect();
        let next_cursor = self.page.cut(&mut ranked, |(hit, _, _)| hit, more)?;
        let stats = Stats {
            mode: Some(request.mode),
            language: Some(Language::detect(request.query.as_str())),
            legs: lists.iter().map(|l| l.leg).collect(),
            candidates: lists.iter().map(|l| (l.leg, l.candidates.len())).collect(),
            weights: lists.iter().map(|l| (l.leg, l.weight)).collect(),
            embedded: first.embedded.clone(),
            semantic_path: first.semantic_path.as_deref().and_then(static_path),
            allowed: parts.iter().map(|p| p.allowed).sum(),
            ..Stats::default()
        };
        let page = Ranked { hits: ranked, next_cursor, stats, suggestions: first.suggestions.clone() };
        if request.ids_only || request.k == 0 || page.hits.is_empty() {
            return Ok(Step::Done(Box::new(self.respond(page))));
        }
        let mut asks: Vec<Vec<Ordinal>> = vec![Vec::new(); self.parts];
        for (_, at, ord) in &page.hits {
            asks[*at].push(*ord);
        }
        let (highlight, synonyms) = (first.highlight.clone(), first.synonyms.clone());
        let asks = asks
            .into_iter()
            .map(|ords| Ask::Fetch { ords, highlight: highlight.clone(), synonyms: synonyms.clone() })
            .collect();
        self.waiting = Waiting::Fetch(Box::new(page));
        Ok(self.ask(asks))
    }

    /// Fills the page's hits with the records the indexes read; a record gone meanwhile drops
    /// its hit, as on one index.
    fn fetched(&mut self, mut page: Ranked, replies: Vec<Reply>) -> Result<Step> {
        let mut read: BTreeMap<(usize, Ordinal), Hit> = BTreeMap::new();
        for (at, reply) in replies.into_iter().enumerate() {
            let Reply::Fetched { hits } = reply else { return Err(unexpected("a fetch", &reply)) };
            read.extend(hits.into_iter().map(|(ord, hit)| ((at, ord), hit)));
        }
        page.hits = std::mem::take(&mut page.hits)
            .into_iter()
            .filter_map(|(ranked, at, ord)| {
                let record = read.remove(&(at, ord))?;
                let explain = Explain { synonyms: record.explain.synonyms, ..ranked.explain };
                Some((Hit { id: ranked.id, score: ranked.score, explain, ..record }, at, ord))
            })
            .collect();
        Ok(Step::Done(Box::new(self.respond(page))))
    }

    fn respond(&mut self, page: Ranked) -> SearchResponse {
        self.waiting = Waiting::Done;
        let mut stats = page.stats;
        stats.micros.insert(Stage::Total, self.started.elapsed().as_micros() as u64);
        SearchResponse {
            hits: page.hits.into_iter().map(|(hit, _, _)| hit).collect(),
            suggestions: page.suggestions,
            stats,
            next_cursor: page.next_cursor,
            facets: None,
        }
    }
}

/// The hit of the `i`-th ranked candidate, as one index makes it: id, score, explain.
fn bare_hit(i: usize, f: &Fused, id: String) -> Hit {
    let legs = f
        .legs
        .iter()
        .map(|l| LegExplain { leg: l.leg, rank: l.rank, raw: l.raw, contribution: l.contribution })
        .collect();
    let explain = Explain { legs, fused: f.score, fused_rank: i + 1, ..Explain::default() };
    Hit::id_only(id, crate::scoring::relevance(f), explain)
}

fn static_path(path: &str) -> Option<&'static str> {
    ["hnsw", "exact"].into_iter().find(|p| *p == path)
}

fn unexpected(expected: &str, reply: &Reply) -> Error {
    let kind = match reply {
        Reply::Asked { .. } => "questions",
        Reply::Feedback { .. } => "feedback",
        Reply::Legs(_) => "legs",
        Reply::Counted { .. } => "counts",
        Reply::Fetched { .. } => "records",
    };
    Error::invalid_request(format!("an index replied with {kind} to {expected}"))
}
