//! The vocabulary of the large segments, saved beside the main partition so that an open reads
//! it instead of building it from the term dictionaries (at a million records the build was
//! about a third of a cold open's CPU).
//!
//! ```text
//! magic      8 bytes  "BRAIDVOC"
//! version    u32      VERSION
//! segments   u64 n, then n x 32 bytes: the tier's segment ids (tantivy's uuid strings), in order
//! the vocabulary      as `Vocabulary::encode` writes it (settings, maps, deletion index)
//! crc32      u32      over every byte before it
//! ```
//! All integers are little-endian. The file is a cache, never the truth: a snapshot uses it
//! only when its segment ids are exactly the large tier's (segments never change once written,
//! and a word's frequency there counts deleted records too, so the same segments always give
//! the same vocabulary) and its checksum holds; otherwise the vocabulary is built from the
//! term dictionaries as before. A file of another tier is expected (another process committed
//! since it was written) and passes unremarked; a damaged one is reported (`braid::lexical`
//! warning) and built again.
//!
//! Only a writer saves it, under the index's writer lock, after a commit or merge that changed
//! the large tier, and when it opens on an index whose file is missing or of another tier. It
//! is written to a temporary file, fsynced, renamed and its directory fsynced, after the commit
//! point: a crash leaves the old file (of the old tier, so unused), the new one, or a
//! temporary file the next save overwrites.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use braid_core::{Error, Result};
use tantivy::index::SegmentId;

use crate::vocabulary::Vocabulary;

/// The file the large tier's vocabulary is saved to, in the main partition's directory.
pub const VOCABULARY_FILE: &str = "vocabulary.braidvoc";
/// The temporary file a save writes before renaming it.
const TMP_FILE: &str = "vocabulary.braidvoc.tmp";
const MAGIC: &[u8; 8] = b"BRAIDVOC";
/// The layout this build writes and reads; another is built again.
const VERSION: u32 = 1;
const CRC_LEN: usize = 4;
/// The length of a segment id as saved (`SegmentId::uuid_string`).
const ID_LEN: usize = 32;

/// The saved vocabulary of one index directory, and the tier this process knows the file holds.
pub(crate) struct SavedVocabulary {
    dir: PathBuf,
    /// The segment ids of the tier the file holds, when this process read or wrote it.
    on_disk: Mutex<Option<Vec<SegmentId>>>,
}

impl SavedVocabulary {
    /// The saved vocabulary of the main partition in `dir`.
    pub fn new(dir: &Path) -> Self {
        SavedVocabulary { dir: dir.to_path_buf(), on_disk: Mutex::new(None) }
    }

    fn path(&self) -> PathBuf {
        self.dir.join(VOCABULARY_FILE)
    }

    /// The saved vocabulary of exactly the segments `ids`, when the file holds it intact;
    /// `None` (the caller builds it) when there is no file, it holds another tier, or it is
    /// damaged (reported).
    pub fn load(&self, ids: &[SegmentId]) -> Option<Vocabulary> {
        let path = self.path();
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                tracing::warn!(target: "braid::lexical", path = %path.display(), error = %e, "the saved vocabulary cannot be read; building it");
                return None;
            }
        };
        match decode(&bytes, ids) {
            Ok(Some(vocabulary)) => {
                *self.on_disk.lock().unwrap_or_else(|p| p.into_inner()) = Some(ids.to_vec());
                Some(vocabulary)
            }
            Ok(None) => None,
            Err(reason) => {
                tracing::warn!(target: "braid::lexical", path = %path.display(), reason, "the saved vocabulary is damaged; building it");
                None
            }
        }
    }

    /// Saves `vocabulary`, the vocabulary of the segments `ids`, unless the file already holds
    /// it (see the module docs for when and how).
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be written.
    pub fn save(&self, ids: &[SegmentId], vocabulary: &Vocabulary) -> Result<()> {
        let mut on_disk = self.on_disk.lock().unwrap_or_else(|p| p.into_inner());
        if on_disk.as_deref() == Some(ids) {
            return Ok(());
        }
        let bytes = encode(ids, vocabulary);
        let tmp = self.dir.join(TMP_FILE);
        let write = || -> std::io::Result<()> {
            use std::io::Write;
            let mut file = std::fs::File::create(&tmp)?;
            file.write_all(&bytes)?;
            file.sync_all()?;
            std::fs::rename(&tmp, self.path())?;
            crate::writer::sync_dir(&self.dir)
        };
        write().map_err(|e| Error::io(&tmp, e))?;
        *on_disk = Some(ids.to_vec());
        Ok(())
    }
}

/// The whole file for the vocabulary of the segments `ids`.
fn encode(ids: &[SegmentId], vocabulary: &Vocabulary) -> Vec<u8> {
    let mut out = Encoder::default();
    out.bytes(MAGIC);
    out.u32(VERSION);
    out.u64(ids.len() as u64);
    for id in ids {
        out.bytes(id.uuid_string().as_bytes());
    }
    vocabulary.encode(&mut out);
    let crc = crc32fast::hash(&out.0);
    out.u32(crc);
    out.0
}

/// The vocabulary in `bytes` when it is that of the segments `ids`; `Ok(None)` when the file
/// is of another version or tier; what is wrong when it is damaged.
fn decode(bytes: &[u8], ids: &[SegmentId]) -> std::result::Result<Option<Vocabulary>, String> {
    let mut input = Decoder::new(bytes);
    if input.take(MAGIC.len())? != MAGIC {
        return Err("not a saved vocabulary (bad magic)".into());
    }
    if input.u32()? != VERSION {
        return Ok(None);
    }
    let count = input.count(ID_LEN)?;
    let mut saved = Vec::with_capacity(count);
    for _ in 0..count {
        let id = std::str::from_utf8(input.take(ID_LEN)?).ok().and_then(|s| SegmentId::from_uuid_string(s).ok());
        saved.push(id.ok_or("a segment id is not a uuid")?);
    }
    if saved != ids {
        return Ok(None);
    }
    let Some(body) = bytes.len().checked_sub(CRC_LEN) else { return Err("truncated".into()) };
    let stored = u32::from_le_bytes(bytes[body..].try_into().expect("4 bytes"));
    if crc32fast::hash(&bytes[..body]) != stored {
        return Err("checksum mismatch".into());
    }
    let mut input = Decoder::new(&bytes[input.at..body]);
    let vocabulary = Vocabulary::decode(&mut input)?;
    if !input.rest().is_empty() {
        return Err(format!("{} bytes past the end of the vocabulary", input.rest().len()));
    }
    Ok(Some(vocabulary))
}

/// Bytes being written, little-endian.
#[derive(Default)]
pub(crate) struct Encoder(Vec<u8>);

impl Encoder {
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn bytes(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
    #[cfg(test)]
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

/// Bytes being read, little-endian; every read is checked against what is left.
pub(crate) struct Decoder<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Decoder<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Decoder { bytes, at: 0 }
    }
    fn rest(&self) -> &'a [u8] {
        &self.bytes[self.at..]
    }
    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], String> {
        if n > self.bytes.len() - self.at {
            return Err(format!("truncated: {n} more bytes expected, {} left", self.bytes.len() - self.at));
        }
        self.at += n;
        Ok(&self.bytes[self.at - n..self.at])
    }
    pub fn u32(&mut self) -> std::result::Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    pub fn u64(&mut self) -> std::result::Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    /// A count of items of `each` bytes that follow, checked against what is left (so a
    /// damaged count cannot make a reader allocate beyond the file).
    pub fn count(&mut self, each: usize) -> std::result::Result<usize, String> {
        let count = self.u64()?;
        let left = (self.bytes.len() - self.at) as u64;
        if count.saturating_mul(each as u64) > left {
            return Err(format!("a count of {count} items of {each} bytes, {left} bytes left"));
        }
        Ok(count as usize)
    }
}

#[cfg(test)]
mod tests {
    use braid_core::Record;

    use super::*;
    use crate::index::LexicalIndex;
    use crate::schema::SchemaConfig;
    use crate::vocabulary::Lookups;

    /// An index in `dir` of one commit of `n` records (one segment: a large tier in tests).
    fn index_of(dir: &Path, n: u64, word: &str) -> LexicalIndex {
        let index = LexicalIndex::create(Some(dir), SchemaConfig::default()).unwrap();
        let mut writer = index.writer(crate::DEFAULT_WRITER_HEAP).unwrap();
        for ord in 0..n {
            let body = format!("{word} return policy number{} shipping", ord % 5);
            writer.upsert(ord, &Record::new(format!("r{ord}")).body(body), 0).unwrap();
        }
        writer.commit().unwrap();
        index
    }

    /// What the vocabulary of `index`'s snapshot answers for a few words.
    fn answers(index: &LexicalIndex) -> Vec<String> {
        let snapshot = index.snapshot();
        let vocabulary = snapshot.vocabulary();
        let lookups = Lookups::default();
        let mut out = Vec::new();
        for word in ["retun", "polcy", "walrus", "walrsu", "numbr", "shiping", "fake"] {
            out.push(format!("{word} {}", vocabulary.df(word)));
            out.push(format!("{:?}", vocabulary.neighbours(word, 2, &lookups)));
            out.push(format!("{:?}", vocabulary.neighbours_above(word, 2, 9, &lookups)));
            out.push(format!("{:?}", vocabulary.completions(&word[..3], 5)));
        }
        out
    }

    fn large_ids(index: &LexicalIndex) -> Vec<SegmentId> {
        index.snapshot().large_tier().expect("a large tier").ids.clone()
    }

    /// A commit saves the large tier's vocabulary; the file decodes to the vocabulary built
    /// from the term dictionaries (the same answers), and an open reads it.
    #[test]
    fn a_commit_saves_the_vocabulary_and_an_open_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let built = answers(&index_of(dir.path(), 40, "walrus"));
        let bytes = std::fs::read(dir.path().join(VOCABULARY_FILE)).expect("saved by the commit");
        let reopened = LexicalIndex::open(dir.path(), SchemaConfig::default()).unwrap();
        let ids = large_ids(&reopened);
        assert!(decode(&bytes, &ids).unwrap().is_some());
        assert_eq!(answers(&reopened), built);
        // Read from the file, not built: the open noted that the file holds its tier.
        let saved = reopened.shared.saved_vocabulary.as_ref().unwrap();
        assert_eq!(saved.on_disk.lock().unwrap().as_deref(), Some(&ids[..]));
    }

    /// A file of the same segments is used as it is (here one with a word the index does not
    /// hold, written for its segment ids: it shows in the open's vocabulary); one whose bytes
    /// are damaged anywhere, or of other segments, is not, and the vocabulary is built again.
    #[test]
    fn a_file_is_used_only_for_its_segments_and_intact() {
        let dir = tempfile::tempdir().unwrap();
        let built = answers(&index_of(dir.path(), 40, "walrus"));
        let ids = large_ids(&LexicalIndex::open(dir.path(), SchemaConfig::default()).unwrap());
        let words = [("fake".as_bytes().to_vec(), 9), ("walrus".as_bytes().to_vec(), 40)];
        let forged = Vocabulary::from_words(words.into_iter().collect()).unwrap();
        let path = dir.path().join(VOCABULARY_FILE);
        std::fs::write(&path, encode(&ids, &forged)).unwrap();
        let opened = LexicalIndex::open(dir.path(), SchemaConfig::default()).unwrap();
        assert_eq!(opened.snapshot().vocabulary().df("fake"), 9, "the file is read for its segments");
        drop(opened);

        let pristine = std::fs::read(&path).unwrap();
        let other = vec![SegmentId::generate_random()];
        std::fs::write(&path, encode(&other, &forged)).unwrap();
        assert_eq!(answers(&LexicalIndex::open(dir.path(), SchemaConfig::default()).unwrap()), built);
        for at in [0, 9, 20, pristine.len() / 2, pristine.len() - 5, pristine.len() - 1] {
            let mut damaged = pristine.clone();
            damaged[at] ^= 0x5a;
            std::fs::write(&path, &damaged).unwrap();
            assert!(decode(&damaged, &ids).map_or(true, |v| v.is_none()), "byte {at}");
            assert_eq!(answers(&LexicalIndex::open(dir.path(), SchemaConfig::default()).unwrap()), built, "byte {at}");
        }
        for len in [0, 7, 12, 40, pristine.len() / 2, pristine.len() - 1] {
            std::fs::write(&path, &pristine[..len]).unwrap();
            assert!(decode(&pristine[..len], &ids).map_or(true, |v| v.is_none()), "{len} bytes");
            assert_eq!(
                answers(&LexicalIndex::open(dir.path(), SchemaConfig::default()).unwrap()),
                built,
                "{len} bytes"
            );
        }
    }

    /// A merge that changes the large segments saves their vocabulary again; an open after it
    /// reads the new file, and a writer that opens on an index without one (an older build's,
    /// or after a crash) saves it, over a temporary file a crash left.
    #[test]
    fn a_new_large_tier_is_saved_again_and_a_writer_saves_a_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        let index = index_of(dir.path(), 40, "walrus");
        let first = large_ids(&index);
        let mut writer = index.writer(crate::DEFAULT_WRITER_HEAP).unwrap();
        for ord in 40..80 {
            writer.upsert(ord, &Record::new(format!("r{ord}")).body("narwhal tusk"), 0).unwrap();
        }
        writer.commit().unwrap();
        writer.merge_segments().unwrap();
        let merged = large_ids(&index);
        assert_ne!(merged, first);
        let bytes = std::fs::read(dir.path().join(VOCABULARY_FILE)).unwrap();
        assert!(decode(&bytes, &merged).unwrap().is_some(), "saved for the merged segment");
        let built = answers(&index);
        drop((writer, index));

        std::fs::remove_file(dir.path().join(VOCABULARY_FILE)).unwrap();
        std::fs::write(dir.path().join(TMP_FILE), b"a save cut short").unwrap();
        let reopened = LexicalIndex::open(dir.path(), SchemaConfig::default()).unwrap();
        assert_eq!(answers(&reopened), built);
        assert!(!dir.path().join(VOCABULARY_FILE).exists(), "an open writes nothing");
        let writer = reopened.writer(crate::DEFAULT_WRITER_HEAP).unwrap();
        assert_eq!(std::fs::read(dir.path().join(VOCABULARY_FILE)).unwrap(), bytes);
        assert!(!dir.path().join(TMP_FILE).exists());
        drop(writer);
    }
}
