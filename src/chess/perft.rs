//! Perft: counts the leaf nodes of the legal move tree, the standard test of a move generator.
//! The last ply is counted from the size of the legal move list (bulk counting).

use super::movegen::{generate, legal_moves, Gen, MoveList};
use super::position::Position;
use super::types::Move;

pub fn perft(pos: &mut Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut list = MoveList::new();
    generate(pos, Gen::All, &mut list);
    if depth == 1 {
        return list.len() as u64;
    }
    let mut nodes = 0;
    for &m in list.as_slice() {
        pos.make_move(m);
        nodes += perft(pos, depth - 1);
        pos.unmake_move();
    }
    nodes
}

/// Counts per root move, in generation order, as `engine perft` prints them.
pub fn perft_divide(pos: &mut Position, depth: u32) -> Vec<(Move, u64)> {
    let mut out = Vec::new();
    if depth == 0 {
        return out;
    }
    for m in legal_moves(pos).iter() {
        pos.make_move(m);
        out.push((m, perft(pos, depth - 1)));
        pos.unmake_move();
    }
    out
}
