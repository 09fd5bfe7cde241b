//! The knobs of the HNSW graph and of the choice between graph and exact scan.

/// Parameters of a [`crate::VectorStore`]: graph shape, search width, and when to scan exactly.
///
/// The defaults were chosen by measurement (the table is in the crate docs; rerun it with
/// `examples/recall_sweep.rs`): `ef_search` as its own docs say, and `exact_threshold` where
/// the exact scan stops beating the filtered graph.
#[derive(Debug, Clone, PartialEq)]
pub struct HnswParams {
    /// Neighbours kept per node and layer (layer 0 keeps twice as many). Clamped to
    /// `2..=65536` when the graph is built. By default, 16.
    pub m: usize,
    /// Width of the candidate list while building the graph. By default, 400: on 100,000
    /// vectors of the scale corpus (int8, `examples/npy_sweep.rs`), recall@10 at `ef_search`
    /// 200 is 0.9405 built at 200 and 0.9525 at 400, for 1.7× the build time.
    pub ef_construction: usize,
    /// Width of the candidate list while searching; raised to `k` when `k` is larger.
    /// Saved with the store: a store keeps the width it was created with
    /// ([`crate::VectorStore::set_ef_search`] changes it; Braid's index searches at the
    /// width its builder gives, else at the current default). By default, 1,600: the
    /// narrowest measured width whose graph finds 0.95 of the exact *f32* top 10 at 1M
    /// (0.955 with everything allowed, 0.9595 with half; 0.9455 and 0.954 at 1,200). A graph is
    /// kept only from [`HnswParams::exact_threshold`] vectors on (an int8 store, whose large
    /// searches are screened by sign bits, from 1,000,000), so this is a setting for
    /// large stores: on the 1,000,000 scale-corpus vectors (int8, `crates/braid-vector/examples/ann_recall.rs`,
    /// research/scale-log.md) recall@10 against the exact scan with everything allowed is 0.9355 at
    /// 400, 0.944 at 800, 0.9515 at 1,200 and 0.961 at 1,600 (2.1, 4.9, 6.9 and 9.4 ms a
    /// query), and with half allowed 0.9355, 0.948, 0.9595 and 0.965. Those vectors are
    /// random projections, the hardest kind for a graph: on 3,000 random 384-d unit vectors
    /// 200 gives 0.984, and on low-rank, embedding-like vectors 32 already gives 0.956 and
    /// 128 gives 1.0 (`examples/recall_sweep.rs`).
    pub ef_search: usize,
    /// Allowed sets with fewer records than this are scanned exactly instead of searching the
    /// graph. The choice depends on the caller's allowed set alone, never on how many records
    /// it may not see. The scan costs about 30 ns an allowed int8 vector when most of the store
    /// is allowed and about 100 ns when few are (1,000,000 vectors: 2.5 ms at 1 %, 10 ms at
    /// 10 %), while the filtered graph walk grows as more of what it passes is hidden, so up to
    /// this size the scan is about as fast and exact. By default, 150,000.
    pub exact_threshold: usize,
    /// The graph is rebuilt from the live vectors once deleted or replaced vectors make up
    /// more than this fraction of the slots. By default, 0.2.
    pub rebuild_tombstone_fraction: f32,
    /// How each vector is held in memory and on disk. By default, [`Quantization::F32`].
    pub quantization: Quantization,
}

/// How a [`crate::VectorStore`] holds its vectors.
///
/// The choice is made when the store is created and saved with it: reopening keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Quantization {
    /// Every component as an `f32` (4 bytes a dimension): scores are exact.
    #[default]
    F32,
    /// Every component as an `i8` code times one `f32` scale per vector (its largest
    /// magnitude over 127): 1 byte a dimension plus 4, about a quarter of [`Quantization::F32`].
    /// A vector's codes depend on that vector alone (no corpus-wide statistics), so what one
    /// caller's search scores never depends on vectors it may not see. Scores carry a
    /// rounding error of about `0.3 / sqrt(dim) / 127` per unit of the query's largest
    /// component; measured recall against exact f32 search is in `examples/quantized.rs`.
    Int8,
}

impl Quantization {
    /// A stable lowercase name: `"f32"` or `"int8"`.
    pub fn name(self) -> &'static str {
        match self {
            Quantization::F32 => "f32",
            Quantization::Int8 => "int8",
        }
    }
}

impl std::str::FromStr for Quantization {
    type Err = braid_core::UnknownName;

    /// Parses `f32` or `int8`, in any case.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "f32" => Ok(Quantization::F32),
            "int8" => Ok(Quantization::Int8),
            _ => Err(braid_core::UnknownName { what: "quantization", got: text.to_string(), expected: "f32 or int8" }),
        }
    }
}

impl Default for HnswParams {
    fn default() -> Self {
        HnswParams {
            m: 16,
            ef_construction: 400,
            ef_search: 1_600,
            exact_threshold: 150_000,
            rebuild_tombstone_fraction: 0.2,
            quantization: Quantization::F32,
        }
    }
}
