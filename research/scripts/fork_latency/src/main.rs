//! How long two halves of about 0.5 ms of work take, split three ways, 2,000 times with a few
//! milliseconds between (as paced searches are): `rayon` (`rayon::join` from a thread outside
//! the pool, as a search called from a service's thread did), `offer` (the calling thread runs
//! one half and offers the other to the pool, taking it back if no worker began it:
//! `braid_parallel::fork`) and `serial`. Optionally beside a busy thread (`nice` +10 or the
//! `idle` class, busy for 8 ms at a time a `DUTY` share of the time, pinned to `CPU`).
//!
//! ```text
//! cargo run --release -- rayon|offer|serial [none|nice|idle [DUTY [CPU]]]
//! ```
//!
//! `N` in the environment sets the multiplications a half (default 4,000,000).

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

fn work(n: u64) -> u64 {
    let mut y = 1u64;
    for _ in 0..n {
        y = y.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    }
    std::hint::black_box(y)
}

/// The offered half: 0 offered, 1 taken (by a worker or back by the caller).
struct Offer {
    state: AtomicU8,
    done: Mutex<bool>,
    cv: Condvar,
}

impl Offer {
    fn claim(&self) -> bool {
        self.state.compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }
    fn finish(&self) {
        *self.done.lock().unwrap() = true;
        self.cv.notify_one();
    }
    fn wait(&self) {
        let mut done = self.done.lock().unwrap();
        while !*done {
            done = self.cv.wait(done).unwrap();
        }
    }
}

fn busy(mode: String, cpu: Option<usize>, duty: f64, stop: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        // SAFETY: plain system calls on the calling thread with initialised arguments.
        unsafe {
            if let Some(c) = cpu {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(c, &mut set);
                libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set);
            }
            if mode == "nice" {
                libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as u32, 10);
            }
            if mode == "idle" {
                let p = libc::sched_param { sched_priority: 0 };
                libc::sched_setscheduler(0, libc::SCHED_IDLE, &p);
            }
        }
        while !stop.load(Ordering::Relaxed) {
            let t = Instant::now();
            while t.elapsed() < Duration::from_millis(8) {
                work(10_000);
            }
            if duty < 1.0 {
                std::thread::sleep(Duration::from_secs_f64(0.008 * (1.0 / duty - 1.0)));
            }
        }
    });
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let how = args.get(1).cloned().unwrap_or_else(|| "offer".into());
    let beside = args.get(2).cloned().unwrap_or_else(|| "none".into());
    let duty: f64 = args.get(3).map_or(1.0, |d| d.parse().expect("DUTY is a number"));
    let cpu: Option<usize> = args.get(4).map(|c| c.parse().expect("CPU is a number"));
    let n: u64 = std::env::var("N").map_or(4_000_000, |v| v.parse().expect("N is a number"));
    rayon::ThreadPoolBuilder::new().num_threads(2).build_global().expect("one global pool");
    rayon::join(|| work(1000), || work(1000));
    let stop = Arc::new(AtomicBool::new(false));
    if beside != "none" {
        busy(beside.clone(), cpu, duty, stop.clone());
    }
    std::thread::sleep(Duration::from_millis(100));
    let mut took = Vec::new();
    for i in 0..2000u64 {
        let t = Instant::now();
        match how.as_str() {
            "rayon" => {
                rayon::join(|| work(n), || work(n));
            }
            "serial" => {
                work(n);
                work(n);
            }
            "offer" => {
                let offer = Arc::new(Offer { state: AtomicU8::new(0), done: Mutex::new(false), cv: Condvar::new() });
                let task = offer.clone();
                rayon::spawn(move || {
                    if task.claim() {
                        work(n);
                        task.finish();
                    }
                });
                work(n);
                if offer.claim() {
                    work(n);
                } else {
                    offer.wait();
                }
            }
            other => panic!("unknown split {other:?}: rayon, offer or serial"),
        }
        took.push(t.elapsed().as_secs_f64() * 1e3);
        std::thread::sleep(Duration::from_micros(3000 + i * 7919 % 2000));
    }
    stop.store(true, Ordering::Relaxed);
    took.sort_by(f64::total_cmp);
    let at = |q: f64| took[((took.len() - 1) as f64 * q) as usize];
    println!(
        "{how:7} beside {beside:5} duty {duty} cpu {cpu:?}: p50 {:.3} p90 {:.3} p99 {:.3} max {:.3} ms",
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0)
    );
}
