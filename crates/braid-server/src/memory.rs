//! Memory over the server, shared by the REST routes (`/v1/memories…`) and the MCP tools
//! (`remember`, `recall`, `forget`, `update`): both call these [`Engine`] methods, which call
//! [`braid::memory::Memory`].
//!
//! A caller's memories live in its **scope**: its one tenant and its one owner token, which
//! the server grants from the verified identity (`owner:token:<name>` for a static token,
//! `owner:user:<namespace>/<user>` for an OAuth token with a user claim). Owner tokens are
//! conjunctive, so a memory is visible to its owner in its tenant and to no other caller of
//! that tenant. Writing (remember, update, forget) needs the write right, as record writes do;
//! recalling needs only the scope. An id that is not a live memory of the caller's scope —
//! missing, expired, malformed or another caller's — gets one answer: [`NOT_FOUND`].

use std::time::{SystemTime, UNIX_EPOCH};

use braid::memory::{Cue, Memory, MemoryScope, Note, Recollection};
use braid::{Index, Principal};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::api::Engine;
use super::write::WriteFailure;

/// The one answer for an id that is not a live memory of the caller's scope.
pub const NOT_FOUND: &str = "no memory with this id in your scope";

/// Who calls: the principal its credentials stand for, and whether it may write.
#[derive(Debug, Clone, Copy)]
pub struct Who<'a> {
    /// The caller's principal.
    pub principal: &'a Principal,
    /// Whether the caller has the write right.
    pub write: bool,
}

impl<'a> From<&'a Principal> for Who<'a> {
    /// A caller without the write right.
    fn from(principal: &'a Principal) -> Who<'a> {
        Who { principal, write: false }
    }
}

/// A memory written (remember, update): the memory as stored, whether an existing one was
/// reinforced, how many expired memories of the scope the write purged, the memory it
/// replaced (update) and the commit that holds it.
#[derive(Debug, Serialize)]
pub struct MemoryWritten {
    /// The memory as stored now.
    pub memory: Recollection,
    /// Whether an existing memory was reinforced instead of a new one added.
    pub reinforced: bool,
    /// Expired memories of the scope deleted by this write.
    pub purged: usize,
    /// The id an update superseded (deleted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced: Option<String>,
    /// The commit now served, which holds the write (`null` for an index in memory, or where
    /// nothing was written).
    pub commit: Option<String>,
}

/// Memories forgotten.
#[derive(Debug, Serialize)]
pub struct Forgotten {
    /// The ids deleted.
    pub ids: Vec<String>,
    /// The commit now served, which holds the deletes (`null` for an index in memory, or
    /// where nothing was forgotten).
    pub commit: Option<String>,
}

/// What `POST /v1/memories/forget` and the `forget` tool take: one id, or a kind.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForgetParams {
    /// One memory's id.
    #[serde(default)]
    pub id: Option<String>,
    /// Every memory of this kind.
    #[serde(default)]
    pub kind: Option<String>,
}

/// What `PUT /v1/memories/{id}` takes beside the id, and the `update` tool with it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateParams {
    /// The memory superseded.
    pub id: String,
    /// Its new text.
    pub text: String,
    /// A new kind; the old one when absent.
    #[serde(default)]
    pub kind: Option<String>,
    /// A new importance; the old one when absent.
    #[serde(default)]
    pub importance: Option<u8>,
    /// A new time to live, in seconds from now; the old expiry when absent.
    #[serde(default)]
    pub ttl_seconds: Option<f64>,
}

impl UpdateParams {
    /// The note it carries.
    pub fn note(&self) -> Note {
        Note {
            text: self.text.clone(),
            kind: self.kind.clone(),
            importance: self.importance,
            ttl_seconds: self.ttl_seconds,
        }
    }
}

fn now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// The caller's scope, or why it has none (403).
fn scope(who: Who<'_>, writing: bool) -> Result<MemoryScope, WriteFailure> {
    if writing && !who.write {
        return Err(WriteFailure::Forbidden(
            "this token may not write memories (a token with write = true, or the OAuth write scope)".into(),
        ));
    }
    MemoryScope::of(who.principal).map_err(|_| {
        WriteFailure::Forbidden(
            "memories need a caller identity: a token of exactly one tenant whose issuer names its user \
             (static tokens always do; OAuth tokens need the issuer's user_claim)"
                .into(),
        )
    })
}

fn memory(index: &Index) -> Result<Memory, WriteFailure> {
    Memory::new(index).map_err(|e| {
        WriteFailure::BadRequest(format!(
            "this index cannot hold memories ({e}): it was created before the memory fields (kind, importance, \
             expires) were in the default schema; re-create it with `braid index`"
        ))
    })
}

impl Engine {
    /// Remembers `note` in the caller's scope (or reinforces its duplicate), in one commit.
    ///
    /// # Errors
    /// [`WriteFailure::Forbidden`] without the write right or a scope; `BadRequest` for a note
    /// out of bounds; `Busy` when another process holds the writer.
    pub fn remember(&self, who: Who<'_>, note: &Note) -> Result<MemoryWritten, WriteFailure> {
        scope(who, true)?;
        let index = self.index();
        let memory = memory(&index)?;
        let (remembered, commit) = self.writes().run(|w| Ok(memory.remember(w, who.principal, note, now())?))?;
        Ok(MemoryWritten {
            memory: remembered.memory,
            reinforced: remembered.reinforced,
            purged: remembered.purged,
            replaced: None,
            commit,
        })
    }

    /// The caller's live memories that best answer `cue`.
    ///
    /// # Errors
    /// [`WriteFailure::Forbidden`] without a scope; `BadRequest` for a cue out of bounds.
    pub fn recall(&self, who: Who<'_>, cue: &Cue) -> Result<Vec<Recollection>, WriteFailure> {
        scope(who, false)?;
        let index = self.index();
        Ok(memory(&index)?.recall(who.principal, cue, now())?)
    }

    /// Forgets one memory of the caller's scope, or every one of a kind.
    ///
    /// # Errors
    /// [`WriteFailure::NotFound`] ([`NOT_FOUND`]) for an id that is not a live memory of the
    /// scope; `BadRequest` unless exactly one of `id` and `kind` is given; as
    /// [`Engine::remember`].
    pub fn forget(&self, who: Who<'_>, params: &ForgetParams) -> Result<Forgotten, WriteFailure> {
        scope(who, true)?;
        let index = self.index();
        let memory = memory(&index)?;
        let (ids, commit) = match (&params.id, &params.kind) {
            (Some(id), None) => self.writes().run(|w| {
                if memory.forget(w, who.principal, id, now())? {
                    Ok(vec![id.clone()])
                } else {
                    Err(WriteFailure::NotFound(NOT_FOUND.into()))
                }
            })?,
            (None, Some(kind)) => self.writes().run(|w| Ok(memory.forget_kind(w, who.principal, kind, now())?))?,
            (Some(_), Some(_)) => {
                return Err(WriteFailure::BadRequest("forget takes either `id` or `kind`, not both".into()))
            }
            (None, None) => return Err(WriteFailure::BadRequest("forget needs an `id` or a `kind`".into())),
        };
        Ok(Forgotten { ids, commit })
    }

    /// Supersedes memory `params.id` of the caller's scope with the new text (the old memory
    /// is deleted).
    ///
    /// # Errors
    /// [`WriteFailure::NotFound`] ([`NOT_FOUND`]) for an id that is not a live memory of the
    /// scope; as [`Engine::remember`].
    pub fn update(&self, who: Who<'_>, params: &UpdateParams) -> Result<MemoryWritten, WriteFailure> {
        scope(who, true)?;
        let index = self.index();
        let memory = memory(&index)?;
        let note = params.note();
        let (remembered, commit) = self.writes().run(|w| {
            memory.update(w, who.principal, &params.id, &note, now())?.ok_or(WriteFailure::NotFound(NOT_FOUND.into()))
        })?;
        let replaced = (remembered.memory.id != params.id).then(|| params.id.clone());
        Ok(MemoryWritten {
            memory: remembered.memory,
            reinforced: remembered.reinforced,
            purged: remembered.purged,
            replaced,
            commit,
        })
    }
}

/// The text a model reads for a written memory.
pub fn written_text(w: &MemoryWritten) -> String {
    let what = if w.reinforced { "Reinforced an existing memory" } else { "Remembered" };
    let mut text = format!("{what} (importance {}): id {}", w.memory.importance, w.memory.id);
    if let Some(old) = &w.replaced {
        text.push_str(&format!("; it supersedes {old}, which is forgotten"));
    }
    text
}

/// The text a model reads for recalled memories.
pub fn recalled_text(memories: &[Recollection]) -> String {
    if memories.is_empty() {
        return "No memories match.".to_string();
    }
    let mut text = format!("{} memor{}:", memories.len(), if memories.len() == 1 { "y" } else { "ies" });
    for (i, m) in memories.iter().enumerate() {
        text.push_str(&format!("\n[{}] ({}, importance {}) {} — id: {}", i + 1, m.kind, m.importance, m.text, m.id));
    }
    text
}

/// The JSON Schema of a memory as the tools and routes return it.
pub fn memory_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": { "type": "string" },
            "text": { "type": "string" },
            "kind": { "type": "string" },
            "importance": { "type": "integer", "minimum": 1, "maximum": 10 },
            "created": { "type": "number", "description": "Unix seconds: made or last reinforced." },
            "expires": { "type": ["number", "null"], "description": "Unix seconds, or null: never." },
            "score": { "type": "number" }
        },
        "required": ["id", "text", "kind", "importance", "created", "score"]
    })
}

/// The input schema of `remember` (and the body of `POST /v1/memories`).
pub fn note_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "text": { "type": "string", "minLength": 1, "maxLength": braid::memory::MAX_TEXT_BYTES,
                      "description": "What to remember, in one or two sentences." },
            "kind": { "type": "string", "maxLength": braid::memory::MAX_KIND_BYTES,
                      "description": "preference, fact, task, … (default: note)." },
            "importance": { "type": "integer", "minimum": 1, "maximum": 10,
                            "description": "1 (trivial) to 10 (vital); default 5." },
            "ttl_seconds": { "type": "number", "exclusiveMinimum": 0,
                             "maximum": braid::memory::MAX_TTL_SECONDS,
                             "description": "Forget it after this many seconds (default: never)." }
        },
        "required": ["text"],
        "additionalProperties": false
    })
}

/// The input schema of `recall` (and the body of `POST /v1/memories/recall`).
pub fn cue_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": { "type": "string", "default": "",
                       "description": "What to be reminded of; empty: the most recent and important memories." },
            "k": { "type": "integer", "minimum": 1, "maximum": braid::memory::MAX_RECALL, "default": 5 },
            "kind": { "type": "string", "description": "Only memories of this kind." },
            "half_life_seconds": { "type": "number", "exclusiveMinimum": 0,
                                   "description": "Recency halves a memory's weight in this time (default one day)." }
        },
        "additionalProperties": false
    })
}

/// The input schema of `forget` (and the body of `POST /v1/memories/forget`).
pub fn forget_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": { "type": "string", "description": "The id of one memory." },
            "kind": { "type": "string", "description": "Forget every memory of this kind." }
        },
        "additionalProperties": false
    })
}

/// The input schema of `update`.
pub fn update_schema() -> Value {
    let mut schema = note_schema();
    schema["properties"]["id"] = json!({ "type": "string", "description": "The id of the memory to supersede." });
    schema["required"] = json!(["id", "text"]);
    schema
}

/// The `structuredContent` of `remember` and `update`.
pub fn written_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "memory": memory_schema(),
            "reinforced": { "type": "boolean" },
            "purged": { "type": "integer", "minimum": 0 },
            "replaced": { "type": "string" },
            "commit": { "type": ["string", "null"] }
        },
        "required": ["memory", "reinforced", "purged"]
    })
}

/// The `structuredContent` of `recall`.
pub fn recalled_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "memories": { "type": "array", "items": memory_schema() } },
        "required": ["memories"]
    })
}

/// The `structuredContent` of `forget`.
pub fn forgotten_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "ids": { "type": "array", "items": { "type": "string" } },
            "commit": { "type": ["string", "null"] }
        },
        "required": ["ids"]
    })
}
