//! The server's configuration file (TOML): where to listen, the limits, the allowed browser
//! origins, and the token map — SHA-256 hashes of bearer tokens, each with the principal it
//! stands for. Tokens themselves are never stored; `braid token new` makes one.
//!
//! ```toml
//! bind = "127.0.0.1:7700"            # the default: loopback only
//! allowed_origins = ["https://app.example"]  # browser origins allowed to call (absent: this
//!                                    # machine's pages when bound to loopback, else none)
//! reload_seconds = 5.0               # how often to look for a new commit (0: never; else 0.1–86400)
//! ef_search = 1600                   # the vector graph's search width (1–100000; research/scale-log.md)
//! commit_delay_ms = 0                # how long a record write waits for others to share its commit (0–1000)
//! commit_interval_ms = 500           # under a backlog of writes, the least time between commits (0–10000)
//! commit_idle = false                # true: commits run in Linux's idle scheduling class, searches first
//!
//! [limits]
//! max_body_bytes = 65536             # larger request bodies get 413
//! timeout_ms = 10000                 # slower requests get 503 (and their search is cancelled)
//! header_read_timeout_ms = 5000      # a connection must send its request head within this
//! max_connections = 256              # open connections at once; more are closed unanswered
//! max_connections_per_address = 32   # of which one client address may hold (below the above)
//! max_k = 100                        # the most hits one search may ask for
//! max_concurrent = 0                 # searches running at once (0: one per CPU core)
//! rate_per_second = 20.0             # per-principal token bucket: refill rate …
//! burst = 40                         # … and size; beyond it, 429 with Retry-After
//! unauthenticated_per_second = 10.0  # per client address, requests with an invalid token …
//! unauthenticated_burst = 20         # … beyond it they get 429 instead of 401
//!
//! [[token]]
//! name = "acme-support"              # the label logs show (never the token)
//! sha256 = "<64 hex digits>"         # `braid token hash` < token-file
//! tenant = "acme"                    # adds `tenant:acme`
//! principal = ["group:support"]      # further ACL tokens
//! rate_per_second = 50.0             # optional per-token override (and `burst`)
//! operator = false                   # true: search answers carry stage timings (`stats.micros`)
//! write = false                      # true: may write records in its tenant's namespace (needs `tenant`)
//! ```

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, ensure, Context, Result};
use braid::Principal;
use serde::Deserialize;

/// The whole configuration file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The address to listen on. By default, `127.0.0.1:7700` (loopback only).
    #[serde(default = "default_bind")]
    pub bind: SocketAddr,
    /// Browser origins (`scheme://host[:port]`) allowed to call; a request carrying any other
    /// `Origin` header gets 403 (DNS-rebinding defence). Absent: pages on this machine
    /// (`localhost`, `127.0.0.0/8`, `[::1]`, any port) when the server is bound to a loopback
    /// address, none otherwise (`origin.rs`).
    #[serde(default)]
    pub allowed_origins: Option<Vec<String>>,
    /// How often, in seconds, the server looks for a commit written by another process (a
    /// re-index) and swaps it in; 0 turns it off. By default, 5.
    #[serde(default = "default_reload_seconds")]
    pub reload_seconds: f64,
    /// The width the vector leg's HNSW graph is searched with (`IndexBuilder::ef_search`):
    /// wider finds more of the exact top k, slower. By default, the library's (1,600).
    #[serde(default)]
    pub ef_search: Option<usize>,
    /// How long, in milliseconds, the record write that leads a group commit waits for more
    /// writes to share its commit ([`braid::GroupCommitOptions::commit_delay`]). Writes that
    /// arrive while a commit runs share the next one whatever this is; a delay trades each
    /// write's latency for fewer commits. By default, 0.
    #[serde(default)]
    pub commit_delay_ms: u64,
    /// The least time, in milliseconds, from one group commit's start to the next while record
    /// writes queue up behind commits ([`braid::GroupCommitOptions::commit_interval`]): fewer,
    /// larger commits under a stream of writes, none delayed when writes come one at a time.
    /// By default, the library's ([`braid::DEFAULT_COMMIT_INTERVAL`]).
    #[serde(default)]
    pub commit_interval_ms: Option<u64>,
    /// Whether commits run in Linux's idle scheduling class
    /// ([`braid::GroupCommitOptions::writer_idle`]): a search that wakes takes a core from a
    /// commit at once, and a commit gets little of cores that searches keep busy. By default,
    /// false (commits at nice +10).
    #[serde(default)]
    pub commit_idle: bool,
    /// Limits.
    #[serde(default)]
    pub limits: Limits,
    /// The token map.
    #[serde(default, rename = "token")]
    pub tokens: Vec<TokenEntry>,
    /// OAuth 2.1 access tokens from identity providers (see `oauth.rs`). By default, none.
    #[serde(default)]
    pub oauth: Option<super::oauth::OAuthConfig>,
    /// A JSON file of tool definitions (`name`, `description`, `input_schema`) that the MCP tool
    /// `search_tools` searches (a path relative to the configuration file's folder). By
    /// default, none, and the tool is not offered.
    #[serde(default)]
    pub tool_catalogue: Option<std::path::PathBuf>,
}

/// Request limits.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Largest request body in bytes. By default, 64 KiB.
    pub max_body_bytes: usize,
    /// Time budget of one request in milliseconds; past it the answer is 503 and the search
    /// is cancelled at its next check, freeing its slot. By default, 10 000.
    pub timeout_ms: u64,
    /// How long a connection may take to send a request head (request line and headers), from
    /// its start or the end of the previous answer; slower connections are closed. By default,
    /// 5 000.
    pub header_read_timeout_ms: u64,
    /// Connections open at once, before any authentication; a connection past the cap is
    /// closed at once. By default, 256.
    pub max_connections: usize,
    /// Connections one client address (an IPv6 /64) may hold open at once; must be below
    /// `max_connections`, so that no one client can take every slot. By default, an eighth of
    /// `max_connections` (32), at least 1.
    pub max_connections_per_address: Option<usize>,
    /// The largest `k` a search may ask for. By default, 100.
    pub max_k: usize,
    /// Searches running at once; others wait (within their time budget). By default, 0: one per
    /// CPU core.
    pub max_concurrent: usize,
    /// Requests per second each principal (a static token; an OAuth issuer's subject in a
    /// tenant) may make on average. By default, 20.
    pub rate_per_second: f64,
    /// Requests a principal may make in a burst. By default, 40.
    pub burst: u32,
    /// Requests per second with a token that is not valid, per client address (token guessing
    /// and floods pay here; requests with a valid token never do, and a request with no token
    /// at all is answered 401 for free). By default, 10.
    pub unauthenticated_per_second: f64,
    /// Such requests in a burst, per client address; beyond it they get 429. By default, 20.
    pub unauthenticated_burst: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: 64 * 1024,
            timeout_ms: 10_000,
            header_read_timeout_ms: 5_000,
            max_connections: 256,
            max_connections_per_address: None,
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

    /// How long a connection may take to send a request head.
    pub fn header_read_timeout(&self) -> Duration {
        Duration::from_millis(self.header_read_timeout_ms)
    }

    /// Connections one client address may hold open at once.
    pub fn per_address(&self) -> usize {
        self.max_connections_per_address.unwrap_or((self.max_connections / 8).max(1))
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
    /// Whether this token's search answers carry the stage timings (`stats.micros`, the MCP
    /// `steps`); for everyone else they are left out (docs/threat-model.md). By default, false.
    #[serde(default)]
    pub operator: bool,
    /// Whether this token may write records (`POST /v1/records`, deletes), in its tenant's
    /// namespace only (`write.rs`); it needs a `tenant`. By default, false.
    #[serde(default)]
    pub write: bool,
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

/// The accepted range of every numeric key, inclusive: values outside would spin (a reload
/// every nanosecond), overflow a duration, or make a limit meaningless.
pub const RANGES: &[(&str, f64, f64)] = &[
    ("reload_seconds", 0.1, 86_400.0),
    ("ef_search", 1.0, 100_000.0),
    ("commit_delay_ms", 0.0, 1_000.0),
    ("commit_interval_ms", 0.0, 10_000.0),
    ("limits.max_body_bytes", 1024.0, 64.0 * 1024.0 * 1024.0),
    ("limits.timeout_ms", 1.0, 600_000.0),
    ("limits.header_read_timeout_ms", 100.0, 600_000.0),
    ("limits.max_connections", 2.0, 65_536.0),
    ("limits.max_connections_per_address", 1.0, 65_535.0),
    ("limits.max_concurrent", 0.0, 4096.0),
    ("limits.max_k", 1.0, braid::MAX_K as f64),
    ("limits.rate_per_second", 0.001, 1_000_000.0),
    ("limits.burst", 1.0, 1_000_000.0),
    ("limits.unauthenticated_per_second", 0.001, 1_000_000.0),
    ("limits.unauthenticated_burst", 1.0, 1_000_000.0),
    ("token.rate_per_second", 0.001, 1_000_000.0),
    ("token.burst", 1.0, 1_000_000.0),
    ("oauth.leeway_seconds", 0.0, 3_600.0),
    ("oauth.jwks_refresh_seconds", 1.0, 604_800.0),
    ("oauth.issuer.rate_per_second", 0.001, 1_000_000.0),
    ("oauth.issuer.burst", 1.0, 1_000_000.0),
];

/// A configuration value outside its range (see [`RANGES`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{key} = {value} is out of range: it must be between {min} and {max}{}", if *.key == "reload_seconds" { " (or 0: never)" } else { "" })]
pub struct OutOfRange {
    /// The key, as written in the file (`limits.timeout_ms`).
    pub key: &'static str,
    /// The value found.
    pub value: f64,
    /// The smallest value accepted.
    pub min: f64,
    /// The largest value accepted.
    pub max: f64,
}

/// Checks `value` against the range [`RANGES`] gives `key`.
pub(super) fn in_range(key: &'static str, value: f64) -> Result<(), OutOfRange> {
    let (key, min, max) = RANGES.iter().copied().find(|(k, _, _)| *k == key).unwrap_or((key, 0.0, 0.0));
    if value.is_finite() && (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(OutOfRange { key, value, min, max })
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
    /// How often to look for a new commit (`None`: never). Validation keeps the value in
    /// range, so the conversion cannot fail.
    pub fn reload_every(&self) -> Option<Duration> {
        (self.reload_seconds > 0.0).then(|| Duration::try_from_secs_f64(self.reload_seconds).ok()).flatten()
    }

    /// How record writes are committed: the delay of [`Config::commit_delay_ms`], the interval
    /// of [`Config::commit_interval_ms`] and the scheduling of [`Config::commit_idle`].
    pub fn commit_options(&self) -> braid::GroupCommitOptions {
        let defaults = braid::GroupCommitOptions::default();
        braid::GroupCommitOptions {
            commit_delay: Duration::from_millis(self.commit_delay_ms),
            commit_interval: self.commit_interval_ms.map_or(defaults.commit_interval, Duration::from_millis),
            writer_idle: self.commit_idle,
            ..defaults
        }
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
    /// 64 hex digits; ACL tokens that are not Braid's internal ones; every number within the
    /// range [`RANGES`] gives it (a [`OutOfRange`] error names the key).
    ///
    /// # Errors
    /// Naming the first problem found.
    pub fn validate(&self) -> Result<()> {
        let l = &self.limits;
        if self.reload_seconds != 0.0 {
            in_range("reload_seconds", self.reload_seconds)?;
        }
        if let Some(width) = self.ef_search {
            in_range("ef_search", width as f64)?;
        }
        in_range("commit_delay_ms", self.commit_delay_ms as f64)?;
        if let Some(interval) = self.commit_interval_ms {
            in_range("commit_interval_ms", interval as f64)?;
        }
        in_range("limits.max_body_bytes", l.max_body_bytes as f64)?;
        in_range("limits.timeout_ms", l.timeout_ms as f64)?;
        in_range("limits.header_read_timeout_ms", l.header_read_timeout_ms as f64)?;
        in_range("limits.max_connections", l.max_connections as f64)?;
        in_range("limits.max_connections_per_address", l.per_address() as f64)?;
        ensure!(
            l.per_address() < l.max_connections,
            "limits.max_connections_per_address = {} must be below limits.max_connections = {}, \
             so that one client cannot hold every connection",
            l.per_address(),
            l.max_connections
        );
        in_range("limits.max_concurrent", l.max_concurrent as f64)?;
        in_range("limits.max_k", l.max_k as f64)?;
        in_range("limits.rate_per_second", l.rate_per_second)?;
        in_range("limits.burst", f64::from(l.burst))?;
        in_range("limits.unauthenticated_per_second", l.unauthenticated_per_second)?;
        in_range("limits.unauthenticated_burst", f64::from(l.unauthenticated_burst))?;
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
            // Compared as the owner token reads it (`owner:token:<name>`, trimmed): `alice` and
            // `alice ` would share one memory scope.
            ensure!(names.insert(t.name.trim()), "token name {:?} appears twice (spaces aside)", t.name);
            let hash = t.sha256.to_ascii_lowercase();
            if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                bail!("token {:?}: sha256 must be 64 hex digits (`braid token hash`)", t.name);
            }
            ensure!(hashes.insert(hash), "token {:?}: the same hash appears twice", t.name);
            Principal::try_from_verified_tokens(t.acl_tokens()).with_context(|| format!("token {:?}", t.name))?;
            if let Some(owner) = t.acl_tokens().iter().find(|a| a.trim().starts_with(braid::OWNER_PREFIX)) {
                bail!(
                    "token {:?}: {owner:?} is an owner token, which the server grants from the token's name \
                     (owner:token:<name>) and never takes from the configuration",
                    t.name
                );
            }
            if let Some(tenant) = &t.tenant {
                ensure!(
                    braid::is_tenant_name(tenant.trim()),
                    "token {:?}: tenant {tenant:?} is not a tenant's name (not empty, no whitespace, ',' or '/')",
                    t.name
                );
                // A tenant pins the token: its principal cannot add another tenant.
                let pin = format!("tenant:{}", tenant.trim());
                if let Some(other) = t.principal.iter().find(|p| p.trim().starts_with("tenant:") && p.trim() != pin) {
                    bail!("token {:?}: tenant = {tenant:?} pins it, so principal cannot add {other:?}", t.name);
                }
            }
            ensure!(
                !t.write || t.tenant.is_some(),
                "token {:?}: write = true needs a tenant (records are written in their tenant's namespace)",
                t.name
            );
            let (rate, burst) = t.rate(l);
            in_range("token.rate_per_second", rate).with_context(|| format!("token {:?}", t.name))?;
            in_range("token.burst", f64::from(burst)).with_context(|| format!("token {:?}", t.name))?;
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
        assert_eq!(c.commit_options(), braid::GroupCommitOptions::default());
        // One address may hold an eighth of the connections by default, always fewer than all.
        assert_eq!(c.limits.per_address(), 32);
        assert!(!c.tokens[0].operator);
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
            // Names that differ by spaces alone would share one owner (memory) scope.
            (format!("{}[[token]]\nname = \"a \"\nsha256 = \"{}\"\n", token(""), "0".repeat(64)), "appears twice"),
            (token("principal = [\"__braid:no-acl\"]"), "reserved"),
            (token("rate_per_second = 0.0"), "token.rate_per_second"),
            (format!("[limits]\nmax_k = 0\n{}", token("")), "max_k"),
            (format!("bind = \"nowhere\"\n{}", token("")), "invalid socket address"),
            (format!("reload_seconds = -1.0\n{}", token("")), "reload_seconds"),
            (format!("[limits]\nunauthenticated_burst = 0\n{}", token("")), "unauthenticated"),
            (token("principal = [\" __braid:no-tenant\"]"), "reserved"),
            // Owner tokens come from the token's name only.
            (token("principal = [\"owner:token:b\"]"), "owner token"),
            // A token's tenant pins it: its principal cannot name another tenant.
            (token("tenant = \"acme\"\nprincipal = [\"tenant:globex\"]"), "pins it"),
            // A tenant whose ids would read back as another's (`tenant:acme/x/1` is acme's).
            (token("tenant = \"acme/x\""), "not a tenant's name"),
            (token("tenant = \" \""), "not a tenant's name"),
            (format!("[limits]\nmax_connections = 8\nmax_connections_per_address = 8\n{}", token("")), "below"),
        ] {
            let err = format!("{:#}", parse(&text).unwrap_err());
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }

    #[test]
    fn every_number_is_range_checked_with_its_key() {
        let token = format!("[[token]]\nname = \"a\"\nsha256 = \"{HASH}\"\n");
        for (top, limits, key) in [
            ("reload_seconds = 1e-300", "", "reload_seconds"),
            ("reload_seconds = 1e300", "", "reload_seconds"),
            ("reload_seconds = 0.01", "", "reload_seconds"),
            ("reload_seconds = inf", "", "reload_seconds"),
            ("reload_seconds = nan", "", "reload_seconds"),
            ("ef_search = 0", "", "ef_search"),
            ("ef_search = 1000000", "", "ef_search"),
            ("commit_delay_ms = 1001", "", "commit_delay_ms"),
            ("commit_interval_ms = 10001", "", "commit_interval_ms"),
            ("", "timeout_ms = 0", "limits.timeout_ms"),
            ("", "timeout_ms = 9223372036854775807", "limits.timeout_ms"),
            ("", "header_read_timeout_ms = 0", "limits.header_read_timeout_ms"),
            ("", "max_connections = 0", "limits.max_connections"),
            ("", "max_concurrent = 1000000", "limits.max_concurrent"),
            ("", "max_body_bytes = 100", "limits.max_body_bytes"),
            ("", "max_body_bytes = 9223372036854775807", "limits.max_body_bytes"),
            ("", "rate_per_second = 1e-300", "limits.rate_per_second"),
            ("", "rate_per_second = inf", "limits.rate_per_second"),
            ("", "burst = 0", "limits.burst"),
            ("", "unauthenticated_per_second = -1.0", "limits.unauthenticated_per_second"),
            ("", "max_connections = 1", "limits.max_connections"),
            ("", "max_connections_per_address = 0", "limits.max_connections_per_address"),
            ("", "max_connections_per_address = 100000", "limits.max_connections_per_address"),
        ] {
            let text = format!("{top}\n[limits]\n{limits}\n{token}");
            let err = parse(&text).unwrap_err();
            let range = err.downcast_ref::<OutOfRange>().unwrap_or_else(|| panic!("{text}: {err:#}"));
            assert_eq!(range.key, key, "{text}");
            assert!(format!("{err:#}").contains(key), "{err:#}");
        }
        let per_token = parse(&format!("{token}rate_per_second = 1e-300\n")).unwrap_err();
        assert_eq!(per_token.root_cause().downcast_ref::<OutOfRange>().map(|r| r.key), Some("token.rate_per_second"));
        // The extremes that are allowed work, and a valid reload interval converts.
        let c = parse(&format!(
            "reload_seconds = 86400\nef_search = 100000\ncommit_delay_ms = 1000\ncommit_interval_ms = 0\ncommit_idle = true\n{token}"
        ))
        .unwrap();
        assert_eq!(c.reload_every(), Some(Duration::from_secs(86_400)));
        assert_eq!(c.ef_search, Some(100_000));
        assert_eq!(c.commit_options().commit_delay, Duration::from_secs(1));
        assert_eq!(c.commit_options().commit_interval, Duration::ZERO);
        assert!(c.commit_options().writer_idle);
    }
}
