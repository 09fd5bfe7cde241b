//! Quality on a public dataset, measured the way BEIR's published numbers are.

use braid::{Index, Mode, Principal, SearchRequest};
use braid_eval::{evaluate, misspell_query, Dataset};

use crate::common::{index_of, shared_datasets};

fn scifact_index() -> (Index, Dataset) {
    let dir = shared_datasets().join("scifact");
    (index_of(&dir), Dataset::load(&dir, "test").unwrap())
}

fn ndcg(index: &Index, dataset: &Dataset, mode: Mode, typos: bool) -> f64 {
    let report = evaluate(dataset, mode.name(), |q| -> braid::Result<Vec<String>> {
        let text = if typos { misspell_query(&q.text, &q.id) } else { q.text.clone() };
        let r = index.search(&SearchRequest::new(text, Principal::public()).mode(mode).k(100).suggest(false))?;
        Ok(r.hits.into_iter().map(|h| h.id).collect())
    })
    .unwrap();
    assert_eq!(report.queries, 300);
    report.ndcg_at_10
}

/// Done-means of the foundation: BM25 at or above the published range, and typo tolerance.
#[test]
fn scifact_lexical_quality_and_typo_tolerance() {
    let (index, dataset) = scifact_index();
    assert_eq!(index.num_records(), 5183);
    let lexical = ndcg(&index, &dataset, Mode::Lexical, false);
    assert!(lexical >= 0.670, "SciFact lexical nDCG@10 = {lexical:.4}");
    let lexical_typos = ndcg(&index, &dataset, Mode::Lexical, true);
    let fuzzy_typos = ndcg(&index, &dataset, Mode::Fuzzy, true);
    let hybrid_typos = ndcg(&index, &dataset, Mode::Hybrid, true);
    eprintln!(
        "scifact nDCG@10: lexical {lexical:.4}; with typos: lexical {lexical_typos:.4}, fuzzy {fuzzy_typos:.4}, \
         hybrid {hybrid_typos:.4}"
    );
    assert!(fuzzy_typos >= 0.9 * lexical, "fuzzy keeps {:.1} %", 100.0 * fuzzy_typos / lexical);
    assert!(hybrid_typos >= 0.9 * lexical, "hybrid keeps {:.1} %", 100.0 * hybrid_typos / lexical);
    assert!(fuzzy_typos > lexical_typos, "the fuzzy leg must beat BM25 on misspelled queries");
}
