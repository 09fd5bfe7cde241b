//! Stage 5, recall: the legs run in parallel, each confined to the allowed set.

use std::collections::BTreeMap;
use std::time::Instant;

use braid_core::{AllowedSet, Error, Leg, LegWeights, QuerySyntax, Result, SearchRequest, Stage, Stats};
use braid_fusion::LegList;
use braid_lexical::{Feedback, LegOutput, SynonymUse, View};
use braid_parallel::fork;
use tracing::info_span;

use super::micros;
use super::plan::Plan;
use crate::semantic::Semantic;

/// What the legs found: one ranked list per leg, the query terms to highlight and the synonyms
/// the query was expanded with.
pub(super) struct Recalled {
    pub lists: Vec<LegList>,
    /// Analysed query terms with the weight to highlight them by (the highest any leg gave).
    pub highlight: BTreeMap<String, f32>,
    /// The synonym expansions the lexical legs used, each once.
    pub synonyms: Vec<SynonymUse>,
}

/// What the legs run on: the plan, the caller's view of the lexical index, the vectors and the
/// allowed set.
pub(super) struct Legs<'a> {
    pub plan: &'a Plan<'a>,
    pub view: &'a View<'a>,
    pub semantic: Option<&'a Semantic>,
    pub allowed: &'a AllowedSet,
    /// What the lexical leg reads.
    pub lexical_text: &'a str,
}

/// One leg's run: its output, how long it took, and the vector path it took (semantic only).
struct LegRun {
    output: LegOutput,
    micros: u64,
    path: Option<&'static str>,
}

/// Runs the plan's legs (in parallel when there are several) and records what each did in
/// `stats`.
/// `embedded` is what the semantic leg embeds: the query's text without the simple syntax's
/// operators, its misspellings corrected.
pub(super) fn recall(
    legs: &Legs<'_>,
    embedded: &str,
    weights: LegWeights,
    request: &SearchRequest,
    stats: &mut Stats,
) -> Result<Recalled> {
    let (plan, view, lexical_text) = (legs.plan, legs.view, legs.lexical_text);
    let run = |leg: Leg| run_leg(leg, legs, embedded, request);
    let results: Vec<Result<LegRun>> = match plan.legs.as_slice() {
        [leg] => vec![run(*leg)],
        legs => {
            // The semantic leg runs on one side of the fork and the word legs on the other
            // (in parallel too where a third thread is free). At scale the vector search is
            // the longest leg (an exact scan of a sparse allowed set, or a graph walk) and
            // lexical plus fuzzy cost about as much together; split by position, as a
            // parallel iterator over the three would, the vector search waited for the
            // lexical leg on two cores (1M records, 10 % visible: hybrid 17.6 ms). The calling
            // thread runs the semantic leg and offers the word legs to the pool ([`fork`]).
            let (vectors, words): (Vec<_>, Vec<_>) =
                legs.iter().copied().enumerate().partition(|(_, leg)| *leg == Leg::Semantic);
            let (mut done, words) = fork(
                || vectors.into_iter().map(|(at, leg)| (at, run(leg))).collect::<Vec<_>>(),
                || {
                    // The groups the lexical and fuzzy queries begin with alike, scored once
                    // for both; the time counts in each leg's.
                    let t = Instant::now();
                    let both = [Leg::Lexical, Leg::Fuzzy].iter().all(|l| words.iter().any(|(_, leg)| leg == l));
                    if both && request.syntax != QuerySyntax::Tantivy {
                        view.share_word_prefix(lexical_text, request.query.as_str(), request.syntax);
                    }
                    let shared = micros(t);
                    braid_parallel::map(&words, |&(at, leg)| {
                        (at, run(leg).map(|r| LegRun { micros: r.micros + shared, ..r }))
                    })
                },
            );
            // Back in the plan's order.
            done.extend(words);
            done.sort_by_key(|(at, _)| *at);
            done.into_iter().map(|(_, run)| run).collect()
        }
    };
    let mut recalled =
        Recalled { lists: Vec::with_capacity(plan.legs.len()), highlight: BTreeMap::new(), synonyms: Vec::new() };
    for (leg, result) in plan.legs.iter().copied().zip(results) {
        let LegRun { output, micros, path } = result?;
        if path.is_some() {
            stats.semantic_path = path;
        }
        stats.legs.push(leg);
        stats.candidates.insert(leg, output.candidates.len());
        stats.micros.insert(Stage::of(leg), micros);
        stats.weights.insert(leg, weights.get(leg));
        for u in output.synonyms {
            if !recalled.synonyms.contains(&u) {
                recalled.synonyms.push(u);
            }
        }
        for (term, w) in output.highlight {
            let h = recalled.highlight.entry(term).or_insert(0.0);
            *h = h.max(w);
        }
        recalled.lists.push(LegList::new(leg, weights.get(leg), output.candidates));
    }
    Ok(recalled)
}

fn run_leg(leg: Leg, legs: &Legs<'_>, embedded: &str, request: &SearchRequest) -> Result<LegRun> {
    let Legs { plan, view, semantic, allowed, lexical_text } = *legs;
    request.check_deadline()?;
    let t = Instant::now();
    let query = request.query.as_str();
    let mut path = None;
    let output = match leg {
        Leg::Lexical => {
            let _span = info_span!(target: "braid::recall::lexical", "lexical").entered();
            if request.feedback && plan.corrects_lexical() {
                // Fused with the other legs, BM25 reads the terms its top documents agree on too.
                view.lexical_with_feedback(lexical_text, plan.depth, request.syntax, Feedback::DEFAULT)?
            } else {
                view.lexical(lexical_text, plan.depth, request.syntax)?
            }
        }
        Leg::Fuzzy => {
            let _span = info_span!(target: "braid::recall::fuzzy", "fuzzy").entered();
            view.fuzzy_with(query, plan.depth, request.syntax)?
        }
        Leg::Semantic => {
            let _span = info_span!(target: "braid::recall::semantic", "semantic").entered();
            let (candidates, took) = semantic_leg(semantic, plan, embedded, allowed, request)?;
            path = Some(took);
            // The simple syntax's exclusions and phrases hold for the semantic leg too.
            let candidates = view.keep_matching(query, request.syntax, candidates)?;
            LegOutput { candidates, highlight: BTreeMap::new(), synonyms: Vec::new() }
        }
    };
    Ok(LegRun { output, micros: micros(t), path })
}

/// The semantic leg's candidates before the simple syntax's constraints (which
/// [`View::keep_matching`] applies), and the vector path it took.
pub(super) fn semantic_leg(
    semantic: Option<&Semantic>,
    plan: &Plan<'_>,
    embedded: &str,
    allowed: &AllowedSet,
    request: &SearchRequest,
) -> Result<(Vec<(braid_core::Ordinal, f32)>, &'static str)> {
    let semantic = semantic.ok_or(Error::LegUnavailable {
        leg: "semantic",
        reason: "no embedding model is attached to this index".into(),
    })?;
    let (candidates, took) = semantic.search(embedded, plan.supplied, plan.depth, allowed, request)?;
    Ok((candidates, took.name()))
}
