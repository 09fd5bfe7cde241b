//! Transparent huge pages for the large arenas, made on a background thread once a store is
//! open.
//!
//! A scan or graph walk over rows scattered across hundreds of megabytes misses the TLB on
//! nearly every row with 4 KiB pages. Most distributions leave huge pages to the programs that
//! ask (`/sys/kernel/mm/transparent_hugepage/enabled` = `madvise`), and asking with
//! `MADV_HUGEPAGE` alone does not help memory that is already written: an opened store's
//! arenas were filled as they were read. `MADV_COLLAPSE` (Linux 6.1) makes huge pages of what
//! is there, synchronously — about 0.1–0.2 s of copying for the 1M int8 index's arenas, too
//! much for the open itself (its goal is a second from a cold page cache). So
//! [`collapse_in_background`] takes the arenas' address ranges and collapses them on a thread
//! of its own, at the lowest priority: the open returns at once, and searches never wait for
//! it (no lock is held: it reads no memory, it only asks the kernel to remap it).
//!
//! **Safety without a lock.** The thread holds addresses, not references: a range may be
//! freed or reused by the time the kernel sees it (a store changed or dropped meanwhile). Both
//! advices change no byte of content and no mapping, only the size of the pages behind a
//! range; on a range no longer mapped the kernel returns an error, which is ignored. So
//! nothing the thread does can change what any search reads.
//!
//! `BRAID_NO_HUGE_PAGES=1` turns it off (for paired measurements). Elsewhere than Linux it does
//! nothing.

/// Arenas smaller than this are left alone (a few huge pages buy nothing measurable).
const MIN_BYTES: usize = 8 << 20;
/// The size of a transparent huge page on x86-64 and most arm64 kernels.
const HUGE_PAGE: usize = 2 << 20;

/// The whole huge pages inside one arena: an address range, aligned to [`HUGE_PAGE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Region {
    start: usize,
    len: usize,
}

impl Region {
    /// The huge pages wholly inside `v`, when `v` is at least [`MIN_BYTES`].
    pub(crate) fn of<T>(v: &[T]) -> Option<Region> {
        let bytes = std::mem::size_of_val(v);
        if bytes < MIN_BYTES {
            return None;
        }
        let start = v.as_ptr() as usize;
        let first = start.next_multiple_of(HUGE_PAGE);
        let end = (start + bytes) / HUGE_PAGE * HUGE_PAGE;
        (end > first).then_some(Region { start: first, len: end - first })
    }

    /// Bytes covered.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

/// Whether huge pages are turned off for this process (`BRAID_NO_HUGE_PAGES` set, not `0`).
fn turned_off() -> bool {
    std::env::var_os("BRAID_NO_HUGE_PAGES").is_some_and(|v| v != "0")
}

/// Collapses `regions` into huge pages on a thread of its own, at the lowest priority; returns
/// at once. Nothing happens when there are none, when turned off, or off Linux.
pub(crate) fn collapse_in_background(regions: Vec<Region>) {
    if regions.is_empty() || turned_off() || !cfg!(target_os = "linux") {
        return;
    }
    let spawned = std::thread::Builder::new().name("braid-huge-pages".into()).spawn(move || {
        lower_priority();
        let started = std::time::Instant::now();
        let asked: usize = regions.iter().map(Region::len).sum();
        let collapsed = collapse(&regions);
        tracing::debug!(target: "braid::vector", asked, collapsed,
            ms = started.elapsed().as_millis() as u64, "vector arenas collapsed into huge pages");
    });
    if let Err(e) = spawned {
        tracing::debug!(target: "braid::vector", error = %e, "no thread for huge pages");
    }
}

/// Collapses each region now, on this thread; returns the bytes the kernel collapsed.
pub(crate) fn collapse(regions: &[Region]) -> usize {
    regions.iter().filter(|r| collapse_one(**r)).map(Region::len).sum()
}

#[cfg(target_os = "linux")]
fn collapse_one(region: Region) -> bool {
    let at = region.start as *mut libc::c_void;
    // SAFETY: both advices change no content and no mapping, only the size of the pages
    // behind the range (module docs); on a range no longer mapped they fail, harmlessly.
    unsafe {
        libc::madvise(at, region.len, libc::MADV_HUGEPAGE);
        let status = libc::madvise(at, region.len, libc::MADV_COLLAPSE);
        if status != 0 {
            tracing::debug!(target: "braid::vector", error = %std::io::Error::last_os_error(), "no huge pages");
        }
        status == 0
    }
}

#[cfg(not(target_os = "linux"))]
fn collapse_one(_region: Region) -> bool {
    false
}

/// Makes the calling thread the last to run (nice 19), so the collapse takes only idle time.
#[cfg(target_os = "linux")]
fn lower_priority() {
    // SAFETY: `gettid` has no preconditions; `setpriority` on this thread's id changes its
    // scheduling priority only (Linux applies PRIO_PROCESS to a single thread).
    unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 19);
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_are_whole_huge_pages_inside_the_arena() {
        assert_eq!(Region::of(&vec![0u8; MIN_BYTES - 1]), None);
        let v = vec![1u32; 5 << 20];
        let region = Region::of(&v).unwrap();
        let (start, end) = (v.as_ptr() as usize, v.as_ptr() as usize + 4 * v.len());
        assert!(region.start >= start && region.start + region.len <= end);
        assert_eq!(region.start % HUGE_PAGE, 0);
        assert_eq!(region.len % HUGE_PAGE, 0);
        assert!(region.len >= 4 * v.len() - 2 * HUGE_PAGE);
        // Collapsing changes no byte (whether or not this kernel makes huge pages).
        collapse(&[region]);
        assert!(v.iter().all(|&x| x == 1));
    }
}
