//! Writes over the server: `POST /v1/records`, `DELETE /v1/records/{id}` and
//! `POST /v1/records/delete`, for callers with the write right.
//!
//! A writer is confined to its tenant's **namespace**: every id it names is
//! `tenant:<name>/<id>` (a short id gets the prefix; a full id must carry the writer's own), and
//! every record it writes carries its tenant token. The library refuses an id in a namespace on
//! any record that is not of that tenant alone ([`braid::id_tenant`]), whichever way it was
//! written, so a writer cannot name another tenant's record: such an id is refused for its
//! shape, before the index is read, and the answer is the same whether the record exists or not.
//! Within the namespace every record but other callers' memories is visible to the writer (its
//! tenant token admits the whole tenant, and the library refuses an owner token on a namespaced
//! id outside the memory folder; a memory also needs its owner's), and answers never say
//! whether an id existed before (deletes are idempotent). Ids in the namespace's memory
//! folder (`tenant:<name>/memory/…`) are refused by their shape: only the memory routes write
//! them ([`super::memory`]).
//!
//! A record's `acl` may only name tokens the writer holds, never a reserved or an owner token
//! (a record is its tenant's: the tenant token it always carries admits every caller of the
//! tenant, and a note only its owner reads is a memory; `Record::validate` refuses an owner
//! token on a namespaced id, as for every way of writing); its `tenant`, when given, must be
//! the writer's.

use std::time::Duration;

use braid::ingest::beir::parse_document;
use braid::{id_tenant, Batch, GroupCommit, GroupCommitOptions, GroupCommitStats, Index, Principal, Record, Writer};
use serde_json::Value;

/// The most records one request may write or delete.
pub const MAX_BATCH: usize = 1000;

/// Why a write was refused, in words the caller may read.
#[derive(Debug, PartialEq, Eq)]
pub enum WriteFailure {
    /// The caller may not write at all (403): no write right, or not exactly one tenant.
    Forbidden(String),
    /// The request is malformed or names what the caller may not write (400).
    BadRequest(String),
    /// What the caller named is not there, or not its to see: one answer for both (404).
    NotFound(String),
    /// Another process (`braid index`) holds the index's writer (503, retry).
    Busy,
    /// Something broke on the server; details are in its log only (500).
    Internal,
}

impl WriteFailure {
    /// The message for the caller.
    pub fn message(&self) -> String {
        match self {
            WriteFailure::Forbidden(m) | WriteFailure::BadRequest(m) | WriteFailure::NotFound(m) => m.clone(),
            WriteFailure::Busy => "another writer holds the index; try again shortly".to_string(),
            WriteFailure::Internal => "internal error (see the server's log)".to_string(),
        }
    }
}

impl From<braid::Error> for WriteFailure {
    fn from(e: braid::Error) -> Self {
        match e {
            braid::Error::LockBusy { .. } => WriteFailure::Busy,
            e if e.is_user_error() => WriteFailure::BadRequest(e.to_string()),
            e => {
                tracing::error!(target: "braid::serve", error = %e, "write failed");
                WriteFailure::Internal
            }
        }
    }
}

/// What a write did: the commit that holds it and the ids it wrote or deleted, as stored.
#[derive(Debug, serde::Serialize)]
pub struct Written {
    /// The commit now served, which holds the write; `null` for an index in memory, and for a
    /// write that changed nothing (records as they were, nothing matched), which made no
    /// commit (the one served then would say when others last wrote).
    pub commit: Option<String>,
    /// The ids, in the order given, with the namespace prefix.
    pub ids: Vec<String>,
}

/// The writer's namespace: its one tenant token (`tenant:acme`).
///
/// # Errors
/// [`WriteFailure::Forbidden`] for a principal with no tenant or several.
pub fn namespace(principal: &Principal) -> Result<String, WriteFailure> {
    let mut tenants = principal.tenants();
    match (tenants.next(), tenants.next()) {
        // A tenant whose name its ids would not read back as (`tenant:acme/x`) could name
        // another tenant's ids (`tenant:acme/x/1` is `tenant:acme`'s).
        (Some(tenant), None) if tenant.strip_prefix(braid::TENANT_PREFIX).is_some_and(braid::is_tenant_name) => {
            Ok(tenant.to_string())
        }
        (Some(tenant), None) => Err(WriteFailure::Forbidden(format!(
            "{tenant:?} is not a tenant's name (no whitespace, ',' or '/'), so it has no namespace to write in"
        ))),
        _ => Err(WriteFailure::Forbidden(
            "writing needs a token of exactly one tenant: records are written in their tenant's namespace".into(),
        )),
    }
}

/// The stored id of a requested `id`: `tenant:acme/<id>` for a short id; a full id must lie in
/// `namespace` already. Decided from the id's shape alone, never from the index.
///
/// # Errors
/// [`WriteFailure::BadRequest`] for an empty id, or one in another namespace or malformed.
pub fn stored_id(namespace: &str, id: &str) -> Result<String, WriteFailure> {
    if id.trim().is_empty() {
        return Err(WriteFailure::BadRequest("empty id".into()));
    }
    // What no record's id may hold (`Record::validate`), refused for a delete too.
    if id.chars().any(char::is_control) {
        return Err(WriteFailure::BadRequest("id contains control characters".into()));
    }
    let stored = if !id.starts_with(braid::TENANT_PREFIX) {
        let stored = format!("{namespace}/{id}");
        if id_tenant(&stored) != Some(namespace) {
            return Err(WriteFailure::BadRequest(format!("{namespace:?} is not a namespace ids can be written in")));
        }
        stored
    } else {
        match id_tenant(id) {
            Some(owner) if owner == namespace => id.to_string(),
            _ => {
                return Err(WriteFailure::BadRequest(format!(
                    "id {id:?} is outside this token's namespace: give a short id, or one starting with {namespace}/"
                )))
            }
        }
    };
    // Memories are written through the memory routes only, which confine each to its owner's
    // scope: a record write never names one, whoever's it is and whether it exists.
    if braid::memory::is_memory_id(&stored) {
        return Err(WriteFailure::BadRequest(format!(
            "ids under {namespace}/{}/ are memories: write them with /v1/memories",
            braid::memory::MEMORY_FOLDER
        )));
    }
    Ok(stored)
}

/// The record to store for one requested document (a JSON object as a line of a JSONL corpus:
/// `_id`, `title`, `text`, `acl` or `tenant`, `metadata`; `vector` optional), named `name` in
/// errors.
///
/// # Errors
/// [`WriteFailure::BadRequest`] for a malformed document, an id outside the namespace, a tenant
/// other than the writer's, or an ACL token the writer does not hold.
pub fn admit(
    index: &Index,
    principal: &Principal,
    namespace: &str,
    name: &str,
    mut document: Value,
) -> Result<Record, WriteFailure> {
    let object = document
        .as_object_mut()
        .ok_or_else(|| WriteFailure::BadRequest(format!("{name}: a record must be a JSON object")))?;
    let vector = match object.remove("vector") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            serde_json::from_value::<Vec<f32>>(value)
                .map_err(|_| WriteFailure::BadRequest(format!("{name}: `vector` must be an array of numbers")))?,
        ),
    };
    // Whether the index holds vectors, and their dimension, is its operator's setting: the
    // first vector written into an index without them would switch the semantic leg on for
    // every caller and fix the dimension every other tenant's vectors must have.
    if vector.is_some() && !index.has_semantic() {
        return Err(WriteFailure::BadRequest(format!(
            "{name}: this index holds no vectors, so a record cannot bring one (its operator sets vectors \
             up: `braid index --model`, `--vectors` or `--vector-field`)"
        )));
    }
    let id = match object.get("_id") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => return Err(WriteFailure::BadRequest(format!("{name}: `_id` must be a string or a number"))),
    };
    let stored = stored_id(namespace, &id)?;
    // Read as the short id: a full one is the writer's own, and its tenant token is added
    // below, which the document need not give.
    let short = &stored[namespace.len() + 1..];
    object.insert("_id".into(), Value::String(short.to_string()));
    let bytes = serde_json::to_vec(&document).map_err(|_| WriteFailure::Internal)?;
    let mut record = parse_document(name, &bytes, &index.config().schema)?.record;
    record.id = stored;
    let mut acl = Vec::with_capacity(record.acl.len() + 1);
    for token in &record.acl {
        let token = token.trim();
        if token.starts_with(braid::TENANT_PREFIX) {
            if token != namespace {
                return Err(WriteFailure::BadRequest(format!(
                    "{name}: records are written in this token's tenant ({namespace}), not {token}"
                )));
            }
        } else if !principal.has(token) {
            return Err(WriteFailure::BadRequest(format!(
                "{name}: the ACL token {token:?} is not held by this token, so it may not grant it"
            )));
        }
        acl.push(token.to_string());
    }
    if !acl.iter().any(|t| t == namespace) {
        acl.push(namespace.to_string());
    }
    record.acl = acl;
    if let Some(vector) = vector {
        record = record.vector(vector);
    }
    record.validate()?;
    Ok(record)
}

/// How long the server keeps its writer open after the last write: long enough that a stream
/// of writes shares one writer (whose background merges then land), short enough that another
/// process (`braid index`) finds the index free soon after the writes stop.
pub const WRITER_IDLE: Duration = Duration::from_secs(5);

/// The server's one writer, kept open between writes and shared by every write route: record
/// writes share commits ([`braid::GroupCommit`]), memory writes take the same writer one commit
/// at a time, and none fails for a busy lock of its own server.
///
/// Record writes that arrive while a commit runs are committed together in the next one, each
/// request answered once the commit holding its records is served: at 1M records a commit
/// costs about a core for 20–35 ms whatever it holds, so one commit per request could not
/// keep up with many small writes (docs/scale.md). A request's records are all or nothing: a
/// bad record fails its own request alone, never the others of its group.
///
/// A writer opened and dropped per request, as before, cost its opening on every write and
/// abandoned the segment merges each commit started (tantivy drops a merge that ends after its
/// writer), so segments piled up and every commit cost more than the one before: a one-record
/// REST write took 77 ms on a fresh index of 1,000 records and 228 ms after 300 memory
/// commits. The writer stays open while writes come and is closed, its merges let finish,
/// once it has been idle for [`WRITER_IDLE`] ([`WriteLock::release_idle`]); while it is open,
/// another process's writer gets a busy lock, and the index serves this writer's commits as
/// they land.
pub struct WriteLock(GroupCommit);

impl std::fmt::Debug for WriteLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("WriteLock").field(&self.0).finish()
    }
}

impl WriteLock {
    /// The writes to `index`, committed as `options` say (a leader waiting
    /// [`GroupCommitOptions::commit_delay`] for more requests, zero: at once).
    pub fn new(index: Index, options: GroupCommitOptions) -> WriteLock {
        WriteLock(GroupCommit::with_options(index, options))
    }

    /// Counts of the commits and write requests so far.
    pub fn stats(&self) -> GroupCommitStats {
        self.0.stats()
    }

    /// Upserts `records` and deletes `deletes` (stored ids) in a commit shared with the writes
    /// that arrived meanwhile, which the index serves before this returns: a search after the
    /// answer sees the write. Returns that commit.
    ///
    /// # Errors
    /// [`WriteFailure::Busy`] when another process holds the writer; the library's user errors
    /// as [`WriteFailure::BadRequest`] (nothing of this request is committed then, and the
    /// other requests of its group are not affected); [`WriteFailure::Internal`] when the
    /// group's commit failed.
    pub fn write(&self, records: Vec<Record>, deletes: Vec<String>) -> Result<Option<String>, WriteFailure> {
        Ok(self.0.write(Batch { upserts: records, deletes })?.commit)
    }

    /// Runs `work` with the index's writer and commits what it wrote (nothing when it wrote
    /// nothing), which the index serves before this returns. When `work` fails, nothing of it
    /// is committed.
    ///
    /// # Errors
    /// `work`'s failure; [`WriteFailure::Busy`] when another process holds the writer.
    pub fn run<T>(
        &self,
        work: impl FnOnce(&mut Writer) -> Result<T, WriteFailure>,
    ) -> Result<(T, Option<String>), WriteFailure> {
        self.0.run(work)
    }

    /// Closes the writer when it has not written for `idle`, once the merges it started have
    /// ended (writes wait meanwhile). Returns whether it closed one.
    ///
    /// # Errors
    /// When a merge failed; the writer is closed all the same, and every commit stands.
    pub fn release_idle(&self, idle: Duration) -> braid::Result<bool> {
        self.0.close_idle(idle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use braid::{IndexConfig, Mode, SearchRequest};
    use serde_json::json;

    fn acme() -> Principal {
        Principal::from_verified_tokens(["tenant:acme", "group:support"])
    }

    fn admit_with(index: &Index, principal: &Principal, doc: Value) -> Result<Record, WriteFailure> {
        admit(index, principal, "tenant:acme", "records[0]", doc)
    }

    #[test]
    fn ids_are_confined_to_the_namespace_by_their_shape() {
        assert_eq!(stored_id("tenant:acme", "note-1").unwrap(), "tenant:acme/note-1");
        assert_eq!(stored_id("tenant:acme", "tenant:acme/note-1").unwrap(), "tenant:acme/note-1");
        for bad in [
            "tenant:globex/note-1",
            "tenant:acme",
            "tenant:acmeco/x",
            " ",
            "tenant:/x",
            "memory/x",
            "tenant:acme/memory/0123/4567",
            "memory",
            "a\u{0}b",
        ] {
            assert!(matches!(stored_id("tenant:acme", bad), Err(WriteFailure::BadRequest(_))), "{bad}");
        }
        // A namespace its ids would not read back as: `tenant:acme/x`'s short ids are acme's.
        assert!(matches!(stored_id("tenant:acme/x", "secret"), Err(WriteFailure::BadRequest(_))));
    }

    #[test]
    fn a_writer_needs_exactly_one_tenant() {
        assert_eq!(namespace(&acme()).unwrap(), "tenant:acme");
        for tokens in [vec!["group:support"], vec!["tenant:acme", "tenant:globex"], vec!["tenant:acme/x"]] {
            let principal = Principal::from_verified_tokens(tokens);
            assert!(matches!(namespace(&principal), Err(WriteFailure::Forbidden(_))));
        }
    }

    #[test]
    fn records_get_the_tenant_and_only_tokens_the_writer_holds() {
        let index = Index::create_in_ram(IndexConfig::default()).unwrap();
        let admit = |doc: Value| admit(&index, &acme(), "tenant:acme", "records[0]", doc);
        let record =
            admit(json!({"_id": "n1", "title": "Note", "text": "remember the milk", "acl": ["group:support"]}))
                .unwrap();
        assert_eq!(record.id, "tenant:acme/n1");
        assert_eq!(record.acl, ["group:support", "tenant:acme"]);
        assert_eq!(admit(json!({"_id": 7, "text": "x"})).unwrap().acl, ["tenant:acme"]);
        assert_eq!(admit(json!({"_id": "n2", "text": "x", "tenant": "acme"})).unwrap().acl, ["tenant:acme"]);
        // A full id of the writer's own namespace needs no tenant of its own.
        let full = admit(json!({"_id": "tenant:acme/n3", "text": "x"})).unwrap();
        assert_eq!((full.id.as_str(), full.acl.as_slice()), ("tenant:acme/n3", ["tenant:acme".to_string()].as_slice()));
        let owner = Principal::from_verified_tokens(["tenant:acme", "owner:token:alice"]);
        let owned = json!({"_id": "diary", "text": "x", "acl": ["owner:token:alice"]});
        // Visible to its owner alone, yet its tenant's writers could replace it by id.
        assert!(matches!(admit_with(&index, &owner, owned), Err(WriteFailure::BadRequest(_))));
        for bad in [
            json!({"_id": "n1", "text": "x", "acl": ["group:sales"]}),
            json!({"_id": "n1", "text": "x", "tenant": "globex"}),
            json!({"_id": "n1", "text": "x", "acl": ["__braid:no-acl"]}),
            json!({"_id": "tenant:globex/n1", "text": "x"}),
            json!({"text": "no id"}),
            json!({"_id": "n1", "text": "x", "vector": "no"}),
            // An index without vectors: a writer's vector would set them up for everyone.
            json!({"_id": "n1", "text": "x", "vector": [0.1, 0.2, 0.3]}),
            json!(["not", "an", "object"]),
        ] {
            assert!(matches!(admit(bad.clone()), Err(WriteFailure::BadRequest(_))), "{bad}");
        }
    }

    #[test]
    fn a_write_is_searchable_when_it_returns_and_deletes_are_idempotent() {
        let index = Index::create_in_ram(IndexConfig::default()).unwrap();
        let lock = WriteLock::new(index.clone(), GroupCommitOptions::default());
        let record =
            admit(&index, &acme(), "tenant:acme", "r", json!({"_id": "n1", "text": "quokka sightings"})).unwrap();
        lock.write(vec![record], Vec::new()).unwrap();
        let search =
            |p: Principal| index.search(&SearchRequest::new("quokka", p).mode(Mode::Lexical)).unwrap().hits.len();
        assert_eq!(search(acme()), 1);
        assert_eq!(search(Principal::from_verified_tokens(["tenant:globex"])), 0);
        let gone = ["tenant:acme/n1".to_string()];
        lock.write(Vec::new(), gone.to_vec()).unwrap();
        lock.write(Vec::new(), gone.to_vec()).unwrap();
        assert_eq!(search(acme()), 0);
    }

    #[test]
    fn the_writer_stays_open_between_writes_until_it_is_idle() {
        let index = Index::create_in_ram(IndexConfig::default()).unwrap();
        let lock = WriteLock::new(index.clone(), GroupCommitOptions::default());
        for id in ["n1", "n2"] {
            let record = admit(&index, &acme(), "tenant:acme", "r", json!({"_id": id, "text": "quokka"})).unwrap();
            lock.write(vec![record], Vec::new()).unwrap();
            assert!(matches!(index.writer(), Err(braid::Error::LockBusy { .. })), "the server's writer is open");
        }
        assert!(!lock.release_idle(Duration::from_secs(3600)).unwrap());
        assert!(lock.release_idle(Duration::ZERO).unwrap());
        assert!(!lock.release_idle(Duration::ZERO).unwrap(), "nothing left to close");
        drop(index.writer().unwrap());
        // The next write opens it again.
        let record = admit(&index, &acme(), "tenant:acme", "r", json!({"_id": "n3", "text": "quokka"})).unwrap();
        lock.write(vec![record], Vec::new()).unwrap();
        assert_eq!(index.num_records(), 3);
    }

    #[test]
    fn a_failed_write_leaves_nothing_for_the_next_commit() {
        let index = Index::create_in_ram(IndexConfig::default()).unwrap();
        let lock = WriteLock::new(index.clone(), GroupCommitOptions::default());
        let doc = |id: &str, text: &str| admit(&index, &acme(), "tenant:acme", "r", json!({"_id": id, "text": text}));
        let (quokka, wombat) = (doc("n1", "quokka").unwrap(), doc("n2", "wombat").unwrap());
        let failed = lock.run(|w| {
            w.upsert(&quokka)?;
            Err::<(), _>(WriteFailure::BadRequest("refused after an upsert".into()))
        });
        assert!(matches!(failed, Err(WriteFailure::BadRequest(_))));
        lock.write(vec![wombat], Vec::new()).unwrap();
        let search = |q: &str| index.search(&SearchRequest::new(q, acme()).mode(Mode::Lexical)).unwrap().hits.len();
        assert_eq!((search("quokka"), search("wombat")), (0, 1));
    }

    /// A write that changes nothing names no commit (the one served would say when others
    /// last wrote); one that fails before writing keeps the writer open.
    #[test]
    fn a_write_that_changes_nothing_names_no_commit() {
        let dir = tempfile::tempdir().unwrap();
        let index = Index::create(dir.path(), IndexConfig::default()).unwrap();
        let lock = WriteLock::new(index.clone(), GroupCommitOptions::default());
        let doc = || admit(&index, &acme(), "tenant:acme", "r", json!({"_id": "n1", "text": "quokka"})).unwrap();
        assert!(lock.write(vec![doc()], Vec::new()).unwrap().is_some());
        assert_eq!(lock.write(vec![doc()], Vec::new()).unwrap(), None, "the record as it was");
        let (_, commit) = lock.run(|_| Ok::<_, WriteFailure>(())).unwrap();
        assert_eq!(commit, None);
        let failed = lock.run(|_| Err::<(), _>(WriteFailure::NotFound("no such memory".into())));
        assert!(matches!(failed, Err(WriteFailure::NotFound(_))));
        assert!(matches!(index.writer(), Err(braid::Error::LockBusy { .. })), "the writer is still open");
    }
}
