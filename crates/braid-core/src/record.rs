//! The unit of retrieval.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Error, Language, Result};

/// A record: stable external id, text fields, keyword/numeric/date fields, ACL tokens and, for
/// chunks, the parent record with the section's heading path and line range.
///
/// ```
/// use braid_core::Record;
/// let chunk = Record::new("billing/refunds#annual")
///     .title("Refund policy")
///     .body("Annual plans are refundable for 30 days.")
///     .keyword("category", "billing")
///     .parent("billing/refunds")
///     .section(["Refunds", "Annual plans"])
///     .lines(12, 20);
/// assert_eq!(chunk.section, ["Refunds", "Annual plans"]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Record {
    /// The external id, unique in the index (set by [`Record::new`]).
    pub id: String,
    /// See [`Record::title`].
    pub title: String,
    /// See [`Record::body`].
    pub body: String,
    /// Keyword fields: field → values (see [`Record::keyword`]).
    #[serde(default)]
    pub keywords: BTreeMap<String, Vec<String>>,
    /// Numeric and date fields: field → value (see [`Record::number`], [`Record::date`]).
    #[serde(default)]
    pub numbers: BTreeMap<String, f64>,
    /// ACL tokens (see [`Record::acl`]).
    #[serde(default)]
    pub acl: Vec<String>,
    /// See [`Record::parent`].
    #[serde(default)]
    pub parent: Option<String>,
    /// The heading path (see [`Record::section`]).
    #[serde(default)]
    pub section: Vec<String>,
    /// See [`Record::lines`].
    #[serde(default)]
    pub lines: Option<(u32, u32)>,
    /// A vector the caller computed (skipped when absent, so the content hash of a record
    /// without one is what it was before vectors could be supplied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector: Option<Vec<f32>>,
}

impl Record {
    /// A record with this external id and no content yet.
    pub fn new(id: impl Into<String>) -> Self {
        Record { id: id.into(), ..Default::default() }
    }

    /// Sets the title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = title.into();
        self
    }

    /// Sets the body.
    pub fn body(mut self, body: impl Into<String>) -> Self {
        self.body = body.into();
        self
    }

    /// Adds a value to a keyword field (exact match, filterable).
    pub fn keyword(mut self, field: impl Into<String>, value: impl Into<String>) -> Self {
        self.keywords.entry(field.into()).or_default().push(value.into());
        self
    }

    /// Sets a numeric field.
    pub fn number(mut self, field: impl Into<String>, value: f64) -> Self {
        self.numbers.insert(field.into(), value);
        self
    }

    /// Sets a date field from `YYYY-MM-DD` or RFC 3339 text, stored as Unix seconds.
    ///
    /// # Errors
    /// [`Error::InvalidRecord`] when the text is not a date.
    pub fn date(self, field: impl Into<String>, text: &str) -> Result<Self> {
        let secs = parse_date(text)?;
        Ok(self.number(field, secs as f64))
    }

    /// Sets the ACL tokens (`public`, `tenant:acme`, `group:support`, `user:42`, …).
    pub fn acl<I, S>(mut self, tokens: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.acl = tokens.into_iter().map(Into::into).collect();
        self
    }

    /// Marks the record as a chunk of `parent`.
    pub fn parent(mut self, parent: impl Into<String>) -> Self {
        self.parent = Some(parent.into());
        self
    }

    /// Sets the heading path of the section the record holds, outermost first.
    pub fn section<I, S>(mut self, path: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.section = path.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the 1-based, inclusive line range of the chunk in its parent.
    pub fn lines(mut self, start: u32, end: u32) -> Self {
        self.lines = Some((start, end));
        self
    }

    /// Supplies the record's vector, computed by the caller's own model: the semantic leg
    /// uses it instead of embedding the record. Its dimension must be the index's (checked
    /// at upsert); every component must be finite and not all zero (checked by
    /// [`Record::validate`]).
    ///
    /// ```
    /// use braid_core::Record;
    /// let r = Record::new("a").body("text").vector(vec![0.6, 0.8]);
    /// assert_eq!(r.vector.as_deref(), Some(&[0.6, 0.8][..]));
    /// assert!(Record::new("b").vector(vec![f32::NAN, 1.0]).validate().is_err());
    /// ```
    pub fn vector(mut self, vector: impl Into<Vec<f32>>) -> Self {
        self.vector = Some(vector.into());
        self
    }

    /// The external id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The record's tenant tokens: its ACL tokens (trimmed) that name a tenant
    /// (`tenant:acme`). They decide who may see it, with the rest of the ACL, and which
    /// partition holds its vectors.
    ///
    /// ```
    /// use braid_core::Record;
    /// let r = Record::new("a").acl([" tenant:acme ", "group:support"]);
    /// assert_eq!(r.tenants().collect::<Vec<_>>(), ["tenant:acme"]);
    /// ```
    pub fn tenants(&self) -> impl Iterator<Item = &str> {
        self.acl.iter().map(|t| t.trim()).filter(|t| t.starts_with(crate::TENANT_PREFIX))
    }

    /// The record's language: its `lang` keyword when it has one (`zh`, `zh-CN`, `en`, …),
    /// else detected from title and body by script (see [`Language::detect`]).
    ///
    /// ```
    /// use braid_core::{Language, Record};
    /// assert_eq!(Record::new("a").body("同步失败怎么办").language(), Language::Zh);
    /// assert_eq!(Record::new("b").body("同步失败").keyword("lang", "ja").language(), Language::Ja);
    /// assert_eq!(Record::new("c").body("sync failed").language(), Language::Other);
    /// ```
    pub fn language(&self) -> Language {
        match self.keywords.get("lang").and_then(|v| v.first()) {
            Some(tag) => Language::from_tag(tag),
            None => Language::detect(&format!("{} {}", self.title, self.body)),
        }
    }

    /// The text the semantic leg embeds and a reranker reads: title, section path, body.
    pub fn passage(&self) -> String {
        let mut out = self.passage_prefix();
        out.reserve(self.body.len() + 1);
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&self.body);
        out
    }

    /// What every passage of this record starts with: its title and section path.
    pub(crate) fn passage_prefix(&self) -> String {
        let mut out = String::with_capacity(self.title.len() + 2);
        out.push_str(&self.title);
        if !self.section.is_empty() {
            out.push_str(" — ");
            out.push_str(&self.section.join(" > "));
        }
        out
    }

    /// Checks what every index requires: a non-empty id without control characters, of at
    /// most 512 bytes, finite numbers, no ACL token in Braid's reserved namespace
    /// (`__braid:…`, [`Error::ReservedToken`]), and an id in a tenant's namespace
    /// (`tenant:acme/…`, see [`id_tenant`]) only on a record of that tenant alone, which names
    /// no owner token unless it is a memory ([`is_memory_id`]).
    ///
    /// # Errors
    /// [`Error::InvalidRecord`] naming the problem.
    pub fn validate(&self) -> Result<()> {
        let bad = |reason: String| Err(Error::InvalidRecord { reason });
        if self.id.trim().is_empty() {
            return bad("empty id".into());
        }
        if self.id.len() > 512 {
            return bad(format!("id longer than 512 bytes ({})", self.id.len()));
        }
        if self.id.chars().any(char::is_control) {
            return bad("id contains control characters".into());
        }
        if let Some(token) = self.acl.iter().find(|t| crate::is_reserved_token(t)) {
            return Err(Error::ReservedToken { token: token.trim().to_string() });
        }
        if self.id.starts_with(crate::TENANT_PREFIX) {
            let tenants: Vec<&str> =
                self.acl.iter().map(|t| t.trim()).filter(|t| t.starts_with(crate::TENANT_PREFIX)).collect();
            match id_tenant(&self.id) {
                Some(tenant) if tenants == [tenant] => {
                    // A record of a namespace is its whole tenant's, memories aside: one its
                    // owner alone may see would be one the tenant's writers replace unseen.
                    let owner = self.acl.iter().map(|t| t.trim()).find(|t| t.starts_with(crate::OWNER_PREFIX));
                    if let Some(owner) = owner.filter(|_| !is_memory_id(&self.id)) {
                        return bad(format!(
                            "id {:?} lies in {tenant}'s namespace, whose records its whole tenant may see, so its \
                             ACL names no owner ({owner:?}) unless it is a memory ({tenant}/{MEMORY_FOLDER}/…)",
                            self.id
                        ));
                    }
                }
                Some(owner) => {
                    return bad(format!(
                        "id {:?} lies in {owner}'s namespace, so the record's only tenant must be {owner} (its ACL names {tenants:?})",
                        self.id
                    ))
                }
                None => {
                    return bad(format!(
                        "id {:?} starts with \"tenant:\" but is not of the form tenant:<name>/<id>",
                        self.id
                    ))
                }
            }
        }
        if let Some((field, _)) = self.numbers.iter().find(|(_, v)| !v.is_finite()) {
            return bad(format!("field `{field}` is not a finite number"));
        }
        if let Some((s, e)) = self.lines {
            if s > e {
                return bad(format!("line range {s}..{e} is reversed"));
            }
        }
        if let Some(vector) = &self.vector {
            check_vector(vector).map_err(|reason| Error::InvalidRecord { reason: format!("vector {reason}") })?;
        }
        Ok(())
    }
}

/// The tenant whose namespace an id lies in: `tenant:acme` for `tenant:acme/notes/1`; `None`
/// for an id outside every tenant's namespace (or a malformed one, which
/// [`Record::validate`] refuses). Ids in a namespace belong to that tenant alone, whichever way
/// they were written, so a writer confined to its namespace can never name another tenant's
/// record.
///
/// ```
/// assert_eq!(braid_core::id_tenant("tenant:acme/notes/1"), Some("tenant:acme"));
/// assert_eq!(braid_core::id_tenant("notes/1"), None);
/// assert_eq!(braid_core::id_tenant("tenant:/x"), None);
/// ```
pub fn id_tenant(id: &str) -> Option<&str> {
    let name_and_rest = id.strip_prefix(crate::TENANT_PREFIX)?;
    let (name, rest) = name_and_rest.split_once('/')?;
    let valid = is_tenant_name(name) && !rest.is_empty();
    valid.then(|| &id[..crate::TENANT_PREFIX.len() + name.len()])
}

/// The folder of a tenant's namespace memories live in: `tenant:acme/memory/…`.
pub const MEMORY_FOLDER: &str = "memory";

/// Whether `id` is in a tenant's memory folder (`tenant:acme/memory/…`): only memories, which
/// carry their owner's token, are visible to less than their whole tenant.
///
/// ```
/// assert!(braid_core::is_memory_id("tenant:acme/memory/0a/1b"));
/// assert!(!braid_core::is_memory_id("tenant:acme/memos/1"));
/// assert!(!braid_core::is_memory_id("memory/1"));
/// ```
pub fn is_memory_id(id: &str) -> bool {
    id_tenant(id)
        .and_then(|tenant| id[tenant.len()..].strip_prefix('/'))
        .is_some_and(|rest| rest == MEMORY_FOLDER || rest.starts_with(&format!("{MEMORY_FOLDER}/")))
}

/// Whether `name` can name a tenant (`acme` in `tenant:acme`): not empty, and no whitespace,
/// comma or `/`, so that its namespace's ids read back as its own ([`id_tenant`]). A tenant
/// named `acme/x` would write short ids into `tenant:acme`'s namespace; the server refuses such
/// a name wherever a tenant is given to it.
///
/// ```
/// assert!(braid_core::is_tenant_name("acme-eu"));
/// assert!(!braid_core::is_tenant_name("acme/x"));
/// assert!(!braid_core::is_tenant_name("acme x"));
/// assert!(!braid_core::is_tenant_name(""));
/// ```
pub fn is_tenant_name(name: &str) -> bool {
    !name.is_empty() && !name.chars().any(|c| c.is_whitespace() || c == ',' || c == '/')
}

/// Checks what every vector must be, whatever its dimension: not empty, every component
/// finite, not all zeros (a zero vector has no direction to compare). The error names the
/// problem ("has a NaN or infinite component at 3").
///
/// # Errors
/// The problem, in words, for the caller to wrap in its own error.
///
/// ```
/// assert!(braid_core::check_vector(&[0.1, 0.2]).is_ok());
/// assert!(braid_core::check_vector(&[0.0, 0.0]).is_err());
/// assert!(braid_core::check_vector(&[f32::INFINITY]).is_err());
/// assert!(braid_core::check_vector(&[]).is_err());
/// ```
pub fn check_vector(vector: &[f32]) -> std::result::Result<(), String> {
    if vector.is_empty() {
        return Err("is empty".into());
    }
    if let Some(at) = vector.iter().position(|x| !x.is_finite()) {
        return Err(format!("has a NaN or infinite component at {at}"));
    }
    if vector.iter().all(|&x| x == 0.0) {
        return Err("is all zeros".into());
    }
    Ok(())
}

/// Parses `YYYY-MM-DD` or an RFC 3339 timestamp (`2026-09-14T10:00:00Z`, offsets allowed)
/// into Unix seconds.
///
/// # Errors
/// [`Error::InvalidRecord`] when the text is not such a date.
///
/// ```
/// assert_eq!(braid_core::parse_date("1970-01-02").unwrap(), 86_400);
/// assert_eq!(braid_core::parse_date("2000-03-01T00:00:00+01:00").unwrap(), 951_865_200);
/// assert!(braid_core::parse_date("yesterday").is_err());
/// ```
pub fn parse_date(text: &str) -> Result<i64> {
    let err = || Error::InvalidRecord { reason: format!("not a date: {:?}", truncate(text, 40)) };
    let t = text.trim();
    let num = |s: &str| -> Result<i64> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        s.parse::<i64>().map_err(|_| err())
    };
    let date = t.get(..10).ok_or_else(err)?;
    let parts: Vec<&str> = date.split('-').collect();
    if parts.len() != 3 || parts[0].len() != 4 || parts[1].len() != 2 || parts[2].len() != 2 {
        return Err(err());
    }
    let (y, m, d) = (num(parts[0])?, num(parts[1])?, num(parts[2])?);
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return Err(err());
    }
    let mut secs = days_from_civil(y, m, d) * 86_400;
    let rest = &t[10..];
    if rest.is_empty() {
        return Ok(secs);
    }
    let rest = rest.strip_prefix(['T', 't', ' ']).ok_or_else(err)?;
    let time = rest.get(..8).ok_or_else(err)?;
    let hms: Vec<&str> = time.split(':').collect();
    if hms.len() != 3 {
        return Err(err());
    }
    let (h, mi, s) = (num(hms[0])?, num(hms[1])?, num(hms[2])?);
    if h > 23 || mi > 59 || s > 60 {
        return Err(err());
    }
    secs += h * 3600 + mi * 60 + s;
    let mut zone = &rest[8..];
    if let Some(frac) = zone.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        zone = &frac[digits..];
    }
    match zone {
        "" | "Z" | "z" => Ok(secs),
        _ => {
            let sign = match zone.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return Err(err()),
            };
            let hm: Vec<&str> = zone[1..].split(':').collect();
            if hm.len() != 2 {
                return Err(err());
            }
            let offset = num(hm[0])? * 3600 + num(hm[1])? * 60;
            Ok(secs - sign * offset)
        }
    }
}

fn truncate(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(parse_date("1970-01-01").unwrap(), 0);
        assert_eq!(parse_date("2026-09-14").unwrap(), 1_789_344_000);
        assert_eq!(parse_date("2024-02-29T12:00:00Z").unwrap(), 1_709_208_000);
        assert_eq!(parse_date("2024-02-29T12:00:00.123-02:00").unwrap(), 1_709_215_200);
        for bad in ["", "2023-02-29", "2026-13-01", "2026-1-01", "٢٠٢٦-٠٩-١٤", "2026-09-14T25:00:00", "2026-09-14Tnope"]
        {
            assert!(parse_date(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn an_id_in_a_tenants_namespace_needs_that_tenant_alone() {
        let ok = Record::new("tenant:acme/note-1").acl(["tenant:acme", "group:support"]);
        assert!(ok.validate().is_ok());
        for bad in [
            Record::new("tenant:acme/note-1"),
            Record::new("tenant:acme/note-1").acl(["public"]),
            Record::new("tenant:acme/note-1").acl(["tenant:globex"]),
            Record::new("tenant:acme/note-1").acl(["tenant:acme", "tenant:globex"]),
            Record::new("tenant:acme").acl(["tenant:acme"]),
            Record::new("tenant:/x").acl(["tenant:"]),
            // Visible to one owner of the tenant, yet replaceable by any writer of it.
            Record::new("tenant:acme/note-1").acl(["tenant:acme", "owner:token:alice"]),
        ] {
            let err = bad.validate().unwrap_err();
            assert!(matches!(err, Error::InvalidRecord { .. }), "{err}");
        }
        // Ids outside every namespace are not concerned; a memory is its owner's.
        assert!(Record::new("notes/tenant:acme/1").acl(["tenant:globex"]).validate().is_ok());
        assert!(Record::new("notes/1").acl(["owner:token:alice"]).validate().is_ok());
        assert!(Record::new("tenant:acme/memory/0a/1b").acl(["tenant:acme", "owner:token:alice"]).validate().is_ok());
    }

    #[test]
    fn validation() {
        assert!(Record::new("a").validate().is_ok());
        assert!(Record::new(" ").validate().is_err());
        assert!(Record::new("a\u{0}").validate().is_err());
        assert!(Record::new("a").number("x", f64::NAN).validate().is_err());
        assert!(Record::new("a").lines(5, 2).validate().is_err());
        for token in ["__braid:no-acl", " __braid:no-tenant", "__braid:anything"] {
            let err = Record::new("a").acl(["tenant:acme", token]).validate().unwrap_err();
            assert!(matches!(err, Error::ReservedToken { .. }), "{token}: {err}");
        }
        assert!(Record::new("a").vector(vec![1.0, 0.0]).validate().is_ok());
        for bad in [vec![], vec![0.0, 0.0], vec![f32::NAN, 1.0], vec![1.0, f32::NEG_INFINITY]] {
            assert!(matches!(Record::new("a").vector(bad).validate(), Err(Error::InvalidRecord { .. })));
        }
    }
}
