//! `braid serve` (a REST API and MCP over stateless Streamable HTTP), `braid mcp` (MCP over
//! stdio) and `braid token` (make and hash bearer tokens).
//!
//! Both surfaces call one [`api::Engine`], which calls the library's `Index::search`,
//! `Index::record`: there is no second copy of the search logic. The principal of a request
//! comes only from its bearer token (HTTP) or the operator's command line (stdio).
//!
//! - `config`: the TOML file (bind address, limits, origins, token hashes → principals);
//! - `auth`: token hashing, constant-time lookup; `limit`: per-token rate limit;
//! - `oauth` and `jwks`: JWT access tokens of configured issuers → principals, and the
//!   protected-resource metadata (`braid serve` as an OAuth 2.1 resource server);
//! - `api`: the shared search parameters and engine; `schema`: their JSON Schemas;
//! - `mcp`: the protocol and the tools; `http` and `stdio`: its transports (and REST);
//! - `openapi`: the description served at `/v1/openapi.json`.

mod api;
mod auth;
mod config;
mod http;
mod jwks;
mod limit;
mod mcp;
mod oauth;
mod openapi;
mod schema;
mod stdio;

use std::io::BufRead;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use braid::{Index, Principal};

use crate::commands;

fn open(dir: &Path, model: Option<&str>, max_k: usize, reload: Option<Duration>) -> Result<Arc<api::Engine>> {
    let index = Index::open(dir).with_context(|| format!("opening index {}", dir.display()))?;
    commands::attach(&index, model)?;
    let engine = Arc::new(api::Engine::new(index, max_k));
    if let Some(every) = reload {
        watch(&engine, every)?;
    }
    Ok(engine)
}

/// Looks for a new commit every `every` and serves it (see [`api::Engine::refresh`]), for as
/// long as the engine lives.
fn watch(engine: &Arc<api::Engine>, every: Duration) -> Result<()> {
    let engine = Arc::downgrade(engine);
    std::thread::Builder::new().name("braid-reload".into()).spawn(move || loop {
        std::thread::sleep(every);
        let Some(engine) = engine.upgrade() else { return };
        match engine.refresh() {
            Ok(true) => tracing::info!(target: "braid::serve", "serving a new commit"),
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(target: "braid::serve", error = %format!("{e:#}"), "a new commit could not be opened; still serving the previous one")
            }
        }
    })?;
    Ok(())
}

/// `braid serve`: serves the index until SIGINT or SIGTERM.
///
/// # Errors
/// When the configuration or the index cannot be read, or the address cannot be bound.
pub fn serve(dir: &Path, config_file: &Path, bind: Option<SocketAddr>, model: Option<&str>) -> Result<()> {
    let mut config = config::Config::load(config_file)?;
    if let Some(bind) = bind {
        config.bind = bind;
    }
    let engine = open(dir, model, config.limits.max_k, config.reload_every())?;
    let router = http::router(engine, &config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let listener =
            tokio::net::TcpListener::bind(config.bind).await.with_context(|| format!("binding {}", config.bind))?;
        let addr = listener.local_addr()?;
        if !addr.ip().is_loopback() {
            eprintln!("warning: listening beyond loopback; put TLS in front of this server");
        }
        let issuers = config.oauth.as_ref().map_or(0, |o| o.issuers.len());
        eprintln!(
            "braid serve: listening on http://{addr} (tokens: {}, oauth issuers: {issuers})",
            config.tokens.len()
        );
        axum::serve(listener, router).with_graceful_shutdown(shutdown()).await.context("serving")
    })
}

async fn shutdown() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => return std::future::pending().await,
        };
        tokio::select! {
            _ = interrupt => {},
            _ = terminate.recv() => {},
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
    eprintln!("braid serve: shutting down");
}

/// `braid mcp`: MCP over stdin/stdout as `principal` (the operator's own tokens).
///
/// # Errors
/// When the index cannot be opened or stdio fails.
pub fn mcp_stdio(dir: &Path, principal: &[String], model: Option<&str>) -> Result<()> {
    let reload = Duration::from_secs_f64(config::DEFAULT_RELOAD_SECONDS);
    let engine = open(dir, model, config::Limits::default().max_k, Some(reload))?;
    let server = mcp::Mcp::new(engine);
    // The operator's command line is a verified source of principal tokens.
    let principal = Principal::from_verified_tokens(principal);
    stdio::run(&server, &principal, std::io::stdin().lock(), std::io::stdout().lock())
}

/// `braid token new`: a fresh token on stderr (shown once, stored nowhere) and, on stdout, the
/// `[[token]]` entry with its hash, ready to append to the configuration.
///
/// # Errors
/// When the operating system gives no randomness.
pub fn token_new(name: &str, tenant: Option<&str>, principal: &[String]) -> Result<()> {
    let token = auth::new_token()?;
    eprintln!("token: {token}");
    eprintln!("(give it to the client; only its hash goes into the configuration)");
    println!("[[token]]");
    println!("name = {}", toml_string(name));
    println!("sha256 = \"{}\"", auth::hash_token(&token));
    if let Some(tenant) = tenant {
        println!("tenant = {}", toml_string(tenant));
    }
    let tokens: Vec<String> = principal.iter().map(|t| toml_string(t)).collect();
    println!("principal = [{}]", tokens.join(", "));
    Ok(())
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// `braid token hash`: the SHA-256 of the token on the first line of stdin (so that it never
/// shows in a process list or a shell history).
///
/// # Errors
/// When stdin holds no token or a short one.
pub fn token_hash() -> Result<()> {
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    let token = line.trim();
    if token.chars().count() < auth::MIN_TOKEN_CHARS {
        bail!("give a token of at least {} characters on stdin (`braid token new` makes one)", auth::MIN_TOKEN_CHARS);
    }
    println!("{}", auth::hash_token(token));
    Ok(())
}
