//! Fetching a model by Hugging Face id (feature `fetch`), for machines that can reach the hub.
//!
//! [`fetch_model`] downloads `tokenizer.json`, `config.json` and the ONNX graph
//! (`onnx/model.onnx` in the repository, the layout sentence-transformers and most ONNX exports
//! use) into the model cache, `$HOME/.cache/braid/models/<name>`, where discovery finds it
//! afterwards. Files land under a temporary name and are renamed when complete, so an
//! interrupted download never leaves a half-written model behind. The hub's address comes
//! from `HF_ENDPOINT` (as in Hugging Face's own tools), by default `https://huggingface.co`.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use braid_core::{Error, Result};

/// The environment variable naming the hub's address.
pub const HF_ENDPOINT_ENV: &str = "HF_ENDPOINT";
const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// `(path in the repository, file name in the model directory, required)`.
const FILES: [(&str, &str, bool); 3] = [
    ("tokenizer.json", "tokenizer.json", true),
    ("config.json", "config.json", false),
    ("onnx/model.onnx", "model.onnx", true),
];

/// Downloads the model `repo_id` (`owner/name`) into the model cache unless it is already
/// there, and returns its directory.
///
/// # Errors
/// [`Error::InvalidRequest`] for a malformed id; [`Error::ModelFailed`] (the HTTP client's
/// error as its source) when the hub cannot be reached or lacks a required file; [`Error::Io`] when the cache cannot be written.
pub fn fetch_model(repo_id: &str) -> Result<PathBuf> {
    let endpoint = std::env::var(HF_ENDPOINT_ENV).unwrap_or_else(|_| DEFAULT_ENDPOINT.to_string());
    let cache = std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".cache/braid/models"))
        .ok_or_else(|| Error::Model { reason: "HOME is not set: no model cache to download into".into() })?;
    fetch_model_from(&endpoint, repo_id, &cache)
}

/// [`fetch_model`] against an explicit hub address and cache directory.
///
/// # Errors
/// As [`fetch_model`].
pub fn fetch_model_from(endpoint: &str, repo_id: &str, cache: &Path) -> Result<PathBuf> {
    let name = validate(repo_id)?;
    let dest = cache.join(name);
    if FILES.iter().filter(|f| f.2).all(|(_, local, _)| dest.join(local).is_file()) {
        return Ok(dest);
    }
    fs::create_dir_all(&dest).map_err(|e| Error::io(&dest, e))?;
    for (remote, local, required) in FILES {
        let url = format!("{}/{repo_id}/resolve/main/{remote}", endpoint.trim_end_matches('/'));
        let response = match ureq::get(&url).call() {
            Ok(r) => r,
            Err(ureq::Error::Status(404, _)) if !required => continue,
            Err(e) => return Err(Error::model_failed(format!("cannot download {url}"), e)),
        };
        let path = dest.join(local);
        let tmp = dest.join(format!("{local}.part"));
        let io = |e: io::Error| Error::io(&tmp, e);
        let mut file = File::create(&tmp).map_err(io)?;
        io::copy(&mut response.into_reader(), &mut file).map_err(io)?;
        file.flush().map_err(io)?;
        file.sync_all().map_err(io)?;
        fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
    }
    Ok(dest)
}

/// Checks `owner/name` and returns `name`.
fn validate(repo_id: &str) -> Result<&str> {
    let ok_part = |p: &str| {
        !p.is_empty() && p != "." && p != ".." && p.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
    };
    match repo_id.split_once('/') {
        Some((owner, name)) if ok_part(owner) && ok_part(name) => Ok(name),
        _ => Err(Error::invalid_request(format!("{repo_id:?} is not a Hugging Face model id (owner/name)"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_validated() {
        assert_eq!(validate("sentence-transformers/all-MiniLM-L6-v2").unwrap(), "all-MiniLM-L6-v2");
        for bad in ["", "x", "a/b/c", "../etc", "a/..", "a/b c", "/b", "a/"] {
            assert!(validate(bad).is_err(), "{bad}");
        }
    }
}
