//! A token bucket per caller: each search takes one token (an HTTP request, and each further
//! search in a JSON-RPC batch); tokens refill at a steady rate up to the bucket's size (the
//! burst). An empty bucket answers with the wait until the tokens are there.

use std::sync::Mutex;
use std::time::{Duration, Instant};

struct Bucket {
    rate: f64,
    burst: f64,
    tokens: f64,
    at: Instant,
}

/// Why [`RateLimiter::take`] said no.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Refused {
    /// How long until the tokens asked for are there.
    pub wait: Duration,
    /// Whether they ever can be (false when more were asked for than the bucket holds).
    pub can_ever: bool,
}

/// One token bucket per caller slot.
pub struct RateLimiter {
    buckets: Vec<Mutex<Bucket>>,
}

impl RateLimiter {
    /// Buckets for `(rate per second, burst)` limits, one per slot, starting full.
    pub fn new(limits: impl IntoIterator<Item = (f64, u32)>, now: Instant) -> RateLimiter {
        let buckets = limits
            .into_iter()
            .map(|(rate, burst)| {
                Mutex::new(Bucket { rate, burst: f64::from(burst), tokens: f64::from(burst), at: now })
            })
            .collect();
        RateLimiter { buckets }
    }

    /// Takes a token from `slot`'s bucket at time `now`, or says how long until one is there.
    /// An unknown slot is refused for a second.
    pub fn check(&self, slot: usize, now: Instant) -> Result<(), Duration> {
        self.take(slot, 1, now).map_err(|refused| refused.wait)
    }

    /// Takes `n` tokens from `slot`'s bucket at once, or none: a batch is paid in full or
    /// refused.
    ///
    /// # Errors
    /// [`Refused`], with the wait until `n` tokens are there (`can_ever` is false when `n` is
    /// more than the burst: then no wait helps).
    pub fn take(&self, slot: usize, n: u32, now: Instant) -> Result<(), Refused> {
        let Some(bucket) = self.buckets.get(slot) else {
            return Err(Refused { wait: Duration::from_secs(1), can_ever: false });
        };
        let mut b = bucket.lock().unwrap_or_else(|p| p.into_inner());
        let elapsed = now.saturating_duration_since(b.at).as_secs_f64();
        b.tokens = (b.tokens + elapsed * b.rate).min(b.burst);
        b.at = b.at.max(now);
        let n = f64::from(n);
        if b.tokens >= n {
            b.tokens -= n;
            Ok(())
        } else {
            Err(Refused { wait: Duration::from_secs_f64((n - b.tokens) / b.rate), can_ever: n <= b.burst })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_steady_rate() {
        let t0 = Instant::now();
        let limiter = RateLimiter::new([(2.0, 3), (100.0, 1)], t0);
        for _ in 0..3 {
            assert!(limiter.check(0, t0).is_ok());
        }
        let wait = limiter.check(0, t0).unwrap_err();
        assert!((wait.as_secs_f64() - 0.5).abs() < 1e-6, "{wait:?}");
        // Half a second later one token is back, and only one.
        let t1 = t0 + Duration::from_millis(500);
        assert!(limiter.check(0, t1).is_ok());
        assert!(limiter.check(0, t1).is_err());
        // A long pause refills up to the burst, not beyond.
        let t2 = t1 + Duration::from_secs(60);
        assert_eq!((0..5).filter(|_| limiter.check(0, t2).is_ok()).count(), 3);
        // Slots are independent; an unknown slot is refused.
        assert!(limiter.check(1, t0).is_ok());
        assert!(limiter.check(1, t0).is_err());
        assert!(limiter.check(7, t0).is_err());
    }

    #[test]
    fn a_batch_pays_for_every_search_or_nothing() {
        let t0 = Instant::now();
        let limiter = RateLimiter::new([(1.0, 3)], t0);
        // 50 searches at once are more than a burst of 3 can ever pay.
        let refused = limiter.take(0, 50, t0).unwrap_err();
        assert!(!refused.can_ever);
        // Refused batches take nothing: the bucket is still full.
        assert!(limiter.take(0, 3, t0).is_ok());
        let refused = limiter.take(0, 2, t0).unwrap_err();
        assert!(refused.can_ever && (refused.wait.as_secs_f64() - 2.0).abs() < 1e-6, "{refused:?}");
        assert!(limiter.check(0, t0).is_err());
    }

    #[test]
    fn a_clock_going_backwards_gives_nothing_back() {
        let t0 = Instant::now() + Duration::from_secs(10);
        let limiter = RateLimiter::new([(1.0, 1)], t0);
        assert!(limiter.check(0, t0).is_ok());
        assert!(limiter.check(0, t0 - Duration::from_secs(5)).is_err());
        assert!(limiter.check(0, t0).is_err());
    }
}
