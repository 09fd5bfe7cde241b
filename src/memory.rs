//! An agent's memory over an index: [`Memory::remember`], [`Memory::recall`],
//! [`Memory::forget`], [`Memory::forget_kind`] and [`Memory::update`], each on behalf of a
//! [`Principal`] and confined to its [`MemoryScope`].
//!
//! A memory is a record of its scope: its ACL is the scope's tenant token and owner token
//! (`tenant:acme`, `owner:user:corp/alice`), and owner tokens are conjunctive
//! ([`braid_core::OWNER_PREFIX`]), so the memory is visible to that owner in that tenant and to
//! no one else — not to the tenant's other users, whatever tokens they hold. Its id lies in the
//! tenant's namespace and in the scope's own folder of it
//! (`tenant:acme/memory/<owner digest>/<text digest>`), its `parent` is that folder, and it
//! carries `kind` (keyword), `importance` (1–10), `created` and, with a time to live,
//! `expires` (Unix seconds).
//!
//! - **Recall** ranks as `examples/agent_memory.rs` does: relevance (reciprocal rank fusion of
//!   every leg the index runs) × recency (exponential decay on `created`, halving every
//!   [`DEFAULT_HALF_LIFE`]) × importance (`1 + 0.1 · importance`).
//! - **Duplicates reinforce.** A memory whose normalised text ([`normalise`]) is one already in
//!   the scope — or, when the index has an embedding model, whose embedding has cosine ≥
//!   [`DUPLICATE_COSINE`] with one — is not added: the existing memory gets importance
//!   `max(old, new) + 1` (at most 10), `created` = now and the later expiry, and keeps its id.
//! - **Expiry.** An expired memory (`expires` ≤ now) is never returned: every read filters on
//!   `expires` at query time. It is deleted by the next write into its scope (remember, update
//!   or forget purge the scope's expired memories in the same commit), so an idle scope keeps
//!   its expired records on disk, unreadable, until it is written again.
//! - **Update supersedes.** The old memory is deleted, not kept as history: an agent corrects a
//!   memory because it is wrong, and a wrong memory kept would be recalled again beside its
//!   correction (or need a second filter everywhere). The new text gets its own id.
//!
//! Every method that writes takes the caller's [`Writer`] and leaves the commit to it, so a
//! server commits each call once, under its own write lock.

use std::collections::BTreeSet;

use braid_core::{
    Boosts, Decay, DecayFunction, Error, Filter, Fusion, Mode, Modifier, NumberBoost, Principal, Record, Result,
    SearchRequest,
};
use sha2::{Digest, Sha256};

use crate::{Index, StoredRecord, Writer};

pub use braid_core::{is_memory_id, MEMORY_FOLDER};
/// The keyword field of a memory's kind.
pub const KIND_FIELD: &str = "kind";
/// The numeric field of a memory's importance (1–10).
pub const IMPORTANCE_FIELD: &str = "importance";
/// The numeric field of when a memory was made or last reinforced (Unix seconds).
pub const CREATED_FIELD: &str = "created";
/// The numeric field of when a memory expires (Unix seconds); absent when it does not.
pub const EXPIRES_FIELD: &str = "expires";
/// The kind of a memory written without one.
pub const DEFAULT_KIND: &str = "note";
/// The importance of a memory written without one.
pub const DEFAULT_IMPORTANCE: u8 = 5;
/// The highest importance.
pub const MAX_IMPORTANCE: u8 = 10;
/// The longest memory text, in bytes.
pub const MAX_TEXT_BYTES: usize = 8_192;
/// The longest kind, in bytes.
pub const MAX_KIND_BYTES: usize = 64;
/// The longest time to live: ten years, in seconds.
pub const MAX_TTL_SECONDS: f64 = 10.0 * 365.0 * 86_400.0;
/// The most memories one recall returns.
pub const MAX_RECALL: usize = 50;
/// How long recency takes to halve a memory's weight by default: one day, in seconds.
pub const DEFAULT_HALF_LIFE: f64 = 86_400.0;
/// With an embedding model, a new memory whose embedding has at least this cosine with one of
/// the scope's memories reinforces it instead of being added. Deliberately high: a restatement
/// with a word or two changed reinforces, while a sentence that changes a fact (another number,
/// another name) should stay a memory of its own; merging two facts loses one, keeping a near
/// copy costs a row. Not fitted on data yet.
pub const DUPLICATE_COSINE: f32 = 0.95;
/// The weight of importance in recall: a factor of `1 + IMPORTANCE_WEIGHT · importance`.
pub const IMPORTANCE_WEIGHT: f64 = 0.1;

/// Whose memories a call touches: one tenant and one owner, both held by the principal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryScope {
    tenant: String,
    owner: String,
    folder: String,
}

impl MemoryScope {
    /// The scope of `principal`: its one tenant token and its one owner token.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] when the principal holds no tenant or owner token, or several.
    pub fn of(principal: &Principal) -> Result<MemoryScope> {
        let one = |mut tokens: std::vec::IntoIter<&str>, what: &str| {
            match (tokens.next(), tokens.next()) {
            (Some(t), None) => Ok(t.to_string()),
            _ => Err(Error::invalid_request(format!(
                "a memory scope needs a principal with exactly one {what} token; memories live in the caller's own scope"
            ))),
        }
        };
        let tenant = one(principal.tenants().collect::<Vec<_>>().into_iter(), "tenant")?;
        let owner = one(principal.owners().collect::<Vec<_>>().into_iter(), "owner")?;
        let folder = format!("{tenant}/{MEMORY_FOLDER}/{}", hex(&Sha256::digest(owner.as_bytes())[..16]));
        Ok(MemoryScope { tenant, owner, folder })
    }

    /// The tenant token (`tenant:acme`).
    pub fn tenant(&self) -> &str {
        &self.tenant
    }

    /// The owner token (`owner:…`).
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The folder every memory id of the scope starts with, and every memory's `parent`.
    pub fn folder(&self) -> &str {
        &self.folder
    }

    /// Whether `id` is shaped as a memory of this scope (decided by its shape alone).
    pub fn holds(&self, id: &str) -> bool {
        id.strip_prefix(self.folder.as_str()).is_some_and(|rest| rest.starts_with('/') && rest.len() > 1)
    }

    /// The id of the memory whose normalised text is `normalised`.
    fn id_of(&self, normalised: &str) -> String {
        format!("{}/{}", self.folder, hex(&Sha256::digest(normalised.as_bytes())[..16]))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The text two memories are the same memory by: lowercase, white space collapsed, trailing
/// sentence punctuation dropped.
///
/// ```
/// assert_eq!(braid::memory::normalise("  The van is  parked on level 3. "), "the van is parked on level 3");
/// ```
pub fn normalise(text: &str) -> String {
    let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
    words.join(" ").trim_end_matches(['.', '!', '?', ';', ',', '…']).trim_end().to_string()
}

/// What to remember.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Note {
    /// The memory's text.
    pub text: String,
    /// Its kind (`preference`, `fact`, `task`, …); [`DEFAULT_KIND`] when absent.
    #[serde(default)]
    pub kind: Option<String>,
    /// How important it is, 1 to 10; [`DEFAULT_IMPORTANCE`] when absent.
    #[serde(default)]
    pub importance: Option<u8>,
    /// Seconds until it expires; never when absent.
    #[serde(default)]
    pub ttl_seconds: Option<f64>,
}

impl Note {
    /// A note with this text and nothing else.
    pub fn new(text: impl Into<String>) -> Note {
        Note { text: text.into(), ..Note::default() }
    }

    /// Checks the bounds: a text of 1 to [`MAX_TEXT_BYTES`] bytes, a kind of 1 to
    /// [`MAX_KIND_BYTES`] without control characters, importance 1–10, a finite positive time
    /// to live of at most [`MAX_TTL_SECONDS`].
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] naming the problem.
    pub fn validate(&self) -> Result<()> {
        if self.text.trim().is_empty() {
            return Err(Error::invalid_request("a memory needs a non-empty text"));
        }
        if self.text.len() > MAX_TEXT_BYTES {
            return Err(Error::invalid_request(format!(
                "a memory's text is at most {MAX_TEXT_BYTES} bytes (got {})",
                self.text.len()
            )));
        }
        if let Some(kind) = &self.kind {
            if kind.trim().is_empty() || kind.len() > MAX_KIND_BYTES || kind.chars().any(char::is_control) {
                return Err(Error::invalid_request(format!(
                    "kind must be 1 to {MAX_KIND_BYTES} bytes without control characters"
                )));
            }
        }
        if let Some(i) = self.importance {
            if !(1..=MAX_IMPORTANCE).contains(&i) {
                return Err(Error::invalid_request(format!("importance must be 1 to {MAX_IMPORTANCE} (got {i})")));
            }
        }
        if let Some(ttl) = self.ttl_seconds {
            if !ttl.is_finite() || ttl <= 0.0 || ttl > MAX_TTL_SECONDS {
                return Err(Error::invalid_request(format!(
                    "ttl_seconds must be above 0 and at most {MAX_TTL_SECONDS} (ten years)"
                )));
            }
        }
        Ok(())
    }
}

/// What a recall asks for.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cue {
    /// What to be reminded of. Empty: the scope's memories by recency and importance alone.
    #[serde(default)]
    pub query: String,
    /// Memories wanted, 1 to [`MAX_RECALL`]; 5 when absent.
    #[serde(default = "default_recall_k")]
    pub k: usize,
    /// Only memories of this kind.
    #[serde(default)]
    pub kind: Option<String>,
    /// Seconds in which recency halves a memory's weight; [`DEFAULT_HALF_LIFE`] when absent.
    #[serde(default)]
    pub half_life_seconds: Option<f64>,
}

fn default_recall_k() -> usize {
    5
}

impl Cue {
    /// A cue with this query and the defaults.
    pub fn new(query: impl Into<String>) -> Cue {
        Cue { query: query.into(), k: default_recall_k(), kind: None, half_life_seconds: None }
    }
}

/// A memory as recall, update and remember return it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Recollection {
    /// Its id (what forget and update take).
    pub id: String,
    /// Its text.
    pub text: String,
    /// Its kind.
    pub kind: String,
    /// Its importance, 1 to 10.
    pub importance: u8,
    /// When it was made or last reinforced (Unix seconds).
    pub created: f64,
    /// When it expires (Unix seconds), if it does.
    pub expires: Option<f64>,
    /// Its recall score: relevance × recency × importance (0 outside a recall).
    pub score: f32,
}

impl Recollection {
    fn of(record: &StoredRecord, score: f32) -> Recollection {
        let importance = record.numbers.get(IMPORTANCE_FIELD).copied().unwrap_or(f64::from(DEFAULT_IMPORTANCE));
        Recollection {
            id: record.id.clone(),
            text: record.body.clone(),
            kind: record.keywords.get(KIND_FIELD).and_then(|k| k.first()).cloned().unwrap_or_default(),
            importance: importance.clamp(1.0, f64::from(MAX_IMPORTANCE)) as u8,
            created: record.numbers.get(CREATED_FIELD).copied().unwrap_or(0.0),
            expires: record.numbers.get(EXPIRES_FIELD).copied(),
            score,
        }
    }
}

/// What a write of a memory did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Remembered {
    /// The memory as stored now.
    pub memory: Recollection,
    /// Whether an existing memory was reinforced instead of a new one added.
    pub reinforced: bool,
    /// The memories of the scope that had expired and were deleted by this write.
    pub purged: usize,
}

/// The memory operations over one index (see the module documentation).
#[derive(Clone)]
pub struct Memory {
    index: Index,
}

impl Memory {
    /// Memory over `index`, whose schema must have the keyword field `kind` and the numeric
    /// fields `importance`, `created` and `expires` (the default schema has them).
    ///
    /// # Errors
    /// [`Error::UnknownField`] naming a missing field.
    pub fn new(index: &Index) -> Result<Memory> {
        let schema = &index.config().schema;
        if !schema.keyword_fields.contains(KIND_FIELD) {
            return Err(Error::UnknownField { name: KIND_FIELD.to_string() });
        }
        for field in [IMPORTANCE_FIELD, CREATED_FIELD, EXPIRES_FIELD] {
            if !schema.numeric_fields.contains(field) {
                return Err(Error::UnknownField { name: field.to_string() });
            }
        }
        Ok(Memory { index: index.clone() })
    }

    /// The filter of the scope's live memories at `now`.
    fn live(scope: &MemoryScope, now: f64) -> Filter {
        Filter::all([
            Filter::Parent { id: scope.folder.clone() },
            Filter::not(Filter::Range { field: EXPIRES_FIELD.to_string(), min: None, max: Some(now) }),
        ])
    }

    /// The memory `id` of `principal`'s scope, if it exists, is visible and is live at `now`.
    fn live_memory(
        &self,
        principal: &Principal,
        scope: &MemoryScope,
        id: &str,
        now: f64,
    ) -> Result<Option<StoredRecord>> {
        if !scope.holds(id) {
            return Ok(None);
        }
        let record = self.index.record(id, principal)?;
        Ok(record.filter(|r| {
            r.parent.as_deref() == Some(scope.folder.as_str())
                && r.numbers.get(EXPIRES_FIELD).is_none_or(|&expires| expires > now)
        }))
    }

    /// Deletes the scope's memories expired at `now`, but `keep`; returns how many.
    fn purge(
        &self,
        writer: &mut Writer,
        principal: &Principal,
        scope: &MemoryScope,
        now: f64,
        keep: &BTreeSet<String>,
    ) -> Result<usize> {
        let expired = Filter::all([
            Filter::Parent { id: scope.folder.clone() },
            Filter::Range { field: EXPIRES_FIELD.to_string(), min: None, max: Some(now) },
        ]);
        let mut purged = 0;
        for id in self.index.searcher().ids_where(principal, &expired)? {
            if scope.holds(&id) && !keep.contains(&id) {
                writer.delete(&id)?;
                purged += 1;
            }
        }
        Ok(purged)
    }

    /// The scope's live memory `fresh` (a new memory's record) duplicates, if any: the same
    /// normalised text, or, with an embedding model, cosine ≥ [`DUPLICATE_COSINE`]; `skip` is
    /// never a duplicate. Beside it, `fresh`'s embedding when the writer may store it as it is
    /// (one passage, in a language the model covers), so a memory is embedded once.
    fn duplicate(
        &self,
        principal: &Principal,
        scope: &MemoryScope,
        fresh: &Record,
        now: f64,
        skip: Option<&str>,
    ) -> Result<(Option<StoredRecord>, Option<Vec<f32>>)> {
        if skip != Some(fresh.id()) {
            if let Some(found) = self.live_memory(principal, scope, fresh.id(), now)? {
                return Ok((Some(found), None));
            }
        }
        let Some(embedder) = self.index.embedder() else { return Ok((None, None)) };
        let passages = fresh.passages(self.index.config().passages.as_ref());
        let Some(vector) = embedder.embed(&[passages[0].as_str()])?.into_iter().next() else { return Ok((None, None)) };
        let searcher = self.index.searcher();
        let request = SearchRequest::new(&fresh.body, principal.clone())
            .mode(Mode::Semantic)
            .vector(vector.clone())
            .k(2)
            .filter(Self::live(scope, now));
        for hit in searcher.search(&request)?.hits {
            if skip == Some(hit.id.as_str()) {
                continue;
            }
            let Some(stored) = searcher.vector(&hit.id, principal)? else { continue };
            let cosine: f32 = stored.iter().zip(&vector).map(|(a, b)| a * b).sum();
            if cosine >= DUPLICATE_COSINE {
                return Ok((self.live_memory(principal, scope, &hit.id, now)?, None));
            }
        }
        let reusable = passages.len() == 1 && embedder.covers(fresh.language());
        Ok((None, reusable.then_some(vector)))
    }

    fn record(
        scope: &MemoryScope,
        id: String,
        text: &str,
        kind: &str,
        importance: u8,
        created: f64,
        expires: Option<f64>,
    ) -> Result<Record> {
        let mut record = Record::new(id)
            .body(text.trim())
            .keyword(KIND_FIELD, kind.trim())
            .number(IMPORTANCE_FIELD, f64::from(importance))
            .number(CREATED_FIELD, created)
            .parent(scope.folder.clone())
            .acl([scope.tenant.clone(), scope.owner.clone()]);
        if let Some(expires) = expires {
            record = record.number(EXPIRES_FIELD, expires);
        }
        record.validate()?;
        Ok(record)
    }

    /// Writes `note` into the scope, or reinforces the memory it duplicates; `skip` (the memory
    /// an update replaces) is never reinforced; `inherit` gives the kind and importance a note
    /// without them takes.
    #[allow(clippy::too_many_arguments)]
    fn store(
        &self,
        writer: &mut Writer,
        principal: &Principal,
        scope: &MemoryScope,
        note: &Note,
        now: f64,
        skip: Option<&str>,
        inherit: Option<(&str, u8)>,
    ) -> Result<Remembered> {
        note.validate()?;
        if !now.is_finite() {
            return Err(Error::invalid_request("the time must be a finite number of seconds"));
        }
        let expires = note.ttl_seconds.map(|ttl| now + ttl);
        let (kind, importance) = inherit.unwrap_or((DEFAULT_KIND, DEFAULT_IMPORTANCE));
        let fresh = Self::record(
            scope,
            scope.id_of(&normalise(&note.text)),
            &note.text,
            note.kind.as_deref().unwrap_or(kind),
            note.importance.unwrap_or(importance),
            now,
            expires,
        )?;
        let (record, reinforced) = match self.duplicate(principal, scope, &fresh, now, skip)? {
            (Some(old), _) => {
                let old = Recollection::of(&old, 0.0);
                let importance = old.importance.max(note.importance.unwrap_or(0)).saturating_add(1).min(MAX_IMPORTANCE);
                let expires = match (old.expires, expires) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    _ => None,
                };
                let kind = note.kind.as_deref().unwrap_or(&old.kind);
                (Self::record(scope, old.id.clone(), &old.text, kind, importance, now, expires)?, true)
            }
            (None, Some(vector)) => (fresh.vector(vector), false),
            (None, None) => (fresh, false),
        };
        let purged = self.purge(writer, principal, scope, now, &BTreeSet::from([record.id.clone()]))?;
        writer.upsert(&record)?;
        Ok(Remembered { memory: Recollection::of(&StoredRecord::from_record(&record), 0.0), reinforced, purged })
    }

    /// Remembers `note` in `principal`'s scope at `now` (Unix seconds), or reinforces the
    /// memory it duplicates; the scope's expired memories are purged in the same write.
    /// Commit `writer` to make it visible.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] for a principal without exactly one tenant and owner, or a note
    /// out of bounds; the writer's and the embedder's errors.
    pub fn remember(&self, writer: &mut Writer, principal: &Principal, note: &Note, now: f64) -> Result<Remembered> {
        let scope = MemoryScope::of(principal)?;
        self.store(writer, principal, &scope, note, now, None, None)
    }

    /// The memories of `principal`'s scope live at `now` that best answer `cue`: relevance ×
    /// recency × importance, best first. An empty query ranks them by recency × importance.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] for a principal without exactly one tenant and owner, `k`
    /// outside 1 to [`MAX_RECALL`] or a half-life that is not a positive number; the search's
    /// errors.
    pub fn recall(&self, principal: &Principal, cue: &Cue, now: f64) -> Result<Vec<Recollection>> {
        let scope = MemoryScope::of(principal)?;
        if cue.k == 0 || cue.k > MAX_RECALL {
            return Err(Error::invalid_request(format!("k must be 1 to {MAX_RECALL} (got {})", cue.k)));
        }
        let half_life = cue.half_life_seconds.unwrap_or(DEFAULT_HALF_LIFE);
        if !half_life.is_finite() || half_life <= 0.0 || !now.is_finite() {
            return Err(Error::invalid_request("half_life_seconds must be a positive number"));
        }
        let mut filter = Self::live(&scope, now);
        if let Some(kind) = &cue.kind {
            filter = Filter::all([
                filter,
                Filter::Keyword { field: KIND_FIELD.to_string(), value: kind.trim().to_string() },
            ]);
        }
        let searcher = self.index.searcher();
        if cue.query.trim().is_empty() {
            let recency = |created: f64| 0.5f64.powf((now - created).max(0.0) / half_life);
            let mut all: Vec<Recollection> = searcher
                .records_where(principal, &filter)?
                .iter()
                .map(|r| {
                    let mut m = Recollection::of(r, 0.0);
                    m.score = (recency(m.created) * (1.0 + IMPORTANCE_WEIGHT * f64::from(m.importance))) as f32;
                    m
                })
                .collect();
            all.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
            all.truncate(cue.k);
            return Ok(all);
        }
        let boosts = Boosts::default()
            .decay(Decay::new(CREATED_FIELD, DecayFunction::Exp, now, half_life))
            .number(NumberBoost::new(IMPORTANCE_FIELD, IMPORTANCE_WEIGHT, Modifier::Linear));
        let request = SearchRequest::new(cue.query.as_str(), principal.clone())
            .mode(Mode::Hybrid)
            .fusion(Fusion::Rrf)
            .k(cue.k)
            .feedback(false)
            .filter(filter)
            .boosts(boosts);
        let response = searcher.search(&request)?;
        let mut out = Vec::with_capacity(response.hits.len());
        for hit in response.hits {
            if let Some(record) = searcher.record(&hit.id, principal)? {
                out.push(Recollection::of(&record, hit.score));
            }
        }
        Ok(out)
    }

    /// Forgets memory `id` of `principal`'s scope (and purges the scope's expired memories).
    /// Returns whether it was there: `false` alike for an id that never existed, one that
    /// expired, and one of another scope — which is never touched.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] for a principal without exactly one tenant and owner; the
    /// writer's errors.
    pub fn forget(&self, writer: &mut Writer, principal: &Principal, id: &str, now: f64) -> Result<bool> {
        let scope = MemoryScope::of(principal)?;
        let found = self.live_memory(principal, &scope, id, now)?.is_some();
        self.purge(writer, principal, &scope, now, &BTreeSet::new())?;
        if found {
            writer.delete(id)?;
        }
        Ok(found)
    }

    /// Forgets every live memory of kind `kind` in `principal`'s scope (and purges the scope's
    /// expired memories); returns the ids forgotten.
    ///
    /// # Errors
    /// As [`Memory::forget`].
    pub fn forget_kind(&self, writer: &mut Writer, principal: &Principal, kind: &str, now: f64) -> Result<Vec<String>> {
        let scope = MemoryScope::of(principal)?;
        let filter = Filter::all([
            Self::live(&scope, now),
            Filter::Keyword { field: KIND_FIELD.to_string(), value: kind.trim().to_string() },
        ]);
        let ids: Vec<String> =
            self.index.searcher().ids_where(principal, &filter)?.into_iter().filter(|id| scope.holds(id)).collect();
        self.purge(writer, principal, &scope, now, &BTreeSet::new())?;
        for id in &ids {
            writer.delete(id)?;
        }
        Ok(ids)
    }

    /// Supersedes memory `id` of `principal`'s scope with `note`: the old memory is deleted and
    /// the note remembered (taking the old kind and importance unless it gives its own), or,
    /// when it duplicates another memory of the scope, that one reinforced. `None`, and nothing
    /// written, when `id` is not a live memory of the scope (whether it never existed, expired,
    /// or is another scope's).
    ///
    /// # Errors
    /// As [`Memory::remember`].
    pub fn update(
        &self,
        writer: &mut Writer,
        principal: &Principal,
        id: &str,
        note: &Note,
        now: f64,
    ) -> Result<Option<Remembered>> {
        let scope = MemoryScope::of(principal)?;
        note.validate()?;
        let Some(old) = self.live_memory(principal, &scope, id, now)? else { return Ok(None) };
        let old = Recollection::of(&old, 0.0);
        let same_id = scope.id_of(&normalise(&note.text)) == old.id;
        if same_id {
            // The same memory, maybe with another kind, importance or expiry: rewritten in place.
            let importance = note.importance.unwrap_or(old.importance);
            let kind = note.kind.as_deref().unwrap_or(&old.kind);
            let expires = match note.ttl_seconds {
                Some(ttl) => Some(now + ttl),
                None => old.expires,
            };
            let record = Self::record(&scope, old.id.clone(), &note.text, kind, importance, now, expires)?;
            let purged = self.purge(writer, principal, &scope, now, &BTreeSet::from([old.id.clone()]))?;
            writer.upsert(&record)?;
            let memory = Recollection::of(&StoredRecord::from_record(&record), 0.0);
            return Ok(Some(Remembered { memory, reinforced: false, purged }));
        }
        let remembered =
            self.store(writer, principal, &scope, note, now, Some(&old.id), Some((&old.kind, old.importance)))?;
        writer.delete(&old.id)?;
        Ok(Some(remembered))
    }
}
