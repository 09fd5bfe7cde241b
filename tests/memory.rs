//! An agent's memory through the library (`braid::memory`): a scope per owner within a
//! tenant, reinforcement instead of duplicates, expiry, supersession, and nothing of one
//! owner's memories reaching another owner of the same tenant.

use std::sync::Arc;

use braid::memory::{Cue, Memory, Note};
use braid::{Embedder, Index, IndexConfig, Mode, Principal, SearchRequest};

use crate::common::HashEmbedder;

const NOW: f64 = 1_790_000_000.0;
const HOUR: f64 = 3600.0;

fn alice() -> Principal {
    Principal::from_verified_tokens(["tenant:acme", "owner:user:idp/alice", "group:support"])
}

fn bob() -> Principal {
    Principal::from_verified_tokens(["tenant:acme", "owner:user:idp/bob", "group:support"])
}

fn note(text: &str, kind: &str, importance: u8) -> Note {
    Note { text: text.into(), kind: Some(kind.into()), importance: Some(importance), ttl_seconds: None }
}

fn texts(memory: &Memory, who: &Principal, query: &str, now: f64) -> Vec<String> {
    memory.recall(who, &Cue::new(query), now).unwrap().into_iter().map(|m| m.text).collect()
}

#[test]
fn memories_are_their_owners_alone() {
    let index = Index::create_in_ram(IndexConfig::default()).unwrap();
    let memory = Memory::new(&index).unwrap();
    let mut w = index.writer().unwrap();
    let a = memory
        .remember(&mut w, &alice(), &note("Alice prefers the zanzibarite keyboard layout", "preference", 7), NOW)
        .unwrap();
    w.commit().unwrap();
    assert!(!a.reinforced);
    assert!(a.memory.id.starts_with("tenant:acme/memory/"), "{}", a.memory.id);
    assert_eq!(texts(&memory, &alice(), "keyboard layout", NOW), ["Alice prefers the zanzibarite keyboard layout"]);
    // Bob shares alice's tenant and group: he recalls nothing, and no search of his finds it.
    assert!(texts(&memory, &bob(), "keyboard layout", NOW).is_empty());
    assert!(memory.recall(&bob(), &Cue::new(""), NOW).unwrap().is_empty());
    for who in [bob(), Principal::from_verified_tokens(["tenant:acme", "group:support"])] {
        for mode in [Mode::Lexical, Mode::Fuzzy, Mode::Hybrid] {
            let hits = index.search(&SearchRequest::new("zanzibarite keyboard", who.clone()).mode(mode)).unwrap().hits;
            assert!(hits.is_empty(), "{mode:?} {hits:?}");
        }
        assert!(index.record(&a.memory.id, &who).unwrap().is_none());
    }
    // Bob cannot forget or update it: the same answer as for an id that never existed.
    let missing = format!("{}0", a.memory.id);
    assert_eq!(
        memory.forget(&mut w, &bob(), &a.memory.id, NOW).unwrap(),
        memory.forget(&mut w, &bob(), &missing, NOW).unwrap()
    );
    assert!(!memory.forget(&mut w, &bob(), &a.memory.id, NOW).unwrap());
    assert!(memory.update(&mut w, &bob(), &a.memory.id, &Note::new("hijacked"), NOW).unwrap().is_none());
    assert!(memory.forget_kind(&mut w, &bob(), "preference", NOW).unwrap().is_empty());
    // Bob's own memory of the same text is his own record, not alice's reinforced.
    let b = memory
        .remember(&mut w, &bob(), &note("Alice prefers the zanzibarite keyboard layout", "fact", 2), NOW)
        .unwrap();
    w.commit().unwrap();
    assert!(!b.reinforced);
    assert_ne!(a.memory.id, b.memory.id);
    let mine = memory.recall(&alice(), &Cue::new("keyboard"), NOW).unwrap();
    assert_eq!((mine.len(), mine[0].importance, mine[0].kind.as_str()), (1, 7, "preference"));
    // A principal without exactly one owner and one tenant has no scope.
    for who in
        [Principal::from_verified_tokens(["tenant:acme"]), Principal::from_verified_tokens(["owner:user:idp/alice"])]
    {
        assert!(memory.recall(&who, &Cue::new("keyboard"), NOW).is_err());
    }
}

#[test]
fn duplicates_reinforce_the_memory_they_repeat() {
    let index = Index::create_in_ram(IndexConfig::default()).unwrap();
    let memory = Memory::new(&index).unwrap();
    let mut w = index.writer().unwrap();
    let first = memory.remember(&mut w, &alice(), &note("The van is parked on level three.", "fact", 4), NOW).unwrap();
    w.commit().unwrap();
    let again = memory
        .remember(&mut w, &alice(), &note("  the VAN is parked on   level three ", "fact", 2), NOW + HOUR)
        .unwrap();
    w.commit().unwrap();
    assert!(again.reinforced);
    assert_eq!(again.memory.id, first.memory.id);
    assert_eq!((again.memory.importance, again.memory.created), (5, NOW + HOUR));
    assert_eq!(again.memory.text, "The van is parked on level three.");
    assert_eq!(memory.recall(&alice(), &Cue::new("van"), NOW + HOUR).unwrap().len(), 1);
}

#[test]
fn near_duplicates_reinforce_by_cosine_with_an_embedder() {
    let index = Index::builder().embedder(Arc::new(HashEmbedder::new(512))).create_in_ram().unwrap();
    let memory = Memory::new(&index).unwrap();
    let long = "the weekly report goes to the finance team every monday before nine with the quarterly numbers and the forecast attached as a spreadsheet for review";
    let mut w = index.writer().unwrap();
    let first = memory.remember(&mut w, &alice(), &note(long, "task", 3), NOW).unwrap();
    w.commit().unwrap();
    let near = memory.remember(&mut w, &alice(), &note(&format!("{long} please"), "task", 3), NOW).unwrap();
    w.commit().unwrap();
    assert!(near.reinforced, "{near:?}");
    assert_eq!(near.memory.id, first.memory.id);
    let other = memory.remember(&mut w, &alice(), &note("the cat is called quince", "fact", 3), NOW).unwrap();
    w.commit().unwrap();
    assert!(!other.reinforced);
    // Bob's identical text never reinforces alice's memory.
    let bobs = memory.remember(&mut w, &bob(), &note(long, "task", 3), NOW).unwrap();
    w.commit().unwrap();
    assert!(!bobs.reinforced);
}

/// The embedder, watched: every text it is asked to embed.
struct Watched {
    inner: HashEmbedder,
    texts: std::sync::Mutex<Vec<String>>,
}

impl braid::Embedder for Watched {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, texts: &[&str]) -> braid::Result<Vec<Vec<f32>>> {
        self.texts.lock().unwrap().extend(texts.iter().map(|t| t.to_string()));
        self.inner.embed(texts)
    }
}

/// A new memory is embedded once: the vector that looked for a near duplicate is the one
/// stored, and it is the writer's own embedding of the memory's passage.
#[test]
fn a_new_memory_is_embedded_once() {
    let watched = Arc::new(Watched { inner: HashEmbedder::new(512), texts: Default::default() });
    let index = Index::builder().embedder(watched.clone()).create_in_ram().unwrap();
    let memory = Memory::new(&index).unwrap();
    let mut w = index.writer().unwrap();
    let m = memory
        .remember(&mut w, &alice(), &note("  the printer on floor two jams on A3 paper ", "fact", 3), NOW)
        .unwrap();
    w.commit().unwrap();
    let texts = watched.texts.lock().unwrap().clone();
    assert_eq!(texts.len(), 1, "{texts:?}");
    let stored = index.searcher().vector(&m.memory.id, &alice()).unwrap().unwrap();
    let expected = HashEmbedder::new(512).embed(&[texts[0].as_str()]).unwrap().remove(0);
    let cosine: f32 = stored.iter().zip(&expected).map(|(a, b)| a * b).sum();
    assert!(cosine > 0.999, "{cosine}");
    assert!(texts[0].contains("the printer on floor two jams on A3 paper"), "{texts:?}");
}

#[test]
fn expired_memories_are_never_recalled_and_are_purged_by_the_next_write() {
    let index = Index::create_in_ram(IndexConfig::default()).unwrap();
    let memory = Memory::new(&index).unwrap();
    let mut w = index.writer().unwrap();
    let brief = Note { ttl_seconds: Some(60.0), ..note("The door code is 4711 today", "fact", 9) };
    let m = memory.remember(&mut w, &alice(), &brief, NOW).unwrap();
    w.commit().unwrap();
    assert_eq!(m.memory.expires, Some(NOW + 60.0));
    assert_eq!(texts(&memory, &alice(), "door code", NOW + 59.0).len(), 1);
    assert!(texts(&memory, &alice(), "door code", NOW + 60.0).is_empty());
    assert!(memory.recall(&alice(), &Cue::new(""), NOW + 61.0).unwrap().is_empty());
    // Bob's write does not purge alice's scope; hers does: a forget, even of an expired id
    // (which answers as an unknown one), or a remember.
    memory.remember(&mut w, &bob(), &note("bob's note", "fact", 1), NOW + 61.0).unwrap();
    w.commit().unwrap();
    assert!(index.record_ids().unwrap().contains(&m.memory.id));
    assert!(!memory.forget(&mut w, &alice(), &m.memory.id, NOW + 61.0).unwrap());
    w.commit().unwrap();
    assert!(!index.record_ids().unwrap().contains(&m.memory.id));
    let again = memory.remember(&mut w, &alice(), &brief, NOW + 100.0).unwrap();
    w.commit().unwrap();
    assert!(!again.reinforced);
    let next = memory.remember(&mut w, &alice(), &note("lunch is at noon", "fact", 1), NOW + 200.0).unwrap();
    w.commit().unwrap();
    assert_eq!(next.purged, 1);
    assert!(!index.record_ids().unwrap().contains(&again.memory.id));
}

#[test]
fn recall_ranks_by_relevance_recency_and_importance() {
    let index = Index::create_in_ram(IndexConfig::default()).unwrap();
    let memory = Memory::new(&index).unwrap();
    let mut w = index.writer().unwrap();
    // Same relevance to "library"; recency and importance decide.
    memory.remember(&mut w, &alice(), &note("the library closes early", "fact", 2), NOW - 48.0 * HOUR).unwrap();
    memory.remember(&mut w, &alice(), &note("the library has a new wing", "fact", 2), NOW - HOUR).unwrap();
    memory.remember(&mut w, &alice(), &note("the library card expires soon", "task", 10), NOW - HOUR).unwrap();
    w.commit().unwrap();
    let got = memory.recall(&alice(), &Cue::new("library"), NOW).unwrap();
    let order: Vec<&str> = got.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(order, ["the library card expires soon", "the library has a new wing", "the library closes early"]);
    assert!(got.windows(2).all(|p| p[0].score >= p[1].score));
    let tasks = memory.recall(&alice(), &Cue { kind: Some("task".into()), ..Cue::new("library") }, NOW).unwrap();
    assert_eq!(tasks.len(), 1);
    let recent = memory.recall(&alice(), &Cue::new(""), NOW).unwrap();
    assert_eq!(recent[0].text, "the library card expires soon");
    assert_eq!(recent.len(), 3);
}

#[test]
fn update_supersedes_and_forget_by_kind() {
    let index = Index::create_in_ram(IndexConfig::default()).unwrap();
    let memory = Memory::new(&index).unwrap();
    let mut w = index.writer().unwrap();
    let old = memory.remember(&mut w, &alice(), &note("the standup is at nine", "schedule", 6), NOW).unwrap();
    memory.remember(&mut w, &alice(), &note("the retro is on friday", "schedule", 3), NOW).unwrap();
    memory.remember(&mut w, &alice(), &note("likes green tea", "preference", 3), NOW).unwrap();
    w.commit().unwrap();
    let new = memory
        .update(&mut w, &alice(), &old.memory.id, &Note::new("the standup moved to ten"), NOW + 1.0)
        .unwrap()
        .unwrap();
    w.commit().unwrap();
    assert_ne!(new.memory.id, old.memory.id);
    assert_eq!((new.memory.kind.as_str(), new.memory.importance), ("schedule", 6));
    assert_eq!(texts(&memory, &alice(), "standup", NOW + 1.0), ["the standup moved to ten"]);
    assert!(index.record(&old.memory.id, &alice()).unwrap().is_none());
    // The old id is gone: updating it again answers as for any unknown id.
    assert!(memory.update(&mut w, &alice(), &old.memory.id, &Note::new("x"), NOW + 2.0).unwrap().is_none());
    let gone = memory.forget_kind(&mut w, &alice(), "schedule", NOW + 2.0).unwrap();
    w.commit().unwrap();
    assert_eq!(gone.len(), 2);
    let left: Vec<String> =
        memory.recall(&alice(), &Cue::new(""), NOW + 2.0).unwrap().into_iter().map(|m| m.text).collect();
    assert_eq!(left, ["likes green tea"]);
    // Bounds are checked before anything is written.
    for bad in [
        Note::new(" "),
        Note { importance: Some(11), ..Note::new("x") },
        Note { ttl_seconds: Some(-1.0), ..Note::new("x") },
    ] {
        assert!(memory.remember(&mut w, &alice(), &bad, NOW).is_err(), "{bad:?}");
    }
}
