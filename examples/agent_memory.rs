//! An agent's memory: relevance + recency + importance, as in Generative Agents.
//!
//! ```text
//! cargo run --example agent_memory
//! ```
//!
//! Each memory is a record with the time it happened (`created`, Unix seconds) and how
//! important the agent judged it (`importance`, 1 to 10). Retrieval asks Braid for the
//! memories relevant to a cue, with an exponential decay on `created` (a memory's weight
//! halves every day) and a boost by `importance`:
//!
//! ```text
//! score = relevance × 0.5^(age / 1 day) × (1 + 0.1 · importance)
//! ```
//!
//! `relevance` is the fused BM25/fuzzy score on its [0, 1] scale (with an embedding model
//! attached, the semantic leg joins it), here fused by reciprocal rank: the default blend
//! normalises a leg's scores min-max over its candidates, which gives the weakest matching
//! memory relevance 0, and a product would then drop it whatever its importance. Generative Agents adds the three terms instead; the
//! product keeps a memory that does not match the cue at zero, whatever its age or importance.
//! Each hit's `explain.boost` shows the three parts, and the example checks that the order is
//! the formula's.

use braid::{
    Boosts, Decay, DecayFunction, Fusion, Index, IndexConfig, Mode, Modifier, NumberBoost, Principal, Record,
    SchemaConfig, SearchRequest,
};

const HOUR: f64 = 3600.0;
const DAY: f64 = 24.0 * HOUR;

fn main() -> braid::Result<()> {
    let schema =
        SchemaConfig { numeric_fields: ["created", "importance"].map(String::from).into(), ..SchemaConfig::default() };
    let index = Index::create_in_ram(IndexConfig { schema, ..IndexConfig::default() })?;
    let now = 1_790_000_000.0;
    // (what happened, hours ago, importance)
    let memories = [
        ("Klaus told me the coffee machine in the library is broken", 2.0, 3.0),
        ("I finished my research paper on gentrification for the library archive", 30.0, 8.0),
        ("Maria asked me to help plan the Valentine's Day party at the cafe", 5.0, 7.0),
        ("The library closes early on Sundays", 200.0, 4.0),
        ("I borrowed a book on urban history from the library", 50.0, 5.0),
        ("Isabella said the cafe has a new pastry", 1.0, 2.0),
    ];
    let agent = Principal::from_verified_tokens(["user:klaus"]);
    let mut writer = index.writer()?;
    for (i, (text, hours_ago, importance)) in memories.iter().enumerate() {
        writer.upsert(
            &Record::new(format!("memory-{i}"))
                .body(*text)
                .number("created", now - hours_ago * HOUR)
                .number("importance", *importance)
                .acl(["user:klaus"]),
        )?;
    }
    writer.commit()?;

    let boosts = Boosts::default().decay(Decay::new("created", DecayFunction::Exp, now, DAY)).number(NumberBoost::new(
        "importance",
        0.1,
        Modifier::Linear,
    ));
    let cue = "what is happening at the library";
    let response =
        index.search(&SearchRequest::new(cue, agent).mode(Mode::Fuzzy).fusion(Fusion::Rrf).k(5).boosts(boosts))?;

    println!("cue: {cue:?}");
    let mut last = f32::INFINITY;
    for hit in &response.hits {
        let boost = hit.explain.boost.as_ref().expect("boosted hits carry their parts");
        let (recency, importance) = (boost.factors[0].factor, boost.factors[1].factor);
        println!(
            "{:.4} = relevance {:.3} × recency {:.3} × importance {:.2}   {}",
            hit.score, boost.relevance, recency, importance, hit.id
        );
        let formula = (f64::from(boost.relevance) * recency * importance) as f32;
        assert!((formula - hit.score).abs() <= 1e-6, "the score is the formula's");
        assert!(hit.score <= last, "the order is the formula's");
        last = hit.score;
    }
    Ok(())
}
