//! Issue 16's serving and ingestion fixes, through the real binary: rate limits per tool
//! call, connection limits before authentication, random request ids, reload retries, and
//! `braid index` as a fail-closed sync.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{braid, Server, ACME_SECRET};

fn rpc(id: usize, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[test]
fn a_batch_pays_one_token_per_tool_call() {
    let server = Server::start();
    // The `limited` token has a burst of 2 and refills once in 100 s. 35 searches in one
    // 2025-03-26 batch (as many as this server's 4 KiB body limit holds) are more than it can
    // ever pay: refused whole, none run.
    let batch: Vec<Value> =
        (0..35).map(|i| rpc(i, "tools/call", json!({"name": "search", "arguments": {"query": ACME_SECRET}}))).collect();
    let reply = server.mcp(&server.limited, None, &Value::Array(batch).to_string());
    assert_eq!(reply.status, 429, "{}", reply.text);
    assert!(!reply.text.contains("acme-refunds"), "{}", reply.text);
    assert!(reply.text.contains("burst"), "{}", reply.text);
    // The request itself took one token; the refused batch took no more: one search is left.
    assert_eq!(server.search(&server.limited, json!({"query": "refund"})).status, 200);
    assert_eq!(server.search(&server.limited, json!({"query": "refund"})).status, 429);
}

#[test]
fn a_batch_within_the_burst_is_charged_for_each_call() {
    let server = Server::start();
    let two: Vec<Value> =
        (0..2).map(|i| rpc(i, "tools/call", json!({"name": "search", "arguments": {"query": "refund"}}))).collect();
    // Two calls cost two tokens: the whole burst of the `limited` token.
    let reply = server.mcp(&server.limited, None, &Value::Array(two).to_string());
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(server.search(&server.limited, json!({"query": "refund"})).status, 429);
}

/// Reads until the peer closes (Ok(0) or a reset), for at most `limit`; returns what came and
/// whether it closed.
fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> (String, bool) {
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return (String::from_utf8_lossy(&got).into_owned(), true),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return (String::from_utf8_lossy(&got).into_owned(), false)
            }
            Err(_) => return (String::from_utf8_lossy(&got).into_owned(), true),
        }
    }
}

#[test]
fn half_sent_connections_are_closed_and_capped_before_authentication() {
    let server = Server::start_with_limits(
        5000,
        "header_read_timeout_ms = 1000\nmax_connections = 9\nmax_connections_per_address = 8",
    );
    let addr = server.url.trim_start_matches("http://").to_string();
    let started = Instant::now();
    // Eight connections take every slot this address may hold: some send half a request head,
    // some nothing at all.
    let mut held: Vec<TcpStream> = (0..8)
        .map(|i| {
            let mut s = TcpStream::connect(&addr).unwrap();
            if i % 2 == 0 {
                s.write_all(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n").unwrap();
            }
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    // A ninth gets no answer, even to a whole request: it is closed at once.
    let mut ninth = TcpStream::connect(&addr).unwrap();
    let _ = ninth.write_all(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n");
    let (text, closed) = read_until_closed(&mut ninth, Duration::from_secs(20));
    assert!(closed && !text.contains("200"), "{text:?}");
    // The held ones are closed by the header-read timeout, well before 41 s.
    for (i, s) in held.iter_mut().enumerate() {
        let (_, closed) = read_until_closed(s, Duration::from_secs(20));
        assert!(closed, "connection {i} still open after {:?}", started.elapsed());
    }
    assert!(started.elapsed() < Duration::from_secs(15), "{:?}", started.elapsed());
    // Twenty more half-sent ones are all gone soon too, and the server answers afterwards.
    let mut more: Vec<TcpStream> = (0..20)
        .map(|_| {
            let mut s = TcpStream::connect(&addr).unwrap();
            let _ = s.write_all(b"POST /v1/search HTTP/1.1\r\nHost: x\r\nAuthori");
            s
        })
        .collect();
    let again = Instant::now();
    for s in &mut more {
        assert!(read_until_closed(s, Duration::from_secs(20)).1);
    }
    assert!(again.elapsed() < Duration::from_secs(15), "{:?}", again.elapsed());
    assert_eq!(server.request("GET", "/v1/health", &[], None).status, 200);
}

#[test]
fn request_ids_are_random_per_request() {
    let server = Server::start();
    let mut ids = Vec::new();
    for i in 0..10 {
        let reply = if i % 2 == 0 {
            server.request("GET", "/v1/health", &[], None)
        } else {
            server.search(&server.acme, json!({"query": "refund"}))
        };
        ids.push(reply.header("x-request-id").expect("x-request-id").to_string());
    }
    for id in &ids {
        assert!(id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
    }
    let distinct: std::collections::HashSet<&String> = ids.iter().collect();
    assert_eq!(distinct.len(), ids.len(), "{ids:?}");
    // Not a counter: consecutive ids are not consecutive numbers.
    let numbers: Vec<Option<u64>> = ids.iter().map(|id| id.parse().ok()).collect();
    assert!(numbers.windows(2).any(|w| w[0].zip(w[1]).is_none_or(|(a, b)| b != a + 1)), "{ids:?}");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn health(server: &Server) -> Value {
    server.request("GET", "/v1/health", &[], None).json()
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_reload_that_failed_is_retried_and_health_names_the_commit() {
    let server = Server::start();
    let first = health(&server);
    assert_eq!(first["reload"], "ok", "{first}");
    let commit = first["commit"].as_str().unwrap().to_string();
    assert_eq!(commit.len(), 16, "{first}");
    let acme_sees = || {
        let reply = server.search(&server.acme, json!({"query": ACME_SECRET, "mode": "lexical"}));
        reply.json()["hits"].as_array().unwrap().iter().any(|h| h["id"] == "acme-refunds#annual")
    };
    assert!(acme_sees());

    // The next commit revokes acme's access; it is written in a copy, then moved in while the
    // manifest is damaged, so that the server's first attempts to open it fail.
    let staged = tempfile::tempdir().unwrap();
    copy_dir(&server.index_dir, staged.path());
    {
        let index = braid::Index::open(staged.path()).unwrap();
        let mut w = index.writer().unwrap();
        w.upsert(
            &braid::Record::new("acme-refunds#annual")
                .title("Refund policy")
                .body(format!("The {ACME_SECRET} clause."))
                .acl(["tenant:globex"]),
        )
        .unwrap();
        w.commit().unwrap();
    }
    let live = &server.index_dir;
    std::fs::write(live.join("braid.json"), b"{ damaged").unwrap();
    for entry in std::fs::read_dir(staged.path().join("lexical")).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_dir() {
            // The partitions the new catalog names (the pool, where globex's record went).
            copy_dir(&entry.path(), &live.join("lexical").join(&name));
        } else if name != "meta.json" && !name.ends_with(".lock") {
            std::fs::copy(entry.path(), live.join("lexical").join(&name)).unwrap();
        }
    }
    std::fs::copy(staged.path().join("lexical/meta.json"), live.join("lexical/meta.json.tmp")).unwrap();
    std::fs::rename(live.join("lexical/meta.json.tmp"), live.join("lexical/meta.json")).unwrap();
    wait_for("the reload fails", || health(&server)["reload"] == "failing");
    let failing = health(&server);
    assert_eq!(failing["commit"], commit.as_str(), "the old commit is still the one served: {failing}");
    assert!(acme_sees());

    // The manifest is repaired: the server retries by itself and serves the revocation.
    std::fs::copy(staged.path().join("braid.json"), live.join("braid.json")).unwrap();
    wait_for("the new commit is served", || {
        let h = health(&server);
        h["reload"] == "ok" && h["commit"] != commit.as_str()
    });
    assert!(!acme_sees(), "acme still sees a record revoked on disk");
    let log = server.stop();
    assert!(log.contains("retrying"), "{log}");
}

// ---------------------------------------------------------------------------------------------
// braid index: a fail-closed sync

fn index_dir(input: &Path, index: &Path, extra: &[&str]) -> std::process::Output {
    braid().arg("index").arg(input).arg("--index").arg(index).args(extra).output().unwrap()
}

fn search_ids(index: &Path, principal: &str, query: &str) -> Vec<String> {
    let out = braid()
        .args(["search", "--json", "--mode", "lexical", "--principal", principal, "--index"])
        .arg(index)
        .arg(query)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut ids: Vec<String> =
        v["hits"].as_array().unwrap().iter().map(|h| h["id"].as_str().unwrap().to_string()).collect();
    ids.sort();
    ids
}

fn article(dir: &Path, name: &str, front: &str, word: &str) {
    std::fs::write(dir.join(name), format!("{front}# {name}\n\nThe {word} article.\n")).unwrap();
}

#[test]
fn braid_index_is_a_sync_of_the_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let (docs, idx) = (tmp.path().join("docs"), tmp.path().join("index"));
    std::fs::create_dir_all(&docs).unwrap();
    article(&docs, "a.md", "", "zebrafish");
    article(&docs, "b.md", "", "zebrafish");
    assert!(index_dir(&docs, &idx, &[]).status.success());
    assert_eq!(search_ids(&idx, "public", "zebrafish"), ["a#intro", "b#intro"]);
    // b is deleted and a moved to c: their records go, c's comes.
    std::fs::remove_file(docs.join("b.md")).unwrap();
    std::fs::rename(docs.join("a.md"), docs.join("c.md")).unwrap();
    let out = index_dir(&docs, &idx, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("removed 2"), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(search_ids(&idx, "public", "zebrafish"), ["c#intro"]);
    // --no-prune adds without removing.
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    article(&other, "d.md", "", "zebrafish");
    assert!(index_dir(&other, &idx, &["--no-prune"]).status.success());
    assert_eq!(search_ids(&idx, "public", "zebrafish"), ["c#intro", "d#intro"]);
}

#[test]
fn an_unreadable_acl_fails_the_run_loudly_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (docs, idx) = (tmp.path().join("docs"), tmp.path().join("index"));
    std::fs::create_dir_all(&docs).unwrap();
    article(&docs, "plan.md", "---\nacl: [public]\n---\n", "roadmap");
    assert!(index_dir(&docs, &idx, &[]).status.success());
    // A mistyped ACL edit, meant to restrict the article.
    article(&docs, "plan.md", "---\nacl: [group:staff\n---\n", "roadmap");
    article(&docs, "new.md", "", "roadmap");
    let out = index_dir(&docs, &idx, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    // stderr is a pipe here, not a terminal: the reason is printed all the same.
    assert!(stderr.contains("plan") && stderr.contains("unterminated"), "{stderr}");
    // Nothing was written: not the new article, not a fallback for the broken one.
    assert_eq!(search_ids(&idx, "public", "roadmap"), ["plan#intro"]);
    // Front matter after a blank first line is read, not ignored; `acl: []` is an error.
    article(&docs, "plan.md", "\n---\nacl: [group:staff]\n---\n", "roadmap");
    assert!(index_dir(&docs, &idx, &[]).status.success());
    assert_eq!(search_ids(&idx, "public", "roadmap"), ["new#intro"]);
    assert_eq!(search_ids(&idx, "group:staff", "roadmap"), ["new#intro", "plan#intro"]);
    article(&docs, "plan.md", "---\nacl: []\n---\n", "roadmap");
    let out = index_dir(&docs, &idx, &[]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("`acl` is empty"));
}

#[test]
fn the_tenant_key_and_the_policy_of_an_existing_index() {
    let tmp = tempfile::tempdir().unwrap();
    let (docs, idx) = (tmp.path().join("docs"), tmp.path().join("index"));
    std::fs::create_dir_all(&docs).unwrap();
    article(&docs, "g.md", "---\ntenant: globex\n---\n", "ledger");
    assert!(index_dir(&docs, &idx, &[]).status.success());
    assert!(search_ids(&idx, "public", "ledger").is_empty());
    assert!(search_ids(&idx, "tenant:acme", "ledger").is_empty());
    assert_eq!(search_ids(&idx, "tenant:globex", "ledger"), ["g#intro"]);
    // The policy is chosen when the index is created; asking for another one later fails.
    let out = index_dir(&docs, &idx, &["--policy", "deny"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--policy public"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(index_dir(&docs, &idx, &["--policy", "public"]).status.success());
}

#[test]
fn reserved_tokens_are_refused_on_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let (docs, idx) = (tmp.path().join("docs"), tmp.path().join("index"));
    std::fs::create_dir_all(&docs).unwrap();
    article(&docs, "a.md", "", "walrus");
    assert!(index_dir(&docs, &idx, &[]).status.success());
    let search =
        braid().args(["search", "--principal", "__braid:no-acl", "--index"]).arg(&idx).arg("walrus").output().unwrap();
    assert!(!search.status.success());
    assert!(
        String::from_utf8_lossy(&search.stderr).contains("reserved"),
        "{}",
        String::from_utf8_lossy(&search.stderr)
    );
    let mcp = braid()
        .args(["mcp", "--principal", "group:x,__braid:no-tenant", "--index"])
        .arg(&idx)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!mcp.status.success());
    assert!(String::from_utf8_lossy(&mcp.stderr).contains("reserved"), "{}", String::from_utf8_lossy(&mcp.stderr));
}
