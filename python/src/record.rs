//! `braid.Record`, and records given as dicts.

use std::collections::BTreeMap;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::errors::{invalid, OrRaise};
use crate::vectors;

/// A record: a stable id, title and body, keyword, numeric and date fields, ACL tokens and,
/// for chunks, the parent record with the section's heading path and line range.
///
/// ``keywords`` maps a declared keyword field to a value or a list of values; ``numbers`` a
/// declared numeric field to a number; ``dates`` a declared numeric field to ``YYYY-MM-DD``
/// or RFC 3339 text (stored as Unix seconds). ``acl`` lists the tokens a principal needs one
/// of to see the record (``public``, ``tenant:acme``, ``group:support``, …). ``vector`` is
/// the record's own vector (a 1-D numpy array or sequence of numbers), for an index without a
/// model or to bypass it.
///
/// >>> braid.Record("returns", "Return policy", "Send an item back within 30 days.",
/// ...              keywords={"category": "billing"}, acl=["public"])
/// Record('returns')
#[pyclass(name = "Record", module = "braid", frozen)]
#[derive(Clone)]
pub(crate) struct PyRecord {
    pub(crate) inner: braid::Record,
}

#[pymethods]
impl PyRecord {
    #[new]
    #[pyo3(signature = (id, title = String::new(), body = String::new(), *, keywords = None, numbers = None,
        dates = None, acl = None, parent = None, section = None, lines = None, vector = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        id: String,
        title: String,
        body: String,
        keywords: Option<&Bound<'_, PyDict>>,
        numbers: Option<BTreeMap<String, f64>>,
        dates: Option<BTreeMap<String, String>>,
        acl: Option<Vec<String>>,
        parent: Option<String>,
        section: Option<Vec<String>>,
        lines: Option<(u32, u32)>,
        vector: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut record = braid::Record::new(id).title(title).body(body);
        if let Some(keywords) = keywords {
            for (field, values) in keywords.iter() {
                let field: String = field.extract()?;
                for value in keyword_values(&values)? {
                    record = record.keyword(field.clone(), value);
                }
            }
        }
        for (field, value) in numbers.unwrap_or_default() {
            record = record.number(field, value);
        }
        for (field, text) in dates.unwrap_or_default() {
            record = record.date(field, &text).or_raise()?;
        }
        if let Some(acl) = acl {
            record = record.acl(acl);
        }
        if let Some(parent) = parent {
            record = record.parent(parent);
        }
        if let Some(section) = section {
            record = record.section(section);
        }
        if let Some((start, end)) = lines {
            record = record.lines(start, end);
        }
        if let Some(vector) = vector.filter(|v| !v.is_none()) {
            record = record.vector(vectors::vector(vector)?);
        }
        Ok(PyRecord { inner: record })
    }

    /// The external id.
    #[getter]
    fn id(&self) -> &str {
        &self.inner.id
    }
    /// The title.
    #[getter]
    fn title(&self) -> &str {
        &self.inner.title
    }
    /// The body.
    #[getter]
    fn body(&self) -> &str {
        &self.inner.body
    }
    /// Keyword fields: field → values.
    #[getter]
    fn keywords(&self) -> BTreeMap<String, Vec<String>> {
        self.inner.keywords.clone()
    }
    /// Numeric and date fields (dates as Unix seconds).
    #[getter]
    fn numbers(&self) -> BTreeMap<String, f64> {
        self.inner.numbers.clone()
    }
    /// ACL tokens.
    #[getter]
    fn acl(&self) -> Vec<String> {
        self.inner.acl.clone()
    }
    /// The parent record, for chunks.
    #[getter]
    fn parent(&self) -> Option<String> {
        self.inner.parent.clone()
    }
    /// The heading path, outermost first.
    #[getter]
    fn section(&self) -> Vec<String> {
        self.inner.section.clone()
    }
    /// The 1-based inclusive line range in the parent.
    #[getter]
    fn lines(&self) -> Option<(u32, u32)> {
        self.inner.lines
    }
    /// The record's own vector (a float32 array), if it was given one.
    #[getter]
    fn vector<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyAny>> {
        self.inner.vector.clone().map(|v| vectors::to_array(py, v))
    }

    fn __repr__(&self) -> String {
        format!("Record({:?})", self.inner.id).replace('"', "'")
    }
}

/// A keyword field's value: one string or a sequence of strings.
fn keyword_values(values: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if let Ok(one) = values.cast::<PyString>() {
        return Ok(vec![one.extract::<String>()?]);
    }
    values.extract::<Vec<String>>().map_err(|_| invalid("a keyword value must be a string or a list of strings"))
}

/// The keys a record dict may have: [`PyRecord`]'s arguments.
const RECORD_KEYS: [&str; 11] =
    ["id", "title", "body", "keywords", "numbers", "dates", "acl", "parent", "section", "lines", "vector"];

/// A record given as a `braid.Record` or as a dict with its arguments as keys.
pub(crate) fn extract(obj: &Bound<'_, PyAny>) -> PyResult<braid::Record> {
    if let Ok(record) = obj.cast::<PyRecord>() {
        return Ok(record.get().inner.clone());
    }
    let Ok(dict) = obj.cast::<PyDict>() else {
        return Err(invalid(format!("a record must be a braid.Record or a dict, got {}", obj.get_type().name()?)));
    };
    for key in dict.keys() {
        let key: String = key.extract()?;
        if !RECORD_KEYS.contains(&key.as_str()) {
            return Err(crate::errors::to_py_err(braid::Error::InvalidRecord {
                reason: format!("unknown key {key:?} (expected one of {})", RECORD_KEYS.join(", ")),
            }));
        }
    }
    let id: String = match item(dict, "id")? {
        Some(id) => id,
        None => return Err(crate::errors::to_py_err(braid::Error::InvalidRecord { reason: "no id".into() })),
    };
    let keywords = dict.get_item("keywords")?.filter(|v| !v.is_none()).map(|k| k.cast_into::<PyDict>()).transpose()?;
    let vector = dict.get_item("vector")?;
    let record = PyRecord::new(
        id,
        item(dict, "title")?.unwrap_or_default(),
        item(dict, "body")?.unwrap_or_default(),
        keywords.as_ref(),
        item(dict, "numbers")?,
        item(dict, "dates")?,
        item(dict, "acl")?,
        item(dict, "parent")?,
        item(dict, "section")?,
        item(dict, "lines")?,
        vector.as_ref(),
    )?;
    Ok(record.inner)
}

/// The value at `key`, extracted; `None` when the key is absent or holds `None`.
fn item<'py, T>(dict: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<T>>
where
    T: for<'a> FromPyObject<'a, 'py, Error = PyErr>,
{
    match dict.get_item(key)? {
        Some(value) if !value.is_none() => Ok(Some(value.extract()?)),
        _ => Ok(None),
    }
}
