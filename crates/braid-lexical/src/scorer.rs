//! Scoring plans: what the lexical and fuzzy legs score, evaluated term at a time over the
//! records the caller may see, with statistics taken from those records only.
//!
//! A [`Plan`] is a sum of [`Group`]s; a group scores a document by the best of its
//! [`Alternative`]s (a query word, its typo expansions, its completions, its trigrams); an
//! alternative is a sum of weighted BM25 terms. The lexical leg is a plan of one-alternative
//! groups (each analysed term in the body, and boosted in the title); the fuzzy leg has one
//! group per query word.
//!
//! Evaluation walks each term's postings once, block by block, into dense per-document
//! accumulators (as Lucene's `BooleanScorer` does for disjunctions), then takes the top k of
//! the allowed documents. Three properties make a response a function of the visible records
//! alone (ARCHITECTURE.md, threat model):
//! - **Statistics**: each term's BM25 weight uses [`Statistics`] over the allowed set — its
//!   document frequency among allowed records, their number and their average field length —
//!   never the index's.
//! - **Arithmetic**: a document's score is summed in plan order from its own postings, so it
//!   does not depend on segment layout or on other documents.
//! - **Ties** are broken by ordinal (lower first), never by internal document address.

use std::sync::Arc;

use braid_core::Ordinal;
use tantivy::columnar::Column;
use tantivy::fieldnorm::FieldNormReader;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocId, InvertedIndexReader, Score, Searcher, SegmentReader, Term};

use crate::bm25::{Lengths, TermWeight};
use crate::matches::Matches;
use crate::simple::{Constraints, Verdict, MAX_PHRASE_CHECKS};
use crate::visibility::{AllowedDocs, AllowedSegment};

/// One term and the factor its BM25 is multiplied by.
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

/// A sum of groups, over the records that meet the constraints (none: every record).
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    pub groups: Vec<Group>,
    /// What a record must and must not hold (the simple query syntax's operators).
    pub constraints: Option<Constraints>,
}

/// The best of its alternatives (dis-max without tie breaker).
#[derive(Debug, Clone, Default)]
pub(crate) struct Group {
    pub alternatives: Vec<Alternative>,
}

/// One way a query word can match.
#[derive(Debug, Clone)]
pub(crate) enum Alternative {
    /// The sum of these terms' BM25.
    Terms(Vec<WeightedTerm>),
    /// Trigram recall: `boost` × the sum of the grams' BM25, for documents holding at least
    /// `needed` of them.
    Grams { grams: Vec<WeightedTerm>, needed: usize, boost: Score },
    /// A multi-word synonym: the sum of the terms' BM25, for documents holding every one of
    /// the first `counted` terms (the body terms; the title's follow them, uncounted).
    All { terms: Vec<WeightedTerm>, counted: usize },
}

impl Alternative {
    pub(crate) fn terms(&self) -> &[WeightedTerm] {
        match self {
            Alternative::Terms(t) => t,
            Alternative::Grams { grams, .. } => grams,
            Alternative::All { terms, .. } => terms,
        }
    }
}

impl Plan {
    /// Whether the plan scores nothing.
    pub fn is_empty(&self) -> bool {
        self.groups.iter().all(|g| g.alternatives.iter().all(|a| a.terms().is_empty()))
    }

    fn terms(&self) -> impl Iterator<Item = &WeightedTerm> {
        self.groups.iter().flat_map(|g| g.alternatives.iter()).flat_map(Alternative::terms)
    }
}

/// BM25's collection statistics over the records a request may see.
pub(crate) trait Statistics {
    /// Allowed records holding `term`.
    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64>;
    /// The number of allowed records.
    fn num_docs(&self) -> u64;
    /// The sum of `field`'s lengths over the allowed records.
    fn total_length(&self, field: Field) -> tantivy::Result<u64>;
}

/// Each term of a plan weighed under the caller's statistics, in plan order, with the length
/// tables of the fields they are in (one a field, not one a term).
pub(crate) struct Weights {
    lengths: Vec<(Field, Lengths)>,
    /// `None` where no allowed record holds the term.
    terms: Vec<Option<Weight>>,
}

/// One term's BM25 factor and the index of its field's [`Lengths`].
#[derive(Debug, Clone, Copy)]
struct Weight {
    factor: TermWeight,
    lengths: usize,
}

impl Weights {
    /// The weights of `plan`'s terms under `stats`, as tantivy's BM25 computes them.
    fn of(stats: &dyn Statistics, plan: &Plan) -> tantivy::Result<Self> {
        let docs = stats.num_docs();
        let mut lengths: Vec<(Field, Lengths)> = Vec::new();
        let mut terms = Vec::new();
        for t in plan.terms() {
            let doc_freq = stats.doc_freq(&t.term)?;
            if doc_freq == 0 {
                terms.push(None);
                continue;
            }
            let field = t.term.field();
            let at = match lengths.iter().position(|(f, _)| *f == field) {
                Some(at) => at,
                None => {
                    let average = stats.total_length(field)? as Score / docs.max(1) as Score;
                    lengths.push((field, Lengths::new(average)));
                    lengths.len() - 1
                }
            };
            terms.push(Some(Weight { factor: TermWeight::new(doc_freq, docs, t.boost), lengths: at }));
        }
        Ok(Weights { lengths, terms })
    }

    /// The weight of the plan's `i`-th term, with its field's length table.
    fn get(&self, i: usize) -> Option<(TermWeight, &Lengths)> {
        self.terms[i].map(|w| (w.factor, &self.lengths[w.lengths].1))
    }
}

/// The `k` best `(ordinal, score)` of `plan` over the allowed documents, best first, ties by
/// ordinal.
pub(crate) fn top_k(
    searcher: &Searcher,
    ord_columns: &[Column<u64>],
    plan: &Plan,
    stats: &dyn Statistics,
    allowed: &AllowedDocs,
    k: usize,
    matches: Option<&Matches>,
) -> tantivy::Result<Vec<(Ordinal, Score)>> {
    // Weights first, in plan order: one per term.
    let weights = Weights::of(stats, plan)?;
    if let Some(constraints) = &plan.constraints {
        return constrained_top_k(searcher, ord_columns, plan, &weights, constraints, allowed, k);
    }
    let mut top = TopK::new(k);
    for (segment_ord, segment) in searcher.segment_readers().iter().enumerate() {
        let allowed_docs = allowed.of_segment(segment);
        if allowed_docs.is_some_and(|a| a.docs.is_empty()) {
            continue;
        }
        let Some(ords) = ord_columns.get(segment_ord) else { continue };
        let scores = score_segment(segment, plan, &weights)?;
        if let Some(matches) = matches {
            matches.add_scored(segment_ord, segment, &scores, allowed_docs);
        }
        offer_segment(&mut top, segment, ords, &scores, allowed_docs);
    }
    Ok(top.into_sorted())
}

/// [`top_k`] over the documents that meet `constraints`: those the postings decide are taken
/// as they are; those only their stored text can decide (a phrase) are read in score order,
/// at most [`MAX_PHRASE_CHECKS`] of them, until `k` are kept.
fn constrained_top_k(
    searcher: &Searcher,
    ord_columns: &[Column<u64>],
    plan: &Plan,
    weights: &Weights,
    constraints: &Constraints,
    allowed: &AllowedDocs,
    k: usize,
) -> tantivy::Result<Vec<(Ordinal, Score)>> {
    // (score, ordinal, segment, doc, whether the text must be read)
    let mut pending: Vec<(Score, Ordinal, usize, DocId, bool)> = Vec::new();
    let mut masks = Vec::with_capacity(searcher.segment_readers().len());
    for (segment_ord, segment) in searcher.segment_readers().iter().enumerate() {
        let segment_masks = constraints.masks(segment)?;
        let allowed_docs = allowed.of_segment(segment);
        if let Some(ords) = ord_columns.get(segment_ord) {
            if !allowed_docs.is_some_and(|a| a.docs.is_empty()) {
                let scores = score_segment(segment, plan, weights)?;
                let alive = segment.alive_bitset();
                let mut consider = |doc: DocId| {
                    let Some(&score) = scores.get(doc as usize) else { return };
                    if score <= 0.0 {
                        return;
                    }
                    let verdict = constraints.verdict(&segment_masks, doc);
                    if verdict == Verdict::Reject {
                        return;
                    }
                    if let Some(ord) = ords.first(doc) {
                        pending.push((score, ord, segment_ord, doc, verdict == Verdict::Read));
                    }
                };
                match allowed_docs {
                    Some(a) => a.docs.iter().for_each(|&d| consider(d)),
                    None => (0..segment.max_doc()).filter(|&d| alive.is_none_or(|a| a.is_alive(d))).for_each(consider),
                }
            }
        }
        masks.push(segment_masks);
    }
    pending.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out = Vec::with_capacity(k.min(pending.len()));
    let mut reads = 0;
    for (score, ord, segment_ord, doc, read) in pending {
        if out.len() >= k {
            break;
        }
        if read {
            if reads >= MAX_PHRASE_CHECKS {
                continue;
            }
            reads += 1;
            let address = tantivy::DocAddress::new(segment_ord as u32, doc);
            if !constraints.holds(searcher, address, &masks[segment_ord])? {
                continue;
            }
        }
        out.push((ord, score));
    }
    Ok(out)
}

/// Dense per-document scores of `plan` on one segment.
fn score_segment(segment: &SegmentReader, plan: &Plan, weights: &Weights) -> tantivy::Result<Vec<Score>> {
    let max_doc = segment.max_doc() as usize;
    let mut total = vec![0.0 as Score; max_doc];
    let mut scratch = Scratch::default();
    let mut postings = Postings::new(segment);
    let mut w = 0;
    for group in &plan.groups {
        let first = w;
        w += group.alternatives.iter().map(|a| a.terms().len()).sum::<usize>();
        match group.alternatives.as_slice() {
            // One sum of terms: straight into the total.
            [Alternative::Terms(terms)] => {
                for (i, t) in terms.iter().enumerate() {
                    if let Some((weight, lengths)) = weights.get(first + i) {
                        postings.each(&t.term, |doc, norm, freq| {
                            total[doc as usize] += weight.score(lengths, norm, freq)
                        })?;
                    }
                }
            }
            alternatives => {
                scratch.reset(max_doc);
                let mut at = first;
                for alternative in alternatives {
                    scratch.alternative(&mut postings, alternative, weights, at)?;
                    at += alternative.terms().len();
                }
                scratch.add_group_into(&mut total);
            }
        }
    }
    Ok(total)
}

/// Buffers for groups of several alternatives: each alternative's scores, the group's best,
/// and the documents each touched (so only those are reset).
#[derive(Default)]
struct Scratch {
    alternative: Vec<Score>,
    alternative_docs: Vec<DocId>,
    group: Vec<Score>,
    group_docs: Vec<DocId>,
    grams: Vec<u16>,
}

impl Scratch {
    fn reset(&mut self, max_doc: usize) {
        if self.group.len() != max_doc {
            self.alternative = vec![0.0; max_doc];
            self.group = vec![0.0; max_doc];
        }
        self.group_docs.clear();
    }

    /// Scores `alternative`, whose first term is the plan's `first`-th, into the group's best.
    fn alternative(
        &mut self,
        postings: &mut Postings<'_>,
        alternative: &Alternative,
        weights: &Weights,
        first: usize,
    ) -> tantivy::Result<()> {
        self.alternative_docs.clear();
        let (terms, needed, counted, boost) = match alternative {
            Alternative::Terms(terms) => (terms, 0, 0, 1.0),
            Alternative::Grams { grams, needed, boost } => (grams, *needed, grams.len(), *boost),
            Alternative::All { terms, counted } => (terms, *counted, *counted, 1.0),
        };
        if needed > 0 && self.grams.len() != self.alternative.len() {
            self.grams = vec![0; self.alternative.len()];
        }
        if matches!(alternative, Alternative::All { .. }) && (first..first + counted).any(|i| weights.get(i).is_none())
        {
            // A term no allowed record holds: no document holds them all.
            return Ok(());
        }
        for (i, t) in terms.iter().enumerate() {
            let Some((weight, lengths)) = weights.get(first + i) else { continue };
            let count = needed > 0 && i < counted;
            let (scores, docs, grams) = (&mut self.alternative, &mut self.alternative_docs, &mut self.grams);
            postings.each(&t.term, |doc, norm, freq| {
                let s = &mut scores[doc as usize];
                if *s == 0.0 {
                    docs.push(doc);
                }
                *s += weight.score(lengths, norm, freq);
                if count {
                    grams[doc as usize] = grams[doc as usize].saturating_add(1);
                }
            })?;
        }
        for &doc in &self.alternative_docs {
            let d = doc as usize;
            let score = std::mem::take(&mut self.alternative[d]);
            let matched = needed == 0 || usize::from(std::mem::take(&mut self.grams[d])) >= needed;
            if matched {
                let g = &mut self.group[d];
                if *g == 0.0 {
                    self.group_docs.push(doc);
                }
                *g = g.max(score * boost);
            }
        }
        Ok(())
    }

    fn add_group_into(&mut self, total: &mut [Score]) {
        for &doc in &self.group_docs {
            total[doc as usize] += std::mem::take(&mut self.group[doc as usize]);
        }
    }
}

/// A segment's postings, read term by term, with each field's inverted index and length
/// reader opened once (a plan asks for dozens of terms in two or three fields).
struct Postings<'s> {
    segment: &'s SegmentReader,
    fields: Vec<(Field, Arc<InvertedIndexReader>, FieldNormReader)>,
}

impl<'s> Postings<'s> {
    fn new(segment: &'s SegmentReader) -> Self {
        Postings { segment, fields: Vec::new() }
    }

    /// Calls `f(doc, fieldnorm id, term frequency)` for every posting of `term`.
    fn each(&mut self, term: &Term, mut f: impl FnMut(DocId, u8, u32)) -> tantivy::Result<()> {
        let field = term.field();
        let at = match self.fields.iter().position(|(f, ..)| *f == field) {
            Some(at) => at,
            None => {
                let inverted = self.segment.inverted_index(field)?;
                let norms = self.segment.get_fieldnorms_reader(field)?;
                self.fields.push((field, inverted, norms));
                self.fields.len() - 1
            }
        };
        let (_, inverted, norms) = &self.fields[at];
        let Some(info) = inverted.get_term_info(term)? else { return Ok(()) };
        let mut postings = inverted.read_block_postings_from_terminfo(&info, IndexRecordOption::WithFreqs)?;
        loop {
            let docs = postings.docs();
            if docs.is_empty() {
                return Ok(());
            }
            for (&doc, &freq) in docs.iter().zip(postings.freqs()) {
                f(doc, norms.fieldnorm_id(doc), freq);
            }
            postings.advance();
        }
    }
}

/// Offers the allowed documents of one segment with a positive score to `top`.
fn offer_segment(
    top: &mut TopK,
    segment: &SegmentReader,
    ords: &Column<u64>,
    scores: &[Score],
    allowed: Option<&AllowedSegment>,
) {
    let offer = |top: &mut TopK, doc: usize, score: Score| {
        if let Some(ord) = ords.first(doc as DocId) {
            top.offer(score, ord);
        }
    };
    match allowed {
        Some(allowed) => {
            for &doc in allowed.docs.iter() {
                if let Some(&score) = scores.get(doc as usize) {
                    if top.admits(score) {
                        offer(top, doc as usize, score);
                    }
                }
            }
        }
        None => {
            let alive = segment.alive_bitset();
            // Each block of 64 scores is compared with the floor at once (no branch per
            // document, which a random mix of matches and misses would mispredict), then the
            // admitted ones are offered in document order; the floor may rise meanwhile.
            for (block, chunk) in scores.chunks(64).enumerate() {
                let mut admitted = top.admitted(chunk);
                while admitted != 0 {
                    let i = admitted.trailing_zeros() as usize;
                    admitted &= admitted - 1;
                    let (doc, score) = (block * 64 + i, chunk[i]);
                    if top.admits(score) && alive.is_none_or(|a| a.is_alive(doc as DocId)) {
                        offer(top, doc, score);
                    }
                }
            }
        }
    }
}

/// A candidate, ordered best first: higher score, then (on equal scores) lower ordinal.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Candidate(Score, Ordinal);

impl Eq for Candidate {}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::cmp::Ord for Candidate {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
    }
}

/// The `k` best candidates by score, then lower ordinal.
///
/// Admitted candidates are appended unordered and cut back to the best `k` (a selection, not
/// a sort) whenever `2k` have gathered, which then raises the floor: a scan that admits a few
/// hundred of its documents pays a few linear selections instead of a heap's sift for each.
pub(crate) struct TopK {
    k: usize,
    /// The candidates still in the running, best `k` among them, in no order.
    kept: Vec<Candidate>,
    /// The least score that can still be kept: the `k`-th best one's as of the last cut (an
    /// equal score may win on its ordinal), 0 before (infinite when `k` is 0). Every candidate
    /// of the final top `k` reaches it, so the scan of every document's score asks it alone.
    floor: Score,
}

impl TopK {
    pub fn new(k: usize) -> Self {
        // Nothing is kept when `k` is 0.
        let floor = if k == 0 { Score::INFINITY } else { 0.0 };
        TopK { k, kept: Vec::with_capacity(2 * k.min(4096)), floor }
    }

    /// Whether a match scoring `score` might be kept (an equal score may still win on its
    /// ordinal; only positive scores are kept).
    #[inline]
    pub fn admits(&self, score: Score) -> bool {
        score > 0.0 && score >= self.floor
    }

    /// Bit `i` set where `scores[i]` is admitted now (at most 64 scores): [`TopK::admits`]
    /// for a block, in one pass that compiles to vector compares.
    pub fn admitted(&self, scores: &[Score]) -> u64 {
        debug_assert!(scores.len() <= 64);
        // `score > 0 && score >= floor` as one comparison: a positive floor implies the first;
        // a zero one asks for the least positive float (scores are never NaN, and NaN fails
        // both forms anyway).
        let least = if self.floor > 0.0 { self.floor } else { Score::from_bits(1) };
        let mut mask = 0u64;
        for (i, lanes) in scores.chunks(8).enumerate() {
            let mut bits = 0u64;
            for (j, &score) in lanes.iter().enumerate() {
                bits |= u64::from(score >= least) << j;
            }
            mask |= bits << (8 * i);
        }
        mask
    }

    pub fn offer(&mut self, score: Score, ord: Ordinal) {
        if !self.admits(score) {
            return;
        }
        self.kept.push(Candidate(score, ord));
        if self.kept.len() >= self.k.saturating_mul(2) {
            self.cut();
        }
    }

    /// Keeps the best `k` and raises the floor to the `k`-th best score.
    fn cut(&mut self) {
        if self.k == 0 || self.kept.len() < self.k {
            return;
        }
        // Candidates order best first; the `k`-th best lands at `k - 1`, the better before it.
        let (_, kth, _) = self.kept.select_nth_unstable(self.k - 1);
        self.floor = kth.0;
        self.kept.truncate(self.k);
    }

    /// Best first.
    pub fn into_sorted(mut self) -> Vec<(Ordinal, Score)> {
        if self.kept.len() > self.k {
            self.cut();
        }
        self.kept.sort_unstable();
        self.kept.into_iter().map(|Candidate(s, o)| (o, s)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The floor never refuses a candidate that belongs in the top `k` of what was offered
    /// so far, and once `2k` were admitted it is the `k`-th best score.
    #[test]
    fn admits_every_candidate_of_the_top_k() {
        let scores = [3.0, 1.0, 0.0, 2.5, 1.0, 4.0, 0.5, 2.5, 1.5, 0.25, 2.5, 5.0, 0.75];
        for k in 0..=scores.len() {
            let mut top = TopK::new(k);
            for (ord, &score) in scores.iter().enumerate() {
                top.offer(score, ord as Ordinal);
                let mut so_far: Vec<Score> = scores[..=ord].iter().copied().filter(|&s| s > 0.0).collect();
                so_far.sort_by(|a, b| b.total_cmp(a));
                let kth = if k == 0 { Score::INFINITY } else { so_far.get(k - 1).copied().unwrap_or(0.0) };
                for probe in [0.0, 0.1, 0.25, 0.5, 1.0, 1.5, 2.5, 3.0, 4.0, 5.0, 6.0] {
                    if probe > 0.0 && probe >= kth {
                        assert!(top.admits(probe), "k {k}, after {ord}, probe {probe}");
                    }
                    assert!(!top.admits(probe) || probe > 0.0);
                    assert_eq!(top.admitted(&[probe]) == 1, top.admits(probe));
                }
                assert!(
                    top.floor <= kth || k == 0,
                    "k {k}, after {ord}: floor {} above the k-th best {kth}",
                    top.floor
                );
            }
        }
        // Ten offers, k = 2: the cuts leave the floor at the second best.
        let mut top = TopK::new(2);
        for (ord, score) in [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0].into_iter().enumerate() {
            top.offer(score, ord as Ordinal);
        }
        assert_eq!(top.floor, 7.0);
        assert_eq!(top.into_sorted(), vec![(7, 8.0), (6, 7.0)]);
        // Any k, however large, keeps what it is offered.
        let mut top = TopK::new(usize::MAX);
        top.offer(1.0, 1);
        top.offer(2.0, 0);
        assert_eq!(top.into_sorted(), vec![(0, 2.0), (1, 1.0)]);
    }

    /// A block's bits are [`TopK::admits`] of each score, for blocks of any length up to 64,
    /// before and after the top k fills.
    #[test]
    fn admitted_bits_are_admits_per_score() {
        let block: Vec<Score> = (0..64u32)
            .map(|i| [0.0, 1.5, -1.0, 0.25, 3.0, 1e-40, 2.0][i as usize % 7] * (1.0 + i as Score / 64.0))
            .collect();
        for k in [0, 1, 3, 100] {
            let mut top = TopK::new(k);
            for round in 0..3 {
                for len in [0, 1, 7, 8, 9, 31, 64] {
                    let bits = top.admitted(&block[..len]);
                    for (i, &score) in block[..len].iter().enumerate() {
                        assert_eq!(bits >> i & 1 == 1, top.admits(score), "k {k}, round {round}, score {score}");
                    }
                    assert_eq!(bits >> len.min(63), u64::from(len == 64 && top.admits(block[63])));
                }
                top.offer(1.0 + round as Score, round);
            }
        }
    }

    #[test]
    fn top_k_breaks_ties_by_ordinal_whatever_the_offer_order() {
        let offers = [(1.0, 9), (2.0, 5), (1.0, 3), (1.0, 7), (0.5, 1), (2.0, 4), (0.0, 0)];
        let mut expected: Vec<(Ordinal, Score)> = offers.iter().filter(|o| o.0 > 0.0).map(|&(s, o)| (o, s)).collect();
        expected.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for rotation in 0..offers.len() {
            let mut shuffled = offers.to_vec();
            shuffled.rotate_left(rotation);
            shuffled.swap(0, rotation % 3);
            for k in 0..=offers.len() {
                let mut top = TopK::new(k);
                for &(s, o) in &shuffled {
                    top.offer(s, o);
                }
                let want: Vec<_> = expected.iter().take(k).copied().collect();
                assert_eq!(top.into_sorted(), want, "k {k}, rotation {rotation}");
            }
        }
    }
}
