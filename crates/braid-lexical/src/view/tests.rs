//! The view's tests: scores, visible counts and feedback against references.

use braid_core::{AccessPolicy, Principal, Record, Visibility};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::Term;

use super::*;
use crate::feedback::Feedback;
use crate::index::{LexicalIndex, DEFAULT_WRITER_HEAP};
use crate::schema::SchemaConfig;
use crate::scorer::Statistics;
use crate::visible_counts::VisibleCounts;

/// A deterministic generator (SplitMix64) for records and queries.
struct Mix(u64);
impl Mix {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
    fn words(&mut self, vocabulary: &[&str], min: usize, max: usize) -> String {
        let n = min + self.below(max - min + 1);
        (0..n).map(|_| vocabulary[self.below(vocabulary.len())]).collect::<Vec<_>>().join(" ")
    }
}

const WORDS: [&str; 40] = [
    "refund",
    "order",
    "shipping",
    "return",
    "policy",
    "account",
    "password",
    "reset",
    "invoice",
    "billing",
    "cancel",
    "subscription",
    "delivery",
    "tracking",
    "parcel",
    "warranty",
    "repair",
    "battery",
    "screen",
    "charger",
    "login",
    "error",
    "payment",
    "card",
    "bank",
    "transfer",
    "address",
    "change",
    "email",
    "phone",
    "the",
    "a",
    "of",
    "and",
    "not",
    "451",
    "http",
    "kubernetes",
    "cluster",
    "node",
];

/// The scorer's term-at-a-time scores are tantivy's own BM25 under the same (visible)
/// statistics: over several segments, with deleted records, for a restricted principal
/// and at any depth.
#[test]
fn scorer_scores_like_tantivy_with_visible_statistics() {
    let index = LexicalIndex::create(None, SchemaConfig::default()).unwrap();
    let mut writer = index.writer(DEFAULT_WRITER_HEAP).unwrap();
    let mut mix = Mix(7);
    for i in 0..400u64 {
        let mut record = Record::new(format!("r{i}")).title(mix.words(&WORDS, 1, 5)).body(mix.words(&WORDS, 3, 60));
        if i % 3 == 0 {
            record = record.acl(["group:staff"]);
        }
        writer.upsert(i, &record, i).unwrap();
        if i == 150 || i == 300 {
            writer.commit().unwrap();
        }
    }
    writer.commit().unwrap();
    for i in (0..400).step_by(13) {
        writer.delete(&format!("r{i}")).unwrap();
    }
    writer.commit().unwrap();
    index.reload().unwrap();
    let snapshot = index.snapshot();
    assert!(snapshot.segments.readers().len() > 1, "the test needs several segments");

    for principal in [Principal::public(), Principal::from_verified_tokens(["group:staff"])] {
        let allowed = snapshot.allowed_set(Visibility::new(principal, AccessPolicy::Public, None)).unwrap();
        let view = snapshot.view(&allowed).unwrap();
        for q in 0..60 {
            let text = mix.words(&WORDS, 1, 7);
            for depth in [1, 10, 1000] {
                let fast = view.lexical(&text, depth, QuerySyntax::Plain).unwrap().candidates;
                let built =
                    lexical_query(&snapshot.fields, &snapshot.config, &snapshot.analyzer, &text, &Compiled::default());
                let Scoring::Weighted(query) = built.scoring else { panic!("a weighted query") };
                let clauses: Vec<(Occur, Box<dyn Query>)> = query
                    .groups
                    .iter()
                    .flat_map(|g| g.alternatives.iter())
                    .flat_map(|a| match a {
                        crate::weighted_query::Alternative::Terms(t) => t.clone(),
                        crate::weighted_query::Alternative::Grams { .. }
                        | crate::weighted_query::Alternative::All { .. } => Vec::new(),
                    })
                    .map(|t| {
                        let q: Box<dyn Query> = Box::new(TermQuery::new(t.term, IndexRecordOption::WithFreqs));
                        (Occur::Should, Box::new(BoostQuery::new(q, t.boost)) as Box<dyn Query>)
                    })
                    .collect();
                let reference: Vec<(braid_core::Ordinal, f32)> = if clauses.is_empty() {
                    Vec::new()
                } else {
                    let query = restrict(&view.docs, Box::new(BooleanQuery::new(clauses)));
                    let top = view.scope.search_scored(&*query, &TopDocs::with_limit(depth), &view).unwrap();
                    top.into_iter()
                        .map(|(s, a)| {
                            (snapshot.segments.ord_columns[a.segment_ord as usize].first(a.doc_id).unwrap(), s)
                        })
                        .collect()
                };
                assert_eq!(fast.len(), reference.len(), "query {q} {text:?} depth {depth}");
                for (a, b) in fast.iter().zip(&reference) {
                    assert!((a.1 - b.1).abs() <= 1e-4 * b.1.abs().max(1.0), "{text:?}: {fast:?} vs {reference:?}");
                    let tied = reference.iter().filter(|w| (w.1 - b.1).abs() <= 1e-4).count() > 1;
                    assert!(tied || a.0 == b.0, "{text:?}: {fast:?} vs {reference:?}");
                }
            }
        }
    }
}

/// A word's visible count is the same counted, kept with the allowed set, or counted again
/// after the kept counts start over; each allowed set keeps its own.
#[test]
fn visible_counts_are_kept_per_allowed_set_and_stay_exact() {
    let index = LexicalIndex::create(None, SchemaConfig::default()).unwrap();
    let mut writer = index.writer(DEFAULT_WRITER_HEAP).unwrap();
    let mut mix = Mix(11);
    let mut records = Vec::new();
    for i in 0..200u64 {
        let acl: Vec<String> = if i % 3 == 0 { vec!["group:staff".into()] } else { Vec::new() };
        let body = mix.words(&WORDS, 2, 12);
        writer.upsert(i, &Record::new(format!("r{i}")).body(body.clone()).acl(acl.clone()), i).unwrap();
        records.push((acl, body));
    }
    writer.commit().unwrap();
    index.reload().unwrap();
    let snapshot = index.snapshot();
    let principals = [Principal::public(), Principal::from_verified_tokens(["group:staff"])];
    let check = |round: &str| {
        for principal in &principals {
            let visibility = Visibility::new(principal.clone(), AccessPolicy::Public, None);
            let allowed = snapshot.allowed_set(visibility.clone()).unwrap();
            let view = snapshot.view(&allowed).unwrap();
            for word in WORDS {
                let expected = records
                    .iter()
                    .filter(|(acl, body)| visibility.admits_acl(acl) && body.split(' ').any(|w| w == word))
                    .count() as u64;
                assert_eq!(view.word_df(word), expected, "{round}: {word} for {principal:?}");
            }
        }
    };
    check("counted");
    check("kept");
    let allowed = snapshot.allowed_set(Visibility::new(Principal::public(), AccessPolicy::Public, None)).unwrap();
    let view = snapshot.view(&allowed).unwrap();
    for i in 0..=crate::visibility::MAX_CACHED_FREQS {
        view.docs.remember_freq(&Term::from_field_text(snapshot.fields.words, &format!("filler{i}")), 0);
    }
    check("counted again");
}

/// After a commit, a rule's visible counts on the new snapshot are those of an index that never
/// counted before (word counts and field lengths), and only the segments the commit added or
/// changed are counted again: an unchanged segment's parts carry over from the snapshot before.
#[test]
fn visible_counts_carry_over_unchanged_segments_and_stay_exact() {
    let build = |records: &[(u64, Vec<String>, String)]| {
        let index = LexicalIndex::create(None, SchemaConfig::default()).unwrap();
        let mut writer = index.writer(DEFAULT_WRITER_HEAP).unwrap();
        for (i, acl, body) in records {
            writer.upsert(*i, &Record::new(format!("r{i}")).body(body.clone()).acl(acl.clone()), *i).unwrap();
        }
        writer.commit().unwrap();
        index.reload().unwrap();
        index
    };
    let mut mix = Mix(23);
    let mut record = |i: u64| {
        let acl: Vec<String> = if i.is_multiple_of(3) { vec!["group:staff".into()] } else { Vec::new() };
        (i, acl, mix.words(&WORDS, 2, 12))
    };
    let mut records: Vec<(u64, Vec<String>, String)> = (0..200).map(&mut record).collect();
    let index = build(&records);
    let mut writer = index.writer(DEFAULT_WRITER_HEAP).unwrap();
    let public = Visibility::new(Principal::public(), AccessPolicy::Public, None);
    // Every word's count and the text's length on `index` as it is now, against an index that
    // holds the same records and never counted; and which segments `count_freq` counted.
    let check = |round: &str, records: &[(u64, Vec<String>, String)]| {
        let snapshot = index.snapshot();
        let allowed = snapshot.allowed_set(public.clone()).unwrap();
        let view = snapshot.view(&allowed).unwrap();
        assert!(!view.exact, "{round}: the public principal sees part of the records");
        let fresh = build(records);
        let fresh_snapshot = fresh.snapshot();
        let fresh_allowed = fresh_snapshot.allowed_set(public.clone()).unwrap();
        let reference = fresh_snapshot.view(&fresh_allowed).unwrap();
        let mut recounted = std::collections::HashSet::new();
        for word in WORDS {
            let term = Term::from_field_text(snapshot.fields.words, word);
            let n = view
                .docs
                .count_freq(view.scope.readers(), &term, |segment| {
                    recounted.insert(segment.segment_id());
                    view.count_in(segment, &term)
                })
                .unwrap();
            assert_eq!(n, reference.word_df(word), "{round}: {word}");
            assert_eq!(view.word_df(word), n, "{round}: {word}, kept");
        }
        let text = snapshot.fields.text;
        assert_eq!(
            Statistics::total_length(&view, text).unwrap(),
            Statistics::total_length(&reference, text).unwrap(),
            "{round}: text length"
        );
        let segments: Vec<_> = view.scope.readers().map(|s| s.segment_id()).collect();
        (segments, recounted)
    };
    let (first, counted) = check("first", &records);
    assert_eq!(counted, first.iter().copied().collect(), "every segment counted the first time");
    let (_, again) = check("again", &records);
    assert!(again.is_empty(), "nothing counted again on the same snapshot: {again:?}");
    // Records added: a new segment, counted alone.
    for i in 200..260 {
        let (i, acl, body) = record(i);
        writer.upsert(i, &Record::new(format!("r{i}")).body(body.clone()).acl(acl.clone()), i).unwrap();
        records.push((i, acl, body));
    }
    writer.commit().unwrap();
    index.reload().unwrap();
    let (after_add, counted) = check("records added", &records);
    let new: std::collections::HashSet<_> = after_add.iter().filter(|s| !first.contains(s)).copied().collect();
    assert!(!new.is_empty() && after_add.iter().any(|s| first.contains(s)), "{first:?} then {after_add:?}");
    assert_eq!(counted, new, "only the added segment is counted");
    // Records deleted from the first segment: it changed, so it is counted again.
    for i in (0..200).step_by(7) {
        writer.delete(&format!("r{i}")).unwrap();
    }
    records.retain(|(i, ..)| *i >= 200 || !i.is_multiple_of(7));
    writer.commit().unwrap();
    index.reload().unwrap();
    let (after_delete, counted) = check("records deleted", &records);
    let changed: Vec<_> = after_delete.iter().filter(|s| first.contains(s)).collect();
    assert!(changed.iter().all(|s| counted.contains(s)), "the segment with deletions is counted again");
}

/// Feedback reads the analysed heads written with each record; an index written before
/// heads existed opens, analyses its records' text instead, and ranks exactly the same.
#[test]
fn feedback_ranks_the_same_from_stored_heads_and_from_text() {
    let config = SchemaConfig::default();
    let dir = tempfile::tempdir().unwrap();
    tantivy::Index::create_in_dir(dir.path(), crate::schema::schema_with(&config, false).0).unwrap();
    let old = LexicalIndex::open(dir.path(), config.clone()).unwrap();
    let new = LexicalIndex::create(None, config).unwrap();
    assert!(!old.stores_feedback_heads() && new.stores_feedback_heads());
    let mut mix = Mix(5);
    let records: Vec<Record> = (0..300u64)
        .map(|i| {
            let mut record =
                Record::new(format!("r{i}")).title(mix.words(&WORDS, 1, 4)).body(mix.words(&WORDS, 5, 200));
            if i % 4 == 0 {
                record = record.parent(format!("doc{}", i / 8));
            }
            if i % 3 == 0 {
                record = record.acl(["group:staff"]);
            }
            record
        })
        .collect();
    for index in [&old, &new] {
        let mut writer = index.writer(DEFAULT_WRITER_HEAP).unwrap();
        for (i, record) in records.iter().enumerate() {
            writer.upsert(i as u64, record, i as u64).unwrap();
        }
        writer.commit().unwrap();
        index.reload().unwrap();
    }
    let (old, new) = (old.snapshot(), new.snapshot());
    assert!(old.fields.head.is_none() && new.fields.head.is_some());
    let words = Feedback::DEFAULT.words;
    let ords: Vec<Ordinal> = (0..300).collect();
    let (from_text, stored) = (old.feedback_reads(&ords, words).unwrap(), new.feedback_reads(&ords, words).unwrap());
    for (a, b) in from_text.iter().zip(&stored) {
        assert!(matches!(a.head, crate::stored::Head::Text(_)) && matches!(b.head, crate::stored::Head::Terms(_)));
        assert_eq!(old.head_terms(a, words), new.head_terms(b, words), "{}", a.document);
        assert!(old.head_terms(a, words).len() < 96, "the head is cut");
    }
    let mut expanded = 0;
    for principal in [Principal::public(), Principal::from_verified_tokens(["group:staff"])] {
        let visibility = Visibility::new(principal, AccessPolicy::Public, None);
        let (old_allowed, new_allowed) =
            (old.allowed_set(visibility.clone()).unwrap(), new.allowed_set(visibility).unwrap());
        let (old_view, new_view) = (old.view(&old_allowed).unwrap(), new.view(&new_allowed).unwrap());
        for _ in 0..40 {
            let text = mix.words(&WORDS, 1, 4);
            let ranked = |v: &View| v.lexical_with_feedback(&text, 20, QuerySyntax::Plain, Feedback::DEFAULT).unwrap();
            let (a, b) = (ranked(&old_view).candidates, ranked(&new_view).candidates);
            let bits = |c: &[(Ordinal, f32)]| c.iter().map(|(o, s)| (*o, s.to_bits())).collect::<Vec<_>>();
            assert_eq!(bits(&a), bits(&b), "{text:?}");
            expanded += usize::from(a != new_view.lexical(&text, 20, QuerySyntax::Plain).unwrap().candidates);
        }
    }
    assert!(expanded > 10, "feedback changed only {expanded} rankings");
}

/// Feedback's first search ranks only the records the model may read; when they agree on
/// nothing (here: every match is a section of one document), the leg still ranks as deep
/// as it was asked to, as the query alone ranks.
#[test]
fn feedback_with_nothing_to_add_ranks_the_whole_depth() {
    let index = LexicalIndex::create(None, SchemaConfig::default()).unwrap();
    let mut writer = index.writer(DEFAULT_WRITER_HEAP).unwrap();
    let mut mix = Mix(9);
    for i in 0..60u64 {
        let mut record = Record::new(format!("r{i}")).body(mix.words(&WORDS, 3, 30));
        if i < 30 {
            record = record.parent("one-article").body(format!("zebra {}", mix.words(&WORDS, 3, 30)));
        }
        writer.upsert(i, &record, i).unwrap();
    }
    writer.commit().unwrap();
    index.reload().unwrap();
    let snapshot = index.snapshot();
    let allowed = snapshot.allowed_set(Visibility::new(Principal::public(), AccessPolicy::Public, None)).unwrap();
    let view = snapshot.view(&allowed).unwrap();
    let fed = view.lexical_with_feedback("zebra", 50, QuerySyntax::Plain, Feedback::DEFAULT).unwrap().candidates;
    assert_eq!(fed.len(), 30);
    assert_eq!(fed, view.lexical("zebra", 50, QuerySyntax::Plain).unwrap().candidates);
}

/// An index of three commits of `per_commit` records of `WORDS` drawn by `mix` (title and
/// body), reloaded: one record in ten in `group:few` (a caller who sees too few for every
/// posting to be scored), one in three of the others in `group:staff`, the rest in
/// `group:all`; the last commit also deletes every `delete_every`-th record when given.
fn grouped_index(mix: &mut Mix, per_commit: u64, delete_every: Option<usize>) -> LexicalIndex {
    let index = LexicalIndex::create(None, SchemaConfig::default()).unwrap();
    for batch in 0..3u64 {
        let mut writer = index.writer(DEFAULT_WRITER_HEAP).unwrap();
        for i in batch * per_commit..(batch + 1) * per_commit {
            let group = if i % 10 == 1 {
                "group:few"
            } else if i % 3 == 0 {
                "group:staff"
            } else {
                "group:all"
            };
            let record =
                Record::new(format!("r{i}")).title(mix.words(&WORDS, 1, 4)).body(mix.words(&WORDS, 5, 60)).acl([group]);
            writer.upsert(i, &record, i).unwrap();
        }
        if let Some(every) = delete_every.filter(|_| batch == 2) {
            for i in (0..3 * per_commit).step_by(every) {
                writer.delete(&format!("r{i}")).unwrap();
            }
        }
        writer.commit().unwrap();
    }
    index.reload().unwrap();
    index
}

/// The second search with feedback starts from the first search's scores, scaled, and adds
/// the expansion terms: it ranks as the query and its expansion scored as one query would,
/// over several segments, for restricted principals (one who sees too few records for every
/// posting to be scored), with a simple-syntax constraint too.
#[test]
fn feedback_from_the_first_scores_ranks_as_the_whole_expanded_query() {
    let mut mix = Mix(11);
    let index = grouped_index(&mut mix, 100, None);
    let snapshot = index.snapshot();
    let feedback = Feedback::DEFAULT;
    let mut expanded = 0;
    let principals = [["group:all"].as_slice(), &["group:all", "group:staff"], &["group:few"]];
    for tokens in principals {
        let principal = Principal::from_verified_tokens(tokens.iter().copied());
        let allowed = snapshot.allowed_set(Visibility::new(principal, AccessPolicy::Public, None)).unwrap();
        let view = snapshot.view(&allowed).unwrap();
        for q in 0..40 {
            let mut text = mix.words(&WORDS, 1, 4);
            let syntax = if q % 4 == 0 { QuerySyntax::Simple } else { QuerySyntax::Plain };
            if syntax == QuerySyntax::Simple {
                text.push_str(" -battery");
            }
            let fed = view.lexical_with_feedback(&text, 20, syntax, feedback).unwrap().candidates;
            // The reference: the first search, its model, and the query with the expansion
            // scored from zero as one weighted query.
            let first = view.lexical(&text, crate::view::feedback_depth(20, feedback), syntax).unwrap().candidates;
            let model = view.without_common(view.model_of_top(&first, feedback).unwrap(), feedback).unwrap();
            let Scoring::Weighted(query) = view.lexical_built(&text, syntax).scoring else { panic!("weighted") };
            if model.is_empty() {
                continue;
            }
            expanded += 1;
            let s = view.snapshot;
            let expansion = crate::feedback::expansion(&query, &model, feedback.keep, |t, w| {
                crate::query_builder::scored_term(&s.fields, &s.config, t, w)
            });
            let whole = view.top_of(crate::feedback::expanded(query, expansion), 40, None, None).unwrap();
            assert!(fed.len() >= whole.len().min(20), "{text:?}");
            for (at, (ord, score)) in fed.iter().enumerate() {
                let close = |a: f32, b: f32| (a - b).abs() <= 1e-5 * a.abs().max(1.0);
                let theirs = whole.iter().find(|(o, _)| o == ord).map(|(_, s)| *s);
                assert!(theirs.is_some_and(|t| close(t, *score)), "{text:?}: {ord} {score} vs {theirs:?}");
                // The same order, but for ties the rounding of the scaling may break otherwise.
                assert!(whole[at].0 == *ord || close(whole[at].1, *score), "{text:?} at {at}");
            }
        }
    }
    assert!(expanded > 30, "only {expanded} queries were expanded");
}

/// The lexical and fuzzy legs rank the same — the same records, order and floats — when
/// the groups their queries begin with alike are scored once for both
/// ([`View::share_word_prefix`]), whichever leg runs first: over several segments with
/// deleted records, for callers who see everything, most records and few, with and without
/// per-request field weights, for queries with a misspelt word and with the last word still
/// being typed; and the prefix is shared for most queries.
#[test]
fn the_word_legs_rank_the_same_from_a_shared_prefix() {
    let mut mix = Mix(31);
    let index = grouped_index(&mut mix, 200, Some(9));
    let snapshot = index.snapshot();
    let (mut compared, mut shared) = (0, 0);
    let principals = [["group:all", "group:staff", "group:few"].as_slice(), &["group:all"], &["group:few"]];
    for tokens in principals {
        let principal = Principal::from_verified_tokens(tokens.iter().copied());
        let allowed = snapshot.allowed_set(Visibility::new(principal, AccessPolicy::Public, None)).unwrap();
        for q in 0..45 {
            let mut text = mix.words(&WORDS, 1, 5);
            match q % 3 {
                // A misspelt word: its last letter doubled.
                1 => {
                    let last = text.pop().unwrap();
                    text.push(last);
                    text.push(last);
                    text.push_str(" order");
                }
                // Done typing: no completions of the last word.
                2 => text.push(' '),
                _ => {}
            }
            let weighted = q % 5 == 0;
            let view = || {
                let mut view = snapshot.view(&allowed).unwrap();
                if weighted {
                    view.set_field_weights(Some(0.3), 0.8);
                }
                view
            };
            let legs = |view: &View, fuzzy_first: bool| {
                let lexical = || view.lexical_with_feedback(&text, 30, QuerySyntax::Plain, Feedback::DEFAULT).unwrap();
                let fuzzy = || view.fuzzy_with(&text, 30, QuerySyntax::Plain).unwrap();
                let (l, f) = if fuzzy_first {
                    let f = fuzzy();
                    (lexical(), f)
                } else {
                    (lexical(), fuzzy())
                };
                let bits =
                    |hits: Vec<(Ordinal, Score)>| hits.into_iter().map(|(o, s)| (o, s.to_bits())).collect::<Vec<_>>();
                (bits(l.candidates), bits(f.candidates))
            };
            let alone = legs(&view(), false);
            for fuzzy_first in [false, true] {
                let sharing = view();
                // Below the postings a large index shares from: whatever the prefix holds.
                sharing.share_word_prefix_from(&text, &text, QuerySyntax::Plain, 0);
                shared += usize::from(sharing.prefix.get().is_some());
                assert_eq!(legs(&sharing, fuzzy_first), alone, "{tokens:?} {text:?}, fuzzy first: {fuzzy_first}");
                compared += 1;
            }
        }
    }
    assert!(shared * 4 >= compared * 3, "the prefix was shared in {shared} of {compared} runs");
    // At the default, a prefix of a few hundred postings is not worth its copies.
    let everyone = Principal::from_verified_tokens(["group:all", "group:staff", "group:few"]);
    let allowed = snapshot.allowed_set(Visibility::new(everyone, AccessPolicy::Public, None)).unwrap();
    let (view, text) = (snapshot.view(&allowed).unwrap(), "refund order policy");
    view.share_word_prefix_from(text, text, QuerySyntax::Plain, 0);
    assert!(view.prefix.get().is_some());
    let view = snapshot.view(&allowed).unwrap();
    view.share_word_prefix(text, text, QuerySyntax::Plain);
    assert!(view.prefix.get().is_none());
}

/// An expansion term more than `Feedback::common` of the allowed records hold is left out;
/// the share is counted over the caller's allowed records, so a term common among records a
/// caller cannot see stays in that caller's expansion.
#[test]
fn feedback_leaves_out_terms_most_allowed_records_hold() {
    let index = LexicalIndex::create(None, SchemaConfig::default()).unwrap();
    let mut writer = index.writer(DEFAULT_WRITER_HEAP).unwrap();
    let mut records =
        vec![Record::new("stripes-only").body("stripes savanna"), Record::new("order-only").body("order parcel")];
    records.extend((0..4).map(|i| Record::new(format!("zebra{i}")).body("zebra stripes order")));
    records.extend((0..10).map(|i| Record::new(format!("public{i}")).body("parcel tracking")));
    records
        .extend((0..40).map(|i| Record::new(format!("staff{i}")).body("order invoice billing").acl(["group:staff"])));
    for (i, record) in records.iter().enumerate() {
        writer.upsert(i as u64, record, i as u64).unwrap();
    }
    writer.commit().unwrap();
    index.reload().unwrap();
    let snapshot = index.snapshot();
    let ids = |principal: Principal, common: f32| {
        let allowed = snapshot.allowed_set(Visibility::new(principal, AccessPolicy::Public, None)).unwrap();
        let view = snapshot.view(&allowed).unwrap();
        let feedback = Feedback { common, common_floor: 0, ..Feedback::DEFAULT };
        let found = view.lexical_with_feedback("zebra", 50, QuerySyntax::Plain, feedback).unwrap().candidates;
        let mut ids: Vec<&str> = found.iter().map(|(ord, _)| records[*ord as usize].id.as_str()).collect();
        ids.sort_unstable();
        ids
    };
    let staff = || Principal::from_verified_tokens(["group:staff"]);
    // Everything: `order` is in 45 of 56 records, `stripes` in 5.
    let all = ids(staff(), 1.0);
    assert!(all.contains(&"order-only") && all.contains(&"staff0") && all.contains(&"stripes-only"), "{all:?}");
    // A small index keeps every term (the default's floor of holders).
    let allowed = snapshot.allowed_set(Visibility::new(staff(), AccessPolicy::Public, None)).unwrap();
    let view = snapshot.view(&allowed).unwrap();
    let fed = view.lexical_with_feedback("zebra", 50, QuerySyntax::Plain, Feedback::DEFAULT).unwrap().candidates;
    assert_eq!(fed.len(), all.len());
    assert_eq!(ids(staff(), 0.5), ["stripes-only", "zebra0", "zebra1", "zebra2", "zebra3"]);
    // The public sees 16 records, 5 of them with `order`: it stays.
    assert_eq!(ids(Principal::public(), 0.5), ["order-only", "stripes-only", "zebra0", "zebra1", "zebra2", "zebra3"]);
    // Non-interference: the public's ranking, scores included, is the one of an index that
    // never held the staff's records.
    let public_only = public_index(&records);
    let feedback = Feedback { common: 0.5, common_floor: 0, ..Feedback::DEFAULT };
    assert_eq!(public_ranking(&snapshot, feedback), public_ranking(&public_only.snapshot(), feedback));
}

/// An index of `records`' public ones only (no ACL), each at its position's ordinal.
fn public_index(records: &[Record]) -> LexicalIndex {
    let index = LexicalIndex::create(None, SchemaConfig::default()).unwrap();
    let mut writer = index.writer(DEFAULT_WRITER_HEAP).unwrap();
    for (i, record) in records.iter().enumerate().filter(|(_, r)| r.acl.is_empty()) {
        writer.upsert(i as u64, record, i as u64).unwrap();
    }
    writer.commit().unwrap();
    index.reload().unwrap();
    index
}

/// The public's lexical leg with `feedback` for `zebra`, scores to the bit.
fn public_ranking(snapshot: &crate::snapshot::Snapshot, feedback: Feedback) -> Vec<(Ordinal, u32)> {
    let allowed = snapshot.allowed_set(Visibility::new(Principal::public(), AccessPolicy::Public, None)).unwrap();
    let view = snapshot.view(&allowed).unwrap();
    let found = view.lexical_with_feedback("zebra", 50, QuerySyntax::Plain, feedback).unwrap().candidates;
    found.into_iter().map(|(ord, score)| (ord, score.to_bits())).collect()
}

/// The default guard leaves a term out only past its floor of holders: a caller who sees 2,000
/// records keeps a term 900 of them hold (45 %), and one who sees 5,100 loses it at 1,200 (24 %).
#[test]
fn the_default_guard_applies_past_its_floor_of_holders() {
    let index = LexicalIndex::create(None, SchemaConfig::default()).unwrap();
    let mut writer = index.writer(DEFAULT_WRITER_HEAP).unwrap();
    let staff = |r: Record| r.acl(["group:staff"]);
    let mut records = vec![Record::new("stripes-only").body("stripes savanna")];
    records.extend((0..4).map(|i| Record::new(format!("zebra{i}")).body("zebra stripes order")));
    records.extend((0..896).map(|i| Record::new(format!("order{i}")).body("order parcel")));
    records.extend((0..1_099).map(|i| Record::new(format!("public{i}")).body("tracking parcel")));
    records.extend((0..300).map(|i| staff(Record::new(format!("staff-order{i}")).body("order parcel"))));
    records.extend((0..2_800).map(|i| staff(Record::new(format!("staff{i}")).body("tracking parcel"))));
    for (i, record) in records.iter().enumerate() {
        writer.upsert(i as u64, record, i as u64).unwrap();
    }
    writer.commit().unwrap();
    index.reload().unwrap();
    let snapshot = index.snapshot();
    let found = |principal: Principal| {
        let allowed = snapshot.allowed_set(Visibility::new(principal, AccessPolicy::Public, None)).unwrap();
        let view = snapshot.view(&allowed).unwrap();
        let found = view.lexical_with_feedback("zebra", 50, QuerySyntax::Plain, Feedback::DEFAULT).unwrap();
        let mut ids: Vec<&str> = found.candidates.iter().map(|(ord, _)| records[*ord as usize].id.as_str()).collect();
        ids.sort_unstable();
        (allowed.len(), ids)
    };
    let (seen, public) = found(Principal::public());
    assert_eq!(seen, 2_000);
    assert!(public.iter().any(|id| id.starts_with("order")), "{public:?}");
    let (seen, staff) = found(Principal::from_verified_tokens(["group:staff"]));
    assert_eq!(seen, 5_100);
    assert_eq!(staff, ["stripes-only", "zebra0", "zebra1", "zebra2", "zebra3"]);
    // Non-interference at the default: the public's ranking, scores included, is the one of an
    // index that never held the staff's 3,100 records (whose `order` would pass the guard).
    let public_only = public_index(&records);
    assert_eq!(
        public_ranking(&snapshot, Feedback::DEFAULT),
        public_ranking(&public_only.snapshot(), Feedback::DEFAULT)
    );
}

/// A principal's allowed set is the oracle's whether it holds a few tokens (asked as term
/// clauses) or more than the clauses' limit (asked as one term set), before and after a commit
/// extends it to a new segment.
#[test]
fn allowed_sets_are_exact_for_few_tokens_and_for_many() {
    let index = LexicalIndex::create(None, SchemaConfig::default()).unwrap();
    let acl_of = |i: u64| vec![format!("group:g{}", i % 400), format!("group:g{}", (i * 7) % 400)];
    let mut writer = index.writer(DEFAULT_WRITER_HEAP).unwrap();
    for i in 0..600u64 {
        writer.upsert(i, &Record::new(format!("r{i}")).body("words").acl(acl_of(i)), i).unwrap();
    }
    writer.commit().unwrap();
    index.reload().unwrap();
    let principals = [
        Principal::from_verified_tokens(Vec::<String>::new()),
        Principal::from_verified_tokens(["group:g3", "group:g77", "group:g201"]),
        Principal::from_verified_tokens((0..300).map(|g| format!("group:g{g}"))),
    ];
    let check = |records: u64, round: &str| {
        let snapshot = index.snapshot();
        for principal in &principals {
            let visibility = Visibility::new(principal.clone(), AccessPolicy::Public, None);
            let allowed = snapshot.allowed_set(visibility.clone()).unwrap();
            let expected: Vec<u64> = (0..records).filter(|&i| visibility.admits_acl(&acl_of(i))).collect();
            assert_eq!(allowed.len(), expected.len(), "{round}: {principal:?}");
            assert!(expected.iter().all(|&i| allowed.contains(i)), "{round}: {principal:?}");
        }
    };
    check(600, "first");
    for i in 600..650u64 {
        writer.upsert(i, &Record::new(format!("r{i}")).body("words").acl(acl_of(i)), i).unwrap();
    }
    writer.commit().unwrap();
    index.reload().unwrap();
    check(650, "extended");
}
