//! The official MCP Python SDK (PyPI `mcp`) against `braid serve` and `braid mcp`, in each of
//! its connect modes: `auto` (probes `server/discover`), `legacy` (the `initialize`
//! handshake) and pinned to `2026-07-28`; over HTTP once with a static token and once with an
//! OAuth access token. `.ci/run` installs the SDK into a virtual environment and names its
//! Python in `BRAID_MCP_PYTHON`; without it this test says so loudly and checks nothing —
//! unless `BRAID_REQUIRE_MCP_SDK=1` (as in CI), where a missing SDK fails it.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::idp::{jwks, Idp, Key};
use crate::support::{build_index, new_token, Server, GLOBEX_SECRET};

const MODES: [(&str, &str); 3] = [("auto", "2026-07-28"), ("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")];

fn python() -> Option<PathBuf> {
    match std::env::var_os("BRAID_MCP_PYTHON") {
        Some(p) => Some(PathBuf::from(p)),
        None => {
            assert!(
                std::env::var("BRAID_REQUIRE_MCP_SDK").as_deref() != Ok("1"),
                "BRAID_REQUIRE_MCP_SDK=1 but BRAID_MCP_PYTHON is not set (see .ci/run)"
            );
            eprintln!(
                "\n*** mcp_sdk: SKIPPED — set BRAID_MCP_PYTHON to a Python with the `mcp` SDK installed \
                 (.ci/run does) ***\n"
            );
            None
        }
    }
}

fn client(python: &Path, mode: &str, target: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/mcp_client.py");
    let out = Command::new(python)
        .arg(script)
        .args(["--mode", mode, "--query", "refund annual plan"])
        .args(target)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "mode {mode} {target:?}: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn check(answer: &Value, mode: &str, revision: &str, what: &str) {
    assert_eq!(answer["protocol_version"], revision, "{what} {mode}: {answer}");
    assert_eq!(
        answer["tools"],
        serde_json::json!(["search", "read_section", "outline", "remember", "recall", "forget", "update"]),
        "{what} {mode}"
    );
    assert_eq!(answer["is_error"], false, "{what} {mode}: {answer}");
    let text = answer["text"].as_str().unwrap();
    assert!(
        text.contains("[1] Refund policy › Refunds › Annual plans (acme-refunds, lines 3–9) — id: acme-refunds#annual"),
        "{what} {mode}: {text}"
    );
    assert_eq!(answer["structured"]["sources"][0]["id"], "acme-refunds#annual", "{what} {mode}");
    assert!(!answer.to_string().contains(GLOBEX_SECRET), "{what} {mode}");
}

#[test]
fn official_sdk_over_http_and_stdio_in_every_mode() {
    let Some(python) = python() else { return };
    let key = Key::generate("sdk");
    let idp = Idp::start(jwks(&[&key]));
    let server = Server::start_with(10_000, "", &idp.oauth_section());
    let url = format!("{}/mcp", server.url);
    let access_token = key.sign(&idp.claims("acme"));
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    build_index(&index);
    let braid = env!("CARGO_BIN_EXE_braid");
    let index = index.to_str().unwrap();
    for (mode, revision) in MODES {
        let http = |token: &str| client(&python, mode, &["--http", &url, "--token", token]);
        check(&http(&server.acme), mode, revision, "http, static token");
        check(&http(&access_token), mode, revision, "http, oauth token");
        let stdio = client(&python, mode, &["--stdio", braid, "mcp", "--index", index, "--principal", "tenant:acme"]);
        check(&stdio, mode, revision, "stdio");
    }
    let log = server.stop();
    assert!(log.contains("2026-07-28"), "the server saw no 2026-07-28 request");
}

/// The memory tools through the official SDK (its `auto` mode only, to keep CI short):
/// remember → recall → update → forget, each read back by the next recall.
#[test]
fn official_sdk_drives_the_memory_tools() {
    let Some(python) = python() else { return };
    let writer = new_token(&["--name", "sdk-agent", "--tenant", "acme", "--write"]);
    let server = Server::start_with(10_000, "", &writer.entry);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/memory_client.py");
    let out = Command::new(&python)
        .arg(script)
        .args(["--http", &format!("{}/mcp", server.url), "--token", &writer.token])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    let answer: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(answer["protocol_version"], "2026-07-28", "{answer}");
    let first = answer["remembered"]["memory"]["id"].as_str().unwrap();
    assert!(first.starts_with("tenant:acme/memory/"), "{answer}");
    assert_eq!(answer["recalled"], serde_json::json!(["The staging database is on port 5544"]), "{answer}");
    assert_eq!(answer["updated"]["replaced"], first, "{answer}");
    assert_eq!(answer["after_update"], serde_json::json!(["The staging database moved to port 6655"]), "{answer}");
    assert_eq!(answer["forgotten"], serde_json::json!([answer["updated"]["memory"]["id"]]), "{answer}");
    assert_eq!(answer["after_forget"], serde_json::json!([]), "{answer}");
    // Another caller of the tenant never saw any of it.
    assert!(!server.search(&server.acme, serde_json::json!({"query": "staging database"})).text.contains("5544"));
    server.stop();
}
