//! Memory over `braid serve`: the `/v1/memories` routes and the MCP tools `remember`,
//! `recall`, `forget` and `update`, for two writers of one tenant. Each recalls, forgets and
//! updates its own memories only, and cannot tell another's memory from a missing one.

use serde_json::{json, Value};

use crate::support::idp::{jwks, Idp, Key, SCOPE};
use crate::support::{new_token, Reply, Server};

/// A server with two writers of tenant acme (alice, bob); returns their tokens beside it.
fn start() -> (Server, String, String) {
    let alice = new_token(&["--name", "alice", "--tenant", "acme", "--write"]);
    let bob = new_token(&["--name", "bob", "--tenant", "acme", "--write"]);
    let extra = format!("{}\n{}\n", alice.entry, bob.entry);
    (Server::start_with(5000, "", &extra), alice.token, bob.token)
}

fn send(server: &Server, token: &str, method: &str, path: &str, body: Option<Value>) -> Reply {
    let auth = format!("Bearer {token}");
    let headers = [("Authorization", auth.as_str()), ("Content-Type", "application/json")];
    server.request(method, path, &headers, body.map(|b| b.to_string()).as_deref())
}

fn recall(server: &Server, token: &str, query: &str) -> Vec<String> {
    let reply = send(server, token, "POST", "/v1/memories/recall", Some(json!({ "query": query })));
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.json()["memories"].as_array().unwrap().iter().map(|m| m["text"].as_str().unwrap().to_string()).collect()
}

fn encoded(id: &str) -> String {
    id.replace(':', "%3A").replace('/', "%2F")
}

#[test]
fn rest_memories_are_their_writers_alone() {
    let (server, alice, bob) = start();
    let reply = send(
        &server,
        &alice,
        "POST",
        "/v1/memories",
        Some(json!({"text": "Alice's locker code is 7291", "kind": "fact", "importance": 8})),
    );
    assert_eq!(reply.status, 200, "{}", reply.text);
    let id = reply.json()["memory"]["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("tenant:acme/memory/"), "{id}");
    assert_eq!(reply.json()["reinforced"], false);
    assert_eq!(recall(&server, &alice, "locker code"), ["Alice's locker code is 7291"]);
    // The same text again reinforces it.
    let again = send(&server, &alice, "POST", "/v1/memories", Some(json!({"text": "alice's locker code is 7291."})));
    assert_eq!((again.json()["reinforced"].clone(), again.json()["memory"]["id"].clone()), (json!(true), json!(id)));
    assert_eq!(again.json()["memory"]["importance"], 9);

    // Bob shares the tenant and the write right: he recalls and finds nothing of it.
    assert!(recall(&server, &bob, "locker code").is_empty());
    assert!(recall(&server, &bob, "").is_empty());
    let search = server.search(&bob, json!({"query": "locker code 7291"}));
    assert_eq!(search.json()["hits"], json!([]), "{}", search.text);
    let search = server.search(&server.acme, json!({"query": "locker code 7291"}));
    assert_eq!(search.json()["hits"], json!([]), "{}", search.text);

    // Bob's forget and update of alice's id answer exactly as for an id that never existed.
    let missing = format!("{}ff", &id[..id.len() - 2]);
    let as_bob = |method: &str, path: String, body: Option<Value>| {
        let r = send(&server, &bob, method, &path, body);
        (r.status, r.text)
    };
    for (theirs, none) in [
        (
            as_bob("DELETE", format!("/v1/memories/{}", encoded(&id)), None),
            as_bob("DELETE", format!("/v1/memories/{}", encoded(&missing)), None),
        ),
        (
            as_bob("POST", "/v1/memories/forget".into(), Some(json!({"id": id}))),
            as_bob("POST", "/v1/memories/forget".into(), Some(json!({"id": missing}))),
        ),
        (
            as_bob("PUT", format!("/v1/memories/{}", encoded(&id)), Some(json!({"text": "hijacked"}))),
            as_bob("PUT", format!("/v1/memories/{}", encoded(&missing)), Some(json!({"text": "hijacked"}))),
        ),
        (
            as_bob("DELETE", format!("/v1/memories/{}", encoded(&id)), None),
            as_bob("DELETE", "/v1/memories/not-even-an-id".into(), None),
        ),
    ] {
        assert_eq!(theirs, none);
        assert_eq!(theirs.0, 404, "{}", theirs.1);
    }
    let by_kind = send(&server, &bob, "POST", "/v1/memories/forget", Some(json!({"kind": "fact"})));
    assert_eq!(by_kind.json()["ids"], json!([]), "{}", by_kind.text);
    // Nor can a record write name a memory, his or hers.
    let reply = send(&server, &bob, "POST", "/v1/records", Some(json!({"records": [{"_id": id, "text": "x"}]})));
    assert_eq!(reply.status, 400, "{}", reply.text);
    assert_eq!(recall(&server, &alice, "locker"), ["Alice's locker code is 7291"]);

    // A token without the write right recalls (its own, empty scope) but does not remember.
    let reply = send(&server, &server.acme, "POST", "/v1/memories", Some(json!({"text": "x"})));
    assert_eq!(reply.status, 403, "{}", reply.text);
    assert!(recall(&server, &server.acme, "locker").is_empty());

    // Alice updates (the old memory is superseded) and forgets her own.
    let reply = send(
        &server,
        &alice,
        "PUT",
        &format!("/v1/memories/{}", encoded(&id)),
        Some(json!({"text": "Alice's locker code is now 1180"})),
    );
    assert_eq!(reply.status, 200, "{}", reply.text);
    let new_id = reply.json()["memory"]["id"].as_str().unwrap().to_string();
    assert_eq!(reply.json()["replaced"], json!(id));
    assert_eq!(reply.json()["memory"]["kind"], "fact");
    assert_eq!(recall(&server, &alice, "locker code"), ["Alice's locker code is now 1180"]);
    assert_eq!(send(&server, &alice, "DELETE", &format!("/v1/memories/{}", encoded(&id)), None).status, 404);
    let reply = send(&server, &alice, "DELETE", &format!("/v1/memories/{}", encoded(&new_id)), None);
    assert_eq!((reply.status, reply.json()["ids"].clone()), (200, json!([new_id])), "{}", reply.text);
    assert!(recall(&server, &alice, "locker code").is_empty());
    server.stop();
}

#[test]
fn mcp_memory_tools_share_the_rest_scope() {
    let (server, alice, bob) = start();
    let remembered =
        server.call_tool(&alice, "remember", json!({"text": "Prefers replies in French", "kind": "preference"}));
    assert_eq!(remembered["isError"], false, "{remembered}");
    let id = remembered["structuredContent"]["memory"]["id"].as_str().unwrap().to_string();
    // REST sees what MCP wrote, and the reverse.
    assert_eq!(recall(&server, &alice, "french"), ["Prefers replies in French"]);
    let recalled = server.call_tool(&alice, "recall", json!({"query": "which language for replies"}));
    assert_eq!(recalled["structuredContent"]["memories"][0]["id"], json!(id), "{recalled}");
    let bobs = server.call_tool(&bob, "recall", json!({"query": "french"}));
    assert_eq!(bobs["structuredContent"]["memories"], json!([]));
    // Bob's tools on alice's id: the same error as on a missing id.
    let missing = format!("{}00", &id[..id.len() - 2]);
    for tool in ["forget", "update"] {
        let args = |id: &str| if tool == "forget" { json!({"id": id}) } else { json!({"id": id, "text": "x"}) };
        let (theirs, none) = (server.call_tool(&bob, tool, args(&id)), server.call_tool(&bob, tool, args(&missing)));
        assert_eq!(theirs, none);
        assert_eq!(theirs["isError"], true);
    }
    let updated = server.call_tool(&alice, "update", json!({"id": id, "text": "Prefers replies in German"}));
    let new_id = updated["structuredContent"]["memory"]["id"].as_str().unwrap().to_string();
    let forgotten = server.call_tool(&alice, "forget", json!({"id": new_id}));
    assert_eq!(forgotten["structuredContent"]["ids"], json!([new_id]), "{forgotten}");
    assert!(recall(&server, &alice, "replies").is_empty());
    // A reading token gets a tool error, not a protocol error.
    let refused = server.call_tool(&server.acme, "remember", json!({"text": "x"}));
    assert_eq!(refused["isError"], true);
    server.stop();
}

#[test]
fn oauth_users_of_one_tenant_have_scopes_of_their_own() {
    let key = Key::generate("memory");
    let idp = Idp::start(jwks(&[&key]));
    // The issuer names its users (`sub` → user:test-idp/<sub>, owner:user:test-idp/<sub>) and
    // grants the write right with the scope braid:write.
    let section = idp
        .oauth_section()
        .replace("required_scopes", "write_scope = \"braid:write\"\nrequired_scopes")
        .replace("tenant_claim", "user_claim = \"sub\"\ntenant_claim");
    let server = Server::start_with(5000, "", &section);
    let token = |sub: Option<&str>| {
        let mut claims = idp.claims("acme");
        claims["scope"] = json!(format!("{SCOPE} braid:write"));
        match sub {
            Some(sub) => claims["sub"] = json!(sub),
            None => {
                claims.as_object_mut().unwrap().remove("sub");
            }
        }
        key.sign(&claims)
    };
    let (one, two) = (token(Some("user-1")), token(Some("user-2")));
    let reply = send(&server, &one, "POST", "/v1/memories", Some(json!({"text": "Badge number 5521 for user one"})));
    assert_eq!(reply.status, 200, "{}", reply.text);
    let id = reply.json()["memory"]["id"].as_str().unwrap().to_string();
    assert_eq!(recall(&server, &one, "badge number"), ["Badge number 5521 for user one"]);
    // The other user of the tenant, with the same groups and the write right, sees nothing.
    assert!(recall(&server, &two, "badge number").is_empty());
    let theirs = send(&server, &two, "DELETE", &format!("/v1/memories/{}", encoded(&id)), None);
    let none = send(&server, &two, "DELETE", &format!("/v1/memories/{}", encoded(&format!("{id}0"))), None);
    assert_eq!((theirs.status, &theirs.text), (404, &none.text));
    // A token whose issuer names no user has no memory scope.
    let anonymous = send(&server, &token(None), "POST", "/v1/memories", Some(json!({"text": "x"})));
    assert_eq!(anonymous.status, 403, "{}", anonymous.text);
    server.stop();
}
