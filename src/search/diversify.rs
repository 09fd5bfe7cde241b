//! Stage 9, diversify: at most n hits per group ([`group`]), then maximal marginal relevance
//! ([`mmr`]) — both over the final order, after any rerank, and before the page is cut.
//!
//! Both read only the hits the legs returned for the caller's allowed set, and the vectors or
//! words of those records, so what they keep and reorder is a function of visible records.

use std::collections::{HashMap, HashSet};

use braid_core::{Error, GroupBy, Hit, Result};
use braid_lexical::SchemaConfig;

use super::hits::HitWithBody;

/// Checks that `group` names `parent` or a keyword field of `schema`, and keeps at least one
/// hit a group.
///
/// # Errors
/// [`Error::UnknownField`] for another field, [`Error::InvalidRequest`] for `per_group` 0.
pub(super) fn check_group(group: &GroupBy, schema: &SchemaConfig) -> Result<()> {
    if group.per_group == 0 {
        return Err(Error::invalid_request("group_by keeps at least 1 hit a group"));
    }
    if group.field != GroupBy::PARENT && !schema.keyword_fields.contains(&group.field) {
        return Err(Error::UnknownField { name: group.field.clone() });
    }
    Ok(())
}

/// Checks that MMR's `lambda` lies in `[0, 1]`.
///
/// # Errors
/// [`Error::InvalidRequest`] otherwise.
pub(super) fn check_mmr(lambda: f32) -> Result<()> {
    if !(0.0..=1.0).contains(&lambda) {
        return Err(Error::invalid_request(format!("mmr lambda {lambda} is outside [0, 1]")));
    }
    Ok(())
}

/// Keeps, in order, at most `group.per_group` hits of each group (see
/// [`braid_core::SearchRequest::group_by`]).
pub(super) fn group(hits: &mut Vec<HitWithBody>, group: &GroupBy) {
    let mut kept: HashMap<String, usize> = HashMap::new();
    hits.retain(|(hit, _)| {
        let n = kept.entry(group_key(hit, &group.field)).or_default();
        *n += 1;
        *n <= group.per_group
    });
}

/// The group of `hit` by `field`. By `parent`, an article and its sections share one group (a
/// section's parent is its article's id); by a keyword field, its first value, and a record
/// without one is a group of its own, apart from every value.
fn group_key(hit: &Hit, field: &str) -> String {
    if field == GroupBy::PARENT {
        return hit.parent.clone().unwrap_or_else(|| hit.id.clone());
    }
    match hit.keywords.get(field).and_then(|values| values.first()) {
        Some(value) => format!("={value}"),
        None => format!("#{}", hit.id),
    }
}

/// How alike two hits are, in `[0, 1]` for unit vectors and word sets.
pub(super) trait Similarity {
    /// The similarity of hits `a` and `b` (indexes into the hits being ordered).
    fn between(&self, a: usize, b: usize) -> f32;
}

/// Cosine of the records' stored vectors where both have one, else the Jaccard overlap of
/// their words (title and body, lowercased).
pub(super) struct RecordSimilarity {
    vectors: Vec<Option<Vec<f32>>>,
    /// Each hit's distinct words as sorted hashes (empty when every hit has a vector).
    words: Vec<Vec<u64>>,
}

impl RecordSimilarity {
    /// Over `hits`, with `vector` giving a hit's stored vector (unit length) when it has one.
    pub(super) fn new(hits: &[HitWithBody], vector: impl Fn(&Hit) -> Option<Vec<f32>>) -> Self {
        let vectors: Vec<Option<Vec<f32>>> = hits.iter().map(|(hit, _)| vector(hit)).collect();
        // Words are read only when some pair has to be compared by them.
        let words = if vectors.iter().all(Option::is_some) {
            Vec::new()
        } else {
            hits.iter().map(|(hit, body)| words(&hit.title, body)).collect()
        };
        RecordSimilarity { vectors, words }
    }
}

impl Similarity for RecordSimilarity {
    fn between(&self, a: usize, b: usize) -> f32 {
        if let (Some(x), Some(y)) = (&self.vectors[a], &self.vectors[b]) {
            return dot(x, y).clamp(-1.0, 1.0);
        }
        let (x, y) = (&self.words[a], &self.words[b]);
        // Both sorted and distinct: one merge counts the words they share.
        let (mut i, mut j, mut shared) = (0, 0, 0usize);
        while i < x.len() && j < y.len() {
            match x[i].cmp(&y[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => (i, j, shared) = (i + 1, j + 1, shared + 1),
            }
        }
        let union = x.len() + y.len() - shared;
        if union == 0 {
            return 0.0;
        }
        shared as f32 / union as f32
    }
}

/// The dot product of two vectors, in eight independent sums (which the compiler keeps in
/// one SIMD register; one running sum waits on each addition).
fn dot(x: &[f32], y: &[f32]) -> f32 {
    let mut sums = [0.0f32; 8];
    let (xs, ys) = (x.chunks_exact(8), y.chunks_exact(8));
    let tail: f32 = xs.remainder().iter().zip(ys.remainder()).map(|(p, q)| p * q).sum();
    for (a, b) in xs.zip(ys) {
        for i in 0..8 {
            sums[i] += a[i] * b[i];
        }
    }
    sums.iter().sum::<f32>() + tail
}

/// The distinct lowercased alphanumeric words of a title and body, as sorted hashes.
fn words(title: &str, body: &str) -> Vec<u64> {
    use std::hash::{Hash, Hasher};
    let distinct: HashSet<String> = title
        .split(|c: char| !c.is_alphanumeric())
        .chain(body.split(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut hashes: Vec<u64> = distinct
        .iter()
        .map(|w| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            w.hash(&mut h);
            h.finish()
        })
        .collect();
    hashes.sort_unstable();
    hashes.dedup();
    hashes
}

/// Reorders the first `want` places of `hits` by maximal marginal relevance with `lambda` (see
/// [`braid_core::SearchRequest::mmr`]); the hits not chosen follow in their previous order.
/// Greedy, so the first `n` places are the same for any `want ≥ n` (pages agree). Ties go to
/// the hit ranked higher before.
pub(super) fn mmr(hits: &mut Vec<HitWithBody>, lambda: f32, want: usize, similarity: &impl Similarity) {
    let n = hits.len();
    let best = hits.iter().map(|(h, _)| h.score).fold(0.0f32, f32::max);
    let relevance: Vec<f32> = hits.iter().map(|(h, _)| if best > 0.0 { h.score / best } else { 0.0 }).collect();
    let mut closest = vec![f32::NEG_INFINITY; n];
    let mut chosen: Vec<usize> = Vec::with_capacity(want.min(n));
    let mut taken = vec![false; n];
    while chosen.len() < want.min(n) {
        let mut next: Option<(usize, f32)> = None;
        for i in (0..n).filter(|&i| !taken[i]) {
            let penalty = if chosen.is_empty() { 0.0 } else { closest[i] };
            let value = lambda * relevance[i] - (1.0 - lambda) * penalty;
            if next.is_none_or(|(_, best)| value > best) {
                next = Some((i, value));
            }
        }
        let Some((next, _)) = next else { break };
        taken[next] = true;
        chosen.push(next);
        for i in (0..n).filter(|&i| !taken[i]) {
            closest[i] = closest[i].max(similarity.between(i, next));
        }
    }
    chosen.extend((0..n).filter(|&i| !taken[i]));
    let mut slots: Vec<Option<HitWithBody>> = hits.drain(..).map(Some).collect();
    hits.extend(chosen.into_iter().filter_map(|i| slots[i].take()));
}

#[cfg(test)]
mod tests {
    use super::*;
    use braid_core::{Explain, Snippet};

    fn hit(id: &str, score: f32, parent: Option<&str>, category: Option<&str>) -> HitWithBody {
        let mut keywords = std::collections::BTreeMap::new();
        if let Some(c) = category {
            keywords.insert("category".to_string(), vec![c.to_string()]);
        }
        let hit = Hit {
            id: id.into(),
            score,
            title: String::new(),
            snippet: Snippet::default(),
            parent: parent.map(str::to_string),
            section: Vec::new(),
            lines: None,
            keywords,
            numbers: Default::default(),
            explain: Explain::default(),
        };
        (hit, String::new())
    }

    fn ids(hits: &[HitWithBody]) -> Vec<&str> {
        hits.iter().map(|(h, _)| h.id.as_str()).collect()
    }

    #[test]
    fn groups_keep_the_best_n_by_parent_or_keyword() {
        let ranked = || {
            vec![
                hit("a#1", 0.9, Some("a"), Some("billing")),
                hit("a#2", 0.8, Some("a"), Some("billing")),
                hit("a", 0.7, None, None),
                hit("b#1", 0.6, Some("b"), None),
                hit("c", 0.5, None, Some("billing")),
            ]
        };
        let mut hits = ranked();
        group(&mut hits, &GroupBy { field: "parent".into(), per_group: 1 });
        assert_eq!(ids(&hits), ["a#1", "b#1", "c"], "an article and its sections are one group");
        let mut hits = ranked();
        group(&mut hits, &GroupBy { field: "parent".into(), per_group: 2 });
        assert_eq!(ids(&hits), ["a#1", "a#2", "b#1", "c"]);
        let mut hits = ranked();
        group(&mut hits, &GroupBy { field: "category".into(), per_group: 1 });
        assert_eq!(ids(&hits), ["a#1", "a", "b#1"], "records without the field are groups of their own");
    }

    struct Table(Vec<Vec<f32>>);
    impl Similarity for Table {
        fn between(&self, a: usize, b: usize) -> f32 {
            self.0[a][b]
        }
    }

    #[test]
    fn mmr_trades_relevance_for_difference() {
        // b is a near copy of a; c is different and a little less relevant.
        let table = Table(vec![vec![1.0, 0.95, 0.1], vec![0.95, 1.0, 0.1], vec![0.1, 0.1, 1.0]]);
        let ranked = || vec![hit("a", 1.0, None, None), hit("b", 0.9, None, None), hit("c", 0.8, None, None)];
        let mut hits = ranked();
        mmr(&mut hits, 1.0, 3, &table);
        assert_eq!(ids(&hits), ["a", "b", "c"], "lambda 1 keeps the relevance order");
        let mut hits = ranked();
        mmr(&mut hits, 0.5, 3, &table);
        assert_eq!(ids(&hits), ["a", "c", "b"]);
        // Greedy: the first place does not depend on how many are wanted.
        let mut one = ranked();
        mmr(&mut one, 0.5, 1, &table);
        assert_eq!(ids(&one), ["a", "b", "c"], "only the first place chosen; the rest keep their order");
    }

    #[test]
    fn words_overlap_when_there_are_no_vectors() {
        let hits = vec![
            (hit("a", 1.0, None, None).0, "refund policy for annual plans".to_string()),
            (hit("b", 0.9, None, None).0, "Refund policy, for annual plans!".to_string()),
            (hit("c", 0.8, None, None).0, "reset your password".to_string()),
        ];
        let similarity = RecordSimilarity::new(&hits, |_| None);
        assert!((similarity.between(0, 1) - 1.0).abs() < 1e-6);
        assert_eq!(similarity.between(0, 2), 0.0);
    }

    #[test]
    fn bad_settings_are_refused() {
        let schema = SchemaConfig::default();
        assert!(check_group(&GroupBy { field: "parent".into(), per_group: 0 }, &schema).is_err());
        assert!(matches!(
            check_group(&GroupBy { field: "nope".into(), per_group: 1 }, &schema),
            Err(Error::UnknownField { .. })
        ));
        assert!(check_group(&GroupBy { field: "category".into(), per_group: 3 }, &schema).is_ok());
        for bad in [-0.1, 1.5, f32::NAN] {
            assert!(check_mmr(bad).is_err(), "{bad}");
        }
        assert!(check_mmr(0.7).is_ok());
    }
}
