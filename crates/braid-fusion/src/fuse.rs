//! One entry point for every fusion method, on one scale.

use braid_core::Fusion;

use crate::{blend, normalised, rrf, rrf_ceiling, BlendParams, Fused, LegList, Normalisation};

/// The parameters of [`fuse`]; each method reads its own.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FuseParams {
    /// RRF's constant `k` ([`rrf`]).
    pub rrf_k: f32,
    /// [`blend`]'s parameters.
    pub blend: BlendParams,
}

impl Default for FuseParams {
    fn default() -> Self {
        FuseParams { rrf_k: 60.0, blend: BlendParams::DEFAULT }
    }
}

/// Fuses the legs' lists by `method`, best first, every score on `[0, 1]`: 1 is the highest
/// score these legs and weights can give (first in every leg that ran, for RRF). Each
/// candidate's leg contributions are on the same scale, so they still sum to its score.
///
/// ```
/// use braid_core::{Fusion, Leg};
/// use braid_fusion::{fuse, FuseParams, LegList};
///
/// let lexical = LegList::new(Leg::Lexical, 1.0, vec![(7, 12.5), (3, 9.0)]);
/// let fuzzy = LegList::new(Leg::Fuzzy, 1.0, vec![(7, 4.0), (9, 2.0)]);
/// let fused = fuse(Fusion::Rrf, &[lexical, fuzzy], &FuseParams::default());
/// assert_eq!(fused[0].ord, 7);
/// assert!((fused[0].score - 1.0).abs() < 1e-6); // first in both legs
/// assert!(fused.iter().all(|f| (0.0..=1.0).contains(&f.score)));
/// ```
pub fn fuse(method: Fusion, lists: &[LegList], params: &FuseParams) -> Vec<Fused> {
    let (mut fused, ceiling) = match method {
        Fusion::Rrf => (rrf(lists, params.rrf_k), rrf_ceiling(lists, params.rrf_k)),
        Fusion::Blend => blend(lists, &params.blend),
        Fusion::MinMax => (normalised(lists, Normalisation::MinMax), 1.0),
        Fusion::ZScore => (normalised(lists, Normalisation::ZScore), 1.0),
        Fusion::Dbsf => (normalised(lists, Normalisation::Dbsf), 1.0),
    };
    if ceiling > 0.0 && ceiling != 1.0 {
        for f in &mut fused {
            f.score /= ceiling;
            for leg in &mut f.legs {
                leg.contribution /= ceiling;
            }
        }
    }
    fused
}
