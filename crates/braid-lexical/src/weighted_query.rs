//! The weighted query: what the lexical and fuzzy legs score.
//!
//! A [`WeightedQuery`] is a sum of [`Group`]s; a group scores a document by the best of its
//! [`Alternative`]s (a query word, its typo expansions, its completions, its trigrams, its
//! synonyms); an alternative is a sum of [`WeightedTerm`]s, each a term's BM25 times a boost.
//! The lexical leg's query is one-alternative groups (each analysed term in the body, and
//! boosted in the title); the fuzzy leg's has one group per query word. The query builders
//! ([`crate::query_builder`]) make them, feedback and per-request field weights rewrite them,
//! and [`crate::scorer`] evaluates them over the allowed records.

use tantivy::schema::Field;
use tantivy::{Score, Term};

use crate::simple::Constraints;

/// One term and the factor its BM25 is multiplied by.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WeightedTerm {
    pub term: Term,
    pub boost: Score,
}

impl WeightedTerm {
    /// `text` in `field`, its BM25 times `boost`.
    pub fn new(field: Field, text: &str, boost: Score) -> Self {
        WeightedTerm { term: Term::from_field_text(field, text), boost }
    }
}

/// A weighted query: a sum of groups, over the records that meet the constraints (none: every record).
#[derive(Debug, Clone, Default)]
pub(crate) struct WeightedQuery {
    pub groups: Vec<Group>,
    /// What a record must and must not hold (the simple query syntax's operators).
    pub constraints: Option<Constraints>,
}

/// The best of its alternatives (dis-max without tie breaker).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Group {
    pub alternatives: Vec<Alternative>,
}

/// One way a query word can match.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Alternative {
    /// The sum of these terms' BM25.
    Terms(Vec<WeightedTerm>),
    /// Trigram recall: `boost` × the sum of the grams' BM25, for documents holding at least
    /// `needed` of them.
    Grams { grams: Vec<WeightedTerm>, needed: usize, boost: Score },
    /// A multi-word synonym: the sum of the terms' BM25, for documents holding every one of
    /// the first `counted` terms (the body terms; the title's follow them, uncounted).
    All { terms: Vec<WeightedTerm>, counted: usize },
}

impl Alternative {
    pub(crate) fn terms(&self) -> &[WeightedTerm] {
        match self {
            Alternative::Terms(t) => t,
            Alternative::Grams { grams, .. } => grams,
            Alternative::All { terms, .. } => terms,
        }
    }
}

impl WeightedQuery {
    /// Whether the query scores nothing.
    pub fn is_empty(&self) -> bool {
        self.groups.iter().all(|g| g.alternatives.iter().all(|a| a.terms().is_empty()))
    }

    /// Every term of the query, in query order (the order [`crate::scorer`] weighs them in).
    pub(crate) fn terms(&self) -> impl Iterator<Item = &WeightedTerm> {
        self.groups.iter().flat_map(|g| g.alternatives.iter()).flat_map(Alternative::terms)
    }
}
