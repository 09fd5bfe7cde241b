//! Who may see an ingested document: the one decision every format goes through — a JSONL
//! line, Markdown or text front matter, YAML or TOML.
//!
//! A document names its access with one of two lowercase top-level keys: `acl` (a list of
//! principal tokens, or one token) or `tenant` (one tenant name, which becomes the ACL
//! `[tenant:{name}]`). A document with neither is left to the index's access policy
//! (`--policy`; public by default) — BEIR corpora carry no access keys and keep that
//! behaviour. Everything else that touches access fails closed, with an [`AccessError`]
//! naming the document and the key (never the values):
//!
//! - an empty `acl` (`[]`, `null`, `""`, or only blank tokens), an empty `tenant`;
//! - a value of the wrong type (a number, an object, a list holding a number, a list of
//!   tenants), a tenant that is not one name;
//! - `tenant` together with `acl` (a tenant token in an ACL admits the whole tenant, which
//!   would widen a group list);
//! - a key that looks like an access key but is not exactly one: another letter case (`ACL`,
//!   `Tenant`), or — ignoring case — one edit away from `acl` or `tenant` (`acls`, `tennant`),
//!   or holding the word `acl`, `acls` or a word one edit from `tenant` (`tenant_id`,
//!   `allowedAcls`); a near-miss is refused, never read as the key, so that one spelling
//!   holds in every format;
//! - an access key (or a near-miss) inside a nested object such as a JSONL line's `metadata`;
//! - an access key given twice.

use std::fmt;

/// Who may see a document, as its access keys say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Access {
    /// No access key: the index's access policy decides (`--policy`; public by default).
    #[default]
    Policy,
    /// `acl`: these principal tokens (trimmed, none blank, at least one).
    Acl(Vec<String>),
    /// `tenant`: that tenant's principals only — the ACL `[tenant:{name}]`.
    Tenant(String),
}

impl Access {
    /// The record ACL this access stands for: empty for [`Access::Policy`].
    ///
    /// ```
    /// use braid_ingest::Access;
    /// assert_eq!(Access::Tenant("acme".into()).tokens(), ["tenant:acme"]);
    /// assert!(Access::Policy.tokens().is_empty());
    /// ```
    pub fn tokens(&self) -> Vec<String> {
        match self {
            Access::Policy => Vec::new(),
            Access::Acl(tokens) => tokens.clone(),
            Access::Tenant(name) => vec![format!("{}{name}", braid_core::TENANT_PREFIX)],
        }
    }
}

/// A document whose access keys cannot be read. It names the document, the line and the key;
/// it never repeats a value (an ACL token or tenant name is the author's, not the log's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessError {
    /// The document, as its format names it (`article "billing/x"`, `corpus.jsonl (_id "7")`).
    pub document: String,
    /// The 1-based line of the key in the document's file, when the format knows it.
    pub line: Option<usize>,
    /// The key, as written.
    pub key: String,
    /// What is wrong with it.
    pub problem: AccessProblem,
}

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}, line {line}: `{}` {}", self.document, self.key, self.problem),
            None => write!(f, "{}: `{}` {}", self.document, self.key, self.problem),
        }
    }
}

impl std::error::Error for AccessError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.problem)
    }
}

impl From<AccessError> for braid_core::Error {
    /// An [`braid_core::Error::InvalidRecord`] carrying the whole message.
    fn from(e: AccessError) -> Self {
        braid_core::Error::InvalidRecord { reason: e.to_string() }
    }
}

/// What is wrong with an access key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccessProblem {
    /// `acl` or `tenant` with nothing in it.
    #[error(
        "is empty, which would leave the document to the index's access policy (public by default); list its \
         tokens, or remove the key"
    )]
    Empty,
    /// A value of the wrong type.
    #[error("must be {expected}, not {found}")]
    WrongType {
        /// What the key takes.
        expected: &'static str,
        /// What it holds.
        found: &'static str,
    },
    /// A `tenant` that is not one name (white space or a comma inside).
    #[error("must be one tenant name (no spaces or commas)")]
    NotOneTenant,
    /// `tenant` and `acl` in one document.
    #[error(
        "cannot be combined with `acl` (a tenant token in an ACL admits the whole tenant); use `tenant` alone, or \
         tenant-scoped tokens in `acl`"
    )]
    TenantWithAcl,
    /// The same access key twice.
    #[error("is given twice")]
    Duplicate,
    /// A key that looks like an access key without being exactly one.
    #[error(
        "looks like the access key `{meant}` but is not it: access is read only from the lowercase keys `acl` and \
         `tenant`, and a near-miss is refused rather than leaving the document to the index's policy; rename it"
    )]
    NearMiss {
        /// The access key it resembles: `acl` or `tenant`.
        meant: &'static str,
    },
    /// An access key (or a near-miss) inside a nested object.
    #[error("is inside `{container}`: access keys are read only at the top level of a document; move it there")]
    Misplaced {
        /// The object that holds it (`metadata`).
        container: String,
    },
}

/// A value as a document format holds it, for the access decision.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FieldValue {
    /// JSON `null`.
    Null,
    /// A string (every YAML-subset scalar is one).
    Text(String),
    /// A non-string scalar (a number, a boolean, a TOML date): its kind in words, and its text.
    Typed {
        /// `a number`, `a boolean`, `a date`.
        kind: &'static str,
        /// The value as written, for keys that take text.
        text: String,
    },
    /// A list.
    List(Vec<FieldValue>),
    /// A nested object or table.
    Nested,
}

impl FieldValue {
    /// What the value is, in words, for an error.
    fn kind(&self) -> &'static str {
        match self {
            FieldValue::Null => "null",
            FieldValue::Text(_) => "a string",
            FieldValue::Typed { kind, .. } => kind,
            FieldValue::List(_) => "a list",
            FieldValue::Nested => "an object",
        }
    }

    /// A JSON value's shape.
    pub(crate) fn from_json(value: &serde_json::Value) -> FieldValue {
        use serde_json::Value;
        match value {
            Value::Null => FieldValue::Null,
            Value::Bool(b) => FieldValue::Typed { kind: "a boolean", text: b.to_string() },
            Value::Number(n) => FieldValue::Typed { kind: "a number", text: n.to_string() },
            Value::String(s) => FieldValue::Text(s.clone()),
            Value::Array(items) => FieldValue::List(items.iter().map(FieldValue::from_json).collect()),
            Value::Object(_) => FieldValue::Nested,
        }
    }
}

/// What a key is, for access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Acl,
    Tenant,
    NearMiss(&'static str),
    Other,
}

const ACL: &str = "acl";
const TENANT: &str = "tenant";

/// The role of `key`: exactly `acl` or `tenant`, a near-miss of one, or another key.
fn role(key: &str) -> Role {
    match key {
        ACL => return Role::Acl,
        TENANT => return Role::Tenant,
        _ => {}
    }
    let whole = key.trim().to_lowercase();
    for target in [ACL, TENANT] {
        if within_one_edit(&whole, target) {
            return Role::NearMiss(target);
        }
    }
    for word in words(key) {
        let word = word.to_lowercase();
        if word == ACL || word == "acls" {
            return Role::NearMiss(ACL);
        }
        if within_one_edit(&word, TENANT) {
            return Role::NearMiss(TENANT);
        }
    }
    Role::Other
}

/// The words of a key: runs of letters and digits, also split where a lowercase letter or
/// digit meets an uppercase one (`tenantId` → `tenant`, `Id`).
fn words(key: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut previous_lower = false;
    for (i, c) in key.char_indices() {
        if !c.is_alphanumeric() {
            if let Some(s) = start.take() {
                out.push(&key[s..i]);
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            if let Some(s) = start.replace(i) {
                out.push(&key[s..i]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
        previous_lower = c.is_lowercase() || c.is_numeric();
    }
    if let Some(s) = start {
        out.push(&key[s..]);
    }
    out
}

/// Whether `a` becomes `b` with at most one insertion, deletion, substitution or swap of two
/// neighbouring characters, for words of at least three characters (`al` is not taken for
/// `acl`).
fn within_one_edit(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len() < 3 || a.len().abs_diff(b.len()) > 1 {
        return false;
    }
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if prefix == a.len() && prefix == b.len() {
        return true;
    }
    let (ra, rb) = (&a[prefix..], &b[prefix..]);
    match ra.len().cmp(&rb.len()) {
        std::cmp::Ordering::Equal => {
            ra[1..] == rb[1..] || (ra.len() >= 2 && ra[0] == rb[1] && ra[1] == rb[0] && ra[2..] == rb[2..])
        }
        std::cmp::Ordering::Greater => ra[1..] == *rb,
        std::cmp::Ordering::Less => *ra == rb[1..],
    }
}

/// Reads a document's access from its keys, one at a time, in the order the format holds
/// them; [`AccessReader::finish`] gives the decision. Every format feeds every top-level key
/// to [`AccessReader::key`] and every key of a nested object to [`AccessReader::nested_key`].
pub(crate) struct AccessReader<'d> {
    document: &'d str,
    acl: Option<(Vec<String>, Option<usize>)>,
    tenant: Option<(String, Option<usize>)>,
}

impl<'d> AccessReader<'d> {
    /// A reader for the document named `document` (see [`AccessError::document`]).
    pub(crate) fn new(document: &'d str) -> Self {
        AccessReader { document, acl: None, tenant: None }
    }

    fn error(&self, key: &str, line: Option<usize>, problem: AccessProblem) -> AccessError {
        AccessError { document: self.document.to_string(), line, key: key.to_string(), problem }
    }

    /// Offers a top-level key at `line` of the file: `Ok(true)` when it was an access key (its
    /// value, asked for only then, is read), `Ok(false)` for any other key, for the format to
    /// read.
    ///
    /// # Errors
    /// A near-miss, a duplicate, or a value that is empty or of the wrong type.
    pub(crate) fn key(
        &mut self,
        key: &str,
        line: Option<usize>,
        value: impl FnOnce() -> FieldValue,
    ) -> Result<bool, AccessError> {
        match role(key) {
            Role::Other => Ok(false),
            Role::NearMiss(meant) => Err(self.error(key, line, AccessProblem::NearMiss { meant })),
            Role::Acl => {
                if self.acl.is_some() {
                    return Err(self.error(key, line, AccessProblem::Duplicate));
                }
                let tokens = acl_tokens(value()).map_err(|problem| self.error(key, line, problem))?;
                self.acl = Some((tokens, line));
                Ok(true)
            }
            Role::Tenant => {
                if self.tenant.is_some() {
                    return Err(self.error(key, line, AccessProblem::Duplicate));
                }
                let name = tenant_name(value()).map_err(|problem| self.error(key, line, problem))?;
                self.tenant = Some((name, line));
                Ok(true)
            }
        }
    }

    /// Offers a key of the nested object `container` (a JSONL line's `metadata`).
    ///
    /// # Errors
    /// [`AccessProblem::Misplaced`] when the key is an access key or a near-miss of one.
    pub(crate) fn nested_key(&self, container: &str, key: &str, line: Option<usize>) -> Result<(), AccessError> {
        match role(key) {
            Role::Other => Ok(()),
            _ => Err(self.error(key, line, AccessProblem::Misplaced { container: container.to_string() })),
        }
    }

    /// The decision: [`Access::Policy`] when no access key was offered.
    ///
    /// # Errors
    /// [`AccessProblem::TenantWithAcl`] when both `tenant` and `acl` were.
    pub(crate) fn finish(self) -> Result<Access, AccessError> {
        match (self.acl, self.tenant) {
            (None, None) => Ok(Access::Policy),
            (Some((tokens, _)), None) => Ok(Access::Acl(tokens)),
            (None, Some((name, _))) => Ok(Access::Tenant(name)),
            (Some(_), Some((_, line))) => Err(AccessError {
                document: self.document.to_string(),
                line,
                key: TENANT.to_string(),
                problem: AccessProblem::TenantWithAcl,
            }),
        }
    }
}

/// The tokens of an `acl` value: one string or a list of strings, trimmed, blanks dropped
/// (the index ignores a blank token, so a list of blanks is an empty ACL), at least one left.
fn acl_tokens(value: FieldValue) -> Result<Vec<String>, AccessProblem> {
    const EXPECTED: &str = "a list of token strings (or one token)";
    let items = match value {
        FieldValue::Null => Vec::new(),
        FieldValue::Text(token) => vec![token],
        FieldValue::List(items) => items
            .into_iter()
            .map(|item| match item {
                FieldValue::Text(token) => Ok(token),
                other => Err(AccessProblem::WrongType { expected: EXPECTED, found: list_of(other.kind()) }),
            })
            .collect::<Result<_, _>>()?,
        other => return Err(AccessProblem::WrongType { expected: EXPECTED, found: other.kind() }),
    };
    let tokens: Vec<String> = items.iter().map(|t| t.trim()).filter(|t| !t.is_empty()).map(str::to_string).collect();
    if tokens.is_empty() {
        return Err(AccessProblem::Empty);
    }
    Ok(tokens)
}

/// The name of a `tenant` value: one string, without a `tenant:` prefix, one word.
fn tenant_name(value: FieldValue) -> Result<String, AccessProblem> {
    let text = match value {
        FieldValue::Null => return Err(AccessProblem::Empty),
        FieldValue::Text(text) => text,
        other => return Err(AccessProblem::WrongType { expected: "one tenant name", found: other.kind() }),
    };
    let text = text.trim();
    let name = text.strip_prefix(braid_core::TENANT_PREFIX).unwrap_or(text).trim();
    if name.is_empty() {
        return Err(AccessProblem::Empty);
    }
    if name.contains(char::is_whitespace) || name.contains(',') {
        return Err(AccessProblem::NotOneTenant);
    }
    Ok(name.to_string())
}

/// "a list holding …" for an item's kind.
fn list_of(kind: &'static str) -> &'static str {
    match kind {
        "null" => "a list holding null",
        "a number" => "a list holding a number",
        "a boolean" => "a list holding a boolean",
        "a list" => "a list holding a list",
        "an object" => "a list holding an object",
        _ => "a list holding a non-string",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> FieldValue {
        FieldValue::Text(s.to_string())
    }

    fn number() -> FieldValue {
        FieldValue::Typed { kind: "a number", text: "7".into() }
    }

    fn list(items: &[&str]) -> FieldValue {
        FieldValue::List(items.iter().map(|s| text(s)).collect())
    }

    /// The decision for `keys`, top-level, in order.
    fn decide(keys: &[(&str, FieldValue)]) -> Result<Access, AccessError> {
        let mut reader = AccessReader::new("doc \"d1\"");
        for (i, (key, value)) in keys.iter().enumerate() {
            reader.key(key, Some(i + 1), || value.clone())?;
        }
        reader.finish()
    }

    fn problem(keys: &[(&str, FieldValue)]) -> AccessProblem {
        decide(keys).unwrap_err().problem
    }

    #[test]
    fn no_access_key_leaves_the_policy_and_other_keys_pass() {
        assert_eq!(decide(&[]).unwrap(), Access::Policy);
        for key in
            ["title", "text", "_id", "metadata", "tags", "url", "lang", "audience", "updated", "oracle", "act_id"]
        {
            assert_eq!(decide(&[(key, text("x"))]).unwrap(), Access::Policy, "{key}");
        }
    }

    #[test]
    fn acl_and_tenant_are_read() {
        assert_eq!(
            decide(&[("acl", list(&[" group:a ", "", "user:1"]))]).unwrap(),
            Access::Acl(vec!["group:a".into(), "user:1".into()])
        );
        assert_eq!(decide(&[("acl", text("public"))]).unwrap(), Access::Acl(vec!["public".into()]));
        assert_eq!(decide(&[("tenant", text("acme"))]).unwrap().tokens(), ["tenant:acme"]);
        assert_eq!(decide(&[("tenant", text("tenant:acme"))]).unwrap(), Access::Tenant("acme".into()));
    }

    #[test]
    fn empty_acl_and_tenant_are_errors() {
        for value in [list(&[]), list(&["", "  "]), text(""), text(" "), FieldValue::Null] {
            assert_eq!(problem(&[("acl", value.clone())]), AccessProblem::Empty, "{value:?}");
        }
        for value in [text(""), text("tenant:"), FieldValue::Null] {
            assert_eq!(problem(&[("tenant", value.clone())]), AccessProblem::Empty, "{value:?}");
        }
    }

    #[test]
    fn wrong_types_are_errors() {
        let wrong = |p: AccessProblem| matches!(p, AccessProblem::WrongType { .. });
        assert!(wrong(problem(&[("acl", number())])));
        assert!(wrong(problem(&[("acl", FieldValue::Nested)])));
        assert!(wrong(problem(&[("acl", FieldValue::List(vec![text("g"), number()]))])));
        assert!(wrong(problem(&[("acl", FieldValue::List(vec![FieldValue::Null]))])));
        assert!(wrong(problem(&[("tenant", list(&["a"]))])));
        assert!(wrong(problem(&[("tenant", list(&[]))])));
        assert!(wrong(problem(&[("tenant", FieldValue::Typed { kind: "a boolean", text: "true".into() })])));
        assert_eq!(problem(&[("tenant", text("two words"))]), AccessProblem::NotOneTenant);
        assert_eq!(problem(&[("tenant", text("a,b"))]), AccessProblem::NotOneTenant);
    }

    #[test]
    fn tenant_with_acl_and_duplicates_are_errors() {
        let e = decide(&[("acl", list(&["g"])), ("tenant", text("acme"))]).unwrap_err();
        assert_eq!((e.key.as_str(), e.line, e.problem), ("tenant", Some(2), AccessProblem::TenantWithAcl));
        assert_eq!(problem(&[("tenant", text("a")), ("acl", list(&["g"]))]), AccessProblem::TenantWithAcl);
        assert_eq!(problem(&[("acl", list(&["g"])), ("acl", list(&["public"]))]), AccessProblem::Duplicate);
        assert_eq!(problem(&[("tenant", text("a")), ("tenant", text("b"))]), AccessProblem::Duplicate);
    }

    #[test]
    fn near_misses_are_errors_naming_the_key() {
        for (key, meant) in [
            ("ACL", "acl"),
            ("Acl", "acl"),
            ("acls", "acl"),
            ("ACLs", "acl"),
            ("acl ", "acl"),
            ("_acl", "acl"),
            ("alc", "acl"),
            ("acl_list", "acl"),
            ("allowedAcls", "acl"),
            ("Tenant", "tenant"),
            ("TENANT", "tenant"),
            ("tennant", "tenant"),
            ("tenants", "tenant"),
            ("tenat", "tenant"),
            ("tenant_id", "tenant"),
            ("tenantId", "tenant"),
            ("X-Tenant", "tenant"),
        ] {
            let e = decide(&[(key, list(&["secret-token"]))]).unwrap_err();
            assert_eq!(e.problem, AccessProblem::NearMiss { meant }, "{key}");
            assert_eq!(e.key, key);
            let message = e.to_string();
            assert!(message.contains("d1") && message.contains(&format!("`{key}`")), "{message}");
            assert!(!message.contains("secret-token"), "the value stays out of the message: {message}");
        }
    }

    #[test]
    fn access_keys_inside_nested_objects_are_errors() {
        let reader = AccessReader::new("doc");
        for key in ["acl", "tenant", "ACL", "tenant_id"] {
            let e = reader.nested_key("metadata", key, Some(3)).unwrap_err();
            assert_eq!(e.problem, AccessProblem::Misplaced { container: "metadata".into() }, "{key}");
        }
        assert!(reader.nested_key("metadata", "url", None).is_ok());
    }

    #[test]
    fn one_edit() {
        assert!(within_one_edit("acl", "acl"));
        assert!(within_one_edit("acls", "acl"));
        assert!(within_one_edit("cal", "acl"));
        assert!(within_one_edit("tennant", "tenant"));
        assert!(within_one_edit("tenat", "tenant"));
        assert!(within_one_edit("tenamt", "tenant"));
        assert!(!within_one_edit("al", "acl"), "two letters are too short to be taken for a key");
        assert!(!within_one_edit("oracle", "acl"));
        assert!(!within_one_edit("text", "tenant"));
        assert!(!within_one_edit("title", "tenant"));
        assert!(!within_one_edit("tenanted", "tenant"));
        assert_eq!(words("tenantId"), ["tenant", "Id"]);
        assert_eq!(words("allowed_ACLs"), ["allowed", "ACLs"]);
        assert_eq!(words("x-tenant.name"), ["x", "tenant", "name"]);
    }
}
