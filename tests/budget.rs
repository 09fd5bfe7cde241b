//! `SearchRequest::token_budget`: the page packed into at most N tokens, counted by the
//! embedding model's tokenizer, or as words on an index without one.

use braid::{Index, Mode, Principal, Record, SearchRequest};

fn index_of(records: &[Record], builder: braid::IndexBuilder) -> Index {
    crate::common::in_ram_with(builder, records)
}

fn records() -> Vec<Record> {
    (0..6)
        .map(|i| {
            Record::new(format!("r{i}"))
                .title(format!("Refund note {i}"))
                .body(format!("A refund takes {i} days to reach the card used for the purchase."))
        })
        .collect()
}

/// Hits are taken in order while they fit; the count is in the stats; a page cut short has no
/// cursor, and the next page starts after the hits returned.
#[test]
fn a_budget_packs_the_page_and_counts_its_tokens() {
    let index = index_of(&records(), Index::builder());
    let request = SearchRequest::new("refund", Principal::public()).mode(Mode::Lexical).k(5);
    let whole = index.search(&request).unwrap();
    assert_eq!(whole.hits.len(), 5);
    assert!(whole.stats.tokens.is_none());
    let counted = index.search(&request.clone().token_budget(10_000)).unwrap();
    assert_eq!(counted.hits.len(), 5);
    assert!(counted.next_cursor.is_some());
    let words = counted.stats.tokens.unwrap();
    let per_hit = words / 5;
    // Words here: "Refund note N" and a 14-word snippet, 17 a hit.
    assert_eq!(per_hit * 5, words);
    let two = index.search(&request.clone().token_budget(per_hit * 2 + per_hit / 2)).unwrap();
    assert_eq!(
        two.hits.iter().map(|h| &h.id).collect::<Vec<_>>(),
        whole.hits[..2].iter().map(|h| &h.id).collect::<Vec<_>>()
    );
    assert_eq!(two.stats.tokens, Some(per_hit * 2));
    assert!(two.next_cursor.is_none());
    let none = index.search(&request.clone().token_budget(1)).unwrap();
    assert!(none.hits.is_empty());
    assert_eq!(none.stats.tokens, Some(0));
}

/// With a model, the budget counts its tokenizer's tokens.
#[cfg(feature = "models")]
#[test]
fn a_budget_counts_the_models_tokens() {
    use braid::Embedder;
    let model = std::sync::Arc::new(braid::models::OnnxEmbedder::builder().intra_threads(1).build().expect("model"));
    let index = index_of(&records(), Index::builder().embedder(model.clone()));
    let request = SearchRequest::new("refund", Principal::public()).mode(Mode::Lexical).k(3).token_budget(10_000);
    let response = index.search(&request).unwrap();
    let expected: usize =
        response.hits.iter().map(|h| model.count_tokens(&format!("{}\n{}", h.title, h.snippet.text)).unwrap()).sum();
    assert_eq!(response.stats.tokens, Some(expected));
    assert!(expected > 0);
}
