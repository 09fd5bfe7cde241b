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
//! Chinese is written without spaces, so a run of Han characters holds several words (jieba's
//! cut of `同步冲图` is `同步` and `冲图`): a correction of a CJK word (`冲图` → `冲突`, a
//! homophone typo) replaces the word inside its run, where a Latin word is replaced only as a
//! whole run of letters and digits.
//!
//! The corrections come from the caller's visible records only (see
//! [`braid_lexical::View::query_words`]), so the corrected text does too.

use std::borrow::Cow;

use braid_core::is_cjk;
use braid_lexical::QueryWord;

/// `text` with every word that has a suggestion in `words` replaced by it: a Latin word matched
/// whole and case-insensitively, a CJK word wherever it occurs inside a run that holds CJK
/// characters (longest words first). Borrowed unchanged when nothing is replaced.
pub(super) fn corrected<'t>(text: &'t str, words: &[QueryWord]) -> Cow<'t, str> {
    let fixes: Vec<(&str, &str)> =
        words.iter().filter_map(|w| w.suggestion.as_ref().map(|s| (s.term.as_str(), s.suggestion.as_str()))).collect();
    if fixes.is_empty() {
        return Cow::Borrowed(text);
    }
    // CJK words are found inside their runs; a longer word first, so that `审记日志` is
    // replaced whole before its part `审记` could be.
    let mut inside: Vec<(&str, &str)> = fixes.iter().copied().filter(|(term, _)| term.chars().any(is_cjk)).collect();
    inside.sort_by_key(|(term, _)| std::cmp::Reverse(term.len()));
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
            None if !inside.is_empty() && piece.chars().any(is_cjk) => {
                let mut run = Cow::Borrowed(piece);
                for (term, fix) in &inside {
                    if run.contains(term) {
                        run = Cow::Owned(run.replace(term, fix));
                        changed = true;
                    }
                }
                out.push_str(&run);
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
    fn replaces_chinese_words_inside_their_run() {
        // A homophone typo inside a run of Han characters, as jieba cuts it.
        let words = [word("同步", None), word("冲图", Some("冲突"))];
        assert_eq!(corrected("同步冲图", &words), "同步冲突");
        assert_eq!(corrected("Excel 同步冲图，怎么办", &words), "Excel 同步冲突，怎么办");
        // A pinyin word is a Latin run, replaced whole.
        let words = [word("tuikuan", Some("退款"))];
        assert_eq!(corrected("tuikuan shenqing", &words), "退款 shenqing");
        // A Latin correction never reaches into a Chinese run, nor a Chinese one into a Latin run.
        let words = [word("sync", Some("sync")), word("ab", Some("cd")), word("图", Some("突"))];
        assert_eq!(corrected("abc同步图ab", &words), "abc同步突ab");
    }

    #[test]
    fn a_longer_chinese_word_is_replaced_before_its_part() {
        let words = [word("审记", Some("审计")), word("审记日志", Some("审计日志")), word("日志", None)];
        assert_eq!(corrected("审记日志保留多久", &words), "审计日志保留多久");
        let words = [word("审记", Some("审核")), word("审记日志", Some("审计日志"))];
        assert_eq!(corrected("审记日志和审记", &words), "审计日志和审核");
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
