//! What a caller asks for.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::{Boosts, Error, Facet, Filter, Principal, Result};

/// The largest `k` a request may ask for.
pub const MAX_K: usize = 10_000;
/// The longest query text accepted, in bytes (16 KiB).
pub const MAX_QUERY_BYTES: usize = 16 * 1024;
/// The largest [`SearchRequest::depth`] accepted (candidates per leg): legs size buffers by
/// it, so an unchecked depth could ask for more memory than exists.
pub const MAX_DEPTH: usize = 10_000;

/// Candidates a cross-encoder rescores by default. On this project's 2-core reference machine
/// a MiniLM-L6-shaped int8 cross-encoder at 256 tokens per pair takes 301 ms for 10
/// candidates, 614 ms for 20 and 1.61 s for 50 (`benches/rerank.rs`, p50): 10 keeps a
/// reranked search near a third of a second, the most an interactive search should wait.
pub const DEFAULT_RERANK_CANDIDATES: usize = 10;

/// A recall leg: one way of finding candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Leg {
    /// BM25 over the analysed title and body.
    Lexical,
    /// Typo, fragment and prefix recall.
    Fuzzy,
    /// Embedding similarity.
    Semantic,
}

impl Leg {
    /// Every leg, in fusion order.
    pub const ALL: [Leg; 3] = [Leg::Lexical, Leg::Fuzzy, Leg::Semantic];

    /// The leg's name as used in JSON and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Leg::Lexical => "lexical",
            Leg::Fuzzy => "fuzzy",
            Leg::Semantic => "semantic",
        }
    }
}

impl std::fmt::Display for Leg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Which legs a request runs.
///
/// `auto`, the default until 2026-12, weighed the legs by the query's shape; fitted again on
/// the training splits its leans gained nothing over [`Mode::Hybrid`] (research/ranking-log.md), so
/// the name now reads as `hybrid`, in requests (JSON) as in [`Mode::from_str`](std::str::FromStr).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// BM25 only.
    Lexical,
    /// The fuzzy leg only (it also scores exact matches, above fuzzy ones).
    Fuzzy,
    /// The semantic leg only; an error when the index has no embedding model.
    Semantic,
    /// Every leg the index can run, fused by the request's [`Fusion`] (the blend by default):
    /// the default.
    #[default]
    #[serde(alias = "auto")]
    Hybrid,
}

/// A name that is none of a type's values (see the [`std::str::FromStr`] impls of [`Mode`]
/// and [`Fusion`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {got:?} (expected {expected})")]
pub struct UnknownName {
    /// What was named: `mode`, `fusion`.
    pub what: &'static str,
    /// The name given.
    pub got: String,
    /// The names accepted.
    pub expected: &'static str,
}

impl std::str::FromStr for Mode {
    type Err = UnknownName;

    /// Parses `lexical` (or `bm25`), `fuzzy`, `semantic` (or `dense`, `vector`) or `hybrid`
    /// (or `auto`, its name before 2026-12), in any case.
    fn from_str(text: &str) -> Result<Mode, UnknownName> {
        Ok(match text.trim().to_ascii_lowercase().as_str() {
            "lexical" | "bm25" => Mode::Lexical,
            "fuzzy" => Mode::Fuzzy,
            "semantic" | "dense" | "vector" => Mode::Semantic,
            "hybrid" | "auto" => Mode::Hybrid,
            _ => {
                return Err(UnknownName {
                    what: "mode",
                    got: text.to_string(),
                    expected: "lexical, fuzzy, semantic or hybrid",
                })
            }
        })
    }
}

impl Mode {
    /// The mode's name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Lexical => "lexical",
            Mode::Fuzzy => "fuzzy",
            Mode::Semantic => "semantic",
            Mode::Hybrid => "hybrid",
        }
    }
}

/// How the query text is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuerySyntax {
    /// Plain text: quotes, colons, brackets, `AND`/`OR`/`-` are just characters (the default).
    #[default]
    Plain,
    /// tantivy's query language over title and body, parsed leniently (the lexical leg only).
    Tantivy,
    /// The search-box syntax: `"exact phrase"`, `-exclude`, `OR` between them, and
    /// `field:value` on declared keyword fields. Never an error: unbalanced quotes and stray
    /// operators are read as plain words; operators only narrow the records the caller may
    /// see, in every leg. A query without operators ranks exactly as in `Plain`
    /// (docs/search-box.md).
    Simple,
}

impl QuerySyntax {
    /// Parses `plain`, `simple` or `tantivy`.
    pub fn parse(text: &str) -> Option<QuerySyntax> {
        Some(match text.trim().to_ascii_lowercase().as_str() {
            "plain" => QuerySyntax::Plain,
            "simple" => QuerySyntax::Simple,
            "tantivy" => QuerySyntax::Tantivy,
            _ => return None,
        })
    }
}

/// How the legs' ranked lists become one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fusion {
    /// Lexical evidence counted once (the larger of BM25's and the fuzzy leg's normalised
    /// score), then a convex combination with the semantic leg's normalised score
    /// (`braid_fusion::BlendParams::DEFAULT`, fitted on training splits by `braid-report fit`). The
    /// default: above RRF on SciFact and on real-misspelt SciFact and NFCorpus, with
    /// intervals clear of zero, level on NFCorpus (research/ranking-log.md).
    #[default]
    Blend,
    /// Reciprocal rank fusion: `Σ weight / (rrf_k + rank)`.
    Rrf,
    /// Weighted average of min-max normalised raw scores.
    MinMax,
    /// Weighted average of `Φ(z-score)` of raw scores (distribution-based).
    ZScore,
    /// Weighted average of distribution-based normalised scores (`(s − μ + 3σ) / 6σ`, clipped).
    Dbsf,
}

impl std::str::FromStr for Fusion {
    type Err = UnknownName;

    /// Parses `blend`, `rrf`, `minmax`, `zscore` or `dbsf`, in any case, `-` and `_` ignored.
    fn from_str(text: &str) -> Result<Fusion, UnknownName> {
        Ok(match text.trim().to_ascii_lowercase().replace(['-', '_'], "").as_str() {
            "blend" => Fusion::Blend,
            "rrf" => Fusion::Rrf,
            "minmax" => Fusion::MinMax,
            "zscore" => Fusion::ZScore,
            "dbsf" => Fusion::Dbsf,
            _ => {
                return Err(UnknownName {
                    what: "fusion",
                    got: text.to_string(),
                    expected: "blend, rrf, minmax, zscore or dbsf",
                })
            }
        })
    }
}

impl Fusion {
    /// The method's name.
    pub fn name(self) -> &'static str {
        match self {
            Fusion::Blend => "blend",
            Fusion::Rrf => "rrf",
            Fusion::MinMax => "minmax",
            Fusion::ZScore => "zscore",
            Fusion::Dbsf => "dbsf",
        }
    }
}

/// Per-leg weights for reciprocal rank fusion. By default every leg weighs 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LegWeights {
    /// Weight of the lexical leg.
    pub lexical: f32,
    /// Weight of the fuzzy leg.
    pub fuzzy: f32,
    /// Weight of the semantic leg.
    pub semantic: f32,
}

impl Default for LegWeights {
    fn default() -> Self {
        LegWeights { lexical: 1.0, fuzzy: 1.0, semantic: 1.0 }
    }
}

impl LegWeights {
    /// The weight of `leg`.
    pub fn get(&self, leg: Leg) -> f32 {
        match leg {
            Leg::Lexical => self.lexical,
            Leg::Fuzzy => self.fuzzy,
            Leg::Semantic => self.semantic,
        }
    }
}

/// At most `per_group` hits share one value of `field` ([`SearchRequest::group_by`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupBy {
    /// `parent` (a section's article; a record without a parent is its own group) or a keyword
    /// field of the schema (by its first value; a record without one is its own group).
    pub field: String,
    /// The most hits one group keeps, at least 1.
    pub per_group: usize,
}

impl GroupBy {
    /// The field that groups a record's sections under their article.
    pub const PARENT: &'static str = "parent";
}

/// One search: the query, who asks, and how.
///
/// Built with chained setters, one per field, named as the field it sets (read the field to
/// get it back); every knob has a stated default. Validation happens in
/// `search()`, which answers `k = 0` with an empty result and rejects `k > MAX_K`,
/// `depth > MAX_DEPTH` and queries over [`MAX_QUERY_BYTES`] with typed errors.
///
/// ```
/// use braid_core::{Filter, Mode, Principal, SearchRequest};
/// let req = SearchRequest::new("retun policy", Principal::public())
///     .k(3)
///     .mode(Mode::Fuzzy)
///     .filter(Filter::keyword("category", "billing"));
/// assert_eq!(req.query, "retun policy");
/// assert_eq!(req.k, 3);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SearchRequest {
    /// The query text.
    pub query: String,
    /// On whose behalf the search runs: it sees only what this principal may see.
    pub principal: Principal,
    /// See [`SearchRequest::filter`].
    pub filter: Option<Filter>,
    /// See [`SearchRequest::k`].
    pub k: usize,
    /// See [`SearchRequest::mode`].
    pub mode: Mode,
    /// See [`SearchRequest::syntax`].
    pub syntax: QuerySyntax,
    /// See [`SearchRequest::depth`].
    pub depth: usize,
    /// See [`SearchRequest::rrf_k`].
    pub rrf_k: f32,
    /// See [`SearchRequest::weights`].
    pub weights: LegWeights,
    /// See [`SearchRequest::suggest`].
    pub suggest: bool,
    /// See [`SearchRequest::snippet_chars`].
    pub snippet_chars: usize,
    /// See [`SearchRequest::rerank`].
    pub rerank: Option<usize>,
    /// See [`SearchRequest::fusion`].
    pub fusion: Fusion,
    /// See [`SearchRequest::min_score`].
    pub min_score: f32,
    /// See [`SearchRequest::collapse`].
    pub collapse: bool,
    /// See [`SearchRequest::group_by`].
    pub group_by: Option<GroupBy>,
    /// See [`SearchRequest::mmr`].
    pub mmr: Option<f32>,
    /// See [`SearchRequest::token_budget`].
    pub token_budget: Option<usize>,
    /// See [`SearchRequest::ids_only`].
    pub ids_only: bool,
    /// See [`SearchRequest::deadline`].
    pub deadline: Option<Instant>,
    /// See [`SearchRequest::vector`].
    pub vector: Option<Vec<f32>>,
    /// See [`SearchRequest::offset`].
    pub offset: usize,
    /// See [`SearchRequest::cursor`].
    pub cursor: Option<String>,
    /// See [`SearchRequest::facet`] (one per call).
    pub facets: Vec<Facet>,
    /// See [`SearchRequest::boosts`].
    pub boosts: Boosts,
    /// See [`SearchRequest::feedback`].
    pub feedback: bool,
}

impl SearchRequest {
    /// A request for `query` on behalf of `principal`.
    pub fn new(query: impl Into<String>, principal: Principal) -> Self {
        SearchRequest {
            query: query.into(),
            principal,
            filter: None,
            k: 10,
            mode: Mode::Hybrid,
            syntax: QuerySyntax::Plain,
            depth: 100,
            rrf_k: 60.0,
            weights: LegWeights::default(),
            suggest: true,
            snippet_chars: 200,
            rerank: None,
            fusion: Fusion::default(),
            min_score: 0.0,
            collapse: false,
            group_by: None,
            mmr: None,
            token_budget: None,
            ids_only: false,
            deadline: None,
            vector: None,
            offset: 0,
            cursor: None,
            facets: Vec::new(),
            boosts: Boosts::default(),
            feedback: true,
        }
    }

    /// Pseudo-relevance feedback on the lexical leg where it is fused (hybrid): BM25
    /// searches again with the terms its own top documents agree on (RM3; the first words of
    /// their stored text are read back and analysed, about 0.6 ms a query). Fitted on training
    /// splits only (research/ranking-log.md): +0.0049 nDCG@10 on NFCorpus `train` (p < 0.001), +0.0061
    /// on NFCorpus `dev`, level on SciFact `train`. Only terms two of the top documents share
    /// are added, so a query matching one document adds nothing, and sections of one document
    /// count once. On by default; `false` ranks by BM25 of the query alone (faster, for
    /// services that need the throughput).
    pub fn feedback(mut self, on: bool) -> Self {
        self.feedback = on;
        self
    }

    /// Skips the first `offset` hits of the ranking: the hits are ranks `offset + 1` to
    /// `offset + k`. A page must end within the ranking, `offset + k <= max(depth, k)`
    /// ([`Error::PageOutOfRange`] otherwise), so that every page of one query is cut from
    /// the same ranking. By default, 0.
    ///
    /// ```
    /// use braid_core::{Principal, SearchRequest};
    /// let second_page = SearchRequest::new("refund", Principal::public()).k(10).offset(10);
    /// assert_eq!(second_page.offset, 10);
    /// ```
    pub fn offset(mut self, offset: usize) -> Self {
        self.offset = offset;
        self
    }

    /// Continues from a cursor a previous response returned (`SearchResponse::next_cursor`):
    /// the next `k` hits of the same ranking. The cursor is refused with
    /// [`Error::InvalidCursor`] when it was made for another request (query, filter, mode,
    /// depth, fusion, boosts or principal) or is malformed, and with [`Error::StaleCursor`]
    /// when the hits before it changed since. It cannot be combined with an offset. By
    /// default, none.
    pub fn cursor(mut self, cursor: impl Into<String>) -> Self {
        self.cursor = Some(cursor.into());
        self
    }

    /// Adds a facet: counts per value or range of a field over every record the request
    /// matches that the caller may see (see [`crate::Facets`]). At most
    /// [`crate::MAX_FACETS`]. By default, none.
    ///
    /// ```
    /// use braid_core::{Facet, Principal, SearchRequest};
    /// let req = SearchRequest::new("refund", Principal::public()).facet(Facet::values("category"));
    /// assert_eq!(req.facets.len(), 1);
    /// ```
    pub fn facet(mut self, facet: Facet) -> Self {
        self.facets.push(facet);
        self
    }

    /// Field weights, decays and numeric or keyword boosts (see [`Boosts`] for the formula).
    /// By default, none: the ranking is the fused ranking.
    pub fn boosts(mut self, boosts: Boosts) -> Self {
        self.boosts = boosts;
        self
    }

    /// A query vector computed by the caller's own model: the semantic leg searches with it
    /// instead of embedding the query text, which still drives the lexical and fuzzy legs
    /// (leave it empty for a vector-only search). It must have the index's dimension, finite
    /// components and not be all zeros; `search()` answers otherwise with
    /// [`crate::Error::DimensionMismatch`] or [`crate::Error::InvalidRequest`]. With a query
    /// vector the semantic leg runs even on an index without an embedding model. By default,
    /// none.
    ///
    /// ```
    /// use braid_core::{Mode, Principal, SearchRequest};
    /// let req = SearchRequest::new("", Principal::public()).vector(vec![0.1, 0.9]).mode(Mode::Semantic);
    /// assert_eq!(req.vector.as_deref(), Some(&[0.1, 0.9][..]));
    /// ```
    pub fn vector(mut self, vector: impl Into<Vec<f32>>) -> Self {
        self.vector = Some(vector.into());
        self
    }

    /// How many hits to return. By default, 10.
    pub fn k(mut self, k: usize) -> Self {
        self.k = k;
        self
    }
    /// Which legs run. By default, [`Mode::Hybrid`].
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }
    /// A structured filter, applied with access control before ranking. By default, none.
    pub fn filter(mut self, filter: Filter) -> Self {
        self.filter = Some(filter);
        self
    }
    /// How the query text is read. By default, [`QuerySyntax::Plain`].
    pub fn syntax(mut self, syntax: QuerySyntax) -> Self {
        self.syntax = syntax;
        self
    }
    /// How many candidates each leg contributes to fusion (at least `k`, at most
    /// [`MAX_DEPTH`]: `search()` rejects a larger one). By default, 100.
    /// A mode with a single leg and no collapsing fetches only the hits it can return
    /// (`k`, or the rerank budget when larger): its order is already the final one.
    pub fn depth(mut self, depth: usize) -> Self {
        self.depth = depth;
        self
    }
    /// The RRF constant: a hit at rank r (1-based) of a leg adds `weight / (rrf_k + r)`.
    /// By default, 60.
    pub fn rrf_k(mut self, rrf_k: f32) -> Self {
        self.rrf_k = rrf_k;
        self
    }
    /// Per-leg fusion weights. By default, all 1.
    pub fn weights(mut self, weights: LegWeights) -> Self {
        self.weights = weights;
        self
    }
    /// Whether to compute "did you mean" suggestions. By default, true.
    pub fn suggest(mut self, suggest: bool) -> Self {
        self.suggest = suggest;
        self
    }
    /// The longest snippet in characters (0 turns snippets off). By default, 200.
    pub fn snippet_chars(mut self, chars: usize) -> Self {
        self.snippet_chars = chars;
        self
    }

    /// How many of the top fused candidates the index's cross-encoder rescores (0 turns
    /// reranking off). By default, [`DEFAULT_RERANK_CANDIDATES`] when the index has a reranker
    /// attached; ignored otherwise.
    pub fn rerank(mut self, candidates: usize) -> Self {
        self.rerank = Some(candidates);
        self
    }

    /// How the legs are fused. By default, [`Fusion::Blend`].
    pub fn fusion(mut self, fusion: Fusion) -> Self {
        self.fusion = fusion;
        self
    }

    /// Drops hits whose score is below `min_score`. Scores are on one documented scale for
    /// every fusion method, `[0, 1]`: 1 means first in every leg that ran (RRF) or the top
    /// raw score of every leg (normalised fusion); with RRF, 0.5 is roughly "first in half the
    /// legs' weight". By default, 0 (keep everything).
    pub fn min_score(mut self, min_score: f32) -> Self {
        self.min_score = min_score;
        self
    }

    /// Keeps only the best-ranked chunk of each parent record (the best section per article),
    /// so `k` hits are `k` different documents. Records without a parent are their own group.
    /// By default, off.
    pub fn collapse(mut self, collapse: bool) -> Self {
        self.collapse = collapse;
        self
    }

    /// Keeps at most `per_group` hits for each value of `field`, the best by the final order
    /// (after any rerank): `parent` ([`GroupBy::PARENT`]) keeps the best `per_group` sections of
    /// each article, a keyword field the best of each of its values (a record is grouped by its
    /// first value; one without the field, or without a parent, is its own group). A field the
    /// schema does not declare is an [`crate::Error::UnknownField`]; `per_group` 0 an
    /// [`crate::Error::InvalidRequest`]. `group_by("parent", 1)` is
    /// [`SearchRequest::collapse`]. By default, none.
    ///
    /// ```
    /// use braid_core::{Principal, SearchRequest};
    /// let req = SearchRequest::new("sso setup", Principal::public()).group_by("parent", 2);
    /// assert_eq!(req.group_by.as_ref().map(|g| g.per_group), Some(2));
    /// ```
    pub fn group_by(mut self, field: impl Into<String>, per_group: usize) -> Self {
        self.group_by = Some(GroupBy { field: field.into(), per_group });
        self
    }

    /// Reorders the hits by maximal marginal relevance (Carbonell and Goldstein, 1998): each
    /// next hit is the one maximising `λ · relevance − (1 − λ) · (its highest similarity to a
    /// hit already placed)`, where relevance is the hit's score divided by the best score, and
    /// similarity the cosine of the two records' stored vectors (on an index with vectors; the
    /// overlap of their words, Jaccard, for records without). `lambda` 1 keeps the relevance
    /// order; lower values trade relevance for hits that differ from those above them. Runs over
    /// the request's `depth` candidates, after any grouping. `lambda` outside `[0, 1]` is an
    /// [`crate::Error::InvalidRequest`]. By default, none.
    pub fn mmr(mut self, lambda: f32) -> Self {
        self.mmr = Some(lambda);
        self
    }

    /// Packs the page into at most `tokens` tokens of text, counted with the index's
    /// embedding model's tokenizer ([`crate::Embedder::count_tokens`]; as words, split on white
    /// space and punctuation, on an index without one): hits are taken in order, each
    /// counting its title, section path and snippet, until the next would not fit, and the
    /// response's `stats.tokens` says how many the page holds. A page cut short by the budget
    /// carries no `next_cursor`; the next page starts at `offset` plus the hits returned. By
    /// default, none (no budget).
    ///
    /// ```
    /// use braid_core::{Principal, SearchRequest};
    /// let req = SearchRequest::new("sso setup", Principal::public()).token_budget(512);
    /// assert_eq!(req.token_budget, Some(512));
    /// ```
    pub fn token_budget(mut self, tokens: usize) -> Self {
        self.token_budget = Some(tokens);
        self
    }

    /// Whether the final order is decided over every candidate rather than the page alone:
    /// collapsing, grouping and MMR choose among more candidates than the page holds.
    pub fn regroups(&self) -> bool {
        self.collapse || self.group_by.is_some() || self.mmr.is_some()
    }

    /// Hits carry their id, score and explanation only: no title, fields or snippet, and the
    /// search reads no stored record (ids come from a column), for callers that keep records
    /// elsewhere or only need ids. Reranking and collapsing still read the records they need.
    /// By default, off.
    ///
    /// ```
    /// use braid_core::{Principal, SearchRequest};
    /// let req = SearchRequest::new("refund policy", Principal::public()).ids_only(true);
    /// assert!(req.ids_only);
    /// ```
    pub fn ids_only(mut self, ids_only: bool) -> Self {
        self.ids_only = ids_only;
        self
    }

    /// A point in time past which the search stops working and returns
    /// [`Error::DeadlineExceeded`]: the engine checks it between stages (visibility, recall,
    /// fusion, hits, rerank, snippets), before each leg, after the query is embedded and
    /// between cross-encoder batches. A server sets it to the end of a request's time budget,
    /// so a request it has already answered with a timeout stops holding a worker. The checks
    /// are cooperative: one step already running (a leg, one model call) finishes first. By
    /// default, none.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use braid_core::{Principal, SearchRequest};
    /// let req = SearchRequest::new("refund", Principal::public()).deadline(Instant::now() + Duration::from_secs(2));
    /// assert!(req.check_deadline().is_ok());
    /// let late = SearchRequest::new("refund", Principal::public()).deadline(Instant::now());
    /// assert!(late.check_deadline().is_err());
    /// ```
    pub fn deadline(mut self, at: Instant) -> Self {
        self.deadline = Some(at);
        self
    }

    /// `Ok` while the deadline, if any, has not passed.
    ///
    /// # Errors
    /// [`Error::DeadlineExceeded`] once it has.
    pub fn check_deadline(&self) -> Result<()> {
        match self.deadline {
            Some(at) if Instant::now() >= at => Err(Error::DeadlineExceeded),
            _ => Ok(()),
        }
    }

    /// Candidates per leg: `max(depth, k)`.
    pub fn candidates_per_leg(&self) -> usize {
        self.depth.max(self.k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `auto`, the default mode's name until 2026-12, still names it: on the command line, in
    /// JSON requests, and as the default of a new request.
    #[test]
    fn auto_is_an_older_name_of_hybrid() {
        assert_eq!("auto".parse::<Mode>().unwrap(), Mode::Hybrid);
        assert_eq!(" AUTO ".parse::<Mode>().unwrap(), Mode::Hybrid);
        assert_eq!(serde_json::from_str::<Mode>("\"auto\"").unwrap(), Mode::Hybrid);
        assert_eq!(serde_json::to_string(&Mode::Hybrid).unwrap(), "\"hybrid\"");
        assert_eq!(Mode::default(), Mode::Hybrid);
        assert_eq!(SearchRequest::new("q", Principal::public()).mode, Mode::Hybrid);
        assert!("automatic".parse::<Mode>().is_err());
    }
}
