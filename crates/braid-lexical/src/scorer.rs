//! The scorer: a [`WeightedQuery`]'s best `k` allowed records, evaluated term at a time with
//! statistics taken from the records the caller may see only.
//!
//! Evaluation walks each term's postings once, block by block, into dense per-document
//! accumulators (as Lucene's `BooleanScorer` does for disjunctions), then takes the top k of
//! the allowed documents ([`TopK`]). Three properties make a response a function of the
//! visible records alone (ARCHITECTURE.md, threat model):
//! - **Statistics**: each term's BM25 weight uses [`Statistics`] over the allowed set — its
//!   document frequency among allowed records, their number and their average field length —
//!   never the index's.
//! - **Arithmetic**: a document's score is summed in query order from its own postings, so it
//!   does not depend on segment layout or on other documents.
//! - **Ties** are broken by ordinal (lower first), never by internal document address.

use std::sync::{Arc, Mutex};

use braid_core::Ordinal;
use tantivy::columnar::Column;
use tantivy::fieldnorm::FieldNormReader;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocId, InvertedIndexReader, Score, SegmentReader, Term};

use crate::bm25::{Lengths, TermWeight};
use crate::matches::Matches;
use crate::segments::Scope;
use crate::simple::{Constraints, Verdict, MAX_PHRASE_CHECKS};
use crate::top_k::TopK;
use crate::visibility::{AllowedDocs, AllowedSegment};
use crate::weighted_query::{Alternative, Group, WeightedQuery};

/// BM25's collection statistics over the records a request may see.
pub(crate) trait Statistics {
    /// Allowed records holding `term`.
    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64>;
    /// The number of allowed records.
    fn num_docs(&self) -> u64;
    /// The sum of `field`'s lengths over the allowed records.
    fn total_length(&self, field: Field) -> tantivy::Result<u64>;
}

/// Each term of a query weighed under the caller's statistics, in query order, with the length
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
    /// The weights of `query`'s terms under `stats`, as tantivy's BM25 computes them.
    fn of(stats: &dyn Statistics, query: &WeightedQuery) -> tantivy::Result<Self> {
        let docs = stats.num_docs();
        let mut lengths: Vec<(Field, Lengths)> = Vec::new();
        let mut terms = Vec::new();
        for t in query.terms() {
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

    /// The weight of the query's `i`-th term, with its field's length table.
    fn get(&self, i: usize) -> Option<(TermWeight, &Lengths)> {
        self.terms[i].map(|w| (w.factor, &self.lengths[w.lengths].1))
    }
}

/// One segment's scores, shared by the searches that read them (see [`SharedPrefix`]): a
/// document each, or an allowed document each where the segment is [`kept_by_rank`].
type Scores = Arc<Vec<Score>>;

/// A segment whose allowed documents are fewer than one in this many keeps its scores an
/// allowed document each, and has its postings filtered by them before a posting is scored: a
/// caller who sees 1 % of a segment then scores 1 % of its postings, into an array of its own
/// documents' scores rather than one the size of the segment (which each search zeroed, or
/// copied). Past that share the test costs about what it saves, and every posting is scored.
const SPARSE: usize = 8;

/// The allowed documents a segment's scores are kept for, in document order (the `i`-th score
/// the `i`-th of `docs`), where the caller may see fewer than one in [`SPARSE`] of its
/// `max_doc` documents; `None` where they are kept a document each.
pub(crate) fn kept_by_rank(allowed: Option<&AllowedSegment>, max_doc: usize) -> Option<&AllowedSegment> {
    allowed.filter(|a| a.docs.len().saturating_mul(SPARSE) < max_doc)
}

/// How many scores a segment of `max_doc` documents keeps ([`kept_by_rank`]).
fn kept_len(allowed: Option<&AllowedSegment>, max_doc: usize) -> usize {
    kept_by_rank(allowed, max_doc).map_or(max_doc, |a| a.docs.len())
}

/// Each segment's scores from one search of a request, carried into the next: a search
/// given them starts each document at its carried score (scaled by [`Carried::scale`])
/// instead of zero, and leaves its own final scores in their place. The lexical leg's second
/// search with feedback is the first's query at a smaller weight plus the expansion terms
/// ([`crate::feedback`]), so it adds only the expansion terms' postings to the first search's
/// scores and does not walk the query's own postings again.
#[derive(Debug, Default)]
pub(crate) struct Carried {
    /// By segment ordinal within the view's scope: the scores, and the factor they are yet to
    /// be multiplied by (applied when the segment is next searched).
    scores: Vec<Option<(Scores, Score)>>,
}

impl Carried {
    /// Multiplies every carried score by `factor`.
    pub fn scale(&mut self, factor: Score) {
        for (_, times) in self.scores.iter_mut().flatten() {
            *times *= factor;
        }
    }

    /// Segment `segment`'s carried scores, if they are `len` (as the segment keeps them), and
    /// the factor they are yet to be multiplied by.
    fn take(&mut self, segment: usize, len: usize) -> Option<(Scores, Score)> {
        self.scores.get_mut(segment).and_then(Option::take).filter(|(scores, _)| scores.len() == len)
    }

    /// Whether any segment's scores are carried (the search given them starts from them; a
    /// first search, given none, leaves its own).
    pub(crate) fn holds_scores(&self) -> bool {
        self.scores.iter().any(Option::is_some)
    }

    fn put(&mut self, segment: usize, scores: Scores) {
        if self.scores.len() <= segment {
            self.scores.resize_with(segment + 1, || None);
        }
        self.scores[segment] = Some((scores, 1.0));
    }
}

/// The `k` best `(ordinal, score)` of `query` over the allowed documents, best first, ties by
/// ordinal; each segment's scores start from (and are left in) `carried` when given. A query
/// that begins with `prefix`'s groups, and carries no scores in, starts from the prefix's
/// scores instead of scoring those groups ([`SharedPrefix`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn top_k(
    scope: &Scope<'_>,
    query: &WeightedQuery,
    stats: &dyn Statistics,
    allowed: &AllowedDocs,
    k: usize,
    matches: Option<&Matches>,
    mut carried: Option<&mut Carried>,
    prefix: Option<&SharedPrefix>,
) -> tantivy::Result<Vec<(Ordinal, Score)>> {
    // Weights first, in query order: one per term.
    let weights = Weights::of(stats, query)?;
    if let Some(constraints) = &query.constraints {
        return constrained_top_k(scope, query, &weights, constraints, allowed, k, carried);
    }
    let carries_in = carried.as_deref().is_some_and(Carried::holds_scores);
    let prefix = prefix.filter(|p| !carries_in && query.groups.starts_with(&p.groups));
    let ord_columns = &scope.segments().ord_columns;
    let mut top = TopK::new(k);
    let mut scratch = Scratch::default();
    for (segment_ord, segment) in scope.iter() {
        let segment_ord = segment_ord as usize;
        let allowed_docs = allowed.of_segment(segment);
        if allowed_docs.is_some_and(|a| a.docs.is_empty()) {
            continue;
        }
        let Some(ords) = ord_columns.get(segment_ord) else { continue };
        let len = kept_len(allowed_docs, segment.max_doc() as usize);
        let (start, from_group) = match prefix.and_then(|p| Some((p.take(segment_ord, len)?, p.groups.len()))) {
            Some((scores, groups)) => (Some((scores, 1.0)), groups),
            None => (carried.as_deref_mut().and_then(|c| c.take(segment_ord, len)), 0),
        };
        let scores = score_segment(segment, query, &weights, allowed_docs, start, from_group, &mut scratch)?;
        if let Some(matches) = matches {
            matches.add_scored(segment_ord, segment, &scores, allowed_docs);
        }
        offer_segment(&mut top, segment, ords, &scores, allowed_docs);
        if let Some(carried) = carried.as_deref_mut() {
            carried.put(segment_ord, scores);
        }
    }
    Ok(top.into_sorted())
}

/// [`top_k`] over the documents that meet `constraints`: those the postings decide are taken
/// as they are; those only their stored text can decide (a phrase) are read in score order,
/// at most [`MAX_PHRASE_CHECKS`] of them, until `k` are kept.
fn constrained_top_k(
    scope: &Scope<'_>,
    query: &WeightedQuery,
    weights: &Weights,
    constraints: &Constraints,
    allowed: &AllowedDocs,
    k: usize,
    mut carried: Option<&mut Carried>,
) -> tantivy::Result<Vec<(Ordinal, Score)>> {
    // (score, ordinal, segment, doc, whether the text must be read)
    let mut pending: Vec<(Score, Ordinal, usize, DocId, bool)> = Vec::new();
    let ord_columns = &scope.segments().ord_columns;
    let mut masks = std::collections::HashMap::new();
    let mut scratch = Scratch::default();
    for (segment_ord, segment) in scope.iter() {
        let segment_ord = segment_ord as usize;
        let segment_masks = constraints.masks(segment)?;
        let allowed_docs = allowed.of_segment(segment);
        if let Some(ords) = ord_columns.get(segment_ord) {
            if !allowed_docs.is_some_and(|a| a.docs.is_empty()) {
                let max_doc = segment.max_doc() as usize;
                let start = carried.as_deref_mut().and_then(|c| c.take(segment_ord, kept_len(allowed_docs, max_doc)));
                let scores = score_segment(segment, query, weights, allowed_docs, start, 0, &mut scratch)?;
                let alive = segment.alive_bitset();
                let mut consider = |doc: DocId, at: usize| {
                    let Some(&score) = scores.get(at) else { return };
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
                match (kept_by_rank(allowed_docs, max_doc), allowed_docs) {
                    (Some(a), _) => a.docs.iter().enumerate().for_each(|(at, &d)| consider(d, at)),
                    (None, Some(a)) => a.docs.iter().for_each(|&d| consider(d, d as usize)),
                    (None, None) => (0..segment.max_doc())
                        .filter(|&d| alive.is_none_or(|a| a.is_alive(d)))
                        .for_each(|d| consider(d, d as usize)),
                }
                if let Some(carried) = carried.as_deref_mut() {
                    carried.put(segment_ord, scores);
                }
            }
        }
        masks.insert(segment_ord, segment_masks);
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
            let Some(segment_masks) = masks.get(&segment_ord) else { continue };
            if !constraints.holds(scope.segments(), address, segment_masks)? {
                continue;
            }
        }
        out.push((ord, score));
    }
    Ok(out)
}

/// The scores of `query` on one segment, kept as [`kept_by_rank`] says, added to `start` (zeros
/// when not given), a carried score times a factor: every allowed document's (a document
/// outside `allowed` may be left at its start). The groups before `from_group` are
/// taken as scored already (`start` holds them): with none after them and no factor, `start`
/// is the answer as it is, shared rather than copied. Otherwise `start` is written in place
/// where nothing else holds it, and copied where something does (the other word leg, starting
/// from the same [`SharedPrefix`]). Groups of several alternatives are summed in `scratch`,
/// which the segments of one search share.
fn score_segment(
    segment: &SegmentReader,
    query: &WeightedQuery,
    weights: &Weights,
    allowed: Option<&AllowedSegment>,
    start: Option<(Scores, Score)>,
    from_group: usize,
    scratch: &mut Scratch,
) -> tantivy::Result<Scores> {
    let only = kept_by_rank(allowed, segment.max_doc() as usize);
    let len = kept_len(allowed, segment.max_doc() as usize);
    let mut total = match start {
        Some((scores, times)) if times == 1.0 && from_group >= query.groups.len() => return Ok(scores),
        Some((scores, times)) if times != 1.0 => {
            let mut scores = Arc::unwrap_or_clone(scores);
            scores.iter_mut().for_each(|s| *s *= times);
            scores
        }
        Some((scores, _)) => Arc::unwrap_or_clone(scores),
        None => vec![0.0 as Score; len],
    };
    let mut postings = Postings::new(segment, only);
    let mut w = 0;
    for (at, group) in query.groups.iter().enumerate() {
        let first = w;
        w += group.alternatives.iter().map(|a| a.terms().len()).sum::<usize>();
        if at < from_group {
            continue;
        }
        match group.alternatives.as_slice() {
            // One sum of terms: straight into the total.
            [Alternative::Terms(terms)] => {
                for (i, t) in terms.iter().enumerate() {
                    if let Some((weight, lengths)) = weights.get(first + i) {
                        postings.each(&t.term, |at, norm, freq| total[at] += weight.score(lengths, norm, freq))?;
                    }
                }
            }
            alternatives => {
                scratch.reset(len);
                let mut at = first;
                for alternative in alternatives {
                    scratch.alternative(&mut postings, alternative, weights, at)?;
                    at += alternative.terms().len();
                }
                scratch.add_group_into(&mut total);
            }
        }
    }
    Ok(Arc::new(total))
}

/// The scores of the groups the lexical and fuzzy legs' queries begin with alike, each
/// segment's dense, computed once for both ([`crate::View::share_word_prefix`]).
///
/// Both legs sum a document's groups in query order, into a dense score a segment, and a group
/// scores the same in either (the same terms, boosts and visible statistics). So where both
/// queries begin with the same groups — most queries: the fuzzy leg adds a word's completions
/// or typo expansions to its group, and its last word while typing, the rest is the lexical
/// query again — each leg's scores after those groups are the same floats, and each can start
/// from one computation of them and add its own groups: at a million records, 80 % of the
/// fuzzy leg's postings were the lexical leg's (research/scale-log.md, tenth session). Each
/// segment's scores are shared by the two searches that start from them; one that adds
/// groups to them copies them only while the other still holds them ([`score_segment`]).
pub(crate) struct SharedPrefix {
    /// The groups, as both queries hold them (after per-request field weights).
    groups: Vec<Group>,
    /// By segment ordinal within the scope: the groups' scores and how many searches have yet
    /// to start from them.
    sums: Vec<Mutex<(Option<Scores>, u8)>>,
}

impl SharedPrefix {
    /// The searches that start from the shared scores: the lexical leg's first and the fuzzy
    /// leg's.
    const SEARCHES: u8 = 2;

    /// `groups` (the first of `query`'s) scored on every segment of `scope` a search of the
    /// allowed documents reads, for the two word legs to start from.
    pub(crate) fn score(
        scope: &Scope<'_>,
        query: &WeightedQuery,
        groups: usize,
        stats: &dyn Statistics,
        allowed: &AllowedDocs,
    ) -> tantivy::Result<Self> {
        let prefix = WeightedQuery { groups: query.groups[..groups].to_vec(), constraints: None };
        let weights = Weights::of(stats, &prefix)?;
        let ord_columns = &scope.segments().ord_columns;
        let mut scratch = Scratch::default();
        let mut sums = Vec::new();
        for (segment_ord, segment) in scope.iter() {
            let segment_ord = segment_ord as usize;
            let allowed_docs = allowed.of_segment(segment);
            if sums.len() <= segment_ord {
                sums.resize_with(segment_ord + 1, || Mutex::new((None, 0)));
            }
            if allowed_docs.is_some_and(|a| a.docs.is_empty()) || ord_columns.get(segment_ord).is_none() {
                continue;
            }
            let scores = score_segment(segment, &prefix, &weights, allowed_docs, None, 0, &mut scratch)?;
            sums[segment_ord] = Mutex::new((Some(scores), Self::SEARCHES));
        }
        Ok(SharedPrefix { groups: prefix.groups, sums })
    }

    /// Segment `segment`'s scores for a search starting from them, if they are `len` (as the
    /// segment keeps them; let go of here once the last search has them).
    fn take(&self, segment: usize, len: usize) -> Option<Scores> {
        let mut held = self.sums.get(segment)?.lock().unwrap_or_else(|p| p.into_inner());
        let (scores, searches) = &mut *held;
        if scores.as_ref().is_none_or(|s| s.len() != len) || *searches == 0 {
            return None;
        }
        *searches -= 1;
        if *searches == 0 {
            scores.take()
        } else {
            scores.clone()
        }
    }
}

/// Buffers for groups of several alternatives, placed as the segment's scores are
/// ([`kept_by_rank`]): each alternative's scores, the group's best, and the places each
/// touched (so only those are reset). Every score and count is back at zero after a group, so
/// the buffers serve each segment of a search in turn (sized for the largest): a caller who
/// sees a million records once zeroed 8 MB of them a fuzzy request, a segment at a time.
#[derive(Default)]
struct Scratch {
    alternative: Vec<Score>,
    alternative_at: Vec<usize>,
    group: Vec<Score>,
    group_at: Vec<usize>,
    grams: Vec<u16>,
}

impl Scratch {
    fn reset(&mut self, len: usize) {
        if self.group.len() < len {
            self.alternative.resize(len, 0.0);
            self.group.resize(len, 0.0);
        }
        self.group_at.clear();
    }

    /// Scores `alternative`, whose first term is the query's `first`-th, into the group's best.
    fn alternative(
        &mut self,
        postings: &mut Postings<'_>,
        alternative: &Alternative,
        weights: &Weights,
        first: usize,
    ) -> tantivy::Result<()> {
        self.alternative_at.clear();
        let (terms, needed, counted, boost) = match alternative {
            Alternative::Terms(terms) => (terms, 0, 0, 1.0),
            Alternative::Grams { grams, needed, boost } => (grams, *needed, grams.len(), *boost),
            Alternative::All { terms, counted } => (terms, *counted, *counted, 1.0),
        };
        if needed > 0 && self.grams.len() < self.alternative.len() {
            self.grams.resize(self.alternative.len(), 0);
        }
        if matches!(alternative, Alternative::All { .. }) && (first..first + counted).any(|i| weights.get(i).is_none())
        {
            // A term no allowed record holds: no document holds them all.
            return Ok(());
        }
        for (i, t) in terms.iter().enumerate() {
            let Some((weight, lengths)) = weights.get(first + i) else { continue };
            let count = needed > 0 && i < counted;
            let (scores, touched, grams) = (&mut self.alternative, &mut self.alternative_at, &mut self.grams);
            postings.each(&t.term, |at, norm, freq| {
                let s = &mut scores[at];
                if *s == 0.0 {
                    touched.push(at);
                }
                *s += weight.score(lengths, norm, freq);
                if count {
                    grams[at] = grams[at].saturating_add(1);
                }
            })?;
        }
        for &at in &self.alternative_at {
            let score = std::mem::take(&mut self.alternative[at]);
            let matched = needed == 0 || usize::from(std::mem::take(&mut self.grams[at])) >= needed;
            if matched {
                let g = &mut self.group[at];
                if *g == 0.0 {
                    self.group_at.push(at);
                }
                *g = g.max(score * boost);
            }
        }
        Ok(())
    }

    fn add_group_into(&mut self, total: &mut [Score]) {
        for &at in &self.group_at {
            total[at] += std::mem::take(&mut self.group[at]);
        }
    }
}

/// A segment's postings, read term by term, with each field's inverted index and length
/// reader opened once (a query asks for dozens of terms in two or three fields).
struct Postings<'s> {
    segment: &'s SegmentReader,
    fields: Vec<(Field, Arc<InvertedIndexReader>, FieldNormReader)>,
    /// Where the segment keeps its scores by allowed document ([`kept_by_rank`]): only these
    /// documents' postings are passed on, placed by their rank among them.
    only: Option<&'s AllowedSegment>,
}

impl<'s> Postings<'s> {
    fn new(segment: &'s SegmentReader, only: Option<&'s AllowedSegment>) -> Self {
        Postings { segment, fields: Vec::new(), only }
    }

    /// Calls `f(place, fieldnorm id, term frequency)` for every posting of `term`, the place
    /// its document's score is kept at: the document, or where the postings are filtered (for
    /// an allowed document only) its rank among the allowed.
    fn each(&mut self, term: &Term, mut f: impl FnMut(usize, u8, u32)) -> tantivy::Result<()> {
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
            match self.only {
                Some(only) => {
                    for (&doc, &freq) in docs.iter().zip(postings.freqs()) {
                        if let Some(rank) = only.rank(doc) {
                            f(rank, norms.fieldnorm_id(doc), freq);
                        }
                    }
                }
                None => {
                    for (&doc, &freq) in docs.iter().zip(postings.freqs()) {
                        f(doc as usize, norms.fieldnorm_id(doc), freq);
                    }
                }
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
    if let Some(allowed) = kept_by_rank(allowed, segment.max_doc() as usize) {
        // A score an allowed document, in document order: compared 64 at a time, as below.
        for (docs, chunk) in allowed.docs.chunks(64).zip(scores.chunks(64)) {
            let mut admitted = top.admitted(chunk);
            while admitted != 0 {
                let i = admitted.trailing_zeros() as usize;
                admitted &= admitted - 1;
                if top.admits(chunk[i]) {
                    offer(top, docs[i] as usize, chunk[i]);
                }
            }
        }
        return;
    }
    match allowed {
        // Most of the segment allowed: its scores are scanned in blocks, as below, masked by
        // the allowed documents' bits. A branch per allowed document took 3 ms of the lexical
        // leg (with feedback) of a caller who sees the 1M scale corpus's ten tenants.
        Some(allowed) => {
            for (block, chunk) in scores.chunks(64).enumerate() {
                let mut admitted = top.admitted(chunk) & allowed.block(block);
                while admitted != 0 {
                    let i = admitted.trailing_zeros() as usize;
                    admitted &= admitted - 1;
                    let (doc, score) = (block * 64 + i, chunk[i]);
                    if top.admits(score) {
                        offer(top, doc, score);
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
