//! Finding a model directory on disk.

use std::path::{Path, PathBuf};

use braid_core::{Error, Result};

/// The embedding model used when none is named: sentence-transformers' all-MiniLM-L6-v2
/// (English, 384 dimensions).
pub const DEFAULT_EMBEDDING_MODEL: &str = "all-MiniLM-L6-v2";

/// The cross-encoder name looked up when none is given: ms-marco-MiniLM-L-6-v2 exported to
/// ONNX. It is not bundled; place it in the model cache or name a directory explicitly.
pub const DEFAULT_RERANK_MODEL: &str = "ms-marco-MiniLM-L-6-v2";

/// The environment variable naming a model directory, or a directory holding model
/// directories.
pub const MODEL_DIR_ENV: &str = "BRAID_MODEL_DIR";

/// The environment variable naming the shared folder (the one holding `models/` and
/// `datasets/`, as `scripts/fetch-shared.sh` lays it out). When set, it replaces the upward
/// walk for `shared/`.
pub const SHARED_DIR_ENV: &str = "BRAID_SHARED";

/// Finds the directory of the model `name`.
///
/// A directory qualifies when it holds `tokenizer.json` and at least one `.onnx` file. The
/// places searched, in order:
/// 1. `explicit`, when given. It must qualify: an explicit path that does not is an error,
///    never a silent fallback to another model.
/// 2. `$BRAID_MODEL_DIR/<name>`, then `$BRAID_MODEL_DIR` itself.
/// 3. The model cache, `$HOME/.cache/braid/models/<name>`.
/// 4. `$BRAID_SHARED/models/<name>` when `BRAID_SHARED` is set; otherwise
///    `shared/models/<name>` in the current directory or any directory above it (so
///    `../shared/models/all-MiniLM-L6-v2` is found from a checkout next to `shared/`).
///
/// `name` may contain slashes (for example `test-fixtures/tiny-random-cross-encoder`).
///
/// # Errors
/// [`Error::Model`] listing every place tried when no directory qualifies.
pub fn find_model_dir(explicit: Option<&Path>, name: &str) -> Result<PathBuf> {
    let places = SearchPlaces {
        env_dir: std::env::var_os(MODEL_DIR_ENV).filter(|v| !v.is_empty()).map(PathBuf::from),
        cache_dir: std::env::var_os("HOME")
            .filter(|v| !v.is_empty())
            .map(|home| PathBuf::from(home).join(".cache/braid/models")),
        shared_dir: std::env::var_os(SHARED_DIR_ENV).filter(|v| !v.is_empty()).map(PathBuf::from),
        start_dir: std::env::current_dir().ok(),
    };
    locate(explicit, name, &places)
}

/// Where discovery looks besides the explicit path; separated from the process environment
/// so the order can be tested without mutating it.
#[derive(Debug, Default)]
pub(crate) struct SearchPlaces {
    /// The value of `BRAID_MODEL_DIR`.
    pub(crate) env_dir: Option<PathBuf>,
    /// The model cache directory (holding `<name>/`).
    pub(crate) cache_dir: Option<PathBuf>,
    /// The value of `BRAID_SHARED`: the shared folder, replacing the upward walk.
    pub(crate) shared_dir: Option<PathBuf>,
    /// Where the upward walk for `shared/models` starts.
    pub(crate) start_dir: Option<PathBuf>,
}

pub(crate) fn locate(explicit: Option<&Path>, name: &str, places: &SearchPlaces) -> Result<PathBuf> {
    if let Some(dir) = explicit {
        return if qualifies(dir) {
            Ok(dir.to_path_buf())
        } else {
            Err(Error::Model {
                reason: format!("model directory {} does not hold tokenizer.json and an .onnx file", dir.display()),
            })
        };
    }
    let mut tried: Vec<PathBuf> = Vec::new();
    let mut check = |dir: PathBuf| -> Option<PathBuf> {
        if qualifies(&dir) {
            Some(dir)
        } else {
            tried.push(dir);
            None
        }
    };
    if let Some(env) = &places.env_dir {
        if let Some(found) = check(env.join(name)).or_else(|| check(env.clone())) {
            return Ok(found);
        }
    }
    if let Some(cache) = &places.cache_dir {
        if let Some(found) = check(cache.join(name)) {
            return Ok(found);
        }
    }
    if let Some(shared) = &places.shared_dir {
        if let Some(found) = check(shared.join("models").join(name)) {
            return Ok(found);
        }
    } else if let Some(start) = &places.start_dir {
        for dir in start.ancestors() {
            let shared = dir.join("shared").join("models");
            if shared.is_dir() {
                if let Some(found) = check(shared.join(name)) {
                    return Ok(found);
                }
            }
        }
        tried.push(start.join("**/shared/models").join(name));
    }
    let tried: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
    Err(Error::Model {
        reason: format!(
            "model `{name}` not found (a model directory holds tokenizer.json and an .onnx file); \
             tried: {}; pass a directory explicitly, set {MODEL_DIR_ENV}, or run \
             scripts/fetch-shared.sh DIR and set {SHARED_DIR_ENV}=DIR",
            tried.join(", ")
        ),
    })
}

/// Whether `dir` holds `tokenizer.json` and at least one `.onnx` file.
pub(crate) fn qualifies(dir: &Path) -> bool {
    if !dir.join("tokenizer.json").is_file() {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let p = e.path();
        p.extension().is_some_and(|x| x == "onnx") && p.is_file()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model_dir(root: &Path, name: &str) -> PathBuf {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tokenizer.json"), "{}").unwrap();
        std::fs::write(dir.join("model.onnx"), "").unwrap();
        dir
    }

    #[test]
    fn order_is_explicit_env_cache_shared() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let explicit = model_dir(&root.join("explicit"), "m");
        let env = model_dir(&root.join("env"), "m");
        let cache = model_dir(&root.join("cache"), "m");
        let shared = model_dir(&root.join("repo/shared/models"), "m");
        let start = root.join("repo/crates/x");
        std::fs::create_dir_all(&start).unwrap();

        let mut places = SearchPlaces {
            env_dir: Some(root.join("env")),
            cache_dir: Some(root.join("cache")),
            shared_dir: None,
            start_dir: Some(start),
        };
        assert_eq!(locate(Some(&explicit), "m", &places).unwrap(), explicit);
        assert_eq!(locate(None, "m", &places).unwrap(), env);
        places.env_dir = Some(env.clone());
        assert_eq!(locate(None, "m", &places).unwrap(), env, "env may name the model dir itself");
        places.env_dir = Some(root.join("nowhere"));
        assert_eq!(locate(None, "m", &places).unwrap(), cache);
        places.cache_dir = None;
        assert_eq!(locate(None, "m", &places).unwrap(), shared);
    }

    #[test]
    fn braid_shared_replaces_the_upward_walk() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let walked = model_dir(&root.join("repo/shared/models"), "m");
        let fetched = model_dir(&root.join("fetched/models"), "m");
        let start = root.join("repo/crates/x");
        std::fs::create_dir_all(&start).unwrap();
        let mut places =
            SearchPlaces { shared_dir: Some(root.join("fetched")), start_dir: Some(start), ..SearchPlaces::default() };
        assert_eq!(locate(None, "m", &places).unwrap(), fetched);
        // A BRAID_SHARED without the model is an error naming it, not a fall back to the walk.
        places.shared_dir = Some(root.join("empty"));
        let msg = locate(None, "m", &places).unwrap_err().to_string();
        assert!(msg.contains(&root.join("empty/models/m").display().to_string()), "{msg}");
        places.shared_dir = None;
        assert_eq!(locate(None, "m", &places).unwrap(), walked);
    }

    #[test]
    fn missing_model_lists_places_tried() {
        let tmp = tempfile::tempdir().unwrap();
        let places = SearchPlaces {
            env_dir: Some(tmp.path().join("env")),
            cache_dir: Some(tmp.path().join("cache")),
            shared_dir: None,
            start_dir: Some(tmp.path().to_path_buf()),
        };
        let err = locate(None, "nope", &places).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, Error::Model { .. }));
        assert!(msg.contains("env") && msg.contains("cache") && msg.contains("nope"), "{msg}");
    }

    #[test]
    fn explicit_dir_must_qualify() {
        let tmp = tempfile::tempdir().unwrap();
        let other = model_dir(tmp.path(), "m");
        let places = SearchPlaces { env_dir: Some(other.clone()), ..SearchPlaces::default() };
        let err = locate(Some(&tmp.path().join("empty")), "m", &places).unwrap_err();
        assert!(matches!(err, Error::Model { .. }));
    }
}
