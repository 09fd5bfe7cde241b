//! The outline of what a principal may see, as `ls` shows a folder: the articles and folders
//! under a path, each article with its sections — what an agent reads before `read_section`
//! ([`Searcher::outline`]).
//!
//! An article is a record's id up to its first `#` (a Markdown folder's sections are
//! `{article}#{slug}`, see `braid-ingest`); its path is split on `/`. Only records the
//! principal may see are listed, counted or named: a folder whose articles are all hidden is
//! not there.

use std::collections::BTreeMap;

use braid_core::{Ordinal, Principal, Result};
use serde::Serialize;

use crate::searcher::Searcher;

/// The most entries one outline page holds.
pub const MAX_OUTLINE_ENTRIES: usize = 200;

/// One page of an outline ([`Searcher::outline`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outline {
    /// The folder listed (`""` for the top, else ending in `/`).
    pub path: String,
    /// Folders first, then articles, each by name.
    pub entries: Vec<OutlineEntry>,
    /// Entries under `path` in all.
    pub total: usize,
    /// Where the next page starts, when there is one.
    pub next_offset: Option<usize>,
}

/// A folder or an article of an [`Outline`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum OutlineEntry {
    /// A folder: its path (ending in `/`) and how many visible articles lie under it.
    Folder {
        /// The folder's path, ending in `/`.
        path: String,
        /// Visible articles under it, at any depth.
        articles: usize,
    },
    /// An article: its id, its title and its visible sections in line order.
    Article {
        /// The article's id (its sections' parent).
        id: String,
        /// Its title.
        title: String,
        /// Its sections.
        sections: Vec<OutlineSection>,
    },
}

/// A section of an article in an [`Outline`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutlineSection {
    /// The record's id (what `read_section` and `Searcher::record` take).
    pub id: String,
    /// Its heading path.
    pub section: Vec<String>,
    /// Its line range, when it has one.
    pub lines: Option<(u32, u32)>,
}

/// The article a record id belongs to: the id up to its first `#`.
fn article_of(id: &str) -> &str {
    id.split('#').next().unwrap_or(id)
}

impl Searcher {
    /// The folders and articles under `path` that `principal` may see, `limit` entries (at
    /// most [`MAX_OUTLINE_ENTRIES`]) from `offset` on: folders first, then articles, each by
    /// name; each article with its visible sections in line order (see the module docs). The
    /// ids come from a column (no stored record is read but the page's).
    ///
    /// # Errors
    /// [`braid_core::Error::InvalidRequest`] for a `limit` of 0 or above the maximum; the
    /// store's errors.
    ///
    /// ```
    /// # use braid::{Index, IndexConfig, OutlineEntry, Principal, Record};
    /// # fn main() -> braid::Result<()> {
    /// let index = Index::create_in_ram(IndexConfig::default())?;
    /// let mut w = index.writer()?;
    /// w.upsert(&Record::new("billing/refunds#annual").title("Refunds").parent("billing/refunds").section(["Annual"]))?;
    /// w.upsert(&Record::new("billing/invoices#intro").title("Invoices").parent("billing/invoices"))?;
    /// w.upsert(&Record::new("admin/sso#intro").title("SSO").parent("admin/sso").acl(["group:admins"]))?;
    /// w.commit()?;
    /// let top = index.searcher().outline(&Principal::public(), "", 0, 50)?;
    /// assert_eq!(top.entries, [OutlineEntry::Folder { path: "billing/".into(), articles: 2 }]); // admin/ is hidden
    /// let billing = index.searcher().outline(&Principal::public(), "billing/", 0, 50)?;
    /// assert_eq!(billing.total, 2);
    /// # Ok(()) }
    /// ```
    pub fn outline(&self, principal: &Principal, path: &str, offset: usize, limit: usize) -> Result<Outline> {
        if limit == 0 || limit > MAX_OUTLINE_ENTRIES {
            return Err(braid_core::Error::invalid_request(format!(
                "an outline page holds 1 to {MAX_OUTLINE_ENTRIES} entries, not {limit}"
            )));
        }
        let path = match path.trim().trim_start_matches('/') {
            "" => String::new(),
            p if p.ends_with('/') => p.to_string(),
            p => format!("{p}/"),
        };
        let allowed = self.allowed(principal)?;
        // Visible records under `path`, by article.
        let mut articles: BTreeMap<String, Vec<Ordinal>> = BTreeMap::new();
        for (id, ord) in self.snapshot.ids()? {
            if allowed.contains(ord) && id.starts_with(&path) {
                articles.entry(article_of(&id).to_string()).or_default().push(ord);
            }
        }
        let mut folders: BTreeMap<String, usize> = BTreeMap::new();
        let mut here: Vec<(String, Vec<Ordinal>)> = Vec::new();
        for (article, ords) in articles {
            match article[path.len()..].split_once('/') {
                Some((folder, _)) => *folders.entry(format!("{path}{folder}/")).or_default() += 1,
                None => here.push((article, ords)),
            }
        }
        let folders: Vec<(String, usize)> = folders.into_iter().collect();
        let total = folders.len() + here.len();
        let end = offset.saturating_add(limit).min(total);
        let mut entries = Vec::with_capacity(end.saturating_sub(offset));
        for i in offset..end {
            if let Some((folder, count)) = folders.get(i) {
                entries.push(OutlineEntry::Folder { path: folder.clone(), articles: *count });
                continue;
            }
            let (id, ords) = &here[i - folders.len()];
            let mut records = self.snapshot.records(ords)?;
            records.sort_by(|a, b| {
                let key = |r: &braid_lexical::IndexedRecord| r.lines.map_or((u32::MAX, u32::MAX), |l| l);
                key(a).cmp(&key(b)).then_with(|| a.id.cmp(&b.id))
            });
            let title = records.first().map(|r| r.title.clone()).unwrap_or_default();
            let sections =
                records.into_iter().map(|r| OutlineSection { id: r.id, section: r.section, lines: r.lines }).collect();
            entries.push(OutlineEntry::Article { id: id.clone(), title, sections });
        }
        let next_offset = (end < total).then_some(end);
        Ok(Outline { path, entries, total, next_offset })
    }
}

impl Searcher {
    /// The records `principal` may see, by id, `limit` of them after the id `after` (from the
    /// first when `None`), and the id to continue after when more follow: a keyset listing, so
    /// a page stays put while records before it change. Ids come from the id column; only the
    /// page's records are read. What an MCP client lists as resources.
    ///
    /// # Errors
    /// [`braid_core::Error::InvalidRequest`] for a `limit` of 0 or above
    /// [`MAX_OUTLINE_ENTRIES`]; the store's errors.
    pub fn records_after(
        &self,
        principal: &Principal,
        after: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<crate::StoredRecord>, Option<String>)> {
        if limit == 0 || limit > MAX_OUTLINE_ENTRIES {
            return Err(braid_core::Error::invalid_request(format!(
                "a page holds 1 to {MAX_OUTLINE_ENTRIES} records, not {limit}"
            )));
        }
        let allowed = self.allowed(principal)?;
        let mut visible: Vec<(String, Ordinal)> = self
            .snapshot
            .ids()?
            .into_iter()
            .filter(|(id, ord)| allowed.contains(*ord) && after.is_none_or(|a| id.as_str() > a))
            .collect();
        visible.sort_unstable();
        let more = visible.len() > limit;
        visible.truncate(limit);
        let ords: Vec<Ordinal> = visible.iter().map(|(_, ord)| *ord).collect();
        let records: Vec<crate::StoredRecord> =
            self.snapshot.records(&ords)?.into_iter().map(crate::StoredRecord::from).collect();
        let next = more.then(|| visible.last().map(|(id, _)| id.clone())).flatten();
        Ok((records, next))
    }
}
