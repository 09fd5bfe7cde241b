//! MCP resources: every record the caller may see, as `braid://records/{id}` (the id
//! percent-encoded), listed a page at a time by `resources/list` (a keyset cursor: the last id
//! of the page, encoded) and read whole by `resources/read`. A record the caller may not see
//! and one that does not exist answer alike.

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::{json, Value};

use rmcp::ErrorData;

use super::api::Engine;
use braid::Principal;

/// Where every resource's URI starts.
pub const URI_PREFIX: &str = "braid://records/";

/// Resources per `resources/list` page.
pub const PAGE: usize = 100;

/// What is left as it is in an id inside a URI: RFC 3986's unreserved characters.
const ID: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// The URI of record `id`.
pub fn uri(id: &str) -> String {
    format!("{URI_PREFIX}{}", utf8_percent_encode(id, ID))
}

/// The record id a URI names, if it is one of ours.
fn id_of(uri: &str) -> Option<String> {
    let encoded = uri.strip_prefix(URI_PREFIX)?;
    percent_decode_str(encoded).decode_utf8().ok().map(|id| id.into_owned()).filter(|id| !id.is_empty())
}

/// `resources/templates/list`'s answer.
pub fn templates() -> Value {
    json!({ "resourceTemplates": [{
        "uriTemplate": format!("{URI_PREFIX}{{id}}"),
        "name": "record",
        "title": "A record (section) by id",
        "description": "The text of one record you may see, by the id search, outline or resources/list gave (percent-encoded).",
        "mimeType": "text/markdown"
    }]})
}

/// `resources/list`: a page of the records `principal` may see.
///
/// # Errors
/// Invalid params for a malformed cursor or a store failure.
pub fn list(engine: &Engine, principal: &Principal, cursor: Option<&str>) -> Result<Value, ErrorData> {
    let after = match cursor {
        None => None,
        Some(c) => Some(id_of(&format!("{URI_PREFIX}{c}")).ok_or(ErrorData::invalid_params("bad cursor", None))?),
    };
    let (records, next) = engine
        .records_after(principal, after.as_deref(), PAGE)
        .map_err(|f| ErrorData::invalid_params(f.message(), None))?;
    let resources: Vec<Value> = records
        .iter()
        .map(|r| {
            let mut name = r.title.clone();
            if !r.section.is_empty() {
                name = format!("{name} › {}", r.section.join(" › "));
            }
            json!({ "uri": uri(&r.id), "name": r.id, "title": name, "mimeType": "text/markdown" })
        })
        .collect();
    let mut out = json!({ "resources": resources });
    if let Some(next) = next {
        out["nextCursor"] = json!(utf8_percent_encode(&next, ID).to_string());
    }
    Ok(out)
}

/// `resources/read`: the record a URI names, when `principal` may see it.
///
/// # Errors
/// Resource not found (-32002; rmcp sends Invalid params in 2026-07-28) alike for a missing
/// record and a hidden one.
pub fn read(engine: &Engine, principal: &Principal, uri: &str) -> Result<Value, ErrorData> {
    let not_found = || ErrorData::resource_not_found(format!("resource not found: {uri}"), None);
    let id = id_of(uri).ok_or_else(not_found)?;
    let record =
        engine.read(principal, &id).map_err(|f| ErrorData::invalid_params(f.message(), None))?.ok_or_else(not_found)?;
    Ok(json!({ "contents": [{ "uri": uri, "mimeType": "text/markdown", "text": record.body }] }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_uris() {
        for id in ["faq", "billing/refunds#annual", "tenant:acme/memory/ab/cd", "ünï code & spaces"] {
            let u = uri(id);
            assert!(u[URI_PREFIX.len()..].bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~%".contains(&b)), "{u}");
            assert_eq!(id_of(&u).as_deref(), Some(id));
        }
        assert_eq!(id_of("file:///etc/passwd"), None);
        assert_eq!(id_of(URI_PREFIX), None);
    }
}
