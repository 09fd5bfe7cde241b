//! The on-disk format: one checksummed file of live vectors by slot, and, once the store has a
//! graph, the `hnsw_rs` dump of that graph beside it (two files, checksummed in the vector
//! file), so opening a large store loads its graph instead of rebuilding it.
//!
//! ```text
//! magic      8 bytes  "BRAIDVEC"
//! version    u32      FORMAT_VERSION (version 1, without slots or graph, is still read)
//! dim        u32
//! m, ef_construction, ef_search         u32 each
//! exact_threshold                        u64
//! rebuild_tombstone_fraction             f32
//! count      u64      live vectors
//! slots      u64      slots in the arena (live or tombstoned), the graph's id space
//! graph_points u64    points in the dumped graph (0: no graph saved)
//! graph_crc, data_crc  u32 each: crc32 of <graph>.hnsw.graph and <graph>.hnsw.data
//! name_len   u32, then the dump's basename (UTF-8)
//! count x (slot u64, ord u64, dim x f32)  live vectors, unit length
//! crc32      u32      over every byte before it
//! ```
//! All integers and floats are little-endian.
//!
//! Crash safety: a save dumps the graph under a fresh basename and fsyncs it, then replaces
//! the vector file (temporary file, fsync, rename, directory fsync), and only then removes
//! dumps the new file does not name. A crash leaves the old file naming its old dump, or the
//! new one naming the new dump; never a file naming a missing or half-written graph.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use braid_core::{Error, Ordinal, Result};

use crate::params::HnswParams;

/// The file [`crate::VectorStore::save`] writes inside its directory.
pub const VECTORS_FILE: &str = "vectors.braidvec";

/// The format version this build writes.
pub const FORMAT_VERSION: u32 = 2;

const MAGIC: &[u8; 8] = b"BRAIDVEC";
const HEADER_V1_LEN: usize = 8 + 4 + 4 + 4 * 3 + 8 + 4 + 8;
const HEADER_LEN: usize = HEADER_V1_LEN + 8 + 8 + 4 + 4 + 4;
const CRC_LEN: usize = 4;
/// The prefix of every graph dump's basename.
const GRAPH_PREFIX: &str = "graph-";

/// A graph dump named by a vector file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SavedGraph {
    pub(crate) basename: String,
    pub(crate) points: usize,
    graph_crc: u32,
    data_crc: u32,
}

/// What [`read`] hands back.
pub(crate) struct Saved {
    pub(crate) dim: usize,
    pub(crate) params: HnswParams,
    /// Slots in the arena (live or not).
    pub(crate) slots: usize,
    /// `(slot, ord)` of each live vector, in file order; `arena` holds their vectors in the
    /// same order.
    pub(crate) live: Vec<(usize, Ordinal)>,
    pub(crate) arena: Vec<f32>,
    /// The graph dump, when one was saved.
    pub(crate) graph: Option<SavedGraph>,
}

/// A fresh basename for a graph dump in `dir`.
pub(crate) fn new_graph_basename() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{GRAPH_PREFIX}{}-{nanos}", std::process::id())
}

/// The two files of the dump `basename` in `dir`.
pub(crate) fn graph_files(dir: &Path, basename: &str) -> [PathBuf; 2] {
    [dir.join(format!("{basename}.hnsw.graph")), dir.join(format!("{basename}.hnsw.data"))]
}

/// Fsyncs a finished dump and describes it for the vector file.
pub(crate) fn seal_graph(dir: &Path, basename: &str, points: usize) -> Result<SavedGraph> {
    let [graph, data] = graph_files(dir, basename);
    let mut crcs = [0u32; 2];
    for (file, crc) in [&graph, &data].into_iter().zip(&mut crcs) {
        File::open(file).and_then(|f| f.sync_all()).map_err(|e| Error::io(file, e))?;
        *crc = crc_of(file)?;
    }
    Ok(SavedGraph { basename: basename.to_string(), points, graph_crc: crcs[0], data_crc: crcs[1] })
}

/// Checks that the dump a vector file names is there and unchanged.
#[cfg_attr(not(feature = "hnsw"), allow(dead_code))]
pub(crate) fn verify_graph(dir: &Path, graph: &SavedGraph) -> Result<()> {
    let [graph_file, data_file] = graph_files(dir, &graph.basename);
    for (file, crc) in [(&graph_file, graph.graph_crc), (&data_file, graph.data_crc)] {
        if !file.exists() {
            return Err(corrupt(file, "missing, but the vector file names it"));
        }
        if crc_of(file)? != crc {
            return Err(corrupt(file, "checksum mismatch"));
        }
    }
    Ok(())
}

/// Removes graph dumps in `dir` other than `keep` (those of earlier saves, or of a save that
/// crashed before its vector file was renamed).
pub(crate) fn remove_stale_graphs(dir: &Path, keep: Option<&str>) -> Result<()> {
    let entries = fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Some(base) = name.strip_suffix(".hnsw.graph").or_else(|| name.strip_suffix(".hnsw.data")) else { continue };
        if base.starts_with(GRAPH_PREFIX) && Some(base) != keep {
            fs::remove_file(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
        }
    }
    Ok(())
}

fn crc_of(path: &Path) -> Result<u32> {
    use std::io::Read;
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut hasher = crc32fast::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finalize())
}

/// Writes `records` (exactly `count` live `(slot, ord, vector)`s out of `slots`) to
/// `dir/VECTORS_FILE` atomically, naming `graph` when there is one.
pub(crate) fn write<'a>(
    dir: &Path,
    dim: usize,
    params: &HnswParams,
    count: usize,
    slots: usize,
    graph: Option<&SavedGraph>,
    records: impl Iterator<Item = (usize, Ordinal, &'a [f32])>,
) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let name = graph.map_or("", |g| g.basename.as_str());
    let mut bytes = Vec::with_capacity(HEADER_LEN + name.len() + count * (16 + 4 * dim) + CRC_LEN);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&to_u32(dim, "dim")?.to_le_bytes());
    bytes.extend_from_slice(&to_u32(params.m, "m")?.to_le_bytes());
    bytes.extend_from_slice(&to_u32(params.ef_construction, "ef_construction")?.to_le_bytes());
    bytes.extend_from_slice(&to_u32(params.ef_search, "ef_search")?.to_le_bytes());
    bytes.extend_from_slice(&(params.exact_threshold as u64).to_le_bytes());
    bytes.extend_from_slice(&params.rebuild_tombstone_fraction.to_le_bytes());
    bytes.extend_from_slice(&(count as u64).to_le_bytes());
    bytes.extend_from_slice(&(slots as u64).to_le_bytes());
    bytes.extend_from_slice(&(graph.map_or(0, |g| g.points) as u64).to_le_bytes());
    bytes.extend_from_slice(&graph.map_or(0, |g| g.graph_crc).to_le_bytes());
    bytes.extend_from_slice(&graph.map_or(0, |g| g.data_crc).to_le_bytes());
    bytes.extend_from_slice(&to_u32(name.len(), "graph name")?.to_le_bytes());
    bytes.extend_from_slice(name.as_bytes());
    let mut written = 0usize;
    for (slot, ord, vector) in records {
        bytes.extend_from_slice(&(slot as u64).to_le_bytes());
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
    if bytes.len() < HEADER_V1_LEN + CRC_LEN {
        return Err(corrupt(
            &path,
            format!("truncated: {} bytes, the header alone needs {}", bytes.len(), HEADER_V1_LEN + CRC_LEN),
        ));
    }
    let mut r = Reader { bytes: &bytes, at: 0 };
    if r.take(8) != MAGIC {
        return Err(corrupt(&path, "not a braid vector file (bad magic)"));
    }
    let version = r.u32();
    if version != FORMAT_VERSION && version != 1 {
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
    let (slots, graph, name_len, row) = if version == 1 {
        (count, None, 0usize, 8 + 4 * dim as u128)
    } else {
        if bytes.len() < HEADER_LEN + CRC_LEN {
            return Err(corrupt(
                &path,
                format!("truncated: {} bytes, the header alone needs {}", bytes.len(), HEADER_LEN + CRC_LEN),
            ));
        }
        let slots = r.u64();
        let points = r.u64();
        let (graph_crc, data_crc) = (r.u32(), r.u32());
        let name_len = r.u32() as usize;
        if bytes.len() < HEADER_LEN + name_len + CRC_LEN {
            return Err(corrupt(&path, "truncated inside the graph name"));
        }
        let name =
            String::from_utf8(r.take(name_len).to_vec()).map_err(|_| corrupt(&path, "graph name is not UTF-8"))?;
        let graph = (!name.is_empty()).then(|| SavedGraph {
            basename: name,
            points: usize::try_from(points).unwrap_or(usize::MAX),
            graph_crc,
            data_crc,
        });
        (slots, graph, name_len, 16 + 4 * dim as u128)
    };
    let header = if version == 1 { HEADER_V1_LEN } else { HEADER_LEN + name_len };
    let expected_len = row * u128::from(count) + (header + CRC_LEN) as u128;
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
    if slots < count as u64 || slots > (1u64 << 40) {
        return Err(corrupt(&path, "more live vectors than slots"));
    }
    let slots = slots as usize;
    let mut live = Vec::with_capacity(count);
    let mut arena = Vec::with_capacity(count * dim);
    let mut seen = std::collections::HashSet::with_capacity(count);
    let mut seen_slots = std::collections::HashSet::with_capacity(count);
    for i in 0..count {
        let slot = if version == 1 { i as u64 } else { r.u64() };
        let ord = r.u64();
        if !seen.insert(ord) {
            return Err(corrupt(&path, "an ordinal appears twice"));
        }
        if slot >= slots as u64 || !seen_slots.insert(slot) {
            return Err(corrupt(&path, "a slot is out of range or appears twice"));
        }
        live.push((slot as usize, ord));
        for _ in 0..dim {
            let x = f32::from_le_bytes(r.array());
            if !x.is_finite() {
                return Err(corrupt(&path, "a vector has a non-finite component"));
            }
            arena.push(x);
        }
    }
    if graph.as_ref().is_some_and(|g| g.points > slots) {
        return Err(corrupt(&path, "the graph has more points than the arena has slots"));
    }
    Ok(Saved { dim, params, slots, live, arena, graph })
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
