//! The boost stage: the request's functions of each candidate's own fields multiply its
//! relevance, and the candidates are ranked again by the product (see `braid_core::Boosts`
//! for the formula, docs/search-box.md for the choices).
//!
//! It runs on the fused candidates (every leg's list, after the score threshold), before the
//! ranking is cut to the page, so a boosted record can rise from anywhere in the legs' depth.
//! Field values come from the candidates themselves (numeric columns, keyword postings), so
//! the stage reads nothing of any other record.

use std::collections::HashMap;

use braid_core::{BoostExplain, Boosts, FactorExplain, Ordinal, Result};
use braid_fusion::Fused;
use braid_lexical::Snapshot;

/// Each boosted candidate's explanation, by ordinal.
pub(crate) type Boosted = HashMap<Ordinal, BoostExplain>;

/// The relevance a hit shows without boosts: the fused score on its `[0, 1]` scale.
pub(crate) fn relevance(fused: &Fused) -> f32 {
    fused.score.min(1.0)
}

/// Rescores and reorders `fused` by the request's boosts (stable: equal scores keep the
/// fused order). `None`, and nothing touched, when no function rescores.
///
/// # Errors
/// [`braid_core::Error::UnknownField`] for a function on a field that is not a declared
/// keyword (keyword boosts) or numeric field (decays and numeric boosts), whether or not any
/// candidate exists.
pub(crate) fn rescore(snapshot: &Snapshot, boosts: &Boosts, fused: &mut Vec<Fused>) -> Result<Option<Boosted>> {
    if !boosts.rescores() {
        return Ok(None);
    }
    let ords: Vec<Ordinal> = fused.iter().map(|f| f.ord).collect();
    let located = snapshot.locate(&ords)?;
    let mut factors: Vec<Vec<FactorExplain>> = vec![Vec::new(); ords.len()];
    for b in &boosts.keywords {
        for (out, holds) in factors.iter_mut().zip(snapshot.holds_keyword(&located, &b.field, &b.value)?) {
            out.push(FactorExplain {
                function: "keyword".into(),
                field: b.field.clone(),
                value: None,
                factor: b.factor_for(holds),
            });
        }
    }
    let mut numbers: HashMap<&str, Vec<Option<f64>>> = HashMap::new();
    for field in boosts.number_fields() {
        numbers.insert(field, snapshot.numbers_of(&located, field)?);
    }
    let values = |field: &str| numbers.get(field).cloned().unwrap_or_default();
    for d in &boosts.decay {
        for (out, value) in factors.iter_mut().zip(values(&d.field)) {
            let function = format!("decay:{}", d.function.name());
            out.push(FactorExplain { function, field: d.field.clone(), value, factor: d.factor_for(value) });
        }
    }
    for b in &boosts.numbers {
        for (out, value) in factors.iter_mut().zip(values(&b.field)) {
            let function = format!("number:{}", b.modifier.name());
            out.push(FactorExplain { function, field: b.field.clone(), value, factor: b.factor_for(value) });
        }
    }
    let mut scored: Vec<(Fused, BoostExplain)> = fused
        .drain(..)
        .zip(factors)
        .map(|(f, factors)| {
            let relevance = relevance(&f);
            let score = factors.iter().fold(f64::from(relevance), |s, x| s * x.factor) as f32;
            (f, BoostExplain { relevance, factors, score })
        })
        .collect();
    scored.sort_by(|a, b| b.1.score.total_cmp(&a.1.score));
    let mut boosted = Boosted::with_capacity(scored.len());
    for (f, explain) in scored {
        boosted.insert(f.ord, explain);
        fused.push(f);
    }
    Ok(Some(boosted))
}
