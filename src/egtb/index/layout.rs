//! Layouts (notes, sections 2 and 8): which coordinates a half of a table has, how each group
//! of like men is numbered, the order the groups are placed in and their significance in the
//! index, for the main zone and for the en-passant zone.

use super::numbering::{Numbering, ET_BLACK_PAWN, ET_WHITE_PAWN};
use super::position::Half;
use crate::chess::{Color, PieceType};
use crate::egtb::material::{Material, NAME_ORDER};

/// Most groups of like men a zone has (kings not counted).
pub(super) const MAX_GROUPS: usize = 6;

/// One group of like men and how its coordinate is numbered.
#[derive(Copy, Clone, Debug)]
pub(super) struct ZoneGroup {
    pub(super) color: Color,
    pub(super) kind: PieceType,
    pub(super) count: u8,
    pub(super) numbering: Numbering,
    /// Groups (by placement position) whose squares this group's numbering skips.
    pub(super) excl: u8,
    /// Coordinate taken with the board turned upside down (notes, section 1, btm frame flip).
    pub(super) flipped: bool,
}

const NO_GROUP: ZoneGroup = ZoneGroup {
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
pub(super) struct ZoneLayout {
    pub(super) groups: [ZoneGroup; MAX_GROUPS],
    pub(super) n: usize,
    /// Placement positions, most significant first.
    pub(super) significance: [u8; MAX_GROUPS],
    /// KK number taken in the upside-down frame.
    pub(super) flip_kk: bool,
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

impl ZoneLayout {
    const EMPTY: ZoneLayout = ZoneLayout {
        groups: [NO_GROUP; MAX_GROUPS],
        n: 0,
        significance: [0; MAX_GROUPS],
        flip_kk: false,
    };

    fn push(&mut self, g: ZoneGroup) -> usize {
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
    pub(super) fn main(m: &Material, half: Half) -> ZoneLayout {
        let stm = half.stm();
        let sntm = !stm;
        let mut l = ZoneLayout::EMPTY;
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
                let i = l.push(ZoneGroup {
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
                let i = l.push(ZoneGroup {
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
                let i = l.push(ZoneGroup {
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
            let i = l.push(ZoneGroup {
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
    pub(super) fn en_passant(m: &Material, half: Half) -> ZoneLayout {
        let stm = half.stm();
        let sntm = !stm;
        let mut l = ZoneLayout::EMPTY;
        let mut placed_mask = 0u8;
        let mut men = 0u8;
        let mut add = |l: &mut ZoneLayout, color: Color, kind: PieceType, count: u8| {
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
            let i = l.push(ZoneGroup {
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
