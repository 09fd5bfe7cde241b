//! Per-request boosts: field weights for the lexical legs, and functions of a record's own
//! fields (a decay on a date, a boost by a number, a factor for a keyword value) that multiply
//! its relevance.
//!
//! The formula (docs/search-box.md, "Boosts and decay"), as Elasticsearch's `function_score`
//! with `score_mode: multiply` and `boost_mode: multiply`:
//!
//! ```text
//! score = relevance × Π decay(field) × Π (1 + weight · f(field)) × Π keyword factor
//! ```
//!
//! `relevance` is the fused score on its `[0, 1]` scale (`Hit::score` without boosts); each
//! decay is one of Elasticsearch's decay functions, with its formulas; `f` is `x`, `ln(1 + x)`
//! or `√x` of the field's value (negative values count as 0); a keyword factor applies when
//! the record holds the value. A record without the field gets 1 from that function.

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The most functions (decays, number and keyword boosts together) one request may carry.
pub const MAX_BOOST_FUNCTIONS: usize = 16;

/// What a request boosts. By default, nothing: the ranking is the fused ranking.
///
/// ```
/// use braid_core::{Boosts, Decay, DecayFunction, NumberBoost, Modifier};
/// let now = 1_790_000_000.0;
/// let boosts = Boosts::default()
///     .decay(Decay::new("updated", DecayFunction::Exp, now, 86_400.0 * 30.0))
///     .number(NumberBoost::new("priority", 0.1, Modifier::Log1p));
/// assert!(boosts.rescores());
/// assert!(boosts.validate().is_ok());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Boosts {
    /// The weight of a title match in the lexical and fuzzy legs (plain query syntax): it
    /// replaces the schema's `title_boost` (by default 0.1) for this request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<f32>,
    /// The weight of the flat title+body BM25 in the lexical and fuzzy legs (by default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<f32>,
    /// Factors for records holding a keyword value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<KeywordBoost>,
    /// Decays on numeric or date fields.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decay: Vec<Decay>,
    /// Boosts by numeric fields.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub numbers: Vec<NumberBoost>,
}

impl Boosts {
    /// Sets the title weight (see [`Boosts::title`]).
    pub fn title_weight(mut self, weight: f32) -> Self {
        self.title = Some(weight);
        self
    }

    /// Sets the body weight (see [`Boosts::body`]).
    pub fn body_weight(mut self, weight: f32) -> Self {
        self.body = Some(weight);
        self
    }

    /// Adds a keyword factor.
    pub fn keyword(mut self, boost: KeywordBoost) -> Self {
        self.keywords.push(boost);
        self
    }

    /// Adds a decay.
    pub fn decay(mut self, decay: Decay) -> Self {
        self.decay.push(decay);
        self
    }

    /// Adds a numeric boost.
    pub fn number(mut self, boost: NumberBoost) -> Self {
        self.numbers.push(boost);
        self
    }

    /// Whether the legs' field weights differ from the schema's.
    pub fn reweights_fields(&self) -> bool {
        self.title.is_some() || self.body.is_some()
    }

    /// Whether any function of the records' fields rescores the fused candidates.
    pub fn rescores(&self) -> bool {
        !(self.keywords.is_empty() && self.decay.is_empty() && self.numbers.is_empty())
    }

    /// Whether nothing is boosted.
    pub fn is_empty(&self) -> bool {
        !self.reweights_fields() && !self.rescores()
    }

    /// The numeric fields the functions read, each once.
    pub fn number_fields(&self) -> Vec<&str> {
        let mut out: Vec<&str> =
            self.decay.iter().map(|d| d.field.as_str()).chain(self.numbers.iter().map(|n| n.field.as_str())).collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Checks every weight and parameter.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] naming the bad one: a negative or non-finite weight, a
    /// decay's scale that is not positive, a negative offset, a `decay` outside `(0, 1)`, or
    /// more than [`MAX_BOOST_FUNCTIONS`] functions.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: String| Err(Error::invalid_request(what));
        for (name, w) in [("title", self.title), ("body", self.body)] {
            if w.is_some_and(|w| !w.is_finite() || w < 0.0) {
                return bad(format!("boost `{name}` must be a finite number >= 0"));
            }
        }
        let n = self.keywords.len() + self.decay.len() + self.numbers.len();
        if n > MAX_BOOST_FUNCTIONS {
            return bad(format!("{n} boost functions, at most {MAX_BOOST_FUNCTIONS} are accepted"));
        }
        for k in &self.keywords {
            if !k.factor.is_finite() || k.factor < 0.0 {
                return bad(format!("keyword boost on `{}`: factor must be a finite number >= 0", k.field));
            }
        }
        for d in &self.decay {
            let field = &d.field;
            if !d.origin.is_finite() {
                return bad(format!("decay on `{field}`: origin must be a finite number"));
            }
            if !d.scale.is_finite() || d.scale <= 0.0 {
                return bad(format!("decay on `{field}`: scale must be a finite number > 0"));
            }
            if !d.offset.is_finite() || d.offset < 0.0 {
                return bad(format!("decay on `{field}`: offset must be a finite number >= 0"));
            }
            if !(d.decay > 0.0 && d.decay < 1.0) {
                return bad(format!("decay on `{field}`: decay must lie strictly between 0 and 1"));
            }
        }
        for b in &self.numbers {
            if !b.weight.is_finite() || b.weight < 0.0 {
                return bad(format!("number boost on `{}`: weight must be a finite number >= 0", b.field));
            }
        }
        Ok(())
    }
}

/// A factor for records whose keyword field holds a value (Elasticsearch's `function_score`
/// with a `filter` and a `weight`): `factor` when it does, 1 otherwise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeywordBoost {
    /// The declared keyword field.
    pub field: String,
    /// The value.
    pub value: String,
    /// The factor (>= 0; below 1 demotes).
    pub factor: f64,
}

impl KeywordBoost {
    /// `factor` for records whose `field` holds `value`.
    pub fn new(field: impl Into<String>, value: impl Into<String>, factor: f64) -> Self {
        KeywordBoost { field: field.into(), value: value.into(), factor }
    }

    /// The factor for a record that holds the value or not.
    pub fn factor_for(&self, holds: bool) -> f64 {
        if holds {
            self.factor
        } else {
            1.0
        }
    }
}

/// The shape of a decay, as Elasticsearch's decay functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DecayFunction {
    /// `exp(λ · d)`, `λ = ln(decay) / scale`.
    Exp,
    /// `exp(−d² / 2σ²)`, `σ² = −scale² / (2 ln(decay))`.
    Gauss,
    /// `max(0, (s − d) / s)`, `s = scale / (1 − decay)`.
    Linear,
}

impl DecayFunction {
    /// Parses `exp`, `gauss` or `linear`.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.trim().to_ascii_lowercase().as_str() {
            "exp" | "exponential" => DecayFunction::Exp,
            "gauss" | "gaussian" => DecayFunction::Gauss,
            "linear" => DecayFunction::Linear,
            _ => return None,
        })
    }

    /// The function's name.
    pub fn name(self) -> &'static str {
        match self {
            DecayFunction::Exp => "exp",
            DecayFunction::Gauss => "gauss",
            DecayFunction::Linear => "linear",
        }
    }
}

/// A decay on a numeric or date field (dates as Unix seconds): 1 within `offset` of `origin`,
/// `decay` at `offset + scale` from it, on the way to 0 beyond; in between as the function's
/// shape says. `d = max(0, |value − origin| − offset)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decay {
    /// The numeric or date field.
    pub field: String,
    /// The shape.
    pub function: DecayFunction,
    /// Where the factor is 1 (for recency: now, as Unix seconds).
    pub origin: f64,
    /// The distance past `offset` at which the factor is `decay` (> 0).
    pub scale: f64,
    /// The distance from `origin` within which the factor stays 1. By default, 0.
    #[serde(default)]
    pub offset: f64,
    /// The factor at `offset + scale`, strictly between 0 and 1. By default, 0.5.
    #[serde(default = "half")]
    pub decay: f64,
}

fn half() -> f64 {
    0.5
}

impl Decay {
    /// A decay with offset 0 and decay 0.5 (the factor halves at `scale` from `origin`).
    pub fn new(field: impl Into<String>, function: DecayFunction, origin: f64, scale: f64) -> Self {
        Decay { field: field.into(), function, origin, scale, offset: 0.0, decay: 0.5 }
    }

    /// Sets the offset.
    pub fn offset(mut self, offset: f64) -> Self {
        self.offset = offset;
        self
    }

    /// Sets the factor at `offset + scale`.
    pub fn decay(mut self, decay: f64) -> Self {
        self.decay = decay;
        self
    }

    /// The factor for a record whose field holds `value` (1 without a value).
    ///
    /// ```
    /// use braid_core::{Decay, DecayFunction};
    /// let d = Decay::new("updated", DecayFunction::Exp, 100.0, 10.0);
    /// assert_eq!(d.factor_for(Some(100.0)), 1.0);
    /// assert!((d.factor_for(Some(90.0)) - 0.5).abs() < 1e-12);
    /// assert!((d.factor_for(Some(120.0)) - 0.25).abs() < 1e-12);
    /// assert_eq!(d.factor_for(None), 1.0);
    /// ```
    pub fn factor_for(&self, value: Option<f64>) -> f64 {
        let Some(x) = value else { return 1.0 };
        let d = ((x - self.origin).abs() - self.offset).max(0.0);
        match self.function {
            DecayFunction::Exp => ((self.decay.ln() / self.scale) * d).exp(),
            DecayFunction::Gauss => {
                let sigma2 = -(self.scale * self.scale) / (2.0 * self.decay.ln());
                (-(d * d) / (2.0 * sigma2)).exp()
            }
            DecayFunction::Linear => {
                let s = self.scale / (1.0 - self.decay);
                ((s - d) / s).max(0.0)
            }
        }
    }
}

/// How a numeric boost reads its field's value `x` (negative values count as 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Modifier {
    /// `x`.
    #[default]
    Linear,
    /// `ln(1 + x)`.
    Log1p,
    /// `√x`.
    Sqrt,
}

impl Modifier {
    /// Parses `linear`, `log1p` or `sqrt`.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.trim().to_ascii_lowercase().as_str() {
            "linear" | "none" => Modifier::Linear,
            "log1p" | "ln1p" => Modifier::Log1p,
            "sqrt" => Modifier::Sqrt,
            _ => return None,
        })
    }

    /// The modifier's name.
    pub fn name(self) -> &'static str {
        match self {
            Modifier::Linear => "linear",
            Modifier::Log1p => "log1p",
            Modifier::Sqrt => "sqrt",
        }
    }

    /// `f(x)` (negative `x` counts as 0).
    pub fn apply(self, x: f64) -> f64 {
        let x = x.max(0.0);
        match self {
            Modifier::Linear => x,
            Modifier::Log1p => x.ln_1p(),
            Modifier::Sqrt => x.sqrt(),
        }
    }
}

/// A boost by a numeric field (importance, popularity): the factor `1 + weight · f(value)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NumberBoost {
    /// The numeric field.
    pub field: String,
    /// The weight (>= 0).
    pub weight: f64,
    /// How the value is read. By default, [`Modifier::Linear`].
    #[serde(default)]
    pub modifier: Modifier,
}

impl NumberBoost {
    /// `1 + weight · modifier(value)`.
    pub fn new(field: impl Into<String>, weight: f64, modifier: Modifier) -> Self {
        NumberBoost { field: field.into(), weight, modifier }
    }

    /// The factor for a record whose field holds `value` (1 without a value).
    ///
    /// ```
    /// use braid_core::{Modifier, NumberBoost};
    /// let b = NumberBoost::new("importance", 0.1, Modifier::Linear);
    /// assert!((b.factor_for(Some(7.0)) - 1.7).abs() < 1e-12);
    /// assert_eq!(b.factor_for(None), 1.0);
    /// ```
    pub fn factor_for(&self, value: Option<f64>) -> f64 {
        value.map_or(1.0, |x| 1.0 + self.weight * self.modifier.apply(x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Elasticsearch's definition: each function is 1 within the offset and `decay` at
    /// `offset + scale`, whatever its shape.
    #[test]
    fn decays_meet_elasticsearch_anchor_points() {
        for function in [DecayFunction::Exp, DecayFunction::Gauss, DecayFunction::Linear] {
            for decay in [0.1, 0.5, 0.9] {
                let d = Decay::new("t", function, 1000.0, 50.0).offset(5.0).decay(decay);
                for x in [1000.0, 1003.0, 995.0] {
                    assert_eq!(d.factor_for(Some(x)), 1.0, "{function:?}");
                }
                for x in [1055.0, 945.0] {
                    assert!((d.factor_for(Some(x)) - decay).abs() < 1e-12, "{function:?} {decay} {x}");
                }
                let far = d.factor_for(Some(5000.0));
                assert!((0.0..decay).contains(&far), "{function:?}: {far}");
            }
        }
        // Shapes between the anchors: gauss at half the scale is decay^(1/4), exp decay^(1/2),
        // linear halfway between 1 and decay's line.
        let at = |f| Decay::new("t", f, 0.0, 10.0).decay(0.5).factor_for(Some(5.0));
        assert!((at(DecayFunction::Gauss) - 0.5f64.powf(0.25)).abs() < 1e-12);
        assert!((at(DecayFunction::Exp) - 0.5f64.sqrt()).abs() < 1e-12);
        assert!((at(DecayFunction::Linear) - 0.75).abs() < 1e-12);
        assert_eq!(Decay::new("t", DecayFunction::Linear, 0.0, 10.0).factor_for(Some(25.0)), 0.0);
    }

    #[test]
    fn validation_names_the_bad_parameter() {
        assert!(Boosts::default().validate().is_ok());
        assert!(Boosts::default().is_empty());
        let bad = [
            Boosts::default().title_weight(-1.0),
            Boosts::default().body_weight(f32::NAN),
            Boosts::default().decay(Decay::new("t", DecayFunction::Exp, 0.0, 0.0)),
            Boosts::default().decay(Decay::new("t", DecayFunction::Exp, 0.0, 1.0).decay(1.0)),
            Boosts::default().decay(Decay::new("t", DecayFunction::Exp, 0.0, 1.0).offset(-1.0)),
            Boosts::default().decay(Decay::new("t", DecayFunction::Exp, f64::INFINITY, 1.0)),
            Boosts::default().number(NumberBoost::new("n", -0.5, Modifier::Linear)),
            Boosts::default().keyword(KeywordBoost::new("k", "v", f64::NAN)),
        ];
        for b in bad {
            assert!(matches!(b.validate(), Err(Error::InvalidRequest { .. })), "{b:?}");
        }
        let mut many = Boosts::default();
        for i in 0..=MAX_BOOST_FUNCTIONS {
            many = many.number(NumberBoost::new(format!("n{i}"), 1.0, Modifier::Sqrt));
        }
        assert!(many.validate().is_err());
    }

    #[test]
    fn modifiers_clamp_negative_values() {
        assert_eq!(Modifier::Log1p.apply(-3.0), 0.0);
        assert_eq!(Modifier::Sqrt.apply(16.0), 4.0);
        assert!((Modifier::Log1p.apply(std::f64::consts::E - 1.0) - 1.0).abs() < 1e-12);
        assert_eq!(NumberBoost::new("n", 2.0, Modifier::Linear).factor_for(Some(-5.0)), 1.0);
    }
}
