//! One request's view of a snapshot: the records its caller may see, and the lexical and fuzzy
//! legs run over them, with every statistic and word list computed from those records only.
//!
//! This is where non-interference is enforced for the inverted index (ARCHITECTURE.md,
//! threat model): a word that only hidden records hold changes nothing — neither directly nor
//! by pushing a visible word out of a list — and BM25 uses visible statistics too.
//!
//! This file holds the view and its legs (build the weighted query, score it, confine the
//! result); the rest is split by concern:
//! - `counts`: the visible counts ([`crate::visible_counts::VisibleCounts`], [`crate::scorer::Statistics`], tantivy's
//!   `Bm25StatisticsProvider`), counted over the allowed records and kept per allowed set;
//! - `suggest`: the query's words with their visible counts, and "did you mean";
//! - `syntax`: the simple query syntax's words and constraints;
//! - `with_feedback`: the lexical leg with pseudo-relevance feedback (RM3);
//! - `gather`: a view that answers from counts gathered across indexes ([`crate::gathered`]).

mod counts;
mod gather;
mod suggest;
mod syntax;
#[cfg(test)]
mod tests;
mod with_feedback;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use braid_core::{AllowedSet, Ordinal, QuerySyntax, Result};
use tantivy::{Score, TantivyError};

use crate::error::lexical;
use crate::gathered::Gathering;
use crate::matches::Matches;
use crate::query_builder::{fuzzy_query, lexical_query, parsed_query, BuiltQuery, Scoring};
use crate::reweight::{reweight, FieldWeights};
use crate::scorer;
use crate::segments::Scope;
use crate::simple::Constraints;
use crate::snapshot::Snapshot;
use crate::synonyms::{Compiled, SynonymUse};
use crate::top_k::OrdTop;
use crate::visibility::{restrict, AllowedDocs};
use crate::vocabulary::{Lookups, ScopedVocabulary};
use crate::weighted_query::WeightedQuery;

pub use suggest::QueryWord;
pub use with_feedback::{feedback_depth, feedback_model};

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

/// A request's view of one snapshot, confined to its allowed set (see the module docs).
/// Made by [`Snapshot::view`]; lives for one request.
pub struct View<'a> {
    snapshot: &'a Snapshot,
    /// The segments of the partitions the caller may see: all this view reads.
    scope: Scope<'a>,
    /// The snapshot's vocabulary (its tiers read as one), which proposes typo expansions,
    /// completions and suggestions.
    vocabulary: ScopedVocabulary<'a>,
    allowed: &'a AllowedSet,
    docs: Arc<AllowedDocs>,
    /// Whether the visible statistics are the index's own: every live record of every
    /// partition is allowed and no segment holds deleted documents (then the vocabulary's
    /// counts are exact).
    exact: bool,
    /// The request's walks of the vocabulary.
    walks: Lookups,
    /// The first index error met while counting (see [`crate::visible_counts::VisibleCounts`]).
    failure: Mutex<Option<TantivyError>>,
    /// The index's synonyms, as they were when the request started.
    synonyms: Arc<Compiled>,
    /// The request's own field weights, when it has any ([`View::set_field_weights`]).
    weights: Option<FieldWeights>,
    /// Every document the legs match, when the request counts facets ([`View::collect_matches`]).
    matches: Option<Matches>,
    /// Counts gathered across indexes, to answer from first ([`Snapshot::view_gathered`]).
    gathering: Option<Gathering>,
    /// The scores of the groups the lexical and fuzzy legs' queries begin with alike, when
    /// [`View::share_word_prefix`] computed them.
    prefix: OnceLock<scorer::SharedPrefix>,
    /// The fuzzy leg's query as [`View::share_word_prefix`] built it, with the text and
    /// syntax it was built from, for the leg to take rather than build again.
    fuzzy_prepared: Mutex<Option<(String, QuerySyntax, BuiltQuery)>>,
}

/// Postings among the allowed records from which the groups the lexical and fuzzy queries
/// begin with alike are scored once for both ([`View::share_word_prefix`]), and at least an
/// eighth of the allowed records (each segment's scores are copied once, a float a document,
/// where a posting costs a few nanoseconds to score). At a million records a caller
/// who sees 1 % lost 0.5 ms of hybrid p50 sharing always: its prefixes hold a few thousand
/// postings, and its legs ran side by side instead of after the shared part.
const SHARE_FROM_POSTINGS: u64 = 50_000;

impl Snapshot {
    /// A request's view of this snapshot, confined to `allowed`: the legs and the query's
    /// words run on it, with statistics from the allowed records only.
    ///
    /// # Errors
    /// [`braid_core::Error::UnknownField`] when the rule's filter names a field the schema lacks.
    pub fn view<'a>(&'a self, allowed: &'a AllowedSet) -> Result<View<'a>> {
        let docs = self.allowed_docs(allowed.visibility())?;
        Ok(View::new(self, allowed, docs))
    }
}

impl<'a> View<'a> {
    pub(crate) fn new(snapshot: &'a Snapshot, allowed: &'a AllowedSet, docs: Arc<AllowedDocs>) -> Self {
        let scope = snapshot.scope(allowed.visibility());
        let exact = docs.everything && scope.is_all() && scope.readers().all(|s| s.alive_bitset().is_none());
        let vocabulary = snapshot.vocabulary();
        View {
            snapshot,
            scope,
            vocabulary,
            allowed,
            docs,
            exact,
            walks: Lookups::default(),
            failure: Mutex::new(None),
            synonyms: snapshot.synonyms.compiled(),
            weights: None,
            matches: None,
            gathering: None,
            prefix: OnceLock::new(),
            fuzzy_prepared: Mutex::new(None),
        }
    }

    /// Makes the lexical and fuzzy legs (plain query syntax) weigh a title match by `title`
    /// instead of the schema's title boosts (`None` keeps them: `title_boost`, and
    /// `cjk_title_boost` for CJK terms), and the flat title+body BM25 by `body` instead of 1.
    pub fn set_field_weights(&mut self, title: Option<f32>, body: f32) {
        self.weights = Some(FieldWeights { title, body });
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
    /// [`braid_core::Error::UnknownField`] for a facet on a field that is not a declared keyword field
    /// (values) or numeric field (ranges); [`braid_core::Error::InvalidRequest`] for a facet beyond its
    /// limits; [`braid_core::Error::Lexical`] on an internal failure.
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
    /// [`braid_core::Error::Lexical`] on an internal failure.
    pub fn lexical(&self, text: &str, depth: usize, syntax: QuerySyntax) -> Result<LegOutput> {
        self.run(self.lexical_built(text, syntax), depth)
    }

    fn lexical_built(&self, text: &str, syntax: QuerySyntax) -> BuiltQuery {
        let s = self.snapshot;
        match syntax {
            QuerySyntax::Plain => lexical_query(&s.fields, &s.config, s.analyzers(text).0, text, &self.synonyms),
            QuerySyntax::Tantivy => parsed_query(s.segments.main(), &s.fields, &s.config, &s.analyzer, text),
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
    /// [`braid_core::Error::Lexical`] on an internal failure.
    pub fn fuzzy(&self, text: &str, depth: usize) -> Result<LegOutput> {
        self.fuzzy_with(text, depth, QuerySyntax::Plain)
    }

    /// The fuzzy leg with the query read in `syntax` (the tantivy syntax is read as plain
    /// text here: it is for the lexical leg only).
    ///
    /// # Errors
    /// [`braid_core::Error::Lexical`] on an internal failure.
    pub fn fuzzy_with(&self, text: &str, depth: usize, syntax: QuerySyntax) -> Result<LegOutput> {
        let built = self.fuzzy_built(text, syntax);
        self.check()?;
        self.run(built, depth)
    }

    /// The fuzzy leg's query of `text` read in `syntax` (the one [`View::share_word_prefix`]
    /// built, where it was of the same text and syntax).
    fn fuzzy_built(&self, text: &str, syntax: QuerySyntax) -> BuiltQuery {
        let prepared = self.fuzzy_prepared.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some((built_text, built_syntax, built)) = prepared {
            if built_text == text && built_syntax == syntax {
                return built;
            }
        }
        let s = self.snapshot;
        let (words, constraints) = match syntax {
            QuerySyntax::Simple => self.simple(text),
            QuerySyntax::Plain | QuerySyntax::Tantivy => (Cow::Borrowed(text), None),
        };
        let phonetic = self.phonetic();
        let mut built = fuzzy_query(&s.fields, &s.config, s.analyzers(&words), self, &phonetic, &words, &self.synonyms);
        constrain(&mut built, constraints);
        built
    }

    /// Prepares the lexical leg of `lexical_text` and the fuzzy leg of `fuzzy_text` (read in
    /// `syntax`) to run on this view: the groups both queries begin with alike are scored
    /// once, and each leg starts from those scores ([`scorer::SharedPrefix`]; the legs'
    /// scores are the same floats either way). Call it before running both legs, once; it
    /// does nothing where the queries share no first group, carry the simple syntax's
    /// constraints, or the view gathers counts across indexes. A failure to read the index
    /// here leaves the legs to score alone (and to meet it themselves).
    pub fn share_word_prefix(&self, lexical_text: &str, fuzzy_text: &str, syntax: QuerySyntax) {
        self.share_word_prefix_from(lexical_text, fuzzy_text, syntax, SHARE_FROM_POSTINGS);
    }

    /// [`View::share_word_prefix`], sharing from `least` postings (and an eighth of the
    /// allowed records).
    fn share_word_prefix_from(&self, lexical_text: &str, fuzzy_text: &str, syntax: QuerySyntax, least: u64) {
        if self.gathering.is_some() || self.allowed.is_empty() || self.prefix.get().is_some() {
            return;
        }
        let Scoring::Weighted(mut lexical) = self.lexical_built(lexical_text, syntax).scoring else { return };
        // The whole lexical query bounds what any prefix of it holds: below the floor, the
        // fuzzy query (the costlier to build) is left to its leg, which builds it beside the
        // lexical leg rather than before it.
        if lexical.constraints.is_some() || !self.worth_sharing(&lexical, lexical.groups.len(), least) {
            return;
        }
        // The fuzzy query is built once: here, and taken by the leg.
        let fuzzy_built = self.fuzzy_built(fuzzy_text, syntax);
        let fuzzy = match &fuzzy_built.scoring {
            Scoring::Weighted(query) if query.constraints.is_none() => Some(query.clone()),
            _ => None,
        };
        *self.fuzzy_prepared.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((fuzzy_text.to_string(), syntax, fuzzy_built));
        let Some(mut fuzzy) = fuzzy else { return };
        if let Some(weights) = self.weights {
            let s = self.snapshot;
            reweight(&mut lexical, &s.fields, &s.config, weights);
            reweight(&mut fuzzy, &s.fields, &s.config, weights);
        }
        let shared = lexical.groups.iter().zip(&fuzzy.groups).take_while(|(a, b)| a == b).count();
        if shared == 0 || !self.worth_sharing(&lexical, shared, least) {
            return;
        }
        if let Ok(prefix) = scorer::SharedPrefix::score(&self.scope, &lexical, shared, self, &self.docs) {
            // Only this call sets it (checked above; a view serves one request's legs).
            let _ = self.prefix.set(prefix);
        }
    }

    /// Whether the first `groups` groups of `query` hold enough postings among the allowed
    /// records for scoring them once to pay for copying their scores: `least`, and an eighth
    /// of the allowed records ([`SHARE_FROM_POSTINGS`]).
    fn worth_sharing(&self, query: &WeightedQuery, groups: usize, least: u64) -> bool {
        let mut postings = 0u64;
        for t in query.groups[..groups].iter().flat_map(|g| &g.alternatives).flat_map(|a| a.terms()) {
            postings += scorer::Statistics::doc_freq(self, &t.term).unwrap_or(0);
        }
        // The caller's records, not the segments' documents: the choice, like the scores, is
        // a function of what the caller may see.
        postings >= least.max(self.allowed.len() as u64 / 8)
    }

    fn run(&self, built: BuiltQuery, depth: usize) -> Result<LegOutput> {
        self.run_carried(built, depth, None)
    }

    /// [`View::run`], its dense scores carried in `carried` when given (see
    /// [`scorer::Carried`]; then scored even at depth 0).
    fn run_carried(&self, built: BuiltQuery, depth: usize, carried: Option<&mut scorer::Carried>) -> Result<LegOutput> {
        let empty = match &built.scoring {
            Scoring::Weighted(p) => p.is_empty(),
            Scoring::Tantivy(_) => false,
        };
        if empty || (depth == 0 && self.matches.is_none() && carried.is_none()) || self.allowed.is_empty() {
            return Ok(LegOutput { candidates: Vec::new(), highlight: built.highlight, synonyms: built.synonyms });
        }
        let s = self.snapshot;
        let matches = self.matches.as_ref();
        let top = match built.scoring {
            Scoring::Weighted(query) => self.top_of(query, depth, matches, carried),
            Scoring::Tantivy(query) => {
                let query = restrict(&self.docs, query);
                if let Some(matches) = matches {
                    let all = self.scope.search(&*query, &tantivy::collector::DocSetCollector);
                    matches.add_addresses(s, all.map_err(lexical)?);
                }
                self.scope.search_scored(&*query, &OrdTop { k: depth }, self)
            }
        }
        .map_err(lexical)?;
        // Defence in depth: the scorer only offered allowed documents; the set must agree.
        let candidates = top.into_iter().filter(|(ord, _)| self.allowed.contains(*ord)).collect();
        Ok(LegOutput { candidates, highlight: built.highlight, synonyms: built.synonyms })
    }

    /// The `depth` best allowed records under `query`, with the request's field weights; the
    /// matches counted into `matches` when given; the scores start from and are left in
    /// `carried` when given.
    fn top_of(
        &self,
        mut query: WeightedQuery,
        depth: usize,
        matches: Option<&Matches>,
        carried: Option<&mut scorer::Carried>,
    ) -> tantivy::Result<Vec<(Ordinal, Score)>> {
        let s = self.snapshot;
        if let Some(weights) = self.weights {
            reweight(&mut query, &s.fields, &s.config, weights);
        }
        if self.lacks_statistics(&query)? {
            return Ok(Vec::new());
        }
        scorer::top_k(&self.scope, &query, self, &self.docs, depth, matches, carried, self.prefix.get())
    }

    /// Across indexes: asks for every statistic `query` is weighed with, and whether the table
    /// lacks any (it then lacks something already). Scores made without them would not be the
    /// fan-out's, so the postings are not walked until it has them all.
    fn lacks_statistics(&self, query: &WeightedQuery) -> tantivy::Result<bool> {
        let Some(gathering) = &self.gathering else { return Ok(false) };
        scorer::Statistics::num_docs(self);
        let mut fields = Vec::new();
        for t in query.terms() {
            scorer::Statistics::doc_freq(self, &t.term)?;
            if !fields.contains(&t.term.field()) {
                fields.push(t.term.field());
                scorer::Statistics::total_length(self, t.term.field())?;
            }
        }
        Ok(gathering.lacks())
    }
}

/// Adds `constraints` to a built weighted query.
fn constrain(built: &mut BuiltQuery, constraints: Option<Constraints>) {
    if let Scoring::Weighted(query) = &mut built.scoring {
        query.constraints = constraints;
    }
}
