//! A real `braid serve` on an ephemeral loopback port over a small two-tenant index, and a
//! real HTTP client (ureq).

pub mod idp;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use braid::{Index, IndexConfig, Record};
use serde_json::{json, Value};

/// The `braid` binary under test.
pub fn braid() -> Command {
    Command::new(env!("CARGO_BIN_EXE_braid"))
}

/// `braid index INPUT --index INDEX EXTRA…`, run to its end.
pub fn index(input: &Path, index: &Path, extra: &[&str]) -> std::process::Output {
    braid().arg("index").arg(input).arg("--index").arg(index).args(extra).output().unwrap()
}

/// The ids `principal` finds for `query` with `braid search`, lexical leg, sorted.
pub fn lexical_ids(idx: &Path, principal: &str, query: &str) -> Vec<String> {
    let out = braid()
        .args(["search", "--json", "--mode", "lexical", "--principal", principal, "--index"])
        .arg(idx)
        .arg(query)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut ids: Vec<String> =
        json["hits"].as_array().unwrap().iter().map(|h| h["id"].as_str().unwrap().to_string()).collect();
    ids.sort();
    ids
}

/// A word only the acme tenant's record holds.
pub const ACME_SECRET: &str = "zanzibarite";
/// A word only the globex tenant's record holds.
pub const GLOBEX_SECRET: &str = "quokkalith";

/// Writes the test index: one section per tenant (same title, different secrets) and a public
/// record, into `dir`.
pub fn build_index(dir: &Path) {
    let index = Index::create(dir, IndexConfig::default()).unwrap();
    let mut w = index.writer().unwrap();
    let section = |tenant: &str, secret: &str, days: u32| {
        Record::new(format!("{tenant}-refunds#annual"))
            .title("Refund policy")
            .body(format!(
                "Annual plans can be refunded within {days} days of purchase. Ask billing about the {secret} clause.\n"
            ))
            .parent(format!("{tenant}-refunds"))
            .section(["Refunds", "Annual plans"])
            .lines(3, 9)
            .acl([format!("tenant:{tenant}")])
    };
    w.upsert(&section("acme", ACME_SECRET, 30)).unwrap();
    w.upsert(&section("globex", GLOBEX_SECRET, 14)).unwrap();
    let long_body = "Parcels ship within two days of the order. ".repeat(40);
    w.upsert(&Record::new("shipping").title("Shipping times").body(long_body).acl(["public"])).unwrap();
    w.commit().unwrap();
}

/// A token made by `braid token new`, and its `[[token]]` entry.
pub struct Token {
    pub token: String,
    pub entry: String,
}

/// Runs `braid token new` with these arguments.
pub fn new_token(args: &[&str]) -> Token {
    let out = braid().args(["token", "new"]).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let told = String::from_utf8(out.stderr).unwrap();
    let token = told.lines().find_map(|l| l.strip_prefix("token: ")).unwrap().to_string();
    let entry = String::from_utf8(out.stdout).unwrap();
    // The configuration entry holds the hash, never the token.
    assert!(!entry.contains(&token), "{entry}");
    Token { token, entry }
}

/// A running server.
pub struct Server {
    child: Child,
    pub url: String,
    pub acme: String,
    pub globex: String,
    /// A token of tenant acme with a burst of 2 and a slow refill.
    pub limited: String,
    /// The index the server serves.
    pub index_dir: PathBuf,
    log: Arc<Mutex<String>>,
    reader: Option<JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

impl Server {
    /// Builds the index, makes three tokens, writes the configuration and starts
    /// `braid serve --bind 127.0.0.1:0` with every log level on.
    pub fn start() -> Server {
        Self::start_with_timeout(5000)
    }

    /// As [`Server::start`], with this request time budget.
    pub fn start_with_timeout(timeout_ms: u64) -> Server {
        Self::start_with(timeout_ms, "", "")
    }

    /// As [`Server::start_with_timeout`], with further `[limits]` lines.
    pub fn start_with_limits(timeout_ms: u64, extra_limits: &str) -> Server {
        Self::start_with(timeout_ms, extra_limits, "")
    }

    /// As [`Server::start`], with this request time budget, further `[limits]` lines, and
    /// `extra` appended to the configuration (an `[oauth]` section, say).
    pub fn start_with(timeout_ms: u64, extra_limits: &str, extra: &str) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let index_dir = dir.path().join("index");
        build_index(&index_dir);
        let acme = new_token(&["--name", "acme-agent", "--tenant", "acme", "--principal", "group:support"]);
        let globex = new_token(&["--name", "globex-agent", "--tenant", "globex"]);
        let limited = new_token(&["--name", "limited", "--tenant", "acme"]);
        let config = format!(
            "allowed_origins = [\"http://localhost:3000\"]\nreload_seconds = 0.2\n\n[limits]\nmax_body_bytes = 4096\ntimeout_ms = {timeout_ms}\n\
             max_k = 50\nrate_per_second = 1000.0\nburst = 1000\n{extra_limits}\n\n{}\n{}\n{}rate_per_second = 0.01\nburst = 2\n\n{extra}\n",
            acme.entry,
            globex.entry,
            limited.entry
        );
        let config_path = dir.path().join("braid.toml");
        std::fs::write(&config_path, config).unwrap();
        let mut child = braid()
            .args(["serve", "--bind", "127.0.0.1:0", "--index"])
            .arg(&index_dir)
            .arg("--config")
            .arg(&config_path)
            .env("BRAID_LOG", "trace")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        let sink = Arc::clone(&log);
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(at) = line.split("listening on ").nth(1) {
                    let _ = tx.send(at.split_whitespace().next().unwrap_or("").to_string());
                }
                let mut log = sink.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let url = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(url) => url,
            Err(_) => {
                let _ = child.kill();
                panic!("the server did not start: {}", log.lock().unwrap());
            }
        };
        Server {
            child,
            url,
            acme: acme.token,
            globex: globex.token,
            limited: limited.token,
            index_dir,
            log,
            reader: Some(reader),
            _dir: dir,
        }
    }

    /// Stops the server and returns everything it logged.
    pub fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        let log = self.log.lock().unwrap().clone();
        log
    }

    /// A request to `path` with `headers`, and `body` when given.
    pub fn request(&self, method: &str, path: &str, headers: &[(&str, &str)], body: Option<&str>) -> Reply {
        let mut req = ureq::request(method, &format!("{}{path}", self.url)).timeout(Duration::from_secs(30));
        for (name, value) in headers {
            req = req.set(name, value);
        }
        let result = match body {
            Some(b) => req.send_string(b),
            None => req.call(),
        };
        let response = match result {
            Ok(r) => r,
            Err(ureq::Error::Status(_, r)) => r,
            Err(e) => panic!("{method} {path}: {e}"),
        };
        let status = response.status();
        let headers = response
            .headers_names()
            .into_iter()
            .map(|n| {
                let value = response.header(&n).unwrap_or("").to_string();
                (n, value)
            })
            .collect();
        let text = response.into_string().unwrap();
        Reply { status, headers, text }
    }

    /// `POST /v1/search` as `token`.
    pub fn search(&self, token: &str, body: Value) -> Reply {
        let auth = format!("Bearer {token}");
        let headers = [("Authorization", auth.as_str()), ("Content-Type", "application/json")];
        self.request("POST", "/v1/search", &headers, Some(&body.to_string()))
    }

    /// `GET path` without a token.
    pub fn get(&self, path: &str) -> Reply {
        self.request("GET", path, &[], None)
    }

    /// `POST /mcp` as `token`, with `MCP-Protocol-Version: version` when given.
    pub fn mcp(&self, token: &str, version: Option<&str>, body: &str) -> Reply {
        let auth = format!("Bearer {token}");
        let mut headers = vec![
            ("Authorization", auth.as_str()),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        if let Some(v) = version {
            headers.push(("MCP-Protocol-Version", v));
        }
        self.request("POST", "/mcp", &headers, Some(body))
    }

    /// An MCP `tools/call` in revision 2025-06-18; the JSON-RPC result.
    pub fn call_tool(&self, token: &str, name: &str, arguments: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
        let reply = self.mcp(token, Some("2025-06-18"), &body.to_string());
        assert_eq!(reply.status, 200, "{}", reply.text);
        let v = reply.json();
        assert_eq!(v["id"], 7);
        v["result"].clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A TCP connection to the server at `url` (`http://host:port`) from the loopback address
/// `source` (any of 127.0.0.0/8 on Linux): another client, as the server's per-address limits
/// see it.
pub fn connect_from(source: [u8; 4], url: &str) -> std::net::TcpStream {
    let addr: std::net::SocketAddr = url.trim_start_matches("http://").parse().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap();
    runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(std::net::SocketAddr::from((source, 0))).unwrap();
        let stream = socket.connect(addr).await.unwrap();
        let stream = stream.into_std().unwrap();
        stream.set_nonblocking(false).unwrap();
        stream
    })
}

/// One HTTP/1.1 request over a fresh connection from `source` (see [`connect_from`]); the
/// answer, read until the server closes.
pub fn request_from(
    source: [u8; 4],
    url: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Reply {
    use std::io::Read;
    let mut stream = connect_from(source, url);
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let body = body.unwrap_or("");
    let mut head =
        format!("{method} {path} HTTP/1.1\r\nHost: braid\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, text) = raw.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no answer: {raw:?}"));
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split_whitespace().nth(1)).and_then(|c| c.parse().ok()).unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Reply { status, headers, text: text.to_string() }
}

/// An HTTP answer.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub text: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("{e}: {:?}", self.text))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Checks `value` against the subset of JSON Schema the server's schemas use (type, enum,
/// const, properties, required, additionalProperties, items, min/maxItems, minimum, maximum,
/// oneOf, local `$ref`). Returns the first violation.
pub fn validate(schema: &Value, value: &Value) -> Result<(), String> {
    check(schema, value, schema, "$")
}

fn check(schema: &Value, value: &Value, root: &Value, at: &str) -> Result<(), String> {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let target = r.trim_start_matches('#').split('/').filter(|s| !s.is_empty()).fold(root, |v, key| &v[key]);
        return check(target, value, root, at);
    }
    if let Some(types) = schema.get("type") {
        let names: Vec<&str> = match types {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let ok = names.iter().any(|t| match *t {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "number" => value.is_number(),
            "integer" => value.as_i64().is_some() || value.as_u64().is_some(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            _ => false,
        });
        if !ok {
            return Err(format!("{at}: {value} is not of type {types}"));
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.contains(value) {
            return Err(format!("{at}: {value} is not one of {options:?}"));
        }
    }
    if let Some(c) = schema.get("const") {
        if c != value {
            return Err(format!("{at}: {value} is not {c}"));
        }
    }
    if let Some(n) = value.as_f64() {
        let below = schema.get("minimum").and_then(Value::as_f64).is_some_and(|m| n < m);
        let above = schema.get("maximum").and_then(Value::as_f64).is_some_and(|m| n > m);
        if below || above {
            return Err(format!("{at}: {n} is out of range"));
        }
    }
    if let Some(variants) = schema.get("oneOf").and_then(Value::as_array) {
        let matching = variants.iter().filter(|v| check(v, value, root, at).is_ok()).count();
        if matching != 1 {
            return Err(format!("{at}: {value} matches {matching} variants of oneOf"));
        }
    }
    if let Value::Object(obj) = value {
        let props = schema.get("properties").and_then(Value::as_object);
        for name in schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
            if !obj.contains_key(name) {
                return Err(format!("{at}: missing {name}"));
            }
        }
        for (key, v) in obj {
            match props.and_then(|p| p.get(key)) {
                Some(s) => check(s, v, root, &format!("{at}.{key}"))?,
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => return Err(format!("{at}: unexpected property {key}")),
                    Some(s @ Value::Object(_)) => check(s, v, root, &format!("{at}.{key}"))?,
                    _ => {}
                },
            }
        }
    }
    if let Value::Array(items) = value {
        let len = items.len() as u64;
        let short = schema.get("minItems").and_then(Value::as_u64).is_some_and(|m| len < m);
        let long = schema.get("maxItems").and_then(Value::as_u64).is_some_and(|m| len > m);
        if short || long {
            return Err(format!("{at}: {len} items"));
        }
        if let Some(item) = schema.get("items") {
            for (i, v) in items.iter().enumerate() {
                check(item, v, root, &format!("{at}[{i}]"))?;
            }
        }
    }
    Ok(())
}

/// Writes `lines` to `braid mcp --index <dir> <args>`, closes its stdin, and returns its stdout
/// lines.
pub fn stdio_session(dir: &Path, args: &[&str], lines: &[String]) -> Vec<String> {
    let mut child = braid()
        .args(["mcp", "--index"])
        .arg(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        for line in lines {
            writeln!(stdin, "{line}").unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // JSON-RPC answers need not come in the order of the requests (rmcp runs requests
    // concurrently, and answers a malformed line at once): in the order of their ids, those
    // without one last.
    let mut lines: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect();
    let id =
        |line: &String| serde_json::from_str::<Value>(line).ok().and_then(|v| v["id"].as_u64()).unwrap_or(u64::MAX);
    lines.sort_by_key(id);
    lines
}
