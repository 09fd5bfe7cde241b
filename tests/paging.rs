//! Paging: pages concatenated are one longer request's hits, in every mode; cursors hold
//! across commits only while the hits before them stand, and are refused for another
//! request; pages past the ranking's window are refused.

use braid::{Error, Index, Mode, Principal, Record, SearchRequest, SearchResponse};

use crate::common;

fn helpcenter() -> Index {
    common::index_of(&common::repo().join("datasets/helpcenter/articles"))
}

/// Ids and scores; with a single leg, ids alone: it fetches only up to the page's end and
/// normalises its scores over what it fetched (the order is the same).
fn ranked(r: &SearchResponse) -> Vec<(String, u32)> {
    let one_leg = r.stats.legs.len() == 1;
    r.hits.iter().map(|h| (h.id.clone(), if one_leg { 0 } else { h.score.to_bits() })).collect()
}

const MODES: [Mode; 3] = [Mode::Lexical, Mode::Fuzzy, Mode::Hybrid];

#[test]
fn pages_concatenated_are_one_longer_request() {
    let index = helpcenter();
    for q in ["refund", "sync files", "retun policy", "sso", "kuber"] {
        for mode in MODES {
            let base = || SearchRequest::new(q, Principal::public()).mode(mode).depth(40);
            let whole = index.search(&base().k(40)).unwrap();
            // By offset.
            let mut by_offset = Vec::new();
            for offset in (0..40).step_by(8) {
                by_offset.extend(ranked(&index.search(&base().k(8).offset(offset)).unwrap()));
            }
            assert_eq!(by_offset, ranked(&whole), "{q:?} {mode:?} by offset");
            // By cursor, with pages of different lengths.
            let mut by_cursor = Vec::new();
            let mut cursor: Option<String> = None;
            for k in [5, 9, 3, 12, 11] {
                let mut request = base().k(k);
                if let Some(c) = &cursor {
                    request = request.cursor(c.as_str());
                }
                let page = index.search(&request).unwrap();
                by_cursor.extend(ranked(&page));
                cursor = page.next_cursor.clone();
                if cursor.is_none() {
                    break;
                }
            }
            let n = by_cursor.len();
            assert_eq!(by_cursor, ranked(&whole)[..n], "{q:?} {mode:?} by cursor");
            assert!(n == whole.hits.len() || cursor.is_some(), "{q:?} {mode:?}: the cursors stopped early");
        }
    }
}

#[test]
fn a_page_past_the_window_is_refused() {
    let index = helpcenter();
    let request = SearchRequest::new("refund", Principal::public()).k(10).offset(95);
    assert!(matches!(index.search(&request), Err(Error::PageOutOfRange { end: 105, window: 100, .. })));
    let deeper = SearchRequest::new("refund", Principal::public()).k(10).offset(95).depth(200);
    assert!(index.search(&deeper).is_ok());
    // The last page the window holds names no next page.
    let last = index.search(&SearchRequest::new("the", Principal::public()).k(10).offset(90)).unwrap();
    assert!(last.next_cursor.is_none());
}

#[test]
fn cursors_are_refused_for_another_request_or_garbage() {
    let index = helpcenter();
    let first = index.search(&SearchRequest::new("refund", Principal::public()).k(3)).unwrap();
    let cursor = first.next_cursor.expect("a next page");
    for other in [
        SearchRequest::new("refunds", Principal::public()),
        SearchRequest::new("refund", Principal::public()).mode(Mode::Lexical),
        SearchRequest::new("refund", Principal::from_verified_tokens(["group:support"])),
        SearchRequest::new("refund", Principal::public()).depth(50),
    ] {
        let err = index.search(&other.cursor(cursor.as_str())).unwrap_err();
        assert!(matches!(err, Error::InvalidCursor { .. }), "{err}");
        assert!(err.is_user_error());
    }
    for garbage in ["", "abc", "0123456789", &cursor[..cursor.len() - 2]] {
        let err = index.search(&SearchRequest::new("refund", Principal::public()).cursor(garbage)).unwrap_err();
        assert!(matches!(err, Error::InvalidCursor { .. }), "{garbage:?}: {err}");
    }
    let both = SearchRequest::new("refund", Principal::public()).cursor(cursor.as_str()).offset(3);
    assert!(matches!(index.search(&both), Err(Error::InvalidRequest { .. })));
}

fn small(records: &[Record]) -> Index {
    let index = Index::create_in_ram(braid::IndexConfig::default()).unwrap();
    let mut w = index.writer().unwrap();
    for r in records {
        w.upsert(r).unwrap();
    }
    w.commit().unwrap();
    index
}

/// A cursor from before a commit that changed what the caller sees before it is a typed
/// error; a commit of records the caller may not see changes nothing, the cursor included.
#[test]
fn a_cursor_from_another_commit_is_stale_unless_only_hidden_records_changed() {
    let acme = Principal::from_verified_tokens(["tenant:acme"]);
    let records: Vec<Record> = (0..10)
        .map(|i| Record::new(format!("a{i}")).title("Refund").body("refund ".repeat(i + 1)).acl(["tenant:acme"]))
        .collect();
    let index = small(&records);
    let request = || SearchRequest::new("refund", acme.clone()).mode(Mode::Lexical).k(4);
    let first = index.search(&request()).unwrap();
    let cursor = first.next_cursor.clone().unwrap();
    let second = index.search(&request().cursor(cursor.as_str())).unwrap();

    // Another tenant's writes: the same pages, the same cursors.
    let mut w = index.writer().unwrap();
    for i in 0..5 {
        w.upsert(
            &Record::new(format!("g{i}")).title("Refund refund").body("refund refund refund").acl(["tenant:globex"]),
        )
        .unwrap();
    }
    w.commit().unwrap();
    drop(w);
    let again = index.search(&request()).unwrap();
    assert_eq!(again.next_cursor, first.next_cursor);
    let second_again = index.search(&request().cursor(cursor.as_str())).unwrap();
    assert_eq!(ranked(&second_again), ranked(&second));
    assert_eq!(second_again.next_cursor, second.next_cursor);

    // A visible record that ranks first: the cursor's earlier hits changed.
    let mut w = index.writer().unwrap();
    w.upsert(&Record::new("a-new").title("Refund refund refund").body("refund ".repeat(30)).acl(["tenant:acme"]))
        .unwrap();
    w.commit().unwrap();
    drop(w);
    let err = index.search(&request().cursor(cursor.as_str())).unwrap_err();
    assert!(matches!(err, Error::StaleCursor), "{err}");
}
