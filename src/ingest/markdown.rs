//! Markdown ingestion: help-center articles with front matter, cut into heading-aware sections.
//!
//! An article is a Markdown file that may open with a small YAML front matter block (the
//! subset help centers use: `key: value` scalars, `[a, b]` inline lists, `- a` block lists,
//! quoted strings, `#` comments). [`parse_article`] splits the body at ATX headings (`#` to
//! `######`, never inside fenced code blocks) into [`Section`]s that remember their heading
//! path and their exact line range in the original file, splits long sections at paragraph
//! boundaries with some overlap, and [`Article::records`] turns the sections into one
//! [`Record`] each, ready for a writer. [`read_dir`] walks a corpus folder.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use braid_core::{parse_date, Error, Record, Result};

use super::front_matter::parse_front_matter;
pub use super::front_matter::FrontMatter;

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
/// `id` becomes [`Article::id`] (see [`article_id`]). A byte order mark is ignored, and `\n`
/// or `\r\n` line ends both work; line numbers count the lines of `source` as written.
///
/// ```
/// use braid::ingest::markdown::{parse_article, ChunkOptions};
///
/// # fn main() -> braid::Result<()> {
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
/// `---` on the first line but never closed, a line that is not `key: value` or a list item,
/// a duplicate key, an unterminated quote or list, or a list where one value is expected.
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
/// title is the first non-empty line. The text keeps every line, the title line included.
///
/// # Errors
/// None today; the `Result` keeps the signature in line with [`parse_article`].
pub fn parse_text(id: &str, source: &str, options: &ChunkOptions) -> Result<Article> {
    let lines = split_lines(source);
    let kinds = classify_fences(&lines, 0);
    let title = lines
        .iter()
        .map(|l| l.trim())
        .find(|l| !l.is_empty())
        .map_or_else(|| id.rsplit('/').next().unwrap_or_default().to_string(), str::to_string);
    let mut sections = Vec::new();
    push_section(&mut sections, &lines, &kinds, title_path(&title), 0, lines.len(), options);
    Ok(Article { id: id.to_string(), title, front_matter: FrontMatter::default(), sections })
}

impl Article {
    /// One record per section, ready for a writer.
    ///
    /// Each record has the id `{article id}#{slug}`, where the slug is made of the section's
    /// heading path (`intro` for the text before the first subheading), made unique within the
    /// article with `-2`, `-3`, … and followed by `-{part}` for the parts of a split section.
    /// Its title is the article title, its body the section text, its parent the article id,
    /// its section path the heading path without a leading article title (so paths start at
    /// the first H2 when the H1 is the title), and its line range the section's. It carries
    /// the front matter's ACL tokens, or `tenant:{tenant}` for a `tenant` key (none when the
    /// front matter has neither: the index's policy decides),
    /// the keyword fields `tags`, `audience`, `lang` and `category` (the first component of
    /// the article id, when the id has more than one), and the date field `updated`.
    ///
    /// # Errors
    /// [`Error::InvalidRecord`] naming the article when `updated` is not a date, or when a
    /// record fails [`Record::validate`] (for example an article id with control characters).
    pub fn records(&self) -> Result<Vec<Record>> {
        let fm = &self.front_matter;
        let updated = match &fm.updated {
            Some(text) => Some(
                parse_date(text)
                    .map_err(|e| invalid(&self.id, format!("`updated` is not a date ({})", reason_of(&e))))?,
            ),
            None => None,
        };
        let category = self.id.split_once('/').map(|(c, _)| c).filter(|c| !c.is_empty());

        let mut used_slugs: HashSet<String> = HashSet::new();
        let mut used_ids: HashSet<String> = HashSet::new();
        let mut slug_of_section = String::new();
        let mut previous: Option<&[String]> = None;
        let mut records = Vec::with_capacity(self.sections.len());
        for section in &self.sections {
            let path = self.record_path(section);
            if section.part <= 1 || previous != Some(path) || slug_of_section.is_empty() {
                let base = slug(path);
                let mut candidate = base.clone();
                let mut n = 2;
                while used_slugs.contains(&candidate) || used_ids.contains(&candidate) {
                    candidate = format!("{base}-{n}");
                    n += 1;
                }
                used_slugs.insert(candidate.clone());
                slug_of_section = candidate;
            }
            previous = Some(path);
            let base = match section.part {
                0 => slug_of_section.clone(),
                part => format!("{slug_of_section}-{part}"),
            };
            let mut fragment = base.clone();
            let mut n = 2;
            while used_ids.contains(&fragment) {
                fragment = format!("{base}-{n}");
                n += 1;
            }
            used_ids.insert(fragment.clone());

            let mut record = Record::new(format!("{}#{fragment}", self.id))
                .title(self.title.as_str())
                .body(section.text.as_str())
                .parent(self.id.as_str())
                .section(path)
                .lines(section.lines.0, section.lines.1);
            if let Some(tenant) = &fm.tenant {
                record = record.acl([format!("{}{tenant}", braid_core::TENANT_PREFIX)]);
            } else if !fm.acl.is_empty() {
                record = record.acl(&fm.acl);
            }
            for tag in &fm.tags {
                record = record.keyword("tags", tag);
            }
            if let Some(audience) = &fm.audience {
                record = record.keyword("audience", audience);
            }
            if let Some(lang) = &fm.lang {
                record = record.keyword("lang", lang);
            }
            if let Some(category) = category {
                record = record.keyword("category", category);
            }
            if let Some(secs) = updated {
                record = record.number("updated", secs as f64);
            }
            record.validate().map_err(|e| invalid(&self.id, reason_of(&e)))?;
            records.push(record);
        }
        Ok(records)
    }

    /// The heading path of `section` without a leading article title.
    fn record_path<'a>(&self, section: &'a Section) -> &'a [String] {
        match section.heading_path.split_first() {
            Some((first, rest)) if first.split_whitespace().eq(self.title.split_whitespace()) => rest,
            _ => &section.heading_path,
        }
    }
}

/// The id of the article in `file` under the corpus folder `root`: the path relative to
/// `root`, without its extension, with `/` between components on every OS
/// (`billing/refund-policy`). A file outside `root` keeps its whole path.
pub fn article_id(root: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(root).unwrap_or(file);
    let mut parts: Vec<String> = relative
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    match parts.last_mut() {
        Some(last) => {
            if let Some(stem) = Path::new(last.as_str()).file_stem() {
                *last = stem.to_string_lossy().into_owned();
            }
        }
        None => {
            if let Some(stem) = file.file_stem() {
                parts.push(stem.to_string_lossy().into_owned());
            }
        }
    }
    parts.join("/")
}

/// Reads every article under `root`: `*.md` and `*.markdown` files with [`parse_article`],
/// `*.txt` files with [`parse_text`], ids from [`article_id`].
///
/// The walk is recursive, in sorted order (byte order of names, so the same on every OS), and
/// lazy: a file is read when the iterator reaches it. Hidden files and folders (names starting
/// with `.`) and symbolic links to folders are skipped. When `root` is a file, that file is
/// the only article.
///
/// ```no_run
/// use braid::ingest::markdown::{read_dir, ChunkOptions};
///
/// # fn main() -> braid::Result<()> {
/// let mut records = Vec::new();
/// for article in read_dir("datasets/helpcenter/articles".as_ref(), &ChunkOptions::default()) {
///     records.extend(article?.records()?);
/// }
/// # Ok(()) }
/// ```
///
/// # Errors
/// Each item is an [`Error::Io`] naming the path when a folder or file cannot be read (a
/// file that is not UTF-8 included), or the error of [`parse_article`]; the walk goes on
/// after an error.
pub fn read_dir(root: &Path, options: &ChunkOptions) -> impl Iterator<Item = Result<Article>> {
    Walk { root: root.to_path_buf(), options: *options, stack: Vec::new(), started: false }
}

// ---------------------------------------------------------------------------------------------
// Lines and their kinds

/// The lines of `source` without their `\n` or `\r\n` ends (a BOM is dropped).
fn split_lines(source: &str) -> Vec<&str> {
    let source = source.strip_prefix('\u{feff}').unwrap_or(source);
    if source.is_empty() {
        return Vec::new();
    }
    let body = source.strip_suffix('\n').unwrap_or(source);
    body.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect()
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum LineKind {
    /// Front matter, or any line before the body.
    Skip,
    /// An ATX heading: level and text.
    Heading(usize, String),
    /// A line of the fenced code block with this ordinal (fence lines included).
    Fence(usize),
    /// The opening line of the fenced code block with this ordinal.
    FenceOpen(usize),
    /// Any other line.
    Text,
}

fn classify(lines: &[&str], body_start: usize) -> Vec<LineKind> {
    let mut kinds = classify_fences(lines, body_start);
    for (kind, line) in kinds.iter_mut().zip(lines) {
        if *kind == LineKind::Text {
            if let Some((level, text)) = atx_heading(line) {
                *kind = LineKind::Heading(level, text);
            }
        }
    }
    kinds
}

/// Marks fenced code blocks; everything else from `body_start` on is `Text`.
fn classify_fences(lines: &[&str], body_start: usize) -> Vec<LineKind> {
    let mut kinds = vec![LineKind::Skip; lines.len()];
    let mut open: Option<(u8, usize, usize)> = None;
    let mut ordinal = 0;
    for (i, line) in lines.iter().enumerate().skip(body_start) {
        kinds[i] = match open {
            Some((ch, len, n)) => {
                if fence_closes(line, ch, len) {
                    open = None;
                }
                LineKind::Fence(n)
            }
            None => match fence_opens(line) {
                Some((ch, len)) => {
                    open = Some((ch, len, ordinal));
                    ordinal += 1;
                    LineKind::FenceOpen(ordinal - 1)
                }
                None => LineKind::Text,
            },
        };
    }
    kinds
}

/// Up to three spaces of indentation, then the rest of the line.
fn unindent(line: &str) -> Option<&str> {
    let rest = line.trim_start_matches(' ');
    (line.len() - rest.len() <= 3).then_some(rest)
}

fn fence_opens(line: &str) -> Option<(u8, usize)> {
    let rest = unindent(line)?;
    let ch = *rest.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = rest.bytes().take_while(|&b| b == ch).count();
    if len < 3 || (ch == b'`' && rest[len..].contains('`')) {
        return None;
    }
    Some((ch, len))
}

fn fence_closes(line: &str, ch: u8, len: usize) -> bool {
    let Some(rest) = unindent(line) else {
        return false;
    };
    let run = rest.bytes().take_while(|&b| b == ch).count();
    run >= len && rest[run..].trim().is_empty()
}

fn atx_heading(line: &str) -> Option<(usize, String)> {
    let rest = unindent(line)?;
    let level = rest.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = &rest[level..];
    if !after.is_empty() && !after.starts_with([' ', '\t']) {
        return None;
    }
    let text = after.trim();
    let without_closing = text.trim_end_matches('#');
    let text = if without_closing.is_empty() {
        ""
    } else if without_closing.ends_with([' ', '\t']) {
        without_closing.trim_end()
    } else {
        text
    };
    Some((level, text.to_string()))
}

fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

fn title_path(title: &str) -> Vec<String> {
    if title.trim().is_empty() {
        Vec::new()
    } else {
        vec![title.to_string()]
    }
}

// ---------------------------------------------------------------------------------------------
// Sections and parts

/// Pushes the section holding lines `start..end` (0-based, end exclusive), trimmed of blank
/// lines at both ends, split into parts when long; nothing when it is blank.
fn push_section(
    out: &mut Vec<Section>,
    lines: &[&str],
    kinds: &[LineKind],
    heading_path: Vec<String>,
    start: usize,
    end: usize,
    options: &ChunkOptions,
) {
    let Some(first) = (start..end).find(|&i| !is_blank(lines[i])) else {
        return;
    };
    let Some(last) = (first..end).rev().find(|&i| !is_blank(lines[i])) else {
        return;
    };
    let parts = split_parts(lines, kinds, first, last, options);
    let split = parts.len() > 1;
    for (n, (a, b)) in parts.into_iter().enumerate() {
        out.push(Section {
            heading_path: heading_path.clone(),
            text: lines[a..=b].join("\n"),
            lines: (line_no(a), line_no(b)),
            part: if split { u32::try_from(n + 1).unwrap_or(u32::MAX) } else { 0 },
        });
    }
}

fn line_no(index: usize) -> u32 {
    u32::try_from(index + 1).unwrap_or(u32::MAX)
}

/// Cuts lines `first..=last` into parts (inclusive line ranges) of at most
/// `options.max_chars` characters where the units allow it.
fn split_parts(
    lines: &[&str],
    kinds: &[LineKind],
    first: usize,
    last: usize,
    options: &ChunkOptions,
) -> Vec<(usize, usize)> {
    // prefix[i] = characters in lines[first..first + i], each line counted with its '\n'.
    let mut prefix = Vec::with_capacity(last - first + 2);
    prefix.push(0usize);
    for line in &lines[first..=last] {
        prefix.push(prefix.last().copied().unwrap_or(0) + line.chars().count() + 1);
    }
    let len = |a: usize, b: usize| prefix[b + 1 - first] - prefix[a - first] - 1;
    let max = options.max_chars;
    if len(first, last) <= max {
        return vec![(first, last)];
    }

    let in_fence = |i: usize| matches!(kinds[i], LineKind::Fence(_) | LineKind::FenceOpen(_));
    let fence_of = |i: usize| match kinds[i] {
        LineKind::Fence(n) | LineKind::FenceOpen(n) => Some(n),
        _ => None,
    };

    // Units: paragraphs (runs of lines that are not blank or are inside a fence); a paragraph
    // that is too long falls apart into lines, a fenced block staying one unit.
    let mut units: Vec<(usize, usize)> = Vec::new();
    let mut i = first;
    while i <= last {
        if is_blank(lines[i]) && !in_fence(i) {
            i += 1;
            continue;
        }
        let start = i;
        while i < last && (!is_blank(lines[i + 1]) || in_fence(i + 1)) {
            i += 1;
        }
        let end = i;
        i += 1;
        if len(start, end) <= max {
            units.push((start, end));
            continue;
        }
        let mut j = start;
        while j <= end {
            let unit_start = j;
            if let Some(n) = fence_of(j) {
                while j < end && fence_of(j + 1) == Some(n) && kinds[j + 1] != LineKind::FenceOpen(n) {
                    j += 1;
                }
            }
            units.push((unit_start, j));
            j += 1;
        }
    }
    // An overlap may start on any non-blank line that is not inside a code block.
    let may_start = |i: usize| !is_blank(lines[i]) && !matches!(kinds[i], LineKind::Fence(_));

    let mut parts: Vec<(usize, usize)> = Vec::new();
    // (start of the previous part, start of its first new unit, its end)
    let mut previous: Option<(usize, usize, usize)> = None;
    let mut u = 0;
    while u < units.len() {
        let (new_start, mut end) = units[u];
        let mut start = new_start;
        if let Some((part_start, prev_new, prev_end)) = previous {
            let lowest = (part_start + 1).max(prev_new);
            if let Some(o) = (lowest..=prev_end)
                .find(|&o| may_start(o) && len(o, prev_end) <= options.overlap_chars && len(o, end) <= max)
            {
                start = o;
            }
        }
        u += 1;
        while u < units.len() && len(start, units[u].1) <= max {
            end = units[u].1;
            u += 1;
        }
        parts.push((start, end));
        previous = Some((start, new_start, end));
    }
    parts
}

// ---------------------------------------------------------------------------------------------
// Record ids

/// A URL-fragment slug of a heading path: lowercase letters and digits, runs of anything else
/// turned into one `-`, at most about 80 bytes; `intro` for an empty path, `section` when
/// nothing is left.
fn slug(path: &[String]) -> String {
    if path.is_empty() {
        return "intro".to_string();
    }
    let mut out = String::new();
    let mut dash = false;
    for c in path.iter().flat_map(|p| p.chars().chain([' '])) {
        if c.is_alphanumeric() {
            if dash && !out.is_empty() {
                out.push('-');
            }
            dash = false;
            out.extend(c.to_lowercase());
            if out.len() >= 80 {
                break;
            }
        } else {
            dash = true;
        }
    }
    if out.is_empty() {
        "section".to_string()
    } else {
        out
    }
}

pub(crate) fn invalid(id: &str, reason: String) -> Error {
    Error::InvalidRecord { reason: format!("article {id:?}: {reason}") }
}

fn reason_of(error: &Error) -> String {
    match error {
        Error::InvalidRecord { reason } => reason.clone(),
        other => other.to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// The folder walk

enum Entry {
    Dir(PathBuf),
    File(PathBuf, FileKind),
}

#[derive(Clone, Copy)]
enum FileKind {
    Markdown,
    Text,
}

impl FileKind {
    fn of(path: &Path) -> Option<FileKind> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "md" | "markdown" => Some(FileKind::Markdown),
            "txt" => Some(FileKind::Text),
            _ => None,
        }
    }
}

struct Walk {
    root: PathBuf,
    options: ChunkOptions,
    /// Entries still to visit, the next one last.
    stack: Vec<Entry>,
    started: bool,
}

impl Walk {
    fn list(dir: &Path) -> Result<Vec<Entry>> {
        let mut children = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
            let entry = entry.map_err(|e| Error::io(dir, e))?;
            let name = entry.file_name();
            if name.to_string_lossy().starts_with('.') {
                continue;
            }
            let path = entry.path();
            let file_type = entry.file_type().map_err(|e| Error::io(&path, e))?;
            let is_file = if file_type.is_symlink() {
                std::fs::metadata(&path).map(|m| m.is_file()).unwrap_or(false)
            } else {
                file_type.is_file()
            };
            if file_type.is_dir() {
                children.push((name, Entry::Dir(path)));
            } else if is_file {
                if let Some(kind) = FileKind::of(&path) {
                    children.push((name, Entry::File(path, kind)));
                }
            }
        }
        children.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(children.into_iter().rev().map(|(_, e)| e).collect())
    }

    fn load(&self, path: &Path, kind: FileKind) -> Result<Article> {
        let source = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let id = article_id(&self.root, path);
        match kind {
            FileKind::Markdown => parse_article(&id, &source, &self.options),
            FileKind::Text => parse_text(&id, &source, &self.options),
        }
    }
}

impl Iterator for Walk {
    type Item = Result<Article>;

    fn next(&mut self) -> Option<Result<Article>> {
        if !self.started {
            self.started = true;
            match std::fs::metadata(&self.root) {
                Err(e) => return Some(Err(Error::io(&self.root, e))),
                Ok(m) if m.is_dir() => self.stack.push(Entry::Dir(self.root.clone())),
                Ok(_) => {
                    let kind = FileKind::of(&self.root).unwrap_or(FileKind::Markdown);
                    self.stack.push(Entry::File(self.root.clone(), kind));
                }
            }
        }
        while let Some(entry) = self.stack.pop() {
            match entry {
                Entry::Dir(dir) => match Walk::list(&dir) {
                    Ok(children) => self.stack.extend(children),
                    Err(e) => return Some(Err(e)),
                },
                Entry::File(path, kind) => return Some(self.load(&path, kind)),
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse(source: &str) -> Article {
        parse_article("billing/refunds", source, &ChunkOptions::default()).unwrap()
    }

    /// Asserts that each section's text is exactly its line range of `source`.
    fn assert_exact_lines(source: &str, article: &Article) {
        let lines = split_lines(source);
        for s in &article.sections {
            let (a, b) = s.lines;
            assert!(1 <= a && a <= b && b as usize <= lines.len(), "{:?} out of 1..={}", s.lines, lines.len());
            assert_eq!(lines[a as usize - 1..b as usize].join("\n"), s.text, "lines {a}..={b}");
        }
    }

    const ARTICLE: &str = "\
---
title: Refund policy
tags: [billing, refunds]
acl: [public, 'group:support']
audience: customer
updated: 2026-09-14
---
# Refund policy

Intro text.

## Annual plans

Annual plans are refundable.

### Partial refunds

Pro rata.

## Empty

### Under empty

Child text.
";

    #[test]
    fn front_matter_inline_lists_and_quotes() {
        let a = parse(ARTICLE);
        let fm = &a.front_matter;
        assert_eq!(fm.title.as_deref(), Some("Refund policy"));
        assert_eq!(fm.tags, ["billing", "refunds"]);
        assert_eq!(fm.acl, ["public", "group:support"]);
        assert_eq!(fm.audience.as_deref(), Some("customer"));
        assert_eq!(fm.updated.as_deref(), Some("2026-09-14"));
        assert_eq!(fm.lang, None);
        assert!(fm.extra.is_empty());
    }

    #[test]
    fn front_matter_block_lists_comments_and_extra() {
        let src = "---\r\n# a comment\r\ntitle: \"Error: E_42 \\\"quoted\\\"\"\r\ntags:\r\n  - billing\r\n  - 'it''s'\r\n- \"x, y\"\r\nacl: public\r\nlang: en # english\r\nowner: [ann, bob]\r\nslug: c#-basics\r\n---\r\nBody.\r\n";
        let a = parse(src);
        let fm = &a.front_matter;
        assert_eq!(fm.title.as_deref(), Some("Error: E_42 \"quoted\""));
        assert_eq!(a.title, "Error: E_42 \"quoted\"");
        assert_eq!(fm.tags, ["billing", "it's", "x, y"]);
        assert_eq!(fm.acl, ["public"]);
        assert_eq!(fm.lang.as_deref(), Some("en"));
        assert_eq!(fm.extra["owner"], "ann, bob");
        assert_eq!(fm.extra["slug"], "c#-basics");
        assert_eq!(a.sections.len(), 1);
        assert_eq!(a.sections[0].text, "Body.");
        assert_eq!(a.sections[0].lines, (13, 13));
    }

    #[test]
    fn missing_front_matter() {
        let a = parse("# Hello\n\nWorld\n");
        assert_eq!(a.front_matter, FrontMatter::default());
        assert_eq!(a.title, "Hello");
        assert_eq!(a.sections[0].heading_path, ["Hello"]);
        assert_eq!(a.sections[0].lines, (3, 3));
        let untitled = parse("Just text.\n");
        assert_eq!(untitled.title, "refunds", "falls back to the id's last component");
    }

    #[test]
    fn malformed_front_matter_is_an_error() {
        for bad in [
            "---\ntitle: x\n# no end\n",
            "---\n",
            "---\ntitle x\n---\n",
            "---\ntitle: a\ntitle: b\n---\n",
            "---\ntags: [a, b\n---\n",
            "---\ntitle: \"open\n---\n",
            "---\n- orphan\n---\n",
            "---\ntitle: [a, b]\n---\n",
            "---\ntitle: x\n  nested: y\n---\n",
            "---\nbody: |\n---\n",
        ] {
            match parse_article("billing/x", bad, &ChunkOptions::default()) {
                Err(Error::InvalidRecord { reason }) => {
                    assert!(reason.contains("billing/x"), "{reason}")
                }
                other => panic!("{bad:?} gave {other:?}"),
            }
        }
        // A thematic break later in the file is not front matter.
        assert!(parse_article("x", "Text\n\n---\n", &ChunkOptions::default()).is_ok());
    }

    #[test]
    fn nested_headings_give_heading_paths() {
        let a = parse(ARTICLE);
        let paths: Vec<_> = a.sections.iter().map(|s| s.heading_path.join(" > ")).collect();
        assert_eq!(
            paths,
            [
                "Refund policy",
                "Refund policy > Annual plans",
                "Refund policy > Annual plans > Partial refunds",
                "Refund policy > Empty > Under empty",
            ]
        );
        assert_exact_lines(ARTICLE, &a);
        assert_eq!(a.sections[0].lines, (10, 10));
        assert!(a.sections.iter().all(|s| s.part == 0));
    }

    #[test]
    fn preamble_before_first_heading() {
        let src = "---\ntitle: T\n---\nLead paragraph.\n\n## Details\n\nMore.\n";
        let a = parse(src);
        assert_eq!(a.sections[0].heading_path, ["T"]);
        assert_eq!(a.sections[0].lines, (4, 4));
        assert_eq!(a.sections[1].heading_path, ["Details"]);
        let records = a.records().unwrap();
        assert_eq!(records[0].id(), "billing/refunds#intro");
        assert!(records[0].section.as_slice().is_empty());
        assert_eq!(records[1].section.as_slice(), ["Details"]);
    }

    #[test]
    fn hash_in_code_block_is_not_a_heading() {
        let src = "# T\n\n## Setup\n\n```bash\n# install\n## not a heading\n```\n\n~~~\n# also not\n~~~\n\n    # indented code\n#hashtag\n## Next #\n\nx\n";
        let a = parse(src);
        let paths: Vec<_> = a.sections.iter().map(|s| s.heading_path.clone()).collect();
        assert_eq!(paths, [vec!["T".to_string(), "Setup".into()], vec!["T".into(), "Next".into()]]);
        assert!(a.sections[0].text.contains("## not a heading"));
        assert!(a.sections[0].text.contains("#hashtag"));
        assert_exact_lines(src, &a);
    }

    #[test]
    fn heading_closing_sequence_and_levels() {
        assert_eq!(atx_heading("## Title ##"), Some((2, "Title".into())));
        assert_eq!(atx_heading("# C#"), Some((1, "C#".into())));
        assert_eq!(atx_heading("   ### x"), Some((3, "x".into())));
        assert_eq!(atx_heading("#"), Some((1, String::new())));
        assert_eq!(atx_heading("####### seven"), None);
        assert_eq!(atx_heading("    # four spaces"), None);
        assert_eq!(atx_heading("#no-space"), None);
    }

    #[test]
    fn code_blocks_kept_whole_when_splitting() {
        let code: String = (0..40).map(|i| format!("let x{i} = {i};\n\n")).collect();
        let src = format!("# T\n\n## Code\n\nBefore.\n\n```rust\n{code}```\n\nAfter paragraph.\n");
        let options = ChunkOptions { max_chars: 100, overlap_chars: 20 };
        let a = parse_article("x", &src, &options).unwrap();
        assert_exact_lines(&src, &a);
        let fenced: Vec<_> = a.sections.iter().filter(|s| s.text.contains("```rust")).collect();
        assert_eq!(fenced.len(), 1, "the code block is in one part");
        assert!(fenced[0].text.contains("let x39 = 39;\n\n```"));
        for s in &a.sections {
            assert_eq!(s.text.matches("```").count() % 2, 0, "no part cuts a fence: {:?}", s.text);
        }
        assert!(a.sections.len() >= 3);
        assert_eq!(
            a.sections.iter().map(|s| s.part).collect::<Vec<_>>(),
            (1..=a.sections.len() as u32).collect::<Vec<_>>()
        );
    }

    #[test]
    fn long_section_split_with_overlap_and_exact_lines() {
        let paragraphs: Vec<String> =
            (0..30).map(|i| format!("Paragraph {i} says something about refunds and invoices.")).collect();
        let src = format!("---\ntitle: Long\n---\n# Long\n\n## Body\n\n{}\n", paragraphs.join("\n\n"));
        let options = ChunkOptions { max_chars: 300, overlap_chars: 80 };
        let a = parse_article("billing/long", &src, &options).unwrap();
        assert!(a.sections.len() > 3);
        assert_exact_lines(&src, &a);
        for pair in a.sections.windows(2) {
            let (prev, next) = (&pair[0], &pair[1]);
            assert!(next.text.chars().count() <= 300);
            // The next part starts inside the previous one (overlap) and goes past it.
            assert!(next.lines.0 > prev.lines.0 && next.lines.0 <= prev.lines.1, "{:?} {:?}", prev.lines, next.lines);
            assert!(next.lines.1 > prev.lines.1);
            let first_para = next.text.split("\n\n").next().unwrap();
            assert!(prev.text.ends_with(first_para));
            assert!(first_para.chars().count() <= 80);
        }
        // Every paragraph is somewhere.
        for p in &paragraphs {
            assert!(a.sections.iter().any(|s| s.text.contains(p.as_str())), "{p}");
        }
        let records = a.records().unwrap();
        assert_eq!(records[0].id(), "billing/long#body-1");
        assert_eq!(records[1].id(), "billing/long#body-2");
    }

    #[test]
    fn overlong_paragraph_falls_back_to_lines() {
        let rows: String = (0..50).map(|i| format!("| row {i} | value {i} |\n")).collect();
        let src = format!("## Table\n\n| a | b |\n|---|---|\n{rows}");
        let options = ChunkOptions { max_chars: 200, overlap_chars: 30 };
        let a = parse_article("t", &src, &options).unwrap();
        assert!(a.sections.len() > 5);
        assert_exact_lines(&src, &a);
        assert!(a.sections.iter().all(|s| s.text.chars().count() <= 200));
    }

    #[test]
    fn oversize_options_never_loop() {
        let src = "a\n\nbb\n\nccc\n\n```\nx\n\ny\n```\n";
        for (max, overlap) in [(0, 0), (0, 100), (1, 1), (3, 1000), (5, 5)] {
            let a = parse_article("x", src, &ChunkOptions { max_chars: max, overlap_chars: overlap }).unwrap();
            assert_exact_lines(src, &a);
            assert!(a.records().is_ok());
        }
    }

    #[test]
    fn crlf_and_bom_keep_line_numbers() {
        let unix = "---\ntitle: T\n---\n# T\n\nOne.\n\n## Two\n\n```\ncode\n```\n";
        let windows = format!("\u{feff}{}", unix.replace('\n', "\r\n"));
        let (a, b) = (parse(unix), parse(&windows));
        assert_eq!(a, b);
        assert_exact_lines(&windows, &b);
        assert!(!b.sections.iter().any(|s| s.text.contains('\r')));
    }

    #[test]
    fn record_fields_ids_and_acl() {
        let a = parse(ARTICLE);
        let records = a.records().unwrap();
        let ids: Vec<_> = records.iter().map(|r| r.id()).collect();
        assert_eq!(
            ids,
            [
                "billing/refunds#intro",
                "billing/refunds#annual-plans",
                "billing/refunds#annual-plans-partial-refunds",
                "billing/refunds#empty-under-empty",
            ]
        );
        let r = &records[2];
        assert_eq!(r.title.as_str(), "Refund policy");
        assert_eq!(r.body.as_str(), "Pro rata.");
        assert_eq!(r.parent.as_deref(), Some("billing/refunds"));
        assert_eq!(r.section.as_slice(), ["Annual plans", "Partial refunds"]);
        assert_eq!(r.lines, Some((18, 18)));
        assert_eq!(r.acl.as_slice(), ["public", "group:support"]);
        assert_eq!(r.keywords["tags"], ["billing", "refunds"]);
        assert_eq!(r.keywords["audience"], ["customer"]);
        assert_eq!(r.keywords["category"], ["billing"]);
        assert_eq!(r.numbers["updated"], 1_789_344_000.0);

        let no_acl = parse("# T\n\ntext\n").records().unwrap();
        assert!(no_acl[0].acl.as_slice().is_empty());
        assert!(!no_acl[0].keywords.contains_key("tags"));
        let top = parse_article("top", "text", &ChunkOptions::default()).unwrap().records().unwrap();
        assert!(!top[0].keywords.contains_key("category"));
    }

    #[test]
    fn front_matter_after_blank_lines_is_read_not_ignored() {
        let a = parse("\n  \n---\ntitle: Late\nacl: [group:support]\n---\n# Body\n\ntext\n");
        assert_eq!(a.front_matter.acl, ["group:support"]);
        assert_eq!(a.title, "Late");
        let records = a.records().unwrap();
        assert_eq!(records[0].acl.as_slice(), ["group:support"]);
        assert!(records.iter().all(|r| !r.body.as_str().contains("acl")));
        // An unclosed block after blank lines is an error naming its line.
        let err = parse_article("doc", "\n---\nacl: [x]\n# Body\n", &ChunkOptions::default()).unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
    }

    #[test]
    fn empty_acl_is_an_error_and_tenant_becomes_a_tenant_token() {
        for src in ["---\nacl: []\n---\ntext\n", "---\nacl:\n---\ntext\n", "---\nacl: ''\n---\ntext\n"] {
            let err = parse_article("doc", src, &ChunkOptions::default()).unwrap_err();
            assert!(err.to_string().contains("`acl` is empty"), "{src:?}: {err}");
        }
        let a = parse("---\ntenant: globex\n---\ntext\n");
        assert_eq!(a.records().unwrap()[0].acl.as_slice(), ["tenant:globex"]);
        let b = parse("---\ntenant: tenant:globex\n---\ntext\n");
        assert_eq!(b.records().unwrap()[0].acl.as_slice(), ["tenant:globex"]);
        for src in [
            "---\ntenant: globex\nacl: [group:support]\n---\ntext\n",
            "---\ntenant: [a, b]\n---\ntext\n",
            "---\ntenant: two words\n---\ntext\n",
            "---\ntenant:\n---\ntext\n",
        ] {
            assert!(parse_article("doc", src, &ChunkOptions::default()).is_err(), "{src:?}");
        }
        // Reserved tokens never reach the index from front matter either.
        let reserved = parse("---\nacl: [__braid:no-acl]\n---\ntext\n");
        assert!(reserved.records().is_err());
    }

    #[test]
    fn record_ids_are_unique() {
        let src = "# T\n\nlead\n\n## Setup\n\na\n\n## Setup\n\nb\n\n## Setup 2\n\nc\n\n## ???\n\nd\n\n## !!!\n\ne\n\n## Intro\n\nf\n\nbefore\n";
        let records = parse(src).records().unwrap();
        let ids: HashSet<_> = records.iter().map(|r| r.id().to_string()).collect();
        assert_eq!(ids.len(), records.len(), "{:?}", records.iter().map(|r| r.id()).collect::<Vec<_>>());
        let ids: Vec<_> = records.iter().map(|r| r.id().trim_start_matches("billing/refunds#")).collect();
        assert_eq!(ids, ["intro", "setup", "setup-2", "setup-2-2", "section", "section-2", "intro-2"]);
    }

    #[test]
    fn bad_date_is_an_error_naming_the_article() {
        let a = parse("---\nupdated: last tuesday\n---\ntext\n");
        match a.records() {
            Err(Error::InvalidRecord { reason }) => {
                assert!(reason.contains("billing/refunds") && reason.contains("updated"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn text_files_are_one_section() {
        let a =
            parse_text("notes/faq", "\n\nReset your password\n\nGo to settings.\n", &ChunkOptions::default()).unwrap();
        assert_eq!(a.title, "Reset your password");
        assert_eq!(a.sections.len(), 1);
        assert_eq!(a.sections[0].lines, (3, 5));
        let records = a.records().unwrap();
        assert_eq!(records[0].id(), "notes/faq#intro");
        assert_eq!(records[0].keywords["category"], ["notes"]);
        assert!(parse_text("e", "", &ChunkOptions::default()).unwrap().sections.is_empty());
    }

    #[test]
    fn article_ids_are_relative_and_slash_separated() {
        let root = Path::new("corpus");
        assert_eq!(article_id(root, &root.join("billing").join("refund-policy.md")), "billing/refund-policy");
        assert_eq!(article_id(root, &root.join("top.markdown")), "top");
        assert_eq!(article_id(root, &root.join("a").join("b").join("c.d.txt")), "a/b/c.d");
        assert_eq!(article_id(Path::new("other"), Path::new("x/y.md")), "x/y");
        assert_eq!(article_id(Path::new("one.md"), Path::new("one.md")), "one");
    }

    #[test]
    fn read_dir_walks_sorted_and_skips_hidden() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |rel: &str, text: &[u8]| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("billing/b.md", b"# B\n\nb\n");
        write("billing/a.markdown", b"# A\n\na\n");
        write("admin/z.txt", b"Zed\n");
        write("admin/notes.json", b"{}");
        write(".git/x.md", b"# hidden\n");
        write("admin/.draft.md", b"# hidden\n");
        write("broken/bad.md", b"---\ntitle: x\n");
        write("broken/binary.md", &[0xff, 0xfe, 0x00]);

        let results: Vec<_> = read_dir(root, &ChunkOptions::default()).collect();
        let ids: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).map(|a| a.id.as_str()).collect();
        assert_eq!(ids, ["admin/z", "billing/a", "billing/b"]);
        assert_eq!(results.len(), 5);
        assert!(matches!(&results[3], Err(Error::InvalidRecord { reason }) if reason.contains("broken/bad")));
        assert!(matches!(&results[4], Err(Error::Io { path, .. }) if path.ends_with("binary.md")));

        let missing: Vec<_> = read_dir(&root.join("nope"), &ChunkOptions::default()).collect();
        assert!(matches!(missing.as_slice(), [Err(Error::Io { .. })]));
        let single: Vec<_> = read_dir(&root.join("billing/b.md"), &ChunkOptions::default()).collect();
        assert_eq!(single.len(), 1);
        assert_eq!(single[0].as_ref().unwrap().id, "b");
    }

    /// Every article of the bundled help-center corpus parses and yields records.
    #[test]
    fn helpcenter_corpus_parses() {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let root = manifest
            .ancestors()
            .map(|d| d.join("datasets/helpcenter/articles"))
            .find(|d| d.is_dir())
            .expect("datasets/helpcenter/articles above CARGO_MANIFEST_DIR");
        let has_markdown = walk_has_markdown(&root);
        let mut articles = 0;
        let mut ids = HashSet::new();
        for article in read_dir(&root, &ChunkOptions::default()) {
            let article = article.unwrap();
            let source = std::fs::read_to_string(root.join(format!("{}.md", article.id))).unwrap_or_default();
            if !source.is_empty() {
                assert_exact_lines(&source, &article);
            }
            let records = article.records().unwrap_or_else(|e| panic!("{}: {e}", article.id));
            assert!(!records.is_empty(), "{} yields no record", article.id);
            for r in &records {
                assert!(ids.insert(r.id().to_string()), "duplicate id {}", r.id());
                assert!(r.validate().is_ok());
            }
            articles += 1;
        }
        if has_markdown {
            assert!(articles > 0);
        } else {
            assert_eq!(articles, 0, "read_dir found articles where there are no .md files");
        }
    }

    fn walk_has_markdown(dir: &Path) -> bool {
        std::fs::read_dir(dir).into_iter().flatten().flatten().any(|e| {
            let p = e.path();
            if p.is_dir() {
                walk_has_markdown(&p)
            } else {
                p.extension().is_some_and(|x| x == "md")
            }
        })
    }

    fn markdownish() -> impl Strategy<Value = String> {
        let line = prop_oneof![
            Just("---".to_string()),
            Just("# Title".to_string()),
            Just("## Sub".to_string()),
            Just("### Deep ###".to_string()),
            Just("```".to_string()),
            Just("~~~~".to_string()),
            Just("```rust".to_string()),
            Just(String::new()),
            Just("   ".to_string()),
            Just("title: \"x".to_string()),
            Just("tags: [a, 'b']".to_string()),
            Just("- item".to_string()),
            Just("updated: 2026-02-30".to_string()),
            Just("\u{feff}#".to_string()),
            "[a-z #`~:\\-\\[\\]'\"\r\u{e9}\u{4e2d}]{0,30}",
        ];
        (proptest::collection::vec(line, 0..40), any::<bool>(), any::<bool>()).prop_map(|(lines, crlf, bom)| {
            let body = lines.join(if crlf { "\r\n" } else { "\n" });
            if bom {
                format!("\u{feff}{body}")
            } else {
                body
            }
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn random_markdown_never_panics_and_lines_are_exact(
            source in markdownish(),
            max_chars in 0usize..120,
            overlap_chars in 0usize..60,
        ) {
            let options = ChunkOptions { max_chars, overlap_chars };
            if let Ok(article) = parse_article("cat/doc", &source, &options) {
                assert_exact_lines(&source, &article);
                // Every non-blank body line that is not a heading is in some section.
                let lines = split_lines(&source);
                let (_, body_start) = parse_front_matter("cat/doc", &lines).unwrap();
                let kinds = classify(&lines, body_start);
                for (i, line) in lines.iter().enumerate().skip(body_start) {
                    if !is_blank(line) && !matches!(kinds[i], LineKind::Heading(..)) {
                        let n = line_no(i);
                        prop_assert!(article.sections.iter().any(|s| s.lines.0 <= n && n <= s.lines.1), "line {n} lost");
                    }
                }
                if let Ok(records) = article.records() {
                    let ids: HashSet<_> = records.iter().map(|r| r.id().to_string()).collect();
                    prop_assert_eq!(ids.len(), records.len());
                }
            }
            let text = parse_text("cat/doc", &source, &options).unwrap();
            assert_exact_lines(&source, &text);
        }
    }
}
