//! What the optional features change, tested in the build that has them and in the one
//! that does not (`cargo test -p braid --no-default-features`).
//!
//! - `hnsw`: a vector store saved with its HNSW graph (the checked-in fixture, written by a
//!   build with `hnsw`) opens in every build; without `hnsw` its graph is not kept, every
//!   search is the exact scan with the same hits, and the next save writes none. A store of
//!   format 2 (whose graph was an `hnsw_rs` dump beside the file) opens in every build too:
//!   its graph is rebuilt where there is one, and the next save removes the old dump.
//! - `cjk`: Chinese is found in every build; without `cjk` it is cut into character bigrams
//!   (a two-character span across a word boundary matches too) and pinyin reads nothing.

use std::path::{Path, PathBuf};

use braid::{Index, IndexConfig, Mode, Principal, Record, SearchRequest, Visibility};
use braid_core::{AccessPolicy, AllowedSet, OrdSet};
use braid_vector::{SearchPath, VectorStore, VECTORS_FILE};

use crate::common::ids;

const FIXTURE: &str = "tests/fixtures/vectors-with-graph";
/// The same 40 vectors saved by format 2, with `hnsw_rs`'s dump of their graph beside them.
const FIXTURE_FORMAT_2: &str = "tests/fixtures/vectors-format-2";
const DIM: usize = 4;
const POINTS: u64 = 40;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(FIXTURE)
}

fn fixture_format_2() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(FIXTURE_FORMAT_2)
}

/// Vector `i` of the fixture: a seeded point in `DIM` dimensions (xorshift), never zero.
fn vector(i: u64) -> Vec<f32> {
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..DIM)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2001) as f32 / 1000.0 - 1.0 + 1e-3
        })
        .collect()
}

fn everyone() -> AllowedSet {
    AllowedSet::new(Visibility::new(Principal::public(), AccessPolicy::Public, None), (1..=POINTS).collect::<OrdSet>())
}

fn graph_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".hnsw."))
        .collect();
    names.sort();
    names
}

fn copy_fixture(from: &Path) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), tmp.path().join(entry.file_name())).unwrap();
    }
    tmp
}

/// Rewrites the fixture (a build with `hnsw`):
/// `cargo test --test tests features::write_the_graph_fixture -- --ignored`.
#[cfg(feature = "hnsw")]
#[test]
#[ignore = "writes tests/fixtures/vectors-with-graph"]
fn write_the_graph_fixture() {
    use braid_vector::HnswParams;
    let dir = fixture();
    let _ = std::fs::remove_dir_all(&dir);
    let mut store = VectorStore::new(DIM, HnswParams { exact_threshold: 8, ..HnswParams::default() });
    store.insert_batch(&(1..=POINTS).map(|i| (i, vector(i))).collect::<Vec<_>>()).unwrap();
    assert!(store.has_graph());
    store.save(&dir).unwrap();
}

/// The fixture's 40 vectors, as stored (unit length), and its exact top 5 for vector 7.
fn check_fixture_vectors(store: &VectorStore) -> Vec<(u64, f32)> {
    assert_eq!(store.len(), POINTS as usize);
    assert_eq!(store.params().exact_threshold, 8);
    for i in 1..=POINTS {
        let stored = store.vector(i).unwrap();
        let want = vector(i);
        let norm = want.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!(stored.iter().zip(&want).all(|(s, w)| (s - w / norm).abs() < 1e-6), "vector {i}");
    }
    let exact = store.search_exact(&vector(7), 5, &everyone()).unwrap();
    assert_eq!(exact[0].0, 7);
    exact
}

#[test]
fn a_store_saved_with_a_graph_opens_in_every_build() {
    assert_eq!(std::fs::read_dir(fixture()).unwrap().count(), 1, "the fixture is one file, graph inside");
    let tmp = copy_fixture(&fixture());
    let store = VectorStore::open(tmp.path()).expect("the fixture opens");
    let exact = check_fixture_vectors(&store);
    let found = store.search(&vector(7), 5, &everyone()).unwrap();
    assert_eq!(found.hits, exact, "40 points: the graph (where there is one) finds the exact top 5");
    if cfg!(feature = "hnsw") {
        assert!(store.graph_was_loaded(), "a build with hnsw loads the saved graph");
        assert_eq!(found.path, SearchPath::Hnsw);
    } else {
        assert!(!store.has_graph(), "a build without hnsw keeps no graph");
        assert_eq!(found.path, SearchPath::Exact);
    }
    store.save(tmp.path()).unwrap();
    let reopened = VectorStore::open(tmp.path()).unwrap();
    assert_eq!(reopened.search(&vector(7), 5, &everyone()).unwrap().hits, exact);
    assert_eq!(reopened.graph_was_loaded(), cfg!(feature = "hnsw"));
}

#[test]
fn a_store_of_format_2_opens_in_every_build() {
    assert_eq!(graph_files(&fixture_format_2()).len(), 2, "the old fixture holds an hnsw_rs dump");
    let tmp = copy_fixture(&fixture_format_2());
    let store = VectorStore::open(tmp.path()).expect("the format 2 fixture opens");
    let exact = check_fixture_vectors(&store);
    assert!(!store.graph_was_loaded(), "an hnsw_rs dump is not read");
    assert_eq!(store.has_graph(), cfg!(feature = "hnsw"), "the graph is rebuilt where there is one");
    assert_eq!(store.search(&vector(7), 5, &everyone()).unwrap().hits, exact);

    // The next save writes the current format and removes the old dump.
    store.save(tmp.path()).unwrap();
    assert!(graph_files(tmp.path()).is_empty());
    assert!(tmp.path().join(VECTORS_FILE).is_file());
    let reopened = VectorStore::open(tmp.path()).unwrap();
    assert_eq!(reopened.search(&vector(7), 5, &everyone()).unwrap().hits, exact);
    assert_eq!(reopened.graph_was_loaded(), cfg!(feature = "hnsw"));
}

fn chinese_index() -> Index {
    let index = Index::create_in_ram(IndexConfig::default()).unwrap();
    let mut w = index.writer().unwrap();
    w.upsert(&Record::new("sync").title("文件同步失败怎么办").body("先查看错误代码，再检查网络。").acl(["public"]))
        .unwrap();
    w.upsert(&Record::new("refunds").title("退款政策").body("三十天内可以申请全额退款。").acl(["public"])).unwrap();
    w.upsert(&Record::new("secret").title("同步预案").body("客服内部的应急预案。").acl(["group:support"])).unwrap();
    w.upsert(&Record::new("en").title("Return policy").body("Send an item back within 30 days.").acl(["public"]))
        .unwrap();
    w.commit().unwrap();
    index
}

fn top(index: &Index, query: &str, mode: Mode) -> Vec<String> {
    let r = index.search(&SearchRequest::new(query, Principal::public()).mode(mode)).unwrap();
    ids(&r).into_iter().map(str::to_string).collect()
}

#[test]
fn chinese_is_found_in_every_build() {
    let index = chinese_index();
    for mode in [Mode::Lexical, Mode::Hybrid] {
        assert_eq!(top(&index, "同步失败", mode).first().map(String::as_str), Some("sync"), "{mode:?}");
        assert_eq!(top(&index, "退款", mode).first().map(String::as_str), Some("refunds"), "{mode:?}");
        assert!(!top(&index, "预案", mode).contains(&"secret".to_string()), "{mode:?}");
    }
    assert_eq!(top(&index, "return policy", Mode::Lexical), ["en"]);
}

#[cfg(not(feature = "cjk"))]
#[test]
fn without_cjk_chinese_is_bigrams_and_pinyin_reads_nothing() {
    let index = chinese_index();
    // 步失 spans the words 同步 and 失败: a bigram, so it matches without a dictionary.
    assert_eq!(top(&index, "步失", Mode::Lexical), ["sync"]);
    // With `cjk`, "tongbu" reads as 同步 (tests/cjk.rs); without it, it is an unknown word.
    assert!(top(&index, "tongbu", Mode::Lexical).is_empty());
}
