//! `braid.Index` and `braid.Writer`.
//!
//! Every call that searches, embeds, writes or commits runs with the GIL released
//! (`Python::detach`): arguments are read into Rust values first, the engine runs while other
//! Python threads do, and the result is turned into Python objects after. A writer sits in a
//! `Mutex` that is only ever locked with the GIL released, so a thread waiting for it never
//! holds the GIL another thread needs.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use braid::models::OnnxEmbedder;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyType};
use pythonize::depythonize;

use crate::errors::{invalid, OrRaise};
use crate::fanout::PyRequest;
use crate::principal::PyPrincipal;
use crate::record;
use crate::response::{self, PySearchResponse};
use crate::vectors;

/// How a new index is made: a builder holding its configuration and its models.
struct Settings {
    builder: braid::IndexBuilder,
}

/// The keyword arguments of `Index.create`, `Index.create_in_ram` and `Index.open_or_create`.
#[allow(clippy::too_many_arguments)]
fn settings(
    py: Python<'_>,
    model: Option<PathBuf>,
    keyword_fields: Option<Vec<String>>,
    numeric_fields: Option<Vec<String>>,
    policy: Option<&Bound<'_, PyString>>,
    analyzer: Option<&Bound<'_, PyString>>,
    title_boost: Option<f32>,
    quantization: Option<&Bound<'_, PyString>>,
    passages: bool,
    vector_dim: Option<usize>,
    vector_model: Option<String>,
) -> PyResult<Settings> {
    let mut config = braid::IndexConfig::default();
    if let Some(fields) = keyword_fields {
        config.schema.keyword_fields = fields.into_iter().collect();
    }
    if let Some(fields) = numeric_fields {
        config.schema.numeric_fields = fields.into_iter().collect();
    }
    if let Some(policy) = policy {
        config.policy = depythonize(policy.as_any())
            .map_err(|_| invalid(format!("unknown policy {policy} (expected public or deny)")))?;
    }
    if let Some(analyzer) = analyzer {
        config.schema.analyzer = depythonize(analyzer.as_any())
            .map_err(|_| invalid(format!("unknown analyzer {analyzer} (expected english or simple)")))?;
    }
    if let Some(boost) = title_boost {
        config.schema.title_boost = boost;
    }
    if let Some(quantization) = quantization {
        config.quantization = depythonize(quantization.as_any())
            .map_err(|_| invalid(format!("unknown quantization {quantization} (expected f32 or int8)")))?;
    }
    if !passages {
        config.passages = None;
    }
    config.schema.validate().or_raise()?;
    let mut builder = braid::Index::builder().config(config);
    match (model, vector_dim) {
        (Some(_), Some(_)) => return Err(invalid("give a model or vector_dim, not both")),
        (Some(model), None) => builder = builder.embedder(load_embedder(py, &model)?),
        (None, Some(dim)) => {
            let model_id = vector_model.unwrap_or_else(|| braid::SUPPLIED_MODEL.to_owned());
            builder = builder.vectors(braid::EmbeddingInfo { model_id, dim });
        }
        (None, None) if vector_model.is_some() => return Err(invalid("vector_model needs vector_dim")),
        (None, None) => {}
    }
    Ok(Settings { builder })
}

/// Braid's ONNX embedder from a model directory, or a model name found as `braid` finds
/// models (`$BRAID_MODEL_DIR`, `~/.cache/braid/models`, `shared/models` above the working
/// directory). ONNX Runtime is loaded from `ORT_DYLIB_PATH` (or where
/// `scripts/setup-onnxruntime.sh` puts it).
fn load_embedder(py: Python<'_>, model: &Path) -> PyResult<Arc<dyn braid::Embedder>> {
    let model = model.to_path_buf();
    py.detach(move || {
        let mut builder = OnnxEmbedder::builder();
        if model.is_dir() {
            builder.model_dir(&model);
        } else {
            builder.model_name(&model.to_string_lossy());
        }
        builder.build().map(|e| Arc::new(e) as Arc<dyn braid::Embedder>)
    })
    .or_raise()
}

/// A Braid index: BM25, fuzzy and semantic recall braided into one ranking, permissions
/// first.
///
/// Make one with :meth:`Index.create`, :meth:`Index.open`, :meth:`Index.open_or_create` or
/// :meth:`Index.create_in_ram`. Searches run on the latest commit and never wait for
/// writing. :meth:`upsert` and :meth:`delete` go through the index's own writer, opened at
/// the first change and kept until :meth:`close` (one writer per index, across processes);
/// :meth:`commit` makes the changes durable and visible. :meth:`writer` opens a separate one
/// with its own memory budget instead.
///
/// Usable as a context manager: leaving the block closes the writer (uncommitted changes are
/// discarded, as the crate's ``Writer`` does when dropped).
#[pyclass(name = "Index", module = "braid", frozen)]
pub(crate) struct PyIndex {
    index: braid::Index,
    writer: Mutex<Option<braid::Writer>>,
}

impl PyIndex {
    fn wrap(index: braid::Index) -> Self {
        PyIndex { index, writer: Mutex::new(None) }
    }

    /// Runs `change` on the index's writer (opening it first if needed), GIL released.
    fn with_writer<T: Send>(
        &self,
        py: Python<'_>,
        change: impl FnOnce(&mut braid::Writer) -> braid::Result<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            let mut slot = self.writer.lock().unwrap_or_else(|p| p.into_inner());
            let writer = match slot.take() {
                Some(writer) => writer,
                None => self.index.writer()?,
            };
            change(slot.insert(writer))
        })
        .or_raise()
    }
}

/// Records from a `Record`, a dict, or an iterable of them, with `vectors` (one row each)
/// when given.
fn records_from(records: &Bound<'_, PyAny>, vectors: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<braid::Record>> {
    let mut out = Vec::new();
    if records.cast::<record::PyRecord>().is_ok() || records.cast::<PyDict>().is_ok() {
        out.push(record::extract(records)?);
    } else {
        for item in records.try_iter()? {
            out.push(record::extract(&item?)?);
        }
    }
    if let Some(vectors) = vectors.filter(|v| !v.is_none()) {
        let rows = vectors::rows(vectors, out.len())?;
        for (record, vector) in out.iter_mut().zip(rows) {
            record.vector = Some(vector);
        }
    }
    Ok(out)
}

/// Ids from one string or an iterable of strings.
fn ids_from(ids: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if let Ok(id) = ids.cast::<PyString>() {
        return Ok(vec![id.extract::<String>()?]);
    }
    ids.try_iter()?.map(|id| id?.extract::<String>()).collect()
}

/// A record read back for a principal, as a dict.
fn stored_to_dict<'py>(py: Python<'py>, record: braid::StoredRecord) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", record.id)?;
    d.set_item("title", record.title)?;
    d.set_item("body", record.body)?;
    d.set_item("parent", record.parent)?;
    d.set_item("section", record.section)?;
    d.set_item("lines", record.lines)?;
    d.set_item("keywords", record.keywords)?;
    d.set_item("numbers", record.numbers)?;
    Ok(d)
}

#[pymethods]
impl PyIndex {
    /// Creates a new index in the directory ``path`` (created if needed; it must not hold an
    /// index already).
    ///
    /// ``model``: a model directory (``tokenizer.json`` and an ``.onnx`` file) or a model
    /// name, for Braid's ONNX embedder (needs ONNX Runtime: ``ORT_DYLIB_PATH``). Or
    /// ``vector_dim`` (and optionally ``vector_model``, a name for the caller's model): records
    /// and queries bring their own vectors. With neither, an index still takes records with
    /// vectors (their dimension is fixed by the first one). ``keyword_fields`` and
    /// ``numeric_fields`` replace the default declared fields; ``policy`` (``public`` or
    /// ``deny``) decides who sees records without an ACL; ``analyzer`` is ``english`` or
    /// ``simple``; ``quantization`` is ``f32`` or ``int8``; ``passages=False`` embeds one vector
    /// per record.
    #[classmethod]
    #[pyo3(signature = (path, *, model = None, keyword_fields = None, numeric_fields = None, policy = None,
        analyzer = None, title_boost = None, quantization = None, passages = true, vector_dim = None, vector_model = None))]
    #[allow(clippy::too_many_arguments)]
    fn create(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        path: PathBuf,
        model: Option<PathBuf>,
        keyword_fields: Option<Vec<String>>,
        numeric_fields: Option<Vec<String>>,
        policy: Option<&Bound<'_, PyString>>,
        analyzer: Option<&Bound<'_, PyString>>,
        title_boost: Option<f32>,
        quantization: Option<&Bound<'_, PyString>>,
        passages: bool,
        vector_dim: Option<usize>,
        vector_model: Option<String>,
    ) -> PyResult<Self> {
        let s = settings(
            py,
            model,
            keyword_fields,
            numeric_fields,
            policy,
            analyzer,
            title_boost,
            quantization,
            passages,
            vector_dim,
            vector_model,
        )?;
        let index = py.detach(move || s.builder.create(&path)).or_raise()?;
        Ok(Self::wrap(index))
    }

    /// Creates an index held in memory only (arguments as :meth:`create`).
    #[classmethod]
    #[pyo3(signature = (*, model = None, keyword_fields = None, numeric_fields = None, policy = None,
        analyzer = None, title_boost = None, quantization = None, passages = true, vector_dim = None, vector_model = None))]
    #[allow(clippy::too_many_arguments)]
    fn create_in_ram(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        model: Option<PathBuf>,
        keyword_fields: Option<Vec<String>>,
        numeric_fields: Option<Vec<String>>,
        policy: Option<&Bound<'_, PyString>>,
        analyzer: Option<&Bound<'_, PyString>>,
        title_boost: Option<f32>,
        quantization: Option<&Bound<'_, PyString>>,
        passages: bool,
        vector_dim: Option<usize>,
        vector_model: Option<String>,
    ) -> PyResult<Self> {
        let s = settings(
            py,
            model,
            keyword_fields,
            numeric_fields,
            policy,
            analyzer,
            title_boost,
            quantization,
            passages,
            vector_dim,
            vector_model,
        )?;
        let index = py.detach(move || s.builder.create_in_ram()).or_raise()?;
        Ok(Self::wrap(index))
    }

    /// Opens the index in ``path``. Every file is checked against its checksum first.
    ///
    /// ``model``: the embedder the index was built with (a model directory or name), so that
    /// searches embed their queries and upserts their records. Without one, vectors the index
    /// holds are loaded and searched with query vectors (``search(vector=...)``).
    #[classmethod]
    #[pyo3(signature = (path, *, model = None))]
    fn open(_cls: &Bound<'_, PyType>, py: Python<'_>, path: PathBuf, model: Option<PathBuf>) -> PyResult<Self> {
        let builder = match model {
            Some(model) => braid::Index::builder().embedder(load_embedder(py, &model)?),
            None => braid::Index::builder().stored_vectors(),
        };
        let index = py.detach(move || builder.open(&path)).or_raise()?;
        Ok(Self::wrap(index))
    }

    /// Opens the index in ``path``, or creates it with these settings when there is none
    /// (arguments as :meth:`create`; the stored settings win for an existing index).
    #[classmethod]
    #[pyo3(signature = (path, *, model = None, keyword_fields = None, numeric_fields = None, policy = None,
        analyzer = None, title_boost = None, quantization = None, passages = true, vector_dim = None, vector_model = None))]
    #[allow(clippy::too_many_arguments)]
    fn open_or_create(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        path: PathBuf,
        model: Option<PathBuf>,
        keyword_fields: Option<Vec<String>>,
        numeric_fields: Option<Vec<String>>,
        policy: Option<&Bound<'_, PyString>>,
        analyzer: Option<&Bound<'_, PyString>>,
        title_boost: Option<f32>,
        quantization: Option<&Bound<'_, PyString>>,
        passages: bool,
        vector_dim: Option<usize>,
        vector_model: Option<String>,
    ) -> PyResult<Self> {
        let has_model = model.is_some() || vector_dim.is_some();
        let s = settings(
            py,
            model,
            keyword_fields,
            numeric_fields,
            policy,
            analyzer,
            title_boost,
            quantization,
            passages,
            vector_dim,
            vector_model,
        )?;
        let builder = if has_model { s.builder } else { s.builder.stored_vectors() };
        let index = py.detach(move || builder.open_or_create(&path)).or_raise()?;
        Ok(Self::wrap(index))
    }

    /// Whether ``path`` holds an index.
    #[staticmethod]
    fn exists(path: PathBuf) -> bool {
        braid::Index::exists(&path)
    }

    /// Adds or replaces records: a :class:`Record`, a dict with its arguments as keys, or an
    /// iterable of either. ``vectors``: one row per record (a 2-D numpy array, float32 read in
    /// place), set as each record's vector. Changes are visible after :meth:`commit`.
    /// Re-upserting an unchanged record is a no-op (nothing is embedded again).
    ///
    /// Raises :class:`InvalidRecordError`, :class:`UnknownFieldError` or
    /// :class:`DimensionMismatchError`; the records before the bad one stay pending.
    #[pyo3(signature = (records, *, vectors = None))]
    fn upsert(&self, py: Python<'_>, records: &Bound<'_, PyAny>, vectors: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let records = records_from(records, vectors)?;
        self.with_writer(py, move |w| records.iter().try_for_each(|r| w.upsert(r)))
    }

    /// Deletes records by id (one id or an iterable of ids); absent ids are ignored.
    fn delete(&self, py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<()> {
        let ids = ids_from(ids)?;
        self.with_writer(py, move |w| ids.iter().try_for_each(|id| w.delete(id)))
    }

    /// Makes every change durable and visible to new searches (embedding what is pending
    /// first). A crash loses only uncommitted changes.
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        self.with_writer(py, braid::Writer::commit)
    }

    /// The number of upserts and deletes since the last commit.
    #[getter]
    fn pending(&self, py: Python<'_>) -> usize {
        py.detach(|| self.writer.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map_or(0, braid::Writer::pending))
    }

    /// Closes the index's writer, discarding uncommitted changes and releasing the write lock,
    /// once the segment merges its commits started have ended (so their work lands). Searches
    /// still work.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.writer.lock().unwrap_or_else(|p| p.into_inner()).take().map_or(Ok(()), braid::Writer::close))
            .or_raise()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    /// Opens a separate writer (see :class:`Writer`): ``heap_bytes`` of indexing buffer (at
    /// least 15 MB; 128 MiB by default) and ``embed_batch`` texts per embedder call (8 by
    /// default). Raises :class:`LockBusyError` while another writer is open.
    #[pyo3(signature = (*, heap_bytes = None, embed_batch = None))]
    fn writer(&self, py: Python<'_>, heap_bytes: Option<usize>, embed_batch: Option<usize>) -> PyResult<PyWriter> {
        let mut options = braid::WriterOptions::default();
        if let Some(heap) = heap_bytes {
            options.heap_bytes = heap;
        }
        if let Some(batch) = embed_batch {
            options.embed_batch = batch;
        }
        let writer = py.detach(|| self.index.writer_with(options)).or_raise()?;
        Ok(PyWriter { writer: Mutex::new(Some(writer)) })
    }

    /// Searches the latest commit on behalf of ``principal`` (a :class:`Principal`, built
    /// from verified tokens: the search sees only the records it may see).
    ///
    /// ``mode``: ``hybrid`` (default), ``lexical``, ``fuzzy`` or ``semantic``. ``k`` hits,
    /// starting after ``offset`` or at ``cursor`` (a previous response's ``next_cursor``).
    /// ``filter``, ``facets`` and ``boosts`` are dicts in the REST API's JSON shape (a facet may
    /// also be a field name). ``vector``: a query vector (1-D array) for the semantic leg.
    /// ``explain=True`` keeps each hit's explanation. ``group_by=(field, n)`` keeps at most ``n``
    /// hits per article (``"parent"``) or keyword value; ``mmr=lambda`` reorders by maximal
    /// marginal relevance; ``token_budget=n`` packs the page into at most ``n`` tokens of the
    /// model's tokenizer (``stats["tokens"]`` says how many). ``timeout``: seconds before the search stops with
    /// :class:`DeadlineExceededError`. The GIL is released while it runs.
    #[pyo3(signature = (query = String::new(), *, principal, **options))]
    fn search<'py>(
        &self,
        py: Python<'py>,
        query: String,
        principal: &Bound<'py, PyPrincipal>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<PySearchResponse> {
        let request = PyRequest::made(py, query, principal, options)?;
        let request = request.get();
        let (index, explain) = (self.index.clone(), request.explain);
        let found = py.detach(|| index.search(&request.request)).or_raise()?;
        response::convert(py, found, explain)
    }

    /// Opens this index's :class:`Session` of ``request``, a search fanned out over several
    /// indexes, this one among them (:class:`FanOut`): it answers the fan-out's asks for this
    /// index on the commit served now. Raises ``InvalidRequestError`` for what a fan-out
    /// cannot do.
    fn session(&self, py: Python<'_>, request: &Bound<'_, PyRequest>) -> PyResult<crate::fanout::PySession> {
        crate::fanout::session(py, &self.index, request.get())
    }

    /// One record of the latest commit as a dict (``id``, ``title``, ``body``, ``parent``,
    /// ``section``, ``lines``, ``keywords``, ``numbers``), or ``None`` when there is none that
    /// ``principal`` may see.
    #[pyo3(signature = (id, *, principal))]
    fn record<'py>(
        &self,
        py: Python<'py>,
        id: &str,
        principal: &Bound<'py, PyPrincipal>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let principal = principal.get().inner.clone();
        let found = py.detach(|| self.index.record(id, &principal)).or_raise()?;
        found.map(|r| stored_to_dict(py, r)).transpose()
    }

    /// The stored vector of one record (a float32 array), or ``None`` when there is none that
    /// ``principal`` may see.
    #[pyo3(signature = (id, *, principal))]
    fn vector<'py>(
        &self,
        py: Python<'py>,
        id: &str,
        principal: &Bound<'py, PyPrincipal>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let principal = principal.get().inner.clone();
        let found = py.detach(|| self.index.vector(id, &principal)).or_raise()?;
        Ok(found.map(|v| vectors::to_array(py, v)))
    }

    /// Embeds ``texts`` with the index's embedder: a ``(len(texts), dim)`` float32 array of
    /// L2-normalised vectors. The GIL is released while the model runs. Raises
    /// :class:`LegUnavailableError` when the index has no embedder.
    fn embed<'py>(&self, py: Python<'py>, texts: Vec<String>) -> PyResult<Bound<'py, PyAny>> {
        let Some(embedder) = self.index.embedder() else {
            return Err(crate::errors::to_py_err(braid::Error::LegUnavailable {
                leg: "semantic",
                reason: "the index has no embedder (open or create it with model=...)".into(),
            }));
        };
        let dim = embedder.dim();
        let found = py
            .detach(move || {
                let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                embedder.embed(&refs)
            })
            .or_raise()?;
        vectors::to_matrix(py, found, dim)
    }

    /// The number of committed, live records.
    #[getter]
    fn num_records(&self) -> u64 {
        self.index.num_records()
    }

    fn __len__(&self) -> usize {
        usize::try_from(self.index.num_records()).unwrap_or(usize::MAX)
    }

    /// The ids of every committed record, in no order: an operator's view with no principal,
    /// never to be served to a caller.
    fn record_ids(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        py.detach(|| self.index.record_ids()).or_raise()
    }

    /// Picks up a commit another process wrote; returns whether it did.
    fn reload(&self, py: Python<'_>) -> PyResult<bool> {
        py.detach(|| self.index.reload()).or_raise()
    }

    /// Replaces the synonyms queries are expanded with (Solr ``synonyms.txt`` text).
    fn set_synonyms(&self, py: Python<'_>, text: &str) -> PyResult<()> {
        let synonyms = braid::Synonyms::parse(text).or_raise()?;
        py.detach(|| self.index.set_synonyms(synonyms)).or_raise()
    }

    /// A short, opaque name of the commit served (``None`` in memory).
    #[getter]
    fn commit_id(&self) -> Option<String> {
        self.index.commit_id()
    }

    /// Whether the semantic leg can run (an embedder, or stored vectors).
    #[getter]
    fn has_semantic(&self) -> bool {
        self.index.has_semantic()
    }

    /// The model whose vectors the index holds, as ``{"model_id": ..., "dim": ...}``, or
    /// ``None``.
    #[getter]
    fn embedding<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.index
            .embedding()
            .map(|info| {
                let d = PyDict::new(py);
                d.set_item("model_id", info.model_id)?;
                d.set_item("dim", info.dim)?;
                Ok(d)
            })
            .transpose()
    }

    /// The directory, for an index on disk.
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.index.dir().map(Path::to_path_buf)
    }

    fn __repr__(&self) -> String {
        match self.index.dir() {
            Some(dir) => format!("Index({:?}, records={})", dir.display().to_string(), self.index.num_records()),
            None => format!("Index(in RAM, records={})", self.index.num_records()),
        }
    }
}

/// A writer of its own, from :meth:`Index.writer`: one per index at a time.
///
/// As a context manager it commits when the block ends normally and discards the changes
/// when it raises; either way the writer is closed.
#[pyclass(name = "Writer", module = "braid", frozen)]
pub(crate) struct PyWriter {
    writer: Mutex<Option<braid::Writer>>,
}

impl PyWriter {
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        change: impl FnOnce(&mut braid::Writer) -> braid::Result<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            let mut slot = self.writer.lock().unwrap_or_else(|p| p.into_inner());
            match slot.as_mut() {
                Some(writer) => change(writer),
                None => Err(braid::Error::invalid_request("the writer is closed")),
            }
        })
        .or_raise()
    }
}

#[pymethods]
impl PyWriter {
    /// As :meth:`Index.upsert`.
    #[pyo3(signature = (records, *, vectors = None))]
    fn upsert(&self, py: Python<'_>, records: &Bound<'_, PyAny>, vectors: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let records = records_from(records, vectors)?;
        self.with(py, move |w| records.iter().try_for_each(|r| w.upsert(r)))
    }

    /// As :meth:`Index.delete`.
    fn delete(&self, py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<()> {
        let ids = ids_from(ids)?;
        self.with(py, move |w| ids.iter().try_for_each(|id| w.delete(id)))
    }

    /// As :meth:`Index.commit`.
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, braid::Writer::commit)
    }

    /// Merges every segment into one (after a bulk load).
    fn optimize(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, braid::Writer::optimize)
    }

    /// The number of upserts and deletes since the last commit.
    #[getter]
    fn pending(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |w| Ok(w.pending()))
    }

    /// Upserts skipped since the writer opened because the committed record was identical.
    #[getter]
    fn unchanged(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |w| Ok(w.unchanged()))
    }

    /// Closes the writer, discarding uncommitted changes, once the segment merges its commits
    /// started have ended.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.writer.lock().unwrap_or_else(|p| p.into_inner()).take().map_or(Ok(()), braid::Writer::close))
            .or_raise()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (exc_type, _exc_value, _traceback))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc_value: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let committed = if exc_type.is_none() { self.commit(py) } else { Ok(()) };
        let closed = self.close(py);
        committed.and(closed).map(|()| false)
    }
}
