//! The on-disk layout of an index directory: the one module that knows its file names.
//!
//! ```text
//! <dir>/braid.json          the manifest: format, configuration, ordinal counter, model
//! <dir>/lexical/            the main lexical partition's tantivy index (records without a
//!                           tenant or of several); its meta.json is the commit point
//! <dir>/lexical/pool/       the tenants not yet promoted; lexical/tenant-<hex>/ one promoted
//!                           tenant's (both named by the main partition's commit)
//! <dir>/vectors/            the vector store's shared partition (records without a tenant):
//!                           vectors.braidvec (the base: every vector and the HNSW graph) and
//!                           vectors.braidlog (what each commit since the base changed,
//!                           appended; merged into a new base past half its size)
//! <dir>/vectors/pool/       the same for the tenants not yet promoted (no graph)
//! <dir>/vectors/tenant-<hex>/  the same for one promoted tenant (hex of its name)
//! <dir>/synonyms.txt        the synonym set, when one is set (replaced atomically)
//! ```

use std::path::{Path, PathBuf};

/// The manifest's file name.
pub(crate) const MANIFEST_FILE: &str = "braid.json";
const LEXICAL_DIR: &str = "lexical";
const VECTORS_DIR: &str = "vectors";
/// The synonym set, in the Solr/Elasticsearch `synonyms.txt` format (optional).
const SYNONYMS_FILE: &str = "synonyms.txt";
/// tantivy's commit point inside the lexical folder: replaced by rename at every commit.
const COMMIT_POINT: &str = "meta.json";

/// The paths of one index directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    root: PathBuf,
}

impl Layout {
    pub fn new(root: &Path) -> Layout {
        Layout { root: root.to_path_buf() }
    }

    /// The index directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `braid.json`.
    pub fn manifest(&self) -> PathBuf {
        self.root.join(MANIFEST_FILE)
    }

    /// The temporary file a new manifest is written to before its rename.
    pub fn manifest_tmp(&self) -> PathBuf {
        self.root.join(format!("{MANIFEST_FILE}.tmp"))
    }

    /// Whether the directory holds an index (its manifest is the last file a create writes).
    pub fn holds_index(&self) -> bool {
        self.manifest().exists()
    }

    /// The lexical index's folder.
    pub fn lexical(&self) -> PathBuf {
        self.root.join(LEXICAL_DIR)
    }

    /// The vector store's folder.
    pub fn vectors(&self) -> PathBuf {
        self.root.join(VECTORS_DIR)
    }

    /// The vector store's main file (its presence means a store was saved).
    pub fn vector_file(&self) -> PathBuf {
        self.vectors().join(braid_vector::VECTORS_FILE)
    }

    /// `synonyms.txt` (read at every open and reload; none means no synonyms).
    pub fn synonyms(&self) -> PathBuf {
        self.root.join(SYNONYMS_FILE)
    }

    /// The temporary file a new synonym set is written to before its rename.
    pub fn synonyms_tmp(&self) -> PathBuf {
        self.root.join(format!("{SYNONYMS_FILE}.tmp"))
    }

    /// The bytes of the commit point, `None` when it cannot be read. Two commits never share
    /// them (tantivy's meta.json names the segments and the opstamp of the commit).
    pub fn commit_point(&self) -> Option<Vec<u8>> {
        std::fs::read(self.lexical().join(COMMIT_POINT)).ok()
    }

    /// Whether `name`, a file in a lexical folder that has no manifest beside it, is one that an
    /// interrupted create leaves (tantivy's empty commit point, its lock and bookkeeping files).
    pub fn is_create_leftover(name: &str) -> bool {
        name == COMMIT_POINT || name.starts_with('.')
    }
}
