//! Group commit: batches from many threads share commits, each acknowledged once the commit
//! holding it is served, each all or nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use braid::{
    Batch, Error, GroupCommit, GroupCommitOptions, Index, IndexConfig, Mode, Principal, Record, SearchRequest,
};

fn record(id: &str, word: &str) -> Record {
    Record::new(id).title("Note").body(format!("{word} sighted near the river")).acl(["group:staff"])
}

fn hits(index: &Index, word: &str) -> usize {
    let staff = Principal::from_verified_tokens(["group:staff"]);
    index.search(&SearchRequest::new(word, staff).mode(Mode::Lexical).k(50)).unwrap().hits.len()
}

/// A word of its own for batch `b` of thread `t` (letters only, so it is one term).
fn word(t: usize, b: usize) -> String {
    let letter = |n: usize| char::from(b'a' + (n % 26) as u8);
    format!("zq{}{}{}x", letter(t), letter(b), letter(b / 26))
}

/// Holds the front's writer (through `run`), lets the writers go, and waits until `n` batches
/// are queued behind it, so that the next leader takes them all as one group.
fn hold_until_queued(front: &GroupCommit, go: &Barrier, n: usize) {
    front
        .run(|_| {
            go.wait();
            let started = Instant::now();
            while front.waiting() < n {
                assert!(started.elapsed() < Duration::from_secs(60), "{n} batches never queued");
                std::thread::sleep(Duration::from_millis(2));
            }
            Ok::<_, Error>(())
        })
        .unwrap();
}

#[test]
fn concurrent_batches_all_land_and_each_is_searchable_when_its_call_returns() {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create(dir.path(), IndexConfig::default()).unwrap();
    let front = GroupCommit::new(index.clone());
    let (threads, batches) = (6, 8);
    std::thread::scope(|scope| {
        for t in 0..threads {
            let (front, index) = (&front, &index);
            scope.spawn(move || {
                for b in 0..batches {
                    let w = word(t, b);
                    let batch =
                        (0..3).fold(Batch::new(), |batch, r| batch.upsert(record(&format!("t{t}-b{b}-r{r}"), &w)));
                    front.write(batch).unwrap();
                    assert_eq!(hits(index, &w), 3, "batch {b} of thread {t} is served when its write returns");
                }
            });
        }
    });
    let total = (threads * batches * 3) as u64;
    assert_eq!(index.num_records(), total);
    let stats = front.stats();
    assert_eq!((stats.batches, stats.changes, stats.failed), ((threads * batches) as u64, total, 0));
    assert!(stats.commits <= stats.batches);
    front.close().unwrap();
    drop(index);
    let reopened = Index::open(dir.path()).unwrap();
    assert_eq!(reopened.num_records(), total, "every acknowledged batch is durable");
}

#[test]
fn batches_queued_during_a_commit_share_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create(dir.path(), IndexConfig::default()).unwrap();
    let front = GroupCommit::new(index.clone());
    let n = 5;
    let go = Barrier::new(n + 1);
    let acks = std::thread::scope(|scope| {
        let writes: Vec<_> = (0..n)
            .map(|t| {
                let (front, go) = (&front, &go);
                scope.spawn(move || {
                    go.wait();
                    front.write(Batch::new().upsert(record(&format!("r{t}"), &word(t, 0)))).unwrap()
                })
            })
            .collect();
        hold_until_queued(&front, &go, n);
        writes.into_iter().map(|w| w.join().unwrap()).collect::<Vec<_>>()
    });
    let groups: BTreeSet<_> = acks.iter().map(|a| (a.group, a.batches, a.commit.clone())).collect();
    assert_eq!(groups.len(), 1, "one group, one commit: {acks:?}");
    assert_eq!(acks[0].batches, n);
    assert!(acks[0].commit.is_some());
    assert_eq!(front.stats().commits, 1);
    assert_eq!(index.num_records(), n as u64);
}

#[test]
fn with_a_commit_delay_concurrent_writers_make_fewer_commits_than_batches() {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create(dir.path(), IndexConfig::default()).unwrap();
    let options = GroupCommitOptions { commit_delay: Duration::from_millis(50), ..GroupCommitOptions::default() };
    let front = GroupCommit::with_options(index.clone(), options);
    let (threads, batches) = (6, 4);
    let start = Barrier::new(threads);
    let acks: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (front, start) = (&front, &start);
                scope.spawn(move || {
                    start.wait();
                    (0..batches)
                        .map(|b| front.write(Batch::new().upsert(record(&format!("t{t}-b{b}"), &word(t, b)))).unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let stats = front.stats();
    assert_eq!(stats.batches, (threads * batches) as u64);
    assert!(stats.commits < stats.batches, "{stats:?}");
    // Batches of one group got one commit, and each group its own.
    let mut commit_of: BTreeMap<u64, Option<String>> = BTreeMap::new();
    for ack in &acks {
        assert_eq!(commit_of.entry(ack.group).or_insert_with(|| ack.commit.clone()), &ack.commit);
    }
    let commits: BTreeSet<_> = commit_of.values().collect();
    assert_eq!(commits.len() as u64, stats.commits);
    assert_eq!(index.num_records(), (threads * batches) as u64);
}

#[test]
fn a_stream_of_writes_is_committed_at_most_once_an_interval() {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create(dir.path(), IndexConfig::default()).unwrap();
    // The default interval (500 ms): a group is paced only while the last one began less than
    // an interval ago, so with a short one a loaded machine, whose commits outlast it, paces
    // nothing.
    let options = GroupCommitOptions::default();
    let interval = options.commit_interval;
    let front = GroupCommit::with_options(index.clone(), options);
    let (threads, batches) = (8, 5);
    let start = Barrier::new(threads);
    let began = Instant::now();
    std::thread::scope(|scope| {
        for t in 0..threads {
            let (front, start) = (&front, &start);
            scope.spawn(move || {
                start.wait();
                for b in 0..batches {
                    front.write(Batch::new().upsert(record(&format!("t{t}-b{b}"), &word(t, b)))).unwrap();
                }
            });
        }
    });
    let took = began.elapsed();
    let stats = front.stats();
    assert_eq!(stats.batches, (threads * batches) as u64);
    // Eight callers writing at once keep batches queued behind the commits, which then wait.
    assert!(stats.paced >= 1, "{stats:?}");
    // Each paced group began at least an interval after the group before it.
    assert!(took >= interval * stats.paced as u32, "{took:?} for {stats:?}");
    assert!(stats.commits < stats.batches, "{stats:?}");
    assert_eq!(index.num_records(), (threads * batches) as u64);
}

#[test]
fn a_bad_record_fails_only_its_batch_and_nothing_of_it_is_committed() {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create(dir.path(), IndexConfig::default()).unwrap();
    let front = GroupCommit::new(index.clone());
    let good = |t: usize| Batch::new().upsert(record(&format!("good-{t}"), &word(t, 0)));
    let bad = [
        // A good record first, then one the writer refuses: neither may land.
        Batch::new().upsert(record("bad-0", "zqbadonex")).upsert(record(" ", "zqbadonex")),
        Batch::new().upsert(record("bad-1", "zqbadtwox")).upsert(record("bad-1b", "x").acl(["__braid:no-acl"])),
        Batch::new().upsert(record("bad-2", "zqbadthreex")).upsert(record("bad-2b", "x").keyword("no_such_field", "v")),
        // Each record passes the check alone; the second's upsert refuses it, after the first
        // was written: the group's other batches are written again on a fresh writer.
        Batch::new()
            .upsert(record("bad-3", "zqbadfourx").vector(vec![1.0, 0.0, 0.0]))
            .upsert(record("bad-3b", "x").vector(vec![1.0, 0.0])),
    ];
    let batches: Vec<Batch> = std::iter::once(good(0)).chain(bad).chain([good(1)]).collect();
    let n = batches.len();
    let go = Barrier::new(n + 1);
    let results = std::thread::scope(|scope| {
        let writes: Vec<_> = batches
            .into_iter()
            .map(|batch| {
                let (front, go) = (&front, &go);
                scope.spawn(move || {
                    go.wait();
                    front.write(batch)
                })
            })
            .collect();
        hold_until_queued(&front, &go, n);
        writes.into_iter().map(|w| w.join().unwrap()).collect::<Vec<_>>()
    });
    let (first, last) = (results[0].as_ref().unwrap(), results[n - 1].as_ref().unwrap());
    assert_eq!(first, last, "the good batches shared one commit");
    assert_eq!(first.batches, 2);
    for (result, why) in
        results[1..n - 1].iter().zip(["InvalidRecord", "ReservedToken", "UnknownField", "DimensionMismatch"])
    {
        let e = result.as_ref().expect_err("a bad batch is refused");
        let kind = format!("{e:?}");
        assert!(kind.starts_with(why), "{why}: {kind}");
        assert!(e.is_user_error(), "{e}");
    }
    assert_eq!(index.num_records(), 2);
    for word in ["zqbadonex", "zqbadtwox", "zqbadthreex", "zqbadfourx"] {
        assert_eq!(hits(&index, word), 0, "nothing of a refused batch is committed ({word})");
    }
    assert_eq!((hits(&index, &word(0, 0)), hits(&index, &word(1, 0))), (1, 1));
    let stats = front.stats();
    assert_eq!((stats.commits, stats.batches, stats.failed), (1, 2, 4));
    // Later writes go on normally, and nothing of the refused batches rides along.
    front.write(Batch::new().upsert(record("after", "zqafterx")).delete("good-0")).unwrap();
    assert_eq!(index.num_records(), 2);
    assert_eq!(hits(&index, "zqbadonex"), 0);
}

#[test]
fn a_group_that_cannot_open_the_writer_fails_whole_and_the_next_write_starts_clean() {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create(dir.path(), IndexConfig::default()).unwrap();
    let front = GroupCommit::new(index.clone());
    let other = index.writer().unwrap();
    let results: Vec<_> = std::thread::scope(|scope| {
        let writes: Vec<_> = (0..3)
            .map(|t| {
                let front = &front;
                scope.spawn(move || front.write(Batch::new().upsert(record(&format!("r{t}"), &word(t, 0)))))
            })
            .collect();
        writes.into_iter().map(|w| w.join().unwrap()).collect()
    });
    for result in &results {
        assert!(matches!(result, Err(Error::LockBusy { .. })), "{result:?}");
    }
    assert_eq!(index.num_records(), 0);
    drop(other);
    front.write(Batch::new().upsert(record("r9", "zqlaterx"))).unwrap();
    assert_eq!(index.num_records(), 1, "none of the failed group rides along");
    assert_eq!(hits(&index, "zqlaterx"), 1);
}

#[test]
fn run_shares_the_writer_and_the_idle_writer_closes() {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create(dir.path(), IndexConfig::default()).unwrap();
    let front = GroupCommit::new(index.clone());
    front.write(Batch::new().upsert(record("a", "zqalphax"))).unwrap();
    assert!(matches!(index.writer(), Err(Error::LockBusy { .. })), "the front keeps its writer open");
    let ((), commit) = front.run(|w| w.upsert(&record("b", "zqbetax"))).unwrap();
    assert_eq!(commit, index.commit_id());
    let failed = front.run(|w| {
        w.upsert(&record("c", "zqgammax"))?;
        Err::<(), _>(Error::invalid_request("refused after an upsert"))
    });
    assert!(failed.is_err());
    front.write(Batch::new().upsert(record("d", "zqdeltax"))).unwrap();
    assert_eq!((hits(&index, "zqbetax"), hits(&index, "zqgammax"), hits(&index, "zqdeltax")), (1, 0, 1));
    assert!(!front.close_idle(Duration::from_secs(3600)).unwrap());
    assert!(front.close_idle(Duration::ZERO).unwrap());
    drop(index.writer().unwrap());
}

/// Field `n` (from 3, after the command's name) of the calling thread's `stat` (Linux).
#[cfg(target_os = "linux")]
fn own_field(n: usize) -> String {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    after_name.split_whitespace().nth(n - 3).unwrap().to_string()
}

/// The nice value of the calling thread (Linux: field 19 of its `stat`).
#[cfg(target_os = "linux")]
fn own_nice() -> i64 {
    own_field(19).parse().unwrap()
}

/// Whether any thread of this process runs in Linux's idle scheduling class (`SCHED_IDLE`, 5:
/// field 41 of its `stat`).
#[cfg(target_os = "linux")]
fn any_thread_idle() -> bool {
    std::fs::read_dir("/proc/self/task").unwrap().flatten().any(|task| {
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        let Some(at) = stat.rfind(')') else { return false };
        stat[at + 2..].split_whitespace().nth(38) == Some("5")
    })
}

#[test]
fn a_group_commits_at_lower_priority_and_its_caller_keeps_its_own() {
    for (writer_nice, writer_idle) in
        [(0, false), (braid::DEFAULT_WRITER_NICE, false), (braid::DEFAULT_WRITER_NICE, true)]
    {
        let dir = tempfile::tempdir().unwrap();
        let index = Index::create(dir.path(), IndexConfig::default()).unwrap();
        let options = GroupCommitOptions { writer_nice, writer_idle, ..Default::default() };
        let front = GroupCommit::with_options(index.clone(), options);
        #[cfg(target_os = "linux")]
        let before = own_nice();
        let ack = front.write(Batch::new().upsert(record("a", "zqalphax"))).unwrap();
        assert_eq!((ack.batches, hits(&index, "zqalphax")), (1, 1));
        // The writer's threads, started on the commit's thread, are in its scheduling class.
        #[cfg(target_os = "linux")]
        if writer_idle {
            assert!(any_thread_idle(), "the writer's threads run in the idle class");
        }
        // The writer's own threads started on the commit's thread: a later group, and `run`,
        // work as before.
        front.write(Batch::new().upsert(record("b", "zqbetax")).delete("a")).unwrap();
        front.run(|w| w.upsert(&record("c", "zqgammax"))).unwrap();
        assert_eq!((hits(&index, "zqalphax"), hits(&index, "zqbetax"), hits(&index, "zqgammax")), (0, 1, 1));
        #[cfg(target_os = "linux")]
        assert_eq!(own_nice(), before, "the caller's priority is its own");
        #[cfg(target_os = "linux")]
        assert_eq!(own_field(41), "0", "the caller stays in the normal scheduling class");
        front.close().unwrap();
    }
}
