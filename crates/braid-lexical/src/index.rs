//! The lexical index: a tantivy index, its reader, and immutable snapshots to search.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use braid_core::{AllowedSet, Error, OrdSet, Ordinal, Result, Snippet, Suggestion, Visibility};
use tantivy::collector::TopDocs;
use tantivy::columnar::Column;
use tantivy::directory::MmapDirectory;
use tantivy::query::{QueryParser, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{
    DocAddress, DocSet, Index, IndexReader, ReloadPolicy, Searcher, TantivyDocument, TantivyError, Term, TERMINATED,
};

use crate::analysis::{
    self, for_mode, words_analyzer, ModeAnalyzers, GRAMS_TOKENIZER, HEAD_WORDS, TEXT_TOKENIZER, WORDS_TOKENIZER,
};
use crate::cjk::HanMode;
use crate::ids::SegmentIds;
use crate::legs::{BuiltQuery, Scoring, MAX_QUERY_TERMS};
use crate::phonetic::Phonetic;
use crate::schema::{build_schema, fields_of, Fields, SchemaConfig};
use crate::snippets::SnippetMaker;
use crate::stored::{feedback_read, from_doc, FeedbackRead, Head, StoredRecord};
use crate::synonyms::{SynonymUse, Synonyms, SynonymsHandle};
use crate::view::View;
use crate::visibility::{visibility_query, AllowedCollector, AllowedDocs, OrdCollector};
use crate::vocabulary::Vocabulary;
use crate::writer::{lexical, open_writer, LexicalWriter, LOCK_PATIENCE};

/// Memory budget of the writer's indexing buffer. By default, 128 MiB.
pub const DEFAULT_WRITER_HEAP: usize = 128 * 1024 * 1024;

/// The snippets of one search (see [`Snapshot::snippets`]).
pub struct Snippets {
    maker: Option<SnippetMaker>,
}

impl Snippets {
    /// The passage of `body` with the most distinct query terms, their byte ranges highlighted
    /// (function words never, identifiers whole: see [`crate::HIGHLIGHT_STOP_WORDS`]); the
    /// beginning of `body` when it holds none.
    pub fn of(&self, body: &str) -> Snippet {
        match &self.maker {
            Some(maker) => maker.of(body),
            None => Snippet::default(),
        }
    }
}

/// Decompressed document-store blocks kept per segment (16 KiB each, so at most 16 MiB per
/// segment, filled only by blocks hits were read from). Tantivy's default of 100 re-decompresses
/// most blocks of a corpus the size of SciFact on every search.
const DOC_STORE_CACHE_BLOCKS: usize = 1024;

/// The ranked output of one leg.
#[derive(Debug, Clone, Default)]
pub struct LegOutput {
    /// `(ordinal, raw score)`, best first; only ordinals of the allowed set.
    pub candidates: Vec<(Ordinal, f32)>,
    /// Analysed terms that matched or were expanded, with weights, for highlighting.
    pub highlight: BTreeMap<String, f32>,
    /// The synonyms the query was expanded with (see [`Snapshot::synonyms_held`]).
    pub synonyms: Vec<SynonymUse>,
}

/// A query word and how often it occurs in records the caller may see.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryWord {
    /// The word, lowercased and folded, unstemmed.
    pub word: String,
    /// Records of the allowed set that contain it.
    pub visible_df: usize,
    /// Whether the analyzer drops it as a stop word.
    pub stop_word: bool,
    /// For a content word no allowed record holds: the closest word one does hold.
    pub suggestion: Option<Suggestion>,
}

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
        let snapshot = Snapshot::new(reader.searcher(), fields.clone(), config.clone(), synonyms.clone())?;
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
        let snapshot =
            Snapshot::new(self.reader.searcher(), self.fields.clone(), self.config.clone(), self.synonyms.clone())?;
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

/// An immutable view of one commit.
pub struct Snapshot {
    pub(crate) searcher: Searcher,
    pub(crate) fields: Fields,
    pub(crate) config: SchemaConfig,
    pub(crate) analyzer: TextAnalyzer,
    /// The analysed words snippets never mark ([`crate::snippets::stop_terms`]).
    highlight_stop: std::collections::HashSet<String>,
    words: TextAnalyzer,
    /// Analyzers for queries in a CJK language: Han cut as records in that language are.
    by_mode: [ModeAnalyzers; 2],
    pub(crate) vocabulary: Vocabulary,
    /// The vocabulary's Chinese words by pinyin (empty without Chinese).
    pub(crate) phonetic: Phonetic,
    /// Each segment's `ord` column, by segment ordinal.
    pub(crate) ord_columns: Vec<Column<u64>>,
    /// Each segment's `id` column, where it has one (indexes written before it existed keep
    /// ids in the document store only).
    id_columns: Vec<Option<SegmentIds>>,
    /// Allowed sets already computed on this snapshot, by visibility rule. A snapshot never
    /// changes, so neither does the set a rule admits on it.
    allowed_cache: Mutex<AllowedCache>,
    /// The index's synonym set (read once per request by [`Snapshot::view`]).
    pub(crate) synonyms: SynonymsHandle,
}

/// Bytes of allowed sets (and their keys) one snapshot keeps. Keys name filters that callers
/// choose, so the cache is bounded by size, least recently used first out.
pub const ALLOWED_CACHE_BYTES: usize = 64 * 1024 * 1024;

/// Allowed sets by rule, bounded in bytes ([`ALLOWED_CACHE_BYTES`]).
#[derive(Default)]
struct AllowedCache {
    entries: HashMap<String, (Arc<AllowedDocs>, u64)>,
    bytes: usize,
    clock: u64,
}

impl AllowedCache {
    fn get(&mut self, key: &str) -> Option<Arc<AllowedDocs>> {
        self.clock += 1;
        let clock = self.clock;
        self.entries.get_mut(key).map(|(docs, used)| {
            *used = clock;
            docs.clone()
        })
    }

    fn insert(&mut self, key: String, docs: Arc<AllowedDocs>, budget: usize) {
        let size = key.len() + docs.heap_bytes();
        if size > budget || self.entries.contains_key(&key) {
            return;
        }
        while self.bytes + size > budget {
            let Some(oldest) = self.entries.iter().min_by_key(|(_, (_, used))| *used).map(|(k, _)| k.clone()) else {
                break;
            };
            if let Some((gone, _)) = self.entries.remove(&oldest) {
                self.bytes -= oldest.len() + gone.heap_bytes();
            }
        }
        self.clock += 1;
        self.bytes += size;
        self.entries.insert(key, (docs, self.clock));
    }
}

impl Snapshot {
    fn new(searcher: Searcher, fields: Fields, config: SchemaConfig, synonyms: SynonymsHandle) -> Result<Self> {
        let vocabulary = Vocabulary::build(&searcher, fields.words)?;
        let phonetic = Phonetic::build(&vocabulary);
        let analyzer = config.analyzer.build();
        let highlight_stop = crate::snippets::stop_terms(&analyzer);
        let by_mode = ModeAnalyzers::both(config.analyzer);
        let ord_columns =
            searcher.segment_readers().iter().map(|s| s.fast_fields().u64("ord")).collect::<tantivy::Result<_>>();
        let mut id_columns = Vec::with_capacity(searcher.segment_readers().len());
        for segment in searcher.segment_readers() {
            let column = segment.fast_fields().str("id").map_err(lexical)?;
            id_columns.push(column.map(|c| SegmentIds::read(&c)).transpose().map_err(lexical)?);
        }
        Ok(Snapshot {
            ord_columns: ord_columns.map_err(lexical)?,
            id_columns,
            searcher,
            fields,
            config,
            analyzer,
            highlight_stop,
            words: words_analyzer(),
            by_mode,
            vocabulary,
            phonetic,
            allowed_cache: Mutex::new(AllowedCache::default()),
            synonyms,
        })
    }

    /// The number of live records.
    pub fn num_records(&self) -> u64 {
        self.searcher.num_docs()
    }

    /// The records `visibility` admits: the allowed set every leg is confined to.
    ///
    /// # Errors
    /// [`Error::UnknownField`] when the filter names a field the schema lacks.
    pub fn allowed_set(&self, visibility: Visibility) -> Result<AllowedSet> {
        let docs = self.allowed_docs(&visibility)?;
        Ok(AllowedSet::new(visibility, docs.ords.clone()))
    }

    /// What `visibility` admits on this snapshot, as ordinals and as document ids per segment;
    /// computed once per rule (the key names the principal's tokens, the policy and the filter).
    fn allowed_docs(&self, visibility: &Visibility) -> Result<Arc<AllowedDocs>> {
        let key = format!("{:?}|{:?}|{:?}", visibility.acl_terms(), visibility.tenant_terms(), visibility.filter());
        let cached = self.allowed_cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key);
        if let Some(docs) = cached {
            return Ok(docs);
        }
        let query = visibility_query(&self.fields, visibility)?;
        let mut docs = self.searcher.search(&*query, &AllowedCollector).map_err(lexical)?;
        docs.everything = docs.ords.len() as u64 == self.searcher.num_docs();
        let docs = Arc::new(docs);
        self.allowed_cache.lock().unwrap_or_else(|p| p.into_inner()).insert(key, docs.clone(), ALLOWED_CACHE_BYTES);
        Ok(docs)
    }

    /// The highest ordinal in use, if any record exists.
    ///
    /// # Errors
    /// [`Error::Lexical`] on a damaged index.
    pub fn max_ord(&self) -> Result<Option<Ordinal>> {
        let mut max = None;
        for segment in self.searcher.segment_readers() {
            let column = segment.fast_fields().u64("ord").map_err(lexical)?;
            if segment.num_docs() > 0 {
                max = max.max(Some(column.max_value()));
            }
        }
        Ok(max)
    }

    /// A request's view of this snapshot, confined to `allowed`: the legs and the query's
    /// words run on it, with statistics from the allowed records only.
    ///
    /// # Errors
    /// [`Error::UnknownField`] when the rule's filter names a field the schema lacks.
    pub fn view<'a>(&'a self, allowed: &'a AllowedSet) -> Result<View<'a>> {
        let docs = self.allowed_docs(allowed.visibility())?;
        Ok(View::new(self, allowed, docs))
    }

    /// The text and words analyzers for a query: those of its language when it is CJK (so
    /// it is cut as records in that language are), else the index's.
    pub(crate) fn analyzers(&self, text: &str) -> (&TextAnalyzer, &TextAnalyzer) {
        match HanMode::of(braid_core::Language::detect(text)) {
            Some(mode) => {
                let a = for_mode(&self.by_mode, mode);
                (&a.text, &a.words)
            }
            None => (&self.analyzer, &self.words),
        }
    }

    pub(crate) fn parsed_query(&self, text: &str) -> BuiltQuery {
        let mut parser = QueryParser::new(
            self.searcher.schema().clone(),
            vec![self.fields.text, self.fields.title],
            self.searcher.index().tokenizers().clone(),
        );
        parser.set_field_boost(self.fields.title, self.config.title_boost);
        let (query, _errors) = parser.parse_query_lenient(text);
        let highlight =
            analysis::terms(&self.analyzer, text).into_iter().take(MAX_QUERY_TERMS).map(|t| (t, 1.0)).collect();
        BuiltQuery { scoring: Scoring::Tantivy(query), highlight, synonyms: Vec::new() }
    }

    /// The live document holding `ord`, read straight from the `ord` field's postings.
    pub(crate) fn address_of_ord(&self, ord: Ordinal) -> Result<Option<DocAddress>> {
        let term = Term::from_field_u64(self.fields.ord, ord);
        for (segment_ord, segment) in self.searcher.segment_readers().iter().enumerate() {
            let inverted = segment.inverted_index(self.fields.ord).map_err(lexical)?;
            let Some(mut postings) = inverted.read_postings(&term, IndexRecordOption::Basic).map_err(lexical)? else {
                continue;
            };
            let alive = segment.alive_bitset();
            let mut doc = postings.doc();
            while doc != TERMINATED {
                if alive.is_none_or(|a| a.is_alive(doc)) {
                    return Ok(Some(DocAddress::new(segment_ord as u32, doc)));
                }
                doc = postings.advance();
            }
        }
        Ok(None)
    }

    /// Reads back stored records by ordinal, in the given order; missing ordinals are skipped.
    ///
    /// # Errors
    /// [`Error::Lexical`] when the document store cannot be read.
    pub fn records(&self, ords: &[Ordinal]) -> Result<Vec<StoredRecord>> {
        self.read_docs(ords, |doc| from_doc(&self.fields, doc))
    }

    /// `read` of each live record's stored document, by ordinal, in the given order; missing
    /// ordinals are skipped.
    fn read_docs<T>(&self, ords: &[Ordinal], read: impl Fn(&TantivyDocument) -> T) -> Result<Vec<T>> {
        let mut out = Vec::with_capacity(ords.len());
        for &ord in ords {
            if let Some(address) = self.address_of_ord(ord)? {
                let doc: TantivyDocument = self.searcher.doc(address).map_err(lexical)?;
                out.push(read(&doc));
            }
        }
        Ok(out)
    }

    /// What lexical feedback reads of records by ordinal ([`FeedbackRead`]), in the given
    /// order; missing ordinals are skipped. Their stored heads are read when `words` is the
    /// number they hold ([`HEAD_WORDS`]), their text otherwise.
    ///
    /// # Errors
    /// [`Error::Lexical`] when the document store cannot be read.
    pub(crate) fn feedback_reads(&self, ords: &[Ordinal], words: usize) -> Result<Vec<FeedbackRead>> {
        self.read_docs(ords, |doc| feedback_read(&self.fields, doc, words == HEAD_WORDS))
    }

    /// The analysed terms of a feedback read's first `words` words: the stored ones, or its
    /// text analysed as the writer analyses heads ([`analysis::head_terms`]).
    pub(crate) fn head_terms<'r>(&self, read: &'r FeedbackRead, words: usize) -> Vec<Cow<'r, str>> {
        match &read.head {
            Head::Terms(terms) => terms.split(' ').filter(|t| !t.is_empty()).map(Cow::Borrowed).collect(),
            Head::Text(text) => {
                analysis::head_terms(&self.analyzer, &self.by_mode, text, words).into_iter().map(Cow::Owned).collect()
            }
        }
    }

    /// The external ids of records by ordinal, in the given order (`None` for an ordinal no
    /// live record holds), read from the id column without touching the document store.
    ///
    /// # Errors
    /// [`Error::Lexical`] when the index cannot be read.
    pub fn ids_of(&self, ords: &[Ordinal]) -> Result<Vec<Option<String>>> {
        let mut out = Vec::with_capacity(ords.len());
        for &ord in ords {
            let Some(address) = self.address_of_ord(ord)? else {
                out.push(None);
                continue;
            };
            let id = match self.id_columns.get(address.segment_ord as usize).and_then(Option::as_ref) {
                Some(ids) => ids
                    .get(address.doc_id)
                    .ok_or_else(|| Error::Lexical(format!("record without id at {address:?}")))?
                    .to_string(),
                None => {
                    let doc: TantivyDocument = self.searcher.doc(address).map_err(lexical)?;
                    from_doc(&self.fields, &doc).id
                }
            };
            out.push(Some(id));
        }
        Ok(out)
    }

    /// The chunks of `parent` that the allowed set admits, in line order (chunks without a
    /// line range last, by id).
    ///
    /// # Errors
    /// [`Error::Lexical`] when the document store cannot be read.
    pub fn children(&self, parent: &str, allowed: &AllowedSet) -> Result<Vec<StoredRecord>> {
        let query = TermQuery::new(Term::from_field_text(self.fields.parent, parent), IndexRecordOption::Basic);
        let ords: OrdSet = self.searcher.search(&query, &OrdCollector).map_err(lexical)?;
        let visible: Vec<Ordinal> = ords.iter().filter(|o| allowed.contains(*o)).collect();
        let mut records = self.records(&visible)?;
        records.sort_by(|a, b| {
            let key = |r: &StoredRecord| r.lines.map_or((u32::MAX, u32::MAX), |l| l);
            key(a).cmp(&key(b)).then_with(|| a.id.cmp(&b.id))
        });
        Ok(records)
    }

    /// The live record with external id `id`, if any (for upserts and `read`).
    ///
    /// # Errors
    /// [`Error::Lexical`] when the document store cannot be read.
    pub fn record_by_id(&self, id: &str) -> Result<Option<StoredRecord>> {
        let query = TermQuery::new(Term::from_field_text(self.fields.id, id), IndexRecordOption::Basic);
        let top = self.searcher.search(&query, &TopDocs::with_limit(1)).map_err(lexical)?;
        match top.first() {
            Some((_, address)) => {
                let doc: TantivyDocument = self.searcher.doc(*address).map_err(lexical)?;
                Ok(Some(from_doc(&self.fields, &doc)))
            }
            None => Ok(None),
        }
    }

    /// Every live record's ordinal, read from the `ord` column: no stored document is read.
    ///
    /// # Errors
    /// [`Error::Lexical`] for a live document without an ordinal (a damaged index).
    pub fn ords(&self) -> Result<Vec<Ordinal>> {
        let mut out = Vec::with_capacity(self.searcher.num_docs() as usize);
        for (segment, ords) in self.searcher.segment_readers().iter().zip(&self.ord_columns) {
            for doc_id in segment.doc_ids_alive() {
                out.push(
                    ords.first(doc_id).ok_or_else(|| Error::Lexical(format!("document {doc_id} has no ordinal")))?,
                );
            }
        }
        Ok(out)
    }

    /// Every live record's `(id, ordinal)`, read from the `id` and `ord` columns; only a
    /// segment written before the id column existed reads its ids from the document store.
    ///
    /// # Errors
    /// [`Error::Lexical`] when the document store cannot be read, or for a live document
    /// without an id or an ordinal (a damaged index).
    pub fn ids(&self) -> Result<Vec<(String, Ordinal)>> {
        let mut out = Vec::with_capacity(self.searcher.num_docs() as usize);
        let segments = self.searcher.segment_readers().iter().zip(&self.ord_columns).zip(&self.id_columns);
        for ((segment, ords), ids) in segments {
            let store = match ids {
                Some(_) => None,
                None => Some(segment.get_store_reader(64).map_err(lexical)?),
            };
            for doc_id in segment.doc_ids_alive() {
                let ord =
                    ords.first(doc_id).ok_or_else(|| Error::Lexical(format!("document {doc_id} has no ordinal")))?;
                let id = match (ids, &store) {
                    (Some(ids), _) => ids.get(doc_id).map(str::to_string),
                    (None, Some(store)) => {
                        let doc: TantivyDocument = store.get(doc_id).map_err(lexical)?;
                        Some(from_doc(&self.fields, &doc).id)
                    }
                    (None, None) => None,
                };
                out.push((id.ok_or_else(|| Error::Lexical(format!("document {doc_id} has no id")))?, ord));
            }
        }
        Ok(out)
    }

    /// For each ordinal, the synonyms among `uses` whose every term its record holds (title or
    /// body): what explain reports. Ordinals no live record holds get none.
    ///
    /// # Errors
    /// [`Error::Lexical`] when the index cannot be read.
    pub fn synonyms_held(&self, uses: &[SynonymUse], ords: &[Ordinal]) -> Result<Vec<Vec<braid_core::SynonymMatch>>> {
        let mut out = Vec::with_capacity(ords.len());
        for &ord in ords {
            let mut held = Vec::new();
            if !uses.is_empty() {
                if let Some(address) = self.address_of_ord(ord)? {
                    let segment = self.searcher.segment_reader(address.segment_ord);
                    let inverted = segment.inverted_index(self.fields.text).map_err(lexical)?;
                    for u in uses {
                        let mut all = true;
                        for t in &u.terms {
                            let term = Term::from_field_text(self.fields.text, t);
                            let holds =
                                match inverted.read_postings(&term, IndexRecordOption::Basic).map_err(lexical)? {
                                    // `seek` wants a target at or after the current document.
                                    Some(mut postings) => {
                                        postings.doc() == address.doc_id
                                            || (postings.doc() < address.doc_id
                                                && postings.seek(address.doc_id) == address.doc_id)
                                    }
                                    None => false,
                                };
                            if !holds {
                                all = false;
                                break;
                            }
                        }
                        if all {
                            held.push(u.matched.clone());
                        }
                    }
                }
            }
            out.push(held);
        }
        Ok(out)
    }

    /// Makes the snippets of one search: passages of hit bodies around the terms of
    /// `highlight`, at most `max_chars` long (0 turns them off).
    pub fn snippets(&self, highlight: &BTreeMap<String, f32>, max_chars: usize) -> Snippets {
        let maker = (max_chars > 0).then(|| {
            let finder = self.config.analyzer.build_finding(highlight.keys().map(String::as_str));
            SnippetMaker::new(finder, &self.highlight_stop, highlight, max_chars)
        });
        Snippets { maker }
    }
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

#[cfg(test)]
mod tests {
    use braid_core::OrdSet;

    use super::*;

    /// `ids()` and `ords()` read the columns, and agree with the records written, across
    /// segments and deletes.
    #[test]
    fn ids_and_ords_come_from_the_columns() {
        use braid_core::Record;
        let index = LexicalIndex::create(None, SchemaConfig::default()).unwrap();
        let mut writer = index.writer(crate::DEFAULT_WRITER_HEAP).unwrap();
        for (ord, id) in [(3, "c"), (1, "a"), (7, "g")] {
            writer.upsert(ord, &Record::new(id).body("text"), 0).unwrap();
        }
        writer.commit().unwrap();
        writer.upsert(9, &Record::new("i").body("more"), 0).unwrap();
        writer.delete("a");
        writer.commit().unwrap();
        index.reload().unwrap();
        let snapshot = index.snapshot();
        let mut ids = snapshot.ids().unwrap();
        ids.sort();
        assert_eq!(ids, [("c".to_string(), 3), ("g".to_string(), 7), ("i".to_string(), 9)]);
        let mut ords = snapshot.ords().unwrap();
        ords.sort_unstable();
        assert_eq!(ords, [3, 7, 9]);
    }

    fn docs(ords: u64) -> Arc<AllowedDocs> {
        let mut docs = AllowedDocs::default();
        docs.ords = (0..ords).collect::<OrdSet>();
        Arc::new(docs)
    }

    /// Keys are filters callers choose: however many they send, the cache stays within its
    /// byte budget, dropping the least recently used first; an entry above the budget is not
    /// kept at all.
    #[test]
    fn allowed_cache_stays_within_its_byte_budget() {
        let one = docs(64 * 1000);
        let budget = 10 * (one.heap_bytes() + 16);
        let mut cache = AllowedCache::default();
        for i in 0..100 {
            cache.insert(format!("rule-{i:04}"), one.clone(), budget);
            if i == 50 {
                // Touched, an old entry outlives the ones inserted just after it.
                assert!(cache.get("rule-0045").is_some());
            }
            if i == 52 {
                assert!(cache.get("rule-0041").is_none() && cache.get("rule-0042").is_none());
                assert!(cache.get("rule-0045").is_some());
            }
            assert!(cache.bytes <= budget, "{} > {budget} after {i}", cache.bytes);
        }
        assert!(cache.entries.len() <= 10);
        assert!(cache.get("rule-0099").is_some());
        assert!(cache.get("rule-0000").is_none());
        let huge = docs(64 * 1_000_000);
        cache.insert("huge".into(), huge, budget);
        assert!(cache.get("huge").is_none());
        let total: usize = cache.entries.iter().map(|(k, (d, _))| k.len() + d.heap_bytes()).sum();
        assert_eq!(total, cache.bytes);
    }
}
