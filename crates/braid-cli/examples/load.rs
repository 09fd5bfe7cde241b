//! A bounded load test of a running `braid serve`: N client threads share a fixed number of
//! requests, each thread over its own keep-alive connection, and the run reports requests per
//! second and latency percentiles for `POST /v1/search` and for MCP `tools/call search`.
//!
//! ```text
//! bash scripts/serve-load.sh            # builds, indexes the help center, starts the server, runs this
//! cargo run --release -p braid-cli --example load -- \
//!     --url http://127.0.0.1:7700 --token-file token.txt --queries datasets/helpcenter/queries.jsonl \
//!     --threads 4 --requests 2000 --mode hybrid
//! ```
//!
//! Queries cycle through the `text` of each line of a BEIR `queries.jsonl`. Every answer must
//! be a 200 (and, for MCP, a result that is not `isError`); anything else counts as an error
//! and is reported.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

struct Args {
    url: String,
    token: String,
    queries: Vec<String>,
    threads: usize,
    requests: usize,
    mode: String,
    k: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let (mut url, mut token, mut queries) = ("http://127.0.0.1:7700".to_string(), None, None);
    let (mut threads, mut requests, mut mode, mut k) = (4usize, 1000usize, "hybrid".to_string(), 10usize);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--url" => url = value()?,
            "--token-file" => {
                let path = value()?;
                token = Some(std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?.trim().to_string());
            }
            "--queries" => {
                let path = value()?;
                let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
                let texts: Vec<String> = text
                    .lines()
                    .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                    .filter_map(|v| v["text"].as_str().map(str::to_string))
                    .collect();
                queries = Some(texts);
            }
            "--threads" => threads = value()?.parse().map_err(|e| format!("--threads: {e}"))?,
            "--requests" => requests = value()?.parse().map_err(|e| format!("--requests: {e}"))?,
            "--mode" => mode = value()?,
            "-k" => k = value()?.parse().map_err(|e| format!("-k: {e}"))?,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let token = token.or_else(|| std::env::var("BRAID_TOKEN").ok()).ok_or("give --token-file or BRAID_TOKEN")?;
    let queries = queries.filter(|q| !q.is_empty()).ok_or("give --queries <queries.jsonl> with at least one query")?;
    if threads == 0 || requests == 0 {
        return Err("--threads and --requests must be positive".into());
    }
    Ok(Args { url, token, queries, threads, requests, mode, k })
}

#[derive(Clone, Copy)]
enum Surface {
    Rest,
    Mcp,
}

/// Sends one request; `Err` says why it did not succeed.
fn send(agent: &ureq::Agent, args: &Args, surface: Surface, query: &str, id: usize) -> Result<(), String> {
    let auth = format!("Bearer {}", args.token);
    let (path, body) = match surface {
        Surface::Rest => ("/v1/search", json!({ "query": query, "mode": args.mode, "k": args.k })),
        Surface::Mcp => (
            "/mcp",
            json!({
                "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": "search", "arguments": { "query": query, "mode": args.mode, "k": args.k } }
            }),
        ),
    };
    let response = agent
        .post(&format!("{}{path}", args.url))
        .set("Authorization", &auth)
        .set("Content-Type", "application/json")
        .set("Accept", "application/json, text/event-stream")
        .set("MCP-Protocol-Version", "2025-06-18")
        .send_string(&body.to_string())
        .map_err(|e| e.to_string())?;
    let reply: Value = serde_json::from_reader(response.into_reader()).map_err(|e| e.to_string())?;
    match surface {
        Surface::Rest if reply["hits"].is_array() => Ok(()),
        Surface::Mcp if reply["result"]["isError"] == false => Ok(()),
        _ => Err(format!("unexpected answer: {reply}")),
    }
}

struct Run {
    seconds: f64,
    latencies: Vec<Duration>,
    errors: Vec<String>,
}

fn run(args: &Arc<Args>, surface: Surface) -> Run {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..args.threads)
        .map(|_| {
            let (args, next) = (Arc::clone(args), Arc::clone(&next));
            std::thread::spawn(move || {
                let agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(30)).max_idle_connections(1).build();
                let (mut latencies, mut errors) = (Vec::new(), Vec::new());
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= args.requests {
                        break;
                    }
                    let query = &args.queries[i % args.queries.len()];
                    let t = Instant::now();
                    match send(&agent, &args, surface, query, i) {
                        Ok(()) => latencies.push(t.elapsed()),
                        Err(e) => errors.push(e),
                    }
                }
                (latencies, errors)
            })
        })
        .collect();
    let (mut latencies, mut errors) = (Vec::new(), Vec::new());
    for w in workers {
        let (l, e) = w.join().unwrap_or_default();
        latencies.extend(l);
        errors.extend(e);
    }
    Run { seconds: started.elapsed().as_secs_f64(), latencies, errors }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1].as_secs_f64() * 1000.0
}

fn main() {
    let args = match parse_args() {
        Ok(a) => Arc::new(a),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    // Warm up: every query once per surface (caches, the model's first runs), not measured.
    let agent = ureq::agent();
    for (i, q) in args.queries.iter().enumerate().take(50) {
        for surface in [Surface::Rest, Surface::Mcp] {
            if let Err(e) = send(&agent, &args, surface, q, i) {
                eprintln!("error: warm-up request failed: {e}");
                std::process::exit(1);
            }
        }
    }
    println!("| surface | mode | threads | requests | errors | q/s | p50 ms | p99 ms |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    let mut failed = false;
    for (surface, name) in [(Surface::Rest, "POST /v1/search"), (Surface::Mcp, "MCP tools/call search")] {
        let mut r = run(&args, surface);
        r.latencies.sort();
        println!(
            "| {name} | {} | {} | {} | {} | {:.0} | {:.2} | {:.2} |",
            args.mode,
            args.threads,
            args.requests,
            r.errors.len(),
            r.latencies.len() as f64 / r.seconds,
            percentile(&r.latencies, 50.0),
            percentile(&r.latencies, 99.0)
        );
        if let Some(e) = r.errors.first() {
            eprintln!("{name}: {} errors, first: {e}", r.errors.len());
            failed = true;
        }
    }
    if failed {
        std::process::exit(1);
    }
}
