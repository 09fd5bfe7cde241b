//! Measures what the defaults of `HnswParams` rest on: recall@10 and time per query at several
//! `ef_search`, the exact-versus-graph crossover across allowed-set sizes, and the time to
//! build, save and reopen a store.
//!
//! ```text
//! cargo run --release -p braid-vector --example recall_sweep -- [N] [DIM] [QUERIES]
//! ```
//! Defaults: 5,000 seeded random unit vectors of 384 dimensions, 100 queries. A fourth
//! argument `lowrank` draws vectors from a 24-dimensional latent space mapped into DIM
//! dimensions plus noise, which is closer to real embeddings than uniform random vectors;
//! `int8` holds the vectors as int8 codes ([`Quantization::Int8`]); the environment variable
//! `BRAID_EF_CONSTRUCTION` overrides the graph's construction width.

use std::time::{Duration, Instant};

use braid_core::{AccessPolicy, AllowedSet, OrdSet, Ordinal, Principal, Visibility};
use braid_vector::{HnswParams, Quantization, SearchPath, VectorStore};

/// A small seeded generator (xorshift64*), so runs are repeatable without extra crates.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn gaussian(&mut self) -> f32 {
        let (u, v) = (self.unit().max(1e-12), self.unit());
        ((-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()) as f32
    }
    fn unit_vector(&mut self, dim: usize) -> Vec<f32> {
        let v: Vec<f32> = (0..dim).map(|_| self.gaussian()).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }
}

fn allowed(ords: impl IntoIterator<Item = Ordinal>) -> AllowedSet {
    let everyone = Visibility::new(Principal::public(), AccessPolicy::Public, None);
    AllowedSet::new(everyone, ords.into_iter().collect::<OrdSet>())
}

fn recall(store: &VectorStore, queries: &[Vec<f32>], allowed: &AllowedSet) -> (f64, Duration, Duration, usize) {
    let (mut hit, mut total, mut t_search, mut t_exact, mut graph_runs) = (0, 0, Duration::ZERO, Duration::ZERO, 0);
    for q in queries {
        let t = Instant::now();
        let exact = store.search_exact(q, 10, allowed).unwrap();
        t_exact += t.elapsed();
        let t = Instant::now();
        let found = store.search(q, 10, allowed).unwrap();
        t_search += t.elapsed();
        graph_runs += usize::from(found.path == SearchPath::Hnsw);
        total += exact.len();
        hit += exact.iter().filter(|e| found.hits.iter().any(|h| h.0 == e.0)).count();
    }
    let n = queries.len() as u32;
    (hit as f64 / total.max(1) as f64, t_search / n, t_exact / n, graph_runs)
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).take(3).map(|a| a.parse().expect("a number")).collect();
    let n = args.first().copied().unwrap_or(5_000);
    let dim = args.get(1).copied().unwrap_or(384);
    let nq = args.get(2).copied().unwrap_or(100);
    let lowrank = std::env::args().skip(4).any(|a| a == "lowrank");
    let quantization =
        if std::env::args().skip(4).any(|a| a == "int8") { Quantization::Int8 } else { Quantization::F32 };
    let ef_construction = std::env::var("BRAID_EF_CONSTRUCTION").ok().and_then(|v| v.parse().ok());
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let basis: Vec<Vec<f32>> = (0..24).map(|_| rng.unit_vector(dim)).collect();
    let draw = |rng: &mut Rng| -> Vec<f32> {
        if !lowrank {
            return rng.unit_vector(dim);
        }
        let mut v: Vec<f32> = (0..dim).map(|_| 0.02 * rng.gaussian()).collect();
        for b in &basis {
            let w = rng.gaussian();
            v.iter_mut().zip(b).for_each(|(x, y)| *x += w * y);
        }
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    };
    let data: Vec<(Ordinal, Vec<f32>)> = (0..n as Ordinal).map(|o| (o, draw(&mut rng))).collect();
    let random_queries: Vec<Vec<f32>> = (0..nq).map(|_| draw(&mut rng)).collect();
    println!("data: {}", if lowrank { "low-rank (24-d latent) + noise" } else { "uniform random unit vectors" });
    // Queries near a stored vector, as real queries near their answers tend to be.
    let near_queries: Vec<Vec<f32>> = (0..nq)
        .map(|i| {
            let base = &data[(i * 7919) % n].1;
            let noise = rng.unit_vector(dim);
            base.iter().zip(&noise).map(|(b, e)| b + 0.5 * e).collect()
        })
        .collect();

    let t = Instant::now();
    let defaults = HnswParams::default();
    let params =
        HnswParams { quantization, ef_construction: ef_construction.unwrap_or(defaults.ef_construction), ..defaults };
    println!("vectors: {}, ef_construction {}", quantization.name(), params.ef_construction);
    let mut store = VectorStore::new(dim, params);
    store.insert_batch(&data).unwrap();
    println!("build {n} x {dim}: {:.2?} ({} threads)", t.elapsed(), rayon_threads());

    let everything = allowed(0..n as Ordinal);
    store.set_exact_threshold(0);
    println!("\nunfiltered, recall@10 vs exact, time per query (graph | exact scan)");
    for ef in [16, 32, 64, 96, 128, 160, 200, 300] {
        store.set_ef_search(ef);
        let (r, ts, te, _) = recall(&store, &random_queries, &everything);
        let (rn, tsn, _, _) = recall(&store, &near_queries, &everything);
        println!("ef {ef:>4}: random {r:.4} {ts:>9.2?} | near {rn:.4} {tsn:>9.2?} | exact {te:>9.2?}");
    }

    store.set_ef_search(HnswParams::default().ef_search);
    println!("\nfiltered at default ef_search, graph forced vs exact scan (random queries)");
    for pct in [0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 50.0, 100.0] {
        let every = (100.0 / pct) as u64;
        let subset = allowed((0..n as Ordinal).filter(|o| (o.wrapping_mul(2_654_435_761) >> 7) % (every.max(1)) == 0));
        store.set_exact_threshold(0);
        let (r, ts, te, runs) = recall(&store, &random_queries, &subset);
        println!(
            "{pct:>5}% ({:>5} allowed): graph recall {r:.4} {ts:>9.2?} ({runs} on graph) | exact {te:>9.2?}",
            subset.len()
        );
    }

    let dir = std::env::temp_dir().join(format!("braid-vector-sweep-{}", std::process::id()));
    let t = Instant::now();
    store.save(&dir).unwrap();
    let saved = t.elapsed();
    let t = Instant::now();
    let reopened = VectorStore::open(&dir).unwrap();
    println!("\nsave {saved:.2?}, open (verify + rebuild graph) {:.2?}, {} vectors", t.elapsed(), reopened.len());
    std::fs::remove_dir_all(&dir).ok();
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}
