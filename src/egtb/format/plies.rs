//! Values counted in plies, as the generator works them and the verifier and the one-ply
//! probe recompute them: the `TbValue` encoding of DTZ and DTZ50 (0 none/broken, 1 draw, 2n win
//! in n, 2n + 3 loss in n), so that DTZ and DTZ50 file values are codes as they stand and DTM
//! converts (`dtm_plies`). The minimax of a position's moves is the `preference` order over
//! `backed` values of moves that stay in the endgame and `zeroing` values of the rest.

use crate::egtb::format::{Outcome, TbValue, Wdl5};
pub const CODE_NONE: u16 = 0;
pub const CODE_DRAW: u16 = 1;

#[inline(always)]
pub fn win(n: u16) -> u16 {
    2 * n
}
#[inline(always)]
pub fn loss(n: u16) -> u16 {
    2 * n + 3
}
#[inline(always)]
pub fn is_win(c: u16) -> bool {
    c >= 2 && c.is_multiple_of(2)
}
#[inline(always)]
pub fn is_loss(c: u16) -> bool {
    c >= 3 && c % 2 == 1
}
/// Depth in plies of a win or loss code.
#[inline(always)]
pub fn depth(c: u16) -> u16 {
    if c.is_multiple_of(2) {
        c / 2
    } else {
        (c - 3) / 2
    }
}

/// Order of preference for the side choosing: short wins, long wins, draws, long losses, short
/// losses; "no option" below everything.
#[inline(always)]
pub fn preference(c: u16) -> i32 {
    match c {
        CODE_NONE => i32::MIN,
        CODE_DRAW => 0,
        c if c % 2 == 0 => 40_000 - (c / 2) as i32,
        c => -40_000 + ((c - 3) / 2) as i32,
    }
}

#[inline(always)]
pub fn better(a: u16, b: u16) -> u16 {
    if preference(b) > preference(a) {
        b
    } else {
        a
    }
}

/// The value for the mover of a move to a position worth `c` to its side to move.
#[inline(always)]
pub fn backed(c: u16) -> u16 {
    match c {
        CODE_NONE | CODE_DRAW => c,
        c if c % 2 == 0 => loss(c / 2 + 1),
        c => win((c - 3) / 2 + 1),
    }
}

/// The value for the mover of a zeroing move to a position whose side to move wins (2), draws
/// (1) or loses (0): the count stops at the zeroing move.
#[inline(always)]
pub fn zeroing(wdl: u8) -> u16 {
    match wdl {
        2 => loss(1),
        0 => win(1),
        _ => CODE_DRAW,
    }
}

/// A file value (DTM in moves) as a code in plies.
#[inline(always)]
pub fn dtm_plies(v: TbValue) -> u16 {
    match v.outcome() {
        Outcome::Broken => CODE_NONE,
        Outcome::Draw => CODE_DRAW,
        Outcome::Win(k) => win(2 * k - 1),
        Outcome::Loss(k) => loss(2 * k),
    }
}

/// Win/draw/loss of a value: 2, 1, 0; 3 for broken.
#[inline(always)]
pub fn wdl_of(v: TbValue) -> u8 {
    match v.outcome() {
        Outcome::Win(_) => 2,
        Outcome::Draw => 1,
        Outcome::Loss(_) => 0,
        Outcome::Broken => 3,
    }
}

/// Number of plies within which DTZ50 must zero.
pub const RULE50_PLIES: u16 = 100;

/// A DTZ50 code from the minimax of its moves: a result that needs more than 100 plies to its
/// zeroing move is a draw under the rule.
#[inline(always)]
pub fn capped_at_rule50(c: u16) -> u16 {
    if c > CODE_DRAW && depth(c) > RULE50_PLIES {
        CODE_DRAW
    } else {
        c
    }
}

/// Win/draw/loss (2, 1, 0) of a result, with the 50-move rule (`rule`: the result DTZ50 gives)
/// or without it (DTZ's).
#[inline(always)]
pub fn wdl_of_result(r: Wdl5, rule: bool) -> u8 {
    match r {
        Wdl5::Win => 2,
        Wdl5::CursedWin if !rule => 2,
        Wdl5::Loss => 0,
        Wdl5::BlessedLoss if !rule => 0,
        _ => 1,
    }
}
