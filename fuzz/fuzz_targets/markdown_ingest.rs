//! Markdown and plain-text ingestion: arbitrary text parsed by `braid::ingest::parse_article`
//! and `parse_text` with arbitrary chunking options, the sections' records upserted into a
//! fresh in-memory index and committed. Every input gives records or a typed error.
#![no_main]

use braid::ingest::{parse_article, parse_text, ChunkOptions};
use braid::{Index, IndexConfig, Principal, SearchRequest};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((options, text)) = data.split_first_chunk::<4>() else { return };
    let options = ChunkOptions {
        max_chars: usize::from(u16::from_le_bytes([options[0], options[1]])),
        overlap_chars: usize::from(u16::from_le_bytes([options[2], options[3]])),
    };
    let text = String::from_utf8_lossy(text);
    for parse in [parse_article, parse_text] {
        let Ok(article) = parse("guides/fuzz", &text, &options) else { continue };
        let Ok(records) = article.records() else { continue };
        let index = Index::create_in_ram(IndexConfig::default()).expect("index");
        let mut writer = index.writer().expect("writer");
        let accepted = records.iter().filter(|r| writer.upsert(r).is_ok()).count();
        writer.commit().expect("commit");
        assert!(index.num_records() as usize <= accepted);
        if let Some(first) = records.first() {
            let _ = index.search(&SearchRequest::new(first.title_text(), Principal::public()));
        }
    }
});
