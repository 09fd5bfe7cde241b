//! A search fanned out over several indexes answers as one index holding all their records:
//! the same hits, order, scores, explain, suggestions and counts, for every principal — the
//! help center (English and Chinese) split by a hash of the id into 2, 3 and 5 indexes, every
//! query of its set, each mode, the semantic leg on the deterministic test embedder.

use std::sync::Arc;

use braid::fanout::{self, Ask, FanOut, Reply, Session, Step};
use braid::ingest::Source;
use braid::{Error, Index, Mode, Principal, QuerySyntax, Record, SearchRequest, SearchResponse, Searcher};

use crate::common::{repo, HashEmbedder};

/// The records of a help center in the repository (`datasets/helpcenter`, or its Chinese
/// edition `datasets/helpcenter/zh`), in id order: one index then breaks exact ties by id, as
/// the fan-out does (one index breaks them by its own record order, which is insertion order).
fn records(set: &str) -> Vec<Record> {
    let dir = repo().join(set);
    let schema = braid::IndexConfig::default().schema;
    let mut records: Vec<Record> =
        Source::detect(&dir.join("articles")).unwrap().records(&schema).map(Result::unwrap).collect();
    if set == "datasets/helpcenter" {
        records.extend(crate::common::corpus());
    }
    records.sort_by(|a, b| a.id().cmp(b.id()));
    records
}

/// The help center's queries; with typed prefixes, a fragment, one tenant's words and the
/// simple syntax for the English one.
fn queries(set: &str) -> Vec<String> {
    let text = std::fs::read_to_string(repo().join(set).join("queries.jsonl")).unwrap();
    let mut queries: Vec<String> = text
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap()["text"].as_str().unwrap().to_string())
        .collect();
    if set == "datasets/helpcenter" {
        queries.extend(
            ["kuber", "refu", "frobnicator", "quuxly sso", "\"return policy\" -annual", "vat", ""].map(String::from),
        );
    }
    queries
}

fn principals() -> Vec<Principal> {
    vec![
        Principal::public(),
        Principal::from_verified_tokens(["public", "group:support"]),
        Principal::from_verified_tokens(["public", "tenant:acme"]),
        Principal::from_verified_tokens(["public", "tenant:globex", "group:support"]),
    ]
}

fn index_of(records: &[Record]) -> Index {
    let builder = Index::builder().embedder(Arc::new(HashEmbedder::new(32)));
    crate::common::in_ram_with(builder, records)
}

/// The records split over `n` indexes by a hash of their ids (FNV-1a).
fn split(records: &[Record], n: usize) -> Vec<Index> {
    split_records(records, n).iter().map(|records| index_of(records)).collect()
}

/// The records split in `n` by a hash of their ids (FNV-1a).
fn split_records(records: &[Record], n: usize) -> Vec<Vec<Record>> {
    let mut parts = vec![Vec::new(); n];
    for record in records {
        let h = record
            .id()
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
        parts[(h % n as u64) as usize].push(record.clone());
    }
    parts
}

/// The first place where two JSON values differ, as a path.
fn first_difference(a: &serde_json::Value, b: &serde_json::Value, path: String) -> Option<String> {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x.keys().chain(y.keys()).find_map(|k| match (x.get(k), y.get(k)) {
            (Some(p), Some(q)) => first_difference(p, q, format!("{path}.{k}")),
            (p, q) => Some(format!("{path}.{k}: {p:?} vs {q:?}")),
        }),
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find_map(|(i, (p, q))| first_difference(p, q, format!("{path}[{i}]")))
        }
        _ => (a != b).then(|| format!("{path}: {a} vs {b}")),
    }
}

/// A response as JSON, without timings.
fn comparable(response: SearchResponse) -> serde_json::Value {
    let mut v = serde_json::to_value(response).unwrap();
    v["stats"].as_object_mut().unwrap().remove("micros");
    v
}

fn searchers(indexes: &[Index]) -> Vec<Searcher> {
    indexes.iter().map(Index::searcher).collect()
}

/// Asserts that the fan-out over each split answers every query, principal and mode as one
/// index; returns how many requests were compared.
fn assert_answers_as_one_index(set: &str, splits: &[usize], modes: &[Mode]) -> usize {
    let records = records(set);
    let one = index_of(&records);
    let mut compared = 0;
    for &n in splits {
        let parts = searchers(&split(&records, n));
        for principal in principals() {
            for query in queries(set) {
                for &mode in modes {
                    let request = SearchRequest::new(query.as_str(), principal.clone()).mode(mode).k(10);
                    let request = if query.contains('"') { request.syntax(QuerySyntax::Simple) } else { request };
                    let expected = comparable(one.search(&request).unwrap());
                    let got = comparable(fanout::search(&parts, &request).unwrap());
                    let difference = first_difference(&got, &expected, String::new());
                    assert!(difference.is_none(), "{n} indexes, {principal:?}, {mode:?}, {query:?}: {difference:?}");
                    compared += 1;
                }
            }
        }
    }
    compared
}

#[test]
fn a_fan_out_answers_as_one_index() {
    let set = "datasets/helpcenter";
    let mut compared = assert_answers_as_one_index(set, &[2, 5], &[Mode::Hybrid]);
    compared += assert_answers_as_one_index(set, &[3], &[Mode::Hybrid, Mode::Lexical, Mode::Fuzzy, Mode::Semantic]);
    assert!(compared > 2_000, "{compared}");
}

/// Chinese: segmentation, pinyin typed in Latin letters, initials and homophone typos read
/// through the pinyin table gathered across the indexes.
#[test]
fn a_fan_out_reads_pinyin_as_one_index() {
    let compared = assert_answers_as_one_index("datasets/helpcenter/zh", &[3], &[Mode::Hybrid, Mode::Fuzzy]);
    assert!(compared > 400, "{compared}");
}

#[test]
fn pages_and_cursors_match_one_index() {
    let records = records("datasets/helpcenter");
    let one = index_of(&records);
    let parts = searchers(&split(&records, 3));
    let principal = Principal::from_verified_tokens(["public", "group:support"]);
    let request = SearchRequest::new("refund", principal).k(3);
    let (mut a, mut b) = (one.search(&request).unwrap(), fanout::search(&parts, &request).unwrap());
    for _ in 0..3 {
        let (ca, cb) = (a.next_cursor.clone(), b.next_cursor.clone());
        assert_eq!(first_difference(&comparable(b), &comparable(a), String::new()), None);
        let (Some(ca), Some(cb)) = (ca, cb) else { break };
        a = one.search(&request.clone().cursor(ca)).unwrap();
        b = fanout::search(&parts, &request.clone().cursor(cb)).unwrap();
    }
}

/// Every ask and reply crosses JSON, as it does between machines.
#[test]
fn asks_and_replies_cross_json() {
    let records = records("datasets/helpcenter");
    let one = index_of(&records);
    let parts = searchers(&split(&records, 4));
    let request = SearchRequest::new("two factr authentcation", Principal::public()).k(5);
    let mut fan_out = FanOut::new(request.clone(), parts.len()).unwrap();
    let mut sessions: Vec<Session> = parts.iter().map(|part| part.session(&request).unwrap()).collect();
    let mut asks = fan_out.start();
    let mut rounds = 0;
    let response = loop {
        rounds += 1;
        let replies: Vec<Reply> = sessions
            .iter_mut()
            .zip(&asks)
            .map(|(session, ask)| {
                let ask: Ask = serde_json::from_str(&serde_json::to_string(ask).unwrap()).unwrap();
                let reply = session.answer(&ask).unwrap();
                serde_json::from_str(&serde_json::to_string(&reply).unwrap()).unwrap()
            })
            .collect();
        match fan_out.next(replies).unwrap() {
            Step::Ask(next) => asks = next,
            Step::Done(response) => break *response,
        }
    };
    assert!(rounds <= fanout::MAX_ROUNDS);
    assert_eq!(comparable(response), comparable(one.search(&request).unwrap()));
}

#[test]
fn what_cannot_fan_out_is_refused() {
    let request = |r: SearchRequest| FanOut::new(r, 2).unwrap_err();
    let base = || SearchRequest::new("refund", Principal::public());
    for err in [
        request(base().facet(braid::Facet::values("category"))),
        request(base().collapse(true)),
        request(base().token_budget(100)),
    ] {
        assert!(matches!(err, Error::InvalidRequest { .. }), "{err:?}");
    }
    assert!(matches!(FanOut::new(base(), 0), Err(Error::InvalidRequest { .. })));
    // Replies that do not fit the asks end the fan-out with an error, never a partial answer.
    let mut fan_out = FanOut::new(base(), 2).unwrap();
    fan_out.start();
    assert!(fan_out.next(vec![Reply::Counted { answers: Vec::new() }; 2]).is_err());
    assert!(fan_out.next(Vec::new()).is_err());
}

/// An index's answers to a fan-out's questions are a function of the records the principal may
/// see: the same as from an index that never held the others (`frobnicator` is only in Globex's
/// records, `quuxly` only in Acme's).
#[test]
fn answers_to_questions_reveal_no_hidden_record() {
    let records = records("datasets/helpcenter");
    let visible: Vec<Record> =
        records.iter().filter(|r| !r.acl.iter().any(|t| t == "tenant:globex")).cloned().collect();
    let (with, without) = (index_of(&records).searcher(), index_of(&visible).searcher());
    let principal = Principal::from_verified_tokens(["public", "tenant:acme", "group:support"]);
    let questions = vec![
        braid::fanout::Question::Neighbours { word: "frobnicatr".into(), edits: 2 },
        braid::fanout::Question::Neighbours { word: "quuxli".into(), edits: 2 },
        braid::fanout::Question::Completions { prefix: "frob".into() },
        braid::fanout::Question::Completions { prefix: "qu".into() },
        braid::fanout::Question::NumDocs,
    ];
    let ask = Ask::Count { questions };
    let request = SearchRequest::new("frobnicatr", principal);
    let answers = |s: &Searcher| serde_json::to_value(s.session(&request).unwrap().answer(&ask).unwrap()).unwrap();
    let (a, b) = (answers(&with), answers(&without));
    assert_eq!(a, b);
    assert!(a.to_string().contains("quuxly") && !a.to_string().contains("frobnicator"), "{a}");
}

/// Runs `fan_out` with `sessions` to the end; `between(round, fan_out, asks, sessions)` runs
/// before each round's asks are answered.
fn drive(
    fan_out: &mut FanOut,
    sessions: &mut [Session],
    mut between: impl FnMut(usize, &FanOut, &mut Vec<Ask>, &mut [Session]),
) -> SearchResponse {
    let mut asks = fan_out.start();
    for round in 0..fanout::MAX_ROUNDS {
        between(round, fan_out, &mut asks, sessions);
        let replies = sessions.iter_mut().zip(&asks).map(|(s, ask)| s.answer(ask).unwrap()).collect();
        match fan_out.next(replies).unwrap() {
            Step::Ask(next) => asks = next,
            Step::Done(response) => return *response,
        }
    }
    panic!("the fan-out did not settle");
}

/// After its first ask, an index is sent only what is new: each search ask's table holds the
/// answers gathered since its last, on what it holds.
#[test]
fn search_asks_send_only_what_is_new() {
    let records = records("datasets/helpcenter");
    let one = index_of(&records);
    let parts = searchers(&split(&records, 3));
    let request = SearchRequest::new("two factr authentcation", Principal::public()).k(5);
    let mut fan_out = FanOut::new(request.clone(), parts.len()).unwrap();
    let mut sessions: Vec<Session> = parts.iter().map(|p| p.session(&request).unwrap()).collect();
    let (mut sent, mut searches) = (0, 0);
    let response = drive(&mut fan_out, &mut sessions, |_, _, asks, _| {
        if let Ask::Search { gathered, held } = &asks[0] {
            assert_eq!(*held, sent, "each search ask builds on what was sent before");
            sent += gathered.len() + usize::from(gathered.feedback.is_some());
            searches += 1;
            assert!(asks.iter().all(|a| a == &asks[0]), "every index was sent the same");
        }
    });
    assert!(searches >= 3 && sent > 0, "{searches} searches, {sent} answers");
    assert_eq!(comparable(response), comparable(one.search(&request).unwrap()));
}

/// An index that lost its session between rounds (its process restarted) cannot answer a
/// search ask that builds on what it held: it refuses, and answers the ask again in full
/// ([`FanOut::resend`]); the response is still one index's.
#[test]
fn a_lost_session_is_asked_again_in_full() {
    let records = records("datasets/helpcenter");
    let one = index_of(&records);
    let parts = searchers(&split(&records, 3));
    for query in ["two factr authentcation", "refu", "return policy"] {
        let request = SearchRequest::new(query, Principal::public()).k(5);
        let mut fan_out = FanOut::new(request.clone(), parts.len()).unwrap();
        let mut sessions: Vec<Session> = parts.iter().map(|p| p.session(&request).unwrap()).collect();
        let mut refused = 0;
        let response = drive(&mut fan_out, &mut sessions, |_, fan_out, asks, sessions| {
            sessions[1] = parts[1].session(&request).unwrap();
            if !sessions[1].holds(&asks[1]) {
                let err = sessions[1].answer(&asks[1]).unwrap_err();
                assert!(matches!(err, Error::InvalidRequest { .. }), "{err:?}");
                asks[1] = fan_out.resend(1).unwrap();
                assert!(sessions[1].holds(&asks[1]));
                refused += 1;
            }
        });
        assert!(refused > 0, "{query}");
        assert_eq!(comparable(response), comparable(one.search(&request).unwrap()), "{query}");
    }
    assert!(FanOut::new(SearchRequest::new("x", Principal::public()), 2).unwrap().resend(0).is_none());
}

/// A session reads the commit it was opened on: a commit between two rounds of a request
/// (its hits deleted, another record written) and a reload of the indexes serving it change
/// nothing in its answer, which is one index's before the commit.
#[test]
fn a_commit_and_reload_between_rounds_do_not_change_the_answer() {
    let records = records("datasets/helpcenter");
    let one = index_of(&records);
    let tmp = tempfile::tempdir().unwrap();
    let builder = || Index::builder().embedder(Arc::new(HashEmbedder::new(32)));
    let dirs: Vec<_> = (0..3).map(|i| tmp.path().join(i.to_string())).collect();
    for (dir, records) in dirs.iter().zip(split_records(&records, 3)) {
        let index = builder().create(dir).unwrap();
        let mut writer = index.writer().unwrap();
        for record in &records {
            writer.upsert(record).unwrap();
        }
        writer.commit().unwrap();
    }
    // The indexes that serve searches; others write.
    let serving: Vec<Index> = dirs.iter().map(|dir| builder().open(dir).unwrap()).collect();
    let request = SearchRequest::new("refund policy", Principal::public()).k(5);
    let expected = comparable(one.search(&request).unwrap());
    let mut fan_out = FanOut::new(request.clone(), serving.len()).unwrap();
    let mut sessions: Vec<Session> = serving.iter().map(|i| i.searcher().session(&request).unwrap()).collect();
    let response = drive(&mut fan_out, &mut sessions, |round, _, _, _| {
        if round != 1 {
            return;
        }
        for (dir, index) in dirs.iter().zip(&serving) {
            let writing = builder().open(dir).unwrap();
            let mut writer = writing.writer().unwrap();
            for hit in expected["hits"].as_array().unwrap() {
                writer.delete(hit["id"].as_str().unwrap()).unwrap();
            }
            let mut record = records[0].clone();
            record.id = format!("refund-policy-{}", dir.display()).replace('/', "-");
            record.title = "Refund policy refund policy".into();
            record.acl = vec!["public".into()];
            writer.upsert(&record).unwrap();
            writer.commit().unwrap();
            assert!(index.reload().unwrap(), "the serving index sees the commit");
        }
    });
    assert_eq!(first_difference(&comparable(response), &expected, String::new()), None);
    // A new request reads the new commit.
    let after = comparable(fanout::search(&searchers(&serving), &request).unwrap());
    assert_ne!(after["hits"], expected["hits"]);
}
