//! The facets stage: counts over every record the request matched that its caller may see.
//!
//! "Matched" is the union of what the legs that ran match, within the allowed set: every
//! record the lexical or fuzzy leg scores above zero (at any depth, not only its top k), and
//! the semantic leg's candidates (its top `max(depth, k)`: similarity ranks every record and
//! matches none, so its candidates are what it found, as Elasticsearch's kNN search counts
//! its `k` nearest). A semantic-only request counts those candidates. Facets ignore `k`,
//! the offset, the score threshold and collapsing: they describe the match set, not the page.

use braid_core::{Error, Facets, Leg, Ordinal, Result, SearchRequest, MAX_FACETS};
use braid_fusion::LegList;
use braid_lexical::View;

/// Checks the request's facets before anything runs.
///
/// # Errors
/// [`Error::InvalidRequest`] for more than [`MAX_FACETS`] facets or one beyond its limits.
pub(crate) fn check(request: &SearchRequest) -> Result<()> {
    let facets = &request.facets;
    if facets.len() > MAX_FACETS {
        return Err(Error::invalid_request(format!("{} facets, at most {MAX_FACETS} are accepted", facets.len())));
    }
    facets.iter().try_for_each(|f| f.validate())
}

/// Counts the request's facets over what the legs matched (`view` collected the lexical and
/// fuzzy legs' matches; `lists` hold the semantic leg's candidates).
pub(crate) fn count(view: &View<'_>, request: &SearchRequest, lists: &[LegList]) -> Result<Facets> {
    let semantic: Vec<Ordinal> = lists
        .iter()
        .filter(|list| list.leg == Leg::Semantic)
        .flat_map(|list| list.candidates.iter().map(|c| c.0))
        .collect();
    view.facets(&request.facets, &semantic)
}
