//! The Model Context Protocol, without a transport: JSON-RPC 2.0 messages, protocol revisions,
//! and the tools: `search` and `read_section`, and the memory tools `remember`, `recall`,
//! `forget` and `update` ([`super::memory`]). The HTTP transport (`http.rs`, stateless
//! Streamable HTTP) and the stdio transport (`stdio.rs`) hand it parsed JSON (and, over HTTP,
//! the request's MCP headers) with the caller ([`Who`]: its principal and write right); every
//! tool calls the same [`Engine`] as the REST API.
//!
//! Two eras are served side by side, as the 2026-07-28 text allows a dual-era server to:
//! - **legacy** (2025-03-26, 2025-06-18, 2025-11-25): an `initialize` handshake agrees on a
//!   revision; over HTTP every later request names it in `MCP-Protocol-Version`;
//! - **modern** (2026-07-28): no handshake. Every request carries its revision and the client's
//!   capabilities in `params._meta` (`io.modelcontextprotocol/protocolVersion`,
//!   `…/clientCapabilities`); over HTTP the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`
//!   headers must match the body. `server/discover` names the revisions spoken; results carry
//!   `resultType` and the server's identity in `_meta`; list results carry `ttlMs` and
//!   `cacheScope`.
//!
//! Tool failures (bad arguments, an id the caller cannot see, a search error) come back as
//! results with `isError: true`, so the model can read them; protocol failures (not JSON-RPC,
//! unknown method, unknown tool, header mismatch, unsupported revision) as JSON-RPC errors.

use std::sync::Arc;

use base64::Engine as _;
use braid::{Principal, SearchResponse};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::api::{Engine, Failure, SearchParams};
use super::memory::{self, ForgetParams, UpdateParams, Who};
use super::{resources, schema};
use braid::memory::{Cue, Note};

/// JSON-RPC: the payload is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: the payload is not a valid request.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: no such method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: the params are wrong (including an unknown tool name and, in 2026-07-28, a
/// request without the required `_meta` fields).
pub const INVALID_PARAMS: i64 = -32602;
/// MCP 2026-07-28 `HeaderMismatch`: the HTTP headers are missing, malformed, or disagree with
/// the body.
pub const HEADER_MISMATCH: i64 = -32020;
/// MCP 2026-07-28 `UnsupportedProtocolVersion`: `data` lists the revisions spoken.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// The `_meta` key of a request's protocol revision (2026-07-28).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of the client's capabilities (2026-07-28).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key of the server's identity on results (2026-07-28).
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// How long a `tools/list` or `server/discover` result may be reused, in milliseconds: the
/// tools and their schemas change only when the server restarts.
pub const LIST_TTL_MS: u64 = 300_000;

/// A protocol revision this server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Version {
    /// 2025-03-26: Streamable HTTP, JSON-RPC batches, tool annotations.
    V2025_03_26,
    /// 2025-06-18: no batches; `MCP-Protocol-Version` header; structured tool output.
    V2025_06_18,
    /// 2025-11-25.
    V2025_11_25,
    /// 2026-07-28: stateless; no `initialize`; per-request `_meta`; `server/discover`.
    V2026_07_28,
}

impl Version {
    /// Every revision spoken, newest first.
    pub const SUPPORTED: [Version; 4] =
        [Version::V2026_07_28, Version::V2025_11_25, Version::V2025_06_18, Version::V2025_03_26];
    /// What an `initialize` asking for an unknown (or a modern) revision is offered: the newest
    /// revision reached through the handshake.
    pub const LATEST: Version = Version::V2025_11_25;
    /// The newest revision, reached without a handshake.
    pub const MODERN: Version = Version::V2026_07_28;
    /// What an HTTP request without an `MCP-Protocol-Version` header is read as (the spec's
    /// rule for backwards compatibility).
    pub const ASSUMED: Version = Version::V2025_03_26;

    /// Parses a revision name.
    pub fn parse(text: &str) -> Option<Version> {
        Self::SUPPORTED.into_iter().find(|v| v.name() == text.trim())
    }

    /// The revision's name.
    pub fn name(self) -> &'static str {
        match self {
            Version::V2025_03_26 => "2025-03-26",
            Version::V2025_06_18 => "2025-06-18",
            Version::V2025_11_25 => "2025-11-25",
            Version::V2026_07_28 => "2026-07-28",
        }
    }

    /// Whether JSON-RPC batches are part of this revision.
    pub fn allows_batches(self) -> bool {
        self == Version::V2025_03_26
    }

    /// Whether tools carry `title` and `outputSchema` and results `structuredContent`.
    pub fn structured_output(self) -> bool {
        self >= Version::V2025_06_18
    }

    /// Whether requests of this revision stand alone (no handshake; `_meta` on each).
    pub fn is_modern(self) -> bool {
        self >= Version::V2026_07_28
    }
}

/// What answers a payload.
#[derive(Debug)]
pub enum Reply {
    /// Nothing: the payload held only notifications or responses.
    Nothing,
    /// One response.
    One(Value),
    /// The responses to a batch.
    Batch(Vec<Value>),
}

/// The HTTP status an answer goes out with (the stdio transport has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// 200 (or 202 when there is no reply).
    Ok,
    /// 400: not a valid message, headers that disagree with the body, an unsupported revision,
    /// required `_meta` missing.
    BadRequest,
    /// 404: a 2026-07-28 request for a method this server does not have.
    NotFound,
}

/// The reply to a payload and what the transport needs to know about it.
#[derive(Debug)]
pub struct Outcome {
    /// The reply.
    pub reply: Reply,
    /// The status it goes out with over HTTP.
    pub status: Status,
    /// The revision an `initialize` in the payload agreed on.
    pub negotiated: Option<Version>,
}

impl Outcome {
    fn reply(value: Value) -> Outcome {
        Outcome { reply: Reply::One(value), status: Status::Ok, negotiated: None }
    }

    fn malformed(value: Value) -> Outcome {
        Outcome { reply: Reply::One(value), status: Status::BadRequest, negotiated: None }
    }

    fn nothing() -> Outcome {
        Outcome { reply: Reply::Nothing, status: Status::Ok, negotiated: None }
    }
}

/// A JSON-RPC error response.
pub fn error(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message.into() } })
}

/// The `UnsupportedProtocolVersion` error for a request that asked for `requested`.
pub fn unsupported_version(id: Value, requested: &str) -> Value {
    let supported = Version::SUPPORTED.map(Version::name);
    let mut e = error(
        id,
        UNSUPPORTED_PROTOCOL_VERSION,
        format!("Unsupported protocol version {requested:?} (supported: {})", supported.join(", ")),
    );
    e["error"]["data"] = json!({ "supported": supported, "requested": requested });
    e
}

fn result(id: Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// The MCP request headers of one HTTP POST, as raw bytes (checked here).
#[derive(Debug, Default, Clone, Copy)]
pub struct HttpHeaders<'a> {
    /// `MCP-Protocol-Version`.
    pub protocol_version: Option<&'a [u8]>,
    /// `Mcp-Method`.
    pub method: Option<&'a [u8]>,
    /// `Mcp-Name`.
    pub name: Option<&'a [u8]>,
}

/// A header value as text: visible ASCII, spaces and tabs only (RFC 9110 field values).
fn header_text(bytes: &[u8]) -> Option<&str> {
    let ok = bytes.iter().all(|&b| b == b'\t' || (0x20..=0x7e).contains(&b));
    ok.then(|| std::str::from_utf8(bytes).ok()).flatten().map(str::trim)
}

/// `Mcp-Name` as the body would say it: the Base64 sentinel `=?base64?…?=` decoded.
fn decode_name(text: &str) -> Option<String> {
    match text.strip_prefix("=?base64?").and_then(|t| t.strip_suffix("?=")) {
        Some(encoded) => {
            let bytes = base64::engine::general_purpose::STANDARD.decode(encoded).ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(text.to_string()),
    }
}

/// The parts of a JSON-RPC message this server acts on.
struct Envelope<'a> {
    id: Option<Value>,
    /// `None` for a response (a message with `result` or `error` and no method).
    method: Option<&'a str>,
    params: Option<&'a Value>,
}

/// Reads the JSON-RPC envelope of one message, or the error answering it.
fn envelope(obj: &Map<String, Value>) -> Result<Envelope<'_>, Outcome> {
    let id = match obj.get("id") {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id.clone()),
        Some(_) => {
            return Err(Outcome::malformed(error(Value::Null, INVALID_REQUEST, "id must be a string or a number")))
        }
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(Outcome::malformed(error(id.unwrap_or(Value::Null), INVALID_REQUEST, "jsonrpc must be \"2.0\"")));
    }
    let method = match obj.get("method") {
        Some(Value::String(m)) => Some(m.as_str()),
        Some(_) => return Err(Outcome::malformed(error(id.unwrap_or(Value::Null), INVALID_REQUEST, "bad method"))),
        None if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) => None,
        None => return Err(Outcome::malformed(error(id.unwrap_or(Value::Null), INVALID_REQUEST, "no method"))),
    };
    Ok(Envelope { id, method, params: obj.get("params") })
}

/// `params._meta["io.modelcontextprotocol/protocolVersion"]` of a message, if it has one.
fn meta_version(payload: &Value) -> Option<&Value> {
    payload.get("params")?.get("_meta")?.get(META_PROTOCOL_VERSION)
}

/// The MCP server: protocol handling over an [`Engine`].
pub struct Mcp {
    engine: Arc<Engine>,
}

impl Mcp {
    /// A server over `engine`.
    pub fn new(engine: Arc<Engine>) -> Mcp {
        Mcp { engine }
    }

    /// Answers the body of one HTTP POST with these MCP `headers`, on behalf of `principal`.
    ///
    /// An `MCP-Protocol-Version: 2026-07-28` request is served statelessly: `Mcp-Method` (and,
    /// for `tools/call`, `Mcp-Name`) must match the body, and the body's `_meta` must name the
    /// same revision. Any other request is served in the legacy revision its header names
    /// (2025-03-26 without one); `initialize` always starts the legacy handshake.
    pub fn handle_http<'a>(&self, payload: Value, headers: &HttpHeaders, who: impl Into<Who<'a>>) -> Outcome {
        let principal = who.into();
        let id = payload.get("id").filter(|id| id.is_string() || id.is_number()).cloned().unwrap_or(Value::Null);
        let mismatch =
            |why: String| Outcome::malformed(error(id.clone(), HEADER_MISMATCH, format!("Header mismatch: {why}")));
        let header_version = match headers.protocol_version {
            None => None,
            Some(raw) => match header_text(raw) {
                None => return mismatch("MCP-Protocol-Version holds characters a header may not".into()),
                Some(text) => match Version::parse(text) {
                    Some(v) => Some(v),
                    None => return Outcome::malformed(unsupported_version(id, text)),
                },
            },
        };
        let method = payload.get("method").and_then(Value::as_str);
        let body_version = meta_version(&payload);
        if method == Some("initialize") {
            return self.handle(
                payload,
                header_version.filter(|v| !v.is_modern()).unwrap_or(Version::ASSUMED),
                principal,
            );
        }
        let Some(version) = header_version.filter(|v| v.is_modern()) else {
            // Legacy. A body that names a revision must agree with the header (and then have one).
            if let Some(named) = body_version {
                match header_version {
                    None => return mismatch("the MCP-Protocol-Version header is required".into()),
                    Some(v) if named.as_str() != Some(v.name()) => {
                        return mismatch(format!("MCP-Protocol-Version {} does not match _meta {named}", v.name()))
                    }
                    Some(_) => {}
                }
            }
            return self.handle(payload, header_version.unwrap_or(Version::ASSUMED), principal);
        };
        let Value::Object(obj) = &payload else {
            let why = format!("MCP {} takes one JSON-RPC message per request", version.name());
            return Outcome::malformed(error(Value::Null, INVALID_REQUEST, why));
        };
        // Header rules are defined for requests; a notification is accepted (202) as it is.
        let Some(method) = method.filter(|_| obj.contains_key("id")) else { return self.modern(payload, principal) };
        match headers.method.map(header_text) {
            None => return mismatch("the Mcp-Method header is required".into()),
            Some(None) => return mismatch("Mcp-Method holds characters a header may not".into()),
            Some(Some(h)) if h != method => {
                return mismatch(format!("Mcp-Method header value {h:?} does not match body value {method:?}"))
            }
            Some(Some(_)) => {}
        }
        let named = match method {
            "tools/call" | "prompts/get" => obj.get("params").and_then(|p| p.get("name")),
            "resources/read" => obj.get("params").and_then(|p| p.get("uri")),
            _ => None,
        };
        if let Some(body_name) = named.and_then(Value::as_str) {
            match headers.name.map(|raw| header_text(raw).and_then(decode_name)) {
                None => return mismatch("the Mcp-Name header is required".into()),
                Some(None) => return mismatch("Mcp-Name is not a valid header value".into()),
                Some(Some(h)) if h != body_name => {
                    return mismatch(format!("Mcp-Name header value {h:?} does not match body value {body_name:?}"))
                }
                Some(Some(_)) => {}
            }
        }
        match body_version {
            Some(named) if named.as_str() != Some(version.name()) => {
                mismatch(format!("MCP-Protocol-Version {} does not match _meta {named}", version.name()))
            }
            _ => self.modern(payload, principal),
        }
    }

    /// Answers one line of a stdio connection on behalf of `principal`; `negotiated` is the
    /// revision an earlier `initialize` agreed on. A request whose `_meta` names 2026-07-28 is
    /// served statelessly whatever came before; others in the negotiated revision.
    pub fn handle_stdio<'a>(&self, payload: Value, negotiated: Option<Version>, who: impl Into<Who<'a>>) -> Outcome {
        let principal = who.into();
        let is_initialize = payload.get("method").and_then(Value::as_str) == Some("initialize");
        match meta_version(&payload).filter(|_| !is_initialize) {
            None => self.handle(payload, negotiated.unwrap_or(Version::ASSUMED), principal),
            Some(named) => match named.as_str().and_then(Version::parse) {
                Some(v) if !v.is_modern() => self.handle(payload, v, principal),
                _ => self.modern(payload, principal),
            },
        }
    }

    /// Answers one legacy payload — a message, or (in revision 2025-03-26 only) a batch of
    /// them — on behalf of `principal`, in protocol revision `version`.
    pub fn handle<'a>(&self, payload: Value, version: Version, who: impl Into<Who<'a>>) -> Outcome {
        let principal = who.into();
        let Value::Array(items) = payload else { return self.message(payload, version, principal) };
        if !version.allows_batches() {
            let why = format!("JSON-RPC batches are not part of MCP {}: send one message per request", version.name());
            return Outcome::malformed(error(Value::Null, INVALID_REQUEST, why));
        }
        if items.is_empty() {
            return Outcome::malformed(error(Value::Null, INVALID_REQUEST, "empty batch"));
        }
        let mut replies = Vec::new();
        for item in items {
            if item.get("method").and_then(Value::as_str) == Some("initialize") {
                let id = item.get("id").cloned().unwrap_or(Value::Null);
                replies.push(error(id, INVALID_REQUEST, "initialize must not be part of a batch"));
                continue;
            }
            match self.message(item, version, principal).reply {
                Reply::One(v) => replies.push(v),
                Reply::Batch(vs) => replies.extend(vs),
                Reply::Nothing => {}
            }
        }
        let reply = if replies.is_empty() { Reply::Nothing } else { Reply::Batch(replies) };
        Outcome { reply, status: Status::Ok, negotiated: None }
    }

    /// A 2026-07-28 message (over HTTP, its headers already checked against the body).
    fn modern(&self, message: Value, principal: Who<'_>) -> Outcome {
        let Value::Object(obj) = &message else {
            return Outcome::malformed(error(Value::Null, INVALID_REQUEST, "a JSON-RPC message is a JSON object"));
        };
        let env = match envelope(obj) {
            Ok(env) => env,
            Err(outcome) => return outcome,
        };
        let Some(method) = env.method else {
            // This server sends no requests, so a client has nothing to respond to.
            let id = env.id.unwrap_or(Value::Null);
            return Outcome::malformed(error(id, INVALID_REQUEST, "a client sends requests and notifications only"));
        };
        // Notifications need no answer (the 2026-07-28 core defines none a client sends over
        // HTTP; `notifications/cancelled` on stdio has nothing to stop: requests run to the end).
        let Some(id) = env.id else { return Outcome::nothing() };
        let empty = Value::Object(Map::new());
        let params = match env.params {
            None => &empty,
            Some(p @ Value::Object(_)) => p,
            Some(_) => return Outcome::malformed(error(id, INVALID_PARAMS, "params must be an object")),
        };
        let meta = params.get("_meta").and_then(Value::as_object);
        let version = match meta.and_then(|m| m.get(META_PROTOCOL_VERSION)) {
            None => {
                let why =
                    format!("a {} request carries params._meta[\"{META_PROTOCOL_VERSION}\"]", Version::MODERN.name());
                return Outcome::malformed(error(id, INVALID_PARAMS, why));
            }
            Some(named) => match named.as_str().and_then(Version::parse) {
                Some(v) if v.is_modern() => v,
                _ => return Outcome::malformed(unsupported_version(id, named.as_str().unwrap_or(&named.to_string()))),
            },
        };
        if !meta.and_then(|m| m.get(META_CLIENT_CAPABILITIES)).is_some_and(Value::is_object) {
            let why = format!("a {} request carries params._meta[\"{META_CLIENT_CAPABILITIES}\"]", version.name());
            return Outcome::malformed(error(id, INVALID_PARAMS, why));
        }
        tracing::debug!(target: "braid::serve::mcp", method = known_method(method), version = version.name(), "mcp request");
        let stamped = |mut r: Value| {
            r["resultType"] = json!("complete");
            r["_meta"] = json!({ META_SERVER_INFO: server_info() });
            Outcome::reply(result(id.clone(), r))
        };
        match method {
            "server/discover" => stamped(json!({
                "supportedVersions": Version::SUPPORTED.map(Version::name),
                "capabilities": capabilities(),
                "instructions": INSTRUCTIONS,
                "ttlMs": LIST_TTL_MS,
                // The same for every caller: which revisions and tools exist, not what they see.
                "cacheScope": "public"
            })),
            "tools/list" => stamped(json!({
                "tools": self.tools(version),
                "ttlMs": LIST_TTL_MS,
                // What a caller may search depends on who it is: no shared caches.
                "cacheScope": "private"
            })),
            "tools/call" => match self.call(params, version, principal) {
                Ok(r) => stamped(r),
                Err((code, message)) => Outcome::reply(error(id, code, message)),
            },
            "resources/list" | "resources/read" | "resources/templates/list" => {
                match self.resources(method, params, principal.principal) {
                    Ok(mut r) => {
                        if method != "resources/read" {
                            r["ttlMs"] = json!(LIST_TTL_MS);
                            // What a caller may list depends on who it is.
                            r["cacheScope"] = json!("private");
                        }
                        stamped(r)
                    }
                    Err((code, message)) => Outcome::reply(error(id, code, message)),
                }
            }
            _ => {
                let mut outcome = Outcome::reply(error(id, METHOD_NOT_FOUND, format!("method not found: {method}")));
                outcome.status = Status::NotFound;
                outcome
            }
        }
    }

    /// The resource methods: the records the caller may see (see [`resources`]).
    fn resources(&self, method: &str, params: &Value, principal: &Principal) -> Result<Value, (i64, String)> {
        match method {
            "resources/list" => resources::list(&self.engine, principal, params),
            "resources/read" => resources::read(&self.engine, principal, params),
            _ => Ok(resources::templates()),
        }
    }

    /// `tools/call`: the tool's result, or the JSON-RPC error (code, message).
    fn call(&self, params: &Value, version: Version, principal: Who<'_>) -> Result<Value, (i64, String)> {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Err((INVALID_PARAMS, "tools/call needs params.name".into()));
        };
        let arguments = params.get("arguments").cloned().unwrap_or_else(|| json!({}));
        let answer = match name {
            "search" => self.search(arguments, principal.principal),
            "read_section" => self.read_section(arguments, principal.principal),
            "outline" => self.outline(arguments, principal.principal),
            "search_tools" if self.engine.tools().is_some() => self.search_tools(arguments),
            "remember" => self.remember(arguments, principal),
            "recall" => self.recall(arguments, principal),
            "forget" => self.forget(arguments, principal),
            "update" => self.update(arguments, principal),
            _ => return Err((INVALID_PARAMS, format!("unknown tool: {name}"))),
        };
        tracing::debug!(target: "braid::serve::mcp", tool = name, is_error = answer.is_err(), "tool call");
        Ok(tool_result(answer, version))
    }

    fn message(&self, message: Value, version: Version, principal: Who<'_>) -> Outcome {
        let Value::Object(obj) = &message else {
            return Outcome::malformed(error(Value::Null, INVALID_REQUEST, "a JSON-RPC message is a JSON object"));
        };
        let env = match envelope(obj) {
            Ok(env) => env,
            Err(outcome) => return outcome,
        };
        // A response to a server request: this server sends none, so there is nothing to do.
        let Some(method) = env.method else { return Outcome::nothing() };
        // Notifications (initialized, cancelled, …) need no answer; a stateless server has
        // nothing to update.
        let Some(id) = env.id else { return Outcome::nothing() };
        let empty = Value::Object(Map::new());
        let params = match env.params {
            None => &empty,
            Some(p @ Value::Object(_)) => p,
            Some(_) => return Outcome::reply(error(id, INVALID_PARAMS, "params must be an object")),
        };
        tracing::debug!(target: "braid::serve::mcp", method = known_method(method), "mcp request");
        match method {
            "initialize" => {
                let Some(asked) = params.get("protocolVersion").and_then(Value::as_str) else {
                    return Outcome::reply(error(id, INVALID_PARAMS, "initialize needs params.protocolVersion"));
                };
                // The handshake reaches legacy revisions only; 2026-07-28 needs none.
                let agreed = Version::parse(asked).filter(|v| !v.is_modern()).unwrap_or(Version::LATEST);
                let mut outcome = Outcome::reply(result(id, initialize_result(agreed)));
                outcome.negotiated = Some(agreed);
                outcome
            }
            "ping" => Outcome::reply(result(id, json!({}))),
            "tools/list" => Outcome::reply(result(id, json!({ "tools": self.tools(version) }))),
            "tools/call" => match self.call(params, version, principal) {
                Ok(r) => Outcome::reply(result(id, r)),
                Err((code, message)) => Outcome::reply(error(id, code, message)),
            },
            "resources/list" | "resources/read" | "resources/templates/list" => {
                match self.resources(method, params, principal.principal) {
                    Ok(r) => Outcome::reply(result(id, r)),
                    Err((code, message)) => Outcome::reply(error(id, code, message)),
                }
            }
            _ => Outcome::reply(error(id, METHOD_NOT_FOUND, format!("method not found: {method}"))),
        }
    }

    /// The tool definitions, as `tools/list` returns them in `version`.
    pub fn tools(&self, version: Version) -> Vec<Value> {
        let defs = "#/$defs";
        let mut search_input = schema::search_params(defs, self.engine.max_k);
        search_input["$defs"] = json!({ "Filter": schema::filter(defs) });
        // (name, title, description, input, output, read only, destructive, idempotent)
        let mut tools = vec![
            (
                "search",
                "Search documents",
                "Search the indexed documents and get ranked sections with citations: title, heading path, \
                 line range and a snippet for each, numbered [1], [2], …. Typos, exact codes and plain \
                 questions all work. Only records your credentials may see are searched. Read a hit in \
                 full with read_section.",
                search_input,
                schema::search_output(),
                true,
                false,
                true,
            ),
            (
                "read_section",
                "Read a section",
                "Read the text of one section by the id search returned. Long sections are read in pieces: \
                 pass the next_offset of one read as the offset of the next.",
                schema::read_params(),
                schema::read_output(),
                true,
                false,
                true,
            ),
            (
                "outline",
                "List documents",
                "List the folders and articles under a path (as ls does), each article with its sections' \
                 ids and headings: browse what exists, then read_section an id. Only records your \
                 credentials may see are listed. Pages: pass next_offset as offset.",
                schema::outline_params(),
                schema::outline_output(),
                true,
                false,
                true,
            ),
            (
                "remember",
                "Remember",
                "Store a memory in your own private scope (no other user sees it): a short text, with an \
                 optional kind (preference, fact, task, …), importance 1-10 and time to live. Repeating a \
                 memory you already have reinforces it (more important, more recent) and returns its id.",
                memory::note_schema(),
                memory::written_schema(),
                false,
                false,
                false,
            ),
            (
                "recall",
                "Recall memories",
                "Recall your memories that best answer a query, ranked by relevance, recency and importance. \
                 An empty query lists the most recent and important ones. Expired memories never appear.",
                memory::cue_schema(),
                memory::recalled_schema(),
                true,
                false,
                true,
            ),
            (
                "forget",
                "Forget memories",
                "Forget one of your memories by id, or every memory of a kind.",
                memory::forget_schema(),
                memory::forgotten_schema(),
                false,
                true,
                true,
            ),
            (
                "update",
                "Update a memory",
                "Replace one of your memories with a corrected text. The old memory is forgotten (not kept as \
                 history); the answer gives the new id.",
                memory::update_schema(),
                memory::written_schema(),
                false,
                true,
                false,
            ),
        ];
        // Only where the operator gave a catalogue.
        if self.engine.tools().is_some() {
            tools.push((
                "search_tools",
                "Search tools",
                "Find the tools that fit what you are about to do in a catalogue too large to list: \
                 describe the task in plain words (typos are fine) and get the best few definitions, \
                 each with its input schema, best first.",
                schema::tool_search_params(),
                schema::tool_search_output(),
                true,
                false,
                true,
            ));
        }
        tools
            .into_iter()
            .map(|(name, title, description, input, output, read_only, destructive, idempotent)| {
                let mut tool = json!({
                    "name": name,
                    "description": description,
                    "inputSchema": input,
                    "annotations": {
                        "title": title,
                        "readOnlyHint": read_only,
                        "destructiveHint": destructive,
                        "idempotentHint": idempotent,
                        "openWorldHint": false
                    }
                });
                if version.structured_output() {
                    tool["title"] = json!(title);
                    tool["outputSchema"] = output;
                }
                tool
            })
            .collect()
    }

    fn search(&self, arguments: Value, principal: &Principal) -> Result<(String, Value), String> {
        let params: SearchParams =
            serde_json::from_value(arguments).map_err(|e| format!("invalid arguments for search: {e}"))?;
        let response = self.engine.search(principal, &params).map_err(|f| f.message())?;
        Ok(search_text_and_data(&response))
    }

    fn remember(&self, arguments: Value, who: Who<'_>) -> Result<(String, Value), String> {
        let note: Note =
            serde_json::from_value(arguments).map_err(|e| format!("invalid arguments for remember: {e}"))?;
        let written = self.engine.remember(who, &note).map_err(|f| f.message())?;
        Ok((memory::written_text(&written), serde_json::to_value(&written).unwrap_or(Value::Null)))
    }

    fn recall(&self, arguments: Value, who: Who<'_>) -> Result<(String, Value), String> {
        let cue: Cue = serde_json::from_value(arguments).map_err(|e| format!("invalid arguments for recall: {e}"))?;
        let memories = self.engine.recall(who, &cue).map_err(|f| f.message())?;
        Ok((memory::recalled_text(&memories), json!({ "memories": memories })))
    }

    fn forget(&self, arguments: Value, who: Who<'_>) -> Result<(String, Value), String> {
        let params: ForgetParams =
            serde_json::from_value(arguments).map_err(|e| format!("invalid arguments for forget: {e}"))?;
        let forgotten = self.engine.forget(who, &params).map_err(|f| f.message())?;
        let text =
            format!("Forgot {} memor{}.", forgotten.ids.len(), if forgotten.ids.len() == 1 { "y" } else { "ies" });
        Ok((text, serde_json::to_value(&forgotten).unwrap_or(Value::Null)))
    }

    fn update(&self, arguments: Value, who: Who<'_>) -> Result<(String, Value), String> {
        let params: UpdateParams =
            serde_json::from_value(arguments).map_err(|e| format!("invalid arguments for update: {e}"))?;
        let written = self.engine.update(who, &params).map_err(|f| f.message())?;
        Ok((memory::written_text(&written), serde_json::to_value(&written).unwrap_or(Value::Null)))
    }

    fn search_tools(&self, arguments: Value) -> Result<(String, Value), String> {
        let p: ToolSearchParams =
            serde_json::from_value(arguments).map_err(|e| format!("invalid arguments for search_tools: {e}"))?;
        if p.k == 0 || p.k > schema::MAX_TOOL_HITS {
            return Err(format!("k must be between 1 and {}", schema::MAX_TOOL_HITS));
        }
        let Some(catalogue) = self.engine.tools() else { return Err("no tool catalogue".into()) };
        let hits = catalogue.search(&p.query, p.k).map_err(|e| e.to_string())?;
        let mut text = format!("{} tool{}:", hits.len(), if hits.len() == 1 { "" } else { "s" });
        for (i, hit) in hits.iter().enumerate() {
            let name = hit.definition["name"].as_str().unwrap_or("");
            let description = hit.definition["description"].as_str().unwrap_or("");
            text.push_str(&format!("\n[{}] {name} — {description}", i + 1));
        }
        let tools: Vec<Value> =
            hits.into_iter().map(|h| json!({ "definition": h.definition, "score": h.score })).collect();
        Ok((text, json!({ "tools": tools })))
    }

    fn outline(&self, arguments: Value, principal: &Principal) -> Result<(String, Value), String> {
        let p: OutlineParams =
            serde_json::from_value(arguments).map_err(|e| format!("invalid arguments for outline: {e}"))?;
        let outline = self.engine.outline(principal, &p.path, p.offset, p.limit).map_err(|f| f.message())?;
        let mut text = match outline.total {
            0 => format!("Nothing you may see under {:?}.", outline.path),
            n => format!("{n} entr{} under {:?}:", if n == 1 { "y" } else { "ies" }, outline.path),
        };
        for entry in &outline.entries {
            match entry {
                braid::OutlineEntry::Folder { path, articles } => {
                    text.push_str(&format!("\n{path} ({articles} article{})", if *articles == 1 { "" } else { "s" }))
                }
                braid::OutlineEntry::Article { id, title, sections } => {
                    text.push_str(&format!("\n{id} — {title}"));
                    for s in sections {
                        let heading = if s.section.is_empty() { "(intro)".to_string() } else { s.section.join(" > ") };
                        text.push_str(&format!("\n    {heading} — id: {}", s.id));
                    }
                }
            }
        }
        if let Some(next) = outline.next_offset {
            text.push_str(&format!("\nMore: call outline again with offset {next}."));
        }
        Ok((text, serde_json::to_value(&outline).unwrap_or(Value::Null)))
    }

    fn read_section(&self, arguments: Value, principal: &Principal) -> Result<(String, Value), String> {
        let p: ReadParams =
            serde_json::from_value(arguments).map_err(|e| format!("invalid arguments for read_section: {e}"))?;
        if p.length == 0 || p.length > schema::MAX_READ_CHARS {
            return Err(format!("length must be between 1 and {}", schema::MAX_READ_CHARS));
        }
        let Some(record) = self.engine.read(principal, &p.id).map_err(|f: Failure| f.message())? else {
            // The same answer whether the id does not exist or is not the caller's to see.
            return Err(format!("no section with id {:?} is visible to you; use an id from search", p.id));
        };
        let total = record.body.chars().count();
        if p.offset > total {
            return Err(format!("offset {} is past the end of the section ({total} characters)", p.offset));
        }
        let text: String = record.body.chars().skip(p.offset).take(p.length).collect();
        let length = text.chars().count();
        let end = p.offset + length;
        let next_offset = (end < total).then_some(end);
        let mut out = format!("{}, characters {}–{end} of {total}:\n\n{text}", record.citation(), p.offset);
        if let Some(next) = next_offset {
            out.push_str(&format!("\n\n[continues: read_section with offset {next}]"));
        }
        let data = json!({
            "id": record.id, "title": record.title, "parent": record.parent, "section": record.section,
            "lines": record.lines.map(|(s, e)| [s, e]), "offset": p.offset, "length": length, "total": total,
            "next_offset": next_offset, "text": text
        });
        Ok((out, data))
    }
}

/// The arguments of `search_tools`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolSearchParams {
    query: String,
    #[serde(default = "default_tool_hits")]
    k: usize,
}

fn default_tool_hits() -> usize {
    5
}

/// The arguments of `outline`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OutlineParams {
    #[serde(default)]
    path: String,
    #[serde(default)]
    offset: usize,
    #[serde(default = "default_outline_limit")]
    limit: usize,
}

fn default_outline_limit() -> usize {
    50
}

/// The arguments of `read_section`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadParams {
    id: String,
    #[serde(default)]
    offset: usize,
    #[serde(default = "default_read_length")]
    length: usize,
}

fn default_read_length() -> usize {
    4000
}

fn known_method(method: &str) -> &'static str {
    [
        "initialize",
        "ping",
        "server/discover",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/read",
        "resources/templates/list",
    ]
    .into_iter()
    .find(|m| *m == method)
    .unwrap_or("other")
}

const INSTRUCTIONS: &str = "Use `search` to find passages (cite them as [n]) and `read_section` to read one in full. \
    `remember`, `recall`, `forget` and `update` keep your own private memories.";

fn server_info() -> Value {
    json!({ "name": "braid", "title": "Braid", "version": env!("CARGO_PKG_VERSION") })
}

fn capabilities() -> Value {
    json!({ "tools": { "listChanged": false }, "resources": { "listChanged": false } })
}

fn initialize_result(version: Version) -> Value {
    json!({
        "protocolVersion": version.name(),
        "capabilities": capabilities(),
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS
    })
}

fn tool_result(answer: Result<(String, Value), String>, version: Version) -> Value {
    match answer {
        Ok((text, data)) => {
            let mut r = json!({ "content": [{ "type": "text", "text": text }], "isError": false });
            if version.structured_output() {
                r["structuredContent"] = data;
            }
            r
        }
        Err(message) => json!({ "content": [{ "type": "text", "text": message }], "isError": true }),
    }
}

/// The concise text a model reads (numbered citations and snippets) and the structured data
/// beside it (sources with stable ids, sections and line ranges; steps; legs).
fn search_text_and_data(response: &SearchResponse) -> (String, Value) {
    let legs: Vec<&str> = response.stats.legs.iter().map(|l| l.name()).collect();
    let mut text = match response.hits.len() {
        0 => "No results among the records you may see.".to_string(),
        n => format!(
            "{n} result{}; cite them as [n], read one in full with read_section(id):",
            if n == 1 { "" } else { "s" }
        ),
    };
    let mut sources = Vec::new();
    for (i, hit) in response.hits.iter().enumerate() {
        // Plain text: bodies are often Markdown already, where added highlight marks would clash.
        let snippet = hit.snippet.text.split_whitespace().collect::<Vec<_>>().join(" ");
        text.push_str(&format!("\n[{}] {} — id: {}", i + 1, braid::Citation::from(hit), hit.id));
        if !snippet.is_empty() {
            text.push_str(&format!("\n    {snippet}"));
        }
        sources.push(json!({
            "ref": i + 1, "id": hit.id, "title": hit.title, "parent": hit.parent, "section": hit.section,
            "lines": hit.lines.map(|(s, e)| [s, e]), "score": hit.score, "snippet": hit.snippet.text
        }));
    }
    if !response.suggestions.is_empty() {
        let fixes: Vec<String> =
            response.suggestions.iter().map(|s| format!("{} → {}", s.term, s.suggestion)).collect();
        text.push_str(&format!("\nDid you mean: {}?", fixes.join(", ")));
    }
    let steps: Map<String, Value> =
        response.stats.micros.iter().map(|(stage, us)| (stage.to_string(), json!(*us as f64 / 1000.0))).collect();
    let mut data = json!({ "sources": sources, "suggestions": response.suggestions, "steps": steps, "legs": legs });
    if let Some(facets) = &response.facets {
        data["facets"] = json!(facets);
        text.push_str(&format!("\n{} matching records you may see.", facets.matched));
    }
    if let Some(tokens) = response.stats.tokens {
        data["tokens"] = json!(tokens);
        text.push_str(&format!("\nThese results hold {tokens} tokens of text."));
    }
    if let Some(cursor) = &response.next_cursor {
        data["next_cursor"] = json!(cursor);
        text.push_str(&format!("\nMore results: call search again with cursor \"{cursor}\"."));
    }
    (text, data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use braid::{Index, IndexConfig, Record};

    fn mcp() -> Mcp {
        let index = Index::create_in_ram(IndexConfig::default()).unwrap();
        let mut w = index.writer().unwrap();
        let body = "Return an item within 30 days. ".repeat(10);
        w.upsert(
            &Record::new("returns#time")
                .title("Returns")
                .body(body)
                .parent("returns")
                .section(["Returns", "Time limits"])
                .lines(3, 9)
                .acl(["tenant:acme"]),
        )
        .unwrap();
        w.commit().unwrap();
        Mcp::new(Arc::new(Engine::new(index, 20)))
    }

    fn call(m: &Mcp, msg: Value, v: Version, p: &Principal) -> Value {
        match m.handle(msg, v, p).reply {
            Reply::One(r) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn negotiation() {
        let m = mcp();
        let p = Principal::public();
        for (asked, agreed) in [
            ("2025-03-26", "2025-03-26"),
            ("2025-06-18", "2025-06-18"),
            ("1999-01-01", "2025-11-25"),
            ("2026-07-28", "2025-11-25"),
        ] {
            let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": asked}});
            let outcome = m.handle(msg.clone(), Version::ASSUMED, &p);
            assert_eq!(outcome.negotiated.map(Version::name), Some(agreed));
            assert_eq!(call(&m, msg, Version::ASSUMED, &p)["result"]["protocolVersion"], agreed);
        }
    }

    #[test]
    fn structured_output_only_where_the_revision_has_it() {
        let m = mcp();
        let p = Principal::from_verified_tokens(["tenant:acme"]);
        let msg = json!({"jsonrpc": "2.0", "id": "s", "method": "tools/call",
                         "params": {"name": "search", "arguments": {"query": "retrun"}}});
        let old = call(&m, msg.clone(), Version::V2025_03_26, &p);
        assert!(old["result"].get("structuredContent").is_none());
        let new = call(&m, msg, Version::V2025_06_18, &p);
        let sources = &new["result"]["structuredContent"]["sources"];
        assert_eq!(sources[0]["id"], "returns#time");
        assert_eq!(sources[0]["lines"], json!([3, 9]));
        let text = new["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("[1] Returns › Time limits (returns, lines 3–9) — id: returns#time"), "{text}");
        let list = call(&m, json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}), Version::V2025_03_26, &p);
        assert!(list["result"]["tools"][0].get("outputSchema").is_none());
    }

    #[test]
    fn reading_in_pieces() {
        let m = mcp();
        let p = Principal::from_verified_tokens(["tenant:acme"]);
        let read = |args: Value| {
            let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_section", "arguments": args}});
            call(&m, msg, Version::V2025_06_18, &p)["result"].clone()
        };
        let first = read(json!({"id": "returns#time", "length": 100}));
        assert_eq!(first["structuredContent"]["next_offset"], 100);
        let total = first["structuredContent"]["total"].as_u64().unwrap();
        let last = read(json!({"id": "returns#time", "offset": 100, "length": 20_000}));
        assert_eq!(last["structuredContent"]["length"].as_u64().unwrap(), total - 100);
        assert_eq!(last["structuredContent"]["next_offset"], Value::Null);
        for bad in [
            json!({"id": "returns#time", "length": 0}),
            json!({"id": "returns#time", "offset": 100_000}),
            json!({"id": "nope"}),
            json!({"id": 3}),
        ] {
            assert_eq!(read(bad.clone())["isError"], true, "{bad}");
        }
        // Another tenant cannot read it, and is told the same as for an id that does not exist.
        let other = Principal::from_verified_tokens(["tenant:globex"]);
        let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_section", "arguments": {"id": "returns#time"}}});
        let hidden = call(&m, msg, Version::V2025_06_18, &other)["result"].clone();
        assert_eq!(hidden["isError"], true);
        let text = |r: &Value, id: &str| r["content"][0]["text"].as_str().unwrap().replace(id, "ID");
        assert_eq!(text(&hidden, "returns#time"), text(&read(json!({"id": "nope"})), "nope"));
    }

    #[test]
    fn protocol_errors() {
        let m = mcp();
        let p = Principal::public();
        let code = |msg: Value, v: Version| call(&m, msg, v, &p)["error"]["code"].as_i64();
        assert_eq!(code(json!({"jsonrpc": "2.0", "id": 1, "method": "nope"}), Version::LATEST), Some(METHOD_NOT_FOUND));
        assert_eq!(code(json!({"jsonrpc": "1.0", "id": 1, "method": "ping"}), Version::LATEST), Some(INVALID_REQUEST));
        assert_eq!(
            code(json!({"jsonrpc": "2.0", "id": null, "method": "ping"}), Version::LATEST),
            Some(INVALID_REQUEST)
        );
        assert_eq!(code(json!([1]), Version::LATEST), Some(INVALID_REQUEST));
        assert_eq!(
            code(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "rm"}}), Version::LATEST),
            Some(INVALID_PARAMS)
        );
        // Notifications and responses get nothing back.
        assert!(matches!(
            m.handle(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), Version::LATEST, &p).reply,
            Reply::Nothing
        ));
        assert!(matches!(
            m.handle(json!({"jsonrpc": "2.0", "id": 4, "result": {}}), Version::LATEST, &p).reply,
            Reply::Nothing
        ));
    }

    #[test]
    fn batches_in_2025_03_26() {
        let m = mcp();
        let p = Principal::public();
        let batch = json!([
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": "2025-03-26"}}
        ]);
        let Reply::Batch(replies) = m.handle(batch, Version::V2025_03_26, &p).reply else { panic!("no batch reply") };
        assert_eq!(replies.len(), 2);
        assert_eq!(replies[0]["result"], json!({}));
        assert_eq!(replies[1]["error"]["code"], INVALID_REQUEST);
    }
}
