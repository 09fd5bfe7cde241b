//! How a hit or a record is cited: one format for the CLI, MCP and the examples.

use std::fmt;

use crate::Hit;

/// Where a passage comes from, for a reader to follow: the title, the heading path inside its
/// document, the document and the lines. Displays as
/// `Title › Heading › Subheading (document, lines 3–9)`; the parts that are unknown are left out.
///
/// ```
/// use braid_core::Citation;
/// let c = Citation {
///     title: "Return policy".into(),
///     section: vec!["Return policy".into(), "Hardware".into()],
///     document: Some("returns".into()),
///     lines: Some((12, 20)),
/// };
/// assert_eq!(c.to_string(), "Return policy › Hardware (returns, lines 12–20)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Citation {
    /// The record's title.
    pub title: String,
    /// The heading path of the section, outermost first (a heading equal to the title is not
    /// repeated).
    pub section: Vec<String>,
    /// The document the passage is a section of (the record's parent), if any.
    pub document: Option<String>,
    /// The first and last line of the passage in its document, if known.
    pub lines: Option<(u32, u32)>,
}

impl Citation {
    /// The title and heading path alone: `Title › Heading › Subheading`.
    pub fn path(&self) -> String {
        let mut out = self.title.clone();
        for heading in self.section.iter().filter(|h| **h != self.title) {
            out.push_str(" › ");
            out.push_str(heading);
        }
        out
    }

    /// The document and lines alone: `document, lines 3–9` (empty when neither is known).
    pub fn place(&self) -> String {
        let mut place = Vec::new();
        if let Some(document) = &self.document {
            place.push(document.clone());
        }
        if let Some((s, e)) = self.lines {
            place.push(format!("lines {s}–{e}"));
        }
        place.join(", ")
    }
}

impl From<&Hit> for Citation {
    fn from(hit: &Hit) -> Citation {
        Citation {
            title: hit.title.clone(),
            section: hit.section.clone(),
            document: hit.parent.clone(),
            lines: hit.lines,
        }
    }
}

impl fmt::Display for Citation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.path())?;
        let place = self.place();
        if !place.is_empty() {
            write!(f, " ({place})")?;
        }
        Ok(())
    }
}
