//! The lexical engine's failures, with their causes, and where they become
//! [`braid_core::Error`]s.
//!
//! Inside the crate a failure keeps its cause as a typed [`LexicalError`] (tantivy's,
//! `fst`'s or an I/O error, as its `#[source]`). It becomes a [`braid_core::Error::Lexical`]
//! at the crate's boundary, in one place ([`lexical`]): that variant holds a message only, so
//! the cause's text is all that crosses it.

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
    /// [`Error::Lexical`] with the cause's message: the variant keeps no source (braid-core
    /// owns it), so this is the one place the lexical engine flattens an error to text.
    fn from(e: LexicalError) -> Self {
        Error::Lexical(e.to_string())
    }
}

/// `e` as the [`Error::Lexical`] the crate's public API returns.
pub(crate) fn lexical(e: impl Into<LexicalError>) -> Error {
    e.into().into()
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    /// The cause is kept as the source inside the crate, and its message crosses the boundary
    /// unchanged.
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
        match lexical(e) {
            Error::Lexical(text) => assert_eq!(text, format!("vocabulary: {message}")),
            other => panic!("{other:?}"),
        }
    }
}
