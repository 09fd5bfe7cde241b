//! Pinyin recall for Chinese: the Chinese words of a snapshot's vocabulary keyed by their
//! pronunciation, so that a query typed in pinyin ("tongbu", "tong bu", "tóng bù", "tong2 bu4"),
//! by initials where they name one word ("tbsb"), or with a homophone typo (同部 for 同步)
//! reaches the words the records hold.
//!
//! Keys are toneless pinyin syllables joined without spaces (`ü` written both `v` and `u`);
//! every reading of a heteronym counts. Only words of two or more characters get keys: a
//! single syllable names too many characters to mean anything.

use std::collections::HashMap;
use std::sync::Arc;

use braid_core::is_han;
#[cfg(feature = "cjk")]
use pinyin::ToPinyinMulti;

use crate::vocabulary::Vocabulary;

/// Visible document frequency of a word: how the caller's records know it.
pub(crate) type Df<'a> = dyn Fn(&str) -> u64 + 'a;

/// Weight of a word reached through its full pinyin, relative to an exact match (1.0).
pub(crate) const PINYIN_WEIGHT: f32 = 0.8;
/// Weight of a word reached through its initials.
pub(crate) const INITIALS_WEIGHT: f32 = 0.6;
/// Weight of a word reached through a homophone (same pinyin, other characters).
pub(crate) const HOMOPHONE_WEIGHT: f32 = 0.8;
/// Words kept per pinyin key, most frequent first.
const WORDS_PER_KEY: usize = 3;
/// Readings kept per character, and pronunciations kept per word (heteronyms multiply).
#[cfg_attr(not(feature = "cjk"), allow(dead_code))]
const READINGS_PER_CHAR: usize = 3;
#[cfg_attr(not(feature = "cjk"), allow(dead_code))]
const KEYS_PER_WORD: usize = 8;
/// Chinese words longer than this many characters get no keys.
const MAX_WORD_CHARS: usize = 8;
/// Characters of a query read for homophones.
const MAX_HOMOPHONE_CHARS: usize = 256;
/// Cost of leaving a query word or character unexplained while segmenting.
const SKIP_COST: f32 = 10.0;

/// Chinese words by pronunciation.
#[derive(Default)]
pub(crate) struct Phonetic {
    /// Full toneless pinyin → words (with document frequency), most frequent first.
    full: HashMap<String, Vec<(String, u64)>>,
    /// Initials → words; only keys naming exactly one word are used.
    initials: HashMap<String, Vec<(String, u64)>>,
    /// The longest full key, in bytes.
    longest: usize,
}

/// Words a span of the query may have meant, with the weight of each.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reading {
    pub words: Vec<String>,
    pub weight: f32,
}

impl Phonetic {
    /// Keys every Chinese word of the `vocabularies` (words of Han characters only), with its
    /// document frequency summed over them.
    pub fn build(vocabularies: &[Arc<Vocabulary>]) -> Phonetic {
        let mut words: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
        for vocabulary in vocabularies {
            for (word, df) in vocabulary.han_words() {
                *words.entry(word).or_insert(0) += df;
            }
        }
        let mut out = Phonetic::default();
        for (word, df) in words {
            let chars = word.chars().count();
            if !(2..=MAX_WORD_CHARS).contains(&chars) || !word.chars().all(is_han) {
                continue;
            }
            let (full, initials) = keys(&word);
            for key in full {
                out.longest = out.longest.max(key.len());
                out.full.entry(key).or_default().push((word.clone(), df));
            }
            for key in initials {
                out.initials.entry(key).or_default().push((word.clone(), df));
            }
        }
        for list in out.full.values_mut().chain(out.initials.values_mut()) {
            list.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            list.dedup_by(|a, b| a.0 == b.0);
        }
        out
    }
}

/// Chinese words by key: a snapshot's own [`Phonetic`] table, or one gathered across indexes
/// (`crate::gathered`).
pub(crate) trait PinyinKeys {
    /// The words whose full pinyin is `key`, with document frequencies (any order).
    fn full(&self, key: &str) -> Vec<(String, u64)>;
    /// The words whose initials are `key`, with document frequencies (any order).
    fn initials(&self, key: &str) -> Vec<(String, u64)>;
    /// The longest full key, in bytes (0: no Chinese word is keyed).
    fn longest(&self) -> usize;
    /// Whether no Chinese word is keyed (an English corpus): then nothing here runs.
    fn is_empty(&self) -> bool {
        self.longest() == 0
    }
}

impl PinyinKeys for Phonetic {
    fn full(&self, key: &str) -> Vec<(String, u64)> {
        self.full.get(key).cloned().unwrap_or_default()
    }

    fn initials(&self, key: &str) -> Vec<(String, u64)> {
        self.initials.get(key).cloned().unwrap_or_default()
    }

    fn longest(&self) -> usize {
        self.longest
    }
}

/// What the query's words and characters read as, through any [`PinyinKeys`] table; every
/// word kept is one allowed records hold (`df`), most frequent among them first.
pub(crate) trait Readings: PinyinKeys {
    /// The words a key names that allowed records hold (`df`), most frequent among those
    /// first: a word only hidden records hold is never read, nor pushes another out.
    fn lookup(&self, key: &str, df: &Df<'_>) -> Option<Reading> {
        let words = visible_words(&self.full(key), df);
        if !words.is_empty() {
            return Some(Reading { words, weight: PINYIN_WEIGHT });
        }
        let named = visible_words(&self.initials(key), df);
        match named.as_slice() {
            [_] => Some(Reading { words: named, weight: INITIALS_WEIGHT }),
            _ => None,
        }
    }

    /// Pinyin typed in Latin letters: `words` are the query's analysed words; runs of
    /// consecutive words that the vocabulary does not know and that spell pinyin (a tone
    /// number may end each) are read as Chinese words. Returns the indexes of the words so
    /// explained and what they read as.
    fn latin(&self, words: &[String], df: &Df<'_>) -> (Vec<usize>, Vec<Reading>) {
        let mut consumed = Vec::new();
        let mut readings = Vec::new();
        if self.is_empty() {
            return (consumed, readings);
        }
        let candidate = |w: &String| -> Option<String> {
            let stripped = w.strip_suffix(['1', '2', '3', '4', '5']).unwrap_or(w);
            let letters = !stripped.is_empty() && stripped.bytes().all(|b| b.is_ascii_lowercase());
            (letters && df(w) == 0 && df(stripped) == 0).then(|| stripped.to_string())
        };
        let mut i = 0;
        while i < words.len() {
            let mut run: Vec<(usize, String)> = Vec::new();
            while let Some(s) = words.get(i).and_then(&candidate) {
                run.push((i, s));
                i += 1;
            }
            if run.is_empty() {
                i += 1;
                continue;
            }
            // Segment the run's letters, joined, into keys; a word may be skipped whole.
            let joined: String = run.iter().map(|(_, s)| s.as_str()).collect();
            let mut starts = Vec::with_capacity(run.len() + 1);
            let mut at = 0;
            for (_, s) in &run {
                starts.push(at);
                at += s.len();
            }
            starts.push(at);
            let pieces = cheapest_path(joined.len(), |from| {
                let mut steps = Vec::new();
                for to in (from + 2)..=joined.len().min(from + self.longest().max(2)) {
                    let key = &joined[from..to];
                    if let Some(reading) = self.lookup(key, df) {
                        let c = if reading.weight == PINYIN_WEIGHT { 1.0 } else { 1.5 };
                        steps.push((to, c, Some(reading)));
                    }
                }
                if let Some(k) = starts.iter().position(|&s| s == from) {
                    steps.push((starts[k + 1], SKIP_COST, None));
                }
                steps
            });
            for (from, to, reading) in pieces {
                if let Some(reading) = reading {
                    for (k, (index, _)) in run.iter().enumerate() {
                        if starts[k] < to && starts[k + 1] > from && !consumed.contains(index) {
                            consumed.push(*index);
                        }
                    }
                    readings.push(reading);
                }
            }
        }
        (consumed, readings)
    }

    /// Homophone typos in Chinese text: each run of Han characters in `text` is segmented into
    /// words the vocabulary knows, single characters, and spans that are no known word but
    /// sound like one (同部 → 同步); returns what those spans read as.
    fn homophones(&self, text: &str, df: &Df<'_>) -> Vec<Reading> {
        let mut readings = Vec::new();
        if self.is_empty() {
            return readings;
        }
        // Long texts are cut: only the start of a query is read for homophones.
        let chars: Vec<char> = text.chars().take(MAX_HOMOPHONE_CHARS).collect();
        let mut i = 0;
        while i < chars.len() {
            if !is_han(chars[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < chars.len() && is_han(chars[i]) {
                i += 1;
            }
            readings.extend(self.han_run(&chars[start..i], df));
        }
        readings
    }

    fn han_run(&self, run: &[char], df: &Df<'_>) -> Vec<Reading> {
        let pieces = cheapest_path(run.len(), |from| {
            let mut steps = vec![(from + 1, 2.0, None)];
            for to in (from + 2)..=run.len().min(from + MAX_WORD_CHARS) {
                let span: String = run[from..to].iter().collect();
                if df(&span) > 0 {
                    steps.push((to, 1.0, None));
                    continue;
                }
                let (full, _) = keys(&span);
                let named: Vec<(String, u64)> =
                    full.iter().flat_map(|k| self.full(k)).filter(|(w, _)| *w != span).collect();
                let words = visible_words(&named, df);
                if !words.is_empty() {
                    steps.push((to, 1.5, Some(Reading { words, weight: HOMOPHONE_WEIGHT })));
                }
            }
            steps
        });
        pieces.into_iter().filter_map(|(_, _, reading)| reading).collect()
    }

    /// Chinese words one query word may stand for (its pinyin, its initials, or a homophone),
    /// most frequent first: the candidates for a "did you mean".
    fn alternatives(&self, word: &str, df: &Df<'_>) -> Vec<String> {
        if self.is_empty() {
            return Vec::new();
        }
        if word.chars().all(is_han) {
            return self.homophones(word, df).into_iter().flat_map(|r| r.words).collect();
        }
        let stripped = word.strip_suffix(['1', '2', '3', '4', '5']).unwrap_or(word);
        self.latin(&[stripped.to_string()], df).1.into_iter().flat_map(|r| r.words).collect()
    }
}

impl<T: PinyinKeys + ?Sized> Readings for T {}

/// Of `named` (words with index-wide counts), those allowed records hold, most frequent
/// among them first, then alphabetical, without repeats; at most [`WORDS_PER_KEY`]. The cut
/// comes after visibility.
fn visible_words(named: &[(String, u64)], df: &Df<'_>) -> Vec<String> {
    let mut visible: Vec<(u64, &str)> =
        named.iter().map(|(w, _)| (df(w), w.as_str())).filter(|(n, _)| *n > 0).collect();
    visible.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    visible.dedup_by(|a, b| a.1 == b.1);
    visible.into_iter().take(WORDS_PER_KEY).map(|(_, w)| w.to_string()).collect()
}

/// Without the `cjk` feature there is no pinyin table: no word has keys, so [`Phonetic`] is
/// always empty and pinyin, initials and homophone recall never run.
#[cfg(not(feature = "cjk"))]
fn keys(_word: &str) -> (Vec<String>, Vec<String>) {
    (Vec::new(), Vec::new())
}

/// The full pinyin keys and the initials keys of a Han word (every combination of heteronym
/// readings, up to [`KEYS_PER_WORD`]); empty when a character has no reading.
#[cfg(feature = "cjk")]
fn keys(word: &str) -> (Vec<String>, Vec<String>) {
    let mut full: Vec<String> = vec![String::new()];
    let mut initials: Vec<String> = vec![String::new()];
    for c in word.chars() {
        let Some(multi) = c.to_pinyin_multi() else { return (Vec::new(), Vec::new()) };
        let mut readings: Vec<String> = Vec::new();
        for p in multi.into_iter().take(READINGS_PER_CHAR) {
            let plain = p.plain();
            readings.push(plain.replace('ü', "v"));
            if plain.contains('ü') {
                readings.push(plain.replace('ü', "u"));
            }
        }
        readings.dedup();
        full = full.iter().flat_map(|f| readings.iter().map(move |r| format!("{f}{r}"))).take(KEYS_PER_WORD).collect();
        let firsts: Vec<char> = readings.iter().filter_map(|r| r.chars().next()).collect();
        initials =
            initials.iter().flat_map(|f| firsts.iter().map(move |r| format!("{f}{r}"))).take(KEYS_PER_WORD).collect();
        initials.sort();
        initials.dedup();
    }
    (full, initials)
}

/// The cheapest way from position 0 to `n` when `steps(from)` lists the forward steps
/// `(to, cost, reading)` out of `from`: a shortest path over positions (a segmentation).
/// Returns its pieces `(from, to, reading)` in order, or none when `n` cannot be reached.
fn cheapest_path(
    n: usize,
    mut steps: impl FnMut(usize) -> Vec<(usize, f32, Option<Reading>)>,
) -> Vec<(usize, usize, Option<Reading>)> {
    let mut best: Vec<Option<(f32, usize, Option<Reading>)>> = vec![None; n + 1];
    best[0] = Some((0.0, 0, None));
    for from in 0..n {
        let Some((cost, _, _)) = best[from].clone() else { continue };
        for (to, c, reading) in steps(from) {
            if best[to].as_ref().is_none_or(|(b, _, _)| cost + c < *b) {
                best[to] = Some((cost + c, from, reading));
            }
        }
    }
    let mut pieces = Vec::new();
    let mut at = n;
    while at > 0 {
        let Some((_, from, reading)) = best[at].take() else { break };
        pieces.push((from, at, reading));
        at = from;
    }
    pieces.reverse();
    pieces
}

#[cfg(all(test, feature = "cjk"))]
mod tests {
    use super::*;

    #[test]
    fn keys_cover_heteronyms_and_u_umlaut() {
        let (full, initials) = keys("同步");
        assert_eq!(full, ["tongbu"]);
        assert_eq!(initials, ["tb"]);
        let (full, _) = keys("绿色");
        assert!(full.contains(&"lvse".to_string()) && full.contains(&"luse".to_string()), "{full:?}");
        let (full, _) = keys("重新");
        assert!(full.contains(&"chongxin".to_string()), "{full:?}");
    }
}
