//! `braid serve` as an OAuth 2.1 resource server: JWT access tokens from configured issuers,
//! verified with `jsonwebtoken` against each issuer's JWKS (see [`super::jwks`]), bound to this
//! server's resource identifier (RFC 8707 audience), within `exp`/`nbf`, carrying the required
//! scopes; and the protected-resource metadata (RFC 9728) that tells clients where to get one.
//!
//! The principal of a request is built here from **verified** claims only — the tenant claim,
//! the groups claim, the scopes and the subject, as the operator's `[oauth]` section maps them
//! to ACL tokens — never from anything a request body or a tool argument says.
//!
//! Issuers do not share a namespace. The user and group tokens a claim yields carry the
//! issuer's `namespace` (`user:corp/alice`, `group:corp/support`; the namespace is the issuer's
//! `name` unless set, and holds no `/`), so one issuer's "alice" is never another's. Tenants
//! are one namespace on purpose (a record is ACL'd `tenant:acme` however its readers log in), so
//! the configuration is checked instead: a tenant in an issuer's `principal` *pins* it — a
//! token claiming another tenant is refused (401), never given it — and two issuers whose
//! tenants could be the same, where one takes them from a claim, are refused at load.
//!
//! ```toml
//! [oauth]
//! resource = "https://search.example.com/mcp"  # this server's canonical URI: the audience
//! required_scopes = ["braid.search"]           # every token must carry these (else 403)
//! leeway_seconds = 30                          # clock skew allowed on exp / nbf
//! jwks_refresh_seconds = 300                   # how long fetched keys are trusted as current
//!
//! [[oauth.issuer]]
//! name = "corp-idp"                            # the label logs and /v1/stats show
//! issuer = "https://login.example.com"         # the exact `iss`
//! # Keys: one of jwks_file / jwks_uri; with neither, the issuer's metadata names its jwks_uri.
//! jwks_uri = "https://login.example.com/.well-known/jwks.json"
//! algorithms = ["RS256", "ES256"]              # asymmetric only; by default RS256, ES256, EdDSA
//! tenant_claim = "tenant"                      # its string value v becomes `tenant:v`
//! groups_claim = "groups"                      # each string g becomes `group:g`
//! user_claim = "sub"                           # its value u becomes `user:corp-idp/u` (optional)
//! namespace = "corp-idp"                       # of user and group tokens; by default, `name`
//! principal = []                               # ACL tokens every token of this issuer gets;
//!                                              # a `tenant:…` here pins the tenant claim to it
//! scope_tokens = { "kb.internal" = ["group:internal"] }  # scope → further ACL tokens
//! rate_per_second = 20.0                       # per principal (issuer, subject, tenant): the
//! burst = 40                                   # `[limits]` values by default
//! ```
//!
//! `[oauth] operator_scope = "braid.operator"` (optional) names a scope whose tokens see the
//! stage timings of their searches, as a static token with `operator = true` does;
//! `write_scope = "braid:write"` (optional) one whose tokens may write records in their
//! tenant's namespace, as `write = true` does (`write.rs`).

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use anyhow::{bail, ensure, Context, Result};
use braid::Principal;
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::{json, Value};

use super::config::in_range;
use super::jwks::{KeyCache, KeySource, Lookup};

/// The `[oauth]` section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthConfig {
    /// This server's canonical URI (RFC 8707), e.g. `https://search.example.com/mcp`: tokens
    /// must name it in `aud`, and the protected-resource metadata is published for it.
    pub resource: String,
    /// Scopes every token must carry; a token without one gets 403 `insufficient_scope`.
    /// By default, none.
    #[serde(default)]
    pub required_scopes: Vec<String>,
    /// Seconds of clock skew allowed on `exp` and `nbf`. By default, 30.
    #[serde(default = "default_leeway")]
    pub leeway_seconds: u64,
    /// How long fetched keys count as current before they are fetched again; a token with an
    /// unknown `kid` triggers an earlier fetch (at most one per ten seconds). By default, 300.
    #[serde(default = "default_refresh")]
    pub jwks_refresh_seconds: u64,
    /// A scope whose tokens see the stage timings of their searches (`stats.micros`); by
    /// default, none: OAuth callers never see them.
    #[serde(default)]
    pub operator_scope: Option<String>,
    /// A scope whose tokens may write records in their tenant's namespace (`braid:write`, say;
    /// `write.rs`); by default, none: OAuth callers only read.
    #[serde(default)]
    pub write_scope: Option<String>,
    /// The trusted issuers.
    #[serde(rename = "issuer")]
    pub issuers: Vec<IssuerConfig>,
}

fn default_leeway() -> u64 {
    30
}

fn default_refresh() -> u64 {
    300
}

/// One trusted authorization server and how its claims map to ACL tokens.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssuerConfig {
    /// The label logs and `/v1/stats` show.
    pub name: String,
    /// The issuer identifier, compared exactly with the token's `iss`.
    pub issuer: String,
    /// A local JWKS file (re-read when a key is missing or the refresh interval has passed).
    #[serde(default)]
    pub jwks_file: Option<PathBuf>,
    /// The JWKS URL. With neither this nor `jwks_file`, the issuer's metadata (RFC 8414, then
    /// OpenID Connect discovery) names it.
    #[serde(default)]
    pub jwks_uri: Option<String>,
    /// Signature algorithms accepted. By default, RS256, ES256 and EdDSA; HMAC is refused.
    #[serde(default = "default_algorithms")]
    pub algorithms: Vec<String>,
    /// The claim holding the caller's tenant (a string `v` becomes `tenant:v`).
    #[serde(default)]
    pub tenant_claim: Option<String>,
    /// The claim holding the caller's groups (each string `g` becomes `group:g`).
    #[serde(default)]
    pub groups_claim: Option<String>,
    /// The claim identifying the user (a string `u` becomes `user:<namespace>/u`).
    #[serde(default)]
    pub user_claim: Option<String>,
    /// The namespace of the user and group tokens this issuer's claims yield
    /// (`user:<namespace>/u`, `group:<namespace>/g`): letters, digits, `.`, `_`, `-`, unique
    /// among issuers. By default, `name`.
    #[serde(default)]
    pub namespace: Option<String>,
    /// ACL tokens every token of this issuer gets. A tenant token here pins the issuer: a
    /// token whose tenant claim names another tenant is refused.
    #[serde(default)]
    pub principal: Vec<String>,
    /// Scope → further ACL tokens, for a token that carries the scope.
    #[serde(default)]
    pub scope_tokens: BTreeMap<String, Vec<String>>,
    /// Requests per second each principal of this issuer (its subject in its tenant) may make
    /// (`limits.rate_per_second` by default). Never shared between principals.
    #[serde(default)]
    pub rate_per_second: Option<f64>,
    /// Each principal's burst (`limits.burst` by default).
    #[serde(default)]
    pub burst: Option<u32>,
}

fn default_algorithms() -> Vec<String> {
    ["RS256", "ES256", "EdDSA"].map(String::from).to_vec()
}

/// The tenants an issuer's tokens can hold.
#[derive(Debug, PartialEq)]
enum Tenants {
    /// Any tenant a claim names (a tenant claim, no pin).
    Any,
    /// These (the pinned ones and those its scopes add).
    Only(HashSet<String>),
}

impl IssuerConfig {
    /// The namespace of the user and group tokens its claims yield.
    pub fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or(&self.name).trim()
    }

    /// Whether its claims yield user or group tokens (which carry its namespace).
    fn derives_names(&self) -> bool {
        self.user_claim.is_some() || self.groups_claim.is_some()
    }

    /// The tenant tokens (`tenant:…`) of its `principal`: its pin, when not empty.
    fn pinned(&self) -> HashSet<&str> {
        self.principal.iter().map(|t| t.trim()).filter(|t| t.starts_with("tenant:")).collect()
    }

    fn tenants(&self) -> Tenants {
        let pinned = self.pinned();
        if self.tenant_claim.is_some() && pinned.is_empty() {
            return Tenants::Any;
        }
        let scoped = self.scope_tokens.values().flatten().map(|t| t.trim()).filter(|t| t.starts_with("tenant:"));
        Tenants::Only(pinned.into_iter().chain(scoped).map(str::to_string).collect())
    }

    fn parsed_algorithms(&self) -> Result<Vec<Algorithm>> {
        let mut out = Vec::new();
        for name in &self.algorithms {
            let alg = Algorithm::from_str(name)
                .map_err(|_| anyhow::anyhow!("issuer {:?}: unknown algorithm {name:?}", self.name))?;
            ensure!(
                alg.family() != AlgorithmFamily::Hmac,
                "issuer {:?}: {name} is a shared-secret algorithm; only public-key signatures are accepted",
                self.name
            );
            out.push(alg);
        }
        ensure!(!out.is_empty(), "issuer {:?}: no algorithms", self.name);
        Ok(out)
    }
}

impl OAuthConfig {
    /// Checks the section: an absolute `https` resource (plain `http` only on loopback), at
    /// least one issuer, unique names, issuers and namespaces, one key source each, asymmetric
    /// algorithms, no reserved ACL tokens, numbers in range; scopes that add no tenant outside
    /// an issuer's pin; and no two issuers that could give the same derived token — the same
    /// tenant where one of them takes it from a claim, or a fixed token in another issuer's
    /// namespace.
    ///
    /// # Errors
    /// Naming the first problem found.
    pub fn validate(&self) -> Result<()> {
        in_range("oauth.leeway_seconds", self.leeway_seconds as f64)?;
        in_range("oauth.jwks_refresh_seconds", self.jwks_refresh_seconds as f64)?;
        if let Some(scope) = &self.operator_scope {
            ensure!(
                !scope.trim().is_empty() && !scope.contains(char::is_whitespace),
                "oauth.operator_scope must be one scope name"
            );
            ensure!(
                !self.required_scopes.contains(scope),
                "oauth.operator_scope {scope:?} is also required of every token: it would make every caller an operator"
            );
        }
        if let Some(scope) = &self.write_scope {
            ensure!(
                !scope.trim().is_empty() && !scope.contains(char::is_whitespace),
                "oauth.write_scope must be one scope name"
            );
            ensure!(
                !self.required_scopes.contains(scope),
                "oauth.write_scope {scope:?} is also required of every token: it would make every caller a writer"
            );
        }
        check_url("oauth.resource", &self.resource)?;
        ensure!(!self.resource.contains('#'), "oauth.resource must not have a fragment (RFC 8707)");
        ensure!(!self.issuers.is_empty(), "[oauth] needs at least one [[oauth.issuer]]");
        let (mut names, mut issuers, mut namespaces) = (HashSet::new(), HashSet::new(), HashSet::new());
        for i in &self.issuers {
            ensure!(!i.name.trim().is_empty(), "an [[oauth.issuer]] has an empty name");
            ensure!(names.insert(i.name.as_str()), "issuer name {:?} appears twice", i.name);
            if i.derives_names() {
                let ns = i.namespace();
                let ns_ok = !ns.is_empty() && ns.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
                ensure!(
                    ns_ok,
                    "issuer {:?}: namespace {ns:?} must be letters, digits, '.', '_' or '-' (set `namespace` when the name has others)",
                    i.name
                );
                ensure!(namespaces.insert(ns), "issuer {:?}: namespace {ns:?} is another issuer's too", i.name);
            }
            ensure!(issuers.insert(i.issuer.as_str()), "issuer {:?} appears twice", i.issuer);
            check_url(&format!("issuer {:?}", i.name), &i.issuer)?;
            if let Some(uri) = &i.jwks_uri {
                check_url(&format!("issuer {:?}: jwks_uri", i.name), uri)?;
            }
            ensure!(
                i.jwks_file.is_none() || i.jwks_uri.is_none(),
                "issuer {:?}: give jwks_file or jwks_uri, not both",
                i.name
            );
            i.parsed_algorithms()?;
            let fixed = i.principal.iter().chain(i.scope_tokens.values().flatten());
            for acl in fixed {
                ensure!(!reserved(acl), "issuer {:?}: {acl:?} is reserved for Braid's own index terms", i.name);
                ensure!(
                    !acl.trim().starts_with(braid::OWNER_PREFIX),
                    "issuer {:?}: {acl:?} is an owner token, which the server grants from the user claim only",
                    i.name
                );
            }
            if let Some(rate) = i.rate_per_second {
                in_range("oauth.issuer.rate_per_second", rate).with_context(|| format!("issuer {:?}", i.name))?;
            }
            if let Some(burst) = i.burst {
                in_range("oauth.issuer.burst", f64::from(burst)).with_context(|| format!("issuer {:?}", i.name))?;
            }
            let pinned = i.pinned();
            if !pinned.is_empty() {
                for (scope, acl) in &i.scope_tokens {
                    if let Some(t) =
                        acl.iter().map(|t| t.trim()).find(|t| t.starts_with("tenant:") && !pinned.contains(t))
                    {
                        bail!("issuer {:?}: scope {scope:?} adds {t:?}, outside the tenant its principal pins", i.name);
                    }
                }
            }
        }
        self.check_disjoint()
    }

    /// No two issuers can give the same derived token (see [`OAuthConfig::validate`]).
    fn check_disjoint(&self) -> Result<()> {
        for (n, a) in self.issuers.iter().enumerate() {
            for b in &self.issuers[n + 1..] {
                let overlap = match (a.tenants(), b.tenants()) {
                    (Tenants::Any, Tenants::Any) => Some("any tenant".to_string()),
                    (Tenants::Any, Tenants::Only(t)) | (Tenants::Only(t), Tenants::Any) => {
                        let mut t: Vec<String> = t.into_iter().collect();
                        t.sort();
                        t.first().cloned()
                    }
                    (Tenants::Only(_), Tenants::Only(_)) => None,
                };
                if let Some(t) = overlap {
                    bail!(
                        "issuers {:?} and {:?} could both give {t}: pin the tenant of each issuer that has a \
                         tenant_claim with a `tenant:…` in its principal, to tenants no other issuer gives",
                        a.name,
                        b.name
                    );
                }
            }
            // A fixed token inside another issuer's namespace would let this issuer's callers
            // pass as that issuer's users or groups.
            for b in &self.issuers {
                if std::ptr::eq(a, b) || !b.derives_names() {
                    continue;
                }
                let theirs = [format!("user:{}/", b.namespace()), format!("group:{}/", b.namespace())];
                let fixed = a.principal.iter().chain(a.scope_tokens.values().flatten());
                if let Some(t) = fixed.map(|t| t.trim()).find(|t| theirs.iter().any(|p| t.starts_with(p.as_str()))) {
                    bail!("issuer {:?}: {t:?} is in the namespace of issuer {:?}", a.name, b.name);
                }
            }
        }
        Ok(())
    }

    /// Where the protected-resource metadata of [`OAuthConfig::resource`] lives (RFC 9728 §3.1:
    /// the well-known segment goes between the host and the resource's path).
    pub fn metadata_url(&self) -> String {
        let (origin, path) = split_origin(&self.resource);
        format!("{origin}{}{}", METADATA_PATH, path.trim_end_matches('/'))
    }

    /// The paths this server answers the metadata on: the path-suffixed one, and the bare
    /// well-known path for clients that look there.
    pub fn metadata_paths(&self) -> Vec<String> {
        let (_, path) = split_origin(&self.resource);
        let suffixed = format!("{METADATA_PATH}{}", path.trim_end_matches('/'));
        if suffixed == METADATA_PATH {
            vec![suffixed]
        } else {
            vec![suffixed, METADATA_PATH.to_string()]
        }
    }

    /// The protected-resource metadata document (RFC 9728 §2).
    pub fn metadata(&self) -> Value {
        let mut scopes: Vec<&str> = self.required_scopes.iter().map(String::as_str).collect();
        for i in &self.issuers {
            scopes.extend(i.scope_tokens.keys().map(String::as_str));
        }
        scopes.sort_unstable();
        scopes.dedup();
        json!({
            "resource": self.resource,
            "authorization_servers": self.issuers.iter().map(|i| i.issuer.as_str()).collect::<Vec<_>>(),
            "scopes_supported": scopes,
            "bearer_methods_supported": ["header"],
            "resource_name": "Braid search"
        })
    }
}

/// The well-known path of protected-resource metadata (RFC 9728 §3).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// `scheme://authority` and the rest (path and query) of an absolute URL.
fn split_origin(url: &str) -> (&str, &str) {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(i) => url.split_at(after_scheme + i),
        None => (url, ""),
    }
}

/// `https://…`, or `http://` to a loopback host (tests, a local identity provider).
pub(super) fn check_url(what: &str, url: &str) -> Result<()> {
    let Some(rest) = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://")) else {
        bail!("{what}: {url:?} is not an absolute http(s) URL");
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    ensure!(!host.is_empty(), "{what}: {url:?} has no host");
    if url.starts_with("http://") {
        let name = host
            .rsplit_once(':')
            .map_or(host, |(h, port)| if port.bytes().all(|b| b.is_ascii_digit()) { h } else { host });
        ensure!(
            matches!(name, "localhost" | "127.0.0.1" | "[::1]"),
            "{what}: {url:?} must use https (plain http only to a loopback host)"
        );
    }
    Ok(())
}

fn reserved(acl: &str) -> bool {
    acl.trim().starts_with("__braid:")
}

/// Why a bearer token that looks like a JWT was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// 401 `invalid_token`: malformed, unknown issuer or key, bad signature, wrong audience,
    /// expired, not yet valid, or an algorithm not accepted. The description is safe to show.
    InvalidToken(String),
    /// 403 `insufficient_scope`: a valid token without every required scope.
    InsufficientScope,
    /// 503: the issuer's keys could not be loaded, so the token cannot be checked now.
    KeysUnavailable,
    /// 429: checking the token needs a key fetch its client may not pay for now (see
    /// [`ResourceServer::verify`]).
    Throttled,
}

/// A verified access token.
#[derive(Debug)]
pub struct Verified {
    /// Index of the issuer in the configuration.
    pub issuer: usize,
    /// The token's subject (for logs), if any.
    pub subject: Option<String>,
    /// The principal built from the verified claims.
    pub principal: Principal,
    /// Whether the token carries the operator scope.
    pub operator: bool,
    /// Whether the token carries the write scope.
    pub write: bool,
}

impl Verified {
    /// What the token's rate limit and counters are kept under: its issuer, its subject and
    /// its principal's tokens (tenant included) — one per principal, never one per issuer.
    pub fn quota_key(&self) -> String {
        let tokens: Vec<&str> = self.principal.tokens().collect();
        serde_json::to_string(&json!([self.issuer, self.subject, tokens])).unwrap_or_default()
    }
}

/// The configured issuers with their key caches.
pub struct ResourceServer {
    config: OAuthConfig,
    issuers: Vec<Issuer>,
}

struct Issuer {
    algorithms: Vec<Algorithm>,
    keys: KeyCache,
}

/// The claims read before verification: to pick the issuer whose keys check the token, and to
/// refuse, before any key is looked up, a token that is expired or for another audience
/// whatever its signature (such a token is never accepted on these unverified values).
#[derive(Deserialize)]
struct Peek {
    iss: Option<String>,
    exp: Option<Value>,
    aud: Option<Value>,
}

impl ResourceServer {
    /// The resource server of a validated `[oauth]` section. Key files are read now (a bad one
    /// stops the server from starting); remote keys are fetched on first use.
    ///
    /// # Errors
    /// When an algorithm is not accepted or a key file cannot be read.
    pub fn new(config: &OAuthConfig) -> Result<ResourceServer> {
        let refresh = Duration::from_secs(config.jwks_refresh_seconds.max(1));
        let mut issuers = Vec::new();
        for i in &config.issuers {
            let source = match (&i.jwks_file, &i.jwks_uri) {
                (Some(path), _) => KeySource::File(path.clone()),
                (None, Some(uri)) => KeySource::Url(uri.clone()),
                (None, None) => KeySource::Discover(i.issuer.clone()),
            };
            let keys = KeyCache::new(source, refresh);
            if matches!(keys.source(), KeySource::File(_)) {
                keys.load_now().with_context(|| format!("issuer {:?}: loading its keys", i.name))?;
            }
            issuers.push(Issuer { algorithms: i.parsed_algorithms()?, keys });
        }
        Ok(ResourceServer { config: config.clone(), issuers })
    }

    /// The configuration.
    pub fn config(&self) -> &OAuthConfig {
        &self.config
    }

    /// Verifies `token` at `now` (seconds since the epoch) and builds its principal. Keys are
    /// taken from the issuer's cache; when checking the token needs a fetch, `may_fetch` is
    /// asked first (it charges the client's bucket of requests without a valid token) and a
    /// `false` is [`Rejection::Throttled`]. Fetches are single-flight and negatively cached
    /// (see [`super::jwks`]).
    ///
    /// # Errors
    /// A [`Rejection`] saying why the token is not accepted.
    pub fn verify(&self, token: &str, now: u64, may_fetch: &dyn Fn() -> bool) -> Result<Verified, Rejection> {
        let invalid = |why: &str| Rejection::InvalidToken(why.to_string());
        // `alg: none` (and any name outside the JOSE list) fails here: there is no such
        // `Algorithm`.
        let header = jsonwebtoken::decode_header(token).map_err(|_| invalid("not a signed JWT"))?;
        let peek: Peek =
            jsonwebtoken::dangerous::insecure_decode_claims(token).map_err(|_| invalid("not a signed JWT"))?;
        let iss = peek.iss.ok_or_else(|| invalid("the token has no issuer"))?;
        let index = self
            .config
            .issuers
            .iter()
            .position(|i| i.issuer == iss)
            .ok_or_else(|| invalid("the token's issuer is not trusted here"))?;
        let (config, issuer) = (&self.config.issuers[index], &self.issuers[index]);
        if !issuer.algorithms.contains(&header.alg) {
            return Err(invalid("the token's signature algorithm is not accepted"));
        }
        let expired = match peek.exp.as_ref().map(|v| v.as_f64()) {
            None => return Err(invalid("the token lacks exp, iss or aud")),
            Some(None) => return Err(invalid("the token's exp is not a time")),
            Some(Some(exp)) => exp + self.config.leeway_seconds as f64 <= now as f64,
        };
        if expired {
            return Err(invalid("the token has expired"));
        }
        let for_us = match &peek.aud {
            Some(Value::String(a)) => *a == self.config.resource,
            Some(Value::Array(items)) => items.iter().any(|a| a.as_str() == Some(self.config.resource.as_str())),
            _ => false,
        };
        if !for_us {
            return Err(invalid("the token was not issued for this server (audience)"));
        }
        let jwk = match issuer.keys.find(header.kid.as_deref(), header.alg, may_fetch) {
            Lookup::Found(jwk) => jwk,
            Lookup::Missing => return Err(invalid("the token was not signed by a key of its issuer")),
            Lookup::Unavailable => return Err(Rejection::KeysUnavailable),
            Lookup::Throttled => return Err(Rejection::Throttled),
        };
        let key = DecodingKey::from_jwk(&jwk).map_err(|_| invalid("the issuer's key is unusable"))?;
        if key.family() != header.alg.family() {
            return Err(invalid("the token's algorithm does not fit its key"));
        }
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&config.issuer]);
        validation.set_audience(&[&self.config.resource]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = self.config.leeway_seconds;
        let claims = decode_at(token, &key, &validation, now)?;
        let scopes = scopes(&claims);
        if !self.config.required_scopes.iter().all(|s| scopes.contains(s.as_str())) {
            return Err(Rejection::InsufficientScope);
        }
        let principal = principal(config, &claims, &scopes)?;
        let subject = claims.get("sub").and_then(Value::as_str).map(str::to_string);
        let operator = self.config.operator_scope.as_ref().is_some_and(|s| scopes.contains(s));
        let write = self.config.write_scope.as_ref().is_some_and(|s| scopes.contains(s));
        Ok(Verified { issuer: index, subject, principal, operator, write })
    }
}

/// `jsonwebtoken::decode` (signature, algorithm, `iss`, `aud`, required claims), then `exp`
/// (required) and `nbf` (when present) against `now`, with the configured leeway.
fn decode_at(token: &str, key: &DecodingKey, validation: &Validation, now: u64) -> Result<Value, Rejection> {
    use jsonwebtoken::errors::ErrorKind;
    let mut v = validation.clone();
    // The signature, issuer and audience are checked by the library; time is checked below.
    v.validate_exp = false;
    v.validate_nbf = false;
    let data = jsonwebtoken::decode::<Value>(token, key, &v).map_err(|e| {
        Rejection::InvalidToken(
            match e.kind() {
                ErrorKind::InvalidSignature => "the token's signature does not verify",
                ErrorKind::InvalidIssuer => "the token's issuer is not trusted here",
                ErrorKind::InvalidAudience => "the token was not issued for this server (audience)",
                ErrorKind::MissingRequiredClaim(_) => "the token lacks exp, iss or aud",
                ErrorKind::InvalidAlgorithm => "the token's algorithm does not fit its key",
                _ => "the token is not valid",
            }
            .to_string(),
        )
    })?;
    let claims = data.claims;
    let time = |name: &str| -> Result<Option<u64>, Rejection> {
        match claims.get(name) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .or_else(|| v.as_f64().filter(|f| f.is_finite() && *f >= 0.0).map(|f| f as u64))
                .map(Some)
                .ok_or_else(|| Rejection::InvalidToken(format!("the token's {name} is not a time"))),
        }
    };
    let leeway = validation.leeway;
    match time("exp")? {
        Some(exp) if exp.saturating_add(leeway) > now => {}
        _ => return Err(Rejection::InvalidToken("the token has expired".into())),
    }
    if let Some(nbf) = time("nbf")? {
        if nbf > now.saturating_add(leeway) {
            return Err(Rejection::InvalidToken("the token is not valid yet".into()));
        }
    }
    Ok(claims)
}

/// The token's scopes: `scope` (a space-separated string, RFC 9068) or `scp` (a list or a
/// string, as some providers write it).
fn scopes(claims: &Value) -> HashSet<String> {
    let mut out = HashSet::new();
    for name in ["scope", "scp"] {
        match claims.get(name) {
            Some(Value::String(s)) => out.extend(s.split_whitespace().map(str::to_string)),
            Some(Value::Array(items)) => out.extend(items.iter().filter_map(Value::as_str).map(str::to_string)),
            _ => {}
        }
    }
    out
}

/// The ACL tokens the verified claims map to, as the issuer's configuration says: user and
/// group tokens in the issuer's namespace; a claimed tenant only within the issuer's pin.
fn principal(config: &IssuerConfig, claims: &Value, scopes: &HashSet<String>) -> Result<Principal, Rejection> {
    let mut tokens: Vec<String> = config.principal.clone();
    let ns = config.namespace();
    let string_claim = |name: &Option<String>| -> Result<Option<String>, Rejection> {
        let Some(name) = name else { return Ok(None) };
        match claims.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_string())),
            Some(_) => Err(Rejection::InvalidToken(format!("the token's {name} claim is not a string"))),
        }
    };
    if let Some(tenant) = string_claim(&config.tenant_claim)? {
        if !braid::is_tenant_name(&tenant) {
            return Err(Rejection::InvalidToken("the token's tenant claim is not a tenant's name".into()));
        }
        let tenant = format!("tenant:{tenant}");
        let pinned = config.pinned();
        if !pinned.is_empty() && !pinned.contains(tenant.as_str()) {
            return Err(Rejection::InvalidToken("the token's tenant is not the one its issuer is pinned to".into()));
        }
        tokens.push(tenant);
    }
    if let Some(user) = string_claim(&config.user_claim)? {
        tokens.push(format!("user:{ns}/{user}"));
        // The user's memory scope: conjunctive, in the issuer's namespace, from the verified
        // claim alone (configured tokens may not name an owner).
        tokens.push(format!("{}user:{ns}/{user}", braid::OWNER_PREFIX));
    }
    if let Some(name) = &config.groups_claim {
        match claims.get(name) {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for item in items {
                    match item.as_str().map(str::trim) {
                        Some(g) if !g.is_empty() => tokens.push(format!("group:{ns}/{g}")),
                        _ => {
                            return Err(Rejection::InvalidToken(format!("the token's {name} claim holds a non-string")))
                        }
                    }
                }
            }
            Some(Value::String(g)) if !g.trim().is_empty() => tokens.push(format!("group:{ns}/{}", g.trim())),
            Some(_) => return Err(Rejection::InvalidToken(format!("the token's {name} claim is not a list"))),
        }
    }
    for (scope, acl) in &config.scope_tokens {
        if scopes.contains(scope) {
            tokens.extend(acl.iter().cloned());
        }
    }
    let owners = tokens.iter().filter(|t| t.trim().starts_with(braid::OWNER_PREFIX)).count();
    if tokens.iter().any(|t| reserved(t)) || owners > 1 {
        return Err(Rejection::InvalidToken("the token's claims name a reserved ACL token".into()));
    }
    // Verified claims, mapped by the operator's configuration: a verified source.
    Ok(Principal::from_verified_tokens(tokens))
}

/// The `WWW-Authenticate` value of a 401 or 403 (RFC 6750 §3, RFC 9728 §5.1).
pub fn challenge(config: &OAuthConfig, error: Option<(&str, &str)>) -> String {
    let mut parts = Vec::new();
    if let Some((code, description)) = error {
        parts.push(format!("error=\"{code}\""));
        parts.push(format!("error_description=\"{}\"", description.replace(['"', '\\'], "'")));
    }
    if !config.required_scopes.is_empty() {
        parts.push(format!("scope=\"{}\"", config.required_scopes.join(" ")));
    }
    parts.push(format!("resource_metadata=\"{}\"", config.metadata_url()));
    format!("Bearer {}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(resource: &str) -> OAuthConfig {
        toml::from_str(&format!(
            "resource = \"{resource}\"\nrequired_scopes = [\"braid.search\"]\n\
             [[issuer]]\nname = \"idp\"\nissuer = \"https://login.example.com\"\njwks_uri = \"https://login.example.com/jwks\"\n"
        ))
        .unwrap()
    }

    #[test]
    fn metadata_location_follows_rfc_9728() {
        let c = config("https://search.example.com/mcp");
        c.validate().unwrap();
        assert_eq!(c.metadata_url(), "https://search.example.com/.well-known/oauth-protected-resource/mcp");
        assert_eq!(c.metadata_paths(), ["/.well-known/oauth-protected-resource/mcp", METADATA_PATH]);
        let root = config("https://search.example.com");
        assert_eq!(root.metadata_url(), "https://search.example.com/.well-known/oauth-protected-resource");
        assert_eq!(root.metadata_paths(), [METADATA_PATH]);
        let m = c.metadata();
        assert_eq!(m["resource"], "https://search.example.com/mcp");
        assert_eq!(m["authorization_servers"], json!(["https://login.example.com"]));
        assert_eq!(
            challenge(&c, Some(("invalid_token", "expired"))),
            "Bearer error=\"invalid_token\", error_description=\"expired\", scope=\"braid.search\", \
             resource_metadata=\"https://search.example.com/.well-known/oauth-protected-resource/mcp\""
        );
    }

    #[test]
    fn rejects_bad_sections() {
        for (resource, needle) in [
            ("http://search.example.com/mcp", "https"),
            ("search.example.com", "absolute"),
            ("https://search.example.com/mcp#x", "fragment"),
        ] {
            let err = format!("{:#}", config(resource).validate().unwrap_err());
            assert!(err.contains(needle), "{resource}: {err}");
        }
        assert!(config("http://127.0.0.1:8080/mcp").validate().is_ok());
        let mut hmac = config("https://a.example/mcp");
        hmac.issuers[0].algorithms = vec!["HS256".into()];
        assert!(format!("{:#}", hmac.validate().unwrap_err()).contains("shared-secret"));
        let mut reserved = config("https://a.example/mcp");
        reserved.issuers[0].principal = vec!["__braid:all".into()];
        assert!(format!("{:#}", reserved.validate().unwrap_err()).contains("reserved"));
        let mut owner = config("https://a.example/mcp");
        owner.issuers[0].principal = vec!["owner:user:idp/root".into()];
        assert!(format!("{:#}", owner.validate().unwrap_err()).contains("owner token"));
    }

    #[test]
    fn claims_map_to_acl_tokens() {
        let mut issuer = config("https://a.example/mcp").issuers.remove(0);
        issuer.tenant_claim = Some("tid".into());
        issuer.groups_claim = Some("groups".into());
        issuer.user_claim = Some("sub".into());
        issuer.scope_tokens.insert("kb.internal".into(), vec!["group:internal".into()]);
        let claims =
            json!({"tid": "acme", "groups": ["support", "billing"], "sub": "u1", "scope": "braid.search kb.internal"});
        let p = principal(&issuer, &claims, &scopes(&claims)).unwrap();
        for t in ["tenant:acme", "group:idp/support", "group:idp/billing", "user:idp/u1", "group:internal", "public"] {
            assert!(p.has(t), "{t}");
        }
        // Claim values land in the issuer's namespace only.
        assert!(!p.has("user:u1") && !p.has("group:support"));
        assert_eq!(p.owners().collect::<Vec<_>>(), ["owner:user:idp/u1"]);
        assert!(!p.has("tenant:globex"));
        let no_scope = json!({"tid": "acme"});
        assert!(!principal(&issuer, &no_scope, &scopes(&no_scope)).unwrap().has("group:internal"));
        for bad in [json!({"tid": 3}), json!({"groups": [1]}), json!({"groups": "  "}), json!({"tid": ["a"]})] {
            assert!(principal(&issuer, &bad, &scopes(&bad)).is_err(), "{bad}");
        }
        // A claim value is always prefixed, so it can never name one of Braid's own terms.
        let sneaky = json!({"groups": ["__braid:x"]});
        let p = principal(&issuer, &sneaky, &scopes(&sneaky)).unwrap();
        assert!(p.has("group:idp/__braid:x") && !p.has("__braid:x"));
        let scp = json!({"scp": ["a", "b"]});
        assert_eq!(scopes(&scp), HashSet::from(["a".to_string(), "b".to_string()]));
    }

    fn two_issuers(a: &str, b: &str) -> OAuthConfig {
        toml::from_str(&format!(
            "resource = \"https://search.example.com/mcp\"\n\
             [[issuer]]\nname = \"a\"\nissuer = \"https://a.example\"\n{a}\n\
             [[issuer]]\nname = \"b\"\nissuer = \"https://b.example\"\n{b}\n"
        ))
        .unwrap()
    }

    #[test]
    fn a_tenant_pin_refuses_another_claimed_tenant() {
        let mut issuer = config("https://a.example/mcp").issuers.remove(0);
        issuer.tenant_claim = Some("tid".into());
        issuer.principal = vec!["tenant:acme".into()];
        let own = json!({"tid": "acme"});
        let p = principal(&issuer, &own, &scopes(&own)).unwrap();
        assert!(p.has("tenant:acme"));
        // A token claiming globex is refused, never given globex (nor acme).
        let other = json!({"tid": "globex"});
        assert!(matches!(principal(&issuer, &other, &scopes(&other)), Err(Rejection::InvalidToken(_))));
        // Without a tenant claim, the pin is the tenant.
        let none = json!({});
        assert_eq!(principal(&issuer, &none, &scopes(&none)).unwrap().tenants().collect::<Vec<_>>(), ["tenant:acme"]);
        // Unpinned, a claim that is no tenant's name is refused: `acme/x` would write short
        // ids into acme's namespace.
        issuer.principal.clear();
        for bad in ["acme/x", "acme x", "a,b"] {
            let claims = json!({ "tid": bad });
            assert!(matches!(principal(&issuer, &claims, &scopes(&claims)), Err(Rejection::InvalidToken(_))), "{bad}");
        }
    }

    #[test]
    fn configurations_where_issuers_could_give_the_same_token_are_refused() {
        for (a, b, needle) in [
            // Both take the tenant from a claim: b's "acme" would be a's.
            ("tenant_claim = \"tid\"", "tenant_claim = \"tid\"", "could both give"),
            // One takes it from a claim, the other pins acme.
            ("tenant_claim = \"tid\"", "principal = [\"tenant:acme\"]", "tenant:acme"),
            // A scope adds a tenant outside the pin.
            (
                "tenant_claim = \"tid\"\nprincipal = [\"tenant:acme\"]\nscope_tokens = { \"x\" = [\"tenant:globex\"] }",
                "",
                "outside the tenant",
            ),
            // Same namespace.
            (
                "namespace = \"corp\"\nuser_claim = \"sub\"",
                "namespace = \"corp\"\ngroups_claim = \"g\"",
                "namespace \"corp\"",
            ),
            // A name that cannot be a namespace.
            ("namespace = \"a/b\"\nuser_claim = \"sub\"", "", "letters, digits"),
            // A fixed token inside another issuer's namespace.
            ("user_claim = \"sub\"", "principal = [\"user:a/alice\"]", "namespace of issuer"),
            ("leeway_seconds_is_top_level = 1", "", "unknown field"),
        ] {
            let text = format!(
                "resource = \"https://search.example.com/mcp\"\n\
                 [[issuer]]\nname = \"a\"\nissuer = \"https://a.example\"\n{a}\n\
                 [[issuer]]\nname = \"b\"\nissuer = \"https://b.example\"\n{b}\n"
            );
            let err = match toml::from_str::<OAuthConfig>(&text) {
                Ok(c) => format!("{:#}", c.validate().unwrap_err()),
                Err(e) => e.to_string(),
            };
            assert!(err.contains(needle), "{a} / {b}: {err}");
        }
        // Pinned to different tenants, each with its tenant claim and users: accepted.
        let ok = two_issuers(
            "tenant_claim = \"tid\"\nuser_claim = \"sub\"\nprincipal = [\"tenant:acme\"]",
            "tenant_claim = \"tid\"\nuser_claim = \"sub\"\nprincipal = [\"tenant:globex\"]",
        );
        ok.validate().unwrap();
        // And the same subject of each is a different user token.
        let claims = json!({"sub": "alice"});
        let (pa, pb) = (
            principal(&ok.issuers[0], &claims, &scopes(&claims)).unwrap(),
            principal(&ok.issuers[1], &claims, &scopes(&claims)).unwrap(),
        );
        assert!(pa.has("user:a/alice") && pb.has("user:b/alice") && !pb.has("user:a/alice"));
        // One issuer with a free tenant claim beside one without tenants at all: accepted.
        two_issuers("tenant_claim = \"tid\"", "groups_claim = \"groups\"").validate().unwrap();
        // Two pins of the same tenant without claims (two logins of one company): accepted.
        two_issuers("principal = [\"tenant:acme\"]", "principal = [\"tenant:acme\"]").validate().unwrap();
    }

    #[test]
    fn oauth_numbers_are_range_checked() {
        let mut c = config("https://a.example/mcp");
        c.jwks_refresh_seconds = 0;
        assert!(format!("{:#}", c.validate().unwrap_err()).contains("oauth.jwks_refresh_seconds"));
        let mut c = config("https://a.example/mcp");
        c.issuers[0].burst = Some(0);
        assert!(format!("{:#}", c.validate().unwrap_err()).contains("oauth.issuer.burst"));
        let mut c = config("https://a.example/mcp");
        c.operator_scope = Some("braid.search".into());
        assert!(format!("{:#}", c.validate().unwrap_err()).contains("every caller an operator"));
    }
}
