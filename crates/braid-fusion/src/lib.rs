//! Braid's fusion stage: braids the ranked lists of the recall legs into one — [`fuse`] for
//! every method, scores on `[0, 1]` — by reciprocal
//! rank fusion ([`rrf`], the default), by [`blend`] (lexical evidence counted once, then a
//! convex combination with the semantic leg's normalised score) or by a weighted average of
//! normalised scores ([`normalised`]: min-max, z-score or distribution-based).
//!
//! Reciprocal rank fusion (RRF) gives a candidate at 1-based rank `r` of a leg with weight `w`
//! the contribution `w / (k + r)`; a candidate's fused score is the sum over the legs that found
//! it. Every fused candidate keeps an explain record: each leg's rank, raw score and
//! contribution. Fusion is pure: it sees only what the legs returned, and the legs only ever
//! return records of the request's allowed set.
//!
//! ```
//! use braid_core::Leg;
//! use braid_fusion::{rrf, LegList};
//!
//! let lexical = LegList::new(Leg::Lexical, 1.0, vec![(7, 12.5), (3, 9.0)]);
//! let fuzzy = LegList::new(Leg::Fuzzy, 1.0, vec![(3, 4.0), (9, 2.0)]);
//! let fused = rrf(&[lexical, fuzzy], 60.0);
//! assert_eq!(fused[0].ord, 3); // found by both legs
//! assert_eq!(fused[0].legs.len(), 2);
//! ```
#![deny(missing_docs)]

mod blend;
mod candidates;
mod fuse;
mod normalised;
mod rrf;

pub use blend::{blend, BlendParams};
pub use fuse::{fuse, FuseParams};
pub use normalised::{normalised, Normalisation};
pub use rrf::{rrf, rrf_ceiling, Fused, LegList, LegScore, LegScores};
