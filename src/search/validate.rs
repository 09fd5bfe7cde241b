//! Stage 1, validate: the request's bounds, before any work.

use braid_core::{Error, Result, SearchRequest, MAX_DEPTH, MAX_K, MAX_QUERY_BYTES};

use crate::facets;
use crate::paging::Page;

/// Checks the request's sizes against the library's limits, and its page, facets and boosts;
/// returns the page it asks for.
pub(crate) fn validate(request: &SearchRequest) -> Result<Page> {
    let query = request.query.as_str();
    if query.len() > MAX_QUERY_BYTES {
        return Err(Error::QueryTooLong { max: MAX_QUERY_BYTES, got: query.len() });
    }
    if request.k > MAX_K {
        return Err(Error::invalid_request(format!("k = {} is above the maximum of {MAX_K}", request.k)));
    }
    if request.depth > MAX_DEPTH {
        return Err(Error::invalid_request(format!("depth = {} is above the maximum of {MAX_DEPTH}", request.depth)));
    }
    let w = request.weights;
    if [w.lexical, w.fuzzy, w.semantic].iter().any(|x| !x.is_finite() || *x < 0.0) {
        return Err(Error::invalid_request(format!(
            "leg weights must be finite and not negative (lexical {}, fuzzy {}, semantic {})",
            w.lexical, w.fuzzy, w.semantic
        )));
    }
    let page = Page::of(request)?;
    facets::check(request)?;
    request.boosts.validate()?;
    // Cooperative cancellation: the deadline is checked between stages and before each leg.
    request.check_deadline()?;
    Ok(page)
}
