//! Vectors a user already has, for `braid index`: a sidecar file (`.npy`, or raw
//! little-endian f32) with one id per line beside it, or a field of each JSONL document's
//! `metadata`.
//!
//! A sidecar is never read into memory whole: only its ids are (id → row), and each record's
//! row is read when the record is, so a million 384-d vectors cost the ids, not 1.5 GB.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// Where `braid index` finds each record's vector.
pub enum VectorSource {
    /// Rows of a sidecar file, matched to records by id.
    Sidecar(Sidecar),
    /// A field of each document's `metadata` object, a JSON array of numbers.
    Field(String),
}

/// A matrix of `rows × dim` little-endian f32 in a file, with the id of each row.
pub struct Sidecar {
    path: PathBuf,
    file: File,
    /// Byte offset of row 0.
    data_start: u64,
    dim: usize,
    rows: HashMap<String, u64>,
}

impl Sidecar {
    /// Opens `path` (`.npy`: a 2-D `<f4` C-order array; anything else: raw f32, `dim` required)
    /// and its ids file (one id per line, as many as rows).
    ///
    /// # Errors
    /// When a file cannot be read, the `.npy` header is not a 2-D little-endian f32 array,
    /// the raw file's length is not a multiple of a row, or the ids and rows differ in number.
    pub fn open(path: &Path, ids: &Path, dim: Option<usize>) -> Result<Sidecar> {
        let mut file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
        let len = file.metadata().with_context(|| format!("reading {}", path.display()))?.len();
        let is_npy = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy"));
        let (data_start, rows, dim) = if is_npy {
            let (start, rows, npy_dim) =
                npy_header(&mut file).with_context(|| format!("reading {}", path.display()))?;
            if let Some(d) = dim.filter(|&d| d != npy_dim) {
                bail!("{} holds {npy_dim}-dimensional vectors, --vector-dim says {d}", path.display());
            }
            let need = start + rows * npy_dim as u64 * 4;
            if len < need {
                bail!("{} is truncated: {len} bytes, its header promises {need}", path.display());
            }
            (start, rows, npy_dim)
        } else {
            let Some(dim) = dim.filter(|&d| d > 0) else {
                bail!("a raw f32 vector file needs --vector-dim (or use a .npy file)");
            };
            let row = dim as u64 * 4;
            if len % row != 0 {
                bail!("{} is {len} bytes, not a whole number of {dim}-dimensional f32 rows", path.display());
            }
            (0, len / row, dim)
        };
        let mut map = HashMap::with_capacity(rows as usize);
        let reader = BufReader::new(File::open(ids).with_context(|| format!("opening {}", ids.display()))?);
        for (row, line) in reader.lines().enumerate() {
            let line = line.with_context(|| format!("reading {}", ids.display()))?;
            let id = line.trim_end_matches('\r');
            if id.is_empty() {
                continue;
            }
            if map.insert(id.to_string(), row as u64).is_some() {
                bail!("{} lists the id {id:?} twice", ids.display());
            }
        }
        if map.len() as u64 != rows {
            bail!("{} has {} ids for the {rows} vectors of {}", ids.display(), map.len(), path.display());
        }
        Ok(Sidecar { path: path.to_path_buf(), file, data_start, dim, rows: map })
    }

    /// The vectors' dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The vector of record `id`, if the sidecar has one.
    ///
    /// # Errors
    /// When the file cannot be read.
    pub fn get(&mut self, id: &str) -> Result<Option<Vec<f32>>> {
        let Some(&row) = self.rows.get(id) else { return Ok(None) };
        let mut bytes = vec![0u8; self.dim * 4];
        self.file
            .seek(SeekFrom::Start(self.data_start + row * self.dim as u64 * 4))
            .and_then(|_| self.file.read_exact(&mut bytes))
            .with_context(|| format!("reading row {row} of {}", self.path.display()))?;
        Ok(Some(bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()))
    }
}

/// Parses a `.npy` header: `(data offset, rows, columns)` of a 2-D little-endian f32 array in
/// C order (format versions 1 to 3).
fn npy_header(file: &mut File) -> Result<(u64, u64, usize)> {
    let mut magic = [0u8; 8];
    file.read_exact(&mut magic).context("shorter than a .npy header")?;
    if &magic[..6] != b"\x93NUMPY" {
        bail!("not a .npy file (bad magic)");
    }
    let (header_len, prefix) = match magic[6] {
        1 => {
            let mut n = [0u8; 2];
            file.read_exact(&mut n)?;
            (u16::from_le_bytes(n) as usize, 10)
        }
        2 | 3 => {
            let mut n = [0u8; 4];
            file.read_exact(&mut n)?;
            (u32::from_le_bytes(n) as usize, 12)
        }
        v => bail!(".npy format version {v} is not supported"),
    };
    if header_len > 1 << 20 {
        bail!(".npy header of {header_len} bytes is implausibly long");
    }
    let mut header = vec![0u8; header_len];
    file.read_exact(&mut header).context("truncated .npy header")?;
    let header = String::from_utf8_lossy(&header);
    let value = |key: &str| -> Option<&str> {
        let at = header.find(&format!("'{key}'"))? + key.len() + 2;
        Some(header[at..].trim_start().strip_prefix(':')?.trim_start())
    };
    let descr = value("descr").unwrap_or("");
    if !(descr.starts_with("'<f4'") || descr.starts_with("'=f4'")) {
        bail!(
            "the array must hold little-endian float32 ('<f4'), its descr is {}",
            descr.split(',').next().unwrap_or("")
        );
    }
    if !value("fortran_order").is_some_and(|v| v.starts_with("False")) {
        bail!("the array must be in C order (fortran_order False)");
    }
    let shape = value("shape").and_then(|v| v.strip_prefix('(')).and_then(|v| v.split(')').next()).unwrap_or("");
    let dims: Vec<u64> = shape
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::parse)
        .collect::<Result<_, _>>()
        .map_err(|_| anyhow::anyhow!("unreadable .npy shape ({shape})"))?;
    let [rows, cols] = dims[..] else { bail!("the array must be 2-D (rows × dimensions), its shape is ({shape})") };
    if cols == 0 {
        bail!("the array has 0 dimensions per row");
    }
    Ok(((prefix + header_len) as u64, rows, cols as usize))
}

/// The vector in `metadata[field]` of a JSONL document: `None` when absent or `null`.
///
/// # Errors
/// When the field is not an array of numbers.
pub fn field_vector(metadata: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Option<Vec<f32>>> {
    match metadata.get(field) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .map(|v| v.as_f64().map(|x| x as f32).ok_or_else(|| anyhow::anyhow!("metadata.{field} holds a non-number")))
            .collect::<Result<Vec<f32>>>()
            .map(Some),
        Some(_) => bail!("metadata.{field} is not an array of numbers"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn npy(rows: &[[f32; 3]]) -> Vec<u8> {
        let dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, 3), }}", rows.len());
        let mut header = dict.into_bytes();
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(b' ');
        }
        header.push(b'\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(&header);
        for row in rows {
            for x in row {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        out
    }

    #[test]
    fn reads_npy_and_raw_rows_by_id() {
        let dir = tempfile::tempdir().unwrap();
        let rows = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
        std::fs::write(dir.path().join("v.npy"), npy(&rows)).unwrap();
        std::fs::write(dir.path().join("ids.txt"), "a\nb\n").unwrap();
        let mut s = Sidecar::open(&dir.path().join("v.npy"), &dir.path().join("ids.txt"), None).unwrap();
        assert_eq!(s.dim(), 3);
        assert_eq!(s.get("b").unwrap(), Some(vec![4.0, 5.0, 6.0]));
        assert_eq!(s.get("zzz").unwrap(), None);

        let mut raw = File::create(dir.path().join("v.f32")).unwrap();
        for x in rows.iter().flatten() {
            raw.write_all(&x.to_le_bytes()).unwrap();
        }
        drop(raw);
        let mut s = Sidecar::open(&dir.path().join("v.f32"), &dir.path().join("ids.txt"), Some(3)).unwrap();
        assert_eq!(s.get("a").unwrap(), Some(vec![1.0, 2.0, 3.0]));
        assert!(Sidecar::open(&dir.path().join("v.f32"), &dir.path().join("ids.txt"), Some(4)).is_err());
        assert!(Sidecar::open(&dir.path().join("v.f32"), &dir.path().join("ids.txt"), None).is_err());
        std::fs::write(dir.path().join("one.txt"), "a\n").unwrap();
        assert!(Sidecar::open(&dir.path().join("v.npy"), &dir.path().join("one.txt"), None).is_err());
    }

    #[test]
    fn refuses_other_npy_arrays() {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = npy(&[[1.0, 2.0, 3.0]]);
        let at = bytes.windows(3).position(|w| w == b"<f4").unwrap();
        bytes[at..at + 3].copy_from_slice(b"<f8");
        std::fs::write(dir.path().join("v.npy"), &bytes).unwrap();
        std::fs::write(dir.path().join("ids.txt"), "a\n").unwrap();
        let err = Sidecar::open(&dir.path().join("v.npy"), &dir.path().join("ids.txt"), None).err().unwrap();
        assert!(format!("{err:#}").contains("float32"), "{err:#}");
    }

    #[test]
    fn field_vectors() {
        let m = serde_json::json!({"v": [0.5, 1], "s": "x", "n": null});
        let m = m.as_object().unwrap();
        assert_eq!(field_vector(m, "v").unwrap(), Some(vec![0.5, 1.0]));
        assert_eq!(field_vector(m, "n").unwrap(), None);
        assert_eq!(field_vector(m, "absent").unwrap(), None);
        assert!(field_vector(m, "s").is_err());
    }
}
