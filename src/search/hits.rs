//! Stages 7–10: hits for the ranked candidates, collapsing, and snippets.

use std::collections::BTreeMap;

use braid_core::{BoostExplain, Explain, Hit, LegExplain, Ordinal, Result, SynonymMatch};
use braid_fusion::Fused;
use braid_lexical::{IndexedRecord, Snapshot, SynonymUse};

use crate::scoring::{self, Boosted};

/// A hit with the body its record holds (for reranking and snippets, which only the final
/// top k get; empty when only ids were read).
pub(super) type HitWithBody = (Hit, String);

/// What fusion and the boost stage found: the ranked candidates, the query's synonym expansions
/// and, when the request's boosts rescored, each candidate's boost explanation.
pub(super) struct Found<'a> {
    pub fused: &'a [Fused],
    pub synonyms: &'a [SynonymUse],
    pub boosted: Option<&'a Boosted>,
}

/// Hits for the ranked candidates, in order, each with its ordinal (the second list, aligned).
/// With `ids_only`, hits carry ids alone and no stored record is read; the first `skip`
/// (ranked before the page, never returned) carry ids alone too.
///
/// Each hit's explain record names the synonyms (of the query's expansions) its record holds,
/// and how the boosts changed its score.
pub(super) fn hits(
    snapshot: &Snapshot,
    found: &Found<'_>,
    ids_only: bool,
    skip: usize,
) -> Result<(Vec<HitWithBody>, Vec<Ordinal>)> {
    let fused = found.fused;
    let ords: Vec<u64> = fused.iter().map(|f| f.ord).collect();
    let held: BTreeMap<u64, Vec<SynonymMatch>> = if found.synonyms.is_empty() {
        BTreeMap::new()
    } else {
        ords.iter().copied().zip(snapshot.synonyms_held(found.synonyms, &ords)?).collect()
    };
    let bare_hit = |i: usize, f: &Fused, id: String| {
        let boost = found.boosted.and_then(|b| b.get(&f.ord)).cloned();
        bare_hit(i, f, id, held.get(&f.ord), boost)
    };
    let skip = if ids_only { fused.len() } else { skip.min(fused.len()) };
    let ids = snapshot.ids_of(&ords[..skip])?;
    let (mut hits, mut held_ords): (Vec<HitWithBody>, Vec<Ordinal>) = fused
        .iter()
        .zip(ids)
        .enumerate()
        .filter_map(|(i, (f, id))| id.map(|id| ((bare_hit(i, f, id), String::new()), f.ord)))
        .unzip();
    let records = snapshot.records(&ords[skip..])?;
    let mut by_ord: BTreeMap<u64, IndexedRecord> = records.into_iter().map(|r| (r.ord, r)).collect();
    for (i, f) in fused.iter().enumerate().skip(skip) {
        let Some(record) = by_ord.remove(&f.ord) else { continue };
        let hit = Hit {
            title: record.title,
            parent: record.parent,
            section: record.section,
            lines: record.lines,
            keywords: record.keywords,
            numbers: record.numbers,
            ..bare_hit(i, f, record.id)
        };
        hits.push((hit, record.body));
        held_ords.push(f.ord);
    }
    Ok((hits, held_ords))
}

/// The hit of the `i`-th ranked candidate: id, score and explain record.
fn bare_hit(i: usize, f: &Fused, id: String, synonyms: Option<&Vec<SynonymMatch>>, boost: Option<BoostExplain>) -> Hit {
    let legs = f
        .legs
        .iter()
        .map(|l| LegExplain { leg: l.leg, rank: l.rank, raw: l.raw, contribution: l.contribution })
        .collect();
    let score = boost.as_ref().map_or_else(|| scoring::relevance(f), |b| b.score);
    let explain = Explain {
        legs,
        fused: f.score,
        fused_rank: i + 1,
        rerank: None,
        synonyms: synonyms.cloned().unwrap_or_default(),
        boost,
    };
    Hit::id_only(id, score, explain)
}

/// The final hits, with snippets of `snippet_chars` around the highlighted terms — or with ids
/// alone when the caller asked for them (reranking or collapsing may have read the records).
pub(super) fn finish(
    snapshot: &Snapshot,
    hits: Vec<HitWithBody>,
    highlight: &BTreeMap<String, f32>,
    ids_only: bool,
    snippet_chars: usize,
) -> Vec<Hit> {
    let snippets = snapshot.snippets(highlight, if ids_only { 0 } else { snippet_chars });
    hits.into_iter()
        .map(|(mut hit, body)| {
            if ids_only {
                hit = Hit::id_only(hit.id, hit.score, hit.explain);
            } else {
                hit.snippet = snippets.of(&body);
            }
            hit
        })
        .collect()
}
