//! Who may see what: principals, the index's policy for records without an ACL, and the
//! allowed set every recall leg is confined to.

use std::collections::BTreeSet;

use crate::{Filter, Ordinal};

/// The ACL token every principal holds and every public record may carry.
pub const PUBLIC_TOKEN: &str = "public";
/// Tokens that start with this prefix name a tenant (`tenant:acme`).
pub const TENANT_PREFIX: &str = "tenant:";
/// Tokens that start with this prefix name an **owner** (`owner:user:corp/alice`): a
/// conjunctive scope. A record whose ACL names owner tokens is visible only to a principal
/// holding one of them, whatever else its ACL grants — as a tenant token confines a record to
/// its tenant. An agent's memory carries its tenant and its owner, so it is visible to that
/// owner in that tenant alone. Owner tokens are granted from a verified identity only (the
/// server derives one per caller and refuses them in its configuration).
pub const OWNER_PREFIX: &str = "owner:";
/// Braid's own namespace: [`NO_ACL_TOKEN`], [`NO_TENANT_TOKEN`] and any later internal term
/// start with it. No record ACL, principal or server configuration may use a token that does
/// ([`crate::Error::ReservedToken`]).
pub const RESERVED_PREFIX: &str = "__braid:";
/// Indexed in place of ACL tokens when a record has none.
pub const NO_ACL_TOKEN: &str = "__braid:no-acl";
/// Indexed in place of tenant tokens when a record names no tenant.
pub const NO_TENANT_TOKEN: &str = "__braid:no-tenant";

/// Who is asking: a set of ACL tokens such as `tenant:acme`, `group:support`, `user:42`.
///
/// A principal comes from verified credentials only — the embedding application's own auth
/// code, an operator's command line, a server's token map — never from text a user or a model
/// typed. So it has private fields and no `Default`, `From<&str>` or `Deserialize`. Every
/// principal also holds the `public` token.
///
/// ```
/// use braid_core::Principal;
/// let p = Principal::from_verified_tokens(["tenant:acme", "group:support"]);
/// assert!(p.tokens().any(|t| t == "public"));
/// assert_eq!(p.tenants().collect::<Vec<_>>(), ["tenant:acme"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    tokens: BTreeSet<String>,
}

/// Whether `token` (trimmed) lies in Braid's reserved namespace ([`RESERVED_PREFIX`]).
pub fn is_reserved_token(token: &str) -> bool {
    token.trim().starts_with(RESERVED_PREFIX)
}

impl Principal {
    /// Builds a principal from tokens the caller has verified. Blank tokens are dropped and
    /// surrounding white space is trimmed; the `public` token is always added.
    ///
    /// Tokens in Braid's reserved namespace (`__braid:…`) are dropped too, so that a principal
    /// never holds more than its caller meant (holding `__braid:no-acl` would see the records
    /// without an ACL under [`AccessPolicy::Deny`]). Use
    /// [`Principal::try_from_verified_tokens`] to have them refused with an error instead.
    pub fn from_verified_tokens<I, S>(tokens: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut set: BTreeSet<String> = tokens
            .into_iter()
            .map(|t| t.as_ref().trim().to_string())
            .filter(|t| !t.is_empty() && !is_reserved_token(t))
            .collect();
        set.insert(PUBLIC_TOKEN.to_string());
        Principal { tokens: set }
    }

    /// As [`Principal::from_verified_tokens`], but a token in Braid's reserved namespace is an
    /// error rather than dropped: what operators' command lines and configurations use.
    ///
    /// # Errors
    /// [`crate::Error::ReservedToken`] naming the first such token.
    ///
    /// ```
    /// use braid_core::Principal;
    /// assert!(Principal::try_from_verified_tokens(["tenant:acme"]).is_ok());
    /// assert!(Principal::try_from_verified_tokens(["__braid:no-acl"]).is_err());
    /// ```
    pub fn try_from_verified_tokens<I, S>(tokens: I) -> crate::Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let tokens: Vec<S> = tokens.into_iter().collect();
        if let Some(t) = tokens.iter().find(|t| is_reserved_token(t.as_ref())) {
            return Err(crate::Error::ReservedToken { token: t.as_ref().trim().to_string() });
        }
        Ok(Self::from_verified_tokens(tokens))
    }

    /// An anonymous caller: sees public records only.
    pub fn public() -> Self {
        Self::from_verified_tokens(std::iter::empty::<&str>())
    }

    /// The principal's tokens, sorted.
    pub fn tokens(&self) -> impl Iterator<Item = &str> {
        self.tokens.iter().map(String::as_str)
    }

    /// The principal's tenant tokens (`tenant:…`), sorted.
    pub fn tenants(&self) -> impl Iterator<Item = &str> {
        self.tokens().filter(|t| t.starts_with(TENANT_PREFIX))
    }

    /// The principal's owner tokens (`owner:…`, see [`OWNER_PREFIX`]), sorted.
    pub fn owners(&self) -> impl Iterator<Item = &str> {
        self.tokens().filter(|t| t.starts_with(OWNER_PREFIX))
    }

    /// Whether the principal holds `token`.
    pub fn has(&self, token: &str) -> bool {
        self.tokens.contains(token)
    }
}

/// What happens to records that carry no ACL tokens. Chosen when an index is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccessPolicy {
    /// Records without an ACL are visible to everyone (the default, so public datasets work).
    #[default]
    Public,
    /// Records without an ACL are visible to no one.
    Deny,
}

/// The rule that decides visibility for one request: a principal, the index policy and the
/// request's structured filter. Every leg derives its restriction from this one value.
#[derive(Debug, Clone)]
pub struct Visibility {
    principal: Principal,
    policy: AccessPolicy,
    filter: Option<Filter>,
}

impl Visibility {
    /// Combines a principal, the index's policy and an optional structured filter.
    pub fn new(principal: Principal, policy: AccessPolicy, filter: Option<Filter>) -> Self {
        Visibility { principal, policy, filter }
    }

    /// The principal.
    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    /// The index policy for records without an ACL.
    pub fn policy(&self) -> AccessPolicy {
        self.policy
    }

    /// The structured filter, if any.
    pub fn filter(&self) -> Option<&Filter> {
        self.filter.as_ref()
    }

    /// The ACL tokens a record may carry to be visible: the principal's tokens, plus
    /// [`NO_ACL_TOKEN`] when the policy makes records without an ACL public.
    pub fn acl_terms(&self) -> Vec<&str> {
        let mut terms: Vec<&str> = self.principal.tokens().collect();
        if self.policy == AccessPolicy::Public {
            terms.push(NO_ACL_TOKEN);
        }
        terms
    }

    /// The tenant tokens a record may carry to be visible: the principal's tenants plus
    /// [`NO_TENANT_TOKEN`].
    pub fn tenant_terms(&self) -> Vec<&str> {
        let mut terms: Vec<&str> = self.principal.tenants().collect();
        terms.push(NO_TENANT_TOKEN);
        terms
    }

    /// The owner tokens a record naming owners must carry one of to be visible: the
    /// principal's (see [`OWNER_PREFIX`]).
    pub fn owner_terms(&self) -> Vec<&str> {
        self.principal.owners().collect()
    }

    /// The reference rule, on a record's raw ACL: visible iff the ACL meets the principal's
    /// tokens and, for each conjunctive class the ACL names — tenants (`tenant:…`) and owners
    /// (`owner:…`) — one token of that class is the principal's. Indexes implement the same
    /// rule with indexed terms; tests compare them with this oracle.
    pub fn admits_acl(&self, acl: &[String]) -> bool {
        let acl: Vec<&str> = acl.iter().map(|t| t.trim()).filter(|t| !t.is_empty()).collect();
        if acl.is_empty() {
            return self.policy == AccessPolicy::Public;
        }
        let meets = acl.iter().any(|t| self.principal.has(t));
        let class_ok = |prefix: &str| {
            let named: Vec<&&str> = acl.iter().filter(|t| t.starts_with(prefix)).collect();
            named.is_empty() || named.iter().any(|t| self.principal.has(t))
        };
        meets && class_ok(TENANT_PREFIX) && class_ok(OWNER_PREFIX)
    }
}

/// A set of ordinals, as a plain bitset.
#[derive(Debug, Clone, Default)]
pub struct OrdSet {
    words: Vec<u64>,
    len: usize,
}

/// Two sets are equal when they hold the same ordinals, whatever words a removal left empty.
impl PartialEq for OrdSet {
    fn eq(&self, other: &Self) -> bool {
        let (short, long) = if self.words.len() <= other.words.len() { (self, other) } else { (other, self) };
        self.len == other.len
            && short.words == long.words[..short.words.len()]
            && long.words[short.words.len()..].iter().all(|&w| w == 0)
    }
}

impl Eq for OrdSet {}

impl OrdSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `ord`; returns whether it was new.
    pub fn insert(&mut self, ord: Ordinal) -> bool {
        let (w, b) = ((ord / 64) as usize, ord % 64);
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
        }
        let mask = 1u64 << b;
        let new = self.words[w] & mask == 0;
        self.words[w] |= mask;
        self.len += usize::from(new);
        new
    }

    /// Removes `ord`; returns whether it was there.
    pub fn remove(&mut self, ord: Ordinal) -> bool {
        let (w, b) = ((ord / 64) as usize, ord % 64);
        let mask = 1u64 << b;
        match self.words.get_mut(w) {
            Some(word) if *word & mask != 0 => {
                *word &= !mask;
                self.len -= 1;
                true
            }
            _ => false,
        }
    }

    /// The ordinals in both sets, in one pass over the shorter one's words.
    ///
    /// ```
    /// use braid_core::OrdSet;
    /// let a: OrdSet = [1, 5, 64, 200].into_iter().collect();
    /// let b: OrdSet = [5, 64, 65].into_iter().collect();
    /// assert_eq!(a.intersection(&b).iter().collect::<Vec<_>>(), [5, 64]);
    /// ```
    pub fn intersection(&self, other: &OrdSet) -> OrdSet {
        let mut words: Vec<u64> = self.words.iter().zip(&other.words).map(|(a, b)| a & b).collect();
        while words.last() == Some(&0) {
            words.pop();
        }
        let len = words.iter().map(|w| w.count_ones() as usize).sum();
        OrdSet { words, len }
    }

    /// Adds every ordinal of `other`.
    pub fn union_with(&mut self, other: &OrdSet) {
        if other.words.len() > self.words.len() {
            self.words.resize(other.words.len(), 0);
        }
        for (word, theirs) in self.words.iter_mut().zip(&other.words) {
            *word |= theirs;
        }
        self.len = self.words.iter().map(|w| w.count_ones() as usize).sum();
    }

    /// Whether `ord` is in the set.
    pub fn contains(&self, ord: Ordinal) -> bool {
        let w = (ord / 64) as usize;
        w < self.words.len() && self.words[w] & (1u64 << (ord % 64)) != 0
    }

    /// The number of ordinals in the set.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes the set holds on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.words.capacity() * std::mem::size_of::<u64>()
    }

    /// The ordinals in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = Ordinal> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros() as u64;
                bits &= bits - 1;
                Some(w as u64 * 64 + b)
            })
        })
    }
}

impl FromIterator<Ordinal> for OrdSet {
    fn from_iter<T: IntoIterator<Item = Ordinal>>(iter: T) -> Self {
        let mut set = OrdSet::new();
        for ord in iter {
            set.insert(ord);
        }
        set
    }
}

/// The records one request may touch, computed first, before any ranking.
///
/// Every recall leg takes `&AllowedSet` (never an `Option`), so no leg can run unfiltered:
/// legs inside the inverted index apply [`AllowedSet::visibility`] as a filter query; the
/// vector leg confines itself to [`AllowedSet::ords`]. Later stages only narrow it.
#[derive(Debug, Clone)]
pub struct AllowedSet {
    visibility: Visibility,
    ords: OrdSet,
}

impl AllowedSet {
    /// Made by the visibility stage from the rule and the ordinals it admits. Only the engine's
    /// leaf crates build one: the `braid` facade never takes an allowed set from a caller (every
    /// search and read takes a [`Principal`]), so a set made by hand cannot widen a search.
    pub fn new(visibility: Visibility, ords: OrdSet) -> Self {
        AllowedSet { visibility, ords }
    }

    /// The rule this set was computed from.
    pub fn visibility(&self) -> &Visibility {
        &self.visibility
    }

    /// The admitted ordinals.
    pub fn ords(&self) -> &OrdSet {
        &self.ords
    }

    /// Whether `ord` is admitted.
    pub fn contains(&self, ord: Ordinal) -> bool {
        self.ords.contains(ord)
    }

    /// The number of admitted records.
    pub fn len(&self) -> usize {
        self.ords.len()
    }

    /// Whether nothing is admitted.
    pub fn is_empty(&self) -> bool {
        self.ords.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acl(tokens: &[&str]) -> Vec<String> {
        tokens.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn principal_always_holds_public_and_drops_blanks() {
        let p = Principal::from_verified_tokens([" group:support ", ""]);
        assert_eq!(p.tokens().collect::<Vec<_>>(), ["group:support", "public"]);
    }

    #[test]
    fn visibility_rules() {
        let acme_support = Visibility::new(
            Principal::from_verified_tokens(["tenant:acme", "group:support"]),
            AccessPolicy::Public,
            None,
        );
        assert!(acme_support.admits_acl(&acl(&["public"])));
        assert!(acme_support.admits_acl(&acl(&[])));
        assert!(acme_support.admits_acl(&acl(&["group:support"])));
        assert!(acme_support.admits_acl(&acl(&["tenant:acme"])));
        assert!(!acme_support.admits_acl(&acl(&["tenant:globex"])));
        // Support agents of another tenant do not see a tenant-scoped support record.
        assert!(!acme_support.admits_acl(&acl(&["tenant:globex", "group:support"])));
        let deny = Visibility::new(Principal::public(), AccessPolicy::Deny, None);
        assert!(!deny.admits_acl(&acl(&[])));
        assert!(deny.admits_acl(&acl(&["public"])));
    }

    #[test]
    fn owner_tokens_are_conjunctive() {
        let alice = Visibility::new(
            Principal::from_verified_tokens(["tenant:acme", "owner:user:idp/alice", "group:support"]),
            AccessPolicy::Public,
            None,
        );
        let bob = Visibility::new(
            Principal::from_verified_tokens(["tenant:acme", "owner:user:idp/bob", "group:support"]),
            AccessPolicy::Public,
            None,
        );
        let memory = acl(&["tenant:acme", "owner:user:idp/alice"]);
        assert!(alice.admits_acl(&memory));
        // The tenant token alone no longer admits it: bob shares the tenant, not the owner.
        assert!(!bob.admits_acl(&memory));
        // Nor does any disjunctive token the record also names.
        assert!(!bob.admits_acl(&acl(&["tenant:acme", "owner:user:idp/alice", "group:support", "public"])));
        assert!(!bob.admits_acl(&acl(&["owner:user:idp/alice", "public"])));
        // Several owners: any of them.
        assert!(bob.admits_acl(&acl(&["tenant:acme", "owner:user:idp/alice", "owner:user:idp/bob"])));
        // The owner does not escape the tenant check: alice in another tenant sees nothing.
        let alice_globex = Visibility::new(
            Principal::from_verified_tokens(["tenant:globex", "owner:user:idp/alice"]),
            AccessPolicy::Public,
            None,
        );
        assert!(!alice_globex.admits_acl(&memory));
        assert!(alice_globex.admits_acl(&acl(&["owner:user:idp/alice"])));
        // A principal without owner tokens sees no owned record, even a "public" one.
        let anyone = Visibility::new(Principal::public(), AccessPolicy::Public, None);
        assert!(!anyone.admits_acl(&acl(&["public", "owner:user:idp/alice"])));
        assert_eq!(alice.owner_terms(), ["owner:user:idp/alice"]);
        assert!(anyone.owner_terms().is_empty());
    }

    #[test]
    fn ordset_roundtrip() {
        let set: OrdSet = [3, 64, 0, 3, 1000].into_iter().collect();
        assert_eq!(set.len(), 4);
        assert_eq!(set.iter().collect::<Vec<_>>(), [0, 3, 64, 1000]);
        assert!(set.contains(64) && !set.contains(65) && !set.contains(1_000_000));
    }
}
