//! A layout of some pawn structures of an endgame only (`Layout::of_unit`), for the solver that
//! works one structure at a time (`generate::structures`). Pawns only move forward, so the
//! positions of one placement of the pawns lead by the other men's moves only to positions of
//! the same placement or of its mirror image (White's king crossing from file d to file e
//! turns the board); a pawn move leaves for another placement. A *variant* is one placement
//! of the pawns in the layout's orientation, with an en-passant square where a capture is
//! available: such positions, reached only by a double step, lead by quiet moves into their
//! own placement without one. A unit is a set of variants closed under both couplings.

use crate::chess::attacks::pawn_attacks;
use crate::chess::{Bitboard, Color, PieceType, Square};
use crate::egtb::index::{Symmetry, TbPosition};
use rustc_hash::FxHashMap as HashMap;

/// No en-passant square in a variant.
pub const NO_EP: u8 = 64;

/// One placement of the pawns (White's, Black's) in the layout's orientation, with the
/// en-passant square of a capture that is available, or `NO_EP`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Variant {
    pub pawns: [u64; 2],
    pub ep: u8,
}

const MIRROR: Symmetry = Symmetry {
    mirror_files: true,
    mirror_ranks: false,
    transpose: false,
};

impl Variant {
    /// The variant of `pos` seen through `sym`.
    #[inline(always)]
    pub fn of(pos: &TbPosition, sym: Symmetry) -> Variant {
        let p = PieceType::Pawn.index();
        let pawns = [0, 1].map(|c| sym.bitboard(pos.pieces[c][p]).0);
        let ep = match pos.ep {
            Some(ep) if (pawn_attacks(!pos.stm, ep) & pos.pieces[pos.stm.index()][p]).any() => {
                sym.square(ep).0
            }
            _ => NO_EP,
        };
        Variant { pawns, ep }
    }

    /// The board turned a <-> h.
    pub fn mirrored(self) -> Variant {
        Variant {
            pawns: self.pawns.map(|b| MIRROR.bitboard(Bitboard(b)).0),
            ep: if self.ep == NO_EP {
                NO_EP
            } else {
                MIRROR.square(Square(self.ep)).0
            },
        }
    }

    /// The side that may capture en passant (the one to move), if any.
    pub fn ep_side(self) -> Option<Color> {
        match self.ep {
            NO_EP => None,
            e if e / 8 == 5 => Some(Color::White),
            _ => Some(Color::Black),
        }
    }

    /// The squares the double step crossed and started from, which must be empty.
    pub fn ep_path(self) -> u64 {
        match self.ep_side() {
            None => 0,
            Some(Color::White) => (1u64 << self.ep) | 1u64 << (self.ep + 8),
            Some(Color::Black) => (1u64 << self.ep) | 1u64 << (self.ep - 8),
        }
    }

    /// Every variant of the same placement with an en-passant capture available to `side`.
    pub fn ep_variants(self, side: Color) -> impl Iterator<Item = Variant> {
        let (us, them) = (self.pawns[side.index()], self.pawns[(!side).index()]);
        let occ = us | them;
        // `them` double-stepped: from their second rank to their fourth.
        let (fourth, back): (u64, i8) = match side {
            Color::White => (0xFF << 32, 8),
            Color::Black => (0xFF << 24, -8),
        };
        Bitboard(them & fourth).into_iter().filter_map(move |dest| {
            let crossed = dest.offset(back);
            let origin = crossed.offset(back);
            let free = occ & ((1u64 << crossed.0) | (1u64 << origin.0)) == 0;
            let capturable = (pawn_attacks(!side, crossed).0 & us) != 0;
            (free && capturable).then_some(Variant {
                pawns: self.pawns,
                ep: crossed.0,
            })
        })
    }
}

/// The variants of a unit and their numbers.
#[derive(Clone, Debug)]
pub struct Unit {
    pub variants: Vec<Variant>,
    number: HashMap<Variant, u32>,
}

impl Unit {
    pub fn new(variants: Vec<Variant>) -> Unit {
        let number = variants
            .iter()
            .enumerate()
            .map(|(i, &v)| (v, i as u32))
            .collect();
        Unit { variants, number }
    }

    #[inline(always)]
    pub fn number(&self, v: &Variant) -> Option<u32> {
        self.number.get(v).copied()
    }
}
