//! The append-only log beside the vector file: what each save changed since the base file
//! ([`crate::VECTORS_FILE`]) was last written whole.
//!
//! ```text
//! header   28 bytes, written and fsynced before any record
//!   magic "BRAIDLOG", version u32 (LOG_VERSION), base_len u64, base_crc u32, crc32 u32
//! record   one per save that changed something
//!   len u64 (bytes of body), body, crc32 u32 over len and body
//! body
//!   seq u64                   1 for the first record after the base, then 2, 3, ...
//!   slots_before u64          slots in the store before this record
//!   new u64, new x (ord u64, live u8, row)     rows as in the base file
//!   dead u64, dead x slot u64                  slots below slots_before tombstoned
//!   graph u8                  0: none; 1: what changed in the graph follows
//!     points_before u64, new_points u64, levels new_points x u8, entry u32 (u32::MAX: none),
//!     blocks u64, blocks x (id u32, words u32, words x u32)
//!       a block is a point's whole link lists: layer 0 (a count and 2m ids), then each upper
//!       layer (a count and m ids); a new point's, or an old point whose links changed
//! ```
//!
//! The header binds the log to one base file (its length and its stored checksum): a log
//! whose binding differs is left over from before the last merge (a crash between the new
//! base's rename and the log's removal), holds nothing the base lacks, and is ignored — unless
//! the base says it *folds* the log's base and its first `n` records (a background merge's
//! base, [`crate::MergeJob`]): then the records after the `n`th are replayed on it. The merge
//! then rebinds those records to the new base ([`start_rebind`], [`finish_rebind`]: a new log,
//! its header bound to the new base and the records renumbered from 1, renamed over the old one), so either log a
//! crash leaves holds every record the new base lacks.
//!
//! A record whose length runs past the end of the file, or whose checksum fails as the last
//! thing in the file, is the torn tail of an append a crash interrupted — before the commit
//! point, since a record is fsynced before the commit's manifest and lexical commit — and is
//! ignored; the next append overwrites it. A bad record with more bytes after it is damage,
//! an [`Error::Corrupt`].

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use braid_core::{Error, Ordinal, Result};

use crate::params::Quantization;
use crate::rows::{Rows, StoredRow};

/// The log's file name, beside [`crate::VECTORS_FILE`].
pub const LOG_FILE: &str = "vectors.braidlog";

/// The log format this build writes and reads.
const LOG_VERSION: u32 = 1;
const MAGIC: &[u8; 8] = b"BRAIDLOG";
/// The header's length.
pub(crate) const HEADER_LEN: u64 = 8 + 4 + 8 + 4 + 4;
const NO_ENTRY: u32 = u32::MAX;

/// Which base file a log belongs to: its length and the checksum stored at its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BaseId {
    pub(crate) len: u64,
    pub(crate) crc: u32,
}

/// What changed in a graph since a save: see the module docs.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct GraphPatch {
    pub(crate) points_before: usize,
    /// The levels of the points added.
    pub(crate) levels: Vec<u8>,
    pub(crate) entry: Option<u32>,
    /// Each changed point's whole link lists.
    pub(crate) blocks: Vec<(u32, Vec<u32>)>,
}

/// One log record, as read back.
pub(crate) struct Record {
    pub(crate) seq: u64,
    pub(crate) slots_before: usize,
    /// The new slots: ordinal, live flag.
    pub(crate) slot_ord: Vec<Ordinal>,
    pub(crate) live: Vec<bool>,
    /// The new slots' rows, in a [`Rows`] of the store's kind.
    pub(crate) rows: Rows,
    pub(crate) dead: Vec<usize>,
    pub(crate) graph: Option<GraphPatch>,
}

/// A record to append, borrowing the store's tables.
pub(crate) struct Append<'a> {
    pub(crate) seq: u64,
    pub(crate) slots_before: usize,
    pub(crate) slot_ord: &'a [Ordinal],
    pub(crate) live: &'a [bool],
    pub(crate) rows: &'a Rows,
    pub(crate) dead: &'a [usize],
    pub(crate) graph: Option<GraphPatch>,
}

impl Append<'_> {
    /// The record's bytes: length, body, checksum.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let new = self.slot_ord.len() - self.slots_before;
        let mut out = Vec::with_capacity(64 + new * (9 + self.rows.row_bytes()) + 8 * self.dead.len());
        out.extend_from_slice(&0u64.to_le_bytes());
        put_u64(&mut out, self.seq);
        put_u64(&mut out, self.slots_before as u64);
        put_u64(&mut out, new as u64);
        for slot in self.slots_before..self.slot_ord.len() {
            put_u64(&mut out, self.slot_ord[slot]);
            out.push(u8::from(self.live[slot]));
            match self.rows.stored(slot) {
                StoredRow::F32(values) => values.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
                StoredRow::Int8(scale, codes) => {
                    out.extend_from_slice(&scale.to_le_bytes());
                    out.extend(codes.iter().map(|&c| c as u8));
                }
            }
        }
        put_u64(&mut out, self.dead.len() as u64);
        self.dead.iter().for_each(|&slot| put_u64(&mut out, slot as u64));
        match &self.graph {
            None => out.push(0),
            Some(g) => {
                out.push(1);
                put_u64(&mut out, g.points_before as u64);
                put_u64(&mut out, g.levels.len() as u64);
                out.extend_from_slice(&g.levels);
                out.extend_from_slice(&g.entry.unwrap_or(NO_ENTRY).to_le_bytes());
                put_u64(&mut out, g.blocks.len() as u64);
                for (id, words) in &g.blocks {
                    out.extend_from_slice(&id.to_le_bytes());
                    out.extend_from_slice(&(words.len() as u32).to_le_bytes());
                    words.iter().for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
                }
            }
        }
        let body = (out.len() - 8) as u64;
        out[..8].copy_from_slice(&body.to_le_bytes());
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// The header binding a log to `base`.
fn header(base: BaseId) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN as usize);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&LOG_VERSION.to_le_bytes());
    put_u64(&mut out, base.len);
    out.extend_from_slice(&base.crc.to_le_bytes());
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// What [`read`] found.
pub(crate) struct Logged {
    /// The base the log's header binds it to (`None`: no usable log).
    pub(crate) bound: Option<BaseId>,
    /// The valid records, in order (empty when the log is missing, stale or torn at once).
    pub(crate) records: Vec<Record>,
    /// Bytes of header and valid records: where the next append goes (0: no usable header;
    /// the next append starts the file afresh).
    pub(crate) valid: u64,
    /// The file's length as read (0 when there is none).
    pub(crate) seen: u64,
}

/// Reads the log in `dir` bound to one of `bases` (a base, and the base it folds) of
/// `dim`-dimensional rows held as `quantization`: its valid records, ignoring a stale log and a
/// torn tail. `upto`: read no byte past this offset (a merge reads the records it snapshotted
/// while commits append more).
pub(crate) fn read(
    dir: &Path,
    bases: &[BaseId],
    upto: Option<u64>,
    dim: usize,
    quantization: Quantization,
) -> Result<Logged> {
    let path = dir.join(LOG_FILE);
    let file = match File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Logged { bound: None, records: Vec::new(), valid: 0, seen: 0 })
        }
        Err(e) => return Err(Error::io(&path, e)),
    };
    let seen = file.metadata().map_err(|e| Error::io(&path, e))?.len();
    let empty = Logged { bound: None, records: Vec::new(), valid: 0, seen };
    let readable = upto.map_or(seen, |upto| upto.min(seen));
    if readable < HEADER_LEN {
        // A header is fsynced before any record follows it: a short one was torn alone.
        return Ok(empty);
    }
    let mut file = BufReader::with_capacity(1 << 20, file);
    let mut head = [0u8; HEADER_LEN as usize];
    file.read_exact(&mut head).map_err(|e| Error::io(&path, e))?;
    let body = HEADER_LEN as usize - 4;
    if &head[..8] != MAGIC || crc32fast::hash(&head[..body]) != u32::from_le_bytes(head[body..].try_into().expect("4"))
    {
        return Err(corrupt(&path, "the log's header is damaged"));
    }
    let version = u32::from_le_bytes(head[8..12].try_into().expect("4 bytes"));
    if version != LOG_VERSION {
        return Err(Error::FormatVersion { path, found: version, expected: LOG_VERSION });
    }
    let bound = BaseId {
        len: u64::from_le_bytes(head[12..20].try_into().expect("8 bytes")),
        crc: u32::from_le_bytes(head[20..24].try_into().expect("4 bytes")),
    };
    if !bases.contains(&bound) {
        tracing::debug!(target: "braid::vector", path = %path.display(), "log of an earlier base ignored");
        return Ok(empty);
    }
    let mut records = Vec::new();
    let mut at = HEADER_LEN;
    let mut left = readable - HEADER_LEN;
    while left > 0 {
        let torn = |at: u64| {
            tracing::warn!(target: "braid::vector", path = %path.display(), at, bytes = seen - at,
                "torn log tail ignored (an append a crash interrupted)");
        };
        if left < 12 {
            torn(at);
            break;
        }
        let mut len = [0u8; 8];
        file.read_exact(&mut len).map_err(|e| Error::io(&path, e))?;
        let body_len = u64::from_le_bytes(len);
        if body_len > left - 12 {
            torn(at);
            break;
        }
        let mut bytes = vec![0u8; body_len as usize + 4];
        file.read_exact(&mut bytes).map_err(|e| Error::io(&path, e))?;
        let (body, stored) = bytes.split_at(body_len as usize);
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&len);
        hasher.update(body);
        let last = left == body_len + 12;
        if hasher.finalize() != u32::from_le_bytes(stored.try_into().expect("4 bytes")) {
            if last {
                torn(at);
                break;
            }
            return Err(corrupt(&path, format!("the log record at byte {at} fails its checksum")));
        }
        let record = parse(body, dim, quantization).map_err(|reason| corrupt(&path, reason))?;
        if record.seq != records.len() as u64 + 1 {
            return Err(corrupt(&path, format!("log record {} where {} was due", record.seq, records.len() + 1)));
        }
        records.push(record);
        at += body_len + 12;
        left -= body_len + 12;
    }
    Ok(Logged { bound: Some(bound), records, valid: at, seen })
}

/// A cursor over a record's body (checksummed already, so a bad count is damage, reported).
struct Body<'a> {
    bytes: &'a [u8],
}

impl<'a> Body<'a> {
    fn take(&mut self, n: u64) -> std::result::Result<&'a [u8], String> {
        if n > self.bytes.len() as u64 {
            return Err("a log record ends early".into());
        }
        let (out, rest) = self.bytes.split_at(n as usize);
        self.bytes = rest;
        Ok(out)
    }
    fn u8(&mut self) -> std::result::Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> std::result::Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    fn u64(&mut self) -> std::result::Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    /// A count of items of at least `each` bytes, checked against what is left.
    fn count(&mut self, each: u64) -> std::result::Result<usize, String> {
        let n = self.u64()?;
        if n.saturating_mul(each.max(1)) > self.bytes.len() as u64 {
            return Err("a log record counts more items than it holds".into());
        }
        Ok(n as usize)
    }
}

fn parse(bytes: &[u8], dim: usize, quantization: Quantization) -> std::result::Result<Record, String> {
    let mut b = Body { bytes };
    let seq = b.u64()?;
    let slots_before = usize::try_from(b.u64()?).map_err(|_| "a slot count past usize".to_string())?;
    let mut rows = Rows::new(dim, quantization);
    let row_len = 9 + rows.row_bytes() as u64;
    let new = b.count(row_len)?;
    rows.reserve(new);
    let (mut slot_ord, mut live) = (Vec::with_capacity(new), Vec::with_capacity(new));
    let mut values: Vec<f32> = Vec::with_capacity(dim);
    let mut codes: Vec<i8> = Vec::with_capacity(dim);
    for _ in 0..new {
        slot_ord.push(b.u64()?);
        live.push(match b.u8()? {
            0 => false,
            1 => true,
            _ => return Err("a live flag is neither 0 nor 1".into()),
        });
        let row = b.take(row_len - 9)?;
        match quantization {
            Quantization::F32 => {
                values.clear();
                values.extend(row.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])));
                if !values.iter().all(|x| x.is_finite()) {
                    return Err("a vector has a non-finite component".into());
                }
                rows.push_stored(StoredRow::F32(&values));
            }
            Quantization::Int8 => {
                let scale = f32::from_le_bytes([row[0], row[1], row[2], row[3]]);
                if !scale.is_finite() || scale < 0.0 {
                    return Err("a vector has a bad scale".into());
                }
                codes.clear();
                codes.extend(row[4..].iter().map(|&c| c as i8));
                rows.push_stored(StoredRow::Int8(scale, &codes));
            }
        }
    }
    let dead_count = b.count(8)?;
    let mut dead = Vec::with_capacity(dead_count);
    for _ in 0..dead_count {
        let slot = b.u64()?;
        if slot >= slots_before as u64 {
            return Err("a tombstone names a slot the store did not have".into());
        }
        dead.push(slot as usize);
    }
    let graph = match b.u8()? {
        0 => None,
        1 => {
            let points_before = usize::try_from(b.u64()?).map_err(|_| "a point count past usize".to_string())?;
            let added = b.count(1)?;
            let levels = b.take(added as u64)?.to_vec();
            let entry = b.u32()?;
            let count = b.count(8)?;
            let mut blocks = Vec::with_capacity(count);
            for _ in 0..count {
                let id = b.u32()?;
                let words = u64::from(b.u32()?);
                let raw = b.take(words.saturating_mul(4))?;
                blocks.push((id, raw.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()));
            }
            Some(GraphPatch { points_before, levels, entry: (entry != NO_ENTRY).then_some(entry), blocks })
        }
        _ => return Err("the graph flag is neither 0 nor 1".into()),
    };
    if !b.bytes.is_empty() {
        return Err("a log record holds bytes past its end".into());
    }
    Ok(Record { seq, slots_before, slot_ord, live, rows, dead, graph })
}

/// Where the log of a store stands on disk, as this process last read or wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogState {
    /// Bytes of header and valid records (0: none usable).
    pub(crate) valid: u64,
    /// The file's length when last read or written (0: none).
    pub(crate) seen: u64,
    /// Records in it.
    pub(crate) records: u64,
}

/// Appends `record` (encoded) to the log in `dir` bound to `base`, as `state` says the log
/// stands, and fsyncs it; a log that is missing, stale or torn at its first record is started
/// afresh (header first, fsynced, then the directory). Returns the new state.
///
/// The caller has checked that the file's length is still `state.seen` (nobody else wrote).
pub(crate) fn append(dir: &Path, base: BaseId, state: &LogState, record: &[u8]) -> Result<LogState> {
    let path = dir.join(LOG_FILE);
    let io = |e| Error::io(&path, e);
    let fresh = state.valid == 0;
    let mut file = OpenOptions::new().create(true).write(true).truncate(false).open(&path).map_err(io)?;
    let mut at = state.valid;
    if fresh {
        file.set_len(0).map_err(io)?;
        file.write_all(&header(base)).map_err(io)?;
        file.sync_data().map_err(io)?;
        sync_dir(dir).map_err(|e| Error::io(dir, e))?;
        at = HEADER_LEN;
    } else if state.seen > state.valid {
        // The torn tail of an append a crash interrupted.
        file.set_len(state.valid).map_err(io)?;
    }
    file.seek(SeekFrom::Start(at)).map_err(io)?;
    file.write_all(record).map_err(io)?;
    file.sync_data().map_err(io)?;
    let valid = at + record.len() as u64;
    Ok(LogState { valid, seen: valid, records: if fresh { 1 } else { state.records + 1 } })
}

/// The log's tail being rebound to a new base ([`start_rebind`], [`finish_rebind`]): a
/// temporary file holding a header bound to the new base and the records copied so far,
/// renumbered from 1.
pub(crate) struct Rebound {
    file: File,
    /// Bytes of the old log copied (up to this offset).
    read_to: u64,
    /// Bytes in the temporary file.
    len: u64,
    /// Records in it.
    records: u64,
    /// Records of the old log the new base holds.
    folded: u64,
}

/// Starts rebinding the log in `dir` to `base`, a new base holding the log's first `folded`
/// records: the records between byte `from` (where record `folded + 1` starts) and `to` are
/// renumbered from 1 and written after a header bound to `base` to a temporary file, fsynced.
/// Takes no lock: commits go on appending past `to`, and [`finish_rebind`] copies those.
pub(crate) fn start_rebind(dir: &Path, base: BaseId, from: u64, to: u64, folded: u64) -> Result<Rebound> {
    let tmp = dir.join(LOG_TMP);
    let tail = read_range(dir, from, to)?;
    let mut rebound = Rebound {
        file: File::create(&tmp).map_err(|e| Error::io(&tmp, e))?,
        read_to: from,
        len: 0,
        records: 0,
        folded,
    };
    rebound.file.write_all(&header(base)).map_err(|e| Error::io(&tmp, e))?;
    rebound.len = HEADER_LEN;
    rebound.push(dir, tail, to)?;
    rebound.file.sync_data().map_err(|e| Error::io(&tmp, e))?;
    Ok(rebound)
}

/// Finishes [`start_rebind`] with the log standing as `state` says (the caller holds the
/// files' lock, so nothing is appended meanwhile): copies the records appended since (rare, a
/// few kilobytes) and fsyncs them, then renames the temporary file over the log and fsyncs the
/// directory (without records to keep, removes the log instead). Returns the new log's state.
///
/// A crash leaves the old log (its first `folded` records then skipped on open, as the new
/// base holds them) or the new one: both hold every record the new base lacks.
pub(crate) fn finish_rebind(dir: &Path, mut rebound: Rebound, state: &LogState) -> Result<LogState> {
    let (path, tmp) = (dir.join(LOG_FILE), dir.join(LOG_TMP));
    if state.valid > rebound.read_to {
        let tail = read_range(dir, rebound.read_to, state.valid)?;
        rebound.push(dir, tail, state.valid)?;
        rebound.file.sync_data().map_err(|e| Error::io(&tmp, e))?;
    }
    if rebound.records == 0 {
        std::fs::remove_file(&tmp).map_err(|e| Error::io(&tmp, e))?;
        remove(dir)?;
        return Ok(LogState { valid: 0, seen: 0, records: 0 });
    }
    std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
    sync_dir(dir).map_err(|e| Error::io(dir, e))?;
    Ok(LogState { valid: rebound.len, seen: rebound.len, records: rebound.records })
}

impl Rebound {
    /// Renumbers the records in `tail` (the old log's bytes up to `to`) and appends them.
    fn push(&mut self, dir: &Path, mut tail: Vec<u8>, to: u64) -> Result<()> {
        let path = dir.join(LOG_FILE);
        let mut at = 0usize;
        while at < tail.len() {
            if at + 16 > tail.len() {
                return Err(corrupt(&path, "a log record ends early"));
            }
            let body_len = u64::from_le_bytes(tail[at..at + 8].try_into().expect("8 bytes")) as usize;
            let end = at.saturating_add(8).saturating_add(body_len);
            let seq = u64::from_le_bytes(tail[at + 8..at + 16].try_into().expect("8 bytes"));
            let due = self.folded + self.records + 1;
            if seq != due || end.saturating_add(4) > tail.len() {
                return Err(corrupt(&path, format!("log record {seq} where {due} was due")));
            }
            self.records += 1;
            tail[at + 8..at + 16].copy_from_slice(&self.records.to_le_bytes());
            let crc = crc32fast::hash(&tail[at..end]);
            tail[end..end + 4].copy_from_slice(&crc.to_le_bytes());
            at = end + 4;
        }
        self.file.write_all(&tail).map_err(|e| Error::io(dir.join(LOG_TMP), e))?;
        self.len += tail.len() as u64;
        self.read_to = to;
        Ok(())
    }
}

/// The log's bytes from `from` to `to`.
fn read_range(dir: &Path, from: u64, to: u64) -> Result<Vec<u8>> {
    let path = dir.join(LOG_FILE);
    let io = |e| Error::io(&path, e);
    let mut bytes = vec![0u8; to.saturating_sub(from) as usize];
    if !bytes.is_empty() {
        let mut file = File::open(&path).map_err(io)?;
        file.seek(SeekFrom::Start(from)).map_err(io)?;
        file.read_exact(&mut bytes).map_err(io)?;
    }
    Ok(bytes)
}

/// The temporary file [`start_rebind`] writes.
pub(crate) const LOG_TMP: &str = "vectors.braidlog.tmp";

/// The length of the log file in `dir` (0 when there is none).
pub(crate) fn file_len(dir: &Path) -> Result<u64> {
    let path = dir.join(LOG_FILE);
    match std::fs::metadata(&path) {
        Ok(meta) => Ok(meta.len()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(Error::io(&path, e)),
    }
}

/// Removes the log in `dir` (after a merge wrote everything into a new base) and fsyncs the
/// directory.
pub(crate) fn remove(dir: &Path) -> Result<()> {
    let path = dir.join(LOG_FILE);
    match std::fs::remove_file(&path) {
        Ok(()) => sync_dir(dir).map_err(|e| Error::io(dir, e)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(&path, e)),
    }
}

fn corrupt(path: &Path, reason: impl Into<String>) -> Error {
    Error::Corrupt { path: PathBuf::from(path), reason: reason.into() }
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}
