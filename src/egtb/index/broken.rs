//! Broken entries (index entries that name no legal position) per half of every endgame of 3 to
//! 5 men, as `EndgameIndex::count_broken` counts them: counting takes an enumeration of the whole
//! index (about 20 s for a 5-man endgame), so the counts are stored. They equal Nalimov,
//! Haworth, Heinz (2001), Table 14, with KNNKB btm corrected: the tests count all 3-4 man
//! endgames again (`index_roundtrip`), the 5-man ones on request.

use crate::egtb::material::Material;

const COUNTS: &str = include_str!("../../../tests/data/nalimov_broken.csv");

/// The stored `[wtm, btm]` broken counts of `m` (canonical colouring), if any.
pub fn stored(m: &Material) -> Option<[u64; 2]> {
    let name = m.canonical().0.to_string();
    COUNTS.lines().skip(1).find_map(|l| {
        let mut f = l.split(',');
        (f.next()? == name).then(|| {
            let mut n = f.map(|x| x.trim().parse::<u64>().ok());
            Some([n.next()??, n.next()??])
        })?
    })
}
