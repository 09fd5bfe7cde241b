//! The shared folder (`datasets/`, `models/`) that the root crate's tests, benches and
//! examples read. One copy of the rule, included by `#[path]` where needed.
//!
//! `$BRAID_SHARED` when set (as `scripts/test.sh` sets it after `scripts/fetch-shared.sh`),
//! else the first `shared/` above the working directory or the package root (the workplace
//! keeps it at `../shared`). braid-models' model discovery follows the same rule.
#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;

/// The variable naming the shared folder (braid-models calls it `SHARED_DIR_ENV`).
pub const SHARED_DIR_ENV: &str = "BRAID_SHARED";

/// The shared folder, if there is one.
pub fn shared_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(SHARED_DIR_ENV).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let starts = [std::env::current_dir().unwrap_or_default(), PathBuf::from(env!("CARGO_MANIFEST_DIR"))];
    starts.iter().flat_map(|start| start.ancestors()).map(|dir| dir.join("shared")).find(|dir| dir.is_dir())
}

/// `<shared folder>/<rel>`.
///
/// # Panics
/// When there is no shared folder or it lacks `rel`, saying how to fetch it.
pub fn shared(rel: &str) -> PathBuf {
    let path = shared_dir().map(|dir| dir.join(rel)).filter(|path| path.exists());
    path.unwrap_or_else(|| {
        panic!(
            "no shared/{rel} (${SHARED_DIR_ENV} or a shared/ above the repository); \
             `bash scripts/test.sh` fetches it, or run `bash scripts/fetch-shared.sh DIR` and set {SHARED_DIR_ENV}=DIR"
        )
    })
}

/// `<shared folder>/<rel>` for an asset no public source serves (the random-weight
/// cross-encoder fixtures, `models/reference.json`), or `None` after telling stderr, which the
/// test harness does not capture, that `what` is skipped.
pub fn unfetchable(rel: &str, what: &str) -> Option<PathBuf> {
    if let Some(path) = shared_dir().map(|dir| dir.join(rel)).filter(|path| path.exists()) {
        return Some(path);
    }
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {what}: shared/{rel} is absent (not publicly fetchable; the workplace's shared/ has it)"
    );
    None
}
