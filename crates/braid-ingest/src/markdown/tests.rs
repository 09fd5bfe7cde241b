//! What every part's tests share (a sample article, exact line checks), the tests of the
//! whole parse, and the random-Markdown property test.

use std::collections::HashSet;

use proptest::prelude::*;

use super::chunk::line_no;
use super::front_matter::parse_front_matter;
use super::lines::{classify, is_blank, split_lines, LineKind};
use super::{parse_article, parse_text, Article, ChunkOptions};

pub(crate) fn parse(source: &str) -> Article {
    parse_article("billing/refunds", source, &ChunkOptions::default()).unwrap()
}

/// Asserts that each section's text is exactly its line range of `source`.
pub(crate) fn assert_exact_lines(source: &str, article: &Article) {
    let lines = split_lines(source);
    for s in &article.sections {
        let (a, b) = s.lines;
        assert!(1 <= a && a <= b && b as usize <= lines.len(), "{:?} out of 1..={}", s.lines, lines.len());
        assert_eq!(lines[a as usize - 1..b as usize].join("\n"), s.text, "lines {a}..={b}");
    }
}

pub(crate) const ARTICLE: &str = "\
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
        // A text file reads front matter as an article does: the same source parses or fails
        // the same way.
        let text = parse_text("cat/doc", &source, &options);
        prop_assert_eq!(text.is_ok(), parse_front_matter("cat/doc", &split_lines(&source)).is_ok());
        if let Ok(text) = text {
            assert_exact_lines(&source, &text);
        }
    }
}
