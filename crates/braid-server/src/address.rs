//! Client addresses: what one client is, before it has authenticated. An IPv4 address is one
//! client; an IPv6 address counts by its /64 prefix (one host or one subscriber usually holds a
//! whole /64, so counting single IPv6 addresses would hand one client 2^64 of them); an
//! IPv4-mapped IPv6 address counts as its IPv4 address.
//!
//! Two limits key on it: the connections one client may hold open at once
//! ([`ConnectionCounts`], `limits.max_connections_per_address`, below the global
//! `limits.max_connections`), and the bucket of requests without a valid token (`http.rs`).
//! Behind a reverse proxy every client has the proxy's address: raise the per-address cap there.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Arc, Mutex};

/// A client, as far as the server can tell before authentication (see the module).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientKey(IpAddr);

impl ClientKey {
    /// The client `ip` counts as.
    pub fn of(ip: IpAddr) -> ClientKey {
        match ip {
            IpAddr::V4(v4) => ClientKey(IpAddr::V4(v4)),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => ClientKey(IpAddr::V4(v4)),
                None => {
                    let s = v6.segments();
                    ClientKey(IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0)))
                }
            },
        }
    }

    /// The key of requests whose peer address is not known (an in-process server): they all
    /// count as one client.
    pub fn unknown() -> ClientKey {
        ClientKey(IpAddr::V6(Ipv6Addr::UNSPECIFIED))
    }
}

/// The peer address of a request's connection, put into its extensions by the accept loop.
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub ClientKey);

/// Open connections per client, each at most `per_client`.
pub struct ConnectionCounts {
    per_client: usize,
    open: Mutex<HashMap<ClientKey, usize>>,
}

/// One open connection of a client; dropping it frees its place.
pub struct Held {
    counts: Arc<ConnectionCounts>,
    key: ClientKey,
}

impl ConnectionCounts {
    /// Counts allowing `per_client` (at least 1) connections per client.
    pub fn new(per_client: usize) -> Arc<ConnectionCounts> {
        Arc::new(ConnectionCounts { per_client: per_client.max(1), open: Mutex::new(HashMap::new()) })
    }

    /// A place for one more connection of `key`, or `None` when it holds its maximum. The map
    /// holds only clients with open connections, so it is bounded by the global cap.
    pub fn hold(self: &Arc<Self>, key: ClientKey) -> Option<Held> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let n = open.entry(key).or_insert(0);
        if *n >= self.per_client {
            return None;
        }
        *n += 1;
        Some(Held { counts: Arc::clone(self), key })
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut open = self.counts.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = open.get_mut(&self.key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_counts_by_its_64_prefix_and_mapped_ipv4_as_ipv4() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(ClientKey::of(a), ClientKey::of(b));
        assert_ne!(ClientKey::of(a), ClientKey::of(c));
        let mapped: IpAddr = "::ffff:10.0.0.7".parse().unwrap();
        assert_eq!(ClientKey::of(mapped), ClientKey::of("10.0.0.7".parse().unwrap()));
        assert_ne!(ClientKey::of("10.0.0.7".parse().unwrap()), ClientKey::of("10.0.0.8".parse().unwrap()));
    }

    #[test]
    fn each_client_holds_at_most_its_share() {
        let counts = ConnectionCounts::new(2);
        let (one, two) = (ClientKey::of("10.0.0.1".parse().unwrap()), ClientKey::of("10.0.0.2".parse().unwrap()));
        let a = counts.hold(one).unwrap();
        let _b = counts.hold(one).unwrap();
        assert!(counts.hold(one).is_none());
        assert!(counts.hold(two).is_some());
        drop(a);
        assert!(counts.hold(one).is_some());
        assert!(counts.open.lock().unwrap().len() <= 2);
    }
}
