//! A snapshot: one commit of the lexical index, immutable, shared by the requests that search
//! it. It answers what a commit holds — the records a visibility rule admits (cached per
//! rule), stored records by ordinal or id, chunks, ids — and makes the request [`View`]s
//! (`crate::view`) that run the legs.
//!
//! [`View`]: crate::View

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use braid_core::{AllowedSet, Error, OrdSet, Ordinal, Result, Visibility};
use tantivy::index::SegmentId;
use tantivy::query::{EnableScoring, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{DocAddress, DocId, DocSet, TantivyDocument, Term, TERMINATED};

use crate::allowed_cache::ScopedCaches;
use crate::analysis::{self, for_mode, words_analyzer, ModeAnalyzers, HEAD_WORDS};
use crate::cjk::HanMode;
use crate::error::lexical;
use crate::partition::Part;
use crate::phonetic::Phonetic;
use crate::saved_vocabulary::SavedVocabulary;
use crate::schema::{Fields, SchemaConfig};
use crate::segments::{Scope, Segments};
use crate::snippets::{SnippetMaker, Snippets};
use crate::stored::{feedback_read, from_doc, FeedbackRead, Head, IndexedRecord};
use crate::synonyms::{SynonymUse, SynonymsHandle};
use crate::visibility::{visibility_query, AllowedDocs, OrdCollector, RuleWeight};
use crate::vocabulary::{ScopedVocabulary, Vocabulary};

/// One commit of the index, immutable (see the module docs).
pub struct Snapshot {
    /// The segments of every partition's commit.
    pub(crate) segments: Segments,
    pub(crate) fields: Fields,
    pub(crate) config: SchemaConfig,
    pub(crate) analyzer: TextAnalyzer,
    /// The analysed words snippets never mark ([`crate::snippets::stop_terms`]).
    highlight_stop: HashSet<String>,
    words: TextAnalyzer,
    /// Analyzers for queries in a CJK language: Han cut as records in that language are.
    by_mode: [ModeAnalyzers; 2],
    /// The vocabulary of every partition's words, in two tiers: one for the large segments and
    /// one for the small ones ([`tiers_of`]).
    pub(crate) vocabularies: Vec<Tier>,
    /// The vocabulary's Chinese words by pinyin (empty without Chinese).
    pub(crate) phonetic: Phonetic,
    /// Allowed sets already computed on this snapshot, by visibility rule. A snapshot never
    /// changes, so neither does the set a rule admits on it.
    allowed_cache: ScopedCaches,
    /// The index's synonym set (read once per request by [`Snapshot::view`]).
    pub(crate) synonyms: SynonymsHandle,
}

impl Snapshot {
    /// The snapshot of `segments`; `previous`, the snapshot it replaces, lends the work its
    /// vocabulary shares with this one, and `saved` the large tier's vocabulary when it holds
    /// that of the same segments (the result is the same without either).
    pub(crate) fn new(
        segments: Segments,
        fields: Fields,
        config: SchemaConfig,
        synonyms: SynonymsHandle,
        previous: Option<&Snapshot>,
        saved: Option<&SavedVocabulary>,
    ) -> Result<Self> {
        let built: &[Tier] = previous.map_or(&[], |p| &p.vocabularies);
        let mut vocabularies = Vec::new();
        let (large, small) = tiers_of(segments.readers());
        for (readers, large) in [(large, true), (small, false)] {
            if readers.is_empty() {
                continue;
            }
            let ids: Vec<SegmentId> = readers.iter().map(|r| r.segment_id()).collect();
            // Segments never change, and document frequencies count deleted records too: a
            // tier of the same segments keeps its vocabulary.
            let vocabulary = match built.iter().find(|t| t.ids == ids) {
                Some(tier) => tier.vocabulary.clone(),
                None => match saved.filter(|_| large).and_then(|saved| saved.load(&ids)) {
                    Some(vocabulary) => Arc::new(vocabulary),
                    None => {
                        // The tier before that shares most segments with it lends its work.
                        let shared = |t: &&Tier| t.ids.iter().filter(|id| ids.contains(id)).count();
                        let lend =
                            built.iter().filter(|t| shared(t) > 0).max_by_key(shared).map(|t| t.vocabulary.as_ref());
                        let owned: Vec<tantivy::SegmentReader> = readers.into_iter().cloned().collect();
                        Arc::new(Vocabulary::build(&owned, fields.words, lend)?)
                    }
                },
            };
            vocabularies.push(Tier { ids, vocabulary, large });
        }
        let all: Vec<Arc<Vocabulary>> = vocabularies.iter().map(|t| t.vocabulary.clone()).collect();
        let phonetic = Phonetic::build(&all);
        let analyzer = config.analyzer.build();
        let highlight_stop = crate::snippets::stop_terms(&analyzer);
        let by_mode = ModeAnalyzers::both(config.analyzer);
        Ok(Snapshot {
            segments,
            fields,
            config,
            analyzer,
            highlight_stop,
            words: words_analyzer(),
            by_mode,
            vocabularies,
            phonetic,
            allowed_cache: previous.map_or_else(ScopedCaches::default, |p| ScopedCaches::seeded(&p.allowed_cache)),
            synonyms,
        })
    }

    /// The tier of the large segments, when there are any: the one a writer saves.
    pub(crate) fn large_tier(&self) -> Option<&Tier> {
        self.vocabularies.iter().find(|t| t.large)
    }

    /// The vocabulary's tiers, read as one.
    pub(crate) fn vocabulary(&self) -> ScopedVocabulary<'_> {
        ScopedVocabulary::new(self.vocabularies.iter().map(|t| t.vocabulary.as_ref()).collect())
    }

    /// The schema the index was created with.
    pub fn schema(&self) -> &SchemaConfig {
        &self.config
    }

    /// The number of live records.
    pub fn num_records(&self) -> u64 {
        self.segments.num_docs()
    }

    /// The promoted tenants, by token: those whose records a partition of their own holds.
    pub fn promoted_tenants(&self) -> Vec<String> {
        self.segments.promoted_tenants()
    }

    /// The segments a request under `visibility` reads: those of the partitions it may see.
    pub(crate) fn scope(&self, visibility: &Visibility) -> Scope<'_> {
        self.segments.scope(visibility)
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
    /// computed once per rule (the key names the principal's tokens, the policy and the filter)
    /// and kept in the cache of the rule's scope (the partitions it reads).
    pub(crate) fn allowed_docs(&self, visibility: &Visibility) -> Result<Arc<AllowedDocs>> {
        let key = format!(
            "{:?}|{:?}|{:?}|{:?}",
            visibility.acl_terms(),
            visibility.tenant_terms(),
            visibility.owner_terms(),
            visibility.filter()
        );
        let scope = self.scope(visibility);
        let keys = scope.keys();
        if let Some(docs) = self.allowed_cache.get(&keys, &key) {
            return Ok(docs);
        }
        // The set of the snapshot before, if it had one: its segments that are unchanged and the
        // rule's weight carry over.
        let seed = self.allowed_cache.take_seed(&keys, &key);
        let rule = match seed.as_ref().and_then(|seed| seed.rule.clone()) {
            Some(rule) => rule,
            None => {
                let query = visibility_query(&self.fields, visibility)?;
                let scoring = EnableScoring::disabled_from_searcher(self.segments.main());
                RuleWeight(Arc::from(query.weight(scoring).map_err(lexical)?))
            }
        };
        let seed = seed.unwrap_or_default();
        let mut docs = AllowedDocs::extend_from(&seed, scope.iter(), rule.0.as_ref()).map_err(lexical)?;
        docs.rule = Some(rule);
        docs.everything = docs.ords.len() as u64 == scope.num_docs();
        let docs = Arc::new(docs);
        self.allowed_cache.insert(&keys, key, docs.clone(), self.segments.promoted_tenants().len());
        Ok(docs)
    }

    /// The highest ordinal in use, if any record exists.
    ///
    /// # Errors
    /// [`Error::Lexical`] on a damaged index.
    pub fn max_ord(&self) -> Result<Option<Ordinal>> {
        let mut max = None;
        for segment in self.segments.readers() {
            let column = segment.fast_fields().u64("ord").map_err(lexical)?;
            if segment.num_docs() > 0 {
                max = max.max(Some(column.max_value()));
            }
        }
        Ok(max)
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

    /// The live document holding `ord`, read straight from the `ord` field's postings.
    pub(crate) fn address_of_ord(&self, ord: Ordinal) -> Result<Option<DocAddress>> {
        Ok(self.live(&Term::from_field_u64(self.fields.ord, ord), 1)?.pop())
    }

    /// The first `limit` live documents holding `term` (a field indexed without positions), in
    /// snapshot order, read straight from its postings.
    fn live(&self, term: &Term, limit: usize) -> Result<Vec<DocAddress>> {
        self.live_in(term, limit, |_| true)
    }

    /// [`Snapshot::live`] in the segments of the partitions `read` keeps.
    fn live_in(&self, term: &Term, limit: usize, read: impl Fn(&Part) -> bool) -> Result<Vec<DocAddress>> {
        let mut out = Vec::new();
        for (segment_ord, segment) in self.segments.readers().iter().enumerate() {
            if !read(self.segments.part_of(segment_ord as u32)) {
                continue;
            }
            let inverted = segment.inverted_index(term.field()).map_err(lexical)?;
            let Some(mut postings) = inverted.read_postings(term, IndexRecordOption::Basic).map_err(lexical)? else {
                continue;
            };
            let alive = segment.alive_bitset();
            while postings.doc() != TERMINATED {
                let doc = postings.doc();
                if alive.is_none_or(|a| a.is_alive(doc)) {
                    out.push(DocAddress::new(segment_ord as u32, doc));
                    if out.len() >= limit {
                        return Ok(out);
                    }
                }
                postings.advance();
            }
        }
        Ok(out)
    }

    /// Reads back stored records by ordinal, in the given order; missing ordinals are skipped.
    ///
    /// # Errors
    /// [`Error::Lexical`] when the document store cannot be read.
    pub fn records(&self, ords: &[Ordinal]) -> Result<Vec<IndexedRecord>> {
        self.read_docs(ords, |doc| from_doc(&self.fields, doc))
    }

    /// `read` of each live record's stored document, by ordinal, in the given order; missing
    /// ordinals are skipped.
    fn read_docs<T>(&self, ords: &[Ordinal], read: impl Fn(&TantivyDocument) -> T) -> Result<Vec<T>> {
        let mut out = Vec::with_capacity(ords.len());
        for &ord in ords {
            if let Some(address) = self.address_of_ord(ord)? {
                let doc: TantivyDocument = self.segments.doc(address).map_err(lexical)?;
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
            let id = match self.segments.id_columns.get(address.segment_ord as usize).and_then(Option::as_ref) {
                Some(ids) => ids
                    .get(address.doc_id)
                    .ok_or_else(|| Error::Lexical(format!("record without id at {address:?}")))?
                    .to_string(),
                None => {
                    let doc: TantivyDocument = self.segments.doc(address).map_err(lexical)?;
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
    pub fn children(&self, parent: &str, allowed: &AllowedSet) -> Result<Vec<IndexedRecord>> {
        let query = TermQuery::new(Term::from_field_text(self.fields.parent, parent), IndexRecordOption::Basic);
        let ords: OrdSet = self.scope(allowed.visibility()).search(&query, &OrdCollector).map_err(lexical)?;
        let visible: Vec<Ordinal> = ords.iter().filter(|o| allowed.contains(*o)).collect();
        let mut records = self.records(&visible)?;
        records.sort_by(|a, b| {
            let key = |r: &IndexedRecord| r.lines.map_or((u32::MAX, u32::MAX), |l| l);
            key(a).cmp(&key(b)).then_with(|| a.id.cmp(&b.id))
        });
        Ok(records)
    }

    /// The live record with external id `id`, if any (for upserts and `read`).
    ///
    /// # Errors
    /// [`Error::Lexical`] when the document store cannot be read.
    pub fn record_by_id(&self, id: &str) -> Result<Option<IndexedRecord>> {
        match self.address_of_id(id)? {
            Some(address) => {
                let doc: TantivyDocument = self.segments.doc(address).map_err(lexical)?;
                Ok(Some(from_doc(&self.fields, &doc)))
            }
            None => Ok(None),
        }
    }

    /// Every live version of the record with external id `id` (one, unless a commit is under
    /// way), with its partition and ordinal.
    #[cfg(test)]
    pub(crate) fn versions_of(&self, id: &str) -> Result<Vec<(Part, Ordinal)>> {
        self.versions_in(id, |_| true)
    }

    /// [`Snapshot::versions_of`] in the pool and promoted tenants' partitions only: what a
    /// writer must list as superseded (the main partition deletes by id itself), read without
    /// a lookup in the main partition's segments.
    pub(crate) fn satellite_versions_of(&self, id: &str) -> Result<Vec<(Part, Ordinal)>> {
        self.versions_in(id, |p| *p != Part::Main)
    }

    /// The segments of the partitions that hold pooled tenants' records: the pool, and the
    /// main partition (where an index from before the pool kept them).
    fn pooling(&self) -> impl Iterator<Item = &tantivy::SegmentReader> + '_ {
        let segments = &self.segments;
        (0..segments.readers().len() as u32)
            .filter(|&ord| matches!(segments.part_of(ord), Part::Main | Part::Pool))
            .map(|ord| segments.reader(ord))
    }

    fn versions_in(&self, id: &str, read: impl Fn(&Part) -> bool) -> Result<Vec<(Part, Ordinal)>> {
        let live = self.live_in(&Term::from_field_text(self.fields.id, id), usize::MAX, read)?;
        Ok(live
            .into_iter()
            .filter_map(|a| {
                let ord = self.segments.ord_columns[a.segment_ord as usize].first(a.doc_id)?;
                Some((self.segments.part_of(a.segment_ord).clone(), ord))
            })
            .collect())
    }

    /// The tenant tokens the records of the pool and the main partition carry (`tenant:…`, not
    /// the no-tenant term): the tenants a promotion may concern.
    pub(crate) fn pooled_tenants(&self) -> Result<Vec<String>> {
        Ok(self.tenant_tokens(self.pooling())?.into_iter().collect())
    }

    /// The tenant tokens the records of `segments` carry (`tenant:…`, not the no-tenant term).
    fn tenant_tokens<'a>(
        &self,
        segments: impl IntoIterator<Item = &'a tantivy::SegmentReader>,
    ) -> Result<std::collections::BTreeSet<String>> {
        let mut tokens = std::collections::BTreeSet::new();
        for segment in segments {
            let inverted = segment.inverted_index(self.fields.tenant).map_err(lexical)?;
            let mut stream = inverted.terms().stream().map_err(lexical)?;
            while stream.advance() {
                let token = String::from_utf8_lossy(stream.key());
                if token != braid_core::NO_TENANT_TOKEN {
                    tokens.insert(token.into_owned());
                }
            }
        }
        Ok(tokens)
    }

    /// At least the live records of `tenant` in the pool and the main partition: the document
    /// frequency of its token there (which counts deleted records too).
    pub(crate) fn pooled_tenant_bound(&self, tenant: &str) -> Result<u64> {
        let term = Term::from_field_text(self.fields.tenant, tenant);
        let mut bound = 0;
        for segment in self.pooling() {
            bound += u64::from(
                segment.inverted_index(self.fields.tenant).map_err(lexical)?.doc_freq(&term).map_err(lexical)?,
            );
        }
        Ok(bound)
    }

    /// The live records of the pool and the main partition whose only tenant is `tenant`, as
    /// document ids per segment (segments without any left out): what promoting the tenant
    /// moves.
    pub(crate) fn pooled_records_of(&self, tenant: &str) -> Result<Vec<(SegmentId, Vec<DocId>)>> {
        let mut out = Vec::new();
        for segment in self.pooling() {
            let inverted = segment.inverted_index(self.fields.tenant).map_err(lexical)?;
            let postings_of = |token: &str| -> Result<Vec<DocId>> {
                let term = Term::from_field_text(self.fields.tenant, token);
                let mut docs = Vec::new();
                if let Some(mut p) = inverted.read_postings(&term, IndexRecordOption::Basic).map_err(lexical)? {
                    while p.doc() != TERMINATED {
                        docs.push(p.doc());
                        p.advance();
                    }
                }
                Ok(docs)
            };
            let alive = segment.alive_bitset();
            let mut docs: Vec<DocId> =
                postings_of(tenant)?.into_iter().filter(|&d| alive.is_none_or(|a| a.is_alive(d))).collect();
            if docs.is_empty() {
                continue;
            }
            // Records that name another tenant too stay in the pool.
            let mut stream = inverted.terms().stream().map_err(lexical)?;
            let mut others = Vec::new();
            while stream.advance() {
                let token = String::from_utf8_lossy(stream.key());
                if token != tenant && token != braid_core::NO_TENANT_TOKEN {
                    others.push(token.into_owned());
                }
            }
            for other in others {
                let shared: HashSet<DocId> = postings_of(&other)?.into_iter().collect();
                docs.retain(|d| !shared.contains(d));
            }
            if !docs.is_empty() {
                out.push((segment.segment_id(), docs));
            }
        }
        Ok(out)
    }

    /// The live document holding external id `id`, read straight from the `id` field's
    /// postings.
    pub(crate) fn address_of_id(&self, id: &str) -> Result<Option<DocAddress>> {
        Ok(self.live(&Term::from_field_text(self.fields.id, id), 1)?.pop())
    }

    /// Every live record's ordinal, read from the `ord` column: no stored document is read.
    ///
    /// # Errors
    /// [`Error::Lexical`] for a live document without an ordinal (a damaged index).
    pub fn ords(&self) -> Result<Vec<Ordinal>> {
        let mut out = Vec::with_capacity(self.segments.num_docs() as usize);
        for (segment, ords) in self.segments.readers().iter().zip(&self.segments.ord_columns) {
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
        let mut out = Vec::with_capacity(self.segments.num_docs() as usize);
        let segments = self.segments.readers().iter().zip(&self.segments.ord_columns).zip(&self.segments.id_columns);
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

    /// Every tenant token the live records carry (`tenant:…`), each with the ordinals of its
    /// records, in token order: what places each record's vectors in its tenant's partition
    /// when an index opens. Records without a tenant are in none.
    ///
    /// # Errors
    /// [`Error::Lexical`] when the index cannot be read.
    pub fn tenant_ords(&self) -> Result<Vec<(String, OrdSet)>> {
        let tokens = self.tenant_tokens(self.segments.readers())?;
        let mut out = Vec::with_capacity(tokens.len());
        for token in tokens {
            let query = TermQuery::new(Term::from_field_text(self.fields.tenant, &token), IndexRecordOption::Basic);
            let ords: OrdSet = self.segments.all().search(&query, &OrdCollector).map_err(lexical)?;
            if !ords.is_empty() {
                out.push((token, ords));
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
                    let segment = self.segments.reader(address.segment_ord);
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
        Snippets::new(maker)
    }
}

/// A vocabulary and the segments it was built from.
pub(crate) struct Tier {
    pub ids: Vec<SegmentId>,
    pub vocabulary: Arc<Vocabulary>,
    /// Whether these are the large segments ([`tiers_of`]).
    pub large: bool,
}

/// A segment of at least this many documents is large: its words go into the vocabulary of
/// the large segments, which is rebuilt only when those change (a merge). The segments a
/// commit adds are small, and only their vocabulary is built again per commit: at a million
/// records, building the whole vocabulary took about 67 ms of a 10-record commit. (Small in
/// this crate's tests, so that they run on both tiers.)
const LARGE_SEGMENT_DOCS: u32 = if cfg!(test) { 12 } else { 20_000 };

/// In an index of fewer than eight times [`LARGE_SEGMENT_DOCS`] documents, a segment holding an
/// eighth of them is large too, but never one below this: otherwise every segment of a small
/// index is small, and each commit builds its whole vocabulary again.
const LARGE_SEGMENT_MIN_DOCS: u32 = if cfg!(test) { 12 } else { 1_000 };

/// Segments split into the large ones and the small ones (either may be empty), so that each
/// commit rebuilds the vocabulary of the small ones only.
fn tiers_of(segments: &[tantivy::SegmentReader]) -> (Vec<&tantivy::SegmentReader>, Vec<&tantivy::SegmentReader>) {
    let docs: u64 = segments.iter().map(|s| u64::from(s.max_doc())).sum();
    let large_at = large_at(docs, LARGE_SEGMENT_MIN_DOCS, LARGE_SEGMENT_DOCS);
    segments.iter().partition(|s| s.max_doc() >= large_at)
}

/// The documents that make a segment large in an index of `docs`: an eighth of them, within
/// `[min, max]`.
fn large_at(docs: u64, min: u32, max: u32) -> u32 {
    (docs / 8).clamp(u64::from(min), u64::from(max)) as u32
}

#[cfg(test)]
mod tests {
    use braid_core::Record;

    use super::*;
    use crate::index::LexicalIndex;

    /// `ids()` and `ords()` read the columns, and agree with the records written, across
    /// segments and deletes.
    #[test]
    fn ids_and_ords_come_from_the_columns() {
        let index = LexicalIndex::create(None, SchemaConfig::default()).unwrap();
        let mut writer = index.writer(crate::DEFAULT_WRITER_HEAP).unwrap();
        for (ord, id) in [(3, "c"), (1, "a"), (7, "g")] {
            writer.upsert(ord, &Record::new(id).body("text"), 0).unwrap();
        }
        writer.commit().unwrap();
        writer.upsert(9, &Record::new("i").body("more"), 0).unwrap();
        writer.delete("a").unwrap();
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

    /// A snapshot a search still holds when a commit replaces it is released by a later
    /// reload, once nothing holds it, never by the search that let it go last.
    #[test]
    fn a_replaced_snapshot_is_released_by_the_writer() {
        let index = LexicalIndex::create(None, SchemaConfig::default()).unwrap();
        let mut writer = index.writer(crate::DEFAULT_WRITER_HEAP).unwrap();
        writer.upsert(1, &Record::new("a").body("text"), 0).unwrap();
        writer.commit().unwrap();
        let held = index.snapshot();
        writer.upsert(2, &Record::new("b").body("more"), 0).unwrap();
        writer.commit().unwrap();
        let replaced = Arc::downgrade(&held);
        drop(held);
        assert!(replaced.upgrade().is_some(), "the search's drop did not release it");
        writer.upsert(3, &Record::new("c").body("again"), 0).unwrap();
        writer.commit().unwrap();
        assert!(replaced.upgrade().is_none(), "the next reload did");
        // One nothing held when it was replaced goes at once.
        let unheld = Arc::downgrade(&index.snapshot());
        writer.delete("a").unwrap();
        writer.commit().unwrap();
        assert!(unheld.upgrade().is_none());
    }

    /// Small indexes keep a large tier too: at 10,000 records a segment of 1,250 is large, at a
    /// million one of 20,000, and never one below 1,000.
    #[test]
    fn a_small_index_has_large_segments_too() {
        assert_eq!(large_at(10_000, 1_000, 20_000), 1_250);
        assert_eq!(large_at(1_000_000, 1_000, 20_000), 20_000);
        assert_eq!(large_at(4_000, 1_000, 20_000), 1_000);
        assert_eq!(large_at(0, 1_000, 20_000), 1_000);
    }
}
