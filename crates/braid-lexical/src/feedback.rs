//! Pseudo-relevance feedback for the lexical leg (RM3).
//!
//! The leg's first top documents are read as relevant (one record per document: a document
//! cut into sections counts once, by its best section), each up to its first `words` words:
//! their relevance model — each record's term frequencies over its length, weighted by how far its BM25 score is from the first's
//! (`exp(score − top)`) — gives the terms such records share, and the leg searches again with
//! the query's own terms at weight `keep` and the model's most likely terms at `1 − keep`
//! (Lavrenko and Croft's relevance model, interpolated with the query as in RM3). A query
//! reaches records that say the same thing in other words, which BM25 of the query alone
//! cannot rank.
//!
//! Only terms that at least `agree` of those documents hold are taken: a term of one document
//! alone is that document's topic, not the query's. With a single document matching, nothing
//! is added (a query for `walruses` does not bring in records about whatever else the one
//! walrus record says), and on short sectioned records one article's vocabulary does not pull
//! its other sections above the article the query meant.
//!
//! The records read are the leg's own top hits, which are allowed records only, and every
//! statistic of the second search is over the allowed records, as the first one's: feedback
//! adds nothing a caller could not see.
//!
//! Fitted on training splits only (SciFact `train`, NFCorpus `train` and `dev`, clean and
//! misspelt, fused by the default blend): `research/scripts/rm3_study.py`, `research/scripts/feedback.sh fit`,
//! research/ranking-log.md.

use rustc_hash::FxHashMap;
use tantivy::Score;

use crate::weighted_query::{Alternative, Group, WeightedQuery};

/// How the lexical leg feeds its first top records back into its query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Feedback {
    /// Records read as relevant: the first search's top `docs`.
    pub docs: usize,
    /// Expansion terms taken from their relevance model.
    pub terms: usize,
    /// The query's own share of the second search, in `(0, 1]` (1: no feedback).
    pub keep: f32,
    /// How many of the documents read an expansion term must occur in.
    pub agree: usize,
    /// The words of each document read: its title and first words (analysing whole records
    /// was most of feedback's cost). Records store the analysed terms of their first 96 words
    /// (the default), so feedback reads them without analysing; another number analyses the
    /// stored text on every search.
    pub words: usize,
    /// The largest share of the allowed records an expansion term may be held by (1: any),
    /// where that is more than `common_floor` records. A term most records hold is walked over
    /// most records' postings, and its low idf leaves it little to add: such a term is left
    /// out (its weight is not handed to the others), so the second search costs what the
    /// informative terms cost.
    pub common: f32,
    /// Holders below which no term is too common, so that a small index keeps every expansion
    /// term (in an index of four records, every word two of them share is held by half). It
    /// is no bound on what a term costs to walk: a caller who sees a small share of a large
    /// partition walks every posting of a term there, hidden records' too, so a term held by
    /// 2,000 of its records may be a walk of 100,000 postings.
    pub common_floor: u64,
}

impl Feedback {
    /// The setting hybrid runs with: the best of eight on the fitting splits
    /// (+0.0045 macro nDCG@10 over the same BM25 without feedback, p < 0.001; every other
    /// setting gained +0.0034 to +0.0043), with terms two documents agree on (+0.0047; one:
    /// +0.0045, three: +0.0034; results/rm3-guards.txt); without terms more than a fifth of
    /// the allowed records hold, the cheapest of three shares within 0.001 of keeping every
    /// term on the fitting splits (research/ranking-log.md, fourteenth round), where that is
    /// more than 1,000 records: the share governs every caller who sees more than 5,000
    /// (research/ranking-log.md, fifteenth round).
    pub const DEFAULT: Feedback =
        Feedback { docs: 5, terms: 10, keep: 0.5, agree: 2, words: 96, common: 0.2, common_floor: 1_000 };
}

/// The relevance model of `records` — each a first-search score and the record's analysed
/// terms — as its `limit` most likely terms among those at least `agree` records hold, with
/// probabilities summing to 1, most likely first (ties by term). Empty when no term qualifies.
pub(crate) fn relevance_model<T: AsRef<str>>(
    records: &[(Score, Vec<T>)],
    limit: usize,
    agree: usize,
) -> Vec<(String, f32)> {
    let Some(top) = records.iter().map(|(s, _)| *s).reduce(Score::max) else { return Vec::new() };
    // Per term: its probability mass, and the last record that held it and how many did.
    let mut model: FxHashMap<&str, (f64, usize, usize)> = FxHashMap::default();
    for (at, (score, terms)) in records.iter().enumerate() {
        if terms.is_empty() {
            continue;
        }
        let weight = f64::from(score - top).exp() / terms.len() as f64;
        for t in terms {
            let entry = model.entry(t.as_ref()).or_insert((0.0, usize::MAX, 0));
            entry.0 += weight;
            if entry.1 != at {
                entry.1 = at;
                entry.2 += 1;
            }
        }
    }
    let mut ranked: Vec<(&str, f64)> =
        model.into_iter().filter(|(_, (_, _, held))| *held >= agree).map(|(t, (p, _, _))| (t, p)).collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    ranked.truncate(limit);
    let total: f64 = ranked.iter().map(|(_, p)| p).sum();
    if total <= 0.0 {
        return Vec::new();
    }
    ranked.into_iter().map(|(t, p)| (t.to_owned(), (p / total) as f32)).collect()
}

/// What feedback adds to a query: its own groups are kept at `own` times their weight, and
/// `terms` (one group per expansion term) are added.
#[derive(Debug, Clone)]
pub(crate) struct Expansion {
    /// The factor the query's own groups are weighed by: `keep`, shared evenly among them (as
    /// the query's terms share its weight).
    pub own: Score,
    /// One group per expansion term at `1 − keep` times its probability, built by the caller's
    /// `term_group`, with the query's constraints.
    pub terms: WeightedQuery,
}

/// The expansion of `query` by `model` (see [`Expansion`]). The second search scores the
/// query's groups at `own` plus `terms`; as the query's own scores are the first search's, it
/// scales those ([`crate::scorer::Carried`]) rather than walking the query's postings again.
pub(crate) fn expansion(
    query: &WeightedQuery,
    model: &[(String, f32)],
    keep: f32,
    term_group: impl Fn(&str, f32) -> Alternative,
) -> Expansion {
    let keep = keep.clamp(0.0, 1.0);
    let own = keep / query.groups.len().max(1) as f32;
    let groups =
        model.iter().map(|(term, p)| Group { alternatives: vec![term_group(term, (1.0 - keep) * p)] }).collect();
    Expansion { own, terms: WeightedQuery { groups, constraints: query.constraints.clone() } }
}

/// `query` and its [`Expansion`] as one query: its own groups at `own`, then the expansion's.
/// The second search's scores are this query's (up to the rounding of the scaling).
#[cfg(test)]
pub(crate) fn expanded(mut query: WeightedQuery, expansion: Expansion) -> WeightedQuery {
    for alternative in query.groups.iter_mut().flat_map(|g| g.alternatives.iter_mut()) {
        match alternative {
            Alternative::Terms(terms) | Alternative::All { terms, .. } => {
                terms.iter_mut().for_each(|t| t.boost *= expansion.own)
            }
            Alternative::Grams { boost, .. } => *boost *= expansion.own,
        }
    }
    query.groups.extend(expansion.terms.groups);
    query
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weighted_query::WeightedTerm;
    use tantivy::schema::{Schema, TEXT};

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn the_model_weighs_records_by_score_and_terms_by_share() {
        // The first record counts e^1 times the second; within a record, a term by its share.
        let records = vec![(2.0, words("salt salt sodium")), (1.0, words("sugar salt"))];
        let model = relevance_model(&records, 10, 1);
        let p = |t: &str| model.iter().find(|(w, _)| w == t).map(|x| x.1).unwrap_or(0.0);
        let e = std::f32::consts::E;
        let (salt, sodium, sugar) = (e * 2.0 / 3.0 + 0.5, e / 3.0, 0.5);
        let total = salt + sodium + sugar;
        assert!((p("salt") - salt / total).abs() < 1e-5, "{model:?}");
        assert!((p("sodium") - sodium / total).abs() < 1e-5);
        assert!((p("sugar") - sugar / total).abs() < 1e-5);
        assert_eq!(model[0].0, "salt");
        assert!((model.iter().map(|x| x.1).sum::<f32>() - 1.0).abs() < 1e-5);
        // Truncated to the most likely, renormalised.
        let two = relevance_model(&records, 2, 1);
        assert_eq!(two.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(), ["salt", "sodium"]);
        assert!((two.iter().map(|x| x.1).sum::<f32>() - 1.0).abs() < 1e-5);
        assert!(relevance_model::<String>(&[], 5, 1).is_empty());
        assert!(relevance_model(&[(1.0, Vec::<String>::new())], 5, 1).is_empty());
    }

    #[test]
    fn only_terms_enough_records_hold_are_taken() {
        let records = vec![(2.0, words("salt salt sodium")), (1.0, words("sugar salt salt"))];
        // Salt is in both records; sodium and sugar in one each (a repeat counts once).
        let model = relevance_model(&records, 10, 2);
        assert_eq!(model, vec![("salt".to_string(), 1.0)]);
        assert!(relevance_model(&records, 10, 3).is_empty());
        assert!(relevance_model(&records[..1], 10, 2).is_empty(), "one record agrees with nothing");
    }

    #[test]
    fn the_query_keeps_its_share_and_expansions_share_the_rest() {
        let mut schema = Schema::builder();
        let text = schema.add_text_field("text", TEXT);
        let group =
            |t: &str, w: f32| Group { alternatives: vec![Alternative::Terms(vec![WeightedTerm::new(text, t, w)])] };
        let query = WeightedQuery { groups: vec![group("salt", 1.0), group("intake", 1.0)], constraints: None };
        let model = vec![("sodium".to_string(), 0.75), ("salt".to_string(), 0.25)];
        let expansion = expansion(&query, &model, 0.5, |t, w| Alternative::Terms(vec![WeightedTerm::new(text, t, w)]));
        assert_eq!(expansion.own, 0.25);
        assert_eq!(expansion.terms.groups.len(), 2);
        let out = expanded(query, expansion);
        let boosts: Vec<(String, f32)> = out
            .groups
            .iter()
            .flat_map(|g| g.alternatives[0].terms())
            .map(|t| (t.term.value().as_str().unwrap().to_string(), t.boost))
            .collect();
        let expected = [("salt", 0.25), ("intake", 0.25), ("sodium", 0.375), ("salt", 0.125)];
        assert_eq!(boosts.len(), expected.len());
        for ((t, b), (et, eb)) in boosts.iter().zip(expected) {
            assert_eq!(t, et);
            assert!((b - eb).abs() < 1e-6, "{boosts:?}");
        }
    }
}
