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
//! of its own, at the lowest priority: the open returns at once, and no search waits for it on
//! a lock of Braid's (it reads no memory, it only asks the kernel to remap it).
//!
//! **Safety without a lock.** The thread holds addresses, not references: a range may be
//! freed or reused by the time the kernel sees it (a store changed or dropped meanwhile). Both
//! advices change no byte of content and no mapping, only the size of the pages behind a
//! range; on a range no longer mapped the kernel returns an error, which is ignored. So
//! nothing the thread does can change what any search reads.
//!
//! **One huge page at a time, until the store goes.** Unmapping memory waits for a collapse
//! in progress in the same process, and the kernel collapses a whole range in one call: a
//! `braid search` on the 1M index that had its answer after 0.6 s took up to 0.5 s more to
//! drop its index and exit on a slow 2-core CPU, its unmaps queued behind the collapse of
//! every arena by a thread that, at nice 19, seldom ran. So each call covers one huge page,
//! and the store's [`Collapsing`] stops the thread when the store is dropped: freeing the
//! arenas waits for one page's copy at most.
//!
//! `BRAID_NO_HUGE_PAGES=1` turns it off (for paired measurements). Elsewhere than Linux it does
//! nothing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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

/// A background collapse's stop: dropped, it tells the thread to end before its next huge
/// page. The store whose arenas are being collapsed holds it, so that dropping the store stops
/// the collapse before the arenas are freed.
#[derive(Debug, Default)]
pub(crate) struct Collapsing {
    stop: Arc<AtomicBool>,
}

impl Drop for Collapsing {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

/// Collapses `regions` into huge pages on a thread of its own, at the lowest priority, until
/// the returned [`Collapsing`] is dropped; returns at once. Nothing happens when there are
/// none, when turned off, or off Linux.
pub(crate) fn collapse_in_background(regions: Vec<Region>) -> Collapsing {
    let collapsing = Collapsing::default();
    if regions.is_empty() || turned_off() || !cfg!(target_os = "linux") {
        return collapsing;
    }
    let stop = Arc::clone(&collapsing.stop);
    let spawned = std::thread::Builder::new().name("braid-huge-pages".into()).spawn(move || {
        lower_priority();
        let started = std::time::Instant::now();
        let asked: usize = regions.iter().map(Region::len).sum();
        let collapsed = collapse(&regions, &stop);
        tracing::debug!(target: "braid::vector", asked, collapsed,
            ms = started.elapsed().as_millis() as u64, "vector arenas collapsed into huge pages");
    });
    if let Err(e) = spawned {
        tracing::debug!(target: "braid::vector", error = %e, "no thread for huge pages");
    }
    collapsing
}

/// Collapses each region now, on this thread, one huge page a call (module docs), until `stop`
/// is set; returns the bytes the kernel collapsed.
pub(crate) fn collapse(regions: &[Region], stop: &AtomicBool) -> usize {
    regions.iter().map(|&region| collapse_one(region, stop)).sum()
}

/// Collapses `region` one huge page at a time; returns the bytes collapsed. A page the kernel
/// could not collapse for now (`EAGAIN`) is skipped; the rest of the region is given up where
/// it says it never will (`EINVAL`: no huge pages here) or the range is gone or out of memory
/// (`ENOMEM`: the arena freed meanwhile).
#[cfg(target_os = "linux")]
fn collapse_one(region: Region, stop: &AtomicBool) -> usize {
    // SAFETY: both advices change no content and no mapping, only the size of the pages
    // behind the range (module docs); on a range no longer mapped they fail, harmlessly.
    unsafe { libc::madvise(region.start as *mut libc::c_void, region.len, libc::MADV_HUGEPAGE) };
    let mut collapsed = 0;
    for start in (region.start..region.start + region.len).step_by(HUGE_PAGE) {
        if stop.load(Ordering::Acquire) {
            break;
        }
        // SAFETY: as above; the range is one whole huge page inside the region.
        if unsafe { libc::madvise(start as *mut libc::c_void, HUGE_PAGE, libc::MADV_COLLAPSE) } == 0 {
            collapsed += HUGE_PAGE;
            continue;
        }
        let error = std::io::Error::last_os_error();
        if matches!(error.raw_os_error(), Some(libc::EINVAL | libc::ENOMEM)) {
            tracing::debug!(target: "braid::vector", %error, "no huge pages");
            break;
        }
    }
    collapsed
}

#[cfg(not(target_os = "linux"))]
fn collapse_one(_region: Region, _stop: &AtomicBool) -> usize {
    0
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
        collapse(&[region], &AtomicBool::new(false));
        assert!(v.iter().all(|&x| x == 1));
    }

    /// Whether this kernel makes huge pages for memory that asks (`madvise` or `always`).
    fn kernel_makes_huge_pages() -> bool {
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .is_ok_and(|mode| mode.contains("[madvise]") || mode.contains("[always]"))
    }

    #[test]
    fn a_stopped_collapse_makes_no_huge_page_and_dropping_the_handle_stops_it() {
        let v = vec![1u8; 16 << 20];
        let region = Region::of(&v).unwrap();
        assert_eq!(collapse(&[region], &AtomicBool::new(true)), 0);
        if kernel_makes_huge_pages() {
            // Not stopped, the same region is collapsed, page by page.
            assert!(collapse(&[region], &AtomicBool::new(false)) > 0);
        }
        let collapsing = Collapsing::default();
        let stop = Arc::clone(&collapsing.stop);
        assert!(!stop.load(Ordering::Acquire));
        drop(collapsing);
        assert!(stop.load(Ordering::Acquire));
    }
}
