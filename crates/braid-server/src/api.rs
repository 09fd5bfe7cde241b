//! What both surfaces share: the search parameters a client may send (never a principal),
//! the engine that turns them into one `Index::search` call, and how failures are told.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use braid::{Boosts, Facet, Filter, Index, Mode, Principal, QuerySyntax, SearchRequest, SearchResponse, StoredRecord};
use serde::Deserialize;

use super::write::WriteLock;

/// The search parameters of `POST /v1/search` and of the MCP `search` tool. There is no
/// principal field: unknown fields are refused, and the principal comes from the token.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchParams {
    /// The query text (plain text, or the simple search-box syntax with `syntax: simple`;
    /// never tantivy's query language).
    pub query: String,
    /// Hits wanted. By default, 10.
    #[serde(default = "default_k")]
    pub k: usize,
    /// Which legs run. By default, `hybrid`.
    #[serde(default)]
    pub mode: Mode,
    /// Structured filters that must all hold. By default, none.
    #[serde(default)]
    pub filters: Vec<Filter>,
    /// Keep only the best section of each article. By default, false.
    #[serde(default)]
    pub collapse: bool,
    /// At most `per_group` hits per value of `field` ([`SearchRequest::group_by`]). By
    /// default, none.
    #[serde(default)]
    pub group_by: Option<braid::GroupBy>,
    /// Maximal marginal relevance's lambda ([`SearchRequest::mmr`]). By default, none.
    #[serde(default)]
    pub mmr: Option<f32>,
    /// The most tokens the page holds ([`SearchRequest::token_budget`]). By default, none.
    #[serde(default)]
    pub token_budget: Option<usize>,
    /// Hits carry id, score and explanation only (no title, fields or snippet). By default,
    /// false.
    #[serde(default)]
    pub ids_only: bool,
    /// A query vector from the caller's own model, used by the semantic leg instead of
    /// embedding `query`. By default, none.
    #[serde(default)]
    pub vector: Option<Vec<f32>>,
    /// How the query text is read. By default, plain text.
    #[serde(default)]
    pub syntax: Syntax,
    /// Hits to skip (the page starts at rank `offset + 1`). By default, 0.
    #[serde(default)]
    pub offset: usize,
    /// The `next_cursor` of a previous response: the next page of the same ranking.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Candidates per leg: the ranking pages are cut from (`offset + k` must stay within it).
    /// By default, 100.
    #[serde(default)]
    pub depth: Option<usize>,
    /// Counts per value or range over every matched record the caller may see.
    #[serde(default)]
    pub facets: Vec<Facet>,
    /// Field weights, decays and numeric or keyword boosts.
    #[serde(default)]
    pub boosts: Option<Boosts>,
    /// Pseudo-relevance feedback on the fused lexical leg ([`SearchRequest::feedback`]). By
    /// default, true.
    #[serde(default = "default_feedback")]
    pub feedback: bool,
}

/// The query syntaxes the server accepts: tantivy's full query language is never served.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Syntax {
    /// Plain text: every character is text (the default).
    #[default]
    Plain,
    /// The search-box syntax: `"phrase"`, `-exclude`, `OR`, `field:value` (docs/search-box.md).
    Simple,
}

fn default_k() -> usize {
    10
}

fn default_feedback() -> bool {
    true
}

/// The deepest ranking a client may ask for (`depth`): ten times the library's default, so a
/// page reaches rank 1,000; deeper pages cost every leg that much more for every caller.
pub const MAX_SERVED_DEPTH: usize = 1_000;

thread_local! {
    /// The deadline of the request this thread works for (see [`with_deadline`]).
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
    /// Whether the searches this thread makes report stage timings (see [`with_timings`]).
    static TIMINGS: Cell<bool> = const { Cell::new(false) };
}

/// Runs `work` with the stage timings of its searches (`stats.micros`, the MCP `steps`) kept
/// when `shown`, left out otherwise — the default. Timings to the microsecond would tell a
/// caller whether a cache (the allowed set, the term frequencies) was warm, that is, what
/// other callers of the same principal just asked; only operators (a token with `operator =
/// true`, the `[oauth] operator_scope`, the command line of `braid mcp`) see them
/// (docs/threat-model.md).
pub fn with_timings<T>(shown: bool, work: impl FnOnce() -> T) -> T {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            TIMINGS.with(|t| t.set(self.0));
        }
    }
    let _reset = Reset(TIMINGS.with(|t| t.replace(shown)));
    work()
}

/// Leaves the stage timings out of `response` unless this thread's work may see them: the
/// only place the server touches them.
fn stage_timings(response: &mut SearchResponse) {
    if !TIMINGS.with(Cell::get) {
        response.stats.micros.clear();
    }
}

/// Runs `work` with `deadline` as the deadline of every search it makes through an
/// [`Engine`] on this thread: past it, the library stops at its next check
/// ([`braid::SearchRequest::deadline`]) and the search fails with [`Failure::Cancelled`]. The
/// server wraps each request's blocking work in it, so that a request already answered with a
/// timeout stops holding its worker and its concurrency slot.
pub fn with_deadline<T>(deadline: Instant, work: impl FnOnce() -> T) -> T {
    struct Reset(Option<Instant>);
    impl Drop for Reset {
        fn drop(&mut self) {
            DEADLINE.with(|d| d.set(self.0));
        }
    }
    let _reset = Reset(DEADLINE.with(|d| d.replace(Some(deadline))));
    work()
}

/// Why a call failed, in words the caller may read.
#[derive(Debug)]
pub enum Failure {
    /// The caller can fix it: the message says how.
    BadRequest(String),
    /// The request ran past its time budget and its search was stopped.
    Cancelled,
    /// Something broke on the server; details are in the server's log only.
    Internal,
}

impl Failure {
    /// The message for the caller.
    pub fn message(&self) -> String {
        match self {
            Failure::BadRequest(m) => m.clone(),
            Failure::Cancelled => "the request ran past its time budget and was cancelled".to_string(),
            Failure::Internal => "internal error (see the server's log)".to_string(),
        }
    }
}

impl From<braid::Error> for Failure {
    fn from(e: braid::Error) -> Self {
        if matches!(e, braid::Error::DeadlineExceeded) {
            tracing::debug!(target: "braid::serve", "search cancelled at its deadline");
            Failure::Cancelled
        } else if let braid::Error::PageOutOfRange { end, window, .. } = e {
            // The served limit, not the library's.
            Failure::BadRequest(braid::Error::PageOutOfRange { end, window, max: MAX_SERVED_DEPTH }.to_string())
        } else if e.is_user_error() {
            Failure::BadRequest(e.to_string())
        } else {
            tracing::error!(target: "braid::serve", error = %e, "search failed");
            Failure::Internal
        }
    }
}

/// The index as both surfaces use it: every search and read goes through the library facade
/// with the caller's principal.
pub struct Engine {
    /// The index; [`Engine::refresh`] makes it serve a newer commit.
    index: Index,
    /// Failed attempts to open a newer commit since the last success (0: serving the newest).
    failures: AtomicU64,
    /// The largest `k` accepted.
    pub max_k: usize,
    /// One writer at a time, for record writes and memories alike.
    writes: WriteLock,
    /// The tool catalogue `search_tools` searches, when the operator gave one.
    tools: Option<braid::ToolCatalogue>,
}

impl Engine {
    /// Serves `index`, accepting `k` up to `max_k`.
    pub fn new(index: Index, max_k: usize) -> Self {
        let writes = WriteLock::new(index.clone(), braid::GroupCommitOptions::default());
        Engine { index, failures: AtomicU64::new(0), max_k, writes, tools: None }
    }

    /// The engine with record writes committed as `options` say (see [`WriteLock`]; by
    /// default, the library's).
    pub fn with_commit_options(mut self, options: braid::GroupCommitOptions) -> Self {
        self.writes = WriteLock::new(self.index.clone(), options);
        self
    }

    /// The engine with a tool catalogue for `search_tools`.
    pub fn with_tools(mut self, tools: braid::ToolCatalogue) -> Self {
        self.tools = Some(tools);
        self
    }

    /// The tool catalogue, when the operator gave one.
    pub fn tools(&self) -> Option<&braid::ToolCatalogue> {
        self.tools.as_ref()
    }

    /// The server's one write lock: every write, REST or MCP, records or memories, goes through
    /// it, so concurrent requests queue instead of failing with a busy lock.
    pub fn writes(&self) -> &WriteLock {
        &self.writes
    }

    /// The index. A search takes one searcher when it starts ([`Index::search`]), so a refresh
    /// never changes a search midway.
    pub fn index(&self) -> Index {
        self.index.clone()
    }

    /// Picks up a commit another process wrote (a re-index with `braid index`, a writer of
    /// its own) with [`Index::reload`]: checksums verified, the models already loaded kept.
    /// Returns whether it swapped.
    ///
    /// # Errors
    /// When the new commit cannot be opened; the previous one goes on serving, the failure is
    /// counted ([`Engine::reload_failures`]) and the next call tries again — a commit that
    /// failed once (a half-copied index, a file briefly unreadable) is never given up on.
    pub fn refresh(&self) -> anyhow::Result<bool> {
        // Synonyms change without a commit (`braid synonyms`): a bad file keeps the set in use.
        if let Err(e) = self.index.reload_synonyms() {
            tracing::warn!(target: "braid::serve", error = %e, "synonyms.txt not reloaded");
        }
        match self.index.reload() {
            Ok(swapped) => {
                self.failures.store(0, Ordering::Relaxed);
                Ok(swapped)
            }
            Err(e) => {
                self.failures.fetch_add(1, Ordering::Relaxed);
                Err(e.into())
            }
        }
    }

    /// The served commit's opaque id ([`Index::commit_id`]); `None` for an in-memory index.
    pub fn commit(&self) -> Option<String> {
        self.index.commit_id()
    }

    /// Failed attempts to open a newer commit since the last success: above 0, the server
    /// serves an older commit than the one on disk.
    pub fn reload_failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }

    /// Searches as `principal`.
    ///
    /// # Errors
    /// [`Failure::BadRequest`] for `k` above the server's maximum and for the library's user
    /// errors (unknown filter field, semantic mode without a model, query too long).
    pub fn search(&self, principal: &Principal, params: &SearchParams) -> Result<SearchResponse, Failure> {
        if params.k > self.max_k {
            return Err(Failure::BadRequest(format!(
                "k = {} is above this server's maximum of {}",
                params.k, self.max_k
            )));
        }
        let mut request = SearchRequest::new(params.query.as_str(), principal.clone())
            .k(params.k)
            .mode(params.mode)
            .collapse(params.collapse)
            .ids_only(params.ids_only)
            .syntax(match params.syntax {
                Syntax::Plain => QuerySyntax::Plain,
                Syntax::Simple => QuerySyntax::Simple,
            })
            .offset(params.offset)
            .feedback(params.feedback);
        if let Some(cursor) = &params.cursor {
            request = request.cursor(cursor.as_str());
        }
        if let Some(group) = &params.group_by {
            request = request.group_by(group.field.as_str(), group.per_group);
        }
        if let Some(lambda) = params.mmr {
            request = request.mmr(lambda);
        }
        if let Some(tokens) = params.token_budget {
            request = request.token_budget(tokens);
        }
        if let Some(depth) = params.depth {
            if depth > MAX_SERVED_DEPTH {
                return Err(Failure::BadRequest(format!(
                    "depth = {depth} is above this server's maximum of {MAX_SERVED_DEPTH}"
                )));
            }
            request = request.depth(depth);
        }
        for facet in &params.facets {
            request = request.facet(facet.clone());
        }
        if let Some(boosts) = &params.boosts {
            request = request.boosts(boosts.clone());
        }
        if let Some(deadline) = DEADLINE.with(Cell::get) {
            request = request.deadline(deadline);
        }
        if let Some(vector) = &params.vector {
            request = request.vector(vector.clone());
        }
        let mut filters = params.filters.clone();
        if let Some(filter) = match filters.len() {
            0 => None,
            1 => filters.pop(),
            _ => Some(Filter::all(filters)),
        } {
            request = request.filter(filter);
        }
        let mut response = self.index().search(&request)?;
        stage_timings(&mut response);
        Ok(response)
    }

    /// Reads one record as `principal`: `None` when it does not exist or is not visible.
    ///
    /// # Errors
    /// [`Failure::Internal`] when the store cannot be read.
    pub fn read(&self, principal: &Principal, id: &str) -> Result<Option<StoredRecord>, Failure> {
        Ok(self.index().record(id, principal)?)
    }

    /// The folders and articles under `path` that `principal` may see (see
    /// [`braid::Searcher::outline`]).
    ///
    /// # Errors
    /// [`Failure::BadRequest`] for a page size out of bounds; [`Failure::Internal`] when the
    /// store cannot be read.
    pub fn outline(
        &self,
        principal: &Principal,
        path: &str,
        offset: usize,
        limit: usize,
    ) -> Result<braid::Outline, Failure> {
        Ok(self.index().outline(principal, path, offset, limit)?)
    }

    /// A page of the records `principal` may see, by id (see
    /// [`braid::Searcher::records_after`]).
    ///
    /// # Errors
    /// [`Failure::Internal`] when the store cannot be read.
    pub fn records_after(
        &self,
        principal: &Principal,
        after: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<StoredRecord>, Option<String>), Failure> {
        Ok(self.index().searcher().records_after(principal, after, limit)?)
    }

    /// How many records `principal` may see.
    ///
    /// # Errors
    /// [`Failure::Internal`] when the store cannot be read.
    pub fn visible(&self, principal: &Principal) -> Result<usize, Failure> {
        // A search for nothing (k = 0) runs only the visibility stage.
        let mut request = SearchRequest::new("", principal.clone()).k(0);
        if let Some(deadline) = DEADLINE.with(Cell::get) {
            request = request.deadline(deadline);
        }
        Ok(self.index().search(&request)?.stats.allowed)
    }

    /// The legs this index can run.
    pub fn legs(&self) -> Vec<&'static str> {
        let mut legs = vec!["lexical", "fuzzy"];
        if self.index().has_semantic() {
            legs.push("semantic");
        }
        legs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use braid::{IndexConfig, Record};

    fn engine() -> Engine {
        let index = Index::create_in_ram(IndexConfig::default()).unwrap();
        let mut w = index.writer().unwrap();
        w.upsert(&Record::new("a").title("Refund policy").body("Refunds within 30 days.").acl(["tenant:acme"]))
            .unwrap();
        w.upsert(&Record::new("b").title("Refund policy").body("Refunds within 14 days.").acl(["tenant:globex"]))
            .unwrap();
        w.commit().unwrap();
        Engine::new(index, 5)
    }

    fn params(json: &str) -> Result<SearchParams, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn a_principal_cannot_come_from_the_body() {
        let err = params(r#"{"query": "refund", "principal": ["tenant:globex"]}"#).unwrap_err();
        assert!(err.to_string().contains("unknown field `principal`"), "{err}");
        assert!(params(r#"{"query": "refund", "tenant": "globex"}"#).is_err());
    }

    #[test]
    fn searches_run_as_the_given_principal() {
        let e = engine();
        let acme = Principal::from_verified_tokens(["tenant:acme"]);
        let p = params(r#"{"query": "refund", "mode": "fuzzy", "k": 5}"#).unwrap();
        let ids: Vec<String> = e.search(&acme, &p).unwrap().hits.into_iter().map(|h| h.id).collect();
        assert_eq!(ids, ["a"]);
        assert_eq!(e.visible(&acme).unwrap(), 1);
        assert!(e.read(&acme, "b").unwrap().is_none());
        assert_eq!(e.read(&acme, "a").unwrap().map(|r| r.id), Some("a".to_string()));
    }

    #[test]
    fn user_errors_are_bad_requests() {
        let e = engine();
        let p = Principal::public();
        for body in [
            r#"{"query": "x", "k": 6}"#,
            r#"{"query": "x", "mode": "semantic"}"#,
            r#"{"query": "x", "filters": [{"keyword": {"field": "nope", "value": "1"}}]}"#,
        ] {
            match e.search(&p, &params(body).unwrap()) {
                Err(Failure::BadRequest(m)) => assert!(!m.is_empty()),
                other => panic!("{body}: {other:?}"),
            }
        }
        assert!(params(r#"{"query": "x", "mode": "psychic"}"#).is_err());
        assert!(params(r#"{"k": 3}"#).is_err());
    }

    #[test]
    fn pages_facets_and_boosts_come_through_the_parameters() {
        let index = Index::create_in_ram(IndexConfig::default()).unwrap();
        let mut w = index.writer().unwrap();
        for i in 0..12 {
            let category = if i % 3 == 0 { "billing" } else { "account" };
            let record = Record::new(format!("r{i}"))
                .title(format!("Refund {i}"))
                .body("Refunds go back to the card.")
                .keyword("category", category)
                .number("updated", 1_700_000_000.0 + f64::from(i) * 86_400.0);
            w.upsert(&record.acl(["tenant:acme"])).unwrap();
        }
        w.upsert(&Record::new("hidden").title("Refund").keyword("category", "secret").acl(["tenant:globex"])).unwrap();
        w.commit().unwrap();
        let e = Engine::new(index, 50);
        let acme = Principal::from_verified_tokens(["tenant:acme"]);
        let first = e
            .search(
                &acme,
                &params(r#"{"query": "refund", "k": 5, "facets": [{"values": {"field": "category"}}]}"#).unwrap(),
            )
            .unwrap();
        let facets = first.facets.as_ref().unwrap();
        assert_eq!(facets.matched, 12);
        let values: Vec<(&str, u64)> = facets.values["category"].iter().map(|v| (v.value.as_str(), v.count)).collect();
        assert_eq!(values, [("account", 8), ("billing", 4)], "globex's value is not counted");
        let cursor = first.next_cursor.clone().unwrap();
        let body = format!(r#"{{"query": "refund", "k": 5, "cursor": "{cursor}"}}"#);
        let second = e.search(&acme, &params(&body).unwrap()).unwrap();
        let by_offset = e.search(&acme, &params(r#"{"query": "refund", "k": 5, "offset": 5}"#).unwrap()).unwrap();
        let ids = |r: &SearchResponse| r.hits.iter().map(|h| h.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&second), ids(&by_offset));
        assert!(matches!(
            e.search(&acme, &params(r#"{"query": "refund", "cursor": "nope"}"#).unwrap()),
            Err(Failure::BadRequest(_))
        ));
        let boosted = r#"{"query": "refund", "k": 3, "boosts": {"decay": [{"field": "updated", "function": "exp", "origin": 1700950400, "scale": 86400}]}}"#;
        let newest = e.search(&acme, &params(boosted).unwrap()).unwrap();
        assert_eq!(ids(&newest)[0], "r11");
        assert!(params(r#"{"query": "x", "boosts": {"recency": 1}}"#).is_err());
        let deep = params(r#"{"query": "refund", "depth": 1001, "offset": 990}"#).unwrap();
        assert!(matches!(e.search(&acme, &deep), Err(Failure::BadRequest(m)) if m.contains("depth")));
    }

    #[test]
    fn a_query_vector_runs_the_semantic_leg_within_the_principal() {
        let index = Index::create_in_ram(IndexConfig::default()).unwrap();
        let mut w = index.writer().unwrap();
        w.upsert(&Record::new("a").body("north").vector(vec![0.0, 1.0]).acl(["tenant:acme"])).unwrap();
        w.upsert(&Record::new("b").body("north too").vector(vec![0.1, 1.0]).acl(["tenant:globex"])).unwrap();
        w.commit().unwrap();
        let e = Engine::new(index, 5);
        let acme = Principal::from_verified_tokens(["tenant:acme"]);
        let p = params(r#"{"query": "", "k": 5, "mode": "semantic", "vector": [0.1, 1.0]}"#).unwrap();
        let ids: Vec<String> = e.search(&acme, &p).unwrap().hits.into_iter().map(|h| h.id).collect();
        assert_eq!(ids, ["a"], "b is nearer but belongs to another tenant");
        let wrong = params(r#"{"query": "", "k": 5, "mode": "semantic", "vector": [1, 0, 0]}"#).unwrap();
        assert!(matches!(e.search(&acme, &wrong), Err(Failure::BadRequest(m)) if m.contains("dimension")));
    }
}
