//! The words of a vocabulary within a few edits of any word, by two walks that each allow
//! fewer edits where the other allows more (a forward–backward split, as in FB-tries).
//!
//! Split the query word `q` (`n` characters, up to `d` edits) at `m`, and follow an optimal
//! alignment of `q` with a word `w` (rows: `w`'s characters, columns: `q`'s) to the last cell
//! it visits before column `m`. Either the alignment has spent at most `k` edits there, or it
//! has at most `d − k − 1` left for the rest (the step into column `m` or beyond is the
//! `(k + 1)`-th edit or comes after it). So `w` is found by one of:
//!
//! - a walk of the vocabulary's trie in reading order that lets no cell before column `m`
//!   exceed `k` edits (and none at all exceed `d`), or
//! - a walk of the reversed words (`q` reversed too) that lets no cell in the reversed
//!   columns up to `n − m` exceed `d − k − 1`: the same alignment read backwards carries at
//!   most that cost there.
//!
//! With `d = 2`, `k = 1` and `m` half the word, neither walk meets the wide fan of a
//! two-edit automaton over a word's first letters: on SciFact's words a misspelt word's
//! neighbours took about a third of the automaton's time, and a hybrid request 9 % fewer
//! instructions (docs/ranking.md, "Speed", seventh round). Every word either walk accepts is
//! measured exactly (optimal string alignment, transpositions of adjacent characters as one
//! edit: [`strsim::osa_distance`]).

use fst::{Automaton, IntoStreamer, Map, Streamer};

/// Longest query word the walks take (cells per row: one more).
pub(crate) const MAX_CHARS: usize = 32;
const CELLS: usize = MAX_CHARS + 2;
/// A cell no alignment within the allowed edits reaches.
const UNREACHABLE: u8 = u8::MAX / 2;

/// Words of `forward` (word → document frequency) within `max_edits` edits of `word`, the
/// word itself excluded, with their distances and frequencies, in no particular order.
/// `backward` holds the same words with their characters reversed.
pub(crate) fn near(
    forward: &Map<Vec<u8>>,
    backward: &Map<Vec<u8>>,
    word: &str,
    max_edits: usize,
) -> Vec<(String, usize, u64)> {
    let chars: Vec<char> = word.chars().collect();
    let n = chars.len();
    if max_edits == 0 || n > MAX_CHARS {
        return Vec::new();
    }
    let d = max_edits.min(u8::MAX as usize / 4) as u8;
    let k = d / 2;
    let m = n.div_ceil(2);
    let mut found: Vec<(String, u64)> = Vec::new();
    let ahead = Capped::new(&chars, |j| if j < m { k } else { d }, d);
    let mut stream = forward.search(&ahead).into_stream();
    while let Some((key, df)) = stream.next() {
        if let Ok(w) = std::str::from_utf8(key) {
            found.push((w.to_string(), df));
        }
    }
    let reversed: Vec<char> = chars.iter().rev().copied().collect();
    let behind = Capped::new(&reversed, |j| if j <= n - m { d - k - 1 } else { d }, d);
    let mut stream = backward.search(&behind).into_stream();
    while let Some((key, df)) = stream.next() {
        if let Ok(w) = std::str::from_utf8(key) {
            found.push((w.chars().rev().collect(), df));
        }
    }
    found.sort_unstable();
    found.dedup_by(|a, b| a.0 == b.0);
    found
        .into_iter()
        .filter(|(w, _)| w != word)
        .filter_map(|(w, df)| {
            let distance = strsim::osa_distance(word, &w);
            (distance <= max_edits).then_some((w, distance, df))
        })
        .collect()
}

/// The words of `forward` with their characters reversed (same values), for [`near`]'s
/// backward walk.
pub(crate) fn reversed(forward: &Map<Vec<u8>>) -> Result<Map<Vec<u8>>, fst::Error> {
    let mut words: Vec<(Vec<u8>, u64)> = Vec::with_capacity(forward.len());
    let mut stream = forward.stream();
    while let Some((key, df)) = stream.next() {
        if let Ok(word) = std::str::from_utf8(key) {
            words.push((word.chars().rev().collect::<String>().into_bytes(), df));
        }
    }
    words.sort_unstable();
    Map::from_iter(words)
}

/// An automaton over UTF-8 bytes accepting the words within `max` edits of `query` along an
/// alignment that keeps every cell in column `j` at most `caps[j]`.
struct Capped {
    query: Vec<char>,
    caps: [u8; CELLS],
    max: u8,
}

/// One row of the edit-distance table (and the row before it, for transpositions), with the
/// bytes of a character not yet complete.
#[derive(Clone, Copy)]
struct Row {
    before: [u8; CELLS],
    cells: [u8; CELLS],
    /// The character this row read (`None` for the first row).
    last: Option<char>,
    /// Rows read so far (characters of the word walked).
    rows: u16,
    /// The band of columns that can hold a cell within `max`: `|row − column| ≤ max`.
    low: u8,
    high: u8,
    /// The bits of a multi-byte character read so far, and how many bytes it still needs.
    partial: u32,
    needs: u8,
}

impl Capped {
    fn new(query: &[char], cap: impl Fn(usize) -> u8, max: u8) -> Capped {
        let mut caps = [0; CELLS];
        for (j, c) in caps.iter_mut().enumerate().take(query.len() + 1) {
            *c = cap(j).min(max);
        }
        Capped { query: query.to_vec(), caps, max }
    }

    fn capped(&self, j: usize, value: u8) -> u8 {
        if value > self.caps[j] {
            UNREACHABLE
        } else {
            value
        }
    }

    /// The row after `row` for the word's next character `c`.
    fn step(&self, row: &Row, c: char) -> Row {
        let n = self.query.len();
        let r = usize::from(row.rows) + 1;
        let low = r.saturating_sub(usize::from(self.max));
        let high = (r + usize::from(self.max)).min(n);
        let mut cells = [UNREACHABLE; CELLS];
        if low == 0 {
            cells[0] = self.capped(0, row.cells[0].saturating_add(1));
        }
        for j in low.max(1)..=high {
            let q = self.query[j - 1];
            let mut v = (row.cells[j - 1] + u8::from(q != c)).min(row.cells[j] + 1).min(cells[j - 1] + 1);
            if j >= 2 && c == self.query[j - 2] && row.last == Some(q) {
                v = v.min(row.before[j - 2] + 1);
            }
            cells[j] = self.capped(j, v);
        }
        Row {
            before: row.cells,
            cells,
            last: Some(c),
            rows: row.rows + 1,
            low: low as u8,
            high: high as u8,
            partial: 0,
            needs: 0,
        }
    }
}

impl Automaton for Capped {
    type State = Row;

    fn start(&self) -> Row {
        let mut cells = [UNREACHABLE; CELLS];
        for (j, cell) in cells.iter_mut().enumerate().take(self.query.len() + 1) {
            *cell = self.capped(j, j as u8);
        }
        let high = usize::from(self.max).min(self.query.len()) as u8;
        Row { before: [UNREACHABLE; CELLS], cells, last: None, rows: 0, low: 0, high, partial: 0, needs: 0 }
    }

    fn is_match(&self, row: &Row) -> bool {
        row.needs == 0 && row.cells[self.query.len()] <= self.max
    }

    fn can_match(&self, row: &Row) -> bool {
        row.needs > 0 || row.cells[usize::from(row.low)..=usize::from(row.high)].iter().any(|&v| v != UNREACHABLE)
    }

    fn accept(&self, row: &Row, byte: u8) -> Row {
        let (partial, needs) = match (row.needs, byte) {
            (0, 0..=0x7f) => return self.step(row, char::from(byte)),
            (0, 0xf0..) => (u32::from(byte & 0x07), 3),
            (0, 0xe0..) => (u32::from(byte & 0x0f), 2),
            (0, _) => (u32::from(byte & 0x1f), 1),
            (needs, _) => ((row.partial << 6) | u32::from(byte & 0x3f), needs - 1),
        };
        if needs > 0 {
            return Row { partial, needs, ..*row };
        }
        // A character is complete (an invalid one matches no query character).
        self.step(row, char::from_u32(partial).unwrap_or(char::REPLACEMENT_CHARACTER))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn maps(words: &[(String, u64)]) -> (Map<Vec<u8>>, Map<Vec<u8>>) {
        let forward = Map::from_iter(words.iter().map(|(w, d)| (w.as_bytes(), *d))).unwrap();
        let backward = reversed(&forward).unwrap();
        (forward, backward)
    }

    fn sorted(mut found: Vec<(String, usize, u64)>) -> Vec<(String, usize, u64)> {
        found.sort();
        found
    }

    fn brute(words: &[(String, u64)], word: &str, edits: usize) -> Vec<(String, usize, u64)> {
        if edits == 0 || word.chars().count() > MAX_CHARS {
            return Vec::new();
        }
        sorted(
            words
                .iter()
                .filter(|(w, _)| w != word)
                .map(|(w, df)| (w.clone(), strsim::osa_distance(word, w), *df))
                .filter(|&(_, d, _)| d <= edits)
                .collect(),
        )
    }

    #[test]
    fn finds_typos_of_every_kind_at_either_end() {
        let words: Vec<(String, u64)> = [("policy", 30), ("receive", 20), ("return", 40), ("returns", 2), ("über", 9)]
            .iter()
            .map(|(w, d)| (w.to_string(), *d))
            .collect();
        let (forward, backward) = maps(&words);
        let found = |w: &str, e: usize| {
            sorted(near(&forward, &backward, w, e)).into_iter().map(|(w, d, _)| (w, d)).collect::<Vec<_>>()
        };
        assert_eq!(found("retun", 1), [("return".to_string(), 1)]);
        assert_eq!(found("eturn", 1), [("return".to_string(), 1)], "an edit in the first half");
        assert_eq!(found("xxreturn", 2), [("return".to_string(), 2)], "two in the first half");
        assert_eq!(found("returnxx", 2), [("return".to_string(), 2), ("returns".to_string(), 2)]);
        assert_eq!(found("polciy", 1), [("policy".to_string(), 1)], "a transposition is one edit");
        assert_eq!(found("recieve", 1), [("receive".to_string(), 1)]);
        assert_eq!(found("uber", 1), [("über".to_string(), 1)]);
        assert!(found("return", 0).is_empty());
        assert_eq!(found("return", 1), [("returns".to_string(), 1)], "the word itself is not its neighbour");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        /// The walks find exactly the words a brute-force scan of the distance finds (characters
        /// of one to four bytes).
        #[test]
        fn walks_are_the_brute_force_scan(
            words in prop::collection::btree_map("[abcé中😀]{1,9}", 1u64..50, 1..80),
            query in "[abcé中😀]{0,10}",
            edits in 0usize..4,
        ) {
            let words: Vec<(String, u64)> = words.into_iter().collect();
            let (forward, backward) = maps(&words);
            prop_assert_eq!(sorted(near(&forward, &backward, &query, edits)), brute(&words, &query, edits));
        }
    }
}
