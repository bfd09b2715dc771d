//! Helpers shared by the index tests: an independent legality check (walking rays square by
//! square rather than using the library's attack tables or its `is_legal`), the list of men of a
//! material, and "same position up to the index's symmetries".

#![allow(dead_code)]

use fortress::chess::{Bitboard, Color, PieceType, Square};
use fortress::egtb::{Material, Symmetry, TbPosition};

pub const TYPES: [PieceType; 5] = [
    PieceType::Queen,
    PieceType::Rook,
    PieceType::Bishop,
    PieceType::Knight,
    PieceType::Pawn,
];

/// Non-king men of a material, White's then Black's, like men next to each other.
pub fn men(m: &Material) -> Vec<(Color, PieceType)> {
    let mut v = Vec::new();
    for c in Color::BOTH {
        for t in TYPES {
            for _ in 0..m.count(c, t) {
                v.push((c, t));
            }
        }
    }
    v
}

fn on_board(f: i32, r: i32) -> bool {
    (0..8).contains(&f) && (0..8).contains(&r)
}

/// Does the man `kind` of colour `color` on `from` attack `to`, with `occ` the occupied squares?
pub fn attacks(kind: PieceType, color: Color, from: Square, to: Square, occ: u64) -> bool {
    let (ff, fr) = (from.file() as i32, from.rank() as i32);
    let (tf, tr) = (to.file() as i32, to.rank() as i32);
    let (df, dr) = (tf - ff, tr - fr);
    let slide = |dirs: &[(i32, i32)]| {
        dirs.iter().any(|&(sf, sr)| {
            let (mut f, mut r) = (ff + sf, fr + sr);
            while on_board(f, r) {
                if (f, r) == (tf, tr) {
                    return true;
                }
                if occ >> (r * 8 + f) & 1 != 0 {
                    return false;
                }
                f += sf;
                r += sr;
            }
            false
        })
    };
    const ORTH: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
    const DIAG: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];
    match kind {
        PieceType::King => df.abs().max(dr.abs()) == 1,
        PieceType::Knight => (df.abs() == 1 && dr.abs() == 2) || (df.abs() == 2 && dr.abs() == 1),
        PieceType::Pawn => {
            let fwd = if color == Color::White { 1 } else { -1 };
            dr == fwd && df.abs() == 1
        }
        PieceType::Rook => slide(&ORTH),
        PieceType::Bishop => slide(&DIAG),
        PieceType::Queen => slide(&ORTH) || slide(&DIAG),
    }
}

/// Legality as the index notes define it (section 5 and the e.p. conditions), computed from
/// scratch.
pub fn legal(p: &TbPosition) -> bool {
    let mut list = [(Color::White, PieceType::King, Square(0)); 16];
    let mut n = 0;
    for c in Color::BOTH {
        for t in PieceType::ALL {
            for s in p.pieces[c.index()][t.index()] {
                if n == list.len() {
                    return false;
                }
                list[n] = (c, t, s);
                n += 1;
            }
        }
    }
    let list = &list[..n];
    let mut occ = 0u64;
    for &(_, _, s) in list {
        if occ >> s.0 & 1 != 0 {
            return false;
        }
        occ |= 1 << s.0;
    }
    let kings = |c: Color| {
        list.iter()
            .filter(move |m| m.0 == c && m.1 == PieceType::King)
    };
    if kings(Color::White).count() != 1 || kings(Color::Black).count() != 1 {
        return false;
    }
    let wk = kings(Color::White).next().unwrap().2;
    let bk = kings(Color::Black).next().unwrap().2;
    if wk.distance(bk) <= 1 {
        return false;
    }
    if list
        .iter()
        .any(|m| m.1 == PieceType::Pawn && (m.2.rank() == 0 || m.2.rank() == 7))
    {
        return false;
    }
    let target = if p.stm == Color::White { bk } else { wk };
    if list
        .iter()
        .any(|&(c, t, s)| c == p.stm && attacks(t, c, s, target, occ))
    {
        return false;
    }
    if let Some(ep) = p.ep {
        let (ep_rank, dir): (u8, i32) = if p.stm == Color::White {
            (5, -1)
        } else {
            (2, 1)
        };
        if ep.rank() != ep_rank {
            return false;
        }
        let pushed = Square((ep.0 as i32 + 8 * dir) as u8);
        let origin = Square((ep.0 as i32 - 8 * dir) as u8);
        let has = |c: Color, t: PieceType, s: Square| p.pieces[c.index()][t.index()].contains(s);
        if !has(!p.stm, PieceType::Pawn, pushed) || occ >> ep.0 & 1 != 0 || occ >> origin.0 & 1 != 0
        {
            return false;
        }
        let capturer = list.iter().any(|&(c, t, s)| {
            c == p.stm
                && t == PieceType::Pawn
                && s.rank() == pushed.rank()
                && s.file().abs_diff(pushed.file()) == 1
        });
        if !capturer {
            return false;
        }
    }
    true
}

/// Is `d` an image of `p` under the symmetries the index may use (board symmetries, and the
/// colour flip for endgames with the same men on both sides)?
pub fn same_up_to_symmetry(p: &TbPosition, d: &TbPosition, pawns: bool, symmetric: bool) -> bool {
    let dk = (d.king(Color::White), d.king(Color::Black));
    let image_of = |c: &TbPosition| {
        (0..8u8).any(|i| {
            let s = Symmetry {
                mirror_files: i & 1 != 0,
                mirror_ranks: i & 2 != 0,
                transpose: i & 4 != 0,
            };
            if pawns && (s.mirror_ranks || s.transpose) {
                return false;
            }
            // Compare the kings first: most symmetries fail there, cheaply.
            (
                s.square(c.king(Color::White)),
                s.square(c.king(Color::Black)),
            ) == dk
                && c.stm == d.stm
                && c.ep.map(|e| s.square(e)) == d.ep
                && (0..2).all(|col| {
                    (0..6).all(|t| {
                        let b = c.pieces[col][t];
                        (b.0 == 0 && d.pieces[col][t].0 == 0) || s.bitboard(b) == d.pieces[col][t]
                    })
                })
        })
    };
    image_of(p) || (symmetric && image_of(&p.color_flipped()))
}

/// Calls `f` with each en-passant variant of a legal position: one per sntm pawn that may just
/// have double-stepped beside a stm pawn with the squares it crossed empty.
pub fn for_each_ep_variant(p: &TbPosition, f: &mut dyn FnMut(&TbPosition)) {
    let sntm = !p.stm;
    let (rank, dir): (u8, i32) = if p.stm == Color::White {
        (4, 1)
    } else {
        (3, -1)
    };
    if p.pieces[p.stm.index()][PieceType::Pawn.index()].is_empty() {
        return;
    }
    for s in p.pieces[sntm.index()][PieceType::Pawn.index()] {
        if s.rank() != rank {
            continue;
        }
        let mut q = *p;
        q.ep = Some(Square((s.0 as i32 + 8 * dir) as u8));
        if legal(&q) {
            f(&q);
        }
    }
}

pub fn bitboard_of(squares: &[Square]) -> Bitboard {
    let mut b = Bitboard::EMPTY;
    for &s in squares {
        b.set(s);
    }
    b
}

/// A square drawn from a seeded generator, so failures reproduce.
pub fn random_square(rng: &mut fastrand::Rng) -> Square {
    Square(rng.u8(..64))
}

pub fn csv_rows(csv: &str) -> Vec<(String, u64, u64)> {
    csv.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.trim().split(',').collect();
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect()
}
