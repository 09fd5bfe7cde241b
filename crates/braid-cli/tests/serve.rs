//! `braid serve`: a spawned server on an ephemeral loopback port, a real HTTP client.

use serde_json::{json, Value};

use crate::support::{validate, Server, ACME_SECRET, GLOBEX_SECRET};

const ACCEPT_BOTH: (&str, &str) = ("Accept", "application/json, text/event-stream");
const JSON: (&str, &str) = ("Content-Type", "application/json");

fn rpc(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

#[test]
fn mcp_session_initialize_list_call_read() {
    let server = Server::start();
    let token = &server.acme;

    // initialize: no MCP-Protocol-Version header yet; the server agrees on the client's version.
    let init = rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}),
    );
    let reply = server.mcp(token, None, &init);
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(reply.header("content-type").unwrap().starts_with("application/json"));
    assert!(reply.header("mcp-session-id").is_none(), "a stateless server issues no session");
    let result = &reply.json()["result"];
    assert_eq!(result["protocolVersion"], "2025-06-18");
    assert_eq!(result["serverInfo"]["name"], "braid");
    assert!(result["capabilities"]["tools"].is_object());

    // The initialized notification: 202, no body.
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let reply = server.mcp(token, Some("2025-06-18"), &note);
    assert_eq!((reply.status, reply.text.as_str()), (202, ""));

    // tools/list: both tools, with schemas and truthful annotations.
    let reply = server.mcp(token, Some("2025-06-18"), &rpc(2, "tools/list", json!({})));
    assert_eq!(reply.status, 200);
    let tools = reply.json()["result"]["tools"].as_array().unwrap().clone();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["search", "read_section", "outline", "remember", "recall", "forget", "update"]);
    for tool in &tools {
        assert_eq!(tool["inputSchema"]["type"], "object");
        assert_eq!(tool["outputSchema"]["type"], "object");
        let a = &tool["annotations"];
        // Reading tools are read-only and idempotent; remember adds, forget and update delete.
        let expected = match tool["name"].as_str().unwrap() {
            "search" | "read_section" | "outline" | "recall" => (true, false, true),
            "remember" => (false, false, false),
            "forget" => (false, true, true),
            _ => (false, true, false),
        };
        assert_eq!(
            (&a["readOnlyHint"], &a["destructiveHint"], &a["idempotentHint"]),
            (&json!(expected.0), &json!(expected.1), &json!(expected.2)),
            "{}",
            tool["name"]
        );
        assert_eq!(a["openWorldHint"], false);
    }
    let search_tool = &tools[0];
    validate(
        &search_tool["inputSchema"],
        &json!({"query": "refund", "k": 3, "filters": [{"parent": {"id": "acme-refunds"}}]}),
    )
    .unwrap();
    assert!(validate(&search_tool["inputSchema"], &json!({"query": "refund", "principal": ["tenant:globex"]})).is_err());

    // tools/call search: concise cited text, and structured sources conforming to the schema.
    let result = server.call_tool(token, "search", json!({"query": "refund annual plan", "k": 5}));
    assert_eq!(result["isError"], false);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("[1] Refund policy › Refunds › Annual plans (acme-refunds, lines 3–9) — id: acme-refunds#annual"),
        "{text}"
    );
    let data = &result["structuredContent"];
    validate(&search_tool["outputSchema"], data).unwrap();
    assert_eq!(data["sources"][0]["id"], "acme-refunds#annual");
    // With a token budget the tool says how many tokens its results hold.
    let budgeted = server.call_tool(token, "search", json!({"query": "refund annual plan", "token_budget": 400}));
    validate(&search_tool["outputSchema"], &budgeted["structuredContent"]).unwrap();
    let tokens = budgeted["structuredContent"]["tokens"].as_u64().unwrap();
    assert!(tokens <= 400 && budgeted["content"][0]["text"].as_str().unwrap().contains(&format!("{tokens} tokens")));
    assert_eq!(data["sources"][0]["section"], json!(["Refunds", "Annual plans"]));
    assert_eq!(data["sources"][0]["lines"], json!([3, 9]));
    // Stage timings are for operators only (docs/threat-model.md): a tenant's token sees none.
    assert_eq!(data["steps"], json!({}));

    // tools/call read_section on the cited id.
    let result = server.call_tool(token, "read_section", json!({"id": "acme-refunds#annual"}));
    assert_eq!(result["isError"], false);
    validate(&tools[1]["outputSchema"], &result["structuredContent"]).unwrap();
    assert!(result["structuredContent"]["text"].as_str().unwrap().contains(ACME_SECRET));
    // tools/call outline: the caller's articles and their sections, never another tenant's.
    let listed = server.call_tool(token, "outline", json!({}));
    assert_eq!(listed["isError"], false, "{listed}");
    validate(&tools[2]["outputSchema"], &listed["structuredContent"]).unwrap();
    let ids: Vec<&str> =
        listed["structuredContent"]["entries"].as_array().unwrap().iter().filter_map(|e| e["id"].as_str()).collect();
    assert!(ids.contains(&"acme-refunds") && ids.contains(&"shipping"), "{listed}");
    assert!(!listed.to_string().contains("globex"), "{listed}");
    assert!(listed["content"][0]["text"].as_str().unwrap().contains("id: acme-refunds#annual"), "{listed}");
    // Resources: the caller's records as braid://records/{id}, read whole; another tenant's
    // answers as a missing one.
    let rpc_result = |id: u64, method: &str, params: Value| {
        let reply = server.mcp(token, Some("2025-06-18"), &rpc(id, method, params));
        assert_eq!(reply.status, 200, "{}", reply.text);
        reply.json()
    };
    let listed = rpc_result(20, "resources/list", json!({}));
    let uris: Vec<&str> =
        listed["result"]["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert!(
        uris.contains(&"braid://records/acme-refunds%23annual") && uris.contains(&"braid://records/shipping"),
        "{uris:?}"
    );
    assert!(!listed.to_string().contains("globex"), "{listed}");
    let read = rpc_result(21, "resources/read", json!({"uri": "braid://records/acme-refunds%23annual"}));
    assert!(read["result"]["contents"][0]["text"].as_str().unwrap().contains(ACME_SECRET), "{read}");
    let hidden = rpc_result(22, "resources/read", json!({"uri": "braid://records/globex-refunds%23annual"}));
    let missing = rpc_result(22, "resources/read", json!({"uri": "braid://records/nope%23annual"}));
    assert_eq!(hidden["error"]["code"], -32002, "{hidden}");
    assert_eq!(
        hidden["error"]["message"].as_str().unwrap().replace("globex-refunds", "X"),
        missing["error"]["message"].as_str().unwrap().replace("nope", "X")
    );
    let templates = rpc_result(23, "resources/templates/list", json!({}));
    assert_eq!(templates["result"]["resourceTemplates"][0]["uriTemplate"], "braid://records/{id}");
    // A long section reads in pieces.
    let first = server.call_tool(token, "read_section", json!({"id": "shipping", "length": 100}));
    let next = first["structuredContent"]["next_offset"].as_u64().unwrap();
    let rest = server.call_tool(token, "read_section", json!({"id": "shipping", "offset": next, "length": 20000}));
    let total = first["structuredContent"]["total"].as_u64().unwrap();
    assert_eq!(next + rest["structuredContent"]["length"].as_u64().unwrap(), total);
}

#[test]
fn mcp_protocol_versions_batches_and_errors() {
    let server = Server::start();
    let token = &server.acme;
    for (asked, agreed) in [("2025-03-26", "2025-03-26"), ("2025-06-18", "2025-06-18"), ("2031-01-01", "2025-11-25")] {
        let reply = server.mcp(
            token,
            None,
            &rpc(
                1,
                "initialize",
                json!({"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}),
            ),
        );
        assert_eq!(reply.json()["result"]["protocolVersion"], agreed, "{asked}");
    }
    // An unsupported MCP-Protocol-Version header is a 400.
    let reply = server.mcp(token, Some("2031-01-01"), &rpc(1, "tools/list", json!({})));
    assert_eq!(reply.status, 400);
    // Without the header, 2025-03-26 is assumed: batches work, and results have no structured content.
    let batch = format!(
        "[{},{}]",
        rpc(1, "ping", json!({})),
        rpc(2, "tools/call", json!({"name": "search", "arguments": {"query": "refund"}}))
    );
    let reply = server.mcp(token, None, &batch);
    assert_eq!(reply.status, 200, "{}", reply.text);
    let replies = reply.json();
    assert_eq!(replies.as_array().unwrap().len(), 2);
    assert!(replies[1]["result"]["content"].is_array() && replies[1]["result"].get("structuredContent").is_none());
    // From 2025-06-18 on, a batch is an invalid request.
    let reply = server.mcp(token, Some("2025-06-18"), &batch);
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json()["error"]["code"], -32600);
    // Malformed JSON: a JSON-RPC parse error with a null id.
    let reply = server.mcp(token, Some("2025-06-18"), "{\"jsonrpc\": \"2.0\", \"id\": 1, ");
    assert_eq!(reply.status, 400);
    assert_eq!((reply.json()["error"]["code"].clone(), reply.json()["id"].clone()), (json!(-32700), Value::Null));
    // Unknown method and unknown tool: JSON-RPC errors.
    let reply = server.mcp(token, Some("2025-06-18"), &rpc(3, "prompts/list", json!({})));
    assert_eq!(reply.json()["error"]["code"], -32601);
    let reply = server.mcp(token, Some("2025-06-18"), &rpc(4, "tools/call", json!({"name": "delete_everything"})));
    assert_eq!(reply.json()["error"]["code"], -32602);
    // Tool failures: isError results the model can read.
    for arguments in
        [json!({"query": "refund", "k": 1000}), json!({"query": "refund", "mode": "semantic"}), json!({"k": 3})]
    {
        let result = server.call_tool(token, "search", arguments.clone());
        assert_eq!(result["isError"], true, "{arguments}");
        assert!(!result["content"][0]["text"].as_str().unwrap().is_empty());
    }
    // Accept and Content-Type are checked.
    let auth = format!("Bearer {token}");
    let body = rpc(5, "ping", json!({}));
    let reply = server.request("POST", "/mcp", &[("Authorization", &auth), JSON, ("Accept", "text/html")], Some(&body));
    assert_eq!(reply.status, 406);
    let reply = server.request(
        "POST",
        "/mcp",
        &[("Authorization", &auth), ("Content-Type", "text/plain"), ACCEPT_BOTH],
        Some(&body),
    );
    assert_eq!(reply.status, 415);
}

#[test]
fn http_status_paths_401_405_413_429_403() {
    let server = Server::start();
    let body = rpc(1, "tools/list", json!({}));
    // 405 for GET and DELETE on /mcp, with or without a token, so clients fall back to POST.
    for method in ["GET", "DELETE"] {
        let reply = server.request(method, "/mcp", &[ACCEPT_BOTH], None);
        assert_eq!(reply.status, 405, "{method}");
        assert_eq!(reply.header("allow"), Some("POST"));
    }
    let auth = format!("Bearer {}", server.acme);
    assert_eq!(
        server.request("GET", "/mcp", &[("Authorization", &auth), ("Accept", "text/event-stream")], None).status,
        405
    );
    // 401: no token, a wrong token, another scheme — on every protected route.
    let wrong = format!("Bearer {}x", server.acme);
    let basic = format!("Basic {}", server.acme);
    for (path, method, payload) in [
        ("/mcp", "POST", Some(body.as_str())),
        ("/v1/search", "POST", Some("{\"query\": \"refund\"}")),
        ("/v1/stats", "GET", None),
    ] {
        for auth in [None, Some(wrong.as_str()), Some(basic.as_str())] {
            let mut headers = vec![JSON, ACCEPT_BOTH];
            if let Some(a) = auth {
                headers.push(("Authorization", a));
            }
            let reply = server.request(method, path, &headers, payload);
            assert_eq!(reply.status, 401, "{path} {auth:?}");
            assert!(reply.header("www-authenticate").unwrap().starts_with("Bearer"));
            assert_eq!(reply.json()["error"]["code"], "unauthorized");
        }
    }
    // 413: a body over max_body_bytes (4096), on both surfaces.
    let big = json!({"query": "refund ".repeat(1000)}).to_string();
    assert_eq!(server.search(&server.acme, serde_json::from_str(&big).unwrap()).status, 413);
    let big_rpc = rpc(1, "tools/call", json!({"name": "search", "arguments": {"query": "x".repeat(8000)}}));
    assert_eq!(server.mcp(&server.acme, Some("2025-06-18"), &big_rpc).status, 413);
    // 429: the limited token has a burst of 2 and refills slowly; other tokens are unaffected.
    let statuses: Vec<u16> =
        (0..4).map(|_| server.search(&server.limited, json!({"query": "refund"})).status).collect();
    assert_eq!(statuses, [200, 200, 429, 429]);
    let reply = server.mcp(&server.limited, Some("2025-06-18"), &body);
    assert_eq!(reply.status, 429);
    assert!(reply.header("retry-after").unwrap().parse::<u64>().unwrap() >= 1);
    assert_eq!(server.search(&server.acme, json!({"query": "refund"})).status, 200);
    // 403: a browser origin that is not allowed (DNS rebinding); an allowed one passes.
    let search = "{\"query\": \"refund\"}";
    let evil = server.request(
        "POST",
        "/v1/search",
        &[("Authorization", &auth), JSON, ("Origin", "http://evil.example")],
        Some(search),
    );
    assert_eq!(evil.status, 403);
    let ok = server.request(
        "POST",
        "/v1/search",
        &[("Authorization", &auth), JSON, ("Origin", "http://localhost:3000")],
        Some(search),
    );
    assert_eq!(ok.status, 200);
    // Every response carries a request id.
    assert!(ok.header("x-request-id").is_some());
}

#[test]
fn two_tenants_never_see_each_other() {
    let server = Server::start();
    let cases =
        [(&server.acme, "acme", ACME_SECRET, GLOBEX_SECRET), (&server.globex, "globex", GLOBEX_SECRET, ACME_SECRET)];
    for (token, tenant, own, other) in cases {
        let own_id = format!("{tenant}-refunds#annual");
        for query in ["refund annual plan", own, other, "clause", "refnd anual"] {
            for mode in ["auto", "lexical", "fuzzy", "hybrid"] {
                // REST
                let reply = server.search(token, json!({"query": query, "mode": mode, "k": 50}));
                assert_eq!(reply.status, 200, "{}", reply.text);
                let v = reply.json();
                for hit in v["hits"].as_array().unwrap() {
                    let id = hit["id"].as_str().unwrap();
                    assert!(id == own_id || id == "shipping", "{tenant} saw {id} for {query:?}");
                }
                // Nothing of the other tenant: not in hits, not as a suggestion. (Suggestions
                // echo the caller's own query words as `term`, so only `suggestion` is checked.)
                let suggested: Vec<&Value> =
                    v["suggestions"].as_array().into_iter().flatten().map(|s| &s["suggestion"]).collect();
                assert!(!v["hits"].to_string().contains(other), "{tenant}: {query:?} {mode}");
                assert!(!json!(suggested).to_string().contains(other), "{tenant}: {query:?} {mode}");
                assert_eq!(v["stats"]["allowed"], 2);
                // MCP
                let result = server.call_tool(token, "search", json!({"query": query, "mode": mode, "k": 50}));
                let data = &result["structuredContent"];
                let other_tenant = if tenant == "acme" { "globex" } else { "acme" };
                assert!(!data["sources"].to_string().contains(other), "{tenant}: {data}");
                assert!(!data["sources"].to_string().contains(other_tenant), "{tenant}: {data}");
                let cited: String = result["content"][0]["text"]
                    .as_str()
                    .unwrap()
                    .lines()
                    .filter(|l| !l.starts_with("Did you mean"))
                    .collect();
                assert!(!cited.contains(other) && !cited.contains(other_tenant), "{tenant}: {cited}");
            }
        }
        // Reading the other tenant's section fails exactly as reading a missing one does.
        let other_id = if tenant == "acme" { "globex-refunds#annual" } else { "acme-refunds#annual" };
        let hidden = server.call_tool(token, "read_section", json!({"id": other_id}));
        let missing = server.call_tool(token, "read_section", json!({"id": "no-such-id"}));
        assert_eq!((&hidden["isError"], &missing["isError"]), (&json!(true), &json!(true)));
        let text = |r: &Value, id: &str| r["content"][0]["text"].as_str().unwrap().replace(id, "ID");
        assert_eq!(text(&hidden, other_id), text(&missing, "no-such-id"));
        assert!(server.call_tool(token, "read_section", json!({"id": own_id}))["structuredContent"]["text"]
            .as_str()
            .unwrap()
            .contains(own));
        // The principal comes only from the token: a body or tool argument naming one is refused.
        let reply = server.search(token, json!({"query": "refund", "principal": ["tenant:acme", "tenant:globex"]}));
        assert_eq!(reply.status, 400);
        assert!(reply.text.contains("unknown field `principal`"), "{}", reply.text);
        let result = server.call_tool(token, "search", json!({"query": "refund", "principal": ["tenant:globex"]}));
        assert_eq!(result["isError"], true);
        // Stats count only what the caller may see.
        let auth = format!("Bearer {token}");
        let stats = server.request("GET", "/v1/stats", &[("Authorization", &auth)], None).json();
        assert_eq!(stats["caller"]["visible_records"], 2);
        assert_eq!(stats["caller"]["name"], format!("{tenant}-agent"));
    }
}

#[test]
fn public_routes_openapi_and_logs() {
    let server = Server::start();
    assert_eq!(server.request("GET", "/v1/health", &[], None).json()["status"], "ok");
    let doc = server.request("GET", "/v1/openapi.json", &[], None).json();
    assert_eq!(doc["openapi"], "3.1.0");
    // Every documented operation is served (the answer is never 404 "no such route").
    let auth = format!("Bearer {}", server.acme);
    let mut operations = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            let body = (method == "post").then_some("{}");
            let reply =
                server.request(&method.to_uppercase(), path, &[("Authorization", &auth), JSON, ACCEPT_BOTH], body);
            assert_ne!(reply.status, 404, "{method} {path}");
            assert!(
                item[method]["responses"].get(reply.status.to_string()).is_some(),
                "{method} {path}: undocumented {}",
                reply.status
            );
            operations += 1;
        }
    }
    assert_eq!(operations, 15);
    assert_eq!(server.request("GET", "/nope", &[], None).status, 404);
    // A REST answer fits the documented schema.
    let reply = server.search(&server.acme, json!({"query": "refund", "collapse": true}));
    let schema = json!({"$ref": "#/components/schemas/SearchResponse", "components": doc["components"]});
    validate(&schema, &reply.json()).unwrap();
    // Grouping and MMR are served; a request outside their bounds is a 400.
    let grouped = json!({"query": "refund", "group_by": {"field": "parent", "per_group": 1}, "mmr": 0.7});
    let reply = server.search(&server.acme, grouped);
    assert_eq!(reply.status, 200, "{:?}", reply.json());
    validate(&schema, &reply.json()).unwrap();
    let budgeted = server.search(&server.acme, json!({"query": "refund", "token_budget": 5}));
    assert_eq!(budgeted.status, 200);
    validate(&schema, &budgeted.json()).unwrap();
    assert!(budgeted.json()["stats"]["tokens"].as_u64().is_some_and(|t| t <= 5), "{:?}", budgeted.json());
    for bad in [
        json!({"query": "refund", "mmr": 3}),
        json!({"query": "refund", "group_by": {"field": "nope", "per_group": 1}}),
    ] {
        assert_eq!(server.search(&server.acme, bad).status, 400);
    }

    // Logs name the route, status and the caller's label, and never a token, a query or text.
    server.call_tool(&server.acme, "search", json!({"query": "purchase zanzibarite"}));
    server.call_tool(&server.acme, "read_section", json!({"id": "acme-refunds#annual"}));
    let (acme, globex, limited) = (server.acme.clone(), server.globex.clone(), server.limited.clone());
    server.search(&format!("{acme}x"), json!({"query": "refund"}));
    let log = server.stop();
    assert!(log.contains("acme-agent") && log.contains("/v1/search") && log.contains("tools/call"), "{log}");
    assert!(log.contains("status=200") && log.contains("status=401"), "{log}");
    for secret in [
        acme.as_str(),
        globex.as_str(),
        limited.as_str(),
        ACME_SECRET,
        GLOBEX_SECRET,
        "purchase",
        "Annual plans can be",
    ] {
        assert!(!log.contains(secret), "the log holds {secret:?}");
    }
}

#[test]
fn a_request_over_its_time_budget_gets_503() {
    use std::io::{Read, Write};
    let server = Server::start_with_timeout(300);
    // A client that promises a body and stalls (slowloris): the budget covers reading it.
    let addr = server.url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(std::time::Duration::from_secs(30))).unwrap();
    let head = format!(
        "POST /v1/search HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n\
         Content-Length: 100\r\n\r\n{{\"query\": ",
        server.acme
    );
    let started = std::time::Instant::now();
    stream.write_all(head.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&answer).contains("\"timeout\"") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
        }
    }
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("retry-after: 1"), "{answer}");
    assert!(started.elapsed() >= std::time::Duration::from_millis(300));
    // The server goes on serving.
    assert_eq!(server.request("GET", "/v1/health", &[], None).status, 200);
}

#[test]
fn a_commit_from_another_process_is_served_without_a_restart() {
    let server = Server::start();
    let hits = |query: &str| -> Vec<String> {
        let reply = server.search(&server.acme, json!({"query": query, "mode": "lexical"}));
        assert_eq!(reply.status, 200, "{}", reply.text);
        reply.json()["hits"].as_array().unwrap().iter().map(|h| h["id"].as_str().unwrap().to_string()).collect()
    };
    assert!(hits("narwhal").is_empty());

    // Another process's writer (this test's) commits to the index the server serves.
    let index = braid::Index::open(&server.index_dir).unwrap();
    let mut writer = index.writer().unwrap();
    let care = |id: &str, tenant: &str| {
        braid::Record::new(id).title("Narwhal care").body("Narwhals need cold water.").acl([format!("tenant:{tenant}")])
    };
    writer.upsert(&care("acme-narwhals", "acme")).unwrap();
    writer.upsert(&care("globex-narwhals", "globex")).unwrap();
    writer.commit().unwrap();
    drop(writer);

    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while hits("narwhal").is_empty() {
        assert!(std::time::Instant::now() < deadline, "the new commit was never served");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // Permissions still come first: acme sees its record only.
    assert_eq!(hits("narwhal"), ["acme-narwhals"]);
    assert!(hits(ACME_SECRET).contains(&"acme-refunds#annual".to_string()), "older records stay");
    let log = server.stop();
    assert!(log.contains("serving a new commit"), "{log}");
}

#[test]
fn requests_without_a_valid_token_share_one_bucket_per_address() {
    let server = Server::start();
    let query = json!({"query": "refund"});
    // The default allows one address a burst of 20 requests with a wrong token, refilled at 10
    // a second: 60 wrong tokens in a row run past it.
    let statuses: Vec<u16> =
        (0..60).map(|i| server.search(&format!("braid_wrong_{i}"), query.clone()).status).collect();
    assert_eq!(statuses[0], 401);
    assert!(statuses.iter().all(|s| *s == 401 || *s == 429), "{statuses:?}");
    assert!(statuses.iter().filter(|s| **s == 429).count() >= 20, "{statuses:?}");
    let reply = server.search("braid_wrong_again", query.clone());
    if reply.status == 429 {
        assert!(reply.header("retry-after").is_some());
    }
    // A valid token never pays for them.
    assert_eq!(server.search(&server.acme, query).status, 200);
}

/// Two `Authorization` headers are refused, whichever is valid: which one a proxy or a client
/// library puts first is not the server's to guess.
#[test]
fn two_authorization_headers_are_refused() {
    use std::io::{Read, Write};
    let server = Server::start();
    let address = server.url.trim_start_matches("http://").to_string();
    let mut stream = std::net::TcpStream::connect(&address).unwrap();
    let body = r#"{"query": "refund"}"#;
    let head = format!(
        "POST /v1/search HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        server.acme,
        server.globex,
        body.len()
    );
    stream.write_all(format!("{head}{body}").as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("one Authorization header"), "{answer}");
    server.stop();
}

/// What the framework or the MCP SDK refuses is answered as every other error: a REST route's
/// 405 keeps its `Allow` and says so in the error object; a JSON body that is not a JSON-RPC
/// message is a 400 with `-32600`, not a plain-text 415.
#[test]
fn framework_refusals_are_typed_errors() {
    let server = Server::start();
    let auth = format!("Bearer {}", server.acme);
    let reply = server.request("GET", "/v1/search", &[("Authorization", &auth)], None);
    assert_eq!(reply.status, 405);
    assert_eq!(reply.header("allow"), Some("POST"));
    assert_eq!(reply.json()["error"]["code"], "method_not_allowed", "{}", reply.text);
    // A REST route answers JSON only: an Accept without it is a 406, as documented.
    let search = r#"{"query": "refund"}"#;
    let html =
        server.request("POST", "/v1/search", &[("Authorization", &auth), JSON, ("Accept", "text/html")], Some(search));
    assert_eq!(html.status, 406, "{}", html.text);
    let any = server.request(
        "POST",
        "/v1/search",
        &[("Authorization", &auth), JSON, ("Accept", "text/html, */*;q=0.1")],
        Some(search),
    );
    assert_eq!(any.status, 200, "{}", any.text);
    // A body that is not a JSON object (serde would read a struct from an array of its
    // fields), or one sent compressed, is refused rather than misread.
    let array = server.request("POST", "/v1/search", &[("Authorization", &auth), JSON], Some(r#"["refund", 3]"#));
    assert_eq!(array.status, 400, "{}", array.text);
    let gzip = [("Authorization", auth.as_str()), JSON, ("Content-Encoding", "gzip")];
    assert_eq!(server.request("POST", "/v1/search", &gzip, Some(search)).status, 415);
    let not_rpc = r#"{"jsonrpc": "1.0", "id": 1, "method": "ping"}"#;
    let reply = server.request("POST", "/mcp", &[("Authorization", &auth), JSON, ACCEPT_BOTH], Some(not_rpc));
    assert_eq!(reply.status, 400, "{}", reply.text);
    assert_eq!(reply.json()["error"]["code"], -32600, "{}", reply.text);
    server.stop();
}
