//! Synonyms, read from the `synonyms.txt` format Solr and Elasticsearch users already have,
//! and applied to queries (never to records, so a new set needs no re-index).
//!
//! ```text
//! # a comment (whole lines only, as in Solr)
//! refund, money back, reimbursement
//! 2fa => two-factor authentication
//! sso, single sign-on
//! ```
//!
//! - `a, b, c` — equivalent: a query holding any of them also matches records holding the
//!   others.
//! - `a, b => c, d` — one-way: a query holding `a` or `b` matches `c` or `d` *instead* (as in
//!   Solr and Elasticsearch, the left side is replaced; write `a => a, c` to keep it).
//! - Entries may be several words on either side; `\` escapes the next character (`\,`).
//!
//! Entries are matched on analysed terms (the index's analyzer: lowercased, folded, stemmed,
//! stop words dropped), so `Refunds` in a query matches the entry `refund`. A multi-word
//! alternative matches a record that holds all its terms. The set is compiled once per
//! analyzer ([`Compiled`]); an empty set changes nothing in any query.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use braid_core::{Error, Result, SynonymMatch};
use tantivy::tokenizer::TextAnalyzer;

use crate::analysis::terms;

/// The largest synonym file accepted, in bytes (1 MiB).
pub const MAX_SYNONYMS_BYTES: usize = 1024 * 1024;
/// Alternatives one query span may expand to; the rest of a longer list is ignored.
pub(crate) const MAX_ALTERNATIVES: usize = 16;

/// A parsed synonym set (see the module docs for the format). Cheap to clone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Synonyms {
    rules: Vec<Rule>,
    text: String,
}

/// One line: `from` entries map to `to` entries (equivalent lines map every entry to every
/// other).
#[derive(Debug, Clone, PartialEq)]
struct Rule {
    from: Vec<String>,
    to: Vec<String>,
    equivalent: bool,
}

impl Synonyms {
    /// Parses a synonym file.
    ///
    /// # Errors
    /// [`Error::Synonyms`] with the 1-based line number: an empty entry (`a,,b`), a side
    /// without entries (`=> b`), more than one `=>`, or a file above [`MAX_SYNONYMS_BYTES`].
    ///
    /// ```
    /// use braid_lexical::Synonyms;
    /// let s = Synonyms::parse("# help center\nrefund, money back\n2fa => two-factor authentication\n")?;
    /// assert_eq!(s.len(), 2);
    /// let err = Synonyms::parse("ok, fine\nbroken =>\n").unwrap_err();
    /// assert_eq!(err.to_string(), "synonyms, line 2: `=>` needs entries on both sides");
    /// # Ok::<(), braid_core::Error>(())
    /// ```
    pub fn parse(text: &str) -> Result<Synonyms> {
        if text.len() > MAX_SYNONYMS_BYTES {
            return Err(Error::Synonyms {
                line: 0,
                reason: format!("the file is {} bytes; at most {MAX_SYNONYMS_BYTES} are accepted", text.len()),
            });
        }
        let mut rules = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let fail = |reason: &str| Error::Synonyms { line, reason: reason.to_string() };
            let sides = split_unescaped(trimmed, "=>");
            let rule = match sides.as_slice() {
                [all] => {
                    let entries = entries(all).map_err(|r| fail(&r))?;
                    Rule { from: entries.clone(), to: entries, equivalent: true }
                }
                [from, to] => {
                    if from.trim().is_empty() || to.trim().is_empty() {
                        return Err(fail("`=>` needs entries on both sides"));
                    }
                    Rule {
                        from: entries(from).map_err(|r| fail(&r))?,
                        to: entries(to).map_err(|r| fail(&r))?,
                        equivalent: false,
                    }
                }
                _ => return Err(fail("more than one `=>` on a line")),
            };
            rules.push(rule);
        }
        Ok(Synonyms { rules, text: text.to_string() })
    }

    /// Whether the set has no rules (then queries are planned exactly as without synonyms).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The number of rules (lines that are neither blank nor comments).
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// The text the set was parsed from (what is stored beside the index).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The set compiled for one analyzer.
    pub(crate) fn compile(&self, analyzer: &TextAnalyzer) -> Compiled {
        let analyse = |entry: &str| terms(analyzer, entry);
        let mut by_first: HashMap<String, Vec<Entry>> = HashMap::new();
        for rule in &self.rules {
            let to: Vec<(String, Vec<String>)> =
                rule.to.iter().map(|t| (t.clone(), analyse(t))).filter(|(_, t)| !t.is_empty()).collect();
            for from in &rule.from {
                let from_terms = analyse(from);
                let Some(first) = from_terms.first().cloned() else { continue };
                let alternatives: Vec<(String, Vec<String>)> =
                    to.iter().filter(|(_, t)| *t != from_terms).take(MAX_ALTERNATIVES).cloned().collect();
                let keep_original = rule.equivalent || to.iter().any(|(_, t)| *t == from_terms);
                if alternatives.is_empty() && keep_original {
                    continue;
                }
                by_first.entry(first).or_default().push(Entry {
                    label: from.clone(),
                    from: from_terms,
                    alternatives,
                    keep_original,
                });
            }
        }
        // Longest entries first, so the longest match wins; then by label, for a stable order.
        for entries in by_first.values_mut() {
            entries.sort_by(|a, b| b.from.len().cmp(&a.from.len()).then_with(|| a.label.cmp(&b.label)));
        }
        Compiled { by_first }
    }
}

/// `text` split on `separator` where it is not escaped by a backslash.
fn split_unescaped(text: &str, separator: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '\\' {
            let mut chars = rest.chars();
            chars.next();
            match chars.next() {
                Some(n) => {
                    // Keep the escape for the inner split; entries unescape.
                    if let Some(p) = parts.last_mut() {
                        p.push('\\');
                        p.push(n);
                    }
                    rest = chars.as_str();
                }
                None => rest = "",
            }
            continue;
        }
        if rest.starts_with(separator) {
            parts.push(String::new());
            rest = &rest[separator.len()..];
            continue;
        }
        if let Some(p) = parts.last_mut() {
            p.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    parts
}

/// The comma-separated entries of one side, unescaped and trimmed.
fn entries(side: &str) -> std::result::Result<Vec<String>, String> {
    let mut out = Vec::new();
    for part in split_unescaped(side, ",") {
        let mut entry = String::with_capacity(part.len());
        let mut chars = part.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                if let Some(n) = chars.next() {
                    entry.push(n);
                }
            } else {
                entry.push(c);
            }
        }
        let entry = entry.split_whitespace().collect::<Vec<_>>().join(" ");
        if entry.is_empty() {
            return Err("empty entry (two commas in a row, or a comma at an end)".into());
        }
        out.push(entry);
    }
    Ok(out)
}

/// A synonym a query was expanded with: what explain reports, and the analysed terms a hit
/// must hold to be reported as matching it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SynonymUse {
    /// The entry the query matched and the synonym it expanded to.
    pub matched: SynonymMatch,
    pub(crate) terms: Vec<String>,
}

impl SynonymUse {
    pub(crate) fn new(query: &str, synonym: &str, terms: &[String]) -> Self {
        SynonymUse { matched: SynonymMatch { query: query.into(), synonym: synonym.into() }, terms: terms.to_vec() }
    }
}

/// The synonym set an index searches with now, shared by its snapshots: replacing it takes
/// effect from the next request (each request reads it once, see [`crate::View`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct SynonymsHandle(Arc<RwLock<(Arc<Synonyms>, Arc<Compiled>)>>);

impl SynonymsHandle {
    pub fn set(&self, synonyms: Synonyms, analyzer: &TextAnalyzer) {
        let compiled = synonyms.compile(analyzer);
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = (Arc::new(synonyms), Arc::new(compiled));
    }

    pub fn synonyms(&self) -> Arc<Synonyms> {
        self.0.read().unwrap_or_else(|p| p.into_inner()).0.clone()
    }

    pub fn compiled(&self) -> Arc<Compiled> {
        self.0.read().unwrap_or_else(|p| p.into_inner()).1.clone()
    }
}

/// A synonym set compiled for one analyzer: entries by their first analysed term.
#[derive(Debug, Clone, Default)]
pub(crate) struct Compiled {
    by_first: HashMap<String, Vec<Entry>>,
}

#[derive(Debug, Clone)]
struct Entry {
    /// The entry as written in the file.
    label: String,
    from: Vec<String>,
    /// `(as written, analysed terms)` of what it expands to.
    alternatives: Vec<(String, Vec<String>)>,
    /// Whether the query's own words stay an alternative (equivalent lines, or a one-way line
    /// that lists its left side on the right).
    keep_original: bool,
}

/// A span of analysed query terms that a synonym entry matched.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Span {
    /// First term of the span.
    pub start: usize,
    /// One past the last term.
    pub end: usize,
    /// The entry as written (what the query matched).
    pub label: String,
    /// `(as written, analysed terms)` alternatives.
    pub alternatives: Vec<(String, Vec<String>)>,
    /// Whether the query's own terms stay an alternative.
    pub keep_original: bool,
}

impl Compiled {
    /// Whether no entry can match.
    pub fn is_empty(&self) -> bool {
        self.by_first.is_empty()
    }

    /// Non-overlapping matches in `terms`, left to right, longest first at each position.
    pub fn spans(&self, terms: &[String]) -> Vec<Span> {
        let mut out = Vec::new();
        if self.is_empty() {
            return out;
        }
        let mut i = 0;
        while i < terms.len() {
            let found = self.by_first.get(&terms[i]).and_then(|entries| {
                entries.iter().find(|e| terms.get(i..i + e.from.len()).is_some_and(|s| s == e.from.as_slice()))
            });
            match found {
                Some(e) => {
                    out.push(Span {
                        start: i,
                        end: i + e.from.len(),
                        label: e.label.clone(),
                        alternatives: e.alternatives.clone(),
                        keep_original: e.keep_original,
                    });
                    i += e.from.len();
                }
                None => i += 1,
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Analyzer;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_equivalent_and_one_way_lines_with_comments_and_escapes() {
        let s = Synonyms::parse(
            "# comment\n\n  refund, money back , reimbursement\n2fa => two-factor authentication\na\\,b, c\n",
        )
        .unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s.rules[0].from, strings(&["refund", "money back", "reimbursement"]));
        assert!(s.rules[0].equivalent);
        assert_eq!(s.rules[1].from, strings(&["2fa"]));
        assert_eq!(s.rules[1].to, strings(&["two-factor authentication"]));
        assert!(!s.rules[1].equivalent);
        assert_eq!(s.rules[2].from, strings(&["a,b", "c"]));
        assert!(Synonyms::parse("").unwrap().is_empty());
        assert!(Synonyms::parse("# only\n   \n").unwrap().is_empty());
    }

    #[test]
    fn errors_name_the_line() {
        for (text, line) in
            [("a, b\nc,,d\n", 2), ("x => \n", 1), ("ok\n\n=> y\n", 3), ("a => b => c\n", 1), ("a,\n", 1)]
        {
            match Synonyms::parse(text) {
                Err(Error::Synonyms { line: l, .. }) => assert_eq!(l, line, "{text:?}"),
                other => panic!("{text:?}: {other:?}"),
            }
        }
        let huge = "a, b\n".repeat(MAX_SYNONYMS_BYTES / 5 + 1);
        assert!(matches!(Synonyms::parse(&huge), Err(Error::Synonyms { line: 0, .. })));
    }

    #[test]
    fn spans_match_analysed_terms_longest_first() {
        let analyzer = Analyzer::English.build();
        let s =
            Synonyms::parse("refund, money back\nsso, single sign-on\nsign => log\n2fa => two-factor authentication\n")
                .unwrap()
                .compile(&analyzer);
        let q = terms(&analyzer, "Refunds and single sign-on setup");
        let spans = s.spans(&q);
        assert_eq!(spans.len(), 2, "{spans:?}");
        assert_eq!((spans[0].start, spans[0].end), (0, 1));
        assert_eq!(spans[0].alternatives, vec![("money back".to_string(), strings(&["money", "back"]))]);
        assert!(spans[0].keep_original);
        // "single sign on" wins over "sign" alone.
        assert_eq!(spans[1].label, "single sign-on");
        assert_eq!(spans[1].alternatives[0].1, strings(&["sso"]));
        let two = s.spans(&terms(&analyzer, "2FA"));
        assert!(!two[0].keep_original);
        assert_eq!(two[0].alternatives[0].1, strings(&["two", "factor", "authent"]));
        assert!(Synonyms::default().compile(&analyzer).spans(&q).is_empty());
    }
}
