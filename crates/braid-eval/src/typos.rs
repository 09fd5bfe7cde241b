//! Seeded misspellings, to measure how well search tolerates typos.

/// Words that are never misspelled: the common function words of English queries.
const STOP_WORDS: &[&str] = &[
    "about", "after", "also", "been", "does", "from", "have", "into", "more", "most", "over", "than", "that", "their",
    "them", "then", "there", "these", "they", "this", "those", "were", "what", "when", "which", "while", "with",
    "would", "your",
];

/// Misspells every content word of `text` with exactly one edit — a deletion, insertion,
/// substitution or transposition of adjacent letters — chosen by a generator seeded with
/// `seed` (use the query id), so runs are reproducible.
///
/// A content word is an alphabetic ASCII word of at least four letters that is not a common
/// function word; shorter words (acronyms such as "DNA") and words with digits are left
/// alone. The edit never touches the first letter.
///
/// ```
/// use braid_eval::misspell_query;
/// let typo = misspell_query("vitamin deficiency in DNA repair", "q1");
/// assert_eq!(typo, misspell_query("vitamin deficiency in DNA repair", "q1"));
/// assert_ne!(typo, "vitamin deficiency in DNA repair");
/// assert!(typo.contains(" in DNA "));
/// ```
pub fn misspell_query(text: &str, seed: &str) -> String {
    let mut rng = SplitMix(seed_of(seed));
    let mut out = String::with_capacity(text.len() + 8);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String, rng: &mut SplitMix| {
        if is_content_word(word) {
            out.push_str(&misspell_word(word, rng));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out, &mut rng);
            out.push(c);
        }
    }
    flush(&mut word, &mut out, &mut rng);
    out
}

/// A generator seed from a string (FNV-1a over its bytes).
pub(crate) fn seed_of(seed: &str) -> u64 {
    seed.bytes().fold(0x9e37_79b9_7f4a_7c15, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// An alphabetic ASCII word of at least four letters that is not a common function word.
pub(crate) fn is_content_word(word: &str) -> bool {
    word.len() >= 4
        && word.bytes().all(|b| b.is_ascii_alphabetic())
        && !STOP_WORDS.contains(&word.to_ascii_lowercase().as_str())
}

fn misspell_word(word: &str, rng: &mut SplitMix) -> String {
    let mut letters: Vec<u8> = word.bytes().collect();
    let n = letters.len();
    let pos = 1 + rng.below(n - 1); // never the first letter
    let letter = b'a' + rng.below(26) as u8;
    match rng.below(4) {
        0 => {
            letters.remove(pos);
        }
        1 => letters.insert(pos, letter),
        2 => {
            let replacement =
                if letters[pos].eq_ignore_ascii_case(&letter) { b'a' + (letter - b'a' + 1) % 26 } else { letter };
            letters[pos] = replacement;
        }
        _ => {
            let p = pos.min(n - 2).max(1);
            if letters[p] == letters[p + 1] {
                letters.remove(p);
            } else {
                letters.swap(p, p + 1);
            }
        }
    }
    String::from_utf8(letters).unwrap_or_else(|_| word.to_string())
}

/// SplitMix64: a tiny, good-enough seeded generator, so that typo runs, soak tests and crash
/// trials are reproducible from a printed seed.
///
/// ```
/// use braid_eval::SplitMix;
/// let (mut a, mut b) = (SplitMix::new(7), SplitMix::new(7));
/// assert_eq!(a.next(), b.next());
/// assert!(a.below(10) < 10);
/// ```
#[derive(Debug, Clone)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A generator whose sequence is fixed by `seed`.
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }

    /// The next 64 random bits.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_edit_per_content_word() {
        for seed in 0..200 {
            let seed = seed.to_string();
            let text = "Vitamin deficiency causes the cell apoptosis with DNA";
            let typo = misspell_query(text, &seed);
            let (a, b): (Vec<&str>, Vec<&str>) = (text.split(' ').collect(), typo.split(' ').collect());
            assert_eq!(a.len(), b.len());
            for (w, t) in a.iter().zip(&b) {
                if is_content_word(w) {
                    assert_ne!(w, t);
                    assert_eq!(w.chars().next(), t.chars().next());
                    assert!(strsim_osa(w, t) == 1, "{w} → {t}");
                } else {
                    assert_eq!(w, t);
                }
            }
        }
    }

    /// Optimal string alignment distance (a transposition is one edit), for the test only.
    fn strsim_osa(a: &str, b: &str) -> usize {
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for (i, row) in d.iter_mut().enumerate() {
            row[0] = i;
        }
        for (j, cell) in d[0].iter_mut().enumerate() {
            *cell = j;
        }
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
                }
            }
        }
        d[a.len()][b.len()]
    }
}
