//! The on-disk format: one checksummed file holding every slot's vector (live or tombstoned)
//! and, once the store has one, its graph, so opening a large store reads its graph instead of
//! rebuilding it.
//!
//! ```text
//! magic      8 bytes  "BRAIDVEC"
//! version    u32      FORMAT_VERSION (versions 1 to 3 are still read, see below)
//! dim        u32
//! m, ef_construction, ef_search         u32 each
//! exact_threshold                        u64
//! rebuild_tombstone_fraction             f32
//! quantization u8     0: f32, 1: int8
//! count      u64      live slots
//! slots      u64      slots in the arena (live or tombstoned), the graph's id space
//! slots x (ord u64, live u8, row)         row: dim x f32, or scale f32 then dim x i8
//! graph      u8       0: none; 1: the graph follows
//!   points u64, entry u32 (u32::MAX: none), levels points x u8,
//!   layer-0 links points x (1 + 2m) x u32, upper offsets points x u32,
//!   upper_len u64, upper links upper_len x u32
//! folds      u8       (format 5) 0: nothing; 1: this base folds a log into an older base
//!   base_len u64, base_crc u32, records u64   that base, and how many of its log's records
//! crc32      u32      over every byte before it
//! ```
//! All integers and floats are little-endian. Tombstoned slots keep their vectors because the
//! graph still walks through them. A record with several vectors (its passages) has them in
//! adjacent live slots; its ordinal is live nowhere else.
//!
//! A base a background merge wrote ([`crate::MergeJob`]) says which base and how many records of
//! the log bound to it it holds: until the merge rebinds the rest of that log to the new base,
//! an open replays the log's later records on top of it (see [`crate::log`]).
//!
//! Format 4 is the same layout without the folds section; format 3 the same with at most one live slot per ordinal; it is read as it is.
//! Format 2 (Braid before its own graph) named an `hnsw_rs` dump beside the file; format 1 had
//! no slots. Both still open: their live vectors are read into fresh slots and the graph is
//! rebuilt; the next save writes the current format and removes the old dump files.
//!
//! Crash safety: a save writes a temporary file, fsyncs it, renames it over the old one and
//! fsyncs the directory: a crash leaves the old file or the new one.
//!
//! This is the *base* of a log-structured store: what changed since it was written is
//! appended to the log beside it ([`crate::log`]), bound to it by its length and the checksum
//! at its end ([`base_id`]), and the file is written again only when the log is merged in.

use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use braid_core::{Error, Ordinal, Result};

use crate::log::BaseId;
use crate::params::{HnswParams, Quantization};
use crate::rows::{Rows, StoredRow};

/// The file [`crate::VectorStore::save`] writes inside its directory.
pub const VECTORS_FILE: &str = "vectors.braidvec";

/// The format version this build writes.
pub const FORMAT_VERSION: u32 = 5;

const MAGIC: &[u8; 8] = b"BRAIDVEC";
const HEADER_V1_LEN: usize = 8 + 4 + 4 + 4 * 3 + 8 + 4 + 8;
const HEADER_V2_LEN: usize = HEADER_V1_LEN + 8 + 8 + 4 + 4 + 4;
const CRC_LEN: usize = 4;
/// The prefix of the `hnsw_rs` dumps format 2 named.
const GRAPH_PREFIX: &str = "graph-";
const NO_ENTRY: u32 = u32::MAX;
/// Bytes of slots [`read_body`] reads at a time.
const READ_BATCH: usize = 1 << 20;

/// A graph's arrays as the file holds them ([`crate::graph`] builds and checks them).
#[cfg_attr(not(feature = "hnsw"), allow(dead_code))]
pub(crate) struct GraphParts {
    /// Neighbours per point on the upper layers (layer 0 has twice as many).
    pub(crate) m: usize,
    /// Each point's top layer (`u8::MAX`: a slot never inserted).
    pub(crate) levels: Vec<u8>,
    /// Per point a count and `2m` layer-0 neighbours.
    pub(crate) links0: Vec<u32>,
    /// Per point the offset of its upper-layer blocks (`u32::MAX`: none).
    pub(crate) upper_at: Vec<u32>,
    /// The upper layers' blocks.
    pub(crate) upper: Vec<u32>,
    /// The entry point.
    pub(crate) entry: Option<u32>,
}

/// What [`read`] hands back.
pub(crate) struct Saved {
    pub(crate) dim: usize,
    pub(crate) params: HnswParams,
    /// The ordinal each slot was written for.
    pub(crate) slot_ord: Vec<Ordinal>,
    /// Whether each slot is live.
    pub(crate) live: Vec<bool>,
    pub(crate) rows: Rows,
    /// The graph, when one was saved.
    pub(crate) graph: Option<GraphParts>,
    /// The file's version.
    pub(crate) version: u32,
    /// Which file this was (what a log beside it must be bound to).
    pub(crate) id: BaseId,
    /// The older base and log records this one holds, when a merge wrote it.
    pub(crate) folds: Option<Folds>,
}

/// What a base a merge wrote holds besides its own bytes: an older base and the first
/// `records` records of the log bound to that base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Folds {
    pub(crate) base: BaseId,
    pub(crate) records: u64,
}

/// The temporary file [`write`] writes a whole base to before renaming it.
const SAVE_TMP: &str = "vectors.braidvec.tmp";
/// The temporary file a background merge writes its base to ([`write_file`], [`install`]):
/// another name than a save's, as a merge writes while a commit may write a whole base.
pub(crate) const MERGE_TMP: &str = "vectors.braidvec.merge";

/// What [`write`] saves.
pub(crate) struct ToSave<'a> {
    pub(crate) dim: usize,
    pub(crate) params: &'a HnswParams,
    pub(crate) slot_ord: &'a [Ordinal],
    pub(crate) live: &'a [bool],
    pub(crate) rows: &'a Rows,
    pub(crate) graph: Option<GraphParts>,
    /// What the base folds (a background merge's base), if anything.
    pub(crate) folds: Option<Folds>,
}

/// Removes the `hnsw_rs` dumps a format 2 file named (later formats name none).
pub(crate) fn remove_stale_graphs(dir: &Path) -> Result<()> {
    let entries = fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Some(base) = name.strip_suffix(".hnsw.graph").or_else(|| name.strip_suffix(".hnsw.data")) else { continue };
        if base.starts_with(GRAPH_PREFIX) {
            fs::remove_file(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
        }
    }
    Ok(())
}

/// A writer that checksums what passes through it.
struct CrcWriter<W: Write> {
    inner: W,
    hasher: crc32fast::Hasher,
}

impl<W: Write> CrcWriter<W> {
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.hasher.update(bytes);
        self.inner.write_all(bytes)
    }
    fn u8(&mut self, v: u8) -> io::Result<()> {
        self.put(&[v])
    }
    fn u32(&mut self, v: u32) -> io::Result<()> {
        self.put(&v.to_le_bytes())
    }
    fn u64(&mut self, v: u64) -> io::Result<()> {
        self.put(&v.to_le_bytes())
    }
    fn u32s(&mut self, values: &[u32]) -> io::Result<()> {
        let mut buf = Vec::with_capacity(4 * 4096);
        for chunk in values.chunks(4096) {
            buf.clear();
            chunk.iter().for_each(|v| buf.extend_from_slice(&v.to_le_bytes()));
            self.put(&buf)?;
        }
        Ok(())
    }
}

/// Writes `save` to `dir/VECTORS_FILE` atomically (temporary file, fsync, rename, directory
/// fsync), streaming so a large store is never held twice in memory. Returns which file it
/// wrote.
pub(crate) fn write(dir: &Path, save: &ToSave<'_>) -> Result<BaseId> {
    let id = write_file(dir, SAVE_TMP, save)?;
    install(dir, SAVE_TMP)?;
    Ok(id)
}

/// Renames `dir/tmp` (written and fsynced by [`write_file`]) over the base and fsyncs the
/// directory: from here a crash leaves the new base.
pub(crate) fn install(dir: &Path, tmp: &str) -> Result<()> {
    rename_into_place(dir, tmp)?;
    sync(dir)
}

/// Renames `dir/tmp` over the base (not yet durable: see [`sync`]).
pub(crate) fn rename_into_place(dir: &Path, tmp: &str) -> Result<()> {
    let path = dir.join(VECTORS_FILE);
    fs::rename(dir.join(tmp), &path).map_err(|e| Error::io(&path, e))
}

/// Fsyncs `dir`, making the renames in it durable.
pub(crate) fn sync(dir: &Path) -> Result<()> {
    sync_dir(dir).map_err(|e| Error::io(dir, e))
}

/// Writes `save` to `dir/tmp` and fsyncs it (the base is not replaced: see [`install`]).
/// Returns which base the file is.
pub(crate) fn write_file(dir: &Path, tmp: &str, save: &ToSave<'_>) -> Result<BaseId> {
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    for (what, value) in [
        ("dim", save.dim),
        ("m", save.params.m),
        ("ef_construction", save.params.ef_construction),
        ("ef_search", save.params.ef_search),
    ] {
        to_u32(value, what)?;
    }
    let tmp = dir.join(tmp);
    let written = (|| -> io::Result<BaseId> {
        let file = File::create(&tmp)?;
        let mut w = CrcWriter { inner: BufWriter::with_capacity(1 << 20, file), hasher: crc32fast::Hasher::new() };
        let p = save.params;
        w.put(MAGIC)?;
        w.u32(FORMAT_VERSION)?;
        for v in [save.dim, p.m, p.ef_construction, p.ef_search] {
            w.u32(v as u32)?;
        }
        w.u64(p.exact_threshold as u64)?;
        w.put(&p.rebuild_tombstone_fraction.to_le_bytes())?;
        w.u8(quantization_code(save.rows.quantization()))?;
        w.u64(save.live.iter().filter(|&&l| l).count() as u64)?;
        w.u64(save.slot_ord.len() as u64)?;
        let mut row = Vec::with_capacity(9 + save.rows.row_bytes());
        for (slot, (&ord, &live)) in save.slot_ord.iter().zip(save.live).enumerate() {
            row.clear();
            row.extend_from_slice(&ord.to_le_bytes());
            row.push(u8::from(live));
            match save.rows.stored(slot) {
                StoredRow::F32(values) => values.iter().for_each(|x| row.extend_from_slice(&x.to_le_bytes())),
                StoredRow::Int8(scale, codes) => {
                    row.extend_from_slice(&scale.to_le_bytes());
                    row.extend(codes.iter().map(|&c| c as u8));
                }
            }
            w.put(&row)?;
        }
        match &save.graph {
            None => w.u8(0)?,
            Some(g) => {
                w.u8(1)?;
                w.u64(g.levels.len() as u64)?;
                w.u32(g.entry.unwrap_or(NO_ENTRY))?;
                w.put(&g.levels)?;
                w.u32s(&g.links0)?;
                w.u32s(&g.upper_at)?;
                w.u64(g.upper.len() as u64)?;
                w.u32s(&g.upper)?;
            }
        }
        match &save.folds {
            None => w.u8(0)?,
            Some(f) => {
                w.u8(1)?;
                w.u64(f.base.len)?;
                w.u32(f.base.crc)?;
                w.u64(f.records)?;
            }
        }
        let crc = w.hasher.clone().finalize();
        w.inner.write_all(&crc.to_le_bytes())?;
        let file = w.inner.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        Ok(BaseId { len: file.metadata()?.len(), crc })
    })();
    written.map_err(|e| Error::io(&tmp, e))
}

/// Which base file `dir` holds now (its length and stored checksum, read from its end), or
/// `None` when it has none or one too short to be a vector file.
pub(crate) fn base_id(dir: &Path) -> Result<Option<BaseId>> {
    use std::io::{Seek, SeekFrom};
    let path = dir.join(VECTORS_FILE);
    let mut file = match File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&path, e)),
    };
    let io = |e| Error::io(&path, e);
    let len = file.metadata().map_err(io)?.len();
    if len < (HEADER_V1_LEN + CRC_LEN) as u64 {
        return Ok(None);
    }
    file.seek(SeekFrom::Start(len - CRC_LEN as u64)).map_err(io)?;
    let mut crc = [0u8; CRC_LEN];
    file.read_exact(&mut crc).map_err(io)?;
    Ok(Some(BaseId { len, crc: u32::from_le_bytes(crc) }))
}

fn quantization_code(q: Quantization) -> u8 {
    match q {
        Quantization::F32 => 0,
        Quantization::Int8 => 1,
    }
}

/// A reader that checksums what it reads and never reads past the body (the file's length
/// less its checksum), so a count in a damaged file cannot make it allocate beyond the file.
struct CrcReader<R: Read> {
    inner: R,
    hasher: crc32fast::Hasher,
    left: u64,
    path: PathBuf,
}

impl<R: Read> CrcReader<R> {
    fn take(&mut self, n: usize) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; self.check_left(n as u64)?];
        self.fill(&mut buf)?;
        Ok(buf)
    }
    fn check_left(&self, n: u64) -> Result<usize> {
        if n > self.left {
            return Err(corrupt(&self.path, format!("truncated: {n} more bytes expected, {} left", self.left)));
        }
        Ok(n as usize)
    }
    fn fill(&mut self, buf: &mut [u8]) -> Result<()> {
        self.check_left(buf.len() as u64)?;
        self.inner.read_exact(buf).map_err(|e| Error::io(&self.path, e))?;
        self.hasher.update(buf);
        self.left -= buf.len() as u64;
        Ok(())
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        self.fill(&mut out)?;
        Ok(out)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    fn u32s(&mut self, n: u64) -> Result<Vec<u32>> {
        let n = self.check_left(n.saturating_mul(4))? / 4;
        let mut out = Vec::with_capacity(n);
        let mut buf = vec![0u8; 4 * 4096];
        let mut done = 0;
        while done < n {
            let chunk = (n - done).min(4096);
            self.fill(&mut buf[..4 * chunk])?;
            out.extend(buf[..4 * chunk].chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])));
            done += chunk;
        }
        Ok(out)
    }
}

/// Reads and verifies `dir/VECTORS_FILE`.
pub(crate) fn read(dir: &Path) -> Result<Saved> {
    let path = dir.join(VECTORS_FILE);
    let file = match File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(corrupt(&path, "file is missing")),
        Err(e) => return Err(Error::io(&path, e)),
    };
    let len = file.metadata().map_err(|e| Error::io(&path, e))?.len();
    if len < (HEADER_V1_LEN + CRC_LEN) as u64 {
        return Err(corrupt(
            &path,
            format!("truncated: {len} bytes, the header alone needs {}", HEADER_V1_LEN + CRC_LEN),
        ));
    }
    let mut file = BufReader::with_capacity(1 << 20, file);
    let mut start = [0u8; 12];
    file.read_exact(&mut start).map_err(|e| Error::io(&path, e))?;
    if &start[..8] != MAGIC {
        return Err(corrupt(&path, "not a braid vector file (bad magic)"));
    }
    let version = u32::from_le_bytes([start[8], start[9], start[10], start[11]]);
    match version {
        1 | 2 => {
            let mut bytes = start.to_vec();
            file.read_to_end(&mut bytes).map_err(|e| Error::io(&path, e))?;
            let crc = u32::from_le_bytes(bytes[bytes.len() - CRC_LEN..].try_into().expect("4 bytes"));
            let mut saved = read_legacy(path, bytes)?;
            (saved.version, saved.id) = (version, BaseId { len, crc });
            Ok(saved)
        }
        3 | 4 | FORMAT_VERSION => {
            let mut r =
                CrcReader { inner: file, hasher: crc32fast::Hasher::new(), left: len - CRC_LEN as u64 - 12, path };
            r.hasher.update(&start);
            let mut saved = read_body(&mut r)?;
            if version >= 5 {
                saved.folds = match r.u8()? {
                    0 => None,
                    1 => Some(Folds { base: BaseId { len: r.u64()?, crc: r.u32()? }, records: r.u64()? }),
                    _ => return Err(corrupt(&r.path, "the folds flag is neither 0 nor 1")),
                };
            }
            if r.left != 0 {
                return Err(corrupt(&r.path, format!("{} bytes past the end of the data", r.left)));
            }
            let mut stored = [0u8; CRC_LEN];
            r.inner.read_exact(&mut stored).map_err(|e| Error::io(&r.path, e))?;
            let stored = u32::from_le_bytes(stored);
            if r.hasher.clone().finalize() != stored {
                return Err(corrupt(&r.path, "checksum mismatch"));
            }
            (saved.version, saved.id) = (version, BaseId { len, crc: stored });
            Ok(saved)
        }
        found => Err(Error::FormatVersion { path, found, expected: FORMAT_VERSION }),
    }
}

/// The body of a format 3, 4 or 5 file, after its magic and version (up to the folds section).
fn read_body<R: Read>(r: &mut CrcReader<R>) -> Result<Saved> {
    let dim = r.u32()? as usize;
    let mut params = HnswParams {
        m: r.u32()? as usize,
        ef_construction: r.u32()? as usize,
        ef_search: r.u32()? as usize,
        exact_threshold: usize::try_from(r.u64()?).unwrap_or(usize::MAX),
        rebuild_tombstone_fraction: f32::from_le_bytes(r.array()?),
        quantization: Quantization::F32,
    };
    params.quantization = match r.u8()? {
        0 => Quantization::F32,
        1 => Quantization::Int8,
        other => return Err(corrupt(&r.path, format!("unknown quantization {other}"))),
    };
    let count = r.u64()?;
    let slots = r.u64()?;
    let mut rows = Rows::new(dim, params.quantization);
    let row_len = 9 + rows.row_bytes() as u64;
    r.check_left(slots.saturating_mul(row_len))?;
    let slots = slots as usize;
    rows.reserve(slots);
    let mut slot_ord = Vec::with_capacity(slots);
    let mut live = Vec::with_capacity(slots);
    let mut live_slots = 0u64;
    // Slots are read (and checksummed) many at a time: one read and one checksum update of a
    // few hundred bytes per slot cost a third of a cold open's reading at a million vectors.
    let row_len = row_len as usize;
    let batch = (READ_BATCH / row_len).max(1);
    let mut chunk = vec![0u8; batch.min(slots.max(1)) * row_len];
    let mut values: Vec<f32> = Vec::with_capacity(dim);
    let mut codes: Vec<i8> = Vec::with_capacity(dim);
    let mut done = 0;
    while done < slots {
        let n = (slots - done).min(batch);
        r.fill(&mut chunk[..n * row_len])?;
        done += n;
        for buf in chunk[..n * row_len].chunks_exact(row_len) {
            let ord = u64::from_le_bytes(buf[..8].try_into().expect("8 bytes"));
            let is_live = match buf[8] {
                0 => false,
                1 => true,
                _ => return Err(corrupt(&r.path, "a live flag is neither 0 nor 1")),
            };
            live_slots += u64::from(is_live);
            let body = &buf[9..];
            match params.quantization {
                Quantization::F32 => {
                    values.clear();
                    values.extend(body.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])));
                    if !values.iter().all(|x| x.is_finite()) {
                        return Err(corrupt(&r.path, "a vector has a non-finite component"));
                    }
                    rows.push_stored(StoredRow::F32(&values));
                }
                Quantization::Int8 => {
                    let scale = f32::from_le_bytes([body[0], body[1], body[2], body[3]]);
                    if !scale.is_finite() || scale < 0.0 {
                        return Err(corrupt(&r.path, "a vector has a bad scale"));
                    }
                    codes.clear();
                    codes.extend(body[4..].iter().map(|&b| b as i8));
                    rows.push_stored(StoredRow::Int8(scale, &codes));
                }
            }
            slot_ord.push(ord);
            live.push(is_live);
        }
    }
    if live_slots != count {
        return Err(corrupt(&r.path, format!("the header counts {count} live vectors, the file holds {live_slots}")));
    }
    let graph = match r.u8()? {
        0 => None,
        1 => {
            let points = r.u64()?;
            if points > slots as u64 {
                return Err(corrupt(&r.path, "the graph has more points than the arena has slots"));
            }
            let points = points as usize;
            let entry = r.u32()?;
            let levels = r.take(points)?;
            let m = params.m.clamp(2, 1 << 16);
            let links0 = r.u32s(points as u64 * (1 + 2 * m as u64))?;
            let upper_at = r.u32s(points as u64)?;
            let upper_len = r.u64()?;
            let upper = r.u32s(upper_len)?;
            Some(GraphParts { m, levels, links0, upper_at, upper, entry: (entry != NO_ENTRY).then_some(entry) })
        }
        _ => return Err(corrupt(&r.path, "the graph flag is neither 0 nor 1")),
    };
    Ok(Saved {
        dim,
        params,
        slot_ord,
        live,
        rows,
        graph,
        version: FORMAT_VERSION,
        id: BaseId { len: 0, crc: 0 },
        folds: None,
    })
}

/// Reads a file of format 1 or 2 (whole, in `bytes`): its live vectors, renumbered into
/// slots `0..count` (the `hnsw_rs` dump a format 2 file names is not read: the graph is
/// rebuilt, and the next save removes the dump).
fn read_legacy(path: PathBuf, bytes: Vec<u8>) -> Result<Saved> {
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
    let dim = r.u32() as usize;
    let params = HnswParams {
        m: r.u32() as usize,
        ef_construction: r.u32() as usize,
        ef_search: r.u32() as usize,
        exact_threshold: usize::try_from(r.u64()).unwrap_or(usize::MAX),
        rebuild_tombstone_fraction: f32::from_le_bytes(r.array()),
        quantization: Quantization::F32,
    };
    let count = r.u64();
    let (slots, name_len, row) = if version == 1 {
        (count, 0usize, 8 + 4 * dim as u128)
    } else {
        if bytes.len() < HEADER_V2_LEN + CRC_LEN {
            return Err(corrupt(
                &path,
                format!("truncated: {} bytes, the header alone needs {}", bytes.len(), HEADER_V2_LEN + CRC_LEN),
            ));
        }
        let slots = r.u64();
        // The dump's point count, its two checksums and its name: the dump is not read.
        r.take(8 + 4 + 4);
        let name_len = r.u32() as usize;
        if bytes.len() < HEADER_V2_LEN + name_len + CRC_LEN {
            return Err(corrupt(&path, "truncated inside the graph name"));
        }
        r.take(name_len);
        (slots, name_len, 16 + 4 * dim as u128)
    };
    let header = if version == 1 { HEADER_V1_LEN } else { HEADER_V2_LEN + name_len };
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
    let mut slot_ord = Vec::with_capacity(count);
    let mut rows = Rows::new(dim, Quantization::F32);
    let mut unit = Vec::with_capacity(dim);
    let mut seen = std::collections::HashSet::with_capacity(count);
    let mut seen_slots = std::collections::HashSet::with_capacity(count);
    for i in 0..count {
        let slot = if version == 1 { i as u64 } else { r.u64() };
        let ord = r.u64();
        if !seen.insert(ord) {
            return Err(corrupt(&path, "an ordinal appears twice"));
        }
        if slot >= slots || !seen_slots.insert(slot) {
            return Err(corrupt(&path, "a slot is out of range or appears twice"));
        }
        slot_ord.push(ord);
        unit.clear();
        for _ in 0..dim {
            let x = f32::from_le_bytes(r.array());
            if !x.is_finite() {
                return Err(corrupt(&path, "a vector has a non-finite component"));
            }
            unit.push(x);
        }
        rows.push_stored(StoredRow::F32(&unit));
    }
    Ok(Saved {
        dim,
        params,
        live: vec![true; slot_ord.len()],
        slot_ord,
        rows,
        graph: None,
        version: 1,
        id: BaseId { len: 0, crc: 0 },
        folds: None,
    })
}

fn corrupt(path: &Path, reason: impl Into<String>) -> Error {
    Error::Corrupt { path: PathBuf::from(path), reason: reason.into() }
}

fn to_u32(value: usize, what: &str) -> Result<u32> {
    u32::try_from(value).map_err(|_| Error::Vector(format!("{what} = {value} does not fit the file format")))
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
