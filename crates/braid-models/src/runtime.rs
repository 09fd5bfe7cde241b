//! Loading the ONNX Runtime shared library, once per process.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use braid_core::{Error, Result};
use ort::environment::Environment;

/// How to install ONNX Runtime; every "library not found" error ends with it.
pub const ORT_INSTALL_HINT: &str = "install ONNX Runtime 1.31.1 with `bash scripts/setup-onnxruntime.sh` \
     (it puts libonnxruntime.so.1.31.1 under ~/.cache/braid/onnxruntime-1.31.1), \
     or point ORT_DYLIB_PATH at a libonnxruntime.so of version 1.31 or newer";

/// The environment variable naming the ONNX Runtime library file.
const DYLIB_ENV: &str = "ORT_DYLIB_PATH";
/// The library file name the setup script installs.
const LIB_FILE: &str = "libonnxruntime.so.1.31.1";
/// The setup script's default install directory, relative to `$HOME`.
const CACHE_SUBDIR: &str = ".cache/braid/onnxruntime-1.31.1";

static ENVIRONMENT: OnceLock<Environment> = OnceLock::new();
static INIT_LOCK: Mutex<()> = Mutex::new(());

/// Loads ONNX Runtime and creates the process-wide `ort` environment.
///
/// The library is looked for in this order: the file named by `ORT_DYLIB_PATH`, then
/// `$HOME/.cache/braid/onnxruntime-1.31.1/libonnxruntime.so.1.31.1` (where
/// `scripts/setup-onnxruntime.sh` installs it). The first candidate that loads wins.
///
/// Idempotent and thread-safe: after the first success it returns `Ok(())` at once. A failure
/// is not cached, so a later call can succeed once the library is installed. Model builders
/// call it for you; call it yourself to check the runtime early (for example at start-up).
///
/// # Errors
/// [`Error::Model`] when no candidate exists or none loads (wrong version, not a library);
/// the message lists what was tried and how to install the library.
pub fn init_runtime() -> Result<()> {
    environment().map(|_| ())
}

/// The number of intra-op threads a model session uses unless told otherwise: the machine's
/// available parallelism (1 if it cannot be determined).
///
/// ONNX Runtime parallelises each operator over this many threads. On a machine shared with
/// other work (an indexer, a web server), fewer threads often give the same throughput with
/// less contention; measure with `intra_threads(n)` on the model builders.
pub fn default_intra_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The process-wide environment, initialising it on first use.
pub(crate) fn environment() -> Result<&'static Environment> {
    if let Some(env) = ENVIRONMENT.get() {
        return Ok(env);
    }
    let _guard = INIT_LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(env) = ENVIRONMENT.get() {
        return Ok(env);
    }
    let env = load()?;
    Ok(ENVIRONMENT.get_or_init(|| env))
}

/// The candidate library paths, in search order.
fn candidates() -> Vec<(PathBuf, &'static str)> {
    let mut out = Vec::new();
    if let Some(p) = std::env::var_os(DYLIB_ENV).filter(|p| !p.is_empty()) {
        out.push((PathBuf::from(p), "ORT_DYLIB_PATH"));
    }
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        out.push((PathBuf::from(home).join(CACHE_SUBDIR).join(LIB_FILE), "the braid cache"));
    }
    out
}

fn load() -> Result<Environment> {
    let mut tried = Vec::new();
    for (path, origin) in candidates() {
        // A relative ORT_DYLIB_PATH is left to the dynamic loader's search path; a missing
        // absolute file is skipped without touching ort.
        if path.is_absolute() && !path.is_file() {
            tried.push(format!("{} ({origin}): no such file", path.display()));
            continue;
        }
        match try_load(&path) {
            Ok(env) => {
                tracing::debug!(target: "braid::models", path = %path.display(), "loaded ONNX Runtime");
                return Ok(env);
            }
            Err(reason) => tried.push(format!("{} ({origin}): {reason}", path.display())),
        }
    }
    let tried =
        if tried.is_empty() { "ORT_DYLIB_PATH is unset and HOME is unknown".to_owned() } else { tried.join("; ") };
    Err(Error::Model { reason: format!("ONNX Runtime library not loaded (tried: {tried}); {ORT_INSTALL_HINT}") })
}

/// Loads one library file and builds the environment, turning panics into errors.
fn try_load(path: &std::path::Path) -> std::result::Result<Environment, String> {
    let attempt = catch_unwind(AssertUnwindSafe(|| -> std::result::Result<Environment, String> {
        let builder = ort::init_from(path).map_err(|e| e.to_string())?;
        builder.with_name("braid").build().map_err(|e| e.to_string())
    }));
    match attempt {
        Ok(result) => result,
        Err(panic) => Err(panic_message(panic.as_ref())),
    }
}

/// The text of a caught panic.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        format!("onnx runtime panicked: {s}")
    } else if let Some(s) = panic.downcast_ref::<String>() {
        format!("onnx runtime panicked: {s}")
    } else {
        "onnx runtime panicked".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_threads_is_positive() {
        assert!(default_intra_threads() >= 1);
    }

    #[test]
    fn install_hint_names_the_script() {
        assert!(ORT_INSTALL_HINT.contains("scripts/setup-onnxruntime.sh"));
    }
}
