//! A record's score when it has several vectors: mostly its best vector's, partly its first's.
//!
//! A long record is embedded as its whole text (the model's first 256 tokens: its first
//! vector) and as overlapping passages. Scored by its best vector alone, one passage that
//! happens to match decides; [`VectorStore::search_records`] mixes in the first vector's
//! cosine, `(1 − s) · best + s · first` with `s` = [`FIRST_VECTOR_SHARE`], so the record as a
//! whole has a say. Records are found by their best vector, as [`VectorStore::search`] finds
//! them, and the `k` found are rescored and reordered (a record with one vector keeps its
//! score: its best is its first).
//!
//! Fitted on the training splits only, in the fused ranking (`scripts/record_score_study.py`,
//! results/record-score-study.txt, docs/ranking.md "Tenth round").

use braid_core::{AllowedSet, Error, Result};

use crate::search::{better, VectorSearch};
use crate::store::VectorStore;

/// The first vector's share of a record's score in the semantic leg: the best of six mixes on
/// the fitting splits (macro nDCG@10 +0.0013 over the best vector alone, every group up:
/// SciFact `train` +0.0020 clean and +0.0027 misspelt, NFCorpus `train`+`dev` +0.0004 and
/// +0.0003).
pub const FIRST_VECTOR_SHARE: f32 = 0.1;

impl VectorStore {
    /// The `k` allowed records most similar to `query` by their best vector, each scored
    /// `(1 − first_share) · best + first_share · first` (its first vector's cosine), best
    /// first (module docs). `first_share` 0 gives [`VectorStore::search`]'s hits.
    ///
    /// # Errors
    ///
    /// As [`VectorStore::search`]; [`Error::InvalidRequest`] for a share outside `[0, 1]`.
    pub fn search_records(
        &self,
        query: &[f32],
        k: usize,
        allowed: &AllowedSet,
        first_share: f32,
    ) -> Result<VectorSearch> {
        if !(0.0..=1.0).contains(&first_share) {
            return Err(Error::invalid_request(format!("first vector share {first_share} is outside [0, 1]")));
        }
        let mut found = self.search(query, k, allowed)?;
        if first_share == 0.0 || found.hits.is_empty() {
            return Ok(found);
        }
        let query = self.rows.query(self.check_query(query)?);
        for (ord, score) in &mut found.hits {
            let first = self.first_slot(*ord).expect("a hit is a live record");
            if self.run(first).len() > 1 {
                *score = (1.0 - first_share) * *score + first_share * self.rows.score(&query, first);
            }
        }
        found.hits.sort_by(better);
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use braid_core::{AccessPolicy, OrdSet, Ordinal, Principal, Visibility};

    use super::*;
    use crate::HnswParams;

    fn allowed(ords: impl IntoIterator<Item = Ordinal>) -> AllowedSet {
        AllowedSet::new(
            Visibility::new(Principal::public(), AccessPolicy::Public, None),
            ords.into_iter().collect::<OrdSet>(),
        )
    }

    /// Record 1 has one vector; record 2 a weak whole text and a passage close to the query;
    /// record 3 a whole text nearly as close as record 2's passage.
    fn store() -> VectorStore {
        let mut store = VectorStore::new(2, HnswParams::default());
        store
            .insert_passages(&[
                (1, vec![vec![0.6, 0.8]]),
                (2, vec![vec![0.0, 1.0], vec![1.0, 0.05]]),
                (3, vec![vec![1.0, 0.2], vec![0.0, 1.0]]),
            ])
            .unwrap();
        store
    }

    #[test]
    fn a_record_scores_by_its_best_vector_and_its_first() {
        let store = store();
        let query = [1.0, 0.0];
        let cos = |v: [f32; 2]| v[0] / (v[0] * v[0] + v[1] * v[1]).sqrt();
        let plain = store.search(&query, 3, &allowed([1, 2, 3])).unwrap().hits;
        assert_eq!(plain.iter().map(|h| h.0).collect::<Vec<_>>(), [2, 3, 1], "best vector alone");
        let mixed = store.search_records(&query, 3, &allowed([1, 2, 3]), 0.5).unwrap().hits;
        assert_eq!(mixed.iter().map(|h| h.0).collect::<Vec<_>>(), [3, 1, 2], "the whole text has a say");
        let expected = |ord: Ordinal| match ord {
            1 => cos([0.6, 0.8]),
            2 => 0.5 * cos([1.0, 0.05]) + 0.5 * cos([0.0, 1.0]),
            _ => 0.5 * cos([1.0, 0.2]) + 0.5 * cos([1.0, 0.2]),
        };
        for (ord, score) in mixed {
            assert!((score - expected(ord)).abs() < 1e-6, "record {ord}: {score} against {}", expected(ord));
        }
    }

    #[test]
    fn no_share_is_the_plain_search_and_a_bad_share_is_an_error() {
        let store = store();
        let everything = allowed([1, 2, 3]);
        let plain = store.search(&[0.3, 0.7], 3, &everything).unwrap().hits;
        assert_eq!(store.search_records(&[0.3, 0.7], 3, &everything, 0.0).unwrap().hits, plain);
        for bad in [-0.1, 1.5, f32::NAN] {
            assert!(store.search_records(&[0.3, 0.7], 3, &everything, bad).is_err(), "{bad}");
        }
    }

    /// Only allowed records are found and rescored.
    #[test]
    fn rescoring_stays_inside_the_allowed_set() {
        let store = store();
        let hits = store.search_records(&[1.0, 0.0], 3, &allowed([1, 2]), FIRST_VECTOR_SHARE).unwrap().hits;
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [2, 1]);
    }
}
