//! A search's keyword arguments as a `braid::SearchRequest`.
//!
//! Filters, facets and boosts are given as dicts of the same shape as the REST API's JSON
//! (`{"keyword": {"field": "category", "value": "billing"}}`), read with serde through
//! pythonize, so every shape the crate accepts is accepted here and nothing else.

use std::time::{Duration, Instant};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use pythonize::depythonize;

use crate::errors::invalid;
use crate::vectors;

/// The search's arguments besides the query and the principal.
pub(crate) struct SearchArgs<'py> {
    pub mode: Option<String>,
    pub k: usize,
    pub filter: Option<Bound<'py, PyAny>>,
    pub facets: Option<Bound<'py, PyAny>>,
    pub offset: usize,
    pub cursor: Option<String>,
    pub boosts: Option<Bound<'py, PyAny>>,
    pub vector: Option<Bound<'py, PyAny>>,
    pub depth: Option<usize>,
    pub fusion: Option<String>,
    pub weights: Option<Bound<'py, PyDict>>,
    pub syntax: Option<String>,
    pub min_score: Option<f32>,
    pub collapse: bool,
    pub ids_only: bool,
    pub snippet_chars: Option<usize>,
    pub suggest: bool,
    pub feedback: bool,
    pub rerank: Option<usize>,
    pub timeout: Option<f64>,
    pub group_by: Option<(String, usize)>,
    pub mmr: Option<f32>,
    pub token_budget: Option<usize>,
}

/// `what` read from a dict (or list) in the shape of its JSON.
fn from_json_shape<T: serde::de::DeserializeOwned>(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<T> {
    depythonize(obj).map_err(|e| invalid(format!("bad {what}: {e}")))
}

/// The request `query` on behalf of `principal`, with `args`.
pub(crate) fn build(
    query: String,
    principal: braid::Principal,
    args: SearchArgs<'_>,
) -> PyResult<braid::SearchRequest> {
    let mut request = braid::SearchRequest::new(query, principal)
        .k(args.k)
        .offset(args.offset)
        .collapse(args.collapse)
        .ids_only(args.ids_only)
        .suggest(args.suggest)
        .feedback(args.feedback);
    if let Some((field, per_group)) = args.group_by {
        request = request.group_by(field, per_group);
    }
    if let Some(lambda) = args.mmr {
        request = request.mmr(lambda);
    }
    if let Some(tokens) = args.token_budget {
        request = request.token_budget(tokens);
    }
    if let Some(mode) = args.mode {
        request = request.mode(mode.parse::<braid::Mode>().map_err(|e| invalid(e.to_string()))?);
    }
    if let Some(fusion) = args.fusion {
        request = request.fusion(fusion.parse::<braid::Fusion>().map_err(|e| invalid(e.to_string()))?);
    }
    if let Some(syntax) = args.syntax {
        let parsed = braid::QuerySyntax::parse(&syntax)
            .ok_or_else(|| invalid(format!("unknown syntax {syntax:?} (expected plain, simple or tantivy)")))?;
        request = request.syntax(parsed);
    }
    if let Some(filter) = args.filter.filter(|f| !f.is_none()) {
        request = request.filter(from_json_shape::<braid::Filter>(&filter, "filter")?);
    }
    if let Some(facets) = args.facets.filter(|f| !f.is_none()) {
        for facet in facets.try_iter()? {
            let facet = facet?;
            // A field name alone asks for its most frequent values.
            let facet = match facet.cast::<PyString>() {
                Ok(field) => braid::Facet::values(field.extract::<String>()?),
                Err(_) => from_json_shape::<braid::Facet>(&facet, "facet")?,
            };
            request = request.facet(facet);
        }
    }
    if let Some(cursor) = args.cursor {
        request = request.cursor(cursor);
    }
    if let Some(boosts) = args.boosts.filter(|b| !b.is_none()) {
        request = request.boosts(from_json_shape::<braid::Boosts>(&boosts, "boosts")?);
    }
    if let Some(vector) = args.vector.filter(|v| !v.is_none()) {
        request = request.vector(vectors::vector(&vector)?);
    }
    if let Some(depth) = args.depth {
        request = request.depth(depth);
    }
    if let Some(weights) = args.weights {
        let mut legs = braid::LegWeights::default();
        for (leg, weight) in weights.iter() {
            let weight: f32 = weight.extract()?;
            match leg.extract::<String>()?.as_str() {
                "lexical" => legs.lexical = weight,
                "fuzzy" => legs.fuzzy = weight,
                "semantic" => legs.semantic = weight,
                other => return Err(invalid(format!("unknown leg {other:?} (expected lexical, fuzzy or semantic)"))),
            }
        }
        request = request.weights(legs);
    }
    if let Some(min_score) = args.min_score {
        request = request.min_score(min_score);
    }
    if let Some(chars) = args.snippet_chars {
        request = request.snippet_chars(chars);
    }
    if let Some(candidates) = args.rerank {
        request = request.rerank(candidates);
    }
    if let Some(seconds) = args.timeout {
        let budget = Duration::try_from_secs_f64(seconds)
            .map_err(|_| invalid(format!("timeout must be a number of seconds >= 0, got {seconds}")))?;
        // A budget too large for the clock is no deadline.
        if let Some(at) = Instant::now().checked_add(budget) {
            request = request.deadline(at);
        }
    }
    Ok(request)
}
