//! Blockage detection in king-and-pawn endings (Tabibi, Felner and Netanyahu 2003, Sections 2-3):
//! "the attacker cannot win" when its fixed pawns and the squares the enemy pawns attack form a fence
//! its king cannot cross and no pawn of its own can break it. Open points are read as in
//! `shared/notes/blockage-reading.md` (always towards "no blockage"). The pawn-only part is cached.
//!
//! Everything is computed for an attacker whose pawns move north (White); Black is handled by
//! mirroring the board, so there is one copy of the rules.

use super::{Bound, Men, Outcome};
use crate::chess::attacks::king_attacks;
use crate::chess::{Bitboard, Color, PieceType, Position, Square};

const FILE_A: u64 = Bitboard::FILE_A.0;
const FILE_H: u64 = Bitboard::FILE_H.0;
const RANK_3: u64 = 0xFF << 16;

/// Squares attacked by pawns that move north.
#[inline(always)]
fn up_attacks(pawns: u64) -> u64 {
    ((pawns & !FILE_A) << 7) | ((pawns & !FILE_H) << 9)
}

/// Squares attacked by pawns that move south.
#[inline(always)]
fn down_attacks(pawns: u64) -> u64 {
    ((pawns & !FILE_A) >> 9) | ((pawns & !FILE_H) >> 7)
}

#[inline(always)]
fn pawn_attacks_of(color: Color, pawns: u64) -> u64 {
    match color {
        Color::White => up_attacks(pawns),
        Color::Black => down_attacks(pawns),
    }
}

/// Whether marked squares could hold a fence: a fence steps east out of every file but the
/// h-file, and each east step joins two marked squares of one rank. Most pawn structures fail
/// this, and it costs a few instructions.
#[inline(always)]
fn steps_east_from_every_file(marked: u64) -> bool {
    // A pair starting on the h-file wraps onto the next rank's a-file; only files a to g are
    // read at the end, so it needs no mask.
    let mut x = marked & (marked >> 1);
    x |= x >> 32;
    x |= x >> 16;
    x |= x >> 8;
    x & 0x7F == 0x7F
}

#[inline(always)]
fn bit(sq: u8) -> u64 {
    1u64 << sq
}

#[inline(always)]
fn file_mask(file: u8) -> u64 {
    FILE_A << file
}

/// The pawn structure as the detector sees it, for one attacker, in real board coordinates.
/// Exposed so tests can compare it with the paper's captions.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct Structure {
    /// The attacker's fixed pawns (Section 2.2).
    pub fixed: Bitboard,
    /// Fixed pawns plus the squares attacked by the defender's pawns (Section 2.2).
    pub marked: Bitboard,
    /// The fence found by the Figure 8 search; empty when there is none.
    pub fence: Bitboard,
    /// Defender's pawns taken off the board because they stand below the fence (Section 3).
    pub removed: Bitboard,
}

/// The pawn-only verdict for one attacker, in real board coordinates: the squares where each king
/// must stand for the blockage to hold. No blockage whatever the kings do: both empty.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
struct Verdict {
    /// Below the fence.
    attacker_king: u64,
    /// Above the fence, and in front of every pawn the king has to hold (3.1, 3.4).
    defender_king: u64,
}

impl Verdict {
    /// No blockage whatever the kings do (a blockage always leaves the defending king a square).
    #[inline(always)]
    fn is_none(&self) -> bool {
        self.defender_king == 0
    }
}

/// The marked squares of `column` (one file's marks) vertically connected to `seeds`.
#[inline(always)]
fn vertical_runs(column: u64, seeds: u64) -> u64 {
    let mut run = seeds & column;
    loop {
        let next = run | (((run << 8) | (run >> 8)) & column);
        if next == run {
            return run;
        }
        run = next;
    }
}

/// The fence of Figure 8's depth-first search (north, east, south in that order, from the topmost
/// marked a-file square of ranks 2-7), computed without the search: 0 when there is none.
///
/// The search never steps west, so within a file it walks one vertical run of marks. It enters a
/// run, climbs to its top, then tries east from each square on the way back down to where it came
/// in, then from each square below. It succeeds from a run exactly when some square of the run has
/// an east neighbour in a run that succeeds (a "good" run; every h-file mark is good); a run it
/// has explored and left is never good, so its shared `processed` set never hides a good square.
/// Hence: find the good runs file by file from h back to a, start at the topmost good start square
/// and in each file take the first exit in the search's order. The tests compare this with the
/// search itself.
fn find_fence(marked: u64) -> u64 {
    const STARTS: u64 = 0x0001_0101_0101_0100;
    let mut good = marked & FILE_H;
    for file in (0..7u8).rev() {
        let column = marked & file_mask(file);
        let runs = vertical_runs(column, column & ((good & file_mask(file + 1)) >> 1));
        if runs == 0 {
            return 0;
        }
        good |= runs;
    }
    let starts = good & STARTS;
    if starts == 0 {
        return 0;
    }
    let mut fence = 0u64;
    let mut entry = 63 - starts.leading_zeros() as u8;
    loop {
        let file = entry & 7;
        if file == 7 {
            return fence | bit(entry);
        }
        let run = vertical_runs(marked & file_mask(file), bit(entry));
        let exits = run & ((good & file_mask(file + 1)) >> 1);
        let from_entry_up = exits & !(bit(entry) - 1);
        let exit = if from_entry_up != 0 {
            63 - from_entry_up.leading_zeros() as u8
        } else {
            63 - (exits & (bit(entry) - 1)).leading_zeros() as u8
        };
        let (lo, hi) = (entry.min(exit), entry.max(exit));
        // All squares from `lo` to `hi` (the shift may overflow to 0 for h8: then all from lo).
        fence |= run & (bit(hi) << 1).wrapping_sub(bit(lo));
        entry = exit + 1;
    }
}

/// Squares strictly below and strictly above the fence, file by file.
fn split_by_fence(fence: u64) -> (u64, u64) {
    let (mut below, mut above) = (0u64, 0u64);
    for file in 0..8u8 {
        let column = fence & file_mask(file);
        debug_assert!(column != 0, "a fence crosses every file");
        let lo = column.trailing_zeros();
        let hi = 63 - column.leading_zeros();
        below |= file_mask(file) & ((1u64 << lo) - 1);
        above |= file_mask(file) & ((u64::MAX << hi) << 1);
    }
    (below, above)
}

/// Pawns of `own` that cannot move: blocked by an enemy pawn in `blockers` or by an own fixed
/// pawn, and with no enemy pawn of `enemy` to capture (Section 2.2).
fn fixed_pawns(own: u64, blockers: u64, enemy: u64) -> u64 {
    let candidates = own & !down_attacks(enemy);
    let mut fixed = candidates & (blockers >> 8);
    loop {
        let next = fixed | (candidates & (fixed >> 8));
        if next == fixed {
            return fixed;
        }
        fixed = next;
    }
}

/// False when `analyse_up(own, enemy)` surely finds no fence: the first round's marks (all enemy
/// pawns standing) hold every later round's, so when they cannot hold a fence none can.
#[inline(always)]
fn may_have_fence(own: u64, enemy: u64) -> bool {
    steps_east_from_every_file(fixed_pawns(own, enemy, enemy) | down_attacks(enemy))
}

/// False when `analyse_up(own, enemy)` surely finds no blockage because a pawn of ours can take
/// an enemy pawn (note 9): it lets such a pawn through only on the fence under 3.2, which needs
/// a rank below the seventh, an enemy pawn two squares ahead and no other pawn of ours on the
/// file. Pawns in contact are common, and this costs far less than the fence.
fn captures_may_hold(own: u64, enemy: u64) -> bool {
    let mut capturers = own & down_attacks(enemy);
    while capturers != 0 {
        let p = capturers.trailing_zeros() as u8;
        capturers &= capturers - 1;
        if p >> 3 > 5 || enemy & bit(p + 16) == 0 || own & file_mask(p & 7) != bit(p) {
            return false;
        }
    }
    true
}

/// Sections 2-3 for an attacker whose pawns move north: the fence with the enemy pawns below it
/// removed (repeated until none is left, note 4), then every dynamic pawn checked.
fn analyse_up(own: u64, enemy: u64) -> (Verdict, Structure) {
    const NONE: Verdict = Verdict {
        attacker_king: 0,
        defender_king: 0,
    };
    let mut standing = enemy;
    let (mut fixed, mut attacked, mut fence, mut below, mut above);
    loop {
        attacked = down_attacks(standing);
        fixed = fixed_pawns(own, standing, enemy);
        let marked = fixed | attacked;
        fence = find_fence(marked);
        let structure = Structure {
            fixed: Bitboard(fixed),
            marked: Bitboard(marked),
            fence: Bitboard(fence),
            removed: Bitboard(enemy & !standing),
        };
        if fence == 0 {
            return (NONE, structure);
        }
        (below, above) = split_by_fence(fence);
        if standing & below == 0 {
            break;
        }
        // The attacker's king can win these: the defender may not count on them (Section 3).
        standing &= !below;
    }
    let structure = Structure {
        fixed: Bitboard(fixed),
        marked: Bitboard(fixed | attacked),
        fence: Bitboard(fence),
        removed: Bitboard(enemy & !standing),
    };

    // Any enemy pawn a pawn of ours can take changes the structure (note 9); the only exception,
    // a fence pawn meeting 3.2, is let through below.
    let can_capture = own & down_attacks(enemy);
    let all_attacked = down_attacks(enemy);

    // 3.2: a pawn standing on, or arriving at, fence square `s` cannot break through if an enemy
    // pawn two squares ahead recaptures, it is alone on its file, and the square ahead is safe.
    let holds_on_fence = |s: u8, pawn: u8| {
        s >> 3 <= 5
            && standing & bit(s + 16) != 0
            && own & file_mask(s & 7) == bit(pawn)
            && attacked & bit(s + 8) == 0
    };
    // 3.4: the pawn arriving at `s` is taken by one of the two enemy pawns that block our fixed
    // fence pawns on the neighbouring files, on the same rank below the sixth; the defending king
    // must then stand on the pawn's file. Read narrowly (note 8): the pawn is alone on its file.
    let exception = |s: u8, pawn: u8| {
        let (file, rank) = (s & 7, s >> 3);
        if file == 0 || file == 7 || rank > 4 || own & file_mask(file) != bit(pawn) {
            return false;
        }
        let left = own & file_mask(file - 1);
        let right = own & file_mask(file + 1);
        left == bit(s - 1)
            && right == bit(s + 1)
            && fixed & fence & left != 0
            && fixed & fence & right != 0
            && standing & bit(s + 7) != 0
            && standing & bit(s + 9) != 0
    };

    let mut defender_king = above;
    let mut dynamic = own & !fixed;
    while dynamic != 0 {
        let p = dynamic.trailing_zeros() as u8;
        dynamic &= dynamic - 1;
        let (file, rank) = (p & 7, p >> 3);
        let column = fence & file_mask(file);
        let lo = (column.trailing_zeros() >> 3) as u8;
        let hi = ((63 - column.leading_zeros()) >> 3) as u8;

        if rank > hi {
            // 3.1: above the fence; the defending king must stand in front of it. Read narrowly:
            // on its way up it must never meet an enemy pawn's attack (it could take that pawn).
            if can_capture & bit(p) != 0 {
                return (NONE, structure);
            }
            let mut s = p;
            while s < 56 {
                s += 8;
                if (own | enemy) & bit(s) != 0 {
                    break;
                }
                if all_attacked & bit(s) != 0 {
                    return (NONE, structure);
                }
            }
            defender_king &= file_mask(file) & ((u64::MAX << p) << 1);
        } else if rank >= lo {
            // 3.2: on the fence (so on a square an enemy pawn attacks).
            if !holds_on_fence(p, p) {
                return (NONE, structure);
            }
        } else {
            // 3.3: below the fence; walk it forward.
            if can_capture & bit(p) != 0 {
                return (NONE, structure);
            }
            let mut s = p + 8;
            loop {
                if own & bit(s) != 0 || standing & bit(s) != 0 {
                    // Stopped by a pawn before meeting any enemy pawn's attack: it stays put.
                    break;
                }
                if s >> 3 < lo {
                    if all_attacked & bit(s) != 0 || s >> 3 >= 6 {
                        return (NONE, structure);
                    }
                    s += 8;
                    continue;
                }
                // Reached the fence on an attacked square (the only kind left at `lo`).
                if attacked & bit(s) == 0 {
                    return (NONE, structure);
                }
                if holds_on_fence(s, p) {
                    break;
                }
                if exception(s, p) {
                    defender_king &= file_mask(file);
                    break;
                }
                return (NONE, structure);
            }
        }
    }
    if defender_king == 0 {
        return (NONE, structure);
    }
    (
        Verdict {
            attacker_king: below,
            defender_king,
        },
        structure,
    )
}

/// The pawn-only verdict for `attacker`, in real coordinates; Black's by mirroring.
fn pawn_verdict(white_pawns: u64, black_pawns: u64, attacker: Color) -> Verdict {
    let (own, enemy) = match attacker {
        Color::White => (white_pawns, black_pawns),
        Color::Black => (black_pawns.swap_bytes(), white_pawns.swap_bytes()),
    };
    if !captures_may_hold(own, enemy) || !may_have_fence(own, enemy) {
        return Verdict::default();
    }
    match attacker {
        Color::White => analyse_up(white_pawns, black_pawns).0,
        Color::Black => {
            let v = analyse_up(black_pawns.swap_bytes(), white_pawns.swap_bytes()).0;
            Verdict {
                attacker_king: v.attacker_king.swap_bytes(),
                defender_king: v.defender_king.swap_bytes(),
            }
        }
    }
}

/// The detector's view of the pawns for `attacker` (fixed pawns, marked squares, fence), in real
/// coordinates; for tests and diagnostics.
pub fn structure(men: &Men, attacker: Color) -> Structure {
    let wp = men.get(Color::White, PieceType::Pawn).0;
    let bp = men.get(Color::Black, PieceType::Pawn).0;
    match attacker {
        Color::White => analyse_up(wp, bp).1,
        Color::Black => {
            let s = analyse_up(bp.swap_bytes(), wp.swap_bytes()).1;
            Structure {
                fixed: s.fixed.flip_rank(),
                marked: s.marked.flip_rank(),
                fence: s.fence.flip_rank(),
                removed: s.removed.flip_rank(),
            }
        }
    }
}

/// The king-dependent conditions, checked at every probe: kings on their sides of the fence, and
/// the defender not in zugzwang (note 3): its king has an empty neighbour no man of the attacker
/// attacks. With the attacker to move that square must also survive any one attacking move: we
/// remove every square a pawn push or a king step could cover (a superset, so still sound).
fn kings_hold(v: &Verdict, ending: &PawnEnding, attacker: Color) -> bool {
    let ak = ending.kings[attacker.index()];
    let dk = ending.kings[(!attacker).index()];
    if v.attacker_king & bit(ak.0) == 0 || v.defender_king & bit(dk.0) == 0 {
        return false;
    }
    let pawns = ending.pawns[attacker.index()];
    let occupied = ending.pawns[0] | ending.pawns[1] | bit(ak.0) | bit(dk.0);
    let covered = pawn_attacks_of(attacker, pawns) | king_attacks(ak).0;
    let mut free = king_attacks(dk).0 & !occupied & !covered;
    if ending.side_to_move == attacker {
        let (single, double) = match attacker {
            Color::White => {
                let s = (pawns << 8) & !occupied;
                (s, ((s & RANK_3) << 8) & !occupied)
            }
            Color::Black => {
                let s = (pawns >> 8) & !occupied;
                (s, ((s & (RANK_3 << 24)) >> 8) & !occupied)
            }
        };
        let pushed = single | double;
        free &= !(pushed | pawn_attacks_of(attacker, pushed));
        for step in king_attacks(ak) {
            free &= !king_attacks(step).0;
        }
    }
    free != 0
}

/// A position the detector can judge: kings and pawns only, one king a side, no en-passant
/// capture pending.
#[derive(Copy, Clone, Debug)]
pub struct PawnEnding {
    pawns: [u64; 2],
    kings: [Square; 2],
    side_to_move: Color,
}

impl PawnEnding {
    pub fn of_men(men: &Men) -> Option<PawnEnding> {
        if !men.is_pawn_ending() || men.en_passant.is_some() {
            return None;
        }
        Some(PawnEnding {
            pawns: [
                men.get(Color::White, PieceType::Pawn).0,
                men.get(Color::Black, PieceType::Pawn).0,
            ],
            kings: [men.king(Color::White)?, men.king(Color::Black)?],
            side_to_move: men.side_to_move,
        })
    }
}

/// "`attacker` cannot win": an upper bound of DRAW for it (Figure 5), without the pawn hash.
/// False whenever the detector is unsure, and for anything but a pawn ending with both kings and
/// no en-passant capture pending.
pub fn cannot_win(men: &Men, attacker: Color) -> bool {
    PawnEnding::of_men(men).is_some_and(|e| {
        kings_hold(
            &pawn_verdict(e.pawns[0], e.pawns[1], attacker),
            &e,
            attacker,
        )
    })
}

/// Whether a cheap superset of `attacker`'s marks (its pawns with a pawn in front of them, the
/// squares the enemy's pawns attack) could hold a fence; most structures fail this, and then there
/// is nothing to look up.
#[inline(always)]
fn may_hold_fence(white_pawns: u64, black_pawns: u64, attacker: Color) -> bool {
    let pawns = white_pawns | black_pawns;
    // The attacks are shifted without the edge-file masks: a wrapped bit only adds a mark, and a
    // superset of the marks is all the filter needs.
    steps_east_from_every_file(match attacker {
        Color::White => (white_pawns & (pawns >> 8)) | (black_pawns >> 9) | (black_pawns >> 7),
        Color::Black => (black_pawns & (pawns << 8)) | (white_pawns << 7) | (white_pawns << 9),
    })
}

/// Which of the `wanted` claims pass the filter, for the side to move (`us`) and its opponent.
#[inline(always)]
fn filter(white_pawns: u64, black_pawns: u64, side_to_move: Color, wanted: Wanted) -> (bool, bool) {
    (
        wanted.at_most_draw && may_hold_fence(white_pawns, black_pawns, side_to_move),
        wanted.at_least_draw && may_hold_fence(white_pawns, black_pawns, !side_to_move),
    )
}

/// The claims a caller can use (Figure 5): "the side to move cannot win" lowers beta to a draw, so
/// it serves only while beta is above a draw; "its opponent cannot win" raises alpha, so only
/// while alpha is below one. A null-window node wants one of the two, and the detector works out
/// only that one.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Wanted {
    pub at_most_draw: bool,
    pub at_least_draw: bool,
}

impl Wanted {
    pub const BOTH: Wanted = Wanted {
        at_most_draw: true,
        at_least_draw: true,
    };
}

/// One slot of the pawn hash: the two pawn sets verify the key exactly, so a hit is never wrong.
/// Each attacker's verdict is worked out the first time it is asked for.
#[derive(Copy, Clone)]
struct Entry {
    white_pawns: u64,
    black_pawns: u64,
    verdicts: [Verdict; 2],
    known: [bool; 2],
}

/// No real pawn set fills the whole board, so this marks an unused slot.
const EMPTY_SLOT: u64 = u64::MAX;

const EMPTY_ENTRY: Entry = Entry {
    white_pawns: EMPTY_SLOT,
    black_pawns: EMPTY_SLOT,
    verdicts: [Verdict {
        attacker_king: 0,
        defender_king: 0,
    }; 2],
    known: [false; 2],
};

/// A miss: work out one attacker's verdict. Kept out of line so that the hits, nearly every
/// probe, run through a small function.
#[cold]
#[inline(never)]
fn fill(slot: &mut Entry, white_pawns: u64, black_pawns: u64, attacker: Color) {
    if slot.white_pawns != white_pawns || slot.black_pawns != black_pawns {
        *slot = Entry {
            white_pawns,
            black_pawns,
            ..EMPTY_ENTRY
        };
    }
    slot.verdicts[attacker.index()] = pawn_verdict(white_pawns, black_pawns, attacker);
    slot.known[attacker.index()] = true;
}

/// Hits and misses of the pawn hash since creation (or the last `clear`), one per attacker asked
/// about whose marks could hold a fence.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct ProbeStats {
    pub hits: u64,
    pub misses: u64,
}

/// The blockage detector with its pawn hash (Section 4: one fence search per pawn structure).
///
/// Thread safety: each search thread owns its own table (`&mut self` on probe, no locks, no
/// atomics); a table of 2^14 slots is under 1 MB, so a table per thread is cheap and the threads
/// never contend. Probing never allocates: the slots are allocated once in `new`.
pub struct BlockageTable {
    slots: Box<[Entry]>,
    shift: u32,
    stats: ProbeStats,
    claims: u64,
}

impl BlockageTable {
    /// A table of `2^log2_slots` slots of 56 bytes each (1..=24).
    pub fn new(log2_slots: u32) -> BlockageTable {
        let log2_slots = log2_slots.clamp(1, 24);
        BlockageTable {
            slots: vec![EMPTY_ENTRY; 1 << log2_slots].into_boxed_slice(),
            shift: 64 - log2_slots,
            stats: ProbeStats::default(),
            claims: 0,
        }
    }

    /// "`attacker` cannot win" (see `cannot_win`), with the pawn-only part from the hash.
    pub fn cannot_win(&mut self, men: &Men, attacker: Color) -> bool {
        PawnEnding::of_men(men).is_some_and(|e| self.holds(&e, attacker))
    }

    /// The `wanted` claims for the search (Figure 5), from the side to move's point of view:
    /// `AtMostDraw` (set `beta = DRAW`, or return DRAW if `alpha >= DRAW`) when it cannot win,
    /// `AtLeastDraw` (raise `alpha` to DRAW) when its opponent cannot, `Exact(Draw)` when neither
    /// can. A claim not wanted is not looked for.
    pub fn bound(&mut self, ending: &PawnEnding, wanted: Wanted) -> Option<Bound> {
        let [wp, bp] = ending.pawns;
        let (us, them) = filter(wp, bp, ending.side_to_move, wanted);
        if us || them {
            self.bound_past_filter(ending, us, them)
        } else {
            None
        }
    }

    /// `bound` for a position of the search. Inlined up to the cheap filter, which turns away
    /// most structures before any call; only then are the kings looked up.
    #[inline(always)]
    pub fn probe(&mut self, pos: &Position, wanted: Wanted) -> Option<Bound> {
        let pawns = pos.kind_bb(PieceType::Pawn);
        if pos.occupied() != pawns | pos.kind_bb(PieceType::King) || pos.ep_square().is_some() {
            return None;
        }
        let wp = (pawns & pos.color_bb(Color::White)).0;
        let bp = pawns.0 ^ wp;
        let side_to_move = pos.side_to_move();
        let (us, them) = filter(wp, bp, side_to_move, wanted);
        if !(us || them) {
            return None;
        }
        let ending = PawnEnding {
            pawns: [wp, bp],
            kings: [pos.king_square(Color::White), pos.king_square(Color::Black)],
            side_to_move,
        };
        self.bound_past_filter(&ending, us, them)
    }

    /// `bound` for the claims whose structures passed the filter: the pawn-only verdicts from the
    /// hash, then the kings.
    #[inline(never)]
    fn bound_past_filter(&mut self, ending: &PawnEnding, us: bool, them: bool) -> Option<Bound> {
        let stm = ending.side_to_move;
        let us = us && self.holds_past_filter(ending, stm);
        let them = them && self.holds_past_filter(ending, !stm);
        self.claims += (us || them) as u64;
        match (us, them) {
            (true, true) => Some(Bound::Exact(Outcome::Draw)),
            (true, false) => Some(Bound::AtMostDraw),
            (false, true) => Some(Bound::AtLeastDraw),
            (false, false) => None,
        }
    }

    /// "`attacker` cannot win": the cheap filter, then the rest.
    fn holds(&mut self, ending: &PawnEnding, attacker: Color) -> bool {
        may_hold_fence(ending.pawns[0], ending.pawns[1], attacker)
            && self.holds_past_filter(ending, attacker)
    }

    #[inline(always)]
    fn holds_past_filter(&mut self, ending: &PawnEnding, attacker: Color) -> bool {
        let verdict = self.verdict(ending, attacker);
        !verdict.is_none() && kings_hold(&verdict, ending, attacker)
    }

    /// The pawn-only verdict for `attacker`: from the slot, or worked out and stored.
    #[inline(always)]
    fn verdict(&mut self, ending: &PawnEnding, attacker: Color) -> Verdict {
        let [wp, bp] = ending.pawns;
        let index = (wp.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ bp.wrapping_mul(0x6A09_E667_F3BC_C909))
        .rotate_left(17)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            >> self.shift;
        let slot = &mut self.slots[index as usize];
        if slot.white_pawns == wp && slot.black_pawns == bp && slot.known[attacker.index()] {
            self.stats.hits += 1;
        } else {
            self.stats.misses += 1;
            fill(slot, wp, bp, attacker);
        }
        slot.verdicts[attacker.index()]
    }

    pub fn stats(&self) -> ProbeStats {
        self.stats
    }

    /// The claims `bound` has made since the last call.
    pub fn take_claims(&mut self) -> u64 {
        std::mem::take(&mut self.claims)
    }

    /// Empties every slot and zeroes the counters (new game).
    pub fn clear(&mut self) {
        self.slots.fill(EMPTY_ENTRY);
        self.stats = ProbeStats::default();
        self.claims = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::Square;
    use crate::recognize::men_from_fen;

    fn squares(names: &[&str]) -> Bitboard {
        let mut b = Bitboard::EMPTY;
        for n in names {
            b.set(Square::parse(n).unwrap());
        }
        b
    }

    #[test]
    fn full_rank_of_marks_is_a_fence_and_splits_the_board() {
        let marked = Bitboard::rank(3).0;
        assert_eq!(find_fence(marked), marked);
        let (below, above) = split_by_fence(marked);
        assert_eq!(
            below,
            Bitboard::rank(0).0 | Bitboard::rank(1).0 | Bitboard::rank(2).0
        );
        assert_eq!(above, !(below | marked));
    }

    #[test]
    fn fence_search_follows_north_east_south_and_backtracks() {
        // A dead end going north from b4 (b5, b6) must be abandoned for the path along rank 4.
        let marked = squares(&["a4", "b4", "b5", "b6", "c4", "d4", "e4", "f4", "g4", "h4"]);
        let fence = find_fence(marked.0);
        assert_eq!(
            Bitboard(fence),
            squares(&["a4", "b4", "c4", "d4", "e4", "f4", "g4", "h4"])
        );
        // A gap on the g-file: no fence.
        let gap = squares(&["a4", "b4", "c4", "d4", "e4", "f4", "h4"]);
        assert_eq!(find_fence(gap.0), 0);
        // A separating path that needs a west step (c6-b6) is not found: the search never steps
        // west, which can only miss fences, never invent one.
        let west = squares(&[
            "a4", "b4", "c4", "c5", "c6", "b6", "b7", "b8", "c8", "d8", "e8", "f8", "g8", "h8",
        ]);
        assert_eq!(find_fence(west.0), 0);
        let plain = squares(&[
            "a4", "b4", "c4", "c5", "c6", "c7", "d7", "e7", "f7", "g7", "h7",
        ]);
        assert_eq!(Bitboard(find_fence(plain.0)), plain);
    }

    /// Figure 8 as the paper gives it: depth-first search from `sq` towards the h-file, trying
    /// north, east, south in that order, with one `processed` set; the path found is the fence.
    fn figure_8_step(sq: u8, marked: u64, processed: &mut u64, fence: &mut u64) -> bool {
        *processed |= bit(sq);
        let (file, rank) = (sq & 7, sq >> 3);
        if file == 7 {
            *fence |= bit(sq);
            return true;
        }
        let mut try_step = |to: u8| {
            marked & bit(to) != 0
                && *processed & bit(to) == 0
                && figure_8_step(to, marked, processed, fence)
        };
        let found =
            (rank < 7 && try_step(sq + 8)) || try_step(sq + 1) || (rank > 0 && try_step(sq - 8));
        if found {
            *fence |= bit(sq);
        }
        found
    }

    fn figure_8_fence(marked: u64) -> u64 {
        let mut processed = 0u64;
        let mut fence = 0u64;
        for rank in (1..=6u8).rev() {
            let sq = rank * 8;
            if marked & bit(sq) != 0
                && processed & bit(sq) == 0
                && figure_8_step(sq, marked, &mut processed, &mut fence)
            {
                return fence;
            }
        }
        0
    }

    #[test]
    fn fence_is_the_one_figure_8_search_finds() {
        // Random marks of several densities (the denser, the more fences), the fences compared
        // square by square.
        let mut rng = fastrand::Rng::with_seed(0x9E37_79B9_7F4A_7C15);
        let mut next = || rng.u64(..);
        let mut found = 0;
        for i in 0..400_000 {
            let marked = match i % 5 {
                0 => next() | next(),
                1 => next() | next() | next(),
                2 => next() | (next() & next()),
                3 => !(next() & next()),
                _ => !(next() & next() & next()),
            };
            let fence = figure_8_fence(marked);
            assert_eq!(find_fence(marked), fence, "{marked:#018x}");
            // The cheap filter never turns a fence away.
            assert!(
                fence == 0 || steps_east_from_every_file(marked),
                "{marked:#018x}"
            );
            found += (fence != 0) as u32;
        }
        // Both answers are common enough to be tested.
        assert!(found > 40_000 && found < 400_000 - 10_000, "{found}");
    }

    /// Every way to put `n` pawns of either colour on ranks 2-7, passed to `f` as (white, black).
    fn for_each_pawn_structure(n: usize, f: &mut impl FnMut(u64, u64)) {
        fn place(from: u8, left: usize, white: u64, black: u64, f: &mut impl FnMut(u64, u64)) {
            if left == 0 {
                return f(white, black);
            }
            for sq in from..56 {
                place(sq + 1, left - 1, white | bit(sq), black, f);
                place(sq + 1, left - 1, white, black | bit(sq), f);
            }
        }
        place(8, n, 0, 0, f);
    }

    #[test]
    fn no_fence_with_three_pawns_or_fewer() {
        // A fence needs a marked square on each of the eight files. A defender's pawn marks two
        // squares (the ones it attacks), an attacker's fixed pawn one, and a fixed pawn needs an
        // enemy pawn ahead; so three pawns mark at most six files. Hence no pawn-only ending of
        // up to five men (KPK, KPKP, KPPK, KPPKP, KPPPK) ever gets a blockage claim, whatever the
        // kings: their tables cannot test the detector. Checked here over every structure.
        let mut structures = 0u64;
        for n in 1..=3 {
            for_each_pawn_structure(n, &mut |white, black| {
                structures += 1;
                for attacker in Color::BOTH {
                    let v = pawn_verdict(white, black, attacker);
                    assert!(v.is_none(), "{white:#x} {black:#x} {attacker:?}");
                }
            });
        }
        // 48 squares, either colour: the sum over n of C(48, n) * 2^n.
        assert_eq!(structures, 96 + 4_512 + 138_368);
        // Four pawns can: White's b2, c2, f2 and g2 attack the whole third rank, which Black's
        // king (with no pawn, so it cannot win anyway) may not cross.
        let v = pawn_verdict(0x6600, 0, Color::Black);
        assert!(!v.is_none());
    }

    #[test]
    fn capture_check_turns_away_only_what_the_analysis_turns_away() {
        // Locked pairs on most files (an attacker's pawn with a defender's pawn right in front),
        // some of them shifted a file or a rank, and in half of them loose pawns of both sides:
        // structures with fences, captures, and 3.2 pawns that take and are retaken.
        let mut rng = fastrand::Rng::with_seed(0x2545_F491_4F6C_DD1D);
        let mut next = || rng.u64(..);
        let (mut turned_away, mut blockages, mut blockages_with_captures) = (0, 0, 0);
        for _ in 0..300_000 {
            let (mut own, mut enemy) = (0u64, 0u64);
            for file in 0..8u8 {
                let r = next();
                if r % 16 == 0 {
                    continue;
                }
                let rank = 1 + ((r >> 3) % 4) as u8;
                let enemy_file: u8 = match (r >> 6) % 8 {
                    0 if file > 0 => file - 1,
                    1 if file < 7 => file + 1,
                    _ => file,
                };
                let gap = 1 + ((r >> 9) % 8 == 0) as u8;
                own |= bit(rank * 8 + file);
                enemy |= bit((rank + gap) * 8 + enemy_file);
            }
            let loose = if next() % 2 == 0 {
                0x00FF_FFFF_FFFF_FF00
            } else {
                0
            };
            own |= next() & next() & next() & next() & loose;
            enemy |= next() & next() & next() & next() & loose;
            enemy &= !own;
            let verdict = analyse_up(own, enemy).0;
            if !captures_may_hold(own, enemy) {
                assert!(verdict.is_none(), "{own:#018x} {enemy:#018x}");
                turned_away += 1;
            }
            if !verdict.is_none() {
                blockages += 1;
                blockages_with_captures += (own & down_attacks(enemy) != 0) as u32;
            }
        }
        // Every branch is met: structures turned away, blockages, and blockages that hold
        // although a fence pawn can take (3.2). Over seeds 1-4 the last count is 315 to 347.
        assert!(turned_away > 100_000, "{turned_away}");
        assert!(blockages > 1_000, "{blockages}");
        assert!(blockages_with_captures > 200, "{blockages_with_captures}");
    }

    #[test]
    fn fixed_pawns_chain_through_own_fixed_pawns() {
        // c3 is fixed behind the fixed c4; e4 is not fixed because it can take f5.
        let own = squares(&["c3", "c4", "e4"]);
        let enemy = squares(&["c5", "e5", "f5"]);
        assert_eq!(
            Bitboard(fixed_pawns(own.0, enemy.0, enemy.0)),
            squares(&["c3", "c4"])
        );
    }

    #[test]
    fn simple_locked_chain_is_a_blockage_for_both_sides() {
        let men = men_from_fen("8/4k3/8/p1p1p1p1/P1P1P1P1/8/4K3/8 w");
        assert!(cannot_win(&men, Color::White));
        assert!(cannot_win(&men, Color::Black));
        // The same with Black to move, and mirrored.
        let m = men.mirrored();
        assert!(cannot_win(&m, Color::White) && cannot_win(&m, Color::Black));
    }

    #[test]
    fn king_on_the_wrong_side_or_in_zugzwang_is_no_blockage() {
        // White's king above the fence.
        let men = men_from_fen("8/4K3/8/p1p1p1p1/P1P1P1P1/8/4k3/8 w");
        assert!(!cannot_win(&men, Color::White));
        // Black's king on a8 in front of White's a7 (3.1 holds) but with no free square: a7 and b7
        // are occupied and b8 is covered by a7. Black must then move h7 and open the h-file.
        let men = men_from_fen("k7/Pp5p/1P6/p1p1p1p1/P1P1P1P1/8/8/4K3 b");
        assert!(!cannot_win(&men, Color::White));
        // Without the a7 pawn, b8 is free and the blockage holds.
        let men = men_from_fen("k7/1p5p/1P6/p1p1p1p1/P1P1P1P1/8/8/4K3 b");
        assert!(cannot_win(&men, Color::White));
    }

    #[test]
    fn search_and_men_views_of_a_position_agree() {
        // The search builds its view from the position (with the incremental pawn key), the
        // tests from `Men`: same pawns, kings and side to move, so the same claims.
        let mut from_search = BlockageTable::new(8);
        let mut from_men = BlockageTable::new(8);
        let fens = [
            "8/4k3/8/p1p1p1p1/P1P1P1P1/8/4K3/8 w - - 0 1",
            "8/4k3/8/p1p1p1p1/P1P1P1P1/8/3K4/8 b - - 0 1",
            "8/5k2/1p1p4/p1p1p1p1/P1P1P1P1/1PP1P3/3P1K2/8 b - - 0 1",
            "8/3k4/5p2/p1p1p1p1/P1P1PPP1/8/3K4/8 w - - 0 1",
            "8/k7/3p4/p2P1p2/P2P1P2/8/8/K7 w - - 0 1",
        ];
        let mut claims = 0;
        for fen in fens {
            let pos = Position::from_fen(fen).unwrap();
            let built = PawnEnding::of_men(&Men::from(&pos)).unwrap();
            for (at_most_draw, at_least_draw) in [(true, true), (true, false), (false, true)] {
                let wanted = Wanted {
                    at_most_draw,
                    at_least_draw,
                };
                let b = from_search.probe(&pos, wanted);
                assert_eq!(b, from_men.bound(&built, wanted), "{fen} {wanted:?}");
                claims += b.is_some() as u32;
            }
        }
        assert!(claims >= 3, "the blocked positions must be claimed");
        // A position with a piece, or with an en-passant capture pending, is not for the detector.
        for fen in [
            "8/4k3/8/p1p1p1p1/P1P1P1P1/8/4K3/7N w - - 0 1",
            "8/3k4/8/p1p1pPp1/P1P1P3/8/4K3/8 w - e6 0 1",
        ] {
            let pos = Position::from_fen(fen).unwrap();
            assert_eq!(from_search.probe(&pos, Wanted::BOTH), None, "{fen}");
        }
    }

    #[test]
    fn attacker_to_move_may_not_take_the_last_free_square() {
        // Black's Ka8: a7 and b7 covered by b6 and c6, b8 free; c6-c7 would cover b8.
        let open = Verdict {
            attacker_king: u64::MAX,
            defender_king: u64::MAX,
        };
        let btm = PawnEnding::of_men(&men_from_fen("k7/8/1PP5/8/8/8/8/4K3 b")).unwrap();
        assert!(kings_hold(&open, &btm, Color::White));
        let wtm = PawnEnding::of_men(&men_from_fen("k7/8/1PP5/8/8/8/8/4K3 w")).unwrap();
        assert!(!kings_hold(&open, &wtm, Color::White));
        // With White's c-pawn unable to move (c7 occupied by a Black pawn) b8 survives.
        let blocked = PawnEnding::of_men(&men_from_fen("k7/2p5/1PP5/8/8/8/8/4K3 w")).unwrap();
        assert!(kings_hold(&open, &blocked, Color::White));
    }

    #[test]
    fn table_agrees_with_uncached_detector_and_counts() {
        let mut table = BlockageTable::new(10);
        let fens = [
            "8/4k3/8/p1p1p1p1/P1P1P1P1/8/4K3/8 w",
            "8/4k3/8/p1p1p1p1/P1P1P1P1/8/3K4/8 b",
            "8/4K3/8/p1p1p1p1/P1P1P1P1/8/4k3/8 w",
            "8/k7/3p4/p2P1p2/P2P1P2/8/8/K7 w",
        ];
        for fen in fens {
            let men = men_from_fen(fen);
            for c in Color::BOTH {
                assert_eq!(table.cannot_win(&men, c), cannot_win(&men, c), "{fen}");
            }
        }
        // Six of the eight questions reach the hash (Fine #70's marks cannot hold a fence for
        // either side), all of one pawn structure: one analysis per attacker.
        let s = table.stats();
        assert_eq!(s.hits + s.misses, 6);
        assert_eq!(s.misses, 2);
        // `bound` is the two answers combined, from the side to move's point of view, and each
        // answer that claims something is counted once.
        assert_eq!(table.take_claims(), 0, "`cannot_win` is not a search claim");
        let mut claims = 0;
        for fen in fens {
            let men = men_from_fen(fen);
            let us = cannot_win(&men, men.side_to_move);
            let them = cannot_win(&men, !men.side_to_move);
            let expected = match (us, them) {
                (true, true) => Some(Bound::Exact(Outcome::Draw)),
                (true, false) => Some(Bound::AtMostDraw),
                (false, true) => Some(Bound::AtLeastDraw),
                (false, false) => None,
            };
            let bound = PawnEnding::of_men(&men).and_then(|e| table.bound(&e, Wanted::BOTH));
            assert_eq!(bound, expected, "{fen}");
            claims += expected.is_some() as u64;
        }
        assert!(claims > 0);
        assert_eq!(table.take_claims(), claims);
        assert_eq!(table.take_claims(), 0);
        table.clear();
        assert_eq!(table.stats(), ProbeStats::default());
    }
}
