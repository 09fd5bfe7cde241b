//! The records a request matches, and the facets counted over them.
//!
//! A leg's top k is only the head of what it matches; facets count the whole match set. When a
//! request asks for facets, the lexical and fuzzy legs record every allowed document their weighted query
//! scores above zero (the same accumulators that rank, so no second pass), the semantic leg's
//! candidates join, and the counts are read from the keyword fields' postings and the numeric
//! fields' columns for those documents only. Every document in the set is allowed, so every
//! count is a function of the caller's records (ARCHITECTURE.md, threat model): a value only
//! hidden records hold has no matched document and never appears.

use std::collections::BTreeMap;
use std::sync::Mutex;

use braid_core::{Facet, Facets, Ordinal, RangeCount, Result, ValueCount};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocAddress, DocId, Score, SegmentReader};

use crate::error::lexical;
use crate::scorer;
use crate::snapshot::Snapshot;
use crate::visibility::AllowedSegment;

/// Matched documents as one bitset per segment (by segment ordinal), filled by the legs.
#[derive(Debug, Default)]
pub(crate) struct Matches {
    segments: Mutex<Vec<Vec<u64>>>,
}

impl Matches {
    fn with<R>(&self, segment_ord: usize, max_doc: usize, f: impl FnOnce(&mut Vec<u64>) -> R) -> R {
        let mut segments = self.segments.lock().unwrap_or_else(|p| p.into_inner());
        if segments.len() <= segment_ord {
            segments.resize_with(segment_ord + 1, Vec::new);
        }
        let bits = &mut segments[segment_ord];
        if bits.len() < max_doc.div_ceil(64) {
            bits.resize(max_doc.div_ceil(64), 0);
        }
        f(bits)
    }

    /// Records the allowed documents of one segment that `scores` (kept as
    /// [`scorer::kept_by_rank`] says) scores above zero.
    pub fn add_scored(
        &self,
        segment_ord: usize,
        segment: &SegmentReader,
        scores: &[Score],
        allowed: Option<&AllowedSegment>,
    ) {
        let max_doc = segment.max_doc() as usize;
        let by_rank = scorer::kept_by_rank(allowed, max_doc).is_some();
        self.with(segment_ord, max_doc, |bits| match allowed {
            Some(allowed) => {
                for (rank, &doc) in allowed.docs.iter().enumerate() {
                    let at = if by_rank { rank } else { doc as usize };
                    if scores.get(at).is_some_and(|&s| s > 0.0) {
                        set(bits, doc);
                    }
                }
            }
            None => {
                let alive = segment.alive_bitset();
                for (doc, &s) in scores.iter().enumerate() {
                    if s > 0.0 && alive.is_none_or(|a| a.is_alive(doc as DocId)) {
                        set(bits, doc as DocId);
                    }
                }
            }
        })
    }

    /// Records documents by address (tantivy's own queries, the semantic leg's candidates).
    pub fn add_addresses(&self, snapshot: &Snapshot, addresses: impl IntoIterator<Item = DocAddress>) {
        for a in addresses {
            let Some(segment) = snapshot.segments.readers().get(a.segment_ord as usize) else { continue };
            self.with(a.segment_ord as usize, segment.max_doc() as usize, |bits| set(bits, a.doc_id));
        }
    }

    fn take(&self) -> Vec<Vec<u64>> {
        std::mem::take(&mut *self.segments.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

fn set(bits: &mut [u64], doc: DocId) {
    if let Some(w) = bits.get_mut(doc as usize / 64) {
        *w |= 1 << (doc % 64);
    }
}

fn contains(bits: &[u64], doc: DocId) -> bool {
    bits.get(doc as usize / 64).is_some_and(|w| w & (1 << (doc % 64)) != 0)
}

fn docs(bits: &[u64]) -> impl Iterator<Item = DocId> + '_ {
    bits.iter().enumerate().flat_map(|(i, &word)| {
        let mut w = word;
        std::iter::from_fn(move || {
            if w == 0 {
                return None;
            }
            let b = w.trailing_zeros();
            w &= w - 1;
            Some(i as DocId * 64 + b)
        })
    })
}

/// Counts `facets` over the matched documents plus the `extra` ordinals (already allowed).
pub(crate) fn count(snapshot: &Snapshot, matches: &Matches, facets: &[Facet], extra: &[Ordinal]) -> Result<Facets> {
    for &ord in extra {
        if let Some(address) = snapshot.address_of_ord(ord)? {
            matches.add_addresses(snapshot, [address]);
        }
    }
    let bits = matches.take();
    let segments = snapshot.segments.readers();
    let mut out =
        Facets { matched: bits.iter().flatten().map(|w| u64::from(w.count_ones())).sum(), ..Facets::default() };
    for facet in facets {
        facet.validate()?;
        match facet {
            Facet::Values { field, size } => {
                let f = snapshot.fields.keyword(field)?;
                let mut counts: BTreeMap<String, u64> = BTreeMap::new();
                for (segment_ord, segment) in segments.iter().enumerate() {
                    let Some(bits) = bits.get(segment_ord).filter(|b| b.iter().any(|&w| w != 0)) else { continue };
                    let inverted = segment.inverted_index(f).map_err(lexical)?;
                    let mut stream = inverted.terms().stream().map_err(lexical)?;
                    while stream.advance() {
                        let mut postings = inverted
                            .read_block_postings_from_terminfo(stream.value(), IndexRecordOption::Basic)
                            .map_err(lexical)?;
                        let mut n = 0u64;
                        loop {
                            let block = postings.docs();
                            if block.is_empty() {
                                break;
                            }
                            n += block.iter().filter(|&&d| contains(bits, d)).count() as u64;
                            postings.advance();
                        }
                        if n > 0 {
                            let value = String::from_utf8_lossy(stream.key()).into_owned();
                            *counts.entry(value).or_insert(0) += n;
                        }
                    }
                }
                let mut values: Vec<ValueCount> =
                    counts.into_iter().map(|(value, count)| ValueCount { value, count }).collect();
                values.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.value.cmp(&b.value)));
                values.truncate(*size);
                out.values.insert(field.clone(), values);
            }
            Facet::Ranges { field, ranges } => {
                snapshot.fields.number(field)?;
                let mut counts = vec![0u64; ranges.len()];
                let column_name = format!("{}{field}", crate::schema::NUMBER_PREFIX);
                for (segment_ord, segment) in segments.iter().enumerate() {
                    let Some(bits) = bits.get(segment_ord) else { continue };
                    let column = segment.fast_fields().f64(&column_name).map_err(lexical)?;
                    for doc in docs(bits) {
                        let Some(v) = column.first(doc) else { continue };
                        for (c, r) in counts.iter_mut().zip(ranges) {
                            *c += u64::from(r.contains(v));
                        }
                    }
                }
                let counted = ranges.iter().zip(counts).map(|(r, count)| RangeCount { from: r.from, to: r.to, count });
                out.ranges.insert(field.clone(), counted.collect());
            }
        }
    }
    Ok(out)
}

/// Records located by ordinal (see [`Snapshot::locate`]): what boosts read their fields from.
#[derive(Debug, Clone)]
pub struct Located {
    addresses: Vec<Option<DocAddress>>,
}

impl Located {
    /// How many ordinals were located (found or not).
    pub fn len(&self) -> usize {
        self.addresses.len()
    }

    /// Whether no ordinal was given.
    pub fn is_empty(&self) -> bool {
        self.addresses.is_empty()
    }
}

impl Snapshot {
    /// Finds the live documents of `ords`, in order (for [`Snapshot::numbers_of`] and
    /// [`Snapshot::holds_keyword`]).
    ///
    /// # Errors
    /// [`braid_core::Error::Lexical`] when the index cannot be read.
    pub fn locate(&self, ords: &[Ordinal]) -> Result<Located> {
        let addresses = ords.iter().map(|&o| self.address_of_ord(o)).collect::<Result<_>>()?;
        Ok(Located { addresses })
    }

    /// The value of numeric field `field` for each located record (`None` without one), read
    /// from its column.
    ///
    /// # Errors
    /// [`braid_core::Error::UnknownField`] when `field` is not a declared numeric field.
    pub fn numbers_of(&self, located: &Located, field: &str) -> Result<Vec<Option<f64>>> {
        self.fields.number(field)?;
        let name = format!("{}{field}", crate::schema::NUMBER_PREFIX);
        let segments = self.segments.readers();
        let mut columns = Vec::with_capacity(segments.len());
        for s in segments {
            columns.push(s.fast_fields().f64(&name).map_err(lexical)?);
        }
        Ok(located
            .addresses
            .iter()
            .map(|a| a.and_then(|a| columns.get(a.segment_ord as usize)?.first(a.doc_id)))
            .collect())
    }

    /// Whether each located record's keyword field `field` holds `value`.
    ///
    /// # Errors
    /// [`braid_core::Error::UnknownField`] when `field` is not a declared keyword field.
    pub fn holds_keyword(&self, located: &Located, field: &str, value: &str) -> Result<Vec<bool>> {
        use tantivy::DocSet;
        let f = self.fields.keyword(field)?;
        let term = tantivy::Term::from_field_text(f, value);
        let mut out = vec![false; located.addresses.len()];
        for (segment_ord, segment) in self.segments.readers().iter().enumerate() {
            let mut wanted: Vec<(DocId, usize)> = located
                .addresses
                .iter()
                .enumerate()
                .filter_map(|(i, a)| a.filter(|a| a.segment_ord as usize == segment_ord).map(|a| (a.doc_id, i)))
                .collect();
            if wanted.is_empty() {
                continue;
            }
            wanted.sort_unstable();
            let inverted = segment.inverted_index(f).map_err(lexical)?;
            let Some(mut postings) = inverted.read_postings(&term, IndexRecordOption::Basic).map_err(lexical)? else {
                continue;
            };
            for (doc, i) in wanted {
                if postings.doc() < doc {
                    postings.seek(doc);
                }
                out[i] = postings.doc() == doc;
            }
        }
        Ok(out)
    }
}
