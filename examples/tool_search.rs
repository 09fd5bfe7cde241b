//! `search_tools(query)`: deferred tool loading for agents.
//!
//! An agent with hundreds of tools cannot put every JSON schema in its prompt. Index the
//! catalogue once (`braid::ToolCatalogue`: name, description and the schema's property names),
//! then load only the five tools that match what the agent is about to do. `braid serve` and
//! `braid mcp` serve the same as the MCP tool `search_tools` (`tool_catalogue` in the
//! configuration, `--tool-catalogue`).
//!
//! ```text
//! cargo run --release --example tool_search -- "give the customer their money back"
//! cargo run --release --example tool_search -- "kubectl helm relay"
//! ```

use std::path::PathBuf;

use braid::ToolCatalogue;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("datasets/tools/tools.json");
    // Descriptions are short natural language: the semantic leg helps most here, when ONNX
    // Runtime and the model are available.
    let embedder: Option<std::sync::Arc<dyn braid::Embedder>> = match braid::models::OnnxEmbedder::builder().build() {
        Ok(model) => Some(std::sync::Arc::new(model)),
        Err(e) => {
            eprintln!("semantic leg off: {e}");
            None
        }
    };
    let catalogue = ToolCatalogue::from_json(&std::fs::read_to_string(&path)?, embedder)?;

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
        for (rank, hit) in catalogue.search(&q, 5)?.iter().enumerate() {
            let required = hit.definition["input_schema"].get("required").map(|r| r.to_string()).unwrap_or_default();
            println!(
                "  {}. {}  (score {:.4}, required {required})",
                rank + 1,
                hit.definition["name"].as_str().unwrap_or(""),
                hit.score
            );
        }
    }
    Ok(())
}
