//! Static evaluation, in centipawns for the side to move: material, piece-square tables,
//! mobility, pawn structure, king shelter and a few endgame scalings, each as a middlegame and an
//! endgame score blended by the game phase (tapered evaluation).
//!
//! The weights are hand-set from chess knowledge; the tables are built from simple formulas
//! (centrality, advancement) rather than copied from anywhere.

use crate::chess::attacks::{
    bishop_attacks, king_attacks, knight_attacks, queen_attacks, rook_attacks,
};
use crate::chess::{Bitboard, Color, PieceType, Position, Square};
use once_cell::sync::Lazy;

/// A middlegame and an endgame value.
#[derive(Copy, Clone, Default, PartialEq, Eq, Debug)]
struct S(i32, i32);

impl std::ops::Add for S {
    type Output = S;
    fn add(self, o: S) -> S {
        S(self.0 + o.0, self.1 + o.1)
    }
}
impl std::ops::AddAssign for S {
    fn add_assign(&mut self, o: S) {
        self.0 += o.0;
        self.1 += o.1;
    }
}
impl std::ops::SubAssign for S {
    fn sub_assign(&mut self, o: S) {
        self.0 -= o.0;
        self.1 -= o.1;
    }
}
impl std::ops::Mul<i32> for S {
    type Output = S;
    fn mul(self, k: i32) -> S {
        S(self.0 * k, self.1 * k)
    }
}

const MATERIAL: [S; 6] = [
    S(90, 120),
    S(330, 310),
    S(345, 330),
    S(470, 540),
    S(1000, 1000),
    S(0, 0),
];
/// Phase weight of each piece type; 24 is the full middlegame.
const PHASE: [i32; 6] = [0, 1, 1, 2, 4, 0];
const PHASE_TOTAL: i32 = 24;

const BISHOP_PAIR: S = S(30, 50);
const TEMPO: i32 = 12;
const DOUBLED: S = S(-8, -18);
const ISOLATED: S = S(-10, -12);
const PASSED: [S; 8] = [
    S(0, 0),
    S(0, 8),
    S(2, 12),
    S(8, 22),
    S(20, 40),
    S(40, 75),
    S(65, 120),
    S(0, 0),
];
const ROOK_OPEN: S = S(25, 8);
const ROOK_SEMI_OPEN: S = S(12, 6);
const SHELTER_PAWN: S = S(12, 0);
/// Per attacked square beyond a typical count, by piece type.
const MOBILITY: [S; 6] = [S(0, 0), S(4, 4), S(5, 5), S(2, 4), S(1, 2), S(0, 0)];
const MOBILITY_BASE: [i32; 6] = [0, 4, 6, 6, 12, 0];

/// Piece-square tables for White, by type and square; Black reads them flipped.
static PST: Lazy<[[S; 64]; 6]> = Lazy::new(|| {
    let mut t = [[S(0, 0); 64]; 6];
    for sq in Square::all() {
        let (f, r) = (sq.file() as i32, sq.rank() as i32);
        // 0 on the rim .. 3 in the centre.
        let centre = 3 - ((2 * f - 7).abs().max((2 * r - 7).abs()) - 1) / 2;
        let file_centre = 3 - ((2 * f - 7).abs() - 1) / 2;
        let i = sq.index();
        t[0][i] = if r == 0 || r == 7 {
            S(0, 0)
        } else {
            S(
                file_centre * 4 * (r - 1).min(3) / 2 - 4 * (file_centre == 0) as i32,
                4 * (r - 2),
            )
        };
        t[1][i] = S(-30 + 12 * centre + 3 * (r.min(5) - 2), -25 + 10 * centre);
        t[2][i] = S(
            -10 + 5 * centre + if r == 0 { -8 } else { 0 },
            -10 + 5 * centre,
        );
        t[3][i] = S(
            if r == 6 { 15 } else { 0 } + if (3..=4).contains(&f) { 4 } else { 0 },
            0,
        );
        t[4][i] = S(
            -6 + 3 * centre - if r == 0 { 0 } else { 2 },
            -15 + 8 * centre,
        );
        let home = [20, 30, 10, 0, 0, 10, 30, 20][f as usize];
        t[5][i] = S(
            match r {
                0 => home,
                1 => home / 2 - 5,
                _ => -15 * r,
            },
            -30 + 12 * centre,
        );
    }
    t
});

static FILE_BB: Lazy<[Bitboard; 8]> =
    Lazy::new(|| std::array::from_fn(|f| Bitboard::file(f as u8)));

/// Squares in front of a pawn on its own and the neighbouring files: if none holds an enemy
/// pawn, it is passed.
static PASSED_SPAN: Lazy<[[Bitboard; 64]; 2]> = Lazy::new(|| {
    let mut t = [[Bitboard::EMPTY; 64]; 2];
    for sq in Square::all() {
        let f = sq.file() as i32;
        for color in Color::BOTH {
            let mut span = Bitboard::EMPTY;
            for r in 0..8 {
                let ahead = match color {
                    Color::White => r > sq.rank(),
                    Color::Black => r < sq.rank(),
                };
                if !ahead {
                    continue;
                }
                for df in -1..=1 {
                    if (0..8).contains(&(f + df)) {
                        span.set(Square::new((f + df) as u8, r));
                    }
                }
            }
            t[color.index()][sq.index()] = span;
        }
    }
    t
});

fn adjacent_files(f: u8) -> Bitboard {
    let mut b = Bitboard::EMPTY;
    if f > 0 {
        b |= FILE_BB[f as usize - 1];
    }
    if f < 7 {
        b |= FILE_BB[f as usize + 1];
    }
    b
}

fn pawn_attack_span(pawns: Bitboard, color: Color) -> Bitboard {
    match color {
        Color::White => pawns.north().east() | pawns.north().west(),
        Color::Black => pawns.south().east() | pawns.south().west(),
    }
}

/// The evaluation of one side (White's view of its own men), before tapering.
fn side_score(pos: &Position, us: Color) -> S {
    let them = !us;
    let occ = pos.occupied();
    let our_pawns = pos.pieces(us, PieceType::Pawn);
    let their_pawns = pos.pieces(them, PieceType::Pawn);
    let enemy_pawn_attacks = pawn_attack_span(their_pawns, them);
    let safe = !pos.color_bb(us) & !enemy_pawn_attacks;
    let mut s = S(0, 0);

    for kind in PieceType::ALL {
        for sq in pos.pieces(us, kind) {
            let rel = if us == Color::White {
                sq
            } else {
                sq.flip_rank()
            };
            s += MATERIAL[kind.index()] + PST[kind.index()][rel.index()];
            let attacks = match kind {
                PieceType::Knight => knight_attacks(sq),
                PieceType::Bishop => bishop_attacks(sq, occ),
                PieceType::Rook => rook_attacks(sq, occ),
                PieceType::Queen => queen_attacks(sq, occ),
                _ => Bitboard::EMPTY,
            };
            if attacks.any() {
                let n = (attacks & safe).count() as i32 - MOBILITY_BASE[kind.index()];
                s += MOBILITY[kind.index()] * n;
            }
            if kind == PieceType::Rook {
                let file = FILE_BB[sq.file() as usize];
                if (file & our_pawns).is_empty() {
                    s += if (file & their_pawns).is_empty() {
                        ROOK_OPEN
                    } else {
                        ROOK_SEMI_OPEN
                    };
                }
            }
        }
    }
    if pos.pieces(us, PieceType::Bishop).more_than_one() {
        s += BISHOP_PAIR;
    }

    // Pawn structure.
    for sq in our_pawns {
        let file = FILE_BB[sq.file() as usize];
        if (our_pawns & file).more_than_one() {
            s += DOUBLED;
        }
        if (our_pawns & adjacent_files(sq.file())).is_empty() {
            s += ISOLATED;
        }
        if (PASSED_SPAN[us.index()][sq.index()] & their_pawns).is_empty() {
            let r = sq.relative_rank(us) as usize;
            s += PASSED[r];
            // In the endgame a passer is worth more the farther the enemy king is from its path.
            let stop = Square::new(sq.file(), if us == Color::White { 7 } else { 0 });
            let their_king = pos.king_square(them).distance(stop) as i32;
            let our_king = pos.king_square(us).distance(stop) as i32;
            s += S(0, (their_king - our_king) * r as i32 * 2);
        }
    }

    // King shelter: own pawns in front of the king in the middlegame.
    let ksq = pos.king_square(us);
    let shield = king_attacks(ksq) | king_attacks(ksq).north() | king_attacks(ksq).south();
    let front = match us {
        Color::White => Bitboard(
            (!0u64)
                .checked_shl(8 * (ksq.rank() as u32 + 1))
                .unwrap_or(0),
        ),
        Color::Black => Bitboard(
            (!0u64)
                .checked_shr(8 * (8 - ksq.rank() as u32))
                .unwrap_or(0),
        ),
    };
    s += SHELTER_PAWN * (shield & front & our_pawns).count().min(3) as i32;
    s
}

fn phase(pos: &Position) -> i32 {
    let mut p = 0;
    for kind in [
        PieceType::Knight,
        PieceType::Bishop,
        PieceType::Rook,
        PieceType::Queen,
    ] {
        p += PHASE[kind.index()] * pos.kind_bb(kind).count() as i32;
    }
    p.min(PHASE_TOTAL)
}

/// Scales the endgame part down, out of 64, where the stronger side's extra material rarely wins.
fn endgame_scale(pos: &Position, eg: i32) -> i32 {
    let strong = if eg > 0 { Color::White } else { Color::Black };
    let weak = !strong;
    let pawns = pos.pieces(strong, PieceType::Pawn).count();
    let non_pawn = |c: Color| -> i32 {
        [
            PieceType::Knight,
            PieceType::Bishop,
            PieceType::Rook,
            PieceType::Queen,
        ]
        .iter()
        .map(|&k| MATERIAL[k.index()].1 * pos.pieces(c, k).count() as i32)
        .sum()
    };
    // Without pawns, a minor piece more (or less) is not enough to win.
    if pawns == 0 && non_pawn(strong) - non_pawn(weak) <= MATERIAL[PieceType::Bishop.index()].1 {
        return if non_pawn(strong) < MATERIAL[PieceType::Rook.index()].1 {
            0
        } else {
            8
        };
    }
    // Bishops of opposite colours, nothing else: drawish.
    let wb = pos.pieces(Color::White, PieceType::Bishop);
    let bb = pos.pieces(Color::Black, PieceType::Bishop);
    let others = pos.kind_bb(PieceType::Knight)
        | pos.kind_bb(PieceType::Rook)
        | pos.kind_bb(PieceType::Queen);
    if others.is_empty()
        && wb.count() == 1
        && bb.count() == 1
        && ((wb & Bitboard::LIGHT_SQUARES).any() != (bb & Bitboard::LIGHT_SQUARES).any())
    {
        return 32;
    }
    64
}

/// The static evaluation for the side to move, in centipawns.
pub fn evaluate(pos: &Position) -> i32 {
    let s = {
        let mut s = side_score(pos, Color::White);
        s -= side_score(pos, Color::Black);
        s
    };
    let p = phase(pos);
    let eg = s.1 * endgame_scale(pos, s.1) / 64;
    let v = (s.0 * p + eg * (PHASE_TOTAL - p)) / PHASE_TOTAL;
    let v = if pos.side_to_move() == Color::White {
        v
    } else {
        -v
    };
    v + TEMPO
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetric_under_colour_flip() {
        for fen in [
            crate::chess::START_FEN,
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "8/k7/3p4/p2P1p2/P2P1P2/8/8/K7 w - - 0 1",
        ] {
            let pos = Position::from_fen(fen).unwrap();
            assert_eq!(evaluate(&pos), evaluate(&pos.color_flipped()), "{}", fen);
        }
    }

    #[test]
    fn material_dominates() {
        let up_a_queen = Position::from_fen("4k3/8/8/8/8/8/8/3QK3 w - - 0 1").unwrap();
        assert!(evaluate(&up_a_queen) > 800);
        let lone_knight = Position::from_fen("4k3/8/8/8/8/8/8/3NK3 w - - 0 1").unwrap();
        assert!(evaluate(&lone_knight).abs() < 50);
    }
}
