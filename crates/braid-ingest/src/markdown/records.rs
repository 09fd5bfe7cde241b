//! Sections to records: record ids (`{article id}#{slug}`, unique within the article), ACL
//! and tenant from the front matter, keyword and date fields.

use std::collections::HashSet;

use braid_core::{parse_date, Record, Result};

use super::{invalid, reason_of, Article, Section};

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
            record = record.acl(fm.access.tokens());
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

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use braid_core::Error;

    use crate::markdown::tests::{parse, ARTICLE};
    use crate::markdown::{parse_article, parse_text, ChunkOptions};

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
    fn text_files_read_front_matter_like_markdown() {
        let opts = ChunkOptions::default();
        let a = parse_text("notes/plan", "---\ntitle: Plan\nacl: [group:staff]\n---\nQ3 roadmap\n", &opts).unwrap();
        assert_eq!(a.title, "Plan");
        assert_eq!(a.sections[0].text, "Q3 roadmap");
        assert_eq!(a.sections[0].lines, (5, 5));
        assert_eq!(a.records().unwrap()[0].acl.as_slice(), ["group:staff"]);
        let t = parse_text("notes/plan", "\n+++\ntenant = \"acme\"\n+++\nQ3 roadmap\n", &opts).unwrap();
        assert_eq!(
            (t.title.as_str(), t.records().unwrap()[0].acl.as_slice()),
            ("Q3 roadmap", &["tenant:acme".to_string()][..])
        );
        for src in [
            "---\nacl: []\n---\nx\n",
            "---\nACL: [group:staff]\n---\nx\n",
            "---\nTenant: acme\n---\nx\n",
            "---\nacl: [group:staff]\nno closing fence\n",
        ] {
            let err = parse_text("notes/plan", src, &opts).unwrap_err();
            assert!(err.to_string().contains("notes/plan"), "{src:?}: {err}");
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
}
