//! Mixed-script tokenization: Latin words as the English analyzer has always seen them,
//! Chinese segmented into words (jieba, search mode, with character bigrams for words its
//! dictionary does not know), Japanese and Korean as character bigrams.
//!
//! Text without any CJK character goes through tantivy's `SimpleTokenizer` unchanged, so
//! English analysis is exactly what it was before CJK support.
//!
//! Without the `cjk` feature there is no jieba dictionary: Chinese Han runs are cut into
//! overlapping character bigrams (a lone character stays a unigram), exactly as Japanese Han
//! runs always are — the dictionary-free cut that CJK search engines fall back on, which
//! finds every two-character word at the cost of some false matches across word boundaries.
//! Latin, kana and Hangul text is cut the same either way. Writers and readers of one index
//! must agree on the feature when it holds Chinese text, since the index keeps the terms the
//! writer's cut produced.

#[cfg(feature = "cjk")]
use std::sync::OnceLock;

use braid_core::{is_cjk, is_hangul, is_kana, Language};
#[cfg(feature = "cjk")]
use jieba_rs::Jieba;
use tantivy::tokenizer::{SimpleTokenStream, SimpleTokenizer, Token, TokenStream, Tokenizer};

/// The jieba segmenter with its bundled dictionary, loaded on first use (only text with Han
/// characters ever pays for it).
#[cfg(feature = "cjk")]
pub(crate) fn jieba() -> &'static Jieba {
    static JIEBA: OnceLock<Jieba> = OnceLock::new();
    JIEBA.get_or_init(Jieba::new)
}

/// How runs of Han characters are cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HanMode {
    /// Chinese: jieba words.
    Words,
    /// Japanese and Korean: character bigrams, like kana and Hangul.
    Bigrams,
}

impl HanMode {
    /// The mode a language asks for; `None` for non-CJK languages, whose (rare) CJK
    /// characters are cut by script (Han as Chinese words unless the text holds kana).
    pub fn of(language: Language) -> Option<HanMode> {
        match language {
            Language::Zh => Some(HanMode::Words),
            Language::Ja | Language::Ko => Some(HanMode::Bigrams),
            _ => None,
        }
    }
}

/// Splits text into words like `SimpleTokenizer` (runs of alphanumerics), except that runs of
/// CJK characters are segmented: Han runs by jieba (`cut_for_search`, HMM on) plus the
/// character bigrams of every word jieba's dictionary lacks and of every run of single
/// characters; kana and Hangul runs as overlapping character bigrams (a lone character stays a
/// unigram). Han runs are bigrams too in [`HanMode::Bigrams`], or, without a mode, in text that
/// holds kana (Japanese).
#[derive(Clone, Default)]
pub(crate) struct MixedTokenizer {
    simple: SimpleTokenizer,
    han: Option<HanMode>,
}

impl MixedTokenizer {
    /// A tokenizer cutting Han runs as `han` says (by script when `None`).
    pub fn new(han: Option<HanMode>) -> Self {
        MixedTokenizer { simple: SimpleTokenizer::default(), han }
    }
}

/// The token stream of [`MixedTokenizer`].
pub(crate) enum MixedTokenStream<'a> {
    /// Text without CJK characters: tantivy's own tokenizer, untouched.
    Simple(SimpleTokenStream<'a>),
    /// Text with CJK characters: every token, computed up front.
    Segmented { tokens: Vec<Token>, next: usize },
}

impl Tokenizer for MixedTokenizer {
    type TokenStream<'a> = MixedTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> MixedTokenStream<'a> {
        if !text.chars().any(is_cjk) {
            return MixedTokenStream::Simple(self.simple.token_stream(text));
        }
        // A CJK character always makes at least one token, so `token()` has one to return.
        MixedTokenStream::Segmented { tokens: segment(text, self.han), next: 0 }
    }
}

impl TokenStream for MixedTokenStream<'_> {
    fn advance(&mut self) -> bool {
        match self {
            MixedTokenStream::Simple(s) => s.advance(),
            MixedTokenStream::Segmented { tokens, next } => {
                *next += 1;
                *next <= tokens.len()
            }
        }
    }

    fn token(&self) -> &Token {
        match self {
            MixedTokenStream::Simple(s) => s.token(),
            MixedTokenStream::Segmented { tokens, next } => &tokens[next.saturating_sub(1).min(tokens.len() - 1)],
        }
    }

    fn token_mut(&mut self) -> &mut Token {
        match self {
            MixedTokenStream::Simple(s) => s.token_mut(),
            MixedTokenStream::Segmented { tokens, next } => {
                let i = next.saturating_sub(1).min(tokens.len() - 1);
                &mut tokens[i]
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Run {
    /// Letters and digits of non-CJK scripts.
    Word,
    /// Han characters (and kana, in Japanese text).
    Han,
    /// Kana and Hangul: always bigrams.
    Bigram,
}

fn run_of(c: char, japanese: bool) -> Option<Run> {
    if is_hangul(c) || is_kana(c) {
        Some(if japanese && is_kana(c) { Run::Han } else { Run::Bigram })
    } else if is_cjk(c) {
        Some(Run::Han)
    } else if c.is_alphanumeric() {
        Some(Run::Word)
    } else {
        None
    }
}

/// Every token of `text`, in order, positions counted from 0. `text` holds a CJK character
/// (the segmented tokens are never empty).
fn segment(text: &str, han: Option<HanMode>) -> Vec<Token> {
    let japanese = match han {
        Some(mode) => mode == HanMode::Bigrams,
        None => text.chars().any(is_kana),
    };
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        let Some(kind) = run_of(c, japanese) else { continue };
        let mut end = start + c.len_utf8();
        while let Some(&(i, next)) = chars.peek() {
            if run_of(next, japanese) != Some(kind) {
                break;
            }
            end = i + next.len_utf8();
            chars.next();
        }
        match kind {
            Run::Word => push(&mut out, text, start, end),
            Run::Han if !japanese => han_words(&mut out, text, start, end),
            Run::Han | Run::Bigram => bigrams(&mut out, text, start, end),
        }
    }
    out
}

fn push(out: &mut Vec<Token>, text: &str, from: usize, to: usize) {
    out.push(Token {
        offset_from: from,
        offset_to: to,
        position: out.len(),
        text: text[from..to].to_string(),
        position_length: 1,
    });
}

/// Overlapping character bigrams of `text[from..to]`; a single character stays a unigram.
fn bigrams(out: &mut Vec<Token>, text: &str, from: usize, to: usize) {
    let offsets: Vec<usize> = text[from..to].char_indices().map(|(i, _)| from + i).chain([to]).collect();
    if offsets.len() <= 2 {
        push(out, text, from, to);
        return;
    }
    for w in offsets.windows(3) {
        push(out, text, w[0], w[2]);
    }
}

/// A Chinese Han run without a dictionary (no `cjk` feature): its character bigrams.
#[cfg(not(feature = "cjk"))]
fn han_words(out: &mut Vec<Token>, text: &str, from: usize, to: usize) {
    bigrams(out, text, from, to);
}

/// jieba's search-mode words for a Han run, with bigram fallbacks for unknown words.
#[cfg(feature = "cjk")]
fn han_words(out: &mut Vec<Token>, text: &str, from: usize, to: usize) {
    let jieba = jieba();
    let run = &text[from..to];
    // Runs of consecutive single characters: jieba could not place them in any word.
    let mut singles: Option<(usize, usize, usize)> = None; // (start, end, count)
    let flush = |out: &mut Vec<Token>, singles: &mut Option<(usize, usize, usize)>| {
        if let Some((s, e, n)) = singles.take() {
            if n >= 2 {
                bigrams(out, text, s, e);
            }
        }
    };
    let tokens = jieba.cut_for_search(run, true);
    if tokens.is_empty() {
        bigrams(out, text, from, to);
        return;
    }
    for token in tokens {
        let (s, e) = (from + token.byte_start, from + token.byte_end);
        push(out, text, s, e);
        let n = token.end - token.start;
        if n == 1 {
            singles = match singles {
                Some((ss, se, count)) if se == s => Some((ss, e, count + 1)),
                _ => {
                    flush(out, &mut singles);
                    Some((s, e, 1))
                }
            };
        } else {
            flush(out, &mut singles);
            if n > 2 && !jieba.has_word(token.word) {
                bigrams(out, text, s, e);
            }
        }
    }
    flush(out, &mut singles);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        words_in(text, None)
    }

    fn words_in(text: &str, han: Option<HanMode>) -> Vec<String> {
        let mut t = MixedTokenizer::new(han);
        let mut s = t.token_stream(text);
        let mut out = Vec::new();
        while s.advance() {
            out.push(s.token().text.clone());
        }
        out
    }

    #[test]
    fn latin_text_is_untouched() {
        assert_eq!(words("Hello, happy tax-payer 4.12!"), ["Hello", "happy", "tax", "payer", "4", "12"]);
        assert!(words("").is_empty());
    }

    #[cfg(feature = "cjk")]
    #[test]
    fn chinese_is_segmented_and_latin_kept() {
        let w = words("Obsidian Sync同步失败了");
        assert_eq!(&w[..2], ["Obsidian", "Sync"]);
        assert!(w.contains(&"同步".to_string()) && w.contains(&"失败".to_string()), "{w:?}");
    }

    #[test]
    fn kana_and_hangul_are_bigrams() {
        assert_eq!(words("同期に失敗"), ["同期", "期に", "に失", "失敗"]);
        assert_eq!(words("동기화 실패"), ["동기", "기화", "실패"]);
        assert_eq!(words("の"), ["の"]);
    }

    #[cfg(not(feature = "cjk"))]
    #[test]
    fn without_a_dictionary_chinese_is_bigrams_and_latin_kept() {
        assert_eq!(words("Obsidian Sync同步失败了"), ["Obsidian", "Sync", "同步", "步失", "失败", "败了"]);
        assert_eq!(words_in("同步", Some(HanMode::Words)), ["同步"]);
        assert_eq!(words_in("东", Some(HanMode::Words)), ["东"]);
        assert_eq!(words_in("東京都", Some(HanMode::Words)), words_in("東京都", Some(HanMode::Bigrams)));
    }

    #[cfg(feature = "cjk")]
    #[test]
    fn language_decides_how_han_is_cut() {
        assert_eq!(words_in("東京都", Some(HanMode::Bigrams)), ["東京", "京都"]);
        let as_chinese = words_in("東京都庁 都庁舎案内", Some(HanMode::Words));
        assert!(!as_chinese.contains(&"東京".to_string()), "{as_chinese:?}");
        assert_eq!(words_in("東京", Some(HanMode::Words)), ["東京"]);
        assert!(words_in("同步失败", Some(HanMode::Words)).contains(&"同步".to_string()));
        assert_eq!(HanMode::of(Language::Ko), Some(HanMode::Bigrams));
        assert_eq!(HanMode::of(Language::Other), None);
    }

    #[test]
    fn odd_cjk_never_panics_and_always_yields_tokens() {
        for text in ["々", "〇", "𠀀𠀁", "ｶﾀｶﾅ", "ㄱ", "中\u{0301}文", "a々b", "。，！"] {
            let w = words(text);
            assert_eq!(w.is_empty(), !text.chars().any(is_cjk), "{text:?}: {w:?}");
        }
    }
}
