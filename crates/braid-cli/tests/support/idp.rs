//! A test identity provider on loopback: Ed25519 keys generated here, a JWKS and RFC 8414
//! metadata served over real HTTP (std `TcpListener`), and access tokens signed with
//! `jsonwebtoken`. It counts JWKS fetches, so tests can see caching and rotation.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use ed25519_dalek::pkcs8::EncodePrivateKey;
use ed25519_dalek::SigningKey;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

/// The audience tokens are issued for: `braid serve`'s configured resource.
pub const RESOURCE: &str = "https://braid.test/mcp";
/// The scope the test server requires.
pub const SCOPE: &str = "braid.search";

/// A freshly generated Ed25519 signing key and its key id.
pub struct Key {
    pub kid: String,
    signing: SigningKey,
}

impl Key {
    /// A new random key.
    pub fn generate(kid: &str) -> Key {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).unwrap();
        Key { kid: kid.to_string(), signing: SigningKey::from_bytes(&seed) }
    }

    /// The public key as a JWK.
    pub fn jwk(&self) -> Value {
        use base64::Engine as _;
        let x = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(self.signing.verifying_key().to_bytes());
        json!({"kty": "OKP", "crv": "Ed25519", "x": x, "kid": self.kid, "alg": "EdDSA", "use": "sig"})
    }

    /// `claims` signed with this key (EdDSA, with its kid).
    pub fn sign(&self, claims: &Value) -> String {
        let der = self.signing.to_pkcs8_der().unwrap();
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &EncodingKey::from_ed_der(der.as_bytes())).unwrap()
    }
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
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let jwks = Arc::new(Mutex::new(jwks));
        let fetches = Arc::new(AtomicUsize::new(0));
        let (doc, count, iss) = (Arc::clone(&jwks), Arc::clone(&fetches), issuer.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request_line = String::new();
                if reader.read_line(&mut request_line).is_err() {
                    continue;
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
                        ("200 OK", doc.lock().unwrap().clone())
                    }
                    _ => ("404 Not Found", "{}".to_string()),
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
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
