//! JSONL corpora (BEIR's `corpus.jsonl`, and Braid's own): one JSON object a line, with
//! `_id` (a string, or a number kept as its decimal text), `title` and `text` (strings or
//! `null`), `metadata` (an object or `null`) and the access keys `acl` or `tenant`, read by
//! [`crate::access`] exactly as front matter is. Other keys are ignored.
//!
//! A line is refused, with an error naming the file, the line, the `_id` and the key, when a
//! key Braid reads appears twice, when `metadata` holds an access key (`metadata.acl` is
//! never read as the record's ACL), or when its access keys are malformed or misspelt (see
//! [`crate::access`]). A line without access keys (every BEIR corpus) is left to the
//! index's access policy.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use braid_core::{Error, Record, Result};
use braid_lexical::SchemaConfig;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::access::{AccessReader, FieldValue};

/// One line of a JSONL corpus, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The record: id, title, body, ACL from the access keys, and the `metadata` entries the
    /// schema keeps (see [`read_documents`]).
    pub record: Record,
    /// The line's `metadata` object, whole (empty when absent or `null`), for fields a
    /// caller reads itself, such as supplied vectors.
    pub metadata: Map<String, Value>,
}

/// Streams the documents of a JSONL corpus, one line at a time.
///
/// Each record has the line's `_id`, `title` and `text`, the ACL its access keys give (none
/// without them: the index's policy decides), and the `metadata` entries whose names are
/// keyword fields of `schema` (strings, numbers or arrays of strings) or numeric fields
/// (numbers, or dates as `YYYY-MM-DD`/RFC 3339); other entries are ignored, and a schema
/// field holding `null` is absent. Blank lines are skipped, and a
/// byte order mark at the start of the file is ignored.
///
/// ```
/// use braid_ingest::beir::read_documents;
/// use braid_lexical::SchemaConfig;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("corpus.jsonl");
/// std::fs::write(&path, concat!(
///     r#"{"_id": "7", "title": "T", "text": "B", "acl": ["group:support"], "metadata": {"category": "billing"}}"#, "\n",
///     r#"{"_id": 8, "text": "C", "tenant": "acme"}"#, "\n",
///     r#"{"_id": "9", "text": "D", "metadata": {"acl": ["public"]}}"#, "\n",
/// ))?;
/// let docs: Vec<_> = read_documents(&path, &SchemaConfig::default()).collect();
/// let first = docs[0].as_ref().unwrap();
/// assert_eq!(first.record.acl.as_slice(), ["group:support"]);
/// assert_eq!(first.record.keywords["category"], ["billing"]);
/// assert_eq!(docs[1].as_ref().unwrap().record.acl.as_slice(), ["tenant:acme"]);
/// assert!(docs[2].as_ref().unwrap_err().to_string().contains("inside `metadata`"));
/// # Ok(()) }
/// ```
///
/// # Errors
/// Each item is an [`Error::InvalidRecord`] naming the file and line when the line is not a
/// JSON object of that shape, a schema field of its `metadata` holds a value of another kind
/// (`"updated": "yesterday"`, an object in a keyword field), its access keys are refused
/// ([`crate::AccessError`]) or the record fails [`Record::validate`] (an
/// [`Error::ReservedToken`] for a reserved ACL token); reading goes on with the next line. An [`Error::Io`] (a missing file included) is yielded
/// once and ends the stream.
pub fn read_documents(path: &Path, schema: &SchemaConfig) -> impl Iterator<Item = Result<Document>> + Send {
    let (reader, pending) = match File::open(path) {
        Ok(f) => (Some(BufReader::new(f)), None),
        Err(e) => (None, Some(Error::io(path, e))),
    };
    Lines { path: path.to_path_buf(), name: file_name(path), reader, pending, line: 0, buf: Vec::new() }.map({
        let schema = schema.clone();
        move |item| item.and_then(|(name, line, bytes)| document(&name, Some(line), &bytes, &schema))
    })
}

/// The file's name for messages: its last component.
fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// The non-blank lines of a file with their 1-based numbers.
struct Lines {
    path: PathBuf,
    name: String,
    reader: Option<BufReader<File>>,
    pending: Option<Error>,
    line: usize,
    buf: Vec<u8>,
}

impl Iterator for Lines {
    type Item = Result<(String, usize, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(e) = self.pending.take() {
            return Some(Err(e));
        }
        loop {
            let reader = self.reader.as_mut()?;
            self.buf.clear();
            match reader.read_until(b'\n', &mut self.buf) {
                Ok(0) => {
                    self.reader = None;
                    return None;
                }
                Ok(_) => {
                    self.line += 1;
                    let bytes = match self.line {
                        1 => self.buf.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&self.buf[..]),
                        _ => &self.buf[..],
                    };
                    if !bytes.iter().all(u8::is_ascii_whitespace) {
                        return Some(Ok((self.name.clone(), self.line, bytes.to_vec())));
                    }
                }
                Err(e) => {
                    self.reader = None;
                    return Some(Err(Error::io(&self.path, e)));
                }
            }
        }
    }
}

/// The top-level keys of a JSON object in file order, duplicates kept (a `Map` keeps one).
struct Fields(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct FieldsVisitor;
        impl<'de> Visitor<'de> for FieldsVisitor {
            type Value = Fields;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Fields, A::Error> {
                let mut fields = Vec::with_capacity(map.size_hint().unwrap_or(4));
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    fields.push(entry);
                }
                Ok(Fields(fields))
            }
        }
        deserializer.deserialize_map(FieldsVisitor)
    }
}

/// The document of line `line` of file `name`.
/// Reads one document given as a JSON object, as [`read_documents`] reads a line: `_id`,
/// `title`, `text`, the access keys `acl` or `tenant`, and the `metadata` entries `schema`
/// keeps. Errors name the document `name` (a server says `records[3]`).
///
/// # Errors
/// [`Error::InvalidRecord`] for malformed JSON, a missing `_id`, a value of the wrong type (a
/// schema field of `metadata` included), or access keys that would fail open
/// ([`crate::access`]); [`Error::ReservedToken`] as [`Record::validate`].
pub fn parse_document(name: &str, bytes: &[u8], schema: &SchemaConfig) -> Result<Document> {
    document(name, None, bytes, schema)
}

fn document(name: &str, line: Option<usize>, bytes: &[u8], schema: &SchemaConfig) -> Result<Document> {
    let located = |named: &str| match line {
        Some(line) => format!("{named}, line {line}"),
        None => named.to_string(),
    };
    let at = located(name);
    let Fields(fields) = serde_json::from_slice::<Fields>(bytes).map_err(|e| {
        // serde_json appends " at line 1 column N"; the line is ours to give.
        let mut reason = e.to_string();
        if let Some(cut) = reason.rfind(" at line ") {
            reason.truncate(cut);
        }
        Error::InvalidRecord { reason: format!("{at}: {reason} (column {})", e.column()) }
    })?;
    let bad = |reason: String| Error::InvalidRecord { reason: format!("{at}: {reason}") };

    let mut id = None;
    for (key, value) in &fields {
        if key == "_id" {
            if id.is_some() {
                return Err(bad("`_id` is given twice".into()));
            }
            id = Some(match value {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return Err(bad("`_id` must be a string or a number".into())),
            });
        }
    }
    let id = id.ok_or_else(|| bad("missing `_id`".into()))?;
    // From here on, messages name the document by its id too.
    let named = format!("{name} (_id {id:?})");
    let at = located(&named);
    let bad = |reason: String| Error::InvalidRecord { reason: format!("{at}: {reason}") };
    let mut access = AccessReader::new(&named);
    let (mut title, mut text, mut metadata) = (None, None, None);
    for (key, value) in fields {
        if access.key(&key, line, || FieldValue::from_json(&value))? {
            continue;
        }
        let slot = match key.as_str() {
            "title" => &mut title,
            "text" => &mut text,
            "metadata" => {
                if metadata.is_some() {
                    return Err(bad("`metadata` is given twice".into()));
                }
                metadata = Some(match value {
                    Value::Object(map) => map,
                    Value::Null => Map::new(),
                    _ => return Err(bad("`metadata` must be an object".into())),
                });
                continue;
            }
            _ => continue,
        };
        if slot.is_some() {
            return Err(bad(format!("`{key}` is given twice")));
        }
        *slot = Some(match value {
            Value::String(s) => s,
            Value::Null => String::new(),
            _ => return Err(bad(format!("`{key}` must be a string"))),
        });
    }
    let metadata = metadata.unwrap_or_default();
    for key in metadata.keys() {
        access.nested_key("metadata", key, line)?;
    }
    let access = access.finish()?;

    let record = Record::new(id).title(title.unwrap_or_default()).body(text.unwrap_or_default()).acl(access.tokens());
    let record = with_metadata(record, &metadata, schema).map_err(bad)?;
    record.validate().map_err(|e| match e {
        Error::InvalidRecord { reason } => bad(reason),
        other => other,
    })?;
    Ok(Document { record, metadata })
}

/// `record` with the `metadata` entries `schema` keeps: keyword fields (strings, numbers, or
/// arrays of strings) and numeric fields (numbers, or dates as `YYYY-MM-DD`/RFC 3339). A
/// `null` entry is absent. Any other value of a schema field is refused: a field dropped in
/// silence would be a filter that never matches, or an `expires` that never comes.
///
/// # Errors
/// The problem, naming the key, for the caller to wrap with the document's name.
fn with_metadata(
    mut record: Record,
    metadata: &Map<String, Value>,
    schema: &SchemaConfig,
) -> std::result::Result<Record, String> {
    for (key, value) in metadata {
        if schema.keyword_fields.contains(key) {
            let wrong = |found: &str| {
                format!(
                    "`metadata.{key}` is a keyword field, so it takes a string, a number or a list of strings, not \
                     {found}; fix it or remove it"
                )
            };
            match value {
                Value::Null => {}
                Value::String(s) => record = record.keyword(key, s.as_str()),
                Value::Array(items) => {
                    for item in items {
                        match item {
                            Value::String(s) => record = record.keyword(key, s.as_str()),
                            other => return Err(wrong(&format!("a list holding {}", json_kind(other)))),
                        }
                    }
                }
                Value::Number(n) => record = record.keyword(key, n.to_string()),
                other => return Err(wrong(json_kind(other))),
            }
        } else if schema.numeric_fields.contains(key) {
            let wrong = |found: &str| {
                format!(
                    "`metadata.{key}` is a numeric field, so it takes a number or a date (`YYYY-MM-DD` or RFC 3339), \
                     not {found}; fix it or remove it"
                )
            };
            match value {
                Value::Null => {}
                Value::Number(n) => match n.as_f64().filter(|v| v.is_finite()) {
                    Some(v) => record = record.number(key, v),
                    None => return Err(wrong("a number out of range")),
                },
                Value::String(s) => match braid_core::parse_date(s) {
                    Ok(secs) => record = record.number(key, secs as f64),
                    Err(_) => return Err(wrong("a string that is not a date")),
                },
                other => return Err(wrong(json_kind(other))),
            }
        }
    }
    Ok(record)
}

/// What a JSON value is, in words, for an error.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// The results of reading `lines` as a corpus file.
    fn read(lines: &[&str]) -> Vec<Result<Document>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("corpus.jsonl");
        let mut f = File::create(&path).unwrap();
        for line in lines {
            writeln!(f, "{line}").unwrap();
        }
        drop(f);
        read_documents(&path, &SchemaConfig::default()).collect()
    }

    fn one(line: &str) -> Result<Document> {
        read(&[line]).pop().expect("one document")
    }

    fn acl(line: &str) -> Vec<String> {
        one(line).unwrap_or_else(|e| panic!("{line}: {e}")).record.acl.as_slice().to_vec()
    }

    /// The message of the error `line` gives.
    fn refused(line: &str) -> String {
        match one(line) {
            Err(Error::InvalidRecord { reason }) => reason,
            other => panic!("{line} gave {other:?}"),
        }
    }

    #[test]
    fn beir_lines_without_access_keys_keep_the_policy() {
        let docs = read(&[
            r#"{"_id": "a", "title": "T", "text": "B", "metadata": {"url": "http://x"}}"#,
            r#"{"_id": 42, "title": null, "text": "C", "metadata": null}"#,
            "   ",
            r#"{"_id": "c", "text": "D", "unknown": [1, 2]}"#,
        ]);
        assert_eq!(docs.len(), 3);
        for doc in &docs {
            assert!(doc.as_ref().unwrap().record.acl.as_slice().is_empty());
        }
        let second = &docs[1].as_ref().unwrap().record;
        assert_eq!((second.id(), second.title.as_str()), ("42", ""));
        assert_eq!(docs[0].as_ref().unwrap().metadata["url"], "http://x");
    }

    #[test]
    fn acl_and_tenant_are_read_as_in_front_matter() {
        assert_eq!(acl(r#"{"_id": "a", "acl": ["group:a", " user:1 ", ""]}"#), ["group:a", "user:1"]);
        assert_eq!(acl(r#"{"_id": "a", "acl": "group:a"}"#), ["group:a"]);
        assert_eq!(acl(r#"{"_id": "a", "tenant": "acme"}"#), ["tenant:acme"]);
        assert_eq!(acl(r#"{"_id": "a", "tenant": "tenant:acme"}"#), ["tenant:acme"]);
    }

    /// Each of the attacker's lines, once public, is refused naming the file, line, id and key.
    #[test]
    fn access_that_would_fail_open_is_refused() {
        for (line, key, what) in [
            (r#"{"_id": "d1", "text": "x", "acl": []}"#, "acl", "is empty"),
            (r#"{"_id": "d1", "text": "x", "acl": null}"#, "acl", "is empty"),
            (r#"{"_id": "d1", "text": "x", "acl": ["", " "]}"#, "acl", "is empty"),
            (r#"{"_id": "d1", "text": "x", "acl": 7}"#, "acl", "not a number"),
            (r#"{"_id": "d1", "text": "x", "acl": {"group": "a"}}"#, "acl", "not an object"),
            (r#"{"_id": "d1", "text": "x", "acl": ["group:a", 7]}"#, "acl", "a list holding a number"),
            (r#"{"_id": "d1", "text": "x", "ACL": ["group:a"]}"#, "ACL", "looks like the access key `acl`"),
            (r#"{"_id": "d1", "text": "x", "Tenant": "acme"}"#, "Tenant", "looks like the access key `tenant`"),
            (r#"{"_id": "d1", "text": "x", "acls": ["group:a"]}"#, "acls", "looks like"),
            (r#"{"_id": "d1", "text": "x", "tennant": "acme"}"#, "tennant", "looks like"),
            (r#"{"_id": "d1", "text": "x", "tenant": ""}"#, "tenant", "is empty"),
            (r#"{"_id": "d1", "text": "x", "tenant": null}"#, "tenant", "is empty"),
            (r#"{"_id": "d1", "text": "x", "tenant": ["acme"]}"#, "tenant", "one tenant name"),
            (r#"{"_id": "d1", "text": "x", "tenant": "a b"}"#, "tenant", "one tenant name"),
            (r#"{"_id": "d1", "text": "x", "tenant": "acme", "acl": ["g"]}"#, "tenant", "cannot be combined"),
            (r#"{"_id": "d1", "text": "x", "acl": ["g"], "acl": ["public"]}"#, "acl", "given twice"),
            (r#"{"_id": "d1", "text": "x", "metadata": {"acl": ["g"]}}"#, "acl", "inside `metadata`"),
            (r#"{"_id": "d1", "text": "x", "metadata": {"tenant": "acme"}}"#, "tenant", "inside `metadata`"),
            (r#"{"_id": "d1", "text": "x", "metadata": {"ACL": ["g"]}}"#, "ACL", "inside `metadata`"),
            (
                r#"{"_id": "d1", "text": "x", "\uff41\uff43\uff4c": ["group:a"]}"#,
                "\u{ff41}\u{ff43}\u{ff4c}",
                "looks like",
            ),
            (r#"{"_id": "d1", "text": "x", "a\u200bc\u200bl": ["group:a"]}"#, "a\u{200b}c\u{200b}l", "looks like"),
            (r#"{"_id": "d1", "text": "x", "tenantid": "acme"}"#, "tenantid", "looks like the access key `tenant`"),
            (r#"{"_id": "d1", "text": "x", "tenantname": "acme"}"#, "tenantname", "looks like"),
            (r#"{"_id": "d1", "text": "x", "aclgroups": ["g"]}"#, "aclgroups", "looks like the access key `acl`"),
            (r#"{"_id": "d1", "text": "x", "readacl": ["g"]}"#, "readacl", "looks like"),
            (r#"{"_id": "d1", "text": "x", "metadata": {"tenantId": "acme"}}"#, "tenantId", "inside `metadata`"),
            (r#"{"_id": "d1", "text": "x", "acl": ["Tenant:acme"]}"#, "acl", "starts like `tenant:`"),
            (r#"{"_id": "d1", "text": "x", "acl": ["group:a", "TENANT:acme"]}"#, "acl", "starts like `tenant:`"),
            (r#"{"_id": "d1", "text": "x", "acl": ["Owner:x"]}"#, "acl", "starts like `owner:`"),
            (r#"{"_id": "d1", "text": "x", "acl": ["__BRAID:x"]}"#, "acl", "starts like `__braid:`"),
            (r#"{"_id": "d1", "text": "x", "acl": "group:a, group:b"}"#, "acl", "as a list"),
            (r#"{"_id": "d1", "text": "x", "acl": ["tenant:acme/x"]}"#, "acl", "`tenant:` token"),
            (r#"{"_id": "d1", "text": "x", "tenant": "acme/x"}"#, "tenant", "one tenant name"),
            (r#"{"_id": "d1", "text": "x", "tenant": "tenant:tenant:acme"}"#, "tenant", "written once"),
            (r#"{"_id": "d1", "text": "x", "tenant": "Tenant:acme"}"#, "tenant", "starts like `tenant:`"),
        ] {
            let reason = refused(line);
            assert!(
                reason.contains("corpus.jsonl (_id \"d1\"), line 1") && reason.contains(&format!("`{key}`")),
                "{line}: {reason}"
            );
            assert!(reason.contains(what), "{line}: {reason}");
        }
    }

    #[test]
    fn malformed_lines_are_errors_and_reading_goes_on() {
        let docs = read(&[
            "{not json",
            r#"["an", "array"]"#,
            r#"{"title": "no id"}"#,
            r#"{"_id": "a", "_id": "b"}"#,
            r#"{"_id": "a", "title": 3}"#,
            r#"{"_id": "a", "metadata": [1]}"#,
            r#"{"_id": "a", "text": "x", "text": "y"}"#,
            r#"{"_id": "a", "acl": ["__braid:no-acl"]}"#,
            r#"{"_id": "ok"}"#,
        ]);
        assert_eq!(docs.len(), 9);
        for (i, doc) in docs[..7].iter().enumerate() {
            match doc {
                Err(Error::InvalidRecord { reason }) => {
                    assert!(reason.contains("corpus.jsonl") && reason.contains(&format!("line {}:", i + 1)), "{reason}")
                }
                other => panic!("line {}: {other:?}", i + 1),
            }
        }
        assert!(matches!(&docs[7], Err(Error::ReservedToken { .. })), "{:?}", docs[7]);
        assert_eq!(docs[8].as_ref().unwrap().record.id(), "ok");
    }

    #[test]
    fn metadata_fields_the_schema_keeps() {
        let doc = one(r#"{"_id": "7", "metadata": {"category": "billing", "tags": ["a", "b"], "url": "x", "updated": "2026-01-02", "priority": 3, "kind": 7, "expires": null, "lang": null, "other": {"x": true}}}"#)
            .unwrap();
        assert_eq!(doc.record.keywords["category"], ["billing"]);
        assert_eq!(doc.record.keywords["tags"], ["a", "b"]);
        assert_eq!(doc.record.keywords["kind"], ["7"]);
        assert!(!doc.record.keywords.contains_key("url"));
        assert!(!doc.record.keywords.contains_key("lang"), "null is absent");
        assert!(doc.record.numbers.contains_key("updated"));
        assert_eq!(doc.record.numbers["priority"], 3.0);
        assert!(!doc.record.numbers.contains_key("expires"), "null is absent");
    }

    /// A schema field whose value does not parse was dropped in silence: a mistyped `expires`
    /// never expired. Each is refused, naming the document and the key.
    #[test]
    fn schema_fields_that_do_not_parse_are_refused() {
        for (metadata, key, what) in [
            (r#"{"updated": "yesterday"}"#, "updated", "not a string that is not a date"),
            (r#"{"expires": "2026-13-45"}"#, "expires", "not a string that is not a date"),
            (r#"{"expires": true}"#, "expires", "not a boolean"),
            (r#"{"expires": {"at": 5}}"#, "expires", "not an object"),
            (r#"{"priority": [1]}"#, "priority", "not a list"),
            (r#"{"priority": "high"}"#, "priority", "a number or a date"),
            (r#"{"category": {"a": "b"}}"#, "category", "not an object"),
            (r#"{"category": false}"#, "category", "not a boolean"),
            (r#"{"tags": ["a", 1]}"#, "tags", "not a list holding a number"),
            (r#"{"tags": ["a", null]}"#, "tags", "not a list holding null"),
            (r#"{"tags": [["a"]]}"#, "tags", "not a list holding a list"),
        ] {
            let line = format!(r#"{{"_id": "d1", "text": "x", "metadata": {metadata}}}"#);
            let reason = refused(&line);
            assert!(
                reason.contains("corpus.jsonl (_id \"d1\"), line 1") && reason.contains(&format!("`metadata.{key}`")),
                "{line}: {reason}"
            );
            assert!(reason.contains(what), "{line}: {reason}");
        }
        // Fields outside the schema are the caller's, whatever they hold.
        assert!(one(r#"{"_id": "d1", "metadata": {"url": {"x": 1}, "score": "high"}}"#).is_ok());
    }

    #[test]
    fn a_missing_file_is_one_io_error() {
        let items: Vec<_> = read_documents(Path::new("/nonexistent/corpus.jsonl"), &SchemaConfig::default()).collect();
        assert!(matches!(items.as_slice(), [Err(Error::Io { .. })]));
    }

    #[test]
    fn a_byte_order_mark_is_ignored() {
        assert_eq!(one("\u{feff}{\"_id\": \"a\", \"acl\": [\"g\"]}").unwrap().record.acl.as_slice(), ["g"]);
    }
}
