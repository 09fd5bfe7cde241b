//! The Model Context Protocol, without a transport: JSON-RPC 2.0 messages, protocol-version
//! negotiation, and the two tools, `search` and `read_section`. The HTTP transport
//! (`http.rs`, stateless Streamable HTTP) and the stdio transport (`stdio.rs`) hand it parsed
//! JSON and the caller's principal; both tools call the same [`Engine`] as the REST API.
//!
//! Tool failures (bad arguments, an id the caller cannot see, a search error) come back as
//! results with `isError: true`, so the model can read them; protocol failures (not JSON-RPC,
//! unknown method, unknown tool) as JSON-RPC errors.

use std::sync::Arc;

use braid::{Principal, SearchResponse};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::api::{Engine, Failure, SearchParams};
use super::schema;

/// JSON-RPC: the payload is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: the payload is not a valid request.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: no such method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: the params are wrong (including an unknown tool name).
pub const INVALID_PARAMS: i64 = -32602;

/// A protocol revision this server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Version {
    /// 2025-03-26: Streamable HTTP, JSON-RPC batches, tool annotations.
    V2025_03_26,
    /// 2025-06-18: no batches; `MCP-Protocol-Version` header; structured tool output.
    V2025_06_18,
    /// 2025-11-25.
    V2025_11_25,
}

impl Version {
    /// Every revision spoken, newest first.
    pub const SUPPORTED: [Version; 3] = [Version::V2025_11_25, Version::V2025_06_18, Version::V2025_03_26];
    /// What a client asking for an unknown revision is offered.
    pub const LATEST: Version = Version::V2025_11_25;
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

/// The reply to a payload and what the transport needs to know about it.
#[derive(Debug)]
pub struct Outcome {
    /// The reply.
    pub reply: Reply,
    /// The payload was not a valid JSON-RPC message (the HTTP transport answers 400).
    pub malformed: bool,
    /// The revision an `initialize` in the payload agreed on.
    pub negotiated: Option<Version>,
}

impl Outcome {
    fn reply(value: Value) -> Outcome {
        Outcome { reply: Reply::One(value), malformed: false, negotiated: None }
    }

    fn malformed(value: Value) -> Outcome {
        Outcome { reply: Reply::One(value), malformed: true, negotiated: None }
    }

    fn nothing() -> Outcome {
        Outcome { reply: Reply::Nothing, malformed: false, negotiated: None }
    }
}

/// A JSON-RPC error response.
pub fn error(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message.into() } })
}

fn result(id: Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
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

    /// Answers one payload — a message, or (in revision 2025-03-26 only) a batch of them — on
    /// behalf of `principal`, in protocol revision `version`.
    pub fn handle(&self, payload: Value, version: Version, principal: &Principal) -> Outcome {
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
        Outcome { reply, malformed: false, negotiated: None }
    }

    fn message(&self, message: Value, version: Version, principal: &Principal) -> Outcome {
        let Value::Object(obj) = message else {
            return Outcome::malformed(error(Value::Null, INVALID_REQUEST, "a JSON-RPC message is a JSON object"));
        };
        let id = match obj.get("id") {
            None => None,
            Some(id @ (Value::String(_) | Value::Number(_))) => Some(id.clone()),
            Some(_) => {
                return Outcome::malformed(error(Value::Null, INVALID_REQUEST, "id must be a string or a number"))
            }
        };
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            let id = id.unwrap_or(Value::Null);
            return Outcome::malformed(error(id, INVALID_REQUEST, "jsonrpc must be \"2.0\""));
        }
        let method = match obj.get("method") {
            Some(Value::String(m)) => m.as_str(),
            Some(_) => return Outcome::malformed(error(id.unwrap_or(Value::Null), INVALID_REQUEST, "bad method")),
            // A response to a server request: this server sends none, so there is nothing to do.
            None if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) => {
                return Outcome::nothing()
            }
            None => return Outcome::malformed(error(id.unwrap_or(Value::Null), INVALID_REQUEST, "no method")),
        };
        // Notifications (initialized, cancelled, …) need no answer; a stateless server has
        // nothing to update.
        let Some(id) = id else { return Outcome::nothing() };
        let empty = Value::Object(Map::new());
        let params = match obj.get("params") {
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
                let agreed = Version::parse(asked).unwrap_or(Version::LATEST);
                let mut outcome = Outcome::reply(result(id, initialize_result(agreed)));
                outcome.negotiated = Some(agreed);
                outcome
            }
            "ping" => Outcome::reply(result(id, json!({}))),
            "tools/list" => Outcome::reply(result(id, json!({ "tools": self.tools(version) }))),
            "tools/call" => {
                let Some(name) = params.get("name").and_then(Value::as_str) else {
                    return Outcome::reply(error(id, INVALID_PARAMS, "tools/call needs params.name"));
                };
                let arguments = params.get("arguments").cloned().unwrap_or_else(|| json!({}));
                let answer = match name {
                    "search" => self.search(arguments, principal),
                    "read_section" => self.read_section(arguments, principal),
                    _ => return Outcome::reply(error(id, INVALID_PARAMS, format!("unknown tool: {name}"))),
                };
                tracing::debug!(target: "braid::serve::mcp", tool = name, is_error = answer.is_err(), "tool call");
                Outcome::reply(result(id, tool_result(answer, version)))
            }
            _ => Outcome::reply(error(id, METHOD_NOT_FOUND, format!("method not found: {method}"))),
        }
    }

    /// The tool definitions, as `tools/list` returns them in `version`.
    pub fn tools(&self, version: Version) -> Vec<Value> {
        let defs = "#/$defs";
        let mut search_input = schema::search_params(defs, self.engine.max_k);
        search_input["$defs"] = json!({ "Filter": schema::filter(defs) });
        let tools = [
            (
                "search",
                "Search documents",
                "Search the indexed documents and get ranked sections with citations: title, heading path, \
                 line range and a snippet for each, numbered [1], [2], …. Typos, exact codes and plain \
                 questions all work. Only records your credentials may see are searched. Read a hit in \
                 full with read_section.",
                search_input,
                schema::search_output(),
            ),
            (
                "read_section",
                "Read a section",
                "Read the text of one section by the id search returned. Long sections are read in pieces: \
                 pass the next_offset of one read as the offset of the next.",
                schema::read_params(),
                schema::read_output(),
            ),
        ];
        tools
            .into_iter()
            .map(|(name, title, description, input, output)| {
                let mut tool = json!({
                    "name": name,
                    "description": description,
                    "inputSchema": input,
                    // Both tools only read a closed index: no side effects, same answer twice.
                    "annotations": {
                        "title": title,
                        "readOnlyHint": true,
                        "destructiveHint": false,
                        "idempotentHint": true,
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
        let mut out = format!(
            "{}, characters {}–{end} of {total}:\n\n{text}",
            citation(&record.title, &record.parent, &record.section, record.lines),
            p.offset
        );
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
    ["initialize", "ping", "tools/list", "tools/call"].into_iter().find(|m| *m == method).unwrap_or("other")
}

fn initialize_result(version: Version) -> Value {
    json!({
        "protocolVersion": version.name(),
        "capabilities": { "tools": { "listChanged": false } },
        "serverInfo": { "name": "braid", "title": "Braid", "version": env!("CARGO_PKG_VERSION") },
        "instructions": "Use `search` to find passages (cite them as [n]) and `read_section` to read one in full."
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

/// "Title › Heading › Sub (article, lines 3–9)".
fn citation(title: &str, parent: &Option<String>, section: &[String], lines: Option<(u32, u32)>) -> String {
    let mut out = title.to_string();
    for heading in section.iter().filter(|h| h.as_str() != title) {
        out.push_str(" › ");
        out.push_str(heading);
    }
    let mut place = Vec::new();
    if let Some(parent) = parent {
        place.push(parent.clone());
    }
    if let Some((s, e)) = lines {
        place.push(format!("lines {s}–{e}"));
    }
    if !place.is_empty() {
        out.push_str(&format!(" ({})", place.join(", ")));
    }
    out
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
        text.push_str(&format!(
            "\n[{}] {} — id: {}",
            i + 1,
            citation(&hit.title, &hit.parent, &hit.section, hit.lines),
            hit.id
        ));
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
    let data = json!({ "sources": sources, "suggestions": response.suggestions, "steps": steps, "legs": legs });
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
        for (asked, agreed) in
            [("2025-03-26", "2025-03-26"), ("2025-06-18", "2025-06-18"), ("1999-01-01", "2025-11-25")]
        {
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
