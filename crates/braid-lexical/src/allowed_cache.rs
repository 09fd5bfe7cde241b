//! The allowed sets already computed on a snapshot, by visibility rule, bounded in bytes.
//!
//! A snapshot never changes, so neither does the set a rule admits on it: the set is computed
//! once per rule and kept. Keys name filters that callers choose, so the cache is bounded by
//! size, least recently used first out.

use std::collections::HashMap;
use std::sync::Arc;

use crate::visibility::AllowedDocs;

/// Bytes of allowed sets (and their keys) one snapshot keeps.
pub const ALLOWED_CACHE_BYTES: usize = 64 * 1024 * 1024;

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
