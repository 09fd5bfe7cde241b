//! The segments of one commit across the index's partitions, under one numbering, and the
//! scope of a request: the partitions its principal may see.
//!
//! Each partition (see [`crate::partition`]) is a tantivy index of its own, with its own
//! searcher. A [`Segments`] lays their segments end to end, so a segment ordinal (and a
//! `DocAddress`) names one segment of one partition for the whole snapshot; a [`Scope`] is the
//! part of that list a request reads. Everything a request walks — postings, term
//! dictionaries, field norms, columns — it reaches through its scope, so a search never opens a
//! segment of a partition its principal cannot see.

use std::collections::HashMap;
use std::sync::Arc;

use braid_core::Visibility;
use tantivy::collector::Collector;
use tantivy::columnar::Column;
use tantivy::directory::OwnedBytes;
use tantivy::fastfield::{write_alive_bitset, AliveBitSet};
use tantivy::index::{SegmentId, SegmentMeta};
use tantivy::query::{Bm25StatisticsProvider, EnableScoring, Query};
use tantivy::schema::document::DocumentDeserialize;
use tantivy::schema::IndexRecordOption;
use tantivy::{DocAddress, DocSet, Index, Searcher, SegmentOrdinal, SegmentReader, Term, TERMINATED};
use tantivy_common::BitSet;

use crate::error::lexical;
use crate::ids::SegmentIds;
use crate::partition::{Catalog, Part};
use crate::schema::Fields;

/// One partition's latest commit, as [`Segments::new`] takes it.
pub(crate) struct PartCommit {
    pub part: Part,
    pub index: Index,
    pub searcher: Searcher,
    /// The metadata of the commit's segments.
    pub metas: Vec<SegmentMeta>,
    /// The commit's payload (the main partition's holds the [`Catalog`]).
    pub payload: Option<String>,
}

/// One partition's searcher and the range of the snapshot's segment ordinals it holds.
struct PartSegments {
    part: Part,
    searcher: Searcher,
    /// The snapshot ordinal of this partition's first segment.
    first: SegmentOrdinal,
}

/// Every segment of one commit, across the partitions, numbered as one list (see the module
/// docs). The main partition comes first.
pub(crate) struct Segments {
    parts: Vec<PartSegments>,
    /// The main partition's catalog these segments were read under.
    catalog: Catalog,
    readers: Vec<SegmentReader>,
    /// For each segment, the index of its partition in `parts`.
    part_of: Vec<usize>,
    /// Each segment's `ord` column.
    pub(crate) ord_columns: Vec<Column<u64>>,
    /// Each segment's `id` column, where it has one (segments written before it existed keep
    /// ids in the document store only).
    pub(crate) id_columns: Vec<Option<Arc<SegmentIds>>>,
}

impl Segments {
    /// The segments of each partition's latest commit, the main partition first, as the main
    /// partition's `catalog` says they are: a tenant partition's record that the catalog hides
    /// ([`Catalog::hides`]) is read as deleted. A segment `previous` (the segments of the
    /// snapshot before) held keeps the ids it read: a segment never changes.
    pub(crate) fn new(
        commits: Vec<PartCommit>,
        catalog: Catalog,
        fields: &Fields,
        previous: Option<&Segments>,
    ) -> braid_core::Result<Self> {
        let known: HashMap<SegmentId, Arc<SegmentIds>> = previous
            .map(|p| {
                p.readers
                    .iter()
                    .zip(&p.id_columns)
                    .filter_map(|(r, ids)| Some((r.segment_id(), ids.clone()?)))
                    .collect()
            })
            .unwrap_or_default();
        let mut parts = Vec::with_capacity(commits.len());
        let mut readers = Vec::new();
        let mut part_of = Vec::new();
        let mut ord_columns = Vec::new();
        let mut id_columns = Vec::new();
        for (i, commit) in commits.into_iter().enumerate() {
            let first = readers.len() as SegmentOrdinal;
            for segment in commit.searcher.segment_readers() {
                let ords = segment.fast_fields().u64("ord").map_err(lexical)?;
                let segment = match commit.part.key() {
                    Some(key) => as_committed(&commit, segment, &ords, &catalog, key, fields)?,
                    None => segment.clone(),
                };
                let ids = match known.get(&segment.segment_id()) {
                    Some(ids) => Some(ids.clone()),
                    None => {
                        let column = segment.fast_fields().str("id").map_err(lexical)?;
                        column.map(|c| SegmentIds::read(&c)).transpose().map_err(lexical)?.map(Arc::new)
                    }
                };
                id_columns.push(ids);
                ord_columns.push(ords);
                readers.push(segment);
                part_of.push(i);
            }
            parts.push(PartSegments { part: commit.part, searcher: commit.searcher, first });
        }
        Ok(Segments { parts, catalog, readers, part_of, ord_columns, id_columns })
    }

    /// Whether `commits` under `catalog` are what these segments were read from: the same
    /// catalog and partitions, each with the same segments and deletions.
    pub(crate) fn same_commits(&self, commits: &[PartCommit], catalog: &Catalog) -> bool {
        let state = |s: &Searcher| -> Vec<_> {
            s.segment_readers().iter().map(|r| (r.segment_id(), r.num_deleted_docs())).collect()
        };
        self.catalog == *catalog
            && self.parts.len() == commits.len()
            && self.parts.iter().zip(commits).all(|(p, c)| p.part == c.part && state(&p.searcher) == state(&c.searcher))
    }

    /// The promoted tenants these segments hold partitions of.
    pub(crate) fn promoted_tenants(&self) -> Vec<String> {
        self.parts()
            .filter_map(|p| match p {
                Part::Tenant(t) => Some(t.clone()),
                Part::Main | Part::Pool => None,
            })
            .collect()
    }

    /// Every segment, in snapshot order.
    pub(crate) fn readers(&self) -> &[SegmentReader] {
        &self.readers
    }

    /// The segment with snapshot ordinal `ord`.
    pub(crate) fn reader(&self, ord: SegmentOrdinal) -> &SegmentReader {
        &self.readers[ord as usize]
    }

    /// The position of `part` among the partitions, if these segments hold it.
    pub(crate) fn position(&self, part: &Part) -> Option<usize> {
        self.parts.iter().position(|p| p.part == *part)
    }

    /// The partition of the segment with snapshot ordinal `ord`.
    pub(crate) fn part_of(&self, ord: SegmentOrdinal) -> &Part {
        &self.parts[self.part_of[ord as usize]].part
    }

    /// The live records of every partition.
    pub(crate) fn num_docs(&self) -> u64 {
        self.readers.iter().map(|r| u64::from(r.num_docs())).sum()
    }

    /// The partitions, main first.
    pub(crate) fn parts(&self) -> impl Iterator<Item = &Part> {
        self.parts.iter().map(|p| &p.part)
    }

    /// The main partition's searcher (its schema and tokenizers are every partition's).
    pub(crate) fn main(&self) -> &Searcher {
        &self.parts[0].searcher
    }

    /// The stored document at `address` (a snapshot address).
    pub(crate) fn doc<D: DocumentDeserialize>(&self, address: DocAddress) -> tantivy::Result<D> {
        let part = self
            .part_of
            .get(address.segment_ord as usize)
            .copied()
            .ok_or_else(|| tantivy::TantivyError::InvalidArgument(format!("no segment {}", address.segment_ord)))?;
        let p = &self.parts[part];
        p.searcher.doc(DocAddress::new(address.segment_ord - p.first, address.doc_id))
    }

    /// Every partition: what index-wide work reads (opening, ids, the vocabulary).
    pub(crate) fn all(&self) -> Scope<'_> {
        Scope { segments: self, visible: vec![true; self.parts.len()] }
    }

    /// The partitions `visibility` can admit a record of: the main one (records without a
    /// tenant or of several), the pool when the principal holds a tenant not promoted, and each
    /// promoted tenant whose token the principal holds.
    pub(crate) fn scope(&self, visibility: &Visibility) -> Scope<'_> {
        let tenants = visibility.tenant_terms();
        let pooled = tenants.iter().any(|t| *t != braid_core::NO_TENANT_TOKEN && !self.catalog.promoted.contains(*t));
        let visible = self
            .parts
            .iter()
            .map(|p| match &p.part {
                Part::Main => true,
                Part::Pool => pooled,
                Part::Tenant(token) => tenants.contains(&token.as_str()),
            })
            .collect();
        Scope { segments: self, visible }
    }
}

/// The segments one request may read: those of the partitions its principal may see (see the
/// module docs). Segment ordinals stay the snapshot's.
pub(crate) struct Scope<'a> {
    segments: &'a Segments,
    visible: Vec<bool>,
}

impl<'a> Scope<'a> {
    /// The segments in scope, with their snapshot ordinals.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (SegmentOrdinal, &'a SegmentReader)> + '_ {
        let segments = self.segments;
        segments
            .readers
            .iter()
            .enumerate()
            .filter(|(i, _)| self.visible[segments.part_of[*i]])
            .map(|(i, r)| (i as SegmentOrdinal, r))
    }

    /// The segments in scope.
    pub(crate) fn readers(&self) -> impl Iterator<Item = &'a SegmentReader> + '_ {
        self.iter().map(|(_, r)| r)
    }

    /// The live records of the partitions in scope.
    pub(crate) fn num_docs(&self) -> u64 {
        self.readers().map(|r| u64::from(r.num_docs())).sum()
    }

    /// The keys ([`Part::key`]) of the partitions in scope besides the main one: the pool's,
    /// then the promoted tenants' in token order.
    pub(crate) fn keys(&self) -> Vec<String> {
        let segments = self.segments;
        segments
            .parts
            .iter()
            .zip(&self.visible)
            .filter(|(_, visible)| **visible)
            .filter_map(|(p, _)| p.part.key().map(str::to_string))
            .collect()
    }

    /// Whether every partition is in scope.
    pub(crate) fn is_all(&self) -> bool {
        self.visible.iter().all(|v| *v)
    }

    /// The snapshot's segments (for addresses found in scope).
    pub(crate) fn segments(&self) -> &'a Segments {
        self.segments
    }

    /// Runs an unscored `collector` over the segments in scope.
    ///
    /// # Errors
    /// A collector that scores: statistics of one partition are not a scope's, so a scored
    /// search takes them from [`Scope::search_scored`].
    pub(crate) fn search<C: Collector>(&self, query: &dyn Query, collector: &C) -> tantivy::Result<C::Fruit> {
        if collector.requires_scoring() {
            return Err(tantivy::TantivyError::InvalidArgument("a scored search needs its statistics".into()));
        }
        self.run(query, collector, EnableScoring::disabled_from_searcher(self.segments.main()))
    }

    /// Runs `collector` over the segments in scope, scoring with `statistics`.
    pub(crate) fn search_scored<C: Collector>(
        &self,
        query: &dyn Query,
        collector: &C,
        statistics: &dyn Bm25StatisticsProvider,
    ) -> tantivy::Result<C::Fruit> {
        let scoring = if collector.requires_scoring() {
            EnableScoring::enabled_from_statistics_provider(statistics, self.segments.main())
        } else {
            EnableScoring::disabled_from_searcher(self.segments.main())
        };
        self.run(query, collector, scoring)
    }

    fn run<C: Collector>(
        &self,
        query: &dyn Query,
        collector: &C,
        scoring: EnableScoring<'_>,
    ) -> tantivy::Result<C::Fruit> {
        let weight = query.weight(scoring)?;
        let mut fruits = Vec::new();
        for (ord, segment) in self.iter() {
            fruits.push(collector.collect_segment(weight.as_ref(), ord, segment)?);
        }
        collector.merge_fruits(fruits)
    }
}

/// `segment` of the pool or a promoted tenant's partition (of catalog key `key`) as the main
/// partition's commit has it: its records that the catalog hides (written by a commit still
/// under way or that a crash cut short, or superseded by the catalog's commit) read as deleted.
/// The segment itself when the catalog hides none of them.
fn as_committed(
    commit: &PartCommit,
    segment: &SegmentReader,
    ords: &Column<u64>,
    catalog: &Catalog,
    key: &str,
    fields: &Fields,
) -> braid_core::Result<SegmentReader> {
    let mut hidden = Vec::new();
    if catalog.ords_through.is_some_and(|t| ords.max_value() > t) {
        hidden.extend(segment.doc_ids_alive().filter(|&d| ords.first(d).is_some_and(|o| catalog.hides(key, o))));
    }
    if let Some(superseded) = catalog.superseded.get(key) {
        let inverted = segment.inverted_index(fields.ord).map_err(lexical)?;
        for &ord in superseded {
            let term = Term::from_field_u64(fields.ord, ord);
            if let Some(mut postings) = inverted.read_postings(&term, IndexRecordOption::Basic).map_err(lexical)? {
                while postings.doc() != TERMINATED {
                    hidden.push(postings.doc());
                    postings.advance();
                }
            }
        }
    }
    if hidden.is_empty() {
        return Ok(segment.clone());
    }
    let meta = commit.metas.iter().find(|m| m.id() == segment.segment_id()).ok_or_else(|| {
        braid_core::Error::Lexical(format!("segment {} is not in its commit", segment.segment_id().short_uuid_string()))
    })?;
    let mut alive = BitSet::with_max_value_and_full(segment.max_doc());
    for doc in hidden {
        alive.remove(doc);
    }
    let mut bytes = Vec::new();
    write_alive_bitset(&alive, &mut bytes).map_err(|e| braid_core::Error::Lexical(format!("a hidden set: {e}")))?;
    let custom = AliveBitSet::open(OwnedBytes::new(bytes));
    SegmentReader::open_with_custom_alive_set(&commit.index.segment(meta.clone()), Some(custom)).map_err(lexical)
}
