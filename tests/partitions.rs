//! Tenant partitions of the vector store, through the facade: an index written before them
//! opens and migrates, and where a tenant's vectors live — the pool or a partition of its
//! own, in memory or reopened from disk — changes no answer.

use std::path::Path;

use braid::{Index, IndexConfig, Mode, Partition, Principal, Record, SearchRequest, SearchResponse};

/// An index written by Braid before tenant partitions (commit 410e0d2, manifest format 2, every
/// vector in one store) with `braid index index-format-2.jsonl --index index-format-2
/// --vector-field vector`: 30
/// records with supplied 8-d vectors, a third without a tenant, a third each acme's and
/// globex's.
const FIXTURE: &str = "tests/fixtures/index-format-2";

/// The fixture's records, as written.
fn records() -> Vec<Record> {
    let text = std::fs::read_to_string(format!("{FIXTURE}.jsonl")).unwrap();
    text.lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
            let vector: Vec<f32> =
                v["metadata"]["vector"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect();
            let mut r = Record::new(s("_id")).title(s("title")).body(s("text")).vector(vector);
            if let Some(tenant) = v["tenant"].as_str() {
                r = r.acl([format!("tenant:{tenant}")]);
            }
            r
        })
        .collect()
}

fn principals() -> Vec<Principal> {
    vec![
        Principal::public(),
        Principal::from_verified_tokens(["tenant:acme"]),
        Principal::from_verified_tokens(["tenant:globex"]),
        Principal::from_verified_tokens(["tenant:acme", "tenant:globex"]),
    ]
}

/// Every answer that reads vectors, with timings removed: semantic and hybrid searches by the
/// records' own vectors, for each principal.
fn answers(index: &Index) -> Vec<serde_json::Value> {
    let comparable = |r: SearchResponse| {
        let mut v = serde_json::to_value(r).unwrap();
        v["stats"].as_object_mut().unwrap().remove("micros");
        v
    };
    let mut out = Vec::new();
    for principal in principals() {
        for record in records().iter().step_by(4) {
            let vector = record.vector.clone().unwrap();
            for mode in [Mode::Semantic, Mode::Hybrid] {
                let request =
                    SearchRequest::new(record.title.as_str(), principal.clone()).vector(vector.clone()).mode(mode).k(8);
                out.push(comparable(index.search(&request).unwrap()));
            }
        }
    }
    out
}

/// An index of the fixture's records written now, in one commit.
fn written_now(promote_at: usize) -> Index {
    let index = Index::builder().promote_tenants_at(promote_at).create_in_ram().unwrap();
    let mut w = index.writer().unwrap();
    for r in records() {
        w.upsert(&r).unwrap();
    }
    w.commit().unwrap();
    drop(w);
    index
}

fn partitions(dir: &Path) -> Vec<(Partition, usize)> {
    Index::check(dir).unwrap().vector_partitions
}

/// An index written before partitions opens with its tenants' vectors moved out of the shared
/// store (in memory), answers as an index written now does, writes the partitions with its
/// next commit (manifest format 3), and opens from them afterwards.
#[test]
fn an_index_from_before_partitions_opens_and_migrates() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    crate::common::copy_dir(Path::new(FIXTURE), &dir);
    let manifest = || std::fs::read_to_string(dir.join("braid.json")).unwrap();
    assert!(manifest().contains("\"format\": 2"));
    assert!(!dir.join("vectors/pool").exists());
    let expected = answers(&written_now(braid::PROMOTE_AT));

    // Opened as it is: the tenants' records move to the pool.
    let index = Index::builder().stored_vectors().open(&dir).unwrap();
    assert_eq!(answers(&index), expected);
    assert_eq!(partitions(&dir), [(Partition::Pool, 20), (Partition::Shared, 10)]);
    drop(index);

    // Opened promoting at 5 records: each tenant gets its own; a commit writes them.
    let index = Index::builder().stored_vectors().promote_tenants_at(5).open(&dir).unwrap();
    assert_eq!(answers(&index), expected);
    index.writer().unwrap().commit().unwrap();
    assert!(manifest().contains("\"format\": 3"), "{}", manifest());
    assert!(dir.join("vectors").join(Partition::Tenant("tenant:acme".into()).name()).is_dir());
    drop(index);
    let acme = Partition::Tenant("tenant:acme".into());
    let globex = Partition::Tenant("tenant:globex".into());
    assert_eq!(partitions(&dir), [(acme, 10), (globex, 10), (Partition::Pool, 0), (Partition::Shared, 10)]);
    let reopened = Index::builder().stored_vectors().open(&dir).unwrap();
    assert_eq!(answers(&reopened), expected);
}

/// Promotion, in memory and on disk, across several commits with replaced and deleted
/// records, changes no answer: the index promoting at 3 records answers as one that never
/// promotes, before and after reopening.
#[test]
fn promotion_changes_no_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    let promoting = Index::builder().config(IndexConfig::default()).promote_tenants_at(3).create(&dir).unwrap();
    let pooled = Index::builder().promote_tenants_at(usize::MAX).create_in_ram().unwrap();
    for index in [&promoting, &pooled] {
        let mut w = index.writer().unwrap();
        for (i, r) in records().iter().enumerate() {
            w.upsert(r).unwrap();
            if i % 7 == 6 {
                w.commit().unwrap();
            }
        }
        w.delete("r4").unwrap();
        let mut moved = records()[5].clone();
        moved.acl = vec!["tenant:acme".into()];
        w.upsert(&moved).unwrap();
        w.commit().unwrap();
    }
    let expected = answers(&pooled);
    assert_eq!(answers(&promoting), expected);
    drop(promoting);
    let parts = partitions(&dir);
    let acme = Partition::Tenant("tenant:acme".into());
    assert!(parts.contains(&(acme, 10)), "{parts:?}");
    let reopened = Index::builder().stored_vectors().open(&dir).unwrap();
    assert_eq!(answers(&reopened), expected);
}

/// The lexical side of an index written before partitions: its tenants' records sit in the
/// main partition. A new record of such a tenant goes to the pool, and the tenant's promotion
/// moves its records out of both at once; every answer stays that of an index written now.
#[test]
fn a_tenant_from_before_the_pool_is_promoted_out_of_both() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    crate::common::copy_dir(Path::new(FIXTURE), &dir);
    let mut fresh = records()[1].clone();
    fresh.id = "r-new".into();
    fresh.title = "shipping refund".into();
    let expected = {
        let index = written_now(12);
        let mut w = index.writer().unwrap();
        w.upsert(&fresh).unwrap();
        w.commit().unwrap();
        drop(w);
        answers(&index)
    };
    let index = Index::builder().stored_vectors().promote_tenants_at(12).open(&dir).unwrap();
    let mut w = index.writer().unwrap();
    w.upsert(&fresh).unwrap();
    w.commit().unwrap();
    assert!(Index::check(&dir).unwrap().lexical_partitions.is_empty(), "acme holds 11 records");
    assert!(dir.join("lexical/pool").is_dir(), "the new record went to the pool");
    assert_eq!(answers(&index), expected);
    let mut another = fresh.clone();
    another.id = "r-newer".into();
    w.upsert(&another).unwrap();
    w.commit().unwrap();
    drop(w);
    assert_eq!(Index::check(&dir).unwrap().lexical_partitions, ["tenant:acme"]);
    let mut w = index.writer().unwrap();
    w.delete("r-newer").unwrap();
    w.commit().unwrap();
    drop(w);
    assert_eq!(answers(&index), expected);
    drop(index);
    let reopened = Index::builder().stored_vectors().open(&dir).unwrap();
    assert_eq!(answers(&reopened), expected);
}
