//! The server's configuration file (TOML): where to listen, the limits, the allowed browser
//! origins, and the token map — SHA-256 hashes of bearer tokens, each with the principal it
//! stands for. Tokens themselves are never stored; `braid token new` makes one.
//!
//! ```toml
//! bind = "127.0.0.1:7700"            # the default: loopback only
//! allowed_origins = []               # browser origins allowed to call (none by default)
//! reload_seconds = 5.0               # how often to look for a new commit (0: never)
//!
//! [limits]
//! max_body_bytes = 65536             # larger request bodies get 413
//! timeout_ms = 10000                 # slower requests get 503
//! max_k = 100                        # the most hits one search may ask for
//! max_concurrent = 0                 # searches running at once (0: one per CPU core)
//! rate_per_second = 20.0             # per-token token bucket: refill rate …
//! burst = 40                         # … and size; beyond it, 429 with Retry-After
//! unauthenticated_per_second = 10.0  # one bucket shared by requests without a valid token …
//! unauthenticated_burst = 20         # … beyond it they get 429 instead of 401
//!
//! [[token]]
//! name = "acme-support"              # the label logs show (never the token)
//! sha256 = "<64 hex digits>"         # `braid token hash` < token-file
//! tenant = "acme"                    # adds `tenant:acme`
//! principal = ["group:support"]      # further ACL tokens
//! rate_per_second = 50.0             # optional per-token override (and `burst`)
//! ```

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, ensure, Context, Result};
use serde::Deserialize;

/// The whole configuration file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The address to listen on. By default, `127.0.0.1:7700` (loopback only).
    #[serde(default = "default_bind")]
    pub bind: SocketAddr,
    /// Browser origins (`scheme://host[:port]`) allowed to call; a request carrying any other
    /// `Origin` header gets 403 (DNS-rebinding defence). By default, none.
    #[serde(default)]
    pub allowed_origins: Vec<String>,
    /// How often, in seconds, the server looks for a commit written by another process (a
    /// re-index) and swaps it in; 0 turns it off. By default, 5.
    #[serde(default = "default_reload_seconds")]
    pub reload_seconds: f64,
    /// Limits.
    #[serde(default)]
    pub limits: Limits,
    /// The token map.
    #[serde(default, rename = "token")]
    pub tokens: Vec<TokenEntry>,
    /// OAuth 2.1 access tokens from identity providers (see `oauth.rs`). By default, none.
    #[serde(default)]
    pub oauth: Option<super::oauth::OAuthConfig>,
}

/// Request limits.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Largest request body in bytes. By default, 64 KiB.
    pub max_body_bytes: usize,
    /// Time budget of one request in milliseconds. By default, 10 000.
    pub timeout_ms: u64,
    /// The largest `k` a search may ask for. By default, 100.
    pub max_k: usize,
    /// Searches running at once; others wait (within their time budget). By default, 0: one per
    /// CPU core.
    pub max_concurrent: usize,
    /// Requests per second each token may make on average. By default, 20.
    pub rate_per_second: f64,
    /// Requests a token may make in a burst. By default, 40.
    pub burst: u32,
    /// Requests per second without a valid token, all callers together (token guessing and
    /// floods pay here; requests with a valid token never do). By default, 10.
    pub unauthenticated_per_second: f64,
    /// Requests without a valid token in a burst; beyond it they get 429. By default, 20.
    pub unauthenticated_burst: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: 64 * 1024,
            timeout_ms: 10_000,
            max_k: 100,
            max_concurrent: 0,
            rate_per_second: 20.0,
            burst: 40,
            unauthenticated_per_second: 10.0,
            unauthenticated_burst: 20,
        }
    }
}

impl Limits {
    /// The time budget of one request.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    /// Searches running at once.
    pub fn concurrency(&self) -> usize {
        match self.max_concurrent {
            0 => std::thread::available_parallelism().map_or(2, |n| n.get()),
            n => n,
        }
    }
}

/// One bearer token: its hash and the principal it stands for.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenEntry {
    /// The label logs and `/v1/stats` show.
    pub name: String,
    /// Lowercase hex SHA-256 of the token.
    pub sha256: String,
    /// The tenant (`acme` becomes the ACL token `tenant:acme`).
    #[serde(default)]
    pub tenant: Option<String>,
    /// Further ACL tokens (`group:support`, `user:42`, …); `public` is implied.
    #[serde(default)]
    pub principal: Vec<String>,
    /// Overrides `limits.rate_per_second` for this token.
    #[serde(default)]
    pub rate_per_second: Option<f64>,
    /// Overrides `limits.burst` for this token.
    #[serde(default)]
    pub burst: Option<u32>,
}

impl TokenEntry {
    /// The ACL tokens of the principal this token stands for.
    pub fn acl_tokens(&self) -> Vec<String> {
        let mut tokens: Vec<String> = self.tenant.iter().map(|t| format!("tenant:{}", t.trim())).collect();
        tokens.extend(self.principal.iter().cloned());
        tokens
    }

    /// The rate limit of this token: (requests per second, burst).
    pub fn rate(&self, limits: &Limits) -> (f64, u32) {
        (self.rate_per_second.unwrap_or(limits.rate_per_second), self.burst.unwrap_or(limits.burst))
    }
}

fn default_reload_seconds() -> f64 {
    DEFAULT_RELOAD_SECONDS
}

/// How often a server looks for a new commit, unless configured otherwise.
pub const DEFAULT_RELOAD_SECONDS: f64 = 5.0;

fn default_bind() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 7700))
}

impl Config {
    /// The rate limits of the OAuth issuers, in order: (requests per second, burst).
    pub fn issuer_rates(&self) -> Vec<(f64, u32)> {
        let l = &self.limits;
        let issuers = self.oauth.iter().flat_map(|o| o.issuers.iter());
        issuers.map(|i| (i.rate_per_second.unwrap_or(l.rate_per_second), i.burst.unwrap_or(l.burst))).collect()
    }

    /// How often to look for a new commit (`None`: never).
    pub fn reload_every(&self) -> Option<Duration> {
        (self.reload_seconds > 0.0).then(|| Duration::from_secs_f64(self.reload_seconds))
    }

    /// Reads and validates a configuration file.
    ///
    /// # Errors
    /// When the file cannot be read, is not valid TOML of this shape, or fails [`Config::validate`].
    pub fn load(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let config: Config = toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        config.validate().with_context(|| format!("checking {}", path.display()))?;
        Ok(config)
    }

    /// Checks what the server relies on: at least one token; unique names and hashes; hashes of
    /// 64 hex digits; ACL tokens that are not Braid's internal ones; positive limits.
    ///
    /// # Errors
    /// Naming the first problem found.
    pub fn validate(&self) -> Result<()> {
        let l = &self.limits;
        ensure!(l.max_body_bytes >= 1024, "limits.max_body_bytes must be at least 1024");
        ensure!(l.timeout_ms > 0, "limits.timeout_ms must be positive");
        ensure!(
            l.unauthenticated_per_second.is_finite()
                && l.unauthenticated_per_second > 0.0
                && l.unauthenticated_burst >= 1,
            "limits.unauthenticated_per_second must be positive and limits.unauthenticated_burst at least 1"
        );
        ensure!(
            self.reload_seconds.is_finite() && self.reload_seconds >= 0.0,
            "reload_seconds must be a number of seconds, 0 or more"
        );
        ensure!((1..=braid::MAX_K).contains(&l.max_k), "limits.max_k must be between 1 and {}", braid::MAX_K);
        ensure!(
            !self.tokens.is_empty() || self.oauth.is_some(),
            "no [[token]] entries and no [oauth] section: every request needs a token (see `braid token new`)"
        );
        if let Some(oauth) = &self.oauth {
            oauth.validate()?;
        }
        let (mut names, mut hashes) = (HashSet::new(), HashSet::new());
        for t in &self.tokens {
            ensure!(!t.name.trim().is_empty(), "a [[token]] has an empty name");
            ensure!(names.insert(t.name.as_str()), "token name {:?} appears twice", t.name);
            let hash = t.sha256.to_ascii_lowercase();
            if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                bail!("token {:?}: sha256 must be 64 hex digits (`braid token hash`)", t.name);
            }
            ensure!(hashes.insert(hash), "token {:?}: the same hash appears twice", t.name);
            for acl in t.acl_tokens() {
                ensure!(
                    !acl.trim().starts_with("__braid:"),
                    "token {:?}: {acl:?} is reserved for Braid's own index terms",
                    t.name
                );
            }
            if let Some(tenant) = &t.tenant {
                ensure!(!tenant.trim().is_empty(), "token {:?}: empty tenant", t.name);
            }
            let (rate, burst) = t.rate(l);
            ensure!(rate.is_finite() && rate > 0.0, "token {:?}: rate_per_second must be positive", t.name);
            ensure!(burst >= 1, "token {:?}: burst must be at least 1", t.name);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

    fn parse(text: &str) -> Result<Config> {
        let config: Config = toml::from_str(text)?;
        config.validate()?;
        Ok(config)
    }

    #[test]
    fn defaults_and_overrides() {
        let c = parse(&format!(
            "[[token]]\nname = \"a\"\nsha256 = \"{HASH}\"\ntenant = \"acme\"\nprincipal = [\"group:x\"]\nburst = 3\n"
        ))
        .unwrap();
        assert_eq!(c.bind, default_bind());
        assert_eq!(c.limits.max_body_bytes, 64 * 1024);
        assert_eq!(c.tokens[0].acl_tokens(), ["tenant:acme", "group:x"]);
        // The tenant becomes a tenant token as Braid's access rules read them.
        let principal = braid::Principal::from_verified_tokens(c.tokens[0].acl_tokens());
        assert_eq!(principal.tenants().collect::<Vec<_>>(), ["tenant:acme"]);
        assert_eq!(c.tokens[0].rate(&c.limits), (20.0, 3));
        assert_eq!(c.reload_every(), Some(Duration::from_secs(5)));
        let off = parse(&format!("reload_seconds = 0\n[[token]]\nname = \"a\"\nsha256 = \"{HASH}\"\n")).unwrap();
        assert_eq!(off.reload_every(), None);
    }

    #[test]
    fn rejects_bad_configs() {
        let token = |extra: &str| format!("[[token]]\nname = \"a\"\nsha256 = \"{HASH}\"\n{extra}");
        for (text, needle) in [
            (String::new(), "no [[token]]"),
            (token("token = \"plaintext\""), "unknown field"),
            ("[[token]]\nname = \"a\"\nsha256 = \"abc\"\n".to_string(), "64 hex"),
            (format!("{}{}", token(""), token("")), "appears twice"),
            (token("principal = [\"__braid:no-acl\"]"), "reserved"),
            (token("rate_per_second = 0.0"), "positive"),
            (format!("[limits]\nmax_k = 0\n{}", token("")), "max_k"),
            (format!("bind = \"nowhere\"\n{}", token("")), "invalid socket address"),
            (format!("reload_seconds = -1.0\n{}", token("")), "reload_seconds"),
            (format!("[limits]\nunauthenticated_burst = 0\n{}", token("")), "unauthenticated"),
        ] {
            let err = format!("{:#}", parse(&text).unwrap_err());
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }
}
