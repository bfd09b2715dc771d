//! The basic vocabulary of the rules: colours, piece types, pieces, squares and moves.
//!
//! Squares are numbered 0..63 from a1, b1, ... h1, a2, ... to h8 (rank-major), the numbering
//! the Nalimov index notes use too.

use std::fmt;

#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub enum Color {
    White = 0,
    Black = 1,
}

impl Color {
    pub const BOTH: [Color; 2] = [Color::White, Color::Black];

    #[inline(always)]
    pub fn index(self) -> usize {
        self as usize
    }

    /// Rank offset of one step forward for this colour's pawns, in squares.
    #[inline(always)]
    pub fn forward(self) -> i8 {
        match self {
            Color::White => 8,
            Color::Black => -8,
        }
    }
}

impl std::ops::Not for Color {
    type Output = Color;
    #[inline(always)]
    fn not(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub enum PieceType {
    Pawn = 0,
    Knight = 1,
    Bishop = 2,
    Rook = 3,
    Queen = 4,
    King = 5,
}

impl PieceType {
    pub const ALL: [PieceType; 6] = [
        PieceType::Pawn,
        PieceType::Knight,
        PieceType::Bishop,
        PieceType::Rook,
        PieceType::Queen,
        PieceType::King,
    ];
    /// The four types a pawn may promote to, strongest first.
    pub const PROMOTIONS: [PieceType; 4] = [
        PieceType::Queen,
        PieceType::Rook,
        PieceType::Bishop,
        PieceType::Knight,
    ];

    #[inline(always)]
    pub fn index(self) -> usize {
        self as usize
    }

    #[inline(always)]
    pub fn from_index(i: usize) -> PieceType {
        PieceType::ALL[i]
    }

    /// Upper-case letter, as White's men are written in FEN and endgame names.
    pub fn letter(self) -> char {
        b"PNBRQK"[self as usize] as char
    }

    pub fn from_letter(c: char) -> Option<PieceType> {
        match c.to_ascii_uppercase() {
            'P' => Some(PieceType::Pawn),
            'N' => Some(PieceType::Knight),
            'B' => Some(PieceType::Bishop),
            'R' => Some(PieceType::Rook),
            'Q' => Some(PieceType::Queen),
            'K' => Some(PieceType::King),
            _ => None,
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub struct Piece {
    pub color: Color,
    pub kind: PieceType,
}

impl Piece {
    #[inline(always)]
    pub fn new(color: Color, kind: PieceType) -> Piece {
        Piece { color, kind }
    }

    /// Dense index 0..12 (White's six types, then Black's), for Zobrist keys and tables.
    #[inline(always)]
    pub fn index(self) -> usize {
        self.color.index() * 6 + self.kind.index()
    }

    pub fn fen_char(self) -> char {
        let c = self.kind.letter();
        match self.color {
            Color::White => c,
            Color::Black => c.to_ascii_lowercase(),
        }
    }

    pub fn from_fen_char(c: char) -> Option<Piece> {
        let kind = PieceType::from_letter(c)?;
        let color = if c.is_ascii_uppercase() {
            Color::White
        } else {
            Color::Black
        };
        Some(Piece { color, kind })
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub struct Square(pub u8);

impl Square {
    pub const A1: Square = Square(0);
    pub const B1: Square = Square(1);
    pub const C1: Square = Square(2);
    pub const D1: Square = Square(3);
    pub const E1: Square = Square(4);
    pub const F1: Square = Square(5);
    pub const G1: Square = Square(6);
    pub const H1: Square = Square(7);
    pub const A8: Square = Square(56);
    pub const B8: Square = Square(57);
    pub const C8: Square = Square(58);
    pub const D8: Square = Square(59);
    pub const E8: Square = Square(60);
    pub const F8: Square = Square(61);
    pub const G8: Square = Square(62);
    pub const H8: Square = Square(63);

    #[inline(always)]
    pub fn new(file: u8, rank: u8) -> Square {
        debug_assert!(file < 8 && rank < 8);
        Square(rank * 8 + file)
    }

    #[inline(always)]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// 0 = a-file ... 7 = h-file.
    #[inline(always)]
    pub fn file(self) -> u8 {
        self.0 & 7
    }

    /// 0 = first rank ... 7 = eighth rank.
    #[inline(always)]
    pub fn rank(self) -> u8 {
        self.0 >> 3
    }

    /// The rank as seen from `color`'s side: 0 is its own back rank.
    #[inline(always)]
    pub fn relative_rank(self, color: Color) -> u8 {
        match color {
            Color::White => self.rank(),
            Color::Black => 7 - self.rank(),
        }
    }

    /// Mirror 1 <-> 8 (the colour flip of a position).
    #[inline(always)]
    pub fn flip_rank(self) -> Square {
        Square(self.0 ^ 56)
    }

    /// Mirror a <-> h.
    #[inline(always)]
    pub fn flip_file(self) -> Square {
        Square(self.0 ^ 7)
    }

    /// Reflection in the a1-h8 diagonal.
    #[inline(always)]
    pub fn transpose(self) -> Square {
        Square::new(self.rank(), self.file())
    }

    /// The square `delta` squares away (in index terms); the caller guarantees it is on the board.
    #[inline(always)]
    pub fn offset(self, delta: i8) -> Square {
        Square((self.0 as i8 + delta) as u8)
    }

    pub fn all() -> impl Iterator<Item = Square> {
        (0..64u8).map(Square)
    }

    pub fn parse(s: &str) -> Option<Square> {
        let b = s.as_bytes();
        if b.len() != 2 {
            return None;
        }
        let (f, r) = (b[0], b[1]);
        if !(b'a'..=b'h').contains(&f) || !(b'1'..=b'8').contains(&r) {
            return None;
        }
        Some(Square::new(f - b'a', r - b'1'))
    }

    /// Chebyshev distance: the number of king steps between two squares.
    #[inline(always)]
    pub fn distance(self, other: Square) -> u8 {
        let df = (self.file() as i8 - other.file() as i8).unsigned_abs();
        let dr = (self.rank() as i8 - other.rank() as i8).unsigned_abs();
        df.max(dr)
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "{}{}",
            (b'a' + self.file()) as char,
            (b'1' + self.rank()) as char
        )
    }
}

/// What kind of move a `Move` is, beyond its from and to squares.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum MoveKind {
    Normal,
    /// A pawn's two-square advance.
    DoublePush,
    /// King takes two steps towards a rook; the rook jumps over.
    Castle,
    EnPassant,
    Promotion(PieceType),
}

/// A move packed in 16 bits: from (6), to (6), flags (4).
///
/// Flags: 0 normal, 1 double push, 2 castle, 3 en passant, 4..7 promotion to N, B, R, Q.
/// A castling move is written king-from to king-destination (e1g1), as UCI wants it in standard chess.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Default)]
pub struct Move(pub u16);

impl Move {
    pub const NONE: Move = Move(0);

    #[inline(always)]
    fn pack(from: Square, to: Square, flag: u16) -> Move {
        Move(from.0 as u16 | (to.0 as u16) << 6 | flag << 12)
    }

    #[inline(always)]
    pub fn normal(from: Square, to: Square) -> Move {
        Move::pack(from, to, 0)
    }
    #[inline(always)]
    pub fn double_push(from: Square, to: Square) -> Move {
        Move::pack(from, to, 1)
    }
    #[inline(always)]
    pub fn castle(from: Square, to: Square) -> Move {
        Move::pack(from, to, 2)
    }
    #[inline(always)]
    pub fn en_passant(from: Square, to: Square) -> Move {
        Move::pack(from, to, 3)
    }
    #[inline(always)]
    pub fn promotion(from: Square, to: Square, kind: PieceType) -> Move {
        let flag = match kind {
            PieceType::Knight => 4,
            PieceType::Bishop => 5,
            PieceType::Rook => 6,
            _ => 7,
        };
        Move::pack(from, to, flag)
    }

    #[inline(always)]
    pub fn from(self) -> Square {
        Square((self.0 & 63) as u8)
    }
    #[inline(always)]
    pub fn to(self) -> Square {
        Square(((self.0 >> 6) & 63) as u8)
    }
    #[inline(always)]
    fn flag(self) -> u16 {
        self.0 >> 12
    }

    #[inline(always)]
    pub fn kind(self) -> MoveKind {
        match self.flag() {
            0 => MoveKind::Normal,
            1 => MoveKind::DoublePush,
            2 => MoveKind::Castle,
            3 => MoveKind::EnPassant,
            4 => MoveKind::Promotion(PieceType::Knight),
            5 => MoveKind::Promotion(PieceType::Bishop),
            6 => MoveKind::Promotion(PieceType::Rook),
            _ => MoveKind::Promotion(PieceType::Queen),
        }
    }

    #[inline(always)]
    pub fn promotion_piece(self) -> Option<PieceType> {
        match self.kind() {
            MoveKind::Promotion(p) => Some(p),
            _ => None,
        }
    }

    #[inline(always)]
    pub fn is_promotion(self) -> bool {
        self.flag() >= 4
    }

    #[inline(always)]
    pub fn is_none(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Display for Move {
    /// UCI long algebraic notation; the null move prints as `0000`.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.is_none() {
            return write!(f, "0000");
        }
        write!(f, "{}{}", self.from(), self.to())?;
        if let Some(p) = self.promotion_piece() {
            write!(f, "{}", p.letter().to_ascii_lowercase())?;
        }
        Ok(())
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_packing_round_trips() {
        let m = Move::promotion(Square(52), Square(61), PieceType::Knight);
        assert_eq!(m.from(), Square(52));
        assert_eq!(m.to(), Square(61));
        assert_eq!(m.kind(), MoveKind::Promotion(PieceType::Knight));
        assert_eq!(m.to_string(), "e7f8n");
        assert_eq!(
            Move::castle(Square::E1, Square::G1).kind(),
            MoveKind::Castle
        );
    }

    #[test]
    fn square_names() {
        assert_eq!(Square::parse("e4"), Some(Square(28)));
        assert_eq!(Square(63).to_string(), "h8");
        assert_eq!(Square::parse("i1"), None);
        assert_eq!(Square::parse("a9"), None);
        assert_eq!(Square(1).transpose(), Square(8));
    }
}
