//! Interior-node recognizers: facts about a position that the search can trust without searching.
//!
//! `blockage` is the pawn-fence detector of Tabibi, Felner and Netanyahu (2003), with its pawn hash;
//! `material` holds Heinz-style material recognizers (sound bounds or exact values), `kpk` the
//! king-and-pawn-versus-king bitbase they use. Everything here takes a plain description of the
//! men (`Men`), so the tests and the table checks can call it on any position.

pub mod blockage;
pub mod kpk;
pub mod material;

pub use blockage::{BlockageTable, PawnEnding, ProbeStats, Wanted};
pub use material::recognize;

use crate::chess::{Bitboard, Color, PieceType, Position, Square};

/// The men on the board, the side to move and the en-passant target square: all a recognizer needs.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Men {
    /// `pieces[color][kind]`, indexed by `Color::index()` and `PieceType::index()`.
    pub pieces: [[Bitboard; 6]; 2],
    pub side_to_move: Color,
    /// The square a pawn may capture onto en passant, if the last move was a double push.
    pub en_passant: Option<Square>,
}

impl Men {
    pub fn empty(side_to_move: Color) -> Men {
        Men {
            pieces: [[Bitboard::EMPTY; 6]; 2],
            side_to_move,
            en_passant: None,
        }
    }

    #[inline(always)]
    pub fn get(&self, color: Color, kind: PieceType) -> Bitboard {
        self.pieces[color.index()][kind.index()]
    }

    pub fn put(&mut self, color: Color, kind: PieceType, sq: Square) {
        self.pieces[color.index()][kind.index()].set(sq);
    }

    /// Every man of `color`.
    #[inline(always)]
    pub fn color(&self, color: Color) -> Bitboard {
        let p = &self.pieces[color.index()];
        p[0] | p[1] | p[2] | p[3] | p[4] | p[5]
    }

    #[inline(always)]
    pub fn occupied(&self) -> Bitboard {
        self.color(Color::White) | self.color(Color::Black)
    }

    /// The king of `color`; `None` unless there is exactly one.
    #[inline(always)]
    pub fn king(&self, color: Color) -> Option<Square> {
        let k = self.get(color, PieceType::King);
        if k.any() && !k.more_than_one() {
            Some(k.lsb())
        } else {
            None
        }
    }

    /// Knights, bishops, rooks and queens of `color`.
    #[inline(always)]
    pub fn officers(&self, color: Color) -> Bitboard {
        let p = &self.pieces[color.index()];
        p[1] | p[2] | p[3] | p[4]
    }

    /// Kings and pawns only (the positions the blockage detector speaks about).
    #[inline(always)]
    pub fn is_pawn_ending(&self) -> bool {
        (self.officers(Color::White) | self.officers(Color::Black)).is_empty()
    }

    /// The same position seen from the other side: colours swapped, board flipped 1 <-> 8.
    pub fn mirrored(&self) -> Men {
        let mut m = Men::empty(!self.side_to_move);
        for c in Color::BOTH {
            for k in PieceType::ALL {
                m.pieces[(!c).index()][k.index()] = self.get(c, k).flip_rank();
            }
        }
        m.en_passant = self.en_passant.map(Square::flip_rank);
        m
    }
}

/// A game result from the point of view of the side to move.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Outcome {
    Win,
    Draw,
    Loss,
}

/// What a recognizer knows about the game-theoretic value, from the side to move's point of view.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Bound {
    /// The value with best play is exactly this.
    Exact(Outcome),
    /// The side to move cannot win (value <= draw): the search may set `beta = DRAW`.
    AtMostDraw,
    /// The side to move cannot lose (value >= draw): the search may set `alpha = DRAW`.
    AtLeastDraw,
}

impl From<&Position> for Men {
    fn from(pos: &Position) -> Men {
        let mut men = Men::empty(pos.side_to_move());
        for c in Color::BOTH {
            for k in PieceType::ALL {
                men.pieces[c.index()][k.index()] = pos.pieces(c, k);
            }
        }
        men.en_passant = pos.ep_square();
        men
    }
}

/// A position from a FEN whose castling and en-passant fields may be left out; for tests.
#[cfg(test)]
pub(crate) fn men_from_fen(fen: &str) -> Men {
    let fields = fen.split_whitespace().count();
    let fen = if fields == 2 {
        format!("{fen} - -")
    } else {
        fen.to_string()
    };
    Men::from(&Position::from_fen(&fen).expect("test FEN"))
}
