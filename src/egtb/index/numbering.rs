//! How a man's square becomes a number (Nalimov et al. 2001, Section 3.1, Tables 4-5; notes,
//! rules A to C): the squares open to a stm man of each type by sntm king, with unblockable
//! checks removed, and the numbering of the squares left free by an exclusion set.

use super::geometry::PAWN_RANKS;
use crate::chess::attacks::{
    bishop_attacks, king_attacks, knight_attacks, pawn_attacks, rook_attacks,
};
use crate::chess::{Bitboard, Color, Square};
use once_cell::sync::Lazy;

/// Numbering types for rule A: Q, R, B, N, white pawn, black pawn.
pub(super) const ET_WHITE_PAWN: usize = 4;
pub(super) const ET_BLACK_PAWN: usize = 5;

/// Rule A's numbering of squares, by man type and sntm king.
pub(super) struct AvailableSquares {
    /// Squares open to a stm man of each numbering type, by sntm king square (kings' squares and
    /// unblockable-check squares removed; pawns also kept to ranks 2-7). The stm king is removed
    /// per block.
    pub(super) avail: [[u64; 64]; 6],
    /// Number of each square in `avail` (ascending a1..h8), 255 if not available.
    pub(super) number: [[[u8; 64]; 64]; 6],
    /// Inverse of `number`.
    pub(super) square: [[[u8; 64]; 64]; 6],
}

pub(super) static AVAILABLE: Lazy<Box<AvailableSquares>> = Lazy::new(|| {
    let mut avail = [[0u64; 64]; 6];
    let mut number = [[[u8::MAX; 64]; 64]; 6];
    let mut square = [[[u8::MAX; 64]; 64]; 6];
    for kn in Square::all() {
        // Squares from which a man of each type checks the king on kn with no square between.
        let checks = [
            king_attacks(kn).0,
            rook_attacks(kn, Bitboard::ALL).0,
            bishop_attacks(kn, Bitboard::ALL).0,
            knight_attacks(kn).0,
            pawn_attacks(Color::Black, kn).0, // a white pawn there attacks kn
            pawn_attacks(Color::White, kn).0,
        ];
        for et in 0..6 {
            let mut a = !checks[et] & !(1u64 << kn.0);
            if et >= ET_WHITE_PAWN {
                a &= PAWN_RANKS;
            }
            avail[et][kn.index()] = a;
            for (i, s) in Bitboard(a).enumerate() {
                number[et][kn.index()][s.index()] = i as u8;
                square[et][kn.index()][i] = s.0;
            }
        }
    }
    Box::new(AvailableSquares {
        avail,
        number,
        square,
    })
});

/// Number of `s` among the squares not in `excl` (s itself not in `excl`).
#[inline(always)]
pub(super) fn x_number(s: Square, excl: u64) -> u8 {
    s.0 - (excl & ((1u64 << s.0) - 1)).count_ones() as u8
}

/// The `x`-th square (from 0, ascending) not in `excl`.
#[inline(always)]
pub(super) fn x_square(x: u8, mut excl: u64) -> Square {
    let mut s = x;
    while excl != 0 {
        let b = excl.trailing_zeros() as u8;
        if b > s {
            break;
        }
        s += 1;
        excl &= excl - 1;
    }
    Square(s)
}

/// How a group's men are numbered (notes, rules A to C).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(super) enum Numbering {
    /// Rule A (stm men): number among `avail[etype][sntm king]` minus the stm king.
    Unblockable { etype: u8 },
    /// Rule B1 (sntm pawns when the stm has only its king): ranks 2-7 minus both kings.
    PawnsOffKings,
    /// Rule B2 (other sntm pawns) and the e.p. zone's extra pawn: ranks 2-7 minus the squares
    /// of the `excl` groups (and the e.p. squares in that zone). Kings are not removed.
    Pawns { range: u8 },
    /// Rule C (sntm pieces): any square but the kings' and those of the `excl` groups
    /// (and the e.p. squares in that zone).
    Free { range: u8 },
}

/// Bytes of the tables of available squares.
pub(super) fn table_bytes() -> usize {
    std::mem::size_of::<AvailableSquares>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x_numbering_round_trip() {
        let excl = 0x8100_0000_0042_1801u64;
        for x in 0..(64 - excl.count_ones()) as u8 {
            let s = x_square(x, excl);
            assert_eq!(excl >> s.0 & 1, 0);
            assert_eq!(x_number(s, excl), x);
        }
    }

    #[test]
    fn paper_table_3_and_examples() {
        // Table 3 row bK c2, wK a1: Q 54, R 58, B 58, N 57 (the notes' reading), P 47.
        let t = &**AVAILABLE;
        let (wk, bk) = (Square::A1, Square(10));
        let q = |et: usize| {
            let a = t.avail[et][bk.index()];
            a.count_ones() - ((a >> wk.0) & 1) as u32
        };
        assert_eq!([q(0), q(1), q(2), q(3), q(4)], [54, 58, 58, 57, 47]);
        // Table 5: wQ numbers with bK c2 (wK not yet removed): e1 is 1, h8 is 54.
        assert_eq!(t.number[0][bk.index()][4], 1);
        assert_eq!(t.number[0][bk.index()][63], 54);
    }
}
