//! One half of a table (White or Black to move) and its index (Nalimov et al. 2001, Sections
//! 3.2-3.5): a block per king placement, each the product of its groups' ranges, then the
//! en-passant zone; position -> index and back, with C_L trimming of the broken tail.

use super::binomial::{binom, colex_rank, colex_unrank};
use super::en_passant::{ep_code, ep_from_code, EpSquares, EP_CODES};
use super::geometry::{flip_ranks, normalising_symmetry, PAWN_RANKS, RANK_1};
use super::king_placements::{kk_pawns_number, kk_placements};
use super::layout::{ZoneGroup, ZoneLayout, MAX_GROUPS};
use super::numbering::{x_number, x_square, Numbering, AVAILABLE};
use super::position::{Half, TbPosition};
use crate::chess::{Bitboard, Color, PieceType, Square};
use crate::egtb::material::Material;

/// The index of one half: the n-space sub-ranges per king placement, forward and inverse.
pub(super) struct HalfIndex {
    pub(super) half: Half,
    pawns: bool,
    main: ZoneLayout,
    ep: Option<ZoneLayout>,
    /// Start of each KK block of the main zone; one more entry holding the zone's size.
    pub(super) kk_base: Vec<u64>,
    /// Start of each KK block of the e.p. zone, relative to the zone.
    pub(super) ep_base: Vec<u64>,
    pub(super) main_size: u64,
    pub(super) untrimmed: u64,
    pub(super) size: u64,
}

/// Squares of each group in placement order, as found in or made for a position.
type GroupSquares = [u64; MAX_GROUPS];

/// The part of a main-zone index fixed by the kings (`HalfIndex::king_frame`).
#[derive(Clone, Copy)]
pub(super) struct KingFrame {
    sym: super::geometry::Symmetry,
    /// The side to move's and the other king after the symmetry, then both in the layout's
    /// king frame.
    kings: [Square; 4],
    /// The first entry of the kings' block.
    base: u64,
    /// The groups' ranges in that block.
    d: [u64; MAX_GROUPS],
}

impl HalfIndex {
    pub(super) fn new(m: &Material, half: Half) -> HalfIndex {
        let pawns = m.has_pawns();
        let main = ZoneLayout::main(m, half);
        let ep = m.has_en_passant().then(|| ZoneLayout::en_passant(m, half));
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
    fn ranges(&self, l: &ZoneLayout, ks: Square, kn: Square, d: &mut [u64; MAX_GROUPS]) -> u64 {
        let t = &**AVAILABLE;
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
    fn coordinate(g: &ZoneGroup, sq: u64, ks: Square, kn: Square, excl: u64) -> Option<u64> {
        let t = &**AVAILABLE;
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
    fn squares(g: &ZoneGroup, r: u64, ks: Square, kn: Square, excl: u64) -> u64 {
        let t = &**AVAILABLE;
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

    /// Entry of a legal-shaped position in canonical colours with this half to move: in the
    /// e.p. zone when an e.p. capture is open, else in the main zone; None past the trimmed end.
    #[inline(always)]
    pub(super) fn index(&self, pos: &TbPosition) -> Option<u64> {
        if let Some(ep) = pos.ep {
            let e = pos.ep_squares(ep)?;
            if e.capturers != 0 {
                let i = self.index_ep(pos, e)?;
                return (i < self.size).then_some(i);
            }
        }
        let i = self.index_main(&TbPosition { ep: None, ..*pos })?;
        (i < self.size).then_some(i)
    }

    /// Index of a legal-shaped position already in canonical colours with this half to move,
    /// without an e.p. capture. Applies the board symmetry.
    #[inline(always)]
    fn index_main(&self, pos: &TbPosition) -> Option<u64> {
        self.index_in_frame(&self.king_frame(pos)?, pos)
    }

    /// What `index_main` takes from the kings alone (the symmetry, the king-pair block and the
    /// groups' ranges): worked out once, it serves every position with the same kings and side
    /// to move, such as the successors of one position by moves of its other men. None if the
    /// kings stand where no position of this half can.
    #[inline(always)]
    pub(super) fn king_frame(&self, pos: &TbPosition) -> Option<KingFrame> {
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
        let mut d = [0u64; MAX_GROUPS];
        self.ranges(l, fks, fkn, &mut d);
        Some(KingFrame {
            sym,
            kings: [ks, kn, fks, fkn],
            base: self.kk_base[kk as usize],
            d,
        })
    }

    /// The main-zone entries whose kings stand as in `pos` (its other men do not count): one
    /// king block, trimmed; None where no position of this half has these kings.
    pub(super) fn king_block(&self, pos: &TbPosition) -> Option<std::ops::Range<u64>> {
        let base = self.king_frame(pos)?.base;
        let b = self.kk_base.partition_point(|&x| x <= base) - 1;
        Some(base.min(self.size)..self.kk_base[b + 1].min(self.size))
    }

    /// The main zone's groups of like men, most significant in the index first.
    pub(super) fn significance(&self) -> impl DoubleEndedIterator<Item = (Color, PieceType)> + '_ {
        let l = &self.main;
        l.significance[..l.n].iter().map(move |&i| {
            let g = &l.groups[i as usize];
            (g.color, g.kind)
        })
    }

    /// The entries of the main zone numbered `range` when the digit of the group of `man` (a
    /// colour and kind) is made the least significant, the others keeping their order, as
    /// `f(entry)` in that order: each KK block is numbered again onto itself. An odometer: one
    /// full decomposition a block, then an add or two an entry.
    pub(super) fn each_with_man_fastest(
        &self,
        range: std::ops::Range<u64>,
        man: (Color, PieceType),
        mut f: impl FnMut(u64),
    ) {
        let l = &self.main;
        let g = (0..l.n)
            .find(|&i| (l.groups[i].color, l.groups[i].kind) == man)
            .expect("the man's group is in the layout");
        // Digits least significant first in the new numbering: the man's, then the others
        // from the least significant.
        let mut order = [0usize; MAX_GROUPS];
        let others = l.significance[..l.n]
            .iter()
            .rev()
            .map(|&i| i as usize)
            .filter(|&i| i != g);
        for (o, i) in order.iter_mut().zip(std::iter::once(g).chain(others)) {
            *o = i;
        }
        let order = &order[..l.n];
        let mut p = range.start;
        while p < range.end.min(self.main_size) {
            let kk = find_block(&self.kk_base, p);
            let (fks, fkn) = kk_placements(self.pawns).list[kk];
            let mut d = [0u64; MAX_GROUPS];
            self.ranges(l, fks, fkn, &mut d);
            // Each digit's weight in the entry's own numbering.
            let mut weight = [0u64; MAX_GROUPS];
            let mut w = 1;
            for &i in l.significance[..l.n].iter().rev() {
                weight[i as usize] = w;
                w *= d[i as usize];
            }
            let end = range.end.min(self.kk_base[kk + 1]);
            let mut off = p - self.kk_base[kk];
            let mut coord = [0u64; MAX_GROUPS];
            let mut idx = self.kk_base[kk];
            for &i in order {
                coord[i] = off % d[i];
                off /= d[i];
                idx += coord[i] * weight[i];
            }
            while p < end {
                f(idx);
                p += 1;
                for &i in order {
                    coord[i] += 1;
                    idx += weight[i];
                    if coord[i] < d[i] {
                        break;
                    }
                    coord[i] = 0;
                    idx -= d[i] * weight[i];
                }
            }
        }
    }

    /// `index_main` of a position whose kings and side to move are those `f` was made for.
    #[inline(always)]
    pub(super) fn index_in_frame(&self, f: &KingFrame, pos: &TbPosition) -> Option<u64> {
        let l = &self.main;
        let mut sq: GroupSquares = [0; MAX_GROUPS];
        let mut coord = [0u64; MAX_GROUPS];
        for i in 0..l.n {
            let g = &l.groups[i];
            sq[i] = Self::own_squares(f, g, pos);
            coord[i] = Self::group_coordinate(f, g, &sq, sq[i])?;
        }
        let mut x = 0u64;
        for &i in &l.significance[..l.n] {
            let i = i as usize;
            debug_assert!(coord[i] < f.d[i]);
            x = x * f.d[i] + coord[i];
        }
        Some(f.base + x)
    }

    /// `index_in_frame` of the positions `pos` plus one man of the group `man` (a colour and
    /// kind of which the endgame has one man, absent from `pos`) on each square of `squares`,
    /// as `out(square, index)`: the other groups' share is worked out once, and per square
    /// only the man's coordinate and those of the groups that skip its square.
    #[inline(always)]
    pub(super) fn index_each_in_frame(
        &self,
        f: &KingFrame,
        pos: &TbPosition,
        man: (Color, PieceType),
        squares: u64,
        mut out: impl FnMut(Square, Option<u64>),
    ) {
        let l = &self.main;
        let lone = (0..l.n)
            .find(|&i| (l.groups[i].color, l.groups[i].kind) == man)
            .expect("the man's group is in the layout");
        debug_assert_eq!(l.groups[lone].count, 1);
        let mut weight = [0u64; MAX_GROUPS];
        let mut w = 1u64;
        for &i in l.significance[..l.n].iter().rev() {
            weight[i as usize] = w;
            w *= f.d[i as usize];
        }
        // The groups whose coordinate depends on the man's square: his own and those placed
        // after him that skip it.
        let mut moving = 1u8 << lone;
        for j in lone + 1..l.n {
            moving |= ((l.groups[j].excl >> lone) & 1) << j;
        }
        let mut sq: GroupSquares = [0; MAX_GROUPS];
        let mut fixed = Some(f.base);
        for i in 0..l.n {
            if i == lone {
                continue;
            }
            let g = &l.groups[i];
            sq[i] = Self::own_squares(f, g, pos);
            if moving >> i & 1 == 0 {
                let c = Self::group_coordinate(f, g, &sq, sq[i]);
                fixed = fixed.zip(c).map(|(x, c)| x + c * weight[i]);
            }
        }
        // The squares each moving group skips but the man's, once for all his squares: every
        // other group they skip stands still.
        let mut skipped = [0u64; MAX_GROUPS];
        for i in Bitboard(moving as u64).map(|i| i.index()) {
            skipped[i] = excl_squares(l.groups[i].excl & !(1 << lone), &sq);
        }
        for s in Bitboard(squares) {
            let Some(mut x) = fixed else {
                out(s, None);
                continue;
            };
            let man = 1 << f.sym.square(s).0;
            let mut ok = true;
            let mut m = moving;
            while m != 0 {
                let i = m.trailing_zeros() as usize;
                m &= m - 1;
                // The groups placed after him skip his square; he stands on it.
                let (own, excl) = if i == lone {
                    (man, skipped[i])
                } else {
                    (sq[i], skipped[i] | man)
                };
                match Self::coordinate_in_frame(f, &l.groups[i], own, excl) {
                    Some(c) => x += c * weight[i],
                    None => ok = false,
                }
            }
            out(s, (ok && x < self.size).then_some(x));
        }
    }

    /// A group's squares in `pos`, after the frame's symmetry.
    #[inline(always)]
    fn own_squares(f: &KingFrame, g: &ZoneGroup, pos: &TbPosition) -> u64 {
        let men = pos.pieces[g.color.index()][g.kind.index()];
        // A lone man's square is turned, not its whole board (the generator numbers every
        // entry of a six-man table this way).
        if g.count == 1 && men.any() {
            1 << f.sym.square(men.lsb()).0
        } else {
            f.sym.bitboard(men).0
        }
    }

    /// The coordinate of group `g` on squares `own`, the squares of the groups placed before
    /// it being in `sq`.
    #[inline(always)]
    fn group_coordinate(f: &KingFrame, g: &ZoneGroup, sq: &GroupSquares, own: u64) -> Option<u64> {
        Self::coordinate_in_frame(f, g, own, excl_squares(g.excl, sq))
    }

    /// The coordinate of group `g` on squares `own` (the frame's), skipping the squares `excl`.
    #[inline(always)]
    fn coordinate_in_frame(f: &KingFrame, g: &ZoneGroup, own: u64, excl: u64) -> Option<u64> {
        let [ks, kn, fks, fkn] = f.kings;
        if g.flipped {
            Self::coordinate(g, flip_ranks(own), fks, fkn, flip_ranks(excl))
        } else {
            Self::coordinate(g, own, ks, kn, excl)
        }
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
    pub(super) fn decode(&self, idx: u64) -> Option<TbPosition> {
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
        let e = pos.ep_squares(ep)?;
        (self.index_ep(&pos, e) == Some(self.main_size + entry)).then_some(pos)
    }
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
