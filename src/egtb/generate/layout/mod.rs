//! The generator's own working layout of an endgame: a plain mixed-radix number of the men's
//! squares, so that a position's entry costs a few shifts and adds instead of the Nalimov
//! index's symmetry, colex and exclusion arithmetic (Nalimov et al. 2001, Section 3, pay that
//! price for space; the generator wants speed). The tables are written in Nalimov order at the
//! end, one decode and one lookup per entry.
//!
//! Per side to move: White's king normalised into the triangle a1-d1-d4 (pawnless: the eight
//! symmetries; when it stands on the diagonal, Black's king on or below it, and with both kings
//! on it the smaller of the two numbers a position and its reflection get) or onto files a-d
//! (with pawns: mirror a<->h), then Black's king (64),
//! then each group of like men (colour, type) as the colex rank of its set of squares (C(64, k)
//! ranks, pawns C(48, k)), so like men take no duplicate entries. So every position has exactly
//! one entry; entries that are not normal forms (shared squares, the larger twin, ...) are
//! broken. Positions with an
//! en-passant capture available keep the Nalimov e.p. zone's numbering, after the plain part.

pub mod unit;

use super::moves::lone_squares;
use crate::chess::attacks::{king_attacks, pawn_attacks, piece_attacks};
use crate::chess::{Bitboard, Color, PieceType, Square};
use crate::egtb::index::binomial::{binom, colex_unrank};
use crate::egtb::index::{
    normalising_symmetry, EndgameIndex, FrameCache, Half, Symmetry, TbPosition,
};

/// The most squares around a king that one knight attacks.
const KNIGHT_KING_SQUARES: u32 = 2;

/// The triangle a1-d1-d4 (file >= rank) by number, and its inverse.
const TRIANGLE: [u8; 10] = [0, 1, 2, 3, 9, 10, 11, 18, 19, 27];
const TRIANGLE_NUMBER: [u8; 64] = {
    let mut n = [u8::MAX; 64];
    let mut i = 0;
    while i < 10 {
        n[TRIANGLE[i] as usize] = i as u8;
        i += 1;
    }
    n
};

/// Digits of a plain entry: a unit's variant, two kings and at most four groups (see
/// `Layout::digits`).
const MAX_DIGITS: usize = 7;
type Digits = [u32; MAX_DIGITS];

/// A digit's radix, with what divides by it in a multiplication: `digits` runs for every
/// position a pass reaches, and a 64-bit division instruction cost about 5% of a solve.
#[derive(Clone, Copy, Debug)]
struct Radix {
    value: u64,
    /// ceil(2^64 / value).
    inverse: u64,
}

impl Radix {
    fn new(value: u64) -> Radix {
        assert!(value >= 2, "a digit of one value is not kept");
        Radix {
            value,
            inverse: u64::MAX / value + 1,
        }
    }

    /// x / value and x % value, exact for x * value < 2^64. With e = inverse * value - 2^64
    /// (0 <= e < value) and x = q * value + r: x * inverse / 2^64 = q + r / value
    /// + x * e / (value * 2^64) < q + (value - 1) / value + x / 2^64 < q + 1.
    #[inline(always)]
    fn div_rem(self, x: u64) -> (u64, u32) {
        debug_assert!((x as u128) * (self.value as u128) < 1 << 64);
        let q = ((x as u128 * self.inverse as u128) >> 64) as u64;
        (q, (x - q * self.value) as u32)
    }
}

/// The long diagonals a1-h8 and h1-a8, the axes of the pawnless reflections that can leave a
/// position unchanged.
const DIAG: u64 = 0x8040_2010_0804_0201;
const ANTI: u64 = 0x0102_0408_1020_4080;
/// The reflections in those diagonals.
const DIAG_REFLECTION: Symmetry = Symmetry {
    mirror_files: false,
    mirror_ranks: false,
    transpose: true,
};
const ANTI_REFLECTION: Symmetry = Symmetry {
    mirror_files: true,
    mirror_ranks: true,
    transpose: true,
};

/// The steps the pawns of `pos` still have to make to promote, summed.
fn pawn_level_of(pos: &TbPosition) -> u8 {
    let p = PieceType::Pawn.index();
    let (w, b) = (pos.pieces[0][p], pos.pieces[1][p]);
    w.into_iter().map(|s| 7 - s.rank()).sum::<u8>() + b.into_iter().map(|s| s.rank()).sum::<u8>()
}

/// One group of like men.
#[derive(Clone, Debug)]
struct LikeMen {
    color: Color,
    kind: PieceType,
    count: u8,
    /// Number of ranks: C(64, count), pawns C(48, count).
    radix: u64,
    /// For two or more men: each rank's digits (squares less the pawn offset), ascending.
    sets: Vec<[u8; 4]>,
    /// What one rank is worth in the entry number: the product of the later groups' radices.
    weight: u64,
    /// Pawns: each rank's steps left to promotion, summed over the group's men.
    levels: Vec<u8>,
}

impl LikeMen {
    /// The colex rank of the group's squares `b` (in the layout's orientation).
    #[inline(always)]
    fn rank(&self, mut b: u64) -> u64 {
        let offset = if self.kind == PieceType::Pawn { 8 } else { 0 };
        (1..=self.count as u32)
            .map(|k| {
                let d = b.trailing_zeros() - offset;
                b &= b - 1;
                binom(d, k)
            })
            .sum()
    }

    fn new(color: Color, kind: PieceType, count: u8) -> LikeMen {
        let n = if kind == PieceType::Pawn { 48 } else { 64 };
        let k = count as usize;
        let radix = binom(n, count as u32);
        let mut sets = Vec::new();
        if k >= 2 {
            // Every ascending k-tuple, stored at its colex rank.
            sets = (0..radix)
                .map(|r| {
                    let mut d = [0u8; 8];
                    colex_unrank(r, k, &mut d);
                    [d[0], d[1], d[2], d[3]]
                })
                .collect();
        }
        let mut levels = Vec::new();
        if kind == PieceType::Pawn {
            levels = (0..radix as usize)
                .map(|r| {
                    let digits: &[u8] = if k == 1 { &[r as u8] } else { &sets[r][..k] };
                    digits
                        .iter()
                        .map(|&d| {
                            let rank = (d + 8) / 8;
                            if color == Color::White {
                                7 - rank
                            } else {
                                rank
                            }
                        })
                        .sum()
                })
                .collect();
        }
        LikeMen {
            color,
            kind,
            count,
            radix,
            sets,
            weight: 0,
            levels,
        }
    }
}

/// A frame's word in normal form (`Layout::frame_word`): the lone man's square `x` of the
/// frame is bit `sym(x)` of word `word`, but where `above` is given, for the squares that `sym`
/// puts above the diagonal, which go by `above` (the reflection of a frame that is its own).
pub struct FrameWord {
    pub word: u64,
    pub sym: Symmetry,
    pub above: Option<Symmetry>,
}

/// Squares on or below the a1-h8 diagonal (file >= rank).
const ON_OR_BELOW_DIAGONAL: u64 = {
    let mut b = 0u64;
    let mut s = 0;
    while s < 64 {
        if s % 8 >= s / 8 {
            b |= 1 << s;
        }
        s += 1;
    }
    b
};

impl FrameWord {
    /// The lone man's squares `mask` of the frame, by the symmetry each goes by: one part, or
    /// two where `above` is given. Positions of the two parts may share an entry (a position
    /// and its reflection), so they are kept apart.
    #[inline]
    pub fn parts(&self, mask: u64) -> [(Symmetry, u64); 2] {
        match self.above {
            None => [(self.sym, mask), (self.sym, 0)],
            Some(above) => {
                let below = mask
                    & self
                        .sym
                        .inverse()
                        .bitboard(Bitboard(ON_OR_BELOW_DIAGONAL))
                        .0;
                [(self.sym, below), (above, mask & !below)]
            }
        }
    }
}

/// The last position `Layout::encode_near` numbered whole, with its symmetry and entry.
pub struct Near {
    pos: TbPosition,
    sym: Symmetry,
    idx: u64,
}

pub struct Layout<'a> {
    nalimov: &'a EndgameIndex,
    pawns: bool,
    symmetric: bool,
    groups: Vec<LikeMen>,
    /// Index into `groups` by colour and piece type (usize::MAX: none).
    group_of: [[usize; 6]; 2],
    /// What one step of Black's king is worth in the entry number.
    bk_weight: u64,
    /// The radix of each digit of a plain entry (see `digits`).
    radices: Vec<Radix>,
    /// Entries of the plain part (per half).
    plain: u64,
    /// Nalimov main-zone size and e.p. entries, per half (0 when this half keeps none).
    main: [u64; 2],
    ep_len: [u64; 2],
    /// A unit's variants (`of_unit`): their number is the digit after the kings', and the
    /// pawns are no digits of their own.
    unit: Option<unit::Unit>,
    /// Where the first group's digit is: 3 in a unit of several variants, else 2.
    first_group: usize,
    /// What one step of the variant's digit is worth.
    variant_weight: u64,
}

impl<'a> Layout<'a> {
    pub fn new(nalimov: &'a EndgameIndex) -> Layout<'a> {
        let m = nalimov.material();
        let pawns = m.has_pawns();
        let mut groups = Vec::new();
        let mut plain: u64 = if pawns { 32 } else { 10 } * 64;
        for color in Color::BOTH {
            for kind in [
                PieceType::Queen,
                PieceType::Rook,
                PieceType::Bishop,
                PieceType::Knight,
                PieceType::Pawn,
            ] {
                let count = m.count(color, kind);
                if count > 0 {
                    let g = LikeMen::new(color, kind, count);
                    plain *= g.radix;
                    groups.push(g);
                }
            }
        }
        let mut group_of = [[usize::MAX; 6]; 2];
        let mut weight = 1;
        for (i, g) in groups.iter_mut().enumerate().rev() {
            g.weight = weight;
            weight *= g.radix;
            group_of[g.color.index()][g.kind.index()] = i;
        }
        let bk_weight = weight;
        let symmetric = m.is_symmetric();
        let mut main = [0; 2];
        let mut ep_len = [0; 2];
        // A symmetric endgame's index keeps one half (the other colour is flipped into it);
        // here both halves are kept, each with its own e.p. part, so that every position has
        // exactly one entry and un-moves meet each move once.
        for h in Half::BOTH {
            let (mz, _) = nalimov.zones(h);
            main[h as usize] = mz;
            ep_len[h as usize] = nalimov.size(h).saturating_sub(mz);
        }
        let kings = [if pawns { 32 } else { 10 }, 64];
        let radices = kings
            .into_iter()
            .chain(groups.iter().map(|g| g.radix))
            .map(Radix::new)
            .collect();
        Layout {
            nalimov,
            pawns,
            symmetric,
            radices,
            groups,
            group_of,
            bk_weight,
            plain,
            main,
            ep_len,
            unit: None,
            first_group: 2,
            variant_weight: plain,
        }
    }

    /// The layout of one unit of pawn structures of an endgame with pawns (`unit`): per half,
    /// White's king on files a-d, Black's king, the unit's variant, then the other men as in
    /// `new`: the kings first, so that the entries with one pair of kings, all in one king
    /// block of Nalimov's index, lie together. Positions of other variants have no entry here. Entries of an e.p. variant
    /// with the other side to move, or with a man on the squares the double step crossed,
    /// are broken.
    pub fn of_unit(nalimov: &'a EndgameIndex, u: unit::Unit) -> Layout<'a> {
        let mut l = Layout::new(nalimov);
        assert!(l.pawns, "units are pawn structures");
        l.groups.retain(|g| g.kind != PieceType::Pawn);
        l.group_of = [[usize::MAX; 6]; 2];
        let mut weight = 1;
        for (i, g) in l.groups.iter_mut().enumerate().rev() {
            g.weight = weight;
            weight *= g.radix;
            l.group_of[g.color.index()][g.kind.index()] = i;
        }
        let n = u.variants.len() as u64;
        l.variant_weight = weight;
        l.bk_weight = weight * n;
        l.plain = 32 * 64 * l.bk_weight;
        // A digit of one value is left out (of the radices and so of `digits`).
        l.radices = [32, 64, n]
            .into_iter()
            .filter(|&r| r > 1)
            .chain(l.groups.iter().map(|g| g.radix))
            .map(Radix::new)
            .collect();
        l.main = [0; 2];
        l.ep_len = [0; 2];
        l.first_group = if n > 1 { 3 } else { 2 };
        l.unit = Some(u);
        l
    }

    /// Entries of one run of a pair of kings: with the kings' digits first, run `wk * 64 + bk`
    /// (White's king numbered on files a-d) holds every entry with those kings.
    pub fn run_len(&self) -> u64 {
        self.bk_weight
    }

    /// In a unit's layout, the man of the last group where he is alone: the last digit is then
    /// his square, and each 64 entries of a run one frame of the other men, him on every square.
    pub fn unit_last_man(&self) -> Option<(Color, PieceType)> {
        let g = self.groups.last()?;
        (self.unit.is_some() && g.count == 1).then_some((g.color, g.kind))
    }

    /// The kings of run `k` (`run_len`) of a unit's layout.
    pub fn run_kings(&self, k: usize) -> (Square, Square) {
        let mut d = [0u32; MAX_DIGITS];
        (d[0], d[1]) = ((k / 64) as u32, (k % 64) as u32);
        self.kings_of_digits(&d)
    }

    /// The unit this layout is of, if any (`of_unit`).
    pub fn unit(&self) -> Option<&unit::Unit> {
        self.unit.as_ref()
    }

    /// Entries of a half.
    pub fn size(&self, h: Half) -> u64 {
        self.plain + self.ep_len[h as usize]
    }

    /// The entry of a legal position of this endgame.
    #[inline]
    pub fn encode(&self, pos: &TbPosition) -> Option<(Half, u64)> {
        if let Some(u) = &self.unit {
            let (sym, _) = self.kings_symmetry(pos);
            let v = u.number(&unit::Variant::of(pos, sym))? as u64;
            return Some((
                Half::of(pos.stm),
                v * self.variant_weight + self.plain_index(pos, sym),
            ));
        }
        if let Some(ep) = pos.ep {
            let stm = pos.stm;
            let capturers = pawn_attacks(!stm, ep) & pos.pieces[stm.index()][0];
            if capturers.any() {
                let (h, i) = self.nalimov.index(pos)?;
                let main = self.main[h as usize];
                if i >= main {
                    // `h` differs from the side to move only for a colour-flipped symmetric
                    // endgame, whose halves have the same layout.
                    return Some((Half::of(pos.stm), self.plain + i - main));
                }
            }
        }
        let (sym, kings_decide) = self.kings_symmetry(pos);
        if kings_decide {
            return Some((Half::of(pos.stm), self.plain_index(pos, sym)));
        }
        // Both kings on the diagonal: the other men decide, by the smaller of the two numbers.
        let t = self.plain_index(pos, sym);
        let reflected = Symmetry {
            transpose: true,
            ..sym
        };
        Some((Half::of(pos.stm), t.min(self.plain_index(pos, reflected))))
    }

    /// `encode` of a position without an e.p. square, with `near` the last position encoded
    /// this way: when the kings and the side to move are the same, the symmetry is too, and
    /// only the digits of the groups that stand elsewhere change (a sub-table position's
    /// un-captures differ in the moved man's and the captured man's squares).
    #[inline]
    pub fn encode_near(&self, near: &mut Option<Near>, pos: &TbPosition) -> (Half, u64) {
        debug_assert!(pos.ep.is_none());
        let k = PieceType::King.index();
        let same_kings = |n: &Near| {
            n.pos.stm == pos.stm && (0..2).all(|c| n.pos.pieces[c][k] == pos.pieces[c][k])
        };
        match near {
            Some(n) if same_kings(n) => {
                let tr = |b: Bitboard| n.sym.bitboard(b).0;
                for g in &self.groups {
                    let (c, t) = (g.color.index(), g.kind.index());
                    let (was, now) = (n.pos.pieces[c][t], pos.pieces[c][t]);
                    if was != now {
                        n.idx = (n.idx + g.rank(tr(now)) * g.weight)
                            .wrapping_sub(g.rank(tr(was)) * g.weight);
                    }
                }
                n.pos = *pos;
                (Half::of(pos.stm), n.idx)
            }
            _ => {
                let (sym, kings_decide) = self.kings_symmetry(pos);
                if !kings_decide {
                    *near = None;
                    return self
                        .encode(pos)
                        .expect("a position without e.p. has an entry");
                }
                let idx = self.plain_index(pos, sym);
                *near = Some(Near {
                    pos: *pos,
                    sym,
                    idx,
                });
                (Half::of(pos.stm), idx)
            }
        }
    }

    /// The symmetry that brings `pos`'s kings into normal form, and whether the kings alone
    /// decide it (not when both end on the diagonal, where the reflection in it is left to
    /// the other men: `encode`).
    #[inline(always)]
    fn kings_symmetry(&self, pos: &TbPosition) -> (Symmetry, bool) {
        let wk = pos.king(Color::White);
        let mut sym = Symmetry {
            mirror_files: wk.file() >= 4,
            mirror_ranks: !self.pawns && wk.rank() >= 4,
            transpose: false,
        };
        if self.pawns {
            return (sym, true);
        }
        let k = sym.square(wk);
        let b = sym.square(pos.king(Color::Black));
        // Off the diagonal White's king decides the reflection; on it, Black's king (kept on
        // or below the diagonal, as Nalimov keeps the king not to move).
        if k.file() != k.rank() {
            sym.transpose = k.file() < k.rank();
        } else if b.file() != b.rank() {
            sym.transpose = b.file() < b.rank();
        } else {
            return (sym, false);
        }
        (sym, true)
    }

    /// The last group's man, with its colour and type, when he is alone and the endgame has
    /// no pawns: then his 64 squares are the last digit, and the 64 entries of a bitmap's word
    /// are one frame of the other men with him on each square (`frame`).
    pub fn lone_last_man(&self) -> Option<(Color, PieceType)> {
        let g = self.groups.last()?;
        (!self.pawns && g.count == 1).then_some((g.color, g.kind))
    }

    /// The valid entries of word `w` of half `h`; None without a lone last man
    /// (`lone_last_man`). Where both kings stand on the diagonal, the frame's normal form
    /// (`frame_word`) tells which of the lone man's legal squares keep the word's.
    #[inline]
    pub fn valid_in_word(&self, h: Half, w: u64) -> Option<u64> {
        let lone = self.lone_last_man()?;
        if let Some((valid, _)) = self.word(h, w) {
            return Some(valid);
        }
        let frame = self.frame(h, w);
        let fw = self.frame_word(&frame);
        if fw.word != w {
            return Some(0);
        }
        let kept = fw.parts(lone_squares(&frame, lone));
        Some(
            kept.into_iter()
                .filter(|&(sym, _)| sym == Symmetry::default())
                .fold(0, |v, (_, part)| v | part),
        )
    }

    /// `valid_in_word`, and the word's frame (`frame`) where its men stand on squares of their
    /// own: the digits are decoded once for both.
    #[inline(always)]
    pub fn word(&self, h: Half, w: u64) -> Option<(u64, Option<TbPosition>)> {
        let lone = self.lone_last_man()?;
        let d = self.digits(w * 64);
        let Some(frame) = self.men_of_digits::<true>(h, &d, self.groups.len() - 1) else {
            return Some((0, None));
        };
        let (wk, bk) = (frame.king(Color::White), frame.king(Color::Black));
        if king_attacks(wk).contains(bk) {
            return Some((0, Some(frame)));
        }
        if wk.file() == wk.rank() {
            if bk.file() < bk.rank() {
                return Some((0, Some(frame)));
            }
            if bk.file() == bk.rank() {
                return None;
            }
        }
        Some((lone_squares(&frame, lone), Some(frame)))
    }

    /// The men of word `w` of half `h` but the lone last man (`lone_last_man`).
    #[inline]
    pub fn frame(&self, h: Half, w: u64) -> TbPosition {
        let d = self.digits(w * 64);
        self.men_of_digits::<false>(h, &d, self.groups.len() - 1)
            .expect("unchecked digits give a position")
    }

    /// The word of the frame of men `frame` (without the lone last man) in normal form, and the
    /// symmetry that brings it there, which the lone man's squares take too.
    #[inline]
    pub fn frame_word(&self, frame: &TbPosition) -> FrameWord {
        let (sym, kings_decide) = self.kings_symmetry(frame);
        let word = self.frame_number(frame, sym);
        if kings_decide {
            return FrameWord {
                word,
                sym,
                above: None,
            };
        }
        // Both kings on the diagonal: the smaller number of the frame and of its reflection,
        // and where they are the same, the lone man's square decides, entry by entry.
        let reflected = Symmetry {
            transpose: true,
            ..sym
        };
        let other = self.frame_number(frame, reflected);
        match word.cmp(&other) {
            std::cmp::Ordering::Less => FrameWord {
                word,
                sym,
                above: None,
            },
            std::cmp::Ordering::Greater => FrameWord {
                word: other,
                sym: reflected,
                above: None,
            },
            std::cmp::Ordering::Equal => FrameWord {
                word,
                sym,
                above: Some(reflected),
            },
        }
    }

    /// The word of `moved`, a frame that differs from `frame` (word `w`'s) by where one man of
    /// colour `c` and type `kind`, not a king, stands: with the kings, the normal form stays,
    /// and only that man's digit changes (an add instead of `frame_word`).
    #[inline(always)]
    pub fn moved_word(
        &self,
        w: u64,
        frame: &TbPosition,
        moved: &TbPosition,
        c: Color,
        kind: PieceType,
    ) -> u64 {
        let g = &self.groups[self.group_of[c.index()][kind.index()]];
        let step = g.weight / 64;
        let (before, after) = (
            g.rank(frame.pieces[c.index()][kind.index()].0),
            g.rank(moved.pieces[c.index()][kind.index()].0),
        );
        (w + after * step).wrapping_sub(before * step)
    }

    /// The plain number of the frame `frame` (every man but the lone last one) seen through
    /// `sym`: its word.
    #[inline(always)]
    fn frame_number(&self, frame: &TbPosition, sym: Symmetry) -> u64 {
        let tr = |b: Bitboard| -> u64 { sym.bitboard(b).0 };
        let wk = sym.square(frame.king(Color::White));
        let bk = sym.square(frame.king(Color::Black));
        let mut w = self.king_number(wk) * 64 + bk.0 as u64;
        for g in &self.groups[..self.groups.len() - 1] {
            w = w * g.radix + g.rank(tr(frame.pieces[g.color.index()][g.kind.index()]));
        }
        w
    }

    /// The entry of `pred`, reached from `pos` (a valid entry `idx`, as `decode_valid` gave
    /// it) by un-moving one man of type `kind`. When `pred` is in normal form as it stands (the
    /// symmetry is the identity) and no e.p. is involved, only the moved man's digit changes:
    /// an add instead of a full `encode` (the solver's busiest step).
    #[inline]
    pub fn encode_unmove(
        &self,
        idx: u64,
        pos: &TbPosition,
        pred: &TbPosition,
        kind: PieceType,
    ) -> Option<(Half, u64)> {
        self.encode_one_moved(idx, pos, pred, pred.stm, kind)
    }

    /// The entry of `succ`, reached from `pos` (a valid entry `idx`) by a move of a man of
    /// type `kind` that captures nothing: as `encode_unmove`, forwards.
    #[inline]
    pub fn encode_move(
        &self,
        idx: u64,
        pos: &TbPosition,
        succ: &TbPosition,
        kind: PieceType,
    ) -> Option<(Half, u64)> {
        self.encode_one_moved(idx, pos, succ, pos.stm, kind)
    }

    /// The entry of `other`, which differs from `pos` (the valid entry `idx`) in the square of
    /// one man of colour `m` and type `kind` and in the side to move.
    #[inline(always)]
    fn encode_one_moved(
        &self,
        idx: u64,
        pos: &TbPosition,
        other: &TbPosition,
        m: Color,
        kind: PieceType,
    ) -> Option<(Half, u64)> {
        let (wk, bk) = (other.king(Color::White), other.king(Color::Black));
        let normal = self.kings_normal(wk, bk);
        if idx >= self.plain || other.ep.is_some() || pos.ep.is_some() || !normal {
            return self.encode(other);
        }
        let (before, after, weight) = match (kind, m) {
            (PieceType::King, Color::White) => (
                self.king_number(pos.king(Color::White)),
                self.king_number(wk),
                self.bk_weight * 64,
            ),
            (PieceType::King, Color::Black) => {
                (pos.king(Color::Black).0 as u64, bk.0 as u64, self.bk_weight)
            }
            _ => {
                let g = &self.groups[self.group_of[m.index()][kind.index()]];
                let bb = |p: &TbPosition| p.pieces[m.index()][kind.index()].0;
                (g.rank(bb(pos)), g.rank(bb(other)), g.weight)
            }
        };
        let i = (idx + after * weight).wrapping_sub(before * weight);
        Some((Half::of(other.stm), i))
    }

    /// Can every predecessor of the valid entry `idx` (position `pos`) be numbered from the
    /// moved man's squares alone (`pred_entries`)? Not for e.p. entries, not when both kings
    /// stand on the long diagonal (the normal form then depends on every man), and not when a
    /// predecessor may have e.p. variants (the side to move has a pawn that may just have
    /// double-stepped and the other side has pawns).
    #[inline]
    pub fn unmoves_by_squares(&self, idx: u64, pos: &TbPosition) -> bool {
        if idx >= self.plain || pos.ep.is_some() {
            return false;
        }
        if self.pawns {
            let (s, p) = (pos.stm, PieceType::Pawn.index());
            let fourth = if s == Color::White {
                0xFF << 24
            } else {
                0xFF << 32
            };
            return pos.pieces[(!s).index()][p].is_empty()
                || pos.pieces[s.index()][p].0 & fourth == 0;
        }
        let (wk, bk) = (pos.king(Color::White), pos.king(Color::Black));
        wk.file() != wk.rank() || bk.file() != bk.rank()
    }

    /// Calls `f` with the entry of each predecessor of the valid entry `idx` (position `pos`,
    /// `unmoves_by_squares`) in which the man of type `kind` of the side not to move stood on
    /// one of `froms` instead of `to`: an add per square where the predecessor is in normal form
    /// as it stands, `encode` where White's king leaves its normal region or Black's king
    /// crosses the diagonal that White's king stands on.
    #[inline]
    pub fn pred_entries(
        &self,
        idx: u64,
        pos: &TbPosition,
        kind: PieceType,
        to: Square,
        froms: Bitboard,
        f: impl FnMut(u64),
    ) {
        self.moved_entries(idx, pos, !pos.stm, kind, to, froms, f)
    }

    /// Calls `f` with the entry of each successor of the valid entry `idx` (position `pos`,
    /// `unmoves_by_squares`) in which the man of type `kind` of the side to move went from
    /// `from` to one of `tos` (empty squares, legal moves): `pred_entries` forwards.
    #[inline]
    pub fn succ_entries(
        &self,
        idx: u64,
        pos: &TbPosition,
        kind: PieceType,
        from: Square,
        tos: Bitboard,
        f: impl FnMut(u64),
    ) {
        self.moved_entries(idx, pos, pos.stm, kind, from, tos, f)
    }

    /// The entries of the positions, the other side to move, in which the man of colour `m`
    /// and type `kind` on `at` stands on one of `squares` instead.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn moved_entries(
        &self,
        idx: u64,
        pos: &TbPosition,
        m: Color,
        kind: PieceType,
        at: Square,
        squares: Bitboard,
        mut f: impl FnMut(u64),
    ) {
        let (to, froms) = (at, squares);
        let slow = |from: Square| {
            let mut q = *pos;
            q.stm = !pos.stm;
            q.ep = None;
            q.pieces[m.index()][kind.index()].0 ^= (1u64 << from.0) | (1u64 << to.0);
            self.encode(&q).expect("legal position has an entry").1
        };
        let step = |from: Square, weight: u64| {
            (idx + from.0 as u64 * weight).wrapping_sub(to.0 as u64 * weight)
        };
        match (kind, m) {
            (PieceType::King, Color::White) => {
                let bk = pos.king(Color::Black);
                let weight = self.bk_weight * 64;
                let before = self.king_number(to);
                for from in froms {
                    f(if self.kings_normal(from, bk) {
                        (idx + self.king_number(from) * weight).wrapping_sub(before * weight)
                    } else {
                        slow(from)
                    });
                }
            }
            (PieceType::King, Color::Black) => {
                let wk = pos.king(Color::White);
                let on_diagonal = !self.pawns && wk.file() == wk.rank();
                for from in froms {
                    f(if on_diagonal && from.file() <= from.rank() {
                        slow(from)
                    } else {
                        step(from, self.bk_weight)
                    });
                }
            }
            _ => {
                let g = &self.groups[self.group_of[m.index()][kind.index()]];
                if g.count == 1 {
                    for from in froms {
                        f(step(from, g.weight));
                    }
                } else {
                    let set = pos.pieces[m.index()][kind.index()].0;
                    let before = g.rank(set) * g.weight;
                    for from in froms {
                        let after = g.rank(set ^ (1u64 << from.0) ^ (1u64 << to.0));
                        f((idx + after * g.weight).wrapping_sub(before));
                    }
                }
            }
        }
    }

    /// Are kings on `wk` and `bk` in normal form as they stand (the identity symmetry), so
    /// that the other men need no reflection either?
    #[inline(always)]
    fn kings_normal(&self, wk: Square, bk: Square) -> bool {
        if self.pawns {
            wk.file() < 4
        } else {
            TRIANGLE_NUMBER[wk.index()] != u8::MAX
                && (wk.file() != wk.rank() || bk.file() > bk.rank())
        }
    }

    /// The digit of White's king, in the normal region.
    #[inline(always)]
    fn king_number(&self, wk: Square) -> u64 {
        if self.pawns {
            (wk.0 as u64 >> 3) * 4 + (wk.0 as u64 & 3)
        } else {
            TRIANGLE_NUMBER[wk.index()] as u64
        }
    }

    /// The plain number of `pos` seen through `sym` (which must bring White's king into the
    /// normal region).
    #[inline(always)]
    fn plain_index(&self, pos: &TbPosition, sym: Symmetry) -> u64 {
        let tr = |b: Bitboard| -> u64 { sym.bitboard(b).0 };
        let wk = tr(pos.pieces[0][PieceType::King.index()]).trailing_zeros() as u64;
        let bk = tr(pos.pieces[1][PieceType::King.index()]).trailing_zeros() as u64;
        let mut idx = self.king_number(Square(wk as u8));
        idx = idx * 64 + bk;
        if let Some(u) = &self.unit {
            idx *= u.variants.len() as u64; // the variant's digit, added by `encode`
        }
        for g in &self.groups {
            idx = idx * g.radix + g.rank(tr(pos.pieces[g.color.index()][g.kind.index()]));
        }
        idx
    }

    /// The position of an entry, or None if the entry is broken.
    #[inline]
    pub fn decode(&self, h: Half, idx: u64) -> Option<TbPosition> {
        let pos = self.unpack::<true>(h, idx)?;
        if idx >= self.plain || self.valid(idx, &pos) {
            Some(pos)
        } else {
            None
        }
    }

    /// Calls `f(idx, position or None if broken)` for every entry of `range` in half `h`, in
    /// order: `decode` without its divisions, the digits counted up from one entry to the next.
    #[inline]
    pub fn scan(
        &self,
        h: Half,
        range: std::ops::Range<u64>,
        mut f: impl FnMut(u64, Option<&TbPosition>),
    ) {
        let plain_end = range.end.min(self.plain);
        if range.start < plain_end {
            let mut digits = self.digits(range.start);
            for idx in range.start..plain_end {
                let pos = self
                    .position_of_digits::<true>(h, &digits)
                    .filter(|pos| self.valid(idx, pos));
                f(idx, pos.as_ref());
                // The next entry: the last digit counts up, carrying into the ones before.
                for (d, radix) in digits.iter_mut().zip(&self.radices).rev() {
                    *d += 1;
                    if (*d as u64) < radix.value {
                        break;
                    }
                    *d = 0;
                }
            }
        }
        for idx in range.start.max(self.plain)..range.end {
            f(idx, self.decode(h, idx).as_ref());
        }
    }

    /// Like `scan`, but only valid entries that may be mates: a superset of those whose side
    /// to move is checkmated. The last group's men go through a run of entries with the others
    /// fixed, and the run is mostly skipped:
    /// - the side to move is in check only if the others give it, or if the last group is the
    ///   opponent's and one of its men stands where it gives check (the side to move's own men
    ///   can only block a check);
    /// - the side to move's own last group cannot take a king move away but by standing on its
    ///   square (its men attack no square of their own king and block only the opponent's
    ///   lines), so with the others alone the king's safe squares must all be covered.
    pub fn scan_mates(
        &self,
        h: Half,
        range: std::ops::Range<u64>,
        mut f: impl FnMut(u64, &TbPosition),
    ) {
        let plain_end = range.end.min(self.plain);
        let stm = h.stm();
        let mut idx = range.start;
        if let Some(last) = self.groups.last() {
            let n = self.groups.len();
            while idx < plain_end {
                let digits = self.digits(idx);
                let first = digits[self.first_group + n - 1];
                let run = (last.radix - first as u64).min(plain_end - idx);
                if let Some(mut pos) = self.men_of_digits::<true>(h, &digits, n - 1) {
                    let king = pos.king(stm);
                    let occ = pos.occupied().0;
                    let own = last.color == stm;
                    let checked = pos.attacked_by(king, !stm);
                    // Where the last group's men must stand (one of them), and what they must
                    // cover (all of it).
                    let targets = match (checked, own) {
                        (true, _) => !0,
                        (false, true) => 0,
                        (false, false) if last.kind == PieceType::Pawn => pawn_attacks(stm, king).0,
                        (false, false) => piece_attacks(last.kind, king, pos.occupied()).0,
                    };
                    let cover = if checked && own {
                        Self::safe_squares(&pos)
                    } else {
                        0
                    };
                    // The opponent's knights of the last group take at most two of the
                    // king's squares each, and one standing on a safe square can be taken:
                    // past that many safe squares the king always has a move (KQRKBN's White
                    // to move: most of its frames).
                    let escapes = !own
                        && last.kind == PieceType::Knight
                        && targets != 0
                        && Self::safe_squares(&pos).count_ones()
                            > KNIGHT_KING_SQUARES * last.count as u32;
                    if targets != 0 && !escapes && cover.count_ones() <= last.count as u32 {
                        for k in 0..run {
                            let bits = Self::group_bits(last, first + k as u32);
                            if bits & targets == 0 || bits & occ != 0 || bits & cover != cover {
                                continue;
                            }
                            pos.pieces[last.color.index()][last.kind.index()] = Bitboard(bits);
                            if self.valid(idx + k, &pos) {
                                f(idx + k, &pos);
                            }
                        }
                    }
                }
                idx += run;
            }
        }
        for idx in idx.max(self.plain)..range.end {
            if let Some(pos) = self.decode(h, idx) {
                f(idx, &pos);
            }
        }
    }

    /// The squares the side to move's king can go to in `pos`: not its own men's, not
    /// attacked once the king has left its square.
    fn safe_squares(pos: &TbPosition) -> u64 {
        let stm = pos.stm;
        let king = pos.king(stm);
        let own = pos.pieces[stm.index()].iter().fold(0u64, |b, p| b | p.0);
        let mut away = *pos;
        away.pieces[stm.index()][PieceType::King.index()] = Bitboard(0);
        let mut safe = 0u64;
        let mut to = king_attacks(king).0 & !own;
        while to != 0 {
            let sq = Square(to.trailing_zeros() as u8);
            to &= to - 1;
            if !away.attacked_by(sq, !stm) {
                safe |= 1 << sq.0;
            }
        }
        safe
    }

    /// The rest of legality for a plain entry whose digits give `pos`: the digits give one king
    /// each, distinct squares and pawns on ranks 2-7; what is left is the kings' distance, the
    /// side not to move not in check, and the normal form on the diagonal.
    #[inline(always)]
    fn valid(&self, idx: u64, pos: &TbPosition) -> bool {
        let (wk, bk) = (pos.king(Color::White), pos.king(Color::Black));
        if king_attacks(wk).contains(bk) || pos.attacked_by(pos.king(!pos.stm), pos.stm) {
            return false;
        }
        // With White's king on the diagonal, Black's king below it decides (see `encode`); on
        // it too, only the entry `encode` gives is used.
        if !self.pawns && wk.file() == wk.rank() {
            if bk.file() < bk.rank() {
                return false;
            }
            // Both on it: the smaller of the numbers of the position and of its reflection
            // in it, as `encode` gives; the digits give the first.
            if bk.file() == bk.rank() && self.plain_index(pos, DIAG_REFLECTION) < idx {
                return false;
            }
        }
        true
    }

    /// The position of an entry known not to be broken (the solver's resolved entries): the
    /// digits only, without `decode`'s legality checks.
    #[inline]
    pub fn decode_valid(&self, h: Half, idx: u64) -> TbPosition {
        self.unpack::<false>(h, idx)
            .expect("a valid entry has a position")
    }

    /// The men an entry's digits name; with `CHECK`, None when two men share a square or like
    /// men are out of order.
    #[inline(always)]
    fn unpack<const CHECK: bool>(&self, h: Half, idx: u64) -> Option<TbPosition> {
        if idx >= self.plain {
            let i = self.main[h as usize] + idx - self.plain;
            if self.symmetric && h == Half::Wtm {
                return self.nalimov.decode(Half::Btm, i).map(|p| p.color_flipped());
            }
            return self.nalimov.decode(h, i);
        }
        self.position_of_digits::<CHECK>(h, &self.digits(idx))
    }

    /// The digits of a plain entry, most significant first: White's king, Black's king, then
    /// each group's rank.
    #[inline(always)]
    fn digits(&self, idx: u64) -> Digits {
        let mut d = [0u32; MAX_DIGITS];
        let mut x = idx;
        for (d, radix) in d.iter_mut().zip(&self.radices).rev() {
            (x, *d) = radix.div_rem(x);
        }
        d
    }

    /// White's and Black's kings as a plain entry's digits place them.
    #[inline(always)]
    fn kings_of_digits(&self, d: &Digits) -> (Square, Square) {
        let k = d[0] as u8;
        let wk = if self.pawns {
            (k / 4) * 8 + k % 4
        } else {
            TRIANGLE[k as usize]
        };
        (Square(wk), Square(d[1] as u8))
    }

    /// The men the digits name; with `CHECK`, None when two men share a square.
    #[inline(always)]
    fn position_of_digits<const CHECK: bool>(&self, h: Half, d: &Digits) -> Option<TbPosition> {
        self.men_of_digits::<CHECK>(h, d, self.groups.len())
    }

    /// The squares of rank `rank` of group `g`.
    #[inline(always)]
    fn group_bits(g: &LikeMen, rank: u32) -> u64 {
        let offset: u64 = if g.kind == PieceType::Pawn { 8 } else { 0 };
        if g.count == 1 {
            1u64 << (rank as u64 + offset)
        } else {
            let d = &g.sets[rank as usize];
            (0..g.count as usize).fold(0, |b, i| b | 1u64 << (d[i] as u64 + offset))
        }
    }

    /// The kings and the first `groups` groups of men the digits name; with `CHECK`, None when
    /// two of them share a square.
    #[inline(always)]
    fn men_of_digits<const CHECK: bool>(
        &self,
        h: Half,
        d: &Digits,
        groups: usize,
    ) -> Option<TbPosition> {
        let mut pos = TbPosition::empty(h.stm());
        let mut occ = 0u64;
        if let Some(u) = &self.unit {
            let v = u.variants[if self.first_group == 3 {
                d[2] as usize
            } else {
                0
            }];
            let p = PieceType::Pawn.index();
            pos.pieces[0][p] = Bitboard(v.pawns[0]);
            pos.pieces[1][p] = Bitboard(v.pawns[1]);
            occ = v.pawns[0] | v.pawns[1];
            if v.ep != unit::NO_EP {
                if CHECK && v.ep_side() != Some(h.stm()) {
                    return None;
                }
                pos.ep = Some(Square(v.ep));
                // The squares the double step crossed hold no man: counted as taken.
                occ |= v.ep_path();
            }
        }
        for (g, &rank) in self.groups[..groups].iter().zip(&d[self.first_group..]) {
            let bits = Self::group_bits(g, rank);
            if CHECK && occ & bits != 0 {
                return None;
            }
            occ |= bits;
            pos.pieces[g.color.index()][g.kind.index()] = Bitboard(bits);
        }
        let (wk, bk) = self.kings_of_digits(d);
        let (wk, bk) = (wk.0 as u64, bk.0 as u64);
        if CHECK && (occ >> bk & 1 != 0 || occ >> wk & 1 != 0 || wk == bk) {
            return None;
        }
        pos.pieces[0][PieceType::King.index()] = Bitboard(1 << wk);
        pos.pieces[1][PieceType::King.index()] = Bitboard(1 << bk);
        Some(pos)
    }

    /// Calls `f` with each Nalimov index of the valid entry `idx` of half `h` (a half the
    /// Nalimov index stores), whose position is `pos`: one, or two when both kings stand on a
    /// long diagonal, where Nalimov keeps a position and its reflection in that diagonal as
    /// twins. `frames` keeps the kings' share of the index between calls: entries in layout
    /// order share their kings in long runs (a twin has the same kings too).
    #[inline]
    pub fn nalimov_entries(
        &self,
        h: Half,
        idx: u64,
        pos: &TbPosition,
        frames: &mut FrameCache,
        mut f: impl FnMut(u64),
    ) {
        if idx >= self.plain {
            return f(self.main[h as usize] + idx - self.plain);
        }
        let mut at = |p: &TbPosition| {
            let (nh, i) = frames
                .index_own(self.nalimov, p)
                .expect("a valid entry has a Nalimov index");
            debug_assert_eq!(nh, h);
            i
        };
        let first = at(pos);
        f(first);
        if self.pawns {
            return;
        }
        let kings =
            (pos.pieces[0][PieceType::King.index()] | pos.pieces[1][PieceType::King.index()]).0;
        for (axis, sym) in [(DIAG, DIAG_REFLECTION), (ANTI, ANTI_REFLECTION)] {
            if kings & !axis == 0 {
                let twin = at(&pos.transformed(sym));
                if twin != first {
                    f(twin);
                }
            }
        }
    }

    /// `nalimov_entries` of the valid entries `valid` of word `w` of half `h`, whose frame is
    /// `frame` (`valid_in_word`, `frame`), as `f(square of the lone last man, index)`: the
    /// frame's share of the index is worked out once for the word. Such a word's kings are not
    /// both on a long diagonal, so each entry has one Nalimov index.
    #[inline]
    pub fn nalimov_word(
        &self,
        h: Half,
        frame: &TbPosition,
        valid: u64,
        frames: &mut FrameCache,
        mut f: impl FnMut(Square, u64),
    ) {
        let lone = self.lone_last_man().expect("a word is one frame");
        frames.index_own_each(self.nalimov, frame, lone, valid, |s, i| {
            let (nh, i) = i.expect("a valid entry has a Nalimov index");
            debug_assert_eq!(nh, h);
            f(s, i)
        });
    }

    /// How many symmetries of the layout map `pos` to itself (1 or 2): a pawnless position with
    /// both kings on a long diagonal may be its own reflection in it. Needed for the un-move
    /// counts.
    #[inline]
    pub fn stabiliser(&self, pos: &TbPosition) -> u8 {
        1 + (self.self_symmetric_squares(pos) != 0) as u8
    }

    /// The long diagonal in which `pos` is its own reflection, both kings on it, or 0. Of a
    /// frame (every man but the lone last one), the lone man's squares on which he and the
    /// frame make a position that is its own mirror image (`stabiliser` 2). With pawns, none:
    /// the kings stay off the a-h mirror's axis.
    #[inline]
    pub fn self_symmetric_squares(&self, pos: &TbPosition) -> u64 {
        if self.pawns {
            return 0;
        }
        // Like men may swap places under the reflection (queens on b3 and c2), so only the
        // kings must stand on its axis; the rest is checked bitboard by bitboard.
        let kings =
            (pos.pieces[0][PieceType::King.index()] | pos.pieces[1][PieceType::King.index()]).0;
        let fixed = |sym: Symmetry| {
            (0..2).all(|c| (0..6).all(|t| sym.bitboard(pos.pieces[c][t]) == pos.pieces[c][t]))
        };
        [(DIAG, DIAG_REFLECTION), (ANTI, ANTI_REFLECTION)]
            .into_iter()
            .find(|&(axis, sym)| kings & !axis == 0 && fixed(sym))
            .map_or(0, |(axis, _)| axis)
    }

    /// True when no position one move from `pos`, nor `pos` itself, can be its own mirror
    /// image, so that every stabiliser there is 1: with pawns always; without, unless the king
    /// not to move stands on a long diagonal that the king to move is on or can step onto
    /// (a reflection in a diagonal keeps both kings on it).
    #[inline]
    pub fn no_symmetric_neighbours(&self, pos: &TbPosition) -> bool {
        self.pawns || kings_keep_off_diagonals(pos.king(pos.stm), pos.king(!pos.stm))
    }

    /// `no_symmetric_neighbours` of entry `idx` of a pawnless half `h` (not of its e.p. part),
    /// from the kings' digits alone: nothing else of the entry is decoded.
    #[inline]
    pub fn entry_has_no_symmetric_neighbours(&self, h: Half, idx: u64) -> bool {
        debug_assert!(!self.pawns && idx < self.plain);
        let k = idx / self.bk_weight;
        let (wk, bk) = (Square(TRIANGLE[(k / 64) as usize]), Square((k % 64) as u8));
        match h.stm() {
            Color::White => kings_keep_off_diagonals(wk, bk),
            Color::Black => kings_keep_off_diagonals(bk, wk),
        }
    }

    /// The pawn level of an entry: the steps its pawns still have to make to promote, summed.
    /// A pawn push lowers it by one or two; every other move that stays in the endgame keeps
    /// it. 0 only for broken e.p. entries.
    pub fn pawn_level(&self, h: Half, idx: u64) -> u8 {
        if idx >= self.plain {
            return self
                .unpack::<false>(h, idx)
                .map_or(0, |pos| pawn_level_of(&pos));
        }
        self.groups
            .iter()
            .filter(|g| g.kind == PieceType::Pawn)
            .map(|g| g.levels[((idx / g.weight) % g.radix) as usize])
            .sum()
    }

    /// The highest pawn level (every pawn on its home rank).
    pub fn max_pawn_level(&self) -> u8 {
        self.groups
            .iter()
            .filter(|g| g.kind == PieceType::Pawn)
            .map(|g| 6 * g.count)
            .sum()
    }

    pub fn nalimov(&self) -> &EndgameIndex {
        self.nalimov
    }

    /// The entries of a pawnless half in runs that share their kings, each with the Nalimov
    /// king block (`nalimov_kings`) where its valid entries lie.
    pub fn king_runs(
        &self,
        h: Half,
    ) -> impl Iterator<Item = ((u8, u8), std::ops::Range<u64>)> + '_ {
        debug_assert!(!self.pawns, "pawnless");
        let run = self.bk_weight;
        (0..self.plain / run).map(move |k| (self.nalimov_kings(h, k * run), k * run..(k + 1) * run))
    }

    /// Calls `f` with each word of king run `run` of half `h` (`king_runs`), the other men's
    /// digits turned in the order of their significance in Nalimov's index, least significant
    /// fastest, where the last man stands alone (`lone_last_man`); false, and no call, where he
    /// does not. Entries taken in this order lie near each other in Nalimov's order too: in
    /// KQRKBN's Btm half the layout turns the bishop fastest, Nalimov's index the rook, and
    /// `assemble` wrote a king block's values line after distant line.
    pub fn run_words_nalimov_order(
        &self,
        h: Half,
        run: &std::ops::Range<u64>,
        mut f: impl FnMut(u64),
    ) -> bool {
        if self.lone_last_man().is_none() || self.groups.len() > MAX_DIGITS {
            return false;
        }
        debug_assert!(run.start.is_multiple_of(64) && (run.end - run.start) == self.bk_weight);
        let last = self.groups.len() - 1;
        let mut order = [0usize; MAX_DIGITS];
        let mut turned = 0;
        for (c, k) in self.nalimov.significance(h).rev() {
            let g = self.group_of[c.index()][k.index()];
            if g != last {
                order[turned] = g;
                turned += 1;
            }
        }
        debug_assert_eq!(turned, last);
        let word_weight = |g: usize| self.groups[g].weight / 64;
        let mut digit = [0u64; MAX_DIGITS];
        let mut w = run.start / 64;
        loop {
            f(w);
            let mut k = 0;
            loop {
                if k == turned {
                    return true;
                }
                let g = order[k];
                digit[g] += 1;
                w += word_weight(g);
                if digit[g] < self.groups[g].radix {
                    break;
                }
                w -= self.groups[g].radix * word_weight(g);
                digit[g] = 0;
                k += 1;
            }
        }
    }

    /// The runs of entries (in order) whose kings can stand as they do: apart, White's in the
    /// triangle and, on the long diagonal, Black's on or below it; and the e.p. part. No valid
    /// entry lies outside them, so a bitmap over a half touches only their pages (KQRKBN:
    /// about 70% of the layout).
    pub fn live_runs(&self, h: Half) -> impl Iterator<Item = std::ops::Range<u64>> + '_ {
        debug_assert!(!self.pawns, "pawnless");
        let run = self.bk_weight;
        let kings = TRIANGLE
            .iter()
            .flat_map(|&wk| (0..64u8).map(move |bk| (wk, bk)));
        kings
            .enumerate()
            .filter(|&(_, (wk, bk))| {
                let (wk, bk) = (Square(wk), Square(bk));
                // Both kings on the diagonal is normal too: the smaller of two numbers.
                !king_attacks(wk).contains(bk)
                    && wk != bk
                    && (self.kings_normal(wk, bk) || bk.file() == bk.rank())
            })
            .map(move |(k, _)| k as u64 * run..(k as u64 + 1) * run)
            .chain(std::iter::once(self.plain..self.size(h)).filter(|r| !r.is_empty()))
    }

    /// Where entry `idx` of half `h` lies among Nalimov's king blocks: its kings normalised as
    /// Nalimov's index places them, the side to move's first (ascending in the order of the
    /// blocks); the e.p. part after every block.
    pub fn nalimov_kings(&self, h: Half, idx: u64) -> (u8, u8) {
        if idx >= self.plain {
            return (u8::MAX, u8::MAX);
        }
        let (wk, bk) = self.kings_of_digits(&self.digits(idx));
        let (ks, kn) = match h.stm() {
            Color::White => (wk, bk),
            Color::Black => (bk, wk),
        };
        let sym = normalising_symmetry(self.pawns, ks, kn);
        (sym.square(ks).0, sym.square(kn).0)
    }
}

/// Does neither reflection in a long diagonal keep a position near these kings its own
/// image: the king not to move (`other`) off each diagonal that the king to move (`mover`)
/// stands on or can step onto?
#[inline(always)]
fn kings_keep_off_diagonals(mover: Square, other: Square) -> bool {
    let reach = king_attacks(mover).0 | 1 << mover.0;
    let other = 1u64 << other.0;
    [DIAG, ANTI]
        .iter()
        .all(|&d| other & d == 0 || reach & d == 0)
}

#[cfg(test)]
mod tests;
