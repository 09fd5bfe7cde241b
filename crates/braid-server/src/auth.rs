//! Bearer tokens → principals. Two kinds of token are accepted: static tokens, of which the
//! server keeps only SHA-256 hashes (a presented token is hashed and compared with every
//! configured hash in constant time), and, with an `[oauth]` section, JWT access tokens of the
//! configured issuers (see [`super::oauth`]). The principal of a request comes from here and
//! nowhere else — never from a request body or a tool argument.
//!
//! Each caller comes with its [`Quota`] (rate limit and counters): a static token's own, or,
//! for an access token, the one of its principal — issuer, subject and tenant — from a bounded
//! map ([`Quotas`]), so that one user of an issuer never spends another's requests.

use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{ensure, Result};
use braid::Principal;
use sha2::{Digest, Sha256};
use subtle::{ConditionallySelectable, ConstantTimeEq};

use super::config::Config;
use super::limit::{Quota, Quotas};
use super::oauth::{self, Rejection, ResourceServer};

/// The most OAuth principals whose quotas are kept at once (least recently used go first).
pub const MAX_TRACKED_PRINCIPALS: usize = 65_536;

/// Tokens shorter than this are refused by `braid token hash`: they could be guessed.
pub const MIN_TOKEN_CHARS: usize = 16;

/// Who a verified token stands for.
#[derive(Debug)]
pub struct Caller {
    /// The configured label: what logs and `/v1/stats` show, never the token.
    pub name: String,
    /// The principal searches run as.
    pub principal: Principal,
    /// Whether this caller sees stage timings (an operator token or scope).
    pub operator: bool,
    /// Whether this caller may write records in its tenant's namespace (a token with
    /// `write = true`, or the OAuth write scope).
    pub write: bool,
    /// This caller's rate limit and counters: its own, shared with no other principal.
    pub quota: Arc<Quota>,
}

/// The configured tokens.
pub struct TokenMap {
    entries: Vec<([u8; 32], Arc<Caller>)>,
}

impl TokenMap {
    /// The token map of a validated configuration, each token with its own quota.
    pub fn new(config: &Config) -> Result<TokenMap> {
        let mut entries = Vec::with_capacity(config.tokens.len());
        let now = Instant::now();
        for t in &config.tokens {
            let hash = decode_hex(&t.sha256);
            ensure!(hash.is_some(), "token {:?}: sha256 must be 64 hex digits", t.name);
            let (rate, burst) = t.rate(&config.limits);
            let caller = Caller {
                name: t.name.clone(),
                principal: Principal::from_verified_tokens(t.acl_tokens().into_iter().chain([owner_of_token(&t.name)])),
                operator: t.operator,
                write: t.write,
                quota: Arc::new(Quota::new(rate, burst, now)),
            };
            entries.push((hash.unwrap_or_default(), Arc::new(caller)));
        }
        Ok(TokenMap { entries })
    }

    /// The caller `token` stands for, if any. Every configured hash is compared, in constant
    /// time, whatever matches.
    pub fn verify(&self, token: &str) -> Option<Arc<Caller>> {
        let digest = sha256(token);
        // Index + 1 of the match; 0 for none. Selected without branching on secret data.
        let mut found = 0u32;
        for (i, (hash, _)) in self.entries.iter().enumerate() {
            found = u32::conditional_select(&found, &(i as u32 + 1), hash.ct_eq(&digest));
        }
        let index = (found as usize).checked_sub(1)?;
        self.entries.get(index).map(|(_, caller)| Arc::clone(caller))
    }
}

/// The owner token of a static token: `owner:token:<name>` (names are unique in a
/// configuration, and no configured token may start with `owner:`), so each static token has
/// a memory scope of its own.
pub fn owner_of_token(name: &str) -> String {
    format!("{}token:{}", braid::OWNER_PREFIX, name.trim())
}

/// Why a request gets no caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No bearer token (401).
    Missing,
    /// A token that is not valid (401 `invalid_token`); the description is safe to show.
    Invalid(String),
    /// A valid access token without a required scope (403 `insufficient_scope`).
    InsufficientScope,
    /// The token's issuer keys cannot be loaded now (503).
    Unavailable,
    /// Checking the token needs a key fetch the client may not pay for now (429).
    Throttled,
}

/// Static tokens and, when configured, the OAuth resource server.
pub struct Authenticator {
    tokens: TokenMap,
    oauth: Option<OAuth>,
}

struct OAuth {
    server: ResourceServer,
    /// Per issuer: its name (for logs and `/v1/stats`) and its principals' rate limit.
    issuers: Vec<(String, (f64, u32))>,
    /// The quotas of the principals seen, all issuers together.
    quotas: Quotas<String>,
}

impl Authenticator {
    /// The authenticator of a validated configuration.
    ///
    /// # Errors
    /// When the token map or the resource server cannot be built.
    pub fn new(config: &Config) -> Result<Authenticator> {
        let tokens = TokenMap::new(config)?;
        let l = &config.limits;
        let oauth = match &config.oauth {
            None => None,
            Some(section) => Some(OAuth {
                server: ResourceServer::new(section)?,
                issuers: section
                    .issuers
                    .iter()
                    .map(|i| {
                        (i.name.clone(), (i.rate_per_second.unwrap_or(l.rate_per_second), i.burst.unwrap_or(l.burst)))
                    })
                    .collect(),
                quotas: Quotas::new(MAX_TRACKED_PRINCIPALS),
            }),
        };
        Ok(Authenticator { tokens, oauth })
    }

    /// The `[oauth]` section, when there is one.
    pub fn oauth(&self) -> Option<&oauth::OAuthConfig> {
        self.oauth.as_ref().map(|o| o.server.config())
    }

    /// Whether `authorization` carries a bearer token at all.
    pub fn presents_token(authorization: Option<&str>) -> bool {
        authorization.and_then(bearer).is_some()
    }

    /// The caller an `Authorization` header value stands for. A static token is looked up
    /// first; anything else, with `[oauth]` configured, is verified as a JWT access token,
    /// asking `may_fetch` before any key fetch (see [`ResourceServer::verify`]). This may read
    /// an issuer's keys (file or network): call it off the async runtime.
    ///
    /// # Errors
    /// A [`Refusal`] saying why there is no caller.
    pub fn verify(&self, authorization: Option<&str>, may_fetch: &dyn Fn() -> bool) -> Result<Arc<Caller>, Refusal> {
        let Some(token) = authorization.and_then(bearer) else { return Err(Refusal::Missing) };
        if let Some(caller) = self.tokens.verify(token) {
            return Ok(caller);
        }
        let Some(o) = &self.oauth else {
            return Err(Refusal::Invalid("the bearer token is not valid".into()));
        };
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        match o.server.verify(token, now, may_fetch) {
            Ok(verified) => {
                let (issuer, rate) = &o.issuers[verified.issuer];
                let name = match &verified.subject {
                    Some(sub) => format!("{issuer}:{sub}"),
                    None => issuer.clone(),
                };
                let quota = o.quotas.get(&verified.quota_key(), *rate, Instant::now());
                Ok(Arc::new(Caller {
                    name,
                    principal: verified.principal,
                    operator: verified.operator,
                    write: verified.write,
                    quota,
                }))
            }
            Err(Rejection::InvalidToken(why)) => Err(Refusal::Invalid(why)),
            Err(Rejection::InsufficientScope) => Err(Refusal::InsufficientScope),
            Err(Rejection::KeysUnavailable) => Err(Refusal::Unavailable),
            Err(Rejection::Throttled) => Err(Refusal::Throttled),
        }
    }

    /// The `WWW-Authenticate` value for a refusal: an RFC 6750 challenge that, with `[oauth]`,
    /// points at the protected-resource metadata (RFC 9728 §5.1).
    pub fn challenge(&self, refusal: &Refusal) -> String {
        let Some(section) = self.oauth() else { return "Bearer realm=\"braid\"".to_string() };
        match refusal {
            Refusal::Missing | Refusal::Unavailable | Refusal::Throttled => oauth::challenge(section, None),
            Refusal::Invalid(why) => oauth::challenge(section, Some(("invalid_token", why))),
            Refusal::InsufficientScope => oauth::challenge(
                section,
                Some(("insufficient_scope", "the access token lacks a scope this server requires")),
            ),
        }
    }
}

/// The token of an `Authorization: Bearer <token>` header value.
pub fn bearer(header: &str) -> Option<&str> {
    let (scheme, token) = header.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

fn sha256(token: &str) -> [u8; 32] {
    let digest = Sha256::digest(token.as_bytes());
    let mut out = [0u8; 32];
    out.copy_from_slice(&digest);
    out
}

/// The lowercase hex SHA-256 of a token, as the configuration stores it.
pub fn hash_token(token: &str) -> String {
    sha256(token).iter().map(|b| format!("{b:02x}")).collect()
}

fn decode_hex(hex: &str) -> Option<[u8; 32]> {
    let hex = hex.as_bytes();
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in hex.chunks(2).enumerate() {
        let digit = |c: u8| (c as char).to_digit(16);
        out[i] = (digit(pair[0])? * 16 + digit(pair[1])?) as u8;
    }
    Some(out)
}

/// A fresh random token: `braid_` and 64 hex digits (256 bits from the operating system).
///
/// # Errors
/// When the operating system's random source fails.
pub fn new_token() -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness from the operating system: {e}"))?;
    Ok(format!("braid_{}", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(tokens: &[(&str, &str, &str)]) -> Config {
        let mut text = String::new();
        for (name, token, tenant) in tokens {
            text.push_str(&format!(
                "[[token]]\nname = \"{name}\"\nsha256 = \"{}\"\ntenant = \"{tenant}\"\n",
                hash_token(token)
            ));
        }
        toml::from_str(&text).unwrap()
    }

    #[test]
    fn sha256_test_vector() {
        // FIPS 180-2, appendix B.1.
        assert_eq!(hash_token("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(decode_hex(&hash_token("abc")), Some(sha256("abc")));
        assert_eq!(decode_hex("zz"), None);
    }

    #[test]
    fn tokens_map_to_their_own_principal_only() {
        let map = TokenMap::new(&config(&[("a", "token-of-acme-0001", "acme"), ("g", "token-of-globex-01", "globex")]))
            .unwrap();
        let acme = map.verify("token-of-acme-0001").unwrap();
        assert_eq!(acme.name.as_str(), "a");
        assert!(acme.principal.has("tenant:acme") && !acme.principal.has("tenant:globex"));
        assert!(!acme.operator);
        // Each token holds its own owner token, and no other.
        assert_eq!(acme.principal.owners().collect::<Vec<_>>(), ["owner:token:a"]);
        let globex = map.verify("token-of-globex-01").unwrap();
        assert_eq!(globex.name.as_str(), "g");
        // Each token has its own quota.
        assert!(!Arc::ptr_eq(&acme.quota, &globex.quota));
        assert!(Arc::ptr_eq(&acme.quota, &map.verify("token-of-acme-0001").unwrap().quota));
        for wrong in
            ["", "token-of-acme-000", "token-of-acme-00011", "TOKEN-OF-ACME-0001", &hash_token("token-of-acme-0001")]
        {
            assert!(map.verify(wrong).is_none(), "{wrong:?}");
        }
    }

    #[test]
    fn bearer_header() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer   abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearer "), None);
        assert_eq!(bearer("abc"), None);
    }

    #[test]
    fn new_tokens_are_random_and_long() {
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        assert_ne!(a, b);
        assert_eq!(a.len(), 6 + 64);
        assert!(a.len() >= MIN_TOKEN_CHARS);
    }
}
