//! `braid.SearchResponse` and `braid.Hit`: what a search returns.

use std::collections::BTreeMap;

use pyo3::prelude::*;
use pyo3::types::PyList;
use pythonize::pythonize;

/// One ranked record.
///
/// ``score`` is the fused score on a ``[0, 1]`` scale (above 1 only with boosts that
/// rescore); ``snippet`` is a passage of the body around the query's words, with
/// ``highlights`` as byte ranges of its UTF-8 text. ``explain`` says how the score came about
/// (each leg's rank, raw score and contribution) when the search asked for it.
#[pyclass(name = "Hit", module = "braid", frozen, get_all)]
pub(crate) struct PyHit {
    /// The record's external id.
    id: String,
    /// The fused (or boosted) score.
    score: f32,
    /// The record's title.
    title: String,
    /// A passage of the body around the query's words.
    snippet: String,
    /// Byte ranges of ``snippet`` (UTF-8) that match query terms.
    highlights: Vec<(usize, usize)>,
    /// The parent record, for chunks.
    parent: Option<String>,
    /// The heading path, for chunks.
    section: Vec<String>,
    /// The 1-based inclusive line range, for chunks.
    lines: Option<(u32, u32)>,
    /// Keyword fields.
    keywords: BTreeMap<String, Vec<String>>,
    /// Numeric and date fields (dates as Unix seconds).
    numbers: BTreeMap<String, f64>,
    /// How the score came about (a dict), when the search asked for it.
    explain: Option<Py<PyAny>>,
}

#[pymethods]
impl PyHit {
    /// The snippet with each highlight wrapped in ``open`` … ``close``.
    #[pyo3(signature = (open = "**", close = "**"))]
    fn marked(&self, open: &str, close: &str) -> String {
        braid::Snippet { text: self.snippet.clone(), highlights: self.highlights.clone() }.marked(open, close)
    }

    fn __repr__(&self) -> String {
        format!("Hit(id={:?}, score={:.4}, title={:?})", self.id, self.score, self.title)
    }
}

/// The answer to one search: ranked ``hits``, "did you mean" ``suggestions``, ``stats``
/// (timings and counts, beside the answer), ``next_cursor`` (the next page's cursor, when
/// there is one) and ``facets`` (counts per value or range, when asked for).
///
/// Iterating over a response, indexing it and ``len()`` go over its hits.
#[pyclass(name = "SearchResponse", module = "braid", frozen, get_all)]
pub(crate) struct PySearchResponse {
    /// Ranked hits, best first.
    hits: Py<PyList>,
    /// "Did you mean" suggestions: dicts with ``term``, ``suggestion`` and ``distance``.
    suggestions: Py<PyAny>,
    /// Timings and counts (a dict: ``mode``, ``legs``, ``candidates``, ``micros``, ``allowed``…).
    stats: Py<PyAny>,
    /// Where the next page starts (pass it as ``cursor=``), when this page is full and the
    /// ranking holds a further one.
    next_cursor: Option<String>,
    /// Counts per value and range over every matched record the caller may see (a dict), when
    /// the search asked for facets.
    facets: Option<Py<PyAny>>,
}

#[pymethods]
impl PySearchResponse {
    fn __len__(&self, py: Python<'_>) -> usize {
        self.hits.bind(py).len()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.hits.bind(py).as_any().try_iter().map(Bound::into_any)
    }

    fn __getitem__<'py>(&self, py: Python<'py>, index: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        self.hits.bind(py).as_any().get_item(index)
    }

    /// The hits' ids, in rank order.
    #[getter]
    fn ids(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.hits.bind(py).iter().map(|hit| Ok(hit.cast::<PyHit>()?.get().id.clone())).collect()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!("SearchResponse({} hits)", self.hits.bind(py).len())
    }
}

/// The response as Python objects; `explain` keeps each hit's explanation.
pub(crate) fn convert(py: Python<'_>, response: braid::SearchResponse, explain: bool) -> PyResult<PySearchResponse> {
    let hits = PyList::empty(py);
    for hit in response.hits {
        let explain = if explain { Some(pythonize(py, &hit.explain)?.unbind()) } else { None };
        let hit = PyHit {
            id: hit.id,
            score: hit.score,
            title: hit.title,
            snippet: hit.snippet.text,
            highlights: hit.snippet.highlights,
            parent: hit.parent,
            section: hit.section,
            lines: hit.lines,
            keywords: hit.keywords,
            numbers: hit.numbers,
            explain,
        };
        hits.append(Bound::new(py, hit)?)?;
    }
    Ok(PySearchResponse {
        hits: hits.unbind(),
        suggestions: pythonize(py, &response.suggestions)?.unbind(),
        stats: pythonize(py, &response.stats)?.unbind(),
        next_cursor: response.next_cursor,
        facets: response.facets.map(|f| pythonize(py, &f).map(Bound::unbind)).transpose()?,
    })
}
