//! Structured filters: keyword equality and sets, numeric and date ranges, parent and section.

use serde::{Deserialize, Serialize};

/// A structured filter. It only ever narrows what the principal may see: filters are applied
/// together with access control, on the same path, before ranking.
///
/// Dates are compared as Unix seconds (see [`crate::parse_date`]).
///
/// Read from JSON (`{"range": {"field": "updated", "min": 1700000000}}`), a filter refuses
/// what would widen it unnoticed: a key a variant does not have (`minn` for `min` would
/// otherwise leave the range open) and a `range` with neither `min` nor `max` (it admits every
/// value). [`Filter::range`] builds any range a program asks for, open at both ends included.
///
/// ```
/// use braid_core::Filter;
/// let f = Filter::all([
///     Filter::keyword("category", "billing"),
///     Filter::range("updated", Some(1_700_000_000.0), None),
/// ]);
/// assert_eq!(f.fields(), ["category", "updated"]);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// On an externally tagged enum, `deny_unknown_fields` refuses unknown keys inside each struct
// variant (a second key beside the variant's name is refused by the enum's own reading).
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Filter {
    /// A keyword field equals a value.
    Keyword {
        /// The keyword field.
        field: String,
        /// The value.
        value: String,
    },
    /// A keyword field equals any of several values.
    KeywordAny {
        /// The keyword field.
        field: String,
        /// The accepted values.
        values: Vec<String>,
    },
    /// A numeric or date field lies in `[min, max]` (either bound optional, both inclusive;
    /// read from JSON, at least one is required).
    #[serde(deserialize_with = "bounded_range")]
    Range {
        /// The numeric or date field.
        field: String,
        /// Inclusive lower bound.
        min: Option<f64>,
        /// Inclusive upper bound.
        max: Option<f64>,
    },
    /// The record is a chunk of this parent.
    Parent {
        /// The parent's id.
        id: String,
    },
    /// The record's section path starts with this heading path.
    Section {
        /// Heading path, outermost first.
        path: Vec<String>,
    },
    /// Every filter holds.
    All {
        /// The filters.
        filters: Vec<Filter>,
    },
    /// At least one filter holds.
    Any {
        /// The filters.
        filters: Vec<Filter>,
    },
    /// The filter does not hold.
    Not {
        /// The negated filter.
        filter: Box<Filter>,
    },
}

/// A `range` filter as JSON gives it: unknown keys refused, and at least one bound.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RangeFields {
    field: String,
    #[serde(default)]
    min: Option<f64>,
    #[serde(default)]
    max: Option<f64>,
}

/// Reads a `range` variant's fields (`field`, `min`, `max`), refusing one with no bound: an
/// open range holds every value, so a request that meant to narrow would not.
fn bounded_range<'de, D>(deserializer: D) -> Result<(String, Option<f64>, Option<f64>), D::Error>
where
    D: serde::Deserializer<'de>,
{
    let RangeFields { field, min, max } = RangeFields::deserialize(deserializer)?;
    if min.is_none() && max.is_none() {
        return Err(serde::de::Error::custom(format!(
            "range filter on `{field}` has neither `min` nor `max`: it would admit every value"
        )));
    }
    Ok((field, min, max))
}

impl Filter {
    /// `field == value`.
    pub fn keyword(field: impl Into<String>, value: impl Into<String>) -> Self {
        Filter::Keyword { field: field.into(), value: value.into() }
    }

    /// `field` is one of `values`.
    pub fn keyword_any<I, S>(field: impl Into<String>, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Filter::KeywordAny { field: field.into(), values: values.into_iter().map(Into::into).collect() }
    }

    /// `min <= field <= max`.
    pub fn range(field: impl Into<String>, min: Option<f64>, max: Option<f64>) -> Self {
        Filter::Range { field: field.into(), min, max }
    }

    /// Chunks of the record `id`.
    pub fn parent(id: impl Into<String>) -> Self {
        Filter::Parent { id: id.into() }
    }

    /// Records whose section path starts with `path`.
    pub fn section<I, S>(path: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Filter::Section { path: path.into_iter().map(Into::into).collect() }
    }

    /// Every filter holds.
    pub fn all(filters: impl IntoIterator<Item = Filter>) -> Self {
        Filter::All { filters: filters.into_iter().collect() }
    }

    /// At least one filter holds.
    pub fn any(filters: impl IntoIterator<Item = Filter>) -> Self {
        Filter::Any { filters: filters.into_iter().collect() }
    }

    /// Negation.
    #[allow(clippy::should_implement_trait)]
    pub fn not(filter: Filter) -> Self {
        Filter::Not { filter: Box::new(filter) }
    }

    /// The schema fields this filter names, in order of appearance (for validation).
    pub fn fields(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect_fields(&mut out);
        out
    }

    fn collect_fields<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Filter::Keyword { field, .. } | Filter::KeywordAny { field, .. } | Filter::Range { field, .. } => {
                out.push(field)
            }
            Filter::Parent { .. } | Filter::Section { .. } => {}
            Filter::All { filters } | Filter::Any { filters } => filters.iter().for_each(|f| f.collect_fields(out)),
            Filter::Not { filter } => filter.collect_fields(out),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(value: serde_json::Value) -> std::result::Result<Filter, String> {
        serde_json::from_value(value.clone())
            .and_then(|f: Filter| serde_json::from_str::<Filter>(&value.to_string()).map(|g| (f, g)))
            .map(|(f, g)| {
                assert_eq!(f, g, "a value and its text read alike");
                f
            })
            .map_err(|e| e.to_string())
    }

    #[test]
    fn every_variant_reads_from_json() {
        let f = read(json!({ "all": { "filters": [
            { "keyword": { "field": "category", "value": "billing" } },
            { "keyword_any": { "field": "lang", "values": ["en", "de"] } },
            { "range": { "field": "updated", "min": 150 } },
            { "range": { "field": "updated", "min": null, "max": 200 } },
            { "parent": { "id": "a" } },
            { "section": { "path": ["A"] } },
            { "any": { "filters": [] } },
            { "not": { "filter": { "parent": { "id": "b" } } } },
        ] } }))
        .unwrap();
        assert_eq!(f.fields(), ["category", "lang", "updated", "updated"]);
        assert!(matches!(&f, Filter::All { filters } if filters[2] == Filter::range("updated", Some(150.0), None)));
        assert!(matches!(&f, Filter::All { filters } if filters[3] == Filter::range("updated", None, Some(200.0))));
    }

    /// The auditor's reproduction: `minn` left the range unbounded, and a delete by that
    /// filter deleted every record.
    #[test]
    fn a_misspelt_bound_is_refused() {
        let e = read(json!({ "range": { "field": "updated", "minn": 150 } })).unwrap_err();
        assert!(e.contains("unknown field `minn`"), "{e}");
        let e = read(json!({ "range": { "field": "updated", "min": 100, "maxx": 150 } })).unwrap_err();
        assert!(e.contains("unknown field `maxx`"), "{e}");
    }

    #[test]
    fn unknown_keys_are_refused_in_every_variant_and_nested() {
        let cases = [
            json!({ "keyword": { "field": "f", "value": "v", "values": ["w"] } }),
            json!({ "keyword_any": { "field": "f", "values": ["v"], "value": "w" } }),
            json!({ "parent": { "id": "a", "recursive": true } }),
            json!({ "section": { "path": ["A"], "prefix": false } }),
            json!({ "all": { "filters": [], "limit": 1 } }),
            json!({ "any": { "filters": [], "min_match": 2 } }),
            json!({ "not": { "filter": { "parent": { "id": "a" } }, "x": 1 } }),
            json!({ "not": { "filter": { "range": { "field": "updated", "frm": 1 } } } }),
            json!({ "all": { "filters": [{ "keyword": { "field": "f", "value": "v", "negate": true } }] } }),
        ];
        for case in cases {
            let e = read(case.clone()).expect_err(&case.to_string());
            assert!(e.contains("unknown field"), "{case}: {e}");
        }
        // A key beside the variant's name is no filter either.
        assert!(read(json!({ "parent": { "id": "a" }, "keyword": { "field": "f", "value": "v" } })).is_err());
        assert!(read(json!({ "prent": { "id": "a" } })).is_err());
    }

    /// A range with no bound admits every value: as a typo of both bounds, or their absence,
    /// it would widen a request (or a delete by filter) to everything.
    #[test]
    fn a_range_without_bounds_is_refused() {
        for case in [
            json!({ "range": { "field": "updated" } }),
            json!({ "range": { "field": "updated", "min": null, "max": null } }),
            json!({ "not": { "filter": { "range": { "field": "updated", "max": null } } } }),
        ] {
            let e = read(case.clone()).expect_err(&case.to_string());
            assert!(e.contains("neither `min` nor `max`") && e.contains("`updated`"), "{case}: {e}");
        }
        assert!(read(json!({ "range": { "min": 1 } })).unwrap_err().contains("missing field `field`"));
    }

    /// What a filter serialises to reads back as the same filter.
    #[test]
    fn filters_round_trip() {
        let f = Filter::all([
            Filter::keyword("category", "billing"),
            Filter::not(Filter::range("updated", Some(1.0), Some(2.0))),
            Filter::any([Filter::section(["A", "B"]), Filter::parent("p")]),
        ]);
        assert_eq!(read(serde_json::to_value(&f).unwrap()).unwrap(), f);
    }
}
