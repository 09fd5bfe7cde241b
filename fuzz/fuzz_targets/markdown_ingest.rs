//! Markdown and plain-text ingestion: arbitrary text parsed by `braid::ingest::parse_article`
//! and `parse_text` with arbitrary chunking options, the sections' records upserted into an
//! in-memory index and committed. Every input gives records or a typed error. The index and
//! its writer live across runs; each run first deletes the previous run's records.
#![no_main]

use std::sync::{Mutex, OnceLock};

use braid::ingest::{parse_article, parse_text, ChunkOptions};
use braid::{Index, IndexConfig, Principal, SearchRequest, Writer, WriterOptions, MIN_WRITER_HEAP};
use libfuzzer_sys::fuzz_target;

struct State {
    index: Index,
    writer: Writer,
    previous: Vec<String>,
}

fuzz_target!(|data: &[u8]| {
    static STATE: OnceLock<Mutex<State>> = OnceLock::new();
    let Some((options, text)) = data.split_first_chunk::<4>() else { return };
    let options = ChunkOptions {
        max_chars: usize::from(u16::from_le_bytes([options[0], options[1]])),
        overlap_chars: usize::from(u16::from_le_bytes([options[2], options[3]])),
    };
    let text = String::from_utf8_lossy(text);
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
    let mut accepted = std::collections::BTreeSet::new();
    for (n, parse) in [parse_article, parse_text].into_iter().enumerate() {
        let Ok(article) = parse(&format!("guides/fuzz{n}"), &text, &options) else { continue };
        let Ok(records) = article.records() else { continue };
        for record in &records {
            if writer.upsert(record).is_ok() {
                accepted.insert(record.id().to_string());
            }
        }
        if let Some(first) = records.first() {
            let _ = index.search(&SearchRequest::new(first.title_text(), Principal::public()));
        }
    }
    writer.commit().expect("commit");
    assert_eq!(index.num_records() as usize, accepted.len());
    previous.extend(accepted);
});
