use std::path::PathBuf;

/// Braid's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in Braid.
///
/// User errors (a bad request, an unknown field, a missing model) are kept apart from internal
/// ones (I/O, a damaged index). No message names a record the caller may not see.
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
    /// A model or the ONNX Runtime library could not be found or loaded.
    #[error("model unavailable: {reason}")]
    Model {
        /// What failed and how to fix it.
        reason: String,
    },
    /// Another writer holds the index's write lock.
    #[error("index is locked by another writer: {path}")]
    LockBusy {
        /// The locked index directory.
        path: PathBuf,
    },
    /// A file of the index is missing, truncated or damaged.
    #[error("index file is damaged: {path}: {reason}")]
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
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
    /// An error inside the lexical engine (tantivy).
    #[error("lexical index error: {0}")]
    Lexical(String),
    /// An error inside the vector store.
    #[error("vector index error: {0}")]
    Vector(String),
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
}
