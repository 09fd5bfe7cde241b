//! Access control and structured filters as tantivy queries, and the allowed set.

use std::ops::Bound;

use braid_core::{AllowedSet, Filter, OrdSet, Result, Visibility};
use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::query::{AllQuery, BooleanQuery, ConstScoreQuery, Occur, Query, RangeQuery, TermQuery, TermSetQuery};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocId, Score, SegmentOrdinal, SegmentReader, Term};

use crate::schema::Fields;

/// Separates heading levels in the indexed section paths.
pub(crate) const SECTION_SEPARATOR: char = '\u{1f}';

/// The visibility rule as a non-scoring tantivy query: the record's ACL meets the principal,
/// its tenant (if any) is the principal's, and the structured filter holds.
pub(crate) fn visibility_query(fields: &Fields, visibility: &Visibility) -> Result<Box<dyn Query>> {
    let terms = |field: Field, tokens: Vec<&str>| -> Box<dyn Query> {
        Box::new(TermSetQuery::new(tokens.into_iter().map(|t| Term::from_field_text(field, t))))
    };
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![
        (Occur::Must, terms(fields.acl, visibility.acl_terms())),
        (Occur::Must, terms(fields.tenant, visibility.tenant_terms())),
    ];
    if let Some(filter) = visibility.filter() {
        clauses.push((Occur::Must, filter_query(fields, filter)?));
    }
    Ok(Box::new(ConstScoreQuery::new(Box::new(BooleanQuery::new(clauses)), 0.0)))
}

fn filter_query(fields: &Fields, filter: &Filter) -> Result<Box<dyn Query>> {
    let term_query = |field: Field, value: &str| -> Box<dyn Query> {
        Box::new(TermQuery::new(Term::from_field_text(field, value), IndexRecordOption::Basic))
    };
    Ok(match filter {
        Filter::Keyword { field, value } => term_query(fields.keyword(field)?, value),
        Filter::KeywordAny { field, values } => {
            let f = fields.keyword(field)?;
            Box::new(TermSetQuery::new(values.iter().map(|v| Term::from_field_text(f, v))))
        }
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

/// `query` restricted to the allowed set: the visibility rule is a required, non-scoring
/// clause, so the filter runs inside the index rather than over a top-k.
pub(crate) fn restrict(fields: &Fields, allowed: &AllowedSet, query: Box<dyn Query>) -> Result<Box<dyn Query>> {
    Ok(Box::new(BooleanQuery::new(vec![
        (Occur::Must, visibility_query(fields, allowed.visibility())?),
        (Occur::Must, query),
    ])))
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
