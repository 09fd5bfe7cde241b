//! The JSON Schemas of what the server reads and writes, written once: the OpenAPI description
//! and the MCP tool definitions are both built from these.

use serde_json::{json, Value};

/// A structured filter (`braid::Filter`), recursive through `$ref: <defs>/Filter`.
pub fn filter(defs: &str) -> Value {
    let r = json!({ "$ref": format!("{defs}/Filter") });
    let variant = |name: &str, description: &str, body: Value| {
        json!({
            "type": "object", "description": description,
            "properties": { name: body }, "required": [name], "additionalProperties": false
        })
    };
    let object = |properties: Value, required: &[&str]| json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false });
    let strings = json!({ "type": "array", "items": { "type": "string" } });
    json!({
        "description": "A structured filter; it only narrows what the caller may see.",
        "oneOf": [
            variant("keyword", "A keyword field equals a value.",
                object(json!({ "field": { "type": "string" }, "value": { "type": "string" } }), &["field", "value"])),
            variant("keyword_any", "A keyword field equals one of several values.",
                object(json!({ "field": { "type": "string" }, "values": strings }), &["field", "values"])),
            variant("range", "A numeric or date field (Unix seconds) lies in [min, max]; either bound may be null, not both.",
                object(json!({
                    "field": { "type": "string" },
                    "min": { "type": ["number", "null"] },
                    "max": { "type": ["number", "null"] }
                }), &["field"])),
            variant("parent", "The record is a section of this article.",
                object(json!({ "id": { "type": "string" } }), &["id"])),
            variant("section", "The record's heading path starts with this path.",
                object(json!({ "path": strings }), &["path"])),
            variant("all", "Every filter holds.",
                object(json!({ "filters": { "type": "array", "items": r } }), &["filters"])),
            variant("any", "At least one filter holds.",
                object(json!({ "filters": { "type": "array", "items": r } }), &["filters"])),
            variant("not", "The filter does not hold.", object(json!({ "filter": r }), &["filter"]))
        ]
    })
}

/// The search parameters (`api::SearchParams`); filters refer to `<defs>/Filter`.
pub fn search_params(defs: &str, max_k: usize) -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string", "maxLength": braid::MAX_QUERY_BYTES,
                "description": "What to look for, in plain words, an exact code, or a fragment (typos are fine)."
            },
            "k": { "type": "integer", "minimum": 0, "maximum": max_k, "default": 10, "description": "Hits wanted." },
            "mode": {
                "type": "string", "enum": ["hybrid", "lexical", "fuzzy", "semantic", "auto"], "default": "hybrid",
                "description": "Which recall legs run: hybrid fuses all of them; auto is an older name of hybrid."
            },
            "filters": {
                "type": "array", "items": { "$ref": format!("{defs}/Filter") },
                "description": "Structured filters that must all hold."
            },
            "collapse": {
                "type": "boolean", "default": false,
                "description": "Keep only the best section of each article."
            },
            "group_by": {
                "type": "object",
                "properties": {
                    "field": {
                        "type": "string",
                        "description": "parent (an article and its sections are one group) or a keyword field (by its first value)."
                    },
                    "per_group": { "type": "integer", "minimum": 1, "description": "The most hits one group keeps." }
                },
                "required": ["field", "per_group"],
                "additionalProperties": false,
                "description": "At most per_group hits per article or field value, the best first (a record without the field is a group of its own)."
            },
            "token_budget": {
                "type": "integer", "minimum": 0,
                "description": "Pack the page into at most this many tokens of the embedding model's tokenizer (words on an index without a model): hits in order, each counting its title, section path and snippet, while they fit. stats.tokens gives the count; a page cut short has no next_cursor."
            },
            "mmr": {
                "type": "number", "minimum": 0, "maximum": 1,
                "description": "Reorder by maximal marginal relevance with this lambda: 1 keeps the relevance order, lower values bring up hits unlike those above them (by their vectors, else their words)."
            },
            "feedback": {
                "type": "boolean", "default": true,
                "description": "In hybrid, rank words the top results agree on too (pseudo-relevance feedback); false ranks by the query's own words."
            },
            "ids_only": {
                "type": "boolean", "default": false,
                "description": "Return ids, scores and explanations only: no titles, fields or snippets."
            },
            "vector": {
                "type": "array", "items": { "type": "number" },
                "description": "A query vector from your own model (the index's dimension): the semantic leg searches with it instead of embedding the query text. Send an empty query for a vector-only search."
            },
            "syntax": {
                "type": "string", "enum": ["plain", "simple"], "default": "plain",
                "description": "How the query is read: plain text, or simple (search-box operators: \"exact phrase\", -exclude, OR, field:value on keyword fields; stray operators are plain words)."
            },
            "offset": {
                "type": "integer", "minimum": 0, "default": 0,
                "description": "Hits to skip: the page is ranks offset+1 to offset+k. offset + k must stay within depth."
            },
            "cursor": {
                "type": "string",
                "description": "The next_cursor of a previous response to the same request: its next page. Refused when made for another request, or when the hits before it changed."
            },
            "depth": {
                "type": "integer", "minimum": 1, "maximum": super::api::MAX_SERVED_DEPTH, "default": 100,
                "description": "Candidates per leg: the ranking pages are cut from."
            },
            "facets": {
                "type": "array", "maxItems": braid::MAX_FACETS, "items": facet(),
                "description": "Counts per value or range over every matched record you may see (not only the page)."
            },
            "boosts": boosts()
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

/// A facet request (`braid::Facet`).
fn facet() -> Value {
    let range = json!({
        "type": "object",
        "properties": { "from": { "type": ["number", "null"] }, "to": { "type": ["number", "null"] } },
        "additionalProperties": false,
        "description": "from inclusive, to exclusive; either may be null (open)."
    });
    json!({
        "oneOf": [
            {
                "type": "object", "description": "The most frequent values of a keyword field.",
                "properties": { "values": {
                    "type": "object",
                    "properties": {
                        "field": { "type": "string" },
                        "size": { "type": "integer", "minimum": 0, "maximum": braid::MAX_FACET_VALUES, "default": 10 }
                    },
                    "required": ["field"], "additionalProperties": false
                } },
                "required": ["values"], "additionalProperties": false
            },
            {
                "type": "object", "description": "Counts per range of a numeric or date field (Unix seconds).",
                "properties": { "ranges": {
                    "type": "object",
                    "properties": {
                        "field": { "type": "string" },
                        "ranges": { "type": "array", "items": range, "minItems": 1, "maxItems": braid::MAX_FACET_RANGES }
                    },
                    "required": ["field", "ranges"], "additionalProperties": false
                } },
                "required": ["ranges"], "additionalProperties": false
            }
        ]
    })
}

/// The boosts (`braid::Boosts`): score = relevance × Π decay × Π (1 + weight·f(value)) × Π keyword factor.
fn boosts() -> Value {
    let field = json!({ "type": "string" });
    json!({
        "type": "object",
        "description": "score = relevance × Π decay(field) × Π (1 + weight · f(field)) × Π keyword factor; a record without the field gets 1 from that function.",
        "properties": {
            "title": { "type": "number", "minimum": 0, "description": "Weight of a title match (by default the index's title boost, 0.1)." },
            "body": { "type": "number", "minimum": 0, "description": "Weight of the title+body BM25 (by default 1)." },
            "keywords": { "type": "array", "items": {
                "type": "object",
                "properties": { "field": field, "value": { "type": "string" }, "factor": { "type": "number", "minimum": 0 } },
                "required": ["field", "value", "factor"], "additionalProperties": false
            } },
            "decay": { "type": "array", "items": {
                "type": "object",
                "description": "Elasticsearch's decay functions on a numeric or date field (Unix seconds).",
                "properties": {
                    "field": field,
                    "function": { "type": "string", "enum": ["exp", "gauss", "linear"] },
                    "origin": { "type": "number" },
                    "scale": { "type": "number", "exclusiveMinimum": 0 },
                    "offset": { "type": "number", "minimum": 0, "default": 0 },
                    "decay": { "type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "default": 0.5 }
                },
                "required": ["field", "function", "origin", "scale"], "additionalProperties": false
            } },
            "numbers": { "type": "array", "items": {
                "type": "object",
                "properties": {
                    "field": field,
                    "weight": { "type": "number", "minimum": 0 },
                    "modifier": { "type": "string", "enum": ["linear", "log1p", "sqrt"], "default": "linear" }
                },
                "required": ["field", "weight"], "additionalProperties": false
            } }
        },
        "additionalProperties": false
    })
}

/// Facet counts (`braid::Facets`).
fn facets_output() -> Value {
    let count = json!({ "type": "integer", "minimum": 0 });
    json!({
        "type": "object",
        "description": "Counts over every matched record the caller may see.",
        "properties": {
            "matched": count,
            "values": { "type": "object", "additionalProperties": { "type": "array", "items": {
                "type": "object", "properties": { "value": { "type": "string" }, "count": count }, "required": ["value", "count"]
            } } },
            "ranges": { "type": "object", "additionalProperties": { "type": "array", "items": {
                "type": "object",
                "properties": { "from": { "type": ["number", "null"] }, "to": { "type": ["number", "null"] }, "count": count },
                "required": ["from", "to", "count"]
            } } }
        },
        "required": ["matched"]
    })
}

fn next_cursor() -> Value {
    json!({ "type": "string", "description": "Pass as cursor for the next page; absent when there is none." })
}

fn lines() -> Value {
    json!({
        "type": ["array", "null"], "items": { "type": "integer", "minimum": 1 }, "minItems": 2, "maxItems": 2,
        "description": "1-based inclusive line range of the section in its article."
    })
}

fn section() -> Value {
    json!({ "type": "array", "items": { "type": "string" }, "description": "Heading path, outermost first." })
}

fn suggestions() -> Value {
    json!({
        "type": "array",
        "description": "\"Did you mean\" corrections for query words unknown to the records the caller may see.",
        "items": {
            "type": "object",
            "properties": {
                "term": { "type": "string" }, "suggestion": { "type": "string" }, "distance": { "type": "integer" }
            },
            "required": ["term", "suggestion", "distance"]
        }
    })
}

/// What the MCP `search` tool returns as `structuredContent`.
pub fn search_output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "sources": {
                "type": "array",
                "description": "The hits, best first; `ref` is the [n] the text cites.",
                "items": {
                    "type": "object",
                    "properties": {
                        "ref": { "type": "integer", "minimum": 1 },
                        "id": { "type": "string", "description": "Stable id; read_section takes it." },
                        "title": { "type": "string" },
                        "parent": { "type": ["string", "null"], "description": "The article, for sections." },
                        "section": section(),
                        "lines": lines(),
                        "score": { "type": "number", "minimum": 0, "description": "In [0, 1]; boosts may raise it above 1." },
                        "snippet": { "type": "string" }
                    },
                    "required": ["ref", "id", "title", "parent", "section", "lines", "score", "snippet"],
                    "additionalProperties": false
                }
            },
            "suggestions": suggestions(),
            "steps": {
                "type": "object", "additionalProperties": { "type": "number" },
                "description": "Milliseconds per stage (visibility, lexical, fuzzy, semantic, fusion, hits, total, …); empty unless the caller is an operator."
            },
            "legs": { "type": "array", "items": { "type": "string" }, "description": "The recall legs that ran." },
            "facets": facets_output(),
            "tokens": {
                "type": "integer", "minimum": 0,
                "description": "With token_budget: the tokens of text these results hold."
            },
            "next_cursor": next_cursor()
        },
        "required": ["sources", "suggestions", "steps", "legs"],
        "additionalProperties": false
    })
}

/// The most tools one `search_tools` call returns.
pub const MAX_TOOL_HITS: usize = 20;

/// The `search_tools` tool's arguments (`mcp::ToolSearchParams`).
pub fn tool_search_params() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": { "type": "string", "maxLength": braid::MAX_QUERY_BYTES, "description": "The task, in plain words." },
            "k": { "type": "integer", "minimum": 1, "maximum": MAX_TOOL_HITS, "default": 5, "description": "Tools wanted." }
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

/// The `search_tools` tool's structured output.
pub fn tool_search_output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "tools": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "definition": { "type": "object", "description": "The tool's definition, as the catalogue gives it." },
                        "score": { "type": "number" }
                    },
                    "required": ["definition", "score"]
                }
            }
        },
        "required": ["tools"]
    })
}

/// The `outline` tool's arguments (`mcp::OutlineParams`).
pub fn outline_params() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": { "type": "string", "default": "", "description": "The folder to list, as billing/ (empty: the top)." },
            "offset": { "type": "integer", "minimum": 0, "default": 0, "description": "Entries to skip (a previous next_offset)." },
            "limit": { "type": "integer", "minimum": 1, "maximum": braid::MAX_OUTLINE_ENTRIES, "default": 50, "description": "Entries wanted." }
        },
        "additionalProperties": false
    })
}

/// The `outline` tool's structured output (`braid::Outline`).
pub fn outline_output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": { "type": "string" },
            "total": { "type": "integer", "description": "Entries under path in all." },
            "next_offset": { "type": ["integer", "null"] },
            "entries": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "kind": { "type": "string", "enum": ["folder", "article"] },
                        "path": { "type": "string", "description": "A folder's path." },
                        "articles": { "type": "integer", "description": "A folder's visible articles." },
                        "id": { "type": "string", "description": "An article's id." },
                        "title": { "type": "string" },
                        "sections": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "id": { "type": "string", "description": "What read_section takes." },
                                    "section": { "type": "array", "items": { "type": "string" } },
                                    "lines": { "type": ["array", "null"], "items": { "type": "integer" } }
                                },
                                "required": ["id", "section", "lines"]
                            }
                        }
                    },
                    "required": ["kind"]
                }
            }
        },
        "required": ["path", "entries", "total", "next_offset"]
    })
}

/// The largest `length` a `read_section` call may ask for, in characters.
pub const MAX_READ_CHARS: usize = 20_000;

/// The `read_section` tool's arguments (`mcp::ReadParams`).
pub fn read_params() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": { "type": "string", "description": "A source id returned by search." },
            "offset": { "type": "integer", "minimum": 0, "default": 0, "description": "First character to read." },
            "length": {
                "type": "integer", "minimum": 1, "maximum": MAX_READ_CHARS, "default": 4000,
                "description": "Characters to read."
            }
        },
        "required": ["id"],
        "additionalProperties": false
    })
}

/// What the `read_section` tool returns as `structuredContent`.
pub fn read_output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": { "type": "string" },
            "title": { "type": "string" },
            "parent": { "type": ["string", "null"] },
            "section": section(),
            "lines": lines(),
            "offset": { "type": "integer", "minimum": 0, "description": "First character returned." },
            "length": { "type": "integer", "minimum": 0, "description": "Characters returned." },
            "total": { "type": "integer", "minimum": 0, "description": "Characters in the whole section." },
            "next_offset": {
                "type": ["integer", "null"], "description": "Where the next read starts; null at the end."
            },
            "text": { "type": "string" }
        },
        "required": ["id", "title", "parent", "section", "lines", "offset", "length", "total", "next_offset", "text"],
        "additionalProperties": false
    })
}

/// The REST search response (`braid::SearchResponse` as JSON).
pub fn search_response() -> Value {
    let number_map =
        |d: &str| json!({ "type": "object", "additionalProperties": { "type": "number" }, "description": d });
    json!({
        "type": "object",
        "properties": {
            "hits": {
                "type": "array",
                "description": "Ranked hits, best first: the sources (ids, sections, line ranges).",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": { "type": "string" },
                        "score": { "type": "number", "minimum": 0, "description": "In [0, 1]; boosts may raise it above 1 (explain.boost)." },
                        "title": { "type": "string" },
                        "snippet": { "type": "string" },
                        "highlights": {
                            "type": "array", "description": "Byte ranges of the snippet that match query words.",
                            "items": { "type": "array", "items": { "type": "integer" }, "minItems": 2, "maxItems": 2 }
                        },
                        "parent": { "type": "string" },
                        "section": section(),
                        "lines": lines(),
                        "keywords": { "type": "object", "additionalProperties": { "type": "array", "items": { "type": "string" } } },
                        "numbers": number_map("Numeric and date fields (dates as Unix seconds)."),
                        "explain": {
                            "type": "object", "description": "Each leg's rank, raw score and contribution; the fused score.",
                            "properties": {
                                "legs": { "type": "array", "items": { "type": "object" } },
                                "fused": { "type": "number" },
                                "fused_rank": { "type": "integer" },
                                "rerank": { "type": "number" },
                                "synonyms": {
                                    "type": "array", "description": "The index's synonyms the hit holds in place of the query's words.",
                                    "items": {
                                        "type": "object",
                                        "properties": { "query": { "type": "string" }, "synonym": { "type": "string" } },
                                        "required": ["query", "synonym"]
                                    }
                                },
                                "boost": {
                                    "type": "object", "description": "score = relevance × Π factors.",
                                    "properties": {
                                        "relevance": { "type": "number" },
                                        "factors": { "type": "array", "items": { "type": "object" } },
                                        "score": { "type": "number" }
                                    }
                                }
                            }
                        }
                    },
                    "required": ["id", "score", "title", "snippet", "highlights", "explain"]
                }
            },
            "suggestions": suggestions(),
            "next_cursor": next_cursor(),
            "facets": facets_output(),
            "stats": {
                "type": "object",
                "description": "Telemetry beside the answer: the steps (microseconds per stage) and counts.",
                "properties": {
                    "mode": { "type": "string" },
                    "legs": { "type": "array", "items": { "type": "string" } },
                    "candidates": number_map("Candidates per leg, after access control."),
                    "weights": number_map("Fusion weight per leg."),
                    "micros": number_map(&micros_description()),
                    "semantic_path": { "type": "string", "enum": ["hnsw", "exact"] },
                    "allowed": { "type": "integer", "description": "Records the caller may see under the filters." },
                    "reranked": { "type": "integer" },
                    "tokens": { "type": "integer", "description": "With token_budget: the tokens of text the page holds." }
                },
                "required": ["legs", "micros", "allowed"]
            }
        },
        "required": ["hits", "stats"]
    })
}

/// The error body of every non-MCP failure.
pub fn error() -> Value {
    json!({
        "type": "object",
        "properties": {
            "error": {
                "type": "object",
                "properties": {
                    "code": {
                        "type": "string",
                        "enum": ["bad_request", "unauthorized", "forbidden_origin", "not_acceptable", "payload_too_large",
                                 "unsupported_media_type", "rate_limited", "timeout", "internal", "insufficient_scope",
                                 "keys_unavailable"]
                    },
                    "message": { "type": "string" }
                },
                "required": ["code", "message"]
            }
        },
        "required": ["error"]
    })
}

/// The description of `stats.micros`, from the stages the library names.
fn micros_description() -> String {
    let names: Vec<&str> = braid::Stage::ALL.iter().map(|s| s.name()).collect();
    format!(
        "Microseconds per stage that ran: {}. Empty unless the caller is an operator (an operator token or scope).",
        names.join(", ")
    )
}
