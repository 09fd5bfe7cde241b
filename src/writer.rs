//! The single writer: upserts and deletes, made durable and visible by `commit()`.

use std::hash::{Hash, Hasher};

use braid_core::{Record, Result};
use braid_lexical::{LexicalWriter, DEFAULT_WRITER_HEAP};

use crate::index::Index;
use crate::manifest::{Manifest, FORMAT_VERSION};

/// Writes to an [`Index`]. There is one at a time per index; a second gets
/// [`braid_core::Error::LockBusy`].
///
/// Changes are invisible to searches until [`Writer::commit`]. Dropping a writer without
/// committing discards its changes.
pub struct Writer {
    index: Index,
    lexical: LexicalWriter,
    pending: usize,
}

impl Writer {
    pub(crate) fn new(index: Index) -> Result<Writer> {
        let lexical = index.inner.lexical.writer(DEFAULT_WRITER_HEAP)?;
        Ok(Writer { index, lexical, pending: 0 })
    }

    /// Adds `record`, replacing any record with the same id.
    ///
    /// # Errors
    /// [`braid_core::Error::InvalidRecord`] or [`braid_core::Error::UnknownField`]; the
    /// record is then not written.
    pub fn upsert(&mut self, record: &Record) -> Result<()> {
        let mut next = self.index.inner.next_ord.lock().unwrap_or_else(|p| p.into_inner());
        let ord = *next;
        self.lexical.upsert(ord, record, content_hash(record))?;
        *next += 1;
        self.pending += 1;
        Ok(())
    }

    /// Deletes the record with this id (a no-op when there is none).
    ///
    /// # Errors
    /// Never fails today; the `Result` leaves room for stores that can.
    pub fn delete(&mut self, id: &str) -> Result<()> {
        self.lexical.delete(id);
        self.pending += 1;
        Ok(())
    }

    /// The number of upserts and deletes since the last commit.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Makes every change durable and visible to new searches, atomically: a crash before
    /// this returns loses only the uncommitted changes.
    ///
    /// # Errors
    /// [`braid_core::Error::Lexical`] or [`braid_core::Error::Io`] when the commit cannot be
    /// written; the previous commit stays intact.
    pub fn commit(&mut self) -> Result<()> {
        let inner = &self.index.inner;
        self.lexical.commit()?;
        if let Some(dir) = &inner.dir {
            let next_ord = *inner.next_ord.lock().unwrap_or_else(|p| p.into_inner());
            Manifest { format: FORMAT_VERSION, config: inner.config.clone(), next_ord }.write(dir)?;
        }
        inner.lexical.reload()?;
        self.pending = 0;
        Ok(())
    }
}

/// A stable 64-bit hash of everything in a record that search reads (FNV-1a over the
/// serialised record), used to skip re-embedding unchanged records.
pub fn content_hash(record: &Record) -> u64 {
    struct Fnv(u64);
    impl Hasher for Fnv {
        fn finish(&self) -> u64 {
            self.0
        }
        fn write(&mut self, bytes: &[u8]) {
            for b in bytes {
                self.0 ^= u64::from(*b);
                self.0 = self.0.wrapping_mul(0x100_0000_01b3);
            }
        }
    }
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    serde_json::to_string(record).unwrap_or_default().hash(&mut h);
    h.finish()
}
