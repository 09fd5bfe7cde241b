//! Markdown ingestion: help-center articles with front matter, cut into heading-aware sections.
//!
//! An article is a Markdown (or plain text) file that may open with a small front matter
//! block: the YAML subset help centers use (`key: value` scalars, `[a, b]` inline lists,
//! `- a` block lists, quoted strings, `#` comments) between `---` lines, or TOML between `+++`
//! lines. Its access keys are read by [`crate::access`], as a JSONL line's are. [`parse_article`] splits the body at ATX headings (`#` to
//! `######`, never inside fenced code blocks) into [`Section`]s that remember their heading
//! path and their exact line range in the original file, splits long sections at paragraph
//! boundaries with some overlap, and [`Article::records`] turns the sections into one
//! [`Record`](braid_core::Record) each, ready for a writer. [`read_dir`] walks a corpus folder.
//!
//! The parts, one concern each: `front_matter` (the YAML subset), `lines` (line ends,
//! ATX headings and fenced code blocks), `chunk` (sections and their cutting into parts),
//! `records` (sections to records, record ids) and `walk` (corpus folders, article ids).

use braid_core::{Error, Result};

mod chunk;
mod front_matter;
mod lines;
mod records;
#[cfg(test)]
mod tests;
mod walk;

use chunk::push_section;
use front_matter::parse_front_matter;
pub use front_matter::FrontMatter;
use lines::{classify, classify_fences, split_lines, title_path, LineKind};
pub use walk::{article_id, read_dir};

/// How long sections are cut into parts.
///
/// By default, sections longer than 1500 characters are split, and each part after the first
/// repeats up to 200 characters of the previous part's tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkOptions {
    /// The most characters (Unicode scalar values) a part should hold. Parts are cut at
    /// paragraph boundaries (blank lines outside code fences), or at line boundaries when one
    /// paragraph is too long; a single fenced code block or a single line longer than this
    /// stays whole. By default, 1500.
    pub max_chars: usize,
    /// At most this many characters of the previous part's tail (whole lines, never starting
    /// inside a code block) are repeated at the start of the next part. The overlap shrinks
    /// when it would push a part past `max_chars`. By default, 200.
    pub overlap_chars: usize,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        ChunkOptions { max_chars: 1500, overlap_chars: 200 }
    }
}

/// A parsed article: its id, title, front matter and sections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Article {
    /// The article's stable id, for example `billing/refund-policy` (see [`article_id`]).
    pub id: String,
    /// The title: the front matter's `title`, else the first H1, else the last component of
    /// the id. For a text file, its first non-empty line.
    pub title: String,
    /// The front matter (all fields empty when the file has none).
    pub front_matter: FrontMatter,
    /// The non-empty sections (and parts of long sections), in file order.
    pub sections: Vec<Section>,
}

/// A section of an article (or one part of a long section).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The headings above the section, outermost first, the H1 included, for example
    /// `["Refund policy", "Annual plans"]`. Text before the first heading has the article
    /// title as its path (or `[]` when the title is empty).
    pub heading_path: Vec<String>,
    /// The section's text as written (Markdown kept, code fences included), without its
    /// heading line and without leading or trailing blank lines. Lines are joined with `\n`.
    pub text: String,
    /// The 1-based, inclusive range of lines of `text` in the original file (front matter
    /// lines count). `text` is exactly those lines.
    pub lines: (u32, u32),
    /// 0 for a section that was not split; 1, 2, … for the parts of a split section.
    pub part: u32,
}

/// Parses a Markdown article.
///
/// `id` becomes [`Article::id`] (see [`article_id`]). A byte order mark is ignored, and `\n`,
/// `\r\n` and lone `\r` line ends all work; line numbers count the lines of `source` as
/// written.
///
/// ```
/// use braid_ingest::markdown::{parse_article, ChunkOptions};
///
/// # fn main() -> braid_core::Result<()> {
/// let source = concat!(
///     "---\n",
///     "title: Refund policy\n",
///     "tags: [billing, refunds]\n",
///     "acl: [public]\n",
///     "updated: 2026-09-14\n",
///     "---\n",
///     "# Refund policy\n",
///     "\n",
///     "Refunds reach your card within 5 days.\n",
///     "\n",
///     "## Annual plans\n",
///     "\n",
///     "Annual plans are refundable for 30 days.\n",
/// );
/// let article = parse_article("billing/refund-policy", source, &ChunkOptions::default())?;
/// assert_eq!(article.title, "Refund policy");
/// assert_eq!(article.front_matter.tags, ["billing", "refunds"]);
/// assert_eq!(article.sections[1].heading_path, ["Refund policy", "Annual plans"]);
/// assert_eq!(article.sections[1].lines, (13, 13));
///
/// let records = article.records()?;
/// assert_eq!(records[1].id(), "billing/refund-policy#annual-plans");
/// assert_eq!(records[1].section.as_slice(), ["Annual plans"]);
/// assert_eq!(records[1].keywords["category"], ["billing"]);
/// # Ok(()) }
/// ```
///
/// # Errors
/// [`Error::InvalidRecord`] naming the article when the front matter is malformed: opened by
/// `---` (or `+++`) but never closed, a first line that starts like a fence without being one
/// (`--- # fm`, `----`), a Unicode line separator inside the block, a second block right after
/// it naming an access key, a line that is not `key: value` or a list item (or not TOML), a
/// duplicate key, an unterminated quote or list, a nested value, or a list where one value is
/// expected; or naming the article, the line and the key when its access keys are refused
/// ([`crate::AccessError`]: an empty `acl`, `tenant` with `acl`, a near-miss such as `ACL`,
/// `acls` or `ａｃｌ`, a token that is not exactly one such as `Tenant:acme`, `acl: null`).
pub fn parse_article(id: &str, source: &str, options: &ChunkOptions) -> Result<Article> {
    let lines = split_lines(source);
    let (front_matter, body_start) = parse_front_matter(id, &lines)?;
    let kinds = classify(&lines, body_start);

    let first_h1 = kinds.iter().find_map(|k| match k {
        LineKind::Heading(1, text) if !text.is_empty() => Some(text.clone()),
        _ => None,
    });
    let title = front_matter
        .title
        .clone()
        .filter(|t| !t.trim().is_empty())
        .or(first_h1)
        .unwrap_or_else(|| id.rsplit('/').next().unwrap_or_default().to_string());

    let mut spans: Vec<(Vec<String>, usize, usize)> = Vec::new();
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut path = title_path(&title);
    let mut start = body_start;
    for (i, kind) in kinds.iter().enumerate().skip(body_start) {
        if let LineKind::Heading(level, text) = kind {
            spans.push((std::mem::take(&mut path), start, i));
            while stack.last().is_some_and(|(l, _)| l >= level) {
                stack.pop();
            }
            stack.push((*level, text.clone()));
            path = stack.iter().map(|(_, t)| t.clone()).collect();
            start = i + 1;
        }
    }
    spans.push((path, start, lines.len()));

    let mut sections = Vec::new();
    for (heading_path, start, end) in spans {
        push_section(&mut sections, &lines, &kinds, heading_path, start, end, options);
    }
    Ok(Article { id: id.to_string(), title, front_matter, sections })
}

/// Parses a plain-text document: one section (split when long, like a Markdown section) whose
/// title is the front matter's `title`, else the first non-empty line. A text file's front
/// matter is read exactly as a Markdown article's (see [`FrontMatter`]): access keys in a
/// `.txt` file are never ignored. The text keeps every body line, the title line included.
///
/// ```
/// use braid_ingest::markdown::{parse_text, ChunkOptions};
///
/// # fn main() -> braid_core::Result<()> {
/// let text = parse_text("notes/plan", "---\ntenant: acme\n---\nQ3 plan\n", &ChunkOptions::default())?;
/// assert_eq!(text.title, "Q3 plan");
/// assert_eq!(text.records()?[0].acl.as_slice(), ["tenant:acme"]);
/// # Ok(()) }
/// ```
///
/// # Errors
/// Those of [`parse_article`]'s front matter.
pub fn parse_text(id: &str, source: &str, options: &ChunkOptions) -> Result<Article> {
    let lines = split_lines(source);
    let (front_matter, body_start) = parse_front_matter(id, &lines)?;
    let kinds = classify_fences(&lines, body_start);
    let title = front_matter
        .title
        .clone()
        .filter(|t| !t.trim().is_empty())
        .or_else(|| lines[body_start..].iter().map(|l| l.trim()).find(|l| !l.is_empty()).map(str::to_string))
        .unwrap_or_else(|| id.rsplit('/').next().unwrap_or_default().to_string());
    let mut sections = Vec::new();
    push_section(&mut sections, &lines, &kinds, title_path(&title), body_start, lines.len(), options);
    Ok(Article { id: id.to_string(), title, front_matter, sections })
}

/// The error for a malformed article: [`Error::InvalidRecord`] naming the article.
pub(crate) fn invalid(id: &str, reason: String) -> Error {
    Error::InvalidRecord { reason: format!("article {id:?}: {reason}") }
}

/// The reason an error gives, without the error kind's prefix.
pub(crate) fn reason_of(error: &Error) -> String {
    match error {
        Error::InvalidRecord { reason } => reason.clone(),
        other => other.to_string(),
    }
}
