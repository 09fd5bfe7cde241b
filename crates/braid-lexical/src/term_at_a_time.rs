//! The top k of a sum of BM25 terms, scored term at a time.
//!
//! The lexical leg's query is a flat union: the sum, over the query's analysed terms, of each
//! term's BM25 in the body and its boosted BM25 in the title. Tantivy runs such a union
//! document at a time with block-max WAND, which pays per document for keeping a dozen or more
//! postings cursors in order, and per query for building a scorer tree. On segments of up to
//! [`DENSE_MAX_DOCS`] documents it is cheaper to walk each term's postings once, block by
//! block, adding its scores into one accumulator per document, then to take the top k of the
//! accumulator, as Lucene's `BooleanScorer` does for disjunctions. The scores are tantivy's
//! own ([`Bm25Weight`], same statistics), so both paths rank alike; larger segments keep WAND,
//! which skips most of their postings.

use tantivy::query::{Bm25StatisticsProvider, Bm25Weight};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocAddress, Score, Searcher, Term};

use crate::visibility::AllowedDocs;

/// Segments of at most this many documents are scored term at a time (an accumulator of
/// 512 KiB); a searcher with a larger one uses tantivy's block-max WAND.
pub(crate) const DENSE_MAX_DOCS: u32 = 1 << 17;

/// One term of the union and the boost its BM25 is multiplied by.
#[derive(Debug, Clone)]
pub(crate) struct WeightedTerm {
    pub term: Term,
    pub boost: Score,
}

impl WeightedTerm {
    pub fn new(field: Field, text: &str, boost: Score) -> Self {
        WeightedTerm { term: Term::from_field_text(field, text), boost }
    }
}

/// Whether every segment of `searcher` is small enough to score term at a time.
pub(crate) fn fits(searcher: &Searcher) -> bool {
    searcher.segment_readers().iter().all(|s| s.max_doc() <= DENSE_MAX_DOCS)
}

/// The `k` best `(score, address)` of the union of `terms` over the documents `allowed`
/// admits, best first, ties broken by address as [`tantivy::collector::TopDocs`] does.
pub(crate) fn top_k(
    searcher: &Searcher,
    terms: &[WeightedTerm],
    allowed: &AllowedDocs,
    k: usize,
) -> tantivy::Result<Vec<(Score, DocAddress)>> {
    let segments = searcher.segment_readers();
    // Index-wide statistics, as tantivy's TermQuery computes them: document frequency summed
    // over segments, average field length over every document slot.
    let mut infos = Vec::with_capacity(terms.len() * segments.len());
    let mut weights = Vec::with_capacity(terms.len());
    let total_docs = Bm25StatisticsProvider::total_num_docs(searcher)?;
    let mut averages: Vec<(Field, Score)> = Vec::with_capacity(2);
    for t in terms {
        let field = t.term.field();
        let mut doc_freq = 0u64;
        for segment in segments {
            let info = segment.inverted_index(field)?.get_term_info(&t.term)?;
            doc_freq += info.as_ref().map_or(0, |i| u64::from(i.doc_freq));
            infos.push(info);
        }
        let average = match averages.iter().find(|(f, _)| *f == field) {
            Some((_, a)) => *a,
            None => {
                let a = searcher.total_num_tokens(field)? as Score / total_docs.max(1) as Score;
                averages.push((field, a));
                a
            }
        };
        weights.push(
            (doc_freq > 0)
                .then(|| Bm25Weight::for_one_term_without_explain(doc_freq, total_docs, average).boost_by(t.boost)),
        );
    }

    let mut top = TopK::new(k);
    let mut scores: Vec<Score> = Vec::new();
    for (segment_ord, segment) in segments.iter().enumerate() {
        let allowed_docs = if allowed.everything {
            None
        } else {
            match allowed.segments.get(&segment.segment_id()) {
                Some(docs) if !docs.is_empty() => Some(docs),
                _ => continue,
            }
        };
        scores.clear();
        scores.resize(segment.max_doc() as usize, 0.0);
        for (i, (t, weight)) in terms.iter().zip(&weights).enumerate() {
            let (Some(weight), Some(info)) = (weight, &infos[i * segments.len() + segment_ord]) else { continue };
            let field = t.term.field();
            let norms = segment.get_fieldnorms_reader(field)?;
            let mut postings =
                segment.inverted_index(field)?.read_block_postings_from_terminfo(info, IndexRecordOption::WithFreqs)?;
            loop {
                let docs = postings.docs();
                if docs.is_empty() {
                    break;
                }
                for (&doc, &freq) in docs.iter().zip(postings.freqs()) {
                    if let Some(s) = scores.get_mut(doc as usize) {
                        *s += weight.score(norms.fieldnorm_id(doc), freq);
                    }
                }
                postings.advance();
            }
        }
        // Every matching document has a positive score (BM25's idf is positive, boosts are).
        let address = |doc: usize| DocAddress::new(segment_ord as u32, doc as u32);
        match allowed_docs {
            Some(docs) => {
                for &doc in docs.iter() {
                    if let Some(&score) = scores.get(doc as usize) {
                        top.offer(score, address(doc as usize));
                    }
                }
            }
            None => {
                let alive = segment.alive_bitset();
                // Blocks whose best score cannot enter the top k are skipped whole.
                for (block, chunk) in scores.chunks(64).enumerate() {
                    let best = chunk.iter().fold(0.0, |m: Score, &s| if s > m { s } else { m });
                    if !top.admits(best) {
                        continue;
                    }
                    for (i, &score) in chunk.iter().enumerate() {
                        let doc = block * 64 + i;
                        if top.admits(score) && alive.is_none_or(|a| a.is_alive(doc as u32)) {
                            top.offer(score, address(doc));
                        }
                    }
                }
            }
        }
    }
    Ok(top.into_sorted())
}

/// A candidate, ordered worst first: lower score, then (on equal scores) higher address, the
/// order in which [`tantivy::collector::TopDocs`] ranks ties.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Candidate(Score, DocAddress);

impl Eq for Candidate {}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
    }
}

/// The `k` best candidates offered in increasing address order.
struct TopK {
    k: usize,
    /// A max-heap of the kept candidates by [`Candidate`]'s order: its top is the worst.
    heap: std::collections::BinaryHeap<Candidate>,
}

impl TopK {
    fn new(k: usize) -> Self {
        TopK { k, heap: std::collections::BinaryHeap::with_capacity(k.min(4096) + 1) }
    }

    /// Whether a match scoring `score`, at an address above every one offered so far, would
    /// be kept.
    #[inline]
    fn admits(&self, score: Score) -> bool {
        score > 0.0 && (self.heap.len() < self.k || self.heap.peek().is_some_and(|worst| score > worst.0))
    }

    fn offer(&mut self, score: Score, address: DocAddress) {
        if self.admits(score) {
            if self.heap.len() == self.k {
                self.heap.pop();
            }
            self.heap.push(Candidate(score, address));
        }
    }

    /// Best first.
    fn into_sorted(self) -> Vec<(Score, DocAddress)> {
        self.heap.into_sorted_vec().into_iter().map(|Candidate(s, a)| (s, a)).collect()
    }
}
