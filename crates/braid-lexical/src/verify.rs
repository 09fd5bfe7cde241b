//! Checking the files of a lexical index against their checksums: cheaply when it opens, in
//! full on a background thread (Lucene's split: `CodecUtil.retrieveChecksum` when a segment
//! opens, `checkFooter` on the files read whole, `checkIntegrity` before a merge).
//!
//! Every file of a tantivy segment ends in a footer, `[body][footer JSON][u32 LE: the JSON's
//! length][u32 LE: 1337]`, whose JSON holds the index format and the CRC-32 of the body
//! (`tantivy::directory::footer::Footer`). Tantivy records no file's length anywhere else, so
//! the footer is the length check: a file cut short or grown by any number of bytes no longer
//! ends in one. When a partition opens, [`Verifier::cover`] checks each file of its commit
//! ([`footer_of`]: there, long enough for a footer, ending in one that parses, in a format this
//! build reads) and reads the files of up to [`SMALL_FILE`] bytes whole before tantivy parses
//! any of them; the larger ones — nearly every byte of a large index — wait in a queue that a
//! background thread ([`Verifier::start`]) reads whole, or that the caller reads at once
//! ([`Verifier::wait`], which works through the queue rather than only waiting on it).
//!
//! A mismatch found there is kept ([`VerificationStatus::Damaged`]): the index's reads then fail
//! with [`Error::Corrupt`] naming the file ([`Verifier::damage`]), and a writer never opens on
//! a commit that has not been read whole ([`crate::LexicalIndex::writer`]).

use std::collections::{HashSet, VecDeque};
use std::fs::File;
use std::io::{ErrorKind, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use braid_core::{Error, Result};
use tantivy::directory::error::OpenReadError;
use tantivy::directory::footer::Footer;
use tantivy::directory::Directory;

use crate::directory::PartitionDirectory;
use tantivy::{HasLen, SegmentMeta};

/// Files up to this many bytes are read whole when their partition opens, before tantivy parses
/// them; larger ones are read by the verification that follows the open. Each costs at most a
/// mebibyte read, and tantivy reads the small ones (deletions, norms and columns of small
/// segments) whole anyway; the large ones are most of an index's bytes.
pub const SMALL_FILE: u64 = 1 << 20;

/// The last four bytes of every tantivy file.
const FOOTER_MAGIC: u32 = 1337;
/// The longest footer JSON tantivy accepts.
const FOOTER_MAX_LEN: u32 = 50_000;
/// The footer's fixed tail: the JSON's length and the magic number.
const FOOTER_TAIL: u64 = 8;
/// Bytes read at a time while a file's checksum is computed.
const CHUNK: usize = 1 << 20;

/// When an opening index reads its lexical files whole to compare them with their checksums.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verification {
    /// The open checks every file of the commit cheaply (it is there and ends in an intact
    /// footer) and reads those of up to `small_files` bytes whole before tantivy parses any;
    /// a thread it starts reads the others whole afterwards. Searches run meanwhile; a writer
    /// waits for it. The default, with `small_files` [`SMALL_FILE`]; 0 leaves every file to the
    /// thread.
    Background {
        /// Files up to this many bytes are read whole by the open itself.
        small_files: u64,
    },
    /// The open reads every file whole before tantivy parses any, and fails naming the first
    /// that does not match its checksum (one read of the whole index).
    Blocking,
}

impl Default for Verification {
    fn default() -> Self {
        Verification::Background { small_files: SMALL_FILE }
    }
}

impl Verification {
    /// The largest file the open reads whole itself.
    fn read_at_open(self) -> u64 {
        match self {
            Verification::Background { small_files } => small_files,
            Verification::Blocking => u64::MAX,
        }
    }
}

/// How far the verification of an open index's files has come ([`Verification`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VerificationStatus {
    /// Files are still being read: `verified_bytes` of the `total_bytes` left to the
    /// verification after the open.
    Running {
        /// Bytes read and found to match so far.
        verified_bytes: u64,
        /// Bytes of the files the verification reads after the open.
        total_bytes: u64,
    },
    /// Every file of the commit matched its checksum.
    Verified,
    /// A file did not match its checksum, or could not be read: every later read and writer
    /// of this index fails with [`Error::Corrupt`] naming it.
    Damaged {
        /// The damaged file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

/// A file of a commit whose footer was read: what a full read compares its body with.
struct Footed {
    /// The file.
    path: PathBuf,
    /// Its length when its footer was read.
    len: u64,
    /// The bytes before the footer, which the checksum covers.
    body: u64,
    /// The CRC-32 its footer records.
    crc: u32,
    /// Its partition's directory (sharing the mappings its searchers read), to read the file
    /// through when another process's writer removed it from the disk since.
    dir: Option<PartitionDirectory>,
}

/// A damaged file, as found.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Damage {
    path: PathBuf,
    reason: String,
}

impl Damage {
    fn error(&self) -> Error {
        Error::Corrupt { path: self.path.clone(), reason: self.reason.clone() }
    }
}

/// The files of one index's commit left to read whole, and what reading them found. One per
/// [`crate::LexicalIndex`]; cheap to clone (clones share it).
#[derive(Clone)]
pub(crate) struct Verifier {
    inner: Arc<Inner>,
    /// Which files the open reads whole itself.
    mode: Verification,
}

struct Inner {
    state: Mutex<State>,
    /// Signalled whenever a file is done, damage is found or the verifier closes.
    changed: Condvar,
    /// Bytes read and found to match since the open.
    verified_bytes: AtomicU64,
    /// Set when the index is dropped: whatever is left is not read.
    closed: AtomicBool,
}

#[derive(Default)]
struct State {
    /// Files left to read whole, in the order they were met.
    queue: VecDeque<Footed>,
    /// Files being read now, by the thread or a caller of [`Verifier::wait`].
    reading: usize,
    /// Bytes (bodies, which the checksums cover) of every file queued since the open.
    total_bytes: u64,
    /// The first damaged file found; nothing more is read after it.
    damage: Option<Damage>,
    /// Every file checked at an open or a writer's open, by path (queued, or read whole): those
    /// are never checked again.
    checked: HashSet<PathBuf>,
    /// The files of `checked` read whole and found to match.
    verified: HashSet<PathBuf>,
    /// Whether the index has finished opening, so a thread may read the queue.
    started: bool,
    /// Whether a background thread is reading the queue.
    thread: bool,
}

impl Verifier {
    /// A verifier with nothing to read yet, for an open that verifies as `mode` says.
    pub fn new(mode: Verification) -> Verifier {
        Verifier::seeded(mode, HashSet::new())
    }

    /// A verifier for a reload of the index `previous` verifies: the files `previous` read
    /// whole are taken as read (a file never changes once written), the others are read whole
    /// before the reload's open returns.
    pub fn after(previous: &Verifier) -> Verifier {
        let verified = previous.inner.lock().verified.clone();
        Verifier::seeded(Verification::Blocking, verified)
    }

    fn seeded(mode: Verification, verified: HashSet<PathBuf>) -> Verifier {
        let state = State { checked: verified.clone(), verified, ..State::default() };
        Verifier {
            mode,
            inner: Arc::new(Inner {
                state: Mutex::new(state),
                changed: Condvar::new(),
                verified_bytes: AtomicU64::new(0),
                closed: AtomicBool::new(false),
            }),
        }
    }

    /// Checks every file of the segments `metas` of the partition in `dir` that this verifier
    /// has not met (see the module's doc), reads those its mode says whole now (the small ones,
    /// or all), and queues the others.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the first file that is missing, has no intact footer, or (a
    /// small one) does not match its checksum.
    pub fn cover(&self, dir: &Path, directory: &PartitionDirectory, metas: &[SegmentMeta]) -> Result<()> {
        let files = self.unknown(dir, metas);
        let (mut queued, mut read) = (Vec::new(), Vec::new());
        for path in files {
            let footed = footer_of(&path, Some(directory.clone()))?;
            if footed.len <= self.mode.read_at_open() {
                read_whole(&footed, None).map_err(|d| d.error())?;
                read.push(path);
            } else {
                queued.push(footed);
            }
        }
        let mut state = self.inner.lock();
        state.checked.extend(read.iter().cloned().chain(queued.iter().map(|f| f.path.clone())));
        state.verified.extend(read);
        state.total_bytes += queued.iter().map(|f| f.body).sum::<u64>();
        state.queue.extend(queued);
        Ok(())
    }

    /// The committed files of `metas` (in `dir`) that no open or writer of this index has
    /// checked yet, sorted.
    pub fn unknown(&self, dir: &Path, metas: &[SegmentMeta]) -> Vec<PathBuf> {
        let state = self.inner.lock();
        commit_files(dir, metas).into_iter().filter(|p| !state.checked.contains(p)).collect()
    }

    /// Remembers `files` (the latest commit's, every one read whole) as the only files checked
    /// and verified, so that a long-lived index that commits all day does not remember every
    /// file it ever read.
    pub fn keep_only(&self, files: HashSet<PathBuf>) {
        let mut state = self.inner.lock();
        state.checked.clone_from(&files);
        state.verified = files;
    }

    /// Lets a background thread read the queue from now on (the index has opened), and starts
    /// one when there is something to read and none is running.
    pub fn start(&self) {
        self.inner.lock().started = true;
        self.resume();
    }

    /// Starts a background thread when the index has opened, files are queued (a partition
    /// opened since) and none is running.
    pub fn resume(&self) {
        let mut state = self.inner.lock();
        if !state.started || state.thread || state.queue.is_empty() || state.damage.is_some() {
            return;
        }
        let inner = self.inner.clone();
        let spawned = std::thread::Builder::new().name("braid-verify".into()).spawn(move || {
            while let Some(file) = inner.next_file(false) {
                if !inner.read(file) {
                    inner.lock().thread = false;
                    break;
                }
            }
            inner.changed.notify_all();
        });
        // Without a thread, the queue is read by the first caller of `wait` (a writer's open).
        state.thread = spawned.is_ok();
    }

    /// Reads whole every file still queued, on this thread alongside the background one, and
    /// waits for the files being read elsewhere.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the damaged file, when the verification found one (now or
    /// before).
    pub fn wait(&self) -> Result<()> {
        while let Some(file) = self.inner.next_file(true) {
            self.inner.read(file);
        }
        let mut state = self.inner.lock();
        while state.damage.is_none() && state.reading > 0 {
            state = self.inner.changed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        match &state.damage {
            Some(damage) => Err(damage.error()),
            None => Ok(()),
        }
    }

    /// The damage found so far, as an error, without waiting.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the damaged file.
    pub fn damage(&self) -> Result<()> {
        match &self.inner.lock().damage {
            Some(damage) => Err(damage.error()),
            None => Ok(()),
        }
    }

    /// How far the verification has come.
    pub fn status(&self) -> VerificationStatus {
        let state = self.inner.lock();
        match &state.damage {
            Some(Damage { path, reason }) => VerificationStatus::Damaged { path: path.clone(), reason: reason.clone() },
            None if state.queue.is_empty() && state.reading == 0 => VerificationStatus::Verified,
            None => VerificationStatus::Running {
                verified_bytes: self.inner.verified_bytes.load(Ordering::Relaxed),
                total_bytes: state.total_bytes,
            },
        }
    }

    /// Stops reading: the index is gone. What is left in the queue is dropped, with the
    /// mappings it held.
    pub fn close(&self) {
        self.inner.closed.store(true, Ordering::Relaxed);
        self.inner.lock().queue.clear();
        self.inner.changed.notify_all();
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The next file to read, counted as being read; `None` when none is left, damage was
    /// found, or (for the background thread, `waiting` false) the open has not finished —
    /// then the thread is marked as gone in the same critical section, so that a file queued
    /// just after starts another.
    fn next_file(&self, waiting: bool) -> Option<Footed> {
        let mut state = self.lock();
        let file = if state.damage.is_some() || self.closed.load(Ordering::Relaxed) || !(waiting || state.started) {
            None
        } else {
            state.queue.pop_front()
        };
        match &file {
            Some(_) => state.reading += 1,
            None if !waiting => state.thread = false,
            None => {}
        }
        file
    }

    /// Reads `file` whole and records what it found; returns whether to go on.
    fn read(&self, file: Footed) -> bool {
        let found = read_whole(&file, Some(self));
        let closed = self.closed.load(Ordering::Relaxed);
        let mut state = self.lock();
        state.reading -= 1;
        match found {
            Ok(()) if !closed => {
                state.verified.insert(file.path);
            }
            Ok(()) => {}
            Err(damage) => {
                if !closed && state.damage.is_none() {
                    state.damage = Some(damage);
                }
            }
        }
        let go_on = state.damage.is_none();
        drop(state);
        self.changed.notify_all();
        go_on
    }
}

/// The files of the segments `metas` of the partition in `dir`, sorted.
pub(crate) fn commit_files(dir: &Path, metas: &[SegmentMeta]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = metas.iter().flat_map(committed_files).map(|f| dir.join(f)).collect();
    files.sort();
    files
}

/// The files a commit of segment `meta` consists of: each component's (the deletions' only
/// when it has some), as tantivy names them.
fn committed_files(meta: &SegmentMeta) -> Vec<PathBuf> {
    meta.list_files().into_iter().filter(|f| meta.has_deletes() || f.extension().is_none_or(|e| e != "del")).collect()
}

/// Reads the footer of the file at `path` (see the module's doc): the cheap check an open
/// makes of every file of its commit.
///
/// # Errors
/// [`Error::Corrupt`] naming the file when it is missing, cannot be read, is shorter than a
/// footer, or does not end in an intact footer of a format this build reads.
fn footer_of(path: &Path, dir: Option<PartitionDirectory>) -> Result<Footed> {
    let damaged = |reason: String| Error::Corrupt { path: path.to_path_buf(), reason };
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => return Err(damaged("missing".into())),
        Err(e) => return Err(damaged(format!("cannot be read: {e}"))),
    };
    let len = file.metadata().map_err(|e| damaged(format!("cannot be read: {e}")))?.len();
    if len < FOOTER_TAIL {
        return Err(damaged(format!("{len} bytes: too short to end in a footer")));
    }
    let mut tail = [0u8; FOOTER_TAIL as usize];
    read_at(&mut file, len - FOOTER_TAIL, &mut tail).map_err(|e| damaged(format!("cannot be read: {e}")))?;
    let json_len = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
    let magic = u32::from_le_bytes([tail[4], tail[5], tail[6], tail[7]]);
    if magic != FOOTER_MAGIC {
        return Err(damaged("does not end in a footer: cut short, grown or overwritten".into()));
    }
    if json_len > FOOTER_MAX_LEN || u64::from(json_len) + FOOTER_TAIL > len {
        return Err(damaged(format!("its footer claims {json_len} bytes of {len}")));
    }
    let body = len - FOOTER_TAIL - u64::from(json_len);
    let mut json = vec![0u8; json_len as usize];
    read_at(&mut file, body, &mut json).map_err(|e| damaged(format!("cannot be read: {e}")))?;
    let footer: Footer =
        serde_json::from_slice(&json).map_err(|e| damaged(format!("its footer does not parse: {e}")))?;
    footer
        .is_compatible()
        .map_err(|_| damaged(format!("written by {:?}, a format this build does not read", footer.version)))?;
    Ok(Footed { path: path.to_path_buf(), len, body, crc: footer.crc, dir })
}

/// Reads `buf.len()` bytes of `file` at `offset`.
fn read_at(file: &mut File, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(buf)
}

/// Reads the body of `file` whole and compares its CRC-32 with the footer's, counting the bytes
/// into `progress` (and stopping early, as if intact, when it closes). A file another process's
/// writer removed since its footer was read is read through the mapping this process's
/// searchers hold; when none does, nothing here reads it any more and it is left.
fn read_whole(file: &Footed, progress: Option<&Inner>) -> std::result::Result<(), Damage> {
    let damaged = |reason: String| Damage { path: file.path.clone(), reason };
    let mut hasher = crc32fast::Hasher::new();
    match File::open(&file.path) {
        Ok(mut opened) => {
            let len = opened.metadata().map_err(|e| damaged(format!("cannot be read: {e}")))?.len();
            if len != file.len {
                return Err(damaged(format!("{len} bytes, {} when the index opened", file.len)));
            }
            let mut buf = vec![0u8; CHUNK];
            let mut left = file.body;
            while left > 0 {
                if progress.is_some_and(|p| p.closed.load(Ordering::Relaxed)) {
                    return Ok(());
                }
                let n = left.min(CHUNK as u64) as usize;
                opened.read_exact(&mut buf[..n]).map_err(|e| damaged(format!("cannot be read: {e}")))?;
                hasher.update(&buf[..n]);
                left -= n as u64;
                if let Some(p) = progress {
                    p.verified_bytes.fetch_add(n as u64, Ordering::Relaxed);
                }
            }
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let (Some(dir), Some(name)) = (&file.dir, file.path.file_name()) else {
                return Err(damaged("missing".into()));
            };
            let mapped = match dir.open_read(Path::new(name)) {
                Ok(mapped) => mapped,
                Err(OpenReadError::FileDoesNotExist(_)) => return Ok(()),
                Err(e) => return Err(damaged(format!("cannot be read: {e}"))),
            };
            if mapped.len() as u64 != file.len {
                return Err(damaged(format!("{} bytes, {} when the index opened", mapped.len(), file.len)));
            }
            let mut at = 0;
            while (at as u64) < file.body {
                let end = (at + CHUNK).min(file.body as usize);
                let bytes = mapped.read_bytes_slice(at..end).map_err(|e| damaged(format!("cannot be read: {e}")))?;
                hasher.update(bytes.as_slice());
                if let Some(p) = progress {
                    p.verified_bytes.fetch_add((end - at) as u64, Ordering::Relaxed);
                }
                at = end;
            }
        }
        Err(e) => return Err(damaged(format!("cannot be read: {e}"))),
    }
    if hasher.finalize() == file.crc {
        Ok(())
    } else {
        Err(damaged("checksum mismatch".into()))
    }
}

/// Checks each of `files` (of the partition in `directory`) and reads it whole now, whatever its
/// size: what a writer's open does with the files of a commit this index did not open.
///
/// # Errors
/// [`Error::Corrupt`] naming the first damaged file.
pub(crate) fn verify_now(directory: Option<&PartitionDirectory>, files: &[PathBuf]) -> Result<()> {
    for path in files {
        let footed = footer_of(path, directory.cloned())?;
        read_whole(&footed, None).map_err(|d| d.error())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use braid_core::Record;

    /// A one-segment index in `dir`, and its files.
    fn segment_files(dir: &Path) -> Vec<PathBuf> {
        let index = crate::LexicalIndex::create(Some(dir), crate::SchemaConfig::default()).unwrap();
        let mut writer = index.writer(crate::DEFAULT_WRITER_HEAP).unwrap();
        for i in 0..20 {
            writer.upsert(i, &Record::new(format!("r{i}")).body(format!("walrus number {i}")), 0).unwrap();
        }
        writer.commit().unwrap();
        let metas = index.shared.main.index.searchable_segment_metas().unwrap();
        commit_files(dir, &metas)
    }

    /// The footer is the length check: a file grown or cut by one byte has none at its end; a
    /// flipped byte in the body passes the footer and fails the whole read.
    #[test]
    fn the_footer_catches_a_changed_length_and_the_whole_read_a_changed_byte() {
        let dir = tempfile::tempdir().unwrap();
        let file = segment_files(dir.path()).into_iter().find(|f| f.extension().is_some_and(|e| e == "store")).unwrap();
        let intact = std::fs::read(&file).unwrap();
        read_whole(&footer_of(&file, None).unwrap(), None).unwrap();
        for changed in [[intact.as_slice(), b"x"].concat(), intact[..intact.len() - 1].to_vec(), Vec::new()] {
            std::fs::write(&file, &changed).unwrap();
            match footer_of(&file, None) {
                Err(Error::Corrupt { path, .. }) => assert_eq!(path, file),
                other => panic!("{} bytes of {}: {:?}", changed.len(), intact.len(), other.map(|f| f.len)),
            }
        }
        let mut flipped = intact.clone();
        flipped[intact.len() / 4] ^= 0x5a;
        std::fs::write(&file, &flipped).unwrap();
        let footed = footer_of(&file, None).unwrap();
        assert_eq!(read_whole(&footed, None), Err(Damage { path: file.clone(), reason: "checksum mismatch".into() }));
    }

    /// In the background a verifier reports how far it is, and ends verified or damaged;
    /// `wait` reads the queue itself when no thread was started.
    #[test]
    fn a_verifier_reads_its_queue_and_keeps_the_damage_it_found() {
        let dir = tempfile::tempdir().unwrap();
        let files = segment_files(dir.path());
        let directory = PartitionDirectory::open(dir.path()).unwrap();
        let metas = tantivy::Index::open(directory.clone()).unwrap().searchable_segment_metas().unwrap();
        let background = Verification::Background { small_files: 0 };

        let clean = Verifier::new(background);
        clean.cover(dir.path(), &directory, &metas).unwrap();
        assert!(matches!(clean.status(), VerificationStatus::Running { verified_bytes: 0, .. }));
        assert_eq!(clean.unknown(dir.path(), &metas), Vec::<PathBuf>::new());
        clean.wait().unwrap();
        assert_eq!(clean.status(), VerificationStatus::Verified);

        let idx = files.iter().find(|f| f.extension().is_some_and(|e| e == "idx")).unwrap();
        let mut bytes = std::fs::read(idx).unwrap();
        bytes[0] ^= 0xff;
        std::fs::write(idx, bytes).unwrap();
        let damaged = Verifier::new(background);
        damaged.cover(dir.path(), &directory, &metas).unwrap();
        damaged.damage().unwrap();
        damaged.start();
        let found = |e: Error| matches!(e, Error::Corrupt { path, .. } if path == *idx);
        assert!(found(damaged.wait().unwrap_err()));
        assert!(found(damaged.damage().unwrap_err()));
        assert!(matches!(damaged.status(), VerificationStatus::Damaged { path, .. } if path == *idx));
        // Read whole at the open, the same file fails the open itself.
        assert!(found(Verifier::new(Verification::Blocking).cover(dir.path(), &directory, &metas).unwrap_err()));
    }
}
