//! Stage 2, plan: which legs run, how deep, and what the rerank stage may score.

use braid_core::{Error, Language, Leg, Mode, Result, SearchRequest, DEFAULT_RERANK_CANDIDATES};

use crate::paging::Page;
use crate::searcher::Searcher;

/// What a request will do on this searcher's commit, decided before any record is read.
#[derive(Clone)]
pub(super) struct Plan<'r> {
    /// The legs to run, in fusion order.
    pub legs: Vec<Leg>,
    /// The query's language (the embedder may not cover it).
    pub language: Language,
    /// The request's query vector, checked against the index.
    pub supplied: Option<&'r [f32]>,
    /// Candidates the cross-encoder scores (0: no rerank stage).
    pub rerank_budget: usize,
    /// Candidates each leg returns.
    pub depth: usize,
    /// A single leg whose order is the final one fetches only up to the page's end.
    pub shortcut: bool,
    /// Whether the request counts facets.
    pub facets: bool,
}

impl Plan<'_> {
    /// Whether the lexical leg runs on the corrected query (and with pseudo-relevance
    /// feedback where the request asks for it): when the fuzzy leg runs beside it.
    pub fn corrects_lexical(&self) -> bool {
        self.legs.contains(&Leg::Lexical) && self.legs.contains(&Leg::Fuzzy)
    }

    /// Whether the semantic leg runs on the query's text (it embeds it) rather than on a
    /// supplied vector.
    pub fn embeds_text(&self) -> bool {
        self.supplied.is_none() && self.legs.contains(&Leg::Semantic)
    }

    /// Whether the semantic leg embeds `corrected`, the query as "did you mean" corrects it,
    /// given whether the model `covers` the corrected text's language. A correction can change
    /// the language: pinyin (Latin letters, which every model is asked to read) is corrected
    /// to the Chinese words it names. A model that does not cover that language reads its
    /// characters as unknown tokens, so its vector ranks noise: hybrid then runs without the
    /// semantic leg, as it does for a query typed in that language; semantic mode, asked for
    /// that leg alone, embeds the query as typed. `false` means the text as typed is embedded.
    pub fn embeds_correction(&mut self, covers: bool) -> bool {
        if covers || !self.embeds_text() {
            return true;
        }
        if self.legs.len() > 1 {
            self.legs.retain(|leg| *leg != Leg::Semantic);
        }
        false
    }
}

/// Plans `request` on `searcher`.
pub(super) fn plan<'r>(searcher: &Searcher, request: &'r SearchRequest, page: &Page) -> Result<Plan<'r>> {
    let semantic = searcher.semantic.as_deref();
    let language = Language::detect(request.query.as_str());
    let rerank_budget = match &searcher.reranker {
        Some(_) => request.rerank.unwrap_or(DEFAULT_RERANK_CANDIDATES),
        None => 0,
    };
    let supplied = crate::semantic::check_query_vector(semantic, request)?;
    if request.mode == Mode::Semantic && supplied.is_none() && semantic.is_some_and(|s| s.embedder.is_none()) {
        return Err(crate::semantic::no_model());
    }
    let can_embed = semantic.map(|s| supplied.is_some() || s.embeds(language));
    let legs = legs_for(request.mode, can_embed, language)?;
    // A single leg's order is the final order, so it fetches only what the response can use —
    // unless boosts rescore every candidate, grouping or MMR choose among them, or facets count
    // the semantic leg's candidates.
    let facets = !request.facets.is_empty();
    let semantic_facets = facets && legs == [Leg::Semantic];
    let shortcut = legs.len() == 1 && !request.regroups() && !request.boosts.rescores() && !semantic_facets;
    let depth = if shortcut {
        request.candidates_per_leg().min(page.end().max(rerank_budget))
    } else {
        request.candidates_per_leg()
    };
    Ok(Plan { legs, language, supplied, rerank_budget, depth, shortcut, facets })
}

/// The legs a mode runs on this index: `semantic` is `None` without an embedding model, and
/// whether the model covers the query's language otherwise. A model that does not cover it
/// (an English model asked in Chinese) leaves hybrid to the lexical legs, and makes
/// semantic mode an error rather than a ranking of noise.
fn legs_for(mode: Mode, semantic: Option<bool>, language: Language) -> Result<Vec<Leg>> {
    Ok(match mode {
        Mode::Lexical => vec![Leg::Lexical],
        Mode::Fuzzy => vec![Leg::Fuzzy],
        Mode::Semantic if semantic == Some(true) => vec![Leg::Semantic],
        Mode::Semantic if semantic == Some(false) => {
            return Err(Error::LegUnavailable {
                leg: "semantic",
                reason: format!(
                    "the embedding model does not cover this query's language ({}); open the index with one that does",
                    language.code()
                ),
            })
        }
        Mode::Semantic => {
            return Err(Error::LegUnavailable {
                leg: "semantic",
                reason: "no embedding model is attached to this index (index with `braid index --model <DIR>`, \
                         or build the index with `IndexBuilder::embedder`)"
                    .into(),
            })
        }
        Mode::Hybrid if semantic == Some(true) => vec![Leg::Lexical, Leg::Fuzzy, Leg::Semantic],
        Mode::Hybrid => vec![Leg::Lexical, Leg::Fuzzy],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(legs: &[Leg], supplied: Option<&'static [f32]>) -> Plan<'static> {
        Plan {
            legs: legs.to_vec(),
            language: Language::Other,
            supplied,
            rerank_budget: 0,
            depth: 100,
            shortcut: false,
            facets: false,
        }
    }

    #[test]
    fn a_correction_the_model_cannot_read_is_not_embedded() {
        let all = [Leg::Lexical, Leg::Fuzzy, Leg::Semantic];
        // Covered: embedded, every leg runs.
        let mut hybrid = plan(&all, None);
        assert!(hybrid.embeds_correction(true));
        assert_eq!(hybrid.legs, all);
        // Not covered: hybrid runs the word legs alone.
        assert!(!hybrid.embeds_correction(false));
        assert_eq!(hybrid.legs, [Leg::Lexical, Leg::Fuzzy]);
        // Semantic mode keeps its leg and embeds the text as typed.
        let mut semantic = plan(&[Leg::Semantic], None);
        assert!(!semantic.embeds_correction(false));
        assert_eq!(semantic.legs, [Leg::Semantic]);
        // A supplied vector embeds nothing, so no correction can be in its way.
        let mut supplied = plan(&all, Some(&[1.0]));
        assert!(supplied.embeds_correction(false));
        assert_eq!(supplied.legs, all);
    }
}
