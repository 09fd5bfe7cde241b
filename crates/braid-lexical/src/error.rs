//! The lexical engine's failures, with their causes, and where they become
//! [`braid_core::Error`]s.
//!
//! Inside the crate a failure keeps its cause as a typed [`LexicalError`] (tantivy's,
//! `fst`'s or an I/O error, as its `#[source]`). It becomes a
//! [`braid_core::Error::LexicalEngine`] at the crate's boundary, in one place ([`lexical`]),
//! with the [`LexicalError`] as its source: the cause stays reachable through
//! `std::error::Error::source`.

use braid_core::Error;
use tantivy::directory::error::OpenDirectoryError;
use tantivy::TantivyError;

/// A failure inside the lexical engine, with its cause.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LexicalError {
    /// Tantivy could not read, search or write the index.
    #[error(transparent)]
    Tantivy(#[from] TantivyError),
    /// The index's directory could not be opened.
    #[error(transparent)]
    Directory(#[from] OpenDirectoryError),
    /// A column of the index could not be read.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The vocabulary's word maps could not be built.
    #[error("vocabulary: {0}")]
    Vocabulary(#[source] fst::Error),
}

impl From<LexicalError> for Error {
    /// [`Error::LexicalEngine`], the lexical error kept as its source.
    fn from(e: LexicalError) -> Self {
        Error::lexical_engine(e)
    }
}

/// `e` as the [`Error::LexicalEngine`] the crate's public API returns.
pub(crate) fn lexical(e: impl Into<LexicalError>) -> Error {
    e.into().into()
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    /// The cause is kept as the source inside the crate and across its boundary, and its
    /// message crosses unchanged.
    #[test]
    fn keeps_the_cause_and_its_message() {
        let e = LexicalError::from(TantivyError::InvalidArgument("bad".into()));
        assert!(e.source().is_none(), "transparent: the tantivy error is the error itself");
        assert_eq!(e.to_string(), TantivyError::InvalidArgument("bad".into()).to_string());
        let io = LexicalError::from(std::io::Error::other("disk"));
        assert_eq!(lexical(io).to_string(), "lexical index error: disk");
        let fst = fst::Map::new(vec![1u8, 2, 3]).unwrap_err();
        let message = fst.to_string();
        let e = LexicalError::Vocabulary(fst);
        assert_eq!(e.source().map(|s| s.to_string()), Some(message.clone()));
        let crossed = lexical(e);
        assert_eq!(crossed.to_string(), format!("lexical index error: vocabulary: {message}"));
        let kept = crossed.source().expect("the lexical error is the source");
        assert_eq!(kept.source().map(|s| s.to_string()), Some(message));
    }
}
