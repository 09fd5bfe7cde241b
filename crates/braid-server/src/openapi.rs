//! The OpenAPI 3.1 description of `braid serve`, served at `/v1/openapi.json`, built from the
//! same schemas as the MCP tools.

use serde_json::{json, Value};

use super::mcp;
use super::schema;

/// The document, for a server whose searches accept `k` up to `max_k`.
pub fn document(max_k: usize) -> Value {
    let defs = "#/components/schemas";
    let error = |description: &str| json!({ "description": description, "content": { "application/json": { "schema": { "$ref": format!("{defs}/Error") } } } });
    let throttled = json!({
        "description": "The token's rate limit is spent; retry after the number of seconds in Retry-After.",
        "headers": { "Retry-After": { "schema": { "type": "integer" } } },
        "content": { "application/json": { "schema": { "$ref": format!("{defs}/Error") } } }
    });
    let guarded = |ok: Value| {
        json!({
            "200": ok,
            "401": error("No bearer token, or one the server does not know (WWW-Authenticate: Bearer)."),
            "403": error("The request carries an Origin header the server does not accept (allowed_origins; by default, pages on this machine when bound to loopback)."),
            "413": error("The body is larger than limits.max_body_bytes."),
            "429": throttled,
            "503": error("No answer within limits.timeout_ms (Retry-After: 1).")
        })
    };
    let mut search_responses = guarded(json!({
        "description": "Ranked hits with their sources (id, parent, section, lines) and the steps (stats.micros).",
        "content": { "application/json": { "schema": { "$ref": format!("{defs}/SearchResponse") } } }
    }));
    search_responses["400"] = error("Invalid parameters (an unknown field such as `principal`, k above the maximum, an unknown filter field, semantic mode without a model).");
    search_responses["415"] = error("The body is not Content-Type: application/json.");
    let mut mcp_responses = guarded(json!({
        "description": "The JSON-RPC response (an array for a 2025-03-26 batch).",
        "content": { "application/json": { "schema": { "$ref": format!("{defs}/JsonRpc") } } }
    }));
    mcp_responses["202"] = json!({ "description": "The message was a notification or a response: no body." });
    mcp_responses["400"] = json!({
        "description": "Not JSON (-32700), not a JSON-RPC message (-32600), a batch outside 2025-03-26, or an unsupported MCP-Protocol-Version.",
        "content": { "application/json": { "schema": { "$ref": format!("{defs}/JsonRpc") } } }
    });
    // Answered by the MCP SDK (rmcp) in plain text.
    mcp_responses["406"] =
        json!({ "description": "The Accept header does not list both application/json and text/event-stream." });
    mcp_responses["415"] = json!({ "description": "The body is not Content-Type: application/json." });
    let write_responses = || {
        let mut responses = guarded(json!({
            "description": "Written and committed: the commit now served (a search after this answer sees the write) and the ids as stored, in the caller's namespace (tenant:<name>/<id>). Whether an id held a record before is never said.",
            "content": { "application/json": { "schema": { "$ref": format!("{defs}/Written") } } }
        }));
        responses["400"] = error("A malformed record, an id outside the caller's namespace (decided by its shape alone), a tenant other than the caller's, an ACL token the caller does not hold, or a batch outside 1–1000. Nothing is committed.");
        responses["403"] = error("The token may not write (write = true, or the OAuth write scope), or has no single tenant; or a refused Origin.");
        responses["503"] =
            error("No answer within limits.timeout_ms, or another process holds the index's writer (Retry-After: 1).");
        responses
    };
    let mut upsert_responses = write_responses();
    upsert_responses["415"] = error("The body is not Content-Type: application/json.");
    let mut delete_many_responses = write_responses();
    delete_many_responses["415"] = error("The body is not Content-Type: application/json.");
    let memory_responses = |ok: &str, schema: &str, not_found: bool| {
        let mut responses = guarded(json!({
            "description": ok,
            "content": { "application/json": { "schema": { "$ref": format!("{defs}/{schema}") } } }
        }));
        responses["400"] = error("Invalid parameters (an unknown field, a text, kind, importance, time to live or k out of bounds), or an index created without the memory fields.");
        responses["403"] = error("The token may not write (write = true, or the OAuth write scope; recall needs no write right), or has no memory scope (exactly one tenant and, for OAuth, a user claim); or a refused Origin.");
        responses["415"] = error("The body is not Content-Type: application/json.");
        responses["503"] =
            error("No answer within limits.timeout_ms, or another process holds the index's writer (Retry-After: 1).");
        if not_found {
            responses["404"] = error("No memory with this id in your scope: the same answer for an id that never existed, expired, or is another caller's.");
        }
        responses
    };
    let written = "Written and committed: the memory as stored (a reinforced duplicate keeps its id), the expired memories of the scope this write purged, and the commit now served.";
    let not_allowed = json!({
        "summary": "Not offered: the server is stateless and streams nothing",
        "security": [],
        "responses": { "405": { "description": "Method not allowed (Allow: POST); clients fall back to plain POST." } }
    });
    let versions: Vec<String> = mcp::SUPPORTED.map(|v| v.to_string()).to_vec();
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Braid",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Hybrid retrieval (BM25, fuzzy and semantic recall, fused) with permissions applied first. \
                            Every route but /v1/health and /v1/openapi.json needs a bearer token; the token alone \
                            decides the principal searches run as."
        },
        "security": [{ "bearer": [] }],
        "paths": {
            "/v1/search": {
                "post": {
                    "summary": "Search as the token's principal",
                    "requestBody": {
                        "required": true,
                        "content": { "application/json": { "schema": { "$ref": format!("{defs}/SearchParams") } } }
                    },
                    "responses": search_responses
                }
            },
            "/v1/stats": {
                "get": {
                    "summary": "The caller's view: records it may see, its request counts; the index's legs",
                    "responses": guarded(json!({
                        "description": "Stats.",
                        "content": { "application/json": { "schema": { "$ref": format!("{defs}/Stats") } } }
                    }))
                }
            },
            "/v1/records": {
                "post": {
                    "summary": "Upsert records in the caller's tenant namespace, in one commit",
                    "description": "Each record is a JSON object as `braid index` reads a JSONL line (`_id`, `title`, `text`, `acl` or `tenant`, `metadata`) with an optional `vector`. A short `_id` is stored as tenant:<name>/<_id>. The record gets the caller's tenant token; `acl` may only name tokens the caller holds. Each record costs one rate-limit token.",
                    "requestBody": { "required": true, "content": { "application/json": { "schema": {
                        "type": "object", "additionalProperties": false, "required": ["records"],
                        "properties": { "records": { "type": "array", "minItems": 1, "maxItems": 1000, "items": { "$ref": format!("{defs}/RecordIn") } } }
                    } } } },
                    "responses": upsert_responses
                }
            },
            "/v1/records/delete": {
                "post": {
                    "summary": "Delete records of the caller's namespace by id, or those a filter admits (at most 1,000 a request), in one commit (idempotent)",
                    "requestBody": { "required": true, "content": { "application/json": { "schema": {
                        "type": "object", "additionalProperties": false,
                        "properties": {
                            "ids": { "type": "array", "minItems": 1, "maxItems": 1000, "items": { "type": "string" } },
                            "filter": { "$ref": "#/components/schemas/Filter" }
                        },
                        "oneOf": [{ "required": ["ids"] }, { "required": ["filter"] }]
                    } } } },
                    "responses": delete_many_responses
                }
            },
            "/v1/records/{id}": {
                "delete": {
                    "summary": "Delete one record of the caller's namespace (idempotent)",
                    "parameters": [{ "name": "id", "in": "path", "required": true, "schema": { "type": "string" },
                                     "description": "A short id, or the full tenant:<name>/<id>, percent-encoded." }],
                    "responses": write_responses()
                }
            },
            "/v1/memories": {
                "post": {
                    "summary": "Remember a note in the caller's own memory scope (or reinforce its duplicate)",
                    "description": "A memory is visible to its owner in its tenant alone (owner tokens are conjunctive). The same normalised text, or with an embedding model cosine >= 0.95, reinforces the existing memory: importance max(old, new) + 1, created = now, the later expiry. Expired memories of the scope are purged by this write.",
                    "requestBody": { "required": true, "content": { "application/json": { "schema": { "$ref": format!("{defs}/Note") } } } },
                    "responses": memory_responses(written, "MemoryWritten", false)
                }
            },
            "/v1/memories/recall": {
                "post": {
                    "summary": "Recall the caller's live memories: relevance x recency x importance",
                    "requestBody": { "required": true, "content": { "application/json": { "schema": { "$ref": format!("{defs}/Cue") } } } },
                    "responses": memory_responses("The memories, best first. Expired ones are never returned.", "Recalled", false)
                }
            },
            "/v1/memories/forget": {
                "post": {
                    "summary": "Forget one memory by id, or every memory of a kind, in the caller's scope",
                    "requestBody": { "required": true, "content": { "application/json": { "schema": { "$ref": format!("{defs}/Forget") } } } },
                    "responses": memory_responses("Forgotten and committed: the ids deleted.", "Forgotten", true)
                }
            },
            "/v1/memories/{id}": {
                "delete": {
                    "summary": "Forget one memory of the caller's scope",
                    "parameters": [{ "name": "id", "in": "path", "required": true, "schema": { "type": "string" },
                                     "description": "The id remember or recall returned, percent-encoded." }],
                    "responses": memory_responses("Forgotten and committed.", "Forgotten", true)
                },
                "put": {
                    "summary": "Supersede one memory of the caller's scope with a new note (the old one is deleted)",
                    "parameters": [{ "name": "id", "in": "path", "required": true, "schema": { "type": "string" },
                                     "description": "The id remember or recall returned, percent-encoded." }],
                    "requestBody": { "required": true, "content": { "application/json": { "schema": { "$ref": format!("{defs}/Note") } } } },
                    "responses": memory_responses(written, "MemoryWritten", true)
                }
            },
            "/v1/health": {
                "get": {
                    "summary": "Liveness, and whether the served index's files are intact",
                    "security": [],
                    "responses": {
                        "200": { "description": "Serving.", "content": { "application/json": { "schema": {
                            "type": "object",
                            "properties": {
                                "status": { "const": "ok" },
                                "verification": { "enum": ["running", "verified"],
                                                  "description": "Whether every file of the served commit has been read against its checksum yet." }
                            },
                            "required": ["status"]
                        } } } },
                        "503": { "description": "A file of the served commit failed its checksum: every search fails (the file is in the server's log).",
                                 "content": { "application/json": { "schema": {
                            "type": "object",
                            "properties": { "status": { "const": "damaged" }, "verification": { "const": "damaged" } },
                            "required": ["status"]
                        } } } }
                    }
                }
            },
            "/v1/openapi.json": {
                "get": { "summary": "This document", "security": [], "responses": { "200": { "description": "OpenAPI 3.1." } } }
            },
            "/mcp": {
                "post": {
                    "summary": "Model Context Protocol, Streamable HTTP, stateless",
                    "description": format!(
                        "JSON-RPC 2.0 (protocol versions {}): initialize, ping, server/discover, tools/list, tools/call \
                         with the tools `search`, `read_section`, `outline`, `remember`, `recall`, `forget` and `update`, \
                         resources/list, resources/read, resources/templates/list. Send Accept: application/json, \
                         text/event-stream (both, as MCP requires; answers are application/json) and, after initialize, \
                         MCP-Protocol-Version; without it 2025-03-26 is assumed. No session id is issued.",
                        versions.join(", ")
                    ),
                    "parameters": [{
                        "name": "MCP-Protocol-Version", "in": "header", "required": false,
                        "schema": { "type": "string", "enum": versions }
                    }],
                    "requestBody": {
                        "required": true,
                        "content": { "application/json": { "schema": { "$ref": format!("{defs}/JsonRpc") } } }
                    },
                    "responses": mcp_responses
                },
                "get": not_allowed.clone(),
                "delete": not_allowed
            }
        },
        "components": {
            "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" } },
            "schemas": {
                "SearchParams": schema::search_params(defs, max_k),
                "Filter": schema::filter(defs),
                "SearchResponse": schema::search_response(),
                "Error": schema::error(),
                "Stats": {
                    "type": "object",
                    "properties": {
                        "caller": { "type": "object", "properties": {
                            "name": { "type": "string" }, "visible_records": { "type": "integer" },
                            "requests": { "type": "integer" }, "rate_limited": { "type": "integer" }
                        } },
                        "index": { "type": "object", "properties": {
                            "legs": { "type": "array", "items": { "type": "string" } },
                            "embedding_model": { "type": ["string", "null"] }, "max_k": { "type": "integer" }
                        } },
                        "server": { "type": "object", "properties": {
                            "version": { "type": "string" }, "uptime_s": { "type": "integer" },
                            "mcp_protocol_versions": { "type": "array", "items": { "type": "string" } }
                        } }
                    }
                },
                "RecordIn": {
                    "type": "object",
                    "required": ["_id"],
                    "properties": {
                        "_id": { "type": ["string", "integer"] },
                        "title": { "type": ["string", "null"] },
                        "text": { "type": ["string", "null"] },
                        "acl": { "type": "array", "items": { "type": "string" } },
                        "tenant": { "type": "string" },
                        "metadata": { "type": ["object", "null"] },
                        "vector": { "type": ["array", "null"], "items": { "type": "number" } }
                    }
                },
                "Written": {
                    "type": "object",
                    "properties": {
                        "commit": { "type": ["string", "null"] },
                        "ids": { "type": "array", "items": { "type": "string" } }
                    },
                    "required": ["commit", "ids"]
                },
                "Note": super::memory::note_schema(),
                "Cue": super::memory::cue_schema(),
                "Forget": super::memory::forget_schema(),
                "MemoryWritten": super::memory::written_schema(),
                "Recalled": super::memory::recalled_schema(),
                "Forgotten": super::memory::forgotten_schema(),
                "JsonRpc": {
                    "description": "A JSON-RPC 2.0 message, or (2025-03-26 only) an array of them.",
                    "oneOf": [
                        { "type": "object", "properties": { "jsonrpc": { "const": "2.0" } }, "required": ["jsonrpc"] },
                        { "type": "array", "items": { "type": "object" }, "minItems": 1 }
                    ]
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::SearchParams;

    /// Every property the document gives the search parameters is one the server accepts, and
    /// the schema forbids the rest, as the server does.
    #[test]
    fn search_params_schema_matches_the_type() {
        let doc = document(100);
        let schema = &doc["components"]["schemas"]["SearchParams"];
        assert_eq!(schema["additionalProperties"], false);
        let sample = json!({
            "query": "x", "k": 3, "mode": "fuzzy", "collapse": true, "feedback": false, "ids_only": true, "vector": [0.5, 1], "syntax": "simple",
            "filters": [{ "keyword": { "field": "category", "value": "billing" } }],
            "offset": 10, "cursor": "c", "depth": 50,
            "group_by": { "field": "parent", "per_group": 2 }, "mmr": 0.7, "token_budget": 500,
            "facets": [
                { "values": { "field": "category", "size": 5 } },
                { "ranges": { "field": "updated", "ranges": [{ "to": 1.0 }, { "from": 1.0, "to": null }] } }
            ],
            "boosts": {
                "title": 1.0, "body": 1.0,
                "keywords": [{ "field": "category", "value": "billing", "factor": 2.0 }],
                "decay": [{ "field": "updated", "function": "gauss", "origin": 0, "scale": 1, "offset": 0, "decay": 0.5 }],
                "numbers": [{ "field": "priority", "weight": 0.1, "modifier": "log1p" }]
            }
        });
        // Every boosts and facet property the schema names is one the types read.
        let boosts = &schema["properties"]["boosts"]["properties"];
        let mut boost_names: Vec<&String> = boosts.as_object().unwrap().keys().collect();
        boost_names.sort();
        let mut sample_boosts: Vec<&String> = sample["boosts"].as_object().unwrap().keys().collect();
        sample_boosts.sort();
        assert_eq!(boost_names, sample_boosts);
        for (list, item) in [("keywords", 0), ("decay", 0), ("numbers", 0)] {
            let props = boosts[list]["items"]["properties"].as_object().unwrap();
            let given = sample["boosts"][list][item].as_object().unwrap();
            assert_eq!(props.keys().collect::<Vec<_>>().len(), given.len(), "{list}");
            assert!(given.keys().all(|k| props.contains_key(k)), "{list}");
        }
        let names: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        let mut sample_names: Vec<&String> = sample.as_object().unwrap().keys().collect();
        sample_names.sort();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(sorted, sample_names);
        serde_json::from_value::<SearchParams>(sample).unwrap();
        let modes = schema["properties"]["mode"]["enum"].as_array().unwrap();
        for mode in modes {
            serde_json::from_value::<SearchParams>(json!({ "query": "x", "mode": mode })).unwrap();
        }
        for syntax in schema["properties"]["syntax"]["enum"].as_array().unwrap() {
            serde_json::from_value::<SearchParams>(json!({ "query": "x", "syntax": syntax })).unwrap();
        }
        // tantivy's query language is never served.
        assert!(serde_json::from_value::<SearchParams>(json!({ "query": "x", "syntax": "tantivy" })).is_err());
    }

    /// Every filter variant the document describes is one the server parses.
    #[test]
    fn filter_schema_matches_the_type() {
        let doc = document(100);
        let variants = doc["components"]["schemas"]["Filter"]["oneOf"].as_array().unwrap();
        let samples = [
            json!({ "keyword": { "field": "f", "value": "v" } }),
            json!({ "keyword_any": { "field": "f", "values": ["v"] } }),
            json!({ "range": { "field": "f", "min": 1.0, "max": null } }),
            json!({ "parent": { "id": "a" } }),
            json!({ "section": { "path": ["A"] } }),
            json!({ "all": { "filters": [] } }),
            json!({ "any": { "filters": [] } }),
            json!({ "not": { "filter": { "parent": { "id": "a" } } } }),
        ];
        assert_eq!(variants.len(), samples.len());
        for (variant, sample) in variants.iter().zip(samples) {
            let name = variant["required"][0].as_str().unwrap();
            assert!(sample.get(name).is_some(), "{name}");
            serde_json::from_value::<braid::Filter>(sample).unwrap();
        }
    }
}
