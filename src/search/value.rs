//! Scores: centipawns for the side to move; mates as `MATE - plies`, so that shorter mates score
//! higher. Plies from the root are added and removed when scores pass through the
//! transposition table, which stores distances from the node itself.

pub type Value = i32;

pub const DRAW: Value = 0;
pub const MATE: Value = 32_000;
pub const INFINITE: Value = 32_001;
pub const MAX_PLY: usize = 128;

/// The longest table mate, in moves, whose distance a score holds exactly: about twice the
/// longest known (549 moves, 7 men; 6-man tables reach 262), so that any table we could build
/// prints its true `mate N`.
pub const MAX_TABLE_MATE_MOVES: usize = 1_000;

/// The longest mate, in plies from the root, that a score holds: a table's longest mate
/// (2n plies for the side that is mated in n) met at the deepest ply of the search.
pub const MAX_MATE_PLIES: usize = 2 * MAX_TABLE_MATE_MOVES + MAX_PLY;

/// Any score beyond this in absolute value is a mate score. Evaluations stay far below it, and
/// every mate of up to `MAX_MATE_PLIES` lies beyond it. The scores still fit the 16 bits the
/// transposition table keeps of them.
pub const MATE_BOUND: Value = MATE - MAX_MATE_PLIES as Value - 1;

/// A win that a table without distances (Syzygy's WDL) vouches for scores `TB_WIN` less the ply
/// it was met at: above every evaluation, below every mate (a mate found is worth more than a
/// win still to be played out), and not a mate score, so it never prints as a wrong `mate N`.
pub const TB_WIN: Value = MATE_BOUND - 1 - MAX_PLY as Value;

/// The score of a table win (`won`) or loss without a distance, met `ply` plies from the root.
pub fn table_win(ply: usize, won: bool) -> Value {
    let v = TB_WIN - ply.min(MAX_PLY) as Value;
    if won {
        v
    } else {
        -v
    }
}

#[inline(always)]
pub fn mated_in(ply: usize) -> Value {
    -MATE + ply as Value
}

#[inline(always)]
pub fn mate_in(ply: usize) -> Value {
    MATE - ply as Value
}

/// The score of a table's mate `plies` away from the root, won (`mate_in`) or lost
/// (`mated_in`). A mate longer than `MAX_MATE_PLIES` has no score with its distance: it gets
/// `MATE_BOUND` itself (mated: its negation), above every evaluation and below every mate whose
/// distance is known, so it still orders right and prints as centipawns, not as a wrong mate.
pub fn table_mate(plies: usize, won: bool) -> Value {
    let v = if plies <= MAX_MATE_PLIES {
        mate_in(plies)
    } else {
        MATE_BOUND
    };
    if won {
        v
    } else {
        -v
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_table_mates_at_the_deepest_ply_are_mate_scores() {
        // Mated in 1,000 moves (2,000 plies) met at the last ply of the search: the longest
        // mate the range must hold, both signs.
        let plies = 2 * MAX_TABLE_MATE_MOVES + MAX_PLY;
        let won = table_mate(plies, true);
        let lost = table_mate(plies, false);
        assert!(is_mate_score(won) && is_mate_score(lost));
        assert_eq!(won, mate_in(plies));
        assert_eq!(lost, mated_in(plies));
        assert_eq!(mate_moves(won), (plies as i32 + 1) / 2);
        assert_eq!(mate_moves(lost), -(plies as i32) / 2);
        // Nothing at or inside the bound is a mate: evaluations and cursed-win scores stay there.
        assert!(!is_mate_score(MATE_BOUND) && !is_mate_score(-MATE_BOUND));
        // The transposition table keeps 16 bits of a score, after the ply adjustment.
        for v in [won, lost, INFINITE, -INFINITE] {
            for ply in [0, MAX_PLY] {
                let stored = to_tt(v, ply);
                assert_eq!(stored as i16 as Value, stored, "{v} at ply {ply}");
                assert_eq!(from_tt(stored, ply), v);
            }
        }
    }

    #[test]
    fn table_wins_lie_between_evaluations_and_mates() {
        for ply in [0, 1, MAX_PLY] {
            let (won, lost) = (table_win(ply, true), table_win(ply, false));
            assert!(!is_mate_score(won) && !is_mate_score(lost));
            assert!(won > 0 && won < table_mate(MAX_MATE_PLIES + 1, true));
            assert_eq!(lost, -won);
            // Far above any evaluation (material of a full board is under 10,000).
            assert!(won > 20_000);
        }
        // Nearer wins score higher.
        assert!(table_win(1, true) > table_win(2, true));
    }

    #[test]
    fn mates_beyond_the_range_are_known_wins_without_a_distance() {
        let plies = MAX_MATE_PLIES + 1;
        assert_eq!(table_mate(plies, true), MATE_BOUND);
        assert_eq!(table_mate(plies, false), -MATE_BOUND);
        // Still above (below) every evaluation, below (above) every mate with a distance.
        assert!(table_mate(plies, true) < table_mate(MAX_MATE_PLIES, true));
        assert!(table_mate(plies, false) > table_mate(MAX_MATE_PLIES, false));
    }
}
