//! What a search returns: hits with explain records, suggestions, and stats beside them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize, Serializer};

use crate::{Facets, Language, Leg, Mode};

/// The answer to one `search()`.
#[derive(Debug, Clone, Serialize)]
pub struct SearchResponse {
    /// Ranked hits, best first.
    pub hits: Vec<Hit>,
    /// "Did you mean" suggestions for query terms unknown to the records the caller may see.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<Suggestion>,
    /// Timings and counts, beside the answer.
    pub stats: Stats,
    /// Where the next page starts (`SearchRequest::cursor`), when this page is full and the
    /// ranking holds a further page. It encodes the request and the hits up to here, never
    /// anything about records the caller may not see.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Counts per value and range over every matched record the caller may see, when the
    /// request asked for facets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub facets: Option<Facets>,
}

/// One ranked record.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Hit {
    /// The record's external id.
    pub id: String,
    /// The fused score on a `[0, 1]` scale for every fusion method (see
    /// `SearchRequest::min_score`): 1 means first in every leg that ran. With boosts that
    /// rescore, the boosted score (`explain.boost`), which may exceed 1. The raw fused value
    /// is in `explain.fused`. With a reranker, the order of the reranked prefix follows
    /// `explain.rerank` instead.
    pub score: f32,
    /// The record's title.
    pub title: String,
    /// A passage of the body around the query terms (serialised flat, as `snippet` text and
    /// `highlights` byte ranges).
    #[serde(flatten)]
    pub snippet: Snippet,
    /// The parent record, for chunks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The heading path, for chunks.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub section: Vec<String>,
    /// The 1-based inclusive line range, for chunks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<(u32, u32)>,
    /// Keyword fields.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub keywords: BTreeMap<String, Vec<String>>,
    /// Numeric and date fields (dates as Unix seconds).
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub numbers: BTreeMap<String, f64>,
    /// How the score came about.
    pub explain: Explain,
}

impl Hit {
    /// A hit with its id, score and explanation only (see `SearchRequest::ids_only`).
    pub fn id_only(id: String, score: f32, explain: Explain) -> Hit {
        Hit {
            id,
            score,
            title: String::new(),
            snippet: Snippet::default(),
            parent: None,
            section: Vec::new(),
            lines: None,
            keywords: BTreeMap::new(),
            numbers: BTreeMap::new(),
            explain,
        }
    }
}

/// A fragment of text with highlighted byte ranges.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Snippet {
    /// The fragment.
    #[serde(rename = "snippet")]
    pub text: String,
    /// Byte ranges of `text` that match query terms.
    pub highlights: Vec<(usize, usize)>,
}

impl Snippet {
    /// The fragment with each highlight wrapped in `open` … `close`.
    ///
    /// ```
    /// use braid_core::Snippet;
    /// let s = Snippet { text: "refund policy".into(), highlights: vec![(0, 6)] };
    /// assert_eq!(s.marked("[", "]"), "[refund] policy");
    /// ```
    pub fn marked(&self, open: &str, close: &str) -> String {
        let mut out = String::with_capacity(self.text.len() + 8 * self.highlights.len());
        let mut at = 0;
        for &(s, e) in &self.highlights {
            let (Some(before), Some(mid)) = (self.text.get(at..s), self.text.get(s..e)) else { continue };
            out.push_str(before);
            out.push_str(open);
            out.push_str(mid);
            out.push_str(close);
            at = e;
        }
        out.push_str(self.text.get(at..).unwrap_or(""));
        out
    }
}

/// How a hit's score came about.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Explain {
    /// Each leg that found the hit: its rank, raw score and contribution.
    pub legs: Vec<LegExplain>,
    /// The fused score (sum of contributions).
    pub fused: f32,
    /// 1-based rank after fusion (and after the request's boosts, when any rescore).
    pub fused_rank: usize,
    /// The cross-encoder's score, when the hit was among the reranked candidates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank: Option<f32>,
    /// The index's synonyms the hit holds in place of the query's words (empty without
    /// synonyms, or when it matched the words as typed).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub synonyms: Vec<SynonymMatch>,
    /// How the request's boosts changed the score, when it had any that rescore.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boost: Option<BoostExplain>,
}

/// A synonym the query was expanded with, and that a hit holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SynonymMatch {
    /// The synonym entry the query's words matched, as written in the synonym file.
    pub query: String,
    /// What it expanded to that the hit holds, as written in the synonym file.
    pub synonym: String,
}

/// A boosted score: `score = relevance × Π factor` (`braid_core::Boosts`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BoostExplain {
    /// The fused score on its `[0, 1]` scale, before boosts.
    pub relevance: f32,
    /// Each function's factor, in the order: keywords, decays, numbers.
    pub factors: Vec<FactorExplain>,
    /// The boosted score (the hit's `score`).
    pub score: f32,
}

/// One boost function's factor for one hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactorExplain {
    /// `keyword`, `decay:exp`, `decay:gauss`, `decay:linear`, `number:linear`, `number:log1p`
    /// or `number:sqrt`.
    pub function: String,
    /// The field the function read.
    pub field: String,
    /// The field's value in the hit (none: the record lacks it, or a keyword function).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// The factor.
    pub factor: f64,
}

/// One leg's part in a hit's score.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LegExplain {
    /// The leg.
    pub leg: Leg,
    /// 1-based rank in the leg's list.
    pub rank: usize,
    /// The leg's own score (BM25, fuzzy BM25, cosine).
    pub raw: f32,
    /// What the leg added to the fused score.
    pub contribution: f32,
}

/// A "did you mean" suggestion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suggestion {
    /// The query term as typed (lowercased).
    pub term: String,
    /// The closest known term.
    pub suggestion: String,
    /// Edit distance (transpositions count as one); 1 for a Chinese word read from pinyin,
    /// initials or a homophone.
    pub distance: usize,
}

/// Timings and counts of one request, beside the answer — never inside the text a model reads.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Stats {
    /// The mode asked for.
    pub mode: Option<Mode>,
    /// The query's language as detected by script ([`Language::detect`]): a CJK query skips
    /// the semantic leg when the embedding model does not cover its language.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<Language>,
    /// The legs that ran, in order (exactly those; a leg skipped for the query's language is
    /// absent).
    pub legs: Vec<Leg>,
    /// Candidates per leg, after access control.
    pub candidates: BTreeMap<Leg, usize>,
    /// The fusion weight each leg ran with (the request's weights).
    pub weights: BTreeMap<Leg, f32>,
    /// Microseconds per stage that ran ([`Stage::Total`] for the whole request). Serialised as
    /// an object keyed by [`Stage::name`], in the names' alphabetical order.
    #[serde(serialize_with = "by_stage_name")]
    pub micros: BTreeMap<Stage, u64>,
    /// The text the semantic leg embedded, when it differs from the query: the words no
    /// record the caller may see holds, replaced by their "did you mean" corrections.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedded: Option<String>,
    /// Which path the semantic leg took (`hnsw` or `exact`), when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub semantic_path: Option<&'static str>,
    /// Records the caller may see under the request's filter.
    pub allowed: usize,
    /// Candidates the cross-encoder scored (0 when no reranker ran).
    pub reranked: usize,
    /// The tokens the page's hits hold, when the request had a token budget
    /// (`SearchRequest::token_budget`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<usize>,
}

/// [`Stats::micros`] as an object keyed by stage name, sorted by name: the order the JSON had
/// when the map's keys were the names themselves, kept so that responses read the same.
fn by_stage_name<S: Serializer>(micros: &BTreeMap<Stage, u64>, serializer: S) -> Result<S::Ok, S::Error> {
    let mut by_name: Vec<(&str, u64)> = micros.iter().map(|(stage, &us)| (stage.name(), us)).collect();
    by_name.sort_unstable_by_key(|&(name, _)| name);
    serializer.collect_map(by_name)
}

/// The stages of one search, in the order they run (their order as keys of [`Stats::micros`];
/// serialised by [`Stage::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// The allowed set: principal, policy and filter.
    Visibility,
    /// The query's words among the caller's records (routing, "did you mean").
    Analyse,
    /// The lexical leg (with the groups its query begins with as the fuzzy leg's does, which
    /// are scored once for both and count in each).
    Lexical,
    /// The fuzzy leg (the same).
    Fuzzy,
    /// The semantic leg (the query's embedding included).
    Semantic,
    /// Facet counts over the matched records, when asked for.
    Facets,
    /// Fusion of the legs' lists.
    Fusion,
    /// The request's boosts, when any rescore.
    Boosts,
    /// Stored fields of the fused candidates.
    Hits,
    /// The cross-encoder, when one is attached.
    Rerank,
    /// Grouping and MMR over the final order, when asked for.
    Diversify,
    /// Snippets of the final hits.
    Snippets,
    /// The whole request.
    Total,
}

impl Stage {
    /// Every stage, in order.
    pub const ALL: [Stage; 13] = [
        Stage::Visibility,
        Stage::Analyse,
        Stage::Lexical,
        Stage::Fuzzy,
        Stage::Semantic,
        Stage::Facets,
        Stage::Fusion,
        Stage::Boosts,
        Stage::Hits,
        Stage::Rerank,
        Stage::Diversify,
        Stage::Snippets,
        Stage::Total,
    ];

    /// The stage's key in [`Stats::micros`].
    pub fn name(self) -> &'static str {
        match self {
            Stage::Visibility => "visibility",
            Stage::Analyse => "analyse",
            Stage::Lexical => "lexical",
            Stage::Fuzzy => "fuzzy",
            Stage::Semantic => "semantic",
            Stage::Facets => "facets",
            Stage::Fusion => "fusion",
            Stage::Boosts => "boosts",
            Stage::Hits => "hits",
            Stage::Rerank => "rerank",
            Stage::Diversify => "diversify",
            Stage::Snippets => "snippets",
            Stage::Total => "total",
        }
    }

    /// The stage a recall leg runs as.
    pub fn of(leg: Leg) -> Stage {
        match leg {
            Leg::Lexical => Stage::Lexical,
            Leg::Fuzzy => Stage::Fuzzy,
            Leg::Semantic => Stage::Semantic,
        }
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Stage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Timings keyed by [`Stage`] serialise as they did when keyed by name: an object of the
    /// stages that ran, by name, in the names' alphabetical order (not the pipeline's).
    #[test]
    fn stage_timings_serialise_by_name_in_alphabetical_order() {
        let mut stats = Stats::default();
        for (i, stage) in Stage::ALL.iter().rev().enumerate() {
            if *stage != Stage::Rerank {
                stats.micros.insert(*stage, i as u64);
            }
        }
        // Straight to text: a `serde_json::Value` would sort the keys whatever order they came in.
        let text = serde_json::to_string(&stats).unwrap();
        let expected = concat!(
            r#""micros":{"analyse":11,"boosts":5,"diversify":2,"facets":7,"fusion":6,"fuzzy":9,"hits":4,"#,
            r#""lexical":10,"semantic":8,"snippets":1,"total":0,"visibility":12}"#
        );
        assert!(text.contains(expected), "{text}");
        assert_eq!(Stage::Total.to_string(), "total");
        assert_eq!(serde_json::to_string(&Stage::Visibility).unwrap(), r#""visibility""#);
    }
}
