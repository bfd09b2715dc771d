//! King and pawn versus king: one bit per position (won for the pawn's side or not), computed at
//! first use by a small retrograde fixed-point iteration over 2 x 24 x 64 x 64 positions (pawn on
//! files a-d, the rest by symmetry). Used by the material recognizers (Heinz's interior-node
//! recognition); the endgame tables will later check it exhaustively.
//!
//! Coordinates: the pawn's side is White and its pawn moves north; callers mirror.

use crate::chess::attacks::{king_attacks, pawn_attacks, queen_attacks, rook_attacks};
use crate::chess::{Bitboard, Color, Square};
use once_cell::sync::Lazy;

const POSITIONS: usize = 2 * 24 * 64 * 64;

/// Position index: side to move, pawn (files a-d, ranks 2-7), White's king, Black's king.
#[inline(always)]
fn index(white_to_move: bool, white_king: u8, pawn: u8, black_king: u8) -> usize {
    let pawn_index = ((pawn >> 3) - 1) as usize * 4 + (pawn & 7) as usize;
    ((((!white_to_move) as usize * 24 + pawn_index) * 64 + white_king as usize) * 64)
        + black_king as usize
}

/// Every position of the index as (white to move, white king, pawn, black king).
fn decode(i: usize) -> (bool, u8, u8, u8) {
    let black_king = (i % 64) as u8;
    let white_king = (i / 64 % 64) as u8;
    let pawn_index = i / 4096 % 24;
    let pawn = ((pawn_index / 4 + 1) * 8 + pawn_index % 4) as u8;
    (i / (24 * 4096) == 0, white_king, pawn, black_king)
}

fn adjacent(a: u8, b: u8) -> bool {
    Square(a).distance(Square(b)) <= 1
}

/// Legal as a KPK position: distinct squares, kings apart, pawn on ranks 2-7, and Black not in check
/// with White to move.
fn legal(white_to_move: bool, wk: u8, pawn: u8, bk: u8) -> bool {
    let rank = pawn >> 3;
    wk != bk
        && wk != pawn
        && bk != pawn
        && !adjacent(wk, bk)
        && (1..=6).contains(&rank)
        && !(white_to_move && pawn_attacks(Color::White, Square(pawn)).contains(Square(bk)))
}

/// After White promotes on `queen_sq` (to a queen or a rook), Black to move: a win unless Black
/// takes the new piece or is stalemated (every KQK and KRK position is won otherwise).
fn promotion_wins(wk: u8, queen_sq: u8, bk: u8, rook_only: bool) -> bool {
    if adjacent(bk, queen_sq) && !adjacent(wk, queen_sq) {
        return false;
    }
    let piece_attacks = |occupied: Bitboard| {
        if rook_only {
            rook_attacks(Square(queen_sq), occupied)
        } else {
            queen_attacks(Square(queen_sq), occupied)
        }
    };
    let with_king = Bitboard(1 << wk | 1 << queen_sq | 1 << bk);
    let in_check = piece_attacks(with_king).contains(Square(bk));
    // Without Black's king on the board, so it cannot step back along the checking line.
    let covered = king_attacks(Square(wk)) | piece_attacks(Bitboard(1 << wk | 1 << queen_sq));
    let moves = king_attacks(Square(bk)) & !covered;
    in_check || moves.any()
}

const UNKNOWN: u8 = 0;
const WIN: u8 = 1;
const DRAW: u8 = 2;
const ILLEGAL: u8 = 3;

fn white_to_move_value(r: &[u8], wk: u8, pawn: u8, bk: u8) -> u8 {
    // WIN as soon as one move wins; DRAW once every move is known not to (settled positions are
    // skipped by later passes); UNKNOWN otherwise.
    let mut open = false;
    let mut child = |i: usize| match r[i] {
        WIN => true,
        UNKNOWN => {
            open = true;
            false
        }
        _ => false,
    };
    let ahead = pawn + 8;
    if pawn >> 3 == 6 {
        if ahead != wk
            && ahead != bk
            && (promotion_wins(wk, ahead, bk, false) || promotion_wins(wk, ahead, bk, true))
        {
            return WIN;
        }
    } else if ahead != wk && ahead != bk {
        if child(index(false, wk, ahead, bk)) {
            return WIN;
        }
        let two = pawn + 16;
        if pawn >> 3 == 1 && two != wk && two != bk && child(index(false, wk, two, bk)) {
            return WIN;
        }
    }
    for to in king_attacks(Square(wk)) {
        if to.0 != pawn && !adjacent(to.0, bk) && child(index(false, to.0, pawn, bk)) {
            return WIN;
        }
    }
    if open {
        UNKNOWN
    } else {
        DRAW
    }
}

fn black_to_move_value(r: &[u8], wk: u8, pawn: u8, bk: u8) -> u8 {
    let pawn_covers = pawn_attacks(Color::White, Square(pawn));
    let moves = king_attacks(Square(bk)) & !king_attacks(Square(wk)) & !pawn_covers;
    if moves.is_empty() {
        return if pawn_covers.contains(Square(bk)) {
            WIN
        } else {
            DRAW
        };
    }
    if moves.contains(Square(pawn)) {
        return DRAW; // the pawn is unprotected (protected squares were removed above)
    }
    let mut all_won = true;
    for to in moves {
        match r[index(true, wk, pawn, to.0)] {
            WIN => {}
            DRAW => return DRAW,
            _ => all_won = false,
        }
    }
    if all_won {
        WIN
    } else {
        UNKNOWN
    }
}

/// Counts of legal positions and of positions won by White, over the indexed half (pawn on a-d).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct KpkStats {
    pub white_to_move_legal: u32,
    pub white_to_move_won: u32,
    pub black_to_move_legal: u32,
    pub black_to_move_won: u32,
    /// Passes of the fixed-point iteration, summed over the 24 pawn squares.
    pub passes: u32,
}

struct Bitbase {
    won: Box<[u64]>,
    stats: KpkStats,
}

fn compute() -> Bitbase {
    let mut r = vec![UNKNOWN; POSITIONS];
    for (i, v) in r.iter_mut().enumerate() {
        let (wtm, wk, pawn, bk) = decode(i);
        if !legal(wtm, wk, pawn, bk) {
            *v = ILLEGAL;
        }
    }
    // The pawn only moves forward, so solve one pawn square at a time, most advanced first: every
    // position a pawn move leads to is then settled, and each fixed point only follows king moves.
    let mut passes = 0;
    for pawn_index in (0..24).rev() {
        loop {
            passes += 1;
            let mut changed = false;
            for wtm in [true, false] {
                let base = ((!wtm) as usize * 24 + pawn_index) * 4096;
                for i in base..base + 4096 {
                    if r[i] != UNKNOWN {
                        continue;
                    }
                    let (_, wk, pawn, bk) = decode(i);
                    let v = if wtm {
                        white_to_move_value(&r, wk, pawn, bk)
                    } else {
                        black_to_move_value(&r, wk, pawn, bk)
                    };
                    if v != UNKNOWN {
                        r[i] = v;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        // What no pass could decide is a draw: White never forces a win there.
        for wtm in [true, false] {
            let base = ((!wtm) as usize * 24 + pawn_index) * 4096;
            for v in &mut r[base..base + 4096] {
                if *v == UNKNOWN {
                    *v = DRAW;
                }
            }
        }
    }
    let mut won = vec![0u64; POSITIONS / 64].into_boxed_slice();
    let mut stats = KpkStats {
        white_to_move_legal: 0,
        white_to_move_won: 0,
        black_to_move_legal: 0,
        black_to_move_won: 0,
        passes,
    };
    for (i, &v) in r.iter().enumerate() {
        let wtm = i < POSITIONS / 2;
        if v != ILLEGAL {
            if wtm {
                stats.white_to_move_legal += 1;
            } else {
                stats.black_to_move_legal += 1;
            }
        }
        if v == WIN {
            won[i / 64] |= 1 << (i % 64);
            if wtm {
                stats.white_to_move_won += 1;
            } else {
                stats.black_to_move_won += 1;
            }
        }
    }
    Bitbase { won, stats }
}

static BITBASE: Lazy<Bitbase> = Lazy::new(compute);

/// Is this KPK position won for White (the pawn's side)? `None` if it is not a legal position.
/// Any file: pawns on e-h are mirrored onto a-d.
pub fn white_wins(
    white_king: Square,
    pawn: Square,
    black_king: Square,
    white_to_move: bool,
) -> Option<bool> {
    let (mut wk, mut p, mut bk) = (white_king, pawn, black_king);
    if p.file() > 3 {
        (wk, p, bk) = (wk.flip_file(), p.flip_file(), bk.flip_file());
    }
    if !legal(white_to_move, wk.0, p.0, bk.0) {
        return None;
    }
    let i = index(white_to_move, wk.0, p.0, bk.0);
    Some(BITBASE.won[i / 64] >> (i % 64) & 1 != 0)
}

/// Counts over the bitbase (forces its computation).
pub fn stats() -> KpkStats {
    BITBASE.stats
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_round_trips() {
        for i in (0..POSITIONS).step_by(97) {
            let (wtm, wk, p, bk) = decode(i);
            assert_eq!(index(wtm, wk, p, bk), i);
        }
    }
}
