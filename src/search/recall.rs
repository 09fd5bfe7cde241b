//! Stage 5, recall: the legs run in parallel, each confined to the allowed set.

use std::collections::BTreeMap;
use std::time::Instant;

use braid_core::{AllowedSet, Error, Leg, LegWeights, Result, SearchRequest, Stage, Stats};
use braid_fusion::LegList;
use braid_lexical::{LegOutput, View};
use rayon::prelude::*;
use tracing::info_span;

use super::micros;
use super::plan::Plan;
use crate::semantic::Semantic;

/// What the legs found: one ranked list per leg, and the query terms to highlight.
pub(super) struct Recalled {
    pub lists: Vec<LegList>,
    /// Analysed query terms with the weight to highlight them by (the highest any leg gave).
    pub highlight: BTreeMap<String, f32>,
}

/// One leg's run: its output, how long it took, and the vector path it took (semantic only).
struct LegRun {
    output: LegOutput,
    micros: u64,
    path: Option<&'static str>,
}

/// Runs the plan's legs (in parallel when there are several) and records what each did in
/// `stats`.
pub(super) fn recall(
    plan: &Plan<'_>,
    view: &View<'_>,
    semantic: Option<&Semantic>,
    allowed: &AllowedSet,
    weights: LegWeights,
    request: &SearchRequest,
    stats: &mut Stats,
) -> Result<Recalled> {
    let run = |leg: Leg| run_leg(leg, plan, view, semantic, allowed, request);
    let results: Vec<Result<LegRun>> = match plan.legs.as_slice() {
        [leg] => vec![run(*leg)],
        legs => legs.par_iter().map(|&leg| run(leg)).collect(),
    };
    let mut recalled = Recalled { lists: Vec::with_capacity(plan.legs.len()), highlight: BTreeMap::new() };
    for (leg, result) in plan.legs.iter().copied().zip(results) {
        let LegRun { output, micros, path } = result?;
        if path.is_some() {
            stats.semantic_path = path;
        }
        stats.legs.push(leg);
        stats.candidates.insert(leg, output.candidates.len());
        stats.micros.insert(Stage::of(leg).name(), micros);
        stats.weights.insert(leg, weights.get(leg));
        for (term, w) in output.highlight {
            let h = recalled.highlight.entry(term).or_insert(0.0);
            *h = h.max(w);
        }
        recalled.lists.push(LegList::new(leg, weights.get(leg), output.candidates));
    }
    Ok(recalled)
}

fn run_leg(
    leg: Leg,
    plan: &Plan<'_>,
    view: &View<'_>,
    semantic: Option<&Semantic>,
    allowed: &AllowedSet,
    request: &SearchRequest,
) -> Result<LegRun> {
    request.check_deadline()?;
    let t = Instant::now();
    let query = request.query.as_str();
    let mut path = None;
    let output = match leg {
        Leg::Lexical => {
            let _span = info_span!(target: "braid::recall::lexical", "lexical").entered();
            view.lexical(query, plan.depth, request.syntax)?
        }
        Leg::Fuzzy => {
            let _span = info_span!(target: "braid::recall::fuzzy", "fuzzy").entered();
            view.fuzzy(query, plan.depth)?
        }
        Leg::Semantic => {
            let _span = info_span!(target: "braid::recall::semantic", "semantic").entered();
            let semantic = semantic.ok_or(Error::LegUnavailable {
                leg: "semantic",
                reason: "no embedding model is attached to this index".into(),
            })?;
            let (candidates, took) = semantic.search(query, plan.supplied, plan.depth, allowed, request)?;
            path = Some(took.name());
            LegOutput { candidates, highlight: BTreeMap::new() }
        }
    };
    Ok(LegRun { output, micros: micros(t), path })
}
