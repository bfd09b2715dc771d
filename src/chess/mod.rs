//! The rules of chess: board representation, attacks, move generation, FEN, perft.
//! Depends on nothing else in the crate.

pub mod attacks;
pub mod bitboard;
pub mod types;

pub use bitboard::Bitboard;
pub use types::{Color, Move, MoveKind, Piece, PieceType, Square};
