//! The lexical leg with pseudo-relevance feedback (RM3, [`crate::feedback`]): the first
//! search's top allowed records are read back, their relevance model expands the query, and the
//! expanded query ranks again over the same allowed records.

use std::borrow::Cow;

use braid_core::{Ordinal, QuerySyntax, Result};
use tantivy::{Score, Term};

use super::{LegOutput, View};
use crate::error::lexical;
use crate::feedback::{expansion, relevance_model, Feedback};
use crate::gathered::FeedbackCandidate;
use crate::query_builder::{scored_term, Scoring};
use crate::scorer::{Carried, Statistics};
use crate::weighted_query::WeightedQuery;

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
        // Across indexes the model comes from every index's first search: given once gathered
        // (the same on every index), else this index's part of it is kept for the gatherer.
        let given = self.gathering.as_ref().and_then(|g| g.given.feedback.clone());
        if let Some(model) = given {
            let model = self.without_common(model, feedback)?;
            if model.is_empty() {
                return self.run(built, depth);
            }
            let mut carried = Carried::default();
            let mut first = self.run_carried(built, 0, Some(&mut carried))?;
            first.candidates = self.second_search(&query, &model, feedback.keep, depth, carried)?;
            return Ok(first);
        }
        // The first search ranks only what the model may read; its matches count for facets.
        let read = feedback_depth(depth, feedback);
        let mut carried = Carried::default();
        let mut first = self.run_carried(built, read, Some(&mut carried))?;
        if let Some(gathering) = &self.gathering {
            // This index's part of the model, for the gatherer; what the model adds is ranked
            // once the model is given.
            let candidates = self.feedback_candidates(&first.candidates, feedback)?;
            *gathering.feedback.lock().unwrap_or_else(|p| p.into_inner()) = Some(candidates);
            first.candidates.truncate(depth);
            return Ok(first);
        }
        let model = self.model_of_top(&first.candidates, feedback)?;
        let model = self.without_common(model, feedback)?;
        if model.is_empty() && (first.candidates.len() < read || depth <= read) {
            first.candidates.truncate(depth);
            return Ok(first);
        }
        // With nothing to feed back, the query's own ranking as deep as the leg goes. The
        // first search already counted its matches for facets; the expansion ranks, it does
        // not widen what the query matches.
        first.candidates = self.second_search(&query, &model, feedback.keep, depth, carried)?;
        Ok(first)
    }

    /// The second search: the `depth` best allowed records under `query` expanded by `model`
    /// ([`expansion`]), from the first search's scores of `query` in `carried` (the query's own
    /// ranking again, deeper, when `model` is empty).
    fn second_search(
        &self,
        query: &WeightedQuery,
        model: &[(String, f32)],
        keep: f32,
        depth: usize,
        mut carried: Carried,
    ) -> Result<Vec<(Ordinal, Score)>> {
        let s = self.snapshot;
        let expansion = expansion(query, model, keep, |term, weight| scored_term(&s.fields, &s.config, term, weight));
        if !model.is_empty() {
            carried.scale(expansion.own);
        }
        let top = self.top_of(expansion.terms, depth, None, Some(&mut carried)).map_err(lexical)?;
        Ok(top.into_iter().filter(|(ord, _)| self.allowed.contains(*ord)).collect())
    }

    /// The relevance model of the first `feedback.docs` documents of `ranked` (allowed
    /// records, read back from the document store: the analysed terms of their first
    /// `feedback.words` words, as written with each record); see [`pick_documents`].
    pub(super) fn model_of_top(&self, ranked: &[(Ordinal, Score)], feedback: Feedback) -> Result<Vec<(String, f32)>> {
        let s = self.snapshot;
        let read = pick_documents(ranked, feedback.docs, |ords| {
            Ok(s.feedback_reads(ords, feedback.words)?.into_iter().map(|r| (r.ord, r.document.clone(), r)).collect())
        })?;
        let read: Vec<(Score, Vec<Cow<str>>)> =
            read.iter().map(|(score, record)| (*score, s.head_terms(record, feedback.words))).collect();
        Ok(relevance_model(&read, feedback.terms, feedback.agree))
    }

    /// `model` without the terms more than `feedback.common` of the allowed records hold, and
    /// more than `feedback.common_floor` (counted as the second search's BM25 counts them, in
    /// the flat title+body field).
    pub(super) fn without_common(
        &self,
        mut model: Vec<(String, f32)>,
        feedback: Feedback,
    ) -> Result<Vec<(String, f32)>> {
        if feedback.common >= 1.0 || model.is_empty() {
            return Ok(model);
        }
        let records = Statistics::num_docs(self) as f64;
        let most = (f64::from(feedback.common) * records).max(feedback.common_floor as f64);
        let text = self.snapshot.fields.text;
        let mut kept = Vec::with_capacity(model.len());
        for (term, p) in model.drain(..) {
            let holders = Statistics::doc_freq(self, &Term::from_field_text(text, &term)).map_err(lexical)?;
            if holders as f64 <= most {
                kept.push((term, p));
            }
        }
        Ok(kept)
    }

    /// What this index holds of the first search's best records, for a relevance model made
    /// across indexes: each of the `first` (its own best, as deep as [`feedback_depth`])
    /// with its id, score, document and head terms.
    fn feedback_candidates(&self, first: &[(Ordinal, Score)], feedback: Feedback) -> Result<Vec<FeedbackCandidate>> {
        let s = self.snapshot;
        let ords: Vec<Ordinal> = first.iter().map(|(o, _)| *o).collect();
        let ids = s.ids_of(&ords)?;
        let reads = s.feedback_reads(&ords, feedback.words)?;
        let mut out = Vec::with_capacity(reads.len());
        for read in &reads {
            let Some(at) = ords.iter().position(|&o| o == read.ord) else { continue };
            let Some(id) = ids[at].clone() else { continue };
            let terms = s.head_terms(read, feedback.words).into_iter().map(Cow::into_owned).collect();
            out.push(FeedbackCandidate { id, score: first[at].1, document: read.document.clone(), terms });
        }
        Ok(out)
    }
}

/// How deep the first search of a leg `depth` deep ranks for feedback: what the model may read.
pub fn feedback_depth(depth: usize, feedback: Feedback) -> usize {
    depth.max(feedback.docs).min(feedback.docs.saturating_mul(READ_PER_DOCUMENT))
}

/// The records feedback reads of `ranked` (best first), with their scores: each document's best
/// record among the first `feedback.docs` documents. A document is a record's parent, or the
/// record itself: a later section of a document already read is skipped, so one long article
/// cut into sections counts once. At most [`READ_PER_DOCUMENT`] records a document wanted are
/// read: `read` returns, for a batch of keys, each record found with its document, in the
/// batch's order.
fn pick_documents<K: PartialEq + Clone, R>(
    ranked: &[(K, Score)],
    docs: usize,
    mut read: impl FnMut(&[K]) -> Result<Vec<(K, String, R)>>,
) -> Result<Vec<(Score, R)>> {
    let limit = ranked.len().min(docs.saturating_mul(READ_PER_DOCUMENT));
    let mut picked: Vec<(Score, R)> = Vec::with_capacity(docs);
    let mut documents: Vec<String> = Vec::with_capacity(docs);
    let mut next = 0;
    while picked.len() < docs && next < limit {
        // The next batch: as many records as documents are still wanted.
        let batch = &ranked[next..(next + docs - picked.len()).min(limit)];
        next += batch.len();
        let keys: Vec<K> = batch.iter().map(|(k, _)| k.clone()).collect();
        for (key, document, record) in read(&keys)? {
            let Some((_, score)) = batch.iter().find(|(k, _)| *k == key) else { continue };
            if picked.len() == docs || documents.contains(&document) {
                continue;
            }
            documents.push(document);
            picked.push((*score, record));
        }
    }
    Ok(picked)
}

/// The relevance model pseudo-relevance feedback expands the lexical query with, made from
/// the first search's best records gathered from every index (each index's own best, as deep
/// as it searched, `read`): what one index holding them all would make. Ranked by score, ties
/// by id (one index breaks ties by its ordinals).
pub fn feedback_model(mut candidates: Vec<FeedbackCandidate>, read: usize, feedback: Feedback) -> Vec<(String, f32)> {
    candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
    candidates.truncate(read);
    let ranked: Vec<(usize, Score)> = candidates.iter().enumerate().map(|(at, c)| (at, c.score)).collect();
    let picked = pick_documents(&ranked, feedback.docs, |keys| {
        Ok(keys.iter().map(|&at| (at, candidates[at].document.clone(), at)).collect())
    })
    .unwrap_or_default();
    let read: Vec<(Score, Vec<&str>)> = picked
        .into_iter()
        .map(|(score, at)| (score, candidates[at].terms.iter().map(String::as_str).collect()))
        .collect();
    relevance_model(&read, feedback.terms, feedback.agree)
}
