//! A test identity provider on loopback: Ed25519 and P-256 keys generated here (random bytes
//! from the operating system, wrapped as PKCS#8), a JWKS and RFC 8414 metadata served over real
//! HTTP (std `TcpListener`, a thread per connection), and access tokens signed with
//! `jsonwebtoken`. It counts JWKS fetches, so tests can see caching and rotation, and can be
//! made slow or failing, so tests can see how fetches are deduplicated.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

/// The audience tokens are issued for: `braid serve`'s configured resource.
pub const RESOURCE: &str = "https://braid.test/mcp";
/// The scope the test server requires.
pub const SCOPE: &str = "braid.search";

/// A freshly generated signing key, its algorithm and key id.
pub struct Key {
    pub kid: String,
    alg: Algorithm,
    der: Vec<u8>,
}

fn random32() -> [u8; 32] {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).unwrap();
    bytes
}

impl Key {
    /// A new random Ed25519 key (EdDSA).
    pub fn generate(kid: &str) -> Key {
        // PKCS#8 v1 of an Ed25519 seed (RFC 8410 §7).
        let mut der = hex("302e020100300506032b657004220420");
        der.extend(random32());
        Key { kid: kid.to_string(), alg: Algorithm::EdDSA, der }
    }

    /// A new random P-256 key (ES256).
    pub fn generate_es256(kid: &str) -> Key {
        // PKCS#8 of a SEC1 ECPrivateKey on prime256v1 (RFC 5915), without the optional public key.
        let mut scalar = random32();
        scalar[0] &= 0x7f; // below the group order
        scalar[0] |= 0x01; // and not zero
        let mut der = hex("3041020100301306072a8648ce3d020106082a8648ce3d030107042730250201010420");
        der.extend(scalar);
        Key { kid: kid.to_string(), alg: Algorithm::ES256, der }
    }

    fn encoding_key(&self) -> EncodingKey {
        match self.alg {
            Algorithm::EdDSA => EncodingKey::from_ed_der(&self.der),
            _ => EncodingKey::from_ec_der(&self.der),
        }
    }

    /// The public key as a JWK (derived by `jsonwebtoken` from the private key).
    pub fn jwk(&self) -> Value {
        let jwk = Jwk::from_encoding_key(&self.encoding_key(), self.alg).unwrap();
        let mut v = serde_json::to_value(jwk).unwrap();
        v["kid"] = json!(self.kid);
        v["use"] = json!("sig");
        v
    }

    /// `claims` signed with this key (with its kid).
    pub fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(self.alg);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.encoding_key()).unwrap()
    }
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect()
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// A JWKS document of these keys.
pub fn jwks(keys: &[&Key]) -> String {
    json!({"keys": keys.iter().map(|k| k.jwk()).collect::<Vec<_>>()}).to_string()
}

/// An identity provider serving `/.well-known/oauth-authorization-server` and `/jwks.json`.
pub struct Idp {
    pub issuer: String,
    jwks: Arc<Mutex<String>>,
    fetches: Arc<AtomicUsize>,
}

impl Idp {
    /// Starts the provider on an ephemeral loopback port with this JWKS.
    pub fn start(jwks: String) -> Idp {
        Self::start_with(jwks, Duration::ZERO, false)
    }

    /// As [`Idp::start`], answering each JWKS request after `delay` — with a 500 when
    /// `failing`. Fetches are counted when they arrive.
    pub fn start_with(jwks: String, delay: Duration, failing: bool) -> Idp {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let jwks = Arc::new(Mutex::new(jwks));
        let fetches = Arc::new(AtomicUsize::new(0));
        let (doc, count, iss) = (Arc::clone(&jwks), Arc::clone(&fetches), issuer.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let (doc, count, iss) = (Arc::clone(&doc), Arc::clone(&count), iss.clone());
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut request_line = String::new();
                    if reader.read_line(&mut request_line).is_err() {
                        return;
                    }
                    let mut line = String::new();
                    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                        line.clear();
                    }
                    let path = request_line.split_whitespace().nth(1).unwrap_or("");
                    let (status, body) = match path {
                        "/.well-known/oauth-authorization-server" => {
                            ("200 OK", json!({"issuer": iss, "jwks_uri": format!("{iss}/jwks.json")}).to_string())
                        }
                        "/jwks.json" => {
                            count.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(delay);
                            if failing {
                                ("500 Internal Server Error", "{}".to_string())
                            } else {
                                ("200 OK", doc.lock().unwrap().clone())
                            }
                        }
                        _ => ("404 Not Found", "{}".to_string()),
                    };
                    let _ = write!(
                        stream,
                        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                });
            }
        });
        Idp { issuer, jwks, fetches }
    }

    /// Replaces the served JWKS (a key rotation).
    pub fn rotate(&self, jwks: String) {
        *self.jwks.lock().unwrap() = jwks;
    }

    /// How many times the JWKS was fetched.
    pub fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }

    /// The `[oauth]` section of a server trusting this provider (keys discovered from its
    /// metadata), mapping `tenant` → `tenant:…`, `groups` → `group:…`, and the scope
    /// `kb.globex` → `tenant:globex`.
    pub fn oauth_section(&self) -> String {
        format!(
            "[oauth]\nresource = \"{RESOURCE}\"\nrequired_scopes = [\"{SCOPE}\"]\n\n\
             [[oauth.issuer]]\nname = \"test-idp\"\nissuer = \"{}\"\ntenant_claim = \"tenant\"\ngroups_claim = \"groups\"\n\
             scope_tokens = {{ \"kb.globex\" = [\"tenant:globex\"] }}\nrate_per_second = 1000.0\nburst = 1000\n",
            self.issuer
        )
    }

    /// Claims of a valid token for tenant `tenant` (an hour left, the required scope).
    pub fn claims(&self, tenant: &str) -> Value {
        let now = now();
        json!({
            "iss": self.issuer, "sub": "user-1", "aud": RESOURCE, "iat": now, "nbf": now - 5, "exp": now + 3600,
            "scope": SCOPE, "tenant": tenant, "groups": ["support"]
        })
    }
}
