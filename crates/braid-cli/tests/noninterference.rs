//! Non-interference through the server: acme's REST and MCP answers from a server whose index
//! also holds globex's records equal those from a server whose index does not (the library's
//! property test, `tests/noninterference.rs`, covers random corpora; this one covers the
//! surfaces). Only timings differ, and they are removed before comparing.

use std::time::{Duration, Instant};

use braid::Index;
use serde_json::{json, Value};

use crate::support::{Server, ACME_SECRET, GLOBEX_SECRET};

/// `value` without its timings (`micros`, `steps`, the server's `uptime_s`), at any depth.
fn untimed(mut value: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.remove("micros");
                map.remove("steps");
                map.remove("uptime_s");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

#[test]
fn acme_answers_do_not_depend_on_globex_records() {
    let with_globex = Server::start();
    let without = Server::start();
    // The control: the same index, globex's record deleted; the server reloads it.
    {
        let index = Index::open(&without.index_dir).unwrap();
        let mut w = index.writer().unwrap();
        w.delete("globex-refunds#annual").unwrap();
        w.commit().unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let reply = without.search(&without.globex, json!({"query": "refund", "k": 5}));
        if reply.json()["hits"].as_array().is_some_and(|h| h.iter().all(|h| h["id"] != "globex-refunds#annual")) {
            break;
        }
        assert!(Instant::now() < deadline, "the server never picked up the control commit");
        std::thread::sleep(Duration::from_millis(100));
    }

    let typo = |w: &str| format!("{}{}", &w[..w.len() - 2], &w[w.len() - 1..]);
    let queries = [
        GLOBEX_SECRET.to_string(),
        typo(GLOBEX_SECRET),
        GLOBEX_SECRET[..5].to_string(),
        ACME_SECRET.to_string(),
        typo(ACME_SECRET),
        "refund annual plan".to_string(),
        "refnd".to_string(),
        "14 days".to_string(),
    ];
    for q in &queries {
        for mode in ["lexical", "fuzzy", "hybrid", "auto"] {
            for ids_only in [false, true] {
                let body = json!({"query": q, "k": 10, "mode": mode, "ids_only": ids_only});
                let (a, b) = (with_globex.search(&with_globex.acme, body.clone()), without.search(&without.acme, body));
                assert_eq!((a.status, untimed(a.json())), (b.status, untimed(b.json())), "REST {q:?} {mode}");
            }
            let args = json!({"query": q, "k": 10, "mode": mode});
            let a = with_globex.call_tool(&with_globex.acme, "search", args.clone());
            let b = without.call_tool(&without.acme, "search", args);
            assert_eq!(untimed(a), untimed(b), "MCP {q:?} {mode}");
        }
    }
    for path in ["", "acme-refunds", "globex-refunds"] {
        let args = json!({ "path": path });
        let a = with_globex.call_tool(&with_globex.acme, "outline", args.clone());
        let b = without.call_tool(&without.acme, "outline", args);
        assert_eq!(a, b, "MCP outline {path:?}");
    }
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": {}}).to_string();
    let a = with_globex.mcp(&with_globex.acme, Some("2025-06-18"), &list);
    let b = without.mcp(&without.acme, Some("2025-06-18"), &list);
    assert_eq!((a.status, a.json()), (b.status, b.json()), "MCP resources/list");
    let auth = |s: &Server| format!("Bearer {}", s.acme);
    let a = with_globex.request("GET", "/v1/stats", &[("Authorization", &auth(&with_globex))], None);
    let b = without.request("GET", "/v1/stats", &[("Authorization", &auth(&without))], None);
    assert_eq!(untimed(a.json()), untimed(b.json()), "/v1/stats");
}
