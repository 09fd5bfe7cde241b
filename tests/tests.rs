//! Integration tests of the `braid` facade: one binary, a module per concern.

mod boosts;
mod bulk;
mod cjk;
mod common;
mod crash;
mod facets;
mod fail_closed;
mod helpcenter;
mod hostile_input;
mod leaks;
mod lifecycle;
mod noninterference;
mod paging;
mod permissions;
mod quality;
mod recall;
mod rerank;
mod semantic;
mod supplied_vectors;
