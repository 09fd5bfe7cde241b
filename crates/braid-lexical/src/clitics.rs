//! English query text without the pieces that carry no meaning for BM25: clitics and the
//! pronoun "I".
//!
//! The tokenizer splits words at an apostrophe, so `Parkinson's` reads as `parkinson` and `s`,
//! and `I'd like` as `i`, `d` and `like`. In a document those one-letter pieces are harmless;
//! in a query each is a term with an IDF of its own, and in a corpus of titles a letter such as
//! `i` (`Part I`) or `d` (`3-D`) is rare enough to outweigh the words that matter. Lucene's
//! English analyzer drops the possessive `'s`; bm25s drops every token under two letters.
//! Braid keeps one-letter words (`complex I`, `vitamin D`, `C`), so it reads the query itself:
//!
//! - a clitic after an apostrophe between letters goes (`'s`, `'d`, `'m`, `'ll`, `'re`, `'ve`),
//!   and `n't` with it (`don't` reads `do`, `can't` `can`, `won't` `will`);
//! - the pronoun `I` goes: a lone `I` that had a clitic (`I'm`), or that starts the text or a
//!   clause (after `.`, `,`, `;`, `?`, a bracket…), or follows a word that a pronoun follows
//!   (`can I`, `if I`, `where can i`), unless a hyphen or a digit joins it to the next word
//!   (`I-carnitine`). A letter after a noun (`complex I proteins`, `type I`) stays.
//!
//! Only the lexical and fuzzy legs read the result; the semantic leg embeds the text as typed.

use std::borrow::Cow;

/// Words after which a lone `I` is the pronoun: auxiliaries, modals, conjunctions and
/// question words.
const BEFORE_PRONOUN: &[&str] = &[
    "am", "and", "as", "because", "but", "can", "could", "did", "do", "does", "had", "have", "how", "if", "may",
    "might", "must", "or", "please", "shall", "should", "so", "than", "that", "then", "though", "unless", "until",
    "was", "what", "when", "where", "whether", "which", "while", "who", "why", "will", "would",
];

/// Characters that start a clause: a lone `I` after one of them is the pronoun.
const CLAUSE_BREAKS: &[char] = &['.', ',', ';', ':', '!', '?', '(', '[', '{', '"', '“', '\n'];

/// `text` without English clitics and the pronoun `I` (see the module docs); borrowed when
/// nothing goes.
pub(crate) fn without_clitics(text: &str) -> Cow<'_, str> {
    if !text.contains(['\'', '’', 'i', 'I']) {
        return Cow::Borrowed(text);
    }
    let words = words(text);
    if !words.iter().any(|w| w.clitic.is_some() || w.is_pronoun_candidate(text)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (i, word) in words.iter().enumerate() {
        let drop_word = word.is_pronoun_candidate(text) && is_pronoun(text, &words, i);
        let (cut_from, keep) = match (drop_word, word.clitic) {
            (true, _) => (word.start, None),
            (false, Some(clitic)) => (clitic.apostrophe, clitic.replacement),
            (false, None) => continue,
        };
        let end = word.clitic.map_or(word.end, |c| c.end);
        out.push_str(&text[copied..cut_from]);
        if let Some(replacement) = keep {
            out.push_str(replacement);
        }
        copied = end;
    }
    out.push_str(&text[copied..]);
    // Nothing went; or the query was nothing but the pronoun ("I"), searched as typed.
    if copied == 0 || !out.contains(char::is_alphanumeric) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(out)
}

/// A word of the text (a run of alphanumerics) and the clitic attached to it.
#[derive(Debug, Clone, Copy)]
struct Word {
    start: usize,
    end: usize,
    clitic: Option<Clitic>,
}

/// An apostrophe and the clitic after it: bytes `apostrophe..end` are replaced by `replacement`
/// (`None`: removed).
#[derive(Debug, Clone, Copy)]
struct Clitic {
    apostrophe: usize,
    end: usize,
    replacement: Option<&'static str>,
}

impl Word {
    fn is_pronoun_candidate(&self, text: &str) -> bool {
        matches!(&text[self.start..self.end], "I" | "i")
    }
}

/// The words of `text`, each with the clitic that follows it (a clitic is the word right after
/// an apostrophe that joins two words).
fn words(text: &str) -> Vec<Word> {
    let mut out: Vec<Word> = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if !c.is_alphanumeric() {
            continue;
        }
        let mut end = start + c.len_utf8();
        while let Some((i, c)) = chars.next_if(|&(_, c)| c.is_alphanumeric()) {
            end = i + c.len_utf8();
        }
        let word = Word { start, end, clitic: None };
        match out.last_mut() {
            Some(previous) if previous.clitic.is_none() && matches!(&text[previous.end..start], "'" | "’") => {
                match clitic(text, *previous, word) {
                    Some(c) => previous.clitic = Some(c),
                    None => out.push(word),
                }
            }
            _ => out.push(word),
        }
    }
    out
}

/// The clitic `next` is, after `word` and an apostrophe, if it is one.
fn clitic(text: &str, word: Word, next: Word) -> Option<Clitic> {
    let after = &text[next.start..next.end];
    let apostrophe = word.end;
    let end = next.end;
    let lower = after.to_ascii_lowercase();
    let removed = Clitic { apostrophe, end, replacement: None };
    match lower.as_str() {
        "s" | "d" | "m" | "ll" | "re" | "ve" => Some(removed),
        "t" => {
            let stem = &text[word.start..word.end];
            let lower_stem = stem.to_ascii_lowercase();
            let (cut, replacement) = match lower_stem.as_str() {
                "can" => (stem.len(), None),
                "won" => (0, Some("will")),
                "shan" => (0, Some("shall")),
                s if s.ends_with('n') && s.len() > 1 => (stem.len() - 1, None),
                _ => return None,
            };
            Some(Clitic { apostrophe: word.start + cut, end, replacement })
        }
        _ => None,
    }
}

/// Whether the lone `I` at `words[i]` is the pronoun.
fn is_pronoun(text: &str, words: &[Word], i: usize) -> bool {
    let word = words[i];
    if word.clitic.is_some() {
        return true;
    }
    // Joined to the next word by a hyphen or a digit: a name (`I-carnitine`), not the pronoun.
    if text[word.end..].starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
        return false;
    }
    let Some(previous) = i.checked_sub(1).map(|p| words[p]) else { return true };
    let gap = &text[previous.clitic.map_or(previous.end, |c| c.end)..word.start];
    if gap.contains(CLAUSE_BREAKS) {
        return true;
    }
    let before = text[previous.start..previous.end].to_ascii_lowercase();
    BEFORE_PRONOUN.binary_search(&before.as_str()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each text and what the legs read of it (spaces collapsed).
    fn reads_as(cases: &[(&str, &str)]) {
        for (text, expected) in cases {
            let read = without_clitics(text).split_whitespace().collect::<Vec<_>>().join(" ");
            assert_eq!(read, *expected, "{text:?}");
        }
    }

    #[test]
    fn the_list_is_sorted_for_binary_search() {
        assert!(BEFORE_PRONOUN.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn clitics_go() {
        reads_as(&[
            ("Avoiding Dairy to Prevent Parkinson's", "Avoiding Dairy to Prevent Parkinson"),
            ("Treating Parkinson’s Disease", "Treating Parkinson Disease"),
            ("kuchemann's and multhopp's methods", "kuchemann and multhopp methods"),
            ("they're here, we've seen, you'll see", "they here, we seen, you see"),
            ("Don't Forget Fiber", "Do Forget Fiber"),
            ("can't the static shapes", "can the static shapes"),
            ("it won't work, it isn't", "it will work, it is"),
        ]);
    }

    #[test]
    fn the_pronoun_goes() {
        reads_as(&[
            ("I'd like to find articles", "like to find articles"),
            ("I'm interested in mechanisms", "interested in mechanisms"),
            ("I AM INTERESTED IN CIRCUITRY", "AM INTERESTED IN CIRCUITRY"),
            ("Should I stay away from soy if I have cancer?", "Should stay away from soy if have cancer?"),
            ("where can i find pressure data", "where can find pressure data"),
            ("What is a type? (I don't know)", "What is a type? ( do know)"),
            ("He said \"I am\"", "He said \" am\""),
        ]);
    }

    #[test]
    fn letters_that_mean_something_stay() {
        for text in [
            "respiratory complex I proteins ND3 and ND6",
            "Type I diabetes and phase I trials, type-I and Type/I",
            "Higher plasma levels of I-carnitine",
            "vitamin D and C",
            "O'Reilly's books",
            "rock'n'roll",
            "it is what it is",
            "",
            "'s",
            "I",
        ] {
            let read = without_clitics(text);
            if text == "O'Reilly's books" {
                assert_eq!(read, "O'Reilly books");
            } else {
                assert!(matches!(read, Cow::Borrowed(_)), "{text:?} became {read:?}");
            }
        }
    }

    proptest::proptest! {
        /// Any text (apostrophes, lone letters, any Unicode) reads without a panic and never grows.
        #[test]
        fn any_text_reads(text in "[a-zA-Z0-9 '’.,?I-]{0,40}|\\PC{0,20}") {
            let read = without_clitics(&text);
            proptest::prop_assert!(read.len() <= text.len());
        }
    }
}
