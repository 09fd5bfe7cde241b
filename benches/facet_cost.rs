//! What facets, boosts and deep pages cost, on a BEIR corpus (SciFact in docs/search-box.md).
//!
//! ```text
//! cargo run --release --example facet_cost -- ../shared/datasets/scifact
//! ```
//!
//! BEIR records carry no keyword or date fields, so each record gets two derived from its id
//! (FNV-1a): `category`, one of 20 values, and `updated`, a date within four years. They
//! give the facets something to count; they do not change the text, so the matches are
//! SciFact's own. For every judged test query, the example times `search()` (median and p95
//! over the queries, each run once after one warm-up) in lexical and hybrid mode: plain, with
//! a keyword facet and a four-range date facet, with a gaussian decay and a numeric boost, and
//! the page at offset 90. It prints the mean number of matched records a facet counts over.

use std::path::PathBuf;
use std::time::Instant;

use braid::ingest::Source;
use braid::{
    Boosts, Decay, DecayFunction, Facet, FacetRange, Index, IndexConfig, Mode, Modifier, NumberBoost, Principal,
    SearchRequest,
};

fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

const START: f64 = 1_640_995_200.0; // 2022-01-01
const YEAR: f64 = 365.0 * 86_400.0;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(dir) = std::env::args().nth(1).map(PathBuf::from) else {
        eprintln!("usage: facet_cost <BEIR DATASET DIR>");
        std::process::exit(2);
    };
    let index = Index::create_in_ram(IndexConfig::default())?;
    let mut writer = index.writer()?;
    let mut n = 0;
    for record in Source::detect(&dir)?.records(&index.config().schema) {
        let record = record?;
        let h = fnv(record.id());
        let record = record
            .keyword("category", format!("c{:02}", h % 20))
            .number("updated", START + ((h >> 8) % 1461) as f64 * 86_400.0);
        writer.upsert(&record)?;
        n += 1;
    }
    writer.commit()?;
    drop(writer);
    let dataset = braid_eval::Dataset::load(&dir, "test")?;
    println!("{}: {n} records, {} queries", dataset.name, dataset.queries.len());

    let facets = |r: SearchRequest| {
        let years =
            (0..4).map(|y| FacetRange::new(Some(START + f64::from(y) * YEAR), Some(START + f64::from(y + 1) * YEAR)));
        r.facet(Facet::values("category")).facet(Facet::ranges("updated", years))
    };
    let boosts = |r: SearchRequest| {
        r.boosts(
            Boosts::default()
                .decay(Decay::new("updated", DecayFunction::Gauss, START + 4.0 * YEAR, YEAR))
                .number(NumberBoost::new("updated", 1e-9, Modifier::Log1p)),
        )
    };
    let deep = |r: SearchRequest| r.offset(90);
    let configs: [(&str, &dyn Fn(SearchRequest) -> SearchRequest); 4] =
        [("plain", &|r| r), ("facets", &facets), ("boosts", &boosts), ("offset 90", &deep)];
    println!("{:<6} {:<10} {:>9} {:>9} {:>9}", "mode", "request", "p50 ms", "p95 ms", "matched");
    for mode in [Mode::Lexical, Mode::Hybrid] {
        for (name, config) in configs {
            let mut took = Vec::with_capacity(dataset.queries.len());
            let mut matched = 0u64;
            for q in &dataset.queries {
                let request = config(SearchRequest::new(q.text.as_str(), Principal::public()).mode(mode).k(10));
                index.search(&request)?;
                let t = Instant::now();
                let r = index.search(&request)?;
                took.push(t.elapsed().as_secs_f64() * 1000.0);
                matched += r.facets.map_or(0, |f| f.matched);
            }
            took.sort_by(f64::total_cmp);
            let at = |p: f64| took[((took.len() - 1) as f64 * p).round() as usize];
            let mean = if name == "facets" { format!("{:.0}", matched as f64 / took.len() as f64) } else { "-".into() };
            println!("{:<6} {:<10} {:>9.2} {:>9.2} {:>9}", mode.name(), name, at(0.5), at(0.95), mean);
        }
    }
    Ok(())
}
