//! BEIR corpora: `{"_id", "title", "text", "acl"?, "metadata"?}` per line.

use braid_core::Record;
use braid_eval::CorpusDoc;
use braid_lexical::SchemaConfig;
use serde_json::Value;

/// The record for a BEIR document. `acl` becomes the record's ACL; `metadata` entries whose
/// names are keyword fields of `schema` (strings or arrays of strings) or numeric fields
/// (numbers, or dates as `YYYY-MM-DD`/RFC 3339) are kept; anything else is ignored.
///
/// ```
/// use braid_ingest::beir::record_from;
/// use braid_lexical::SchemaConfig;
/// let metadata = serde_json::json!({"category": "billing", "url": "ignored", "updated": "2026-01-02"});
/// let doc = braid_eval::CorpusDoc {
///     id: "7".into(), title: "T".into(), text: "B".into(), acl: vec!["group:support".into()],
///     metadata: metadata.as_object().unwrap().clone(),
/// };
/// let record = record_from(doc, &SchemaConfig::default());
/// assert_eq!(record.keywords["category"], ["billing"]);
/// assert_eq!(record.acl.as_slice(), ["group:support"]);
/// assert!(record.numbers.contains_key("updated"));
/// ```
pub fn record_from(doc: CorpusDoc, schema: &SchemaConfig) -> Record {
    let mut record = Record::new(doc.id).title(doc.title).body(doc.text).acl(doc.acl);
    for (key, value) in doc.metadata {
        if schema.keyword_fields.contains(&key) {
            match value {
                Value::String(s) => record = record.keyword(&key, s),
                Value::Array(items) => {
                    for item in items {
                        if let Value::String(s) = item {
                            record = record.keyword(&key, s);
                        }
                    }
                }
                Value::Number(n) => record = record.keyword(&key, n.to_string()),
                _ => {}
            }
        } else if schema.numeric_fields.contains(&key) {
            match value {
                Value::Number(n) => {
                    if let Some(v) = n.as_f64() {
                        record = record.number(&key, v);
                    }
                }
                Value::String(s) => {
                    if let Ok(secs) = braid_core::parse_date(&s) {
                        record = record.number(&key, secs as f64);
                    }
                }
                _ => {}
            }
        }
    }
    record
}
