//! The folder walk: every article under a corpus folder, in sorted order, with ids from
//! the relative path.

use std::path::{Path, PathBuf};

use braid_core::{Error, Result};

use super::{parse_article, parse_text, Article, ChunkOptions};

/// `root`, without its extension, with `/` between components on every OS
/// (`billing/refund-policy`). A file outside `root` keeps its whole path.
pub fn article_id(root: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(root).unwrap_or(file);
    let mut parts: Vec<String> = relative
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    match parts.last_mut() {
        Some(last) => {
            if let Some(stem) = Path::new(last.as_str()).file_stem() {
                *last = stem.to_string_lossy().into_owned();
            }
        }
        None => {
            if let Some(stem) = file.file_stem() {
                parts.push(stem.to_string_lossy().into_owned());
            }
        }
    }
    parts.join("/")
}

/// Reads every article under `root`: `*.md` and `*.markdown` files with [`parse_article`],
/// `*.txt` files with [`parse_text`], ids from [`article_id`].
///
/// The walk is recursive, in sorted order (byte order of names, so the same on every OS), and
/// lazy: a file is read when the iterator reaches it. Hidden files and folders (names starting
/// with `.`) and symbolic links to folders are skipped. When `root` is a file, that file is
/// the only article.
///
/// ```no_run
/// use braid_ingest::markdown::{read_dir, ChunkOptions};
///
/// # fn main() -> braid_core::Result<()> {
/// let mut records = Vec::new();
/// for article in read_dir("datasets/helpcenter/articles".as_ref(), &ChunkOptions::default()) {
///     records.extend(article?.records()?);
/// }
/// # Ok(()) }
/// ```
///
/// # Errors
/// Each item is an [`Error::Io`] naming the path when a folder or file cannot be read (a
/// file that is not UTF-8 included), or the error of [`parse_article`]; the walk goes on
/// after an error.
pub fn read_dir(root: &Path, options: &ChunkOptions) -> impl Iterator<Item = Result<Article>> {
    Walk { root: root.to_path_buf(), options: *options, stack: Vec::new(), started: false }
}

/// A folder to list or a file to read, on the walk's stack.
enum Entry {
    Dir(PathBuf),
    File(PathBuf, FileKind),
}

#[derive(Clone, Copy)]
enum FileKind {
    Markdown,
    Text,
}

impl FileKind {
    fn of(path: &Path) -> Option<FileKind> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "md" | "markdown" => Some(FileKind::Markdown),
            "txt" => Some(FileKind::Text),
            _ => None,
        }
    }
}

struct Walk {
    root: PathBuf,
    options: ChunkOptions,
    /// Entries still to visit, the next one last.
    stack: Vec<Entry>,
    started: bool,
}

impl Walk {
    fn list(dir: &Path) -> Result<Vec<Entry>> {
        let mut children = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
            let entry = entry.map_err(|e| Error::io(dir, e))?;
            let name = entry.file_name();
            if name.to_string_lossy().starts_with('.') {
                continue;
            }
            let path = entry.path();
            let file_type = entry.file_type().map_err(|e| Error::io(&path, e))?;
            let is_file = if file_type.is_symlink() {
                std::fs::metadata(&path).map(|m| m.is_file()).unwrap_or(false)
            } else {
                file_type.is_file()
            };
            if file_type.is_dir() {
                children.push((name, Entry::Dir(path)));
            } else if is_file {
                if let Some(kind) = FileKind::of(&path) {
                    children.push((name, Entry::File(path, kind)));
                }
            }
        }
        children.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(children.into_iter().rev().map(|(_, e)| e).collect())
    }

    fn load(&self, path: &Path, kind: FileKind) -> Result<Article> {
        let source = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let id = article_id(&self.root, path);
        match kind {
            FileKind::Markdown => parse_article(&id, &source, &self.options),
            FileKind::Text => parse_text(&id, &source, &self.options),
        }
    }
}

impl Iterator for Walk {
    type Item = Result<Article>;

    fn next(&mut self) -> Option<Result<Article>> {
        if !self.started {
            self.started = true;
            match std::fs::metadata(&self.root) {
                Err(e) => return Some(Err(Error::io(&self.root, e))),
                Ok(m) if m.is_dir() => self.stack.push(Entry::Dir(self.root.clone())),
                Ok(_) => {
                    let kind = FileKind::of(&self.root).unwrap_or(FileKind::Markdown);
                    self.stack.push(Entry::File(self.root.clone(), kind));
                }
            }
        }
        while let Some(entry) = self.stack.pop() {
            match entry {
                Entry::Dir(dir) => match Walk::list(&dir) {
                    Ok(children) => self.stack.extend(children),
                    Err(e) => return Some(Err(e)),
                },
                Entry::File(path, kind) => return Some(self.load(&path, kind)),
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::markdown::tests::assert_exact_lines;

    #[test]
    fn article_ids_are_relative_and_slash_separated() {
        let root = Path::new("corpus");
        assert_eq!(article_id(root, &root.join("billing").join("refund-policy.md")), "billing/refund-policy");
        assert_eq!(article_id(root, &root.join("top.markdown")), "top");
        assert_eq!(article_id(root, &root.join("a").join("b").join("c.d.txt")), "a/b/c.d");
        assert_eq!(article_id(Path::new("other"), Path::new("x/y.md")), "x/y");
        assert_eq!(article_id(Path::new("one.md"), Path::new("one.md")), "one");
    }

    #[test]
    fn read_dir_walks_sorted_and_skips_hidden() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |rel: &str, text: &[u8]| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("billing/b.md", b"# B\n\nb\n");
        write("billing/a.markdown", b"# A\n\na\n");
        write("admin/z.txt", b"Zed\n");
        write("admin/notes.json", b"{}");
        write(".git/x.md", b"# hidden\n");
        write("admin/.draft.md", b"# hidden\n");
        write("broken/bad.md", b"---\ntitle: x\n");
        write("broken/binary.md", &[0xff, 0xfe, 0x00]);

        let results: Vec<_> = read_dir(root, &ChunkOptions::default()).collect();
        let ids: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).map(|a| a.id.as_str()).collect();
        assert_eq!(ids, ["admin/z", "billing/a", "billing/b"]);
        assert_eq!(results.len(), 5);
        assert!(matches!(&results[3], Err(Error::InvalidRecord { reason }) if reason.contains("broken/bad")));
        assert!(matches!(&results[4], Err(Error::Io { path, .. }) if path.ends_with("binary.md")));

        let missing: Vec<_> = read_dir(&root.join("nope"), &ChunkOptions::default()).collect();
        assert!(matches!(missing.as_slice(), [Err(Error::Io { .. })]));
        let single: Vec<_> = read_dir(&root.join("billing/b.md"), &ChunkOptions::default()).collect();
        assert_eq!(single.len(), 1);
        assert_eq!(single[0].as_ref().unwrap().id, "b");
    }

    /// The auditor's files, each once indexed public by a folder walk: every one is now an
    /// error naming its file, and none yields a record; a file with `\r` line ends is read.
    #[test]
    fn read_dir_refuses_front_matter_it_cannot_read_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let bad: &[(&str, &str)] = &[
            ("comment.md", "--- # fm\nacl: [group:a]\n---\nsecret\n"),
            ("four.md", "----\nacl: [group:a]\n----\nsecret\n"),
            ("lang.txt", "---yaml\nacl: [group:a]\n---\nsecret\n"),
            ("separator.md", "---\ntitle: x\u{2028}acl: [group:a]\n---\nsecret\n"),
            ("second.md", "---\ntitle: x\n---\n---\nacl: [group:a]\n---\nsecret\n"),
            ("wide.md", "---\n\u{ff41}\u{ff43}\u{ff4c}: [group:a]\n---\nsecret\n"),
            ("token.txt", "---\nacl: [Tenant:acme]\n---\nsecret\n"),
            ("null.md", "---\nacl: null\n---\nsecret\n"),
            ("slash.md", "---\ntenant: acme/x\n---\nsecret\n"),
        ];
        for (name, text) in bad {
            std::fs::write(root.join(name), text).unwrap();
        }
        std::fs::write(root.join("mac.md"), "---\racl: [group:a]\r---\rsecret\r").unwrap();
        let results: Vec<_> = read_dir(root, &ChunkOptions::default()).collect();
        assert_eq!(results.len(), bad.len() + 1);
        for result in results {
            match result {
                Ok(article) => {
                    assert_eq!(article.id, "mac");
                    assert_eq!(article.records().unwrap()[0].acl.as_slice(), ["group:a"]);
                }
                Err(Error::InvalidRecord { reason }) => {
                    assert!(
                        bad.iter().any(|(name, _)| reason.contains(&format!("{:?}", name.split('.').next().unwrap()))),
                        "{reason}"
                    )
                }
                Err(other) => panic!("{other}"),
            }
        }
    }

    /// Every article of the bundled help-center corpus parses and yields records.
    #[test]
    fn helpcenter_corpus_parses() {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let root = manifest
            .ancestors()
            .map(|d| d.join("datasets/helpcenter/articles"))
            .find(|d| d.is_dir())
            .expect("datasets/helpcenter/articles above CARGO_MANIFEST_DIR");
        let has_markdown = walk_has_markdown(&root);
        let mut articles = 0;
        let mut ids = HashSet::new();
        for article in read_dir(&root, &ChunkOptions::default()) {
            let article = article.unwrap();
            let source = std::fs::read_to_string(root.join(format!("{}.md", article.id))).unwrap_or_default();
            if !source.is_empty() {
                assert_exact_lines(&source, &article);
            }
            let records = article.records().unwrap_or_else(|e| panic!("{}: {e}", article.id));
            assert!(!records.is_empty(), "{} yields no record", article.id);
            for r in &records {
                assert!(ids.insert(r.id().to_string()), "duplicate id {}", r.id());
                assert!(r.validate().is_ok());
            }
            articles += 1;
        }
        if has_markdown {
            assert!(articles > 0);
        } else {
            assert_eq!(articles, 0, "read_dir found articles where there are no .md files");
        }
    }

    fn walk_has_markdown(dir: &Path) -> bool {
        std::fs::read_dir(dir).into_iter().flatten().flatten().any(|e| {
            let p = e.path();
            if p.is_dir() {
                walk_has_markdown(&p)
            } else {
                p.extension().is_some_and(|x| x == "md")
            }
        })
    }
}
