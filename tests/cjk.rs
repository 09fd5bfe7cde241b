//! Chinese and mixed-language text: segmentation, mixed Chinese–English text, Japanese and
//! Korean bigrams, pinyin and homophone recall, permissions on pinyin suggestions, the
//! semantic leg's language honesty, and quality on the Chinese help center.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use braid::models::OnnxEmbedder;
use braid::{Error, Index, IndexConfig, Language, Leg, Mode, Principal, Record, SearchRequest};
use braid_eval::{evaluate, Dataset};

use crate::common::{ids, index_of, repo};

fn corpus() -> Vec<Record> {
    vec![
        Record::new("sync-failed")
            .title("文件同步失败怎么办")
            .body("桌面客户端显示红色感叹号时，先查看错误代码，再检查网络，最后重建索引。")
            .acl(["public"]),
        Record::new("obsidian")
            .title("Obsidian Syncing 笔记库")
            .body("把整个 vault 文件夹放进同步目录即可，建议排除 workspace.json。")
            .acl(["public"]),
        Record::new("selective")
            .title("选择性同步")
            .body("电脑硬盘空间不够时，只把需要的文件夹下载到本地。")
            .acl(["public"]),
        Record::new("refunds")
            .title("退款政策")
            .body("年付套餐在首次付款后三十天内可以申请全额退款，退款原路退回。")
            .acl(["public"]),
        Record::new("password")
            .title("忘记密码")
            .body("在登录页点击忘记密码，输入注册邮箱，我们会发送重置链接。")
            .acl(["public"]),
        Record::new("secret").title("绝密预案").body("客服内部的应急预案，不对外公开。").acl(["group:support"]),
        Record::new("ja").title("同期に失敗しました").body("ネットワークを確認してください。").acl(["public"]),
        Record::new("ko").title("동기화 실패").body("네트워크 연결을 확인하세요.").acl(["public"]),
        Record::new("en").title("Return policy").body("Send an item back within 30 days.").acl(["public"]),
    ]
}

fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        let index = Index::create_in_ram(IndexConfig::default()).unwrap();
        let mut w = index.writer().unwrap();
        for r in corpus() {
            w.upsert(&r).unwrap();
        }
        w.commit().unwrap();
        index
    })
}

fn top(query: &str, mode: Mode) -> Vec<String> {
    let r = index().search(&SearchRequest::new(query, Principal::public()).mode(mode).k(3)).unwrap();
    ids(&r).into_iter().map(String::from).collect()
}

#[test]
fn chinese_words_are_segmented() {
    // Words inside longer runs of Han characters, with no spaces anywhere.
    assert_eq!(top("同步失败", Mode::Lexical)[0], "sync-failed");
    assert_eq!(top("怎么申请退款", Mode::Lexical)[0], "refunds");
    assert_eq!(top("硬盘空间", Mode::Lexical)[0], "selective");
    // A single character does not match every word that contains it.
    assert!(top("码", Mode::Lexical).is_empty(), "{:?}", top("码", Mode::Lexical));
}

#[test]
fn mixed_text_keeps_english_stemming() {
    // "Syncing" in a Chinese title is stemmed like English text: "synced" finds it.
    assert_eq!(top("synced", Mode::Lexical)[0], "obsidian");
    assert_eq!(top("Obsidian 笔记库", Mode::Lexical)[0], "obsidian");
    // English records are unaffected.
    assert_eq!(top("returning policies", Mode::Lexical)[0], "en");
}

#[test]
fn japanese_and_korean_are_bigrams() {
    assert_eq!(top("失敗", Mode::Lexical)[0], "ja");
    assert_eq!(top("ネットワーク", Mode::Lexical)[0], "ja");
    assert_eq!(top("동기화", Mode::Lexical)[0], "ko");
}

#[test]
fn a_records_lang_decides_how_its_han_is_cut() {
    let index = Index::create_in_ram(IndexConfig::default()).unwrap();
    let mut w = index.writer().unwrap();
    // Kanji only, no kana: by script it would read as Chinese; `lang: ja` makes it bigrams.
    w.upsert(&Record::new("tocho").title("東京都庁").body("都庁舎案内").keyword("lang", "ja")).unwrap();
    w.commit().unwrap();
    let r = index.search(&SearchRequest::new("東京", Principal::public()).mode(Mode::Lexical)).unwrap();
    assert_eq!(ids(&r), ["tocho"]);
    // The title reads back as written.
    assert_eq!(r.hits[0].title, "東京都庁");
    assert_eq!(index.record("tocho", &Principal::public()).unwrap().unwrap().title, "東京都庁");
}

#[test]
fn pinyin_joined_spaced_toned_and_initials() {
    for q in ["tongbu shibai", "tong bu shi bai", "tóng bù shī bài", "tong2 bu4 shi1 bai4"] {
        assert_eq!(top(q, Mode::Fuzzy).first().map(String::as_str), Some("sync-failed"), "{q}");
    }
    assert_eq!(top("tuikuan", Mode::Fuzzy)[0], "refunds");
    assert_eq!(top("wangji mima", Mode::Hybrid)[0], "password");
    // Initials that name one word of the vocabulary (选择性 → xzx).
    assert_eq!(top("xzx", Mode::Fuzzy)[0], "selective");
    // Pinyin beside an English product name.
    assert_eq!(top("Obsidian biji", Mode::Hybrid)[0], "obsidian");
    // Lexical search does not pretend to read pinyin.
    assert!(top("tuikuan", Mode::Lexical).is_empty());
}

#[test]
fn homophone_typos_reach_the_intended_word() {
    assert_eq!(top("同部失败", Mode::Fuzzy)[0], "sync-failed");
    assert_eq!(top("忘记密马", Mode::Hybrid)[0], "password");
    let r = index().search(&SearchRequest::new("申请退宽", Principal::public())).unwrap();
    assert_eq!(ids(&r)[0], "refunds");
    let s: Vec<(&str, &str)> = r.suggestions.iter().map(|s| (s.term.as_str(), s.suggestion.as_str())).collect();
    assert_eq!(s, [("退宽", "退款")]);
}

#[test]
fn hybrids_lexical_leg_reads_a_homophone_corrected_inside_its_run() {
    // `同部` is corrected to `同步` inside the run `同部失败`: the lexical leg matches the words
    // the query means, not a record that happens to hold `失败` alone.
    let index = Index::create_in_ram(IndexConfig::default()).unwrap();
    let mut w = index.writer().unwrap();
    w.upsert(&Record::new("upload").title("上传失败").body("上传失败时请检查文件大小，上传失败会自动重试。")).unwrap();
    w.upsert(&Record::new("sync").title("同步失败怎么办").body("先检查网络连接。")).unwrap();
    w.commit().unwrap();
    let r = index.search(&SearchRequest::new("同部失败", Principal::public())).unwrap();
    assert_eq!(ids(&r)[0], "sync");
    let lexical = r.hits[0].explain.legs.iter().find(|l| l.leg == Leg::Lexical).map(|l| l.rank);
    assert_eq!(lexical, Some(1), "{:?}", r.hits[0].explain);
}

#[test]
fn a_chinese_title_outweighs_a_body_that_repeats_the_word() {
    // Chinese terms weigh a title match by the CJK title boost (0.5), English ones by the
    // fitted 0.1: the record titled with the query's word comes first in Chinese.
    let index = Index::create_in_ram(IndexConfig::default()).unwrap();
    assert_eq!(index.config().schema.cjk_title_boost, Some(0.5));
    let mut w = index.writer().unwrap();
    w.upsert(&Record::new("body").title("常见问题").body("发票 发票 抬头 发票 开具 说明 文字 内容 更多 更多 更多"))
        .unwrap();
    w.upsert(&Record::new("title").title("发票").body("开具 说明 文字 内容 更多 更多 更多 更多 更多 更多 更多"))
        .unwrap();
    w.commit().unwrap();
    let top = |q: &str, title: Option<f32>| {
        let mut request = SearchRequest::new(q, Principal::public()).mode(Mode::Lexical);
        request.boosts.title = title;
        ids(&index.search(&request).unwrap()).first().map(|s| s.to_string())
    };
    assert_eq!(top("发票", None).as_deref(), Some("title"));
    // At English's 0.1 the body's three matches win: the weight is what decides.
    assert_eq!(top("发票", Some(0.1)).as_deref(), Some("body"));
}

#[test]
fn pinyin_suggestions_and_hits_come_from_visible_records_only() {
    let support = Principal::from_verified_tokens(["group:support"]);
    for q in ["juemi yuan", "juemi", "绝秘预案", "jmya"] {
        for mode in [Mode::Lexical, Mode::Fuzzy, Mode::Hybrid] {
            let r = index().search(&SearchRequest::new(q, Principal::public()).mode(mode)).unwrap();
            assert!(!ids(&r).contains(&"secret"), "{q} {mode:?}: {:?}", ids(&r));
            for s in &r.suggestions {
                assert!(!"绝密预案".contains(s.suggestion.as_str()), "{q}: leaked suggestion {s:?}");
            }
        }
    }
    // The support group sees the record and the suggestion.
    let r = index().search(&SearchRequest::new("juemi", support.clone()).mode(Mode::Hybrid)).unwrap();
    assert_eq!(ids(&r).first(), Some(&"secret"));
    assert!(r.suggestions.iter().any(|s| s.suggestion == "绝密"), "{:?}", r.suggestions);
}

fn model(languages: Option<&[Language]>) -> Arc<OnnxEmbedder> {
    let mut b = OnnxEmbedder::builder();
    b.intra_threads(1);
    if let Some(l) = languages {
        b.languages(l);
    }
    Arc::new(b.build().expect("model"))
}

fn semantic_index(embedder: Arc<OnnxEmbedder>) -> Index {
    let index = Index::builder().embedder(embedder).create_in_ram().unwrap();
    let mut w = index.writer().unwrap();
    for r in corpus().into_iter().filter(|r| ["sync-failed", "refunds", "en"].contains(&r.id())) {
        w.upsert(&r).unwrap();
    }
    w.commit().unwrap();
    index
}

#[test]
fn english_model_is_not_used_for_chinese() {
    let index = semantic_index(model(None));
    // A Chinese query runs the lexical legs only, and says so.
    let r = index.search(&SearchRequest::new("同步失败", Principal::public()).mode(Mode::Hybrid)).unwrap();
    assert_eq!(r.stats.legs, [Leg::Lexical, Leg::Fuzzy]);
    assert_eq!(r.stats.language, Some(Language::Zh));
    assert_eq!(ids(&r)[0], "sync-failed");
    let err = index.search(&SearchRequest::new("同步失败", Principal::public()).mode(Mode::Semantic)).unwrap_err();
    assert!(matches!(err, Error::LegUnavailable { leg: "semantic", .. }), "{err}");
    // An English query runs all three legs, and Chinese records have no vector to be found by.
    let r = index.search(&SearchRequest::new("return an item", Principal::public()).mode(Mode::Semantic)).unwrap();
    assert_eq!(r.stats.legs, [Leg::Semantic]);
    assert_eq!(ids(&r), ["en"]);
    // Pinyin is Latin text, but "did you mean" reads it as the Chinese word it names: the
    // English model cannot read that correction, so hybrid runs the word legs on it, and
    // semantic mode embeds the query as typed.
    let r = index.search(&SearchRequest::new("tuikuan", Principal::public())).unwrap();
    assert_eq!(r.stats.language, Some(Language::Other));
    assert_eq!(r.suggestions.first().map(|s| s.suggestion.as_str()), Some("退款"));
    assert_eq!(r.stats.legs, [Leg::Lexical, Leg::Fuzzy]);
    assert_eq!(ids(&r)[0], "refunds");
    let r = index.search(&SearchRequest::new("tuikuan", Principal::public()).mode(Mode::Semantic)).unwrap();
    assert_eq!(r.stats.legs, [Leg::Semantic]);
    assert_eq!(r.stats.embedded, None);
    // Re-indexing an unchanged Chinese record is a no-op, although it has no vector.
    let mut w = index.writer().unwrap();
    w.upsert(&corpus().remove(0)).unwrap();
    assert_eq!(w.pending(), 0);
}

#[test]
fn a_model_covering_chinese_is_used_for_it() {
    // The same network declared multilingual: Chinese records are embedded and Chinese queries
    // run the semantic leg, with no other change.
    let index = semantic_index(model(Some(&[Language::En, Language::Zh])));
    let r = index.search(&SearchRequest::new("同步失败", Principal::public()).mode(Mode::Hybrid)).unwrap();
    assert_eq!(r.stats.legs, [Leg::Lexical, Leg::Fuzzy, Leg::Semantic]);
    // Pinyin corrected to Chinese is embedded as Chinese by a model that reads it.
    let r = index.search(&SearchRequest::new("tuikuan", Principal::public())).unwrap();
    assert_eq!(r.stats.legs, [Leg::Lexical, Leg::Fuzzy, Leg::Semantic]);
    assert_eq!(r.stats.embedded.as_deref(), Some("退款"));
    let r = index.search(&SearchRequest::new("return an item", Principal::public()).mode(Mode::Semantic)).unwrap();
    assert_eq!(r.hits.len(), 3);
}

/// The Chinese help center as the default request and its legs see it, nDCG@10 per mode (lexical,
/// fuzzy, hybrid), and how many pinyin and homophone queries hybrid brings an answer to the top
/// 10 for.
fn chinese_helpcenter_scores(index: &Index) -> ([f64; 3], (usize, usize)) {
    let dir = repo().join("datasets/helpcenter/zh");
    let dataset = Dataset::load(&dir, "test").unwrap();
    let kinds: HashMap<String, String> = dataset
        .queries
        .iter()
        .map(|q| (q.id.clone(), q.metadata.get("kind").and_then(|k| k.as_str()).unwrap_or("").to_string()))
        .collect();
    let mut scores = [0.0; 3];
    let mut reached = (0usize, 0usize);
    for (at, mode) in [Mode::Lexical, Mode::Fuzzy, Mode::Hybrid].into_iter().enumerate() {
        let report = evaluate(&dataset, mode.name(), |q| -> braid::Result<Vec<String>> {
            let principal = match q.metadata.get("principal").and_then(|p| p.as_array()) {
                Some(t) => Principal::from_verified_tokens(t.iter().filter_map(|t| t.as_str())),
                None => Principal::public(),
            };
            let r = index.search(&SearchRequest::new(q.text.as_str(), principal).mode(mode).k(300).collapse(true))?;
            let articles: Vec<String> = r.hits.into_iter().map(|h| h.parent.unwrap_or(h.id)).collect();
            if mode == Mode::Hybrid && ["pinyin", "homophone"].contains(&kinds[&q.id].as_str()) {
                let intended = dataset.qrels.get(&q.id).cloned().unwrap_or_default();
                reached.1 += 1;
                if articles.iter().take(10).any(|a| intended.get(a) == Some(&2)) {
                    reached.0 += 1;
                }
            }
            Ok(articles)
        })
        .unwrap();
        scores[at] = report.ndcg_at_10;
    }
    (scores, reached)
}

/// The Chinese help center, without an embedding model and with the English one (the setting
/// of issue 46's measurement: the semantic leg must not run on Chinese it cannot read). The
/// floors sit a little under what this build measures (lexical 0.8046, fuzzy and hybrid
/// 0.9791, the same with and without the model; docs/ranking.md, "Chinese"), and above what
/// the build before measured (0.8029, 0.9774, hybrid 0.9667 below its fuzzy leg): the homophone
/// corrections the lexical leg did not read, and the title weight 0.1 fitted on English text.
#[test]
fn chinese_helpcenter_quality() {
    let dir = repo().join("datasets/helpcenter/zh");
    let without = index_of(&dir);
    let with = Index::builder().embedder(model(None)).create_in_ram().unwrap();
    let mut w = with.writer().unwrap();
    for record in braid::ingest::Source::detect(&dir).unwrap().records(&with.config().schema) {
        w.upsert(&record.unwrap()).unwrap();
    }
    w.commit().unwrap();
    for (name, index) in [("no model", &without), ("all-MiniLM-L6-v2", &with)] {
        let ([lexical, fuzzy, hybrid], reached) = chinese_helpcenter_scores(index);
        eprintln!(
            "helpcenter/zh ({name}) nDCG@10: lexical {lexical:.4}, fuzzy {fuzzy:.4}, hybrid {hybrid:.4}; \
             pinyin+homophone in top 10: {}/{}",
            reached.0, reached.1
        );
        // The default request is at least as good as its legs, and no worse than this build.
        assert!(hybrid >= lexical, "{name}: hybrid {hybrid:.4} below its lexical leg {lexical:.4}");
        assert!(hybrid + 0.002 >= fuzzy, "{name}: hybrid {hybrid:.4} below its fuzzy leg {fuzzy:.4}");
        assert!(hybrid >= 0.975, "{name}: hybrid nDCG@10 {hybrid:.4}");
        assert!(lexical >= 0.804, "{name}: lexical nDCG@10 {lexical:.4}");
        assert!(fuzzy >= 0.975, "{name}: fuzzy nDCG@10 {fuzzy:.4}");
        assert!(reached.1 >= 20 && reached.0 == reached.1, "{name}: {}/{}", reached.0, reached.1);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

    /// Any mix of Han, kana, Hangul, pinyin, Latin, digits and punctuation — as a query in
    /// every mode and as a record — gives a result, never a panic.
    #[test]
    fn mixed_script_text_never_panics(text in "[同步失败退款密码发票东京の한글abcxyz tongbu2é々〇𠀀。，!? 0-9]{0,40}") {
        for mode in [Mode::Lexical, Mode::Fuzzy, Mode::Hybrid] {
            let r = index().search(&SearchRequest::new(text.as_str(), Principal::public()).mode(mode));
            proptest::prop_assert!(r.is_ok(), "{:?} {:?}: {:?}", mode, text, r.err());
        }
        let tmp = Index::create_in_ram(IndexConfig::default()).unwrap();
        let mut w = tmp.writer().unwrap();
        w.upsert(&Record::new("x").title(text.as_str()).body(text.as_str()).keyword("lang", "ja")).unwrap();
        w.upsert(&Record::new("y").title(text.as_str()).body(text.as_str())).unwrap();
        w.commit().unwrap();
        proptest::prop_assert!(tmp.search(&SearchRequest::new(text.as_str(), Principal::public())).is_ok());
    }
}
