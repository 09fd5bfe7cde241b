use std::path::{Path, PathBuf};

use braid_core::{Error, Record, Result};
use braid_lexical::SchemaConfig;

use super::beir::read_documents;
use super::markdown::{read_dir, ChunkOptions};

/// Something records can be read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A JSONL corpus such as BEIR's `corpus.jsonl` (see [`crate::beir`]).
    Beir(PathBuf),
    /// A folder of Markdown (and plain text) articles; each section becomes a record.
    Markdown(PathBuf),
}

impl Source {
    /// Recognises `path`: a `.jsonl` file, a folder holding `corpus.jsonl`, a folder holding
    /// `articles/`, or any other folder (read as Markdown/text files).
    ///
    /// # Errors
    /// [`Error::Io`] when `path` does not exist.
    pub fn detect(path: &Path) -> Result<Source> {
        if path.is_file() {
            return Ok(Source::Beir(path.to_path_buf()));
        }
        if !path.is_dir() {
            return Err(Error::io(path, std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or folder")));
        }
        let corpus = path.join("corpus.jsonl");
        if corpus.is_file() {
            return Ok(Source::Beir(corpus));
        }
        let articles = path.join("articles");
        Ok(Source::Markdown(if articles.is_dir() { articles } else { path.to_path_buf() }))
    }

    /// Streams the source's records. A bad document yields an error and reading goes on
    /// with the next one. Every format reads access through [`crate::access`]: a document
    /// whose access keys are malformed, misspelt or misplaced is an error, never a record left
    /// to the index's policy.
    pub fn records(&self, schema: &SchemaConfig) -> Box<dyn Iterator<Item = Result<Record>> + Send> {
        match self {
            Source::Beir(path) => Box::new(read_documents(path, schema).map(|doc| doc.map(|doc| doc.record))),
            Source::Markdown(dir) => Box::new(read_dir(dir, &ChunkOptions::default()).flat_map(|article| {
                let records: Vec<Result<Record>> = match article.and_then(|a| a.records()) {
                    Ok(records) => records.into_iter().map(Ok).collect(),
                    Err(e) => vec![Err(e)],
                };
                records
            })),
        }
    }

    /// A quick estimate of the number of documents (lines or files), for progress bars.
    pub fn estimate(&self) -> u64 {
        match self {
            Source::Beir(path) => std::fs::read(path).map(|b| bytecount(&b)).unwrap_or(0),
            Source::Markdown(dir) => count_files(dir),
        }
    }
}

fn bytecount(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

fn count_files(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                count_files(&p)
            } else {
                u64::from(matches!(p.extension().and_then(|x| x.to_str()), Some("md" | "markdown" | "txt")))
            }
        })
        .sum()
}
