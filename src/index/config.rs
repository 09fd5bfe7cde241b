//! The configuration an index is created with and keeps.

use braid_core::{AccessPolicy, Passages, Result};
use braid_lexical::SchemaConfig;
use braid_vector::Quantization;
use serde::{Deserialize, Serialize};

/// How an index is built; fixed at creation and stored with the index.
///
/// By default: [`SchemaConfig::default`], [`AccessPolicy::Public`] for records without ACL,
/// f32 vectors ([`Quantization::F32`]) and long records embedded as passages
/// ([`Passages::DEFAULT`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexConfig {
    /// Analyzer, boosts, keyword and numeric fields.
    pub schema: SchemaConfig,
    /// Visibility of records that carry no ACL tokens.
    pub policy: AccessPolicy,
    /// How the vector store, once the index has one, holds its vectors (the store records it
    /// too, so a store keeps the setting it was created with).
    #[serde(default)]
    pub quantization: Quantization,
    /// How long records are cut into passages for the embedder, one vector each (`None`: one
    /// vector a record, as indexes made before passages existed have). Only records the
    /// embedder embeds have passages; supplied vectors are one a record.
    #[serde(default)]
    pub passages: Option<Passages>,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            schema: SchemaConfig::default(),
            policy: AccessPolicy::default(),
            quantization: Quantization::default(),
            passages: Some(Passages::DEFAULT),
        }
    }
}

impl IndexConfig {
    /// Checks the parts a caller sets by hand (today the passage windows).
    ///
    /// # Errors
    /// [`braid_core::Error::InvalidRequest`] naming the bad setting.
    pub fn validate(&self) -> Result<()> {
        self.passages.as_ref().map_or(Ok(()), Passages::validate)
    }
}
