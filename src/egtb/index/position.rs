//! A position as the tables see it, the half (side to move) it belongs to, and the legality the
//! index notes define (section 5).

use super::en_passant::EpSquares;
use super::geometry::{Symmetry, PAWN_RANKS};
use crate::chess::attacks::{
    bishop_attacks, king_attacks, knight_attacks, pawn_attacks, rook_attacks,
};
use crate::chess::{Bitboard, Color, PieceType, Square};
use crate::egtb::material::Material;

/// One half of a table: the positions with White (the side named first) or Black to move.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub enum Half {
    Wtm = 0,
    Btm = 1,
}

impl Half {
    pub const BOTH: [Half; 2] = [Half::Wtm, Half::Btm];

    pub fn stm(self) -> Color {
        match self {
            Half::Wtm => Color::White,
            Half::Btm => Color::Black,
        }
    }

    pub fn of(stm: Color) -> Half {
        match stm {
            Color::White => Half::Wtm,
            Color::Black => Half::Btm,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Half::Wtm => "wtm",
            Half::Btm => "btm",
        }
    }
}

/// A position as the tables see it: men by colour and type, side to move, and the en-passant
/// target square when an en-passant capture is possible (else `None`).
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub struct TbPosition {
    pub pieces: [[Bitboard; 6]; 2],
    pub stm: Color,
    pub ep: Option<Square>,
}

impl TbPosition {
    /// An empty board with only the side to move set; add men with `put`.
    pub fn empty(stm: Color) -> TbPosition {
        TbPosition {
            pieces: [[Bitboard::EMPTY; 6]; 2],
            stm,
            ep: None,
        }
    }

    pub fn put(&mut self, color: Color, kind: PieceType, sq: Square) {
        self.pieces[color.index()][kind.index()].set(sq);
    }

    #[inline(always)]
    pub fn side(&self, color: Color) -> Bitboard {
        let p = &self.pieces[color.index()];
        p[0] | p[1] | p[2] | p[3] | p[4] | p[5]
    }

    #[inline(always)]
    pub fn occupied(&self) -> Bitboard {
        self.side(Color::White) | self.side(Color::Black)
    }

    #[inline(always)]
    pub fn king(&self, color: Color) -> Square {
        self.pieces[color.index()][PieceType::King.index()].lsb()
    }

    /// The material on the board (kings are not counted; a missing king is not detected here).
    pub fn material(&self) -> Material {
        let mut c = [[0u8; 5]; 2];
        for color in Color::BOTH {
            for (t, n) in c[color.index()].iter_mut().enumerate() {
                *n = self.pieces[color.index()][t].count() as u8;
            }
        }
        Material::from_counts(c[0], c[1])
    }

    /// The same position with colours exchanged and the board turned 1<->8.
    #[inline(always)]
    pub fn color_flipped(&self) -> TbPosition {
        let mut p = TbPosition::empty(!self.stm);
        for c in 0..2 {
            for t in 0..6 {
                p.pieces[1 - c][t] = self.pieces[c][t].flip_rank();
            }
        }
        p.ep = self.ep.map(Square::flip_rank);
        p
    }

    /// The image of the position under a board symmetry.
    #[inline(always)]
    pub fn transformed(&self, sym: Symmetry) -> TbPosition {
        let mut p = *self;
        // Most of the twelve boards are empty, and a symmetry leaves an empty board so: the
        // six-man generator reflects every position with both kings on a long diagonal.
        for b in p.pieces.iter_mut().flatten().filter(|b| b.0 != 0) {
            *b = sym.bitboard(*b);
        }
        p.ep = self.ep.map(|s| sym.square(s));
        p
    }

    /// Is `sq` attacked by a man of side `by`? Sliders are blocked by every man.
    #[inline(always)]
    pub fn attacked_by(&self, sq: Square, by: Color) -> bool {
        let p = &self.pieces[by.index()];
        let queens = p[PieceType::Queen.index()];
        let diagonal = p[PieceType::Bishop.index()] | queens;
        let straight = p[PieceType::Rook.index()] | queens;
        if (knight_attacks(sq) & p[PieceType::Knight.index()]).any()
            || (king_attacks(sq) & p[PieceType::King.index()]).any()
            || (pawn_attacks(!by, sq) & p[PieceType::Pawn.index()]).any()
        {
            return true;
        }
        // Sliders only when there are some: the magic lookups are the costly part.
        let occ = self.occupied();
        (diagonal.any() && (bishop_attacks(sq, occ) & diagonal).any())
            || (straight.any() && (rook_attacks(sq, occ) & straight).any())
    }

    /// Legality as the index notes (section 5) define it: one king each, men on distinct squares,
    /// kings not adjacent, pawns on ranks 2-7, the side not to move not in check; with `ep` set,
    /// the double-stepped pawn in place, the squares it crossed empty and a capturer beside it.
    /// No retrograde analysis beyond that.
    pub fn is_legal(&self) -> bool {
        let mut total = 0;
        let mut union = Bitboard::EMPTY;
        for c in 0..2 {
            for t in 0..6 {
                total += self.pieces[c][t].count();
                union |= self.pieces[c][t];
            }
        }
        let wk = self.pieces[0][PieceType::King.index()];
        let bk = self.pieces[1][PieceType::King.index()];
        if wk.count() != 1 || bk.count() != 1 || union.count() != total {
            return false;
        }
        let pawns = self.pieces[0][0] | self.pieces[1][0];
        if pawns.0 & !PAWN_RANKS != 0 {
            return false;
        }
        if (king_attacks(wk.lsb()) & bk).any() {
            return false;
        }
        if self.attacked_by(self.king(!self.stm), self.stm) {
            return false;
        }
        match self.ep {
            None => true,
            Some(ep) => self.ep_squares(ep).is_some_and(|e| e.capturers != 0),
        }
    }
}

impl TbPosition {
    /// Checks the shape of an en-passant situation (target on the right rank, pushed pawn present,
    /// the crossed squares empty) and returns its squares, or None if it cannot be one.
    #[inline(always)]
    pub(super) fn ep_squares(&self, ep: Square) -> Option<EpSquares> {
        let stm = self.stm;
        let (ep_rank, pushed, origin) = match stm {
            Color::White => (5, ep.0.wrapping_sub(8), ep.0 + 8),
            Color::Black => (2, ep.0 + 8, ep.0.wrapping_sub(8)),
        };
        if ep.rank() != ep_rank {
            return None;
        }
        let occ = self.occupied();
        if !self.pieces[(!stm).index()][0].contains(Square(pushed))
            || occ.contains(ep)
            || occ.contains(Square(origin))
        {
            return None;
        }
        let capturers = (pawn_attacks(!stm, ep) & self.pieces[stm.index()][0]).0;
        Some(EpSquares {
            ep,
            pushed: Square(pushed),
            origin: Square(origin),
            capturers,
        })
    }
}
