//! The facets stage: counts over every record the request matched that its caller may see.
//!
//! "Matched" is the union of what the legs that ran match, within the allowed set: every
//! record the lexical or fuzzy leg scores above zero (at any depth, not only its top k), and
//! the semantic leg's candidates (its top `max(depth, k)`: similarity ranks every record and
//! matches none, so its candidates are what it found, as Elasticsearch's kNN search counts
//! its `k` nearest). A semantic-only request counts those candidates. Facets ignore `k`,
//! the offset, the score threshold and collapsing: they describe the match set, not the page.

use braid_core::{Error, Facets, Leg, Ord, Result, SearchRequest, MAX_FACETS};
use braid_lexical::{LegOutput, View};

/// Checks the request's facets before anything runs.
///
/// # Errors
/// [`Error::InvalidRequest`] for more than [`MAX_FACETS`] facets or one beyond its limits.
pub(crate) fn check(request: &SearchRequest) -> Result<()> {
    let facets = request.facets_ref();
    if facets.len() > MAX_FACETS {
        return Err(Error::invalid_request(format!("{} facets, at most {MAX_FACETS} are accepted", facets.len())));
    }
    facets.iter().try_for_each(|f| f.validate())
}

/// Counts the request's facets over what the legs matched (`view` collected the lexical and
/// fuzzy legs' matches; `outputs` hold the semantic leg's candidates).
pub(crate) fn count<'a>(
    view: &View<'_>,
    request: &SearchRequest,
    outputs: impl Iterator<Item = (Leg, &'a LegOutput)>,
) -> Result<Facets> {
    let semantic: Vec<Ord> = outputs
        .filter(|(leg, _)| *leg == Leg::Semantic)
        .flat_map(|(_, out)| out.candidates.iter().map(|c| c.0))
        .collect();
    view.facets(request.facets_ref(), &semantic)
}
