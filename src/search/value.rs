//! Scores: centipawns for the side to move; mates as `MATE - plies`, so that shorter mates score
//! higher. Plies from the root are added and removed when scores pass through the
//! transposition table, which stores distances from the node itself.

pub type Value = i32;

pub const DRAW: Value = 0;
pub const MATE: Value = 32_000;
pub const INFINITE: Value = 32_001;
/// Any score beyond this in absolute value is a mate score. Room is left for the 500-ply mates
/// that endgame tables of up to six men report.
pub const MATE_BOUND: Value = MATE - 1_000;

pub const MAX_PLY: usize = 128;

#[inline(always)]
pub fn mated_in(ply: usize) -> Value {
    -MATE + ply as Value
}

#[inline(always)]
pub fn mate_in(ply: usize) -> Value {
    MATE - ply as Value
}

#[inline(always)]
pub fn is_mate_score(v: Value) -> bool {
    v.abs() > MATE_BOUND
}

/// Score as stored in the table: mate distances counted from this node instead of the root.
#[inline(always)]
pub fn to_tt(v: Value, ply: usize) -> Value {
    if v > MATE_BOUND {
        v + ply as Value
    } else if v < -MATE_BOUND {
        v - ply as Value
    } else {
        v
    }
}

#[inline(always)]
pub fn from_tt(v: Value, ply: usize) -> Value {
    if v > MATE_BOUND {
        v - ply as Value
    } else if v < -MATE_BOUND {
        v + ply as Value
    } else {
        v
    }
}

/// Mate in moves (positive: the side to move mates) for a mate score, as UCI prints it.
pub fn mate_moves(v: Value) -> i32 {
    if v > 0 {
        (MATE - v + 1) / 2
    } else {
        -(MATE + v) / 2
    }
}
