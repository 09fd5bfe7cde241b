//! Access control and structured filters as tantivy queries, and the allowed set.

use std::collections::HashMap;
use std::ops::Bound;
use std::sync::{Arc, Mutex, RwLock};

use braid_core::{Filter, OrdSet, Result, Visibility, OWNER_PREFIX};
use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::index::SegmentId;
use tantivy::query::{
    AllQuery, BooleanQuery, ConstScoreQuery, EmptyQuery, EnableScoring, Explanation, Occur, Query, RangeQuery, Scorer,
    TermQuery, TermSetQuery, Weight,
};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocId, DocSet, Score, SegmentOrdinal, SegmentReader, Term, TERMINATED};

use crate::schema::Fields;

/// Separates heading levels in the indexed section paths.
pub(crate) const SECTION_SEPARATOR: char = '\u{1f}';

/// The visibility rule as a non-scoring tantivy query: the record's ACL meets the principal,
/// its tenant (if any) is the principal's, its owner (if any) is the principal's, and the
/// structured filter holds.
///
/// Owner tokens (`owner:…`, [`braid_core::OWNER_PREFIX`]) need no field of their own: they are
/// ACL terms, and "names an owner" is the range of ACL terms that start with the prefix. So
/// the rule reads the same terms in every index, including one written before owners were
/// conjunctive — where such a record becomes visible to fewer principals, never to more.
pub(crate) fn visibility_query(fields: &Fields, visibility: &Visibility) -> Result<Box<dyn Query>> {
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![
        (Occur::Must, any_of(fields.acl, visibility.acl_terms())),
        (Occur::Must, any_of(fields.tenant, visibility.tenant_terms())),
        (Occur::MustNot, foreign_owned_query(fields, visibility)),
    ];
    if let Some(filter) = visibility.filter() {
        clauses.push((Occur::Must, filter_query(fields, filter)?));
    }
    Ok(Box::new(ConstScoreQuery::new(Box::new(BooleanQuery::new(clauses)), 0.0)))
}

/// What the owner rule excludes: records that name an owner token (an ACL term in the range
/// of [`OWNER_PREFIX`]) but none the principal holds. As a `MustNot` clause it only walks the
/// postings of owner tokens — the owned records — never every document.
fn foreign_owned_query(fields: &Fields, visibility: &Visibility) -> Box<dyn Query> {
    let owned: Box<dyn Query> = Box::new(RangeQuery::new(
        Bound::Included(Term::from_field_text(fields.acl, OWNER_PREFIX)),
        Bound::Excluded(Term::from_field_text(fields.acl, &owner_prefix_end())),
    ));
    let held = visibility.owner_terms();
    if held.is_empty() {
        return owned;
    }
    Box::new(BooleanQuery::new(vec![(Occur::Must, owned), (Occur::MustNot, any_of(fields.acl, held))]))
}

/// The most values [`any_of`] asks for as a disjunction of term queries; past it, as one
/// [`TermSetQuery`]. Each term query opens the term's postings in every segment searched, about
/// a microsecond each: with 110 tokens over eleven new segments the disjunction took longer
/// than the term set (the visibility stage's p90 after a commit 0.66 → 1.13 ms).
const VALUES_AS_CLAUSES: usize = 8;

/// Documents holding any of `values` in `field` (none when there are none). A `TermSetQuery`'s
/// weight builds an FST of its terms with a registry of 20,000 cells made and filled each time,
/// 0.2–0.5 ms (a rule's weight is built once and kept, [`RuleWeight`]); a term query's weight
/// costs microseconds.
fn any_of<V: AsRef<str>>(field: Field, values: impl IntoIterator<Item = V>) -> Box<dyn Query> {
    let terms: Vec<Term> = values.into_iter().map(|v| Term::from_field_text(field, v.as_ref())).collect();
    if terms.len() > VALUES_AS_CLAUSES {
        return Box::new(TermSetQuery::new(terms));
    }
    if terms.is_empty() {
        return Box::new(EmptyQuery);
    }
    Box::new(BooleanQuery::new(
        terms
            .into_iter()
            .map(|t| (Occur::Should, Box::new(TermQuery::new(t, IndexRecordOption::Basic)) as Box<dyn Query>))
            .collect(),
    ))
}

/// The smallest text above every token that starts with [`OWNER_PREFIX`]: the prefix with its
/// last byte raised by one (`owner;`).
fn owner_prefix_end() -> String {
    let mut end = OWNER_PREFIX.as_bytes().to_vec();
    if let Some(last) = end.last_mut() {
        *last += 1;
    }
    String::from_utf8(end).unwrap_or_else(|_| OWNER_PREFIX.to_string())
}

fn filter_query(fields: &Fields, filter: &Filter) -> Result<Box<dyn Query>> {
    let term_query = |field: Field, value: &str| -> Box<dyn Query> {
        Box::new(TermQuery::new(Term::from_field_text(field, value), IndexRecordOption::Basic))
    };
    Ok(match filter {
        Filter::Keyword { field, value } => term_query(fields.keyword(field)?, value),
        Filter::KeywordAny { field, values } => any_of(fields.keyword(field)?, values),
        Filter::Range { field, min, max } => {
            let f = fields.number(field)?;
            // A missing or non-finite bound is open. tantivy panics on a range with no bound
            // at all, so open ends are infinities: the range then holds every value.
            let bound = |v: &Option<f64>, open: f64| {
                let v = v.filter(|v| v.is_finite()).unwrap_or(open);
                Bound::Included(Term::from_field_f64(f, v))
            };
            Box::new(RangeQuery::new(bound(min, f64::NEG_INFINITY), bound(max, f64::INFINITY)))
        }
        Filter::Parent { id } => term_query(fields.parent, id),
        Filter::Section { path } => term_query(fields.section_path, &section_key(path)),
        Filter::All { filters } => {
            if filters.is_empty() {
                return Ok(Box::new(AllQuery));
            }
            let clauses =
                filters.iter().map(|f| Ok((Occur::Must, filter_query(fields, f)?))).collect::<Result<Vec<_>>>()?;
            Box::new(BooleanQuery::new(clauses))
        }
        Filter::Any { filters } => {
            let clauses =
                filters.iter().map(|f| Ok((Occur::Should, filter_query(fields, f)?))).collect::<Result<Vec<_>>>()?;
            Box::new(BooleanQuery::new(clauses))
        }
        Filter::Not { filter } => Box::new(BooleanQuery::new(vec![
            (Occur::Must, Box::new(AllQuery) as Box<dyn Query>),
            (Occur::MustNot, filter_query(fields, filter)?),
        ])),
        // `Filter` is non-exhaustive: a variant this build does not know must not widen access.
        #[allow(unreachable_patterns)]
        _ => return Err(braid_core::Error::invalid_request("unsupported filter")),
    })
}

/// The indexed key of a heading path prefix.
pub(crate) fn section_key(path: &[String]) -> String {
    let mut key = String::new();
    for (i, part) in path.iter().enumerate() {
        if i > 0 {
            key.push(SECTION_SEPARATOR);
        }
        key.push_str(part.trim());
    }
    key
}

/// `query` restricted to the allowed set: the allowed documents are a required, non-scoring
/// clause, so the filter runs inside the index rather than over a top-k. When the allowed set
/// is every live record of the snapshot, the clause admits everything and is left out.
pub(crate) fn restrict(allowed: &AllowedDocs, query: Box<dyn Query>) -> Box<dyn Query> {
    if allowed.everything {
        return query;
    }
    Box::new(BooleanQuery::new(vec![(Occur::Must, Box::new(allowed.clone()) as Box<dyn Query>), (Occur::Must, query)]))
}

/// A visibility rule's weight ([`visibility_query`]'s): it depends on the rule and the schema
/// only, so the set of one snapshot hands it to the same rule's set on the next, which collects
/// the segments a commit added with it instead of building it again.
#[derive(Clone)]
pub(crate) struct RuleWeight(pub Arc<dyn Weight>);

impl std::fmt::Debug for RuleWeight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RuleWeight")
    }
}

/// The allowed set of one snapshot as sorted document ids per segment: what a visibility rule
/// admits, computed once per rule and snapshot (see `Snapshot::allowed_set`). As a query, it
/// matches exactly those documents with score 0; a segment it does not know matches nothing.
#[derive(Clone, Debug, Default)]
pub(crate) struct AllowedDocs {
    pub ords: OrdSet,
    pub segments: HashMap<SegmentId, AllowedSegment>,
    /// Whether every live record of the snapshot is allowed.
    pub everything: bool,
    /// The rule's weight, for the same rule's set on the next snapshot.
    pub rule: Option<RuleWeight>,
    /// Total field lengths over the allowed documents, by field, computed when first asked
    /// (BM25's average length over what the caller may see).
    lengths: Arc<Mutex<HashMap<Field, u64>>>,
    /// Allowed documents per term, counted when first asked ([`AllowedDocs::cached_freq`]).
    freqs: Arc<RwLock<HashMap<Term, u64>>>,
    /// Each segment's part of those sums, by segment: shared with the same rule's sets on
    /// later snapshots while the segment is unchanged ([`AllowedDocs::extend_from`]), so that
    /// after a commit only its new segments are counted.
    parts: Arc<Mutex<HashMap<SegmentId, Arc<SegmentCounts>>>>,
}

/// What was counted on one segment for one rule's allowed set: its allowed documents' field
/// lengths and their holders of each term asked for, as the segment was (`state`).
#[derive(Debug, Default)]
struct SegmentCounts {
    state: SegmentState,
    lengths: Mutex<HashMap<Field, u64>>,
    freqs: RwLock<HashMap<Term, u64>>,
}

/// The most document frequencies one allowed set keeps (about 300 KB); when full, it starts
/// again empty.
pub(crate) const MAX_CACHED_FREQS: usize = 4_096;

/// The most document frequencies one segment's part keeps ([`AllowedDocs::count_freq`]); when
/// full, it starts again empty.
const MAX_SEGMENT_FREQS: usize = 1_024;

/// The allowed documents of one segment, sorted, and as a bitset for membership tests, with
/// their ordinals and what the segment was when they were collected.
#[derive(Clone, Debug, Default)]
pub(crate) struct AllowedSegment {
    pub docs: Arc<[DocId]>,
    bits: Arc<[u64]>,
    /// By block of 64 documents: how many allowed documents come before it (a document's rank
    /// among `docs` is this and the allowed bits before it in its block).
    ranks: Arc<[u32]>,
    /// The ordinal of each of `docs`.
    ords: Arc<[u64]>,
    /// The segment's state when its documents were collected.
    state: SegmentState,
}

/// What a segment's live documents depend on: its deletions (their opstamp), and how many it
/// holds (a partition's segment may hide records its catalog does not include yet).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct SegmentState {
    delete_opstamp: Option<u64>,
    num_docs: u32,
}

impl SegmentState {
    fn of(segment: &SegmentReader) -> Self {
        SegmentState { delete_opstamp: segment.delete_opstamp(), num_docs: segment.num_docs() }
    }
}

impl AllowedSegment {
    fn new(docs: Vec<DocId>, ords: Vec<u64>, max_doc: DocId, state: SegmentState) -> Self {
        let mut bits = vec![0u64; (max_doc as usize).div_ceil(64)];
        for &d in &docs {
            bits[d as usize / 64] |= 1 << (d % 64);
        }
        let ranks: Vec<u32> = bits
            .iter()
            .scan(0u32, |before, word| {
                let rank = *before;
                *before += word.count_ones();
                Some(rank)
            })
            .collect();
        AllowedSegment {
            docs: Arc::from(docs),
            bits: Arc::from(bits),
            ranks: Arc::from(ranks),
            ords: Arc::from(ords),
            state,
        }
    }

    /// Where `doc` is among the allowed documents (`docs[rank] == doc`), if it is allowed.
    #[inline]
    pub fn rank(&self, doc: DocId) -> Option<usize> {
        let (w, bit) = (doc as usize / 64, 1u64 << (doc % 64));
        let word = *self.bits.get(w)?;
        (word & bit != 0).then(|| self.ranks[w] as usize + (word & (bit - 1)).count_ones() as usize)
    }

    /// Whether `doc` is allowed.
    #[inline]
    pub fn contains(&self, doc: DocId) -> bool {
        self.bits.get(doc as usize / 64).is_some_and(|w| w & (1 << (doc % 64)) != 0)
    }

    /// Which of documents `64 · block` to `64 · block + 63` are allowed: bit `i` for the
    /// `i`-th (0 past the segment's end).
    #[inline]
    pub fn block(&self, block: usize) -> u64 {
        self.bits.get(block).copied().unwrap_or(0)
    }
}

impl AllowedDocs {
    /// The number of allowed records.
    pub fn len(&self) -> u64 {
        self.ords.len() as u64
    }

    /// Whether `doc` of `segment` is allowed (and so alive).
    #[inline]
    pub fn admits(&self, segment: &SegmentReader, allowed: Option<&AllowedSegment>, doc: DocId) -> bool {
        match allowed {
            Some(a) => a.contains(doc),
            None => self.everything && segment.alive_bitset().is_none_or(|a| a.is_alive(doc)),
        }
    }

    /// The allowed documents of `segment`, or `None` when every live document is allowed.
    pub fn of_segment(&self, segment: &SegmentReader) -> Option<&AllowedSegment> {
        if self.everything {
            return None;
        }
        static EMPTY: std::sync::OnceLock<AllowedSegment> = std::sync::OnceLock::new();
        Some(self.segments.get(&segment.segment_id()).unwrap_or_else(|| EMPTY.get_or_init(AllowedSegment::default)))
    }

    /// The sum of `field`'s lengths (its decoded field norms) over the allowed documents.
    pub fn total_length<'s>(
        &self,
        segments: impl Iterator<Item = &'s SegmentReader>,
        field: Field,
    ) -> tantivy::Result<u64> {
        if let Some(&n) = self.lengths.lock().unwrap_or_else(|p| p.into_inner()).get(&field) {
            return Ok(n);
        }
        let mut total = 0u64;
        for segment in segments {
            let part = self.part(segment);
            let known = part.lengths.lock().unwrap_or_else(|p| p.into_inner()).get(&field).copied();
            total += match known {
                Some(n) => n,
                None => {
                    let norms = segment.get_fieldnorms_reader(field)?;
                    let n = match self.of_segment(segment) {
                        Some(allowed) => allowed.docs.iter().map(|&d| u64::from(norms.fieldnorm(d))).sum::<u64>(),
                        None => segment.doc_ids_alive().map(|d| u64::from(norms.fieldnorm(d))).sum::<u64>(),
                    };
                    part.lengths.lock().unwrap_or_else(|p| p.into_inner()).insert(field, n);
                    n
                }
            };
        }
        self.lengths.lock().unwrap_or_else(|p| p.into_inner()).insert(field, total);
        Ok(total)
    }

    /// The allowed documents holding `term` over `segments`, each segment's part counted by
    /// `count` unless counted before on this segment as it is, for this rule (on this
    /// snapshot or an earlier one). The sum is kept ([`AllowedDocs::cached_freq`]).
    pub fn count_freq<'s>(
        &self,
        segments: impl Iterator<Item = &'s SegmentReader>,
        term: &Term,
        mut count: impl FnMut(&SegmentReader) -> tantivy::Result<u64>,
    ) -> tantivy::Result<u64> {
        let mut total = 0u64;
        for segment in segments {
            if self.of_segment(segment).is_none() && segment.alive_bitset().is_none() {
                // Every document allowed and alive: the index's own count, nothing to keep.
                total += count(segment)?;
                continue;
            }
            let part = self.part(segment);
            let known = part.freqs.read().unwrap_or_else(|p| p.into_inner()).get(term).copied();
            total += match known {
                Some(n) => n,
                None => {
                    let n = count(segment)?;
                    let mut freqs = part.freqs.write().unwrap_or_else(|p| p.into_inner());
                    if freqs.len() >= MAX_SEGMENT_FREQS {
                        freqs.clear();
                    }
                    freqs.insert(term.clone(), n);
                    n
                }
            };
        }
        self.remember_freq(term, total);
        Ok(total)
    }

    /// The counts kept for `segment` as it is now: those of an earlier count on it, or new
    /// ones when it has changed since (or was never counted).
    fn part(&self, segment: &SegmentReader) -> Arc<SegmentCounts> {
        let state = SegmentState::of(segment);
        let mut parts = self.parts.lock().unwrap_or_else(|p| p.into_inner());
        let part = parts.entry(segment.segment_id()).or_default();
        if part.state != state {
            *part = Arc::new(SegmentCounts { state, ..SegmentCounts::default() });
        }
        part.clone()
    }

    /// The allowed documents holding `term`, when counted before on this set: by any request
    /// whose rule admits exactly these records. A common word's postings are long (at 1M
    /// records and 10 % allowed, counting the query's words took about 2 ms a search), and the
    /// count depends on the allowed records alone, so it is kept with them, as the lengths are.
    pub fn cached_freq(&self, term: &Term) -> Option<u64> {
        self.freqs.read().unwrap_or_else(|p| p.into_inner()).get(term).copied()
    }

    /// Keeps `count` as the allowed documents holding `term` (see [`AllowedDocs::cached_freq`]).
    pub fn remember_freq(&self, term: &Term, count: u64) {
        let mut freqs = self.freqs.write().unwrap_or_else(|p| p.into_inner());
        if freqs.len() >= MAX_CACHED_FREQS {
            freqs.clear();
        }
        freqs.insert(term.clone(), count);
    }

    /// The same rule's set on a later snapshot whose segments in scope are `segments`: `seed`'s
    /// documents of each segment that has not changed since (the same segment, deletions and
    /// live count), and `weight` (the rule's query) run on the others.
    pub(crate) fn extend_from<'a>(
        seed: &AllowedDocs,
        segments: impl Iterator<Item = (SegmentOrdinal, &'a SegmentReader)>,
        weight: &dyn Weight,
    ) -> tantivy::Result<AllowedDocs> {
        let mut allowed = AllowedDocs { ords: seed.ords.clone(), ..AllowedDocs::default() };
        let mut fresh = Vec::new();
        for (ord, segment) in segments {
            let id = segment.segment_id();
            match seed.segments.get(&id) {
                Some(kept) if kept.state == SegmentState::of(segment) => {
                    allowed.segments.insert(id, kept.clone());
                }
                _ => fresh.push(AllowedCollector.collect_segment(weight, ord, segment)?),
            }
        }
        // The same documents in the segments kept: what was counted on them still holds.
        let kept_parts: HashMap<SegmentId, Arc<SegmentCounts>> = {
            let counted = seed.parts.lock().unwrap_or_else(|p| p.into_inner());
            allowed
                .segments
                .iter()
                .filter_map(|(id, kept)| Some((*id, counted.get(id).filter(|p| p.state == kept.state)?.clone())))
                .collect()
        };
        *allowed.parts.lock().unwrap_or_else(|p| p.into_inner()) = kept_parts;
        // The ordinals of segments gone or changed leave before the fresh ones come in: a merge
        // moves the same records to a new segment.
        for (id, gone) in &seed.segments {
            if !allowed.segments.contains_key(id) {
                for &ord in gone.ords.iter() {
                    allowed.ords.remove(ord);
                }
            }
        }
        for (id, segment) in fresh {
            for &ord in segment.ords.iter() {
                allowed.ords.insert(ord);
            }
            allowed.segments.insert(id, segment);
        }
        Ok(allowed)
    }

    /// Approximate heap size, for the snapshot's cache budget (the frequencies counted at
    /// their most, each segment's parts too).
    pub fn heap_bytes(&self) -> usize {
        let segments: usize =
            self.segments.values().map(|s| s.docs.len() * 4 + s.ords.len() * 8 + s.bits.len() * 8 + 64).sum();
        let parts = self.segments.len() * MAX_SEGMENT_FREQS * 80;
        self.ords.heap_bytes() + segments + 128 + MAX_CACHED_FREQS * 80 + parts
    }
}

impl Query for AllowedDocs {
    fn weight(&self, _: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(self.clone()))
    }
}

impl Weight for AllowedDocs {
    fn scorer(&self, reader: &SegmentReader, _boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        let docs = self.segments.get(&reader.segment_id()).map_or_else(|| Arc::from(Vec::new()), |s| s.docs.clone());
        Ok(Box::new(DocsScorer { docs, at: 0 }))
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        let allowed = self.segments.get(&reader.segment_id()).is_some_and(|s| s.contains(doc));
        if !allowed {
            return Err(tantivy::TantivyError::InvalidArgument("document not allowed".into()));
        }
        Ok(Explanation::new("allowed", 0.0))
    }
}

/// Sorted document ids as a scorer (score 0).
struct DocsScorer {
    docs: Arc<[DocId]>,
    at: usize,
}

impl DocSet for DocsScorer {
    fn advance(&mut self) -> DocId {
        self.at += 1;
        self.doc()
    }

    fn seek(&mut self, target: DocId) -> DocId {
        if self.doc() < target {
            // Galloping, then a binary search in the bracket: intersections seek forward often.
            let mut step = 1;
            let mut hi = self.at;
            while hi < self.docs.len() && self.docs[hi] < target {
                self.at = hi;
                hi += step;
                step *= 2;
            }
            let hi = hi.min(self.docs.len());
            self.at += self.docs[self.at..hi].partition_point(|&d| d < target);
        }
        self.doc()
    }

    fn doc(&self) -> DocId {
        self.docs.get(self.at).copied().unwrap_or(TERMINATED)
    }

    fn size_hint(&self) -> u32 {
        (self.docs.len() - self.at.min(self.docs.len())) as u32
    }
}

impl Scorer for DocsScorer {
    fn score(&mut self) -> Score {
        0.0
    }
}

/// Collects what a visibility query admits: ordinals, and document ids per segment.
pub(crate) struct AllowedCollector;

pub(crate) struct AllowedSegmentCollector {
    segment: SegmentId,
    max_doc: DocId,
    state: SegmentState,
    column: Column<u64>,
    docs: Vec<DocId>,
    ords: Vec<u64>,
}

impl Collector for AllowedCollector {
    type Fruit = AllowedDocs;
    type Child = AllowedSegmentCollector;

    fn for_segment(&self, _: SegmentOrdinal, segment: &SegmentReader) -> tantivy::Result<Self::Child> {
        Ok(AllowedSegmentCollector {
            segment: segment.segment_id(),
            max_doc: segment.max_doc(),
            state: SegmentState::of(segment),
            column: segment.fast_fields().u64("ord")?,
            docs: Vec::new(),
            ords: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(&self, fruits: Vec<(SegmentId, AllowedSegment)>) -> tantivy::Result<AllowedDocs> {
        let mut allowed = AllowedDocs::default();
        for (id, segment) in fruits {
            for &ord in segment.ords.iter() {
                allowed.ords.insert(ord);
            }
            allowed.segments.insert(id, segment);
        }
        Ok(allowed)
    }
}

impl SegmentCollector for AllowedSegmentCollector {
    type Fruit = (SegmentId, AllowedSegment);

    fn collect(&mut self, doc: DocId, _: Score) {
        if let Some(ord) = self.column.first(doc) {
            self.docs.push(doc);
            self.ords.push(ord);
        }
    }

    fn harvest(self) -> Self::Fruit {
        (self.segment, AllowedSegment::new(self.docs, self.ords, self.max_doc, self.state))
    }
}

/// Collects the ordinals of every matching record.
pub(crate) struct OrdCollector;

pub(crate) struct OrdSegmentCollector {
    column: Column<u64>,
    ords: Vec<u64>,
}

impl Collector for OrdCollector {
    type Fruit = OrdSet;
    type Child = OrdSegmentCollector;

    fn for_segment(&self, _: SegmentOrdinal, segment: &SegmentReader) -> tantivy::Result<Self::Child> {
        Ok(OrdSegmentCollector { column: segment.fast_fields().u64("ord")?, ords: Vec::new() })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(&self, fruits: Vec<Vec<u64>>) -> tantivy::Result<OrdSet> {
        Ok(fruits.into_iter().flatten().collect())
    }
}

impl SegmentCollector for OrdSegmentCollector {
    type Fruit = Vec<u64>;

    fn collect(&mut self, doc: DocId, _: Score) {
        if let Some(ord) = self.column.first(doc) {
            self.ords.push(ord);
        }
    }

    fn harvest(self) -> Vec<u64> {
        self.ords
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_range_holds_exactly_the_owner_tokens() {
        let end = owner_prefix_end();
        assert_eq!(end, "owner;");
        for inside in ["owner:", "owner:user:idp/alice", "owner:\u{10ffff}"] {
            assert!(inside >= OWNER_PREFIX && inside < end.as_str(), "{inside}");
        }
        for outside in ["owner", "owners:x", "owner;x", "ownerx", "Owner:x", "public", "tenant:acme"] {
            assert!(!(outside >= OWNER_PREFIX && outside < end.as_str()), "{outside}");
        }
    }

    #[test]
    fn allowed_docs_seek_like_a_linear_scan() {
        let docs: Vec<DocId> = (0..500).filter(|d| d % 7 == 0 || d % 11 == 3).collect();
        let naive = |target: DocId| docs.iter().copied().find(|&d| d >= target).unwrap_or(TERMINATED);
        for start in [0usize, 1, 5, 40] {
            for target in [0, 3, 4, 77, 78, 250, 498, 499, 500, 10_000] {
                let mut scorer = DocsScorer { docs: Arc::from(docs.clone()), at: start.min(docs.len()) };
                let from = scorer.doc();
                let expected = if from >= target { from } else { naive(target) };
                assert_eq!(scorer.seek(target), expected, "start {start} target {target}");
                assert_eq!(scorer.doc(), expected);
            }
        }
        let mut scorer = DocsScorer { docs: Arc::from(Vec::new()), at: 0 };
        assert_eq!((scorer.doc(), scorer.seek(3), scorer.size_hint()), (TERMINATED, TERMINATED, 0));
    }
}
