//! `braid mcp`: MCP over stdin/stdout, the same tools as `/mcp`.

use serde_json::{json, Value};

use crate::support::{build_index, stdio_session, ACME_SECRET, GLOBEX_SECRET};

#[test]
fn stdio_session_initialize_list_call_read() {
    let dir = tempfile::tempdir().unwrap();
    build_index(dir.path());
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}),
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
    // One reply per request (the notification gets none). A line that is not JSON gets none
    // either: rmcp ignores unparsable input, as the other official SDKs do (an answer to
    // garbage can start an error storm with a peer that echoes it).
    let ids: Vec<Value> = replies.iter().map(|r| r["id"].clone()).collect();
    assert_eq!(ids, [json!(1), json!(2), json!(3), json!(4), json!(5), Value::Null]);
    assert_eq!(replies[0]["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(replies[1]["result"]["tools"].as_array().unwrap().len(), 7);
    let sources = &replies[2]["result"]["structuredContent"]["sources"];
    assert_eq!(sources[0]["id"], "acme-refunds#annual");
    assert!(!replies[2].to_string().contains(GLOBEX_SECRET));
    assert!(replies[3]["result"]["structuredContent"]["text"].as_str().unwrap().contains(ACME_SECRET));
    assert_eq!(replies[4]["result"]["isError"], true);
    assert_eq!(replies[5]["error"]["code"], -32600);
}

/// A message line over the limit is dropped unread but answered (an Invalid Request of id
/// `null`), so a client waiting on it is not left waiting; the session goes on.
#[test]
fn stdio_answers_a_line_too_long_to_read() {
    let dir = tempfile::tempdir().unwrap();
    build_index(dir.path());
    let long = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "x".repeat(5 << 20)}}});
    let input = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}).to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        long.to_string(),
        json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}).to_string(),
    ];
    let out = stdio_session(dir.path(), &["--principal", "tenant:acme"], &input);
    let replies: Vec<Value> = out.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
    let ids: Vec<Value> = replies.iter().map(|r| r["id"].clone()).collect();
    assert_eq!(ids, [json!(1), json!(3), Value::Null], "{replies:?}");
    assert_eq!(replies[2]["error"]["code"], -32600);
}

/// `braid mcp --owner NAME --write` keeps that owner's memories; without `--write` the memory
/// tools read but never write, and an owner token given as a token is refused.
#[test]
fn stdio_memory_needs_an_owner_and_the_write_right() {
    let dir = tempfile::tempdir().unwrap();
    build_index(dir.path());
    let call = |id: u64, name: &str, arguments: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}});
    let remember = call(2, "remember", json!({"text": "The build server is called lighthouse"}));
    let recall = call(3, "recall", json!({"query": "build server"}));
    let session = |args: &[&str]| -> Vec<Value> {
        let input: Vec<String> = [&init, &remember, &recall].iter().map(|v| v.to_string()).collect();
        stdio_session(dir.path(), args, &input).iter().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    let writer = session(&["--principal", "tenant:acme", "--owner", "ops", "--write"]);
    assert_eq!(writer[1]["result"]["isError"], false, "{}", writer[1]);
    assert!(writer[2].to_string().contains("lighthouse"), "{}", writer[2]);
    // The same owner without the write right still recalls; another owner sees nothing.
    let reader = session(&["--principal", "tenant:acme", "--owner", "ops"]);
    assert_eq!(reader[1]["result"]["isError"], true, "{}", reader[1]);
    assert!(reader[2].to_string().contains("lighthouse"), "{}", reader[2]);
    let other = session(&["--principal", "tenant:acme", "--owner", "dev"]);
    assert_eq!(other[2]["result"]["isError"], false, "{}", other[2]);
    assert!(!other[2].to_string().contains("lighthouse"), "{}", other[2]);
    let refused = crate::support::braid()
        .args(["mcp", "--principal", "tenant:acme,owner:local:ops", "--index"])
        .arg(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--owner"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}

/// `--tool-catalogue` adds `search_tools`, which finds tool definitions by task; without it the
/// tool is neither listed nor callable.
#[test]
fn search_tools_is_offered_with_a_catalogue() {
    let dir = tempfile::tempdir().unwrap();
    build_index(dir.path());
    let catalogue = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/tools/tools.json");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}});
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": "search_tools", "arguments": {"query": "refund a payment", "k": 3}}});
    let input: Vec<String> = [&init, &list, &call].iter().map(|v| v.to_string()).collect();
    let replies = |args: &[&str]| -> Vec<Value> {
        stdio_session(dir.path(), args, &input).iter().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    let with = replies(&["--tool-catalogue", catalogue.to_str().unwrap()]);
    let names: Vec<&str> =
        with[1]["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names.last(), Some(&"search_tools"), "{names:?}");
    let found = &with[2]["result"]["structuredContent"]["tools"];
    assert_eq!(found[0]["definition"]["name"], "refund_payment", "{}", with[2]);
    assert!(found[0]["definition"]["input_schema"]["properties"]["payment_id"].is_object());
    let without = replies(&[]);
    assert!(!without[1].to_string().contains("search_tools"));
    assert!(without[2]["error"]["message"].as_str().unwrap().contains("unknown tool"), "{}", without[2]);
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

/// `braid token new` prints no entry `braid serve` would refuse: a tenant that is no tenant's
/// name, a reserved, owner or other tenant's token, an empty name.
#[test]
fn token_new_refuses_what_the_configuration_would() {
    for args in [
        &["--name", "x", "--tenant", "acme/x"][..],
        &["--name", "x", "--tenant", "ac me"],
        &["--name", "x", "--principal", "__braid:no-acl"],
        &["--name", "x", "--principal", "owner:token:y"],
        &["--name", "x", "--tenant", "acme", "--principal", "tenant:globex"],
        &["--name", " "],
    ] {
        let out = crate::support::braid().args(["token", "new"]).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stdout));
    }
}
