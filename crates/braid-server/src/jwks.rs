//! An issuer's signing keys (JWKS): where they come from — a local file, a URL, or the URL the
//! issuer's metadata names — and a cache that keeps them current.
//!
//! Fetching is what a forged token could make expensive, so it is guarded:
//! - **single-flight**: at most one fetch per issuer is in flight; a request that needs keys
//!   while one is under way waits for it (at most [`FETCH_WAIT`]) rather than starting another;
//! - **stale while revalidating**: keys past the refresh interval keep verifying tokens while
//!   one request fetches new ones;
//! - **negative cache**: after a failed fetch, and after any fetch when a token names a key id
//!   the cache does not hold (a rotation, or a made-up kid), no fetch happens for
//!   [`MIN_REFETCH`];
//! - **paid for**: a fetch is made only when the caller's `may_fetch` agrees (the server
//!   charges the client's bucket of requests without a valid token there), so one address
//!   cannot make the server fetch faster than that bucket refills.
//!
//! A failed fetch keeps the keys fetched before (logged as a warning): an identity provider's
//! outage does not lock everyone out, and a key the issuer removed stops working at the next
//! successful fetch. With no keys ever loaded, tokens of that issuer get 503.

use std::path::PathBuf;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::Algorithm;
use serde_json::Value;

use super::oauth::check_url;

/// The shortest time between a fetch and the next one, after a failed fetch or for a key id
/// the keys did not hold.
pub const MIN_REFETCH: Duration = Duration::from_secs(10);

/// The longest a request waits for another request's fetch.
pub const FETCH_WAIT: Duration = Duration::from_secs(6);

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
    /// The issuer has no such key (even after a fetch, or none may be made now).
    Missing,
    /// No keys could be loaded at all.
    Unavailable,
    /// A fetch was needed and `may_fetch` said no.
    Throttled,
}

/// The cached keys of one issuer.
pub struct KeyCache {
    source: KeySource,
    refresh: Duration,
    state: Mutex<State>,
    /// Signalled when a fetch ends.
    fetched: Condvar,
}

#[derive(Default)]
struct State {
    keys: Option<Vec<Jwk>>,
    loaded: Option<Instant>,
    /// When the last fetch started.
    attempted: Option<Instant>,
    /// Whether the last fetch failed.
    failed: bool,
    /// When the last fetch for a key id the loaded keys did not hold started.
    early: Option<Instant>,
    /// Whether a fetch is under way.
    fetching: bool,
    /// Fetches made (for the tests).
    fetches: u64,
}

impl State {
    /// Whether a fetch may start at `now` for a lookup that found `found` (a key or none).
    fn may_start(&self, now: Instant, refresh: Duration, found: bool) -> bool {
        let long_ago = |t: Option<Instant>| t.is_none_or(|t| now.duration_since(t) >= MIN_REFETCH);
        if self.fetching || (self.failed && !long_ago(self.attempted)) {
            return false;
        }
        let stale = self.loaded.is_none_or(|t| now.duration_since(t) >= refresh);
        // Current keys are fetched again only for a key id they lack, once per MIN_REFETCH.
        stale || (!found && long_ago(self.early))
    }
}

impl KeyCache {
    /// An empty cache over `source`; keys count as current for `refresh`.
    pub fn new(source: KeySource, refresh: Duration) -> KeyCache {
        KeyCache { source, refresh, state: Mutex::new(State::default()), fetched: Condvar::new() }
    }

    /// Where the keys come from.
    pub fn source(&self) -> &KeySource {
        &self.source
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Loads the keys now.
    ///
    /// # Errors
    /// When the source cannot be read or holds no usable key.
    pub fn load_now(&self) -> Result<usize> {
        let keys = load(&self.source)?;
        let n = keys.len();
        let mut state = self.lock();
        let now = Instant::now();
        state.keys = Some(keys);
        state.loaded = Some(now);
        state.attempted = Some(now);
        Ok(n)
    }

    /// How many fetches were started.
    #[cfg(test)]
    pub fn fetches(&self) -> u64 {
        self.lock().fetches
    }

    /// The key for a token with key id `kid` signed with `alg`: from the cache when it holds
    /// it, fetching first when the module's rules allow and `may_fetch` agrees.
    pub fn find(&self, kid: Option<&str>, alg: Algorithm, may_fetch: &dyn Fn() -> bool) -> Lookup {
        let mut state = self.lock();
        let mut fetched_here = false;
        let waited_since = Instant::now();
        loop {
            let now = Instant::now();
            let found = state.keys.as_deref().and_then(|keys| pick(keys, kid, alg));
            if !fetched_here && state.may_start(now, self.refresh, found.is_some()) {
                if !may_fetch() {
                    // A current-enough key still verifies; only a fetch is refused.
                    return found.map_or(Lookup::Throttled, |k| Lookup::Found(Box::new(k)));
                }
                state.fetching = true;
                state.fetches += 1;
                state.attempted = Some(now);
                if found.is_none() && state.keys.is_some() {
                    state.early = Some(now);
                }
                drop(state);
                let loaded = load(&self.source);
                state = self.lock();
                state.fetching = false;
                match loaded {
                    Ok(keys) => {
                        tracing::info!(target: "braid::serve::oauth", keys = keys.len(), "issuer keys loaded");
                        // Still no such key: a made-up kid, which buys no fetch for a while.
                        if pick(&keys, kid, alg).is_none() {
                            state.early = Some(now);
                        }
                        state.keys = Some(keys);
                        state.loaded = Some(Instant::now());
                        state.failed = false;
                    }
                    Err(e) => {
                        state.failed = true;
                        tracing::warn!(target: "braid::serve::oauth", error = %format!("{e:#}"), "issuer keys could not be loaded; keeping the keys loaded before, if any");
                    }
                }
                self.fetched.notify_all();
                fetched_here = true;
                continue;
            }
            if let Some(k) = found {
                return Lookup::Found(Box::new(k));
            }
            let left = FETCH_WAIT.saturating_sub(waited_since.elapsed());
            if state.fetching && !left.is_zero() {
                // Another request's fetch may bring the key: wait for it, then look again.
                state = self.fetched.wait_timeout(state, left).unwrap_or_else(|e| e.into_inner()).0;
                fetched_here = true;
                continue;
            }
            return if state.keys.is_some() { Lookup::Missing } else { Lookup::Unavailable };
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

    /// A JWKS server on loopback answering after `delay` (500 when `failing`); its fetch count.
    fn slow_jwks(
        doc: String,
        delay: Duration,
        failing: bool,
    ) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::io::{BufRead, BufReader, Write};
        use std::sync::atomic::{AtomicUsize, Ordering};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
        let count = std::sync::Arc::new(AtomicUsize::new(0));
        let seen = std::sync::Arc::clone(&count);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let (doc, seen) = (doc.clone(), std::sync::Arc::clone(&seen));
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut line = String::new();
                    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                        line.clear();
                    }
                    seen.fetch_add(1, Ordering::SeqCst);
                    std::thread::sleep(delay);
                    let status = if failing { "500 Internal Server Error" } else { "200 OK" };
                    let _ = write!(
                        stream,
                        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{doc}",
                        doc.len()
                    );
                });
            }
        });
        (url, count)
    }

    #[test]
    fn concurrent_lookups_make_one_fetch_and_failures_are_remembered() {
        use std::sync::atomic::Ordering;
        let doc = format!(r#"{{"keys":[{}]}}"#, ED.replace('}', r#","kid":"a"}"#));
        let (url, count) = slow_jwks(doc, Duration::from_millis(500), false);
        let cache = KeyCache::new(KeySource::Url(url), Duration::from_secs(300));
        let results: Vec<bool> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..8)
                .map(|i| {
                    let cache = &cache;
                    // Half look for the real key, half for made-up ones.
                    let kid = if i % 2 == 0 { "a".to_string() } else { format!("made-up-{i}") };
                    scope.spawn(move || matches!(cache.find(Some(&kid), Algorithm::EdDSA, &|| true), Lookup::Found(_)))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(results, [true, false, true, false, true, false, true, false]);
        assert_eq!(count.load(Ordering::SeqCst), 1);
        // Made-up kids after that cost at most one early fetch, then nothing for a while.
        assert!(matches!(cache.find(Some("another"), Algorithm::EdDSA, &|| true), Lookup::Missing));
        let fetched = cache.fetches();
        assert!(fetched <= 2, "{fetched}");
        for i in 0..5 {
            assert!(matches!(cache.find(Some(&format!("more-{i}")), Algorithm::EdDSA, &|| true), Lookup::Missing));
        }
        assert_eq!(cache.fetches(), fetched);

        let (url, count) = slow_jwks("{}".into(), Duration::ZERO, true);
        let down = KeyCache::new(KeySource::Url(url), Duration::from_secs(300));
        for _ in 0..5 {
            assert!(matches!(down.find(Some("a"), Algorithm::EdDSA, &|| true), Lookup::Unavailable));
        }
        assert_eq!(count.load(Ordering::SeqCst), 1);
        // A fetch the caller may not pay for is not made.
        let (url, count) = slow_jwks("{}".into(), Duration::ZERO, false);
        let unpaid = KeyCache::new(KeySource::Url(url), Duration::from_secs(300));
        assert!(matches!(unpaid.find(Some("a"), Algorithm::EdDSA, &|| false), Lookup::Throttled));
        assert_eq!(count.load(Ordering::SeqCst), 0);
    }
}
