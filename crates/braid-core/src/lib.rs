//! Braid's vocabulary, shared by every other crate.
//!
//! A [`Record`] is the unit of retrieval. A [`Principal`] says who is asking; together with a
//! [`Filter`] it becomes an [`AllowedSet`] before anything is ranked. A [`SearchRequest`] picks
//! the [`Mode`] (which recall legs run), and a [`SearchResponse`] carries [`Hit`]s with their
//! [`Explain`] records and the request's [`Stats`]. The [`Embedder`] and [`Reranker`] traits let
//! model crates plug in without this crate depending on ONNX Runtime.
//!
//! ```
//! use braid_core::{Principal, Record, SearchRequest, Mode};
//!
//! let record = Record::new("billing/refunds")
//!     .title("Refund policy")
//!     .body("Annual plans can be refunded within 30 days.")
//!     .acl(["public"]);
//! assert_eq!(record.id(), "billing/refunds");
//!
//! let alice = Principal::from_verified_tokens(["user:alice", "public"]);
//! let request = SearchRequest::new("refund annual", alice).k(5).mode(Mode::Lexical);
//! assert_eq!(request.k, 5);
//! ```
#![deny(missing_docs)]

mod access;
mod boost;
mod citation;
mod error;
mod facet;
mod filter;
mod lang;
mod models;
mod passages;
mod placement;
mod record;
mod request;
mod response;

pub use access::{
    is_reserved_token, AccessPolicy, AllowedSet, OrdSet, Principal, Visibility, NO_ACL_TOKEN, NO_TENANT_TOKEN,
    OWNER_PREFIX, PUBLIC_TOKEN, RESERVED_PREFIX, TENANT_PREFIX,
};
pub use boost::{Boosts, Decay, DecayFunction, KeywordBoost, Modifier, NumberBoost, MAX_BOOST_FUNCTIONS};
pub use citation::Citation;
pub use error::{BoxError, Error, Result};
pub use facet::{
    Facet, FacetRange, Facets, RangeCount, ValueCount, DEFAULT_FACET_VALUES, MAX_FACETS, MAX_FACET_RANGES,
    MAX_FACET_VALUES,
};
pub use filter::Filter;
pub use lang::{is_cjk, is_han, is_hangul, is_kana, Language};
pub use models::{Embedder, Reranker};
pub use passages::Passages;
pub use placement::{sole_tenant, tenant_dir_name, tenant_of_dir_name, POOL_DIR_NAME, PROMOTE_AT};
pub use record::{check_vector, id_tenant, is_memory_id, is_tenant_name, parse_date, Record, MEMORY_FOLDER};
pub use request::{
    Fusion, GroupBy, Leg, LegWeights, Mode, QuerySyntax, SearchRequest, UnknownName, DEFAULT_RERANK_CANDIDATES,
    MAX_DEPTH, MAX_K, MAX_QUERY_BYTES,
};
pub use response::{
    BoostExplain, Explain, FactorExplain, Hit, LegExplain, SearchResponse, Snippet, Stage, Stats, Suggestion,
    SynonymMatch,
};

/// The internal ordinal of a record: shared by the lexical and vector indexes, assigned at
/// write time, never reused. Fusion and explain speak ordinals; hits map back to ids.
pub type Ordinal = u64;
