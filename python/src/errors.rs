//! Braid's errors as Python exceptions.
//!
//! The exception classes live in `braid/errors.py` (so that they can also derive from the
//! built-in class each kind resembles: `ValueError`, `OSError`, `TimeoutError`); this module
//! maps each [`braid::Error`] kind to its class, by name, and fills in the fields the kind
//! carries as attributes of the exception.

use pyo3::exceptions::{PyOSError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The Python class of each error kind, and the kind's name (`kind` on the exception).
fn class_of(err: &braid::Error) -> (&'static str, &'static str) {
    use braid::Error as E;
    match err {
        E::InvalidRequest { .. } => ("InvalidRequestError", "invalid_request"),
        E::QueryTooLong { .. } => ("QueryTooLongError", "query_too_long"),
        E::UnknownField { .. } => ("UnknownFieldError", "unknown_field"),
        E::InvalidRecord { .. } => ("InvalidRecordError", "invalid_record"),
        E::DimensionMismatch { .. } => ("DimensionMismatchError", "dimension_mismatch"),
        E::LegUnavailable { .. } => ("LegUnavailableError", "leg_unavailable"),
        E::Model { .. } | E::ModelFailed { .. } => ("ModelError", "model"),
        E::LockBusy { .. } => ("LockBusyError", "lock_busy"),
        E::Corrupt { .. } | E::Unparsable { .. } => ("CorruptError", "corrupt"),
        E::FormatVersion { .. } => ("FormatVersionError", "format_version"),
        E::Io { .. } => ("BraidIOError", "io"),
        E::ReservedToken { .. } => ("ReservedTokenError", "reserved_token"),
        E::Synonyms { .. } => ("SynonymsError", "synonyms"),
        E::DeadlineExceeded => ("DeadlineExceededError", "deadline_exceeded"),
        E::PageOutOfRange { .. } => ("PageOutOfRangeError", "page_out_of_range"),
        E::InvalidCursor { .. } => ("InvalidCursorError", "invalid_cursor"),
        E::StaleCursor => ("StaleCursorError", "stale_cursor"),
        E::Lexical(_) | E::LexicalEngine { .. } => ("LexicalError", "lexical"),
        E::Vector(_) | E::VectorEngine { .. } => ("VectorError", "vector"),
        // `braid::Error` is non-exhaustive: a kind added later is still a BraidError.
        _ => ("BraidError", "other"),
    }
}

/// The fields a kind carries, as `(attribute, value)` pairs set on the exception.
fn fields<'py>(py: Python<'py>, err: &braid::Error) -> PyResult<Bound<'py, PyDict>> {
    use braid::Error as E;
    let d = PyDict::new(py);
    match err {
        E::InvalidRequest { reason } | E::InvalidRecord { reason } | E::InvalidCursor { reason } => {
            d.set_item("reason", reason)?;
        }
        E::Model { reason } | E::ModelFailed { reason, .. } => d.set_item("reason", reason)?,
        E::QueryTooLong { max, got } => {
            d.set_item("max", max)?;
            d.set_item("got", got)?;
        }
        E::UnknownField { name } => d.set_item("field", name)?,
        E::DimensionMismatch { expected, got } => {
            d.set_item("expected", expected)?;
            d.set_item("got", got)?;
        }
        E::LegUnavailable { leg, reason } => {
            d.set_item("leg", leg)?;
            d.set_item("reason", reason)?;
        }
        E::LockBusy { path } => d.set_item("path", path)?,
        E::Corrupt { path, reason } => {
            d.set_item("path", path)?;
            d.set_item("reason", reason)?;
        }
        E::Unparsable { path, source } => {
            d.set_item("path", path)?;
            d.set_item("reason", source.to_string())?;
        }
        E::FormatVersion { path, found, expected } => {
            d.set_item("path", path)?;
            d.set_item("found", found)?;
            d.set_item("expected", expected)?;
        }
        E::Io { path, .. } => d.set_item("path", path)?,
        E::ReservedToken { token } => d.set_item("token", token)?,
        E::Synonyms { line, reason } => {
            d.set_item("line", line)?;
            d.set_item("reason", reason)?;
        }
        E::PageOutOfRange { end, window, max } => {
            d.set_item("end", end)?;
            d.set_item("window", window)?;
            d.set_item("max", max)?;
        }
        _ => {}
    }
    Ok(d)
}

/// The exception for `err`: an instance of its class in `braid.errors`, with `kind`,
/// `is_user_error` and the kind's fields as attributes, and for an I/O error the operating
/// system's error as its `__cause__`.
pub(crate) fn to_py_err(err: braid::Error) -> PyErr {
    Python::attach(|py| build(py, &err).unwrap_or_else(|lookup| lookup))
}

fn build(py: Python<'_>, err: &braid::Error) -> Result<PyErr, PyErr> {
    let (class, kind) = class_of(err);
    let message = err.to_string();
    let module = py.import("braid.errors").map_err(|e| chained(py, PyRuntimeError::new_err(message.clone()), e))?;
    let instance = module.getattr(class)?.call1((message,))?;
    instance.setattr("kind", kind)?;
    instance.setattr("is_user_error", err.is_user_error())?;
    for (name, value) in fields(py, err)?.iter() {
        instance.setattr(name.cast::<pyo3::types::PyString>()?, value)?;
    }
    if let braid::Error::Io { source, .. } = err {
        let cause = match source.raw_os_error() {
            Some(errno) => PyOSError::new_err((errno, source.to_string())),
            None => PyOSError::new_err(source.to_string()),
        };
        instance.setattr("__cause__", cause.value(py))?;
    }
    Ok(PyErr::from_value(instance))
}

/// `outer` with `cause` as its `__cause__`.
fn chained(py: Python<'_>, outer: PyErr, cause: PyErr) -> PyErr {
    outer.set_cause(py, Some(cause));
    outer
}

/// `?` for Braid's results in functions that return `PyResult`.
pub(crate) trait OrRaise<T> {
    /// The value, or Braid's error as its Python exception.
    fn or_raise(self) -> PyResult<T>;
}

impl<T> OrRaise<T> for braid::Result<T> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(to_py_err)
    }
}

/// An invalid argument, raised as `braid.InvalidRequestError` (a `ValueError`).
pub(crate) fn invalid(reason: impl Into<String>) -> PyErr {
    to_py_err(braid::Error::invalid_request(reason))
}
