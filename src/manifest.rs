//! The manifest (`braid.json`, see [`crate::layout`]): the index's format version, configuration and ordinal counter, replaced
//! atomically (write a temporary file, fsync, rename, fsync the directory), and sealed by a
//! checksum: the SHA-256 of the rest of it as compact JSON, so a damaged byte anywhere is an
//! [`Error::Corrupt`] naming the file rather than a configuration that silently differs.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

use braid_core::{Error, Result};
use serde::{Deserialize, Serialize};

use crate::layout::Layout;
use crate::semantic::EmbeddingInfo;
use crate::IndexConfig;

/// The on-disk format this build writes (and reads, with the earlier ones): 3 records the
/// marks of the vector store's tenant partitions ([`Manifest::vector_partitions`]), which a
/// reader of format 2 would not open.
pub(crate) const FORMAT_VERSION: u32 = 3;
/// The sealed format before tenant partitions: read as the current one (it has none).
const SEALED_FORMAT: u32 = 2;
/// The format before the checksum: still read, unchecked; the next commit writes the current one.
const UNSEALED_FORMAT: u32 = 1;

/// The synonym file of the index: its text, or `None` when there is none.
pub(crate) fn read_synonyms(layout: &Layout) -> Result<Option<String>> {
    let path = layout.synonyms();
    match fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&path, e)),
    }
}

/// Replaces (or, for `None`, removes) the synonym file of the index, atomically.
pub(crate) fn write_synonyms(layout: &Layout, text: Option<&str>) -> Result<()> {
    let (path, dir) = (layout.synonyms(), layout.root());
    let Some(text) = text else {
        return match fs::remove_file(&path) {
            Ok(()) => sync_dir(dir).map_err(|e| Error::io(dir, e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(&path, e)),
        };
    };
    let tmp = layout.synonyms_tmp();
    let io = |e| Error::io(&tmp, e);
    let mut file = File::create(&tmp).map_err(io)?;
    file.write_all(text.as_bytes()).map_err(io)?;
    file.sync_all().map_err(io)?;
    fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
    sync_dir(dir).map_err(|e| Error::io(dir, e))
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Manifest {
    pub format: u32,
    pub config: IndexConfig,
    pub next_ord: u64,
    /// The model whose vectors the index holds, once one was attached.
    #[serde(default)]
    pub embedding: Option<EmbeddingInfo>,
    /// The vector files this commit's save left (base and log length), so an open detects a
    /// log that lost acknowledged records. Absent in manifests written before the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_mark: Option<braid_vector::DiskMark>,
    /// The same for each tenant partition and the pool, by partition name
    /// ([`braid_vector::Partition::name`]); `vector_mark` is the shared partition's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub vector_partitions: BTreeMap<String, braid_vector::DiskMark>,
}

/// The manifest as the file holds it: its fields and their checksum.
#[derive(Serialize, Deserialize)]
struct Sealed {
    #[serde(flatten)]
    manifest: Manifest,
    /// `sha256:` and the hex digest of `manifest` as compact JSON.
    #[serde(default)]
    checksum: Option<String>,
}

/// The error of a manifest that cannot be encoded (a bug: every part of it serializes).
fn encode(e: serde_json::Error) -> Error {
    Error::Encode { what: "the manifest", source: e.into() }
}

impl Manifest {
    /// The checksum the file records for this manifest. Every part of the configuration
    /// serializes in a fixed order (its sets are `BTreeSet`s), so a manifest read back gives
    /// the checksum it was written with.
    fn checksum(&self) -> Result<String> {
        use sha2::{Digest, Sha256};
        let json = serde_json::to_vec(self).map_err(encode)?;
        Ok(format!("sha256:{}", Sha256::digest(&json).iter().map(|b| format!("{b:02x}")).collect::<String>()))
    }

    pub fn read(layout: &Layout) -> Result<Manifest> {
        let path = layout.manifest();
        let bytes = fs::read(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                Error::Corrupt { path: path.clone(), reason: "missing (not a Braid index?)".into() }
            }
            _ => Error::io(&path, e),
        })?;
        #[derive(Deserialize)]
        struct Version {
            format: u32,
        }
        let unparsable = |e: serde_json::Error| Error::unparsable(&path, e);
        let version: Version = serde_json::from_slice(&bytes).map_err(unparsable)?;
        let corrupt = |reason: String| Error::Corrupt { path: path.clone(), reason };
        match version.format {
            UNSEALED_FORMAT => serde_json::from_slice(&bytes).map_err(unparsable),
            SEALED_FORMAT | FORMAT_VERSION => {
                let sealed: Sealed = serde_json::from_slice(&bytes).map_err(unparsable)?;
                let recorded = sealed.checksum.ok_or_else(|| corrupt("no checksum".into()))?;
                if recorded != sealed.manifest.checksum()? {
                    return Err(corrupt("checksum mismatch".into()));
                }
                // The checksum covers what the file parses to, so damage that still parses to
                // the same manifest (a key turned unknown whose value was its default) passes
                // it. A manifest of this format is also, byte for byte, what it writes.
                if version.format == FORMAT_VERSION {
                    let again = Sealed { manifest: sealed.manifest, checksum: Some(recorded) };
                    if serde_json::to_vec_pretty(&again).map_err(encode)? != bytes {
                        return Err(corrupt("bytes that the manifest it holds does not write".into()));
                    }
                    return Ok(again.manifest);
                }
                Ok(sealed.manifest)
            }
            found => Err(Error::FormatVersion { path, found, expected: FORMAT_VERSION }),
        }
    }

    pub fn write(&self, layout: &Layout) -> Result<()> {
        let (path, tmp, dir) = (layout.manifest(), layout.manifest_tmp(), layout.root());
        let sealed = Sealed { manifest: self.clone(), checksum: Some(self.checksum()?) };
        let json = serde_json::to_vec_pretty(&sealed).map_err(encode)?;
        let io = |e| Error::io(&tmp, e);
        let mut file = File::create(&tmp).map_err(io)?;
        file.write_all(&json).map_err(io)?;
        file.sync_all().map_err(io)?;
        fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
        sync_dir(dir).map_err(|e| Error::io(dir, e))
    }
}

/// Makes renames and new files in `dir` durable (a no-op where directories cannot be synced).
pub(crate) fn sync_dir(dir: &Path) -> std::io::Result<()> {
    if cfg!(unix) {
        File::open(dir)?.sync_all()
    } else {
        Ok(())
    }
}
