//! MCP 2026-07-28 over Streamable HTTP and stdio: requests without `initialize`, the
//! `MCP-Protocol-Version` / `Mcp-Method` / `Mcp-Name` headers checked against the body,
//! `server/discover`, `resultType`, cache hints, and the errors the revision defines.

use serde_json::{json, Value};

use crate::support::{build_index, stdio_session, Reply, Server, GLOBEX_SECRET};

const V: &str = "2026-07-28";

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"}
    })
}

fn request(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// POST /mcp with these MCP headers (`None`: left out).
fn post(
    server: &Server,
    token: &str,
    version: Option<&str>,
    method: Option<&str>,
    name: Option<&str>,
    body: &Value,
) -> Reply {
    let auth = format!("Bearer {token}");
    let mut headers = vec![
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    for (header, value) in [("MCP-Protocol-Version", version), ("Mcp-Method", method), ("Mcp-Name", name)] {
        if let Some(v) = value {
            headers.push((header, v));
        }
    }
    server.request("POST", "/mcp", &headers, Some(&body.to_string()))
}

/// A well-formed 2026-07-28 request: headers mirror the body.
fn modern(server: &Server, token: &str, body: &Value) -> Reply {
    let method = body["method"].as_str();
    let name = body["params"]["name"].as_str();
    post(server, token, Some(V), method, name, body)
}

#[test]
fn http_requests_stand_alone() {
    let server = Server::start();
    let token = &server.acme;

    // server/discover, with no initialize before it.
    let reply = modern(&server, token, &request(1, "server/discover", json!({})));
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(reply.header("mcp-session-id").is_none());
    let r = &reply.json()["result"];
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["supportedVersions"], json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]));
    assert!(r["capabilities"]["tools"].is_object());
    assert_eq!(r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "braid");
    assert!(r["ttlMs"].as_u64().is_some() && r["cacheScope"] == "public");

    // tools/list: cacheable, but only for this caller.
    let reply = modern(&server, token, &request(2, "tools/list", json!({})));
    assert_eq!(reply.status, 200, "{}", reply.text);
    let r = &reply.json()["result"];
    assert_eq!((r["resultType"].as_str(), r["cacheScope"].as_str()), (Some("complete"), Some("private")));
    assert!(r["ttlMs"].as_u64().unwrap() > 0);
    let names: Vec<&str> = r["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["search", "read_section", "outline", "remember", "recall", "forget", "update"]);
    assert!(r["tools"][0]["outputSchema"].is_object());

    // tools/call: cited, structured, and only what this caller may see.
    let call = request(3, "tools/call", json!({"name": "search", "arguments": {"query": "refund annual plan"}}));
    let reply = modern(&server, token, &call);
    assert_eq!(reply.status, 200, "{}", reply.text);
    let r = &reply.json()["result"];
    assert_eq!((r["resultType"].as_str(), r["isError"].as_bool()), (Some("complete"), Some(false)));
    assert_eq!(r["structuredContent"]["sources"][0]["id"], "acme-refunds#annual");
    assert!(r["content"][0]["text"].as_str().unwrap().contains("[1] Refund policy"));
    assert!(!reply.text.contains(GLOBEX_SECRET));
    // Mcp-Name may come Base64-encoded.
    let encoded = format!("=?base64?{}?=", "c2VhcmNo"); // "search"
    let reply = post(&server, token, Some(V), Some("tools/call"), Some(&encoded), &call);
    assert_eq!(reply.status, 200, "{}", reply.text);

    // Notifications: 202, no body.
    let note =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "_meta": meta()}});
    let reply = post(&server, token, Some(V), Some("notifications/cancelled"), None, &note);
    assert_eq!((reply.status, reply.text.as_str()), (202, ""));
}

#[test]
fn http_rules_of_the_revision() {
    let server = Server::start();
    let token = &server.acme;
    let code = |r: &Reply| r.json()["error"]["code"].as_i64();
    let list = request(1, "tools/list", json!({}));
    let call = request(2, "tools/call", json!({"name": "search", "arguments": {"query": "refund"}}));

    // Header and body disagree, or a required header is missing: 400 HeaderMismatch.
    for (what, reply) in [
        ("no Mcp-Method", post(&server, token, Some(V), None, None, &list)),
        ("Mcp-Method differs", post(&server, token, Some(V), Some("tools/call"), None, &list)),
        ("no Mcp-Name", post(&server, token, Some(V), Some("tools/call"), None, &call)),
        ("Mcp-Name differs", post(&server, token, Some(V), Some("tools/call"), Some("read_section"), &call)),
        ("bad base64 name", post(&server, token, Some(V), Some("tools/call"), Some("=?base64?!!?="), &call)),
        ("header older than _meta", post(&server, token, Some("2025-11-25"), Some("tools/list"), None, &list)),
        ("no header, _meta modern", post(&server, token, None, Some("tools/list"), None, &list)),
    ] {
        assert_eq!((reply.status, code(&reply)), (400, Some(-32020)), "{what}: {}", reply.text);
        assert!(!reply.json()["error"]["message"].as_str().unwrap().is_empty(), "{what}");
    }
    // The header names 2026-07-28, the body another revision.
    let mut older = list.clone();
    older["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let reply = modern(&server, token, &older);
    assert_eq!((reply.status, code(&reply)), (400, Some(-32020)), "{}", reply.text);

    // An unsupported revision, in the header and in _meta: 400 UnsupportedProtocolVersion,
    // listing them. (A header naming another revision than _meta is a HeaderMismatch first.)
    let mut unknown = list.clone();
    unknown["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let reply = post(&server, token, Some("1900-01-01"), Some("tools/list"), None, &unknown);
    assert_eq!((reply.status, code(&reply)), (400, Some(-32022)), "{}", reply.text);
    let data = &reply.json()["error"]["data"];
    assert_eq!(data["supported"][0], V);
    assert_eq!(data["requested"], "1900-01-01");

    // Required _meta missing: 400 Invalid params.
    let mut bare = list.clone();
    bare["params"] = json!({});
    let reply = modern(&server, token, &bare);
    assert_eq!((reply.status, code(&reply)), (400, Some(-32602)), "{}", reply.text);
    let mut no_caps = list.clone();
    no_caps["params"]["_meta"].as_object_mut().unwrap().remove("io.modelcontextprotocol/clientCapabilities");
    let reply = modern(&server, token, &no_caps);
    assert_eq!((reply.status, code(&reply)), (400, Some(-32602)), "{}", reply.text);

    // Unknown methods (ping is gone in 2026-07-28): 404 with -32601.
    for method in ["ping", "prompts/list", "initialized"] {
        let reply = modern(&server, token, &request(5, method, json!({})));
        assert_eq!((reply.status, code(&reply)), (404, Some(-32601)), "{method}: {}", reply.text);
        assert_eq!(reply.json()["id"], 5);
    }
    // Resources are served in this revision too, a listing private to its caller.
    let reply = modern(&server, token, &request(7, "resources/list", json!({})));
    assert_eq!(reply.status, 200, "{}", reply.text);
    let r = &reply.json()["result"];
    assert!(r["resources"].as_array().is_some_and(|l| !l.is_empty()), "{r}");
    assert_eq!((r["resultType"].as_str(), r["cacheScope"].as_str()), (Some("complete"), Some("private")));
    // Unknown tool: Invalid params.
    let bad = request(6, "tools/call", json!({"name": "delete_everything"}));
    let reply = modern(&server, token, &bad);
    assert_eq!(code(&reply), Some(-32602));

    // One message per POST.
    let reply = post(&server, token, Some(V), Some("tools/list"), None, &json!([list]));
    assert_eq!((reply.status, code(&reply)), (400, Some(-32600)), "{}", reply.text);

    // GET and DELETE on the endpoint: 405.
    for method in ["GET", "DELETE"] {
        let auth = format!("Bearer {token}");
        assert_eq!(server.request(method, "/mcp", &[("Authorization", &auth)], None).status, 405, "{method}");
    }

    // Legacy clients are served as before: initialize, then the negotiated revision.
    let init = json!({"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {"protocolVersion": V, "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}});
    let reply = post(&server, token, None, None, None, &init);
    // A handshake cannot reach 2026-07-28 (it needs none): the newest handshake revision is offered.
    assert_eq!(reply.json()["result"]["protocolVersion"], "2025-11-25", "{}", reply.text);
    let legacy = json!({"jsonrpc": "2.0", "id": 10, "method": "tools/list"});
    let reply = post(&server, token, Some("2025-11-25"), None, None, &legacy);
    assert_eq!(reply.status, 200);
    assert!(reply.json()["result"].get("resultType").is_none());
}

#[test]
fn stdio_requests_name_their_revision() {
    let dir = tempfile::tempdir().unwrap();
    build_index(&dir.path().join("index"));
    let lines = [
        request(1, "server/discover", json!({})),
        request(2, "tools/list", json!({})),
        request(3, "tools/call", json!({"name": "search", "arguments": {"query": "refund annual plan"}})),
        {
            let mut r = request(4, "tools/list", json!({}));
            r["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
            r
        },
        request(5, "ping", json!({})),
        // An initialize is still answered, with a handshake revision. (The era is the
        // connection's: this process began without a handshake, so later requests still carry
        // their `_meta`.)
        json!({"jsonrpc": "2.0", "id": 6, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}),
    ];
    let input: Vec<String> = lines.iter().map(Value::to_string).collect();
    let out = stdio_session(&dir.path().join("index"), &["--principal", "tenant:acme"], &input);
    let replies: Vec<Value> = out.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(replies.len(), 6, "{out:?}");
    assert_eq!(replies[0]["result"]["supportedVersions"][0], V);
    assert_eq!(replies[1]["result"]["cacheScope"], "private");
    assert_eq!(replies[2]["result"]["resultType"], "complete");
    assert_eq!(replies[2]["result"]["structuredContent"]["sources"][0]["id"], "acme-refunds#annual");
    assert!(!out[2].contains(GLOBEX_SECRET));
    assert_eq!(replies[3]["error"]["code"], -32022);
    assert_eq!(replies[4]["error"]["code"], -32601);
    assert_eq!(replies[5]["result"]["protocolVersion"], "2025-06-18");
}
