//! `braid._braid`: the extension module behind the `braid` Python package.
//!
//! Thin bindings over the `braid` crate's public API: [`index`] (`Index`, `Writer`),
//! [`principal`], [`record`], [`request`] (a search's keyword arguments), [`fanout`] (a search
//! over several indexes: `Request`, `FanOut`), [`response`]
//! (`SearchResponse`, `Hit`), [`vectors`] (numpy) and [`errors`] (Braid's error kinds as the
//! exception classes of `braid/errors.py`). The pure-Python part of the package
//! (`pysrc/braid`) re-exports these and adds the LangChain and LlamaIndex retrievers.

use pyo3::prelude::*;

mod errors;
mod fanout;
mod index;
mod principal;
mod record;
mod request;
mod response;
mod vectors;

/// Braid: hybrid retrieval (BM25, fuzzy and semantic recall braided into one ranking),
/// permissions first.
#[pymodule]
fn _braid(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<index::PyIndex>()?;
    m.add_class::<index::PyWriter>()?;
    m.add_class::<principal::PyPrincipal>()?;
    m.add_class::<record::PyRecord>()?;
    m.add_class::<response::PySearchResponse>()?;
    m.add_class::<response::PyHit>()?;
    m.add_class::<fanout::PyRequest>()?;
    m.add_class::<fanout::PyFanOut>()?;
    m.add_class::<fanout::PySession>()?;
    m.add("MAX_K", braid::MAX_K)?;
    m.add("MAX_QUERY_BYTES", braid::MAX_QUERY_BYTES)?;
    m.add("MAX_DEPTH", braid::MAX_DEPTH)?;
    Ok(())
}
