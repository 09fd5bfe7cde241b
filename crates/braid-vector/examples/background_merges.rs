//! What moving merges off the commit path changes: commits of 10 records to a large
//! [`PartitionedStore`], each partition's log merged into a new base once it passes its share,
//! first inline (inside the save, as `VectorStore::save` does: what a commit did before
//! background merges) and then in the background ([`PartitionedStore::save_log`], the jobs run
//! by a [`Merger`] thread, as an index's commit does), over the same commits, in one run.
//!
//! ```text
//! cargo run --release -p braid-vector --example background_merges -- [records] [tenants] [dim] [commits] [share_percent]
//! ```
//!
//! Defaults: 1,000,000 int8 records of 384 dimensions in 10 tenants (record i belongs to tenant
//! i mod 10: ten partitions of 100,000, each a base of about 40 MB), 2,000 commits, logs merged
//! past 2 % of their base (the default share, 50 %, would merge a partition only every ~5,000
//! of its commits: this run would see no merge at all). Each commit puts 10 new vectors into
//! one tenant (a different one each commit) and deletes 10 of its older ones, then saves. The
//! store is built once, saved, and copied, so both modes start from the same files.
//!
//! Reported per mode: the commit's time (insert, delete and save: p50, p99, max), the bytes
//! the committing thread wrote (`/proc/thread-self/io` `wchar`: the commit's own share), and
//! the bytes the whole process wrote (`/proc/self/io`: merges included, whichever thread ran
//! them), per commit; the background mode then waits for its last merges, counted in.

use std::path::Path;
use std::time::Instant;

use braid_core::OrdSet;
use braid_vector::{HnswParams, MergePolicy, Merger, PartitionedStore, Quantization};

mod common;

use common::{commit_ords, percentile, Rng};

/// Bytes passed to `write` so far by this thread (`thread-self`) or the whole process.
fn written(whose: &str) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{whose}/io")).unwrap_or_default();
    io.lines().find_map(|l| l.strip_prefix("wchar: ")).and_then(|v| v.trim().parse().ok()).unwrap_or(0)
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()))?;
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

fn main() -> braid_core::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (records, tenants, dim) = (arg(0, 1_000_000), arg(1, 10), arg(2, 384) as usize);
    let (commits, share) = (arg(3, 2_000), arg(4, 2));
    let policy = MergePolicy { share_percent: share, ..MergePolicy::default() };
    // No graph: the partitions of this run stay below the exact threshold.
    let params = HnswParams { quantization: Quantization::Int8, exact_threshold: usize::MAX, ..HnswParams::default() };
    let tenant = |ord: u64| format!("tenant:t{}", ord % tenants);

    let mut rng = Rng(7);
    let started = Instant::now();
    let mut store = PartitionedStore::new(dim, params);
    for chunk in (0..records).collect::<Vec<_>>().chunks(10_000) {
        let items: Vec<(u64, Vec<Vec<f32>>)> = chunk.iter().map(|&o| (o, vec![rng.vector(dim)])).collect();
        let placed = store.check_passages(&items, |o| vec![tenant(o)])?;
        store.insert_checked(&placed)?;
    }
    let tmp = std::env::temp_dir().join(format!("braid-background-merges-{}", std::process::id()));
    let (inline_dir, background_dir) = (tmp.join("inline"), tmp.join("background"));
    store.save(&inline_dir)?;
    copy_dir(&inline_dir, &background_dir).map_err(|e| braid_core::Error::io(&background_dir, e))?;
    println!(
        "{records} records, {tenants} tenants, {dim}-d int8: built and saved in {:.1} s, {} partitions; \
         {commits} commits of 10 records, logs merged past {share} % of their base",
        started.elapsed().as_secs_f64(),
        store.partitions().count()
    );
    store.set_merge_policy(policy);
    let postings = |store: &PartitionedStore| -> Vec<(String, OrdSet)> {
        let mut by: std::collections::BTreeMap<String, OrdSet> = Default::default();
        for o in store.ords() {
            by.entry(tenant(o)).or_default().insert(o);
        }
        by.into_iter().collect()
    };

    println!(
        "{:<11} {:>8} {:>8} {:>8} {:>8} {:>14} {:>14}",
        "merges", "p50 ms", "p99 ms", "max ms", "merged", "commit KB", "all KB"
    );
    let run = Run { records, tenants, dim, commits };
    run.commits(store, &inline_dir, false)?;
    let mut opened = PartitionedStore::open(&background_dir, None, &Default::default())?;
    opened.settle(&postings(&opened))?;
    opened.set_merge_policy(policy);
    run.commits(opened, &background_dir, true)?;
    std::fs::remove_dir_all(&tmp).ok();
    Ok(())
}

/// The shape of the run.
struct Run {
    records: u64,
    tenants: u64,
    dim: usize,
    commits: u64,
}

impl Run {
    /// Commits to `store`, saved in `dir`, merging in the background or inline, and prints
    /// the mode's row.
    fn commits(&self, mut store: PartitionedStore, dir: &Path, background: bool) -> braid_core::Result<()> {
        let Run { records, tenants, dim, commits } = *self;
        let tenant = |ord: u64| format!("tenant:t{}", ord % tenants);
        let merger = Merger::start()?;
        let mut rng = Rng(11);
        let mut next = records;
        let (mut ms, mut own, mut inline_merges) = (Vec::new(), 0u64, 0u64);
        let all_before = written("self");
        for c in 0..commits {
            let (fresh, old) = commit_ords(c, tenants, &mut next);
            let items: Vec<(u64, Vec<Vec<f32>>)> = fresh.iter().map(|&o| (o, vec![rng.vector(dim)])).collect();
            let before = written("thread-self");
            let t = Instant::now();
            let placed = store.check_passages(&items, |o| vec![tenant(o)])?;
            store.insert_checked(&placed)?;
            for &o in &old {
                store.delete(o);
            }
            if background {
                merger.submit(store.save_log(dir)?);
            } else {
                store.save(dir)?;
            }
            ms.push(t.elapsed().as_secs_f64() * 1e3);
            let wrote = written("thread-self") - before;
            own += wrote;
            // An inline merge writes a whole partition (megabytes); an append, kilobytes.
            inline_merges += u64::from(wrote > 1 << 20);
        }
        merger.wait_idle();
        let all = written("self") - all_before;
        let merged = if background { merger.merged() } else { inline_merges };
        ms.sort_by(f64::total_cmp);
        println!(
            "{:<11} {:>8.2} {:>8.2} {:>8.2} {:>8} {:>14.1} {:>14.1}",
            if background { "background" } else { "inline" },
            percentile(&ms, 0.5),
            percentile(&ms, 0.99),
            ms.last().copied().unwrap_or(0.0),
            merged,
            own as f64 / commits.max(1) as f64 / 1024.0,
            all as f64 / commits.max(1) as f64 / 1024.0,
        );
        Ok(())
    }
}
