//! The tantivy schema behind a Braid index, and its configuration.

use std::collections::BTreeSet;

use braid_core::{is_cjk, Error, Result};
use serde::{Deserialize, Serialize};
use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED, STORED, STRING,
};

use crate::analysis::{Analyzer, GRAMS_TOKENIZER, TEXT_TOKENIZER, WORDS_TOKENIZER};

const KEYWORD_PREFIX: &str = "kw.";
pub(crate) const NUMBER_PREFIX: &str = "num.";

/// How an index is laid out: the analyzer, field boosts, and the keyword and numeric fields
/// records may carry. Chosen when the index is created and stored with it.
///
/// By default: English analysis, title boost 0.1 on top of the flat title+body field (fitted
/// on training splits, `research/scripts/title_study.sh`) and 0.5 for words in a CJK script
/// (which those splits do not hold), keyword fields `category`, `tags`, `lang`, `audience`,
/// `source`, `kind`, numeric fields `updated`, `created`, `priority`, `importance`, `expires`
/// (`kind`, `importance` and `expires` are what an agent's memory writes, with `created`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchemaConfig {
    /// The analyzer for title and body.
    pub analyzer: Analyzer,
    /// Extra weight of a title match, added to the flat title+body BM25 (0 turns it off).
    pub title_boost: f32,
    /// Extra weight of a title match for a term written in a CJK script (a Chinese word, a
    /// Japanese or Korean bigram), in place of `title_boost`. `title_boost` was fitted on
    /// English text only (SciFact and NFCorpus), whose titles are long and whose bodies
    /// repeat them; nothing here speaks for Chinese, so CJK terms keep the weight every term
    /// had before the fit: 0.5 for new indexes. `None` (an index created before this setting)
    /// weighs every term by `title_boost`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cjk_title_boost: Option<f32>,
    /// Keyword (exact, filterable) fields.
    pub keyword_fields: BTreeSet<String>,
    /// Numeric and date fields (filterable by range; dates as Unix seconds).
    pub numeric_fields: BTreeSet<String>,
}

impl Default for SchemaConfig {
    fn default() -> Self {
        SchemaConfig {
            analyzer: Analyzer::English,
            title_boost: 0.1,
            cjk_title_boost: Some(0.5),
            keyword_fields: ["category", "tags", "lang", "audience", "source", "kind"].map(String::from).into(),
            numeric_fields: ["updated", "created", "priority", "importance", "expires"].map(String::from).into(),
        }
    }
}

impl SchemaConfig {
    /// Checks field names: non-empty, at most 64 bytes of `[A-Za-z0-9_.-]`.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] naming the bad field.
    pub fn validate(&self) -> Result<()> {
        for name in self.keyword_fields.iter().chain(&self.numeric_fields) {
            let ok = !name.is_empty()
                && name.len() <= 64
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
            if !ok {
                return Err(Error::invalid_request(format!("bad field name {name:?}")));
            }
        }
        if !self.title_boost.is_finite() || self.title_boost < 0.0 {
            return Err(Error::invalid_request("title_boost must be a finite number >= 0"));
        }
        if self.cjk_title_boost.is_some_and(|b| !b.is_finite() || b < 0.0) {
            return Err(Error::invalid_request("cjk_title_boost must be a finite number >= 0"));
        }
        Ok(())
    }

    /// The extra weight of a title match for the analysed `term`: `cjk_title_boost` for a term
    /// with a CJK character when the index has one, else `title_boost`.
    pub fn title_boost_of(&self, term: &str) -> f32 {
        match self.cjk_title_boost {
            Some(boost) if term.chars().any(is_cjk) => boost,
            _ => self.title_boost,
        }
    }
}

/// The fields of the tantivy schema.
#[derive(Debug, Clone)]
pub(crate) struct Fields {
    pub id: Field,
    pub ord: Field,
    pub title: Field,
    pub body: Field,
    pub text: Field,
    pub words: Field,
    pub grams: Field,
    pub acl: Field,
    pub tenant: Field,
    pub parent: Field,
    pub section: Field,
    pub section_path: Field,
    pub lines: Field,
    pub hash: Field,
    pub keywords: Vec<(String, Field)>,
    pub numbers: Vec<(String, Field)>,
    /// The analysed terms of each record's first words, as lexical feedback reads them
    /// ([`crate::analysis::head_terms`]); `None` in indexes written before it existed, whose
    /// feedback analyses the stored text instead (the same terms, more work).
    pub head: Option<Field>,
}

impl Fields {
    pub fn keyword(&self, name: &str) -> Result<Field> {
        lookup(&self.keywords, name)
    }

    pub fn number(&self, name: &str) -> Result<Field> {
        lookup(&self.numbers, name)
    }
}

fn lookup(fields: &[(String, Field)], name: &str) -> Result<Field> {
    fields
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, f)| *f)
        .ok_or_else(|| Error::UnknownField { name: name.to_string() })
}

fn indexed_text(tokenizer: &str, record: IndexRecordOption) -> TextOptions {
    TextOptions::default()
        .set_indexing_options(TextFieldIndexing::default().set_tokenizer(tokenizer).set_index_option(record))
}

/// The schema of a new index: every field, the feedback heads last.
pub(crate) fn build_schema(config: &SchemaConfig) -> (Schema, Fields) {
    schema_with(config, true)
}

/// The schema with or without the feedback heads (`head: false`: as indexes were written before them).
pub(crate) fn schema_with(config: &SchemaConfig, head: bool) -> (Schema, Fields) {
    let mut b = Schema::builder();
    // The id is also a fast column, so hits that need only ids never read the document store
    // (indexes written before it existed fall back to the store).
    let id = b.add_text_field("id", STRING | STORED | FAST);
    let ord = b.add_u64_field("ord", INDEXED | FAST | STORED);
    let title = b.add_text_field("title", indexed_text(TEXT_TOKENIZER, IndexRecordOption::WithFreqs) | STORED);
    let body = b.add_text_field("body", STORED);
    let text = b.add_text_field("text", indexed_text(TEXT_TOKENIZER, IndexRecordOption::WithFreqs));
    let words = b.add_text_field("words", indexed_text(WORDS_TOKENIZER, IndexRecordOption::Basic));
    let grams = b.add_text_field("grams", indexed_text(GRAMS_TOKENIZER, IndexRecordOption::WithFreqs));
    let acl = b.add_text_field("acl", STRING | STORED);
    let tenant = b.add_text_field("tenant", STRING);
    let parent = b.add_text_field("parent", STRING | STORED);
    let section = b.add_text_field("section", STORED);
    let section_path = b.add_text_field("section_path", STRING);
    let lines = b.add_u64_field("lines", STORED);
    let hash = b.add_u64_field("hash", STORED);
    let keywords = config
        .keyword_fields
        .iter()
        .map(|n| (n.clone(), b.add_text_field(&format!("{KEYWORD_PREFIX}{n}"), STRING | STORED)))
        .collect();
    let numbers = config
        .numeric_fields
        .iter()
        .map(|n| {
            let opts = NumericOptions::default().set_indexed().set_fast().set_stored();
            (n.clone(), b.add_f64_field(&format!("{NUMBER_PREFIX}{n}"), opts))
        })
        .collect();
    // Last, so that the fields before it keep their numbers in indexes written without it.
    let head = head.then(|| b.add_text_field("head", STORED));
    let fields = Fields {
        id,
        ord,
        title,
        body,
        text,
        words,
        grams,
        acl,
        tenant,
        parent,
        section,
        section_path,
        lines,
        hash,
        keywords,
        numbers,
        head,
    };
    (b.build(), fields)
}

/// Recovers the fields of an existing schema, checking it is a Braid schema: today's, or one
/// written before the feedback heads existed.
pub(crate) fn fields_of(schema: &Schema, config: &SchemaConfig) -> Result<Fields> {
    let names = |s: &Schema| s.fields().map(|(_, e)| e.name().to_string()).collect::<Vec<_>>();
    let found = names(schema);
    [true, false]
        .into_iter()
        .map(|head| schema_with(config, head))
        .find(|(expected, _)| names(expected) == found)
        .map(|(_, fields)| fields)
        .ok_or_else(|| {
            Error::Lexical(
                "the index schema does not match its Braid configuration (was it written by another program?)".into(),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cjk_terms_weigh_the_title_by_their_own_boost() {
        let config = SchemaConfig::default();
        assert_eq!(config.title_boost_of("refund"), 0.1);
        assert_eq!(config.title_boost_of("fbx2210"), 0.1);
        assert_eq!(config.title_boost_of("退款"), 0.5);
        assert_eq!(config.title_boost_of("同期"), 0.5);
        assert_eq!(config.title_boost_of("동기"), 0.5);
        // An index created before the setting weighs every term alike.
        let before = SchemaConfig { title_boost: 0.1, cjk_title_boost: None, ..SchemaConfig::default() };
        assert_eq!(before.title_boost_of("退款"), 0.1);
        assert!(SchemaConfig { cjk_title_boost: Some(f32::NAN), ..SchemaConfig::default() }.validate().is_err());
        assert!(SchemaConfig { cjk_title_boost: Some(-1.0), ..SchemaConfig::default() }.validate().is_err());
    }

    #[test]
    fn a_stored_schema_without_the_cjk_boost_reads_as_none() {
        let mut json = serde_json::to_value(SchemaConfig::default()).unwrap();
        assert_eq!(json["cjk_title_boost"], 0.5);
        json.as_object_mut().unwrap().remove("cjk_title_boost");
        let old: SchemaConfig = serde_json::from_value(json).unwrap();
        assert_eq!(old.cjk_title_boost, None);
    }
}
