//! Real misspellings, as people make them: a list of `misspelling->correction` lines (the
//! format of Wikipedia's "Lists of common misspellings/For machines" and of codespell's
//! `dictionary.txt`), read backwards to misspell a query's words.
//!
//! `scripts/misspellings.sh` installs codespell's list (PyPI) outside the repository; the list
//! itself is never committed.

use std::collections::HashMap;
use std::path::Path;

use crate::error::{EvalError, Result};
use crate::typos::{is_content_word, seed_of, SplitMix};

/// Correct words and the real misspellings people made of them.
#[derive(Debug, Clone, Default)]
pub struct Misspellings {
    by_word: HashMap<String, Vec<String>>,
}

impl Misspellings {
    /// Reads a list file (see [`Misspellings::parse`]).
    ///
    /// # Errors
    ///
    /// [`EvalError::Missing`] or [`EvalError::Io`] when the file cannot be read,
    /// [`EvalError::Parse`] for a line that is not `misspelling->correction`, and for a list
    /// with no usable entry.
    pub fn load(path: &Path) -> Result<Misspellings> {
        let text = std::fs::read_to_string(path).map_err(|e| EvalError::io(path, e))?;
        Misspellings::parse(&text, path)
    }

    /// Parses `misspelling->correction[, correction…]` lines; blank lines and lines starting
    /// with `#` are skipped. Only one-word alphabetic entries are kept (`dont->don't` and
    /// multi-word corrections are not a one-word typo); words are lower-cased. A line whose
    /// corrections carry a note after a comma (`clas->class, disabled because …`) keeps its
    /// one-word corrections. `path` only names the list in errors.
    ///
    /// # Errors
    ///
    /// [`EvalError::Parse`] for a line without `->`, and for a list with no usable entry.
    pub fn parse(text: &str, path: &Path) -> Result<Misspellings> {
        let mut by_word: HashMap<String, Vec<String>> = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((wrong, rights)) = line.split_once("->") else {
                return Err(EvalError::Parse {
                    path: path.to_owned(),
                    line: i + 1,
                    reason: format!("expected `misspelling->correction`, got {line:?}"),
                    source: None,
                });
            };
            let wrong = wrong.trim().to_lowercase();
            if !is_word(&wrong) {
                continue;
            }
            for right in rights.split(',').map(|r| r.trim().to_lowercase()) {
                if is_word(&right) && right != wrong {
                    let list = by_word.entry(right).or_default();
                    if !list.contains(&wrong) {
                        list.push(wrong.clone());
                    }
                }
            }
        }
        if by_word.is_empty() {
            return Err(EvalError::Parse {
                path: path.to_owned(),
                line: 0,
                reason: "no `misspelling->correction` entry of one alphabetic word".into(),
                source: None,
            });
        }
        for list in by_word.values_mut() {
            list.sort();
        }
        Ok(Misspellings { by_word })
    }

    /// How many correct words have at least one misspelling.
    pub fn len(&self) -> usize {
        self.by_word.len()
    }

    /// Whether the list is empty (never, for a list that loaded).
    pub fn is_empty(&self) -> bool {
        self.by_word.is_empty()
    }

    /// The misspellings of `word` (lower case), sorted.
    pub fn of(&self, word: &str) -> &[String] {
        self.by_word.get(&word.to_lowercase()).map(Vec::as_slice).unwrap_or(&[])
    }

    /// `text` with exactly one content word (alphabetic, four letters or more, not a common
    /// function word) replaced by one of its real misspellings, both chosen by a generator
    /// seeded with `seed` (use the query id), so runs are reproducible. The replacement keeps
    /// the word's case pattern (`Vitamin` → `Vitamine`, `DNA` stays upper case). `None` when no
    /// word of `text` is in the list: such a query has no real misspelt form.
    ///
    /// ```
    /// use braid_eval::Misspellings;
    /// let list = Misspellings::parse("recieve->receive\nbeleive->believe\n", "list".as_ref())?;
    /// assert_eq!(list.misspell("Patients receive care", "q1").as_deref(), Some("Patients recieve care"));
    /// assert_eq!(list.misspell("no listed word", "q1"), None);
    /// # Ok::<(), braid_eval::EvalError>(())
    /// ```
    pub fn misspell(&self, text: &str, seed: &str) -> Option<String> {
        // Byte spans of the candidate words.
        let mut spans = Vec::new();
        let mut start = None;
        for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
            match (c.is_alphanumeric(), start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    let word = &text[s..i];
                    if is_content_word(word) && !self.of(word).is_empty() {
                        spans.push((s, i));
                    }
                    start = None;
                }
                _ => {}
            }
        }
        if spans.is_empty() {
            return None;
        }
        let mut rng = SplitMix::new(seed_of(seed));
        let (s, e) = spans[rng.below(spans.len())];
        let word = &text[s..e];
        let options = self.of(word);
        let typo = &options[rng.below(options.len())];
        let typo = if word.len() > 1 && word.chars().all(|c| c.is_uppercase()) {
            typo.to_uppercase()
        } else if word.chars().next().is_some_and(char::is_uppercase) {
            let mut chars = typo.chars();
            chars.next().map(|f| f.to_uppercase().chain(chars).collect()).unwrap_or_default()
        } else {
            typo.clone()
        };
        Some(format!("{}{typo}{}", &text[..s], &text[e..]))
    }
}

fn is_word(w: &str) -> bool {
    !w.is_empty() && w.chars().all(char::is_alphabetic)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(text: &str) -> Result<Misspellings> {
        Misspellings::parse(text, Path::new("list.txt"))
    }

    #[test]
    fn parses_codespell_and_wikipedia_lines() {
        let l = list(
            "# comment\n\nabandonned->abandoned\nclas->class, disabled because of name clash\nthier->their\n\
                      dont->don't\nacheive->achieve, archive,\nrecieve->receive\nrecieve->receive\n",
        )
        .unwrap();
        assert_eq!(l.of("abandoned"), ["abandonned"]);
        assert_eq!(l.of("class"), ["clas"]);
        assert_eq!(l.of("Archive"), ["acheive"]);
        assert_eq!(l.of("receive"), ["recieve"], "duplicates count once");
        assert!(l.of("don't").is_empty());
        assert_eq!(l.len(), 6);
    }

    #[test]
    fn bad_lists_are_typed_errors() {
        let e = list("ok->fine\nnot a pair\n").unwrap_err();
        assert!(matches!(e, EvalError::Parse { line: 2, .. }), "{e}");
        assert!(matches!(list("# only comments\n"), Err(EvalError::Parse { .. })));
        assert!(matches!(Misspellings::load(Path::new("/nonexistent/list.txt")), Err(EvalError::Missing { .. })));
    }

    #[test]
    fn misspells_one_listed_content_word_reproducibly() {
        let l = list("vitamine->vitamin\nvitamn->vitamin\ndefficiency->deficiency\nwhith->with\n").unwrap();
        let text = "Vitamin deficiency with DNA damage";
        let a = l.misspell(text, "q7").unwrap();
        assert_eq!(Some(a.clone()), l.misspell(text, "q7"));
        let changed: Vec<(&str, &str)> = text.split(' ').zip(a.split(' ')).filter(|(x, y)| x != y).collect();
        assert_eq!(changed.len(), 1, "{a}");
        assert!(["Vitamine", "Vitamn", "Defficiency", "defficiency"].contains(&changed[0].1), "{a}");
        // "with" is a function word: never the one misspelt.
        let seeds: Vec<String> = (0..50).map(|i| l.misspell(text, &format!("q{i}")).unwrap()).collect();
        assert!(seeds.iter().all(|s| s.contains(" with ")));
        assert!(seeds.iter().any(|s| s.starts_with("Vitamin ")) && seeds.iter().any(|s| !s.starts_with("Vitamin ")));
        let upper = list("dnaa->dnas\ndammage->damage\n").unwrap();
        assert_eq!(upper.misspell("DAMAGE report", "x").as_deref(), Some("DAMMAGE report"));
        assert_eq!(l.misspell("nothing here", "q1"), None);
        assert_eq!(l.misspell("", "q1"), None);
    }
}
