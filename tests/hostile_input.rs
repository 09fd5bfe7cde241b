//! Bad input gets an empty result or a typed error, never a panic.

use braid::{Error, Filter, Mode, Principal, SearchRequest, MAX_K, MAX_QUERY_BYTES};

use crate::common::index;

const MODES: [Mode; 3] = [Mode::Lexical, Mode::Fuzzy, Mode::Hybrid];

#[test]
fn odd_queries_never_panic() {
    let idx = index();
    let long_words = "refund ".repeat(2000);
    let queries = [
        "",
        "   \t\n ",
        "!!! ??? ... ---",
        "🙂🔥💥",
        "مرحبا بالعالم سياسة الاسترداد",
        "שלום עולם",
        "\"unbalanced (quotes",
        "a\u{0}b\u{202e}c",
        "\u{feff}\u{200b}",
        "Ｒｅｆｕｎｄ",
        "ǅ ß İ ﬁ",
        "AND OR NOT - + ~ ^ : * ?",
        "x".repeat(5000).leak(),
        long_words.as_str(),
    ];
    for mode in MODES {
        for q in queries {
            let r = idx.search(&SearchRequest::new(q, Principal::public()).mode(mode));
            assert!(r.is_ok(), "{mode:?} {:?}: {:?}", &q[..q.len().min(40)], r.err());
        }
    }
    let empty = idx.search(&SearchRequest::new("", Principal::public())).unwrap();
    assert!(empty.hits.is_empty());
    let punct = idx.search(&SearchRequest::new("!!! ???", Principal::public())).unwrap();
    assert!(punct.hits.is_empty());
}

#[test]
fn a_100_kb_query_is_a_typed_error() {
    let q = "refund policy ".repeat(100 * 1024 / 14 + 1);
    assert!(q.len() > 100 * 1024);
    for mode in MODES {
        let err = index().search(&SearchRequest::new(q.clone(), Principal::public()).mode(mode)).unwrap_err();
        assert!(matches!(err, Error::QueryTooLong { max: MAX_QUERY_BYTES, .. }), "{err}");
    }
}

#[test]
fn k_bounds() {
    let idx = index();
    let r = idx.search(&SearchRequest::new("refund", Principal::public()).k(0)).unwrap();
    assert!(r.hits.is_empty());
    let err = idx.search(&SearchRequest::new("refund", Principal::public()).k(MAX_K + 1)).unwrap_err();
    assert!(matches!(err, Error::InvalidRequest { .. }));
    let r = idx.search(&SearchRequest::new("refund", Principal::public()).k(MAX_K)).unwrap();
    assert!(r.hits.len() <= 10);
}

/// A leg weight that is not a finite, non-negative number is a typed error, not a ranking.
#[test]
fn leg_weights_are_finite_and_not_negative() {
    let idx = index();
    for bad in [f32::NAN, f32::INFINITY, -1.0] {
        let weights = braid::LegWeights { lexical: bad, ..braid::LegWeights::default() };
        let err = idx.search(&SearchRequest::new("refund", Principal::public()).weights(weights)).unwrap_err();
        assert!(matches!(err, Error::InvalidRequest { .. }), "{bad}: {err}");
    }
    let zero = braid::LegWeights { fuzzy: 0.0, ..braid::LegWeights::default() };
    assert!(idx.search(&SearchRequest::new("refund", Principal::public()).weights(zero)).is_ok());
}

#[test]
fn bad_records_are_rejected_without_losing_good_ones() {
    let idx = braid::Index::create_in_ram(braid::IndexConfig::default()).unwrap();
    let mut w = idx.writer().unwrap();
    w.upsert(&braid::Record::new("good").title("fine").body("ok")).unwrap();
    assert!(matches!(w.upsert(&braid::Record::new("")), Err(Error::InvalidRecord { .. })));
    assert!(matches!(w.upsert(&braid::Record::new("x").keyword("colour", "red")), Err(Error::UnknownField { .. })));
    assert!(matches!(
        w.upsert(&braid::Record::new("y").number("updated", f64::INFINITY)),
        Err(Error::InvalidRecord { .. })
    ));
    w.commit().unwrap();
    assert_eq!(idx.num_records(), 1);
}

/// Fuzz finding (`fuzz/fuzz_targets/query.rs`): a range filter without bounds made tantivy
/// panic ("At least one bound must be set"). Open and non-finite bounds now mean "any value".
#[test]
fn range_filters_without_finite_bounds_hold_every_value() {
    let idx = index();
    let bounds =
        [(None, None), (Some(f64::NAN), None), (None, Some(f64::INFINITY)), (Some(f64::NEG_INFINITY), Some(f64::NAN))];
    for (min, max) in bounds {
        for mode in MODES {
            let request = SearchRequest::new("refund relay kubernetes annual", Principal::public())
                .mode(mode)
                .filter(Filter::range("updated", min, max));
            let r = idx.search(&request).unwrap_or_else(|e| panic!("{mode:?} {min:?}..{max:?}: {e}"));
            let mut ids: Vec<&str> = r.hits.iter().map(|h| h.id.as_str()).collect();
            ids.sort();
            assert_eq!(ids, ["kubernetes-relay", "refund-annual"], "{mode:?} {min:?}..{max:?}");
        }
    }
    // One finite bound still bounds.
    let r = idx
        .search(&SearchRequest::new("refund relay", Principal::public()).filter(Filter::range(
            "updated",
            Some(1.75e9),
            None,
        )))
        .unwrap();
    assert_eq!(r.hits.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(), ["refund-annual"]);
}
