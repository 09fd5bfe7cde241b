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
//!   tenants, and in YAML an unquoted `null`, `~`, `true`, `false`, anchor, alias, tag or
//!   `{…}` mapping), a tenant that is not one name ([`braid_core::is_tenant_name`]) or names
//!   a second prefix (`tenant:tenant:acme`);
//! - an ACL token with white space or a comma inside (`"group:a, group:b"` is one token: a
//!   list is meant), with an invisible or control character, or whose prefix reads as
//!   `tenant:`, `owner:` or `__braid:` only once folded (`Tenant:acme`, `OWNER:x`): such a
//!   token would be a plain one, without the rule its prefix carries;
//! - `tenant` together with `acl` (a tenant token in an ACL admits the whole tenant, which
//!   would widen a group list);
//! - a key that looks like an access key but is not exactly one. Keys are compared folded
//!   (Unicode NFKC, invisible characters dropped, lowercase: `ａｃｌ` and `a\u{200B}cl` read as
//!   `acl`); a near-miss is another letter case (`ACL`, `Tenant`), one edit away from `acl`
//!   or `tenant` (`acls`, `tennant`), a key holding the word `acl`, `acls` or a word one edit
//!   from `tenant` (`tenant_id`, `allowedAcls`), or one whose letters and digits start with
//!   `tenant` or start or end with `acl`/`acls` (`tenantid`, `aclgroups`, `readacl`; not
//!   `oracle`). A near-miss is refused, never read as the key, so that one spelling holds in
//!   every format;
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
    /// A `tenant` that is not one name (white space, a comma or a `/` inside, see
    /// [`braid_core::is_tenant_name`]).
    #[error("must be one tenant name (no spaces, commas or `/`)")]
    NotOneTenant,
    /// A `tenant` whose name, its one optional `tenant:` prefix aside, starts with a prefix
    /// again (`tenant:tenant:acme`, `owner:x`).
    #[error(
        "must be one tenant name, written once: after its optional `tenant:` prefix, the name cannot start with \
         `tenant:`, `owner:` or `__braid:`"
    )]
    PrefixedTenant,
    /// An ACL token with white space or a comma inside: several tokens written as one string.
    #[error(
        "holds a token with white space or a comma inside; give several tokens as a list (`[group:a, group:b]`), \
         each token one word"
    )]
    NotOneToken,
    /// A token or tenant name holding an invisible (Unicode format) or control character.
    #[error("holds an invisible or control character inside a token; remove it")]
    Invisible,
    /// A token or tenant whose prefix reads as `tenant:`, `owner:` or `__braid:` only once
    /// folded (another letter case, full-width letters, an invisible character): Braid reads
    /// the prefix only as written, so the token would be a plain one, without its rule.
    #[error(
        "holds a token that starts like `{prefix}` in another letter case or spelling; Braid reads the prefix only \
         exactly as `{prefix}`, and any other spelling would be a plain token without its rule; write `{prefix}`"
    )]
    LookalikePrefix {
        /// The prefix it resembles: `tenant:`, `owner:` or `__braid:`.
        prefix: &'static str,
    },
    /// A `tenant:` token in an ACL whose name is not one tenant name.
    #[error(
        "holds a `tenant:` token whose name is not one tenant name (no spaces, commas or `/`, and no second \
         prefix); write `tenant:{{name}}`"
    )]
    BadTenantToken,
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
    /// A non-string scalar (a number, a boolean, a TOML date, an unquoted YAML `null` or `~`,
    /// anchor, alias or tag): its kind in words, and its text.
    Typed {
        /// `a number`, `a boolean`, `a date`, `null`, [`YAML_REFERENCE`].
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

/// The role of `key`: exactly `acl` or `tenant`, a near-miss of one, or another key. Every
/// test but the exact one looks at the key folded ([`visible`], then lowercase), so that a
/// full-width or invisible-character spelling is a near-miss, never another key.
fn role(key: &str) -> Role {
    match key {
        ACL => return Role::Acl,
        TENANT => return Role::Tenant,
        _ => {}
    }
    let visible = visible(key);
    let whole = visible.trim().to_lowercase();
    for target in [ACL, TENANT] {
        if within_one_edit(&whole, target) {
            return Role::NearMiss(target);
        }
    }
    for word in words(&visible) {
        let word = word.to_lowercase();
        if word == ACL || word == "acls" {
            return Role::NearMiss(ACL);
        }
        if within_one_edit(&word, TENANT) {
            return Role::NearMiss(TENANT);
        }
    }
    // Run-together spellings: `tenantid`, `tenantname`, `aclgroups`, `readacl`. Only the ends
    // count for `acl`, which ordinary words hold inside (`oracle`, `miracles`).
    let compact: String = whole.chars().filter(|c| c.is_alphanumeric()).collect();
    if compact.starts_with(TENANT) {
        return Role::NearMiss(TENANT);
    }
    if compact.starts_with(ACL) || compact.ends_with(ACL) || compact.ends_with("acls") {
        return Role::NearMiss(ACL);
    }
    Role::Other
}

/// Whether `key` is an access key or a near-miss of one: a key no document may use but for
/// its access.
pub(crate) fn is_access_like(key: &str) -> bool {
    role(key) != Role::Other
}

/// `text` in Unicode compatibility form (NFKC: full-width `ａｃｌ` is `acl`, `ﬁ` is `fi`),
/// with its invisible characters dropped ([`is_invisible`]). Letter case is kept.
pub(crate) fn visible(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    if text.is_ascii() {
        // ASCII is its own NFKC form and holds no invisible character.
        return text.to_string();
    }
    text.nfkc().filter(|&c| !is_invisible(c)).collect()
}

/// Whether `c` is invisible: a Unicode format character (general category Cf: zero-width
/// spaces and joiners, bidirectional marks, word joiners, the byte order mark, soft hyphen,
/// tags) or another default-ignorable one (variation selectors, Hangul fillers, the
/// combining grapheme joiner).
pub(crate) fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{0600}'..='\u{0605}'
            | '\u{061C}'
            | '\u{06DD}'
            | '\u{070F}'
            | '\u{0890}'..='\u{0891}'
            | '\u{08E2}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFFB}'
            | '\u{110BD}'
            | '\u{110CD}'
            | '\u{13430}'..='\u{1343F}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}'
    )
}

/// The prefixes whose spelling carries a rule: a look-alike is refused ([`lookalike_prefix`]).
const PREFIXES: [&str; 3] = [braid_core::TENANT_PREFIX, braid_core::OWNER_PREFIX, braid_core::RESERVED_PREFIX];

/// The prefix `text` starts with once folded ([`visible`], lowercase) but not as written
/// (`Tenant:acme`, `ＯＷＮＥＲ:x`, `__BRAID:x`): a token that would lose its prefix's rule.
fn lookalike_prefix(text: &str) -> Option<&'static str> {
    let folded = visible(text).to_lowercase();
    PREFIXES.into_iter().find(|p| folded.starts_with(p) && !text.starts_with(p))
}

/// Whether `name` starts, once folded, with one of [`PREFIXES`].
fn has_prefix(name: &str) -> bool {
    let folded = visible(name).to_lowercase();
    PREFIXES.iter().any(|p| folded.starts_with(p))
}

/// Whether `text` holds an invisible ([`is_invisible`]) or control character.
fn has_invisible(text: &str) -> bool {
    text.chars().any(|c| is_invisible(c) || c.is_control())
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
/// (the index ignores a blank token, so a list of blanks is an empty ACL), at least one left,
/// each one word ([`check_token`]).
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
    for token in &tokens {
        check_token(token)?;
    }
    Ok(tokens)
}

/// A trimmed ACL token that is exactly one token: no white space or comma inside (a list
/// written as one string), no invisible or control character, no look-alike of a prefix with
/// a rule, and after `tenant:` one tenant name.
fn check_token(token: &str) -> Result<(), AccessProblem> {
    if token.contains(|c: char| c.is_whitespace() || c == ',') {
        return Err(AccessProblem::NotOneToken);
    }
    if has_invisible(token) {
        return Err(AccessProblem::Invisible);
    }
    if let Some(prefix) = lookalike_prefix(token) {
        return Err(AccessProblem::LookalikePrefix { prefix });
    }
    if let Some(name) = token.strip_prefix(braid_core::TENANT_PREFIX) {
        if !braid_core::is_tenant_name(name) || has_prefix(name) {
            return Err(AccessProblem::BadTenantToken);
        }
    }
    Ok(())
}

/// The name of a `tenant` value: one string, without one optional `tenant:` prefix (written
/// exactly so), one name ([`braid_core::is_tenant_name`]) that does not start with a prefix
/// again.
fn tenant_name(value: FieldValue) -> Result<String, AccessProblem> {
    let text = match value {
        FieldValue::Null => return Err(AccessProblem::Empty),
        FieldValue::Text(text) => text,
        other => return Err(AccessProblem::WrongType { expected: "one tenant name", found: other.kind() }),
    };
    let text = text.trim();
    if let Some(prefix) = lookalike_prefix(text) {
        return Err(AccessProblem::LookalikePrefix { prefix });
    }
    let name = text.strip_prefix(braid_core::TENANT_PREFIX).unwrap_or(text).trim();
    if name.is_empty() {
        return Err(AccessProblem::Empty);
    }
    if has_invisible(name) {
        return Err(AccessProblem::Invisible);
    }
    if !braid_core::is_tenant_name(name) {
        return Err(AccessProblem::NotOneTenant);
    }
    if has_prefix(name) {
        return Err(AccessProblem::PrefixedTenant);
    }
    Ok(name.to_string())
}

/// The kind of an unquoted YAML scalar that starts with `&`, `*` or `!`.
pub(crate) const YAML_REFERENCE: &str = "an unquoted YAML anchor, alias or tag (`&`, `*`, `!`; quote the value)";

/// "a list holding …" for an item's kind.
fn list_of(kind: &'static str) -> &'static str {
    match kind {
        "null" => "a list holding null",
        "a number" => "a list holding a number",
        "a boolean" => "a list holding a boolean",
        "a list" => "a list holding a list",
        "an object" => "a list holding an object",
        YAML_REFERENCE => "a list holding an unquoted YAML anchor, alias or tag",
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

    /// The auditor's keys, each read as metadata and so left public before: full-width,
    /// invisible characters inside, run together. Ordinary words holding `acl` inside stay
    /// ordinary keys.
    #[test]
    fn folded_and_run_together_keys_are_near_misses() {
        for (key, meant) in [
            ("\u{ff41}\u{ff43}\u{ff4c}", "acl"),
            ("\u{ff34}\u{ff45}\u{ff4e}\u{ff41}\u{ff4e}\u{ff54}", "tenant"),
            ("\u{ff54}\u{ff45}\u{ff4e}\u{ff41}\u{ff4e}\u{ff54}", "tenant"),
            ("a\u{200B}c\u{200B}l", "acl"),
            ("\u{feff}acl", "acl"),
            ("a\u{2060}c\u{00AD}l\u{200D}", "acl"),
            ("t\u{200B}e\u{200C}n\u{200D}a\u{2060}n\u{FE0F}t", "tenant"),
            ("\u{1d41a}\u{1d41c}\u{1d425}", "acl"),
            ("tenantid", "tenant"),
            ("tenantname", "tenant"),
            ("TenantName", "tenant"),
            ("tenant2", "tenant"),
            ("aclgroups", "acl"),
            ("readacl", "acl"),
            ("readacls", "acl"),
            ("ReadACL", "acl"),
            ("acl2", "acl"),
        ] {
            let e = decide(&[(key, list(&["group:a"]))]).unwrap_err();
            assert_eq!(e.problem, AccessProblem::NearMiss { meant }, "{key:?}");
            assert_eq!(e.key, key);
            let nested = AccessReader::new("doc").nested_key("metadata", key, None).unwrap_err();
            assert!(matches!(nested.problem, AccessProblem::Misplaced { .. }), "{key:?}");
        }
        for key in
            ["oracle", "miracles", "debacle", "tentacle", "spectacles", "lieutenant", "tenancy", "tent", "acme", "lac"]
        {
            assert_eq!(decide(&[(key, text("x"))]).unwrap(), Access::Policy, "{key}");
        }
    }

    /// A token whose prefix is `tenant:`, `owner:` or `__braid:` only once folded was a plain
    /// token: `Tenant:acme` dropped the tenant rule. A list written as one string was one
    /// token. Each is refused, naming the key, never the token.
    #[test]
    fn tokens_that_are_not_exactly_one_token_are_refused() {
        let lookalike = |prefix| AccessProblem::LookalikePrefix { prefix };
        for (token, expected) in [
            ("Tenant:acme", lookalike("tenant:")),
            ("TENANT:acme", lookalike("tenant:")),
            ("\u{ff54}\u{ff45}\u{ff4e}\u{ff41}\u{ff4e}\u{ff54}:acme", lookalike("tenant:")),
            ("tenant\u{ff1a}acme", lookalike("tenant:")),
            ("Owner:x", lookalike("owner:")),
            ("OWNER:token:alice", lookalike("owner:")),
            ("__BRAID:no-acl", lookalike("__braid:")),
            ("team:x, team:y", AccessProblem::NotOneToken),
            ("team:x,team:y", AccessProblem::NotOneToken),
            ("team:x team:y", AccessProblem::NotOneToken),
            ("team:x\tteam:y", AccessProblem::NotOneToken),
            ("group:a\u{200B}", AccessProblem::Invisible),
            ("tenant\u{200B}:acme", AccessProblem::Invisible),
            ("group:\u{1}a", AccessProblem::Invisible),
            ("tenant:acme/x", AccessProblem::BadTenantToken),
            ("tenant:tenant:acme", AccessProblem::BadTenantToken),
            ("tenant:Owner:x", AccessProblem::BadTenantToken),
        ] {
            for value in [text(token), list(&["group:ok", token])] {
                let e = decide(&[("acl", value.clone())]).unwrap_err();
                assert_eq!(e.problem, expected, "{token:?} in {value:?}");
                assert!(!e.to_string().contains(token), "the token stays out of the message: {e}");
            }
        }
        assert_eq!(problem(&[("acl", list(&["tenant:"]))]), AccessProblem::BadTenantToken);
        assert!(decide(&[("acl", text("group:a, group:b"))]).unwrap_err().to_string().contains("as a list"));
        let fine =
            ["public", "group:a", "user:1", "tenant:acme", "owner:token:alice", "tenant:acme.eu", "group:Ünïcode"];
        assert_eq!(decide(&[("acl", list(&fine))]).unwrap().tokens(), fine);
    }

    #[test]
    fn tenant_names_are_one_name_written_once() {
        for (value, expected) in [
            ("acme/x", AccessProblem::NotOneTenant),
            ("tenant:acme/x", AccessProblem::NotOneTenant),
            ("tenant:tenant:acme", AccessProblem::PrefixedTenant),
            ("tenant:Tenant:acme", AccessProblem::PrefixedTenant),
            ("owner:x", AccessProblem::PrefixedTenant),
            ("__braid:x", AccessProblem::PrefixedTenant),
            ("Tenant:acme", AccessProblem::LookalikePrefix { prefix: "tenant:" }),
            ("ac\u{200B}me", AccessProblem::Invisible),
        ] {
            assert_eq!(problem(&[("tenant", text(value))]), expected, "{value:?}");
        }
        assert_eq!(decide(&[("tenant", text(" tenant:acme "))]).unwrap(), Access::Tenant("acme".into()));
    }

    #[test]
    fn typed_scalars_are_not_tokens() {
        let typed = |kind, text: &str| FieldValue::Typed { kind, text: text.into() };
        for (key, value, found) in [
            ("acl", typed("null", "~"), "not null"),
            ("acl", typed("a boolean", "true"), "not a boolean"),
            ("acl", typed(YAML_REFERENCE, "&x [group:a]"), "YAML anchor"),
            ("acl", FieldValue::List(vec![typed("null", "null")]), "a list holding null"),
            ("acl", FieldValue::List(vec![typed(YAML_REFERENCE, "*x")]), "a list holding an unquoted YAML anchor"),
            ("tenant", typed("null", "null"), "not null"),
            ("tenant", typed(YAML_REFERENCE, "!t acme"), "YAML anchor"),
        ] {
            let e = decide(&[(key, value.clone())]).unwrap_err();
            assert!(e.to_string().contains(found), "{value:?}: {e}");
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
