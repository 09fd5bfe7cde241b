//! Shared fixtures.

use std::path::{Path, PathBuf};

#[cfg(feature = "ingest")]
use braid::ingest::Source;
#[cfg(feature = "ingest")]
use braid::IndexConfig;
use braid::{Index, Record};

/// A small help-center-like corpus with public, support-only and two tenants' records.
pub fn corpus() -> Vec<Record> {
    vec![
        Record::new("returns")
            .title("Return policy")
            .body("You can send an item back within 30 days if you no longer want it. Refunds go to the original payment method.")
            .keyword("category", "billing")
            .acl(["public"]),
        Record::new("refund-annual")
            .title("Refunds for annual plans")
            .body("Annual plans are refunded pro rata when cancelled in the first 60 days.")
            .keyword("category", "billing")
            .number("updated", 1_780_000_000.0)
            .acl(["public"]),
        Record::new("kubernetes-relay")
            .title("Deploying the relay on Kubernetes")
            .body("Install the helm chart, then run kubectl get pods to check the relay is ready.")
            .keyword("category", "admin")
            .number("updated", 1_700_000_000.0),
        Record::new("http-451")
            .title("HTTP 451 Unavailable For Legal Reasons")
            .body("A 451 response means the content is blocked in your region. Error FBX-2210 is a quota error instead.")
            .keyword("category", "api-errors")
            .acl(["public"]),
        Record::new("two-factor")
            .title("Two-factor authentication")
            .body("Turn on two-factor authentication with an authenticator app or a security key.")
            .keyword("category", "security")
            .acl(["public"]),
        Record::new("refund-exceptions")
            .title("Refund exceptions (agents only)")
            .body("Support agents may approve a refund after 30 days for the zorblax escalation queue.")
            .keyword("category", "billing")
            .acl(["group:support"]),
        Record::new("acme-sso")
            .title("Acme SSO setup")
            .body("Acme employees sign in through the quuxly identity provider with SAML.")
            .acl(["tenant:acme"]),
        Record::new("globex-sso")
            .title("Globex SSO setup")
            .body("Globex employees sign in through Okta with SAML and the frobnicator bridge.")
            .acl(["tenant:globex"]),
        Record::new("globex-support-runbook")
            .title("Globex support runbook")
            .body("Escalations for Globex go to the frobnicator on-call rota.")
            .acl(["tenant:globex", "group:support"]),
        Record::new("chunk-1")
            .title("Billing guide")
            .body("Invoices list the VAT number of your company.")
            .parent("billing-guide")
            .section(["Invoices", "VAT"])
            .lines(10, 14)
            .acl(["public"]),
    ]
}

/// An in-memory index holding [`corpus`].
pub fn index() -> Index {
    index_built(Index::builder())
}

/// [`index`], built by `builder` (with its models).
pub fn index_built(builder: braid::IndexBuilder) -> Index {
    let index = builder.create_in_ram().expect("index");
    let mut writer = index.writer().expect("writer");
    for record in corpus() {
        writer.upsert(&record).expect("upsert");
    }
    writer.commit().expect("commit");
    index
}

/// An in-memory, lexical-only index of every record `Source::detect` finds in `dir` (a BEIR
/// corpus or a folder of Markdown articles).
#[cfg(feature = "ingest")]
pub fn index_of(dir: &Path) -> Index {
    let index = Index::create_in_ram(IndexConfig::default()).expect("index");
    let mut writer = index.writer().expect("writer");
    for record in Source::detect(dir).expect("source").records(&index.config().schema) {
        writer.upsert(&record.expect("record")).expect("upsert");
    }
    writer.commit().expect("commit");
    index
}

/// The shared datasets folder (`../shared/datasets` from the repository root).
#[cfg_attr(not(feature = "ingest"), allow(dead_code))]
pub fn shared_datasets() -> PathBuf {
    shared("datasets")
}

#[path = "shared_dir.rs"]
mod shared_dir;
#[cfg_attr(not(feature = "models"), allow(unused_imports))]
pub use shared_dir::{shared, unfetchable};

/// The repository root: the package root cargo runs tests in.
#[cfg_attr(not(feature = "ingest"), allow(dead_code))]
pub fn repo() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_default();
    if cwd.join("datasets/helpcenter").is_dir() {
        cwd
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }
}

pub fn ids(response: &braid::SearchResponse) -> Vec<&str> {
    response.hits.iter().map(|h| h.id.as_str()).collect()
}

/// An embedder wrapped to count how many texts it embeds (to check what indexing re-embeds).
pub struct Counting {
    inner: std::sync::Arc<dyn braid::Embedder>,
    texts: std::sync::atomic::AtomicUsize,
}

impl Counting {
    /// Wraps `inner`, with the count at zero.
    pub fn new(inner: std::sync::Arc<dyn braid::Embedder>) -> std::sync::Arc<Counting> {
        std::sync::Arc::new(Counting { inner, texts: std::sync::atomic::AtomicUsize::new(0) })
    }

    /// Texts embedded so far.
    pub fn texts(&self) -> usize {
        self.texts.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl braid::Embedder for Counting {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn embed(&self, texts: &[&str]) -> braid::Result<Vec<Vec<f32>>> {
        self.texts.fetch_add(texts.len(), std::sync::atomic::Ordering::SeqCst);
        self.inner.embed(texts)
    }
}

/// A deterministic embedder for tests that must not depend on ONNX Runtime: each word
/// (lowercased alphanumeric run) is hashed (FNV-1a) to one of `dim` dimensions with a sign,
/// plus a small constant component so no text embeds to zero; L2-normalised. Texts that share
/// words are close, as with a real model's lexical overlap.
pub struct HashEmbedder {
    dim: usize,
}

impl HashEmbedder {
    pub fn new(dim: usize) -> Self {
        HashEmbedder { dim: dim.max(2) }
    }

    fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.dim];
        v[0] = 0.05;
        for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for b in word.to_lowercase().bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
            let i = 1 + (h % (self.dim as u64 - 1)) as usize;
            v[i] += if h >> 63 == 0 { 1.0 } else { -1.0 };
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / norm).collect()
    }
}

impl braid::Embedder for HashEmbedder {
    fn model_id(&self) -> &str {
        "test/hash-embedder"
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> braid::Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }
}

/// Whether `p` may see `record` under the public policy the shared corpus is indexed with.
pub fn visible(p: &braid::Principal, record: &Record) -> bool {
    braid::Visibility::new(p.clone(), braid::AccessPolicy::Public, None).admits_acl(record.acl.as_slice())
}

/// Semantic and hybrid search on an index of [`corpus`] return only records the caller
/// may see, for three principals and queries from on-topic to empty. With
/// `every_record_has_a_vector`, semantic mode also returns every record the caller may see.
pub fn assert_semantic_search_is_confined(index: &Index, every_record_has_a_vector: bool) {
    use braid::{Mode, Principal, SearchRequest};
    let principals = [
        Principal::public(),
        Principal::from_verified_tokens(["tenant:acme"]),
        Principal::from_verified_tokens(["tenant:globex", "group:support"]),
    ];
    for p in principals {
        for mode in [Mode::Semantic, Mode::Hybrid] {
            for q in ["single sign-on for employees", "escalation rota", "refund after 30 days", "🙂", ""] {
                let r = index.search(&SearchRequest::new(q, p.clone()).mode(mode).k(50)).unwrap();
                for hit in &r.hits {
                    let record = corpus().into_iter().find(|c| c.id() == hit.id).unwrap();
                    assert!(visible(&p, &record), "{p:?} {mode:?} {q:?} leaked {}", hit.id);
                }
                if every_record_has_a_vector && mode == Mode::Semantic && !q.is_empty() {
                    let expected = corpus().iter().filter(|c| visible(&p, c)).count();
                    assert_eq!(r.hits.len(), expected, "{p:?} {q:?}: every visible record has a vector");
                }
            }
        }
    }
}

/// Copies the folder `from` into `to` (created), files and subfolders alike.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// An index in memory made by `builder`, holding `records`, written in one commit.
pub fn in_ram_with(builder: braid::IndexBuilder, records: &[Record]) -> Index {
    let index = builder.create_in_ram().unwrap();
    let mut w = index.writer().unwrap();
    for r in records {
        w.upsert(r).unwrap();
    }
    w.commit().unwrap();
    drop(w);
    index
}
