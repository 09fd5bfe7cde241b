//! The manifest (`braid.json`, see [`crate::layout`]): the index's format version, configuration and ordinal counter, replaced
//! atomically (write a temporary file, fsync, rename, fsync the directory).

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

use braid_core::{Error, Result};
use serde::{Deserialize, Serialize};

use crate::layout::Layout;
use crate::semantic::EmbeddingInfo;
use crate::IndexConfig;

/// The on-disk format this build reads and writes.
pub(crate) const FORMAT_VERSION: u32 = 1;

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
}

impl Manifest {
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
        let version: Version =
            serde_json::from_slice(&bytes).map_err(|e| Error::Corrupt { path: path.clone(), reason: e.to_string() })?;
        if version.format != FORMAT_VERSION {
            return Err(Error::FormatVersion { path, found: version.format, expected: FORMAT_VERSION });
        }
        serde_json::from_slice(&bytes).map_err(|e| Error::Corrupt { path, reason: e.to_string() })
    }

    pub fn write(&self, layout: &Layout) -> Result<()> {
        let (path, tmp, dir) = (layout.manifest(), layout.manifest_tmp(), layout.root());
        let json = serde_json::to_vec_pretty(self).map_err(|e| Error::Lexical(e.to_string()))?;
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
