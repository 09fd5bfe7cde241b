//! Lines and their kinds: line ends (`\n`, `\r\n`, a lone `\r`, a byte order mark), ATX
//! headings, and fenced code blocks (inside which nothing is a heading).

/// The lines of `source` without their ends (a BOM is dropped). A line ends with `\n`, `\r\n`
/// or a lone `\r`, as in CommonMark and YAML: a file with old Mac line ends is read line by
/// line (its front matter included), never as one long line of body text.
pub(crate) fn split_lines(source: &str) -> Vec<&str> {
    let source = source.strip_prefix('\u{feff}').unwrap_or(source);
    if source.is_empty() {
        return Vec::new();
    }
    let body = source
        .strip_suffix("\r\n")
        .or_else(|| source.strip_suffix('\n'))
        .or_else(|| source.strip_suffix('\r'))
        .unwrap_or(source);
    let mut lines = Vec::new();
    let mut start = 0;
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                lines.push(&body[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&body[start..i]);
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    lines.push(&body[start..]);
    lines
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LineKind {
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

pub(crate) fn classify(lines: &[&str], body_start: usize) -> Vec<LineKind> {
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
pub(crate) fn classify_fences(lines: &[&str], body_start: usize) -> Vec<LineKind> {
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

/// A line opening a fenced code block: its fence character and length.
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

/// Whether `line` closes a fence of at least `len` characters `ch`.
fn fence_closes(line: &str, ch: u8, len: usize) -> bool {
    let Some(rest) = unindent(line) else {
        return false;
    };
    let run = rest.bytes().take_while(|&b| b == ch).count();
    run >= len && rest[run..].trim().is_empty()
}

/// An ATX heading (`#` to `######` after at most three spaces): its level and text, without
/// a closing sequence of `#`.
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

pub(crate) fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// The heading path of text before the first heading: the title, or nothing when it is blank.
pub(crate) fn title_path(title: &str) -> Vec<String> {
    if title.trim().is_empty() {
        Vec::new()
    } else {
        vec![title.to_string()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::tests::{assert_exact_lines, parse};

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
    fn every_line_end_splits() {
        assert_eq!(split_lines("a\rb\r\nc\nd\r"), ["a", "b", "c", "d"]);
        assert_eq!(split_lines("a\r\rb"), ["a", "", "b"]);
        assert_eq!(split_lines("\u{feff}a\r\n"), ["a"]);
        assert_eq!(split_lines("\r\n"), [""]);
        assert_eq!(split_lines("a\n\n"), ["a", ""]);
        assert!(split_lines("").is_empty());
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
}
