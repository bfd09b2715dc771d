//! The generator's own working layout of an endgame: a plain mixed-radix number of the men's
//! squares, so that a position's entry costs a few shifts and adds instead of the Nalimov
//! index's symmetry, colex and exclusion arithmetic (Nalimov et al. 2001, Section 3, pay that
//! price for space; the generator wants speed). The tables are written in Nalimov order at the
//! end, one decode and one lookup per entry.
//!
//! Per side to move: White's king normalised into a1-d4 (pawnless: mirror a<->h, 1<->8) or onto
//! files a-d (with pawns: mirror a<->h), then Black's king (64), then each group of like men
//! (colour, type) with its squares in ascending order (64 each, pawns 48). Such a normal form is
//! unique: White's king never stands on a mirror axis. Entries that are not normal forms
//! (unsorted like men, shared squares, ...) are broken. Positions with an en-passant capture
//! available keep the Nalimov e.p. zone's numbering, after the plain part.

use crate::chess::attacks::pawn_attacks;
use crate::chess::{Bitboard, Color, PieceType};
use crate::egtb::index::{EndgameIndex, Half, TbPosition};

/// One group of like men.
#[derive(Copy, Clone, Debug)]
struct Group {
    color: Color,
    kind: PieceType,
    count: u8,
}

pub struct Layout<'a> {
    nalimov: &'a EndgameIndex,
    pawns: bool,
    symmetric: bool,
    groups: Vec<Group>,
    /// Entries of the plain part (per half).
    plain: u64,
    /// Nalimov main-zone size and e.p. entries, per half (0 when this half keeps none).
    main: [u64; 2],
    ep_len: [u64; 2],
}

impl<'a> Layout<'a> {
    pub fn new(nalimov: &'a EndgameIndex) -> Layout<'a> {
        let m = nalimov.material();
        let pawns = m.has_pawns();
        let mut groups = Vec::new();
        let mut plain: u64 = if pawns { 32 } else { 16 } * 64;
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
                    groups.push(Group { color, kind, count });
                    let r = if kind == PieceType::Pawn { 48u64 } else { 64 };
                    plain *= r.pow(count as u32);
                }
            }
        }
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
        Layout {
            nalimov,
            pawns,
            symmetric,
            groups,
            plain,
            main,
            ep_len,
        }
    }

    /// Entries of a half.
    pub fn size(&self, h: Half) -> u64 {
        self.plain + self.ep_len[h as usize]
    }

    /// The entry of a legal position of this endgame.
    #[inline]
    pub fn encode(&self, pos: &TbPosition) -> Option<(Half, u64)> {
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
        let wk = pos.king(Color::White);
        let mf = wk.file() >= 4;
        let mr = !self.pawns && wk.rank() >= 4;
        let tr = |b: Bitboard| -> u64 {
            let mut x = b.0;
            if mf {
                x = x.reverse_bits().swap_bytes();
            }
            if mr {
                x = x.swap_bytes();
            }
            x
        };
        let wk = tr(pos.pieces[0][PieceType::King.index()]).trailing_zeros() as u64;
        let bk = tr(pos.pieces[1][PieceType::King.index()]).trailing_zeros() as u64;
        // White's king is on files a-d now: rank * 4 + file.
        let mut idx = (wk >> 3) * 4 + (wk & 3);
        idx = idx * 64 + bk;
        for g in &self.groups {
            let mut b = tr(pos.pieces[g.color.index()][g.kind.index()]);
            if g.kind == PieceType::Pawn {
                for _ in 0..g.count {
                    idx = idx * 48 + (b.trailing_zeros() as u64 - 8);
                    b &= b - 1;
                }
            } else {
                for _ in 0..g.count {
                    idx = idx * 64 + b.trailing_zeros() as u64;
                    b &= b - 1;
                }
            }
        }
        Some((Half::of(pos.stm), idx))
    }

    /// The position of an entry, or None if the entry is broken.
    #[inline]
    pub fn decode(&self, h: Half, idx: u64) -> Option<TbPosition> {
        if idx >= self.plain {
            let i = self.main[h as usize] + idx - self.plain;
            if self.symmetric && h == Half::Wtm {
                return self.nalimov.decode(Half::Btm, i).map(|p| p.color_flipped());
            }
            return self.nalimov.decode(h, i);
        }
        let mut pos = TbPosition::empty(h.stm());
        let mut x = idx;
        let mut occ = 0u64;
        for g in self.groups.iter().rev() {
            let pawn = g.kind == PieceType::Pawn;
            let mut prev = 64u64;
            let mut bits = 0u64;
            for _ in 0..g.count {
                let sq = if pawn {
                    let d = x % 48;
                    x /= 48;
                    d + 8
                } else {
                    let d = x % 64;
                    x /= 64;
                    d
                };
                // Digits were written ascending, so read back they must descend.
                if sq >= prev || occ >> sq & 1 != 0 {
                    return None;
                }
                prev = sq;
                bits |= 1 << sq;
                occ |= 1 << sq;
            }
            pos.pieces[g.color.index()][g.kind.index()] = Bitboard(bits);
        }
        let bk = x % 64;
        let k = x / 64;
        let wk = (k / 4) * 8 + k % 4;
        if occ >> bk & 1 != 0 || occ >> wk & 1 != 0 || wk == bk {
            return None;
        }
        pos.pieces[0][PieceType::King.index()] = Bitboard(1 << wk);
        pos.pieces[1][PieceType::King.index()] = Bitboard(1 << bk);
        pos.is_legal().then_some(pos)
    }

    pub fn nalimov(&self) -> &EndgameIndex {
        self.nalimov
    }
}
