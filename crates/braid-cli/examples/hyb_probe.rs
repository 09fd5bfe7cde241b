use braid::{Index, Mode, Principal, SearchRequest};
use std::time::Instant;
fn main() {
    let mut a = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(a.next().unwrap());
    let q = a.next().unwrap();
    let share = a.next().unwrap();
    let mode: Mode = a.next().unwrap().parse().unwrap();
    let queries: Vec<(String, Vec<f32>)> = std::fs::read_to_string(q)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["text"].as_str().unwrap().to_string(),
                v["vector"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect(),
            )
        })
        .collect();
    let tokens: Vec<String> = if share == "100" {
        (0..10).map(|t| format!("tenant:t{t}")).chain((0..100).map(|g| format!("group:g{g}"))).collect()
    } else {
        std::iter::once("tenant:t3".to_string()).chain((0..10).map(|g| format!("group:g{g}"))).collect()
    };
    let principal = Principal::from_verified_tokens(&tokens);
    let index = Index::builder().stored_vectors().open(&dir).unwrap();
    for pass in 0..4 {
        let mut us = Vec::new();
        for (text, vector) in &queries {
            let r = SearchRequest::new(text.as_str(), principal.clone())
                .k(10)
                .mode(mode)
                .suggest(false)
                .vector(vector.clone());
            let t = Instant::now();
            let resp = index.search(&r).unwrap();
            us.push(t.elapsed().as_secs_f64() * 1e3);
            if pass == 3 && us.len() == 1 {
                eprintln!("{:?}", resp.stats);
            }
        }
        us.sort_by(f64::total_cmp);
        println!("pass {pass} p50 {:.2}", us[us.len() / 2]);
    }
}
