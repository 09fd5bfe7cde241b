//! Issue 45, the server half ("identity and ingestion fail closed"): each attack found against
//! a two-tenant `braid serve`, replayed through the real binary over real sockets, with tokens
//! signed by `jsonwebtoken` and keys served by a real loopback identity provider.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::idp::{jwks, now, Idp, Key, RESOURCE, SCOPE};
use crate::support::{braid, build_index, new_token, request_from, Reply, Server, ACME_SECRET, GLOBEX_SECRET};

fn search(server: &Server, token: &str) -> Reply {
    server.search(token, json!({"query": "refund annual plan", "k": 5}))
}

fn ids(reply: &Reply) -> Vec<String> {
    let hits = reply.json()["hits"].as_array().cloned().unwrap_or_default();
    hits.iter().map(|h| h["id"].as_str().unwrap().to_string()).collect()
}

/// An `[[oauth.issuer]]` entry for `idp` named `name`, with `extra` lines.
fn issuer(idp: &Idp, name: &str, extra: &str) -> String {
    format!(
        "[[oauth.issuer]]\nname = \"{name}\"\nissuer = \"{}\"\njwks_uri = \"{}/jwks.json\"\n{extra}\n",
        idp.issuer, idp.issuer
    )
}

fn oauth(required: &str, issuers: &[String]) -> String {
    format!("[oauth]\nresource = \"{RESOURCE}\"\nrequired_scopes = [{required}]\n{}", issuers.join("\n"))
}

/// Claims of a valid token of `idp` for `sub` in `tenant`.
fn claims(idp: &Idp, sub: &str, tenant: &str) -> Value {
    let now = now();
    json!({"iss": idp.issuer, "sub": sub, "aud": RESOURCE, "exp": now + 3600, "scope": SCOPE, "tenant": tenant})
}

/// Whether `braid serve` refuses to start with `config`, saying `needle`.
fn refuses_to_start(config: &str, needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    build_index(&dir.path().join("index"));
    let path = dir.path().join("braid.toml");
    std::fs::write(&path, config).unwrap();
    let out = braid()
        .args(["serve", "--bind", "127.0.0.1:0", "--index"])
        .arg(dir.path().join("index"))
        .arg("--config")
        .arg(&path)
        .output()
        .unwrap();
    assert!(!out.status.success(), "{config}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(needle), "{needle}: {err}");
}

/// Attack 1: A tenant pin refuses a token claiming another tenant; it never adds that tenant.
#[test]
fn a_pinned_issuer_refuses_a_token_claiming_another_tenant() {
    let key = Key::generate("k1");
    let idp = Idp::start(jwks(&[&key]));
    let section = oauth(
        &format!("\"{SCOPE}\""),
        &[issuer(&idp, "acme-idp", "tenant_claim = \"tenant\"\nprincipal = [\"tenant:acme\"]")],
    );
    let server = Server::start_with(5000, "", &section);
    let own = search(&server, &key.sign(&claims(&idp, "alice", "acme")));
    assert_eq!(own.status, 200, "{}", own.text);
    assert_eq!(ids(&own)[0], "acme-refunds#annual");
    // Claiming globex: refused with the challenge, and nothing of either tenant shown.
    let other = search(&server, &key.sign(&claims(&idp, "mallory", "globex")));
    assert_eq!(other.status, 401, "{}", other.text);
    assert!(other.header("www-authenticate").unwrap().contains("invalid_token"));
    assert!(!other.text.contains(GLOBEX_SECRET) && !other.text.contains(ACME_SECRET));
    // What can be checked at load is: a scope that would add a tenant outside the pin.
    refuses_to_start(
        &format!(
            "{}[[token]]\nname = \"t\"\nsha256 = \"{}\"\n",
            oauth(
                "",
                &[issuer(
                    &idp,
                    "acme-idp",
                    "tenant_claim = \"tenant\"\nprincipal = [\"tenant:acme\"]\nscope_tokens = { \"x\" = [\"tenant:globex\"] }"
                )]
            ),
            "0".repeat(64)
        ),
        "outside the tenant",
    );
}

/// Attack 2: Issuers do not share a namespace: B's "alice" is not A's, and configurations where
/// two issuers could derive the same token do not load.
#[test]
fn one_issuers_alice_is_not_anothers() {
    let (ka, kb) = (Key::generate("ka"), Key::generate("kb"));
    let (a, b) = (Idp::start(jwks(&[&ka])), Idp::start(jwks(&[&kb])));
    let section = oauth(
        "",
        &[
            issuer(&a, "idp-a", "user_claim = \"sub\"\nprincipal = [\"tenant:acme\"]"),
            issuer(&b, "idp-b", "user_claim = \"sub\"\nprincipal = [\"tenant:globex\"]"),
        ],
    );
    let server = Server::start_with(5000, "", &section);
    // A record ACL'd to A's alice, written by another process and picked up by the server.
    let index = braid::Index::open(&server.index_dir).unwrap();
    let mut writer = index.writer().unwrap();
    writer
        .upsert(
            &braid::Record::new("alice-diary")
                .title("Diary")
                .body("Alice's private narwhal diary.")
                .acl(["user:idp-a/alice"]),
        )
        .unwrap();
    writer.commit().unwrap();
    drop(writer);
    let diary = |key: &Key, idp: &Idp| -> Vec<String> {
        let reply =
            server.search(&key.sign(&claims(idp, "alice", "x")), json!({"query": "narwhal diary", "mode": "lexical"}));
        assert_eq!(reply.status, 200, "{}", reply.text);
        ids(&reply)
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while diary(&ka, &a).is_empty() {
        assert!(std::time::Instant::now() < deadline, "A's alice never saw her record");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(diary(&ka, &a), ["alice-diary"]);
    assert!(diary(&kb, &b).is_empty(), "B's alice saw A's alice's record");

    let token = format!("[[token]]\nname = \"t\"\nsha256 = \"{}\"\n", "0".repeat(64));
    // Two issuers taking the tenant from a claim could both say "acme".
    let both = oauth("", &[issuer(&a, "idp-a", "tenant_claim = \"t\""), issuer(&b, "idp-b", "tenant_claim = \"t\"")]);
    refuses_to_start(&format!("{both}{token}"), "could both give");
    // One issuer's fixed token in the other's namespace.
    let squat = oauth(
        "",
        &[issuer(&a, "idp-a", "user_claim = \"sub\""), issuer(&b, "idp-b", "principal = [\"user:idp-a/alice\"]")],
    );
    refuses_to_start(&format!("{squat}{token}"), "namespace of issuer");
}

/// Attack 3: Rate limits, counters and `/v1/stats` are per principal, never per issuer.
#[test]
fn callers_of_one_issuer_have_their_own_limits_and_counters() {
    let key = Key::generate("k1");
    let idp = Idp::start(jwks(&[&key]));
    let section = oauth(
        &format!("\"{SCOPE}\""),
        &[issuer(&idp, "idp", "tenant_claim = \"tenant\"\nrate_per_second = 0.01\nburst = 3")],
    );
    let server = Server::start_with(5000, "", &section);
    let acme = key.sign(&claims(&idp, "alice", "acme"));
    let statuses: Vec<u16> = (0..4).map(|_| search(&server, &acme).status).collect();
    assert_eq!(statuses, [200, 200, 200, 429]);
    // Globex's user, and acme's other user, each have a full bucket of their own.
    let globex = key.sign(&claims(&idp, "gus", "globex"));
    assert_eq!(search(&server, &globex).status, 200);
    assert_eq!(search(&server, &key.sign(&claims(&idp, "bob", "acme"))).status, 200);
    // And their own counts: globex's stats say nothing of acme's traffic.
    let stats = server.request("GET", "/v1/stats", &[("Authorization", &format!("Bearer {globex}"))], None);
    assert_eq!(stats.status, 200, "{}", stats.text);
    let caller = &stats.json()["caller"];
    assert_eq!(caller["name"], "idp:gus");
    assert_eq!((caller["requests"].as_u64(), caller["rate_limited"].as_u64()), (Some(2), Some(0)), "{caller}");
}

/// A token of `idp` signed by a key it does not have (a forgery with a made-up key id).
fn forged(idp: &Idp, i: usize) -> String {
    Key::generate(&format!("forged-{i}")).sign(&claims(idp, "mallory", "acme"))
}

/// Sends `tokens` from as many threads, 50 ms apart (all while one slow fetch is under way);
/// the statuses.
fn flood(server: &Server, tokens: Vec<String>) -> Vec<u16> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = tokens
            .into_iter()
            .map(|t| {
                std::thread::sleep(Duration::from_millis(50));
                scope.spawn(move || search(server, &t).status)
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// Attack 4: Key fetches are single-flight and negatively cached: forged tokens naming an
/// issuer whose JWKS answers in a second cost one fetch, not one each, and again once the keys
/// are stale.
#[test]
fn forged_tokens_cost_one_key_fetch_while_one_is_in_flight() {
    let key = Key::generate("k1");
    let idp = Idp::start_with(jwks(&[&key]), Duration::from_secs(1), false);
    let section = format!(
        "[oauth]\nresource = \"{RESOURCE}\"\njwks_refresh_seconds = 1\n{}",
        issuer(&idp, "slow-idp", "tenant_claim = \"tenant\"")
    );
    let server = Server::start_with(5000, "unauthenticated_burst = 1000", &section);
    let statuses = flood(&server, (0..12).map(|i| forged(&idp, i)).collect());
    assert!(statuses.iter().all(|s| *s == 401), "{statuses:?}");
    assert_eq!(idp.fetches(), 1);
    // Once the keys are stale, twelve more cost one more fetch.
    std::thread::sleep(Duration::from_millis(1200));
    let statuses = flood(&server, (12..24).map(|i| forged(&idp, i)).collect());
    assert!(statuses.iter().all(|s| *s == 401), "{statuses:?}");
    assert_eq!(idp.fetches(), 2);
    // A genuine token still verifies.
    assert_eq!(search(&server, &key.sign(&claims(&idp, "alice", "acme"))).status, 200);
}

#[test]
fn a_failed_key_fetch_is_not_repeated_for_each_forged_token() {
    let idp = Idp::start_with(jwks(&[]), Duration::from_millis(200), true);
    let section =
        format!("[oauth]\nresource = \"{RESOURCE}\"\n{}", issuer(&idp, "down-idp", "tenant_claim = \"tenant\""));
    let server = Server::start_with(5000, "unauthenticated_burst = 1000", &section);
    for i in 0..12 {
        let reply = search(&server, &forged(&idp, i));
        assert_eq!(reply.status, 503, "{}", reply.text);
        assert!(reply.header("www-authenticate").is_some());
    }
    assert_eq!(idp.fetches(), 1);
}

/// Key lookups come after the client's unauthenticated bucket: a client that spent it makes
/// the server fetch nothing.
#[test]
fn a_throttled_client_causes_no_key_fetch() {
    let key = Key::generate("k1");
    let idp = Idp::start(jwks(&[&key]));
    let section = format!("[oauth]\nresource = \"{RESOURCE}\"\n{}", issuer(&idp, "idp", "tenant_claim = \"tenant\""));
    let server = Server::start_with(5000, "unauthenticated_per_second = 0.001\nunauthenticated_burst = 3", &section);
    for i in 0..3 {
        assert_eq!(search(&server, &format!("garbage-token-{i}")).status, 401);
    }
    let reply = search(&server, &forged(&idp, 0));
    assert_eq!(reply.status, 429, "{}", reply.text);
    assert_eq!(idp.fetches(), 0);
    // Another client's genuine token is checked (and fetches the keys) as usual.
    let auth = format!("Bearer {}", key.sign(&claims(&idp, "alice", "acme")));
    let body = json!({"query": "refund"}).to_string();
    let headers = [("Authorization", auth.as_str()), ("Content-Type", "application/json")];
    let reply = request_from([127, 0, 0, 2], &server.url, "POST", "/v1/search", &headers, Some(&body));
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(idp.fetches(), 1);
}

/// Attack 5: One address holding its maximum of idle connections leaves room for everyone else.
#[test]
fn one_address_cannot_hold_every_connection() {
    // The default caps: 256 connections, 32 per address.
    let server = Server::start();
    let addr = server.url.trim_start_matches("http://").to_string();
    let held: Vec<std::net::TcpStream> = (0..256).map(|_| std::net::TcpStream::connect(&addr).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(300));
    // Another client is served.
    let reply = request_from([127, 0, 0, 2], &server.url, "GET", "/v1/health", &[], None);
    assert_eq!(reply.status, 200, "{}", reply.text);
    let auth = format!("Bearer {}", server.globex);
    let body = json!({"query": "refund"}).to_string();
    let headers = [("Authorization", auth.as_str()), ("Content-Type", "application/json")];
    let reply = request_from([127, 0, 0, 3], &server.url, "POST", "/v1/search", &headers, Some(&body));
    assert_eq!(reply.status, 200, "{}", reply.text);
    drop(held);
}

/// Attack 6: The unauthenticated bucket is per address and never stands before the 401 challenge.
#[test]
fn garbage_from_one_client_does_not_hide_the_challenge_from_others() {
    let key = Key::generate("k1");
    let idp = Idp::start(jwks(&[&key]));
    let server = Server::start_with(5000, "", &idp.oauth_section());
    let statuses: Vec<u16> = (0..40).map(|i| search(&server, &format!("garbage-{i}")).status).collect();
    assert!(statuses.contains(&429), "{statuses:?}");
    let challenged = |reply: &Reply, error: bool| {
        assert_eq!(reply.status, 401, "{}", reply.text);
        let c = reply.header("www-authenticate").unwrap_or_default();
        assert!(c.contains("resource_metadata=") && c.contains("error=\"invalid_token\"") == error, "{c}");
    };
    // A new OAuth client's first request (no token), even from the flooding address.
    challenged(&search_without_token(&server, [127, 0, 0, 1]), false);
    challenged(&search_without_token(&server, [127, 0, 0, 4]), false);
    // An expired token from another address.
    let mut expired = idp.claims("acme");
    expired["exp"] = json!(now() - 3600);
    let auth = format!("Bearer {}", key.sign(&expired));
    let body = json!({"query": "refund"}).to_string();
    let headers = [("Authorization", auth.as_str()), ("Content-Type", "application/json")];
    challenged(&request_from([127, 0, 0, 5], &server.url, "POST", "/v1/search", &headers, Some(&body)), true);
}

fn search_without_token(server: &Server, source: [u8; 4]) -> Reply {
    let body = json!({"query": "refund"}).to_string();
    request_from(source, &server.url, "POST", "/v1/search", &[("Content-Type", "application/json")], Some(&body))
}

/// Attack 7: Stage timings are for operators only.
#[test]
fn stage_timings_are_shown_to_operators_only() {
    let operator = new_token(&["--name", "ops", "--tenant", "acme"]);
    let key = Key::generate("k1");
    let idp = Idp::start(jwks(&[&key]));
    let section = format!(
        "{}operator = true\n\n[oauth]\nresource = \"{RESOURCE}\"\noperator_scope = \"braid.operator\"\n{}",
        operator.entry,
        issuer(&idp, "idp", "tenant_claim = \"tenant\"")
    );
    let server = Server::start_with(5000, "", &section);
    let micros = |token: &str| -> Value {
        let reply = search(&server, token);
        assert_eq!(reply.status, 200, "{}", reply.text);
        reply.json()["stats"]["micros"].clone()
    };
    let steps = |token: &str| -> Value {
        let result = server.call_tool(token, "search", json!({"query": "refund"}));
        result["structuredContent"]["steps"].clone()
    };
    // A tenant's token, and an access token without the operator scope: no timings.
    let user = key.sign(&claims(&idp, "alice", "acme"));
    for token in [server.acme.as_str(), user.as_str()] {
        assert_eq!(micros(token), json!({}));
        assert_eq!(steps(token), json!({}));
    }
    // The operator's token and scope: every stage, to the microsecond.
    let mut scoped = claims(&idp, "ops", "acme");
    scoped["scope"] = json!("braid.operator");
    for token in [operator.token.clone(), key.sign(&scoped)] {
        assert!(micros(&token)["total"].as_u64().is_some(), "{}", micros(&token));
        assert!(steps(&token)["total"].as_f64().is_some());
    }
}
