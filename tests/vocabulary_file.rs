//! The large segments' vocabulary saved beside the lexical index
//! (`lexical/vocabulary.braidvoc`): an open reads it instead of building the vocabulary, and
//! only when it is the vocabulary of exactly its large segments and intact; answers are the
//! same with it, without it, and with a damaged or foreign one.

use braid::{Index, IndexConfig, Mode, Principal, Record, SearchRequest};

use crate::lifecycle::Damage;

/// `n` more records in one commit, then merged into one segment (past 1,000 records it is
/// large, and its vocabulary is saved), words drawn from `words` of a small vocabulary.
fn build(dir: &std::path::Path, first: usize, n: usize, words: usize) {
    let idx = Index::open_or_create(dir, IndexConfig::default()).unwrap();
    let mut w = idx.writer().unwrap();
    for i in first..first + n {
        let body: Vec<String> = (0..12u64)
            .map(|j| {
                let h = ((i as u64) << 8 | j).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                ["return", "policy", "shipping", "refund", "warranty", "delivery"][(h >> 61) as usize % 6].to_string()
                    + &format!("{}", (h >> 40) as usize % words)
            })
            .collect();
        w.upsert(&Record::new(format!("r{i}")).title("walrus help").body(body.join(" "))).unwrap();
    }
    w.optimize().unwrap();
}

/// What a case does to the saved file.
type Spoil<'a> = dyn Fn(&std::path::Path) + 'a;

fn file(dir: &std::path::Path) -> std::path::PathBuf {
    dir.join("lexical/vocabulary.braidvoc")
}

/// Hits (ids and scores) and "did you mean" of misspelt, partial and exact queries in the
/// fuzzy, lexical and hybrid modes.
fn answers(dir: &std::path::Path) -> Vec<String> {
    let idx = Index::open(dir).unwrap();
    let mut out = Vec::new();
    for query in ["retrun polcy", "shiping3", "refnd12 warrantty", "walrsu", "deliv", "policy7 return"] {
        for mode in [Mode::Fuzzy, Mode::Lexical, Mode::Hybrid] {
            let response = idx.search(&SearchRequest::new(query, Principal::public()).mode(mode)).unwrap();
            let hits: Vec<(String, f32)> = response.hits.iter().map(|h| (h.id.clone(), h.score)).collect();
            out.push(format!("{query} {mode:?}: {hits:?} {:?}", response.suggestions));
        }
    }
    out
}

/// A commit that makes a large segment saves its vocabulary; answers read through it are the
/// answers of the vocabulary built from the term dictionaries (the file removed), and of one
/// built again because the file is damaged in any way, or is another index's. `Index::check`
/// passes in each case (the file is a cache), and the next writer writes it back as it was.
#[test]
fn answers_are_the_same_with_the_saved_vocabulary_without_it_and_with_a_damaged_one() {
    let pristine = tempfile::tempdir().unwrap();
    build(pristine.path(), 0, 1_200, 40);
    let saved = std::fs::read(file(pristine.path())).expect("the commit saved the vocabulary");
    let expected = answers(pristine.path());
    assert!(expected.iter().any(|a| a.contains("\"r")), "the queries find records: {expected:?}");

    let other = tempfile::tempdir().unwrap();
    build(other.path(), 0, 1_100, 30);
    let foreign = std::fs::read(file(other.path())).unwrap();

    let cases: Vec<(&str, Box<Spoil<'_>>)> = vec![
        ("removed", Box::new(|p| std::fs::remove_file(p).unwrap())),
        ("another index's", Box::new(|p| std::fs::write(p, &foreign).unwrap())),
        ("missing", Box::new(|p| Damage::Missing.apply(p))),
        ("empty", Box::new(|p| Damage::Empty.apply(p))),
        ("truncated", Box::new(|p| Damage::TruncatedToHalf.apply(p))),
        ("last byte cut", Box::new(|p| Damage::LastByteCut.apply(p))),
        ("middle byte flipped", Box::new(|p| Damage::FlippedMiddleByte.apply(p))),
        ("last byte flipped", Box::new(|p| Damage::FlippedLastByte.apply(p))),
    ];
    for (case, damage) in cases {
        let work = tempfile::tempdir().unwrap();
        crate::common::copy_dir(pristine.path(), work.path());
        damage(&file(work.path()));
        assert_eq!(answers(work.path()), expected, "{case}");
        Index::check(work.path()).unwrap_or_else(|e| panic!("{case}: {e}"));
        drop(Index::open(work.path()).unwrap().writer().unwrap());
        assert!(std::fs::read(file(work.path())).unwrap() == saved, "{case}: the writer saved it again");
    }
}

/// A commit and merge that change the large segments save their vocabulary again, over the
/// file of the segments before (which an open would no longer use); a temporary file a save
/// killed midway left is overwritten by the next save, and never read.
#[test]
fn a_merge_saves_the_new_segments_vocabulary_and_a_crashed_save_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), 0, 1_200, 40);
    let before = std::fs::read(file(dir.path())).unwrap();
    build(dir.path(), 1_200, 1_300, 50);
    let after = std::fs::read(file(dir.path())).unwrap();
    assert!(after != before, "saved for the merged segment");
    let expected = answers(dir.path());
    std::fs::write(dir.path().join("lexical/vocabulary.braidvoc.tmp"), &before[..before.len() / 2]).unwrap();
    std::fs::write(file(dir.path()), &before).unwrap();
    assert_eq!(answers(dir.path()), expected, "the old segments' file is not used");
    std::fs::remove_file(file(dir.path())).unwrap();
    assert_eq!(answers(dir.path()), expected, "built from the term dictionaries");
    drop(Index::open(dir.path()).unwrap().writer().unwrap());
    assert!(std::fs::read(file(dir.path())).unwrap() == after);
}
