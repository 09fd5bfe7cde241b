//! Passages: the windows of a long record that the semantic leg embeds one by one.
//!
//! An embedding model reads a fixed number of tokens (all-MiniLM-L6-v2: 256) and drops the
//! rest, so a record longer than that is represented by its opening alone. With
//! [`Passages`], such a record gets one vector per window of its body — each window read with
//! the record's title and section path, as the first is — and the vector store scores the
//! record by its best window.

use serde::{Deserialize, Serialize};

use crate::{Error, Record, Result};

/// How a long record's body is cut into windows of words for embedding.
///
/// The first passage is always the whole text as a single vector reads it
/// ([`Record::passage`]; the model keeps what fits). A body longer than `words` words gets
/// further windows of `words` words starting every `stride` words (window `i` starts at word
/// `i × stride`), until a window reaches the body's end or the record has `max` passages.
///
/// ```
/// use braid_core::{Passages, Record};
///
/// let body = (0..10).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
/// let record = Record::new("a").title("T").body(body);
/// let passages = Passages { words: 4, stride: 3, max: 8 };
/// assert_eq!(
///     record.passages(Some(&passages)),
///     ["T w0 w1 w2 w3 w4 w5 w6 w7 w8 w9", "T w3 w4 w5 w6", "T w6 w7 w8 w9"]
/// );
/// assert_eq!(record.passages(None), [record.passage()]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Passages {
    /// Words per window.
    pub words: usize,
    /// Words from one window's start to the next one's (at most `words`, so windows overlap
    /// by `words − stride`).
    pub stride: usize,
    /// The most passages one record gets, the first included.
    pub max: usize,
}

impl Passages {
    /// The windows Braid uses by default: 128 words every 96 (a 32-word overlap), at most 16
    /// passages a record. 128 words with a title stay inside a 256-token model window even
    /// for technical text (about 1.6 tokens a word), so no window is cut short.
    pub const DEFAULT: Passages = Passages { words: 128, stride: 96, max: 16 };

    /// Checks that the windows make sense: `0 < stride ≤ words` and `max ≥ 1`.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] naming the bad value.
    pub fn validate(&self) -> Result<()> {
        if self.words == 0 || self.stride == 0 || self.stride > self.words {
            return Err(Error::invalid_request(format!(
                "passage windows need 0 < stride ≤ words (got {} words, stride {})",
                self.words, self.stride
            )));
        }
        if self.max == 0 {
            return Err(Error::invalid_request("a record needs at least one passage (max 0)"));
        }
        Ok(())
    }
}

impl Default for Passages {
    fn default() -> Self {
        Passages::DEFAULT
    }
}

impl std::fmt::Display for Passages {
    /// `WORDS:STRIDE:MAX`, what [`Passages::from_str`](std::str::FromStr) reads.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.words, self.stride, self.max)
    }
}

impl std::str::FromStr for Passages {
    type Err = Error;

    /// `WORDS`, `WORDS:STRIDE` or `WORDS:STRIDE:MAX` (the rest as in [`Passages::DEFAULT`],
    /// the stride three quarters of the window).
    fn from_str(s: &str) -> Result<Self> {
        let bad = || Error::invalid_request(format!("passages {s:?}: expected WORDS[:STRIDE[:MAX]], e.g. 128:96"));
        let parts: Vec<usize> = s.split(':').map(|p| p.trim().parse().map_err(|_| bad())).collect::<Result<_>>()?;
        let passages = match parts[..] {
            [words] => Passages { words, stride: (words * 3 / 4).max(1), ..Passages::DEFAULT },
            [words, stride] => Passages { words, stride, ..Passages::DEFAULT },
            [words, stride, max] => Passages { words, stride, max },
            _ => return Err(bad()),
        };
        passages.validate()?;
        Ok(passages)
    }
}

impl Record {
    /// The texts the semantic leg embeds for this record: [`Record::passage`] alone without
    /// `passages`, else that and the further windows of a long body (see [`Passages`]).
    pub fn passages(&self, passages: Option<&Passages>) -> Vec<String> {
        let mut out = vec![self.passage()];
        let Some(p) = passages else { return out };
        let words: Vec<&str> = self.body.split_whitespace().collect();
        if words.len() <= p.words || p.stride == 0 {
            return out;
        }
        let mut prefix = self.passage_prefix();
        if !prefix.is_empty() {
            prefix.push(' ');
        }
        let mut start = p.stride;
        while out.len() < p.max && start < words.len() {
            let end = (start + p.words).min(words.len());
            out.push(format!("{prefix}{}", words[start..end].join(" ")));
            if end == words.len() {
                break;
            }
            start += p.stride;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(n: usize) -> String {
        (0..n).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn short_bodies_keep_one_passage() {
        let p = Passages { words: 5, stride: 4, max: 10 };
        for n in [0, 1, 5] {
            let record = Record::new("a").title("T").body(body(n));
            assert_eq!(record.passages(Some(&p)), [record.passage()], "{n} words");
        }
    }

    #[test]
    fn windows_cover_the_body_and_stop_at_its_end_or_at_max() {
        let record = Record::new("a").title("T").section(["S"]).body(body(12));
        let p = Passages { words: 5, stride: 4, max: 10 };
        assert_eq!(record.passages(Some(&p))[1..], ["T — S w4 w5 w6 w7 w8", "T — S w8 w9 w10 w11"]);
        let capped = Passages { max: 2, ..p };
        assert_eq!(record.passages(Some(&capped)).len(), 2);
        let untitled = Record::new("b").body(body(7));
        assert_eq!(untitled.passages(Some(&p))[1..], ["w4 w5 w6"]);
    }

    #[test]
    fn parses_and_validates() {
        assert_eq!("128".parse::<Passages>().unwrap(), Passages { words: 128, stride: 96, max: 16 });
        assert_eq!("100:50:4".parse::<Passages>().unwrap(), Passages { words: 100, stride: 50, max: 4 });
        assert_eq!(Passages::DEFAULT.to_string().parse::<Passages>().unwrap(), Passages::DEFAULT);
        for bad in ["", "x", "10:20", "0", "10:0", "10:5:0", "1:1:1:1"] {
            assert!(bad.parse::<Passages>().is_err(), "{bad:?}");
        }
    }
}
