//! The map from each live ordinal to its first slot, rebuilt from the slot tables on open and
//! after a compaction.

use braid_core::Ordinal;
use rustc_hash::FxHashMap;

/// Live ordinals to their first slot. Ordinals are the engine's own counters, not caller
/// input, so the map hashes them with `FxHash` (one multiply) rather than SipHash: at a
/// million records that halves the time an open spends building it.
pub(crate) type SlotMap = FxHashMap<Ordinal, usize>;

/// Each live ordinal's first slot, from `slot_ord` and `live` (one entry a slot). `None` when
/// an ordinal is live in two places that are not one run of adjacent slots — a record's
/// passages are adjacent, so the tables are damaged.
pub(crate) fn first_slots(slot_ord: &[Ordinal], live: &[bool]) -> Option<SlotMap> {
    let mut map = SlotMap::with_capacity_and_hasher(slot_ord.len(), Default::default());
    let mut previous: Option<Ordinal> = None;
    for (slot, (&ord, &is_live)) in slot_ord.iter().zip(live).enumerate() {
        if !is_live {
            previous = None;
            continue;
        }
        if previous != Some(ord) && map.insert(ord, slot).is_some() {
            return None;
        }
        previous = Some(ord);
    }
    Some(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_maps_to_its_first_slot_and_a_second_run_is_refused() {
        let map = first_slots(&[4, 4, 9, 4, 7], &[true, true, true, false, true]).expect("adjacent runs");
        assert_eq!(map.get(&4), Some(&0));
        assert_eq!(map.get(&9), Some(&2));
        assert_eq!(map.get(&7), Some(&4));
        assert_eq!(map.len(), 3);
        // 4 live again after another record's slot, and after a dead slot of its own.
        assert!(first_slots(&[4, 9, 4], &[true, true, true]).is_none());
        assert!(first_slots(&[4, 4, 4], &[true, false, true]).is_none());
    }
}
