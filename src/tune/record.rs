//! One training position in 32 bytes, as `datagen` writes them and the tuner reads them: the
//! board, the side to move, the search's score and the game's result. A text line (FEN and
//! result) takes about 70 bytes; tens of millions of positions are a few gigabytes that way.
//!
//! Layout, little-endian:
//!
//! | bytes | field |
//! | --- | --- |
//! | 0-7 | occupied squares, bit s for square s (a1 = 0, h8 = 63) |
//! | 8-23 | the men, a nibble each in square order, low nibble first: colour × 8 + type (pawn 0 ... king 5) |
//! | 24-25 | the search's score in centipawns, White's view |
//! | 26 | side to move: 0 White, 1 Black |
//! | 27 | White's game result: 0 loss, 1 draw, 2 win |
//! | 28 | half-move clock (capped at 255) |
//! | 29-30 | full-move number |
//! | 31 | 1 if the result came from the endgame tables, else 0 |
//!
//! Castling rights and the en-passant square are not kept: the positions are quiet ones an
//! evaluation learns from, and a decoded position has neither.

use crate::chess::{Color, Piece, PieceType, Position, Square};
use std::fmt::Write as _;

pub const RECORD_BYTES: usize = 32;

/// A game's result from White's side.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum GameResult {
    Loss = 0,
    Draw = 1,
    Win = 2,
}

impl GameResult {
    /// The result as a score for White: 0, 0.5 or 1.
    pub fn white_score(self) -> f32 {
        self as u8 as f32 / 2.0
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Record {
    occupied: u64,
    men: [u8; 16],
    /// The search's score, White's view, in centipawns.
    pub score: i16,
    pub side_to_move: Color,
    pub result: GameResult,
    pub halfmove: u8,
    pub fullmove: u16,
    /// The result is the endgame tables' verdict, not a played-out game's.
    pub from_tables: bool,
}

/// Why 32 bytes are not a record.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RecordError {
    #[error("{0} men on the board (at most 32)")]
    TooManyMen(u32),
    #[error("man code {0} is not a piece")]
    BadMan(u8),
    #[error("not one king of each colour")]
    Kings,
    #[error("field {0} out of range")]
    Field(&'static str),
}

impl Record {
    /// `pos` with `score` (White's view) and White's `result`.
    pub fn new(pos: &Position, score: i16, result: GameResult, from_tables: bool) -> Record {
        let occupied = pos.occupied().0;
        let mut men = [0u8; 16];
        let mut bits = occupied;
        let mut k = 0;
        while bits != 0 {
            let sq = Square(bits.trailing_zeros() as u8);
            bits &= bits - 1;
            let p = pos.piece_at(sq).expect("an occupied square holds a man");
            let code = (p.color.index() * 8 + p.kind.index()) as u8;
            men[k / 2] |= code << (4 * (k % 2));
            k += 1;
        }
        Record {
            occupied,
            men,
            score,
            side_to_move: pos.side_to_move(),
            result,
            halfmove: pos.halfmove_clock().min(255) as u8,
            fullmove: pos.fullmove_number(),
            from_tables,
        }
    }

    pub fn to_bytes(&self) -> [u8; RECORD_BYTES] {
        let mut b = [0u8; RECORD_BYTES];
        b[0..8].copy_from_slice(&self.occupied.to_le_bytes());
        b[8..24].copy_from_slice(&self.men);
        b[24..26].copy_from_slice(&self.score.to_le_bytes());
        b[26] = self.side_to_move as u8;
        b[27] = self.result as u8;
        b[28] = self.halfmove;
        b[29..31].copy_from_slice(&self.fullmove.to_le_bytes());
        b[31] = self.from_tables as u8;
        b
    }

    /// The record in `b`, checked: a damaged file gives an error, not a wrong board.
    pub fn from_bytes(b: &[u8; RECORD_BYTES]) -> Result<Record, RecordError> {
        let occupied = u64::from_le_bytes(b[0..8].try_into().expect("8 bytes"));
        let count = occupied.count_ones();
        if count > 32 {
            return Err(RecordError::TooManyMen(count));
        }
        let men: [u8; 16] = b[8..24].try_into().expect("16 bytes");
        let mut kings = [0; 2];
        for k in 0..count as usize {
            let code = men[k / 2] >> (4 * (k % 2)) & 15;
            if code % 8 > 5 {
                return Err(RecordError::BadMan(code));
            }
            if code % 8 == 5 {
                kings[(code / 8) as usize] += 1;
            }
        }
        if kings != [1, 1] {
            return Err(RecordError::Kings);
        }
        let side_to_move = match b[26] {
            0 => Color::White,
            1 => Color::Black,
            _ => return Err(RecordError::Field("side to move")),
        };
        let result = match b[27] {
            0 => GameResult::Loss,
            1 => GameResult::Draw,
            2 => GameResult::Win,
            _ => return Err(RecordError::Field("result")),
        };
        let from_tables = match b[31] {
            0 => false,
            1 => true,
            _ => return Err(RecordError::Field("tables flag")),
        };
        Ok(Record {
            occupied,
            men,
            score: i16::from_le_bytes([b[24], b[25]]),
            side_to_move,
            result,
            halfmove: b[28],
            fullmove: u16::from_le_bytes([b[29], b[30]]),
            from_tables,
        })
    }

    /// The men on the board, in square order.
    pub fn men(&self) -> impl Iterator<Item = (Square, Piece)> + '_ {
        let mut bits = self.occupied;
        (0..self.occupied.count_ones() as usize).map(move |k| {
            let sq = Square(bits.trailing_zeros() as u8);
            bits &= bits - 1;
            let code = self.men[k / 2] >> (4 * (k % 2)) & 15;
            let color = if code >= 8 {
                Color::Black
            } else {
                Color::White
            };
            (
                sq,
                Piece::new(color, PieceType::from_index((code % 8) as usize)),
            )
        })
    }

    /// The position as FEN (no castling rights, no en-passant square).
    pub fn to_fen(&self) -> String {
        let mut board = [None; 64];
        for (sq, p) in self.men() {
            board[sq.index()] = Some(p);
        }
        let mut fen = String::new();
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                match board[rank * 8 + file] {
                    Some(p) => {
                        if empty > 0 {
                            let _ = write!(fen, "{empty}");
                            empty = 0;
                        }
                        fen.push(p.fen_char());
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                let _ = write!(fen, "{empty}");
            }
            if rank > 0 {
                fen.push('/');
            }
        }
        let stm = if self.side_to_move == Color::White {
            'w'
        } else {
            'b'
        };
        let _ = write!(fen, " {stm} - - {} {}", self.halfmove, self.fullmove.max(1));
        fen
    }

    /// The position (through its FEN, which checks it).
    pub fn position(&self) -> Result<Position, crate::chess::FenError> {
        Position::from_fen(&self.to_fen())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips_through_its_bytes_and_its_fen() {
        for (fen, score, result) in [
            (
                "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w - - 4 4",
                35,
                GameResult::Win,
            ),
            ("8/8/4k3/8/2K5/8/3P4/8 b - - 17 61", -120, GameResult::Draw),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1",
                i16::MIN,
                GameResult::Loss,
            ),
        ] {
            let pos = Position::from_fen(fen).unwrap();
            let r = Record::new(&pos, score, result, result == GameResult::Draw);
            let back = Record::from_bytes(&r.to_bytes()).unwrap();
            assert_eq!(back, r);
            assert_eq!(back.to_fen(), fen);
            assert_eq!(back.position().unwrap().key(), pos.key());
            assert_eq!(back.men().count() as u32, pos.men());
        }
    }

    #[test]
    fn damaged_bytes_are_refused() {
        let pos = Position::startpos();
        let good = Record::new(&pos, 0, GameResult::Draw, false).to_bytes();
        let mut b = good;
        b[27] = 3;
        assert_eq!(Record::from_bytes(&b), Err(RecordError::Field("result")));
        let mut b = good;
        b[26] = 2;
        assert!(Record::from_bytes(&b).is_err());
        let mut b = good;
        b[0..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(Record::from_bytes(&b), Err(RecordError::TooManyMen(64)));
        // The first man (a1, a white rook) turned into a king: two white kings.
        let mut b = good;
        b[8] = b[8] & 0xF0 | 5;
        assert_eq!(Record::from_bytes(&b), Err(RecordError::Kings));
        let mut b = good;
        b[8] = b[8] & 0xF0 | 7;
        assert_eq!(Record::from_bytes(&b), Err(RecordError::BadMan(7)));
    }
}
