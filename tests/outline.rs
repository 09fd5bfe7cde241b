//! `Searcher::outline`: folders and articles under a path, as the caller may see them.

use braid::{Index, IndexConfig, OutlineEntry, Principal, Record};

fn index() -> Index {
    let index = Index::create_in_ram(IndexConfig::default()).unwrap();
    let mut w = index.writer().unwrap();
    let section = |id: &str, parent: &str, heading: &str, line: u32| {
        Record::new(id).title(parent).parent(parent).section([heading]).lines(line, line + 5)
    };
    w.upsert(&section("billing/refunds#annual", "billing/refunds", "Annual", 10)).unwrap();
    w.upsert(&section("billing/refunds#monthly", "billing/refunds", "Monthly", 1)).unwrap();
    w.upsert(&section("billing/invoices#intro", "billing/invoices", "Intro", 1)).unwrap();
    w.upsert(&section("billing/internal/credits#intro", "billing/internal/credits", "Intro", 1).acl(["group:support"]))
        .unwrap();
    w.upsert(&section("admin/sso#intro", "admin/sso", "Intro", 1).acl(["tenant:globex"])).unwrap();
    w.upsert(&Record::new("faq").title("FAQ")).unwrap();
    w.commit().unwrap();
    drop(w);
    index
}

fn names(entries: &[OutlineEntry]) -> Vec<String> {
    entries
        .iter()
        .map(|e| match e {
            OutlineEntry::Folder { path, articles } => format!("{path} {articles}"),
            OutlineEntry::Article { id, sections, .. } => format!("{id} {}", sections.len()),
        })
        .collect()
}

#[test]
fn folders_then_articles_as_the_caller_sees_them() {
    let index = index();
    let public = Principal::public();
    let top = index.outline(&public, "", 0, 50).unwrap();
    assert_eq!(names(&top.entries), ["billing/ 2", "faq 1"], "admin/ holds only globex's article");
    let billing = index.outline(&public, "billing", 0, 50).unwrap();
    assert_eq!(billing.path, "billing/");
    assert_eq!(names(&billing.entries), ["billing/invoices 1", "billing/refunds 2"]);
    // Sections in line order, with the ids read_section takes.
    let OutlineEntry::Article { sections, title, .. } = &billing.entries[1] else { panic!() };
    assert_eq!(title, "billing/refunds");
    assert_eq!(
        sections.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        ["billing/refunds#monthly", "billing/refunds#annual"]
    );
    // The support group sees the internal folder; globex sees admin/.
    let support = index.outline(&Principal::from_verified_tokens(["group:support"]), "billing/", 0, 50).unwrap();
    assert_eq!(names(&support.entries), ["billing/internal/ 1", "billing/invoices 1", "billing/refunds 2"]);
    let globex = index.outline(&Principal::from_verified_tokens(["tenant:globex"]), "", 0, 50).unwrap();
    assert_eq!(names(&globex.entries), ["admin/ 1", "billing/ 2", "faq 1"]);
}

#[test]
fn pages_and_bounds() {
    let index = index();
    let support = Principal::from_verified_tokens(["group:support"]);
    let first = index.outline(&support, "billing/", 0, 2).unwrap();
    assert_eq!((first.total, first.next_offset), (3, Some(2)));
    let second = index.outline(&support, "billing/", 2, 2).unwrap();
    assert_eq!(names(&second.entries), ["billing/refunds 2"]);
    assert_eq!(second.next_offset, None);
    assert!(index.outline(&support, "", 0, 0).is_err());
    assert!(index.outline(&support, "", 0, braid::MAX_OUTLINE_ENTRIES + 1).is_err());
    assert!(index.outline(&support, "nothing/", 0, 10).unwrap().entries.is_empty());
}
