//! Structured filters: keyword equality and sets, numeric and date ranges, parent and section.

use serde::{Deserialize, Serialize};

/// A structured filter. It only ever narrows what the principal may see: filters are applied
/// together with access control, on the same path, before ranking.
///
/// Dates are compared as Unix seconds (see [`crate::parse_date`]).
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
#[serde(rename_all = "snake_case")]
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
    /// A numeric or date field lies in `[min, max]` (either bound optional, both inclusive).
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
