//! One opened commit of an index: its lexical index and its semantic leg.

use std::sync::{Arc, Mutex, OnceLock};

use braid_core::{Embedder, OrdSet, Result};
use braid_lexical::{LexicalIndex, Synonyms, Verification};
use braid_vector::{PartitionedStore, Quantization};

use super::models::{check_model, Models, VectorTuning};
use crate::layout::Layout;
use crate::manifest::{self, Manifest};
use crate::semantic::{EmbeddingInfo, Semantic};

/// One opened commit: the lexical index and, once there are vectors, the semantic leg.
pub(crate) struct Parts {
    /// Set once: at open or create when the index has (or is built for) vectors, else by the
    /// writer when it meets the first record with a vector. Never replaced. Dropped before the
    /// lexical index: dropping the vectors stops their collapse into huge pages, for which
    /// every unmap of the lexical files would otherwise wait (`braid_vector`'s `huge_pages`).
    pub semantic: OnceLock<Arc<Semantic>>,
    pub lexical: LexicalIndex,
    /// The model recorded in the manifest (the vectors on disk were made with it).
    pub embedding: Mutex<Option<EmbeddingInfo>>,
    /// The commit point these parts were opened at (`None` in memory).
    pub commit_point: Mutex<Option<Vec<u8>>>,
}

impl Parts {
    pub(super) fn new(
        lexical: LexicalIndex,
        semantic: Option<Semantic>,
        embedding: Option<EmbeddingInfo>,
        commit_point: Option<Vec<u8>>,
    ) -> Parts {
        let cell = OnceLock::new();
        if let Some(semantic) = semantic {
            let _ = cell.set(Arc::new(semantic));
        }
        Parts { lexical, semantic: cell, embedding: Mutex::new(embedding), commit_point: Mutex::new(commit_point) }
    }

    /// Opens the commit on disk, as of the commit point `point` read before (a commit landing
    /// meanwhile is then opened once more by the next reload, never missed), after `previous`
    /// when it is a reload (see [`LexicalIndex::open_after`]: only the files `previous` has not
    /// verified are read, all before this returns). Returns the manifest, the parts and the
    /// next free ordinal.
    pub(super) fn open(
        layout: &Layout,
        models: &Models,
        point: Option<Vec<u8>>,
        previous: Option<&Parts>,
    ) -> Result<(Manifest, Parts, u64)> {
        let manifest = Manifest::read(layout)?;
        let recorded = manifest.embedding.clone();
        let wanted = models.wanted(recorded.as_ref());
        if let Some(info) = &wanted {
            check_model(info, recorded.as_ref())?;
        }
        // The vector file is read on a second thread while the lexical index opens: at a
        // million records each takes about half a second here.
        let (lexical, store) = std::thread::scope(|scope| {
            let store = scope.spawn(|| match wanted {
                Some(_) => Semantic::open_store(layout, recorded.is_some()),
                None => Ok(None),
            });
            let lexical = open_lexical(layout, &manifest, models.verification, previous.map(|p| &p.lexical));
            if let Ok(lexical) = &lexical {
                lexical.set_promote_at(models.tuning.promote_at());
            }
            (lexical, store.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        });
        let (lexical, store) = (lexical?, store?);
        let snapshot = lexical.snapshot();
        // These read columns and postings the verification may not have read yet: a failure
        // there names the damaged file it finds.
        let (semantic, next_ord) = lexical.read_verified(|| {
            let mut next_ord = manifest.next_ord.max(snapshot.max_ord()?.map_or(0, |m| m + 1));
            let semantic = match wanted {
                Some(info) => {
                    let quantization = manifest.config.quantization;
                    let (semantic, after_orphans) =
                        semantic_over(info, models.embedder.clone(), store, &snapshot, quantization, models.tuning)?;
                    next_ord = next_ord.max(after_orphans);
                    Some(semantic)
                }
                None => None,
            };
            Ok((semantic, next_ord))
        })?;
        // The vector files are read: the lexical files' background verification may have the
        // disk now.
        lexical.start_verification();
        let parts = Parts::new(lexical, semantic, recorded, point);
        Ok((manifest, parts, next_ord))
    }
}

/// The lexical index saved in `layout`, its files verified as `verification` says (or, for a
/// reload after `previous`, those `previous` has not verified, at once), with the synonyms the
/// manifest's commit saved. Its background verification waits for
/// [`LexicalIndex::start_verification`].
fn open_lexical(
    layout: &Layout,
    manifest: &Manifest,
    verification: Verification,
    previous: Option<&LexicalIndex>,
) -> Result<LexicalIndex> {
    let schema = manifest.config.schema.clone();
    let lexical = match previous {
        Some(previous) => LexicalIndex::open_after(&layout.lexical(), schema, previous)?,
        None => LexicalIndex::open_unstarted(&layout.lexical(), schema, verification)?,
    };
    if let Some(text) = manifest::read_synonyms(layout)? {
        lexical.set_synonyms(Synonyms::parse(&text)?);
    }
    Ok(lexical)
}

/// The semantic leg for vectors of `info`, with the store saved in `layout` when the manifest
/// records one (`recorded`, which `info` must match). Returns it with the smallest ordinal the
/// writer may hand out after it ([`semantic_over`]).
pub(crate) fn open_semantic(
    layout: Option<&Layout>,
    info: EmbeddingInfo,
    embedder: Option<Arc<dyn Embedder>>,
    recorded: Option<&EmbeddingInfo>,
    snapshot: &braid_lexical::Snapshot,
    quantization: Quantization,
    tuning: VectorTuning,
) -> Result<(Semantic, u64)> {
    check_model(&info, recorded)?;
    let store = match layout {
        Some(layout) => Semantic::open_store(layout, recorded.is_some())?,
        None => None,
    };
    semantic_over(info, embedder, store, snapshot, quantization, tuning)
}

/// The semantic leg for vectors of `info` over `store`, the one saved in the index (if any).
/// Returns it with the smallest ordinal the writer may hand out after it: a crash between
/// saving vectors and committing their records leaves vectors of records that never
/// committed, which are dropped here, and their ordinals never reused. Then every record's
/// vectors are placed in its tenants' partition ([`PartitionedStore::settle`]: a store saved
/// before partitions migrates here, in memory, and on disk with the next commit).
fn semantic_over(
    info: EmbeddingInfo,
    embedder: Option<Arc<dyn Embedder>>,
    mut store: Option<PartitionedStore>,
    snapshot: &braid_lexical::Snapshot,
    quantization: Quantization,
    tuning: VectorTuning,
) -> Result<(Semantic, u64)> {
    let mut next_ord = 0;
    if let Some(store) = store.as_mut() {
        if let Some(records) = tuning.promote_at {
            store.set_promote_at(records);
        }
        let live: OrdSet = snapshot.ords()?.into_iter().collect();
        let orphans: Vec<u64> = store.ords().filter(|&o| !live.contains(o)).collect();
        for ord in orphans {
            next_ord = next_ord.max(ord + 1);
            store.delete(ord);
        }
        store.settle(&snapshot.tenant_ords()?)?;
    }
    Ok((Semantic::new(info, embedder, store, quantization, tuning)?, next_ord))
}
