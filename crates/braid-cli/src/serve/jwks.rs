//! An issuer's signing keys (JWKS): where they come from — a local file, a URL, or the URL the
//! issuer's metadata names — and a cache that keeps them current. Keys are fetched again when
//! the refresh interval has passed, and early when a token names a key id the cache does not
//! hold (the issuer rotated its keys) — such early fetches at most once per [`MIN_REFETCH`],
//! so that tokens with made-up key ids cannot make the server hammer the issuer; after a
//! failed fetch, the next waits as long.
//!
//! A failed fetch keeps the keys fetched before (logged as a warning): an identity provider's
//! outage does not lock everyone out, and a key the issuer removed stops working at the next
//! successful fetch. With no keys ever loaded, tokens of that issuer get 503.

use std::path::PathBuf;
use std::sync::RwLock;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::Algorithm;
use serde_json::Value;

use super::oauth::check_url;

/// The shortest time between two fetches triggered by unknown key ids.
pub const MIN_REFETCH: Duration = Duration::from_secs(10);

/// The largest JWKS or metadata document read.
const MAX_DOCUMENT_BYTES: u64 = 1024 * 1024;

/// Where an issuer's keys come from.
#[derive(Debug, Clone)]
pub enum KeySource {
    /// A JWKS file on disk.
    File(PathBuf),
    /// A JWKS URL.
    Url(String),
    /// The `jwks_uri` of this issuer's metadata (RFC 8414, then OpenID Connect discovery).
    Discover(String),
}

/// The answer of a key lookup.
#[derive(Debug)]
pub enum Lookup {
    /// The key to verify with.
    Found(Box<Jwk>),
    /// The issuer has no such key (even after a fetch).
    Missing,
    /// No keys could be loaded at all.
    Unavailable,
}

/// The cached keys of one issuer.
pub struct KeyCache {
    source: KeySource,
    refresh: Duration,
    state: RwLock<State>,
}

#[derive(Default)]
struct State {
    keys: Option<Vec<Jwk>>,
    loaded: Option<Instant>,
    attempted: Option<Instant>,
    /// The last fetch a token with an unknown key id caused.
    early: Option<Instant>,
    /// Whether the last attempt failed.
    failed: bool,
}

impl KeyCache {
    /// An empty cache over `source`; keys count as current for `refresh`.
    pub fn new(source: KeySource, refresh: Duration) -> KeyCache {
        KeyCache { source, refresh, state: RwLock::new(State::default()) }
    }

    /// Where the keys come from.
    pub fn source(&self) -> &KeySource {
        &self.source
    }

    /// Loads the keys now.
    ///
    /// # Errors
    /// When the source cannot be read or holds no usable key.
    pub fn load_now(&self) -> Result<usize> {
        let keys = load(&self.source)?;
        let n = keys.len();
        let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        state.keys = Some(keys);
        state.loaded = Some(now);
        state.attempted = Some(now);
        Ok(n)
    }

    /// The key for a token with key id `kid` signed with `alg`: from the cache when it is
    /// current and holds it, else after one fetch (rate-limited as the module says).
    pub fn find(&self, kid: Option<&str>, alg: Algorithm) -> Lookup {
        let now = Instant::now();
        let waited = |t: Option<Instant>| t.is_none_or(|t| now.duration_since(t) >= MIN_REFETCH);
        let (fetch, early) = {
            let state = self.state.read().unwrap_or_else(|e| e.into_inner());
            let found = state.keys.as_deref().and_then(|keys| pick(keys, kid, alg));
            let stale = state.loaded.is_none_or(|t| now.duration_since(t) >= self.refresh);
            let backed_off = !state.failed || waited(state.attempted);
            match (stale, found) {
                (false, Some(jwk)) => return Lookup::Found(Box::new(jwk)),
                (true, _) => (backed_off, false),
                (false, None) => (backed_off && waited(state.early), true),
            }
        };
        if fetch {
            self.fetch(now, early);
        }
        let state = self.state.read().unwrap_or_else(|e| e.into_inner());
        match state.keys.as_deref() {
            None => Lookup::Unavailable,
            Some(keys) => pick(keys, kid, alg).map_or(Lookup::Missing, |k| Lookup::Found(Box::new(k))),
        }
    }

    fn fetch(&self, now: Instant, early: bool) {
        {
            let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
            // Another request may have fetched while this one waited for the lock.
            if state.attempted.is_some_and(|t| t > now) {
                return;
            }
            state.attempted = Some(Instant::now());
            if early {
                state.early = state.attempted;
            }
        }
        match load(&self.source) {
            Ok(keys) => {
                tracing::info!(target: "braid::serve::oauth", keys = keys.len(), "issuer keys loaded");
                let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
                state.keys = Some(keys);
                state.loaded = Some(Instant::now());
                state.failed = false;
            }
            Err(e) => {
                self.state.write().unwrap_or_else(|e| e.into_inner()).failed = true;
                tracing::warn!(target: "braid::serve::oauth", error = %format!("{e:#}"), "issuer keys could not be loaded; keeping the keys loaded before, if any");
            }
        }
    }
}

/// The key a token names: by `kid` when it has one; without one, the only signing key of the
/// algorithm's type. A key that says it is for encryption, or for another algorithm, is never
/// picked.
fn pick(keys: &[Jwk], kid: Option<&str>, alg: Algorithm) -> Option<Jwk> {
    let fits = |k: &&Jwk| {
        let usable = !matches!(k.common.public_key_use, Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_)));
        let same_alg = k.common.key_algorithm.is_none_or(|a| key_algorithm(a) == Some(alg));
        let same_kind = matches!(
            (&k.algorithm, alg.family()),
            (AlgorithmParameters::RSA(_), jsonwebtoken::AlgorithmFamily::Rsa)
                | (AlgorithmParameters::EllipticCurve(_), jsonwebtoken::AlgorithmFamily::Ec)
                | (AlgorithmParameters::OctetKeyPair(_), jsonwebtoken::AlgorithmFamily::Ed)
        );
        usable && same_alg && same_kind
    };
    match kid {
        Some(kid) => keys.iter().filter(fits).find(|k| k.common.key_id.as_deref() == Some(kid)).cloned(),
        None => {
            let mut candidates = keys.iter().filter(fits);
            let only = candidates.next()?;
            candidates.next().is_none().then(|| only.clone())
        }
    }
}

fn key_algorithm(a: KeyAlgorithm) -> Option<Algorithm> {
    Some(match a {
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        _ => return None,
    })
}

fn load(source: &KeySource) -> Result<Vec<Jwk>> {
    let text = match source {
        KeySource::File(path) => {
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?
        }
        KeySource::Url(url) => get(url)?,
        KeySource::Discover(issuer) => get(&discover(issuer)?)?,
    };
    parse_jwks(&text)
}

/// The public signing keys of a JWKS document; keys of other types (symmetric `oct` keys,
/// unknown kinds) are left out.
///
/// # Errors
/// When the document is not a JWKS or holds no usable key.
pub fn parse_jwks(text: &str) -> Result<Vec<Jwk>> {
    let doc: Value = serde_json::from_str(text).context("the JWKS is not JSON")?;
    let Some(items) = doc.get("keys").and_then(Value::as_array) else { bail!("the JWKS has no \"keys\" list") };
    let keys: Vec<Jwk> = items
        .iter()
        .filter_map(|k| serde_json::from_value::<Jwk>(k.clone()).ok())
        .filter(|k| {
            matches!(
                k.algorithm,
                AlgorithmParameters::RSA(_)
                    | AlgorithmParameters::EllipticCurve(_)
                    | AlgorithmParameters::OctetKeyPair(_)
            )
        })
        .collect();
    ensure!(!keys.is_empty(), "the JWKS holds no public signing key");
    Ok(keys)
}

/// The `jwks_uri` of `issuer`'s metadata: RFC 8414 first (the well-known segment between the
/// host and the issuer's path), then OpenID Connect discovery (appended to the issuer). The
/// document must name the same issuer (RFC 8414 §3.3).
fn discover(issuer: &str) -> Result<String> {
    let trimmed = issuer.trim_end_matches('/');
    let after_scheme = trimmed.find("://").map_or(0, |i| i + 3);
    let (origin, path) = match trimmed[after_scheme..].find('/') {
        Some(i) => trimmed.split_at(after_scheme + i),
        None => (trimmed, ""),
    };
    let candidates = [
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{trimmed}/.well-known/openid-configuration"),
    ];
    let mut last = None;
    for url in candidates {
        match get(&url).and_then(|text| serde_json::from_str::<Value>(&text).context("metadata is not JSON")) {
            Ok(doc) => {
                ensure!(
                    doc.get("issuer").and_then(Value::as_str) == Some(issuer),
                    "the metadata at {url} names another issuer"
                );
                let Some(jwks) = doc.get("jwks_uri").and_then(Value::as_str) else {
                    bail!("the metadata at {url} has no jwks_uri")
                };
                check_url("jwks_uri", jwks)?;
                return Ok(jwks.to_string());
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| anyhow::anyhow!("no metadata")).context(format!("discovering the keys of {issuer}")))
}

fn get(url: &str) -> Result<String> {
    check_url("key URL", url)?;
    let response = ureq::get(url)
        .timeout(Duration::from_secs(5))
        .set("Accept", "application/json")
        .call()
        .with_context(|| format!("fetching {url}"))?;
    let mut text = String::new();
    use std::io::Read;
    response
        .into_reader()
        .take(MAX_DOCUMENT_BYTES)
        .read_to_string(&mut text)
        .with_context(|| format!("reading {url}"))?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ED: &str = r#"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#;

    #[test]
    fn jwks_keeps_public_signing_keys_only() {
        let doc = format!(
            r#"{{"keys":[{{"kty":"oct","k":"c2VjcmV0"}}, {{"kty":"weird"}}, {e1}, {e2}]}}"#,
            e1 = ED.replace('}', r#","kid":"a","alg":"EdDSA"}"#),
            e2 = ED.replace('}', r#","kid":"b","use":"enc"}"#)
        );
        let keys = parse_jwks(&doc).unwrap();
        assert_eq!(keys.len(), 2);
        assert!(pick(&keys, Some("a"), Algorithm::EdDSA).is_some());
        // Encryption keys and keys of another algorithm are never picked.
        assert!(pick(&keys, Some("b"), Algorithm::EdDSA).is_none());
        assert!(pick(&keys, Some("a"), Algorithm::RS256).is_none());
        // Without a kid, only an unambiguous key.
        assert!(pick(&keys, None, Algorithm::EdDSA).is_some());
        assert!(parse_jwks(r#"{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}"#).is_err());
        assert!(parse_jwks("[]").is_err());
    }
}
