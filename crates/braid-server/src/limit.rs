//! Token buckets: each search takes one token (an HTTP request, and each further search in a
//! JSON-RPC batch); tokens refill at a steady rate up to the bucket's size (the burst). An
//! empty bucket answers with the wait until the tokens are there.
//!
//! A [`Quota`] is one bucket with the request and refusal counters `/v1/stats` shows. Static
//! tokens each own one; callers that are not known in advance — the principals of OAuth access
//! tokens, the client addresses of requests without a valid token — get theirs from a
//! [`Quotas`] map, which holds at most a fixed number of entries: past it, the entries used
//! least recently are dropped, so a flood of distinct subjects or addresses cannot grow memory
//! without bound. A dropped entry that comes back starts with a full bucket and zero counts.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug)]
struct Bucket {
    rate: f64,
    burst: f64,
    tokens: f64,
    at: Instant,
}

/// Why [`Quota::take`] said no.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Refused {
    /// How long until the tokens asked for are there.
    pub wait: Duration,
    /// Whether they ever can be (false when more were asked for than the bucket holds).
    pub can_ever: bool,
}

/// One caller's token bucket and counters.
#[derive(Debug)]
pub struct Quota {
    bucket: Mutex<Bucket>,
    requests: AtomicU64,
    throttled: AtomicU64,
}

impl Quota {
    /// A full bucket of `burst` tokens refilled at `rate` per second.
    pub fn new(rate: f64, burst: u32, now: Instant) -> Quota {
        let bucket = Bucket { rate, burst: f64::from(burst), tokens: f64::from(burst), at: now };
        Quota { bucket: Mutex::new(bucket), requests: AtomicU64::new(0), throttled: AtomicU64::new(0) }
    }

    /// Counts one request and takes one token at `now`, or says how long until one is there
    /// (and counts the refusal).
    pub fn admit(&self, now: Instant) -> Result<(), Duration> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.take(1, now).map_err(|refused| refused.wait)
    }

    /// Takes one token at `now` without counting a request (the unauthenticated buckets).
    pub fn check(&self, now: Instant) -> Result<(), Duration> {
        self.take(1, now).map_err(|refused| refused.wait)
    }

    /// Takes `n` tokens at once, or none: a batch is paid in full or refused (and the refusal
    /// counted).
    ///
    /// # Errors
    /// [`Refused`], with the wait until `n` tokens are there (`can_ever` is false when `n` is
    /// more than the burst: then no wait helps).
    pub fn take(&self, n: u32, now: Instant) -> Result<(), Refused> {
        let mut b = self.bucket.lock().unwrap_or_else(|p| p.into_inner());
        let elapsed = now.saturating_duration_since(b.at).as_secs_f64();
        b.tokens = (b.tokens + elapsed * b.rate).min(b.burst);
        b.at = b.at.max(now);
        let n = f64::from(n);
        if b.tokens >= n {
            b.tokens -= n;
            Ok(())
        } else {
            self.throttled.fetch_add(1, Ordering::Relaxed);
            Err(Refused { wait: Duration::from_secs_f64((n - b.tokens) / b.rate), can_ever: n <= b.burst })
        }
    }

    /// Requests counted so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Refusals counted so far.
    pub fn throttled(&self) -> u64 {
        self.throttled.load(Ordering::Relaxed)
    }
}

/// A bounded map of quotas by key (see the module).
pub struct Quotas<K> {
    capacity: usize,
    entries: Mutex<HashMap<K, (Arc<Quota>, Instant)>>,
}

impl<K: Hash + Eq + Clone> Quotas<K> {
    /// An empty map holding at most `capacity` (at least 1) entries.
    pub fn new(capacity: usize) -> Quotas<K> {
        Quotas { capacity: capacity.max(1), entries: Mutex::new(HashMap::new()) }
    }

    /// The quota of `key`, made with `(rate, burst)` when the map holds none. When the map is
    /// full, the least recently used sixteenth of it is dropped first.
    pub fn get(&self, key: &K, (rate, burst): (f64, u32), now: Instant) -> Arc<Quota> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((quota, used)) = entries.get_mut(key) {
            *used = (*used).max(now);
            return Arc::clone(quota);
        }
        if entries.len() >= self.capacity {
            let mut ages: Vec<Instant> = entries.values().map(|(_, used)| *used).collect();
            let drop = (self.capacity / 16).max(1).min(ages.len());
            let (_, cutoff, _) = ages.select_nth_unstable(drop - 1);
            let cutoff = *cutoff;
            let mut left = drop;
            entries.retain(|_, (_, used)| {
                let old = *used <= cutoff && left > 0;
                left -= usize::from(old);
                !old
            });
        }
        let quota = Arc::new(Quota::new(rate, burst, now));
        entries.insert(key.clone(), (Arc::clone(&quota), now));
        quota
    }

    /// How many entries the map holds.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_steady_rate() {
        let t0 = Instant::now();
        let quota = Quota::new(2.0, 3, t0);
        for _ in 0..3 {
            assert!(quota.admit(t0).is_ok());
        }
        let wait = quota.admit(t0).unwrap_err();
        assert!((wait.as_secs_f64() - 0.5).abs() < 1e-6, "{wait:?}");
        assert_eq!((quota.requests(), quota.throttled()), (4, 1));
        // Half a second later one token is back, and only one.
        let t1 = t0 + Duration::from_millis(500);
        assert!(quota.check(t1).is_ok());
        assert!(quota.check(t1).is_err());
        // A long pause refills up to the burst, not beyond.
        let t2 = t1 + Duration::from_secs(60);
        assert_eq!((0..5).filter(|_| quota.check(t2).is_ok()).count(), 3);
    }

    #[test]
    fn a_batch_pays_for_every_search_or_nothing() {
        let t0 = Instant::now();
        let quota = Quota::new(1.0, 3, t0);
        // 50 searches at once are more than a burst of 3 can ever pay.
        let refused = quota.take(50, t0).unwrap_err();
        assert!(!refused.can_ever);
        // Refused batches take nothing: the bucket is still full.
        assert!(quota.take(3, t0).is_ok());
        let refused = quota.take(2, t0).unwrap_err();
        assert!(refused.can_ever && (refused.wait.as_secs_f64() - 2.0).abs() < 1e-6, "{refused:?}");
        assert!(quota.check(t0).is_err());
    }

    #[test]
    fn a_clock_going_backwards_gives_nothing_back() {
        let t0 = Instant::now() + Duration::from_secs(10);
        let quota = Quota::new(1.0, 1, t0);
        assert!(quota.check(t0).is_ok());
        assert!(quota.check(t0 - Duration::from_secs(5)).is_err());
        assert!(quota.check(t0).is_err());
    }

    #[test]
    fn keys_have_their_own_buckets() {
        let t0 = Instant::now();
        let quotas: Quotas<String> = Quotas::new(100);
        let acme = quotas.get(&"acme/alice".to_string(), (0.01, 2), t0);
        assert!(acme.admit(t0).is_ok() && acme.admit(t0).is_ok() && acme.admit(t0).is_err());
        // The same key finds the same (now empty) bucket; another key a full one.
        assert!(quotas.get(&"acme/alice".to_string(), (0.01, 2), t0).check(t0).is_err());
        let globex = quotas.get(&"globex/alice".to_string(), (0.01, 2), t0);
        assert!(globex.admit(t0).is_ok());
        assert_eq!((globex.requests(), globex.throttled()), (1, 0));
    }

    #[test]
    fn a_flood_of_keys_stays_within_the_capacity_and_keeps_recent_ones() {
        let t0 = Instant::now();
        let quotas: Quotas<u64> = Quotas::new(64);
        let hot = quotas.get(&u64::MAX, (0.01, 1), t0);
        assert!(hot.check(t0).is_ok());
        for i in 0..100_000u64 {
            let now = t0 + Duration::from_micros(i + 1);
            quotas.get(&i, (1.0, 1), now);
            // The hot key is used all along: it is never the least recently used.
            if i % 8 == 0 {
                quotas.get(&u64::MAX, (0.01, 1), now);
            }
            assert!(quotas.len() <= 64);
        }
        // Still the same empty bucket: eviction did not hand the hot key a fresh one.
        assert!(quotas.get(&u64::MAX, (0.01, 1), t0 + Duration::from_secs(1)).check(t0).is_err());
    }
}
