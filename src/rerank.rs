//! The rerank stage: a cross-encoder rescores the top fused candidates.
//!
//! Only candidates fusion produced are scored, never more than the budget, and the final
//! order of that prefix follows the cross-encoder's score with the fused rank as tie-break;
//! candidates past the budget keep their fused order after it. The passage a cross-encoder
//! reads is the record's title, heading path and body (the model's own limit truncates the
//! passage, never the query). Passages go to the model in batches of [`BATCH`], and the
//! request's deadline is checked before each batch.

use braid_core::{Hit, Reranker, Result, SearchRequest};

/// Passages per cross-encoder call: the unit of work between two deadline checks.
const BATCH: usize = 8;

/// Rescores the first `budget` hits in place; returns how many were scored.
pub(crate) fn rerank(
    reranker: &dyn Reranker,
    query: &str,
    hits: &mut [(Hit, String)],
    budget: usize,
    request: &SearchRequest,
) -> Result<usize> {
    let n = budget.min(hits.len());
    if n == 0 || query.trim().is_empty() {
        return Ok(0);
    }
    let passages: Vec<String> = hits[..n].iter().map(|(hit, body)| passage(hit, body)).collect();
    let refs: Vec<&str> = passages.iter().map(String::as_str).collect();
    let mut scores = Vec::with_capacity(n);
    for batch in refs.chunks(BATCH) {
        request.check_deadline()?;
        let got = reranker.score(query, batch)?;
        if got.len() != batch.len() {
            return Err(braid_core::Error::Model {
                reason: format!("the reranker returned {} scores for {} passages", got.len(), batch.len()),
            });
        }
        scores.extend(got);
    }
    for ((hit, _), score) in hits[..n].iter_mut().zip(scores) {
        hit.explain.rerank = Some(if score.is_finite() { score } else { f32::MIN });
    }
    hits[..n].sort_by(|(a, _), (b, _)| {
        let (sa, sb) = (a.explain.rerank.unwrap_or(f32::MIN), b.explain.rerank.unwrap_or(f32::MIN));
        sb.total_cmp(&sa).then(a.explain.fused_rank.cmp(&b.explain.fused_rank))
    });
    Ok(n)
}

fn passage(hit: &Hit, body: &str) -> String {
    let mut out = hit.title.clone();
    if !hit.section.is_empty() {
        out.push_str(" — ");
        out.push_str(&hit.section.join(" > "));
    }
    out.push('\n');
    out.push_str(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use braid_core::{Explain, Snippet};

    struct ByLength;
    impl Reranker for ByLength {
        fn model_id(&self) -> &str {
            "by-length"
        }
        fn score(&self, _: &str, passages: &[&str]) -> Result<Vec<f32>> {
            Ok(passages.iter().map(|p| p.len() as f32).collect())
        }
    }

    fn hit(id: &str, rank: usize) -> (Hit, String) {
        let hit = Hit {
            id: id.into(),
            score: 1.0 / rank as f32,
            title: id.into(),
            snippet: Snippet::default(),
            parent: None,
            section: Vec::new(),
            lines: None,
            keywords: Default::default(),
            numbers: Default::default(),
            explain: Explain {
                legs: Vec::new(),
                fused: 1.0 / rank as f32,
                fused_rank: rank,
                rerank: None,
                boost: None,
            },
        };
        (hit, "x".repeat(rank))
    }

    #[test]
    fn reorders_only_the_budget_and_ties_keep_fused_order() {
        let mut hits = vec![hit("a", 1), hit("b", 2), hit("c", 3), hit("d", 4)];
        let req = SearchRequest::new("q", braid_core::Principal::public());
        let n = rerank(&ByLength, "q", &mut hits, 3, &req).unwrap();
        assert_eq!(n, 3);
        let ids: Vec<&str> = hits.iter().map(|(h, _)| h.id.as_str()).collect();
        assert_eq!(ids, ["c", "b", "a", "d"]);
        assert!(hits[3].0.explain.rerank.is_none());
        assert_eq!(rerank(&ByLength, "  ", &mut hits, 3, &req).unwrap(), 0);
    }

    #[test]
    fn a_passed_deadline_stops_before_the_model_runs() {
        let mut hits: Vec<(Hit, String)> = (1..=20).map(|r| hit(&format!("h{r}"), r)).collect();
        let req = SearchRequest::new("q", braid_core::Principal::public()).deadline(std::time::Instant::now());
        let err = rerank(&ByLength, "q", &mut hits, 20, &req).unwrap_err();
        assert!(matches!(err, braid_core::Error::DeadlineExceeded), "{err}");
        assert!(hits.iter().all(|(h, _)| h.explain.rerank.is_none()));
    }
}
