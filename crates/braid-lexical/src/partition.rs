//! The lexical index's partitions: which tantivy index holds a record, and the list of
//! promoted tenants that a commit of the main partition carries.
//!
//! The **main** partition is the index's own directory (where an index from before partitions
//! keeps everything): records without a tenant, records of several tenants, and tenants not yet
//! promoted (the pool). A tenant that holds [`braid_core::PROMOTE_AT`] records is **promoted**:
//! its records move to a tantivy index of their own in the subdirectory
//! [`braid_core::tenant_dir_name`] names, and its later records go there. Which tenants are
//! promoted is part of the main partition's commit (its tantivy commit payload, the
//! [`Catalog`]), so a promotion takes effect atomically with the deletion of the moved records
//! from the main partition, and a directory that commit does not name (one a crash left
//! half-built) is never read. The catalog also makes a commit that wrote several partitions
//! atomic: see [`crate::writer`].

use std::collections::{BTreeMap, BTreeSet};

use braid_core::{Error, Result};
use serde::{Deserialize, Serialize};

/// A partition of the lexical index.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Part {
    /// Records without a tenant, of several tenants, or of a tenant not yet promoted.
    Main,
    /// A promoted tenant's records, by its token (`tenant:acme`).
    Tenant(String),
}

/// What the main partition's commit says of the others: which tenants are promoted, and
/// which of their records that commit holds (see [`crate::writer`] for the commit protocol).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Catalog {
    /// The tenants with partitions of their own.
    pub promoted: BTreeSet<String>,
    /// The highest ordinal this commit wrote or any before it: a tenant partition's record
    /// above it belongs to a commit that has not happened (`None`: no commit said, as in an
    /// index from before partitions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ords_through: Option<u64>,
    /// Records of promoted tenants that this commit replaced or deleted, by tenant: the
    /// tenant partitions delete them right after it, and until they have, searches do not see
    /// them.
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

    /// Whether the record with ordinal `ord` in promoted `tenant`'s partition is not part of
    /// this commit: written by a later one, or superseded by this one.
    pub fn hides(&self, tenant: &str, ord: u64) -> bool {
        self.ords_through.is_some_and(|t| ord > t) || self.superseded.get(tenant).is_some_and(|s| s.contains(&ord))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_reads_back_and_an_old_commit_promotes_nobody() {
        let catalog = Catalog {
            promoted: ["tenant:a".to_string(), "tenant:b".to_string()].into(),
            ords_through: Some(41),
            superseded: [("tenant:a".to_string(), vec![3, 7])].into(),
        };
        assert_eq!(Catalog::read(Some(&catalog.payload())).unwrap(), catalog);
        assert!(catalog.hides("tenant:a", 42) && catalog.hides("tenant:a", 7) && catalog.hides("tenant:b", 42));
        assert!(!catalog.hides("tenant:a", 41) && !catalog.hides("tenant:b", 7));
        assert_eq!(Catalog::read(None).unwrap(), Catalog::default());
        assert!(!Catalog::default().hides("tenant:a", u64::MAX));
        for damaged in ["Segments Merge: [abc]", "{broken", &catalog.payload().replace("41", "42")] {
            assert!(Catalog::read(Some(damaged)).is_err(), "{damaged}");
        }
    }
}
