//! `braid mcp`: MCP over stdin/stdout, the same tools as `/mcp`.

use serde_json::{json, Value};

use crate::support::{build_index, stdio_session, ACME_SECRET, GLOBEX_SECRET};

#[test]
fn stdio_session_initialize_list_call_read() {
    let dir = tempfile::tempdir().unwrap();
    build_index(dir.path());
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "refund clause"}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "read_section", "arguments": {"id": "acme-refunds#annual"}}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "read_section", "arguments": {"id": "globex-refunds#annual"}}}),
        // Revision 2025-06-18 was agreed: a batch is refused.
        json!([{"jsonrpc": "2.0", "id": 6, "method": "ping"}]),
    ];
    let mut input: Vec<String> = lines.iter().map(Value::to_string).collect();
    input.push("{not json".to_string());
    let out = stdio_session(dir.path(), &["--principal", "tenant:acme"], &input);
    let replies: Vec<Value> = out.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
    // One reply per request (the notification gets none), in order.
    let ids: Vec<Value> = replies.iter().map(|r| r["id"].clone()).collect();
    assert_eq!(ids, [json!(1), json!(2), json!(3), json!(4), json!(5), Value::Null, Value::Null]);
    assert_eq!(replies[0]["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(replies[1]["result"]["tools"].as_array().unwrap().len(), 6);
    let sources = &replies[2]["result"]["structuredContent"]["sources"];
    assert_eq!(sources[0]["id"], "acme-refunds#annual");
    assert!(!replies[2].to_string().contains(GLOBEX_SECRET));
    assert!(replies[3]["result"]["structuredContent"]["text"].as_str().unwrap().contains(ACME_SECRET));
    assert_eq!(replies[4]["result"]["isError"], true);
    assert_eq!(replies[5]["error"]["code"], -32600);
    assert_eq!(replies[6]["error"]["code"], -32700);
}

#[test]
fn token_hash_matches_token_new() {
    let token = crate::support::new_token(&["--name", "x"]);
    let mut child = crate::support::braid()
        .args(["token", "hash"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        writeln!(child.stdin.take().unwrap(), "{}", token.token).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let hash = String::from_utf8(out.stdout).unwrap();
    assert!(token.entry.contains(&format!("sha256 = \"{}\"", hash.trim())), "{}", token.entry);
    // A short token is refused.
    let mut child = crate::support::braid()
        .args(["token", "hash"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        writeln!(child.stdin.take().unwrap(), "short").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 16"));
}
