//! One search over several indexes — partitions on other machines, Ray actors, processes —
//! with the answer one index holding all their records would give: the same hits, order and
//! scores.
//!
//! Each index holds a disjoint set of records (by tenant, or by a hash of the id). A
//! [`FanOut`] coordinates one request across them without doing any I/O itself: it says what
//! to ask each index ([`Ask`]), the caller carries the asks to the indexes (in process, over
//! the network, to Ray actors — both types serialise with serde), each index answers with
//! its [`Session`] of the request ([`Searcher::session`](crate::Searcher::session)), and the
//! caller hands the replies back ([`FanOut::next`]) until the fan-out is [`Step::Done`].
//!
//! A session keeps the index's share of the request between rounds: its commit (every round
//! reads the one the session was opened on), its allowed set, what the fan-out sent it so far
//! (each search ask carries only what is new since the index's last), and what new counts do
//! not change. An index that lost its session (a process restarted) is asked again in full
//! ([`FanOut::resend`]).
//!
//! How it stays exact (docs/scale-out.md has the argument and the measurements):
//!
//! 1. **Counts first.** Every decision of the lexical and fuzzy legs — which word is unknown,
//!    its corrections, expansions and completions, each term's BM25 weight — is a function of
//!    counts over the caller's allowed records and of the words the vocabularies propose.
//!    Those are sums and unions over the indexes (`braid_lexical::Question`). An index runs the
//!    request on the counts gathered so far and names what it lacked; the fan-out asks every
//!    index for those counts and runs the request again, until no index lacks anything.
//! 2. **Feedback.** Pseudo-relevance feedback reads the first search's best records: each
//!    index sends its best, the fan-out builds the one relevance model from their union, and
//!    every index ranks with it.
//! 3. **Legs, then fusion.** Each index returns every leg's top `depth` with raw scores, now
//!    comparable across indexes; the fan-out merges each leg's lists by score (ties by id),
//!    cuts them to `depth` and fuses them with the same [`braid_fusion::fuse`] as one index.
//! 4. **Fetch.** The page's records are read from the indexes that hold them, with snippets.
//!
//! Permissions: each index applies the request's principal to its own records, and every
//! count it returns is over those records only, so every count the fan-out sums is over the
//! records the principal may see — as on one index.
//!
//! Not across indexes (a request asking for them is refused with
//! [`Error::InvalidRequest`]): facets, boosts that rescore, collapsing, grouping and MMR,
//! token budgets and cross-encoder reranking. Ties in a leg's merged list are broken by id, where
//! one index breaks them by its own record order; equal fused scores likewise.

mod coordinator;

use std::collections::BTreeMap;
use std::sync::Arc;

use braid_core::{Hit, Leg, Ordinal, Result, SearchRequest, SearchResponse, Suggestion};
use braid_lexical::SynonymUse;
pub use braid_lexical::{Answer, FeedbackCandidate, Gathered, Question};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::Searcher;

pub use crate::search::Session;
pub use coordinator::{FanOut, Step, MAX_ROUNDS};

/// Runs `request` over `parts` in this process, each index's asks on rayon's pool: the
/// fan-out's answer, what one index holding all their records would give (see the module docs).
/// A service that holds its indexes elsewhere drives [`FanOut`] itself.
///
/// # Errors
/// As [`FanOut::new`], [`FanOut::next`], [`Searcher::session`] and [`Session::answer`].
pub fn search(parts: &[Searcher], request: &SearchRequest) -> Result<SearchResponse> {
    let mut fan_out = FanOut::new(request.clone(), parts.len())?;
    let mut sessions: Vec<Session> = parts.par_iter().map(|part| part.session(request)).collect::<Result<_>>()?;
    let mut asks = fan_out.start();
    loop {
        let replies =
            sessions.par_iter_mut().zip(asks).map(|(session, ask)| session.answer(&ask)).collect::<Result<_>>()?;
        match fan_out.next(replies)? {
            Step::Ask(next) => asks = next,
            Step::Done(response) => return Ok(*response),
        }
    }
}

/// What a fan-out asks one index (see the module docs); the index answers with its
/// [`Session`] of the same request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ask {
    /// Run the request on the counts gathered so far: answer with the questions they leave
    /// open, this index's part of the feedback model, or the legs' lists.
    Search {
        /// Counts gathered across every index that this index was not sent before: what is
        /// new since its last search ask (the whole table on its first, or when asked again
        /// with [`FanOut::resend`]).
        gathered: Arc<Gathered>,
        /// How much of the table this index was sent before, which `gathered` adds to: its
        /// answers, plus one for the feedback model; 0 when `gathered` is the whole table. A
        /// [`Session`] that holds something else cannot answer ([`Session::holds`]).
        #[serde(default)]
        held: usize,
    },
    /// Count these over this index's records the request's principal may see.
    Count {
        /// The questions, in order.
        questions: Vec<Question>,
    },
    /// Read these records of this index for the page's hits.
    Fetch {
        /// The records, by this index's ordinals, in page order.
        ords: Vec<Ordinal>,
        /// The query's terms to highlight, with weights.
        highlight: BTreeMap<String, f32>,
        /// The synonyms the query was expanded with (a hit's explain names those it holds).
        synonyms: Vec<SynonymUse>,
    },
}

/// One index's answer to an [`Ask`].
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// The counts this index needed and the gathered table lacked.
    Asked {
        /// The questions.
        questions: Vec<Question>,
    },
    /// This index's part of the feedback model: its first lexical search's best records.
    Feedback {
        /// How deep the first search ranked (the same on every index).
        read: usize,
        /// Its best records, best first.
        candidates: Vec<FeedbackCandidate>,
    },
    /// Every leg's list over this index's allowed records, scored with the gathered counts.
    Legs(PartLegs),
    /// Answers to [`Ask::Count`], in order.
    Counted {
        /// The answers.
        answers: Vec<Answer>,
    },
    /// The records of [`Ask::Fetch`], in its order (a record deleted meanwhile is missing).
    Fetched {
        /// Hits with the record's fields, snippet and the synonyms it holds; their score and
        /// the rest of their explain are the fan-out's.
        hits: Vec<(Ordinal, Hit)>,
    },
}

/// One index's legs for a request ([`Reply::Legs`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartLegs {
    /// Each leg's list, in the plan's order (the same on every index).
    pub lists: Vec<PartList>,
    /// How deep each leg ranked.
    pub depth: usize,
    /// Whether a single leg ranked only up to the page's end (see the search's plan).
    pub shortcut: bool,
    /// Records of this index the principal may see under the request's filter.
    pub allowed: usize,
    /// "Did you mean" for the query's words (the same on every index).
    pub suggestions: Vec<Suggestion>,
    /// The query's terms to highlight (the same on every index).
    pub highlight: BTreeMap<String, f32>,
    /// The synonyms the query was expanded with (the same on every index).
    pub synonyms: Vec<SynonymUse>,
    /// The text the semantic leg embedded, when it differs from the query.
    pub embedded: Option<String>,
    /// The semantic leg's path on this index (`hnsw` or `exact`), when it ran.
    pub semantic_path: Option<String>,
}

/// One leg's list on one index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartList {
    /// The leg.
    pub leg: Leg,
    /// Its fusion weight.
    pub weight: f32,
    /// `(ordinal on this index, id, raw score)`, best first.
    pub candidates: Vec<(Ordinal, String, f32)>,
    /// Candidates the simple syntax's constraints reject: they count towards the leg's depth,
    /// then leave the list (the semantic leg's, which ranks before it checks them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<Ordinal>,
}
