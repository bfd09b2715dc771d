//! Nalimov's index scheme (Nalimov, Haworth, Heinz 2001, Section 3): position <-> index for each
//! endgame and side to move. 462/1806 king placements (3.2), unblockable checks (3.1), n-space
//! sub-ranges (3.2-3.4), the en-passant zone (3.5) and C_L trimming, as fixed by
//! `shared/notes/nalimov-index-rules.md` so that every published size and broken count is matched.
//!
//! Vocabulary: "stm" = side to move, "sntm" = side not to move. White is always the side named
//! first in the canonical endgame name. A *group* is the set of like men of one colour and type;
//! its coordinate is their combined number (colex rank of their per-man numbers).

use super::material::{Material, NAME_ORDER};
use crate::chess::attacks::{
    bishop_attacks, king_attacks, knight_attacks, pawn_attacks, rook_attacks,
};
use crate::chess::{Bitboard, Color, PieceType, Square};
use once_cell::sync::Lazy;
use rayon::prelude::*;

/// A position as the tables see it: men by colour and type, side to move, and the en-passant
/// target square when an en-passant capture is possible (else `None`).
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub struct TbPosition {
    pub pieces: [[Bitboard; 6]; 2],
    pub stm: Color,
    pub ep: Option<Square>,
}

/// One half of a table: the positions with White (the side named first) or Black to move.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub enum Half {
    Wtm = 0,
    Btm = 1,
}

impl Half {
    pub const BOTH: [Half; 2] = [Half::Wtm, Half::Btm];

    pub fn stm(self) -> Color {
        match self {
            Half::Wtm => Color::White,
            Half::Btm => Color::Black,
        }
    }

    pub fn of(stm: Color) -> Half {
        match stm {
            Color::White => Half::Wtm,
            Color::Black => Half::Btm,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Half::Wtm => "wtm",
            Half::Btm => "btm",
        }
    }
}

// ------------------------------------------------------------------------------------------
// Board geometry on bitboards (the symmetries of Section 2.1).

const RANK_1: u64 = 0xFF;
const RANK_8: u64 = 0xFF << 56;
const PAWN_RANKS: u64 = !(RANK_1 | RANK_8);

#[inline(always)]
fn mirror_files(x: u64) -> u64 {
    x.reverse_bits().swap_bytes()
}

#[inline(always)]
fn flip_ranks(x: u64) -> u64 {
    x.swap_bytes()
}

/// Reflection in the a1-h8 diagonal (the classic three delta swaps).
#[inline(always)]
fn transpose(mut x: u64) -> u64 {
    let k1 = 0x5500_5500_5500_5500u64;
    let k2 = 0x3333_0000_3333_0000u64;
    let k4 = 0x0f0f_0f0f_0000_0000u64;
    let mut t = k4 & (x ^ (x << 28));
    x ^= t ^ (t >> 28);
    t = k2 & (x ^ (x << 14));
    x ^= t ^ (t >> 14);
    t = k1 & (x ^ (x << 7));
    x ^= t ^ (t >> 7);
    x
}

/// A board symmetry: mirror a<->h, then mirror 1<->8, then transpose, each if set.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct Symmetry {
    pub mirror_files: bool,
    pub mirror_ranks: bool,
    pub transpose: bool,
}

impl Symmetry {
    #[inline(always)]
    pub fn square(self, mut s: Square) -> Square {
        if self.mirror_files {
            s = s.flip_file();
        }
        if self.mirror_ranks {
            s = s.flip_rank();
        }
        if self.transpose {
            s = s.transpose();
        }
        s
    }

    #[inline(always)]
    pub fn bitboard(self, b: Bitboard) -> Bitboard {
        let mut x = b.0;
        if self.mirror_files {
            x = mirror_files(x);
        }
        if self.mirror_ranks {
            x = flip_ranks(x);
        }
        if self.transpose {
            x = transpose(x);
        }
        Bitboard(x)
    }

    /// All eight symmetries of the square (pawnless endgames) or the two that keep pawns' files
    /// order (endgames with pawns), for tests and callers that enumerate symmetric images.
    pub fn group(pawns: bool) -> Vec<Symmetry> {
        let mut out = Vec::new();
        for i in 0..8u8 {
            let s = Symmetry {
                mirror_files: i & 1 != 0,
                mirror_ranks: i & 2 != 0,
                transpose: i & 4 != 0,
            };
            if !pawns || (!s.mirror_ranks && !s.transpose) {
                out.push(s);
            }
        }
        out
    }
}

impl TbPosition {
    /// An empty board with only the side to move set; add men with `put`.
    pub fn empty(stm: Color) -> TbPosition {
        TbPosition {
            pieces: [[Bitboard::EMPTY; 6]; 2],
            stm,
            ep: None,
        }
    }

    pub fn put(&mut self, color: Color, kind: PieceType, sq: Square) {
        self.pieces[color.index()][kind.index()].set(sq);
    }

    #[inline(always)]
    pub fn side(&self, color: Color) -> Bitboard {
        let p = &self.pieces[color.index()];
        p[0] | p[1] | p[2] | p[3] | p[4] | p[5]
    }

    #[inline(always)]
    pub fn occupied(&self) -> Bitboard {
        self.side(Color::White) | self.side(Color::Black)
    }

    #[inline(always)]
    pub fn king(&self, color: Color) -> Square {
        self.pieces[color.index()][PieceType::King.index()].lsb()
    }

    /// The material on the board (kings are not counted; a missing king is not detected here).
    pub fn material(&self) -> Material {
        let mut c = [[0u8; 5]; 2];
        for color in Color::BOTH {
            for (t, n) in c[color.index()].iter_mut().enumerate() {
                *n = self.pieces[color.index()][t].count() as u8;
            }
        }
        Material::from_counts(c[0], c[1])
    }

    /// The same position with colours exchanged and the board turned 1<->8.
    #[inline(always)]
    pub fn color_flipped(&self) -> TbPosition {
        let mut p = TbPosition::empty(!self.stm);
        for c in 0..2 {
            for t in 0..6 {
                p.pieces[1 - c][t] = self.pieces[c][t].flip_rank();
            }
        }
        p.ep = self.ep.map(Square::flip_rank);
        p
    }

    /// The image of the position under a board symmetry.
    #[inline(always)]
    pub fn transformed(&self, sym: Symmetry) -> TbPosition {
        let mut p = *self;
        for c in 0..2 {
            for t in 0..6 {
                p.pieces[c][t] = sym.bitboard(self.pieces[c][t]);
            }
        }
        p.ep = self.ep.map(|s| sym.square(s));
        p
    }

    /// Is `sq` attacked by a man of side `by`? Sliders are blocked by every man.
    #[inline(always)]
    pub fn attacked_by(&self, sq: Square, by: Color) -> bool {
        let p = &self.pieces[by.index()];
        let queens = p[PieceType::Queen.index()];
        let diagonal = p[PieceType::Bishop.index()] | queens;
        let straight = p[PieceType::Rook.index()] | queens;
        if (knight_attacks(sq) & p[PieceType::Knight.index()]).any()
            || (king_attacks(sq) & p[PieceType::King.index()]).any()
            || (pawn_attacks(!by, sq) & p[PieceType::Pawn.index()]).any()
        {
            return true;
        }
        // Sliders only when there are some: the magic lookups are the costly part.
        let occ = self.occupied();
        (diagonal.any() && (bishop_attacks(sq, occ) & diagonal).any())
            || (straight.any() && (rook_attacks(sq, occ) & straight).any())
    }

    /// Legality as the index notes (section 5) define it: one king each, men on distinct squares,
    /// kings not adjacent, pawns on ranks 2-7, the side not to move not in check; with `ep` set,
    /// the double-stepped pawn in place, the squares it crossed empty and a capturer beside it.
    /// No retrograde analysis beyond that.
    pub fn is_legal(&self) -> bool {
        let mut total = 0;
        let mut union = Bitboard::EMPTY;
        for c in 0..2 {
            for t in 0..6 {
                total += self.pieces[c][t].count();
                union |= self.pieces[c][t];
            }
        }
        let wk = self.pieces[0][PieceType::King.index()];
        let bk = self.pieces[1][PieceType::King.index()];
        if wk.count() != 1 || bk.count() != 1 || union.count() != total {
            return false;
        }
        let pawns = self.pieces[0][0] | self.pieces[1][0];
        if pawns.0 & !PAWN_RANKS != 0 {
            return false;
        }
        if (king_attacks(wk.lsb()) & bk).any() {
            return false;
        }
        if self.attacked_by(self.king(!self.stm), self.stm) {
            return false;
        }
        match self.ep {
            None => true,
            Some(ep) => ep_squares(self, ep).is_some_and(|e| e.capturers != 0),
        }
    }
}

/// The squares of an en-passant situation: the target square, the pawn that just double-stepped,
/// the square it came from and the stm pawns that could capture it.
#[derive(Copy, Clone, Debug)]
struct EpSquares {
    ep: Square,
    pushed: Square,
    origin: Square,
    capturers: u64,
}

/// Checks the shape of an en-passant situation (target on the right rank, pushed pawn present,
/// the crossed squares empty) and returns its squares, or None if it cannot be one.
#[inline(always)]
fn ep_squares(pos: &TbPosition, ep: Square) -> Option<EpSquares> {
    let stm = pos.stm;
    let (ep_rank, pushed, origin) = match stm {
        Color::White => (5, ep.0.wrapping_sub(8), ep.0 + 8),
        Color::Black => (2, ep.0 + 8, ep.0.wrapping_sub(8)),
    };
    if ep.rank() != ep_rank {
        return None;
    }
    let occ = pos.occupied();
    if !pos.pieces[(!stm).index()][0].contains(Square(pushed))
        || occ.contains(ep)
        || occ.contains(Square(origin))
    {
        return None;
    }
    let capturers = (pawn_attacks(!stm, ep) & pos.pieces[stm.index()][0]).0;
    Some(EpSquares {
        ep,
        pushed: Square(pushed),
        origin: Square(origin),
        capturers,
    })
}

// ------------------------------------------------------------------------------------------
// Shared lookup tables: binomials, the per-(man type, sntm king) numbering of available squares
// (Section 3.1, Tables 4-5), and the king placements (Section 2.1, Table 2 rows 3-9).

const MAX_GROUPS: usize = 6;

/// Numbering types for rule A: Q, R, B, N, white pawn, black pawn.
const ET_WHITE_PAWN: usize = 4;
const ET_BLACK_PAWN: usize = 5;

/// C(n, k) for n <= 64, k <= 7.
static BINOM: [[u64; 8]; 65] = {
    let mut b = [[0u64; 8]; 65];
    let mut n = 0;
    while n < 65 {
        b[n][0] = 1;
        let mut k = 1;
        while k < 8 {
            if n > 0 {
                b[n][k] = b[n - 1][k - 1] + b[n - 1][k];
            }
            k += 1;
        }
        n += 1;
    }
    b
};

/// Colex unranking of pairs below 64 by table: entry r holds (c0, c1), packed c0 | c1 << 8.
static PAIRS: [u16; 2016] = {
    let mut t = [0u16; 2016];
    let mut c1 = 1;
    while c1 < 64 {
        let mut c0 = 0;
        while c0 < c1 {
            t[c0 + c1 * (c1 - 1) / 2] = (c0 | (c1 << 8)) as u16;
            c0 += 1;
        }
        c1 += 1;
    }
    t
};

struct Tables {
    /// Squares open to a stm man of each numbering type, by sntm king square (kings' squares and
    /// unblockable-check squares removed; pawns also kept to ranks 2-7). The stm king is removed
    /// per block.
    avail: [[u64; 64]; 6],
    /// Number of each square in `avail` (ascending a1..h8), 255 if not available.
    number: [[[u8; 64]; 64]; 6],
    /// Inverse of `number`.
    square: [[[u8; 64]; 64]; 6],
    kk_pawnless: KingPlacements,
    kk_pawns: KingPlacements,
}

struct KingPlacements {
    /// Block number by (stm king, sntm king), u16::MAX if not a placement.
    number: [[u16; 64]; 64],
    /// (stm king, sntm king) by block number, ascending stm king then sntm king.
    list: Vec<(Square, Square)>,
}

impl KingPlacements {
    fn new(pawns: bool) -> KingPlacements {
        let mut number = [[u16::MAX; 64]; 64];
        let mut list = Vec::new();
        for ks in Square::all() {
            let allowed = if pawns {
                ks.file() < 4
            } else {
                ks.file() < 4 && ks.rank() <= ks.file()
            };
            if !allowed {
                continue;
            }
            for kn in Square::all() {
                if kn == ks || king_attacks(ks).contains(kn) {
                    continue;
                }
                if !pawns && ks.file() == ks.rank() && kn.file() < kn.rank() {
                    continue;
                }
                number[ks.index()][kn.index()] = list.len() as u16;
                list.push((ks, kn));
            }
        }
        KingPlacements { number, list }
    }
}

static TABLES: Lazy<Box<Tables>> = Lazy::new(|| {
    let mut avail = [[0u64; 64]; 6];
    let mut number = [[[u8::MAX; 64]; 64]; 6];
    let mut square = [[[u8::MAX; 64]; 64]; 6];
    for kn in Square::all() {
        // Squares from which a man of each type checks the king on kn with no square between.
        let checks = [
            king_attacks(kn).0,
            rook_attacks(kn, Bitboard::ALL).0,
            bishop_attacks(kn, Bitboard::ALL).0,
            knight_attacks(kn).0,
            pawn_attacks(Color::Black, kn).0, // a white pawn there attacks kn
            pawn_attacks(Color::White, kn).0,
        ];
        for et in 0..6 {
            let mut a = !checks[et] & !(1u64 << kn.0);
            if et >= ET_WHITE_PAWN {
                a &= PAWN_RANKS;
            }
            avail[et][kn.index()] = a;
            for (i, s) in Bitboard(a).enumerate() {
                number[et][kn.index()][s.index()] = i as u8;
                square[et][kn.index()][i] = s.0;
            }
        }
    }
    Box::new(Tables {
        avail,
        number,
        square,
        kk_pawnless: KingPlacements::new(false),
        kk_pawns: KingPlacements::new(true),
    })
});

#[inline(always)]
fn binom(n: u32, k: u32) -> u64 {
    BINOM[n as usize][k as usize]
}

/// Colex rank of sorted distinct numbers c[0] < c[1] < ...: sum of C(c[i], i + 1) (notes, rule D).
#[inline(always)]
fn colex_rank(c: &[u8]) -> u64 {
    let mut r = 0;
    for (i, &x) in c.iter().enumerate() {
        r += binom(x as u32, i as u32 + 1);
    }
    r
}

/// Inverse of `colex_rank` for k numbers below 64.
#[inline(always)]
fn colex_unrank(mut r: u64, k: usize, out: &mut [u8; 8]) {
    if k == 2 {
        let p = PAIRS[r as usize];
        out[0] = p as u8;
        out[1] = (p >> 8) as u8;
        return;
    }
    for i in (1..=k).rev() {
        // Largest c with C(c, i) <= r; c >= i - 1 since C(i - 1, i) = 0.
        let (mut lo, mut hi) = (i as u32 - 1, 63u32);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if binom(mid, i as u32) <= r {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        out[i - 1] = lo as u8;
        r -= binom(lo, i as u32);
    }
}

/// Number of `s` among the squares not in `excl` (s itself not in `excl`).
#[inline(always)]
fn x_number(s: Square, excl: u64) -> u8 {
    s.0 - (excl & ((1u64 << s.0) - 1)).count_ones() as u8
}

/// The `x`-th square (from 0, ascending) not in `excl`.
#[inline(always)]
fn x_square(x: u8, mut excl: u64) -> Square {
    let mut s = x;
    while excl != 0 {
        let b = excl.trailing_zeros() as u8;
        if b > s {
            break;
        }
        s += 1;
        excl &= excl - 1;
    }
    Square(s)
}

// ------------------------------------------------------------------------------------------
// Layouts: which coordinates a half has, how each is numbered, and their significance.

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Numbering {
    /// Rule A (stm men): number among `avail[etype][sntm king]` minus the stm king.
    Unblockable { etype: u8 },
    /// Rule B1 (sntm pawns when the stm has only its king): ranks 2-7 minus both kings.
    PawnsOffKings,
    /// Rule B2 (other sntm pawns) and the e.p. zone's extra pawn: ranks 2-7 minus the squares
    /// of the `excl` groups (and the e.p. squares in that zone). Kings are not removed.
    Pawns { range: u8 },
    /// Rule C (sntm pieces): any square but the kings' and those of the `excl` groups
    /// (and the e.p. squares in that zone).
    Free { range: u8 },
}

#[derive(Copy, Clone, Debug)]
struct Group {
    color: Color,
    kind: PieceType,
    count: u8,
    numbering: Numbering,
    /// Groups (by placement position) whose squares this group's numbering skips.
    excl: u8,
    /// Coordinate taken with the board turned upside down (notes, section 1, btm frame flip).
    flipped: bool,
}

const NO_GROUP: Group = Group {
    color: Color::White,
    kind: PieceType::Pawn,
    count: 0,
    numbering: Numbering::Free { range: 0 },
    excl: 0,
    flipped: false,
};

/// The coordinates of one zone, in placement order (the order squares are resolved, each
/// group skipping the squares of groups placed before it), plus their significance order.
#[derive(Copy, Clone, Debug)]
struct Layout {
    groups: [Group; MAX_GROUPS],
    n: usize,
    /// Placement positions, most significant first.
    significance: [u8; MAX_GROUPS],
    /// KK number taken in the upside-down frame.
    flip_kk: bool,
}

/// Sort key of a stm group: larger groups first, then Q R B N P (notes, section 8).
fn name_rank(kind: PieceType) -> usize {
    NAME_ORDER.iter().position(|&k| k == kind).unwrap_or(5)
}

fn etype(kind: PieceType, color_in_frame: Color) -> u8 {
    match kind {
        PieceType::Queen => 0,
        PieceType::Rook => 1,
        PieceType::Bishop => 2,
        PieceType::Knight => 3,
        PieceType::Pawn if color_in_frame == Color::White => ET_WHITE_PAWN as u8,
        _ => ET_BLACK_PAWN as u8,
    }
}

impl Layout {
    fn push(&mut self, g: Group) -> usize {
        self.groups[self.n] = g;
        self.n += 1;
        self.n - 1
    }

    fn men_in(&self, mask: u8) -> u8 {
        (0..self.n)
            .filter(|i| mask & (1 << i) != 0)
            .map(|i| self.groups[i].count)
            .sum()
    }

    /// The main-zone layout of one half (notes, sections 2 and 8).
    fn main(m: &Material, half: Half) -> Layout {
        let stm = half.stm();
        let sntm = !stm;
        let mut l = Layout {
            groups: [NO_GROUP; MAX_GROUPS],
            n: 0,
            significance: [0; MAX_GROUPS],
            flip_kk: false,
        };
        let mut sig: Vec<usize> = Vec::new();

        let mut stm_types: Vec<PieceType> = NAME_ORDER
            .iter()
            .copied()
            .filter(|&k| m.count(stm, k) > 0)
            .collect();
        stm_types.sort_by_key(|&k| (std::cmp::Reverse(m.count(stm, k)), name_rank(k)));
        let sntm_pieces: Vec<PieceType> = NAME_ORDER[..4]
            .iter()
            .copied()
            .filter(|&k| m.count(sntm, k) > 0)
            .collect();
        let sntm_pawns = m.count(sntm, PieceType::Pawn);

        // Btm: if the first coordinate after the kings is a pawn set, it and the KK number are
        // taken upside down.
        let first_is_pawns = if stm_types.is_empty() {
            sntm_pawns > 0
        } else {
            stm_types[0] == PieceType::Pawn
        };
        let flip = half == Half::Btm && first_is_pawns;
        l.flip_kk = flip;

        let mut placed_mask: u8 = 0;
        let mut stm_pawn_mask: u8 = 0;
        let mut pawn_group: Option<usize> = None;
        if stm_types.is_empty() {
            // Rule B1: the sntm pawns come first, numbered off the kings.
            if sntm_pawns > 0 {
                let i = l.push(Group {
                    color: sntm,
                    kind: PieceType::Pawn,
                    count: sntm_pawns,
                    numbering: Numbering::PawnsOffKings,
                    excl: 0,
                    flipped: flip,
                });
                sig.push(i);
                placed_mask |= 1 << i;
            }
        } else {
            for (j, &k) in stm_types.iter().enumerate() {
                let fl = flip && j == 0;
                let frame_color = if fl { !stm } else { stm };
                let i = l.push(Group {
                    color: stm,
                    kind: k,
                    count: m.count(stm, k),
                    numbering: Numbering::Unblockable {
                        etype: etype(k, frame_color),
                    },
                    excl: 0,
                    flipped: fl,
                });
                sig.push(i);
                placed_mask |= 1 << i;
                if k == PieceType::Pawn {
                    stm_pawn_mask |= 1 << i;
                }
            }
            // Rule B2: sntm pawns skip only the stm pawns; placed before the sntm pieces but
            // least significant.
            if sntm_pawns > 0 {
                let range = 48 - l.men_in(stm_pawn_mask);
                let i = l.push(Group {
                    color: sntm,
                    kind: PieceType::Pawn,
                    count: sntm_pawns,
                    numbering: Numbering::Pawns { range },
                    excl: stm_pawn_mask,
                    flipped: false,
                });
                pawn_group = Some(i);
                placed_mask |= 1 << i;
            }
        }
        // Rule C: sntm pieces, single ones placed before like sets; significance Q R B N.
        let mut order = sntm_pieces.clone();
        order.sort_by_key(|&k| (m.count(sntm, k) > 1, name_rank(k)));
        let mut piece_pos = [usize::MAX; 6];
        for &k in &order {
            let range = 62 - l.men_in(placed_mask);
            let i = l.push(Group {
                color: sntm,
                kind: k,
                count: m.count(sntm, k),
                numbering: Numbering::Free { range },
                excl: placed_mask,
                flipped: false,
            });
            placed_mask |= 1 << i;
            piece_pos[k.index()] = i;
        }
        for &k in &sntm_pieces {
            sig.push(piece_pos[k.index()]);
        }
        if let Some(i) = pawn_group {
            sig.push(i);
        }
        for (j, &i) in sig.iter().enumerate() {
            l.significance[j] = i as u8;
        }
        debug_assert_eq!(sig.len(), l.n);
        l
    }

    /// The e.p.-zone layout: the men other than the kings and the two e.p. pawns, most
    /// significant first (placement order = significance order), before the 14-valued code.
    fn en_passant(m: &Material, half: Half) -> Layout {
        let stm = half.stm();
        let sntm = !stm;
        let mut l = Layout {
            groups: [NO_GROUP; MAX_GROUPS],
            n: 0,
            significance: [0; MAX_GROUPS],
            flip_kk: false,
        };
        let mut placed_mask = 0u8;
        let mut men = 0u8;
        let mut add = |l: &mut Layout, color: Color, kind: PieceType, count: u8| {
            if count == 0 {
                return;
            }
            let numbering = if kind == PieceType::Pawn {
                Numbering::Pawns {
                    range: 48 - 4 - men,
                }
            } else if color == stm {
                Numbering::Unblockable {
                    etype: etype(kind, color),
                }
            } else {
                Numbering::Free {
                    range: 64 - 6 - men,
                }
            };
            let excl = if color == stm && kind != PieceType::Pawn {
                0
            } else {
                placed_mask
            };
            let i = l.push(Group {
                color,
                kind,
                count,
                numbering,
                excl,
                flipped: false,
            });
            placed_mask |= 1 << i;
            men += count;
        };
        for color in [stm, sntm] {
            for kind in NAME_ORDER {
                let mut c = m.count(color, kind);
                if kind == PieceType::Pawn {
                    c -= 1; // the capturer (stm) or the pushed pawn (sntm) is in the code
                }
                add(&mut l, color, kind, c);
            }
        }
        for i in 0..l.n {
            l.significance[i] = i as u8;
        }
        l
    }
}

// ------------------------------------------------------------------------------------------
// One half: the n-space sub-ranges per king placement, forward and inverse.

/// Number of e.p. codes: the file of the capturing pawn and its direction (notes, section 4).
const EP_CODES: u64 = 14;

struct HalfIndex {
    half: Half,
    pawns: bool,
    main: Layout,
    ep: Option<Layout>,
    /// Start of each KK block of the main zone; one more entry holding the zone's size.
    kk_base: Vec<u64>,
    /// Start of each KK block of the e.p. zone, relative to the zone.
    ep_base: Vec<u64>,
    main_size: u64,
    untrimmed: u64,
    size: u64,
}

/// Squares of each group in placement order, as found in or made for a position.
type GroupSquares = [u64; MAX_GROUPS];

impl HalfIndex {
    fn new(m: &Material, half: Half) -> HalfIndex {
        let pawns = m.has_pawns();
        let main = Layout::main(m, half);
        let ep = m.has_en_passant().then(|| Layout::en_passant(m, half));
        let kks = kk_placements(pawns);
        let mut h = HalfIndex {
            half,
            pawns,
            main,
            ep,
            kk_base: Vec::with_capacity(kks.list.len() + 1),
            ep_base: Vec::new(),
            main_size: 0,
            untrimmed: 0,
            size: 0,
        };
        let mut total = 0u64;
        for &(ks, kn) in &kks.list {
            h.kk_base.push(total);
            let mut d = [0u64; MAX_GROUPS];
            total += h.ranges(&h.main, ks, kn, &mut d);
        }
        h.kk_base.push(total);
        h.main_size = total;
        if let Some(epl) = h.ep {
            let mut t = 0u64;
            for &(ks, kn) in &kks.list {
                h.ep_base.push(t);
                let mut d = [0u64; MAX_GROUPS];
                t += h.ranges(&epl, ks, kn, &mut d) * EP_CODES;
            }
            h.ep_base.push(t);
            total += t;
        }
        h.untrimmed = total;
        let widest = (0..kks.list.len())
            .map(|i| h.kk_base[i + 1] - h.kk_base[i])
            .chain((0..h.ep_base.len().saturating_sub(1)).map(|i| h.ep_base[i + 1] - h.ep_base[i]))
            .max()
            .unwrap_or(0);
        assert!(widest < 1 << 32, "a KK block of {m} exceeds 2^32 entries");
        // C_L: drop the broken entries at the very end of the range (notes, section 6).
        h.size = total;
        while h.size > 0 && h.decode(h.size - 1).is_none() {
            h.size -= 1;
        }
        h
    }

    /// Ranges of each group (placement order) in the block of kings (ks, kn) given in the
    /// layout's KK frame; returns their product.
    #[inline(always)]
    fn ranges(&self, l: &Layout, ks: Square, kn: Square, d: &mut [u64; MAX_GROUPS]) -> u64 {
        let t = &**TABLES;
        let mut prod = 1u64;
        for (g, di) in l.groups[..l.n].iter().zip(d.iter_mut()) {
            // The kings as seen in this group's frame (a flipped layout may hold groups taken
            // the right way up).
            let (gks, gkn) = if g.flipped == l.flip_kk {
                (ks, kn)
            } else {
                (ks.flip_rank(), kn.flip_rank())
            };
            let q = match g.numbering {
                Numbering::Unblockable { etype } => {
                    let a = t.avail[etype as usize][gkn.index()];
                    a.count_ones() - ((a >> gks.0) & 1) as u32
                }
                Numbering::PawnsOffKings => {
                    let kings = (1u64 << gks.0) | (1u64 << gkn.0);
                    48 - (kings & PAWN_RANKS).count_ones()
                }
                Numbering::Pawns { range } | Numbering::Free { range } => range as u32,
            };
            *di = binom(q, g.count as u32);
            prod *= *di;
        }
        prod
    }

    /// Coordinate of one group whose squares (in the group's frame) are `sq`, with kings
    /// `ks`, `kn` in that frame and `excl` the squares it must skip (same frame).
    #[inline(always)]
    fn coordinate(g: &Group, sq: u64, ks: Square, kn: Square, excl: u64) -> Option<u64> {
        let t = &**TABLES;
        let mut nums = [0u8; 8];
        let mut k = 0;
        for s in Bitboard(sq) {
            let x = match g.numbering {
                Numbering::Unblockable { etype } => {
                    let n = t.number[etype as usize][kn.index()][s.index()];
                    if n == u8::MAX {
                        return None;
                    }
                    let a = t.avail[etype as usize][kn.index()];
                    n - (((a >> ks.0) & 1) as u8 & (ks.0 < s.0) as u8)
                }
                Numbering::PawnsOffKings => x_number(s, RANK_1 | (1u64 << ks.0) | (1u64 << kn.0)),
                Numbering::Pawns { .. } => x_number(s, RANK_1 | excl),
                Numbering::Free { .. } => x_number(s, (1u64 << ks.0) | (1u64 << kn.0) | excl),
            };
            nums[k] = x;
            k += 1;
        }
        Some(if k == 1 {
            nums[0] as u64
        } else {
            colex_rank(&nums[..k])
        })
    }

    /// Inverse of `coordinate`: the squares (group frame) of coordinate `r`.
    #[inline(always)]
    fn squares(g: &Group, r: u64, ks: Square, kn: Square, excl: u64) -> u64 {
        let t = &**TABLES;
        let mut nums = [0u8; 8];
        if g.count == 1 {
            nums[0] = r as u8;
        } else {
            colex_unrank(r, g.count as usize, &mut nums);
        }
        let mut out = 0u64;
        for &x in &nums[..g.count as usize] {
            let s = match g.numbering {
                Numbering::Unblockable { etype } => {
                    let e = etype as usize;
                    let kn_num = t.number[e][kn.index()][ks.index()];
                    let x = if kn_num != u8::MAX && x >= kn_num {
                        x + 1
                    } else {
                        x
                    };
                    Square(t.square[e][kn.index()][x as usize])
                }
                Numbering::PawnsOffKings => x_square(x, RANK_1 | (1u64 << ks.0) | (1u64 << kn.0)),
                Numbering::Pawns { .. } => x_square(x, RANK_1 | excl),
                Numbering::Free { .. } => x_square(x, (1u64 << ks.0) | (1u64 << kn.0) | excl),
            };
            out |= 1u64 << s.0;
        }
        out
    }

    /// Index of a legal-shaped position already in canonical colours with this half to move,
    /// without an e.p. capture. Applies the board symmetry.
    #[inline(always)]
    fn index_main(&self, pos: &TbPosition) -> Option<u64> {
        let stm = self.half.stm();
        let sym = normalising_symmetry(self.pawns, pos.king(stm), pos.king(!stm));
        let ks = sym.square(pos.king(stm));
        let kn = sym.square(pos.king(!stm));
        let l = &self.main;
        let (fks, fkn) = if l.flip_kk {
            (ks.flip_rank(), kn.flip_rank())
        } else {
            (ks, kn)
        };
        let kk = kk_placements(self.pawns).number[fks.index()][fkn.index()];
        if kk == u16::MAX {
            return None;
        }
        let mut sq: GroupSquares = [0; MAX_GROUPS];
        let mut coord = [0u64; MAX_GROUPS];
        for i in 0..l.n {
            let g = &l.groups[i];
            let own = sym.bitboard(pos.pieces[g.color.index()][g.kind.index()]).0;
            sq[i] = own;
            let excl = excl_squares(g.excl, &sq);
            coord[i] = if g.flipped {
                Self::coordinate(g, flip_ranks(own), fks, fkn, flip_ranks(excl))?
            } else {
                Self::coordinate(g, own, ks, kn, excl)?
            };
        }
        let mut d = [0u64; MAX_GROUPS];
        self.ranges(l, fks, fkn, &mut d);
        let mut x = 0u64;
        for &i in &l.significance[..l.n] {
            let i = i as usize;
            debug_assert!(coord[i] < d[i]);
            x = x * d[i] + coord[i];
        }
        Some(self.kk_base[kk as usize] + x)
    }

    /// Index of a position with an e.p. capture (canonical colours, this half to move).
    #[inline(always)]
    fn index_ep(&self, pos: &TbPosition, e: EpSquares) -> Option<u64> {
        let l = self.ep.as_ref()?;
        let stm = self.half.stm();
        let sym = normalising_symmetry(true, pos.king(stm), pos.king(!stm));
        let ks = sym.square(pos.king(stm));
        let kn = sym.square(pos.king(!stm));
        let kk = kk_pawns_number(ks, kn)?;
        let ep = sym.square(e.ep);
        // The lower-numbered capturer (after the symmetry) stands for the position.
        let capturer = sym.bitboard(Bitboard(e.capturers)).lsb();
        let pushed = sym.square(e.pushed);
        let origin = sym.square(e.origin);
        let code = ep_code(stm, capturer, ep)?;
        let specials =
            (1u64 << capturer.0) | (1u64 << pushed.0) | (1u64 << ep.0) | (1u64 << origin.0);
        let mut sq: GroupSquares = [0; MAX_GROUPS];
        let mut coord = [0u64; MAX_GROUPS];
        for i in 0..l.n {
            let g = &l.groups[i];
            let mut own = sym.bitboard(pos.pieces[g.color.index()][g.kind.index()]).0;
            if g.kind == PieceType::Pawn {
                own &= !((1u64 << capturer.0) | (1u64 << pushed.0));
            }
            sq[i] = own;
            let excl = excl_squares(g.excl, &sq) | specials;
            coord[i] = Self::coordinate(g, own, ks, kn, excl)?;
        }
        let mut d = [0u64; MAX_GROUPS];
        self.ranges(l, ks, kn, &mut d);
        let mut x = 0u64;
        for i in 0..l.n {
            x = x * d[i] + coord[i];
        }
        Some(self.main_size + self.ep_base[kk as usize] + x * EP_CODES + code)
    }

    /// The position of index `idx` (canonical colours, this half to move), or None if the entry
    /// is broken: no legal position has this index.
    #[inline]
    fn decode(&self, idx: u64) -> Option<TbPosition> {
        if idx >= self.untrimmed {
            return None;
        }
        if idx >= self.main_size {
            return self.decode_ep(idx - self.main_size);
        }
        let l = &self.main;
        let kk = find_block(&self.kk_base, idx);
        let (fks, fkn) = kk_placements(self.pawns).list[kk];
        // Blocks hold fewer than 2^32 entries (checked in `new`): 32-bit division is faster.
        let mut off = (idx - self.kk_base[kk]) as u32;
        let mut d = [0u64; MAX_GROUPS];
        self.ranges(l, fks, fkn, &mut d);
        let mut coord = [0u64; MAX_GROUPS];
        for &i in l.significance[..l.n].iter().rev() {
            let i = i as usize;
            let di = d[i] as u32;
            coord[i] = (off % di) as u64;
            off /= di;
        }
        let (ks, kn) = if l.flip_kk {
            (fks.flip_rank(), fkn.flip_rank())
        } else {
            (fks, fkn)
        };
        let stm = self.half.stm();
        let mut pos = TbPosition::empty(stm);
        pos.put(stm, PieceType::King, ks);
        pos.put(!stm, PieceType::King, kn);
        let mut sq: GroupSquares = [0; MAX_GROUPS];
        for i in 0..l.n {
            let g = &l.groups[i];
            let excl = excl_squares(g.excl, &sq);
            let own = if g.flipped {
                flip_ranks(Self::squares(g, coord[i], fks, fkn, flip_ranks(excl)))
            } else {
                Self::squares(g, coord[i], ks, kn, excl)
            };
            sq[i] = own;
            pos.pieces[g.color.index()][g.kind.index()].0 |= own;
        }
        // Kings come from the KK list (apart, on distinct squares) and pawns only from
        // numberings of ranks 2-7, so legality reduces to distinct squares and no check.
        // The main zone's decoding inverts its numbering exactly, so a legal result is the one
        // position with this index (checked by the round-trip tests).
        let total: u32 = l.groups[..l.n].iter().map(|g| g.count as u32).sum::<u32>() + 2;
        if pos.occupied().count() != total || pos.attacked_by(kn, stm) {
            return None;
        }
        debug_assert!(pos.is_legal());
        Some(pos)
    }

    fn decode_ep(&self, entry: u64) -> Option<TbPosition> {
        let l = self.ep.as_ref()?;
        let off = entry;
        let kk = find_block(&self.ep_base, off);
        let (ks, kn) = kk_placements(true).list[kk];
        let mut off = off - self.ep_base[kk];
        let code = off % EP_CODES;
        off /= EP_CODES;
        let mut d = [0u64; MAX_GROUPS];
        self.ranges(l, ks, kn, &mut d);
        let mut coord = [0u64; MAX_GROUPS];
        for i in (0..l.n).rev() {
            coord[i] = off % d[i];
            off /= d[i];
        }
        let stm = self.half.stm();
        let (capturer, ep) = ep_from_code(stm, code);
        let (pushed, origin) = match stm {
            Color::White => (Square(ep.0 - 8), Square(ep.0 + 8)),
            Color::Black => (Square(ep.0 + 8), Square(ep.0 - 8)),
        };
        let mut pos = TbPosition::empty(stm);
        pos.put(stm, PieceType::King, ks);
        pos.put(!stm, PieceType::King, kn);
        pos.put(stm, PieceType::Pawn, capturer);
        pos.put(!stm, PieceType::Pawn, pushed);
        pos.ep = Some(ep);
        let specials =
            (1u64 << capturer.0) | (1u64 << pushed.0) | (1u64 << ep.0) | (1u64 << origin.0);
        let mut sq: GroupSquares = [0; MAX_GROUPS];
        for i in 0..l.n {
            let g = &l.groups[i];
            let excl = excl_squares(g.excl, &sq) | specials;
            let own = Self::squares(g, coord[i], ks, kn, excl);
            sq[i] = own;
            pos.pieces[g.color.index()][g.kind.index()].0 |= own;
        }
        if !pos.is_legal() {
            return None;
        }
        // With two possible capturers only the lower-numbered one's entry is used (notes,
        // section 4): the entry is broken unless the position numbers back to it.
        let e = ep_squares(&pos, ep)?;
        (self.index_ep(&pos, e) == Some(self.main_size + entry)).then_some(pos)
    }
}

#[inline(always)]
fn kk_pawns_number(ks: Square, kn: Square) -> Option<u16> {
    let n = TABLES.kk_pawns.number[ks.index()][kn.index()];
    (n != u16::MAX).then_some(n)
}

/// The block holding `idx`, given block starts `base` (ascending, last entry = total > idx).
/// KK blocks are of similar sizes, so a proportional guess is within a step or two: cheaper
/// than a binary search with its unpredictable branches.
#[inline(always)]
fn find_block(base: &[u64], idx: u64) -> usize {
    let blocks = base.len() - 1;
    let total = base[blocks];
    // idx < 2^48 and blocks < 2^11 for up to 7 men, so the product fits in u64.
    let mut b = (idx * blocks as u64 / total) as usize;
    while base[b] > idx {
        b -= 1;
    }
    while base[b + 1] <= idx {
        b += 1;
    }
    b
}

#[inline(always)]
fn kk_placements(pawns: bool) -> &'static KingPlacements {
    if pawns {
        &TABLES.kk_pawns
    } else {
        &TABLES.kk_pawnless
    }
}

#[inline(always)]
fn excl_squares(mask: u8, sq: &GroupSquares) -> u64 {
    let mut e = 0;
    let mut m = mask;
    while m != 0 {
        let i = m.trailing_zeros() as usize;
        e |= sq[i];
        m &= m - 1;
    }
    e
}

/// The symmetry bringing the stm king into a1-d1-d4 (pawnless, with the sntm king into
/// a1-h1-h8 when the stm king is on the diagonal) or onto files a-d (with pawns).
#[inline(always)]
pub fn normalising_symmetry(pawns: bool, ks: Square, kn: Square) -> Symmetry {
    let mut s = Symmetry {
        mirror_files: ks.file() >= 4,
        ..Symmetry::default()
    };
    if pawns {
        return s;
    }
    s.mirror_ranks = ks.rank() >= 4;
    let (a, b) = (s.square(ks), s.square(kn));
    s.transpose = a.file() < a.rank() || (a.file() == a.rank() && b.file() < b.rank());
    s
}

/// The e.p. code 0..14 of a capture by the pawn on `capturer` to `ep` (notes, section 4).
#[inline(always)]
fn ep_code(stm: Color, capturer: Square, ep: Square) -> Option<u64> {
    let f = capturer.file() as u64;
    let d = ep.0 as i16 - capturer.0 as i16;
    match (stm, d) {
        (Color::White, 7) | (Color::Black, -9) => Some(f - 1),
        (Color::White, 9) | (Color::Black, -7) => Some(f + 7),
        _ => None,
    }
}

/// Inverse of `ep_code`: (capturer, e.p. square).
#[inline(always)]
fn ep_from_code(stm: Color, code: u64) -> (Square, Square) {
    let (file, left_of_ep) = if code < 7 {
        (code as u8 + 1, false)
    } else {
        (code as u8 - 7, true)
    };
    let rank = if stm == Color::White { 4 } else { 3 };
    let capturer = Square::new(file, rank);
    let ep = match (stm, left_of_ep) {
        (Color::White, false) => capturer.offset(7),
        (Color::White, true) => capturer.offset(9),
        (Color::Black, false) => capturer.offset(-9),
        (Color::Black, true) => capturer.offset(-7),
    };
    (capturer, ep)
}

// ------------------------------------------------------------------------------------------
// The public face: both halves of one endgame.

/// The Nalimov index of one endgame, both halves. Build once per endgame (a few milliseconds);
/// `index` and `decode` allocate nothing and take no lock, so they may be called from many
/// threads at once.
pub struct EndgameIndex {
    material: Material,
    /// `halves[Half::Btm]` only for endgames with the same men on both sides.
    halves: [Option<HalfIndex>; 2],
}

impl EndgameIndex {
    /// The index of `material`'s canonical form.
    pub fn new(material: &Material) -> EndgameIndex {
        let (m, _) = material.canonical();
        let wtm = (!m.is_symmetric()).then(|| HalfIndex::new(&m, Half::Wtm));
        let btm = Some(HalfIndex::new(&m, Half::Btm));
        EndgameIndex {
            material: m,
            halves: [wtm, btm],
        }
    }

    pub fn material(&self) -> Material {
        self.material
    }

    /// The halves that are stored: both, or only Btm when both sides have the same men (the
    /// other half is probed by flipping colours).
    pub fn stored_halves(&self) -> &'static [Half] {
        if self.material.is_symmetric() {
            &[Half::Btm]
        } else {
            &Half::BOTH
        }
    }

    fn half(&self, half: Half) -> &HalfIndex {
        match &self.halves[half as usize] {
            Some(h) => h,
            None => self.halves[Half::Btm as usize]
                .as_ref()
                .expect("btm always built"),
        }
    }

    /// Number of entries of a half (after C_L trimming). For a symmetric endgame the Wtm half
    /// has the size of the stored Btm half.
    pub fn size(&self, half: Half) -> u64 {
        self.half(half).size
    }

    /// Size of the main zone and of the e.p. zone before trimming (for reports).
    pub fn zones(&self, half: Half) -> (u64, u64) {
        let h = self.half(half);
        (h.main_size, h.untrimmed - h.main_size)
    }

    /// The stored half and entry of a position. Handles the colour flip (a `KRKQ` position is
    /// looked up in `KQKR`), the board symmetries and the e.p. zone. `pos.ep` is ignored when no
    /// pawn of the side to move stands beside the pawn that double-stepped.
    /// None if the position is not of this material or not indexable (two men on a square,
    /// adjacent kings, a pawn on rank 1 or 8, a bad e.p. square, a stm man giving an
    /// unblockable check). A position whose side not to move is in check may get the index of
    /// a broken entry: callers pass positions reached by legal play.
    #[inline]
    pub fn index(&self, pos: &TbPosition) -> Option<(Half, u64)> {
        let m = pos.material();
        let flip = if m == self.material {
            self.material.is_symmetric() && pos.stm == Color::White
        } else if m == self.material.flipped() {
            true
        } else {
            return None;
        };
        let flipped;
        let p = if flip {
            flipped = pos.color_flipped();
            &flipped
        } else {
            pos
        };
        // Shape checks the numbering relies on.
        let wk = p.pieces[0][PieceType::King.index()];
        let bk = p.pieces[1][PieceType::King.index()];
        if wk.count() != 1 || bk.count() != 1 {
            return None;
        }
        if p.occupied().count() != m.men() as u32 {
            return None;
        }
        if (p.pieces[0][0] | p.pieces[1][0]).0 & !PAWN_RANKS != 0 {
            return None;
        }
        let half = Half::of(p.stm);
        let h = self.half(half);
        if let Some(ep) = p.ep {
            let e = ep_squares(p, ep)?;
            if e.capturers != 0 {
                let i = h.index_ep(p, e)?;
                return (i < h.size).then_some((half, i));
            }
        }
        let i = h.index_main(&TbPosition { ep: None, ..*p })?;
        (i < h.size).then_some((half, i))
    }

    /// `index` of a position known to be legal and of this endgame's material in its own
    /// colours (a move that captures nothing, in the verifier): without the material count and
    /// the shape checks that guard `index` against any position.
    #[inline]
    pub fn index_own(&self, pos: &TbPosition) -> Option<(Half, u64)> {
        debug_assert_eq!(pos.material(), self.material);
        if self.material.is_symmetric() && pos.stm == Color::White {
            return self.index(pos);
        }
        let half = Half::of(pos.stm);
        let h = self.half(half);
        if let Some(ep) = pos.ep {
            let e = ep_squares(pos, ep)?;
            if e.capturers != 0 {
                let i = h.index_ep(pos, e)?;
                return (i < h.size).then_some((half, i));
            }
        }
        let i = h.index_main(&TbPosition { ep: None, ..*pos })?;
        (i < h.size).then_some((half, i))
    }

    /// The position of entry `idx` of `half` (canonical colours; for the Wtm half of a
    /// symmetric endgame, the colour-flipped image of the Btm entry), or None if the entry is
    /// broken: no legal position (in the sense of `TbPosition::is_legal`) has this index.
    #[inline]
    pub fn decode(&self, half: Half, idx: u64) -> Option<TbPosition> {
        let h = self.half(half);
        if idx >= h.size {
            return None;
        }
        let pos = h.decode(idx)?;
        if h.half != half {
            Some(pos.color_flipped())
        } else {
            Some(pos)
        }
    }

    /// Broken entries of a half: entries no legal position maps to. Decodes the whole range on
    /// all threads of rayon's pool.
    pub fn count_broken(&self, half: Half) -> u64 {
        let size = self.size(half);
        const CHUNK: u64 = 1 << 16;
        let chunks = size.div_ceil(CHUNK);
        (0..chunks)
            .into_par_iter()
            .map(|c| {
                let (lo, hi) = (c * CHUNK, ((c + 1) * CHUNK).min(size));
                (lo..hi).filter(|&i| self.decode(half, i).is_none()).count() as u64
            })
            .sum()
    }

    /// Bytes of lookup tables this endgame owns (its KK block offsets). The tables shared by
    /// all endgames are `shared_table_bytes()`.
    pub fn table_bytes(&self) -> usize {
        self.halves
            .iter()
            .flatten()
            .map(|h| {
                (h.kk_base.capacity() + h.ep_base.capacity()) * 8 + std::mem::size_of::<HalfIndex>()
            })
            .sum()
    }
}

/// Bytes of the lookup tables shared by every endgame (numbering of available squares per man
/// type and sntm king, king placements, binomials).
pub fn shared_table_bytes() -> usize {
    let t = &**TABLES;
    std::mem::size_of::<Tables>()
        + (t.kk_pawnless.list.capacity() + t.kk_pawns.list.capacity())
            * std::mem::size_of::<(Square, Square)>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn king_placements_are_462_and_1806() {
        assert_eq!(TABLES.kk_pawnless.list.len(), 462);
        assert_eq!(TABLES.kk_pawns.list.len(), 1806);
        assert_eq!(
            *TABLES.kk_pawnless.list.last().unwrap(),
            (Square(27), Square::H8)
        );
        assert_eq!(
            *TABLES.kk_pawns.list.last().unwrap(),
            (Square::D8, Square::H8)
        );
    }

    #[test]
    fn bitboard_symmetries_match_square_symmetries() {
        for sym in Symmetry::group(false) {
            for s in Square::all() {
                assert_eq!(
                    sym.bitboard(Bitboard::from_square(s)),
                    Bitboard::from_square(sym.square(s))
                );
            }
        }
    }

    #[test]
    fn colex_round_trip() {
        let mut out = [0u8; 8];
        for k in 1..=3usize {
            let total = binom(20, k as u32);
            for r in 0..total {
                colex_unrank(r, k, &mut out);
                assert!(out[..k].windows(2).all(|w| w[0] < w[1]));
                assert!(out[k - 1] < 20);
                assert_eq!(colex_rank(&out[..k]), r);
            }
        }
    }

    #[test]
    fn x_numbering_round_trip() {
        let excl = 0x8100_0000_0042_1801u64;
        for x in 0..(64 - excl.count_ones()) as u8 {
            let s = x_square(x, excl);
            assert_eq!(excl >> s.0 & 1, 0);
            assert_eq!(x_number(s, excl), x);
        }
    }

    #[test]
    fn paper_table_3_and_examples() {
        // Table 3 row bK c2, wK a1: Q 54, R 58, B 58, N 57 (the notes' reading), P 47.
        let t = &**TABLES;
        let (wk, bk) = (Square::A1, Square(10));
        let q = |et: usize| {
            let a = t.avail[et][bk.index()];
            a.count_ones() - ((a >> wk.0) & 1) as u32
        };
        assert_eq!([q(0), q(1), q(2), q(3), q(4)], [54, 58, 58, 57, 47]);
        // Table 5: wQ numbers with bK c2 (wK not yet removed): e1 is 1, h8 is 54.
        assert_eq!(t.number[0][bk.index()][4], 1);
        assert_eq!(t.number[0][bk.index()][63], 54);
    }

    #[test]
    fn ep_codes_round_trip() {
        for stm in Color::BOTH {
            for code in 0..EP_CODES {
                let (c, ep) = ep_from_code(stm, code);
                assert_eq!(ep_code(stm, c, ep), Some(code));
                assert_eq!(c.file().abs_diff(ep.file()), 1);
            }
        }
    }
}
