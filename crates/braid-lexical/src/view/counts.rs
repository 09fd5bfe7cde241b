//! The view's visible counts: document frequencies, word lists and BM25 statistics over the
//! allowed records only, each frequency counted once per allowed set and kept with it.
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
use crate::scorer::Statistics;
use crate::visible_counts::VisibleCounts;
use crate::vocabulary::Neighbour;

impl View<'_> {
    /// Keeps the first index error met, for the leg that asked to return ([`View::check`]).
    fn remember(&self, e: TantivyError) {
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
    /// it ([`crate::visibility::AllowedDocs::cached_freq`]).
    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        if let Some(n) = self.docs.cached_freq(term) {
            return Ok(n);
        }
        let count = self.count(term)?;
        self.docs.remember_freq(term, count);
        Ok(count)
    }

    /// Counts the allowed records holding `term`: read off the index for a segment whose every
    /// live record is allowed, else by walking its postings.
    fn count(&self, term: &Term) -> tantivy::Result<u64> {
        let mut count = 0u64;
        for segment in self.scope.readers() {
            if self.docs.of_segment(segment).is_none() && segment.alive_bitset().is_none() {
                // Every document of the segment is allowed and alive.
                count += u64::from(segment.inverted_index(term.field())?.doc_freq(term)?);
                continue;
            }
            self.each_allowed(segment, term, |_| count += 1)?;
        }
        Ok(count)
    }
}

/// Every count over the allowed records (see the module docs); an index error is kept for
/// the leg that asked ([`View::check`]).
impl VisibleCounts for View<'_> {
    fn word_df(&self, word: &str) -> u64 {
        if self.exact {
            return self.vocabulary.df(word);
        }
        if self.vocabulary.df(word) == 0 {
            return 0;
        }
        let term = Term::from_field_text(self.snapshot.fields.words, word);
        match self.doc_freq(&term) {
            Ok(n) => n,
            Err(e) => {
                self.remember(e);
                0
            }
        }
    }

    fn text_df(&self, term: &str) -> u64 {
        let term = Term::from_field_text(self.snapshot.fields.text, term);
        match self.doc_freq(&term) {
            Ok(n) => n,
            Err(e) => {
                self.remember(e);
                0
            }
        }
    }

    fn expansions(&self, word: &str, edits: usize, min_df: u64, limit: usize) -> Vec<Neighbour> {
        // Visible counts never exceed the index's, so the index-wide walk holds every word
        // that can qualify.
        let mut found = self.vocabulary.neighbours_above(word, edits, min_df, &self.walks);
        if !self.exact {
            for n in &mut found {
                n.df = self.word_df(&n.word);
            }
            found.retain(|n| n.df > min_df);
            found.sort_by(|a, b| a.distance.cmp(&b.distance).then(b.df.cmp(&a.df)).then_with(|| a.word.cmp(&b.word)));
        }
        found.truncate(limit);
        found
    }

    fn completions(&self, prefix: &str, limit: usize) -> Vec<(String, u64)> {
        let all = self.vocabulary.completions(prefix, if self.exact { limit } else { usize::MAX });
        if self.exact {
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

    fn each_allowed_with_word(&self, word: &str, mut found: impl FnMut(SegmentOrdinal, DocId)) {
        let term = Term::from_field_text(self.snapshot.fields.words, word);
        for (ordinal, segment) in self.scope.iter() {
            if let Err(e) = self.each_allowed(segment, &term, |doc| found(ordinal, doc)) {
                self.remember(e);
                return;
            }
        }
    }
}

impl Statistics for View<'_> {
    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        View::doc_freq(self, term)
    }

    fn num_docs(&self) -> u64 {
        self.docs.len()
    }

    fn total_length(&self, field: Field) -> tantivy::Result<u64> {
        self.docs.total_length(self.scope.readers(), field)
    }
}

/// Tantivy's own queries (the opt-in query syntax) score with the same visible statistics.
impl Bm25StatisticsProvider for View<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        Statistics::total_length(self, field)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.docs.len())
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        View::doc_freq(self, term)
    }
}
