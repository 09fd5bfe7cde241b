//! `braid serve` as an OAuth 2.1 resource server: tokens signed here with generated keys,
//! the issuer's keys served on loopback, every refusal checked.

use serde_json::{json, Value};

use crate::support::idp::{jwks, now, Idp, Key, RESOURCE, SCOPE};
use crate::support::{Reply, Server, ACME_SECRET, GLOBEX_SECRET};

fn search(server: &Server, token: &str) -> Reply {
    server.search(token, json!({"query": "refund annual plan", "k": 5}))
}

fn ids(reply: &Reply) -> Vec<String> {
    let hits = reply.json()["hits"].as_array().cloned().unwrap_or_default();
    hits.iter().map(|h| h["id"].as_str().unwrap().to_string()).collect()
}

fn challenge(reply: &Reply) -> String {
    reply.header("www-authenticate").unwrap_or_default().to_string()
}

#[test]
fn access_tokens_are_verified_and_their_claims_become_the_principal() {
    let key = Key::generate("k1");
    let idp = Idp::start(jwks(&[&key]));
    let server = Server::start_with(5000, "", &idp.oauth_section());

    // A valid token for tenant acme sees acme's section only, over REST and MCP.
    let token = key.sign(&idp.claims("acme"));
    let reply = search(&server, &token);
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(ids(&reply)[0], "acme-refunds#annual");
    assert!(!reply.text.contains(GLOBEX_SECRET));
    let result = server.call_tool(&token, "read_section", json!({"id": "acme-refunds#annual"}));
    assert!(result["structuredContent"]["text"].as_str().unwrap().contains(ACME_SECRET));
    let hidden = server.call_tool(&token, "read_section", json!({"id": "globex-refunds#annual"}));
    assert_eq!(hidden["isError"], true);
    // A tool argument cannot name a principal.
    let smuggled = server.call_tool(&token, "search", json!({"query": "refund", "principal": ["tenant:globex"]}));
    assert_eq!(smuggled["isError"], true);
    // The scope mapped to tenant:globex widens what the token sees; without it, it does not.
    let mut claims = idp.claims("acme");
    claims["scope"] = json!(format!("{SCOPE} kb.globex"));
    let wide = search(&server, &key.sign(&claims));
    assert!(ids(&wide).contains(&"globex-refunds#annual".to_string()), "{}", wide.text);
    // The stats name the issuer and subject; the keys were fetched once for all of this.
    let stats = server.request("GET", "/v1/stats", &[("Authorization", &format!("Bearer {token}"))], None);
    assert_eq!(stats.json()["caller"]["name"], "test-idp:user-1");
    assert_eq!(idp.fetches(), 1);
    // Static tokens keep working beside OAuth.
    assert_eq!(ids(&search(&server, &server.globex))[0], "globex-refunds#annual");
}

#[test]
fn bad_tokens_are_refused_with_the_right_challenge() {
    let key = Key::generate("k1");
    let other = Key::generate("k1");
    let idp = Idp::start(jwks(&[&key]));
    let server = Server::start_with(5000, "", &idp.oauth_section());
    let metadata_url = "resource_metadata=\"https://braid.test/.well-known/oauth-protected-resource/mcp\"";

    // No token: 401 pointing at the metadata, no error code (RFC 6750 §3.1).
    let reply = server.request("POST", "/v1/search", &[("Content-Type", "application/json")], Some("{}"));
    assert_eq!(reply.status, 401);
    assert!(
        challenge(&reply).starts_with("Bearer ") && challenge(&reply).contains(metadata_url),
        "{}",
        challenge(&reply)
    );
    assert!(!challenge(&reply).contains("error="));

    let valid = idp.claims("acme");
    let with = |field: &str, value: Value| {
        let mut c = valid.clone();
        c[field] = value;
        c
    };
    let without = |field: &str| {
        let mut c = valid.clone();
        c.as_object_mut().unwrap().remove(field);
        c
    };
    let signed = key.sign(&valid);
    let (head, rest) = signed.split_once('.').unwrap();
    let (_, signature) = rest.split_once('.').unwrap();
    let b64 = |v: &Value| {
        use base64::Engine as _;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
    };
    let tampered = format!("{head}.{}.{signature}", b64(&with("tenant", json!("globex"))));
    let alg_none = format!("{}.{}.", b64(&json!({"alg": "none", "typ": "JWT"})), b64(&valid));
    // HS256 keyed with the public key (algorithm confusion).
    let confused = {
        let secret = key.jwk()["x"].as_str().unwrap().to_string();
        jsonwebtoken::encode(
            &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
            &valid,
            &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()).unwrap(),
        )
        .unwrap()
    };
    let cases: Vec<(&str, String)> = vec![
        ("expired", key.sign(&with("exp", json!(now() - 3600)))),
        ("not yet valid", key.sign(&with("nbf", json!(now() + 3600)))),
        ("wrong audience", key.sign(&with("aud", json!("https://other.test/mcp")))),
        ("no audience", key.sign(&without("aud"))),
        ("wrong issuer", key.sign(&with("iss", json!("https://evil.test")))),
        ("no expiry", key.sign(&without("exp"))),
        ("wrong key, same kid", other.sign(&valid)),
        ("other key type, same kid", Key::generate_es256("k1").sign(&valid)),
        ("tampered", tampered),
        ("alg none", alg_none),
        ("hs256 confusion", confused),
        ("not a jwt", "definitely-not-a-token-123".to_string()),
    ];
    for (i, (what, token)) in cases.iter().enumerate() {
        let reply = search(&server, token);
        assert_eq!(reply.status, 401, "{what}: {}", reply.text);
        let c = challenge(&reply);
        assert!(c.contains("error=\"invalid_token\"") && c.contains(metadata_url), "{what}: {c}");
        assert!(!reply.text.contains(ACME_SECRET), "{what}");
        if i >= 3 {
            // (A few suffice: refusals draw on the shared bucket of requests without a valid token.)
            continue;
        }
        // MCP is refused the same way.
        let rpc = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
        assert_eq!(server.mcp(token, Some("2025-06-18"), &rpc).status, 401, "{what}");
    }
    // A valid token without the required scope: 403 insufficient_scope naming the scope.
    let reply = search(&server, &key.sign(&with("scope", json!("openid"))));
    assert_eq!(reply.status, 403, "{}", reply.text);
    let c = challenge(&reply);
    assert!(c.contains("error=\"insufficient_scope\"") && c.contains(&format!("scope=\"{SCOPE}\"")), "{c}");
    // The refusals above made no extra key fetches beyond the rate-limited one.
    assert!(idp.fetches() <= 2, "{}", idp.fetches());
    // And the valid token still works.
    assert_eq!(search(&server, &signed).status, 200);
}

#[test]
fn rotated_keys_are_picked_up_and_metadata_is_published() {
    let old = Key::generate("2026-old");
    let idp = Idp::start(jwks(&[&old]));
    let server = Server::start_with(5000, "", &idp.oauth_section());
    assert_eq!(search(&server, &old.sign(&idp.claims("acme"))).status, 200);
    assert_eq!(idp.fetches(), 1);
    // The issuer rotates (to a P-256 key): a token with the new kid makes the server fetch the
    // keys again.
    let new = Key::generate_es256("2026-new");
    idp.rotate(jwks(&[&new]));
    let reply = search(&server, &new.sign(&idp.claims("acme")));
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(idp.fetches(), 2);
    // The old key is gone from the served set, and so from the server's.
    assert_eq!(search(&server, &old.sign(&idp.claims("acme"))).status, 401);
    // Unknown kids do not make the server fetch again within the minimum interval.
    for i in 0..5 {
        let stranger = Key::generate(&format!("unknown-{i}"));
        assert_eq!(search(&server, &stranger.sign(&idp.claims("acme"))).status, 401);
    }
    assert_eq!(idp.fetches(), 2);

    // RFC 9728 metadata, at the path-suffixed and the bare well-known location, without a token.
    for path in ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"] {
        let reply = server.get(path);
        assert_eq!(reply.status, 200, "{path}");
        let m = reply.json();
        assert_eq!(m["resource"], RESOURCE);
        assert_eq!(m["authorization_servers"], json!([idp.issuer]));
        assert!(m["scopes_supported"].as_array().unwrap().contains(&json!(SCOPE)));
        assert_eq!(m["bearer_methods_supported"], json!(["header"]));
    }
}

#[test]
fn keys_from_a_local_file() {
    let key = Key::generate("file-key");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jwks.json");
    std::fs::write(&path, jwks(&[&key])).unwrap();
    let issuer = "https://login.file.test";
    let section = format!(
        "[oauth]\nresource = \"{RESOURCE}\"\n\n[[oauth.issuer]]\nname = \"file-idp\"\nissuer = \"{issuer}\"\n\
         jwks_file = \"{}\"\ntenant_claim = \"org\"\n",
        path.display()
    );
    let server = Server::start_with(5000, "", &section);
    let now = now();
    let claims = json!({"iss": issuer, "aud": RESOURCE, "exp": now + 600, "org": "globex"});
    let reply = search(&server, &key.sign(&claims));
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(ids(&reply)[0], "globex-refunds#annual");
    assert!(!reply.text.contains(ACME_SECRET));
    // Without required scopes configured, the challenge names none.
    let reply = search(&server, "nope-nope-nope-nope");
    assert!(!challenge(&reply).contains("scope="), "{}", challenge(&reply));
}

#[test]
fn a_bad_oauth_section_stops_the_server() {
    let dir = tempfile::tempdir().unwrap();
    crate::support::build_index(&dir.path().join("index"));
    for (section, needle) in [
        ("[oauth]\nresource = \"http://braid.test/mcp\"\n[[oauth.issuer]]\nname = \"a\"\nissuer = \"https://a.test\"\n", "https"),
        ("[oauth]\nresource = \"https://braid.test/mcp\"\n[[oauth.issuer]]\nname = \"a\"\nissuer = \"https://a.test\"\nalgorithms = [\"HS256\"]\n", "shared-secret"),
        ("[oauth]\nresource = \"https://braid.test/mcp\"\n[[oauth.issuer]]\nname = \"a\"\nissuer = \"https://a.test\"\njwks_file = \"/nonexistent/jwks.json\"\n", "nonexistent"),
    ] {
        let config = dir.path().join("braid.toml");
        std::fs::write(&config, section).unwrap();
        let out = crate::support::braid()
            .args(["serve", "--bind", "127.0.0.1:0", "--index"])
            .arg(dir.path().join("index"))
            .arg("--config")
            .arg(&config)
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{needle}: {err}");
    }
}
