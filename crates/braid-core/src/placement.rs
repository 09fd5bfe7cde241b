//! Where a record is kept: the tenant partitions both stores share (the vector store's
//! `PartitionedStore`, the lexical index's partitions).
//!
//! A record with exactly one tenant token belongs to that tenant; once the tenant holds
//! [`PROMOTE_AT`] records it has a partition of its own, in a directory named by
//! [`tenant_dir_name`]. Until then its records share the pool (the directory
//! [`POOL_DIR_NAME`]) with the other small tenants'; records without a tenant stay in the
//! index's shared partition.

use crate::TENANT_PREFIX;

/// A tenant is promoted to partitions of its own once it holds this many records.
///
/// In the vector store's pool a tenant's records are looked up one by one (about 100 ns a
/// 384-d int8 record out of cache, against 30 for a walk over a store of its own), so at 10,000
/// records a scan of the whole tenant costs at most about a millisecond before it moves; below
/// it, a tenant costs no files of its own. The lexical index promotes at the same count.
pub const PROMOTE_AT: usize = 10_000;

const TENANT_DIR_PREFIX: &str = "tenant-";

/// The name of the directory of the pool, the partition small tenants share.
pub const POOL_DIR_NAME: &str = "pool";

/// The tenant a record belongs to: its tenant token when it has exactly one (`None` for no
/// tenant or several).
pub fn sole_tenant<'a>(mut tenants: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let first = tenants.next()?;
    tenants.all(|t| t == first).then_some(first)
}

/// The name of a promoted tenant's partition directory: `tenant-` and the hex of its name
/// (the token without `tenant:`), so any name is a safe file name.
///
/// ```
/// assert_eq!(braid_core::tenant_dir_name("tenant:acme"), "tenant-61636d65");
/// assert_eq!(braid_core::tenant_of_dir_name("tenant-61636d65").as_deref(), Some("tenant:acme"));
/// ```
pub fn tenant_dir_name(token: &str) -> String {
    let name = token.strip_prefix(TENANT_PREFIX).unwrap_or(token);
    let hex: String = name.bytes().map(|b| format!("{b:02x}")).collect();
    format!("{TENANT_DIR_PREFIX}{hex}")
}

/// The tenant token a partition directory's name stands for, if it is one
/// ([`tenant_dir_name`] read back).
pub fn tenant_of_dir_name(name: &str) -> Option<String> {
    let hex = name.strip_prefix(TENANT_DIR_PREFIX)?;
    if hex.is_empty() || hex.len() % 2 != 0 {
        return None;
    }
    let bytes: Option<Vec<u8>> =
        (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok()).collect();
    let name = String::from_utf8(bytes?).ok()?;
    Some(format!("{TENANT_PREFIX}{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_has_a_tenant_only_when_it_names_one() {
        assert_eq!(sole_tenant([].into_iter()), None);
        assert_eq!(sole_tenant(["tenant:a"].into_iter()), Some("tenant:a"));
        assert_eq!(sole_tenant(["tenant:a", "tenant:a"].into_iter()), Some("tenant:a"));
        assert_eq!(sole_tenant(["tenant:a", "tenant:b"].into_iter()), None);
    }

    #[test]
    fn directory_names_read_back_and_reject_what_is_not_one() {
        for token in ["tenant:a", "tenant:Ünïcode/../x", "tenant: spaced"] {
            assert_eq!(tenant_of_dir_name(&tenant_dir_name(token)).as_deref(), Some(token));
        }
        for name in ["pool", "tenant-", "tenant-6", "tenant-zz", "tenant-ff"] {
            assert_eq!(tenant_of_dir_name(name), None, "{name}");
        }
    }
}
