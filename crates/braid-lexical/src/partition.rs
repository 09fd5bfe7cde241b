//! The lexical index's partitions: which tantivy index holds a record, and the list of
//! partitions that a commit of the main partition carries.
//!
//! The **main** partition is the index's own directory (where an index from before partitions
//! keeps everything): records without a tenant, and records of several tenants. A record of one
//! tenant goes to the **pool**, the partition small tenants share (the subdirectory
//! [`braid_core::POOL_DIR_NAME`]), until its tenant holds [`braid_core::PROMOTE_AT`] records: the
//! tenant is then **promoted**, its records move to a tantivy index of their own in the
//! subdirectory [`braid_core::tenant_dir_name`] names, and its later records go there. So a
//! principal of promoted tenants alone never reads a small tenant's postings, nor a small
//! tenant's principal a promoted tenant's. (Records of a tenant an index from before the pool
//! kept in the main partition stay there until they are written again or their tenant is
//! promoted.) Which partitions a commit includes is part of the main partition's commit (its
//! tantivy commit payload, the [`Catalog`]), so a promotion takes effect atomically with the
//! deletion of the moved records from where they were, and a directory that commit does not
//! name (one a crash left half-built) is never read. The catalog also makes a commit that wrote
//! several partitions atomic: see [`crate::writer`].

use std::collections::{BTreeMap, BTreeSet};

use braid_core::{Error, Result};
use serde::{Deserialize, Serialize};

/// A partition of the lexical index.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Part {
    /// Records without a tenant or of several tenants (and, in an index from before the pool,
    /// pooled tenants' records not written since).
    Main,
    /// Records of tenants not yet promoted.
    Pool,
    /// A promoted tenant's records, by its token (`tenant:acme`).
    Tenant(String),
}

/// The key of the pool among the catalog's partitions (tenant tokens start with `tenant:`).
pub(crate) const POOL_KEY: &str = "pool";

impl Part {
    /// The partition's key in the [`Catalog`]: the pool's, or the tenant's token (`None` for
    /// the main partition, which holds the catalog).
    pub fn key(&self) -> Option<&str> {
        match self {
            Part::Main => None,
            Part::Pool => Some(POOL_KEY),
            Part::Tenant(token) => Some(token),
        }
    }

    /// The partition a catalog key names.
    pub fn of_key(key: &str) -> Part {
        if key == POOL_KEY {
            Part::Pool
        } else {
            Part::Tenant(key.to_string())
        }
    }

    /// The partition's directory inside the index's (`None` for the main partition, which is
    /// the index's own).
    pub fn dir_name(&self) -> Option<String> {
        match self {
            Part::Main => None,
            Part::Pool => Some(braid_core::POOL_DIR_NAME.to_string()),
            Part::Tenant(token) => Some(braid_core::tenant_dir_name(token)),
        }
    }
}

/// What the main partition's commit says of the others: whether there is a pool, which tenants
/// are promoted, and which of their records that commit holds (see [`crate::writer`] for the
/// commit protocol).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Catalog {
    /// Whether the pool is part of the index (from the first commit that wrote a record to it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pool: bool,
    /// The tenants with partitions of their own.
    pub promoted: BTreeSet<String>,
    /// The highest ordinal this commit wrote or any before it: a record of the pool or a
    /// tenant partition above it belongs to a commit that has not happened (`None`: no commit
    /// said, as in an index from before partitions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ords_through: Option<u64>,
    /// Records of the pool and of promoted tenants that this commit replaced, deleted or moved,
    /// by partition key ([`Part::key`]): those partitions delete them right after it, and until
    /// they have, searches do not see them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub superseded: BTreeMap<String, Vec<u64>>,
}

/// A catalog as a commit's payload holds it: with the CRC-32 of its JSON, so a damaged
/// payload is an error, never a catalog that silently names fewer partitions.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Sealed {
    braid_catalog: Catalog,
    crc32: u32,
}

impl Catalog {
    /// The catalog a commit payload holds: an empty one for a commit without a payload (every
    /// index written before partitions).
    ///
    /// # Errors
    /// [`Error::Lexical`] for a payload that is not an intact catalog.
    pub fn read(payload: Option<&str>) -> Result<Self> {
        let Some(text) = payload else { return Ok(Catalog::default()) };
        let damaged = |why: String| Error::Lexical(format!("the commit's catalog of partitions is damaged: {why}"));
        let sealed: Sealed = serde_json::from_str(text).map_err(|e| damaged(e.to_string()))?;
        if sealed.braid_catalog.checksum() != sealed.crc32 {
            return Err(damaged("checksum mismatch".into()));
        }
        Ok(sealed.braid_catalog)
    }

    /// The payload of a commit.
    pub fn payload(&self) -> String {
        let sealed = Sealed { braid_catalog: self.clone(), crc32: self.checksum() };
        serde_json::to_string(&sealed).unwrap_or_default()
    }

    fn checksum(&self) -> u32 {
        crc32fast::hash(serde_json::to_string(self).unwrap_or_default().as_bytes())
    }

    /// Whether the record with ordinal `ord` in the partition of key `key` ([`Part::key`]) is
    /// not part of this commit: written by a later one, or superseded by this one.
    pub fn hides(&self, key: &str, ord: u64) -> bool {
        self.ords_through.is_some_and(|t| ord > t) || self.superseded.get(key).is_some_and(|s| s.contains(&ord))
    }

    /// The partitions besides the main one that this commit includes: the pool, then the
    /// promoted tenants in token order.
    pub fn satellites(&self) -> Vec<Part> {
        let pool = self.pool.then_some(Part::Pool);
        pool.into_iter().chain(self.promoted.iter().map(|t| Part::Tenant(t.clone()))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_reads_back_and_an_old_commit_promotes_nobody() {
        let catalog = Catalog {
            pool: true,
            promoted: ["tenant:a".to_string(), "tenant:b".to_string()].into(),
            ords_through: Some(41),
            superseded: [("tenant:a".to_string(), vec![3, 7])].into(),
        };
        assert_eq!(Catalog::read(Some(&catalog.payload())).unwrap(), catalog);
        assert!(catalog.hides("tenant:a", 42) && catalog.hides("tenant:a", 7) && catalog.hides("tenant:b", 42));
        assert!(!catalog.hides("tenant:a", 41) && !catalog.hides("tenant:b", 7));
        assert_eq!(
            catalog.satellites(),
            [Part::Pool, Part::Tenant("tenant:a".into()), Part::Tenant("tenant:b".into())]
        );
        for part in catalog.satellites() {
            assert_eq!(Part::of_key(part.key().unwrap()), part);
        }
        assert_eq!(Catalog::read(None).unwrap(), Catalog::default());
        assert!(!Catalog::default().hides("tenant:a", u64::MAX));
        for damaged in ["Segments Merge: [abc]", "{broken", &catalog.payload().replace("41", "42")] {
            assert!(Catalog::read(Some(damaged)).is_err(), "{damaged}");
        }
    }
}
