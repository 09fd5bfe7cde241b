//! Which browser origins may call the server: the `Origin` check that defends a server on
//! loopback against DNS rebinding (a page on `http://evil.example` whose name resolves to
//! 127.0.0.1 still sends `Origin: http://evil.example`).
//!
//! Configured `allowed_origins` are the whole list. Without that setting, a server bound to a
//! loopback address accepts pages served from the same machine — `http(s)://localhost`,
//! `127.0.0.0/8` and `[::1]`, any port — as the MCP transport guidance expects of local servers;
//! a server bound elsewhere accepts no browser origin until some are listed.

use std::net::{IpAddr, SocketAddr};

/// The origins a server accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origins {
    /// Exactly these (lower case, no trailing slash); empty: none.
    Listed(Vec<String>),
    /// Pages served from this machine: `http` or `https` on a loopback host, any port.
    Loopback,
}

impl Origins {
    /// The policy for a server bound to `bind` with `configured` origins (`None`: the setting
    /// is absent).
    pub fn new(configured: Option<&[String]>, bind: SocketAddr) -> Origins {
        match configured {
            Some(list) => Origins::Listed(list.iter().map(|o| normalise(o)).collect()),
            None if bind.ip().is_loopback() => Origins::Loopback,
            None => Origins::Listed(Vec::new()),
        }
    }

    /// Whether a request carrying `Origin: origin` may be served.
    pub fn allows(&self, origin: &str) -> bool {
        let origin = normalise(origin);
        match self {
            Origins::Listed(list) => list.contains(&origin),
            Origins::Loopback => is_loopback_origin(&origin),
        }
    }
}

fn normalise(origin: &str) -> String {
    origin.trim().trim_end_matches('/').to_ascii_lowercase()
}

/// `scheme://host[:port]` with an `http(s)` scheme, a loopback host and nothing else (no user
/// information, path or query: a serialised origin has none).
fn is_loopback_origin(origin: &str) -> bool {
    let Some(rest) = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://")) else {
        return false;
    };
    let (host, port) = match rest.strip_prefix('[') {
        Some(bracketed) => match bracketed.split_once(']') {
            Some((host, after)) => (host, after),
            None => return false,
        },
        None => match rest.find(':') {
            Some(colon) => rest.split_at(colon),
            None => (rest, ""),
        },
    };
    let port_ok = port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()));
    port_ok && (host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loopback() -> Origins {
        Origins::new(None, "127.0.0.1:7700".parse().unwrap())
    }

    #[test]
    fn a_loopback_server_accepts_local_pages_by_default() {
        let origins = loopback();
        for ok in [
            "http://localhost:3000",
            "http://127.0.0.1:6274",
            "https://localhost",
            "http://[::1]:8080",
            "HTTP://LocalHost:1/",
        ] {
            assert!(origins.allows(ok), "{ok}");
        }
        assert_eq!(Origins::new(None, "[::1]:7700".parse().unwrap()), Origins::Loopback);
    }

    #[test]
    fn rebinding_and_lookalike_origins_are_refused() {
        let origins = loopback();
        for bad in [
            "http://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1.evil.example:80",
            "http://evil.example@localhost",
            "http://localhost:3000/path",
            "http://localhost:",
            "http://localhost:123456",
            "file://localhost",
            "null",
            "http://[::1",
            "http://0.0.0.0:3000",
        ] {
            assert!(!origins.allows(bad), "{bad}");
        }
    }

    #[test]
    fn a_configured_list_is_the_whole_list_and_other_binds_accept_none() {
        let listed = Origins::new(Some(&["https://app.example/".to_string()]), "127.0.0.1:7700".parse().unwrap());
        assert!(listed.allows("https://APP.example"));
        assert!(!listed.allows("http://localhost:3000"));
        let none = Origins::new(Some(&[]), "127.0.0.1:7700".parse().unwrap());
        assert!(!none.allows("http://localhost:3000"));
        let public = Origins::new(None, "0.0.0.0:7700".parse().unwrap());
        assert!(!public.allows("http://localhost:3000"));
        assert!(!public.allows("http://evil.example"));
    }
}
