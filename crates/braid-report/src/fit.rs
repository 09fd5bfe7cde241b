//! `braid-report fit`: fits the fusion's parameters on training splits, never on test judgements.
//!
//! Every judged query of each `--set` (a dataset, its index and a *training* split) runs as
//! the default hybrid search, as itself and with one real misspelling (`--misspellings`), and
//! the legs' ranked lists are kept as that search runs them (once per leg, weighing that
//! leg). Every candidate fusion — blend over a grid of normalisation, semantic share and fuzzy
//! factor; weighted RRF over a grid of constants and weights; the weighted average of
//! normalised scores — then fuses those same lists with the very functions search uses
//! (`braid_fusion`), and is scored by mean nDCG@10, macro-averaged over the (set, clean |
//! misspelt) groups so that each counts alike. The best blend is the candidate for
//! `BlendParams::DEFAULT` (one setting for every dataset); the best blend on the queries the
//! index flags as misspelled (a "did you mean" suggestion) is reported beside it (no typo
//! route ships: research/ranking-log.md).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use braid::{Fusion, Index, Leg, LegWeights, Mode, Principal, SearchRequest};
use braid_eval::{ndcg_at, Dataset, Misspellings};
use braid_fusion::{blend, normalised, rrf, BlendParams, Fused, LegList, Normalisation};
use rayon::prelude::*;
use serde::Serialize;

/// Candidates per leg, as a hybrid search fetches them by default.
const DEPTH: usize = 100;

/// Splits nothing is ever fitted on: BEIR's `test`, and the help center's `holdout` (its half
/// of `test` that no fit reads, datasets/helpcenter/README.md).
const HELD_OUT: [&str; 2] = ["test", "holdout"];

/// One fitting set: `DATASET_DIR,INDEX_DIR,SPLIT`.
struct FitSet {
    dataset: PathBuf,
    index: PathBuf,
    split: String,
}

fn parse_set(spec: &str) -> Result<FitSet> {
    let parts: Vec<&str> = spec.split(',').collect();
    let [dataset, index, split] = parts.as_slice() else {
        bail!("--set {spec:?} is not DATASET_DIR,INDEX_DIR,SPLIT");
    };
    if HELD_OUT.contains(split) {
        bail!("--set {spec:?}: fitting on a held-out split ({split}) is not allowed (use train, dev or fit)");
    }
    Ok(FitSet { dataset: PathBuf::from(dataset), index: PathBuf::from(index), split: (*split).to_owned() })
}

/// One query's leg lists, with its judgements.
#[derive(Serialize)]
struct Sample {
    /// Index of the (set, variant) group.
    group: usize,
    /// The query's id in its dataset.
    query: String,
    /// The text searched: the query's, or its misspelt copy.
    text: String,
    /// Whether the index flagged a query word as misspelled.
    flagged: bool,
    /// What the semantic leg embedded, when it differs from `text` (its corrections).
    #[serde(skip_serializing_if = "Option::is_none")]
    embedded: Option<String>,
    lexical: Vec<(u64, f32)>,
    /// The lexical leg without feedback (not fused by the grid; for the studies).
    lexical_plain: Vec<(u64, f32)>,
    fuzzy: Vec<(u64, f32)>,
    semantic: Vec<(u64, f32)>,
    /// Local ordinal → doc id.
    ids: Vec<String>,
    /// Local ordinal → the id judged: the record's parent (its article, where a corpus of
    /// Markdown articles is indexed as sections), else its own id.
    parents: Vec<String>,
    judged: HashMap<String, i32>,
}

/// A fusion to try.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(tag = "fusion", rename_all = "lowercase")]
enum Candidate {
    Blend {
        normalisation: &'static str,
        semantic_share: f32,
        fuzzy_factor: f32,
    },
    Rrf {
        k: f32,
        fuzzy: f32,
        semantic: f32,
    },
    Average {
        normalisation: &'static str,
        fuzzy: f32,
        semantic: f32,
    },
    /// One leg alone, for reference.
    Leg {
        leg: &'static str,
    },
}

fn norm_of(name: &str) -> Normalisation {
    Normalisation::ALL.into_iter().find(|n| n.name() == name).unwrap_or(Normalisation::MinMax)
}

impl Candidate {
    fn fuse(&self, s: &Sample) -> Vec<Fused> {
        let lists = |wl: f32, wf: f32, ws: f32| {
            vec![
                LegList::new(Leg::Lexical, wl, s.lexical.clone()),
                LegList::new(Leg::Fuzzy, wf, s.fuzzy.clone()),
                LegList::new(Leg::Semantic, ws, s.semantic.clone()),
            ]
        };
        match *self {
            Candidate::Blend { normalisation, semantic_share, fuzzy_factor } => {
                let params = BlendParams { normalisation: norm_of(normalisation), semantic_share, fuzzy_factor };
                blend(&lists(1.0, 1.0, 1.0), &params).0
            }
            Candidate::Rrf { k, fuzzy, semantic } => rrf(&lists(1.0, fuzzy, semantic), k),
            Candidate::Average { normalisation, fuzzy, semantic } => {
                normalised(&lists(1.0, fuzzy, semantic), norm_of(normalisation))
            }
            Candidate::Leg { leg } => {
                let list = match leg {
                    "lexical" => &s.lexical,
                    "fuzzy" => &s.fuzzy,
                    _ => &s.semantic,
                };
                rrf(&[LegList::new(Leg::Lexical, 1.0, list.clone())], 60.0)
            }
        }
    }

    /// nDCG@10 of the fused ranking, records collapsed to what is judged (sections to their
    /// article, first occurrence kept), as `braid eval` judges a corpus of articles.
    fn ndcg(&self, s: &Sample) -> f64 {
        let mut seen = std::collections::HashSet::new();
        let ranking: Vec<String> = self
            .fuse(s)
            .iter()
            .map(|f| s.parents[f.ord as usize].clone())
            .filter(|id| seen.insert(id.clone()))
            .take(10)
            .collect();
        ndcg_at(&ranking, &s.judged, 10)
    }

    fn of_blend(p: BlendParams) -> Candidate {
        Candidate::Blend {
            normalisation: p.normalisation.name(),
            semantic_share: p.semantic_share,
            fuzzy_factor: p.fuzzy_factor,
        }
    }
}

fn grid() -> Vec<Candidate> {
    let mut out = Vec::new();
    for n in Normalisation::ALL {
        for a in 0..=20 {
            for f in [0.0, 0.25, 0.5, 0.75, 1.0] {
                out.push(Candidate::Blend {
                    normalisation: n.name(),
                    semantic_share: a as f32 / 20.0,
                    fuzzy_factor: f,
                });
            }
        }
        for fuzzy in [0.0, 0.5, 1.0] {
            for semantic in [0.5, 1.0, 1.5, 2.0, 3.0] {
                out.push(Candidate::Average { normalisation: n.name(), fuzzy, semantic });
            }
        }
    }
    for k in [10.0, 20.0, 40.0, 60.0, 100.0] {
        for fuzzy in [0.0, 0.25, 0.5, 1.0] {
            for semantic in [0.5, 0.75, 1.0, 1.5, 2.0] {
                out.push(Candidate::Rrf { k, fuzzy, semantic });
            }
        }
    }
    for leg in ["lexical", "fuzzy", "semantic"] {
        out.push(Candidate::Leg { leg });
    }
    out
}

/// A candidate's score: per group mean nDCG@10 (over the samples `keep` admits), and their
/// macro mean over the groups that have any.
#[derive(Debug, Clone, Serialize)]
struct Scored {
    candidate: Candidate,
    objective: f64,
    groups: Vec<f64>,
}

fn score(candidate: Candidate, samples: &[Sample], groups: usize, keep: impl Fn(&Sample) -> bool) -> Scored {
    let mut sum = vec![0.0; groups];
    let mut n = vec![0usize; groups];
    for s in samples.iter().filter(|s| keep(s)) {
        sum[s.group] += candidate.ndcg(s);
        n[s.group] += 1;
    }
    let means: Vec<f64> = sum.iter().zip(&n).map(|(s, n)| if *n == 0 { f64::NAN } else { s / *n as f64 }).collect();
    let present: Vec<f64> = means.iter().copied().filter(|m| !m.is_nan()).collect();
    let objective = if present.is_empty() { 0.0 } else { present.iter().sum::<f64>() / present.len() as f64 };
    Scored { candidate, objective, groups: means }
}

/// One leg's ranked `(id, judged id, raw score)` list: the judged id is the record's parent
/// where it has one (a section's article).
type Ranked = Vec<(String, String, f32)>;

/// The legs' lists for one query text as the default hybrid search runs them (the lexical
/// leg on the corrected query and with feedback, the semantic leg embedding the corrected
/// text): whether "did you mean" flagged it, the text the semantic leg embedded when it was
/// corrected, then the lexical, fuzzy and semantic lists, each in its own order. Each list is read from the hits' explanations of a hybrid search that weighs
/// that leg alone (RRF, the others at weight 0), so its every candidate ranks above the rest;
/// hits carry their stored fields (a section's parent), not their snippets.
fn leg_lists(index: &Index, text: &str, principal: &Principal) -> Result<LegLists> {
    let run = |leg: Leg, feedback: bool| -> Result<(bool, Option<String>, Ranked)> {
        let weight = |l: Leg| if l == leg { 1.0 } else { 0.0 };
        let weights =
            LegWeights { lexical: weight(Leg::Lexical), fuzzy: weight(Leg::Fuzzy), semantic: weight(Leg::Semantic) };
        let request = SearchRequest::new(text, principal.clone())
            .mode(Mode::Hybrid)
            .fusion(Fusion::Rrf)
            .weights(weights)
            .depth(DEPTH)
            .k(DEPTH)
            .suggest(leg == Leg::Lexical)
            .feedback(feedback)
            .snippet_chars(0);
        let response = index.search(&request)?;
        let mut list: Vec<(usize, (String, String, f32))> = response
            .hits
            .into_iter()
            .filter_map(|hit| {
                let found = hit.explain.legs.iter().find(|e| e.leg == leg)?;
                let judged = hit.parent.clone().unwrap_or_else(|| hit.id.clone());
                Some((found.rank, (hit.id, judged, found.raw)))
            })
            .collect();
        let candidates = response.stats.candidates.get(&leg).copied().unwrap_or(0);
        if list.len() != candidates {
            bail!("{text:?}: the hits hold {} of the {leg:?} leg's {candidates} candidates", list.len());
        }
        list.sort_by_key(|(rank, _)| *rank);
        let list = list.into_iter().map(|(_, entry)| entry).collect();
        Ok((!response.suggestions.is_empty(), response.stats.embedded, list))
    };
    let (flagged, _, lexical) = run(Leg::Lexical, true)?;
    let (_, _, lexical_plain) = run(Leg::Lexical, false)?;
    let (_, _, fuzzy) = run(Leg::Fuzzy, true)?;
    let (_, embedded, semantic) = run(Leg::Semantic, true)?;
    Ok(LegLists { flagged, embedded, lexical, lexical_plain, fuzzy, semantic })
}

/// One query's three leg lists, as [`leg_lists`] collects them.
struct LegLists {
    /// Whether the index flagged a query word as misspelled.
    flagged: bool,
    /// What the semantic leg embedded, when it differs from the query's text.
    embedded: Option<String>,
    lexical: Ranked,
    /// The lexical leg without pseudo-relevance feedback, for the studies.
    lexical_plain: Ranked,
    fuzzy: Ranked,
    semantic: Ranked,
}

#[derive(Serialize)]
struct FitReport {
    /// `set/split` and `set/split+misspelt`, in group order.
    groups: Vec<String>,
    queries: Vec<usize>,
    candidates: usize,
    /// The default blend: best objective over every query.
    best_blend: Scored,
    best_rrf: Scored,
    best_average: Scored,
    /// The blend for queries flagged as misspelled, and what the default gives on them.
    typo_blend: Scored,
    default_on_flagged: Scored,
    flagged_queries: usize,
    /// Named configurations (the old default, single legs, ablations of the best blend).
    reference: Vec<(String, Scored)>,
    /// The ten best of every family.
    top: Vec<Scored>,
}

/// Runs the fit; see the module docs.
pub fn fit(sets: &[String], misspellings: &Path, out: Option<&Path>, samples_out: Option<&Path>) -> Result<()> {
    let sets: Vec<FitSet> = sets.iter().map(|s| parse_set(s)).collect::<Result<_>>()?;
    if sets.is_empty() {
        bail!("give at least one --set DATASET_DIR,INDEX_DIR,SPLIT");
    }
    let real = Misspellings::load(misspellings).with_context(|| format!("loading {}", misspellings.display()))?;
    let mut groups = Vec::new();
    let mut samples = Vec::new();
    for set in &sets {
        let dataset = Dataset::load(&set.dataset, &set.split)
            .with_context(|| format!("loading {} ({})", set.dataset.display(), set.split))?;
        // The recorded model or an error: a fused run without its semantic leg would be
        // measured under the wrong name.
        let model = std::sync::Arc::new(crate::peers::index_model(&set.index)?);
        let index = Index::builder()
            .embedder(model)
            .open(&set.index)
            .with_context(|| format!("opening index {}", set.index.display()))?;
        if !index.has_semantic() {
            bail!("index {} has no embeddings: fitting needs the semantic leg", set.index.display());
        }
        let clean_group = groups.len();
        groups.push(format!("{}/{}", dataset.name, set.split));
        groups.push(format!("{}/{}+misspelt", dataset.name, set.split));
        let started = std::time::Instant::now();
        for query in &dataset.queries {
            let Some(judged) = dataset.qrels.get(&query.id) else { continue };
            let principal = match query.principal_tokens() {
                Some(tokens) => Principal::from_verified_tokens(tokens),
                None => Principal::public(),
            };
            let variants = [Some(query.text.clone()), real.misspell(&query.text, &query.id)];
            for (v, text) in variants.into_iter().enumerate() {
                let Some(text) = text else { continue };
                let LegLists { flagged, embedded, lexical, lexical_plain, fuzzy, semantic } =
                    leg_lists(&index, &text, &principal)?;
                let (mut ids, mut parents) = (Vec::new(), Vec::new());
                let mut local: HashMap<String, u64> = HashMap::new();
                let mut intern = |list: Ranked| -> Vec<(u64, f32)> {
                    list.into_iter()
                        .map(|(id, judged, raw)| {
                            let ord = *local.entry(id.clone()).or_insert_with(|| {
                                ids.push(id);
                                parents.push(judged);
                                ids.len() as u64 - 1
                            });
                            (ord, raw)
                        })
                        .collect()
                };
                let (lexical, fuzzy, semantic) = (intern(lexical), intern(fuzzy), intern(semantic));
                let lexical_plain = intern(lexical_plain);
                samples.push(Sample {
                    group: clean_group + v,
                    query: query.id.clone(),
                    text,
                    flagged,
                    embedded,
                    lexical,
                    lexical_plain,
                    fuzzy,
                    semantic,
                    ids,
                    parents,
                    judged: judged.clone(),
                });
            }
        }
        eprintln!(
            "{}: {} samples collected in {:.0} s",
            groups[clean_group],
            samples.iter().filter(|s| s.group >= clean_group).count(),
            started.elapsed().as_secs_f64()
        );
    }
    if let Some(path) = samples_out {
        let mut lines = String::new();
        for s in &samples {
            lines.push_str(&serde_json::to_string(&serde_json::json!({ "group_name": groups[s.group], "sample": s }))?);
            lines.push('\n');
        }
        std::fs::write(path, lines).with_context(|| format!("writing {}", path.display()))?;
    }
    let n_groups = groups.len();
    let queries: Vec<usize> = (0..n_groups).map(|g| samples.iter().filter(|s| s.group == g).count()).collect();
    let grid = grid();
    eprintln!("scoring {} candidate fusions on {} samples", grid.len(), samples.len());
    let mut scored: Vec<Scored> = grid.par_iter().map(|c| score(*c, &samples, n_groups, |_| true)).collect();
    scored.sort_by(|a, b| b.objective.total_cmp(&a.objective));
    let best = |family: fn(&Candidate) -> bool| scored.iter().find(|s| family(&s.candidate)).cloned();
    let best_blend = best(|c| matches!(c, Candidate::Blend { .. })).context("no blend scored")?;
    let best_rrf = best(|c| matches!(c, Candidate::Rrf { .. })).context("no rrf scored")?;
    let best_average = best(|c| matches!(c, Candidate::Average { .. })).context("no average scored")?;
    let flagged_queries = samples.iter().filter(|s| s.flagged).count();
    let mut on_flagged: Vec<Scored> = grid
        .par_iter()
        .filter(|c| matches!(c, Candidate::Blend { .. }))
        .map(|c| score(*c, &samples, n_groups, |s| s.flagged))
        .collect();
    on_flagged.sort_by(|a, b| b.objective.total_cmp(&a.objective));
    let typo_blend = on_flagged.first().cloned().context("no flagged query")?;
    let default_on_flagged = score(best_blend.candidate, &samples, n_groups, |s| s.flagged);
    let mut reference = vec![
        ("rrf k=60, weights 1/1/1 (the old default)".to_owned(), Candidate::Rrf { k: 60.0, fuzzy: 1.0, semantic: 1.0 }),
        ("rrf k=60, fuzzy 0".to_owned(), Candidate::Rrf { k: 60.0, fuzzy: 0.0, semantic: 1.0 }),
        ("minmax average 1/1/1".to_owned(), Candidate::Average { normalisation: "minmax", fuzzy: 1.0, semantic: 1.0 }),
        (
            "minmax average, fuzzy 0".to_owned(),
            Candidate::Average { normalisation: "minmax", fuzzy: 0.0, semantic: 1.0 },
        ),
        ("dbsf average 1/1/1".to_owned(), Candidate::Average { normalisation: "dbsf", fuzzy: 1.0, semantic: 1.0 }),
        ("the shipped default blend".to_owned(), Candidate::of_blend(BlendParams::DEFAULT)),
    ];
    if let Candidate::Blend { normalisation, semantic_share, .. } = best_blend.candidate {
        reference.push((
            "best blend without the fuzzy leg (φ = 0)".to_owned(),
            Candidate::Blend { normalisation, semantic_share, fuzzy_factor: 0.0 },
        ));
        for n in Normalisation::ALL {
            reference.push((
                format!("best blend's α and φ with {} normalisation", n.name()),
                Candidate::Blend {
                    normalisation: n.name(),
                    semantic_share,
                    fuzzy_factor: match best_blend.candidate {
                        Candidate::Blend { fuzzy_factor, .. } => fuzzy_factor,
                        _ => 1.0,
                    },
                },
            ));
        }
    }
    for leg in ["lexical", "fuzzy", "semantic"] {
        reference.push((format!("{leg} leg alone"), Candidate::Leg { leg }));
    }
    let reference: Vec<(String, Scored)> =
        reference.into_iter().map(|(name, c)| (name, score(c, &samples, n_groups, |_| true))).collect();
    let mut top = Vec::new();
    for family in [
        (|c: &Candidate| matches!(c, Candidate::Blend { .. })) as fn(&Candidate) -> bool,
        |c| matches!(c, Candidate::Rrf { .. }),
        |c| matches!(c, Candidate::Average { .. }),
    ] {
        top.extend(scored.iter().filter(|s| family(&s.candidate)).take(10).cloned());
    }
    let report = FitReport {
        groups: groups.clone(),
        queries: queries.clone(),
        candidates: grid.len(),
        best_blend,
        best_rrf,
        best_average,
        typo_blend,
        default_on_flagged,
        flagged_queries,
        reference,
        top,
    };
    println!(
        "groups: {}",
        groups.iter().zip(&queries).map(|(g, n)| format!("{g} ({n})")).collect::<Vec<_>>().join(", ")
    );
    let row = |name: &str, s: &Scored| {
        let g: Vec<String> = s.groups.iter().map(|x| format!("{x:.4}")).collect();
        println!("| {name} | {:.4} | {} |", s.objective, g.join(" | "));
    };
    println!("| fusion | macro nDCG@10 | {} |", groups.join(" | "));
    println!("|---|---:|{}", "---:|".repeat(n_groups));
    row(&format!("best blend {}", serde_json::to_string(&report.best_blend.candidate)?), &report.best_blend);
    row(&format!("best rrf {}", serde_json::to_string(&report.best_rrf.candidate)?), &report.best_rrf);
    row(&format!("best average {}", serde_json::to_string(&report.best_average.candidate)?), &report.best_average);
    for (name, s) in &report.reference {
        row(name, s);
    }
    println!("flagged (misspelled) samples: {flagged_queries}");
    row(&format!("typo blend on flagged {}", serde_json::to_string(&report.typo_blend.candidate)?), &report.typo_blend);
    row("default blend on flagged", &report.default_on_flagged);
    if let Some(out) = out {
        std::fs::write(out, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_out_splits_are_refused() {
        assert!(parse_set("d,i,train").is_ok());
        assert!(parse_set("d,i,fit").is_ok());
        for split in HELD_OUT {
            let err = parse_set(&format!("d,i,{split}")).err().expect("a held-out split is refused");
            assert!(err.to_string().contains("held-out"), "{err}");
        }
        assert!(parse_set("d,i").is_err());
    }
}
