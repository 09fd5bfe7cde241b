use std::path::PathBuf;

/// Braid's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error another library raised, kept as the [`std::error::Error::source`] of a Braid error
/// (any `std::error::Error + Send + Sync + 'static` converts into it with `.into()` or `?`).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Everything that can go wrong in Braid.
///
/// User errors (a bad request, an unknown field, a missing model) are kept apart from internal
/// ones (I/O, a damaged index). No message names a record the caller may not see.
///
/// An error another library raised (tantivy, ONNX Runtime, the tokenizer, a JSON parser, the
/// file system) is kept as the error's [`source`](std::error::Error::source), never flattened
/// into a string: [`Error::Io`], [`Error::ModelFailed`], [`Error::Unparsable`],
/// [`Error::LexicalEngine`], [`Error::VectorEngine`] and [`Error::Encode`] carry it. As with
/// [`Error::Io`], their message ends with the source's, so a log line that prints the error
/// alone still says what failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request is malformed (for example `k` above [`crate::MAX_K`]).
    #[error("invalid request: {reason}")]
    InvalidRequest {
        /// What is wrong, in words.
        reason: String,
    },
    /// The query text is longer than the engine accepts.
    #[error("query too long: {got} bytes, at most {max} are accepted")]
    QueryTooLong {
        /// The accepted maximum in bytes.
        max: usize,
        /// The length received.
        got: usize,
    },
    /// A record or filter names a field the schema does not have, or uses it the wrong way.
    #[error("unknown field `{name}`")]
    UnknownField {
        /// The field name as given.
        name: String,
    },
    /// A record is not acceptable (empty id, bad date, ...).
    #[error("invalid record: {reason}")]
    InvalidRecord {
        /// What is wrong, in words.
        reason: String,
    },
    /// A vector has the wrong number of dimensions.
    #[error("dimension mismatch: expected {expected}, got {got}")]
    DimensionMismatch {
        /// The index's dimension.
        expected: usize,
        /// The dimension received.
        got: usize,
    },
    /// A leg was asked for that this index cannot run (for example semantic without a model).
    #[error("the {leg} leg is unavailable: {reason}")]
    LegUnavailable {
        /// The leg's name.
        leg: &'static str,
        /// Why, and how to enable it.
        reason: String,
    },
    /// A model or the ONNX Runtime library could not be found or loaded, by Braid's own checks
    /// (a missing file, an output of the wrong shape). [`Error::ModelFailed`] when a library
    /// said why.
    #[error("model unavailable: {reason}")]
    Model {
        /// What failed and how to fix it.
        reason: String,
    },
    /// A model could not be loaded, downloaded or run because a library it runs on failed
    /// (ONNX Runtime, the tokenizer, the downloader, the parser of its `config.json`).
    #[error("model unavailable: {reason}: {source}")]
    ModelFailed {
        /// What Braid was doing (`cannot load <file>`, `inference failed`, ...).
        reason: String,
        /// The library's error.
        #[source]
        source: BoxError,
    },
    /// Another writer holds the index's write lock.
    #[error("index is locked by another writer: {path}")]
    LockBusy {
        /// The locked index directory.
        path: PathBuf,
    },
    /// A file of the index is missing, truncated or damaged, as Braid's own checks found (a
    /// checksum, a missing file, an inconsistency). A file that does not parse is
    /// [`Error::Unparsable`], with the parser's error; [`Error::is_damaged_index`] covers both.
    #[error("index file is damaged: {path}: {reason}")]
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A file of the index does not parse (truncated, or not what Braid wrote).
    #[error("index file is damaged: {path}: {source}")]
    Unparsable {
        /// The damaged file.
        path: PathBuf,
        /// The parser's error.
        #[source]
        source: BoxError,
    },
    /// The index was written by an incompatible version of Braid.
    #[error("incompatible index format {found} in {path} (this build reads format {expected})")]
    FormatVersion {
        /// The manifest that carried the version.
        path: PathBuf,
        /// The version found.
        found: u32,
        /// The version this build reads and writes.
        expected: u32,
    },
    /// An I/O error on a named path.
    #[error("i/o error on {path}: {source}")]
    Io {
        /// The path being read or written.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A token in Braid's reserved namespace (`__braid:…`, see [`crate::RESERVED_PREFIX`]) was
    /// given as an ACL or principal token: those are the engine's own index terms, and a
    /// record or principal carrying one would change what others may see.
    #[error(
        "{token:?} is reserved for Braid's own index terms (no ACL or principal token may start with \"__braid:\")"
    )]
    ReservedToken {
        /// The token as given.
        token: String,
    },
    /// A synonym file (Solr/Elasticsearch `synonyms.txt` format) could not be read.
    #[error("synonyms, line {line}: {reason}")]
    Synonyms {
        /// The 1-based line number.
        line: usize,
        /// What is wrong, in words.
        reason: String,
    },
    /// The search ran past the deadline its request set ([`crate::SearchRequest::deadline`]);
    /// it stopped at the next check and returned nothing.
    #[error("the search ran past its deadline and was cancelled")]
    DeadlineExceeded,
    /// A page ends past the ranking it is cut from: `offset + k` must stay within the
    /// candidates each leg contributes (`max(depth, k)`, at most [`crate::MAX_DEPTH`]).
    #[error("the page ends at hit {end}, past the {window} hits this request ranks (raise `depth`, up to {max})")]
    PageOutOfRange {
        /// Where the page would end (`offset + k`).
        end: usize,
        /// The request's ranking window, `max(depth, k)`.
        window: usize,
        /// The largest window accepted.
        max: usize,
    },
    /// A paging cursor that is malformed or was made for another request (another query,
    /// filter, mode, depth, boosts or principal).
    #[error("invalid cursor: {reason}")]
    InvalidCursor {
        /// What is wrong, in words.
        reason: String,
    },
    /// A paging cursor whose earlier pages no longer hold: records the caller may see changed
    /// since it was made. Start again from the first page.
    #[error("the cursor is stale: the hits before it changed since it was made; start again from the first page")]
    StaleCursor,
    /// An error inside the lexical engine (tantivy), described in words.
    /// [`Error::LexicalEngine`] when the engine raised it.
    #[error("lexical index error: {0}")]
    Lexical(String),
    /// An error inside the vector store, described in words. [`Error::VectorEngine`] when a
    /// library raised it.
    #[error("vector index error: {0}")]
    Vector(String),
    /// An error the lexical engine (tantivy) raised.
    #[error("lexical index error: {source}")]
    LexicalEngine {
        /// The engine's error.
        #[source]
        source: BoxError,
    },
    /// An error a library under the vector store raised (or a vector source's reader).
    #[error("vector index error: {source}")]
    VectorEngine {
        /// The library's error.
        #[source]
        source: BoxError,
    },
    /// A batch given to a group commit was valid, but the commit it was to share with other
    /// callers' batches failed (an I/O, lexical-engine or model error): nothing of that group
    /// was committed, and the next write starts from a fresh writer. The failure is the source;
    /// every batch of the group gets it.
    #[error("the group commit holding this batch failed, nothing of it was committed: {source}")]
    GroupCommit {
        /// What failed, shared by every batch of the group.
        #[source]
        source: std::sync::Arc<Error>,
    },
    /// One of Braid's own files could not be encoded: a bug, never bad input.
    #[error("cannot encode {what}: {source}")]
    Encode {
        /// What was being encoded (`the manifest`).
        what: &'static str,
        /// The encoder's error.
        #[source]
        source: BoxError,
    },
}

impl Error {
    /// Builds an [`Error::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }

    /// Builds an [`Error::InvalidRequest`].
    pub fn invalid_request(reason: impl Into<String>) -> Self {
        Error::InvalidRequest { reason: reason.into() }
    }

    /// Builds an [`Error::ModelFailed`]: `reason` says what Braid was doing, `source` is the
    /// library's error.
    pub fn model_failed(reason: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Error::ModelFailed { reason: reason.into(), source: source.into() }
    }

    /// Builds an [`Error::Unparsable`] for the file `path`.
    pub fn unparsable(path: impl Into<PathBuf>, source: impl Into<BoxError>) -> Self {
        Error::Unparsable { path: path.into(), source: source.into() }
    }

    /// Builds an [`Error::LexicalEngine`] from the lexical engine's error.
    pub fn lexical_engine(source: impl Into<BoxError>) -> Self {
        Error::LexicalEngine { source: source.into() }
    }

    /// Builds an [`Error::VectorEngine`] from a library's error.
    pub fn vector_engine(source: impl Into<BoxError>) -> Self {
        Error::VectorEngine { source: source.into() }
    }

    /// Whether a file of the index is missing, damaged or unparsable ([`Error::Corrupt`],
    /// [`Error::Unparsable`]): the file is named by [`Error::damaged_file`].
    pub fn is_damaged_index(&self) -> bool {
        matches!(self, Error::Corrupt { .. } | Error::Unparsable { .. })
    }

    /// The file a damaged-index error names ([`Error::Corrupt`], [`Error::Unparsable`],
    /// [`Error::FormatVersion`]).
    pub fn damaged_file(&self) -> Option<&std::path::Path> {
        match self {
            Error::Corrupt { path, .. } | Error::Unparsable { path, .. } | Error::FormatVersion { path, .. } => {
                Some(path.as_path())
            }
            _ => None,
        }
    }

    /// Whether the caller can fix this error by changing the request or the input
    /// (as opposed to an internal or environmental failure).
    pub fn is_user_error(&self) -> bool {
        matches!(
            self,
            Error::InvalidRequest { .. }
                | Error::QueryTooLong { .. }
                | Error::UnknownField { .. }
                | Error::InvalidRecord { .. }
                | Error::DimensionMismatch { .. }
                | Error::LegUnavailable { .. }
                | Error::ReservedToken { .. }
                | Error::Synonyms { .. }
                | Error::PageOutOfRange { .. }
                | Error::InvalidCursor { .. }
                | Error::StaleCursor
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync + 'static>() {}

    #[test]
    fn error_is_send_sync_and_lowercase() {
        assert_send_sync::<Error>();
        let e = Error::DimensionMismatch { expected: 384, got: 3 };
        assert_eq!(e.to_string(), "dimension mismatch: expected 384, got 3");
        assert!(e.is_user_error());
        assert!(!Error::Lexical("x".into()).is_user_error());
        assert!(!Error::DeadlineExceeded.is_user_error());
        let reserved = Error::ReservedToken { token: "__braid:no-acl".into() };
        assert!(reserved.is_user_error());
        assert!(reserved.to_string().contains("reserved"), "{reserved}");
    }

    /// A wrapped library error is the error's source (a caller can downcast it), its message
    /// still ends the error's own, and the error stays internal.
    #[test]
    fn library_errors_are_kept_as_sources() {
        use std::error::Error as _;
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, "bad header");
        let errors = [
            Error::model_failed("cannot load /m/model.onnx", std::io::Error::other("bad header")),
            Error::unparsable("/i/braid.json", std::io::Error::other("bad header")),
            Error::lexical_engine(std::io::Error::other("bad header")),
            Error::vector_engine(io),
            Error::Encode { what: "the manifest", source: std::io::Error::other("bad header").into() },
        ];
        let messages = [
            "model unavailable: cannot load /m/model.onnx: bad header",
            "index file is damaged: /i/braid.json: bad header",
            "lexical index error: bad header",
            "vector index error: bad header",
            "cannot encode the manifest: bad header",
        ];
        for (e, message) in errors.iter().zip(messages) {
            assert_eq!(e.to_string(), message);
            let source = e.source().expect("a source");
            assert!(source.downcast_ref::<std::io::Error>().is_some(), "{e:?}");
            assert!(!e.is_user_error(), "{e}");
        }
        assert!(errors[1].is_damaged_index());
        assert_eq!(errors[1].damaged_file(), Some(std::path::Path::new("/i/braid.json")));
        assert!(!errors[0].is_damaged_index() && errors[0].damaged_file().is_none());
    }
}
