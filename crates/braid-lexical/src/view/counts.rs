//! The view's visible counts: document frequencies, word lists and BM25 statistics over the
//! allowed records only, each frequency counted once per allowed set and segment and kept with
//! it (a later snapshot's set of the same rule keeps the counts of the segments it shares).
//!
//! The vocabulary and the pinyin tables are index-wide, so they only ever propose
//! *candidates*; whether a candidate counts, how it ranks among the others and where a list is
//! cut is decided by its document frequency among the allowed records
//! ([`VisibleCounts::word_df`]). An index error met while counting is kept
//! ([`View::check`]) and returned by the leg that asked, so the counts are plain numbers.

use braid_core::Result;
use tantivy::query::Bm25StatisticsProvider;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocId, SegmentOrdinal, SegmentReader, TantivyError, Term};

use super::View;
use crate::error::lexical;
use crate::gathered::{Answer, Question};
use crate::scorer::Statistics;
use crate::visible_counts::VisibleCounts;
use crate::vocabulary::{sort_neighbours, Neighbour};

impl View<'_> {
    /// Keeps the first index error met, for the leg that asked to return ([`View::check`]).
    pub(super) fn remember(&self, e: TantivyError) {
        self.failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
    }

    /// The index error met while counting, if any: what the leg that asked returns.
    pub(super) fn check(&self) -> Result<()> {
        match self.failure.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(e) => Err(lexical(e)),
            None => Ok(()),
        }
    }

    /// Calls `found` with each allowed document of `segment` holding `term`.
    fn each_allowed(&self, segment: &SegmentReader, term: &Term, mut found: impl FnMut(DocId)) -> tantivy::Result<()> {
        let allowed = self.docs.of_segment(segment);
        if allowed.is_some_and(|a| a.docs.is_empty()) {
            return Ok(());
        }
        let inverted = segment.inverted_index(term.field())?;
        let Some(info) = inverted.get_term_info(term)? else { return Ok(()) };
        let mut postings = inverted.read_block_postings_from_terminfo(&info, IndexRecordOption::Basic)?;
        loop {
            let docs = postings.docs();
            if docs.is_empty() {
                return Ok(());
            }
            for &doc in docs.iter().filter(|&&d| self.docs.admits(segment, allowed, d)) {
                found(doc);
            }
            postings.advance();
        }
    }

    /// Allowed records holding `term` (any field), counted once per allowed set and kept with
    /// it ([`crate::visibility::AllowedDocs::cached_freq`]), each segment's part kept for the
    /// same rule's sets on later snapshots ([`crate::visibility::AllowedDocs::count_freq`]).
    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        if let Some(n) = self.docs.cached_freq(term) {
            return Ok(n);
        }
        self.docs.count_freq(self.scope.readers(), term, |segment| self.count_in(segment, term))
    }

    /// Counts the allowed records of `segment` holding `term`: read off the index where every
    /// live record of the segment is allowed, else by walking its postings.
    pub(super) fn count_in(&self, segment: &SegmentReader, term: &Term) -> tantivy::Result<u64> {
        if self.docs.of_segment(segment).is_none() && segment.alive_bitset().is_none() {
            // Every document of the segment is allowed and alive.
            return Ok(u64::from(segment.inverted_index(term.field())?.doc_freq(term)?));
        }
        let mut count = 0u64;
        self.each_allowed(segment, term, |_| count += 1)?;
        Ok(count)
    }
}

impl View<'_> {
    /// Allowed records holding `word` (the words field), over this index's records.
    pub(super) fn local_word_df(&self, word: &str) -> u64 {
        if self.exact {
            return self.vocabulary.df(word);
        }
        if self.vocabulary.df(word) == 0 {
            return 0;
        }
        self.counted(&Term::from_field_text(self.snapshot.fields.words, word))
    }

    /// [`View::doc_freq`] with an index error kept for the leg that asked.
    pub(super) fn counted(&self, term: &Term) -> u64 {
        match self.doc_freq(term) {
            Ok(n) => n,
            Err(e) => {
                self.remember(e);
                0
            }
        }
    }

    /// Allowed records holding `term`: gathered across indexes when the view has a table,
    /// else this index's.
    fn gathered_doc_freq(&self, term: &Term, local: impl FnOnce() -> u64) -> u64 {
        let Some(gathering) = &self.gathering else { return local() };
        match term.value().as_str() {
            Some(text) => {
                gathering.count(Question::TermDf { field: term.field().field_id(), term: text.into() }, local)
            }
            None => {
                self.remember(TantivyError::InvalidArgument(format!(
                    "a term of field {} that is not text cannot be counted across indexes",
                    term.field().field_id()
                )));
                0
            }
        }
    }

    /// The allowed records holding any of the `context` words and each of the `tied` words,
    /// over this index's records (see [`crate::context`]).
    pub(super) fn local_joint(&self, tied: &[&str], context: &[&str]) -> Vec<u64> {
        crate::context::joint_counts(|word, found| self.each_allowed_with_word(word, found), tied, context)
    }

    /// Calls `found` with each allowed record holding `word` (unstemmed), by segment ordinal
    /// and document id.
    fn each_allowed_with_word(&self, word: &str, found: &mut dyn FnMut(SegmentOrdinal, DocId)) {
        let term = Term::from_field_text(self.snapshot.fields.words, word);
        for (ordinal, segment) in self.scope.iter() {
            if let Err(e) = self.each_allowed(segment, &term, |doc| found(ordinal, doc)) {
                self.remember(e);
                return;
            }
        }
    }
}

/// Every count over the allowed records (see the module docs); an index error is kept for
/// the leg that asked ([`View::check`]). A view made with counts gathered across indexes
/// answers from them ([`crate::gathered`]).
impl VisibleCounts for View<'_> {
    fn word_df(&self, word: &str) -> u64 {
        let term = Term::from_field_text(self.snapshot.fields.words, word);
        self.gathered_doc_freq(&term, || self.local_word_df(word))
    }

    fn text_df(&self, term: &str) -> u64 {
        let term = Term::from_field_text(self.snapshot.fields.text, term);
        self.gathered_doc_freq(&term, || self.counted(&term))
    }

    fn expansions(&self, word: &str, edits: usize, min_df: u64, limit: usize) -> Vec<Neighbour> {
        if self.gathering.is_some() {
            // Every index's neighbours, their summed counts over all records an upper bound of
            // the visible ones.
            let mut found: Vec<Neighbour> = self
                .neighbours_of(word, edits)
                .into_iter()
                .filter(|(_, _, df)| *df > min_df)
                .map(|(word, distance, _)| Neighbour { df: self.word_df(&word), word, distance })
                .filter(|n| n.df > min_df)
                .collect();
            sort_neighbours(&mut found);
            found.truncate(limit);
            return found;
        }
        // Visible counts never exceed the index's, so the index-wide walk holds every word
        // that can qualify.
        let mut found = self.vocabulary.neighbours_above(word, edits, min_df, &self.walks);
        if !self.exact {
            for n in &mut found {
                n.df = self.word_df(&n.word);
            }
            found.retain(|n| n.df > min_df);
            sort_neighbours(&mut found);
        }
        found.truncate(limit);
        found
    }

    fn completions(&self, prefix: &str, limit: usize) -> Vec<(String, u64)> {
        let all = match &self.gathering {
            Some(_) => self.completions_of(prefix),
            None => self.vocabulary.completions(prefix, if self.exact { limit } else { usize::MAX }),
        };
        if self.exact && self.gathering.is_none() {
            return all;
        }
        let mut best: Vec<(String, u64)> = Vec::with_capacity(limit + 1);
        for (word, df) in all {
            // By index-wide count, descending: once that is below the worst kept visible
            // count, no later word can enter.
            if best.len() == limit && best.last().is_some_and(|w| df < w.1) {
                break;
            }
            let visible = self.word_df(&word);
            if visible == 0 {
                continue;
            }
            best.push((word, visible));
            best.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            best.truncate(limit);
        }
        best
    }

    fn joint(&self, tied: &[&str], context: &[&str]) -> Vec<u64> {
        let Some(gathering) = &self.gathering else { return self.local_joint(tied, context) };
        let question = Question::Joint {
            tied: tied.iter().map(|w| w.to_string()).collect(),
            context: context.iter().map(|w| w.to_string()).collect(),
        };
        let given = |answer: &Answer| match answer {
            Answer::Counts(counts) if counts.len() == tied.len() => Some(counts.clone()),
            _ => None,
        };
        gathering.answer(question, given, || self.local_joint(tied, context))
    }
}

impl Statistics for View<'_> {
    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        if self.gathering.is_none() {
            return View::doc_freq(self, term);
        }
        let counted = self.gathered_doc_freq(term, || self.counted(term));
        self.check().map_err(|e| TantivyError::InternalError(e.to_string()))?;
        Ok(counted)
    }

    fn num_docs(&self) -> u64 {
        match &self.gathering {
            Some(gathering) => gathering.count(Question::NumDocs, || self.docs.len()),
            None => self.docs.len(),
        }
    }

    fn total_length(&self, field: Field) -> tantivy::Result<u64> {
        let Some(gathering) = &self.gathering else { return self.docs.total_length(self.scope.readers(), field) };
        let mut failed = None;
        let n = gathering.count(Question::TotalLength { field: field.field_id() }, || {
            self.docs.total_length(self.scope.readers(), field).unwrap_or_else(|e| {
                failed = Some(e);
                0
            })
        });
        match failed {
            Some(e) => Err(e),
            None => Ok(n),
        }
    }
}

/// Tantivy's own queries (the opt-in query syntax) score with the same visible statistics.
impl Bm25StatisticsProvider for View<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        Statistics::total_length(self, field)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(Statistics::num_docs(self))
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        Statistics::doc_freq(self, term)
    }
}
