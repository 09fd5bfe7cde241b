//! The HTTP surface: routes, the middleware every request passes (a random request id and a
//! log span, `Origin` check, size limit, time budget; then, on protected routes, bearer token →
//! caller and the caller's rate limit), the REST handlers, and MCP on `/mcp`: rmcp's stateless
//! Streamable HTTP service (answers in `application/json`, no sessions) over [`mcp::Braid`],
//! with the 2025-03-26 batches rmcp does not read split here. The time budget is also the
//! deadline of the request's search: past it the search stops at its next check and frees its
//! concurrency slot.

use std::sync::Arc;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{from_fn_with_state, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Extension, Router};
use rmcp::model::ErrorCode;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{json, Value};
use tokio::sync::Semaphore;
use tracing::Instrument;

use super::address::{ClientKey, Peer};
use super::api::{self, Engine, Failure, SearchParams};
use super::auth::{Authenticator, Caller, Refusal};
use super::config::{Config, Limits};
use super::limit::Quotas;
use super::mcp::{self, Braid, Deadline};
use super::memory::{ForgetParams, UpdateParams, Who};
use super::oauth;
use super::openapi;
use super::origin::Origins;
use super::write::{self, WriteFailure, Written};

/// What every handler shares.
pub struct AppState {
    engine: Arc<Engine>,
    mcp: McpService,
    auth: Arc<Authenticator>,
    /// Per client address: the bucket of requests with a token that is not valid (and of the
    /// key fetches tokens cause), bounded like every map of quotas.
    unauthenticated: Quotas<ClientKey>,
    permits: Arc<Semaphore>,
    limits: Limits,
    origins: Origins,
    openapi: Value,
    started: Instant,
}

/// rmcp's Streamable HTTP service: stateless (no session manager, no `Mcp-Session-Id`).
type McpService = StreamableHttpService<Braid, NeverSessionManager>;

/// The MCP endpoint over `engine`: stateless, answers in `application/json`, bodies up to
/// `max_body` bytes, tool calls sharing `permits` with REST. Host and Origin checks are left to
/// [`guard`] (Braid's own [`Origins`], the same for REST and MCP).
fn mcp_service(engine: Arc<Engine>, permits: Arc<Semaphore>, max_body: usize) -> McpService {
    let server = Braid::http(engine, permits);
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_sse_retry(None)
        .disable_allowed_hosts()
        .with_max_request_body_bytes(max_body);
    StreamableHttpService::new(move || Ok(server.clone()), Arc::new(NeverSessionManager::default()), config)
}

/// A request id: 64 random bits in hex, fresh per request, so that ids say nothing about
/// other callers' traffic (a counter would count it). `None` when the operating system gives
/// no randomness; the request then goes without one.
fn request_id() -> Option<String> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The routes and their middleware over `engine`, configured by `config`.
///
/// # Errors
/// When the token map cannot be built from the configuration.
pub fn router(engine: Arc<Engine>, config: &Config) -> anyhow::Result<Router> {
    let limits = config.limits.clone();
    let permits = Arc::new(Semaphore::new(limits.concurrency()));
    let state = Arc::new(AppState {
        mcp: mcp_service(Arc::clone(&engine), Arc::clone(&permits), limits.max_body_bytes),
        auth: Arc::new(Authenticator::new(config)?),
        unauthenticated: Quotas::new(MAX_TRACKED_ADDRESSES),
        permits,
        openapi: openapi::document(engine.max_k),
        origins: Origins::new(config.allowed_origins.as_deref(), config.bind),
        started: Instant::now(),
        engine,
        limits,
    });
    let auth = from_fn_with_state(Arc::clone(&state), authorize);
    // `route_layer` on a method router: only the POST/GET handlers need a token, so other
    // methods get their 405 (with `Allow`) before authentication.
    let mut router = Router::new();
    // RFC 9728: where clients learn which authorization servers issue tokens for this server.
    for path in state.auth.oauth().map(oauth::OAuthConfig::metadata_paths).unwrap_or_default() {
        router = router.route(&path, get(resource_metadata));
    }
    Ok(router
        .route("/v1/search", post(rest_search).route_layer(auth.clone()))
        .route("/v1/stats", get(rest_stats).route_layer(auth.clone()))
        .route("/v1/records", post(rest_upsert).route_layer(auth.clone()))
        .route("/v1/records/delete", post(rest_delete_many).route_layer(auth.clone()))
        .route("/v1/records/{id}", delete(rest_delete_one).route_layer(auth.clone()))
        .route("/v1/memories", post(rest_remember).route_layer(auth.clone()))
        .route("/v1/memories/recall", post(rest_recall).route_layer(auth.clone()))
        .route("/v1/memories/forget", post(rest_forget).route_layer(auth.clone()))
        .route("/v1/memories/{id}", delete(rest_forget_one).put(rest_update).route_layer(auth.clone()))
        .route("/mcp", post(mcp_post).route_layer(auth))
        .route("/v1/health", get(health))
        .route("/v1/openapi.json", get(openapi_document))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(state.limits.max_body_bytes))
        .layer(from_fn_with_state(Arc::clone(&state), guard))
        .with_state(state))
}

type Shared = Arc<AppState>;

/// The most client addresses whose unauthenticated buckets are kept at once (least recently
/// used go first).
pub const MAX_TRACKED_ADDRESSES: usize = 65_536;

/// A JSON response.
fn json_response(status: StatusCode, value: &Value) -> Response {
    let body = serde_json::to_vec(value).unwrap_or_default();
    (status, [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response()
}

/// The error body of every non-MCP failure: `{"error": {"code", "message"}}`.
fn failure(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    json_response(status, &json!({ "error": { "code": code, "message": message.into() } }))
}

fn retry_after(mut response: Response, seconds: u64) -> Response {
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds.max(1)));
    response
}

/// The routes by name, for logs: never the raw path, which a client chooses.
fn route_name(path: &str) -> &'static str {
    const ROUTES: [&str; 10] = [
        "/v1/search",
        "/v1/stats",
        "/v1/records",
        "/v1/records/delete",
        "/v1/memories",
        "/v1/memories/recall",
        "/v1/memories/forget",
        "/v1/health",
        "/v1/openapi.json",
        "/mcp",
    ];
    match ROUTES.into_iter().find(|r| *r == path) {
        Some(route) => route,
        None if path.starts_with("/v1/records/") => "/v1/records/{id}",
        None if path.starts_with("/v1/memories/") => "/v1/memories/{id}",
        None => "other",
    }
}

/// Every request: an id and a log span (route, status, latency, the caller's label — never
/// a token, a query or document text), the `Origin` check, the size limit by
/// `Content-Length`, and the time budget.
async fn guard(State(s): State<Shared>, mut request: Request, next: Next) -> Response {
    let id = request_id();
    let route = route_name(request.uri().path());
    let method = request.method().clone();
    let span = tracing::info_span!(target: "braid::serve", "request", id = id.as_deref().unwrap_or("-"), %method, route, principal = tracing::field::Empty);
    let started = Instant::now();
    request.extensions_mut().insert(Deadline(started + s.limits.timeout()));
    let sent_json = is_json(request.headers());
    let mut response = async {
        if let Some(origin) = request.headers().get(header::ORIGIN) {
            if !s.origins.allows(origin.to_str().unwrap_or("")) {
                return failure(StatusCode::FORBIDDEN, "forbidden_origin", "this origin may not call the server");
            }
        }
        // The REST routes answer JSON alone (a health probe is answered whatever it accepts).
        if route.starts_with("/v1/") && route != "/v1/health" && !accepts_json(request.headers()) {
            return failure(StatusCode::NOT_ACCEPTABLE, "not_acceptable", "this route answers application/json only");
        }
        // A compressed body would be read as it is, and fail as something else.
        let encoded = request.headers().get_all(header::CONTENT_ENCODING).iter();
        if encoded
            .flat_map(|v| v.to_str().unwrap_or("?").split(','))
            .any(|c| !c.trim().eq_ignore_ascii_case("identity"))
        {
            return failure(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "a Content-Encoding other than identity is not accepted: send the body uncompressed",
            );
        }
        let declared = request.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if declared.is_some_and(|n| n > s.limits.max_body_bytes as u64) {
            return too_large(s.limits.max_body_bytes);
        }
        match tokio::time::timeout(s.limits.timeout(), next.run(request)).await {
            Ok(response) => response,
            Err(_) => timed_out(&s.limits),
        }
    }
    .instrument(span.clone())
    .await;
    if response.status().is_client_error() && !is_json(response.headers()) {
        response = typed_error(response, route == "/mcp", sent_json).await;
    }
    let status = response.status().as_u16();
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    span.in_scope(|| tracing::info!(target: "braid::serve", status, ms = %format_args!("{ms:.3}"), "served"));
    if let Some(value) = id.and_then(|id| HeaderValue::from_str(&id).ok()) {
        response.headers_mut().insert("x-request-id", value);
    }
    response
}

/// Whether the request's `Accept` (absent: anything) takes JSON.
fn accepts_json(headers: &HeaderMap) -> bool {
    let mut accepts = headers.get_all(header::ACCEPT).iter().peekable();
    if accepts.peek().is_none() {
        return true;
    }
    accepts.flat_map(|v| v.to_str().unwrap_or("").split(',')).any(|range| {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let refused =
            parts.any(|p| matches!(p.trim().strip_prefix("q="), Some(q) if q.trim().parse::<f32>() == Ok(0.0)));
        !refused && matches!(media.as_str(), "application/json" | "application/*" | "*/*")
    })
}

/// A client error the framework or the MCP SDK answered in plain text (a method not allowed, a
/// path that does not decode, a body that is not a JSON-RPC message), answered as every other
/// error is: `{"error": {"code", "message"}}`, or on `/mcp` a JSON-RPC error (`-32600`, id
/// `null`), where a JSON body that is not a JSON-RPC message is a 400 rather than the SDK's
/// 415. The status and headers (`Allow`) are kept.
async fn typed_error(response: Response, mcp: bool, sent_json: bool) -> Response {
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 16 * 1024).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_string();
    let message = if text.is_empty() { parts.status.canonical_reason().unwrap_or("error").to_string() } else { text };
    let value = if mcp {
        if parts.status == StatusCode::UNSUPPORTED_MEDIA_TYPE && sent_json {
            parts.status = StatusCode::BAD_REQUEST;
        }
        mcp::error(Value::Null, ErrorCode::INVALID_REQUEST, message)
    } else {
        let code = match parts.status {
            StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
            StatusCode::NOT_FOUND => "not_found",
            StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
            StatusCode::NOT_ACCEPTABLE => "not_acceptable",
            StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
            _ => "bad_request",
        };
        json!({"error": {"code": code, "message": message}})
    };
    parts.headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(serde_json::to_vec(&value).unwrap_or_default()))
}

fn too_large(max: usize) -> Response {
    failure(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", format!("the request body is over {max} bytes"))
}

/// Protected routes: the bearer token decides the caller (401 without a valid one), then the
/// caller's own token bucket (429 with `Retry-After` when empty).
///
/// A request with no token at all is answered 401 with the challenge at once: it costs nothing
/// and a client needs that answer to find the authorization server. A token that is not valid,
/// and each key fetch a token needs, are charged to the bucket of the client's address
/// (`limits.unauthenticated_*`): past it such requests get 429 (with the challenge too), so
/// guessing tokens and forging them to make the server fetch keys are slow, and one address's
/// flood never stands in another's way.
async fn authorize(State(s): State<Shared>, mut request: Request, next: Next) -> Response {
    // Two credentials are refused rather than one of them chosen: which one a proxy or a
    // client library puts first is theirs to decide.
    if request.headers().get_all(header::AUTHORIZATION).iter().nth(1).is_some() {
        return failure(StatusCode::BAD_REQUEST, "bad_request", "send one Authorization header, not several");
    }
    let presented = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).map(str::to_string);
    let client = request.extensions().get::<Peer>().map_or_else(ClientKey::unknown, |p| p.0);
    let verified = if !Authenticator::presents_token(presented.as_deref()) {
        Err(Refusal::Missing)
    } else if s.auth.oauth().is_some() {
        // A JWT may need its issuer's keys read or fetched: off the async workers.
        let state = Arc::clone(&s);
        tokio::task::spawn_blocking(move || {
            let may_fetch = || unauthenticated_bucket(&state, client).is_ok();
            state.auth.verify(presented.as_deref(), &may_fetch)
        })
        .await
        .unwrap_or(Err(Refusal::Unavailable))
    } else {
        s.auth.verify(presented.as_deref(), &|| false)
    };
    let caller = match verified {
        Ok(caller) => caller,
        Err(refusal) => return refused(&s, client, &refusal),
    };
    tracing::Span::current().record("principal", caller.name.as_str());
    if let Err(wait) = caller.quota.admit(Instant::now()) {
        let response = failure(StatusCode::TOO_MANY_REQUESTS, "rate_limited", "too many requests for this token");
        return retry_after(response, wait.as_secs_f64().ceil() as u64);
    }
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// Takes one request from `client`'s bucket of requests without a valid token.
fn unauthenticated_bucket(s: &AppState, client: ClientKey) -> Result<(), std::time::Duration> {
    let now = Instant::now();
    let rate = (s.limits.unauthenticated_per_second, s.limits.unauthenticated_burst);
    s.unauthenticated.get(&client, rate, now).check(now)
}

/// The answer to a request without a caller: 401/403/503 with the challenge, or 429 when a
/// presented token that is not valid finds its address's bucket empty. A request without a
/// token is never charged.
fn refused(s: &AppState, client: ClientKey, refusal: &Refusal) -> Response {
    let throttled = match refusal {
        Refusal::Missing => None,
        Refusal::Throttled => Some(std::time::Duration::from_secs(1)),
        _ => unauthenticated_bucket(s, client).err(),
    };
    let mut response = match (throttled, refusal) {
        (Some(wait), _) => retry_after(
            failure(StatusCode::TOO_MANY_REQUESTS, "rate_limited", "too many requests without a valid token"),
            wait.as_secs_f64().ceil() as u64,
        ),
        (None, Refusal::Missing) => failure(StatusCode::UNAUTHORIZED, "unauthorized", "a bearer token is required"),
        (None, Refusal::Invalid(why)) => failure(StatusCode::UNAUTHORIZED, "unauthorized", why.clone()),
        (None, Refusal::InsufficientScope) => {
            failure(StatusCode::FORBIDDEN, "insufficient_scope", "the access token lacks a scope this server requires")
        }
        (None, Refusal::Unavailable | Refusal::Throttled) => retry_after(
            failure(
                StatusCode::SERVICE_UNAVAILABLE,
                "keys_unavailable",
                "the token's issuer keys cannot be loaded now; try again",
            ),
            1,
        ),
    };
    if let Ok(challenge) = HeaderValue::from_str(&s.auth.challenge(refusal)) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
    }
    response
}

/// The answer to a request past its time budget.
fn timed_out(limits: &Limits) -> Response {
    retry_after(
        failure(StatusCode::SERVICE_UNAVAILABLE, "timeout", format!("no answer within {} ms", limits.timeout_ms)),
        1,
    )
}

/// Runs blocking work (a search, a read) on the blocking pool, at most `max_concurrent` at a
/// time, with the request's deadline as the deadline of its searches (see
/// [`api::with_deadline`]): work past it stops at the library's next check and gives its slot
/// back. Work whose slot came only after the deadline does not start. Its searches report
/// stage timings only when `timings` (an operator's request; see [`api::with_timings`]).
async fn blocking<T: Send + 'static>(
    s: &Shared,
    deadline: Deadline,
    timings: bool,
    work: impl FnOnce(&AppState) -> T + Send + 'static,
) -> Result<T, Response> {
    let internal = || failure(StatusCode::INTERNAL_SERVER_ERROR, "internal", Failure::Internal.message());
    let permit = Arc::clone(&s.permits).acquire_owned().await.map_err(|_| internal())?;
    if Instant::now() >= deadline.0 {
        return Err(timed_out(&s.limits));
    }
    let state = Arc::clone(s);
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        api::with_deadline(deadline.0, || api::with_timings(timings, || work(&state)))
    })
    .await
    .map_err(|e| {
        tracing::error!(target: "braid::serve", error = %e, "request task failed");
        internal()
    })
}

/// Whether the request says its body is JSON.
fn is_json(headers: &HeaderMap) -> bool {
    let media = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    media.split(';').next().is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
}

/// The request body, or the 413/400 answer.
fn read_body(body: Result<Bytes, BytesRejection>, s: &AppState) -> Result<Bytes, Box<Response>> {
    body.map_err(|rejection| {
        Box::new(match rejection.status() {
            StatusCode::PAYLOAD_TOO_LARGE => too_large(s.limits.max_body_bytes),
            status => failure(status, "bad_request", rejection.body_text()),
        })
    })
}

fn json_body_required() -> Response {
    failure(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        "send the body as Content-Type: application/json",
    )
}

/// A batch of `n` items (tool calls, records) pays one token per item, all or nothing: the
/// request paid for the first, so `n - 1` more are taken; 429 when the bucket lacks them.
fn pay_batch(caller: &Caller, n: usize, what: &str) -> Result<(), Box<Response>> {
    if n <= 1 {
        return Ok(());
    }
    let extra = u32::try_from(n - 1).unwrap_or(u32::MAX);
    caller.quota.take(extra, Instant::now()).map_err(|refused| {
        let message = if refused.can_ever {
            format!("a batch of {n} {what} is more than this token's rate limit allows now")
        } else {
            format!("a batch of {n} {what} is more than this token's burst: send fewer per batch")
        };
        let response = failure(StatusCode::TOO_MANY_REQUESTS, "rate_limited", message);
        Box::new(retry_after(response, refused.wait.as_secs_f64().ceil().min(86_400.0) as u64))
    })
}

/// The body of `POST /v1/records`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Upserts {
    /// Records as `braid index` reads a JSONL line (`vector` optional).
    records: Vec<Value>,
}

/// The body of `POST /v1/records/delete`: ids, or a filter (one of the two).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Deletes {
    /// Ids, short or full, in the caller's namespace.
    #[serde(default)]
    ids: Vec<String>,
    /// A filter: the caller's records (of its namespace, memories aside) it admits, at most
    /// [`write::MAX_BATCH`] of them per request.
    #[serde(default)]
    filter: Option<braid::Filter>,
}

/// The answer to a refused write.
fn write_refused(f: &WriteFailure) -> Response {
    match f {
        WriteFailure::Forbidden(m) => failure(StatusCode::FORBIDDEN, "forbidden", m.clone()),
        WriteFailure::BadRequest(m) => failure(StatusCode::BAD_REQUEST, "bad_request", m.clone()),
        WriteFailure::NotFound(m) => failure(StatusCode::NOT_FOUND, "not_found", m.clone()),
        WriteFailure::Busy => retry_after(failure(StatusCode::SERVICE_UNAVAILABLE, "busy", f.message()), 1),
        WriteFailure::Internal => failure(StatusCode::INTERNAL_SERVER_ERROR, "internal", f.message()),
    }
}

/// Whether `caller` may write, and its namespace; checked before the body is read, so a
/// caller without the right learns nothing from its body.
fn writer_namespace(caller: &Caller) -> Result<String, WriteFailure> {
    if !caller.write {
        return Err(WriteFailure::Forbidden(
            "this token may not write (a token with write = true, or the OAuth write scope)".into(),
        ));
    }
    write::namespace(&caller.principal)
}

/// The batch bound shared by upserts and deletes.
fn check_batch(n: usize, what: &str) -> Result<(), WriteFailure> {
    if n == 0 || n > write::MAX_BATCH {
        return Err(WriteFailure::BadRequest(format!("send 1 to {} {what} per request (got {n})", write::MAX_BATCH)));
    }
    Ok(())
}

/// Runs a write (`records` upserted, `ids` deleted) for `caller` on the blocking pool and
/// answers with the commit that holds it.
async fn run_write(
    s: Shared,
    caller: Arc<Caller>,
    deadline: Deadline,
    namespace: String,
    records: Vec<Value>,
    ids: Vec<String>,
) -> Response {
    let n = records.len() + ids.len();
    if let Err(response) = pay_batch(&caller, n, if records.is_empty() { "ids" } else { "records" }) {
        return *response;
    }
    let written = blocking(&s, deadline, false, move |st| {
        let index = st.engine.index();
        let mut stored = Vec::with_capacity(records.len());
        for (i, document) in records.into_iter().enumerate() {
            stored.push(write::admit(&index, &caller.principal, &namespace, &format!("records[{i}]"), document)?);
        }
        let deletes = ids.iter().map(|id| write::stored_id(&namespace, id)).collect::<Result<Vec<_>, _>>()?;
        let ids = stored.iter().map(|r| r.id.clone()).chain(deletes.iter().cloned()).collect();
        let commit = st.engine.writes().write(stored, deletes)?;
        Ok::<_, WriteFailure>(Written { commit, ids })
    })
    .await;
    match written {
        Ok(Ok(written)) => json_response(StatusCode::OK, &serde_json::to_value(written).unwrap_or(Value::Null)),
        Ok(Err(f)) => write_refused(&f),
        Err(response) => response,
    }
}

/// The writer's namespace and its request body, parsed: the write right first (so a caller
/// without it learns nothing from its body), then JSON, size and shape; 403/415/413/400 else.
fn write_request<T: serde::de::DeserializeOwned>(
    s: &AppState,
    caller: &Caller,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
    what: &str,
) -> Result<(String, T), Box<Response>> {
    let namespace = writer_namespace(caller).map_err(|f| Box::new(write_refused(&f)))?;
    if !is_json(headers) {
        return Err(Box::new(json_body_required()));
    }
    let body = read_body(body, s)?;
    Ok((namespace, parse_object(&body, what)?))
}

/// A request body parsed as `T`, which must be a JSON object (serde would also read a struct
/// from an array of its fields in order, `["refund", 3]`); 400 else.
fn parse_object<T: serde::de::DeserializeOwned>(body: &[u8], what: &str) -> Result<T, Box<Response>> {
    let bad = |why: String| {
        Box::new(failure(StatusCode::BAD_REQUEST, "bad_request", format!("invalid {what} request: {why}")))
    };
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(bad("the body must be a JSON object".into()));
    }
    serde_json::from_slice(body).map_err(|e| bad(e.to_string()))
}

/// `POST /v1/records`: upserts a batch of records in the caller's namespace, in one commit.
async fn rest_upsert(
    State(s): State<Shared>,
    Extension(caller): Extension<Arc<Caller>>,
    Extension(deadline): Extension<Deadline>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let (namespace, upserts) = match write_request::<Upserts>(&s, &caller, &headers, body, "records") {
        Ok(request) => request,
        Err(response) => return *response,
    };
    if let Err(f) = check_batch(upserts.records.len(), "records") {
        return write_refused(&f);
    }
    run_write(s, caller, deadline, namespace, upserts.records, Vec::new()).await
}

/// `POST /v1/records/delete`: deletes records of the caller's namespace by id, in one commit.
/// Ids that hold no record are deleted all the same (the answer never says which existed).
async fn rest_delete_many(
    State(s): State<Shared>,
    Extension(caller): Extension<Arc<Caller>>,
    Extension(deadline): Extension<Deadline>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let (namespace, deletes) = match write_request::<Deletes>(&s, &caller, &headers, body, "delete") {
        Ok(request) => request,
        Err(response) => return *response,
    };
    let ids = match (deletes.ids.is_empty(), deletes.filter) {
        (false, None) => deletes.ids,
        (true, Some(filter)) => {
            // The records of the caller's namespace that the filter admits among those it may
            // see (memories have their own routes); the rest of the index is never named.
            let (who, prefix) = (caller.principal.clone(), format!("{namespace}/"));
            let matched = blocking(&s, deadline, false, move |st| {
                let index = st.engine.index();
                let ids = index.searcher().ids_where(&who, &filter)?;
                let mut ids: Vec<String> =
                    ids.into_iter().filter(|id| id.starts_with(&prefix) && !braid::memory::is_memory_id(id)).collect();
                ids.sort_unstable();
                ids.truncate(write::MAX_BATCH);
                Ok::<_, braid::Error>(ids)
            })
            .await;
            match matched {
                // Nothing to delete, so no commit: naming the one served would tell the caller
                // when others write.
                Ok(Ok(ids)) if ids.is_empty() => {
                    let none = Written { commit: None, ids };
                    return json_response(StatusCode::OK, &serde_json::to_value(none).unwrap_or(Value::Null));
                }
                Ok(Ok(ids)) => ids,
                Ok(Err(e)) => return write_refused(&WriteFailure::from(e)),
                Err(response) => return response,
            }
        }
        _ => {
            let why = "send ids or a filter, not both and not neither";
            return write_refused(&WriteFailure::BadRequest(why.into()));
        }
    };
    if let Err(f) = check_batch(ids.len(), "ids") {
        return write_refused(&f);
    }
    run_write(s, caller, deadline, namespace, Vec::new(), ids).await
}

/// `DELETE /v1/records/{id}`: deletes one record of the caller's namespace (idempotent).
async fn rest_delete_one(
    State(s): State<Shared>,
    Extension(caller): Extension<Arc<Caller>>,
    Extension(deadline): Extension<Deadline>,
    Path(id): Path<String>,
) -> Response {
    let namespace = match writer_namespace(&caller) {
        Ok(ns) => ns,
        Err(f) => return write_refused(&f),
    };
    run_write(s, caller, deadline, namespace, Vec::new(), vec![id]).await
}

/// The JSON body of a memory request, parsed: 415/413/400 else.
fn memory_body<T: serde::de::DeserializeOwned>(
    s: &AppState,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
    what: &str,
) -> Result<T, Box<Response>> {
    if !is_json(headers) {
        return Err(Box::new(json_body_required()));
    }
    let body = read_body(body, s)?;
    parse_object(&body, what)
}

/// Runs one memory operation for `caller` on the blocking pool and answers with its JSON.
async fn run_memory<T: serde::Serialize + Send + 'static>(
    s: Shared,
    caller: Arc<Caller>,
    deadline: Deadline,
    work: impl FnOnce(&Engine, Who<'_>) -> Result<T, WriteFailure> + Send + 'static,
) -> Response {
    let done = blocking(&s, deadline, caller.operator, move |st| {
        work(&st.engine, Who { principal: &caller.principal, write: caller.write })
    })
    .await;
    match done {
        Ok(Ok(value)) => json_response(StatusCode::OK, &serde_json::to_value(value).unwrap_or(Value::Null)),
        Ok(Err(f)) => write_refused(&f),
        Err(response) => response,
    }
}

/// `POST /v1/memories`: remembers a note in the caller's scope (or reinforces its duplicate).
async fn rest_remember(
    State(s): State<Shared>,
    Extension(caller): Extension<Arc<Caller>>,
    Extension(deadline): Extension<Deadline>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let note: braid::memory::Note = match memory_body(&s, &headers, body, "remember") {
        Ok(n) => n,
        Err(response) => return *response,
    };
    run_memory(s, caller, deadline, move |engine, who| engine.remember(who, &note)).await
}

/// `POST /v1/memories/recall`: the caller's memories that best answer a cue.
async fn rest_recall(
    State(s): State<Shared>,
    Extension(caller): Extension<Arc<Caller>>,
    Extension(deadline): Extension<Deadline>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let cue: braid::memory::Cue = match memory_body(&s, &headers, body, "recall") {
        Ok(c) => c,
        Err(response) => return *response,
    };
    run_memory(s, caller, deadline, move |engine, who| {
        engine.recall(who, &cue).map(|memories| json!({ "memories": memories }))
    })
    .await
}

/// `POST /v1/memories/forget`: forgets one memory by id, or every memory of a kind.
async fn rest_forget(
    State(s): State<Shared>,
    Extension(caller): Extension<Arc<Caller>>,
    Extension(deadline): Extension<Deadline>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let params: ForgetParams = match memory_body(&s, &headers, body, "forget") {
        Ok(p) => p,
        Err(response) => return *response,
    };
    run_memory(s, caller, deadline, move |engine, who| engine.forget(who, &params)).await
}

/// `DELETE /v1/memories/{id}`: forgets one memory of the caller's scope (404 otherwise).
async fn rest_forget_one(
    State(s): State<Shared>,
    Extension(caller): Extension<Arc<Caller>>,
    Extension(deadline): Extension<Deadline>,
    Path(id): Path<String>,
) -> Response {
    let params = ForgetParams { id: Some(id), kind: None };
    run_memory(s, caller, deadline, move |engine, who| engine.forget(who, &params)).await
}

/// `PUT /v1/memories/{id}`: supersedes one memory of the caller's scope with a new note.
async fn rest_update(
    State(s): State<Shared>,
    Extension(caller): Extension<Arc<Caller>>,
    Extension(deadline): Extension<Deadline>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let note: braid::memory::Note = match memory_body(&s, &headers, body, "update") {
        Ok(n) => n,
        Err(response) => return *response,
    };
    let params = UpdateParams {
        id,
        text: note.text,
        kind: note.kind,
        importance: note.importance,
        ttl_seconds: note.ttl_seconds,
    };
    run_memory(s, caller, deadline, move |engine, who| engine.update(who, &params)).await
}

/// `POST /v1/search`: the search parameters in, `braid::SearchResponse` out.
async fn rest_search(
    State(s): State<Shared>,
    Extension(caller): Extension<Arc<Caller>>,
    Extension(deadline): Extension<Deadline>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    if !is_json(&headers) {
        return json_body_required();
    }
    let body = match read_body(body, &s) {
        Ok(b) => b,
        Err(response) => return *response,
    };
    let params: SearchParams = match parse_object(&body, "search") {
        Ok(p) => p,
        Err(response) => return *response,
    };
    let searched = blocking(&s, deadline, caller.operator, move |st| {
        st.engine.search(&caller.principal, &params).map(|r| serde_json::to_value(r).unwrap_or(Value::Null))
    })
    .await;
    match searched {
        Ok(Ok(value)) => json_response(StatusCode::OK, &value),
        Ok(Err(Failure::BadRequest(m))) => failure(StatusCode::BAD_REQUEST, "bad_request", m),
        Ok(Err(Failure::Cancelled)) => timed_out(&s.limits),
        Ok(Err(Failure::Internal)) => {
            failure(StatusCode::INTERNAL_SERVER_ERROR, "internal", Failure::Internal.message())
        }
        Err(response) => response,
    }
}

/// `GET /v1/stats`: the caller's own view — what it may see and its request counts — and the
/// server's. Nothing about records or callers it may not see.
async fn rest_stats(
    State(s): State<Shared>,
    Extension(caller): Extension<Arc<Caller>>,
    Extension(deadline): Extension<Deadline>,
) -> Response {
    let principal = caller.principal.clone();
    let visible = match blocking(&s, deadline, false, move |st| st.engine.visible(&principal)).await {
        Ok(Ok(n)) => n,
        Ok(Err(Failure::Cancelled)) => return timed_out(&s.limits),
        Ok(Err(f)) => return failure(StatusCode::INTERNAL_SERVER_ERROR, "internal", f.message()),
        Err(response) => return response,
    };
    let embedding = s.engine.index().embedding().map(|e| e.model_id);
    json_response(
        StatusCode::OK,
        &json!({
            "caller": {
                "name": caller.name,
                "visible_records": visible,
                "requests": caller.quota.requests(),
                "rate_limited": caller.quota.throttled()
            },
            "index": { "legs": s.engine.legs(), "embedding_model": embedding, "max_k": s.engine.max_k },
            "server": {
                "version": env!("CARGO_PKG_VERSION"),
                "uptime_s": s.started.elapsed().as_secs(),
                "mcp_protocol_versions": mcp::SUPPORTED.map(|v| v.to_string())
            }
        }),
    )
}

/// `GET /.well-known/oauth-protected-resource[/path]`: the protected-resource metadata
/// (RFC 9728), public.
async fn resource_metadata(State(s): State<Shared>) -> Response {
    match s.auth.oauth() {
        Some(section) => json_response(StatusCode::OK, &section.metadata()),
        None => not_found().await,
    }
}

/// `GET /v1/health` (no token needed): the process is up, which commit it serves (an opaque
/// id, see `api::Engine::commit`: it tells commits apart and counts nothing), whether the
/// newest commit on disk failed to open (`"reload": "failing"`, with the attempts so far; the
/// server retries with backoff and serves the older commit meanwhile), and how far the
/// verification of the served commit's files has come (`"verification"`: `"running"`,
/// `"verified"` or `"damaged"`). A damaged file fails every search, so the answer is then 503
/// with `"status": "damaged"`: a load balancer stops sending requests. Which file is in the
/// server's log (each failed search logs it), not here: this route needs no token.
async fn health(State(s): State<Shared>) -> Response {
    let failures = s.engine.reload_failures();
    let reload = if failures == 0 { "ok" } else { "failing" };
    let verification = match s.engine.index().verification() {
        braid::VerificationStatus::Running { .. } => "running",
        braid::VerificationStatus::Verified => "verified",
        braid::VerificationStatus::Damaged { .. } => "damaged",
    };
    let (code, status) =
        if verification == "damaged" { (StatusCode::SERVICE_UNAVAILABLE, "damaged") } else { (StatusCode::OK, "ok") };
    json_response(
        code,
        &json!({
            "status": status,
            "commit": s.engine.commit(),
            "reload": reload,
            "reload_failures": failures,
            "verification": verification
        }),
    )
}

/// `GET /v1/openapi.json`: this API, described.
async fn openapi_document(State(s): State<Shared>) -> Response {
    json_response(StatusCode::OK, &s.openapi)
}

async fn not_found() -> Response {
    failure(StatusCode::NOT_FOUND, "not_found", "no such route (see /v1/openapi.json)")
}

/// `POST /mcp`: one JSON-RPC message, answered by rmcp (see [`mcp`]) as the caller the
/// middleware put into the request's extensions; in 2025-03-26 (no `MCP-Protocol-Version`, or
/// that one) also a batch, which rmcp does not read: each of its messages is answered by rmcp
/// on its own, the tool calls paid for up front, and the answers joined into one array. A body
/// that is not JSON is a JSON-RPC parse error (400), as the JSON-RPC text has it; a body over
/// the limit is 413, one that cannot be read 400 (as on the REST routes).
async fn mcp_post(
    State(s): State<Shared>,
    Extension(caller): Extension<Arc<Caller>>,
    parts: axum::http::request::Parts,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match read_body(body, &s) {
        Ok(body) => body,
        Err(refused) => return *refused,
    };
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&body) {
        return json_response(
            StatusCode::BAD_REQUEST,
            &mcp::error(Value::Null, ErrorCode::PARSE_ERROR, format!("parse error: {e}")),
        );
    }
    match mcp::batch_items(&body) {
        None => s.mcp.handle(Request::from_parts(parts, Body::from(body))).await.map(Body::new),
        Some(items) => mcp_batch(&s, &caller, parts, items).await,
    }
}

/// A JSON-RPC batch: refused outside 2025-03-26 (and when empty); else each message answered
/// by rmcp as if it came alone, with this request's headers and caller.
async fn mcp_batch(
    s: &AppState,
    caller: &Caller,
    parts: axum::http::request::Parts,
    items: Result<Vec<Value>, Value>,
) -> Response {
    let version = parts.headers.get("mcp-protocol-version").map(|v| v.to_str().unwrap_or("").trim());
    if let Some(v) = version.filter(|v| *v != mcp::BATCH_REVISION) {
        let why = format!("JSON-RPC batches are not part of MCP {v}: send one message per request");
        return json_response(StatusCode::BAD_REQUEST, &mcp::error(Value::Null, ErrorCode::INVALID_REQUEST, why));
    }
    let items = match items {
        Ok(items) => items,
        Err(error) => return json_response(StatusCode::BAD_REQUEST, &error),
    };
    let method = |m: &Value| m.get("method").and_then(Value::as_str).map(str::to_string);
    let calls = items.iter().filter(|m| method(m).as_deref() == Some("tools/call")).count();
    if let Err(response) = pay_batch(caller, calls, "tool calls") {
        return *response;
    }
    let mut replies = Vec::new();
    for item in items {
        if method(&item).as_deref() == Some("initialize") {
            let id = item.get("id").cloned().unwrap_or(Value::Null);
            replies.push(mcp::error(id, ErrorCode::INVALID_REQUEST, "initialize must not be part of a batch"));
            continue;
        }
        let mut one = Request::from_parts(parts.clone(), Body::from(item.to_string()));
        one.headers_mut().remove(header::CONTENT_LENGTH);
        let response = s.mcp.handle(one).await;
        if response.status() == StatusCode::ACCEPTED {
            continue;
        }
        let status = response.status();
        let bytes = axum::body::to_bytes(Body::new(response.into_body()), usize::MAX).await.unwrap_or_default();
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(reply) => replies.push(reply),
            // Not a JSON-RPC answer (406, 415, …): the request as a whole is refused so.
            Err(_) => return (status, bytes).into_response(),
        }
    }
    if replies.is_empty() {
        return StatusCode::ACCEPTED.into_response();
    }
    json_response(StatusCode::OK, &Value::Array(replies))
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::sync::Mutex;
    use std::time::Duration;

    use braid::{Index, Principal, Record, Reranker};

    use super::super::auth::hash_token;
    use super::*;

    /// A cross-encoder that holds each call for a query containing "slow" until the test
    /// releases it (or 20 s pass), and answers any other query at once.
    struct Gate {
        entered: Mutex<mpsc::Sender<()>>,
        release: Mutex<mpsc::Receiver<()>>,
    }

    impl Reranker for Gate {
        fn model_id(&self) -> &str {
            "gate"
        }
        fn score(&self, query: &str, passages: &[&str]) -> braid::Result<Vec<f32>> {
            if query.contains("slow") {
                let _ = self.entered.lock().unwrap().send(());
                let _ = self.release.lock().unwrap().recv_timeout(Duration::from_secs(20));
            }
            Ok(passages.iter().map(|p| p.len() as f32).collect())
        }
    }

    const TOKEN_A: &str = "braid_tenant_a_token_for_the_cancellation_test";
    const TOKEN_B: &str = "braid_tenant_b_token_for_the_cancellation_test";

    fn post(url: &str, token: &str, query: &str) -> u16 {
        let reply = ureq::post(&format!("{url}/v1/search"))
            .set("Authorization", &format!("Bearer {token}"))
            .set("Content-Type", "application/json")
            .timeout(Duration::from_secs(30))
            .send_string(&serde_json::json!({"query": query, "mode": "lexical"}).to_string());
        match reply {
            Ok(r) => r.status(),
            Err(ureq::Error::Status(code, _)) => code,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn a_cancelled_search_frees_its_slot_for_another_tenant() {
        let (entered_tx, entered) = mpsc::channel();
        let (release, release_rx) = mpsc::channel();
        let gate = Gate { entered: Mutex::new(entered_tx), release: Mutex::new(release_rx) };
        let index = Index::builder().reranker(Arc::new(gate)).create_in_ram().unwrap();
        let mut w = index.writer().unwrap();
        for tenant in ["a", "b"] {
            for i in 0..12 {
                w.upsert(
                    &Record::new(format!("{tenant}-{i}"))
                        .title("Refunds")
                        .body(format!("refund request number {i}"))
                        .acl([format!("tenant:{tenant}")]),
                )
                .unwrap();
            }
        }
        w.commit().unwrap();
        let config: Config = toml::from_str(&format!(
            "[limits]\nmax_concurrent = 1\ntimeout_ms = 1500\n\n\
             [[token]]\nname = \"a\"\nsha256 = \"{}\"\ntenant = \"a\"\n\n\
             [[token]]\nname = \"b\"\nsha256 = \"{}\"\ntenant = \"b\"\n",
            hash_token(TOKEN_A),
            hash_token(TOKEN_B)
        ))
        .unwrap();
        config.validate().unwrap();
        let app = router(Arc::new(Engine::new(index, 10)), &config).unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        runtime.spawn(async move { axum::serve(listener, app).await });

        // Tenant A's search holds the only slot in its first rerank batch (10 candidates: two
        // batches of 8 and 2) until its budget has passed and it got its 503.
        let a = {
            let url = url.clone();
            std::thread::spawn(move || post(&url, TOKEN_A, "slow refund"))
        };
        entered.recv_timeout(Duration::from_secs(20)).expect("A's search reached the reranker");
        assert_eq!(a.join().unwrap(), 503);
        // Its first batch returns; past its deadline, the search stops before the second (which
        // would hold the slot for 20 s) and gives the slot back.
        release.send(()).unwrap();
        // Tenant B's cheap search is served within its own budget.
        assert_eq!(post(&url, TOKEN_B, "refund"), 200);
        assert!(entered.try_recv().is_err(), "A's search went on to a second rerank batch");
        runtime.shutdown_background();
    }

    /// Record writes that arrive together share commits (a commit delay makes them meet): every
    /// write is answered 200, is searchable once answered, and the engine made fewer commits
    /// than it answered writes; the writes of one commit name the same commit.
    #[test]
    fn concurrent_record_writes_share_commits() {
        let dir = std::env::temp_dir().join(format!("braid-group-writes-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let index = Index::create(&dir, braid::IndexConfig::default()).unwrap();
        let config: Config = toml::from_str(&format!(
            "[[token]]\nname = \"a\"\nsha256 = \"{}\"\ntenant = \"a\"\nwrite = true\n",
            hash_token(TOKEN_A)
        ))
        .unwrap();
        config.validate().unwrap();
        let engine = Arc::new(Engine::new(index.clone(), 10).with_commit_options(braid::GroupCommitOptions {
            commit_delay: Duration::from_millis(50),
            ..braid::GroupCommitOptions::default()
        }));
        let app = router(engine.clone(), &config).unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        runtime.spawn(async move { axum::serve(listener, app).await });
        let (threads, writes) = (5, 4);
        let commits: Vec<String> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let (url, index) = (&url, &index);
                    scope.spawn(move || {
                        (0..writes)
                            .map(|w| {
                                let word = format!("zq{}{}x", char::from(b'a' + t), char::from(b'a' + w));
                                let body =
                                    json!({"records": [{"_id": format!("n{t}-{w}"), "text": format!("{word} note")}]});
                                let reply = ureq::post(&format!("{url}/v1/records"))
                                    .set("Authorization", &format!("Bearer {TOKEN_A}"))
                                    .set("Content-Type", "application/json")
                                    .timeout(Duration::from_secs(60))
                                    .send_string(&body.to_string())
                                    .unwrap();
                                let answer: Value = serde_json::from_str(&reply.into_string().unwrap()).unwrap();
                                let who = Principal::from_verified_tokens(["tenant:a"]);
                                let request = braid::SearchRequest::new(&word, who).mode(braid::Mode::Lexical);
                                assert_eq!(
                                    index.search(&request).unwrap().hits.len(),
                                    1,
                                    "{word} is served when answered"
                                );
                                answer["commit"].as_str().unwrap().to_string()
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        let stats = engine.writes().stats();
        assert_eq!(stats.batches, (threads * writes) as u64);
        assert!(stats.commits < stats.batches, "{stats:?}");
        let distinct: std::collections::BTreeSet<_> = commits.iter().collect();
        assert_eq!(distinct.len() as u64, stats.commits);
        assert_eq!(index.num_records(), (threads * writes) as u64);
        runtime.shutdown_background();
        drop((engine, index));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// `/v1/health` says how far the verification of the served commit's files has come:
    /// verified on an intact index; 503, `"status": "damaged"`, once a file failed its
    /// checksum in the background (every search then fails), without naming the file.
    #[test]
    fn health_says_when_a_file_of_the_served_commit_is_damaged() {
        let dir = std::env::temp_dir().join(format!("braid-health-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        {
            let index = Index::create(&dir, braid::IndexConfig::default()).unwrap();
            let mut w = index.writer().unwrap();
            for i in 0..50 {
                w.upsert(&Record::new(format!("r{i}")).body(format!("walrus note {i}"))).unwrap();
            }
            w.commit().unwrap();
        }
        let config: Config =
            toml::from_str(&format!("[[token]]\nname = \"a\"\nsha256 = \"{}\"\n", hash_token(TOKEN_A))).unwrap();
        config.validate().unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let health = |index: Index| -> (u16, Value) {
            let app = router(Arc::new(Engine::new(index, 10)), &config).unwrap();
            let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
            let url = format!("http://{}/v1/health", listener.local_addr().unwrap());
            runtime.spawn(async move { axum::serve(listener, app).await });
            let (code, body) = match ureq::get(&url).timeout(Duration::from_secs(30)).call() {
                Ok(r) => (r.status(), r.into_string().unwrap()),
                Err(ureq::Error::Status(code, r)) => (code, r.into_string().unwrap()),
                Err(e) => panic!("{e}"),
            };
            (code, serde_json::from_str(&body).unwrap())
        };
        let background = braid::Verification::Background { small_files: 0 };
        let intact = Index::builder().verification(background).open(&dir).unwrap();
        intact.verify().unwrap();
        let (code, body) = health(intact);
        assert_eq!((code, &body["status"], &body["verification"]), (200, &json!("ok"), &json!("verified")), "{body}");

        let postings = std::fs::read_dir(dir.join("lexical"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "idx"))
            .unwrap();
        let mut bytes = std::fs::read(&postings).unwrap();
        bytes[0] ^= 0xff;
        std::fs::write(&postings, bytes).unwrap();
        let damaged = Index::builder().verification(background).open(&dir).unwrap();
        assert!(damaged.verify().is_err());
        let (code, body) = health(damaged);
        assert_eq!(
            (code, &body["status"], &body["verification"]),
            (503, &json!("damaged"), &json!("damaged")),
            "{body}"
        );
        assert!(!body.to_string().contains(".idx"), "{body}");
        runtime.shutdown_background();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
