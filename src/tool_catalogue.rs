//! Tool search: a catalogue of tool definitions searched as documents, so that an agent with
//! hundreds of tools loads only those that match what it is about to do ([`ToolCatalogue`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use braid_core::{Embedder, Error, Mode, Principal, Record, Result, SearchRequest};
use serde_json::Value;

use crate::{Index, IndexConfig};

/// A tool found by [`ToolCatalogue::search`]: its definition as the catalogue gave it, and its
/// score on the fused `[0, 1]` scale.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolHit {
    /// The tool's definition (name, description, input schema, …), as given.
    pub definition: Value,
    /// How well it matches the query.
    pub score: f32,
}

/// Tool definitions indexed as records: the name's words as the title (`create_invoice` →
/// "create invoice"), the description and the input schema's property names as the body. Every
/// tool is public: a catalogue is the same for every caller.
///
/// ```
/// use braid::ToolCatalogue;
/// let catalogue = ToolCatalogue::from_json(r#"[
///   {"name": "refund_payment", "description": "Refund a captured payment.", "input_schema": {"properties": {"payment_id": {}}}},
///   {"name": "create_invoice", "description": "Create a draft invoice.", "input_schema": {"properties": {"customer_id": {}}}}
/// ]"#, None)?;
/// let found = catalogue.search("refund the customer", 1)?;
/// assert_eq!(found[0].definition["name"], "refund_payment");
/// # Ok::<(), braid::Error>(())
/// ```
pub struct ToolCatalogue {
    index: Index,
    tools: BTreeMap<String, Value>,
}

impl std::fmt::Debug for ToolCatalogue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCatalogue").field("tools", &self.tools.len()).finish_non_exhaustive()
    }
}

/// The record of one tool definition, or why it is not one.
fn tool_record(tool: &Value) -> std::result::Result<(String, Record), String> {
    let name =
        tool.get("name").and_then(Value::as_str).filter(|n| !n.trim().is_empty()).ok_or("a tool without a name")?;
    let description = tool.get("description").and_then(Value::as_str).unwrap_or("");
    let schema = tool.get("input_schema").or_else(|| tool.get("inputSchema"));
    let properties: Vec<String> = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.keys().map(|k| k.replace('_', " ")).collect())
        .unwrap_or_default();
    let record = Record::new(name)
        .title(name.replace(['_', '-', '.'], " "))
        .body(format!("{description} Parameters: {}.", properties.join(", ")));
    Ok((name.to_string(), record))
}

impl ToolCatalogue {
    /// Indexes the tool definitions of `json` (an array of objects with a `name`, and a
    /// `description` and `input_schema` or `inputSchema`, as MCP and the model APIs write
    /// them), in memory, with `embedder` for the semantic leg when given.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] when `json` is not an array of tool definitions, a tool has no
    /// name, or two share one.
    pub fn from_json(json: &str, embedder: Option<Arc<dyn Embedder>>) -> Result<Self> {
        let tools: Vec<Value> = serde_json::from_str(json)
            .map_err(|e| Error::invalid_request(format!("a tool catalogue is a JSON array of tools: {e}")))?;
        let builder = Index::builder().config(IndexConfig::default());
        let index = match embedder {
            Some(e) => builder.embedder(e).create_in_ram()?,
            None => builder.create_in_ram()?,
        };
        let mut by_name = BTreeMap::new();
        let mut writer = index.writer()?;
        for (i, tool) in tools.into_iter().enumerate() {
            let (name, record) = tool_record(&tool).map_err(|e| Error::invalid_request(format!("tool {i}: {e}")))?;
            if by_name.insert(name.clone(), tool).is_some() {
                return Err(Error::invalid_request(format!("two tools are named {name:?}")));
            }
            writer.upsert(&record)?;
        }
        writer.commit()?;
        drop(writer);
        Ok(ToolCatalogue { index, tools: by_name })
    }

    /// The number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the catalogue holds no tool.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The `k` tools that best match `query` (hybrid search: names, descriptions, parameter
    /// names; typos and plain descriptions of the task work), best first.
    ///
    /// # Errors
    /// As [`Index::search`].
    pub fn search(&self, query: &str, k: usize) -> Result<Vec<ToolHit>> {
        let request = SearchRequest::new(query, Principal::public()).mode(Mode::Hybrid).k(k).snippet_chars(0);
        let response = self.index.search(&request)?;
        Ok(response
            .hits
            .into_iter()
            .filter_map(|h| self.tools.get(&h.id).map(|d| ToolHit { definition: d.clone(), score: h.score }))
            .collect())
    }
}
