//! The directory a partition's tantivy index lives in: tantivy's memory-mapped directory for
//! every file but the document stores, whose blocks are read with positional reads.
//!
//! A search reads a handful of 16 KiB blocks of a segment's `.store` file (the snippets' and
//! feedback's stored text) at random places. Mapped, every block read faults in the pages
//! around it and leaves them counted in the process's resident memory for as long as the
//! segment is open: at 1M records the document stores were the largest part of a serving
//! process's resident file pages (docs/scale.md, "Serving memory"). Read with `pread`, the
//! bytes come through the page cache, which the kernel keeps or drops as it needs, and the
//! process holds only the block it decompresses. Elasticsearch's `hybridfs` store makes the
//! same split. Reads of more than [`POSITIONAL_READ_MAX`] bytes — a merge stacking a store's
//! blocks whole — go through the mapping, as before, so no merge copies a store into memory.
//!
//! Everything else (postings, term dictionaries, columns) stays mapped: those are read where
//! the search needs them, often and in place.

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use tantivy::directory::error::{DeleteError, LockError, OpenDirectoryError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, OwnedBytes, WatchCallback, WatchHandle, WritePtr,
};
use tantivy::HasLen;

/// Reads up to this many bytes at once are positional reads; longer ones use the mapping.
pub(crate) const POSITIONAL_READ_MAX: usize = 1 << 20;

/// A partition's directory: [`MmapDirectory`], with document stores read by `pread` (see the
/// module's doc). Clones share their open store files.
#[derive(Clone)]
pub(crate) struct PartitionDirectory {
    mmap: MmapDirectory,
    root: PathBuf,
    /// The store files open in this process, so that one still read by a searcher after a
    /// writer removed it is found (as [`MmapDirectory`] finds its mappings).
    stores: Arc<Mutex<HashMap<PathBuf, Weak<StoreFile>>>>,
}

impl fmt::Debug for PartitionDirectory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PartitionDirectory({:?})", self.root)
    }
}

impl PartitionDirectory {
    /// Opens the existing directory `root`.
    ///
    /// # Errors
    /// What [`MmapDirectory::open`] returns: `root` missing or not a directory.
    pub(crate) fn open(root: &Path) -> Result<Self, OpenDirectoryError> {
        Ok(Self { mmap: MmapDirectory::open(root)?, root: root.to_path_buf(), stores: Arc::default() })
    }

    /// The store file `path`, open in this process or opened now.
    #[cfg(unix)]
    fn store(&self, path: &Path) -> Result<Arc<StoreFile>, OpenReadError> {
        let mut stores = self.stores.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(open) = stores.get(path).and_then(Weak::upgrade) {
            return Ok(open);
        }
        let full = self.root.join(path);
        let file = File::open(&full).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => OpenReadError::FileDoesNotExist(path.to_path_buf()),
            _ => OpenReadError::wrap_io_error(e, path.to_path_buf()),
        })?;
        let len = file.metadata().map_err(|e| OpenReadError::wrap_io_error(e, path.to_path_buf()))?.len() as usize;
        let store = Arc::new(StoreFile {
            file,
            len,
            path: path.to_path_buf(),
            mmap: self.mmap.clone(),
            mapped: Mutex::new(None),
        });
        stores.retain(|_, open| open.strong_count() > 0);
        stores.insert(path.to_path_buf(), Arc::downgrade(&store));
        Ok(store)
    }
}

/// Whether `path` is a segment's document store.
fn is_store(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "store")
}

impl Directory for PartitionDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        #[cfg(unix)]
        if is_store(path) {
            return Ok(self.store(path)?);
        }
        self.mmap.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        self.mmap.delete(path)
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.mmap.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        self.mmap.open_write(path)
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.mmap.atomic_read(path)
    }

    fn atomic_write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        self.mmap.atomic_write(path, data)
    }

    fn sync_directory(&self) -> io::Result<()> {
        self.mmap.sync_directory()
    }

    fn acquire_lock(&self, lock: &Lock) -> Result<DirectoryLock, LockError> {
        self.mmap.acquire_lock(lock)
    }

    fn watch(&self, watch_callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.mmap.watch(watch_callback)
    }
}

/// A document store read with positional reads, or through its mapping for long reads.
struct StoreFile {
    file: File,
    len: usize,
    path: PathBuf,
    mmap: MmapDirectory,
    /// The file's mapping, made at its first long read.
    mapped: Mutex<Option<Arc<dyn FileHandle>>>,
}

impl fmt::Debug for StoreFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StoreFile({:?}, {} bytes)", self.path, self.len)
    }
}

impl HasLen for StoreFile {
    fn len(&self) -> usize {
        self.len
    }
}

impl StoreFile {
    /// The file's mapping, made now if it was not; `None` when it cannot be mapped (a file a
    /// writer removed since it was opened), and the read is then positional.
    fn mapped(&self) -> Option<Arc<dyn FileHandle>> {
        let mut mapped = self.mapped.lock().unwrap_or_else(PoisonError::into_inner);
        if mapped.is_none() {
            *mapped = self.mmap.get_file_handle(&self.path).ok().filter(|m| m.len() == self.len);
        }
        mapped.clone()
    }
}

impl FileHandle for StoreFile {
    fn read_bytes(&self, range: Range<usize>) -> io::Result<OwnedBytes> {
        if range.start > range.end || range.end > self.len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{:?}: bytes {range:?} of a file of {}", self.path, self.len),
            ));
        }
        if range.is_empty() {
            return Ok(OwnedBytes::empty());
        }
        if range.len() > POSITIONAL_READ_MAX {
            if let Some(mapped) = self.mapped() {
                return mapped.read_bytes(range);
            }
        }
        let mut buf = vec![0u8; range.len()];
        #[cfg(unix)]
        std::os::unix::fs::FileExt::read_exact_at(&self.file, &mut buf, range.start as u64)?;
        Ok(OwnedBytes::new(buf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store file reads the same bytes positionally, through its mapping past
    /// [`POSITIONAL_READ_MAX`], and after a writer removed it; other files are mapped.
    #[test]
    fn a_store_reads_its_bytes_by_either_path_and_after_removal() {
        let dir = tempfile::tempdir().unwrap();
        let bytes: Vec<u8> = (0..POSITIONAL_READ_MAX * 2 + 77).map(|i| (i * 31 % 251) as u8).collect();
        std::fs::write(dir.path().join("s.store"), &bytes).unwrap();
        std::fs::write(dir.path().join("s.idx"), &bytes[..100]).unwrap();
        let directory = PartitionDirectory::open(dir.path()).unwrap();

        let store = directory.get_file_handle(Path::new("s.store")).unwrap();
        assert_eq!(store.len(), bytes.len());
        for range in [0..0, 5..16_389, 1..POSITIONAL_READ_MAX + 9, 0..bytes.len()] {
            assert_eq!(store.read_bytes(range.clone()).unwrap().as_slice(), &bytes[range]);
        }
        assert!(store.read_bytes(0..bytes.len() + 1).is_err());
        assert!(format!("{store:?}").starts_with("StoreFile"));

        std::fs::remove_file(dir.path().join("s.store")).unwrap();
        let again = directory.open_read(Path::new("s.store")).unwrap();
        assert_eq!(again.read_bytes().unwrap().as_slice(), bytes.as_slice());
        drop((store, again));
        assert!(matches!(directory.get_file_handle(Path::new("s.store")), Err(OpenReadError::FileDoesNotExist(_))));
        assert_eq!(directory.open_read(Path::new("s.idx")).unwrap().read_bytes().unwrap().as_slice(), &bytes[..100]);
    }
}
