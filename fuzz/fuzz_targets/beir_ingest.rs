//! BEIR `corpus.jsonl` ingestion: arbitrary bytes as a corpus file, read by
//! `braid::ingest::Source`, every record it yields upserted into an in-memory index and
//! committed, then read back and searched. Bad lines must be typed errors, never panics. The
//! index and its writer live across runs (as in a service); each run first deletes the
//! previous run's records.
#![no_main]

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use braid::ingest::Source;
use braid::{Index, IndexConfig, Mode, Principal, SearchRequest, Writer, WriterOptions, MIN_WRITER_HEAP};
use libfuzzer_sys::fuzz_target;

struct State {
    index: Index,
    writer: Writer,
    previous: Vec<String>,
}

fuzz_target!(|data: &[u8]| {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    static STATE: OnceLock<Mutex<State>> = OnceLock::new();
    let path = PATH.get_or_init(|| std::env::temp_dir().join(format!("braid-fuzz-{}.jsonl", std::process::id())));
    let state = STATE.get_or_init(|| {
        let index = Index::create_in_ram(IndexConfig::default()).expect("index");
        let writer = index
            .writer_with(WriterOptions { heap_bytes: MIN_WRITER_HEAP, ..WriterOptions::default() })
            .expect("writer");
        Mutex::new(State { index, writer, previous: Vec::new() })
    });
    let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
    let State { index, writer, previous } = &mut *state;
    for id in previous.drain(..) {
        writer.delete(&id).expect("delete");
    }
    std::fs::write(path, data).expect("write the corpus file");
    let mut ids = std::collections::BTreeMap::new();
    for record in Source::Beir(path.clone()).records(&index.config().schema) {
        let Ok(record) = record else { continue };
        if writer.upsert(&record).is_ok() {
            ids.insert(record.id().to_string(), record.acl_tokens().to_vec());
        }
    }
    writer.commit().expect("commit");
    assert_eq!(index.num_records() as usize, ids.len());
    // Every accepted record is there for a principal holding its ACL tokens.
    for (id, acl) in ids.iter().take(3) {
        let principal = if acl.is_empty() { Principal::public() } else { Principal::from_verified_tokens(acl.clone()) };
        assert!(index.record(id, &principal).expect("read").is_some(), "record {id:?} was not committed");
        for mode in [Mode::Lexical, Mode::Fuzzy, Mode::Hybrid] {
            let _ = index.search(&SearchRequest::new(id.as_str(), principal.clone()).mode(mode));
        }
    }
    previous.extend(ids.into_keys());
});
