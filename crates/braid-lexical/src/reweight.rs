//! Per-request field weights: a weighted query's title and body terms reweighted before it runs.
//!
//! Both legs score an analysed term as BM25 over the flat title+body field times the term's
//! weight `w`, plus BM25 over the title times `w × title_boost` (`cjk_title_boost` for a CJK
//! term; `query_builder::scored_term`). A request's weights replace the two factors: `w × body`
//! and `w × title` (a request without a title weight keeps the term's own). With the schema's
//! own values (body 1, no title weight) the query is the one the leg built, term for term.

use tantivy::Term;

use crate::schema::{Fields, SchemaConfig};
use crate::weighted_query::{Alternative, WeightedQuery, WeightedTerm};

/// Weights of the flat title+body field and of the title field, for one request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct FieldWeights {
    /// The title's weight for every term; `None` keeps each term's schema title boost.
    pub title: Option<f32>,
    pub body: f32,
}

/// Rewrites every scored term of `query` to `weights` (trigram alternatives are left alone).
pub(crate) fn reweight(query: &mut WeightedQuery, fields: &Fields, config: &SchemaConfig, weights: FieldWeights) {
    for alternative in query.groups.iter_mut().flat_map(|g| g.alternatives.iter_mut()) {
        let Alternative::Terms(terms) = alternative else { continue };
        let mut out = Vec::with_capacity(terms.len() + 1);
        for t in terms.drain(..) {
            let field = t.term.field();
            if field == fields.text {
                let w = t.boost;
                let text = t.term.value().as_str().map(str::to_string);
                out.push(WeightedTerm { term: t.term, boost: w * weights.body });
                if let Some(text) = text {
                    let title = weights.title.unwrap_or_else(|| config.title_boost_of(&text));
                    if title > 0.0 {
                        out.push(WeightedTerm { term: Term::from_field_text(fields.title, &text), boost: w * title });
                    }
                }
            } else if field != fields.title {
                out.push(t);
            }
        }
        *terms = out;
    }
}
