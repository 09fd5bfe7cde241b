//! Integration tests of the `braid` binary: `braid serve` over real HTTP on 127.0.0.1, and
//! `braid mcp` over stdio.

mod bulk_index;
mod fail_closed;
mod hardening;
mod ingest_access;
mod mcp_modern;
mod mcp_sdk;
mod mcp_stdio;
mod memory;
mod noninterference;
mod oauth;
mod search_flags;
mod serve;
mod support;
mod sync;
mod writes;
