//! Stages 7–10: hits for the fused candidates, collapsing, and snippets.

use std::collections::{BTreeMap, HashSet};

use braid_core::{Explain, Hit, LegExplain, Result, SynonymMatch};
use braid_fusion::Fused;
use braid_lexical::{Snapshot, StoredRecord, SynonymUse};

/// A hit with the body its record holds (for reranking and snippets, which only the final
/// top k get; empty when only ids were read).
pub(super) type HitWithBody = (Hit, String);

/// Hits for the fused candidates, in fused order. With `ids_only`, hits carry ids alone and no
/// stored record is read.
///
/// Each hit's explain record names the synonyms (of the query's expansions, `synonyms`) its
/// record holds.
pub(super) fn hits(
    snapshot: &Snapshot,
    fused: &[Fused],
    ids_only: bool,
    synonyms: &[SynonymUse],
) -> Result<Vec<HitWithBody>> {
    let ords: Vec<u64> = fused.iter().map(|f| f.ord).collect();
    let held: BTreeMap<u64, Vec<SynonymMatch>> = if synonyms.is_empty() {
        BTreeMap::new()
    } else {
        ords.iter().copied().zip(snapshot.synonyms_held(synonyms, &ords)?).collect()
    };
    let bare_hit = |i: usize, f: &Fused, id: String| bare_hit(i, f, id, held.get(&f.ord));
    if ids_only {
        let ids = snapshot.ids_of(&ords)?;
        return Ok(fused
            .iter()
            .zip(ids)
            .enumerate()
            .filter_map(|(i, (f, id))| id.map(|id| (bare_hit(i, f, id), String::new())))
            .collect());
    }
    let records = snapshot.records(&ords)?;
    let mut by_ord: BTreeMap<u64, StoredRecord> = records.into_iter().map(|r| (r.ord, r)).collect();
    let mut hits = Vec::with_capacity(fused.len());
    for (i, f) in fused.iter().enumerate() {
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
    }
    Ok(hits)
}

/// The hit of the `i`-th fused candidate: id, score and explain record.
fn bare_hit(i: usize, f: &Fused, id: String, synonyms: Option<&Vec<SynonymMatch>>) -> Hit {
    let legs = f
        .legs
        .iter()
        .map(|l| LegExplain { leg: l.leg, rank: l.rank, raw: l.raw, contribution: l.contribution })
        .collect();
    let explain = Explain {
        legs,
        fused: f.score,
        fused_rank: i + 1,
        rerank: None,
        synonyms: synonyms.cloned().unwrap_or_default(),
    };
    Hit::id_only(id, f.score.min(1.0), explain)
}

/// Keeps the best hit per article (a record's parent, or the record itself): after rerank, so
/// the best section per article is the best by the final order.
pub(super) fn collapse(hits: &mut Vec<HitWithBody>) {
    let mut seen = HashSet::new();
    hits.retain(|(hit, _)| seen.insert(hit.parent.clone().unwrap_or_else(|| hit.id.clone())));
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
