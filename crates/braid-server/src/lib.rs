//! Braid's server: `braid serve` (a REST API and MCP over stateless Streamable HTTP), `braid mcp`
//! (MCP over stdio) and `braid token` (make and hash bearer tokens). The `braid` binary
//! (`braid-cli`) opens the index with its model and calls [`serve`], [`mcp_stdio`],
//! [`token_new`] and [`token_hash`]; nothing else is public.
//!
//! Both surfaces call one [`api::Engine`], which calls the library's `Index::search`,
//! `Index::record`: there is no second copy of the search logic. The principal of a request
//! comes only from its bearer token (HTTP) or the operator's command line (stdio).
//!
//! - `config`: the TOML file (bind address, limits, origins, token hashes → principals);
//!   `origin`: which browser origins may call (DNS-rebinding defence);
//! - `auth`: token hashing, constant-time lookup; `limit`: per-principal rate limits and
//!   counters (bounded maps); `address`: client addresses and per-address connection caps;
//! - `oauth` and `jwks`: JWT access tokens of configured issuers → principals, and the
//!   protected-resource metadata (`braid serve` as an OAuth 2.1 resource server);
//! - `api`: the shared search parameters and engine; `schema`: their JSON Schemas;
//! - `mcp`: the tools and resources on the official MCP SDK (rmcp), which speaks the protocol;
//!   `http`: REST and rmcp's Streamable HTTP transport; `stdio`: rmcp's line transport, with
//!   JSON-RPC batches split and joined around it;
//! - `write`: records written over REST, confined to the writer's tenant namespace;
//! - `openapi`: the description served at `/v1/openapi.json`.

mod address;
mod api;
mod auth;
mod config;
mod http;
mod jwks;
mod limit;
mod mcp;
mod memory;
mod oauth;
mod openapi;
mod origin;
mod resources;
mod schema;
mod stdio;
mod write;

use std::io::BufRead;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use braid::Principal;

/// The engine serving `index`: `k` up to `max_k`, record writes committed as `writes` says,
/// newer commits looked for every `reload`, and the tool catalogue in `tools` for
/// `search_tools`.
fn open(
    index: braid::Index,
    max_k: usize,
    writes: braid::GroupCommitOptions,
    reload: Option<Duration>,
    tools: Option<&Path>,
) -> Result<Arc<api::Engine>> {
    let mut engine = api::Engine::new(index.clone(), max_k).with_commit_options(writes);
    if let Some(file) = tools {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let catalogue = braid::ToolCatalogue::from_json(&text, index.embedder())
            .with_context(|| format!("tool catalogue {}", file.display()))?;
        engine = engine.with_tools(catalogue);
    }
    let engine = Arc::new(engine);
    if let Some(every) = reload {
        watch(&engine, every)?;
    }
    close_idle_writer(&engine)?;
    Ok(engine)
}

/// Closes the server's writer once it has not written for [`write::WRITER_IDLE`] (see
/// [`write::WriteLock`]), for as long as the engine lives.
fn close_idle_writer(engine: &Arc<api::Engine>) -> Result<()> {
    let engine = Arc::downgrade(engine);
    std::thread::Builder::new().name("braid-writer".into()).spawn(move || loop {
        std::thread::sleep(write::WRITER_IDLE / 5);
        let Some(engine) = engine.upgrade() else { return };
        match engine.writes().release_idle(write::WRITER_IDLE) {
            Ok(true) => {
                let stats = engine.writes().stats();
                tracing::debug!(target: "braid::serve", commits = stats.commits, record_writes = stats.batches, paced = stats.paced, "closed the idle writer");
            }
            Ok(false) => {}
            Err(e) => tracing::warn!(target: "braid::serve", error = %e, "a merge failed while the idle writer closed; every commit stands"),
        }
    })?;
    Ok(())
}

/// The longest wait between two attempts to open a commit that failed to open.
const MAX_RELOAD_BACKOFF: Duration = Duration::from_secs(60);

/// Looks for a new commit every `every` and serves it (see [`api::Engine::refresh`]), for as
/// long as the engine lives. A commit that fails to open is tried again after `every`, then
/// after twice as long each time, up to [`MAX_RELOAD_BACKOFF`] (or `every` when longer), until
/// it opens or a newer one does; `/v1/health` says `"reload": "failing"` meanwhile.
fn watch(engine: &Arc<api::Engine>, every: Duration) -> Result<()> {
    let engine = Arc::downgrade(engine);
    std::thread::Builder::new().name("braid-reload".into()).spawn(move || {
        let mut wait = every;
        loop {
            std::thread::sleep(wait);
            let Some(engine) = engine.upgrade() else { return };
            match engine.refresh() {
                Ok(swapped) => {
                    if swapped {
                        tracing::info!(target: "braid::serve", commit = engine.commit().as_deref().unwrap_or("-"), "serving a new commit");
                    }
                    wait = every;
                }
                Err(e) => {
                    wait = (wait * 2).min(MAX_RELOAD_BACKOFF.max(every));
                    tracing::warn!(target: "braid::serve", error = %format!("{e:#}"), attempts = engine.reload_failures(), retry_in_ms = wait.as_millis() as u64, "a new commit could not be opened; still serving the previous one, retrying");
                }
            }
        }
    })?;
    Ok(())
}

/// `braid serve`: serves the index `open_index` opens (given the configuration's `ef_search`)
/// until SIGINT or SIGTERM, as `config_file` says, on `bind` when given.
///
/// # Errors
/// When the configuration or the index cannot be read, or the address cannot be bound.
pub fn serve(
    open_index: impl FnOnce(Option<usize>) -> Result<braid::Index>,
    config_file: &Path,
    bind: Option<SocketAddr>,
) -> Result<()> {
    let mut config = config::Config::load(config_file)?;
    if let Some(bind) = bind {
        config.bind = bind;
    }
    let tools = config.tool_catalogue.as_ref().map(|f| config_file.parent().unwrap_or(Path::new(".")).join(f));
    let engine = open(
        open_index(config.ef_search)?,
        config.limits.max_k,
        config.commit_options(),
        config.reload_every(),
        tools.as_deref(),
    )?;
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
        serve_connections(listener, router, &config.limits).await;
        Ok(())
    })
}

/// Accepts connections until SIGINT or SIGTERM, then lets open ones finish (for at most the
/// request time budget). Before any byte is read, a connection needs one of
/// `limits.max_connections` slots and one of its client address's
/// `limits.max_connections_per_address` (past either cap it is closed at once: one client
/// cannot hold every slot), and each request head
/// must arrive within `limits.header_read_timeout_ms` of the connection's start or of the
/// previous answer (hyper's header-read timeout; slower connections are closed). The body is
/// bounded by the request's time budget (see `http`).
async fn serve_connections(listener: tokio::net::TcpListener, router: axum::Router, limits: &config::Limits) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let per_address = address::ConnectionCounts::new(limits.per_address());
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout());
    let mut stop = std::pin::pin!(shutdown());
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: wait a little rather than spin.
                    tracing::warn!(target: "braid::serve", error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut stop => break,
        };
        let client = address::ClientKey::of(peer.ip());
        let Some(held) = per_address.hold(client) else {
            tracing::debug!(target: "braid::serve", "per-address connection cap reached; closing a new connection");
            drop(stream);
            continue;
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            tracing::debug!(target: "braid::serve", "connection cap reached; closing a new connection");
            drop(stream);
            continue;
        };
        let service = WithPeer {
            inner: hyper_util::service::TowerToHyperService::new(router.clone()),
            peer: address::Peer(client),
        };
        let connection = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            let _slot = (slot, held);
            if let Err(e) = connection.await {
                tracing::debug!(target: "braid::serve", error = %e, "connection closed");
            }
        });
    }
    if tokio::time::timeout(limits.timeout(), graceful.shutdown()).await.is_err() {
        tracing::warn!(target: "braid::serve", "connections still open at shutdown; closing them");
    }
}

/// A connection's service: puts the client's address into each request's extensions (the
/// unauthenticated bucket keys on it), then hands the request to the router.
struct WithPeer<S> {
    inner: S,
    peer: address::Peer,
}

impl<S, B> hyper::service::Service<hyper::Request<B>> for WithPeer<S>
where
    S: hyper::service::Service<hyper::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn call(&self, mut request: hyper::Request<B>) -> Self::Future {
        request.extensions_mut().insert(self.peer);
        self.inner.call(request)
    }
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

/// `braid mcp`: MCP over stdin/stdout on `index`, as `principal` (the operator's own tokens),
/// with the memory scope of `owner` (`owner:local:<owner>`) and the write right when `write`,
/// and `search_tools` over the catalogue in `tools` when given.
///
/// # Errors
/// When the principal or the catalogue is refused, or stdio fails.
pub fn mcp_stdio(
    index: braid::Index,
    principal: &[String],
    owner: Option<&str>,
    write: bool,
    tools: Option<&Path>,
) -> Result<()> {
    // Owner tokens come from an identity, never from a token list (as in the configuration).
    if let Some(token) = principal.iter().find(|t| t.trim().starts_with(braid::OWNER_PREFIX)) {
        anyhow::bail!("--principal {token:?}: owner tokens are not given as tokens; use --owner NAME");
    }
    let owner = match owner.map(str::trim) {
        Some("") => anyhow::bail!("--owner needs a name"),
        Some(name) => Some(format!("{}local:{name}", braid::OWNER_PREFIX)),
        None => None,
    };
    let reload = Duration::from_secs_f64(config::DEFAULT_RELOAD_SECONDS);
    let engine =
        open(index, config::Limits::default().max_k, braid::GroupCommitOptions::default(), Some(reload), tools)?;
    // The operator's command line is a verified source of principal tokens.
    let principal = Principal::try_from_verified_tokens(principal.iter().map(String::as_str).chain(owner.as_deref()))
        .context("--principal")?;
    let server = mcp::Braid::stdio(engine, mcp::Local { principal, write });
    // One thread: requests are picked up in the order they arrive (see `Braid::stdio`).
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async move {
        let (stdin, stdout) = rmcp::transport::stdio();
        stdio::serve(server, stdin, stdout).await.context("MCP over stdio")
    })
}

/// `braid token new`: a fresh token on stderr (shown once, stored nowhere) and, on stdout, the
/// `[[token]]` entry with its hash, ready to append to the configuration; `write` adds
/// `write = true`.
///
/// # Errors
/// When the operating system gives no randomness.
pub fn token_new(name: &str, tenant: Option<&str>, principal: &[String], write: bool) -> Result<()> {
    let token = auth::new_token()?;
    let mut entry = format!("[[token]]\nname = {}\nsha256 = \"{}\"\n", toml_string(name), auth::hash_token(&token));
    if let Some(tenant) = tenant {
        entry.push_str(&format!("tenant = {}\n", toml_string(tenant)));
    }
    let tokens: Vec<String> = principal.iter().map(|t| toml_string(t)).collect();
    entry.push_str(&format!("principal = [{}]\n", tokens.join(", ")));
    if write {
        entry.push_str("write = true\n");
    }
    // Checked as `braid serve` will check it, so that an entry it would refuse is never printed.
    let config: config::Config = toml::from_str(&entry).context("the token's entry")?;
    config.validate()?;
    eprintln!("token: {token}");
    eprintln!("(give it to the client; only its hash goes into the configuration)");
    print!("{entry}");
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
