//! BEIR `corpus.jsonl` ingestion: arbitrary bytes as a corpus file, read by
//! `braid::ingest::Source`, every record it yields upserted into a fresh in-memory index and
//! committed, then searched. Bad lines must be typed errors, never panics.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use braid::ingest::Source;
use braid::{Index, IndexConfig, Mode, Principal, SearchRequest};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    let path = PATH.get_or_init(|| std::env::temp_dir().join(format!("braid-fuzz-{}.jsonl", std::process::id())));
    std::fs::write(path, data).expect("write the corpus file");
    let index = Index::create_in_ram(IndexConfig::default()).expect("index");
    let mut writer = index.writer().expect("writer");
    let mut ids = std::collections::BTreeMap::new();
    for record in Source::Beir(path.clone()).records(&index.config().schema) {
        let Ok(record) = record else { continue };
        if writer.upsert(&record).is_ok() {
            ids.insert(record.id().to_string(), record.acl_tokens().to_vec());
        }
    }
    writer.commit().expect("commit");
    assert!(index.num_records() as usize <= ids.len());
    // Every accepted record is there for a principal holding its ACL tokens.
    for (id, acl) in ids.iter().take(3) {
        let principal = if acl.is_empty() { Principal::public() } else { Principal::from_verified_tokens(acl.clone()) };
        assert!(index.record(id, &principal).expect("read").is_some(), "record {id:?} was not committed");
        for mode in [Mode::Lexical, Mode::Fuzzy, Mode::Auto] {
            let _ = index.search(&SearchRequest::new(id.as_str(), principal.clone()).mode(mode));
        }
    }
});
