//! Grouping (`SearchRequest::group_by`) and maximal marginal relevance (`SearchRequest::mmr`)
//! over the final order, through the facade.

use braid::{Error, Index, Mode, Principal, Record, SearchRequest};

fn ids(index: &Index, request: &SearchRequest) -> Vec<String> {
    index.search(request).unwrap().hits.into_iter().map(|h| h.id).collect()
}

fn index_of(records: &[Record]) -> Index {
    crate::common::in_ram_with(Index::builder(), records)
}

/// Three sections of one article and one of another, all about refunds.
fn sections() -> Vec<Record> {
    let section = |id: &str, parent: &str, body: &str| Record::new(id).title("Refunds").body(body).parent(parent);
    vec![
        section("refunds#annual", "refunds", "Refund an annual plan within 30 days for a full refund."),
        section("refunds#monthly", "refunds", "Monthly plans get a refund for the unused days."),
        section("refunds#hardware", "refunds", "Hardware is refunded once the device is back."),
        section("billing#refund-status", "billing", "See the refund status of an invoice in billing."),
    ]
}

#[test]
fn group_by_parent_keeps_n_sections_an_article() {
    let index = index_of(&sections());
    let request = SearchRequest::new("refund", Principal::public()).mode(Mode::Lexical).k(10);
    assert_eq!(ids(&index, &request).len(), 4);
    let two = ids(&index, &request.clone().group_by("parent", 2));
    assert_eq!(two.iter().filter(|id| id.starts_with("refunds#")).count(), 2, "{two:?}");
    assert!(two.contains(&"billing#refund-status".to_string()), "{two:?}");
    // One a group is collapse.
    assert_eq!(ids(&index, &request.clone().group_by("parent", 1)), ids(&index, &request.clone().collapse(true)));
}

/// Two near copies and one different record: MMR puts the different one second.
fn near_copies(with_vectors: bool) -> Index {
    let record = |id: &str, body: &str, v: [f32; 3]| {
        let r = Record::new(id).title("Refund policy").body(body);
        if with_vectors {
            r.vector(v.to_vec())
        } else {
            r
        }
    };
    index_of(&[
        record("policy", "refund policy refund within thirty days", [1.0, 0.0, 0.0]),
        record("policy-copy", "refund policy refund within thirty days", [0.99, 0.1, 0.0]),
        record("hardware", "refund policy for hardware returned by post", [0.0, 0.0, 1.0]),
    ])
}

#[test]
fn mmr_puts_a_different_record_before_a_near_copy() {
    for with_vectors in [true, false] {
        let index = near_copies(with_vectors);
        let request = SearchRequest::new("refund policy refund", Principal::public()).mode(Mode::Lexical).k(3);
        let plain = ids(&index, &request);
        assert_eq!(plain[2], "hardware", "{plain:?}");
        assert_eq!(ids(&index, &request.clone().mmr(1.0)), plain, "lambda 1 keeps the order");
        let diverse = ids(&index, &request.clone().mmr(0.3));
        assert_eq!(diverse[0], plain[0]);
        assert_eq!(diverse[1], "hardware", "vectors: {with_vectors}, {diverse:?}");
        // Pages agree with the whole ranking.
        let first = index.search(&request.clone().mmr(0.3).k(1)).unwrap();
        let cursor = first.next_cursor.clone().expect("a next page");
        let second = ids(&index, &request.clone().mmr(0.3).k(1).cursor(cursor));
        assert_eq!([first.hits[0].id.clone(), second[0].clone()], diverse[..2]);
    }
}

#[test]
fn bad_grouping_and_lambda_are_typed_errors() {
    let index = index_of(&sections());
    let request = SearchRequest::new("refund", Principal::public());
    assert!(matches!(index.search(&request.clone().group_by("nope", 1)), Err(Error::UnknownField { .. })));
    assert!(matches!(index.search(&request.clone().group_by("parent", 0)), Err(Error::InvalidRequest { .. })));
    for lambda in [-0.5, 1.5, f32::NAN] {
        assert!(matches!(index.search(&request.clone().mmr(lambda)), Err(Error::InvalidRequest { .. })), "{lambda}");
    }
    assert!(index.search(&request.group_by("category", 2).mmr(0.5)).is_ok());
}
