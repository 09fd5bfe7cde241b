//! What tenant partitions change for a search: one store holding every tenant's vectors (the
//! layout before partitions) against a [`PartitionedStore`] of the same vectors, searched for
//! the same principals, in one run.
//!
//! ```text
//! cargo run --release -p braid-vector --example tenant_partitions -- [records] [tenants] [dim] [queries] [commits]
//! ```
//!
//! Defaults: 1,000,000 int8 records of 384 dimensions in 10 tenants (record i belongs to tenant
//! i mod 10, so each holds 100,000 and has a partition of its own), 200 queries, k = 10, no graph
//! (every allowed set below the exact threshold of 150,000 is scanned; the graph path is not
//! timed here). Principals: one tenant (10 %), one tenant's group (1 %: its records with
//! i mod 100 below 10), and two tenants (20 %). The hits of the two layouts are compared
//! query by query (they must be the same, bit for bit); times are per search, median and p99.
//!
//! Then both layouts are saved to a temporary directory and take `commits` (default 200)
//! commits of 10 records each — 10 new vectors of one tenant (a different one each commit) and
//! 10 of that tenant's older vectors deleted — each a save: its time, and the bytes the
//! process wrote (`/proc/self/io` `wchar`), merges of a log into its base included (a
//! partition's merge rewrites that partition only).

use std::time::Instant;

use braid_core::{AccessPolicy, AllowedSet, OrdSet, Principal, Visibility};
use braid_vector::{HnswParams, PartitionedStore, Quantization, VectorStore};

mod common;

use common::{commit_ords, percentile, Rng};

/// A principal of the run: its name, its tokens, and which records it may see.
type Who<'a> = (&'a str, Vec<&'a str>, Box<dyn Fn(u64) -> bool + 'a>);

fn main() -> braid_core::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (records, tenants, dim, queries) = (arg(0, 1_000_000), arg(1, 10), arg(2, 384) as usize, arg(3, 200));
    let commits = arg(4, 200);
    // No graph in either layout: every search below is an exact scan.
    let params = HnswParams { quantization: Quantization::Int8, exact_threshold: usize::MAX, ..HnswParams::default() };
    let tenant = |ord: u64| format!("tenant:t{}", ord % tenants);

    let mut rng = Rng(7);
    let started = Instant::now();
    let mut one = VectorStore::new(dim, params.clone());
    let mut partitioned = PartitionedStore::new(dim, params);
    for chunk in (0..records).collect::<Vec<_>>().chunks(10_000) {
        let items: Vec<(u64, Vec<Vec<f32>>)> = chunk.iter().map(|&o| (o, vec![rng.vector(dim)])).collect();
        one.insert_passages(&items)?;
        let placed = partitioned.check_passages(&items, |o| vec![tenant(o)])?;
        partitioned.insert_checked(&placed)?;
    }
    println!(
        "{records} records, {tenants} tenants, {dim}-d int8: built in {:.1} s; one store {} MB, partitioned {} MB, {} partitions",
        started.elapsed().as_secs_f64(),
        one.memory_bytes() >> 20,
        partitioned.memory_bytes() >> 20,
        partitioned.partitions().count()
    );

    let principals: [Who<'_>; 3] = [
        ("one tenant", vec!["tenant:t0"], Box::new(move |o| o % tenants == 0)),
        ("one group", vec!["tenant:t0"], Box::new(move |o| o % tenants == 0 && o % 100 < 10)),
        ("two tenants", vec!["tenant:t0", "tenant:t1"], Box::new(move |o| o % tenants < 2)),
    ];
    println!(
        "{:<12} {:>9} {:>12} {:>12} {:>14} {:>14}",
        "principal", "allowed", "one p50 ms", "one p99 ms", "parts p50 ms", "parts p99 ms"
    );
    let query_vectors: Vec<Vec<f32>> = (0..queries).map(|_| rng.vector(dim)).collect();
    for (name, tokens, admits) in principals {
        let ords: OrdSet = (0..records).filter(|&o| admits(o)).collect();
        let visibility = Visibility::new(Principal::from_verified_tokens(tokens), AccessPolicy::Public, None);
        let allowed = AllowedSet::new(visibility, ords);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for q in &query_vectors {
            let t = Instant::now();
            let x = one.search(q, 10, &allowed)?;
            a.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            let y = partitioned.search(q, 10, &allowed)?;
            b.push(t.elapsed().as_secs_f64() * 1e3);
            assert_eq!(x.hits, y.hits, "the layouts disagree");
        }
        a.sort_by(f64::total_cmp);
        b.sort_by(f64::total_cmp);
        println!(
            "{name:<12} {:>9} {:>12.2} {:>12.2} {:>14.2} {:>14.2}",
            allowed.len(),
            percentile(&a, 0.5),
            percentile(&a, 0.99),
            percentile(&b, 0.5),
            percentile(&b, 0.99)
        );
    }

    let tmp = std::env::temp_dir().join(format!("braid-tenant-partitions-{}", std::process::id()));
    let (one_dir, parts_dir) = (tmp.join("one"), tmp.join("partitioned"));
    let t = Instant::now();
    one.save(&one_dir)?;
    let one_saved = t.elapsed().as_secs_f64();
    let t = Instant::now();
    partitioned.save(&parts_dir)?;
    println!("first save: one store {one_saved:.1} s, partitioned {:.1} s", t.elapsed().as_secs_f64());
    let mut next = records;
    let (mut one_ms, mut parts_ms, mut one_bytes, mut parts_bytes) = (Vec::new(), Vec::new(), 0u64, 0u64);
    for c in 0..commits {
        let (fresh, old) = commit_ords(c, tenants, &mut next);
        let items: Vec<(u64, Vec<Vec<f32>>)> = fresh.iter().map(|&o| (o, vec![rng.vector(dim)])).collect();
        let before = written();
        let t = Instant::now();
        one.insert_passages(&items)?;
        for &o in &old {
            one.delete(o);
        }
        one.save(&one_dir)?;
        one_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let middle = written();
        let t = Instant::now();
        let placed = partitioned.check_passages(&items, |o| vec![tenant(o)])?;
        partitioned.insert_checked(&placed)?;
        for &o in &old {
            partitioned.delete(o);
        }
        partitioned.save(&parts_dir)?;
        parts_ms.push(t.elapsed().as_secs_f64() * 1e3);
        one_bytes += middle - before;
        parts_bytes += written() - middle;
    }
    std::fs::remove_dir_all(&tmp).ok();
    one_ms.sort_by(f64::total_cmp);
    parts_ms.sort_by(f64::total_cmp);
    println!("{commits} commits of 10 records (time per commit, bytes written per commit, merges included):");
    for (name, ms, bytes) in [("one store", &one_ms, one_bytes), ("partitioned", &parts_ms, parts_bytes)] {
        println!(
            "  {name:<12} p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; {:.0} KB a commit",
            percentile(ms, 0.5),
            percentile(ms, 0.99),
            ms.last().copied().unwrap_or(0.0),
            bytes as f64 / commits.max(1) as f64 / 1024.0
        );
    }
    Ok(())
}

/// Bytes this process passed to `write` so far (0 where /proc is not there).
fn written() -> u64 {
    let io = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    io.lines().find_map(|l| l.strip_prefix("wchar: ")).and_then(|v| v.trim().parse().ok()).unwrap_or(0)
}
