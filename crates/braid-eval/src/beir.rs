//! Reading datasets in the BEIR layout.
//!
//! A BEIR directory holds `corpus.jsonl` (one `{"_id", "title", "text"}` object a
//! line), `queries.jsonl` (`{"_id", "text"}`) and `qrels/<split>.tsv` (`query-id`,
//! `corpus-id`, integer `score`). Unknown fields are ignored; ids are strings (a
//! JSON number is accepted and kept as its decimal text).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{EvalError, Result};

/// One document of a corpus.
#[derive(Debug, Clone, PartialEq)]
pub struct CorpusDoc {
    /// The document id (`_id`).
    pub id: String,
    /// The title; empty when absent or `null`.
    pub title: String,
    /// The body text; empty when absent or `null`.
    pub text: String,
    /// Principals allowed to see the document, from an `"acl": [..]` array;
    /// empty when absent. (BEIR sets carry none; Braid's own corpora may.)
    pub acl: Vec<String>,
    /// The `metadata` object; empty when absent or `null`.
    pub metadata: Map<String, Value>,
}

/// One query.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// The query id (`_id`).
    pub id: String,
    /// The query text; empty when absent or `null`.
    pub text: String,
    /// The `metadata` object; empty when absent or `null`.
    pub metadata: Map<String, Value>,
}

impl Query {
    /// The access tokens the query is asked with (`metadata.principal`, an array of
    /// strings), or `None` when it names none (a public query).
    pub fn principal_tokens(&self) -> Option<impl Iterator<Item = &str>> {
        let tokens = self.metadata.get("principal")?.as_array()?;
        Some(tokens.iter().filter_map(|t| t.as_str()))
    }
}

/// Relevance judgments: query id → (doc id → grade).
///
/// Grades are integers, higher is more relevant; a grade of 0 or below marks a
/// judged but non-relevant document. When a (query, doc) pair appears twice,
/// the later row wins, as in BEIR's loader.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Qrels {
    by_query: BTreeMap<String, HashMap<String, i32>>,
}

impl Qrels {
    /// The judgments of query `query_id`, if it has any.
    pub fn get(&self, query_id: &str) -> Option<&HashMap<String, i32>> {
        self.by_query.get(query_id)
    }

    /// Ids of the judged queries, sorted (byte order).
    pub fn query_ids(&self) -> Vec<&str> {
        self.by_query.keys().map(String::as_str).collect()
    }

    /// Number of judged queries.
    pub fn len(&self) -> usize {
        self.by_query.len()
    }

    /// Whether no query is judged.
    pub fn is_empty(&self) -> bool {
        self.by_query.is_empty()
    }

    /// Number of distinct (query, doc) judgments.
    pub fn judgment_count(&self) -> usize {
        self.by_query.values().map(HashMap::len).sum()
    }

    /// All judgments as `(query id, doc id, grade)`, queries in sorted order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str, i32)> + '_ {
        self.by_query.iter().flat_map(|(q, docs)| docs.iter().map(move |(d, g)| (q.as_str(), d.as_str(), *g)))
    }

    fn insert(&mut self, query_id: String, doc_id: String, grade: i32) {
        self.by_query.entry(query_id).or_default().insert(doc_id, grade);
    }
}

impl FromIterator<(String, String, i32)> for Qrels {
    /// Builds qrels from `(query id, doc id, grade)` triples; a later triple for
    /// the same pair wins.
    fn from_iter<I: IntoIterator<Item = (String, String, i32)>>(iter: I) -> Self {
        let mut qrels = Qrels::default();
        for (q, d, g) in iter {
            qrels.insert(q, d, g);
        }
        qrels
    }
}

/// A BEIR dataset ready to evaluate: the judged queries of one split and their
/// qrels. The corpus is not held in memory; stream it with [`read_corpus`] from
/// [`Dataset::corpus_path`].
#[derive(Debug, Clone)]
pub struct Dataset {
    /// The dataset's name: the directory's last component (`scifact`).
    pub name: String,
    /// The dataset directory.
    pub root: PathBuf,
    /// Only the queries judged in the split, in qrels order (sorted by id).
    pub queries: Vec<Query>,
    /// The split's judgments.
    pub qrels: Qrels,
}

impl Dataset {
    /// Loads split `split` (BEIR uses `"test"`) of the BEIR directory `dir`.
    ///
    /// Reads `dir/qrels/<split>.tsv` and `dir/queries.jsonl`, keeping only the
    /// queries the qrels judge, exactly as BEIR's `GenericDataLoader` does.
    ///
    /// # Errors
    ///
    /// [`EvalError::Missing`] when neither `corpus.jsonl` nor an `articles/`
    /// folder (a Markdown corpus) exists, or `queries.jsonl` or the qrels file
    /// does not; [`EvalError::Io`] / [`EvalError::Parse`] for
    /// unreadable or malformed files; [`EvalError::UnresolvedQuery`] when the
    /// qrels judge a query id that `queries.jsonl` lacks.
    pub fn load(dir: &Path, split: &str) -> Result<Dataset> {
        let corpus = dir.join("corpus.jsonl");
        if !corpus.is_file() && !dir.join("articles").is_dir() {
            return Err(EvalError::Missing { path: corpus });
        }
        let qrels_path = dir.join("qrels").join(format!("{split}.tsv"));
        let qrels = read_qrels(&qrels_path)?;
        let mut all: HashMap<String, Query> =
            read_queries(&dir.join("queries.jsonl"))?.into_iter().map(|q| (q.id.clone(), q)).collect();
        let queries = qrels
            .query_ids()
            .into_iter()
            .map(|id| {
                all.remove(id)
                    .ok_or_else(|| EvalError::UnresolvedQuery { qrels: qrels_path.clone(), query_id: id.to_owned() })
            })
            .collect::<Result<Vec<_>>>()?;
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(Dataset { name, root: dir.to_path_buf(), queries, qrels })
    }

    /// `root/corpus.jsonl`.
    pub fn corpus_path(&self) -> PathBuf {
        self.root.join("corpus.jsonl")
    }

    /// `root/articles`, when the corpus is a folder of Markdown articles rather
    /// than a `corpus.jsonl`.
    pub fn articles_dir(&self) -> Option<PathBuf> {
        let dir = self.root.join("articles");
        (!self.corpus_path().is_file() && dir.is_dir()).then_some(dir)
    }
}

/// Streams the documents of a `corpus.jsonl` file (or of a directory holding
/// one), one line at a time.
///
/// Blank lines are skipped and unknown fields ignored. A malformed line yields
/// an [`EvalError::Parse`] carrying its 1-based line number, and reading goes
/// on with the next line; an I/O error (including a missing file, reported as
/// [`EvalError::Missing`]) is yielded once and ends the stream.
pub fn read_corpus(path: &Path) -> impl Iterator<Item = Result<CorpusDoc>> {
    let path = if path.is_dir() { path.join("corpus.jsonl") } else { path.to_path_buf() };
    JsonLines::<RawDoc>::open(path).map(|raw| {
        raw.map(|raw| CorpusDoc {
            id: raw.id.into_string(),
            title: raw.title.unwrap_or_default(),
            text: raw.text.unwrap_or_default(),
            acl: raw.acl.unwrap_or_default(),
            metadata: raw.metadata.unwrap_or_default(),
        })
    })
}

/// Reads every query of a `queries.jsonl` file, in file order.
///
/// # Errors
///
/// [`EvalError::Missing`] / [`EvalError::Io`] when the file cannot be read,
/// [`EvalError::Parse`] with the line number of the first malformed line.
pub fn read_queries(path: &Path) -> Result<Vec<Query>> {
    JsonLines::<RawQuery>::open(path.to_path_buf())
        .map(|raw| {
            raw.map(|raw| Query {
                id: raw.id.into_string(),
                text: raw.text.unwrap_or_default(),
                metadata: raw.metadata.unwrap_or_default(),
            })
        })
        .collect()
}

/// Reads a qrels TSV file: `query-id`, `corpus-id`, integer `score`.
///
/// The header line is optional, CRLF line ends and blank lines are accepted,
/// and four-column TREC qrels (`qid 0 docid grade`, whitespace-separated) are
/// read too.
///
/// # Errors
///
/// [`EvalError::Missing`] / [`EvalError::Io`] when the file cannot be read,
/// [`EvalError::Parse`] with the line number of the first malformed line.
pub fn read_qrels(path: &Path) -> Result<Qrels> {
    let text = std::fs::read_to_string(path).map_err(|e| EvalError::io(path, e))?;
    let mut qrels = Qrels::default();
    let mut first = true;
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = if line.contains('\t') {
            line.split('\t').map(str::trim).collect()
        } else {
            line.split_whitespace().collect()
        };
        let is_first = std::mem::take(&mut first);
        let (qid, did, score) = match cols.as_slice() {
            [q, d, s] => (*q, *d, *s),
            [q, _, d, s] => (*q, *d, *s),
            _ => {
                return Err(EvalError::Parse {
                    path: path.to_path_buf(),
                    line: line_no,
                    reason: format!("expected 3 tab-separated columns, found {}", cols.len()),
                    source: None,
                })
            }
        };
        match parse_grade(score) {
            Some(grade) => {
                if qid.is_empty() || did.is_empty() {
                    return Err(EvalError::Parse {
                        path: path.to_path_buf(),
                        line: line_no,
                        reason: "empty query or corpus id".into(),
                        source: None,
                    });
                }
                qrels.insert(qid.to_owned(), did.to_owned(), grade);
            }
            // The first line may be the header (`query-id corpus-id score`).
            None if is_first && is_header(score) => {}
            None => {
                return Err(EvalError::Parse {
                    path: path.to_path_buf(),
                    line: line_no,
                    reason: format!("score {score:?} is not an integer"),
                    source: None,
                })
            }
        }
    }
    Ok(qrels)
}

/// A header's score column is a word (`score`, `relevance`), never a number.
fn is_header(score_col: &str) -> bool {
    !score_col.is_empty() && score_col.chars().all(|c| c.is_alphabetic() || c == '-' || c == '_')
}

/// An integer grade; an integral float such as `1.0` is accepted too.
fn parse_grade(s: &str) -> Option<i32> {
    if let Ok(g) = s.parse::<i32>() {
        return Some(g);
    }
    let f = s.parse::<f64>().ok()?;
    let in_range = f.fract() == 0.0 && f >= f64::from(i32::MIN) && f <= f64::from(i32::MAX);
    // Truncation is exact: `f` is integral and within i32's range.
    in_range.then_some(f as i32)
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawId {
    Str(String),
    Num(serde_json::Number),
}

impl RawId {
    fn into_string(self) -> String {
        match self {
            RawId::Str(s) => s,
            RawId::Num(n) => n.to_string(),
        }
    }
}

#[derive(Deserialize)]
struct RawDoc {
    #[serde(rename = "_id")]
    id: RawId,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    acl: Option<Vec<String>>,
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
struct RawQuery {
    #[serde(rename = "_id")]
    id: RawId,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
}

fn parse_json<T: DeserializeOwned>(path: &Path, line: usize, bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|e| {
        // serde_json appends " at line 1 column N"; the line is ours to give.
        let mut reason = e.to_string();
        if let Some(at) = reason.rfind(" at line ") {
            reason.truncate(at);
        }
        if e.column() > 0 {
            reason.push_str(&format!(" (column {})", e.column()));
        }
        EvalError::Parse { path: path.to_path_buf(), line, reason, source: Some(e) }
    })
}

/// Parses each non-blank line of a JSONL file as a `T`.
struct JsonLines<T> {
    path: PathBuf,
    reader: Option<BufReader<File>>,
    pending: Option<EvalError>,
    line: usize,
    buf: Vec<u8>,
    _item: PhantomData<fn() -> T>,
}

impl<T> JsonLines<T> {
    fn open(path: PathBuf) -> Self {
        let (reader, pending) = match File::open(&path) {
            Ok(f) => (Some(BufReader::new(f)), None),
            Err(e) => (None, Some(EvalError::io(&path, e))),
        };
        JsonLines { path, reader, pending, line: 0, buf: Vec::new(), _item: PhantomData }
    }
}

impl<T: DeserializeOwned> Iterator for JsonLines<T> {
    type Item = Result<T>;

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
                    if !self.buf.iter().all(u8::is_ascii_whitespace) {
                        return Some(parse_json(&self.path, self.line, &self.buf));
                    }
                }
                Err(e) => {
                    self.reader = None;
                    return Some(Err(EvalError::io(&self.path, e)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
        let p = dir.join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        File::create(&p).unwrap().write_all(content.as_bytes()).unwrap();
        p
    }

    #[test]
    fn corpus_fields_defaults_and_unknowns() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "corpus.jsonl",
            "{\"_id\": \"a\", \"title\": \"T\", \"text\": \"body\", \"extra\": [1,2]}\n\
             \n\
             {\"_id\": 7, \"text\": \"x\", \"acl\": [\"alice\", \"team:ops\"], \"metadata\": {\"url\": \"u\"}}\r\n\
             {\"_id\": \"c\", \"title\": null, \"text\": null, \"metadata\": null}",
        );
        let docs: Vec<CorpusDoc> = read_corpus(&p).collect::<Result<_>>().unwrap();
        assert_eq!(docs.len(), 3);
        assert_eq!((docs[0].id.as_str(), docs[0].title.as_str(), docs[0].text.as_str()), ("a", "T", "body"));
        assert!(docs[0].acl.is_empty() && docs[0].metadata.is_empty());
        assert_eq!(docs[1].id, "7");
        assert_eq!(docs[1].title, "");
        assert_eq!(docs[1].acl, vec!["alice", "team:ops"]);
        assert_eq!(docs[1].metadata["url"], "u");
        assert_eq!((docs[2].title.as_str(), docs[2].text.as_str()), ("", ""));
        // A directory holding corpus.jsonl is accepted too.
        assert_eq!(read_corpus(dir.path()).count(), 3);
    }

    #[test]
    fn corpus_bad_line_reports_number_and_continues() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "c.jsonl", "{\"_id\": \"a\"}\n\n{\"title\": \"no id\"}\n{\"_id\": \"d\"}\n");
        let items: Vec<_> = read_corpus(&p).collect();
        assert_eq!(items.len(), 3);
        match &items[1] {
            Err(EvalError::Parse { line, reason, source, .. }) => {
                assert_eq!(*line, 3);
                assert!(reason.contains("_id"), "{reason}");
                assert!(!reason.contains("at line"), "{reason}");
                // The parser's own error stays reachable as the source.
                assert!(source.as_ref().is_some_and(|e| e.to_string().contains("_id")), "{source:?}");
            }
            other => panic!("expected a parse error, got {other:?}"),
        }
        assert_eq!(items[2].as_ref().unwrap().id, "d");
    }

    #[test]
    fn missing_files_are_typed() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("nope.jsonl");
        let items: Vec<_> = read_corpus(&gone).collect();
        assert!(matches!(items.as_slice(), [Err(EvalError::Missing { .. })]));
        assert!(matches!(read_queries(&gone), Err(EvalError::Missing { .. })));
        assert!(matches!(read_qrels(&gone), Err(EvalError::Missing { .. })));
        assert!(matches!(Dataset::load(dir.path(), "test"), Err(EvalError::Missing { .. })));
    }

    #[test]
    fn qrels_header_optional_crlf_and_trec_format() {
        let dir = tempfile::tempdir().unwrap();
        let with =
            write(dir.path(), "a.tsv", "query-id\tcorpus-id\tscore\r\nq2\td1\t2\r\nq1\td1\t1\r\n\r\nq1\td2\t0\r\n");
        let without = write(dir.path(), "b.tsv", "q2\td1\t2\nq1\td1\t1\nq1\td2\t0");
        let trec = write(dir.path(), "c.txt", "q2 0 d1 2\nq1 0 d1 1\nq1 0 d2 0.0\n");
        for p in [with, without, trec] {
            let q = read_qrels(&p).unwrap();
            assert_eq!(q.len(), 2);
            assert_eq!(q.judgment_count(), 3);
            assert_eq!(q.query_ids(), vec!["q1", "q2"]);
            assert_eq!(q.get("q1").unwrap()["d2"], 0);
            assert_eq!(q.get("q2").unwrap()["d1"], 2);
            assert!(q.get("q3").is_none());
        }
    }

    #[test]
    fn qrels_bad_rows_are_parse_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "x.tsv", "query-id\tcorpus-id\tscore\nq\td\t1\nq\td\thigh\n");
        assert!(matches!(read_qrels(&p), Err(EvalError::Parse { line: 3, .. })));
        let p = write(dir.path(), "y.tsv", "q\td\t1\nq\td\n");
        assert!(matches!(read_qrels(&p), Err(EvalError::Parse { line: 2, .. })));
    }

    #[test]
    fn dataset_keeps_judged_queries_in_id_order() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "corpus.jsonl", "{\"_id\": \"d1\", \"text\": \"x\"}\n");
        write(
            dir.path(),
            "queries.jsonl",
            "{\"_id\": \"q3\", \"text\": \"three\"}\n{\"_id\": \"q1\", \"text\": \"one\"}\n{\"_id\": \"q2\", \"text\": \"two\"}\n",
        );
        write(dir.path(), "qrels/test.tsv", "query-id\tcorpus-id\tscore\nq3\td1\t1\nq1\td1\t2\n");
        let ds = Dataset::load(dir.path(), "test").unwrap();
        let ids: Vec<&str> = ds.queries.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, vec!["q1", "q3"]);
        assert_eq!(ds.queries[1].text, "three");
        assert_eq!(ds.corpus_path(), dir.path().join("corpus.jsonl"));

        write(dir.path(), "qrels/dev.tsv", "q9\td1\t1\n");
        match Dataset::load(dir.path(), "dev") {
            Err(EvalError::UnresolvedQuery { query_id, .. }) => assert_eq!(query_id, "q9"),
            other => panic!("expected an unresolved query, got {other:?}"),
        }
        assert!(matches!(Dataset::load(dir.path(), "train"), Err(EvalError::Missing { .. })));
    }
}
