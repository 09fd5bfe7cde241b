//! A search fanned out over N indexes (`braid::fanout`) against one index holding the same
//! records, on a BEIR set's test queries, clean and with one real misspelling each.
//!
//! ```text
//! cargo run --release -p braid-report --example fanout -- DATASET MISSPELLINGS [N...]
//! ```
//!
//! Builds one in-memory index of the corpus and, for each N (by default 4 and 16), N in-memory
//! indexes that split it by a hash of the id, all with the default embedding model (each passage
//! embedded once: a cache sits in front of the model, so the indexes hold the same vectors and
//! every query is embedded once). For each query and mode (lexical, fuzzy, hybrid — the default
//! request, pseudo-relevance feedback included) it compares the fan-out's response with one
//! index's: identical (ids, order, scores and explain), else how it differs; and the time of
//! each, the fan-out's rounds run in this process one index's session after the other (what
//! it costs beyond the partitions' own work, without a network), and the JSON bytes of every
//! ask of a request (`ask_kb`, in a second, untimed run). Prints one JSON line per dataset, N
//! and mode.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use braid::fanout::{Ask, FanOut, Reply, Session, Step};
use braid::ingest::Source;
use braid::{Embedder, Index, IndexConfig, Mode, Principal, SearchRequest, SearchResponse, Searcher};
use braid_eval::{ndcg_at, Dataset, Misspellings};

/// The default model with a cache in front: a text is embedded once however many indexes
/// (or partitions' searches) ask.
struct Cached {
    model: Arc<dyn Embedder>,
    seen: Mutex<HashMap<String, Vec<f32>>>,
}

impl Embedder for Cached {
    fn model_id(&self) -> &str {
        self.model.model_id()
    }

    fn dim(&self) -> usize {
        self.model.dim()
    }

    fn languages(&self) -> Option<&[braid::Language]> {
        self.model.languages()
    }

    fn count_tokens(&self, text: &str) -> Option<usize> {
        self.model.count_tokens(text)
    }

    fn embed(&self, texts: &[&str]) -> braid::Result<Vec<Vec<f32>>> {
        let missing: Vec<&str> = {
            let seen = self.seen.lock().unwrap();
            texts.iter().copied().filter(|t| !seen.contains_key(*t)).collect()
        };
        if !missing.is_empty() {
            let vectors = self.model.embed(&missing)?;
            let mut seen = self.seen.lock().unwrap();
            for (text, vector) in missing.into_iter().zip(vectors) {
                seen.insert(text.to_string(), vector);
            }
        }
        let seen = self.seen.lock().unwrap();
        Ok(texts.iter().map(|t| seen[*t].clone()).collect())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dataset_dir = PathBuf::from(args.next().ok_or("usage: fanout DATASET MISSPELLINGS [N...]")?);
    let misspellings = Misspellings::load(&PathBuf::from(args.next().ok_or("no misspellings file")?))?;
    let mut counts: Vec<usize> = args.map(|a| a.parse()).collect::<Result<_, _>>()?;
    if counts.is_empty() {
        counts = vec![4, 16];
    }
    let dataset = Dataset::load(&dataset_dir, "test")?;
    let source = Source::detect(&dataset_dir)?;
    let mut records: Vec<braid::Record> =
        source.records(&IndexConfig::default().schema).collect::<braid::Result<_>>()?;
    // In id order: one index breaks exact ties by its record order, the fan-out by id.
    records.sort_by(|a, b| a.id().cmp(b.id()));
    let model: Arc<dyn Embedder> = Arc::new(braid::models::OnnxEmbedder::builder().build()?);
    let cached: Arc<dyn Embedder> = Arc::new(Cached { model, seen: Mutex::new(HashMap::new()) });
    let t = Instant::now();
    let one = build(&records, &cached, |_| 0, 1)?.remove(0).searcher();
    eprintln!("{}: one index in {:.1} s", dataset.name, t.elapsed().as_secs_f64());
    // Every query as itself and with one real misspelling.
    let mut queries: Vec<(String, String)> = Vec::new();
    for q in &dataset.queries {
        queries.push((q.id.clone(), q.text.clone()));
        if let Some(misspelt) = misspellings.misspell(&q.text, &q.id) {
            queries.push((q.id.clone(), misspelt));
        }
    }
    for n in counts {
        let parts: Vec<Searcher> =
            build(&records, &cached, |id| (hash(id) % n as u64) as usize, n)?.iter().map(Index::searcher).collect();
        for mode in [Mode::Lexical, Mode::Fuzzy, Mode::Hybrid] {
            let mut tally = Tally::default();
            for (id, text) in &queries {
                let request = SearchRequest::new(text.as_str(), Principal::public()).mode(mode).k(10);
                // The query's embedding cached first, so neither side pays for it.
                one.search(&request)?;
                let t = Instant::now();
                let expected = one.search(&request)?;
                tally.one_micros.push(t.elapsed().as_micros() as u64);
                let t = Instant::now();
                let (got, rounds) = fan_out(&parts, &request)?;
                tally.fan_micros.push(t.elapsed().as_micros() as u64);
                tally.rounds.push(rounds);
                tally.ask_bytes.push(ask_bytes(&parts, &request)?);
                let judged = dataset.qrels.get(id).cloned().unwrap_or_default();
                tally.ndcg_one += ndcg_at(&ids(&expected), &judged, 10);
                tally.ndcg_fan += ndcg_at(&ids(&got), &judged, 10);
                tally.compare(&expected, &got);
            }
            println!("{}", tally.report(&dataset.name, n, mode));
        }
    }
    Ok(())
}

/// The fan-out of `request` over `parts`, one index after the other; with its rounds.
/// The fan-out of `request` over `parts`, one index's session after the other; with its rounds.
fn fan_out(parts: &[Searcher], request: &SearchRequest) -> braid::Result<(SearchResponse, usize)> {
    let mut fan_out = FanOut::new(request.clone(), parts.len())?;
    let mut sessions: Vec<Session> = parts.iter().map(|part| part.session(request)).collect::<braid::Result<_>>()?;
    let mut asks: Vec<Ask> = fan_out.start();
    let mut rounds = 0;
    loop {
        rounds += 1;
        let replies: Vec<Reply> =
            sessions.iter_mut().zip(&asks).map(|(session, ask)| session.answer(ask)).collect::<braid::Result<_>>()?;
        match fan_out.next(replies)? {
            Step::Ask(next) => asks = next,
            Step::Done(response) => return Ok((*response, rounds)),
        }
    }
}

/// The JSON bytes of every ask of `request`'s fan-out over `parts` (untimed).
fn ask_bytes(parts: &[Searcher], request: &SearchRequest) -> braid::Result<usize> {
    let mut fan_out = FanOut::new(request.clone(), parts.len())?;
    let mut sessions: Vec<Session> = parts.iter().map(|part| part.session(request)).collect::<braid::Result<_>>()?;
    let mut asks: Vec<Ask> = fan_out.start();
    let mut bytes = 0;
    loop {
        bytes += asks.iter().map(|a| serde_json::to_vec(a).map_or(0, |v| v.len())).sum::<usize>();
        let replies: Vec<Reply> =
            sessions.iter_mut().zip(&asks).map(|(session, ask)| session.answer(ask)).collect::<braid::Result<_>>()?;
        match fan_out.next(replies)? {
            Step::Ask(next) => asks = next,
            Step::Done(_) => return Ok(bytes),
        }
    }
}

fn ids(response: &SearchResponse) -> Vec<String> {
    response.hits.iter().map(|h| h.id.clone()).collect()
}

#[derive(Default)]
struct Tally {
    queries: usize,
    identical: usize,
    same_ids: usize,
    max_score_diff: f32,
    differences: Vec<String>,
    one_micros: Vec<u64>,
    fan_micros: Vec<u64>,
    rounds: Vec<usize>,
    ask_bytes: Vec<usize>,
    ndcg_one: f64,
    ndcg_fan: f64,
}

impl Tally {
    fn compare(&mut self, expected: &SearchResponse, got: &SearchResponse) {
        self.queries += 1;
        let json = |r: &SearchResponse| {
            let mut v = serde_json::to_value(r).unwrap();
            v["stats"].as_object_mut().unwrap().remove("micros");
            v
        };
        if json(expected) == json(got) {
            self.identical += 1;
            return;
        }
        if ids(expected) == ids(got) {
            self.same_ids += 1;
        }
        for (a, b) in expected.hits.iter().zip(&got.hits) {
            self.max_score_diff = self.max_score_diff.max((a.score - b.score).abs());
        }
        if self.differences.len() < 5 {
            self.differences.push(expected.stats.embedded.clone().unwrap_or_default());
        }
    }

    fn report(&self, dataset: &str, n: usize, mode: Mode) -> serde_json::Value {
        let q = self.queries.max(1) as f64;
        serde_json::json!({
            "dataset": dataset,
            "indexes": n,
            "mode": mode.name(),
            "queries": self.queries,
            "identical": self.identical,
            "same_ids_other_scores": self.same_ids,
            "max_score_diff": self.max_score_diff,
            "ndcg@10_one": self.ndcg_one / q,
            "ndcg@10_fan_out": self.ndcg_fan / q,
            "one_ms": percentiles(&self.one_micros),
            "fan_out_ms": percentiles(&self.fan_micros),
            "ask_kb": {"mean": self.ask_bytes.iter().sum::<usize>() as f64 / q / 1000.0,
                       "max": self.ask_bytes.iter().max().map_or(0.0, |b| *b as f64 / 1000.0)},
            "rounds": {"min": self.rounds.iter().min(), "max": self.rounds.iter().max(),
                       "mean": self.rounds.iter().sum::<usize>() as f64 / q},
        })
    }
}

fn percentiles(micros: &[u64]) -> serde_json::Value {
    let mut v = micros.to_vec();
    v.sort_unstable();
    let at = |p: f64| v.get(((v.len() as f64 - 1.0) * p).round() as usize).map_or(0.0, |m| *m as f64 / 1000.0);
    serde_json::json!({"p50": at(0.5), "p95": at(0.95)})
}

fn hash(id: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

/// `n` in-memory indexes with `embedder`, record `r` in index `route(r.id)`, in record order.
fn build(
    records: &[braid::Record],
    embedder: &Arc<dyn Embedder>,
    route: impl Fn(&str) -> usize,
    n: usize,
) -> braid::Result<Vec<Index>> {
    let indexes: Vec<Index> =
        (0..n).map(|_| Index::builder().embedder(embedder.clone()).create_in_ram()).collect::<braid::Result<_>>()?;
    let mut writers: Vec<braid::Writer> = indexes.iter().map(Index::writer).collect::<braid::Result<_>>()?;
    for record in records {
        writers[route(record.id())].upsert(record)?;
    }
    for mut writer in writers {
        writer.commit()?;
    }
    Ok(indexes)
}
