//! Integration tests of the `braid` facade: one binary, a module per concern.

mod bulk;
mod cjk;
mod common;
mod crash;
mod fail_closed;
mod helpcenter;
mod hostile_input;
mod leaks;
mod lifecycle;
mod noninterference;
mod permissions;
mod quality;
mod recall;
mod rerank;
mod search_box;
mod seed_examples;
mod semantic;
mod supplied_vectors;
