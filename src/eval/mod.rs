//! Static evaluation, in centipawns for the side to move: material, piece-square tables,
//! mobility, pawn structure (cached by pawn key), passed pawns with king distances, rooks on open
//! files and the seventh rank, outposts, king safety (shelter, attacks on the king's zone, safe
//! checks), threats, and endgame scaling; each as a middlegame and an endgame score blended by the
//! game phase (tapered evaluation).
//!
//! Every term is a weight times a count. The weights live in one flat array (`weights.rs`),
//! tuned by Texel's method (`engine tune`, `src/tune/`); the evaluation reports each count to a
//! `Trace`, which the engine leaves empty (`()`, compiled away) and the tuner records.

pub mod network;
mod weights;

use crate::chess::attacks::{
    bishop_attacks, king_attacks, knight_attacks, queen_attacks, rook_attacks,
};
use crate::chess::{Bitboard, Color, PieceType, Position, Square};
pub use weights::WEIGHTS;

/// A middlegame and an endgame value.
#[derive(Copy, Clone, Default, PartialEq, Eq, Debug)]
pub struct S(pub i32, pub i32);

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

// Where each term's weights start in `WEIGHTS`. Tables are indexed by piece type (pawn .. queen
// or king), square from White's side, relative rank, or a count.
pub const MATERIAL: usize = 0;
pub const PST: usize = MATERIAL + 5;
pub const KNIGHT_MOBILITY: usize = PST + 6 * 64;
pub const BISHOP_MOBILITY: usize = KNIGHT_MOBILITY + 9;
pub const ROOK_MOBILITY: usize = BISHOP_MOBILITY + 14;
pub const QUEEN_MOBILITY: usize = ROOK_MOBILITY + 15;
pub const BISHOP_PAIR: usize = QUEEN_MOBILITY + 28;
pub const TEMPO: usize = BISHOP_PAIR + 1;
pub const DOUBLED: usize = TEMPO + 1;
pub const ISOLATED: usize = DOUBLED + 1;
pub const BACKWARD: usize = ISOLATED + 1;
pub const SUPPORTED: usize = BACKWARD + 1;
pub const PHALANX: usize = SUPPORTED + 1;
pub const PASSED: usize = PHALANX + 1;
/// Per relative rank, times the distance of the own king to the square in front of the pawn.
pub const PASSED_OUR_KING: usize = PASSED + 8;
/// The same for the enemy king.
pub const PASSED_THEIR_KING: usize = PASSED_OUR_KING + 8;
/// Per relative rank, when the square in front of the pawn is empty.
pub const PASSED_FREE: usize = PASSED_THEIR_KING + 8;
pub const ROOK_OPEN: usize = PASSED_FREE + 8;
pub const ROOK_SEMI_OPEN: usize = ROOK_OPEN + 1;
pub const ROOK_SEVENTH: usize = ROOK_SEMI_OPEN + 1;
/// Knight, bishop.
pub const OUTPOST: usize = ROOK_SEVENTH + 1;
pub const SHELTER: usize = OUTPOST + 2;
/// By attacker (knight .. queen): squares of the enemy king's zone attacked, when two or more
/// pieces attack it.
pub const KING_ZONE_ATTACKS: usize = SHELTER + 1;
/// By piece (knight .. queen): squares it could give check from that the enemy does not attack.
pub const SAFE_CHECKS: usize = KING_ZONE_ATTACKS + 4;
/// Enemy pieces (not pawns) attacked by our pawns.
pub const THREAT_BY_PAWN: usize = SAFE_CHECKS + 4;
/// By victim (pawn .. queen): enemy men attacked by our knights and bishops (pawns only when no
/// enemy pawn guards them).
pub const THREAT_BY_MINOR: usize = THREAT_BY_PAWN + 1;
/// The same for our rooks.
pub const THREAT_BY_ROOK: usize = THREAT_BY_MINOR + 5;
/// Enemy pieces (not pawns) we attack and they do not defend.
pub const HANGING: usize = THREAT_BY_ROOK + 5;
pub const N_WEIGHTS: usize = HANGING + 1;

/// Each term's name, first weight and number of weights, for the tuner's output.
pub const TERMS: &[(&str, usize, usize)] = &[
    ("material", MATERIAL, 5),
    ("pawn squares", PST, 64),
    ("knight squares", PST + 64, 64),
    ("bishop squares", PST + 2 * 64, 64),
    ("rook squares", PST + 3 * 64, 64),
    ("queen squares", PST + 4 * 64, 64),
    ("king squares", PST + 5 * 64, 64),
    ("knight mobility", KNIGHT_MOBILITY, 9),
    ("bishop mobility", BISHOP_MOBILITY, 14),
    ("rook mobility", ROOK_MOBILITY, 15),
    ("queen mobility", QUEEN_MOBILITY, 28),
    ("bishop pair", BISHOP_PAIR, 1),
    ("tempo", TEMPO, 1),
    ("doubled pawn", DOUBLED, 1),
    ("isolated pawn", ISOLATED, 1),
    ("backward pawn", BACKWARD, 1),
    ("pawn supported by a pawn", SUPPORTED, 1),
    ("pawn beside a pawn", PHALANX, 1),
    ("passed pawn by rank", PASSED, 8),
    ("passed pawn: own king distance by rank", PASSED_OUR_KING, 8),
    (
        "passed pawn: enemy king distance by rank",
        PASSED_THEIR_KING,
        8,
    ),
    ("passed pawn: free stop square by rank", PASSED_FREE, 8),
    ("rook on open file", ROOK_OPEN, 1),
    ("rook on half-open file", ROOK_SEMI_OPEN, 1),
    ("rook on the seventh", ROOK_SEVENTH, 1),
    ("outpost: knight, bishop", OUTPOST, 2),
    ("king shelter pawn", SHELTER, 1),
    ("king zone attacks by attacker", KING_ZONE_ATTACKS, 4),
    ("safe checks by piece", SAFE_CHECKS, 4),
    ("threat by pawn", THREAT_BY_PAWN, 1),
    ("threat by minor by victim", THREAT_BY_MINOR, 5),
    ("threat by rook by victim", THREAT_BY_ROOK, 5),
    ("hanging piece", HANGING, 1),
];

/// Receives every count the evaluation multiplies by a weight: the tuner's view of it.
pub trait Trace {
    fn add(&mut self, weight: usize, color: Color, count: i32);
}

/// The engine's evaluation records nothing.
impl Trace for () {
    #[inline(always)]
    fn add(&mut self, _: usize, _: Color, _: i32) {}
}

/// Adds `count` times weight `i` to `s`, and tells the trace.
#[inline(always)]
fn term<T: Trace>(s: &mut S, t: &mut T, us: Color, i: usize, count: i32) {
    *s += WEIGHTS[i] * count;
    t.add(i, us, count);
}

/// Phase weight of each piece type; 24 is the full middlegame.
const PHASE: [i32; 6] = [0, 1, 1, 2, 4, 0];
pub const PHASE_TOTAL: i32 = 24;

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

/// The square in front of `sq` for `color` (`sq` is not on the last rank).
fn stop_square(sq: Square, color: Color) -> Square {
    sq.offset(color.forward())
}

/// Squares a side attacks, in all and by piece type; filled by `pieces`.
#[derive(Default)]
struct Attacks {
    all: Bitboard,
    by: [Bitboard; 6],
}

/// Material, squares, mobility, rooks, outposts and attacks on the enemy king's zone of one
/// side; records its attacks.
fn pieces<T: Trace>(pos: &Position, us: Color, att: &mut Attacks, t: &mut T) -> S {
    let them = !us;
    let occ = pos.occupied();
    let our_pawns = pos.pieces(us, PieceType::Pawn);
    let their_pawns = pos.pieces(them, PieceType::Pawn);
    let our_pawn_attacks = pawn_attack_span(our_pawns, us);
    let enemy_pawn_attacks = pawn_attack_span(their_pawns, them);
    let safe = !pos.color_bb(us) & !enemy_pawn_attacks;
    let their_king = pos.king_square(them);
    let zone = king_attacks(their_king) | Bitboard::from_square(their_king);
    let (mut zone_attackers, mut zone_counts) = (0, [0i32; 4]);
    let mut s = S(0, 0);
    att.by[PieceType::Pawn.index()] = our_pawn_attacks;
    att.by[PieceType::King.index()] = king_attacks(pos.king_square(us));

    for kind in PieceType::ALL {
        let k = kind.index();
        for sq in pos.pieces(us, kind) {
            let rel = if us == Color::White {
                sq
            } else {
                sq.flip_rank()
            };
            if kind != PieceType::King {
                term(&mut s, t, us, MATERIAL + k, 1);
            }
            term(&mut s, t, us, PST + 64 * k + rel.index(), 1);
            let attacks = match kind {
                PieceType::Knight => knight_attacks(sq),
                PieceType::Bishop => bishop_attacks(sq, occ),
                PieceType::Rook => rook_attacks(sq, occ),
                PieceType::Queen => queen_attacks(sq, occ),
                _ => continue,
            };
            att.by[k] |= attacks;
            let mobility = [
                0,
                KNIGHT_MOBILITY,
                BISHOP_MOBILITY,
                ROOK_MOBILITY,
                QUEEN_MOBILITY,
            ][k];
            term(
                &mut s,
                t,
                us,
                mobility + (attacks & safe).count() as usize,
                1,
            );
            if (attacks & zone).any() {
                zone_attackers += 1;
                zone_counts[k - 1] += (attacks & zone).count() as i32;
            }
            match kind {
                PieceType::Rook => {
                    let file = Bitboard::file(sq.file());
                    if (file & our_pawns).is_empty() {
                        let open = (file & their_pawns).is_empty();
                        let i = if open { ROOK_OPEN } else { ROOK_SEMI_OPEN };
                        term(&mut s, t, us, i, 1);
                    }
                    if rel.rank() == 6
                        && (their_king.relative_rank(us) == 7
                            || (their_pawns & Bitboard::rank(sq.rank())).any())
                    {
                        term(&mut s, t, us, ROOK_SEVENTH, 1);
                    }
                }
                PieceType::Knight | PieceType::Bishop => {
                    // An outpost: in the enemy half, guarded by a pawn, and no enemy pawn can
                    // ever chase the piece away.
                    let chasers = PASSED_SPAN[us.index()][sq.index()] & !Bitboard::file(sq.file());
                    if (3..=5).contains(&rel.rank())
                        && our_pawn_attacks.contains(sq)
                        && (chasers & their_pawns).is_empty()
                    {
                        term(&mut s, t, us, OUTPOST + k - 1, 1);
                    }
                }
                _ => {}
            }
        }
    }
    for k in 0..6 {
        att.all |= att.by[k];
    }
    if pos.pieces(us, PieceType::Bishop).more_than_one() {
        term(&mut s, t, us, BISHOP_PAIR, 1);
    }
    if zone_attackers >= 2 {
        for (i, &n) in zone_counts.iter().enumerate() {
            term(&mut s, t, us, KING_ZONE_ATTACKS + i, n);
        }
    }
    s
}

/// Safe checks and threats of `us`, from both sides' attacks.
fn threats<T: Trace>(pos: &Position, us: Color, ours: &Attacks, theirs: &Attacks, t: &mut T) -> S {
    let them = !us;
    let occ = pos.occupied();
    let mut s = S(0, 0);
    let king = pos.king_square(them);
    let safe = !theirs.all & !pos.color_bb(us);
    let diagonal = bishop_attacks(king, occ);
    let straight = rook_attacks(king, occ);
    let checks = [
        knight_attacks(king),
        diagonal,
        straight,
        diagonal | straight,
    ];
    for (i, squares) in checks.iter().enumerate() {
        let n = (*squares & ours.by[i + 1] & safe).count() as i32;
        term(&mut s, t, us, SAFE_CHECKS + i, n);
    }

    let their_pawns = pos.pieces(them, PieceType::Pawn);
    let pieces = pos.color_bb(them) & !their_pawns & !pos.pieces(them, PieceType::King);
    let pawn_threats = (ours.by[PieceType::Pawn.index()] & pieces).count() as i32;
    term(&mut s, t, us, THREAT_BY_PAWN, pawn_threats);
    // Pawns count as victims only when no pawn guards them.
    let victims = pieces | (their_pawns & !theirs.by[PieceType::Pawn.index()]);
    let minors = ours.by[PieceType::Knight.index()] | ours.by[PieceType::Bishop.index()];
    for sq in victims & minors {
        if let Some(p) = pos.piece_at(sq) {
            term(&mut s, t, us, THREAT_BY_MINOR + p.kind.index(), 1);
        }
    }
    for sq in victims & ours.by[PieceType::Rook.index()] {
        if let Some(p) = pos.piece_at(sq) {
            term(&mut s, t, us, THREAT_BY_ROOK + p.kind.index(), 1);
        }
    }
    let hanging = (pieces & ours.all & !theirs.all).count() as i32;
    term(&mut s, t, us, HANGING, hanging);
    s
}

/// Passed pawns by their kings' distances and a free stop square, and the king's pawn shelter.
fn kings_and_passers<T: Trace>(pos: &Position, us: Color, passed: Bitboard, t: &mut T) -> S {
    let them = !us;
    let mut s = S(0, 0);
    for sq in passed & pos.pieces(us, PieceType::Pawn) {
        let r = sq.relative_rank(us) as usize;
        let stop = stop_square(sq, us);
        let ours = pos.king_square(us).distance(stop) as i32;
        let theirs = pos.king_square(them).distance(stop) as i32;
        term(&mut s, t, us, PASSED_OUR_KING + r, ours);
        term(&mut s, t, us, PASSED_THEIR_KING + r, theirs);
        if pos.piece_at(stop).is_none() {
            term(&mut s, t, us, PASSED_FREE + r, 1);
        }
    }

    // King shelter: own pawns in front of the king, up to three.
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
    let shelter = (shield & front & pos.pieces(us, PieceType::Pawn))
        .count()
        .min(3) as i32;
    term(&mut s, t, us, SHELTER, shelter);
    s
}

/// Doubled, isolated, backward, supported, side-by-side and passed pawns of `us`: they depend
/// on the pawns alone, so they are cached by pawn structure. Returns the score and the passed
/// pawns.
fn pawn_structure<T: Trace>(
    our_pawns: Bitboard,
    their_pawns: Bitboard,
    us: Color,
    t: &mut T,
) -> (S, Bitboard) {
    let mut s = S(0, 0);
    let mut passed = Bitboard::EMPTY;
    let our_attacks = pawn_attack_span(our_pawns, us);
    let their_attacks = pawn_attack_span(their_pawns, !us);
    for sq in our_pawns {
        let neighbours = our_pawns & adjacent_files(sq.file());
        if (our_pawns & Bitboard::file(sq.file())).more_than_one() {
            term(&mut s, t, us, DOUBLED, 1);
        }
        if neighbours.is_empty() {
            term(&mut s, t, us, ISOLATED, 1);
        } else {
            // Backward: every neighbour is ahead, and an enemy pawn guards the stop square.
            let behind_or_level = !PASSED_SPAN[us.index()][sq.index()];
            if (neighbours & behind_or_level).is_empty()
                && their_attacks.contains(stop_square(sq, us))
            {
                term(&mut s, t, us, BACKWARD, 1);
            }
        }
        if our_attacks.contains(sq) {
            term(&mut s, t, us, SUPPORTED, 1);
        }
        if (neighbours & Bitboard::rank(sq.rank())).any() {
            term(&mut s, t, us, PHALANX, 1);
        }
        if (PASSED_SPAN[us.index()][sq.index()] & their_pawns).is_empty() {
            term(&mut s, t, us, PASSED + sq.relative_rank(us) as usize, 1);
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
            *slot = pawn_entry(pos, &mut ());
        }
        *slot
    }
}

fn pawn_entry<T: Trace>(pos: &Position, t: &mut T) -> PawnEntry {
    let wp = pos.pieces(Color::White, PieceType::Pawn);
    let bp = pos.pieces(Color::Black, PieceType::Pawn);
    let (ws, wpassed) = pawn_structure(wp, bp, Color::White, t);
    let (bs, bpassed) = pawn_structure(bp, wp, Color::Black, t);
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

/// Scales the endgame part down, out of 64, where the stronger side's extra material rarely
/// wins. Material is counted in pawns (3, 3, 5, 9): the rules are chess knowledge, not tuned.
fn endgame_scale(pos: &Position, eg: i32) -> i32 {
    let strong = if eg > 0 { Color::White } else { Color::Black };
    let weak = !strong;
    let pawns = pos.pieces(strong, PieceType::Pawn).count();
    let non_pawn = |c: Color| -> u32 {
        3 * (pos.pieces(c, PieceType::Knight) | pos.pieces(c, PieceType::Bishop)).count()
            + 5 * pos.pieces(c, PieceType::Rook).count()
            + 9 * pos.pieces(c, PieceType::Queen).count()
    };
    // Without pawns, a minor piece more (or less) is not enough to win.
    if pawns == 0 && non_pawn(strong) <= non_pawn(weak) + 3 {
        return if non_pawn(strong) < 5 { 0 } else { 8 };
    }
    // Bishops of opposite colours: drawish, the more so with nothing else.
    let wb = pos.pieces(Color::White, PieceType::Bishop);
    let bb = pos.pieces(Color::Black, PieceType::Bishop);
    if wb.count() == 1
        && bb.count() == 1
        && ((wb & Bitboard::LIGHT_SQUARES).any() != (bb & Bitboard::LIGHT_SQUARES).any())
    {
        let others = pos.kind_bb(PieceType::Knight)
            | pos.kind_bb(PieceType::Rook)
            | pos.kind_bb(PieceType::Queen);
        return if others.is_empty() { 32 } else { 48 };
    }
    64
}

/// The static evaluation for the side to move, in centipawns.
pub fn evaluate(pos: &Position) -> i32 {
    blend(pos, pawn_entry(pos, &mut ()), &mut ()).value
}

/// The same, with the pawn structure from (and into) a cache.
pub fn evaluate_cached(pos: &Position, cache: &mut PawnCache) -> i32 {
    blend(pos, cache.probe(pos), &mut ()).value
}

/// An evaluation as the tuner sees it: every count went to the trace; these say how the
/// middlegame and endgame sums were blended.
#[derive(Clone, Copy, Debug)]
pub struct Traced {
    /// For the side to move.
    pub value: i32,
    /// 0 (bare kings and pawns) .. `PHASE_TOTAL`.
    pub phase: i32,
    /// Out of 64, on the endgame part.
    pub scale: i32,
}

/// Evaluates `pos`, reporting every count to `t` (White's counts positive, Black's negative
/// as `add`'s colour says).
pub fn evaluate_traced<T: Trace>(pos: &Position, t: &mut T) -> Traced {
    let pawns = pawn_entry(pos, t);
    blend(pos, pawns, t)
}

fn blend<T: Trace>(pos: &Position, pawns: PawnEntry, t: &mut T) -> Traced {
    let mut s = pawns.score;
    let (mut white, mut black) = (Attacks::default(), Attacks::default());
    s += pieces(pos, Color::White, &mut white, t);
    s -= pieces(pos, Color::Black, &mut black, t);
    s += threats(pos, Color::White, &white, &black, t);
    s -= threats(pos, Color::Black, &black, &white, t);
    s += kings_and_passers(pos, Color::White, pawns.passed, t);
    s -= kings_and_passers(pos, Color::Black, pawns.passed, t);
    let stm = pos.side_to_move();
    let mut tempo = S(0, 0);
    term(&mut tempo, t, stm, TEMPO, 1);
    if stm == Color::White {
        s += tempo;
    } else {
        s -= tempo;
    }
    let p = phase(pos);
    let scale = endgame_scale(pos, s.1);
    let eg = s.1 * scale / 64;
    let v = (s.0 * p + eg * (PHASE_TOTAL - p)) / PHASE_TOTAL;
    Traced {
        value: if stm == Color::White { v } else { -v },
        phase: p,
        scale,
    }
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
            "r1bq1rk1/pp2nppp/2n1p3/3pP3/2pP4/P1P2N2/2B2PPP/R1BQK2R b KQ - 1 10",
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

    /// The counts the trace receives, times the weights, give back the evaluation: what the
    /// tuner optimises is what the engine computes.
    #[test]
    fn trace_reproduces_the_evaluation() {
        struct Sum(S);
        impl Trace for Sum {
            fn add(&mut self, i: usize, c: Color, n: i32) {
                let w = WEIGHTS[i] * n;
                if c == Color::White {
                    self.0 += w;
                } else {
                    self.0 -= w;
                }
            }
        }
        for fen in [
            crate::chess::START_FEN,
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "r1bq1rk1/pp2nppp/2n1p3/3pP3/2pP4/P1P2N2/2B2PPP/R1BQK2R b KQ - 1 10",
        ] {
            let pos = Position::from_fen(fen).unwrap();
            let mut sum = Sum(S(0, 0));
            let traced = evaluate_traced(&pos, &mut sum);
            let eg = sum.0 .1 * traced.scale / 64;
            let v = (sum.0 .0 * traced.phase + eg * (PHASE_TOTAL - traced.phase)) / PHASE_TOTAL;
            let v = if pos.side_to_move() == Color::White {
                v
            } else {
                -v
            };
            assert_eq!(v, evaluate(&pos), "{}", fen);
            assert_eq!(traced.value, evaluate(&pos), "{}", fen);
        }
    }
}
