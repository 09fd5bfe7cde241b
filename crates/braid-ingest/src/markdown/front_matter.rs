//! The front matter of a Markdown or text article: either the small YAML subset help centers
//! use (`key: value` scalars, `[a, b]` inline lists, `- a` block lists, quoted strings, `#`
//! comments) between `---` lines, or TOML between `+++` lines (Hugo's convention). Both are
//! read strictly — a line the parser cannot read is an error naming the article and the
//! line, never ignored — and both hand their keys to [`crate::access`], which decides who may
//! see the article exactly as it does for a JSONL line.

use std::collections::BTreeMap;

use braid_core::Result;

use super::invalid;
use crate::access::{is_access_like, visible, Access, AccessReader, FieldValue, YAML_REFERENCE};

/// The front matter of an article.
///
/// The known keys are `title`, `tags`, `acl`, `tenant`, `audience`, `updated` and `lang`; any
/// other key lands in [`FrontMatter::extra`]. A list key also accepts a single scalar
/// (`tags: billing`).
///
/// The block opens with `---` (YAML) or `+++` (TOML) on the first line that is not blank
/// (blank lines before it are allowed, and the block is read, never taken for body text) and
/// closes with `---` or `...` (YAML) or `+++` (TOML). A first line that starts like a fence
/// without being exactly one (`--- # fm`, `----`, `---yaml`, an invisible character before
/// `---`) is refused, as is a Unicode line or paragraph separator (U+2028, U+2029, U+0085)
/// inside the block, and a second block right after the first (blank lines aside) that names
/// an access key: other readers disagree on each, and one that read access there would not
/// read it here. Nested values (YAML indentation, TOML tables, `{…}` mappings) are refused.
/// An unquoted YAML `null`, `~`, `true`, `false` (and YAML 1.1's `yes`, `no`, `on`, `off`),
/// anchor (`&x`), alias (`*x`) or tag (`!t`) is no string: an access key refuses it (quote it
/// to mean the text), other keys keep its text. Access keys are read by [`crate::access`]:
/// `acl` (a list of tokens) or `tenant` (one name, the ACL `[tenant:{name}]`, not combinable
/// with `acl`); an empty `acl`, a key in another letter case or one edit away (`ACL`, `acls`,
/// `Tenant`, `tennant`), full-width or run together (`ａｃｌ`, `tenantid`) is an error; with
/// neither key the index's policy decides.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrontMatter {
    /// `title`.
    pub title: Option<String>,
    /// `tags`, in order.
    pub tags: Vec<String>,
    /// Who may see the article: from `acl` or `tenant`, or the index's policy without them.
    pub access: Access,
    /// `audience`, for example `customer`, `admin` or `agent`.
    pub audience: Option<String>,
    /// `updated`, as written (`YYYY-MM-DD` or RFC 3339); checked by [`Article::records`](super::Article::records).
    pub updated: Option<String>,
    /// `lang`, for example `en`.
    pub lang: Option<String>,
    /// Every other key with its value; list values are joined with `", "`.
    pub extra: BTreeMap<String, String>,
}

/// A key of the block, its value and its 1-based line in the file.
struct Entry {
    key: String,
    value: FieldValue,
    line: usize,
}

/// The front matter and the index of the first body line.
pub(crate) fn parse_front_matter(id: &str, lines: &[&str]) -> Result<(FrontMatter, usize)> {
    // A line of invisible characters only is blank here, so that it cannot hide the fence.
    let Some(open) = lines.iter().position(|l| !visible(l).trim().is_empty()) else {
        return Ok((FrontMatter::default(), 0));
    };
    let (entries, close) = match lines[open].trim() {
        "---" => {
            let close = closing(id, lines, open, &["---", "..."])?;
            no_separators(id, lines, open, close)?;
            (yaml_entries(id, lines, open, close)?, close)
        }
        "+++" => {
            let close = closing(id, lines, open, &["+++"])?;
            no_separators(id, lines, open, close)?;
            (toml_entries(id, lines, open, close)?, close)
        }
        first => {
            if let Some(fence) = fence_like(first) {
                return Err(invalid(
                    id,
                    format!(
                        "line {} starts like a front matter fence but is not one: a fence is `{fence}` alone on its \
                         line (no comment, no language, no other character); write it so, or begin the file with \
                         something else",
                        open + 1
                    ),
                ));
            }
            return Ok((FrontMatter::default(), 0));
        }
    };
    no_second_block(id, lines, close)?;
    Ok((assemble(id, entries)?, close + 1))
}

/// The fence (`---` or `+++`) a line starts with once folded ([`visible`]), trimmed.
fn fence_like(line: &str) -> Option<&'static str> {
    let folded = visible(line);
    let folded = folded.trim();
    ["---", "+++"].into_iter().find(|fence| folded.starts_with(fence))
}

/// The characters some readers take for a line break and others do not: U+2028, U+2029 and
/// U+0085 (NEL). A lone `\r` is a line break everywhere (see `split_lines`).
const SEPARATORS: [char; 3] = ['\u{2028}', '\u{2029}', '\u{85}'];

/// Refuses a Unicode line or paragraph separator between line indexes `open` and `close`.
fn no_separators(id: &str, lines: &[&str], open: usize, close: usize) -> Result<()> {
    match (open..=close).find(|&i| lines[i].contains(SEPARATORS)) {
        Some(i) => Err(invalid(
            id,
            format!(
                "front matter line {} holds a Unicode line or paragraph separator (U+2028, U+2029 or U+0085), \
                 which some readers take for a line break and others do not; use a plain line break",
                i + 1
            ),
        )),
        None => Ok(()),
    }
}

/// Refuses a second front matter block naming an access key: a fence right after the block
/// that closed on line index `close` (blank lines aside), then a line whose key is an access
/// key or a near-miss of one, before the next fence. Access is read from the first block
/// only; a reader that merged the two would see access this one does not.
fn no_second_block(id: &str, lines: &[&str], close: usize) -> Result<()> {
    let Some(next) = (close + 1..lines.len()).find(|&i| !visible(lines[i]).trim().is_empty()) else {
        return Ok(());
    };
    if fence_like(lines[next]).is_none() {
        return Ok(());
    }
    for (i, line) in lines.iter().enumerate().skip(next + 1) {
        if matches!(line.trim(), "---" | "..." | "+++") {
            break;
        }
        let Some(cut) = line.find([':', '=']) else {
            continue;
        };
        let key = line[..cut].trim().trim_matches(['"', '\'']);
        if !key.is_empty() && is_access_like(key) {
            return Err(invalid(
                id,
                format!(
                    "line {}: `{key}` is in a second front matter block after the one closed on line {}; access is \
                     read from the first block only, so move it there",
                    i + 1,
                    close + 1
                ),
            ));
        }
    }
    Ok(())
}

/// The index of the line that closes the block opened on line index `open`.
fn closing(id: &str, lines: &[&str], open: usize, fences: &[&str]) -> Result<usize> {
    lines[open + 1..].iter().position(|l| fences.contains(&l.trim_end())).map(|p| p + open + 1).ok_or_else(|| {
        invalid(id, format!("front matter opened with `{}` on line {} is never closed", fences[0], open + 1))
    })
}

/// The entries of a YAML-subset block between line indexes `open` and `close`.
fn yaml_entries(id: &str, lines: &[&str], open: usize, close: usize) -> Result<Vec<Entry>> {
    let mut entries: Vec<Entry> = Vec::new();
    // Whether the last key had no value, so that `- item` lines may follow.
    let mut block_open = false;
    // The keys written `key:` with nothing after them: YAML's null when no item follows.
    let mut bare: Vec<bool> = Vec::new();
    for (i, raw) in lines.iter().enumerate().take(close).skip(open + 1) {
        let n = i + 1;
        let bad = |what: &str| invalid(id, format!("front matter line {n}: {what}"));
        let line = strip_comment(raw);
        if line.trim().is_empty() {
            continue;
        }
        let trimmed = line.trim_start();
        if trimmed == "-" || trimmed.starts_with("- ") || trimmed.starts_with("-\t") {
            let item = scalar(trimmed[1..].trim()).map_err(&bad)?;
            match entries.last_mut() {
                Some(Entry { value: FieldValue::List(items), .. }) if block_open => {
                    if let Some(last) = bare.last_mut() {
                        *last = false;
                    }
                    if item != FieldValue::Text(String::new()) {
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
        if entries.iter().any(|e| e.key == key) {
            return Err(bad(&format!("duplicate key `{key}`")));
        }
        let value = value.trim();
        block_open = value.is_empty();
        bare.push(block_open);
        let value = if value.is_empty() {
            FieldValue::List(Vec::new())
        } else if let Some(inner) = value.strip_prefix('[') {
            let inner = inner.strip_suffix(']').ok_or_else(|| bad("unterminated `[` list"))?;
            FieldValue::List(split_inline_list(inner).map_err(&bad)?)
        } else if value.starts_with(['|', '>']) {
            return Err(bad("block scalars (`|`, `>`) are not supported"));
        } else {
            scalar(value).map_err(&bad)?
        };
        entries.push(Entry { key: key.to_string(), value, line: n });
    }
    for (entry, bare) in entries.iter_mut().zip(bare) {
        if bare {
            entry.value = FieldValue::Null;
        }
    }
    Ok(entries)
}

/// The entries of a TOML block between line indexes `open` and `close`: its top-level keys,
/// in key order. Tables are refused like YAML's nested values.
fn toml_entries(id: &str, lines: &[&str], open: usize, close: usize) -> Result<Vec<Entry>> {
    let text = lines[open + 1..close].join("\n");
    // The 1-based file line of byte `at` of the block's text.
    let line_of = |at: usize| open + 2 + text[..at.min(text.len())].matches('\n').count();
    let table = toml::de::DeTable::parse(&text).map_err(|e| {
        let line = e.span().map_or(open + 2, |span| line_of(span.start));
        invalid(id, format!("front matter line {line}: {} (TOML)", e.message().trim_end()))
    })?;
    let mut entries = Vec::new();
    for (key, value) in table.get_ref() {
        let line = line_of(key.span().start);
        let value = toml_value(value.get_ref()).ok_or_else(|| {
            invalid(
                id,
                format!(
                    "front matter line {line}: `{}` holds a table (nested values are not supported)",
                    key.get_ref()
                ),
            )
        })?;
        entries.push(Entry { key: key.get_ref().to_string(), value, line });
    }
    Ok(entries)
}

/// A TOML value's shape; `None` for a table, anywhere inside.
fn toml_value(value: &toml::de::DeValue<'_>) -> Option<FieldValue> {
    use toml::de::DeValue;
    Some(match value {
        DeValue::String(s) => FieldValue::Text(s.to_string()),
        DeValue::Integer(i) => FieldValue::Typed { kind: "a number", text: i.to_string() },
        DeValue::Float(x) => FieldValue::Typed { kind: "a number", text: x.to_string() },
        DeValue::Boolean(b) => FieldValue::Typed { kind: "a boolean", text: b.to_string() },
        DeValue::Datetime(d) => FieldValue::Typed { kind: "a date", text: d.to_string() },
        DeValue::Array(items) => {
            FieldValue::List(items.into_iter().map(|item| toml_value(item.get_ref())).collect::<Option<_>>()?)
        }
        DeValue::Table(_) => return None,
    })
}

/// The front matter of `entries`: access keys through [`AccessReader`], the rest by name.
fn assemble(id: &str, entries: Vec<Entry>) -> Result<FrontMatter> {
    let document = format!("article {id:?}");
    let mut access = AccessReader::new(&document);
    let mut fm = FrontMatter::default();
    for Entry { key, value, line } in entries {
        if access.key(&key, Some(line), || value.clone())? {
            continue;
        }
        let at = |what: &str| invalid(id, format!("front matter line {line}: `{key}` {what}"));
        let one = |value: FieldValue| -> Result<Option<String>> {
            match value {
                FieldValue::Null => Ok(None),
                FieldValue::Text(s) | FieldValue::Typed { text: s, .. } => Ok(Some(s).filter(|s| !s.is_empty())),
                FieldValue::List(items) if items.is_empty() => Ok(None),
                FieldValue::List(_) => Err(at("takes one value, not a list")),
                FieldValue::Nested => Err(at("holds a table (nested values are not supported)")),
            }
        };
        let many = |value: FieldValue| -> Result<Vec<String>> {
            let items = match value {
                FieldValue::List(items) => items,
                other => vec![other],
            };
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    FieldValue::Null => {}
                    FieldValue::Text(s) | FieldValue::Typed { text: s, .. } => {
                        if !s.is_empty() {
                            out.push(s);
                        }
                    }
                    FieldValue::List(_) | FieldValue::Nested => {
                        return Err(at("holds a nested value (nested values are not supported)"))
                    }
                }
            }
            Ok(out)
        };
        match key.as_str() {
            "title" => fm.title = one(value)?,
            "audience" => fm.audience = one(value)?,
            "updated" => fm.updated = one(value)?,
            "lang" => fm.lang = one(value)?,
            "tags" => fm.tags = many(value)?,
            _ => {
                let text = many(value)?.join(", ");
                fm.extra.insert(key, text);
            }
        }
    }
    fm.access = access.finish()?;
    Ok(fm)
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

/// The items of an inline list's inside (`a, "b, c", 'd'`), read by [`scalar`]; empty items
/// dropped.
fn split_inline_list(inner: &str) -> std::result::Result<Vec<FieldValue>, &'static str> {
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
    items
        .into_iter()
        .map(|item| scalar(item.trim()))
        .filter(|item| !matches!(item, Ok(FieldValue::Text(s)) if s.is_empty()))
        .collect()
}

/// A YAML scalar as YAML reads it: a quoted string is text; unquoted, `null`, `~`, a boolean
/// (YAML 1.2's `true`/`false` and 1.1's `yes`/`no`/`on`/`off`, in their three spellings), an
/// anchor, alias or tag (`&`, `*`, `!`) is typed and keeps its text, and a `{…}` mapping is
/// nested. Any other value is text.
fn scalar(value: &str) -> std::result::Result<FieldValue, &'static str> {
    if value.starts_with(['"', '\'']) {
        return unquote(value).map(FieldValue::Text);
    }
    let typed = |kind| FieldValue::Typed { kind, text: value.to_string() };
    Ok(match value {
        "null" | "Null" | "NULL" | "~" => typed("null"),
        "true" | "True" | "TRUE" | "false" | "False" | "FALSE" | "yes" | "Yes" | "YES" | "no" | "No" | "NO" | "on"
        | "On" | "ON" | "off" | "Off" | "OFF" => typed("a boolean"),
        _ if value.starts_with(['&', '*', '!']) => typed(YAML_REFERENCE),
        _ if value.starts_with('{') => FieldValue::Nested,
        _ => FieldValue::Text(value.to_string()),
    })
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
    use crate::access::Access;
    use crate::markdown::tests::{parse, ARTICLE};
    use crate::markdown::{parse_article, parse_text, ChunkOptions};

    #[test]
    fn front_matter_inline_lists_and_quotes() {
        let a = parse(ARTICLE);
        let fm = &a.front_matter;
        assert_eq!(fm.title.as_deref(), Some("Refund policy"));
        assert_eq!(fm.tags, ["billing", "refunds"]);
        assert_eq!(fm.access, Access::Acl(vec!["public".into(), "group:support".into()]));
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
        assert_eq!(fm.access, Access::Acl(vec!["public".into()]));
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
        assert_eq!(a.front_matter.access, Access::Acl(vec!["group:support".into()]));
        assert_eq!(a.title, "Late");
        let records = a.records().unwrap();
        assert_eq!(records[0].acl.as_slice(), ["group:support"]);
        assert!(records.iter().all(|r| !r.body.as_str().contains("acl")));
        // An unclosed block after blank lines is an error naming its line.
        let err = parse_article("doc", "\n---\nacl: [x]\n# Body\n", &ChunkOptions::default()).unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
    }

    /// The error `src` gives as an article.
    fn refused(src: &str) -> String {
        match parse_article("billing/x", src, &ChunkOptions::default()) {
            Err(Error::InvalidRecord { reason }) => reason,
            other => panic!("{src:?} gave {other:?}"),
        }
    }

    /// Each near-miss the attacker used left the article public; now each is refused naming
    /// the article, the line and the key, never the value.
    #[test]
    fn near_miss_access_keys_are_refused() {
        for (src, key) in [
            ("---\nACL: [group:staff]\n---\ntext\n", "ACL"),
            ("---\nTenant: acme\n---\ntext\n", "Tenant"),
            ("---\nacls: [group:staff]\n---\ntext\n", "acls"),
            ("---\ntennant: acme\n---\ntext\n", "tennant"),
            ("---\ntitle: T\ntenant_id: acme\n---\ntext\n", "tenant_id"),
            ("+++\nACL = [\"group:staff\"]\n+++\ntext\n", "ACL"),
        ] {
            let reason = refused(src);
            assert!(
                reason.contains("article \"billing/x\"") && reason.contains(&format!("`{key}` looks like")),
                "{src:?}: {reason}"
            );
            assert!(!reason.contains("staff") && !reason.contains("acme"), "{reason}");
        }
        let reason = refused("---\ntitle: T\nacls: [group:staff]\n---\ntext\n");
        assert!(reason.contains("line 3"), "{reason}");
    }

    /// Each opening the auditor used was taken for body text, leaving the article public: a
    /// first line that starts like a fence without being one is refused.
    #[test]
    fn fence_look_alikes_are_refused() {
        for src in [
            "--- # fm\nacl: [group:a]\n---\ntext\n",
            "----\nacl: [group:a]\n----\ntext\n",
            "---yaml\nacl: [group:a]\n---\ntext\n",
            "---\u{2028}acl: [group:a]\u{2028}---\ntext\n",
            "+++ toml\nacl = [\"group:a\"]\n+++\ntext\n",
            "\n\n+++++\ntenant = \"acme\"\n+++++\n",
            "\u{200B}---\nacl: [group:a]\n---\ntext\n",
            "\u{feff}\u{feff}---\nacl: [group:a]\n---\ntext\n",
            "\u{ff0d}\u{ff0d}\u{ff0d}\nacl: [group:a]\n---\ntext\n",
        ] {
            let reason = refused(src);
            assert!(reason.contains("starts like a front matter fence"), "{src:?}: {reason}");
            let text = parse_text("billing/x", src, &ChunkOptions::default()).unwrap_err();
            assert!(text.to_string().contains("billing/x"), "{src:?}: {text}");
        }
        // A line of invisible characters only is blank: the block under it is read.
        let a = parse("\u{200B}\n---\nacl: [group:a]\n---\ntext\n");
        assert_eq!(a.front_matter.access, Access::Acl(vec!["group:a".into()]));
        // Body text that merely starts with dashes further down is not front matter.
        assert!(parse_article("x", "Intro\n\n--- note\n", &ChunkOptions::default()).is_ok());
    }

    /// A lone `\r` ends a line: a file with old Mac line ends has its front matter read.
    #[test]
    fn carriage_return_line_ends_are_read() {
        let a = parse("---\racl: [group:a]\r---\r# T\r\rtext\r");
        assert_eq!(a.front_matter.access, Access::Acl(vec!["group:a".into()]));
        assert_eq!(a.sections[0].text, "text");
        assert_eq!(a.sections[0].lines, (6, 6));
        assert!(a.records().unwrap().iter().all(|r| !r.body.as_str().contains("acl")));
        let reason = refused("---\rACL: [group:a]\r---\rtext\r");
        assert!(reason.contains("`ACL` looks like"), "{reason}");
        let toml = parse("+++\rtenant = \"acme\"\r+++\rtext");
        assert_eq!(toml.front_matter.access, Access::Tenant("acme".into()));
    }

    /// U+2028 and U+2029 are line breaks to some readers (YAML 1.1, JavaScript) and not to
    /// others: inside front matter they are refused.
    #[test]
    fn unicode_line_separators_in_front_matter_are_refused() {
        for src in [
            "---\ntitle: x\u{2028}acl: [group:a]\n---\ntext\n",
            "---\ntitle: x\u{2029}tenant: acme\n---\ntext\n",
            "---\ntitle: x\u{85}acl: [group:a]\n---\ntext\n",
            "+++\ntitle = \"x\"\u{2028}acl = [\"g\"]\n+++\ntext\n",
        ] {
            let reason = refused(src);
            assert!(reason.contains("line 2 holds a Unicode line or paragraph separator"), "{src:?}: {reason}");
        }
        // In the body they are text.
        assert!(parse_article("x", "---\ntitle: x\n---\na\u{2028}b\n", &ChunkOptions::default()).is_ok());
    }

    /// A second block right after the first is body text here but front matter to a reader
    /// that merges blocks: one naming an access key is refused.
    #[test]
    fn a_second_block_with_access_keys_is_refused() {
        for (src, key, line) in [
            ("---\ntitle: T\n---\n---\nacl: [group:a]\n---\ntext\n", "acl", 5),
            ("---\ntitle: T\n---\n\n---\ntitle: U\ntenant: acme\n---\ntext\n", "tenant", 7),
            ("+++\ntitle = \"T\"\n+++\n+++\n\"acl\" = [\"g\"]\n+++\n", "acl", 5),
            ("---\ntitle: T\n---\n---\nACL: [group:a]\n", "ACL", 5),
        ] {
            let reason = refused(src);
            assert!(
                reason.contains(&format!("line {line}: `{key}` is in a second front matter block")),
                "{src:?}: {reason}"
            );
        }
        // A thematic break and text after the block, or a second block without access keys,
        // stay body text.
        for src in ["---\ntitle: T\n---\n---\nSee: the docs\n", "---\ntitle: T\n---\ntext\n---\nacl: [g]\n---\n"] {
            assert!(parse_article("x", src, &ChunkOptions::default()).is_ok(), "{src:?}");
        }
    }

    /// YAML reads these values as null, booleans, anchors, aliases, tags or mappings, not as
    /// the token text they were taken for.
    #[test]
    fn yaml_values_that_are_not_strings_are_refused_in_access_keys() {
        for (src, what) in [
            ("---\nacl: null\n---\ntext\n", "not null"),
            ("---\nacl: ~\n---\ntext\n", "not null"),
            ("---\nacl: NULL\n---\ntext\n", "not null"),
            ("---\nacl: true\n---\ntext\n", "not a boolean"),
            ("---\nacl: False\n---\ntext\n", "not a boolean"),
            ("---\nacl: yes\n---\ntext\n", "not a boolean"),
            ("---\nacl: &x [group:a]\n---\ntext\n", "YAML anchor, alias or tag"),
            ("---\nacl: *x\n---\ntext\n", "YAML anchor, alias or tag"),
            ("---\nacl: !!str group:a\n---\ntext\n", "YAML anchor, alias or tag"),
            ("---\nacl: {group: a}\n---\ntext\n", "not an object"),
            ("---\nacl: [null]\n---\ntext\n", "a list holding null"),
            ("---\nacl: [group:a, ~]\n---\ntext\n", "a list holding null"),
            ("---\nacl: [{group: a}]\n---\ntext\n", "a list holding an object"),
            ("---\nacl:\n  - true\n---\ntext\n", "a list holding a boolean"),
            ("---\nacl:\n  - &a group:a\n---\ntext\n", "a list holding an unquoted YAML anchor"),
            ("---\ntenant: null\n---\ntext\n", "not null"),
            ("---\ntenant: ~\n---\ntext\n", "not null"),
            ("---\ntenant: false\n---\ntext\n", "not a boolean"),
            ("---\ntenant: *acme\n---\ntext\n", "YAML anchor, alias or tag"),
            ("---\ntenant: {name: acme}\n---\ntext\n", "not an object"),
        ] {
            let reason = refused(src);
            assert!(reason.contains("line 2") && reason.contains(what), "{src:?}: {reason}");
        }
        // Quoted, they are text; other keys keep their text.
        let a = parse("---\nacl: ['null', \"true\"]\ndraft: true\nnote: ~\n---\ntext\n");
        assert_eq!(a.front_matter.access, Access::Acl(vec!["null".into(), "true".into()]));
        assert_eq!((a.front_matter.extra["draft"].as_str(), a.front_matter.extra["note"].as_str()), ("true", "~"));
    }

    /// The auditor's token and tenant spellings, each once indexed, are refused in front
    /// matter as in JSONL.
    #[test]
    fn tokens_and_tenants_that_are_not_exact_are_refused() {
        for (src, what) in [
            ("---\nacl: [Tenant:acme]\n---\ntext\n", "starts like `tenant:`"),
            ("---\nacl: [TENANT:acme, group:a]\n---\ntext\n", "starts like `tenant:`"),
            ("---\nacl: [Owner:x]\n---\ntext\n", "starts like `owner:`"),
            ("---\nacl: [__BRAID:x]\n---\ntext\n", "starts like `__braid:`"),
            ("---\nacl: group:a, group:b\n---\ntext\n", "as a list"),
            ("---\nacl: \"group:a group:b\"\n---\ntext\n", "as a list"),
            ("---\ntenant: acme/x\n---\ntext\n", "one tenant name"),
            ("---\ntenant: tenant:tenant:acme\n---\ntext\n", "written once"),
            ("+++\nacl = [\"Tenant:acme\"]\n+++\ntext\n", "starts like `tenant:`"),
            ("+++\ntenant = \"acme/x\"\n+++\ntext\n", "one tenant name"),
            ("---\n\u{ff41}\u{ff43}\u{ff4c}: [group:a]\n---\ntext\n", "looks like the access key `acl`"),
            ("---\ntenantid: acme\n---\ntext\n", "looks like the access key `tenant`"),
            ("---\nreadacl: [group:a]\n---\ntext\n", "looks like the access key `acl`"),
        ] {
            let reason = refused(src);
            assert!(reason.contains("article \"billing/x\", line 2") && reason.contains(what), "{src:?}: {reason}");
        }
    }

    #[test]
    fn blank_acl_tokens_are_an_empty_acl() {
        // The index drops blank tokens, so `[' ']` would have been an empty ACL: public.
        for src in ["---\nacl: [' ', '']\n---\ntext\n", "---\nacl:\n  - ' '\n---\ntext\n"] {
            assert!(refused(src).contains("`acl` is empty"), "{src:?}");
        }
    }

    #[test]
    fn toml_front_matter_is_read() {
        let src = "+++\ntitle = \"Refunds\"\ntags = [\"billing\", \"refunds\"]\nacl = [\"group:support\"]\nupdated = 2026-09-14\ndraft = false\n+++\n# Refunds\n\nWithin 30 days.\n";
        let a = parse_article("billing/refunds", src, &ChunkOptions::default()).unwrap();
        let fm = &a.front_matter;
        assert_eq!(fm.title.as_deref(), Some("Refunds"));
        assert_eq!(fm.tags, ["billing", "refunds"]);
        assert_eq!(fm.access, Access::Acl(vec!["group:support".into()]));
        assert_eq!(fm.updated.as_deref(), Some("2026-09-14"));
        assert_eq!(fm.extra["draft"], "false");
        assert_eq!(a.sections[0].text, "Within 30 days.");
        assert_eq!(a.sections[0].lines, (10, 10));
        let records = a.records().unwrap();
        assert_eq!(records[0].acl.as_slice(), ["group:support"]);
        assert!(records[0].numbers.contains_key("updated"));
        let tenant = parse_article("x", "+++\ntenant = \"acme\"\n+++\ntext\n", &ChunkOptions::default()).unwrap();
        assert_eq!(tenant.records().unwrap()[0].acl.as_slice(), ["tenant:acme"]);
    }

    #[test]
    fn malformed_toml_front_matter_is_an_error() {
        for (src, what) in [
            ("+++\nacl = []\n+++\ntext\n", "`acl` is empty"),
            ("+++\nacl = [1]\n+++\ntext\n", "a list holding a number"),
            ("+++\ntenant = \"acme\"\nacl = [\"g\"]\n+++\ntext\n", "cannot be combined"),
            ("+++\ntenant = [\"acme\"]\n+++\ntext\n", "one tenant name"),
            ("+++\ntitle = \"x\"\n", "never closed"),
            ("+++\ntitle = \"x\"\ntitle = \"y\"\n+++\n", "line 3"),
            ("+++\nacl = [\"g\"\n+++\n", "TOML"),
            ("+++\ntitle = \"x\"\n[params]\nacl = [\"g\"]\n+++\n", "holds a table"),
            ("+++\nmeta = { acl = [\"g\"] }\n+++\n", "holds a table"),
        ] {
            let reason = refused(src);
            assert!(reason.contains("billing/x") && reason.contains(what), "{src:?}: {reason}");
        }
    }
}
