//! The simple query syntax for search boxes ([`braid_core::QuerySyntax::Simple`]):
//! `"exact phrase"`, `-exclude`, `OR`, and `field:value` on declared keyword fields.
//!
//! Parsing never fails: an unbalanced quote, a lone `-`, a leading or trailing `OR` or a
//! `field:` on a field the schema does not declare are read as plain words. What the syntax
//! adds are *constraints* over the records a leg already confines itself to — a record must
//! hold each phrase (or one of an `OR` group), must not hold an excluded word or phrase, must
//! carry the keyword value — so no operator reaches a record outside the allowed set, and
//! every statistic still comes from the allowed records. Scoring is BM25 over the words that
//! remain (phrases' words included, excluded ones and `field:value` not), exactly as in plain
//! syntax: a query without operators is planned as plain text.
//!
//! Phrases are checked on the stored title and body (the index keeps no positions): records
//! holding all of a phrase's terms are tested in score order, at most
//! [`MAX_PHRASE_CHECKS`] per leg, so a phrase of common words costs a bounded number of reads.

use std::collections::HashMap;

use tantivy::schema::{Field, IndexRecordOption, Value};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{DocAddress, DocId, SegmentReader, TantivyDocument, Term};

use crate::analysis::tokens;
use crate::schema::Fields;
use crate::segments::Segments;

/// Records whose stored text one leg reads to check phrases, at most.
pub const MAX_PHRASE_CHECKS: usize = 2_000;
/// Operators read from one query, at most (the rest are plain words).
const MAX_CLAUSES: usize = 32;

/// One thing a record must (or must not) hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Clause {
    /// Words in this order (one word: the word anywhere).
    Phrase(String),
    /// A declared keyword field holds this exact value.
    Keyword { field: String, value: String },
}

/// A query in the simple syntax.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SimpleQuery {
    /// The words that score, operators removed.
    pub text: String,
    /// Each group: at least one of its clauses holds.
    pub required: Vec<Vec<Clause>>,
    /// None of these holds.
    pub excluded: Vec<Clause>,
}

impl SimpleQuery {
    /// Whether the query has no operators (then it is planned as plain text).
    pub fn is_plain(&self) -> bool {
        self.required.is_empty() && self.excluded.is_empty()
    }
}

/// A unit of the query: a word, a phrase or a field value, perhaps negated.
#[derive(Debug, Clone)]
enum Unit {
    Word(String),
    Clause(Clause),
}

/// Reads `text` in the simple syntax; `keyword_fields` are the declared keyword fields.
pub(crate) fn parse(text: &str, keyword_fields: &[&str]) -> SimpleQuery {
    let mut units: Vec<(bool, Unit, bool)> = Vec::new(); // (negated, unit, followed by OR)
    let mut clauses = 0usize;
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        // OR between two units joins them; anywhere else it is a word.
        if let Some(after) = rest.strip_prefix("OR") {
            if after.is_empty() || after.starts_with(char::is_whitespace) {
                match units.last_mut() {
                    Some(last) if !last.0 && !after.trim().is_empty() && !after.trim_start().starts_with('-') => {
                        last.2 = true
                    }
                    _ => units.push((false, Unit::Word("OR".into()), false)),
                }
                rest = after;
                continue;
            }
        }
        let (negated, body) = match rest.strip_prefix('-') {
            Some(b)
                if clauses < MAX_CLAUSES
                    && !b.is_empty()
                    && !b.starts_with(char::is_whitespace)
                    && !b.starts_with('-') =>
            {
                (true, b)
            }
            _ => (false, rest),
        };
        let (unit, after) = read_unit(body, keyword_fields, clauses < MAX_CLAUSES);
        if matches!(unit, Unit::Clause(_)) || negated {
            clauses += 1;
        }
        units.push((negated, unit, false));
        rest = after;
    }
    let mut query = SimpleQuery::default();
    let mut words: Vec<String> = Vec::new();
    let mut group: Vec<Unit> = Vec::new();
    let flush = |group: &mut Vec<Unit>, query: &mut SimpleQuery, words: &mut Vec<String>| {
        let has_clause = group.iter().any(|u| matches!(u, Unit::Clause(_)));
        let mut required = Vec::new();
        for unit in group.drain(..) {
            match unit {
                Unit::Word(w) => {
                    if has_clause {
                        required.push(Clause::Phrase(w.clone()));
                    }
                    words.push(w);
                }
                Unit::Clause(c) => {
                    if let Clause::Phrase(p) = &c {
                        words.push(p.clone());
                    }
                    required.push(c);
                }
            }
        }
        if !required.is_empty() {
            query.required.push(required);
        }
    };
    let mut joined = false;
    for (negated, unit, or_next) in units {
        if negated {
            flush(&mut group, &mut query, &mut words);
            query.excluded.push(match unit {
                Unit::Word(w) => Clause::Phrase(w),
                Unit::Clause(c) => c,
            });
            joined = false;
            continue;
        }
        if !joined {
            flush(&mut group, &mut query, &mut words);
        }
        group.push(unit);
        joined = or_next;
    }
    flush(&mut group, &mut query, &mut words);
    query.text = words.join(" ");
    query
}

/// One unit at the start of `text` (not starting with whitespace), and what follows it.
fn read_unit<'a>(text: &'a str, keyword_fields: &[&str], operators: bool) -> (Unit, &'a str) {
    if operators {
        if let Some(inner) = text.strip_prefix('"') {
            if let Some(end) = inner.find('"') {
                return (Unit::Clause(Clause::Phrase(inner[..end].to_string())), &inner[end + 1..]);
            }
        }
        if let Some((field, value)) = text.split_once(':') {
            if !field.is_empty() && !field.contains(char::is_whitespace) && keyword_fields.contains(&field) {
                if let Some(inner) = value.strip_prefix('"') {
                    if let Some(end) = inner.find('"') {
                        let value = inner[..end].to_string();
                        if !value.is_empty() {
                            let clause = Clause::Keyword { field: field.to_string(), value };
                            return (Unit::Clause(clause), &inner[end + 1..]);
                        }
                    }
                }
                let end = value.find(char::is_whitespace).unwrap_or(value.len());
                if end > 0 && !value[..end].starts_with('"') {
                    let clause = Clause::Keyword { field: field.to_string(), value: value[..end].to_string() };
                    return (Unit::Clause(clause), &value[end..]);
                }
            }
        }
    }
    let end = text.find(char::is_whitespace).unwrap_or(text.len());
    (Unit::Word(text[..end].to_string()), &text[end..])
}

/// A check of one clause against a record.
#[derive(Debug, Clone)]
enum Check {
    /// The record's postings hold this term.
    Term(Term),
    /// The record holds every term, in these relative positions (the stored text decides).
    Phrase { terms: Vec<Term>, positions: Vec<(String, usize)> },
}

/// The constraints of a simple query, compiled against one index's fields and analyzer.
#[derive(Clone)]
pub(crate) struct Constraints {
    required: Vec<Vec<Check>>,
    excluded: Vec<Check>,
    analyzer: TextAnalyzer,
    title: Field,
    body: Field,
}

impl std::fmt::Debug for Constraints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Constraints").field("required", &self.required).field("excluded", &self.excluded).finish()
    }
}

/// What the postings alone say about a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// It passes.
    Accept,
    /// It fails.
    Reject,
    /// Only its stored text can tell (a phrase whose terms it holds).
    Read,
}

impl Constraints {
    /// Compiles `query`'s constraints; `None` when none remains after analysis (a phrase of
    /// stop words constrains nothing).
    pub fn compile(query: &SimpleQuery, fields: &Fields, analyzer: &TextAnalyzer) -> Option<Constraints> {
        let check = |clause: &Clause| -> Option<Check> {
            match clause {
                Clause::Keyword { field, value } => {
                    fields.keyword(field).ok().map(|f| Check::Term(Term::from_field_text(f, value)))
                }
                Clause::Phrase(text) => {
                    let toks = tokens(analyzer, text);
                    let first = toks.first()?.position;
                    let positions: Vec<(String, usize)> =
                        toks.iter().map(|t| (t.text.clone(), t.position - first)).collect();
                    let mut terms: Vec<Term> =
                        positions.iter().map(|(t, _)| Term::from_field_text(fields.text, t)).collect();
                    if positions.len() == 1 {
                        return terms.pop().map(Check::Term);
                    }
                    terms.sort();
                    terms.dedup();
                    Some(Check::Phrase { terms, positions })
                }
            }
        };
        let required: Vec<Vec<Check>> = query
            .required
            .iter()
            .filter_map(|group| {
                let checks: Vec<Check> = group.iter().filter_map(check).collect();
                // A group with a clause that constrains nothing holds for every record.
                (checks.len() == group.len() && !checks.is_empty()).then_some(checks)
            })
            .collect();
        let excluded: Vec<Check> = query.excluded.iter().filter_map(check).collect();
        if required.is_empty() && excluded.is_empty() {
            return None;
        }
        Some(Constraints { required, excluded, analyzer: analyzer.clone(), title: fields.title, body: fields.body })
    }

    /// The terms whose postings decide (see [`SegmentMasks`]).
    fn terms(&self) -> impl Iterator<Item = &Term> {
        self.required.iter().flatten().chain(&self.excluded).flat_map(|c| match c {
            Check::Term(t) => std::slice::from_ref(t),
            Check::Phrase { terms, .. } => terms.as_slice(),
        })
    }

    /// The postings of every term of the constraints on one segment.
    pub fn masks(&self, segment: &SegmentReader) -> tantivy::Result<SegmentMasks> {
        let mut bits: HashMap<Term, Vec<u64>> = HashMap::new();
        let words = (segment.max_doc() as usize).div_ceil(64);
        for term in self.terms() {
            if bits.contains_key(term) {
                continue;
            }
            let mut mask = vec![0u64; words];
            let inverted = segment.inverted_index(term.field())?;
            if let Some(info) = inverted.get_term_info(term)? {
                let mut postings = inverted.read_block_postings_from_terminfo(&info, IndexRecordOption::Basic)?;
                loop {
                    let docs = postings.docs();
                    if docs.is_empty() {
                        break;
                    }
                    for &d in docs {
                        mask[d as usize / 64] |= 1 << (d % 64);
                    }
                    postings.advance();
                }
            }
            bits.insert(term.clone(), mask);
        }
        Ok(SegmentMasks { bits })
    }

    /// What the postings say about `doc`.
    pub fn verdict(&self, masks: &SegmentMasks, doc: DocId) -> Verdict {
        let has = |t: &Term| masks.has(t, doc);
        let cheap = |c: &Check| match c {
            Check::Term(t) => {
                if has(t) {
                    Verdict::Accept
                } else {
                    Verdict::Reject
                }
            }
            Check::Phrase { terms, .. } => {
                if terms.iter().all(&has) {
                    Verdict::Read
                } else {
                    Verdict::Reject
                }
            }
        };
        let mut read = false;
        for group in &self.required {
            let verdicts: Vec<Verdict> = group.iter().map(cheap).collect();
            if verdicts.contains(&Verdict::Accept) {
                continue;
            }
            if !verdicts.contains(&Verdict::Read) {
                return Verdict::Reject;
            }
            read = true;
        }
        for c in &self.excluded {
            match cheap(c) {
                Verdict::Accept => return Verdict::Reject,
                Verdict::Read => read = true,
                Verdict::Reject => {}
            }
        }
        if read {
            Verdict::Read
        } else {
            Verdict::Accept
        }
    }

    /// The full check of a record the postings could not decide, on its stored title and body.
    pub fn holds(&self, segments: &Segments, address: DocAddress, masks: &SegmentMasks) -> tantivy::Result<bool> {
        let doc: TantivyDocument = segments.doc(address)?;
        let text_of = |f: Field| doc.get_first(f).and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        let texts = [text_of(self.title), text_of(self.body)];
        let analysed: Vec<HashMap<usize, String>> = texts
            .iter()
            .map(|t| tokens(&self.analyzer, t).into_iter().map(|t| (t.position, t.text)).collect())
            .collect();
        let phrase_in = |positions: &[(String, usize)]| {
            analysed.iter().any(|by_position| {
                by_position.iter().any(|(&p, text)| {
                    *text == positions[0].0
                        && positions.iter().all(|(t, offset)| by_position.get(&(p + offset)).is_some_and(|x| x == t))
                })
            })
        };
        let holds = |c: &Check| match c {
            Check::Term(t) => masks.has(t, address.doc_id),
            Check::Phrase { terms, positions } => {
                terms.iter().all(|t| masks.has(t, address.doc_id)) && phrase_in(positions)
            }
        };
        Ok(self.required.iter().all(|group| group.iter().any(holds)) && !self.excluded.iter().any(holds))
    }
}

/// Per segment, which documents hold each term of the constraints.
pub(crate) struct SegmentMasks {
    bits: HashMap<Term, Vec<u64>>,
}

impl SegmentMasks {
    fn has(&self, term: &Term, doc: DocId) -> bool {
        self.bits.get(term).and_then(|b| b.get(doc as usize / 64)).is_some_and(|w| w & (1 << (doc % 64)) != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phrase(s: &str) -> Clause {
        Clause::Phrase(s.into())
    }

    #[test]
    fn reads_phrases_exclusions_or_and_fields() {
        let kw = ["category", "tags"];
        let q = parse(r#"sync "legal hold" -mobile category:billing"#, &kw);
        assert_eq!(q.text, "sync legal hold");
        assert_eq!(
            q.required,
            vec![
                vec![phrase("legal hold")],
                vec![Clause::Keyword { field: "category".into(), value: "billing".into() }]
            ]
        );
        assert_eq!(q.excluded, vec![phrase("mobile")]);
        let or = parse(r#""legal hold" OR retention sso"#, &kw);
        assert_eq!(or.required, vec![vec![phrase("legal hold"), phrase("retention")]]);
        assert_eq!(or.text, "legal hold retention sso");
        let field = parse(r#"tags:"two words" -"known bug""#, &kw);
        assert_eq!(field.required, vec![vec![Clause::Keyword { field: "tags".into(), value: "two words".into() }]]);
        assert_eq!(field.excluded, vec![phrase("known bug")]);
    }

    #[test]
    fn stray_operators_are_plain_words() {
        let kw = ["category"];
        for (text, words) in [
            (r#"unbalanced "quote here"#, r#"unbalanced "quote here"#),
            ("a - b", "a - b"),
            ("OR refund OR", "OR refund OR"),
            ("nope:field COVID-19 e-mail", "nope:field COVID-19 e-mail"),
            ("--x", "--x"),
            ("category: x", "category: x"),
            ("refund OR return", "refund return"),
        ] {
            let q = parse(text, &kw);
            assert!(q.is_plain(), "{text:?}: {q:?}");
            assert_eq!(q.text, words, "{text:?}");
        }
    }
}
