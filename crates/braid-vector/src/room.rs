//! Room made for a commit's rows before it takes the store's write lock.
//!
//! An arena grows by doubling when a push finds it full, and growing copies it (and faults in
//! the fresh pages): 20–30 ms of CPU for a tenant partition of 50,000 int8 vectors on a 2-core
//! machine, and every partition an open read from disk is full, so the first commit after an
//! open grew them all (the lock held 61–113 ms). Under the write lock, each of those
//! milliseconds is one every search waits (research/scale-log.md). So a commit asks first,
//! under a read lock beside the searches, which arenas its rows would grow, and copies those
//! into arenas with room ([`Room`]); under the write lock it swaps them in (a move) and appends
//! as before, and drops the old arenas after it released the lock.
//!
//! Only arenas up to [`COPIED_UP_TO`] are copied so. A larger block is one the allocator maps on
//! its own, and grows by remapping its pages rather than copying them (glibc's `realloc` calls
//! `mremap` past its 32 MiB mapping threshold): growing the shared partition of 500,000 int8
//! vectors took under a millisecond under the lock, where a copy would read and write 490 MB and
//! hold both copies for a while.
//!
//! **Sound without a second lock.** Only the holder of the write lock changes an arena, and a
//! copy is installed only while its arena is the one it was copied from: the same arena
//! (each arena made, read from disk or compacted gets a new number, [`next_arena`]) with the
//! same number of slots. An arena is only ever appended to (a compaction makes a new one), so
//! those two agree only when the copy holds every row the arena holds. Otherwise the copy is
//! dropped and the push grows the arena as before.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::rows::Rows;

/// Bytes of an arena up to which a commit copies it with room rather than letting it grow in
/// place (module docs).
pub(crate) const COPIED_UP_TO: usize = 64 << 20;

/// A number no arena had before (see the module docs).
pub(crate) fn next_arena() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Whether `v` lacks room for `more` more items (a push would grow it).
pub(crate) fn lacks_room<T>(v: &Vec<T>, more: usize) -> bool {
    v.capacity() - v.len() < more
}

/// `v`'s items in a vector with room for `more` more, and for as many as it holds (doubling,
/// as a push would, so the next growth is as far off).
pub(crate) fn copy_with_room<T: Copy>(v: &[T], more: usize) -> Vec<T> {
    let mut grown = Vec::with_capacity(v.len() + more.max(v.len()));
    grown.extend_from_slice(v);
    grown
}

/// A copy of one store's arena with room for a commit's rows, made by
/// [`crate::VectorStore::room_for`] under a read lock, installed by
/// [`crate::VectorStore::make_room`] under the write lock.
#[derive(Debug)]
pub struct Room {
    pub(crate) rows: Rows,
    /// The arena it was copied from, and its slots then.
    pub(crate) from: (u64, usize),
}

/// An arena a [`Room`] replaced: drop it after releasing the write lock (freeing hundreds of
/// megabytes is not free either).
#[derive(Debug)]
pub struct Spare(#[allow(dead_code)] pub(crate) Rows);
