//! Move ordering: the hash move first, then winning captures and queen promotions (most valuable
//! victim, least valuable attacker), killer moves, the counter-move, quiet moves by history, and
//! losing captures last. Moves are picked one at a time (selection sort), since a cut-off usually
//! comes early.

use super::see::{see_ge, SEE_VALUES};
use crate::chess::{Move, MoveKind, MoveList, PieceType, Position};

pub const HISTORY_MAX: i32 = 16_384;

/// Per-thread tables that learn which quiet moves cause cut-offs.
pub struct History {
    /// By side to move, from square, to square.
    pub butterfly: Box<[[[i32; 64]; 64]; 2]>,
    /// By the previous move's piece (0..12) and destination: the reply that refuted it.
    pub counter: Box<[[Move; 64]; 12]>,
}

impl History {
    pub fn new() -> History {
        History {
            butterfly: Box::new([[[0; 64]; 64]; 2]),
            counter: Box::new([[Move::NONE; 64]; 12]),
        }
    }

    /// Moves a history score towards +-HISTORY_MAX, by `bonus` (gravity keeps it bounded).
    pub fn update(&mut self, side: usize, m: Move, bonus: i32) {
        let h = &mut self.butterfly[side][m.from().index()][m.to().index()];
        *h += bonus - *h * bonus.abs() / HISTORY_MAX;
    }
}

pub fn is_capture(pos: &Position, m: Move) -> bool {
    m.kind() == MoveKind::EnPassant
        || (m.kind() != MoveKind::Castle && pos.piece_at(m.to()).is_some())
}

/// A quiet move neither captures nor promotes to a queen.
pub fn is_quiet(pos: &Position, m: Move) -> bool {
    !is_capture(pos, m) && m.promotion_piece() != Some(PieceType::Queen)
}

const TT_MOVE: i32 = 1 << 30;
const GOOD_NOISY: i32 = 1 << 28;
const KILLER: i32 = 1 << 27;
const COUNTER: i32 = (1 << 27) - 2;
const BAD_NOISY: i32 = -(1 << 28);

/// Scores every move of `list` into `scores` (same order).
pub fn score_moves(
    pos: &Position,
    list: &MoveList,
    scores: &mut [i32],
    tt_move: Move,
    killers: [Move; 2],
    counter: Move,
    history: &History,
) {
    let side = pos.side_to_move().index();
    for (i, m) in list.iter().enumerate() {
        scores[i] = if m == tt_move {
            TT_MOVE
        } else if !is_quiet(pos, m) {
            let victim = if m.kind() == MoveKind::EnPassant {
                SEE_VALUES[0]
            } else {
                pos.piece_at(m.to())
                    .map_or(0, |p| SEE_VALUES[p.kind.index()])
            };
            let attacker = pos.piece_at(m.from()).map_or(0, |p| p.kind.index() as i32);
            let promo = if m.promotion_piece().is_some() {
                2000
            } else {
                0
            };
            let base = victim * 8 + promo - attacker;
            if see_ge(pos, m, 0) {
                GOOD_NOISY + base
            } else {
                BAD_NOISY + base
            }
        } else if m == killers[0] {
            KILLER
        } else if m == killers[1] {
            KILLER - 1
        } else if m == counter {
            COUNTER
        } else {
            history.butterfly[side][m.from().index()][m.to().index()]
                - if m.is_promotion() { 1 << 20 } else { 0 }
        };
    }
}

/// Swaps the best-scored move of `from..` into place `from` and returns it.
#[inline]
pub fn pick(list: &mut MoveList, scores: &mut [i32], from: usize) -> (Move, i32) {
    let moves = list.as_mut_slice();
    let mut best = from;
    for i in from + 1..moves.len() {
        if scores[i] > scores[best] {
            best = i;
        }
    }
    moves.swap(from, best);
    scores.swap(from, best);
    (moves[from], scores[from])
}
