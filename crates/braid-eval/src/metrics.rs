//! Ranking metrics, computed as trec_eval (and so pytrec_eval and BEIR) does.
//!
//! Shared rules:
//! - A ranking is a list of doc ids, best first. A doc id counts only at its
//!   first occurrence: later repeats are dropped before ranks are assigned, so
//!   "top k" means the first `k` distinct ids (pytrec_eval receives a
//!   `{doc: score}` map and cannot see a repeat either).
//! - A document is relevant when its grade is above 0; unjudged documents and
//!   grades of 0 or below are non-relevant.
//! - `k = 0`, an empty ranking, or a query without relevant documents gives 0.

use std::collections::{HashMap, HashSet};

/// nDCG@k with linear gain (gain = grade, not 2^grade − 1) and discount
/// `log2(rank + 1)` for 1-based ranks, normalised by the ideal DCG of the
/// judged grades sorted in decreasing order (trec_eval's `ndcg_cut.k`).
///
/// Returns 0 when the ideal DCG is 0 (no document has a grade above 0).
pub fn ndcg_at(ranking: &[String], judged: &HashMap<String, i32>, k: usize) -> f64 {
    let mut ideal: Vec<i32> = judged.values().copied().filter(|&g| g > 0).collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal.iter().take(k).enumerate().map(|(i, &g)| f64::from(g) / discount(i)).sum();
    if idcg <= 0.0 {
        return 0.0;
    }
    let dcg: f64 = distinct_top(ranking, k)
        .enumerate()
        .map(|(i, id)| match judged.get(id) {
            Some(&g) if g > 0 => f64::from(g) / discount(i),
            _ => 0.0,
        })
        .sum();
    dcg / idcg
}

/// Recall@k: relevant documents among the first `k` distinct ids, divided by
/// the number of relevant documents (trec_eval's `recall.k`).
pub fn recall_at(ranking: &[String], judged: &HashMap<String, i32>, k: usize) -> f64 {
    let relevant = judged.values().filter(|&&g| g > 0).count();
    if relevant == 0 {
        return 0.0;
    }
    hits(ranking, judged, k) as f64 / relevant as f64
}

/// MRR@k: `1 / rank` of the first relevant document among the first `k`
/// distinct ids, 0 when there is none (BEIR's `MRR@k`, trec_eval's
/// `recip_rank` on a ranking cut at `k`).
pub fn mrr_at(ranking: &[String], judged: &HashMap<String, i32>, k: usize) -> f64 {
    distinct_top(ranking, k).position(|id| is_relevant(judged, id)).map_or(0.0, |i| 1.0 / (i + 1) as f64)
}

/// Precision@k: relevant documents among the first `k` distinct ids, divided
/// by `k` (trec_eval's `P.k`: a ranking shorter than `k` is not rescaled).
pub fn precision_at(ranking: &[String], judged: &HashMap<String, i32>, k: usize) -> f64 {
    if k == 0 {
        return 0.0;
    }
    hits(ranking, judged, k) as f64 / k as f64
}

fn hits(ranking: &[String], judged: &HashMap<String, i32>, k: usize) -> usize {
    distinct_top(ranking, k).filter(|id| is_relevant(judged, id)).count()
}

fn is_relevant(judged: &HashMap<String, i32>, id: &str) -> bool {
    judged.get(id).is_some_and(|&g| g > 0)
}

/// `log2(rank + 1)` for the 0-based position `i` (1-based rank `i + 1`).
fn discount(i: usize) -> f64 {
    ((i + 2) as f64).log2()
}

/// The first `k` distinct ids of `ranking`, in order.
fn distinct_top(ranking: &[String], k: usize) -> impl Iterator<Item = &str> {
    let mut seen = HashSet::with_capacity(k.min(ranking.len()));
    ranking.iter().map(String::as_str).filter(move |id| seen.insert(*id)).take(k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ids(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| (*s).to_owned()).collect()
    }

    fn qrels(xs: &[(&str, i32)]) -> HashMap<String, i32> {
        xs.iter().map(|(d, g)| ((*d).to_owned(), *g)).collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn graded_ndcg_by_hand() {
        // judged: a=3, b=2, c=1, d=0; ranking: c, x (unjudged), a, b.
        //   DCG  = 1/log2(2) + 0/log2(3) + 3/log2(4) + 2/log2(5)
        //        = 1 + 0 + 1.5 + 0.8613531161467861      = 3.3613531161467862
        //   IDCG = 3/log2(2) + 2/log2(3) + 1/log2(4)       (d's grade 0 adds nothing)
        //        = 3 + 1.2618595071429148 + 0.5          = 4.7618595071429155
        //   nDCG@10 = 3.3613531161467862 / 4.7618595071429155 = 0.7058908628246313
        // With exponential gain (2^g − 1) it would be 0.6166 instead: not trec_eval.
        let judged = qrels(&[("a", 3), ("b", 2), ("c", 1), ("d", 0)]);
        let run = ids(&["c", "x", "a", "b"]);
        assert!(close(ndcg_at(&run, &judged, 10), 0.705_890_862_824_631_3));
        // @3: DCG = 1 + 1.5 = 2.5; IDCG = 3 + 1.2618595071429148 + 0.5.
        assert!(close(ndcg_at(&run, &judged, 3), 2.5 / 4.761_859_507_142_915_5));
        // @1: c (1) against the ideal a (3).
        assert!(close(ndcg_at(&run, &judged, 1), 1.0 / 3.0));
        assert!(close(recall_at(&run, &judged, 10), 1.0));
        assert!(close(recall_at(&run, &judged, 2), 1.0 / 3.0));
        assert!(close(mrr_at(&run, &judged, 10), 1.0));
        assert!(close(precision_at(&run, &judged, 4), 0.75));
    }

    #[test]
    fn mrr_and_recall_by_hand() {
        let judged = qrels(&[("r1", 1), ("r2", 1), ("r3", 1), ("r4", 1), ("n", 0)]);
        let run = ids(&["x", "n", "r2", "y", "r4"]);
        assert!(close(mrr_at(&run, &judged, 10), 1.0 / 3.0));
        assert!(close(mrr_at(&run, &judged, 3), 1.0 / 3.0));
        assert_eq!(mrr_at(&run, &judged, 2), 0.0);
        assert!(close(recall_at(&run, &judged, 100), 0.5));
        assert!(close(recall_at(&run, &judged, 4), 0.25));
        assert!(close(precision_at(&run, &judged, 10), 0.2));
        // Binary nDCG@5: DCG = 1/log2(4) + 1/log2(6); IDCG = sum over ranks 1..4.
        let dcg = 0.5 + 1.0 / 6f64.log2();
        let idcg = 1.0 + 1.0 / 3f64.log2() + 0.5 + 1.0 / 5f64.log2();
        assert!(close(ndcg_at(&run, &judged, 5), dcg / idcg));
    }

    #[test]
    fn duplicates_count_once_and_close_up() {
        let judged = qrels(&[("a", 1), ("b", 1)]);
        // Deduped to [a, b]: both within the top 2.
        let run = ids(&["a", "a", "b"]);
        assert!(close(ndcg_at(&run, &judged, 2), 1.0));
        assert!(close(recall_at(&run, &judged, 2), 1.0));
        assert!(close(precision_at(&run, &judged, 2), 1.0));
        // A relevant doc repeated never earns more than once.
        let run = ids(&["a", "a", "a", "a"]);
        assert!(close(recall_at(&run, &judged, 10), 0.5));
        let idcg = 1.0 + 1.0 / 3f64.log2();
        assert!(close(ndcg_at(&run, &judged, 10), 1.0 / idcg));
        assert!(close(precision_at(&run, &judged, 4), 0.25));
    }

    #[test]
    fn empty_and_degenerate_inputs_give_zero() {
        let judged = qrels(&[("a", 2)]);
        let none: Vec<String> = Vec::new();
        for f in [ndcg_at, recall_at, mrr_at, precision_at] {
            assert_eq!(f(&none, &judged, 10), 0.0);
            assert_eq!(f(&ids(&["a"]), &judged, 0), 0.0);
            assert_eq!(f(&ids(&["a"]), &HashMap::new(), 10), 0.0);
        }
        // All judged docs have grade 0 (or below): ideal DCG is 0, so everything is 0.
        let zero = qrels(&[("a", 0), ("b", 0), ("c", -1)]);
        let run = ids(&["a", "b", "c"]);
        for f in [ndcg_at, recall_at, mrr_at, precision_at] {
            assert_eq!(f(&run, &zero, 10), 0.0);
        }
    }

    #[test]
    fn negative_grades_are_not_relevant() {
        let judged = qrels(&[("a", 1), ("bad", -2)]);
        let run = ids(&["bad", "a"]);
        assert!(close(ndcg_at(&run, &judged, 10), 1.0 / 3f64.log2()));
        assert!(close(mrr_at(&run, &judged, 10), 0.5));
    }

    fn dedup(run: &[String]) -> Vec<String> {
        let mut seen = HashSet::new();
        run.iter().filter(|d| seen.insert(d.as_str())).cloned().collect()
    }

    /// Docs `j0..j9` may be judged (grades −1..=3); `u0..u9` never are.
    fn case() -> impl Strategy<Value = (HashMap<String, i32>, Vec<String>, usize)> {
        (proptest::collection::vec(-1i32..=3, 10), proptest::collection::vec(0usize..20, 0..30), 0usize..25).prop_map(
            |(grades, picks, k)| {
                let judged = grades.iter().enumerate().map(|(i, &g)| (format!("j{i}"), g)).collect();
                let run =
                    picks.iter().map(|&p| if p < 10 { format!("j{p}") } else { format!("u{}", p - 10) }).collect();
                (judged, run, k)
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn metrics_stay_in_unit_interval((judged, run, k) in case()) {
            for f in [ndcg_at, recall_at, mrr_at, precision_at] {
                let v = f(&run, &judged, k);
                prop_assert!((0.0..=1.0 + 1e-12).contains(&v), "{v}");
            }
        }

        #[test]
        fn ideal_ranking_scores_one((judged, _run, k) in case()) {
            let mut ideal: Vec<(&String, &i32)> = judged.iter().collect();
            ideal.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
            let ideal: Vec<String> = ideal.into_iter().map(|(d, _)| d.clone()).collect();
            let any_relevant = judged.values().any(|&g| g > 0);
            let expected = if any_relevant && k > 0 { 1.0 } else { 0.0 };
            prop_assert!(close(ndcg_at(&ideal, &judged, k), expected));
            prop_assert!(close(mrr_at(&ideal, &judged, k), expected));
        }

        #[test]
        fn shuffling_unjudged_docs_changes_nothing((judged, run, k) in case(), shift in 0usize..30) {
            // On a duplicate-free run, rotate the unjudged ids among their own slots.
            let run = dedup(&run);
            let slots: Vec<usize> = (0..run.len()).filter(|&i| run[i].starts_with('u')).collect();
            let mut moved = run.clone();
            for (n, &i) in slots.iter().enumerate() {
                moved[i] = run[slots[(n + shift) % slots.len()]].clone();
            }
            for f in [ndcg_at, recall_at, mrr_at, precision_at] {
                prop_assert_eq!(f(&run, &judged, k), f(&moved, &judged, k));
            }
        }

        #[test]
        fn repeats_are_the_same_as_dropping_them((judged, run, k) in case()) {
            let deduped = dedup(&run);
            for f in [ndcg_at, recall_at, mrr_at, precision_at] {
                prop_assert_eq!(f(&run, &judged, k), f(&deduped, &judged, k));
            }
        }
    }
}
