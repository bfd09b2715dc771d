//! Fortress: a UCI chess engine whose endgame knowledge is its own.
//!
//! `chess` is the rules and depends on nothing else of ours; the engine's opinions
//! (search, evaluation, recognizers, tables) sit on top of it, `uci` on top of the search, and
//! `cli`, the command line, on top of everything.

pub mod bench;
pub mod chess;
pub mod cli;
pub mod egtb;
pub mod eval;
pub mod memory;
pub mod recognize;
pub mod search;
pub mod tune;
pub mod uci;
