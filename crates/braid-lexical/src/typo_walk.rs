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
//! instructions (research/ranking-log.md, "Speed", seventh round). Every word either walk accepts is
//! measured exactly (optimal string alignment, transpositions of adjacent characters as one
//! edit: [`strsim::osa_distance`]).

use fst::{Automaton, IntoStreamer, Map, Streamer};

/// Longest query word the walks take (cells per row: one more).
pub(crate) const MAX_CHARS: usize = 32;
const CELLS: usize = MAX_CHARS + 2;
/// The most edits a walk allows; more are taken as this many.
pub(crate) const MAX_WALK_EDITS: usize = 3;
/// Cells a row keeps: the band of columns within [`MAX_WALK_EDITS`] of the row, and one past
/// it that stays unreachable, which the step reads for the band's last column.
const BAND: usize = 2 * MAX_WALK_EDITS + 2;
/// A cell no alignment within the allowed edits reaches.
const UNREACHABLE: u8 = u8::MAX / 2;

/// Words of `forward` (word → document frequency) within `max_edits` edits of `word` (at most
/// [`MAX_WALK_EDITS`]), the word itself excluded, with their distances and frequencies, in no
/// particular order. `backward` holds the same words with their characters reversed.
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
    let max_edits = max_edits.min(MAX_WALK_EDITS);
    let d = max_edits as u8;
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
/// bytes of a character not yet complete. Only the band of columns that can hold a cell within
/// `max` edits is kept (`|row − column| ≤ max`): the cell of column `j` in row `r` is at
/// `j + max − r`, so a cell and the cells it is computed from sit at the same index or one
/// beside it, and the state the walk copies on every step of the trie is 28 bytes, not 84.
#[derive(Clone, Copy)]
struct Row {
    before: [u8; BAND],
    cells: [u8; BAND],
    /// The character this row read (`None` for the first row).
    last: Option<char>,
    /// Rows read so far (characters of the word walked).
    rows: u16,
    /// The bits of a multi-byte character read so far, and how many bytes it still needs.
    partial: u32,
    needs: u8,
}

// The state the walk copies on every step stays small (see `Row`).
const _: () = assert!(std::mem::size_of::<Row>() == 28);

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

    /// The row after `row` for the word's next character `c`. Column `j` of the new row `r`
    /// is at band index `i = j + max − r`; in the row before, column `j − 1` is at `i` and
    /// column `j` at `i + 1`, and in the one before that column `j − 2` is at `i` again.
    fn step(&self, row: &Row, c: char) -> Row {
        let n = self.query.len();
        let d = usize::from(self.max);
        let r = usize::from(row.rows) + 1;
        let mut cells = [UNREACHABLE; BAND];
        for i in 0..=2 * d {
            let Some(j) = (r + i).checked_sub(d) else { continue };
            if j > n {
                break;
            }
            // The word's character deleted: the cell above.
            let mut v = row.cells[i + 1] + 1;
            if j >= 1 {
                let q = self.query[j - 1];
                v = v.min(row.cells[i] + u8::from(q != c));
                if i >= 1 {
                    v = v.min(cells[i - 1] + 1);
                }
                if j >= 2 && c == self.query[j - 2] && row.last == Some(q) {
                    v = v.min(row.before[i] + 1);
                }
            }
            cells[i] = self.capped(j, v);
        }
        Row { before: row.cells, cells, last: Some(c), rows: row.rows + 1, partial: 0, needs: 0 }
    }
}

impl Automaton for Capped {
    type State = Row;

    fn start(&self) -> Row {
        let d = usize::from(self.max);
        let mut cells = [UNREACHABLE; BAND];
        for j in 0..=d.min(self.query.len()) {
            cells[j + d] = self.capped(j, j as u8);
        }
        Row { before: [UNREACHABLE; BAND], cells, last: None, rows: 0, partial: 0, needs: 0 }
    }

    fn is_match(&self, row: &Row) -> bool {
        // The last column's band index, when the band holds it.
        let at = (self.query.len() + usize::from(self.max)).checked_sub(usize::from(row.rows));
        row.needs == 0 && at.is_some_and(|i| i <= 2 * usize::from(self.max) && row.cells[i] <= self.max)
    }

    fn can_match(&self, row: &Row) -> bool {
        row.needs > 0 || row.cells[..=2 * usize::from(self.max)].iter().any(|&v| v != UNREACHABLE)
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
