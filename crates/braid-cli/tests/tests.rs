//! Integration tests of the `braid` binary: `braid serve` over real HTTP on 127.0.0.1, and
//! `braid mcp` over stdio.

mod bulk_index;
mod mcp_stdio;
mod serve;
mod support;
