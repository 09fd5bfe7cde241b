//! Paging: which slice of the ranking a request returns, and the cursor to the next one.
//!
//! A page is ranks `offset + 1 ..= offset + k` of one ranking: the fused (boosted, reranked,
//! collapsed) order of up to `max(depth, k)` candidates per leg. Every page of a query is cut
//! from a ranking of that same window, so pages concatenated are one longer request's hits
//! (with one leg, which fetches only up to the page's end, in the same order, the scores
//! normalised over what it fetched); a
//! page that would end past the window is refused ([`Error::PageOutOfRange`]) rather than
//! ranked from deeper legs, which could reorder the earlier pages.
//!
//! A cursor names where the next page starts and what came before it: the request it was
//! made for (a digest of the query, filter, mode, fusion, depth, boosts and principal) and a
//! digest of the hits up to it (their ids, in order). A later request with the cursor recomputes the
//! ranking and checks both: another request's cursor is [`Error::InvalidCursor`], and one
//! whose earlier hits changed is [`Error::StaleCursor`] — never a silently shifted page.
//! The cursor encodes no commit identity, ordinal or count: commits (and ordinals) change with
//! every write, the caller's invisible records included, so the cursor holds only what the
//! response itself shows (ARCHITECTURE.md, threat model). While the hits before it stand, a
//! cursor stays valid across commits, and the next page is the next page of the current
//! ranking.

use std::fmt::Write as _;

use braid_core::{Error, Hit, Result, SearchRequest, MAX_DEPTH};
use sha2::{Digest, Sha256};

/// The cursor format's version (the first byte).
const VERSION: u8 = 1;
/// Bytes of a cursor: version, position (u32), request digest (8), prefix digest (16).
const CURSOR_BYTES: usize = 1 + 4 + 8 + 16;

/// The slice of the ranking one request returns.
#[derive(Debug, Clone)]
pub(crate) struct Page {
    offset: usize,
    k: usize,
    window: usize,
    request: [u8; 8],
    /// The digest of the hits before the page, when a cursor named it.
    before: Option<[u8; 16]>,
}

impl Page {
    /// The page `request` asks for, its offset and cursor checked.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] for a cursor with an offset; [`Error::InvalidCursor`] for a
    /// malformed cursor or one made for another request; [`Error::PageOutOfRange`] for a page
    /// past the ranking's window.
    pub fn of(request: &SearchRequest) -> Result<Page> {
        let k = request.k;
        let window = request.candidates_per_leg();
        let digest = request_digest(request);
        let (offset, before) = match request.cursor.as_deref() {
            None => (request.offset, None),
            Some(_) if request.offset > 0 => {
                return Err(Error::invalid_request("a cursor and an offset cannot be combined"))
            }
            Some(text) => {
                let cursor = Cursor::decode(text)?;
                if cursor.request != digest {
                    return Err(Error::InvalidCursor {
                        reason:
                            "it was made for another request (query, filter, mode, fusion, depth, boosts or principal)"
                                .into(),
                    });
                }
                (cursor.position, Some(cursor.before))
            }
        };
        let end = offset.saturating_add(k);
        if offset > 0 && end > window {
            return Err(Error::PageOutOfRange { end, window, max: MAX_DEPTH });
        }
        Ok(Page { offset, k, window, request: digest, before })
    }

    /// Where the page ends: the ranking must hold this many hits.
    pub fn end(&self) -> usize {
        self.offset + self.k
    }

    /// Hits before the page: they are ranked (the cursor checks them) but not returned.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Cuts the page out of `ranked` (best first, at least the hits up to [`Page::end`] when
    /// the ranking has them) and returns the cursor to the next page: when this page is full,
    /// `more` says the ranking holds hits past it, and the window another page.
    ///
    /// # Errors
    /// [`Error::StaleCursor`] when the hits before the page are not those the cursor saw.
    pub fn cut<T>(&self, ranked: &mut Vec<T>, hit: impl Fn(&T) -> &Hit, more: bool) -> Result<Option<String>> {
        if let Some(before) = self.before {
            if ranked.len() < self.offset || prefix_digest(ranked[..self.offset].iter().map(&hit)) != before {
                return Err(Error::StaleCursor);
            }
        }
        ranked.truncate(self.end());
        let full = self.k > 0 && ranked.len() == self.end();
        let next = (full && more && self.end() < self.window).then(|| {
            Cursor { position: self.end(), request: self.request, before: prefix_digest(ranked.iter().map(&hit)) }
                .encode()
        });
        ranked.drain(..self.offset.min(ranked.len()));
        Ok(next)
    }
}

/// What a cursor holds.
#[derive(Debug, Clone, PartialEq)]
struct Cursor {
    position: usize,
    request: [u8; 8],
    before: [u8; 16],
}

impl Cursor {
    fn encode(&self) -> String {
        let mut bytes = Vec::with_capacity(CURSOR_BYTES);
        bytes.push(VERSION);
        bytes.extend_from_slice(&(self.position as u32).to_be_bytes());
        bytes.extend_from_slice(&self.request);
        bytes.extend_from_slice(&self.before);
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn decode(text: &str) -> Result<Cursor> {
        let malformed = || Error::InvalidCursor { reason: "not a cursor this server made".into() };
        let text = text.trim();
        if text.len() != CURSOR_BYTES * 2 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(malformed());
        }
        let bytes: Vec<u8> = (0..CURSOR_BYTES)
            .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| malformed()))
            .collect::<Result<_>>()?;
        if bytes[0] != VERSION {
            return Err(malformed());
        }
        let position = u32::from_be_bytes(bytes[1..5].try_into().map_err(|_| malformed())?) as usize;
        if position == 0 || position > MAX_DEPTH {
            return Err(malformed());
        }
        Ok(Cursor {
            position,
            request: bytes[5..13].try_into().map_err(|_| malformed())?,
            before: bytes[13..29].try_into().map_err(|_| malformed())?,
        })
    }
}

/// A digest of everything that decides a request's ranking (not `k`, the offset or the
/// cursor, nor what hits carry).
fn request_digest(r: &SearchRequest) -> [u8; 8] {
    let mut tokens: Vec<&str> = r.principal.tokens().collect();
    tokens.sort_unstable();
    let mut h = Sha256::new();
    // Written straight into the hash (the same bytes `format!` would make, without the string).
    // Writing to a hash cannot fail.
    let _ = write!(
        Hashing(&mut h),
        "{:?}|{:?}|{:?}|{:?}|{}|{}|{:?}|{:?}|{}|{}|{:?}|{:?}|{:?}|",
        r.query,
        r.mode,
        r.syntax,
        r.filter,
        r.depth,
        r.rrf_k.to_bits(),
        r.weights,
        r.fusion,
        r.min_score.to_bits(),
        r.collapse,
        r.rerank,
        r.boosts,
        tokens,
    );
    // Feedback changes the ranking; requests without it keep the digest they always had.
    if r.feedback {
        h.update(b"feedback|");
    }
    // So do grouping and MMR; requests without them keep their digest too.
    if let Some(group) = &r.group_by {
        h.update(format!("group|{:?}|{}|", group.field, group.per_group).as_bytes());
    }
    if let Some(lambda) = r.mmr {
        h.update(b"mmr|");
        h.update(lambda.to_bits().to_le_bytes());
    }
    // The query vector as its bytes, after its length: formatted as text, a 384-d vector was
    // most of a hybrid request's work outside the legs (about 400,000 instructions).
    match &r.vector {
        None => h.update(b"-"),
        Some(v) => {
            h.update((v.len() as u64).to_le_bytes());
            let mut bytes = [0u8; 256];
            for chunk in v.chunks(bytes.len() / 4) {
                for (b, x) in bytes.chunks_exact_mut(4).zip(chunk) {
                    b.copy_from_slice(&x.to_bits().to_le_bytes());
                }
                h.update(&bytes[..4 * chunk.len()]);
            }
        }
    }
    let digest = h.finalize();
    digest[..8].try_into().unwrap_or([0; 8])
}

/// Text written into a hash as its UTF-8 bytes.
struct Hashing<'a>(&'a mut Sha256);

impl std::fmt::Write for Hashing<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.update(s.as_bytes());
        Ok(())
    }
}

/// A digest of ranked hits: their ids, in order. Not their scores: a single leg's scores are
/// normalised over the candidates it fetched, which a longer page fetches more of (the order
/// is the same).
fn prefix_digest<'h>(hits: impl Iterator<Item = &'h Hit>) -> [u8; 16] {
    let mut h = Sha256::new();
    for hit in hits {
        h.update((hit.id.len() as u64).to_be_bytes());
        h.update(hit.id.as_bytes());
    }
    h.finalize()[..16].try_into().unwrap_or([0; 16])
}

#[cfg(test)]
mod tests {
    use super::*;
    use braid_core::Principal;

    #[test]
    fn cursors_round_trip_and_refuse_garbage() {
        let c = Cursor { position: 20, request: [7; 8], before: [9; 16] };
        assert_eq!(Cursor::decode(&c.encode()).unwrap(), c);
        for bad in ["", "zz", &"0".repeat(CURSOR_BYTES * 2), &c.encode()[2..], "ü".repeat(29).as_str()] {
            assert!(matches!(Cursor::decode(bad), Err(Error::InvalidCursor { .. })), "{bad:?}");
        }
    }

    #[test]
    fn pages_are_checked_before_anything_runs() {
        let p = Principal::public();
        let page = |r: SearchRequest| Page::of(&r);
        assert!(page(SearchRequest::new("x", p.clone()).k(10).offset(90)).is_ok());
        let too_deep = page(SearchRequest::new("x", p.clone()).k(10).offset(91)).unwrap_err();
        assert!(matches!(too_deep, Error::PageOutOfRange { end: 101, window: 100, .. }), "{too_deep}");
        assert!(page(SearchRequest::new("x", p.clone()).k(10).offset(991).depth(1000)).is_err());
        assert!(page(SearchRequest::new("x", p.clone()).k(10).offset(usize::MAX)).is_err());
        let c = Cursor { position: 10, request: request_digest(&SearchRequest::new("x", p.clone())), before: [0; 16] };
        assert!(page(SearchRequest::new("x", p.clone()).cursor(c.encode())).is_ok());
        assert!(page(SearchRequest::new("x", p.clone()).cursor(c.encode()).offset(10)).is_err());
        for other in [
            SearchRequest::new("y", p.clone()),
            SearchRequest::new("x", p.clone()).depth(50),
            SearchRequest::new("x", Principal::from_verified_tokens(["tenant:acme"])),
            SearchRequest::new("x", p.clone()).vector(vec![0.6, 0.8]),
        ] {
            assert!(matches!(page(other.cursor(c.encode())), Err(Error::InvalidCursor { .. })));
        }
        // The query vector is part of it, bit for bit.
        let with = |v: Vec<f32>| request_digest(&SearchRequest::new("x", p.clone()).vector(v));
        assert_eq!(with(vec![0.6, 0.8]), with(vec![0.6, 0.8]));
        assert_ne!(with(vec![0.6, 0.8]), with(vec![0.8, 0.6]));
        assert_ne!(with(vec![0.0, 1.0]), with(vec![-0.0, 1.0]));
        // k is not part of the request's identity: the next page may be longer or shorter.
        assert!(page(SearchRequest::new("x", p).k(5).cursor(c.encode())).is_ok());
    }

    /// The digest's bytes are those of every earlier release, so cursors a running service
    /// handed out stay valid across an upgrade (pinned: a change here is a format change).
    /// Since 2026-12-04 a request's default mode is hybrid, so these requests, which name no
    /// mode, digest as hybrid requests always did (a cursor of an `auto` request is refused:
    /// that ranking is gone).
    #[test]
    fn request_digest_is_stable() {
        let vector: Vec<f32> = (0..100).map(|i| (i as f32 - 50.0) / 64.0).collect();
        let r = SearchRequest::new("retun policy", Principal::from_verified_tokens(["group:b", "group:a"]))
            .vector(vector)
            .depth(50);
        let hex = |d: &[u8]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
        assert_eq!(hex(&request_digest(&r)), "dc66525c1fffb6c3");
        assert_eq!(hex(&request_digest(&SearchRequest::new("x", Principal::public()))), "717034a56d906c20");
    }
}
