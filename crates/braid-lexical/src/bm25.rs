//! BM25 as tantivy scores it, with the length normalisation computed once per field and query.
//!
//! tantivy's [`Bm25Weight`](tantivy::query::Bm25Weight) carries a 256-entry table of
//! `k1 · (1 − b + b · length / average)`, one entry per encoded field length, computed anew
//! for every term (256 divisions) and copied with it (a kilobyte) each time the weight is
//! boosted or collected. The table depends only on the field's average length, which a query
//! shares between all its terms of a field: [`Lengths`] computes it once, and a [`TermWeight`]
//! is the term's factor alone. The formula, its constants and the order of every float
//! operation are tantivy's, so each score is bit for bit what `Bm25Weight::score` returns
//! (tested below against tantivy itself).

use tantivy::fieldnorm::FieldNormReader;
use tantivy::Score;

/// BM25's term-frequency saturation, as tantivy sets it.
const K1: Score = 1.2;
/// BM25's length normalisation, as tantivy sets it.
const B: Score = 0.75;

/// The length part of BM25's denominator for each encoded field length, given the field's
/// average length over the allowed records.
#[derive(Debug, Clone)]
pub(crate) struct Lengths {
    table: [Score; 256],
}

impl Lengths {
    pub(crate) fn new(average: Score) -> Self {
        let mut table = [0.0; 256];
        for (id, entry) in table.iter_mut().enumerate() {
            let length = FieldNormReader::id_to_fieldnorm(id as u8);
            *entry = K1 * (1.0 - B + B * length as Score / average);
        }
        Lengths { table }
    }
}

/// A term's BM25 factor: `idf · (1 + k1) · boost`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TermWeight(Score);

impl TermWeight {
    /// The weight of a term `doc_freq` of `docs` records hold, multiplied by `boost`.
    /// (`docs − doc_freq` is taken as 0 should the statistics ever give more holders than
    /// records, where tantivy would panic.)
    pub(crate) fn new(doc_freq: u64, docs: u64, boost: Score) -> Self {
        let x = (docs.saturating_sub(doc_freq) as Score + 0.5) / (doc_freq as Score + 0.5);
        let idf = (1.0 + x).ln();
        TermWeight(idf * (1.0 + K1) * boost)
    }

    /// The score of a posting with encoded field length `length_id` and `term_freq`
    /// occurrences.
    #[inline]
    pub(crate) fn score(self, lengths: &Lengths, length_id: u8, term_freq: u32) -> Score {
        let term_freq = term_freq as Score;
        self.0 * (term_freq / (term_freq + lengths.table[length_id as usize]))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use tantivy::query::Bm25Weight;

    use super::*;

    proptest! {
        /// Every score is tantivy's, bit for bit, whatever the statistics, boost, length and
        /// frequency.
        #[test]
        fn scores_are_tantivys(
            docs in 1u64..5_000_000,
            share in 0.0f64..=1.0,
            average in 0.5f32..5_000.0,
            boost in prop_oneof![Just(1.0f32), 0.01f32..4.0],
            length_id in any::<u8>(),
            term_freq in 1u32..10_000,
        ) {
            let doc_freq = ((docs as f64 * share) as u64).clamp(1, docs);
            let theirs = Bm25Weight::for_one_term_without_explain(doc_freq, docs, average).boost_by(boost);
            let ours = TermWeight::new(doc_freq, docs, boost);
            let lengths = Lengths::new(average);
            prop_assert_eq!(
                ours.score(&lengths, length_id, term_freq).to_bits(),
                theirs.score(length_id, term_freq).to_bits()
            );
        }
    }
}
