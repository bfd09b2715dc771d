//! The king placements that number the blocks of a table (Nalimov et al. 2001, Section 2.1,
//! Table 2 rows 3-9; Section 3.2): the stm king in a1-d1-d4 (pawnless, 462 with the sntm king
//! below the diagonal when the stm king is on it) or on files a-d (with pawns, 1806), kings apart.

use crate::chess::attacks::king_attacks;
use crate::chess::Square;
use once_cell::sync::Lazy;

pub(super) struct KingPlacements {
    /// Block number by (stm king, sntm king), u16::MAX if not a placement.
    pub(super) number: [[u16; 64]; 64],
    /// (stm king, sntm king) by block number, ascending stm king then sntm king.
    pub(super) list: Vec<(Square, Square)>,
}

impl KingPlacements {
    fn new(pawns: bool) -> KingPlacements {
        let mut number = [[u16::MAX; 64]; 64];
        let mut list = Vec::new();
        for ks in Square::all() {
            let allowed = if pawns {
                ks.file() < 4
            } else {
                ks.file() < 4 && ks.rank() <= ks.file()
            };
            if !allowed {
                continue;
            }
            for kn in Square::all() {
                if kn == ks || king_attacks(ks).contains(kn) {
                    continue;
                }
                if !pawns && ks.file() == ks.rank() && kn.file() < kn.rank() {
                    continue;
                }
                number[ks.index()][kn.index()] = list.len() as u16;
                list.push((ks, kn));
            }
        }
        KingPlacements { number, list }
    }
}

static PAWNLESS: Lazy<KingPlacements> = Lazy::new(|| KingPlacements::new(false));
static WITH_PAWNS: Lazy<KingPlacements> = Lazy::new(|| KingPlacements::new(true));

#[inline(always)]
pub(super) fn kk_pawns_number(ks: Square, kn: Square) -> Option<u16> {
    let n = WITH_PAWNS.number[ks.index()][kn.index()];
    (n != u16::MAX).then_some(n)
}

#[inline(always)]
pub(super) fn kk_placements(pawns: bool) -> &'static KingPlacements {
    if pawns {
        &WITH_PAWNS
    } else {
        &PAWNLESS
    }
}

/// Bytes of both placement tables.
pub(super) fn table_bytes() -> usize {
    2 * std::mem::size_of::<KingPlacements>()
        + (PAWNLESS.list.capacity() + WITH_PAWNS.list.capacity())
            * std::mem::size_of::<(Square, Square)>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn king_placements_are_462_and_1806() {
        assert_eq!(PAWNLESS.list.len(), 462);
        assert_eq!(WITH_PAWNS.list.len(), 1806);
        assert_eq!(*PAWNLESS.list.last().unwrap(), (Square(27), Square::H8));
        assert_eq!(*WITH_PAWNS.list.last().unwrap(), (Square::D8, Square::H8));
    }
}
