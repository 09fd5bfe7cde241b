//! `search_tools(query)`: deferred tool loading for agents.
//!
//! An agent with hundreds of tools cannot put every JSON schema in its prompt. Index the
//! catalogue once (name, description and the schema's property names), then load only the five
//! tools that match what the agent is about to do.
//!
//! ```text
//! cargo run --release --example tool_search -- "give the customer their money back"
//! cargo run --release --example tool_search -- "kubectl helm relay"
//! ```

use std::path::PathBuf;

use braid::{Index, IndexConfig, Mode, Principal, Record, SearchRequest};
use serde_json::Value;

/// The best `k` tool names for `query`.
fn search_tools(index: &Index, query: &str, k: usize) -> braid::Result<Vec<(String, f32)>> {
    let response =
        index.search(&SearchRequest::new(query, Principal::public()).mode(Mode::Hybrid).k(k).snippet_chars(0))?;
    Ok(response.hits.into_iter().map(|h| (h.id, h.score)).collect())
}

/// A tool definition as a record: the name's words (`create_invoice` → "create invoice") as
/// the title; the description and the schema's property names as the body.
fn tool_record(tool: &Value) -> Option<Record> {
    let name = tool.get("name")?.as_str()?;
    let description = tool.get("description").and_then(Value::as_str).unwrap_or("");
    let properties: Vec<String> = tool
        .pointer("/input_schema/properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(|k| k.replace('_', " ")).collect())
        .unwrap_or_default();
    Some(
        Record::new(name)
            .title(name.replace('_', " "))
            .body(format!("{description} Parameters: {}.", properties.join(", ")))
            .keyword("category", "tool"),
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("datasets/tools/tools.json");
    let catalogue: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    // Descriptions are short natural language: the semantic leg helps most here, when ONNX
    // Runtime and the model are available.
    let index = match braid::models::OnnxEmbedder::builder().build() {
        Ok(model) => Index::builder().embedder(std::sync::Arc::new(model)).create_in_ram()?,
        Err(e) => {
            eprintln!("semantic leg off: {e}");
            Index::create_in_ram(IndexConfig::default())?
        }
    };
    let mut writer = index.writer()?;
    for tool in &catalogue {
        if let Some(record) = tool_record(tool) {
            writer.upsert(&record)?;
        }
    }
    writer.commit()?;

    let queries: Vec<String> = std::env::args().skip(1).collect();
    let queries = if queries.is_empty() {
        vec![
            "give the customer their money back".to_string(),
            "rotate api key".to_string(),
            "kubernets relay".to_string(),
        ]
    } else {
        vec![queries.join(" ")]
    };
    for q in queries {
        println!("search_tools({q:?})");
        for (rank, (name, score)) in search_tools(&index, &q, 5)?.iter().enumerate() {
            let schema = catalogue.iter().find(|t| t["name"] == name.as_str()).map(|t| &t["input_schema"]);
            let required = schema.and_then(|s| s.get("required")).map(|r| r.to_string()).unwrap_or_default();
            println!("  {}. {name}  (score {score:.4}, required {required})", rank + 1);
        }
    }
    Ok(())
}
