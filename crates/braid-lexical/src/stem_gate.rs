//! A Snowball English stemmer that skips the words that cannot stem to a wanted term.
//!
//! Snippets run the index's analyzer over each hit's whole body to find the query's terms,
//! and with English analysis nearly all of that time is stemming. Snowball English rewrites
//! only the end of a word: the first two letters of a word of three or more letters survive,
//! save for the exceptions "dying", "lying" and "tying" (→ "die", "lie", "tie") and stems of
//! one letter ("oed" → "o"), and shorter words are left alone. So a word that cannot begin a
//! wanted term cannot stem into one; this filter passes it through unstemmed, and stems the
//! rest as tantivy's `Stemmer` does. The terms it yields that are wanted are exactly those the
//! full analyzer yields (a unit test compares them; every word of SciFact and NFCorpus, 46,771,
//! keeps its first two letters when stemmed, but for "dying" and "oed").

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use rust_stemmers::{Algorithm, Stemmer};
use tantivy::tokenizer::{Token, TokenFilter, TokenStream, Tokenizer};

/// The first two characters of `word`, when it has at least two.
fn head(word: &str) -> Option<[char; 2]> {
    let mut chars = word.chars();
    Some([chars.next()?, chars.next()?])
}

/// Words whose stem does not begin with their own first two letters, with the heads their
/// stems begin with.
const HEAD_CHANGES: [([char; 2], [char; 2]); 3] =
    [(['d', 'y'], ['d', 'i']), (['l', 'y'], ['l', 'i']), (['t', 'y'], ['t', 'i'])];

/// The words worth stemming: those that begin like a wanted term.
#[derive(Debug, Default)]
struct Heads {
    /// First two letters of wanted terms of two letters or more.
    two: HashSet<[char; 2]>,
    /// Wanted terms of one letter: any word starting with it may stem to it.
    one: HashSet<char>,
}

impl Heads {
    fn may_stem_into_one(&self, word: &str) -> bool {
        head(word).is_some_and(|h| self.two.contains(&h)) || word.chars().next().is_some_and(|c| self.one.contains(&c))
    }
}

/// A stemming filter for snippets of the terms in `wanted`.
#[derive(Clone)]
pub(crate) struct GatedStemmer {
    heads: Arc<Heads>,
}

impl GatedStemmer {
    /// A filter that stems only words that may stem into one of `wanted` (analysed terms).
    pub fn new<'a>(wanted: impl IntoIterator<Item = &'a str>) -> Self {
        let mut heads = Heads::default();
        for term in wanted {
            match head(term) {
                Some(h) => {
                    heads.two.insert(h);
                }
                None => heads.one.extend(term.chars().next()),
            }
        }
        for (from, to) in HEAD_CHANGES {
            if heads.two.contains(&to) {
                heads.two.insert(from);
            }
        }
        GatedStemmer { heads: Arc::new(heads) }
    }
}

impl TokenFilter for GatedStemmer {
    type Tokenizer<T: Tokenizer> = GatedStemmerFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> GatedStemmerFilter<T> {
        GatedStemmerFilter { heads: self.heads, inner: tokenizer }
    }
}

#[derive(Clone)]
pub(crate) struct GatedStemmerFilter<T> {
    heads: Arc<Heads>,
    inner: T,
}

impl<T: Tokenizer> Tokenizer for GatedStemmerFilter<T> {
    type TokenStream<'a> = GatedStemmerStream<'a, T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        GatedStemmerStream {
            heads: &self.heads,
            stemmer: Stemmer::create(Algorithm::English),
            tail: self.inner.token_stream(text),
        }
    }
}

pub(crate) struct GatedStemmerStream<'a, T> {
    heads: &'a Heads,
    stemmer: Stemmer,
    tail: T,
}

impl<T: TokenStream> TokenStream for GatedStemmerStream<'_, T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token_mut();
        if self.heads.may_stem_into_one(&token.text) {
            let stemmed = match self.stemmer.stem(&token.text) {
                Cow::Owned(s) => Some(s),
                Cow::Borrowed(s) if s.len() != token.text.len() => Some(s.to_string()),
                Cow::Borrowed(_) => None,
            };
            if let Some(stemmed) = stemmed {
                token.text = stemmed;
            }
        }
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::{tokens, Analyzer};

    /// Where the full analyzer yields a wanted term, the gated one yields it too, and nowhere
    /// else: for every word of the text as the wanted term, and for the exceptions.
    #[test]
    fn finds_the_wanted_terms_the_full_analyzer_finds() {
        let text = "Dying, lying and tying: the skies cried while happy flies generously ran. Running \
            runners ran; early news of the atlas, cosmos and andes. Gently, only singly, ugly idly skis \
            sky-high! Policies, policy, politically: HTTP 451 errors, kubernetes nodes, don't won't \
            cafés naïve Übermaß 数据同步 retun returning returned. Agreed, feed, bleed, proceeding, \
            succeeded; hopping, hoping, cries, dies, ties, eyes, ies, y, ye, yes, yelling, oed, o.";
        let full = Analyzer::English.build();
        let all = tokens(&full, text);
        let mut wanted_sets: Vec<Vec<String>> = all.iter().map(|t| vec![t.text.clone()]).collect();
        wanted_sets.push(["die", "lie", "tie"].map(String::from).to_vec());
        wanted_sets.push(vec!["o".to_string()]);
        wanted_sets.push(all.iter().map(|t| t.text.clone()).collect());
        for wanted in wanted_sets {
            let found = |analyzer: &tantivy::tokenizer::TextAnalyzer| -> Vec<(usize, String)> {
                tokens(analyzer, text)
                    .into_iter()
                    .filter(|t| wanted.contains(&t.text))
                    .map(|t| (t.offset_from, t.text))
                    .collect()
            };
            let gated = Analyzer::English.build_finding(wanted.iter().map(String::as_str));
            assert_eq!(found(&gated), found(&full), "wanted {wanted:?}");
        }
    }
}
