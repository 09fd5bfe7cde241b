//! The crate's error type.

use std::io;
use std::path::PathBuf;

/// Everything that can go wrong while loading an evaluation dataset.
///
/// Metrics and the runner never fail on their own: only reading files does
/// (and the caller's search closure, whose error [`evaluate`](crate::evaluate)
/// passes through untouched).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// Reading a file failed.
    #[error("i/o error reading {}: {source}", path.display())]
    Io {
        /// The file being read.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A line of a JSONL or TSV file could not be understood.
    #[error("{}:{line}: {reason}", path.display())]
    Parse {
        /// The file being read.
        path: PathBuf,
        /// The 1-based line number of the bad line.
        line: usize,
        /// What is wrong with it.
        reason: String,
        /// The JSON parser's error, for a line that is not the JSON expected.
        #[source]
        source: Option<serde_json::Error>,
    },
    /// A file the BEIR layout requires does not exist.
    #[error("missing file {}", path.display())]
    Missing {
        /// The file that was expected.
        path: PathBuf,
    },
    /// The qrels judge a query that `queries.jsonl` does not define.
    #[error("query id {query_id:?} is judged in {} but absent from the queries file", qrels.display())]
    UnresolvedQuery {
        /// The qrels file naming the query.
        qrels: PathBuf,
        /// The query id that has no text.
        query_id: String,
    },
}

impl EvalError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        let path = path.into();
        if source.kind() == io::ErrorKind::NotFound {
            EvalError::Missing { path }
        } else {
            EvalError::Io { path, source }
        }
    }
}

/// `Result` with [`EvalError`] as the error type.
pub type Result<T> = std::result::Result<T, EvalError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_is_send_sync_static() {
        fn assert_bounds<T: Send + Sync + 'static + std::error::Error>() {}
        assert_bounds::<EvalError>();
    }

    #[test]
    fn messages_are_lowercase_and_name_the_file() {
        let e =
            EvalError::Parse { path: PathBuf::from("q.jsonl"), line: 7, reason: "expected value".into(), source: None };
        assert_eq!(e.to_string(), "q.jsonl:7: expected value");
        let e = EvalError::io("x/corpus.jsonl", io::Error::from(io::ErrorKind::NotFound));
        assert!(matches!(e, EvalError::Missing { .. }));
        assert_eq!(e.to_string(), "missing file x/corpus.jsonl");
        let e = EvalError::io("f", io::Error::from(io::ErrorKind::PermissionDenied));
        assert!(e.to_string().starts_with("i/o error reading f: "));
    }
}
