//! Nalimov's index scheme (Nalimov, Haworth, Heinz 2001, Section 3): position <-> index for each
//! endgame and side to move. 462/1806 king placements (3.2), unblockable checks (3.1), n-space
//! sub-ranges (3.2-3.4), the en-passant zone (3.5) and C_L trimming, as fixed by
//! `shared/notes/nalimov-index-rules.md` so that every published size and broken count is matched.
//!
//! Vocabulary: "stm" = side to move, "sntm" = side not to move. White is always the side named
//! first in the canonical endgame name. A *group* is the set of like men of one colour and type;
//! its coordinate is their combined number (colex rank of their per-man numbers).
//!
//! Parts: `geometry` (ranks, reflections, symmetries), `king_placements` (the KK blocks),
//! `numbering` (squares to numbers, rules A-C), `binomial` (C(n, k) and colex ranks), `layout`
//! (a half's coordinates), `en_passant` (the e.p. zone's squares and codes), `position`
//! (`TbPosition`, legality), `half` (one half's index), `broken` (the stored counts of broken
//! entries); here, `EndgameIndex` over both halves.

pub(crate) mod binomial;
pub(crate) mod broken;
mod en_passant;
mod geometry;
mod half;
mod king_placements;
mod layout;
mod numbering;
mod position;

pub use geometry::{normalising_symmetry, Symmetry};
pub use position::Half;
pub use position::TbPosition;

use super::material::Material;
use crate::chess::{Bitboard, Color, PieceType, Square};
use geometry::PAWN_RANKS;
use half::HalfIndex;
use rayon::prelude::*;

/// The kings' share of an index (`EndgameIndex::own_frame`).
#[derive(Clone, Copy)]
pub struct OwnFrame {
    half: Half,
    /// The positions are looked up colour-flipped (White to move in a symmetric endgame).
    flip: bool,
    frame: half::KingFrame,
}

/// `index_own` for a run of positions that mostly share their kings and side to move (an
/// endgame's entries in an order that places the kings first): the kings' share of the index
/// is worked out again only when they change.
#[derive(Default)]
pub struct FrameCache {
    /// The kings (White's, Black's) and side to move the frame is for.
    key: Option<(u64, u64, Color)>,
    frame: Option<OwnFrame>,
}

impl FrameCache {
    #[inline]
    pub fn index_own(&mut self, index: &EndgameIndex, pos: &TbPosition) -> Option<(Half, u64)> {
        if pos.ep.is_some() {
            return index.index_own(pos);
        }
        index.index_own_in(self.frame_of(index, pos)?, pos)
    }

    /// The frame of `pos`'s kings and side to move, worked out again only when they changed.
    #[inline(always)]
    fn frame_of(&mut self, index: &EndgameIndex, pos: &TbPosition) -> Option<&OwnFrame> {
        let k = PieceType::King.index();
        let key = (pos.pieces[0][k].0, pos.pieces[1][k].0, pos.stm);
        if self.key != Some(key) {
            self.key = Some(key);
            self.frame = index.own_frame(pos);
        }
        self.frame.as_ref()
    }

    /// `index_own` of the positions `pos` (without an e.p. square) plus a man `man` on each
    /// square of `squares`, as `out(square, index)`; `man` is a colour and kind of which the
    /// endgame has one man, absent from `pos`. The kings' and the other men's share of the
    /// index is worked out once for all the squares.
    #[inline]
    pub fn index_own_each(
        &mut self,
        index: &EndgameIndex,
        pos: &TbPosition,
        man: (Color, PieceType),
        squares: u64,
        mut out: impl FnMut(Square, Option<(Half, u64)>),
    ) {
        debug_assert!(pos.ep.is_none());
        let Some(f) = self.frame_of(index, pos) else {
            return Bitboard(squares).for_each(|s| out(s, None));
        };
        let h = index.half(f.half);
        if f.flip {
            let (c, kind) = man;
            let flipped = Bitboard(squares).flip_rank().0;
            h.index_each_in_frame(
                &f.frame,
                &pos.color_flipped(),
                (!c, kind),
                flipped,
                |s, i| out(s.flip_rank(), i.map(|i| (f.half, i))),
            );
        } else {
            h.index_each_in_frame(&f.frame, pos, man, squares, |s, i| {
                out(s, i.map(|i| (f.half, i)))
            });
        }
    }
}

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

    /// The men of `half`'s main zone by colour and kind, most significant in the index first,
    /// in the colours of the positions looked up (a symmetric endgame's Wtm half is stored
    /// colour-flipped).
    pub fn significance(
        &self,
        half: Half,
    ) -> impl DoubleEndedIterator<Item = (Color, PieceType)> + '_ {
        let flip = self.material.is_symmetric() && half == Half::Wtm;
        self.half(half)
            .significance()
            .map(move |(c, k)| (if flip { !c } else { c }, k))
    }

    /// The entries of half `half`'s main zone in an order where entries one after the other
    /// differ first in the square of `man` (a colour and kind of which the endgame has one
    /// man, in the colours of the positions looked up), the others in `significance`'s order:
    /// `f(entry)` for the positions `range` of that order, 0 to `zones(half).0`.
    pub fn each_with_man_fastest(
        &self,
        half: Half,
        range: std::ops::Range<u64>,
        (c, k): (Color, PieceType),
        f: impl FnMut(u64),
    ) {
        let flip = self.material.is_symmetric() && half == Half::Wtm;
        self.half(half)
            .each_with_man_fastest(range, (if flip { !c } else { c }, k), f)
    }

    /// The blocks of a pawnless half, one per king placement: the stm king (in a1-d1-d4), the
    /// sntm king and the block's entries (trimmed). Empty for endgames with pawns.
    pub fn king_blocks(&self, half: Half) -> Vec<(Square, Square, std::ops::Range<u64>)> {
        if self.material.has_pawns() {
            return Vec::new();
        }
        let h = self.half(half);
        king_placements::kk_placements(false)
            .list
            .iter()
            .enumerate()
            .map(|(b, &(ks, kn))| {
                let (start, end) = (h.kk_base[b].min(h.size), h.kk_base[b + 1].min(h.size));
                (ks, kn, start..end)
            })
            .collect()
    }

    /// The main-zone entries of the stored half `half` whose kings stand on `wk` (White's) and
    /// `bk`: the king block Nalimov's index gives them, or None where no position has them.
    /// With pawns too, unlike `king_blocks`.
    pub fn king_block(&self, half: Half, wk: Square, bk: Square) -> Option<std::ops::Range<u64>> {
        let mut pos = TbPosition::empty(half.stm());
        pos.pieces[0][PieceType::King.index()] = Bitboard::from_square(wk);
        pos.pieces[1][PieceType::King.index()] = Bitboard::from_square(bk);
        self.half(half).king_block(&pos)
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
        Some((half, self.half(half).index(p)?))
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
        Some((half, self.half(half).index(pos)?))
    }

    /// What `index_own` takes from the kings and the side to move alone, for positions with
    /// those kings and side to move and no e.p. square (the successors of one position by moves
    /// of its other men, in the verifier). None where `index_own` would be None for any such
    /// position.
    #[inline]
    pub fn own_frame(&self, pos: &TbPosition) -> Option<OwnFrame> {
        let flip = self.material.is_symmetric() && pos.stm == Color::White;
        let half = if flip { Half::Btm } else { Half::of(pos.stm) };
        let frame = if flip {
            self.half(half).king_frame(&pos.color_flipped())?
        } else {
            self.half(half).king_frame(pos)?
        };
        Some(OwnFrame { half, flip, frame })
    }

    /// `index_own` of a position of the kings and side to move `f` was made for, without an
    /// e.p. square: the same entry, less the work the kings fix.
    #[inline]
    pub fn index_own_in(&self, f: &OwnFrame, pos: &TbPosition) -> Option<(Half, u64)> {
        debug_assert!(pos.ep.is_none());
        let h = self.half(f.half);
        let i = if f.flip {
            h.index_in_frame(&f.frame, &pos.color_flipped())?
        } else {
            h.index_in_frame(&f.frame, pos)?
        };
        (i < h.size).then_some((f.half, i))
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
    numbering::table_bytes() + king_placements::table_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::Bitboard;

    /// The verifier indexes a position's successors by moves of men other than the king through
    /// one king frame: each must get the entry `index_own` gives it.
    #[test]
    fn a_king_frame_serves_every_position_with_those_kings() {
        let mut rng = fastrand::Rng::with_seed(23);
        for name in ["KQRKBN", "KBBKNN", "KRKR", "KRPKR", "KNNKP"] {
            let m = Material::parse(name).unwrap();
            let index = EndgameIndex::new(&m);
            let (mut compared, mut indexed) = (0, 0);
            while compared < 2_000 {
                let half = index.stored_halves()[rng.usize(..index.stored_halves().len())];
                let Some(mut p) = index.decode(half, rng.u64(..index.size(half))) else {
                    continue;
                };
                p.ep = None;
                // White to move in an endgame of like sides is looked up colour-flipped.
                if m.is_symmetric() && rng.bool() {
                    p = p.color_flipped();
                }
                let frame = index.own_frame(&p);
                // The position, and the same with one other man moved to an empty square.
                let mut moved = p;
                let (c, k) = (rng.usize(..2), rng.usize(..5));
                let men = moved.pieces[c][k];
                if men.any() {
                    let from = men.lsb();
                    let to = crate::chess::Square(rng.u8(..64));
                    let pawn_rank =
                        k == PieceType::Pawn.index() && (to.rank() == 0 || to.rank() == 7);
                    if !moved.occupied().contains(to) && !pawn_rank {
                        moved.pieces[c][k] = Bitboard(men.0 & !(1 << from.0) | 1 << to.0);
                    }
                }
                for q in [p, moved] {
                    let fast = frame.as_ref().and_then(|f| index.index_own_in(f, &q));
                    assert_eq!(fast, index.index_own(&q), "{name} {q:?}");
                    compared += 1;
                    indexed += fast.is_some() as usize;
                }
            }
            // Most of them are indexable positions, not agreeing Nones.
            assert!(indexed > 1_500, "{name}: {indexed} of {compared}");
        }
    }

    /// The files number a frame of men with one man on each of his squares at once: each must
    /// get the entry `index_own` gives the whole position, whichever man is the lone one and
    /// wherever his group stands in the index (placed first or last, skipped by later groups
    /// or not, colour-flipped in an endgame of like sides).
    #[test]
    fn one_frame_numbers_a_lone_man_on_every_square() {
        let mut rng = fastrand::Rng::with_seed(7);
        for name in ["KQRKBN", "KRBKNN", "KBNKQ", "KRNKRN", "KQKR", "KRKR"] {
            let m = Material::parse(name).unwrap();
            let index = EndgameIndex::new(&m);
            let mut frames = FrameCache::default();
            let (mut frames_tried, mut indexed) = (0, 0);
            while frames_tried < 300 {
                let half = index.stored_halves()[rng.usize(..index.stored_halves().len())];
                let Some(mut p) = index.decode(half, rng.u64(..index.size(half))) else {
                    continue;
                };
                if m.is_symmetric() && rng.bool() {
                    p = p.color_flipped();
                }
                let lone: Vec<(Color, PieceType)> = [Color::White, Color::Black]
                    .into_iter()
                    .flat_map(|c| PieceType::ALL[..5].iter().map(move |&k| (c, k)))
                    .filter(|&(c, k)| p.pieces[c.index()][k.index()].count() == 1)
                    .collect();
                let (c, k) = lone[rng.usize(..lone.len())];
                let mut frame = p;
                frame.pieces[c.index()][k.index()] = Bitboard::EMPTY;
                let empty = !frame.occupied().0;
                let mut seen = 0u64;
                frames.index_own_each(&index, &frame, (c, k), empty, |s, got| {
                    let mut q = frame;
                    q.pieces[c.index()][k.index()] = Bitboard::from_square(s);
                    assert_eq!(got, index.index_own(&q), "{name} {q:?}");
                    seen |= 1 << s.0;
                    indexed += got.is_some() as usize;
                });
                assert_eq!(seen, empty, "{name}: every square once");
                frames_tried += 1;
            }
            // Most squares give indexable positions, not agreeing Nones.
            assert!(indexed > 300 * 30, "{name}: {indexed}");
        }
    }

    /// Numbered with a man fastest, a half's main zone is its own entries once each, in an
    /// order where runs of entries differ in that man's square alone: every man of each half
    /// of endgames where he is placed early or late in the index, of a symmetric one, and of
    /// one of six men (their first blocks: those of five men, a fifth).
    #[test]
    fn a_man_made_fastest_runs_through_his_squares_and_every_entry_once() {
        for (name, share) in [("KQRKN", 5), ("KBNKQ", 5), ("KRKR", 1), ("KQRKBN", 997)] {
            let m = Material::parse(name).unwrap();
            let index = EndgameIndex::new(&m);
            for half in Half::BOTH {
                let men: Vec<(Color, PieceType)> = Color::BOTH
                    .into_iter()
                    .flat_map(|c| PieceType::ALL[..5].iter().map(move |&k| (c, k)))
                    .filter(|&(c, k)| m.count(c, k) == 1)
                    .collect();
                let end = index.zones(half).0 / share;
                // The KK blocks whole before `end`, and the one `end` cuts (or the last).
                let base = &index.half(half).kk_base;
                let last = (base.partition_point(|&b| b <= end) - 1).min(base.len() - 2);
                let (whole, next) = (base[last] as usize, base[last + 1] as usize);
                for &man in &men {
                    let mut seen = vec![false; next];
                    // Of the first positions in the order, those that follow the one before
                    // them in its frame (the men but him the same).
                    let (mut follow, mut decoded) = (0u64, 0u64);
                    let mut last: Option<TbPosition> = None;
                    let mut count = 0u64;
                    index.each_with_man_fastest(half, 0..end, man, |idx| {
                        count += 1;
                        assert!(!seen[idx as usize], "{name} {half:?} {man:?}: {idx} twice");
                        seen[idx as usize] = true;
                        if count > 1 << 19 {
                            return;
                        }
                        let frame = index.decode(half, idx).map(|mut q| {
                            q.pieces[man.0.index()][man.1.index()] = Bitboard::EMPTY;
                            q
                        });
                        if let Some(q) = frame {
                            decoded += 1;
                            follow += (last == Some(q)) as u64;
                        }
                        last = frame;
                    });
                    assert_eq!(count, end, "{name} {half:?} {man:?}");
                    // Each KK block is numbered onto itself: the whole ones before `end` are
                    // seen whole, the part of the one it cuts stays in that block (an entry
                    // past it would have been out of `seen`).
                    assert!(seen[..whole].iter().all(|&x| x), "{name} {half:?} {man:?}");
                    let part = seen[whole..].iter().filter(|&&x| x).count();
                    assert_eq!(part, end as usize - whole, "{name} {half:?} {man:?}");
                    // Where later men skip his square, a frame's run breaks as he passes
                    // them (KQRKN, White's queen with White to move: 0.70 of the positions
                    // follow); else only at the frame's end (0.95).
                    assert!(
                        follow * 3 > decoded * 2 && decoded > 20_000,
                        "{name} {half:?} {man:?}: {follow} of {decoded}"
                    );
                }
            }
        }
    }
}
