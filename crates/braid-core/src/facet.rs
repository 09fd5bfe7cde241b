//! Facets: counts per value of keyword fields and per range of numeric or date fields, over
//! every record a request matches that its caller may see, returned beside the hits.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The most facets one request may ask for.
pub const MAX_FACETS: usize = 16;
/// The most values a keyword facet may return.
pub const MAX_FACET_VALUES: usize = 100;
/// The most ranges a range facet may ask for.
pub const MAX_FACET_RANGES: usize = 32;
/// Values a keyword facet returns by default.
pub const DEFAULT_FACET_VALUES: usize = 10;

/// One facet a request asks for.
///
/// Read from JSON (`{"values": {"field": "category", "size": 5}}`), a key a variant does not
/// have is refused rather than ignored: `limit` for `size` would otherwise return the default
/// count, and `frm` for `from` would count an unbounded range.
///
/// ```
/// use braid_core::{Facet, FacetRange};
/// let by_category = Facet::values("category");
/// let by_year = Facet::ranges("updated", [FacetRange::new(None, Some(1_704_067_200.0)), FacetRange::new(Some(1_704_067_200.0), None)]);
/// assert_eq!(by_category.field(), "category");
/// assert_eq!(by_year.field(), "updated");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// On an externally tagged enum, `deny_unknown_fields` refuses unknown keys inside each variant.
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Facet {
    /// The most frequent values of a declared keyword field among the matched records, most
    /// frequent first (then by value); values no matched record holds never appear.
    Values {
        /// The keyword field.
        field: String,
        /// How many values to return (at most [`MAX_FACET_VALUES`]). By default,
        /// [`DEFAULT_FACET_VALUES`].
        #[serde(default = "default_size")]
        size: usize,
    },
    /// How many matched records have a value of a numeric or date field (dates as Unix
    /// seconds) in each range: `from` inclusive, `to` exclusive, as Elasticsearch's `range`
    /// aggregation. A record without the field is in no range.
    Ranges {
        /// The numeric or date field.
        field: String,
        /// The ranges, counted in this order (at most [`MAX_FACET_RANGES`]).
        ranges: Vec<FacetRange>,
    },
}

fn default_size() -> usize {
    DEFAULT_FACET_VALUES
}

impl Facet {
    /// The [`DEFAULT_FACET_VALUES`] most frequent values of a keyword field.
    pub fn values(field: impl Into<String>) -> Self {
        Facet::Values { field: field.into(), size: DEFAULT_FACET_VALUES }
    }

    /// The `size` most frequent values of a keyword field.
    pub fn top_values(field: impl Into<String>, size: usize) -> Self {
        Facet::Values { field: field.into(), size }
    }

    /// Counts per range of a numeric or date field.
    pub fn ranges(field: impl Into<String>, ranges: impl IntoIterator<Item = FacetRange>) -> Self {
        Facet::Ranges { field: field.into(), ranges: ranges.into_iter().collect() }
    }

    /// The field the facet counts.
    pub fn field(&self) -> &str {
        match self {
            Facet::Values { field, .. } | Facet::Ranges { field, .. } => field,
        }
    }

    /// Checks the facet's own limits (the field is checked against the schema later).
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] for a size above [`MAX_FACET_VALUES`], more ranges than
    /// [`MAX_FACET_RANGES`], none, or a bound that is not a finite number.
    pub fn validate(&self) -> Result<()> {
        match self {
            Facet::Values { field, size } if *size > MAX_FACET_VALUES => Err(Error::invalid_request(format!(
                "facet `{field}`: size {size} is above the maximum of {MAX_FACET_VALUES}"
            ))),
            Facet::Ranges { field, ranges } if ranges.is_empty() || ranges.len() > MAX_FACET_RANGES => {
                Err(Error::invalid_request(format!(
                    "facet `{field}`: between 1 and {MAX_FACET_RANGES} ranges are accepted, got {}",
                    ranges.len()
                )))
            }
            Facet::Ranges { field, ranges }
                if ranges.iter().flat_map(|r| [r.from, r.to]).flatten().any(|b| !b.is_finite()) =>
            {
                Err(Error::invalid_request(format!("facet `{field}`: range bounds must be finite numbers")))
            }
            _ => Ok(()),
        }
    }
}

/// A range of a numeric or date field: `from` inclusive, `to` exclusive; either open. Read from
/// JSON, keys other than `from` and `to` are refused.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FacetRange {
    /// Inclusive lower bound (none: unbounded).
    #[serde(default)]
    pub from: Option<f64>,
    /// Exclusive upper bound (none: unbounded).
    #[serde(default)]
    pub to: Option<f64>,
}

impl FacetRange {
    /// `from <= value < to`.
    pub fn new(from: Option<f64>, to: Option<f64>) -> Self {
        FacetRange { from, to }
    }

    /// Whether `value` lies in the range.
    ///
    /// ```
    /// use braid_core::FacetRange;
    /// let r = FacetRange::new(Some(1.0), Some(2.0));
    /// assert!(r.contains(1.0) && !r.contains(2.0));
    /// ```
    pub fn contains(&self, value: f64) -> bool {
        self.from.is_none_or(|f| value >= f) && self.to.is_none_or(|t| value < t)
    }
}

/// The facets of one response, counted over the matched records the caller may see.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Facets {
    /// Records the request matched that the caller may see (whatever `k`, offset and the
    /// score threshold): the number every facet counts within.
    pub matched: u64,
    /// Per keyword facet: its values, most frequent first.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub values: BTreeMap<String, Vec<ValueCount>>,
    /// Per range facet: one count per requested range, in the request's order.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub ranges: BTreeMap<String, Vec<RangeCount>>,
}

/// A keyword value and the matched records holding it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ValueCount {
    /// The value.
    pub value: String,
    /// Matched records holding it.
    pub count: u64,
}

/// A range and the matched records whose value lies in it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RangeCount {
    /// Inclusive lower bound.
    pub from: Option<f64>,
    /// Exclusive upper bound.
    pub to: Option<f64>,
    /// Matched records in the range.
    pub count: u64,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(value: serde_json::Value) -> std::result::Result<Facet, String> {
        serde_json::from_str(&value.to_string()).map_err(|e| e.to_string())
    }

    #[test]
    fn facets_read_from_json() {
        assert_eq!(read(json!({ "values": { "field": "category" } })).unwrap(), Facet::values("category"));
        assert_eq!(
            read(json!({ "values": { "field": "category", "size": 1 } })).unwrap(),
            Facet::top_values("category", 1)
        );
        let ranges = read(json!({ "ranges": { "field": "updated", "ranges": [{ "to": 5 }, { "from": 5 }, {}] } }));
        assert_eq!(
            ranges.unwrap(),
            Facet::ranges(
                "updated",
                [FacetRange::new(None, Some(5.0)), FacetRange::new(Some(5.0), None), FacetRange::new(None, None)]
            )
        );
    }

    /// The auditor's reproduction: `limit` (for `size`) was ignored, the default count returned.
    #[test]
    fn an_unknown_key_of_a_values_facet_is_refused() {
        let e = read(json!({ "values": { "field": "category", "limit": 1 } })).unwrap_err();
        assert!(e.contains("unknown field `limit`"), "{e}");
    }

    /// The auditor's reproduction: `frm` (for `from`) counted an unbounded range.
    #[test]
    fn an_unknown_key_of_a_range_is_refused() {
        let e = read(json!({ "ranges": { "field": "updated", "ranges": [{ "frm": 5 }] } })).unwrap_err();
        assert!(e.contains("unknown field `frm`"), "{e}");
        let e = serde_json::from_str::<FacetRange>(r#"{"from": 1, "too": 5}"#).unwrap_err().to_string();
        assert!(e.contains("unknown field `too`"), "{e}");
    }

    #[test]
    fn an_unknown_key_of_a_ranges_facet_is_refused() {
        let e = read(json!({ "ranges": { "field": "updated", "ranges": [{ "to": 5 }], "keyed": true } })).unwrap_err();
        assert!(e.contains("unknown field `keyed`"), "{e}");
        assert!(read(json!({ "value": { "field": "category" } })).is_err());
    }
}
