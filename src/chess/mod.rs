//! The rules of chess: board representation, attacks, position with make/unmake, legal move
//! generation, FEN and perft. Depends on nothing else in the crate.

pub mod attacks;
pub mod bitboard;
pub mod fen;
pub mod movegen;
pub mod perft;
pub mod position;
pub mod types;
mod zobrist;

pub use bitboard::Bitboard;
pub use fen::{FenError, START_FEN};
pub use movegen::{generate, legal_moves, parse_uci_move, Gen, MoveList};
pub use position::Position;
pub use types::{Color, Move, MoveKind, Piece, PieceType, Square};
