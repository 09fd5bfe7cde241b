//! Vectors the caller brings: on records, on requests, on an index with no model at all.

use braid::{EmbeddingInfo, Error, Index, IndexConfig, Mode, Principal, Record, SearchRequest, SUPPLIED_MODEL};

/// A seeded unit-ish vector for record `i` in `dim` dimensions (a cheap xorshift).
fn vector(i: u64, dim: usize) -> Vec<f32> {
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..dim)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2001) as f32 / 1000.0 - 1.0
        })
        .collect()
}

fn corpus(n: u64, dim: usize) -> Vec<Record> {
    (0..n)
        .map(|i| {
            Record::new(format!("d{i}"))
                .body(format!("document {i} about topic {}", i % 5))
                .acl([format!("group:g{}", i % 2)])
                .vector(vector(i, dim))
        })
        .collect()
}

fn ids(index: &Index, request: &SearchRequest) -> Vec<String> {
    index.search(request).unwrap().hits.into_iter().map(|h| h.id).collect()
}

#[test]
fn an_index_without_a_model_runs_the_semantic_leg_on_supplied_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create(dir.path(), IndexConfig::default()).unwrap();
    let mut w = index.writer().unwrap();
    for r in corpus(60, 8) {
        w.upsert(&r).unwrap();
    }
    w.commit().unwrap();
    drop(w);
    assert_eq!(index.embedding(), Some(EmbeddingInfo { model_id: SUPPLIED_MODEL.into(), dim: 8 }));

    // The query is record 17's own vector: it comes first, for a principal who sees it.
    let g1 = Principal::from_verified_tokens(["group:g1"]);
    let q = SearchRequest::new("", g1.clone()).vector(vector(17, 8)).mode(Mode::Semantic).k(5);
    let found = ids(&index, &q);
    assert_eq!(found[0], "d17");
    assert_eq!(found.len(), 5);
    // Permissions first: group g0 never sees an odd record, vector or not.
    let g0 = Principal::from_verified_tokens(["group:g0"]);
    let q0 = SearchRequest::new("", g0).vector(vector(17, 8)).mode(Mode::Semantic).k(10);
    let found0 = ids(&index, &q0);
    assert!(!found0.is_empty() && found0.iter().all(|id| id[1..].parse::<u64>().unwrap() % 2 == 0), "{found0:?}");

    // Reopened: no rebuild from a model; the stored vectors come back.
    let reopened = Index::builder().stored_vectors().open(dir.path()).unwrap();
    assert_eq!(ids(&reopened, &q), found);
    // Hybrid: text drives the lexical legs, the vector the semantic one.
    let hybrid = SearchRequest::new("document 17", g1).vector(vector(17, 8)).mode(Mode::Hybrid);
    let response = reopened.search(&hybrid).unwrap();
    assert_eq!(response.hits[0].id, "d17");
    assert!(response.stats.legs.contains(&braid::Leg::Semantic));
}

#[test]
fn bad_vectors_are_typed_errors() {
    let index = Index::create_in_ram(IndexConfig::default()).unwrap();
    let mut w = index.writer().unwrap();
    w.upsert(&Record::new("a").body("alpha").vector(vec![1.0, 0.0, 0.0])).unwrap();
    assert!(matches!(
        w.upsert(&Record::new("b").vector(vec![1.0, 0.0])),
        Err(Error::DimensionMismatch { expected: 3, got: 2 })
    ));
    assert!(matches!(w.upsert(&Record::new("c").vector(vec![1.0, f32::NAN, 0.0])), Err(Error::InvalidRecord { .. })));
    assert!(matches!(
        w.upsert(&Record::new("d").vector(vec![f32::INFINITY, 0.0, 0.0])),
        Err(Error::InvalidRecord { .. })
    ));
    assert!(matches!(w.upsert(&Record::new("e").vector(vec![0.0, 0.0, 0.0])), Err(Error::InvalidRecord { .. })));
    w.commit().unwrap();
    assert_eq!(index.num_records(), 1, "rejected records are not written");

    let p = Principal::public();
    let semantic = |v: Vec<f32>| SearchRequest::new("", p.clone()).vector(v).mode(Mode::Semantic);
    assert!(matches!(index.search(&semantic(vec![1.0])), Err(Error::DimensionMismatch { expected: 3, got: 1 })));
    assert!(matches!(index.search(&semantic(vec![f32::NAN, 0.0, 0.0])), Err(Error::InvalidRequest { .. })));
    // Text alone cannot run the semantic leg without a model: say so, never rank noise.
    let text = SearchRequest::new("alpha", p.clone()).mode(Mode::Semantic);
    assert!(matches!(index.search(&text), Err(Error::LegUnavailable { .. })));
    // Hybrid without a query vector runs the lexical legs only.
    let hybrid = index.search(&SearchRequest::new("alpha", p.clone()).mode(Mode::Hybrid)).unwrap();
    assert_eq!(hybrid.hits[0].id, "a");
    assert!(!hybrid.stats.legs.contains(&braid::Leg::Semantic));

    // A query vector on an index that has no vectors at all is an error, not ignored.
    let plain = Index::create_in_ram(IndexConfig::default()).unwrap();
    assert!(matches!(plain.search(&semantic(vec![1.0, 0.0, 0.0])), Err(Error::LegUnavailable { .. })));
}

#[test]
fn a_changed_vector_reindexes_the_record_and_an_unchanged_one_is_skipped() {
    let index = Index::create_in_ram(IndexConfig::default()).unwrap();
    let mut w = index.writer().unwrap();
    w.upsert(&Record::new("a").body("alpha").vector(vec![1.0, 0.0])).unwrap();
    w.upsert(&Record::new("b").body("beta").vector(vec![0.0, 1.0])).unwrap();
    w.commit().unwrap();
    w.upsert(&Record::new("a").body("alpha").vector(vec![1.0, 0.0])).unwrap();
    assert_eq!(w.unchanged(), 1);
    w.upsert(&Record::new("b").body("beta").vector(vec![1.0, 0.1])).unwrap();
    w.commit().unwrap();
    let q = SearchRequest::new("", Principal::public()).vector(vec![1.0, 0.1]).mode(Mode::Semantic);
    assert_eq!(ids(&index, &q), ["b", "a"], "b's new vector replaced its old one");
}

/// An index created with int8 vectors answers like the f32 one on the same data (the exact
/// scan over codes keeps the exact top hits here), keeps int8 across reopening, and stays
/// inside each principal's records.
#[test]
fn an_int8_index_answers_like_an_f32_one() {
    let build = |quantization: braid::Quantization| {
        let dir = tempfile::tempdir().unwrap();
        let config = IndexConfig { quantization, ..IndexConfig::default() };
        let index = Index::create(dir.path(), config).unwrap();
        let mut w = index.writer().unwrap();
        for r in corpus(200, 16) {
            w.upsert(&r).unwrap();
        }
        w.commit().unwrap();
        drop(w);
        (dir, index)
    };
    let (_f32_dir, f32_index) = build(braid::Quantization::F32);
    let (int8_dir, int8_index) = build(braid::Quantization::Int8);
    let g1 = Principal::from_verified_tokens(["group:g1"]);
    let (mut same, mut total) = (0, 0);
    for i in (1..200).step_by(7) {
        let q = SearchRequest::new("", g1.clone()).vector(vector(i, 16)).mode(Mode::Semantic).k(5);
        let (want, got) = (ids(&f32_index, &q), ids(&int8_index, &q));
        assert!(got.iter().all(|id| id[1..].parse::<u64>().unwrap() % 2 == 1), "{got:?}");
        if i % 2 == 1 {
            assert_eq!(got[0], format!("d{i}"), "a visible record's own vector finds it first");
        }
        total += want.len();
        same += got.iter().filter(|id| want.contains(id)).count();
    }
    assert!(same * 100 >= total * 95, "int8 keeps {same} of {total} f32 hits");
    let reopened = Index::builder().stored_vectors().open(int8_dir.path()).unwrap();
    assert_eq!(reopened.config().quantization, braid::Quantization::Int8);
    let q = SearchRequest::new("", g1).vector(vector(17, 16)).mode(Mode::Semantic).k(5);
    assert_eq!(ids(&reopened, &q), ids(&int8_index, &q));
}
