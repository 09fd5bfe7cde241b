//! A search fanned out over several indexes from Python (`braid::fanout`): a [`PyRequest`]
//! made once, each index's [`PySession`] of it answering the asks, and a [`PyFanOut`]
//! coordinating them. Asks and replies are JSON strings, for the caller to carry
//! between processes or machines (the Ray router of `braid/ray.py` does).

use std::sync::Mutex;

use braid::fanout::{Ask, FanOut, Reply, Session, Step};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{invalid, OrRaise};
use crate::principal::PyPrincipal;
use crate::request::{self, SearchArgs};
use crate::response;

/// A search request, made with the same arguments as :meth:`Index.search`, for
/// :meth:`Index.part` and :class:`FanOut`.
#[pyclass(name = "Request", module = "braid", frozen)]
pub(crate) struct PyRequest {
    pub request: braid::SearchRequest,
    pub explain: bool,
}

#[pymethods]
impl PyRequest {
    #[new]
    #[pyo3(signature = (query = String::new(), *, principal, mode = None, k = 10, filter = None, facets = None,
        offset = 0, cursor = None, boosts = None, explain = false, vector = None, depth = None, fusion = None,
        weights = None, syntax = None, min_score = None, collapse = false, ids_only = false, snippet_chars = None,
        suggest = true, feedback = true, rerank = None, timeout = None, group_by = None, mmr = None,
        token_budget = None))]
    #[allow(clippy::too_many_arguments)]
    fn new<'py>(
        query: String,
        principal: &Bound<'py, PyPrincipal>,
        mode: Option<String>,
        k: usize,
        filter: Option<Bound<'py, PyAny>>,
        facets: Option<Bound<'py, PyAny>>,
        offset: usize,
        cursor: Option<String>,
        boosts: Option<Bound<'py, PyAny>>,
        explain: bool,
        vector: Option<Bound<'py, PyAny>>,
        depth: Option<usize>,
        fusion: Option<String>,
        weights: Option<Bound<'py, PyDict>>,
        syntax: Option<String>,
        min_score: Option<f32>,
        collapse: bool,
        ids_only: bool,
        snippet_chars: Option<usize>,
        suggest: bool,
        feedback: bool,
        rerank: Option<usize>,
        timeout: Option<f64>,
        group_by: Option<(String, usize)>,
        mmr: Option<f32>,
        token_budget: Option<usize>,
    ) -> PyResult<Self> {
        let args = SearchArgs {
            mode,
            k,
            filter,
            facets,
            offset,
            cursor,
            boosts,
            vector,
            depth,
            fusion,
            weights,
            syntax,
            min_score,
            collapse,
            ids_only,
            snippet_chars,
            suggest,
            feedback,
            rerank,
            timeout,
            group_by,
            mmr,
            token_budget,
        };
        Ok(PyRequest { request: request::build(query, principal.get().inner.clone(), args)?, explain })
    }

    fn __repr__(&self) -> String {
        format!("Request({:?})", self.request.query.as_str())
    }
}

impl PyRequest {
    /// The request `Request(query, principal=principal, **options)` makes: one signature for
    /// every method that takes a search's arguments (an unknown one is a `TypeError`).
    pub(crate) fn made<'py>(
        py: Python<'py>,
        query: String,
        principal: &Bound<'py, PyPrincipal>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyRequest>> {
        let kwargs = match options {
            Some(options) => options.copy()?,
            None => PyDict::new(py),
        };
        kwargs.set_item("principal", principal)?;
        Ok(py.get_type::<PyRequest>().call((query,), Some(&kwargs))?.cast_into::<PyRequest>()?)
    }
}

/// One search over several indexes that answers as one index holding all their records
/// would: the same hits, order and scores. ``start()`` gives the first asks, one JSON string
/// per index; send each to its index's :class:`Session` of the same :class:`Request`
/// (:meth:`Index.session`) and hand the replies back, in the same order, to ``next()``, which
/// gives the next asks or the :class:`SearchResponse`. Facets, boosts that rescore, collapsing, grouping, MMR, token
/// budgets and reranking are refused (``InvalidRequestError``).
#[pyclass(name = "FanOut", module = "braid")]
pub(crate) struct PyFanOut {
    fan_out: Mutex<FanOut>,
    explain: bool,
}

#[pymethods]
impl PyFanOut {
    #[new]
    fn new(request: &Bound<'_, PyRequest>, parts: usize) -> PyResult<Self> {
        let request = request.get();
        let fan_out = FanOut::new(request.request.clone(), parts).or_raise()?;
        Ok(PyFanOut { fan_out: Mutex::new(fan_out), explain: request.explain })
    }

    /// The first asks, one per index.
    fn start(&self) -> PyResult<Vec<String>> {
        let asks = self.fan_out.lock().unwrap_or_else(|p| p.into_inner()).start();
        asks.iter().map(to_json).collect()
    }

    /// Takes the indexes' replies to the last asks (in index order): the next asks (a list of
    /// JSON strings) or the response.
    fn next<'py>(&self, py: Python<'py>, replies: Vec<String>) -> PyResult<Bound<'py, PyAny>> {
        let replies: Vec<Reply> = replies.iter().map(|r| from_json(r, "reply")).collect::<PyResult<_>>()?;
        let step = py.detach(|| self.fan_out.lock().unwrap_or_else(|p| p.into_inner()).next(replies)).or_raise()?;
        match step {
            Step::Ask(asks) => {
                let asks: Vec<String> = asks.iter().map(to_json).collect::<PyResult<_>>()?;
                Ok(asks.into_pyobject(py)?.into_any())
            }
            Step::Done(found) => Ok(Bound::new(py, response::convert(py, *found, self.explain)?)?.into_any()),
        }
    }

    /// The last asks' ask of index ``at`` again, in full (built on nothing it was sent
    /// before), for an index that lost its :class:`Session`; ``None`` before the first asks
    /// or for an index out of range.
    fn resend(&self, at: usize) -> PyResult<Option<String>> {
        let ask = self.fan_out.lock().unwrap_or_else(|p| p.into_inner()).resend(at);
        ask.as_ref().map(to_json).transpose()
    }
}

/// One index's share of one search fanned out over several, from the fan-out's first ask to
/// its last (:meth:`Index.session`): it answers on the commit the index served when it was
/// opened, whatever commits and reloads happen meanwhile, and keeps between rounds what new
/// counts do not change; each search ask after the first carries only what is new. Keep one
/// per request in flight and drop it after the request's last round.
#[pyclass(name = "Session", module = "braid", frozen)]
pub(crate) struct PySession {
    session: Mutex<Session>,
}

#[pymethods]
impl PySession {
    /// Answers one ask (the JSON string the fan-out gave for this index); returns the reply
    /// as a JSON string. Raises ``InvalidRequestError`` for a search ask that builds on more
    /// than this session was sent (see :meth:`holds`). The GIL is released while it runs.
    fn part(&self, py: Python<'_>, ask: &str) -> PyResult<String> {
        let ask: Ask = from_json(ask, "ask")?;
        let reply = py.detach(|| self.session.lock().unwrap_or_else(|p| p.into_inner()).answer(&ask)).or_raise()?;
        to_json(&reply)
    }

    /// Whether this session holds what ``ask`` builds on. One that does not (opened anew
    /// after its process restarted) is sent the ask again in full: :meth:`FanOut.resend`.
    fn holds(&self, ask: &str) -> PyResult<bool> {
        let ask: Ask = from_json(ask, "ask")?;
        Ok(self.session.lock().unwrap_or_else(|p| p.into_inner()).holds(&ask))
    }
}

/// `index`'s session of `request` (see [`crate::index::PyIndex`]'s `session`).
pub(crate) fn session(py: Python<'_>, index: &braid::Index, request: &PyRequest) -> PyResult<PySession> {
    let session = py.detach(|| index.searcher().session(&request.request)).or_raise()?;
    Ok(PySession { session: Mutex::new(session) })
}

fn to_json(value: &impl serde::Serialize) -> PyResult<String> {
    serde_json::to_string(value).map_err(|e| invalid(format!("cannot write JSON: {e}")))
}

fn from_json<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> PyResult<T> {
    serde_json::from_str(text).map_err(|e| invalid(format!("not a fan-out {what}: {e}")))
}
