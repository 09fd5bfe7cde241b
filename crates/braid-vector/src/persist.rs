//! The on-disk format: one checksummed file of live vectors; the graph is rebuilt on open.
//!
//! ```text
//! magic      8 bytes  "BRAIDVEC"
//! version    u32      FORMAT_VERSION
//! dim        u32
//! m, ef_construction, ef_search         u32 each
//! exact_threshold                        u64
//! rebuild_tombstone_fraction             f32
//! count      u64
//! count x (ord u64, dim x f32)           live vectors, unit length
//! crc32      u32      over every byte before it
//! ```
//! All integers and floats are little-endian.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use braid_core::{Error, Ord, Result};

use crate::params::HnswParams;

/// The file [`crate::VectorStore::save`] writes inside its directory.
pub const VECTORS_FILE: &str = "vectors.braidvec";

/// The format version this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

const MAGIC: &[u8; 8] = b"BRAIDVEC";
const HEADER_LEN: usize = 8 + 4 + 4 + 4 * 3 + 8 + 4 + 8;
const CRC_LEN: usize = 4;

/// What [`read`] hands back.
pub(crate) struct Saved {
    pub(crate) dim: usize,
    pub(crate) params: HnswParams,
    pub(crate) ords: Vec<Ord>,
    pub(crate) arena: Vec<f32>,
}

/// Writes `records` (exactly `count` of them) to `dir/VECTORS_FILE` atomically.
pub(crate) fn write<'a>(
    dir: &Path,
    dim: usize,
    params: &HnswParams,
    count: usize,
    records: impl Iterator<Item = (Ord, &'a [f32])>,
) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut bytes = Vec::with_capacity(HEADER_LEN + count * (8 + 4 * dim) + CRC_LEN);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&to_u32(dim, "dim")?.to_le_bytes());
    bytes.extend_from_slice(&to_u32(params.m, "m")?.to_le_bytes());
    bytes.extend_from_slice(&to_u32(params.ef_construction, "ef_construction")?.to_le_bytes());
    bytes.extend_from_slice(&to_u32(params.ef_search, "ef_search")?.to_le_bytes());
    bytes.extend_from_slice(&(params.exact_threshold as u64).to_le_bytes());
    bytes.extend_from_slice(&params.rebuild_tombstone_fraction.to_le_bytes());
    bytes.extend_from_slice(&(count as u64).to_le_bytes());
    let mut written = 0usize;
    for (ord, vector) in records {
        bytes.extend_from_slice(&ord.to_le_bytes());
        for x in vector {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        written += 1;
    }
    if written != count {
        return Err(Error::Vector(format!("expected {count} live vectors to save, found {written}")));
    }
    let crc = crc32fast::hash(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());

    let path = dir.join(VECTORS_FILE);
    let tmp = dir.join(format!("{VECTORS_FILE}.tmp"));
    write_synced(&tmp, &bytes).map_err(|e| Error::io(&tmp, e))?;
    fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
    sync_dir(dir).map_err(|e| Error::io(dir, e))?;
    Ok(())
}

/// Reads and verifies `dir/VECTORS_FILE`.
pub(crate) fn read(dir: &Path) -> Result<Saved> {
    let path = dir.join(VECTORS_FILE);
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(corrupt(&path, "file is missing")),
        Err(e) => return Err(Error::io(&path, e)),
    };
    if bytes.len() < HEADER_LEN + CRC_LEN {
        return Err(corrupt(
            &path,
            format!("truncated: {} bytes, the header alone needs {}", bytes.len(), HEADER_LEN + CRC_LEN),
        ));
    }
    let mut r = Reader { bytes: &bytes, at: 0 };
    if r.take(8) != MAGIC {
        return Err(corrupt(&path, "not a braid vector file (bad magic)"));
    }
    let version = r.u32();
    if version != FORMAT_VERSION {
        return Err(Error::FormatVersion { path, found: version, expected: FORMAT_VERSION });
    }
    let dim = r.u32() as usize;
    let params = HnswParams {
        m: r.u32() as usize,
        ef_construction: r.u32() as usize,
        ef_search: r.u32() as usize,
        exact_threshold: usize::try_from(r.u64()).unwrap_or(usize::MAX),
        rebuild_tombstone_fraction: f32::from_le_bytes(r.array()),
    };
    let count = r.u64();
    let expected_len = (8 + 4 * dim as u128) * u128::from(count) + (HEADER_LEN + CRC_LEN) as u128;
    if bytes.len() as u128 != expected_len {
        return Err(corrupt(
            &path,
            format!(
                "truncated or padded: {} bytes, {count} vectors of {dim} dimensions need {expected_len}",
                bytes.len()
            ),
        ));
    }
    let body_len = bytes.len() - CRC_LEN;
    let stored_crc = u32::from_le_bytes(bytes[body_len..].try_into().expect("4 bytes"));
    if crc32fast::hash(&bytes[..body_len]) != stored_crc {
        return Err(corrupt(&path, "checksum mismatch"));
    }
    // The length check above bounds `count` by the file size, so these fit in memory.
    let count = count as usize;
    let mut ords = Vec::with_capacity(count);
    let mut arena = Vec::with_capacity(count * dim);
    let mut seen = std::collections::HashSet::with_capacity(count);
    for _ in 0..count {
        let ord = r.u64();
        if !seen.insert(ord) {
            return Err(corrupt(&path, "an ordinal appears twice"));
        }
        ords.push(ord);
        for _ in 0..dim {
            let x = f32::from_le_bytes(r.array());
            if !x.is_finite() {
                return Err(corrupt(&path, "a vector has a non-finite component"));
            }
            arena.push(x);
        }
    }
    Ok(Saved { dim, params, ords, arena })
}

fn corrupt(path: &Path, reason: impl Into<String>) -> Error {
    Error::Corrupt { path: PathBuf::from(path), reason: reason.into() }
}

fn to_u32(value: usize, what: &str) -> Result<u32> {
    u32::try_from(value).map_err(|_| Error::Vector(format!("{what} = {value} does not fit the file format")))
}

fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = File::create(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

/// A cursor over bytes whose length was checked up front.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> &[u8] {
        let out = &self.bytes[self.at..self.at + n];
        self.at += n;
        out
    }

    fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N));
        out
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.array())
    }

    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.array())
    }
}
