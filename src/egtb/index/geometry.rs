//! Board geometry of the index: the pawn ranks, the board's reflections on bitboards, and the
//! symmetries of Section 2.1 (Nalimov et al. 2001) with the one that brings a position's kings
//! into their canonical zone.

use crate::chess::{Bitboard, Square};

pub(super) const RANK_1: u64 = 0xFF;
const RANK_8: u64 = 0xFF << 56;
pub(super) const PAWN_RANKS: u64 = !(RANK_1 | RANK_8);

#[inline(always)]
fn mirror_files(x: u64) -> u64 {
    x.reverse_bits().swap_bytes()
}

#[inline(always)]
pub(super) fn flip_ranks(x: u64) -> u64 {
    x.swap_bytes()
}

/// Reflection in the a1-h8 diagonal (the classic three delta swaps).
#[inline(always)]
fn transpose(mut x: u64) -> u64 {
    let k1 = 0x5500_5500_5500_5500u64;
    let k2 = 0x3333_0000_3333_0000u64;
    let k4 = 0x0f0f_0f0f_0000_0000u64;
    let mut t = k4 & (x ^ (x << 28));
    x ^= t ^ (t >> 28);
    t = k2 & (x ^ (x << 14));
    x ^= t ^ (t >> 14);
    t = k1 & (x ^ (x << 7));
    x ^= t ^ (t >> 7);
    x
}

/// A board symmetry: mirror a<->h, then mirror 1<->8, then transpose, each if set.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct Symmetry {
    pub mirror_files: bool,
    pub mirror_ranks: bool,
    pub transpose: bool,
}

impl Symmetry {
    #[inline(always)]
    pub fn square(self, mut s: Square) -> Square {
        if self.mirror_files {
            s = s.flip_file();
        }
        if self.mirror_ranks {
            s = s.flip_rank();
        }
        if self.transpose {
            s = s.transpose();
        }
        s
    }

    #[inline(always)]
    pub fn bitboard(self, b: Bitboard) -> Bitboard {
        let mut x = b.0;
        if self.mirror_files {
            x = mirror_files(x);
        }
        if self.mirror_ranks {
            x = flip_ranks(x);
        }
        if self.transpose {
            x = transpose(x);
        }
        Bitboard(x)
    }

    /// The symmetry that undoes this one. With the transposition last, a mirror before it is
    /// the other mirror after it: T R^r F^f undone is F^f R^r T = T R^f F^r.
    #[inline(always)]
    pub fn inverse(self) -> Symmetry {
        if self.transpose {
            Symmetry {
                mirror_files: self.mirror_ranks,
                mirror_ranks: self.mirror_files,
                transpose: true,
            }
        } else {
            self
        }
    }

    /// All eight symmetries of the square (pawnless endgames) or the two that keep pawns' files
    /// order (endgames with pawns), for tests and callers that enumerate symmetric images.
    pub fn group(pawns: bool) -> Vec<Symmetry> {
        let mut out = Vec::new();
        for i in 0..8u8 {
            let s = Symmetry {
                mirror_files: i & 1 != 0,
                mirror_ranks: i & 2 != 0,
                transpose: i & 4 != 0,
            };
            if !pawns || (!s.mirror_ranks && !s.transpose) {
                out.push(s);
            }
        }
        out
    }
}

/// The symmetry bringing the stm king into a1-d1-d4 (pawnless, with the sntm king into
/// a1-h1-h8 when the stm king is on the diagonal) or onto files a-d (with pawns).
#[inline(always)]
pub fn normalising_symmetry(pawns: bool, ks: Square, kn: Square) -> Symmetry {
    let mut s = Symmetry {
        mirror_files: ks.file() >= 4,
        ..Symmetry::default()
    };
    if pawns {
        return s;
    }
    s.mirror_ranks = ks.rank() >= 4;
    let (a, b) = (s.square(ks), s.square(kn));
    s.transpose = a.file() < a.rank() || (a.file() == a.rank() && b.file() < b.rank());
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_undoes_every_symmetry() {
        for sym in Symmetry::group(false) {
            for s in Square::all() {
                assert_eq!(sym.inverse().square(sym.square(s)), s, "{sym:?}");
            }
        }
    }

    #[test]
    fn bitboard_symmetries_match_square_symmetries() {
        for sym in Symmetry::group(false) {
            for s in Square::all() {
                assert_eq!(
                    sym.bitboard(Bitboard::from_square(s)),
                    Bitboard::from_square(sym.square(s))
                );
            }
        }
    }
}
