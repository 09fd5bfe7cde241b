//! The opt-in simple query syntax on the view: the words that score, and the constraints
//! (`+`, `-`, quotes, `field:value`) checked over allowed records (see [`crate::simple`]).

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::HashMap;

use braid_core::{Ordinal, QuerySyntax, Result};

use super::View;
use crate::error::lexical;
use crate::simple::{self, Constraints, SimpleQuery, Verdict, MAX_PHRASE_CHECKS};

impl View<'_> {
    /// The words of `text` that score, as the legs read it in `syntax`: the text itself,
    /// except in the simple syntax, where operators, excluded words and `field:value` are
    /// removed (what the semantic leg embeds and "did you mean" reads).
    pub fn scoring_text<'t>(&self, text: &'t str, syntax: QuerySyntax) -> Cow<'t, str> {
        match syntax {
            QuerySyntax::Simple => self.simple(text).0,
            QuerySyntax::Plain | QuerySyntax::Tantivy => Cow::Borrowed(text),
        }
    }

    /// The candidates of a leg that did not apply the simple syntax's constraints itself (the
    /// semantic leg), without those that fail them; in their order. Other syntaxes keep all.
    ///
    /// # Errors
    /// [`braid_core::Error::Lexical`] when the index cannot be read.
    pub fn keep_matching(
        &self,
        text: &str,
        syntax: QuerySyntax,
        candidates: Vec<(Ordinal, f32)>,
    ) -> Result<Vec<(Ordinal, f32)>> {
        let (QuerySyntax::Simple, (_, Some(constraints))) = (syntax, self.simple(text)) else { return Ok(candidates) };
        let s = self.snapshot;
        let mut masks: HashMap<u32, simple::SegmentMasks> = HashMap::new();
        let mut reads = 0;
        let mut out = Vec::with_capacity(candidates.len());
        for (ord, score) in candidates {
            let Some(address) = s.address_of_ord(ord)? else { continue };
            let m = match masks.entry(address.segment_ord) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => {
                    let segment = s.segments.reader(address.segment_ord);
                    e.insert(constraints.masks(segment).map_err(lexical)?)
                }
            };
            let m = &*m;
            let keep = match constraints.verdict(m, address.doc_id) {
                Verdict::Accept => true,
                Verdict::Reject => false,
                Verdict::Read if reads < MAX_PHRASE_CHECKS => {
                    reads += 1;
                    constraints.holds(&s.segments, address, m).map_err(lexical)?
                }
                Verdict::Read => false,
            };
            if keep {
                out.push((ord, score));
            }
        }
        Ok(out)
    }

    /// A query in the simple syntax: the words that score (the text itself when it has no
    /// operators, so it plans exactly as plain text) and its constraints.
    pub(super) fn simple<'t>(&self, text: &'t str) -> (Cow<'t, str>, Option<Constraints>) {
        let s = self.snapshot;
        let fields: Vec<&str> = s.config.keyword_fields.iter().map(String::as_str).collect();
        let query: SimpleQuery = simple::parse(text, &fields);
        if query.is_plain() {
            return (Cow::Borrowed(text), None);
        }
        let constraints = Constraints::compile(&query, &s.fields, &s.analyzer);
        let mut words = query.text;
        // A query that ends with a space or a closed quote is not being typed.
        if text.ends_with(char::is_whitespace) || text.ends_with('"') {
            words.push(' ');
        }
        (Cow::Owned(words), constraints)
    }
}
