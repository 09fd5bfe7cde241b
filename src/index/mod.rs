//! An index: its parts on disk or in memory, the models it was built with, and reloading.
//!
//! [`Index`] (`handle.rs`) owns what lives as long as the handle: the directory's [`Layout`],
//! the [`Models`] given to its [`IndexBuilder`] (`builder.rs`), the ordinal counter and the
//! current [`Parts`] (`parts.rs`) — one opened commit of the lexical index and the vector
//! store. [`Index::searcher`] takes one snapshot of them; [`Index::reload`] swaps in a newer
//! commit another process wrote. [`IndexConfig`] (`config.rs`) is what an index is created
//! with and keeps; [`Index::check`] (`check.rs`) verifies one on disk.
//!
//! [`Layout`]: crate::layout::Layout
//! [`Models`]: models::Models

mod builder;
mod check;
mod config;
mod handle;
mod models;
mod parts;

pub use builder::IndexBuilder;
pub use check::CheckReport;
pub use config::IndexConfig;
pub use handle::Index;
pub(crate) use models::VectorTuning;
pub(crate) use parts::{open_semantic, Parts};
