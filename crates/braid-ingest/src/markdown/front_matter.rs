//! The front matter of a Markdown article: the small YAML subset help centers use (`key: value`
//! scalars, `[a, b]` inline lists, `- a` block lists, quoted strings, `#` comments), read
//! strictly — a line it cannot read is an error naming the article and the line, never
//! ignored, since the front matter carries the article's ACL and tenant.

use std::collections::BTreeMap;

use braid_core::Result;

use super::invalid;

/// The front matter of an article.
///
/// The known keys are `title`, `tags`, `acl`, `tenant`, `audience`, `updated` and `lang`; any
/// other key lands in [`FrontMatter::extra`]. A list key also accepts a single scalar
/// (`tags: billing`).
///
/// The block opens with `---` on the first line that is not blank (blank lines before it are
/// allowed, and the block is read, never taken for body text) and closes with `---` or `...`.
/// Access keys are read strictly: `acl: []` (or `acl:` with no items) is an error, since an
/// empty list would leave the record to the index's policy — public by default — while its
/// author meant "no one"; leave the key out for the policy's default. `tenant: acme` makes
/// the record's ACL `[tenant:acme]` (visible to that tenant's principals only); it cannot be
/// combined with `acl`, because by Braid's ACL rule a tenant token in an ACL admits the whole
/// tenant, which would widen a group list (write tenant-scoped tokens in `acl` instead).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrontMatter {
    /// `title`.
    pub title: Option<String>,
    /// `tags`, in order.
    pub tags: Vec<String>,
    /// `acl`: principal tokens such as `public` or `group:support`.
    pub acl: Vec<String>,
    /// `tenant`: the tenant the article belongs to (`acme` stands for the token `tenant:acme`).
    pub tenant: Option<String>,
    /// `audience`, for example `customer`, `admin` or `agent`.
    pub audience: Option<String>,
    /// `updated`, as written (`YYYY-MM-DD` or RFC 3339); checked by [`Article::records`](super::Article::records).
    pub updated: Option<String>,
    /// `lang`, for example `en`.
    pub lang: Option<String>,
    /// Every other key with its value; list values are joined with `", "`.
    pub extra: BTreeMap<String, String>,
}

enum Value {
    Scalar(String),
    List(Vec<String>),
}

/// The front matter and the index of the first body line.
pub(crate) fn parse_front_matter(id: &str, lines: &[&str]) -> Result<(FrontMatter, usize)> {
    let Some(open) = lines.iter().position(|l| !l.trim().is_empty()) else {
        return Ok((FrontMatter::default(), 0));
    };
    if lines[open].trim() != "---" {
        return Ok((FrontMatter::default(), 0));
    }
    let close =
        lines[open + 1..].iter().position(|l| matches!(l.trim_end(), "---" | "...")).map(|p| p + open + 1).ok_or_else(
            || invalid(id, format!("front matter opened with `---` on line {} is never closed", open + 1)),
        )?;

    let mut entries: Vec<(String, Value, usize)> = Vec::new();
    // Whether the last key had no value, so that `- item` lines may follow.
    let mut block_open = false;
    for (i, raw) in lines.iter().enumerate().take(close).skip(open + 1) {
        let n = i + 1;
        let bad = |what: &str| invalid(id, format!("front matter line {n}: {what}"));
        let line = strip_comment(raw);
        if line.trim().is_empty() {
            continue;
        }
        let trimmed = line.trim_start();
        if trimmed == "-" || trimmed.starts_with("- ") || trimmed.starts_with("-\t") {
            let item = unquote(trimmed[1..].trim()).map_err(&bad)?;
            match entries.last_mut() {
                Some((_, Value::List(items), _)) if block_open => {
                    if !item.is_empty() {
                        items.push(item);
                    }
                }
                _ => return Err(bad("list item without a key above it")),
            }
            continue;
        }
        if trimmed.len() != line.len() {
            return Err(bad("unexpected indentation (nested values are not supported)"));
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(bad("expected `key: value`"));
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(bad("empty key"));
        }
        if entries.iter().any(|(k, _, _)| k == key) {
            return Err(bad(&format!("duplicate key `{key}`")));
        }
        let value = value.trim();
        block_open = value.is_empty();
        let value = if value.is_empty() {
            Value::List(Vec::new())
        } else if let Some(inner) = value.strip_prefix('[') {
            let inner = inner.strip_suffix(']').ok_or_else(|| bad("unterminated `[` list"))?;
            Value::List(split_inline_list(inner).map_err(&bad)?)
        } else if value.starts_with(['|', '>']) {
            return Err(bad("block scalars (`|`, `>`) are not supported"));
        } else {
            Value::Scalar(unquote(value).map_err(&bad)?)
        };
        entries.push((key.to_string(), value, n));
    }

    let mut fm = FrontMatter::default();
    for (key, value, n) in entries {
        let one = |value: Value| -> Result<Option<String>> {
            match value {
                Value::Scalar(s) => Ok(Some(s).filter(|s| !s.is_empty())),
                Value::List(items) if items.is_empty() => Ok(None),
                Value::List(_) => {
                    Err(invalid(id, format!("front matter line {n}: `{key}` takes one value, not a list")))
                }
            }
        };
        let many = |value: Value| match value {
            Value::Scalar(s) if s.is_empty() => Vec::new(),
            Value::Scalar(s) => vec![s],
            Value::List(items) => items,
        };
        match key.as_str() {
            "title" => fm.title = one(value)?,
            "audience" => fm.audience = one(value)?,
            "updated" => fm.updated = one(value)?,
            "lang" => fm.lang = one(value)?,
            "tags" => fm.tags = many(value),
            "acl" => {
                fm.acl = many(value);
                if fm.acl.is_empty() {
                    return Err(invalid(
                        id,
                        format!(
                            "front matter line {n}: `acl` is empty, which would leave the article to the \
                             index's policy (public by default); list its tokens, or remove the key"
                        ),
                    ));
                }
            }
            "tenant" => {
                let tenant =
                    one(value)?.ok_or_else(|| invalid(id, format!("front matter line {n}: `tenant` is empty")))?;
                let tenant = tenant.strip_prefix(braid_core::TENANT_PREFIX).unwrap_or(&tenant).trim().to_string();
                if tenant.is_empty() || tenant.contains(char::is_whitespace) || tenant.contains(',') {
                    return Err(invalid(id, format!("front matter line {n}: `tenant` must be one name")));
                }
                fm.tenant = Some(tenant);
            }
            _ => {
                let text = match value {
                    Value::Scalar(s) => s,
                    Value::List(items) => items.join(", "),
                };
                fm.extra.insert(key, text);
            }
        }
    }
    if fm.tenant.is_some() && !fm.acl.is_empty() {
        return Err(invalid(
            id,
            "front matter: `tenant` and `acl` cannot be combined (a tenant token in an ACL admits the whole \
             tenant); use `tenant` alone, or tenant-scoped tokens in `acl`"
                .into(),
        ));
    }
    Ok((fm, close + 1))
}

/// `line` without a YAML comment: a `#` at the start or after whitespace, outside quotes.
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut previous = ' ';
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' && previous.is_whitespace() => return &line[..i],
            None => {}
        }
        previous = c;
    }
    line
}

/// The items of an inline list's inside (`a, "b, c", 'd'`), unquoted; empty items dropped.
fn split_inline_list(inner: &str) -> std::result::Result<Vec<String>, &'static str> {
    let mut items = Vec::new();
    let mut quote: Option<char> = None;
    let mut start = 0;
    for (i, c) in inner.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == ',' => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            None => {}
        }
    }
    items.push(&inner[start..]);
    items.into_iter().map(|item| unquote(item.trim())).filter(|item| !matches!(item, Ok(s) if s.is_empty())).collect()
}

/// A scalar without its quotes: `"…"` with `\"`, `\\`, `\n`, `\t` escapes, or `'…'` with `''`.
fn unquote(value: &str) -> std::result::Result<String, &'static str> {
    if let Some(rest) = value.strip_prefix('"') {
        let inner = rest.strip_suffix('"').filter(|_| value.len() >= 2).ok_or("unterminated `\"` quote")?;
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => return Err("unterminated `\"` quote"),
            }
        }
        Ok(out)
    } else if let Some(rest) = value.strip_prefix('\'') {
        let inner = rest.strip_suffix('\'').filter(|_| value.len() >= 2).ok_or("unterminated `'` quote")?;
        Ok(inner.replace("''", "'"))
    } else {
        Ok(value.to_string())
    }
}

#[cfg(test)]
mod tests {
    use braid_core::Error;

    use super::*;
    use crate::markdown::tests::{parse, ARTICLE};
    use crate::markdown::{parse_article, ChunkOptions};

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
}
