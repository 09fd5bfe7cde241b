//! The query as "did you mean" corrects it, for the legs that cannot read a misspelling.
//!
//! An embedding model reads a misspelt word as other subwords (`retun` as `re ##tun`), so the
//! vector of a misspelt query drifts away from the records that answer it; BM25 matches a word
//! no record holds nowhere. Each query word that no record the caller may see holds, and that
//! "did you mean" corrects, is therefore replaced by its correction: in the text the semantic
//! leg embeds (every mode), and in the text the lexical leg reads when the fuzzy leg runs
//! beside it (`hybrid`), which keeps the words as typed and so the chance that the
//! correction was wrong. `lexical` mode stays plain BM25 of the words as typed.
//!
//! The corrections come from the caller's visible records only (see
//! [`braid_lexical::View::query_words`]), so the corrected text does too.

use std::borrow::Cow;

use braid_lexical::QueryWord;

/// `text` with every word that has a suggestion in `words` replaced by it (matched whole and
/// case-insensitively); borrowed unchanged when there is none.
pub(super) fn corrected<'t>(text: &'t str, words: &[QueryWord]) -> Cow<'t, str> {
    let fixes: Vec<(&str, &str)> =
        words.iter().filter_map(|w| w.suggestion.as_ref().map(|s| (s.term.as_str(), s.suggestion.as_str()))).collect();
    if fixes.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut changed = false;
    for piece in pieces(text) {
        let lower = piece.starts_with(char::is_alphanumeric).then(|| piece.to_lowercase());
        let fix = lower.and_then(|lower| fixes.iter().find(|(term, _)| *term == lower));
        match fix {
            Some((_, fix)) => {
                out.push_str(fix);
                changed = true;
            }
            None => out.push_str(piece),
        }
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    }
}

/// `text` cut into runs of alphanumeric characters and runs of everything else, in order.
fn pieces(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let first = rest.chars().next()?;
        let word = first.is_alphanumeric();
        let end = rest.char_indices().find(|(_, c)| c.is_alphanumeric() != word).map_or(rest.len(), |(i, _)| i);
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use braid_core::Suggestion;

    use super::*;

    fn word(term: &str, fix: Option<&str>) -> QueryWord {
        QueryWord {
            word: term.into(),
            visible_df: usize::from(fix.is_none()),
            stop_word: false,
            suggestion: fix.map(|s| Suggestion { term: term.into(), suggestion: s.into(), distance: 1 }),
        }
    }

    #[test]
    fn replaces_whole_words_only_and_keeps_the_rest() {
        let words = [word("retun", Some("return")), word("policy", None)];
        assert_eq!(corrected("Retun policy, retuning?", &words), "return policy, retuning?");
        assert_eq!(corrected("(retun)", &words), "(return)");
    }

    #[test]
    fn borrows_when_nothing_is_corrected() {
        let words = [word("policy", None)];
        assert!(matches!(corrected("policy", &words), Cow::Borrowed("policy")));
        let words = [word("zzz", Some("zip"))];
        assert!(matches!(corrected("policy", &words), Cow::Borrowed(_)));
    }

    #[test]
    fn cuts_text_into_word_and_separator_runs() {
        assert_eq!(pieces("a-b  c").collect::<Vec<_>>(), ["a", "-", "b", "  ", "c"]);
        assert_eq!(pieces("").count(), 0);
        assert_eq!(pieces("日本語 x").collect::<Vec<_>>(), ["日本語", " ", "x"]);
    }
}
