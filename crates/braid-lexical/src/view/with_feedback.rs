//! The lexical leg with pseudo-relevance feedback (RM3, [`crate::feedback`]): the first
//! search's top allowed records are read back, their relevance model expands the query, and the
//! expanded query ranks again over the same allowed records.

use std::borrow::Cow;

use braid_core::{Ordinal, QuerySyntax, Result};
use tantivy::Score;

use super::{LegOutput, View};
use crate::error::lexical;
use crate::feedback::{expanded, relevance_model, Feedback};
use crate::query_builder::{scored_term, Scoring};
use crate::stored::FeedbackRead;

/// Records the lexical leg's feedback reads, at most, for each document it wants (sections of
/// documents already read are skipped).
const READ_PER_DOCUMENT: usize = 4;

impl View<'_> {
    /// The lexical leg with pseudo-relevance feedback ([`Feedback`], RM3): BM25 of the query,
    /// then BM25 of the query and the terms its first top documents agree on. Those records are the
    /// leg's own hits (allowed records), and both searches count over the allowed records
    /// only. Without a weighted query of Braid's own (the tantivy syntax) or with a `feedback` that
    /// keeps the whole query, it is [`View::lexical`].
    ///
    /// # Errors
    /// [`braid_core::Error::Lexical`] on an internal failure.
    pub fn lexical_with_feedback(
        &self,
        text: &str,
        depth: usize,
        syntax: QuerySyntax,
        feedback: Feedback,
    ) -> Result<LegOutput> {
        let built = self.lexical_built(text, syntax);
        let query = match &built.scoring {
            Scoring::Weighted(query) if feedback.docs > 0 && feedback.terms > 0 && feedback.keep < 1.0 && depth > 0 => {
                query.clone()
            }
            _ => return self.run(built, depth),
        };
        // The first search ranks only what the model may read; its matches count for facets.
        let read = depth.max(feedback.docs).min(feedback.docs.saturating_mul(READ_PER_DOCUMENT));
        let mut first = self.run(built, read)?;
        let model = self.model_of_top(&first.candidates, feedback)?;
        let query = if model.is_empty() {
            if first.candidates.len() < read || depth <= read {
                first.candidates.truncate(depth);
                return Ok(first);
            }
            // Nothing to feed back: the query's own ranking, as deep as the leg goes.
            query
        } else {
            let s = self.snapshot;
            expanded(query, &model, feedback.keep, |term, weight| scored_term(&s.fields, &s.config, term, weight))
        };
        // The first search already counted its matches for facets; the expansion ranks, it
        // does not widen what the query matches.
        let top = self.top_of(query, depth, None).map_err(lexical)?;
        first.candidates = top.into_iter().filter(|(ord, _)| self.allowed.contains(*ord)).collect();
        Ok(first)
    }

    /// The relevance model of the first `feedback.docs` documents of `ranked` (allowed
    /// records, read back from the document store: the analysed terms of their first
    /// `feedback.words` words, as written with each record).
    /// A document is a record's parent, or the record itself: a later section of a document
    /// already read is skipped, so one long article cut into sections counts once. At most
    /// [`READ_PER_DOCUMENT`] records a document wanted are read.
    fn model_of_top(&self, ranked: &[(Ordinal, Score)], feedback: Feedback) -> Result<Vec<(String, f32)>> {
        let s = self.snapshot;
        let limit = ranked.len().min(feedback.docs.saturating_mul(READ_PER_DOCUMENT));
        // Each document's best record, with its first search's score.
        let mut read: Vec<(Score, FeedbackRead)> = Vec::with_capacity(feedback.docs);
        let mut next = 0;
        while read.len() < feedback.docs && next < limit {
            // The next batch: as many records as documents are still wanted.
            let batch = &ranked[next..(next + feedback.docs - read.len()).min(limit)];
            next += batch.len();
            let ords: Vec<Ordinal> = batch.iter().map(|(o, _)| *o).collect();
            for record in s.feedback_reads(&ords, feedback.words)? {
                let Some(&(_, score)) = batch.iter().find(|(o, _)| *o == record.ord) else { continue };
                if read.len() == feedback.docs || read.iter().any(|(_, r)| r.document == record.document) {
                    continue;
                }
                read.push((score, record));
            }
        }
        let read: Vec<(Score, Vec<Cow<str>>)> =
            read.iter().map(|(score, record)| (*score, s.head_terms(record, feedback.words))).collect();
        Ok(relevance_model(&read, feedback.terms, feedback.agree))
    }
}
