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
    /// By an earlier move's piece and destination (`piece_to`), then this move's: how often
    /// this move refuted positions reached by that one (one and two plies back).
    pub continuation: Box<[[i16; 768]; 768]>,
}

/// A move's piece and destination as one index, for continuation history; `NO_PIECE_TO` when
/// there is no such move (a null move, or before the root).
pub type PieceTo = u16;
pub const NO_PIECE_TO: PieceTo = u16::MAX;

pub fn piece_to(pos: &Position, m: Move) -> PieceTo {
    pos.piece_at(m.from()).map_or(NO_PIECE_TO, |p| {
        (p.index() * 64 + m.to().index()) as PieceTo
    })
}

impl History {
    pub fn new() -> History {
        History {
            butterfly: Box::new([[[0; 64]; 64]; 2]),
            counter: Box::new([[Move::NONE; 64]; 12]),
            continuation: vec![[0i16; 768]; 768]
                .into_boxed_slice()
                .try_into()
                .expect("768 rows"),
        }
    }

    /// Forgets everything learnt (a new search starts from zero, as with a new table).
    pub fn clear(&mut self) {
        self.butterfly
            .iter_mut()
            .flatten()
            .for_each(|row| row.fill(0));
        self.counter.iter_mut().for_each(|row| row.fill(Move::NONE));
        self.continuation.iter_mut().for_each(|row| row.fill(0));
    }

    /// The continuation scores of move `to` (its `piece_to`) after the earlier moves `earlier`.
    #[inline]
    pub fn continuation_score(&self, earlier: [PieceTo; 2], to: PieceTo) -> i32 {
        if to == NO_PIECE_TO {
            return 0;
        }
        earlier
            .iter()
            .filter(|&&e| e != NO_PIECE_TO)
            .map(|&e| self.continuation[e as usize][to as usize] as i32)
            .sum()
    }

    /// Moves the continuation scores of `to` after `earlier` by `bonus`, as `update` does.
    pub fn update_continuation(&mut self, earlier: [PieceTo; 2], to: PieceTo, bonus: i32) {
        if to == NO_PIECE_TO {
            return;
        }
        for &e in earlier.iter().filter(|&&e| e != NO_PIECE_TO) {
            let h = &mut self.continuation[e as usize][to as usize];
            *h = with_gravity(*h as i32, bonus) as i16;
        }
    }

    /// Moves a history score towards +-HISTORY_MAX, by `bonus` (gravity keeps it bounded).
    pub fn update(&mut self, side: usize, m: Move, bonus: i32) {
        let h = &mut self.butterfly[side][m.from().index()][m.to().index()];
        *h = with_gravity(*h, bonus);
    }
}

/// History score `h` moved by `bonus` towards +-HISTORY_MAX: the nearer it is, the less it moves,
/// so it stays bounded (and within an i16).
fn with_gravity(h: i32, bonus: i32) -> i32 {
    h + bonus - h * bonus.abs() / HISTORY_MAX
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

/// What a node knows of its moves before scoring them, besides the history tables.
pub struct Hints {
    pub tt_move: Move,
    pub killers: [Move; 2],
    /// The reply that refuted the previous move before.
    pub counter: Move,
    /// The previous two moves' `piece_to`, for continuation history.
    pub earlier: [PieceTo; 2],
}

/// Scores every move of `list` into `scores` (same order).
pub fn score_moves(
    pos: &Position,
    list: &MoveList,
    scores: &mut [i32],
    hints: &Hints,
    history: &History,
) {
    let Hints {
        tt_move,
        killers,
        counter,
        earlier,
    } = *hints;
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
                + history.continuation_score(earlier, piece_to(pos, m))
                - if m.is_promotion() { 1 << 20 } else { 0 }
        };
    }
}

/// How many moves are picked by selection before the rest is sorted at once: most cut-offs come
/// from the first few moves, and a node that gets further will usually search them all.
const SELECTION_PICKS: usize = 3;

/// The move to search `from`-th: the best-scored of those left. Called with `from` = 0, 1, 2, ...
#[inline]
pub fn pick(list: &mut MoveList, scores: &mut [i32], from: usize) -> (Move, i32) {
    let moves = list.as_mut_slice();
    if from < SELECTION_PICKS {
        let mut best = from;
        for i in from + 1..moves.len() {
            if scores[i] > scores[best] {
                best = i;
            }
        }
        moves.swap(from, best);
        scores.swap(from, best);
    } else if from == SELECTION_PICKS {
        // Insertion sort of the rest, best first; stable, so ties keep generation order.
        for i in from + 1..moves.len() {
            let (m, s) = (moves[i], scores[i]);
            let mut j = i;
            while j > from && scores[j - 1] < s {
                moves[j] = moves[j - 1];
                scores[j] = scores[j - 1];
                j -= 1;
            }
            moves[j] = m;
            scores[j] = s;
        }
    }
    (moves[from], scores[from])
}
