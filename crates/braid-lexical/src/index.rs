//! The lexical index: a tantivy index on disk or in memory, its single writer, and the
//! current [`Snapshot`] (one commit) that searches run on.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use braid_core::{Error, Result};
use tantivy::directory::MmapDirectory;
use tantivy::{Index, IndexReader, ReloadPolicy, TantivyError};

use crate::analysis::{self, words_analyzer, GRAMS_TOKENIZER, TEXT_TOKENIZER, WORDS_TOKENIZER};
use crate::error::lexical;
use crate::schema::{build_schema, fields_of, Fields, SchemaConfig};
use crate::snapshot::Snapshot;
use crate::synonyms::{Synonyms, SynonymsHandle};
use crate::writer::{open_writer, LexicalWriter, LOCK_PATIENCE};

/// Memory budget of the writer's indexing buffer. By default, 128 MiB.
pub const DEFAULT_WRITER_HEAP: usize = 128 * 1024 * 1024;
/// Decompressed document-store blocks kept per segment (16 KiB each, so at most 16 MiB per
/// segment, filled only by blocks hits were read from). Tantivy's default of 100 re-decompresses
/// most blocks of a corpus the size of SciFact on every search.
const DOC_STORE_CACHE_BLOCKS: usize = 1024;
/// An inverted index over records: BM25, fuzzy recall, suggestions and stored fields.
pub struct LexicalIndex {
    index: Index,
    reader: IndexReader,
    fields: Fields,
    config: SchemaConfig,
    path: Option<PathBuf>,
    snapshot: RwLock<Arc<Snapshot>>,
    synonyms: SynonymsHandle,
}

impl LexicalIndex {
    /// Creates an index in the empty directory `dir`, or in memory when `dir` is `None`.
    ///
    /// # Errors
    /// [`Error::Io`] when the directory cannot be used, [`Error::Lexical`] when it already
    /// holds an index.
    pub fn create(dir: Option<&Path>, config: SchemaConfig) -> Result<Self> {
        config.validate()?;
        let (schema, fields) = build_schema(&config);
        let index = match dir {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
                let mmap = MmapDirectory::open(dir).map_err(lexical)?;
                Index::create(mmap, schema, store_settings()).map_err(lexical)?
            }
            None => Index::create_in_ram(schema),
        };
        Self::from_index(index, fields, config, dir.map(Path::to_path_buf))
    }

    /// Opens the index in `dir`, written with `config`. Every file's checksum is verified
    /// first (one read of the index): tantivy can panic on a damaged segment file, so none is
    /// parsed before it is known to be intact.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the missing or damaged file.
    pub fn open(dir: &Path, config: SchemaConfig) -> Result<Self> {
        if !dir.join("meta.json").is_file() {
            return Err(Error::Corrupt { path: dir.join("meta.json"), reason: "missing".into() });
        }
        let index = Index::open_in_dir(dir).map_err(|e| corrupt(dir, e))?;
        verify_checksums(&index, dir)?;
        let fields = fields_of(&index.schema(), &config)?;
        Self::from_index(index, fields, config, Some(dir.to_path_buf())).map_err(|e| match e {
            Error::Lexical(reason) => Error::Corrupt { path: dir.join("meta.json"), reason },
            Error::LexicalEngine { source } => {
                Error::Corrupt { path: dir.join("meta.json"), reason: source.to_string() }
            }
            other => other,
        })
    }

    fn from_index(index: Index, fields: Fields, config: SchemaConfig, path: Option<PathBuf>) -> Result<Self> {
        let tokenizers = index.tokenizers();
        tokenizers.register(TEXT_TOKENIZER, config.analyzer.build());
        tokenizers.register(WORDS_TOKENIZER, words_analyzer());
        tokenizers.register(GRAMS_TOKENIZER, analysis::grams_analyzer());
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .doc_store_cache_num_blocks(DOC_STORE_CACHE_BLOCKS)
            .try_into()
            .map_err(lexical)?;
        let synonyms = SynonymsHandle::default();
        let snapshot = Snapshot::new(reader.searcher(), fields.clone(), config.clone(), synonyms.clone(), None)?;
        Ok(LexicalIndex { index, reader, fields, config, path, snapshot: RwLock::new(Arc::new(snapshot)), synonyms })
    }

    /// The schema configuration.
    pub fn config(&self) -> &SchemaConfig {
        &self.config
    }

    /// Whether records are written with the analysed first words lexical feedback reads
    /// (indexes written before 2026-12-03 are not: their feedback analyses the stored text,
    /// with the same result and more work a query).
    pub fn stores_feedback_heads(&self) -> bool {
        self.fields.head.is_some()
    }

    /// Opens the single writer, with an indexing buffer of `heap_bytes`.
    ///
    /// # Errors
    /// [`Error::LockBusy`] when another writer (thread or process) holds the index, after
    /// waiting a quarter of a second for it (a forked process may still share a lock that a
    /// writer of this process released).
    pub fn writer(&self, heap_bytes: usize) -> Result<LexicalWriter> {
        let writer = open_writer(&self.index, heap_bytes.max(15_000_000), LOCK_PATIENCE).map_err(|e| match e {
            TantivyError::LockFailure(..) => {
                Error::LockBusy { path: self.path.clone().unwrap_or_else(|| PathBuf::from("<memory>")) }
            }
            other => lexical(other),
        })?;
        // A writer killed mid-commit leaves files no commit references (for example a
        // `<segment>.<opstamp>.del` that this writer would create again under the same name and
        // fail on): remove them before writing anything.
        writer.garbage_collect_files().wait().map_err(lexical)?;
        Ok(LexicalWriter::new(writer, heap_bytes.max(15_000_000), self.fields.clone(), self.config.analyzer))
    }

    /// Picks up the latest commit: later calls to [`LexicalIndex::snapshot`] see it.
    ///
    /// # Errors
    /// [`Error::Lexical`] when the new commit cannot be read.
    pub fn reload(&self) -> Result<()> {
        self.reader.reload().map_err(lexical)?;
        let snapshot = Snapshot::new(
            self.reader.searcher(),
            self.fields.clone(),
            self.config.clone(),
            self.synonyms.clone(),
            Some(&self.snapshot()),
        )?;
        *self.snapshot.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(snapshot);
        Ok(())
    }

    /// Replaces the synonym set queries are expanded with (see [`Synonyms`]); requests that
    /// start after the call use it, on every snapshot. Records are untouched: no re-index.
    pub fn set_synonyms(&self, synonyms: Synonyms) {
        self.synonyms.set(synonyms, &self.config.analyzer.build());
    }

    /// The synonym set in use (empty by default).
    pub fn synonyms(&self) -> Arc<Synonyms> {
        self.synonyms.synonyms()
    }

    /// The current snapshot. Searching it never blocks on writing.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Checks every file of the committed segments against its checksum.
fn verify_checksums(index: &Index, dir: &Path) -> Result<()> {
    let damaged = index.validate_checksum().map_err(|e| corrupt(dir, e))?;
    match damaged.into_iter().min() {
        Some(file) => Err(Error::Corrupt { path: dir.join(file), reason: "checksum mismatch".into() }),
        None => Ok(()),
    }
}

/// A tantivy error met while opening the index in `dir`, as [`Error::Corrupt`] naming the
/// file it concerns (`meta.json` when tantivy does not say).
fn corrupt(dir: &Path, e: TantivyError) -> Error {
    use tantivy::directory::error::OpenReadError;
    let file = match &e {
        TantivyError::OpenReadError(OpenReadError::FileDoesNotExist(p)) => Some(p.clone()),
        TantivyError::OpenReadError(OpenReadError::IoError { filepath, .. }) => Some(filepath.clone()),
        // `DataCorruption` keeps its file private; its message reads "(in file `"<name>"`)".
        TantivyError::DataCorruption(c) => {
            let text = format!("{c:?}");
            text.split_once("in file `\"").and_then(|(_, rest)| rest.split_once("\"`")).map(|(f, _)| PathBuf::from(f))
        }
        _ => None,
    };
    Error::Corrupt { path: dir.join(file.unwrap_or_else(|| PathBuf::from("meta.json"))), reason: e.to_string() }
}

/// How a new index stores its documents: zstd at level 9 in tantivy's 16 KiB blocks instead of
/// its default lz4. On the 10,000-record scale corpus (`scripts/scale.sh`) the document store
/// shrinks from 0.76 of the raw text to 0.53 (level 3) or 0.52 (level 9, at the same indexing
/// time), the whole lexical index from 1.73 to 1.49 times the raw text. Decompression is the
/// same at every level. Indexes created before keep the compressor their settings name.
fn store_settings() -> tantivy::IndexSettings {
    tantivy::IndexSettings {
        docstore_compression: tantivy::store::Compressor::Zstd(tantivy::store::ZstdCompressor {
            compression_level: Some(9),
        }),
        ..tantivy::IndexSettings::default()
    }
}
