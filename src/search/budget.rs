//! Stage 10b, the token budget: the page packed into at most N tokens of text
//! ([`braid_core::SearchRequest::token_budget`]).

use braid_core::{Embedder, Hit};

/// The text of a hit that counts against a budget: what a caller puts in a model's context —
/// its title, section path and snippet.
fn text(hit: &Hit) -> String {
    let mut out = hit.title.clone();
    if !hit.section.is_empty() {
        out.push_str(" — ");
        out.push_str(&hit.section.join(" > "));
    }
    out.push('\n');
    out.push_str(&hit.snippet.text);
    out
}

/// The tokens of `text`: by `embedder`'s tokenizer when it has one, else its words (runs of
/// letters and digits).
fn tokens(embedder: Option<&dyn Embedder>, text: &str) -> usize {
    embedder
        .and_then(|e| e.count_tokens(text))
        .unwrap_or_else(|| text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).count())
}

/// How many of `hits`, in order, fit in `budget` tokens, and the tokens they hold: hits are
/// taken until the next would not fit.
pub(super) fn pack(hits: &[Hit], budget: usize, embedder: Option<&dyn Embedder>) -> (usize, usize) {
    let mut used = 0;
    for (i, hit) in hits.iter().enumerate() {
        let n = tokens(embedder, &text(hit));
        if used + n > budget {
            return (i, used);
        }
        used += n;
    }
    (hits.len(), used)
}

#[cfg(test)]
mod tests {
    use super::*;
    use braid_core::{Explain, Snippet};

    fn hit(title: &str, snippet: &str) -> Hit {
        let mut hit = Hit::id_only(title.into(), 1.0, Explain::default());
        hit.title = title.into();
        hit.snippet = Snippet { text: snippet.into(), highlights: Vec::new() };
        hit
    }

    #[test]
    fn hits_are_taken_in_order_until_the_next_would_not_fit() {
        // Words without a tokenizer: 1 + 4, 1 + 2, 1 + 6.
        let hits =
            [hit("Refunds", "within thirty days, always"), hit("Invoices", "monthly PDF"), hit("SSO", "a b c d e f")];
        assert_eq!(pack(&hits, 100, None), (3, 15));
        assert_eq!(pack(&hits, 8, None), (2, 8));
        assert_eq!(pack(&hits, 7, None), (1, 5));
        assert_eq!(pack(&hits, 4, None), (0, 0));
    }
}
