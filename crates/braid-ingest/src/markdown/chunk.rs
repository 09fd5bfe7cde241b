//! Sections and parts: a section's lines trimmed of blank lines, and a long section cut into
//! parts at paragraph boundaries (or line boundaries inside a too-long paragraph), a fenced
//! code block never cut, each part after the first repeating the previous part's tail.

use super::lines::{is_blank, LineKind};
use super::{ChunkOptions, Section};

/// Pushes the section holding lines `start..end` (0-based, end exclusive), trimmed of blank
/// lines at both ends, split into parts when long; nothing when it is blank.
pub(crate) fn push_section(
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

/// The 1-based line number of a 0-based line index.
pub(crate) fn line_no(index: usize) -> u32 {
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

#[cfg(test)]
mod tests {
    use crate::markdown::tests::assert_exact_lines;
    use crate::markdown::{parse_article, ChunkOptions};

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
}
