//! Promotion: a pooled tenant's records copied out of the pool (and, in an index from before
//! the pool, the main partition) into a partition of their own.
//!
//! The copy is tantivy's merge of those partitions' segments, each filtered to the tenant's
//! live records, into a new index in the tenant's directory: postings, columns and stored
//! documents are carried over as they are (nothing is re-analysed, so the records score exactly
//! as before). The writer then commits the main partition with the tenant added to its list of
//! promoted tenants and the copied records deleted from the main partition and listed as
//! superseded in the pool ([`crate::partition::Catalog`]): that one commit is when the
//! promotion happens; the pool deletes them after it, as after any commit. A crash before it
//! leaves a directory no commit names, which is never read and is replaced when the tenant is
//! promoted again.

use braid_core::{Error, Result};
use tantivy::directory::{OwnedBytes, RamDirectory};
use tantivy::fastfield::{write_alive_bitset, AliveBitSet};
use tantivy::indexer::merge_filtered_segments;
use tantivy::{Directory, Index, TantivyDocument};
use tantivy_common::BitSet;

use crate::directory::PartitionDirectory;
use crate::error::lexical;
use crate::index::Shared;
use crate::partition::Part;
use crate::snapshot::Snapshot;
use crate::stored::from_doc;
use crate::writer::sync_dir;

/// What a promotion copied: the ids of the records it took from the main partition, and the
/// ordinals of those it took from the pool.
#[derive(Default)]
pub(crate) struct Copied {
    pub main_ids: Vec<String>,
    pub pool_ords: Vec<u64>,
}

/// Copies `tenant`'s records out of the pool and the main partition of `snapshot` into a new
/// partition, registers it with `shared` (read once a main commit names the tenant), and says
/// what it copied, for the writer to delete where they were.
pub(crate) fn copy_out(shared: &Shared, snapshot: &Snapshot, tenant: &str) -> Result<Copied> {
    let records = snapshot.pooled_records_of(tenant)?;
    let mut by_id = std::collections::HashMap::new();
    let pool = snapshot.segments.position(&Part::Pool).map(|_| shared.part(&Part::Pool)).transpose()?;
    for part in std::iter::once(&shared.main).chain(&pool) {
        by_id.extend(part.index.searchable_segments().map_err(lexical)?.into_iter().map(|s| (s.id(), s)));
    }
    let mut segments = Vec::with_capacity(records.len());
    let mut filters = Vec::with_capacity(records.len());
    let mut copied = Copied::default();
    for (segment_id, docs) in &records {
        let segment = by_id.get(segment_id).ok_or_else(|| {
            Error::Lexical(format!("segment {} left its partition during a promotion", segment_id.short_uuid_string()))
        })?;
        let reader = snapshot.segments.readers().iter().position(|r| r.segment_id() == *segment_id);
        let Some(ord) = reader else { continue };
        let ord = ord as tantivy::SegmentOrdinal;
        let max_doc = segment.meta().max_doc();
        let mut bits = BitSet::with_max_value(max_doc);
        let in_pool = *snapshot.segments.part_of(ord) == Part::Pool;
        for &doc in docs {
            bits.insert(doc);
            if in_pool {
                let record = snapshot.segments.ord_columns[ord as usize].first(doc);
                copied.pool_ords.push(record.ok_or_else(|| Error::Lexical("a pooled record without ordinal".into()))?);
            } else {
                copied.main_ids.push(snapshot.id_at(tantivy::DocAddress::new(ord, doc))?);
            }
        }
        let mut bytes = Vec::new();
        write_alive_bitset(&bits, &mut bytes).map_err(|e| Error::Lexical(format!("a promotion's filter: {e}")))?;
        segments.push(segment.clone());
        filters.push(Some(AliveBitSet::open(OwnedBytes::new(bytes))));
    }
    if segments.is_empty() {
        return Ok(copied);
    }
    let settings = shared.main.index.settings().clone();
    let part = Part::Tenant(tenant.to_string());
    // A directory left by a promotion a crash interrupted is emptied: no commit names it.
    let index: Index = match (shared.fresh_dir(&part)?, &shared.path) {
        (Some(dir), Some(path)) => {
            let directory = PartitionDirectory::open(&dir).map_err(lexical)?;
            let index = merge_filtered_segments(&segments, settings, filters, directory).map_err(lexical)?;
            index.directory().sync_directory().map_err(|e| Error::io(&dir, e))?;
            sync_dir(path).map_err(|e| Error::io(path, e))?;
            index
        }
        _ => merge_filtered_segments(&segments, settings, filters, RamDirectory::create()).map_err(lexical)?,
    };
    shared.add_part(part, index)?;
    Ok(copied)
}

impl Snapshot {
    /// The external id of the live document at `address`.
    pub(crate) fn id_at(&self, address: tantivy::DocAddress) -> Result<String> {
        if let Some(Some(ids)) = self.segments.id_columns.get(address.segment_ord as usize) {
            return ids
                .get(address.doc_id)
                .map(str::to_string)
                .ok_or_else(|| Error::Lexical(format!("record without id at {address:?}")));
        }
        let doc: TantivyDocument = self.segments.doc(address).map_err(lexical)?;
        Ok(from_doc(&self.fields, &doc).id)
    }
}

#[cfg(test)]
mod tests {
    use braid_core::{AccessPolicy, Principal, QuerySyntax, Record, Visibility};

    use crate::index::{LexicalIndex, DEFAULT_WRITER_HEAP};
    use crate::partition::Part;
    use crate::schema::SchemaConfig;

    const WORDS: [&str; 12] = [
        "refund", "order", "shipping", "return", "policy", "account", "password", "reset", "invoice", "billing",
        "parcel", "warranty",
    ];

    /// Record `i` of a corpus of tenants `acme` (most records), `globex`, both, and none.
    fn record(i: usize, round: usize) -> Record {
        let acl: Vec<&str> = match i % 6 {
            0..=2 => vec!["group:all", "tenant:acme"],
            3 => vec!["group:all", "tenant:globex"],
            4 => vec!["group:all", "tenant:acme", "tenant:globex"],
            _ => vec!["group:all"],
        };
        let body: Vec<&str> = (0..3 + i % 4).map(|k| WORDS[(i * 7 + k * 5 + round) % WORDS.len()]).collect();
        Record::new(format!("r{i}")).title(WORDS[(i + round) % WORDS.len()]).body(body.join(" ")).acl(acl)
    }

    /// The same writes into an index that promotes at `promote_at` records: three commits, the
    /// last replacing and deleting some records and moving one out of its tenant.
    pub(super) fn written(dir: Option<&std::path::Path>, promote_at: usize) -> LexicalIndex {
        let index = LexicalIndex::create(dir, SchemaConfig::default()).unwrap();
        index.set_promote_at(promote_at);
        let mut writer = index.writer(DEFAULT_WRITER_HEAP).unwrap();
        let mut ord = 0;
        for (round, range) in [(0, 0..12), (0, 12..40), (1, 30..36)].into_iter() {
            for i in range {
                ord += 1;
                writer.upsert(ord, &record(i, round), 0).unwrap();
            }
            writer.commit().unwrap();
        }
        writer.delete("r1").unwrap();
        writer.delete("r3").unwrap();
        ord += 1;
        // r2 leaves acme for globex alone.
        let moved = Record::new("r2").title("refund").body("a parcel").acl(["tenant:globex"]);
        writer.upsert(ord, &moved, 0).unwrap();
        writer.commit().unwrap();
        index
    }

    fn principals() -> Vec<Principal> {
        [
            vec!["group:all"],
            vec!["group:all", "tenant:acme"],
            vec!["group:all", "tenant:globex"],
            vec!["group:all", "tenant:acme", "tenant:globex"],
            vec!["tenant:acme"],
        ]
        .into_iter()
        .map(Principal::from_verified_tokens)
        .collect()
    }

    /// What each principal gets from both legs for a few queries.
    pub(super) fn answers(index: &LexicalIndex) -> Vec<Vec<(u64, f32)>> {
        let snapshot = index.snapshot();
        let mut out = Vec::new();
        for principal in principals() {
            let allowed = snapshot.allowed_set(Visibility::new(principal, AccessPolicy::Public, None)).unwrap();
            let view = snapshot.view(&allowed).unwrap();
            for q in ["refund policy", "parcel", "retun polcy", "invoice billing order"] {
                out.push(view.lexical(q, 20, QuerySyntax::Plain).unwrap().candidates);
                out.push(view.fuzzy(q, 20).unwrap().candidates);
            }
        }
        out
    }

    /// A promoted tenant's records leave the pool, and every principal gets exactly what an
    /// index that never promoted gives: the same records, order and scores.
    #[test]
    fn a_promoted_tenant_answers_as_one_index_would() {
        let partitioned = written(None, 10);
        let whole = written(None, usize::MAX);
        assert_eq!(partitioned.promoted_tenants(), ["tenant:acme"]);
        assert!(whole.promoted_tenants().is_empty());
        let snapshot = partitioned.snapshot();
        assert!(snapshot.pooled_records_of("tenant:acme").unwrap().is_empty(), "acme's records left the pool");
        let parts = |id: &str| -> Vec<Part> { snapshot.versions_of(id).unwrap().into_iter().map(|(p, _)| p).collect() };
        assert_eq!(parts("r2"), [Part::Pool], "r2 moved to globex, in the pool, once");
        assert_eq!(parts("r9"), [Part::Pool], "globex is pooled");
        assert_eq!(parts("r4"), [Part::Main], "acme's and globex's");
        assert_eq!(parts("r5"), [Part::Main], "no tenant");
        assert_eq!(whole.snapshot().versions_of("r0").unwrap()[0].0, Part::Pool);
        assert_eq!(parts("r0"), [Part::Tenant("tenant:acme".into())]);
        assert_eq!(parts("r30"), [Part::Tenant("tenant:acme".into())], "r30 replaced in acme's partition, once");
        assert!(parts("r1").is_empty());
        assert_eq!(snapshot.num_records(), whole.snapshot().num_records());
        let (a, b) = (answers(&partitioned), answers(&whole));
        assert!(a.iter().any(|c| !c.is_empty()));
        assert_eq!(a, b);
    }

    /// A request reads the main partition, the pool when its principal holds a tenant not
    /// promoted, and the partitions of the promoted tenants it holds; no other.
    #[test]
    fn a_request_reads_only_the_partitions_its_principal_may_see() {
        let index = written(None, 10);
        let snapshot = index.snapshot();
        let acme = Part::Tenant("tenant:acme".into());
        for (tokens, reads_acme, reads_pool) in [
            (vec!["tenant:globex"], false, true),
            (vec!["group:all"], false, false),
            (vec!["tenant:acme"], true, false),
            (vec!["tenant:acme", "tenant:globex"], true, true),
            (vec!["tenant:initech"], false, true),
        ] {
            let visibility = Visibility::new(Principal::from_verified_tokens(&tokens), AccessPolicy::Public, None);
            let scope = snapshot.scope(&visibility);
            let parts: Vec<&Part> = scope.iter().map(|(ord, _)| snapshot.segments.part_of(ord)).collect();
            assert!(parts.contains(&&Part::Main), "{tokens:?}");
            assert_eq!(parts.contains(&&acme), reads_acme, "{tokens:?}");
            assert_eq!(parts.contains(&&Part::Pool), reads_pool, "{tokens:?}");
        }
    }

    /// A commit builds the vocabulary of the small segments again and keeps the large ones'.
    #[test]
    fn a_commit_rebuilds_only_the_small_segments_vocabulary() {
        let index = written(None, 10);
        let mut writer = index.writer(DEFAULT_WRITER_HEAP).unwrap();
        // No merge may change the segments between the two snapshots.
        writer.set_merges(crate::Merges::Deferred).unwrap();
        writer.merge_segments().unwrap();
        index.reload().unwrap();
        let before = index.snapshot();
        // Each partition merged into one segment: the main partition's and acme's are large,
        // the pool's (globex's few records) small.
        assert_eq!(before.vocabularies.len(), 2);
        let acme = Record::new("fresh").title("zyzzyva").body("zyzzyva").acl(["tenant:acme"]);
        writer.upsert(900, &acme, 0).unwrap();
        writer.commit().unwrap();
        let after = index.snapshot();
        assert_eq!(after.vocabularies.len(), 2);
        assert!(std::sync::Arc::ptr_eq(&before.vocabularies[0].vocabulary, &after.vocabularies[0].vocabulary));
        assert!(!std::sync::Arc::ptr_eq(&before.vocabularies[1].vocabulary, &after.vocabularies[1].vocabulary));
        assert_eq!(after.vocabularies[0].vocabulary.df("zyzzyva"), 0);
        assert_eq!(after.vocabulary().df("zyzzyva"), 1);
    }

    /// Each principal's allowed set on a snapshot, computed afresh, as ordinals and documents
    /// per segment.
    type Sets = Vec<(Vec<u64>, std::collections::BTreeMap<String, Vec<u32>>)>;

    fn allowed_sets(index: &LexicalIndex) -> Sets {
        let snapshot = index.snapshot();
        principals()
            .into_iter()
            .map(|principal| {
                let docs = snapshot.allowed_docs(&Visibility::new(principal, AccessPolicy::Public, None)).unwrap();
                let segments = docs.segments.iter().map(|(id, s)| (id.uuid_string(), s.docs.to_vec())).collect();
                (docs.ords.iter().collect(), segments)
            })
            .collect()
    }

    /// A snapshot's allowed sets grow from the snapshot before's: after commits that add,
    /// replace and delete records (in old segments too), a merge and a promotion, every
    /// principal's set is the one an index opened afresh computes.
    #[test]
    fn allowed_sets_carried_over_from_the_last_snapshot_are_exact() {
        let dir = tempfile::tempdir().unwrap();
        let index = written(Some(dir.path()), 10);
        let fresh = || allowed_sets(&LexicalIndex::open(dir.path(), SchemaConfig::default()).unwrap());
        assert_eq!(allowed_sets(&index), fresh());
        let mut writer = index.writer(DEFAULT_WRITER_HEAP).unwrap();
        writer.set_merges(crate::Merges::Deferred).unwrap();
        let mut ord = 2000;
        let mut write = |writer: &mut crate::LexicalWriter, records: &[Record], deletes: &[&str]| {
            for r in records {
                ord += 1;
                writer.upsert(ord, r, 0).unwrap();
            }
            for id in deletes {
                writer.delete(id).unwrap();
            }
            writer.commit().unwrap();
        };
        write(&mut writer, &[record(41, 0), record(42, 1), record(45, 0), record(6, 2)], &["r8", "r11", "r5"]);
        assert_eq!(allowed_sets(&index), fresh(), "after adds, a replacement and deletes");
        writer.merge_segments().unwrap();
        index.reload().unwrap();
        assert_eq!(allowed_sets(&index), fresh(), "after a merge");
        index.set_promote_at(2);
        write(&mut writer, &[record(51, 0)], &["r15"]);
        assert_eq!(index.promoted_tenants(), ["tenant:acme", "tenant:globex"]);
        assert_eq!(allowed_sets(&index), fresh(), "after a promotion");
    }

    /// Promotions survive a reopen; a tenant directory that no commit names (a crash between
    /// the copy and the commit of the main partition) is never read, and is replaced by the
    /// next promotion.
    #[test]
    fn a_promotion_is_the_main_partitions_commit() {
        let dir = tempfile::tempdir().unwrap();
        let expected = answers(&written(None, 10));
        drop(written(Some(dir.path()), 10));
        let reopened = LexicalIndex::open(dir.path(), SchemaConfig::default()).unwrap();
        assert_eq!(reopened.promoted_tenants(), ["tenant:acme"]);
        assert_eq!(answers(&reopened), expected);

        // Interrupted: globex copied out, its commit never made.
        let snapshot = reopened.snapshot();
        let copied = super::copy_out(&reopened.shared, &snapshot, "tenant:globex").unwrap();
        assert!(!copied.pool_ords.is_empty() && copied.main_ids.is_empty(), "globex was pooled");
        assert!(dir.path().join(braid_core::tenant_dir_name("tenant:globex")).is_dir());
        drop((snapshot, reopened));
        let reopened = LexicalIndex::open(dir.path(), SchemaConfig::default()).unwrap();
        assert_eq!(reopened.promoted_tenants(), ["tenant:acme"]);
        assert_eq!(answers(&reopened), expected);

        // Promoted for real: the directory is built again, the answers stay.
        reopened.set_promote_at(2);
        let mut writer = reopened.writer(DEFAULT_WRITER_HEAP).unwrap();
        writer.upsert(1000, &record(9, 0), 0).unwrap();
        writer.commit().unwrap();
        assert_eq!(reopened.promoted_tenants(), ["tenant:acme", "tenant:globex"]);
        drop(writer);
        let reopened = LexicalIndex::open(dir.path(), SchemaConfig::default()).unwrap();
        assert_eq!(reopened.promoted_tenants(), ["tenant:acme", "tenant:globex"]);
        assert_eq!(reopened.snapshot().num_records(), written(None, 10).snapshot().num_records());
    }
}

/// A commit that wrote several partitions, cut short after each of its steps.
#[cfg(test)]
mod atomicity {
    use braid_core::Record;

    use super::tests::{answers, written};
    use crate::index::{LexicalIndex, DEFAULT_WRITER_HEAP};
    use crate::schema::SchemaConfig;

    /// Replaces two records of promoted acme and one of pooled globex, adds one to each and
    /// one without a tenant, deletes one of acme's and one of globex's, and runs the commit's
    /// steps through `steps` (all three: a whole commit).
    fn commit_cut_after(index: &LexicalIndex, steps: usize) {
        let mut writer = index.writer(DEFAULT_WRITER_HEAP).unwrap();
        let acme = |id: &str, text: &str| Record::new(id).title(text).body(text).acl(["group:all", "tenant:acme"]);
        let globex = |id: &str, text: &str| Record::new(id).title(text).body(text).acl(["group:all", "tenant:globex"]);
        writer.upsert(500, &acme("r0", "warranty claim"), 0).unwrap();
        writer.upsert(501, &acme("r6", "refund refund"), 0).unwrap();
        writer.upsert(502, &acme("new-acme", "parcel refund"), 0).unwrap();
        writer.upsert(503, &Record::new("new-main").body("refund parcel").acl(["group:all"]), 0).unwrap();
        writer.upsert(504, &globex("r9", "refund warranty"), 0).unwrap();
        writer.upsert(505, &globex("new-globex", "parcel policy refund"), 0).unwrap();
        writer.delete("r7").unwrap();
        writer.delete("r15").unwrap();
        if steps >= 1 {
            writer.commit_new_records().unwrap();
        }
        if steps >= 2 {
            writer.commit_point().unwrap();
        }
        if steps >= 3 {
            writer.delete_superseded().unwrap();
        }
    }

    /// Cut short before its commit point the commit is not there, after it the commit is
    /// whole: reopened, and again once a writer has cleaned up, the index answers as one that
    /// never began it, or as one that completed it.
    #[test]
    fn a_commit_across_partitions_is_all_or_nothing() {
        let before = answers(&written(None, 10));
        let complete = written(None, 10);
        commit_cut_after(&complete, 3);
        complete.reload().unwrap();
        let after = answers(&complete);
        assert_ne!(before, after);
        for (steps, expected) in [(0, &before), (1, &before), (2, &after), (3, &after)] {
            let dir = tempfile::tempdir().unwrap();
            drop(written(Some(dir.path()), 10));
            let index = LexicalIndex::open(dir.path(), SchemaConfig::default()).unwrap();
            commit_cut_after(&index, steps);
            drop(index);
            let reopened = LexicalIndex::open(dir.path(), SchemaConfig::default()).unwrap();
            assert_eq!(&answers(&reopened), expected, "cut after step {steps}, reopened");
            for id in ["r0", "r9"] {
                assert_eq!(reopened.snapshot().versions_of(id).unwrap().len(), 1, "{id}, cut after step {steps}");
            }
            drop(reopened.writer(DEFAULT_WRITER_HEAP).unwrap());
            reopened.reload().unwrap();
            assert_eq!(&answers(&reopened), expected, "cut after step {steps}, cleaned up");
        }
    }
}
