//! Running a dataset's queries through a search function and summarising.

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::beir::{Dataset, Query};
use crate::metrics::{mrr_at, ndcg_at, recall_at};
use crate::significance::{bootstrap_ci, paired_comparison, Interval, PairedComparison};

/// The ranking one query produced and how long it took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryOutcome {
    /// The query's id.
    pub query_id: String,
    /// Doc ids, best first.
    pub ranking: Vec<String>,
    /// Wall time of the search call, in microseconds.
    pub micros: u64,
}

/// Mean quality and latency of one mode on one dataset.
///
/// Serializes to the stable JSON object
/// `{"dataset", "mode", "queries", "ndcg@10", "recall@100", "mrr@10", "p50_ms", "p95_ms"}`,
/// in that order, followed (when present) by `ndcg@10_ci95`, `vs` and `per_query`; the
/// README's results table is generated from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The dataset's name.
    pub dataset: String,
    /// The search mode evaluated (`bm25`, `hybrid`, …).
    pub mode: String,
    /// Number of judged queries the means are taken over.
    pub queries: usize,
    /// Mean nDCG@10.
    #[serde(rename = "ndcg@10")]
    pub ndcg_at_10: f64,
    /// Mean Recall@100.
    #[serde(rename = "recall@100")]
    pub recall_at_100: f64,
    /// Mean MRR@10.
    #[serde(rename = "mrr@10")]
    pub mrr_at_10: f64,
    /// Median search latency, in milliseconds (nearest rank).
    pub p50_ms: f64,
    /// 95th-percentile search latency, in milliseconds (nearest rank).
    pub p95_ms: f64,
    /// Bootstrap 95 % interval of mean nDCG@10 over the queries.
    #[serde(rename = "ndcg@10_ci95", default, skip_serializing_if = "Option::is_none")]
    pub ndcg_ci95: Option<Interval>,
    /// This run against a baseline run, query by query ([`Report::compare_to`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs: Option<PairedComparison>,
    /// nDCG@10 of every judged query, by query id (0 for a query without an outcome).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub per_query: BTreeMap<String, f64>,
}

impl Report {
    /// The Markdown table header (two lines, no trailing newline) matching
    /// [`Report::table_row`].
    pub fn table_header() -> &'static str {
        "| dataset | mode | nDCG@10 | 95 % CI | Δ vs baseline (p) | Recall@100 | MRR@10 | p50 ms | p95 ms |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|"
    }

    /// Sets [`Report::vs`]: this run against `baseline` over the queries both judged (the
    /// same dataset and split). `None` when either has no per-query scores.
    pub fn compare_to(&mut self, baseline: &Report) {
        if self.per_query.is_empty() || baseline.per_query.is_empty() {
            self.vs = None;
            return;
        }
        let (mut run, mut base) = (Vec::new(), Vec::new());
        for (id, score) in &self.per_query {
            if let Some(b) = baseline.per_query.get(id) {
                run.push(*score);
                base.push(*b);
            }
        }
        self.vs = Some(paired_comparison(&baseline.mode, &run, &base));
    }

    /// This report as one Markdown table row: metrics with 4 decimals, latency
    /// with 2 decimals below 10 ms and 1 above.
    pub fn table_row(&self) -> String {
        let ci = self.ndcg_ci95.map(|c| format!("{:.4}–{:.4}", c.low, c.high)).unwrap_or_else(|| "–".into());
        let vs = self
            .vs
            .as_ref()
            .map(|v| {
                let star = if v.significant() { "*" } else { "" };
                format!("{:+.4}{star} (p {:.3}) vs {}", v.delta, v.p_value, v.baseline)
            })
            .unwrap_or_else(|| "–".into());
        format!(
            "| {} | {} | {:.4} | {ci} | {vs} | {:.4} | {:.4} | {} | {} |",
            self.dataset,
            self.mode,
            self.ndcg_at_10,
            self.recall_at_100,
            self.mrr_at_10,
            ms(self.p50_ms),
            ms(self.p95_ms),
        )
    }
}

fn ms(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.1}")
    }
}

/// Runs every judged query of `dataset` through `search`, in order, timing
/// each call, and reports mean nDCG@10, Recall@100, MRR@10 and p50/p95 latency.
///
/// `search` returns doc ids best first; only the first 100 distinct ids matter.
///
/// # Errors
///
/// Stops at the first query for which `search` fails and returns that error.
pub fn evaluate<F, E>(dataset: &Dataset, mode: &str, mut search: F) -> Result<Report, E>
where
    F: FnMut(&Query) -> Result<Vec<String>, E>,
{
    let mut outcomes = Vec::with_capacity(dataset.queries.len());
    for query in &dataset.queries {
        let start = Instant::now();
        let ranking = search(query)?;
        let micros = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
        outcomes.push(QueryOutcome { query_id: query.id.clone(), ranking, micros });
    }
    Ok(evaluate_outcomes(dataset, mode, &outcomes))
}

/// Computes a [`Report`] from rankings produced elsewhere (a parallel run, a
/// saved run file).
///
/// Means are taken over all of `dataset.queries`: a judged query with no
/// outcome scores 0 (as `trec_eval -c` counts it); outcomes for unjudged query
/// ids are ignored, and of two outcomes for one query the first is used.
/// Latency percentiles are over the outcomes used.
pub fn evaluate_outcomes(dataset: &Dataset, mode: &str, outcomes: &[QueryOutcome]) -> Report {
    let mut by_id: HashMap<&str, &QueryOutcome> = HashMap::with_capacity(outcomes.len());
    for o in outcomes {
        by_id.entry(o.query_id.as_str()).or_insert(o);
    }
    let (mut ndcg, mut recall, mut mrr) = (0.0, 0.0, 0.0);
    let mut micros = Vec::with_capacity(dataset.queries.len());
    let mut per_query = BTreeMap::new();
    for query in &dataset.queries {
        if dataset.qrels.get(&query.id).is_some() {
            per_query.insert(query.id.clone(), 0.0);
        }
        let (Some(outcome), Some(judged)) = (by_id.get(query.id.as_str()), dataset.qrels.get(&query.id)) else {
            continue;
        };
        let q = ndcg_at(&outcome.ranking, judged, 10);
        per_query.insert(query.id.clone(), q);
        ndcg += q;
        recall += recall_at(&outcome.ranking, judged, 100);
        mrr += mrr_at(&outcome.ranking, judged, 10);
        micros.push(outcome.micros);
    }
    micros.sort_unstable();
    let n = dataset.queries.len();
    let mean = |sum: f64| if n == 0 { 0.0 } else { sum / n as f64 };
    // Every query counts in the interval, a query without judgements (or outcome) as 0.
    let mut scores: Vec<f64> = per_query.values().copied().collect();
    scores.resize(n.max(scores.len()), 0.0);
    Report {
        dataset: dataset.name.clone(),
        mode: mode.to_owned(),
        queries: n,
        ndcg_at_10: mean(ndcg),
        recall_at_100: mean(recall),
        mrr_at_10: mean(mrr),
        p50_ms: percentile(&micros, 50.0),
        p95_ms: percentile(&micros, 95.0),
        ndcg_ci95: (n > 0).then(|| bootstrap_ci(&scores)),
        vs: None,
        per_query,
    }
}

/// The nearest-rank `p`-th percentile (`p` in 0..=100, clamped) of
/// ascending-sorted microsecond timings, in milliseconds: the value at 1-based
/// rank `ceil(p / 100 × n)`, at least rank 1. 0 for an empty slice.
pub fn percentile(sorted_micros: &[u64], p: f64) -> f64 {
    let n = sorted_micros.len();
    if n == 0 {
        return 0.0;
    }
    let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 100.0) };
    // `rank` is in 0..=n, so the cast is exact.
    let rank = (p / 100.0 * n as f64).ceil() as usize;
    sorted_micros[rank.clamp(1, n) - 1] as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::beir::Qrels;
    use serde_json::Map;

    fn dataset() -> Dataset {
        let qrels: Qrels = [("q1", "a", 2), ("q1", "b", 1), ("q2", "c", 1), ("q3", "d", 0)]
            .into_iter()
            .map(|(q, d, g)| (q.to_owned(), d.to_owned(), g))
            .collect();
        let queries = qrels
            .query_ids()
            .into_iter()
            .map(|id| Query { id: id.to_owned(), text: format!("text of {id}"), metadata: Map::new() })
            .collect();
        Dataset { name: "tiny".into(), root: "tiny".into(), queries, qrels }
    }

    fn outcome(q: &str, ranking: &[&str], micros: u64) -> QueryOutcome {
        QueryOutcome { query_id: q.into(), ranking: ranking.iter().map(|s| (*s).to_owned()).collect(), micros }
    }

    #[test]
    fn percentile_is_nearest_rank() {
        let v: Vec<u64> = (1..=20).map(|i| i * 1000).collect();
        assert_eq!(percentile(&v, 50.0), 10.0);
        assert_eq!(percentile(&v, 95.0), 19.0);
        assert_eq!(percentile(&v, 100.0), 20.0);
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&v, 250.0), 20.0);
        assert_eq!(percentile(&v, f64::NAN), 1.0);
        assert_eq!(percentile(&[1500], 50.0), 1.5);
        assert_eq!(percentile(&[], 50.0), 0.0);
        // n = 3: p50 → rank ceil(1.5) = 2; p95 → rank 3.
        assert_eq!(percentile(&[1000, 2000, 9000], 50.0), 2.0);
        assert_eq!(percentile(&[1000, 2000, 9000], 95.0), 9.0);
    }

    #[test]
    fn outcomes_give_mean_metrics() {
        let ds = dataset();
        // q1 perfect, q2 relevant at rank 2, q3 has no relevant doc (0 everywhere).
        let outs = [
            outcome("q3", &["d"], 3000),
            outcome("q1", &["a", "b"], 1000),
            outcome("q2", &["x", "c"], 2000),
            outcome("q1", &["zzz"], 1),
            outcome("unjudged", &["a"], 1),
        ];
        let r = evaluate_outcomes(&ds, "bm25", &outs);
        assert_eq!(r.queries, 3);
        let q2_ndcg = 1.0 / 3f64.log2();
        assert!((r.ndcg_at_10 - (1.0 + q2_ndcg) / 3.0).abs() < 1e-12);
        assert!((r.recall_at_100 - 2.0 / 3.0).abs() < 1e-12);
        assert!((r.mrr_at_10 - 1.5 / 3.0).abs() < 1e-12);
        assert_eq!((r.p50_ms, r.p95_ms), (2.0, 3.0));
        assert_eq!(r.per_query.len(), 3);
        assert_eq!((r.per_query["q1"], r.per_query["q3"]), (1.0, 0.0));
        let ci = r.ndcg_ci95.unwrap();
        assert!(ci.low <= r.ndcg_at_10 && r.ndcg_at_10 <= ci.high && ci.low >= 0.0 && ci.high <= 1.0, "{ci:?}");

        // A judged query without an outcome scores 0 but still counts.
        let r = evaluate_outcomes(&ds, "bm25", &outs[1..2]);
        assert_eq!(r.queries, 3);
        assert!((r.ndcg_at_10 - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(r.p50_ms, 1.0);
    }

    #[test]
    fn evaluate_runs_in_order_and_passes_errors_through() {
        let ds = dataset();
        let mut seen = Vec::new();
        let r = evaluate(&ds, "oracle", |q| {
            seen.push(q.id.clone());
            let judged = ds.qrels.get(&q.id).unwrap();
            let mut docs: Vec<(&String, &i32)> = judged.iter().collect();
            docs.sort_by(|a, b| b.1.cmp(a.1));
            Ok::<_, String>(docs.into_iter().map(|(d, _)| d.clone()).collect())
        })
        .unwrap();
        assert_eq!(seen, vec!["q1", "q2", "q3"]);
        assert!((r.ndcg_at_10 - 2.0 / 3.0).abs() < 1e-12, "q3 cannot score");
        assert_eq!((r.dataset.as_str(), r.mode.as_str()), ("tiny", "oracle"));

        let err =
            evaluate(&ds, "broken", |q| if q.id == "q2" { Err(format!("boom on {}", q.id)) } else { Ok(Vec::new()) });
        assert_eq!(err, Err("boom on q2".to_owned()));
    }

    #[test]
    fn empty_dataset_reports_zeros() {
        let ds = Dataset { name: "empty".into(), root: "empty".into(), queries: Vec::new(), qrels: Qrels::default() };
        let r = evaluate(&ds, "bm25", |_| Ok::<_, ()>(Vec::new())).unwrap();
        assert_eq!(r.queries, 0);
        assert_eq!((r.ndcg_at_10, r.p50_ms), (0.0, 0.0));
    }

    #[test]
    fn report_json_and_table_are_stable() {
        let r = Report {
            dataset: "scifact".into(),
            mode: "bm25".into(),
            queries: 300,
            ndcg_at_10: 0.66081234,
            recall_at_100: 0.8859,
            mrr_at_10: 0.625,
            p50_ms: 1.234,
            p95_ms: 12.34,
            ndcg_ci95: None,
            vs: None,
            per_query: BTreeMap::new(),
        };
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(
            json,
            r#"{"dataset":"scifact","mode":"bm25","queries":300,"ndcg@10":0.66081234,"recall@100":0.8859,"mrr@10":0.625,"p50_ms":1.234,"p95_ms":12.34}"#
        );
        let back: Report = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
        assert_eq!(r.table_row(), "| scifact | bm25 | 0.6608 | – | – | 0.8859 | 0.6250 | 1.23 | 12.3 |");
        let mut better = r.clone();
        better.ndcg_ci95 = Some(Interval { low: 0.61, high: 0.71 });
        better.per_query = (0..100).map(|i| (format!("q{i}"), 0.5)).collect();
        let mut base = better.clone();
        base.mode = "hybrid".into();
        base.per_query.values_mut().for_each(|v| *v = 0.25);
        better.compare_to(&base);
        assert_eq!(better.table_row(), "| scifact | bm25 | 0.6608 | 0.6100–0.7100 | +0.2500* (p 0.000) vs hybrid | 0.8859 | 0.6250 | 1.23 | 12.3 |");
        let json = serde_json::to_string(&better).unwrap();
        assert_eq!(serde_json::from_str::<Report>(&json).unwrap(), better);
        assert_eq!(Report::table_header().lines().count(), 2);
        let cols = |s: &str| s.matches('|').count();
        assert_eq!(cols(Report::table_header().lines().next().unwrap()), cols(&r.table_row()));
    }
}
