//! One request's view of a snapshot: the records its caller may see, and every statistic and
//! word list the lexical and fuzzy legs use, computed from those records only.
//!
//! This is where non-interference is enforced for the inverted index (ARCHITECTURE.md,
//! threat model). The vocabulary and the pinyin tables are index-wide, so they only ever
//! propose *candidates*; whether a candidate counts, how it ranks among the others and where a
//! list is cut is decided by its document frequency among the allowed records
//! ([`VisibleCounts::word_df`]), so a word that only hidden records hold changes nothing — neither
//! directly nor by pushing a visible word out of a list. BM25 uses the same visible
//! statistics ([`Statistics`]).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use braid_core::{AllowedSet, Error, Ordinal, QuerySyntax, Result, Suggestion};
use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::query::Bm25StatisticsProvider;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{DocId, Score, SegmentOrdinal, SegmentReader, TantivyError, Term};

use crate::analysis;
use crate::context;
use crate::error::lexical;
use crate::feedback::{expanded, relevance_model, Feedback};
use crate::snapshot::Snapshot;
use crate::query_builder::{
    fuzzy_query, lexical_query, max_edits, parsed_query, scored_term, BuiltQuery, Scoring, MAX_QUERY_TERMS,
};
use crate::matches::Matches;
use crate::scorer::{self, Statistics};
use crate::top_k::OrdTop;
use crate::weighted_query::WeightedQuery;
use crate::reweight::{reweight, FieldWeights};
use crate::simple::{self, Constraints, SimpleQuery, Verdict, MAX_PHRASE_CHECKS};
use crate::stored::FeedbackRead;
use crate::synonyms::{Compiled, SynonymUse};
use crate::visibility::{restrict, AllowedDocs};
use crate::visible_counts::VisibleCounts;
use crate::vocabulary::{Lookups, Neighbour};

/// Records the lexical leg's feedback reads, at most, for each document it wants (sections of
/// documents already read are skipped).
const READ_PER_DOCUMENT: usize = 4;

/// The ranked output of one leg.
#[derive(Debug, Clone, Default)]
pub struct LegOutput {
    /// `(ordinal, raw score)`, best first; only ordinals of the allowed set.
    pub candidates: Vec<(Ordinal, f32)>,
    /// Analysed terms that matched or were expanded, with weights, for highlighting.
    pub highlight: BTreeMap<String, f32>,
    /// The synonyms the query was expanded with (see [`Snapshot::synonyms_held`]).
    pub synonyms: Vec<SynonymUse>,
}

/// A query word and how often it occurs in records the caller may see.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryWord {
    /// The word, lowercased and folded, unstemmed.
    pub word: String,
    /// Records of the allowed set that contain it.
    pub visible_df: usize,
    /// Whether the analyzer drops it as a stop word.
    pub stop_word: bool,
    /// For a content word no allowed record holds: the closest word one does hold.
    pub suggestion: Option<Suggestion>,
}

/// A request's view of one snapshot, confined to its allowed set (see the module docs).
/// Made by [`Snapshot::view`]; lives for one request.
pub struct View<'a> {
    snapshot: &'a Snapshot,
    allowed: &'a AllowedSet,
    docs: Arc<AllowedDocs>,
    /// Whether the visible statistics are the index's own: every live record is allowed and
    /// no segment holds deleted documents (then the vocabulary's counts are exact).
    exact: bool,
    /// The request's walks of the vocabulary.
    walks: Lookups,
    /// The first index error met while counting (see [`VisibleCounts`]).
    failure: Mutex<Option<TantivyError>>,
    /// The index's synonyms, as they were when the request started.
    synonyms: Arc<Compiled>,
    /// The request's own field weights, when it has any ([`View::set_field_weights`]).
    weights: Option<FieldWeights>,
    /// Every document the legs match, when the request counts facets ([`View::collect_matches`]).
    matches: Option<Matches>,
}

impl Snapshot {
    /// A request's view of this snapshot, confined to `allowed`: the legs and the query's
    /// words run on it, with statistics from the allowed records only.
    ///
    /// # Errors
    /// [`Error::UnknownField`] when the rule's filter names a field the schema lacks.
    pub fn view<'a>(&'a self, allowed: &'a AllowedSet) -> Result<View<'a>> {
        let docs = self.allowed_docs(allowed.visibility())?;
        Ok(View::new(self, allowed, docs))
    }
}

impl<'a> View<'a> {
    pub(crate) fn new(snapshot: &'a Snapshot, allowed: &'a AllowedSet, docs: Arc<AllowedDocs>) -> Self {
        let exact = docs.everything && snapshot.searcher.segment_readers().iter().all(|s| s.alive_bitset().is_none());
        View {
            snapshot,
            allowed,
            docs,
            exact,
            walks: Lookups::default(),
            failure: Mutex::new(None),
            synonyms: snapshot.synonyms.compiled(),
            weights: None,
            matches: None,
        }
    }

    /// Makes the lexical and fuzzy legs (plain query syntax) weigh a title match by `title`
    /// instead of the schema's `title_boost`, and the flat title+body BM25 by `body` instead
    /// of 1.
    pub fn set_field_weights(&mut self, title: f32, body: f32) {
        self.weights = Some(FieldWeights { title, body });
    }

    /// The schema's title boost (what [`View::set_field_weights`] replaces).
    pub fn title_boost(&self) -> f32 {
        self.snapshot.config.title_boost
    }

    /// Makes the lexical and fuzzy legs record every allowed record they match (score above
    /// zero, at any depth — depth 0 included), for [`View::facets`].
    pub fn collect_matches(&mut self) {
        self.matches = Some(Matches::default());
    }

    /// Counts `facets` over every record the legs that ran on this view matched, plus `extra`
    /// (the semantic leg's candidates), all within the allowed set; call it after the legs.
    /// Without [`View::collect_matches`] only `extra` counts.
    ///
    /// # Errors
    /// [`Error::UnknownField`] for a facet on a field that is not a declared keyword field
    /// (values) or numeric field (ranges); [`Error::InvalidRequest`] for a facet beyond its
    /// limits; [`Error::Lexical`] on an internal failure.
    pub fn facets(&self, facets: &[braid_core::Facet], extra: &[braid_core::Ordinal]) -> Result<braid_core::Facets> {
        let extra: Vec<braid_core::Ordinal> = extra.iter().copied().filter(|&o| self.allowed.contains(o)).collect();
        let none = Matches::default();
        crate::matches::count(self.snapshot, self.matches.as_ref().unwrap_or(&none), facets, &extra)
    }

    /// The allowed set this view is confined to.
    pub fn allowed(&self) -> &AllowedSet {
        self.allowed
    }

    /// The lexical leg: BM25 over title and body, statistics from the allowed records.
    ///
    /// # Errors
    /// [`Error::Lexical`] on an internal failure.
    pub fn lexical(&self, text: &str, depth: usize, syntax: QuerySyntax) -> Result<LegOutput> {
        self.run(self.lexical_built(text, syntax), depth)
    }

    /// The lexical leg with pseudo-relevance feedback ([`Feedback`], RM3): BM25 of the query,
    /// then BM25 of the query and the terms its first top documents agree on. Those records are the
    /// leg's own hits (allowed records), and both searches count over the allowed records
    /// only. Without a weighted query of Braid's own (the tantivy syntax) or with a `feedback` that
    /// keeps the whole query, it is [`View::lexical`].
    ///
    /// # Errors
    /// [`Error::Lexical`] on an internal failure.
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

    fn lexical_built(&self, text: &str, syntax: QuerySyntax) -> BuiltQuery {
        let s = self.snapshot;
        match syntax {
            QuerySyntax::Plain => lexical_query(&s.fields, &s.config, s.analyzers(text).0, text, &self.synonyms),
            QuerySyntax::Tantivy => parsed_query(&s.searcher, &s.fields, &s.config, &s.analyzer, text),
            QuerySyntax::Simple => {
                let (words, constraints) = self.simple(text);
                let mut built = lexical_query(&s.fields, &s.config, s.analyzers(&words).0, &words, &self.synonyms);
                constrain(&mut built, constraints);
                built
            }
        }
    }

    /// The fuzzy leg: typos, fragments and as-you-type prefixes, each expansion chosen among
    /// the words allowed records hold.
    ///
    /// # Errors
    /// [`Error::Lexical`] on an internal failure.
    pub fn fuzzy(&self, text: &str, depth: usize) -> Result<LegOutput> {
        self.fuzzy_with(text, depth, QuerySyntax::Plain)
    }

    /// The fuzzy leg with the query read in `syntax` (the tantivy syntax is read as plain
    /// text here: it is for the lexical leg only).
    ///
    /// # Errors
    /// [`Error::Lexical`] on an internal failure.
    pub fn fuzzy_with(&self, text: &str, depth: usize, syntax: QuerySyntax) -> Result<LegOutput> {
        let s = self.snapshot;
        let (words, constraints) = match syntax {
            QuerySyntax::Simple => self.simple(text),
            QuerySyntax::Plain | QuerySyntax::Tantivy => (Cow::Borrowed(text), None),
        };
        let mut built =
            fuzzy_query(&s.fields, &s.config, s.analyzers(&words), self, &s.phonetic, &words, &self.synonyms);
        constrain(&mut built, constraints);
        self.check()?;
        self.run(built, depth)
    }

    /// The words of `text` that score, as the legs read it in `syntax`: the text itself,
    /// except in the simple syntax, where operators, excluded words and `field:value` are
    /// removed (what the semantic leg embeds and "did you mean" reads).
    pub fn scoring_text<'t>(&self, text: &'t str, syntax: QuerySyntax) -> Cow<'t, str> {
        match syntax {
            QuerySyntax::Simple => self.simple(text).0,
            QuerySyntax::Plain | QuerySyntax::Tantivy => Cow::Borrowed(text),
        }
    }

    /// The candidates of a leg that did not apply the simple syntax's constraints itself (the
    /// semantic leg), without those that fail them; in their order. Other syntaxes keep all.
    ///
    /// # Errors
    /// [`Error::Lexical`] when the index cannot be read.
    pub fn keep_matching(
        &self,
        text: &str,
        syntax: QuerySyntax,
        candidates: Vec<(braid_core::Ordinal, f32)>,
    ) -> Result<Vec<(braid_core::Ordinal, f32)>> {
        let (QuerySyntax::Simple, (_, Some(constraints))) = (syntax, self.simple(text)) else { return Ok(candidates) };
        let s = self.snapshot;
        let mut masks: HashMap<u32, simple::SegmentMasks> = HashMap::new();
        let mut reads = 0;
        let mut out = Vec::with_capacity(candidates.len());
        for (ord, score) in candidates {
            let Some(address) = s.address_of_ord(ord)? else { continue };
            let m = match masks.entry(address.segment_ord) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    let segment = s.searcher.segment_reader(address.segment_ord);
                    e.insert(constraints.masks(segment).map_err(lexical)?)
                }
            };
            let m = &*m;
            let keep = match constraints.verdict(m, address.doc_id) {
                Verdict::Accept => true,
                Verdict::Reject => false,
                Verdict::Read if reads < MAX_PHRASE_CHECKS => {
                    reads += 1;
                    constraints.holds(&s.searcher, address, m).map_err(lexical)?
                }
                Verdict::Read => false,
            };
            if keep {
                out.push((ord, score));
            }
        }
        Ok(out)
    }

    /// A query in the simple syntax: the words that score (the text itself when it has no
    /// operators, so it plans exactly as plain text) and its constraints.
    fn simple<'t>(&self, text: &'t str) -> (Cow<'t, str>, Option<Constraints>) {
        let s = self.snapshot;
        let fields: Vec<&str> = s.config.keyword_fields.iter().map(String::as_str).collect();
        let query: SimpleQuery = simple::parse(text, &fields);
        if query.is_plain() {
            return (Cow::Borrowed(text), None);
        }
        let constraints = Constraints::compile(&query, &s.fields, &s.analyzer);
        let mut words = query.text;
        // A query that ends with a space or a closed quote is not being typed.
        if text.ends_with(char::is_whitespace) || text.ends_with('"') {
            words.push(' ');
        }
        (Cow::Owned(words), constraints)
    }

    /// The query's words as the caller's records know them, in query order, without repeats:
    /// how many allowed records hold each, and — for a content word that none holds — the
    /// closest word that allowed records do hold ("did you mean").
    ///
    /// # Errors
    /// [`Error::Lexical`] on an internal failure.
    pub fn query_words(&self, text: &str) -> Result<Vec<QueryWord>> {
        let (analyzer, words_analyzer) = self.snapshot.analyzers(text);
        let mut words = analysis::terms(words_analyzer, text);
        words.truncate(MAX_QUERY_TERMS);
        let mut seen = std::collections::HashSet::new();
        words.retain(|w| seen.insert(w.clone()));
        let mut out: Vec<QueryWord> = words
            .into_iter()
            .map(|word| {
                let stop_word = analysis::terms(analyzer, &word).is_empty();
                let visible_df = self.word_df(&word) as usize;
                QueryWord { word, visible_df, stop_word, suggestion: None }
            })
            .collect();
        // The known content words: the context a correction is chosen in.
        let context: Vec<(&str, u64)> = out
            .iter()
            .filter(|w| !w.stop_word && w.visible_df > 0)
            .map(|w| (w.word.as_str(), w.visible_df as u64))
            .collect();
        let suggestions: Vec<Option<Suggestion>> = out
            .iter()
            .map(|w| if w.stop_word || w.visible_df > 0 { None } else { self.closest(&w.word, analyzer, &context) })
            .collect();
        for (word, suggestion) in out.iter_mut().zip(suggestions) {
            word.suggestion = suggestion;
        }
        self.check()?;
        Ok(out)
    }

    /// Keeps the first index error met, for the leg that asked to return ([`View::check`]).
    fn remember(&self, e: TantivyError) {
        self.failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
    }

    fn check(&self) -> Result<()> {
        match self.failure.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(e) => Err(lexical(e)),
            None => Ok(()),
        }
    }

    /// The closest word allowed records hold, for a word none holds: fewest edits, then the
    /// one that most allowed records hold beside the query's other known words (`context`,
    /// see [`crate::context`]), then most frequent among allowed records, then alphabetical;
    /// never a stop word (the legs would drop it). Else a Chinese word its pinyin, initials or
    /// homophones name.
    fn closest(&self, word: &str, analyzer: &TextAnalyzer, context: &[(&str, u64)]) -> Option<Suggestion> {
        let has_digits = word.chars().any(|c| c.is_ascii_digit());
        let edits = max_edits(word).max(usize::from(word.chars().count() >= 3 && !has_digits));
        let neighbours =
            if edits == 0 { Vec::new() } else { self.snapshot.vocabulary.neighbours(word, edits, &self.walks) };
        // Neighbours come closest first: keep those at the least distance that count.
        let mut least = None;
        let mut tied: Vec<(String, u64)> = Vec::new();
        for n in neighbours {
            if least.is_some_and(|d| n.distance > d) {
                break;
            }
            let df = self.word_df(&n.word);
            if df == 0 || analysis::terms(analyzer, &n.word).is_empty() {
                continue;
            }
            least = Some(n.distance);
            tied.push((n.word, df));
        }
        if let Some(distance) = least {
            tied.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            tied.truncate(context::MAX_TIED);
            let pick = context::choose(self, &tied, context);
            let suggestion = tied.swap_remove(pick).0;
            return Some(Suggestion { term: word.to_string(), suggestion, distance });
        }
        let df = |w: &str| self.word_df(w);
        self.snapshot.phonetic.alternatives(word, &df).into_iter().next().map(|suggestion| Suggestion {
            term: word.to_string(),
            suggestion,
            distance: 1,
        })
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

    fn run(&self, built: BuiltQuery, depth: usize) -> Result<LegOutput> {
        let empty = match &built.scoring {
            Scoring::Weighted(p) => p.is_empty(),
            Scoring::Tantivy(_) => false,
        };
        if empty || (depth == 0 && self.matches.is_none()) || self.allowed.is_empty() {
            return Ok(LegOutput { candidates: Vec::new(), highlight: built.highlight, synonyms: built.synonyms });
        }
        let s = self.snapshot;
        let matches = self.matches.as_ref();
        let top = match built.scoring {
            Scoring::Weighted(query) => self.top_of(query, depth, matches),
            Scoring::Tantivy(query) => {
                let query = restrict(&self.docs, query);
                if let Some(matches) = matches {
                    let all = s.searcher.search(&*query, &tantivy::collector::DocSetCollector);
                    matches.add_addresses(s, all.map_err(lexical)?);
                }
                s.searcher.search_with_statistics_provider(&*query, &OrdTop { k: depth }, self)
            }
        }
        .map_err(lexical)?;
        // Defence in depth: the scorer only offered allowed documents; the set must agree.
        let candidates = top.into_iter().filter(|(ord, _)| self.allowed.contains(*ord)).collect();
        Ok(LegOutput { candidates, highlight: built.highlight, synonyms: built.synonyms })
    }

    /// The `depth` best allowed records under `query`, with the request's field weights; the
    /// matches counted into `matches` when given.
    fn top_of(
        &self,
        mut query: WeightedQuery,
        depth: usize,
        matches: Option<&Matches>,
    ) -> tantivy::Result<Vec<(Ordinal, Score)>> {
        let s = self.snapshot;
        if let Some(weights) = self.weights {
            reweight(&mut query, &s.fields, weights);
        }
        scorer::top_k(&s.searcher, &s.ord_columns, &query, self, &self.docs, depth, matches)
    }

    /// Allowed records holding `term` (any field), counted once per allowed set and kept with
    /// it ([`AllowedDocs::cached_freq`]).
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
        for segment in self.snapshot.searcher.segment_readers() {
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
            return self.snapshot.vocabulary.df(word);
        }
        if self.snapshot.vocabulary.df(word) == 0 {
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
        let mut found = self.snapshot.vocabulary.neighbours_above(word, edits, min_df, &self.walks);
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
        let all = self.snapshot.vocabulary.completions(prefix, if self.exact { limit } else { usize::MAX });
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
        for (ordinal, segment) in self.snapshot.searcher.segment_readers().iter().enumerate() {
            if let Err(e) = self.each_allowed(segment, &term, |doc| found(ordinal as SegmentOrdinal, doc)) {
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
        self.docs.total_length(&self.snapshot.searcher, field)
    }
}

/// Adds `constraints` to a built weighted query.
fn constrain(built: &mut BuiltQuery, constraints: Option<Constraints>) {
    if let Scoring::Weighted(query) = &mut built.scoring {
        query.constraints = constraints;
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

#[cfg(test)]
mod tests {
    use braid_core::{AccessPolicy, Principal, Record, Visibility};
    use tantivy::collector::TopDocs;
    use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};

    use super::*;
    use crate::index::{LexicalIndex, DEFAULT_WRITER_HEAP};
    use crate::schema::SchemaConfig;

    /// A deterministic generator (SplitMix64) for records and queries.
    struct Mix(u64);
    impl Mix {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) % n as u64) as usize
        }
        fn words(&mut self, vocabulary: &[&str], min: usize, max: usize) -> String {
            let n = min + self.below(max - min + 1);
            (0..n).map(|_| vocabulary[self.below(vocabulary.len())]).collect::<Vec<_>>().join(" ")
        }
    }

    const WORDS: [&str; 40] = [
        "refund",
        "order",
        "shipping",
        "return",
        "policy",
        "account",
        "password",
        "reset",
        "invoice",
        "billing",
        "cancel",
        "subscription",
        "delivery",
        "tracking",
        "parcel",
        "warranty",
        "repair",
        "battery",
        "screen",
        "charger",
        "login",
        "error",
        "payment",
        "card",
        "bank",
        "transfer",
        "address",
        "change",
        "email",
        "phone",
        "the",
        "a",
        "of",
        "and",
        "not",
        "451",
        "http",
        "kubernetes",
        "cluster",
        "node",
    ];

    /// The scorer's term-at-a-time scores are tantivy's own BM25 under the same (visible)
    /// statistics: over several segments, with deleted records, for a restricted principal
    /// and at any depth.
    #[test]
    fn scorer_scores_like_tantivy_with_visible_statistics() {
        let index = LexicalIndex::create(None, SchemaConfig::default()).unwrap();
        let mut writer = index.writer(DEFAULT_WRITER_HEAP).unwrap();
        let mut mix = Mix(7);
        for i in 0..400u64 {
            let mut record = Record::new(format!("r{i}")).title(mix.words(&WORDS, 1, 5)).body(mix.words(&WORDS, 3, 60));
            if i % 3 == 0 {
                record = record.acl(["group:staff"]);
            }
            writer.upsert(i, &record, i).unwrap();
            if i == 150 || i == 300 {
                writer.commit().unwrap();
            }
        }
        writer.commit().unwrap();
        for i in (0..400).step_by(13) {
            writer.delete(&format!("r{i}"));
        }
        writer.commit().unwrap();
        index.reload().unwrap();
        let snapshot = index.snapshot();
        assert!(snapshot.searcher.segment_readers().len() > 1, "the test needs several segments");

        for principal in [Principal::public(), Principal::from_verified_tokens(["group:staff"])] {
            let allowed = snapshot.allowed_set(Visibility::new(principal, AccessPolicy::Public, None)).unwrap();
            let view = snapshot.view(&allowed).unwrap();
            for q in 0..60 {
                let text = mix.words(&WORDS, 1, 7);
                for depth in [1, 10, 1000] {
                    let fast = view.lexical(&text, depth, QuerySyntax::Plain).unwrap().candidates;
                    let built = lexical_query(
                        &snapshot.fields,
                        &snapshot.config,
                        &snapshot.analyzer,
                        &text,
                        &Compiled::default(),
                    );
                    let Scoring::Weighted(query) = built.scoring else { panic!("a weighted query") };
                    let clauses: Vec<(Occur, Box<dyn Query>)> = query
                        .groups
                        .iter()
                        .flat_map(|g| g.alternatives.iter())
                        .flat_map(|a| match a {
                            crate::weighted_query::Alternative::Terms(t) => t.clone(),
                            crate::weighted_query::Alternative::Grams { .. } | crate::weighted_query::Alternative::All { .. } => Vec::new(),
                        })
                        .map(|t| {
                            let q: Box<dyn Query> = Box::new(TermQuery::new(t.term, IndexRecordOption::WithFreqs));
                            (Occur::Should, Box::new(BoostQuery::new(q, t.boost)) as Box<dyn Query>)
                        })
                        .collect();
                    let reference: Vec<(braid_core::Ordinal, f32)> = if clauses.is_empty() {
                        Vec::new()
                    } else {
                        let query = restrict(&view.docs, Box::new(BooleanQuery::new(clauses)));
                        let top = snapshot
                            .searcher
                            .search_with_statistics_provider(&*query, &TopDocs::with_limit(depth), &view)
                            .unwrap();
                        top.into_iter()
                            .map(|(s, a)| (snapshot.ord_columns[a.segment_ord as usize].first(a.doc_id).unwrap(), s))
                            .collect()
                    };
                    assert_eq!(fast.len(), reference.len(), "query {q} {text:?} depth {depth}");
                    for (a, b) in fast.iter().zip(&reference) {
                        assert!((a.1 - b.1).abs() <= 1e-4 * b.1.abs().max(1.0), "{text:?}: {fast:?} vs {reference:?}");
                        let tied = reference.iter().filter(|w| (w.1 - b.1).abs() <= 1e-4).count() > 1;
                        assert!(tied || a.0 == b.0, "{text:?}: {fast:?} vs {reference:?}");
                    }
                }
            }
        }
    }

    /// A word's visible count is the same counted, kept with the allowed set, or counted again
    /// after the kept counts start over; each allowed set keeps its own.
    #[test]
    fn visible_counts_are_kept_per_allowed_set_and_stay_exact() {
        let index = LexicalIndex::create(None, SchemaConfig::default()).unwrap();
        let mut writer = index.writer(DEFAULT_WRITER_HEAP).unwrap();
        let mut mix = Mix(11);
        let mut records = Vec::new();
        for i in 0..200u64 {
            let acl: Vec<String> = if i % 3 == 0 { vec!["group:staff".into()] } else { Vec::new() };
            let body = mix.words(&WORDS, 2, 12);
            writer.upsert(i, &Record::new(format!("r{i}")).body(body.clone()).acl(acl.clone()), i).unwrap();
            records.push((acl, body));
        }
        writer.commit().unwrap();
        index.reload().unwrap();
        let snapshot = index.snapshot();
        let principals = [Principal::public(), Principal::from_verified_tokens(["group:staff"])];
        let check = |round: &str| {
            for principal in &principals {
                let visibility = Visibility::new(principal.clone(), AccessPolicy::Public, None);
                let allowed = snapshot.allowed_set(visibility.clone()).unwrap();
                let view = snapshot.view(&allowed).unwrap();
                for word in WORDS {
                    let expected = records
                        .iter()
                        .filter(|(acl, body)| visibility.admits_acl(acl) && body.split(' ').any(|w| w == word))
                        .count() as u64;
                    assert_eq!(view.word_df(word), expected, "{round}: {word} for {principal:?}");
                }
            }
        };
        check("counted");
        check("kept");
        let allowed = snapshot.allowed_set(Visibility::new(Principal::public(), AccessPolicy::Public, None)).unwrap();
        let view = snapshot.view(&allowed).unwrap();
        for i in 0..=crate::visibility::MAX_CACHED_FREQS {
            view.docs.remember_freq(&Term::from_field_text(snapshot.fields.words, &format!("filler{i}")), 0);
        }
        check("counted again");
    }

    /// Feedback reads the analysed heads written with each record; an index written before
    /// heads existed opens, analyses its records' text instead, and ranks exactly the same.
    #[test]
    fn feedback_ranks_the_same_from_stored_heads_and_from_text() {
        let config = SchemaConfig::default();
        let dir = tempfile::tempdir().unwrap();
        tantivy::Index::create_in_dir(dir.path(), crate::schema::schema_with(&config, false).0).unwrap();
        let old = LexicalIndex::open(dir.path(), config.clone()).unwrap();
        let new = LexicalIndex::create(None, config).unwrap();
        assert!(!old.stores_feedback_heads() && new.stores_feedback_heads());
        let mut mix = Mix(5);
        let records: Vec<Record> = (0..300u64)
            .map(|i| {
                let mut record =
                    Record::new(format!("r{i}")).title(mix.words(&WORDS, 1, 4)).body(mix.words(&WORDS, 5, 200));
                if i % 4 == 0 {
                    record = record.parent(format!("doc{}", i / 8));
                }
                if i % 3 == 0 {
                    record = record.acl(["group:staff"]);
                }
                record
            })
            .collect();
        for index in [&old, &new] {
            let mut writer = index.writer(DEFAULT_WRITER_HEAP).unwrap();
            for (i, record) in records.iter().enumerate() {
                writer.upsert(i as u64, record, i as u64).unwrap();
            }
            writer.commit().unwrap();
            index.reload().unwrap();
        }
        let (old, new) = (old.snapshot(), new.snapshot());
        assert!(old.fields.head.is_none() && new.fields.head.is_some());
        let words = Feedback::DEFAULT.words;
        let ords: Vec<Ordinal> = (0..300).collect();
        let (from_text, stored) =
            (old.feedback_reads(&ords, words).unwrap(), new.feedback_reads(&ords, words).unwrap());
        for (a, b) in from_text.iter().zip(&stored) {
            assert!(matches!(a.head, crate::stored::Head::Text(_)) && matches!(b.head, crate::stored::Head::Terms(_)));
            assert_eq!(old.head_terms(a, words), new.head_terms(b, words), "{}", a.document);
            assert!(old.head_terms(a, words).len() < 96, "the head is cut");
        }
        let mut expanded = 0;
        for principal in [Principal::public(), Principal::from_verified_tokens(["group:staff"])] {
            let visibility = Visibility::new(principal, AccessPolicy::Public, None);
            let (old_allowed, new_allowed) =
                (old.allowed_set(visibility.clone()).unwrap(), new.allowed_set(visibility).unwrap());
            let (old_view, new_view) = (old.view(&old_allowed).unwrap(), new.view(&new_allowed).unwrap());
            for _ in 0..40 {
                let text = mix.words(&WORDS, 1, 4);
                let ranked =
                    |v: &View| v.lexical_with_feedback(&text, 20, QuerySyntax::Plain, Feedback::DEFAULT).unwrap();
                let (a, b) = (ranked(&old_view).candidates, ranked(&new_view).candidates);
                let bits = |c: &[(Ordinal, f32)]| c.iter().map(|(o, s)| (*o, s.to_bits())).collect::<Vec<_>>();
                assert_eq!(bits(&a), bits(&b), "{text:?}");
                expanded += usize::from(a != new_view.lexical(&text, 20, QuerySyntax::Plain).unwrap().candidates);
            }
        }
        assert!(expanded > 10, "feedback changed only {expanded} rankings");
    }

    /// Feedback's first search ranks only the records the model may read; when they agree on
    /// nothing (here: every match is a section of one document), the leg still ranks as deep
    /// as it was asked to, as the query alone ranks.
    #[test]
    fn feedback_with_nothing_to_add_ranks_the_whole_depth() {
        let index = LexicalIndex::create(None, SchemaConfig::default()).unwrap();
        let mut writer = index.writer(DEFAULT_WRITER_HEAP).unwrap();
        let mut mix = Mix(9);
        for i in 0..60u64 {
            let mut record = Record::new(format!("r{i}")).body(mix.words(&WORDS, 3, 30));
            if i < 30 {
                record = record.parent("one-article").body(format!("zebra {}", mix.words(&WORDS, 3, 30)));
            }
            writer.upsert(i, &record, i).unwrap();
        }
        writer.commit().unwrap();
        index.reload().unwrap();
        let snapshot = index.snapshot();
        let allowed = snapshot.allowed_set(Visibility::new(Principal::public(), AccessPolicy::Public, None)).unwrap();
        let view = snapshot.view(&allowed).unwrap();
        let fed = view.lexical_with_feedback("zebra", 50, QuerySyntax::Plain, Feedback::DEFAULT).unwrap().candidates;
        assert_eq!(fed.len(), 30);
        assert_eq!(fed, view.lexical("zebra", 50, QuerySyntax::Plain).unwrap().candidates);
    }
}
