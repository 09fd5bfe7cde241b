//! The allowed sets already computed on a snapshot, by visibility rule, bounded in bytes.
//!
//! A snapshot never changes, so neither does the set a rule admits on it: the set is computed
//! once per rule and kept. Keys name filters that callers choose, so the cache is bounded by
//! size, least recently used first out.
//!
//! Caches are kept per scope ([`ScopedCaches`]): principals who read the same partitions share
//! one, and a promoted tenant's principals have their own, so no other tenant's requests
//! evict (or wait on the lock of) their sets; small tenants' principals share the pool's.
//!
//! A new snapshot starts with the sets of the one before as seeds ([`ScopedCaches::seeded`]):
//! a commit adds a small segment and leaves the large ones as they were, so a rule's set on
//! the new snapshot is the seed's for every segment that did not change, and is computed
//! afresh only for the others (`AllowedDocs::extend_from`); so are the visible frequencies and
//! lengths counted on each segment (`AllowedDocs::count_freq`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use crate::visibility::AllowedDocs;

/// Bytes of allowed sets (and their keys) the main scope of a snapshot keeps, and the pool's;
/// the promoted tenants' scopes share as much again.
pub const ALLOWED_CACHE_BYTES: usize = 64 * 1024 * 1024;

/// The least a promoted tenant's scope keeps, however many tenants share the budget: room for
/// three allowed sets with their frequencies counted at their most.
const MIN_SCOPE_BYTES: usize = 1024 * 1024;

/// One [`AllowedCache`] per scope, keyed by the partitions a scope reads besides the main one
/// (`Scope::keys`: none for the main partition alone; the pool's; promoted tenants'). The main
/// scope and the pool's keep [`ALLOWED_CACHE_BYTES`] each; the scopes with promoted tenants
/// share as much again, a share per promoted tenant a scope reads (at least
/// [`MIN_SCOPE_BYTES`], at most the whole).
#[derive(Default)]
pub(crate) struct ScopedCaches {
    caches: RwLock<HashMap<Vec<String>, Arc<Mutex<AllowedCache>>>>,
    /// Sets of earlier snapshots by scope and rule, not yet asked for on this one.
    seeds: Mutex<HashMap<ScopedRule, Arc<AllowedDocs>>>,
}

/// A scope's keys (`Scope::keys`) and a visibility rule.
type ScopedRule = (Vec<String>, String);

impl ScopedCaches {
    /// Empty caches seeded with `previous`'s sets (those it computed, then the seeds it still
    /// holds), at most [`ALLOWED_CACHE_BYTES`] twice over.
    pub(crate) fn seeded(previous: &ScopedCaches) -> Self {
        let mut seeds = HashMap::new();
        let mut bytes = 0;
        let mut keep = |key: ScopedRule, docs: Arc<AllowedDocs>| {
            let size = docs.heap_bytes();
            if bytes + size <= 2 * ALLOWED_CACHE_BYTES && !seeds.contains_key(&key) {
                bytes += size;
                seeds.insert(key, docs);
            }
        };
        for (scope, cache) in previous.caches.read().unwrap_or_else(|p| p.into_inner()).iter() {
            let cache = cache.lock().unwrap_or_else(|p| p.into_inner());
            for (rule, (docs, _)) in &cache.entries {
                keep((scope.clone(), rule.clone()), docs.clone());
            }
        }
        for (key, docs) in previous.seeds.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            keep(key.clone(), docs.clone());
        }
        ScopedCaches { caches: RwLock::default(), seeds: Mutex::new(seeds) }
    }

    /// The seed for `rule` in `scope`, taken: the set an earlier snapshot computed.
    pub(crate) fn take_seed(&self, scope: &[String], rule: &str) -> Option<Arc<AllowedDocs>> {
        self.seeds.lock().unwrap_or_else(|p| p.into_inner()).remove(&(scope.to_vec(), rule.to_string()))
    }

    /// The set kept for `rule` in the cache of `scope`, if any.
    pub(crate) fn get(&self, scope: &[String], rule: &str) -> Option<Arc<AllowedDocs>> {
        let cache = self.caches.read().unwrap_or_else(|p| p.into_inner()).get(scope).cloned()?;
        let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.get(rule)
    }

    /// Keeps `docs` for `rule` in the cache of `scope`, of a snapshot with `promoted` promoted
    /// tenants.
    pub(crate) fn insert(&self, scope: &[String], rule: String, docs: Arc<AllowedDocs>, promoted: usize) {
        let tenants = scope.iter().filter(|key| key.starts_with(braid_core::TENANT_PREFIX)).count();
        let budget = if tenants == 0 {
            ALLOWED_CACHE_BYTES
        } else {
            // A share per promoted tenant in scope: a principal of every tenant gets them all.
            (ALLOWED_CACHE_BYTES / promoted.max(1) * tenants).clamp(MIN_SCOPE_BYTES, ALLOWED_CACHE_BYTES)
        };
        let cache = {
            let mut caches = self.caches.write().unwrap_or_else(|p| p.into_inner());
            caches.entry(scope.to_vec()).or_default().clone()
        };
        cache.lock().unwrap_or_else(|p| p.into_inner()).insert(rule, docs, budget);
    }
}

/// Allowed sets by rule, bounded in bytes ([`ALLOWED_CACHE_BYTES`]).
#[derive(Default)]
pub(crate) struct AllowedCache {
    entries: HashMap<String, (Arc<AllowedDocs>, u64)>,
    bytes: usize,
    clock: u64,
}

impl AllowedCache {
    pub(crate) fn get(&mut self, key: &str) -> Option<Arc<AllowedDocs>> {
        self.clock += 1;
        let clock = self.clock;
        self.entries.get_mut(key).map(|(docs, used)| {
            *used = clock;
            docs.clone()
        })
    }

    pub(crate) fn insert(&mut self, key: String, docs: Arc<AllowedDocs>, budget: usize) {
        let size = key.len() + docs.heap_bytes();
        if size > budget || self.entries.contains_key(&key) {
            return;
        }
        while self.bytes + size > budget {
            let Some(oldest) = self.entries.iter().min_by_key(|(_, (_, used))| *used).map(|(k, _)| k.clone()) else {
                break;
            };
            if let Some((gone, _)) = self.entries.remove(&oldest) {
                self.bytes -= oldest.len() + gone.heap_bytes();
            }
        }
        self.clock += 1;
        self.bytes += size;
        self.entries.insert(key, (docs, self.clock));
    }
}

#[cfg(test)]
mod tests {
    use braid_core::OrdSet;

    use super::*;

    fn docs(ords: u64) -> Arc<AllowedDocs> {
        let mut docs = AllowedDocs::default();
        docs.ords = (0..ords).collect::<OrdSet>();
        Arc::new(docs)
    }

    /// A tenant's sets stay however many rules another tenant's principals send: each scope
    /// evicts only its own.
    #[test]
    fn one_scope_never_evicts_another() {
        let caches = ScopedCaches::default();
        let (a, b) = (vec!["tenant:a".to_string()], vec!["tenant:b".to_string()]);
        caches.insert(&a, "a's rule".into(), docs(1000), 1000);
        for i in 0..20 {
            caches.insert(&b, format!("b's rule {i}"), docs(1000), 1000);
        }
        assert!(caches.get(&a, "a's rule").is_some());
        assert!(caches.get(&b, "b's rule 0").is_none(), "b's scope is bounded");
        assert!(caches.get(&b, "b's rule 19").is_some());
        for i in 0..20 {
            caches.insert(&a, format!("a's rule {i}"), docs(1000), 1000);
        }
        assert!(caches.get(&a, "a's rule").is_none(), "within one scope the oldest goes");
    }

    /// Keys are filters callers choose: however many they send, the cache stays within its
    /// byte budget, dropping the least recently used first; an entry above the budget is not
    /// kept at all.
    #[test]
    fn allowed_cache_stays_within_its_byte_budget() {
        let one = docs(64 * 1000);
        let budget = 10 * (one.heap_bytes() + 16);
        let mut cache = AllowedCache::default();
        for i in 0..100 {
            cache.insert(format!("rule-{i:04}"), one.clone(), budget);
            if i == 50 {
                // Touched, an old entry outlives the ones inserted just after it.
                assert!(cache.get("rule-0045").is_some());
            }
            if i == 52 {
                assert!(cache.get("rule-0041").is_none() && cache.get("rule-0042").is_none());
                assert!(cache.get("rule-0045").is_some());
            }
            assert!(cache.bytes <= budget, "{} > {budget} after {i}", cache.bytes);
        }
        assert!(cache.entries.len() <= 10);
        assert!(cache.get("rule-0099").is_some());
        assert!(cache.get("rule-0000").is_none());
        let huge = docs(64 * 1_000_000);
        cache.insert("huge".into(), huge, budget);
        assert!(cache.get("huge").is_none());
        let total: usize = cache.entries.iter().map(|(k, (d, _))| k.len() + d.heap_bytes()).sum();
        assert_eq!(total, cache.bytes);
    }
}
