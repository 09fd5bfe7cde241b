//! The Model Context Protocol on the official Rust SDK, [`rmcp`]: Braid's tools (`search`,
//! `read_section`, `outline`, `search_tools`, and the memory tools `remember`, `recall`,
//! `forget` and `update` of [`super::memory`]) and resources ([`super::resources`]) as an
//! [`rmcp::ServerHandler`]. rmcp speaks JSON-RPC, negotiates the revision and checks what the
//! revision asks of a request; this module says what the tools are and runs them on the same
//! [`Engine`] as the REST API, as the caller the transport vouches for.
//!
//! Both eras are rmcp's: the legacy revisions (2025-03-26, 2025-06-18, 2025-11-25) through the
//! `initialize` handshake, and 2026-07-28 without one (`server/discover`, per-request `_meta`,
//! `resultType` and cache hints on results; over HTTP the `MCP-Protocol-Version`, `Mcp-Method`
//! and `Mcp-Name` headers checked against the body). The transports are rmcp's too: stateless
//! Streamable HTTP (`http.rs`, behind Braid's own Origin check, bearer-token or OAuth
//! authentication and rate limits) and stdio (`stdio.rs`).
//!
//! **Hand-written, because rmcp 3.11 does not do it:** JSON-RPC batches. Revision 2025-03-26
//! requires a server to accept a batch (an array of messages); rmcp parses one message per
//! POST or line. `http.rs` splits a 2025-03-26 batch into its messages, has rmcp answer each,
//! and joins the answers ([`batch_items`]); `stdio.rs` does the same over stdio.
//!
//! Where the caller comes from: over HTTP, the authentication middleware puts the verified
//! [`Caller`] into the request's extensions, and rmcp hands the request's parts to the handler
//! ([`RequestContext::extensions`]); over stdio it is the operator's command line, fixed for
//! the process. Tool failures (bad arguments, an id the caller cannot see, a search error) are
//! results with `isError: true`, so the model can read them; an unknown tool is a JSON-RPC
//! error.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use axum::http::request::Parts;
use braid::{Principal, SearchResponse};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, DiscoverResult, ErrorCode, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use tokio::sync::Semaphore;

use super::api::{self, Engine, Failure, SearchParams};
use super::auth::Caller;
use super::memory::{self, ForgetParams, UpdateParams, Who};
use super::{resources, schema};
use braid::memory::{Cue, Note};

/// How long a `tools/list`, `resources/list` or `server/discover` result may be reused, in
/// milliseconds (2026-07-28 `ttlMs`): the tools and their schemas change only when the server
/// restarts.
pub const LIST_TTL_MS: u64 = 300_000;

/// Every protocol revision served, newest first: what `server/discover` lists and `initialize`
/// may agree on (2026-07-28 is reached without a handshake).
pub const SUPPORTED: [ProtocolVersion; 4] = [
    ProtocolVersion::V_2026_07_28,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_03_26,
];

/// The revision a 2025-03-26 batch is read in: the only one with batches, and what an HTTP
/// request without an `MCP-Protocol-Version` header is read as.
pub const BATCH_REVISION: &str = "2025-03-26";

/// When a request's time budget ends: the deadline of the searches its tools run (put into the
/// request's extensions by the HTTP middleware).
#[derive(Debug, Clone, Copy)]
pub struct Deadline(pub Instant);

/// The caller of a stdio server: the operator's principal and write right, for the process.
#[derive(Debug, Clone)]
pub struct Local {
    /// The operator's principal.
    pub principal: Principal,
    /// Whether the operator gave the write right.
    pub write: bool,
}

/// The MCP server: Braid's tools and resources as an [`rmcp::ServerHandler`]. Cheap to clone
/// (rmcp's stateless HTTP service makes one per request).
#[derive(Clone)]
pub struct Braid {
    engine: Arc<Engine>,
    /// The stdio caller; `None` over HTTP, where each request brings its own.
    local: Option<Arc<Local>>,
    /// At most this many tool calls run at once (HTTP's concurrency limit).
    permits: Option<Arc<Semaphore>>,
}

/// A caller as a tool runs it: who, and whether its searches report stage timings.
struct Running {
    principal: Principal,
    write: bool,
    timings: bool,
    deadline: Option<Instant>,
}

impl Braid {
    /// The server for HTTP: each request's caller comes from its extensions; at most
    /// `permits` tool calls run at once.
    pub fn http(engine: Arc<Engine>, permits: Arc<Semaphore>) -> Braid {
        Braid { engine, local: None, permits: Some(permits) }
    }

    /// The server for stdio, every request made by `local` (with stage timings: it is the
    /// operator's own session). Its tool calls run one at a time, in the order they came
    /// (rmcp runs requests concurrently; a client that sends `remember` then `recall` without
    /// waiting still recalls what it remembered), on a current-thread runtime.
    pub fn stdio(engine: Arc<Engine>, local: Local) -> Braid {
        Braid { engine, local: Some(Arc::new(local)), permits: Some(Arc::new(Semaphore::new(1))) }
    }

    /// Who makes the request `context` belongs to.
    fn running(&self, context: &RequestContext<RoleServer>) -> Result<Running, ErrorData> {
        if let Some(local) = &self.local {
            return Ok(Running {
                principal: local.principal.clone(),
                write: local.write,
                timings: true,
                deadline: None,
            });
        }
        let parts = context.extensions.get::<Parts>();
        let caller = parts.and_then(|p| p.extensions.get::<Arc<Caller>>());
        let Some(caller) = caller else {
            // The router puts a caller on every /mcp request; without one nothing runs.
            return Err(ErrorData::internal_error("no authenticated caller", None));
        };
        let deadline = parts.and_then(|p| p.extensions.get::<Deadline>()).map(|d| d.0);
        Ok(Running { principal: caller.principal.clone(), write: caller.write, timings: caller.operator, deadline })
    }

    /// Runs `work` (a search, a read, a write) for the caller of `context` on the blocking
    /// pool: after a concurrency permit, within the request's deadline (see
    /// [`api::with_deadline`]), with stage timings only for an operator.
    async fn run<T: Send + 'static>(
        &self,
        context: &RequestContext<RoleServer>,
        work: impl FnOnce(&Braid, Who<'_>) -> T + Send + 'static,
    ) -> Result<T, ErrorData> {
        let running = self.running(context)?;
        let internal = || ErrorData::internal_error(Failure::Internal.message(), None);
        let permit = match &self.permits {
            Some(p) => Some(Arc::clone(p).acquire_owned().await.map_err(|_| internal())?),
            None => None,
        };
        if running.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(ErrorData::internal_error("no answer within the time budget", None));
        }
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let who = Who { principal: &running.principal, write: running.write };
            let go = || api::with_timings(running.timings, || work(&this, who));
            match running.deadline {
                Some(deadline) => api::with_deadline(deadline, go),
                None => go(),
            }
        })
        .await
        .map_err(|e| {
            tracing::error!(target: "braid::serve", error = %e, "tool task failed");
            internal()
        })
    }

    /// Runs tool `name` with `arguments` as `who`: the text and structured data, or the
    /// message of an `isError` result; `None` for a tool this server does not have.
    fn call(&self, name: &str, arguments: Value, who: Who<'_>) -> Option<Result<(String, Value), String>> {
        let answer = match name {
            "search" => self.search(arguments, who.principal),
            "read_section" => self.read_section(arguments, who.principal),
            "outline" => self.outline(arguments, who.principal),
            "search_tools" if self.engine.tools().is_some() => self.search_tools(arguments),
            "remember" => self.remember(arguments, who),
            "recall" => self.recall(arguments, who),
            "forget" => self.forget(arguments, who),
            "update" => self.update(arguments, who),
            _ => return None,
        };
        Some(answer)
    }

    /// The tool definitions, as `tools/list` returns them: with `title` and `outputSchema`
    /// when the revision has `structured` output.
    fn tools(&self, structured: bool) -> Vec<Value> {
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
                if structured {
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

/// Whether revision `version` (the request's, or the one `initialize` agreed on) has
/// `outputSchema` on tools and `structuredContent` on results: 2025-06-18 on.
fn structured_output(version: Option<&ProtocolVersion>) -> bool {
    version.is_some_and(|v| v.as_str() >= ProtocolVersion::V_2025_06_18.as_str())
}

/// The 2026-07-28 fields of a list result (`resultType`, `ttlMs`, `cacheScope`); older
/// revisions have none.
fn cache_hints(result: &mut Value, version: Option<&ProtocolVersion>, scope: &str) {
    if version.is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str()) {
        result["resultType"] = json!("complete");
        result["ttlMs"] = json!(LIST_TTL_MS);
        result["cacheScope"] = json!(scope);
    }
}

/// An rmcp result type from the JSON it stands for (the shapes are MCP's, written as JSON
/// once in this module and `schema`).
fn typed<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value).map_err(|e| ErrorData::internal_error(format!("result shape: {e}"), None))
}

const INSTRUCTIONS: &str = "Use `search` to find passages (cite them as [n]) and `read_section` to read one in full. \
    `remember`, `recall`, `forget` and `update` keep your own private memories.";

impl ServerHandler for Braid {
    fn get_info(&self) -> ServerConfig {
        // `protocolVersion` is what an `initialize` asking for a revision not spoken is offered.
        serde_json::from_value(json!({
            "protocolVersion": ProtocolVersion::LATEST_WITH_INITIALIZE,
            "capabilities": { "tools": { "listChanged": false }, "resources": { "listChanged": false } },
            "serverInfo": { "name": "braid", "title": "Braid", "version": env!("CARGO_PKG_VERSION") },
            "instructions": INSTRUCTIONS
        }))
        .expect("a valid InitializeResult")
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&SUPPORTED)
    }

    async fn discover(&self, _context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        let mut result = DiscoverResult::from_server_info(SUPPORTED.to_vec(), self.get_info());
        result.ttl_ms = LIST_TTL_MS;
        // The same for every caller: which revisions and tools exist, not what they see.
        result.cache_scope = rmcp::model::CacheScope::Public;
        Ok(result)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let version = context.protocol_version();
        let mut list = json!({ "tools": self.tools(structured_output(version.as_ref())) });
        // What a caller may search depends on who it is: no shared caches.
        cache_hints(&mut list, version.as_ref(), "private");
        typed(list)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let version = context.protocol_version();
        let structured = structured_output(version.as_ref());
        let name = request.name.to_string();
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let tool = name.clone();
        let answer = self.run(&context, move |this, who| this.call(&tool, arguments, who)).await?;
        let Some(answer) = answer else {
            return Err(ErrorData::invalid_params(format!("unknown tool: {name}"), None));
        };
        let version = version.as_ref().map_or("-", ProtocolVersion::as_str);
        tracing::debug!(target: "braid::serve::mcp", method = "tools/call", tool = name, version, is_error = answer.is_err(), "tool call");
        // rmcp drops `resultType` for the revisions before 2026-07-28.
        let result: CallToolResult = typed(match answer {
            Ok((text, data)) => {
                let mut r = json!({ "resultType": "complete", "content": [{ "type": "text", "text": text }], "isError": false });
                if structured {
                    r["structuredContent"] = data;
                }
                r
            }
            Err(message) => {
                json!({ "resultType": "complete", "content": [{ "type": "text", "text": message }], "isError": true })
            }
        })?;
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let cursor = request.and_then(|r| r.cursor);
        let page = self.run(&context, move |this, who| resources::list(&this.engine, who.principal, cursor.as_deref()));
        let mut page = page.await??;
        // What a caller may list depends on who it is.
        cache_hints(&mut page, context.protocol_version().as_ref(), "private");
        typed(page)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let read = self.run(&context, move |this, who| resources::read(&this.engine, who.principal, &uri));
        let mut contents = read.await??;
        contents["resultType"] = json!("complete");
        Ok(ReadResourceResponse::Complete(typed(contents)?))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let mut templates = resources::templates();
        cache_hints(&mut templates, context.protocol_version().as_ref(), "public");
        typed(templates)
    }
}

/// The messages of a 2025-03-26 JSON-RPC batch, or `None` when `body` is not an array. Each
/// item is answered on its own (`http.rs`); `initialize` may not be part of a batch.
///
/// # Errors
/// The JSON-RPC error answering the whole batch: an empty one.
pub fn batch_items(body: &[u8]) -> Option<Result<Vec<Value>, Value>> {
    let first = body.iter().find(|b| !b.is_ascii_whitespace())?;
    if *first != b'[' {
        return None;
    }
    Some(match serde_json::from_slice::<Vec<Value>>(body) {
        Ok(items) if items.is_empty() => Err(error(Value::Null, ErrorCode::INVALID_REQUEST, "empty batch")),
        Ok(items) => Ok(items),
        Err(e) => Err(error(Value::Null, ErrorCode::PARSE_ERROR, format!("parse error: {e}"))),
    })
}

/// A JSON-RPC error response (for what is answered before rmcp sees a message).
pub fn error(id: Value, code: ErrorCode, message: impl Into<String>) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code.0, "message": message.into() } })
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
    use std::time::Duration;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    fn engine() -> Arc<Engine> {
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
        Arc::new(Engine::new(index, 20))
    }

    fn acme() -> Principal {
        Principal::from_verified_tokens(["tenant:acme"])
    }

    /// Lines in, the reply lines out: a stdio session with rmcp over an in-memory pipe.
    async fn session(server: Braid, lines: &[Value]) -> Vec<Value> {
        let (client, served) = tokio::io::duplex(1 << 20);
        let (read, write) = tokio::io::split(served);
        let running = tokio::spawn(async move {
            if let Ok(service) = rmcp::serve_server(server, (read, write)).await {
                let _ = service.waiting().await;
            }
        });
        let (out, mut input) = tokio::io::split(client);
        let mut out = BufReader::new(out).lines();
        let mut replies = Vec::new();
        for line in lines {
            input.write_all(format!("{line}\n").as_bytes()).await.unwrap();
            if line.get("id").is_some() {
                let reply = out.next_line().await.unwrap().unwrap();
                replies.push(serde_json::from_str(&reply).unwrap());
            }
        }
        drop(input);
        running.abort();
        replies
    }

    fn rpc(id: u64, method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn negotiation_and_structured_output() {
        for (asked, agreed, structured) in [
            ("2025-03-26", "2025-03-26", false),
            ("2025-06-18", "2025-06-18", true),
            ("1999-01-01", "2025-11-25", true),
            ("2026-07-28", "2025-11-25", true),
        ] {
            let server = Braid::stdio(engine(), Local { principal: acme(), write: false });
            let replies = session(
                server,
                &[
                    rpc(1, "initialize", json!({"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}})),
                    json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                    rpc(2, "tools/list", json!({})),
                    rpc(3, "tools/call", json!({"name": "search", "arguments": {"query": "retrun"}})),
                    rpc(4, "tools/call", json!({"name": "rm", "arguments": {}})),
                    rpc(5, "nope", json!({})),
                ],
            )
            .await;
            assert_eq!(replies[0]["result"]["protocolVersion"], agreed, "{asked}");
            assert_eq!(replies[1]["result"]["tools"][0].get("outputSchema").is_some(), structured, "{asked}");
            let result = &replies[2]["result"];
            assert_eq!(result.get("structuredContent").is_some(), structured, "{asked}: {result}");
            let text = result["content"][0]["text"].as_str().unwrap();
            assert!(text.contains("[1] Returns › Time limits (returns, lines 3–9) — id: returns#time"), "{text}");
            if structured {
                assert_eq!(result["structuredContent"]["sources"][0]["lines"], json!([3, 9]));
            }
            assert_eq!(replies[3]["error"]["code"], -32602, "{asked}");
            assert_eq!(replies[4]["error"]["code"], -32601, "{asked}");
        }
    }

    #[test]
    fn reading_in_pieces() {
        let server = Braid::stdio(engine(), Local { principal: acme(), write: false });
        let p = acme();
        let read = |who: Who<'_>, args: Value| match server.call("read_section", args, who).unwrap() {
            Ok((text, data)) => (false, text, data),
            Err(message) => (true, message, Value::Null),
        };
        let (_, _, first) = read(Who::from(&p), json!({"id": "returns#time", "length": 100}));
        assert_eq!(first["next_offset"], 100);
        let total = first["total"].as_u64().unwrap();
        let (_, _, last) = read(Who::from(&p), json!({"id": "returns#time", "offset": 100, "length": 20_000}));
        assert_eq!(last["length"].as_u64().unwrap(), total - 100);
        assert_eq!(last["next_offset"], Value::Null);
        for bad in [
            json!({"id": "returns#time", "length": 0}),
            json!({"id": "returns#time", "offset": 100_000}),
            json!({"id": "nope"}),
            json!({"id": 3}),
        ] {
            assert!(read(Who::from(&p), bad.clone()).0, "{bad}");
        }
        // Another tenant cannot read it, and is told the same as for an id that does not exist.
        let other = Principal::from_verified_tokens(["tenant:globex"]);
        let (hidden, text, _) = read(Who::from(&other), json!({"id": "returns#time"}));
        assert!(hidden);
        let (_, missing, _) = read(Who::from(&p), json!({"id": "nope"}));
        assert_eq!(text.replace("returns#time", "ID"), missing.replace("nope", "ID"));
        assert!(server.call("rm", json!({}), Who::from(&p)).is_none());
    }

    /// Over stdio, a 2025-03-26 batch is answered with one array: an answer for each request
    /// (refused items too), none for its notifications; in later revisions a batch is refused.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn stdio_batches_in_2025_03_26_only() {
        for revision in ["2025-03-26", "2025-06-18"] {
            let server = Braid::stdio(engine(), Local { principal: acme(), write: false });
            let (client, served) = tokio::io::duplex(1 << 20);
            let (read, write) = tokio::io::split(served);
            let running = tokio::spawn(super::super::stdio::serve(server, read, write));
            let (out, mut input) = tokio::io::split(client);
            let mut out = BufReader::new(out).lines();
            let init =
                json!({"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}});
            let batch = json!([
                rpc(2, "tools/call", json!({"name": "search", "arguments": {"query": "retrun"}})),
                {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}},
                rpc(3, "ping", json!({})),
                rpc(4, "initialize", init.clone()),
                {"jsonrpc": "2.0", "id": 5},
                rpc(6, "nope", json!({})),
            ]);
            let notes_only = json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]);
            for line in [
                rpc(1, "initialize", init),
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                batch,
                notes_only,
                rpc(7, "ping", json!({})),
            ] {
                input.write_all(format!("{line}\n").as_bytes()).await.unwrap();
            }
            let first: Value = serde_json::from_str(
                &tokio::time::timeout(Duration::from_secs(30), out.next_line()).await.unwrap().unwrap().unwrap(),
            )
            .unwrap();
            assert_eq!(first["result"]["protocolVersion"], revision);
            // The ping's answer and the batch's, in either order (requests run concurrently);
            // in 2025-03-26 the batch of notifications only gets none, later both batches are
            // refused.
            let mut lines = Vec::new();
            for _ in 0..if revision == "2025-03-26" { 2 } else { 3 } {
                lines.push(
                    serde_json::from_str::<Value>(
                        &tokio::time::timeout(Duration::from_secs(30), out.next_line())
                            .await
                            .unwrap()
                            .unwrap()
                            .unwrap(),
                    )
                    .unwrap(),
                );
            }
            let (pings, batch): (Vec<Value>, Vec<Value>) = lines.into_iter().partition(|l| l["id"] == 7);
            assert_eq!(pings.len(), 1, "{batch:?}");
            let second = &batch[0];
            if revision == "2025-06-18" {
                for refused in &batch {
                    assert_eq!(refused["error"]["code"], -32600, "{refused}");
                    assert_eq!(refused["id"], Value::Null);
                }
            } else {
                let replies = second.as_array().unwrap_or_else(|| panic!("{second}"));
                let mut by_id: Vec<(u64, &Value)> = replies.iter().map(|r| (r["id"].as_u64().unwrap(), r)).collect();
                by_id.sort_by_key(|(id, _)| *id);
                let ids: Vec<u64> = by_id.iter().map(|(id, _)| *id).collect();
                assert_eq!(ids, [2, 3, 4, 5, 6], "{second}");
                assert!(by_id[0].1["result"]["content"][0]["text"].as_str().unwrap().contains("returns#time"));
                assert!(by_id[1].1.get("result").is_some());
                assert_eq!(by_id[2].1["error"]["code"], -32600);
                assert_eq!(by_id[3].1["error"]["code"], -32600);
                assert_eq!(by_id[4].1["error"]["code"], -32601);
            }
            // Nothing else was answered: the next line answers the next request.
            input.write_all(format!("{}\n", rpc(8, "ping", json!({}))).as_bytes()).await.unwrap();
            let line = tokio::time::timeout(Duration::from_secs(30), out.next_line()).await.unwrap().unwrap().unwrap();
            assert_eq!(serde_json::from_str::<Value>(&line).unwrap()["id"], 8, "{line}");
            // The input's end (both halves of the client's pipe) ends the session.
            drop((input, out));
            tokio::time::timeout(Duration::from_secs(30), running).await.unwrap().unwrap().unwrap();
        }
    }

    #[test]
    fn batches_split_only_arrays() {
        assert!(batch_items(br#" {"jsonrpc": "2.0"}"#).is_none());
        assert_eq!(batch_items(b" [1, {}]").unwrap().unwrap().len(), 2);
        assert_eq!(batch_items(b"[]").unwrap().unwrap_err()["error"]["code"], -32600);
        assert_eq!(batch_items(b"[1,").unwrap().unwrap_err()["error"]["code"], -32700);
    }
}
