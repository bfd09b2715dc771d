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

const fn max(a: i32, b: i32) -> i32 {
    if a > b {
        a
    } else {
        b
    }
}

const fn min(a: i32, b: i32) -> i32 {
    if a < b {
        a
    } else {
        b
    }
}

/// Piece-square tables for White, by type and square; Black reads them flipped. Built at compile
/// time from centrality and advancement.
static PST: [[S; 64]; 6] = {
    let mut t = [[S(0, 0); 64]; 6];
    let mut i = 0;
    while i < 64 {
        let (f, r) = ((i % 8) as i32, (i / 8) as i32);
        // 0 on the rim .. 3 in the centre.
        let centre = 3 - (max((2 * f - 7).abs(), (2 * r - 7).abs()) - 1) / 2;
        let file_centre = 3 - ((2 * f - 7).abs() - 1) / 2;
        t[0][i] = if r == 0 || r == 7 {
            S(0, 0)
        } else {
            S(
                file_centre * 4 * min(r - 1, 3) / 2 - 4 * (file_centre == 0) as i32,
                4 * (r - 2),
            )
        };
        t[1][i] = S(-30 + 12 * centre + 3 * (min(r, 5) - 2), -25 + 10 * centre);
        t[2][i] = S(
            -10 + 5 * centre + if r == 0 { -8 } else { 0 },
            -10 + 5 * centre,
        );
        t[3][i] = S(
            if r == 6 { 15 } else { 0 } + if f == 3 || f == 4 { 4 } else { 0 },
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
        i += 1;
    }
    t
};

const FILE_A: u64 = 0x0101_0101_0101_0101;

/// Squares in front of a pawn on its own and the neighbouring files: if none holds an enemy
/// pawn, it is passed.
static PASSED_SPAN: [[Bitboard; 64]; 2] = {
    let mut t = [[Bitboard(0); 64]; 2];
    let mut sq = 0;
    while sq < 64 {
        let (f, r) = (sq % 8, sq / 8);
        let mut files = FILE_A << f;
        if f > 0 {
            files |= FILE_A << (f - 1);
        }
        if f < 7 {
            files |= FILE_A << (f + 1);
        }
        let above = if r == 7 { 0 } else { !0u64 << (8 * (r + 1)) };
        let below = if r == 0 { 0 } else { !0u64 >> (8 * (8 - r)) };
        t[0][sq] = Bitboard(files & above);
        t[1][sq] = Bitboard(files & below);
        sq += 1;
    }
    t
};

fn adjacent_files(f: u8) -> Bitboard {
    let mut b = Bitboard::EMPTY;
    if f > 0 {
        b |= Bitboard::file(f - 1);
    }
    if f < 7 {
        b |= Bitboard::file(f + 1);
    }
    b
}

fn pawn_attack_span(pawns: Bitboard, color: Color) -> Bitboard {
    match color {
        Color::White => pawns.north().east() | pawns.north().west(),
        Color::Black => pawns.south().east() | pawns.south().west(),
    }
}

/// The evaluation of one side's men (pawn structure apart), before tapering.
fn side_score(pos: &Position, us: Color, passed: Bitboard) -> S {
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
                let file = Bitboard::file(sq.file());
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

    // Passed pawns (found with the pawn structure) gain in the endgame the farther the enemy
    // king is from their path, and the nearer their own.
    for sq in passed & our_pawns {
        let r = sq.relative_rank(us) as i32;
        let stop = Square::new(sq.file(), if us == Color::White { 7 } else { 0 });
        let their_king = pos.king_square(them).distance(stop) as i32;
        let our_king = pos.king_square(us).distance(stop) as i32;
        s += S(0, (their_king - our_king) * r * 2);
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

/// Doubled, isolated and passed pawns of `us`: they depend on the pawns alone, so they are
/// cached by pawn structure. Returns the score and the passed pawns.
fn pawn_structure(our_pawns: Bitboard, their_pawns: Bitboard, us: Color) -> (S, Bitboard) {
    let mut s = S(0, 0);
    let mut passed = Bitboard::EMPTY;
    for sq in our_pawns {
        if (our_pawns & Bitboard::file(sq.file())).more_than_one() {
            s += DOUBLED;
        }
        if (our_pawns & adjacent_files(sq.file())).is_empty() {
            s += ISOLATED;
        }
        if (PASSED_SPAN[us.index()][sq.index()] & their_pawns).is_empty() {
            s += PASSED[sq.relative_rank(us) as usize];
            passed.set(sq);
        }
    }
    (s, passed)
}

#[derive(Clone, Copy, Default)]
struct PawnEntry {
    key: u64,
    /// White's pawn-structure score minus Black's.
    score: S,
    /// Passed pawns of both colours.
    passed: Bitboard,
}

/// A per-thread cache of pawn-structure evaluations, keyed by the pawn Zobrist key.
pub struct PawnCache {
    entries: Vec<PawnEntry>,
}

const PAWN_CACHE_ENTRIES: usize = 1 << 14;

impl Default for PawnCache {
    fn default() -> Self {
        PawnCache::new()
    }
}

impl PawnCache {
    pub fn new() -> PawnCache {
        PawnCache {
            entries: vec![PawnEntry::default(); PAWN_CACHE_ENTRIES],
        }
    }

    fn probe(&mut self, pos: &Position) -> PawnEntry {
        let key = pos.pawn_key();
        let slot = &mut self.entries[key as usize & (PAWN_CACHE_ENTRIES - 1)];
        // Key 0 is the empty pawn set, whose entry is the all-zero default: still correct.
        if slot.key != key || key == 0 {
            *slot = pawn_entry(pos);
        }
        *slot
    }
}

fn pawn_entry(pos: &Position) -> PawnEntry {
    let wp = pos.pieces(Color::White, PieceType::Pawn);
    let bp = pos.pieces(Color::Black, PieceType::Pawn);
    let (ws, wpassed) = pawn_structure(wp, bp, Color::White);
    let (bs, bpassed) = pawn_structure(bp, wp, Color::Black);
    let mut score = ws;
    score -= bs;
    PawnEntry {
        key: pos.pawn_key(),
        score,
        passed: wpassed | bpassed,
    }
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
    blend(pos, pawn_entry(pos))
}

/// The same, with the pawn structure from (and into) a cache.
pub fn evaluate_cached(pos: &Position, cache: &mut PawnCache) -> i32 {
    blend(pos, cache.probe(pos))
}

fn blend(pos: &Position, pawns: PawnEntry) -> i32 {
    let mut s = pawns.score;
    s += side_score(pos, Color::White, pawns.passed);
    s -= side_score(pos, Color::Black, pawns.passed);
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
    fn passed_span_is_the_squares_ahead_on_three_files() {
        for sq in Square::all() {
            for color in Color::BOTH {
                let expected = Square::all()
                    .filter(|t| (t.file() as i32 - sq.file() as i32).abs() <= 1)
                    .filter(|t| t.relative_rank(color) > sq.relative_rank(color))
                    .fold(Bitboard::EMPTY, |b, t| b | Bitboard::from_square(t));
                assert_eq!(
                    PASSED_SPAN[color.index()][sq.index()],
                    expected,
                    "{} {:?}",
                    sq,
                    color
                );
            }
        }
    }

    #[test]
    fn cached_and_direct_evaluations_agree() {
        let mut cache = PawnCache::new();
        for fen in [
            crate::chess::START_FEN,
            "8/k7/3p4/p2P1p2/P2P1P2/8/8/K7 w - - 0 1",
            "4k3/8/8/8/8/8/8/3QK3 w - - 0 1",
        ] {
            let pos = Position::from_fen(fen).unwrap();
            for _ in 0..2 {
                assert_eq!(evaluate_cached(&pos, &mut cache), evaluate(&pos), "{}", fen);
            }
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
